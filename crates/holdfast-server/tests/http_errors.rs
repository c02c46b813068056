//! Every auth case and every bad input of API.md "Errors", over a real socket on both
//! backends: the documented status and code, the error order, and afterwards nothing
//! changed and the audit is clean. Also: a database that is down or stuck answers 503.

mod http_support;

use std::time::Duration;

use holdfast::backend_test;
use holdfast_store::driver::db::Sql;
use http_support::*;
use reqwest::Method;
use serde_json::{Value, json};

backend_test!(
    auth_no_key_wrong_key_wrong_role_right_role,
    |b| async move {
        let Some(api) = api(b).await else { return };
        api.account("a1", "free").await;
        let job = api.submit("a1", "image", "j").await.expect(201, "").clone();
        let job_path = format!("/v1/jobs/{}", job["job_id"].as_str().unwrap());

        api.get("", "/v1/accounts/a1")
            .await
            .expect(401, "unauthorized");
        api.get("hf_not_a_key", "/v1/accounts/a1")
            .await
            .expect(401, "unauthorized");
        let basic = api
            .client
            .get(api.url("/v1/accounts/a1"))
            .header("authorization", "Basic eDp5");
        api.send(basic).await.expect(401, "unauthorized");

        // (key, method, path, allowed)
        let lease = "/v1/lanes/image/lease";
        let cases: Vec<(&str, Method, &str, bool)> = vec![
            (&api.worker, Method::GET, "/v1/accounts/a1", false),
            (&api.service, Method::GET, "/v1/accounts/a1", true),
            (&api.admin, Method::GET, "/v1/accounts/a1", true),
            (&api.worker, Method::GET, "/v1/events", false),
            (&api.service, Method::POST, "/v1/accounts/a1/block", false),
            (&api.worker, Method::POST, "/v1/accounts/a1/block", false),
            (&api.admin, Method::POST, "/v1/accounts/a1/unblock", true),
            (&api.service, Method::GET, "/v1/admin/audit", false),
            (&api.worker, Method::POST, "/v1/admin/sweep", false),
            (&api.admin, Method::POST, "/v1/admin/sweep", true),
            (&api.service, Method::POST, lease, false),
            (&api.worker, Method::GET, &job_path, true),
            (&api.service, Method::GET, &job_path, true),
        ];
        for (key, method, path, allowed) in cases {
            let body = (method == Method::POST).then(|| json!({}));
            let r = api.call(method.clone(), key, path, body).await;
            if allowed {
                assert_eq!(r.status, 200, "{method} {path}: {:#}", r.body);
            } else {
                r.expect(403, "forbidden");
            }
        }
        // A 403 names the roles the endpoint needs and the key's own.
        let forbidden = [
            (
                &api.worker,
                "/v1/events",
                "service, admin or viewer",
                "worker",
            ),
            (&api.service, "/v1/admin/sweep", "admin", "service"),
            (&api.service, lease, "worker or admin", "service"),
        ];
        for (key, path, needs, role) in forbidden {
            let method = if path == "/v1/events" {
                Method::GET
            } else {
                Method::POST
            };
            let body = (method == Method::POST).then(|| json!({}));
            let r = api.call(method, key, path, body).await;
            r.expect(403, "forbidden");
            let expected = format!("this endpoint needs role {needs} (this key's role is {role})");
            assert_eq!(r.message(), expected, "{path}");
        }
        let r = api
            .post(&api.worker, lease, json!({"worker_id": "w"}))
            .await;
        assert_eq!(r.expect(200, "")["job"]["job_id"], job["job_id"]);

        // A revoked key is no key.
        let store = api.engine.store();
        let id = store
            .create_key("service", "hf_soon_revoked")
            .await
            .unwrap();
        api.get("hf_soon_revoked", "/v1/accounts/a1")
            .await
            .expect(200, "");
        assert!(store.revoke_key(&id).await.unwrap());
        api.get("hf_soon_revoked", "/v1/accounts/a1")
            .await
            .expect(401, "unauthorized");

        for open in ["/healthz", "/openapi.json"] {
            assert_eq!(api.get("", open).await.status, 200, "{open} needs no key");
        }
        api.get("", "/metrics").await.expect(401, "unauthorized");
        api.stop().await;
    }
);

