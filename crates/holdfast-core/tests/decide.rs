//! Pins every decision in `decide` through the public API, each with the exact value a
//! changed operator or a changed return would alter. Integration tests, so they live apart
//! from `src/decide.rs`.

use std::collections::BTreeMap;

use holdfast_core::decide::{
    CancelDecision, CaptureLine, JobStatus, MICROS_PER_SECOND, PocketAmount, Refill,
    SubmitDecision, Suspension, actual_decrease, check_debit, decide_cancel, decide_submit,
    resolve_capture, suspension_after,
};
use holdfast_core::ratecard::{CancelInProgress, Kind, KindTimeouts, TakeLine};
use holdfast_core::{AccountSnapshot, AllowancePocket, MONEY, Micros, RateCard, Refusal};
use proptest::prelude::*;

/// The built-in card's allowance window: 86 400 s, in micros.
const DAY: i64 = 86_400 * MICROS_PER_SECOND;
/// The cycle start used below: not 0, so `now − start` and `now + start` differ.
const START: i64 = 1_000;

fn pocket(remaining: i64, held: i64) -> AllowancePocket {
    AllowancePocket {
        remaining,
        held,
        cycle_started_at: START,
    }
}

/// A free-plan account with `balance` money and `images` daily images (10 messages).
fn snap(balance: i64, images: i64) -> AccountSnapshot {
    let mut allowances = BTreeMap::new();
    allowances.insert("daily_images".to_string(), pocket(images, 0));
    allowances.insert("daily_messages".to_string(), pocket(10, 0));
    AccountSnapshot {
        plan: "free".into(),
        plan_until: None,
        max_concurrent_jobs: None,
        balance,
        held: 0,
        total_credited: balance,
        total_spent: 0,
        suspended_at: None,
        blocked_at: None,
        banned_at: None,
        created_at: 0,
        last_active_at: None,
        recharge: None,
        allowances,
        spend: Default::default(),
        blocks: Vec::new(),
        now: START + 1,
    }
}

fn hold_line(pocket: &str, amount: i64) -> PocketAmount {
    PocketAmount {
        pocket: pocket.into(),
        amount,
        blocks: Vec::new(),
    }
}

fn money_kind(amount: i64) -> Kind {
    Kind {
        lane: "gpu".into(),
        take: vec![TakeLine {
            pocket: MONEY.into(),
            amount,
        }],
        free_for: vec![],
        cancel_in_progress: CancelInProgress::Refuse,
        timeouts: KindTimeouts {
            max_run_seconds: None,
            stale_after_seconds: 1800,
            queued_expires_after_seconds: None,
        },
    }
}

/// The built-in card with the premium plan's buffer set to 7.00 (free keeps 1.00).
fn card_with_premium_buffer() -> RateCard {
    let mut card = RateCard::builtin();
    card.plans.get_mut("premium").unwrap().buffer = Micros(7_000_000);
    card
}

// ---- the plan in force ----

#[test]
fn plan_until_expires_at_its_exact_moment() {
    let card = RateCard::builtin();
    let mut s = snap(0, 0);
    s.plan = "premium".into();
    s.plan_until = Some(s.now + 1);
    assert_eq!(s.effective_plan(&card).0, "premium");
    s.plan_until = Some(s.now);
    assert_eq!(s.effective_plan(&card).0, "free");
    s.plan_until = Some(s.now - 1);
    assert_eq!(s.effective_plan(&card).0, "free");
    s.plan_until = None;
    assert_eq!(s.effective_plan(&card).0, "premium");
}

#[test]
fn an_unknown_plan_reads_as_the_default_plan() {
    let card = RateCard::builtin();
    let mut s = snap(0, 0);
    s.plan = "gold".into();
    let (name, plan) = s.effective_plan(&card);
    assert_eq!(name, "free");
    assert_eq!(plan, &card.plans["free"]);
}

#[test]
fn the_buffer_is_the_effective_plans() {
    let card = card_with_premium_buffer();
    let mut s = snap(0, 0);
    assert_eq!(s.buffer(&card), Micros(1_000_000));
    s.plan = "premium".into();
    assert_eq!(s.buffer(&card), Micros(7_000_000));
}

#[test]
fn the_concurrency_limit_is_the_accounts_else_the_plans() {
    let card = RateCard::parse(include_str!("../../../examples/ci-runners.toml")).unwrap();
    let mut s = snap(0, 0);
    s.plan = "team".into();
    assert_eq!(s.concurrency_limit(&card), 4);
    s.max_concurrent_jobs = Some(7);
    assert_eq!(s.concurrency_limit(&card), 7);
}

