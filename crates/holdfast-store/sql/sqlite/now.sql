-- now: the database clock in integer microseconds since the Unix epoch, the one time
-- source of every statement.
SELECT CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) AS now
