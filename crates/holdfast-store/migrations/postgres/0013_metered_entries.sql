-- What a metered debit used (issue #42: statements and usage by meter): the meter and
-- its seconds on the debit's ledger entry; NULL on every other entry, where PostgreSQL
-- stores them as two bits of the row's null bitmap and SQLite as two header bytes.
ALTER TABLE ledger ADD COLUMN meter TEXT;
ALTER TABLE ledger ADD COLUMN seconds BIGINT;

-- When a payment was first refused (another currency than the card's): the operator's
-- payment.refused event is emitted once per payment, however many of its events Stripe
-- sends or retries; NULL for a payment that was credited.
ALTER TABLE payments ADD COLUMN refused_at BIGINT;
