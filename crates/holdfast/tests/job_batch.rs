//! Batched worker calls (`lease_many`, `complete_many`, `fail_many`) on SQLite and
//! PostgreSQL: each item answers what the single call answers, and many workers leasing
//! and finishing in batches, with the sweeper, finish every job once with exact balances.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use holdfast::testing::*;
use holdfast::{
    CompleteJob, Engine, FailJob, Job, JobStatus, Lease, PocketAmount, Refusal, StoreError, Usage,
    backend_test,
};

fn money(amount: i64) -> Vec<PocketAmount> {
    vec![PocketAmount {
        pocket: "money".into(),
        amount,
    }]
}

/// An account on the free plan that may run `limit` jobs at once, with `amount` of money.
async fn funded(e: &Engine, id: &str, limit: i64, amount: &str) {
    put_limited(e.store(), id, "free", Some(limit)).await;
    top_up(e.store(), id, amount, &format!("t-{id}")).await;
}

/// `n` video jobs of `account`, one after the other (so oldest first is this order).
async fn videos(e: &Engine, account: &str, n: usize) -> Vec<String> {
    let mut jobs = Vec::new();
    for i in 0..n {
        let k = format!("{account}-{i}");
        jobs.push(
            e.submit(&submit_req(account, "video", &k))
                .await
                .unwrap()
                .job
                .job_id,
        );
    }
    jobs
}

backend_test!(
    lease_many_hands_out_distinct_jobs_oldest_first,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        let mut leasable = Vec::new();
        for a in ["a", "b"] {
            funded(&e, a, 10, "10.00").await;
            leasable.extend(videos(&e, a, 4).await);
        }
        // Suspended (a debit into the buffer), blocked and banned accounts' jobs stay queued.
        funded(&e, "s", 10, "0.50").await;
        let held_back = videos(&e, "s", 1).await;
        e.debit(&acct("s"), &Usage::Amount(usd("0.70")), &key("d-s"), None)
            .await
            .unwrap();
        let s = e.store().get_account(&acct("s")).await.unwrap();
        assert!(s.suspended_at.is_some(), "{s:?}");
        for (id, how) in [("k", "block"), ("x", "ban")] {
            funded(&e, id, 10, "10.00").await;
            videos(&e, id, 2).await;
            match how {
                "block" => drop(e.set_blocked(&acct(id), true).await.unwrap()),
                _ => drop(e.ban(&acct(id), "fraud").await.unwrap()),
            }
        }
        let w = worker();
        assert_eq!(
            refused(e.lease_many("video", &w, 60, 0).await),
            Refusal::InvalidRequest("max_jobs: 1 to 100 jobs, got 0".into())
        );
        assert!(matches!(
            refused(e.lease_many("video", &w, 60, 101).await),
            Refusal::InvalidRequest(_)
        ));
        assert!(matches!(
            refused(e.lease_many("nope", &w, 60, 5).await),
            Refusal::UnknownLane(_)
        ));
        assert!(matches!(
            refused(e.lease_many("video", &w, 0, 5).await),
            Refusal::InvalidRequest(_)
        ));
        let first = e.lease_many("video", &w, 60, 5).await.unwrap();
        let rest = e.lease_many("video", &w, 60, 100).await.unwrap();
        assert_eq!(
            (first.len(), rest.len()),
            (5, 3),
            "at most max, then what is left"
        );
        assert!(e.lease_many("video", &w, 60, 100).await.unwrap().is_empty());
        let all: Vec<&Lease> = first.iter().chain(&rest).collect();
        let ids: Vec<&str> = all.iter().map(|l| l.job.job_id.as_str()).collect();
        // Oldest first: the order of submission, with none of the held-back accounts' jobs.
        assert_eq!(ids, leasable.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(held_back.iter().all(|j| !ids.contains(&j.as_str())));
        let tokens: BTreeSet<&str> = all.iter().map(|l| l.lease_token.as_str()).collect();
        assert_eq!(tokens.len(), all.len(), "a token of its own per job");
        for l in &all {
            assert_eq!(l.job.status, JobStatus::InProgress);
            assert_eq!(l.job.worker_id.as_deref(), Some(w.as_str()));
            assert_eq!(l.job.lease_expires_at, Some(l.lease_expires_at));
        }
        // Each token fences its own job only.
        let (one, two) = (&all[0], &all[1]);
        let wrong = e
            .complete(&job_id(&one.job.job_id), &two.lease_token, None)
            .await;
        assert_eq!(refused(wrong), Refusal::LeaseLost);
        let items: Vec<CompleteJob> = all
            .iter()
            .map(|l| CompleteJob {
                job: job_id(&l.job.job_id),
                lease_token: l.lease_token.clone(),
                capture: None,
            })
            .collect();
        for answer in e.complete_many(&items).await.unwrap() {
            assert_eq!(answer.unwrap().status, JobStatus::Succeeded);
        }
        for a in ["a", "b"] {
            let v = e.store().get_account(&acct(a)).await.unwrap();
            assert_eq!((v.balance, v.held, v.open_jobs), (8_000_000, 0, 0));
        }
        assert_clean(e.store()).await;
    }
);

