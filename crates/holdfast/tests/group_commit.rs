//! Group commit at SQLite's write gate (docs/DESIGN.md, "Unit of work"): units of work
//! queued behind the writer holding the gate share its transaction and its commit, each in
//! its own savepoint. A unit that is refused, fails or is dropped mid-way leaves nothing;
//! the others of its group commit; a commit that fails fails every member of the group,
//! and each is then retried safely under its key. Every scenario ends with the audit.
//!
//! The grouping scenarios are SQLite's only: PostgreSQL has no write gate and commits
//! each unit of work on its own (unchanged). The mixed race runs on both backends.

use std::time::Duration;

use holdfast::testing::*;
use holdfast::{CreditKind, Refusal, StoreError, Usage, backend_test};
use holdfast_store::Store;
use holdfast_store::driver::db::{Pool, Sql, Tx};

/// Waits (bounded) until `n` writers are queued at the gate.
async fn until_queued(pool: &Pool, n: usize) {
    for _ in 0..600 {
        if pool.writers_queued() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{} writers queued, wanted {n}", pool.writers_queued());
}

async fn probe_notes(db: &TestDb) -> Vec<String> {
    let mut notes = Vec::new();
    for note in ["blocker", "kept", "failed", "dropped"] {
        let sql = format!("SELECT COUNT(*) FROM gc_probe WHERE note = '{note}'");
        if db.query_i64(&sql).await > 0 {
            notes.push(note.to_owned());
        }
    }
    notes
}

async fn insert_probe(tx: &mut Tx, note: &str) {
    let insert = Sql::both("INSERT INTO gc_probe (note) VALUES ($1)");
    tx.execute(insert, holdfast_store::args![note])
        .await
        .unwrap();
}

/// A raw unit of work that writes a probe row and then commits, rolls back or is dropped.
fn raw_unit(s: &Store, note: &'static str) -> tokio::task::JoinHandle<Result<(), StoreError>> {
    let s = s.clone();
    tokio::spawn(async move {
        let mut tx = s.pool().begin_write().await?;
        insert_probe(&mut tx, note).await;
        match note {
            "kept" => tx.commit().await,
            "failed" => tx.rollback().await,
            _ => {
                drop(tx);
                Ok(())
            }
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn refused_failed_and_dropped_units_leave_their_group_to_commit() {
    let Some((db, e)) = engine(Backend::Sqlite).await else {
        return;
    };
    let s = e.store().clone();
    db.execute("CREATE TABLE gc_probe (id INTEGER PRIMARY KEY, note TEXT NOT NULL)")
        .await;
    for i in 0..6 {
        put(&s, &format!("a{i}"), "free").await;
    }
    put(&s, "poor", "free").await;
    let commits_before = s.pool().group_commits().unwrap();
    // The writer holding the gate, so that everything below queues behind it.
    let mut blocker = s.pool().begin_write().await.unwrap();
    insert_probe(&mut blocker, "blocker").await;
    let top_ups: Vec<_> = (0..6)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move {
                let k = key(&format!("t{i}"));
                let a = acct(&format!("a{i}"));
                s.credit(&a, usd("7.00"), CreditKind::TopUp, &k).await
            })
        })
        .collect();
    let poor: Vec<_> = (0..2)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move {
                let k = key(&format!("poor{i}"));
                s.debit(&acct("poor"), &Usage::Amount(usd("100.00")), &k, None)
                    .await
            })
        })
        .collect();
    let raw: Vec<_> = ["kept", "failed", "dropped"]
        .into_iter()
        .map(|note| raw_unit(&s, note))
        .collect();
    until_queued(s.pool(), 11).await;
    let blocker = tokio::spawn(blocker.commit());
    blocker.await.unwrap().unwrap();
    for t in top_ups {
        t.await.unwrap().unwrap();
    }
    for t in poor {
        assert_eq!(refused(t.await.unwrap()), Refusal::InsufficientFunds);
    }
    for t in raw {
        t.await.unwrap().unwrap();
    }
    // Nine units kept (blocker, six top-ups, "kept"), in fewer commits than units.
    let commits = s.pool().group_commits().unwrap() - commits_before;
    assert!(
        (1..8).contains(&commits),
        "{commits} commits for 8 kept units"
    );
    assert_eq!(probe_notes(&db).await, ["blocker", "kept"]);
    for i in 0..6 {
        let a = s.get_account(&acct(&format!("a{i}"))).await.unwrap();
        assert_eq!(a.balance, 7_000_000);
    }
    let poor = s.get_account(&acct("poor")).await.unwrap();
    assert_eq!((poor.balance, poor.total_spent), (0, 0));
    assert_clean(&s).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_commit_that_fails_fails_every_member_and_each_retries_under_its_key() {
    let Some((db, e)) = engine(Backend::Sqlite).await else {
        return;
    };
    let s = e.store().clone();
    // A deferred foreign key is checked at COMMIT: a row without its parent makes the
    // group's commit fail after every unit in it succeeded.
    db.execute("CREATE TABLE gc_parent (id INTEGER PRIMARY KEY)")
        .await;
    db.execute(
        "CREATE TABLE gc_child (id INTEGER PRIMARY KEY, parent INTEGER NOT NULL \
         REFERENCES gc_parent (id) DEFERRABLE INITIALLY DEFERRED)",
    )
    .await;
    for i in 0..6 {
        put(&s, &format!("a{i}"), "free").await;
    }
    let mut blocker = s.pool().begin_write().await.unwrap();
    let orphan = Sql::both("INSERT INTO gc_child (parent) VALUES (42)");
    blocker.execute(orphan, vec![]).await.unwrap();
    let top_up = |i: usize| {
        let s = s.clone();
        tokio::spawn(async move {
            let k = key(&format!("t{i}"));
            let a = acct(&format!("a{i}"));
            s.credit(&a, usd("3.00"), CreditKind::TopUp, &k).await
        })
    };
    let first: Vec<_> = (0..6).map(top_up).collect();
    until_queued(s.pool(), 6).await;
    let blocked = tokio::spawn(blocker.commit()).await.unwrap();
    assert!(blocked.is_err(), "the orphan row must fail the commit");
    // The group is the blocker and at least the first writer queued behind it (more
    // unless the group's time cap split it): every member failed, and left nothing.
    let mut failed = 0;
    for (i, t) in first.into_iter().enumerate() {
        let answer = t.await.unwrap();
        let balance = s.get_account(&acct(&format!("a{i}"))).await;
        match answer {
            Ok(_) => assert_eq!(balance.unwrap().balance, 3_000_000),
            // A member waiting for the group's answer, or the member that ran the commit
            // (it gets the database's own error).
            Err(why) => {
                let said = why.to_string();
                assert!(
                    said.contains("group commit") || said.contains("FOREIGN KEY"),
                    "{said}"
                );
                assert_eq!(balance.unwrap().balance, 0, "a failed member left money");
                failed += 1;
            }
        }
    }
    assert!(failed >= 1, "no member failed with the group's commit");
    assert_eq!(db.query_i64("SELECT COUNT(*) FROM gc_child").await, 0);
    // Retried under the same keys: each top-up applied exactly once.
    let again: Vec<_> = (0..6).map(top_up).collect();
    for (i, t) in again.into_iter().enumerate() {
        t.await.unwrap().unwrap();
        let a = s.get_account(&acct(&format!("a{i}"))).await.unwrap();
        assert_eq!((a.balance, a.total_credited), (3_000_000, 3_000_000));
    }
    assert_clean(&s).await;
}

