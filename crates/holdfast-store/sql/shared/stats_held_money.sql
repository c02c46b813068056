-- stats_held_money: the money held across all accounts, in micros.
SELECT CAST(COALESCE(SUM(held), 0) AS BIGINT) AS n
FROM accounts
