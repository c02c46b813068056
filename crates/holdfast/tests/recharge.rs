//! Auto-recharge: `account.recharge_requested` once per fall below the account's line, on
//! every path that lowers available money (debit, ingest, hold, capture), never for a
//! rise or while already below, once for fifty concurrent debits, each request with its
//! own key; on SQLite and PostgreSQL.

use holdfast::decide::Recharge;
use holdfast::testing::*;
use holdfast::{DebitRequest, Engine, PutAccount, Usage, backend_test};
use serde_json::Value;

/// `u` on the free plan with an auto-recharge of 20.00 below 2.00 (or none).
async fn put_with(e: &Engine, recharge: Option<Option<Recharge>>) {
    let req = PutAccount {
        plan: "free".into(),
        plan_until: None,
        max_concurrent_jobs: Some(5),
        recharge,
        spend: None,
    };
    e.put_account(&acct("u"), &req).await.unwrap();
}

fn line() -> Option<Option<Recharge>> {
    Some(Some(Recharge {
        below: usd("2.00"),
        amount: usd("20.00"),
    }))
}

/// The recharge requests of `u`, once at least `n` are visible.
async fn requests(e: &Engine, n: usize) -> Vec<Value> {
    events_of(e.store(), "account.recharge_requested", n)
        .await
        .into_iter()
        .map(|ev| ev.data)
        .collect()
}

fn available(requests: &[Value]) -> Vec<i64> {
    requests
        .iter()
        .map(|r| r["available_micros"].as_i64().unwrap())
        .collect()
}

async fn debit(e: &Engine, amount: &str, k: &str) {
    e.debit(&acct("u"), &Usage::Amount(usd(amount)), &key(k), None)
        .await
        .unwrap();
}

backend_test!(
    a_recharge_is_asked_once_per_fall_below_the_line_on_every_path,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put_with(&e, line()).await;
        let view = e.get_account(&acct("u")).await.unwrap();
        assert_eq!(
            view.recharge,
            Some(Recharge {
                below: usd("2.00"),
                amount: usd("20.00")
            })
        );
        top_up(e.store(), "u", "3.00", "t1").await; // a rise asks nothing
        debit(&e, "1.00", "d1").await; // exactly 2.00: at the line is not below it
        debit(&e, "0.01", "d2").await; // 1.99: below
        debit(&e, "0.50", "d3").await; // still below: asked once
        let first = requests(&e, 1).await;
        assert_eq!(available(&first), [1_990_000]);
        assert_eq!(first[0]["amount"], "20.00");
        assert_eq!(first[0]["below_micros"], 2_000_000);
        top_up(e.store(), "u", "0.51", "t2").await; // back at 2.00
        let job = e.submit(&submit_req("u", "video", "v")).await.unwrap().job; // holds 0.50
        let l = e.lease("video", &worker(), 60).await.unwrap().unwrap();
        e.complete(&job_id(&job.job_id), &l.lease_token, None)
            .await
            .unwrap(); // captures it
        let two = requests(&e, 2).await;
        assert_eq!(
            available(&two),
            [1_990_000, 1_500_000],
            "the hold fell below, the capture did not"
        );
        assert_ne!(
            two[0]["idempotency_key"], two[1]["idempotency_key"],
            "a key per request"
        );
        // An ingest that goes across the line asks once.
        top_up(e.store(), "u", "1.00", "t3").await; // 2.50
        let items: Vec<_> = (0..5)
            .map(|i| {
                let usage = Usage::Amount(usd("0.20"));
                (
                    acct("u"),
                    DebitRequest::new(&usage, &key(&format!("i{i}")), None),
                )
            })
            .collect();
        for r in e.debit_many(&items).await.unwrap() {
            r.unwrap();
        }
        assert_eq!(
            available(&requests(&e, 3).await),
            [1_990_000, 1_500_000, 1_900_000]
        );
        // A PUT without `recharge` keeps it; with null it goes, and nothing is asked.
        put_with(&e, None).await;
        assert!(e.get_account(&acct("u")).await.unwrap().recharge.is_some());
        put_with(&e, Some(None)).await;
        assert_eq!(e.get_account(&acct("u")).await.unwrap().recharge, None);
        top_up(e.store(), "u", "5.00", "t4").await;
        debit(&e, "6.00", "d4").await;
        assert_eq!(requests(&e, 3).await.len(), 3);
        let refused = PutAccount {
            plan: "free".into(),
            plan_until: None,
            max_concurrent_jobs: None,
            recharge: Some(Some(Recharge {
                below: usd("1.00"),
                amount: holdfast::Micros(0),
            })),
            spend: None,
        };
        assert!(e.put_account(&acct("u"), &refused).await.is_err());
        assert_clean(e.store()).await;
    }
);

backend_test!(fifty_concurrent_debits_ask_once, |b| async move {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    put_with(&e, line()).await;
    top_up(e.store(), "u", "2.20", "t").await;
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            let e = e.clone();
            tokio::spawn(async move { debit(&e, "0.01", &format!("d{i}")).await })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    // 2.20 → 1.70: the 21st debit took it from 2.00 to 1.99, and only that one asks.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(available(&requests(&e, 1).await), [1_990_000]);
    assert_clean(e.store()).await;
});
