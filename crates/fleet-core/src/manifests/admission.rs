//! Field ownership of a site's status, enforced by the hub's API server
//! (docs/architecture.md#who-writes-which-status-key): a
//! ValidatingAdmissionPolicy, and its binding, that refuse any write by a
//! site identity through `federatedclusters/status` that changes a status
//! key outside [`EDGE_OWNED_STATUS_KEYS`] — the hub-owned
//! [`HUB_OWNED_STATUS_KEYS`] (`phase`, `conditions`, ...). `kubectl fleet
//! install` ships both with the hub; RBAC alone lets a site token write any
//! key of its own status.
//!
//! The CEL is built from the key lists and the site identity names of
//! [`rbac`], so a new status key or identity namespace is covered by
//! construction. Pure construction; applying is `kubectl_fleet::k8s`'s job.
//!
//! A second policy, [`site_token_policy`], bounds what a site identity may
//! mint itself with its auto-rotation Role: tokens of at most
//! [`rbac::MAX_SITE_TOKEN_TTL`] (RBAC cannot say how long).
//!
//! A fourth, [`site_lease_policy`], confines a site identity's writes of
//! the heartbeat objects to the `spec` of its own lease.
//!
//! A third, [`site_bucket_policy`], guards a site's main resource: the
//! bucket label ([`bucket::BUCKET_LABEL`]) is a number 0–255 whoever writes
//! it, and the hub operator, whose `patch` of `federatedclusters` exists
//! only to write that label, changes nothing else there (spec, other
//! labels, annotations, finalizers, owners are the administrator's).

use std::collections::BTreeMap;

use k8s_openapi::api::admissionregistration::v1::{
    MatchCondition, MatchResources, NamedRuleWithOperations, ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding, ValidatingAdmissionPolicyBindingSpec,
    ValidatingAdmissionPolicySpec, Validation, Variable,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::Resource as _;

use crate::api::{EDGE_OWNED_STATUS_KEYS, FederatedCluster, GROUP, HUB_OWNED_STATUS_KEYS};
use crate::fleet::{bucket, rbac};

/// Name of the policy and of its binding.
pub const STATUS_OWNERSHIP_POLICY: &str = "fleet-site-status-ownership";

/// Name of [`site_token_policy`] and of its binding.
pub const SITE_TOKEN_POLICY: &str = "fleet-site-token-requests";

/// Name of [`site_bucket_policy`] and of its binding.
pub const SITE_BUCKET_POLICY: &str = "fleet-site-bucket";

/// Namespaces whose `fleet-edge-*` ServiceAccounts are site identities:
/// [`rbac::SITES_NAMESPACE`], and [`rbac::FLEET_NAMESPACE`] where earlier
/// releases minted them.
pub(crate) const SITE_IDENTITY_NAMESPACES: [&str; 2] =
    [rbac::SITES_NAMESPACE, rbac::FLEET_NAMESPACE];

/// A CEL list literal of strings (the names here are plain identifiers,
/// quoted without escapes).
fn cel_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("'{i}'")).collect();
    format!("[{}]", quoted.join(", "))
}

/// True when the request comes from a site identity:
/// `system:serviceaccount:NS:fleet-edge-SITE` for each namespace of
/// [`SITE_IDENTITY_NAMESPACES`].
pub(crate) fn site_identity_condition() -> String {
    format!(
        "{}.exists(ns, request.userInfo.username.startsWith('system:serviceaccount:' + ns + ':{}'))",
        cel_list(&SITE_IDENTITY_NAMESPACES),
        rbac::EDGE_IDENTITY_PREFIX
    )
}

/// The policy's variables: the key lists, the old and new status (empty
/// when absent), the keys neither writer owns (none while the CRD prunes
/// unknown fields; checked all the same), and the keys outside the edge's
/// that the write adds, changes or removes — hub-owned ones in their
/// fixed order, so the message is stable.
fn variables() -> Vec<Variable> {
    let var = |name: &str, expression: &str| Variable {
        name: name.into(),
        expression: expression.into(),
    };
    let unowned = "!(k in variables.edgeOwned) && !(k in variables.hubOwned)";
    vec![
        var("edgeOwned", &cel_list(EDGE_OWNED_STATUS_KEYS)),
        var("hubOwned", &cel_list(HUB_OWNED_STATUS_KEYS)),
        var("oldStatus", "has(oldObject.status) ? oldObject.status : {}"),
        var("newStatus", "has(object.status) ? object.status : {}"),
        var(
            "unownedKeys",
            &format!(
                "variables.newStatus.filter(k, {unowned}) + variables.oldStatus.filter(k, {unowned} && !(k in variables.newStatus))"
            ),
        ),
        var(
            "hubKeysChanged",
            "(variables.hubOwned + variables.unownedKeys).filter(k, (k in variables.newStatus) != (k in variables.oldStatus) || (k in variables.newStatus && variables.newStatus[k] != variables.oldStatus[k]))",
        ),
    ]
}

