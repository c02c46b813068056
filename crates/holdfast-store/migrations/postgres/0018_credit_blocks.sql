-- Credit blocks (issue #41): money sold or given with terms of its own, as a breakdown
-- of the account's balance (holdfast_core::decide::blocks): balance = general money +
-- the blocks' remaining; held = general money held + the blocks' held.
--
-- credit_blocks: one row per credit that made a block. granted: what the credit put in
-- it after paying the account's debt; remaining: what is left of it; held: what open
-- holds reserved of remaining. A block's id is the id of the credit's ledger entry that
-- made it (the refund of a top-up finds its block by it). A block whose remaining is 0 is history: only
-- the blocks that hold money are read with an account.
-- accounts.has_blocks: 1 once the account has had a block, so an account that never had
-- one reads none.
-- ledger.blocks: the blocks an entry moved, as JSON [{"block", "amount"}] (block 0:
-- general money); NULL on an account without blocks.
-- jobs' hold and charged lines carry their blocks the same way (JSON, no column).
CREATE TABLE credit_blocks (
    block_id   BIGINT  PRIMARY KEY,
    account_id TEXT   NOT NULL REFERENCES accounts (account_id),
    category   TEXT   NOT NULL,
    priority   BIGINT NOT NULL,
    expires_at BIGINT,
    created_at BIGINT NOT NULL,
    granted    BIGINT NOT NULL,
    remaining  BIGINT NOT NULL CHECK (remaining >= 0),
    held       BIGINT NOT NULL DEFAULT 0 CHECK (held >= 0 AND held <= remaining),
    -- When the expiry pass closed it: expired, nothing left, nothing held (NULL: open).
    closed_at  BIGINT
);
-- The blocks read with an account. Neither index names `remaining` or `held`, which
-- every draw updates: so a draw's UPDATE is a HOT one (no index entry written; a
-- partial index on `remaining > 0` cost a debit of an account with blocks an entry in
-- every index of the table, BENCHMARKS.md). The reads filter `remaining > 0`.
CREATE INDEX credit_blocks_of_account ON credit_blocks (account_id);
-- The expiry pass: blocks with an expiry it has not closed (a draw changes neither
-- column, so it stays HOT; a closed block leaves the index, so the pass never walks the
-- history of expired blocks).
CREATE INDEX credit_blocks_by_expiry ON credit_blocks (expires_at)
    WHERE expires_at IS NOT NULL AND closed_at IS NULL;

ALTER TABLE accounts ADD COLUMN has_blocks BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ledger ADD COLUMN blocks TEXT;
ALTER TYPE debit_item ADD ATTRIBUTE blocks TEXT;
ALTER TYPE finish_item ADD ATTRIBUTE entry_blocks TEXT;
