//! PostgreSQL behind more than one host, as libpq reads it:
//! `postgres://h1:5432,h2:5433/db?target_session_attrs=read-write`. New connections go
//! to the first host in the list that is acceptable (`any`: reachable; `read-write`:
//! `transaction_read_only` is off; `primary`: not in recovery). When a connection is lost
//! or lands on a host that is no longer acceptable (after a failover the old primary comes
//! back as a standby), the pool is pointed at the first acceptable host again.
//!
//! sqlx 0.9.0 opens a pool's connections from one `PgConnectOptions` (it has no custom
//! connector yet), so this module works around the pool rather than inside it: the
//! pool's `after_connect` and `before_acquire` hooks check each connection it hands out
//! and mark the pool as suspect when one fails, and the next transaction to begin probes
//! the hosts in order and gives the pool the acceptable one's options
//! (`Pool::set_connect_options`). While no host is acceptable, a transaction is refused
//! at once as unavailable (a 503 with Retry-After over HTTP). A single-host URL does not
//! come here: it is opened exactly as before.

use std::str::FromStr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions as _, Connection as _, PgConnection, PgPool};

use crate::error::StoreError;

/// Which hosts a connection may stay on (libpq's `target_session_attrs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionAttrs {
    /// Any host that accepts the connection (libpq's default).
    Any,
    /// A host whose sessions may write (`SHOW transaction_read_only` is `off`).
    ReadWrite,
    /// A host that is not a standby (`pg_is_in_recovery()` is false).
    Primary,
}

impl SessionAttrs {
    fn parse(text: &str) -> Result<SessionAttrs, StoreError> {
        match text {
            "any" => Ok(SessionAttrs::Any),
            "read-write" => Ok(SessionAttrs::ReadWrite),
            "primary" => Ok(SessionAttrs::Primary),
            "read-only" | "standby" | "prefer-standby" => Err(bad_url(format!(
                "target_session_attrs={text} is not supported: holdfast writes, use \
                 read-write, primary or any"
            ))),
            other => Err(bad_url(format!(
                "unknown target_session_attrs={other:?}: use read-write, primary or any"
            ))),
        }
    }
}

fn bad_url(why: String) -> StoreError {
    StoreError::Config(format!("bad database URL: {why}"))
}

/// A multi-host URL, parsed: one set of options per host (the user, password, database
/// and every other parameter carried to each), in the URL's order.
#[derive(Debug, Clone)]
pub struct MultiHost {
    pub hosts: Vec<PgConnectOptions>,
    pub attrs: SessionAttrs,
}

impl MultiHost {
    /// `Ok(None)` for a URL with one host (opened as before); the hosts of a URL with a
    /// comma-separated host list; a configuration error for a malformed one.
    pub fn parse(url: &str) -> Result<Option<MultiHost>, StoreError> {
        let Some((scheme @ ("postgres" | "postgresql"), rest)) = url.split_once("://") else {
            return Ok(None);
        };
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(authority_end);
        let (userinfo, host_list) = match authority.rfind('@') {
            Some(at) => (&authority[..=at], &authority[at + 1..]),
            None => ("", authority),
        };
        if !host_list.contains(',') {
            return Ok(None);
        }
        let addresses = host_list
            .split(',')
            .map(parse_address)
            .collect::<Result<Vec<_>, _>>()?;
        let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
        let (attrs, query) = take_session_attrs(query)?;
        // Everything but the hosts is read by sqlx, once, from a single-host URL.
        let query = if query.is_empty() {
            String::new()
        } else {
            format!("?{query}")
        };
        let base =
            PgConnectOptions::from_str(&format!("{scheme}://{userinfo}placeholder{path}{query}"))
                .map_err(|e| bad_url(e.to_string()))?;
        let hosts = addresses
            .into_iter()
            .map(|(host, port)| base.clone().host(&host).port(port))
            .collect();
        Ok(Some(MultiHost { hosts, attrs }))
    }
}

/// `host`, `host:port` or `[v6]`/`[v6]:port`; the port defaults to 5432.
fn parse_address(text: &str) -> Result<(String, u16), StoreError> {
    let (host, port) = if let Some(v6) = text.strip_prefix('[') {
        let (host, after) = v6
            .split_once(']')
            .ok_or_else(|| bad_url(format!("host {text:?} opens a [ it does not close")))?;
        match after {
            "" => (host, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return Err(bad_url(format!("host {text:?}: junk after ]"))),
            },
        }
    } else {
        match text.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    if host.is_empty() {
        return Err(bad_url(format!("an empty host in the list ({text:?})")));
    }
    let port = match port {
        None => 5432,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&p| p != 0)
            .ok_or_else(|| bad_url(format!("host {text:?}: port {p:?} is not a port")))?,
    };
    Ok((host.to_owned(), port))
}

/// `target_session_attrs` out of a query string (sqlx does not know it), default `any`.
fn take_session_attrs(query: &str) -> Result<(SessionAttrs, String), StoreError> {
    let mut attrs = SessionAttrs::Any;
    let mut kept = vec![];
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("target_session_attrs", value)) => attrs = SessionAttrs::parse(value)?,
            _ => kept.push(pair),
        }
    }
    Ok((attrs, kept.join("&")))
}

