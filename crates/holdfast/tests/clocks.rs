//! A kind's own clocks: its stale deadline, its queued wait limit, and a suspended
//! account's queue that waits (its clock restarts when the suspension clears), on SQLite
//! and PostgreSQL, each scenario followed by the audit.

use std::time::Duration;

use holdfast::testing::*;
use holdfast::{JobStatus, Usage, backend_test};

/// The default card where a video waits at most 1 s in the queue, and a text job is
/// stale after 1 s (the card's deadline stays 1800 s).
fn card() -> holdfast::RateCard {
    card_with(&[
        (
            "[kinds.video]\nlane = \"video\"",
            "[kinds.video]\nlane = \"video\"\nqueued_expires_after_seconds = 1",
        ),
        (
            "[kinds.text]\nlane = \"text\"",
            "[kinds.text]\nlane = \"text\"\nstale_after_seconds = 1",
        ),
        ("lease_seconds = 60", "lease_seconds = 1"),
    ])
}

backend_test!(each_kind_is_swept_by_its_own_clocks, |b| async move {
    let Some((_db, e)) = engine_with(b, card()).await else {
        return;
    };
    put_limited(e.store(), "u", "free", Some(10)).await;
    top_up(e.store(), "u", "5.00", "t").await;
    let video = e.submit(&submit_req("u", "video", "v")).await.unwrap().job;
    let text = e.submit(&submit_req("u", "text", "x")).await.unwrap().job;
    let image = e.submit(&submit_req("u", "image", "i")).await.unwrap().job;
    assert_eq!(e.store().sweep(100).await.unwrap().processed, 0);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(e.store().sweep(100).await.unwrap().processed, 2);
    let status = |id: String| {
        let e = e.clone();
        async move { e.get_job(&job_id(&id)).await.unwrap() }
    };
    let v = status(video.job_id).await;
    assert_eq!(
        (v.status, v.failure_reason.as_deref()),
        (
            JobStatus::Expired,
            Some("queued longer than queued_expires_after_seconds")
        )
    );
    let x = status(text.job_id).await;
    assert_eq!(x.status, JobStatus::Expired);
    assert!(x.failure_reason.unwrap().starts_with("stale"));
    assert_eq!(
        status(image.job_id).await.status,
        JobStatus::Queued,
        "the card's 1800 s"
    );
    let a = e.get_account(&acct("u")).await.unwrap();
    assert_eq!(a.held, 0, "the expired video's hold came back");
    assert_clean(e.store()).await;
});

backend_test!(
    a_suspended_accounts_queue_waits_and_its_clock_restarts,
    |b| async move {
        let Some((_db, e)) = engine_with(b, card()).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(10)).await;
        top_up(e.store(), "u", "1.00", "t").await;
        let video = e.submit(&submit_req("u", "video", "v")).await.unwrap().job;
        // Metered usage takes the account below zero: suspended, its queue paused.
        e.debit(&acct("u"), &Usage::Amount(usd("1.20")), &key("d"), None)
            .await
            .unwrap();
        assert!(
            e.get_account(&acct("u"))
                .await
                .unwrap()
                .suspended_at
                .is_some()
        );
        tokio::time::sleep(Duration::from_millis(1300)).await;
        assert_eq!(
            e.store().sweep(100).await.unwrap().processed,
            0,
            "paused while suspended"
        );
        assert!(
            e.lease("video", &worker(), 1).await.unwrap().is_none(),
            "and not leased"
        );
        // A top-up clears the suspension: the wait starts again from now.
        top_up(e.store(), "u", "1.00", "t2").await;
        assert!(
            e.get_account(&acct("u"))
                .await
                .unwrap()
                .suspended_at
                .is_none()
        );
        assert_eq!(
            e.store().sweep(100).await.unwrap().processed,
            0,
            "its clock restarted"
        );
        let v = e.get_job(&job_id(&video.job_id)).await.unwrap();
        assert_eq!(v.status, JobStatus::Queued);
        tokio::time::sleep(Duration::from_millis(1100)).await;
        assert_eq!(
            e.store().sweep(100).await.unwrap().processed,
            1,
            "a second of unsuspended waiting"
        );
        let v = e.get_job(&job_id(&video.job_id)).await.unwrap();
        assert_eq!(v.status, JobStatus::Expired);
        assert_clean(e.store()).await;
    }
);

/// The default card with a 1 s lease and 1 s of grace for late usage.
fn grace_card() -> holdfast::RateCard {
    card_with(&[
        ("lease_seconds = 60", "lease_seconds = 1"),
        (
            "reactivate_after_seconds = 86400",
            "reactivate_after_seconds = 86400\nlate_usage_grace_seconds = 1",
        ),
    ])
}

