//! Jobs and two-phase holds on SQLite and PostgreSQL, each scenario followed by the audit.

use std::collections::BTreeSet;
use std::time::Duration;

use holdfast::core::refusal::Known;
use holdfast::testing::*;
use holdfast::{
    Engine, JobStatus, PocketAmount, Refusal, StoreError, Usage, WorkerId, backend_test,
};
use holdfast_store::CancelOutcome;

async fn submit(
    e: &Engine,
    account: &str,
    kind: &str,
    k: &str,
) -> Result<holdfast::Job, StoreError> {
    e.submit(&submit_req(account, kind, k)).await.map(|s| s.job)
}

fn money(amount: i64) -> Vec<PocketAmount> {
    vec![PocketAmount {
        pocket: "money".into(),
        amount,
        blocks: Vec::new(),
    }]
}

/// A card where the free plan has exactly one daily image.
fn one_image_card() -> holdfast::RateCard {
    card_with(&[(
        "allowances = { daily_messages = 10, daily_images = 3 }",
        "allowances = { daily_messages = 10, daily_images = 1 }",
    )])
}

/// `n` submits of `kind` for `account` at once, each with its own key: (jobs, busy).
async fn race_submits(
    e: &Engine,
    account: &'static str,
    kind: &'static str,
    n: usize,
) -> (usize, usize) {
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let e = e.clone();
            tokio::spawn(async move { submit(&e, account, kind, &format!("click-{i}")).await })
        })
        .collect();
    let (mut jobs, mut busy) = (0, 0);
    for t in tasks {
        match t.await.unwrap() {
            Ok(_) => jobs += 1,
            Err(StoreError::Refused(Refusal::Busy)) => busy += 1,
            Err(other) => panic!("unexpected {other}"),
        }
    }
    (jobs, busy)
}

backend_test!(the_impatient_finger_gets_one_job, |b| async move {
    let Some((_db, e)) = engine_with(b, one_image_card()).await else {
        return;
    };
    put(e.store(), "u", "free").await;
    assert_eq!(race_submits(&e, "u", "image", 20).await, (1, 19));
    assert_clean(e.store()).await;
});

backend_test!(the_same_key_twenty_times_is_one_job, |b| async move {
    let Some((_db, e)) = engine_with(b, one_image_card()).await else {
        return;
    };
    put(e.store(), "u", "free").await;
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let e = e.clone();
            tokio::spawn(async move { e.submit(&submit_req("u", "image", "click")).await })
        })
        .collect();
    let mut ids = BTreeSet::new();
    let mut replays = 0;
    for t in tasks {
        let s = t.await.unwrap().unwrap();
        ids.insert(s.job.job_id);
        replays += usize::from(s.replay);
    }
    assert_eq!((ids.len(), replays), (1, 19));
    let a = e.store().get_account(&acct("u")).await.unwrap();
    assert_eq!(a.allowances["daily_images"].held, 1);
    assert_eq!(a.open_jobs, 1);
    assert_clean(e.store()).await;
});

backend_test!(
    raising_the_limit_allows_parallel_jobs_and_still_refuses_one_more,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put(e.store(), "u", "free").await;
        top_up(e.store(), "u", "5.00", "t").await;
        put_limited(e.store(), "u", "free", Some(3)).await;
        for i in 0..3 {
            submit(&e, "u", "video", &format!("v{i}")).await.unwrap();
        }
        assert_eq!(refused(submit(&e, "u", "video", "v3").await), Refusal::Busy);
        // Duplicate protection is the key, not the limit: a replay still answers.
        assert!(
            e.submit(&submit_req("u", "video", "v0"))
                .await
                .unwrap()
                .replay
        );
        let a = e.store().get_account(&acct("u")).await.unwrap();
        assert_eq!((a.held, a.open_jobs), (1_500_000, 3));
        assert_clean(e.store()).await;
    }
);

backend_test!(complete_ten_times_charges_once, |b| async move {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    put(e.store(), "u", "premium").await;
    top_up(e.store(), "u", "1.00", "t").await;
    let job = submit(&e, "u", "video", "v").await.unwrap();
    let lease = e
        .store()
        .lease("video_priority", &worker(), 60)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(lease.job.job_id, job.job_id);
    let tasks: Vec<_> = (0..10)
        .map(|_| {
            let (e, token, id) = (e.clone(), lease.lease_token.clone(), job.job_id.clone());
            tokio::spawn(async move { e.store().complete(&job_id(&id), &token, None).await })
        })
        .collect();
    for t in tasks {
        let j = t.await.unwrap().unwrap();
        assert_eq!(j.status, JobStatus::Succeeded);
        assert_eq!(j.charged, money(500_000));
    }
    let a = e.store().get_account(&acct("u")).await.unwrap();
    assert_eq!((a.balance, a.held, a.total_spent), (500_000, 0, 500_000));
    let events = events_of(e.store(), "job.succeeded", 1).await;
    assert_eq!(events.len(), 1);
    // A different finishing call on a finished job.
    assert_eq!(
        refused(
            e.store()
                .fail(&job_id(&job.job_id), &lease.lease_token, None)
                .await
        ),
        Refusal::AlreadyFinished
    );
    assert_clean(e.store()).await;
});

