//! Label and field selectors for list and watch (`?labelSelector=`, `?fieldSelector=`).
//!
//! STUB: interface fixed, implementation owned by the "sandbox pure modules" work.

use serde_json::Value;

/// A parsed `labelSelector` query (`=`, `==`, `!=`, `in`, `notin`, exists, `!`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector {}

impl LabelSelector {
    /// Parses the query string form; the error is the message for a 400 BadRequest.
    pub fn parse(_s: &str) -> Result<Self, String> {
        Ok(LabelSelector {})
    }

    /// Whether an object's `metadata.labels` (absent = empty) satisfy every requirement.
    pub fn matches(&self, _labels: Option<&serde_json::Map<String, Value>>) -> bool {
        true
    }
}

/// A parsed `fieldSelector` query (`metadata.name`, `metadata.namespace`; `=`, `==`, `!=`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector {}

impl FieldSelector {
    /// Parses the query string form; unsupported field labels are an error
    /// (`field label not supported: spec.x`) for a 400 BadRequest.
    pub fn parse(_s: &str) -> Result<Self, String> {
        Ok(FieldSelector {})
    }

    /// Whether a whole object satisfies every requirement.
    pub fn matches(&self, _obj: &Value) -> bool {
        true
    }

    /// `Some(name)` when the selector is exactly `metadata.name=NAME` (RBAC
    /// lets resourceNames grant list/watch only to such requests).
    pub fn exact_name(&self) -> Option<&str> {
        None
    }
}
