//! `kubectl fleet install` and `uninstall` as a platform team uses them on a
//! cluster: the manifests pass the Pod Security "restricted" profile, an
//! upgrade over a populated hub loses nothing and keeps what the cluster's
//! operators changed (a replica count, a mirrored image), bad combinations
//! stop before anything is applied, the hub serves a certificate a client
//! verifies by the Service's name (generated once and kept, given, or
//! cert-manager's), and uninstall removes the operator but the CRDs (and
//! every site) only when asked.

use crate::support;

use base64::Engine as _;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use kube_sandbox::Sandbox;
use kubectl_fleet::api::FederatedCluster;
use serde_json::{Value, json};
use support::{Hub, Run, TempDir, run_bin, shell};

mod pss;

const CRD: &str = "federatedclusters.federation.kubectl-fleet.dev";
const IMAGE_PATH: &str = ".spec.template.spec.containers[name=\"operator\"].image";

fn docs(yaml: &str) -> Vec<Value> {
    serde_saphyr::from_multiple(yaml).unwrap()
}

fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

async fn hub_deployment(hub: &Hub) -> Deployment {
    Api::<Deployment>::namespaced(hub.admin().await, "fleet-system")
        .get("fleet-operator-hub")
        .await
        .unwrap()
}

fn image_of(deploy: &Deployment) -> String {
    deploy
        .spec
        .as_ref()
        .unwrap()
        .template
        .spec
        .as_ref()
        .unwrap()
        .containers[0]
        .image
        .clone()
        .unwrap()
}

// ---------------------------------------------------------------------------
// Upgrade.

async fn populate(hub: &Hub) {
    hub.register("site-a", &["--tier", "critical", "--region", "eu-west-1"]);
    hub.register("site-b", &["--environment", "staging"]);
    hub.register("site-c", &[]);
    let api: Api<FederatedCluster> = Api::all(hub.admin().await);
    api.patch_status(
        "site-a",
        &PatchParams::default(),
        &Patch::Merge(&json!({ "status": {
            "phase": "Connected",
            "lastHeartbeatTime": jiff::Timestamp::now().to_string(),
            "nodeCount": 3,
        } })),
    )
    .await
    .unwrap();
}

async fn snapshot(hub: &Hub) -> Vec<Value> {
    let api: Api<FederatedCluster> = Api::all(hub.admin().await);
    let mut sites: Vec<Value> = api
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|s| json!({ "name": s.metadata.name, "uid": s.metadata.uid, "spec": s.spec, "status": s.status }))
        .collect();
    sites.sort_by_key(|s| s["name"].as_str().unwrap().to_owned());
    sites
}

