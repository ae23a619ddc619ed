//! In-process tests of [`super::serve`]: connections handed over by a fake
//! listener, the limits of each, and the places at the cap.

use super::*;
use clap::Parser as _;
use std::sync::atomic::AtomicUsize;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, DuplexStream};
use tokio::sync::mpsc;

/// Connections handed over by the test, after `errors` failed accepts.
struct Fake {
    conns: tokio::sync::Mutex<mpsc::UnboundedReceiver<(DuplexStream, IpAddr)>>,
    errors: AtomicUsize,
    calls: Arc<AtomicUsize>,
}

impl Incoming for Fake {
    type Io = DuplexStream;
    async fn next(&self) -> io::Result<(DuplexStream, IpAddr)> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self
            .errors
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return Err(io::Error::from_raw_os_error(24)); // EMFILE
        }
        match self.conns.lock().await.recv().await {
            Some(c) => Ok(c),
            None => std::future::pending().await,
        }
    }
}

struct Server {
    conns: mpsc::UnboundedSender<(DuplexStream, IpAddr)>,
    calls: Arc<AtomicUsize>,
    _stop: watch::Sender<bool>,
}

impl Server {
    fn start(router: Router, limits: ServeLimits, errors: usize) -> Server {
        let (tx, rx) = mpsc::unbounded_channel();
        let calls = Arc::new(AtomicUsize::new(0));
        let (stop, stopped) = watch::channel(false);
        let fake = Fake {
            conns: tokio::sync::Mutex::new(rx),
            errors: AtomicUsize::new(errors),
            calls: calls.clone(),
        };
        tokio::spawn(async move {
            serve_incoming(fake, "test", None, router, limits, stopped).await;
        });
        Server {
            conns: tx,
            calls,
            _stop: stop,
        }
    }

    /// A client end whose server end is being served; `buffer` bytes
    /// of each direction in flight at most.
    fn connect(&self, buffer: usize) -> DuplexStream {
        self.connect_from(1, buffer)
    }

    /// The same from 127.0.0.`peer`.
    fn connect_from(&self, peer: u8, buffer: usize) -> DuplexStream {
        let (client, server) = tokio::io::duplex(buffer);
        self.conns
            .send((server, IpAddr::from([127, 0, 0, peer])))
            .unwrap();
        client
    }
}

fn limits() -> ServeLimits {
    ServeLimits::test()
}

fn probes() -> Router {
    probe_routes(Readiness::default())
}

