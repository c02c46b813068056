-- sweep_expirable_open_jobs: open jobs past their kind's clocks, the oldest first: in
-- progress and older than the stale deadline; queued, of an account not suspended, and
-- waiting (since queued_since) longer than the stale deadline or the kind's
-- queued_expires_after_seconds. The sweeper decides again under the locks.
--
-- :kinds           per kind, as a JSON object {kind: {"stale_before": micros,
--                  "queued_before": micros or null}} (now minus each clock)
-- :stale_before    now minus the card's stale_after_seconds (a kind not in :kinds)
-- :latest_before   the latest of every cutoff above (bounds the index range)
-- :limit           at most this many jobs
WITH clock AS (
    SELECT key AS kind,
           json_extract(value, '$.stale_before') AS stale_before,
           json_extract(value, '$.queued_before') AS queued_before
      FROM json_each(:kinds)
)
SELECT job.job_id
  FROM jobs AS job
  JOIN accounts AS account ON account.account_id = job.account_id
  LEFT JOIN clock ON clock.kind = job.kind
 WHERE job.status IN ('queued', 'in_progress')
   AND job.created_at <= :latest_before
   AND ((job.status = 'in_progress'
         AND job.created_at <= COALESCE(clock.stale_before, :stale_before))
     OR (job.status = 'queued'
         AND account.suspended_at IS NULL
         AND (job.queued_since <= COALESCE(clock.stale_before, :stale_before)
              OR job.queued_since <= clock.queued_before)))
 ORDER BY job.created_at
 LIMIT :limit
