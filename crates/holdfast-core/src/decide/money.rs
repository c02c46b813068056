//! Decisions on the money pocket: what a request amount may be, what metered usage
//! costs, what a change of money does to the balance, the counters and suspension, and
//! how much of a top-up may still be refunded.

use super::{AccountSnapshot, Suspension, Timestamp};
use crate::money::{MAX_BALANCE, MAX_REQUEST_AMOUNT, Micros};
use crate::ratecard::RateCard;
use crate::refusal::Refusal;

/// What a debit is for: an amount of money, or seconds of a meter priced from the card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Usage {
    Amount(Micros),
    Metered { meter: String, seconds: i64 },
}

impl Usage {
    /// The meter of metered usage, recorded on its debit's ledger entry.
    pub fn meter(&self) -> Option<&str> {
        match self {
            Usage::Amount(_) => None,
            Usage::Metered { meter, .. } => Some(meter),
        }
    }

    /// The seconds of metered usage, recorded beside its meter.
    pub fn seconds(&self) -> Option<i64> {
        match self {
            Usage::Amount(_) => None,
            Usage::Metered { seconds, .. } => Some(*seconds),
        }
    }
}

/// An amount a client asks to move: greater than zero, at most [`MAX_REQUEST_AMOUNT`].
pub fn check_request_amount(amount: Micros) -> Result<(), Refusal> {
    if amount.0 <= 0 {
        return Err(Refusal::InvalidRequest(
            "amount: must be greater than zero".into(),
        ));
    }
    if amount > MAX_REQUEST_AMOUNT {
        return Err(Refusal::AmountOutOfRange);
    }
    Ok(())
}

/// The price of usage: money as given, or meter seconds at the card's per-second rate
/// (rates are whole micros, so the product needs no rounding).
pub fn price(card: &RateCard, usage: &Usage) -> Result<Micros, Refusal> {
    match usage {
        Usage::Amount(m) => Ok(*m),
        Usage::Metered { meter, seconds } => {
            let per_second = card.meter(meter)?;
            if *seconds <= 0 {
                return Err(Refusal::InvalidRequest(
                    "usage.seconds: must be a positive integer".into(),
                ));
            }
            let too_large =
                || Refusal::InvalidRequest("usage.seconds: too large for this meter".into());
            let price = per_second.times(*seconds).ok_or_else(too_large)?;
            if price > MAX_REQUEST_AMOUNT {
                return Err(too_large());
            }
            Ok(price)
        }
    }
}

/// A change of the money pocket, by what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoneyMove {
    /// A top-up or bonus: the balance and `total_credited` grow; it may end a suspension.
    Credit(Micros),
    /// Metered usage: the balance falls and `total_spent` grows.
    Debit(Micros),
    /// A job's capture: spending, like a debit.
    Capture(Micros),
    /// A refund of a top-up: the balance falls; not spending, so no counter moves.
    Refund(Micros),
    /// A refund of a job's charge: the balance grows and `total_spent` falls (spending
    /// that did not stand); like a credit, it may end a suspension.
    JobRefund(Micros),
    /// What is left of a credit block past its expiry, written off: the balance falls;
    /// not spending, so no counter moves.
    Expiry(Micros),
}

impl MoneyMove {
    /// The signed change of the balance.
    pub fn delta_micros(self) -> i64 {
        match self {
            MoneyMove::Credit(m) | MoneyMove::JobRefund(m) => m.0,
            MoneyMove::Debit(m)
            | MoneyMove::Capture(m)
            | MoneyMove::Refund(m)
            | MoneyMove::Expiry(m) => -m.0,
        }
    }

    /// How much `total_credited` grows.
    pub fn credited_micros(self) -> i64 {
        match self {
            MoneyMove::Credit(m) => m.0,
            _ => 0,
        }
    }

    /// How much `total_spent` grows.
    pub fn spent_micros(self) -> i64 {
        match self {
            MoneyMove::Debit(m) | MoneyMove::Capture(m) => m.0,
            MoneyMove::JobRefund(m) => -m.0,
            MoneyMove::Credit(_) | MoneyMove::Refund(_) | MoneyMove::Expiry(_) => 0,
        }
    }
}