/// A request to `path` with a raw body and content type (none when empty).
async fn raw(
    api: &Api,
    key: &str,
    path: &str,
    content_type: &str,
    body: impl Into<reqwest::Body>,
) -> Reply {
    let mut req = api.client.post(api.url(path)).body(body);
    if !key.is_empty() {
        req = req.bearer_auth(key);
    }
    if !content_type.is_empty() {
        req = req.header("content-type", content_type);
    }
    api.send(req).await
}

backend_test!(errors_come_in_the_documented_order, |b| async move {
    let Some(api) = api(b).await else { return };
    api.account("o1", "free").await;
    let huge = format!(
        "{{\"amount\": \"1\", \"idempotency_key\": \"{}\"}}",
        "k".repeat(70_000)
    );
    let top_ups = "/v1/accounts/o1/top-ups";
    // 401 before 413 and 422; 403 before 413; 413 before 422.
    raw(&api, "", top_ups, "", huge.clone())
        .await
        .expect(401, "unauthorized");
    raw(&api, &api.worker, top_ups, "", huge.clone())
        .await
        .expect(403, "forbidden");
    raw(&api, &api.service, top_ups, "", huge.clone())
        .await
        .expect(413, "payload_too_large");
    raw(&api, &api.service, top_ups, "application/json", huge)
        .await
        .expect(413, "payload_too_large");
    // 422 invalid_request before 404 account_not_found.
    raw(
        &api,
        &api.service,
        "/v1/accounts/nobody/top-ups",
        "application/json",
        "{",
    )
    .await
    .expect(422, "invalid_request");
    // 422 unknown_kind / unknown_plan before 404 account_not_found; the message lists
    // the names the card has.
    let r = api.submit("nobody", "sculpture", "k").await;
    r.expect(422, "unknown_kind");
    assert_eq!(
        r.message(),
        "unknown kind \"sculpture\"; the rate card's kinds: ci, image, text, video"
    );
    let r = api
        .put(&api.service, "/v1/accounts/o1", json!({"plan": "gold"}))
        .await;
    r.expect(422, "unknown_plan");
    assert_eq!(
        r.message(),
        "unknown plan \"gold\"; the rate card's plans: free, premium"
    );
    let r = api
        .post(
            &api.worker,
            "/v1/lanes/nope/lease",
            json!({"worker_id": "w"}),
        )
        .await;
    r.expect(404, "unknown_lane");
    assert!(r.message().ends_with("lanes: image, image_priority, runners, runners_priority, text, text_priority, video, video_priority"), "{}", r.message());
    // 404 before the idempotency check: an unknown account with a used key.
    api.top_up("o1", "1.00", "used").await;
    api.post(
        &api.service,
        "/v1/accounts/nobody/top-ups",
        json!({"amount": "2", "idempotency_key": "used"}),
    )
    .await
    .expect(404, "account_not_found");
    // A replay before a business refusal: the account is now blocked, the replay still 200.
    api.submit("o1", "image", "j1").await.expect(201, "");
    api.post(&api.admin, "/v1/accounts/o1/block", json!({}))
        .await
        .expect(200, "");
    api.submit("o1", "image", "j1").await.expect(200, "");
    api.submit("o1", "image", "j2")
        .await
        .expect(403, "account_blocked");
    api.assert_clean().await;
    api.stop().await;
});

/// Posts each body and expects 422 `invalid_request` whose message names `field`.
async fn all_invalid(api: &Api, path: &str, field: &str, bodies: Vec<Value>) {
    for body in bodies {
        let r = api.post(&api.service, path, body.clone()).await;
        r.expect(422, "invalid_request");
        let message = r.body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(field),
            "{body}: message {message:?} should name {field}"
        );
    }
}