/// The ValidatingAdmissionPolicy: on an UPDATE of `federatedclusters/status`
/// by a site identity, no status key outside the edge's may change.
pub fn status_ownership_policy() -> ValidatingAdmissionPolicy {
    let edge_keys = EDGE_OWNED_STATUS_KEYS.join(", ");
    let rule = NamedRuleWithOperations {
        api_groups: Some(vec![GROUP.into()]),
        api_versions: Some(vec!["*".into()]),
        operations: Some(vec!["UPDATE".into()]),
        resources: Some(vec![format!("{}/status", FederatedCluster::plural(&()))]),
        ..Default::default()
    };
    ValidatingAdmissionPolicy {
        metadata: meta(STATUS_OWNERSHIP_POLICY),
        spec: Some(ValidatingAdmissionPolicySpec {
            failure_policy: Some("Fail".into()),
            match_constraints: Some(MatchResources {
                resource_rules: Some(vec![rule]),
                ..Default::default()
            }),
            match_conditions: Some(vec![site_identity_match()]),
            variables: Some(variables()),
            validations: Some(vec![Validation {
                expression: "size(variables.hubKeysChanged) == 0".into(),
                message_expression: Some(format!(
                    "variables.hubKeysChanged.map(k, 'status.' + k).join(', ') + (size(variables.hubKeysChanged) == 1 ? ' is' : ' are') + ' written only by the hub; a site may change only {edge_keys}'"
                )),
                message: Some(format!(
                    "status.{} are written only by the hub; a site may change only {edge_keys}",
                    HUB_OWNED_STATUS_KEYS.join(", status.")
                )),
                reason: Some("Forbidden".into()),
            }]),
            ..Default::default()
        }),
        status: None,
    }
}

/// The binding that puts [`status_ownership_policy`] in force (`Deny`).
pub fn status_ownership_binding() -> ValidatingAdmissionPolicyBinding {
    binding(STATUS_OWNERSHIP_POLICY)
}

fn site_identity_match() -> MatchCondition {
    MatchCondition {
        name: "site-identity".into(),
        expression: site_identity_condition(),
    }
}

/// The ValidatingAdmissionPolicy bounding a site's own tokens: a
/// TokenRequest (CREATE of `serviceaccounts/token`) by a site identity may
/// ask for at most [`rbac::MAX_SITE_TOKEN_TTL`]. A token it stole and
/// renewed therefore dies within that long of the last renewal once the
/// identity is cut off, and the edge (which asks for no more) is never
/// refused; `register` and `rotate`, run by an administrator, are not
/// matched. The API server defaults a missing `expirationSeconds` to an
/// hour before admission.
pub fn site_token_policy() -> ValidatingAdmissionPolicy {
    let max = rbac::MAX_SITE_TOKEN_TTL.as_secs();
    let days = max / 86_400;
    let rule = NamedRuleWithOperations {
        api_groups: Some(vec![String::new()]),
        api_versions: Some(vec!["v1".into()]),
        operations: Some(vec!["CREATE".into()]),
        resources: Some(vec!["serviceaccounts/token".into()]),
        ..Default::default()
    };
    ValidatingAdmissionPolicy {
        metadata: meta(SITE_TOKEN_POLICY),
        spec: Some(ValidatingAdmissionPolicySpec {
            failure_policy: Some("Fail".into()),
            match_constraints: Some(MatchResources {
                resource_rules: Some(vec![rule]),
                ..Default::default()
            }),
            match_conditions: Some(vec![site_identity_match()]),
            validations: Some(vec![refusal(
                format!(
                    "!has(object.spec.expirationSeconds) || object.spec.expirationSeconds <= {max}"
                ),
                format!(
                    "a site may mint itself tokens of at most {days} days ({max} seconds): an administrator mints longer ones with kubectl fleet rotate SITE --token-ttl"
                ),
                "Forbidden",
            )]),
            ..Default::default()
        }),
        status: None,
    }
}

