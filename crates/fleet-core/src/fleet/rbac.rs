//! The per-site least-privilege identity (docs/architecture.md#the-life-of-a-site), as plain Kubernetes
//! objects: what `kubectl fleet register` creates on the hub for a Push-mode
//! site, and the read-only identity it mints on a Pull-mode member.
//!
//! Everything here is pure construction; applying the objects is the job of
//! `kubectl_fleet::k8s`. Tests pin the rules exactly, because the site identity is
//! the security boundary between sites.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::api::GROUP;

/// Namespace of the operator on the hub and on edges, of the Pull-mode
/// kubeconfig Secrets on the hub, and of the read-only identity on Pull-mode
/// members.
pub const FLEET_NAMESPACE: &str = "fleet-system";
/// Namespace on the hub holding the Push sites' identities (their
/// ServiceAccounts and token Roles), apart from the operator: nothing
/// granted to `system:serviceaccounts:fleet-system` (the operator's
/// namespace) reaches a site, and nothing runs here.
pub const SITES_NAMESPACE: &str = "fleet-sites";
/// Pod Security admission label every fleet namespace carries, enforcing
/// the "restricted" profile (the operator's pods meet it; nothing else
/// should run there).
pub(crate) const POD_SECURITY_ENFORCE_LABEL: &str = "pod-security.kubernetes.io/enforce";
/// Value of [`POD_SECURITY_ENFORCE_LABEL`].
pub(crate) const POD_SECURITY_RESTRICTED: &str = "restricted";
/// Prefix of every per-site object on the hub: `fleet-edge-SITE`.
pub const EDGE_IDENTITY_PREFIX: &str = "fleet-edge-";
/// Prefix of the hub Secret holding a Pull-mode member kubeconfig: `fleet-pull-SITE`.
pub(crate) const PULL_SECRET_PREFIX: &str = "fleet-pull-";
/// Name of the read-only ServiceAccount, ClusterRole and ClusterRoleBinding
/// earlier versions minted on a Pull-mode member cluster and shared among
/// its sites (now each site has its own: [`PullIdentity`]).
pub const MEMBER_READER_NAME: &str = "fleet-member-reader";
/// Label put on every object created for a site, valued with the site name,
/// so `unregister` and audits can find them.
pub const SITE_LABEL: &str = "federation.kubectl-fleet.dev/site";
/// `app.kubernetes.io/managed-by` value on every object we create.
pub const MANAGED_BY: &str = "kubectl-fleet";

/// The standard managed-by label key, set to [`MANAGED_BY`] on everything
/// this project creates.
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
/// Maximum length of a site name (a DNS-1123 label).
pub(crate) const MAX_SITE_NAME_LEN: usize = 63;
/// The shortest lifetime a TokenRequest may ask for: the API server refuses
/// `expirationSeconds` under 10 minutes.
pub const MIN_TOKEN_TTL: std::time::Duration = std::time::Duration::from_secs(600);
/// The longest token a site identity may mint itself (90 days, three
/// times `register`'s default): the hub's admission policy refuses longer
/// ones (`fleet::admission::site_token_policy`), and the edge asks for no
/// more when it renews, whatever its first token's lifetime was.
pub const MAX_SITE_TOKEN_TTL: std::time::Duration = std::time::Duration::from_secs(90 * 86_400);

/// A site name that is not a DNS-1123 label.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidSiteName {
    /// The name is empty.
    #[error("invalid site name: must not be empty")]
    Empty,
    /// The name is longer than 63 characters.
    #[error("invalid site name {name:?}: {len} characters, at most 63 allowed")]
    TooLong {
        /// The rejected name.
        name: String,
        /// Its length.
        len: usize,
    },
    /// The name contains something other than `a-z`, `0-9` and `-`.
    #[error(
        "invalid site name {name:?}: character {ch:?} not allowed (use lowercase letters, digits and '-')"
    )]
    BadCharacter {
        /// The rejected name.
        name: String,
        /// The first offending character.
        ch: char,
    },
    /// The name starts or ends with `-`.
    #[error("invalid site name {name:?}: must start and end with a lowercase letter or digit")]
    BadEdge {
        /// The rejected name.
        name: String,
    },
}

