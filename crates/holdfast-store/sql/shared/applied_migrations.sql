-- applied_migrations: the versions of the migrations applied to this database.
SELECT version FROM _sqlx_migrations WHERE success
