-- Job refunds: what a job has been refunded of its charge, JSON lines like `charged`
-- (NULL = nothing). The refunds themselves are `job_refund` ledger entries whose ref is
-- the job id.
ALTER TABLE jobs ADD COLUMN refunded TEXT;