#[test]
fn available_money_is_balance_less_held() {
    let mut s = snap(5_000_000, 0);
    s.held = 3_000_000;
    assert_eq!(s.available_money(), 2_000_000);
    s.balance = -1_000_000;
    assert_eq!(s.available_money(), -4_000_000);
}

// ---- allowance refills ----

#[test]
fn a_pocket_refills_exactly_when_its_window_has_passed() {
    let card = RateCard::builtin();
    let mut s = snap(0, 1);
    s.now = START + DAY - 1;
    assert_eq!(s.due_refills(&card), vec![]);
    s.now = START + DAY;
    assert_eq!(
        s.due_refills(&card),
        vec![
            Refill {
                pocket: "daily_images".into(),
                quota: 3,
                delta: 2,
            },
            Refill {
                pocket: "daily_messages".into(),
                quota: 10,
                delta: 0,
            },
        ]
    );
}

#[test]
fn a_refill_delta_is_negative_after_a_downgrade() {
    let card = RateCard::builtin();
    let mut s = snap(0, 10); // 10 images left from premium, now on free (quota 3)
    s.allowances.remove("daily_messages");
    s.now = START + 2 * DAY;
    assert_eq!(
        s.due_refills(&card),
        vec![Refill {
            pocket: "daily_images".into(),
            quota: 3,
            delta: -7,
        }]
    );
}

#[test]
fn pockets_the_plan_or_the_card_lack_are_never_refilled() {
    let card = RateCard::builtin();
    let mut s = snap(0, 0);
    s.plan = "premium".into(); // premium has daily_images only
    s.allowances.insert("weekly".into(), pocket(0, 0)); // no such pocket on the card
    s.now = START + 10 * DAY;
    let pockets: Vec<String> = s.due_refills(&card).into_iter().map(|r| r.pocket).collect();
    assert_eq!(pockets, vec!["daily_images".to_string()]);
}

#[test]
fn applying_a_refill_sets_the_quota_and_restarts_the_window() {
    let card = RateCard::builtin();
    let mut s = snap(0, 1);
    s.now = START + DAY + 5;
    let refills = s.due_refills(&card);
    s.apply_refills(&refills);
    assert_eq!(s.allowances["daily_images"].remaining, 3);
    assert_eq!(
        s.allowances["daily_images"].cycle_started_at,
        START + DAY + 5
    );
    assert_eq!(s.allowances["daily_messages"].remaining, 10);
    assert_eq!(s.due_refills(&card), vec![]);
    // a refill for a pocket the account does not have changes nothing
    let before = s.clone();
    s.apply_refills(&[Refill {
        pocket: "weekly".into(),
        quota: 5,
        delta: 5,
    }]);
    assert_eq!(s, before);
}

#[test]
fn the_next_refill_time_is_the_window_start_plus_the_interval() {
    let card = RateCard::builtin();
    let s = snap(0, 0);
    assert_eq!(s.refills_at(&card, "daily_images"), Some(86_400_001_000));
    assert_eq!(s.refills_at(&card, "daily_images"), Some(START + DAY));
    assert_eq!(s.refills_at(&card, "weekly"), None);
    assert_eq!(s.refills_at(&card, MONEY), None);
}

// ---- debits and suspension ----

#[test]
fn a_debit_may_reach_the_buffer_exactly_and_not_a_micro_past_it() {
    let buffer = Micros(1_000_000);
    let mut s = snap(500_000, 0);
    s.held = 100_000;
    assert_eq!(check_debit(&s, Micros(1_400_000), buffer), Ok(()));
    assert_eq!(
        check_debit(&s, Micros(1_400_001), buffer),
        Err(Refusal::InsufficientFunds)
    );
    // inside the buffer (after < 0 but above −buffer) passes; with no buffer it does not
    assert_eq!(check_debit(&s, Micros(900_000), buffer), Ok(()));
    assert_eq!(
        check_debit(&s, Micros(900_000), Micros::ZERO),
        Err(Refusal::InsufficientFunds)
    );
    assert_eq!(check_debit(&s, Micros(400_000), Micros::ZERO), Ok(()));
    s.banned_at = Some(1);
    assert_eq!(
        check_debit(&s, Micros(1), buffer),
        Err(Refusal::AccountBanned),
        "a banned account is not debited, whatever its balance"
    );
}

#[test]
fn a_debit_that_overflows_is_refused() {
    let mut s = snap(i64::MIN + 1, 0);
    s.held = 1;
    assert_eq!(
        check_debit(&s, Micros(1), Micros(i64::MAX)),
        Err(Refusal::InsufficientFunds)
    );
}