backend_test!(
    a_dead_worker_is_swept_and_its_late_complete_charges_nothing,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put(e.store(), "u", "free").await;
        top_up(e.store(), "u", "1.00", "t").await;
        let job = submit(&e, "u", "video", "v").await.unwrap();
        let lease = e
            .store()
            .lease("video", &worker(), 1)
            .await
            .unwrap()
            .unwrap();
        // The lease is invalid once the database clock passes its expiry, sweeper or not.
        tokio::time::sleep(Duration::from_millis(1200)).await;
        assert_eq!(
            refused(
                e.store()
                    .heartbeat(&job_id(&job.job_id), &lease.lease_token)
                    .await
            ),
            Refusal::LeaseLost
        );
        let report = e.store().sweep(1000).await.unwrap();
        assert_eq!(report.processed, 1);
        assert_eq!(
            e.store().sweep(1000).await.unwrap().processed,
            0,
            "idempotent"
        );
        let swept = e.store().get_job(&job_id(&job.job_id)).await.unwrap();
        assert_eq!(swept.status, JobStatus::Expired);
        assert!(swept.charged.is_empty());
        assert_eq!(
            refused(
                e.store()
                    .complete(&job_id(&job.job_id), &lease.lease_token, None)
                    .await
            ),
            Refusal::LeaseLost
        );
        let a = e.store().get_account(&acct("u")).await.unwrap();
        assert_eq!((a.balance, a.held, a.open_jobs), (1_000_000, 0, 0));
        // The account is free again.
        submit(&e, "u", "video", "v2").await.unwrap();
        let expired = events_of(e.store(), "job.expired", 1).await;
        assert_eq!(expired.len(), 1);
        assert_clean(e.store()).await;
    }
);

