//! What every view shows stays true: the hub's liveness is part
//! of the fleet state, a site cannot forge the hub's judgement, and a mode
//! switch leaves nothing of the old mode. Through real processes and the
//! real `kubectl` where a user meets it, against kube-sandbox with the
//! fleet CRDs only (no admission policy installed), sites heartbeating with
//! nothing but their own tokens:
//!
//! - no hub ever ran: `kubectl fleet status` says no hub has ever judged;
//! - the hub process is killed with an edge: `status` warns within the
//!   record's threshold and the dead site is not shown green;
//! - the hub's watch is down: it stops recording judgements, and records
//!   again once it sees;
//! - a site token rewrites hub-owned conditions: the hub restores them;
//! - Pull → Push → Pull: no condition of the old mode stays.

use crate::support;

use std::time::{Duration, Instant};

use kube::api::{Api, Patch, PatchParams};
use kubectl_fleet::api::{FederatedCluster, FederationStatus, HubLiveness, Phase};
use serde_json::{Value, json};
use support::{Hub, Kubectl, Run, Table, client_from_yaml, hub_operator_args, shell};
use support::{Proc, hub_args, operator_bin, seed_member, wait_until};

/// `heartbeatIntervalSeconds` of every site here.
const INTERVAL: &str = "10";

/// `kubectl fleet ARGS…` through the real kubectl.
fn kubectl_fleet(hub: &Hub, args: &str) -> Run {
    Kubectl::new(&hub.kubeconfig)
        .arg("fleet")
        .args(args.split_whitespace())
        .run()
}

/// The namespace the hub operator runs in, where it keeps its leader
/// Lease (`install` creates it; these hubs have the CRDs only, and
/// `register` creates only the sites' namespace).
fn operator_namespace(hub: &Hub) {
    shell(
        hub,
        &format!(
            "kubectl create namespace {}",
            kubectl_fleet::fleet::rbac::FLEET_NAMESPACE
        ),
    )
    .ok();
}

/// A site's API as its own token sees it.
async fn site_api(hub: &Hub, site: &str) -> Api<FederatedCluster> {
    let registered = hub.register(site, &["--heartbeat-interval", INTERVAL]);
    Api::all(client_from_yaml(registered["config"].as_str().unwrap()).await)
}

async fn heartbeat(api: &Api<FederatedCluster>, site: &str) {
    let now = jiff::Timestamp::now().to_string();
    api.patch_status(
        site,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"lastHeartbeatTime": now}})),
    )
    .await
    .unwrap();
}

/// Heartbeats `site` with its own token every second until dropped.
struct Heartbeats(tokio::task::JoinHandle<()>);