#[test]
fn suspension_follows_the_balance_and_only_a_credit_clears_it() {
    use Suspension::*;
    for (suspended, after, credit, expected) in [
        (None, -1, false, Suspend),
        (None, -1, true, Suspend),
        (None, 0, false, Unchanged),
        (None, 1, true, Unchanged),
        (Some(9), -1, true, Unchanged),
        (Some(9), -1, false, Unchanged),
        (Some(9), 0, true, Unsuspend),
        (Some(9), 5, true, Unsuspend),
        (Some(9), 0, false, Unchanged),
        (Some(9), 5, false, Unchanged),
    ] {
        assert_eq!(
            suspension_after(suspended, after, credit),
            expected,
            "{suspended:?} {after} {credit}"
        );
    }
}

// ---- submit ----

#[test]
fn submit_holds_an_allowance_first_then_money() {
    let card = RateCard::builtin();
    let image = &card.kinds["image"];
    assert_eq!(
        decide_submit(&snap(1_000_000, 1), 0, image, &card),
        Ok(SubmitDecision {
            lane: "image".into(),
            hold: vec![hold_line("daily_images", 1)],
        })
    );
    assert_eq!(
        decide_submit(&snap(1_000_000, 0), 0, image, &card),
        Ok(SubmitDecision {
            lane: "image".into(),
            hold: vec![hold_line(MONEY, 40_000)],
        })
    );
}

#[test]
fn submit_takes_a_pocket_holding_exactly_the_amount() {
    let card = RateCard::builtin();
    let image = &card.kinds["image"];
    assert_eq!(
        decide_submit(&snap(40_000, 0), 0, image, &card).map(|d| d.hold),
        Ok(vec![hold_line(MONEY, 40_000)])
    );
    assert_eq!(
        decide_submit(&snap(39_999, 0), 0, image, &card),
        Err(Refusal::InsufficientFunds)
    );
    let kind = money_kind(40_000);
    let mut s = snap(100_000, 0);
    s.held = 60_000;
    assert_eq!(
        decide_submit(&s, 0, &kind, &card).map(|d| d.hold),
        Ok(vec![hold_line(MONEY, 40_000)])
    );
    s.held = 60_001;
    assert_eq!(
        decide_submit(&s, 0, &kind, &card),
        Err(Refusal::InsufficientFunds)
    );
}

#[test]
fn submit_counts_only_the_unheld_part_of_an_allowance() {
    let card = RateCard::builtin();
    let image = &card.kinds["image"];
    let mut s = snap(1_000_000, 3);
    s.allowances.get_mut("daily_images").unwrap().held = 2;
    assert_eq!(
        decide_submit(&s, 0, image, &card).map(|d| d.hold),
        Ok(vec![hold_line("daily_images", 1)])
    );
    s.allowances.get_mut("daily_images").unwrap().held = 3;
    assert_eq!(
        decide_submit(&s, 0, image, &card).map(|d| d.hold),
        Ok(vec![hold_line(MONEY, 40_000)])
    );
    // money never counts as an allowance: an account without the pocket pays in money
    s.allowances.remove("daily_images");
    assert_eq!(
        decide_submit(&s, 0, image, &card).map(|d| d.hold),
        Ok(vec![hold_line(MONEY, 40_000)])
    );
}

#[test]
fn the_refusal_names_the_last_pocket_tried() {
    let card = RateCard::builtin();
    assert_eq!(
        decide_submit(&snap(0, 0), 0, &card.kinds["image"], &card),
        Err(Refusal::InsufficientFunds)
    );
    let mut s = snap(1_000_000, 0);
    s.allowances.get_mut("daily_messages").unwrap().remaining = 0;
    assert_eq!(
        decide_submit(&s, 0, &card.kinds["text"], &card),
        Err(Refusal::InsufficientAllowance)
    );
}

#[test]
fn free_kinds_and_empty_takes_hold_nothing() {
    let card = RateCard::builtin();
    let mut s = snap(0, 0);
    // the free plan is not in text's free_for: it holds a message
    assert_eq!(
        decide_submit(&s, 0, &card.kinds["text"], &card),
        Ok(SubmitDecision {
            lane: "text".into(),
            hold: vec![hold_line("daily_messages", 1)],
        })
    );
    // an empty take holds nothing on any plan
    assert_eq!(
        decide_submit(&s, 0, &card.kinds["ci"], &card),
        Ok(SubmitDecision {
            lane: "runners".into(),
            hold: vec![],
        })
    );
    s.plan = "premium".into();
    s.allowances.get_mut("daily_messages").unwrap().remaining = 0;
    assert_eq!(
        decide_submit(&s, 0, &card.kinds["text"], &card),
        Ok(SubmitDecision {
            lane: "text_priority".into(),
            hold: vec![],
        })
    );
}