/// What one writer of the mixed race did.
#[derive(Debug, PartialEq, Eq)]
enum Done {
    ToppedUp,
    Debited,
    Refused,
    Submitted,
    Cancelled,
}

async fn mixed_writer(s: Store, i: usize) -> Result<Done, StoreError> {
    let a = acct(&format!("m{}", (i / 4) % 4));
    let k = key(&format!("w{i}"));
    match i % 4 {
        0 => s
            .credit(&a, usd("2.00"), CreditKind::TopUp, &k)
            .await
            .map(|_| Done::ToppedUp),
        1 => match s.debit(&a, &Usage::Amount(usd("0.50")), &k, None).await {
            Ok(_) => Ok(Done::Debited),
            Err(StoreError::Refused(_)) => Ok(Done::Refused),
            Err(other) => Err(other),
        },
        2 => {
            let req = submit_req(a.as_str(), "image", k.as_str());
            match s.submit(&req).await {
                Ok(_) => Ok(Done::Submitted),
                Err(StoreError::Refused(_)) => Ok(Done::Refused),
                Err(other) => Err(other),
            }
        }
        _ => match s.debit(&a, &Usage::Amount(usd("1000.00")), &k, None).await {
            Err(StoreError::Refused(_)) => Ok(Done::Refused),
            other => panic!("a debit past any buffer: {other:?}"),
        },
    }
}

backend_test!(mixed_writers_some_refused_some_cancelled, |b| async move {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    let s = e.store().clone();
    for i in 0..4 {
        put(&s, &format!("m{i}"), "free").await;
        top_up(&s, &format!("m{i}"), "5.00", &format!("seed{i}")).await;
    }
    let tasks: Vec<_> = (0..160)
        .map(|i| tokio::spawn(mixed_writer(s.clone(), i)))
        .collect();
    // Every seventh writer's caller goes away wherever it is (queued, mid-unit, or
    // waiting for its group's commit).
    tokio::time::sleep(Duration::from_millis(5)).await;
    for (i, t) in tasks.iter().enumerate() {
        if i % 7 == 3 {
            t.abort();
        }
    }
    let commits_before = s.pool().group_commits();
    let mut done = Vec::new();
    for t in tasks {
        match t.await {
            Ok(answer) => done.push(answer.unwrap()),
            Err(join) => {
                assert!(join.is_cancelled());
                done.push(Done::Cancelled);
            }
        }
    }
    if let (Some(before), Some(after)) = (commits_before, s.pool().group_commits()) {
        // SQLite: the writes kept (cancelled ones may have been too) shared commits.
        let kept = done
            .iter()
            .filter(|d| matches!(d, Done::ToppedUp | Done::Debited | Done::Submitted))
            .count() as u64;
        assert!(
            after - before < kept,
            "{} commits for {kept} writes",
            after - before
        );
    }
    // The cancelled ones again, under their keys: each now answered, applied once at most.
    for (i, d) in done.iter_mut().enumerate() {
        if *d == Done::Cancelled {
            *d = mixed_writer(s.clone(), i).await.unwrap();
        }
    }
    for m in 0..4 {
        let a = s.get_account(&acct(&format!("m{m}"))).await.unwrap();
        let entries = s
            .ledger(&acct(&format!("m{m}")), None, 1000)
            .await
            .unwrap()
            .items;
        let of = |want: &Done| {
            (0..160)
                .filter(|i| (i / 4) % 4 == m && done[*i] == *want)
                .count() as i64
        };
        let topped = entries.iter().filter(|e| e.kind == "top_up").count() as i64;
        assert_eq!(topped, 1 + of(&Done::ToppedUp), "account m{m}");
        let debits = entries.iter().filter(|e| e.kind == "debit").count() as i64;
        assert_eq!(debits, of(&Done::Debited), "account m{m}");
        assert_eq!(
            a.total_credited,
            5_000_000 + 2_000_000 * of(&Done::ToppedUp)
        );
    }
    assert_clean(&s).await;
});
