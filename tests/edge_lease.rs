//! The edge's heartbeat through its lease (`FederatedClusterLease`,
//! docs/architecture.md#liveness-the-lease), on both lanes, through the
//! API: a steady edge writes its site's status once and then only renews
//! its lease; a change still lands in the status at once; a site
//! registered by an older kubectl-fleet (no lease, no lease rule) keeps
//! heartbeating through its status and switches to the lease once it is
//! registered again; register keeps a live lease's renewal, unregister
//! removes the lease.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::api::{Api, PostParams};
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{FederatedCluster, FederatedClusterLease, Phase};
use kubectl_fleet::fleet::rbac;
use kubectl_fleet::operator::edge::{Edge, EdgeConfig, Fallback, LEASE_RETRY_HEARTBEATS, Tick};
use kubectl_fleet::operator::hub::{Hub, HubConfig};
use support::*;
use tokio::sync::watch;

const STATUS: &str = "/apis/federation.kubectl-fleet.dev/v1alpha1/federatedclusters/site-a/status";
const LEASE: &str = "/apis/federation.kubectl-fleet.dev/v1alpha1/federatedclusterleases/site-a";

/// The site identity's writes to `path` in the hub's request log:
/// (accepted, refused).
fn writes(hub: &Sandbox, path: &str) -> (usize, usize) {
    let log = hub.controls().request_log();
    let site = format!(
        "system:serviceaccount:{}:{}",
        rbac::SITES_NAMESPACE,
        rbac::edge_identity_name("site-a")
    );
    let to = log
        .iter()
        .filter(|r| r.path == path && r.method != "GET" && r.user == site);
    let accepted = to.clone().filter(|r| r.status < 300).count();
    (accepted, to.count() - accepted)
}

/// A hub installed with `kubectl fleet install --apply`, site-a registered
/// with `kubectl fleet register` (interval 30 s), a member with one node,
/// and an in-process edge of site-a on a clock stepped by the test.
struct Fleet {
    hub: Sandbox,
    _member: Sandbox,
    member: kube::Client,
    dir: TempDir,
    hub_kc: std::path::PathBuf,
    admin: kube::Client,
    start: Timestamp,
    seconds: Arc<AtomicI64>,
}

impl Fleet {
    async fn new(lane: Lane) -> (Fleet, Edge) {
        let hub = lane.sandbox();
        let dir = TempDir::new("edge-lease");
        let hub_kc = installed_hub(&hub, &dir);
        let site_kc = dir.join("site-a.kubeconfig");
        fleet_register(&hub_kc, "site-a", 30, &site_kc, &[]);
        let member_sb = Sandbox::start();
        let member = admin(&member_sb).await;
        seed_member(
            &member,
            &[NodeSeed {
                name: "gpu-1",
                gpus: &[("nvidia.com/gpu", 8, 8)],
                ready: true,
            }],
            &[],
        )
        .await;
        let start = Timestamp::from_second(Timestamp::now().as_second()).unwrap();
        let seconds = Arc::new(AtomicI64::new(0));
        let clock = {
            let seconds = seconds.clone();
            Arc::new(move || start + SignedDuration::from_secs(seconds.load(Ordering::SeqCst)))
        };
        let cfg = EdgeConfig {
            site: "site-a".into(),
            hub_kubeconfig: site_kc,
            hub_kubeconfig_secret: None,
            journal: None,
            clock_offset: SignedDuration::ZERO,
            interval_scale: 1.0,
            auto_rotate: false,
            version: env!("CARGO_PKG_VERSION").to_owned(),
        };
        let edge = Edge::new(cfg, member.clone()).with_clock(clock);
        let admin = admin(&hub).await;
        let fleet = Fleet {
            hub,
            _member: member_sb,
            member,
            dir,
            hub_kc,
            admin,
            start,
            seconds,
        };
        (fleet, edge)
    }

    /// One tick at `second` on the edge's clock; it must be accepted.
    async fn tick(&self, edge: &mut Edge, second: i64) -> serde_json::Value {
        self.seconds.store(second, Ordering::SeqCst);
        let Tick { sent, error, .. } = edge.tick().await;
        assert!(error.is_none(), "tick {second}: {error:?}");
        sent.unwrap_or_else(|| panic!("tick {second}: nothing accepted"))
    }

    fn at(&self, second: i64) -> String {
        (self.start + SignedDuration::from_secs(second)).to_string()
    }

    async fn lease(&self) -> Option<FederatedClusterLease> {
        Api::<FederatedClusterLease>::all(self.admin.clone())
            .get_opt("site-a")
            .await
            .unwrap()
    }

