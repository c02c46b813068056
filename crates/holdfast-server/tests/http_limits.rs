//! Load shedding and limits on both backends: the per-key request rate limit (429
//! `rate_limited` with `Retry-After`), 503 with `Retry-After` when the database cannot
//! take a request, and the bounds on request headers and on slow clients.

mod http_support;

use holdfast::backend_test;
use holdfast_server::http::ServerOptions;
use holdfast_server::http::limits::RateLimit;
use http_support::*;
use reqwest::header::RETRY_AFTER;
use serde_json::Value;

/// One GET with `key`: its status, its `Retry-After` in seconds (if any) and its body.
async fn get_with(api: &Api, key: &str, path: &str) -> (u16, Option<u64>, Value) {
    let res = api
        .client
        .get(api.url(path))
        .bearer_auth(key)
        .send()
        .await
        .expect("request");
    let status = res.status().as_u16();
    let retry_after = res
        .headers()
        .get(RETRY_AFTER)
        .map(|v| v.to_str().unwrap().parse::<u64>().expect("whole seconds"));
    let body = res.json().await.unwrap_or(Value::Null);
    (status, retry_after, body)
}

backend_test!(
    a_flood_from_one_key_is_answered_429_while_another_key_is_served,
    |b| async move {
        let opts = ServerOptions {
            rate_limit: RateLimit::from_flags(1, Some(5)),
            ..test_options()
        };
        let Some(api) = api_served(b, opts).await else {
            return;
        };
        let other = holdfast_server::http::auth::new_key();
        api.engine
            .store()
            .create_key("service", &other)
            .await
            .unwrap();
        let flood: Vec<_> = (0..30)
            .map(|_| get_with(&api, &api.service, "/v1/accounts"))
            .collect();
        let answers = futures::future::join_all(flood).await;
        let served = answers.iter().filter(|(s, ..)| *s == 200).count();
        // The burst of 5, and at most a token or two that refilled during the flood.
        assert!((5..=7).contains(&served), "{served} served");
        let limited: Vec<_> = answers.iter().filter(|(s, ..)| *s == 429).collect();
        assert_eq!(served + limited.len(), answers.len(), "{answers:?}");
        for (_, retry_after, body) in &limited {
            assert!(retry_after.is_some_and(|s| s >= 1), "{retry_after:?}");
            assert_eq!(body["error"]["code"], "rate_limited", "{body}");
            assert!(
                body["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty())
            );
        }
        // In the same window: another key is served, and so is the admin key.
        let (status, retry_after, _) = get_with(&api, &other, "/v1/accounts").await;
        assert_eq!((status, retry_after), (200, None));
        let (status, ..) = get_with(&api, &api.admin, "/v1/accounts").await;
        assert_eq!(status, 200);
        // A request that fails auth is 401, never 429, and counts against no key.
        for _ in 0..10 {
            let (status, ..) = get_with(&api, "hf_no_such_key", "/v1/accounts").await;
            assert_eq!(status, 401);
        }
        let (status, ..) = get_with(&api, &other, "/v1/accounts").await;
        assert_eq!(status, 200);
        // The flooded key is served again once its bucket refills.
        let wait = limited.iter().filter_map(|(_, r, _)| *r).max().unwrap();
        tokio::time::sleep(std::time::Duration::from_secs(wait)).await;
        let (status, ..) = get_with(&api, &api.service, "/v1/accounts").await;
        assert_eq!(status, 200);
        api.stop().await;
    }
);
