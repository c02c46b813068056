-- payment_customer: the account a provider's customer is mapped to, if any.
--
-- :provider     the provider
-- :customer_id  the provider's customer id
SELECT account_id, updated_at
  FROM payment_customers
 WHERE provider = :provider AND customer_id = :customer_id
