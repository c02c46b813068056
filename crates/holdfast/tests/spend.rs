//! Spending per period (issue #41): a hard limit per UTC day or month that refuses a
//! debit or a submit's money hold past it (captures, top-up refunds and job refunds are
//! never refused), and thresholds each told once a period as `account.spend_threshold`,
//! on every path that spends (single and batched debits, captures); on SQLite and
//! PostgreSQL, with the audit after.

use holdfast::decide::{SpendPeriod, SpendPolicy, SpendThreshold, SpendZone};
use holdfast::testing::*;
use holdfast::{
    DebitRequest, Engine, JobRefund, PutAccount, Refusal, StoreError, Usage, backend_test,
};

/// `u` on the free plan (up to 5 open jobs) with its own rule: `limit` (or none) a month
/// and the thresholds `alerts`.
async fn put_rule(e: &Engine, limit: Option<&str>, alerts: &[&str]) {
    let policy = SpendPolicy {
        limit: limit.map(usd),
        period: SpendPeriod::Month,
        alerts: alerts
            .iter()
            .map(|a| SpendThreshold::parse(a).unwrap())
            .collect(),
        ..SpendPolicy::default()
    };
    put_spend(e, Some(Some(policy))).await;
}

async fn put_spend(e: &Engine, spend: Option<Option<SpendPolicy>>) {
    let req = PutAccount {
        plan: "free".into(),
        plan_until: None,
        max_concurrent_jobs: Some(5),
        recharge: None,
        spend,
    };
    e.put_account(&acct("u"), &req).await.unwrap();
}

async fn debit(e: &Engine, amount: &str, k: &str) -> Result<holdfast::MoneyResult, StoreError> {
    e.debit(&acct("u"), &Usage::Amount(usd(amount)), &key(k), None)
        .await
}

/// Debits of `u` in one batch, each answered.
async fn debit_batch(e: &Engine, amounts: &[&str], k: &str) -> Vec<Result<(), Refusal>> {
    let items: Vec<_> = amounts
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let usage = Usage::Amount(usd(a));
            let req = DebitRequest::new(&usage, &key(&format!("{k}{i}")), None);
            (acct("u"), req)
        })
        .collect();
    let answers = e.debit_many(&items).await.unwrap();
    answers.into_iter().map(|a| a.map(|_| ())).collect()
}

/// A video job (it holds 0.50) submitted, leased and completed: its hold captured.
async fn captured_video(e: &Engine, k: &str) -> String {
    let job = e.submit(&submit_req("u", "video", k)).await.unwrap().job;
    let lease = e.lease("video", &worker(), 60).await.unwrap().unwrap();
    e.complete(&job_id(&job.job_id), &lease.lease_token, None)
        .await
        .unwrap();
    job.job_id
}

/// The spending of `u` in its period, in micros, as its account shows it.
async fn spent(e: &Engine) -> i64 {
    let view = e.get_account(&acct("u")).await.unwrap();
    view.spend.expect("a rule applies").spent
}

/// The thresholds told for `u`, in order, once at least `n` are there.
async fn told(e: &Engine, n: usize) -> Vec<i64> {
    let events = events_of(e.store(), "account.spend_threshold", n).await;
    let line = |ev: &holdfast::Event| ev.data["threshold_micros"].as_i64().unwrap();
    events.iter().map(line).collect()
}