/// A job's place in the scenario, and how an item names it and its token.
#[derive(Debug, Clone, Copy)]
enum Token {
    Right,
    Wrong,
}

/// One item of the mixed batch, independent of the database's ids: the job by its place
/// (`None`: a job that does not exist), the token, and a capture of money.
type Item = (Option<usize>, Token, Option<i64>);

/// What an answer says, without the ids of one database.
fn shape(r: &Result<Job, StoreError>) -> String {
    match r {
        Ok(j) => format!("{:?} {:?} {:?}", j.status, j.charged, j.failure_reason),
        Err(StoreError::Refused(r)) => format!("refused {}", r.code()),
        Err(e) => format!("error {e}"),
    }
}

/// Ten video jobs over two accounts, all leased (job i has lease i); job 2 completed and
/// job 3 failed already, job 9 left queued.
async fn twin(b: Backend) -> Option<(TestDb, Engine, Vec<String>, Vec<Lease>)> {
    let (db, e) = engine(b).await?;
    funded(&e, "u1", 20, "10.00").await;
    funded(&e, "u2", 20, "10.00").await;
    let mut jobs = videos(&e, "u1", 6).await;
    jobs.extend(videos(&e, "u2", 4).await);
    let mut leases = e.lease_many("video", &worker(), 60, 9).await.unwrap();
    leases.sort_by_key(|l| jobs.iter().position(|j| *j == l.job.job_id));
    let done = &leases[2];
    e.complete(&job_id(&done.job.job_id), &done.lease_token, None)
        .await
        .unwrap();
    let failed = &leases[3];
    e.fail(&job_id(&failed.job.job_id), &failed.lease_token, Some("x"))
        .await
        .unwrap();
    Some((db, e, jobs, leases))
}

/// The concrete (job, token, capture) of an item on one database.
fn concrete(
    jobs: &[String],
    leases: &[Lease],
    (at, token, capture): Item,
) -> (String, String, Option<i64>) {
    let nobody = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
    let job = at.map_or_else(|| nobody.to_owned(), |i| jobs[i].clone());
    let token = match (token, at.and_then(|i| leases.get(i))) {
        (Token::Right, Some(l)) => l.lease_token.clone(),
        _ => "f".repeat(64),
    };
    (job, token, capture)
}

