//! [`ObjectRef`]: one object a command touched, named for summaries and
//! messages. A leaf the apply, identity and site modules share.

use kube::Resource;
use serde::Serialize;

/// One object touched by a command, for summaries (`-o json`) and messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    /// Kind, e.g. `ClusterRole`.
    pub kind: String,
    /// Object name.
    pub name: String,
    /// Namespace for namespaced kinds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

impl ObjectRef {
    pub(super) fn of<K: Resource<DynamicType = ()>>(name: &str, namespace: Option<&str>) -> Self {
        ObjectRef {
            kind: K::kind(&()).into_owned(),
            name: name.to_owned(),
            namespace: namespace.map(str::to_owned),
        }
    }
}

impl std::fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {}/{}", self.kind, ns, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}