backend_test!(
    stale_jobs_are_swept_even_when_they_heartbeat,
    |b| async move {
        let card = card_with(&[
            ("stale_after_seconds = 1800", "stale_after_seconds = 2"),
            ("lease_seconds = 60", "lease_seconds = 1"),
        ]);
        let Some((_db, e)) = engine_with(b, card).await else {
            return;
        };
        put(e.store(), "u", "free").await;
        let job = submit(&e, "u", "text", "t").await.unwrap();
        let l = e.lease("text", &worker(), 1).await.unwrap().unwrap();
        let id = job_id(&job.job_id);
        // A live worker: a heartbeat every 300 ms keeps the 1 s lease from expiring, well
        // past the 2 s stale deadline.
        let started = std::time::Instant::now();
        let mut swept_while_young = 0;
        while started.elapsed() < Duration::from_millis(2300) {
            let hb = e.heartbeat(&id, &l.lease_token).await.unwrap();
            assert!(!hb.cancel_requested);
            if started.elapsed() < Duration::from_millis(1500) {
                swept_while_young += e.store().sweep(10).await.unwrap().processed;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        assert_eq!(
            swept_while_young, 0,
            "a heartbeating job younger than the deadline stays"
        );
        assert_eq!(e.store().sweep(10).await.unwrap().processed, 1);
        let swept = e.get_job(&id).await.unwrap();
        assert_eq!(swept.status, JobStatus::Expired);
        assert!(swept.failure_reason.unwrap().starts_with("stale"));
        assert_eq!(
            refused(e.heartbeat(&id, &l.lease_token).await),
            Refusal::LeaseLost,
            "the worker learns on its next heartbeat"
        );
        let a = e.store().get_account(&acct("u")).await.unwrap();
        assert_eq!(a.allowances["daily_messages"].held, 0);
        assert_clean(e.store()).await;
    }
);

backend_test!(
    two_sweepers_release_a_thousand_stale_jobs_in_chunks_each_once,
    |b| async move {
        let card = card_with(&[
            ("stale_after_seconds = 1800", "stale_after_seconds = 1"),
            ("lease_seconds = 60", "lease_seconds = 1"),
        ]);
        let Some((_db, e)) = engine_with(b, card).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(1000)).await;
        top_up(e.store(), "u", "500.00", "t").await;
        for i in 0..1000 {
            submit(&e, "u", "video", &format!("v{i}")).await.unwrap();
        }
        assert_eq!(e.get_account(&acct("u")).await.unwrap().held, 500_000_000);
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let sweepers: Vec<_> = (0..2)
            .map(|_| {
                let e = e.clone();
                tokio::spawn(async move { e.store().sweep(1000).await.unwrap().processed })
            })
            .collect();
        let mut processed = 0;
        for s in sweepers {
            processed += s.await.unwrap();
        }
        // 1,000 jobs are ten chunks of PASS_CHUNK (100); between the two sweepers and a
        // last pass for what a chunk raced past, every job expires exactly once.
        processed += e.store().sweep(1000).await.unwrap().processed;
        assert_eq!(processed, 1000);
        let a = e.get_account(&acct("u")).await.unwrap();
        assert_eq!((a.held, a.balance, a.open_jobs), (0, 500_000_000, 0));
        assert_eq!(events_of(e.store(), "job.expired", 1000).await.len(), 1000);
        assert_clean(e.store()).await;
    }
);

backend_test!(cancel_and_lease_race_never_both_win, |b| async move {
    let card = card_with(&[(
        "max_concurrent_jobs = 1\npriority = false",
        "max_concurrent_jobs = 1000\npriority = false",
    )]);
    let Some((_db, e)) = engine_with(b, card).await else {
        return;
    };
    put(e.store(), "u", "free").await;
    top_up(e.store(), "u", "200.00", "t").await;
    let mut ids = Vec::new();
    for i in 0..200 {
        ids.push(
            submit(&e, "u", "video", &format!("v{i}"))
                .await
                .unwrap()
                .job_id,
        );
    }
    let cancels: Vec<_> = ids
        .iter()
        .map(|id| {
            let (e, id) = (e.clone(), id.clone());
            tokio::spawn(async move { e.store().cancel(&job_id(&id)).await })
        })
        .collect();
    let leaser = {
        let e = e.clone();
        tokio::spawn(async move {
            let mut leases = Vec::new();
            while let Some(l) = e.store().lease("video", &worker(), 60).await.unwrap() {
                leases.push(l);
            }
            leases
        })
    };
    let mut canceled = BTreeSet::new();
    for c in cancels {
        match c.await.unwrap() {
            Ok((j, CancelOutcome::Canceled)) => {
                canceled.insert(j.job_id);
            }
            Ok((_, CancelOutcome::Requested)) => {} // cooperative kind already running
            Err(StoreError::Refused(Refusal::AlreadyStarted)) => {}
            Err(other) => panic!("unexpected {other}"),
        }
    }
    // Drain anything the leaser had not reached when the cancels finished.
    let mut leases = leaser.await.unwrap();
    while let Some(l) = e.store().lease("video", &worker(), 60).await.unwrap() {
        leases.push(l);
    }
    for l in &leases {
        assert!(
            !canceled.contains(&l.job.job_id),
            "job {} both canceled and leased",
            l.job.job_id
        );
        let j = e
            .store()
            .complete(&job_id(&l.job.job_id), &l.lease_token, None)
            .await
            .unwrap();
        assert!(matches!(
            j.status,
            JobStatus::Succeeded | JobStatus::Canceled
        ));
        assert_eq!(j.charged, money(500_000));
    }
    assert_eq!(canceled.len() + leases.len(), 200);
    for id in &canceled {
        let j = e.store().get_job(&job_id(id)).await.unwrap();
        assert!(j.charged.is_empty() && j.status == JobStatus::Canceled);
    }
    let a = e.store().get_account(&acct("u")).await.unwrap();
    assert_eq!(a.held, 0);
    assert_eq!(a.total_spent, 500_000 * leases.len() as i64);
    assert_clean(e.store()).await;
});

backend_test!(
    eight_workers_lease_five_hundred_jobs_exactly_once,
    |b| async move {
        let card = card_with(&[(
            "max_concurrent_jobs = 1\npriority = false",
            "max_concurrent_jobs = 1000\npriority = false",
        )]);
        let Some((_db, e)) = engine_with(b, card).await else {
            return;
        };
        put(e.store(), "u", "free").await;
        for i in 0..500 {
            submit(&e, "u", "ci", &format!("c{i}")).await.unwrap();
        }
        let workers: Vec<_> = (0..8)
            .map(|w| {
                let e = e.clone();
                tokio::spawn(async move {
                    let name = WorkerId::parse(&format!("w{w}")).unwrap();
                    let mut got = Vec::new();
                    while let Some(l) = e.store().lease("runners", &name, 60).await.unwrap() {
                        got.push(l.job.job_id);
                    }
                    got
                })
            })
            .collect();
        let mut all = Vec::new();
        for w in workers {
            all.extend(w.await.unwrap());
        }
        let unique: BTreeSet<_> = all.iter().cloned().collect();
        assert_eq!(all.len(), 500);
        assert_eq!(unique.len(), 500);
        assert_clean(e.store()).await;
    }
);

backend_test!(pockets_are_taken_in_order, |b| async move {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    let s = e.store();
    put(s, "u", "free").await;
    top_up(s, "u", "1.00", "t").await;
    for i in 0..4 {
        let j = submit(&e, "u", "image", &format!("i{i}")).await.unwrap();
        let expected = if i < 3 {
            vec![PocketAmount {
                pocket: "daily_images".into(),
                amount: 1,
                blocks: Vec::new(),
            }]
        } else {
            money(40_000)
        };
        assert_eq!(j.hold, expected, "image {i}");
        let l = s.lease("image", &worker(), 60).await.unwrap().unwrap();
        let done = s
            .complete(&job_id(&l.job.job_id), &l.lease_token, None)
            .await
            .unwrap();
        assert_eq!(done.charged, expected);
    }
    let a = s.get_account(&acct("u")).await.unwrap();
    assert_eq!(
        (a.balance, a.allowances["daily_images"].remaining),
        (960_000, 0)
    );
    // Premium text holds nothing but still counts toward the concurrency limit.
    put(s, "p", "premium").await;
    let t = submit(&e, "p", "text", "t1").await.unwrap();
    assert!(t.hold.is_empty());
    assert_eq!(t.lane, "text_priority");
    assert_eq!(refused(submit(&e, "p", "text", "t2").await), Refusal::Busy);
    assert_clean(s).await;
});

backend_test!(
    capture_floors_at_zero_after_a_refill_to_a_lower_quota,
    |b| async move {
        let card = card_with(&[
            (
                "[allowances.daily_images]\nrefill_every_seconds = 86400",
                "[allowances.daily_images]\nrefill_every_seconds = 1",
            ),
            (
                "allowances = { daily_messages = 10, daily_images = 3 }",
                "allowances = { daily_messages = 10, daily_images = 0 }",
            ),
        ]);
        let Some((_db, e)) = engine_with(b, card).await else {
            return;
        };
        let s = e.store();
        put(s, "u", "premium").await;
        let job = submit(&e, "u", "image", "i").await.unwrap();
        assert_eq!(
            job.hold,
            vec![PocketAmount {
                pocket: "daily_images".into(),
                amount: 1,
                blocks: Vec::new(),
            }]
        );
        let l = s
            .lease("image_priority", &worker(), 60)
            .await
            .unwrap()
            .unwrap();
        put(s, "u", "free").await; // quota 0 from the next refill on
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let a = s.activity(&acct("u")).await.unwrap();
        assert_eq!(a.allowances["daily_images"].remaining, 0);
        assert_eq!(a.allowances["daily_images"].held, 1);
        let done = s
            .complete(&job_id(&job.job_id), &l.lease_token, None)
            .await
            .unwrap();
        assert_eq!(done.status, JobStatus::Succeeded);
        assert!(
            done.charged.iter().all(|c| c.amount == 0),
            "charged is the actual decrease: {:?}",
            done.charged
        );
        let a = s.get_account(&acct("u")).await.unwrap();
        assert_eq!(
            (
                a.allowances["daily_images"].remaining,
                a.allowances["daily_images"].held
            ),
            (0, 0)
        );
        assert_clean(s).await;
    }
);

backend_test!(
    metered_work_holds_nothing_and_debits_carry_its_job_ref,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        let s = e.store();
        put(s, "ci", "free").await;
        top_up(s, "ci", "1.00", "t").await;
        let job = submit(&e, "ci", "ci", "run-1").await.unwrap();
        assert!(job.hold.is_empty());
        assert_eq!(
            refused(submit(&e, "ci", "ci", "run-2").await),
            Refusal::Busy
        );
        let l = s.lease("runners", &worker(), 60).await.unwrap().unwrap();
        let usage = Usage::Metered {
            meter: "linux-small".into(),
            seconds: 60,
        };
        let d = s
            .debit(&acct("ci"), &usage, &key("bill-1"), Some(&job.job_id))
            .await
            .unwrap();
        assert_eq!(d.entry.reference.as_deref(), Some(job.job_id.as_str()));
        assert_eq!(d.entry.delta, -6_000);
        let done = s
            .complete(&job_id(&job.job_id), &l.lease_token, None)
            .await
            .unwrap();
        assert!(done.charged.is_empty());
        assert_clean(s).await;
    }
);

