-- payment_dispute: a dispute as recorded, if it was.
--
-- :provider    the provider
-- :dispute_id  the provider's dispute id
SELECT account_id, status, blocked_at
  FROM payment_disputes
 WHERE provider = :provider AND dispute_id = :dispute_id
