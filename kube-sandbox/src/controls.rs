//! Test controls: injected failures, latency, outages, token lifetime
//! limits and the request log (each request's start and end, optionally
//! also written to a file as it is answered). Cheap to clone and usable
//! from any thread.

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Most recent requests kept in the log; older ones are dropped so that
/// benchmarks with millions of requests do not grow memory without bound.
pub const REQUEST_LOG_CAPACITY: usize = 200_000;

/// Make matching requests fail without executing them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultRule {
    /// Kubernetes verb (`get`, `list`, `watch`, `create`, `update`, `patch`,
    /// `delete`, `deletecollection`, ...); `None` matches any.
    pub verb: Option<String>,
    /// Substring of the request path; `None` matches any path.
    pub path_contains: Option<String>,
    /// HTTP status of the injected failure (a real `Status` body is sent).
    /// 0: the request is not failed but executed, and answered `delay` late.
    pub status: u16,
    /// The first `skip` matching requests pass.
    pub skip: u32,
    /// The next `count` matching requests fail (or, with `status: 0`, are
    /// delayed).
    pub count: u32,
    /// With `status: 0`: how late matching requests that succeeded are
    /// answered, after they were executed (a write is applied at once, its
    /// client learns it only then: a write in flight). Only successful
    /// requests count against `skip` and `count` of such a rule.
    pub delay: Duration,
}

/// How the sandbox answers a streaming list: a watch with
/// `sendInitialEvents=true` (Kubernetes' WatchList, served by default since
/// v1.32), on either lane (in CRD delegate mode, before the request is
/// handed to the real server).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StreamingLists {
    /// Served: the initial state as ADDED events, then a BOOKMARK annotated
    /// `k8s.io/initial-events-end`.
    #[default]
    Served,
    /// Refused before anything is sent, with the `422 Invalid` of a v1.27+
    /// API server whose WatchList feature gate is off.
    Refused,
    /// Served as by a server (or a proxy in front of one) that does not know
    /// the parameter: every object as ADDED and then only changes, never
    /// the initial-events-end bookmark (the stream is passed on without
    /// it).
    Ignored,
}

/// One answered request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// Kubernetes verb, or the lower-cased HTTP method for non-resource paths.
    pub verb: String,
    /// HTTP method (`GET`, `PATCH`, ...).
    pub method: String,
    /// Path without the query.
    pub path: String,
    /// Raw query string, without the `?`.
    pub query: String,
    /// Authenticated (or impersonated) user name; empty if anonymous.
    pub user: String,
    /// HTTP status of the response.
    pub status: u16,
    /// Size of the request body.
    pub request_bytes: usize,
    /// When the request's headers had arrived, since the sandbox started
    /// (monotonic clock).
    pub started: Duration,
    /// When its answer was handed to the connection (after any injected
    /// latency; a watch's stream goes on after that), since the sandbox
    /// started.
    pub finished: Duration,
}

impl RequestRecord {
    /// The record as one JSON line of the request log file (times in
    /// microseconds since the sandbox started).
    pub fn to_json_line(&self) -> String {
        serde_json::json!({
            "verb": self.verb,
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "user": self.user,
            "status": self.status,
            "requestBytes": self.request_bytes,
            "startMicros": self.started.as_micros() as u64,
            "endMicros": self.finished.as_micros() as u64,
        })
        .to_string()
    }
}

#[derive(Debug)]
struct ActiveFault {
    rule: FaultRule,
    seen: u32,
    failed: u32,
}

#[derive(Debug)]
struct Inner {
    faults: Mutex<Vec<ActiveFault>>,
    latency_ms: AtomicU64,
    connect_delay_ms: AtomicU64,
    date_offset_s: std::sync::atomic::AtomicI64,
    outage: Mutex<Outage>,
    outage_tx: tokio::sync::watch::Sender<u64>,
    max_token_expiration: Mutex<Option<Duration>>,
    min_token_expiration: Mutex<Duration>,
    streaming_lists: Mutex<StreamingLists>,
    log: Mutex<VecDeque<RequestRecord>>,
    log_file: Mutex<Option<std::io::BufWriter<std::fs::File>>>,
    epoch: Instant,
    hang: Arc<crate::hang::Hang>,
}

