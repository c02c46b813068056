//! Test support for the HTTP suites: the real server on port 0 over a fresh database of
//! each backend, a reqwest client, and one key of each role.
#![allow(dead_code)]

pub mod cluster;
pub mod faults;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use holdfast::testing::{Backend, TestDb, engine_with};
use holdfast::{Engine, RateCard};
use holdfast_server::http::{Server, ServerOptions, start};
use reqwest::Method;
use serde_json::{Value, json};

pub const ADMIN_KEY: &str = "hf_test_admin_key_from_the_environment";

pub struct Api {
    pub db: TestDb,
    pub engine: Engine,
    pub server: Option<Server>,
    pub base: String,
    pub client: reqwest::Client,
    pub admin: String,
    pub service: String,
    pub worker: String,
}

/// An answer: status and JSON body (`Null` when empty or not JSON).
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
}

impl Reply {
    /// The error code of an error body.
    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }

    /// The message of an error body.
    pub fn message(&self) -> &str {
        self.body["error"]["message"].as_str().unwrap_or("")
    }

    /// Asserts the status and, for errors, the code and the body's shape.
    #[track_caller]
    pub fn expect(&self, status: u16, code: &str) -> &Value {
        assert_eq!(self.status, status, "{:#}", self.body);
        if !code.is_empty() {
            assert_eq!(self.code(), code, "{:#}", self.body);
            let message = self.body["error"]["message"].as_str().unwrap_or("");
            assert!(
                !message.is_empty(),
                "error without a message: {}",
                self.body
            );
        }
        &self.body
    }
}

pub async fn api(backend: Backend) -> Option<Api> {
    api_with(backend, RateCard::builtin()).await
}

pub async fn api_with(backend: Backend, card: RateCard) -> Option<Api> {
    api_opts(backend, card, Duration::from_secs(20)).await
}

/// As [`api_with`], with the server's request time limit.
pub async fn api_opts(backend: Backend, card: RateCard, request_timeout: Duration) -> Option<Api> {
    let (db, engine) = engine_with(backend, card).await?;
    let opts = ServerOptions {
        request_timeout,
        ..test_options()
    };
    Some(serve_api(db, engine, opts).await)
}

/// The options of the suites' servers: the environment's admin key, a 20 s time limit,
/// no passes.
pub fn test_options() -> ServerOptions {
    ServerOptions {
        admin_key: Some(ADMIN_KEY.to_owned()),
        request_timeout: Duration::from_secs(20),
        run_passes: false,
        ..ServerOptions::default()
    }
}

/// As [`api`], with the server's options.
pub async fn api_served(backend: Backend, opts: ServerOptions) -> Option<Api> {
    let (db, engine) = engine_with(backend, RateCard::builtin()).await?;
    Some(serve_api(db, engine, opts).await)
}

/// Serves `engine` (over `db`) with `opts`, with a new service key and worker key.
pub async fn serve_api(db: TestDb, engine: Engine, opts: ServerOptions) -> Api {
    let service = holdfast_server::http::auth::new_key();
    let worker = holdfast_server::http::auth::new_key();
    engine
        .store()
        .create_key("service", &service)
        .await
        .unwrap();
    engine.store().create_key("worker", &worker).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let admin = opts.admin_key.clone().unwrap_or_default();
    let server = start(engine.clone(), listener, opts).await.unwrap();
    let base = format!("http://{}", server.addr());
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    Api {
        db,
        engine,
        server: Some(server),
        base,
        client,
        admin,
        service,
        worker,
    }
}

impl Api {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Sends a request built by the caller.
    pub async fn send(&self, req: reqwest::RequestBuilder) -> Reply {
        let res = req.send().await.expect("request");
        let status = res.status().as_u16();
        let bytes = res.bytes().await.expect("body");
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Reply { status, body }
    }

