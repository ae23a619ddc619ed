//! The operator's one HTTP stack (axum): `/healthz`, `/livez` and `/readyz`
//! on the plain probe address, and over TLS on the secure address the
//! probes again, `/metrics` and (hub) the REST API of [`super::rest`].
//!
//! The certificate comes from `--tls-cert-file`/`--tls-private-key-file`
//! (e.g. a mounted `kubernetes.io/tls` Secret), or is generated at start and
//! self-signed when none is given (logged as such).
//!
//! Both servers face clients nobody vetted (docs/reliability.md, "Who can
//! reach the operator's HTTP servers"), so [`serve`] bounds what each
//! connection may cost and for how long ([`HttpLimits`]): a connection cap
//! and a per-address share of it, kept fair by [`places`] (a newcomer
//! takes the place of an idle stranger from the address holding the most;
//! a caller the authentication layer admitted keeps its place), a
//! TLS-handshake timeout, hyper's header-read timeout (also the
//! keep-alive idle limit) with its timer, a cap on the request head
//! (hyper's read buffer), a write timeout per response, a maximum age and
//! request count per connection ([`conn`]), and exponential back-off when
//! accepting fails (EMFILE). Fleet-sized bodies also hold a
//! [`ResponseSlots`] slot until they are written.

mod conn;
mod places;
mod state;

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;

use self::places::{Admission, Places, Refusal};
use super::metrics::{CONTENT_TYPE, Metrics};
use super::rest::{Auth, READ_METRICS, ResponseSlots, authenticated};
use crate::fleet::duration::parse_duration;

/// Default of `--http-max-connections`.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 1024;
/// Default of `--http-max-connections-per-peer`.
pub const DEFAULT_MAX_CONNECTIONS_PER_PEER: u32 = 64;
/// Connections the plain-HTTP probe server holds at once: the kubelet's
/// probes need a few.
pub const PROBE_MAX_CONNECTIONS: usize = 64;
/// Connections one address may hold on the probe port: the kubelet opens
/// one per probe (liveness, readiness) and closes it.
pub const PROBE_MAX_CONNECTIONS_PER_PEER: usize = 8;
/// File descriptors the HTTPS server's connection cap leaves free: the
/// probe server's connections and the process's own (API server
/// connections, files).
const RESERVED_FDS: u64 = PROBE_MAX_CONNECTIONS as u64 + 128;
/// First pause after a failed accept; doubled per failure in a row.
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(5);
/// Longest pause after failed accepts.
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);
/// How often a server at its connection cap, or refusing an address over
/// its share, says so in the log, at most.
const FULL_LOG_EVERY: Duration = Duration::from_secs(60);

/// What the operator's HTTP servers allow a client (flags of
/// `fleet-operator`); docs/reliability.md gives the reasoning and the
/// memory each default bounds.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct HttpLimits {
    /// HTTPS connections held at once (the probe port holds at most 64).
    /// At the cap a new client takes the place of an idle connection that
    /// has not authenticated, from the address holding the most, when its
    /// own address holds fewer (else it is closed at once); when no
    /// connection may give way it waits in the kernel's accept queue.
    /// Lowered to fit the process's open-file limit.
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS, value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
    pub http_max_connections: u32,

    /// Connections one client address may hold at once (on the probe port
    /// at most 8); its further connections are closed at once, before any
    /// TLS handshake.
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS_PER_PEER, value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
    pub http_max_connections_per_peer: u32,

    /// Age at which a connection is closed (each within ±10 % of it): at
    /// once when idle, after its response when answering.
    #[arg(long, default_value = "5m", value_parser = parse_timeout)]
    pub http_max_connection_age: Duration,

    /// Requests one connection may send; the response to its last says
    /// `Connection: close`.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    pub http_max_requests_per_connection: u32,

    /// Time a client has to finish the TLS handshake.
    #[arg(long, default_value = "10s", value_parser = parse_timeout)]
    pub tls_handshake_timeout: Duration,

    /// Time a client has to send a request's line and headers; an idle
    /// keep-alive connection is closed after it too.
    #[arg(long, default_value = "10s", value_parser = parse_timeout)]
    pub http_header_read_timeout: Duration,

    /// Time a response may take, from its request's headers to its last
    /// byte written; a client reading slower is disconnected.
    #[arg(long, default_value = "60s", value_parser = parse_timeout)]
    pub http_write_timeout: Duration,

    /// Largest request line plus headers in bytes (larger: 431).
    #[arg(long, default_value_t = 16_384, value_parser = clap::value_parser!(u32).range(8_192..=1_048_576))]
    pub http_max_header_bytes: u32,

    /// Fleet-sized responses (REST API bodies; /metrics scrapes) built or
    /// being sent at once, each; more wait up to 10s, then get 503.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub http_max_inflight_responses: u32,
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            http_max_connections: DEFAULT_MAX_CONNECTIONS,
            http_max_connections_per_peer: DEFAULT_MAX_CONNECTIONS_PER_PEER,
            http_max_connection_age: Duration::from_secs(300),
            http_max_requests_per_connection: 1000,
            tls_handshake_timeout: Duration::from_secs(10),
            http_header_read_timeout: Duration::from_secs(10),
            http_write_timeout: Duration::from_secs(60),
            http_max_header_bytes: 16_384,
            http_max_inflight_responses: 2,
        }
    }
}

