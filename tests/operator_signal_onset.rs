//! A signal's onset is the member's fact, not the edge's memory:
//! restarting or rolling out edges, in any order, leaves the cascade
//! verdict exactly as it was.
//!
//! Real processes: a hub sandbox with the fleet installed, one hub
//! operator, two member sandboxes (a staging and a production site) and
//! their edges. Each member holds the same failing Deployments with pod
//! statuses written through the API as a kubelet would record them, at
//! fixed times before the test started:
//!
//! | workload | signal | staging onset | production onset | verdict |
//! | --- | --- | --- | --- | --- |
//! | `checkout` | CrashLoopBackOff | 60 min ago | 60 min ago | no cascade (same onset) |
//! | `payments` | CrashLoopBackOff | 60 min ago (2 pods: 60, 55) | 20 min ago | cascade, 2400 s |
//! | `search` | ImagePullBackOff | 30 min ago | 50 min ago | no cascade (production first) |
//! | `reports` | Evicted | not recorded | not recorded | no cascade (production's edge started first) |
//!
//! Then the edges are restarted (SIGTERM, as a rollout does) staging then
//! production, production then staging, only staging, only production.
//! After each round, once every restarted edge has had a report accepted
//! (its `/readyz`) and the hub has recomputed the FederationStatus after
//! those reports, the cascades must be exactly the first verdict and every
//! signal's `firstSeen` exactly what it was: the member's onset, or for the
//! eviction the first sighting, which a restarted edge takes over from the
//! site's status on the hub. An edge that took `firstSeen` from its own
//! start time fabricates `checkout`, `search` and `reports` cascades on a
//! staging-first rollout and hides `payments` when only staging restarts.
//!
//! Intervals: `heartbeatIntervalSeconds: 10` scaled by 0.2, so I = 2 s.

use crate::support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{
    Cascade, Environment, FEDERATION_STATUS_NAME, FederatedCluster, FederationStatus, Phase,
    SignalType,
};
use serde_json::json;
use support::*;

const SCALE: f64 = 0.2;
const STAGING: &str = "site-staging";
const PRODUCTION: &str = "site-production";

/// One failing pod of a Deployment, as the kubelet would record it.
struct FailingPod {
    deployment: &'static str,
    /// Container waiting reason.
    reason: &'static str,
    /// Minutes before the test's start the containers stopped being ready.
    unready_mins: i64,
    /// Seconds before the test's start the container last exited (a
    /// crash-looping container exits again and again; its onset must not).
    last_exit_secs: Option<i64>,
}

/// Creates the Deployment's ReplicaSet (if missing) and the pod, then
/// writes the pod's status through the status subresource.
async fn seed_pod(client: &kube::Client, t0: Timestamp, index: usize, p: &FailingPod) {
    let ns = "shop";
    let at = |secs: i64| (t0 - SignedDuration::from_secs(secs)).to_string();
    let rs_name = format!("{}-6b7d9", p.deployment);
    let rss: Api<ReplicaSet> = Api::namespaced(client.clone(), ns);
    if rss.get_opt(&rs_name).await.unwrap().is_none() {
        let rs: ReplicaSet = serde_json::from_value(json!({
            "metadata": {"name": rs_name, "namespace": ns, "ownerReferences": [{
                "apiVersion": "apps/v1", "kind": "Deployment", "name": p.deployment,
                "uid": format!("d-{}", p.deployment), "controller": true}]},
            "spec": {"selector": {"matchLabels": {"app": p.deployment}},
                     "template": {"metadata": {"labels": {"app": p.deployment}},
                                  "spec": {"containers": [{"name": "app", "image": "app:2"}]}}}
        }))
        .unwrap();
        rss.create(&PostParams::default(), &rs).await.unwrap();
    }
    let name = format!("{rs_name}-p{index}");
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": ns,
                     "labels": {"app": p.deployment, "pod-template-hash": "6b7d9"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                          "name": rs_name, "uid": format!("r-{}", p.deployment),
                                          "controller": true}]},
        "spec": {"containers": [{"name": "app", "image": "app:2"}]}
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let unready = at(p.unready_mins * 60);
    let last_state = p.last_exit_secs.map_or(json!({}), |s| {
        json!({"terminated": {"exitCode": 1, "reason": "Error",
                              "startedAt": at(s + 3), "finishedAt": at(s)}})
    });
    let status = if p.reason == "Evicted" {
        // An eviction whose pod records no time of it: the one signal whose
        // firstSeen falls back to the edge's first sighting.
        json!({"status": {"phase": "Failed", "reason": "Evicted",
                          "message": "The node was low on resource: memory."}})
    } else {
        waiting_status(p, &unready, last_state)
    };
    pods.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

