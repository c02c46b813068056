-- lock_account_of_job: locks the account of a job (a job's account never changes) and
-- reads it with the database clock. The job itself is locked after it, by its caller.
--
-- :job_id  the job
SELECT accounts.*,
       (extract(epoch from clock_timestamp()) * 1000000)::bigint AS now,
       NULL::text AS allowances, NULL::bigint AS open_jobs, NULL::text AS keys
  FROM accounts
 WHERE account_id = (SELECT account_id FROM jobs WHERE job_id = :job_id)
   FOR UPDATE
