//! Thousands of chatty connections against the hub's listeners while a
//! kubelet probes it and a scraper and an authenticated caller use it:
//! the flood, what the hub held, and the latencies of the ones it must
//! keep answering.

use super::*;

/// What the flood on one port saw.
#[derive(Default)]
struct FloodStats {
    /// Connections tried.
    attempts: AtomicU64,
    /// Of those, ones that got at least one answer.
    answered_conns: AtomicU64,
    /// Requests answered.
    answers: AtomicU64,
    /// Connections closed by the hub before any answer.
    closed_unanswered: AtomicU64,
    /// Connections open now that got an answer.
    chatting: AtomicU64,
}

/// One idle-but-chatty client: after `delay`, a keep-alive connection
/// from `src` that sends `GET /healthz` every `every` and reads the
/// answer; when the hub closes it, it connects again `every` to twice that
/// later (spread by `seed`), until `stop`.
struct Chatty {
    seed: u64,
    delay: Duration,
    src: std::net::IpAddr,
    addr: std::net::SocketAddr,
    tls: Option<tokio_rustls::TlsConnector>,
    every: Duration,
    stats: Arc<FloodStats>,
    stop: Arc<AtomicBool>,
}

async fn chatty(c: Chatty) {
    let Chatty {
        seed,
        delay,
        src,
        addr,
        tls,
        every,
        stats,
        stop,
    } = c;
    tokio::time::sleep(delay).await;
    while !stop.load(Ordering::Relaxed) {
        stats.attempts.fetch_add(1, Ordering::Relaxed);
        let mut answers = 0u64;
        if let Ok(mut s) = connect_from(src, addr, tls.as_ref()).await {
            while !stop.load(Ordering::Relaxed) {
                let req = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";
                if s.write_all(req).await.is_err() {
                    break;
                }
                match tokio::time::timeout(Duration::from_secs(60), read_response(&mut s)).await {
                    Ok(Ok((200, _))) => {
                        if answers == 0 {
                            stats.chatting.fetch_add(1, Ordering::Relaxed);
                        }
                        answers += 1;
                    }
                    _ => break,
                }
                // Idle until the next request, noticing a close at once.
                let mut byte = [0u8; 1];
                tokio::select! {
                    () = tokio::time::sleep(every) => {}
                    _ = s.read(&mut byte) => break,
                }
            }
        }
        if answers > 0 {
            stats.chatting.fetch_sub(1, Ordering::Relaxed);
            stats.answered_conns.fetch_add(1, Ordering::Relaxed);
            stats.answers.fetch_add(answers, Ordering::Relaxed);
        } else {
            stats.closed_unanswered.fetch_add(1, Ordering::Relaxed);
        }
        let attempt = stats.attempts.load(Ordering::Relaxed);
        let spread = (seed.wrapping_mul(7919) ^ attempt.wrapping_mul(104_729)) % 1000;
        tokio::time::sleep(every + every.mul_f64(spread as f64 / 1000.0)).await;
    }
}

/// What the hub held on one port while it was sampled.
#[derive(Debug, Default)]
struct Held {
    /// Connections held, per sample.
    totals: Vec<usize>,
    /// The most one client address held in a sample.
    most_per_peer: usize,
    /// Socket inode → first and last sample it was seen in.
    lives: std::collections::HashMap<u64, (Instant, Instant)>,
}

impl Held {
    fn sample(&mut self, pid: u32, port: u16) {
        let now = Instant::now();
        let held = held_sockets(pid, port);
        let mut per_peer = std::collections::HashMap::new();
        for (inode, peer) in &held {
            *per_peer.entry(*peer).or_insert(0) += 1;
            self.lives.entry(*inode).or_insert((now, now)).1 = now;
        }
        self.totals.push(held.len());
        self.most_per_peer = self
            .most_per_peer
            .max(per_peer.into_values().max().unwrap_or(0));
    }

    /// The longest the hub was seen holding one connection.
    fn longest_life(&self) -> Duration {
        self.lives
            .values()
            .map(|(a, b)| *b - *a)
            .max()
            .unwrap_or_default()
    }

    fn median(&self) -> usize {
        let mut t = self.totals.clone();
        t.sort_unstable();
        t.get(t.len() / 2).copied().unwrap_or(0)
    }

    fn summary(&self) -> String {
        format!(
            "{}-{} held (median {}), at most {} from one address, the longest held {:.1} s",
            self.totals.iter().min().unwrap_or(&0),
            self.totals.iter().max().unwrap_or(&0),
            self.median(),
            self.most_per_peer,
            self.longest_life().as_secs_f64()
        )
    }
}