backend_test!(
    a_limit_refuses_what_would_pass_it_and_nothing_else,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put_rule(&e, Some("5.00"), &[]).await;
        top_up(e.store(), "u", "20.00", "t").await;
        debit(&e, "3.00", "d1").await.unwrap();
        let job = e.submit(&submit_req("u", "video", "v1")).await.unwrap().job;
        // Spent 3.00 and held 0.50: exactly at the limit passes.
        debit(&e, "1.50", "d2").await.unwrap();
        let view = e.get_account(&acct("u")).await.unwrap();
        let spend = view.spend.clone().unwrap();
        assert_eq!((spend.spent, spend.left), (4_500_000, Some(0)));
        assert!(spend.own);
        assert_eq!(
            spend.period_start,
            SpendPeriod::Month.start(spend.period_start, &SpendZone::utc())
        );
        // Past it: a debit, a submit's hold, a debit in a batch.
        assert_eq!(
            refused(debit(&e, "0.01", "d3").await),
            Refusal::SpendLimitReached
        );
        let again = e.submit(&submit_req("u", "video", "v2")).await;
        assert_eq!(refused(again), Refusal::SpendLimitReached);
        assert_eq!(
            debit_batch(&e, &["0.01"], "b").await,
            [Err(Refusal::SpendLimitReached)]
        );
        // The capture of what was held is spending, and never refused.
        let lease = e.lease("video", &worker(), 60).await.unwrap().unwrap();
        e.complete(&job_id(&job.job_id), &lease.lease_token, None)
            .await
            .unwrap();
        assert_eq!(spent(&e).await, 5_000_000);
        // A job refund lowers the period's spending: 0.50 more may be spent (under the
        // key a refusal left unused).
        let refund = JobRefund {
            amount: None,
            reason: "failed render".into(),
            key: key("r1"),
        };
        e.refund_job(&job_id(&job.job_id), &refund).await.unwrap();
        assert_eq!(spent(&e).await, 4_500_000);
        assert_eq!(
            refused(debit(&e, "0.51", "d3").await),
            Refusal::SpendLimitReached
        );
        debit(&e, "0.50", "d3").await.unwrap();
        // A refund of a top-up is not spending and not limited.
        e.refund(&acct("u"), &key("t"), usd("1.00"), &key("tr"))
            .await
            .unwrap();
        assert_eq!(spent(&e).await, 5_000_000);
        // Each change of the rule is the operator's event, with the rule before and after;
        // a PUT that repeats it writes none.
        put_rule(&e, Some("5.00"), &[]).await;
        let changes = events_of(e.store(), "operator.spend_rule_changed", 1).await;
        assert_eq!(changes.len(), 1, "set once, repeated once");
        assert_eq!(changes[0].data["from"], serde_json::Value::Null);
        assert_eq!(changes[0].data["to"]["limit"], "5.00");
        assert_eq!(changes[0].data["to"]["period"], "month");
        // The account's own rule goes: no rule at all (the plan has none).
        put_spend(&e, Some(None)).await;
        let changes = events_of(e.store(), "operator.spend_rule_changed", 2).await;
        assert_eq!(changes[1].data["from"]["limit"], "5.00");
        assert_eq!(changes[1].data["to"], serde_json::Value::Null);
        assert_eq!(e.get_account(&acct("u")).await.unwrap().spend, None);
        debit(&e, "1.00", "d4").await.unwrap();
        // A PUT without `spend` leaves the rule as it is.
        put_rule(&e, Some("100.00"), &[]).await;
        put_spend(&e, None).await;
        assert_eq!(
            spent(&e).await,
            6_000_000,
            "a month's debits, less the refund"
        );
        assert_clean(e.store()).await;
    }
);

backend_test!(
    a_plans_rule_applies_until_the_account_has_its_own,
    |b| async move {
        let card = card_with(&[(
            "[plans.premium]",
            "[plans.free.spend]\nlimit = \"1.00\"\nperiod = \"day\"\n\n[plans.premium]",
        )]);
        let Some((_db, e)) = engine_with(b, card).await else {
            return;
        };
        put_spend(&e, None).await;
        top_up(e.store(), "u", "20.00", "t").await;
        debit(&e, "1.00", "d1").await.unwrap();
        assert_eq!(
            refused(debit(&e, "0.01", "d2").await),
            Refusal::SpendLimitReached
        );
        let view = e.get_account(&acct("u")).await.unwrap();
        let spend = view.spend.unwrap();
        assert!(!spend.own);
        assert_eq!(spend.policy.period, SpendPeriod::Day);
        assert_eq!(spend.period_end - spend.period_start, 86_400_000_000);
        // Its own rule replaces the plan's.
        put_rule(&e, Some("2.00"), &[]).await;
        debit(&e, "1.00", "d2").await.unwrap();
        assert_eq!(spent(&e).await, 2_000_000);
        assert_clean(e.store()).await;
    }
);

