//! The money pocket and the ledger, on SQLite and PostgreSQL, each scenario followed by
//! the audit.

use holdfast::batch::BatchOptions;
use holdfast::core::refusal::Known;
use holdfast::testing::*;
use holdfast::{AccountId, CreditKind, DebitRequest, Refusal, StoreError, Usage, backend_test};

backend_test!(hundred_debits_race_to_the_buffer, |b| async move {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    let s = e.store().clone();
    put(&s, "ci-1", "free").await;
    top_up(&s, "ci-1", "1.00", "t1").await;
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move {
                s.debit(
                    &acct("ci-1"),
                    &Usage::Amount(usd("0.10")),
                    &key(&format!("d{i}")),
                    Some("job-9"),
                )
                .await
            })
        })
        .collect();
    let (mut ok, mut poor) = (0, 0);
    for t in tasks {
        match t.await.unwrap() {
            Ok(_) => ok += 1,
            Err(StoreError::Refused(Refusal::InsufficientFunds)) => poor += 1,
            Err(other) => panic!("unexpected {other}"),
        }
    }
    assert_eq!((ok, poor), (20, 80));
    let a = s.get_account(&acct("ci-1")).await.unwrap();
    assert_eq!(a.balance, -1_000_000);
    assert_eq!(a.total_spent, 2_000_000);
    assert!(a.suspended_at.is_some());
    let suspended = events_of(&s, "account.suspended", 1).await;
    assert_eq!(suspended.len(), 1, "suspended exactly once");
    assert_clean(&s).await;
});

backend_test!(fifty_top_ups_with_one_key_credit_once, |b| async move {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    let s = e.store().clone();
    put(&s, "u", "free").await;
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let s = s.clone();
            tokio::spawn(async move {
                s.credit(&acct("u"), usd("5.00"), CreditKind::TopUp, &key("same"))
                    .await
            })
        })
        .collect();
    let mut entries = std::collections::BTreeSet::new();
    let mut replays = 0;
    for t in tasks {
        let r = t.await.unwrap().unwrap();
        entries.insert(r.entry.entry_id);
        replays += usize::from(r.replay);
    }
    assert_eq!(entries.len(), 1);
    assert_eq!(replays, 49);
    let a = s.get_account(&acct("u")).await.unwrap();
    assert_eq!((a.balance, a.total_credited), (5_000_000, 5_000_000));
    assert_clean(&s).await;
});

// A key is one account's, whatever takes it first: a money change's key lives on its
// ledger entry and a submit's in the idempotency table (migration 0011), so each write
// checks the other place under the account's lock. Here each key is raced by debits and
// submits at once (through the engine: batched debits, batched submits): one operation
// takes it, the other is refused with a mismatch, and no key is in both places.
backend_test!(debits_and_submits_race_for_one_key, |b| async move {
    let Some((db, e)) = engine(b).await else {
        return;
    };
    put_limited(e.store(), "both", "free", Some(1_000)).await;
    top_up(e.store(), "both", "100.00", "t").await;
    let e = std::sync::Arc::new(e);
    let mut tasks = Vec::new();
    for k in 0..20 {
        for racer in 0..4 {
            let e = e.clone();
            tasks.push(tokio::spawn(async move {
                let name = format!("k{k}");
                // Half the keys see a debit first, half a submit.
                if (racer + k) % 2 == 0 {
                    let usage = Usage::Amount(usd("0.01"));
                    e.debit(&acct("both"), &usage, &key(&name), None)
                        .await
                        .map(|_| ("debit", name))
                } else {
                    let req = submit_req("both", "ci", &name);
                    e.submit(&req).await.map(|_| ("submit", name))
                }
            }));
        }
    }
    let mut won = std::collections::BTreeMap::new();
    for t in tasks {
        match t.await.unwrap() {
            Ok((op, k)) => {
                let first = won.insert(k.clone(), op);
                assert!(first.is_none_or(|o| o == op), "{k} taken by two operations");
            }
            Err(err) => assert_eq!(refused(Err::<(), _>(err)), Refusal::IdempotencyMismatch),
        }
    }
    assert_eq!(won.len(), 20, "every key was taken by one operation");
    let debits = won.values().filter(|op| **op == "debit").count() as i64;
    let on_entries = db
        .query_i64("SELECT count(*) FROM ledger WHERE idempotency_key LIKE 'k%'")
        .await;
    let in_table = db
        .query_i64("SELECT count(*) FROM idempotency WHERE key LIKE 'k%'")
        .await;
    assert_eq!((on_entries, in_table), (debits, 20 - debits));
    assert_clean(e.store()).await;
});

