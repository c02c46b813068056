//! The connections of `holdfast serve`: HTTP/1.1 by hyper, with a bound on the header
//! section and a time limit for reading it, so a slow or hostile client cannot hold a
//! connection open for nothing or make the server buffer without bound. (axum's own
//! `serve` sets neither.) Stopping is graceful: no new connections, each open one ends
//! after the request it is serving.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::serve::Listener;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::time::Sleep;
use tower::ServiceExt;

/// The most bytes of a request line and headers together; over it, 431.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
/// The most headers of a request; over it, 431.
pub const MAX_HEADERS: usize = 100;

/// The most connections served at once unless `--max-connections` says otherwise.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 1024;

/// Bounds on what a connection may hold the server to.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// The longest a client may take to send a request's header section, from the
    /// connection's start or the end of the previous response (so also the longest an
    /// idle keep-alive connection stays open).
    pub header_read_timeout: Duration,
    /// The most connections open at once: at the cap, the server accepts no more until
    /// one closes (the next wait in the kernel's listen queue).
    pub max_connections: u32,
    /// The longest an answer may wait for its client to read more of it: a client that
    /// stops reading that long is disconnected, so it cannot hold a connection's place
    /// (or a CSV export's) for ever.
    pub write_stall_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_read_timeout: Duration::from_secs(10),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            write_stall_timeout: Duration::from_secs(30),
        }
    }
}

/// The HTTP/1.1 settings of every connection.
fn builder(limits: ConnectionLimits) -> http1::Builder {
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_header_size(MAX_HEADER_BYTES)
        .max_headers(MAX_HEADERS);
    builder
}

/// Serves `app` on `listener` until `stop` turns true, then lets every open connection
/// finish the request it is on.
pub async fn serve(
    mut listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    mut stop: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let builder = builder(limits);
    let graceful = GracefulShutdown::new();
    let open = Arc::new(Semaphore::new(limits.max_connections as usize));
    loop {
        // A place for the next connection first: at the cap, accept nothing.
        let place = tokio::select! {
            place = open.clone().acquire_owned() => place.expect("never closed"),
            _ = stop.wait_for(|down| *down) => break,
        };
        let stream = tokio::select! {
            (stream, peer) = Listener::accept(&mut listener) => (stream, peer),
            _ = stop.wait_for(|down| *down) => break,
        };
        let (stream, peer) = stream;
        // The peer's address for every request of the connection (the console's sign-in
        // pause is per client address).
        let app = app
            .clone()
            .map_request(move |mut req: hyper::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(ConnectInfo(peer));
                req
            });
        let service = TowerToHyperService::new(app);
        let stream = WriteDeadline::new(stream, limits.write_stall_timeout);
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(place);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// A connection whose writes must make progress: a write that waits on its client (the
/// client's receive window is closed: it stopped reading) for longer than `limit` fails,
/// and hyper closes the connection. Reads are untouched (the header read timeout bounds
/// those).
struct WriteDeadline<S> {
    inner: S,
    limit: Duration,
    /// Since when the current write has waited, as a timer running out at the limit.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<S> WriteDeadline<S> {
    fn new(inner: S, limit: Duration) -> Self {
        WriteDeadline {
            inner,
            limit,
            stalled: None,
        }
    }

    /// The outcome of a write that returned `written`: progress resets the timer; a wait
    /// starts it, and one past the limit is an error.
    fn after<T>(
        &mut self,
        cx: &mut Context<'_>,
        written: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if written.is_ready() {
            self.stalled = None;
            return written;
        }
        let limit = self.limit;
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client stopped reading the answer",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteDeadline<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.after(cx, written)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.after(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let flushed = Pin::new(&mut self.inner).poll_flush(cx);
        self.after(cx, flushed)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
