-- payment_account: the account a payment credited, if it was recorded.
--
-- :provider    the provider
-- :payment_id  the provider's payment id
SELECT account_id FROM payments WHERE provider = :provider AND payment_id = :payment_id
