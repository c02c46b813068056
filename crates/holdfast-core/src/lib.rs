//! holdfast-core: the domain. Money in integer micro-units, identifiers, the rate card, and
//! every billing decision (which pocket pays, may this debit pass, does this write
//! suspend, what does a cancel do) as pure, synchronous functions.
//!
//! Owns: the vocabulary and the rules. Must never: do I/O, touch a database, be async,
//! or use a float for money.

pub mod decide;
pub mod ids;
pub mod model;
pub mod money;
pub mod payments;
pub mod ratecard;
pub mod redact;
pub mod refusal;

pub use decide::{
    AccountSnapshot, AccountStatus, AllowancePocket, JobStatus, PocketAmount, StatusMarks,
    Timestamp, Usage,
};
pub use ids::{AccountId, IdError, IdempotencyKey, JobId, WorkerId};
pub use money::{MAX_BALANCE, MAX_REQUEST_AMOUNT, Micros, MoneyError, pocket_amount};
pub use ratecard::{MONEY, RateCard, RateCardError};
pub use refusal::Refusal;
