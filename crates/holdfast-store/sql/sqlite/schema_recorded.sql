-- schema_recorded: whether the database records holdfast's migrations (sqlx's
-- _sqlx_migrations table): 1 when it does, 0 when it has no holdfast schema at all.
SELECT count(*) AS recorded FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'
