-- A reservation's state is its order's: reserved while the order is
-- processing or settling, consumed once it is completed or voided, gone
-- (released) once it failed. The status column repeated it, and was
-- written a second time at every completion; its index served no query.
DROP INDEX IF EXISTS payment_reservations_expiry;
ALTER TABLE payment_reservations DROP COLUMN status;
