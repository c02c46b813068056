//! The submit batcher's group commit (`Store::submit_many`) on SQLite and PostgreSQL:
//! every submit of a batch answers what the single submit answers when the same
//! submits run one after the other, item by item, and leaves the same books (account
//! views, the feed); concurrent submits through the engine, batched, never pass a
//! limit or the money.

use std::sync::Arc;

use holdfast::testing::*;
use holdfast::{Engine, Refusal, StoreError, Submit, Submitted, backend_test};
use holdfast_store::QueuedSubmit;

/// A card with a low-balance line of 1.00 on the free plan.
fn card() -> holdfast::RateCard {
    card_with(&[(
        "[plans.free]\nbuffer = \"1.00\"",
        "[plans.free]\nbuffer = \"1.00\"\nlow_balance = \"1.00\"",
    )])
}

const ACTOR: &str = "key:batched";

/// The accounts of the scenario: `a` (3 jobs at once, 1.20), `b` (1 job, 10.00), `c`
/// (blocked, 10.00), `d` (3 jobs, 1.20: a video takes it below the line), `e` (3 jobs,
/// 0.30: too little for a video; its daily images ran out a day ago, so a refill is
/// due); `a` already has a job under the key `old`.
async fn accounts(db: &TestDb, e: &Engine) {
    for (id, limit, money) in [
        ("a", 3, "1.20"),
        ("b", 1, "10.00"),
        ("c", 3, "10.00"),
        ("d", 3, "1.20"),
        ("e", 3, "0.30"),
    ] {
        put_limited(e.store(), id, "free", Some(limit)).await;
        top_up(e.store(), id, money, &format!("t-{id}")).await;
    }
    e.store().set_blocked(&acct("c"), true).await.unwrap();
    // d uses its three daily images, then the day passes.
    for i in 0..3 {
        let req = submit_req("d", "image", &format!("used-{i}"));
        let job = e.store().submit(&req).await.unwrap().job;
        let lease = e
            .store()
            .lease("image", &worker(), 60)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(lease.job.job_id, job.job_id);
        let id = job_id(&job.job_id);
        e.store()
            .complete(&id, &lease.lease_token, None)
            .await
            .unwrap();
    }
    let day_passed = "UPDATE allowances SET cycle_started_at = 0 \
                      WHERE account_id = 'd' AND pocket = 'daily_images'";
    behind_the_back(db, day_passed).await;
    e.store()
        .submit(&submit_req("a", "text", "old"))
        .await
        .unwrap();
}

/// The batch, in order: (account, kind, key).
const ITEMS: [(&str, &str, &str); 15] = [
    ("a", "image", "k1"),  // a daily image
    ("b", "video", "k2"),  // money
    ("a", "image", "k1"),  // the same submit again in this batch: its replay
    ("b", "video", "k4"),  // b may run one job: busy
    ("a", "video", "k5"),  // a's third open job (with `old`): money
    ("a", "video", "k6"),  // a fourth: busy
    ("zz", "video", "k7"), // no such account
    ("a", "nope", "k8"),   // no such kind
    ("c", "video", "k9"),  // blocked
    ("b", "image", "k2"),  // k2 was a video: mismatch
    ("a", "text", "old"),  // a job before the batch: its replay
    ("d", "video", "k10"), // below the line: an event
    ("e", "video", "k11"), // too little money
    ("d", "image", "k12"), // a daily image
    ("d", "image", "k13"), // another
];

fn submits() -> Vec<Submit> {
    ITEMS
        .iter()
        .map(|(a, kind, k)| {
            let mut s = submit_req(a, kind, k);
            s.account = holdfast::AccountId::parse(a).unwrap();
            s
        })
        .collect()
}

/// What an answer says, without one database's ids and times.
fn shape(r: &Result<Submitted, StoreError>) -> String {
    match r {
        Ok(s) => format!(
            "{} {:?} {:?} {:?} replay={} by {:?}",
            s.job.account_id,
            s.job.lane,
            s.job.status,
            s.job.hold,
            s.replay,
            s.job.actors.submitted
        ),
        Err(StoreError::Refused(r)) => format!("refused {}", r.code()),
        Err(e) => format!("error {e}"),
    }
}

/// What must agree between the twins: each account's view (times aside) and its feed.
async fn books(e: &Engine) -> Vec<String> {
    let mut out = Vec::new();
    for id in ["a", "b", "c", "d", "e"] {
        let mut v = e.store().get_account(&acct(id)).await.unwrap();
        assert!(v.last_active_at.is_some(), "{id}: activity stamped");
        v.last_active_at = None;
        v.created_at = 0;
        v.blocked_at = v.blocked_at.map(|_| 1);
        for p in v.allowances.values_mut() {
            (p.cycle_started_at, p.refills_at) = (0, None);
        }
        out.push(format!("{v:?}"));
        let filter = holdfast::EventFilter {
            limit: 1000,
            account_id: Some(id.into()),
            ..Default::default()
        };
        let feed = e.events(&filter).await.unwrap().items;
        let types: Vec<String> = feed
            .iter()
            .map(|ev| format!("{} by {:?}", ev.event_type, ev.actor))
            .collect();
        out.push(format!("{id} {types:?}"));
        let ledger = e.store().ledger(&acct(id), None, 1000).await.unwrap().items;
        let entries: Vec<String> = ledger
            .iter()
            .map(|l| {
                let (kind, pocket, actor) = (&l.kind, &l.pocket, &l.actor);
                format!(
                    "{kind} {pocket} {} {} by {actor:?}",
                    l.delta, l.amount_after
                )
            })
            .collect();
        out.push(format!("{id} {entries:?}"));
    }
    out
}

