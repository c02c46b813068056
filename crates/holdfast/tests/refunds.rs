//! Job refunds and grants of allowance, on SQLite and PostgreSQL, raced where they move
//! money, each scenario followed by the audit.

use std::time::Duration;

use holdfast::testing::*;
use holdfast::{
    Engine, Grant, Job, JobRefund, JobStatus, Micros, PocketAmount, Refusal, StoreError, Usage,
    backend_test,
};

/// The default card with a video job that holds 1.00.
fn dollar_video_card() -> holdfast::RateCard {
    card_with(&[(
        r#"take = [{ pocket = "money", amount = "0.50" }]"#,
        r#"take = [{ pocket = "money", amount = "1.00" }]"#,
    )])
}

/// Submits `kind` for `account`, leases it from `lane` and completes it in full.
async fn charged_job(e: &Engine, account: &str, kind: &str, lane: &str) -> Job {
    let job = e
        .submit(&submit_req(account, kind, &format!("{kind}-job")))
        .await
        .unwrap()
        .job;
    let l = e
        .lease(lane, &worker(), 60)
        .await
        .unwrap()
        .expect("a job to lease");
    assert_eq!(l.job.job_id, job.job_id);
    let done = e
        .complete(&job_id(&job.job_id), &l.lease_token, None)
        .await
        .unwrap();
    assert_eq!(done.status, JobStatus::Succeeded);
    done
}

fn refund(amount: Option<&str>, k: &str) -> JobRefund {
    JobRefund {
        amount: amount.map(usd),
        reason: "the provider returned a blank image".into(),
        key: key(k),
    }
}

fn money_line(amount: i64) -> Vec<PocketAmount> {
    vec![PocketAmount {
        pocket: "money".into(),
        amount,
        blocks: Vec::new(),
    }]
}

backend_test!(
    job_refunds_race_and_never_give_back_more_than_the_charge,
    |b| async move {
        let Some((_db, e)) = engine_with(b, dollar_video_card()).await else {
            return;
        };
        put(e.store(), "u", "premium").await;
        top_up(e.store(), "u", "2.00", "t").await;
        let job = charged_job(&e, "u", "video", "video_priority").await;
        assert_eq!(job.charged, money_line(1_000_000));
        let id = job.job_id.clone();
        // 20 at once with one key: one refund of 0.10.
        let same: Vec<_> = (0..20)
            .map(|_| {
                let (e, id) = (e.clone(), id.clone());
                tokio::spawn(async move {
                    e.refund_job(&job_id(&id), &refund(Some("0.10"), "same"))
                        .await
                })
            })
            .collect();
        let mut entries = std::collections::BTreeSet::new();
        let mut replays = 0;
        for t in same {
            let r = t.await.unwrap().unwrap();
            entries.insert(r.entries[0].entry_id);
            replays += usize::from(r.replay);
        }
        assert_eq!((entries.len(), replays), (1, 19));
        // 20 at once with different keys: 0.90 was left, so nine pass.
        let many: Vec<_> = (0..20)
            .map(|i| {
                let (e, id) = (e.clone(), id.clone());
                tokio::spawn(async move {
                    e.refund_job(&job_id(&id), &refund(Some("0.10"), &format!("r{i}")))
                        .await
                })
            })
            .collect();
        let (mut ok, mut over) = (0, 0);
        for t in many {
            match t.await.unwrap() {
                Ok(r) => {
                    assert_eq!(r.entries[0].kind, "job_refund");
                    assert_eq!(r.entries[0].reference.as_deref(), Some(id.as_str()));
                    ok += 1;
                }
                Err(StoreError::Refused(Refusal::RefundExceedsCharge)) => over += 1,
                Err(other) => panic!("unexpected {other}"),
            }
        }
        assert_eq!((ok, over), (9, 11));
        let a = e.get_account(&acct("u")).await.unwrap();
        assert_eq!(
            (a.balance, a.total_spent, a.total_credited),
            (2_000_000, 0, 2_000_000)
        );
        let j = e.get_job(&job_id(&id)).await.unwrap();
        assert_eq!(j.refunded, money_line(1_000_000));
        assert_eq!(events_of(e.store(), "job.refunded", 10).await.len(), 10);
        assert_eq!(
            refused(e.refund_job(&job_id(&id), &refund(None, "all-again")).await),
            Refusal::RefundExceedsCharge
        );
        assert_clean(e.store()).await;
    }
);

