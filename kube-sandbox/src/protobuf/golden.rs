//! Golden tests: request bodies captured from kubectl 1.33 (`*.pb` beside
//! this file, recorded from `kubectl auth can-i`, `create token`, `create
//! sa|ns|role|clusterrole|rolebinding|clusterrolebinding|secret|configmap`)
//! and the JSON a real server reads from them.

use super::*;

fn check(body: &[u8], want: Value) {
    assert_eq!(decode(body).unwrap(), want);
}

#[test]
fn self_subject_access_reviews_from_kubectl_auth_can_i() {
    // kubectl auth can-i patch federatedclusters.federation.kubectl-fleet.dev/site-a --subresource=status
    check(
        include_bytes!("ssar_status.pb"),
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "metadata": {},
               "spec": {"resourceAttributes": {"namespace": "default", "verb": "patch",
                   "resource": "federatedclusters.federation.kubectl-fleet.dev", "subresource": "status", "name": "site-a"}}}),
    );
    // kubectl auth can-i get secrets -n fleet-system
    check(
        include_bytes!("ssar_secrets.pb"),
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "metadata": {},
               "spec": {"resourceAttributes": {"namespace": "fleet-system", "verb": "get", "resource": "secrets"}}}),
    );
    // kubectl --as=... --as-group=g1 auth can-i list pods (identity travels in headers)
    check(
        include_bytes!("ssar_impersonated.pb"),
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "metadata": {},
               "spec": {"resourceAttributes": {"namespace": "default", "verb": "list", "resource": "pods"}}}),
    );
    // kubectl auth can-i get /healthz
    check(
        include_bytes!("ssar_healthz.pb"),
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "metadata": {},
               "spec": {"nonResourceAttributes": {"path": "/healthz", "verb": "get"}}}),
    );
    // kubectl auth can-i --list -n fleet-system
    check(
        include_bytes!("ssrr.pb"),
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "metadata": {},
               "spec": {"namespace": "fleet-system"}}),
    );
}

#[test]
fn token_request_from_kubectl_create_token() {
    // kubectl create token fleet-edge-site-a --duration=1h --audience=a --audience=b
    check(
        include_bytes!("token_request.pb"),
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "metadata": {},
               "spec": {"audiences": ["a", "b"], "expirationSeconds": 3600}}),
    );
}

#[test]
fn rbac_objects_from_kubectl_create() {
    check(
        include_bytes!("role.pb"),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
               "metadata": {"name": "r1", "namespace": "fleet-system"},
               "rules": [{"apiGroups": [""], "resources": ["serviceaccounts/token"],
                          "resourceNames": ["fleet-edge-site-a"], "verbs": ["create"]}]}),
    );
    check(
        include_bytes!("cluster_role.pb"),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "cr1"},
               "rules": [{"apiGroups": [""], "resources": ["pods", "pods/status"],
                          "resourceNames": ["p1"], "verbs": ["get", "patch"]}]}),
    );
    check(
        include_bytes!("cluster_role_aggregated.pb"),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "agg1"},
               "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"example.com/agg": "true"}}]}}),
    );
    check(
        include_bytes!("role_binding.pb"),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "rb1", "namespace": "fleet-system"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r1"},
               "subjects": [
                   {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "jane"},
                   {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "devs"},
                   {"kind": "ServiceAccount", "name": "fleet-edge-site-a", "namespace": "fleet-system"}]}),
    );
    check(
        include_bytes!("cluster_role_binding.pb"),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "crb1"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cr1"},
               "subjects": [{"kind": "ServiceAccount", "name": "fleet-edge-site-a", "namespace": "fleet-system"}]}),
    );
}

#[test]
fn core_objects_from_kubectl_create() {
    check(
        include_bytes!("service_account.pb"),
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": "fleet-edge-site-a", "namespace": "fleet-system"}}),
    );
    check(
        include_bytes!("namespace.pb"),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fleet-system"}, "spec": {}}),
    );
    // Secret data is bytes on the wire and base64 in JSON.
    check(
        include_bytes!("secret.pb"),
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1", "namespace": "default"},
               "data": {"k": "dg=="}}),
    );
    check(
        include_bytes!("config_map.pb"),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1", "namespace": "default"},
               "data": {"k": "v"}}),
    );
}

#[test]
fn truncated_capture_is_an_error() {
    let ssar = include_bytes!("ssar_status.pb");
    assert!(decode(&ssar[..ssar.len() - 3]).is_err());
}

#[test]
fn zero_generation_is_omitted_as_go_json_does() {
    // The captured ServiceAccount with `metadata.generation: 0` (field 7,
    // varint 0) appended to its ObjectMeta, as a Go client may send it.
    let sa = include_bytes!("service_account.pb");
    let body = decode(sa).unwrap();
    assert!(body["metadata"].get("generation").is_none());
    // ObjectMeta {name: "n", generation: 0} and {name: "n", generation: 3}.
    let enc = |generation: u8| {
        let meta = [10, 1, b'n', 7 << 3, generation];
        let mut raw = vec![10, meta.len() as u8];
        raw.extend(meta);
        let tm = [10, 2, b'v', b'1', 18, 14];
        let mut out = b"k8s\0".to_vec();
        out.extend([10, (tm.len() + 14) as u8]);
        out.extend(tm);
        out.extend(b"ServiceAccount");
        out.extend([18, raw.len() as u8]);
        out.extend(raw);
        decode(&out).unwrap()
    };
    assert_eq!(enc(0)["metadata"], json!({"name": "n"}));
    assert_eq!(enc(3)["metadata"], json!({"name": "n", "generation": 3}));
}
