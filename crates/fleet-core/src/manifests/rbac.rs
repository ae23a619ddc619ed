//! The RBAC objects of a site's least-privilege identity
//! (docs/architecture.md#the-life-of-a-site): what `kubectl fleet register`
//! creates on the hub for a Push-mode site, the read-only identity it mints
//! on a Pull-mode member, and the hub's grant of a Pull site's Secret. The
//! names, labels and rules they carry are `fleet::rbac`'s.
//!
//! Pure construction; applying the objects is the job of
//! `kubectl_fleet::k8s`. Tests pin the objects exactly, because the site
//! identity is the security boundary between sites.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::api::GROUP;
use crate::fleet::rbac::*;

fn site_meta(site: &str, namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: Some(edge_identity_name(site)),
        namespace: namespace.map(str::to_owned),
        labels: Some(site_labels(site)),
        ..ObjectMeta::default()
    }
}

/// The hub's read of one Pull site's Secret `secret` (in
/// [`FLEET_NAMESPACE`]), by name: `get` (the prober reads it before each
/// probe) and `patch` (it stores the site's renewed member token there,
/// docs/pull-mode.md#credentials). A Role and its RoleBinding to the hub's
/// ServiceAccount, labelled and owned like the site's other objects, so
/// deleting the site revokes the grant.
pub fn pull_secret_grant(site: &str, site_uid: &str, secret: &str) -> (Role, RoleBinding) {
    let name = pull_secret_grant_name(secret);
    let meta = || ObjectMeta {
        name: Some(name.clone()),
        namespace: Some(FLEET_NAMESPACE.to_owned()),
        labels: Some(site_labels(site)),
        owner_references: Some(vec![site_owner_reference(site, site_uid)]),
        ..Default::default()
    };
    let role = Role {
        metadata: meta(),
        rules: Some(vec![rule("", "secrets", &[secret], &["get", "patch"])]),
    };
    let binding = RoleBinding {
        metadata: meta(),
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".to_owned(),
            kind: "Role".to_owned(),
            name: name.clone(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".to_owned(),
            name: HUB_OPERATOR_ACCOUNT.to_owned(),
            namespace: Some(FLEET_NAMESPACE.to_owned()),
            api_group: None,
        }]),
    };
    (role, binding)
}

/// The hub ServiceAccount `fleet-sites/fleet-edge-SITE` the edge
/// authenticates as. No pod runs as it (its tokens come from the
/// TokenRequest API only), so none gets its token mounted.
pub fn site_service_account(site: &str) -> ServiceAccount {
    ServiceAccount {
        metadata: site_meta(site, Some(SITES_NAMESPACE)),
        automount_service_account_token: Some(false),
        ..ServiceAccount::default()
    }
}

/// ClusterRole `fleet-edge-SITE` with exactly three rules, each limited to
/// `resourceNames: [SITE]`: get/update/patch on `federatedclusters/status`,
/// get on `federatedclusters`, and get/update/patch on its own
/// `federatedclusterleases` (its heartbeat, `api::lease`; `register`
/// creates it). Nothing lets the site list, watch, read another site,
/// write a spec, create or delete (the admission policy
/// `manifests::admission::site_lease_policy` further confines the lease
/// write to its `spec`).
pub fn site_cluster_role(site: &str) -> ClusterRole {
    ClusterRole {
        metadata: site_meta(site, None),
        rules: Some(vec![
            rule(
                GROUP,
                "federatedclusters/status",
                &[site],
                &["get", "update", "patch"],
            ),
            rule(GROUP, "federatedclusters", &[site], &["get"]),
            rule(
                GROUP,
                SITE_LEASE_RESOURCE,
                &[site],
                &["get", "update", "patch"],
            ),
        ]),
        aggregation_rule: None,
    }
}

