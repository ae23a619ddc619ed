//! Our generated CRDs (`deploy/crds/federation.kubectl-fleet.dev.yaml`, the
//! file `kubectl fleet install` prints) held against a real Kubernetes API
//! server: accepted as structural, defaults, enums, ranges and CEL rules as
//! docs/architecture.md says, and the two-writer status contract (docs/architecture.md#who-writes-which-status-key) (edge merge
//! patch never drops hub-owned fields; the hub's resourceVersion-guarded
//! status write gets a real 409 after an edge write).
//!
//! Needs `tools/realapi/build.sh` (see `support`); `FLEET_SKIP_REALAPI=1`
//! skips these tests when the server is not built.

use crate::support;

use serde_json::{Value, json};
use support::{Reply, Server, at, run_suffix};

const CRDS_FILE: &str = "deploy/crds/federation.kubectl-fleet.dev.yaml";
const FC: &str = "/apis/federation.kubectl-fleet.dev/v1alpha1/federatedclusters";
const FS: &str = "/apis/federation.kubectl-fleet.dev/v1alpha1/federationstatuses";
const FCL: &str = "/apis/federation.kubectl-fleet.dev/v1alpha1/federatedclusterleases";
const MERGE: &str = "application/merge-patch+json";

/// The real server with the fleet's CRDs installed, or `None` when skipped.
async fn real_with_crds() -> Option<Server> {
    Some(with_crds(Server::real()?).await)
}

/// `server` with the fleet's CRDs installed.
async fn with_crds(server: Server) -> Server {
    let docs = support::load_yaml_docs(CRDS_FILE);
    assert_eq!(
        docs.len(),
        3,
        "{CRDS_FILE} holds the FederatedCluster, FederationStatus and FederatedClusterLease CRDs"
    );
    for crd in &docs {
        server.install_crd(crd).await;
    }
    server
}

/// A unique site name for one test (the real server is shared by the tests).
fn site(test: &str) -> String {
    format!("{test}-{}", run_suffix())
}

fn fc(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "federation.kubectl-fleet.dev/v1alpha1",
        "kind": "FederatedCluster",
        "metadata": {"name": name},
        "spec": spec,
    })
}

async fn create_fc(server: &Server, name: &str, spec: Value) -> Reply {
    server.raw("POST", FC, None, Some(&fc(name, spec))).await
}

fn assert_invalid(r: &Reply, fragments: &[&str]) {
    assert_eq!(
        r.status, 422,
        "expected 422 Invalid, got {}: {}",
        r.status, r.text
    );
    assert_eq!(r.json["reason"], "Invalid", "{}", r.text);
    assert_eq!(r.json["kind"], "Status", "{}", r.text);
    let message = r.json["message"].as_str().unwrap_or_default();
    for f in fragments {
        assert!(message.contains(f), "422 message lacks {f:?}: {message}");
    }
}

#[tokio::test]
async fn generated_crds_are_accepted_structural_and_established() {
    let Some(server) = real_with_crds().await else {
        return;
    };
    for doc in support::load_yaml_docs(CRDS_FILE) {
        let name = doc["metadata"]["name"].as_str().unwrap();
        let got = server
            .raw(
                "GET",
                &format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"),
                None,
                None,
            )
            .await;
        assert_eq!(got.status, 200, "{}", got.text);
        let conditions = got.json["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let cond = |t: &str| {
            conditions
                .iter()
                .find(|c| c["type"] == t)
                .map(|c| c["status"].clone())
        };
        assert_eq!(
            cond("Established"),
            Some(json!("True")),
            "{name}: {conditions:?}"
        );
        assert_eq!(
            cond("NamesAccepted"),
            Some(json!("True")),
            "{name}: {conditions:?}"
        );
        // A non-structural schema would be accepted but flagged; ours must not be.
        assert_eq!(cond("NonStructuralSchema"), None, "{name}: {conditions:?}");
        assert_eq!(
            got.json["status"]["acceptedNames"]["kind"],
            doc["spec"]["names"]["kind"]
        );
    }
    // The version our build stamps in, parseable by clients.
    let version = server
        .client()
        .await
        .apiserver_version()
        .await
        .expect("GET /version");
    assert_eq!(version.major, "1");
    assert!(
        version
            .git_version
            .starts_with(&format!("v1.{}.", version.minor)),
        "{version:?}"
    );
    // Discovery lists both kinds with their short names and category.
    let disc = server
        .raw(
            "GET",
            "/apis/federation.kubectl-fleet.dev/v1alpha1",
            None,
            None,
        )
        .await;
    assert_eq!(disc.status, 200, "{}", disc.text);
    let resources = disc.json["resources"].as_array().unwrap();
    let fc_res = resources
        .iter()
        .find(|r| r["name"] == "federatedclusters")
        .expect("federatedclusters listed");
    assert_eq!(fc_res["shortNames"], json!(["fc", "fcluster"]));
    assert_eq!(fc_res["categories"], json!(["fleet"]));
    assert_eq!(fc_res["namespaced"], false);
    assert!(
        resources
            .iter()
            .any(|r| r["name"] == "federatedclusters/status")
    );
    assert!(resources.iter().any(|r| r["name"] == "federationstatuses"));
}

