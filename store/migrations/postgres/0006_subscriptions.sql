-- Niche subscriptions: subscriptions as last learned from the payment
-- processor, subscriber tokens (SHA-256 hex only), completed checkouts
-- awaiting their one-time token claim (session ids as SHA-256 hex only), and
-- processed webhook event ids (de-duplication).
CREATE TABLE IF NOT EXISTS niche_subscriptions (
    id TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    provider_ref TEXT NOT NULL,
    customer_ref TEXT NOT NULL DEFAULT '',
    price_ref TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    current_period_end BIGINT NOT NULL DEFAULT 0,
    cancel_at_period_end BOOLEAN NOT NULL DEFAULT FALSE,
    past_due_since BIGINT NOT NULL DEFAULT 0,
    synced_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (provider, provider_ref)
);

CREATE TABLE IF NOT EXISTS niche_subscription_tokens (
    token_hash TEXT PRIMARY KEY,
    subscription_id TEXT NOT NULL REFERENCES niche_subscriptions (id),
    created_at BIGINT NOT NULL,
    revoked_at BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS niche_subscription_tokens_subscription
    ON niche_subscription_tokens (subscription_id);

CREATE TABLE IF NOT EXISTS niche_subscription_checkouts (
    provider TEXT NOT NULL,
    session_hash TEXT NOT NULL,
    subscription_id TEXT NOT NULL REFERENCES niche_subscriptions (id),
    completed_at BIGINT NOT NULL,
    claimed_at BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (provider, session_hash)
);
CREATE INDEX IF NOT EXISTS niche_subscription_checkouts_subscription
    ON niche_subscription_checkouts (subscription_id);

CREATE TABLE IF NOT EXISTS niche_billing_events (
    provider TEXT NOT NULL,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    received_at BIGINT NOT NULL,
    PRIMARY KEY (provider, event_id)
);
CREATE INDEX IF NOT EXISTS niche_billing_events_received
    ON niche_billing_events (received_at);
