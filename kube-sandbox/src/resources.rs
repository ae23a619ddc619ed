//! The resource catalogue: every resource the sandbox serves (built-in
//! kinds and those derived from CustomResourceDefinitions), with what
//! discovery, storage and the handlers need to know about each.

use crate::schema::Schema;
use crate::table::{self, Column};
use base64::Engine;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// How a resource's object names are validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// RFC 1123 subdomain (most kinds, custom resources).
    Subdomain,
    /// RFC 1123 label (namespaces).
    Label,
    /// Any path segment (RBAC objects: `system:discovery`).
    PathSegment,
}

/// What happens to `status` given on create.
#[derive(Debug, Clone, PartialEq)]
pub enum StatusOnCreate {
    /// Kept as sent (nodes, kinds without a status subresource).
    Keep,
    /// Dropped (custom resources with a status subresource, workloads).
    Drop,
    /// Replaced by a fixed initial status (pods: Pending, namespaces: Active).
    Reset(Value),
}

/// One served resource in one group version.
#[derive(Debug, Clone)]
pub struct ResourceDef {
    pub group: String,
    pub version: String,
    /// Plural name, as in URLs.
    pub plural: String,
    pub singular: String,
    pub kind: String,
    pub list_kind: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub verbs: Vec<&'static str>,
    /// The version objects are stored in (the CRD's storage version; a
    /// built-in's own), for discovery's `storageVersionHash`.
    pub storage_version: String,
    pub has_status: bool,
    /// Subresources besides `status` (name, kind, verbs), e.g. `token` on serviceaccounts.
    pub extra_subresources: Vec<(String, String, Vec<&'static str>)>,
    pub name_rule: NameRule,
    pub status_on_create: StatusOnCreate,
    /// Whether a PUT without `metadata.resourceVersion` is accepted.
    pub allow_unconditional_update: bool,
    /// Review kinds: answered on create, never stored.
    pub create_only: bool,
    /// Custom resources: the compiled schema of this version.
    pub schema: Option<Arc<Schema>>,
    pub columns: Vec<Column>,
    pub crd: bool,
}

impl ResourceDef {
    /// `group/version` or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Discovery's `storageVersionHash`: the first 8 bytes of the SHA-256 of
    /// `group/storageVersion/kind`, base64 (`discovery.StorageVersionHash`).
    pub fn storage_version_hash(&self) -> String {
        use sha2::Digest;
        let gvk = format!("{}/{}/{}", self.group, self.storage_version, self.kind);
        let digest = sha2::Sha256::digest(gvk.as_bytes());
        base64::engine::general_purpose::STANDARD.encode(&digest[..8])
    }

    /// Storage key shared by all versions of one resource.
    pub fn storage_key(&self) -> GroupResource {
        GroupResource {
            group: self.group.clone(),
            resource: self.plural.clone(),
        }
    }
}

/// `(group, resource)`: the storage identity of a resource.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupResource {
    pub group: String,
    pub resource: String,
}

/// A custom resource's verbs, in the order the apiextensions-apiserver's
/// discovery lists them.
const CRD_VERBS: [&str; 8] = [
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];

const ALL_VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

struct Builtin {
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
    short: &'static [&'static str],
    categories: &'static [&'static str],
    status: bool,
}

