//! Low-balance warnings: once per crossing of the plan's line each way, on every path
//! that changes available money (top-up, debit, batch, ingest, hold, release, capture,
//! refund), under concurrent debits, on SQLite and PostgreSQL.

use holdfast::testing::*;
use holdfast::{DebitRequest, Engine, Usage, backend_test};

/// The default card with a low-balance line of 2.00 on the free plan.
fn card() -> holdfast::RateCard {
    card_with(&[(
        "[plans.free]\nbuffer = \"1.00\"",
        "[plans.free]\nbuffer = \"1.00\"\nlow_balance = \"2.00\"",
    )])
}

/// The low-balance events, as (type, available_micros) in order, once at least `n` are
/// visible (on PostgreSQL the feed shows an event once older transactions of the shared
/// cluster have ended; see `events_of`).
async fn crossings(e: &Engine, n: usize) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for _ in 0..200 {
        let page = e
            .events(&holdfast::EventFilter {
                after: None,
                limit: 1000,
                account_id: Some("u".into()),
                event_type: None,
                actor: None,
            })
            .await
            .unwrap();
        out = page
            .items
            .into_iter()
            .filter(|ev| ev.event_type.starts_with("account.") && ev.event_type.contains("balance"))
            .map(|ev| (ev.event_type, ev.data["available_micros"].as_i64().unwrap()))
            .collect();
        if out.len() >= n {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    out
}

fn low(available: i64) -> (String, i64) {
    ("account.low_balance".into(), available)
}

fn recovered(available: i64) -> (String, i64) {
    ("account.balance_recovered".into(), available)
}

async fn debit(e: &Engine, amount: &str, k: &str) {
    e.debit(&acct("u"), &Usage::Amount(usd(amount)), &key(k), None)
        .await
        .unwrap();
}

backend_test!(
    the_line_is_crossed_once_each_way_on_every_path,
    |b| async move {
        let Some((_db, e)) = engine_with(b, card()).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(5)).await;
        top_up(e.store(), "u", "3.00", "t1").await; // from 0 up to 3.00: back above the line
        debit(&e, "1.00", "d1").await; // exactly 2.00: at the line is not below it
        assert_eq!(crossings(&e, 1).await, [recovered(3_000_000)]);
        debit(&e, "0.01", "d2").await; // 1.99: low
        debit(&e, "0.50", "d3").await; // still low: no repeat
        top_up(e.store(), "u", "0.51", "t2").await; // 2.00: recovered
        let job = e.submit(&submit_req("u", "video", "v")).await.unwrap().job; // holds 0.50
        let l = e.lease("video", &worker(), 60).await.unwrap().unwrap();
        e.fail(&job_id(&job.job_id), &l.lease_token, None)
            .await
            .unwrap(); // releases it
        assert_eq!(
            crossings(&e, 5).await,
            [
                recovered(3_000_000),
                low(1_990_000),
                recovered(2_000_000),
                low(1_500_000),
                recovered(2_000_000),
            ]
        );
        // A capture and a refund of it cross too.
        let job = e.submit(&submit_req("u", "video", "v2")).await.unwrap().job;
        let l = e.lease("video", &worker(), 60).await.unwrap().unwrap();
        e.complete(&job_id(&job.job_id), &l.lease_token, None)
            .await
            .unwrap();
        let refund = holdfast::JobRefund {
            amount: None,
            reason: "blank".into(),
            key: key("r"),
        };
        e.refund_job(&job_id(&job.job_id), &refund).await.unwrap();
        let all = crossings(&e, 7).await;
        assert_eq!(&all[5..], [low(1_500_000), recovered(2_000_000)]);
        // An ingest that goes across the line warns once.
        let items: Vec<_> = (0..5)
            .map(|i| {
                let usage = Usage::Amount(usd("0.10"));
                (
                    acct("u"),
                    DebitRequest::new(&usage, &key(&format!("i{i}")), None),
                )
            })
            .collect();
        for r in e.debit_many(&items).await.unwrap() {
            r.unwrap();
        }
        let all = crossings(&e, 8).await;
        assert_eq!(&all[7..], [low(1_900_000)]);
        assert_clean(e.store()).await;
    }
);

backend_test!(fifty_concurrent_debits_warn_once, |b| async move {
    let Some((_db, e)) = engine_with(b, card()).await else {
        return;
    };
    put(e.store(), "u", "free").await;
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
    // 2.20 → 1.70: the 21st debit took it from 2.00 to 1.99.
    assert_eq!(
        crossings(&e, 2).await,
        [recovered(2_200_000), low(1_990_000)]
    );
    // Quick flips: each crossing warns again.
    for i in 0..3 {
        top_up(e.store(), "u", "0.30", &format!("up{i}")).await;
        debit(&e, "0.30", &format!("down{i}")).await;
    }
    let flips = crossings(&e, 8).await;
    assert_eq!(flips.len(), 2 + 6);
    assert_eq!(&flips[2..4], [recovered(2_000_000), low(1_700_000)]);
    assert_clean(e.store()).await;
});