#[tokio::test]
async fn upgrade_over_a_populated_hub_loses_nothing_and_keeps_the_replica_count() {
    let hub = Hub::bare(Default::default());
    // Version N-1 of the operator, as the previous release applied it.
    hub.fleet(&[
        "install",
        "--apply",
        "--image",
        "ghcr.io/kubectl-fleet/fleet-operator:v0.0.9",
    ])
    .ok();
    populate(&hub).await;
    let before = snapshot(&hub).await;
    assert_eq!(before.len(), 3);
    // The platform team scales the hub with kubectl.
    shell(
        &hub,
        "kubectl -n fleet-system scale deployment fleet-operator-hub --replicas=3",
    )
    .ok();

    let run = hub.fleet(&["install", "--apply"]).ok();

    assert!(
        run.stderr.contains(
            "Deployment fleet-system/fleet-operator-hub applied\n  kept .spec.replicas = 3 ("
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("--force-conflicts replaces it"),
        "{}",
        run.stderr
    );
    let deploy = hub_deployment(&hub).await;
    assert_eq!(deploy.spec.as_ref().unwrap().replicas, Some(3));
    // The image install owned moves to this version.
    assert_eq!(
        image_of(&deploy),
        format!("ghcr.io/kubectl-fleet/fleet-operator:v{}", version())
    );
    // Every site, with its uid (not recreated), spec and status.
    assert_eq!(snapshot(&hub).await, before);
    // The sites' identities are untouched.
    let client = hub.admin().await;
    Api::<ServiceAccount>::namespaced(client.clone(), "fleet-sites")
        .get("fleet-edge-site-b")
        .await
        .unwrap();
    Api::<ClusterRole>::all(client.clone())
        .get("fleet-edge-site-c")
        .await
        .unwrap();
    // And the sites still work: the CRDs are served, a new one registers.
    hub.register("site-d", &[]);
    // A forced upgrade takes the replica count back.
    hub.fleet(&["install", "--apply", "--force-conflicts"]).ok();
    assert_eq!(hub_deployment(&hub).await.spec.unwrap().replicas, Some(2));
}

#[tokio::test]
async fn a_mirrored_image_is_kept_and_a_different_image_needs_force() {
    let hub = Hub::bare(Default::default());
    hub.fleet(&["install", "--apply"]).ok();
    let mirror = format!("registry.internal/fleet-operator:v{}", version());
    shell(
        &hub,
        &format!(
            "kubectl -n fleet-system set image deployment/fleet-operator-hub operator={mirror}"
        ),
    )
    .ok();

    let run = hub.fleet(&["install", "--apply"]).ok();
    assert!(
        run.stderr
            .contains(&format!("kept {IMAGE_PATH} = \"{mirror}\" (")),
        "{}",
        run.stderr
    );
    assert_eq!(image_of(&hub_deployment(&hub).await), mirror);

    // Asking for another image by flag while the cluster holds the mirror:
    // one line naming the field and its live value, nothing changed.
    let line = hub
        .fleet(&[
            "install",
            "--apply",
            "--image",
            "registry.internal/fleet-operator:v9",
        ])
        .one_line_error();
    assert!(
        line.contains(IMAGE_PATH) && line.contains(&mirror),
        "{line}"
    );
    assert!(line.contains("--force-conflicts"), "{line}");
    assert_eq!(image_of(&hub_deployment(&hub).await), mirror);

    hub.fleet(&[
        "install",
        "--apply",
        "--image",
        "registry.internal/fleet-operator:v9",
        "--force-conflicts",
    ])
    .ok();
    assert_eq!(
        image_of(&hub_deployment(&hub).await),
        "registry.internal/fleet-operator:v9"
    );
}

// ---------------------------------------------------------------------------
// Bad combinations.

#[tokio::test]
async fn bad_combinations_stop_before_applying_anything() {
    let hub = Hub::bare(Default::default());
    let line = hub.fleet(&["install", "--site", "site-a"]).one_line_error();
    assert!(
        line.contains("--site only applies to --role edge"),
        "{line}"
    );

    // An edge without its Secret would never start: stop and say how.
    let line = hub
        .fleet(&["install", "--role", "edge", "--site", "site-a", "--apply"])
        .one_line_error();
    assert!(
        line.contains("Secret fleet-system/fleet-hub-kubeconfig does not exist")
            && line.contains("--hub-kubeconfig"),
        "{line}"
    );
    let deploys = Api::<Deployment>::all(hub.admin().await)
        .list(&Default::default())
        .await
        .unwrap();
    assert!(deploys.items.is_empty(), "applied despite the error");

    // Printing needs no Secret (it may be applied separately).
    hub.fleet(&["install", "--role", "edge", "--site", "site-a"])
        .ok();
}

#[tokio::test]
async fn edge_install_with_its_secret_applies_and_its_role_names_the_secret() {
    let hub = Hub::new();
    let kubeconfig = hub.fleet(&["register", "site-a"]).ok().stdout;
    let edge = Sandbox::start();
    let dir = TempDir::new("edge");
    let edge_kc = dir.path().join("edge.kubeconfig");
    edge.write_admin_kubeconfig(&edge_kc).unwrap();
    let hub_kc = dir.path().join("hub.kubeconfig");
    std::fs::write(&hub_kc, kubeconfig).unwrap();
    let edge_args = |extra: &[&str]| -> Run {
        let mut args = vec![
            "--kubeconfig",
            edge_kc.to_str().unwrap(),
            "install",
            "--role",
            "edge",
            "--site",
            "site-a",
            "--apply",
        ];
        args.extend_from_slice(extra);
        run_bin(&args, dir.path())
    };
    edge_args(&["--hub-kubeconfig", hub_kc.to_str().unwrap()]).ok();
    // Re-running without the file finds the Secret in place.
    edge_args(&[]).ok();
    let client = support::client_from_yaml(&edge.admin_kubeconfig()).await;

    // The edge (here: kubectl) rewrote its credential since; re-installing
    // an older file stops rather than reverting it, without echoing either.
    let secrets =
        Api::<k8s_openapi::api::core::v1::Secret>::namespaced(client.clone(), "fleet-system");
    let mut secret = secrets.get("fleet-hub-kubeconfig").await.unwrap();
    let renewed = "renewed-token-kubeconfig";
    secret.data = Some(
        [(
            "kubeconfig".to_owned(),
            k8s_openapi::ByteString(renewed.into()),
        )]
        .into(),
    );
    secret.metadata.managed_fields = None;
    secrets
        .replace("fleet-hub-kubeconfig", &Default::default(), &secret)
        .await
        .unwrap();
    let run = edge_args(&["--hub-kubeconfig", hub_kc.to_str().unwrap()]);
    let line = run.one_line_error();
    assert!(
        line.contains(".data.kubeconfig") && line.contains("--force-conflicts"),
        "{line}"
    );
    let encoded = base64::engine::general_purpose::STANDARD.encode(renewed);
    assert!(
        !line.contains(&encoded) && !line.contains("token"),
        "{line}"
    );
    let kept = secrets.get("fleet-hub-kubeconfig").await.unwrap();
    assert_eq!(kept.data.unwrap()["kubeconfig"].0, renewed.as_bytes());
    edge_args(&[
        "--hub-kubeconfig",
        hub_kc.to_str().unwrap(),
        "--force-conflicts",
    ])
    .ok();
    let replaced = secrets.get("fleet-hub-kubeconfig").await.unwrap();
    assert_eq!(
        replaced.data.unwrap()["kubeconfig"].0,
        std::fs::read(&hub_kc).unwrap()
    );

    let role = Api::<k8s_openapi::api::rbac::v1::Role>::namespaced(client.clone(), "fleet-system")
        .get("fleet-operator-edge")
        .await
        .unwrap();
    let rules = serde_json::to_value(role.rules.unwrap()).unwrap();
    assert_eq!(
        rules,
        json!([
            { "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["fleet-hub-kubeconfig"], "verbs": ["get", "update"] },
            { "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["fleet-edge-journal"], "verbs": ["get", "update"] }
        ])
    );
    // The journal's ConfigMap exists for the edge to update (it may not
    // create one), and installing again keeps what the edge wrote.
    let configmaps =
        Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(client, "fleet-system");
    let mut journal = configmaps.get("fleet-edge-journal").await.unwrap();
    assert_eq!(journal.data, None);
    journal.data = Some([("journal".to_owned(), "{}".to_owned())].into());
    configmaps
        .replace("fleet-edge-journal", &Default::default(), &journal)
        .await
        .unwrap();
    edge_args(&["--hub-kubeconfig", hub_kc.to_str().unwrap()]).ok();
    let kept = configmaps.get("fleet-edge-journal").await.unwrap();
    assert_eq!(kept.data.unwrap()["journal"], "{}");
}

// ---------------------------------------------------------------------------
// Uninstall.

on_both_lanes! {
async fn uninstall_removes_the_operator_and_keeps_sites_unless_asked(lane) {
    let hub = Hub::bare_on(lane, Default::default());
    hub.fleet(&["install", "--apply"]).ok();
    hub.register("site-a", &[]);
    hub.register("site-b", &[]);
    let client = hub.admin().await;

    // A hub with sites is removed only when confirmed.
    let refused = hub.fleet(&["uninstall"]);
    assert!(refused.one_line_error().contains("with 2 registered sites"));
    let run = hub.fleet(&["uninstall", "--yes"]).ok();
    assert!(
        run.stderr
            .contains("Deployment fleet-system/fleet-operator-hub deleted")
            && run
                .stderr
                .contains("ClusterRole fleet-operator-hub deleted"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("CustomResourceDefinition"),
        "{}",
        run.stderr
    );
    assert!(
        Api::<Deployment>::namespaced(client.clone(), "fleet-system")
            .get_opt("fleet-operator-hub")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        Api::<ClusterRole>::all(client.clone())
            .get_opt("fleet-operator-hub")
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(
        Api::<FederatedCluster>::all(client.clone())
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .len(),
        2
    );
    // The sites' own identities are not the operator's: they stay.
    Api::<ClusterRole>::all(client.clone())
        .get("fleet-edge-site-a")
        .await
        .unwrap();
    // Idempotent.
    let again = hub.fleet(&["uninstall", "--yes"]).ok();
    assert!(
        again.stderr.contains("nothing to remove"),
        "{}",
        again.stderr
    );

    // Deleting the CRDs deletes every site: without a terminal, only with --yes.
    let line = hub.fleet(&["uninstall", "--crds"]).one_line_error();
    assert!(
        line.contains("delete the fleet CRDs and with them all 2 registered sites")
            && line.contains("--yes"),
        "{line}"
    );
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.get(CRD).await.unwrap();
    let run = hub.fleet(&["uninstall", "--crds", "--yes"]).ok();
    assert!(
        run.stderr
            .contains(&format!("CustomResourceDefinition {CRD} deleted")),
        "{}",
        run.stderr
    );
    assert!(crds.get_opt(CRD).await.unwrap().is_none());
}
}

/// Runs `kubectl-fleet ARGS` on a pseudo-terminal (util-linux `script`),
/// typing `answer`; returns what the terminal showed.
fn on_terminal(hub: &Hub, args: &str, answer: &str) -> String {
    use std::io::{Read as _, Write as _};
    let command = format!(
        "{} --kubeconfig {} {args}",
        support::BIN,
        hub.kubeconfig.display()
    );
    let mut child = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("HOME", hub.dir.path())
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("util-linux script");
    // Stdin stays open until the command ends: the answer waits in the
    // terminal's input queue until the prompt reads it.
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(answer.as_bytes()).unwrap();
    let mut shown = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut shown)
        .unwrap();
    child.wait().unwrap();
    drop(stdin);
    shown
}

on_both_lanes! {
async fn uninstall_crds_on_a_terminal_asks_naming_the_site_count(lane) {
    let hub = Hub::on(lane);
    for site in ["site-a", "site-b", "site-c"] {
        hub.register(site, &[]);
    }
    let crds: Api<CustomResourceDefinition> = Api::all(hub.admin().await);

    let shown = on_terminal(&hub, "uninstall --crds", "n");
    assert!(
        shown.contains("Delete the fleet CRDs and with them all 3 registered sites? [y/N]"),
        "{shown}"
    );
    assert!(shown.contains("error: aborted"), "{shown}");
    crds.get(CRD).await.unwrap();

    let shown = on_terminal(&hub, "uninstall --crds", "y");
    assert!(
        shown.contains(&format!("CustomResourceDefinition {CRD} deleted")),
        "{shown}"
    );
    assert!(crds.get_opt(CRD).await.unwrap().is_none());
}
}

/// A minimal CRD for one of the Prometheus Operator's kinds (the schema
/// keeps every field: only the kind's being served matters here).
fn prometheus_operator_crd(kind: &str, plural: &str) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": { "name": format!("{plural}.monitoring.coreos.com") },
        "spec": {
            "group": "monitoring.coreos.com",
            "scope": "Namespaced",
            "names": { "kind": kind, "plural": plural, "singular": kind.to_lowercase(), "listKind": format!("{kind}List") },
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": { "openAPIV3Schema": { "type": "object", "x-kubernetes-preserve-unknown-fields": true } }
            }]
        }
    }))
    .unwrap()
}

