-- Niche access levels, first step (owner: niche).
--
-- Preview-level searches (anonymous callers) must match only the words a
-- preview shows, never the hidden text it sells. Evaluations get a column
-- sp: the normalised problem teaser, buyer and category
-- (niche.SearchFields.Preview). The teaser is cut by Go code, so this file
-- only adds the column; the store then fills sp for every row in Go, in the
-- same transaction (see migrationHook in store/migrate.go), and 0009 indexes
-- it.
--
-- niche_links holds the signal_ids array of every evaluation as rows: the
-- store finds the evaluations to re-check when a signal is rejected, and
-- recounts signal_count, the linked signals that are not rejected (a
-- preview's signalCount), in every transaction that changes links or a
-- signal's state.
ALTER TABLE niche_evaluations ADD COLUMN sp TEXT NOT NULL DEFAULT ''; -- normalised teaser, buyer, category

CREATE TABLE niche_links (
    signal_id TEXT NOT NULL,
    niche_id TEXT NOT NULL,
    PRIMARY KEY (signal_id, niche_id)
);
CREATE INDEX niche_links_niche ON niche_links (niche_id);
INSERT INTO niche_links (signal_id, niche_id)
    SELECT DISTINCT j.value, e.id FROM niche_evaluations e
    CROSS JOIN LATERAL json_array_elements_text(e.signal_ids::json) AS j(value)
    ON CONFLICT DO NOTHING;

ALTER TABLE niche_evaluations ADD COLUMN signal_count INTEGER NOT NULL DEFAULT 0;
UPDATE niche_evaluations SET signal_count = (SELECT count(*) FROM niche_links l
    JOIN niche_signals s ON s.id = l.signal_id WHERE l.niche_id = niche_evaluations.id AND s.state <> 'rejected');
