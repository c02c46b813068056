-- overview_accounts_by_status: how many accounts have each status, counted as the account
-- listing filters them (an account both suspended and blocked counts in each).
SELECT count(*) AS accounts,
       count(*) FILTER (WHERE suspended_at IS NULL AND blocked_at IS NULL AND banned_at IS NULL)
           AS active,
       count(*) FILTER (WHERE suspended_at IS NOT NULL) AS suspended,
       count(*) FILTER (WHERE blocked_at IS NOT NULL) AS blocked,
       count(*) FILTER (WHERE banned_at IS NOT NULL) AS banned
FROM accounts
