-- ingest_lock_accounts: locks the accounts of a batch ingest in sorted order of id (the
-- lock order of every multi-account transaction, so two never deadlock) and reads them
-- with the locks. Under READ COMMITTED a row locked FOR UPDATE comes back as its newest
-- committed version (a row changed while this waited is fetched again), so the rows
-- are current without a second read. `= ANY (array)`: an index scan of the primary key.
--
-- Once EVERY lock is held (`held` counts the locked rows, so it runs after the last
-- lock), the same statement reads the database clock (the time of the call's entries
-- and decisions) and takes the call's ledger entry ids from the ledger's sequence in
-- increasing order, listed on the first row only. Taken before the locks, another
-- transaction's entry on one of these accounts could get a higher id yet commit first,
-- and the ledger's order would not be the order of application (an id not used is a
-- gap, as after any rolled-back insert). The pockets and open jobs, which only the
-- answers need, are read by the write (ingest_write), in a snapshot after every lock.
--
-- :account_ids  the accounts, an array of text
-- :count        how many ledger entry ids to take
WITH locked AS MATERIALIZED (
    SELECT accounts.*
      FROM accounts
     WHERE account_id = ANY (:account_ids::text[])
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
       held.now,
       CASE WHEN row_number() OVER (ORDER BY locked.account_id) = 1
            THEN (SELECT COALESCE(string_agg(entry_id::text, ',' ORDER BY entry_id), '') FROM entry_id)
       END AS entry_ids
  FROM locked, held
 ORDER BY locked.account_id
