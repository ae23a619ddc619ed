//! CRD structural schemas: validation of CRDs themselves, and of custom
//! objects against `openAPIV3Schema` (types, enums, required, ranges,
//! maxItems, patterns, CEL `x-kubernetes-validations`), defaulting and pruning.
//!
//! The order of checks and the wording of every cause follow the real
//! server: kube-openapi's schema validator (type, string, format, number,
//! array, enum, object; `spec.x in body should ...` details) converted to
//! field errors as `apiextensions-apiserver` does, then the
//! `x-kubernetes-list-type` checks, then the CEL rules, which are skipped
//! (with the real "some validation rules were not checked" cause) when a
//! blocking error was found. Properties are visited in name order (the real
//! server visits them in Go map order, i.e. randomly).
//!
//! Known differences: embedded resources (`x-kubernetes-embedded-resource`)
//! are not checked for a valid `metadata`; only the structural-schema rules
//! listed on [`Schema::new`] are enforced on CRDs; CEL rule costs are not
//! estimated, so no rule is rejected for being too expensive.

//!
//! - [`structural`]: the structural-schema rules a CRD's schema must meet.
//! - [`mod@prune`]: pruning of unknown fields and defaulting.
//! - [`validation`]: OpenAPI validation of objects and list-type uniqueness.
//! - [`crd`]: validation of the CRD object itself (names, versions, columns).
//! - [`cel`]: the CEL interpreter for `x-kubernetes-validations` (and the
//!   ValidatingAdmissionPolicies of `crate::admission`).

pub(crate) mod cel;
mod crd;
mod prune;
mod structural;
mod validation;

pub use crd::validate_crd;
use prune::*;
use structural::*;
use validation::*;
pub use validation::{go_decode_numbers, go_encode_numbers};

use crate::errors::Cause;
use crate::selector::quote;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The compiled schema of one served CRD version.
#[derive(Debug, Clone)]
pub struct Schema {
    root: Value,
    /// Compiled `x-kubernetes-validations` programs by rule source.
    programs: Arc<BTreeMap<String, cel::Program>>,
}

impl Schema {
    /// Compiles `spec.versions[].schema.openAPIV3Schema`; errors are causes
    /// for a 422 on the CRD itself (non-structural schema, bad CEL rule, ...).
    ///
    /// Cause fields are relative to the schema (`openAPIV3Schema.properties[spec].type`);
    /// [`validate_crd`] prefixes them with `spec.versions[i].schema.`.
    /// Enforced: every node has a `type` (unless int-or-string or preserving
    /// unknown fields), the root is an object, `uniqueItems` is not true,
    /// `x-kubernetes-list-type: map` names its keys, CEL rules compile, and
    /// every `default` has no unknown fields and passes the schema and rules
    /// of its node (the real server's default validation; metadata inside
    /// embedded resources is not checked).
    pub fn new(open_api_v3: &Value) -> Result<Self, Vec<Cause>> {
        let mut causes = Vec::new();
        let mut programs = BTreeMap::new();
        check_structural(
            open_api_v3,
            "openAPIV3Schema",
            true,
            &mut causes,
            &mut programs,
        );
        if !causes.is_empty() {
            return Err(causes);
        }
        check_defaults(open_api_v3, "openAPIV3Schema", &programs, &mut causes);
        if causes.is_empty() {
            Ok(Schema {
                root: open_api_v3.clone(),
                programs: Arc::new(programs),
            })
        } else {
            Err(causes)
        }
    }

    /// The schema as given.
    pub fn raw(&self) -> &Value {
        &self.root
    }

    /// Drops fields the schema does not know (unless
    /// `x-kubernetes-preserve-unknown-fields`); `apiVersion`, `kind` and
    /// `metadata` at the root (and in embedded resources) are always kept,
    /// `metadata` with only the fields of `ObjectMeta`.
    pub fn prune(&self, obj: &mut Value) {
        prune(obj, Some(&self.root), true);
    }

