//! Pins rate-card validation: each default, each bound on both sides, and the lane and
//! pocket questions a card answers.

use holdfast_core::ratecard::{
    CancelInProgress, DEFAULT_RATE_CARD, Kind, KindTimeouts, Retention, Schedules, TakeLine,
    Timeouts, Webhook,
};
use holdfast_core::{MONEY, Micros, RateCard, RateCardError};

/// A card with one plan and nothing else: every default applies.
const MINIMAL: &str = r#"
currency = "EUR"
default_plan = "basic"
[plans.basic]
buffer = "2.50"
max_concurrent_jobs = 3
"#;

fn minimal_with(extra: &str) -> Result<RateCard, RateCardError> {
    RateCard::parse(&format!("{MINIMAL}\n{extra}"))
}

fn default_with(find: &str, replace: &str) -> Result<RateCard, RateCardError> {
    assert!(DEFAULT_RATE_CARD.contains(find), "{find}");
    RateCard::parse(&DEFAULT_RATE_CARD.replacen(find, replace, 1))
}

#[track_caller]
fn refused_at(result: Result<RateCard, RateCardError>, expected_key: &str) {
    match result {
        Err(RateCardError::Invalid { key, .. }) => assert_eq!(key, expected_key),
        Err(RateCardError::Syntax(s) | RateCardError::Shape(s)) => {
            panic!("not a card, not {expected_key}: {s}")
        }
        Ok(_) => panic!("accepted; expected a refusal at {expected_key}"),
    }
}

#[test]
fn a_minimal_card_gets_every_default() {
    let card = RateCard::parse(MINIMAL).unwrap();
    assert_eq!(card.currency, "EUR");
    assert_eq!(card.default_plan, "basic");
    assert_eq!(
        card.timeouts,
        Timeouts {
            notice_delay_seconds: 5,
            lease_seconds: 60,
            stale_after_seconds: 1800,
            reactivate_after_seconds: 86_400,
            late_usage_grace_seconds: 60,
            credit_expiring_notice_days: 7,
        }
    );
    assert_eq!(
        card.schedules,
        Schedules {
            sweep_every_seconds: 5.0,
            notices_every_seconds: 1.0,
            reconcile_every_seconds: 300.0,
            reactivate_every_seconds: 600.0,
            webhooks_every_seconds: 1.0,
            prune_every_seconds: 3600.0,
            expire_every_seconds: 60.0,
        }
    );
    assert_eq!(card.retention, Retention::default());
    assert_eq!(card.retention.idempotency_days, 30);
    assert_eq!(card.retention.jobs_days, 90);
    assert_eq!(card.plans["basic"].buffer, Micros(2_500_000));
    assert_eq!(card.plans["basic"].max_concurrent_jobs, 3);
    assert!(!card.plans["basic"].priority);
    assert!(card.allowances.is_empty());
    assert!(card.kinds.is_empty());
    assert!(card.meters.is_empty());
    assert!(card.webhooks.is_empty());
}

#[test]
fn the_builtin_card_is_the_default_file() {
    let card = RateCard::builtin();
    assert_eq!(card, RateCard::parse(DEFAULT_RATE_CARD).unwrap());
    assert_eq!(card.currency, "USD");
    assert_eq!(card.allowances["daily_images"], 86_400);
    assert_eq!(card.plans["free"].allowances["daily_images"], 3);
    assert!(card.plans["premium"].priority);
    assert_eq!(
        card.kinds["image"],
        Kind {
            lane: "image".into(),
            take: vec![
                TakeLine {
                    pocket: "daily_images".into(),
                    amount: 1,
                },
                TakeLine {
                    pocket: MONEY.into(),
                    amount: 40_000,
                },
            ],
            free_for: vec![],
            cancel_in_progress: CancelInProgress::Refuse,
            timeouts: KindTimeouts {
                max_run_seconds: None,
                stale_after_seconds: 1800,
                queued_expires_after_seconds: None,
            },
        }
    );
    assert_eq!(
        card.kinds["video"].cancel_in_progress,
        CancelInProgress::Cooperative
    );
    assert_eq!(card.meters["linux-large"], Micros(800));
}

#[test]
fn given_timeouts_and_schedules_are_kept() {
    let card = RateCard::parse(include_str!("../../../examples/ci-runners.toml")).unwrap();
    assert_eq!(
        card.timeouts,
        Timeouts {
            notice_delay_seconds: 30,
            lease_seconds: 120,
            stale_after_seconds: 21_600,
            reactivate_after_seconds: 86_400,
            late_usage_grace_seconds: 300,
            credit_expiring_notice_days: 14,
        }
    );
    assert_eq!(card.schedules.sweep_every_seconds, 10.0);
    assert_eq!(card.schedules.notices_every_seconds, 5.0);
    assert_eq!(card.schedules.reactivate_every_seconds, 3600.0);
}

