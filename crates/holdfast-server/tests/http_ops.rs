//! The operations surface on both backends: the OpenAPI document against the routes the
//! router serves, metrics, health, the first admin key, graceful shutdown, the
//! `holdfast serve` binary itself and `holdfast key create|list|revoke`.

mod http_support;

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use holdfast::backend_test;
use holdfast::testing::{TestDb, card_with, engine};
use holdfast_server::http::{ServerOptions, first_admin_key, served_routes, start};
use http_support::*;
use reqwest::Method;
use serde_json::{Value, json};

fn documented(doc: &Value) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if ["get", "put", "post", "delete", "patch", "head", "options"]
                .contains(&method.as_str())
            {
                out.insert((method.to_uppercase(), path.clone()));
            }
        }
    }
    out
}

fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("$ref", Value::String(r)) => out.push(r.clone()),
                    _ => refs(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

/// The routes of API.md, the contract the document must cover.
const CONTRACT: &[(&str, &str)] = &[
    ("PUT", "/v1/accounts/{account_id}"),
    ("GET", "/v1/accounts/{account_id}"),
    ("POST", "/v1/accounts/{account_id}/block"),
    ("POST", "/v1/accounts/{account_id}/unblock"),
    ("GET", "/v1/accounts"),
    ("POST", "/v1/accounts/{account_id}/ban"),
    ("POST", "/v1/accounts/{account_id}/unban"),
    ("POST", "/v1/accounts/{account_id}/activity"),
    ("POST", "/v1/accounts/{account_id}/top-ups"),
    ("POST", "/v1/accounts/{account_id}/debits"),
    ("POST", "/v1/debits"),
    ("POST", "/v1/accounts/{account_id}/refunds"),
    ("GET", "/v1/accounts/{account_id}/ledger"),
    ("GET", "/v1/accounts/{account_id}/statement"),
    ("GET", "/v1/accounts/{account_id}/balance"),
    ("GET", "/v1/accounts/{account_id}/blocks"),
    ("GET", "/v1/usage"),
    ("GET", "/v1/ledger"),
    ("POST", "/v1/accounts/{account_id}/grants"),
    ("POST", "/v1/jobs/{job_id}/refund"),
    ("POST", "/v1/jobs"),
    ("GET", "/v1/jobs/{job_id}"),
    ("POST", "/v1/jobs/{job_id}/cancel"),
    ("POST", "/v1/lanes/{lane}/lease"),
    ("POST", "/v1/jobs/{job_id}/heartbeat"),
    ("POST", "/v1/jobs/{job_id}/complete"),
    ("POST", "/v1/jobs/{job_id}/fail"),
    ("POST", "/v1/jobs/complete"),
    ("POST", "/v1/jobs/fail"),
    ("GET", "/v1/events"),
    ("POST", "/v1/admin/sweep"),
    ("POST", "/v1/admin/reconcile"),
    ("POST", "/v1/admin/reactivate"),
    ("POST", "/v1/admin/expire"),
    ("GET", "/v1/admin/audit"),
    ("GET", "/v1/admin/webhooks/dead"),
    ("POST", "/v1/admin/webhooks/redeliver"),
    ("POST", "/v1/integrations/stripe"),
    ("PUT", "/v1/integrations/stripe/customers/{customer_id}"),
    ("GET", "/v1/integrations/stripe/customers/{customer_id}"),
    ("DELETE", "/v1/integrations/stripe/customers/{customer_id}"),
    ("GET", "/healthz"),
    ("GET", "/metrics"),
    ("GET", "/openapi.json"),
];

backend_test!(
    the_openapi_document_lists_exactly_the_served_routes,
    |b| async move {
        let Some(api) = api(b).await else { return };
        let doc = api.get("", "/openapi.json").await.expect(200, "").clone();
        assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
        let served: BTreeSet<(String, String)> = served_routes()
            .into_iter()
            .map(|(m, p)| (m.as_str().to_owned(), p.to_owned()))
            .collect();
        let contract: BTreeSet<(String, String)> = CONTRACT
            .iter()
            .map(|(m, p)| (m.to_string(), p.to_string()))
            .collect();
        assert_eq!(documented(&doc), served, "document vs router");
        assert_eq!(served, contract, "router vs API.md");

        let mut found = vec![];
        refs(&doc, &mut found);
        assert!(!found.is_empty());
        for r in found {
            let name = r
                .strip_prefix("#/components/schemas/")
                .unwrap_or_else(|| panic!("{r}"));
            assert!(
                doc["components"]["schemas"][name].is_object(),
                "dangling {r}"
            );
        }
        for (method, path) in &served {
            let op = &doc["paths"][path][method.to_lowercase()];
            let responses = op["responses"].as_object().unwrap();
            assert!(
                responses.keys().any(|s| s.starts_with('2')),
                "{method} {path}: no 2xx"
            );
            let open =
                ["/healthz", "/openapi.json", "/v1/integrations/stripe"].contains(&path.as_str());
            assert_eq!(
                responses.contains_key("401"),
                !open,
                "{method} {path}: 401 documented iff keyed"
            );
        }

        // Each served route answers (not route_not_found / method_not_allowed), and every
        // other method on its path is method_not_allowed.
        for (method, path) in &served {
            let concrete = path
                .replace("{account_id}", "nobody")
                .replace("{job_id}", "nojob")
                .replace("{lane}", "image")
                .replace("{customer_id}", "cus_nobody");
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let body = (method != Method::GET).then(|| json!({}));
            let r = api.call(method.clone(), &api.admin, &concrete, body).await;
            assert!(
                r.status != 405 && r.code() != "route_not_found",
                "{method} {concrete}: {} {}",
                r.status,
                r.body
            );
            let methods: Vec<&String> = served
                .iter()
                .filter(|(_, p)| p == path)
                .map(|(m, _)| m)
                .collect();
            if !methods.iter().any(|m| *m == "DELETE") {
                let r = api.call(Method::DELETE, &api.admin, &concrete, None).await;
                r.expect(405, "method_not_allowed");
            }
        }
        api.stop().await;
    }
);

backend_test!(
    metrics_count_requests_and_read_gauges_from_the_database,
    |b| async move {
        let Some(api) = api(b).await else { return };
        api.account("m1", "free").await;
        api.submit("m1", "image", "j").await.expect(201, "");
        api.post(
            &api.service,
            "/v1/accounts/m1/debits",
            json!({"amount": "0.01", "idempotency_key": "d"}),
        )
        .await
        .expect(201, "");
        // Business figures: an admin or viewer key, not a service key, not none.
        api.get("", "/metrics").await.expect(401, "unauthorized");
        api.get(&api.service, "/metrics")
            .await
            .expect(403, "forbidden");
        let res = api
            .client
            .get(api.url("/metrics"))
            .bearer_auth(&api.admin)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        assert!(
            res.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/plain")
        );
        let text = res.text().await.unwrap();
        for needle in [
            r#"holdfast_http_requests_total{route="/v1/jobs",method="POST",status="201"}"#,
            "holdfast_http_request_duration_seconds_bucket{",
            "holdfast_debits_total",
            r#"holdfast_jobs_queued{lane="image"}"#,
            r#"holdfast_jobs_queued{lane="image_priority"}"#,
            "holdfast_open_holds",
            "holdfast_jobs_expired{",
            "holdfast_database_up",
        ] {
            assert!(text.contains(needle), "{needle} missing from:\n{text}");
        }
        // The gauges' numbers come from this query (other servers in this process share the
        // recorder, so the rendered value may be theirs).
        let stats = api.engine.store().stats().await.unwrap();
        assert_eq!(stats.count("image", "queued"), 1);
        assert_eq!(stats.open_holds, 1);
        api.stop().await;
    }
);

backend_test!(
    metrics_listen_serves_metrics_alone_and_without_a_key,
    |b| async move {
        let opts = holdfast_server::http::ServerOptions {
            metrics_listen: Some("127.0.0.1:0".to_owned()),
            ..test_options()
        };
        let Some(api) = api_served(b, opts).await else {
            return;
        };
        let addr = api
            .server
            .as_ref()
            .unwrap()
            .metrics_addr()
            .expect("a metrics address");
        let get = |path: &str| {
            let url = format!("http://{addr}{path}");
            let client = api.client.clone();
            async move { client.get(url).send().await.unwrap() }
        };
        let res = get("/metrics").await;
        assert_eq!(res.status(), 200);
        assert!(res.text().await.unwrap().contains("holdfast_database_up"));
        // Only /metrics: the API is not on this address.
        assert_eq!(get("/v1/accounts").await.status(), 404);
        assert_eq!(get("/healthz").await.status(), 404);
        // The main address still asks for a key.
        api.get("", "/metrics").await.expect(401, "unauthorized");
        api.stop().await;
    }
);

backend_test!(
    metrics_show_each_webhook_endpoints_backlog_by_its_place,
    |b| async move {
        // An endpoint that never answers (port 9, discard): its deliveries stay pending.
        let hook = "webhooks_every_seconds = 1\n\n[[webhooks]]\nurl = \"http://127.0.0.1:9/t0ken\"\nsecret = \"s\"\nfrom = \"beginning\"\n";
        let card = card_with(&[("webhooks_every_seconds = 1", hook)]);
        let Some(api) = api_with(b, card).await else {
            return;
        };
        api.account("w1", "free").await;
        api.post(
            &api.admin,
            "/v1/accounts/w1/ban",
            json!({"reason": "metrics"}),
        )
        .await
        .expect(200, "");
        let store = api.engine.store();
        store
            .enqueue_deliveries(
                "http://127.0.0.1:9/t0ken",
                None,
                holdfast::core::ratecard::FeedStart::Beginning,
                100,
            )
            .await
            .unwrap();
        let events = api.get(&api.admin, "/v1/events").await.body["events"].clone();
        let events = events.as_array().unwrap().len() as i64;
        assert!(events >= 2, "the ban's two, and the keys'");
        assert_eq!(store.stats().await.unwrap().webhooks[0].pending, events);
        let text = api
            .client
            .get(api.url("/metrics"))
            .bearer_auth(&api.admin)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        for needle in [
            r#"holdfast_webhook_backlog{endpoint="0"}"#,
            r#"holdfast_webhook_dead{endpoint="0"}"#,
            r#"holdfast_webhook_oldest_pending_seconds{endpoint="0"}"#,
        ] {
            assert!(text.contains(needle), "{needle} missing from:\n{text}");
        }
        assert!(!text.contains("t0ken"), "no URL in /metrics");
        api.stop().await;
    }
);

backend_test!(
    dead_deliveries_are_listed_and_redelivered_over_http,
    |b| async move {
        let url = "http://127.0.0.1:9/hook?token=t0ken";
        let hook = format!(
            "webhooks_every_seconds = 1\n\n[[webhooks]]\nurl = \"{url}\"\nsecret = \"s\"\nfrom = \"beginning\"\nevents = [\"account.banned\"]\n"
        );
        let card = card_with(&[("webhooks_every_seconds = 1", &hook)]);
        let Some(api) = api_with(b, card).await else {
            return;
        };
        api.account("d1", "free").await;
        api.post(&api.admin, "/v1/accounts/d1/ban", json!({"reason": "dead"}))
            .await
            .expect(200, "");
        let store = api.engine.store();
        let from = holdfast::core::ratecard::FeedStart::Beginning;
        store
            .enqueue_deliveries(url, Some(&["account.banned".to_owned()]), from, 100)
            .await
            .unwrap();
        let claimed = store.claim_deliveries(url, 10, 60_000_000).await.unwrap();
        assert_eq!(claimed.len(), 1, "the ban's event: {claimed:?}");
        store
            .delivery_failed(&claimed[0], "refused", 1_000, 1)
            .await
            .unwrap();

        let page = api.get(&api.admin, "/v1/admin/webhooks/dead").await;
        let dead = page.expect(200, "")["deliveries"]
            .as_array()
            .unwrap()
            .clone();
        assert_eq!(dead.len(), 1);
        assert_eq!(dead[0]["event_type"], "account.banned");
        assert_eq!(
            (dead[0]["endpoint"].as_str(), dead[0]["attempts"].as_i64()),
            (Some(url), Some(1))
        );
        assert_eq!(dead[0]["last_error"], "refused");
        let event_id = dead[0]["event_id"].clone();
        // A viewer sees the endpoint without its token.
        let viewer = holdfast_server::http::auth::new_key();
        api.engine.create_key("viewer", &viewer).await.unwrap();
        let seen = api.get(&viewer, "/v1/admin/webhooks/dead").await;
        assert_eq!(
            seen.expect(200, "")["deliveries"][0]["endpoint"],
            "http://127.0.0.1:9/hook?token=***"
        );
        api.get(&api.service, "/v1/admin/webhooks/dead")
            .await
            .expect(403, "forbidden");

        let again = json!({"event_id": event_id, "endpoint": url});
        let r = api
            .post(&api.admin, "/v1/admin/webhooks/redeliver", again.clone())
            .await;
        assert_eq!(r.expect(200, "")["redelivered"], true);
        let page = api.get(&api.admin, "/v1/admin/webhooks/dead").await;
        assert!(page.body["deliveries"].as_array().unwrap().is_empty());
        let pending = store.claim_deliveries(url, 10, 60_000_000).await.unwrap();
        assert_eq!(
            (pending.len(), pending[0].attempts),
            (1, 1),
            "fresh attempts"
        );
        // Pending again: nothing to redeliver; bad input changes nothing.
        api.post(&api.admin, "/v1/admin/webhooks/redeliver", again)
            .await
            .expect(404, "delivery_not_found");
        for bad in [
            json!({"event_id": "0", "endpoint": url}),
            json!({"event_id": 7, "endpoint": url}),
            json!({"event_id": "7"}),
        ] {
            api.post(&api.admin, "/v1/admin/webhooks/redeliver", bad)
                .await
                .expect(422, "invalid_request");
        }
        let long = format!("/v1/admin/webhooks/dead?endpoint={}", "h".repeat(2049));
        for bad in ["/v1/admin/webhooks/dead?limit=0", long.as_str()] {
            api.get(&api.admin, bad)
                .await
                .expect(422, "invalid_request");
        }
        api.stop().await;
    }
);

backend_test!(health_answers_without_a_key, |b| async move {
    let Some(api) = api(b).await else { return };
    let r = api.get("", "/healthz").await;
    assert_eq!(r.expect(200, "")["status"], "ok");
    api.stop().await;
});

backend_test!(the_first_admin_key_is_made_once_and_works, |b| async move {
    let Some((_db, engine)) = engine(b).await else {
        return;
    };
    assert_eq!(
        first_admin_key(&engine, true).await.unwrap(),
        None,
        "an env key counts"
    );
    let key = first_admin_key(&engine, false)
        .await
        .unwrap()
        .expect("a new key");
    assert_eq!(
        first_admin_key(&engine, false).await.unwrap(),
        None,
        "only once"
    );
    let role = engine
        .store()
        .role_of_key_hash(&holdfast::key_hash(&key))
        .await
        .unwrap();
    assert_eq!(role.as_deref(), Some("admin"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let opts = ServerOptions {
        run_passes: false,
        ..ServerOptions::default()
    };
    let server = start(engine, listener, opts).await.unwrap();
    let client = reqwest::Client::new();
    let url = format!("http://{}/v1/admin/audit", server.addr());
    let r = client.get(&url).bearer_auth(&key).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let r = client
        .get(&url)
        .bearer_auth(ADMIN_KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401, "no env key configured here");
    server.shutdown().await.unwrap();
});

backend_test!(
    shutdown_answers_a_waiting_lease_and_stops_accepting,
    |b| async move {
        let Some(api) = api(b).await else { return };
        let waiting = {
            let req = api
                .client
                .post(api.url("/v1/lanes/image/lease"))
                .bearer_auth(&api.worker)
                .json(&json!({"worker_id": "w", "wait_ms": 30_000}));
            tokio::spawn(async move { req.send().await.map(|r| r.status().as_u16()) })
        };
        // Let the request reach the server before shutting down.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let url = api.url("/healthz");
        let client = api.client.clone();
        tokio::time::timeout(Duration::from_secs(20), api.stop())
            .await
            .expect("shutdown finishes");
        assert_eq!(
            waiting.await.unwrap().unwrap(),
            204,
            "the in-flight long-poll is answered"
        );
        let fresh = reqwest::Client::new();
        assert!(fresh.get(&url).send().await.is_err(), "no longer accepting");
        drop(client);
    }
);

/// Runs the binary to completion.
fn holdfast(args: &[&str], database: &str) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_holdfast"))
        .args(args)
        .env("HOLDFAST_DATABASE_URL", database)
        .env_remove("HOLDFAST_ADMIN_KEY")
        .output()
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.success(), text(out.stdout), text(out.stderr))
}

backend_test!(key_create_list_revoke, |b| async move {
    let Some(db) = TestDb::new(b).await else {
        return;
    };
    let (ok, key, _) = holdfast(&["key", "create", "--role", "worker"], &db.url);
    assert!(ok);
    let key = key.trim().to_owned();
    assert!(key.starts_with("hf_") && key.len() == 67, "{key}");
    let (ok, list, _) = holdfast(&["key", "list"], &db.url);
    assert!(ok);
    assert!(!list.contains(&key), "the list never shows a key");
    let line = list
        .lines()
        .find(|l| l.contains("worker"))
        .expect(&list)
        .to_owned();
    let id = line.split_whitespace().next().unwrap().to_owned();
    assert!(line.trim_end().ends_with('-'), "not revoked yet: {line}");
    let engine = holdfast::Engine::new(db.store(holdfast::RateCard::builtin()).await);
    let role = engine
        .store()
        .role_of_key_hash(&holdfast::key_hash(&key))
        .await
        .unwrap();
    assert_eq!(role.as_deref(), Some("worker"));
    assert!(holdfast(&["key", "revoke", &id], &db.url).0);
    assert!(
        !holdfast(&["key", "revoke", &id], &db.url).0,
        "revoking twice fails"
    );
    assert_eq!(
        engine
            .store()
            .role_of_key_hash(&holdfast::key_hash(&key))
            .await
            .unwrap(),
        None
    );
    assert!(!holdfast(&["key", "create", "--role", "root"], &db.url).0);
});

backend_test!(
    serve_prints_the_first_key_once_logs_where_it_listens_and_exits_0_on_sigterm,
    |b| async move {
        let Some(db) = TestDb::new(b).await else {
            return;
        };
        let serving = Serving::start(&db.url);
        let lines = serving.until("listening on");
        let log = lines.last().unwrap().clone();
        assert!(log.contains("rate_card=built-in default"), "{log}");
        assert!(log.contains("database="), "{log}");
        let base = format!("http://{}", listen_address(&lines));
        // stdout and stderr are read by two threads: the key may come after the log line.
        let key = match lines.iter().find(|l| l.starts_with("hf_")) {
            Some(key) => key.clone(),
            None => serving.until("hf_").last().unwrap().clone(),
        };
        let client = reqwest::Client::new();
        let health = client.get(format!("{base}/healthz")).send().await.unwrap();
        assert_eq!(health.status(), 200);
        let audit = client
            .get(format!("{base}/v1/admin/audit"))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        assert_eq!(audit.status(), 200);
        let (status, _) = serving.terminate();
        assert!(status.success(), "SIGTERM is a clean exit");

        let again = Serving::start(&db.url);
        let mut lines = again.until("listening on");
        let (status, rest) = again.terminate();
        assert!(status.success());
        lines.extend(rest);
        assert!(
            !lines.iter().any(|l| l.starts_with("hf_")),
            "printed only at the first start: {lines:#?}"
        );
        assert!(lines.iter().any(|l| l.contains("stopped")), "{lines:#?}");
    }
);

backend_test!(admin_passes_run_on_request, |b| async move {
    let Some(api) = api(b).await else { return };
    api.account("p1", "free").await;
    api.top_up("p1", "3.00", "t").await;
    for pass in ["sweep", "reconcile", "reactivate", "expire"] {
        let r = api
            .post(&api.admin, &format!("/v1/admin/{pass}"), json!({}))
            .await;
        let body = r.expect(200, "");
        assert!(body["processed"].is_u64(), "{pass}: {body}");
        assert_eq!(
            body["adjusted"], 0,
            "{pass}: books that balance need no adjustment"
        );
        assert_eq!(body["drifted"], 0, "{pass}");
        api.post(&api.service, &format!("/v1/admin/{pass}"), json!({}))
            .await
            .expect(403, "forbidden");
    }
    let r = api
        .post(&api.admin, "/v1/admin/sweep", json!({"now": true}))
        .await;
    r.expect(422, "invalid_request");
    // An empty body counts as {} for bodies without required fields.
    let bare = api
        .client
        .post(api.url("/v1/admin/reconcile"))
        .bearer_auth(&api.admin);
    api.send(bare).await.expect(200, "");
    // Whitespace alone is not a JSON text: refused, as any malformed body.
    let blank = api
        .client
        .post(api.url("/v1/admin/reconcile"))
        .bearer_auth(&api.admin)
        .header("content-type", "application/json")
        .body("\n");
    api.send(blank).await.expect(422, "invalid_request");
    api.assert_clean().await;
    api.stop().await;
});

/// `docs/openapi.json` is the contract clients are generated from: it must be exactly the
/// card-free document (`holdfast openapi`) the served one is made from. After changing the
/// API, `holdfast openapi > docs/openapi.json`.
#[test]
fn the_committed_document_is_the_card_free_one() {
    let committed: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/openapi.json"
        ))
        .expect("docs/openapi.json"),
    )
    .expect("docs/openapi.json is JSON");
    assert!(
        committed == holdfast_server::http::document(),
        "docs/openapi.json is stale: run `cargo run -p holdfast-server -- openapi > docs/openapi.json`"
    );
}

