-- Niche search, second step (owner: niche).
--
-- niche_terms counts, for each word of the indexed text, the published
-- evaluations whose text has it (term '' counts the published
-- evaluations). The store keeps it in step in the transactions that write
-- evaluations. Searches use it to choose how PostgreSQL finds the newest
-- matches of a broad query: its planner prices a tsvector check as
-- almost free, but each one reads and decompresses the row's tsvector,
-- so scanning rows newest first for a word in a few per cent of them cost
-- far more than collecting them from the GIN index.
CREATE TABLE niche_terms (
    term TEXT PRIMARY KEY,
    docs BIGINT NOT NULL
);
INSERT INTO niche_terms (term, docs)
    SELECT word, ndoc FROM ts_stat('SELECT tsv FROM niche_evaluations WHERE status = ''published''');
INSERT INTO niche_terms (term, docs)
    SELECT '', count(*) FROM niche_evaluations WHERE status = 'published';
DELETE FROM niche_terms WHERE docs = 0;
