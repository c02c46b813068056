//! The balance at a time on SQLite and PostgreSQL: at every point of a history of every
//! kind of money change (and of allowance pockets spent and refunded by jobs), the
//! account's pockets as read back from the ledger for that time are the account as it
//! stood then, and agree with the statement of the period that ends there.

use holdfast::testing::*;
use holdfast::{AccountId, AccountView, CreditKind, Engine, JobRefund, Usage, backend_test};

/// How the account stood after one step: a clock reading later than the step's writes,
/// the account then, and its last ledger entry.
struct Point {
    mark: i64,
    view: AccountView,
    last_entry: Option<i64>,
}

async fn point(e: &Engine, u: &AccountId) -> Point {
    let mark = mark(e).await;
    let view = e.get_account(u).await.unwrap();
    let entries = e.ledger(u, None, 1000).await.unwrap().items;
    let last_entry = entries.last().map(|entry| entry.entry_id);
    Point {
        mark,
        view,
        last_entry,
    }
}

/// Every kind of change of `u`'s money and allowance pockets, a point after each.
async fn history(e: &Engine) -> Vec<Point> {
    let u = acct("u");
    put(e.store(), "u", "premium").await;
    let mut points = vec![point(e, &u).await];
    top_up(e.store(), "u", "10.00", "t1").await;
    points.push(point(e, &u).await);
    e.credit(&u, usd("1.50"), CreditKind::Bonus, &key("b1"))
        .await
        .unwrap();
    let amount = |s: &str| Usage::Amount(usd(s));
    e.debit(&u, &amount("0.25"), &key("d1"), None)
        .await
        .unwrap();
    points.push(point(e, &u).await);
    // A job held in money, leased, completed: held, then captured.
    let job = e.submit(&submit_req("u", "video", "v1")).await.unwrap().job;
    points.push(point(e, &u).await);
    let lease = e
        .lease("video_priority", &worker(), 60)
        .await
        .unwrap()
        .unwrap();
    e.complete(&job_id(&job.job_id), &lease.lease_token, None)
        .await
        .unwrap();
    points.push(point(e, &u).await);
    let refund = JobRefund {
        amount: Some(usd("0.10")),
        reason: "blank".into(),
        key: key("r1"),
    };
    e.refund_job(&job_id(&job.job_id), &refund).await.unwrap();
    e.refund(&u, &key("t1"), usd("2.00"), &key("r2"))
        .await
        .unwrap();
    points.push(point(e, &u).await);
    // Jobs of the allowance pockets: one held, one spent.
    let image = e.submit(&submit_req("u", "image", "i1")).await.unwrap().job;
    points.push(point(e, &u).await);
    let lease = e
        .lease("image_priority", &worker(), 60)
        .await
        .unwrap()
        .unwrap();
    e.complete(&job_id(&image.job_id), &lease.lease_token, None)
        .await
        .unwrap();
    e.submit(&submit_req("u", "image", "i2")).await.unwrap();
    points.push(point(e, &u).await);
    points
}

backend_test!(
    the_balance_at_each_point_is_the_account_as_it_stood_then,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        let points = history(&e).await;
        let u = acct("u");
        for (i, p) in points.iter().enumerate() {
            let at = e.balance_at(&u, p.mark - 1).await.unwrap();
            let v = &p.view;
            assert_eq!(
                (at.balance, at.held, at.available()),
                (v.balance, Some(v.held), Some(v.available)),
                "point {i}: {at:?}"
            );
            assert_eq!(at.last_entry_id, p.last_entry, "point {i}");
            let pockets: Vec<(&str, i64, Option<i64>)> = (at.allowances.iter())
                .map(|(name, pocket)| (name.as_str(), pocket.remaining, pocket.held))
                .collect();
            let stood: Vec<(&str, i64, Option<i64>)> = (v.allowances.iter())
                .map(|(name, pocket)| (name.as_str(), pocket.remaining, Some(pocket.held)))
                .collect();
            assert_eq!(pockets, stood, "point {i}");
            let statement = e.statement(&u, 0, p.mark).await.unwrap();
            assert_eq!(statement.closing, at.balance, "point {i}");
        }
        // Money was held and captured, a pocket held and spent: the history moved each.
        let views = || points.iter().map(|p| &p.view);
        assert!(views().any(|v| v.held > 0));
        assert!(views().any(|v| v.allowances.values().any(|p| p.held > 0)));
        assert!(views().any(|v| v.allowances.values().any(|p| p.remaining < p.quota)));
        // `at` is inclusive: at an entry's own time it counts, a microsecond before not.
        for entry in e.ledger(&u, None, 1000).await.unwrap().items {
            let then = e.balance_at(&u, entry.created_at).await.unwrap();
            assert!(then.last_entry_id >= Some(entry.entry_id), "{entry:?}");
            let just_before = e.balance_at(&u, entry.created_at - 1).await.unwrap();
            assert!(
                just_before.last_entry_id < Some(entry.entry_id),
                "{entry:?}"
            );
            if entry.pocket == "money" && then.last_entry_id == Some(entry.entry_id) {
                assert_eq!(then.balance, entry.amount_after, "{entry:?}");
            }
        }
        // Before its first entry the account had nothing: no pockets, no entry.
        let before = e.balance_at(&u, points[0].mark - 10_000_000).await.unwrap();
        assert_eq!(
            (before.balance, before.held, before.last_entry_id),
            (0, Some(0), None)
        );
        assert!(before.allowances.is_empty(), "{before:?}");
        let nobody = e.balance_at(&acct("nobody"), points[0].mark).await;
        assert_eq!(nobody.unwrap_err().to_string(), "no such account");
        assert_clean(e.store()).await;
    }
);

backend_test!(
    a_balance_read_while_debits_race_stands_at_one_entry,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put(e.store(), "r", "free").await;
        top_up(e.store(), "r", "10.00", "t").await;
        let u = acct("r");
        let mut tasks = Vec::new();
        for i in 0..24 {
            let (e, u) = (e.clone(), u.clone());
            tasks.push(tokio::spawn(async move {
                if i % 3 == 0 {
                    let now = e.period_end_now().await.unwrap() - 1;
                    return Some(e.balance_at(&u, now).await.unwrap());
                }
                let debit = Usage::Amount(usd("0.01"));
                e.debit(&u, &debit, &key(&format!("d{i}")), None)
                    .await
                    .unwrap();
                None
            }));
        }
        let mut reads = Vec::new();
        for task in tasks {
            reads.extend(task.await.unwrap());
        }
        let entries = e.ledger(&u, None, 1000).await.unwrap().items;
        assert_eq!(entries.iter().filter(|x| x.kind == "debit").count(), 16);
        // Each read is one snapshot: its balance is what its last entry left.
        for read in &reads {
            let last = entries
                .iter()
                .find(|x| Some(x.entry_id) == read.last_entry_id)
                .unwrap();
            let money = entries
                .iter()
                .rfind(|x| x.pocket == "money" && x.entry_id <= last.entry_id)
                .unwrap();
            assert_eq!(read.balance, money.amount_after, "{read:?}");
            assert_eq!(read.held, Some(0));
        }
        let end = e.balance_at(&u, e.period_end_now().await.unwrap()).await;
        assert_eq!(end.unwrap().balance, 10_000_000 - 16 * 10_000);
        assert_clean(e.store()).await;
    }
);