#[tokio::test]
async fn monitoring_needs_the_prometheus_operator_and_uninstall_removes_it() {
    let hub = Hub::bare(Default::default());
    let client = hub.admin().await;
    let config_maps: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(client.clone(), "fleet-system");
    let reader = "fleet-operator-metrics-reader";

    // Without the Prometheus Operator's CRDs, nothing is applied.
    let line = hub
        .fleet(&["install", "--with-monitoring", "--apply"])
        .one_line_error();
    assert!(
        line.contains("ServiceMonitor")
            && line.contains("PrometheusRule")
            && line.contains("nothing applied")
            && line.contains("install the Prometheus Operator's CRDs first"),
        "{line}"
    );
    assert!(
        Api::<ClusterRole>::all(client.clone())
            .get_opt("fleet-operator-hub")
            .await
            .unwrap()
            .is_none(),
        "the hub was applied before the check"
    );

    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for (kind, plural) in [
        ("ServiceMonitor", "servicemonitors"),
        ("PrometheusRule", "prometheusrules"),
    ] {
        crds.create(&Default::default(), &prometheus_operator_crd(kind, plural))
            .await
            .unwrap();
    }
    hub.fleet(&["install", "--with-monitoring", "--apply"]).ok();
    config_maps.get("fleet-operator-dashboard").await.unwrap();
    Api::<ClusterRole>::all(client.clone())
        .get(reader)
        .await
        .unwrap();

    let run = hub.fleet(&["uninstall", "--yes"]).ok();
    for gone in [
        "ServiceMonitor fleet-system/fleet-operator deleted",
        "PrometheusRule fleet-system/fleet-operator deleted",
        "ConfigMap fleet-system/fleet-operator-dashboard deleted",
        "ClusterRole fleet-operator-metrics-reader deleted",
        "Deployment fleet-system/fleet-operator-hub deleted",
    ] {
        assert!(run.stderr.contains(gone), "{gone}: {}", run.stderr);
    }
    assert!(
        config_maps
            .get_opt("fleet-operator-dashboard")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        Api::<ClusterRole>::all(client.clone())
            .get_opt(reader)
            .await
            .unwrap()
            .is_none()
    );
}

