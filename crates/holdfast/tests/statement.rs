//! Statements on SQLite and PostgreSQL: for periods cut anywhere in a history of every
//! kind of money change, opening + the changes = closing, one period's closing is the
//! next one's opening, and the spending by job kind, and by meter, adds up to the debits
//! and captures.

use holdfast::testing::*;
use holdfast::{AccountId, CreditKind, Engine, JobRefund, Statement, Usage, backend_test};

/// The total of a statement's changes, by the kinds given (all when empty).
fn changed(s: &Statement, kinds: &[&str]) -> i64 {
    let wanted = |k: &str| kinds.is_empty() || kinds.contains(&k);
    s.changes
        .iter()
        .filter(|l| wanted(&l.kind))
        .map(|l| l.amount)
        .sum()
}

/// A history of every money change of `u`, with the database clock read after each.
async fn history(e: &Engine) -> Vec<i64> {
    let u = acct("u");
    let mut marks = vec![mark(e).await];
    put(e.store(), "u", "premium").await;
    top_up(e.store(), "u", "10.00", "t1").await;
    marks.push(mark(e).await);
    e.credit(&u, usd("1.50"), CreditKind::Bonus, &key("b1"))
        .await
        .unwrap();
    let amount = |s: &str| Usage::Amount(usd(s));
    e.debit(&u, &amount("0.25"), &key("d1"), None)
        .await
        .unwrap();
    marks.push(mark(e).await);
    let job = e.submit(&submit_req("u", "video", "v1")).await.unwrap().job;
    marks.push(mark(e).await);
    let lease = e
        .lease("video_priority", &worker(), 60)
        .await
        .unwrap()
        .unwrap();
    e.complete(&job_id(&job.job_id), &lease.lease_token, None)
        .await
        .unwrap();
    e.debit(&u, &amount("0.05"), &key("d2"), Some(&job.job_id))
        .await
        .unwrap();
    marks.push(mark(e).await);
    let refund = JobRefund {
        amount: Some(usd("0.10")),
        reason: "blank".into(),
        key: key("r1"),
    };
    e.refund_job(&job_id(&job.job_id), &refund).await.unwrap();
    e.refund(&u, &key("t1"), usd("2.00"), &key("r2"))
        .await
        .unwrap();
    marks.push(mark(e).await);
    e.submit(&submit_req("u", "video", "v2")).await.unwrap();
    marks.push(mark(e).await);
    marks
}

backend_test!(
    every_period_opens_where_the_last_closed_and_adds_up,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        let marks = history(&e).await;
        let u = acct("u");
        for (i, &from) in marks.iter().enumerate() {
            for &to in &marks[i..] {
                let s = e.statement(&u, from, to).await.unwrap();
                assert_eq!(
                    s.opening + changed(&s, &[]),
                    s.closing,
                    "[{from}, {to}): {s:?}"
                );
                let before = e.statement(&u, 0, from).await.unwrap();
                assert_eq!(
                    before.closing, s.opening,
                    "the period before closes at its opening"
                );
                let spent: i64 = s.spending_by_job_kind.iter().map(|l| l.amount).sum();
                assert_eq!(spent, -changed(&s, &["debit", "capture"]));
            }
        }
        let whole = e.statement(&u, 0, *marks.last().unwrap()).await.unwrap();
        let account = e.get_account(&u).await.unwrap();
        assert_eq!(whole.closing, account.balance);
        assert_eq!(whole.held_at_end, account.held, "the second video's hold");
        assert_eq!(whole.held_at_end, 500_000);
        let kinds: Vec<&str> = whole.changes.iter().map(|l| l.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "bonus",
                "capture",
                "debit",
                "job_refund",
                "refund",
                "top_up"
            ]
        );
        let video: Vec<_> = whole
            .spending_by_job_kind
            .iter()
            .map(|l| (l.job_kind.as_deref(), l.entries, l.amount))
            .collect();
        assert_eq!(video, [(Some("video"), 2, 550_000), (None, 1, 250_000)]);
        // Before the job was submitted nothing was held; an empty period has no changes.
        let early = e.statement(&u, marks[1], marks[2]).await.unwrap();
        assert_eq!(early.held_at_end, 0);
        let empty = e.statement(&u, marks[2], marks[2]).await.unwrap();
        assert!(empty.changes.is_empty() && empty.opening == empty.closing);
        let refused = e.statement(&u, marks[2], marks[1]).await.unwrap_err();
        assert_eq!(refused.to_string(), "from: must not be after to");
        let nobody = e.statement(&acct("nobody"), 0, marks[1]).await.unwrap_err();
        assert_eq!(nobody.to_string(), "no such account");
        assert_clean(e.store()).await;
    }
);

