//! Two `holdfast serve` processes on one PostgreSQL, every scheduled pass running in both
//! (sweeper, notices, reconciliation, reactivation, webhook dispatch), under mixed load
//! through both (20 s; `HOLDFAST_SOAK_SECONDS` for longer): afterwards the audit is clean,
//! no job was finished (or its hold released) twice, and every event reached the webhook
//! receiver exactly once.

mod http_support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use holdfast::testing::{Backend, TestDb, card_file, card_text_with};
use http_support::{Serving, listen_address};
use serde_json::{Value, json};

const ADMIN: &str = "hf_two_servers_admin_key_0123456789abcdef";
/// How long the mixed load runs: 20 s in the suite, longer for a release check with
/// `HOLDFAST_SOAK_SECONDS` (e.g. 600).
fn load_time() -> Duration {
    let seconds = std::env::var("HOLDFAST_SOAK_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    Duration::from_secs(seconds)
}

type Deliveries = Arc<Mutex<Vec<String>>>;

/// A webhook receiver on 127.0.0.1 that records each signed delivery's event id.
async fn receiver() -> (String, Deliveries) {
    let seen: Deliveries = Arc::default();
    let record = seen.clone();
    let app = Router::new().route(
        "/hook",
        post(move |headers: HeaderMap, body: String| {
            let record = record.clone();
            async move {
                if !headers.contains_key("holdfast-signature") {
                    return StatusCode::BAD_REQUEST;
                }
                let event: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                let id = event["event_id"].to_string();
                record.lock().unwrap().push(id);
                StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

/// The default card with every pass on a sub-second schedule, short leases and a webhook.
fn fast_card(hook: &str) -> tempfile::NamedTempFile {
    let mut text = card_text_with(&[
        ("notice_delay_seconds = 5", "notice_delay_seconds = 1"),
        ("lease_seconds = 60", "lease_seconds = 5"),
        ("stale_after_seconds = 1800", "stale_after_seconds = 20"),
        (
            "reactivate_after_seconds = 86400",
            "reactivate_after_seconds = 2",
        ),
        (
            "[allowances.daily_images]\nrefill_every_seconds = 86400",
            "[allowances.daily_images]\nrefill_every_seconds = 3",
        ),
        ("sweep_every_seconds = 5", "sweep_every_seconds = 0.3"),
        ("notices_every_seconds = 1", "notices_every_seconds = 0.3"),
        (
            "reconcile_every_seconds = 300",
            "reconcile_every_seconds = 0.5",
        ),
        (
            "reactivate_every_seconds = 600",
            "reactivate_every_seconds = 0.5",
        ),
        ("webhooks_every_seconds = 1", "webhooks_every_seconds = 0.2"),
        (
            "max_concurrent_jobs = 1\npriority = false",
            "max_concurrent_jobs = 3\npriority = false",
        ),
    ]);
    text.push_str(&format!(
        "\n[[webhooks]]\nurl = \"{hook}\"\nsecret = \"two-servers\"\n"
    ));
    card_file(&text)
}

struct Client {
    http: reqwest::Client,
    bases: [String; 2],
}

impl Client {
    async fn call(&self, i: usize, path: &str, body: Value) -> (u16, Value) {
        let res = self
            .http
            .post(format!("{}{path}", self.bases[i % 2]))
            .bearer_auth(ADMIN)
            .json(&body)
            .send()
            .await
            .expect("request");
        let status = res.status().as_u16();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    async fn get(&self, i: usize, path: &str) -> Value {
        let res = self
            .http
            .get(format!("{}{path}", self.bases[i % 2]))
            .bearer_auth(ADMIN)
            .send()
            .await
            .expect("request");
        assert_eq!(res.status(), 200, "GET {path}");
        res.json().await.unwrap()
    }
}

/// One client's loop until `until`: submit, lease, then complete, fail, abandon (the
/// sweeper expires it) or cancel, with a metered debit now and then.
async fn load(c: Arc<Client>, n: usize, until: Instant) -> usize {
    let account = format!("acct-{}", n % 6);
    let mut done = 0;
    let mut i = n;
    while Instant::now() < until {
        i += 1;
        let kind = ["image", "video", "text", "ci"][i % 4];
        let key = format!("{n}-{i}");
        let (status, job) = c
            .call(
                i,
                "/v1/jobs",
                json!({"account_id": account, "kind": kind, "idempotency_key": key}),
            )
            .await;
        assert!(
            [201, 402, 403, 409].contains(&status),
            "submit {status}: {job}"
        );
        if i.is_multiple_of(7) {
            let usage = json!({"meter": "linux-small", "seconds": 5});
            let (s, b) = c
                .call(
                    i + 1,
                    &format!("/v1/accounts/{account}/debits"),
                    json!({"usage": usage, "idempotency_key": format!("d{key}")}),
                )
                .await;
            assert!([201, 402].contains(&s), "debit {s}: {b}");
        }
        if status == 201 && i.is_multiple_of(11) {
            let (s, b) = c
                .call(
                    i + 1,
                    &format!("/v1/jobs/{}/cancel", job["job_id"].as_str().unwrap()),
                    json!({}),
                )
                .await;
            assert!([200, 202, 409].contains(&s), "cancel {s}: {b}");
        }
        let lane = [
            "image",
            "video",
            "text",
            "runners",
            "image_priority",
            "video_priority",
        ][i % 6];
        let (s, lease) = c
            .call(
                i + 1,
                &format!("/v1/lanes/{lane}/lease"),
                json!({"worker_id": format!("w{n}"), "lease_seconds": 1}),
            )
            .await;
        assert!([200, 204].contains(&s), "lease {s}: {lease}");
        if s == 200 {
            let id = lease["job"]["job_id"].as_str().unwrap().to_owned();
            let token = json!({"lease_token": lease["lease_token"], "reason": "provider error"});
            let finish = match i % 4 {
                0 => Some("fail"),
                1 => None, // the worker dies; the sweeper cleans up
                _ => Some("complete"),
            };
            if let Some(op) = finish {
                let (s, b) = c
                    .call(
                        i,
                        &format!("/v1/jobs/{id}/{op}"),
                        if op == "fail" {
                            token
                        } else {
                            json!({"lease_token": lease["lease_token"]})
                        },
                    )
                    .await;
                assert!([200, 409].contains(&s), "{op} {s}: {b}");
            }
        }
        if i.is_multiple_of(13) {
            c.call(
                i,
                &format!("/v1/accounts/{account}/top-ups"),
                json!({"amount": "0.50", "idempotency_key": format!("t{key}")}),
            )
            .await;
        }
        done += 1;
    }
    done
}

async fn all_events(c: &Client) -> Vec<Value> {
    let mut events = Vec::new();
    let mut after = String::new();
    loop {
        let page = c.get(0, &format!("/v1/events?limit=1000{after}")).await;
        let items = page["events"].as_array().unwrap().clone();
        if items.is_empty() {
            return events;
        }
        after = format!("&after={}", page["next"].as_str().unwrap());
        events.extend(items);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_run_every_pass_under_load_and_the_books_balance() {
    // Without a schema: the two servers migrate it as they start, together.
    let Some(db) = TestDb::empty(Backend::Postgres).await else {
        return;
    };
    let (hook, deliveries) = receiver().await;
    let card = fast_card(&hook);
    let card_path = card.path().to_str().unwrap();
    let servers: Vec<Serving> = (0..2)
        .map(|_| Serving::spawn(&db.url, &["--rate-card", card_path], Some(ADMIN)))
        .collect();
    let bases = [0, 1].map(|i| {
        format!(
            "http://{}",
            listen_address(&servers[i].until("listening on"))
        )
    });
    let client = Arc::new(Client {
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap(),
        bases,
    });
    for a in 0usize..6 {
        let plan = if a.is_multiple_of(2) {
            "free"
        } else {
            "premium"
        };
        let put = client
            .http
            .put(format!("{}/v1/accounts/acct-{a}", client.bases[a % 2]))
            .bearer_auth(ADMIN)
            .json(&json!({"plan": plan}))
            .send()
            .await
            .unwrap();
        assert_eq!(put.status(), 201);
        let (s, _) = client
            .call(
                a,
                &format!("/v1/accounts/acct-{a}/top-ups"),
                json!({"amount": "3.00", "idempotency_key": "seed"}),
            )
            .await;
        assert_eq!(s, 201);
    }
    let until = Instant::now() + load_time();
    let tasks: Vec<_> = (0..12)
        .map(|n| tokio::spawn(load(client.clone(), n, until)))
        .collect();
    let mut rounds = 0;
    for t in tasks {
        rounds += t.await.unwrap();
    }
    assert!(rounds > 100, "the load ran: {rounds} rounds");

    // Let the sweepers expire the abandoned leases and the dispatchers drain the outbox.
    let settle = Instant::now() + Duration::from_secs(60);
    let events = loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let events = all_events(&client).await;
        let delivered: BTreeSet<String> = deliveries.lock().unwrap().iter().cloned().collect();
        let all_delivered = events
            .iter()
            .all(|e| delivered.contains(&e["event_id"].to_string()));
        if (all_delivered && in_progress_left(&client).await == 0) || Instant::now() > settle {
            break events;
        }
    };

    eprintln!(
        "two servers: {rounds} load rounds, {} events listed, {} deliveries",
        events.len(),
        deliveries.lock().unwrap().len()
    );
    let audit = client.get(1, "/v1/admin/audit").await;
    assert_eq!(audit["ok"], true, "{audit:#}");

    // No job was finished twice: at most one terminal event per job.
    let mut terminal: BTreeMap<String, usize> = BTreeMap::new();
    for e in &events {
        let t = e["type"].as_str().unwrap();
        if ["job.succeeded", "job.failed", "job.canceled", "job.expired"].contains(&t) {
            *terminal
                .entry(e["job_id"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
    }
    assert!(
        terminal.values().all(|n| *n == 1),
        "a job finished twice: {terminal:?}"
    );
    assert!(
        events.iter().any(|e| e["type"] == "job.expired"),
        "the sweepers expired abandoned jobs"
    );

    // Every event delivered, none twice (the receiver never failed, so no retry was due).
    let got = deliveries.lock().unwrap().clone();
    let unique: BTreeSet<&String> = got.iter().collect();
    assert_eq!(unique.len(), got.len(), "an event was delivered twice");
    // The passes keep running (a reactivation or an expiry may land after the wait), so
    // the deliveries are checked against the events listed when the wait ended (each
    // delivered) and against the events listed now (each delivery is a listed event).
    let listed: BTreeSet<String> = events.iter().map(|e| e["event_id"].to_string()).collect();
    let missing: Vec<&String> = listed.iter().filter(|id| !unique.contains(id)).collect();
    assert!(
        missing.is_empty(),
        "every event delivered; missing {missing:?}"
    );
    let listed_now: BTreeSet<String> = all_events(&client)
        .await
        .iter()
        .map(|e| e["event_id"].to_string())
        .collect();
    let unknown: Vec<&&String> = unique
        .iter()
        .filter(|id| !listed_now.contains(**id))
        .collect();
    assert!(
        unknown.is_empty(),
        "deliveries of events never listed: {unknown:?}"
    );

    for s in servers {
        let (status, _) = s.terminate();
        assert!(status.success());
    }
}

async fn in_progress_left(c: &Client) -> usize {
    let mut open = 0;
    for a in 0..6 {
        let account = c.get(a, &format!("/v1/accounts/acct-{a}")).await;
        open += account["open_jobs"].as_u64().unwrap_or(0) as usize;
    }
    open
}
