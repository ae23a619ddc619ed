//! API faults the hub must survive, injected with kube-sandbox's
//! controls while a real hub (in process, intervals scaled by 0.5, so
//! I = 5 s: Stale after 15 s) judges two sites that heartbeat with only
//! their own tokens. Each case states what must hold and checks it through
//! the API:
//!
//! - watch 410 Gone (the hub's watch is down while its resourceVersion
//!   leaves the server's history): the hub lists again, a live site never
//!   leaves Connected, a silent site still goes Stale;
//! - 2 s of latency on every request: the same;
//! - the hub's watch kept down (every watch and list answered 500) while
//!   the rest of the API works: the same, judged from fresh reads instead of the cache
//!   the dead watch left behind.

use crate::support;

use std::time::{Duration, Instant};

use kube::api::{Api, Patch, PatchParams};
use kube_sandbox::FaultRule;
use kube_sandbox::SandboxOptions;
use kubectl_fleet::api::{FederatedCluster, FederatedClusterStatus, Phase};
use kubectl_fleet::operator;
use serde_json::json;
use support::{Hub, client_from_yaml, hub_operator_args};
use tokio::sync::watch;

const SCALE: f64 = 0.5;

struct Running {
    hub: Hub,
    live: Api<FederatedCluster>,
    admin: Api<FederatedCluster>,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<Result<(), operator::OperatorError>>,
}

/// A hub operator over two registered sites, `live` and `silent`, both
/// heard from once and judged Connected.
async fn start(tag: &str, options: SandboxOptions) -> Running {
    let hub = Hub::bare(options);
    hub.install_crds();
    let live_kc = hub.register("live", &["--heartbeat-interval", "10"]);
    let silent_kc = hub.register("silent", &["--heartbeat-interval", "10"]);
    let live: Api<FederatedCluster> =
        Api::all(client_from_yaml(live_kc["config"].as_str().unwrap()).await);
    let silent: Api<FederatedCluster> =
        Api::all(client_from_yaml(silent_kc["config"].as_str().unwrap()).await);
    heartbeat(&live, "live").await.unwrap();
    heartbeat(&silent, "silent").await.unwrap();
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(operator::run_until(
        hub_operator_args(&hub.kubeconfig, SCALE),
        stopped,
    ));
    let admin: Api<FederatedCluster> = Api::all(hub.admin().await);
    for site in ["live", "silent"] {
        wait_phase(&admin, site, Phase::Connected, Duration::from_secs(20), tag).await;
    }
    Running {
        hub,
        live,
        admin,
        stop,
        task,
    }
}

async fn heartbeat(api: &Api<FederatedCluster>, site: &str) -> Result<(), kube::Error> {
    let now = jiff::Timestamp::now().to_string();
    api.patch_status(
        site,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"lastHeartbeatTime": now}})),
    )
    .await
    .map(drop)
}

