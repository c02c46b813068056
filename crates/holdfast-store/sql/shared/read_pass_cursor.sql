-- read_pass_cursor: where a scheduled pass stopped (the last account id it took).
--
-- :pass  the pass (reconcile, reactivate)
SELECT position
FROM pass_cursors
WHERE pass = :pass