#[test]
fn submit_refuses_in_order_banned_blocked_suspended_busy_funds() {
    let card = RateCard::builtin();
    let video = &card.kinds["video"];
    let mut s = snap(0, 0);
    s.banned_at = Some(1);
    s.blocked_at = Some(1);
    s.suspended_at = Some(1);
    assert_eq!(
        decide_submit(&s, 1, video, &card),
        Err(Refusal::AccountBanned)
    );
    s.banned_at = None;
    s.suspended_at = Some(1);
    assert_eq!(
        decide_submit(&s, 1, video, &card),
        Err(Refusal::AccountBlocked)
    );
    s.blocked_at = None;
    assert_eq!(
        decide_submit(&s, 1, video, &card),
        Err(Refusal::AccountSuspended)
    );
    s.suspended_at = None;
    assert_eq!(decide_submit(&s, 1, video, &card), Err(Refusal::Busy));
    assert_eq!(
        decide_submit(&s, 0, video, &card),
        Err(Refusal::InsufficientFunds)
    );
}

#[test]
fn submit_is_busy_exactly_at_the_concurrency_limit() {
    let card = RateCard::builtin();
    let mut s = snap(10_000_000, 0);
    s.max_concurrent_jobs = Some(3);
    let video = &card.kinds["video"];
    assert!(decide_submit(&s, 2, video, &card).is_ok());
    assert_eq!(decide_submit(&s, 3, video, &card), Err(Refusal::Busy));
    assert_eq!(decide_submit(&s, 4, video, &card), Err(Refusal::Busy));
}

// ---- capture ----

fn two_pocket_hold() -> Vec<PocketAmount> {
    vec![hold_line("daily_images", 2), hold_line(MONEY, 500_000)]
}

fn line(pocket: &str, held: i64, capture: i64) -> CaptureLine {
    CaptureLine {
        pocket: pocket.into(),
        held,
        capture,
    }
}

#[test]
fn no_capture_list_captures_the_whole_hold() {
    assert_eq!(
        resolve_capture(&two_pocket_hold(), None),
        Ok(vec![
            line("daily_images", 2, 2),
            line(MONEY, 500_000, 500_000)
        ])
    );
    assert_eq!(resolve_capture(&[], None), Ok(vec![]));
}

#[test]
fn a_capture_exactly_equal_to_the_hold_is_accepted() {
    let hold = two_pocket_hold();
    assert_eq!(
        resolve_capture(&hold, Some(&[hold_line(MONEY, 500_000)])),
        Ok(vec![
            line("daily_images", 2, 0),
            line(MONEY, 500_000, 500_000)
        ])
    );
    assert!(matches!(
        resolve_capture(&hold, Some(&[hold_line(MONEY, 500_001)])),
        Err(Refusal::InvalidCapture(_))
    ));
}

#[test]
fn a_capture_of_zero_is_accepted_and_a_negative_one_refused() {
    let hold = two_pocket_hold();
    assert_eq!(
        resolve_capture(&hold, Some(&[hold_line(MONEY, 0)])),
        Ok(vec![line("daily_images", 2, 0), line(MONEY, 500_000, 0)])
    );
    assert!(matches!(
        resolve_capture(&hold, Some(&[hold_line(MONEY, -1)])),
        Err(Refusal::InvalidCapture(_))
    ));
}

#[test]
fn each_listed_pocket_is_captured_and_the_others_released() {
    let hold = two_pocket_hold();
    assert_eq!(
        resolve_capture(
            &hold,
            Some(&[hold_line(MONEY, 123), hold_line("daily_images", 1)])
        ),
        Ok(vec![line("daily_images", 2, 1), line(MONEY, 500_000, 123)])
    );
    assert_eq!(
        resolve_capture(&hold, Some(&[])),
        Ok(vec![line("daily_images", 2, 0), line(MONEY, 500_000, 0)])
    );
}

#[test]
fn a_capture_refuses_a_pocket_listed_twice_or_not_held() {
    let hold = two_pocket_hold();
    assert_eq!(
        resolve_capture(&hold, Some(&[hold_line(MONEY, 1), hold_line(MONEY, 1)])),
        Err(Refusal::InvalidCapture(
            "capture: pocket \"money\" listed twice".into()
        ))
    );
    assert_eq!(
        resolve_capture(&hold, Some(&[hold_line("daily_messages", 1)])),
        Err(Refusal::InvalidCapture(
            "capture: pocket \"daily_messages\" is not held by this job".into()
        ))
    );
    assert_eq!(
        resolve_capture(&hold, Some(&[hold_line("daily_images", 3)])),
        Err(Refusal::InvalidCapture(
            "capture: \"daily_images\" amount is above the hold".into()
        ))
    );
}

