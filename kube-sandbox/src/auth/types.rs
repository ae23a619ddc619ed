//! Who is asking and what they ask to do: the two types authentication
//! produces and authorization consumes, in a leaf module so that `authn`,
//! `rbac` and `reviews` import them from here rather than from each other.

use std::collections::BTreeMap;

/// The authenticated user, as `user.Info` in the real server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserInfo {
    pub username: String,
    pub uid: String,
    /// Always includes `system:authenticated` for authenticated users.
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

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

impl Attributes {
    /// The name authorization sees: the object name, or for a list/watch
    /// the name its `metadata.name=NAME` field selector pins (the real
    /// request-info resolver sets the request's name from it).
    pub fn effective_name(&self) -> &str {
        if self.name.is_empty() && (self.verb == "list" || self.verb == "watch") {
            self.field_selector_name.as_deref().unwrap_or_default()
        } else {
            &self.name
        }
    }
}
