-- audit_money_pockets: every account's money pocket: its stored balance and what it
-- holds.
SELECT account_id, balance, held
FROM accounts