fn parse_timeout(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d.is_zero() {
        Err(format!("{:?} must be longer than 0s", s.trim()))
    } else {
        Ok(d)
    }
}

/// What one listener enforces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServeLimits {
    /// Connections held at once.
    pub max_connections: usize,
    /// Of those, from one client address.
    pub max_connections_per_peer: usize,
    /// See [`HttpLimits::http_max_connection_age`].
    pub max_connection_age: Duration,
    /// See [`HttpLimits::http_max_requests_per_connection`].
    pub max_requests_per_connection: u32,
    /// See [`HttpLimits::tls_handshake_timeout`].
    pub tls_handshake_timeout: Duration,
    /// See [`HttpLimits::http_header_read_timeout`].
    pub header_read_timeout: Duration,
    /// See [`HttpLimits::http_write_timeout`].
    pub write_timeout: Duration,
    /// See [`HttpLimits::http_max_header_bytes`].
    pub max_header_bytes: usize,
}

impl HttpLimits {
    fn serve_limits(&self, max_connections: usize, per_peer: usize) -> ServeLimits {
        ServeLimits {
            max_connections: max_connections.max(1),
            max_connections_per_peer: per_peer.max(1),
            max_connection_age: self.http_max_connection_age,
            max_requests_per_connection: self.http_max_requests_per_connection,
            tls_handshake_timeout: self.tls_handshake_timeout,
            header_read_timeout: self.http_header_read_timeout,
            write_timeout: self.http_write_timeout,
            // hyper's smallest read buffer.
            max_header_bytes: (self.http_max_header_bytes as usize).max(8_192),
        }
    }

    /// The HTTPS server's limits, its connection cap lowered to fit
    /// `open_files` (the soft open-file limit; None: unlimited).
    pub fn secure(&self, open_files: Option<u64>) -> ServeLimits {
        let wanted = self.http_max_connections as usize;
        let cap = connection_cap(wanted, open_files);
        if cap < wanted {
            tracing::warn!(
                wanted,
                cap,
                open_files = open_files.unwrap_or_default(),
                "--http-max-connections lowered to fit the open-file limit (raise the pod's nofile limit to allow more)"
            );
        }
        self.serve_limits(cap, self.http_max_connections_per_peer as usize)
    }

    /// The plain-HTTP probe server's limits.
    pub fn probes(&self) -> ServeLimits {
        self.serve_limits(
            PROBE_MAX_CONNECTIONS.min(self.http_max_connections as usize),
            PROBE_MAX_CONNECTIONS_PER_PEER.min(self.http_max_connections_per_peer as usize),
        )
    }

    /// Response slots of the REST API and of `/metrics` (each).
    pub fn response_slots(&self) -> ResponseSlots {
        ResponseSlots::new(self.http_max_inflight_responses as usize)
    }
}

/// `wanted` connections, or fewer when the open-file limit leaves less
/// room next to [`RESERVED_FDS`].
fn connection_cap(wanted: usize, open_files: Option<u64>) -> usize {
    match open_files {
        Some(n) => {
            let room = usize::try_from(n.saturating_sub(RESERVED_FDS)).unwrap_or(usize::MAX);
            wanted.min(room).max(1)
        }
        None => wanted,
    }
}