    async fn site(&self) -> FederatedCluster {
        Api::<FederatedCluster>::all(self.admin.clone())
            .get("site-a")
            .await
            .unwrap()
    }

    /// A workload of the member starts crash-looping: what the edge
    /// reports changes.
    async fn crash_a_workload(&self) {
        seed_member(
            &self.member,
            &[],
            &[FailingPod {
                namespace: "shop",
                deployment: "checkout",
                reason: "CrashLoopBackOff",
            }],
        )
        .await;
    }

    fn renew_time(lease: &FederatedClusterLease) -> Option<String> {
        lease.spec.renew_time.as_ref().map(|t| t.0.to_string())
    }
}

on_both_lanes! {
/// What a fleet of thousands relies on: a steady edge's heartbeats leave
/// its site object alone, and what changes still lands in the status.
multi_thread async fn a_steady_edge_writes_its_status_once_then_only_renews_its_lease(lane) {
    let (fleet, mut edge) = Fleet::new(lane).await;
    let registered = fleet.lease().await.expect("register creates the site's lease");
    assert_eq!(registered.spec, Default::default(), "an empty lease until the edge renews it");
    fleet.hub.controls().clear_request_log();

    let first = fleet.tick(&mut edge, 0).await;
    assert_eq!(first["status"]["nodeCount"], 1, "the first report is whole: {first}");
    for s in 1..=5 {
        let sent = fleet.tick(&mut edge, s).await;
        assert_eq!(sent["spec"]["renewTime"], fleet.at(s), "tick {s}: {sent}");
        assert!(sent.get("status").is_none(), "tick {s}: {sent}");
    }
    assert_eq!(writes(&fleet.hub, STATUS), (1, 0), "the status is written once");
    assert_eq!(writes(&fleet.hub, LEASE), (5, 0), "then only the lease is renewed");
    let lease = fleet.lease().await.unwrap();
    assert_eq!(Fleet::renew_time(&lease), Some(fleet.at(5)));
    // The previous renewal's round trip goes with each: the health check.
    assert!(lease.spec.last_renew_duration_milliseconds >= Some(5), "{lease:?}");
    let status = fleet.site().await.status.unwrap();
    assert_eq!(
        status.last_heartbeat_time.map(|t| t.0.to_string()),
        Some(fleet.at(0)),
        "the status keeps the heartbeat of its last write"
    );
    assert_eq!(status.node_count, Some(1));
    assert_eq!(
        (edge.stats.reports, edge.stats.heartbeat_only, edge.stats.renewals),
        (1, 0, 5)
    );
    assert_eq!(edge.lease_fallback(), None);

    // A workload starts failing: the next report is a status write, at
    // once, carrying the heartbeat too; then renewals again.
    fleet.crash_a_workload().await;
    let changed = fleet.tick(&mut edge, 6).await;
    assert_eq!(changed["status"]["signals"][0]["type"], "CrashLoopBackOff", "{changed}");
    assert_eq!(changed["status"]["lastHeartbeatTime"], fleet.at(6));
    assert_eq!(writes(&fleet.hub, STATUS), (2, 0));
    assert_eq!(writes(&fleet.hub, LEASE), (5, 0));
    let sent = fleet.tick(&mut edge, 7).await;
    assert_eq!(sent["spec"]["renewTime"], fleet.at(7), "{sent}");
    assert_eq!(writes(&fleet.hub, STATUS), (2, 0), "the standing failure is not re-sent");
    let status = fleet.site().await.status.unwrap();
    assert_eq!(status.signals.unwrap()[0].workload.name, "checkout");

    // Register again, as is and with a change: the live lease keeps its
    // renewal (server-side apply of an empty spec resets nothing).
    fleet_register(&fleet.hub_kc, "site-a", 30, &fleet.dir.join("again.kubeconfig"), &[]);
    fleet_register(
        &fleet.hub_kc,
        "site-a",
        30,
        &fleet.dir.join("tier.kubeconfig"),
        &["--tier", "critical"],
    );
    assert_eq!(fleet.site().await.spec.tier.as_str(), "critical");
    let kept = fleet.lease().await.unwrap();
    assert_eq!(Fleet::renew_time(&kept), Some(fleet.at(7)), "{kept:?}");

    // Unregister removes the lease with the rest.
    fleet_cli(&fleet.hub_kc, &["unregister", "site-a", "--yes"]);
    assert!(fleet.lease().await.is_none(), "unregister deletes the lease");
}
}

