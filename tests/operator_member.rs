//! Which cluster a site's reports come from, through real processes: hub
//! and edge `fleet-operator`s, `kubectl fleet` and kube-sandboxes.
//!
//! - An edge whose member is the hub (the hub's kubeconfig still in its
//!   `--kubeconfig`) refuses to report the hub's inventory as the site's,
//!   unless run with `--member-is-hub`.
//! - Every report names its member (`status.member`: the kube-system
//!   namespace UID); a second edge for one site, reading another cluster,
//!   makes it alternate, and the hub flags the site `MemberChanged`
//!   (condition, Event, `status -o wide`, `describe`, `-o json`).
//! - Sites whose edges read one cluster are one cluster to correlations.
//! - A member API server that keeps answering 503, or hangs, does not
//!   silence its site: the edge reads it for half an interval at most and
//!   heartbeats with what it last read.
//!
//! Intervals: `heartbeatIntervalSeconds: 10` scaled by the hidden
//! `--interval-scale 0.2` on every process, so I = 2 s.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{CONDITION_MEMBER_CHANGED, FederatedCluster, FederationStatus, Phase};
use support::*;

const SCALE: f64 = 0.2;
const WAIT: Duration = Duration::from_secs(30);

/// The kube-system namespace UID of the cluster `client` reaches.
async fn kube_system_uid(client: &kube::Client) -> String {
    Api::<Namespace>::all(client.clone())
        .get("kube-system")
        .await
        .unwrap()
        .metadata
        .uid
        .unwrap()
}

fn spawn_edge(
    dir: &TempDir,
    name: &str,
    site: &str,
    member_kc: &Path,
    hub_kc: &Path,
    extra: &[&str],
) -> Proc {
    let mut args = edge_args(site, member_kc, hub_kc, SCALE);
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    Proc::spawn(
        name,
        &operator_bin(),
        &args,
        dir.join(&format!("{name}.log")),
    )
}

/// Waits for `proc` to exit by itself; its exit status.
fn exit_of(proc: &mut Proc, timeout: Duration) -> std::process::ExitStatus {
    let child = proc.child.as_mut().unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            start.elapsed() < timeout,
            "{} still runs after {timeout:?}:\n{}",
            proc.name,
            proc.log_text()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A hub API server installed with `kubectl fleet install --apply`, its
/// kubeconfig, an admin client, and a hub operator running over it.
async fn installed_hub_running(dir: &TempDir) -> (Sandbox, std::path::PathBuf, kube::Client, Proc) {
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, dir);
    let hub = admin(&hub_sb).await;
    let operator_kc = hub_operator_kubeconfig(&hub_sb, dir).await;
    let proc = Proc::spawn(
        "hub",
        &operator_bin(),
        &hub_args(&operator_kc, "hub-a", SCALE),
        dir.join("hub.log"),
    );
    (hub_sb, hub_kc, hub, proc)
}

/// The number of nodes the site last reported.
fn nodes(fc: &FederatedCluster) -> Option<i64> {
    fc.status.as_ref().and_then(|s| s.node_count)
}

/// A running hub, site-a registered (I = 10 s, scaled) and its edge over
/// a member of one node; returns once the hub holds site-a Connected with
/// that node.
async fn site_a_connected(
    dir: &TempDir,
) -> ((Sandbox, Proc), Api<FederatedCluster>, Sandbox, Proc) {
    let (hub_sb, hub_kc, hub, hub_proc) = installed_hub_running(dir).await;
    let api: Api<FederatedCluster> = Api::all(hub);
    let (member_sb, member_kc) = member_sandbox(dir, "m", (0, 0)).await;
    let site_kc = dir.join("site-a.kubeconfig");
    fleet_register(&hub_kc, "site-a", 10, &site_kc, &[]);
    let edge = spawn_edge(dir, "edge", "site-a", &member_kc, &site_kc, &[]);
    wait_until(WAIT, "site-a Connected with its node", || async {
        api.get("site-a")
            .await
            .is_ok_and(|fc| fc.phase() == Some(Phase::Connected) && nodes(&fc) == Some(1))
    })
    .await;
    ((hub_sb, hub_proc), api, member_sb, edge)
}

