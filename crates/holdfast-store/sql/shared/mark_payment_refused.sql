-- mark_payment_refused: records that a payment was refused, the first time only: a row
-- when this is the first refusal of the payment (its event is then due), none after.
--
-- :provider    the provider (`stripe`)
-- :payment_id  the provider's payment id (recorded before its first event was applied)
-- :now         the database clock
UPDATE payments
   SET refused_at = :now
 WHERE provider = :provider AND payment_id = :payment_id AND refused_at IS NULL
RETURNING payment_id