const BUILTINS: &[Builtin] = &[
    Builtin {
        group: "",
        version: "v1",
        plural: "namespaces",
        kind: "Namespace",
        namespaced: false,
        short: &["ns"],
        categories: &[],
        status: true,
    },
    Builtin {
        group: "",
        version: "v1",
        plural: "nodes",
        kind: "Node",
        namespaced: false,
        short: &["no"],
        categories: &[],
        status: true,
    },
    Builtin {
        group: "",
        version: "v1",
        plural: "pods",
        kind: "Pod",
        namespaced: true,
        short: &["po"],
        categories: &["all"],
        status: true,
    },
    Builtin {
        group: "",
        version: "v1",
        plural: "secrets",
        kind: "Secret",
        namespaced: true,
        short: &[],
        categories: &[],
        status: false,
    },
    Builtin {
        group: "",
        version: "v1",
        plural: "services",
        kind: "Service",
        namespaced: true,
        short: &["svc"],
        categories: &["all"],
        status: true,
    },
    Builtin {
        group: "",
        version: "v1",
        plural: "configmaps",
        kind: "ConfigMap",
        namespaced: true,
        short: &["cm"],
        categories: &[],
        status: false,
    },
    Builtin {
        group: "",
        version: "v1",
        plural: "serviceaccounts",
        kind: "ServiceAccount",
        namespaced: true,
        short: &["sa"],
        categories: &[],
        status: false,
    },
    Builtin {
        group: "",
        version: "v1",
        plural: "events",
        kind: "Event",
        namespaced: true,
        short: &["ev"],
        categories: &[],
        status: false,
    },
    // kube-runtime's event Recorder writes events.k8s.io/v1 Events.
    Builtin {
        group: "events.k8s.io",
        version: "v1",
        plural: "events",
        kind: "Event",
        namespaced: true,
        short: &[],
        categories: &[],
        status: false,
    },
    Builtin {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        plural: "roles",
        kind: "Role",
        namespaced: true,
        short: &[],
        categories: &[],
        status: false,
    },
    Builtin {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        plural: "rolebindings",
        kind: "RoleBinding",
        namespaced: true,
        short: &[],
        categories: &[],
        status: false,
    },
    Builtin {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        plural: "clusterroles",
        kind: "ClusterRole",
        namespaced: false,
        short: &[],
        categories: &[],
        status: false,
    },
    Builtin {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        plural: "clusterrolebindings",
        kind: "ClusterRoleBinding",
        namespaced: false,
        short: &[],
        categories: &[],
        status: false,
    },
    Builtin {
        group: "apiextensions.k8s.io",
        version: "v1",
        plural: "customresourcedefinitions",
        kind: "CustomResourceDefinition",
        namespaced: false,
        short: &["crd", "crds"],
        categories: &["api-extensions"],
        status: true,
    },
    Builtin {
        group: "coordination.k8s.io",
        version: "v1",
        plural: "leases",
        kind: "Lease",
        namespaced: true,
        short: &[],
        categories: &[],
        status: false,
    },
    Builtin {
        group: "apps",
        version: "v1",
        plural: "deployments",
        kind: "Deployment",
        namespaced: true,
        short: &["deploy"],
        categories: &["all"],
        status: true,
    },
    Builtin {
        group: "apps",
        version: "v1",
        plural: "replicasets",
        kind: "ReplicaSet",
        namespaced: true,
        short: &["rs"],
        categories: &["all"],
        status: true,
    },
    Builtin {
        group: "apps",
        version: "v1",
        plural: "statefulsets",
        kind: "StatefulSet",
        namespaced: true,
        short: &["sts"],
        categories: &["all"],
        status: true,
    },
    Builtin {
        group: "apps",
        version: "v1",
        plural: "daemonsets",
        kind: "DaemonSet",
        namespaced: true,
        short: &["ds"],
        categories: &["all"],
        status: true,
    },
    // What `kubectl fleet install` ships around the operator's pods.
    Builtin {
        group: "networking.k8s.io",
        version: "v1",
        plural: "networkpolicies",
        kind: "NetworkPolicy",
        namespaced: true,
        short: &["netpol"],
        categories: &[],
        status: false,
    },
    Builtin {
        group: "admissionregistration.k8s.io",
        version: "v1",
        plural: "validatingadmissionpolicies",
        kind: "ValidatingAdmissionPolicy",
        namespaced: false,
        short: &[],
        categories: &["api-extensions"],
        status: true,
    },
    Builtin {
        group: "admissionregistration.k8s.io",
        version: "v1",
        plural: "validatingadmissionpolicybindings",
        kind: "ValidatingAdmissionPolicyBinding",
        namespaced: false,
        short: &[],
        categories: &["api-extensions"],
        status: false,
    },
    Builtin {
        group: "authentication.k8s.io",
        version: "v1",
        plural: "tokenreviews",
        kind: "TokenReview",
        namespaced: false,
        short: &[],
        categories: &[],
        status: false,
    },
    Builtin {
        group: "authentication.k8s.io",
        version: "v1",
        plural: "selfsubjectreviews",
        kind: "SelfSubjectReview",
        namespaced: false,
        short: &[],
        categories: &[],
        status: false,
    },
    Builtin {
        group: "authorization.k8s.io",
        version: "v1",
        plural: "subjectaccessreviews",
        kind: "SubjectAccessReview",
        namespaced: false,
        short: &[],
        categories: &[],
        status: false,
    },
    Builtin {
        group: "authorization.k8s.io",
        version: "v1",
        plural: "selfsubjectaccessreviews",
        kind: "SelfSubjectAccessReview",
        namespaced: false,
        short: &[],
        categories: &[],
        status: false,
    },
    Builtin {
        group: "authorization.k8s.io",
        version: "v1",
        plural: "selfsubjectrulesreviews",
        kind: "SelfSubjectRulesReview",
        namespaced: false,
        short: &[],
        categories: &[],
        status: false,
    },
    Builtin {
        group: "authorization.k8s.io",
        version: "v1",
        plural: "localsubjectaccessreviews",
        kind: "LocalSubjectAccessReview",
        namespaced: true,
        short: &[],
        categories: &[],
        status: false,
    },
];