backend_test!(forty_refunds_against_one_top_up, |b| async move {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    let s = e.store().clone();
    put(&s, "u", "free").await;
    top_up(&s, "u", "10.00", "buy").await;
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move {
                s.refund(&acct("u"), &key("buy"), usd("1.00"), &key(&format!("r{i}")))
                    .await
            })
        })
        .collect();
    let (mut ok, mut over) = (0, 0);
    for t in tasks {
        match t.await.unwrap() {
            Ok(_) => ok += 1,
            Err(StoreError::Refused(Refusal::RefundExceedsTopUp)) => over += 1,
            Err(other) => panic!("unexpected {other}"),
        }
    }
    assert_eq!((ok, over), (10, 30));
    let a = s.get_account(&acct("u")).await.unwrap();
    assert_eq!(
        (a.balance, a.total_spent, a.total_credited),
        (0, 0, 10_000_000)
    );
    assert_clean(&s).await;
});

backend_test!(
    suspension_is_set_once_and_cleared_by_a_credit,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        let s = e.store().clone();
        put(&s, "u", "free").await;
        s.debit(&acct("u"), &Usage::Amount(usd("0.60")), &key("a"), None)
            .await
            .unwrap();
        let first = s
            .get_account(&acct("u"))
            .await
            .unwrap()
            .suspended_at
            .unwrap();
        s.debit(&acct("u"), &Usage::Amount(usd("0.30")), &key("b"), None)
            .await
            .unwrap();
        assert_eq!(
            s.get_account(&acct("u")).await.unwrap().suspended_at,
            Some(first),
            "never overwritten"
        );
        assert_eq!(
            refused(
                s.debit(&acct("u"), &Usage::Amount(usd("0.20")), &key("c"), None)
                    .await
            ),
            Refusal::InsufficientFunds
        );
        s.credit(&acct("u"), usd("0.50"), CreditKind::Bonus, &key("d"))
            .await
            .unwrap();
        assert!(
            s.get_account(&acct("u"))
                .await
                .unwrap()
                .suspended_at
                .is_some(),
            "still negative"
        );
        s.credit(&acct("u"), usd("0.40"), CreditKind::TopUp, &key("e"))
            .await
            .unwrap();
        let a = s.get_account(&acct("u")).await.unwrap();
        assert_eq!((a.balance, a.suspended_at), (0, None));
        let mut types: Vec<String> = events_of(&s, "account.suspended", 1)
            .await
            .into_iter()
            .map(|e| e.event_type)
            .collect();
        types.extend(
            events_of(&s, "account.unsuspended", 1)
                .await
                .into_iter()
                .map(|e| e.event_type),
        );
        assert_eq!(types, ["account.suspended", "account.unsuspended"]);
        assert_clean(&s).await;
    }
);

backend_test!(metered_usage_is_priced_from_the_card, |b| async move {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    let s = e.store().clone();
    put(&s, "u", "free").await;
    top_up(&s, "u", "1.00", "t").await;
    let usage = Usage::Metered {
        meter: "linux-large".into(),
        seconds: 30,
    };
    let r = s
        .debit(&acct("u"), &usage, &key("m1"), Some("run-7"))
        .await
        .unwrap();
    assert_eq!(r.entry.delta, -24_000);
    assert_eq!(r.entry.reference.as_deref(), Some("run-7"));
    let bad = Usage::Metered {
        meter: "gpu".into(),
        seconds: 1,
    };
    assert_eq!(
        refused(s.debit(&acct("u"), &bad, &key("m2"), None).await),
        Refusal::UnknownMeter(
            "gpu".into(),
            Known(vec!["linux-large".into(), "linux-small".into()])
        )
    );
    assert_clean(&s).await;
});

