-- Credit blocks (issue #41). As migrations/postgres/0018: a block's id is its credit's
-- entry id.
CREATE TABLE credit_blocks (
    block_id   INTEGER PRIMARY KEY,
    account_id TEXT    NOT NULL REFERENCES accounts (account_id),
    category   TEXT    NOT NULL,
    priority   INTEGER NOT NULL,
    expires_at INTEGER,
    created_at INTEGER NOT NULL,
    granted    INTEGER NOT NULL,
    remaining  INTEGER NOT NULL CHECK (remaining >= 0),
    held       INTEGER NOT NULL DEFAULT 0 CHECK (held >= 0 AND held <= remaining),
    closed_at  INTEGER
);
-- Neither index names `remaining` or `held`, which every draw updates (see PostgreSQL's).
CREATE INDEX credit_blocks_of_account ON credit_blocks (account_id);
CREATE INDEX credit_blocks_by_expiry ON credit_blocks (expires_at)
    WHERE expires_at IS NOT NULL AND closed_at IS NULL;

ALTER TABLE accounts ADD COLUMN has_blocks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger ADD COLUMN blocks TEXT;