#[derive(Debug, Default)]
struct Outage {
    forever: bool,
    until: Option<Instant>,
}

/// The range the real API server accepts for
/// `--service-account-max-token-expiration`: 1 hour to 2^32 seconds
/// (it refuses to start otherwise).
pub fn validate_max_token_expiration(max: Duration) -> Result<Duration, String> {
    const LOW: Duration = Duration::from_secs(3600);
    const HIGH: Duration = Duration::from_secs(1 << 32);
    if (LOW..=HIGH).contains(&max) {
        Ok(max)
    } else {
        Err(format!(
            "the service account max token expiration must be between 1 hour and 2^32 seconds, got {}s",
            max.as_secs()
        ))
    }
}

/// Handle on a running sandbox's test controls.
#[derive(Debug, Clone)]
pub struct Controls {
    inner: Arc<Inner>,
}

impl Controls {
    pub(crate) fn new(max_token_expiration: Option<Duration>) -> Self {
        let (outage_tx, _) = tokio::sync::watch::channel(0);
        Controls {
            inner: Arc::new(Inner {
                faults: Mutex::new(Vec::new()),
                latency_ms: AtomicU64::new(0),
                connect_delay_ms: AtomicU64::new(0),
                date_offset_s: std::sync::atomic::AtomicI64::new(0),
                outage: Mutex::new(Outage::default()),
                outage_tx,
                max_token_expiration: Mutex::new(max_token_expiration),
                min_token_expiration: Mutex::new(Duration::from_secs(600)),
                streaming_lists: Mutex::new(StreamingLists::Served),
                log: Mutex::new(VecDeque::new()),
                log_file: Mutex::new(None),
                epoch: Instant::now(),
                hang: Arc::default(),
            }),
        }
    }

    /// How streaming lists are answered from now on (watches already
    /// started go on as they were).
    pub fn set_streaming_lists(&self, mode: StreamingLists) {
        *self.inner.streaming_lists.lock().unwrap() = mode;
    }

    pub(crate) fn streaming_lists(&self) -> StreamingLists {
        *self.inner.streaming_lists.lock().unwrap()
    }

    /// Adds a fault rule (rules are checked in the order added).
    pub fn fail(&self, rule: FaultRule) {
        self.inner.faults.lock().unwrap().push(ActiveFault {
            rule,
            seen: 0,
            failed: 0,
        });
    }

    /// Removes every fault rule.
    pub fn clear_faults(&self) {
        self.inner.faults.lock().unwrap().clear();
    }

    /// Delay added before every response (zero turns it off).
    pub fn set_latency(&self, latency: Duration) {
        self.inner
            .latency_ms
            .store(latency.as_millis() as u64, Ordering::Relaxed);
    }

    /// Delay before the TLS handshake of every new connection (zero turns
    /// it off): with [`Controls::set_latency`] it models a hub far away,
    /// where a new connection costs the round trips of the TCP and TLS
    /// handshakes before its first request (`kube-sandbox serve
    /// --round-trip-delay`).
    pub fn set_connect_delay(&self, delay: Duration) {
        self.inner
            .connect_delay_ms
            .store(delay.as_millis() as u64, Ordering::Relaxed);
    }

    /// Shifts the server's clock as its answers show it (the `Date` header,
    /// which a client reads the API server's time from) by `seconds`
    /// (negative: behind the machine clock; zero turns it off): a client
    /// whose clock runs ahead of the server's, seen from the client. Times
    /// the sandbox writes into objects stay on the machine clock.
    pub fn set_date_offset(&self, seconds: i64) {
        self.inner.date_offset_s.store(seconds, Ordering::Relaxed);
    }

    pub(crate) fn date_offset(&self) -> i64 {
        self.inner.date_offset_s.load(Ordering::Relaxed)
    }

