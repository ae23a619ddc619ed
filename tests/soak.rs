//! The soak (docs/reliability.md#soak): a kube-sandbox hub, two
//! hub replicas as real `fleet-operator` processes (leader election), sites
//! registered through the real `kubectl` (`kubectl fleet register`), a few
//! real edge processes against kube-sandbox member clusters and, for the
//! bulk, simulated edges that report exactly as the edge does (its own
//! token, `get` of its own site, the change-only merge patch of
//! `fleet::status_patch::report_patch`, the hub kubeconfig re-read from disk
//! every report). Churn for the whole run: new sites registered, sites
//! unregistered, tokens rotated with `--revoke` (every affected edge picks
//! up the new kubeconfig), real edges SIGKILLed and restarted, simulated
//! edges restarted (their baseline read back from the hub), some edges
//! silenced, and the hub leader SIGKILLed half-way.
//!
//! At the end, through the API and the real `kubectl`: every live site is
//! Connected and holds every edge-owned field its edge last wrote, silenced
//! sites are Unreachable, never-started sites Pending, unregistered sites
//! and their identity objects are gone, each site appears once, and the
//! FederationStatus counts agree with the sites. Hub (leader) and steady
//! real-edge RSS (`VmRSS`) are sampled all along and compared between the
//! first and the last window (5 minutes, or a fifth of a shorter run).
//!
//! - `soak_smoke` runs in the suite: 20 sites, 75 s, I = 3 s. It prints the
//!   memory figures but asserts nothing about them, nor about time.
//! - `soak_full` is ignored: 200 sites for 30 minutes at the real 10 s
//!   interval, and it asserts flat RSS (tolerance in [`RSS_TOLERANCE`]):
//!
//! ```text
//! CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
//!   cargo test --release --test integration soak:: -- --ignored --nocapture
//! ```
//!
//! `SOAK_SITES`, `SOAK_SECS`, `SOAK_SCALE` (interval scale) and
//! `SOAK_REAL_EDGES` change its size.

use crate::support;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::Api;
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{
    Capacity, EdgeStatus, FederatedCluster, FederatedClusterStatus, FederationStatus, GpuCount,
    Inference, Phase, Severity, Signal, SignalType, WorkloadRef,
};
use kubectl_fleet::fleet::rbac;
use kubectl_fleet::fleet::status_patch::{Accepted, report_patch};
use kubectl_fleet::k8s::site_status;
use kubectl_fleet::operator::collect::with_identity;
use kubectl_fleet::operator::credential::HubKubeconfig;
use support::*;

/// The interval every site is registered with (the minimum); the processes
/// and the simulated edges scale it by `Size::scale`.
const REGISTERED_INTERVAL: u32 = 10;

/// Flat RSS, as `soak_full` asserts it: the median of the last window at
/// most this much above the median of the first window.
const RSS_TOLERANCE: f64 = 0.20;

/// The size of one run.
#[derive(Clone, Debug)]
struct Size {
    /// Sites registered before the churn starts.
    sites: usize,
    /// How many of them run a real edge process (the rest are simulated).
    real: usize,
    /// Real edges never restarted or rotated: their RSS is compared.
    steady_real: usize,
    /// Churn and measurement, after every initial site is Connected.
    run: Duration,
    /// `--interval-scale` of every process (and the simulated edges).
    scale: f64,
    /// RSS sampling period.
    sample: Duration,
    /// Whether flat RSS is asserted (the full-sized run only).
    assert_rss: bool,
}

impl Size {
    fn smoke() -> Size {
        Size {
            sites: 20,
            real: 6,
            steady_real: 2,
            run: Duration::from_secs(75),
            scale: 0.3,
            sample: Duration::from_secs(1),
            assert_rss: false,
        }
    }

    fn full() -> Size {
        let env = |k: &str, default: f64| {
            std::env::var(k)
                .ok()
                .map(|v| v.parse::<f64>().unwrap_or_else(|_| panic!("{k}={v}")))
                .unwrap_or(default)
        };
        let real = env("SOAK_REAL_EDGES", 8.0) as usize;
        assert!(real >= 5, "SOAK_REAL_EDGES must be at least 5");
        Size {
            sites: env("SOAK_SITES", 200.0) as usize,
            real,
            steady_real: 3,
            run: Duration::from_secs_f64(env("SOAK_SECS", 1800.0)),
            scale: env("SOAK_SCALE", 1.0),
            sample: Duration::from_secs(5),
            assert_rss: true,
        }
    }

    /// The effective heartbeat interval I.
    fn interval(&self) -> Duration {
        Duration::from_secs(REGISTERED_INTERVAL.into()).mul_f64(self.scale)
    }

    /// The RSS comparison window: 5 minutes, or a fifth of a shorter run.
    fn window(&self) -> Duration {
        (self.run / 5).min(Duration::from_secs(300))
    }

