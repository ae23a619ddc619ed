//! What the operator benchmarks measure and how: a process's CPU and
//! memory from `/proc`, the hub's status writes as the sandbox recorded
//! them, the edges it runs, its lag histogram, and the figures of a run.

use super::*;

/// Ticks of `utime + stime` in a `/proc/.../stat` line.
pub(super) fn stat_ticks(stat: &str) -> f64 {
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields overall.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap()
}

pub(super) fn clock_ticks_per_second() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse::<f64>().ok())
        .unwrap_or(100.0)
}

/// A `kB` field of `/proc/PID/status`, in MiB.
pub(super) fn status_mib(pid: &str, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1024.0
}

/// (CPU seconds user+system, peak RSS in MiB) of a process.
pub(super) fn cpu_and_peak_rss(pid: u32) -> (f64, f64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    (
        stat_ticks(&stat) / clock_ticks_per_second(),
        status_mib(&pid.to_string(), "VmHWM:"),
    )
}

/// Resident set size of a process now, in MiB.
pub(super) fn rss_mib(pid: u32) -> f64 {
    status_mib(&pid.to_string(), "VmRSS:")
}

/// CPU seconds of this benchmark process, split into kube-sandbox's threads
/// (named `kube-sandbox-*`) and everything else (the simulated edges, the
/// benchmark's own watch, the test harness).
pub(super) fn bench_process_cpu() -> (f64, f64) {
    let clk = clock_ticks_per_second();
    let total = stat_ticks(&std::fs::read_to_string("/proc/self/stat").unwrap());
    let mut sandbox = 0.0;
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        let comm = stat
            .split_once('(')
            .and_then(|(_, r)| r.rsplit_once(')'))
            .map(|(c, _)| c)
            .unwrap_or_default();
        if comm.starts_with("kube-sandbox") {
            sandbox += stat_ticks(&stat);
        }
    }
    (sandbox / clk, (total - sandbox) / clk)
}

pub(super) fn is_hub_status_write(r: &kube_sandbox::RequestRecord) -> bool {
    r.verb == "update"
        && r.path
            .starts_with("/apis/federation.kubectl-fleet.dev/v1alpha1/federatedclusters/")
        && r.path.ends_with("/status")
        && (200..300).contains(&r.status)
}

/// The site a `/federatedclusters/NAME/status` request was about.
pub(super) fn status_request_site(r: &kube_sandbox::RequestRecord) -> &str {
    r.path
        .trim_end_matches("/status")
        .rsplit('/')
        .next()
        .unwrap_or_default()
}

/// The shape of one hub benchmark run.
#[derive(Clone, Copy, Debug)]
pub(super) struct HubRun {
    /// `BENCH-RESULT` goal of the figures.
    pub(super) goal: &'static str,
    pub(super) sites: usize,
    /// The last `silenced` sites stop reporting once all are Connected.
    pub(super) silenced: usize,
    /// `heartbeatIntervalSeconds` of every site.
    pub(super) spec_interval: u32,
    /// The hub's `--interval-scale` (1.0 but in the smoke run).
    pub(super) scale: f64,
}

impl HubRun {
    /// The interval the hub judges by and the simulated edges keep.
    pub(super) fn interval(&self) -> Duration {
        Duration::from_secs(self.spec_interval.into()).mul_f64(self.scale)
    }
}

/// Every phase the benchmark's own watch saw each site in, in order, and
/// when it first saw it.
#[derive(Default)]
pub(super) struct Seen {
    pub(super) phases: std::collections::HashMap<String, Vec<(Phase, Instant)>>,
}

impl Seen {
    pub(super) fn count(&self, names: &[String], p: Phase) -> usize {
        names
            .iter()
            .filter(|n| {
                self.phases
                    .get(n.as_str())
                    .and_then(|v| v.last())
                    .is_some_and(|(q, _)| *q == p)
            })
            .count()
    }

    /// When `site` was first seen in `p`.
    pub(super) fn first(&self, site: &str, p: Phase) -> Option<Instant> {
        self.phases
            .get(site)?
            .iter()
            .find(|(q, _)| *q == p)
            .map(|(_, t)| *t)
    }
}

/// Watches every site and records its phases into `seen`.
pub(super) fn watch_phases(
    api: Api<FederatedCluster>,
    seen: Arc<std::sync::Mutex<Seen>>,
) -> tokio::task::JoinHandle<()> {
    use kube::runtime::watcher::{Config, Event, watcher};
    tokio::spawn(async move {
        let mut events = std::pin::pin!(watcher(api, Config::default()));
        while let Some(ev) = events.next().await {
            let (Ok(Event::Apply(site)) | Ok(Event::InitApply(site))) = ev else {
                continue;
            };
            let Some(p) = site.phase() else { continue };
            let mut seen = seen.lock().unwrap();
            let v = seen.phases.entry(site.site_name().to_owned()).or_default();
            if v.last().map(|(q, _)| *q) != Some(p) {
                v.push((p, Instant::now()));
            }
        }
    })
}

/// Simulated edges: each site sends one heartbeat-only merge patch per
/// interval (the body the edge sends when nothing else changed), spread
/// evenly over the interval; the last `silenced` sites stop once told.
pub(super) struct Edges {
    pub(super) stop: AtomicBool,
    pub(super) silenced: AtomicBool,
    pub(super) sent: AtomicU64,
    pub(super) late_rounds: AtomicU64,
    /// Per site: milliseconds after `epoch` its last accepted heartbeat was made.
    pub(super) last_sent: Vec<AtomicU64>,
    pub(super) epoch: Instant,
}