impl InvalidSiteName {
    /// What the user can do about it, for the line after the error.
    pub fn hint(&self) -> String {
        let suggestion = match self {
            InvalidSiteName::Empty => None,
            InvalidSiteName::TooLong { name, .. }
            | InvalidSiteName::BadCharacter { name, .. }
            | InvalidSiteName::BadEdge { name } => suggest_site_name(name),
        };
        match suggestion {
            Some(s) => {
                format!("site names are DNS-1123 labels (e.g. site-a, us-east-1-prod); try {s:?}")
            }
            None => "site names are DNS-1123 labels (e.g. site-a, us-east-1-prod)".to_owned(),
        }
    }
}

/// Check that `name` is a DNS-1123 label (≤ 63 chars of `a-z0-9-`, alphanumeric
/// at both ends), so every object name derived from it is valid.
pub fn validate_site_name(name: &str) -> Result<(), InvalidSiteName> {
    if name.is_empty() {
        return Err(InvalidSiteName::Empty);
    }
    if let Some(ch) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(InvalidSiteName::BadCharacter {
            name: name.to_owned(),
            ch,
        });
    }
    if name.len() > MAX_SITE_NAME_LEN {
        return Err(InvalidSiteName::TooLong {
            name: name.to_owned(),
            len: name.len(),
        });
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Err(InvalidSiteName::BadEdge {
            name: name.to_owned(),
        });
    }
    Ok(())
}

/// A valid name close to `name` (lowercased, other characters turned into
/// `-`, trimmed, cut to 63), or None if nothing usable remains.
fn suggest_site_name(name: &str) -> Option<String> {
    let mapped: String = name
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '-'
            }
        })
        .collect();
    let cut: String = mapped
        .trim_matches('-')
        .chars()
        .take(MAX_SITE_NAME_LEN)
        .collect();
    let cut = cut.trim_end_matches('-').to_owned();
    (validate_site_name(&cut).is_ok() && cut != name).then_some(cut)
}

/// `fleet-edge-SITE`: the ServiceAccount, ClusterRole, ClusterRoleBinding,
/// Role and RoleBinding of a Push-mode site.
pub fn edge_identity_name(site: &str) -> String {
    format!("{EDGE_IDENTITY_PREFIX}{site}")
}

/// `fleet-pull-SITE`: the hub Secret with a Pull-mode member's kubeconfig.
pub fn pull_secret_name(site: &str) -> String {
    format!("{PULL_SECRET_PREFIX}{site}")
}

/// Labels on every object created for `site`.
pub fn site_labels(site: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (MANAGED_BY_LABEL.to_owned(), MANAGED_BY.to_owned()),
        (SITE_LABEL.to_owned(), site.to_owned()),
    ])
}

/// Label keys `register` keeps in step with a site's spec, so
/// `kubectl get fc -l federation.kubectl-fleet.dev/tier=critical` works.
pub(crate) const ENVIRONMENT_LABEL: &str = "federation.kubectl-fleet.dev/environment";
/// See [`ENVIRONMENT_LABEL`].
pub const REGION_LABEL: &str = "federation.kubectl-fleet.dev/region";
/// See [`ENVIRONMENT_LABEL`].
pub(crate) const TIER_LABEL: &str = "federation.kubectl-fleet.dev/tier";

/// The labels of a FederatedCluster: [`site_labels`] plus environment,
/// tier and (when it is a valid label value) region from its spec.
pub fn site_object_labels(
    site: &str,
    spec: &crate::api::FederatedClusterSpec,
) -> BTreeMap<String, String> {
    let mut labels = site_labels(site);
    labels.insert(
        ENVIRONMENT_LABEL.to_owned(),
        spec.environment.as_str().to_owned(),
    );
    labels.insert(TIER_LABEL.to_owned(), spec.tier.as_str().to_owned());
    if let Some(region) = spec.region.as_deref().filter(|r| is_label_value(r)) {
        labels.insert(REGION_LABEL.to_owned(), region.to_owned());
    }
    labels
}

/// A Kubernetes label value: at most 63 characters, alphanumerics with
/// `-`, `_` or `.` inside.
fn is_label_value(v: &str) -> bool {
    let ok = |c: char| c.is_ascii_alphanumeric();
    !v.is_empty()
        && v.len() <= 63
        && v.starts_with(ok)
        && v.ends_with(ok)
        && v.chars().all(|c| ok(c) || matches!(c, '-' | '_' | '.'))
}