    pub async fn call(&self, method: Method, key: &str, path: &str, body: Option<Value>) -> Reply {
        let mut req = self.client.request(method, self.url(path));
        if !key.is_empty() {
            req = req.bearer_auth(key);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        self.send(req).await
    }

    pub async fn get(&self, key: &str, path: &str) -> Reply {
        self.call(Method::GET, key, path, None).await
    }

    pub async fn post(&self, key: &str, path: &str, body: Value) -> Reply {
        self.call(Method::POST, key, path, Some(body)).await
    }

    pub async fn put(&self, key: &str, path: &str, body: Value) -> Reply {
        self.call(Method::PUT, key, path, Some(body)).await
    }

    /// Creates an account on `plan`.
    pub async fn account(&self, id: &str, plan: &str) -> Value {
        let r = self
            .put(
                &self.service,
                &format!("/v1/accounts/{id}"),
                json!({ "plan": plan }),
            )
            .await;
        r.expect(201, "").clone()
    }

    pub async fn top_up(&self, id: &str, amount: &str, key: &str) -> Value {
        let r = self
            .post(
                &self.service,
                &format!("/v1/accounts/{id}/top-ups"),
                json!({ "amount": amount, "idempotency_key": key }),
            )
            .await;
        r.expect(201, "").clone()
    }

    pub async fn submit(&self, account: &str, kind: &str, key: &str) -> Reply {
        self.post(
            &self.service,
            "/v1/jobs",
            json!({ "account_id": account, "kind": kind, "idempotency_key": key }),
        )
        .await
    }

    /// Leases from `lane` without waiting; the answer must be a job.
    pub async fn lease(&self, lane: &str, lease_seconds: i64) -> (String, String) {
        let r = self
            .post(
                &self.worker,
                &format!("/v1/lanes/{lane}/lease"),
                json!({ "worker_id": "w1", "lease_seconds": lease_seconds }),
            )
            .await;
        let body = r.expect(200, "");
        (
            body["job"]["job_id"].as_str().unwrap().to_owned(),
            body["lease_token"].as_str().unwrap().to_owned(),
        )
    }

    pub async fn get_account(&self, id: &str) -> Value {
        self.get(&self.service, &format!("/v1/accounts/{id}"))
            .await
            .expect(200, "")
            .clone()
    }

    /// The audit over HTTP must find nothing.
    pub async fn assert_clean(&self) {
        let r = self.get(&self.admin, "/v1/admin/audit").await;
        let body = r.expect(200, "");
        assert_eq!(body["ok"], json!(true), "audit: {body:#}");
        assert_eq!(body["violations"], json!([]));
    }

    pub async fn stop(mut self) {
        if let Some(server) = self.server.take() {
            server.shutdown().await.unwrap();
        }
    }
}

/// The JSON number at `v[field]` as i64.
#[track_caller]
pub fn int(v: &Value, field: &str) -> i64 {
    v[field]
        .as_i64()
        .unwrap_or_else(|| panic!("{field} in {v:#}"))
}

impl Api {
    /// The events a query lists once `n` are visible. On PostgreSQL an event shows only
    /// when every transaction older than it has ended (anywhere in the cluster), so a
    /// reader may see it a moment after its writer committed; wait for that, boundedly.
    pub async fn events(&self, query: &str, n: usize) -> Vec<Value> {
        for _ in 0..100 {
            let r = self
                .get(&self.service, &format!("/v1/events?{query}"))
                .await;
            let events = r.expect(200, "")["events"].as_array().unwrap().clone();
            if events.len() >= n {
                return events;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("fewer than {n} events for {query}");
    }
}

/// `holdfast serve` on port 0 as a child process: its log lines and stdout on one channel.
pub struct Serving {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
}

impl Serving {
    pub fn start(database: &str) -> Serving {
        Serving::spawn(database, &[], None)
    }

    /// `holdfast serve --listen 127.0.0.1:0` with extra arguments and, when given, an
    /// admin key in the environment.
    pub fn spawn(database: &str, args: &[&str], admin_key: Option<&str>) -> Serving {
        Serving::spawn_under(&[], database, args, admin_key)
    }

    /// [`Serving::spawn`] run by another program: `wrapper` (e.g. `strace … --`) comes
    /// first, then the `holdfast` binary and its arguments.
    pub fn spawn_under(
        wrapper: &[&str],
        database: &str,
        args: &[&str],
        admin_key: Option<&str>,
    ) -> Serving {
        let holdfast = env!("CARGO_BIN_EXE_holdfast");
        let mut command = match wrapper.split_first() {
            Some((program, wrapper_args)) => {
                let mut command = Command::new(program);
                command.args(wrapper_args).arg(holdfast);
                command
            }
            None => Command::new(holdfast),
        };
        command
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args);
        match admin_key {
            Some(key) => command.env("HOLDFAST_ADMIN_KEY", key),
            None => command.env_remove("HOLDFAST_ADMIN_KEY"),
        };
        let mut child = command
            .env("HOLDFAST_DATABASE_URL", database)
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel();
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        for stream in [
            Box::new(out) as Box<dyn std::io::Read + Send>,
            Box::new(err),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    let _ = tx.send(line);
                }
            });
        }
        Serving { child, lines }
    }

    /// Lines until one contains `needle` (bounded).
    pub fn until(&self, needle: &str) -> Vec<String> {
        let mut seen = vec![];
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(60)) {
            let done = line.contains(needle);
            seen.push(line);
            if done {
                return seen;
            }
        }
        panic!("no line with {needle:?} in {seen:#?}");
    }

    /// The process, for a test that signals it itself.
    pub fn child(&mut self) -> &mut std::process::Child {
        &mut self.child
    }

    /// The child process's id (the wrapper's, under [`Serving::spawn_under`]).
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the child to exit by itself.
    pub fn wait(mut self) -> std::process::ExitStatus {
        self.child.wait().unwrap()
    }

    /// SIGKILL: the process dies where it stands, nothing flushed or finished.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, then the exit status and every line not yet read (both streams end).
    pub fn terminate(self) -> (std::process::ExitStatus, Vec<String>) {
        self.stop_with("TERM")
    }

    /// `kill -SIGNAL` (`TERM`, `INT`), then the exit status and every line not yet read.
    pub fn stop_with(mut self, signal: &str) -> (std::process::ExitStatus, Vec<String>) {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args([&format!("-{signal}"), &pid])
                .status()
                .unwrap()
                .success()
        );
        let status = self.child.wait().unwrap();
        (status, self.lines.iter().collect())
    }
}

