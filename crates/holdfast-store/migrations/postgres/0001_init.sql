-- holdfast on PostgreSQL. Times are integer microseconds since the Unix epoch.

CREATE TABLE accounts (
    account_id          TEXT    PRIMARY KEY,
    plan                TEXT    NOT NULL,
    plan_until          BIGINT,
    max_concurrent_jobs BIGINT,
    balance             BIGINT NOT NULL DEFAULT 0,
    held                BIGINT NOT NULL DEFAULT 0 CHECK (held >= 0),
    total_credited      BIGINT NOT NULL DEFAULT 0,
    total_spent         BIGINT NOT NULL DEFAULT 0,
    suspended_at        BIGINT,
    blocked_at          BIGINT,
    created_at          BIGINT NOT NULL,
    last_active_at      BIGINT
);

CREATE TABLE allowances (
    account_id       TEXT    NOT NULL REFERENCES accounts (account_id),
    pocket           TEXT    NOT NULL,
    remaining        BIGINT NOT NULL CHECK (remaining >= 0),
    held             BIGINT NOT NULL DEFAULT 0 CHECK (held >= 0),
    cycle_started_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, pocket)
);

CREATE TABLE ledger (
    entry_id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id      TEXT    NOT NULL,
    pocket          TEXT    NOT NULL,
    delta           BIGINT NOT NULL,
    kind            TEXT    NOT NULL,
    amount_after    BIGINT NOT NULL,
    available_after BIGINT,
    buffer          BIGINT,
    ref             TEXT,
    created_at      BIGINT NOT NULL
);
CREATE INDEX ledger_by_account ON ledger (account_id, entry_id);
CREATE INDEX ledger_by_ref ON ledger (account_id, ref) WHERE ref IS NOT NULL;

CREATE TABLE idempotency (
    account_id   TEXT    NOT NULL,
    key          TEXT    NOT NULL,
    operation    TEXT    NOT NULL,
    request_hash TEXT    NOT NULL,
    entry_id     BIGINT,
    job_id       TEXT,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (account_id, key)
);

CREATE TABLE jobs (
    job_id           TEXT    PRIMARY KEY,
    account_id       TEXT    NOT NULL REFERENCES accounts (account_id),
    kind             TEXT    NOT NULL,
    lane             TEXT    NOT NULL,
    status           TEXT    NOT NULL,
    payload          TEXT,
    hold             TEXT    NOT NULL,
    charged          TEXT,
    created_at       BIGINT NOT NULL,
    started_at       BIGINT,
    finished_at      BIGINT,
    notice_at        BIGINT NOT NULL,
    noticed          BIGINT NOT NULL DEFAULT 0,
    lease_token      TEXT,
    lease_expires_at BIGINT,
    lease_seconds    BIGINT,
    worker_id        TEXT,
    cancel_requested BIGINT NOT NULL DEFAULT 0,
    failure_reason   TEXT,
    finished_by      TEXT,
    limit_at_submit  BIGINT NOT NULL,
    open_at_submit   BIGINT NOT NULL
);
CREATE INDEX jobs_queue ON jobs (lane, created_at, job_id) WHERE status = 'queued';
CREATE INDEX jobs_open_by_account ON jobs (account_id) WHERE status IN ('queued', 'in_progress');
CREATE INDEX jobs_leases ON jobs (lease_expires_at) WHERE status = 'in_progress';
CREATE INDEX jobs_open_by_age ON jobs (created_at) WHERE status IN ('queued', 'in_progress');
CREATE INDEX jobs_notices ON jobs (notice_at) WHERE noticed = 0 AND status IN ('queued', 'in_progress');
CREATE INDEX jobs_by_lane_status ON jobs (lane, status, created_at);

CREATE TABLE events (
    event_id   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    type       TEXT    NOT NULL,
    account_id TEXT    NOT NULL,
    job_id     TEXT,
    data       TEXT    NOT NULL,
    created_at BIGINT  NOT NULL,
    -- the writing transaction: readers see only rows older than every transaction still
    -- in flight, so a cursor never skips an event that commits late
    xid        xid8    NOT NULL DEFAULT pg_current_xact_id()
);
CREATE INDEX events_by_account ON events (account_id, event_id);

CREATE TABLE api_keys (
    key_id     TEXT    PRIMARY KEY,
    role       TEXT    NOT NULL,
    key_hash   TEXT    NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX events_by_commit_order ON events (xid, event_id);