backend_test!(bad_requests_change_nothing, |b| async move {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    let s = e.store().clone();
    put(&s, "u", "free").await;
    top_up(&s, "u", "2.00", "t").await;
    s.credit(&acct("u"), usd("1.00"), CreditKind::Bonus, &key("gift"))
        .await
        .unwrap();
    let before = s.ledger(&acct("u"), None, 1000).await.unwrap().items.len();
    assert_eq!(
        refused(
            s.credit(&acct("nobody"), usd("1"), CreditKind::TopUp, &key("x"))
                .await
        ),
        Refusal::AccountNotFound
    );
    assert_eq!(
        refused(
            s.credit(&acct("u"), usd("3.00"), CreditKind::TopUp, &key("t"))
                .await
        ),
        Refusal::IdempotencyMismatch
    );
    assert_eq!(
        refused(
            s.debit(&acct("u"), &Usage::Amount(usd("2.00")), &key("t"), None)
                .await
        ),
        Refusal::IdempotencyMismatch
    );
    assert_eq!(
        refused(
            s.refund(&acct("u"), &key("gift"), usd("1"), &key("r"))
                .await
        ),
        Refusal::NotRefundable
    );
    assert_eq!(
        refused(
            s.refund(&acct("u"), &key("nope"), usd("1"), &key("r"))
                .await
        ),
        Refusal::TopUpNotFound
    );
    assert_eq!(
        refused(
            s.credit(
                &acct("u"),
                holdfast::Micros(holdfast::MAX_BALANCE.0),
                CreditKind::TopUp,
                &key("big")
            )
            .await
        ),
        Refusal::AmountOutOfRange
    );
    // A refusal is not stored: the same key works once the cause is gone.
    assert_eq!(
        refused(
            s.debit(&acct("u"), &Usage::Amount(usd("5.00")), &key("later"), None)
                .await
        ),
        Refusal::InsufficientFunds
    );
    assert_eq!(
        s.ledger(&acct("u"), None, 1000).await.unwrap().items.len(),
        before
    );
    top_up(&s, "u", "5.00", "t2").await;
    s.debit(&acct("u"), &Usage::Amount(usd("5.00")), &key("later"), None)
        .await
        .unwrap();
    assert_clean(&s).await;
});

backend_test!(ledger_pages_by_cursor, |b| async move {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    let s = e.store().clone();
    put(&s, "u", "free").await;
    for i in 0..7 {
        top_up(&s, "u", "1", &format!("k{i}")).await;
    }
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = s.ledger(&acct("u"), after, 3).await.unwrap();
        if page.items.is_empty() {
            assert_eq!(page.next, after);
            break;
        }
        seen.extend(page.items.iter().map(|e| e.entry_id));
        after = page.next;
    }
    // two refill entries (daily_messages, daily_images) + seven top-ups
    assert_eq!(seen.len(), 9);
    assert!(seen.windows(2).all(|w| w[0] < w[1]));
});

backend_test!(hundred_batched_debits_race_to_the_buffer, |b| async move {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    put(e.store(), "hot", "free").await;
    top_up(e.store(), "hot", "1.00", "t1").await;
    // Every fifth debit repeats an earlier key: a replay, never a second charge.
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            let e = e.clone();
            let k = if i % 5 == 4 {
                format!("d{}", i - 1)
            } else {
                format!("d{i}")
            };
            tokio::spawn(async move {
                e.debit(
                    &acct("hot"),
                    &Usage::Amount(usd("0.10")),
                    &key(&k),
                    Some("job-9"),
                )
                .await
            })
        })
        .collect();
    let (mut applied, mut replays, mut poor) = (0, 0, 0);
    for t in tasks {
        match t.await.unwrap() {
            Ok(r) if r.replay => replays += 1,
            Ok(_) => applied += 1,
            Err(StoreError::Refused(Refusal::InsufficientFunds)) => poor += 1,
            Err(other) => panic!("unexpected {other}"),
        }
    }
    assert_eq!(
        applied, 20,
        "applied {applied}, replays {replays}, refused {poor}"
    );
    let a = e.store().get_account(&acct("hot")).await.unwrap();
    assert_eq!((a.balance, a.total_spent), (-1_000_000, 2_000_000));
    assert_eq!(events_of(e.store(), "account.suspended", 1).await.len(), 1);
    assert_clean(e.store()).await;
});

