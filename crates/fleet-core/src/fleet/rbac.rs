//! The per-site least-privilege identity (docs/architecture.md#the-life-of-a-site):
//! site-name validation, the names and labels of its objects, and the RBAC
//! rules of the site, the hub and a Pull member's reader. The objects that
//! carry them are `manifests::rbac`'s. Tests pin the rules exactly, because
//! the site identity is the security boundary between sites.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::rbac::v1::PolicyRule;

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
/// its sites (now each site has its own: `manifests::rbac::PullIdentity`).
pub const MEMBER_READER_NAME: &str = "fleet-member-reader";
/// Label put on every object created for a site, valued with the site name,
/// so `unregister` and audits can find them.
pub const SITE_LABEL: &str = "federation.kubectl-fleet.dev/site";
/// The plural of a site's heartbeat object (`api::lease`), as RBAC and
/// admission rules name it.
pub const SITE_LEASE_RESOURCE: &str = "federatedclusterleases";
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
/// ones (`manifests::admission::site_token_policy`), and the edge asks for no
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
/// tier and (when it is a valid label value) region from its spec, and
/// its bucket ([`crate::fleet::bucket::BUCKET_LABEL`], from its name).
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
    labels.insert(
        crate::fleet::bucket::BUCKET_LABEL.to_owned(),
        crate::fleet::bucket::bucket_label_value(site),
    );
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

