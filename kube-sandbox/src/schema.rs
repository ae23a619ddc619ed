//! CRD structural schemas: validation of CRDs themselves, and of custom
//! objects against `openAPIV3Schema` (types, enums, required, ranges,
//! maxItems, patterns, CEL `x-kubernetes-validations`), defaulting and pruning.
//!
//! STUB: interface fixed, implementation owned by the "sandbox pure modules" work.

use crate::errors::Cause;
use serde_json::Value;

/// The compiled schema of one served CRD version.
#[derive(Debug, Clone)]
pub struct Schema {
    root: Value,
}

impl Schema {
    /// Compiles `spec.versions[].schema.openAPIV3Schema`; errors are causes
    /// for a 422 on the CRD itself (non-structural schema, bad CEL rule, ...).
    pub fn new(open_api_v3: &Value) -> Result<Self, Vec<Cause>> {
        Ok(Schema {
            root: open_api_v3.clone(),
        })
    }

    /// The schema as given.
    pub fn raw(&self) -> &Value {
        &self.root
    }

    /// Drops fields the schema does not know (unless
    /// `x-kubernetes-preserve-unknown-fields`); `apiVersion`, `kind` and
    /// `metadata` at the root are always kept.
    pub fn prune(&self, _obj: &mut Value) {}

    /// Applies `default`s, as the real server does after pruning.
    pub fn apply_defaults(&self, _obj: &mut Value) {}

    /// Validates a (pruned, defaulted) object; `old` is the stored object for
    /// updates (CEL transition rules use it). Empty = valid.
    pub fn validate(&self, _obj: &Value, _old: Option<&Value>) -> Vec<Cause> {
        Vec::new()
    }
}

/// Validates a CustomResourceDefinition object itself (names, scope,
/// versions, exactly one storage version, schemas). Empty = valid.
pub fn validate_crd(_crd: &Value) -> Vec<Cause> {
    Vec::new()
}