backend_test!(a_batch_answers_each_debit_on_its_own, |b| async move {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    let s = e.store();
    put(s, "u", "free").await;
    top_up(s, "u", "0.50", "t").await;
    let req = |amount: &str, k: &str| holdfast::DebitRequest {
        usage: Usage::Amount(usd(amount)),
        key: key(k),
        job_ref: None,
        actor: holdfast::actor::LIBRARY.into(),
    };
    let bad_meter = holdfast::DebitRequest {
        usage: Usage::Metered {
            meter: "gpu".into(),
            seconds: 1,
        },
        key: key("m"),
        job_ref: None,
        actor: holdfast::actor::LIBRARY.into(),
    };
    let batch = [
        req("1.00", "a"),
        req("1.00", "a"),
        req("1.00", "b"),
        bad_meter,
        req("0.40", "c"),
        req("0.50", "a"),
    ];
    let of_u: Vec<_> = batch.iter().map(|r| (acct("u"), r.clone())).collect();
    let results = s.ingest(&of_u).await.unwrap();
    let first = results[0].as_ref().unwrap();
    assert!(!first.replay);
    let again = results[1].as_ref().unwrap();
    assert!(
        again.replay && again.entry == first.entry,
        "a key repeated in the batch is a replay"
    );
    assert_eq!(
        results[2].as_ref().unwrap_err(),
        &Refusal::InsufficientFunds
    );
    assert_eq!(
        results[3].as_ref().unwrap_err(),
        &Refusal::UnknownMeter(
            "gpu".into(),
            Known(vec!["linux-large".into(), "linux-small".into()])
        )
    );
    assert!(results[4].is_ok(), "after a refusal the batch goes on");
    assert_eq!(
        results[5].as_ref().unwrap_err(),
        &Refusal::IdempotencyMismatch
    );
    let a = s.get_account(&acct("u")).await.unwrap();
    assert_eq!(a.balance, 500_000 - 1_000_000 - 400_000);
    let of_nobody: Vec<_> = batch[..2]
        .iter()
        .map(|r| (acct("nobody"), r.clone()))
        .collect();
    let missing = s.ingest(&of_nobody).await.unwrap();
    assert!(
        missing
            .iter()
            .all(|r| r.as_ref().unwrap_err() == &Refusal::AccountNotFound)
    );
    assert_clean(s).await;
});

backend_test!(
    a_nul_in_text_is_refused_alike_on_both_backends,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        let s = e.store();
        put(s, "u", "free").await;
        top_up(s, "u", "1.00", "t").await;
        let r = s
            .debit(
                &acct("u"),
                &Usage::Amount(usd("0.10")),
                &key("d"),
                Some("job\0x"),
            )
            .await;
        assert!(matches!(refused(r), Refusal::InvalidRequest(_)));
        let job = e.submit(&submit_req("u", "video", "v")).await.unwrap().job;
        let l = s.lease("video", &worker(), 60).await.unwrap().unwrap();
        let id = job_id(&job.job_id);
        assert!(matches!(
            refused(s.fail(&id, &l.lease_token, Some("bad\0reason")).await),
            Refusal::InvalidRequest(_)
        ));
        // The same in a batch, which SQLite binds as one document.
        let batched = holdfast::FailJob {
            job: id.clone(),
            lease_token: l.lease_token.clone(),
            reason: Some("bad\0reason".into()),
        };
        let answers = s.fail_many(&[batched]).await.unwrap();
        assert!(matches!(
            answers[0],
            Err(StoreError::Refused(Refusal::InvalidRequest(_)))
        ));
        assert!(matches!(
            refused(s.heartbeat(&id, "tok\0en").await),
            Refusal::InvalidRequest(_)
        ));
        assert_eq!(
            s.get_job(&id).await.unwrap().status,
            holdfast::JobStatus::InProgress,
            "nothing changed"
        );
        assert_eq!(s.get_account(&acct("u")).await.unwrap().balance, 1_000_000);
        assert_clean(s).await;
    }
);

