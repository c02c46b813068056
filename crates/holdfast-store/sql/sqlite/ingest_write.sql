-- ingest_write: the debits of a set-based call (one debit or a thousand) that were
-- decided to apply: each debit's ledger entry, which carries its key (a key some earlier
-- money change used fails the insert with a unique violation, ledger_by_key; one a job
-- submit used leaves its debit out, so the entries come back short: either way the
-- caller rolls back and redoes the call reading its keys first), and each account's row
-- once (the sum of its debits). Every account row carries its guard: it is written only
-- when the balance it ends at is the one decided and stays within the buffer, so a wrong
-- decision leaves accounts_changed short, which the caller reports as corruption (rolled
-- back). The last statement answers (changes() is the row count of the UPDATE before
-- it) with the ids of the entries written, found by their keys (ledger_by_key), in the
-- order of the items: the ids AUTOINCREMENT gave them, increasing.
--
-- :items    the debits, a JSON array of objects: account_id, key, request_hash,
--           delta, amount_after, available_after, buffer, ref, now (the database clock
--           as the account was read, micros: the entry's time), actor (who asked for
--           it: a batch carries several callers' debits; see migration 0007), meter and
--           seconds (what a metered debit used, or null), blocks (the credit blocks it
--           drew from, JSON text, or null: migration 0018)
-- :changes  the accounts, a JSON array of objects: account_id, delta (the sum of its
--           debits), spent, suspended_at (after the last), balance_after, buffer,
--           live_blocks (the live credit blocks after the call, or null: migration 0019)
-- :blocks   the credit blocks the debits drew from, as each account's last debit left
--           them: a JSON array of {block_id, remaining, held} (`[]` on accounts without
--           blocks); written before the accounts, whose UPDATE changes() counts
-- :answered the accounts whose pockets and open jobs the lock could not read current (on
--           SQLite none: see ingest_lock_accounts), a JSON array of strings: `extras`
--           lists them, [account, pockets, open jobs] each
INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer,
                    ref, created_at, actor, idempotency_key, request_hash, meter, seconds,
                    blocks)
SELECT json_extract(value, '$.account_id'), 'money', json_extract(value, '$.delta'), 'debit',
       json_extract(value, '$.amount_after'), json_extract(value, '$.available_after'),
       json_extract(value, '$.buffer'), json_extract(value, '$.ref'),
       json_extract(value, '$.now'), json_extract(value, '$.actor'),
       json_extract(value, '$.key'), json_extract(value, '$.request_hash'),
       json_extract(value, '$.meter'), json_extract(value, '$.seconds'),
       json_extract(value, '$.blocks')
  FROM jsonb_each(:items)
 WHERE NOT EXISTS (SELECT 1 FROM idempotency
                    WHERE idempotency.account_id = json_extract(value, '$.account_id')
                      AND idempotency.key = json_extract(value, '$.key'))
 ORDER BY jsonb_each.key;

UPDATE credit_blocks
   SET remaining = json_extract(block.value, '$.remaining'),
       held = json_extract(block.value, '$.held')
  FROM json_each(:blocks) AS block
 WHERE credit_blocks.block_id = json_extract(block.value, '$.block_id');

UPDATE accounts
   SET balance = balance + json_extract(change.value, '$.delta'),
       total_spent = total_spent + json_extract(change.value, '$.spent'),
       suspended_at = json_extract(change.value, '$.suspended_at'),
       live_blocks = COALESCE(json_extract(change.value, '$.live_blocks'), accounts.live_blocks)
  FROM jsonb_each(:changes) AS change
 WHERE accounts.account_id = json_extract(change.value, '$.account_id')
   AND accounts.balance + json_extract(change.value, '$.delta') = json_extract(change.value, '$.balance_after')
   AND accounts.balance - accounts.held + json_extract(change.value, '$.delta') >= -json_extract(change.value, '$.buffer');

SELECT (SELECT COALESCE(group_concat(entry_id, ','), '')
          FROM (SELECT ledger.entry_id
                  FROM jsonb_each(:items) AS item
                  JOIN ledger ON ledger.account_id = json_extract(item.value, '$.account_id')
                             AND ledger.idempotency_key = json_extract(item.value, '$.key')
                 ORDER BY item.key)) AS entry_ids,
       changes() AS accounts_changed,
       (SELECT json_group_array(json_array(
                   answered.value,
                   json((SELECT json_group_array(json_array(pocket, remaining, held, cycle_started_at))
                           FROM allowances WHERE allowances.account_id = answered.value)),
                   (SELECT COUNT(*) FROM jobs
                     WHERE jobs.account_id = answered.value
                       AND status IN ('queued', 'in_progress'))))
          FROM json_each(:answered) AS answered) AS extras