/// A `serve` still running when its test ends (a failed assertion) is killed, not left
/// behind; after [`Serving::kill`] or [`Serving::terminate`] there is nothing to do.
impl Drop for Serving {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `holdfast serve` on `url` with the rate card at `card`, a 5 s request time limit, then
/// `extra` arguments, and `admin` as the environment's admin key: the process and its
/// base URL, once it listens.
pub fn serve_with_card(
    url: &str,
    card: &std::path::Path,
    admin: &str,
    extra: &[&str],
) -> (Serving, String) {
    let mut args = vec![
        "--rate-card",
        card.to_str().unwrap(),
        "--request-timeout-seconds",
        "5",
    ];
    args.extend_from_slice(extra);
    let serving = Serving::spawn(url, &args, Some(admin));
    let base = format!("http://{}", listen_address(&serving.until("listening on")));
    (serving, base)
}

pub fn listen_address(lines: &[String]) -> String {
    let line = lines.last().unwrap();
    let at = line.find("listening on ").unwrap() + "listening on ".len();
    line[at..].split_whitespace().next().unwrap().to_owned()
}

/// The `status` of each item of a batch answer (`{"results": [{"status", …}, …]}`).
pub fn statuses(body: &Value) -> Vec<u64> {
    body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["status"].as_u64().expect("status"))
        .collect()
}
