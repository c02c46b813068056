-- lock_job_if_free: a job the sweeper may expire, locked, unless another transaction
-- holds it right now (SKIP LOCKED: the next pass takes it), with its account's pockets
-- (read after the account lock, so current).
--
-- :job_id      the job
-- :account_id  its account (locked already)
SELECT jobs.*,
       (SELECT COALESCE(json_agg(json_build_array(pocket, remaining, held, cycle_started_at) ORDER BY pocket), '[]')::text
          FROM allowances WHERE account_id = :account_id) AS allowances,
       NULL::bigint AS open_jobs, NULL::text AS keys
  FROM jobs
 WHERE job_id = :job_id
   FOR UPDATE SKIP LOCKED