backend_test!(
    usage_after_a_lost_lease_is_refused_and_after_an_end_only_within_grace,
    |b| async move {
        let Some((_db, e)) = engine_with(b, grace_card()).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(10)).await;
        top_up(e.store(), "u", "5.00", "t").await;
        let usage = Usage::Amount(usd("0.10"));
        let dead = e.submit(&submit_req("u", "ci", "c1")).await.unwrap().job;
        e.lease("runners", &worker(), 1).await.unwrap().unwrap();
        let early = e
            .debit(&acct("u"), &usage, &key("early"), Some(&dead.job_id))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(1100)).await;
        assert_eq!(e.store().sweep(10).await.unwrap().processed, 1);
        // The runner did not learn it died: its next report is refused, nothing written.
        let before = e.get_account(&acct("u")).await.unwrap().balance;
        let late = e
            .debit(&acct("u"), &usage, &key("late"), Some(&dead.job_id))
            .await;
        assert_eq!(refused(late).code(), "lease_lost");
        let batch = [(
            acct("u"),
            holdfast::DebitRequest::new(&usage, &key("late-2"), Some(&dead.job_id)),
        )];
        let answers = e.debit_many(&batch).await.unwrap();
        assert_eq!(answers[0].as_ref().unwrap_err().code(), "lease_lost");
        assert_eq!(e.get_account(&acct("u")).await.unwrap().balance, before);
        // A report accepted before the sweep is still answered as what it was.
        let again = e
            .debit(&acct("u"), &usage, &key("early"), Some(&dead.job_id))
            .await
            .unwrap();
        assert!(again.replay);
        assert_eq!(again.entry.entry_id, early.entry.entry_id);
        // A job that ended normally takes its last report within the grace, not after.
        let done = e.submit(&submit_req("u", "ci", "c2")).await.unwrap().job;
        let l = e.lease("runners", &worker(), 1).await.unwrap().unwrap();
        e.complete(&job_id(&done.job_id), &l.lease_token, None)
            .await
            .unwrap();
        e.debit(&acct("u"), &usage, &key("last"), Some(&done.job_id))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(1200)).await;
        let after_grace = e
            .debit(&acct("u"), &usage, &key("too-late"), Some(&done.job_id))
            .await;
        assert_eq!(refused(after_grace).code(), "already_finished");
        // A job_ref that names no job of this engine is an outside reference.
        e.debit(&acct("u"), &usage, &key("outside"), Some("gh-run-991"))
            .await
            .unwrap();
        assert_clean(e.store()).await;
    }
);

backend_test!(
    usage_racing_the_sweep_of_its_job_is_applied_or_refused_whole,
    |b| async move {
        let Some((_db, e)) = engine_with(b, grace_card()).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(10)).await;
        top_up(e.store(), "u", "5.00", "t").await;
        let job = e.submit(&submit_req("u", "ci", "c")).await.unwrap().job;
        e.lease("runners", &worker(), 1).await.unwrap().unwrap();
        tokio::time::sleep(Duration::from_millis(1100)).await;
        // Twenty reports of the runner race the sweeper that expires its job.
        let mut tasks: Vec<_> = (0..20)
            .map(|i| {
                let (e, id) = (e.clone(), job.job_id.clone());
                tokio::spawn(async move {
                    let usage = Usage::Amount(usd("0.01"));
                    e.debit(&acct("u"), &usage, &key(&format!("r{i}")), Some(&id))
                        .await
                        .map(|_| 1)
                })
            })
            .collect();
        let sweeper = e.clone();
        tasks.push(tokio::spawn(async move {
            sweeper
                .store()
                .sweep(10)
                .await
                .map(|r| 100 * r.processed as i64)
        }));
        let (mut applied, mut refused_n, mut swept) = (0, 0, 0);
        for t in tasks {
            match t.await.unwrap() {
                Ok(1) => applied += 1,
                Ok(n) => swept += n / 100,
                Err(err) => {
                    assert_eq!(refused(Err::<(), _>(err)).code(), "lease_lost");
                    refused_n += 1;
                }
            }
        }
        assert_eq!((swept, applied + refused_n), (1, 20));
        // Only the reports applied before the sweep were written, each once.
        let a = e.get_account(&acct("u")).await.unwrap();
        assert_eq!(a.balance, 5_000_000 - applied * 10_000);
        let debits = e.ledger(&acct("u"), None, 100).await.unwrap().items;
        assert_eq!(
            debits.iter().filter(|l| l.kind == "debit").count() as i64,
            applied
        );
        let late = e
            .debit(
                &acct("u"),
                &Usage::Amount(usd("0.01")),
                &key("after"),
                Some(&job.job_id),
            )
            .await;
        assert_eq!(refused(late).code(), "lease_lost");
        assert_clean(e.store()).await;
    }
);
