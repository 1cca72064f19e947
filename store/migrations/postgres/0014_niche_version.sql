-- Search index version (owner: niche). niche_version.v grows with every
-- statement changing niche_evaluations, so that an engine keeping an
-- in-memory search index (niche.Options.SearchIndex) sees in one cheap
-- read whether another instance wrote.
CREATE TABLE niche_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    v BIGINT NOT NULL
);
INSERT INTO niche_version (id, v) VALUES (1, 0);
CREATE FUNCTION niche_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE niche_version SET v = v + 1 WHERE id = 1;
    RETURN NULL;
END;
$$;
CREATE TRIGGER niche_version_bump AFTER INSERT OR UPDATE OR DELETE ON niche_evaluations
    FOR EACH STATEMENT EXECUTE FUNCTION niche_version_bump();