const COMPLETES: [Item; 11] = [
    (Some(0), Token::Right, None),
    (Some(0), Token::Right, None), // a repeat in the same batch
    (Some(1), Token::Wrong, None), // lease_lost
    (None, Token::Right, None),    // job_not_found
    (Some(2), Token::Right, None), // finished before: a repeat
    (Some(3), Token::Right, None), // failed before: already_finished
    (Some(4), Token::Right, Some(200_000)), // partial capture
    (Some(5), Token::Right, Some(600_000)), // more than held: invalid
    (Some(6), Token::Right, Some(0)),
    (Some(9), Token::Right, None), // queued, never leased: lease_lost
    (Some(7), Token::Right, None),
];

const FAILS: [Item; 5] = [
    (Some(1), Token::Right, None),
    (Some(1), Token::Right, None), // a repeat
    (Some(8), Token::Wrong, None),
    (Some(0), Token::Right, None), // completed: already_finished
    (Some(5), Token::Right, None),
];

async fn in_batches(e: &Engine, jobs: &[String], leases: &[Lease]) -> Vec<String> {
    let completes: Vec<CompleteJob> = COMPLETES
        .iter()
        .map(|&i| concrete(jobs, leases, i))
        .map(|(job, lease_token, capture)| CompleteJob {
            job: job_id(&job),
            lease_token,
            capture: capture.map(money),
        })
        .collect();
    let fails: Vec<FailJob> = FAILS
        .iter()
        .map(|&i| concrete(jobs, leases, i))
        .map(|(job, lease_token, _)| FailJob {
            job: job_id(&job),
            lease_token,
            reason: Some("flaky".into()),
        })
        .collect();
    let mut out: Vec<String> = e
        .complete_many(&completes)
        .await
        .unwrap()
        .iter()
        .map(shape)
        .collect();
    out.extend(e.fail_many(&fails).await.unwrap().iter().map(shape));
    out
}

async fn one_by_one(e: &Engine, jobs: &[String], leases: &[Lease]) -> Vec<String> {
    let mut out = Vec::new();
    for &item in &COMPLETES {
        let (job, token, capture) = concrete(jobs, leases, item);
        let capture = capture.map(money);
        out.push(shape(
            &e.complete(&job_id(&job), &token, capture.as_deref()).await,
        ));
    }
    for &item in &FAILS {
        let (job, token, _) = concrete(jobs, leases, item);
        out.push(shape(&e.fail(&job_id(&job), &token, Some("flaky")).await));
    }
    out
}

/// What must agree between the twins afterwards: the accounts and the events by type.
async fn books(e: &Engine) -> Vec<String> {
    let mut out = Vec::new();
    for a in ["u1", "u2"] {
        let v = e.store().get_account(&acct(a)).await.unwrap();
        out.push(format!(
            "{a} {} {} {} {}",
            v.balance, v.held, v.total_spent, v.open_jobs
        ));
    }
    // Jobs 0, 2, 4, 6 and 7 succeed; 1, 3 and 5 fail.
    for (t, n) in [("job.succeeded", 5), ("job.failed", 3)] {
        out.push(format!("{t} {}", events_of(e.store(), t, n).await.len()));
    }
    out
}

backend_test!(
    a_mixed_batch_answers_what_the_single_calls_answer,
    |b| async move {
        let Some((_db1, batched, jobs1, leases1)) = twin(b).await else {
            return;
        };
        let (_db2, single, jobs2, leases2) = twin(b).await.unwrap();
        let got = in_batches(&batched, &jobs1, &leases1).await;
        let want = one_by_one(&single, &jobs2, &leases2).await;
        assert_eq!(got, want);
        // The scenario covers every answer it names.
        for needle in [
            "Succeeded",
            "lease_lost",
            "job_not_found",
            "already_finished",
            "invalid_request",
            "Failed",
        ] {
            assert!(
                got.iter().any(|g| g.contains(needle)),
                "{needle} in {got:#?}"
            );
        }
        assert!(got[6].contains("200000"), "{}", got[6]);
        assert_eq!(books(&batched).await, books(&single).await);
        assert_clean(batched.store()).await;
        assert_clean(single.store()).await;
    }
);
