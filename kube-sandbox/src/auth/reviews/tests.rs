//! Review API responses, shaped like the real server's.

use super::*;
use crate::auth::authn::ServiceAccountClaims;
use crate::auth::rbac::bootstrap_snapshot;

fn site_snapshot() -> RbacSnapshot {
    let mut s = bootstrap_snapshot();
    s.cluster_roles.push(json!({
        "metadata": {"name": "fleet-edge-site-a"},
        "rules": [
            {"apiGroups": ["federation.kubectl-fleet.dev"], "resources": ["federatedclusters/status"],
             "resourceNames": ["site-a"], "verbs": ["get", "update", "patch"]},
            {"apiGroups": ["federation.kubectl-fleet.dev"], "resources": ["federatedclusters"],
             "resourceNames": ["site-a"], "verbs": ["get"]}]}));
    s.cluster_role_bindings.push(json!({
        "metadata": {"name": "fleet-edge-site-a"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "fleet-edge-site-a"},
        "subjects": [{"kind": "ServiceAccount", "name": "fleet-edge-site-a", "namespace": "fleet-system"}]}));
    s.role_bindings.push(json!({
        "metadata": {"name": "broken", "namespace": "fleet-system"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "missing"},
        "subjects": [{"kind": "Group", "name": "system:serviceaccounts:fleet-system"}]}));
    s
}

fn site_user() -> UserInfo {
    authn::service_account_user(&ServiceAccountClaims {
        namespace: "fleet-system".into(),
        name: "fleet-edge-site-a".into(),
        uid: "u-1".into(),
        audiences: vec![],
        issued_at: 0,
        expires_at: 10,
    })
}

fn sar(spec: Value) -> Value {
    json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "metadata": {}, "spec": spec})
}

#[test]
fn subject_access_review_allows_with_the_rbac_reason() {
    let spec = json!({
        "user": "system:serviceaccount:fleet-system:fleet-edge-site-a",
        "groups": ["system:serviceaccounts", "system:authenticated"],
        "resourceAttributes": {"verb": "patch", "group": "federation.kubectl-fleet.dev", "version": "v1alpha1",
                               "resource": "federatedclusters", "subresource": "status", "name": "site-a"}});
    let out = subject_access_review(&site_snapshot(), &sar(spec.clone()));
    assert_eq!(
        out,
        json!({
            "kind": "SubjectAccessReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": null},
            "spec": spec,
            "status": {"allowed": true, "reason": "RBAC: allowed by ClusterRoleBinding \"fleet-edge-site-a\" of ClusterRole \"fleet-edge-site-a\" to ServiceAccount \"fleet-edge-site-a/fleet-system\""},
        })
    );
}

#[test]
fn subject_access_review_denies_without_denied_field() {
    let spec = json!({"user": "system:serviceaccount:fleet-system:fleet-edge-site-a",
        "resourceAttributes": {"verb": "list", "group": "federation.kubectl-fleet.dev", "resource": "federatedclusters"}});
    let out = subject_access_review(&site_snapshot(), &sar(spec));
    assert_eq!(out["status"], json!({"allowed": false}));
}

#[test]
fn subject_access_review_does_not_add_authenticated_group() {
    // Discovery is bound to system:authenticated; a SAR naming only a user
    // is evaluated with exactly the groups it lists.
    let bare =
        sar(json!({"user": "jane", "nonResourceAttributes": {"path": "/api", "verb": "get"}}));
    assert_eq!(
        subject_access_review(&site_snapshot(), &bare)["status"]["allowed"],
        false
    );
    let grouped = sar(json!({"user": "jane", "groups": ["system:authenticated"],
        "nonResourceAttributes": {"path": "/api", "verb": "get"}}));
    assert_eq!(
        subject_access_review(&site_snapshot(), &grouped)["status"]["allowed"],
        true
    );
}

#[test]
fn subject_access_review_field_selector_does_not_act_as_a_name() {
    let mut s = site_snapshot();
    s.cluster_roles.push(json!({"metadata": {"name": "named-list"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["c"], "verbs": ["list"]}]}));
    s.cluster_role_bindings.push(json!({"metadata": {"name": "named-list"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "named-list"},
        "subjects": [{"kind": "User", "name": "jane"}]}));
    let with_selector = sar(
        json!({"user": "jane", "resourceAttributes": {"verb": "list", "resource": "configmaps",
        "namespace": "x", "fieldSelector": {"rawSelector": "metadata.name=c"}}}),
    );
    assert_eq!(
        subject_access_review(&s, &with_selector)["status"]["allowed"],
        false
    );
    let with_name = sar(
        json!({"user": "jane", "resourceAttributes": {"verb": "list", "resource": "configmaps",
        "namespace": "x", "name": "c"}}),
    );
    assert_eq!(
        subject_access_review(&s, &with_name)["status"]["allowed"],
        true
    );
}

