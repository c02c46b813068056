//! The dialect layer: the two backends behind one small surface ([`db`]), statements
//! kept as files and bound by name ([`statement`]), the schema check ([`schema`]),
//! PostgreSQL's hosts ([`failover`]), SQLite's write gate and group commit ([`group`])
//! and its online copy ([`backup`]). It knows nothing of accounts or money.

pub mod backup;
pub mod db;
pub mod failover;
pub mod group;
pub mod schema;
pub mod statement;