/// The binding that puts [`site_token_policy`] in force (`Deny`).
pub fn site_token_binding() -> ValidatingAdmissionPolicyBinding {
    binding(SITE_TOKEN_POLICY)
}

/// The hub operator's username: its ServiceAccount in
/// [`rbac::FLEET_NAMESPACE`].
pub(crate) fn hub_username() -> String {
    format!(
        "system:serviceaccount:{}:{}",
        rbac::FLEET_NAMESPACE,
        rbac::HUB_OPERATOR_ACCOUNT
    )
}

/// The ValidatingAdmissionPolicy of a site's main resource (CREATE and
/// UPDATE of `federatedclusters`):
///
/// - the bucket label, when a write sets or changes it, is `0` to `255`
///   ([`bucket::BUCKET_VALUE_PATTERN`]): a malformed value is refused
///   whoever writes it. A well-formed but wrong bucket is not (CEL has no
///   SHA-256 to check it with): the hub corrects it (`operator::bucket`).
///   A value stored before the policy existed does not block other edits.
/// - the hub operator's identity ([`hub_username`]) may change only that
///   label, and may not remove it: the site's spec, its other labels, its
///   annotations, finalizers and owner references stay as they were. RBAC
///   cannot say which fields a `patch` may touch; this does.
pub fn site_bucket_policy() -> ValidatingAdmissionPolicy {
    let rule = NamedRuleWithOperations {
        api_groups: Some(vec![GROUP.into()]),
        api_versions: Some(vec!["*".into()]),
        operations: Some(vec!["CREATE".into(), "UPDATE".into()]),
        resources: Some(vec![FederatedCluster::plural(&()).into_owned()]),
        ..Default::default()
    };
    let var = |name: &str, expression: String| Variable {
        name: name.into(),
        expression,
    };
    let key = bucket::BUCKET_LABEL;
    let update = "request.operation == 'UPDATE'";
    let meta_or = |field: &str, empty: &str| {
        var(
            &format!("old{field}"),
            format!(
                "{update} && has(oldObject.metadata.{lower}) ? oldObject.metadata.{lower} : {empty}",
                lower = field[..1].to_lowercase() + &field[1..]
            ),
        )
    };
    let new_meta_or = |field: &str, empty: &str| {
        var(
            &format!("new{field}"),
            format!(
                "has(object.metadata.{lower}) ? object.metadata.{lower} : {empty}",
                lower = field[..1].to_lowercase() + &field[1..]
            ),
        )
    };
    let variables = vec![
        var("bucketKey", format!("'{key}'")),
        new_meta_or("Labels", "{}"),
        meta_or("Labels", "{}"),
        new_meta_or("Annotations", "{}"),
        meta_or("Annotations", "{}"),
        new_meta_or("Finalizers", "[]"),
        meta_or("Finalizers", "[]"),
        new_meta_or("OwnerReferences", "[]"),
        meta_or("OwnerReferences", "[]"),
        var(
            "isHub",
            format!("request.userInfo.username == '{}'", hub_username()),
        ),
        var(
            "otherLabelsKept",
            "variables.newLabels.all(k, k == variables.bucketKey || (k in variables.oldLabels && variables.oldLabels[k] == variables.newLabels[k])) && variables.oldLabels.all(k, k == variables.bucketKey || k in variables.newLabels)".into(),
        ),
        var(
            "specKept",
            format!(
                "(has(object.spec) ? object.spec : {{}}) == ({update} && has(oldObject.spec) ? oldObject.spec : {{}})"
            ),
        ),
    ];
    let form = refusal(
        format!(
            "!(variables.bucketKey in variables.newLabels) || variables.newLabels[variables.bucketKey].matches('{}') || (variables.bucketKey in variables.oldLabels && variables.oldLabels[variables.bucketKey] == variables.newLabels[variables.bucketKey])",
            bucket::BUCKET_VALUE_PATTERN
        ),
        format!(
            "label {key} is a site's bucket, a number from 0 to 255 derived from its name: leave it out and the hub writes it (docs/scaling.md#buckets)"
        ),
        "Invalid",
    );
    let hub_only = refusal(
        format!(
            "!variables.isHub || ({update} && variables.specKept && variables.otherLabelsKept && variables.newAnnotations == variables.oldAnnotations && variables.newFinalizers == variables.oldFinalizers && variables.newOwnerReferences == variables.oldOwnerReferences && variables.bucketKey in variables.newLabels)"
        ),
        format!(
            "the hub operator may change only the label {key} of a site: its spec, other labels, annotations, finalizers and owners are the administrator's"
        ),
        "Forbidden",
    );
    ValidatingAdmissionPolicy {
        metadata: meta(SITE_BUCKET_POLICY),
        spec: Some(ValidatingAdmissionPolicySpec {
            failure_policy: Some("Fail".into()),
            match_constraints: Some(MatchResources {
                resource_rules: Some(vec![rule]),
                ..Default::default()
            }),
            variables: Some(variables),
            validations: Some(vec![form, hub_only]),
            ..Default::default()
        }),
        status: None,
    }
}