async fn wait_phase(
    api: &Api<FederatedCluster>,
    site: &str,
    want: Phase,
    timeout: Duration,
    tag: &str,
) {
    let start = Instant::now();
    loop {
        let got = api.get(site).await.unwrap().phase();
        if got == Some(want) {
            return;
        }
        assert!(
            start.elapsed() < timeout,
            "{tag}: {site} still {got:?} after {timeout:?}, wanted {want}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Heartbeats `live` (as its edge would, retrying through errors) until
/// `silent` is Stale (the hub still judges) and `done` holds, then checks
/// that `live` never left Connected: its phaseTransitionTime is still
/// `before`'s, read before the fault.
async fn live_stays_connected_while_silent_goes_stale(
    r: &Running,
    tag: &str,
    before: FederatedClusterStatus,
    done: impl Fn() -> bool,
) {
    let started = Instant::now();
    loop {
        let _ = heartbeat(&r.live, "live").await;
        let silent = r.admin.get("silent").await.ok();
        if silent.and_then(|s| s.phase()) == Some(Phase::Stale) && done() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{tag}: the hub stopped judging (silent never went Stale)"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let after = r.admin.get("live").await.unwrap().status.unwrap();
    assert_eq!(after.phase, Some(Phase::Connected), "{tag}");
    assert_eq!(
        after.phase_transition_time, before.phase_transition_time,
        "{tag}: the live site flapped"
    );
}

async fn stop(r: Running) {
    r.stop.send_replace(true);
    r.task.await.unwrap().expect("hub stops cleanly");
}

/// `live`'s status as the admin reads it.
async fn status_of(r: &Running, site: &str) -> FederatedClusterStatus {
    r.admin.get(site).await.unwrap().status.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_410_gone_forces_a_relist_and_the_hub_keeps_judging() {
    // A watch history of 8 events: the hub's resourceVersion expires as
    // soon as 8 writes happen while its watch is down.
    let r = start(
        "410",
        SandboxOptions {
            watch_history: 8,
            ..Default::default()
        },
    )
    .await;
    let before = status_of(&r, "live").await;
    let controls = r.hub.sandbox.controls();
    let fc = |r: &&kube_sandbox::RequestRecord| r.path.contains("federatedclusters");
    let count = |verb: &str, status: u16| {
        controls
            .request_log()
            .iter()
            .filter(fc)
            .filter(|r| r.verb == verb && r.status == status)
            .count()
    };
    // Keep the hub's watch down (a blip ends the open one, then every
    // re-watch fails) while 20 heartbeats push its resourceVersion out of
    // the history; sync points are the request log, not sleeps.
    controls.fail(FaultRule {
        verb: Some("watch".into()),
        path_contains: Some("federatedclusters".into()),
        status: 500,
        count: u32::MAX,
        ..Default::default()
    });
    controls.outage_for(Duration::from_millis(300));
    let started = Instant::now();
    while count("watch", 500) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the hub never re-watched"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for _ in 0..20 {
        heartbeat(&r.live, "live").await.unwrap();
    }
    controls.clear_request_log();
    controls.clear_faults();
    // The next watch gets the real 410 (an ERROR event, "too old resource
    // version"), and the hub must list again: a streaming list (a watch
    // with sendInitialEvents, as the hub lists sites) or, where the server
    // does not stream lists, a LIST.
    let relisted = || {
        count("list", 200) > 0
            || controls.request_log().iter().filter(fc).any(|r| {
                r.verb == "watch"
                    && r.status == 200
                    && r.query.split('&').any(|p| p == "sendInitialEvents=true")
            })
    };
    live_stays_connected_while_silent_goes_stale(&r, "410", before, relisted).await;
    stop(r).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_seconds_of_latency_on_every_request() {
    let r = start("latency", SandboxOptions::default()).await;
    let before = status_of(&r, "live").await;
    r.hub.sandbox.controls().set_latency(Duration::from_secs(2));
    live_stays_connected_while_silent_goes_stale(&r, "latency", before, || true).await;
    r.hub.sandbox.controls().set_latency(Duration::ZERO);
    stop(r).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_that_stays_down_holds_the_hub_to_fresh_reads() {
    let r = start("watch-down", SandboxOptions::default()).await;
    let before = status_of(&r, "live").await;
    let controls = r.hub.sandbox.controls();
    for verb in ["watch", "list"] {
        controls.fail(FaultRule {
            verb: Some(verb.into()),
            path_contains: Some("federatedclusters".into()),
            status: 500,
            count: u32::MAX,
            ..Default::default()
        });
    }
    // End the open watch; every re-watch and relist then fails until the end.
    controls.outage_for(Duration::from_millis(300));
    let failed_watches = || {
        controls
            .request_log()
            .iter()
            .filter(|r| {
                r.verb == "watch" && r.status == 500 && r.path.contains("federatedclusters")
            })
            .count()
    };
    let started = Instant::now();
    while failed_watches() == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the hub never re-watched"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    controls.clear_request_log();
    // The watch stays down all along: the cache never sees `live`'s
    // heartbeats, yet it must not be judged Stale from it.
    live_stays_connected_while_silent_goes_stale(&r, "watch-down", before, || true).await;
    let watches = |status: u16| {
        controls
            .request_log()
            .iter()
            .filter(|r| {
                r.verb == "watch" && r.status == status && r.path.contains("federatedclusters")
            })
            .count()
    };
    assert_eq!(watches(200), 0, "the watch came back during the check");
    assert!(watches(500) > 0, "the hub kept trying to watch");
    controls.clear_faults();
    stop(r).await;
}
