//! Benchmarks of the operator against kube-sandbox (ignored by default; the
//! figures go to docs/benchmarks-operator.md, they are not asserted):
//!
//! ```text
//! cargo test --test operator_bench -- --ignored --nocapture --test-threads 1
//! ```
//!
//! - `hub_2000_sites`: a real `fleet-operator` hub process over 2,000 sites
//!   whose simulated edges send heartbeat-only merge patches every 10 s;
//!   200 of them fall silent so they go Stale. Reports the hub's CPU time and
//!   peak RSS, and hub status writes per phase transition.
//! - `pull_1000_sites`: a real hub probing 1,000 Pull sites at 30 s, 5 % of
//!   them on a member that never answers in time: hub CPU per probe, peak
//!   RSS, late probes.
//! - `edge_footprint`: a real edge process; its peak RSS and the bytes of its
//!   first (full) and following (heartbeat-only) patches.
//! - `hub_worst_case_sites_at_caps`: the hub's and the CLI's work over 200
//!   sites that each wrote every edge-owned field at its CRD cap (in-process,
//!   the same functions the hub and `kubectl fleet` call); figures in
//!   docs/reliability.md. Run it in a release build:
//!   `cargo test --release --test operator_bench hub_worst_case -- --ignored --nocapture`

mod operator_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{FederatedCluster, FederatedClusterSpec, Phase};
use operator_support::*;
use serde_json::json;

const SITES: usize = 2000;
const SILENCED: usize = 200;
const INTERVAL: Duration = Duration::from_secs(10);

/// (CPU seconds user+system, peak RSS in MiB) of a process.
fn cpu_and_peak_rss(pid: u32) -> (f64, f64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields overall.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    let clk = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse::<f64>().ok())
        .unwrap_or(100.0);
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let hwm_kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    (ticks / clk, hwm_kb / 1024.0)
}