fn builtin_def(b: &Builtin) -> ResourceDef {
    let create_only = matches!(b.group, "authentication.k8s.io" | "authorization.k8s.io");
    let name_rule = match (b.group, b.plural) {
        ("", "namespaces") => NameRule::Label,
        ("rbac.authorization.k8s.io", _) => NameRule::PathSegment,
        _ => NameRule::Subdomain,
    };
    let status_on_create = match (b.group, b.plural) {
        ("", "pods") => StatusOnCreate::Reset(serde_json::json!({"phase": "Pending"})),
        ("", "namespaces") => StatusOnCreate::Reset(serde_json::json!({"phase": "Active"})),
        ("", "nodes") => StatusOnCreate::Keep,
        _ if b.status => StatusOnCreate::Drop,
        _ => StatusOnCreate::Keep,
    };
    let mut extra = Vec::new();
    if b.plural == "serviceaccounts" {
        extra.push((
            "token".to_string(),
            "TokenRequest".to_string(),
            vec!["create"],
        ));
    }
    if matches!(b.plural, "deployments" | "replicasets" | "statefulsets") {
        extra.push((
            "scale".to_string(),
            "Scale".to_string(),
            vec!["get", "patch", "update"],
        ));
    }
    if b.plural == "namespaces" {
        extra.push((
            "finalize".to_string(),
            "Namespace".to_string(),
            vec!["update"],
        ));
    }
    ResourceDef {
        group: b.group.into(),
        version: b.version.into(),
        plural: b.plural.into(),
        singular: b.kind.to_lowercase(),
        kind: b.kind.into(),
        list_kind: format!("{}List", b.kind),
        namespaced: b.namespaced,
        short_names: b.short.iter().map(|s| s.to_string()).collect(),
        categories: b.categories.iter().map(|s| s.to_string()).collect(),
        verbs: if create_only {
            vec!["create"]
        } else {
            ALL_VERBS.to_vec()
        },
        storage_version: b.version.into(),
        has_status: b.status,
        extra_subresources: extra,
        name_rule,
        status_on_create,
        allow_unconditional_update: true,
        create_only,
        schema: None,
        columns: table::builtin_columns(b.group, b.plural).unwrap_or_else(table::default_columns),
        crd: false,
    }
}

/// The served resources, keyed by `(group, version, plural)`.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    defs: BTreeMap<(String, String, String), Arc<ResourceDef>>,
    /// Group order as discovery lists it (built-ins first, then CRD groups by creation).
    group_order: Vec<String>,
    /// Versions of each group in preference order.
    group_versions: BTreeMap<String, Vec<String>>,
}

impl Catalogue {
    /// The built-in resources.
    pub fn builtin() -> Self {
        let mut c = Catalogue::default();
        for b in BUILTINS {
            c.insert(Arc::new(builtin_def(b)));
        }
        c
    }