backend_test!(
    usage_agrees_with_each_accounts_statement_and_pages_by_account,
    |b| async move {
        use holdfast::{UsageGrouping, UsageQuery};
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        let marks = history(&e).await;
        for a in ["a", "b", "c"] {
            put(e.store(), a, "free").await;
            top_up(e.store(), a, "5.00", "t").await;
            e.debit(&acct(a), &Usage::Amount(usd("0.30")), &key("d"), None)
                .await
                .unwrap();
        }
        let to = mark(&e).await;
        let query = |group_by, account_id: Option<&str>, after: &str, limit| UsageQuery {
            from: 0,
            to,
            group_by,
            account_id: account_id.map(acct),
            after: after.into(),
            limit,
        };
        let all = e
            .usage(&query(UsageGrouping::Account, None, "", 100))
            .await
            .unwrap();
        let keys: Vec<_> = all.groups.iter().map(|g| g.key.clone().unwrap()).collect();
        assert_eq!(keys, ["a", "b", "c", "u"]);
        assert_eq!(all.next, None);
        let s = e.statement(&acct("u"), 0, to).await.unwrap();
        let u = &all.groups[3];
        assert_eq!(u.spent, -changed(&s, &["debit", "capture"]));
        assert_eq!(u.refunded, changed(&s, &["job_refund"]));
        assert_eq!((u.entries, u.spent, u.refunded), (3, 800_000, 100_000));
        let first = e
            .usage(&query(UsageGrouping::Account, None, "", 2))
            .await
            .unwrap();
        assert_eq!(first.next.as_deref(), Some("b"));
        let rest = e
            .usage(&query(UsageGrouping::Account, None, "b", 2))
            .await
            .unwrap();
        let keys: Vec<_> = rest.groups.iter().map(|g| g.key.clone().unwrap()).collect();
        assert_eq!(
            (keys, rest.next.as_deref()),
            (vec!["c".to_owned(), "u".to_owned()], Some("u"))
        );
        let one = e
            .usage(&query(UsageGrouping::Account, Some("b"), "", 100))
            .await
            .unwrap();
        assert_eq!(one.groups.len(), 1);
        assert_eq!(one.groups[0].spent, 300_000);
        let kinds = e
            .usage(&query(UsageGrouping::Kind, None, "", 100))
            .await
            .unwrap();
        let by: Vec<_> = kinds
            .groups
            .iter()
            .map(|g| (g.key.as_deref(), g.entries, g.spent, g.refunded))
            .collect();
        assert_eq!(
            by,
            [
                (Some("video"), 2, 550_000, 100_000),
                (None, 4, 1_150_000, 0)
            ]
        );
        let of_u = e
            .usage(&query(UsageGrouping::Kind, Some("u"), "", 100))
            .await
            .unwrap();
        assert_eq!(of_u.groups[1].spent, 250_000);
        // A period before anything was spent has no groups.
        let early = UsageQuery {
            to: marks[1],
            ..query(UsageGrouping::Account, None, "", 100)
        };
        assert!(e.usage(&early).await.unwrap().groups.is_empty());
        let backwards = UsageQuery {
            from: to,
            to: marks[1],
            ..query(UsageGrouping::Kind, None, "", 1)
        };
        assert!(e.usage(&backwards).await.is_err());
    }
);