/// Name of [`site_lease_policy`] and of its binding.
pub const SITE_LEASE_POLICY: &str = "fleet-site-lease";

/// The ValidatingAdmissionPolicy of the sites' leases (`api::lease`), for
/// a site identity's writes of `federatedclusterleases` (beyond its
/// ClusterRole, which already names its own lease only and grants neither
/// create nor delete):
///
/// - a site may only update: never create or delete a lease (`register`
///   creates it, `unregister` and the site's deletion remove it);
/// - only the lease named as its own site (its username is
///   `system:serviceaccount:NS:fleet-edge-SITE`);
/// - only its `spec`: its labels, annotations, finalizers and owner
///   references stay as `register` wrote them (a site that could add a
///   finalizer could keep its lease past its own deletion, or relabel it
///   into another hub replica's buckets).
pub fn site_lease_policy() -> ValidatingAdmissionPolicy {
    let rule = NamedRuleWithOperations {
        api_groups: Some(vec![GROUP.into()]),
        api_versions: Some(vec!["*".into()]),
        operations: Some(vec!["CREATE".into(), "UPDATE".into(), "DELETE".into()]),
        resources: Some(vec![rbac::SITE_LEASE_RESOURCE.into()]),
        ..Default::default()
    };
    let var = |name: &str, expression: String| Variable {
        name: name.into(),
        expression,
    };
    let kept = |field: &str, empty: &str| {
        format!(
            "(has(object.metadata.{field}) ? object.metadata.{field} : {empty}) == (has(oldObject.metadata.{field}) ? oldObject.metadata.{field} : {empty})"
        )
    };
    let variables = vec![
        var(
            "ownLease",
            format!(
                "{}.exists(ns, request.userInfo.username == 'system:serviceaccount:' + ns + ':{}' + request.name)",
                cel_list(&SITE_IDENTITY_NAMESPACES),
                rbac::EDGE_IDENTITY_PREFIX
            ),
        ),
        var(
            "metadataKept",
            [
                kept("labels", "{}"),
                kept("annotations", "{}"),
                kept("finalizers", "[]"),
                kept("ownerReferences", "[]"),
            ]
            .join(" && "),
        ),
    ];
    let update_only = refusal(
        "request.operation == 'UPDATE'",
        "a site may not create or delete a FederatedClusterLease: `kubectl fleet register SITE` creates it, `kubectl fleet unregister SITE` deletes it",
        "Forbidden",
    );
    let own = refusal(
        "variables.ownLease",
        "a site may renew only the FederatedClusterLease named as its own site",
        "Forbidden",
    );
    let spec_only = refusal(
        "request.operation != 'UPDATE' || variables.metadataKept",
        "a site may change only the spec of its FederatedClusterLease: its labels, annotations, finalizers and owners are register's",
        "Forbidden",
    );
    ValidatingAdmissionPolicy {
        metadata: meta(SITE_LEASE_POLICY),
        spec: Some(ValidatingAdmissionPolicySpec {
            failure_policy: Some("Fail".into()),
            match_constraints: Some(MatchResources {
                resource_rules: Some(vec![rule]),
                ..Default::default()
            }),
            match_conditions: Some(vec![site_identity_match()]),
            variables: Some(variables),
            validations: Some(vec![update_only, own, spec_only]),
            ..Default::default()
        }),
        status: None,
    }
}