/// The money pocket after a [`MoneyMove`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoneyAfter {
    pub balance_micros: i64,
    pub total_credited_micros: i64,
    pub total_spent_micros: i64,
    pub suspended_at: Option<Timestamp>,
    /// What the move does to suspension (an event when it changes).
    pub suspension: Suspension,
}

/// What `change` does to the account: the balance stays within ±(2^53 − 1) micros and
/// the counters within `i64` (else `amount_out_of_range`, nothing written); a balance
/// below zero suspends an account not yet suspended, and only a credit (or a job
/// refund) that leaves it at or above zero clears a suspension.
pub fn change_money(snap: &AccountSnapshot, change: MoneyMove) -> Result<MoneyAfter, Refusal> {
    let out_of_range = || Refusal::AmountOutOfRange;
    let balance = snap
        .balance
        .checked_add(change.delta_micros())
        .filter(|b| b.abs() <= MAX_BALANCE.0)
        .ok_or_else(out_of_range)?;
    let credited = snap
        .total_credited
        .checked_add(change.credited_micros())
        .ok_or_else(out_of_range)?;
    let spent = snap
        .total_spent
        .checked_add(change.spent_micros())
        .ok_or_else(out_of_range)?;
    let credit = matches!(change, MoneyMove::Credit(_) | MoneyMove::JobRefund(_));
    let suspension = super::suspension_after(snap.suspended_at, balance, credit);
    let suspended_at = match suspension {
        Suspension::Suspend => Some(snap.now),
        Suspension::Unsuspend => None,
        Suspension::Unchanged => snap.suspended_at,
    };
    Ok(MoneyAfter {
        balance_micros: balance,
        total_credited_micros: credited,
        total_spent_micros: spent,
        suspended_at,
        suspension,
    })
}

impl AccountSnapshot {
    /// This snapshot after a money change decided by [`change_money`].
    pub fn apply_money(&mut self, after: &MoneyAfter) {
        self.balance = after.balance_micros;
        self.total_credited = after.total_credited_micros;
        self.total_spent = after.total_spent_micros;
        self.suspended_at = after.suspended_at;
    }
}

/// A crossing of a plan's low-balance line by a change of available money.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BalanceCrossing {
    /// From at or above the line to below it.
    Low,
    /// From below the line to at or above it.
    Recovered,
}

impl BalanceCrossing {
    /// The event it emits.
    pub fn event_type(self) -> &'static str {
        match self {
            BalanceCrossing::Low => "account.low_balance",
            BalanceCrossing::Recovered => "account.balance_recovered",
        }
    }
}

/// Whether a change of available money from `before` to `after` crosses `line`: once
/// each way per crossing (a balance exactly at the line is not low; a change that stays
/// on one side says nothing).
pub fn balance_crossing(line: Option<Micros>, before: i64, after: i64) -> Option<BalanceCrossing> {
    let line = line?.0;
    match (before >= line, after >= line) {
        (true, false) => Some(BalanceCrossing::Low),
        (false, true) => Some(BalanceCrossing::Recovered),
        _ => None,
    }
}

/// An account's auto-recharge: when its available money crosses below `below`, the
/// operator is asked (event `account.recharge_requested`) to charge the customer `amount`,
/// which then comes back as a top-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recharge {
    pub below: Micros,
    pub amount: Micros,
}

impl serde::Serialize for Recharge {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = s.serialize_struct("Recharge", 2)?;
        out.serialize_field("below_micros", &self.below.0)?;
        out.serialize_field("amount_micros", &self.amount.0)?;
        out.end()
    }
}

impl Recharge {
    /// `below` at least 0, `amount` more than 0 (and what a request may carry).
    pub fn check(self) -> Result<Recharge, Refusal> {
        if self.below.0 < 0 || self.below > MAX_REQUEST_AMOUNT {
            return Err(Refusal::InvalidRequest(
                "recharge.below: must be 0 to 1000000000".into(),
            ));
        }
        check_request_amount(self.amount).map_err(|_| {
            Refusal::InvalidRequest(
                "recharge.amount: must be more than 0 and at most 1000000000".into(),
            )
        })?;
        Ok(self)
    }
}

