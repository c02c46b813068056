//! `GET /v1/ledger` over a real socket, against SQLite and PostgreSQL: JSON pages and the
//! CSV stream (several pages of it) agree entry for entry; bad filters are refused.

mod http_support;

use holdfast::backend_test;
use http_support::*;
use serde_json::{Value, json};

/// Every entry by JSON pages of `limit`.
async fn json_pages(api: &Api, query: &str, limit: usize) -> Vec<Value> {
    let mut out = Vec::new();
    let mut after = String::new();
    loop {
        let path = format!("/v1/ledger?{query}&limit={limit}&after={after}");
        let page = api.get(&api.admin, &path).await.expect(200, "").clone();
        let entries = page["entries"].as_array().unwrap().clone();
        if entries.is_empty() {
            return out;
        }
        after = page["next"].as_str().unwrap().to_owned();
        out.extend(entries);
    }
}

backend_test!(
    the_books_as_json_pages_and_as_a_csv_stream,
    |b| async move {
        let Some(api) = api(b).await else { return };
        for id in ["a", "b"] {
            api.account(id, "free").await;
            api.top_up(id, "100.00", &format!("t-{id}")).await;
        }
        // 1,200 debits in two batches: more than one CSV page.
        for batch in 0..2 {
            let debits: Vec<Value> = (0..600)
            .map(|i| {
                let account = if i % 2 == 0 { "a" } else { "b" };
                json!({ "account_id": account, "amount": "0.01", "idempotency_key": format!("d{batch}-{i}"), "job_ref": "ci \"7\", step 2" })
            })
            .collect();
            let r = api
                .post(&api.service, "/v1/debits", json!({ "debits": debits }))
                .await;
            assert!(statuses(r.expect(200, "")).iter().all(|s| *s == 201));
        }
        let pages = json_pages(&api, "kind=debit", 500).await;
        assert_eq!(pages.len(), 1200);
        let res = api
            .client
            .get(api.url("/v1/ledger?kind=debit"))
            .bearer_auth(&api.admin)
            .header("accept", "application/json;q=0.5, text/csv")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        assert_eq!(res.headers()["content-type"], "text/csv; charset=utf-8");
        let text = res.text().await.unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = reader
            .headers()
            .unwrap()
            .iter()
            .map(str::to_owned)
            .collect();
        assert_eq!(header, holdfast_server::books::CSV_COLUMNS);
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), pages.len());
        for (row, entry) in rows.iter().zip(&pages) {
            assert_eq!(row[0], *entry["entry_id"].as_str().unwrap());
            assert_eq!(row[2], *entry["account_id"].as_str().unwrap());
            assert_eq!(row[5], *entry["delta"].as_str().unwrap());
            assert_eq!(row[6], entry["delta_micros"].as_i64().unwrap().to_string());
            assert_eq!(row[9], *entry["ref"].as_str().unwrap());
        }
        let only_a = json_pages(&api, "account_id=a&kind=debit", 1000).await;
        assert_eq!(only_a.len(), 600);
        let first = pages[0]["created_at"].as_str().unwrap();
        let since = json_pages(&api, &format!("since={first}&kind=debit"), 1000).await;
        assert_eq!(since.len(), 1200);
        let until = json_pages(&api, &format!("until={first}&kind=debit"), 1000).await;
        assert!(until.is_empty());
        for query in [
            "kind=gift",
            "since=yesterday",
            "after=x",
            "limit=2000",
            "colour=red",
            "account_id=%2F",
        ] {
            api.get(&api.admin, &format!("/v1/ledger?{query}"))
                .await
                .expect(422, "invalid_request");
        }
        let csv_limit = api
            .send(
                api.client
                    .get(api.url("/v1/ledger?limit=10"))
                    .bearer_auth(&api.admin)
                    .header("accept", "text/csv"),
            )
            .await;
        assert_eq!(csv_limit.status, 422);
        api.get(&api.service, "/v1/ledger")
            .await
            .expect(403, "forbidden");
        api.assert_clean().await;
    }
);

/// A CSV export of the whole ledger with `key`: its status and error code (if any).
async fn csv_export(api: &Api, key: &str) -> (u16, Option<String>, String) {
    let res = api
        .client
        .get(api.url("/v1/ledger"))
        .bearer_auth(key)
        .header("accept", "text/csv")
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let retry = res
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, retry, res.text().await.unwrap())
}

backend_test!(
    csv_exports_past_the_bound_are_refused_and_a_finished_one_frees_its_place,
    |b| async move {
        // No place at all: every CSV export is refused, JSON pages are not.
        let none = holdfast_server::http::ServerOptions {
            max_export_streams: 0,
            ..test_options()
        };
        let Some(api) = api_served(b, none).await else {
            return;
        };
        api.account("x", "free").await;
        api.top_up("x", "1.00", "t-x").await;
        let (status, retry, body) = csv_export(&api, &api.admin).await;
        assert_eq!(status, 429, "{body}");
        assert_eq!(retry.as_deref(), Some("1"));
        assert!(body.contains("too_many_exports"), "{body}");
        api.get(&api.admin, "/v1/ledger").await.expect(200, "");
        api.stop().await;

        // One place: exports one after another each get it back when they end.
        let one = holdfast_server::http::ServerOptions {
            max_export_streams: 1,
            ..test_options()
        };
        let api = api_served(b, one).await.unwrap();
        api.account("x", "free").await;
        api.top_up("x", "1.00", "t-x").await;
        for round in 0..3 {
            let (status, _, body) = csv_export(&api, &api.admin).await;
            assert_eq!(status, 200, "round {round}: {body}");
            assert!(body.contains("top_up"), "{body}");
        }
        api.stop().await;
    }
);