impl Heartbeats {
    fn start(api: Api<FederatedCluster>, site: &'static str) -> Self {
        Heartbeats(tokio::spawn(async move {
            loop {
                heartbeat(&api, site).await;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }))
    }
}

impl Drop for Heartbeats {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn phase(api: &Api<FederatedCluster>, site: &str) -> Option<Phase> {
    api.get(site).await.ok()?.phase()
}

async fn hub_record(hub: &Hub) -> Option<HubLiveness> {
    let api: Api<FederationStatus> = Api::all(hub.admin().await);
    api.get_opt("fleet").await.unwrap()?.status?.hub
}

/// The PHASE cell of `site`'s row.
fn phase_cell(table: &str, site: &str) -> String {
    Table::find(table, "NAME ").cell(site, "PHASE").to_owned()
}

fn site_json<'a>(report: &'a Value, site: &str) -> &'a Value {
    report["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == site)
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_hub_ever_status_says_nobody_judges() {
    let hub = Hub::new();
    let api = site_api(&hub, "site-a").await;
    heartbeat(&api, "site-a").await;
    // The CRDs are installed but no operator runs (its image could not be
    // pulled): the heartbeating site is Pending, and the views say why.
    let status = kubectl_fleet(&hub, "status").ok();
    assert_eq!(phase_cell(&status.stdout, "site-a"), "Pending?");
    assert!(
        status
            .stderr
            .starts_with("warning: no hub has ever judged this fleet"),
        "{}",
        status.stderr
    );
    assert_eq!(status.stderr.lines().count(), 1, "{}", status.stderr);
    assert!(
        status
            .stdout
            .contains("? 1 site(s): no hub has judged the phase shown"),
        "{}",
        status.stdout
    );
    let run = kubectl_fleet(&hub, "status -o json").ok();
    assert_eq!(run.stderr, "", "JSON says it in a field");
    let report = run.json();
    assert_eq!(report["summary"]["hub"]["state"], "NeverJudged");
    assert_eq!(report["summary"]["hub"]["judging"], false);
    let site = site_json(&report, "site-a");
    assert_eq!(
        (&site["phase"], &site["phaseJudgedByHub"], &site["hubPhase"]),
        (&json!("Pending"), &json!(false), &Value::Null)
    );
    let describe = kubectl_fleet(&hub, "describe site-a").ok();
    assert!(
        describe
            .stdout
            .contains("Phase:              Pending? (no hub has judged this site)"),
        "{}",
        describe.stdout
    );
    assert!(
        describe
            .stdout
            .contains("Hub:                NONE: no hub has ever judged this fleet"),
        "{}",
        describe.stdout
    );
    assert!(describe.stderr.contains("no hub has ever judged"));
    let incidents = kubectl_fleet(&hub, "incidents").ok();
    assert!(
        incidents
            .stderr
            .contains("no hub has ever judged this fleet"),
        "{}",
        incidents.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_hub_is_reported_and_its_dead_sites_are_not_shown_green() {
    let hub = Hub::new();
    operator_namespace(&hub);
    let alive = site_api(&hub, "alive").await;
    let dead = site_api(&hub, "dead").await;
    let _alive = Heartbeats::start(alive, "alive");
    let dead_beats = Heartbeats::start(dead, "dead");
    // A real hub process: I = 10 s scaled by 0.1 (Connected while heard
    // from within 3 s); it records its liveness every 1.5 s as
    // `intervalSeconds: 2`, so readers call it silent 6 s after its last
    // full judgement.
    let log = hub.dir.path().join("hub.log");
    let mut operator = Proc::spawn(
        "hub",
        &operator_bin(),
        &hub_args(&hub.kubeconfig, "hub-a", 0.1),
        log.clone(),
    );
    let admin: Api<FederatedCluster> = Api::all(hub.admin().await);
    wait_until(Duration::from_secs(30), "both Connected", || async {
        phase(&admin, "alive").await == Some(Phase::Connected)
            && phase(&admin, "dead").await == Some(Phase::Connected)
    })
    .await;
    wait_until(Duration::from_secs(15), "a liveness record", || async {
        hub_record(&hub).await.is_some()
    })
    .await;
    let record = hub_record(&hub).await.unwrap();
    assert_eq!(record.leader, "hub-a");
    assert_eq!(record.interval_seconds, 2);
    assert!(record.leader_since.is_some());

    // A judging hub: green, no warning, the record in the report.
    let status = kubectl_fleet(&hub, "status").ok();
    assert_eq!(status.stderr, "", "{}", status.stderr);
    assert_eq!(phase_cell(&status.stdout, "dead"), "Connected");
    let report = kubectl_fleet(&hub, "status -o json").ok().json();
    assert_eq!(report["summary"]["hub"]["state"], "Judging");
    assert_eq!(report["summary"]["hub"]["leader"], "hub-a");
    assert_eq!(report["summary"]["hub"]["intervalSeconds"], 2);
    // The summary write and the liveness write leave each other alone.
    let fs: Api<FederationStatus> = Api::all(hub.admin().await);
    let held = fs.get("fleet").await.unwrap().status.unwrap();
    assert_eq!(held.total_clusters, 2);
    assert!(held.hub.is_some());
    // One record write per period, whatever the fleet's size.
    let controls = hub.sandbox.controls();
    controls.clear_request_log();
    tokio::time::sleep(Duration::from_secs(6)).await;
    let record_writes = controls
        .request_log()
        .iter()
        .filter(|r| r.verb == "patch" && r.path.ends_with("federationstatuses/fleet/status"))
        .count();
    assert!(
        (2..=6).contains(&record_writes),
        "{record_writes} liveness writes in 6 s at one per 1.5 s"
    );

    // The hub process dies, and an edge with it.
    operator.kill();
    drop(dead_beats);
    let killed = Instant::now();
    let mut warned_after = None;
    let mut shown_stale_after = None;
    while shown_stale_after.is_none() {
        assert!(
            killed.elapsed() < Duration::from_secs(60),
            "the dead site never stopped being shown Connected"
        );
        let status = kubectl_fleet(&hub, "status").ok();
        if warned_after.is_none()
            && status
                .stderr
                .starts_with("warning: no hub has judged this fleet for ")
        {
            warned_after = Some(killed.elapsed());
        }
        // Never green past the dead site's Unreachable age, and past 3·I
        // while no hub judges: Stale, marked as no hub's judgement.
        let dead = phase_cell(&status.stdout, "dead");
        if dead != "Connected" {
            assert_eq!(dead, "Stale?", "{}", status.stdout);
            assert!(warned_after.is_some(), "{}", status.stderr);
            shown_stale_after = Some(killed.elapsed());
        }
        assert_eq!(
            phase_cell(&status.stdout, "alive"),
            "Connected",
            "a site still heartbeating stays Connected:\n{}",
            status.stdout
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let warned_after = warned_after.unwrap();
    assert!(
        warned_after <= Duration::from_secs(10),
        "warned {warned_after:?} after the hub stopped (threshold 6 s after its last judgement)"
    );
    // 3·I = 30 s after the dead site's last heartbeat (the hub had left it
    // Connected), within the CLI's polling.
    let shown_stale_after = shown_stale_after.unwrap();
    assert!(
        (Duration::from_secs(28)..Duration::from_secs(40)).contains(&shown_stale_after),
        "{shown_stale_after:?}"
    );
    let report = kubectl_fleet(&hub, "status -o json").ok().json();
    assert_eq!(report["summary"]["hub"]["state"], "Silent");
    assert_eq!(report["summary"]["hub"]["judging"], false);
    let dead = site_json(&report, "dead");
    assert_eq!(
        (&dead["phase"], &dead["phaseJudgedByHub"], &dead["hubPhase"]),
        (&json!("Stale"), &json!(false), &json!("Connected"))
    );
    assert_eq!(report["summary"]["phases"]["connected"], 1);
    let describe = kubectl_fleet(&hub, "describe dead").ok();
    assert!(
        describe.stdout.contains("Phase:              Stale? (implied by the heartbeat's age: no hub has judged it since; the hub last wrote Connected"),
        "{}",
        describe.stdout
    );
    assert!(
        describe
            .stdout
            .contains("Hub:                SILENT: no hub has judged the fleet for")
    );
    assert!(
        describe
            .stderr
            .starts_with("warning: no hub has judged this fleet")
    );
    let incidents = kubectl_fleet(&hub, "incidents -o json").ok();
    assert_eq!(incidents.json()["hub"]["state"], "Silent");
    assert_eq!(incidents.stderr, "", "JSON says it in a field");
    let incidents = kubectl_fleet(&hub, "incidents").ok();
    assert!(
        incidents
            .stderr
            .starts_with("warning: no hub has judged this fleet")
    );
}

/// Writes what a live hub leader would hold at `at` on the API server's
/// clock: its liveness record (judged 2 s before, every 15 s), and each
/// site `Connected` with its last heartbeat `secs` before.
async fn a_live_hub_judged(hub: &Hub, at: jiff::Timestamp, sites: &[(&str, i64)]) {
    let admin = hub.admin().await;
    let fs: Api<FederationStatus> = Api::all(admin.clone());
    if fs.get_opt("fleet").await.unwrap().is_none() {
        let fleet: FederationStatus = serde_json::from_value(json!({
            "apiVersion": "federation.kubectl-fleet.dev/v1alpha1",
            "kind": "FederationStatus",
            "metadata": {"name": "fleet"},
        }))
        .unwrap();
        fs.create(&Default::default(), &fleet).await.unwrap();
    }
    let ago = |secs: i64| (at - jiff::SignedDuration::from_secs(secs)).to_string();
    fs.patch_status(
        "fleet",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"hub": {
            "leader": "hub-a",
            "leaderSince": ago(3600),
            "lastJudgementTime": ago(2),
            "intervalSeconds": 15,
        }}})),
    )
    .await
    .unwrap();
    let api: Api<FederatedCluster> = Api::all(admin);
    for (site, secs) in sites {
        api.patch_status(
            site,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {
                "phase": "Connected",
                "phaseTransitionTime": ago(3600),
                "lastHeartbeatTime": ago(*secs),
            }})),
        )
        .await
        .unwrap();
    }
}