#[test]
fn the_notice_delay_may_be_zero_but_not_negative() {
    let card = minimal_with("[timeouts]\nnotice_delay_seconds = 0").unwrap();
    assert_eq!(card.timeouts.notice_delay_seconds, 0);
    refused_at(
        minimal_with("[timeouts]\nnotice_delay_seconds = -1"),
        "timeouts.notice_delay_seconds",
    );
}

#[test]
fn the_credit_expiring_notice_is_zero_to_ten_years_of_days() {
    for days in [0, 3650] {
        let card = minimal_with(&format!("[timeouts]\ncredit_expiring_notice_days = {days}"));
        assert_eq!(card.unwrap().timeouts.credit_expiring_notice_days, days);
    }
    for bad in [-1, 3651] {
        refused_at(
            minimal_with(&format!("[timeouts]\ncredit_expiring_notice_days = {bad}")),
            "timeouts.credit_expiring_notice_days",
        );
    }
}

#[test]
fn timeouts_in_seconds_must_be_positive() {
    for key in [
        "lease_seconds",
        "stale_after_seconds",
        "reactivate_after_seconds",
    ] {
        for bad in [0, -1] {
            refused_at(
                minimal_with(&format!("[timeouts]\n{key} = {bad}")),
                &format!("timeouts.{key}"),
            );
        }
    }
    let card = minimal_with("[timeouts]\nlease_seconds = 1\nreactivate_after_seconds = 1").unwrap();
    assert_eq!(card.timeouts.lease_seconds, 1);
    assert_eq!(card.timeouts.reactivate_after_seconds, 1);
}

#[test]
fn the_lease_may_equal_but_not_exceed_the_stale_time() {
    let card = minimal_with("[timeouts]\nlease_seconds = 1800").unwrap();
    assert_eq!(card.timeouts.lease_seconds, 1800);
    refused_at(
        minimal_with("[timeouts]\nlease_seconds = 1801"),
        "timeouts.lease_seconds",
    );
    refused_at(
        minimal_with("[timeouts]\nstale_after_seconds = 59"),
        "timeouts.lease_seconds",
    );
}

#[test]
fn schedules_must_be_positive_finite_numbers() {
    for key in [
        "sweep_every_seconds",
        "notices_every_seconds",
        "reconcile_every_seconds",
        "reactivate_every_seconds",
        "webhooks_every_seconds",
        "prune_every_seconds",
    ] {
        for bad in ["0.0", "-1.0", "inf", "nan"] {
            refused_at(
                minimal_with(&format!("[schedules]\n{key} = {bad}")),
                &format!("schedules.{key}"),
            );
        }
    }
    let card = minimal_with("[schedules]\nsweep_every_seconds = 0.25").unwrap();
    assert_eq!(card.schedules.sweep_every_seconds, 0.25);
}

#[test]
fn retention_is_whole_days_and_jobs_outlive_their_keys() {
    for key in [
        "idempotency_days",
        "jobs_days",
        "events_days",
        "webhook_deliveries_days",
    ] {
        for bad in ["0", "-1", "36601", "1.5", "\"30\""] {
            let result = minimal_with(&format!("[retention]\n{key} = {bad}"));
            match result {
                Err(RateCardError::Shape(_)) => {}
                other => refused_at(other, &format!("retention.{key}")),
            }
        }
    }
    let card = minimal_with("[retention]\nidempotency_days = 7\nevents_days = 1").unwrap();
    assert_eq!(
        card.retention,
        Retention {
            idempotency_days: 7,
            jobs_days: 90,
            events_days: 1,
            webhook_deliveries_days: 90,
        }
    );
    refused_at(
        minimal_with("[retention]\nidempotency_days = 31\njobs_days = 30"),
        "retention.jobs_days",
    );
    minimal_with("[retention]\nidempotency_days = 30\njobs_days = 30").unwrap();
    let unknown = minimal_with("[retention]\nledger_days = 30");
    assert!(matches!(unknown, Err(RateCardError::Shape(s)) if s.contains("ledger_days")));
}

#[test]
fn allowances_need_a_positive_interval_and_not_the_money_name() {
    let card = minimal_with("[allowances.weekly]\nrefill_every_seconds = 1").unwrap();
    assert_eq!(card.allowances["weekly"], 1);
    for bad in [0, -5] {
        refused_at(
            minimal_with(&format!(
                "[allowances.weekly]\nrefill_every_seconds = {bad}"
            )),
            "allowances.weekly.refill_every_seconds",
        );
    }
    refused_at(
        minimal_with("[allowances.money]\nrefill_every_seconds = 60"),
        "allowances.money",
    );
}

