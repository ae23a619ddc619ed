//! The hub role against kube-sandbox: the CRD check, a side-effect-free
//! empty install, phase transitions after 3·I and 10·I with exactly one
//! write each, and the hub's startup/shutdown behaviour.

use crate::support;

use std::time::Duration;

use clap::Parser as _;
use kube::api::Api;
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{Environment, FederatedCluster, Phase};
use kubectl_fleet::operator::{self, Args};
use support::*;
use tokio::sync::watch;

const WRITE_VERBS: &[&str] = &["create", "update", "patch", "delete", "deletecollection"];

#[test]
fn missing_crd_exits_non_zero_with_the_install_hint() {
    let sb = Sandbox::start();
    let dir = TempDir::new("nocrd");
    let kc = dir.join("admin.kubeconfig");
    sb.write_admin_kubeconfig(&kc).unwrap();
    let out = std::process::Command::new(operator_bin())
        .args(hub_args(&kc, "hub-a", 1.0))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "CRD federatedclusters.federation.kubectl-fleet.dev not found: run `kubectl fleet install --apply`"
        ),
        "{stderr}"
    );
}

#[test]
fn version_flag_prints_the_build_version() {
    let out = std::process::Command::new(operator_bin())
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("fleet-operator {}", env!("CARGO_PKG_VERSION"))
    );
}

fn args(kc: &std::path::Path, extra: &[&str]) -> Args {
    let mut v = vec![
        "fleet-operator".to_owned(),
        "--kubeconfig".into(),
        kc.display().to_string(),
        "--health-addr".into(),
        "127.0.0.1:0".into(),
        "--secure-addr".into(),
        "127.0.0.1:0".into(),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    Args::parse_from(v)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_install_reconciles_and_writes_nothing() {
    let sb = Sandbox::start();
    let client = admin(&sb).await;
    install_crds(&client).await;
    let dir = TempDir::new("empty");
    let kc = dir.join("admin.kubeconfig");
    sb.write_admin_kubeconfig(&kc).unwrap();
    sb.controls().clear_request_log();
    let (tx, rx) = watch::channel(false);
    let hub = tokio::spawn(operator::run_until(
        args(&kc, &["--leader-elect=false"]),
        rx,
    ));
    tokio::time::sleep(Duration::from_secs(3)).await;
    tx.send_replace(true);
    hub.await.unwrap().unwrap();
    let writes: Vec<_> = sb
        .controls()
        .request_log()
        .into_iter()
        .filter(|r| WRITE_VERBS.contains(&r.verb.as_str()))
        .collect();
    assert!(writes.is_empty(), "an empty install wrote: {writes:?}");
}

fn phase_of(fc: &FederatedCluster) -> Option<Phase> {
    fc.phase()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn phase_moves_at_3i_and_10i_with_one_write_per_transition() {
    let sb = Sandbox::start();
    let client = admin(&sb).await;
    install_crds(&client).await;
    ensure_namespace(&client, "fleet-system").await;
    create_site(&client, "site-a", 10, Environment::Production).await;
    let api: Api<FederatedCluster> = Api::all(client.clone());
    let dir = TempDir::new("phase");
    let kc = dir.join("admin.kubeconfig");
    sb.write_admin_kubeconfig(&kc).unwrap();
    // I = 10 s scaled by 0.1: Stale after 3 s, Unreachable after 10 s.
    let (tx, rx) = watch::channel(false);
    let hub = tokio::spawn(operator::run_until(
        args(&kc, &["--interval-scale", "0.1", "--lease-duration", "3s"]),
        rx,
    ));
    wait_until(Duration::from_secs(10), "Pending", || async {
        phase_of(&api.get("site-a").await.unwrap()) == Some(Phase::Pending)
    })
    .await;
    status_heartbeat(&api, "site-a").await;
    wait_until(Duration::from_secs(5), "Connected", || async {
        phase_of(&api.get("site-a").await.unwrap()) == Some(Phase::Connected)
    })
    .await;
    let connected_at = std::time::Instant::now();
    wait_until(Duration::from_secs(8), "Stale", || async {
        phase_of(&api.get("site-a").await.unwrap()) == Some(Phase::Stale)
    })
    .await;
    let stale_after = connected_at.elapsed();
    assert!(
        stale_after >= Duration::from_millis(2500),
        "Stale too early: {stale_after:?}"
    );
    wait_until(Duration::from_secs(15), "Unreachable", || async {
        phase_of(&api.get("site-a").await.unwrap()) == Some(Phase::Unreachable)
    })
    .await;
    let unreachable_after = connected_at.elapsed();
    assert!(
        unreachable_after >= Duration::from_millis(9500),
        "Unreachable too early: {unreachable_after:?}"
    );
    // The leader keeps the fleet summary.
    let fleet: Api<kubectl_fleet::api::FederationStatus> = Api::all(client.clone());
    wait_until(
        Duration::from_secs(10),
        "FederationStatus counts the site Unreachable",
        || async {
            fleet
                .get_opt("fleet")
                .await
                .unwrap()
                .and_then(|f| f.status)
                .is_some_and(|s| s.total_clusters == 1 && s.unreachable_clusters == 1)
        },
    )
    .await;
    // Nothing more happens on its own.
    tokio::time::sleep(Duration::from_secs(2)).await;
    tx.send_replace(true);
    hub.await.unwrap().unwrap();
    let status_writes: Vec<_> = sb
        .controls()
        .request_log()
        .into_iter()
        .filter(|r| {
            r.user == "sandbox-admin"
                && r.path.ends_with("/federatedclusters/site-a/status")
                && r.verb == "update"
        })
        .collect();
    assert_eq!(
        status_writes.len(),
        4,
        "exactly one write per transition (Pending, Connected, Stale, Unreachable): {status_writes:?}"
    );
    let fc = api.get("site-a").await.unwrap();
    let st = fc.status.unwrap();
    let c = st.condition("Connected").unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "HeartbeatMissing")
    );
}