/// A pod whose container waits in `p.reason`, its containers unready since
/// `unready`, and the container's previous run in `last_state`.
fn waiting_status(
    p: &FailingPod,
    unready: &str,
    last_state: serde_json::Value,
) -> serde_json::Value {
    json!({"status": {
        "phase": "Running",
        "startTime": unready,
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": unready},
            {"type": "Initialized", "status": "True", "lastTransitionTime": unready},
            {"type": "ContainersReady", "status": "False", "reason": "ContainersNotReady",
             "lastTransitionTime": unready},
            {"type": "Ready", "status": "False", "reason": "ContainersNotReady",
             "lastTransitionTime": unready}
        ],
        "containerStatuses": [{
            "name": "app", "image": "app:2", "imageID": "", "ready": false,
            "restartCount": if p.last_exit_secs.is_some() { 14 } else { 0 },
            "state": {"waiting": {"reason": p.reason, "message": format!("{} of {}", p.reason, p.deployment)}},
            "lastState": last_state
        }]
    }})
}

struct Member {
    _sb: Sandbox,
    kubeconfig: PathBuf,
}

async fn member(dir: &TempDir, name: &str, t0: Timestamp, pods: &[FailingPod]) -> Member {
    let sb = Sandbox::start();
    let kubeconfig = dir.join(&format!("{name}-member.kubeconfig"));
    sb.write_admin_kubeconfig(&kubeconfig).unwrap();
    let client = admin(&sb).await;
    seed_member(
        &client,
        &[NodeSeed {
            name: &format!("{name}-node-1"),
            gpus: &[],
            ready: true,
        }],
        &[],
    )
    .await;
    ensure_namespace(&client, "shop").await;
    for (i, p) in pods.iter().enumerate() {
        seed_pod(&client, t0, i, p).await;
    }
    Member {
        _sb: sb,
        kubeconfig,
    }
}

/// The fleet under test: hub, members and the running edges.
struct Fleet {
    dir: TempDir,
    _hub_sb: Sandbox,
    hub_kc: PathBuf,
    admin: kube::Client,
    _hub: Proc,
    members: BTreeMap<&'static str, Member>,
    edges: BTreeMap<&'static str, Proc>,
    starts: usize,
}

impl Fleet {
    /// Starts the edge of `site` and waits until the hub accepted a report
    /// from this very process (its `/readyz` answers 200 only then).
    async fn start_edge(&mut self, site: &'static str) {
        self.starts += 1;
        let m = &self.members[site];
        let args = edge_args(
            site,
            &m.kubeconfig,
            &self.dir.join(&format!("{site}.kubeconfig")),
            SCALE,
        );
        let log = self.dir.join(&format!("{site}-{}.log", self.starts));
        let edge = Proc::spawn(site, &operator_bin(), &args, log);
        wait_until(
            Duration::from_secs(20),
            &format!("a report of the new {site} edge accepted"),
            || async {
                let text = edge.log_text();
                text.contains("serving /healthz and /readyz") && probe(&text, "/readyz") == 200
            },
        )
        .await;
        self.edges.insert(site, edge);
    }

