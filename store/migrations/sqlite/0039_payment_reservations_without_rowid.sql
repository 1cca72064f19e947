-- A reservation is its key: the table is keyed by it alone (WITHOUT
-- ROWID), so that reserving a payment writes one b-tree, not a table and
-- its primary-key index (a sale's opening writes one page fewer).
CREATE TABLE payment_reservations_keyed (
    key TEXT PRIMARY KEY,
    order_id TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL
) WITHOUT ROWID;
INSERT INTO payment_reservations_keyed (key, order_id, expires_at, created_at)
    SELECT key, order_id, expires_at, created_at FROM payment_reservations;
DROP TABLE payment_reservations;
ALTER TABLE payment_reservations_keyed RENAME TO payment_reservations;
CREATE INDEX payment_reservations_order ON payment_reservations (order_id);
