//! Pull mode end to end: a real hub `fleet-operator` process probes member
//! kube-sandboxes through the kubeconfig Secrets `kubectl fleet register
//! --pull` stored, and tells through the API why a site is not Connected.
//! Every failure reason is produced for real: a revoked token, a removed
//! role binding (of the site's own identity on the member), a member answering too slowly, a stopped member, a wrong
//! CA, a name that does not resolve, a deleted Secret, garbage and an exec
//! kubeconfig. A Push site with its edge runs alongside.
//!
//! Intervals: `heartbeatIntervalSeconds: 10` scaled by the hidden
//! `--interval-scale 0.3`, so I = 3 s; `--probe-timeout 4s` (generous, so
//! a loaded CI machine never turns a healthy probe into a Timeout).

use crate::support;

use std::path::PathBuf;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{
    CONDITION_CONNECTED, CONDITION_REMEDIATION_CAPABLE, FederatedCluster, Phase,
};
use kubectl_fleet::fleet::rbac;
use support::*;

const SCALE: &str = "0.3";
const WAIT: Duration = CONDITION_WAIT;

/// A member sandbox with one node of 4 GPUs (3 allocatable).
async fn member(dir: &TempDir, name: &str) -> (Sandbox, PathBuf) {
    member_sandbox(dir, name, (4, 3)).await
}

