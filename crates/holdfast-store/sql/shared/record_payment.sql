-- record_payment: records the account a payment credits; the first account recorded for
-- a payment stays. Answers the payment's account.
--
-- :provider    the provider (`stripe`)
-- :payment_id  the provider's payment id
-- :account_id  the account the payment names
-- :now         the database clock
INSERT INTO payments (provider, payment_id, account_id, created_at)
VALUES (:provider, :payment_id, :account_id, :now)
ON CONFLICT (provider, payment_id) DO UPDATE SET provider = payments.provider
RETURNING account_id
