-- Core: a key/value table for instance-wide settings (schema owner, created).
CREATE TABLE IF NOT EXISTS assay_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