/// Whether a change of available money from `before` to `after` asks for a recharge: it
/// goes from at or above the line to below it (at the line is not below; staying below
/// asks nothing more, and a recovery above the line arms it again).
pub fn recharge_due(recharge: Option<Recharge>, before: i64, after: i64) -> Option<Recharge> {
    let r = recharge?;
    let crossing = balance_crossing(Some(r.below), before, after);
    (crossing == Some(BalanceCrossing::Low)).then_some(r)
}

/// A refund of `amount` from a top-up of `top_up_micros` of which `refunded_micros` was
/// refunded already: never more than is left.
pub fn check_refund(
    top_up_micros: i64,
    refunded_micros: i64,
    amount: Micros,
) -> Result<(), Refusal> {
    if amount.0 > top_up_micros - refunded_micros {
        return Err(Refusal::RefundExceedsTopUp);
    }
    Ok(())
}

/// What a refund of a top-up asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundAsk {
    /// This amount, refused when the top-up has less left to refund.
    Exactly(Micros),
    /// This amount, or what the top-up has left when that is less (a provider's
    /// chargeback takes what it takes).
    AtMost(Micros),
    /// Whatever brings the top-up's refunds to this total (a provider that reports the
    /// amount refunded so far), never more than it has left.
    ToTotal(Micros),
}

impl RefundAsk {
    /// The amount the request names.
    pub fn amount(self) -> Micros {
        match self {
            RefundAsk::Exactly(m) | RefundAsk::AtMost(m) | RefundAsk::ToTotal(m) => m,
        }
    }
}

