-- The row types the set-based job writes bind their items as (issue #43: one path for a
-- call of one and a batch), as migration 0014's `debit_item` is a debit's: one array of
-- `submit_item` (submit_jobs) or `finish_item` (finish_jobs) per call instead of one
-- array per field. The fields are those of the statements' items; sqlx binds them by
-- the types' names (`SubmitWrite` in units/submit.rs, `FinishWrite` in units/jobs.rs).
-- SQLite takes the same items as a JSON array.
CREATE TYPE submit_item AS (
    account_id        TEXT,
    key               TEXT,
    request_hash      TEXT,
    job_id            TEXT,
    kind              TEXT,
    lane              TEXT,
    payload           TEXT,
    hold              TEXT,
    money_hold_micros BIGINT,
    pocket            TEXT,
    pocket_hold       BIGINT,
    now               BIGINT,
    notice_at         BIGINT,
    limit_at_submit   BIGINT,
    open_at_submit    BIGINT,
    actor             TEXT,
    currency          TEXT
);

CREATE TYPE finish_item AS (
    account_id              TEXT,
    balance_delta_micros    BIGINT,
    money_held_delta_micros BIGINT,
    spent_micros            BIGINT,
    suspended_at            BIGINT,
    pocket                  TEXT,
    pocket_held_delta       BIGINT,
    pocket_remaining_delta  BIGINT,
    entry_pocket            TEXT,
    entry_delta             BIGINT,
    entry_amount_after      BIGINT,
    entry_available_after   BIGINT,
    entry_buffer_micros     BIGINT,
    job_id                  TEXT,
    now                     BIGINT,
    status                  TEXT,
    charged                 TEXT,
    finished_by             TEXT,
    failure_reason          TEXT,
    event_type              TEXT,
    event_data              TEXT,
    actor                   TEXT
);
