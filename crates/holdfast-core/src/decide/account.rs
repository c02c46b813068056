//! Rules about an account as a whole: its status, the pockets its plan adds, and when
//! the reactivation pass refills an idle account.

use super::{AccountSnapshot, MICROS_PER_SECOND, Refill, Timestamp};
use crate::ratecard::RateCard;

/// What an account is, in one word: the state that stops the most, first. An account
/// may be in several at once (blocked and suspended); [`AccountStatus::of`] names the
/// one shown, [`AccountStatus::holds_for`] says whether a listing filtered by a status
/// lists it (under each it is in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccountStatus {
    /// None of the others.
    Active,
    /// Its balance went negative: no new work until a credit brings it back.
    Suspended,
    /// An operator paused its work.
    Blocked,
    /// An operator banned it: no new work, no debits.
    Banned,
}

/// The marks an account's row carries, each the time it was set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatusMarks {
    pub suspended_at: Option<Timestamp>,
    pub blocked_at: Option<Timestamp>,
    pub banned_at: Option<Timestamp>,
}

impl AccountStatus {
    pub const ALL: [AccountStatus; 4] = [
        AccountStatus::Active,
        AccountStatus::Suspended,
        AccountStatus::Blocked,
        AccountStatus::Banned,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AccountStatus::Active => "active",
            AccountStatus::Suspended => "suspended",
            AccountStatus::Blocked => "blocked",
            AccountStatus::Banned => "banned",
        }
    }

    pub fn parse(text: &str) -> Option<AccountStatus> {
        AccountStatus::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// The one status shown for these marks: banned, then blocked, then suspended.
    pub fn of(marks: StatusMarks) -> AccountStatus {
        [
            AccountStatus::Banned,
            AccountStatus::Blocked,
            AccountStatus::Suspended,
        ]
        .into_iter()
        .find(|s| s.holds_for(marks))
        .unwrap_or(AccountStatus::Active)
    }

    /// Whether an account with these marks is in this status (a listing filtered by it
    /// lists the account; `list_accounts.sql` says the same in SQL, and
    /// `tests/accounts.rs` checks the two agree on every combination).
    pub fn holds_for(self, marks: StatusMarks) -> bool {
        match self {
            AccountStatus::Active => {
                marks.suspended_at.is_none()
                    && marks.blocked_at.is_none()
                    && marks.banned_at.is_none()
            }
            AccountStatus::Suspended => marks.suspended_at.is_some(),
            AccountStatus::Blocked => marks.blocked_at.is_some(),
            AccountStatus::Banned => marks.banned_at.is_some(),
        }
    }
}

/// A pocket of the account's plan that the account lacks, as it is to be added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPocket {
    pub pocket: String,
    /// What it starts with (a refill entry explains it when above zero).
    pub remaining: i64,
}

impl AccountSnapshot {
    /// The pockets of the account's plan it lacks: a new account's start full, a pocket
    /// a plan change adds starts empty and fills at its first refill (so a plan change
    /// back and forth cannot refill a pocket early).
    pub fn missing_pockets(&self, card: &RateCard, new_account: bool) -> Vec<NewPocket> {
        let Some(plan) = card.plans.get(&self.plan) else {
            return Vec::new();
        };
        plan.allowances
            .iter()
            .filter(|(pocket, _)| !self.allowances.contains_key(*pocket))
            .map(|(pocket, quota)| NewPocket {
                pocket: pocket.clone(),
                remaining: if new_account { *quota } else { 0 },
            })
            .collect()
    }

