-- put_payment_customer: maps a provider's customer to an account (replacing its map).
--
-- :provider     the provider
-- :customer_id  the provider's customer id
-- :account_id   the account the customer pays for
-- :now          the database clock
INSERT INTO payment_customers (provider, customer_id, account_id, updated_at)
VALUES (:provider, :customer_id, :account_id, :now)
ON CONFLICT (provider, customer_id)
DO UPDATE SET account_id = excluded.account_id, updated_at = excluded.updated_at