/// Whether this connection's server is acceptable under `attrs`; also the liveness check
/// (it is a round trip either way).
async fn acceptable(conn: &mut PgConnection, attrs: SessionAttrs) -> Result<bool, sqlx::Error> {
    match attrs {
        SessionAttrs::Any => conn.ping().await.map(|()| true),
        SessionAttrs::ReadWrite => {
            let read_only: String = sqlx::query_scalar("SHOW transaction_read_only")
                .fetch_one(&mut *conn)
                .await?;
            Ok(read_only == "off")
        }
        SessionAttrs::Primary => {
            let standby: bool = sqlx::query_scalar("SELECT pg_is_in_recovery()")
                .fetch_one(&mut *conn)
                .await?;
            Ok(!standby)
        }
    }
}

/// Follows the acceptable host for one pool.
#[derive(Debug)]
pub struct Failover {
    hosts: Vec<PgConnectOptions>,
    attrs: SessionAttrs,
    /// The longest one host may take to connect and answer during a probe before a
    /// transaction (the pool's acquire timeout: the probing request waits at most that
    /// per host, the others do not wait for it).
    probe_timeout: Duration,
    /// A connection failed its check, or a transaction could not begin: probe before the
    /// next one begins.
    suspect: AtomicBool,
    /// One probe at a time; the others begin on the pool as it stands.
    probing: tokio::sync::Mutex<()>,
    /// The last probe that found no acceptable host, and why: repeated no sooner than
    /// [`Failover::REPROBE_AFTER`], each transaction meanwhile refused with that reason.
    last_failure: Mutex<Option<(Instant, String)>>,
}

impl Failover {
    const REPROBE_AFTER: Duration = Duration::from_millis(200);
    /// At start no request waits: each host gets at least this long to answer (a busy
    /// machine takes more than `serve`'s 500 ms acquire timeout to open a connection).
    const START_PROBE_TIMEOUT: Duration = Duration::from_secs(5);

    /// `acquire_timeout`: how long each host may take to answer a probe.
    pub fn new(multi: MultiHost, acquire_timeout: Duration) -> Failover {
        Failover {
            probe_timeout: acquire_timeout,
            hosts: multi.hosts,
            attrs: multi.attrs,
            suspect: AtomicBool::new(false),
            probing: tokio::sync::Mutex::new(()),
            last_failure: Mutex::new(None),
        }
    }

    /// Makes the pool check every connection it opens or hands out, marking the pool
    /// suspect when one fails (the check replaces sqlx's ping before acquire).
    pub fn hook(self: &std::sync::Arc<Self>, options: PgPoolOptions) -> PgPoolOptions {
        let (on_connect, on_acquire) = (self.clone(), self.clone());
        options
            .test_before_acquire(false)
            .after_connect(move |conn, _meta| {
                let failover = on_connect.clone();
                Box::pin(async move {
                    if acceptable(conn, failover.attrs).await? {
                        return Ok(());
                    }
                    failover.suspect();
                    Err(sqlx::Error::Protocol(format!(
                        "the host is not acceptable under target_session_attrs={:?}",
                        failover.attrs
                    )))
                })
            })
            .before_acquire(move |conn, _meta| {
                let failover = on_acquire.clone();
                Box::pin(async move {
                    let ok = acceptable(conn, failover.attrs).await.unwrap_or(false);
                    if !ok {
                        failover.suspect();
                    }
                    Ok(ok)
                })
            })
    }

    /// Something went wrong with the host the pool connects to.
    pub fn suspect(&self) {
        self.suspect.store(true, Ordering::Release);
    }

    /// The first acceptable host's options, found and opened once, for the pool to start
    /// on.
    pub async fn first(&self) -> Result<PgConnectOptions, StoreError> {
        let timeout = self.probe_timeout.max(Self::START_PROBE_TIMEOUT);
        self.find(timeout).await.map(|i| self.hosts[i].clone())
    }

    /// Before a transaction begins: when the pool is suspect, probe the hosts and point
    /// the pool at the first acceptable one. `Err(Unavailable)` when none is.
    pub async fn follow(&self, pool: &PgPool) -> Result<(), StoreError> {
        if !self.suspect.load(Ordering::Acquire) {
            return Ok(());
        }
        let Ok(_probing) = self.probing.try_lock() else {
            return Ok(()); // another transaction is probing; this one tries the pool
        };
        if let Some((at, why)) = &*self.last_failure.lock().expect("not poisoned")
            && at.elapsed() < Self::REPROBE_AFTER
        {
            return Err(StoreError::Unavailable(why.clone()));
        }
        match self.find(self.probe_timeout).await {
            Ok(i) => {
                pool.set_connect_options(self.hosts[i].clone());
                self.suspect.store(false, Ordering::Release);
                *self.last_failure.lock().expect("not poisoned") = None;
                tracing::info!(host = %address(&self.hosts[i]), "database: following this host");
                Ok(())
            }
            Err(e) => {
                let why = e.to_string();
                *self.last_failure.lock().expect("not poisoned") = Some((Instant::now(), why));
                Err(e)
            }
        }
    }