backend_test!(
    a_debit_replay_is_answered_even_when_funds_ran_out,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        let s = e.store().clone();
        put(&s, "u", "free").await;
        top_up(&s, "u", "100.00", "t").await;
        let amount = Usage::Amount(usd("100.00"));
        let first = s
            .debit(&acct("u"), &amount, &key("d1"), None)
            .await
            .unwrap();
        assert!(!first.replay);
        // The account cannot pay 100.00 again: a new key is refused...
        assert_eq!(
            refused(s.debit(&acct("u"), &amount, &key("d2"), None).await),
            Refusal::InsufficientFunds
        );
        // ...but the first key is still its original debit, not a refusal, and not a charge,
        // even when it is replayed as the request that would now be refused.
        let again = s
            .debit(&acct("u"), &amount, &key("d1"), None)
            .await
            .unwrap();
        assert!(again.replay && again.entry == first.entry);
        assert_eq!(again.account.balance, 0);
        // The same key for another amount is a mismatch, refused or not.
        assert_eq!(
            refused(
                s.debit(&acct("u"), &Usage::Amount(usd("5.00")), &key("d1"), None)
                    .await
            ),
            Refusal::IdempotencyMismatch
        );
        let debits = s.ledger(&acct("u"), None, 100).await.unwrap().items;
        assert_eq!(debits.iter().filter(|e| e.kind == "debit").count(), 1);
        assert_clean(&s).await;
    }
);

backend_test!(
    debits_queued_behind_a_caller_that_went_away_are_answered,
    |b| async move {
        use holdfast_store::driver::db::Sql;
        use std::sync::Arc;
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        let e = Arc::new(e);
        let s = e.store().clone();
        put(&s, "u", "free").await;
        top_up(&s, "u", "10.00", "t").await;
        // Another transaction holds the account, so the first debit (which goes straight
        // through on its caller's task) waits inside its transaction...
        let mut blocker = s.pool().begin_write().await.unwrap();
        blocker
            .execute(
                Sql {
                    postgres: "SELECT 1 FROM accounts WHERE account_id = 'u' FOR UPDATE",
                    sqlite: "SELECT 1",
                },
                vec![],
            )
            .await
            .unwrap();
        let debit = |k: &str| {
            let (e, k) = (e.clone(), key(k));
            tokio::spawn(async move {
                e.debit(&acct("u"), &Usage::Amount(usd("1.00")), &k, None)
                    .await
            })
        };
        let lead = debit("lead");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        // ...the next ones queue behind it, and then its caller goes away.
        let followers: Vec<_> = (0..5).map(|i| debit(&format!("f{i}"))).collect();
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        lead.abort();
        assert!(lead.await.unwrap_err().is_cancelled());
        blocker.rollback().await.unwrap();
        // Every queued debit is still answered (a bound against being stranded, not a
        // measure of speed), and applied exactly once.
        for f in followers {
            let answer = tokio::time::timeout(std::time::Duration::from_secs(60), f)
                .await
                .expect("a queued debit was stranded");
            assert!(!answer.unwrap().unwrap().replay);
        }
        let debits: Vec<_> = s
            .ledger(&acct("u"), None, 100)
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|e| e.kind == "debit")
            .collect();
        assert_eq!(debits.len(), 5, "the abandoned debit never committed");
        assert_eq!(s.get_account(&acct("u")).await.unwrap().balance, 5_000_000);
        assert_clean(&s).await;
    }
);

