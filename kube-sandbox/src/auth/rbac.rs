//! RBAC authorization with the real API server's semantics, over
//! Role/ClusterRole/RoleBinding/ClusterRoleBinding objects as JSON.
//!
//! Mirrors `plugin/pkg/auth/authorizer/rbac` of kube-apiserver, preceded by
//! the `system:masters` privileged-group authorizer: ClusterRoleBindings are
//! visited first, then the RoleBindings of the request's namespace; the first
//! rule that allows wins. RBAC never denies outright; a request nothing
//! allows is denied with the errors met on the way (a binding to a missing
//! role) as the reason. ClusterRoles with an `aggregationRule` get their
//! rules from the ClusterRoles their selectors match, as the real
//! aggregation controller would have written them.

use super::types::{Attributes, UserInfo};
use crate::errors::{ApiError, qualified};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// The group that bypasses authorization entirely.
pub const SYSTEM_MASTERS: &str = "system:masters";
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// Every RBAC object in the store, rebuilt by the server when one changes.
#[derive(Debug, Clone, Default)]
pub struct RbacSnapshot {
    pub roles: Vec<Value>,
    pub role_bindings: Vec<Value>,
    pub cluster_roles: Vec<Value>,
    pub cluster_role_bindings: Vec<Value>,
}

/// The decision and, for a denial, the reason text RBAC gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny,
}

/// A decision with the reason the real authorizer chain reports
/// (`SubjectAccessReview` `status.reason`, and the suffix of a 403 message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evaluation {
    pub decision: Decision,
    /// `RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to User "u"`
    /// when allowed; empty for `system:masters`; for a denial empty, or the
    /// errors met (`RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`).
    pub reason: String,
}

/// One `PolicyRule` of a Role or ClusterRole.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PolicyRule {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
    #[serde(rename = "nonResourceURLs")]
    pub non_resource_urls: Vec<String>,
}

impl PolicyRule {
    /// Parses one rule; fields of the wrong type make the whole rule empty
    /// (matching nothing), which the store's validation should prevent.
    pub fn from_value(v: &Value) -> Self {
        PolicyRule::deserialize(v).unwrap_or_default()
    }

    /// The rule as `rbac.authorization.k8s.io/v1` JSON (empty lists omitted).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        let mut put = |k: &str, v: &Vec<String>| {
            if !v.is_empty() {
                m.insert(k.to_string(), json!(v));
            }
        };
        put("apiGroups", &self.api_groups);
        put("nonResourceURLs", &self.non_resource_urls);
        put("resourceNames", &self.resource_names);
        put("resources", &self.resources);
        m.insert("verbs".into(), json!(self.verbs));
        Value::Object(m)
    }

    /// `RuleAllows` of the real authorizer.
    pub fn allows(&self, attrs: &Attributes) -> bool {
        if attrs.resource_request {
            let combined = if attrs.subresource.is_empty() {
                attrs.resource.clone()
            } else {
                format!("{}/{}", attrs.resource, attrs.subresource)
            };
            self.verb_matches(&attrs.verb)
                && self.api_group_matches(&attrs.api_group)
                && self.resource_matches(&combined, &attrs.subresource)
                && self.resource_name_matches(attrs.effective_name())
        } else {
            self.verb_matches(&attrs.verb) && self.non_resource_url_matches(&attrs.path)
        }
    }

    fn verb_matches(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == "*" || v == verb)
    }

    fn api_group_matches(&self, group: &str) -> bool {
        self.api_groups.iter().any(|g| g == "*" || g == group)
    }

    /// `*`, an exact `resource` or `resource/subresource`, or
    /// `*/subresource`. There is no `resource/*` form in real RBAC.
    fn resource_matches(&self, combined: &str, subresource: &str) -> bool {
        self.resources.iter().any(|r| {
            r == "*"
                || r == combined
                || (!subresource.is_empty() && r.strip_prefix("*/") == Some(subresource))
        })
    }

    /// Empty means every name. Otherwise the request must carry one of the
    /// names, so create (no name yet), deletecollection and unfiltered
    /// list/watch are never granted by a named rule.
    fn resource_name_matches(&self, name: &str) -> bool {
        self.resource_names.is_empty() || self.resource_names.iter().any(|n| n == name)
    }

    fn non_resource_url_matches(&self, path: &str) -> bool {
        self.non_resource_urls.iter().any(|u| {
            u == "*" || u == path || (u.ends_with('*') && path.starts_with(u.trim_end_matches('*')))
        })
    }
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    let mut cur = v;
    for p in path {
        match cur.get(p) {
            Some(next) => cur = next,
            None => return "",
        }
    }
    cur.as_str().unwrap_or_default()
}

