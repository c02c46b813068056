-- ingest_lock_accounts: locks the accounts of a set-based call (debits: one or a
-- thousand; submits: one or a batch) in the order given, which the caller sorts (the
-- lock order of every multi-account transaction, so two never deadlock), and reads them
-- with the locks. Under READ COMMITTED a row locked FOR UPDATE comes back as its newest
-- committed version (a row changed while this waited is fetched again), so the rows
-- are current without a second read.
--
-- The same statement reads the database clock once every lock is held (`held` counts
-- the locked rows, so it runs after the last lock), and each account's allowance
-- pockets and open jobs. Those come from the statement's snapshot, taken before any
-- wait for a lock, so they may predate a transaction that committed meanwhile: `stale`
-- says so, where the locked row is not the version the snapshot saw (its ctid moved).
-- Every transaction that changes an account's pockets or open jobs also writes its row
-- (docs/DESIGN.md, "Account row versions"), so a row version that did not move means
-- the snapshot's pockets and open jobs are current; for a stale account they are read
-- again by a statement whose snapshot postdates every lock (a submit, which decides on
-- them: ingest_read_accounts; a debit, whose answers show them: its write,
-- ingest_write's :answered).
--
-- The credit blocks that hold money come with each account that has had blocks
-- (`blocks`, NULL for the others): from the locked row itself (`live_blocks`, which
-- every change of a block writes), so they are current.
--
-- The same statement serves a call of one and a call of a thousand, so it is shaped to
-- be planned once per connection and to reach every row by its key whatever the
-- statistics say (docs/bench-history.md, issue #43): the array comes through a
-- sub-select (a generic plan cannot count it, so PostgreSQL keeps one), and each account
-- is locked by its own probe of the primary key (`LATERAL … OFFSET 0`), in the array's
-- order.
--
-- :account_ids  the accounts, an array of text, sorted
WITH locked AS MATERIALIZED (
    SELECT account.*
      FROM unnest((SELECT :account_ids::text[])) AS wanted(id)
     CROSS JOIN LATERAL (SELECT accounts.*,
                                (accounts.ctid <> (SELECT seen.ctid FROM accounts AS seen
                                                    WHERE seen.account_id = wanted.id))::int::bigint
                                    AS stale
                           FROM accounts
                          WHERE accounts.account_id = wanted.id
                         OFFSET 0
                            FOR UPDATE) AS account
),
held AS (
    SELECT COUNT(*) AS accounts,
           (extract(epoch from clock_timestamp()) * 1000000)::bigint AS now
      FROM locked
)
SELECT locked.*,
       (SELECT COALESCE(json_agg(json_build_array(pocket, remaining, held, cycle_started_at)), '[]')::text
          FROM allowances WHERE allowances.account_id = locked.account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE jobs.account_id = locked.account_id
           AND status IN ('queued', 'in_progress')) AS open_jobs,
       NULL::text AS keys,
       locked.live_blocks AS blocks,
       held.now
  FROM held
 CROSS JOIN locked