/// The site's heartbeat object `FederatedClusterLease` SITE
/// (`api::lease`), as `register` creates it: named as the site, with its
/// bucket label (so a sharded hub can watch its own buckets' leases) and
/// nothing more, its spec empty until the edge's first renewal. Applied by
/// server-side apply without a spec field, so a re-run never resets a live
/// lease's renewal.
///
/// Unlike the site's other objects it carries neither their labels nor an
/// owner reference to the site: the edge rewrites the whole lease with
/// every renewal, and those bytes would be stored again each time — 2,062
/// bytes of etcd WAL per renewal with them, 1,539 with the bucket label
/// alone (docs/benchmarks-heartbeat.md). `unregister` deletes the lease by
/// its name instead of leaving it to the garbage collector.
pub fn site_lease(site: &str) -> crate::api::FederatedClusterLease {
    crate::api::FederatedClusterLease {
        metadata: ObjectMeta {
            name: Some(site.to_owned()),
            labels: Some(
                [(
                    crate::fleet::bucket::BUCKET_LABEL.to_owned(),
                    crate::fleet::bucket::bucket_label_value(site),
                )]
                .into(),
            ),
            ..ObjectMeta::default()
        },
        spec: Default::default(),
    }
}

/// ClusterRoleBinding `fleet-edge-SITE` from [`site_cluster_role`] to
/// [`site_service_account`].
pub fn site_cluster_role_binding(site: &str) -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: site_meta(site, None),
        role_ref: role_ref("ClusterRole", &edge_identity_name(site)),
        subjects: Some(vec![service_account_subject(
            &edge_identity_name(site),
            SITES_NAMESPACE,
        )]),
    }
}

/// Role `fleet-sites/fleet-edge-SITE` (auto-rotation): only `create` on
/// `serviceaccounts/token` for `fleet-edge-SITE`, so an edge can renew its
/// own token and mint nothing else.
pub fn site_token_role(site: &str) -> Role {
    Role {
        metadata: site_meta(site, Some(SITES_NAMESPACE)),
        rules: Some(vec![rule(
            "",
            "serviceaccounts/token",
            &[&edge_identity_name(site)],
            &["create"],
        )]),
    }
}

/// RoleBinding `fleet-sites/fleet-edge-SITE` from [`site_token_role`] to the
/// site's ServiceAccount.
pub fn site_token_role_binding(site: &str) -> RoleBinding {
    RoleBinding {
        metadata: site_meta(site, Some(SITES_NAMESPACE)),
        role_ref: role_ref("Role", &edge_identity_name(site)),
        subjects: Some(vec![service_account_subject(
            &edge_identity_name(site),
            SITES_NAMESPACE,
        )]),
    }
}

/// The ownerReference every per-site identity object carries to its
/// FederatedCluster (`uid`), so deleting the site (`kubectl delete fc
/// SITE`) has the garbage collector delete them, revoking its tokens.
pub fn site_owner_reference(site: &str, uid: &str) -> OwnerReference {
    OwnerReference {
        api_version: crate::api::API_VERSION.to_owned(),
        kind: "FederatedCluster".to_owned(),
        name: site.to_owned(),
        uid: uid.to_owned(),
        controller: None,
        block_owner_deletion: None,
    }
}

/// Annotation on a site's ServiceAccount recording which identity the run
/// that wrote it had just applied: a digest of every other identity object
/// (rules, bindings, labels, owner). The ServiceAccount is applied last, so a
/// matching digest means one run applied all of them for this very site
/// object (its uid is part of the digest); see [`SiteIdentity`].
pub const IDENTITY_DIGEST_ANNOTATION: &str = "federation.kubectl-fleet.dev/identity-digest";

/// The Push-mode identity of one site, every object owned by its
/// FederatedCluster (`uid`), in the order `register` applies it: roles and
/// bindings first, the ServiceAccount last, carrying
/// [`IDENTITY_DIGEST_ANNOTATION`].
#[derive(Debug, Clone)]
pub struct SiteIdentity {
    /// [`site_cluster_role`].
    pub cluster_role: ClusterRole,
    /// [`site_cluster_role_binding`].
    pub cluster_role_binding: ClusterRoleBinding,
    /// [`site_token_role`] and [`site_token_role_binding`] when the edge may
    /// renew its own token (auto-rotation), else None (they must not exist).
    pub token_role: Option<(Role, RoleBinding)>,
    /// [`site_service_account`], with the digest annotation.
    pub service_account: ServiceAccount,
    /// [`site_lease`]: the heartbeat object the cluster role's lease rule
    /// names, applied with the roles.
    pub lease: crate::api::FederatedClusterLease,
}