/// The member gains a second node (ready, no GPUs).
async fn gain_a_node(member_sb: &Sandbox) {
    seed_member(
        &admin(member_sb).await,
        &[NodeSeed {
            name: "m-node-2",
            gpus: &[],
            ready: true,
        }],
        &[],
    )
    .await;
}

async fn member_of(api: &Api<FederatedCluster>, site: &str) -> Option<String> {
    api.get(site).await.ok()?.status?.member
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edge_whose_member_is_the_hub_refuses_to_report_unless_told() {
    let dir = TempDir::new("member-hub");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let hub = admin(&hub_sb).await;
    let api: Api<FederatedCluster> = Api::all(hub.clone());
    let site_kc = dir.join("site-a.kubeconfig");
    fleet_register(&hub_kc, "site-a", 10, &site_kc, &[]);

    // The hub's admin kubeconfig left as the edge's member: it refuses to
    // start, says why and what to do, and reports nothing.
    let mut wrong = spawn_edge(&dir, "wrong", "site-a", &hub_kc, &site_kc, &[]);
    let status = exit_of(&mut wrong, WAIT);
    assert!(!status.success());
    let log = wrong.log_text();
    assert!(log.contains("is the hub itself"), "{log}");
    assert!(log.contains("--member-is-hub"), "{log}");
    let held = api.get("site-a").await.unwrap().status.unwrap_or_default();
    assert_eq!(held.last_heartbeat_time, None, "nothing was reported");
    assert_eq!(held.node_count, None);

    // Told the site is the hub's own cluster: it reports, naming the hub.
    let _told = spawn_edge(
        &dir,
        "told",
        "site-a",
        &hub_kc,
        &site_kc,
        &["--member-is-hub"],
    );
    let hub_uid = kube_system_uid(&hub).await;
    wait_until(WAIT, "site-a reports from the hub", || async {
        member_of(&api, "site-a").await.as_deref() == Some(hub_uid.as_str())
    })
    .await;

    // An edge on another cluster is not refused, and names that cluster.
    let (member_sb, member_kc) = member_sandbox(&dir, "b", (0, 0)).await;
    let site_b_kc = dir.join("site-b.kubeconfig");
    fleet_register(&hub_kc, "site-b", 10, &site_b_kc, &[]);
    let right = spawn_edge(&dir, "right", "site-b", &member_kc, &site_b_kc, &[]);
    let member_uid = kube_system_uid(&admin(&member_sb).await).await;
    wait_until(WAIT, "site-b reports from its member", || async {
        member_of(&api, "site-b").await.as_deref() == Some(member_uid.as_str())
    })
    .await;
    assert!(!right.log_text().contains("is the hub itself"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_edge_for_one_site_is_flagged_member_changed() {
    let dir = TempDir::new("member-changed");
    let (_hub_sb, hub_kc, hub, _hub) = installed_hub_running(&dir).await;
    let api: Api<FederatedCluster> = Api::all(hub.clone());
    let (one_sb, one_kc) = member_sandbox(&dir, "one", (0, 0)).await;
    let (two_sb, two_kc) = member_sandbox(&dir, "two", (0, 0)).await;
    let one = kube_system_uid(&admin(&one_sb).await).await;
    let two = kube_system_uid(&admin(&two_sb).await).await;
    let site_kc = dir.join("site-a.kubeconfig");
    fleet_register(&hub_kc, "site-a", 10, &site_kc, &[]);

    let first = spawn_edge(&dir, "first", "site-a", &one_kc, &site_kc, &[]);
    wait_until(WAIT, "site-a Connected from member one", || async {
        let Ok(fc) = api.get("site-a").await else {
            return false;
        };
        fc.phase() == Some(Phase::Connected)
            && fc.status.as_ref().and_then(|s| s.member.as_deref()) == Some(one.as_str())
    })
    .await;
    let fc = api.get("site-a").await.unwrap();
    assert!(
        fc.status
            .unwrap()
            .condition(CONDITION_MEMBER_CHANGED)
            .is_none(),
        "one member: nothing to flag"
    );

    // A second edge for the same site, reading another cluster.
    let second = spawn_edge(&dir, "second", "site-a", &two_kc, &site_kc, &[]);
    let m = wait_condition(
        &api,
        "site-a",
        CONDITION_MEMBER_CHANGED,
        "True",
        "MemberChanged",
    )
    .await;
    assert!(m.contains("two edges reporting for one site"), "{m}");
    // The member alternates: each edge replaces the other's whole report.
    let mut seen = std::collections::BTreeSet::new();
    let start = Instant::now();
    while seen.len() < 2 {
        assert!(start.elapsed() < WAIT, "only {seen:?} reported");
        if let Some(m) = member_of(&api, "site-a").await {
            seen.insert(m);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(seen.contains(&one) && seen.contains(&two), "{seen:?}");

    // An Event names both members.
    let events: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(hub.clone(), "default");
    let changed = ListParams::default().fields("involvedObject.name=site-a,reason=MemberChanged");
    wait_until(WAIT, "a MemberChanged Event", || async {
        !events.list(&changed).await.unwrap().items.is_empty()
    })
    .await;
    let listed = events.list(&changed).await.unwrap().items;
    let note = listed[0].message.clone().unwrap_or_default();
    assert!(note.contains(&one) && note.contains(&two), "{note}");
    assert_eq!(listed[0].type_.as_deref(), Some("Warning"));

    // What a user sees.
    let wide = fleet_cli(&hub_kc, &["status", "-o", "wide", "site-a"]);
    let row = wide.lines().find(|l| l.starts_with("site-a ")).unwrap();
    assert!(row.trim_end().ends_with("MemberChanged"), "{wide}");
    let report: serde_json::Value =
        serde_json::from_str(&fleet_cli(&hub_kc, &["status", "-o", "json"])).unwrap();
    let member = report["sites"][0]["member"].as_str().unwrap().to_owned();
    assert!(member == one || member == two, "{report}");
    let described = fleet_cli(&hub_kc, &["describe", "site-a"]);
    assert!(
        described.contains("changed recently: see MemberChanged"),
        "{described}"
    );
    assert!(described.contains("MemberChanged"), "{described}");
    // Each edge says it saw another member's report.
    for edge in [&first, &second] {
        let log = edge.log_text();
        assert!(
            log.contains("another member cluster"),
            "{}: {log}",
            edge.name
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sites_whose_edges_read_one_cluster_make_no_cross_cluster_correlation() {
    let dir = TempDir::new("member-one-cluster");
    let (_hub_sb, hub_kc, hub, _hub) = installed_hub_running(&dir).await;
    let api: Api<FederatedCluster> = Api::all(hub.clone());
    // One member cluster with a crash-looping Deployment, read by the
    // edges of three "sites".
    let member_sb = Sandbox::start();
    let member_kc = dir.join("member.kubeconfig");
    member_sb.write_admin_kubeconfig(&member_kc).unwrap();
    seed_member(
        &admin(&member_sb).await,
        &[NodeSeed {
            name: "node-1",
            gpus: &[],
            ready: true,
        }],
        &[FailingPod {
            namespace: "shop",
            deployment: "checkout",
            reason: "CrashLoopBackOff",
        }],
    )
    .await;
    let mut edges = Vec::new();
    for site in ["site-a", "site-b", "site-c"] {
        let kc = dir.join(&format!("{site}.kubeconfig"));
        fleet_register(&hub_kc, site, 10, &kc, &[]);
        edges.push(spawn_edge(&dir, site, site, &member_kc, &kc, &[]));
    }
    // The hub summed the three sites up with their signals...
    let fleets: Api<FederationStatus> = Api::all(hub.clone());
    wait_until(WAIT, "the summary counts three sites' signals", || async {
        fleets
            .get_opt("fleet")
            .await
            .unwrap()
            .and_then(|f| f.status)
            .is_some_and(|s| s.connected_clusters == 3 && s.total_active_issues >= 3)
    })
    .await;
    for site in ["site-a", "site-b", "site-c"] {
        let s = api.get(site).await.unwrap().status.unwrap();
        assert_eq!(s.signals().len(), 1, "{site}");
    }
    // ...and found no correlation across clusters: there is one cluster.
    let status = fleets.get("fleet").await.unwrap().status.unwrap();
    assert!(status.correlations.is_empty(), "{:?}", status.correlations);
    assert_eq!(status.cross_cluster_correlations, 0);
    let incidents = fleet_cli(&hub_kc, &["incidents", "-o", "json"]);
    let incidents: serde_json::Value = serde_json::from_str(&incidents).unwrap();
    assert_eq!(
        incidents["correlations"],
        serde_json::json!([]),
        "{incidents}"
    );
}

/// The member's API server answers 503 to everything (overloaded, or a
/// load balancer without backends), then hangs, 12 s each (6 intervals):
/// the site stays Connected throughout, its inventory as last read, and
/// the edge says why it reports no more; once the member answers, its
/// inventory is read again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_that_answers_503_or_hangs_does_not_silence_its_site() {
    let dir = TempDir::new("member-unwell");
    let (_hub, api, member_sb, edge) = site_a_connected(&dir).await;

    for hang in [false, true] {
        if hang {
            member_sb.controls().set_hung(true);
        } else {
            member_sb.controls().fail(kube_sandbox::FaultRule {
                status: 503,
                count: u32::MAX,
                ..Default::default()
            });
        }
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(12) {
            let fc = api.get("site-a").await.unwrap();
            assert_eq!(
                fc.phase(),
                Some(Phase::Connected),
                "{:?} into the member's {}\n{}",
                start.elapsed(),
                if hang { "hang" } else { "503s" },
                edge.log_text()
            );
            assert_eq!(nodes(&fc), Some(1), "the inventory as last read");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        member_sb.controls().clear_faults();
        member_sb.controls().set_hung(false);
    }
    let log = edge.log_text();
    assert!(log.contains("was not read within"), "{log}");
    // Said once while it lasts (twice if a read got through between the
    // 503s and the hang), not at each of its ~12 heartbeats.
    let said = log.matches("reading the member cluster failed").count();
    assert!((1..=2).contains(&said), "said {said} times:\n{log}");

    // The member answers again: a node it gained is reported.
    gain_a_node(&member_sb).await;
    wait_until(WAIT, "the member's second node reported", || async {
        nodes(&api.get("site-a").await.unwrap()) == Some(2)
    })
    .await;
    // Logged once the report that carried it was answered: maybe after the
    // test read the node.
    wait_until(WAIT, "the end of the member error logged", || async {
        edge.log_text()
            .contains("reporting without that error again")
    })
    .await;
}

/// A member that takes longer than half an interval to read (every answer
/// of its API server 300 ms late at I = 2 s, as a very large cluster or a
/// far one answers) is still read: the reading the edge gave up on for one
/// report goes on and serves the next, so a node the member gains is
/// reported, and the site stays Connected meanwhile; from then on each
/// reading starts as the one before is reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_slower_to_read_than_half_an_interval_is_still_reported() {
    let dir = TempDir::new("member-slow");
    let (_hub, api, member_sb, edge) = site_a_connected(&dir).await;

    member_sb.controls().set_latency(Duration::from_millis(300));
    gain_a_node(&member_sb).await;
    let start = Instant::now();
    loop {
        let fc = api.get("site-a").await.unwrap();
        assert_eq!(
            fc.phase(),
            Some(Phase::Connected),
            "{:?} into the slow member\n{}",
            start.elapsed(),
            edge.log_text()
        );
        if nodes(&fc) == Some(2) {
            break;
        }
        assert!(
            start.elapsed() < WAIT,
            "the slow member's second node never reported\n{}",
            edge.log_text()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Once found that slow, the member is read on between reports, each
    // reading serving the next report: given up on once, not at every
    // other report (four more intervals here).
    tokio::time::sleep(Duration::from_secs(8)).await;
    let log = edge.log_text();
    assert!(log.contains("was not read within"), "{log}");
    let said = log.matches("reading the member cluster failed").count();
    assert_eq!(said, 1, "said {said} times:\n{log}");
}