backend_test!(
    an_account_keeps_marks_only_under_a_rule_which_counts_its_periods_spending_so_far,
    |b| async move {
        let Some((db, e)) = engine(b).await else {
            return;
        };
        put_spend(&e, None).await;
        top_up(e.store(), "u", "20.00", "t").await;
        debit(&e, "1.00", "d1").await.unwrap();
        debit_batch(&e, &["0.50", "1.50"], "b").await;
        // No rule: nothing to keep, the row as narrow as before rules of spending.
        let marked = "SELECT COUNT(*) FROM accounts \
                      WHERE spend_day_start IS NOT NULL OR spend_month_start IS NOT NULL";
        assert_eq!(db.query_i64(marked).await, 0);
        // The card gives its plan a rule (a restart with a new card): the month's 3.00
        // spent before counts against it.
        drop(e);
        let card = card_with(&[(
            "[plans.premium]",
            "[plans.free.spend]\nlimit = \"5.00\"\n\n[plans.premium]",
        )]);
        let e = Engine::new(db.store(card).await);
        assert_eq!(spent(&e).await, 3_000_000);
        assert_eq!(
            refused(debit(&e, "2.01", "d2").await),
            Refusal::SpendLimitReached
        );
        debit(&e, "2.00", "d3").await.unwrap();
        assert_eq!(spent(&e).await, 5_000_000);
        assert_eq!(
            db.query_i64(marked).await,
            1,
            "marked by the write under the rule"
        );
        assert_clean(e.store()).await;
    }
);

backend_test!(a_rules_days_are_those_of_its_time_zone, |b| async move {
    let Some((db, e)) = engine(b).await else {
        return;
    };
    put_spend(&e, None).await;
    top_up(e.store(), "u", "20.00", "t").await;
    debit(&e, "1.00", "d1").await.unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64;
    // Kolkata's day and UTC's begin 5 h 30 apart: the debit of 1.00 is moved to just
    // before the later of the two beginnings, inside one day and not the other.
    let kolkata = SpendZone::parse("Asia/Kolkata").unwrap();
    let starts = [&kolkata, &SpendZone::utc()].map(|z| SpendPeriod::Day.start(now, z));
    let moved = starts[0].max(starts[1]) - 1;
    // Every entry so far (the pockets' first refills, the top-up, the debit) is moved.
    let sql = format!("UPDATE ledger SET created_at = {moved} WHERE account_id = 'u'");
    assert!(db.execute(&sql).await >= 2);
    debit(&e, "2.00", "d2").await.unwrap();
    for (zone, start) in [kolkata, SpendZone::utc()].into_iter().zip(starts) {
        let rule = SpendPolicy {
            period: SpendPeriod::Day,
            timezone: zone.clone(),
            ..SpendPolicy::default()
        };
        put_spend(&e, Some(Some(rule))).await;
        let view = e.get_account(&acct("u")).await.unwrap().spend.unwrap();
        assert_eq!(view.period_start, start, "{}", zone.name());
        let counted = if moved >= start { 3_000_000 } else { 2_000_000 };
        assert_eq!(view.spent, counted, "{}", zone.name());
    }
    assert_clean(e.store()).await;
});