backend_test!(bad_input_is_422_and_changes_nothing, |b| async move {
    let Some(api) = api(b).await else { return };
    api.account("bad", "free").await;
    api.top_up("bad", "1.00", "t1").await;
    let before_account = api.get_account("bad").await;
    let before_ledger = api.get(&api.service, "/v1/accounts/bad/ledger").await.body;
    let top_ups = "/v1/accounts/bad/top-ups";
    let debits = "/v1/accounts/bad/debits";

    let r = raw(
        &api,
        &api.service,
        top_ups,
        "application/json",
        r#"{"amount": "1.00","#,
    )
    .await;
    r.expect(422, "invalid_request");
    let r = raw(
        &api,
        &api.service,
        top_ups,
        "",
        r#"{"amount": "1", "idempotency_key": "k"}"#,
    )
    .await;
    assert!(
        r.expect(422, "invalid_request")["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Content-Type")
    );
    let r = raw(
        &api,
        &api.service,
        top_ups,
        "text/plain",
        r#"{"amount": "1", "idempotency_key": "k"}"#,
    )
    .await;
    r.expect(422, "invalid_request");
    all_invalid(
        &api,
        top_ups,
        "bogus",
        vec![json!({"amount": "1", "idempotency_key": "k", "bogus": 1})],
    )
    .await;
    let amounts = [
        "1.0000001",
        "-1",
        "0",
        "0.00",
        "1e3",
        " 1",
        "01",
        "1,5",
        "",
        "1000000000.000001",
    ];
    let mut bodies: Vec<Value> = amounts
        .iter()
        .map(|a| json!({"amount": a, "idempotency_key": "k"}))
        .collect();
    bodies.extend([
        json!({"amount": 1.5, "idempotency_key": "k"}),
        json!({"amount": 1, "idempotency_key": "k"}),
    ]);
    bodies.push(json!({"amount": null, "idempotency_key": "k"}));
    all_invalid(&api, top_ups, "amount", bodies.clone()).await;
    all_invalid(&api, debits, "amount", bodies).await;
    all_invalid(
        &api,
        top_ups,
        "idempotency_key",
        vec![
            json!({"amount": "1"}),
            json!({"amount": "1", "idempotency_key": ""}),
            json!({"amount": "1", "idempotency_key": "k".repeat(256)}),
            json!({"amount": "1", "idempotency_key": 7}),
        ],
    )
    .await;
    all_invalid(
        &api,
        top_ups,
        "kind",
        vec![json!({"amount": "1", "idempotency_key": "k", "kind": "gift"})],
    )
    .await;
    all_invalid(&api, debits, "usage", vec![
        json!({"usage": {"meter": "linux-small", "seconds": 0}, "idempotency_key": "k"}),
        json!({"usage": {"meter": "linux-small", "seconds": 1.5}, "idempotency_key": "k"}),
        json!({"usage": {"meter": "linux-small", "seconds": "3"}, "idempotency_key": "k"}),
        json!({"usage": {"meter": "linux-small", "seconds": 3, "extra": 1}, "idempotency_key": "k"}),
    ])
    .await;
    all_invalid(&api, debits, "amount", vec![
        json!({"amount": "1", "usage": {"meter": "linux-small", "seconds": 1}, "idempotency_key": "k"}),
        json!({"idempotency_key": "k"}),
    ])
    .await;
    let refund = json!({"top_up_idempotency_key": "", "amount": "1", "idempotency_key": "r"});
    all_invalid(
        &api,
        "/v1/accounts/bad/refunds",
        "top_up_idempotency_key",
        vec![refund],
    )
    .await;

    // Ids and query values.
    for path in [
        "/v1/accounts/bad%20id",
        "/v1/accounts/%C3%A9",
        &format!("/v1/accounts/{}", "a".repeat(129)),
    ] {
        api.get(&api.service, path)
            .await
            .expect(422, "invalid_request");
    }
    api.put(
        &api.service,
        "/v1/accounts/no%2Fslash",
        json!({"plan": "free"}),
    )
    .await
    .expect(422, "invalid_request");
    for query in [
        "limit=0",
        "limit=1001",
        "limit=-1",
        "limit=abc",
        "after=xyz",
        "after=-3",
        "colour=red",
    ] {
        let r = api
            .get(&api.service, &format!("/v1/accounts/bad/ledger?{query}"))
            .await;
        r.expect(422, "invalid_request");
        api.get(&api.service, &format!("/v1/events?{query}"))
            .await
            .expect(422, "invalid_request");
    }
    api.get(&api.service, "/v1/events?type=job.exploded")
        .await
        .expect(422, "invalid_request");
    api.get(&api.service, "/v1/events?account_id=bad%20id")
        .await
        .expect(422, "invalid_request");

    // Accounts and jobs.
    let put = "/v1/accounts/bad";
    for body in [
        json!({}),
        json!({"plan": "free", "plan_until": "tomorrow"}),
        json!({"plan": "free", "max_concurrent_jobs": 0}),
        json!({"plan": "free", "max_concurrent_jobs": 1.5}),
        json!({"plan": 3}),
    ] {
        api.put(&api.service, put, body)
            .await
            .expect(422, "invalid_request");
    }
    all_invalid(
        &api,
        "/v1/jobs",
        "account_id",
        vec![json!({"account_id": "a b", "kind": "image", "idempotency_key": "k"})],
    )
    .await;
    all_invalid(
        &api,
        "/v1/jobs",
        "kind",
        vec![json!({"account_id": "bad", "idempotency_key": "k"})],
    )
    .await;
    api.post(&api.service, "/v1/accounts/bad/activity", json!({"x": 1}))
        .await
        .expect(422, "invalid_request");

    // Workers.
    let lease = "/v1/lanes/image/lease";
    for body in [
        json!({}),
        json!({"worker_id": "w", "lease_seconds": 0}),
        json!({"worker_id": "w", "lease_seconds": 1801}),
        json!({"worker_id": "w", "wait_ms": 30_001}),
        json!({"worker_id": "w", "wait_ms": -1}),
    ] {
        api.post(&api.worker, lease, body)
            .await
            .expect(422, "invalid_request");
    }
    api.post(
        &api.worker,
        "/v1/lanes/painting/lease",
        json!({"worker_id": "w"}),
    )
    .await
    .expect(404, "unknown_lane");
    api.post(&api.worker, "/v1/jobs/nope/complete", json!({}))
        .await
        .expect(422, "invalid_request");
    api.post(
        &api.worker,
        "/v1/jobs/nope/heartbeat",
        json!({"lease_token": "t"}),
    )
    .await
    .expect(404, "job_not_found");

    // Routes and methods.
    api.get(&api.service, "/v1/nothing-here")
        .await
        .expect(404, "route_not_found");
    api.get("", "/").await.expect(404, "route_not_found");
    api.call(Method::DELETE, &api.service, "/v1/jobs", None)
        .await
        .expect(405, "method_not_allowed");
    api.get(&api.service, "/v1/accounts/bad/debits")
        .await
        .expect(405, "method_not_allowed");

    assert_eq!(
        api.get_account("bad").await["balance_micros"],
        before_account["balance_micros"]
    );
    assert_eq!(
        api.get(&api.service, "/v1/accounts/bad/ledger").await.body,
        before_ledger
    );
    assert_eq!(api.get_account("bad").await["open_jobs"], 0);
    api.assert_clean().await;
    api.stop().await;
});

