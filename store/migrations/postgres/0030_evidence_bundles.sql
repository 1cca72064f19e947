-- Evidence bundles (owner: claims; snapshot_uses: snapshot).
--
-- page_ids: the snapshot ids (JSON array) of every page fetched for a
-- verification's quote checks, quick's included (its result lists none);
-- NULL for verifications stored before bundles existed (their result's
-- snapshots are their pages).
ALTER TABLE claim_verifications ADD COLUMN page_ids TEXT;

-- The latest time a stored result began to use a snapshot (a verification
-- created, a cached result reused). The retention purge keeps a record
-- whose latest use is within the retention period, so a snapshot lives as
-- long as the newest verification that needs it for its bundle.
CREATE TABLE snapshot_uses (
    snapshot_id TEXT PRIMARY KEY,
    used_at BIGINT NOT NULL
);
CREATE INDEX snapshot_uses_used_at ON snapshot_uses (used_at);
