//! The operations passes on SQLite and PostgreSQL: reconciliation (adjustments explain a
//! corrupted pocket), reactivation (idle accounts get their allowances back), and webhook
//! delivery to a real HTTP receiver on 127.0.0.1.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hmac::{Hmac, Mac};
use holdfast::testing::*;
use holdfast::webhooks::{Dispatcher, SIGNATURE_HEADER, WebhookOptions};
use holdfast::{CreditKind, Engine, EventFilter, Usage, backend_test};
use holdfast_store::Store;

// ---------------------------------------------------------------- helpers

/// Every event in the outbox, once the cursor shows them all: on PostgreSQL a committed
/// event becomes visible to readers only when every older transaction in the cluster has
/// ended (DESIGN.md "Events"), so this waits (bounded) until the listing has caught up
/// with the table.
async fn all_events(db: &TestDb, store: &Store) -> Vec<holdfast::Event> {
    for _ in 0..500 {
        let committed = db.query_i64("SELECT COUNT(*) FROM events").await;
        let items = store
            .events(&EventFilter {
                limit: 1000,
                ..Default::default()
            })
            .await
            .unwrap()
            .items;
        if items.len() as i64 == committed {
            return items;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the outbox listing never caught up with the events table");
}

async fn events_of(db: &TestDb, store: &Store, event_type: &str) -> Vec<holdfast::Event> {
    all_events(db, store)
        .await
        .into_iter()
        .filter(|e| e.event_type == event_type)
        .collect()
}

async fn ledger_of(store: &Store, id: &str) -> Vec<holdfast::LedgerEntry> {
    store.ledger(&acct(id), None, 1000).await.unwrap().items
}

/// Submits a job of `kind` and has a worker complete it (the whole hold captured).
async fn run_job(e: &Engine, account: &str, kind: &str, lane: &str, k: &str) -> String {
    let job = e.submit(&submit_req(account, kind, k)).await.unwrap().job;
    let lease = e
        .store()
        .lease(lane, &worker(), 60)
        .await
        .unwrap()
        .expect("a job to lease");
    assert_eq!(lease.job.job_id, job.job_id);
    let id = job_id(&job.job_id);
    e.store()
        .complete(&id, &lease.lease_token, None)
        .await
        .unwrap();
    job.job_id
}

// ---------------------------------------------------------------- reconciliation

backend_test!(
    a_corrupted_balance_is_explained_by_one_adjustment,
    |b| async move {
        let Some((db, e)) = engine(b).await else {
            return;
        };
        let s = e.store().clone();
        put(&s, "u1", "free").await;
        put(&s, "u2", "free").await;
        top_up(&s, "u1", "5.00", "t1").await;
        s.debit(&acct("u1"), &Usage::Amount(usd("1.25")), &key("d1"), None)
            .await
            .unwrap();
        let first = s.reconcile(100).await.unwrap();
        assert_eq!((first.processed, first.adjusted, first.drifted), (2, 0, 0));
        assert_clean(&s).await;

        behind_the_back(
            &db,
            "UPDATE accounts SET balance = balance + 123 WHERE account_id = 'u1'",
        )
        .await;
        let broken = s.audit().await.unwrap();
        assert!(
            broken.iter().any(|v| v.invariant == 1),
            "the audit sees the corruption: {broken:?}"
        );

        let r = s.reconcile(100).await.unwrap();
        assert_eq!((r.processed, r.adjusted, r.drifted), (2, 1, 0));
        let ledger = ledger_of(&s, "u1").await;
        let adjustments: Vec<_> = ledger.iter().filter(|l| l.kind == "adjustment").collect();
        assert_eq!(adjustments.len(), 1);
        let adj = adjustments[0];
        assert_eq!((adj.pocket.as_str(), adj.delta), ("money", 123));
        assert_eq!(adj.amount_after, 5_000_000 - 1_250_000 + 123);
        assert_eq!(ledger.last().unwrap().entry_id, adj.entry_id);
        let account = s.get_account(&acct("u1")).await.unwrap();
        assert_eq!(
            account.balance, 3_750_123,
            "the balance itself is never edited"
        );
        let adjusted = events_of(&db, &s, "ledger.adjusted").await;
        assert_eq!(adjusted.len(), 1);
        assert_eq!(adjusted[0].account_id, "u1");
        assert_eq!(adjusted[0].data["pocket"], "money");
        assert_eq!(adjusted[0].data["delta"], 123);
        assert_clean(&s).await;

        // A second run over the same data writes nothing.
        let entries = ledger.len();
        let events = all_events(&db, &s).await.len();
        let again = s.reconcile(100).await.unwrap();
        assert_eq!((again.adjusted, again.drifted), (0, 0));
        assert_eq!(ledger_of(&s, "u1").await.len(), entries);
        assert_eq!(all_events(&db, &s).await.len(), events);

        // New entries after the checkpoint are summed incrementally and agree.
        s.debit(&acct("u1"), &Usage::Amount(usd("0.50")), &key("d2"), None)
            .await
            .unwrap();
        top_up(&s, "u2", "2.00", "t2").await;
        let later = s.reconcile(100).await.unwrap();
        assert_eq!((later.processed, later.adjusted, later.drifted), (2, 0, 0));
        assert_clean(&s).await;
    }
);

backend_test!(
    a_corrupted_allowance_is_explained_by_one_adjustment,
    |b| async move {
        let Some((db, e)) = engine(b).await else {
            return;
        };
        let s = e.store().clone();
        put(&s, "u1", "free").await;
        run_job(&e, "u1", "image", "image", "j1").await; // daily_images 3 → 2
        s.reconcile(100).await.unwrap();
        behind_the_back(
        &db,
        "UPDATE allowances SET remaining = remaining - 2 WHERE account_id = 'u1' AND pocket = 'daily_images'",
    )
    .await;
        let r = s.reconcile(100).await.unwrap();
        assert_eq!(r.adjusted, 1);
        let adj: Vec<_> = ledger_of(&s, "u1")
            .await
            .into_iter()
            .filter(|l| l.kind == "adjustment")
            .collect();
        assert_eq!(adj.len(), 1);
        assert_eq!(
            (adj[0].pocket.as_str(), adj[0].delta, adj[0].amount_after),
            ("daily_images", -2, 0)
        );
        let adjusted = events_of(&db, &s, "ledger.adjusted").await;
        assert_eq!(adjusted.len(), 1);
        assert_eq!(adjusted[0].data["pocket"], "daily_images");
        assert_eq!(adjusted[0].data["delta"], -2);
        assert_clean(&s).await;
        let again = s.reconcile(100).await.unwrap();
        assert_eq!(again.adjusted, 0);
        assert_eq!(events_of(&db, &s, "ledger.adjusted").await.len(), 1);
        assert_clean(&s).await;
    }
);

backend_test!(
    held_and_counter_drift_is_reported_not_adjusted,
    |b| async move {
        let Some((db, e)) = engine(b).await else {
            return;
        };
        let s = e.store().clone();
        put(&s, "u1", "free").await;
        top_up(&s, "u1", "1.00", "t1").await;
        behind_the_back(
        &db,
        "UPDATE accounts SET held = held + 5, total_spent = total_spent + 7 WHERE account_id = 'u1'",
    )
    .await;
        let entries = ledger_of(&s, "u1").await.len();
        let r = s.reconcile(100).await.unwrap();
        assert_eq!((r.adjusted, r.drifted), (0, 2));
        assert_eq!(ledger_of(&s, "u1").await.len(), entries, "nothing written");
        assert!(events_of(&db, &s, "ledger.adjusted").await.is_empty());
        let v: BTreeSet<u8> = s
            .audit()
            .await
            .unwrap()
            .iter()
            .map(|v| v.invariant)
            .collect();
        assert_eq!(v, BTreeSet::from([2, 8]), "the audit still shows both");
        let again = s.reconcile(100).await.unwrap();
        assert_eq!(
            (again.adjusted, again.drifted),
            (0, 2),
            "reported every run"
        );
    }
);

backend_test!(
    concurrent_reconcilers_adjust_each_pocket_once,
    |b| async move {
        let Some((db, e)) = engine(b).await else {
            return;
        };
        let s = e.store().clone();
        for i in 0..12 {
            let id = format!("c{i:02}");
            put(&s, &id, "free").await;
            top_up(&s, &id, "1.00", &format!("t{i}")).await;
        }
        for sql in [
            "UPDATE accounts SET balance = balance + 1 WHERE account_id = 'c01'",
            "UPDATE accounts SET balance = balance - 40 WHERE account_id = 'c05'",
            "UPDATE allowances SET remaining = remaining + 4 WHERE account_id = 'c09' AND pocket = 'daily_messages'",
        ] {
            behind_the_back(&db, sql).await;
        }
        let runs: Vec<_> = (0..4)
            .map(|_| {
                let s = s.clone();
                tokio::spawn(async move { s.reconcile(1000).await.unwrap() })
            })
            .collect();
        let mut adjusted = 0;
        for r in runs {
            adjusted += r.await.unwrap().adjusted;
        }
        let last = s.reconcile(1000).await.unwrap();
        assert_eq!(adjusted + last.adjusted, 3);
        assert_eq!(events_of(&db, &s, "ledger.adjusted").await.len(), 3);
        assert_clean(&s).await;
    }
);

backend_test!(
    a_bounded_run_goes_on_where_the_last_stopped,
    |b| async move {
        let Some((db, e)) = engine(b).await else {
            return;
        };
        let s = e.store().clone();
        for id in ["a1", "a2", "a3", "a4", "a5"] {
            put(&s, id, "free").await;
        }
        behind_the_back(
        &db,
        "UPDATE allowances SET remaining = remaining - 1 WHERE account_id = 'a5' AND pocket = 'daily_images'",
    )
    .await;
        let mut processed = 0;
        let mut adjusted = 0;
        for _ in 0..3 {
            let r = s.reconcile(2).await.unwrap();
            assert!(r.processed <= 2);
            processed += r.processed;
            adjusted += r.adjusted;
        }
        assert_eq!(processed, 6, "three runs of two cover all five accounts");
        assert_eq!(adjusted, 1, "the last account was reached");
        assert_clean(&s).await;
    }
);

// ---------------------------------------------------------------- reactivation

backend_test!(reactivation_refills_idle_accounts_only, |b| async move {
    let card = card_with(&[
        (
            "reactivate_after_seconds = 86400",
            "reactivate_after_seconds = 2",
        ),
        (
            "[allowances.daily_messages]\nrefill_every_seconds = 86400",
            "[allowances.daily_messages]\nrefill_every_seconds = 1",
        ),
        (
            "[allowances.daily_images]\nrefill_every_seconds = 86400",
            "[allowances.daily_images]\nrefill_every_seconds = 1",
        ),
        (
            "reactivate_every_seconds = 600",
            "reactivate_every_seconds = 1",
        ),
    ]);
    let Some((db, e)) = engine_with(b, card).await else {
        return;
    };
    let s = e.store().clone();
    // idle: used a message, then nothing
    put(&s, "idle", "free").await;
    run_job(&e, "idle", "text", "text", "i1").await;
    // blocked: same, then blocked by an operator
    put(&s, "blocked", "free").await;
    run_job(&e, "blocked", "text", "text", "b1").await;
    s.set_blocked(&acct("blocked"), true).await.unwrap();
    // banned: same, then banned by an operator
    put(&s, "banned", "free").await;
    run_job(&e, "banned", "text", "text", "x1").await;
    e.ban(&acct("banned"), "abuse").await.unwrap();
    // never active: below quota (a pocket its new plan adds starts empty), never active
    put(&s, "never", "premium").await;
    put(&s, "never", "free").await;
    // recent: used a message, and is active again shortly before the pass
    put(&s, "recent", "free").await;
    run_job(&e, "recent", "text", "text", "r1").await;
    assert!(
        s.reactivate(100).await.unwrap().processed == 0,
        "nobody idle yet"
    );

    tokio::time::sleep(Duration::from_millis(1300)).await;
    run_job(&e, "recent", "text", "text", "r2").await;
    // "recent": its window (1 s) has passed by now, yet it is not idle (2 s); "idle" is.
    tokio::time::sleep(Duration::from_millis(1100)).await;

    let before: BTreeMap<&str, usize> = {
        let mut m = BTreeMap::new();
        for id in ["idle", "blocked", "banned", "never", "recent"] {
            m.insert(id, ledger_of(&s, id).await.len());
        }
        m
    };
    let r = s.reactivate(100).await.unwrap();
    assert_eq!(r.processed, 1);
    let refilled = events_of(&db, &s, "allowance.refilled").await;
    assert_eq!(refilled.len(), 1);
    assert_eq!(refilled[0].account_id, "idle");
    assert_eq!(refilled[0].data["pockets"]["daily_messages"]["delta"], 1);
    assert_eq!(
        refilled[0].data["pockets"]["daily_messages"]["remaining"],
        10
    );
    let idle_ledger = ledger_of(&s, "idle").await;
    let last = idle_ledger.last().unwrap();
    assert_eq!(
        (
            last.kind.as_str(),
            last.pocket.as_str(),
            last.delta,
            last.amount_after
        ),
        ("refill", "daily_messages", 1, 10)
    );
    for id in ["blocked", "banned", "never", "recent"] {
        assert_eq!(ledger_of(&s, id).await.len(), before[id], "{id} left alone");
    }
    let idle = s.get_account(&acct("idle")).await.unwrap();
    assert!(
        idle.last_active_at < Some(idle.allowances["daily_messages"].cycle_started_at),
        "a refill is not the user's activity"
    );
    // Idempotent: the refilled account is at quota with a fresh window, so a second run
    // leaves it alone. (Others may qualify by now on a slow machine: "recent" turns idle
    // 2 s after its last job; so only "idle" is checked here.)
    let idle_entries = idle_ledger.len();
    s.reactivate(100).await.unwrap();
    assert_eq!(ledger_of(&s, "idle").await.len(), idle_entries);
    let refilled_idle = events_of(&db, &s, "allowance.refilled")
        .await
        .into_iter()
        .filter(|ev| ev.account_id == "idle")
        .count();
    assert_eq!(refilled_idle, 1);
    assert_clean(&s).await;
});

// ---------------------------------------------------------------- webhooks

const SECRET: &str = "whsec-test-0123456789";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Ok,
    /// 500 for the first N requests.
    FailFirst(usize),
    /// 503 for every request.
    Down,
    /// Never answers within the dispatcher's timeout.
    Hang,
}

/// A webhook receiver on 127.0.0.1: records every request, answers as its mode says.
struct Receiver {
    mode: Mutex<Mode>,
    requests: AtomicUsize,
    /// (event_id, answered 2xx) of every request, in arrival order.
    attempts: Mutex<Vec<(String, bool)>>,
    /// Bodies answered 2xx, with their signature header.
    received: Mutex<Vec<(String, String)>>,
    url: Mutex<String>,
}

impl Receiver {
    async fn start(mode: Mode) -> Arc<Receiver> {
        use axum::extract::State;
        use axum::http::{HeaderMap, StatusCode};
        async fn hook(
            State(r): State<Arc<Receiver>>,
            headers: HeaderMap,
            body: String,
        ) -> StatusCode {
            let n = r.requests.fetch_add(1, Ordering::SeqCst) + 1;
            let mode = *r.mode.lock().unwrap();
            let id = serde_json::from_str::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v["event_id"].as_str().map(str::to_owned))
                .unwrap_or_default();
            let ok = match mode {
                Mode::Ok => true,
                Mode::FailFirst(k) => n > k,
                Mode::Down => false,
                Mode::Hang => {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    false
                }
            };
            r.attempts.lock().unwrap().push((id, ok));
            if !ok {
                return StatusCode::SERVICE_UNAVAILABLE;
            }
            let sig = headers
                .get(SIGNATURE_HEADER)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            r.received.lock().unwrap().push((body, sig));
            StatusCode::NO_CONTENT
        }
        let r = Arc::new(Receiver {
            mode: Mutex::new(mode),
            requests: AtomicUsize::new(0),
            attempts: Mutex::default(),
            received: Mutex::default(),
            url: Mutex::default(),
        });
        let app = axum::Router::new()
            .route("/hook", axum::routing::post(hook))
            .with_state(r.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        *r.url.lock().unwrap() = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        r
    }

    fn url(&self) -> String {
        self.url.lock().unwrap().clone()
    }

    fn set_mode(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }

    /// Event ids received (2xx), first receipt only, in arrival order.
    fn received_ids(&self) -> Vec<String> {
        let mut seen = BTreeSet::new();
        self.received
            .lock()
            .unwrap()
            .iter()
            .map(|(body, _)| serde_json::from_str::<serde_json::Value>(body).unwrap())
            .filter_map(|v| v["event_id"].as_str().map(str::to_owned))
            .filter(|id| seen.insert(id.clone()))
            .collect()
    }

    fn bodies(&self) -> Vec<serde_json::Value> {
        self.received
            .lock()
            .unwrap()
            .iter()
            .map(|(body, _)| serde_json::from_str(body).unwrap())
            .collect()
    }
}

/// The default card with one `[[webhooks]]` endpoint that reads the feed from its
/// beginning (the tests write events before the first dispatch), and optional other
/// replacements.
fn card_with_hook(url: &str, events: Option<&str>, more: &[(&str, &str)]) -> holdfast::RateCard {
    let filter = events.map_or(String::new(), |e| format!("events = {e}\n"));
    let hook = format!(
        "webhooks_every_seconds = 1\n\n[[webhooks]]\nurl = \"{url}\"\nsecret = \"{SECRET}\"\nfrom = \"beginning\"\n{filter}"
    );
    let mut pairs: Vec<(&str, &str)> = vec![("webhooks_every_seconds = 1", &hook)];
    pairs.extend_from_slice(more);
    card_with(&pairs)
}

fn fast(max_attempts: u32, timeout_ms: u64) -> WebhookOptions {
    WebhookOptions {
        timeout: Duration::from_millis(timeout_ms),
        backoff_base: Duration::from_millis(20),
        backoff_cap: Duration::from_millis(100),
        max_attempts,
        concurrency: 8,
    }
}

/// Runs the dispatcher until `done` holds (bounded: panics after ~600 runs).
async fn pump(d: &Dispatcher, what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..600 {
        d.run_once(1000).await.unwrap();
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the dispatcher never got there: {what}");
}

/// Checks the signature header against the body with HMAC-SHA256, as a receiver would.
fn verify(body: &str, header: &str) {
    let (t, v1) = header
        .split_once(',')
        .and_then(|(t, v)| Some((t.strip_prefix("t=")?, v.strip_prefix("v1=")?)))
        .unwrap_or_else(|| panic!("bad signature header {header:?}"));
    let t: i64 = t.parse().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!((now - t).abs() < 300, "t within 5 minutes");
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(format!("{t}.{body}").as_bytes());
    mac.verify_slice(&hex::decode(v1).unwrap())
        .expect("a valid signature");
    let mut wrong = Hmac::<sha2::Sha256>::new_from_slice(b"another secret").unwrap();
    wrong.update(format!("{t}.{body}").as_bytes());
    assert!(wrong.verify_slice(&hex::decode(v1).unwrap()).is_err());
}

/// Each account's events in the outbox's order, as event id strings.
async fn outbox_by_account(db: &TestDb, s: &Store) -> BTreeMap<String, Vec<String>> {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for ev in all_events(db, s).await {
        m.entry(ev.account_id.clone())
            .or_default()
            .push(ev.event_id.to_string());
    }
    m
}

/// Received ids grouped by account, in order of first receipt.
fn received_by_account(r: &Receiver) -> BTreeMap<String, Vec<String>> {
    let mut seen = BTreeSet::new();
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for v in r.bodies() {
        let id = v["event_id"].as_str().unwrap().to_owned();
        if seen.insert(id.clone()) {
            m.entry(v["account_id"].as_str().unwrap().to_owned())
                .or_default()
                .push(id);
        }
    }
    m
}

/// Events on two accounts: succeeded, suspended, unsuspended, failed, canceled.
async fn make_events(e: &Engine) {
    let s = e.store();
    put(s, "alice", "free").await;
    put(s, "bob", "free").await;
    top_up(s, "alice", "1.00", "a-t1").await;
    run_job(e, "alice", "text", "text", "a-j1").await;
    s.debit(
        &acct("alice"),
        &Usage::Amount(usd("2.00")),
        &key("a-d1"),
        None,
    )
    .await
    .unwrap();
    s.credit(&acct("alice"), usd("5.00"), CreditKind::TopUp, &key("a-t2"))
        .await
        .unwrap();
    let queued = e.submit(&submit_req("bob", "text", "b-j2")).await.unwrap();
    let id = job_id(&queued.job.job_id);
    s.cancel(&id).await.unwrap();
    run_fail(e, "alice").await;
}

async fn run_fail(e: &Engine, account: &str) {
    let job = e
        .submit(&submit_req(account, "image", "fail-1"))
        .await
        .unwrap()
        .job;
    let lease = e
        .store()
        .lease("image", &worker(), 60)
        .await
        .unwrap()
        .unwrap();
    let id = job_id(&job.job_id);
    e.store()
        .fail(&id, &lease.lease_token, Some("provider down"))
        .await
        .unwrap();
}

backend_test!(
    every_event_is_delivered_signed_and_in_order,
    |b| async move {
        let rx = Receiver::start(Mode::Ok).await;
        let Some((db, e)) = engine_with(b, card_with_hook(&rx.url(), None, &[])).await else {
            return;
        };
        make_events(&e).await;
        let s = e.store().clone();
        let outbox = outbox_by_account(&db, &s).await;
        let total: usize = outbox.values().map(Vec::len).sum();
        assert!(total >= 5, "{outbox:?}");
        let d = Dispatcher::new(s.clone(), fast(5, 2000)).unwrap();
        pump(&d, "all delivered", || rx.received_ids().len() == total).await;
        assert_eq!(
            received_by_account(&rx),
            outbox,
            "every event, in order per account"
        );
        let events: BTreeMap<String, holdfast::Event> = all_events(&db, &s)
            .await
            .into_iter()
            .map(|ev| (ev.event_id.to_string(), ev))
            .collect();
        for (body, sig) in rx.received.lock().unwrap().iter() {
            verify(body, sig);
            let v: serde_json::Value = serde_json::from_str(body).unwrap();
            let ev = &events[v["event_id"].as_str().unwrap()];
            assert_eq!(v["type"], ev.event_type.as_str());
            assert_eq!(v["account_id"], ev.account_id.as_str());
            assert_eq!(v["job_id"].as_str(), ev.job_id.as_deref());
            assert_eq!(v["data"], ev.data);
            let created = v["created_at"].as_str().unwrap();
            assert!(
                time::OffsetDateTime::parse(
                    created,
                    &time::format_description::well_known::Rfc3339
                )
                .is_ok(),
                "RFC 3339: {created}"
            );
        }
        // Nothing new: a run attempts nothing.
        let requests = rx.requests.load(Ordering::SeqCst);
        assert_eq!(d.run_once(1000).await.unwrap().processed, 0);
        assert_eq!(rx.requests.load(Ordering::SeqCst), requests);
        assert!(
            s.dead_deliveries(None, None, 100)
                .await
                .unwrap()
                .items
                .is_empty()
        );
        assert_clean(&s).await;
    }
);

backend_test!(two_dispatchers_share_the_work_in_order, |b| async move {
    let rx = Receiver::start(Mode::Ok).await;
    let card = card_with_hook(&rx.url(), None, &[]);
    let Some((db, e)) = engine_with(b, card.clone()).await else {
        return;
    };
    let s = e.store().clone();
    make_events(&e).await;
    for i in 0..4 {
        let id = format!("extra-{i}");
        put(&s, &id, "free").await;
        run_job(&e, &id, "text", "text", &format!("x{i}-1")).await;
        run_job(&e, &id, "image", "image", &format!("x{i}-2")).await;
        run_job(&e, &id, "text", "text", &format!("x{i}-3")).await;
    }
    let outbox = outbox_by_account(&db, &s).await;
    let total: usize = outbox.values().map(Vec::len).sum();
    // Two dispatchers on two pools, as two `serve` processes would be.
    let other = db.store(card).await;
    let d1 = Dispatcher::new(s.clone(), fast(5, 2000)).unwrap();
    let d2 = Dispatcher::new(other, fast(5, 2000)).unwrap();
    let rx1 = rx.clone();
    let first = tokio::spawn(async move {
        pump(&d1, "all delivered (1)", || {
            rx1.received_ids().len() == total
        })
        .await
    });
    let rx2 = rx.clone();
    let second = tokio::spawn(async move {
        pump(&d2, "all delivered (2)", || {
            rx2.received_ids().len() == total
        })
        .await
    });
    first.await.unwrap();
    second.await.unwrap();
    assert_eq!(
        received_by_account(&rx),
        outbox,
        "every event, in order per account"
    );
    assert_eq!(
        rx.bodies().len(),
        total,
        "a leased delivery is never handed to a second dispatcher"
    );
});

backend_test!(
    a_flaky_receiver_gets_everything_after_retries,
    |b| async move {
        let rx = Receiver::start(Mode::FailFirst(3)).await;
        let Some((db, e)) = engine_with(b, card_with_hook(&rx.url(), None, &[])).await else {
            return;
        };
        make_events(&e).await;
        let s = e.store().clone();
        let outbox = outbox_by_account(&db, &s).await;
        let total: usize = outbox.values().map(Vec::len).sum();
        let d = Dispatcher::new(s.clone(), fast(6, 2000)).unwrap();
        pump(&d, "all delivered", || rx.received_ids().len() == total).await;
        assert_eq!(received_by_account(&rx), outbox);
        assert_eq!(
            rx.requests.load(Ordering::SeqCst),
            total + 3,
            "3 failures retried"
        );
        for (body, sig) in rx.received.lock().unwrap().iter() {
            verify(body, sig);
        }
        assert!(
            s.dead_deliveries(None, None, 100)
                .await
                .unwrap()
                .items
                .is_empty()
        );
    }
);

backend_test!(
    a_receiver_down_for_a_while_gets_everything_in_order,
    |b| async move {
        let rx = Receiver::start(Mode::Down).await;
        let Some((db, e)) = engine_with(b, card_with_hook(&rx.url(), None, &[])).await else {
            return;
        };
        make_events(&e).await;
        let s = e.store().clone();
        let outbox = outbox_by_account(&db, &s).await;
        let total: usize = outbox.values().map(Vec::len).sum();
        let d = Dispatcher::new(s.clone(), fast(50, 2000)).unwrap();
        pump(&d, "some failed attempts", || {
            rx.requests.load(Ordering::SeqCst) >= 6
        })
        .await;
        // While it is down only the first event of each account is tried: the failing event
        // holds back that account's later ones.
        let heads: BTreeSet<String> = outbox.values().map(|v| v[0].clone()).collect();
        let tried: BTreeSet<String> = rx
            .attempts
            .lock()
            .unwrap()
            .iter()
            .map(|(id, _)| id.clone())
            .collect();
        assert!(tried.is_subset(&heads), "tried {tried:?}, heads {heads:?}");
        assert!(rx.received_ids().is_empty());
        rx.set_mode(Mode::Ok);
        pump(&d, "all delivered", || rx.received_ids().len() == total).await;
        assert_eq!(received_by_account(&rx), outbox);
        assert!(
            s.dead_deliveries(None, None, 100)
                .await
                .unwrap()
                .items
                .is_empty()
        );
    }
);

backend_test!(
    a_receiver_that_never_answers_goes_dead_then_redelivery_works,
    |b| async move {
        let rx = Receiver::start(Mode::Hang).await;
        let Some((db, e)) = engine_with(b, card_with_hook(&rx.url(), None, &[])).await else {
            return;
        };
        let s = e.store().clone();
        put(&s, "carol", "free").await;
        run_job(&e, "carol", "text", "text", "c-j1").await;
        let queued = e
            .submit(&submit_req("carol", "text", "c-j2"))
            .await
            .unwrap();
        s.cancel(&job_id(&queued.job.job_id)).await.unwrap();
        let outbox = outbox_by_account(&db, &s).await;
        assert_eq!(outbox["carol"].len(), 2);
        let d = Dispatcher::new(s.clone(), fast(3, 150)).unwrap();
        pump(&d, "both dead", || requests_at_least(&rx, 6)).await;
        let dead = s.dead_deliveries(None, None, 100).await.unwrap().items;
        assert_eq!(dead.len(), 2, "{dead:?}");
        for (dd, id) in dead.iter().zip(&outbox["carol"]) {
            assert_eq!(dd.event_id.to_string(), *id, "dead in order");
            assert_eq!(dd.attempts, 3);
            assert_eq!(dd.endpoint, rx.url());
            assert!(dd.last_error.is_some());
        }
        assert_eq!(
            rx.requests.load(Ordering::SeqCst),
            6,
            "max attempts each, no more"
        );
        // Dead deliveries are not tried again by themselves.
        assert_eq!(d.run_once(1000).await.unwrap().processed, 0);

        rx.set_mode(Mode::Ok);
        assert!(
            !s.redeliver(999_999, &rx.url()).await.unwrap(),
            "no such delivery"
        );
        assert!(s.redeliver(dead[0].event_id, &rx.url()).await.unwrap());
        pump(&d, "first redelivered", || rx.received_ids().len() == 1).await;
        assert_eq!(rx.received_ids(), vec![outbox["carol"][0].clone()]);
        let still_dead = s.dead_deliveries(Some(&rx.url()), None, 100).await.unwrap();
        assert_eq!(still_dead.items.len(), 1);
        assert!(s.redeliver(dead[1].event_id, &rx.url()).await.unwrap());
        pump(&d, "second redelivered", || rx.received_ids().len() == 2).await;
        assert_eq!(rx.received_ids(), outbox["carol"]);
        assert!(
            s.dead_deliveries(None, None, 100)
                .await
                .unwrap()
                .items
                .is_empty()
        );
        for (body, sig) in rx.received.lock().unwrap().iter() {
            verify(body, sig);
        }
    }
);

/// True once the receiver has seen `n` requests.
fn requests_at_least(rx: &Receiver, n: usize) -> bool {
    rx.requests.load(Ordering::SeqCst) >= n
}

backend_test!(
    a_job_finished_before_its_notice_is_never_sent_as_waiting,
    |b| async move {
        let rx = Receiver::start(Mode::Ok).await;
        let card = card_with_hook(
            &rx.url(),
            Some(r#"["job.waiting", "job.succeeded"]"#),
            &[("notice_delay_seconds = 5", "notice_delay_seconds = 1")],
        );
        let Some((db, e)) = engine_with(b, card).await else {
            return;
        };
        let s = e.store().clone();
        put(&s, "quick", "free").await;
        put(&s, "slow", "free").await;
        let quick = run_job(&e, "quick", "text", "text", "q1").await;
        let slow = e
            .submit(&submit_req("slow", "text", "s1"))
            .await
            .unwrap()
            .job;
        tokio::time::sleep(Duration::from_millis(1200)).await;
        assert_eq!(s.notices(100).await.unwrap().processed, 1);
        let d = Dispatcher::new(s.clone(), fast(5, 2000)).unwrap();
        pump(&d, "waiting delivered", || {
            rx.bodies()
                .iter()
                .any(|v| v["type"] == "job.waiting" && v["job_id"] == slow.job_id.as_str())
        })
        .await;
        pump(&d, "succeeded delivered", || {
            rx.bodies()
                .iter()
                .any(|v| v["type"] == "job.succeeded" && v["job_id"] == quick.as_str())
        })
        .await;
        let bodies = rx.bodies();
        assert!(
            !bodies
                .iter()
                .any(|v| v["type"] == "job.waiting" && v["job_id"] == quick.as_str()),
            "the finished job is never announced as waiting"
        );
        assert!(
            bodies
                .iter()
                .all(|v| v["type"] == "job.waiting" || v["type"] == "job.succeeded"),
            "the endpoint's events filter holds"
        );
        let waiting = events_of(&db, &s, "job.waiting").await;
        assert_eq!(waiting.len(), 1);
        assert_eq!(waiting[0].job_id.as_deref(), Some(slow.job_id.as_str()));
        assert_clean(&s).await;
    }
);

// ---------------------------------------------------------------- schedules

backend_test!(serve_schedules_run_reconciliation, |b| async move {
    let card = card_with(&[(
        "reconcile_every_seconds = 300",
        "reconcile_every_seconds = 1",
    )]);
    let Some((db, e)) = engine_with(b, card).await else {
        return;
    };
    let s = e.store().clone();
    put(&s, "u1", "free").await;
    behind_the_back(
        &db,
        "UPDATE accounts SET balance = balance + 9 WHERE account_id = 'u1'",
    )
    .await;
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    let passes = holdfast::schedules::spawn(&e, shutdown);
    let mut found = false;
    for _ in 0..100 {
        if !events_of(&db, &s, "ledger.adjusted").await.is_empty() {
            found = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.send(true).unwrap();
    for p in passes {
        p.await.unwrap();
    }
    assert!(found, "the scheduled reconciliation explained the balance");
    assert_eq!(events_of(&db, &s, "ledger.adjusted").await.len(), 1);
    assert_clean(&s).await;
});

/// A transaction that holds an xid in another database of the cluster stays open; the
/// events of finished work still reach the webhook within 2 s (docs/DESIGN.md "The event
/// feed"). Before the feed's positions, they waited for it to end.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_long_transaction_elsewhere_does_not_hold_webhooks_back() {
    let rx = Receiver::start(Mode::Ok).await;
    let card = card_with_hook(&rx.url(), Some(r#"["job.failed"]"#), &[]);
    let Some((_db, e)) = engine_with(Backend::Postgres, card).await else {
        return;
    };
    let mut elsewhere = open_xid_holder(&admin_url()).await;
    let d = Dispatcher::new(e.store().clone(), fast(5, 2000)).unwrap();
    make_events(&e).await;
    let finished = std::time::Instant::now();
    while rx.received_ids().is_empty() {
        assert!(
            finished.elapsed() < Duration::from_secs(2),
            "job.failed not delivered 2 s after its commit"
        );
        d.run_once(1000).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let body = &rx.bodies()[0];
    assert_eq!(body["type"], "job.failed");
    sqlx::query("ROLLBACK")
        .execute(&mut elsewhere)
        .await
        .unwrap();
}

backend_test!(
    a_new_endpoint_starts_at_the_end_of_the_feed,
    |b| async move {
        let rx = Receiver::start(Mode::Ok).await;
        let card = card_with_hook(&rx.url(), None, &[("from = \"beginning\"\n", "")]);
        assert_eq!(
            card.webhooks[0].from,
            holdfast::core::ratecard::FeedStart::End
        );
        let Some((db, e)) = engine_with(b, card).await else {
            return;
        };
        make_events(&e).await;
        let history = all_events(&db, e.store()).await.len();
        assert!(history >= 5);
        // The endpoint is seen for the first time now (as `serve` opens it at start).
        holdfast::schedules::open_webhook_cursors(&e).await.unwrap();
        let d = Dispatcher::new(e.store().clone(), fast(5, 2000)).unwrap();
        assert_eq!(d.run_once(1000).await.unwrap().processed, 0, "no history");
        put(e.store(), "carol", "free").await;
        e.ban(&acct("carol"), "fraud").await.unwrap();
        pump(&d, "the new events", || rx.received_ids().len() >= 2).await;
        let types: Vec<String> = rx
            .bodies()
            .iter()
            .map(|b| b["type"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            types,
            ["account.banned", "operator.banned"],
            "only what came after"
        );
        // A restart keeps the endpoint's place: nothing again, nothing skipped.
        holdfast::schedules::open_webhook_cursors(&e).await.unwrap();
        assert_eq!(d.run_once(1000).await.unwrap().processed, 0);
    }
);

backend_test!(
    a_dispatcher_that_dies_mid_attempt_costs_no_attempt,
    |b| async move {
        let rx = Receiver::start(Mode::Ok).await;
        let Some((db, e)) = engine_with(b, card_with_hook(&rx.url(), None, &[])).await else {
            return;
        };
        let s = e.store().clone();
        put(&s, "dora", "free").await;
        e.ban(&acct("dora"), "test").await.unwrap();
        let from = holdfast::core::ratecard::FeedStart::Beginning;
        s.enqueue_deliveries(&rx.url(), None, from, 100)
            .await
            .unwrap();
        // A dispatcher claims the head delivery, sends it, and dies before recording.
        let claimed = s.claim_deliveries(&rx.url(), 1, 50_000).await.unwrap();
        assert_eq!(claimed.len(), 1);
        assert_eq!(claimed[0].attempts, 1, "this attempt");
        let recorded = "SELECT attempts FROM webhook_deliveries ORDER BY delivery_id LIMIT 1";
        assert_eq!(
            db.query_i64(recorded).await,
            0,
            "not counted before its outcome"
        );
        tokio::time::sleep(Duration::from_millis(120)).await;
        // Its lease ran out: the same delivery comes back, still on its first attempt.
        let again = s.claim_deliveries(&rx.url(), 1, 60_000_000).await.unwrap();
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].delivery_id, claimed[0].delivery_id);
        assert_eq!(again[0].attempts, 1, "the lost attempt cost nothing");
        // The dead claimer's late record changes nothing; the live one's counts once.
        assert!(!s.delivery_succeeded(&claimed[0]).await.unwrap());
        let last = s.delivery_failed(&again[0], "503", 1_000, 1).await.unwrap();
        assert_eq!(
            last,
            holdfast_store::passes::webhooks::AfterFailure::Dead,
            "1 of 1 attempts"
        );
        assert_eq!(db.query_i64(recorded).await, 1);
        let dead = s.dead_deliveries(None, None, 10).await.unwrap().items;
        assert_eq!(dead[0].attempts, 1);
        assert_eq!(rx.requests.load(Ordering::SeqCst), 0, "no HTTP here");
        let backlog = &s.stats().await.unwrap().webhooks[0];
        assert_eq!(
            (backlog.pending, backlog.dead),
            (1, 1),
            "the second still to go"
        );
        assert!(
            backlog.oldest_pending_micros >= 100_000,
            "waited since it was queued"
        );
    }
);

backend_test!(
    a_failed_delivery_records_its_error_without_the_urls_token,
    |b| async move {
        // Port 9 (discard) refuses: every attempt fails at once.
        let url = "http://127.0.0.1:9/hook?token=s3cr3t";
        let Some((_db, e)) = engine_with(b, card_with_hook(url, None, &[])).await else {
            return;
        };
        let s = e.store().clone();
        put(&s, "dora", "free").await;
        run_job(&e, "dora", "text", "text", "d-j1").await;
        let d = Dispatcher::new(s.clone(), fast(1, 500)).unwrap();
        let mut dead = Vec::new();
        for _ in 0..600 {
            d.run_once(1000).await.unwrap();
            dead = s.dead_deliveries(None, None, 100).await.unwrap().items;
            if !dead.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let error = dead[0].last_error.clone().expect("an error");
        assert!(error.starts_with("request failed"), "{error}");
        assert!(!error.contains("s3cr3t"), "{error}");
        assert_eq!(
            holdfast::redact::webhook_url(&dead[0].endpoint),
            "http://127.0.0.1:9/hook?token=***"
        );
    }
);
