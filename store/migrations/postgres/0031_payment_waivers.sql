-- "No verdict, no charge": answers delivered without charge (orders voided,
-- payment.OrderVoided) are counted per payer and UTC day, so that the
-- waiver's daily bound holds across instances. One row per payer and day;
-- VoidOrder takes one unit with a conditional upsert (never above the
-- limit, also under concurrency).
CREATE TABLE IF NOT EXISTS payment_waivers (
    payer TEXT NOT NULL,
    day TEXT NOT NULL,
    used INTEGER NOT NULL,
    PRIMARY KEY (payer, day)
);