backend_test!(
    thresholds_are_told_once_a_period_in_order_on_every_path,
    |b| async move {
        let Some((db, e)) = engine(b).await else {
            return;
        };
        put_rule(&e, None, &["1.00", "2.00", "3.50"]).await;
        top_up(e.store(), "u", "20.00", "t").await;
        debit(&e, "1.00", "d1").await.unwrap(); // exactly at 1.00
        assert_eq!(told(&e, 1).await, [1_000_000]);
        // A batch whose second debit crosses 2.00: told once, in the batch.
        let batch = debit_batch(&e, &["0.50", "1.60"], "b").await;
        assert_eq!(batch, [Ok(()), Ok(())]);
        assert_eq!(told(&e, 2).await, [1_000_000, 2_000_000]);
        // A capture crosses 3.50 (3.10 + 0.50).
        let job = captured_video(&e, "v1").await;
        assert_eq!(told(&e, 3).await, [1_000_000, 2_000_000, 3_500_000]);
        // A refund goes back below 3.50, a debit reaches it again: nothing more.
        let refund = JobRefund {
            amount: None,
            reason: "failed render".into(),
            key: key("r1"),
        };
        e.refund_job(&job_id(&job), &refund).await.unwrap();
        debit(&e, "0.40", "d2").await.unwrap();
        assert_eq!(spent(&e).await, 3_500_000);
        // The period's rollover, as if all of it had happened a month ago (the entries
        // and the marks): spending starts again at nothing and each threshold is told
        // again as it is reached.
        let month = 31 * 86_400_000_000_i64;
        let sql = format!(
            "UPDATE accounts SET spend_month_start = spend_month_start - {month}, \
             spend_day_start = spend_day_start - {month}, \
             spend_alerted_start = spend_alerted_start - {month} \
             WHERE account_id = 'u'"
        );
        behind_the_back(&db, &sql).await;
        let entries = format!("UPDATE ledger SET created_at = created_at - {month}");
        assert!(db.execute(&entries).await > 0);
        assert_eq!(spent(&e).await, 0);
        debit(&e, "2.50", "d3").await.unwrap();
        assert_eq!(
            spent(&e).await,
            2_500_000,
            "the new period's base was written"
        );
        let events = events_of(e.store(), "account.spend_threshold", 5).await;
        let lines: Vec<i64> = events
            .iter()
            .map(|ev| ev.data["threshold_micros"].as_i64().unwrap())
            .collect();
        assert_eq!(
            lines,
            [1_000_000, 2_000_000, 3_500_000, 1_000_000, 2_000_000]
        );
        let last = &events[4].data;
        assert_eq!(last["spent_micros"], 2_500_000);
        assert_eq!(last["period"], "month");
        assert_eq!(last["limit"], serde_json::Value::Null);
        assert_clean(e.store()).await;
    }
);

backend_test!(
    fifty_concurrent_debits_cross_a_threshold_once,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put_rule(&e, None, &["0.25"]).await;
        top_up(e.store(), "u", "5.00", "t").await;
        let tasks: Vec<_> = (0..50)
            .map(|i| {
                let e = e.clone();
                tokio::spawn(async move { debit(&e, "0.01", &format!("d{i}")).await.unwrap() })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert_eq!(told(&e, 1).await, [250_000]);
        assert_eq!(spent(&e).await, 500_000);
        assert_clean(e.store()).await;
    }
);

backend_test!(
    racing_debits_and_submits_never_pass_the_limit,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put_rule(&e, Some("1.00"), &["100%"]).await;
        top_up(e.store(), "u", "50.00", "t").await;
        // 60 debits of 0.01 and 5 submits holding 0.50 each race for 1.00.
        let debits: Vec<_> = (0..60)
            .map(|i| {
                let e = e.clone();
                tokio::spawn(async move { debit(&e, "0.01", &format!("d{i}")).await.is_ok() })
            })
            .collect();
        let submits: Vec<_> = (0..5)
            .map(|i| {
                let e = e.clone();
                tokio::spawn(async move {
                    let r = e.submit(&submit_req("u", "video", &format!("v{i}"))).await;
                    match r {
                        Ok(_) => true,
                        Err(StoreError::Refused(Refusal::SpendLimitReached)) => false,
                        Err(other) => panic!("{other:?}"),
                    }
                })
            })
            .collect();
        let mut debited = 0;
        for t in debits {
            debited += i64::from(t.await.unwrap());
        }
        let mut held = 0;
        for t in submits {
            held += i64::from(t.await.unwrap());
        }
        let view = e.get_account(&acct("u")).await.unwrap();
        assert_eq!(view.held, held * 500_000);
        let spend = view.spend.unwrap();
        assert_eq!(spend.spent, debited * 10_000);
        let committed = spend.spent + view.held;
        assert!(committed <= 1_000_000, "{committed} committed past 1.00");
        // A refusal had no room: what is left is less than what it asked for.
        let left = 1_000_000 - committed;
        if debited < 60 {
            assert!(left < 10_000, "{committed}: a debit was refused with room");
        }
        if held < 5 {
            assert!(
                left < 500_000,
                "{committed}: a submit was refused with room"
            );
        }
        assert_clean(e.store()).await;
    }
);
