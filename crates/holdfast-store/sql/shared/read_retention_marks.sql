-- read_retention_marks: how far pruning has gone, per table (none before the first prune).
SELECT what, pruned_before, last_position
FROM retention_marks