/// Raises this process's soft open-file limit to its hard limit (as the Go
/// runtime does at start) and returns the soft limit now in force (None:
/// unlimited). Windows has no such limit: None.
#[cfg(not(unix))]
pub fn raise_open_file_limit() -> Option<u64> {
    None
}

/// Raises this process's soft open-file limit to its hard limit (as the Go
/// runtime does at start) and returns the soft limit now in force (None:
/// unlimited).
#[cfg(unix)]
pub fn raise_open_file_limit() -> Option<u64> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum && limit.maximum.is_some() {
        let raised = Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        };
        if setrlimit(Resource::Nofile, raised).is_ok() {
            return raised.current;
        }
    }
    limit.current
}

/// Shared readiness flag, flipped by the role once it is serving.
#[derive(Clone, Debug, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    /// Marks the operator ready (or not).
    pub fn set(&self, ready: bool) {
        self.0.store(ready, Ordering::Relaxed);
    }

    /// Whether the operator is ready.
    pub fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A listener could not bind.
    #[error("binding {addr}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// An HTTP server's thread could not start.
    #[error("starting an HTTP server's thread")]
    Thread(#[source] std::io::Error),
    /// Only one of the certificate and the key was given.
    #[error(
        "--tls-cert-file and --tls-private-key-file go together: give both, or neither for a self-signed certificate"
    )]
    HalfTls,
    /// The certificate or key file could not be read.
    #[error("reading the TLS {what} from {path}: expected PEM")]
    Pem {
        what: &'static str,
        path: String,
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    /// Generating a self-signed certificate failed.
    #[error("generating a self-signed certificate")]
    Generate(#[from] rcgen::Error),
    /// The certificate and key do not make a TLS configuration.
    #[error("the TLS certificate and key do not fit together")]
    Rustls(#[from] rustls::Error),
}

/// The TLS configuration: the given certificate, or a fresh self-signed
/// one. The flag says which.
pub fn tls_config(
    cert: Option<&Path>,
    key: Option<&Path>,
) -> Result<(Arc<rustls::ServerConfig>, bool), ServerError> {
    let pem = |what, path: &Path, source| ServerError::Pem {
        what,
        path: path.display().to_string(),
        source,
    };
    let (chain, key, self_signed) = match (cert, key) {
        (Some(c), Some(k)) => {
            let chain = CertificateDer::pem_file_iter(c)
                .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                .map_err(|e| pem("certificate", c, e))?;
            let key = PrivateKeyDer::from_pem_file(k).map_err(|e| pem("private key", k, e))?;
            (chain, key, false)
        }
        (None, None) => {
            let names = vec![
                "localhost".to_owned(),
                "127.0.0.1".to_owned(),
                "fleet-operator".to_owned(),
            ];
            let generated = rcgen::generate_simple_self_signed(names)?;
            let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
                generated.signing_key.serialize_der(),
            ));
            (vec![generated.cert.der().clone()], key, true)
        }
        _ => return Err(ServerError::HalfTls),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok((Arc::new(config), self_signed))
}

fn text(status: StatusCode, body: &'static str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

async fn healthz() -> Response {
    text(StatusCode::OK, "ok\n")
}

async fn readyz(State(ready): State<Readiness>) -> Response {
    if ready.get() {
        text(StatusCode::OK, "ok\n")
    } else {
        text(StatusCode::SERVICE_UNAVAILABLE, "not ready\n")
    }
}

async fn not_found() -> Response {
    text(StatusCode::NOT_FOUND, "not found\n")
}

/// `/healthz`, `/livez` and `/readyz`, always open.
pub fn probe_routes(ready: Readiness) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/livez", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(ready)
        .fallback(not_found)
}

#[derive(Clone, Debug)]
struct MetricsState {
    metrics: Arc<Metrics>,
    slots: ResponseSlots,
}

async fn metrics(State(s): State<MetricsState>) -> Response {
    // A large fleet's scrape is megabytes: it takes a slot like a REST body.
    let slot = match s.slots.take().await {
        Ok(slot) => slot,
        Err(busy) => return busy.into_response(),
    };
    slot.hold(([(header::CONTENT_TYPE, CONTENT_TYPE)], s.metrics.encode()).into_response())
}

/// `/metrics` (behind `auth` when given; `get` on the non-resource URL
/// `/metrics`) on top of `base`.
pub fn with_metrics(
    base: Router,
    metrics: Arc<Metrics>,
    auth: Option<Arc<Auth>>,
    slots: ResponseSlots,
) -> Router {
    let route = Router::new()
        .route(crate::fleet::rbac::METRICS_PATH, get(self::metrics))
        .with_state(MetricsState { metrics, slots });
    base.merge(match auth {
        Some(auth) => authenticated(route, auth, READ_METRICS),
        None => route,
    })
}

/// Connections the kernel keeps waiting for [`serve`] to accept (capped by
/// `net.core.somaxconn`): clients over the connection cap wait here.
/// Rust's and tokio's default is 128, so a burst of connections to a
/// server busy with handshakes had the kernel drop handshakes it had
/// already answered.
pub const ACCEPT_BACKLOG: u32 = 1024;

/// Binds a listener; the caller learns the real port (for `:0`).
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, ServerError> {
    let bind = || -> io::Result<TcpListener> {
        let socket = if addr.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        socket.listen(ACCEPT_BACKLOG)
    };
    bind().map_err(|source| ServerError::Bind { addr, source })
}

/// Where connections come from: a [`TcpListener`], or a fake in tests.
trait Incoming: Send + 'static {
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    /// The next connection and the address it comes from.
    fn next(&self) -> impl Future<Output = io::Result<(Self::Io, IpAddr)>> + Send;
}