/// Latencies of one kind of request, and its failures.
#[derive(Default)]
struct Latencies {
    ok: Vec<Duration>,
    failed: Vec<String>,
}

impl Latencies {
    fn record(&mut self, started: Instant, outcome: Result<u16, String>) {
        match outcome {
            Ok(200) => self.ok.push(started.elapsed()),
            Ok(code) => self
                .failed
                .push(format!("{code} after {:?}", started.elapsed())),
            Err(e) => self
                .failed
                .push(format!("{e} after {:?}", started.elapsed())),
        }
    }

    /// `p50/p90/p99/max` in ms, and the count.
    fn summary(&self) -> String {
        let mut v = self.ok.clone();
        v.sort();
        if v.is_empty() {
            return format!("none answered, {} failed", self.failed.len());
        }
        let at = |p: f64| v[((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1];
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        format!(
            "{} answered, {} failed: p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            v.len(),
            self.failed.len(),
            ms(at(0.5)),
            ms(at(0.9)),
            ms(at(0.99)),
            ms(*v.last().unwrap())
        )
    }
}

/// The kubelet's probe: a new connection from the node's address with
/// `Connection: close` (the kubelet's HTTP prober keeps none alive),
/// answered within `timeout` (the probe's `timeoutSeconds`).
async fn kubelet_probe(
    addr: std::net::SocketAddr,
    path: &str,
    timeout: Duration,
) -> Result<u16, String> {
    let node = std::net::IpAddr::from([127, 0, 0, 1]);
    let ask = async {
        let mut s = connect_from(node, addr, None)
            .await
            .map_err(|e| e.to_string())?;
        s.write_all(
            format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
        .map_err(|e| e.to_string())?;
        read_response(&mut s)
            .await
            .map(|(c, _)| c)
            .map_err(|e| e.to_string())
    };
    tokio::time::timeout(timeout, ask)
        .await
        .unwrap_or_else(|_| Err("timed out".to_owned()))
}

/// A request with `token` on a connection from `src` made for it
/// (`Connection: close`), answered within `timeout`.
async fn fresh_get(
    src: std::net::IpAddr,
    addr: std::net::SocketAddr,
    tls: &tokio_rustls::TlsConnector,
    path: &str,
    token: &str,
    timeout: Duration,
) -> Result<u16, String> {
    let ask = async {
        let mut s = connect_from(src, addr, Some(tls))
            .await
            .map_err(|e| e.to_string())?;
        s.write_all(
            format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await
        .map_err(|e| e.to_string())?;
        read_response(&mut s)
            .await
            .map(|(c, _)| c)
            .map_err(|e| e.to_string())
    };
    tokio::time::timeout(timeout, ask)
        .await
        .unwrap_or_else(|_| Err("timed out".to_owned()))
}

/// Prometheus: one keep-alive connection from `src` scraping `/metrics`
/// with `token`, opened again when the hub closes it (its age); each
/// scrape (a reconnection included) answered within `timeout`.
struct Scraper {
    src: std::net::IpAddr,
    addr: std::net::SocketAddr,
    tls: tokio_rustls::TlsConnector,
    token: String,
    conn: Option<Box<dyn Stream>>,
    /// Connections opened.
    opened: u32,
}

impl Scraper {
    async fn scrape(&mut self, timeout: Duration) -> Result<u16, String> {
        let req = format!(
            "GET /metrics HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {}\r\n\r\n",
            self.token
        );
        let ask = async {
            // A kept connection the hub closed meanwhile fails at once:
            // then once more on a new one, as an HTTP client does.
            for _ in 0..2 {
                if self.conn.is_none() {
                    self.conn = Some(
                        connect_from(self.src, self.addr, Some(&self.tls))
                            .await
                            .map_err(|e| e.to_string())?,
                    );
                    self.opened += 1;
                }
                let s = self.conn.as_mut().unwrap();
                if s.write_all(req.as_bytes()).await.is_ok()
                    && let Ok((code, _)) = read_response(s).await
                {
                    return Ok(code);
                }
                self.conn = None;
            }
            Err("the connection was closed twice".to_owned())
        };
        tokio::time::timeout(timeout, ask)
            .await
            .unwrap_or_else(|_| Err("timed out".to_owned()))
    }
}

/// [`measure`] on a thread and runtime of its own, so the flood's clients
/// in this process do not delay the measuring client (the hub's answers
/// are what is measured).
fn measure_apart(
    probe_addr: std::net::SocketAddr,
    mut scraper: Scraper,
    rest_token: String,
    window: Duration,
    every: Duration,
) -> std::thread::JoinHandle<(Scraper, Latencies, Latencies, Latencies)> {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (p, s, r) = rt.block_on(measure(
            probe_addr,
            &mut scraper,
            &rest_token,
            window,
            every,
        ));
        (scraper, p, s, r)
    })
}

/// The probes' and an authenticated scraper's and REST client's
/// latencies, measured for `window`, a request of each kind every `every`.
async fn measure(
    probe_addr: std::net::SocketAddr,
    scraper: &mut Scraper,
    rest_token: &str,
    window: Duration,
    every: Duration,
) -> (Latencies, Latencies, Latencies) {
    let (mut probes, mut scrapes, mut rest) = (
        Latencies::default(),
        Latencies::default(),
        Latencies::default(),
    );
    let rest_src = std::net::IpAddr::from([127, 0, 0, 3]);
    let started = Instant::now();
    let mut n = 0;
    while started.elapsed() < window {
        let tick = Instant::now();
        let path = if n % 2 == 0 { "/healthz" } else { "/readyz" };
        let t = Instant::now();
        probes.record(t, kubelet_probe(probe_addr, path, PROBE_TIMEOUT).await);
        if n % 4 == 0 {
            let t = Instant::now();
            scrapes.record(t, scraper.scrape(SCRAPE_TIMEOUT).await);
            let t = Instant::now();
            let answer = fresh_get(
                rest_src,
                scraper.addr,
                &scraper.tls,
                "/api/v1/federation/clusters",
                rest_token,
                SCRAPE_TIMEOUT,
            )
            .await;
            rest.record(t, answer);
        }
        n += 1;
        tokio::time::sleep(every.saturating_sub(tick.elapsed())).await;
    }
    (probes, scrapes, rest)
}

/// The kubelet's default probe `timeoutSeconds`, which the shipped
/// Deployment keeps.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);
/// Prometheus's default scrape timeout.
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_chatty_connections_starve_neither_the_probes_nor_authenticated_callers() {
    // Flood addresses: 127.0.0.10.. for HTTPS, 127.0.0.100.. for the
    // probe port; each address opens more connections than its share
    // (64 and 8), and all of them more than the ports' caps (1,024, 64).
    const HTTPS_PEERS: u8 = 24;
    const HTTPS_PER_PEER: usize = 100;
    const PROBE_PEERS: u8 = 12;
    const PROBE_PER_PEER: usize = 40;
    const RAMP: Duration = Duration::from_secs(30);
    const WINDOW: Duration = Duration::from_secs(30);
    kubectl_fleet::operator::server::raise_open_file_limit();
    let (sb, dir) = fleet("chatty").await;
    let token = reader_token(&admin(&sb).await).await;
    let hub = start_hub(&dir, "hub", &[]).await;
    let https: std::net::SocketAddr = hub.addr.parse().unwrap();
    let probe_addr: std::net::SocketAddr = logged_addr(&hub.proc.log_text(), "serving /healthz")
        .parse()
        .unwrap();
    let connector = tls_connector(&hub.ca);
    wait_until(Duration::from_secs(15), "the REST API lists", || async {
        https_get(
            &hub.addr,
            "/api/v1/federation/clusters",
            Some(&token),
            &hub.ca,
        )
        .await
        .0 == 200
    })
    .await;
    let scraper = Scraper {
        src: std::net::IpAddr::from([127, 0, 0, 2]),
        addr: https,
        tls: connector.clone(),
        token: token.clone(),
        conn: None,
        opened: 0,
    };
    let quiet = measure_apart(
        probe_addr,
        scraper,
        token.clone(),
        Duration::from_secs(5),
        Duration::from_millis(100),
    );
    let (scraper, quiet_probes, quiet_scrapes, quiet_rest) = quiet.join().unwrap();
    let baseline = vm_rss_kib(hub.proc.pid()).unwrap();
    let mut rss = RssWatch::start(hub.proc.pid());

    // The flood: chatty keep-alive connections, each asking every 5 s,
    // opened over RAMP (a handshake flood is another attack: the hub's
    // CPU, which a debug build on a shared machine has little of).
    let stop = Arc::new(AtomicBool::new(false));
    let (https_stats, probe_stats) = (
        Arc::new(FloodStats::default()),
        Arc::new(FloodStats::default()),
    );
    let mut clients = Vec::new();
    for (peers, first, per_peer, addr, tls, stats) in [
        (
            HTTPS_PEERS,
            10u8,
            HTTPS_PER_PEER,
            https,
            Some(connector.clone()),
            &https_stats,
        ),
        (
            PROBE_PEERS,
            100u8,
            PROBE_PER_PEER,
            probe_addr,
            None,
            &probe_stats,
        ),
    ] {
        for _ in 0..per_peer {
            for p in 0..peers {
                let src = std::net::IpAddr::from([127, 0, 0, first + p]);
                clients.push((src, addr, tls.clone(), stats.clone()));
            }
        }
    }
    let n = clients.len();
    let mut flood = Vec::new();
    for (i, (src, addr, tls, stats)) in clients.into_iter().enumerate() {
        flood.push(tokio::spawn(chatty(Chatty {
            seed: i as u64,
            delay: RAMP.mul_f64(i as f64 / n as f64),
            src,
            addr,
            tls,
            every: Duration::from_secs(5),
            stats,
            stop: stop.clone(),
        })));
    }
    // Under way once the hub holds both ports full of connections that
    // have been answered (their TLS handshakes done).
    let pid = hub.proc.pid();
    let flooding = Instant::now();
    wait_until(
        Duration::from_secs(180),
        "the flood holds both ports",
        || async {
            https_stats.chatting.load(Ordering::Relaxed) >= 1000
                && probe_stats.chatting.load(Ordering::Relaxed) >= 64
        },
    )
    .await;
    let filled_in = flooding.elapsed();
    let chatting = (
        https_stats.chatting.load(Ordering::Relaxed),
        probe_stats.chatting.load(Ordering::Relaxed),
    );

    // What the hub holds, sampled while the probes and callers are measured.
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let sampling = sampling.clone();
        let ports = (https.port(), probe_addr.port());
        std::thread::spawn(move || {
            let (mut a, mut b) = (Held::default(), Held::default());
            while sampling.load(Ordering::Relaxed) {
                a.sample(pid, ports.0);
                b.sample(pid, ports.1);
                std::thread::sleep(Duration::from_millis(200));
            }
            (a, b)
        })
    };
    let measured = measure_apart(
        probe_addr,
        scraper,
        token.clone(),
        WINDOW,
        Duration::from_millis(250),
    );
    let (scraper, probes, scrapes, rest) =
        tokio::task::spawn_blocking(move || measured.join().unwrap())
            .await
            .unwrap();
    sampling.store(false, Ordering::Relaxed);
    let (held_https, held_probe) = sampler.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    for f in flood {
        f.abort();
    }
    let peak = rss.peak_kib();
    let seen = |s: &FloodStats| {
        format!(
            "{} connections tried; of those closed, {} after answers ({} answers), {} unanswered",
            s.attempts.load(Ordering::Relaxed),
            s.answered_conns.load(Ordering::Relaxed),
            s.answers.load(Ordering::Relaxed),
            s.closed_unanswered.load(Ordering::Relaxed),
        )
    };
    println!(
        "chatty flood of {} HTTPS connections from {HTTPS_PEERS} addresses and {} probe-port \
         connections from {PROBE_PEERS} addresses, both ports full after {filled_in:.1?} \
         ({} and {} chatting); over {WINDOW:?}:\n  HTTPS: {}; the flood {}\n  probe port: {}; the flood {}\n  before the \
         flood: kubelet probes {}; scrapes {}; REST {}\n  during the flood: kubelet probes {}; \
         scrapes {} ({} connections); REST {}\n  hub RSS {baseline} KiB before, peak {peak} KiB",
        HTTPS_PEERS as usize * HTTPS_PER_PEER,
        PROBE_PEERS as usize * PROBE_PER_PEER,
        chatting.0,
        chatting.1,
        held_https.summary(),
        seen(&https_stats),
        held_probe.summary(),
        seen(&probe_stats),
        quiet_probes.summary(),
        quiet_scrapes.summary(),
        quiet_rest.summary(),
        probes.summary(),
        scrapes.summary(),
        scraper.opened,
        rest.summary(),
    );

    // Every probe, scrape and REST call answered within its timeout.
    for (what, l) in [
        ("kubelet probe", &probes),
        ("scrape", &scrapes),
        ("REST call", &rest),
    ] {
        assert!(l.failed.is_empty(), "{what}s failed: {:?}", l.failed);
        assert!(!l.ok.is_empty(), "no {what} made");
    }
    // ... while the flood held both ports at their caps, each address
    // within its share.
    assert!(
        held_https.median() >= 950 && held_probe.median() >= 60,
        "{held_https:?} {held_probe:?}"
    );
    assert!(held_https.most_per_peer <= 64 && held_probe.most_per_peer <= 8);
    assert!(
        peak < RSS_BOUND_MIB * 1024 && peak.saturating_sub(baseline) < RSS_GROWTH_BOUND_MIB * 1024,
        "hub RSS peaked at {peak} KiB from {baseline} KiB"
    );
}