/// Every JSON pointer at which `a` and `b` differ (a value only one of them has included).
fn differences(at: &str, a: &Value, b: &Value, found: &mut BTreeSet<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let (xv, yv) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                differences(
                    &format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    xv,
                    yv,
                    found,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (xv, yv)) in x.iter().zip(y).enumerate() {
                differences(&format!("{at}/{i}"), xv, yv, found);
            }
        }
        _ if a != b => {
            found.insert(at.to_owned());
        }
        _ => {}
    }
}

backend_test!(
    the_served_document_is_the_card_free_one_with_the_cards_names_and_bounds,
    |b| async move {
        // A card whose names and longest lease are not the default card's.
        let card = card_with(&[
            ("stale_after_seconds = 1800", "stale_after_seconds = 1500"),
            (
                "[kinds.video]\nlane = \"video\"",
                "[kinds.film]\nlane = \"film\"",
            ),
            ("[meters.linux-large]", "[meters.arm-large]"),
            ("[plans.premium]", "[plans.gold]"),
            ("free_for = [\"premium\"]", "free_for = [\"gold\"]"),
        ]);
        let Some(api) = api_with(b, card).await else {
            return;
        };
        let served = api.get("", "/openapi.json").await.expect(200, "").clone();
        let card_free = holdfast_server::http::document();
        let mut found = BTreeSet::new();
        differences("", &card_free, &served, &mut found);
        let lane = "/paths/~1v1~1lanes~1{lane}~1lease/post/parameters/0/schema/enum";
        let expected: BTreeSet<String> = [
            "/components/schemas/KindName/enum",
            "/components/schemas/PlanName/enum",
            "/components/schemas/MeterName/enum",
            "/components/schemas/AllowanceName/enum",
            "/components/schemas/LeaseRequest/properties/lease_seconds/maximum",
            // Not the card's: the built-in time zone database's names.
            "/components/schemas/TimeZoneName/enum",
            lane,
        ]
        .map(str::to_owned)
        .into();
        assert_eq!(found, expected, "served vs card-free");
        let at = |p: &str| served.pointer(p).unwrap().clone();
        let zones = at("/components/schemas/TimeZoneName/enum");
        assert!(zones.as_array().unwrap().contains(&json!("Europe/Berlin")));
        assert_eq!(
            at("/components/schemas/KindName/enum"),
            json!(["ci", "film", "image", "text"])
        );
        assert_eq!(
            at("/components/schemas/PlanName/enum"),
            json!(["free", "gold"])
        );
        assert_eq!(
            at("/components/schemas/MeterName/enum"),
            json!(["arm-large", "linux-small"])
        );
        assert_eq!(
            at("/components/schemas/AllowanceName/enum"),
            json!(["daily_images", "daily_messages"])
        );
        assert_eq!(
            at(lane),
            json!([
                "film",
                "film_priority",
                "image",
                "image_priority",
                "runners",
                "runners_priority",
                "text",
                "text_priority"
            ])
        );
        assert_eq!(
            at("/components/schemas/LeaseRequest/properties/lease_seconds/maximum"),
            1500
        );
        // What the document now says is what the service checks: the name just outside
        // an enum and the lease just over the maximum are refused, the ones inside taken.
        let plan = |p: &str| json!({ "plan": p });
        let put = |p| api.put(&api.service, "/v1/accounts/acct-1", plan(p));
        put("premium").await.expect(422, "unknown_plan");
        put("gold").await.expect(201, "");
        let lease = |s: i64| {
            let body = json!({ "worker_id": "w1", "lease_seconds": s, "wait_ms": 0 });
            api.post(&api.worker, "/v1/lanes/film/lease", body)
        };
        lease(1501).await.expect(422, "invalid_request");
        lease(1500).await.expect(204, "");
        api.stop().await;
    }
);

