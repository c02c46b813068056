//! Payments in from Stripe on both backends: events shaped as Stripe sends them and signed
//! as Stripe signs them (the Python client's suite checks the same signatures with the
//! `stripe` package), replayed, reordered and raced; the books audited after each.

mod http_support;

use holdfast::backend_test;
use holdfast::testing::{Backend, card_text_with};
use http_support::*;
use serde_json::{Value, json};

const SECRET: &str = "whsec_test_secret_of_this_suite";
const PATH: &str = "/v1/integrations/stripe";

async fn stripe_api(b: Backend) -> Option<Api> {
    let text = card_text_with(&[]) + &format!("\n[payments.stripe]\nsecret = \"{SECRET}\"\n");
    api_with(b, holdfast::RateCard::parse(&text).unwrap()).await
}

fn now() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    i64::try_from(since.unwrap().as_secs()).unwrap()
}

fn event(kind: &str, object: Value) -> Value {
    json!({
        "id": format!("evt_{}", uuid_like()),
        "object": "event",
        "api_version": "2024-06-20",
        "type": kind,
        "livemode": false,
        "data": { "object": object },
    })
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(1);
    format!("{:016x}", N.fetch_add(1, Ordering::Relaxed))
}

fn checkout(payment: &str, account: &str, cents: i64) -> Value {
    event(
        "checkout.session.completed",
        json!({
            "id": format!("cs_{payment}"), "object": "checkout.session", "mode": "payment",
            "payment_status": "paid", "status": "complete", "amount_total": cents,
            "currency": "usd", "payment_intent": payment, "customer": null,
            "metadata": { "account_id": account },
        }),
    )
}

fn intent(payment: &str, account: Option<&str>, customer: Option<&str>, cents: i64) -> Value {
    let metadata = account.map_or(json!({}), |a| json!({ "account_id": a }));
    event(
        "payment_intent.succeeded",
        json!({
            "id": payment, "object": "payment_intent", "status": "succeeded",
            "amount": cents, "amount_received": cents, "currency": "usd",
            "customer": customer, "metadata": metadata,
        }),
    )
}

fn refunded(payment: &str, cents: i64, refunded_cents: i64) -> Value {
    event(
        "charge.refunded",
        json!({
            "id": format!("ch_{payment}"), "object": "charge", "amount": cents,
            "amount_refunded": refunded_cents, "currency": "usd", "payment_intent": payment,
            "refunded": refunded_cents == cents, "metadata": {},
        }),
    )
}

fn dispute(kind: &str, id: &str, payment: &str, cents: i64, status: &str) -> Value {
    event(
        kind,
        json!({
            "id": id, "object": "dispute", "amount": cents, "currency": "usd",
            "charge": format!("ch_{payment}"), "payment_intent": payment,
            "reason": "fraudulent", "status": status,
        }),
    )
}

/// The `Stripe-Signature` header for `body` sent at `t` under `secret`.
fn signed(secret: &str, t: i64, body: &str) -> String {
    holdfast::webhooks::signature_header(secret.as_bytes(), t, body.as_bytes())
}

impl Api {
    async fn deliver_raw(&self, body: &str, signature: Option<String>) -> Reply {
        let mut req = self
            .client
            .post(self.url(PATH))
            .header("content-type", "application/json")
            .body(body.to_owned());
        if let Some(signature) = signature {
            req = req.header("Stripe-Signature", signature);
        }
        self.send(req).await
    }

    /// Delivers an event as Stripe does: the body, signed now with the suite's secret.
    async fn deliver(&self, event: &Value) -> Reply {
        let body = event.to_string();
        self.deliver_raw(&body, Some(signed(SECRET, now(), &body)))
            .await
    }

    async fn balance(&self, account: &str) -> i64 {
        int(&self.get_account(account).await, "balance_micros")
    }
}

