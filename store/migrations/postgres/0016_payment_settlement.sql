-- Settlement that always ends: what an order needs to be settled or checked
-- again later (the processor's durable record of the payment), every
-- transaction reference the processor gave, and the state of the
-- resolution of a settling order whose outcome is unknown: attempts made,
-- what the last one learnt, and when the next one is due (also the lease
-- that keeps instances from resolving one order at the same moment).
ALTER TABLE payment_orders ADD COLUMN payment_record BYTEA;
ALTER TABLE payment_orders ADD COLUMN settlement_refs TEXT NOT NULL DEFAULT '';
ALTER TABLE payment_orders ADD COLUMN settle_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE payment_orders ADD COLUMN settle_note TEXT NOT NULL DEFAULT '';
ALTER TABLE payment_orders ADD COLUMN settle_next_at BIGINT NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS payment_orders_settle_due ON payment_orders (status, settle_next_at);
