-- ingest_lock_accounts: locks the accounts of a set-based debit call (one debit or a
-- thousand; also a submit batch) in the order given, which the caller sorts (the lock
-- order of every multi-account transaction, so two never deadlock), and reads them with
-- the locks. Under READ COMMITTED a row locked FOR UPDATE comes back as its newest
-- committed version (a row changed while this waited is fetched again), so the rows
-- are current without a second read.
--
-- Once EVERY lock is held (`held` counts the locked rows, so it runs after the last
-- lock), the same statement reads the database clock (the time of the call's entries
-- and decisions) and each account's allowance pockets and open jobs (the answers' views
-- and the decisions need them): the select list is computed per row of the join with
-- `held`, so after the last lock, and a row locked is current, so is what is read for it.
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
     CROSS JOIN LATERAL (SELECT accounts.*
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
       held.now
  FROM held
 CROSS JOIN locked
