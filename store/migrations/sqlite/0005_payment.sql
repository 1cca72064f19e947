-- Payments: single-use reservations, orders (with the delivered response and
-- the signed receipt), quotes and customers. Times are unix microseconds,
-- money is integer micro-USD.
CREATE TABLE IF NOT EXISTS payment_reservations (
    key TEXT PRIMARY KEY,
    order_id TEXT NOT NULL,
    status TEXT NOT NULL,              -- reserved | consumed
    expires_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS payment_reservations_expiry ON payment_reservations (status, expires_at);

CREATE TABLE IF NOT EXISTS payment_quotes (
    id TEXT PRIMARY KEY,
    tier TEXT NOT NULL,
    amount_microusd BIGINT NOT NULL,
    card_microusd BIGINT NOT NULL,
    currency TEXT NOT NULL,
    order_id TEXT,
    expires_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS payment_customers (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS payment_orders (
    id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL,
    offer_id TEXT NOT NULL,
    tier TEXT NOT NULL DEFAULT '',
    protocol TEXT NOT NULL,
    method TEXT NOT NULL DEFAULT '',
    network TEXT NOT NULL DEFAULT '',
    payer TEXT NOT NULL,
    customer_id TEXT,
    amount_microusd BIGINT NOT NULL,
    currency TEXT NOT NULL,
    reservation_key TEXT NOT NULL,
    reserved_until BIGINT NOT NULL DEFAULT 0,
    quote_id TEXT,
    idempotency_key TEXT,
    request_hash TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    failure_reason TEXT NOT NULL DEFAULT '',
    settlement_ref TEXT NOT NULL DEFAULT '',
    dev INTEGER NOT NULL DEFAULT 0,
    result_kind TEXT NOT NULL DEFAULT '',
    result_id TEXT NOT NULL DEFAULT '',
    result_sha256 TEXT NOT NULL DEFAULT '',
    usage_provider TEXT NOT NULL DEFAULT '',
    usage_model TEXT NOT NULL DEFAULT '',
    input_tokens BIGINT NOT NULL DEFAULT 0,
    cached_input_tokens BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    search_calls BIGINT NOT NULL DEFAULT 0,
    cost_microusd BIGINT NOT NULL DEFAULT 0,
    response_status INTEGER NOT NULL DEFAULT 0,
    response_type TEXT NOT NULL DEFAULT '',
    response_body BLOB,
    receipt_id TEXT UNIQUE,
    receipt_json TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    completed_at BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX IF NOT EXISTS payment_orders_idempotency
    ON payment_orders (payer, offer_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS payment_orders_customer
    ON payment_orders (customer_id, created_at, id) WHERE customer_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS payment_orders_state ON payment_orders (status, updated_at);
CREATE INDEX IF NOT EXISTS payment_orders_created ON payment_orders (created_at);