impl Incoming for TcpListener {
    type Io = TcpStream;
    async fn next(&self) -> io::Result<(TcpStream, IpAddr)> {
        // An IPv4 client of a dual-stack socket is the same peer as over IPv4.
        self.accept()
            .await
            .map(|(stream, peer)| (stream, peer.ip().to_canonical()))
    }
}

/// Serves `router` on `listener` (over TLS when `tls` is given) within
/// `limits` until `shutdown` turns true.
pub async fn serve(
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    router: Router,
    limits: ServeLimits,
    shutdown: watch::Receiver<bool>,
) {
    let addr = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    serve_incoming(listener, &addr, tls, router, limits, shutdown).await;
}

/// A server running on a thread of its own ([`serve_apart`]); it stops
/// when this is dropped.
#[derive(Debug)]
pub struct Apart {
    stop: watch::Sender<bool>,
}

impl Drop for Apart {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// [`serve`] on a thread and runtime of its own, named `name`, until the
/// returned [`Apart`] is dropped. The operating system schedules that
/// thread apart from the operator's runtime: the kubelet's probes are
/// answered however many TLS handshakes and requests the HTTPS port's
/// clients queue, and neither server's clients can delay the hub's
/// judgements or its Lease renewals. Connections still open when it stops
/// go with its runtime.
pub fn serve_apart(
    name: &str,
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    router: Router,
    limits: ServeLimits,
) -> Result<Apart, ServerError> {
    let (stop, stopped) = watch::channel(false);
    let start = || -> io::Result<_> {
        let listener = listener.into_std()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok((listener, runtime))
    };
    let (listener, runtime) = start().map_err(ServerError::Thread)?;
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            runtime.block_on(async move {
                match TcpListener::from_std(listener) {
                    Ok(listener) => serve(listener, tls, router, limits, stopped).await,
                    Err(e) => tracing::error!(error = %e, "an HTTP server could not start"),
                }
            });
        })
        .map_err(ServerError::Thread)?;
    Ok(Apart { stop })
}

/// A warning said at most once per [`FULL_LOG_EVERY`].
#[derive(Debug, Default)]
struct Sometimes(Option<Instant>);

impl Sometimes {
    fn due(&mut self) -> bool {
        let due = self.0.is_none_or(|t| t.elapsed() >= FULL_LOG_EVERY);
        if due {
            self.0 = Some(Instant::now());
        }
        due
    }
}