#[tokio::test]
async fn federated_cluster_defaults_are_applied_by_the_server() {
    let Some(server) = real_with_crds().await else {
        return;
    };
    let name = site("defaults");
    let r = create_fc(&server, &name, json!({})).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let spec = &r.json["spec"];
    assert_eq!(spec["mode"], "Push");
    assert_eq!(spec["environment"], "production");
    assert_eq!(spec["tier"], "standard");
    assert_eq!(spec["heartbeatIntervalSeconds"], 30);
    assert_eq!(spec["capabilities"], json!(["monitoring"]));
    assert_eq!(spec["maxConcurrentRemediations"], 3);
    // Read back from storage, not only the create response.
    let got = server.raw("GET", &format!("{FC}/{name}"), None, None).await;
    assert_eq!(got.json["spec"], r.json["spec"]);
    // Explicit values win over defaults.
    let name2 = site("explicit");
    let r = create_fc(
        &server,
        &name2,
        json!({"tier": "critical", "environment": "staging", "heartbeatIntervalSeconds": 10,
               "capabilities": ["remediation", "chaos-engineering"]}),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.json["spec"]["tier"], "critical");
    assert_eq!(r.json["spec"]["environment"], "staging");
    assert_eq!(r.json["spec"]["heartbeatIntervalSeconds"], 10);
    assert_eq!(
        r.json["spec"]["capabilities"],
        json!(["remediation", "chaos-engineering"])
    );
}

#[tokio::test]
async fn enums_and_ranges_are_rejected_with_422() {
    let Some(server) = real_with_crds().await else {
        return;
    };
    let cases: [(&str, Value, &[&str]); 6] = [
        (
            "tier",
            json!({"tier": "gold"}),
            &[
                "spec.tier",
                "Unsupported value: \"gold\"",
                "\"critical\", \"standard\", \"non-critical\"",
            ],
        ),
        (
            "env",
            json!({"environment": "prod"}),
            &["spec.environment", "Unsupported value: \"prod\""],
        ),
        (
            "hb-low",
            json!({"heartbeatIntervalSeconds": 5}),
            &[
                "spec.heartbeatIntervalSeconds",
                "should be greater than or equal to 10",
            ],
        ),
        (
            "hb-high",
            json!({"heartbeatIntervalSeconds": 4000}),
            &[
                "spec.heartbeatIntervalSeconds",
                "should be less than or equal to 3600",
            ],
        ),
        (
            "mode",
            json!({"mode": "Both"}),
            &["spec.mode", "Unsupported value: \"Both\""],
        ),
        (
            "cap",
            json!({"capabilities": ["monitoring", "scaling"]}),
            &["spec.capabilities[1]", "Unsupported value: \"scaling\""],
        ),
    ];
    for (label, spec, fragments) in cases {
        let name = site(&format!("bad-{label}"));
        let r = create_fc(&server, &name, spec).await;
        assert_invalid(&r, fragments);
        assert_eq!(r.json["details"]["name"], name.as_str());
        assert_eq!(r.json["details"]["kind"], "FederatedCluster");
        // Nothing was stored.
        assert_eq!(
            server
                .raw("GET", &format!("{FC}/{name}"), None, None)
                .await
                .status,
            404
        );
    }
    // Capabilities are a set: a duplicate is refused, not silently kept.
    let name = site("dup-cap");
    let r = create_fc(
        &server,
        &name,
        json!({"capabilities": ["monitoring", "monitoring"]}),
    )
    .await;
    assert_invalid(
        &r,
        &["spec.capabilities[1]", "Duplicate value: \"monitoring\""],
    );
    // The range bounds themselves are valid.
    for (label, hb) in [("hb-min", 10), ("hb-max", 3600)] {
        let r = create_fc(
            &server,
            &site(label),
            json!({"heartbeatIntervalSeconds": hb}),
        )
        .await;
        assert_eq!(r.status, 201, "{label}: {}", r.text);
    }
}

