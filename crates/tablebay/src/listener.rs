//! The accept loop of both listeners: HTTP/1.1 (hyper) with the limits `axum::serve` lacks, so that clients
//! that never authenticate cannot hold the server's connections or file descriptors.
//!
//! - **Header read timeout** (hyper's): a request head must be complete within it, counted from the connection's
//!   start or from the end of the previous response. A slowloris client (headers never finished) and an idle
//!   kept-alive connection are both closed after it.
//! - **Idle timeout**: the longest the server waits on a client that stopped in the middle of a request: for the
//!   next bytes of a request body ([`BodyTimeout`], the request fails with `tablebay_http::BODY_TIMEOUT`), or for
//!   a blocked response write to make progress ([`WriteTimeout`], the connection is closed). Time the server
//!   itself spends (a long commit, a multipart completion) never counts.
//! - **Connection limit** per listener, lowered to fit the open-file limit ([`ListenerLimits::fit_open_file_limit`]).
//!   At the limit, a new connection closes the connection that has been idle longest (no request in flight:
//!   a kept-alive connection between requests, or one whose request head has not arrived yet), so a flood of idle
//!   or slowloris connections churns among themselves while a client that sends its request promptly is served.
//!   Only when every connection has a request in flight is the new one refused (closed at once). When accepting
//!   fails because the process is out of file descriptors, the longest-idle connection is closed too.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, mpsc, watch};
use tokio::time::Sleep;
use tower::ServiceExt;

/// Timeouts and the connection limit of each listener.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListenerLimits {
    /// Time to receive a complete request head (also how long a kept-alive connection may wait for its next).
    pub header_read_timeout: Duration,
    /// Longest wait on a client in the middle of a request (body bytes, or reading the response).
    pub idle_timeout: Duration,
    /// Most open connections per listener.
    pub max_connections: usize,
}

impl Default for ListenerLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_connections: 4096,
        }
    }
}

/// File descriptors kept free for everything but client connections: the metadata database and its pool, blob
/// files being read or written, connections to a remote blob store, the listeners themselves.
const RESERVED_FDS: u64 = 256;
/// Fewest connections per listener, however low the open-file limit.
const MIN_CONNECTIONS: usize = 16;

impl ListenerLimits {
    /// These limits with `max_connections` lowered, if needed, so that both listeners at their limit still leave
    /// [`RESERVED_FDS`] of the process's open-file limit (`ulimit -n`) free. Also returns that limit when it
    /// lowered the connection limit. Only Linux tells the limit (`/proc/self/limits`); elsewhere unchanged.
    pub fn fit_open_file_limit(self) -> (Self, Option<u64>) {
        let Some(limit) = open_file_limit() else {
            return (self, None);
        };
        let fit = usize::try_from(limit.saturating_sub(RESERVED_FDS) / 2)
            .unwrap_or(usize::MAX)
            .max(MIN_CONNECTIONS);
        if fit < self.max_connections {
            (
                Self {
                    max_connections: fit,
                    ..self
                },
                Some(limit),
            )
        } else {
            (self, None)
        }
    }
}

/// The soft limit on open files; `None` when unlimited or not known.
fn open_file_limit() -> Option<u64> {
    parse_open_file_limit(&std::fs::read_to_string("/proc/self/limits").ok()?)
}

/// The soft limit of the `Max open files` line of `/proc/<pid>/limits`.
fn parse_open_file_limit(limits: &str) -> Option<u64> {
    limits
        .lines()
        .find_map(|line| line.strip_prefix("Max open files"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Serves `router` on `listener` with `limits` until `shutdown` resolves; then stops accepting, lets each open
/// connection finish the request it is serving, and returns when all are closed.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ListenerLimits,
    shutdown: impl Future<Output = ()>,
) {
    let registry = Arc::new(Registry::new());
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let (stop, stopped) = watch::channel(false);
    // Every connection task holds a sender; `recv` answers `None` once all are gone.
    let (open, mut all_closed) = mpsc::channel::<()>(1);
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, remote) = match accepted {
            Ok(pair) => pair,
            Err(e) => {
                accept_failed(&registry, &e).await;
                continue;
            }
        };
        let Some(admitted) = registry.admit(limits.max_connections) else {
            tracing::debug!(%remote, "connection refused: every connection has a request in flight");
            continue;
        };
        // TCP_NODELAY: a response's headers and body go out as separate writes; with Nagle on, the body waits for
        // the client's delayed ACK of the headers (40 ms on Linux) whenever the headers did not fill a segment.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        let connection = Connection {
            remote,
            router: router.clone(),
            idle_timeout: limits.idle_timeout,
            admitted,
        };
        tokio::spawn(connection.run(http.clone(), stream, stopped.clone(), open.clone()));
    }
    drop(listener);
    let _ = stop.send(true);
    drop(open);
    let _ = all_closed.recv().await;
}

