-- Change feed of the niche search rows (owner: niche). Every change of a
-- published evaluation's search row — written, withdrawn, deleted, or its
-- signal count changed — is logged with a sequence number, in the
-- transaction of the change, by statement triggers reading the changed
-- rows (transition tables: one bump of the counter per statement, also
-- for a COPY of thousands of rows). niche_version.v is the last number;
-- its row lock, taken by the first logging statement of a transaction and
-- held until the commit, makes the numbers follow each other without
-- holes and in commit order, so a reader that has applied the entries up
-- to n misses none after it. Each logging statement notifies the channel
-- 'niche_feed:<schema>' (delivered at commit: LISTEN/NOTIFY), so that
-- instances apply other instances' writes at once. niche_version.pruned:
-- the entries up to it were pruned (store.DB.PruneNicheFeed); an index
-- behind it loads anew. These replace 0014's trigger, which only raised v.
CREATE TABLE niche_feed (
    seq BIGINT PRIMARY KEY,
    niche_id TEXT NOT NULL
);
ALTER TABLE niche_version ADD COLUMN pruned BIGINT NOT NULL DEFAULT 0;
UPDATE niche_version SET pruned = v;
DROP TRIGGER niche_version_bump ON niche_evaluations;
DROP FUNCTION niche_version_bump();

CREATE FUNCTION niche_feed_append(ids TEXT[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    n BIGINT := cardinality(ids);
    head BIGINT;
BEGIN
    IF n = 0 THEN
        RETURN;
    END IF;
    UPDATE niche_version SET v = v + n WHERE id = 1 RETURNING v INTO head;
    IF head IS NULL THEN
        RETURN; -- no counter row (a test emptying every table): nothing to number
    END IF;
    INSERT INTO niche_feed (seq, niche_id) SELECT head - n + u.o, u.id FROM unnest(ids) WITH ORDINALITY AS u(id, o);
    PERFORM pg_notify('niche_feed:' || current_schema(), head::text);
END;
$$;

CREATE FUNCTION niche_feed_ins() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM niche_feed_append(ARRAY(SELECT id FROM new_rows WHERE status = 'published' ORDER BY seq));
    RETURN NULL;
END;
$$;
CREATE TRIGGER niche_feed_ins AFTER INSERT ON niche_evaluations
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION niche_feed_ins();

CREATE FUNCTION niche_feed_upd() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM niche_feed_append(ARRAY(SELECT n.id FROM new_rows n JOIN old_rows o ON o.seq = n.seq
        WHERE (o.status = 'published' OR n.status = 'published')
          AND (o.status, o.score, o.updated_at, o.category_key, o.st, o.sp, o.sb, o.sc, o.title, o.problem, o.buyer,
               o.category, o.score_version, o.signal_count)
              IS DISTINCT FROM (n.status, n.score, n.updated_at, n.category_key, n.st, n.sp, n.sb, n.sc, n.title,
               n.problem, n.buyer, n.category, n.score_version, n.signal_count)
        ORDER BY n.seq));
    RETURN NULL;
END;
$$;
CREATE TRIGGER niche_feed_upd AFTER UPDATE ON niche_evaluations
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION niche_feed_upd();

CREATE FUNCTION niche_feed_del() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM niche_feed_append(ARRAY(SELECT id FROM old_rows WHERE status = 'published' ORDER BY seq));
    RETURN NULL;
END;
$$;
CREATE TRIGGER niche_feed_del AFTER DELETE ON niche_evaluations
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION niche_feed_del();