#[tokio::test]
async fn pull_push_cel_rule_is_enforced() {
    let Some(server) = real_with_crds().await else {
        return;
    };
    const RULE_MSG: &str =
        "kubeconfigSecretRef is required when mode is Pull and must not be set when mode is Push";
    let secret_ref = json!({"namespace": "fleet-system", "name": "fleet-pull-x"});

    let r = create_fc(
        &server,
        &site("pull-ok"),
        json!({"mode": "Pull", "kubeconfigSecretRef": secret_ref}),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    // The nested default applies too.
    assert_eq!(r.json["spec"]["kubeconfigSecretRef"]["key"], "kubeconfig");

    let r = create_fc(&server, &site("pull-noref"), json!({"mode": "Pull"})).await;
    assert_invalid(&r, &["spec: Invalid value", RULE_MSG]);

    let r = create_fc(
        &server,
        &site("push-ref"),
        json!({"mode": "Push", "kubeconfigSecretRef": secret_ref}),
    )
    .await;
    assert_invalid(&r, &[RULE_MSG]);

    // Defaulted mode is Push, so a ref without a mode is rejected as well.
    let r = create_fc(
        &server,
        &site("default-ref"),
        json!({"kubeconfigSecretRef": secret_ref}),
    )
    .await;
    assert_invalid(&r, &[RULE_MSG]);

    // The rule also guards updates: switching an existing Push site to Pull
    // without a ref is refused.
    let name = site("push-to-pull");
    assert_eq!(create_fc(&server, &name, json!({})).await.status, 201);
    let r = server
        .raw(
            "PATCH",
            &format!("{FC}/{name}"),
            Some(MERGE),
            Some(&json!({"spec": {"mode": "Pull"}})),
        )
        .await;
    assert_invalid(&r, &[RULE_MSG]);

    // The secret ref's fields must be non-empty.
    let r = create_fc(
        &server,
        &site("pull-empty"),
        json!({"mode": "Pull", "kubeconfigSecretRef": {"namespace": "fleet-system", "name": ""}}),
    )
    .await;
    assert_invalid(
        &r,
        &[
            "spec.kubeconfigSecretRef.name",
            "should be at least 1 chars long",
        ],
    );

    // The secret ref requires name and namespace.
    let r = create_fc(
        &server,
        &site("pull-partial"),
        json!({"mode": "Pull", "kubeconfigSecretRef": {"name": "x"}}),
    )
    .await;
    assert_invalid(&r, &["spec.kubeconfigSecretRef.namespace: Required value"]);
}

#[tokio::test]
async fn names_must_be_dns_labels_and_the_fleet_status_is_a_singleton() {
    let Some(server) = real_with_crds().await else {
        return;
    };
    // A DNS subdomain with a dot is a valid object name for the API server but
    // not a DNS-1123 label: the CRD's own rule rejects it.
    let r = create_fc(&server, &format!("a.{}", run_suffix()), json!({})).await;
    assert_invalid(&r, &["metadata.name must be a DNS-1123 label"]);
    let long = format!("{}-{}", "x".repeat(60), run_suffix());
    let r = create_fc(&server, &long, json!({})).await;
    assert_invalid(&r, &["metadata.name must be a DNS-1123 label"]);

    let fs = |name: &str| {
        json!({"apiVersion": "federation.kubectl-fleet.dev/v1alpha1", "kind": "FederationStatus",
               "metadata": {"name": name}})
    };
    let r = server
        .raw("POST", FS, None, Some(&fs(&site("notfleet"))))
        .await;
    assert_invalid(&r, &["the FederationStatus singleton must be named fleet"]);
    let r = server.raw("POST", FS, None, Some(&fs("fleet"))).await;
    // 409 when a previous run on a long-lived server already made it.
    assert!(r.status == 201 || r.status == 409, "{}", r.text);
}

#[tokio::test]
async fn fleet_status_counters_default_to_zero_on_the_status_subresource() {
    let Some(server) = real_with_crds().await else {
        return;
    };
    let got = server
        .raw(
            "POST",
            FS,
            None,
            Some(&json!({
        "apiVersion": "federation.kubectl-fleet.dev/v1alpha1", "kind": "FederationStatus",
        "metadata": {"name": "fleet"}})),
        )
        .await;
    assert!(got.status == 201 || got.status == 409, "{}", got.text);
    let r = server
        .raw(
            "PATCH",
            &format!("{FS}/fleet/status"),
            Some(MERGE),
            Some(&json!({"status": {"totalClusters": 4}})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["status"]["totalClusters"], 4);
    assert_eq!(r.json["status"]["connectedClusters"], 0);
    assert_eq!(r.json["status"]["cascadesDetected"], 0);
}

/// The hub's status write: phase and conditions (hub-owned keys).
fn hub_status(phase: &str) -> Value {
    json!({
        "phase": phase,
        "phaseTransitionTime": "2026-01-01T00:00:00Z",
        "conditions": [{
            "type": "Connected", "status": if phase == "Connected" { "True" } else { "False" },
            "reason": "HeartbeatFresh", "message": "heartbeat within 3 intervals",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }],
    })
}

/// The edge's status merge patch: edge-owned keys only (docs/architecture.md#who-writes-which-status-key).
fn edge_patch(heartbeat: &str) -> Value {
    json!({"status": {
        "lastHeartbeatTime": heartbeat,
        "observedVersion": "0.1.0",
        "kubernetesVersion": "v1.33.1",
        "nodeCount": 3,
        "capacity": {"nodes": 3, "gpusTotal": 8},
    }})
}

#[tokio::test]
async fn edge_merge_patch_never_removes_hub_owned_status() {
    let Some(server) = real_with_crds().await else {
        return;
    };
    let name = site("two-writer");
    let created = create_fc(&server, &name, json!({})).await;
    assert_eq!(created.status, 201, "{}", created.text);

    // Hub: sets phase + conditions with a resourceVersion-guarded PUT /status.
    let mut obj = created.json.clone();
    obj["status"] = hub_status("Connected");
    let hub = server
        .raw("PUT", &format!("{FC}/{name}/status"), None, Some(&obj))
        .await;
    assert_eq!(hub.status, 200, "{}", hub.text);

    // Edge: two heartbeats, each a merge patch of edge-owned keys.
    for hb in ["2026-01-01T00:00:30Z", "2026-01-01T00:01:00Z"] {
        let r = server
            .raw(
                "PATCH",
                &format!("{FC}/{name}/status"),
                Some(MERGE),
                Some(&edge_patch(hb)),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(r.json["status"]["lastHeartbeatTime"], hb);
        assert_eq!(
            r.json["status"]["phase"], "Connected",
            "edge patch dropped the hub's phase"
        );
        assert_eq!(
            r.json["status"]["conditions"],
            hub.json["status"]["conditions"]
        );
        assert_eq!(
            r.json["status"]["phaseTransitionTime"],
            "2026-01-01T00:00:00Z"
        );
        assert_eq!(r.json["status"]["capacity"]["gpusTotal"], 8);
        // Defaults inside the edge's nested object are applied by the server.
        assert_eq!(r.json["status"]["capacity"]["gpusAllocatable"], 0);
        // A status write never touches spec or generation.
        assert_eq!(r.json["spec"], created.json["spec"]);
        assert_eq!(r.json["metadata"]["generation"], 1);
    }

    // A heartbeat-only patch (what the edge sends when nothing else changed)
    // keeps every other edge field too.
    let r = server
        .raw(
            "PATCH",
            &format!("{FC}/{name}/status"),
            Some(MERGE),
            Some(&json!({"status": {"lastHeartbeatTime": "2026-01-01T00:01:30Z"}})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(at(&r.json, "/status/nodeCount"), 3);
    assert_eq!(at(&r.json, "/status/phase"), "Connected");

    // The edge's status patch cannot change spec through /status.
    let r = server
        .raw(
            "PATCH",
            &format!("{FC}/{name}/status"),
            Some(MERGE),
            Some(&json!({"spec": {"tier": "critical"}, "status": {"nodeCount": 4}})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["spec"]["tier"], "standard");
    assert_eq!(r.json["status"]["nodeCount"], 4);
}

#[tokio::test]
async fn hub_status_update_with_stale_resource_version_gets_409() {
    let Some(server) = real_with_crds().await else {
        return;
    };
    let name = site("conflict");
    let created = create_fc(&server, &name, json!({})).await;
    assert_eq!(created.status, 201, "{}", created.text);

    // The hub read the object (this resourceVersion) ...
    let read = server.raw("GET", &format!("{FC}/{name}"), None, None).await;
    let seen_rv = read.json["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    // ... an edge heartbeat lands in between ...
    let edge = server
        .raw(
            "PATCH",
            &format!("{FC}/{name}/status"),
            Some(MERGE),
            Some(&edge_patch("2026-01-01T00:00:30Z")),
        )
        .await;
    assert_eq!(edge.status, 200, "{}", edge.text);
    assert_ne!(edge.json["metadata"]["resourceVersion"], seen_rv.as_str());
    // ... so the hub's guarded transition write is refused, not a silent revert.
    let mut stale = read.json.clone();
    stale["status"] = hub_status("Stale");
    let r = server
        .raw("PUT", &format!("{FC}/{name}/status"), None, Some(&stale))
        .await;
    assert_eq!(r.status, 409, "{}", r.text);
    assert_eq!(r.json["reason"], "Conflict");
    assert_eq!(
        r.json["message"],
        format!(
            "Operation cannot be fulfilled on federatedclusters.federation.kubectl-fleet.dev \"{name}\": \
             the object has been modified; please apply your changes to the latest version and try again"
        )
    );
    assert_eq!(r.json["details"]["name"], name.as_str());
    assert_eq!(r.json["details"]["group"], "federation.kubectl-fleet.dev");
    assert_eq!(r.json["details"]["kind"], "federatedclusters");
    // The edge's write survived.
    let now = server.raw("GET", &format!("{FC}/{name}"), None, None).await;
    assert_eq!(
        now.json["status"]["lastHeartbeatTime"],
        "2026-01-01T00:00:30Z"
    );
    assert_eq!(now.json["status"]["phase"], Value::Null);

    // Re-read and retry: the hub's write now lands and keeps the edge fields.
    let mut fresh = now.json.clone();
    let mut status = fresh["status"].clone();
    for (k, v) in hub_status("Stale").as_object().unwrap() {
        status[k] = v.clone();
    }
    fresh["status"] = status;
    let r = server
        .raw("PUT", &format!("{FC}/{name}/status"), None, Some(&fresh))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["status"]["phase"], "Stale");
    assert_eq!(r.json["status"]["nodeCount"], 3);

    // The same guard holds on a JSON merge patch carrying resourceVersion.
    let r = server
        .raw(
            "PATCH",
            &format!("{FC}/{name}/status"),
            Some(MERGE),
            Some(&json!({"metadata": {"resourceVersion": seen_rv}, "status": {"phase": "Unreachable"}})),
        )
        .await;
    assert_eq!(r.status, 409, "{}", r.text);
}

/// The real `kubectl` against the real server: discovery (`kubectl get fc`
/// resolves the short name), client-side `kubectl apply` of a custom resource
/// (needs the v2 OpenAPI our `main.go` adds) and the printer columns.
#[tokio::test]
async fn kubectl_applies_and_lists_sites_by_short_name() {
    let Some(server) = real_with_crds().await else {
        return;
    };
    // The kubectl on PATH (tools/test.sh installs one when it is missing).
    let kubectl = "kubectl";
    let dir = std::env::temp_dir().join(format!(
        "fleet-realapi-kubectl-{}-{}",
        std::process::id(),
        run_suffix()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig()).unwrap();
    let name = site("kubectl");
    let manifest = dir.join("site.yaml");
    std::fs::write(
        &manifest,
        format!(
            "apiVersion: federation.kubectl-fleet.dev/v1alpha1\nkind: FederatedCluster\nmetadata:\n  name: {name}\nspec:\n  tier: critical\n  environment: staging\n"
        ),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(kubectl)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(args)
            .env("KUBECACHEDIR", dir.join("cache"))
            .output()
            .expect("this test drives the real `kubectl`, which must be on PATH");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let manifest_arg = manifest.to_string_lossy().into_owned();
    let (ok, out, err) = run(&["apply", "-f", &manifest_arg]);
    assert!(ok, "kubectl apply failed: {out}{err}");
    assert!(
        out.contains(&format!(
            "federatedcluster.federation.kubectl-fleet.dev/{name} created"
        )),
        "{out}"
    );
    // A second apply is a no-op (client-side apply's last-applied annotation works).
    let (ok, out, err) = run(&["apply", "-f", &manifest_arg]);
    assert!(ok, "second kubectl apply failed: {out}{err}");
    assert!(out.contains("unchanged"), "{out}");
    let (ok, out, err) = run(&["get", "fc", &name]);
    assert!(ok, "kubectl get fc failed: {out}{err}");
    let header: Vec<&str> = out
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "NAME",
            "MODE",
            "TIER",
            "ENV",
            "PHASE",
            "LAST",
            "HEARTBEAT",
            "GPUS",
            "AGE"
        ],
        "{out}"
    );
    let row: Vec<&str> = out
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        &row[..4],
        [name.as_str(), "Push", "critical", "staging"],
        "{out}"
    );
    let (ok, out, err) = run(&["get", "fleet"]);
    assert!(ok, "kubectl get fleet (category) failed: {out}{err}");
    assert!(out.contains(&name), "{out}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The caps on what a site token can write into its status: a
/// string, count or map over its bound is refused with 422 naming the
/// field, on the real server and on kube-sandbox alike; values at the caps
/// are stored.
#[tokio::test]
async fn edge_status_bounds_are_enforced_on_both_servers() {
    let mut servers = vec![with_crds(Server::sandbox()).await];
    servers.extend(real_with_crds().await);
    let at = "2026-01-01T00:00:00Z";
    let signal = |message: String, namespace: String, kind: String, name: String| {
        json!({"type": "OOMKilled", "severity": "high", "namespace": namespace,
               "workload": {"kind": kind, "name": name}, "message": message,
               "firstSeen": at, "lastSeen": at, "count": 1})
    };
    let ok_signal = || signal("m".into(), "ns".into(), "Pod".into(), "p".into());
    let vendors = |n: usize, key_len: usize| -> Value {
        (0..n)
            .map(|i| {
                let key = format!("{i:03}{}", "g".repeat(key_len - 3));
                (key, json!({"total": 1, "allocatable": 1}))
            })
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    let over: Vec<(&str, Value, &str)> = vec![
        (
            "message",
            json!({"signals": [signal("é".repeat(513), "ns".into(), "Pod".into(), "p".into())]}),
            "status.signals[0].message",
        ),
        (
            "namespace",
            json!({"signals": [signal("m".into(), "n".repeat(64), "Pod".into(), "p".into())]}),
            "status.signals[0].namespace",
        ),
        (
            "kind",
            json!({"signals": [signal("m".into(), "ns".into(), "K".repeat(64), "p".into())]}),
            "status.signals[0].workload.kind",
        ),
        (
            "workload",
            json!({"signals": [signal("m".into(), "ns".into(), "Pod".into(), "w".repeat(254))]}),
            "status.signals[0].workload.name",
        ),
        (
            "signals",
            json!({"signals": vec![ok_signal(); 101]}),
            "status.signals",
        ),
        (
            "k8s",
            json!({"kubernetesVersion": format!("v1.33.0-{}", "x".repeat(121))}),
            "status.kubernetesVersion",
        ),
        (
            "observed",
            json!({"observedVersion": "\u{1b}[2J".repeat(40)}),
            "status.observedVersion",
        ),
        (
            "vendors",
            json!({"capacity": {"gpusByVendor": vendors(33, 10)}}),
            "status.capacity.gpusByVendor",
        ),
        (
            "vendor-key",
            json!({"capacity": {"gpusByVendor": vendors(1, 254)}}),
            "status.capacity.gpusByVendor",
        ),
        ("nodes", json!({"nodeCount": -1}), "status.nodeCount"),
        (
            "gpus",
            json!({"capacity": {"gpusTotal": -5}}),
            "status.capacity.gpusTotal",
        ),
        (
            "services",
            json!({"inference": {"servicesFailed": -1}}),
            "status.inference.servicesFailed",
        ),
    ];
    for server in &servers {
        let kind = server.kind();
        let name = site("bounds");
        assert_eq!(create_fc(server, &name, json!({})).await.status, 201);
        let status_path = format!("{FC}/{name}/status");
        for (label, status, field) in &over {
            let r = server
                .raw(
                    "PATCH",
                    &status_path,
                    Some(MERGE),
                    Some(&json!({"status": status})),
                )
                .await;
            assert_eq!(r.status, 422, "{kind} {label}: {}", r.text);
            let message = r.json["message"].as_str().unwrap_or_default();
            assert!(message.contains(field), "{kind} {label}: {message}");
        }
        // Exactly at every cap: stored, and read back unchanged.
        let at_caps = json!({
            "kubernetesVersion": "v".repeat(128),
            "observedVersion": "o".repeat(128),
            "nodeCount": 0,
            "capacity": {"gpusByVendor": vendors(32, 253)},
            "signals": (0..100)
                .map(|i| signal("é".repeat(512), "n".repeat(63), "K".repeat(63),
                                format!("{i:03}{}", "w".repeat(250))))
                .collect::<Vec<_>>(),
        });
        let r = server
            .raw(
                "PATCH",
                &status_path,
                Some(MERGE),
                Some(&json!({"status": at_caps})),
            )
            .await;
        assert_eq!(r.status, 200, "{kind} at caps: {}", r.text);
        let got = server.raw("GET", &format!("{FC}/{name}"), None, None).await;
        for key in ["kubernetesVersion", "observedVersion", "signals"] {
            assert_eq!(got.json["status"][key], at_caps[key], "{kind} {key}");
        }
        assert_eq!(
            got.json["status"]["capacity"]["gpusByVendor"], at_caps["capacity"]["gpusByVendor"],
            "{kind}"
        );
    }
}

/// A site lease (`FederatedClusterLease`) takes the edge's renewal — one
/// merge patch of `spec.renewTime` and the round trip — and refuses what
/// no edge writes, on both servers: a renew time that is not an RFC 3339
/// date-time, a round trip out of range, a name that is no site's.
#[tokio::test]
async fn a_site_lease_takes_renewals_and_refuses_what_no_edge_writes() {
    let mut servers = vec![with_crds(Server::sandbox()).await];
    servers.extend(real_with_crds().await);
    for server in &servers {
        let kind = server.kind();
        let name = site("lease");
        let lease = json!({"apiVersion": "federation.kubectl-fleet.dev/v1alpha1",
            "kind": "FederatedClusterLease", "metadata": {"name": name}, "spec": {}});
        let r = server.raw("POST", FCL, None, Some(&lease)).await;
        assert_eq!(r.status, 201, "{kind}: {}", r.text);
        let path = format!("{FCL}/{name}");
        let renewal = json!({"spec": {"renewTime": "2026-12-06T10:00:30Z",
            "lastRenewDurationMilliseconds": 25}});
        let r = server
            .raw("PATCH", &path, Some(MERGE), Some(&renewal))
            .await;
        assert_eq!(r.status, 200, "{kind}: {}", r.text);
        assert_eq!(r.json["spec"], renewal["spec"], "{kind}");
        for (label, spec, field) in [
            ("time", json!({"renewTime": "yesterday"}), "spec.renewTime"),
            (
                "date",
                json!({"renewTime": "2026-02-30T00:00:00Z"}),
                "spec.renewTime",
            ),
            (
                "round trip",
                json!({"lastRenewDurationMilliseconds": -1}),
                "spec.lastRenewDurationMilliseconds",
            ),
        ] {
            let r = server
                .raw("PATCH", &path, Some(MERGE), Some(&json!({"spec": spec})))
                .await;
            assert_eq!(r.status, 422, "{kind} {label}: {}", r.text);
            let message = r.json["message"].as_str().unwrap_or_default();
            assert!(message.contains(field), "{kind} {label}: {message}");
        }
        let mut bad = lease.clone();
        bad["metadata"]["name"] = json!(format!("{name}.example"));
        let r = server.raw("POST", FCL, None, Some(&bad)).await;
        assert_eq!(r.status, 422, "{kind} name: {}", r.text);
    }
}