    /// How many times each churned real edge is rotated or restarted.
    fn rounds(&self) -> usize {
        (self.run.as_secs() as usize / 300).max(2)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_smoke() {
    soak(Size::smoke()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "30-minute soak: run explicitly, see the module docs"]
async fn soak_full() {
    soak(Size::full()).await;
}

// ---------------------------------------------------------------------------
// Simulated edges

/// What one simulated edge's member cluster looks like at report `round`:
/// its node count and versions move every few reports, so a field the hub
/// lost would not be re-sent (the change-only patch thinks it is held).
fn sim_member(k: usize, round: u64, started: Timestamp, now: Timestamp) -> EdgeStatus {
    let nodes = 1 + ((k as u64 + round / 7) % 5) as i64;
    let gpus = 4 * nodes;
    let signals = if k.is_multiple_of(4) {
        vec![Signal {
            type_: SignalType::CrashLoopBackOff,
            severity: Severity::High,
            cluster: None,
            namespace: "shop".into(),
            workload: WorkloadRef::new("Deployment", "checkout"),
            message: Some("back-off restarting failed container".into()),
            first_seen: Time(started),
            last_seen: Time(now),
            count: round as i64 + 1,
        }]
    } else {
        Vec::new()
    };
    EdgeStatus {
        kubernetes_version: Some(format!("v1.3{}.{}", k % 4, round / 11)),
        node_count: Some(nodes),
        namespace_count: Some(5 + (k % 3) as i64),
        capacity: Some(Capacity {
            nodes,
            gpus_total: gpus,
            gpus_allocatable: gpus,
            gpus_by_vendor: [(
                "nvidia.com/gpu".to_owned(),
                GpuCount {
                    total: gpus,
                    allocatable: gpus,
                },
            )]
            .into(),
        }),
        inference: Some(Inference::default()),
        signals: Some(signals),
        ..Default::default()
    }
}

/// Counters of every simulated edge together.
#[derive(Default)]
struct SimStats {
    reports: AtomicU64,
    errors: Mutex<BTreeMap<String, u64>>,
}

/// One simulated edge: the state the edge process keeps between reports.
struct SimState {
    site: String,
    k: usize,
    kubeconfig: PathBuf,
    scale: f64,
    conn: Option<(HubKubeconfig, kube::Client)>,
    accepted: Option<Accepted>,
    round: u64,
    started: Timestamp,
}

fn whole_seconds(t: Timestamp) -> Timestamp {
    Timestamp::from_second(t.as_second()).unwrap()
}

impl SimState {
    /// One report, as `Edge::tick` makes it. Returns the scaled interval.
    async fn tick(&mut self) -> Result<Duration, String> {
        let fresh =
            HubKubeconfig::read(&self.kubeconfig).map_err(|e| format!("kubeconfig: {e}"))?;
        if self.conn.as_ref().is_none_or(|(held, _)| *held != fresh) {
            let client = fresh
                .client()
                .await
                .map_err(|e| format!("kubeconfig: {e}"))?;
            self.conn = Some((fresh, client));
        }
        let (kc, client) = self.conn.as_ref().unwrap();
        let code = |e: kube::Error| match e {
            kube::Error::Api(s) => format!("{} {}", s.code, s.reason),
            other => format!("transport: {other}"),
        };
        let api = site_status::sites(client.clone());
        let site = site_status::get_site(&api, &self.site)
            .await
            .map_err(code)?;
        let interval = site.heartbeat_interval().mul_f64(self.scale);
        let now = whole_seconds(Timestamp::now());
        let status = with_identity(
            sim_member(self.k, self.round, self.started, now),
            now,
            env!("CARGO_PKG_VERSION"),
            kc.claims().and_then(|c| c.expires_at),
            None,
        );
        let uid = site.metadata.uid.clone();
        let baseline = Accepted::baseline(&mut self.accepted, &site);
        let (patch, next) = report_patch(Some(baseline), status, now);
        site_status::patch_site_status(&api, &self.site, &patch)
            .await
            .map_err(code)?;
        self.accepted = Some(Accepted { uid, status: next });
        self.round += 1;
        Ok(interval)
    }
}

/// A running simulated edge.
struct SimEdge {
    stop: Arc<AtomicBool>,
    /// Set to forget everything but the kubeconfig path, as a restarted
    /// edge process does.
    restart: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<Option<Accepted>>,
}

impl SimEdge {
    fn start(
        site: &str,
        k: usize,
        kubeconfig: PathBuf,
        scale: f64,
        stats: Arc<SimStats>,
    ) -> SimEdge {
        let stop = Arc::new(AtomicBool::new(false));
        let restart = Arc::new(AtomicBool::new(false));
        let mut st = SimState {
            site: site.to_owned(),
            k,
            kubeconfig,
            scale,
            conn: None,
            accepted: None,
            round: 0,
            started: whole_seconds(Timestamp::now()),
        };
        let (stop2, restart2) = (stop.clone(), restart.clone());
        let task = tokio::spawn(async move {
            // Spread the reports over one interval.
            let first = Duration::from_secs(REGISTERED_INTERVAL.into())
                .mul_f64(scale * (k % 20) as f64 / 20.0);
            tokio::time::sleep(first).await;
            while !stop2.load(Ordering::SeqCst) {
                if restart2.swap(false, Ordering::SeqCst) {
                    st.conn = None;
                    st.accepted = None;
                }
                let started = tokio::time::Instant::now();
                let wait = match st.tick().await {
                    Ok(interval) => {
                        stats.reports.fetch_add(1, Ordering::Relaxed);
                        interval.saturating_sub(started.elapsed())
                    }
                    Err(e) => {
                        *stats.errors.lock().unwrap().entry(e).or_default() += 1;
                        Duration::from_secs(1)
                    }
                };
                let until = tokio::time::Instant::now() + wait;
                while tokio::time::Instant::now() < until && !stop2.load(Ordering::SeqCst) {
                    tokio::time::sleep(Duration::from_millis(200).min(wait)).await;
                }
            }
            st.accepted
        });
        SimEdge {
            stop,
            restart,
            task,
        }
    }

    /// Stops it after its current report; returns what the hub last accepted.
    async fn stop(self) -> Option<Accepted> {
        self.stop.store(true, Ordering::SeqCst);
        self.task.await.unwrap()
    }
}

// ---------------------------------------------------------------------------
// Real edges

struct RealEdge {
    site: String,
    _member: Sandbox,
    member_kc: PathBuf,
    failing: bool,
    proc: Proc,
    starts: usize,
}

/// One hub replica (leader election on), logging to `ID.log` in `dir`.
fn spawn_hub(dir: &TempDir, hub_kc: &Path, id: &str, scale: f64) -> Proc {
    Proc::spawn(
        id,
        &operator_bin(),
        &hub_args(hub_kc, id, scale),
        dir.join(&format!("{id}.log")),
    )
}

fn spawn_edge(dir: &TempDir, site: &str, member_kc: &Path, scale: f64, n: usize) -> Proc {
    Proc::spawn(
        site,
        &operator_bin(),
        &edge_args(site, member_kc, &site_kubeconfig(dir, site), scale),
        dir.join(&format!("{site}-{n}.log")),
    )
}

fn site_kubeconfig(dir: &TempDir, site: &str) -> PathBuf {
    dir.join(&format!("{site}.kubeconfig"))
}

/// The `exp` of the token in a site's hub kubeconfig file.
fn token_expiry(path: &Path) -> Timestamp {
    HubKubeconfig::read(path)
        .unwrap()
        .claims()
        .and_then(|c| c.expires_at)
        .expect("the site token has an exp claim")
}

// ---------------------------------------------------------------------------
// Churn

#[derive(Debug, Clone)]
enum Action {
    /// Register a new site and start a simulated edge for it.
    Register(String),
    /// Register a site whose edge never starts (stays Pending).
    RegisterPending(String),
    /// `unregister` a simulated site (its edge is then decommissioned).
    Unregister(String),
    /// `rotate --revoke` a simulated site into the file its edge reads.
    Rotate(String),
    /// Stop a simulated edge for good: its site must end Unreachable.
    Silence(String),
    /// Restart a simulated edge (it starts again from what the hub holds).
    SimRestart(String),
    /// `rotate --revoke` a real edge's site; it picks up the new file.
    RealRotate(usize),
    /// SIGKILL a real edge and start it again.
    RealRestart(usize),
    /// `unregister` a real edge's site while the edge keeps running.
    RealUnregister(usize),
    /// SIGKILL the hub leader.
    Failover,
}

/// Every churn action with its offset from the start of the run: the
/// kinds interleaved round-robin and spread evenly over 5 %–70 % of the run
/// (so the last window is steady and silenced sites have 10·I to become
/// Unreachable), the leader failover at half-way.
fn schedule(size: &Size, sims: &[String]) -> Vec<(Duration, Action)> {
    let n = size.sites;
    let silence = (n / 20).max(2);
    let unregister = (n / 10).max(2);
    let rotate = (n / 10).max(2);
    let restart = (n / 20).max(2);
    let register = (n / 10).max(2);
    assert!(
        sims.len() >= silence + unregister + rotate + restart + 2,
        "too few simulated sites for the churn"
    );
    let mut pool = sims.iter().cloned();
    let mut take = |count: usize| pool.by_ref().take(count).collect::<Vec<_>>();
    let mut kinds: Vec<Vec<Action>> = vec![
        take(silence).into_iter().map(Action::Silence).collect(),
        (0..register)
            .map(|i| Action::Register(format!("new-{i:04}")))
            .collect(),
        take(unregister)
            .into_iter()
            .map(Action::Unregister)
            .collect(),
        take(rotate).into_iter().map(Action::Rotate).collect(),
        take(restart).into_iter().map(Action::SimRestart).collect(),
        (0..2)
            .map(|i| Action::RegisterPending(format!("pending-{i:02}")))
            .collect(),
    ];
    let mut real = Vec::new();
    for round in 0..size.rounds() {
        for i in size.steady_real..size.real - 1 {
            match (i - size.steady_real) % 3 {
                0 => real.push(Action::RealRotate(i)),
                1 => real.push(Action::RealRestart(i)),
                _ => {
                    real.push(Action::RealRestart(i));
                    real.push(Action::RealRotate(i));
                }
            }
        }
        if round == 0 {
            real.push(Action::RealUnregister(size.real - 1));
        }
    }
    kinds.push(real);
    let mut order = Vec::new();
    let mut queues: Vec<std::collections::VecDeque<Action>> =
        kinds.into_iter().map(Into::into).collect();
    while queues.iter().any(|q| !q.is_empty()) {
        for q in &mut queues {
            if let Some(a) = q.pop_front() {
                order.push(a);
            }
        }
    }
    let count = order.len() as f64;
    let mut timed: Vec<(Duration, Action)> = order
        .into_iter()
        .enumerate()
        .map(|(i, a)| (size.run.mul_f64(0.05 + 0.65 * i as f64 / count), a))
        .collect();
    timed.push((size.run / 2, Action::Failover));
    timed.sort_by_key(|(t, _)| *t);
    timed
}

// ---------------------------------------------------------------------------
// Reading the hub

async fn phases(api: &Api<FederatedCluster>) -> BTreeMap<String, Option<Phase>> {
    api.list(&Default::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(|s| (s.site_name().to_owned(), s.phase()))
        .collect()
}

/// Every difference between the sites the hub holds and `want`.
fn differences(
    got: &BTreeMap<String, Option<Phase>>,
    want: &BTreeMap<String, Phase>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (name, phase) in got {
        match want.get(name) {
            None => out.push(format!("{name}: present ({phase:?}), should be gone")),
            Some(w) if Some(*w) != *phase => out.push(format!("{name}: {phase:?}, wanted {w}")),
            Some(_) => {}
        }
    }
    for name in want.keys() {
        if !got.contains_key(name) {
            out.push(format!("{name}: missing"));
        }
    }
    out
}

/// Waits until the hub shows exactly `want`; panics with the differences
/// after `timeout`.
async fn wait_for_phases(
    api: &Api<FederatedCluster>,
    want: &BTreeMap<String, Phase>,
    timeout: Duration,
) {
    let start = Instant::now();
    loop {
        let diff = differences(&phases(api).await, want);
        if diff.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < timeout,
            "after {timeout:?} the hub still differs from what the churn leaves:\n{}",
            diff.join("\n")
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn site_status_of(api: &Api<FederatedCluster>, site: &str) -> Option<FederatedClusterStatus> {
    api.get_opt(site).await.unwrap().and_then(|s| s.status)
}

/// A phase change a watch saw: seconds into the run, site, new phase.
type Transition = (f64, String, Option<Phase>);

// ---------------------------------------------------------------------------
// Memory

/// RSS samples (seconds since the run started, KiB).
#[derive(Default, Clone)]
struct Series(Vec<(f64, u64)>);

impl Series {
    fn median_between(&self, from: f64, to: f64) -> Option<f64> {
        let mut v: Vec<u64> = self
            .0
            .iter()
            .filter(|(t, _)| *t >= from && *t <= to)
            .map(|(_, kib)| *kib)
            .collect();
        v.sort_unstable();
        (!v.is_empty()).then(|| v[v.len() / 2] as f64 / 1024.0)
    }

    fn max(&self) -> f64 {
        self.0.iter().map(|(_, k)| *k).max().unwrap_or(0) as f64 / 1024.0
    }
}

// ---------------------------------------------------------------------------

async fn soak(size: Size) {
    let interval = size.interval();
    eprintln!("soak: {size:?}, I = {interval:?}");
    let dir = TempDir::new("soak");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let admin_c = admin(&hub_sb).await;
    let api: Api<FederatedCluster> = Api::all(admin_c.clone());
    let fleet = |args: &[&str]| kubectl_fleet(&hub_kc, args);
    let operator_kc = hub_operator_kubeconfig(&hub_sb, &dir).await;

    // Two hub replicas; the first leads.
    let hub_pids: Arc<Mutex<HashMap<String, u32>>> = Default::default();
    let mut hubs: Vec<Proc> = Vec::new();
    for id in ["hub-a", "hub-b"] {
        let p = spawn_hub(&dir, &operator_kc, id, size.scale);
        hub_pids.lock().unwrap().insert(id.to_owned(), p.pid());
        hubs.push(p);
        if id == "hub-a" {
            wait_until(Duration::from_secs(30), "hub-a leads", || async {
                lease_holder(&admin_c).await.as_deref() == Some("hub-a")
            })
            .await;
        }
    }

    // Register every initial site through the real kubectl, four at a time.
    let real_names: Vec<String> = (0..size.real).map(|i| format!("real-{i:02}")).collect();
    let sim_names: Vec<String> = (0..size.sites - size.real)
        .map(|i| format!("sim-{i:04}"))
        .collect();
    let register = |site: String| {
        let hub_kc = hub_kc.clone();
        let out = site_kubeconfig(&dir, &site);
        // Half staging, half production: shared signals make correlations
        // and cascades for the hub to compute.
        let env = if site.bytes().last().unwrap_or(0).is_multiple_of(2) {
            "production"
        } else {
            "staging"
        };
        tokio::task::spawn_blocking(move || {
            let (i, o) = (REGISTERED_INTERVAL.to_string(), out.display().to_string());
            let args = [
                "register",
                &site,
                "--heartbeat-interval",
                &i,
                "--environment",
                env,
                "--output-file",
                &o,
            ];
            kubectl_fleet(&hub_kc, &args);
        })
    };
    let registering = Instant::now();
    futures::stream::iter(real_names.iter().chain(&sim_names).cloned())
        .map(register)
        .buffer_unordered(4)
        .for_each(|r| async { r.unwrap() })
        .await;
    let registered_in = registering.elapsed();

    // Real edges, each against its own member cluster (one GPU node; every
    // other one with a crash-looping Deployment).
    let mut reals: Vec<RealEdge> = Vec::new();
    for (i, site) in real_names.iter().enumerate() {
        let member = Sandbox::start();
        let member_kc = dir.join(&format!("{site}-member.kubeconfig"));
        member.write_admin_kubeconfig(&member_kc).unwrap();
        let failing = i % 2 == 0;
        let pods = [FailingPod {
            namespace: "shop",
            deployment: "checkout",
            reason: "CrashLoopBackOff",
        }];
        seed_member(
            &admin(&member).await,
            &[NodeSeed {
                name: &format!("{site}-node"),
                gpus: &[("nvidia.com/gpu", 8, 8)],
                ready: true,
            }],
            if failing { &pods } else { &[] },
        )
        .await;
        let proc = spawn_edge(&dir, site, &member_kc, size.scale, 0);
        reals.push(RealEdge {
            site: site.clone(),
            _member: member,
            member_kc,
            failing,
            proc,
            starts: 1,
        });
    }
    let stats = Arc::new(SimStats::default());
    let mut sims: BTreeMap<String, SimEdge> = BTreeMap::new();
    for (k, site) in sim_names.iter().enumerate() {
        let e = SimEdge::start(
            site,
            k,
            site_kubeconfig(&dir, site),
            size.scale,
            stats.clone(),
        );
        sims.insert(site.clone(), e);
    }
    let mut want: BTreeMap<String, Phase> = real_names
        .iter()
        .chain(&sim_names)
        .map(|s| (s.clone(), Phase::Connected))
        .collect();
    let setup_timeout =
        Duration::from_secs(90) + interval * 3 + Duration::from_millis(300) * size.sites as u32;
    wait_for_phases(&api, &want, setup_timeout).await;
    eprintln!(
        "soak: {} sites registered through kubectl in {registered_in:.1?}, all Connected; churn starts",
        size.sites
    );

    // From here on: sample RSS and watch every phase change.
    let t0 = Instant::now();
    let stop_sampling = Arc::new(AtomicBool::new(false));
    let steady_pids: Vec<u32> = reals[..size.steady_real]
        .iter()
        .map(|r| r.proc.pid())
        .collect();
    let sampler = {
        let (admin_c, hub_pids, stop) = (admin_c.clone(), hub_pids.clone(), stop_sampling.clone());
        let period = size.sample;
        tokio::spawn(async move {
            let mut leader = Series::default();
            let mut edges = vec![Series::default(); steady_pids.len()];
            while !stop.load(Ordering::SeqCst) {
                let at = t0.elapsed().as_secs_f64();
                if let Some(holder) = lease_holder(&admin_c).await {
                    let pid = hub_pids.lock().unwrap().get(&holder).copied();
                    if let Some(kib) = pid.and_then(vm_rss_kib) {
                        leader.0.push((at, kib));
                    }
                }
                for (s, pid) in edges.iter_mut().zip(&steady_pids) {
                    if let Some(kib) = vm_rss_kib(*pid) {
                        s.0.push((at, kib));
                    }
                }
                tokio::time::sleep(period).await;
            }
            (leader, edges)
        })
    };
    let transitions: Arc<Mutex<Vec<Transition>>> = Default::default();
    let watcher = {
        let (api, transitions) = (api.clone(), transitions.clone());
        tokio::spawn(async move {
            let mut last: HashMap<String, Option<Phase>> = HashMap::new();
            let mut events = Box::pin(kube::runtime::watcher::watcher(
                api,
                kube::runtime::watcher::Config::default(),
            ));
            while let Some(ev) = events.next().await {
                let site = match ev {
                    Ok(kube::runtime::watcher::Event::Apply(s))
                    | Ok(kube::runtime::watcher::Event::InitApply(s)) => s,
                    _ => continue,
                };
                let name = site.site_name().to_owned();
                let phase = site.phase();
                if last.insert(name.clone(), phase) != Some(phase) {
                    transitions
                        .lock()
                        .unwrap()
                        .push((t0.elapsed().as_secs_f64(), name, phase));
                }
            }
        })
    };

    // The churn.
    let plan = schedule(&size, &sim_names);
    let mut done: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut gone: BTreeSet<String> = BTreeSet::new();
    let mut touched: BTreeSet<String> = BTreeSet::new();
    let mut next_k = sim_names.len();
    // What each stopped simulated edge last had accepted.
    let mut last_written: BTreeMap<String, Option<Accepted>> = BTreeMap::new();
    let mut failover = None;
    let rotate_timeout = interval * 20 + Duration::from_secs(30);
    for (at, action) in plan {
        if let Some(d) = (t0 + at).checked_duration_since(Instant::now()) {
            tokio::time::sleep(d).await;
        }
        let kind = match &action {
            Action::Register(site) => {
                register(site.clone()).await.unwrap();
                let e = SimEdge::start(
                    site,
                    next_k,
                    site_kubeconfig(&dir, site),
                    size.scale,
                    stats.clone(),
                );
                next_k += 1;
                sims.insert(site.clone(), e);
                want.insert(site.clone(), Phase::Connected);
                "register (new site, simulated edge)"
            }
            Action::RegisterPending(site) => {
                register(site.clone()).await.unwrap();
                want.insert(site.clone(), Phase::Pending);
                "register (edge never started)"
            }
            Action::Unregister(site) => {
                fleet(&["unregister", site, "--yes"]);
                if let Some(e) = sims.remove(site) {
                    e.stop().await;
                }
                want.remove(site);
                gone.insert(site.clone());
                "unregister (simulated)"
            }
            Action::Rotate(site) => {
                let out = site_kubeconfig(&dir, site).display().to_string();
                fleet(&["rotate", site, "--revoke", "--output-file", &out]);
                touched.insert(site.clone());
                "rotate --revoke (simulated)"
            }
            Action::Silence(site) => {
                let accepted = sims.remove(site).unwrap().stop().await;
                last_written.insert(site.clone(), accepted);
                want.insert(site.clone(), Phase::Unreachable);
                touched.insert(site.clone());
                "silence (simulated edge stopped)"
            }
            Action::SimRestart(site) => {
                sims[site].restart.store(true, Ordering::SeqCst);
                touched.insert(site.clone());
                "restart (simulated)"
            }
            Action::RealRotate(i) => {
                let site = reals[*i].site.clone();
                let path = site_kubeconfig(&dir, &site);
                let pid = reals[*i].proc.pid();
                fleet(&[
                    "rotate",
                    &site,
                    "--revoke",
                    "--output-file",
                    &path.display().to_string(),
                ]);
                let new_exp = token_expiry(&path);
                // Sync point: the running edge reports the new token's expiry.
                wait_until(
                    rotate_timeout,
                    &format!("{site} reports its rotated token"),
                    || async {
                        site_status_of(&api, &site)
                            .await
                            .and_then(|s| s.credential_expiration_time)
                            .is_some_and(|t| t.0 == new_exp)
                    },
                )
                .await;
                assert_eq!(reals[*i].proc.pid(), pid, "{site}'s edge was not restarted");
                touched.insert(site);
                "rotate --revoke (real edge)"
            }
            Action::RealRestart(i) => {
                let r = &mut reals[*i];
                r.proc.kill();
                let killed = whole_seconds(Timestamp::now());
                r.proc = spawn_edge(&dir, &r.site, &r.member_kc, size.scale, r.starts);
                r.starts += 1;
                // Sync point: the new process reported.
                let site = r.site.clone();
                wait_until(
                    interval * 3 + Duration::from_secs(30),
                    &format!("{site}'s restarted edge reports"),
                    || async { heartbeat_of(&api, &site).await.is_some_and(|t| t > killed) },
                )
                .await;
                touched.insert(site);
                "SIGKILL + restart (real edge)"
            }
            Action::RealUnregister(i) => {
                let site = reals[*i].site.clone();
                fleet(&["unregister", &site, "--yes"]);
                want.remove(&site);
                gone.insert(site.clone());
                let r = &reals[*i];
                wait_until(
                    interval * 20 + Duration::from_secs(30),
                    &format!("{site}'s edge logs that it was shut out"),
                    || async {
                        let log = r.proc.log_text();
                        log.contains("hub rejected the site token")
                            || log.contains("is no longer registered on the hub")
                    },
                )
                .await;
                "unregister (real edge keeps running)"
            }
            Action::Failover => {
                let leader = lease_holder(&admin_c).await.expect("a leader");
                let idx = hubs.iter().position(|h| h.name == leader).unwrap();
                hubs[idx].kill();
                let killed = Instant::now();
                wait_until(Duration::from_secs(60), "a standby takes over", || async {
                    lease_holder(&admin_c).await.is_some_and(|h| h != leader)
                })
                .await;
                let took = killed.elapsed();
                let new = lease_holder(&admin_c).await.unwrap();
                // The killed replica comes back as a new standby, as its
                // Deployment would restart it.
                let id = "hub-c";
                let p = spawn_hub(&dir, &operator_kc, id, size.scale);
                hub_pids.lock().unwrap().insert(id.to_owned(), p.pid());
                hubs.push(p);
                failover = Some((leader, new, took, t0.elapsed()));
                "hub leader SIGKILL"
            }
        };
        *done.entry(kind).or_default() += 1;
    }
    let churn_ended = t0.elapsed();
    if let Some(d) = (t0 + size.run).checked_duration_since(Instant::now()) {
        tokio::time::sleep(d).await;
    }
    let run_secs = t0.elapsed().as_secs_f64();
    stop_sampling.store(true, Ordering::SeqCst);
    let (leader_rss, edge_rss) = sampler.await.unwrap();

    // 1. Every site in the phase the churn leaves it in, each once.
    wait_for_phases(&api, &want, interval * 10 + Duration::from_secs(60)).await;
    let fs_api: Api<FederationStatus> = Api::all(admin_c.clone());
    let count = |p: Phase| want.values().filter(|w| **w == p).count() as i64;
    let counts = (
        want.len() as i64,
        count(Phase::Connected),
        count(Phase::Stale),
        count(Phase::Unreachable),
        count(Phase::Pending),
    );
    wait_until(
        Duration::from_secs(60),
        "the FederationStatus counts every site once",
        || async {
            fs_api
                .get_opt("fleet")
                .await
                .unwrap()
                .and_then(|f| f.status)
                .is_some_and(|s| {
                    (
                        s.total_clusters,
                        s.connected_clusters,
                        s.stale_clusters,
                        s.unreachable_clusters,
                        s.pending_clusters,
                    ) == counts
                })
        },
    )
    .await;
    // What an administrator sees through the real kubectl.
    let out = fleet(&["status", "-o", "json"]);
    let report: serde_json::Value = serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap();
    let rows = report["sites"].as_array().unwrap();
    let mut seen = BTreeMap::new();
    for row in rows {
        let name = row["name"].as_str().unwrap().to_owned();
        assert!(
            seen.insert(name.clone(), row["phase"].as_str().unwrap().to_owned())
                .is_none(),
            "{name} listed twice"
        );
    }
    let expected: BTreeMap<String, String> = want
        .iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect();
    assert_eq!(seen, expected, "`kubectl fleet status -o json` per site");

    // 2. No lost edge field: stop the simulated edges after their current
    //    report; the hub holds exactly what each last had accepted.
    for (site, e) in std::mem::take(&mut sims) {
        last_written.insert(site, e.stop().await);
    }
    let held: BTreeMap<String, FederatedCluster> = api
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|s| (s.site_name().to_owned(), s))
        .collect();
    // Live and silenced sites alike: the hub rewrote the latter's phase twice.
    for site in last_written.keys() {
        let accepted = last_written[site]
            .as_ref()
            .unwrap_or_else(|| panic!("{site}'s edge never reported"));
        let fc = &held[site];
        assert_eq!(accepted.uid, fc.metadata.uid, "{site}");
        let on_hub = EdgeStatus::from_status(fc.status.as_ref().unwrap());
        assert_eq!(
            on_hub, accepted.status,
            "{site}: the hub lost or changed an edge field"
        );
    }
    for r in reals.iter().filter(|r| want.contains_key(&r.site)) {
        let s = held[&r.site].status.clone().unwrap();
        let site = &r.site;
        assert_eq!(
            s.observed_version.as_deref(),
            Some(env!("CARGO_PKG_VERSION")),
            "{site}"
        );
        assert!(s.kubernetes_version.is_some(), "{site}: {s:?}");
        assert!(s.node_count.is_some_and(|n| n >= 1), "{site}: {s:?}");
        assert!(s.namespace_count.is_some(), "{site}: {s:?}");
        let gpus = s.capacity.as_ref().unwrap().gpus_by_vendor["nvidia.com/gpu"];
        assert_eq!((gpus.total, gpus.allocatable), (8, 8), "{site}");
        assert!(s.inference.is_some(), "{site}: {s:?}");
        assert_eq!(
            s.signals().iter().any(|x| x.workload.name == "checkout"),
            r.failing,
            "{site}: {:?}",
            s.signals
        );
        assert!(
            s.credential_renewal_time.is_some(),
            "{site}: auto-rotation is on"
        );
    }
    // Every live site reports the token in its kubeconfig now: rotated
    // sites moved to the new one.
    for site in want
        .iter()
        .filter(|(_, p)| **p == Phase::Connected)
        .map(|(s, _)| s)
    {
        let exp = held[site]
            .status
            .as_ref()
            .and_then(|s| s.credential_expiration_time.clone());
        assert_eq!(
            exp.map(|t| t.0),
            Some(token_expiry(&site_kubeconfig(&dir, site))),
            "{site} reports the expiry of the token it was last given"
        );
    }

    // 3. Unregistered sites and their identities are gone.
    let ns = rbac::SITES_NAMESPACE;
    for site in &gone {
        let id = rbac::edge_identity_name(site);
        assert!(api.get_opt(site).await.unwrap().is_none(), "{site}");
        let sa: Api<ServiceAccount> = Api::namespaced(admin_c.clone(), ns);
        let role: Api<Role> = Api::namespaced(admin_c.clone(), ns);
        let rb: Api<RoleBinding> = Api::namespaced(admin_c.clone(), ns);
        let cr: Api<ClusterRole> = Api::all(admin_c.clone());
        let crb: Api<ClusterRoleBinding> = Api::all(admin_c.clone());
        assert!(
            sa.get_opt(&id).await.unwrap().is_none(),
            "{site}: ServiceAccount"
        );
        assert!(role.get_opt(&id).await.unwrap().is_none(), "{site}: Role");
        assert!(
            rb.get_opt(&id).await.unwrap().is_none(),
            "{site}: RoleBinding"
        );
        assert!(
            cr.get_opt(&id).await.unwrap().is_none(),
            "{site}: ClusterRole"
        );
        assert!(
            crb.get_opt(&id).await.unwrap().is_none(),
            "{site}: ClusterRoleBinding"
        );
    }

    // 4. Every process still runs (none crashed), and no token was logged.
    for r in &mut reals {
        let alive = r.proc.child.as_mut().unwrap().try_wait().unwrap().is_none();
        assert!(alive, "{}'s edge exited: {}", r.site, r.proc.log_text());
    }
    for h in hubs.iter_mut().filter(|h| h.child.is_some()) {
        let alive = h.child.as_mut().unwrap().try_wait().unwrap().is_none();
        assert!(alive, "{} exited: {}", h.name, h.log_text());
    }
    let logs = std::fs::read_dir(dir.path()).unwrap();
    for entry in logs
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
    {
        let text = std::fs::read_to_string(entry.path()).unwrap();
        assert!(
            !text.contains("eyJ"),
            "a token reached {}",
            entry.path().display()
        );
    }
    watcher.abort();

    // Figures.
    let always_live: BTreeSet<&String> = want
        .iter()
        .filter(|(s, p)| **p == Phase::Connected && !touched.contains(*s) && !s.starts_with("new-"))
        .map(|(s, _)| s)
        .collect();
    let transitions = transitions.lock().unwrap().clone();
    let flaps: Vec<&Transition> = transitions
        .iter()
        .filter(|(_, s, p)| always_live.contains(s) && *p != Some(Phase::Connected))
        .collect();
    let w = size.window().as_secs_f64();
    let first = |s: &Series| s.median_between(0.0, w).unwrap_or(0.0);
    let last = |s: &Series| s.median_between(run_secs - w, run_secs).unwrap_or(0.0);
    println!(
        "\n| soak | {} sites at start ({} real edges, {} simulated), I = {interval:?}, run {run_secs:.0} s (churn until {:.0} s) |",
        size.sites,
        size.real,
        size.sites - size.real,
        churn_ended.as_secs_f64()
    );
    println!(
        "| initial registration through kubectl | {registered_in:.1?} for {} sites |",
        size.sites
    );
    for (kind, n) in &done {
        println!("| churn: {kind} | {n} |");
    }
    if let Some((old, new, took, at)) = &failover {
        println!(
            "| hub failover at {:.0} s | {old} killed, {new} leading after {took:.1?} (lease 3 s) |",
            at.as_secs_f64()
        );
    }
    println!(
        "| end state | {} sites: {} Connected, {} Unreachable, {} Pending; {} unregistered and gone |",
        counts.0,
        counts.1,
        counts.3,
        counts.4,
        gone.len()
    );
    println!(
        "| simulated reports accepted | {} ; failed: {:?} |",
        stats.reports.load(Ordering::Relaxed),
        stats.errors.lock().unwrap()
    );
    println!(
        "| phase changes seen by a watch | {} in all; {} away from Connected among the {} never-touched live sites |",
        transitions.len(),
        flaps.len(),
        always_live.len()
    );
    for f in flaps.iter().take(10) {
        println!("|   flap | {f:?} |");
    }
    println!(
        "| hub leader RSS (window {w:.0} s) | first {:.1} MiB, last {:.1} MiB, max {:.1} MiB, {} samples |",
        first(&leader_rss),
        last(&leader_rss),
        leader_rss.max(),
        leader_rss.0.len()
    );
    for (i, s) in edge_rss.iter().enumerate() {
        println!(
            "| steady edge {} RSS | first {:.1} MiB, last {:.1} MiB, max {:.1} MiB |",
            reals[i].site,
            first(s),
            last(s),
            s.max()
        );
    }
    if size.assert_rss {
        let flat = |what: &str, s: &Series| {
            let (a, b) = (first(s), last(s));
            assert!(
                a > 0.0 && b <= a * (1.0 + RSS_TOLERANCE),
                "{what}: RSS grew from {a:.1} MiB (first {w:.0} s) to {b:.1} MiB (last {w:.0} s)"
            );
        };
        flat("hub leader", &leader_rss);
        for (i, s) in edge_rss.iter().enumerate() {
            flat(&reals[i].site, s);
        }
    }
    drop(reals);
}
