//! The RBAC decision table: one row per rule form, plus the exact 403
//! messages and SubjectAccessReview reasons the real server gives.

use super::*;
use crate::auth::authn::{ServiceAccountClaims, service_account_user};

mod reasons;

const FLEET: &str = "federation.kubectl-fleet.dev";

fn user(name: &str, groups: &[&str]) -> UserInfo {
    let mut groups: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
    groups.push("system:authenticated".into());
    UserInfo {
        username: name.into(),
        groups,
        ..Default::default()
    }
}

fn sa(ns: &str, name: &str) -> UserInfo {
    service_account_user(&ServiceAccountClaims {
        namespace: ns.into(),
        name: name.into(),
        uid: format!("uid-{ns}-{name}"),
        audiences: vec![],
        issued_at: 0,
        expires_at: i64::MAX,
    })
}

fn r(verbs: &[&str], groups: &[&str], resources: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

fn named(verbs: &[&str], groups: &[&str], resources: &[&str], names: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "resourceNames": names, "verbs": verbs})
}

fn urls(verbs: &[&str], urls: &[&str]) -> Value {
    json!({"nonResourceURLs": urls, "verbs": verbs})
}

fn cr(name: &str, rules: Vec<Value>) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
           "metadata": {"name": name}, "rules": rules})
}

fn cr_labeled(name: &str, labels: Value, rules: Vec<Value>) -> Value {
    let mut role = cr(name, rules);
    role["metadata"]["labels"] = labels;
    role
}

fn role(ns: &str, name: &str, rules: Vec<Value>) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
           "metadata": {"name": name, "namespace": ns}, "rules": rules})
}

fn subj_user(name: &str) -> Value {
    json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name})
}

fn subj_group(name: &str) -> Value {
    json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": name})
}

fn subj_sa(ns: Option<&str>, name: &str) -> Value {
    match ns {
        Some(ns) => json!({"kind": "ServiceAccount", "name": name, "namespace": ns}),
        None => json!({"kind": "ServiceAccount", "name": name}),
    }
}

fn crb(name: &str, role: &str, subjects: Vec<Value>) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
           "metadata": {"name": name},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
           "subjects": subjects})
}

fn rb(ns: &str, name: &str, kind: &str, role: &str, subjects: Vec<Value>) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
           "metadata": {"name": name, "namespace": ns},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
           "subjects": subjects})
}

/// What `kubectl fleet register SITE` creates (docs/architecture.md#the-life-of-a-site).
fn site_identity(snap: &mut RbacSnapshot, site: &str) {
    let id = format!("fleet-edge-{site}");
    snap.cluster_roles.push(cr(
        &id,
        vec![
            named(
                &["get", "update", "patch"],
                &[FLEET],
                &["federatedclusters/status"],
                &[site],
            ),
            named(&["get"], &[FLEET], &["federatedclusters"], &[site]),
        ],
    ));
    snap.cluster_role_bindings
        .push(crb(&id, &id, vec![subj_sa(Some("fleet-system"), &id)]));
    snap.roles.push(role(
        "fleet-system",
        &id,
        vec![named(
            &["create"],
            &[""],
            &["serviceaccounts/token"],
            &[&id],
        )],
    ));
    snap.role_bindings.push(rb(
        "fleet-system",
        &id,
        "Role",
        &id,
        vec![subj_sa(Some("fleet-system"), &id)],
    ));
}

