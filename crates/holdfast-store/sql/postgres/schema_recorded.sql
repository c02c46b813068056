-- schema_recorded: whether the database records holdfast's migrations (sqlx's
-- _sqlx_migrations table on the search path): 1 when it does, 0 when it has no
-- holdfast schema at all.
SELECT CASE WHEN to_regclass('_sqlx_migrations') IS NULL THEN 0 ELSE 1 END::bigint AS recorded