backend_test!(a_job_refund_follows_the_contract, |b| async move {
    let Some((_db, e)) = engine_with(b, dollar_video_card()).await else {
        return;
    };
    let s = e.store();
    put(s, "u", "premium").await;
    top_up(s, "u", "1.00", "t").await;
    let job = charged_job(&e, "u", "video", "video_priority").await;
    // Spending past zero suspends the account; the refund brings it back and clears it.
    s.debit(&acct("u"), &Usage::Amount(usd("0.40")), &key("d"), None)
        .await
        .unwrap();
    assert!(
        e.get_account(&acct("u"))
            .await
            .unwrap()
            .suspended_at
            .is_some()
    );
    let id = job_id(&job.job_id);
    let mismatch = e.refund_job(&id, &refund(Some("0.50"), "d")).await;
    assert_eq!(
        refused(mismatch),
        Refusal::IdempotencyMismatch,
        "the debit's key"
    );
    let r = e.refund_job(&id, &refund(None, "all")).await.unwrap();
    assert_eq!((r.entries.len(), r.entries[0].delta), (1, 1_000_000));
    assert_eq!((r.account.balance, r.account.suspended_at), (600_000, None));
    assert_eq!(
        r.account.total_spent, 400_000,
        "only the debit is spending now"
    );
    assert_eq!(r.job.refunded, money_line(1_000_000));
    assert_eq!(events_of(s, "account.unsuspended", 1).await.len(), 1);
    let replay = e.refund_job(&id, &refund(None, "all")).await.unwrap();
    assert!(replay.replay);
    assert_eq!(replay.entries, r.entries);
    let other_reason = JobRefund {
        reason: "another".into(),
        ..refund(None, "all")
    };
    assert_eq!(
        refused(e.refund_job(&id, &other_reason).await),
        Refusal::IdempotencyMismatch
    );
    // Not refundable: a job that failed, a job still queued, a job that does not exist.
    top_up(s, "u", "2.00", "t2").await;
    let failed = e.submit(&submit_req("u", "video", "v2")).await.unwrap().job;
    let l = e
        .lease("video_priority", &worker(), 60)
        .await
        .unwrap()
        .unwrap();
    e.fail(&job_id(&failed.job_id), &l.lease_token, None)
        .await
        .unwrap();
    assert_eq!(
        refused(
            e.refund_job(&job_id(&failed.job_id), &refund(None, "f"))
                .await
        ),
        Refusal::JobNotRefundable
    );
    let queued = e.submit(&submit_req("u", "video", "v3")).await.unwrap().job;
    assert_eq!(
        refused(
            e.refund_job(&job_id(&queued.job_id), &refund(None, "q"))
                .await
        ),
        Refusal::JobNotRefundable
    );
    assert_eq!(
        refused(e.refund_job(&job_id("job_nope"), &refund(None, "n")).await),
        Refusal::JobNotFound
    );
    let blank = JobRefund {
        reason: " ".into(),
        ..refund(None, "blank")
    };
    assert!(matches!(
        refused(e.refund_job(&id, &blank).await),
        Refusal::InvalidRequest(_)
    ));
    assert_clean(s).await;
});

backend_test!(an_allowance_charge_is_refunded_in_items, |b| async move {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    put(e.store(), "u", "free").await;
    let job = charged_job(&e, "u", "image", "image").await;
    let images = |n| {
        vec![PocketAmount {
            pocket: "daily_images".into(),
            amount: n,
            blocks: Vec::new(),
        }]
    };
    assert_eq!(job.charged, images(1));
    let id = job_id(&job.job_id);
    let half = e.refund_job(&id, &refund(Some("0.5"), "half")).await;
    assert!(matches!(refused(half), Refusal::InvalidRequest(_)));
    let two = e.refund_job(&id, &refund(Some("2"), "two")).await;
    assert_eq!(refused(two), Refusal::RefundExceedsCharge);
    let r = e.refund_job(&id, &refund(Some("1"), "one")).await.unwrap();
    assert_eq!(
        (r.entries[0].pocket.as_str(), r.entries[0].delta),
        ("daily_images", 1)
    );
    assert_eq!(r.account.allowances["daily_images"].remaining, 3);
    assert_eq!((r.account.balance, r.account.total_spent), (0, 0));
    assert_eq!(r.job.refunded, images(1));
    assert_clean(e.store()).await;
});

fn grant(pocket: &str, amount: i64, k: &str) -> Grant {
    Grant {
        pocket: pocket.into(),
        amount,
        reason: "apology for the outage".into(),
        key: key(k),
    }
}

