-- A verification record carries no order: an order names the result it
-- delivered (payment_orders.result_kind, result_id), and its token reads
-- that result. The grants table and the record's order column go; orders
-- are found by their token hash.
DROP TABLE IF EXISTS claim_verification_access;
ALTER TABLE claim_verifications DROP COLUMN order_id;
CREATE INDEX IF NOT EXISTS payment_orders_token ON payment_orders (token_hash);
