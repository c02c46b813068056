//! Actors outside HTTP: a program that names its actor, the scheduled passes
//! (`system:<pass>`), and key management, on SQLite and PostgreSQL.

use std::time::Duration;

use holdfast::actor::{LIBRARY, acting_as};
use holdfast::testing::*;
use holdfast::{JobStatus, backend_test};
use tokio::sync::watch;

backend_test!(passes_and_programs_record_who_they_are, |b| async move {
    let card = card_with(&[
        ("stale_after_seconds = 1800", "stale_after_seconds = 1"),
        ("lease_seconds = 60", "lease_seconds = 1"),
        ("sweep_every_seconds = 5", "sweep_every_seconds = 0.2"),
        (
            "reconcile_every_seconds = 300",
            "reconcile_every_seconds = 0.2",
        ),
    ]);
    let Some((db, e)) = engine_with(b, card).await else {
        return;
    };
    // Outside any scope the library is the actor; inside one, the one named.
    put(e.store(), "u", "free").await;
    top_up(e.store(), "u", "5.00", "t").await;
    let job = acting_as("batch:nightly", e.submit(&submit_req("u", "video", "v")))
        .await
        .unwrap()
        .job;
    assert_eq!(job.actors.submitted.as_deref(), Some("batch:nightly"));
    let ledger = e.ledger(&acct("u"), None, 100).await.unwrap().items;
    let top_up_entry = ledger.iter().find(|l| l.kind == "top_up").unwrap();
    assert_eq!(top_up_entry.actor.as_deref(), Some(LIBRARY));
    // A key created is an operator action on no account.
    acting_as("cli:ops", e.create_key("worker", "hf_a_test_key"))
        .await
        .unwrap();
    let created = events_of(e.store(), "operator.key_created", 1).await;
    assert_eq!(
        (created[0].account_id.as_str(), created[0].actor.as_deref()),
        ("", Some("cli:ops"))
    );
    assert_eq!(created[0].data["role"], "worker");
    // The scheduled passes act as system:<pass>.
    behind_the_back(
        &db,
        "UPDATE accounts SET balance = balance + 7 WHERE account_id = 'u'",
    )
    .await;
    let (stop, rx) = watch::channel(false);
    let passes = holdfast::schedules::spawn(&e, rx);
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let expired = events_of(e.store(), "job.expired", 1).await;
    let adjusted = events_of(e.store(), "operator.adjusted", 1).await;
    stop.send(true).unwrap();
    for p in passes {
        p.await.unwrap();
    }
    assert_eq!(expired[0].actor.as_deref(), Some("system:sweep"));
    assert_eq!(adjusted[0].actor.as_deref(), Some("system:reconcile"));
    let swept = e.get_job(&job_id(&job.job_id)).await.unwrap();
    assert_eq!(swept.status, JobStatus::Expired);
    assert_eq!(swept.actors.finished.as_deref(), Some("system:sweep"));
    let adjustment = e.ledger(&acct("u"), None, 100).await.unwrap().items;
    let adjustment = adjustment.iter().find(|l| l.kind == "adjustment").unwrap();
    assert_eq!(adjustment.actor.as_deref(), Some("system:reconcile"));
    assert_clean(e.store()).await;
});

backend_test!(
    each_debit_of_a_batch_records_its_own_caller,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        for account in ["u", "v"] {
            put(e.store(), account, "free").await;
            top_up(e.store(), account, "5.00", "t").await;
        }
        // A batch carries the debits of several callers (the batcher's group commit runs
        // them on a task of its own): each entry names the caller of its debit, in the
        // answer and in the ledger, whoever runs the batch.
        let usage = holdfast::Usage::Amount(holdfast::Micros(100));
        let debit = |account: &str, k: &str, caller: &str| {
            let mut req = holdfast::DebitRequest::new(&usage, &key(k), None);
            req.actor = caller.to_owned();
            (acct(account), req)
        };
        let items = [
            debit("u", "d1", "key:alice"),
            debit("v", "d2", "key:bob"),
            debit("u", "d3", "key:bob"),
        ];
        let answers = acting_as("batch:runner", e.debit_many(&items))
            .await
            .unwrap();
        let answered: Vec<Option<String>> = answers
            .into_iter()
            .map(|a| a.unwrap().entry.actor)
            .collect();
        let callers = ["key:alice", "key:bob", "key:bob"].map(|c| Some(c.to_owned()));
        assert_eq!(answered, callers);
        let mut stored = Vec::new();
        for account in ["u", "v"] {
            let ledger = e.ledger(&acct(account), None, 100).await.unwrap().items;
            let debits = ledger.into_iter().filter(|l| l.kind == "debit");
            stored.extend(debits.map(|l| (l.entry_id, l.actor)));
        }
        stored.sort();
        let stored: Vec<Option<String>> = stored.into_iter().map(|(_, a)| a).collect();
        assert_eq!(stored, callers);
        assert_clean(e.store()).await;
    }
);