impl SiteIdentity {
    /// The identity of `site` owned by its FederatedCluster `uid`.
    pub fn new(site: &str, uid: &str, auto_rotate: bool) -> Self {
        let owned = |mut meta: ObjectMeta| {
            meta.owner_references = Some(vec![site_owner_reference(site, uid)]);
            meta
        };
        let mut cluster_role = site_cluster_role(site);
        cluster_role.metadata = owned(cluster_role.metadata);
        let mut cluster_role_binding = site_cluster_role_binding(site);
        cluster_role_binding.metadata = owned(cluster_role_binding.metadata);
        let token_role = auto_rotate.then(|| {
            let mut role = site_token_role(site);
            role.metadata = owned(role.metadata);
            let mut binding = site_token_role_binding(site);
            binding.metadata = owned(binding.metadata);
            (role, binding)
        });
        let mut service_account = site_service_account(site);
        service_account.metadata = owned(service_account.metadata);
        let lease = site_lease(site);
        let digest = {
            use sha2::Digest as _;
            let objects = serde_json::json!([
                cluster_role,
                cluster_role_binding,
                token_role,
                service_account,
                lease
            ]);
            let hash = sha2::Sha256::digest(objects.to_string().as_bytes());
            hash.iter()
                .take(16)
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        };
        service_account.metadata.annotations = Some(BTreeMap::from([(
            IDENTITY_DIGEST_ANNOTATION.to_owned(),
            digest,
        )]));
        SiteIdentity {
            cluster_role,
            cluster_role_binding,
            token_role,
            service_account,
            lease,
        }
    }

    /// The digest the ServiceAccount carries.
    pub(crate) fn digest(&self) -> &str {
        identity_digest(&self.service_account).unwrap_or_default()
    }

    /// Whether `live` (the site's ServiceAccount as the server has it) was
    /// written by a run that applied exactly this identity: same digest
    /// and owned by the same FederatedCluster.
    pub fn written_by_complete_run(&self, live: &ServiceAccount) -> bool {
        live.metadata.deletion_timestamp.is_none()
            && identity_digest(live) == Some(self.digest())
            && live.metadata.owner_references == self.service_account.metadata.owner_references
    }

    /// What the site's token may do on the hub through this identity, as
    /// `(apiGroup, resource, resourceName, verb)`, for comparison with
    /// what the API server says the token may do ([`site_rule_tuples`]).
    pub fn granted(&self) -> BTreeSet<RuleTuple> {
        let mut rules = self.cluster_role.rules.clone().unwrap_or_default();
        if let Some((role, _)) = &self.token_role {
            rules.extend(role.rules.clone().unwrap_or_default());
        }
        site_rule_tuples(&rules)
    }
}

/// The [`IDENTITY_DIGEST_ANNOTATION`] a ServiceAccount carries, if any.
fn identity_digest(sa: &ServiceAccount) -> Option<&str> {
    sa.metadata
        .annotations
        .as_ref()?
        .get(IDENTITY_DIGEST_ANNOTATION)
        .map(String::as_str)
}

fn role_ref(kind: &str, name: &str) -> RoleRef {
    RoleRef {
        api_group: "rbac.authorization.k8s.io".to_owned(),
        kind: kind.to_owned(),
        name: name.to_owned(),
    }
}

fn service_account_subject(name: &str, namespace: &str) -> Subject {
    Subject {
        kind: "ServiceAccount".to_owned(),
        name: name.to_owned(),
        namespace: Some(namespace.to_owned()),
        api_group: None,
    }
}

#[cfg(any(test, feature = "fixtures"))]
fn member_meta(namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: Some(MEMBER_READER_NAME.to_owned()),
        namespace: namespace.map(str::to_owned),
        labels: Some(BTreeMap::from([(
            MANAGED_BY_LABEL.to_owned(),
            MANAGED_BY.to_owned(),
        )])),
        ..ObjectMeta::default()
    }
}

#[cfg(any(test, feature = "fixtures"))]
/// The ServiceAccount `fleet-system/fleet-member-reader`: the read-only
/// identity `register --pull` shared among every Pull site of a member
/// before each site got its own ([`PullIdentity`]). Nothing creates it
/// any more: tests build it (`fixtures`) to stand for such a member. Sites registered then
/// keep using it until `register --pull` runs for them again; nothing
/// deletes it any more (another site, or another hub, may still use it).
pub fn member_reader_service_account() -> ServiceAccount {
    ServiceAccount {
        metadata: member_meta(Some(FLEET_NAMESPACE)),
        ..ServiceAccount::default()
    }
}

