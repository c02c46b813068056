-- ingest_reserve_entry_ids: ledger entry ids for the debits of a batch ingest, taken
-- from the ledger's sequence in increasing order (an id not used is a gap, as after any
-- rolled-back insert).
--
-- :count  how many ids
SELECT nextval('ledger_entry_id_seq') AS entry_id
  FROM generate_series(1, :count::bigint)
