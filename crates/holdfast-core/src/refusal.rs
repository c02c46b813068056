//! Every business refusal holdfast gives, each with one stable code (API.md). A refusal
//! changes nothing.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Refusal {
    #[error("{0}")]
    InvalidRequest(String),
    #[error("{0}")]
    InvalidCapture(String),
    #[error("unknown plan {0:?}")]
    UnknownPlan(String),
    #[error("unknown kind {0:?}")]
    UnknownKind(String),
    #[error("unknown meter {0:?}")]
    UnknownMeter(String),
    #[error("no such account")]
    AccountNotFound,
    #[error("no such job")]
    JobNotFound,
    #[error("no kind uses lane {0:?}")]
    UnknownLane(String),
    #[error("no top-up with that idempotency key on this account")]
    TopUpNotFound,
    #[error("this idempotency key was used for a different request")]
    IdempotencyMismatch,
    #[error("the account is blocked")]
    AccountBlocked,
    #[error("the account is suspended: its balance is below zero")]
    AccountSuspended,
    #[error("the account already has as many open jobs as its concurrency limit allows")]
    Busy,
    #[error("not enough money: this would pass the overdraft buffer")]
    InsufficientFunds,
    #[error("not enough allowance left")]
    InsufficientAllowance,
    #[error("the amount would take the balance out of range")]
    AmountOutOfRange,
    #[error("only a top_up credit can be refunded")]
    NotRefundable,
    #[error("the refund is more than the top-up has left to refund")]
    RefundExceedsTopUp,
    #[error("the job has already started")]
    AlreadyStarted,
    #[error("the job has already finished")]
    AlreadyFinished,
    #[error("the lease is not valid: wrong token, expired or swept")]
    LeaseLost,
}

impl Refusal {
    /// The stable error code of API.md.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::InvalidRequest(_) | Refusal::InvalidCapture(_) => "invalid_request",
            Refusal::UnknownPlan(_) => "unknown_plan",
            Refusal::UnknownKind(_) => "unknown_kind",
            Refusal::UnknownMeter(_) => "unknown_meter",
            Refusal::AccountNotFound => "account_not_found",
            Refusal::JobNotFound => "job_not_found",
            Refusal::UnknownLane(_) => "unknown_lane",
            Refusal::TopUpNotFound => "top_up_not_found",
            Refusal::IdempotencyMismatch => "idempotency_mismatch",
            Refusal::AccountBlocked => "account_blocked",
            Refusal::AccountSuspended => "account_suspended",
            Refusal::Busy => "busy",
            Refusal::InsufficientFunds => "insufficient_funds",
            Refusal::InsufficientAllowance => "insufficient_allowance",
            Refusal::AmountOutOfRange => "amount_out_of_range",
            Refusal::NotRefundable => "not_refundable",
            Refusal::RefundExceedsTopUp => "refund_exceeds_top_up",
            Refusal::AlreadyStarted => "already_started",
            Refusal::AlreadyFinished => "already_finished",
            Refusal::LeaseLost => "lease_lost",
        }
    }

    /// The HTTP status API.md gives this refusal.
    pub fn http_status(&self) -> u16 {
        match self {
            Refusal::InvalidRequest(_)
            | Refusal::InvalidCapture(_)
            | Refusal::UnknownPlan(_)
            | Refusal::UnknownKind(_)
            | Refusal::UnknownMeter(_)
            | Refusal::AmountOutOfRange => 422,
            Refusal::AccountNotFound
            | Refusal::JobNotFound
            | Refusal::UnknownLane(_)
            | Refusal::TopUpNotFound => 404,
            Refusal::AccountBlocked | Refusal::AccountSuspended => 403,
            Refusal::InsufficientFunds | Refusal::InsufficientAllowance => 402,
            Refusal::IdempotencyMismatch
            | Refusal::Busy
            | Refusal::NotRefundable
            | Refusal::RefundExceedsTopUp
            | Refusal::AlreadyStarted
            | Refusal::AlreadyFinished
            | Refusal::LeaseLost => 409,
        }
    }
}