/// A workstation whose clock runs ahead of the API server's (here the
/// sandbox dates its answers 45 s, then 12 intervals, behind this
/// machine's clock) sees a live hub as live and a live site as the hub
/// judged it — no "no hub" warning, no `Stale?` or `Unreachable?` — since
/// views judge ages on the server's clock. And a site whose edge died with
/// the hub that last judged it `Connected` is shown `Stale?` once its
/// heartbeat is older than its Stale threshold plus one judgement period,
/// even while the hub's record still counts as live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ages_are_judged_on_the_api_servers_clock_and_no_dead_site_stays_green() {
    let hub = Hub::new();
    // I = 10 s: a live view calls Connected up to 85 s (max(3·I, I + the
    // 60 s clock tolerance) + 15 s).
    for site in ["live", "dead"] {
        site_api(&hub, site).await;
    }
    for fast_by in [45, 120] {
        hub.sandbox.controls().set_date_offset(-fast_by);
        let server_now = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(fast_by);
        a_live_hub_judged(&hub, server_now, &[("live", 5), ("dead", 95)]).await;
        let status = kubectl_fleet(&hub, "status").ok();
        assert_eq!(
            status.stderr, "",
            "reader {fast_by} s fast: {}",
            status.stderr
        );
        assert_eq!(
            phase_cell(&status.stdout, "live"),
            "Connected",
            "reader {fast_by} s fast:\n{}",
            status.stdout
        );
        assert_eq!(
            phase_cell(&status.stdout, "dead"),
            "Stale?",
            "{}",
            status.stdout
        );
        let report = kubectl_fleet(&hub, "status -o json").ok().json();
        assert_eq!(report["summary"]["hub"]["state"], "Judging");
        let live = site_json(&report, "live");
        assert!(
            live["lastHeartbeatAgeSeconds"].as_i64().unwrap() < 30,
            "the age on the server's clock: {live}"
        );
        let describe = kubectl_fleet(&hub, "describe live").ok();
        assert_eq!(describe.stderr, "", "{}", describe.stderr);
        assert!(
            describe.stdout.contains("Phase:              Connected"),
            "{}",
            describe.stdout
        );
        let incidents = kubectl_fleet(&hub, "incidents -o json").ok();
        assert_eq!(incidents.json()["hub"]["state"], "Judging");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blind_hub_records_no_judgement_until_it_sees_again() {
    use kube_sandbox::FaultRule;
    let hub = Hub::new();
    let api = site_api(&hub, "site-a").await;
    let _beats = Heartbeats::start(api, "site-a");
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(kubectl_fleet::operator::run_until(
        hub_operator_args(&hub.kubeconfig, 0.1),
        stopped,
    ));
    wait_until(Duration::from_secs(20), "a liveness record", || async {
        hub_record(&hub).await.is_some()
    })
    .await;
    // The hub's site watch goes down (and stays down) while the rest of
    // the API answers.
    let controls = hub.sandbox.controls();
    for verb in ["watch", "list"] {
        controls.fail(FaultRule {
            verb: Some(verb.into()),
            path_contains: Some("federatedclusters".into()),
            status: 500,
            count: u32::MAX,
            ..Default::default()
        });
    }
    controls.outage_for(Duration::from_millis(300));
    wait_until(Duration::from_secs(30), "the hub re-watches", || async {
        controls
            .request_log()
            .iter()
            .any(|r| r.verb == "watch" && r.status == 500)
    })
    .await;
    // Blind: the record stops moving (records every 1.5 s when judging).
    let blind = hub_record(&hub).await.unwrap().last_judgement_time;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(
        hub_record(&hub).await.unwrap().last_judgement_time,
        blind,
        "a blind hub recorded a judgement"
    );
    controls.clear_faults();
    wait_until(Duration::from_secs(30), "judging again", || async {
        hub_record(&hub)
            .await
            .is_some_and(|r| r.last_judgement_time.0 > blind.0)
    })
    .await;
    stop.send_replace(true);
    task.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hub_whose_writes_fail_records_no_judgement() {
    use kube_sandbox::FaultRule;
    let hub = Hub::new();
    let api = site_api(&hub, "site-a").await;
    let beats = Heartbeats::start(api, "site-a");
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(kubectl_fleet::operator::run_until(
        hub_operator_args(&hub.kubeconfig, 0.1),
        stopped,
    ));
    let admin: Api<FederatedCluster> = Api::all(hub.admin().await);
    wait_until(Duration::from_secs(20), "Connected, recorded", || async {
        phase(&admin, "site-a").await == Some(Phase::Connected) && hub_record(&hub).await.is_some()
    })
    .await;
    // Every status write of the site fails from now on; its edge stops, so
    // its Stale transition (after 3 s) cannot be written.
    let controls = hub.sandbox.controls();
    controls.fail(FaultRule {
        verb: Some("update".into()),
        path_contains: Some("federatedclusters/site-a/status".into()),
        status: 500,
        count: u32::MAX,
        ..Default::default()
    });
    drop(beats);
    let stale_due = Instant::now() + Duration::from_secs(4);
    wait_until(Duration::from_secs(30), "the write fails", || async {
        controls
            .request_log()
            .iter()
            .any(|r| r.verb == "update" && r.status == 500)
    })
    .await;
    // Two checks (1.5 s apart) after it is due, nothing more is recorded.
    tokio::time::sleep_until((stale_due + Duration::from_secs(4)).into()).await;
    let stuck = hub_record(&hub).await.unwrap().last_judgement_time;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(
        hub_record(&hub).await.unwrap().last_judgement_time,
        stuck,
        "a hub that cannot write a due judgement recorded a full judgement"
    );
    assert_eq!(phase(&admin, "site-a").await, Some(Phase::Connected));
    controls.clear_faults();
    wait_until(
        Duration::from_secs(30),
        "written, recording again",
        || async {
            // Stale, or Unreachable by now (10·I = 10 s after its last
            // heartbeat).
            matches!(
                phase(&admin, "site-a").await,
                Some(Phase::Stale | Phase::Unreachable)
            ) && hub_record(&hub)
                .await
                .is_some_and(|r| r.last_judgement_time.0 > stuck.0)
        },
    )
    .await;
    stop.send_replace(true);
    task.await.unwrap().unwrap();
}

/// The conditions of `site`: (type, status, reason, message).
async fn conditions(
    api: &Api<FederatedCluster>,
    site: &str,
) -> Vec<(String, String, String, String)> {
    api.get(site)
        .await
        .unwrap()
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.type_, c.status, c.reason, c.message))
        .collect()
}

