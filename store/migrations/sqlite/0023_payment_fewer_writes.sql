-- Fewer index pages written per sale (each is written again by each of a
-- sale's three commits).
--
-- A reservation's state is its order's: reserved while the order is
-- processing or settling, consumed once it is completed or voided, gone
-- (released) once it failed. The status column repeated it, and was
-- written a second time at every completion; its index served no query.
DROP INDEX IF EXISTS payment_reservations_expiry;
ALTER TABLE payment_reservations DROP COLUMN status;

-- The queries by status (the resolver's due settlements, the reconciler's
-- stale processing orders, the open orders) all ask for orders in flight:
-- one small index of the orders processing or settling replaces the two
-- that held an entry for every order ever made. The statuses are written
-- literally in those queries, so that the planner may use it.
DROP INDEX IF EXISTS payment_orders_state;
DROP INDEX IF EXISTS payment_orders_settle_due;
CREATE INDEX IF NOT EXISTS payment_orders_open ON payment_orders (status, settle_next_at)
    WHERE status IN ('processing', 'settling');