fn rules_of(role: &Value) -> Vec<PolicyRule> {
    role.get("rules")
        .and_then(Value::as_array)
        .map(|rules| rules.iter().map(PolicyRule::from_value).collect())
        .unwrap_or_default()
}

impl RbacSnapshot {
    fn cluster_role(&self, name: &str) -> Option<&Value> {
        self.cluster_roles
            .iter()
            .find(|r| str_at(r, &["metadata", "name"]) == name)
    }

    fn role(&self, namespace: &str, name: &str) -> Option<&Value> {
        self.roles.iter().find(|r| {
            str_at(r, &["metadata", "name"]) == name
                && str_at(r, &["metadata", "namespace"]) == namespace
        })
    }

    /// The rules a ClusterRole grants: its own `rules`, or for one with an
    /// `aggregationRule` the union of the rules of every other ClusterRole its
    /// selectors match (in name order, duplicates dropped), transitively.
    pub fn cluster_role_rules(&self, name: &str) -> Option<Vec<PolicyRule>> {
        let mut visiting = BTreeSet::new();
        self.cluster_role(name)
            .map(|role| self.effective_rules(role, &mut visiting))
    }

    fn effective_rules<'a>(
        &'a self,
        role: &'a Value,
        visiting: &mut BTreeSet<&'a str>,
    ) -> Vec<PolicyRule> {
        let name = str_at(role, &["metadata", "name"]);
        let Some(selectors) = role.get("aggregationRule").map(|a| {
            a.get("clusterRoleSelectors")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default()
        }) else {
            return rules_of(role);
        };
        // A cycle of aggregated roles: fall back to the stored rules, which
        // is what the controller would have read.
        if !visiting.insert(name) {
            return rules_of(role);
        }
        let mut out: Vec<PolicyRule> = Vec::new();
        for selector in selectors {
            let mut matched: Vec<&Value> = self
                .cluster_roles
                .iter()
                .filter(|r| str_at(r, &["metadata", "name"]) != name)
                .filter(|r| label_selector_matches(selector, r.pointer("/metadata/labels")))
                .collect();
            matched.sort_by_key(|r| str_at(r, &["metadata", "name"]));
            for other in matched {
                for rule in self.effective_rules(other, visiting) {
                    if !out.contains(&rule) {
                        out.push(rule);
                    }
                }
            }
        }
        visiting.remove(name);
        out
    }

    /// `GetRoleReferenceRules`: the rules a binding's `roleRef` points at.
    fn role_ref_rules(
        &self,
        binding: &Value,
        binding_namespace: &str,
    ) -> Result<Vec<PolicyRule>, String> {
        let kind = str_at(binding, &["roleRef", "kind"]);
        let name = str_at(binding, &["roleRef", "name"]);
        match kind {
            "Role" => self
                .role(binding_namespace, name)
                .map(rules_of)
                .ok_or_else(|| format!("role.{RBAC_GROUP} \"{name}\" not found")),
            "ClusterRole" => self
                .cluster_role_rules(name)
                .ok_or_else(|| format!("clusterrole.{RBAC_GROUP} \"{name}\" not found")),
            other => Err(format!("unsupported role reference kind: \"{other}\"")),
        }
    }

    /// `VisitRulesFor`: every rule that applies to `user` in `namespace`
    /// (ClusterRoleBindings first, then RoleBindings of the namespace), with
    /// where it comes from, or the error met resolving a binding. Stops when
    /// `visit` returns false.
    fn visit_rules_for(
        &self,
        user: &UserInfo,
        namespace: &str,
        visit: &mut dyn FnMut(Visit<'_>) -> bool,
    ) {
        let cluster = self.cluster_role_bindings.iter().map(|b| (b, ""));
        let local = self
            .role_bindings
            .iter()
            .filter(|rb| {
                !namespace.is_empty() && str_at(rb, &["metadata", "namespace"]) == namespace
            })
            .map(|b| (b, namespace));
        for (binding, ns) in cluster.chain(local) {
            let Some(subject) = applies_to(user, binding, ns) else {
                continue;
            };
            match self.role_ref_rules(binding, ns) {
                Err(e) => {
                    if !visit(Err(e)) {
                        return;
                    }
                }
                Ok(rules) => {
                    let describe = || describe_binding(binding, subject, ns);
                    for rule in &rules {
                        if !visit(Ok((&describe, rule))) {
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// One rule met while visiting (with a lazy description of its binding,
/// built only for the reason of an allow), or the error resolving a binding.
type Visit<'a> = Result<(&'a dyn Fn() -> String, &'a PolicyRule), String>;

/// The binding as the real authorizer's describers print it:
/// `ClusterRoleBinding "b" of ClusterRole "r" to User "u"`,
/// `RoleBinding "b/ns" of Role "r" to ServiceAccount "sa/ns"`.
fn describe_binding(binding: &Value, subject: &Value, namespace: &str) -> String {
    let name = str_at(binding, &["metadata", "name"]);
    let what = if namespace.is_empty() {
        format!("ClusterRoleBinding \"{name}\"")
    } else {
        format!("RoleBinding \"{name}/{namespace}\"")
    };
    format!(
        "{what} of {} \"{}\" to {}",
        str_at(binding, &["roleRef", "kind"]),
        str_at(binding, &["roleRef", "name"]),
        describe_subject(subject, namespace)
    )
}

/// The first subject of `binding` naming `user` (`appliesTo`).
fn applies_to<'a>(user: &UserInfo, binding: &'a Value, namespace: &str) -> Option<&'a Value> {
    binding
        .get("subjects")?
        .as_array()?
        .iter()
        .find(|s| subject_matches(user, s, namespace))
}

fn subject_matches(user: &UserInfo, subject: &Value, namespace: &str) -> bool {
    let name = str_at(subject, &["name"]);
    match str_at(subject, &["kind"]) {
        "User" => user.username == name,
        "Group" => user.groups.iter().any(|g| g == name),
        "ServiceAccount" => {
            // A RoleBinding's ServiceAccount subject defaults to the
            // binding's namespace; a ClusterRoleBinding's must name one.
            let ns = match str_at(subject, &["namespace"]) {
                "" => namespace,
                ns => ns,
            };
            !ns.is_empty() && user.username == format!("system:serviceaccount:{ns}:{name}")
        }
        _ => false,
    }
}

fn describe_subject(subject: &Value, binding_namespace: &str) -> String {
    let kind = str_at(subject, &["kind"]);
    let name = str_at(subject, &["name"]);
    if kind == "ServiceAccount" {
        let ns = match str_at(subject, &["namespace"]) {
            "" => binding_namespace,
            ns => ns,
        };
        format!("{kind} \"{name}/{ns}\"")
    } else {
        format!("{kind} \"{name}\"")
    }
}

/// `utilerrors.NewAggregate(...).Error()`: one message as is, several
/// de-duplicated in `[a, b]`.
fn aggregate(errors: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for e in errors {
        if !seen.contains(&e.as_str()) {
            seen.push(e);
        }
    }
    match seen.as_slice() {
        [] => String::new(),
        [one] => one.to_string(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// Whether a `metav1.LabelSelector` (JSON) matches `labels`. An empty
/// selector matches everything; an invalid one matches nothing.
pub fn label_selector_matches(selector: &Value, labels: Option<&Value>) -> bool {
    let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    if let Some(ml) = selector.get("matchLabels") {
        let Some(ml) = ml.as_object() else {
            return false;
        };
        if !ml
            .iter()
            .all(|(k, v)| v.as_str().is_some() && label(k) == v.as_str())
        {
            return false;
        }
    }
    let Some(exprs) = selector.get("matchExpressions") else {
        return true;
    };
    let Some(exprs) = exprs.as_array() else {
        return false;
    };
    exprs.iter().all(|e| {
        let key = str_at(e, &["key"]);
        let values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .map(|vs| vs.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let have = label(key);
        match str_at(e, &["operator"]) {
            "In" => !values.is_empty() && have.is_some_and(|h| values.contains(&h)),
            "NotIn" => !values.is_empty() && have.is_none_or(|h| !values.contains(&h)),
            "Exists" => values.is_empty() && have.is_some(),
            "DoesNotExist" => values.is_empty() && have.is_none(),
            _ => false,
        }
    })
}

/// Decides a request with its reason: `system:masters` bypass, then every
/// binding that names the user and its role's rules.
pub fn evaluate(rbac: &RbacSnapshot, attrs: &Attributes) -> Evaluation {
    if attrs.user.groups.iter().any(|g| g == SYSTEM_MASTERS) {
        return Evaluation {
            decision: Decision::Allow,
            reason: String::new(),
        };
    }
    let mut allowed_by: Option<String> = None;
    let mut errors = Vec::new();
    rbac.visit_rules_for(&attrs.user, &attrs.namespace, &mut |item| match item {
        Ok((describe, rule)) => {
            if rule.allows(attrs) {
                allowed_by = Some(describe());
                false
            } else {
                true
            }
        }
        Err(e) => {
            errors.push(e);
            true
        }
    });
    match allowed_by {
        Some(source) => Evaluation {
            decision: Decision::Allow,
            reason: format!("RBAC: allowed by {source}"),
        },
        None => Evaluation {
            decision: Decision::Deny,
            reason: if errors.is_empty() {
                String::new()
            } else {
                format!("RBAC: {}", aggregate(&errors))
            },
        },
    }
}

/// Decides a request: `system:masters` bypass, then every binding that names
/// the user (User / Group / ServiceAccount subjects) and its role's rules.
pub fn authorize(rbac: &RbacSnapshot, attrs: &Attributes) -> Decision {
    evaluate(rbac, attrs).decision
}

/// Every rule that applies to `user` in `namespace` (SelfSubjectRulesReview):
/// resource rules, non-resource rules, and the evaluation error (bindings to
/// missing roles) that makes the answer incomplete.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserRules {
    pub resource_rules: Vec<PolicyRule>,
    pub non_resource_rules: Vec<PolicyRule>,
    /// Empty when complete.
    pub evaluation_error: String,
}

/// The rules `user` has in `namespace`, as the RBAC rule resolver lists them
/// (a rule with both resources and nonResourceURLs appears in both lists).
pub fn rules_for(rbac: &RbacSnapshot, user: &UserInfo, namespace: &str) -> UserRules {
    let mut out = UserRules::default();
    let mut errors = Vec::new();
    rbac.visit_rules_for(user, namespace, &mut |item| {
        match item {
            Ok((_, rule)) => {
                if !rule.resources.is_empty() {
                    out.resource_rules.push(PolicyRule {
                        non_resource_urls: Vec::new(),
                        ..rule.clone()
                    });
                }
                if !rule.non_resource_urls.is_empty() {
                    out.non_resource_rules.push(PolicyRule {
                        verbs: rule.verbs.clone(),
                        non_resource_urls: rule.non_resource_urls.clone(),
                        ..Default::default()
                    });
                }
            }
            Err(e) => errors.push(e),
        }
        true
    });
    out.evaluation_error = aggregate(&errors);
    out
}

/// The `forbiddenMessage` of the real server, without the `resource "name"
/// is forbidden:` prefix: `User "u" cannot get resource "secrets" in API
/// group "" in the namespace "default"`.
fn forbidden_detail(attrs: &Attributes) -> String {
    let user = &attrs.user.username;
    if !attrs.resource_request {
        return format!(
            "User \"{user}\" cannot {} path \"{}\"",
            attrs.verb, attrs.path
        );
    }
    let resource = if attrs.subresource.is_empty() {
        attrs.resource.clone()
    } else {
        format!("{}/{}", attrs.resource, attrs.subresource)
    };
    if attrs.namespace.is_empty() {
        format!(
            "User \"{user}\" cannot {} resource \"{resource}\" in API group \"{}\" at the cluster scope",
            attrs.verb, attrs.api_group
        )
    } else {
        format!(
            "User \"{user}\" cannot {} resource \"{resource}\" in API group \"{}\" in the namespace \"{}\"",
            attrs.verb, attrs.api_group, attrs.namespace
        )
    }
}

/// The 403 message the real server gives, e.g.
/// `federatedclusters.federation.kubectl-fleet.dev "site-b" is forbidden: User
/// "system:serviceaccount:fleet-system:fleet-edge-site-a" cannot patch
/// resource "federatedclusters/status" in API group
/// "federation.kubectl-fleet.dev" at the cluster scope`.
pub fn forbidden_message(attrs: &Attributes) -> String {
    forbidden_message_with_reason(attrs, "")
}

/// [`forbidden_message`] with the authorizer's reason appended (`: REASON`)
/// when there is one, as `responsewriters.Forbidden` does.
pub fn forbidden_message_with_reason(attrs: &Attributes, reason: &str) -> String {
    let mut detail = forbidden_detail(attrs);
    if !reason.is_empty() {
        detail = format!("{detail}: {reason}");
    }
    let name = attrs.effective_name();
    if !attrs.resource_request || attrs.resource.is_empty() {
        format!("forbidden: {detail}")
    } else if name.is_empty() {
        format!(
            "{} is forbidden: {detail}",
            qualified(&attrs.api_group, &attrs.resource)
        )
    } else {
        format!(
            "{} \"{name}\" is forbidden: {detail}",
            qualified(&attrs.api_group, &attrs.resource)
        )
    }
}

/// The complete 403 for a denied request: message (with `reason`) and
/// `details` {name, group, kind} as `apierrors.NewForbidden` builds them.
pub fn forbidden_error(attrs: &Attributes, reason: &str) -> ApiError {
    let message = forbidden_message_with_reason(attrs, reason);
    if !attrs.resource_request || attrs.resource.is_empty() {
        // An empty GroupResource: the real details are `{}`.
        return ApiError {
            details: Some(json!({})),
            ..ApiError::new(403, "Forbidden", message)
        };
    }
    ApiError::forbidden(
        message,
        &attrs.api_group,
        &attrs.resource,
        attrs.effective_name(),
    )
}

/// For every ClusterRole with an `aggregationRule`, the rules the real
/// aggregation controller would write into it (name, rules as JSON). The
/// server may store them so that reading the role shows what it grants.
pub fn aggregated_cluster_roles(rbac: &RbacSnapshot) -> Vec<(String, Vec<Value>)> {
    rbac.cluster_roles
        .iter()
        .filter(|r| r.get("aggregationRule").is_some())
        .map(|r| {
            let name = str_at(r, &["metadata", "name"]);
            let rules = rbac
                .cluster_role_rules(name)
                .unwrap_or_default()
                .iter()
                .map(PolicyRule::to_value)
                .collect();
            (name.to_string(), rules)
        })
        .collect()
}

fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

fn url_rule(verbs: &[&str], urls: &[&str]) -> Value {
    json!({"nonResourceURLs": urls, "verbs": verbs})
}

fn bootstrap_meta(name: &str, extra_labels: &[(&str, &str)]) -> Value {
    let mut labels = Map::new();
    labels.insert("kubernetes.io/bootstrapping".into(), json!("rbac-defaults"));
    for (k, v) in extra_labels {
        labels.insert((*k).into(), json!(v));
    }
    json!({
        "name": name,
        "labels": labels,
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    })
}

fn cluster_role(name: &str, labels: &[(&str, &str)], rules: Vec<Value>) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": bootstrap_meta(name, labels),
        "rules": rules,
    })
}

fn aggregated_cluster_role(name: &str, labels: &[(&str, &str)], selector_label: &str) -> Value {
    let mut role = cluster_role(name, labels, Vec::new());
    role["aggregationRule"] =
        json!({"clusterRoleSelectors": [{"matchLabels": {selector_label: "true"}}]});
    role
}

fn cluster_role_binding(name: &str, role: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"apiGroup": RBAC_GROUP, "kind": "Group", "name": g}))
        .collect();
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": bootstrap_meta(name, &[]),
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role},
        "subjects": subjects,
    })
}