    /// A rollout of the edge of `site`: the old process stops (SIGTERM),
    /// the new one starts and reports.
    async fn restart_edge(&mut self, site: &'static str) {
        let mut old = self.edges.remove(site).expect("edge running");
        assert!(old.terminate().is_some(), "{site} edge stopped");
        self.start_edge(site).await;
    }

    /// The hub's verdict computed after everything written so far: creates
    /// a marker site (a change the hub's summary counts), waits until the
    /// FederationStatus counts it, and returns its cascades. The hub's
    /// cache holds every report accepted before the marker was created.
    async fn verdict_now(&self, round: usize) -> Vec<Cascade> {
        let marker = format!("marker-{round}");
        create_site(&self.admin, &marker, 10, Environment::Dr).await;
        let want = i64::try_from(2 + round).unwrap();
        let fleet: Api<FederationStatus> = Api::all(self.admin.clone());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let status = fleet
                .get_opt(FEDERATION_STATUS_NAME)
                .await
                .unwrap()
                .and_then(|f| f.status);
            match status {
                Some(s) if s.total_clusters == want => return s.cascades,
                _ => {}
            }
            assert!(
                Instant::now() < deadline,
                "the FederationStatus did not count {marker} within 20 s"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Every site's signals as (site, type, workload, firstSeen).
    async fn first_seen(&self) -> Vec<(String, SignalType, String, Timestamp)> {
        let api: Api<FederatedCluster> = Api::all(self.admin.clone());
        let mut out = Vec::new();
        for site in [STAGING, PRODUCTION] {
            let fc = api.get(site).await.unwrap();
            for s in fc.status.as_ref().map(|s| s.signals()).unwrap_or_default() {
                out.push((
                    site.to_owned(),
                    s.type_,
                    s.workload.name.clone(),
                    s.first_seen.0,
                ));
            }
        }
        out.sort();
        out
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edge_restarts_in_any_order_leave_the_cascade_verdict_unchanged() {
    let t0 = Timestamp::from_second(Timestamp::now().as_second()).unwrap();
    let ago_mins = |m: i64| t0 - SignedDuration::from_mins(m);
    let dir = TempDir::new("onset");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    for (site, env) in [(STAGING, "staging"), (PRODUCTION, "production")] {
        let out = dir.join(&format!("{site}.kubeconfig"));
        fleet_register(&hub_kc, site, 10, &out, &["--environment", env]);
    }
    let admin_c = admin(&hub_sb).await;
    let hub = Proc::spawn(
        "hub",
        &operator_bin(),
        &hub_args(&hub_kc, "hub-a", SCALE),
        dir.join("hub.log"),
    );

    let crash = |deployment, unready_mins, last_exit_secs| FailingPod {
        deployment,
        reason: "CrashLoopBackOff",
        unready_mins,
        last_exit_secs: Some(last_exit_secs),
    };
    let evicted = || FailingPod {
        deployment: "reports",
        reason: "Evicted",
        unready_mins: 0,
        last_exit_secs: None,
    };
    let image = |unready_mins| FailingPod {
        deployment: "search",
        reason: "ImagePullBackOff",
        unready_mins,
        last_exit_secs: None,
    };
    let staging = member(
        &dir,
        "staging",
        t0,
        &[
            crash("checkout", 60, 40),
            crash("payments", 55, 5),
            crash("payments", 60, 25),
            image(30),
            evicted(),
        ],
    )
    .await;
    let production = member(
        &dir,
        "production",
        t0,
        &[
            crash("checkout", 60, 10),
            crash("payments", 20, 15),
            image(50),
            evicted(),
        ],
    )
    .await;
    let mut fleet = Fleet {
        dir,
        _hub_sb: hub_sb,
        hub_kc,
        admin: admin_c,
        _hub: hub,
        members: BTreeMap::from([(STAGING, staging), (PRODUCTION, production)]),
        edges: BTreeMap::new(),
        starts: 0,
    };
    // Production's edge first: a memory-based firstSeen would now make
    // staging look later than production everywhere.
    fleet.start_edge(PRODUCTION).await;
    fleet.start_edge(STAGING).await;
    let sites: Api<FederatedCluster> = Api::all(fleet.admin.clone());
    for site in [STAGING, PRODUCTION] {
        wait_until(
            Duration::from_secs(15),
            &format!("{site} Connected"),
            || async {
                sites.get(site).await.ok().and_then(|fc| fc.phase()) == Some(Phase::Connected)
            },
        )
        .await;
    }

    // firstSeen is each workload's onset as its member records it; the
    // eviction, which records no time, was first seen by the edge.
    let baseline = fleet.first_seen().await;
    let mut recorded: Vec<_> = baseline
        .iter()
        .filter(|(_, t, _, _)| *t != SignalType::Evicted)
        .cloned()
        .collect();
    recorded.sort();
    let mut want = vec![
        (STAGING, SignalType::CrashLoopBackOff, "checkout", 60),
        (STAGING, SignalType::CrashLoopBackOff, "payments", 60),
        (STAGING, SignalType::ImagePullBackOff, "search", 30),
        (PRODUCTION, SignalType::CrashLoopBackOff, "checkout", 60),
        (PRODUCTION, SignalType::CrashLoopBackOff, "payments", 20),
        (PRODUCTION, SignalType::ImagePullBackOff, "search", 50),
    ]
    .into_iter()
    .map(|(site, t, w, m)| (site.to_owned(), t, w.to_owned(), ago_mins(m)))
    .collect::<Vec<_>>();
    want.sort();
    assert_eq!(recorded, want);
    let evictions: Vec<_> = baseline
        .iter()
        .filter(|(_, t, w, first)| *t == SignalType::Evicted && w == "reports" && *first >= t0)
        .collect();
    assert_eq!(evictions.len(), 2, "{baseline:?}");

    // The verdict: payments walked from staging into production 40 min
    // later; checkout (same onset) and search (production first) did not.
    let before = fleet.verdict_now(1).await;
    let summary: Vec<_> = before
        .iter()
        .map(|c| {
            (
                c.source.as_str(),
                c.target.as_str(),
                c.signal,
                c.workload.name.as_str(),
                c.delta_seconds,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [(
            STAGING,
            PRODUCTION,
            SignalType::CrashLoopBackOff,
            "payments",
            2400
        )]
    );
    assert_eq!(before[0].source_first_seen.0, ago_mins(60));
    assert_eq!(before[0].target_first_seen.0, ago_mins(20));

    let rounds: [&[&'static str]; 4] = [
        &[STAGING, PRODUCTION],
        &[PRODUCTION, STAGING],
        &[STAGING],
        &[PRODUCTION],
    ];
    for (i, order) in rounds.iter().enumerate() {
        for site in order.iter() {
            fleet.restart_edge(site).await;
        }
        let after = fleet.verdict_now(i + 2).await;
        assert_eq!(
            after,
            before,
            "restarting {order:?} changed the cascades (round {})",
            i + 1
        );
        assert_eq!(
            fleet.first_seen().await,
            baseline,
            "restarting {order:?} moved a firstSeen"
        );
    }

    // What a user sees: `kubectl fleet incidents -o json` through the
    // real kubectl shows the same single cascade.
    let out = kubectl_fleet(&fleet.hub_kc, &["incidents", "-o", "json"]);
    let json_start = out.find('{').expect("a JSON report");
    let report: serde_json::Value = serde_json::from_str(&out[json_start..]).unwrap();
    let cascades = report["cascades"].as_array().unwrap();
    assert_eq!(cascades.len(), 1, "{report}");
    assert_eq!(cascades[0]["source"], STAGING);
    assert_eq!(cascades[0]["target"], PRODUCTION);
    assert_eq!(cascades[0]["workload"]["name"], "payments");
    assert_eq!(cascades[0]["deltaSeconds"], 2400);
}
