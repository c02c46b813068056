//! Job refunds and grants over a real socket, against SQLite and PostgreSQL: the
//! contract's answers and codes, roles, bad input that changes nothing, and a race of
//! refunds over HTTP. Each scenario ends with the audit.

mod http_support;

use holdfast::backend_test;
use holdfast::testing::card_with;
use http_support::*;
use serde_json::json;

/// Submits a video job for `account`, leases it and completes it in full; its id.
async fn charged_video(api: &Api, account: &str) -> String {
    let job = api.submit(account, "video", "v1").await;
    let id = job.expect(201, "")["job_id"].as_str().unwrap().to_owned();
    let (leased, token) = api.lease("video_priority", 60).await;
    assert_eq!(leased, id);
    api.post(
        &api.worker,
        &format!("/v1/jobs/{id}/complete"),
        json!({ "lease_token": token }),
    )
    .await
    .expect(200, "");
    id
}

backend_test!(a_job_refund_over_http, |b| async move {
    let card = card_with(&[(
        r#"take = [{ pocket = "money", amount = "0.50" }]"#,
        r#"take = [{ pocket = "money", amount = "1.00" }]"#,
    )]);
    let Some(api) = api_with(b, card).await else {
        return;
    };
    api.account("u", "premium").await;
    api.top_up("u", "1.00", "t").await;
    let id = charged_video(&api, "u").await;
    let path = format!("/v1/jobs/{id}/refund");
    // Bad input changes nothing.
    for (body, code) in [
        (json!({ "reason": "x" }), "invalid_request"),
        (
            json!({ "reason": "x", "idempotency_key": "k", "amount": "-1" }),
            "invalid_request",
        ),
        (
            json!({ "reason": "x", "idempotency_key": "k", "amount": 0.2 }),
            "invalid_request",
        ),
        (
            json!({ "reason": "", "idempotency_key": "k" }),
            "invalid_request",
        ),
        (
            json!({ "reason": "x", "idempotency_key": "k", "extra": 1 }),
            "invalid_request",
        ),
    ] {
        api.post(&api.service, &path, body).await.expect(422, code);
    }
    api.post(
        &api.worker,
        &path,
        json!({ "reason": "x", "idempotency_key": "k" }),
    )
    .await
    .expect(403, "forbidden");
    api.post(
        &api.service,
        "/v1/jobs/job_nope/refund",
        json!({ "reason": "x", "idempotency_key": "k" }),
    )
    .await
    .expect(404, "job_not_found");
    assert_eq!(api.get_account("u").await["balance_micros"], 0);
    // Ten parallel refunds of 0.20 with their own keys: five pass, five are refused.
    let calls = (0..10).map(|i| {
        let body = json!({ "amount": "0.20", "reason": "blank video", "idempotency_key": format!("r{i}") });
        api.post(&api.service, &path, body)
    });
    let replies = futures::future::join_all(calls).await;
    let mut statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [201, 201, 201, 201, 201, 409, 409, 409, 409, 409]);
    let refused = replies.iter().find(|r| r.status == 409).unwrap();
    refused.expect(409, "refund_exceeds_charge");
    let done = replies
        .iter()
        .find(|r| r.status == 201)
        .unwrap()
        .body
        .clone();
    assert_eq!(done["entries"][0]["kind"], "job_refund");
    assert_eq!(done["entries"][0]["ref"], id.as_str());
    assert_eq!(done["entries"][0]["delta"], "0.20");
    // A refund that passed, asked again: its answer, the job as it is now.
    let passed = replies.iter().position(|r| r.status == 201).unwrap();
    let body = json!({ "amount": "0.20", "reason": "blank video", "idempotency_key": format!("r{passed}") });
    let replay = api.post(&api.service, &path, body).await;
    assert_eq!(
        replay.expect(200, "")["job"]["refunded"][0]["amount_micros"],
        1_000_000
    );
    let job = api.get(&api.service, &format!("/v1/jobs/{id}")).await;
    assert_eq!(job.expect(200, "")["refunded"][0]["amount"], "1.00");
    let a = api.get_account("u").await;
    assert_eq!(
        (int(&a, "balance_micros"), int(&a, "total_spent_micros")),
        (1_000_000, 0)
    );
    api.assert_clean().await;
});

backend_test!(a_grant_over_http, |b| async move {
    let Some(api) = api(b).await else { return };
    api.account("u", "free").await;
    let path = "/v1/accounts/u/grants";
    let body = json!({ "pocket": "daily_images", "amount": 5, "reason": "outage", "idempotency_key": "g" });
    api.post(&api.service, path, body.clone())
        .await
        .expect(403, "forbidden");
    let g = api.post(&api.admin, path, body.clone()).await;
    let g = g.expect(201, "");
    assert_eq!(
        (g["entry"]["kind"].as_str(), g["entry"]["delta"].as_i64()),
        (Some("grant"), Some(5))
    );
    assert_eq!(g["account"]["allowances"]["daily_images"]["remaining"], 8);
    api.post(&api.admin, path, body).await.expect(200, "");
    for bad in [
        json!({ "pocket": "gold", "amount": 5, "reason": "x", "idempotency_key": "g2" }),
        json!({ "pocket": "daily_images", "amount": "5", "reason": "x", "idempotency_key": "g2" }),
        json!({ "pocket": "daily_images", "amount": 0, "reason": "x", "idempotency_key": "g2" }),
        json!({ "pocket": "money", "amount": 1, "reason": "x", "idempotency_key": "g2" }),
    ] {
        api.post(&api.admin, path, bad)
            .await
            .expect(422, "invalid_request");
    }
    let grant =
        json!({ "pocket": "daily_images", "amount": 1, "reason": "x", "idempotency_key": "g3" });
    api.post(&api.admin, "/v1/accounts/nobody/grants", grant)
        .await
        .expect(404, "account_not_found");
    assert_eq!(
        api.get_account("u").await["allowances"]["daily_images"]["remaining"],
        8
    );
    api.assert_clean().await;
});