backend_test!(lanes_keep_priority_apart, |b| async move {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    let s = e.store();
    put(s, "free-1", "free").await;
    put(s, "prem-1", "premium").await;
    let f = submit(&e, "free-1", "image", "a").await.unwrap();
    let p = submit(&e, "prem-1", "image", "b").await.unwrap();
    assert_eq!(
        (f.lane.as_str(), p.lane.as_str()),
        ("image", "image_priority")
    );
    let lp = s
        .lease("image_priority", &worker(), 60)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(lp.job.job_id, p.job_id);
    assert!(
        s.lease("image_priority", &worker(), 60)
            .await
            .unwrap()
            .is_none()
    );
    let lf = s.lease("image", &worker(), 60).await.unwrap().unwrap();
    assert_eq!(lf.job.job_id, f.job_id);
    assert_eq!(
        refused(s.lease("nope", &worker(), 60).await),
        Refusal::UnknownLane("nope".into(), Known(s.card().lanes()))
    );
    assert_clean(s).await;
});

backend_test!(
    a_suspended_accounts_queue_waits_for_a_top_up,
    |b| async move {
        let card = card_with(&[(
            "max_concurrent_jobs = 1\npriority = false",
            "max_concurrent_jobs = 5\npriority = false",
        )]);
        let Some((_db, e)) = engine_with(b, card).await else {
            return;
        };
        let s = e.store();
        put(s, "u", "free").await;
        top_up(s, "u", "1.00", "t").await;
        let running = submit(&e, "u", "video", "v1").await.unwrap();
        let l = s.lease("video", &worker(), 60).await.unwrap().unwrap();
        let queued = submit(&e, "u", "ci", "c1").await.unwrap();
        // Metered usage of the running work takes the balance below zero: suspended.
        s.debit(&acct("u"), &Usage::Amount(usd("1.20")), &key("d"), None)
            .await
            .unwrap();
        assert!(
            s.get_account(&acct("u"))
                .await
                .unwrap()
                .suspended_at
                .is_some()
        );
        assert!(
            s.lease("runners", &worker(), 60).await.unwrap().is_none(),
            "suspended: not leased"
        );
        assert_eq!(
            refused(submit(&e, "u", "ci", "c2").await),
            Refusal::AccountSuspended
        );
        // The running job completes normally.
        let done = s
            .complete(&job_id(&running.job_id), &l.lease_token, None)
            .await
            .unwrap();
        assert_eq!(done.charged, money(500_000));
        top_up(s, "u", "2.00", "t2").await;
        assert!(
            s.get_account(&acct("u"))
                .await
                .unwrap()
                .suspended_at
                .is_none()
        );
        let l2 = s.lease("runners", &worker(), 60).await.unwrap().unwrap();
        assert_eq!(l2.job.job_id, queued.job_id);
        assert_clean(s).await;
    }
);

