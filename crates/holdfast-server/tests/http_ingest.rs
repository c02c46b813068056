//! Batch ingest over HTTP (`POST /v1/debits`) on SQLite and PostgreSQL: each item answered
//! in its place as the single debit would be, a malformed envelope refused whole, and the
//! audit clean after each scenario.

mod http_support;

use holdfast::backend_test;
use http_support::*;
use serde_json::{Value, json};

/// The money entries of `id`'s ledger, as (kind, delta) pairs.
async fn ledger(api: &Api, id: &str) -> Vec<(String, String)> {
    let r = api
        .get(&api.service, &format!("/v1/accounts/{id}/ledger"))
        .await;
    r.expect(200, "")["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["pocket"] == "money")
        .map(|e| {
            (
                e["kind"].as_str().unwrap().to_owned(),
                e["delta"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

backend_test!(each_item_is_answered_as_the_single_debit, |b| async move {
    let Some(api) = api(b).await else { return };
    api.account("a", "free").await;
    api.account("b", "free").await;
    api.top_up("a", "1.00", "t").await;
    let earlier = api
        .post(
            &api.service,
            "/v1/accounts/a/debits",
            json!({"amount": "0.10", "idempotency_key": "d0"}),
        )
        .await;
    let earlier_id = earlier.expect(201, "")["entry"]["entry_id"].clone();
    let items = json!([
        {"account_id": "a", "amount": "0.10", "idempotency_key": "d0"},           // replay
        {"account_id": "a", "amount": "0.20", "idempotency_key": "d0"},           // mismatch
        {"account_id": "a", "usage": {"meter": "linux-small", "seconds": 30},
         "idempotency_key": "d1", "job_ref": "run-1"},                              // metered
        {"account_id": "b", "amount": "0.50", "idempotency_key": "d1"},           // buffer
        {"account_id": "b", "amount": "0.60", "idempotency_key": "d2"},           // past it
        {"account_id": "nobody", "amount": "0.10", "idempotency_key": "x"},       // 404
        {"account_id": "a", "usage": {"meter": "gpu-huge", "seconds": 1},
         "idempotency_key": "d3"},                                                  // meter
        {"account_id": "a", "amount": "0.1234567", "idempotency_key": "d4"},      // 7 places
        {"account_id": "a", "amount": "0.10", "idempotency_key": "d5", "tip": 1}, // unknown
        {"account_id": "bad id!", "amount": "0.10", "idempotency_key": "d6"},     // bad id
        "not an object",
        {"account_id": "a", "amount": "0.10", "idempotency_key": "d1"}            // in-call replay
    ]);
    let r = api
        .post(&api.service, "/v1/debits", json!({ "debits": items }))
        .await;
    let body = r.expect(200, "").clone();
    assert_eq!(
        statuses(&body),
        vec![200, 409, 201, 201, 402, 404, 422, 422, 422, 422, 422, 409]
    );
    let res = body["results"].as_array().unwrap();
    assert_eq!(res[0]["entry"]["entry_id"], earlier_id);
    assert_eq!(res[1]["error"]["code"], "idempotency_mismatch");
    assert_eq!(res[2]["entry"]["delta"], "-0.003");
    assert_eq!(res[2]["entry"]["ref"], "run-1");
    assert_eq!(res[3]["account"]["balance"], "-0.50");
    assert!(res[3]["account"]["suspended_at"].is_string());
    assert_eq!(res[4]["error"]["code"], "insufficient_funds");
    assert_eq!(res[5]["error"]["code"], "account_not_found");
    assert_eq!(res[6]["error"]["code"], "unknown_meter");
    let message = |i: usize| res[i]["error"]["message"].as_str().unwrap().to_owned();
    assert!(message(7).starts_with("amount: "), "{}", message(7));
    assert!(
        message(8).starts_with("debits[8].tip: unknown field `tip`"),
        "{}",
        message(8)
    );
    assert_eq!(res[9]["error"]["code"], "invalid_request");
    assert!(message(10).starts_with("debits[10]: "), "{}", message(10));
    // The key d1 of account a was a metered debit earlier in the same call.
    assert_eq!(res[11]["error"]["code"], "idempotency_mismatch");
    for r in res {
        let ok = r["status"] == 200 || r["status"] == 201;
        assert_eq!(r.get("entry").is_some(), ok, "{r}");
        assert_eq!(r.get("account").is_some(), ok, "{r}");
        assert_eq!(r.get("error").is_some(), !ok, "{r}");
    }
    assert_eq!(
        ledger(&api, "a").await,
        vec![
            ("top_up".into(), "1.00".into()),
            ("debit".into(), "-0.10".into()),
            ("debit".into(), "-0.003".into())
        ]
    );
    assert_eq!(
        ledger(&api, "b").await,
        vec![("debit".into(), "-0.50".into())]
    );
    // The same call again changes nothing: the applied items are replays now.
    let again = api
        .post(&api.service, "/v1/debits", json!({ "debits": items }))
        .await;
    let again = statuses(again.expect(200, ""));
    assert_eq!(
        again,
        vec![200, 409, 200, 200, 402, 404, 422, 422, 422, 422, 422, 409]
    );
    assert_eq!(ledger(&api, "a").await.len(), 3);
    api.assert_clean().await;
});

backend_test!(a_malformed_envelope_applies_nothing, |b| async move {
    let Some(api) = api(b).await else { return };
    api.account("a", "free").await;
    api.top_up("a", "10.00", "t").await;
    let item =
        |i: usize| json!({"account_id": "a", "amount": "0.01", "idempotency_key": format!("k{i}")});
    let too_many: Vec<Value> = (0..1001).map(item).collect();
    let bodies = [
        json!({}),
        json!({"debits": []}),
        json!({"debits": too_many}),
        json!({"debits": [item(0)], "extra": true}),
        json!({"debits": item(0)}),
        json!([item(0)]),
    ];
    for body in bodies {
        let r = api.post(&api.service, "/v1/debits", body).await;
        r.expect(422, "invalid_request");
    }
    let raw = api
        .client
        .post(api.url("/v1/debits"))
        .bearer_auth(&api.service)
        .header("Content-Type", "application/json")
        .body("{\"debits\": [");
    api.send(raw).await.expect(422, "invalid_request");
    // Over the batch limit (1 MiB): 413, nothing read as debits.
    let padding = "x".repeat(1024 * 1024);
    let huge = json!({"debits": [item(0)], "pad": padding});
    let r = api.post(&api.service, "/v1/debits", huge).await;
    r.expect(413, "payload_too_large");
    // A worker key may not debit.
    let r = api
        .post(&api.worker, "/v1/debits", json!({"debits": [item(0)]}))
        .await;
    r.expect(403, "forbidden");
    assert_eq!(ledger(&api, "a").await.len(), 1);
    // A full batch of 1,000 (over the single body limit of 64 KiB) applies whole.
    let full: Vec<Value> = (0..1000).map(item).collect();
    let r = api
        .post(&api.service, "/v1/debits", json!({ "debits": full }))
        .await;
    assert!(statuses(r.expect(200, "")).iter().all(|&s| s == 201));
    assert_eq!(api.get_account("a").await["balance"], "0.00");
    api.assert_clean().await;
});

backend_test!(
    concurrent_batches_over_shared_accounts_stop_at_the_buffer,
    |b| async move {
        let Some(api) = api(b).await else { return };
        let accounts = ["r0", "r1", "r2"];
        for id in accounts {
            api.account(id, "free").await;
            api.top_up(id, "1.00", "t").await;
        }
        // 8 calls at once, each 10 debits of 0.10 per account (30 items); calls c and c + 4
        // use the same keys. 1.00 of balance and 1.00 of buffer: exactly 20 apply per account.
        let calls: Vec<_> = (0..8)
            .map(|c| {
                let items: Vec<Value> = (0..30)
                    .map(|i| {
                        json!({
                            "account_id": accounts[i % 3],
                            "amount": "0.10",
                            "idempotency_key": format!("d{}-{}", c % 4, i / 3),
                        })
                    })
                    .collect();
                let (client, url, key) = (
                    api.client.clone(),
                    api.url("/v1/debits"),
                    api.service.clone(),
                );
                tokio::spawn(async move {
                    let res = client
                        .post(url)
                        .bearer_auth(key)
                        .json(&json!({ "debits": items }))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(res.status(), 200);
                    res.json::<Value>().await.unwrap()
                })
            })
            .collect();
        let mut applied = [0; 3];
        for call in calls {
            let body = call.await.unwrap();
            for (i, r) in body["results"].as_array().unwrap().iter().enumerate() {
                match r["status"].as_u64().unwrap() {
                    201 => applied[i % 3] += 1,
                    200 | 402 => {}
                    other => panic!("unexpected {other}: {r}"),
                }
            }
        }
        assert_eq!(applied, [20, 20, 20]);
        for id in accounts {
            let a = api.get_account(id).await;
            assert_eq!(a["balance"], "-1.00", "{id}");
            assert!(a["suspended_at"].is_string(), "{id}");
        }
        let r = api.get(&api.service, "/v1/events?limit=1000").await;
        let suspended = r.expect(200, "")["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["type"] == "account.suspended")
            .count();
        assert_eq!(suspended, 3, "each account suspended exactly once");
        api.assert_clean().await;
    }
);
