//! Liveness apart from status (issue 35, docs/scaling.md#liveness-apart-from-status):
//! a hub judges a site whose edge renews its `FederatedClusterLease` and a
//! site whose (older) edge heartbeats through its status alike, in one
//! fleet; a renewal costs the hub no status write; a site whose lease
//! stops goes Stale as a silent one does; `kubectl fleet status` and
//! `describe` show the lease's renewal as the heartbeat; and an API server
//! that restarts or hangs over a fleet that renews leases turns no live
//! site Stale.

use crate::support;

use std::time::Duration;

use kube::api::{Api, Patch, PatchParams, PostParams};
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{
    Environment, FederatedCluster, FederatedClusterLease, FederatedClusterLeaseSpec, Phase, Renewal,
};
use kubectl_fleet::k8s::site_lease::{renew_site_lease, site_leases};
use serde_json::json;
use support::*;

async fn phase(api: &Api<FederatedCluster>, site: &str) -> Option<Phase> {
    api.get(site).await.ok().and_then(|s| s.phase())
}

/// An API server (kube-sandbox) with the fleet CRDs and the hub's
/// namespace, and its admin client.
async fn hub_cluster() -> (Sandbox, kube::Client) {
    let sb = Sandbox::start();
    let client = admin(&sb).await;
    install_crds(&client).await;
    ensure_namespace(&client, "fleet-system").await;
    (sb, client)
}

/// `site`'s lease as `register` creates it (an empty spec; no labels here).
async fn create_lease(leases: &Api<FederatedClusterLease>, site: &str) {
    let mut lease = FederatedClusterLease::new(site, FederatedClusterLeaseSpec::default());
    lease.metadata.labels = None;
    leases.create(&PostParams::default(), &lease).await.unwrap();
}

