//! The authn → authz path a request takes, through the public `auth` API
//! only: a ServiceAccount token for the per-site identity is accepted
//! while live, authorizes exactly its own site, and stops authenticating
//! once expired, once its ServiceAccount is deleted, or once the
//! ServiceAccount is recreated with a new uid.

use kube_sandbox::auth::Attributes;
use kube_sandbox::auth::rbac::{self, Decision, RbacSnapshot};
use kube_sandbox::auth::reviews::authenticate_service_account_token;
use kube_sandbox::auth::{ServiceAccountClaims, TokenIssuer};
use serde_json::json;

const FLEET: &str = "federation.kubectl-fleet.dev";
const SA_UID: &str = "0b6c7a52-8d1e-4f7e-9a11-5d2b3c4e5f60";

fn hub_rbac() -> RbacSnapshot {
    let mut snap = RbacSnapshot::default();
    for obj in rbac::bootstrap_objects() {
        match obj["kind"].as_str() {
            Some("ClusterRole") => snap.cluster_roles.push(obj),
            Some("ClusterRoleBinding") => snap.cluster_role_bindings.push(obj),
            _ => {}
        }
    }
    snap.cluster_roles.push(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "fleet-edge-site-a"},
        "rules": [
            {"apiGroups": [FLEET], "resources": ["federatedclusters/status"], "resourceNames": ["site-a"], "verbs": ["get", "update", "patch"]},
            {"apiGroups": [FLEET], "resources": ["federatedclusters"], "resourceNames": ["site-a"], "verbs": ["get"]},
        ],
    }));
    snap.cluster_role_bindings.push(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "fleet-edge-site-a"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "fleet-edge-site-a"},
        "subjects": [{"kind": "ServiceAccount", "name": "fleet-edge-site-a", "namespace": "fleet-system"}],
    }));
    snap
}

fn patch_status(user: kube_sandbox::auth::UserInfo, site: &str) -> Attributes {
    Attributes {
        user,
        verb: "patch".into(),
        resource_request: true,
        api_group: FLEET.into(),
        api_version: "v1alpha1".into(),
        resource: "federatedclusters".into(),
        subresource: "status".into(),
        name: site.into(),
        ..Default::default()
    }
}

#[test]
fn site_token_lifecycle() {
    let issuer = TokenIssuer::new();
    let now = 1_700_000_000;
    let token = issuer.issue(&ServiceAccountClaims {
        namespace: "fleet-system".into(),
        name: "fleet-edge-site-a".into(),
        uid: SA_UID.into(),
        audiences: vec!["https://kubernetes.default.svc.cluster.local".into()],
        issued_at: now,
        expires_at: now + 600,
    });
    let rbac = hub_rbac();
    let live = |ns: &str, name: &str| {
        (ns == "fleet-system" && name == "fleet-edge-site-a").then(|| SA_UID.to_string())
    };

    let (user, audiences) =
        authenticate_service_account_token(&issuer, &token, now + 1, &[], live).unwrap();
    assert_eq!(
        user.username,
        "system:serviceaccount:fleet-system:fleet-edge-site-a"
    );
    assert_eq!(audiences, ["https://kubernetes.default.svc.cluster.local"]);

    assert_eq!(
        rbac::authorize(&rbac, &patch_status(user.clone(), "site-a")),
        Decision::Allow
    );
    let other = patch_status(user, "site-b");
    let eval = rbac::evaluate(&rbac, &other);
    assert_eq!(eval.decision, Decision::Deny);
    let status = rbac::forbidden_error(&other, &eval.reason).to_status();
    assert_eq!(status["code"], 403);
    assert_eq!(
        status["message"],
        "federatedclusters.federation.kubectl-fleet.dev \"site-b\" is forbidden: User \"system:serviceaccount:fleet-system:fleet-edge-site-a\" cannot patch resource \"federatedclusters/status\" in API group \"federation.kubectl-fleet.dev\" at the cluster scope"
    );

    let expired = authenticate_service_account_token(&issuer, &token, now + 600, &[], live);
    assert_eq!(
        expired.unwrap_err(),
        "[invalid bearer token, service account token has expired]"
    );
    let deleted =
        authenticate_service_account_token(&issuer, &token, now + 1, &[], |_: &str, _: &str| None);
    assert_eq!(
        deleted.unwrap_err(),
        "[invalid bearer token, serviceaccounts \"fleet-edge-site-a\" not found]"
    );
    let recreated =
        authenticate_service_account_token(&issuer, &token, now + 1, &[], |_: &str, _: &str| {
            Some("a-new-uid".to_string())
        });
    assert!(recreated.unwrap_err().contains("does not match claim"));
    // A token from another server (another key) is never accepted.
    let foreign = TokenIssuer::new();
    assert!(authenticate_service_account_token(&foreign, &token, now + 1, &[], live).is_err());
}
