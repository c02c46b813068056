//! Read-only views for operators and dashboards: listings, the ledger export, the
//! console overview, metrics and the event feed. None of them writes.

pub mod events;
pub mod export;
pub mod listing;
pub mod overview;
pub mod statement;
pub mod stats;
pub mod usage;
