-- Niche search vectors given by the writer (owner: niche). tsv and tsp
-- were stored generated columns: every insert parsed its text with
-- to_tsvector, about two thirds of the server's time in a bulk import's
-- COPY. They become plain columns, which keep their values, filled by a
-- trigger with the same expressions whenever a write does not give them
-- (every write but the bulk import, which sends vectors built in Go,
-- store.DB.SearchVectors, equal to these expressions' for the text it
-- builds them for) and recomputed whenever the text changes.
--
-- toast_tuple_target: a row with its vectors is about 4 KB, which
-- PostgreSQL would otherwise compress and move out of line column by
-- column until it fits 2 KB, on every insert. Rows up to a page stay
-- whole.
ALTER TABLE niche_evaluations ALTER COLUMN tsv DROP EXPRESSION;
ALTER TABLE niche_evaluations ALTER COLUMN tsp DROP EXPRESSION;
CREATE FUNCTION niche_search_vectors() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.tsv := setweight(to_tsvector('simple', NEW.st), 'A') ||
        setweight(to_tsvector('simple', NEW.sb), 'B') ||
        setweight(to_tsvector('simple', NEW.sc), 'C');
    NEW.tsp := to_tsvector('simple', NEW.st || ' ' || NEW.sp);
    RETURN NEW;
END;
$$;
CREATE TRIGGER niche_search_vectors_ins BEFORE INSERT ON niche_evaluations
    FOR EACH ROW WHEN (NEW.tsv IS NULL OR NEW.tsp IS NULL) EXECUTE FUNCTION niche_search_vectors();
CREATE TRIGGER niche_search_vectors_upd BEFORE UPDATE ON niche_evaluations
    FOR EACH ROW WHEN (NEW.st IS DISTINCT FROM OLD.st OR NEW.sp IS DISTINCT FROM OLD.sp
        OR NEW.sb IS DISTINCT FROM OLD.sb OR NEW.sc IS DISTINCT FROM OLD.sc
        OR NEW.tsv IS NULL OR NEW.tsp IS NULL)
    EXECUTE FUNCTION niche_search_vectors();
ALTER TABLE niche_evaluations SET (toast_tuple_target = 8160);