on_both_lanes! {
/// A fleet being upgraded: a site registered by an older kubectl-fleet
/// (its ClusterRole without the lease rule, no lease) stays Connected
/// through status heartbeats, and its edge switches to the lease by
/// itself once the site is registered again.
multi_thread async fn an_older_sites_edge_heartbeats_through_status_until_it_is_registered_again(lane) {
    let (fleet, mut edge) = Fleet::new(lane).await;
    // What an older `register` left: no lease, the two-rule ClusterRole.
    Api::<FederatedClusterLease>::all(fleet.admin.clone())
        .delete("site-a", &Default::default())
        .await
        .unwrap();
    let roles: Api<ClusterRole> = Api::all(fleet.admin.clone());
    let name = rbac::edge_identity_name("site-a");
    let mut role = roles.get(&name).await.unwrap();
    let full = role.rules.clone().unwrap();
    role.rules = Some(full[..2].to_vec());
    roles.replace(&name, &PostParams::default(), &role).await.unwrap();
    wait_until(Duration::from_secs(10), "the lease gone", || async {
        fleet.lease().await.is_none()
    })
    .await;
    fleet.hub.controls().clear_request_log();

    fleet.tick(&mut edge, 0).await;
    // 403 (the role lacks the rule): a status heartbeat instead, this tick.
    let sent = fleet.tick(&mut edge, 1).await;
    assert_eq!(sent["status"]["lastHeartbeatTime"], fleet.at(1), "{sent}");
    assert_eq!(edge.lease_fallback(), Some(Fallback::Forbidden));
    assert_eq!(writes(&fleet.hub, LEASE), (0, 1));
    // The lease is not asked again for a while: status heartbeats only.
    let mut second = 1;
    for _ in 1..LEASE_RETRY_HEARTBEATS {
        second += 1;
        let sent = fleet.tick(&mut edge, second).await;
        assert_eq!(sent["status"]["lastHeartbeatTime"], fleet.at(second), "{sent}");
    }
    assert_eq!(writes(&fleet.hub, LEASE), (0, 1), "one refused renewal, not one per tick");
    assert_eq!(writes(&fleet.hub, STATUS).0, 1 + LEASE_RETRY_HEARTBEATS as usize);
    assert_eq!(edge.stats.heartbeat_only, u64::from(LEASE_RETRY_HEARTBEATS));
    // The hub judges the status heartbeats as it always did.
    let (_lead, lead_rx) = watch::channel(true);
    let sites: Api<FederatedCluster> = Api::all(fleet.admin.clone());
    let judged = Hub::new(sites.clone(), HubConfig::default(), lead_rx)
        .reconcile_site(&fleet.site().await)
        .await
        .unwrap();
    assert_eq!(judged.phase, Phase::Connected);

    // The role gets its rule back, the lease is still missing: 404.
    role.metadata.resource_version = None;
    role.rules = Some(full.clone());
    let live = roles.get(&name).await.unwrap();
    role.metadata.resource_version = live.metadata.resource_version;
    roles.replace(&name, &PostParams::default(), &role).await.unwrap();
    second += 1;
    let sent = fleet.tick(&mut edge, second).await;
    assert!(sent.get("status").is_some(), "{sent}");
    assert_eq!(edge.lease_fallback(), Some(Fallback::NoLease));
    assert_eq!(writes(&fleet.hub, LEASE), (0, 2));

    // Registered again with this version: the lease exists, and the edge
    // switches to it by itself at its next try, without a restart.
    fleet_register(&fleet.hub_kc, "site-a", 30, &fleet.dir.join("again.kubeconfig"), &[]);
    assert!(fleet.lease().await.is_some(), "a re-run creates the missing lease");
    let status_writes = writes(&fleet.hub, STATUS).0;
    for _ in 1..LEASE_RETRY_HEARTBEATS {
        second += 1;
        let sent = fleet.tick(&mut edge, second).await;
        assert!(sent.get("status").is_some(), "{sent}");
    }
    second += 1;
    let sent = fleet.tick(&mut edge, second).await;
    assert_eq!(sent["spec"]["renewTime"], fleet.at(second), "{sent}");
    assert_eq!(edge.lease_fallback(), None);
    assert_eq!(writes(&fleet.hub, LEASE).0, 1);
    assert_eq!(
        writes(&fleet.hub, STATUS).0,
        status_writes + LEASE_RETRY_HEARTBEATS as usize - 1
    );
}
}