#[test]
fn self_subject_access_review_uses_the_caller() {
    let review = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "metadata": {"name": "kept"},
        "spec": {"resourceAttributes": {"namespace": "fleet-system", "verb": "get", "resource": "secrets"}}});
    let out = self_subject_access_review(&site_snapshot(), &site_user(), &review);
    assert_eq!(out["kind"], "SelfSubjectAccessReview");
    assert_eq!(
        out["metadata"],
        json!({"name": "kept", "creationTimestamp": null})
    );
    assert_eq!(out["spec"], review["spec"]);
    // Denied, and the broken RoleBinding in fleet-system is the reason.
    assert_eq!(
        out["status"],
        json!({"allowed": false, "reason": "RBAC: role.rbac.authorization.k8s.io \"missing\" not found"})
    );
    let admin = UserInfo {
        username: "sandbox-admin".into(),
        groups: vec!["system:masters".into(), "system:authenticated".into()],
        ..Default::default()
    };
    assert_eq!(
        self_subject_access_review(&site_snapshot(), &admin, &review)["status"],
        json!({"allowed": true})
    );
}

#[test]
fn self_subject_rules_review_lists_rules_without_echoing_spec() {
    let review = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
        "metadata": {"name": "x"}, "spec": {"namespace": "default"}});
    let out = self_subject_rules_review(&site_snapshot(), &site_user(), &review);
    assert_eq!(out["apiVersion"], "authorization.k8s.io/v1");
    assert_eq!(out["kind"], "SelfSubjectRulesReview");
    assert_eq!(out["metadata"], json!({"creationTimestamp": null}));
    assert_eq!(out["spec"], json!({}));
    assert_eq!(out["status"]["incomplete"], false);
    assert!(out["status"].get("evaluationError").is_none());
    let rules = out["status"]["resourceRules"].as_array().unwrap();
    assert!(rules.contains(
        &json!({"verbs": ["get"], "apiGroups": ["federation.kubectl-fleet.dev"],
        "resources": ["federatedclusters"], "resourceNames": ["site-a"]})
    ));
    assert!(rules.contains(
        &json!({"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
        "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]})
    ));
    let urls = out["status"]["nonResourceRules"].as_array().unwrap();
    assert!(urls.iter().any(|r| {
        r["nonResourceURLs"]
            .as_array()
            .unwrap()
            .contains(&json!("/apis/*"))
    }));
    assert!(urls.iter().all(|r| r.get("resources").is_none()));

    let incomplete = self_subject_rules_review(
        &site_snapshot(),
        &site_user(),
        &json!({"spec": {"namespace": "fleet-system"}}),
    );
    assert_eq!(incomplete["status"]["incomplete"], true);
    assert_eq!(
        incomplete["status"]["evaluationError"],
        "role.rbac.authorization.k8s.io \"missing\" not found"
    );
}

#[test]
fn reviews_are_validated_like_the_real_server() {
    let neither = validate_subject_access_review(&sar(json!({}))).unwrap_err();
    assert_eq!(neither.code, 422);
    assert_eq!(
        neither.message,
        "SubjectAccessReview.authorization.k8s.io \"\" is invalid: [spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: \"\": at least one of user or group must be specified]"
    );
    assert!(
        validate_subject_access_review(&sar(
            json!({"groups": ["g"], "nonResourceAttributes": {"path": "/", "verb": "get"}})
        ))
        .is_ok()
    );
    let both = json!({"spec": {"resourceAttributes": {}, "nonResourceAttributes": {}}});
    assert!(
        validate_self_subject_access_review(&both)
            .unwrap_err()
            .message
            .contains("cannot be specified in combination with resourceAttributes")
    );
    assert!(
        validate_self_subject_access_review(
            &json!({"spec": {"resourceAttributes": {"verb": "get"}}})
        )
        .is_ok()
    );
    let no_ns = validate_self_subject_rules_review(&json!({"spec": {}})).unwrap_err();
    assert_eq!(
        (no_ns.code, no_ns.message.as_str()),
        (400, "no namespace on request")
    );
    assert!(validate_self_subject_rules_review(&json!({"spec": {"namespace": "default"}})).is_ok());
    let no_token = validate_token_review(&json!({"spec": {}})).unwrap_err();
    assert_eq!(
        (no_token.code, no_token.message.as_str()),
        (400, "token is required for TokenReview in authentication")
    );
}

fn token_review_request(token: &str, audiences: &[&str]) -> Value {
    json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "metadata": {},
           "spec": {"token": token, "audiences": audiences}})
}