async fn request(client: &mut DuplexStream, path: &str) -> String {
    client
        .write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut buf = vec![0; 4096];
    let n = client.read(&mut buf).await.unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// Reads until the server closes (or resets) the connection; the bytes read.
async fn until_closed(client: &mut DuplexStream) -> usize {
    let mut total = 0;
    let mut buf = vec![0; 65_536];
    loop {
        match client.read(&mut buf).await {
            Ok(0) | Err(_) => return total,
            Ok(n) => total += n,
        }
    }
}

#[test]
fn the_flags_default_to_the_documented_limits() {
    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        http: HttpLimits,
    }
    assert_eq!(Cli::parse_from(["x"]).http, HttpLimits::default());
    let l = HttpLimits::default();
    assert_eq!(l.probes().max_connections, PROBE_MAX_CONNECTIONS);
    assert_eq!(l.probes().max_connections_per_peer, 8);
    let secure = l.secure(None);
    assert_eq!(secure.max_connections, 1024);
    assert_eq!(secure.max_connections_per_peer, 64);
    assert_eq!(secure.max_connection_age, Duration::from_secs(300));
    assert_eq!(secure.max_requests_per_connection, 1000);
    assert_eq!(secure.max_header_bytes, 16_384);
    // A per-address share below the probe port's stays the smaller.
    let narrow = Cli::parse_from(["x", "--http-max-connections-per-peer", "4"]).http;
    assert_eq!(narrow.probes().max_connections_per_peer, 4);
    for bad in [
        &["x", "--http-header-read-timeout", "0s"][..],
        &["x", "--http-max-header-bytes", "100"],
        &["x", "--http-max-connections", "0"],
        &["x", "--http-max-connections-per-peer", "0"],
        &["x", "--http-max-connection-age", "0s"],
        &["x", "--http-max-requests-per-connection", "0"],
    ] {
        assert!(Cli::try_parse_from(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn the_connection_cap_fits_the_open_file_limit() {
    assert_eq!(connection_cap(1024, None), 1024);
    assert_eq!(connection_cap(1024, Some(1_048_576)), 1024);
    // The usual desktop soft limit: room for the probes and the client.
    assert_eq!(connection_cap(1024, Some(1024)), 1024 - 192);
    assert_eq!(connection_cap(1024, Some(100)), 1);
}

#[test]
fn accept_failures_back_off_exponentially_up_to_a_second() {
    let mut b = Backoff::default();
    let emfile = io::Error::from_raw_os_error(24);
    let pauses: Vec<u128> = (0..10)
        .map(|_| b.failed(&emfile).unwrap().as_millis())
        .collect();
    assert_eq!(pauses, [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
    // A connection reset before it was accepted concerns that one only.
    let reset = io::Error::from(io::ErrorKind::ConnectionAborted);
    assert_eq!(b.failed(&reset), None);
    assert_eq!(b.succeeded(), 10);
    assert_eq!(b.failed(&emfile).unwrap().as_millis(), 5);
}

#[tokio::test]
async fn a_failing_accept_does_not_spin_and_serving_resumes() {
    let server = Server::start(probes(), limits(), usize::MAX);
    tokio::time::sleep(Duration::from_millis(500)).await;
    // 5 + 10 + 20 + 40 + 80 + 160 ms of pauses fit in 500 ms: a loop
    // that retried at once would have made millions of calls.
    let calls = server.calls.load(Ordering::SeqCst);
    assert!((2..=8).contains(&calls), "{calls} accept calls in 500 ms");

    let server = Server::start(probes(), limits(), 3);
    let mut client = server.connect(4096);
    assert!(
        request(&mut client, "/healthz")
            .await
            .starts_with("HTTP/1.1 200")
    );
    // Three failures, then the connection (and the wait for the next).
    assert!(server.calls.load(Ordering::SeqCst) >= 4);
}

#[tokio::test]
async fn silent_slow_and_oversized_clients_are_cut_off() {
    let server = Server::start(probes(), limits(), 0);
    // Nothing sent: closed at the header-read timeout.
    let mut silent = server.connect(4096);
    assert_eq!(until_closed(&mut silent).await, 0);
    // Headers trickled: the timeout counts the whole head.
    let mut slow = server.connect(4096);
    slow.write_all(b"GET /healthz HTTP/1.1\r\n").await.unwrap();
    let trickle = async {
        for _ in 0..100 {
            if slow.write_all(b"X-A: b\r\n").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("still open after 2 s of trickled headers");
    };
    trickle.await;
    // A head over the cap: 431, and closed.
    let mut big = server.connect(65_536);
    let head = format!(
        "GET /healthz HTTP/1.1\r\nX-Pad: {}\r\n\r\n",
        "a".repeat(20_000)
    );
    let _ = big.write_all(head.as_bytes()).await;
    let mut answer = vec![0; 256];
    let n = big.read(&mut answer).await.unwrap();
    assert!(
        String::from_utf8_lossy(&answer[..n]).starts_with("HTTP/1.1 431"),
        "{}",
        String::from_utf8_lossy(&answer[..n])
    );
    // An idle keep-alive connection goes at the same timeout, after
    // its answer.
    let mut idle = server.connect(4096);
    assert!(
        request(&mut idle, "/healthz")
            .await
            .starts_with("HTTP/1.1 200")
    );
    assert_eq!(until_closed(&mut idle).await, 0);
}

fn big_body(slots: ResponseSlots) -> Router {
    Router::new().route(
        "/big",
        get(move || {
            let slots = slots.clone();
            async move {
                let slot = slots.take().await.unwrap();
                slot.hold(vec![b'x'; 4 << 20].into_response())
            }
        }),
    )
}

#[tokio::test]
async fn a_reader_that_stalls_is_cut_off_and_its_slot_freed() {
    let slots = ResponseSlots::new(1);
    let server = Server::start(big_body(slots.clone()), limits(), 0);
    let mut client = server.connect(16_384);
    client
        .write_all(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    // The body is with hyper and the socket, not read: the slot stays
    // taken (the body's memory is still held).
    while slots.available() == 1 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(slots.available(), 0);
    // The client never reads: cut off at the write timeout, which
    // frees the slot.
    while slots.available() == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(until_closed(&mut client).await < 4 << 20);
}

#[tokio::test]
async fn a_response_read_whole_frees_its_slot() {
    let slots = ResponseSlots::new(1);
    let limits = ServeLimits {
        write_timeout: Duration::from_secs(30),
        header_read_timeout: Duration::from_secs(30),
        ..limits()
    };
    let server = Server::start(big_body(slots.clone()), limits, 0);
    let mut client = server.connect(65_536);
    client
        .write_all(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut got = Vec::new();
    let mut buf = vec![0; 65_536];
    let body_at = loop {
        let n = client.read(&mut buf).await.unwrap();
        got.extend_from_slice(&buf[..n]);
        if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    while got.len() - body_at < 4 << 20 {
        let n = client.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed early");
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(got.len() - body_at, 4 << 20);
    while slots.available() == 0 {
        tokio::task::yield_now().await;
    }
    // The connection stays open for the next request.
    assert!(
        request(&mut client, "/big")
            .await
            .starts_with("HTTP/1.1 200")
    );
}

/// Requests of `/hold` answered only when the test says so.
struct Hold {
    release: tokio::sync::Semaphore,
    entered: AtomicUsize,
}

impl Default for Hold {
    fn default() -> Self {
        Self {
            release: tokio::sync::Semaphore::new(0),
            entered: AtomicUsize::new(0),
        }
    }
}

impl Hold {
    /// Waits until `n` requests are being answered.
    async fn entered(&self, n: usize) {
        while self.entered.load(Ordering::SeqCst) < n {
            tokio::task::yield_now().await;
        }
    }
}

/// `/healthz`; `/hold`, answered once the test says so; `/auth`,
/// answered as if the authentication layer had admitted its caller.
fn held_and_trusted(hold: Arc<Hold>) -> Router {
    probes()
        .route(
            "/hold",
            get(move || {
                let hold = hold.clone();
                async move {
                    hold.entered.fetch_add(1, Ordering::SeqCst);
                    hold.release.acquire().await.unwrap().forget();
                    "released"
                }
            }),
        )
        .route(
            "/auth",
            get(|| async {
                let mut resp = "yours".into_response();
                resp.extensions_mut()
                    .insert(crate::operator::rest::Authenticated(true));
                resp
            }),
        )
}

async fn ok(client: &mut DuplexStream, path: &str) -> bool {
    request(client, path).await.starts_with("HTTP/1.1 200")
}

/// Sends a request without reading its answer.
async fn send(client: &mut DuplexStream, path: &str) {
    client
        .write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .unwrap();
}

fn slow_timeouts(max_connections: usize, per_peer: usize) -> ServeLimits {
    ServeLimits {
        max_connections,
        max_connections_per_peer: per_peer,
        header_read_timeout: Duration::from_secs(30),
        write_timeout: Duration::from_secs(30),
        ..limits()
    }
}

#[tokio::test]
async fn at_the_cap_a_newcomer_takes_the_place_of_an_idle_stranger() {
    let server = Server::start(probes(), slow_timeouts(2, 2), 0);
    let mut a = server.connect_from(2, 4096);
    let mut b = server.connect_from(3, 4096);
    assert!(ok(&mut a, "/healthz").await);
    assert!(ok(&mut b, "/healthz").await);
    // Both idle, neither authenticated: the newcomer is answered at
    // once, in the place of the oldest.
    let mut c = server.connect_from(4, 4096);
    assert!(ok(&mut c, "/healthz").await);
    assert_eq!(until_closed(&mut a).await, 0);
    assert!(ok(&mut b, "/healthz").await);
}

#[tokio::test]
async fn at_the_cap_with_every_connection_answering_newcomers_wait_their_turn() {
    let hold = Arc::<Hold>::default();
    let server = Server::start(held_and_trusted(hold.clone()), slow_timeouts(2, 2), 0);
    let mut a = server.connect_from(2, 4096);
    let mut b = server.connect_from(3, 4096);
    send(&mut a, "/hold").await;
    send(&mut b, "/hold").await;
    hold.entered(2).await;
    let mut c = server.connect_from(4, 4096);
    send(&mut c, "/healthz").await;
    // Both places answering: the third waits for one.
    let mut answer = vec![0; 256];
    let waited = tokio::time::timeout(Duration::from_millis(200), c.read(&mut answer)).await;
    assert!(waited.is_err(), "answered while every place was busy");
    // One answer out: that connection is idle, so it makes room.
    hold.release.add_permits(1);
    let n = c.read(&mut answer).await.unwrap();
    assert!(String::from_utf8_lossy(&answer[..n]).starts_with("HTTP/1.1 200"));
    hold.release.add_permits(1);
}

#[tokio::test]
async fn an_authenticated_connection_keeps_its_place_while_strangers_flood() {
    let hold = Arc::<Hold>::default();
    let server = Server::start(held_and_trusted(hold), slow_timeouts(4, 2), 0);
    // Opened first, so the oldest: only having authenticated keeps it.
    let mut trusted = server.connect_from(9, 4096);
    assert!(ok(&mut trusted, "/auth").await);
    let mut stranger = server.connect_from(9, 4096);
    assert!(ok(&mut stranger, "/healthz").await);
    let mut flood = Vec::new();
    for i in 0..40u8 {
        let mut c = server.connect_from(20 + i % 4, 4096);
        assert!(ok(&mut c, "/healthz").await, "newcomer {i}");
        flood.push(c);
    }
    assert!(ok(&mut trusted, "/healthz").await, "still served");
    // The stranger beside it went long ago.
    assert_eq!(until_closed(&mut stranger).await, 0);
}

#[tokio::test]
async fn an_address_over_its_share_is_closed_at_once_and_others_are_served() {
    let server = Server::start(probes(), slow_timeouts(8, 2), 0);
    let mut first = server.connect_from(2, 4096);
    let mut second = server.connect_from(2, 4096);
    assert!(ok(&mut first, "/healthz").await);
    assert!(ok(&mut second, "/healthz").await);
    // A third from the same address is closed unanswered; its two
    // connections and the other address's are served on.
    let mut third = server.connect_from(2, 4096);
    send(&mut third, "/healthz").await;
    assert_eq!(until_closed(&mut third).await, 0);
    let mut other = server.connect_from(3, 4096);
    assert!(ok(&mut other, "/healthz").await);
    assert!(ok(&mut first, "/healthz").await);
    // A place given back is the address's again.
    drop(second);
    let mut fourth = server.connect_from(2, 4096);
    assert!(ok(&mut fourth, "/healthz").await);
}

#[tokio::test]
async fn a_connection_ends_after_its_last_request_or_at_its_age() {
    let limits = ServeLimits {
        max_requests_per_connection: 3,
        ..slow_timeouts(8, 8)
    };
    let server = Server::start(probes(), limits, 0);
    let mut c = server.connect(4096);
    for _ in 0..2 {
        let answer = request(&mut c, "/healthz").await;
        assert!(
            !answer.to_ascii_lowercase().contains("connection: close"),
            "{answer}"
        );
    }
    let last = request(&mut c, "/healthz").await;
    assert!(last.starts_with("HTTP/1.1 200"), "{last}");
    assert!(
        last.to_ascii_lowercase().contains("connection: close"),
        "{last}"
    );
    assert_eq!(until_closed(&mut c).await, 0);

    // An idle connection past its age is closed, long before the
    // header-read timeout (30 s) would.
    let limits = ServeLimits {
        max_connection_age: Duration::from_millis(400),
        ..slow_timeouts(8, 8)
    };
    let server = Server::start(probes(), limits, 0);
    let mut c = server.connect(4096);
    let opened = Instant::now();
    assert!(ok(&mut c, "/healthz").await);
    assert_eq!(until_closed(&mut c).await, 0);
    let lived = opened.elapsed();
    assert!(
        lived >= Duration::from_millis(350) && lived < Duration::from_secs(5),
        "closed after {lived:?}"
    );
}