backend_test!(a_blocked_accounts_queue_is_not_leased, |b| async move {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    let s = e.store();
    put(s, "u", "free").await;
    submit(&e, "u", "text", "t").await.unwrap();
    s.set_blocked(&acct("u"), true).await.unwrap();
    assert!(s.lease("text", &worker(), 60).await.unwrap().is_none());
    assert_eq!(
        refused(submit(&e, "u", "text", "t2").await),
        Refusal::AccountBlocked
    );
    s.set_blocked(&acct("u"), false).await.unwrap();
    assert!(s.lease("text", &worker(), 60).await.unwrap().is_some());
    assert_clean(s).await;
});

backend_test!(cancel_follows_the_contract, |b| async move {
    let card = card_with(&[(
        "max_concurrent_jobs = 1\npriority = false",
        "max_concurrent_jobs = 5\npriority = false",
    )]);
    let Some((_db, e)) = engine_with(b, card).await else {
        return;
    };
    let s = e.store();
    put(s, "u", "free").await;
    top_up(s, "u", "5.00", "t").await;
    // queued → canceled, hold released; a repeat returns it.
    let q = submit(&e, "u", "video", "q").await.unwrap();
    let (j, outcome) = s.cancel(&job_id(&q.job_id)).await.unwrap();
    assert_eq!(
        (j.status, outcome),
        (JobStatus::Canceled, CancelOutcome::Canceled)
    );
    assert_eq!(
        s.cancel(&job_id(&q.job_id)).await.unwrap().0.status,
        JobStatus::Canceled
    );
    assert_eq!(s.get_account(&acct("u")).await.unwrap().held, 0);
    // running, refuse policy → already_started.
    let img = submit(&e, "u", "image", "img").await.unwrap();
    let li = s.lease("image", &worker(), 60).await.unwrap().unwrap();
    assert_eq!(
        refused(s.cancel(&job_id(&img.job_id)).await),
        Refusal::AlreadyStarted
    );
    s.complete(&job_id(&img.job_id), &li.lease_token, None)
        .await
        .unwrap();
    assert_eq!(
        refused(s.cancel(&job_id(&img.job_id)).await),
        Refusal::AlreadyFinished
    );
    // running, cooperative → requested; the worker sees it and captures part.
    let v = submit(&e, "u", "video", "v").await.unwrap();
    let lv = s.lease("video", &worker(), 60).await.unwrap().unwrap();
    let (_, outcome) = s.cancel(&job_id(&v.job_id)).await.unwrap();
    assert_eq!(outcome, CancelOutcome::Requested);
    assert!(
        s.heartbeat(&job_id(&v.job_id), &lv.lease_token)
            .await
            .unwrap()
            .cancel_requested
    );
    let part = money(100_000);
    let done = s
        .complete(&job_id(&v.job_id), &lv.lease_token, Some(&part))
        .await
        .unwrap();
    assert_eq!(
        (done.status, done.charged.clone()),
        (JobStatus::Canceled, part)
    );
    // The same complete again returns the same job and charges nothing more.
    let again = s
        .complete(&job_id(&v.job_id), &lv.lease_token, Some(&money(100_000)))
        .await
        .unwrap();
    assert_eq!(again, done);
    let a = s.get_account(&acct("u")).await.unwrap();
    assert_eq!((a.balance, a.held), (5_000_000 - 100_000, 0));
    // A capture above the hold or of a pocket not held is refused and changes nothing.
    let w = submit(&e, "u", "video", "w").await.unwrap();
    let lw = s.lease("video", &worker(), 60).await.unwrap().unwrap();
    assert!(matches!(
        refused(
            s.complete(&job_id(&w.job_id), &lw.lease_token, Some(&money(500_001)))
                .await
        ),
        Refusal::InvalidCapture(_)
    ));
    let other = vec![PocketAmount {
        pocket: "daily_images".into(),
        amount: 1,
        blocks: Vec::new(),
    }];
    assert!(matches!(
        refused(
            s.complete(&job_id(&w.job_id), &lw.lease_token, Some(&other))
                .await
        ),
        Refusal::InvalidCapture(_)
    ));
    assert_eq!(
        refused(s.complete(&job_id(&w.job_id), "not-the-token", None).await),
        Refusal::LeaseLost
    );
    // Fail releases; nothing charged.
    let failed = s
        .fail(
            &job_id(&w.job_id),
            &lw.lease_token,
            Some("provider timeout"),
        )
        .await
        .unwrap();
    assert_eq!(
        (failed.status, failed.charged.len()),
        (JobStatus::Failed, 0)
    );
    assert_eq!(failed.failure_reason.as_deref(), Some("provider timeout"));
    assert_eq!(
        s.fail(&job_id(&w.job_id), &lw.lease_token, None)
            .await
            .unwrap()
            .status,
        JobStatus::Failed
    );
    assert_eq!(
        refused(s.get_job(&job_id("nope")).await),
        Refusal::JobNotFound
    );
    assert_clean(s).await;
});

