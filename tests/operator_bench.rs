//! Benchmarks of the operator against kube-sandbox (ignored by default; the
//! figures go to docs/benchmarks-operator.md, they are not asserted):
//!
//! ```text
//! CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
//!   cargo test --release --test integration operator_bench:: -- --ignored --nocapture --test-threads 1
//! ```
//!
//! Every figure is also printed as a `BENCH-RESULT {json}` line
//! ([`support::bench_result`]) for the one-command runner.
//!
//! - `hub_10000_sites` (P3; release build): a real `fleet-operator` hub
//!   process over 10,000 sites whose simulated edges send heartbeat-only
//!   merge patches every 30 s; 1,000 of them fall silent and must go Stale,
//!   then Unreachable. Reports the silence→Stale/Unreachable distribution,
//!   the hub's steady CPU and RSS (kube-sandbox's and the simulator's CPU
//!   apart), its watch event lag, status writes per transition, and a
//!   restart over the existing fleet. `hub_bench_smoke` (not ignored) runs
//!   the same harness over 50 sites at 2 s and asserts its correctness.
//! - `pull_1000_sites`: a real hub probing 1,000 Pull sites at 30 s, 5 % of
//!   them on a member that never answers in time: hub CPU per probe, peak
//!   RSS, late probes.
//! - `edge_footprint`: a real edge process; its peak RSS and the bytes of its
//!   first (full) and following (heartbeat-only) patches.
//! - `hub_worst_case_sites_at_caps`: the hub's and the CLI's work over 200
//!   sites that each wrote every edge-owned field at its CRD cap (in-process,
//!   the same functions the hub and `kubectl fleet` call); figures in
//!   docs/reliability.md. Run it in a release build:
//!   `cargo test --release --test integration operator_bench::hub_worst_case -- --ignored --nocapture`

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{EdgeStatus, FederatedCluster, FederatedClusterSpec, Phase};
use kubectl_fleet::fleet::status_patch::edge_status_patch;
use serde_json::json;
use support::*;

mod figures;
use figures::*;

