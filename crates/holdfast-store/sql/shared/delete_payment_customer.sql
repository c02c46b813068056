-- delete_payment_customer: removes a customer's map.
--
-- :provider     the provider
-- :customer_id  the provider's customer id
DELETE FROM payment_customers WHERE provider = :provider AND customer_id = :customer_id
