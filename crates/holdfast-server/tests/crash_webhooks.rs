//! A webhook dispatcher killed (SIGKILL) between sending a delivery and recording its
//! outcome, on SQLite and PostgreSQL: after a restart the event is delivered again (at
//! least once, same webhook-id) and the attempt the crash interrupted is not counted, so a
//! crash neither costs a delivery one of its attempts nor adds one.

mod http_support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use holdfast::testing::{TestDb, card_file, card_text_with};
use http_support::{Serving, listen_address};
use tokio::sync::Notify;

const ADMIN: &str = "hf_crash_webhooks_admin_key_0123456789abcdef";

/// Receives deliveries: the first is never answered (the test kills the sender meanwhile),
/// later ones are answered 200. Records each delivery's `webhook-id`.
async fn receiver() -> (String, Arc<Mutex<Vec<String>>>, Arc<Notify>) {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let arrived = Arc::new(Notify::new());
    let (record, notify) = (seen.clone(), arrived.clone());
    let app = Router::new().route(
        "/hook",
        post(move |headers: HeaderMap| {
            let (record, notify) = (record.clone(), notify.clone());
            async move {
                let id = headers
                    .get("webhook-id")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_owned();
                let first = {
                    let mut seen = record.lock().unwrap();
                    seen.push(id);
                    seen.len() == 1
                };
                notify.notify_one();
                if first {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                }
                StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen, arrived)
}

fn started(db: &TestDb, card: &str) -> (Serving, String) {
    let serving = Serving::spawn(&db.url, &["--rate-card", card], Some(ADMIN));
    let base = format!("http://{}", listen_address(&serving.until("listening on")));
    (serving, base)
}

async fn delivery(db: &TestDb, column: &str) -> i64 {
    db.query_i64(&format!("SELECT {column} FROM webhook_deliveries"))
        .await
}

holdfast::backend_test!(
    a_dispatcher_killed_mid_delivery_delivers_again,
    |backend| async move {
        let Some(db) = TestDb::new(backend).await else {
            return;
        };
        let (hook, seen, arrived) = receiver().await;
        let mut text =
            card_text_with(&[("webhooks_every_seconds = 1", "webhooks_every_seconds = 0.2")]);
        text.push_str(&format!(
            "\n[[webhooks]]\nurl = \"{hook}\"\nsecret = \"crash\"\nevents = [\"account.banned\"]\n"
        ));
        let card = card_file(&text);
        let card = card.path().to_str().unwrap();
        let (serving, base) = started(&db, card);
        let http = reqwest::Client::new();
        http.put(format!("{base}/v1/accounts/c1"))
            .bearer_auth(ADMIN)
            .json(&serde_json::json!({"plan": "free"}))
            .send()
            .await
            .unwrap();
        let banned = http
            .post(format!("{base}/v1/accounts/c1/ban"))
            .bearer_auth(ADMIN)
            .json(&serde_json::json!({"reason": "crash test"}))
            .send()
            .await
            .unwrap();
        assert_eq!(banned.status(), 200);

        tokio::time::timeout(Duration::from_secs(30), arrived.notified())
            .await
            .expect("the first delivery arrives");
        serving.kill(); // sent, its outcome never recorded
        assert_eq!(delivery(&db, "count(*)").await, 1);
        let pending = "count(*) FILTER (WHERE status = 'pending')";
        assert_eq!(delivery(&db, pending).await, 1, "still pending");
        assert_eq!(
            delivery(&db, "attempts").await,
            0,
            "the interrupted attempt is not counted"
        );

        // A restarted dispatcher takes the delivery again once the dead one's lease ends.
        let killed = Instant::now();
        let (serving, _base) = started(&db, card);
        tokio::time::timeout(Duration::from_secs(60), arrived.notified())
            .await
            .expect("the event is delivered again");
        let mut delivered = false;
        for _ in 0..100 {
            if delivery(&db, pending).await == 0 {
                delivered = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(delivered, "the second attempt is recorded");
        let status = "count(*) FILTER (WHERE status = 'delivered')";
        assert_eq!(delivery(&db, status).await, 1);
        assert_eq!(
            delivery(&db, "attempts").await,
            1,
            "one attempt made and recorded"
        );
        let ids = seen.lock().unwrap().clone();
        assert_eq!(ids.len(), 2, "{ids:?}");
        assert!(
            !ids[0].is_empty() && ids[0] == ids[1],
            "the same delivery, at least once: {ids:?}"
        );
        eprintln!(
            "{backend:?}: delivered again {:.1?} after the kill",
            killed.elapsed()
        );
        let _ = serving.terminate();
        drop(db);
    }
);