    /// The index of the first acceptable host, each tried for at most `timeout`.
    async fn find(&self, timeout: Duration) -> Result<usize, StoreError> {
        let mut refusals = vec![];
        for (i, host) in self.hosts.iter().enumerate() {
            let tried = tokio::time::timeout(timeout, self.try_host(host)).await;
            let why = match tried {
                Ok(Ok(true)) => return Ok(i),
                Ok(Ok(false)) => format!("not acceptable ({:?})", self.attrs),
                Ok(Err(e)) => e.to_string(),
                Err(_) => format!("no answer within {} ms", timeout.as_millis()),
            };
            refusals.push(format!("{}: {why}", address(host)));
        }
        Err(StoreError::Unavailable(format!(
            "no host is acceptable: {}",
            refusals.join("; ")
        )))
    }

    async fn try_host(&self, host: &PgConnectOptions) -> Result<bool, sqlx::Error> {
        let mut conn = host.connect().await?;
        let ok = acceptable(&mut conn, self.attrs).await;
        let _ = conn.close().await;
        ok
    }
}

fn address(host: &PgConnectOptions) -> String {
    format!("{}:{}", host.get_host(), host.get_port())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(url: &str) -> Vec<(String, u16)> {
        let multi = MultiHost::parse(url).unwrap().expect("a multi-host URL");
        multi
            .hosts
            .iter()
            .map(|h| (h.get_host().to_owned(), h.get_port()))
            .collect()
    }

    fn refusal(url: &str) -> String {
        match MultiHost::parse(url) {
            Err(StoreError::Config(why)) => why,
            other => panic!("{url}: {other:?}"),
        }
    }

    #[test]
    fn a_single_host_url_is_left_to_sqlx() {
        for url in [
            "postgres://u:p@h:5432/db",
            "postgres://h/db?target_session_attrs=read-write",
            "postgresql://h",
            "sqlite://a,b.db",
            "not a url",
        ] {
            assert!(MultiHost::parse(url).unwrap().is_none(), "{url}");
        }
    }

    #[test]
    fn hosts_come_in_order_with_their_ports_defaulting_to_5432() {
        assert_eq!(
            hosts("postgres://h1:5433,h2,10.0.0.3:6000/db"),
            [
                ("h1".to_owned(), 5433),
                ("h2".to_owned(), 5432),
                ("10.0.0.3".to_owned(), 6000)
            ]
        );
        assert_eq!(
            hosts("postgresql://[::1]:5433,[fe80::2]?sslmode=disable"),
            [("::1".to_owned(), 5433), ("fe80::2".to_owned(), 5432)]
        );
    }

    #[test]
    fn everything_but_the_hosts_is_carried_to_every_host() {
        let multi = MultiHost::parse(
            "postgres://bob:s%40cret@h1,h2:5433/books?sslmode=disable&application_name=hf&target_session_attrs=read-write",
        )
        .unwrap()
        .unwrap();
        assert_eq!(multi.attrs, SessionAttrs::ReadWrite);
        for host in &multi.hosts {
            assert_eq!(host.get_username(), "bob");
            assert_eq!(host.get_database(), Some("books"));
            assert_eq!(host.get_application_name(), Some("hf"));
            assert!(matches!(
                host.get_ssl_mode(),
                sqlx::postgres::PgSslMode::Disable
            ));
        }
        // the password is kept too (not readable back from the options: compare them)
        let again = MultiHost::parse("postgres://bob:other@h1,h2/books")
            .unwrap()
            .unwrap();
        assert_ne!(format!("{:?}", multi.hosts[0]), format!("{again:?}"));
    }

    #[test]
    fn session_attrs_default_to_any_like_libpq() {
        let url = |attrs: &str| format!("postgres://a,b/db{attrs}");
        let attrs = |u: String| MultiHost::parse(&u).unwrap().unwrap().attrs;
        assert_eq!(attrs(url("")), SessionAttrs::Any);
        assert_eq!(attrs(url("?target_session_attrs=any")), SessionAttrs::Any);
        assert_eq!(
            attrs(url("?target_session_attrs=primary")),
            SessionAttrs::Primary
        );
        assert!(refusal(&url("?target_session_attrs=prefer-standby")).contains("not supported"));
        assert!(refusal(&url("?target_session_attrs=read-only")).contains("not supported"));
        assert!(refusal(&url("?target_session_attrs=writable")).contains("unknown"));
    }

    #[test]
    fn a_malformed_host_list_is_a_clear_error() {
        for (url, says) in [
            ("postgres://h1,/db", "empty host"),
            ("postgres://,h2/db", "empty host"),
            ("postgres://h1:99999,h2/db", "not a port"),
            ("postgres://h1:0,h2/db", "not a port"),
            ("postgres://h1:x,h2/db", "not a port"),
            ("postgres://[::1,h2/db", "does not close"),
            ("postgres://[::1]x,h2/db", "junk"),
        ] {
            let why = refusal(url);
            assert!(why.contains(says), "{url}: {why}");
            assert!(why.starts_with("bad database URL"), "{url}: {why}");
        }
    }
}
