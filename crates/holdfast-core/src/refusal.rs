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
    #[error("the account is banned")]
    AccountBanned,
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
    #[error("only a succeeded job that was charged can be refunded")]
    JobNotRefundable,
    #[error("the refund is more than the job has left to refund of its charge")]
    RefundExceedsCharge,
    #[error("the job has already started")]
    AlreadyStarted,
    #[error("the job has already finished")]
    AlreadyFinished,
    #[error("the lease is not valid: wrong token, expired or swept")]
    LeaseLost,
    #[error("the job this usage is for was expired by the sweeper: stop the work")]
    UsageOfExpiredJob,
    #[error("the job this usage is for ended longer ago than late_usage_grace_seconds")]
    UsageAfterGrace,
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
            Refusal::AccountBanned => "account_banned",
            Refusal::AccountBlocked => "account_blocked",
            Refusal::AccountSuspended => "account_suspended",
            Refusal::Busy => "busy",
            Refusal::InsufficientFunds => "insufficient_funds",
            Refusal::InsufficientAllowance => "insufficient_allowance",
            Refusal::AmountOutOfRange => "amount_out_of_range",
            Refusal::NotRefundable | Refusal::JobNotRefundable => "not_refundable",
            Refusal::RefundExceedsCharge => "refund_exceeds_charge",
            Refusal::RefundExceedsTopUp => "refund_exceeds_top_up",
            Refusal::AlreadyStarted => "already_started",
            Refusal::AlreadyFinished => "already_finished",
            Refusal::LeaseLost | Refusal::UsageOfExpiredJob => "lease_lost",
            Refusal::UsageAfterGrace => "already_finished",
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
            Refusal::AccountBanned | Refusal::AccountBlocked | Refusal::AccountSuspended => 403,
            Refusal::InsufficientFunds | Refusal::InsufficientAllowance => 402,
            Refusal::IdempotencyMismatch
            | Refusal::Busy
            | Refusal::NotRefundable
            | Refusal::RefundExceedsTopUp
            | Refusal::JobNotRefundable
            | Refusal::RefundExceedsCharge
            | Refusal::AlreadyStarted
            | Refusal::AlreadyFinished
            | Refusal::LeaseLost
            | Refusal::UsageOfExpiredJob
            | Refusal::UsageAfterGrace => 409,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every refusal with its API.md code and HTTP status.
    fn table() -> Vec<(Refusal, &'static str, u16)> {
        let s = || String::from("x");
        vec![
            (Refusal::InvalidRequest(s()), "invalid_request", 422),
            (Refusal::InvalidCapture(s()), "invalid_request", 422),
            (Refusal::UnknownPlan(s()), "unknown_plan", 422),
            (Refusal::UnknownKind(s()), "unknown_kind", 422),
            (Refusal::UnknownMeter(s()), "unknown_meter", 422),
            (Refusal::AccountNotFound, "account_not_found", 404),
            (Refusal::JobNotFound, "job_not_found", 404),
            (Refusal::UnknownLane(s()), "unknown_lane", 404),
            (Refusal::TopUpNotFound, "top_up_not_found", 404),
            (Refusal::IdempotencyMismatch, "idempotency_mismatch", 409),
            (Refusal::AccountBanned, "account_banned", 403),
            (Refusal::AccountBlocked, "account_blocked", 403),
            (Refusal::AccountSuspended, "account_suspended", 403),
            (Refusal::Busy, "busy", 409),
            (Refusal::InsufficientFunds, "insufficient_funds", 402),
            (
                Refusal::InsufficientAllowance,
                "insufficient_allowance",
                402,
            ),
            (Refusal::AmountOutOfRange, "amount_out_of_range", 422),
            (Refusal::NotRefundable, "not_refundable", 409),
            (Refusal::RefundExceedsTopUp, "refund_exceeds_top_up", 409),
            (Refusal::JobNotRefundable, "not_refundable", 409),
            (Refusal::RefundExceedsCharge, "refund_exceeds_charge", 409),
            (Refusal::AlreadyStarted, "already_started", 409),
            (Refusal::AlreadyFinished, "already_finished", 409),
            (Refusal::LeaseLost, "lease_lost", 409),
            (Refusal::UsageOfExpiredJob, "lease_lost", 409),
            (Refusal::UsageAfterGrace, "already_finished", 409),
        ]
    }

    #[test]
    fn every_refusal_has_its_api_code_and_status() {
        for (refusal, code, status) in table() {
            assert_eq!(refusal.code(), code, "{refusal:?}");
            assert_eq!(refusal.http_status(), status, "{refusal:?}");
        }
    }

    #[test]
    fn messages_carry_the_offending_name() {
        assert_eq!(
            Refusal::UnknownPlan("gold".into()).to_string(),
            "unknown plan \"gold\""
        );
        assert_eq!(Refusal::InvalidRequest("bad".into()).to_string(), "bad");
    }
}
