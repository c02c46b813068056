//! The scheduled passes over many accounts: the sweeper and notices ([`sweep`]),
//! reactivation, reconciliation, retention (prune), webhook delivery, and the audit.

pub mod audit;
pub mod expiry;
pub mod reactivate;
pub mod reconcile;
pub mod retention;
pub mod sweep;
pub mod webhooks;
