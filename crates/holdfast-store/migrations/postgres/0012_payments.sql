-- Payments a provider reported (issue #42): which account each credited, the customer →
-- account map an operator sets, and the disputes that block an account. The money itself
-- is a top-up ledger entry keyed by the payment (`stripe:<payment id>`), as any top-up.
--
-- A payment's account, recorded before its top-up: what a refund or a dispute of the
-- payment, which names only the payment, is applied to.
CREATE TABLE payments (
    provider   TEXT    NOT NULL,
    payment_id TEXT    NOT NULL,
    account_id TEXT    NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (provider, payment_id)
);

-- The account a provider's customer pays for, when a payment names no account itself.
CREATE TABLE payment_customers (
    provider    TEXT    NOT NULL,
    customer_id TEXT    NOT NULL,
    account_id  TEXT    NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (provider, customer_id)
);

-- A dispute of a payment: open, won or lost. blocked_at is the account's blocked_at this
-- dispute set (NULL when the account was blocked already): a won dispute lifts only a
-- block a dispute made, and only when no other dispute of the account is open.
CREATE TABLE payment_disputes (
    provider   TEXT    NOT NULL,
    dispute_id TEXT    NOT NULL,
    account_id TEXT    NOT NULL,
    status     TEXT    NOT NULL CHECK (status IN ('open', 'won', 'lost')),
    blocked_at BIGINT,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (provider, dispute_id)
);

CREATE INDEX payment_disputes_by_account ON payment_disputes (account_id);

-- Auto-recharge: when an account's available money crosses below recharge_below, the
-- event account.recharge_requested asks the operator to charge recharge_amount (micros);
-- both NULL when the account has none.
ALTER TABLE accounts ADD COLUMN recharge_below BIGINT;
ALTER TABLE accounts ADD COLUMN recharge_amount BIGINT;

-- GET /v1/usage reads a period of every account's entries by created_at. A BRIN index
-- (the ledger is appended in time order) finds the period's blocks for a few kilobytes in
-- all and next to nothing per write, where a b-tree would add an index entry to every
-- money change. autosummarize: autovacuum summarizes each range of 128 pages as soon as
-- the next one is written to (an unsummarized range matches every query).
CREATE INDEX ledger_by_time ON ledger USING brin (created_at) WITH (autosummarize = on);