backend_test!(
    notices_wait_for_the_delay_and_skip_finished_jobs,
    |b| async move {
        let card = card_with(&[
            ("notice_delay_seconds = 5", "notice_delay_seconds = 1"),
            (
                "max_concurrent_jobs = 1\npriority = false",
                "max_concurrent_jobs = 5\npriority = false",
            ),
        ]);
        let Some((_db, e)) = engine_with(b, card).await else {
            return;
        };
        let s = e.store();
        put(s, "u", "free").await;
        let waiting = submit(&e, "u", "text", "slow").await.unwrap();
        let quick = submit(&e, "u", "ci", "quick").await.unwrap();
        assert_eq!(s.notices(100).await.unwrap().processed, 0, "not yet");
        let l = s.lease("runners", &worker(), 60).await.unwrap().unwrap();
        s.complete(&job_id(&quick.job_id), &l.lease_token, None)
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(1100)).await;
        assert_eq!(s.notices(100).await.unwrap().processed, 1);
        assert_eq!(s.notices(100).await.unwrap().processed, 0, "once per job");
        let notes = events_of(s, "job.waiting", 1).await;
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].job_id.as_deref(), Some(waiting.job_id.as_str()));
        assert_clean(s).await;
    }
);

backend_test!(
    a_due_refill_is_recorded_even_when_the_submit_is_refused,
    |b| async move {
        let card = card_with(&[
            (
                "[allowances.daily_images]\nrefill_every_seconds = 86400",
                "[allowances.daily_images]\nrefill_every_seconds = 1",
            ),
            (
                "allowances = { daily_messages = 10, daily_images = 3 }",
                "allowances = { daily_messages = 10, daily_images = 1 }",
            ),
        ]);
        let Some((_db, e)) = engine_with(b, card).await else {
            return;
        };
        let s = e.store();
        put(s, "u", "free").await;
        let j = submit(&e, "u", "image", "a").await.unwrap();
        let l = s.lease("image", &worker(), 60).await.unwrap().unwrap();
        s.complete(&job_id(&j.job_id), &l.lease_token, None)
            .await
            .unwrap();
        assert_eq!(
            s.ledger(&acct("u"), None, 100)
                .await
                .unwrap()
                .items
                .iter()
                .filter(|e| e.kind == "refill")
                .count(),
            2
        );
        tokio::time::sleep(Duration::from_millis(1100)).await;
        s.set_blocked(&acct("u"), true).await.unwrap();
        assert_eq!(
            refused(submit(&e, "u", "image", "b").await),
            Refusal::AccountBlocked
        );
        let a = s.get_account(&acct("u")).await.unwrap();
        assert_eq!(a.allowances["daily_images"].remaining, 1);
        assert_eq!(
            s.ledger(&acct("u"), None, 100)
                .await
                .unwrap()
                .items
                .iter()
                .filter(|e| e.kind == "refill")
                .count(),
            3
        );
        assert_clean(s).await;
    }
);

backend_test!(
    sweepers_race_completes_at_lease_expiry_and_each_job_ends_once,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(1000)).await;
        top_up(e.store(), "u", "100.00", "t").await;
        let mut leases = Vec::new();
        for i in 0..40 {
            let job = submit(&e, "u", "video", &format!("v{i}")).await.unwrap();
            let lease = e
                .store()
                .lease("video", &worker(), 1)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(lease.job.job_id, job.job_id);
            leases.push(lease);
        }
        // Around the moment the leases pass, four sweepers run over and over while each
        // worker completes, a little later than the one before: some completes come in
        // time, the rest find their job swept (or their lease passed).
        let started = std::time::Instant::now();
        let sweepers: Vec<_> = (0..4)
            .map(|_| {
                let s = e.store().clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(850)).await;
                    let mut swept = 0;
                    while started.elapsed() < Duration::from_millis(1600) {
                        swept += s.sweep(1000).await.unwrap().processed;
                    }
                    swept
                })
            })
            .collect();
        let completes: Vec<_> = leases
            .into_iter()
            .enumerate()
            .map(|(i, lease)| {
                let s = e.store().clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(800 + 10 * i as u64)).await;
                    let id = job_id(&lease.job.job_id);
                    (id.clone(), s.complete(&id, &lease.lease_token, None).await)
                })
            })
            .collect();
        let mut swept = 0;
        for t in sweepers {
            swept += t.await.unwrap();
        }
        let (mut succeeded, mut lost) = (0, 0);
        for t in completes {
            let (id, outcome) = t.await.unwrap();
            let job = e.store().get_job(&id).await.unwrap();
            match outcome {
                Ok(done) => {
                    succeeded += 1;
                    assert_eq!(done.status, JobStatus::Succeeded);
                    assert_eq!(job.charged, money(500_000));
                }
                Err(StoreError::Refused(Refusal::LeaseLost)) => {
                    lost += 1;
                    assert!(job.charged.is_empty(), "a lost lease charges nothing");
                    assert!(
                        matches!(job.status, JobStatus::Expired | JobStatus::InProgress),
                        "{:?}",
                        job.status
                    );
                }
                Err(other) => panic!("unexpected {other}"),
            }
        }
        eprintln!("completed in time: {succeeded}, lost to the sweepers: {lost}");
        // Whatever the sweepers did not reach yet, one more pass expires.
        swept += e.store().sweep(1000).await.unwrap().processed;
        assert_eq!(succeeded + lost, 40);
        assert_eq!(
            swept, lost,
            "every job whose complete lost was expired exactly once"
        );
        let a = e.store().get_account(&acct("u")).await.unwrap();
        assert_eq!((a.held, a.open_jobs), (0, 0));
        assert_eq!(a.balance, 100_000_000 - 500_000 * succeeded as i64);
        let expired = events_of(e.store(), "job.expired", lost as usize).await;
        assert_eq!(expired.len() as u64, lost);
        assert_clean(e.store()).await;
    }
);