impl Edges {
    pub(super) fn last_sent(&self, i: usize) -> Instant {
        self.epoch + Duration::from_millis(self.last_sent[i].load(Ordering::SeqCst))
    }
}

pub(super) fn run_edges(
    api: Api<FederatedCluster>,
    names: Arc<Vec<String>>,
    run: HubRun,
    edges: Arc<Edges>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let interval = run.interval();
        let n = names.len();
        while !edges.stop.load(Ordering::SeqCst) {
            let round = Instant::now();
            futures::stream::iter(names.iter().cloned().enumerate())
                .map(|(i, name)| {
                    let (api, edges) = (api.clone(), edges.clone());
                    let at = round + interval.mul_f64(i as f64 / n as f64);
                    async move {
                        tokio::time::sleep_until(at.into()).await;
                        if edges.stop.load(Ordering::SeqCst)
                            || (i >= n - run.silenced && edges.silenced.load(Ordering::SeqCst))
                        {
                            return;
                        }
                        let made = Instant::now();
                        // The edge's own patch for a report where nothing
                        // but the heartbeat changed.
                        let beat = EdgeStatus {
                            last_heartbeat_time: Some(Time(jiff::Timestamp::now())),
                            ..EdgeStatus::default()
                        };
                        let body = edge_status_patch(Some(&EdgeStatus::default()), &beat);
                        if api
                            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&body))
                            .await
                            .is_ok()
                        {
                            edges.sent.fetch_add(1, Ordering::Relaxed);
                            let ms = made.duration_since(edges.epoch).as_millis() as u64;
                            edges.last_sent[i].fetch_max(ms, Ordering::SeqCst);
                        }
                    }
                })
                .buffer_unordered(64)
                .collect::<Vec<_>>()
                .await;
            if round.elapsed() > interval + Duration::from_secs(1) {
                edges.late_rounds.fetch_add(1, Ordering::Relaxed);
            }
            tokio::time::sleep_until((round + interval).into()).await;
        }
    })
}

/// The hub's `/metrics`, read over HTTPS without a token (`--metrics-auth false`).
pub(super) async fn scrape_hub(addr: &str, ca: &str) -> Scrape {
    let (code, body) = https_get(addr, "/metrics", None, ca).await;
    assert_eq!(code, 200, "{body}");
    Scrape::parse(&body)
}

/// The upper bound of the histogram bucket holding quantile `q` of
/// `fleet_hub_watch_event_lag_seconds`, and the mean.
pub(super) fn lag_quantile(s: &Scrape, q: f64) -> f64 {
    let mut buckets: Vec<(f64, f64)> = s
        .samples
        .iter()
        .filter(|(n, _, _)| n == "fleet_hub_watch_event_lag_seconds_bucket")
        .map(|(_, l, v)| {
            let le = l
                .split(',')
                .find_map(|kv| kv.strip_prefix("le=\""))
                .map(|v| v.trim_end_matches('"'))
                .unwrap_or("+Inf");
            (le.parse::<f64>().unwrap_or(f64::INFINITY), *v)
        })
        .collect();
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total = buckets.last().map(|b| b.1).unwrap_or(0.0);
    buckets
        .iter()
        .find(|(_, c)| *c >= q * total)
        .map(|(le, _)| *le)
        .unwrap_or(f64::NAN)
}

/// (min, median, p99, max) of `v`, in seconds.
pub(super) fn distribution(v: &mut [f64]) -> (f64, f64, f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN, f64::NAN);
    }
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (v[0], at(0.5), at(0.99), v[v.len() - 1])
}

/// What one hub run measured.
#[derive(Debug, Default)]
pub(super) struct HubFigures {
    pub(super) create_secs: f64,
    pub(super) connected_secs: f64,
    /// Seconds from each silenced site's last heartbeat to its Stale, Unreachable.
    pub(super) to_stale: Vec<f64>,
    pub(super) to_unreachable: Vec<f64>,
    pub(super) silenced_never_stale: usize,
    pub(super) silenced_never_unreachable: usize,
    /// Silenced sites whose phases were not Connected, Stale, Unreachable in that order.
    pub(super) silenced_out_of_order: usize,
    /// The phases of one such site, for the report.
    pub(super) out_of_order_example: String,
    /// A few `condition transition` lines of the hub log.
    pub(super) condition_examples: Vec<String>,
    pub(super) live_left_connected: usize,
    pub(super) steady_secs: f64,
    pub(super) steady_hub_cpu: f64,
    pub(super) steady_sandbox_cpu: f64,
    pub(super) steady_bench_cpu: f64,
    pub(super) steady_rss: f64,
    pub(super) hub_peak_rss: f64,
    pub(super) heartbeats: u64,
    pub(super) late_rounds: u64,
    pub(super) mean_patch_bytes: usize,
    pub(super) lag_mean: f64,
    pub(super) lag_p50: f64,
    pub(super) lag_p99: f64,
    pub(super) lag_count: f64,
    pub(super) phase_transitions: usize,
    pub(super) condition_transitions: usize,
    pub(super) hub_writes: usize,
    /// Sites whose hub writes differ from the phase changes the watch saw.
    pub(super) sites_writes_not_transitions: usize,
    pub(super) conflicts: usize,
    pub(super) log_overflowed: bool,
    pub(super) restart_judged_secs: f64,
    pub(super) restart_writes: usize,
    pub(super) restart_hub_cpu: f64,
}