/// A lone hub (I scaled by 0.3) over `client`'s sites, and a task
/// renewing the leases of `renewing` (created here) ([`keep_renewing`]).
async fn renewing_fleet(
    sb: &Sandbox,
    client: &kube::Client,
    renewing: &[&'static str],
    name: &str,
) -> (
    Api<FederatedCluster>,
    Proc,
    tokio::task::JoinHandle<()>,
    TempDir,
) {
    let leases = site_leases(client.clone());
    for site in renewing {
        create_lease(&leases, site).await;
    }
    let dir = TempDir::new(name);
    let kc = dir.join("admin.kubeconfig");
    sb.write_admin_kubeconfig(&kc).unwrap();
    let (hub, _ca) = support::spawn_lone_hub(&kc, &dir, "hub-1", 0.3);
    let beating = keep_renewing(leases, renewing);
    (Api::all(client.clone()), hub, beating, dir)
}

/// A task renewing the leases of `renewing` every ½ s as their edges
/// would, on through an API server's restart or hang: a failed renewal is
/// tried again, one the server holds is given up after 1 s (an edge's
/// request timeout).
fn keep_renewing(
    leases: Api<FederatedClusterLease>,
    renewing: &[&'static str],
) -> tokio::task::JoinHandle<()> {
    let renewing = renewing.to_vec();
    tokio::spawn(async move {
        loop {
            for site in &renewing {
                let now = jiff::Timestamp::now();
                let renewal = Renewal {
                    renew_time: Some(jiff::Timestamp::from_second(now.as_second()).unwrap()),
                    duration_ms: Some(25),
                };
                let renew = renew_site_lease(&leases, site, renewal);
                let _ = tokio::time::timeout(Duration::from_secs(1), renew).await;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    })
}

/// When the hub last recorded a full judgement (None: no record, or the
/// API server did not answer).
async fn judged_at(records: &Api<kubectl_fleet::api::FederationStatus>) -> Option<jiff::Timestamp> {
    records
        .get_opt("fleet")
        .await
        .ok()
        .flatten()
        .and_then(|f| f.status?.hub)
        .map(|h| h.last_judgement_time.0)
}

/// Waits (30 s at most) until each of `sites` is Connected and the hub
/// has recorded a full judgement.
async fn connected_and_recorded(
    api: &Api<FederatedCluster>,
    records: &Api<kubectl_fleet::api::FederationStatus>,
    sites: &[&str],
) {
    wait_until(
        Duration::from_secs(30),
        "the sites Connected, a judgement recorded",
        || async {
            for site in sites {
                if phase(api, site).await != Some(Phase::Connected) {
                    return false;
                }
            }
            judged_at(records).await.is_some()
        },
    )
    .await;
}

/// This release's edge's heartbeat: a renewal of the site's lease.
async fn renew(leases: &Api<FederatedClusterLease>, site: &str) {
    let now = jiff::Timestamp::now();
    let now = jiff::Timestamp::from_second(now.as_second()).unwrap();
    renew_site_lease(
        leases,
        site,
        Renewal {
            renew_time: Some(now),
            duration_ms: Some(25),
        },
    )
    .await
    .unwrap();
}

fn status_writes(sb: &Sandbox, site: &str) -> usize {
    sb.controls()
        .request_log()
        .into_iter()
        .filter(|r| {
            r.path
                .ends_with(&format!("/federatedclusters/{site}/status"))
                && matches!(r.verb.as_str(), "update" | "patch")
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lease_and_status_heartbeats_are_judged_alike_in_one_fleet() {
    let (sb, client) = hub_cluster().await;
    for site in ["leased", "older"] {
        create_site(&client, site, 10, Environment::Production).await;
    }
    let leases = site_leases(client.clone());
    let mut lease = FederatedClusterLease::new("leased", FederatedClusterLeaseSpec::default());
    lease.metadata.labels = None;
    leases.create(&PostParams::default(), &lease).await.unwrap();
    // The leased site's status was written once, long ago, by its edge.
    let api: Api<FederatedCluster> = Api::all(client.clone());
    api.patch_status(
        "leased",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"lastHeartbeatTime": "2026-01-01T00:00:00Z"}})),
    )
    .await
    .unwrap();
    let dir = TempDir::new("leases");
    let kc = dir.join("admin.kubeconfig");
    sb.write_admin_kubeconfig(&kc).unwrap();
    // I = 10 s scaled by 0.3: Stale after 9 s of silence (the renew times
    // are whole seconds, as the edge writes them: a shorter interval would
    // leave a loaded machine little room).
    let (hub, ca) = support::spawn_lone_hub(&kc, &dir, "hub-1", 0.3);

    // Both heartbeat, each its own way, every ½ interval.
    let beat = |stop: std::time::Instant| {
        let (api, leases) = (api.clone(), leases.clone());
        async move {
            while std::time::Instant::now() < stop {
                renew(&leases, "leased").await;
                status_heartbeat(&api, "older").await;
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    };
    let beating = tokio::spawn(beat(std::time::Instant::now() + Duration::from_secs(120)));
    // Judged: Connected, and the edge clock compared with the hub's (the
    // hub's second write of a new site, the ClockSkew condition).
    let settled = |site: &'static str| {
        let api = api.clone();
        async move {
            let Ok(s) = api.get(site).await else {
                return false;
            };
            s.phase() == Some(Phase::Connected)
                && s.status
                    .as_ref()
                    .and_then(|st| st.condition("ClockSkew"))
                    .is_some()
        }
    };
    wait_until(
        Duration::from_secs(30),
        "both sites Connected and judged",
        || async { settled("leased").await && settled("older").await },
    )
    .await;
    // More than a Stale threshold (9 s) passes: both stay Connected, and
    // the hub writes neither site's status meanwhile.
    let writes = (status_writes(&sb, "leased"), status_writes(&sb, "older"));
    for _ in 0..24 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(phase(&api, "leased").await, Some(Phase::Connected));
        assert_eq!(phase(&api, "older").await, Some(Phase::Connected));
    }
    let after = status_writes(&sb, "leased");
    if after != writes.0 {
        let site = api.get("leased").await.unwrap();
        panic!(
            "the hub wrote the leased site's status while it renewed: {} writes, was {}\n{}\nhub log:\n{}",
            after,
            writes.0,
            serde_json::to_string_pretty(&site.status).unwrap(),
            hub.log_text()
        );
    }

    // The CLI shows the lease's renewal as the leased site's heartbeat.
    let out = kubectl_fleet(&kc, &["status", "-o", "json"]);
    let report: serde_json::Value = serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap();
    let leased = report["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "leased")
        .unwrap()
        .clone();
    let age = leased["lastHeartbeatAgeSeconds"].as_i64().unwrap();
    assert!(age <= 5, "the status's old heartbeat was shown: {leased}");
    let described = kubectl_fleet(&kc, &["describe", "leased"]);
    assert!(!described.contains("2026-01-01T00:00:00Z"), "{described}");

    // The leased site's edge stops renewing (the older one goes on): it
    // goes Stale as a silent site does, the other stays Connected.
    beating.abort();
    let silent_from = std::time::Instant::now();
    let beating = tokio::spawn({
        let api = api.clone();
        async move {
            loop {
                status_heartbeat(&api, "older").await;
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    });
    wait_until(Duration::from_secs(20), "the leased site Stale", || async {
        phase(&api, "leased").await == Some(Phase::Stale)
    })
    .await;
    // 3 s after the hub saw the renew time last move: renewals are whole
    // seconds (as the edge writes them), so the last one that moved it was
    // up to 1 s, plus the ½ s between renewals, before they stopped.
    let silent_for = silent_from.elapsed();
    assert!(
        silent_for >= Duration::from_millis(1500),
        "Stale too early: {silent_for:?}"
    );
    assert_eq!(phase(&api, "older").await, Some(Phase::Connected));
    // A renewal brings it back.
    renew(&leases, "leased").await;
    wait_until(
        Duration::from_secs(10),
        "the leased site Connected again",
        || async { phase(&api, "leased").await == Some(Phase::Connected) },
    )
    .await;
    beating.abort();

    // The hub counted both kinds of heartbeat.
    let addr = support::logged_addr(&hub.log_text(), "serving HTTPS");
    let reader = support::reader_token(&client).await;
    let (code, body) = support::https_get(&addr, "/metrics", Some(&reader), &ca).await;
    assert_eq!(code, 200, "{body}");
    let scrape = support::Scrape::parse(&body);
    for via in ["lease", "status"] {
        let n = scrape
            .value("fleet_hub_heartbeats_total", &[("via", via)])
            .unwrap_or_else(|| panic!("no fleet_hub_heartbeats_total{{via={via}}}: {body}"));
        assert!(n >= 5.0, "{via}: {n}");
    }
    drop(hub);
}

/// An API server restart (every connection dropped for a moment, then
/// `410 Gone` for every watch from before it) over a fleet whose edges
/// renew leases and whose statuses do not change: the hub's site watch
/// lists again and holds nothing new, yet that list is the fleet as it is
/// now. The hub judges again from it (a liveness record), rather than
/// staying blind until some site's status changes, and the renewing site
/// stays Connected throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_server_restart_over_a_quiet_fleet_is_judged_from_the_new_list() {
    let (sb, client) = hub_cluster().await;
    create_site(&client, "quiet", 10, Environment::Production).await;
    let (api, hub, beating, _dir) = renewing_fleet(&sb, &client, &["quiet"], "restart").await;
    let records: Api<kubectl_fleet::api::FederationStatus> = Api::all(client.clone());
    let judged_at = || judged_at(&records);
    connected_and_recorded(&api, &records, &["quiet"]).await;
    let transitioned = api.get("quiet").await.unwrap().status.unwrap();

    let restarted = jiff::Timestamp::now();
    sb.controls().clear_request_log();
    sb.restart(Duration::from_millis(500));
    wait_until(
        Duration::from_secs(45),
        "a liveness record judging after the restart",
        || async {
            judged_at()
                .await
                .is_some_and(|t| t > restarted + jiff::SignedDuration::from_secs(2))
        },
    )
    .await;
    let log = hub.log_text();
    assert!(log.contains("lost the site watch"), "{log}");
    assert!(log.contains("the site watch delivers again"), "{log}");
    let relisted = sb.controls().request_log().iter().any(|r| {
        r.verb == "watch"
            && r.path.ends_with("/federatedclusters")
            && r.query.contains("sendInitialEvents=true")
            && r.status == 200
    });
    assert!(relisted, "the hub listed the sites again");
    let after = api.get("quiet").await.unwrap().status.unwrap();
    assert_eq!(after.phase, Some(Phase::Connected));
    assert_eq!(
        after.phase_transition_time, transitioned.phase_transition_time,
        "the renewing site left Connected"
    );
    beating.abort();
    drop(hub);
}

/// The hub's API server hangs (a stopped process, a network path that
/// drops packets: connections neither refused nor closed, no answer, no
/// watch event) for 20 s, about 7 intervals, over two sites renewing
/// leases and one silent site. No watch breaks, so nothing tells the hub
/// it went blind but the silence itself: a transition it judges after
/// its watches said nothing for 5 s is judged again from a fresh read
/// first, and a read that gets no answer makes the hub blind from its
/// watches' last event. The live sites never leave Connected (judged
/// from the dead silence, they were written Stale once the server moved
/// again, then Connected), while the silent site still goes Stale after
/// the hang (the hub judges again), and the hub records a judgement again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_api_server_turns_no_renewing_site_stale() {
    const HANG: Duration = Duration::from_secs(20);
    let (sb, client) = hub_cluster().await;
    let live = ["live-1", "live-2"];
    for site in live.iter().chain(&["silent"]) {
        // I = 10 s scaled by 0.3: Stale after 9 s of silence.
        create_site(&client, site, 10, Environment::Production).await;
    }
    let (api, hub, beating, _dir) = renewing_fleet(&sb, &client, &live, "hung").await;
    let records: Api<kubectl_fleet::api::FederationStatus> = Api::all(client.clone());
    let judged_at = || judged_at(&records);
    connected_and_recorded(&api, &records, &live).await;
    // The silent site's one heartbeat: it falls due during the hang.
    let beat = json!({"status": {"lastHeartbeatTime": jiff::Timestamp::now().to_string()}});
    api.patch_status("silent", &PatchParams::default(), &Patch::Merge(&beat))
        .await
        .unwrap();
    wait_until(
        Duration::from_secs(10),
        "the silent site Connected",
        || async { phase(&api, "silent").await == Some(Phase::Connected) },
    )
    .await;
    let mut before = Vec::new();
    for site in live {
        before.push(
            api.get(site)
                .await
                .unwrap()
                .status
                .unwrap()
                .phase_transition_time,
        );
    }

    sb.controls().set_hung(true);
    tokio::time::sleep(HANG).await;
    let let_go = jiff::Timestamp::now();
    sb.controls().set_hung(false);
    wait_until(
        Duration::from_secs(60),
        "the silent site Stale and a liveness record after the hang",
        || async {
            phase(&api, "silent").await == Some(Phase::Stale)
                && judged_at().await.is_some_and(|t| t > let_go)
        },
    )
    .await;
    // Long enough for a Stale write that waited out the hang to land.
    tokio::time::sleep(Duration::from_secs(3)).await;
    for (site, before) in live.iter().zip(before) {
        let after = api.get(site).await.unwrap().status.unwrap();
        assert_eq!(
            after.phase,
            Some(Phase::Connected),
            "{site}\n{}",
            hub.log_text()
        );
        assert_eq!(
            after.phase_transition_time,
            before,
            "{site} left Connected during the hang\n{}",
            hub.log_text()
        );
    }
    let log = hub.log_text();
    assert!(log.contains("the API server does not answer"), "{log}");
    assert!(
        !log.contains("lost the site watch"),
        "the hang broke a watch: the test saw an outage, not a hang\n{log}"
    );
    beating.abort();
    drop(hub);
}

/// The API server stops answering the fleet's API (503, as a proxy whose
/// server died answers) while the hub's watches stay open and silent,
/// shorter than a site's three intervals, so no transition falls due
/// during it and the hub reads nothing afresh; the site's edge, which
/// could not report either, renews a moment after the site would have
/// turned Stale counting the outage. The hub asks whether the API server
/// answers once its watches are quiet, is blind from their last event,
/// and does not count that time against the site.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_behind_silent_watches_is_not_counted_against_a_site() {
    let (sb, client) = hub_cluster().await;
    // I = 10 s and 20 s, scaled by 0.3: "held" turns Stale after 18 s.
    create_site(&client, "busy", 10, Environment::Production).await;
    create_site(&client, "held", 20, Environment::Production).await;
    let leases = site_leases(client.clone());
    create_lease(&leases, "held").await;
    renew(&leases, "held").await;
    let (api, hub, beating, _dir) = renewing_fleet(&sb, &client, &["busy"], "silent-watch").await;
    wait_until(Duration::from_secs(30), "both sites Connected", || async {
        phase(&api, "busy").await == Some(Phase::Connected)
            && phase(&api, "held").await == Some(Phase::Connected)
    })
    .await;
    // Stay Connected through a few of held's renewals first.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_secs(2)).await;
        renew(&leases, "held").await;
    }
    let since = api
        .get("held")
        .await
        .unwrap()
        .status
        .unwrap()
        .phase_transition_time;
    renew(&leases, "held").await;
    let renewed = std::time::Instant::now();
    sb.controls().fail(kube_sandbox::FaultRule {
        path_contains: Some("/apis/federation.kubectl-fleet.dev/".into()),
        status: 503,
        count: u32::MAX,
        ..Default::default()
    });
    tokio::time::sleep(Duration::from_secs(12)).await;
    sb.controls().clear_faults();
    // held's edge reports a second after it would have turned Stale.
    tokio::time::sleep(Duration::from_secs(19).saturating_sub(renewed.elapsed())).await;
    renew(&leases, "held").await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let after = api.get("held").await.unwrap().status.unwrap();
    let log = hub.log_text();
    assert_eq!(after.phase, Some(Phase::Connected), "{log}");
    assert_eq!(
        after.phase_transition_time, since,
        "held left Connected\n{log}"
    );
    assert!(log.contains("the API server does not answer"), "{log}");
    beating.abort();
    drop(hub);
}

/// Refuses the hub's site watch (every watch of sites answered `429`, as
/// a restarted API server answers while it rebuilds its watch cache of
/// every site: ~2.5 minutes at 100,000 sites, where the leases' list was
/// back after 8 s) and restarts the API server; returns when.
fn restart_refusing_the_site_list(sb: &Sandbox) -> jiff::Timestamp {
    sb.controls().fail(kube_sandbox::FaultRule {
        verb: Some("watch".into()),
        path_contains: Some("/federatedclusters".into()),
        status: 429,
        count: u32::MAX,
        ..Default::default()
    });
    let restarted = jiff::Timestamp::now();
    sb.controls().clear_request_log();
    sb.restart(Duration::from_millis(500));
    restarted
}

/// Whether the API server served a watch of sites since the request log
/// was last cleared.
fn site_watch_served(sb: &Sandbox) -> bool {
    sb.controls()
        .request_log()
        .iter()
        .any(|r| r.verb == "watch" && r.path.ends_with("/federatedclusters") && r.status == 200)
}

/// An API server restart whose site list comes back late (the real API
/// server rebuilds its watch cache of every site before it serves a watch
/// of them again) over a fleet whose every site renews a lease: the hub
/// judges from the leases as soon as it has listed them again. While its
/// site watch is still refused it records a judgement, writes Stale a
/// site whose renewals stopped, and leaves the renewing site Connected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_restart_a_fleet_that_renews_leases_is_judged_before_its_site_list_is_back() {
    let (sb, client) = hub_cluster().await;
    for site in ["steady", "fading"] {
        // I = 10 s scaled by 0.3: Stale after 9 s of silence.
        create_site(&client, site, 10, Environment::Production).await;
    }
    let leases = site_leases(client.clone());
    create_lease(&leases, "fading").await;
    let (api, hub, beating, _dir) = renewing_fleet(&sb, &client, &["steady"], "leases-first").await;
    let fading = keep_renewing(leases, &["fading"]);
    let records: Api<kubectl_fleet::api::FederationStatus> = Api::all(client.clone());
    let judged_at = || judged_at(&records);
    connected_and_recorded(&api, &records, &["steady", "fading"]).await;
    let transitioned = api.get("steady").await.unwrap().status.unwrap();

    let restarted = restart_refusing_the_site_list(&sb);
    wait_until(
        Duration::from_secs(20),
        "a liveness record judging after the restart",
        || async {
            judged_at()
                .await
                .is_some_and(|t| t > restarted + jiff::SignedDuration::from_secs(2))
        },
    )
    .await;
    assert!(!site_watch_served(&sb), "the site list was served");
    let log = hub.log_text();
    assert!(log.contains("judging from them"), "{log}");

    // The fading site's edge stops renewing: Stale, judged from leases.
    fading.abort();
    wait_until(Duration::from_secs(30), "the fading site Stale", || async {
        phase(&api, "fading").await == Some(Phase::Stale)
    })
    .await;
    assert!(!site_watch_served(&sb), "the site list was served");
    let after = api.get("steady").await.unwrap().status.unwrap();
    assert_eq!(after.phase, Some(Phase::Connected));
    assert_eq!(
        after.phase_transition_time,
        transitioned.phase_transition_time,
        "the renewing site left Connected\n{}",
        hub.log_text()
    );
    beating.abort();
    drop(hub);
}

/// The same restart over a fleet with a site whose (older) edge
/// heartbeats through its status: only the site watch brings its
/// heartbeats, so the hub records no judgement until its site watch is
/// back, and then at once; both sites stay Connected throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_without_a_lease_holds_the_record_until_the_site_list_is_back() {
    let (sb, client) = hub_cluster().await;
    for site in ["leased", "older"] {
        create_site(&client, site, 10, Environment::Production).await;
    }
    let (api, hub, beating, _dir) = renewing_fleet(&sb, &client, &["leased"], "no-lease").await;
    let older = tokio::spawn({
        let api = api.clone();
        async move {
            loop {
                // As `status_heartbeat`, a failure tried again.
                let now = jiff::Timestamp::now().to_string();
                let beat = Patch::Merge(json!({"status": {"lastHeartbeatTime": now}}));
                let pp = PatchParams::default();
                let _ = tokio::time::timeout(
                    Duration::from_secs(1),
                    api.patch_status("older", &pp, &beat),
                )
                .await;
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    });
    let records: Api<kubectl_fleet::api::FederationStatus> = Api::all(client.clone());
    let judged_at = || judged_at(&records);
    connected_and_recorded(&api, &records, &["leased", "older"]).await;
    let before = [
        api.get("leased").await.unwrap().status.unwrap(),
        api.get("older").await.unwrap().status.unwrap(),
    ];

    let restarted = restart_refusing_the_site_list(&sb);
    let recorded_after = |t: Option<jiff::Timestamp>| {
        t.is_some_and(|t| t > restarted + jiff::SignedDuration::from_secs(2))
    };
    // More than a Stale threshold (9 s) with the site list refused.
    for _ in 0..24 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(
            !recorded_after(judged_at().await),
            "recorded a judgement of a site whose heartbeats it could not see\n{}",
            hub.log_text()
        );
    }
    assert!(!site_watch_served(&sb), "the site list was served");
    sb.controls().clear_faults();
    wait_until(
        Duration::from_secs(20),
        "a liveness record once the site list is back",
        || async { recorded_after(judged_at().await) },
    )
    .await;
    for (site, before) in ["leased", "older"].iter().zip(before) {
        let after = api.get(site).await.unwrap().status.unwrap();
        assert_eq!(after.phase, Some(Phase::Connected), "{site}");
        assert_eq!(
            after.phase_transition_time,
            before.phase_transition_time,
            "{site} left Connected\n{}",
            hub.log_text()
        );
    }
    older.abort();
    beating.abort();
    drop(hub);
}

/// The API server answers 503 to every request for 45 s (a load balancer
/// whose backends are down; not a hang, not refused connections): once it
/// serves again, the hub records a judgement within a liveness period and
/// a few seconds, not when a request it kept retrying inside the client
/// (kube's default: backing off to over a minute) happens to be tried
/// again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_503_outage_the_hub_records_its_judgement_again_at_once() {
    let (sb, client) = hub_cluster().await;
    // I = 10 s scaled by 0.3: a liveness period of 4.5 s.
    create_site(&client, "steady", 10, Environment::Production).await;
    let (api, hub, beating, _dir) = renewing_fleet(&sb, &client, &["steady"], "after-503").await;
    let records: Api<kubectl_fleet::api::FederationStatus> = Api::all(client.clone());
    connected_and_recorded(&api, &records, &["steady"]).await;
    sb.controls().fail(kube_sandbox::FaultRule {
        status: 503,
        count: u32::MAX,
        ..Default::default()
    });
    tokio::time::sleep(Duration::from_secs(45)).await;
    sb.controls().clear_faults();
    let served = jiff::Timestamp::now();
    let started = std::time::Instant::now();
    wait_until(
        Duration::from_secs(120),
        "a liveness record after the outage",
        || async { judged_at(&records).await.is_some_and(|t| t > served) },
    )
    .await;
    let took = started.elapsed();
    println!("record {took:?} after the API server served again");
    assert!(
        took < Duration::from_secs(12),
        "the record came {took:?} after the API server served again\n{}",
        hub.log_text()
    );
    beating.abort();
    drop(hub);
}