    /// Refuses and closes every connection for `period`.
    pub fn outage_for(&self, period: Duration) {
        self.inner.outage.lock().unwrap().until = Some(Instant::now() + period);
        self.inner.outage_tx.send_modify(|g| *g += 1);
    }

    /// Hangs the server (`true`) until it is let go (`false`): every
    /// connection, open or new, stops moving — no answer, no watch event,
    /// nothing refused or closed — as when the server's process is stopped
    /// or the network path to it drops packets (`crate::hang`).
    pub fn set_hung(&self, hung: bool) {
        self.inner.hang.set(hung);
    }

    pub(crate) fn hang(&self) -> Arc<crate::hang::Hang> {
        self.inner.hang.clone()
    }

    /// Turns an open-ended outage on or off.
    pub fn set_outage(&self, on: bool) {
        {
            let mut o = self.inner.outage.lock().unwrap();
            o.forever = on;
            if !on {
                o.until = None;
            }
        }
        if on {
            self.inner.outage_tx.send_modify(|g| *g += 1);
        }
    }

    /// TokenRequest cap, like `--service-account-max-token-expiration`.
    /// A test knob: unlike [`validate_max_token_expiration`] (what the
    /// `--max-token-expiration` flag and [`crate::SandboxOptions`] obey) it
    /// accepts caps below an hour, so tests can compress token lifetimes
    /// (together with [`Controls::set_min_token_expiration`]).
    pub fn set_max_token_expiration(&self, max: Option<Duration>) {
        *self.inner.max_token_expiration.lock().unwrap() = max;
    }

    /// Minimum TokenRequest lifetime (600 s as the real server; tests may lower it).
    pub fn set_min_token_expiration(&self, min: Duration) {
        *self.inner.min_token_expiration.lock().unwrap() = min;
    }

    /// Every request answered so far, in order (the most recent
    /// [`REQUEST_LOG_CAPACITY`] of them).
    pub fn request_log(&self) -> Vec<RequestRecord> {
        self.inner.log.lock().unwrap().iter().cloned().collect()
    }

    /// Empties the request log (not the file of
    /// [`Controls::write_request_log_to`]).
    pub fn clear_request_log(&self) {
        self.inner.log.lock().unwrap().clear();
    }

    /// Also writes every request answered from now on to `path` (created
    /// or truncated), one JSON line each ([`RequestRecord::to_json_line`]),
    /// flushed as it is written so another process can read it while the
    /// sandbox runs. Unbounded: for benchmarks, not for long-running tests.
    pub fn write_request_log_to(&self, path: &Path) -> std::io::Result<()> {
        let file = std::fs::File::create(path)?;
        *self.inner.log_file.lock().unwrap() = Some(std::io::BufWriter::new(file));
        Ok(())
    }

    /// Time since the sandbox started, on the monotonic clock the request
    /// log's `started` and `finished` are read from.
    pub fn elapsed(&self) -> Duration {
        self.inner.epoch.elapsed()
    }

    pub(crate) fn max_token_expiration(&self) -> Option<Duration> {
        *self.inner.max_token_expiration.lock().unwrap()
    }

    pub(crate) fn min_token_expiration(&self) -> Duration {
        *self.inner.min_token_expiration.lock().unwrap()
    }

    pub(crate) fn latency(&self) -> Duration {
        Duration::from_millis(self.inner.latency_ms.load(Ordering::Relaxed))
    }

    pub(crate) fn connect_delay(&self) -> Duration {
        Duration::from_millis(self.inner.connect_delay_ms.load(Ordering::Relaxed))
    }

    pub(crate) fn in_outage(&self) -> bool {
        let mut o = self.inner.outage.lock().unwrap();
        if o.forever {
            return true;
        }
        match o.until {
            Some(t) if Instant::now() < t => true,
            Some(_) => {
                o.until = None;
                false
            }
            None => false,
        }
    }

    /// Changes whenever an outage starts, so open connections can be cut.
    pub(crate) fn outage_signal(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.outage_tx.subscribe()
    }

