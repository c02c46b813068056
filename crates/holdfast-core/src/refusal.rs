//! Every business refusal holdfast gives, each with one stable code (API.md). A refusal
//! changes nothing.

use std::fmt;

use thiserror::Error;

/// The names the rate card has of one sort (its plans, kinds, meters or lanes), carried by
/// the refusal of a name it lacks so that the message lists what the caller could send.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Known(pub Vec<String>);

impl Known {
    pub fn of<'a>(names: impl IntoIterator<Item = &'a String>) -> Known {
        Known(names.into_iter().cloned().collect())
    }
}

impl fmt::Display for Known {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none");
        }
        f.write_str(&self.0.join(", "))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Refusal {
    #[error("{0}")]
    InvalidRequest(String),
    #[error("{0}")]
    InvalidCapture(String),
    #[error("unknown plan {0:?}; the rate card's plans: {1}")]
    UnknownPlan(String, Known),
    #[error("unknown kind {0:?}; the rate card's kinds: {1}")]
    UnknownKind(String, Known),
    #[error("unknown meter {0:?}; the rate card's meters: {1}")]
    UnknownMeter(String, Known),
    #[error("no such account")]
    AccountNotFound,
    #[error("no such job")]
    JobNotFound,
    #[error("no kind uses lane {0:?}; the rate card's lanes: {1}")]
    UnknownLane(String, Known),
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
    #[error("this would take the period's spending past the account's spend limit")]
    SpendLimitReached,
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
            Refusal::UnknownPlan(..) => "unknown_plan",
            Refusal::UnknownKind(..) => "unknown_kind",
            Refusal::UnknownMeter(..) => "unknown_meter",
            Refusal::AccountNotFound => "account_not_found",
            Refusal::JobNotFound => "job_not_found",
            Refusal::UnknownLane(..) => "unknown_lane",
            Refusal::TopUpNotFound => "top_up_not_found",
            Refusal::IdempotencyMismatch => "idempotency_mismatch",
            Refusal::AccountBanned => "account_banned",
            Refusal::AccountBlocked => "account_blocked",
            Refusal::AccountSuspended => "account_suspended",
            Refusal::Busy => "busy",
            Refusal::InsufficientFunds => "insufficient_funds",
            Refusal::InsufficientAllowance => "insufficient_allowance",
            Refusal::SpendLimitReached => "spend_limit_reached",
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
            | Refusal::UnknownPlan(..)
            | Refusal::UnknownKind(..)
            | Refusal::UnknownMeter(..)
            | Refusal::AmountOutOfRange => 422,
            Refusal::AccountNotFound
            | Refusal::JobNotFound
            | Refusal::UnknownLane(..)
            | Refusal::TopUpNotFound => 404,
            Refusal::AccountBanned | Refusal::AccountBlocked | Refusal::AccountSuspended => 403,
            Refusal::InsufficientFunds
            | Refusal::InsufficientAllowance
            | Refusal::SpendLimitReached => 402,
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
            (
                Refusal::UnknownPlan(s(), Known::default()),
                "unknown_plan",
                422,
            ),
            (
                Refusal::UnknownKind(s(), Known::default()),
                "unknown_kind",
                422,
            ),
            (
                Refusal::UnknownMeter(s(), Known::default()),
                "unknown_meter",
                422,
            ),
            (Refusal::AccountNotFound, "account_not_found", 404),
            (Refusal::JobNotFound, "job_not_found", 404),
            (
                Refusal::UnknownLane(s(), Known::default()),
                "unknown_lane",
                404,
            ),
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
            (Refusal::SpendLimitReached, "spend_limit_reached", 402),
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
    fn messages_carry_the_offending_name_and_the_cards_names() {
        let known = Known(vec!["free".into(), "premium".into()]);
        assert_eq!(
            Refusal::UnknownPlan("gold".into(), known).to_string(),
            "unknown plan \"gold\"; the rate card's plans: free, premium"
        );
        assert_eq!(
            Refusal::UnknownMeter("gpu".into(), Known::default()).to_string(),
            "unknown meter \"gpu\"; the rate card's meters: none"
        );
        assert_eq!(Refusal::InvalidRequest("bad".into()).to_string(), "bad");
    }
}
