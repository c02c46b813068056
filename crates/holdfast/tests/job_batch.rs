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
        blocks: Vec::new(),
    }]
}

/// An account on the free plan that may run `limit` jobs at once, with `amount` of money.
async fn funded(e: &Engine, id: &str, limit: i64, amount: &str) {
    put_limited(e.store(), id, "free", Some(limit)).await;
    top_up(e.store(), id, amount, &format!("t-{id}")).await;
}

/// The item that completes a leased job with its token.
fn complete_of(l: &Lease, capture: Option<Vec<PocketAmount>>) -> CompleteJob {
    CompleteJob {
        job: job_id(&l.job.job_id),
        lease_token: l.lease_token.clone(),
        capture,
    }
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
            Refusal::UnknownLane(..)
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
        let lower_hex =
            |t: &str| t.len() == 64 && t.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        assert!(
            tokens.iter().all(|t| lower_hex(t)),
            "64 lowercase hex digits: {tokens:?}"
        );
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
        let items: Vec<CompleteJob> = all.iter().map(|l| complete_of(l, None)).collect();
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
    batch_answers(e, &completes, &fails).await
}

/// The answers of a batched complete, then a batched fail.
async fn batch_answers(e: &Engine, completes: &[CompleteJob], fails: &[FailJob]) -> Vec<String> {
    let mut out: Vec<String> = e
        .complete_many(completes)
        .await
        .unwrap()
        .iter()
        .map(shape)
        .collect();
    out.extend(e.fail_many(fails).await.unwrap().iter().map(shape));
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

/// What the workers saw: every job leased (none twice) and every job they finished, by
/// its account: (charged money, finished).
#[derive(Default)]
struct Seen {
    leased: BTreeSet<String>,
    twice: Vec<String>,
    charged: BTreeMap<String, i64>,
}

/// A worker: leases up to 7 jobs at once and finishes them in batches (a partial
/// capture, a full one, a fail, and each job's repeat), until the lane is empty. A slow
/// worker's lease (1 s) runs out before it finishes, for the sweeper to take.
async fn batch_worker(e: Engine, n: usize, seen: Arc<Mutex<Seen>>) {
    let slow = n == 0;
    let w = holdfast::WorkerId::parse(&format!("w{n}")).unwrap();
    loop {
        let leases = e
            .lease_many("video", &w, if slow { 1 } else { 60 }, 7)
            .await
            .unwrap();
        if leases.is_empty() {
            return;
        }
        {
            let mut s = seen.lock().unwrap();
            for l in &leases {
                if !s.leased.insert(l.job.job_id.clone()) {
                    s.twice.push(l.job.job_id.clone());
                }
            }
        }
        if slow {
            tokio::time::sleep(Duration::from_millis(1_100)).await;
        }
        let (fails, completes): (Vec<&Lease>, Vec<&Lease>) = leases
            .iter()
            .partition(|l| l.job.job_id.ends_with(['0', '1', '2']));
        let mut items: Vec<CompleteJob> = completes
            .iter()
            .enumerate()
            .map(|(i, l)| complete_of(l, (i % 2 == 0).then(|| money(100_000))))
            .collect();
        items.extend(items.clone()); // each a repeat
        let fails: Vec<FailJob> = fails
            .iter()
            .map(|l| FailJob {
                job: job_id(&l.job.job_id),
                lease_token: l.lease_token.clone(),
                reason: None,
            })
            .collect();
        let done = e.complete_many(&items).await.unwrap();
        let failed = if fails.is_empty() {
            vec![]
        } else {
            e.fail_many(&fails).await.unwrap()
        };
        let (first, repeats) = done.split_at(completes.len());
        if !slow {
            let shapes = |a: &[Result<Job, StoreError>]| a.iter().map(shape).collect::<Vec<_>>();
            assert_eq!(
                shapes(first),
                shapes(repeats),
                "a repeat answers as the first call"
            );
        }
        let mut s = seen.lock().unwrap();
        for answer in done.into_iter().take(completes.len()).chain(failed) {
            match answer {
                Ok(job) => {
                    let money: i64 = job.charged.iter().map(|c| c.amount).sum();
                    assert!(job.status == JobStatus::Succeeded || job.status == JobStatus::Failed);
                    *s.charged.entry(job.account_id).or_default() += money;
                }
                // Only the slow worker's jobs may have been swept or have lost their lease.
                Err(StoreError::Refused(Refusal::LeaseLost | Refusal::AlreadyFinished)) if slow => {
                }
                Err(e) => panic!("worker {n}: {e:?}"),
            }
        }
    }
}

backend_test!(
    workers_leasing_and_finishing_in_batches_finish_every_job_once,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        let accounts: [&'static str; 3] = ["r0", "r1", "r2"];
        let mut jobs = 0;
        for a in accounts {
            funded(&e, a, 1_000, "100.00").await;
        }
        // Submits race the workers: 3 accounts x 30 jobs, each account's from its own task.
        let submitters: Vec<_> = accounts
            .into_iter()
            .map(|a| {
                let e = e.clone();
                tokio::spawn(async move { videos(&e, a, 30).await })
            })
            .collect();
        for s in submitters {
            jobs += s.await.unwrap().len();
        }
        let seen = Arc::new(Mutex::new(Seen::default()));
        let sweeper = {
            let e = e.clone();
            tokio::spawn(async move {
                for _ in 0..30 {
                    e.sweep(100).await.unwrap();
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            })
        };
        let workers: Vec<_> = (0..6)
            .map(|n| tokio::spawn(batch_worker(e.clone(), n, seen.clone())))
            .collect();
        for w in workers {
            w.await.unwrap();
        }
        sweeper.await.unwrap();
        tokio::time::sleep(Duration::from_millis(1_100)).await;
        e.sweep(1_000).await.unwrap();
        let seen = std::mem::take(&mut *seen.lock().unwrap());
        assert!(seen.twice.is_empty(), "leased twice: {:?}", seen.twice);
        assert_eq!(seen.leased.len(), jobs, "every job leased once");
        // One end per job: its event (the feed may still be stamping the last ones).
        let mut ends = 0;
        for _ in 0..100 {
            ends = 0;
            for t in ["job.succeeded", "job.failed", "job.expired"] {
                ends += events_of(e.store(), t, 0).await.len();
            }
            if ends >= jobs {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(ends, jobs, "one end event per job");
        for a in accounts {
            let v = e.store().get_account(&acct(a)).await.unwrap();
            let charged = seen.charged.get(a).copied().unwrap_or(0);
            assert_eq!((v.held, v.open_jobs), (0, 0), "{a}: every job finished");
            assert_eq!(
                (v.balance, v.total_spent),
                (100_000_000 - charged, charged),
                "{a}"
            );
        }
        assert_clean(e.store()).await;
    }
);

backend_test!(
    a_batch_that_fails_as_a_whole_is_finished_one_by_one,
    |b| async move {
        let Some((db, e)) = engine(b).await else {
            return;
        };
        funded(&e, "u1", 10, "10.00").await;
        funded(&e, "u2", 10, "10.00").await;
        let mut jobs = videos(&e, "u1", 2).await;
        jobs.extend(videos(&e, "u2", 2).await);
        let mut leases = e.lease_many("video", &worker(), 60, 4).await.unwrap();
        leases.sort_by_key(|l| jobs.iter().position(|j| *j == l.job.job_id));
        // Job 2's stored hold is unreadable: its item fails with a store error, not a
        // refusal, which rolls the batch back; then each item runs alone.
        let bad = &jobs[2];
        behind_the_back(
            &db,
            &format!("UPDATE jobs SET hold = '{{}}' WHERE job_id = '{bad}'"),
        )
        .await;
        let items: Vec<CompleteJob> = leases.iter().map(|l| complete_of(l, None)).collect();
        let answers = e.complete_many(&items).await.unwrap();
        let shapes: Vec<String> = answers.iter().map(shape).collect();
        for (i, s) in shapes.iter().enumerate() {
            if i == 2 {
                assert!(matches!(answers[2], Err(StoreError::Corrupt(_))), "{s}");
            } else {
                assert!(s.starts_with("Succeeded"), "{i}: {s}");
            }
        }
        // Nothing of the failed batch stayed, nothing was done twice.
        let v1 = e.store().get_account(&acct("u1")).await.unwrap();
        assert_eq!((v1.balance, v1.held, v1.open_jobs), (9_000_000, 0, 0));
        let v2 = e.store().get_account(&acct("u2")).await.unwrap();
        assert_eq!((v2.balance, v2.held, v2.open_jobs), (9_500_000, 500_000, 1));
        assert_eq!(events_of(e.store(), "job.succeeded", 3).await.len(), 3);
        // Mended, the job completes as usual.
        let hold = r#"[{"pocket":"money","amount":500000}]"#;
        behind_the_back(
            &db,
            &format!("UPDATE jobs SET hold = '{hold}' WHERE job_id = '{bad}'"),
        )
        .await;
        let again = e.complete_many(&items).await.unwrap();
        assert!(
            again
                .iter()
                .all(|a| a.as_ref().unwrap().status == JobStatus::Succeeded)
        );
        let v2 = e.store().get_account(&acct("u2")).await.unwrap();
        assert_eq!((v2.balance, v2.held, v2.open_jobs), (9_000_000, 0, 0));
        assert_clean(e.store()).await;
    }
);

/// An account's events as `type job-index` in feed order, once at least `n` are visible
/// (on PostgreSQL the feed shows an event once older transactions have ended).
async fn feed_of(e: &Engine, account: &str, jobs: &[String], n: usize) -> Vec<String> {
    let filter = holdfast::EventFilter {
        limit: 1000,
        account_id: Some(account.into()),
        ..Default::default()
    };
    let mut out = Vec::new();
    for _ in 0..200 {
        out = e.events(&filter).await.unwrap().items;
        if out.len() >= n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    out.iter()
        .map(|ev| {
            let job = ev
                .job_id
                .as_ref()
                .and_then(|j| jobs.iter().position(|x| x == j));
            format!("{} {job:?}", ev.event_type)
        })
        .collect()
}

/// Video jobs, all leased, on a card with a low-balance line of 1.00: `low` (1.50 of
/// money, three jobs holding it all, then 0.50 of usage within the 1.00 buffer), whose
/// third capture takes its balance below zero and suspends it; `up` (1.90, two jobs: 0.90 available), where
/// releasing a hold whole (a capture of 0) takes available to 1.40, across the line;
/// `rich` (10.00, two jobs). Returns the jobs in submit order and their leases.
async fn crossing_twin(b: Backend) -> Option<(TestDb, Engine, Vec<String>, Vec<Lease>)> {
    let card = card_with(&[(
        "[plans.free]\nbuffer = \"1.00\"",
        "[plans.free]\nbuffer = \"1.00\"\nlow_balance = \"1.00\"",
    )]);
    let (db, e) = engine_with(b, card).await?;
    let mut jobs = Vec::new();
    for (account, money, n) in [("low", "1.50", 3), ("up", "1.90", 2), ("rich", "10.00", 2)] {
        funded(&e, account, 10, money).await;
        jobs.extend(videos(&e, account, n).await);
    }
    let usage = Usage::Amount(usd("0.50"));
    e.debit(&acct("low"), &usage, &key("low-usage"), None)
        .await
        .unwrap();
    let mut leases = e.lease_many("video", &worker(), 60, 7).await.unwrap();
    leases.sort_by_key(|l| jobs.iter().position(|j| *j == l.job.job_id));
    Some((db, e, jobs, leases))
}

backend_test!(
    a_batch_whose_captures_cross_the_line_and_suspend_keeps_the_events_in_order,
    |b| async move {
        let Some((_db1, batched, jobs1, leases1)) = crossing_twin(b).await else {
            return;
        };
        let (_db2, single, jobs2, leases2) = crossing_twin(b).await.unwrap();
        // (job, capture), the accounts interleaved: low 0 1 2, up 3 4, rich 5 6.
        let order = [
            (0, None),
            (3, Some(0)),
            (5, None),
            (1, None),
            (4, None),
            (2, None),
            (6, None),
        ];
        let items: Vec<CompleteJob> = order
            .iter()
            .map(|&(i, c)| complete_of(&leases1[i], c.map(money)))
            .collect();
        let got: Vec<String> = batched
            .complete_many(&items)
            .await
            .unwrap()
            .iter()
            .map(shape)
            .collect();
        let mut want = Vec::new();
        for &(i, c) in &order {
            let (l, capture) = (&leases2[i], c.map(money));
            let job = job_id(&l.job.job_id);
            let answer = single.complete(&job, &l.lease_token, capture.as_deref());
            want.push(shape(&answer.await));
        }
        assert_eq!(got, want);
        for account in ["low", "up", "rich"] {
            let g = batched.store().get_account(&acct(account)).await.unwrap();
            let w = single.store().get_account(&acct(account)).await.unwrap();
            assert_eq!(
                (g.balance, g.held, g.total_spent, g.suspended_at.is_some()),
                (w.balance, w.held, w.total_spent, w.suspended_at.is_some())
            );
            let want_feed = feed_of(&single, account, &jobs2, 1).await;
            let got_feed = feed_of(&batched, account, &jobs1, want_feed.len()).await;
            assert_eq!(got_feed, want_feed, "{account}");
        }
        // The scenario has what it is about.
        let low = feed_of(&single, "low", &jobs2, 1).await;
        assert!(
            low.iter().any(|e| e.starts_with("account.suspended")),
            "{low:#?}"
        );
        let up = feed_of(&single, "up", &jobs2, 1).await;
        let recovered = up
            .iter()
            .rposition(|e| e.starts_with("account.balance_recovered"));
        let first_end = up.iter().position(|e| e.starts_with("job.succeeded"));
        // Recovered right after the first job's end, before the second's.
        assert_eq!(recovered, first_end.map(|i| i + 1), "{up:#?}");
        assert_clean(batched.store()).await;
        assert_clean(single.store()).await;
    }
);

/// Jobs that hold allowance pockets (text: a daily message; image: a daily image, then
/// money once the pocket is empty) or nothing (ci), of two accounts, all leased, in
/// submit order.
async fn pocket_twin(b: Backend) -> Option<(TestDb, Engine, Vec<Lease>)> {
    let (db, e) = engine(b).await?;
    let mut jobs = Vec::new();
    for account in ["p1", "p2"] {
        funded(&e, account, 20, "1.00").await;
        for (i, kind) in ["text", "image", "image", "image", "image", "ci", "text"]
            .iter()
            .enumerate()
        {
            let k = format!("{account}-{i}");
            jobs.push(
                e.submit(&submit_req(account, kind, &k))
                    .await
                    .unwrap()
                    .job
                    .job_id,
            );
        }
    }
    let mut leases = Vec::new();
    for lane in ["text", "image", "runners"] {
        leases.extend(e.lease_many(lane, &worker(), 60, 20).await.unwrap());
    }
    leases.sort_by_key(|l| jobs.iter().position(|j| *j == l.job.job_id));
    assert_eq!(leases.len(), jobs.len());
    Some((db, e, leases))
}

/// The batch of the pocket scenario: each job completed (whole, or taking nothing from
/// its pocket) or failed, the accounts interleaved.
fn pocket_items(leases: &[Lease]) -> (Vec<CompleteJob>, Vec<FailJob>) {
    let pocket = |l: &Lease, amount| {
        let pocket = l.job.hold[0].pocket.clone();
        Some(vec![PocketAmount {
            pocket,
            amount,
            blocks: Vec::new(),
        }])
    };
    let mut completes = Vec::new();
    let mut fails = Vec::new();
    for (i, l) in leases.iter().enumerate() {
        match i % 7 {
            1 => completes.push(complete_of(l, pocket(l, 0))),
            3 => fails.push(FailJob {
                job: job_id(&l.job.job_id),
                lease_token: l.lease_token.clone(),
                reason: None,
            }),
            _ => completes.push(complete_of(l, None)),
        }
    }
    (completes, fails)
}

backend_test!(
    a_batch_of_jobs_holding_pockets_or_nothing_answers_what_the_single_calls_answer,
    |b| async move {
        let Some((_db1, batched, leases1)) = pocket_twin(b).await else {
            return;
        };
        let (_db2, single, leases2) = pocket_twin(b).await.unwrap();
        let (completes, fails) = pocket_items(&leases1);
        let got = batch_answers(&batched, &completes, &fails).await;
        let (completes, fails) = pocket_items(&leases2);
        let mut want = Vec::new();
        for c in &completes {
            want.push(shape(
                &single
                    .complete(&c.job, &c.lease_token, c.capture.as_deref())
                    .await,
            ));
        }
        for f in &fails {
            want.push(shape(&single.fail(&f.job, &f.lease_token, None).await));
        }
        assert_eq!(got, want);
        assert!(got.iter().any(|g| g.contains("daily_images")), "{got:#?}");
        assert!(got.iter().any(|g| g.contains("money")), "{got:#?}");
        for account in ["p1", "p2"] {
            let mut g = batched.store().get_account(&acct(account)).await.unwrap();
            let mut w = single.store().get_account(&acct(account)).await.unwrap();
            for v in [&mut g, &mut w] {
                v.last_active_at = None;
                v.created_at = 0;
                for p in v.allowances.values_mut() {
                    (p.cycle_started_at, p.refills_at) = (0, None);
                }
            }
            assert_eq!(g, w, "{account}");
            assert_eq!(g.held, 0);
        }
        assert_clean(batched.store()).await;
        assert_clean(single.store()).await;
    }
);
