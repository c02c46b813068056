-- statement_spending_by_job_kind: an account's money spent in [from, to) (debits and
-- captures), by the kind of the job each bills (its `ref`); NULL for a debit that names
-- no job of this engine (or one pruned by retention), listed last.
--
-- :account_id  the account
-- :from        the period's start (micros, inclusive)
-- :to          the period's end (micros, exclusive)
SELECT jobs.kind AS job_kind,
       CAST(COUNT(*) AS BIGINT) AS entries,
       CAST(SUM(-ledger.delta) AS BIGINT) AS amount
  FROM ledger
  LEFT JOIN jobs ON jobs.job_id = ledger.ref AND jobs.account_id = ledger.account_id
 WHERE ledger.account_id = :account_id AND ledger.pocket = 'money'
   AND ledger.kind IN ('debit', 'capture')
   AND ledger.created_at >= :from AND ledger.created_at < :to
 GROUP BY jobs.kind
 ORDER BY jobs.kind IS NULL, jobs.kind
