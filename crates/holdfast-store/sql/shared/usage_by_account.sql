-- usage_by_account: what each account spent in [from, to) — debits and captures of
-- money (and the seconds of the metered debits), and what job refunds gave back — in
-- account id order after a cursor. The period's entries are read first, by created_at
-- (on PostgreSQL the BRIN index ledger_by_time), and kept apart (MATERIALIZED): left to
-- itself the planner walks ledger_by_account in account order for the ORDER BY and
-- LIMIT, every entry of every account, whatever the period.
--
-- :from   the period's start (micros, inclusive)
-- :to     the period's end (micros, exclusive)
-- :after  the last account id already listed ('' for the first page)
-- :limit  at most this many accounts
WITH period AS MATERIALIZED (
    SELECT account_id, kind, delta, seconds
      FROM ledger
     WHERE created_at >= :from AND created_at < :to
       AND pocket = 'money' AND kind IN ('debit', 'capture', 'job_refund')
       AND account_id > :after
)
SELECT account_id AS group_key,
       CAST(SUM(CASE WHEN kind = 'job_refund' THEN 0 ELSE 1 END) AS BIGINT) AS entries,
       CAST(SUM(CASE WHEN kind = 'job_refund' THEN 0 ELSE -delta END) AS BIGINT) AS spent,
       CAST(SUM(CASE WHEN kind = 'job_refund' THEN delta ELSE 0 END) AS BIGINT) AS refunded,
       CAST(COALESCE(SUM(seconds), 0) AS BIGINT) AS seconds
  FROM period
 GROUP BY account_id
 ORDER BY account_id
 LIMIT :limit
