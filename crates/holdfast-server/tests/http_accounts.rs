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

backend_test!(
    an_auto_recharge_is_set_kept_and_removed_by_put,
    |b| async move {
        let Some(api) = api(b).await else { return };
        let path = "/v1/accounts/r1";
        let body = json!({ "plan": "free", "recharge": { "below": "5.00", "amount": "20.00" } });
        let created = api
            .put(&api.service, path, body)
            .await
            .expect(201, "")
            .clone();
        assert_eq!(
            created["recharge"],
            json!({ "below": "5.00", "below_micros": 5_000_000, "amount": "20.00", "amount_micros": 20_000_000 })
        );
        // A PUT without the field keeps it (clients that do not know it change nothing).
        let kept = api
            .put(&api.service, path, json!({ "plan": "premium" }))
            .await
            .expect(200, "")
            .clone();
        assert_eq!(kept["recharge"]["amount"], "20.00");
        for (bad, field) in [
            (
                json!({ "below": "-1", "amount": "20.00" }),
                "recharge.below",
            ),
            (json!({ "below": "5.00", "amount": "0" }), "recharge.amount"),
            (json!({ "below": "5.00" }), "recharge"),
            (
                json!({ "below": "5.00", "amount": "1", "every": "day" }),
                "recharge",
            ),
            (json!(["5.00", "1"]), "recharge"),
        ] {
            let r = api
                .put(
                    &api.service,
                    path,
                    json!({ "plan": "free", "recharge": bad }),
                )
                .await;
            assert!(
                r.expect(422, "invalid_request").to_string().contains(field),
                "{}",
                r.body
            );
        }
        assert_eq!(
            api.get_account("r1").await["plan"],
            "premium",
            "a refused PUT changes nothing"
        );
        let removed = api
            .put(
                &api.service,
                path,
                json!({ "plan": "free", "recharge": null }),
            )
            .await;
        assert_eq!(removed.expect(200, "")["recharge"], json!(null));
        // Below the line: one request, with the key to top up with.
        let set = json!({ "plan": "free", "recharge": { "below": "1.00", "amount": "10.00" } });
        api.put(&api.service, path, set).await.expect(200, "");
        api.top_up("r1", "1.50", "t1").await;
        let debit = json!({ "amount": "0.75", "idempotency_key": "d1" });
        api.post(&api.service, "/v1/accounts/r1/debits", debit)
            .await
            .expect(201, "");
        let asked = api
            .events("type=account.recharge_requested&account_id=r1", 1)
            .await;
        assert_eq!(asked.len(), 1);
        let key = asked[0]["data"]["idempotency_key"]
            .as_str()
            .unwrap()
            .to_owned();
        let top_up = json!({ "amount": asked[0]["data"]["amount"], "idempotency_key": key });
        let r = api
            .post(&api.service, "/v1/accounts/r1/top-ups", top_up.clone())
            .await;
        r.expect(201, "");
        api.post(&api.service, "/v1/accounts/r1/top-ups", top_up)
            .await
            .expect(200, "");
        assert_eq!(api.get_account("r1").await["balance"], "10.75");
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(
    a_spend_limit_is_set_shown_enforced_and_removed_by_put,
    |b| async move {
        let Some(api) = api(b).await else { return };
        let path = "/v1/accounts/s1";
        let rule = json!({ "limit": "2.00", "period": "day", "alerts": ["1.00", "100%"] });
        let created = api
            .put(&api.service, path, json!({ "plan": "free", "spend": rule }))
            .await
            .expect(201, "")
            .clone();
        let spend = &created["spend"];
        assert_eq!(
            (
                &spend["limit"],
                &spend["period"],
                &spend["alerts"],
                &spend["own"]
            ),
            (
                &json!("2.00"),
                &json!("day"),
                &json!(["1.00", "100%"]),
                &json!(true)
            )
        );
        assert_eq!(
            (&spend["spent"], &spend["left_micros"], &spend["timezone"]),
            (&json!("0.00"), &json!(2_000_000), &json!("UTC"))
        );
        for (bad, field) in [
            (
                json!({ "limit": "1.00", "timezone": "Mars/Olympus" }),
                "spend.timezone",
            ),
            (json!({ "limit": "0" }), "spend.limit"),
            (json!({ "limit": "1.00", "period": "week" }), "spend.period"),
            (
                json!({ "limit": "1.00", "alerts": ["80 %"] }),
                "spend.alerts[0]",
            ),
            (json!({ "alerts": ["80%"] }), "spend.alerts"),
            (json!({ "limit": "1.00", "every": "day" }), "spend"),
            (json!([null, null]), "spend"),
        ] {
            let r = api
                .put(&api.service, path, json!({ "plan": "free", "spend": bad }))
                .await;
            assert!(
                r.expect(422, "invalid_request").to_string().contains(field),
                "{}",
                r.body
            );
        }
        api.top_up("s1", "10.00", "t1").await;
        let debit = |amount: &str, k: &str| json!({ "amount": amount, "idempotency_key": k });
        let debits = "/v1/accounts/s1/debits";
        api.post(&api.service, debits, debit("2.00", "d1"))
            .await
            .expect(201, "");
        api.post(&api.service, debits, debit("0.01", "d2"))
            .await
            .expect(402, "spend_limit_reached");
        api.submit("s1", "video", "v1")
            .await
            .expect(402, "spend_limit_reached");
        let told = api
            .events("type=account.spend_threshold&account_id=s1", 2)
            .await;
        let lines: Vec<&Value> = told.iter().map(|e| &e["data"]["threshold"]).collect();
        assert_eq!(lines, [&json!("1.00"), &json!("2.00")]);
        let shown = api.get_account("s1").await;
        assert_eq!(
            (&shown["spend"]["spent"], &shown["spend"]["left"]),
            (&json!("2.00"), &json!("0.00"))
        );
        // Setting it was the caller's act, recorded with the key that did it.
        let set = api
            .events("type=operator.spend_rule_changed&account_id=s1", 1)
            .await;
        assert_eq!(set[0]["data"]["to"]["limit"], "2.00");
        assert!(
            set[0]["actor"].as_str().unwrap().starts_with("key:"),
            "{}",
            set[0]
        );
        // Absent keeps it; null removes it (the free plan has none).
        let kept = api.put(&api.service, path, json!({ "plan": "free" })).await;
        assert_eq!(kept.expect(200, "")["spend"]["limit"], "2.00");
        // Another zone's day: its bounds are that zone's midnights.
        let tokyo = json!({ "limit": "2.00", "period": "day", "timezone": "Asia/Tokyo" });
        let zoned = api
            .put(
                &api.service,
                path,
                json!({ "plan": "free", "spend": tokyo }),
            )
            .await;
        let zoned = &zoned.expect(200, "")["spend"];
        assert_eq!(zoned["timezone"], "Asia/Tokyo");
        let start = zoned["period_start"].as_str().unwrap();
        assert!(start.ends_with("T15:00:00Z"), "{start}");
        let removed = api
            .put(&api.service, path, json!({ "plan": "free", "spend": null }))
            .await;
        assert_eq!(removed.expect(200, "")["spend"], json!(null));
        api.post(&api.service, debits, debit("0.01", "d2"))
            .await
            .expect(201, "");
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(
    credit_blocks_are_made_by_top_ups_on_terms_drawn_in_order_and_listed,
    |b| async move {
        let Some(api) = api(b).await else { return };
        api.put(&api.service, "/v1/accounts/c1", json!({ "plan": "free" }))
            .await
            .expect(201, "");
        let top_ups = "/v1/accounts/c1/top-ups";
        api.top_up("c1", "1.00", "t1").await;
        let promo = json!({
            "amount": "2.00", "idempotency_key": "p1", "kind": "bonus",
            "category": "promotional", "priority": 10, "expires_at": "2099-01-01T00:00:00Z",
        });
        let made = api.post(&api.service, top_ups, promo.clone()).await;
        let made = made.expect(201, "").clone();
        let block_id = made["entry"]["entry_id"].clone();
        let line = &made["entry"]["blocks"][0];
        assert_eq!(
            (&line["block_id"], &line["amount"]),
            (&block_id, &json!("2.00"))
        );
        let shown = &made["account"]["blocks"][0];
        assert_eq!(
            (
                &shown["category"],
                &shown["priority"],
                &shown["expires_at"],
                &shown["expired"]
            ),
            (
                &json!("promotional"),
                &json!(10),
                &json!("2099-01-01T00:00:00Z"),
                &json!(false)
            )
        );
        // The same key and terms replay; other terms under it are refused.
        api.post(&api.service, top_ups, promo.clone())
            .await
            .expect(200, "");
        let mut other = promo.clone();
        other["priority"] = json!(11);
        api.post(&api.service, top_ups, other)
            .await
            .expect(409, "idempotency_mismatch");
        for (field, bad) in [
            ("priority", json!(101)),
            ("priority", json!(1.5)),
            ("category", json!("free")),
            ("expires_at", json!("tomorrow")),
        ] {
            let mut body = json!({ "amount": "1.00", "idempotency_key": "bad" });
            body[field] = bad;
            let r = api.post(&api.service, top_ups, body).await;
            assert!(
                r.expect(422, "invalid_request").to_string().contains(field),
                "{}",
                r.body
            );
        }
        // A debit draws the block before general money.
        let debit = json!({ "amount": "2.50", "idempotency_key": "d1" });
        let d = api
            .post(&api.service, "/v1/accounts/c1/debits", debit)
            .await;
        let lines = d.expect(201, "")["entry"]["blocks"].clone();
        assert_eq!(
            lines,
            json!([
                { "block_id": block_id, "amount": "2.00", "amount_micros": 2_000_000 },
                { "block_id": null, "amount": "0.50", "amount_micros": 500_000 },
            ])
        );
        let blocks = api.get(&api.service, "/v1/accounts/c1/blocks").await;
        let blocks = blocks.expect(200, "");
        assert_eq!(
            (&blocks["general"], &blocks["blocks"]),
            (&json!("0.50"), &json!([]))
        );
        api.get(&api.service, "/v1/accounts/nobody/blocks")
            .await
            .expect(404, "account_not_found");
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(
    the_expiry_pass_tells_credit_expiring_and_writes_off_expired_blocks_over_http,
    |b| async move {
        let Some(api) = api(b).await else { return };
        api.put(&api.service, "/v1/accounts/c1", json!({ "plan": "free" }))
            .await
            .expect(201, "");
        let soon = time::OffsetDateTime::now_utc() + time::Duration::hours(1);
        let soon = soon
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap();
        let top_ups = "/v1/accounts/c1/top-ups";
        for (k, expires_at) in [("soon", soon.as_str()), ("past", "2001-01-01T00:00:00Z")] {
            let body = json!({ "amount": "1.00", "idempotency_key": k, "expires_at": expires_at });
            api.post(&api.service, top_ups, body).await.expect(201, "");
        }
        let pass = api.post(&api.admin, "/v1/admin/expire", json!({})).await;
        assert_eq!(pass.expect(200, "")["processed"], 2);
        let told = api.get(&api.admin, "/v1/events?type=credit.expiring").await;
        let told = told.expect(200, "")["events"].clone();
        assert_eq!(told.as_array().unwrap().len(), 1, "{told}");
        assert_eq!(told[0]["data"]["remaining"], "1.00");
        let gone = api.get(&api.admin, "/v1/events?type=credit.expired").await;
        let gone = gone.expect(200, "")["events"].clone();
        assert_eq!(gone[0]["data"]["amount"], "1.00", "{gone}");
        // Told once, written off once.
        let again = api.post(&api.admin, "/v1/admin/expire", json!({})).await;
        assert_eq!(again.expect(200, "")["processed"], 0);
        api.post(&api.service, "/v1/admin/expire", json!({}))
            .await
            .expect(403, "forbidden");
        api.assert_clean().await;
        api.stop().await;
    }
);
