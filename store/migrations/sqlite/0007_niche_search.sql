-- Niche search, second step (owner: niche). Times are unix microseconds.
--
-- niche_search holds, for each published evaluation, all that a search
-- reads of a candidate: the ranking columns, the normalised text and the
-- listing (the preview's source columns), about 1.5 kB a row. Reading them
-- from niche_evaluations meant reading whole records (notes, JSON
-- columns), about one page each, and a second lookup per result. Its rowid
-- is the evaluation's seq, which is also the rowid of niche_fts; triggers
-- keep it in step with niche_evaluations exactly as niche_fts is
-- (published rows only).
CREATE TABLE niche_search (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    score INTEGER NOT NULL,
    updated_at BIGINT NOT NULL,
    category_key TEXT NOT NULL,
    st TEXT NOT NULL,
    sb TEXT NOT NULL,
    sc TEXT NOT NULL,
    title TEXT NOT NULL,
    problem TEXT NOT NULL,
    buyer TEXT NOT NULL,
    category TEXT NOT NULL,
    score_version TEXT NOT NULL,
    signal_count INTEGER NOT NULL
);
INSERT INTO niche_search (seq, id, score, updated_at, category_key, st, sb, sc, title, problem, buyer, category,
        score_version, signal_count)
    SELECT seq, id, score, updated_at, category_key, st, sb, sc, title, problem, buyer, category, score_version,
        json_array_length(signal_ids)
    FROM niche_evaluations WHERE status = 'published';

CREATE TRIGGER niche_search_insert AFTER INSERT ON niche_evaluations WHEN new.status = 'published' BEGIN
    INSERT INTO niche_search (seq, id, score, updated_at, category_key, st, sb, sc, title, problem, buyer, category,
            score_version, signal_count)
        VALUES (new.seq, new.id, new.score, new.updated_at, new.category_key, new.st, new.sb, new.sc, new.title,
            new.problem, new.buyer, new.category, new.score_version, json_array_length(new.signal_ids));
END;
CREATE TRIGGER niche_search_delete AFTER DELETE ON niche_evaluations WHEN old.status = 'published' BEGIN
    DELETE FROM niche_search WHERE seq = old.seq;
END;
CREATE TRIGGER niche_search_update AFTER UPDATE ON niche_evaluations BEGIN
    DELETE FROM niche_search WHERE seq = old.seq;
    INSERT INTO niche_search (seq, id, score, updated_at, category_key, st, sb, sc, title, problem, buyer, category,
            score_version, signal_count)
        SELECT new.seq, new.id, new.score, new.updated_at, new.category_key, new.st, new.sb, new.sc, new.title,
            new.problem, new.buyer, new.category, new.score_version, json_array_length(new.signal_ids)
        WHERE new.status = 'published';
END;

-- niche_terms counts, for each word of the indexed text, the published
-- evaluations whose text has it (term '' counts the published
-- evaluations). Searches use it to leave words found in more than half of
-- the catalogue out of the full-text expression and check them on the
-- candidates' text instead. The store keeps it in step in the
-- transactions that write evaluations; here it starts from the full-text
-- index's own vocabulary.
CREATE TABLE niche_terms (
    term TEXT PRIMARY KEY,
    docs INTEGER NOT NULL
) WITHOUT ROWID;
CREATE VIRTUAL TABLE temp.niche_fts_vocab USING fts5vocab(main, niche_fts, row);
INSERT INTO niche_terms (term, docs) SELECT term, doc FROM temp.niche_fts_vocab;
DROP TABLE temp.niche_fts_vocab;
INSERT INTO niche_terms (term, docs) SELECT '', count(*) FROM niche_search;
DELETE FROM niche_terms WHERE docs = 0;
