-- ingest_lock_accounts: the accounts of a batch ingest that exist, in sorted order of
-- id, with all the call reads: the database clock, each account's allowance pockets
-- and open jobs (for the answers), and on the first row the call's ledger entry ids:
-- the next ones after the largest the ledger ever gave (AUTOINCREMENT's
-- sqlite_sequence). The write transaction (BEGIN IMMEDIATE) holds the database's write
-- lock already, so nothing changes them or takes those ids meanwhile.
--
-- :account_ids  the accounts, as a JSON array of strings (a column bound on SQLite)
-- :count        how many ledger entry ids to take
WITH RECURSIVE n(i) AS (
    SELECT 1 WHERE :count >= 1
    UNION ALL
    SELECT i + 1 FROM n WHERE i < :count
)
SELECT accounts.*,
       CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) AS now,
       (SELECT json_group_array(json_array(pocket, remaining, held, cycle_started_at))
          FROM allowances WHERE allowances.account_id = accounts.account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE jobs.account_id = accounts.account_id
           AND status IN ('queued', 'in_progress')) AS open_jobs,
       NULL AS keys,
       -- the row version the lock read, which PostgreSQL compares with its snapshot's
       NULL AS locked_row,
       CASE WHEN row_number() OVER (ORDER BY accounts.account_id) = 1
            THEN (SELECT COALESCE(group_concat(
                            COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'ledger'), 0) + i, ','), '')
                    FROM n)
       END AS entry_ids
  FROM accounts
 WHERE account_id IN (SELECT value FROM json_each(:account_ids))
 ORDER BY account_id