/// The labels of every namespace this project creates: managed-by, and
/// the Pod Security "restricted" profile enforced.
pub fn namespace_labels() -> BTreeMap<String, String> {
    BTreeMap::from([
        (MANAGED_BY_LABEL.to_owned(), MANAGED_BY.to_owned()),
        (
            POD_SECURITY_ENFORCE_LABEL.to_owned(),
            POD_SECURITY_RESTRICTED.to_owned(),
        ),
    ])
}

fn site_meta(site: &str, namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: Some(edge_identity_name(site)),
        namespace: namespace.map(str::to_owned),
        labels: Some(site_labels(site)),
        ..ObjectMeta::default()
    }
}

fn rule(api_group: &str, resource: &str, names: &[&str], verbs: &[&str]) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![api_group.to_owned()]),
        resources: Some(vec![resource.to_owned()]),
        resource_names: (!names.is_empty())
            .then(|| names.iter().map(|s| (*s).to_owned()).collect()),
        verbs: verbs.iter().map(|s| (*s).to_owned()).collect(),
        non_resource_urls: None,
    }
}

/// The hub operator's cluster-wide rules (ClusterRole
/// `fleet-operator-hub`): exactly the requests its code makes, each verb
/// named by the code that needs it, and nothing more (the e2e suites run
/// the hub with a token bound to exactly these rules):
///
/// - `federatedclusters` get, list, watch: the site watch
///   (`k8s::site_status::watch_sites_unmanaged`) and the GET of a site
///   while that watch is down (`get_site`). No update or patch: the hub
///   never writes a spec.
/// - `federatedclusters/status` update, patch: the hub's guarded replace
///   (`replace_site_status`) and the Pull prober's merge patch
///   (`patch_site_status`).
/// - `federationstatuses` get and, for the singleton `fleet` only, its
///   `/status` update (the summary's guarded replace) and patch (the
///   leader's liveness record, `status.hub` alone); create (which RBAC
///   cannot limit by name) makes it.
/// - `tokenreviews`, `subjectaccessreviews` create: authenticating the
///   callers of the REST API and `/metrics`.
///
/// Its Events and its Lease are granted in their namespaces only
/// ([`hub_events_rules`], [`hub_operator_namespace_rules`]), and each Pull
/// site's Secret by name ([`pull_secret_grant`]): nothing here reaches a
/// Secret.
pub fn hub_operator_cluster_rules() -> Vec<PolicyRule> {
    let g = crate::api::GROUP;
    let fleet = crate::api::FEDERATION_STATUS_NAME;
    vec![
        rule(g, "federatedclusters", &[], &["get", "list", "watch"]),
        rule(g, "federatedclusters/status", &[], &["update", "patch"]),
        rule(g, "federationstatuses", &[], &["create"]),
        rule(g, "federationstatuses", &[fleet], &["get"]),
        rule(
            g,
            "federationstatuses/status",
            &[fleet],
            &["update", "patch"],
        ),
        rule("authentication.k8s.io", "tokenreviews", &[], &["create"]),
        rule(
            "authorization.k8s.io",
            "subjectaccessreviews",
            &[],
            &["create"],
        ),
    ]
}

/// The hub operator's ServiceAccount (in [`FLEET_NAMESPACE`]), whose
/// ClusterRole, Role and per-site grants are named the same.
pub const HUB_OPERATOR_ACCOUNT: &str = "fleet-operator-hub";

/// Where the hub records its Events: its sites and the FederationStatus
/// are cluster-scoped, and Kubernetes (and kube's recorder) records the
/// Events of a cluster-scoped object in `default`.
pub const EVENTS_NAMESPACE: &str = "default";

/// The hub operator's rules for its Events (Role `fleet-operator-hub` in
/// [`EVENTS_NAMESPACE`], docs/operations.md#events): kube's event recorder
/// creates each, then patches its series when it repeats. Event names are
/// generated, so no narrower than the namespace.
pub fn hub_events_rules() -> Vec<PolicyRule> {
    vec![rule("events.k8s.io", "events", &[], &["create", "patch"])]
}

/// The hub operator's rules inside `fleet-system` (Role
/// `fleet-operator-hub`): its leader-election Lease (get, create, guarded
/// update, and the list and watch of the standby's Lease watch). No
/// Secret: the namespace holds the hub's serving key and, with
/// cert-manager, the CA that signs it; each Pull site's Secret is granted
/// by name when `register` stores it ([`pull_secret_grant`]).
pub fn hub_operator_namespace_rules() -> Vec<PolicyRule> {
    vec![rule(
        "coordination.k8s.io",
        "leases",
        &[],
        &["get", "list", "watch", "create", "update"],
    )]
}

