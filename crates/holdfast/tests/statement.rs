//! Statements on SQLite and PostgreSQL: for periods cut anywhere in a history of every
//! kind of money change, opening + the changes = closing, one period's closing is the
//! next one's opening, and the spending by job kind adds up to the debits and captures.

use holdfast::testing::*;
use holdfast::{CreditKind, Engine, JobRefund, Statement, Usage, backend_test};

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
    let mut marks = vec![e.now().await.unwrap()];
    put(e.store(), "u", "premium").await;
    top_up(e.store(), "u", "10.00", "t1").await;
    marks.push(e.now().await.unwrap());
    e.credit(&u, usd("1.50"), CreditKind::Bonus, &key("b1"))
        .await
        .unwrap();
    let amount = |s: &str| Usage::Amount(usd(s));
    e.debit(&u, &amount("0.25"), &key("d1"), None)
        .await
        .unwrap();
    marks.push(e.now().await.unwrap());
    let job = e.submit(&submit_req("u", "video", "v1")).await.unwrap().job;
    marks.push(e.now().await.unwrap());
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
    marks.push(e.now().await.unwrap());
    let refund = JobRefund {
        amount: Some(usd("0.10")),
        reason: "blank".into(),
        key: key("r1"),
    };
    e.refund_job(&job_id(&job.job_id), &refund).await.unwrap();
    e.refund(&u, &key("t1"), usd("2.00"), &key("r2"))
        .await
        .unwrap();
    marks.push(e.now().await.unwrap());
    e.submit(&submit_req("u", "video", "v2")).await.unwrap();
    marks.push(e.now().await.unwrap());
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