/// The binding that puts [`site_lease_policy`] in force (`Deny`).
pub fn site_lease_binding() -> ValidatingAdmissionPolicyBinding {
    binding(SITE_LEASE_POLICY)
}

/// The binding that puts [`site_bucket_policy`] in force (`Deny`).
pub fn site_bucket_binding() -> ValidatingAdmissionPolicyBinding {
    binding(SITE_BUCKET_POLICY)
}

fn binding(policy: &str) -> ValidatingAdmissionPolicyBinding {
    ValidatingAdmissionPolicyBinding {
        metadata: meta(policy),
        spec: Some(ValidatingAdmissionPolicyBindingSpec {
            policy_name: Some(policy.into()),
            validation_actions: Some(vec!["Deny".into()]),
            ..Default::default()
        }),
    }
}

/// A validation that refuses with a fixed `message` and `reason` where
/// `expression` is false.
fn refusal(expression: impl Into<String>, message: impl Into<String>, reason: &str) -> Validation {
    Validation {
        expression: expression.into(),
        message: Some(message.into()),
        message_expression: None,
        reason: Some(reason.into()),
    }
}

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        labels: Some(BTreeMap::from([(
            rbac::MANAGED_BY_LABEL.to_owned(),
            rbac::MANAGED_BY.to_owned(),
        )])),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_covers_every_key_outside_the_edges_by_construction() {
        let policy = status_ownership_policy();
        let spec = policy.spec.unwrap();
        let vars = spec.variables.unwrap();
        assert_eq!(
            (vars[0].expression.as_str(), vars[1].expression.as_str()),
            (
                format!("['{}']", EDGE_OWNED_STATUS_KEYS.join("', '")).as_str(),
                format!("['{}']", HUB_OWNED_STATUS_KEYS.join("', '")).as_str()
            )
        );
        let rule = &spec.match_constraints.unwrap().resource_rules.unwrap()[0];
        assert_eq!(
            rule.resources.as_deref(),
            Some(&["federatedclusters/status".to_owned()][..])
        );
        assert_eq!(rule.operations.as_deref(), Some(&["UPDATE".to_owned()][..]));
        assert_eq!(rule.api_groups.as_deref(), Some(&[GROUP.to_owned()][..]));
        assert_eq!(spec.failure_policy.as_deref(), Some("Fail"));
        assert_eq!(
            spec.validations.unwrap()[0].reason.as_deref(),
            Some("Forbidden")
        );
    }

    #[test]
    fn site_identities_of_both_namespaces_are_matched() {
        assert_eq!(
            site_identity_condition(),
            "['fleet-sites', 'fleet-system'].exists(ns, request.userInfo.username.startsWith('system:serviceaccount:' + ns + ':fleet-edge-'))"
        );
    }

    #[test]
    fn a_sites_own_token_requests_are_bounded() {
        let spec = site_token_policy().spec.unwrap();
        let rule = &spec.match_constraints.unwrap().resource_rules.unwrap()[0];
        assert_eq!(
            rule.resources.as_deref(),
            Some(&["serviceaccounts/token".to_owned()][..])
        );
        assert_eq!(rule.operations.as_deref(), Some(&["CREATE".to_owned()][..]));
        assert_eq!(rule.api_groups.as_deref(), Some(&[String::new()][..]));
        assert_eq!(
            spec.match_conditions.unwrap()[0].expression,
            site_identity_condition()
        );
        let v = &spec.validations.unwrap()[0];
        assert_eq!(
            v.expression,
            "!has(object.spec.expirationSeconds) || object.spec.expirationSeconds <= 7776000"
        );
        assert!(v.message.as_deref().unwrap().contains("at most 90 days"));
        assert_eq!(
            site_token_binding().spec.unwrap().policy_name.as_deref(),
            Some(SITE_TOKEN_POLICY)
        );
    }

    #[test]
    fn the_bucket_policy_guards_the_label_and_confines_the_hub() {
        let spec = site_bucket_policy().spec.unwrap();
        let rule = &spec.match_constraints.unwrap().resource_rules.unwrap()[0];
        // The main resource only (a status write cannot change a label),
        // created or updated, by anyone: no match condition.
        assert_eq!(
            rule.resources.as_deref(),
            Some(&["federatedclusters".to_owned()][..])
        );
        assert_eq!(
            rule.operations.as_deref(),
            Some(&["CREATE".to_owned(), "UPDATE".to_owned()][..])
        );
        assert!(spec.match_conditions.is_none());
        assert_eq!(spec.failure_policy.as_deref(), Some("Fail"));
        let vars = spec.variables.unwrap();
        let var = |name: &str| {
            vars.iter()
                .find(|v| v.name == name)
                .unwrap_or_else(|| panic!("{name}"))
                .expression
                .clone()
        };
        assert_eq!(var("bucketKey"), "'federation.kubectl-fleet.dev/bucket'");
        assert_eq!(
            var("isHub"),
            "request.userInfo.username == 'system:serviceaccount:fleet-system:fleet-operator-hub'"
        );
        assert_eq!(
            var("oldLabels"),
            "request.operation == 'UPDATE' && has(oldObject.metadata.labels) ? oldObject.metadata.labels : {}"
        );
        let v = spec.validations.unwrap();
        assert!(v[0].expression.contains(bucket::BUCKET_VALUE_PATTERN));
        assert_eq!(v[0].reason.as_deref(), Some("Invalid"));
        // The hub: an update, the spec, the other labels, annotations,
        // finalizers and owners kept, the bucket label still there.
        for part in [
            "!variables.isHub || (request.operation == 'UPDATE'",
            "variables.specKept",
            "variables.otherLabelsKept",
            "variables.newAnnotations == variables.oldAnnotations",
            "variables.newFinalizers == variables.oldFinalizers",
            "variables.newOwnerReferences == variables.oldOwnerReferences",
            "variables.bucketKey in variables.newLabels",
        ] {
            assert!(v[1].expression.contains(part), "{part}");
        }
        assert_eq!(v[1].reason.as_deref(), Some("Forbidden"));
        let b = site_bucket_binding().spec.unwrap();
        assert_eq!(b.policy_name.as_deref(), Some(SITE_BUCKET_POLICY));
        assert_eq!(b.validation_actions, Some(vec!["Deny".to_owned()]));
    }

    #[test]
    fn a_site_may_only_renew_the_spec_of_its_own_lease() {
        let spec = site_lease_policy().spec.unwrap();
        let rule = &spec.match_constraints.unwrap().resource_rules.unwrap()[0];
        assert_eq!(
            rule.resources.as_deref(),
            Some(&["federatedclusterleases".to_owned()][..])
        );
        assert_eq!(
            rule.operations.as_deref(),
            Some(
                &[
                    "CREATE".to_owned(),
                    "UPDATE".to_owned(),
                    "DELETE".to_owned()
                ][..]
            )
        );
        assert_eq!(
            spec.match_conditions.unwrap()[0].expression,
            site_identity_condition()
        );
        let vars = spec.variables.unwrap();
        assert_eq!(
            vars[0].expression,
            "['fleet-sites', 'fleet-system'].exists(ns, request.userInfo.username == 'system:serviceaccount:' + ns + ':fleet-edge-' + request.name)"
        );
        for field in ["labels", "annotations", "finalizers", "ownerReferences"] {
            assert!(
                vars[1]
                    .expression
                    .contains(&format!("object.metadata.{field}")),
                "{field}"
            );
        }
        let v = spec.validations.unwrap();
        assert_eq!(v.len(), 3);
        assert!(v.iter().all(|v| v.reason.as_deref() == Some("Forbidden")));
        assert_eq!(spec.failure_policy.as_deref(), Some("Fail"));
        assert_eq!(
            site_lease_binding().spec.unwrap().policy_name.as_deref(),
            Some(SITE_LEASE_POLICY)
        );
    }

    #[test]
    fn the_binding_denies_with_the_policy() {
        let b = status_ownership_binding();
        let spec = b.spec.unwrap();
        assert_eq!(spec.policy_name.as_deref(), Some(STATUS_OWNERSHIP_POLICY));
        assert_eq!(spec.validation_actions, Some(vec!["Deny".to_owned()]));
        assert!(spec.match_resources.is_none());
        assert_eq!(b.metadata.name.as_deref(), Some(STATUS_OWNERSHIP_POLICY));
    }
}
