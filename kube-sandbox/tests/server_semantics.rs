//! Wire-level semantics a real API server has and clients rely on: watch
//! resumption, 410 Gone, watch-list initial events, selector transitions,
//! CRD lifecycle, patch content types, Tables, reviews, and the test
//! controls (outage, latency, request log).

use bytes::Bytes;
use http_body_util::BodyExt;
use kube::Client;
use kube_sandbox::{Sandbox, SandboxOptions};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const GROUP: &str = "federation.kubectl-fleet.dev";
const SITES: &str = "/apis/federation.kubectl-fleet.dev/v1alpha1/federatedclusters";

async fn client(sb: &Sandbox) -> Client {
    let kc = kube::config::Kubeconfig::from_yaml(&sb.admin_kubeconfig()).unwrap();
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    Client::try_from(cfg).unwrap()
}

struct Http {
    client: Client,
}

impl Http {
    async fn new(sb: &Sandbox) -> Http {
        Http {
            client: client(sb).await,
        }
    }

    async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> Result<hyper::Response<kube::client::Body>, kube::Error> {
        let mut b = hyper::Request::builder().method(method).uri(path);
        let mut has_ct = false;
        for (k, v) in headers {
            has_ct |= k.eq_ignore_ascii_case("content-type");
            b = b.header(*k, *v);
        }
        if !has_ct {
            b = b.header("content-type", "application/json");
        }
        let bytes = body
            .map(|v| serde_json::to_vec(&v).unwrap())
            .unwrap_or_default();
        self.client
            .send(b.body(kube::client::Body::from(bytes)).unwrap())
            .await
    }

    /// One request, answered in full: status and JSON body.
    async fn call(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> (u16, Value) {
        let resp = self.send(method, path, headers, body).await.unwrap();
        let code = resp.status().as_u16();
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    async fn ok(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (code, v) = self.call(method, path, &[], body).await;
        assert!((200..300).contains(&code), "{method} {path}: {code} {v}");
        v
    }
}

/// Reads newline-delimited watch events until `n` arrived or time is up.
async fn events(
    resp: hyper::Response<kube::client::Body>,
    n: usize,
    within: Duration,
) -> Vec<Value> {
    let mut body = resp.into_body();
    let mut buf = Vec::new();
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + within;
    while out.len() < n {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(Some(Ok(f))) => f,
            _ => break,
        };
        if let Ok(data) = frame.into_data() {
            let data: Bytes = data;
            buf.extend_from_slice(&data);
            while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buf.drain(..=pos).collect();
                out.push(serde_json::from_slice(&line).unwrap());
            }
        }
    }
    out
}

fn summary(evs: &[Value]) -> Vec<String> {
    evs.iter()
        .map(|e| {
            format!(
                "{} {}",
                e["type"].as_str().unwrap(),
                e["object"]["metadata"]["name"].as_str().unwrap_or("")
            )
        })
        .collect()
}

async fn install_crd(h: &Http) {
    h.ok(
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        Some(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("federatedclusters.{GROUP}")},
            "spec": {"group": GROUP, "scope": "Cluster",
                "names": {"plural": "federatedclusters", "kind": "FederatedCluster"},
                "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [{"name": "Region", "type": "string", "jsonPath": ".spec.region"}],
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {
                            "region": {"type": "string"},
                            "heartbeatIntervalSeconds": {"type": "integer", "minimum": 10, "default": 30}}},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}
        })),
    )
    .await;
}

fn site(name: &str, labels: Value) -> Value {
    json!({"apiVersion": format!("{GROUP}/v1alpha1"), "kind": "FederatedCluster",
           "metadata": {"name": name, "labels": labels}, "spec": {"region": "us-east-1"}})
}

