-- put_payment_dispute: records a dispute's status and the block it made or, lost, holds.
--
-- :provider    the provider
-- :dispute_id  the provider's dispute id
-- :account_id  the disputed payment's account
-- :status      open, won or lost
-- :blocked_at  the account's blocked_at this dispute set (or, lost, holds), or NULL
-- :now         the database clock
INSERT INTO payment_disputes (provider, dispute_id, account_id, status, blocked_at, updated_at)
VALUES (:provider, :dispute_id, :account_id, :status, :blocked_at, :now)
ON CONFLICT (provider, dispute_id)
DO UPDATE SET status = excluded.status, blocked_at = excluded.blocked_at,
              updated_at = excluded.updated_at