/// Puts `kubeconfig` into the site's pull Secret, as someone editing it by
/// hand would.
async fn set_pull_secret(hub: &kube::Client, site: &str, kubeconfig: &[u8]) {
    let secrets: Api<Secret> = Api::namespaced(hub.clone(), rbac::FLEET_NAMESPACE);
    let mut data = std::collections::BTreeMap::new();
    data.insert("kubeconfig".to_owned(), ByteString(kubeconfig.to_vec()));
    let patch = serde_json::json!({ "data": data });
    secrets
        .patch(
            &rbac::pull_secret_name(site),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .unwrap();
}

fn pull_secret_text(secret: &Secret) -> String {
    String::from_utf8(secret.data.as_ref().unwrap()["kubeconfig"].0.clone()).unwrap()
}

/// Installs the LLMKube and KServe inference CRDs on a member and creates
/// two Models, a Ready LLMKube InferenceService and a failed KServe one, so
/// the prober's discovery finds them through the read-only identity.
async fn install_inference(member: &kube::Client) {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let crds: Api<CustomResourceDefinition> = Api::all(member.clone());
    for (group, version, kind, plural) in [
        ("inference.llmkube.dev", "v1alpha1", "Model", "models"),
        (
            "inference.llmkube.dev",
            "v1alpha1",
            "InferenceService",
            "inferenceservices",
        ),
        (
            "serving.kserve.io",
            "v1beta1",
            "InferenceService",
            "inferenceservices",
        ),
    ] {
        let crd: CustomResourceDefinition = serde_json::from_value(serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {"group": group, "scope": "Namespaced",
                "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(), "listKind": format!("{kind}List")},
                "versions": [{"name": version, "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
        }))
        .unwrap();
        crds.create(&Default::default(), &crd).await.unwrap();
    }
    ensure_namespace(member, "ml").await;
    let objects = [
        (
            "inference.llmkube.dev/v1alpha1",
            "Model",
            "models",
            "llama",
            serde_json::json!({}),
        ),
        (
            "inference.llmkube.dev/v1alpha1",
            "Model",
            "models",
            "mistral",
            serde_json::json!({}),
        ),
        (
            "inference.llmkube.dev/v1alpha1",
            "InferenceService",
            "inferenceservices",
            "chat",
            serde_json::json!({"phase": "Ready"}),
        ),
        (
            "serving.kserve.io/v1beta1",
            "InferenceService",
            "inferenceservices",
            "vision",
            serde_json::json!({"conditions": [{"type": "Ready", "status": "False",
                "reason": "ModelLoadFailed", "message": "weights not found"}]}),
        ),
    ];
    for (api_version, kind, plural, name, status) in objects {
        let (group, version) = api_version.split_once('/').unwrap();
        let gvk = kube::core::GroupVersionKind::gvk(group, version, kind);
        let ar = kube::api::ApiResource::from_gvk_with_plural(&gvk, plural);
        let api: Api<kube::api::DynamicObject> = Api::namespaced_with(member.clone(), "ml", &ar);
        let obj: kube::api::DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": api_version, "kind": kind,
            "metadata": {"name": name, "namespace": "ml"},
            "spec": {}, "status": status
        }))
        .unwrap();
        let mut last = None;
        for _ in 0..50 {
            match api.create(&Default::default(), &obj).await {
                Ok(_) => {
                    last = None;
                    break;
                }
                // The new CRD may not be served yet.
                Err(e) => last = Some(e),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(last.is_none(), "creating {kind} {name}: {last:?}");
    }
}

on_both_lanes! {
multi_thread async fn pull_sites_connect_or_say_why_not_and_recover_without_a_restart(lane) {
    let dir = TempDir::new("pull");
    let hub_sb = lane.sandbox();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let hub = admin(&hub_sb).await;
    let api: Api<FederatedCluster> = Api::all(hub.clone());
    let secrets: Api<Secret> = Api::namespaced(hub.clone(), rbac::FLEET_NAMESPACE);

    let (healthy_sb, healthy_kc) = member(&dir, "healthy").await;
    install_inference(&admin(&healthy_sb).await).await;
    let (revoked_sb, revoked_kc) = member(&dir, "revoked").await;
    let (forbidden_sb, forbidden_kc) = member(&dir, "forbidden").await;
    let (slow_sb, slow_kc) = member(&dir, "slow").await;
    let (stopped_sb, stopped_kc) = member(&dir, "stopped").await;

    for (site, kc) in [
        ("healthy", &healthy_kc),
        ("revoked", &revoked_kc),
        ("forbidden", &forbidden_kc),
        ("slow", &slow_kc),
        ("stopped", &stopped_kc),
        ("gone", &healthy_kc),
        ("garbage", &healthy_kc),
    ] {
        register_pull(&hub_kc, site, kc, &[]);
    }
    // Kubeconfigs the hub must refuse or cannot use, stored as given.
    let marker = dir.join("exec-ran");
    let healthy_stored = pull_secret_text(
        &secrets
            .get(&rbac::pull_secret_name("healthy"))
            .await
            .unwrap(),
    );
    let exec_kc = dir.join("exec.kubeconfig");
    write_private(
        &exec_kc,
        &format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: m\nclusters:\n- name: m\n  cluster:\n    server: {}\n    insecure-skip-tls-verify: true\ncontexts:\n- name: m\n  context: {{cluster: m, user: u}}\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: touch\n      args: [{}]\n      interactiveMode: Never\n",
            healthy_sb.url(),
            marker.display()
        ),
    );
    register_pull(&hub_kc, "exec", &exec_kc, &["--store-kubeconfig-as-is"]);
    // The healthy member's credential, but another member's CA.
    let tls_kc = dir.join("tls.kubeconfig");
    let revoked_ca = revoked_sb.admin_kubeconfig();
    let ca_line = |kc: &str| {
        kc.lines()
            .find(|l| l.contains("certificate-authority-data"))
            .unwrap()
            .to_owned()
    };
    write_private(
        &tls_kc,
        &healthy_stored.replace(&ca_line(&healthy_stored), &ca_line(&revoked_ca)),
    );
    register_pull(&hub_kc, "tls", &tls_kc, &["--store-kubeconfig-as-is"]);
    let dns_kc = dir.join("dns.kubeconfig");
    write_private(
        &dns_kc,
        &healthy_stored.replace(&healthy_sb.url(), "https://member.fleet-test.invalid:6443"),
    );
    register_pull(&hub_kc, "dns", &dns_kc, &["--store-kubeconfig-as-is"]);

    // A Push site with its edge, side by side.
    fleet_register(&hub_kc, "push", 10, &dir.join("push.kubeconfig"), &[]);
    let _edge = Proc::spawn(
        "edge",
        &operator_bin(),
        &edge_args(
            "push",
            &healthy_kc,
            &dir.join("push.kubeconfig"),
            SCALE.parse().unwrap(),
        ),
        dir.join("edge.log"),
    );

    // Break members and Secrets before the hub starts, the way they break
    // in the field.
    let revoked_admin = admin(&revoked_sb).await;
    let member_sa: Api<ServiceAccount> =
        Api::namespaced(revoked_admin.clone(), rbac::FLEET_NAMESPACE);
    member_sa
        .delete(
            &rbac::pull_identity_name("revoked"),
            &DeleteParams::default(),
        )
        .await
        .unwrap();
    Api::<ClusterRoleBinding>::all(admin(&forbidden_sb).await)
        .delete(
            &rbac::pull_identity_name("forbidden"),
            &DeleteParams::default(),
        )
        .await
        .unwrap();
    slow_sb.controls().set_latency(Duration::from_secs(8));
    stopped_sb.shutdown();
    secrets
        .delete(&rbac::pull_secret_name("gone"), &DeleteParams::default())
        .await
        .unwrap();
    set_pull_secret(&hub, "garbage", b"{not: [a kubeconfig").await;

    let (cert, key, ca) = localhost_cert(&dir);
    let operator_kc = hub_operator_kubeconfig(&hub_sb, &dir).await;
    let mut args = hub_args(&operator_kc, "hub-1", SCALE.parse().unwrap());
    args.extend([
        "--probe-timeout".to_owned(),
        "4s".to_owned(),
        // The members are kube-sandboxes on the hub's own loopback.
        "--pull-allow-cidr".to_owned(),
        "127.0.0.0/8".to_owned(),
        "--tls-cert-file".to_owned(),
        cert.display().to_string(),
        "--tls-private-key-file".to_owned(),
        key.display().to_string(),
    ]);
    let mut hub_proc = Proc::spawn("hub", &operator_bin(), &args, dir.join("hub.log"));

    // Healthy: Connected through probing, with the member's inventory.
    wait_connected(&api, "healthy", "True", "ProbeSucceeded").await;
    wait_until(WAIT, "healthy Connected", || async {
        api.get("healthy").await.unwrap().phase() == Some(Phase::Connected)
    })
    .await;
    let healthy = api.get("healthy").await.unwrap().status.unwrap();
    assert!(healthy.last_probe_duration_milliseconds.is_some());
    assert!(
        healthy
            .kubernetes_version
            .as_deref()
            .is_some_and(|v| v.starts_with('v')),
        "{healthy:?}"
    );
    assert_eq!(healthy.node_count, Some(1));
    assert!(healthy.namespace_count.unwrap() >= 1);
    let capacity = healthy.capacity.unwrap();
    assert_eq!((capacity.gpus_total, capacity.gpus_allocatable), (4, 3));
    assert_eq!(
        capacity.gpus_by_vendor["nvidia.com/gpu"].total, 4,
        "GPUs by vendor"
    );
    // Each probe is one observation of the site's probe-duration histogram.
    let reader = reader_token(&hub).await;
    let addr = logged_addr(&hub_proc.log_text(), "serving HTTPS");
    let (code, body) = https_get(&addr, "/metrics", Some(&reader), &ca).await;
    assert_eq!(code, 200, "{body}");
    let scrape = Scrape::parse(&body);
    let probes = scrape
        .value(
            "federation_health_check_duration_seconds_count",
            &[("cluster", "healthy")],
        )
        .unwrap_or_default();
    assert!(probes >= 1.0, "healthy probed {probes} times:\n{body}");
    // From here on, count what probing the steady healthy site costs.
    healthy_sb.controls().clear_request_log();
    hub_sb.controls().clear_request_log();

    // Inference objects found by discovery on the member.
    let inference = healthy.inference.unwrap();
    assert_eq!(
        (
            inference.models,
            inference.services_ready,
            inference.services_failed,
            inference.services_total
        ),
        (2, 1, 1, 2)
    );
    let failed: Vec<_> = healthy
        .signals
        .unwrap_or_default()
        .into_iter()
        .filter(|s| s.type_.as_str() == "InferenceServiceFailed")
        .collect();
    assert_eq!(failed.len(), 1, "the failed KServe service is a signal");
    assert_eq!(failed[0].workload.name, "vision");
    // The site does not ask for remediation: nothing is claimed about the
    // member's write access (a site that asks: operator_pull_trust.rs).
    let (status, reason, message) = condition(&api, "healthy", CONDITION_REMEDIATION_CAPABLE)
        .await
        .unwrap();
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "NotRequested")
    );
    assert!(
        message.contains("capabilities do not include remediation"),
        "{message}"
    );

    // Each failure with its reason, and no secret in the message.
    let m = wait_connected(&api, "revoked", "False", "Unauthorized").await;
    assert!(m.contains("kubectl fleet register revoked --pull"), "{m}");
    // The leader recorded the failure as an Event on the site, once (the
    // failure repeats at every probe, with the same class).
    let events: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(hub.clone(), "default");
    let failed =
        kube::api::ListParams::default().fields("involvedObject.name=revoked,reason=ProbeFailed");
    wait_until(WAIT, "a ProbeFailed Event", || async {
        !events.list(&failed).await.unwrap().items.is_empty()
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let listed = events.list(&failed).await.unwrap().items;
    assert_eq!(listed.len(), 1, "{listed:?}");
    let note = listed[0].message.as_deref().unwrap_or_default();
    assert!(note.starts_with("Unauthorized: "), "{note}");
    assert_eq!(listed[0].type_.as_deref(), Some("Warning"));
    // What the user sees: the reason in `status -o wide` and `describe`.
    let wide = fleet_cli(&hub_kc, &["status", "-o", "wide", "revoked"]);
    let row = wide.lines().find(|l| l.starts_with("revoked")).unwrap();
    assert!(row.trim_end().ends_with("Unauthorized"), "{wide}");
    let described = fleet_cli(&hub_kc, &["describe", "revoked"]);
    assert!(
        described.contains("Pull Secret:        fleet-system/fleet-pull-revoked"),
        "{described}"
    );
    assert!(
        !described.contains("Last Probe:"),
        "never probed successfully: {described}"
    );
    let connected_line = described
        .lines()
        .find(|l| l.trim_start().starts_with("Connected "))
        .unwrap();
    assert!(connected_line.contains("Unauthorized"), "{described}");
    let json: serde_json::Value =
        serde_json::from_str(&fleet_cli(&hub_kc, &["describe", "revoked", "-o", "json"])).unwrap();
    assert_eq!(json["kind"], "SiteDescription");
    assert_eq!(json["heartbeatClock"], "hub");
    wait_connected(&api, "forbidden", "False", "Forbidden").await;
    let m = wait_connected(&api, "slow", "False", "Timeout").await;
    assert!(m.contains("(4s)"), "{m}");
    wait_connected(&api, "stopped", "False", "ConnectionRefused").await;
    wait_connected(&api, "tls", "False", "TLS").await;
    wait_connected(&api, "dns", "False", "DNS").await;
    let m = wait_connected(&api, "gone", "False", "SecretNotFound").await;
    assert!(m.contains("fleet-pull-gone"), "{m}");
    let m = wait_connected(&api, "garbage", "False", "InvalidKubeconfig").await;
    assert!(
        !m.contains("not: ["),
        "the Secret's text is not echoed: {m}"
    );
    let m = wait_connected(&api, "exec", "False", "InvalidKubeconfig").await;
    assert!(m.contains("exec"), "{m}");
    assert!(
        !marker.exists(),
        "the hub never runs a command a Secret names"
    );
    for site in ["revoked", "forbidden", "stopped", "tls", "gone", "garbage"] {
        assert_eq!(
            api.get(site).await.unwrap().phase(),
            Some(Phase::Pending),
            "{site}: never probed successfully"
        );
    }

    // Push and Pull side by side.
    wait_until(WAIT, "push site Connected", || async {
        api.get("push").await.unwrap().phase() == Some(Phase::Connected)
    })
    .await;

    // Fixed by registering again: the rotated Secret is used on the next
    // probe, without restarting the hub; the old token stays dead.
    let before = pull_secret_text(
        &secrets
            .get(&rbac::pull_secret_name("revoked"))
            .await
            .unwrap(),
    );
    register_pull(&hub_kc, "revoked", &revoked_kc, &[]);
    let after = pull_secret_text(
        &secrets
            .get(&rbac::pull_secret_name("revoked"))
            .await
            .unwrap(),
    );
    assert_ne!(before, after, "a fresh token was stored");
    wait_connected(&api, "revoked", "True", "ProbeSucceeded").await;
    wait_until(WAIT, "revoked site Connected", || async {
        api.get("revoked").await.unwrap().phase() == Some(Phase::Connected)
    })
    .await;
    slow_sb.controls().set_latency(Duration::ZERO);
    wait_connected(&api, "slow", "True", "ProbeSucceeded").await;

    // A steady Pull site costs one status write per probe: the prober's
    // change-only merge patch (no hub PUT without a transition), and the
    // member sees one read of /version per probe.
    let probes_seen = || {
        healthy_sb
            .controls()
            .request_log()
            .iter()
            .filter(|r| r.path == "/version" && r.user.contains("fleet-pull-healthy"))
            .count()
    };
    wait_until(WAIT, "three probes of the steady site", || async {
        probes_seen() >= 3
    })
    .await;
    let probes = probes_seen();
    let writes: Vec<_> = hub_sb
        .controls()
        .request_log()
        .into_iter()
        .filter(|r| r.path.ends_with("/federatedclusters/healthy/status") && r.method != "GET")
        .collect();
    assert!(writes.iter().all(|r| r.method == "PATCH"), "{writes:?}");
    assert!(
        writes.len().abs_diff(probes) <= 1,
        "{} writes for {probes} probes",
        writes.len()
    );
    // And one read of its pull Secret, by name: the hub lists no Secret.
    let log = hub_sb.controls().request_log();
    let secret_requests: Vec<_> = log.iter().filter(|r| r.path.contains("/secrets")).collect();
    assert!(
        secret_requests
            .iter()
            .all(|r| r.method == "GET" && !r.path.ends_with("/secrets") || r.method == "PATCH"),
        "{secret_requests:?}"
    );
    let reads = secret_requests
        .iter()
        .filter(|r| {
            r.path
                .ends_with("/namespaces/fleet-system/secrets/fleet-pull-healthy")
        })
        .count();
    assert!(
        reads.abs_diff(probes) <= 1,
        "{reads} Secret reads for {probes} probes"
    );

    // A Pull site registered while the hub runs is probed without a
    // restart (the prober re-reads its sites when the fleet changes).
    register_pull(&hub_kc, "late", &healthy_kc, &[]);
    wait_connected(&api, "late", "True", "ProbeSucceeded").await;

    // A member that stops answering: Connected=False and Stale from the
    // first failed probe (a site the hub cannot read is never Connected).
    healthy_sb.controls().set_outage(true);
    wait_until(WAIT, "healthy Stale", || async {
        api.get("healthy").await.unwrap().phase() == Some(Phase::Stale)
    })
    .await;
    let (status, _, _) = condition(&api, "healthy", CONDITION_CONNECTED)
        .await
        .unwrap();
    assert_eq!(status, "False");

    assert!(hub_proc.pid() > 0);
    hub_proc.terminate();
    let log = hub_proc.log_text();
    for secret in [&before, &after, &healthy_stored] {
        let token = secret
            .lines()
            .find_map(|l| l.trim().strip_prefix("token: "))
            .unwrap();
        assert!(!log.contains(token), "a pull token reached the hub log");
    }
    drop(revoked_sb);
}
}