/// Name of the Role and RoleBinding that grant the hub Secret `secret`:
/// `fleet-operator-hub-SECRET` (never a name of the member's Pull identity,
/// which a hub that is also a member holds in the same namespace).
pub fn pull_secret_grant_name(secret: &str) -> String {
    format!("{HUB_OPERATOR_ACCOUNT}-{secret}")
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

/// The operator's metrics path; a scraper needs `get` on it as a
/// non-resource URL.
pub const METRICS_PATH: &str = "/metrics";

/// Name of the ClusterRole with [`metrics_reader_rules`] that `install
/// --with-monitoring` creates for a scraper.
pub const METRICS_READER_ROLE: &str = "fleet-operator-metrics-reader";

/// What a scraper of the operator's `/metrics` must be allowed (checked
/// with a SubjectAccessReview, as kube-rbac-proxy and controller-runtime's
/// secure metrics do): `get` on the non-resource URL `/metrics`. The
/// `--with-monitoring` ClusterRole grants it.
pub fn metrics_reader_rules() -> Vec<PolicyRule> {
    vec![PolicyRule {
        api_groups: None,
        resources: None,
        resource_names: None,
        verbs: vec!["get".to_owned()],
        non_resource_urls: Some(vec![METRICS_PATH.to_owned()]),
    }]
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

/// ClusterRole `fleet-edge-SITE` with exactly two rules, both limited to
/// `resourceNames: [SITE]`: get/update/patch on `federatedclusters/status`
/// and get on `federatedclusters`. Nothing lets the site list, watch, read
/// another site, write a spec or delete.
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
        ]),
        aggregation_rule: None,
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

