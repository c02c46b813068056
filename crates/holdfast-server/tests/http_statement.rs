//! `GET /v1/accounts/{id}/statement` on both backends: JSON and CSV agree with the
//! ledger, bad periods and unknown accounts are refused.

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
        let job = api.submit("s1", "video", "v1").await;
        job.expect(201, "");
        let path = "/v1/accounts/s1/statement";
        let s = api.get(&api.service, path).await.expect(200, "").clone();
        assert_eq!(s["opening_balance"], "0.00");
        assert_eq!(s["closing_balance"], "18.75");
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
            json!([{ "job_kind": null, "entries": 1, "amount": "1.25", "amount_micros": 1_250_000 }])
        );
        let later = "?from=2999-01-01T00:00:00Z&to=2999-01-02T00:00:00Z";
        let empty = api
            .get(&api.service, &format!("{path}{later}"))
            .await
            .expect(200, "")
            .clone();
        assert_eq!(
            (empty["opening_balance"].clone(), empty["changes"].clone()),
            (json!("18.75"), json!([]))
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
        assert_eq!(rows[0], "section,name,entries,amount,amount_micros");
        assert_eq!(rows[1], "opening,,,0.00,0");
        assert!(rows.contains(&"change,debit,1,-1.25,-1250000"), "{text}");
        assert!(rows.contains(&"closing,,,18.75,18750000"), "{text}");
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
