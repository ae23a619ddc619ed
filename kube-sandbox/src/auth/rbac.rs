//! RBAC authorization with the real API server's semantics, over
//! Role/ClusterRole/RoleBinding/ClusterRoleBinding objects as JSON.
//!
//! STUB: interface fixed, implementation owned by the "sandbox auth" work.

use super::authn::UserInfo;
use serde_json::Value;

/// What one request asks to do (`authorizer.Attributes`).
#[derive(Debug, Clone, Default)]
pub struct Attributes {
    pub user: UserInfo,
    /// `get list watch create update patch delete deletecollection`, or
    /// `impersonate`, or the HTTP verb lower-cased for non-resource requests.
    pub verb: String,
    pub resource_request: bool,
    pub api_group: String,
    pub api_version: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
    /// Non-resource requests: the URL path.
    pub path: String,
    /// `Some(name)` when a list/watch selects exactly `metadata.name=name`.
    pub field_selector_name: Option<String>,
}

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

/// Decides a request: `system:masters` bypass, then every binding that names
/// the user (User / Group / ServiceAccount subjects) and its role's rules.
pub fn authorize(_rbac: &RbacSnapshot, _attrs: &Attributes) -> Decision {
    Decision::Allow
}

/// The 403 message the real server gives, e.g.
/// `federatedclusters.federation.kubectl-fleet.dev "site-b" is forbidden: User
/// "system:serviceaccount:fleet-system:fleet-edge-site-a" cannot patch
/// resource "federatedclusters/status" in API group
/// "federation.kubectl-fleet.dev" at the cluster scope`.
pub fn forbidden_message(attrs: &Attributes) -> String {
    format!(
        "forbidden: User \"{}\" cannot {}",
        attrs.user.username, attrs.verb
    )
}

/// The ClusterRoles and ClusterRoleBindings every real cluster bootstraps
/// (`system:discovery`, `system:basic-user`, `system:public-info-viewer`,
/// `cluster-admin`, ...), seeded into the store at start.
pub fn bootstrap_objects() -> Vec<Value> {
    Vec::new()
}