backend_test!(
    the_document_gives_every_parameter_a_checked_format,
    |b| async move {
        let Some(api) = api(b).await else { return };
        let doc = api.get("", "/openapi.json").await.expect(200, "").clone();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                for p in op["parameters"].as_array().into_iter().flatten() {
                    let schema = &p["schema"];
                    let constrained = schema.get("$ref").is_some()
                        || ["pattern", "enum", "maximum", "format"]
                            .iter()
                            .any(|k| schema.get(k).is_some());
                    assert!(constrained, "{method} {path} {}: {schema}", p["name"]);
                }
            }
        }
        fn no_nulls(at: &str, v: &serde_json::Value) {
            match v {
                serde_json::Value::Null => panic!("null at {at}"),
                serde_json::Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        no_nulls(&format!("{at}/{i}"), item);
                    }
                }
                serde_json::Value::Object(m) => {
                    for (k, item) in m {
                        no_nulls(&format!("{at}/{k}"), item);
                    }
                }
                _ => {}
            }
        }
        no_nulls("", &doc);
        let submit = &doc["paths"]["/v1/jobs"]["post"]["responses"]["201"]["links"];
        assert_eq!(submit["get_job"]["operationId"], "get_job");
        assert_eq!(
            submit["lease"]["parameters"]["lane"],
            "$response.body#/lane"
        );
        let lease = &doc["paths"]["/v1/lanes/{lane}/lease"]["post"]["responses"]["200"]["links"];
        assert_eq!(
            lease["complete"]["requestBody"]["lease_token"],
            "$response.body#/lease_token"
        );
        api.stop().await;
    }
);

#[test]
fn the_request_time_limit_is_a_flag_within_bounds() {
    for bad in ["0", "3601", "ten"] {
        let (ok, _, err) = holdfast(
            &["serve", "--request-timeout-seconds", bad],
            "sqlite::memory:",
        );
        assert!(!ok, "{bad} accepted");
        assert!(err.contains("--request-timeout-seconds"), "{bad}: {err}");
    }
    let (ok, help, _) = holdfast(&["serve", "--help"], "sqlite::memory:");
    assert!(ok);
    assert!(help.contains("HOLDFAST_REQUEST_TIMEOUT_SECONDS") && help.contains("[default: 15]"));
}

#[test]
fn serve_refuses_an_environment_admin_key_shorter_than_32_characters() {
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("short.db").display());
    let out = Command::new(env!("CARGO_BIN_EXE_holdfast"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("HOLDFAST_DATABASE_URL", &database)
        .env("HOLDFAST_ADMIN_KEY", "x".repeat(31))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("HOLDFAST_ADMIN_KEY is 31 characters; it needs at least 32"),
        "{stderr}"
    );
    assert!(
        !stderr.contains(&"x".repeat(31)),
        "the key is never printed"
    );
}
