-- prune_jobs_lock: locks up to :limit jobs that finished before :cutoff and that no ledger
-- entry written since :cutoff names, oldest first, for prune_jobs to delete. A job locked
-- by anyone (a refund in flight) is skipped. A refund that committed after this
-- statement's snapshot and before its lock is not seen here: prune_jobs, a statement of
-- its own taken once the locks are held, looks again (no refund can write to a locked job).
--
-- :cutoff  jobs that finished before this time go (micros)
-- :limit   at most this many
SELECT job.job_id
  FROM jobs AS job
 WHERE job.finished_at < :cutoff
   AND job.status NOT IN ('queued', 'in_progress')
   AND NOT EXISTS (
     SELECT 1 FROM ledger AS entry
      WHERE entry.account_id = job.account_id
        AND entry.ref = job.job_id
        AND entry.created_at >= :cutoff
   )
 ORDER BY job.finished_at
 LIMIT :limit
   FOR UPDATE OF job SKIP LOCKED