backend_test!(a_database_that_is_gone_answers_503, |b| async move {
    let Some(api) = api(b).await else { return };
    api.account("gone", "free").await;
    api.engine.store().pool().close().await;
    api.get(&api.admin, "/v1/accounts/gone")
        .await
        .expect(503, "database_unavailable");
    api.get(&api.service, "/v1/accounts/gone")
        .await
        .expect(503, "database_unavailable");
    api.post(&api.admin, "/v1/admin/sweep", json!({}))
        .await
        .expect(503, "database_unavailable");
    let health = api.get("", "/healthz").await;
    assert_eq!(health.status, 503);
    assert_eq!(health.body["status"], "unavailable");
    api.stop().await;
});

backend_test!(
    a_stuck_database_times_out_with_503_instead_of_hanging,
    |b| async move {
        let card = holdfast::RateCard::builtin();
        let Some(api) = api_opts(b, card, Duration::from_millis(500)).await else {
            return;
        };
        api.account("stuck", "free").await;
        // Another transaction holds the account (PostgreSQL: its row; SQLite: the write lock).
        let mut tx = api.engine.store().pool().begin_write().await.unwrap();
        let lock = Sql {
            postgres: "SELECT balance FROM accounts WHERE account_id = $1 FOR UPDATE",
            sqlite: "SELECT balance FROM accounts WHERE account_id = $1",
        };
        tx.fetch_one(lock, vec!["stuck".into()]).await.unwrap();
        let body = json!({"amount": "1.00", "idempotency_key": "t"});
        api.post(&api.service, "/v1/accounts/stuck/top-ups", body.clone())
            .await
            .expect(503, "database_unavailable");
        tx.rollback().await.unwrap();
        let after = api.get_account("stuck").await;
        assert_eq!(
            after["balance_micros"], 0,
            "the timed-out top-up changed nothing"
        );
        api.post(&api.service, "/v1/accounts/stuck/top-ups", body)
            .await
            .expect(201, "");
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(
    integers_are_counted_as_json_schema_counts_them,
    |b| async move {
        let Some(api) = api(b).await else { return };
        // 2.0 is an integer to JSON Schema (and so to the OpenAPI document): accepted.
        let r = api
            .put(
                &api.service,
                "/v1/accounts/whole",
                json!({"plan": "free", "max_concurrent_jobs": 2.0}),
            )
            .await;
        r.expect(201, "");
        assert_eq!(r.body["max_concurrent_jobs_override"], 2);
        // A fraction is not, and changes nothing.
        api.put(
            &api.service,
            "/v1/accounts/whole",
            json!({"plan": "free", "max_concurrent_jobs": 2.5}),
        )
        .await
        .expect(422, "invalid_request");
        assert_eq!(
            api.get_account("whole").await["max_concurrent_jobs_override"],
            2
        );
        // A body that is not an object is refused even where serde would read a struct
        // from an array; an optional body may be absent or null.
        api.post(&api.admin, "/v1/accounts/whole/block", json!(["why"]))
            .await
            .expect(422, "invalid_request");
        assert!(api.get_account("whole").await["blocked_at"].is_null());
        api.post(&api.admin, "/v1/admin/sweep", json!([]))
            .await
            .expect(422, "invalid_request");
        api.post(&api.admin, "/v1/admin/sweep", Value::Null)
            .await
            .expect(200, "");
        // A metered debit carries at most a year of seconds.
        api.top_up("whole", "5.00", "t1").await;
        let r = api
            .post(
                &api.service,
                "/v1/accounts/whole/debits",
                json!({"usage": {"meter": "linux-small", "seconds": 31_622_401},
                       "idempotency_key": "d1"}),
            )
            .await;
        r.expect(422, "invalid_request");
        assert!(r.message().contains("usage.seconds"), "{}", r.message());
        assert_eq!(api.get_account("whole").await["balance"], "5.00");
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(
    a_payload_with_nul_is_refused_on_both_backends,
    |b| async move {
        let Some(api) = api(b).await else { return };
        api.account("nul", "free").await;
        api.top_up("nul", "5.00", "t1").await;
        let r = api
            .post(
                &api.service,
                "/v1/jobs",
                json!({"account_id": "nul", "kind": "video", "idempotency_key": "s1",
                       "payload": {"prompt": ["a\u{0}b"]}}),
            )
            .await;
        r.expect(422, "invalid_request");
        assert!(r.message().starts_with("payload"), "{}", r.message());
        let account = api.get_account("nul").await;
        assert_eq!(
            (account["held"].as_str(), account["open_jobs"].as_i64()),
            (Some("0.00"), Some(0))
        );
        api.assert_clean().await;
        api.stop().await;
    }
);
