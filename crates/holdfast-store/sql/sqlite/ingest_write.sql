-- ingest_write: the debits of a batch ingest that were decided to apply: each debit's
-- idempotency record and ledger entry, and each account's row once (the sum of its
-- debits). Every account row carries its guard: it is written only when the balance it
-- ends at is the one decided and stays within the buffer, so a wrong decision leaves a
-- count short, which the caller reports as corruption (rolled back). The last statement
-- counts what was written (changes() is the row count of the UPDATE before it).
--
-- :items    the debits, a JSON array of objects: account_id, key, request_hash,
--           entry_id, delta, amount_after, available_after, buffer, ref, now (the
--           database clock as the account was read, micros: the entry's time), actor
--           (who asked for it: a batch carries several callers' debits; see migration
--           0007)
-- :changes  the accounts, a JSON array of objects: account_id, delta (the sum of its
--           debits), spent, suspended_at (after the last), balance_after, buffer
INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at)
SELECT json_extract(value, '$.account_id'), json_extract(value, '$.key'), 'debit',
       json_extract(value, '$.request_hash'), json_extract(value, '$.entry_id'), NULL,
       json_extract(value, '$.now')
  FROM json_each(:items)
 WHERE true
    ON CONFLICT (account_id, key) DO NOTHING;

INSERT INTO ledger (entry_id, account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at, actor)
SELECT json_extract(value, '$.entry_id'), json_extract(value, '$.account_id'), 'money',
       json_extract(value, '$.delta'), 'debit', json_extract(value, '$.amount_after'),
       json_extract(value, '$.available_after'), json_extract(value, '$.buffer'),
       json_extract(value, '$.ref'), json_extract(value, '$.now'),
       json_extract(value, '$.actor')
  FROM json_each(:items);

UPDATE accounts
   SET balance = balance + json_extract(change.value, '$.delta'),
       total_spent = total_spent + json_extract(change.value, '$.spent'),
       suspended_at = json_extract(change.value, '$.suspended_at')
  FROM json_each(:changes) AS change
 WHERE accounts.account_id = json_extract(change.value, '$.account_id')
   AND accounts.balance + json_extract(change.value, '$.delta') = json_extract(change.value, '$.balance_after')
   AND accounts.balance - accounts.held + json_extract(change.value, '$.delta') >= -json_extract(change.value, '$.buffer');

SELECT changes() AS accounts_changed,
       (SELECT COUNT(*) FROM idempotency
          JOIN json_each(:items) AS item
            ON idempotency.account_id = json_extract(item.value, '$.account_id')
           AND idempotency.key = json_extract(item.value, '$.key')
           AND idempotency.entry_id = json_extract(item.value, '$.entry_id')) AS keys_claimed,
       (SELECT COUNT(*) FROM ledger
         WHERE entry_id IN (SELECT json_extract(value, '$.entry_id') FROM json_each(:items))) AS entries_written
