-- prune_jobs_lock: up to :limit jobs that finished before :cutoff and that no ledger entry
-- written since :cutoff names, oldest first, for prune_jobs to delete. (The write
-- transaction holds the database's write lock: no refund runs meanwhile.)
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
