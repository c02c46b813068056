//! The API.md flows over a real socket, against SQLite and PostgreSQL: accounts and money,
//! suspension and blocking, the job lifecycle, cancels, the sweeper, events and the ledger
//! by cursor, long-poll leasing, and the two races. Each scenario ends with the audit.

mod http_support;

use std::time::Duration;

use futures::StreamExt;
use holdfast::backend_test;
use holdfast::testing::{acct, key};
use http_support::*;
use serde_json::{Value, json};

backend_test!(accounts_and_money, |b| async move {
    let Some(api) = api(b).await else { return };
    let a = api.account("acct-1", "free").await;
    assert_eq!(a["balance"], "0.00");
    assert_eq!(a["balance_micros"], 0);
    assert_eq!(a["buffer"], "1.00");
    assert_eq!(a["buffer_micros"], 1_000_000);
    assert_eq!(a["effective_plan"], "free");
    assert_eq!(a["plan_until"], Value::Null);
    assert_eq!(a["allowances"]["daily_images"]["remaining"], 3);
    assert_eq!(a["allowances"]["daily_images"]["quota"], 3);
    assert!(a["created_at"].as_str().unwrap().ends_with('Z'));

    let r = api
        .put(
            &api.service,
            "/v1/accounts/acct-1",
            json!({"plan": "free", "max_concurrent_jobs": 2}),
        )
        .await;
    assert_eq!(r.expect(200, "")["max_concurrent_jobs"], 2);

    let t = api.top_up("acct-1", "10.00", "t1").await;
    assert_eq!(t["entry"]["delta"], "10.00");
    assert_eq!(t["entry"]["delta_micros"], 10_000_000);
    assert_eq!(t["entry"]["kind"], "top_up");
    assert_eq!(t["account"]["balance_micros"], 10_000_000);
    let path = "/v1/accounts/acct-1/top-ups";
    let replay = api
        .post(
            &api.service,
            path,
            json!({"amount": "10", "idempotency_key": "t1"}),
        )
        .await;
    assert_eq!(
        replay.expect(200, "")["entry"]["entry_id"],
        t["entry"]["entry_id"]
    );
    api.post(
        &api.service,
        path,
        json!({"amount": "5.00", "idempotency_key": "t1"}),
    )
    .await
    .expect(409, "idempotency_mismatch");
    let bonus = api
        .post(
            &api.service,
            path,
            json!({"amount": "2", "idempotency_key": "b1", "kind": "bonus"}),
        )
        .await;
    assert_eq!(bonus.expect(201, "")["entry"]["kind"], "bonus");

    let debits = "/v1/accounts/acct-1/debits";
    let d = api
        .post(
            &api.service,
            debits,
            json!({"amount": "0.25", "idempotency_key": "d1", "job_ref": "j-9"}),
        )
        .await;
    let d = d.expect(201, "");
    assert_eq!(d["entry"]["delta"], "-0.25");
    assert_eq!(d["entry"]["ref"], "j-9");
    let usage = json!({"usage": {"meter": "linux-small", "seconds": 30}, "idempotency_key": "d2"});
    let m = api
        .post(&api.service, debits, usage)
        .await
        .expect(201, "")
        .clone();
    assert_eq!(m["entry"]["delta_micros"], -3_000);
    let metered = (&m["entry"]["meter"], &m["entry"]["seconds"]);
    assert_eq!(metered, (&json!("linux-small"), &json!(30)));
    assert!(
        d["entry"].get("meter").is_none(),
        "a debit of an amount names no meter"
    );
    let ledger = api.get(&api.service, "/v1/accounts/acct-1/ledger").await;
    let ledger = ledger.expect(200, "").clone();
    let last = ledger["entries"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        last, m["entry"],
        "the ledger shows the entry as the debit answered it"
    );

    let refunds = "/v1/accounts/acct-1/refunds";
    let refund = |amount: &str, key: &str, top_up: &str| json!({"top_up_idempotency_key": top_up, "amount": amount, "idempotency_key": key});
    let r = api
        .post(&api.service, refunds, refund("5.00", "r1", "t1"))
        .await;
    assert_eq!(r.expect(201, "")["entry"]["ref"], t["entry"]["entry_id"]);
    api.post(&api.service, refunds, refund("1", "r2", "b1"))
        .await
        .expect(409, "not_refundable");
    api.post(&api.service, refunds, refund("6", "r3", "t1"))
        .await
        .expect(409, "refund_exceeds_top_up");
    api.post(&api.service, refunds, refund("1", "r4", "nope"))
        .await
        .expect(404, "top_up_not_found");

    let a = api.get_account("acct-1").await;
    assert_eq!(a["balance_micros"], 6_747_000);
    assert_eq!(a["balance"], "6.747");
    assert_eq!(a["total_credited_micros"], 12_000_000);
    assert_eq!(a["total_spent_micros"], 253_000);

    api.get(&api.service, "/v1/accounts/nobody")
        .await
        .expect(404, "account_not_found");
    api.post(
        &api.service,
        "/v1/accounts/nobody/top-ups",
        json!({"amount": "1", "idempotency_key": "x"}),
    )
    .await
    .expect(404, "account_not_found");
    // 422 unknown_meter comes before 404 account_not_found.
    let usage = json!({"usage": {"meter": "quantum", "seconds": 1}, "idempotency_key": "x"});
    let r = api
        .post(&api.service, "/v1/accounts/nobody/debits", usage)
        .await;
    r.expect(422, "unknown_meter");
    assert_eq!(
        r.message(),
        "unknown meter \"quantum\"; the rate card's meters: linux-large, linux-small"
    );
    api.assert_clean().await;
    api.stop().await;
});

