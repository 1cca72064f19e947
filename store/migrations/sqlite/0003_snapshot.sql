-- URL snapshots (owner: snapshot). Records are immutable once written: the
-- store has no update path. Content lives in a BlobStore; snapshot_blobs is
-- the database one (for several instances sharing a database).
CREATE TABLE IF NOT EXISTS snapshots (
    id TEXT PRIMARY KEY,
    requested_url TEXT NOT NULL,
    final_url TEXT,
    retrieved_at BIGINT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('captured', 'failed', 'blocked', 'too_large', 'unsupported')),
    http_status INTEGER,
    content_type TEXT,
    content_length BIGINT,
    raw_sha256 TEXT,
    normalized_sha256 TEXT,
    failure_reason TEXT,
    normalization TEXT NOT NULL DEFAULT '',
    charset TEXT NOT NULL DEFAULT '',
    exchange TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS snapshots_retrieved_at ON snapshots (retrieved_at);
CREATE INDEX IF NOT EXISTS snapshots_raw_sha256 ON snapshots (raw_sha256);

CREATE TABLE IF NOT EXISTS snapshot_blobs (
    sha256 TEXT PRIMARY KEY,
    size BIGINT NOT NULL,
    data BLOB NOT NULL,
    put_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS snapshot_blobs_put_at ON snapshot_blobs (put_at);