backend_test!(
    one_transaction_for_many_accounts_answers_each_in_its_place,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        let s = e.store();
        for id in ["a", "b", "c"] {
            put(s, id, "free").await;
            top_up(s, id, "1.00", "t").await;
        }
        let req = |amount: &str, k: &str| DebitRequest {
            usage: Usage::Amount(usd(amount)),
            key: key(k),
            job_ref: None,
            actor: holdfast::actor::LIBRARY.into(),
        };
        // Given out of order, with an unknown account and one account's debits split.
        let items = vec![
            (acct("c"), req("0.30", "c1")),
            (acct("nobody"), req("0.10", "n1")),
            (acct("a"), req("5.00", "a1")),
            (acct("c"), req("0.30", "c1")),
            (acct("b"), req("0.40", "b1")),
            (acct("a"), req("0.20", "a2")),
        ];
        let results = s.debit_many(&items).await.unwrap();
        assert_eq!(results.len(), 6);
        assert!(!results[0].as_ref().unwrap().replay);
        assert_eq!(results[1].as_ref().unwrap_err(), &Refusal::AccountNotFound);
        assert_eq!(
            results[2].as_ref().unwrap_err(),
            &Refusal::InsufficientFunds
        );
        // A key repeated in the call is a replay of its first use, answered in its place.
        let replay = results[3].as_ref().unwrap();
        assert!(replay.replay);
        assert_eq!(
            replay.entry.entry_id,
            results[0].as_ref().unwrap().entry.entry_id
        );
        assert_eq!(results[4].as_ref().unwrap().account.account_id, "b");
        let a2 = results[5].as_ref().unwrap();
        assert_eq!(
            (a2.account.account_id.as_str(), a2.account.balance),
            ("a", 800_000)
        );
        for (id, balance) in [("a", 800_000), ("b", 600_000), ("c", 700_000)] {
            assert_eq!(s.get_account(&acct(id)).await.unwrap().balance, balance);
        }
        assert_clean(s).await;
    }
);

backend_test!(
    debits_racing_over_many_accounts_each_stop_at_the_buffer,
    |b| async move {
        // The default batching, small batches in one lane, and batching off.
        let settings = [
            BatchOptions::default(),
            BatchOptions {
                max_batch: 4,
                postgres_streams: 1,
            },
            BatchOptions {
                max_batch: 1,
                postgres_streams: 1,
            },
        ];
        for opts in settings {
            race_debits_over_five_accounts(b, opts).await;
        }
    }
);

async fn race_debits_over_five_accounts(b: holdfast::testing::Backend, opts: BatchOptions) {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    let e = std::sync::Arc::new(e.with_batching(opts));
    let accounts = ["m0", "m1", "m2", "m3", "m4"];
    for id in accounts {
        put(e.store(), id, "free").await;
        top_up(e.store(), id, "1.00", "t").await;
    }
    // 40 debits of 0.10 per account, all at once through the batcher (batches mix
    // accounts); every fourth repeats an earlier key of its account.
    let tasks: Vec<_> = (0..200)
        .map(|i| {
            let e = e.clone();
            let id = accounts[i % 5];
            let n = i / 5;
            let k = if n % 4 == 3 { n - 1 } else { n };
            tokio::spawn(async move {
                let r = e
                    .debit(
                        &acct(id),
                        &Usage::Amount(usd("0.10")),
                        &key(&format!("d{k}")),
                        None,
                    )
                    .await;
                (id, r)
            })
        })
        .collect();
    let mut applied: std::collections::HashMap<&str, usize> = Default::default();
    for t in tasks {
        match t.await.unwrap() {
            (id, Ok(r)) if !r.replay => *applied.entry(id).or_default() += 1,
            (_, Ok(_)) | (_, Err(StoreError::Refused(Refusal::InsufficientFunds))) => {}
            (_, Err(other)) => panic!("unexpected {other}"),
        }
    }
    for id in accounts {
        // 1.00 of balance and 1.00 of buffer: exactly twenty 0.10 debits, whatever
        // the batches were.
        assert_eq!(applied.get(id), Some(&20), "{id} ({opts:?})");
        let a = e.store().get_account(&acct(id)).await.unwrap();
        assert_eq!(a.balance, -1_000_000, "{id}");
        assert!(a.suspended_at.is_some());
    }
    let suspended = events_of(e.store(), "account.suspended", 5).await;
    assert_eq!(
        suspended.len(),
        5,
        "each account suspended exactly once ({opts:?})"
    );
    assert_clean(e.store()).await;
}

