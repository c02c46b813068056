-- read_account_extras: what a unit of work reads besides the account row, after the
-- lock: the allowance pockets, the open jobs and the idempotency records of at most
-- two keys (NULL names none).
--
-- :account_id  the account
-- :first_key   a key whose record to read, or NULL
-- :second_key  another, or NULL
SELECT (SELECT COALESCE(json_agg(json_build_array(pocket, remaining, held, cycle_started_at) ORDER BY pocket), '[]')::text
          FROM allowances WHERE account_id = :account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE account_id = :account_id AND status IN ('queued', 'in_progress')) AS open_jobs,
       (SELECT COALESCE(json_agg(json_build_array(key, operation, request_hash, entry_id, job_id)), '[]')::text
          FROM idempotency_keys
         WHERE account_id = :account_id AND key IN (:first_key, :second_key)) AS keys
