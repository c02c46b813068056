-- The row types a set-based debit binds its items as (issue #43: one debit path for a
-- call of one and a call of a thousand). One array of `debit_item` and one of
-- `account_change` per call, instead of one array per field: one sub-select and one
-- `unnest` each, which is what lets a call of one cost about what the single debit's
-- statements cost (docs/bench-history.md). The fields are those of ingest_write's items
-- (an entry's id is not one: the insert takes it from the ledger's sequence); sqlx binds
-- them by the types' names (`DebitItem`, `AccountChange` in units/ingest.rs). SQLite,
-- which has no such types, takes the same items as a JSON array.
CREATE TYPE debit_item AS (
    account_id      TEXT,
    key             TEXT,
    request_hash    TEXT,
    delta           BIGINT,
    amount_after    BIGINT,
    available_after BIGINT,
    buffer          BIGINT,
    ref             TEXT,
    now             BIGINT,
    actor           TEXT,
    meter           TEXT,
    seconds         BIGINT
);

CREATE TYPE account_change AS (
    account_id    TEXT,
    delta         BIGINT,
    spent         BIGINT,
    suspended_at  BIGINT,
    balance_after BIGINT,
    buffer        BIGINT
);
