-- holdfast on SQLite. STRICT everywhere: without it an overflowing integer silently
-- becomes a REAL. Times are integer microseconds since the Unix epoch.

CREATE TABLE accounts (
    account_id          TEXT    PRIMARY KEY,
    plan                TEXT    NOT NULL,
    plan_until          INTEGER,
    max_concurrent_jobs INTEGER,
    balance             INTEGER NOT NULL DEFAULT 0,
    held                INTEGER NOT NULL DEFAULT 0 CHECK (held >= 0),
    total_credited      INTEGER NOT NULL DEFAULT 0,
    total_spent         INTEGER NOT NULL DEFAULT 0,
    suspended_at        INTEGER,
    blocked_at          INTEGER,
    created_at          INTEGER NOT NULL,
    last_active_at      INTEGER
) STRICT;

CREATE TABLE allowances (
    account_id       TEXT    NOT NULL REFERENCES accounts (account_id),
    pocket           TEXT    NOT NULL,
    remaining        INTEGER NOT NULL CHECK (remaining >= 0),
    held             INTEGER NOT NULL DEFAULT 0 CHECK (held >= 0),
    cycle_started_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, pocket)
) STRICT;

CREATE TABLE ledger (
    entry_id        INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id      TEXT    NOT NULL,
    pocket          TEXT    NOT NULL,
    delta           INTEGER NOT NULL,
    kind            TEXT    NOT NULL,
    amount_after    INTEGER NOT NULL,
    available_after INTEGER,
    buffer          INTEGER,
    ref             TEXT,
    created_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX ledger_by_account ON ledger (account_id, entry_id);
CREATE INDEX ledger_by_ref ON ledger (account_id, ref) WHERE ref IS NOT NULL;

CREATE TABLE idempotency (
    account_id   TEXT    NOT NULL,
    key          TEXT    NOT NULL,
    operation    TEXT    NOT NULL,
    request_hash TEXT    NOT NULL,
    entry_id     INTEGER,
    job_id       TEXT,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (account_id, key)
) STRICT;

CREATE TABLE jobs (
    job_id           TEXT    PRIMARY KEY,
    account_id       TEXT    NOT NULL REFERENCES accounts (account_id),
    kind             TEXT    NOT NULL,
    lane             TEXT    NOT NULL,
    status           TEXT    NOT NULL,
    payload          TEXT,
    hold             TEXT    NOT NULL,
    charged          TEXT,
    created_at       INTEGER NOT NULL,
    started_at       INTEGER,
    finished_at      INTEGER,
    notice_at        INTEGER NOT NULL,
    noticed          INTEGER NOT NULL DEFAULT 0,
    lease_token      TEXT,
    lease_expires_at INTEGER,
    lease_seconds    INTEGER,
    worker_id        TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    failure_reason   TEXT,
    finished_by      TEXT,
    limit_at_submit  INTEGER NOT NULL,
    open_at_submit   INTEGER NOT NULL
) STRICT;
CREATE INDEX jobs_queue ON jobs (lane, created_at, job_id) WHERE status = 'queued';
CREATE INDEX jobs_open_by_account ON jobs (account_id) WHERE status IN ('queued', 'in_progress');
CREATE INDEX jobs_leases ON jobs (lease_expires_at) WHERE status = 'in_progress';
CREATE INDEX jobs_open_by_age ON jobs (created_at) WHERE status IN ('queued', 'in_progress');
CREATE INDEX jobs_notices ON jobs (notice_at) WHERE noticed = 0 AND status IN ('queued', 'in_progress');
CREATE INDEX jobs_by_lane_status ON jobs (lane, status, created_at);

CREATE TABLE events (
    event_id   INTEGER PRIMARY KEY AUTOINCREMENT,
    type       TEXT    NOT NULL,
    account_id TEXT    NOT NULL,
    job_id     TEXT,
    data       TEXT    NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX events_by_account ON events (account_id, event_id);

CREATE TABLE api_keys (
    key_id     TEXT    PRIMARY KEY,
    role       TEXT    NOT NULL,
    key_hash   TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
) STRICT;
