//! The account listing and bans over a real socket, against SQLite and PostgreSQL: the
//! contract's answers and codes, bad queries refused, roles. Each scenario ends with the
//! audit.

mod http_support;

use holdfast::backend_test;
use http_support::*;
use serde_json::{Value, json};

fn ids(page: &Value) -> Vec<&str> {
    page["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["account_id"].as_str().unwrap())
        .collect()
}

backend_test!(accounts_are_listed_and_banned_over_http, |b| async move {
    let Some(api) = api(b).await else { return };
    for id in ["a-1", "a-2", "a-3", "b-1"] {
        api.account(id, "free").await;
    }
    api.account("p-1", "premium").await;
    let page = api.get(&api.service, "/v1/accounts?limit=2").await;
    let page = page.expect(200, "");
    assert_eq!(
        (ids(page), page["next"].as_str()),
        (vec!["a-1", "a-2"], Some("a-2"))
    );
    let next = api
        .get(&api.service, "/v1/accounts?limit=2&after=a-2")
        .await;
    assert_eq!(ids(next.expect(200, "")), ["a-3", "b-1"]);
    let by_prefix = api.get(&api.service, "/v1/accounts?prefix=a-").await;
    assert_eq!(ids(by_prefix.expect(200, "")), ["a-1", "a-2", "a-3"]);
    let by_plan = api.get(&api.service, "/v1/accounts?plan=premium").await;
    assert_eq!(ids(by_plan.expect(200, "")), ["p-1"]);
    for (query, code) in [
        ("status=gone", "invalid_request"),
        ("limit=0", "invalid_request"),
        ("after=bad%20id", "invalid_request"),
        ("prefix=%2F", "invalid_request"),
        ("colour=red", "invalid_request"),
        ("plan=gold", "unknown_plan"),
    ] {
        api.get(&api.service, &format!("/v1/accounts?{query}"))
            .await
            .expect(422, code);
    }

    // A ban: queued job canceled, new submits and debits refused.
    api.top_up("b-1", "5.00", "t").await;
    let job = api.submit("b-1", "video", "v").await;
    let job_id = job.expect(201, "")["job_id"].as_str().unwrap().to_owned();
    let ban = json!({ "reason": "card testing" });
    api.post(&api.service, "/v1/accounts/b-1/ban", ban.clone())
        .await
        .expect(403, "forbidden");
    api.post(&api.admin, "/v1/accounts/b-1/ban", json!({}))
        .await
        .expect(422, "invalid_request");
    let banned = api
        .post(&api.admin, "/v1/accounts/b-1/ban", ban.clone())
        .await;
    let banned = banned.expect(200, "");
    assert!(
        banned["account"]["banned_at"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );
    assert_eq!(banned["canceled"][0]["job_id"], job_id.as_str());
    assert_eq!(banned["canceled"][0]["status"], "canceled");
    assert_eq!(banned["account"]["held_micros"], 0);
    api.submit("b-1", "video", "v2")
        .await
        .expect(403, "account_banned");
    api.post(
        &api.service,
        "/v1/accounts/b-1/debits",
        json!({ "amount": "0.10", "idempotency_key": "d" }),
    )
    .await
    .expect(403, "account_banned");
    let listed = api.get(&api.service, "/v1/accounts?status=banned").await;
    assert_eq!(ids(listed.expect(200, "")), ["b-1"]);
    let active = api
        .get(&api.service, "/v1/accounts?status=active&prefix=b")
        .await;
    assert!(ids(active.expect(200, "")).is_empty());
    let unbanned = api
        .post(&api.admin, "/v1/accounts/b-1/unban", json!({}))
        .await;
    assert_eq!(unbanned.expect(200, "")["banned_at"], Value::Null);
    api.submit("b-1", "video", "v3").await.expect(201, "");
    api.post(&api.admin, "/v1/accounts/nobody/ban", ban)
        .await
        .expect(404, "account_not_found");
    api.assert_clean().await;
});

backend_test!(
    money_answers_and_events_name_the_cards_currency,
    |b| async move {
        let card = holdfast::testing::card_with(&[("currency = \"USD\"", "currency = \"EUR\"")]);
        let Some(api) = api_with(b, card).await else {
            return;
        };
        assert_eq!(api.account("u", "free").await["currency"], "EUR");
        let t = api.top_up("u", "1.00", "t").await;
        assert_eq!(t["account"]["currency"], "EUR");
        let ledger = api.get(&api.service, "/v1/accounts/u/ledger").await;
        assert_eq!(ledger.expect(200, "")["currency"], "EUR");
        let books = api.get(&api.admin, "/v1/ledger").await;
        assert_eq!(books.expect(200, "")["currency"], "EUR");
        api.post(
            &api.service,
            "/v1/accounts/u/debits",
            json!({ "amount": "2.00", "idempotency_key": "d" }),
        )
        .await
        .expect(201, "");
        let suspended = api.events("type=account.suspended", 1).await;
        assert_eq!(suspended[0]["currency"], "EUR");
        api.top_up("u", "5.00", "t2").await;
        let job = api.submit("u", "video", "v").await;
        let job = job.expect(201, "");
        assert_eq!(
            job["currency"], "EUR",
            "a job's hold is in the card's currency"
        );
        api.assert_clean().await;
    }
);
