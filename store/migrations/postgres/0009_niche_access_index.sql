-- Niche access levels, second step (owner: niche). Runs after the store
-- filled niche_evaluations.sp (0008).
--
-- tsp is the preview-level text (title and sp) as a tsvector with its own
-- partial GIN index; preview-level queries match it, full-level ones match
-- tsv (title, problem, buyer, category, solution hypothesis). niche_terms is
-- counted again over both (it only guides query plans).
ALTER TABLE niche_evaluations ADD COLUMN tsp tsvector GENERATED ALWAYS AS (
    to_tsvector('simple', st || ' ' || sp)
) STORED;
ALTER TABLE niche_evaluations ALTER COLUMN tsp SET STATISTICS 1000;
CREATE INDEX niche_eval_tsp ON niche_evaluations USING GIN (tsp) WHERE status = 'published';

DELETE FROM niche_terms;
INSERT INTO niche_terms (term, docs)
    SELECT word, ndoc FROM ts_stat('SELECT tsv || tsp FROM niche_evaluations WHERE status = ''published''');
INSERT INTO niche_terms (term, docs)
    SELECT '', count(*) FROM niche_evaluations WHERE status = 'published';
DELETE FROM niche_terms WHERE docs = 0;