/// The ClusterRoles and ClusterRoleBindings every real cluster bootstraps
/// (`system:discovery`, `system:basic-user`, `system:public-info-viewer`,
/// `cluster-admin`, ...), seeded into the store at start.
///
/// Rule lists are those of `bootstrappolicy` (sorted as its rule builder
/// sorts them); `admin`/`edit`/`view` are aggregated from the
/// `system:aggregate-to-*` roles, limited to API groups a cluster of this
/// era serves.
pub fn bootstrap_objects() -> Vec<Value> {
    const READ: &[&str] = &["get", "list", "watch"];
    const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];
    const READ_WRITE: &[&str] = &[
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ];
    const AGG_ADMIN: &str = "rbac.authorization.k8s.io/aggregate-to-admin";
    const AGG_EDIT: &str = "rbac.authorization.k8s.io/aggregate-to-edit";
    const AGG_VIEW: &str = "rbac.authorization.k8s.io/aggregate-to-view";
    let health = ["/healthz", "/livez", "/readyz", "/version", "/version/"];
    vec![
        cluster_role(
            "cluster-admin",
            &[],
            vec![rule(&["*"], &["*"], &["*"]), url_rule(&["*"], &["*"])],
        ),
        cluster_role(
            "system:discovery",
            &[],
            vec![url_rule(
                &["get"],
                &[
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                    "/healthz",
                    "/livez",
                    "/openapi",
                    "/openapi/*",
                    "/readyz",
                    "/version",
                    "/version/",
                ],
            )],
        ),
        cluster_role(
            "system:public-info-viewer",
            &[],
            vec![url_rule(&["get"], &health)],
        ),
        cluster_role(
            "system:basic-user",
            &[],
            vec![
                rule(
                    &["create"],
                    &["authorization.k8s.io"],
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                ),
                rule(
                    &["create"],
                    &["authentication.k8s.io"],
                    &["selfsubjectreviews"],
                ),
            ],
        ),
        aggregated_cluster_role("admin", &[], AGG_ADMIN),
        aggregated_cluster_role("edit", &[(AGG_ADMIN, "true")], AGG_EDIT),
        aggregated_cluster_role("view", &[(AGG_EDIT, "true")], AGG_VIEW),
        cluster_role(
            "system:aggregate-to-admin",
            &[(AGG_ADMIN, "true")],
            vec![
                rule(
                    &["create"],
                    &["authorization.k8s.io"],
                    &["localsubjectaccessreviews"],
                ),
                rule(
                    READ_WRITE,
                    &["rbac.authorization.k8s.io"],
                    &["rolebindings", "roles"],
                ),
            ],
        ),
        cluster_role(
            "system:aggregate-to-edit",
            &[(AGG_EDIT, "true")],
            vec![
                rule(
                    READ,
                    &[""],
                    &[
                        "pods/attach",
                        "pods/exec",
                        "pods/portforward",
                        "pods/proxy",
                        "secrets",
                        "services/proxy",
                    ],
                ),
                rule(&["impersonate"], &[""], &["serviceaccounts"]),
                rule(
                    WRITE,
                    &[""],
                    &[
                        "pods",
                        "pods/attach",
                        "pods/exec",
                        "pods/portforward",
                        "pods/proxy",
                    ],
                ),
                rule(&["create"], &[""], &["pods/eviction"]),
                rule(
                    WRITE,
                    &[""],
                    &[
                        "configmaps",
                        "events",
                        "persistentvolumeclaims",
                        "replicationcontrollers",
                        "replicationcontrollers/scale",
                        "secrets",
                        "serviceaccounts",
                        "services",
                        "services/proxy",
                    ],
                ),
                rule(&["create"], &[""], &["serviceaccounts/token"]),
                rule(
                    WRITE,
                    &["apps"],
                    &[
                        "daemonsets",
                        "deployments",
                        "deployments/rollback",
                        "deployments/scale",
                        "replicasets",
                        "replicasets/scale",
                        "statefulsets",
                        "statefulsets/scale",
                    ],
                ),
                rule(WRITE, &["autoscaling"], &["horizontalpodautoscalers"]),
                rule(WRITE, &["batch"], &["cronjobs", "jobs"]),
                rule(WRITE, &["policy"], &["poddisruptionbudgets"]),
                rule(
                    WRITE,
                    &["networking.k8s.io"],
                    &["ingresses", "networkpolicies"],
                ),
                rule(READ_WRITE, &["coordination.k8s.io"], &["leases"]),
            ],
        ),
        cluster_role(
            "system:aggregate-to-view",
            &[(AGG_VIEW, "true")],
            vec![
                rule(
                    READ,
                    &[""],
                    &[
                        "configmaps",
                        "endpoints",
                        "persistentvolumeclaims",
                        "persistentvolumeclaims/status",
                        "pods",
                        "replicationcontrollers",
                        "replicationcontrollers/scale",
                        "serviceaccounts",
                        "services",
                        "services/status",
                    ],
                ),
                rule(
                    READ,
                    &[""],
                    &[
                        "bindings",
                        "events",
                        "limitranges",
                        "namespaces/status",
                        "pods/log",
                        "pods/status",
                        "replicationcontrollers/status",
                        "resourcequotas",
                        "resourcequotas/status",
                    ],
                ),
                rule(READ, &[""], &["namespaces"]),
                rule(READ, &["discovery.k8s.io"], &["endpointslices"]),
                rule(
                    READ,
                    &["apps"],
                    &[
                        "controllerrevisions",
                        "daemonsets",
                        "daemonsets/status",
                        "deployments",
                        "deployments/scale",
                        "deployments/status",
                        "replicasets",
                        "replicasets/scale",
                        "replicasets/status",
                        "statefulsets",
                        "statefulsets/scale",
                        "statefulsets/status",
                    ],
                ),
                rule(
                    READ,
                    &["autoscaling"],
                    &[
                        "horizontalpodautoscalers",
                        "horizontalpodautoscalers/status",
                    ],
                ),
                rule(
                    READ,
                    &["batch"],
                    &["cronjobs", "cronjobs/status", "jobs", "jobs/status"],
                ),
                rule(
                    READ,
                    &["policy"],
                    &["poddisruptionbudgets", "poddisruptionbudgets/status"],
                ),
                rule(
                    READ,
                    &["networking.k8s.io"],
                    &["ingresses", "ingresses/status", "networkpolicies"],
                ),
            ],
        ),
        cluster_role_binding("cluster-admin", "cluster-admin", &[SYSTEM_MASTERS]),
        cluster_role_binding(
            "system:discovery",
            "system:discovery",
            &["system:authenticated"],
        ),
        cluster_role_binding(
            "system:basic-user",
            "system:basic-user",
            &["system:authenticated"],
        ),
        cluster_role_binding(
            "system:public-info-viewer",
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
    ]
}

/// `bootstrap_objects` split by kind into a snapshot (for tests and for a
/// server that seeds the snapshot before the store is populated).
pub fn bootstrap_snapshot() -> RbacSnapshot {
    let mut snap = RbacSnapshot::default();
    for obj in bootstrap_objects() {
        match str_at(&obj, &["kind"]) {
            "ClusterRole" => snap.cluster_roles.push(obj),
            "ClusterRoleBinding" => snap.cluster_role_bindings.push(obj),
            _ => {}
        }
    }
    snap
}

#[cfg(test)]
mod tests;
