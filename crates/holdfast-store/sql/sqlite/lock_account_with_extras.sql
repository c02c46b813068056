-- lock_account_with_extras: as lock_account (the write lock is held from BEGIN
-- IMMEDIATE, so what it reads is current: read_before_lock is 0).
--
-- :account_id  the account
-- :keys        the keys whose records to read, as a JSON array of strings
SELECT accounts.*,
       CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) AS now,
       (SELECT json_group_array(json_array(pocket, remaining, held, cycle_started_at))
          FROM allowances WHERE account_id = :account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE account_id = :account_id AND status IN ('queued', 'in_progress')) AS open_jobs,
       (SELECT json_group_array(json_array(key, operation, request_hash, entry_id, job_id))
          FROM idempotency_keys
         WHERE account_id = :account_id
           AND key IN (SELECT value FROM json_each(:keys))) AS keys,
       0 AS read_before_lock
  FROM accounts
 WHERE account_id = :account_id