/// `install --apply` checks that every kind is served before it applies
/// anything, and then applies: discovery is asked once per kind, not once
/// for the check and again for the apply.
#[test]
fn install_asks_discovery_once_per_kind() {
    let hub = Hub::bare(Default::default());
    let printed = docs(&hub.fleet(&["install"]).ok().stdout);
    let mut kinds: std::collections::BTreeSet<(String, String)> = printed
        .iter()
        .map(|d| {
            (
                d["apiVersion"].as_str().unwrap().to_owned(),
                d["kind"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    // What printing leaves out: the serving certificate `--apply` makes.
    kinds.insert(("v1".into(), "Secret".into()));
    let controls = hub.sandbox.controls();
    controls.clear_request_log();
    hub.fleet(&["install", "--apply"]).ok();
    let discovery = controls
        .request_log()
        .iter()
        .filter(|r| {
            r.verb == "get"
                && (r.path == "/api/v1"
                    || (r.path.starts_with("/apis/") && r.path.matches('/').count() == 3))
        })
        .count();
    assert_eq!(discovery, kinds.len(), "{kinds:?}");
}

// ---------------------------------------------------------------------------
// The hub's serving certificate and what surrounds the operator.

const SERVER_NAME: &str = "fleet-operator-hub.fleet-system.svc";

async fn serving_secret(hub: &Hub, name: &str) -> std::collections::BTreeMap<String, Vec<u8>> {
    Api::<k8s_openapi::api::core::v1::Secret>::namespaced(hub.admin().await, "fleet-system")
        .get(name)
        .await
        .unwrap()
        .data
        .unwrap()
        .into_iter()
        .map(|(k, v)| (k, v.0))
        .collect()
}

fn pem_files(
    dir: &TempDir,
    data: &std::collections::BTreeMap<String, Vec<u8>>,
) -> (String, String) {
    let cert = dir.path().join("tls.crt");
    let key = dir.path().join("tls.key");
    std::fs::write(&cert, &data["tls.crt"]).unwrap();
    support::write_private(&key, std::str::from_utf8(&data["tls.key"]).unwrap());
    (cert.display().to_string(), key.display().to_string())
}

/// Opens a TLS connection to `addr` as a client that trusts only `ca_pem`
/// and expects the certificate to name `server_name` (what the
/// ServiceMonitor's `tlsConfig` does), and asks for `/healthz`.
async fn verified_get(addr: &str, ca_pem: &[u8], server_name: &str) -> Result<String, String> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut tls = support::tls_connect(addr, ca_pem, server_name)
        .await
        .map_err(|e| e.to_string())?;
    tls.write_all(b"GET /healthz HTTP/1.1\r\nHost: hub\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut raw = Vec::new();
    let _ = tls.read_to_end(&mut raw).await;
    Ok(String::from_utf8_lossy(&raw).into_owned())
}

/// `install --apply` makes the hub's serving certificate once: a client
/// that trusts only the Secret's `ca.crt` reaches the operator serving it
/// under the Service's name (as the ServiceMonitor does), and nothing
/// else passes for it. A re-run keeps it; one that no longer verifies is
/// replaced and the pods roll.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn install_makes_a_serving_certificate_a_client_verifies_and_keeps_it() {
    let hub = Hub::bare(Default::default());
    let first = hub.fleet(&["install", "--apply"]).ok();
    assert!(
        first
            .stderr
            .contains("Secret fleet-system/fleet-operator-hub-tls applied"),
        "{}",
        first.stderr
    );
    let data = serving_secret(&hub, "fleet-operator-hub-tls").await;
    let rolled = |deploy: &Deployment| {
        deploy
            .spec
            .as_ref()
            .unwrap()
            .template
            .metadata
            .as_ref()
            .unwrap()
            .annotations
            .as_ref()
            .unwrap()["federation.kubectl-fleet.dev/serving-cert"]
            .clone()
    };
    let digest = rolled(&hub_deployment(&hub).await);

    // The hub, with its own ServiceAccount's token and the Secret's files
    // where the Deployment mounts them.
    let dir = TempDir::new("serving");
    let (cert, key) = pem_files(&dir, &data);
    let token = support::service_account_token(
        &hub.admin().await,
        "fleet-system",
        "fleet-operator-hub",
        std::time::Duration::from_secs(3600),
    )
    .await;
    let kc = dir.path().join("operator.kubeconfig");
    support::write_private(&kc, &hub.sandbox.kubeconfig_for_token(&token));
    let mut args = support::hub_args(&kc, "hub", 1.0);
    args.extend([
        format!("--tls-cert-file={cert}"),
        format!("--tls-private-key-file={key}"),
    ]);
    let operator = support::Proc::spawn(
        "hub",
        &support::operator_bin(),
        &args,
        dir.path().join("hub.log"),
    );
    support::wait_until(
        std::time::Duration::from_secs(15),
        "the hub serves",
        || async { operator.log_text().contains("hub started") },
    )
    .await;
    let addr = support::logged_addr(&operator.log_text(), "serving HTTPS");
    for name in [
        SERVER_NAME,
        "fleet-operator-hub",
        "fleet-operator-hub.fleet-system",
        "fleet-operator-hub.fleet-system.svc.cluster.local",
    ] {
        let answer = verified_get(&addr, &data["ca.crt"], name).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{name}: {answer}");
    }
    // Another name, or another CA: refused.
    let refused = verified_get(&addr, &data["ca.crt"], "fleet-operator-hub.default.svc").await;
    assert!(refused.is_err(), "{refused:?}");
    let other = rcgen::generate_simple_self_signed(vec![SERVER_NAME.to_owned()]).unwrap();
    let refused = verified_get(&addr, other.cert.pem().as_bytes(), SERVER_NAME).await;
    assert!(refused.is_err(), "{refused:?}");
    drop(operator);

    // A re-run keeps it, and the pods with it.
    let again = hub.fleet(&["install", "--apply"]).ok();
    assert!(
        again.stderr.contains(&format!(
            "Secret fleet-system/fleet-operator-hub-tls kept: its certificate verifies for {SERVER_NAME}"
        )),
        "{}",
        again.stderr
    );
    assert_eq!(serving_secret(&hub, "fleet-operator-hub-tls").await, data);
    assert_eq!(rolled(&hub_deployment(&hub).await), digest);

    // A certificate that does not verify for the Service is replaced.
    let wrong = rcgen::generate_simple_self_signed(vec!["elsewhere".to_owned()]).unwrap();
    let secrets =
        Api::<k8s_openapi::api::core::v1::Secret>::namespaced(hub.admin().await, "fleet-system");
    let b64 = |s: String| base64::engine::general_purpose::STANDARD.encode(s);
    secrets
        .patch(
            "fleet-operator-hub-tls",
            &PatchParams::default(),
            &Patch::Merge(json!({ "data": {
                "tls.crt": b64(wrong.cert.pem()),
                "tls.key": b64(wrong.signing_key.serialize_pem()),
                "ca.crt": b64(wrong.cert.pem()),
            } })),
        )
        .await
        .unwrap();
    let replaced = hub.fleet(&["install", "--apply"]).ok();
    assert!(
        replaced.stderr.contains(
            "Secret fleet-system/fleet-operator-hub-tls replaced with a new certificate and CA: its tls.crt does not verify"
        ),
        "{}",
        replaced.stderr
    );
    let fresh = serving_secret(&hub, "fleet-operator-hub-tls").await;
    assert_ne!(fresh["ca.crt"], data["ca.crt"]);
    assert_ne!(rolled(&hub_deployment(&hub).await), digest, "the pods roll");
    // Nothing in the output is the key.
    for run in [&first, &again, &replaced] {
        assert!(!run.stderr.contains("PRIVATE KEY") && !run.stdout.contains("PRIVATE KEY"));
    }
}

#[test]
fn printing_says_how_the_certificate_is_made_and_stays_deterministic() {
    let dir = TempDir::new("print");
    let a = run_bin(&["install"], dir.path()).ok();
    let b = run_bin(&["install"], dir.path()).ok();
    assert_eq!(
        a.stdout, b.stdout,
        "the same flags print the same manifests"
    );
    assert!(docs(&a.stdout).iter().all(|d| d["kind"] != "Secret"));
    assert!(
        a.stderr
            .contains("Secret fleet-system/fleet-operator-hub-tls")
            && a.stderr
                .contains("`kubectl fleet install --apply` generates it")
            && a.stderr.contains("--with-cert-manager")
            && a.stderr.contains("--tls-secret"),
        "{}",
        a.stderr
    );
    let given = run_bin(&["install", "--tls-secret", "mine"], dir.path()).ok();
    assert_eq!(given.stderr, "");
    let printed = docs(&given.stdout);
    let deploy = printed.iter().find(|d| d["kind"] == "Deployment").unwrap();
    assert_eq!(
        deploy["spec"]["template"]["spec"]["volumes"][0]["secret"]["secretName"],
        "mine"
    );
    // Namespaces, and who may reach the operator.
    for ns in printed.iter().filter(|d| d["kind"] == "Namespace") {
        assert_eq!(
            ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"],
            "restricted"
        );
    }
    let names: Vec<&str> = printed
        .iter()
        .filter(|d| d["kind"] == "Namespace")
        .map(|d| d["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fleet-system", "fleet-sites"]);
    assert!(printed.iter().any(|d| d["kind"] == "NetworkPolicy"));
    let bad = run_bin(&["install", "--tls-secret", "Not_A_Name"], dir.path());
    assert_ne!(bad.code, 0);
    let both = run_bin(
        &["install", "--tls-secret", "mine", "--with-cert-manager"],
        dir.path(),
    );
    assert_ne!(both.code, 0);
    let edge = run_bin(
        &[
            "install",
            "--role",
            "edge",
            "--site",
            "a",
            "--with-cert-manager",
        ],
        dir.path(),
    )
    .one_line_error();
    assert!(
        edge.contains("--with-cert-manager only applies to --role hub"),
        "{edge}"
    );
}

/// `--tls-secret`: the Secret must exist and serve the Service's name
/// before anything is applied; then the hub mounts it and install makes
/// none.
#[tokio::test]
async fn a_given_certificate_is_checked_before_anything_is_applied() {
    let hub = Hub::bare(Default::default());
    let client = hub.admin().await;
    let nothing_applied = || async {
        Api::<ClusterRole>::all(client.clone())
            .get_opt("fleet-operator-hub")
            .await
            .unwrap()
            .is_none()
    };
    let line = hub
        .fleet(&["install", "--apply", "--tls-secret", "mine"])
        .one_line_error();
    assert!(
        line.contains("Secret fleet-system/mine (--tls-secret) does not exist")
            && line.contains(
                "tls.crt (valid for fleet-operator-hub.fleet-system.svc), tls.key and ca.crt"
            ),
        "{line}"
    );
    assert!(nothing_applied().await);

    // A certificate for another name.
    Api::<k8s_openapi::api::core::v1::Namespace>::all(client.clone())
        .create(
            &Default::default(),
            &serde_json::from_value(json!({ "metadata": { "name": "fleet-system" } })).unwrap(),
        )
        .await
        .unwrap();
    let wrong = rcgen::generate_simple_self_signed(vec!["elsewhere".to_owned()]).unwrap();
    let secret = |cert: &str, key: &str, ca: &str| -> k8s_openapi::api::core::v1::Secret {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        serde_json::from_value(json!({
            "metadata": { "name": "mine", "namespace": "fleet-system" },
            "type": "kubernetes.io/tls",
            "data": { "tls.crt": b64(cert), "tls.key": b64(key), "ca.crt": b64(ca) },
        }))
        .unwrap()
    };
    let secrets =
        Api::<k8s_openapi::api::core::v1::Secret>::namespaced(client.clone(), "fleet-system");
    let pem = wrong.cert.pem();
    secrets
        .create(
            &Default::default(),
            &secret(&pem, &wrong.signing_key.serialize_pem(), &pem),
        )
        .await
        .unwrap();
    let line = hub
        .fleet(&["install", "--apply", "--tls-secret", "mine"])
        .one_line_error();
    assert!(
        line.contains("cannot serve: its tls.crt does not verify against its ca.crt for fleet-operator-hub.fleet-system.svc"),
        "{line}"
    );
    assert!(!line.contains("BEGIN"), "{line}");
    assert!(nothing_applied().await);

    // One for the Service's name (self-signed: its own CA).
    let right = rcgen::generate_simple_self_signed(vec![SERVER_NAME.to_owned()]).unwrap();
    let pem = right.cert.pem();
    secrets.delete("mine", &Default::default()).await.unwrap();
    secrets
        .create(
            &Default::default(),
            &secret(&pem, &right.signing_key.serialize_pem(), &pem),
        )
        .await
        .unwrap();
    let run = hub
        .fleet(&["install", "--apply", "--tls-secret", "mine"])
        .ok();
    assert!(
        !run.stderr.contains("fleet-operator-hub-tls"),
        "{}",
        run.stderr
    );
    let deploy = hub_deployment(&hub).await;
    let pod = deploy.spec.unwrap().template.spec.unwrap();
    assert_eq!(
        pod.volumes.unwrap()[0]
            .secret
            .as_ref()
            .unwrap()
            .secret_name
            .as_deref(),
        Some("mine")
    );
    assert!(
        secrets
            .get_opt("fleet-operator-hub-tls")
            .await
            .unwrap()
            .is_none(),
        "install made no certificate of its own"
    );
    // What install made is labelled; the namespaces enforce "restricted".
    for ns in ["fleet-system", "fleet-sites"] {
        let labels = Api::<k8s_openapi::api::core::v1::Namespace>::all(client.clone())
            .get(ns)
            .await
            .unwrap()
            .metadata
            .labels
            .unwrap();
        assert_eq!(
            labels["pod-security.kubernetes.io/enforce"], "restricted",
            "{ns}"
        );
    }
    Api::<k8s_openapi::api::networking::v1::NetworkPolicy>::namespaced(client, "fleet-system")
        .get("fleet-operator-hub")
        .await
        .unwrap();
}

fn cert_manager_crd(kind: &str, plural: &str) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": { "name": format!("{plural}.cert-manager.io") },
        "spec": {
            "group": "cert-manager.io",
            "scope": "Namespaced",
            "names": { "kind": kind, "plural": plural, "singular": kind.to_lowercase(), "listKind": format!("{kind}List") },
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": { "openAPIV3Schema": { "type": "object", "x-kubernetes-preserve-unknown-fields": true } }
            }]
        }
    }))
    .unwrap()
}

