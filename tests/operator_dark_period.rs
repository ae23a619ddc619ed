//! Dark periods explained afterwards (issue 36): an edge that cannot reach
//! its hub keeps a journal on its member cluster (the ConfigMap `kubectl
//! fleet install --role edge` creates, written with exactly the rights it
//! grants), survives its own restart with it, and reports the dark period
//! when the hub is back; the hub records Events, and `kubectl fleet
//! describe` (through the real kubectl) tells it. A site cannot store a
//! dark period the CRD does not admit.

use crate::support;

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Node};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{DarkEntryKind, FederatedCluster, Phase};
use kubectl_fleet::fleet::rbac;
use serde_json::json;
use support::*;

const SITE: &str = "factory-7";
const NODE: &str = "store-7-n1";

/// The journal the edge keeps on its member, as JSON (null when empty).
async fn journal(member: &kube::Client) -> serde_json::Value {
    let cm = Api::<ConfigMap>::namespaced(member.clone(), rbac::FLEET_NAMESPACE)
        .get(rbac::EDGE_JOURNAL_NAME)
        .await
        .unwrap();
    cm.data
        .and_then(|d| d.get("journal").cloned())
        .map_or(serde_json::Value::Null, |t| {
            serde_json::from_str(&t).unwrap()
        })
}