    /// The refills the reactivation pass applies to this account: all its due refills,
    /// when it is neither blocked nor banned, was active once, has been idle at least the
    /// card's `reactivate_after_seconds`, and at least one due pocket is below its quota.
    /// `None` when it does not qualify.
    pub fn reactivation_refills(&self, card: &RateCard) -> Option<Vec<Refill>> {
        let idle_micros = card.timeouts.reactivate_after_seconds * MICROS_PER_SECOND;
        let idle = self
            .last_active_at
            .is_some_and(|t| t <= self.now - idle_micros);
        if self.blocked_at.is_some() || self.banned_at.is_some() || !idle {
            return None;
        }
        let refills = self.due_refills(card);
        refills.iter().any(|r| r.delta > 0).then_some(refills)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::snapshot;
    use super::*;

    fn marks(suspended: bool, blocked: bool, banned: bool) -> StatusMarks {
        StatusMarks {
            suspended_at: suspended.then_some(1),
            blocked_at: blocked.then_some(2),
            banned_at: banned.then_some(3),
        }
    }

    #[test]
    fn the_status_shown_is_the_one_that_stops_the_most_and_is_listed_under_each() {
        let cases = [
            ((false, false, false), AccountStatus::Active),
            ((true, false, false), AccountStatus::Suspended),
            ((false, true, false), AccountStatus::Blocked),
            ((true, true, false), AccountStatus::Blocked),
            ((false, false, true), AccountStatus::Banned),
            ((true, false, true), AccountStatus::Banned),
            ((false, true, true), AccountStatus::Banned),
            ((true, true, true), AccountStatus::Banned),
        ];
        for ((suspended, blocked, banned), shown) in cases {
            let m = marks(suspended, blocked, banned);
            assert_eq!(AccountStatus::of(m), shown, "{m:?}");
            // The status shown is always one it is listed under.
            assert!(shown.holds_for(m), "{m:?}");
            let listed: Vec<bool> = AccountStatus::ALL.map(|s| s.holds_for(m)).to_vec();
            let active = !(suspended || blocked || banned);
            assert_eq!(listed, vec![active, suspended, blocked, banned], "{m:?}");
        }
        for s in AccountStatus::ALL {
            assert_eq!(AccountStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(AccountStatus::parse("Active"), None);
    }

    #[test]
    fn a_new_account_gets_its_pockets_full_and_a_plan_change_adds_them_empty() {
        let card = RateCard::builtin();
        let mut s = snapshot(0);
        let quotas = card.plans["free"].allowances.clone();
        assert!(!quotas.is_empty(), "the built-in free plan has pockets");
        assert_eq!(s.missing_pockets(&card, true), vec![], "it has them all");
        let lacking = quotas.keys().next().unwrap().clone();
        s.allowances.remove(&lacking);
        let full = NewPocket {
            pocket: lacking.clone(),
            remaining: quotas[&lacking],
        };
        assert!(full.remaining > 0);
        assert_eq!(s.missing_pockets(&card, true), vec![full]);
        let empty = NewPocket {
            pocket: lacking,
            remaining: 0,
        };
        assert_eq!(s.missing_pockets(&card, false), vec![empty]);
        s.plan = "no such plan".into();
        assert_eq!(s.missing_pockets(&card, true), vec![]);
    }

    #[test]
    fn only_an_idle_unblocked_account_with_a_pocket_to_fill_is_reactivated() {
        let card = RateCard::builtin();
        let idle = card.timeouts.reactivate_after_seconds * MICROS_PER_SECOND;
        let every = card.allowances.values().copied().max().unwrap() * MICROS_PER_SECOND;
        // Every pocket used up, its window long past, the account idle just long enough.
        let mut s = snapshot(0);
        s.now = every.max(idle) + 10;
        for p in s.allowances.values_mut() {
            p.remaining = 0;
        }
        s.last_active_at = Some(s.now - idle);
        let refills = s.reactivation_refills(&card).expect("due");
        assert_eq!(refills, s.due_refills(&card));
        assert!(refills.iter().all(|r| r.delta > 0));
        // Not idle long enough, never active, blocked, banned: none.
        let mut busy = s.clone();
        busy.last_active_at = Some(s.now - idle + 1);
        assert_eq!(busy.reactivation_refills(&card), None);
        let mut never = s.clone();
        never.last_active_at = None;
        assert_eq!(never.reactivation_refills(&card), None);
        let mut blocked = s.clone();
        blocked.blocked_at = Some(1);
        assert_eq!(blocked.reactivation_refills(&card), None);
        let mut banned = s.clone();
        banned.banned_at = Some(1);
        assert_eq!(banned.reactivation_refills(&card), None);
        // Every due pocket full already: nothing to do.
        let mut full = s.clone();
        for (name, p) in full.allowances.iter_mut() {
            p.remaining = card.plans["free"].allowances[name];
        }
        assert_eq!(full.reactivation_refills(&card), None);
    }
}
