//! `GET /v1/accounts/{id}/statement` and `…/balance` on both backends: JSON and CSV agree
//! with the ledger, bad periods and times and unknown accounts are refused.

mod http_support;

use holdfast::backend_test;
use http_support::*;
use serde_json::json;

backend_test!(
    a_statement_answers_as_json_and_csv_and_refuses_bad_periods,
    |b| async move {
        let Some(api) = api(b).await else { return };
        api.account("s1", "premium").await;
        api.top_up("s1", "20.00", "t1").await;
        let debit = json!({ "amount": "1.25", "idempotency_key": "d1", "job_ref": "=SUM(A1)" });
        api.post(&api.service, "/v1/accounts/s1/debits", debit)
            .await
            .expect(201, "");
        let metered =
            json!({ "usage": { "meter": "linux-small", "seconds": 300 }, "idempotency_key": "m1" });
        api.post(&api.service, "/v1/accounts/s1/debits", metered)
            .await
            .expect(201, "");
        let job = api.submit("s1", "video", "v1").await;
        job.expect(201, "");
        let path = "/v1/accounts/s1/statement";
        let s = api.get(&api.service, path).await.expect(200, "").clone();
        assert_eq!(s["opening_balance"], "0.00");
        assert_eq!(s["closing_balance"], "18.72");
        assert_eq!(s["currency"], "USD");
        assert_eq!(s["held_at_end"], "0.50", "{s:#}");
        let kinds: Vec<&str> = s["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["debit", "top_up"]);
        assert_eq!(
            s["spending_by_job_kind"],
            json!([{ "job_kind": null, "entries": 2, "amount": "1.28", "amount_micros": 1_280_000 }])
        );
        assert_eq!(
            s["spending_by_meter"],
            json!([
                { "meter": "linux-small", "entries": 1, "seconds": 300, "amount": "0.03", "amount_micros": 30_000 },
                { "meter": null, "entries": 1, "seconds": 0, "amount": "1.25", "amount_micros": 1_250_000 },
            ])
        );
        let later = "?from=2999-01-01T00:00:00Z&to=2999-01-02T00:00:00Z";
        let empty = api
            .get(&api.service, &format!("{path}{later}"))
            .await
            .expect(200, "")
            .clone();
        assert_eq!(
            (empty["opening_balance"].clone(), empty["changes"].clone()),
            (json!("18.72"), json!([]))
        );
        let csv = api
            .client
            .get(api.url(path))
            .bearer_auth(&api.service)
            .header("accept", "text/csv");
        let res = csv.send().await.unwrap();
        assert_eq!(res.status(), 200);
        assert!(
            res.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/csv")
        );
        let text = res.text().await.unwrap();
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows[0], "section,name,entries,amount,amount_micros,seconds");
        assert_eq!(rows[1], "opening,,,0.00,0,");
        assert!(rows.contains(&"change,debit,2,-1.28,-1280000,"), "{text}");
        assert!(
            rows.contains(&"meter,linux-small,1,0.03,30000,300"),
            "{text}"
        );
        assert!(rows.contains(&"closing,,,18.72,18720000,"), "{text}");
        let backwards = "?from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z";
        let r = api.get(&api.service, &format!("{path}{backwards}")).await;
        assert!(
            r.expect(422, "invalid_request")
                .to_string()
                .contains("from")
        );
        api.get(&api.service, &format!("{path}?from=yesterday"))
            .await
            .expect(422, "invalid_request");
        api.get(&api.service, &format!("{path}?since=2030-01-01T00:00:00Z"))
            .await
            .expect(422, "invalid_request");
        api.get(&api.service, "/v1/accounts/nobody/statement")
            .await
            .expect(404, "account_not_found");
        api.get(&api.worker, path).await.expect(403, "forbidden");
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(
    the_balance_at_a_time_answers_from_the_ledger_and_refuses_bad_times,
    |b| async move {
        let Some(api) = api(b).await else { return };
        api.account("s1", "premium").await;
        api.top_up("s1", "20.00", "t1").await;
        let path = "/v1/accounts/s1/balance";
        let first = api.get(&api.service, path).await.expect(200, "").clone();
        // SQLite's clock counts milliseconds: the next write must not share `first`'s.
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
        let debit = json!({ "amount": "1.25", "idempotency_key": "d1" });
        api.post(&api.service, "/v1/accounts/s1/debits", debit)
            .await
            .expect(201, "");
        api.submit("s1", "video", "v1").await.expect(201, "");
        let now = api.get(&api.admin, path).await.expect(200, "").clone();
        assert_eq!(
            (&now["balance"], &now["held"], &now["available"]),
            (&json!("18.75"), &json!("0.50"), &json!("18.25")),
            "{now:#}"
        );
        assert_eq!(now["balance_micros"], 18_750_000);
        assert_eq!(now["currency"], "USD");
        assert_eq!(
            now["allowances"]["daily_images"],
            json!({ "remaining": 10, "held": 0 })
        );
        // The first answer's own time gives the first answer again: the top-up alone.
        let at = first["at"].as_str().unwrap().replace('+', "%2B");
        let then = api.get(&api.admin, &format!("{path}?at={at}")).await;
        let then = then.expect(200, "").clone();
        assert_eq!(then, first, "the balance at a past time does not move");
        assert_eq!(then["balance"], "20.00");
        assert!(then["last_entry_id"].as_i64() < now["last_entry_id"].as_i64());
        let early = api
            .get(&api.service, &format!("{path}?at=2000-01-01T00:00:00Z"))
            .await
            .expect(200, "")
            .clone();
        assert_eq!(
            (
                &early["balance"],
                &early["last_entry_id"],
                &early["allowances"]
            ),
            (&json!("0.00"), &json!(null), &json!({}))
        );
        api.get(&api.service, &format!("{path}?at=yesterday"))
            .await
            .expect(422, "invalid_request");
        api.get(&api.service, &format!("{path}?when=2030-01-01T00:00:00Z"))
            .await
            .expect(422, "invalid_request");
        api.get(&api.service, "/v1/accounts/nobody/balance")
            .await
            .expect(404, "account_not_found");
        api.get(&api.worker, path).await.expect(403, "forbidden");
        api.assert_clean().await;
        api.stop().await;
    }
);

backend_test!(
    usage_groups_by_account_kind_and_meter_for_admin_keys,
    |b| async move {
        let Some(api) = api(b).await else { return };
        for (a, amount) in [("u1", "1.25"), ("u2", "0.50"), ("u3", "2.00")] {
            api.account(a, "free").await;
            api.top_up(a, "10.00", "t").await;
            let debit = json!({ "amount": amount, "idempotency_key": "d" });
            api.post(&api.service, &format!("/v1/accounts/{a}/debits"), debit)
                .await
                .expect(201, "");
        }
        let r = api.get(&api.admin, "/v1/usage?limit=2").await;
        let page = r.expect(200, "").clone();
        assert_eq!(page["group_by"], "account");
        assert_eq!(
            page["groups"][0],
            json!({
                "key": "u1", "entries": 1, "spent": "1.25", "spent_micros": 1_250_000,
                "seconds": 0, "refunded": "0.00", "refunded_micros": 0, "net": "1.25",
                "net_micros": 1_250_000,
            })
        );
        assert_eq!(page["next"], "u2");
        let rest = api
            .get(&api.admin, "/v1/usage?limit=2&after=u2")
            .await
            .expect(200, "")
            .clone();
        assert_eq!(rest["groups"].as_array().unwrap().len(), 1);
        assert_eq!(rest["next"], json!(null));
        let kinds = api
            .get(&api.admin, "/v1/usage?group_by=kind")
            .await
            .expect(200, "")
            .clone();
        assert_eq!(
            kinds["groups"],
            json!([{
                "key": null, "entries": 3, "spent": "3.75", "spent_micros": 3_750_000,
                "seconds": 0, "refunded": "0.00", "refunded_micros": 0, "net": "3.75",
                "net_micros": 3_750_000,
            }])
        );
        let meters = api.get(&api.admin, "/v1/usage?group_by=meter").await;
        let meters = meters.expect(200, "").clone();
        assert_eq!(
            (
                meters["group_by"].clone(),
                meters["groups"][0]["key"].clone()
            ),
            (json!("meter"), json!(null))
        );
        let one = api
            .get(&api.admin, "/v1/usage?account_id=u3")
            .await
            .expect(200, "")
            .clone();
        assert_eq!(one["groups"][0]["spent"], "2.00");
        let later = "/v1/usage?from=2999-01-01T00:00:00Z&to=2999-02-01T00:00:00Z";
        assert_eq!(
            api.get(&api.admin, later).await.expect(200, "")["groups"],
            json!([])
        );
        for bad in [
            "group_by=job",
            "from=2030-02-01T00:00:00Z&to=2030-01-01T00:00:00Z",
            "limit=0",
            "account_id=a%20b",
            "after=%C2%84",
            "kind=debit",
        ] {
            api.get(&api.admin, &format!("/v1/usage?{bad}"))
                .await
                .expect(422, "invalid_request");
        }
        api.get(&api.service, "/v1/usage")
            .await
            .expect(403, "forbidden");
        api.stop().await;
    }
);