#[test]
fn money_decreases_by_the_capture_and_an_allowance_floors_at_zero() {
    for (pocket, amount, capture, decrease) in [
        (MONEY, 100, 30, 30),
        (MONEY, 10, 30, 30),
        (MONEY, -5, 30, 30),
        ("daily_images", 3, 2, 2),
        ("daily_images", 3, 1, 1),
        ("daily_images", 5, 2, 2),
        ("daily_images", 3, 5, 3),
        ("daily_images", 0, 1, 0),
        ("daily_images", 4, 0, 0),
    ] {
        assert_eq!(
            actual_decrease(pocket, amount, capture),
            decrease,
            "{pocket} {amount} {capture}"
        );
    }
}

// ---- job status and cancel ----

const STATUSES: [(JobStatus, &str, bool); 6] = [
    (JobStatus::Queued, "queued", true),
    (JobStatus::InProgress, "in_progress", true),
    (JobStatus::Succeeded, "succeeded", false),
    (JobStatus::Failed, "failed", false),
    (JobStatus::Canceled, "canceled", false),
    (JobStatus::Expired, "expired", false),
];

#[test]
fn job_statuses_have_one_name_each_and_two_are_open() {
    for (status, name, open) in STATUSES {
        assert_eq!(status.as_str(), name);
        assert_eq!(JobStatus::parse(name), Some(status));
        assert_eq!(status.is_open(), open, "{name}");
    }
    assert_eq!(JobStatus::parse("Queued"), None);
    assert_eq!(JobStatus::parse(""), None);
}

#[test]
fn cancel_follows_the_contract_for_every_status() {
    use CancelInProgress::*;
    for (status, policy, expected) in [
        (JobStatus::Queued, Refuse, Ok(CancelDecision::CancelNow)),
        (
            JobStatus::Queued,
            Cooperative,
            Ok(CancelDecision::CancelNow),
        ),
        (JobStatus::InProgress, Refuse, Err(Refusal::AlreadyStarted)),
        (
            JobStatus::InProgress,
            Cooperative,
            Ok(CancelDecision::RequestCancel),
        ),
        (JobStatus::Canceled, Refuse, Ok(CancelDecision::Repeat)),
        (JobStatus::Canceled, Cooperative, Ok(CancelDecision::Repeat)),
        (
            JobStatus::Succeeded,
            Cooperative,
            Err(Refusal::AlreadyFinished),
        ),
        (JobStatus::Failed, Refuse, Err(Refusal::AlreadyFinished)),
        (
            JobStatus::Expired,
            Cooperative,
            Err(Refusal::AlreadyFinished),
        ),
    ] {
        assert_eq!(
            decide_cancel(status, policy),
            expected,
            "{status:?} {policy:?}"
        );
    }
}

proptest! {
    #[test]
    fn a_debit_passes_exactly_when_it_stays_within_the_buffer(
        balance in -2_000_000i64..2_000_000, held in 0i64..1_000_000,
        amount in 1i64..3_000_000, buffer in 0i64..2_000_000,
    ) {
        let mut s = snap(balance, 0);
        s.held = held;
        let ok = check_debit(&s, Micros(amount), Micros(buffer)).is_ok();
        prop_assert_eq!(ok, balance - held - amount >= -buffer);
    }

    #[test]
    fn a_refill_is_due_exactly_from_the_next_refill_time(offset in -3 * DAY..3 * DAY) {
        let card = RateCard::builtin();
        let mut s = snap(0, 0);
        s.now = START + DAY + offset;
        let at = s.refills_at(&card, "daily_images").unwrap();
        let due = s.due_refills(&card).iter().any(|r| r.pocket == "daily_images");
        prop_assert_eq!(due, s.now >= at);
    }

    #[test]
    fn a_listed_capture_is_accepted_exactly_within_zero_to_the_hold(
        held in 0i64..1_000, capture in -1_000i64..2_000,
    ) {
        let hold = [hold_line(MONEY, held)];
        let got = resolve_capture(&hold, Some(&[hold_line(MONEY, capture)]));
        if (0..=held).contains(&capture) {
            prop_assert_eq!(got, Ok(vec![line(MONEY, held, capture)]));
        } else {
            prop_assert!(matches!(got, Err(Refusal::InvalidCapture(_))));
        }
    }
}