#[cfg(any(test, feature = "fixtures"))]
/// ClusterRole `fleet-member-reader` with [`member_read_rules`] (see
/// [`member_reader_service_account`]).
pub fn member_reader_cluster_role() -> ClusterRole {
    ClusterRole {
        metadata: member_meta(None),
        rules: Some(member_read_rules()),
        aggregation_rule: None,
    }
}

#[cfg(any(test, feature = "fixtures"))]
/// ClusterRoleBinding `fleet-member-reader` from [`member_reader_cluster_role`]
/// to [`member_reader_service_account`].
pub fn member_reader_cluster_role_binding() -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: member_meta(None),
        role_ref: role_ref("ClusterRole", MEMBER_READER_NAME),
        subjects: Some(vec![service_account_subject(
            MEMBER_READER_NAME,
            FLEET_NAMESPACE,
        )]),
    }
}

/// The read-only identity of one Pull site on its member cluster, every
/// object named `fleet-pull-SITE` and labelled with the site and the hub
/// ([`HUB_LABEL`]): a ServiceAccount, a ClusterRole with
/// [`member_read_rules`] and its binding, and a Role in `fleet-system`
/// allowing only `create` on `serviceaccounts/token` for that very
/// ServiceAccount (so the hub renews the site's token with the token
/// itself, as an edge does on the hub) and its binding. One per site:
/// unregistering, re-registering or another hub's site never touches
/// another site's identity.
#[derive(Debug, Clone)]
pub struct PullIdentity {
    /// `fleet-system/fleet-pull-SITE`.
    pub service_account: ServiceAccount,
    /// ClusterRole `fleet-pull-SITE`.
    pub cluster_role: ClusterRole,
    /// ClusterRoleBinding `fleet-pull-SITE`.
    pub cluster_role_binding: ClusterRoleBinding,
    /// Role `fleet-system/fleet-pull-SITE`: its own token, nothing else.
    pub token_role: Role,
    /// RoleBinding `fleet-system/fleet-pull-SITE`.
    pub token_role_binding: RoleBinding,
}

