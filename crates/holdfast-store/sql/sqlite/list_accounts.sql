-- list_accounts: accounts in id order after a cursor, each with the database clock, its
-- allowance pockets and its open jobs, optionally of one plan, one status and/or an id
-- prefix (in a read transaction: one snapshot).
--
-- :after_account_id  the cursor: the last account already listed ('' = from the start)
-- :prefix            only ids that start with this ('' = every id)
-- :plan              only this plan (NULL = every plan)
-- :status            active, suspended, blocked or banned (NULL = every status)
-- :limit             at most this many accounts
SELECT accounts.*,
       CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) AS now,
       (SELECT json_group_array(json_array(pocket, remaining, held, cycle_started_at))
          FROM allowances WHERE allowances.account_id = accounts.account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE jobs.account_id = accounts.account_id
           AND status IN ('queued', 'in_progress')) AS open_jobs,
       NULL AS keys
  FROM accounts
 WHERE accounts.account_id > :after_account_id
   AND accounts.account_id >= :prefix
   AND substr(accounts.account_id, 1, length(:prefix)) = :prefix
   AND (:plan IS NULL OR accounts.plan = :plan)
   AND (:status IS NULL
        OR (:status = 'active' AND suspended_at IS NULL AND blocked_at IS NULL AND banned_at IS NULL)
        OR (:status = 'suspended' AND suspended_at IS NOT NULL)
        OR (:status = 'blocked' AND blocked_at IS NOT NULL)
        OR (:status = 'banned' AND banned_at IS NOT NULL))
 ORDER BY accounts.account_id
 LIMIT :limit