fn types(conditions: &[(String, String, String, String)]) -> Vec<&str> {
    let mut t: Vec<&str> = conditions.iter().map(|c| c.0.as_str()).collect();
    t.sort();
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_token_cannot_forge_the_hubs_judgement() {
    let hub = Hub::new();
    operator_namespace(&hub);
    let site = site_api(&hub, "site-a").await;
    let _beats = Heartbeats::start(site.clone(), "site-a");
    let log = hub.dir.path().join("hub.log");
    let operator = Proc::spawn(
        "hub",
        &operator_bin(),
        &hub_args(&hub.kubeconfig, "hub-a", 0.1),
        log,
    );
    let admin: Api<FederatedCluster> = Api::all(hub.admin().await);
    // Connected, and ClockSkew judged from a heartbeat seen live.
    wait_until(
        Duration::from_secs(30),
        "Connected, skew judged",
        || async {
            phase(&admin, "site-a").await == Some(Phase::Connected)
                && types(&conditions(&admin, "site-a").await)
                    == ["ClockSkew", "Connected", "CredentialExpiring"]
        },
    )
    .await;
    let honest = conditions(&admin, "site-a").await;

    // With only its own token (no admission policy on this hub), the site
    // rewrites the hub's words, claims remediation rights a Push site never
    // has, and adds a condition type of its own.
    let at = jiff::Timestamp::now().to_string();
    let forged = json!({"status": {"conditions": [
        {"type": "Connected", "status": "True", "reason": "HeartbeatReceived",
         "message": "all good, trust me", "lastTransitionTime": at},
        {"type": "RemediationCapable", "status": "True", "reason": "Granted",
         "message": "the hub may remediate", "lastTransitionTime": at},
        {"type": "CredentialExpiring", "status": "False", "reason": "Valid",
         "message": "fine", "lastTransitionTime": at},
        {"type": "Hacked", "status": "True", "reason": "BySite",
         "message": "x", "lastTransitionTime": at},
    ]}});
    site.patch_status("site-a", &PatchParams::default(), &Patch::Merge(forged))
        .await
        .expect("the site token may write its own status");
    let restored = Instant::now();
    wait_until(
        Duration::from_secs(10),
        "the hub's word restored",
        || async {
            let now = conditions(&admin, "site-a").await;
            types(&now) == ["ClockSkew", "Connected", "CredentialExpiring"]
                && now
                    .iter()
                    .zip(&honest)
                    .all(|(a, b)| (&a.1, &a.2, &a.3) == (&b.1, &b.2, &b.3))
        },
    )
    .await;
    assert!(restored.elapsed() < Duration::from_secs(5));
    // The hub logs its restoring write once the API server has answered
    // it, which may be after the test has read the restored conditions.
    wait_until(
        Duration::from_secs(5),
        "the restoring write logged",
        || async {
            operator
                .log_text()
                .contains("the site's conditions were not the hub's judgement")
        },
    )
    .await;
}

/// The condition types of a Pull site, sorted.
const PULL_TYPES: [&str; 3] = ["Connected", "CredentialExpiring", "RemediationCapable"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mode_switch_leaves_no_condition_of_the_old_mode() {
    let hub = Hub::new();
    operator_namespace(&hub);
    let member = kube_sandbox::Sandbox::start();
    let member_kc = hub.dir.path().join("member.kubeconfig");
    member.write_admin_kubeconfig(&member_kc).unwrap();
    seed_member(
        &client_from_yaml(&member.admin_kubeconfig()).await,
        &[support::NodeSeed {
            name: "node-1",
            gpus: &[],
            ready: true,
        }],
        &[],
    )
    .await;
    hub.fleet(&[
        "register",
        "site-a",
        "--pull",
        "--member-kubeconfig",
        member_kc.to_str().unwrap(),
        "--heartbeat-interval",
        INTERVAL,
    ])
    .ok();
    let mut args = hub_args(&hub.kubeconfig, "hub-a", 0.3);
    args.extend(["--probe-timeout", "4s", "--pull-allow-cidr", "127.0.0.0/8"].map(str::to_owned));
    let _operator = Proc::spawn(
        "hub",
        &operator_bin(),
        &args,
        hub.dir.path().join("hub.log"),
    );
    let admin: Api<FederatedCluster> = Api::all(hub.admin().await);
    wait_until(Duration::from_secs(40), "probed, Connected", || async {
        types(&conditions(&admin, "site-a").await) == PULL_TYPES
            && phase(&admin, "site-a").await == Some(Phase::Connected)
    })
    .await;
    let pull_ref = admin
        .get("site-a")
        .await
        .unwrap()
        .spec
        .kubeconfig_secret_ref;

    // Pull → Push (as `register` does it): RemediationCapable goes, the
    // Push conditions come.
    admin
        .patch(
            "site-a",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"mode": "Push", "kubeconfigSecretRef": null}})),
        )
        .await
        .unwrap();
    wait_until(Duration::from_secs(20), "Push conditions only", || async {
        let now = conditions(&admin, "site-a").await;
        let t = types(&now);
        !t.contains(&"RemediationCapable") && t.contains(&"CredentialExpiring")
    })
    .await;
    let push = conditions(&admin, "site-a").await;
    for (type_, ..) in &push {
        assert!(
            ["Connected", "CredentialExpiring", "ClockSkew"].contains(&type_.as_str()),
            "{push:?}"
        );
    }

    // Push → Pull: ClockSkew goes; CredentialExpiring is judged again, for
    // the member token the hub renews.
    admin
        .patch(
            "site-a",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"mode": "Pull", "kubeconfigSecretRef": pull_ref}})),
        )
        .await
        .unwrap();
    wait_until(Duration::from_secs(40), "Pull conditions only", || async {
        types(&conditions(&admin, "site-a").await) == PULL_TYPES
    })
    .await;
    let status = admin.get("site-a").await.unwrap().status.unwrap();
    assert_eq!(status.clock_offset_seconds, None);
}