    /// The built-in resources but `apiextensions.k8s.io`: the catalogue of a
    /// sandbox whose CRDs a delegate serves (`crate::delegate`).
    pub fn builtin_without_crds() -> Self {
        let mut c = Catalogue::default();
        for b in BUILTINS
            .iter()
            .filter(|b| b.group != "apiextensions.k8s.io")
        {
            c.insert(Arc::new(builtin_def(b)));
        }
        c
    }

    /// Whether any version of `group` is served.
    pub fn serves_group(&self, group: &str) -> bool {
        self.group_versions.contains_key(group)
    }

    fn insert(&mut self, def: Arc<ResourceDef>) {
        if !self.group_order.contains(&def.group) {
            self.group_order.push(def.group.clone());
        }
        let versions = self.group_versions.entry(def.group.clone()).or_default();
        if !versions.contains(&def.version) {
            versions.push(def.version.clone());
        }
        self.defs.insert(
            (def.group.clone(), def.version.clone(), def.plural.clone()),
            def,
        );
    }

    /// The resource served at `group/version/plural`.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<&Arc<ResourceDef>> {
        self.defs
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
    }

    /// Any served version of a resource (for storage-level work).
    pub fn any_version(&self, gr: &GroupResource) -> Option<&Arc<ResourceDef>> {
        let versions = self.group_versions.get(&gr.group)?;
        versions
            .iter()
            .find_map(|v| self.get(&gr.group, v, &gr.resource))
    }

    /// Whether a group version is served at all.
    pub fn has_group_version(&self, group: &str, version: &str) -> bool {
        self.group_versions
            .get(group)
            .is_some_and(|v| v.iter().any(|x| x == version))
    }

    /// Resources of one group version, in name order.
    pub fn resources_in(&self, group: &str, version: &str) -> Vec<Arc<ResourceDef>> {
        self.defs
            .range((group.to_string(), version.to_string(), String::new())..)
            .take_while(|((g, v, _), _)| g == group && v == version)
            .map(|(_, d)| d.clone())
            .collect()
    }

    /// Named groups (not the core group) with their versions, preferred first.
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        self.group_order
            .iter()
            .filter(|g| !g.is_empty())
            .filter_map(|g| {
                let v = self.group_versions.get(g)?;
                (!v.is_empty()).then(|| (g.clone(), v.clone()))
            })
            .collect()
    }

    /// Replaces every resource derived from the CRD `crd` (by its group and
    /// plural) with the versions it now serves.
    pub fn set_crd(&mut self, crd: &Value) -> Result<(), Vec<crate::errors::Cause>> {
        let defs = crd_defs(crd)?;
        let group = crd["spec"]["group"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let plural = crd["spec"]["names"]["plural"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.remove_crd(&group, &plural);
        for d in defs {
            self.insert(Arc::new(d));
        }
        // Newest CRD versions must be preferred the way the real server
        // orders them (kube-aware version priority), so re-sort the group.
        if let Some(versions) = self.group_versions.get_mut(&group) {
            versions.sort_by_key(|a| version_priority(a));
        }
        Ok(())
    }

    /// Removes the resources of the CRD with `group` and `plural`.
    pub fn remove_crd(&mut self, group: &str, plural: &str) {
        self.defs
            .retain(|(g, _, p), d| !(d.crd && g == group && p == plural));
        let still: Vec<String> = self
            .defs
            .keys()
            .filter(|(g, _, _)| g == group)
            .map(|(_, v, _)| v.clone())
            .collect();
        if let Some(versions) = self.group_versions.get_mut(group) {
            versions.retain(|v| still.contains(v));
            if versions.is_empty() {
                self.group_versions.remove(group);
                self.group_order.retain(|g| g != group);
            }
        }
    }
}

/// Kubernetes version priority: GA > beta > alpha, higher numbers first;
/// the returned key sorts ascending in preference order.
pub fn version_priority(v: &str) -> (u8, std::cmp::Reverse<u64>, std::cmp::Reverse<u64>, String) {
    let parse = |s: &str| -> Option<(u64, u8, u64)> {
        let rest = s.strip_prefix('v')?;
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        let major: u64 = digits.parse().ok()?;
        let tail = &rest[digits.len()..];
        if tail.is_empty() {
            return Some((major, 0, 0));
        }
        let (kind, num) = if let Some(n) = tail.strip_prefix("beta") {
            (1, n)
        } else if let Some(n) = tail.strip_prefix("alpha") {
            (2, n)
        } else {
            return None;
        };
        let minor: u64 = if num.is_empty() { 0 } else { num.parse().ok()? };
        Some((major, kind, minor))
    };
    match parse(v) {
        Some((major, kind, minor)) => (
            kind,
            std::cmp::Reverse(major),
            std::cmp::Reverse(minor),
            String::new(),
        ),
        None => (3, std::cmp::Reverse(0), std::cmp::Reverse(0), v.to_string()),
    }
}

/// The served versions of a CRD as resource definitions.
fn crd_defs(crd: &Value) -> Result<Vec<ResourceDef>, Vec<crate::errors::Cause>> {
    let spec = &crd["spec"];
    let names = &spec["names"];
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let strs = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let kind = s(&names["kind"]);
    let list_kind = names["listKind"]
        .as_str()
        .map(String::from)
        .unwrap_or_else(|| format!("{kind}List"));
    let singular = names["singular"]
        .as_str()
        .map(String::from)
        .unwrap_or_else(|| kind.to_lowercase());
    let storage_version = spec["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["storage"] == Value::Bool(true))
        .map(|v| s(&v["name"]))
        .unwrap_or_default();
    let mut out = Vec::new();
    for v in spec["versions"].as_array().into_iter().flatten() {
        if v["served"] != Value::Bool(true) {
            continue;
        }
        let schema = match v["schema"].get("openAPIV3Schema") {
            Some(raw) => Some(Arc::new(Schema::new(raw)?)),
            None => None,
        };
        let has_status = v["subresources"].get("status").is_some();
        out.push(ResourceDef {
            group: s(&spec["group"]),
            version: s(&v["name"]),
            plural: s(&names["plural"]),
            singular: singular.clone(),
            kind: kind.clone(),
            list_kind: list_kind.clone(),
            namespaced: spec["scope"] == "Namespaced",
            short_names: strs(&names["shortNames"]),
            categories: strs(&names["categories"]),
            verbs: CRD_VERBS.to_vec(),
            storage_version: storage_version.clone(),
            has_status,
            extra_subresources: Vec::new(),
            name_rule: NameRule::Subdomain,
            status_on_create: if has_status {
                StatusOnCreate::Drop
            } else {
                StatusOnCreate::Keep
            },
            allow_unconditional_update: false,
            create_only: false,
            schema,
            columns: table::columns_for_crd_version(v),
            crd: true,
        });
    }
    Ok(out)
}

/// `(group, resource)` of namespaces.
pub fn namespaces_gr() -> GroupResource {
    GroupResource {
        group: String::new(),
        resource: "namespaces".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_like_kubernetes() {
        let mut v = vec!["v1alpha1", "v2", "v1beta2", "v1", "v1beta1", "foo"];
        v.sort_by_key(|a| version_priority(a));
        assert_eq!(v, ["v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "foo"]);
    }

    #[test]
    fn crd_versions_become_resources() {
        let crd = serde_json::json!({
            "spec": {"group": "g.dev", "scope": "Cluster",
                "names": {"plural": "things", "kind": "Thing", "shortNames": ["th"]},
                "versions": [
                    {"name": "v1", "served": true, "storage": true,
                     "subresources": {"status": {}},
                     "schema": {"openAPIV3Schema": {"type": "object"}}},
                    {"name": "v0", "served": false, "storage": false}
                ]}
        });
        let mut c = Catalogue::builtin();
        c.set_crd(&crd).unwrap();
        let d = c.get("g.dev", "v1", "things").unwrap();
        assert!(d.has_status && !d.namespaced && d.crd);
        assert_eq!(d.list_kind, "ThingList");
        assert!(c.get("g.dev", "v0", "things").is_none());
        c.remove_crd("g.dev", "things");
        assert!(!c.has_group_version("g.dev", "v1"));
        assert!(c.groups().iter().all(|(g, _)| g != "g.dev"));
    }
}
