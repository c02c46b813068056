//! The units of work: each locks its account(s) through [`account_state`], decides
//! with `holdfast-core`, and applies the decision with the shared writes of [`writes`]
//! and its own statements, in one transaction of [`crate::store`].

pub mod account_state;
pub mod accounts;
pub mod bans;
pub mod blocks;
pub mod claim;
pub mod finish;
pub mod ingest;
pub mod jobs;
pub mod keys;
pub mod money;
pub mod payments;
pub mod refunds;
pub mod spending;
pub mod submit;
pub mod writes;