backend_test!(a_submit_under_a_taken_key_changes_nothing, |b| async move {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    put(e.store(), "u", "free").await;
    top_up(e.store(), "u", "5.00", "t").await;
    let first = e.submit(&submit_req("u", "video", "v")).await.unwrap();
    let before = e.store().get_account(&acct("u")).await.unwrap();
    // The same key for another request, or a key a top-up took: a mismatch, and no
    // job, hold or activity stamp.
    let mut other = submit_req("u", "video", "v");
    other.payload = Some(serde_json::json!({"prompt": "a dog"}));
    assert_eq!(
        refused(e.submit(&other).await),
        Refusal::IdempotencyMismatch
    );
    assert_eq!(
        refused(submit(&e, "u", "video", "t").await),
        Refusal::IdempotencyMismatch
    );
    // The same request again: the same job, nothing new either.
    let again = e.submit(&submit_req("u", "video", "v")).await.unwrap();
    assert!(again.replay);
    assert_eq!(again.job.job_id, first.job.job_id);
    let after = e.store().get_account(&acct("u")).await.unwrap();
    assert_eq!(after, before);
    assert_clean(e.store()).await;
});

backend_test!(
    a_replayed_submit_answers_its_job_where_a_new_one_is_refused,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(1)).await;
        top_up(e.store(), "u", "5.00", "t").await;
        let first = e.submit(&submit_req("u", "video", "v")).await.unwrap();
        // The job takes the limit of one: a new submit is refused, its replay is not (the
        // key, not read before the decision, is read once the decision refuses).
        assert_eq!(refused(submit(&e, "u", "video", "w").await), Refusal::Busy);
        let again = e.submit(&submit_req("u", "video", "v")).await.unwrap();
        assert!(again.replay);
        assert_eq!(again.job.job_id, first.job.job_id);
        let a = e.store().get_account(&acct("u")).await.unwrap();
        assert_eq!((a.open_jobs, a.held), (1, 500_000));
        assert_clean(e.store()).await;
    }
);

backend_test!(
    twenty_money_held_submits_race_a_limit_of_one,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(1)).await;
        top_up(e.store(), "u", "100.00", "t").await;
        // A money hold leaves the pockets as they were: only the open-job count stands
        // between these submits and a second job.
        assert_eq!(race_submits(&e, "u", "video", 20).await, (1, 19));
        let a = e.store().get_account(&acct("u")).await.unwrap();
        assert_eq!((a.open_jobs, a.held), (1, 500_000));
        assert_clean(e.store()).await;
    }
);

backend_test!(
    complete_and_fail_race_for_one_lease_and_one_of_them_wins,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put(e.store(), "u", "free").await;
        top_up(e.store(), "u", "1.00", "t").await;
        let job = submit(&e, "u", "video", "v").await.unwrap();
        let lease = e
            .store()
            .lease("video", &worker(), 60)
            .await
            .unwrap()
            .unwrap();
        let id = job_id(&job.job_id);
        // Ten completes and ten fails of the same lease, at once.
        let tasks: Vec<_> = (0..20)
            .map(|i| {
                let (s, id, token) = (e.store().clone(), id.clone(), lease.lease_token.clone());
                tokio::spawn(async move {
                    let completes = i % 2 == 0;
                    let r = if completes {
                        s.complete(&id, &token, None).await
                    } else {
                        s.fail(&id, &token, Some("worker gave up")).await
                    };
                    (completes, r)
                })
            })
            .collect();
        let (mut ok, mut finished) = ([0, 0], [0, 0]);
        for t in tasks {
            let (completes, r) = t.await.unwrap();
            let side = usize::from(completes);
            match r {
                Ok(_) => ok[side] += 1,
                Err(StoreError::Refused(Refusal::AlreadyFinished)) => finished[side] += 1,
                Err(other) => panic!("unexpected {other}"),
            }
        }
        // One call won; its repeats answer the finished job, the other call is refused.
        let done = e.store().get_job(&id).await.unwrap();
        let a = e.store().get_account(&acct("u")).await.unwrap();
        match done.status {
            JobStatus::Succeeded => {
                assert_eq!((ok, finished), ([0, 10], [10, 0]));
                assert_eq!(done.charged, money(500_000));
                assert_eq!(a.balance, 500_000);
            }
            JobStatus::Failed => {
                assert_eq!((ok, finished), ([10, 0], [0, 10]));
                assert!(done.charged.is_empty());
                assert_eq!(a.balance, 1_000_000);
            }
            other => panic!("unexpected status {other:?}"),
        }
        assert_eq!((a.held, a.open_jobs), (0, 0));
        let ended = events_of(e.store(), &format!("job.{}", done.status.as_str()), 1).await;
        assert_eq!(ended.len(), 1, "the job ended once");
        assert_clean(e.store()).await;
    }
);

