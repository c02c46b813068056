-- raise_retention_mark: records how far pruning of one table has gone, never moving a
-- mark back (see migration 0009).
--
-- :what           the table: idempotency, jobs, events, webhook_deliveries
-- :pruned_before  rows older than this may be gone (micros)
-- :last_position  for events, the last feed position pruned; NULL otherwise
INSERT INTO retention_marks (what, pruned_before, last_position)
VALUES (:what, :pruned_before, :last_position)
ON CONFLICT (what) DO UPDATE
SET pruned_before = CASE WHEN excluded.pruned_before > retention_marks.pruned_before
                         THEN excluded.pruned_before ELSE retention_marks.pruned_before END,
    last_position = CASE WHEN retention_marks.last_position IS NULL
                              OR excluded.last_position > retention_marks.last_position
                         THEN excluded.last_position ELSE retention_marks.last_position END