    /// Applies `default`s, as the real server does after pruning: a missing
    /// property (or a `null` one that is not nullable) with a default gets
    /// it, then defaulting descends into it, so absent parents are never
    /// created; `null`s of non-nullable properties without a default are
    /// dropped.
    pub fn apply_defaults(&self, obj: &mut Value) {
        default(obj, &self.root);
        prune_nulls(obj, &self.root);
    }

    /// Validates a (pruned, defaulted) object; `old` is the stored object for
    /// updates (CEL transition rules use it). Empty = valid.
    pub fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
        let mut errs = Vec::new();
        validate_value(&self.root, obj, old, "", &mut errs);
        // As the real server, list-type errors on update count only when
        // the stored object had none.
        let mut old_list_errs = Vec::new();
        if let Some(o) = old {
            list_types(&self.root, o, &FieldPath::root(), &mut old_list_errs);
        }
        if old_list_errs.is_empty() {
            list_types(&self.root, obj, &FieldPath::root(), &mut errs);
        }
        let blocking = errs.iter().any(|c| {
            matches!(
                c.reason.as_str(),
                "FieldValueNotSupported"
                    | "FieldValueRequired"
                    | "FieldValueTooLong"
                    | "FieldValueTooMany"
                    | "FieldValueTypeInvalid"
            )
        });
        if has_rules(&self.root) {
            if blocking {
                errs.push(Cause::new(
                    "FieldValueInvalid",
                    "<nil>",
                    "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
                ));
            } else {
                let mut ctx = cel::RuleContext {
                    programs: &self.programs,
                    errs: &mut errs,
                };
                ctx.validate(&self.root, obj, old, &FieldPath::root(), true);
            }
        }
        errs
    }
}

fn has_rules(s: &Value) -> bool {
    if s.get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty())
    {
        return true;
    }
    s.get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.values().any(has_rules))
        || s.get("items").is_some_and(has_rules)
        || s.get("additionalProperties")
            .is_some_and(|a| a.is_object() && has_rules(a))
}

// ---------------------------------------------------------------------------
// Paths and Go-style value rendering

/// A `field.Path` as apimachinery prints it; `None` is the nil root path
/// (printed `<nil>`), which the real server uses for rules on the root.
#[derive(Debug, Clone)]
pub(crate) struct FieldPath(Option<String>);

impl FieldPath {
    pub(crate) fn root() -> Self {
        FieldPath(None)
    }
    pub(crate) fn child(&self, name: &str) -> Self {
        FieldPath(Some(match &self.0 {
            None => name.to_string(),
            Some(p) => format!("{p}.{name}"),
        }))
    }
    pub(crate) fn index(&self, i: usize) -> Self {
        FieldPath(Some(format!(
            "{}[{i}]",
            self.0.as_deref().unwrap_or_default()
        )))
    }
    pub(crate) fn key(&self, k: &str) -> Self {
        FieldPath(Some(format!(
            "{}[{k}]",
            self.0.as_deref().unwrap_or_default()
        )))
    }
    pub(crate) fn render(&self) -> String {
        self.0.clone().unwrap_or_else(|| "<nil>".to_string())
    }
}

/// Go's `%v` of a float64 (shortest digits, exponent form outside 1e-4..1e6).
pub(crate) fn go_float(f: f64) -> String {
    if f == 0.0 {
        return "0".to_string();
    }
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".into()
        } else if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    let e = format!("{f:e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}

/// A JSON number rendered as Go prints the decoded int64 or float64.
pub(crate) fn go_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        go_float(n.as_f64().unwrap_or_default())
    }
}

/// A field error's bad value as `field.Error.ErrorBody` renders it.
pub(crate) fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => quote(s),
        Value::Number(n) => go_number(n),
        Value::Bool(b) => b.to_string(),
        other => other.to_string(),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::String(_) => "string",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn prop<'a>(s: &'a Value, k: &str) -> Option<&'a Value> {
    s.get("properties").and_then(|p| p.get(k))
}

fn additional(s: &Value) -> Option<&Value> {
    s.get("additionalProperties").filter(|a| a.is_object())
}

fn flag(s: &Value, k: &str) -> bool {
    s.get(k).and_then(Value::as_bool).unwrap_or(false)
}

#[cfg(test)]
mod tests;
