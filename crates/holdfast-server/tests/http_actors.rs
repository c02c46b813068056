//! Who did it: in a mixed scenario over a real socket, every ledger entry, every event and
//! every job transition names the key that caused it (never the key itself), operator
//! actions write `operator.*` events with their reason, and `GET /v1/events?actor=`
//! finds one caller's events; on SQLite and PostgreSQL.

mod http_support;

use std::collections::BTreeSet;

use holdfast::backend_test;
use holdfast::testing::card_with;
use http_support::*;
use serde_json::{Value, json};

backend_test!(
    every_entry_event_and_transition_names_its_actor,
    |b| async move {
        let card = card_with(&[(
            r#"take = [{ pocket = "money", amount = "0.50" }]"#,
            r#"take = [{ pocket = "money", amount = "1.00" }]"#,
        )]);
        let Some(api) = api_with(b, card).await else {
            return;
        };
        let keys = api.engine.list_keys().await.unwrap();
        let actor_of = |role: &str| {
            let k = keys.iter().find(|k| k.role == role).unwrap();
            format!("key:{}", k.key_id)
        };
        let (service, worker, admin) = (
            actor_of("service"),
            actor_of("worker"),
            "key:env".to_owned(),
        );

        // The application (service key): an account, money, a debit, a job.
        api.account("u", "free").await;
        api.top_up("u", "5.00", "t").await;
        api.post(
            &api.service,
            "/v1/accounts/u/debits",
            json!({ "amount": "0.25", "idempotency_key": "d" }),
        )
        .await
        .expect(201, "");
        api.put(&api.service, "/v1/accounts/u", json!({ "plan": "premium" }))
            .await
            .expect(200, "");
        let job = api.submit("u", "video", "v").await;
        let job_id = job.expect(201, "")["job_id"].as_str().unwrap().to_owned();
        // The worker leases and completes it; the service refunds part of it.
        let (_, token) = api.lease("video_priority", 60).await;
        api.post(
            &api.worker,
            &format!("/v1/jobs/{job_id}/complete"),
            json!({ "lease_token": token }),
        )
        .await
        .expect(200, "");
        api.post(
            &api.service,
            &format!("/v1/jobs/{job_id}/refund"),
            json!({ "amount": "0.40", "reason": "blurry", "idempotency_key": "r" }),
        )
        .await
        .expect(201, "");
        // The operator (the environment's admin key): a grant, a block and a ban, with reasons.
        let grant = json!({ "pocket": "daily_images", "amount": 2, "reason": "outage", "idempotency_key": "g" });
        api.post(&api.admin, "/v1/accounts/u/grants", grant)
            .await
            .expect(201, "");
        api.post(
            &api.admin,
            "/v1/accounts/u/block",
            json!({ "reason": "chargeback" }),
        )
        .await
        .expect(200, "");
        api.post(&api.admin, "/v1/accounts/u/unblock", json!({}))
            .await
            .expect(200, "");
        api.post(
            &api.admin,
            "/v1/accounts/u/ban",
            json!({ "reason": "fraud" }),
        )
        .await
        .expect(200, "");

        let job = api.get(&api.service, &format!("/v1/jobs/{job_id}")).await;
        let actors = job.expect(200, "")["actors"].clone();
        assert_eq!(
            actors,
            json!({ "submitted": service, "leased": worker, "finished": worker })
        );

        let books = api.get(&api.admin, "/v1/ledger?limit=1000").await;
        let entries = books.expect(200, "")["entries"].as_array().unwrap().clone();
        let actor_of_kind = |kind: &str| -> BTreeSet<String> {
            entries
                .iter()
                .filter(|e| e["kind"] == kind)
                .map(|e| e["actor"].as_str().unwrap().to_owned())
                .collect()
        };
        assert!(
            entries.iter().all(|e| e["actor"].is_string()),
            "{entries:#?}"
        );
        for (kind, who) in [
            ("top_up", &service),
            ("debit", &service),
            ("capture", &worker),
            ("job_refund", &service),
            ("grant", &admin),
        ] {
            assert_eq!(actor_of_kind(kind), BTreeSet::from([who.clone()]), "{kind}");
        }

        let events = api.events("limit=1000", 9).await;
        assert!(events.iter().all(|e| e["actor"].is_string()), "{events:#?}");
        let event = |kind: &str| -> Value {
            events
                .iter()
                .find(|e| e["type"] == kind)
                .unwrap_or_else(|| panic!("{kind}"))
                .clone()
        };
        assert_eq!(event("job.succeeded")["actor"], worker.as_str());
        assert_eq!(event("job.refunded")["actor"], service.as_str());
        assert_eq!(event("operator.plan_changed")["actor"], service.as_str());
        assert_eq!(event("operator.plan_changed")["data"]["to"], "premium");
        for (kind, reason) in [
            ("operator.granted", json!("outage")),
            ("operator.blocked", json!("chargeback")),
            ("operator.unblocked", Value::Null),
            ("operator.banned", json!("fraud")),
        ] {
            let e = event(kind);
            assert_eq!(
                (e["actor"].as_str(), &e["data"]["reason"]),
                (Some(admin.as_str()), &reason),
                "{kind}"
            );
        }
        // One caller's events, and nothing but them.
        let mine = api.events(&format!("limit=1000&actor={worker}"), 1).await;
        assert!(!mine.is_empty() && mine.iter().all(|e| e["actor"] == worker.as_str()));
        let types: BTreeSet<&str> = mine.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(types, BTreeSet::from(["job.succeeded"]));
        api.get(&api.service, "/v1/events?actor=")
            .await
            .expect(422, "invalid_request");
        // No key is ever written down, only its id.
        for e in entries.iter().chain(&events) {
            let text = e.to_string();
            assert!(
                !text.contains(&api.service) && !text.contains(&api.worker),
                "{text}"
            );
        }
        api.assert_clean().await;
    }
);
