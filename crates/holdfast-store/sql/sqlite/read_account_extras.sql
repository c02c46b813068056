-- read_account_extras: the allowance pockets, the open jobs and the idempotency records
-- of at most two keys (NULL names none).
--
-- :account_id  the account
-- :first_key   a key whose record to read, or NULL
-- :second_key  another, or NULL
SELECT (SELECT json_group_array(json_array(pocket, remaining, held, cycle_started_at))
          FROM allowances WHERE account_id = :account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE account_id = :account_id AND status IN ('queued', 'in_progress')) AS open_jobs,
       (SELECT json_group_array(json_array(key, operation, request_hash, entry_id, job_id))
          FROM idempotency_keys
         WHERE account_id = :account_id AND key IN (:first_key, :second_key)) AS keys