impl PullIdentity {
    /// The identity of `site` created by the hub `hub_id` (see [`HUB_LABEL`]).
    pub fn new(site: &str, hub_id: &str) -> Self {
        let name = pull_identity_name(site);
        let meta = |namespace: Option<&str>| {
            let mut labels = site_labels(site);
            labels.insert(HUB_LABEL.to_owned(), hub_id.to_owned());
            ObjectMeta {
                name: Some(name.clone()),
                namespace: namespace.map(str::to_owned),
                labels: Some(labels),
                ..ObjectMeta::default()
            }
        };
        let subject = || Some(vec![service_account_subject(&name, FLEET_NAMESPACE)]);
        PullIdentity {
            service_account: ServiceAccount {
                metadata: meta(Some(FLEET_NAMESPACE)),
                ..ServiceAccount::default()
            },
            cluster_role: ClusterRole {
                metadata: meta(None),
                rules: Some(member_read_rules()),
                aggregation_rule: None,
            },
            cluster_role_binding: ClusterRoleBinding {
                metadata: meta(None),
                role_ref: role_ref("ClusterRole", &name),
                subjects: subject(),
            },
            token_role: Role {
                metadata: meta(Some(FLEET_NAMESPACE)),
                rules: Some(vec![rule(
                    "",
                    "serviceaccounts/token",
                    &[&name],
                    &["create"],
                )]),
            },
            token_role_binding: RoleBinding {
                metadata: meta(Some(FLEET_NAMESPACE)),
                role_ref: role_ref("Role", &name),
                subjects: subject(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::rbac::v1::PolicyRule;
    use serde_json::json;

    fn resources_rule(api_group: &str, resources: &[&str], verbs: &[&str]) -> PolicyRule {
        PolicyRule {
            resources: Some(resources.iter().map(|s| (*s).to_owned()).collect()),
            ..rule(api_group, "", &[], verbs)
        }
    }

    #[test]
    fn site_cluster_role_is_exactly_design_section_3() {
        let role = serde_json::to_value(site_cluster_role("site-a")).unwrap();
        assert_eq!(role["metadata"]["name"], "fleet-edge-site-a");
        assert_eq!(
            role["rules"],
            json!([
                {
                    "apiGroups": ["federation.kubectl-fleet.dev"],
                    "resources": ["federatedclusters/status"],
                    "resourceNames": ["site-a"],
                    "verbs": ["get", "update", "patch"],
                },
                {
                    "apiGroups": ["federation.kubectl-fleet.dev"],
                    "resources": ["federatedclusters"],
                    "resourceNames": ["site-a"],
                    "verbs": ["get"],
                },
                {
                    "apiGroups": ["federation.kubectl-fleet.dev"],
                    "resources": ["federatedclusterleases"],
                    "resourceNames": ["site-a"],
                    "verbs": ["get", "update", "patch"],
                },
            ])
        );
    }

    #[test]
    fn a_sites_lease_is_named_and_bucketed_and_nothing_more() {
        let lease = serde_json::to_value(site_lease("site-a")).unwrap();
        assert_eq!(
            lease,
            json!({
                "apiVersion": "federation.kubectl-fleet.dev/v1alpha1",
                "kind": "FederatedClusterLease",
                "metadata": {
                    "name": "site-a",
                    "labels": {
                        "federation.kubectl-fleet.dev/bucket": crate::fleet::bucket::bucket_label_value("site-a"),
                    },
                },
                // Nothing of the spec: applying it never resets a renewal.
                "spec": {},
            })
        );
        assert_eq!(
            SiteIdentity::new("site-a", "uid-1", true).lease,
            site_lease("site-a")
        );
    }

    #[test]
    fn no_site_rule_is_broader_than_its_own_object() {
        for rules in [
            site_cluster_role("b").rules.unwrap(),
            site_token_role("b").rules.unwrap(),
        ] {
            for r in rules {
                assert!(r.resource_names.as_ref().is_some_and(|n| n.len() == 1));
                for verb in &r.verbs {
                    assert!(
                        !["list", "watch", "delete", "deletecollection", "*"]
                            .contains(&verb.as_str())
                    );
                }
                assert!(!r.api_groups.unwrap().contains(&"*".to_owned()));
            }
        }
    }

    #[test]
    fn site_token_role_allows_only_own_token() {
        let role = serde_json::to_value(site_token_role("site-a")).unwrap();
        assert_eq!(role["metadata"]["namespace"], "fleet-sites");
        assert_eq!(role["metadata"]["name"], "fleet-edge-site-a");
        assert_eq!(
            role["rules"],
            json!([{
                "apiGroups": [""],
                "resources": ["serviceaccounts/token"],
                "resourceNames": ["fleet-edge-site-a"],
                "verbs": ["create"],
            }])
        );
    }

    #[test]
    fn bindings_point_at_the_site_service_account() {
        let subject = json!([{"kind": "ServiceAccount", "name": "fleet-edge-s1", "namespace": "fleet-sites"}]);
        let crb = serde_json::to_value(site_cluster_role_binding("s1")).unwrap();
        assert_eq!(
            crb["roleRef"],
            json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "fleet-edge-s1"})
        );
        assert_eq!(crb["subjects"], subject);
        let rb = serde_json::to_value(site_token_role_binding("s1")).unwrap();
        assert_eq!(rb["metadata"]["namespace"], "fleet-sites");
        assert_eq!(
            rb["roleRef"],
            json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "fleet-edge-s1"})
        );
        assert_eq!(rb["subjects"], subject);
        let sa = site_service_account("s1");
        assert_eq!(sa.metadata.name.as_deref(), Some("fleet-edge-s1"));
        assert_eq!(sa.metadata.namespace.as_deref(), Some("fleet-sites"));
        assert_eq!(sa.metadata.labels.unwrap()[SITE_LABEL], "s1");
        // No pod runs as a site; none gets its token mounted.
        assert_eq!(sa.automount_service_account_token, Some(false));
    }

    #[test]
    fn site_identities_live_apart_from_the_operator() {
        // Whatever is granted to the operator's namespace (the group
        // system:serviceaccounts:fleet-system) must not reach a site.
        assert_ne!(SITES_NAMESPACE, FLEET_NAMESPACE);
        let identity = SiteIdentity::new("s1", "u", true);
        let (role, binding) = identity.token_role.unwrap();
        for ns in [
            identity.service_account.metadata.namespace,
            role.metadata.namespace,
            binding.metadata.namespace,
        ] {
            assert_eq!(ns.as_deref(), Some(SITES_NAMESPACE));
        }
        for subject in [
            identity.cluster_role_binding.subjects.unwrap(),
            binding.subjects.unwrap(),
        ] {
            assert_eq!(subject[0].namespace.as_deref(), Some(SITES_NAMESPACE));
        }
        assert_eq!(namespace_labels()[POD_SECURITY_ENFORCE_LABEL], "restricted");
    }