fn world() -> RbacSnapshot {
    let mut s = bootstrap_snapshot();
    s.cluster_roles.extend([
        cr(
            "pod-reader",
            vec![r(&["get", "list", "watch"], &[""], &["pods"])],
        ),
        cr("secret-reader", vec![r(&["get"], &[""], &["secrets"])]),
        cr("all-get", vec![r(&["get"], &["*"], &["*"])]),
        cr(
            "named-cm",
            vec![named(
                &[
                    "get",
                    "list",
                    "watch",
                    "create",
                    "update",
                    "delete",
                    "deletecollection",
                ],
                &[""],
                &["configmaps"],
                &["app-config"],
            )],
        ),
        cr(
            "subresources",
            vec![
                r(&["patch"], &["apps"], &["deployments/status"]),
                r(&["get"], &["apps"], &["*/scale"]),
            ],
        ),
        cr(
            "wild-verbs",
            vec![r(&["*"], &["example.com"], &["widgets"])],
        ),
        cr("url-reader", vec![urls(&["get"], &["/metrics", "/logs/*"])]),
        cr("pods-slash-star", vec![r(&["get"], &[""], &["pods/*"])]),
        cr(
            "crb-sa-without-namespace",
            vec![r(&["get"], &[""], &["nodes"])],
        ),
        cr("urls-in-a-rolebinding", vec![urls(&["get"], &["/debug"])]),
        cr(
            "impersonator",
            vec![r(
                &["impersonate"],
                &[""],
                &["users", "groups", "serviceaccounts"],
            )],
        ),
    ]);
    s.cluster_role_bindings.extend([
        crb("alice-pods", "pod-reader", vec![subj_user("alice")]),
        crb("auditors-get", "all-get", vec![subj_group("auditors")]),
        crb("dave-named", "named-cm", vec![subj_user("dave")]),
        crb("erin-subresources", "subresources", vec![subj_user("erin")]),
        crb("frank-widgets", "wild-verbs", vec![subj_user("frank")]),
        crb("gina-urls", "url-reader", vec![subj_user("gina")]),
        crb("hank-pods", "pods-slash-star", vec![subj_user("hank")]),
        crb(
            "sa-no-ns",
            "crb-sa-without-namespace",
            vec![subj_sa(None, "builder")],
        ),
        crb("ops-impersonate", "impersonator", vec![subj_user("ops")]),
    ]);
    s.roles.extend([
        role(
            "team-a",
            "configmap-editor",
            vec![r(&["*"], &[""], &["configmaps"])],
        ),
        role(
            "team-a",
            "deployer",
            vec![r(&["create", "update"], &["apps"], &["deployments"])],
        ),
        role(
            "team-b",
            "deployer",
            vec![r(
                &["create", "update", "delete"],
                &["apps"],
                &["deployments"],
            )],
        ),
    ]);
    s.role_bindings.extend([
        rb(
            "team-a",
            "bob-cm",
            "Role",
            "configmap-editor",
            vec![subj_user("bob")],
        ),
        rb(
            "team-a",
            "carol-secrets",
            "ClusterRole",
            "secret-reader",
            vec![subj_user("carol")],
        ),
        // No namespace on the subject: it means team-a's builder.
        rb(
            "team-a",
            "builder",
            "Role",
            "deployer",
            vec![subj_sa(None, "builder")],
        ),
        rb(
            "team-a",
            "ivan-gone",
            "Role",
            "gone",
            vec![subj_user("ivan")],
        ),
        rb(
            "team-a",
            "ivan-gone-cr",
            "ClusterRole",
            "gone-too",
            vec![subj_user("ivan")],
        ),
        rb(
            "team-a",
            "gina-urls",
            "ClusterRole",
            "urls-in-a-rolebinding",
            vec![subj_user("gina")],
        ),
        rb(
            "team-a",
            "viewer",
            "ClusterRole",
            "view",
            vec![subj_user("viewer")],
        ),
        rb(
            "team-a",
            "editor",
            "ClusterRole",
            "edit",
            vec![subj_user("editor")],
        ),
        rb(
            "team-a",
            "ns-admin",
            "ClusterRole",
            "admin",
            vec![subj_user("ns-admin")],
        ),
        // A Role-kind roleRef resolves in the binding's own namespace only.
        rb(
            "team-b",
            "bob-cm",
            "Role",
            "configmap-editor",
            vec![subj_user("bob")],
        ),
    ]);
    site_identity(&mut s, "site-a");
    site_identity(&mut s, "site-b");
    s
}

fn res(u: &UserInfo, verb: &str, group: &str, resource: &str) -> Attributes {
    Attributes {
        user: u.clone(),
        verb: verb.into(),
        resource_request: true,
        api_group: group.into(),
        api_version: "v1".into(),
        resource: resource.into(),
        ..Default::default()
    }
}

fn path(u: &UserInfo, verb: &str, p: &str) -> Attributes {
    Attributes {
        user: u.clone(),
        verb: verb.into(),
        path: p.into(),
        ..Default::default()
    }
}

trait Build {
    fn ns(self, ns: &str) -> Self;
    fn name(self, name: &str) -> Self;
    fn sub(self, sub: &str) -> Self;
    fn fs(self, name: &str) -> Self;
}

