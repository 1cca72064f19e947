-- Claim verification: results, who may read them, idempotency leases.
CREATE TABLE IF NOT EXISTS claim_verifications (
    id TEXT PRIMARY KEY,
    tier TEXT NOT NULL,
    scope TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    provider TEXT NOT NULL,
    status TEXT NOT NULL,
    order_id TEXT NOT NULL,
    result TEXT NOT NULL,
    observed_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS claim_verifications_cache ON claim_verifications (tier, request_hash, provider, observed_at);
CREATE INDEX IF NOT EXISTS claim_verifications_created ON claim_verifications (created_at);

-- Order tokens (SHA-256 hex) allowed to read a verification.
CREATE TABLE IF NOT EXISTS claim_verification_access (
    verification_id TEXT NOT NULL REFERENCES claim_verifications (id) ON DELETE CASCADE,
    order_token_hash TEXT NOT NULL,
    order_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (verification_id, order_token_hash)
);

-- Idempotency keys per scope (payer or customer) and tier. A pending row
-- is leased to one worker until lease_expires; a done row names its result.
CREATE TABLE IF NOT EXISTS claim_idempotency (
    scope TEXT NOT NULL,
    tier TEXT NOT NULL,
    idem_key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    state TEXT NOT NULL,
    verification_id TEXT,
    lease_token TEXT,
    lease_expires BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (scope, tier, idem_key)
);
CREATE INDEX IF NOT EXISTS claim_idempotency_created ON claim_idempotency (created_at);
CREATE INDEX IF NOT EXISTS claim_idempotency_verification ON claim_idempotency (verification_id);
