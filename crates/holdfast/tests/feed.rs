//! The event feed that only its own writers can hold back (docs/DESIGN.md "The event
//! feed"). On PostgreSQL events are ordered by positions stamped after commit; a
//! transaction elsewhere on the cluster, however long, must not delay them. SQLite has one
//! writer at a time and needs no stamp; the cursor test runs on both.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use holdfast::testing::*;
use holdfast::{Engine, EventFilter, Grant, backend_test};
use sqlx::{Connection, PgConnection};

/// Whether a transaction holding an xid has been open over a second somewhere on the
/// cluster (so the test really runs under the stall it is about).
async fn xmin_held_back(url: &str) -> bool {
    let mut c = PgConnection::connect(url).await.expect("connect");
    let held: bool = sqlx::query_scalar(
        "SELECT count(*) > 0 FROM pg_stat_activity \
         WHERE backend_xid IS NOT NULL AND state = 'idle in transaction' \
           AND xact_start < now() - interval '1 second'",
    )
    .fetch_one(&mut c)
    .await
    .unwrap();
    held
}

/// The ids of every event after `after`, page by page (7 a page) until one is empty.
async fn read_to_the_end(e: &Engine, mut after: Option<i64>) -> Vec<i64> {
    let mut ids = vec![];
    loop {
        let page = e
            .store()
            .events(&EventFilter {
                after,
                limit: 7,
                ..Default::default()
            })
            .await
            .unwrap();
        if page.items.is_empty() {
            return ids;
        }
        ids.extend(page.items.iter().map(|ev| ev.event_id));
        after = page.next;
    }
}

/// Submits, leases and completes one video job; returns its id.
async fn finish_a_job(e: &Engine, n: usize) -> String {
    let account = format!("feed-{n}");
    put(e.store(), &account, "free").await;
    top_up(e.store(), &account, "5.00", &format!("t-{n}")).await;
    let job = e
        .submit(&submit_req(&account, "video", &format!("s-{n}")))
        .await
        .unwrap()
        .job;
    let lease = e
        .store()
        .lease("video", &worker(), 60)
        .await
        .unwrap()
        .expect("the job is queued");
    e.complete(&job_id(&job.job_id), &lease.lease_token, None)
        .await
        .unwrap();
    job.job_id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_long_transaction_elsewhere_does_not_hold_the_feed_back() {
    let Some((db, e)) = engine(Backend::Postgres).await else {
        return;
    };
    // One writer in another database of the cluster, one in this database outside
    // holdfast's tables: before the sequencer, either held every event back for as long
    // as it stayed open.
    let mut elsewhere = open_xid_holder(&admin_url()).await;
    let mut here = open_xid_holder(&db.url).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(xmin_held_back(&db.url).await, "the blockers hold an xid");

    for n in 0..3 {
        let job = finish_a_job(&e, n).await;
        let finished = Instant::now();
        let filter = EventFilter {
            limit: 1000,
            event_type: Some("job.succeeded".into()),
            ..Default::default()
        };
        loop {
            let listed = e.store().events(&filter).await.unwrap().items;
            if listed.iter().any(|ev| ev.job_id.as_deref() == Some(&job)) {
                break;
            }
            assert!(
                finished.elapsed() < Duration::from_secs(2),
                "job.succeeded of {job} not listed 2 s after its commit"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    assert!(xmin_held_back(&db.url).await, "still under the stall");
    sqlx::query("ROLLBACK").execute(&mut here).await.unwrap();
    sqlx::query("ROLLBACK")
        .execute(&mut elsewhere)
        .await
        .unwrap();
}

backend_test!(
    a_cursor_sees_every_event_once_in_an_order_that_never_moves,
    |b| async move {
        let Some((db, e)) = engine(b).await else {
            return;
        };
        let blocker = match b {
            Backend::Postgres => Some(open_xid_holder(&admin_url()).await),
            Backend::Sqlite => None,
        };
        for n in 0..4 {
            put(e.store(), &format!("w-{n}"), "free").await;
        }
        // Four writers grant allowance items (two events each), while a reader follows
        // the cursor.
        let writers: Vec<_> = (0..4)
            .map(|n| {
                let e = e.clone();
                tokio::spawn(async move {
                    for i in 0..25 {
                        let grant = Grant {
                            pocket: "daily_images".into(),
                            amount: 1,
                            reason: "feed test".into(),
                            key: key(&format!("g-{n}-{i}")),
                        };
                        e.grant(&acct(&format!("w-{n}")), &grant).await.unwrap();
                    }
                })
            })
            .collect();
        let mut seen: Vec<i64> = vec![];
        let mut cursor = None;
        let read = |after: Option<i64>| {
            let e = e.clone();
            async move {
                e.store()
                    .events(&EventFilter {
                        after,
                        limit: 7,
                        ..Default::default()
                    })
                    .await
                    .unwrap()
            }
        };
        while !writers.iter().all(|w| w.is_finished()) {
            let page = read(cursor).await;
            seen.extend(page.items.iter().map(|ev| ev.event_id));
            cursor = page.next;
        }
        seen.extend(read_to_the_end(&e, cursor).await);
        for w in writers {
            w.await.unwrap();
        }
        let written = db.query_i64("SELECT count(*) FROM events").await;
        assert_eq!(written, 200, "four writers × 25 grants × 2 events");
        let unique: BTreeSet<i64> = seen.iter().copied().collect();
        assert_eq!(unique.len(), seen.len(), "no event twice");
        assert_eq!(seen.len() as i64, written, "every event once");
        // The order the cursor saw is the order a reader from the start sees now.
        let from_start = read_to_the_end(&e, None).await;
        assert_eq!(seen, from_start, "the order never moved");
        if let Some(mut c) = blocker {
            sqlx::query("ROLLBACK").execute(&mut c).await.unwrap();
        }
        assert_clean(e.store()).await;
    }
);