    #[test]
    fn site_identity_digest_names_the_owner_and_what_is_granted() {
        let a = SiteIdentity::new("site-a", "uid-1", true);
        assert_eq!(a.digest().len(), 32);
        assert_eq!(
            a.digest(),
            SiteIdentity::new("site-a", "uid-1", true).digest()
        );
        for other in [
            SiteIdentity::new("site-a", "uid-2", true),
            SiteIdentity::new("site-a", "uid-1", false),
            SiteIdentity::new("site-b", "uid-1", true),
        ] {
            assert_ne!(a.digest(), other.digest());
        }
        // Every object is owned by the site.
        let owner = Some(vec![site_owner_reference("site-a", "uid-1")]);
        let (role, binding) = a.token_role.clone().unwrap();
        assert_eq!(a.cluster_role.metadata.owner_references, owner);
        assert_eq!(a.cluster_role_binding.metadata.owner_references, owner);
        assert_eq!(role.metadata.owner_references, owner);
        assert_eq!(binding.metadata.owner_references, owner);
        assert_eq!(a.service_account.metadata.owner_references, owner);
        assert!(a.written_by_complete_run(&a.service_account));
        let mut stale = a.service_account.clone();
        stale.metadata.owner_references = Some(vec![site_owner_reference("site-a", "uid-0")]);
        assert!(!a.written_by_complete_run(&stale));
        let mut bare = site_service_account("site-a");
        bare.metadata.owner_references = owner;
        assert!(!a.written_by_complete_run(&bare), "no digest: not proven");
    }

    #[test]
    fn granted_rules_are_the_site_rules_and_nothing_else_counts() {
        let t = |g: &str, r: &str, n: &str, v: &str| {
            (g.to_owned(), r.to_owned(), n.to_owned(), v.to_owned())
        };
        let with = SiteIdentity::new("s", "u", true).granted();
        let without = SiteIdentity::new("s", "u", false).granted();
        assert_eq!(
            without,
            BTreeSet::from([
                t(GROUP, "federatedclusters/status", "s", "get"),
                t(GROUP, "federatedclusters/status", "s", "update"),
                t(GROUP, "federatedclusters/status", "s", "patch"),
                t(GROUP, "federatedclusters", "s", "get"),
                t(GROUP, "federatedclusterleases", "s", "get"),
                t(GROUP, "federatedclusterleases", "s", "update"),
                t(GROUP, "federatedclusterleases", "s", "patch"),
            ])
        );
        let mut expected = without.clone();
        expected.insert(t("", "serviceaccounts/token", "fleet-edge-s", "create"));
        assert_eq!(with, expected);
        // What every authenticated identity may do is not about the site;
        // a wildcard that would cover the site's objects is.
        let review = vec![
            resources_rule(
                "authorization.k8s.io",
                &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                &["create"],
            ),
            rule("*", "*", &[], &["*"]),
        ];
        assert_eq!(
            site_rule_tuples(&review),
            BTreeSet::from([t("*", "*", "", "*")])
        );
    }

    #[test]
    fn each_pull_site_has_its_own_read_only_identity_that_may_renew_only_its_own_token() {
        let id = PullIdentity::new("site-a", "hub-uid-1");
        let name = "fleet-pull-site-a";
        let labels = id.service_account.metadata.labels.clone().unwrap();
        assert_eq!(labels[SITE_LABEL], "site-a");
        assert_eq!(labels[HUB_LABEL], "hub-uid-1");
        for meta in [
            &id.service_account.metadata,
            &id.cluster_role.metadata,
            &id.cluster_role_binding.metadata,
            &id.token_role.metadata,
            &id.token_role_binding.metadata,
        ] {
            assert_eq!(meta.name.as_deref(), Some(name));
            assert_eq!(meta.labels.as_ref(), Some(&labels));
        }
        assert_eq!(
            id.service_account.metadata.namespace.as_deref(),
            Some(FLEET_NAMESPACE)
        );
        assert_eq!(id.cluster_role.rules, Some(member_read_rules()));
        assert_eq!(
            serde_json::to_value(&id.token_role.rules).unwrap(),
            json!([{
                "apiGroups": [""],
                "resources": ["serviceaccounts/token"],
                "resourceNames": ["fleet-pull-site-a"],
                "verbs": ["create"],
            }])
        );
        let subject =
            json!([{"kind": "ServiceAccount", "name": name, "namespace": "fleet-system"}]);
        assert_eq!(
            serde_json::to_value(&id.cluster_role_binding.subjects).unwrap(),
            subject
        );
        assert_eq!(
            serde_json::to_value(&id.token_role_binding.subjects).unwrap(),
            subject
        );
        assert_eq!(id.cluster_role_binding.role_ref.name, name);
        assert_eq!(id.token_role_binding.role_ref.kind, "Role");
        assert_eq!(
            pull_identity_user("site-a"),
            "system:serviceaccount:fleet-system:fleet-pull-site-a"
        );
        let other = PullIdentity::new("site-b", "hub-uid-1");
        assert_ne!(
            other.service_account.metadata.name,
            id.service_account.metadata.name
        );
    }

