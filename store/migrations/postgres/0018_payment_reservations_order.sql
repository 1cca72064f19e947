-- A reservation is found by its order when the order completes (consumed)
-- or fails (released). Reservations are kept as long as their orders, so
-- without this index each completion scanned every reservation ever made.
CREATE INDEX IF NOT EXISTS payment_reservations_order ON payment_reservations (order_id);