#[tokio::test]
async fn cert_manager_needs_its_crds_and_makes_the_certificate_instead() {
    let hub = Hub::bare(Default::default());
    let client = hub.admin().await;
    let line = hub
        .fleet(&["install", "--apply", "--with-cert-manager"])
        .one_line_error();
    assert!(
        line.contains("cert-manager.io/v1/Issuer")
            && line.contains("cert-manager.io/v1/Certificate")
            && line.contains("nothing applied")
            && line.contains("install cert-manager first"),
        "{line}"
    );
    assert!(
        Api::<ClusterRole>::all(client.clone())
            .get_opt("fleet-operator-hub")
            .await
            .unwrap()
            .is_none()
    );
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for (kind, plural) in [("Issuer", "issuers"), ("Certificate", "certificates")] {
        crds.create(&Default::default(), &cert_manager_crd(kind, plural))
            .await
            .unwrap();
    }
    let run = hub
        .fleet(&["install", "--apply", "--with-cert-manager"])
        .ok();
    for applied in [
        "Issuer fleet-system/fleet-operator-selfsigned applied",
        "Certificate fleet-system/fleet-operator-ca applied",
        "Issuer fleet-system/fleet-operator-ca applied",
        "Certificate fleet-system/fleet-operator-hub applied",
    ] {
        assert!(run.stderr.contains(applied), "{applied}: {}", run.stderr);
    }
    assert!(!run.stderr.contains("Secret"), "{}", run.stderr);

    let removed = hub.fleet(&["uninstall", "--yes"]).ok();
    for gone in [
        "Certificate fleet-system/fleet-operator-hub deleted",
        "Issuer fleet-system/fleet-operator-selfsigned deleted",
        "NetworkPolicy fleet-system/fleet-operator-hub deleted",
    ] {
        assert!(removed.stderr.contains(gone), "{gone}: {}", removed.stderr);
    }
}