backend_test!(
    ingest_calls_race_single_debits_on_the_same_accounts,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        let e = std::sync::Arc::new(e);
        let accounts = ["g0", "g1"];
        for id in accounts {
            put(e.store(), id, "free").await;
            top_up(e.store(), id, "1.00", "t").await;
        }
        // Per account: 6 ingest calls of 5 debits of 0.10 (calls c and c + 3 share keys)
        // and 20 single debits with keys of their own, all at once. 1.00 of balance and
        // 1.00 of buffer: exactly 20 debits apply per account, whichever path they took.
        let debit = || Usage::Amount(usd("0.10"));
        let mut tasks = Vec::new();
        for c in 0..6 {
            let e = e.clone();
            let items: Vec<(AccountId, DebitRequest)> = (0..10)
                .map(|i| {
                    let k = key(&format!("batch{}-{}", c % 3, i / 2));
                    (acct(accounts[i % 2]), DebitRequest::new(&debit(), &k, None))
                })
                .collect();
            tasks.push(tokio::spawn(async move {
                let got = e.debit_many(&items).await.expect("ingest");
                let ids = items.iter().map(|(a, _)| a.as_str().to_owned());
                ids.zip(got.into_iter().map(|r| r.map(|m| m.replay)))
                    .collect::<Vec<_>>()
            }));
        }
        for i in 0..40 {
            let e = e.clone();
            tasks.push(tokio::spawn(async move {
                let id = accounts[i % 2];
                let k = key(&format!("one{i}"));
                let r = e.debit(&acct(id), &debit(), &k, None).await;
                vec![(id.to_owned(), r.map(|m| m.replay).map_err(refusal))]
            }));
        }
        let mut applied: std::collections::HashMap<String, usize> = Default::default();
        for t in tasks {
            for (id, r) in t.await.unwrap() {
                match r {
                    Ok(false) => *applied.entry(id).or_default() += 1,
                    Ok(true) | Err(Refusal::InsufficientFunds) => {}
                    Err(other) => panic!("unexpected {other:?}"),
                }
            }
        }
        for id in accounts {
            assert_eq!(applied.get(id), Some(&20), "{id}");
            let a = e.store().get_account(&acct(id)).await.unwrap();
            assert_eq!(a.balance, -1_000_000, "{id}");
        }
        assert_eq!(events_of(e.store(), "account.suspended", 2).await.len(), 2);
        assert_clean(e.store()).await;
    }
);

fn refusal(e: StoreError) -> Refusal {
    match e {
        StoreError::Refused(r) => r,
        other => panic!("unexpected {other}"),
    }
}

/// An engine with these accounts (free plan), each topped up with `amount`.
async fn funded(
    b: holdfast::testing::Backend,
    accounts: &[&str],
    amount: &str,
) -> Option<(TestDb, holdfast::Engine)> {
    let (db, e) = engine(b).await?;
    for id in accounts {
        put(e.store(), id, "free").await;
        top_up(e.store(), id, amount, "t").await;
    }
    Some((db, e))
}

/// The account's balance and total spent after debits of `spent` from `funded`.
async fn assert_spent(e: &holdfast::Engine, id: &str, funded: i64, spent: i64) {
    let a = e.store().get_account(&acct(id)).await.unwrap();
    assert_eq!((a.balance, a.total_spent), (funded - spent, spent), "{id}");
}

/// The debits of an ingest call, `(account, key, amount)` each.
fn ingest_items(items: &[(&str, &str, &str)]) -> Vec<(AccountId, DebitRequest)> {
    items
        .iter()
        .map(|(a, k, amount)| {
            let usage = Usage::Amount(usd(amount));
            (acct(a), DebitRequest::new(&usage, &key(k), None))
        })
        .collect()
}

