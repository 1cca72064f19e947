-- Index of snapshot content kept outside the database (owner: snapshot;
-- package store/s3blobs). The bytes live in an object store under their
-- SHA-256; this table holds each blob's last-put time, so that a purge
-- decides and deletes under a row lock here: a capture that reuses a blob
-- refreshes its row first (waiting for a deletion under way), and a
-- deletion removes the object before its row, so a blob a record uses is
-- never deleted. Times are unix microseconds, UTC.
CREATE TABLE snapshot_blob_index (
    sha256 TEXT PRIMARY KEY,
    size BIGINT NOT NULL,
    put_at BIGINT NOT NULL
);
CREATE INDEX snapshot_blob_index_put ON snapshot_blob_index (put_at);