on_both_lanes! {
/// An API server that has just started answers 404 for the fleet's API
/// itself for a few seconds: an edge renewing its lease then retries it
/// (a failed report, retried soon) instead of writing its whole status
/// for ten heartbeats, and says the API is not served yet rather than
/// that the CRDs were deleted; only an answer that lasts a minute is
/// taken for a hub whose CRDs lack the lease (status heartbeats) or lack
/// the fleet's API (a person's job, retried slowly).
multi_thread async fn a_starting_api_server_s_404_is_retried_not_taken_for_missing_crds(lane) {
    use kube_sandbox::FaultRule;
    let (fleet, mut edge) = Fleet::new(lane).await;
    fleet.tick(&mut edge, 0).await;
    fleet.tick(&mut edge, 1).await;
    fleet.hub.controls().clear_request_log();
    let unserved = |path: &str, count: u32| FaultRule {
        verb: Some("patch".into()),
        path_contains: Some(path.into()),
        status: 404,
        count,
        ..Default::default()
    };
    let failed = |tick: Tick, second: i64| {
        assert!(tick.sent.is_none(), "tick {second}: {:?}", tick.sent);
        let e = tick.error.unwrap_or_else(|| panic!("tick {second}: no error"));
        (e.cause_name(), e.needs_a_person(), e.to_string())
    };

    // One renewal meets the 404: a failed report, nothing written instead.
    fleet.hub.controls().fail(unserved(LEASE, 1));
    fleet.seconds.store(2, Ordering::SeqCst);
    let (cause, person, line) = failed(edge.tick().await, 2);
    assert_eq!((cause, person), ("not-served-yet", false), "{line}");
    assert!(line.contains("federatedclusterleases") && line.contains("retrying"), "{line}");
    assert!(!line.contains("were deleted;"), "{line}");
    assert_eq!(edge.lease_fallback(), None);
    assert_eq!(writes(&fleet.hub, STATUS), (0, 0), "no status heartbeat instead");
    // The next report tells the hub of the failed one (the dark period,
    // as after any failed report), then the lease is renewed again.
    let sent = fleet.tick(&mut edge, 3).await;
    assert_eq!(
        sent["status"]["lastDarkPeriod"]["entries"][0]["detail"],
        "404: the hub does not serve federatedclusterleases.federation.kubectl-fleet.dev",
        "{sent}"
    );
    let sent = fleet.tick(&mut edge, 4).await;
    assert_eq!(sent["spec"]["renewTime"], fleet.at(4), "{sent}");
    assert_eq!(writes(&fleet.hub, LEASE), (1, 1));
    assert_eq!(writes(&fleet.hub, STATUS), (1, 0));

    // A whole report meets it too: retried soon, as for a starting server.
    fleet.crash_a_workload().await;
    fleet.hub.controls().fail(unserved(STATUS, 1));
    fleet.seconds.store(5, Ordering::SeqCst);
    let (cause, person, line) = failed(edge.tick().await, 5);
    assert_eq!((cause, person), ("not-served-yet", false), "{line}");
    assert!(line.contains("federatedclusters.federation"), "{line}");
    let sent = fleet.tick(&mut edge, 6).await;
    assert_eq!(sent["status"]["signals"][0]["type"], "CrashLoopBackOff", "{sent}");
    fleet.tick(&mut edge, 7).await;

    // The lease API stays unserved (a hub downgraded to CRDs without the
    // lease): retried for a minute, then status heartbeats.
    fleet.hub.controls().fail(unserved(LEASE, 1000));
    fleet.seconds.store(8, Ordering::SeqCst);
    assert_eq!(failed(edge.tick().await, 8).0, "not-served-yet");
    // (The failed report is told in the status, as always.)
    let sent = fleet.tick(&mut edge, 9).await;
    assert!(sent["status"].get("lastDarkPeriod").is_some(), "{sent}");
    fleet.seconds.store(67, Ordering::SeqCst);
    assert_eq!(failed(edge.tick().await, 67).0, "not-served-yet");
    fleet.tick(&mut edge, 67).await;
    fleet.seconds.store(68, Ordering::SeqCst);
    let Tick { sent, error, .. } = edge.tick().await;
    let sent = sent.unwrap_or_else(|| panic!("{error:?}"));
    assert_eq!(sent["status"]["lastHeartbeatTime"], fleet.at(68), "{sent}");
    assert_eq!(edge.lease_fallback(), Some(Fallback::NotServed));

    // Every fleet API unserved for a minute: the CRDs are missing, a
    // person's job.
    fleet.hub.controls().fail(unserved(STATUS, 1000));
    for second in [69, 100, 128] {
        fleet.seconds.store(second, Ordering::SeqCst);
        let (cause, person, _) = failed(edge.tick().await, second);
        assert_eq!((cause, person), ("not-served-yet", false), "at {second}");
    }
    fleet.seconds.store(130, Ordering::SeqCst);
    let (cause, person, line) = failed(edge.tick().await, 130);
    assert_eq!((cause, person), ("crd-missing", true), "{line}");
}
}