backend_test!(ingest_replays_keys_an_earlier_call_used, |b| async move {
    let Some((_db, e)) = funded(b, &["r0", "r1"], "5.00").await else {
        return;
    };
    let first = [
        ("r0", "k0", "0.10"),
        ("r1", "k0", "0.20"),
        ("r0", "k1", "0.30"),
        ("r1", "k1", "0.40"),
    ];
    let applied: Vec<_> = e
        .debit_many(&ingest_items(&first))
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    assert!(applied.iter().all(|m| !m.replay));
    // Full replay: the same call again answers every debit with its first entry and
    // changes nothing.
    let again = e.debit_many(&ingest_items(&first)).await.unwrap();
    for (got, was) in again.into_iter().zip(&applied) {
        let got = got.unwrap();
        assert!(got.replay);
        assert_eq!(got.entry, was.entry);
    }
    // Partial replay: used keys (one with another amount: a mismatch) among new ones,
    // a new key twice (its second use is a replay of its first).
    let mixed = [
        ("r0", "k2", "0.50"),
        ("r1", "k1", "0.40"),
        ("r0", "k0", "0.90"),
        ("r0", "k2", "0.50"),
        ("r1", "k2", "0.60"),
        ("r0", "k1", "0.30"),
    ];
    let got = e.debit_many(&ingest_items(&mixed)).await.unwrap();
    let m = |i: usize| got[i].as_ref().unwrap();
    assert!(!m(0).replay && !m(4).replay);
    assert_eq!((m(0).entry.delta, m(4).entry.delta), (-500_000, -600_000));
    assert!(m(1).replay && m(3).replay && m(5).replay);
    assert_eq!(m(1).entry, applied[3].entry);
    assert_eq!(m(3).entry, m(0).entry);
    assert_eq!(m(5).entry, applied[2].entry);
    assert!(matches!(got[2], Err(Refusal::IdempotencyMismatch)));
    // Each answer's account is the account as that debit left it (as a single
    // debit's would be).
    assert_eq!(m(0).account.balance, 5_000_000 - 400_000 - 500_000);
    assert_eq!(m(4).account.balance, 5_000_000 - 600_000 - 600_000);
    // A retry the balance no longer covers is still the replay of its first use; a new
    // key for the same debit is refused.
    let big = [("r1", "k3", "3.00")];
    let was = e.debit_many(&ingest_items(&big)).await.unwrap();
    let was = was.into_iter().next().unwrap().unwrap();
    let retried = [("r1", "k3", "3.00"), ("r1", "k4", "3.00")];
    let got = e.debit_many(&ingest_items(&retried)).await.unwrap();
    let first = got[0].as_ref().unwrap();
    assert!(first.replay);
    assert_eq!(first.entry, was.entry);
    assert!(matches!(got[1], Err(Refusal::InsufficientFunds)));
    assert_spent(&e, "r0", 5_000_000, 900_000).await;
    assert_spent(&e, "r1", 5_000_000, 4_200_000).await;
    assert_clean(e.store()).await;
});

backend_test!(
    overlapping_ingest_calls_share_keys_and_accounts,
    |b| async move {
        let accounts = ["o0", "o1", "o2"];
        let Some((_db, e)) = funded(b, &accounts, "50.00").await else {
            return;
        };
        let e = std::sync::Arc::new(e);
        // 16 calls at once of 12 debits of 0.10 each over the three accounts; call c uses
        // keys c .. c + 3 of each account, so neighbouring calls overlap in keys (and a
        // call names each of its keys once per account). Keys 0 to 18: 19 debits per
        // account apply, every other use is a replay of the one that applied.
        let mut tasks = Vec::new();
        for c in 0..16 {
            let e = e.clone();
            let items: Vec<(AccountId, DebitRequest)> = (0..12)
                .map(|i| {
                    let k = key(&format!("s{}", c + i / 3));
                    let usage = Usage::Amount(usd("0.10"));
                    (acct(accounts[i % 3]), DebitRequest::new(&usage, &k, None))
                })
                .collect();
            tasks.push(tokio::spawn(async move {
                let got = e.debit_many(&items).await.expect("ingest");
                let named = items.into_iter().map(|(a, r)| (a, r.key));
                named.zip(got).collect::<Vec<_>>()
            }));
        }
        let mut entries: std::collections::HashMap<String, i64> = Default::default();
        let mut applied = 0;
        let mut answers = Vec::new();
        for t in tasks {
            for ((a, k), r) in t.await.unwrap() {
                let r = r.unwrap_or_else(|r| panic!("unexpected {r:?}"));
                let name = format!("{a}/{k:?}");
                if !r.replay {
                    applied += 1;
                    let was = entries.insert(name.clone(), r.entry.entry_id);
                    assert!(was.is_none(), "{name} applied twice");
                }
                answers.push((name, r.entry.entry_id));
            }
        }
        assert_eq!(applied, 3 * 19);
        for (name, entry_id) in answers {
            assert_eq!(
                entries[&name], entry_id,
                "{name}: a replay of another entry"
            );
        }
        for id in accounts {
            assert_spent(&e, id, 50_000_000, 1_900_000).await;
        }
        assert_clean(e.store()).await;
    }
);
