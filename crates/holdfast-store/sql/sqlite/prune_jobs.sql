-- prune_jobs: deletes the jobs prune_jobs_lock chose, except those a ledger entry written
-- since :cutoff names (as postgres/prune_jobs.sql; under SQLite's write lock nothing
-- changed between the two).
--
-- :cutoff   as prune_jobs_lock's
-- :job_ids  the jobs, as a JSON array of strings
DELETE FROM jobs
 WHERE job_id IN (SELECT value FROM json_each(:job_ids))
   AND NOT EXISTS (
     SELECT 1 FROM ledger AS entry
      WHERE entry.account_id = jobs.account_id
        AND entry.ref = jobs.job_id
        AND entry.created_at >= :cutoff
   )