backend_test!(
    a_batch_of_submits_answers_what_the_single_submits_answer,
    |b| async move {
        let Some((db1, batched)) = engine_with(b, card()).await else {
            return;
        };
        let (db2, single) = engine_with(b, card()).await.unwrap();
        accounts(&db1, &batched).await;
        accounts(&db2, &single).await;
        let queued: Vec<QueuedSubmit> = submits()
            .into_iter()
            .map(|req| QueuedSubmit {
                req,
                actor: ACTOR.into(),
            })
            .collect();
        let got: Vec<String> = batched
            .store()
            .submit_many(&queued)
            .await
            .unwrap()
            .into_iter()
            .map(|r| shape(&r.map_err(StoreError::Refused)))
            .collect();
        let mut want = Vec::new();
        for req in submits() {
            let answer = holdfast::actor::acting_as(ACTOR, single.store().submit(&req)).await;
            want.push(shape(&answer));
        }
        assert_eq!(got, want);
        // The scenario has every answer it names.
        for needle in [
            "daily_images",
            "money",
            "replay=true",
            "refused busy",
            "refused account_not_found",
            "refused unknown_kind",
            "refused account_blocked",
            "refused idempotency_mismatch",
            "refused insufficient_funds",
        ] {
            assert!(
                got.iter().any(|g| g.contains(needle)),
                "{needle} in {got:#?}"
            );
        }
        // On PostgreSQL the feed shows an event once older transactions have ended.
        events_of(single.store(), "account.low_balance", 1).await;
        events_of(batched.store(), "account.low_balance", 1).await;
        let books = books(&batched).await;
        // Refills and low-balance events are the caller's, as alone.
        for needle in [
            format!("refill daily_images 3 3 by Some({ACTOR:?})"),
            format!("account.low_balance by Some({ACTOR:?})"),
        ] {
            // The books list each account's lines as Debug text, quotes escaped.
            let found = books.iter().any(|b| b.replace('\\', "").contains(&needle));
            assert!(found, "{needle} in {books:#?}");
        }
        assert_eq!(books, self::books(&single).await);
        assert_clean(batched.store()).await;
        assert_clean(single.store()).await;
    }
);

backend_test!(
    a_submit_batch_whose_write_fails_writes_nothing,
    |b| async move {
        let Some((db, e)) = engine_with(b, card()).await else {
            return;
        };
        accounts(&db, &e).await;
        assert!(e.store().submit_many(&[]).await.unwrap().is_empty());
        // The write of the second job breaks a constraint made for the test (a write
        // can also fail for a full disk, a lost connection): the batch fails whole.
        let queued: Vec<QueuedSubmit> = ["x1", "x2"]
            .iter()
            .map(|k| QueuedSubmit {
                req: submit_req("d", "text", k),
                actor: ACTOR.into(),
            })
            .collect();
        let before = e.store().get_account(&acct("d")).await.unwrap();
        db.execute("CREATE UNIQUE INDEX no_second_text ON jobs (account_id) WHERE kind = 'text'")
            .await;
        let failed = e.store().submit_many(&queued).await;
        assert!(failed.is_err(), "{failed:?}");
        let after = e.store().get_account(&acct("d")).await.unwrap();
        let pockets = |v: &holdfast::AccountView| -> Vec<(i64, i64)> {
            v.allowances
                .values()
                .map(|p| (p.remaining, p.held))
                .collect()
        };
        assert_eq!(
            (after.held, after.open_jobs, pockets(&after)),
            (before.held, before.open_jobs, pockets(&before))
        );
        db.execute("DROP INDEX no_second_text").await;
        let answers = e.store().submit_many(&queued).await.unwrap();
        assert!(answers.iter().all(Result::is_ok), "{answers:?}");
        let after = e.store().get_account(&acct("d")).await.unwrap();
        assert_eq!(after.open_jobs, before.open_jobs + 2);
        assert_clean(e.store()).await;
    }
);

backend_test!(
    submits_racing_through_the_batcher_keep_every_limit_and_the_money,
    |b| async move {
        let Some((_db, e)) = engine_with(b, card()).await else {
            return;
        };
        // Eight accounts, 3 jobs at once each and money for 2 videos (1.00 + the
        // buffer does not count for holds); 24 submits each, all at once.
        let accounts: Vec<String> = (0..8).map(|i| format!("r{i}")).collect();
        for a in &accounts {
            put_limited(e.store(), a, "free", Some(3)).await;
            top_up(e.store(), a, "1.00", &format!("t-{a}")).await;
        }
        let e = Arc::new(e);
        let mut tasks = Vec::new();
        for i in 0..192 {
            let (e, a) = (e.clone(), accounts[i % 8].clone());
            let kind = if i % 3 == 0 { "image" } else { "video" };
            tasks.push(tokio::spawn(async move {
                e.submit(&submit_req(&a, kind, &format!("s-{i}"))).await
            }));
        }
        let mut accepted = std::collections::BTreeMap::<String, i64>::new();
        for t in tasks {
            match t.await.unwrap() {
                Ok(s) => {
                    assert!(!s.replay);
                    *accepted.entry(s.job.account_id).or_default() += 1;
                }
                Err(StoreError::Refused(Refusal::Busy | Refusal::InsufficientFunds)) => {}
                Err(other) => panic!("{other:?}"),
            }
        }
        for a in &accounts {
            let v = e.store().get_account(&acct(a)).await.unwrap();
            assert!(v.open_jobs <= 3, "{a}: {}", v.open_jobs);
            assert_eq!(accepted.get(a).copied().unwrap_or(0), v.open_jobs, "{a}");
            assert!(v.available >= 0 && v.held <= 1_000_000, "{a}: {v:?}");
        }
        assert_clean(e.store()).await;
    }
);