/// One hub benchmark: `run.sites` sites, simulated edges at the interval,
/// a real hub process; the last `run.silenced` sites fall silent once all
/// are Connected and must go Stale then Unreachable; steady-state cost is
/// measured between the two (no transitions due); then the hub restarts
/// over the existing fleet.
async fn hub_bench(run: HubRun) -> HubFigures {
    let interval = run.interval();
    let mut fig = HubFigures::default();
    let sb = Sandbox::start();
    let client = admin(&sb).await;
    install_crds(&client).await;
    ensure_namespace(&client, "fleet-system").await;
    let api: Api<FederatedCluster> = Api::all(client.clone());
    let names: Arc<Vec<String>> =
        Arc::new((0..run.sites).map(|i| format!("site-{i:05}")).collect());
    let created = Instant::now();
    futures::stream::iter(names.iter().cloned())
        .map(|n| {
            let api = api.clone();
            async move {
                let spec = FederatedClusterSpec {
                    heartbeat_interval_seconds: run.spec_interval as i32,
                    ..FederatedClusterSpec::default()
                };
                // Labelled as `register` labels them (the bucket among
                // them): the hub has no label to backfill mid-measurement.
                let mut site = FederatedCluster::new(&n, spec.clone());
                site.metadata.labels =
                    Some(kubectl_fleet::fleet::rbac::site_object_labels(&n, &spec));
                api.create(&PostParams::default(), &site).await.unwrap();
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    fig.create_secs = created.elapsed().as_secs_f64();
    eprintln!("created {} sites in {:.0} s", run.sites, fig.create_secs);

    let seen: Arc<std::sync::Mutex<Seen>> = Default::default();
    let watch = watch_phases(api.clone(), seen.clone());
    let dir = TempDir::new("bench");
    let kc = dir.join("admin.kubeconfig");
    sb.write_admin_kubeconfig(&kc).unwrap();
    let (cert, key, ca) = localhost_cert(&dir);
    let hub_args_with_metrics = |id: &str| {
        let mut args = hub_args(&kc, id, run.scale);
        args.extend([
            "--metrics-auth".into(),
            "false".into(),
            "--tls-cert-file".into(),
            cert.display().to_string(),
            "--tls-private-key-file".into(),
            key.display().to_string(),
        ]);
        args
    };
    sb.controls().clear_request_log();
    let mut hub = Proc::spawn(
        "hub",
        &operator_bin(),
        &hub_args_with_metrics("hub-bench"),
        dir.join("hub.log"),
    );
    let edges = Arc::new(Edges {
        stop: AtomicBool::new(false),
        silenced: AtomicBool::new(false),
        sent: AtomicU64::new(0),
        late_rounds: AtomicU64::new(0),
        last_sent: (0..run.sites).map(|_| AtomicU64::new(0)).collect(),
        epoch: Instant::now(),
    });
    let simulator = run_edges(api.clone(), names.clone(), run, edges.clone());
    eprintln!("hub pid {}", hub.pid());

    // Ramp-up: wait until the watch saw every site Connected.
    let start = Instant::now();
    let mut last_print = Instant::now();
    loop {
        let n = seen.lock().unwrap().count(&names, Phase::Connected);
        if n == run.sites {
            break;
        }
        if last_print.elapsed() > Duration::from_secs(10) {
            let (cpu, rss) = cpu_and_peak_rss(hub.pid());
            eprintln!(
                "{:>4.0?}: {n} Connected, {} heartbeats sent, hub cpu {cpu:.1}s rss {rss:.0}MiB",
                start.elapsed(),
                edges.sent.load(Ordering::Relaxed)
            );
            last_print = Instant::now();
        }
        assert!(
            start.elapsed() < interval * 3 + Duration::from_secs(300),
            "only {n} of {} Connected",
            run.sites
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    fig.connected_secs = start.elapsed().as_secs_f64();
    eprintln!("all Connected after {:.0} s", fig.connected_secs);
    let addr = logged_addr(&hub.log_text(), "serving HTTPS");

    // One quiet interval, then silence.
    tokio::time::sleep(interval).await;
    edges.silenced.store(true, Ordering::SeqCst);
    let silenced_at = Instant::now();
    let silenced_names = &names[run.sites - run.silenced..];
    let live_names = &names[..run.sites - run.silenced];

    // Steady state: after every silenced site is Stale (due within 3·I plus
    // one interval of simulated rounds) until 10·I, when Unreachable is
    // due: no transitions, 90 % live sites heartbeating.
    let deadline = interval * 30 + Duration::from_secs(120);
    let mut steady_from = None;
    let mut steady_to = None;
    let mut steady_rss = 0.0f64;
    let mut steady_lag = None;
    loop {
        let (stale_or_worse, unreachable) = {
            let seen = seen.lock().unwrap();
            (
                silenced_names
                    .iter()
                    .filter(|n| seen.first(n, Phase::Stale).is_some())
                    .count(),
                seen.count(silenced_names, Phase::Unreachable),
            )
        };
        let t = silenced_at.elapsed();
        if steady_from.is_none() && stale_or_worse == run.silenced {
            let at = Instant::now();
            steady_from = Some((at, cpu_and_peak_rss(hub.pid()).0, bench_process_cpu()));
            eprintln!(
                "{:>4.0?} after silence: all {} Stale; steady window starts",
                t, run.silenced
            );
        }
        if let Some((from, ..)) = steady_from
            && steady_to.is_none()
        {
            steady_rss = steady_rss.max(rss_mib(hub.pid()));
            if t + Duration::from_secs(2) >= interval * 10 && from.elapsed() > interval {
                steady_to = Some((
                    Instant::now(),
                    cpu_and_peak_rss(hub.pid()).0,
                    bench_process_cpu(),
                ));
                steady_lag = Some(scrape_hub(&addr, &ca).await);
                eprintln!("{t:>4.0?} after silence: steady window ends");
            }
        }
        if unreachable == run.silenced {
            break;
        }
        if t > deadline {
            eprintln!(
                "only {unreachable} of {} silenced sites Unreachable",
                run.silenced
            );
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    if let (Some((a, hub_a, (sb_a, bench_a))), Some((b, hub_b, (sb_b, bench_b)))) =
        (steady_from, steady_to)
    {
        fig.steady_secs = b.duration_since(a).as_secs_f64();
        fig.steady_hub_cpu = hub_b - hub_a;
        fig.steady_sandbox_cpu = sb_b - sb_a;
        fig.steady_bench_cpu = bench_b - bench_a;
    }
    fig.steady_rss = steady_rss;
    if let Some(s) = steady_lag.as_ref() {
        fig.lag_mean = s.sum("fleet_hub_watch_event_lag_seconds_sum")
            / s.sum("fleet_hub_watch_event_lag_seconds_count").max(1.0);
        fig.lag_count = s.sum("fleet_hub_watch_event_lag_seconds_count");
        fig.lag_p50 = lag_quantile(s, 0.5);
        fig.lag_p99 = lag_quantile(s, 0.99);
    }
    fig.hub_peak_rss = cpu_and_peak_rss(hub.pid()).1;
    {
        let seen = seen.lock().unwrap();
        for (k, name) in silenced_names.iter().enumerate() {
            let last = edges.last_sent(run.sites - run.silenced + k);
            match seen.first(name, Phase::Stale) {
                Some(t) => fig.to_stale.push(t.duration_since(last).as_secs_f64()),
                None => fig.silenced_never_stale += 1,
            }
            match seen.first(name, Phase::Unreachable) {
                Some(t) => fig
                    .to_unreachable
                    .push(t.duration_since(last).as_secs_f64()),
                None => fig.silenced_never_unreachable += 1,
            }
            let tail: Vec<Phase> = seen.phases[name.as_str()]
                .iter()
                .map(|(p, _)| *p)
                .skip_while(|p| *p == Phase::Pending)
                .collect();
            if tail != [Phase::Connected, Phase::Stale, Phase::Unreachable] {
                fig.silenced_out_of_order += 1;
                fig.out_of_order_example = format!("{name}: {tail:?}");
            }
        }
        fig.live_left_connected = live_names
            .iter()
            .filter(|n| {
                seen.phases[n.as_str()]
                    .iter()
                    .skip_while(|(p, _)| *p == Phase::Pending)
                    .any(|(p, _)| *p != Phase::Connected)
            })
            .count();
    }

    // Writes per transition, from the request log and the watch.
    let log = sb.controls().request_log();
    fig.log_overflowed = log.len() >= kube_sandbox::REQUEST_LOG_CAPACITY;
    let mut writes: std::collections::HashMap<&str, usize> = Default::default();
    for r in log.iter().filter(|r| is_hub_status_write(r)) {
        *writes.entry(status_request_site(r)).or_default() += 1;
    }
    fig.hub_writes = writes.values().sum();
    fig.conflicts = log
        .iter()
        .filter(|r| r.verb == "update" && r.path.ends_with("/status") && r.status == 409)
        .count();
    let patches: Vec<_> = log
        .iter()
        .filter(|r| {
            r.verb == "patch" && r.path.ends_with("/status") && (200..300).contains(&r.status)
        })
        .collect();
    fig.mean_patch_bytes =
        patches.iter().map(|r| r.request_bytes).sum::<usize>() / patches.len().max(1);
    let hub_log = hub.log_text();
    fig.phase_transitions = hub_log.matches("phase transition").count();
    fig.condition_transitions = hub_log.matches("condition transition").count();
    fig.condition_examples = hub_log
        .lines()
        .filter(|l| l.contains("condition transition"))
        .take(3)
        .map(str::to_owned)
        .collect();
    {
        let seen = seen.lock().unwrap();
        // A condition-only transition (e.g. `ClockSkew` first judged on a
        // site whose first heartbeat predates the hub) is logged per site.
        let mut condition_only: std::collections::HashMap<&str, usize> = Default::default();
        for l in hub_log
            .lines()
            .filter(|l| l.contains("condition transition"))
        {
            if let Some(site) = l
                .split("site=")
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
            {
                *condition_only.entry(site).or_default() += 1;
            }
        }
        fig.sites_writes_not_transitions = names
            .iter()
            .filter(|n| {
                let changes = seen.phases.get(n.as_str()).map_or(0, Vec::len)
                    + condition_only.get(n.as_str()).copied().unwrap_or(0);
                writes.get(n.as_str()).copied().unwrap_or(0) != changes
            })
            .count();
    }
    fig.heartbeats = edges.sent.load(Ordering::Relaxed);
    fig.late_rounds = edges.late_rounds.load(Ordering::Relaxed);

    // Start-up over the existing fleet, edges still reporting: time until
    // the new hub made one reconcile per site, and the writes in that time.
    hub.terminate();
    let logged = sb.controls().request_log().len();
    let restarted = Instant::now();
    // Without leader election, so the time is the judgement's, not the
    // lease hand-over's (each takeover re-judges every site anyway).
    let mut args2 = hub_args_with_metrics("hub-bench-2");
    args2.extend(["--leader-elect".into(), "false".into()]);
    let hub2 = Proc::spawn("hub2", &operator_bin(), &args2, dir.join("hub2.log"));
    wait_until(Duration::from_secs(60), "restarted hub serves", || async {
        hub2.log_text().contains("serving HTTPS")
    })
    .await;
    let addr2 = logged_addr(&hub2.log_text(), "serving HTTPS");
    loop {
        let s = scrape_hub(&addr2, &ca).await;
        if s.sum("fleet_hub_reconciles_total") >= run.sites as f64 {
            break;
        }
        assert!(
            restarted.elapsed() < Duration::from_secs(300),
            "restarted hub judged only {} sites",
            s.sum("fleet_hub_reconciles_total")
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    fig.restart_judged_secs = restarted.elapsed().as_secs_f64();
    fig.restart_hub_cpu = cpu_and_peak_rss(hub2.pid()).0;
    // Writes a first judgement causes land right after it; give them a
    // second, then count every hub write since the restart.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let log = sb.controls().request_log();
    fig.restart_writes = log[logged.min(log.len())..]
        .iter()
        .filter(|r| is_hub_status_write(r))
        .count();
    drop(hub2);
    edges.stop.store(true, Ordering::SeqCst);
    simulator.await.unwrap();
    watch.abort();
    fig
}

/// Prints the figures of a hub run as text and `BENCH-RESULT` lines.
fn report_hub(run: HubRun, f: &HubFigures) {
    let i = run.interval().as_secs_f64();
    let (s_min, s_med, s_p99, s_max) = distribution(&mut f.to_stale.clone());
    let (u_min, u_med, u_p99, u_max) = distribution(&mut f.to_unreachable.clone());
    let pct = |cpu: f64| cpu / f.steady_secs.max(1e-9) * 100.0;
    println!(
        "| sites | {} at {i} s, {} silenced |",
        run.sites, run.silenced
    );
    println!("| created in | {:.0} s |", f.create_secs);
    println!(
        "| all Connected after hub start | {:.1} s |",
        f.connected_secs
    );
    println!(
        "| silence → Stale (min / median / p99 / max) | {s_min:.1} / {s_med:.1} / {s_p99:.1} / {s_max:.1} s (goal ≤ {:.0} s); never Stale: {} |",
        3.0 * i + 5.0,
        f.silenced_never_stale
    );
    println!(
        "| silence → Unreachable (min / median / p99 / max) | {u_min:.1} / {u_med:.1} / {u_p99:.1} / {u_max:.1} s (goal ≤ {:.0} s); never Unreachable: {} |",
        10.0 * i + 5.0,
        f.silenced_never_unreachable
    );
    println!(
        "| silenced sites not Connected → Stale → Unreachable | {} |",
        f.silenced_out_of_order
    );
    println!(
        "| live sites that ever left Connected | {} |",
        f.live_left_connected
    );
    println!(
        "| steady window ({:.0} s, no transitions due) | hub {:.2} s CPU = {:.2} % of one core; kube-sandbox {:.1} % ; simulator + bench watch {:.1} % |",
        f.steady_secs,
        f.steady_hub_cpu,
        pct(f.steady_hub_cpu),
        pct(f.steady_sandbox_cpu),
        pct(f.steady_bench_cpu)
    );
    println!(
        "| hub RSS | {:.0} MiB steady (max sampled), {:.0} MiB peak |",
        f.steady_rss, f.hub_peak_rss
    );
    println!(
        "| watch event lag at the hub (steady window end, whole run) | mean {:.2} s, p50 ≤ {} s, p99 ≤ {} s over {:.0} heartbeats |",
        f.lag_mean, f.lag_p50, f.lag_p99, f.lag_count
    );
    println!(
        "| heartbeats accepted | {} ({} rounds late), mean patch body {} bytes |",
        f.heartbeats, f.late_rounds, f.mean_patch_bytes
    );
    println!(
        "| transitions (hub log) | {} phase + {} condition-only |",
        f.phase_transitions, f.condition_transitions
    );
    println!(
        "| hub status writes | {} = {:.3} per transition; sites whose writes ≠ phase changes seen: {}; {} answered 409 |",
        f.hub_writes,
        f.hub_writes as f64 / (f.phase_transitions + f.condition_transitions).max(1) as f64,
        f.sites_writes_not_transitions,
        f.conflicts
    );
    if f.log_overflowed {
        println!("| NOTE | request log overflowed: write counts incomplete |");
    }
    println!(
        "| restart over the existing fleet | one reconcile per site after {:.1} s, {} status writes, {:.1} s hub CPU |",
        f.restart_judged_secs, f.restart_writes, f.restart_hub_cpu
    );
    let g = run.goal;
    let n = run.sites;
    let stale_target = format!("<= {:.0} s", 3.0 * i + 5.0);
    let unr_target = format!("<= {:.0} s", 10.0 * i + 5.0);
    for (m, v, t) in [
        ("silence to Stale, min", s_min, &stale_target),
        ("silence to Stale, median", s_med, &stale_target),
        ("silence to Stale, p99", s_p99, &stale_target),
        ("silence to Stale, max", s_max, &stale_target),
        ("silence to Unreachable, min", u_min, &unr_target),
        ("silence to Unreachable, median", u_med, &unr_target),
        ("silence to Unreachable, p99", u_p99, &unr_target),
        ("silence to Unreachable, max", u_max, &unr_target),
    ] {
        bench_result(g, &format!("hub {n} sites: {m}"), v, "s", t);
    }
    bench_result(
        g,
        &format!("hub {n} sites: steady CPU"),
        pct(f.steady_hub_cpu),
        "% of one core",
        "<= 5 %",
    );
    bench_result(
        g,
        &format!("hub {n} sites: steady RSS"),
        f.steady_rss,
        "MiB",
        "<= 100 MiB",
    );
    bench_result(
        g,
        &format!("hub {n} sites: peak RSS"),
        f.hub_peak_rss,
        "MiB",
        "<= 100 MiB",
    );
    bench_result(
        g,
        &format!("hub {n} sites: status writes per transition"),
        f.hub_writes as f64 / (f.phase_transitions + f.condition_transitions).max(1) as f64,
        "writes",
        "== 1",
    );
    bench_result(
        g,
        &format!("hub {n} sites: status writes answered 409 (re-read and retried)"),
        f.conflicts as f64,
        "writes",
        "info",
    );
    bench_result(
        g,
        &format!("hub {n} sites: kube-sandbox CPU, steady"),
        pct(f.steady_sandbox_cpu),
        "% of one core",
        "info",
    );
    bench_result(
        g,
        &format!("hub {n} sites: simulated edges CPU, steady"),
        pct(f.steady_bench_cpu),
        "% of one core",
        "info",
    );
    bench_result(
        g,
        &format!("hub {n} sites: watch event lag p99"),
        f.lag_p99,
        "s",
        "info",
    );
    bench_result(
        g,
        &format!("hub {n} sites: start-up, one reconcile per site"),
        f.restart_judged_secs,
        "s",
        "info",
    );
    bench_result(
        g,
        &format!("hub {n} sites: start-up status writes"),
        f.restart_writes as f64,
        "writes",
        "info",
    );
}

/// P3: 10,000 sites at a 30 s interval (run it in a release build).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run explicitly, see the module docs"]
async fn hub_10000_sites() {
    let run = HubRun {
        goal: "P3",
        sites: 10_000,
        silenced: 1_000,
        spec_interval: 30,
        scale: 1.0,
    };
    let f = hub_bench(run).await;
    report_hub(run, &f);
}

/// The hub harness at smoke size (50 sites at 2 s) so it cannot rot:
/// asserts what the benchmark reports is right, never how fast.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hub_bench_smoke() {
    let run = HubRun {
        goal: "smoke",
        sites: 50,
        silenced: 10,
        spec_interval: 10,
        scale: 0.2,
    };
    let f = hub_bench(run).await;
    report_hub(run, &f);
    assert_eq!(f.silenced_never_stale, 0, "{f:?}");
    assert_eq!(f.silenced_never_unreachable, 0, "{f:?}");
    assert_eq!(f.silenced_out_of_order, 0, "{f:?}");
    assert_eq!(f.live_left_connected, 0, "{f:?}");
    assert!(f.heartbeats > 0 && f.steady_secs > 0.0, "{f:?}");
    // Exactly one status write per transition, per site: every phase the
    // watch saw it take, plus its condition-only transitions.
    assert_eq!(f.sites_writes_not_transitions, 0, "{f:?}");
    assert_eq!(
        f.hub_writes,
        f.phase_transitions + f.condition_transitions,
        "{f:?}"
    );
    // Each site's phases are one write each: Pending (when the hub judged
    // it before its first heartbeat), Connected; silenced ones Stale and
    // Unreachable too.
    let silenced_phases = 2 * run.silenced;
    assert!(
        f.phase_transitions >= run.sites + silenced_phases
            && f.phase_transitions <= 2 * run.sites + silenced_phases,
        "{f:?}"
    );
    assert!(!f.log_overflowed);
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
    println!("| edge peak RSS | {peak:.1} MiB |");
    bench_result("P5", "edge peak RSS", peak, "MiB", "<= 25 MiB");
    bench_result(
        "P5",
        "edge heartbeat-only patch, largest",
        hb.iter().max().copied().unwrap_or(0) as f64,
        "bytes",
        "<= 300 B",
    );
    bench_result("P5", "edge CPU over 65 s", cpu, "s", "info");
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
    let mut object = FederatedCluster::new(site, spec.clone());
    object.metadata.labels = Some(rbac::site_object_labels(site, &spec));
    Api::<FederatedCluster>::all(client.clone())
        .create(&PostParams::default(), &object)
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
    // The members are kube-sandboxes on the hub's own loopback.
    let mut args = hub_args(&kc, "hub-pull-bench", 1.0);
    args.extend(["--pull-allow-cidr".to_owned(), "127.0.0.0/8".to_owned()]);
    let mut hub = Proc::spawn("hub", &operator_bin(), &args, dir.join("hub.log"));
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
    use kubectl_fleet::fleet::fixtures::{fixture_now, fleet_at_caps};
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
        time_ms(RUNS, || next_summary(&sites, &[], now, &Default::default()));
    let fleet = next_summary(&sites, &[], now, &Default::default()).written;
    let fleet_bytes = serde_json::to_vec(&fleet).unwrap().len();
    let (status, _) = time_ms(RUNS, || {
        let mut table = render::status::StatusTable::new(now, Some(true), true);
        sites.iter().for_each(|s| table.push(s));
        table.lines(false).collect::<String>()
    });
    let report = render::incidents_report(
        &sites,
        fleet.correlations.clone(),
        fleet.cascades.clone(),
        fleet.outages.clone(),
        &kubectl_fleet::fleet::liveness::HubVerdict::unknown(),
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
