-- Search index version (owner: niche). niche_version.v grows with every
-- change of niche_search (the published evaluations' search rows), so
-- that an engine keeping an in-memory search index (niche.Options.
-- SearchIndex) sees in one cheap read whether another instance wrote.
CREATE TABLE niche_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    v BIGINT NOT NULL
);
INSERT INTO niche_version (id, v) VALUES (1, 0);
CREATE TRIGGER niche_version_ins AFTER INSERT ON niche_search BEGIN
    UPDATE niche_version SET v = v + 1 WHERE id = 1;
END;
CREATE TRIGGER niche_version_upd AFTER UPDATE ON niche_search BEGIN
    UPDATE niche_version SET v = v + 1 WHERE id = 1;
END;
CREATE TRIGGER niche_version_del AFTER DELETE ON niche_search BEGIN
    UPDATE niche_version SET v = v + 1 WHERE id = 1;
END;