pub(crate) fn rule(api_group: &str, resource: &str, names: &[&str], verbs: &[&str]) -> PolicyRule {
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
///   (`k8s::site_status::watch_sites`) and the GET of a site
///   while that watch is down (`get_site`); patch: the bucket label of a
///   site that lacks it or carries a wrong one (`k8s::site_status::
///   patch_site_bucket`, `operator::bucket`). The hub never writes a spec:
///   the admission policy `manifests::admission::site_bucket_policy` lets
///   this identity change nothing of the main resource but that label.
/// - `federatedclusters/status` update, patch: the hub's guarded replace
///   (`replace_site_status`) and the Pull prober's merge patch
///   (`patch_site_status`).
/// - `federationstatuses` get and, for the singleton `fleet` only, its
///   `/status` update (the summary's guarded replace) and patch (the
///   leader's liveness record, `status.hub` alone); create (which RBAC
///   cannot limit by name) makes it.
/// - `federatedclusterleases` list, watch: the sites' heartbeats
///   (`k8s::site_lease::watch_site_leases`, which keeps only each lease's
///   renewal). The hub never writes a lease: each is its site's edge's.
/// - `tokenreviews`, `subjectaccessreviews` create: authenticating the
///   callers of the REST API and `/metrics`.
///
/// Its Events and its Lease are granted in their namespaces only
/// ([`hub_events_rules`], [`hub_operator_namespace_rules`]), and each Pull
/// site's Secret by name (`manifests::rbac::pull_secret_grant`): nothing here reaches a
/// Secret.
pub fn hub_operator_cluster_rules() -> Vec<PolicyRule> {
    let g = crate::api::GROUP;
    let fleet = crate::api::FEDERATION_STATUS_NAME;
    vec![
        rule(
            g,
            "federatedclusters",
            &[],
            &["get", "list", "watch", "patch"],
        ),
        rule(g, "federatedclusters/status", &[], &["update", "patch"]),
        rule(g, SITE_LEASE_RESOURCE, &[], &["list", "watch"]),
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
/// by name when `register` stores it (`manifests::rbac::pull_secret_grant`).
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

/// The rules of the edge's Role on its MEMBER cluster that let it persist a
/// renewed token: get and update on exactly the Secret `name` holding its
/// hub kubeconfig (the Role lives in that Secret's namespace). No create,
/// list or watch: the edge can neither read nor add any other Secret.
pub fn edge_secret_rules(name: &str) -> Vec<PolicyRule> {
    vec![rule("", "secrets", &[name], &["get", "update"])]
}

/// The ConfigMap on an edge's MEMBER cluster (in [`FLEET_NAMESPACE`])
/// holding its dark-period journal (`fleet::journal`).
pub const EDGE_JOURNAL_NAME: &str = "fleet-edge-journal";

/// The rules of the edge's Role on its MEMBER cluster that let it keep its
/// dark-period journal: get and update on exactly the ConfigMap `name`.
/// No create (`kubectl fleet install --role edge` creates it empty; RBAC
/// cannot limit create to one name, so granting it would let the edge
/// create any ConfigMap in the namespace), no list or watch, no delete.
pub fn edge_journal_rules(name: &str) -> Vec<PolicyRule> {
    vec![rule("", "configmaps", &[name], &["get", "update"])]
}

/// One permission: `(apiGroup, resource, resourceName, verb)`.
pub type RuleTuple = (String, String, String, String);

/// The permissions in `rules` that concern what a site identity is about —
/// the fleet's API group and ServiceAccount tokens, or any wildcard that
/// would cover them — expanded to one tuple per group, resource, name and
/// verb (an empty name list is `""`, any name). Used to compare a token's
/// rules as the API server reports them (a SelfSubjectRulesReview) with
/// `manifests::rbac::SiteIdentity::granted`: a missing, extra or wider rule makes them differ.
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

/// API group of LLMKube (`Model`, `InferenceService`).
pub(crate) const LLMKUBE_GROUP: &str = "inference.llmkube.dev";
/// API group of KServe (`InferenceService`).
pub(crate) const KSERVE_GROUP: &str = "serving.kserve.io";

/// What reading a member cluster needs, the edge's collector and the Pull
/// prober alike (`k8s::member`): get/list on nodes, namespaces and pods
/// (status, capacity, signals), ReplicaSets (to resolve a pod's
/// Deployment), LLMKube models and inference services and KServe
/// inference services (inference counts), plus the discovery and version
/// endpoints. No write verbs, no Secrets, no watch. RBAC cannot narrow
/// `list pods` to pod status: whoever holds such a credential can read
/// every pod spec, environment variables included
/// (docs/pull-mode.md#what-the-stored-credential-can-read).
pub fn member_read_rules() -> Vec<PolicyRule> {
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

/// Label on every object of a `manifests::rbac::PullIdentity` naming the hub that created
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

    #[test]
    fn edge_journal_rules_name_exactly_one_configmap_and_never_create() {
        assert_eq!(
            serde_json::to_value(edge_journal_rules(EDGE_JOURNAL_NAME)).unwrap(),
            serde_json::json!([{
                "apiGroups": [""],
                "resources": ["configmaps"],
                "resourceNames": ["fleet-edge-journal"],
                "verbs": ["get", "update"]
            }])
        );
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
    fn hub_rules_name_no_verb_its_code_does_not_use() {
        let g = GROUP;
        assert_eq!(
            serde_json::to_value(hub_operator_cluster_rules()).unwrap(),
            json!([
                { "apiGroups": [g], "resources": ["federatedclusters"], "verbs": ["get", "list", "watch", "patch"] },
                { "apiGroups": [g], "resources": ["federatedclusters/status"], "verbs": ["update", "patch"] },
                { "apiGroups": [g], "resources": ["federatedclusterleases"], "verbs": ["list", "watch"] },
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
    }

    #[test]
    fn names() {
        assert_eq!(edge_identity_name("site-a"), "fleet-edge-site-a");
        assert_eq!(pull_secret_name("site-a"), "fleet-pull-site-a");
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
        // The bucket comes from the name alone (fleet::bucket's golden
        // values), whatever the spec.
        assert_eq!(l[crate::fleet::bucket::BUCKET_LABEL], "202");
        let odd = crate::api::FederatedClusterSpec {
            region: Some("eu west/1".into()),
            ..Default::default()
        };
        assert!(!site_object_labels("a", &odd).contains_key(REGION_LABEL));
    }
}