#[tokio::test]
async fn watch_resumes_from_a_resource_version_and_reports_gone() {
    let sb = Sandbox::start_with(SandboxOptions {
        watch_history: 50,
        ..Default::default()
    })
    .unwrap();
    let h = Http::new(&sb).await;
    install_crd(&h).await;
    h.ok("POST", SITES, Some(site("a", json!({})))).await;
    let list = h.ok("GET", SITES, None).await;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    h.ok("POST", SITES, Some(site("b", json!({})))).await;
    h.ok("DELETE", &format!("{SITES}/a"), None).await;

    // The first `n` events of a watch of the sites from `rv` (a 410 comes
    // as an ERROR event in a 200 response).
    let watch_from_rv = |n: usize| {
        let (h, url) = (&h, format!("{SITES}?watch=1&resourceVersion={rv}"));
        async move {
            let resp = h.send("GET", &url, &[], None).await.unwrap();
            assert_eq!(resp.status(), 200);
            events(resp, n, Duration::from_secs(5)).await
        }
    };
    let evs = watch_from_rv(2).await;
    assert_eq!(summary(&evs), ["ADDED b", "DELETED a"]);
    let deleted_rv: u64 = evs[1]["object"]["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(deleted_rv > rv.parse::<u64>().unwrap());

    // Without a resourceVersion the watch starts with the current objects.
    let resp = h
        .send("GET", &format!("{SITES}?watch=1"), &[], None)
        .await
        .unwrap();
    assert_eq!(
        summary(&events(resp, 1, Duration::from_secs(5)).await),
        ["ADDED b"]
    );

    // Another resource's writes leave the sites' history alone (a watch
    // cache per resource, as the real server keeps).
    for i in 0..60 {
        h.ok(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            Some(json!({"metadata": {"name": format!("cm{i}")}})),
        )
        .await;
    }
    let evs = watch_from_rv(2).await;
    assert_eq!(summary(&evs), ["ADDED b", "DELETED a"]);

    // Push the old version out of the sites' history: 410 as an ERROR
    // event.
    for i in 0..60 {
        h.ok("POST", SITES, Some(site(&format!("s{i}"), json!({}))))
            .await;
    }
    let evs = watch_from_rv(1).await;
    assert_eq!(evs[0]["type"], "ERROR");
    assert_eq!(evs[0]["object"]["code"], 410);
    assert_eq!(evs[0]["object"]["reason"], "Expired");

    // A continue token from before the window is 410 too.
    let page = h
        .ok("GET", "/api/v1/namespaces/default/configmaps?limit=5", None)
        .await;
    let token = page["metadata"]["continue"].as_str().unwrap().to_string();
    for i in 60..120 {
        h.ok(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            Some(json!({"metadata": {"name": format!("cm{i}")}})),
        )
        .await;
    }
    let (code, status) = h
        .call(
            "GET",
            &format!("/api/v1/namespaces/default/configmaps?limit=5&continue={token}"),
            &[],
            None,
        )
        .await;
    assert_eq!((code, status["reason"].as_str()), (410, Some("Expired")));
}

#[tokio::test]
async fn watch_list_and_selector_transitions() {
    let sb = Sandbox::start();
    let h = Http::new(&sb).await;
    install_crd(&h).await;
    h.ok("POST", SITES, Some(site("a", json!({"env": "prod"}))))
        .await;

    let resp = h
        .send(
            "GET",
            &format!("{SITES}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&labelSelector=env%3Dprod"),
            &[],
            None,
        )
        .await
        .unwrap();
    let mut body_events = Vec::new();
    let evs = events(resp, 2, Duration::from_secs(5)).await;
    body_events.extend(evs.clone());
    assert_eq!(summary(&evs), ["ADDED a", "BOOKMARK "]);
    assert_eq!(
        evs[1]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );

    // Leaving the selection is DELETED for this watcher, entering is ADDED.
    let resp = h
        .send(
            "GET",
            &format!("{SITES}?watch=1&labelSelector=env%3Dprod"),
            &[],
            None,
        )
        .await
        .unwrap();
    let watcher = tokio::spawn(events(resp, 4, Duration::from_secs(5)));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let merge = [("content-type", "application/merge-patch+json")];
    h.call(
        "PATCH",
        &format!("{SITES}/a"),
        &merge,
        Some(json!({"metadata": {"labels": {"env": "dev"}}})),
    )
    .await;
    h.call(
        "PATCH",
        &format!("{SITES}/a"),
        &merge,
        Some(json!({"spec": {"region": "eu"}})),
    )
    .await;
    h.call(
        "PATCH",
        &format!("{SITES}/a"),
        &merge,
        Some(json!({"metadata": {"labels": {"env": "prod"}}})),
    )
    .await;
    let evs = watcher.await.unwrap();
    assert_eq!(summary(&evs), ["ADDED a", "DELETED a", "ADDED a"]);
}

#[tokio::test]
async fn crd_schema_defaults_validation_and_deletion() {
    let sb = Sandbox::start();
    let h = Http::new(&sb).await;
    install_crd(&h).await;
    let created = h.ok("POST", SITES, Some(site("a", json!({})))).await;
    assert_eq!(
        created["spec"]["heartbeatIntervalSeconds"], 30,
        "default applied"
    );
    let mut bad = site("b", json!({}));
    bad["spec"]["heartbeatIntervalSeconds"] = json!(5);
    bad["spec"]["unknown"] = json!("pruned");
    let (code, status) = h.call("POST", SITES, &[], Some(bad)).await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(
        status["details"]["causes"][0]["field"],
        "spec.heartbeatIntervalSeconds"
    );
    let mut pruned = site("c", json!({}));
    pruned["spec"]["unknown"] = json!("dropped");
    let c = h.ok("POST", SITES, Some(pruned)).await;
    assert!(
        c["spec"].get("unknown").is_none(),
        "unknown fields pruned: {c}"
    );

    // Unknown fields: 400 under fieldValidation=Strict, a warning under Warn.
    let mut typo = site("d", json!({}));
    typo["spec"]["regoin"] = json!("x");
    let (code, status) = h
        .call(
            "POST",
            &format!("{SITES}?fieldValidation=Strict"),
            &[],
            Some(typo.clone()),
        )
        .await;
    assert_eq!(code, 400);
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .ends_with("strict decoding error: unknown field \"spec.regoin\""),
        "{status}"
    );
    let resp = h
        .send(
            "POST",
            &format!("{SITES}?fieldValidation=Warn"),
            &[],
            Some(typo),
        )
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    assert_eq!(
        resp.headers()["warning"],
        "299 - \"unknown field \\\"spec.regoin\\\"\""
    );
    h.ok("DELETE", &format!("{SITES}/d"), None).await;

    // generateName and Table output with the CRD's printer columns.
    let g = h
        .ok(
            "POST",
            SITES,
            Some(
                json!({"apiVersion": format!("{GROUP}/v1alpha1"), "kind": "FederatedCluster",
        "metadata": {"generateName": "gen-"}, "spec": {"region": "ap"}}),
            ),
        )
        .await;
    assert!(g["metadata"]["name"].as_str().unwrap().starts_with("gen-"));
    let (code, table) = h
        .call(
            "GET",
            SITES,
            &[(
                "accept",
                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
            )],
            None,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(table["kind"], "Table");
    let cols: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    // Like the real server: declared columns replace the default Age column.
    assert_eq!(cols, ["Name", "Region"]);
    assert_eq!(table["rows"].as_array().unwrap().len(), 3);

    // Strategic merge patch is not for custom resources; JSON patch is.
    let (code, _) = h
        .call(
            "PATCH",
            &format!("{SITES}/a"),
            &[("content-type", "application/strategic-merge-patch+json")],
            Some(json!({"spec": {}})),
        )
        .await;
    assert_eq!(code, 415);
    let (code, patched) = h
        .call(
            "PATCH",
            &format!("{SITES}/a"),
            &[("content-type", "application/json-patch+json")],
            Some(json!([{"op": "replace", "path": "/spec/region", "value": "sa-east-1"}])),
        )
        .await;
    assert_eq!(
        (code, patched["spec"]["region"].as_str()),
        (200, Some("sa-east-1"))
    );

    // Deleting the CRD deletes its objects and stops serving them.
    h.ok(
        "DELETE",
        &format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/federatedclusters.{GROUP}"
        ),
        None,
    )
    .await;
    let (code, _) = h.call("GET", SITES, &[], None).await;
    assert_eq!(code, 404);
    install_crd(&h).await;
    let list = h.ok("GET", SITES, None).await;
    assert_eq!(
        list["items"].as_array().unwrap().len(),
        0,
        "objects went with their CRD"
    );
}