#[test]
fn a_plan_needs_a_concurrency_of_one_and_quotas_of_zero_or_more() {
    assert_eq!(RateCard::builtin().plans["free"].max_concurrent_jobs, 1);
    refused_at(
        default_with("max_concurrent_jobs = 1", "max_concurrent_jobs = 0"),
        "plans.free.max_concurrent_jobs",
    );
    let card = default_with("daily_images = 3", "daily_images = 0").unwrap();
    assert_eq!(card.plans["free"].allowances["daily_images"], 0);
    refused_at(
        default_with("daily_images = 3", "daily_images = -1"),
        "plans.free.allowances.daily_images",
    );
    refused_at(
        default_with("buffer = \"1.00\"", "buffer = \"1.0.0\""),
        "plans.free.buffer",
    );
    refused_at(
        default_with("default_plan = \"free\"", "default_plan = \"gold\""),
        "default_plan",
    );
}

#[test]
fn a_lane_is_non_empty_and_not_a_priority_lane() {
    refused_at(
        default_with("lane = \"video\"", "lane = \"\""),
        "kinds.video.lane",
    );
    refused_at(
        default_with("lane = \"video\"", "lane = \"video_priority\""),
        "kinds.video.lane",
    );
    let card = default_with("lane = \"video\"", "lane = \"priority_video\"").unwrap();
    assert_eq!(card.kinds["video"].lane, "priority_video");
}

