-- Signal counts of published evaluations by seq (owner: niche), for the
-- search index's load: SearchRows joins niche_search (the search text)
-- with niche_evaluations only for signal_count, the last column of a row
-- of several kilobytes, which SQLite reaches through the row's overflow
-- pages. This covering index answers the join without reading the rows.
CREATE INDEX niche_eval_counts ON niche_evaluations (seq, signal_count) WHERE status = 'published';