#[tokio::test]
async fn namespaces_collections_leases_and_dry_run() {
    let sb = Sandbox::start();
    let h = Http::new(&sb).await;
    let (code, s) = h
        .call(
            "POST",
            "/api/v1/namespaces/nowhere/configmaps",
            &[],
            Some(json!({"metadata": {"name": "x"}})),
        )
        .await;
    assert_eq!(
        (code, s["message"].as_str()),
        (404, Some("namespaces \"nowhere\" not found"))
    );
    let (code, _) = h
        .call(
            "POST",
            "/api/v1/namespaces",
            &[],
            Some(json!({"metadata": {"name": "Not.A.Label"}})),
        )
        .await;
    assert_eq!(code, 422);

    for (n, l) in [("a", "web"), ("b", "web"), ("c", "db")] {
        h.ok(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            Some(json!({"metadata": {"name": n, "labels": {"tier": l}}})),
        )
        .await;
    }
    let deleted = h
        .ok(
            "DELETE",
            "/api/v1/namespaces/default/configmaps?labelSelector=tier%3Dweb",
            None,
        )
        .await;
    assert_eq!(deleted["items"].as_array().unwrap().len(), 2);
    let left = h
        .ok("GET", "/api/v1/namespaces/default/configmaps", None)
        .await;
    assert_eq!(left["kind"], "ConfigMapList");
    assert_eq!(left["items"].as_array().unwrap().len(), 1);

    let dry = h
        .ok(
            "POST",
            "/api/v1/namespaces/default/configmaps?dryRun=All",
            Some(json!({"metadata": {"name": "dry"}})),
        )
        .await;
    assert_eq!(dry["metadata"]["name"], "dry");
    let (code, _) = h
        .call(
            "GET",
            "/api/v1/namespaces/default/configmaps/dry",
            &[],
            None,
        )
        .await;
    assert_eq!(code, 404);

    let lease = h
        .ok("POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases",
            Some(json!({"metadata": {"name": "fleet-hub"}, "spec": {"holderIdentity": "hub-0", "leaseDurationSeconds": 15}})))
        .await;
    let mut renewed = lease.clone();
    renewed["spec"]["holderIdentity"] = json!("hub-1");
    h.ok(
        "PUT",
        "/apis/coordination.k8s.io/v1/namespaces/default/leases/fleet-hub",
        Some(renewed),
    )
    .await;
    // Protected namespaces, immutable ConfigMaps, write-only Secret stringData.
    let (code, s) = h
        .call("DELETE", "/api/v1/namespaces/default", &[], None)
        .await;
    assert_eq!((code, s["reason"].as_str()), (403, Some("Forbidden")));
    let frozen = h
        .ok(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            Some(json!({"metadata": {"name": "frozen"}, "data": {"a": "1"}, "immutable": true})),
        )
        .await;
    let mut thawed = frozen.clone();
    thawed["data"]["a"] = json!("2");
    let (code, _) = h
        .call(
            "PUT",
            "/api/v1/namespaces/default/configmaps/frozen",
            &[],
            Some(thawed),
        )
        .await;
    assert_eq!(code, 422);
    let secret = h
        .ok(
            "POST",
            "/api/v1/namespaces/default/secrets",
            Some(json!({"metadata": {"name": "kc"}, "stringData": {"kubeconfig": "x"}})),
        )
        .await;
    assert_eq!(secret["data"]["kubeconfig"], "eA==");
    assert!(secret.get("stringData").is_none());

    // Workloads have a scale subresource (`kubectl scale`).
    h.ok("POST", "/apis/apps/v1/namespaces/default/deployments", Some(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}))).await;
    let (code, scale) = h
        .call(
            "PATCH",
            "/apis/apps/v1/namespaces/default/deployments/web/scale",
            &[("content-type", "application/merge-patch+json")],
            Some(json!({"spec": {"replicas": 4}})),
        )
        .await;
    assert_eq!(
        (
            code,
            scale["kind"].as_str(),
            scale["status"]["selector"].as_str()
        ),
        (200, Some("Scale"), Some("app=web"))
    );
    let web = h
        .ok(
            "GET",
            "/apis/apps/v1/namespaces/default/deployments/web",
            None,
        )
        .await;
    assert_eq!(
        (
            web["spec"]["replicas"].as_i64(),
            web["metadata"]["generation"].as_i64()
        ),
        (Some(4), Some(2))
    );

    // The loser of a leader race holds a stale resourceVersion.
    let (code, _) = h
        .call(
            "PUT",
            "/apis/coordination.k8s.io/v1/namespaces/default/leases/fleet-hub",
            &[],
            Some(lease),
        )
        .await;
    assert_eq!(code, 409);
}