#[test]
fn token_review_authenticates_a_live_token() {
    let issuer = TokenIssuer::new();
    let claims = ServiceAccountClaims {
        namespace: "fleet-system".into(),
        name: "fleet-edge-site-a".into(),
        uid: "u-1".into(),
        audiences: vec![authn::ISSUER.into()],
        issued_at: 100,
        expires_at: 1_000,
    };
    let token = issuer.issue(&claims);
    let jti = issuer.verify_token(&token, 100).unwrap().jti;
    let live = |_: &str, _: &str| Some("u-1".to_string());
    let out = review_token(&issuer, &token_review_request(&token, &[]), 500, live);
    assert_eq!(out["kind"], "TokenReview");
    assert_eq!(out["metadata"], json!({"creationTimestamp": null}));
    assert_eq!(
        out["status"],
        json!({
            "authenticated": true,
            "user": {
                "username": "system:serviceaccount:fleet-system:fleet-edge-site-a",
                "uid": "u-1",
                "groups": ["system:serviceaccounts", "system:serviceaccounts:fleet-system", "system:authenticated"],
                "extra": {"authentication.kubernetes.io/credential-id": [format!("JTI={jti}")]},
            },
            "audiences": [authn::ISSUER],
        })
    );

    let expired = review_token(&issuer, &token_review_request(&token, &[]), 1_000, live);
    assert_eq!(
        expired["status"],
        json!({"user": {}, "error": "[invalid bearer token, service account token has expired]"})
    );
    let deleted = review_token(
        &issuer,
        &token_review_request(&token, &[]),
        500,
        |_: &str, _: &str| None,
    );
    assert_eq!(
        deleted["status"]["error"],
        "[invalid bearer token, serviceaccounts \"fleet-edge-site-a\" not found]"
    );
    let recreated = review_token(
        &issuer,
        &token_review_request(&token, &[]),
        500,
        |_: &str, _: &str| Some("u-2".into()),
    );
    assert_eq!(
        recreated["status"]["error"],
        "[invalid bearer token, service account UID (u-2) does not match claim (u-1)]"
    );
    let wrong_aud = review_token(
        &issuer,
        &token_review_request(&token, &["vault"]),
        500,
        live,
    );
    assert_eq!(
        wrong_aud["status"]["error"],
        format!(
            "[invalid bearer token, token audiences [{:?}] is invalid for the target audiences [\"vault\"]]",
            authn::ISSUER
        )
    );
    assert!(wrong_aud["status"].get("authenticated").is_none());
    let garbage = review_token(&issuer, &token_review_request("nope", &[]), 500, live);
    assert_eq!(
        garbage["status"]["error"],
        "[invalid bearer token, token is malformed]"
    );
}

#[test]
fn token_review_for_a_caller_authenticated_user() {
    let admin = UserInfo {
        username: "sandbox-admin".into(),
        groups: vec!["system:masters".into(), "system:authenticated".into()],
        ..Default::default()
    };
    let out = token_review(&token_review_request("t", &[]), Ok(admin));
    assert_eq!(
        out["status"],
        json!({"authenticated": true, "user": {"username": "sandbox-admin", "groups": ["system:masters", "system:authenticated"]}, "audiences": [authn::ISSUER]})
    );
    let failed = token_review(&token_review_request("t", &[]), Err(String::new()));
    assert_eq!(failed["status"], json!({"user": {}}));
}

#[test]
fn self_subject_review_reports_the_caller() {
    let out = self_subject_review(
        &site_user(),
        &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview", "metadata": {}}),
    );
    assert_eq!(
        out,
        json!({
            "kind": "SelfSubjectReview",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": null},
            "status": {"userInfo": {
                "username": "system:serviceaccount:fleet-system:fleet-edge-site-a",
                "uid": "u-1",
                "groups": ["system:serviceaccounts", "system:serviceaccounts:fleet-system", "system:authenticated"]}},
        })
    );
}
