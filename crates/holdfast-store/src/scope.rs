//! Which write transactions may change rows of more than one account.
//!
//! Every other write transaction changes the rows of one account only (its balance, ledger,
//! keys, jobs, events, deliveries), which is what lets the account-keyed tables be
//! distributed by `account_id` with each such transaction on one node (docs/SCALING.md).
//! A transaction that spans accounts by design says so as it begins, with
//! [`Pool::begin_write_across`](crate::driver::db::Pool::begin_write_across) (`in_write_tx!(store,
//! across …)`); on PostgreSQL that sets the transaction-local setting
//! `holdfast.cross_account` in the round trip of its `BEGIN`, which `tests/scopes.rs`
//! (holdfast) reads back from a trigger to prove that no other transaction spans accounts.

/// A write transaction that spans accounts, and why. Each is either a batch that many
/// callers share (one commit for many answers) or a pass that claims work across the
/// database; docs/SCALING.md says what each becomes when accounts live on several nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrossAccount {
    /// The debit batcher's group commit: the debits that arrived together, of any
    /// accounts, in one transaction (one commit, one sync, for many answers).
    DebitBatch,
    /// `POST /v1/debits`: a batch of any accounts' debits applied set-based at once.
    Ingest,
    /// PostgreSQL's feed sequencer: gives committed events of any accounts their
    /// positions in the one feed order.
    StampEvents,
    /// The notices pass: claims the due `job.waiting` notices of many jobs at once; the
    /// expiry pass likewise the `credit.expiring` notices of many credit blocks.
    Notices,
    /// Retention: deletes a chunk of old rows (keys' records, finished jobs, ended
    /// deliveries, the feed's head) of any accounts.
    Prune,
    /// A webhook endpoint's cursor moves over the feed and queues a delivery for each
    /// event it passes, of any accounts.
    QueueDeliveries,
    /// A dispatcher claims the due deliveries of an endpoint (the oldest of each account).
    ClaimDeliveries,
    /// A worker's batched lease: the oldest leasable jobs of a lane, of any accounts, in
    /// one statement.
    LeaseJobs,
    /// A worker's batched complete or fail: its jobs, of any accounts, finished in one
    /// transaction (one commit for many answers).
    FinishJobs,
    /// The submit batcher's group commit: the submits that arrived together, of any
    /// accounts, in one transaction (one commit for many answers).
    SubmitBatch,
}

impl CrossAccount {
    pub const ALL: [CrossAccount; 10] = [
        CrossAccount::DebitBatch,
        CrossAccount::Ingest,
        CrossAccount::StampEvents,
        CrossAccount::Notices,
        CrossAccount::Prune,
        CrossAccount::QueueDeliveries,
        CrossAccount::ClaimDeliveries,
        CrossAccount::LeaseJobs,
        CrossAccount::FinishJobs,
        CrossAccount::SubmitBatch,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CrossAccount::DebitBatch => "debit_batch",
            CrossAccount::Ingest => "ingest",
            CrossAccount::StampEvents => "stamp_events",
            CrossAccount::Notices => "notices",
            CrossAccount::Prune => "prune",
            CrossAccount::QueueDeliveries => "queue_deliveries",
            CrossAccount::ClaimDeliveries => "claim_deliveries",
            CrossAccount::LeaseJobs => "lease_jobs",
            CrossAccount::FinishJobs => "finish_jobs",
            CrossAccount::SubmitBatch => "submit_batch",
        }
    }
}
