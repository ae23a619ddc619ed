//! Decoding request bodies captured from kubectl 1.33 (`protobuf/*.pb`,
//! recorded from `kubectl auth can-i`, `create token`, `create sa|ns|role|
//! clusterrole|rolebinding|clusterrolebinding|secret|configmap`).

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

fn len_field(number: u32, bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![
        u8::try_from(number << 3 | 2).unwrap(),
        u8::try_from(bytes.len()).unwrap(),
    ];
    out.extend_from_slice(bytes);
    out
}

fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = len_field(1, api_version.as_bytes());
    type_meta.extend(len_field(2, kind.as_bytes()));
    let mut out = b"k8s\0".to_vec();
    out.extend(len_field(1, &type_meta));
    out.extend(len_field(2, raw));
    out
}

#[test]
fn subject_access_review_extra_and_groups() {
    // spec {user: "jane", groups: ["a", "b"], extra: {"scopes": ["x", "y"]}, uid: "u1",
    //       nonResourceAttributes: {path: "/metrics", verb: "get"}}
    let mut extra_value = len_field(1, b"x");
    extra_value.extend(len_field(1, b"y"));
    let mut entry = len_field(1, b"scopes");
    entry.extend(len_field(2, &extra_value));
    let mut nra = len_field(1, b"/metrics");
    nra.extend(len_field(2, b"get"));
    let mut spec = len_field(2, &nra);
    spec.extend(len_field(3, b"jane"));
    spec.extend(len_field(4, b"a"));
    spec.extend(len_field(4, b"b"));
    spec.extend(len_field(5, &entry));
    spec.extend(len_field(6, b"u1"));
    let raw = len_field(2, &spec);
    check(
        &envelope("authorization.k8s.io/v1", "SubjectAccessReview", &raw),
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
               "spec": {"user": "jane", "groups": ["a", "b"], "uid": "u1", "extra": {"scopes": ["x", "y"]},
                        "nonResourceAttributes": {"path": "/metrics", "verb": "get"}}}),
    );
}

#[test]
fn unknown_fields_are_skipped() {
    // ObjectMeta field 8 (creationTimestamp) and a varint field 7 (generation).
    let mut meta = len_field(1, b"n");
    meta.extend([7 << 3, 5]);
    meta.extend(len_field(8, &[8, 1]));
    let raw = len_field(1, &meta);
    check(
        &envelope("v1", "ServiceAccount", &raw),
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "n"}}),
    );
}

#[test]
fn bad_bodies_are_errors() {
    assert_eq!(decode(b"{\"kind\":\"Pod\"}"), Err(ProtobufError::NoMagic));
    let ssar = include_bytes!("ssar_status.pb");
    assert_eq!(
        decode(&ssar[..ssar.len() - 3]),
        Err(ProtobufError::Malformed)
    );
    assert_eq!(
        decode(b"k8s\0\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"),
        Err(ProtobufError::Malformed)
    );
    // A string field sent as a varint.
    let raw = len_field(1, &[1 << 3, 1]);
    assert_eq!(
        decode(&envelope("v1", "ServiceAccount", &raw)),
        Err(ProtobufError::Malformed)
    );
    assert_eq!(
        decode(&envelope("apps/v1", "Deployment", &[])),
        Err(ProtobufError::Unsupported(
            "apps/v1, Kind=Deployment".into()
        ))
    );
    assert_eq!(
        ProtobufError::Unsupported("apps/v1, Kind=Deployment".into()).to_string(),
        "protobuf decoding of apps/v1, Kind=Deployment is not supported by kube-sandbox"
    );
}

#[test]
fn content_type_detection() {
    assert!(is_protobuf("application/vnd.kubernetes.protobuf"));
    assert!(is_protobuf(
        "application/vnd.kubernetes.protobuf; charset=utf-8"
    ));
    assert!(!is_protobuf("application/json"));
    assert!(!is_protobuf("application/json;as=Table;v=v1;g=meta.k8s.io"));
    assert!(is_protobuf("Application/Vnd.Kubernetes.Protobuf"));
}