/// What a refund takes from a top-up of `top_up_micros` of which `refunded_micros` was
/// refunded already: `None` when an [`RefundAsk::AtMost`] or [`RefundAsk::ToTotal`] finds
/// nothing left to take.
pub fn refund_amount(
    top_up_micros: i64,
    refunded_micros: i64,
    ask: RefundAsk,
) -> Result<Option<Micros>, Refusal> {
    let left = top_up_micros - refunded_micros;
    let amount = match ask {
        RefundAsk::Exactly(amount) => {
            check_refund(top_up_micros, refunded_micros, amount)?;
            return Ok(Some(amount));
        }
        RefundAsk::AtMost(most) => most.0.min(left),
        RefundAsk::ToTotal(total) => (total.0 - refunded_micros).min(left),
    };
    Ok((amount > 0).then_some(Micros(amount)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::tests_support::snapshot;

    #[test]
    fn a_recharge_is_asked_once_per_fall_below_its_line() {
        let r = Some(Recharge {
            below: Micros(5_000_000),
            amount: Micros(20_000_000),
        });
        assert_eq!(
            recharge_due(r, 6_000_000, 5_000_000),
            None,
            "at the line is not below"
        );
        assert_eq!(recharge_due(r, 5_000_000, 4_999_999), r);
        assert_eq!(
            recharge_due(r, 4_999_999, 1_000_000),
            None,
            "still below: asked once"
        );
        assert_eq!(
            recharge_due(r, 1_000_000, 9_000_000),
            None,
            "a recovery asks nothing"
        );
        assert_eq!(recharge_due(r, 9_000_000, -1), r, "past zero in one step");
        assert_eq!(recharge_due(None, 9_000_000, -1), None);
        let bad = Recharge {
            below: Micros(-1),
            amount: Micros(1),
        };
        assert!(bad.check().is_err());
        let bad = Recharge {
            below: Micros(0),
            amount: Micros(0),
        };
        assert!(bad.check().is_err());
    }

    #[test]
    fn a_refund_asked_to_a_total_takes_the_difference_and_nothing_past_the_top_up() {
        let ask = |refunded, a| refund_amount(1_000, refunded, a);
        assert_eq!(
            ask(0, RefundAsk::ToTotal(Micros(300))),
            Ok(Some(Micros(300)))
        );
        assert_eq!(ask(300, RefundAsk::ToTotal(Micros(300))), Ok(None));
        assert_eq!(
            ask(300, RefundAsk::ToTotal(Micros(100))),
            Ok(None),
            "an older total"
        );
        assert_eq!(
            ask(300, RefundAsk::ToTotal(Micros(1_500))),
            Ok(Some(Micros(700)))
        );
        assert_eq!(
            ask(300, RefundAsk::AtMost(Micros(500))),
            Ok(Some(Micros(500)))
        );
        assert_eq!(
            ask(800, RefundAsk::AtMost(Micros(500))),
            Ok(Some(Micros(200)))
        );
        assert_eq!(ask(1_000, RefundAsk::AtMost(Micros(500))), Ok(None));
        assert_eq!(
            ask(800, RefundAsk::Exactly(Micros(200))),
            Ok(Some(Micros(200)))
        );
        assert_eq!(
            ask(800, RefundAsk::Exactly(Micros(201))),
            Err(Refusal::RefundExceedsTopUp)
        );
    }

    #[test]
    fn a_low_balance_line_is_crossed_once_each_way_and_equality_is_not_low() {
        let line = Some(Micros(2_000_000));
        let cross = |before, after| balance_crossing(line, before, after);
        assert_eq!(cross(2_000_000, 1_999_999), Some(BalanceCrossing::Low));
        assert_eq!(
            cross(3_000_000, 2_000_000),
            None,
            "at the line is not below it"
        );
        assert_eq!(
            cross(1_999_999, 2_000_000),
            Some(BalanceCrossing::Recovered)
        );
        assert_eq!(cross(1_000_000, 500_000), None, "already below");
        assert_eq!(cross(5_000_000, 2_500_000), None, "still above");
        assert_eq!(cross(-1, 9_000_000), Some(BalanceCrossing::Recovered));
        assert_eq!(balance_crossing(None, 5, -5), None, "no line, no warning");
        assert_eq!(BalanceCrossing::Low.event_type(), "account.low_balance");
    }

    #[test]
    fn request_amounts_are_positive_and_bounded() {
        assert!(check_request_amount(Micros(1)).is_ok());
        assert!(check_request_amount(MAX_REQUEST_AMOUNT).is_ok());
        assert!(matches!(
            check_request_amount(Micros(0)),
            Err(Refusal::InvalidRequest(_))
        ));
        assert!(matches!(
            check_request_amount(Micros(-1)),
            Err(Refusal::InvalidRequest(_))
        ));
        assert_eq!(
            check_request_amount(Micros(MAX_REQUEST_AMOUNT.0 + 1)),
            Err(Refusal::AmountOutOfRange)
        );
    }

    #[test]
    fn metered_usage_is_seconds_times_the_rate() {
        let card = RateCard::builtin();
        let (meter, rate) = card
            .meters
            .iter()
            .next()
            .expect("the built-in card has meters");
        let usage = Usage::Metered {
            meter: meter.clone(),
            seconds: 30,
        };
        assert_eq!(price(&card, &usage), Ok(Micros(rate.0 * 30)));
        assert_eq!(price(&card, &Usage::Amount(Micros(7))), Ok(Micros(7)));
        let unknown = Usage::Metered {
            meter: "nope".into(),
            seconds: 1,
        };
        assert_eq!(
            price(&card, &unknown),
            Err(Refusal::UnknownMeter(
                "nope".into(),
                crate::refusal::Known(vec!["linux-large".into(), "linux-small".into()])
            ))
        );
        for seconds in [0, -1] {
            let bad = Usage::Metered {
                meter: meter.clone(),
                seconds,
            };
            assert!(matches!(
                price(&card, &bad),
                Err(Refusal::InvalidRequest(_))
            ));
        }
        let huge = Usage::Metered {
            meter: meter.clone(),
            seconds: i64::MAX,
        };
        assert!(matches!(
            price(&card, &huge),
            Err(Refusal::InvalidRequest(_))
        ));
        let just_over = Usage::Metered {
            meter: meter.clone(),
            seconds: MAX_REQUEST_AMOUNT.0 / rate.0 + 1,
        };
        assert!(matches!(
            price(&card, &just_over),
            Err(Refusal::InvalidRequest(_))
        ));
        let at_most = Usage::Metered {
            meter: meter.clone(),
            seconds: MAX_REQUEST_AMOUNT.0 / rate.0,
        };
        assert!(price(&card, &at_most).is_ok());
    }

    #[test]
    fn metered_usage_may_cost_exactly_the_largest_request() {
        let mut card = RateCard::builtin();
        card.meters.insert("one".into(), Micros(1));
        let usage = |seconds| Usage::Metered {
            meter: "one".into(),
            seconds,
        };
        assert_eq!(
            price(&card, &usage(MAX_REQUEST_AMOUNT.0)),
            Ok(MAX_REQUEST_AMOUNT)
        );
        assert_eq!(
            price(&card, &usage(MAX_REQUEST_AMOUNT.0 + 1)),
            Err(Refusal::InvalidRequest(
                "usage.seconds: too large for this meter".into()
            ))
        );
        assert_eq!(price(&card, &usage(1)), Ok(Micros(1)));
    }

    #[test]
    fn each_move_sets_its_own_counters() {
        let m = Micros(5);
        assert_eq!(
            [
                MoneyMove::Credit(m),
                MoneyMove::Debit(m),
                MoneyMove::Capture(m),
                MoneyMove::Refund(m)
            ]
            .map(|c| (c.delta_micros(), c.credited_micros(), c.spent_micros())),
            [(5, 5, 0), (-5, 0, 5), (-5, 0, 5), (-5, 0, 0)]
        );
    }

    #[test]
    fn a_negative_balance_suspends_once_and_only_a_credit_clears_it() {
        let mut snap = snapshot(100);
        let after = change_money(&snap, MoneyMove::Debit(Micros(101))).unwrap();
        assert_eq!((after.balance_micros, after.total_spent_micros), (-1, 101));
        assert_eq!(after.suspension, Suspension::Suspend);
        assert_eq!(after.suspended_at, Some(snap.now));
        snap.apply_money(&after);
        snap.now += 10;
        let again = change_money(&snap, MoneyMove::Capture(Micros(1))).unwrap();
        assert_eq!(again.suspension, Suspension::Unchanged);
        assert_eq!(
            again.suspended_at,
            Some(snap.now - 10),
            "the first time is kept"
        );
        let refund_to_zero = change_money(&snap, MoneyMove::Refund(Micros(0))).unwrap();
        assert_eq!(refund_to_zero.suspension, Suspension::Unchanged);
        let credit = change_money(&snap, MoneyMove::Credit(Micros(1))).unwrap();
        assert_eq!(
            (credit.balance_micros, credit.total_credited_micros),
            (0, 101)
        );
        assert_eq!(
            (credit.suspension, credit.suspended_at),
            (Suspension::Unsuspend, None)
        );
    }

    #[test]
    fn the_balance_stays_within_two_to_the_53() {
        let snap = snapshot(MAX_BALANCE.0 - 1);
        assert!(change_money(&snap, MoneyMove::Credit(Micros(1))).is_ok());
        assert_eq!(
            change_money(&snap, MoneyMove::Credit(Micros(2))),
            Err(Refusal::AmountOutOfRange)
        );
        let low = snapshot(-MAX_BALANCE.0 + 1);
        assert!(change_money(&low, MoneyMove::Refund(Micros(1))).is_ok());
        assert_eq!(
            change_money(&low, MoneyMove::Refund(Micros(2))),
            Err(Refusal::AmountOutOfRange)
        );
        let mut spent = snapshot(0);
        spent.total_spent = i64::MAX;
        assert_eq!(
            change_money(&spent, MoneyMove::Debit(Micros(1))),
            Err(Refusal::AmountOutOfRange)
        );
        let mut credited = snapshot(0);
        credited.total_credited = i64::MAX;
        assert_eq!(
            change_money(&credited, MoneyMove::Credit(Micros(1))),
            Err(Refusal::AmountOutOfRange)
        );
    }

    #[test]
    fn a_refund_never_exceeds_what_is_left_of_the_top_up() {
        assert!(check_refund(10, 4, Micros(6)).is_ok());
        assert_eq!(
            check_refund(10, 4, Micros(7)),
            Err(Refusal::RefundExceedsTopUp)
        );
        assert!(check_refund(10, 0, Micros(10)).is_ok());
    }
}