/// The rules of the edge's Role on its MEMBER cluster that let it persist a
/// renewed token: get and update on exactly the Secret `name` holding its
/// hub kubeconfig (the Role lives in that Secret's namespace). No create,
/// list or watch: the edge can neither read nor add any other Secret.
pub fn edge_secret_rules(name: &str) -> Vec<PolicyRule> {
    vec![rule("", "secrets", &[name], &["get", "update"])]
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
        let digest = {
            use sha2::Digest as _;
            let objects = serde_json::json!([
                cluster_role,
                cluster_role_binding,
                token_role,
                service_account
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

/// One permission: `(apiGroup, resource, resourceName, verb)`.
pub type RuleTuple = (String, String, String, String);

/// The permissions in `rules` that concern what a site identity is about —
/// the fleet's API group and ServiceAccount tokens, or any wildcard that
/// would cover them — expanded to one tuple per group, resource, name and
/// verb (an empty name list is `""`, any name). Used to compare a token's
/// rules as the API server reports them (a SelfSubjectRulesReview) with
/// [`SiteIdentity::granted`]: a missing, extra or wider rule makes them differ.
pub fn site_rule_tuples(rules: &[PolicyRule]) -> BTreeSet<RuleTuple> {
    let mut out = BTreeSet::new();
    for r in rules {
        let names: Vec<String> = match r.resource_names.as_deref() {
            None | Some([]) => vec![String::new()],
            Some(names) => names.to_vec(),
        };
        for g in r.api_groups.iter().flatten() {
            for res in r.resources.iter().flatten() {
                let relevant =
                    g == GROUP || g == "*" || res == "*" || res.starts_with("serviceaccounts");
                if !relevant {
                    continue;
                }
                for n in &names {
                    for v in &r.verbs {
                        out.insert((g.clone(), res.clone(), n.clone(), v.clone()));
                    }
                }
            }
        }
    }
    out
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

/// API group of LLMKube (`Model`, `InferenceService`).
pub(crate) const LLMKUBE_GROUP: &str = "inference.llmkube.dev";
/// API group of KServe (`InferenceService`).
pub(crate) const KSERVE_GROUP: &str = "serving.kserve.io";

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

/// What reading a member cluster needs, the edge's collector and the Pull
/// prober alike (`k8s::member`): get/list on nodes, namespaces and pods
/// (status, capacity, signals), ReplicaSets (to resolve a pod's
/// Deployment), LLMKube models and inference services and KServe
/// inference services (inference counts), plus the discovery and version
/// endpoints. No write verbs, no Secrets, no watch. RBAC cannot narrow
/// `list pods` to pod status: whoever holds such a credential can read
/// every pod spec, environment variables included
/// (docs/pull-mode.md#what-the-stored-credential-can-read).
pub(crate) fn member_read_rules() -> Vec<PolicyRule> {
    let read = &["get", "list"];
    vec![
        PolicyRule {
            api_groups: Some(vec![String::new()]),
            resources: Some(vec!["nodes".into(), "namespaces".into(), "pods".into()]),
            resource_names: None,
            verbs: read.iter().map(|s| (*s).to_owned()).collect(),
            non_resource_urls: None,
        },
        rule("apps", "replicasets", &[], read),
        PolicyRule {
            api_groups: Some(vec![LLMKUBE_GROUP.to_owned()]),
            resources: Some(vec!["models".into(), "inferenceservices".into()]),
            resource_names: None,
            verbs: read.iter().map(|s| (*s).to_owned()).collect(),
            non_resource_urls: None,
        },
        rule(KSERVE_GROUP, "inferenceservices", &[], read),
        PolicyRule {
            api_groups: None,
            resources: None,
            resource_names: None,
            verbs: vec!["get".to_owned()],
            non_resource_urls: Some(
                ["/api", "/api/*", "/apis", "/apis/*", "/version"]
                    .iter()
                    .map(|s| (*s).to_owned())
                    .collect(),
            ),
        },
    ]
}

/// The ServiceAccount `fleet-system/fleet-member-reader`: the read-only
/// identity `register --pull` shared among every Pull site of a member
/// before each site got its own ([`PullIdentity`]). Sites registered then
/// keep using it until `register --pull` runs for them again; nothing
/// deletes it any more (another site, or another hub, may still use it).
pub fn member_reader_service_account() -> ServiceAccount {
    ServiceAccount {
        metadata: member_meta(Some(FLEET_NAMESPACE)),
        ..ServiceAccount::default()
    }
}

/// ClusterRole `fleet-member-reader` with [`member_read_rules`] (see
/// [`member_reader_service_account`]).
pub fn member_reader_cluster_role() -> ClusterRole {
    ClusterRole {
        metadata: member_meta(None),
        rules: Some(member_read_rules()),
        aggregation_rule: None,
    }
}

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

/// Label on every object of a [`PullIdentity`] naming the hub that created
/// it: the UID of the hub's `kube-system` namespace (a cluster's identity,
/// as kube-system cannot be deleted), so a second hub registering a site of
/// the same name against the same member is refused instead of taking over
/// or deleting the first hub's identity.
pub const HUB_LABEL: &str = "federation.kubectl-fleet.dev/hub";

/// `fleet-pull-SITE`: the name of every object of a site's Pull identity on
/// its member cluster (and of the hub Secret holding its kubeconfig).
pub fn pull_identity_name(site: &str) -> String {
    pull_secret_name(site)
}

/// The Kubernetes user name of a site's Pull identity, as it appears in a
/// token's `sub` claim: `system:serviceaccount:fleet-system:fleet-pull-SITE`.
pub fn pull_identity_user(site: &str) -> String {
    format!(
        "system:serviceaccount:{FLEET_NAMESPACE}:{}",
        pull_identity_name(site)
    )
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

/// Whose a live object named like a site's Pull identity is, by its labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PullIdentityOwner {
    /// This hub's identity for this site.
    ThisHub,
    /// Another hub's identity for a site of the same name (its hub label).
    OtherHub(String),
    /// Not made by `kubectl fleet register` for this site.
    Foreign,
}

/// Who owns a live Pull identity object of `site` with `labels`, seen from
/// the hub `hub_id`.
pub fn pull_identity_owner(
    labels: Option<&BTreeMap<String, String>>,
    site: &str,
    hub_id: &str,
) -> PullIdentityOwner {
    let label = |k: &str| labels.and_then(|l| l.get(k)).map(String::as_str);
    if label(MANAGED_BY_LABEL) != Some(MANAGED_BY) || label(SITE_LABEL) != Some(site) {
        return PullIdentityOwner::Foreign;
    }
    match label(HUB_LABEL) {
        Some(h) if h == hub_id => PullIdentityOwner::ThisHub,
        Some(h) => PullIdentityOwner::OtherHub(h.to_owned()),
        None => PullIdentityOwner::Foreign,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resources_rule(api_group: &str, resources: &[&str], verbs: &[&str]) -> PolicyRule {
        PolicyRule {
            resources: Some(resources.iter().map(|s| (*s).to_owned()).collect()),
            ..rule(api_group, "", &[], verbs)
        }
    }

    #[test]
    fn edge_secret_rules_name_exactly_one_secret() {
        assert_eq!(
            serde_json::to_value(edge_secret_rules("fleet-hub-kubeconfig")).unwrap(),
            json!([{
                "apiGroups": [""],
                "resources": ["secrets"],
                "resourceNames": ["fleet-hub-kubeconfig"],
                "verbs": ["get", "update"],
            }])
        );
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
            ])
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
    fn hub_rules_name_no_verb_its_code_does_not_use() {
        let g = GROUP;
        assert_eq!(
            serde_json::to_value(hub_operator_cluster_rules()).unwrap(),
            json!([
                { "apiGroups": [g], "resources": ["federatedclusters"], "verbs": ["get", "list", "watch"] },
                { "apiGroups": [g], "resources": ["federatedclusters/status"], "verbs": ["update", "patch"] },
                { "apiGroups": [g], "resources": ["federationstatuses"], "verbs": ["create"] },
                { "apiGroups": [g], "resources": ["federationstatuses"], "resourceNames": ["fleet"], "verbs": ["get"] },
                { "apiGroups": [g], "resources": ["federationstatuses/status"], "resourceNames": ["fleet"], "verbs": ["update", "patch"] },
                { "apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"] },
                { "apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"] },
            ])
        );
        // Events only in `default`, where it records them; kube's event
        // recorder: create, then patch a series.
        assert_eq!(EVENTS_NAMESPACE, "default");
        assert_eq!(
            serde_json::to_value(hub_events_rules()).unwrap(),
            json!([
                { "apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"] },
            ])
        );
        // Its Lease inside fleet-system (a Role), and no Secret there.
        assert_eq!(
            serde_json::to_value(hub_operator_namespace_rules()).unwrap(),
            json!([
                { "apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "list", "watch", "create", "update"] },
            ])
        );
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
    fn names() {
        assert_eq!(edge_identity_name("site-a"), "fleet-edge-site-a");
        assert_eq!(pull_secret_name("site-a"), "fleet-pull-site-a");
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
    fn valid_site_names() {
        for ok in ["a", "site-a", "us-east-1", "0", &"a".repeat(63)] {
            assert_eq!(validate_site_name(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn invalid_site_names_explain_and_suggest() {
        assert_eq!(validate_site_name(""), Err(InvalidSiteName::Empty));
        let err = validate_site_name("Site_A").unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"invalid site name "Site_A": character 'S' not allowed (use lowercase letters, digits and '-')"#
        );
        assert!(err.hint().contains(r#"try "site-a""#), "{}", err.hint());
        let err = validate_site_name("-a").unwrap_err();
        assert!(matches!(err, InvalidSiteName::BadEdge { .. }));
        assert!(err.hint().contains(r#"try "a""#));
        let long = "a".repeat(64);
        let err = validate_site_name(&long).unwrap_err();
        assert_eq!(
            err,
            InvalidSiteName::TooLong {
                name: long.clone(),
                len: 64
            }
        );
        assert!(err.hint().contains(&format!("try {:?}", "a".repeat(63))));
        assert!(validate_site_name("a.b").is_err());
        assert!(validate_site_name("a b").is_err());
        assert!(validate_site_name("ü").is_err());
        assert_eq!(
            validate_site_name("---").unwrap_err().hint(),
            "site names are DNS-1123 labels (e.g. site-a, us-east-1-prod)"
        );
    }

    #[test]
    fn site_object_labels_follow_the_spec() {
        let spec = crate::api::FederatedClusterSpec {
            region: Some("eu-west-1".into()),
            tier: crate::api::Tier::Critical,
            ..Default::default()
        };
        let l = site_object_labels("a", &spec);
        assert_eq!(l[TIER_LABEL], "critical");
        assert_eq!(l[ENVIRONMENT_LABEL], "production");
        assert_eq!(l[REGION_LABEL], "eu-west-1");
        assert_eq!(l[SITE_LABEL], "a");
        let odd = crate::api::FederatedClusterSpec {
            region: Some("eu west/1".into()),
            ..Default::default()
        };
        assert!(!site_object_labels("a", &odd).contains_key(REGION_LABEL));
    }
}