backend_test!(
    metered_spending_is_grouped_by_meter_on_every_debit_path,
    |b| async move {
        use holdfast::{DebitRequest, UsageGrouping, UsageQuery};
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        let (u, v) = (acct("u"), acct("v"));
        for a in ["u", "v"] {
            put(e.store(), a, "free").await;
            top_up(e.store(), a, "10.00", "t").await;
        }
        let metered = |meter: &str, seconds| Usage::Metered {
            meter: meter.into(),
            seconds,
        };
        // One debit alone (the single path), then a batch of three (the set-based one).
        let single = e
            .debit(&u, &metered("linux-large", 30), &key("m1"), None)
            .await
            .unwrap();
        assert_eq!(
            (single.entry.meter.as_deref(), single.entry.seconds),
            (Some("linux-large"), Some(30)),
            "the single debit's answer names its meter"
        );
        let batch = [
            (u.clone(), metered("linux-small", 600), "m2"),
            (u.clone(), Usage::Amount(usd("0.07")), "a1"),
            (v.clone(), metered("linux-large", 10), "m3"),
            (u.clone(), metered("linux-large", 5), "m4"),
        ];
        let items: Vec<_> = (batch.iter())
            .map(|(a, usage, k)| (a.clone(), DebitRequest::new(usage, &key(k), None)))
            .collect();
        let answered: Vec<_> = (e.debit_many(&items).await.unwrap().into_iter())
            .map(|answer| {
                let entry = answer.unwrap().entry;
                (entry.meter, entry.seconds)
            })
            .collect();
        let meter = |m: &str, s| (Some(m.to_owned()), Some(s));
        let expected = [
            meter("linux-small", 600),
            (None, None),
            meter("linux-large", 10),
            meter("linux-large", 5),
        ];
        assert_eq!(answered, expected, "each batched debit's answer");
        // The ledger, as read back, says the same of each entry.
        let debits: Vec<_> = (e.ledger(&u, None, 100).await.unwrap().items.into_iter())
            .filter(|entry| entry.kind == "debit")
            .map(|entry| (entry.meter, entry.seconds))
            .collect();
        let of_u = [
            expected[0].clone(),
            expected[1].clone(),
            expected[3].clone(),
        ];
        assert_eq!(debits[0], meter("linux-large", 30));
        assert_eq!(debits[1..], of_u, "the ledger's entries of u");
        // A replay writes nothing more, and answers the entry as it was written.
        let replay = e
            .debit(&u, &metered("linux-large", 30), &key("m1"), None)
            .await
            .unwrap();
        assert!(replay.replay);
        assert_eq!(replay.entry, single.entry);
        let to = mark(&e).await;
        let s = e.statement(&u, 0, to).await.unwrap();
        let by_meter: Vec<_> = (s.spending_by_meter.iter())
            .map(|l| (l.meter.as_deref(), l.entries, l.seconds, l.amount))
            .collect();
        // linux-large: 35 s at 800 micros; linux-small: 600 s at 100 micros.
        assert_eq!(
            by_meter,
            [
                (Some("linux-large"), 2, 35, 28_000),
                (Some("linux-small"), 1, 600, 60_000),
                (None, 1, 0, 70_000)
            ]
        );
        let spent: i64 = s.spending_by_meter.iter().map(|l| l.amount).sum();
        assert_eq!(spent, -changed(&s, &["debit", "capture"]));
        let query = |group_by, account_id: Option<&AccountId>| UsageQuery {
            from: 0,
            to,
            group_by,
            account_id: account_id.cloned(),
            after: String::new(),
            limit: 100,
        };
        let meters = e.usage(&query(UsageGrouping::Meter, None)).await.unwrap();
        let by: Vec<_> = (meters.groups.iter())
            .map(|g| (g.key.as_deref(), g.entries, g.seconds, g.spent))
            .collect();
        assert_eq!(
            by,
            [
                (Some("linux-large"), 3, 45, 36_000),
                (Some("linux-small"), 1, 600, 60_000),
                (None, 1, 0, 70_000)
            ]
        );
        let of_v = e
            .usage(&query(UsageGrouping::Meter, Some(&v)))
            .await
            .unwrap();
        assert_eq!(of_v.groups.len(), 1);
        assert_eq!(of_v.groups[0].seconds, 10);
        let accounts = e.usage(&query(UsageGrouping::Account, None)).await.unwrap();
        let seconds: Vec<_> = accounts.groups.iter().map(|g| g.seconds).collect();
        assert_eq!(seconds, [635, 10], "each account's metered seconds");
        assert_clean(e.store()).await;
    }
);

backend_test!(
    a_statement_up_to_now_holds_the_debit_written_just_before_it,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        let n = acct("n");
        put(e.store(), "n", "free").await;
        top_up(e.store(), "n", "20.00", "t").await;
        // The end the API and the CLI take for "up to now", read right after each debit:
        // on SQLite (a clock of milliseconds) the debit and the reading often share one,
        // and a period ending at the reading itself would leave the debit out.
        let mut left_out = Vec::new();
        for i in 1..=200 {
            let usage = Usage::Amount(usd("0.01"));
            let debit = e.debit(&n, &usage, &key(&format!("d{i}")), None).await;
            let written = debit.unwrap().entry.created_at;
            let to = e.period_end_now().await.unwrap();
            if written >= to {
                left_out.push(i);
            }
        }
        assert_eq!(
            left_out,
            Vec::<i64>::new(),
            "debits a period up to now left out"
        );
        let s = e.statement(&n, 0, e.period_end_now().await.unwrap()).await;
        assert_eq!(s.unwrap().closing, 20_000_000 - 200 * 10_000);
    }
);