backend_test!(
    a_payment_sent_twice_and_through_both_events_credits_once,
    |b| async move {
        let Some(api) = stripe_api(b).await else {
            return;
        };
        api.account("buyer", "free").await;
        let first = api.deliver(&checkout("pi_one", "buyer", 2_000)).await;
        let body = first.expect(200, "");
        assert_eq!(body["outcome"], "credited", "{body}");
        assert_eq!(body["account_id"], "buyer");
        let entry = body["entry_id"].clone();
        for again in [
            checkout("pi_one", "buyer", 2_000),
            intent("pi_one", Some("buyer"), None, 2_000),
        ] {
            let r = api.deliver(&again).await;
            assert_eq!(r.expect(200, "")["outcome"], "already_applied");
            assert_eq!(r.body["entry_id"], entry, "the same top-up answers");
        }
        assert_eq!(api.balance("buyer").await, 20_000_000);
        let ledger = api.get(&api.service, "/v1/accounts/buyer/ledger").await;
        let entries = ledger.expect(200, "")["entries"]
            .as_array()
            .unwrap()
            .clone();
        let top_ups: Vec<&Value> = entries.iter().filter(|e| e["kind"] == "top_up").collect();
        assert_eq!(top_ups.len(), 1, "{entries:?}");
        assert_eq!(top_ups[0]["actor"], "integration:stripe");
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(
    a_request_stripe_did_not_sign_is_refused_and_writes_nothing,
    |b| async move {
        let Some(api) = stripe_api(b).await else {
            return;
        };
        api.account("buyer", "free").await;
        let body = checkout("pi_forged", "buyer", 5_000).to_string();
        let tampered = body.replace("5000", "9000");
        let t = now();
        let header = signed(SECRET, t, &body);
        let refused = [
            (None, body.clone()),
            (Some("garbage".to_owned()), body.clone()),
            (Some(signed("whsec_another", t, &body)), body.clone()),
            // Well past the 300 s either way (the boundary itself is pinned by the unit
            // test in holdfast::stripe with a fixed clock): the server reads its clock a
            // moment after `t`, and a signature 301 s ahead was then within 300.
            (Some(signed(SECRET, t - 330, &body)), body.clone()),
            (Some(signed(SECRET, t + 330, &body)), body.clone()),
            (Some(header.clone()), tampered),
        ];
        for (signature, body) in refused {
            let r = api.deliver_raw(&body, signature.clone()).await;
            r.expect(400, "invalid_signature");
        }
        // An API key is no substitute for the signature.
        let keyed = api
            .client
            .post(api.url(PATH))
            .bearer_auth(&api.admin)
            .header("content-type", "application/json")
            .body(body.clone());
        api.send(keyed).await.expect(400, "invalid_signature");
        assert_eq!(api.balance("buyer").await, 0, "nothing written");
        // During a secret roll Stripe signs with both secrets: one matching v1 is enough.
        let old = holdfast::webhooks::signature(b"whsec_old", t, body.as_bytes());
        let rolled = format!("{header},v1={old}");
        let r = api.deliver_raw(&body, Some(rolled)).await;
        assert_eq!(r.expect(200, "")["outcome"], "credited");
        // Signed, but not an event: 400 invalid_event, nothing written.
        let junk = r#"{"type": "payment_intent.succeeded", "data": {"object": {"id": 5}}}"#;
        let r = api
            .deliver_raw(junk, Some(signed(SECRET, now(), junk)))
            .await;
        r.expect(400, "invalid_event");
        assert_eq!(api.balance("buyer").await, 50_000_000);
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(
    refunds_follow_the_amount_refunded_so_far_in_any_order,
    |b| async move {
        let Some(api) = stripe_api(b).await else {
            return;
        };
        api.account("buyer", "free").await;
        // A refund that arrives before its payment is answered 404: Stripe retries it.
        let early = api.deliver(&refunded("pi_two", 3_000, 500)).await;
        early.expect(404, "top_up_not_found");
        api.deliver(&intent("pi_two", Some("buyer"), None, 3_000))
            .await
            .expect(200, "");
        let r = api.deliver(&refunded("pi_two", 3_000, 500)).await;
        assert_eq!(r.expect(200, "")["outcome"], "refunded");
        let r = api.deliver(&refunded("pi_two", 3_000, 500)).await;
        assert_eq!(r.expect(200, "")["outcome"], "already_applied");
        let r = api.deliver(&refunded("pi_two", 3_000, 2_000)).await;
        assert_eq!(r.expect(200, "")["outcome"], "refunded");
        assert_eq!(api.balance("buyer").await, 10_000_000);
        // An older total, delivered late, takes nothing more.
        let late = api.deliver(&refunded("pi_two", 3_000, 1_000)).await;
        assert_eq!(late.expect(200, "")["outcome"], "already_applied");
        assert_eq!(late.body["entry_id"], Value::Null);
        let r = api.deliver(&refunded("pi_two", 3_000, 3_000)).await;
        assert_eq!(r.expect(200, "")["outcome"], "refunded");
        assert_eq!(api.balance("buyer").await, 0);
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(
    a_payment_finds_its_account_by_metadata_or_customer_or_waits,
    |b| async move {
        let Some(api) = stripe_api(b).await else {
            return;
        };
        api.account("payer", "free").await;
        let unknown = api
            .deliver(&intent("pi_3", Some("nobody"), None, 100))
            .await;
        unknown.expect(404, "account_not_found");
        let unnamed = intent("pi_4", None, Some("cus_A1"), 700);
        api.deliver(&unnamed).await.expect(404, "account_not_found");
        let map = "/v1/integrations/stripe/customers/cus_A1";
        let r = api.get(&api.admin, map).await;
        r.expect(404, "customer_not_found");
        let r = api
            .put(&api.admin, map, json!({ "account_id": "nobody" }))
            .await;
        r.expect(404, "account_not_found");
        let r = api
            .put(&api.service, map, json!({ "account_id": "payer" }))
            .await;
        r.expect(403, "forbidden");
        let r = api
            .put(&api.admin, map, json!({ "account_id": "payer" }))
            .await;
        assert_eq!(r.expect(200, "")["account_id"], "payer");
        assert_eq!(
            api.get(&api.admin, map).await.expect(200, "")["account_id"],
            "payer"
        );
        let bad = api
            .put(
                &api.admin,
                "/v1/integrations/stripe/customers/cus%20x",
                json!({ "account_id": "payer" }),
            )
            .await;
        bad.expect(422, "invalid_request");
        // Stripe's retry of the same event now credits the mapped account.
        let r = api.deliver(&unnamed).await;
        assert_eq!(r.expect(200, "")["account_id"], "payer");
        assert_eq!(api.balance("payer").await, 7_000_000);
        // Another currency: refused for the operator to see, nothing credited.
        let mut euros = intent("pi_5", Some("payer"), None, 900);
        euros["data"]["object"]["currency"] = json!("eur");
        let r = api.deliver(&euros).await;
        assert_eq!(r.expect(200, "")["outcome"], "refused");
        let refused = api.events("type=payment.refused", 1).await;
        assert_eq!(refused[0]["data"]["currency"], "eur");
        assert_eq!(refused[0]["data"]["payment_id"], "pi_5");
        // Stripe's retries, and the payment's refund, are refused again without another
        // event: one payment.refused per payment (the next payment's shows they are in).
        let refund = {
            let mut refund = refunded("pi_5", 900, 900);
            refund["data"]["object"]["currency"] = json!("eur");
            refund
        };
        for again in [&euros, &euros, &refund] {
            let r = api.deliver(again).await;
            assert_eq!(r.expect(200, "")["outcome"], "refused");
        }
        let mut more = intent("pi_6", Some("payer"), None, 100);
        more["data"]["object"]["currency"] = json!("eur");
        api.deliver(&more).await.expect(200, "");
        let refused = api.events("type=payment.refused", 2).await;
        let payments: Vec<_> = refused
            .iter()
            .map(|e| e["data"]["payment_id"].clone())
            .collect();
        assert_eq!(payments, [json!("pi_5"), json!("pi_6")]);
        // Events the engine does not use are answered and ignored.
        let other = event(
            "customer.created",
            json!({ "id": "cus_B", "object": "customer" }),
        );
        assert_eq!(
            api.deliver(&other).await.expect(200, "")["outcome"],
            "ignored"
        );
        assert_eq!(api.balance("payer").await, 7_000_000);
        let metrics = api.get(&api.admin, "/metrics").await;
        assert_eq!(metrics.status, 200);
        let client = api.client.get(api.url("/metrics")).bearer_auth(&api.admin);
        let text = client.send().await.unwrap().text().await.unwrap();
        assert!(
            text.contains("holdfast_stripe_events_total{outcome=\"ignored\"}"),
            "{text}"
        );
        let r = api
            .call(reqwest::Method::DELETE, &api.admin, map, None)
            .await;
        assert_eq!(r.status, 204);
        api.get(&api.admin, map)
            .await
            .expect(404, "customer_not_found");
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(
    a_dispute_blocks_until_won_and_a_lost_one_takes_the_money_back,
    |b| async move {
        let Some(api) = stripe_api(b).await else {
            return;
        };
        api.account("d", "free").await;
        api.deliver(&intent("pi_d1", Some("d"), None, 4_000))
            .await
            .expect(200, "");
        api.deliver(&intent("pi_d2", Some("d"), None, 1_000))
            .await
            .expect(200, "");
        let opened = dispute(
            "charge.dispute.created",
            "dp_1",
            "pi_d1",
            4_000,
            "needs_response",
        );
        api.deliver(&opened).await.expect(200, "");
        assert!(api.get_account("d").await["blocked_at"].is_string());
        let second = dispute(
            "charge.dispute.created",
            "dp_2",
            "pi_d2",
            1_000,
            "needs_response",
        );
        api.deliver(&second).await.expect(200, "");
        // dp_1 won while dp_2 is open: still blocked.
        let won = dispute("charge.dispute.closed", "dp_1", "pi_d1", 4_000, "won");
        api.deliver(&won).await.expect(200, "");
        assert!(api.get_account("d").await["blocked_at"].is_string());
        // A replay of dp_1's opening after it closed changes nothing.
        api.deliver(&opened).await.expect(200, "");
        let lost = dispute("charge.dispute.closed", "dp_2", "pi_d2", 1_000, "lost");
        let r = api.deliver(&lost).await;
        assert_eq!(r.expect(200, "")["outcome"], "refunded");
        assert_eq!(
            api.deliver(&lost).await.expect(200, "")["outcome"],
            "already_applied"
        );
        let account = api.get_account("d").await;
        assert!(
            account["blocked_at"].is_string(),
            "a lost dispute leaves the block"
        );
        assert_eq!(int(&account, "balance_micros"), 40_000_000);
        // A won dispute lifts a block a dispute made, not an operator's.
        api.post(&api.admin, "/v1/accounts/d/unblock", json!({}))
            .await
            .expect(200, "");
        api.post(&api.admin, "/v1/accounts/d/block", json!({}))
            .await
            .expect(200, "");
        let third = dispute(
            "charge.dispute.created",
            "dp_3",
            "pi_d1",
            500,
            "needs_response",
        );
        api.deliver(&third).await.expect(200, "");
        let won = dispute("charge.dispute.closed", "dp_3", "pi_d1", 500, "won");
        api.deliver(&won).await.expect(200, "");
        assert!(api.get_account("d").await["blocked_at"].is_string());
        api.post(&api.admin, "/v1/accounts/d/unblock", json!({}))
            .await
            .expect(200, "");
        let fourth = dispute(
            "charge.dispute.created",
            "dp_4",
            "pi_d1",
            500,
            "needs_response",
        );
        api.deliver(&fourth).await.expect(200, "");
        assert!(api.get_account("d").await["blocked_at"].is_string());
        let won = dispute("charge.dispute.closed", "dp_4", "pi_d1", 500, "won");
        api.deliver(&won).await.expect(200, "");
        assert!(api.get_account("d").await["blocked_at"].is_null());
        let blocks = api.events("type=operator.blocked&account_id=d", 3).await;
        let actors: Vec<&str> = blocks.iter().filter_map(|e| e["actor"].as_str()).collect();
        assert!(actors.contains(&"integration:stripe"), "{actors:?}");
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(
    racing_deliveries_of_one_payment_and_its_refunds_change_the_books_once,
    |b| async move {
        let Some(api) = stripe_api(b).await else {
            return;
        };
        api.account("race", "free").await;
        let api = std::sync::Arc::new(api);
        let mut tasks = Vec::new();
        for i in 0..24 {
            let api = api.clone();
            tasks.push(tokio::spawn(async move {
                let event = match i % 3 {
                    0 => checkout("pi_race", "race", 10_000),
                    1 => intent("pi_race", Some("race"), None, 10_000),
                    _ => refunded("pi_race", 10_000, 1_000 * (i % 4 + 1)),
                };
                api.deliver(&event).await
            }));
        }
        let mut credited = 0;
        for t in tasks {
            let r = t.await.unwrap();
            assert!(
                r.status == 200 || r.code() == "top_up_not_found",
                "{:?}",
                r.body
            );
            credited += usize::from(r.body["outcome"] == "credited");
        }
        assert_eq!(credited, 1, "one payment, one top-up");
        // Stripe's retries of whatever came too early, then the books: one top-up of
        // 100.00, refunds brought to the largest total that was applied.
        for total in 1..=4 {
            api.deliver(&refunded("pi_race", 10_000, 1_000 * total))
                .await
                .expect(200, "");
        }
        assert_eq!(api.balance("race").await, 60_000_000);
        api.assert_clean().await;
        let api = std::sync::Arc::into_inner(api).unwrap();
        api.stop().await;
    }
);

backend_test!(
    racing_disputes_refunds_and_replays_end_as_in_any_order,
    |b| async move {
        let Some(api) = stripe_api(b).await else {
            return;
        };
        api.account("dr", "free").await;
        for (payment, cents) in [("pi_a", 4_000), ("pi_b", 1_000)] {
            api.deliver(&intent(payment, Some("dr"), None, cents))
                .await
                .expect(200, "");
        }
        // pi_a disputed and left open; pi_b disputed, lost, and refunded in full as well:
        // every event of both, 8 times over, at once.
        let events = [
            dispute(
                "charge.dispute.created",
                "dp_a",
                "pi_a",
                4_000,
                "needs_response",
            ),
            dispute(
                "charge.dispute.created",
                "dp_b",
                "pi_b",
                1_000,
                "needs_response",
            ),
            dispute("charge.dispute.closed", "dp_b", "pi_b", 1_000, "lost"),
            refunded("pi_b", 1_000, 1_000),
        ];
        let api = std::sync::Arc::new(api);
        let mut tasks = Vec::new();
        for i in 0..32 {
            let (api, event) = (api.clone(), events[i % events.len()].clone());
            tasks.push(tokio::spawn(async move { api.deliver(&event).await }));
        }
        let mut refunds = 0;
        for t in tasks {
            let r = t.await.unwrap();
            refunds += usize::from(r.expect(200, "")["outcome"] == "refunded");
        }
        // pi_b's 10.00 came back once, by the lost dispute or the refund: never twice.
        assert_eq!(refunds, 1, "one refund of pi_b's top-up");
        assert_eq!(api.balance("dr").await, 40_000_000);
        let account = api.get_account("dr").await;
        assert!(account["blocked_at"].is_string(), "dp_a is open, dp_b lost");
        api.assert_clean().await;
        // dp_a won, raced with replays of its opening: the lost dp_b still holds the
        // block (the operator decides), and the books are as they were.
        let won = dispute("charge.dispute.closed", "dp_a", "pi_a", 4_000, "won");
        let mut tasks = Vec::new();
        for i in 0..16 {
            let event = if i % 2 == 0 {
                won.clone()
            } else {
                events[0].clone()
            };
            let api = api.clone();
            tasks.push(tokio::spawn(async move { api.deliver(&event).await }));
        }
        for t in tasks {
            t.await.unwrap().expect(200, "");
        }
        let after = api.get_account("dr").await;
        assert_eq!(after["blocked_at"], account["blocked_at"]);
        assert_eq!(api.balance("dr").await, 40_000_000);
        api.assert_clean().await;
        let api = std::sync::Arc::into_inner(api).unwrap();
        api.stop().await;
    }
);

backend_test!(
    a_dispute_closed_before_it_opened_ends_as_in_order,
    |b| async move {
        let Some(api) = stripe_api(b).await else {
            return;
        };
        for (account, status) in [("lost-first", "lost"), ("won-first", "won")] {
            api.account(account, "free").await;
            let payment = format!("pi_{account}");
            api.deliver(&intent(&payment, Some(account), None, 2_000))
                .await
                .expect(200, "");
            let id = format!("dp_{account}");
            let closed = dispute("charge.dispute.closed", &id, &payment, 500, status);
            api.deliver(&closed).await.expect(200, "");
            let opened = dispute(
                "charge.dispute.created",
                &id,
                &payment,
                500,
                "needs_response",
            );
            api.deliver(&opened).await.expect(200, "");
        }
        let lost = api.get_account("lost-first").await;
        assert!(
            lost["blocked_at"].is_string(),
            "lost blocks, as created then lost does"
        );
        assert_eq!(int(&lost, "balance_micros"), 15_000_000);
        let won = api.get_account("won-first").await;
        assert!(
            won["blocked_at"].is_null(),
            "won leaves it open, as created then won does"
        );
        assert_eq!(int(&won, "balance_micros"), 20_000_000);
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(
    racing_deliveries_of_a_refused_payment_tell_the_operator_once,
    |b| async move {
        let Some(api) = stripe_api(b).await else {
            return;
        };
        api.account("eu", "free").await;
        let mut euros = intent("pi_eu", Some("eu"), None, 700);
        euros["data"]["object"]["currency"] = json!("eur");
        let api = std::sync::Arc::new(api);
        let mut tasks = Vec::new();
        for _ in 0..16 {
            let (api, event) = (api.clone(), euros.clone());
            tasks.push(tokio::spawn(async move { api.deliver(&event).await }));
        }
        for t in tasks {
            assert_eq!(t.await.unwrap().expect(200, "")["outcome"], "refused");
        }
        // The next refused payment's event shows the earlier ones are stamped.
        let mut next = intent("pi_eu2", Some("eu"), None, 100);
        next["data"]["object"]["currency"] = json!("eur");
        api.deliver(&next).await.expect(200, "");
        let refused = api.events("type=payment.refused", 2).await;
        let payments: Vec<_> = (refused.iter())
            .map(|e| e["data"]["payment_id"].clone())
            .collect();
        assert_eq!(payments, [json!("pi_eu"), json!("pi_eu2")]);
        assert_eq!(api.balance("eu").await, 0, "nothing credited");
        api.assert_clean().await;
        let api = std::sync::Arc::into_inner(api).unwrap();
        api.stop().await;
    }
);
