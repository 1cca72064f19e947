-- Change feed of the niche search rows (owner: niche). Every change of a
-- published evaluation's search row — written, withdrawn, deleted, or its
-- signal count changed — is logged with a sequence number, in the
-- transaction of the change: niche_version.v is the last one (SQLite's
-- single writer makes them follow each other in commit order). Engines
-- keeping an in-memory search index apply the entries after the last one
-- they applied (niche.ChangeFeed) instead of rebuilding on every change.
-- niche_version.pruned: the entries up to it were pruned (store.DB.
-- PruneNicheFeed); an index behind it loads anew. These triggers replace
-- 0014's and 0015's, which only raised v.
CREATE TABLE niche_feed (
    seq INTEGER PRIMARY KEY,
    niche_id TEXT NOT NULL
);
ALTER TABLE niche_version ADD COLUMN pruned BIGINT NOT NULL DEFAULT 0;
UPDATE niche_version SET pruned = v;
DROP TRIGGER niche_version_ins;
DROP TRIGGER niche_version_upd;
DROP TRIGGER niche_version_del;
DROP TRIGGER niche_version_counts;
CREATE TRIGGER niche_feed_ins AFTER INSERT ON niche_evaluations WHEN new.status = 'published' BEGIN
    UPDATE niche_version SET v = v + 1 WHERE id = 1;
    INSERT INTO niche_feed (seq, niche_id) SELECT v, new.id FROM niche_version WHERE id = 1;
END;
CREATE TRIGGER niche_feed_upd AFTER UPDATE ON niche_evaluations
    WHEN (old.status = 'published' OR new.status = 'published') AND (old.status IS NOT new.status
        OR old.score IS NOT new.score OR old.updated_at IS NOT new.updated_at OR old.category_key IS NOT new.category_key
        OR old.st IS NOT new.st OR old.sp IS NOT new.sp OR old.sb IS NOT new.sb OR old.sc IS NOT new.sc
        OR old.title IS NOT new.title OR old.problem IS NOT new.problem OR old.buyer IS NOT new.buyer
        OR old.category IS NOT new.category OR old.score_version IS NOT new.score_version
        OR old.signal_count IS NOT new.signal_count) BEGIN
    UPDATE niche_version SET v = v + 1 WHERE id = 1;
    INSERT INTO niche_feed (seq, niche_id) SELECT v, new.id FROM niche_version WHERE id = 1;
END;
CREATE TRIGGER niche_feed_del AFTER DELETE ON niche_evaluations WHEN old.status = 'published' BEGIN
    UPDATE niche_version SET v = v + 1 WHERE id = 1;
    INSERT INTO niche_feed (seq, niche_id) SELECT v, old.id FROM niche_version WHERE id = 1;
END;