backend_test!(
    submits_racing_over_a_due_refill_refill_once,
    |b| async move {
        let card = card_with(&[
            (
                "[allowances.daily_images]\nrefill_every_seconds = 86400",
                "[allowances.daily_images]\nrefill_every_seconds = 1",
            ),
            (
                "allowances = { daily_messages = 10, daily_images = 3 }",
                "allowances = { daily_messages = 10, daily_images = 1 }",
            ),
        ]);
        let Some((_db, e)) = engine_with(b, card).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(100)).await;
        let first = submit(&e, "u", "image", "first").await.unwrap();
        let l = e
            .store()
            .lease("image", &worker(), 60)
            .await
            .unwrap()
            .unwrap();
        e.store()
            .complete(&job_id(&first.job_id), &l.lease_token, None)
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(1100)).await;
        // The image pocket's window passed: ten submits at once, one image to share.
        let tasks: Vec<_> = (0..10)
            .map(|i| {
                let e = e.clone();
                tokio::spawn(async move { submit(&e, "u", "image", &format!("i{i}")).await })
            })
            .collect();
        let mut jobs = 0;
        for t in tasks {
            match t.await.unwrap() {
                Ok(_) => jobs += 1,
                Err(StoreError::Refused(
                    Refusal::InsufficientAllowance | Refusal::InsufficientFunds,
                )) => {}
                Err(other) => panic!("unexpected {other}"),
            }
        }
        assert_eq!(jobs, 1, "one refilled image, one job");
        let refills = e
            .store()
            .ledger(&acct("u"), None, 100)
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|e| e.kind == "refill" && e.pocket == "daily_images")
            .count();
        assert_eq!(
            refills, 2,
            "the new account's fill, then exactly one refill"
        );
        let a = e.store().get_account(&acct("u")).await.unwrap();
        let images = &a.allowances["daily_images"];
        assert_eq!((images.remaining, images.held), (1, 1));
        assert_clean(e.store()).await;
    }
);

backend_test!(
    a_listing_by_lane_or_by_nothing_is_the_newest_first_of_every_status,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put_limited(e.store(), "lister", "free", Some(100)).await;
        top_up(e.store(), "lister", "50.00", "t-lister").await;
        // Submitted in this order: image, text, image, text, image (newest last).
        let mut ids = Vec::new();
        for (i, kind) in ["image", "text", "image", "text", "image"]
            .iter()
            .enumerate()
        {
            let job = e
                .submit(&submit_req("lister", kind, &format!("l-{i}")))
                .await
                .unwrap()
                .job;
            ids.push((job.job_id, job.lane));
        }
        // One image job succeeded, one failed: three statuses in the image lane.
        for end in 0..2 {
            let lease = e.lease("image", &worker(), 60).await.unwrap().unwrap();
            let id = job_id(&lease.job.job_id);
            if end == 0 {
                e.complete(&id, &lease.lease_token, None).await.unwrap();
            } else {
                e.fail(&id, &lease.lease_token, None).await.unwrap();
            }
        }
        let list = |lane: Option<&str>, status: Option<JobStatus>, limit: i64| {
            let filter = holdfast::JobFilter {
                lane: lane.map(str::to_owned),
                status,
                account_id: None,
                limit,
            };
            let e = e.clone();
            async move {
                let jobs = e.list_jobs(&filter).await.unwrap();
                jobs.into_iter().map(|j| j.job_id).collect::<Vec<_>>()
            }
        };
        let newest_first = |lane: Option<&str>| -> Vec<String> {
            ids.iter()
                .rev()
                .filter(|(_, l)| lane.is_none_or(|x| x == l))
                .map(|(id, _)| id.clone())
                .collect()
        };
        assert_eq!(
            list(Some("image"), None, 10).await,
            newest_first(Some("image"))
        );
        assert_eq!(list(None, None, 10).await, newest_first(None));
        assert_eq!(list(None, None, 2).await, newest_first(None)[..2].to_vec());
        let queued = list(None, Some(JobStatus::Queued), 10).await;
        assert_eq!(
            queued.len(),
            3,
            "two text jobs and the newest image job: {queued:?}"
        );
        assert_eq!(queued[0], ids[4].0);
    }
);