#[test]
fn take_amounts_are_money_strings_or_positive_item_counts() {
    refused_at(
        default_with("amount = \"0.50\"", "amount = 1"),
        "kinds.video.take[0].amount",
    );
    let allowance = r#"take = [{ pocket = "daily_messages", amount = 1 }]"#;
    for bad in ["0", "-1", "\"1\""] {
        refused_at(
            default_with(
                allowance,
                &format!(r#"take = [{{ pocket = "daily_messages", amount = {bad} }}]"#),
            ),
            "kinds.text.take[0].amount",
        );
    }
    let card = default_with(
        allowance,
        r#"take = [{ pocket = "daily_messages", amount = 2 }]"#,
    )
    .unwrap();
    assert_eq!(card.kinds["text"].take[0].amount, 2);
    refused_at(
        default_with(
            r#"{ pocket = "money", amount = "0.04" }"#,
            r#"{ pocket = "daily_images", amount = 2 }"#,
        ),
        "kinds.image.take[1].pocket",
    );
    refused_at(
        default_with(r#"free_for = ["premium"]"#, r#"free_for = ["gold"]"#),
        "kinds.text.free_for",
    );
}

#[test]
fn webhooks_are_parsed_and_checked() {
    let card = minimal_with(
        "[[webhooks]]\nurl = \"https://a.example/h\"\nsecret = \"s\"\nevents = [\"job.failed\", \"ledger.adjusted\"]\n\
         [[webhooks]]\nurl = \"http://b.example/h\"\nsecret_env = \"HOOK_SECRET\"\nfrom = \"beginning\"",
    )
    .unwrap();
    assert_eq!(
        card.webhooks,
        vec![
            Webhook {
                url: "https://a.example/h".into(),
                secret: Some("s".into()),
                secret_env: None,
                events: Some(vec!["job.failed".into(), "ledger.adjusted".into()]),
                from: Default::default(),
            },
            Webhook {
                url: "http://b.example/h".into(),
                secret: None,
                secret_env: Some("HOOK_SECRET".into()),
                events: None,
                from: holdfast_core::ratecard::FeedStart::Beginning,
            },
        ]
    );
    let ok = "url = \"https://a.example/h\"\nsecret = \"s\"";
    refused_at(
        minimal_with(&format!(
            "[[webhooks]]\n{ok}\n[[webhooks]]\nurl = \"ftp://x\"\nsecret = \"s\""
        )),
        "webhooks[1].url",
    );
    refused_at(
        minimal_with("[[webhooks]]\nurl = \"https://a.example/h\""),
        "webhooks[0]",
    );
    refused_at(
        minimal_with(&format!("[[webhooks]]\n{ok}\nsecret_env = \"E\"")),
        "webhooks[0]",
    );
    refused_at(
        minimal_with(&format!("[[webhooks]]\n{ok}\nevents = [\"job.started\"]")),
        "webhooks[0].events",
    );
}

#[test]
fn errors_say_which_key_and_why() {
    let e = minimal_with("[timeouts]\nlease_seconds = 0").unwrap_err();
    assert_eq!(
        e.to_string(),
        "rate card key `timeouts.lease_seconds`: must be a positive whole number of seconds"
    );
    let e = default_with("per_second = \"0.0001\"", "per_second = \"abc\"").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("rate card key `meters.linux-small.per_second`: "),
        "{e}"
    );
    assert!(matches!(
        RateCard::parse("currency = "),
        Err(RateCardError::Syntax(_))
    ));
}

#[test]
fn lanes_follow_the_plan_and_the_kinds() {
    let card = RateCard::builtin();
    let image = &card.kinds["image"];
    assert_eq!(card.lane_for(image, &card.plans["free"]), "image");
    assert_eq!(
        card.lane_for(image, &card.plans["premium"]),
        "image_priority"
    );
    assert_eq!(
        card.lanes(),
        [
            "image",
            "image_priority",
            "runners",
            "runners_priority",
            "text",
            "text_priority",
            "video",
            "video_priority",
        ]
    );
    for lane in card.lanes() {
        assert!(card.is_lane(&lane), "{lane}");
    }
    for lane in [
        "nope",
        "",
        "_priority",
        "ci",
        "image_priority_priority",
        "priority",
    ] {
        assert!(!card.is_lane(lane), "{lane}");
    }
}

#[test]
fn pockets_are_money_and_the_allowances() {
    let card = RateCard::builtin();
    assert!(card.is_pocket(MONEY));
    assert!(card.is_pocket("daily_images"));
    assert!(card.is_pocket("daily_messages"));
    assert!(!card.is_pocket("weekly"));
    assert!(!card.is_pocket(""));
}

#[test]
fn the_currency_is_an_iso_code_and_usd_by_default() {
    let card = RateCard::parse(&MINIMAL.replace("currency = \"EUR\"\n", "")).unwrap();
    assert_eq!(card.currency, "USD");
    for bad in ["usd", "US", "EURO", "€", ""] {
        refused_at(
            RateCard::parse(&MINIMAL.replace("\"EUR\"", &format!("{bad:?}"))),
            "currency",
        );
    }
}

#[test]
fn a_plan_may_set_a_low_balance_line() {
    let card = minimal_with("").unwrap();
    assert_eq!(card.plans["basic"].low_balance, None);
    let with = RateCard::parse(&MINIMAL.replace(
        "max_concurrent_jobs = 3",
        "max_concurrent_jobs = 3\nlow_balance = \"2.00\"",
    ))
    .unwrap();
    assert_eq!(with.plans["basic"].low_balance, Some(Micros(2_000_000)));
    refused_at(
        RateCard::parse(&MINIMAL.replace(
            "max_concurrent_jobs = 3",
            "max_concurrent_jobs = 3\nlow_balance = \"-1\"",
        )),
        "plans.basic.low_balance",
    );
}

#[test]
fn a_kind_may_set_its_own_clocks_and_its_stale_deadline_covers_three_runs() {
    let card = RateCard::builtin();
    assert_eq!(
        card.kinds["video"].timeouts,
        KindTimeouts {
            max_run_seconds: None,
            stale_after_seconds: 1800,
            queued_expires_after_seconds: None,
        },
        "the card's stale deadline by default"
    );
    let video = "[kinds.video]\nlane = \"video\"";
    let own = default_with(
        video,
        &format!("{video}\nmax_run_seconds = 300\nstale_after_seconds = 900\nqueued_expires_after_seconds = 120"),
    )
    .unwrap();
    assert_eq!(
        own.kinds["video"].timeouts,
        KindTimeouts {
            max_run_seconds: Some(300),
            stale_after_seconds: 900,
            queued_expires_after_seconds: Some(120),
        }
    );
    // 3 × 300 = 900 is the least stale deadline allowed; one second less is refused, and
    // the message names both numbers.
    let short = default_with(
        video,
        &format!("{video}\nmax_run_seconds = 300\nstale_after_seconds = 899"),
    );
    match short {
        Err(RateCardError::Invalid { key, reason }) => {
            assert_eq!(key, "kinds.video.stale_after_seconds");
            assert!(reason.contains("899") && reason.contains("300"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    // Against the card's own deadline (1800 s) when the kind sets none.
    refused_at(
        default_with(video, &format!("{video}\nmax_run_seconds = 601")),
        "kinds.video.stale_after_seconds",
    );
    for field in [
        "max_run_seconds",
        "stale_after_seconds",
        "queued_expires_after_seconds",
    ] {
        refused_at(
            default_with(video, &format!("{video}\n{field} = 0")),
            &format!("kinds.video.{field}"),
        );
    }
}

#[test]
fn toml_errors_are_one_line_that_says_where() {
    // Valid TOML with a key the card does not have: named, with its line; not "not
    // valid TOML".
    let e = minimal_with("[retention]\nledger_days = 30").unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, RateCardError::Shape(_)), "{text}");
    assert!(
        text.starts_with("rate card line ")
            && text.contains("(`ledger_days = 30`): unknown field `ledger_days`"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1, "{text}");
    // Text that is not TOML: one line too, with where.
    let e = RateCard::parse("currency = \"EUR\"\nbroken =\n").unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with("rate card is not valid TOML: line 2, column 9 (`broken =`): "),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1, "{text}");
}
