-- save_pass_cursor: records where a scheduled pass stopped.
--
-- :pass      the pass (reconcile, reactivate)
-- :position  the last account id it took ('' = start again from the beginning)
INSERT INTO pass_cursors (pass, position)
VALUES (:pass, :position)
ON CONFLICT (pass) DO UPDATE
SET position = excluded.position