/// What to do when `accept` fails: out of file descriptors (`EMFILE`/`ENFILE`, 24 and 23 on Linux and the
/// BSDs), close the longest-idle connection and retry soon; otherwise wait a little, as `axum::serve` does.
async fn accept_failed(registry: &Registry, e: &io::Error) {
    let out_of_fds = matches!(e.raw_os_error(), Some(23 | 24));
    if out_of_fds && registry.evict_longest_idle() {
        tracing::debug!("out of file descriptors: closed the longest-idle connection");
        tokio::time::sleep(Duration::from_millis(5)).await;
    } else {
        tracing::warn!(error = %e, "accepting a connection failed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One accepted connection and what serving it needs.
struct Connection {
    remote: SocketAddr,
    router: Router,
    idle_timeout: Duration,
    admitted: Admitted,
}

impl Connection {
    /// Serves the connection until the client closes it, a timeout or an eviction closes it, or shutdown ends it
    /// gracefully.
    async fn run(
        self,
        http: http1::Builder,
        stream: TcpStream,
        mut stopped: watch::Receiver<bool>,
        _open: mpsc::Sender<()>,
    ) {
        let Connection {
            remote,
            router,
            idle_timeout,
            admitted,
        } = self;
        let state = Arc::clone(&admitted.state);
        let service = hyper::service::service_fn(move |mut request: http::Request<Incoming>| {
            let busy = Busy::start(&state);
            // What `into_make_service_with_connect_info` adds: authorization reads the client address.
            request.extensions_mut().insert(ConnectInfo(remote));
            let request = request.map(|body| Body::new(BodyTimeout::new(body, idle_timeout)));
            let router = router.clone();
            async move {
                let response = router.oneshot(request).await?;
                Ok::<_, Infallible>(response.map(|body| busy.until_sent(body)))
            }
        });
        let connection = http.serve_connection(
            TokioIo::new(WriteTimeout::new(stream, idle_timeout)),
            service,
        );
        tokio::pin!(connection);
        // The guard `wait_for` answers with is not `Send`; it must not live across the graceful drain.
        let stop = async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        };
        let result = tokio::select! {
            result = connection.as_mut() => result,
            () = admitted.state.evicted.notified() => {
                tracing::debug!(%remote, "closed an idle connection to make room for a new one");
                return;
            }
            () = stop => {
                connection.as_mut().graceful_shutdown();
                connection.await
            }
        };
        if let Err(e) = result {
            tracing::debug!(%remote, error = %e, "connection ended");
        }
    }
}

/// The open connections of one listener.
struct Registry {
    /// The zero of [`ConnectionState::idle_since`].
    epoch: Instant,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    next_id: u64,
    connections: HashMap<u64, Arc<ConnectionState>>,
}

/// What the registry knows of a connection.
struct ConnectionState {
    epoch: Instant,
    /// Requests being served (hyper serves one at a time on HTTP/1.1; a count keeps the guard simple).
    in_flight: AtomicUsize,
    /// Milliseconds after the epoch when the connection last became idle (accepted, or a response sent).
    idle_since: AtomicU64,
    /// Notified when the connection is chosen to make room.
    evicted: Notify,
}

impl ConnectionState {
    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

impl Registry {
    fn new() -> Self {
        Self {
            epoch: Instant::now(),
            open: Mutex::new(Open::default()),
        }
    }

    /// Registers a new connection; at `max`, first closes the longest-idle one. `None` when every open
    /// connection has a request in flight.
    fn admit(self: &Arc<Self>, max: usize) -> Option<Admitted> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.connections.len() >= max && !open.evict_longest_idle() {
            return None;
        }
        let id = open.next_id;
        open.next_id += 1;
        let state = Arc::new(ConnectionState {
            epoch: self.epoch,
            in_flight: AtomicUsize::new(0),
            idle_since: AtomicU64::new(0),
            evicted: Notify::new(),
        });
        state.idle_since.store(state.now(), Ordering::Relaxed);
        open.connections.insert(id, Arc::clone(&state));
        Some(Admitted {
            registry: Arc::clone(self),
            id,
            state,
        })
    }

    /// Closes the longest-idle connection; false when none is idle.
    fn evict_longest_idle(&self) -> bool {
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .evict_longest_idle()
    }
}

impl Open {
    fn evict_longest_idle(&mut self) -> bool {
        // A request that starts between this check and the close is cut off; its client sees a closed
        // connection, as after any server-side keep-alive close, and retries.
        let victim = self
            .connections
            .iter()
            .filter(|(_, c)| c.in_flight.load(Ordering::Acquire) == 0)
            .min_by_key(|(_, c)| c.idle_since.load(Ordering::Relaxed))
            .map(|(id, _)| *id);
        match victim.and_then(|id| self.connections.remove(&id)) {
            Some(connection) => {
                connection.evicted.notify_one();
                true
            }
            None => false,
        }
    }
}

/// A registered connection; leaves the registry when dropped.
struct Admitted {
    registry: Arc<Registry>,
    id: u64,
    state: Arc<ConnectionState>,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.registry
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .connections
            .remove(&self.id);
    }
}

/// A request in flight on a connection, from the request head until its response is sent (or abandoned).
struct Busy(Arc<ConnectionState>);

impl Busy {
    fn start(state: &Arc<ConnectionState>) -> Self {
        state.in_flight.fetch_add(1, Ordering::AcqRel);
        Self(Arc::clone(state))
    }

    /// The response body, holding the request in flight until hyper drops it (after its last byte).
    fn until_sent(self, body: Body) -> Body {
        Body::new(body.map_frame(move |frame| {
            let _in_flight = &self;
            frame
        }))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.idle_since.store(self.0.now(), Ordering::Relaxed);
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A deadline that runs only while something waits on the client, restarting with each wait.
struct Stall {
    limit: Duration,
    timer: Option<Pin<Box<Sleep>>>,
    waiting: bool,
}

impl Stall {
    fn new(limit: Duration) -> Self {
        Self {
            limit,
            timer: None,
            waiting: false,
        }
    }

    /// The client made progress.
    fn progress(&mut self) {
        self.waiting = false;
    }

    /// The client made none (the I/O is pending): whether this wait has now lasted the limit. Registers the
    /// task to be woken when it will have.
    fn expired(&mut self, cx: &mut Context<'_>) -> bool {
        let deadline = tokio::time::Instant::now() + self.limit;
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if !self.waiting {
            timer.as_mut().reset(deadline);
            self.waiting = true;
        }
        timer.as_mut().poll(cx).is_ready()
    }
}

/// A request body that fails with `tablebay_http::BODY_TIMEOUT` when the client sends nothing for the idle
/// timeout while the handler waits for it.
struct BodyTimeout {
    inner: Incoming,
    stall: Stall,
    expired: bool,
}

impl BodyTimeout {
    fn new(inner: Incoming, limit: Duration) -> Self {
        Self {
            inner,
            stall: Stall::new(limit),
            expired: false,
        }
    }
}

impl hyper::body::Body for BodyTimeout {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if this.expired {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                this.stall.progress();
                Poll::Ready(frame.map(|r| r.map_err(Into::into)))
            }
            Poll::Pending if this.stall.expired(cx) => {
                this.expired = true;
                Poll::Ready(Some(Err(tablebay_http::BODY_TIMEOUT.into())))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.expired || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The connection's socket, whose writes fail (closing the connection) when the client reads nothing of a
/// response for the idle timeout.
struct WriteTimeout {
    stream: TcpStream,
    stall: Stall,
}

impl WriteTimeout {
    fn new(stream: TcpStream, limit: Duration) -> Self {
        Self {
            stream,
            stall: Stall::new(limit),
        }
    }

    fn check<T>(
        &mut self,
        written: Poll<io::Result<T>>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<T>> {
        match written {
            Poll::Ready(result) => {
                self.stall.progress();
                Poll::Ready(result)
            }
            Poll::Pending if self.stall.expired(cx) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client read nothing of the response within the idle timeout",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for WriteTimeout {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for WriteTimeout {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.check(written, cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.check(written, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_file_limit_of_proc_limits() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max processes             63711                63711                processes \n\
                      Max open files            1024                 524288               files     \n";
        assert_eq!(parse_open_file_limit(limits), Some(1024));
        let unlimited =
            "Max open files            unlimited            unlimited            files     \n";
        assert_eq!(parse_open_file_limit(unlimited), None);
        assert_eq!(parse_open_file_limit(""), None);
    }

    #[test]
    fn eviction_picks_the_longest_idle_connection() {
        let registry = Arc::new(Registry::new());
        let first = registry.admit(2).unwrap();
        let second = registry.admit(2).unwrap();
        first.state.idle_since.store(5, Ordering::Relaxed);
        second.state.idle_since.store(1, Ordering::Relaxed);
        let busy = Busy::start(&second.state);
        // `second` has been idle longer but has a request in flight: `first` goes.
        let third = registry.admit(2).unwrap();
        assert!(
            !registry
                .open
                .lock()
                .unwrap()
                .connections
                .contains_key(&first.id)
        );
        // Both remaining are busy: a new connection is refused.
        let _also_busy = Busy::start(&third.state);
        assert!(registry.admit(2).is_none());
        drop(busy);
        let fourth = registry.admit(2).unwrap();
        let open = registry.open.lock().unwrap();
        assert!(!open.connections.contains_key(&second.id));
        assert!(
            open.connections.contains_key(&third.id) && open.connections.contains_key(&fourth.id)
        );
    }
}