fn is_hub_status_write(r: &kube_sandbox::RequestRecord) -> bool {
    r.verb == "update"
        && r.path
            .starts_with("/apis/federation.kubectl-fleet.dev/v1alpha1/federatedclusters/")
        && r.path.ends_with("/status")
        && (200..300).contains(&r.status)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run explicitly, see the module docs"]
async fn hub_2000_sites() {
    let sb = Sandbox::start();
    let client = admin(&sb).await;
    install_crds(&client).await;
    ensure_namespace(&client, "fleet-system").await;
    let api: Api<FederatedCluster> = Api::all(client.clone());
    let names: Vec<String> = (0..SITES).map(|i| format!("site-{i:04}")).collect();
    let created = Instant::now();
    futures::stream::iter(names.iter().cloned())
        .map(|n| {
            let api = api.clone();
            async move {
                let spec = FederatedClusterSpec {
                    heartbeat_interval_seconds: INTERVAL.as_secs() as i32,
                    ..FederatedClusterSpec::default()
                };
                api.create(&PostParams::default(), &FederatedCluster::new(&n, spec))
                    .await
                    .unwrap();
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    eprintln!("created {SITES} sites in {:?}", created.elapsed());

    let dir = TempDir::new("bench");
    let kc = dir.join("admin.kubeconfig");
    sb.write_admin_kubeconfig(&kc).unwrap();
    sb.controls().clear_request_log();
    let mut hub = Proc::spawn(
        "hub",
        &operator_bin(),
        &hub_args(&kc, "hub-bench", 1.0),
        dir.join("hub.log"),
    );

    // Simulated edges: every site sends a heartbeat-only patch once per
    // interval, spread evenly; the last SILENCED sites stop after 20 s.
    let stop = Arc::new(AtomicBool::new(false));
    let silenced = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let late_rounds = Arc::new(AtomicU64::new(0));
    let edges = {
        let (api, names, stop, silenced, sent, late) = (
            api.clone(),
            names.clone(),
            stop.clone(),
            silenced.clone(),
            sent.clone(),
            late_rounds.clone(),
        );
        tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                let round = Instant::now();
                let quiet = silenced.load(Ordering::SeqCst);
                let active = if quiet { SITES - SILENCED } else { SITES };
                futures::stream::iter(names[..active].iter().cloned().enumerate())
                    .map(|(i, n)| {
                        let (api, sent) = (api.clone(), sent.clone());
                        let at = round + INTERVAL.mul_f64(i as f64 / SITES as f64);
                        async move {
                            tokio::time::sleep_until(at.into()).await;
                            let hb = jiff::Timestamp::now().to_string();
                            let body = json!({"status": {"lastHeartbeatTime": hb}});
                            if api
                                .patch_status(&n, &PatchParams::default(), &Patch::Merge(&body))
                                .await
                                .is_ok()
                            {
                                sent.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    })
                    .buffer_unordered(64)
                    .collect::<Vec<_>>()
                    .await;
                if round.elapsed() > INTERVAL + Duration::from_secs(1) {
                    late.fetch_add(1, Ordering::Relaxed);
                }
                tokio::time::sleep_until((round + INTERVAL).into()).await;
            }
        })
    };

    let start = Instant::now();
    let count = |p: Phase| {
        let api = api.clone();
        async move {
            api.list(&Default::default())
                .await
                .unwrap()
                .items
                .iter()
                .filter(|s| s.phase() == Some(p))
                .count()
        }
    };
    let mut last_print = Instant::now();
    loop {
        let n = count(Phase::Connected).await;
        if n == SITES {
            break;
        }
        if last_print.elapsed() > Duration::from_secs(10) {
            let (cpu, rss) = cpu_and_peak_rss(hub.pid());
            eprintln!(
                "{:>4.0?}: {n} Connected, {} patches sent, hub cpu {cpu:.1}s rss {rss:.0}MiB",
                start.elapsed(),
                sent.load(Ordering::Relaxed)
            );
            last_print = Instant::now();
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "only {n} Connected after 300 s"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let connected_after = start.elapsed();
    tokio::time::sleep(Duration::from_secs(5)).await;
    silenced.store(true, Ordering::SeqCst);
    let silenced_at = Instant::now();
    let silenced_names: std::collections::HashSet<String> =
        names[SITES - SILENCED..].iter().cloned().collect();
    let mut others_disconnected = 0;
    loop {
        let sites = api.list(&Default::default()).await.unwrap().items;
        let gone = sites
            .iter()
            .filter(|s| {
                silenced_names.contains(s.site_name()) && s.phase() != Some(Phase::Connected)
            })
            .count();
        others_disconnected = others_disconnected.max(
            sites
                .iter()
                .filter(|s| {
                    !silenced_names.contains(s.site_name()) && s.phase() != Some(Phase::Connected)
                })
                .count(),
        );
        if gone == SILENCED {
            break;
        }
        assert!(
            silenced_at.elapsed() < Duration::from_secs(180),
            "only {gone} silenced sites left Connected"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let stale_after = silenced_at.elapsed();
    // Steady state: one more minute of heartbeats with nothing changing.
    let (cpu_before_steady, _) = cpu_and_peak_rss(hub.pid());
    tokio::time::sleep(Duration::from_secs(60)).await;
    let (cpu, peak) = cpu_and_peak_rss(hub.pid());
    let steady_cpu = cpu - cpu_before_steady;
    stop.store(true, Ordering::SeqCst);
    edges.await.unwrap();
    let total = start.elapsed();
    hub.terminate();

    let log = sb.controls().request_log();
    let writes = log.iter().filter(|r| is_hub_status_write(r)).count();
    let conflicts = log
        .iter()
        .filter(|r| r.verb == "update" && r.path.ends_with("/status") && r.status == 409)
        .count();
    let patches: Vec<_> = log
        .iter()
        .filter(|r| {
            r.verb == "patch" && r.path.ends_with("/status") && (200..300).contains(&r.status)
        })
        .collect();
    let patch_bytes = patches.iter().map(|r| r.request_bytes).sum::<usize>() / patches.len().max(1);
    // Every write the hub makes is logged as one transition (phase, or a
    // condition's status); a site whose first heartbeat beat the hub skips
    // Pending and goes straight to Connected.
    let hub_log = hub.log_text();
    let phase_transitions = hub_log.matches("phase transition").count();
    let condition_transitions = hub_log.matches("condition transition").count();
    let transitions = phase_transitions + condition_transitions;
    println!("| sites | {SITES} at {}s |", INTERVAL.as_secs());
    println!(
        "| run | {total:.0?} (all Connected after {connected_after:.0?}, silenced Stale after {stale_after:.0?}) |"
    );
    println!(
        "| heartbeat patches accepted | {} ({} rounds late) |",
        sent.load(Ordering::Relaxed),
        late_rounds.load(Ordering::Relaxed)
    );
    println!("| hub CPU time, whole run | {cpu:.1} s |");
    println!(
        "| hub CPU time, steady 60 s | {steady_cpu:.1} s ({:.1} % of one core) |",
        steady_cpu / 60.0 * 100.0
    );
    println!("| hub peak RSS | {peak:.0} MiB |");
    println!(
        "| transitions | {phase_transitions} phase + {condition_transitions} condition-only; live sites ever not Connected: {others_disconnected} |"
    );
    println!(
        "| hub status writes | {writes} ({:.3} per transition), {conflicts} answered 409 and retried |",
        writes as f64 / transitions as f64
    );
    println!("| mean heartbeat patch body | {patch_bytes} bytes |");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run explicitly, see the module docs"]
async fn edge_footprint() {
    let dir = TempDir::new("bench-edge");
    let hub_sb = Sandbox::start();
    let member_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let site_kc = dir.join("site.kubeconfig");
    fleet_register(&hub_kc, "bench", 10, &site_kc, &[]);
    let member_kc = dir.join("member.kubeconfig");
    member_sb.write_admin_kubeconfig(&member_kc).unwrap();
    let m = admin(&member_sb).await;
    let nodes: Vec<String> = (0..20).map(|i| format!("node-{i:02}")).collect();
    let seeds: Vec<NodeSeed> = nodes
        .iter()
        .map(|n| NodeSeed {
            name: n,
            gpus: &[("nvidia.com/gpu", 8, 8)],
            ready: true,
        })
        .collect();
    seed_member(
        &m,
        &seeds,
        &[
            FailingPod {
                namespace: "shop",
                deployment: "checkout",
                reason: "CrashLoopBackOff",
            },
            FailingPod {
                namespace: "ml",
                deployment: "trainer",
                reason: "ImagePullBackOff",
            },
        ],
    )
    .await;
    hub_sb.controls().clear_request_log();
    // Scale 1.0: the real 10 s cadence.
    let mut e = Proc::spawn(
        "edge",
        &operator_bin(),
        &edge_args("bench", &member_kc, &site_kc, 1.0),
        dir.join("edge.log"),
    );
    tokio::time::sleep(Duration::from_secs(65)).await;
    let (cpu, peak) = cpu_and_peak_rss(e.pid());
    e.terminate();
    let patches: Vec<usize> = hub_sb
        .controls()
        .request_log()
        .into_iter()
        .filter(|r| r.verb == "patch" && r.user.contains("fleet-edge-bench"))
        .map(|r| r.request_bytes)
        .collect();
    let hb: Vec<usize> = patches.iter().skip(1).copied().collect();
    println!("| edge reports in 65 s | {} |", patches.len());
    println!(
        "| first (full) patch | {} bytes (20 nodes, 160 GPUs, 2 signals) |",
        patches.first().copied().unwrap_or(0)
    );
    println!(
        "| heartbeat-only patches | {}..{} bytes |",
        hb.iter().min().copied().unwrap_or(0),
        hb.iter().max().copied().unwrap_or(0)
    );
    println!("| edge CPU time | {cpu:.2} s over 65 s |");
    println!("| edge peak RSS | {peak:.0} MiB |");
}

const PULL_SITES: usize = 1000;
/// 5 % of the Pull sites point at a member that never answers in time.
const PULL_HUNG: usize = 50;
const PULL_INTERVAL: Duration = Duration::from_secs(30);
const PULL_STEADY: Duration = Duration::from_secs(150);

/// Creates a labelled pull Secret and a Pull site reading it, as
/// `kubectl fleet register --pull` would.
async fn create_pull_site(client: &kube::Client, site: &str, kubeconfig: &str) {
    use k8s_openapi::api::core::v1::Secret;
    use kubectl_fleet::api::{Mode, SecretKeyRef};
    use kubectl_fleet::fleet::rbac;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), rbac::FLEET_NAMESPACE);
    let mut secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": rbac::pull_secret_name(site), "namespace": rbac::FLEET_NAMESPACE},
        "stringData": {"kubeconfig": kubeconfig}
    }))
    .unwrap();
    secret.metadata.labels = Some(rbac::site_labels(site));
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let spec = FederatedClusterSpec {
        mode: Mode::Pull,
        heartbeat_interval_seconds: PULL_INTERVAL.as_secs() as i32,
        kubeconfig_secret_ref: Some(SecretKeyRef {
            namespace: rbac::FLEET_NAMESPACE.into(),
            name: rbac::pull_secret_name(site),
            key: "kubeconfig".into(),
        }),
        ..FederatedClusterSpec::default()
    };
    Api::<FederatedCluster>::all(client.clone())
        .create(&PostParams::default(), &FederatedCluster::new(site, spec))
        .await
        .unwrap();
}

/// 1,000 Pull sites probed by a real hub at a 30 s interval; three member
/// sandboxes share 950 healthy sites, a fourth answers only after 60 s
/// (the 50 hung sites). Reports hub CPU per probe, peak RSS and the
/// healthy probes that came later than their interval allows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run explicitly, see the module docs"]
async fn pull_1000_sites() {
    let sb = Sandbox::start();
    let client = admin(&sb).await;
    install_crds(&client).await;
    ensure_namespace(&client, "fleet-system").await;
    let members: Vec<Sandbox> = (0..4).map(|_| Sandbox::start()).collect();
    for m in &members {
        seed_member(
            &admin(m).await,
            &[NodeSeed {
                name: "node-1",
                gpus: &[("nvidia.com/gpu", 8, 8)],
                ready: true,
            }],
            &[],
        )
        .await;
    }
    members[3].controls().set_latency(Duration::from_secs(60));
    let names: Vec<String> = (0..PULL_SITES).map(|i| format!("pull-{i:04}")).collect();
    let hung = |i: usize| i >= PULL_SITES - PULL_HUNG;
    let kubeconfigs: Vec<String> = members.iter().map(|m| m.admin_kubeconfig()).collect();
    futures::stream::iter(names.iter().enumerate())
        .map(|(i, n)| {
            let (client, kc) = (
                client.clone(),
                kubeconfigs[if hung(i) { 3 } else { i % 3 }].clone(),
            );
            async move { create_pull_site(&client, n, &kc).await }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;

    let dir = TempDir::new("pull-bench");
    let kc = dir.join("admin.kubeconfig");
    sb.write_admin_kubeconfig(&kc).unwrap();
    let mut hub = Proc::spawn(
        "hub",
        &operator_bin(),
        &hub_args(&kc, "hub-pull-bench", 1.0),
        dir.join("hub.log"),
    );
    let api: Api<FederatedCluster> = Api::all(client.clone());
    let start = Instant::now();
    let healthy = PULL_SITES - PULL_HUNG;
    loop {
        let n = api
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .iter()
            .filter(|s| s.phase() == Some(Phase::Connected))
            .count();
        if n == healthy {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "only {n} Connected after 300 s"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let connected_after = start.elapsed();

    // Steady state: every healthy site's heartbeat values, as the hub
    // writes them (hub clock, whole seconds), from a watch.
    let beats: Arc<std::sync::Mutex<std::collections::HashMap<String, Vec<i64>>>> =
        Default::default();
    let watch = {
        let (api, beats) = (api.clone(), beats.clone());
        tokio::spawn(async move {
            let mut events = Box::pin(kube::runtime::watcher::watcher(
                api,
                kube::runtime::watcher::Config::default(),
            ));
            while let Some(ev) = events.next().await {
                let Ok(kube::runtime::watcher::Event::Apply(site)) = ev else {
                    continue;
                };
                let Some(t) = site
                    .status
                    .as_ref()
                    .and_then(|s| s.last_heartbeat_time.as_ref())
                else {
                    continue;
                };
                let mut beats = beats.lock().unwrap();
                let v = beats.entry(site.site_name().to_owned()).or_default();
                let s = t.0.as_second();
                if v.last() != Some(&s) {
                    v.push(s);
                }
            }
        })
    };
    sb.controls().clear_request_log();
    let (cpu_before, _) = cpu_and_peak_rss(hub.pid());
    tokio::time::sleep(PULL_STEADY).await;
    let (cpu_after, peak) = cpu_and_peak_rss(hub.pid());
    watch.abort();
    hub.terminate();
    let log = sb.controls().request_log();
    let patches = log
        .iter()
        .filter(|r| {
            r.verb == "patch" && r.path.ends_with("/status") && (200..300).contains(&r.status)
        })
        .count();
    let hub_writes = log.iter().filter(|r| is_hub_status_write(r)).count();
    let patch_bytes = log
        .iter()
        .filter(|r| r.verb == "patch" && r.path.ends_with("/status"))
        .map(|r| r.request_bytes)
        .sum::<usize>()
        / patches.max(1);
    // A probe is late when the gap to the previous successful one exceeds
    // the interval plus its 10 % jitter, plus a second of rounding.
    let limit = (PULL_INTERVAL.as_secs_f64() * 1.1).ceil() as i64 + 1;
    let beats = beats.lock().unwrap();
    let mut gaps = 0;
    let mut late = 0;
    let mut worst = 0;
    for (name, v) in beats.iter() {
        if name.as_str() >= names[PULL_SITES - PULL_HUNG].as_str() {
            continue;
        }
        for w in v.windows(2) {
            let gap = w[1] - w[0];
            gaps += 1;
            worst = worst.max(gap);
            late += usize::from(gap > limit);
        }
    }
    let hung_rounds = PULL_HUNG as f64 * PULL_STEADY.as_secs_f64() / PULL_INTERVAL.as_secs_f64();
    let cpu = cpu_after - cpu_before;
    println!(
        "| sites | {PULL_SITES} Pull at {}s ({healthy} on 3 shared members, {PULL_HUNG} on a member answering after 60 s) |",
        PULL_INTERVAL.as_secs()
    );
    println!("| all healthy sites Connected after hub start | {connected_after:.0?} |");
    println!(
        "| steady window | {}s: {patches} successful probes (status patches), ~{hung_rounds:.0} timed-out probes |",
        PULL_STEADY.as_secs()
    );
    println!(
        "| hub CPU, steady window | {cpu:.1} s = {:.1} % of one core; {:.2} ms per probe (timed-out ones included) |",
        cpu / PULL_STEADY.as_secs_f64() * 100.0,
        cpu * 1000.0 / (patches as f64 + hung_rounds)
    );
    println!("| hub peak RSS | {peak:.0} MiB |");
    println!(
        "| healthy probes later than 1.1·I + 1 s after the previous one | {late} of {gaps} (worst gap {worst} s) |"
    );
    println!("| hub PUTs of status in the window (transitions) | {hub_writes} |");
    println!("| mean status patch body | {patch_bytes} bytes |");
}

/// Peak resident set size of this process so far, in MiB.
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1024.0
}

/// Median and worst of `runs` timings of `f`, in milliseconds.
fn time_ms<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, f64) {
    let mut ms: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f());
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    (ms[runs / 2], ms[runs - 1])
}

#[test]
#[ignore = "benchmark: run explicitly in a release build, see the module docs"]
fn hub_worst_case_sites_at_caps() {
    use kubectl_fleet::api::fixtures::{fixture_now, fleet_at_caps};
    use kubectl_fleet::operator::federation::next_summary;
    use kubectl_fleet::render;

    const N: usize = 200;
    const RUNS: usize = 20;
    let now = fixture_now();
    let list = serde_json::to_vec(&json!({
        "apiVersion": "federation.kubectl-fleet.dev/v1alpha1",
        "kind": "FederatedClusterList",
        "items": fleet_at_caps(N),
    }))
    .unwrap();
    let decoded: kube::core::ObjectList<FederatedCluster> = serde_json::from_slice(&list).unwrap();
    let sites = decoded.items;
    let (decode, decode_max) = time_ms(RUNS, || {
        serde_json::from_slice::<kube::core::ObjectList<FederatedCluster>>(&list).unwrap()
    });
    let (summary, summary_max) =
        time_ms(RUNS, || next_summary(&sites, None, now, Default::default()));
    let fleet = next_summary(&sites, None, now, Default::default());
    let fleet_bytes = serde_json::to_vec(&fleet).unwrap().len();
    let (status, _) = time_ms(RUNS, || {
        render::render_status_table(&render::status_view(&sites, now), true, false)
    });
    let report = render::incidents_report(
        &sites,
        fleet.correlations.clone(),
        fleet.cascades.clone(),
        now,
    );
    let (incidents, _) = time_ms(RUNS, || render::render_incidents(&report, now, false));
    let incidents_text = render::render_incidents(&report, now, false);
    let peak = peak_rss_mib();
    println!("| sites | {N}, every edge-owned field at its cap |");
    println!(
        "| site list as JSON | {:.1} MiB |",
        list.len() as f64 / 1048576.0
    );
    println!(
        "| decode the list (hub watch/list) | {decode:.0} ms median, {decode_max:.0} ms worst |"
    );
    println!(
        "| correlation + cascades + summary (one FederationStatus recompute) | {summary:.0} ms median, {summary_max:.0} ms worst |"
    );
    println!(
        "| FederationStatus | {} correlations, {} of {} cascades kept, {} bytes |",
        fleet.correlations.len(),
        fleet.cascades.len(),
        fleet.cascades_detected,
        fleet_bytes
    );
    println!("| `status -o wide` render | {status:.0} ms |");
    println!(
        "| `incidents` render ({} signal rows, {} KiB) | {incidents:.0} ms |",
        report.signals.len(),
        incidents_text.len() / 1024
    );
    println!("| peak RSS of the whole run (list JSON, decoded copies, reports) | {peak:.0} MiB |");
}
