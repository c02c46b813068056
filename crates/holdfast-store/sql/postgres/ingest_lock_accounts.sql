-- ingest_lock_accounts: locks the accounts of a batch ingest in sorted order of id (the
-- lock order of every multi-account transaction, so two never deadlock) and reads them
-- with the locks. Under READ COMMITTED a row locked FOR UPDATE comes back as its newest
-- committed version (a row changed while this waited is fetched again), so the rows
-- are current without a second read. `= ANY (array)`: an index scan of the primary key.
--
-- With :extras, each account's allowance pockets and open jobs, which only the answers
-- need, are read too, BEFORE the first lock is taken (so not while the locks are held)
-- and from the statement's snapshot, which may predate a lock wait. They are given only
-- where they are current: where the row this statement locked is the very row version
-- its snapshot saw (same ctid). Every transaction that changes an account's pockets or
-- its open jobs also updates the account's row, under its lock (docs/DESIGN.md,
-- "Account row versions"; tests/scopes.rs checks it), so a row version unchanged since
-- the snapshot means that no such change committed since. Elsewhere they come back
-- NULL, and the write reads them with every lock held (ingest_write, :stale_accounts).
--
-- Once EVERY lock is held (`held` counts the locked rows, so it runs after the last
-- lock), the same statement reads the database clock (the time of the call's entries
-- and decisions) and takes the call's ledger entry ids from the ledger's sequence in
-- increasing order, listed on the first row only. Taken before the locks, another
-- transaction's entry on one of these accounts could get a higher id yet commit first,
-- and the ledger's order would not be the order of application (an id not used is a
-- gap, as after any rolled-back insert).
--
-- :account_ids  the accounts, an array of text
-- :count        how many ledger entry ids to take
-- :extras       1: read the pockets and open jobs; 0: do not
WITH seen AS MATERIALIZED (
    SELECT accounts.account_id, accounts.ctid AS seen_row,
           (SELECT COALESCE(json_agg(json_build_array(pocket, remaining, held, cycle_started_at)), '[]')::text
              FROM allowances WHERE allowances.account_id = accounts.account_id) AS allowances,
           (SELECT COUNT(*) FROM jobs
             WHERE jobs.account_id = accounts.account_id
               AND status IN ('queued', 'in_progress')) AS open_jobs
      FROM accounts
     WHERE :extras::bigint = 1
       AND account_id = ANY (:account_ids::text[])
),
locked AS MATERIALIZED (
    SELECT accounts.*, accounts.ctid AS locked_row
      FROM accounts
     WHERE account_id = ANY (:account_ids::text[])
       -- an uncorrelated sub-query runs once, before the scan's first row: the pockets
       -- and open jobs are read before the first lock
       AND (SELECT COUNT(*) FROM seen) >= 0
     ORDER BY account_id
       FOR UPDATE
),
held AS (
    SELECT COUNT(*) AS accounts,
           (extract(epoch from clock_timestamp()) * 1000000)::bigint AS now
      FROM locked
),
-- A volatile CTE runs once, whatever refers to it; it reads `held`, so after the locks.
-- The count in a subquery: given as a constant, the planner would size the series by
-- it, find every custom plan cheaper than the generic one, and plan every call anew.
entry_id AS (
    SELECT nextval('ledger_entry_id_seq') AS entry_id
      FROM held, generate_series(1, (SELECT :count::bigint))
)
SELECT locked.*,
       seen.allowances,
       seen.open_jobs,
       NULL::text AS keys,
       held.now,
       CASE WHEN row_number() OVER (ORDER BY locked.account_id) = 1
            THEN (SELECT COALESCE(string_agg(entry_id::text, ',' ORDER BY entry_id), '') FROM entry_id)
       END AS entry_ids
  FROM locked
  CROSS JOIN held
  LEFT JOIN seen ON seen.account_id = locked.account_id AND seen.seen_row = locked.locked_row
 ORDER BY locked.account_id