    #[test]
    fn a_pull_identity_belongs_to_the_hub_that_labelled_it() {
        let ours = PullIdentity::new("s", "hub-1")
            .service_account
            .metadata
            .labels;
        assert_eq!(
            pull_identity_owner(ours.as_ref(), "s", "hub-1"),
            PullIdentityOwner::ThisHub
        );
        assert_eq!(
            pull_identity_owner(ours.as_ref(), "s", "hub-2"),
            PullIdentityOwner::OtherHub("hub-1".into())
        );
        assert_eq!(
            pull_identity_owner(ours.as_ref(), "t", "hub-1"),
            PullIdentityOwner::Foreign
        );
        assert_eq!(
            pull_identity_owner(None, "s", "hub-1"),
            PullIdentityOwner::Foreign
        );
        let unlabelled = Some(site_labels("s"));
        assert_eq!(
            pull_identity_owner(unlabelled.as_ref(), "s", "hub-1"),
            PullIdentityOwner::Foreign
        );
    }

    #[test]
    fn member_reader_is_read_only() {
        let role = member_reader_cluster_role();
        let rules = role.rules.unwrap();
        for r in &rules {
            assert!(r.verbs.iter().all(|v| v == "get" || v == "list"), "{r:?}");
            assert!(r.resources.iter().flatten().all(|res| res != "secrets"));
        }
        let core = &rules[0];
        assert_eq!(core.api_groups, Some(vec![String::new()]));
        assert_eq!(
            core.resources,
            Some(vec!["nodes".into(), "namespaces".into(), "pods".into()])
        );
        let groups: Vec<_> = rules
            .iter()
            .flat_map(|r| r.api_groups.clone().unwrap_or_default())
            .collect();
        assert_eq!(groups, ["", "apps", LLMKUBE_GROUP, KSERVE_GROUP]);
        let crb = member_reader_cluster_role_binding();
        assert_eq!(crb.role_ref.name, MEMBER_READER_NAME);
        assert_eq!(
            crb.subjects.unwrap()[0].namespace.as_deref(),
            Some(FLEET_NAMESPACE)
        );
    }

    #[test]
    fn the_hubs_grant_of_a_pull_secret_is_by_name_and_owned_by_the_site() {
        // Each Pull site's Secret by name, to the hub alone, owned by the site.
        let (role, binding) = pull_secret_grant("dr-eu", "uid-1", "fleet-pull-dr-eu");
        assert_eq!(
            serde_json::to_value(&role.rules).unwrap(),
            json!([
                { "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["fleet-pull-dr-eu"], "verbs": ["get", "patch"] },
            ])
        );
        assert_eq!(
            role.metadata.name.as_deref(),
            Some("fleet-operator-hub-fleet-pull-dr-eu")
        );
        assert_eq!(role.metadata.namespace.as_deref(), Some(FLEET_NAMESPACE));
        assert_eq!(
            serde_json::to_value(&binding.subjects).unwrap(),
            json!([{ "kind": "ServiceAccount", "name": "fleet-operator-hub", "namespace": "fleet-system" }])
        );
        assert_eq!(binding.role_ref.name, "fleet-operator-hub-fleet-pull-dr-eu");
        for meta in [&role.metadata, &binding.metadata] {
            assert_eq!(meta.owner_references.as_ref().unwrap()[0].uid, "uid-1");
            assert_eq!(meta.labels.as_ref().unwrap()[SITE_LABEL], "dr-eu");
        }
    }
}