impl Build for Attributes {
    fn ns(mut self, ns: &str) -> Self {
        self.namespace = ns.into();
        self
    }
    fn name(mut self, name: &str) -> Self {
        self.name = name.into();
        self
    }
    fn sub(mut self, sub: &str) -> Self {
        self.subresource = sub.into();
        self
    }
    fn fs(mut self, name: &str) -> Self {
        self.field_selector_name = Some(name.into());
        self
    }
}

#[test]
fn decision_table() {
    let w = world();
    let alice = user("alice", &[]);
    let bob = user("bob", &[]);
    let carol = user("carol", &[]);
    let auditor = user("zoe", &["auditors"]);
    let dave = user("dave", &[]);
    let erin = user("erin", &[]);
    let frank = user("frank", &[]);
    let gina = user("gina", &[]);
    let hank = user("hank", &[]);
    let ivan = user("ivan", &[]);
    let nobody = user("nobody", &[]);
    let root = user("root", &["system:masters"]);
    let builder_a = sa("team-a", "builder");
    let builder_b = sa("team-b", "builder");
    let viewer = user("viewer", &[]);
    let editor = user("editor", &[]);
    let ns_admin = user("ns-admin", &[]);
    let site = sa("fleet-system", "fleet-edge-site-a");
    // A user with no groups at all (as a SubjectAccessReview may name one).
    let bare = UserInfo {
        username: "bare".into(),
        ..Default::default()
    };

    let table: Vec<(&str, Attributes, bool)> = vec![
        // verbs
        (
            "listed verb",
            res(&alice, "get", "", "pods").ns("x").name("p"),
            true,
        ),
        ("listed verb, list", res(&alice, "list", "", "pods"), true),
        (
            "unlisted verb",
            res(&alice, "delete", "", "pods").ns("x").name("p"),
            false,
        ),
        (
            "verb * grants any verb",
            res(&frank, "deletecollection", "example.com", "widgets").ns("x"),
            true,
        ),
        (
            "verb * grants a custom verb",
            res(&frank, "escalate", "example.com", "widgets"),
            true,
        ),
        // apiGroups
        (
            "core group \"\" only",
            res(&alice, "get", "apps", "pods").ns("x").name("p"),
            false,
        ),
        (
            "group must match",
            res(&frank, "get", "example.org", "widgets"),
            false,
        ),
        (
            "apiGroups * with resources *",
            res(&auditor, "get", FLEET, "federatedclusters").name("site-b"),
            true,
        ),
        (
            "apiGroups * verb still limited",
            res(&auditor, "list", FLEET, "federatedclusters"),
            false,
        ),
        (
            "resources * covers subresources",
            res(&auditor, "get", "", "pods")
                .ns("x")
                .name("p")
                .sub("log"),
            true,
        ),
        // resources and subresources
        (
            "resource does not cover its subresource",
            res(&alice, "get", "", "pods").ns("x").name("p").sub("log"),
            false,
        ),
        (
            "exact resource/subresource",
            res(&erin, "patch", "apps", "deployments")
                .ns("x")
                .name("d")
                .sub("status"),
            true,
        ),
        (
            "resource/subresource does not cover the resource",
            res(&erin, "patch", "apps", "deployments").ns("x").name("d"),
            false,
        ),
        (
            "*/subresource on any resource",
            res(&erin, "get", "apps", "statefulsets")
                .ns("x")
                .name("s")
                .sub("scale"),
            true,
        ),
        (
            "*/subresource needs that subresource",
            res(&erin, "get", "apps", "statefulsets")
                .ns("x")
                .name("s")
                .sub("status"),
            false,
        ),
        (
            "*/subresource does not cover the resource",
            res(&erin, "get", "apps", "statefulsets").ns("x").name("s"),
            false,
        ),
        (
            "resource/* is not a wildcard in real RBAC",
            res(&hank, "get", "", "pods").ns("x").name("p").sub("log"),
            false,
        ),
        // resourceNames
        (
            "resourceNames: get the named object",
            res(&dave, "get", "", "configmaps")
                .ns("x")
                .name("app-config"),
            true,
        ),
        (
            "resourceNames: update the named object",
            res(&dave, "update", "", "configmaps")
                .ns("x")
                .name("app-config"),
            true,
        ),
        (
            "resourceNames: delete the named object",
            res(&dave, "delete", "", "configmaps")
                .ns("x")
                .name("app-config"),
            true,
        ),
        (
            "resourceNames: another name",
            res(&dave, "get", "", "configmaps").ns("x").name("other"),
            false,
        ),
        (
            "resourceNames never grant create",
            res(&dave, "create", "", "configmaps").ns("x"),
            false,
        ),
        (
            "resourceNames never grant deletecollection",
            res(&dave, "deletecollection", "", "configmaps").ns("x"),
            false,
        ),
        (
            "deletecollection ignores a name field selector",
            res(&dave, "deletecollection", "", "configmaps")
                .ns("x")
                .fs("app-config"),
            false,
        ),
        (
            "resourceNames: plain list",
            res(&dave, "list", "", "configmaps").ns("x"),
            false,
        ),
        (
            "resourceNames: plain watch",
            res(&dave, "watch", "", "configmaps").ns("x"),
            false,
        ),
        (
            "resourceNames: list with metadata.name=that name",
            res(&dave, "list", "", "configmaps")
                .ns("x")
                .fs("app-config"),
            true,
        ),
        (
            "resourceNames: watch with metadata.name=that name",
            res(&dave, "watch", "", "configmaps")
                .ns("x")
                .fs("app-config"),
            true,
        ),
        (
            "resourceNames: list with another name",
            res(&dave, "list", "", "configmaps").ns("x").fs("other"),
            false,
        ),
        (
            "resourceNames: watch with another name",
            res(&dave, "watch", "", "configmaps").ns("x").fs("other"),
            false,
        ),
        (
            "no resourceNames: list with a name selector",
            res(&alice, "list", "", "pods").fs("p"),
            true,
        ),
        // Role vs ClusterRole scope
        (
            "Role grants in its namespace",
            res(&bob, "delete", "", "configmaps").ns("team-a").name("c"),
            true,
        ),
        (
            "Role grants nothing in another namespace",
            res(&bob, "get", "", "configmaps").ns("team-c").name("c"),
            false,
        ),
        (
            "Role grants nothing cluster-wide",
            res(&bob, "list", "", "configmaps"),
            false,
        ),
        (
            "Role-kind roleRef only resolves in the binding namespace",
            res(&bob, "get", "", "configmaps").ns("team-b").name("c"),
            false,
        ),
        (
            "RoleBinding to ClusterRole grants in its namespace",
            res(&carol, "get", "", "secrets").ns("team-a").name("s"),
            true,
        ),
        (
            "RoleBinding to ClusterRole: other namespace",
            res(&carol, "get", "", "secrets").ns("team-b").name("s"),
            false,
        ),
        (
            "RoleBinding to ClusterRole: cluster scope",
            res(&carol, "get", "", "secrets").name("s"),
            false,
        ),
        (
            "ClusterRoleBinding grants in every namespace",
            res(&alice, "watch", "", "pods").ns("any"),
            true,
        ),
        (
            "ClusterRoleBinding grants at cluster scope",
            res(&alice, "list", "", "pods"),
            true,
        ),
        // subjects
        (
            "User subject: other user",
            res(&nobody, "get", "", "pods").ns("x").name("p"),
            false,
        ),
        (
            "Group subject",
            res(&auditor, "get", "", "secrets").ns("x").name("s"),
            true,
        ),
        (
            "ServiceAccount subject, namespace defaulted to the binding's",
            res(&builder_a, "create", "apps", "deployments").ns("team-a"),
            true,
        ),
        (
            "ServiceAccount of the same name elsewhere",
            res(&builder_b, "create", "apps", "deployments").ns("team-a"),
            false,
        ),
        (
            "ServiceAccount in its own namespace, unbound there",
            res(&builder_b, "create", "apps", "deployments").ns("team-b"),
            false,
        ),
        (
            "ClusterRoleBinding SA subject without namespace matches nobody",
            res(&builder_a, "get", "", "nodes").name("n"),
            false,
        ),
        (
            "a User whose name is the SA username matches the SA subject",
            res(
                &user("system:serviceaccount:team-a:builder", &[]),
                "create",
                "apps",
                "deployments",
            )
            .ns("team-a"),
            true,
        ),
        (
            "binding to a missing Role grants nothing",
            res(&ivan, "get", "", "pods").ns("team-a").name("p"),
            false,
        ),
        // system:masters
        (
            "system:masters bypass",
            res(&root, "delete", "anything.example", "whatever").name("x"),
            true,
        ),
        (
            "system:masters bypass for paths",
            path(&root, "post", "/anything"),
            true,
        ),
        // non-resource URLs
        ("nonResourceURL exact", path(&gina, "get", "/metrics"), true),
        (
            "nonResourceURL exact, other verb",
            path(&gina, "post", "/metrics"),
            false,
        ),
        (
            "nonResourceURL prefix *",
            path(&gina, "get", "/logs/kube-apiserver.log"),
            true,
        ),
        (
            "nonResourceURL prefix * needs the prefix",
            path(&gina, "get", "/logsx"),
            false,
        ),
        (
            "nonResourceURL exact is not a prefix",
            path(&gina, "get", "/metrics/extra"),
            false,
        ),
        (
            "nonResourceURLs bound by a RoleBinding never apply",
            path(&gina, "get", "/debug"),
            false,
        ),
        (
            "resource rules never grant paths",
            path(&auditor, "get", "/metrics"),
            false,
        ),
        (
            "discovery for any authenticated user: /api",
            path(&nobody, "get", "/api"),
            true,
        ),
        (
            "discovery: /apis/GROUP/VERSION",
            path(
                &nobody,
                "get",
                "/apis/federation.kubectl-fleet.dev/v1alpha1",
            ),
            true,
        ),
        (
            "discovery: /version",
            path(&nobody, "get", "/version"),
            true,
        ),
        (
            "discovery: /openapi/v3",
            path(&nobody, "get", "/openapi/v3"),
            true,
        ),
        (
            "discovery: /healthz",
            path(&nobody, "get", "/healthz"),
            true,
        ),
        (
            "discovery is get only",
            path(&nobody, "post", "/api"),
            false,
        ),
        (
            "no discovery without system:authenticated",
            path(&bare, "get", "/api"),
            false,
        ),
        (
            "/metrics is not public",
            path(&nobody, "get", "/metrics"),
            false,
        ),
        (
            "self reviews for any authenticated user",
            res(
                &nobody,
                "create",
                "authorization.k8s.io",
                "selfsubjectaccessreviews",
            ),
            true,
        ),
        (
            "self rules reviews",
            res(
                &nobody,
                "create",
                "authorization.k8s.io",
                "selfsubjectrulesreviews",
            ),
            true,
        ),
        (
            "selfsubjectreviews (auth whoami)",
            res(
                &nobody,
                "create",
                "authentication.k8s.io",
                "selfsubjectreviews",
            ),
            true,
        ),
        (
            "but not SubjectAccessReview",
            res(
                &nobody,
                "create",
                "authorization.k8s.io",
                "subjectaccessreviews",
            ),
            false,
        ),
        // aggregated bootstrap roles
        (
            "view: get pods",
            res(&viewer, "get", "", "pods").ns("team-a").name("p"),
            true,
        ),
        (
            "view: not outside the RoleBinding namespace",
            res(&viewer, "get", "", "pods").ns("team-b").name("p"),
            false,
        ),
        (
            "view: no writes",
            res(&viewer, "create", "", "pods").ns("team-a"),
            false,
        ),
        (
            "view: no secrets",
            res(&viewer, "get", "", "secrets").ns("team-a").name("s"),
            false,
        ),
        (
            "edit: create pods",
            res(&editor, "create", "", "pods").ns("team-a"),
            true,
        ),
        (
            "edit: read secrets",
            res(&editor, "get", "", "secrets").ns("team-a").name("s"),
            true,
        ),
        (
            "edit includes view",
            res(&editor, "watch", "apps", "deployments").ns("team-a"),
            true,
        ),
        (
            "edit: no roles",
            res(&editor, "create", "rbac.authorization.k8s.io", "roles").ns("team-a"),
            false,
        ),
        (
            "admin: create roles",
            res(&ns_admin, "create", "rbac.authorization.k8s.io", "roles").ns("team-a"),
            true,
        ),
        (
            "admin includes edit includes view",
            res(&ns_admin, "list", "", "configmaps").ns("team-a"),
            true,
        ),
        // the per-site identity register mints
        (
            "site: get own FederatedCluster",
            res(&site, "get", FLEET, "federatedclusters").name("site-a"),
            true,
        ),
        (
            "site: get own status",
            res(&site, "get", FLEET, "federatedclusters")
                .name("site-a")
                .sub("status"),
            true,
        ),
        (
            "site: patch own status",
            res(&site, "patch", FLEET, "federatedclusters")
                .name("site-a")
                .sub("status"),
            true,
        ),
        (
            "site: update own status",
            res(&site, "update", FLEET, "federatedclusters")
                .name("site-a")
                .sub("status"),
            true,
        ),
        (
            "site: patch another site's status",
            res(&site, "patch", FLEET, "federatedclusters")
                .name("site-b")
                .sub("status"),
            false,
        ),
        (
            "site: get another site",
            res(&site, "get", FLEET, "federatedclusters").name("site-b"),
            false,
        ),
        (
            "site: list sites",
            res(&site, "list", FLEET, "federatedclusters"),
            false,
        ),
        (
            "site: list even its own name",
            res(&site, "list", FLEET, "federatedclusters").fs("site-a"),
            false,
        ),
        (
            "site: watch sites",
            res(&site, "watch", FLEET, "federatedclusters"),
            false,
        ),
        (
            "site: patch own spec",
            res(&site, "patch", FLEET, "federatedclusters").name("site-a"),
            false,
        ),
        (
            "site: update own spec",
            res(&site, "update", FLEET, "federatedclusters").name("site-a"),
            false,
        ),
        (
            "site: delete itself",
            res(&site, "delete", FLEET, "federatedclusters").name("site-a"),
            false,
        ),
        (
            "site: create a site",
            res(&site, "create", FLEET, "federatedclusters"),
            false,
        ),
        (
            "site: delete own status",
            res(&site, "delete", FLEET, "federatedclusters")
                .name("site-a")
                .sub("status"),
            false,
        ),
        (
            "site: read secrets",
            res(&site, "get", "", "secrets")
                .ns("fleet-system")
                .name("fleet-pull-site-b"),
            false,
        ),
        (
            "site: list secrets",
            res(&site, "list", "", "secrets").ns("fleet-system"),
            false,
        ),
        (
            "site: renew own token",
            res(&site, "create", "", "serviceaccounts")
                .ns("fleet-system")
                .name("fleet-edge-site-a")
                .sub("token"),
            true,
        ),
        (
            "site: token for another SA",
            res(&site, "create", "", "serviceaccounts")
                .ns("fleet-system")
                .name("fleet-edge-site-b")
                .sub("token"),
            false,
        ),
        (
            "site: own token name in another namespace",
            res(&site, "create", "", "serviceaccounts")
                .ns("default")
                .name("fleet-edge-site-a")
                .sub("token"),
            false,
        ),
        (
            "site: read its ServiceAccount",
            res(&site, "get", "", "serviceaccounts")
                .ns("fleet-system")
                .name("fleet-edge-site-a"),
            false,
        ),
        (
            "site: change its Role",
            res(&site, "update", "rbac.authorization.k8s.io", "roles")
                .ns("fleet-system")
                .name("fleet-edge-site-a"),
            false,
        ),
        (
            "site: status of another group's resource",
            res(&site, "get", "other.dev", "federatedclusters")
                .name("site-a")
                .sub("status"),
            false,
        ),
        (
            "site: discovery",
            path(&site, "get", "/apis/federation.kubectl-fleet.dev/v1alpha1"),
            true,
        ),
        (
            "site: can-i",
            res(
                &site,
                "create",
                "authorization.k8s.io",
                "selfsubjectaccessreviews",
            ),
            true,
        ),
        // impersonation checks are ordinary rules
        (
            "impersonate users",
            res(&user("ops", &[]), "impersonate", "", "users").name("jane"),
            true,
        ),
        (
            "impersonate serviceaccounts",
            res(&user("ops", &[]), "impersonate", "", "serviceaccounts")
                .ns("fleet-system")
                .name("fleet-edge-site-a"),
            true,
        ),
        (
            "no impersonation without a rule",
            res(&nobody, "impersonate", "", "users").name("jane"),
            false,
        ),
    ];
    assert!(table.len() >= 90, "{} rows", table.len());
    let failures: Vec<String> = table
        .iter()
        .filter(|(_, attrs, want)| (authorize(&w, attrs) == Decision::Allow) != *want)
        .map(|(what, attrs, want)| {
            format!(
                "{what}: want {}, {}",
                if *want { "allow" } else { "deny" },
                forbidden_message(attrs)
            )
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} rows wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
