-- lock_account_of_job: reads the account of a job with the database clock and its
-- allowance pockets (the write lock is held from BEGIN IMMEDIATE).
--
-- :job_id  the job
SELECT accounts.*,
       CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) AS now,
       (SELECT json_group_array(json_array(pocket, remaining, held, cycle_started_at))
          FROM allowances WHERE account_id = accounts.account_id) AS allowances,
       NULL AS open_jobs, NULL AS keys
  FROM accounts
 WHERE account_id = (SELECT account_id FROM jobs WHERE job_id = :job_id)