fn kinds(journal: &serde_json::Value) -> Vec<String> {
    journal["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| e["kind"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The hub goes away; on the member a node loses power and the edge
/// restarts; the hub comes back. What must hold:
/// - the journal on the member holds the node's NotReady (with the
///   kubelet's reason, at the member's transition time) and the restart
///   while the hub is away, written with only the rights `install --role
///   edge` grants (the edge runs as that ServiceAccount);
/// - once the hub is back, `status.lastDarkPeriod` tells both, from the
///   edge's first failure to its first report again, and the journal on
///   the member is cleared;
/// - the hub records `DarkPeriodReported` and `DarkPeriodEntry` Events,
///   and its phase is its own judgement (Connected again);
/// - `kubectl fleet describe` through the real kubectl shows the line and
///   the entries, and `-o json` carries them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_back_from_the_dark_explains_its_dark_period() {
    const SCALE: f64 = 0.2;
    let dir = TempDir::new("dark-period");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let site_kc = dir.join(&format!("{SITE}.kubeconfig"));
    fleet_register(&hub_kc, SITE, 10, &site_kc, &[]);
    let api: Api<FederatedCluster> = Api::all(admin(&hub_sb).await);
    let operator_kc = hub_operator_kubeconfig(&hub_sb, &dir).await;
    let (hub, ca) = spawn_lone_hub(&operator_kc, &dir, "hub", SCALE);

    // The member: one ready node, the edge installed as a user would.
    let member_sb = Sandbox::start();
    let member_admin_kc = dir.join("member-admin.kubeconfig");
    member_sb.write_admin_kubeconfig(&member_admin_kc).unwrap();
    let member = admin(&member_sb).await;
    seed_member(
        &member,
        &[NodeSeed {
            name: NODE,
            gpus: &[],
            ready: true,
        }],
        &[],
    )
    .await;
    fleet_cli(
        &member_admin_kc,
        &[
            "install",
            "--role",
            "edge",
            "--site",
            SITE,
            "--hub-kubeconfig",
            &site_kc.display().to_string(),
            "--apply",
        ],
    );
    let edge_token = service_account_token(
        &member,
        rbac::FLEET_NAMESPACE,
        "fleet-operator-edge",
        Duration::from_secs(3600),
    )
    .await;
    let edge_kc = dir.join("edge-member.kubeconfig");
    write_private(&edge_kc, &member_sb.kubeconfig_for_token(&edge_token));
    let mut edge_argv = edge_args(SITE, &edge_kc, &site_kc, SCALE);
    edge_argv.extend([
        "--journal-configmap".to_owned(),
        format!("{}/{}", rbac::FLEET_NAMESPACE, rbac::EDGE_JOURNAL_NAME),
    ]);
    let spawn_edge = |n: u32| {
        Proc::spawn(
            SITE,
            &operator_bin(),
            &edge_argv,
            dir.join(&format!("edge-{n}.log")),
        )
    };
    let mut edge = spawn_edge(1);
    wait_until(Duration::from_secs(30), "the site Connected", || async {
        api.get(SITE).await.ok().and_then(|s| s.phase()) == Some(Phase::Connected)
    })
    .await;
    assert_eq!(
        journal(&member).await,
        serde_json::Value::Null,
        "nothing written while connected"
    );

    // The hub goes away, after the last report it accepted.
    let last_report = api
        .get(SITE)
        .await
        .unwrap()
        .status
        .unwrap()
        .last_heartbeat_time
        .unwrap()
        .0;
    hub_sb.controls().set_outage(true);
    wait_until(
        Duration::from_secs(30),
        "the edge sees the hub gone",
        || async { edge.log_text().contains("hub unreachable") },
    )
    .await;
    wait_until(Duration::from_secs(30), "the journal dark", || async {
        !journal(&member).await["darkSince"].is_null()
    })
    .await;

    // A node loses power on the member.
    let went = jiff::Timestamp::from_second(jiff::Timestamp::now().as_second()).unwrap();
    let nodes: Api<Node> = Api::all(member.clone());
    let mut node = nodes.get(NODE).await.unwrap();
    node.status.as_mut().unwrap().conditions = Some(vec![
        serde_json::from_value(json!({
            "type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
            "message": "Kubelet stopped posting node status (power lost).",
            "lastTransitionTime": went.to_string()
        }))
        .unwrap(),
    ]);
    nodes
        .replace_status(NODE, &PostParams::default(), &node)
        .await
        .unwrap();
    wait_until(
        Duration::from_secs(30),
        "the journal notes the node",
        || async { kinds(&journal(&member).await).contains(&"NodeNotReady".to_owned()) },
    )
    .await;

    // The edge restarts while the hub is still away.
    edge.kill();
    let edge = spawn_edge(2);
    wait_until(
        Duration::from_secs(30),
        "the journal notes the restart",
        || async { kinds(&journal(&member).await).contains(&"EdgeRestarted".to_owned()) },
    )
    .await;
    let held = journal(&member).await;
    assert_eq!(
        kinds(&held),
        ["NodeNotReady", "EdgeRestarted"],
        "the restart kept what the first process noted: {held}"
    );
    assert!(
        edge.log_text().contains("restarted during a dark period"),
        "{}",
        edge.log_text()
    );

    // The hub comes back.
    hub_sb.controls().set_outage(false);
    wait_until(
        Duration::from_secs(60),
        "the dark period reported",
        || async {
            api.get(SITE)
                .await
                .ok()
                .and_then(|s| s.status?.last_dark_period)
                .is_some()
        },
    )
    .await;
    let site = api.get(SITE).await.unwrap();
    let dark = site.status.unwrap().last_dark_period.unwrap();
    // From the first failed report (after the last accepted one, before the
    // node went) to the first accepted again (after everything it tells).
    assert!(
        dark.from.0 >= last_report && dark.from.0 <= went,
        "{dark:?} (last report {last_report}, node down {went})"
    );
    assert!(
        dark.to.0 >= dark.entries.last().unwrap().time.0 && dark.to.0 <= jiff::Timestamp::now(),
        "{dark:?}"
    );
    let seen: Vec<(DarkEntryKind, &str)> = dark
        .entries
        .iter()
        .map(|e| (e.kind, e.subject.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            (DarkEntryKind::NodeNotReady, NODE),
            (DarkEntryKind::EdgeRestarted, "edge")
        ],
        "{dark:?}"
    );
    assert_eq!(
        dark.entries[0].time.0, went,
        "the member's own transition time"
    );
    assert!(
        dark.entries[0].detail.starts_with("NodeStatusUnknown: "),
        "{dark:?}"
    );
    assert_eq!(dark.dropped, 0);
    wait_until(Duration::from_secs(30), "the journal cleared", || async {
        journal(&member).await["darkSince"].is_null()
    })
    .await;
    assert!(kinds(&journal(&member).await).is_empty());
    wait_until(Duration::from_secs(30), "Connected again", || async {
        api.get(SITE).await.ok().and_then(|s| s.phase()) == Some(Phase::Connected)
    })
    .await;

    // The hub's Events, and describe through the real kubectl.
    let mut text = String::new();
    wait_until(
        Duration::from_secs(30),
        "the hub's dark-period Events",
        || {
            text = kubectl_fleet(&hub_kc, &["describe", SITE]);
            let found = text.contains("DarkPeriodReported") && text.contains("DarkPeriodEntry");
            async move { found }
        },
    )
    .await;
    let hm = |t: jiff::Timestamp| jiff::fmt::strtime::format("%H:%M", t).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("Last Dark Period:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains(&format!(
            "(site's clock): node {NODE} NotReady {} (NodeStatusUnknown), edge restarted",
            hm(went)
        )) && line.contains(&format!("back {}", hm(dark.to.0))),
        "{line}"
    );
    assert!(
        text.contains("Last Dark Period (the site's own account, on its clock):"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(
        &Kubectl::new(&hub_kc)
            .args(["fleet", "describe", SITE, "-o", "json"])
            .ok()
            .stdout,
    )
    .unwrap();
    assert_eq!(json["lastDarkPeriod"]["entries"][0]["kind"], "NodeNotReady");
    assert_eq!(
        json["lastDarkPeriod"]["entries"][1]["kind"],
        "EdgeRestarted"
    );
    // The REST site endpoint carries the same.
    let reader = reader_token(&admin(&hub_sb).await).await;
    let addr = logged_addr(&hub.log_text(), "serving HTTPS");
    let (code, body) = https_get(
        &addr,
        &format!("/api/v1/federation/clusters/{SITE}"),
        Some(&reader),
        &ca,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let rest: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(rest["lastDarkPeriod"], json["lastDarkPeriod"], "{body}");
    drop(edge);
}

/// A site whose token was revoked is dark until it gets a new one; an edge
/// without its journal ConfigMap (run by hand, the ConfigMap never
/// created) says so once and keeps the journal in memory. What must hold:
/// the edge warns about the journal and keeps running; once the admin's
/// new credential arrives, the dark period reported names the hub's
/// refusal (401) and the node that went down meanwhile, and describe says
/// "credential rejected".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_site_explains_its_dark_period_from_memory() {
    const SCALE: f64 = 0.2;
    let dir = TempDir::new("dark-revoked");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let site_kc = dir.join(&format!("{SITE}.kubeconfig"));
    fleet_register(&hub_kc, SITE, 10, &site_kc, &[]);
    let api: Api<FederatedCluster> = Api::all(admin(&hub_sb).await);
    let operator_kc = hub_operator_kubeconfig(&hub_sb, &dir).await;
    let _hub = Proc::spawn(
        "hub",
        &operator_bin(),
        &hub_args(&operator_kc, "hub", SCALE),
        dir.join("hub.log"),
    );
    let (member_sb, member_kc) = member_sandbox(&dir, "m", (0, 0)).await;
    let member = admin(&member_sb).await;
    let mut argv = edge_args(SITE, &member_kc, &site_kc, SCALE);
    argv.extend([
        "--journal-configmap".to_owned(),
        format!("{}/{}", rbac::FLEET_NAMESPACE, rbac::EDGE_JOURNAL_NAME),
    ]);
    let edge = Proc::spawn(SITE, &operator_bin(), &argv, dir.join("edge.log"));
    wait_until(Duration::from_secs(30), "the site Connected", || async {
        api.get(SITE).await.ok().and_then(|s| s.phase()) == Some(Phase::Connected)
    })
    .await;
    let log = edge.log_text();
    assert_eq!(
        log.matches("cannot keep the dark-period journal on the member cluster")
            .count(),
        1,
        "{log}"
    );

    // The admin revokes the site's token; the edge is refused.
    let new_kc = dir.join("new.kubeconfig");
    fleet_cli(
        &hub_kc,
        &[
            "rotate",
            SITE,
            "--revoke",
            "--yes",
            "--output-file",
            &new_kc.display().to_string(),
        ],
    );
    wait_until(Duration::from_secs(30), "the edge refused", || async {
        edge.log_text().contains("hub rejected the site token")
    })
    .await;
    let nodes: Api<Node> = Api::all(member.clone());
    let mut node = nodes.get("m-node-1").await.unwrap();
    node.status.as_mut().unwrap().conditions = Some(vec![
        serde_json::from_value(json!({
            "type": "Ready", "status": "False", "reason": "KubeletNotReady",
            "message": "container runtime is down",
            "lastTransitionTime": jiff::Timestamp::now().to_string()
        }))
        .unwrap(),
    ]);
    nodes
        .replace_status("m-node-1", &PostParams::default(), &node)
        .await
        .unwrap();
    // Read by the edge at its slow retry (the hub's refusal needs a
    // person): two more refusals, so a whole failed tick (its member read
    // included) began after the node went down, before the credential comes.
    let before = edge
        .log_text()
        .matches("hub rejected the site token")
        .count();
    wait_until(Duration::from_secs(60), "the edge retries", || async {
        edge.log_text()
            .matches("hub rejected the site token")
            .count()
            >= before + 2
    })
    .await;

    // The new credential arrives where the edge reads it.
    std::fs::copy(&new_kc, &site_kc).unwrap();
    wait_until(
        Duration::from_secs(60),
        "the dark period reported",
        || async {
            api.get(SITE)
                .await
                .ok()
                .and_then(|s| s.status?.last_dark_period)
                .is_some()
        },
    )
    .await;
    let dark = api
        .get(SITE)
        .await
        .unwrap()
        .status
        .unwrap()
        .last_dark_period
        .unwrap();
    let seen: Vec<(DarkEntryKind, &str)> = dark
        .entries
        .iter()
        .map(|e| (e.kind, e.subject.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            (DarkEntryKind::CredentialRejected, "hub"),
            (DarkEntryKind::NodeNotReady, "m-node-1")
        ],
        "{dark:?}"
    );
    assert!(dark.entries[0].detail.starts_with("401: "), "{dark:?}");
    let text = kubectl_fleet(&hub_kc, &["describe", SITE]);
    assert!(
        text.lines().any(|l| l.starts_with("Last Dark Period:")
            && l.contains("credential rejected")
            && l.contains("node m-node-1 NotReady")),
        "{text}"
    );
}

on_both_lanes! {
/// A site's own token cannot store a dark period the CRD does not admit:
/// control characters, oversized text, too many entries, an unknown kind,
/// a date-time no reader can decode, a negative or huge `dropped`. Each is
/// refused whole (422), on kube-sandbox and on the real API server, and a
/// well-formed one is admitted.
async fn a_hostile_edge_cannot_store_a_dark_period_the_crd_refuses(lane) {
    let dir = TempDir::new("dark-hostile");
    let hub_sb = lane.sandbox();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let site_kc = dir.join("evil.kubeconfig");
    fleet_register(&hub_kc, "evil", 10, &site_kc, &[]);
    let as_site: Api<FederatedCluster> =
        Api::all(client_from(&std::fs::read_to_string(&site_kc).unwrap()).await);
    let entry = |subject: &str, detail: &str| json!({"time": "2026-01-01T02:09:00Z", "kind": "NodeNotReady", "subject": subject, "detail": detail});
    let period = |entries: serde_json::Value| json!({"from": "2026-01-01T02:10:00Z", "to": "2026-01-01T05:42:00Z", "entries": entries, "dropped": 0});
    let write = |dark: serde_json::Value| {
        let api = as_site.clone();
        async move {
            api.patch_status(
                "evil",
                &PatchParams::default(),
                &Patch::Merge(&json!({"status": {"lastDarkPeriod": dark}})),
            )
            .await
        }
    };
    let many: Vec<_> = (0..21).map(|i| entry(&format!("n{i}"), "")).collect();
    let mut bad_kind = period(json!([entry("n1", "")]));
    bad_kind["entries"][0]["kind"] = json!("HubJudgedConnected");
    let mut bad_time = period(json!([]));
    bad_time["from"] = json!("2026-02-30T02:10:00Z");
    let mut bad_dropped = period(json!([]));
    bad_dropped["dropped"] = json!(-1);
    let mut huge_dropped = period(json!([]));
    huge_dropped["dropped"] = json!(1_000_000_001_i64);
    for (what, dark) in [
        (
            "an escape sequence",
            period(json!([entry("n1", "\u{1b}]0;owned\u{7}")])),
        ),
        ("a bidi override", period(json!([entry("n1\u{202e}", "")]))),
        (
            "an oversized detail",
            period(json!([entry("n1", &"x".repeat(257))])),
        ),
        (
            "an oversized subject",
            period(json!([entry(&"n".repeat(385), "")])),
        ),
        ("21 entries", period(json!(many))),
        ("an unknown kind", bad_kind),
        ("February 30th", bad_time),
        ("a negative dropped", bad_dropped),
        ("a dropped over the bound", huge_dropped),
    ] {
        let err = write(dark).await.expect_err(what);
        assert_eq!(
            kubectl_fleet::k8s::status_code(&err),
            Some(422),
            "{what}: {err}"
        );
    }
    let stored = Api::<FederatedCluster>::all(admin(&hub_sb).await)
        .get("evil")
        .await
        .unwrap();
    assert!(stored.status.and_then(|s| s.last_dark_period).is_none());
    write(period(json!([entry(
        "store-7-n1",
        "NodeStatusUnknown: power"
    )])))
    .await
    .expect("a well-formed dark period is admitted");
}
}