backend_test!(a_grant_lasts_until_the_next_refill, |b| async move {
    let card = card_with(&[(
        "[allowances.daily_images]\nrefill_every_seconds = 86400",
        "[allowances.daily_images]\nrefill_every_seconds = 1",
    )]);
    let Some((_db, e)) = engine_with(b, card).await else {
        return;
    };
    put(e.store(), "u", "free").await;
    let g = e
        .grant(&acct("u"), &grant("daily_images", 5, "g"))
        .await
        .unwrap();
    assert_eq!(
        (g.entry.kind.as_str(), g.entry.delta, g.entry.amount_after),
        ("grant", 5, 8)
    );
    assert_eq!(g.account.allowances["daily_images"].remaining, 8);
    let again = e
        .grant(&acct("u"), &grant("daily_images", 5, "g"))
        .await
        .unwrap();
    assert!(again.replay);
    assert_eq!(again.entry.entry_id, g.entry.entry_id);
    assert_eq!(
        refused(e.grant(&acct("u"), &grant("daily_images", 6, "g")).await),
        Refusal::IdempotencyMismatch
    );
    for bad in [
        grant("gold_stars", 1, "x"),
        grant("money", 1, "y"),
        grant("daily_images", 0, "z"),
    ] {
        assert!(matches!(
            refused(e.grant(&acct("u"), &bad).await),
            Refusal::InvalidRequest(_)
        ));
    }
    assert_eq!(
        refused(
            e.grant(&acct("nobody"), &grant("daily_images", 1, "n"))
                .await
        ),
        Refusal::AccountNotFound
    );
    assert_eq!(events_of(e.store(), "allowance.granted", 1).await.len(), 1);
    // The next refill resets the pocket to its quota.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let a = e.activity(&acct("u")).await.unwrap();
    assert_eq!(a.allowances["daily_images"].remaining, 3);
    let ledger = e.ledger(&acct("u"), None, 100).await.unwrap().items;
    let refill = ledger.iter().rfind(|l| l.pocket == "daily_images").unwrap();
    assert_eq!((refill.kind.as_str(), refill.delta), ("refill", -5));
    assert_clean(e.store()).await;
});

backend_test!(
    grants_race_with_debits_and_each_applies_once,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put(e.store(), "u", "free").await;
        top_up(e.store(), "u", "1.00", "t").await;
        let tasks: Vec<_> = (0..40)
            .map(|i| {
                let e = e.clone();
                tokio::spawn(async move {
                    if i % 2 == 0 {
                        e.grant(
                            &acct("u"),
                            &grant("daily_messages", 1, &format!("g{}", i % 10)),
                        )
                        .await
                        .map(|g| g.replay)
                    } else {
                        let k = key(&format!("d{i}"));
                        e.debit(&acct("u"), &Usage::Amount(Micros(10_000)), &k, None)
                            .await
                            .map(|d| d.replay)
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap().unwrap();
        }
        let a = e.get_account(&acct("u")).await.unwrap();
        // Five distinct grant keys among the twenty grants; twenty debits of 0.01.
        assert_eq!(a.allowances["daily_messages"].remaining, 15);
        assert_eq!(a.balance, 800_000);
        assert_clean(e.store()).await;
    }
);

backend_test!(
    the_audit_finds_refunds_the_ledger_does_not_explain,
    |b| async move {
        let Some((db, e)) = engine_with(b, dollar_video_card()).await else {
            return;
        };
        put(e.store(), "u", "premium").await;
        top_up(e.store(), "u", "1.00", "t").await;
        let job = charged_job(&e, "u", "video", "video_priority").await;
        e.refund_job(&job_id(&job.job_id), &refund(Some("0.30"), "r"))
            .await
            .unwrap();
        e.grant(&acct("u"), &grant("daily_images", 2, "g"))
            .await
            .unwrap();
        assert_clean(e.store()).await;
        let invariants = || async {
            let v = e.audit().await.unwrap();
            v.iter()
                .map(|v| v.invariant)
                .collect::<std::collections::BTreeSet<_>>()
        };
        // The job claims more back than its entries gave, and more than it was charged.
        let sql = format!(
            r#"UPDATE jobs SET refunded = '[{{"pocket":"money","amount":1500000}}]' WHERE job_id = '{}'"#,
            job.job_id
        );
        behind_the_back(&db, &sql).await;
        assert_eq!(invariants().await, [5].into());
        let sql = format!(
            r#"UPDATE jobs SET refunded = '[{{"pocket":"money","amount":300000}}]' WHERE job_id = '{}'"#,
            job.job_id
        );
        behind_the_back(&db, &sql).await;
        // A grant whose key is gone was applied without one.
        behind_the_back(
            &db,
            "UPDATE ledger SET idempotency_key = NULL WHERE idempotency_key = 'g'",
        )
        .await;
        assert_eq!(invariants().await, [7].into());
    }
);
