//! kube-sandbox in front of the real API server (CRD delegate mode,
//! docs/realapi.md "kube-sandbox in front"): one API server to kubectl and
//! kube-rs, whose core and RBAC kube-sandbox serves and whose CRDs and custom
//! resources Kubernetes' own apiextensions-apiserver serves behind it; the
//! identity kube-sandbox authenticated reaches the real server's admission
//! plugin; the real server trusts nobody but its front proxy; a delegate
//! that is down is a 503, never a hang. (That every answer comes back as the
//! real server gave it is `differential::front_*`.)

use crate::support::{self, Server, at};

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

const GROUP: &str = "front.kubectl-fleet.dev";

fn gadget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("gadgets.{GROUP}")},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "shortNames": ["gd"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "integer", "minimum": 1, "description": "how big"},
                    }},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                }}},
            }],
        },
    })
}

fn gadget(name: &str, size: i64) -> Value {
    json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Gadget",
           "metadata": {"name": name, "namespace": "default"}, "spec": {"size": size}})
}

const GADGETS: &str = "/apis/front.kubectl-fleet.dev/v1/namespaces/default/gadgets";

/// The real kubectl against `server`'s admin kubeconfig, with a private
/// cache; returns (exit code, stdout, stderr).
fn kubectl(dir: &std::path::Path, server: &Server, args: &[&str]) -> (i32, String, String) {
    let kc = dir.join("kubeconfig");
    std::fs::write(&kc, server.kubeconfig()).unwrap();
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kc)
        .args(args)
        .env_remove("KUBECONFIG")
        .env("KUBECACHEDIR", dir.join("cache"))
        .stdin(Stdio::null())
        .output()
        .expect("kubectl on PATH");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn kubectl_sees_one_api_server() {
    let Some(front) = Server::front() else { return };
    let dir = tempfile::tempdir().unwrap();
    front.install_crd(&gadget_crd()).await;
    let (code, out, err) = kubectl(dir.path(), &front, &["api-resources", "--no-headers"]);
    assert_eq!(code, 0, "{err}");
    for (resource, served_by) in [
        ("namespaces ", "sandbox"),
        ("clusterroles ", "sandbox"),
        ("validatingadmissionpolicies ", "sandbox"),
        ("customresourcedefinitions ", "delegate"),
        ("gadgets ", "delegate"),
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(resource)),
            "{resource}({served_by}) missing from kubectl api-resources:\n{out}"
        );
    }
    // Writes and reads through kubectl; the printer columns are the real
    // server's Table.
    let file = dir.path().join("g.json");
    std::fs::write(&file, gadget("g1", 3).to_string()).unwrap();
    let (code, _, err) = kubectl(dir.path(), &front, &["apply", "-f", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = kubectl(dir.path(), &front, &["get", "gd", "-n", "default"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "NAME   SIZE\ng1     3\n");
    // kubectl explain reads the merged OpenAPI v3.
    let (code, out, err) = kubectl(dir.path(), &front, &["explain", "gadgets.spec.size"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("how big"), "{out}");
    // The real server's 422, as it words it.
    std::fs::write(&file, gadget("g2", 0).to_string()).unwrap();
    let (code, _, err) = kubectl(
        dir.path(),
        &front,
        &["create", "-f", file.to_str().unwrap()],
    );
    assert_eq!(code, 1);
    assert!(
        err.contains(
            "The Gadget \"g2\" is invalid: spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"
        ),
        "{err}"
    );
}

/// A watch through the proxy is streamed: an event written while it is
/// open arrives while it is still open.
#[tokio::test]
async fn watches_are_streamed_through_the_proxy() {
    let Some(front) = Server::front() else { return };
    front.install_crd(&gadget_crd()).await;
    let created = front
        .raw("POST", GADGETS, None, Some(&gadget("w1", 1)))
        .await;
    assert_eq!(created.status, 201, "{}", created.text);
    let rv = at(&created.json, "/metadata/resourceVersion")
        .as_str()
        .unwrap()
        .to_string();
    let watch = {
        let path = format!("{GADGETS}?watch=true&resourceVersion={rv}");
        let server = &front;
        async move { server.watch(&path, 2, Duration::from_secs(30)).await }
    };
    let writes = async {
        // The watch is open once the first write's event can be seen; two
        // writes after it arrive in order on the same stream.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let patch = json!({"spec": {"size": 2}});
        let r = front
            .raw(
                "PATCH",
                &format!("{GADGETS}/w1"),
                Some("application/merge-patch+json"),
                Some(&patch),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        let r = front
            .raw("DELETE", &format!("{GADGETS}/w1"), None, None)
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
    };
    let (got, ()) = tokio::join!(watch, writes);
    assert_eq!(got.status, 200);
    let types: Vec<&str> = got
        .events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(types, ["MODIFIED", "DELETED"], "{:?}", got.events);
    assert_eq!(at(&got.events[0], "/object/spec/size"), 2);
}

#[tokio::test]
async fn discovery_and_openapi_merge_both_servers() {
    let Some(front) = Server::front() else { return };
    front.install_crd(&gadget_crd()).await;
    let apis = front.raw("GET", "/apis", None, None).await;
    assert_eq!(apis.status, 200);
    let names: Vec<&str> = apis.json["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    for g in [
        "rbac.authorization.k8s.io",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        GROUP,
    ] {
        assert_eq!(
            names.iter().filter(|n| **n == g).count(),
            1,
            "{g} in {names:?}"
        );
    }
    assert!(
        !apis.text.contains("serverAddressByClientCIDRs"),
        "the delegate's own address leaked: {}",
        apis.text
    );
    // Aggregated discovery, as kubectl asks for it.
    let aggregated = front
        .raw_accept(
            "GET",
            "/apis",
            None,
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
            None,
        )
        .await;
    assert_eq!(aggregated.json["kind"], "APIGroupDiscoveryList");
    let item = |name: &str| {
        aggregated.json["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["metadata"]["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} missing: {}", aggregated.text))
    };
    assert_eq!(
        at(&item(GROUP), "/versions/0/resources/0/resource"),
        "gadgets"
    );
    assert_eq!(
        at(
            &item(GROUP),
            "/versions/0/resources/0/subresources/0/subresource"
        ),
        "status"
    );
    let rbac = item("rbac.authorization.k8s.io");
    assert!(
        rbac["versions"][0]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["resource"] == "clusterroles" && r["scope"] == "Cluster"),
        "{rbac}"
    );
    // OpenAPI v3: both servers' group versions, each document served.
    let v3 = front.raw("GET", "/openapi/v3", None, None).await;
    for gv in ["api/v1", "apis/apps/v1", "apis/apiextensions.k8s.io/v1"] {
        assert!(v3.json["paths"][gv].is_object(), "{gv}: {}", v3.text);
    }
    let url = v3.json["paths"][format!("apis/{GROUP}/v1")]["serverRelativeURL"]
        .as_str()
        .unwrap_or_else(|| panic!("no {GROUP}/v1 in {}", v3.text))
        .to_string();
    let doc = front.raw("GET", &url, None, None).await;
    assert_eq!(doc.status, 200, "{}", doc.text);
    assert!(doc.text.contains("how big"), "{}", doc.text);
    // OpenAPI v2 in JSON: both path sets.
    let v2 = front.raw("GET", "/openapi/v2", None, None).await;
    assert_eq!(v2.status, 200, "{}", v2.text);
    assert!(v2.json["paths"]["/api/v1/namespaces"].is_object());
    assert!(
        v2.json["paths"][format!("/apis/{GROUP}/v1/namespaces/{{namespace}}/gadgets")].is_object()
    );
}

#[tokio::test]
async fn protobuf_and_json_as_the_real_server_negotiates_them() {
    let Some(front) = Server::front() else { return };
    front.install_crd(&gadget_crd()).await;
    let proto = "application/vnd.kubernetes.protobuf";
    let crd = front
        .raw_bytes(
            "GET",
            &format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.{GROUP}"),
            None,
            proto,
            None,
        )
        .await;
    assert_eq!(crd.status, 200);
    assert!(
        crd.text.as_bytes().starts_with(b"k8s\0"),
        "a CRD asked for as protobuf comes as protobuf: {}",
        crd.text
    );
    // Custom resources have no protobuf: the real server answers JSON when
    // the client accepts it too, and 406 when it does not.
    let list = front
        .raw_bytes(
            "GET",
            GADGETS,
            None,
            &format!("{proto}, application/json"),
            None,
        )
        .await;
    assert_eq!(
        (list.status, &list.json["kind"]),
        (200, &json!("GadgetList"))
    );
    let refused = front.raw_bytes("GET", GADGETS, None, proto, None).await;
    assert_eq!(refused.status, 406, "{}", refused.text);
}

/// The sandbox's admin, to mint tokens and write RBAC and policies.
async fn admin_post(front: &Server, path: &str, body: Value) {
    let r = front.raw("POST", path, None, Some(&body)).await;
    assert!(r.status == 201 || r.status == 200, "{path}: {}", r.text);
}

/// ServiceAccount `default/NAME` allowed every verb on gadgets, and a token.
async fn gadget_editor(front: &Server, name: &str) -> String {
    admin_post(
        front,
        "/api/v1/namespaces/default/serviceaccounts",
        json!({"metadata": {"name": name}}),
    )
    .await;
    admin_post(
        front,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
        json!({"metadata": {"name": name}, "rules": [
            {"apiGroups": [GROUP], "resources": ["gadgets", "gadgets/status"], "verbs": ["*"]}]}),
    )
    .await;
    admin_post(
        front,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        json!({"metadata": {"name": name},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
               "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "default"}]}),
    )
    .await;
    let minted = front
        .raw(
            "POST",
            &format!("/api/v1/namespaces/default/serviceaccounts/{name}/token"),
            None,
            Some(&json!({"spec": {"expirationSeconds": 3600}})),
        )
        .await;
    minted.json["status"]["token"].as_str().unwrap().to_string()
}

/// One request to the sandbox with `token` and extra headers.
async fn as_token(
    front: &Server,
    token: &str,
    method: &str,
    path: &str,
    body: Option<&Value>,
    headers: &[(&str, &str)],
) -> support::Reply {
    let sb = front.sandbox_ref().unwrap();
    let kc = kube::config::Kubeconfig::from_yaml(&sb.kubeconfig_for_token(token)).unwrap();
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(cfg).unwrap();
    let mut req = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header("accept", "application/json");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if body.is_some() {
        req = req.header("content-type", "application/json");
    }
    let req = req
        .body(kube::client::Body::from(
            body.map(|b| serde_json::to_vec(b).unwrap())
                .unwrap_or_default(),
        ))
        .unwrap();
    let resp = client.send(req).await.unwrap();
    let status = resp.status().as_u16();
    let bytes = resp.into_body().collect_bytes().await.unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let json = serde_json::from_str(&text).unwrap_or(Value::Null);
    support::Reply { status, text, json }
}

/// The identity kube-sandbox authenticated (a ServiceAccount token, an
/// impersonated user with extras) is the one the real server's own
/// ValidatingAdmissionPolicy plugin sees, and a client cannot claim another
/// in the front proxy's headers.
#[tokio::test]
async fn the_real_admission_plugin_judges_the_identity_the_sandbox_authenticated() {
    let Some(front) = Server::front() else { return };
    front.install_crd(&gadget_crd()).await;
    let token = gadget_editor(&front, "editor").await;
    // A policy stored in kube-sandbox, loaded by the real server's plugin:
    // it refuses size 13 and says who asked.
    // Group ops (an impersonated user's, below) may edit gadgets too.
    admin_post(
        &front,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        json!({"metadata": {"name": "ops"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "editor"},
               "subjects": [{"kind": "Group", "name": "ops"}]}),
    )
    .await;
    admin_post(
        &front,
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
        json!({"metadata": {"name": "who-asks"}, "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": [GROUP], "apiVersions": ["*"],
                "operations": ["CREATE", "UPDATE"], "resources": ["gadgets"]}]},
            "validations": [{"expression": "object.spec.size != 13",
                "messageExpression": "'user=' + request.userInfo.username + ' uid=' + (has(request.userInfo.uid) ? request.userInfo.uid : '') + ' groups=' + request.userInfo.groups.join(',') + ' extra=' + (has(request.userInfo.extra) && 'scopes' in request.userInfo.extra ? request.userInfo.extra['scopes'].join(',') : '')"}]}}),
    )
    .await;
    admin_post(
        &front,
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
        json!({"metadata": {"name": "who-asks"}, "spec": {"policyName": "who-asks", "validationActions": ["Deny"]}}),
    )
    .await;
    // Policies reach the plugin through its informer, as in a cluster:
    // eventually.
    let mut denied = support::Reply {
        status: 0,
        text: String::new(),
        json: Value::Null,
    };
    for _ in 0..100 {
        denied = as_token(
            &front,
            &token,
            "POST",
            GADGETS,
            Some(&gadget("g13", 13)),
            &[],
        )
        .await;
        if denied.status != 201 {
            break;
        }
        as_token(
            &front,
            &token,
            "DELETE",
            &format!("{GADGETS}/g13"),
            None,
            &[],
        )
        .await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The policy's reason is the default, Invalid: 422.
    assert_eq!(denied.status, 422, "{}", denied.text);
    let message = denied.json["message"].as_str().unwrap();
    let uid = front
        .raw(
            "GET",
            "/api/v1/namespaces/default/serviceaccounts/editor",
            None,
            None,
        )
        .await
        .json["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        message,
        format!(
            "gadgets.{GROUP} \"g13\" is forbidden: ValidatingAdmissionPolicy 'who-asks' with binding 'who-asks' denied request: user=system:serviceaccount:default:editor uid={uid} groups=system:serviceaccounts,system:serviceaccounts:default,system:authenticated extra="
        )
    );
    // Headers a client sends as if it were the front proxy are dropped.
    let spoofed = as_token(
        &front,
        &token,
        "POST",
        GADGETS,
        Some(&gadget("g13", 13)),
        &[
            ("X-Remote-User", "system:admin"),
            ("X-Remote-Group", "system:masters"),
            ("X-Remote-Extra-Scopes", "all"),
        ],
    )
    .await;
    assert_eq!(spoofed.json["message"], denied.json["message"]);
    // Impersonation is resolved by the sandbox; its result is carried on.
    let admin_token = front.sandbox_ref().unwrap().admin_token().to_string();
    let impersonated = as_token(
        &front,
        &admin_token,
        "POST",
        GADGETS,
        Some(&gadget("g13", 13)),
        &[
            ("Impersonate-User", "jane"),
            ("Impersonate-Group", "ops"),
            ("Impersonate-Extra-Scopes", "view"),
            ("Impersonate-Extra-Scopes", "edit"),
        ],
    )
    .await;
    assert!(
        impersonated.json["message"]
            .as_str()
            .unwrap()
            .ends_with("user=jane uid= groups=ops,system:authenticated extra=view,edit"),
        "{}",
        impersonated.text
    );
    // Below the policy's line the same token writes.
    let ok = as_token(&front, &token, "POST", GADGETS, Some(&gadget("g3", 3)), &[]).await;
    assert_eq!(ok.status, 201, "{}", ok.text);
    // What the sandbox's RBAC refuses never reaches the real server.
    let other = as_token(
        &front,
        &token,
        "GET",
        "/apis/front.kubectl-fleet.dev/v1/namespaces/kube-system/gadgets",
        None,
        &[],
    )
    .await;
    assert_eq!(other.status, 403);
    assert_eq!(
        other.json["message"],
        format!(
            "gadgets.{GROUP} is forbidden: User \"system:serviceaccount:default:editor\" cannot list resource \"gadgets\" in API group \"{GROUP}\" in the namespace \"kube-system\""
        )
    );
}

/// The real server behind authenticates nothing but the front proxy's
/// certificate: a token that the sandbox accepts is anonymous there, and
/// the sandbox's RBAC (asked by SubjectAccessReview) gives an anonymous
/// user nothing.
#[tokio::test]
async fn the_real_server_trusts_only_its_front_proxy() {
    let Some(front) = Server::front() else { return };
    let sb = front.sandbox_ref().unwrap();
    let url = sb.realapi().unwrap().url().to_string();
    let out = Command::new("curl")
        .args(["-sk", "-H"])
        .arg(format!("Authorization: Bearer {}", sb.admin_token()))
        .arg(format!(
            "{url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        ))
        .output()
        .expect("curl");
    let body: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(body["code"], 403, "{body}");
    assert_eq!(
        body["message"],
        "customresourcedefinitions.apiextensions.k8s.io is forbidden: User \"system:anonymous\" cannot list resource \"customresourcedefinitions\" in API group \"apiextensions.k8s.io\" at the cluster scope"
    );
}

/// A delegate that is down: its groups get 503 at once, with a `Status`
/// (kubectl prints it; kube-rs retries a 503 on its own, so the raw answer
/// is read with curl); the sandbox's own APIs and discovery (the delegate's
/// last answer) stay.
#[tokio::test]
async fn a_delegate_that_is_down_is_a_503_not_a_hang() {
    let Some(front) = Server::front() else { return };
    front.install_crd(&gadget_crd()).await;
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = kubectl(dir.path(), &front, &["get", "gadgets"]);
    assert_eq!(code, 0, "{err}");
    let sb = front.sandbox_ref().unwrap();
    sb.realapi().unwrap().kill();
    let (code, _, err) = kubectl(
        dir.path(),
        &front,
        &["get", "gadgets", "--request-timeout=30s"],
    );
    assert_eq!(code, 1);
    assert!(
        err.starts_with("Error from server (ServiceUnavailable): error trying to reach service: dial tcp 127.0.0.1:")
            && err.ends_with(": connect: connection refused\n"),
        "{err}"
    );
    let out = Command::new("curl")
        .args(["-sk", "--max-time", "30", "-H"])
        .arg(format!("Authorization: Bearer {}", sb.admin_token()))
        .arg(format!("{}{GADGETS}", sb.url()))
        .output()
        .expect("curl");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&answer["kind"], &answer["reason"], &answer["code"]),
        (&json!("Status"), &json!("ServiceUnavailable"), &json!(503)),
        "{answer}"
    );
    let (code, out, err) = kubectl(dir.path(), &front, &["get", "namespaces", "-o", "name"]);
    assert_eq!(
        (code, out.lines().next()),
        (0, Some("namespace/default")),
        "{err}"
    );
    let apis = front.raw("GET", "/apis", None, None).await;
    assert!(apis.text.contains(GROUP), "{}", apis.text);
}

/// Objects of the sandbox owned by a custom resource of the delegate are
/// collected when it is deleted, as a cluster's garbage collector does.
#[tokio::test]
async fn dependents_of_a_deleted_custom_resource_are_collected() {
    let Some(front) = Server::front() else { return };
    front.install_crd(&gadget_crd()).await;
    let owner = front
        .raw("POST", GADGETS, None, Some(&gadget("owner", 1)))
        .await;
    let uid = owner.json["metadata"]["uid"].as_str().unwrap();
    let cm = |name: &str| {
        json!({"metadata": {"name": name, "namespace": "default", "ownerReferences": [
            {"apiVersion": format!("{GROUP}/v1"), "kind": "Gadget", "name": "owner", "uid": uid}]}})
    };
    let cms = "/api/v1/namespaces/default/configmaps";
    admin_post(&front, cms, cm("owned")).await;
    let deleted = front
        .raw("DELETE", &format!("{GADGETS}/owner"), None, None)
        .await;
    assert_eq!(deleted.status, 200, "{}", deleted.text);
    assert_eq!(
        front
            .raw("GET", &format!("{cms}/owned"), None, None)
            .await
            .status,
        404
    );
}

/// The request log and injected faults are about clients: the real
/// server's own requests to the sandbox (its SubjectAccessReviews, its
/// informers' watches) are the API server's internal traffic, as inside
/// kube-apiserver, so they neither show in the log nor meet a fault.
#[tokio::test]
async fn the_request_log_and_faults_concern_clients_only() {
    let Some(front) = Server::front() else { return };
    front.install_crd(&gadget_crd()).await;
    let token = gadget_editor(&front, "logged").await;
    let controls = front.sandbox_ref().unwrap().controls();
    // Every request fails until cleared: a client's does, the real
    // server's SubjectAccessReview for it does not.
    controls.fail(kube_sandbox::FaultRule {
        path_contains: Some("/apis/authorization.k8s.io/".into()),
        status: 500,
        count: u32::MAX,
        ..Default::default()
    });
    controls.clear_request_log();
    let listed = as_token(&front, &token, "GET", GADGETS, None, &[]).await;
    assert_eq!(listed.status, 200, "{}", listed.text);
    let log = controls.request_log();
    let seen: Vec<String> = log
        .iter()
        .map(|r| format!("{} {} {} {}", r.user, r.method, r.path, r.status))
        .collect();
    assert_eq!(
        seen,
        [format!(
            "system:serviceaccount:default:logged GET {GADGETS} 200"
        )],
        "only the client's request is logged"
    );
    // A client's own review does meet the fault.
    let review = as_token(
        &front,
        &token,
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        Some(&json!({"spec": {"resourceAttributes": {"verb": "list", "resource": "pods"}}})),
        &[],
    )
    .await;
    assert_eq!(review.status, 500, "{}", review.text);
    controls.clear_faults();
}
