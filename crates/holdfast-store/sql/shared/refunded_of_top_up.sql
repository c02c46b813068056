-- refunded_of_top_up: how much of a top-up was refunded so far (refund entries
-- reference the top-up's entry id).
--
-- :account_id  the account
-- :reference   the top-up's entry id, as text
SELECT COALESCE(CAST(SUM(-delta) AS BIGINT), 0) AS refunded
  FROM ledger
 WHERE account_id = :account_id AND kind = 'refund' AND ref = :reference
