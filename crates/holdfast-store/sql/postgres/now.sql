-- now: the database clock in integer microseconds since the Unix epoch, the one time
-- source of every statement.
SELECT (extract(epoch from clock_timestamp()) * 1000000)::bigint AS now