backend_test!(
    a_credit_past_two_to_the_53_is_out_of_range,
    |b| async move {
        let Some(api) = api(b).await else { return };
        api.account("rich", "free").await;
        for i in 0..9 {
            api.top_up("rich", "1000000000", &format!("t{i}")).await;
        }
        api.post(
            &api.service,
            "/v1/accounts/rich/top-ups",
            json!({"amount": "1000000000", "idempotency_key": "t9"}),
        )
        .await
        .expect(422, "amount_out_of_range");
        assert_eq!(
            api.get_account("rich").await["balance_micros"],
            9_000_000_000_000_000i64
        );
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(
    debits_dip_into_the_buffer_then_suspend_and_a_credit_unsuspends,
    |b| async move {
        let Some(api) = api(b).await else { return };
        api.account("s1", "free").await;
        api.top_up("s1", "1.00", "t1").await;
        let debit = |amount: &str, key: &str| json!({"amount": amount, "idempotency_key": key});
        let path = "/v1/accounts/s1/debits";
        let r = api.post(&api.service, path, debit("1.50", "d1")).await;
        let account = &r.expect(201, "")["account"];
        assert_eq!(account["balance"], "-0.50");
        assert!(account["suspended_at"].is_string());
        api.post(&api.service, path, debit("0.60", "d2"))
            .await
            .expect(402, "insufficient_funds");
        assert_eq!(api.get_account("s1").await["balance_micros"], -500_000);
        api.post(&api.service, path, debit("0.50", "d3"))
            .await
            .expect(201, "");
        api.submit("s1", "image", "j1")
            .await
            .expect(403, "account_suspended");
        let t = api.top_up("s1", "2.00", "t2").await;
        assert_eq!(t["account"]["suspended_at"], Value::Null);
        assert_eq!(t["account"]["balance"], "1.00");
        api.submit("s1", "image", "j1").await.expect(201, "");
        let events = api.events("account_id=s1", 2).await;
        let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(
            types,
            ["account.suspended", "account.unsuspended"],
            "each once"
        );
        let only = api
            .events("account_id=s1&type=account.unsuspended", 1)
            .await;
        assert_eq!(only.len(), 1);
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(
    blocked_accounts_are_refused_jobs_but_billed,
    |b| async move {
        let Some(api) = api(b).await else { return };
        api.account("bl", "free").await;
        api.top_up("bl", "1.00", "t1").await;
        api.submit("bl", "image", "j1").await.expect(201, "");
        api.post(&api.service, "/v1/accounts/bl/block", json!({}))
            .await
            .expect(403, "forbidden");
        let r = api
            .post(&api.admin, "/v1/accounts/bl/block", json!({}))
            .await;
        assert!(r.expect(200, "")["blocked_at"].is_string());
        api.submit("bl", "image", "j2")
            .await
            .expect(403, "account_blocked");
        let lease = json!({"worker_id": "w", "wait_ms": 0});
        let r = api
            .post(&api.worker, "/v1/lanes/image/lease", lease.clone())
            .await;
        assert_eq!(
            r.status, 204,
            "a blocked account's queued job is not leased"
        );
        let d = json!({"amount": "0.10", "idempotency_key": "d1"});
        api.post(&api.service, "/v1/accounts/bl/debits", d)
            .await
            .expect(201, "");
        let r = api
            .post(&api.admin, "/v1/accounts/bl/unblock", json!({}))
            .await;
        assert_eq!(r.expect(200, "")["blocked_at"], Value::Null);
        api.post(&api.worker, "/v1/lanes/image/lease", lease)
            .await
            .expect(200, "");
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(submit_lease_heartbeat_complete, |b| async move {
    let Some(api) = api(b).await else { return };
    api.account("u1", "free").await;
    let r = api.submit("u1", "image", "click-1").await;
    let job = r.expect(201, "").clone();
    assert_eq!(job["status"], "queued");
    assert_eq!(job["lane"], "image");
    assert_eq!(
        job["hold"],
        json!([{"pocket": "daily_images", "amount": 1}])
    );
    let replay = api.submit("u1", "image", "click-1").await;
    assert_eq!(replay.expect(200, "")["job_id"], job["job_id"]);
    let id = job["job_id"].as_str().unwrap();

    let (leased, token) = api.lease("image", 60).await;
    assert_eq!(leased, id);
    let beat = api
        .post(
            &api.worker,
            &format!("/v1/jobs/{id}/heartbeat"),
            json!({"lease_token": token}),
        )
        .await;
    assert_eq!(beat.expect(200, "")["cancel_requested"], false);
    api.post(
        &api.worker,
        &format!("/v1/jobs/{id}/heartbeat"),
        json!({"lease_token": "wrong"}),
    )
    .await
    .expect(409, "lease_lost");
    let complete = format!("/v1/jobs/{id}/complete");
    let done = api
        .post(&api.worker, &complete, json!({"lease_token": token}))
        .await;
    let done = done.expect(200, "").clone();
    assert_eq!(done["status"], "succeeded");
    assert_eq!(
        done["charged"],
        json!([{"pocket": "daily_images", "amount": 1}])
    );
    let again = api
        .post(&api.worker, &complete, json!({"lease_token": token}))
        .await;
    assert_eq!(again.expect(200, "")["charged"], done["charged"]);
    api.post(
        &api.worker,
        &format!("/v1/jobs/{id}/fail"),
        json!({"lease_token": token}),
    )
    .await
    .expect(409, "already_finished");
    for key in [&api.service, &api.worker, &api.admin] {
        let r = api.get(key, &format!("/v1/jobs/{id}")).await;
        assert_eq!(r.expect(200, "")["status"], "succeeded");
    }
    api.get(&api.service, "/v1/jobs/no-such-job")
        .await
        .expect(404, "job_not_found");
    let images = &api.get_account("u1").await["allowances"]["daily_images"];
    assert_eq!(
        (images["remaining"].clone(), images["held"].clone()),
        (json!(2), json!(0))
    );
    api.assert_clean().await;
    api.stop().await;
});

backend_test!(fail_charges_nothing, |b| async move {
    let Some(api) = api(b).await else { return };
    api.account("u2", "free").await;
    api.top_up("u2", "1.00", "t").await;
    let job = api
        .submit("u2", "video", "v1")
        .await
        .expect(201, "")
        .clone();
    assert_eq!(
        job["hold"],
        json!([{"pocket": "money", "amount": "0.50", "amount_micros": 500_000}])
    );
    assert_eq!(api.get_account("u2").await["held_micros"], 500_000);
    let (id, token) = api.lease("video", 60).await;
    let r = api
        .post(
            &api.worker,
            &format!("/v1/jobs/{id}/fail"),
            json!({"lease_token": token, "reason": "provider 500"}),
        )
        .await;
    let failed = r.expect(200, "");
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["failure_reason"], "provider 500");
    assert_eq!(failed["charged"], json!([]));
    let a = api.get_account("u2").await;
    assert_eq!(
        (a["balance_micros"].clone(), a["held_micros"].clone()),
        (json!(1_000_000), json!(0))
    );
    api.assert_clean().await;
    api.stop().await;
});

backend_test!(cancel_queued_running_and_cooperative, |b| async move {
    let Some(api) = api(b).await else { return };
    api.account("c1", "free").await;
    api.top_up("c1", "2.00", "t").await;
    // Queued: canceled at once, hold released; a repeat is 200.
    let job = api
        .submit("c1", "image", "j1")
        .await
        .expect(201, "")
        .clone();
    let cancel = format!("/v1/jobs/{}/cancel", job["job_id"].as_str().unwrap());
    let r = api.post(&api.service, &cancel, json!({})).await;
    assert_eq!(r.expect(200, "")["status"], "canceled");
    assert_eq!(r.body["charged"], json!([]));
    api.post(&api.service, &cancel, json!({}))
        .await
        .expect(200, "");
    let r = api
        .post(
            &api.worker,
            "/v1/lanes/image/lease",
            json!({"worker_id": "w"}),
        )
        .await;
    assert_eq!(r.status, 204);
    assert_eq!(
        api.get_account("c1").await["allowances"]["daily_images"]["held"],
        0
    );

    // Running, kind that refuses: already_started; after it finishes: already_finished.
    api.submit("c1", "image", "j2").await.expect(201, "");
    let (id, token) = api.lease("image", 60).await;
    let cancel = format!("/v1/jobs/{id}/cancel");
    api.post(&api.service, &cancel, json!({}))
        .await
        .expect(409, "already_started");
    api.post(
        &api.worker,
        &format!("/v1/jobs/{id}/complete"),
        json!({"lease_token": token}),
    )
    .await
    .expect(200, "");
    api.post(&api.service, &cancel, json!({}))
        .await
        .expect(409, "already_finished");

    // Running, cooperative kind: 202, the worker sees it and captures part of the hold.
    api.submit("c1", "video", "j3").await.expect(201, "");
    let (id, token) = api.lease("video", 60).await;
    let r = api
        .post(&api.service, &format!("/v1/jobs/{id}/cancel"), json!({}))
        .await;
    assert_eq!(r.expect(202, "")["cancel_requested"], true);
    let beat = api
        .post(
            &api.worker,
            &format!("/v1/jobs/{id}/heartbeat"),
            json!({"lease_token": token}),
        )
        .await;
    assert_eq!(beat.expect(200, "")["cancel_requested"], true);
    let capture = json!({"lease_token": token, "capture": [{"pocket": "money", "amount": "0.10"}]});
    let r = api
        .post(&api.worker, &format!("/v1/jobs/{id}/complete"), capture)
        .await;
    let done = r.expect(200, "");
    assert_eq!(done["status"], "canceled");
    assert_eq!(
        done["charged"],
        json!([{"pocket": "money", "amount": "0.10", "amount_micros": 100_000}])
    );
    let a = api.get_account("c1").await;
    assert_eq!(
        (a["balance"].clone(), a["held_micros"].clone()),
        (json!("1.90"), json!(0))
    );
    api.assert_clean().await;
    api.stop().await;
});

backend_test!(
    a_partial_capture_is_checked_against_the_hold,
    |b| async move {
        let Some(api) = api(b).await else { return };
        api.account("pc", "free").await;
        api.top_up("pc", "1.00", "t").await;
        api.submit("pc", "video", "v").await.expect(201, "");
        let (id, token) = api.lease("video", 60).await;
        let complete = format!("/v1/jobs/{id}/complete");
        for capture in [
            json!([{"pocket": "money", "amount": "0.51"}]),
            json!([{"pocket": "daily_images", "amount": 1}]),
            json!([{"pocket": "money", "amount": 0.1}]),
            json!([{"pocket": "money", "amount": "-0.1"}]),
        ] {
            let body = json!({"lease_token": token, "capture": capture});
            api.post(&api.worker, &complete, body)
                .await
                .expect(422, "invalid_request");
        }
        let body = json!({"lease_token": token, "capture": [{"pocket": "money", "amount": "0"}]});
        let r = api.post(&api.worker, &complete, body).await;
        assert_eq!(r.expect(200, "")["status"], "succeeded");
        assert_eq!(api.get_account("pc").await["balance_micros"], 1_000_000);
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(
    the_sweeper_releases_an_expired_lease_and_a_late_complete_is_refused,
    |b| async move {
        let Some(api) = api(b).await else { return };
        api.account("sw", "free").await;
        api.submit("sw", "image", "j").await.expect(201, "");
        let (id, token) = api.lease("image", 1).await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let r = api.post(&api.admin, "/v1/admin/sweep", json!({})).await;
        assert_eq!(r.expect(200, "")["processed"], 1);
        let job = api.get(&api.service, &format!("/v1/jobs/{id}")).await;
        assert_eq!(job.expect(200, "")["status"], "expired");
        let body = json!({"lease_token": token});
        api.post(
            &api.worker,
            &format!("/v1/jobs/{id}/complete"),
            body.clone(),
        )
        .await
        .expect(409, "lease_lost");
        api.post(&api.worker, &format!("/v1/jobs/{id}/heartbeat"), body)
            .await
            .expect(409, "lease_lost");
        let images = &api.get_account("sw").await["allowances"]["daily_images"];
        assert_eq!(
            (images["remaining"].clone(), images["held"].clone()),
            (json!(3), json!(0))
        );
        let expired = api.events("type=job.expired&account_id=sw", 1).await;
        assert_eq!(expired[0]["job_id"], id.as_str());
        api.assert_clean().await;
        api.stop().await;
    }
);

/// Follows `next` from the start with pages of `limit`, collecting the ids under `items`.
async fn walk(api: &Api, path: &str, items: &str, limit: usize) -> Vec<String> {
    let sep = if path.contains('?') { '&' } else { '?' };
    let mut ids = vec![];
    let mut after: Option<String> = None;
    loop {
        let url = match &after {
            Some(a) => format!("{path}{sep}limit={limit}&after={a}"),
            None => format!("{path}{sep}limit={limit}"),
        };
        let page = api.get(&api.service, &url).await.expect(200, "").clone();
        let rows = page[items].as_array().unwrap();
        assert!(rows.len() <= limit);
        let id_field = if items == "events" {
            "event_id"
        } else {
            "entry_id"
        };
        if rows.is_empty() {
            assert_eq!(
                page["next"].as_str().map(str::to_owned),
                after,
                "empty page keeps the cursor"
            );
            return ids;
        }
        ids.extend(
            rows.iter()
                .map(|r| r[id_field].as_str().unwrap().to_owned()),
        );
        assert_eq!(page["next"].as_str(), ids.last().map(String::as_str));
        after = page["next"].as_str().map(str::to_owned);
    }
}

backend_test!(events_and_ledger_by_cursor, |b| async move {
    let Some(api) = api(b).await else { return };
    api.account("ev", "free").await;
    api.top_up("ev", "0.10", "t").await;
    for i in 0..3 {
        api.submit("ev", "text", &format!("j{i}"))
            .await
            .expect(201, "");
        let (id, token) = api.lease("text", 60).await;
        let verb = if i == 1 { "fail" } else { "complete" };
        api.post(
            &api.worker,
            &format!("/v1/jobs/{id}/{verb}"),
            json!({"lease_token": token}),
        )
        .await
        .expect(200, "");
    }
    api.post(
        &api.service,
        "/v1/accounts/ev/debits",
        json!({"amount": "0.50", "idempotency_key": "d"}),
    )
    .await
    .expect(201, "");

    let all = api.events("account_id=ev&limit=1000", 4).await;
    let types: Vec<&str> = all.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "job.succeeded",
            "job.failed",
            "job.succeeded",
            "account.suspended"
        ]
    );
    assert!(all[0]["created_at"].as_str().unwrap().ends_with('Z'));
    let ids: Vec<String> = all
        .iter()
        .map(|e| e["event_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        walk(&api, "/v1/events?account_id=ev", "events", 1).await,
        ids
    );
    assert_eq!(
        walk(&api, "/v1/events?account_id=ev", "events", 3).await,
        ids
    );
    let none = api.get(&api.service, "/v1/events?account_id=nobody").await;
    assert_eq!(none.expect(200, "")["next"], Value::Null);

    let ledger = api
        .get(&api.service, "/v1/accounts/ev/ledger?limit=1000")
        .await;
    let entries = ledger.expect(200, "")["entries"]
        .as_array()
        .unwrap()
        .clone();
    // Two refills at creation, the top-up, two message captures, the debit.
    let kinds: Vec<&str> = entries
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["refill", "refill", "top_up", "capture", "capture", "debit"]
    );
    assert_eq!(entries[3]["delta"], -1, "an allowance delta is an integer");
    assert!(entries[3].get("delta_micros").is_none());
    assert_eq!(entries[5]["amount_after"], "-0.40");
    let ids: Vec<String> = entries
        .iter()
        .map(|e| e["entry_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        walk(&api, "/v1/accounts/ev/ledger", "entries", 2).await,
        ids
    );
    api.assert_clean().await;
    api.stop().await;
});

backend_test!(a_waiting_lease_gets_a_job_submitted_later, |b| async move {
    let Some(api) = api(b).await else { return };
    api.account("lp", "free").await;
    let r = api
        .post(
            &api.worker,
            "/v1/lanes/text/lease",
            json!({"worker_id": "w", "wait_ms": 200}),
        )
        .await;
    assert_eq!(r.status, 204, "nothing to lease: 204 after the wait");
    let waiting = {
        let client = api.client.clone();
        let (url, key) = (api.url("/v1/lanes/text/lease"), api.worker.clone());
        tokio::spawn(async move {
            let r = client
                .post(url)
                .bearer_auth(key)
                .json(&json!({"worker_id": "w", "wait_ms": 20_000}))
                .send()
                .await
                .unwrap();
            (
                r.status().as_u16(),
                r.json::<Value>().await.unwrap_or(Value::Null),
            )
        })
    };
    let job = api.submit("lp", "text", "j").await.expect(201, "").clone();
    let (status, body) = waiting.await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(body["job"]["job_id"], job["job_id"]);
    assert_eq!(body["job"]["status"], "in_progress");
    api.stop().await;
});

backend_test!(
    a_waiting_lease_finds_a_job_another_process_queued,
    |b| async move {
        let Some(api) = api(b).await else { return };
        api.account("other", "free").await;
        // A second engine on the same database: its submits wake nobody in this server.
        let other = holdfast::Engine::new(api.db.store(holdfast::RateCard::builtin()).await);
        let waiting = {
            let client = api.client.clone();
            let (url, key) = (api.url("/v1/lanes/text/lease"), api.worker.clone());
            tokio::spawn(async move {
                let r = client
                    .post(url)
                    .bearer_auth(key)
                    .json(&json!({"worker_id": "w", "wait_ms": 20_000}))
                    .send()
                    .await
                    .unwrap();
                (
                    r.status().as_u16(),
                    r.json::<Value>().await.unwrap_or(Value::Null),
                )
            })
        };
        let submitted = other
            .submit(&holdfast::Submit {
                account: acct("other"),
                kind: "text".into(),
                payload: Some(json!({"prompt": "hi"})),
                key: key("k"),
            })
            .await
            .unwrap();
        let (status, body) = waiting.await.unwrap();
        assert_eq!(status, 200);
        assert_eq!(body["job"]["job_id"], submitted.job.job_id.as_str());
        assert_eq!(body["job"]["payload"], json!({"prompt": "hi"}));
        api.stop().await;
    }
);

backend_test!(impatient_finger_twenty_submits_one_job, |b| async move {
    let Some(api) = api(b).await else { return };
    api.account("finger", "free").await;
    let replies = futures::stream::iter(0..20)
        .map(|i| {
            let api = &api;
            async move { api.submit("finger", "image", &format!("click-{i}")).await }
        })
        .buffer_unordered(20)
        .collect::<Vec<_>>()
        .await;
    let created = replies.iter().filter(|r| r.status == 201).count();
    let busy = replies
        .iter()
        .filter(|r| r.status == 409 && r.code() == "busy")
        .count();
    assert_eq!((created, busy), (1, 19), "{replies:#?}");
    let a = api.get_account("finger").await;
    assert_eq!(a["open_jobs"], 1);
    assert_eq!(a["allowances"]["daily_images"]["held"], 1);
    api.assert_clean().await;
    api.stop().await;
});

backend_test!(
    hundred_debits_over_fifty_connections_stop_at_the_buffer,
    |b| async move {
        let Some(api) = api(b).await else { return };
        api.account("ci", "free").await;
        api.top_up("ci", "1.00", "t").await;
        let replies = futures::stream::iter(0..100)
        .map(|i| {
            let api = &api;
            async move {
                let body = json!({"amount": "0.10", "idempotency_key": format!("d{i}"), "job_ref": "run-1"});
                api.post(&api.service, "/v1/accounts/ci/debits", body).await
            }
        })
        .buffer_unordered(50)
        .collect::<Vec<_>>()
        .await;
        let ok = replies.iter().filter(|r| r.status == 201).count();
        let poor = replies
            .iter()
            .filter(|r| r.status == 402 && r.code() == "insufficient_funds")
            .count();
        assert_eq!((ok, poor), (20, 80));
        let a = api.get_account("ci").await;
        assert_eq!(a["balance_micros"], -1_000_000);
        assert!(a["suspended_at"].is_string());
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(
    concurrent_duplicates_wait_for_the_first_and_get_200,
    |b| async move {
        let Some(api) = api(b).await else { return };
        api.account("dup", "free").await;
        let replies = futures::stream::iter(0..20)
            .map(|_| {
                let api = &api;
                async move {
                    let body = json!({"amount": "5.00", "idempotency_key": "same"});
                    api.post(&api.service, "/v1/accounts/dup/top-ups", body)
                        .await
                }
            })
            .buffer_unordered(20)
            .collect::<Vec<_>>()
            .await;
        let created = replies.iter().filter(|r| r.status == 201).count();
        let replayed = replies.iter().filter(|r| r.status == 200).count();
        assert_eq!((created, replayed), (1, 19), "{replies:#?}");
        let entries: std::collections::BTreeSet<String> = replies
            .iter()
            .map(|r| r.body["entry"]["entry_id"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(entries.len(), 1, "one ledger entry for one key");
        assert_eq!(api.get_account("dup").await["balance_micros"], 5_000_000);
        api.assert_clean().await;
        api.stop().await;
    }
);
