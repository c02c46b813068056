//! The operator console over a real socket, on SQLite and PostgreSQL: sign-in and its
//! cookie, the wrong-key pause, roles (a viewer reads and changes nothing; a service key
//! cannot sign in), CSRF, the confirm step, actions recorded under the admin's key, and
//! credits from the console raced (the same form sent many times applies once; many forms
//! apply each once), followed by the audit. The browser test (console/e2e) drives the same
//! pages in Chromium.

mod http_support;

use holdfast::backend_test;
use holdfast::testing::assert_clean;
use http_support::*;
use reqwest::StatusCode;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use serde_json::json;

/// A browser without a cookie jar: it does not follow redirects, so each answer is seen.
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

struct Signed {
    cookie: String,
    csrf: String,
}

/// The value of `name="csrf"` in a page.
fn csrf_of(page: &str) -> String {
    let at = page.find(r#"name="csrf" value=""#).expect("a csrf field") + 19;
    page[at..at + 64].to_owned()
}

async fn sign_in(api: &Api, key: &str) -> reqwest::Response {
    browser()
        .post(api.url("/console/login"))
        .form(&[("key", key), ("next", "/console/accounts")])
        .send()
        .await
        .unwrap()
}

async fn signed(api: &Api, key: &str) -> Signed {
    let r = sign_in(api, key).await;
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let set = r.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    let cookie = set.split(';').next().unwrap().to_owned();
    let page = page(api, &cookie, "/console").await;
    Signed {
        csrf: csrf_of(&page),
        cookie,
    }
}

async fn page(api: &Api, cookie: &str, path: &str) -> String {
    let r = browser()
        .get(api.url(path))
        .header(COOKIE, cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK, "{path}");
    r.text().await.unwrap()
}

async fn post_form(
    api: &Api,
    s: &Signed,
    path: &str,
    form: &[(&str, &str)],
) -> (StatusCode, String) {
    let r = browser()
        .post(api.url(path))
        .header(COOKIE, &s.cookie)
        .form(form)
        .send()
        .await
        .unwrap();
    (r.status(), r.text().await.unwrap())
}

/// The account's top-up entries.
async fn top_ups(api: &Api, account: &str) -> Vec<serde_json::Value> {
    let ledger = api
        .get(&api.admin, &format!("/v1/accounts/{account}/ledger"))
        .await;
    let entries = ledger.body["entries"].as_array().unwrap().clone();
    entries
        .into_iter()
        .filter(|e| e["kind"] == "top_up")
        .collect()
}

async fn balance(api: &Api, account: &str) -> String {
    let r = api
        .get(&api.admin, &format!("/v1/accounts/{account}"))
        .await;
    r.body["balance"].as_str().unwrap().to_owned()
}

backend_test!(
    sign_in_sets_a_strict_session_cookie_and_never_the_key,
    |b| async move {
        let Some(api) = api(b).await else {
            return;
        };
        // Not signed in: to the sign-in page, and back here after it.
        let r = browser()
            .get(api.url("/console/jobs?lane=image"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::SEE_OTHER);
        assert_eq!(
            r.headers()[LOCATION],
            "/console/login?next=%2Fconsole%2Fjobs%3Flane%3Dimage"
        );

        let r = sign_in(&api, &api.admin).await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER);
        assert_eq!(r.headers()[LOCATION], "/console/accounts");
        let cookie = r.headers()[SET_COOKIE].to_str().unwrap().to_owned();
        for part in [
            "HttpOnly",
            "SameSite=Strict",
            "Path=/console",
            "Max-Age=28800",
        ] {
            assert!(cookie.contains(part), "{cookie} lacks {part}");
        }
        assert!(!cookie.contains("Secure"), "plain HTTP: {cookie}");
        assert!(
            !cookie.contains(&api.admin),
            "the key is never in the cookie"
        );

        // Behind a TLS proxy the cookie is Secure.
        let r = browser()
            .post(api.url("/console/login"))
            .header("x-forwarded-proto", "https")
            .form(&[("key", api.admin.as_str())])
            .send()
            .await
            .unwrap();
        let cookie = r.headers()[SET_COOKIE].to_str().unwrap();
        assert!(cookie.ends_with("; Secure"), "{cookie}");

        // A next page outside the console is not followed.
        let r = browser()
            .post(api.url("/console/login"))
            .form(&[("key", api.admin.as_str()), ("next", "//evil.example/")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.headers()[LOCATION], "/console");

        // Signing out ends the session on the server.
        let s = signed(&api, &api.admin).await;
        let (status, _) = post_form(&api, &s, "/console/logout", &[("csrf", &s.csrf)]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        let r = browser()
            .get(api.url("/console"))
            .header(COOKIE, &s.cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(
            r.status(),
            StatusCode::SEE_OTHER,
            "the old cookie no longer signs in"
        );
    }
);

backend_test!(
    ten_wrong_keys_pause_sign_in_for_that_address,
    |b| async move {
        let Some(api) = api(b).await else {
            return;
        };
        for i in 0..10 {
            let r = sign_in(&api, "hf_not_a_key").await;
            assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "try {i}");
            assert!(r.text().await.unwrap().contains("not a live API key"));
        }
        // Paused now, even for the right key: nothing is checked for a minute.
        let r = sign_in(&api, &api.admin).await;
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(r.headers().get(SET_COOKIE).is_none());
        assert!(r.text().await.unwrap().contains("Too many wrong keys"));

        // Only admin and viewer keys sign in.
        let api = http_support::api(b).await.unwrap();
        let r = sign_in(&api, &api.service).await;
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        assert!(
            r.text()
                .await
                .unwrap()
                .contains("A service key cannot sign in")
        );
    }
);

backend_test!(
    a_revoked_key_ends_its_console_session_before_any_action,
    |b| async move {
        let Some(api) = api(b).await else {
            return;
        };
        api.account("acct_rk", "free").await;
        let second = holdfast_server::http::auth::new_key();
        let key_id = api.engine.create_key("admin", &second).await.unwrap();
        let s = signed(&api, &second).await;
        assert!(
            page(&api, &s.cookie, "/console/accounts/acct_rk")
                .await
                .contains("acct_rk")
        );

        assert!(api.engine.revoke_key(&key_id).await.unwrap());
        // A confirmed credit with the session's own CSRF token: sent to sign in, nothing
        // written.
        let (status, _) = post_form(
            &api,
            &s,
            "/console/accounts/acct_rk/credit",
            &[
                ("kind", "bonus"),
                ("amount", "5.00"),
                ("idempotency_key", "after-revoke"),
                ("csrf", &s.csrf),
                ("confirmed", "yes"),
            ],
        )
        .await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert_eq!(balance(&api, "acct_rk").await, "0.00");
        let ledger = api.get(&api.admin, "/v1/accounts/acct_rk/ledger").await;
        let entries = ledger.body["entries"].as_array().unwrap();
        assert!(entries.iter().all(|e| e["kind"] != "bonus"), "{entries:?}");
        // The session is gone, not only refused once: every page asks to sign in, and the
        // revoked key cannot sign in again.
        let r = browser()
            .get(api.url("/console"))
            .header(COOKIE, &s.cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::SEE_OTHER);
        assert!(
            r.headers()[LOCATION]
                .to_str()
                .unwrap()
                .starts_with("/console/login")
        );
        assert_eq!(
            sign_in(&api, &second).await.status(),
            StatusCode::UNAUTHORIZED
        );
    }
);

backend_test!(
    console_pages_carry_the_browser_security_headers,
    |b| async move {
        let Some(api) = api(b).await else {
            return;
        };
        let s = signed(&api, &api.admin).await;
        let login = browser()
            .get(api.url("/console/login"))
            .send()
            .await
            .unwrap();
        let overview = browser()
            .get(api.url("/console"))
            .header(COOKIE, &s.cookie)
            .send()
            .await
            .unwrap();
        let css = browser()
            .get(api.url("/console/console.css"))
            .send()
            .await
            .unwrap();
        for r in [&login, &overview, &css] {
            let h = r.headers();
            let csp = h["content-security-policy"].to_str().unwrap();
            assert!(csp.contains("default-src 'self'"), "{csp}");
            assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
            assert_eq!(h["x-content-type-options"], "nosniff");
            assert_eq!(h["referrer-policy"], "same-origin");
        }
        for r in [&login, &overview] {
            assert_eq!(r.headers()["cache-control"], "no-store");
        }
    }
);

backend_test!(
    a_viewer_reads_every_page_and_changes_nothing,
    |b| async move {
        let Some(api) = api(b).await else {
            return;
        };
        let viewer = holdfast_server::http::auth::new_key();
        api.engine.create_key("viewer", &viewer).await.unwrap();
        api.account("acct_v", "free").await;
        api.top_up("acct_v", "7.00", "v-1").await;
        let job = api.submit("acct_v", "image", "v-job").await.body["job_id"]
            .as_str()
            .unwrap()
            .to_owned();

        let s = signed(&api, &viewer).await;
        for path in [
            "/console",
            "/console/accounts",
            "/console/accounts/acct_v",
            "/console/jobs",
            &format!("/console/jobs/{job}"),
            "/console/webhooks",
        ] {
            let html = page(&api, &s.cookie, path).await;
            assert!(
                !html.contains("Credit…")
                    && !html.contains("Block…")
                    && !html.contains("Run audit…"),
                "{path} shows an action to a viewer"
            );
        }
        assert!(
            page(&api, &s.cookie, "/console/accounts/acct_v")
                .await
                .contains("7.00")
        );
        // A viewer's POST with a valid token is refused, and nothing changes.
        let (status, _) = post_form(
            &api,
            &s,
            "/console/accounts/acct_v/block",
            &[("csrf", &s.csrf), ("blocked", "true"), ("confirmed", "yes")],
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let r = api.get(&api.admin, "/v1/accounts/acct_v").await;
        assert!(r.body["blocked_at"].is_null());
        // On the API a viewer reads and writes nothing.
        api.get(&viewer, "/v1/accounts/acct_v")
            .await
            .expect(200, "");
        // The audit is the most expensive read: admins only.
        api.get(&viewer, "/v1/admin/audit")
            .await
            .expect(403, "forbidden");
        api.post(
            &viewer,
            "/v1/accounts/acct_v/top-ups",
            json!({"amount": "1.00", "idempotency_key": "x"}),
        )
        .await
        .expect(403, "forbidden");
        assert_eq!(balance(&api, "acct_v").await, "7.00");
    }
);

backend_test!(
    a_forged_form_changes_nothing_and_actions_are_confirmed_first,
    |b| async move {
        let Some(api) = api(b).await else {
            return;
        };
        api.account("acct_f", "free").await;
        let s = signed(&api, &api.admin).await;
        let credit = "/console/accounts/acct_f/credit";
        let form = [
            ("kind", "top_up"),
            ("amount", "3.00"),
            ("idempotency_key", "console-f1"),
        ];

        // No token, a wrong token: 403 and no change.
        for token in ["", "0000"] {
            let mut f = form.to_vec();
            f.extend([("csrf", token), ("confirmed", "yes")]);
            let (status, html) = post_form(&api, &s, credit, &f).await;
            assert_eq!(status, StatusCode::FORBIDDEN);
            assert!(html.contains("nothing was changed"));
        }
        // The first submit only asks.
        let mut f = form.to_vec();
        f.push(("csrf", &s.csrf));
        let (status, html) = post_form(&api, &s, credit, &f).await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            html.contains("Credit 3.00 to account acct_f as a top-up."),
            "{html}"
        );
        assert_eq!(balance(&api, "acct_f").await, "0.00");
        // Confirmed: applied, under the admin's actor; sent again: applied once.
        f.push(("confirmed", "yes"));
        for _ in 0..2 {
            let (status, _) = post_form(&api, &s, credit, &f).await;
            assert_eq!(status, StatusCode::SEE_OTHER);
        }
        assert_eq!(balance(&api, "acct_f").await, "3.00");
        let shown = page(&api, &s.cookie, "/console/accounts/acct_f").await;
        assert!(shown.contains("already applied"), "the replay is said so");
        let entries = top_ups(&api, "acct_f").await;
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0]["actor"], "key:env");
        // A bad amount: a clear refusal, nothing written.
        let (status, html) = post_form(
            &api,
            &s,
            credit,
            &[
                ("kind", "top_up"),
                ("amount", "-1"),
                ("idempotency_key", "console-f2"),
                ("csrf", &s.csrf),
                ("confirmed", "yes"),
            ],
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(html.contains("amount"), "{html}");
        assert_eq!(balance(&api, "acct_f").await, "3.00");
        // A metered debit's row says what it used.
        let usage =
            json!({"usage": {"meter": "linux-small", "seconds": 30}, "idempotency_key": "m1"});
        let debits = "/v1/accounts/acct_f/debits";
        api.post(&api.service, debits, usage).await.expect(201, "");
        let shown = page(&api, &s.cookie, "/console/accounts/acct_f").await;
        assert!(
            shown.contains("30 s of <code>linux-small</code>"),
            "{shown}"
        );

        // Block and unblock, with the reason recorded.
        let block = "/console/accounts/acct_f/block";
        let (status, _) = post_form(
            &api,
            &s,
            block,
            &[
                ("csrf", &s.csrf),
                ("blocked", "true"),
                ("reason", "chargeback"),
                ("confirmed", "yes"),
            ],
        )
        .await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert!(!api.get(&api.admin, "/v1/accounts/acct_f").await.body["blocked_at"].is_null());
        let (status, _) = post_form(
            &api,
            &s,
            block,
            &[
                ("csrf", &s.csrf),
                ("blocked", "false"),
                ("confirmed", "yes"),
            ],
        )
        .await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert!(api.get(&api.admin, "/v1/accounts/acct_f").await.body["blocked_at"].is_null());
        let events = api
            .get(
                &api.admin,
                "/v1/events?account_id=acct_f&type=operator.blocked",
            )
            .await;
        assert_eq!(events.body["events"][0]["data"]["reason"], "chargeback");

        // The audit from the console is remembered on the overview.
        let (status, _) = post_form(
            &api,
            &s,
            "/console/run/audit",
            &[("csrf", &s.csrf), ("confirmed", "yes")],
        )
        .await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert!(page(&api, &s.cookie, "/console").await.contains("Clean"));
        // Without --no-console the pages are served; with it, they are not.
        let off = api_served(
            b,
            holdfast_server::http::ServerOptions {
                console: false,
                ..test_options()
            },
        )
        .await
        .unwrap();
        let r = browser()
            .get(off.url("/console/login"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::NOT_FOUND);
    }
);

backend_test!(
    credits_from_the_console_raced_apply_once_each,
    |b| async move {
        let Some(api) = api(b).await else {
            return;
        };
        api.account("acct_r", "free").await;
        let s = std::sync::Arc::new(signed(&api, &api.admin).await);
        let api = std::sync::Arc::new(api);
        // 16 sends of one form (one key) and 16 forms of their own, all at once.
        let mut tasks = Vec::new();
        for i in 0..32 {
            let (api, s) = (api.clone(), s.clone());
            tasks.push(tokio::spawn(async move {
                let key = if i < 16 {
                    "console-same".to_owned()
                } else {
                    format!("console-own-{i}")
                };
                let form = [
                    ("kind", "top_up"),
                    ("amount", "0.25"),
                    ("idempotency_key", key.as_str()),
                    ("csrf", s.csrf.as_str()),
                    ("confirmed", "yes"),
                ];
                post_form(&api, &s, "/console/accounts/acct_r/credit", &form)
                    .await
                    .0
            }));
        }
        for t in tasks {
            assert_eq!(t.await.unwrap(), StatusCode::SEE_OTHER);
        }
        // One for the shared form and 16 of their own: 17 × 0.25.
        assert_eq!(balance(&api, "acct_r").await, "4.25");
        assert_eq!(top_ups(&api, "acct_r").await.len(), 17);
        assert_clean(api.engine.store()).await;
    }
);

backend_test!(
    the_webhooks_page_shows_no_token_of_an_endpoint_url,
    |b| async move {
        let hook = "webhooks_every_seconds = 1\n\n[[webhooks]]\nurl = \"http://127.0.0.1:9/in?token=s3cr3t\"\nsecret = \"s\"\n";
        let card = holdfast::testing::card_with(&[("webhooks_every_seconds = 1", hook)]);
        let Some(api) = api_with(b, card).await else {
            return;
        };
        let s = signed(&api, &api.admin).await;
        let html = page(&api, &s.cookie, "/console/webhooks").await;
        assert!(html.contains("http://127.0.0.1:9/in?token=***"), "{html}");
        assert!(!html.contains("s3cr3t"), "{html}");
    }
);

backend_test!(
    an_account_page_shows_the_periods_spending_under_its_rule,
    |b| async move {
        let Some(api) = api(b).await else {
            return;
        };
        let rule = serde_json::json!({ "limit": "4.00", "period": "day", "alerts": ["50%"] });
        let body = serde_json::json!({ "plan": "free", "spend": rule });
        api.put(&api.service, "/v1/accounts/spender", body)
            .await
            .expect(201, "");
        api.top_up("spender", "10.00", "t1").await;
        let debit = serde_json::json!({ "amount": "1.50", "idempotency_key": "d1" });
        api.post(&api.service, "/v1/accounts/spender/debits", debit)
            .await
            .expect(201, "");
        let s = signed(&api, &api.admin).await;
        let html = page(&api, &s.cookie, "/console/accounts/spender").await;
        assert!(html.contains("Spent this day"), "{html}");
        assert!(
            html.contains("1.50 of 4.00 (2.50 left), its own rule; told at 50%"),
            "{html}"
        );
        api.account("plain", "free").await;
        let html = page(&api, &s.cookie, "/console/accounts/plain").await;
        assert!(!html.contains("Spent this"), "no rule, no line: {html}");
    }
);