async fn serve_incoming<L: Incoming>(
    incoming: L,
    addr: &str,
    tls: Option<Arc<rustls::ServerConfig>>,
    router: Router,
    limits: ServeLimits,
    mut shutdown: watch::Receiver<bool>,
) {
    let acceptor = tls.map(TlsAcceptor::from);
    let places = Places::new(&limits);
    let limits = Arc::new(limits);
    let mut backoff = Backoff::default();
    let mut said_full = Sometimes::default();
    let (mut said_shed, mut said_refused) = (Sometimes::default(), Sometimes::default());
    let mut full = |places: &Places| {
        if said_full.due() {
            tracing::warn!(
                addr,
                max = limits.max_connections,
                held = places.held(),
                "at the connection cap, every connection answering or authenticated: new connections wait until one closes"
            );
        }
    };
    loop {
        // At the cap with no connection to shed: newcomers wait in the
        // kernel's queue.
        loop {
            let changed = places.changed().notified();
            let mut changed = std::pin::pin!(changed);
            changed.as_mut().enable();
            if places.room() {
                break;
            }
            full(&places);
            tokio::select! {
                () = changed => {}
                _ = shutdown.wait_for(|s| *s) => return,
            }
        }
        let accepted = tokio::select! {
            a = incoming.next() => a,
            _ = shutdown.wait_for(|s| *s) => return,
        };
        let (io, peer) = match accepted {
            Ok(accepted) => {
                let failures = backoff.succeeded();
                if failures > 0 {
                    tracing::info!(addr, failures, "accepting connections again");
                }
                accepted
            }
            Err(e) => {
                let Some(pause) = backoff.failed(&e) else {
                    continue;
                };
                if backoff.failures == 1 {
                    tracing::warn!(addr, error = %e, "accepting a connection failed: backing off (up to 1s between tries)");
                } else {
                    tracing::debug!(addr, error = %e, ?pause, "accepting a connection failed again");
                }
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = shutdown.wait_for(|s| *s) => return,
                }
                continue;
            }
        };
        let placed = loop {
            let changed = places.changed().notified();
            let mut changed = std::pin::pin!(changed);
            changed.as_mut().enable();
            match places.admit(peer, Instant::now()) {
                Admission::Placed(place, shed) => {
                    if shed && said_shed.due() {
                        tracing::warn!(
                            addr,
                            max = limits.max_connections,
                            "at the connection cap: new connections take the places of idle ones that have not authenticated, from the client addresses holding the most (said at most once a minute)"
                        );
                    }
                    break Ok(place);
                }
                Admission::Refused(why) => break Err(why),
                // What could be shed a moment ago is answering now.
                Admission::Full => {
                    full(&places);
                    tokio::select! {
                        () = changed => {}
                        _ = shutdown.wait_for(|s| *s) => return,
                    }
                }
            }
        };
        let place = match placed {
            Ok(place) => place,
            Err(why) => {
                if said_refused.due() {
                    let (max, share) = match why {
                        Refusal::PeerLimit => (limits.max_connections_per_peer, "its share"),
                        Refusal::FairShare => (
                            limits.max_connections,
                            "as many as any other at the connection cap",
                        ),
                    };
                    tracing::warn!(
                        addr,
                        %peer,
                        max,
                        "closing new connections of a client address that holds {share} (said at most once a minute)"
                    );
                }
                drop(io);
                continue;
            }
        };
        tokio::spawn(conn::connection(
            io,
            acceptor.clone(),
            router.clone(),
            limits.clone(),
            place,
        ));
    }
}

/// Pauses between failed accepts: a listener that fails for want of a
/// resource (EMFILE, ENFILE, ENOBUFS) fails again at once, and retrying
/// at once would spin a core.
#[derive(Debug, Default)]
struct Backoff {
    failures: u32,
}

impl Backoff {
    /// The pause after `err`, or None when the error concerned only the
    /// connection that failed (the next one may be accepted at once).
    fn failed(&mut self, err: &io::Error) -> Option<Duration> {
        use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
        if matches!(
            err.kind(),
            ConnectionAborted | ConnectionReset | ConnectionRefused
        ) {
            return None;
        }
        let pause = ACCEPT_BACKOFF_MIN
            .saturating_mul(1 << self.failures.min(16))
            .min(ACCEPT_BACKOFF_MAX);
        self.failures += 1;
        Some(pause)
    }

    /// Resets after a success; returns the failures in a row before it.
    fn succeeded(&mut self) -> u32 {
        std::mem::take(&mut self.failures)
    }
}

#[cfg(test)]
impl ServeLimits {
    /// Small limits and short timeouts for in-process tests.
    fn test() -> Self {
        Self {
            max_connections: 8,
            max_connections_per_peer: 8,
            max_connection_age: Duration::from_secs(300),
            max_requests_per_connection: 1000,
            tls_handshake_timeout: Duration::from_secs(5),
            header_read_timeout: Duration::from_millis(300),
            write_timeout: Duration::from_millis(300),
            max_header_bytes: 8_192,
        }
    }
}

#[cfg(test)]
mod tests;
