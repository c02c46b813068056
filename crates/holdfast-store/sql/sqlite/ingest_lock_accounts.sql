-- ingest_lock_accounts: the accounts of a set-based call (debits: one or a thousand;
-- submits: one or a batch) that exist, with all the call reads: the database clock and
-- each account's allowance pockets and open jobs (for the decisions and the answers).
-- The write transaction (BEGIN IMMEDIATE) holds the database's write lock already, so
-- nothing changes them meanwhile: never `stale` (see the PostgreSQL statement).
--
-- :account_ids  the accounts, as a JSON array of strings (a column bound on SQLite)
SELECT accounts.*,
       (SELECT json_group_array(json_array(pocket, remaining, held, cycle_started_at))
          FROM allowances WHERE allowances.account_id = accounts.account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE jobs.account_id = accounts.account_id
           AND status IN ('queued', 'in_progress')) AS open_jobs,
       NULL AS keys,
       accounts.live_blocks AS blocks,
       0 AS stale,
       CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) AS now
  FROM accounts
 WHERE account_id IN (SELECT value FROM json_each(:account_ids))
