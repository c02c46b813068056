-- prune_jobs: deletes the jobs prune_jobs_lock locked, except those a ledger entry
-- written since :cutoff names (a late refund keeps its job): read in this statement's
-- snapshot, which postdates every lock, so a refund that committed while the locks were
-- taken is seen; one not yet begun waits for the prune and then finds no job.
--
-- :cutoff   as prune_jobs_lock's
-- :job_ids  the jobs it locked, an array of text
DELETE FROM jobs AS job
 WHERE job.job_id = ANY(:job_ids::text[])
   AND NOT EXISTS (
     SELECT 1 FROM ledger AS entry
      WHERE entry.account_id = job.account_id
        AND entry.ref = job.job_id
        AND entry.created_at >= :cutoff
   )