#[tokio::test]
async fn reviews_answer_with_the_server_authn_and_authz() {
    let sb = Sandbox::start();
    let h = Http::new(&sb).await;
    h.ok(
        "POST",
        "/api/v1/namespaces/default/serviceaccounts",
        Some(json!({"metadata": {"name": "reader"}})),
    )
    .await;
    let tr = h
        .ok(
            "POST",
            "/api/v1/namespaces/default/serviceaccounts/reader/token",
            Some(json!({"spec": {"audiences": ["fleet-api"], "expirationSeconds": 3600}})),
        )
        .await;
    let token = tr["status"]["token"].as_str().unwrap().to_string();
    assert!(
        tr["status"]["expirationTimestamp"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );
    let review = h
        .ok(
            "POST",
            "/apis/authentication.k8s.io/v1/tokenreviews",
            Some(json!({"spec": {"token": token, "audiences": ["fleet-api"]}})),
        )
        .await;
    assert_eq!(review["status"]["authenticated"], true);
    assert_eq!(
        review["status"]["user"]["username"],
        "system:serviceaccount:default:reader"
    );
    let review = h
        .ok(
            "POST",
            "/apis/authentication.k8s.io/v1/tokenreviews",
            Some(json!({"spec": {"token": "garbage"}})),
        )
        .await;
    assert_ne!(review["status"]["authenticated"], true);

    let sar = h
        .ok("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", Some(json!({"spec": {
            "user": "system:serviceaccount:default:reader",
            "resourceAttributes": {"verb": "list", "resource": "configmaps", "namespace": "default"}}})))
        .await;
    assert_eq!(sar["status"]["allowed"], false);
    let lsar = h
        .ok("POST", "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews", Some(json!({"spec": {
            "user": "system:serviceaccount:default:reader",
            "resourceAttributes": {"verb": "get", "resource": "configmaps", "namespace": "default"}}})))
        .await;
    assert_eq!(
        (lsar["kind"].as_str(), lsar["status"]["allowed"].as_bool()),
        (Some("LocalSubjectAccessReview"), Some(false))
    );
    let (code, _) = h
        .call("POST", "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews", &[], Some(json!({"spec": {
            "user": "u", "resourceAttributes": {"verb": "get", "resource": "configmaps", "namespace": "other"}}})))
        .await;
    assert_eq!(code, 422, "namespace must match the URL");
    let ssar = h
        .ok(
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            Some(json!({"spec": {
            "resourceAttributes": {"verb": "delete", "resource": "nodes"}}})),
        )
        .await;
    assert_eq!(ssar["status"]["allowed"], true, "admin is system:masters");
}

#[tokio::test]
async fn outage_latency_and_request_log() {
    let sb = Sandbox::start();
    let h = Http::new(&sb).await;
    h.ok("GET", "/api/v1/namespaces", None).await;

    sb.controls().set_outage(true);
    let fresh = Http::new(&sb).await;
    assert!(
        fresh
            .send("GET", "/api/v1/namespaces", &[], None)
            .await
            .is_err(),
        "refused during an outage"
    );
    assert!(
        h.send("GET", "/api/v1/namespaces", &[], None)
            .await
            .is_err(),
        "open connections are cut"
    );
    sb.controls().set_outage(false);
    h.ok("GET", "/api/v1/namespaces", None).await;

    sb.controls().outage_for(Duration::from_millis(300));
    assert!(
        Http::new(&sb)
            .await
            .send("GET", "/version", &[], None)
            .await
            .is_err()
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    h.ok("GET", "/version", None).await;

    sb.controls().set_latency(Duration::from_millis(200));
    sb.controls().clear_request_log();
    let before = sb.controls().elapsed();
    let t = Instant::now();
    h.ok("GET", "/api/v1/namespaces/default", None).await;
    assert!(t.elapsed() >= Duration::from_millis(200));
    sb.controls().set_latency(Duration::ZERO);
    // The log holds when the request arrived and when it was answered,
    // the latency included, on the clock `elapsed` reads.
    let timed = &sb.controls().request_log()[0];
    assert!(before <= timed.started, "{timed:?}");
    assert!(
        timed.finished - timed.started >= Duration::from_millis(200),
        "{timed:?}"
    );
    assert!(timed.finished <= sb.controls().elapsed(), "{timed:?}");

    sb.controls().clear_request_log();
    h.ok("GET", "/api/v1/namespaces/default/configmaps?limit=1", None)
        .await;
    let log = sb.controls().request_log();
    assert_eq!(log.len(), 1);
    let r = &log[0];
    assert_eq!(
        (
            r.verb.as_str(),
            r.method.as_str(),
            r.path.as_str(),
            r.query.as_str(),
            r.user.as_str(),
            r.status
        ),
        (
            "list",
            "GET",
            "/api/v1/namespaces/default/configmaps",
            "limit=1",
            "sandbox-admin",
            200
        )
    );
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn list_resource_version_semantics_and_consistent_pages() {
    let sb = Sandbox::start();
    let h = Http::new(&sb).await;
    install_crd(&h).await;
    for n in ["a", "b", "c"] {
        h.ok("POST", SITES, Some(site(n, json!({})))).await;
    }
    let at3 = h.ok("GET", SITES, None).await;
    let rv3: u64 = at3["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(at3["metadata"]["continue"], "");
    // A first page, then changes, then the next page: it is read at the
    // first page's version, as etcd does.
    let page1 = h.ok("GET", &format!("{SITES}?limit=2"), None).await;
    assert_eq!(names(&page1), ["a", "b"]);
    assert_eq!(page1["metadata"]["remainingItemCount"], 1);
    h.ok("DELETE", &format!("{SITES}/c"), None).await;
    h.ok("POST", SITES, Some(site("d", json!({})))).await;
    let token = page1["metadata"]["continue"].as_str().unwrap();
    let page2 = h
        .ok("GET", &format!("{SITES}?limit=2&continue={token}"), None)
        .await;
    assert_eq!(names(&page2), ["c"]);
    assert_eq!(page2["metadata"]["resourceVersion"], rv3.to_string());
    // Exact: the list as it was; NotOlderThan and unset: now.
    let exact = h
        .ok(
            "GET",
            &format!("{SITES}?resourceVersion={rv3}&resourceVersionMatch=Exact"),
            None,
        )
        .await;
    assert_eq!(names(&exact), ["a", "b", "c"]);
    assert_eq!(exact["metadata"]["resourceVersion"], rv3.to_string());
    let newer = h
        .ok(
            "GET",
            &format!("{SITES}?resourceVersion={rv3}&resourceVersionMatch=NotOlderThan"),
            None,
        )
        .await;
    assert_eq!(names(&newer), ["a", "b", "d"]);
    // A version before the CRD, or malformed. (A version not reached yet
    // is a 504 that kube-rs retries; see the unit test in handlers/mod.rs.)
    let (code, body) = h
        .call(
            "GET",
            &format!("{SITES}?resourceVersion=1&resourceVersionMatch=Exact"),
            &[],
            None,
        )
        .await;
    assert_eq!((code, body["reason"].as_str()), (410, Some("Expired")));
    let (code, body) = h
        .call("GET", &format!("{SITES}?resourceVersion=abc"), &[], None)
        .await;
    assert_eq!(code, 400);
    assert_eq!(
        body["message"],
        "invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax"
    );
    let (code, body) = h
        .call(
            "GET",
            &format!("{SITES}?resourceVersion=0&resourceVersionMatch=Exact"),
            &[],
            None,
        )
        .await;
    assert_eq!(code, 422);
    assert_eq!(
        body["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""
    );
    // A watch from before the CRD existed is too old for its watch cache.
    let resp = h
        .send(
            "GET",
            &format!("{SITES}?watch=1&resourceVersion=1"),
            &[],
            None,
        )
        .await
        .unwrap();
    let evs = events(resp, 1, Duration::from_secs(5)).await;
    assert_eq!(evs[0]["type"], "ERROR");
    assert_eq!(evs[0]["object"]["code"], 410);
    // Unknown resources of a served group: the mux's plain-text 404.
    let resp = h
        .send(
            "GET",
            &format!("/apis/{GROUP}/v1alpha1/nothings"),
            &[],
            None,
        )
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 404);
    let text = resp.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(&text[..], b"404 page not found\n");
}

#[tokio::test]
async fn forbidden_answers_carry_the_rbac_reason_and_the_selected_name() {
    let sb = Sandbox::start();
    let h = Http::new(&sb).await;
    h.ok(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        Some(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "dangling"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "missing"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "jane"}]})),
    )
    .await;
    let (code, body) = h
        .call(
            "GET",
            "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dc1",
            &[("Impersonate-User", "jane")],
            None,
        )
        .await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        "configmaps \"c1\" is forbidden: User \"jane\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\": RBAC: role.rbac.authorization.k8s.io \"missing\" not found"
    );
    assert_eq!(body["details"], json!({"name": "c1", "kind": "configmaps"}));
    // Without a dangling binding there is no reason to add.
    let (code, body) = h
        .call(
            "GET",
            "/api/v1/namespaces/kube-system/secrets",
            &[("Impersonate-User", "jane")],
            None,
        )
        .await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        "secrets is forbidden: User \"jane\" cannot list resource \"secrets\" in API group \"\" in the namespace \"kube-system\""
    );
}