/// A `kubectl-fleet status --watch -o OUTPUT` with its stdout and stderr
/// lines sent to the returned channel, tagged "out" and "err".
fn watch(
    hub: &Hub,
    output: &str,
) -> (
    std::process::Child,
    std::sync::mpsc::Receiver<(&'static str, String)>,
) {
    use std::io::BufRead as _;
    let mut child = std::process::Command::new(support::BIN)
        .args(["--kubeconfig", hub.kubeconfig.to_str().unwrap()])
        .args(["status", "--watch", "-o", output])
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let pipes: [(&'static str, Box<dyn std::io::Read + Send>); 2] = [
        ("out", Box::new(child.stdout.take().unwrap())),
        ("err", Box::new(child.stderr.take().unwrap())),
    ];
    for (tag, pipe) in pipes {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(pipe).lines() {
                if tx.send((tag, line.unwrap())).is_err() {
                    break;
                }
            }
        });
    }
    (child, rx)
}

/// `status --watch` on a pipe: when the hub's verdict changes with time
/// alone (no site event), a report stream gets a frame saying so, and a
/// stream of tables the warning on stderr, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_says_when_the_hub_falls_silent() {
    let hub = Hub::new();
    let api = site_api(&hub, "site-a").await;
    heartbeat(&api, "site-a").await;
    // A hub that judged a moment ago and records every second, then
    // nothing more: silent 3 s later.
    hub.record_hub_judgement("hub-a", jiff::Timestamp::now(), 1)
        .await;
    let (mut yaml, frames) = watch(&hub, "yaml");
    let (mut table, lines) = watch(&hub, "wide");
    let started = Instant::now();
    let mut states = Vec::new();
    while !states.contains(&"Silent".to_owned()) {
        let left = Duration::from_secs(30).saturating_sub(started.elapsed());
        let (tag, line) = frames
            .recv_timeout(left)
            .unwrap_or_else(|e| panic!("no Silent frame: {e}; states {states:?}"));
        assert_eq!(tag, "out", "nothing on stderr with -o yaml: {line}");
        if let Some(state) = line.trim().strip_prefix("state: ") {
            states.push(state.to_owned());
        }
    }
    assert_eq!(
        states.first().map(String::as_str),
        Some("Judging"),
        "{states:?}"
    );
    // Re-read every 10 s: silent by the first re-read after 3 s.
    assert!(started.elapsed() < Duration::from_secs(20));
    let mut warnings = Vec::new();
    while warnings.is_empty() {
        let left = Duration::from_secs(30).saturating_sub(started.elapsed());
        match lines.recv_timeout(left) {
            Ok(("err", line)) => warnings.push(line),
            Ok(_) => {}
            Err(e) => panic!("no warning on stderr: {e}"),
        }
    }
    std::thread::sleep(Duration::from_secs(2));
    for child in [&mut yaml, &mut table] {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    while let Ok((tag, line)) = lines.try_recv() {
        if tag == "err" {
            warnings.push(line);
        }
    }
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("warning: no hub has judged this fleet for "),
        "{warnings:?}"
    );
}
