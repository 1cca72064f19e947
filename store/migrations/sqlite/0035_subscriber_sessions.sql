-- Subscriber sessions (owner: niche): a person signed in with a browser.
-- Only SHA-256 hex hashes are stored: of the session secret (the cookie)
-- and of the subscriber token the session was opened with; the session
-- ends with that token (its row in niche_subscription_tokens revoked).
CREATE TABLE niche_subscriber_sessions (
    session_hash TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX niche_subscriber_sessions_expires ON niche_subscriber_sessions (expires_at);