    /// The status to fail this request with, if a rule says so.
    pub(crate) fn fault_for(&self, verb: &str, path: &str) -> Option<u16> {
        self.matching(verb, path, false).map(|r| r.status)
    }

    /// How late to answer this (executed) request, if a `status: 0` rule
    /// says so.
    pub(crate) fn delay_for(&self, verb: &str, path: &str) -> Option<Duration> {
        self.matching(verb, path, true).map(|r| r.delay)
    }

    /// The first rule of the kind asked for (delay rules: `status: 0`) that
    /// matches and has not used up its count, counting the request against it.
    fn matching(&self, verb: &str, path: &str, delays: bool) -> Option<FaultRule> {
        let mut faults = self.inner.faults.lock().unwrap();
        for f in faults.iter_mut().filter(|f| (f.rule.status == 0) == delays) {
            let verb_ok = f.rule.verb.as_deref().is_none_or(|v| v == verb);
            let path_ok = f
                .rule
                .path_contains
                .as_deref()
                .is_none_or(|p| path.contains(p));
            if !verb_ok || !path_ok || f.failed >= f.rule.count {
                continue;
            }
            if f.seen < f.rule.skip {
                f.seen += 1;
                continue;
            }
            f.failed += 1;
            return Some(f.rule.clone());
        }
        None
    }

    pub(crate) fn record(&self, rec: RequestRecord) {
        if let Some(file) = self.inner.log_file.lock().unwrap().as_mut() {
            // A benchmark's log: a failed write must not fail the request.
            let _ = writeln!(file, "{}", rec.to_json_line()).and_then(|()| file.flush());
        }
        let mut log = self.inner.log.lock().unwrap();
        if log.len() >= REQUEST_LOG_CAPACITY {
            log.pop_front();
        }
        log.push_back(rec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_token_expiration_is_refused_outside_what_the_real_server_accepts() {
        assert!(validate_max_token_expiration(Duration::from_secs(3600)).is_ok());
        assert!(validate_max_token_expiration(Duration::from_secs(1 << 32)).is_ok());
        let short = validate_max_token_expiration(Duration::from_secs(1800)).unwrap_err();
        assert!(short.contains("between 1 hour and 2^32 seconds"), "{short}");
        assert!(validate_max_token_expiration(Duration::from_secs((1 << 32) + 1)).is_err());
    }

    #[test]
    fn faults_skip_then_fail_count_times() {
        let c = Controls::new(None);
        c.fail(FaultRule {
            verb: Some("create".into()),
            path_contains: Some("/clusterroles".into()),
            status: 500,
            skip: 1,
            count: 2,
            delay: Duration::ZERO,
        });
        assert_eq!(c.fault_for("get", "/apis/x/clusterroles"), None);
        assert_eq!(c.fault_for("create", "/api/v1/pods"), None);
        assert_eq!(c.fault_for("create", "/a/clusterroles"), None);
        assert_eq!(c.fault_for("create", "/a/clusterroles"), Some(500));
        assert_eq!(c.fault_for("create", "/a/clusterroles"), Some(500));
        assert_eq!(c.fault_for("create", "/a/clusterroles"), None);
    }

    #[test]
    fn delay_rules_delay_without_failing() {
        let c = Controls::new(None);
        c.fail(FaultRule {
            verb: Some("update".into()),
            status: 0,
            skip: 1,
            count: 1,
            delay: Duration::from_secs(5),
            ..Default::default()
        });
        assert_eq!(c.fault_for("update", "/x"), None);
        assert_eq!(c.delay_for("update", "/x"), None, "skipped");
        assert_eq!(c.delay_for("update", "/x"), Some(Duration::from_secs(5)));
        assert_eq!(c.delay_for("update", "/x"), None, "count used up");
    }

    #[test]
    fn outage_for_expires() {
        let c = Controls::new(None);
        c.outage_for(Duration::from_millis(30));
        assert!(c.in_outage());
        std::thread::sleep(Duration::from_millis(40));
        assert!(!c.in_outage());
        c.set_outage(true);
        assert!(c.in_outage());
        c.set_outage(false);
        assert!(!c.in_outage());
    }
}
