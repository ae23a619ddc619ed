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

mod cel;

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

// ---------------------------------------------------------------------------
// Structural checks of the schema itself

fn check_structural(
    s: &Value,
    path: &str,
    root: bool,
    causes: &mut Vec<Cause>,
    programs: &mut BTreeMap<String, cel::Program>,
) {
    let Some(obj) = s.as_object() else {
        causes.push(Cause::new(
            "FieldValueInvalid",
            path,
            format!("Invalid value: {}: must be a schema object", go_value(s)),
        ));
        return;
    };
    let ty = obj.get("type").and_then(Value::as_str).unwrap_or_default();
    let int_or_string = flag(s, "x-kubernetes-int-or-string");
    let preserve = flag(s, "x-kubernetes-preserve-unknown-fields");
    if ty.is_empty() && !int_or_string && !preserve {
        causes.push(Cause::new(
            "FieldValueRequired",
            format!("{path}.type"),
            "Required value: must not be empty for specified object fields",
        ));
    }
    if root && !ty.is_empty() && ty != "object" {
        causes.push(Cause::new(
            "FieldValueInvalid",
            format!("{path}.type"),
            format!("Invalid value: {}: must be object at the root", quote(ty)),
        ));
    }
    if flag(s, "uniqueItems") {
        causes.push(Cause::new(
            "FieldValueForbidden",
            format!("{path}.uniqueItems"),
            "Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    if obj.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map")
        && obj
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .is_none_or(|k| k.is_empty())
    {
        causes.push(Cause::new(
            "FieldValueRequired",
            format!("{path}.x-kubernetes-list-map-keys"),
            "Required value: must not be empty if x-kubernetes-list-type is map",
        ));
    }
    if let Some(rules) = obj
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
    {
        for (i, r) in rules.iter().enumerate() {
            let rule_path = format!("{path}.x-kubernetes-validations[{i}]");
            let src = r.get("rule").and_then(Value::as_str).unwrap_or_default();
            if src.trim().is_empty() {
                causes.push(Cause::new(
                    "FieldValueRequired",
                    format!("{rule_path}.rule"),
                    "Required value",
                ));
                continue;
            }
            match cel::compile(src) {
                Ok(p) => {
                    programs.insert(src.to_string(), p);
                }
                Err(e) => causes.push(Cause::new(
                    "FieldValueInvalid",
                    format!("{rule_path}.rule"),
                    format!("Invalid value: {}: compilation failed: {e}", quote(src)),
                )),
            }
            if let Some(m) = r.get("messageExpression").and_then(Value::as_str) {
                match cel::compile(m) {
                    Ok(p) => {
                        programs.insert(m.to_string(), p);
                    }
                    Err(e) => causes.push(Cause::new(
                        "FieldValueInvalid",
                        format!("{rule_path}.messageExpression"),
                        format!(
                            "Invalid value: {}: messageExpression compilation failed: {e}",
                            quote(m)
                        ),
                    )),
                }
            }
            if let Some(reason) = r.get("reason").and_then(Value::as_str) {
                let ok = [
                    "FieldValueRequired",
                    "FieldValueForbidden",
                    "FieldValueInvalid",
                    "FieldValueDuplicate",
                ];
                if !ok.contains(&reason) {
                    causes.push(Cause::new(
                        "FieldValueNotSupported",
                        format!("{rule_path}.reason"),
                        format!(
                            "Unsupported value: {}: supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\"",
                            quote(reason)
                        ),
                    ));
                }
            }
        }
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            check_structural(
                v,
                &format!("{path}.properties[{k}]"),
                false,
                causes,
                programs,
            );
        }
    }
    if let Some(items) = obj.get("items") {
        check_structural(items, &format!("{path}.items"), false, causes, programs);
    }
    if let Some(a) = additional(s) {
        check_structural(
            a,
            &format!("{path}.additionalProperties"),
            false,
            causes,
            programs,
        );
    }
}

/// Validates each `default` against its own node, as the real server does
/// on CRD writes; causes sit at `<node>.default` (plus the field inside it).
fn check_defaults(
    s: &Value,
    path: &str,
    programs: &BTreeMap<String, cel::Program>,
    causes: &mut Vec<Cause>,
) {
    if let Some(d) = s.get("default") {
        let at = format!("{path}.default");
        let mut pruned = d.clone();
        prune(
            &mut pruned,
            Some(s),
            flag(s, "x-kubernetes-embedded-resource"),
        );
        if pruned != *d {
            causes.push(Cause::new(
                "FieldValueInvalid",
                at.clone(),
                format!(
                    "Invalid value: {}: must not have unknown fields",
                    go_value(d)
                ),
            ));
        } else {
            let mut errs = Vec::new();
            validate_value(s, d, None, "", &mut errs);
            if errs.is_empty() && has_rules(s) {
                let mut ctx = cel::RuleContext {
                    programs,
                    errs: &mut errs,
                };
                ctx.validate(s, d, None, &FieldPath(Some(at.clone())), false);
                causes.append(&mut errs);
            } else {
                causes.extend(errs.into_iter().map(|c| Cause {
                    field: if c.field.is_empty() {
                        at.clone()
                    } else {
                        format!("{at}.{}", c.field)
                    },
                    ..c
                }));
            }
        }
    }
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            check_defaults(v, &format!("{path}.properties[{k}]"), programs, causes);
        }
    }
    if let Some(items) = s.get("items").filter(|i| i.is_object()) {
        check_defaults(items, &format!("{path}.items"), programs, causes);
    }
    if let Some(a) = additional(s) {
        check_defaults(a, &format!("{path}.additionalProperties"), programs, causes);
    }
}

// ---------------------------------------------------------------------------
// Pruning

fn prune(x: &mut Value, s: Option<&Value>, resource_root: bool) {
    let embedded = resource_root || s.is_some_and(|s| flag(s, "x-kubernetes-embedded-resource"));
    if let Some(s) = s
        && flag(s, "x-kubernetes-preserve-unknown-fields")
    {
        skip_prune(x, s, embedded);
        return;
    }
    match x {
        Value::Object(m) => {
            let Some(s) = s else {
                m.clear();
                return;
            };
            m.retain(|k, v| {
                if embedded && keep_meta_field(k, v) {
                    return true;
                }
                if let Some(p) = prop(s, k) {
                    prune(v, Some(p), false);
                    true
                } else if let Some(a) = additional(s) {
                    prune(v, Some(a), false);
                    true
                } else {
                    false
                }
            });
        }
        Value::Array(a) => {
            let items = s.and_then(|s| s.get("items"));
            for v in a {
                prune(v, items, false);
            }
        }
        _ => {}
    }
}

/// `apiVersion` and `kind` (strings) and `metadata` (an object) survive at
/// the root and in embedded resources; the metadata is the caller's to check.
fn is_meta_field(k: &str, v: &Value) -> bool {
    match k {
        "apiVersion" | "kind" => v.is_string(),
        "metadata" => v.is_object(),
        _ => false,
    }
}

/// The fields of `ObjectMeta`; others are dropped from a resource's
/// `metadata`, as the real server's decoding into `ObjectMeta` does.
const OBJECT_META_FIELDS: [&str; 15] = [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

fn keep_meta_field(k: &str, v: &mut Value) -> bool {
    let keep = is_meta_field(k, v);
    if keep
        && k == "metadata"
        && let Some(m) = v.as_object_mut()
    {
        m.retain(|f, _| OBJECT_META_FIELDS.contains(&f.as_str()));
    }
    keep
}

fn skip_prune(x: &mut Value, s: &Value, embedded: bool) {
    match x {
        Value::Object(m) => {
            for (k, v) in m.iter_mut() {
                if embedded && keep_meta_field(k, v) {
                    continue;
                }
                if let Some(p) = prop(s, k) {
                    prune(v, Some(p), false);
                } else if let Some(a) = additional(s) {
                    prune(v, Some(a), false);
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = s.get("items") {
                for v in a {
                    skip_prune(v, items, false);
                }
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------
// Defaulting

fn non_nullable_null(v: &Value, s: &Value) -> bool {
    v.is_null() && !flag(s, "nullable")
}

fn default(x: &mut Value, s: &Value) {
    match x {
        Value::Object(m) => {
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                for (k, p) in props {
                    let Some(d) = p.get("default") else { continue };
                    if m.get(k).is_none_or(|v| non_nullable_null(v, p)) {
                        m.insert(k.clone(), d.clone());
                    }
                }
            }
            for (k, v) in m.iter_mut() {
                if let Some(p) = prop(s, k) {
                    default(v, p);
                } else if let Some(a) = additional(s) {
                    if non_nullable_null(v, a)
                        && let Some(d) = a.get("default")
                    {
                        *v = d.clone();
                    }
                    default(v, a);
                }
            }
        }
        Value::Array(items) => {
            let Some(is) = s.get("items") else { return };
            for v in items {
                if non_nullable_null(v, is)
                    && let Some(d) = is.get("default")
                {
                    *v = d.clone();
                }
                default(v, is);
            }
        }
        _ => {}
    }
}

fn prune_nulls(x: &mut Value, s: &Value) {
    match x {
        Value::Object(m) => {
            m.retain(|k, v| {
                let sub = prop(s, k).or_else(|| additional(s));
                match sub {
                    Some(p)
                        if v.is_null() && p.get("default").is_none() && !flag(p, "nullable") =>
                    {
                        false
                    }
                    Some(p) => {
                        prune_nulls(v, p);
                        true
                    }
                    None => true,
                }
            });
        }
        Value::Array(a) => {
            if let Some(is) = s.get("items") {
                for v in a {
                    prune_nulls(v, is);
                }
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------
// OpenAPI validation (kube-openapi semantics, apiextensions wording)

fn child_name(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_string()
    } else {
        format!("{path}.{k}")
    }
}

/// The field of a kube-openapi error (its name without the leading dot).
fn err_field(path: &str) -> String {
    path.trim_start_matches('.').to_string()
}

fn invalid(path: &str, value: String, detail: String) -> Cause {
    Cause::new(
        "FieldValueInvalid",
        err_field(path),
        format!("Invalid value: {value}: {detail}"),
    )
}

fn types_of(s: &Value) -> Vec<&str> {
    if flag(s, "x-kubernetes-int-or-string") {
        return vec!["integer", "string"];
    }
    s.get("type")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(|t| vec![t])
        .unwrap_or_default()
}

/// Validates `v` against `s`. `old` is the correlated stored value on
/// updates: an unchanged value is not validated again (CRD validation
/// ratcheting, on by default in the real server).
fn validate_value(s: &Value, v: &Value, old: Option<&Value>, path: &str, errs: &mut Vec<Cause>) {
    if old == Some(v) {
        return;
    }
    let types = types_of(s);
    let enumv = s.get("enum").and_then(Value::as_array);
    if v.is_null() {
        if !types.is_empty() && !types.contains(&"null") && !flag(s, "nullable") {
            errs.push(type_invalid(path, &types.join(","), "null"));
        }
        if let Some(e) = enumv
            && !e.contains(v)
        {
            errs.push(enum_fail(path, v, e));
        }
        return;
    }
    // type
    let actual = type_name(v);
    if !types.is_empty() {
        let float_int = actual == "number"
            && v.as_f64()
                .is_some_and(|f| f.fract() == 0.0 && f.is_finite())
            && types.contains(&"integer");
        let int_float = actual == "integer" && types.contains(&"number");
        if !(types.contains(&actual) || float_int || int_float) {
            errs.push(type_invalid(path, &types.join(","), actual));
        }
    }
    match v {
        Value::String(st) => {
            validate_string(s, st, path, errs);
            validate_format(s, st, path, errs);
        }
        Value::Number(n) => validate_number(s, n, path, errs),
        Value::Array(a) => validate_array(s, a, old.and_then(Value::as_array), path, errs),
        _ => {}
    }
    if let Some(e) = enumv
        && !e.iter().any(|x| enum_equal(x, v))
    {
        errs.push(enum_fail(path, v, e));
    }
    if let Value::Object(m) = v {
        validate_object(s, m, old.and_then(Value::as_object), path, errs);
    }
}

fn enum_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn type_invalid(path: &str, want: &str, actual: &str) -> Cause {
    Cause::new(
        "FieldValueTypeInvalid",
        err_field(path),
        format!(
            "Invalid value: {}: {} in body must be of type {want}: {}",
            quote(actual),
            path,
            quote(actual)
        ),
    )
}

fn enum_fail(path: &str, v: &Value, allowed: &[Value]) -> Cause {
    let values: Vec<String> = allowed
        .iter()
        .map(|a| match a {
            Value::String(s) => quote(s),
            other => quote(&other.to_string()),
        })
        .collect();
    Cause::new(
        "FieldValueNotSupported",
        err_field(path),
        format!(
            "Unsupported value: {}: supported values: {}",
            go_value(v),
            values.join(", ")
        ),
    )
}

fn int_kw(s: &Value, k: &str) -> Option<i64> {
    s.get(k)
        .and_then(|v| v.as_i64().or_else(|| v.as_f64().map(|f| f as i64)))
}

fn validate_string(s: &Value, st: &str, path: &str, errs: &mut Vec<Cause>) {
    let len = st.chars().count() as i64;
    if let Some(max) = int_kw(s, "maxLength")
        && len > max
    {
        let unit = if max == 1 { "byte" } else { "bytes" };
        errs.push(Cause::new(
            "FieldValueTooLong",
            err_field(path),
            format!("Too long: may not be more than {max} {unit}"),
        ));
        return;
    }
    if let Some(min) = int_kw(s, "minLength")
        && len < min
    {
        errs.push(invalid(
            path,
            quote(st),
            format!("{path} in body should be at least {min} chars long"),
        ));
        return;
    }
    if let Some(p) = s.get("pattern").and_then(Value::as_str) {
        match go_regex(p) {
            Ok(re) if re.is_match(st) => {}
            Ok(_) => errs.push(invalid(
                path,
                quote(st),
                format!("{path} in body should match '{p}'"),
            )),
            Err(e) => errs.push(invalid(
                path,
                quote(st),
                format!("{path} in body should match '{p}, but pattern is invalid: {e}'"),
            )),
        }
    }
}

/// Compiles a pattern with Go's RE2 semantics (the real server's `regexp`):
/// Perl classes `\d \w \s` and `\b` are ASCII-only there, Unicode-aware in
/// the `regex` crate, so they are rewritten. Compiled patterns are cached.
pub(crate) fn go_regex(p: &str) -> Result<regex::Regex, regex::Error> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<String, regex::Regex>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(re) = cache.lock().ok().and_then(|c| c.get(p).cloned()) {
        return Ok(re);
    }
    let mut out = String::with_capacity(p.len());
    let mut chars = p.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let class = match n {
                    'd' => Some("0-9"),
                    'w' => Some("0-9A-Za-z_"),
                    's' => Some("\\t\\n\\f\\r "),
                    _ => None,
                };
                let negated = match n {
                    'D' => Some("0-9"),
                    'W' => Some("0-9A-Za-z_"),
                    'S' => Some("\\t\\n\\f\\r "),
                    _ => None,
                };
                match (class, negated, n) {
                    (Some(c), _, _) => out.push_str(&format!("[{c}]")),
                    (_, Some(c), _) => out.push_str(&format!("[^{c}]")),
                    (_, _, 'b' | 'B') if !in_class => out.push_str(&format!("(?-u:\\{n})")),
                    _ => {
                        out.push('\\');
                        out.push(n);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A leading `]` (or `^]`) is a literal in the class.
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().unwrap_or('^'));
                }
                if chars.peek() == Some(&']') {
                    chars.next();
                    out.push_str("\\]");
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    let re = regex::Regex::new(&out)?;
    if let Ok(mut c) = cache.lock() {
        c.insert(p.to_string(), re.clone());
    }
    Ok(re)
}

/// The formats the real server checks (others are ignored, as it strips them).
fn format_ok(format: &str, v: &str) -> Option<bool> {
    static UUID: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let normalized: String = format.chars().filter(|c| *c != '-' && *c != '_').collect();
    Some(match normalized.to_ascii_lowercase().as_str() {
        "datetime" => {
            jiff::Timestamp::strptime("%Y-%m-%dT%H:%M:%S%.f%:z", v).is_ok()
                || v.parse::<jiff::Timestamp>().is_ok()
        }
        "date" => jiff::civil::Date::strptime("%Y-%m-%d", v).is_ok(),
        "uuid" => UUID
            .get_or_init(|| {
                regex::Regex::new(
                    "(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
                )
                .expect("static regex")
            })
            .is_match(v),
        "ipv4" => v.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => v.parse::<std::net::Ipv6Addr>().is_ok(),
        "cidr" => v.split_once('/').is_some_and(|(ip, bits)| {
            let max = if ip.parse::<std::net::Ipv4Addr>().is_ok() {
                32
            } else if ip.parse::<std::net::Ipv6Addr>().is_ok() {
                128
            } else {
                return false;
            };
            bits.parse::<u8>().is_ok_and(|b| b <= max)
        }),
        "hostname" => {
            !v.is_empty()
                && v.len() <= 255
                && v.split('.').all(|l| {
                    !l.is_empty()
                        && l.len() <= 63
                        && !l.starts_with('-')
                        && !l.ends_with('-')
                        && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                })
        }
        "byte" => {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.decode(v).is_ok()
        }
        "k8sshortname" => crate::selector::is_dns1123_label(v) && v.len() <= 63,
        "k8slongname" => crate::selector::is_dns1123_subdomain(v) && v.len() <= 253,
        "password" => true,
        _ => return None,
    })
}

fn validate_format(s: &Value, st: &str, path: &str, errs: &mut Vec<Cause>) {
    let Some(f) = s
        .get("format")
        .and_then(Value::as_str)
        .filter(|f| !f.is_empty())
    else {
        return;
    };
    if format_ok(f, st) == Some(false) {
        errs.push(Cause::new(
            "FieldValueTypeInvalid",
            err_field(path),
            format!(
                "Invalid value: {}: {path} in body must be of type {f}: {}",
                quote(st),
                quote(st)
            ),
        ));
    }
}

fn validate_number(s: &Value, n: &serde_json::Number, path: &str, errs: &mut Vec<Cause>) {
    let is_int = n.is_i64() || n.is_u64();
    let data = n.as_f64().unwrap_or_default();
    // Bounds print as the value's Go type: int64 bounds for integers.
    let bound = |b: f64| {
        if is_int {
            (b as i64).to_string()
        } else {
            go_float(b)
        }
    };
    if let Some(m) = s.get("multipleOf").and_then(Value::as_f64)
        && m > 0.0
    {
        let ok = if is_int && m.fract() == 0.0 {
            n.as_i64().unwrap_or_default() % (m as i64) == 0
        } else {
            let mult = if m < 1.0 { 1.0 / m * data } else { data / m };
            mult.fract() == 0.0
        };
        if !ok {
            errs.push(invalid(
                path,
                go_number(n),
                format!("{path} in body should be a multiple of {}", bound(m)),
            ));
        }
    }
    if let Some(min) = s.get("minimum").and_then(Value::as_f64) {
        let excl = flag(s, "exclusiveMinimum");
        let (value, min_cmp) = if is_int {
            (data, (min as i64) as f64)
        } else {
            (data, min)
        };
        if (!excl && value < min_cmp) || (excl && value <= min_cmp) {
            let op = if excl {
                "greater than"
            } else {
                "greater than or equal to"
            };
            errs.push(invalid(
                path,
                go_number(n),
                format!("{path} in body should be {op} {}", bound(min)),
            ));
        }
    }
    if let Some(max) = s.get("maximum").and_then(Value::as_f64) {
        let excl = flag(s, "exclusiveMaximum");
        let max_cmp = if is_int { (max as i64) as f64 } else { max };
        if (!excl && data > max_cmp) || (excl && data >= max_cmp) {
            let op = if excl {
                "less than"
            } else {
                "less than or equal to"
            };
            errs.push(invalid(
                path,
                go_number(n),
                format!("{path} in body should be {op} {}", bound(max)),
            ));
        }
    }
}

fn validate_array(
    s: &Value,
    a: &[Value],
    old: Option<&Vec<Value>>,
    path: &str,
    errs: &mut Vec<Cause>,
) {
    if let Some(items) = s.get("items").filter(|i| i.is_object()) {
        for (i, v) in a.iter().enumerate() {
            let ov = old.and_then(|o| cel::correlate(s, v, o));
            validate_value(items, v, ov, &format!("{path}[{i}]"), errs);
        }
    }
    let size = a.len() as i64;
    if let Some(min) = int_kw(s, "minItems")
        && size < min
    {
        errs.push(invalid(
            path,
            size.to_string(),
            format!("{path} in body should have at least {min} items"),
        ));
    }
    if let Some(max) = int_kw(s, "maxItems")
        && size > max
    {
        let unit = if max == 1 { "item" } else { "items" };
        errs.push(Cause::new(
            "FieldValueTooMany",
            err_field(path),
            format!("Too many: {size}: must have at most {max} {unit}"),
        ));
    }
    if flag(s, "uniqueItems") && a.iter().enumerate().any(|(i, x)| a[..i].contains(x)) {
        errs.push(invalid(
            path,
            "\"\"".into(),
            format!("{path} in body shouldn't contain duplicates"),
        ));
    }
}

fn validate_object(
    s: &Value,
    m: &Map<String, Value>,
    old: Option<&Map<String, Value>>,
    path: &str,
    errs: &mut Vec<Cause>,
) {
    let granular = s.get("x-kubernetes-map-type").and_then(Value::as_str) != Some("atomic");
    let old = old.filter(|_| granular);
    let n = m.len() as i64;
    if let Some(min) = int_kw(s, "minProperties")
        && n < min
    {
        errs.push(invalid(
            path,
            n.to_string(),
            format!("{path} in body should have at least {min} properties"),
        ));
    }
    if let Some(max) = int_kw(s, "maxProperties")
        && n > max
    {
        let unit = if max == 1 { "item" } else { "items" };
        errs.push(Cause::new(
            "FieldValueTooMany",
            err_field(path),
            format!("Too many: {n}: must have at most {max} {unit}"),
        ));
    }
    let props = s.get("properties").and_then(Value::as_object);
    if let Some(a) = additional(s) {
        for (k, v) in m {
            if props.is_some_and(|p| p.contains_key(k)) {
                continue;
            }
            validate_value(
                a,
                v,
                old.and_then(|o| o.get(k)),
                &format!("{path}.{k}"),
                errs,
            );
        }
    }
    if let Some(props) = props {
        for (k, ps) in props {
            if let Some(v) = m.get(k) {
                validate_value(
                    ps,
                    v,
                    old.and_then(|o| o.get(k)),
                    &child_name(path, k),
                    errs,
                );
            }
        }
    }
    if let Some(req) = s.get("required").and_then(Value::as_array) {
        for k in req.iter().filter_map(Value::as_str) {
            if !m.contains_key(k) {
                errs.push(Cause::new(
                    "FieldValueRequired",
                    err_field(&format!("{path}.{k}")),
                    "Required value",
                ));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// x-kubernetes-list-type uniqueness

fn list_types(s: &Value, v: &Value, path: &FieldPath, errs: &mut Vec<Cause>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if let Some(p) = prop(s, k) {
                    list_types(p, x, &path.child(k), errs);
                } else if let Some(a) = additional(s) {
                    list_types(a, x, &path.key(k), errs);
                }
            }
        }
        Value::Array(a) => {
            match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("set") => {
                    for i in first_duplicates(a) {
                        errs.push(duplicate(&path.index(i), &a[i]));
                    }
                }
                Some("map") => list_map(s, a, path, errs),
                _ => {}
            }
            if let Some(items) = s.get("items") {
                for (i, x) in a.iter().enumerate() {
                    list_types(items, x, &path.index(i), errs);
                }
            }
        }
        _ => {}
    }
}

/// Indices where a value is seen for the second time (later repeats are not reported).
fn first_duplicates(a: &[Value]) -> Vec<usize> {
    let mut out = Vec::new();
    for i in 0..a.len() {
        let earlier = a[..i].iter().filter(|x| enum_equal(x, &a[i])).count();
        if earlier == 1 {
            out.push(i);
        }
    }
    out
}

fn duplicate(path: &FieldPath, v: &Value) -> Cause {
    Cause::new(
        "FieldValueDuplicate",
        path.render(),
        format!("Duplicate value: {}", go_value(v)),
    )
}

fn list_map(s: &Value, a: &[Value], path: &FieldPath, errs: &mut Vec<Cause>) {
    for (i, x) in a.iter().enumerate() {
        if !x.is_object() && !x.is_null() {
            errs.push(Cause::new(
                "FieldValueInvalid",
                path.index(i).render(),
                format!(
                    "Invalid value: {}: must be an object for an array of list-type map",
                    go_value(x)
                ),
            ));
            return;
        }
    }
    let keys: Vec<&str> = s
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .map(|k| k.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let key_values: Vec<Value> = a
        .iter()
        .map(|x| {
            let mut m = Map::new();
            for k in &keys {
                if let Some(v) = x.get(*k) {
                    m.insert((*k).to_string(), v.clone());
                }
            }
            Value::Object(m)
        })
        .collect();
    for i in first_duplicates(&key_values) {
        errs.push(duplicate(&path.index(i), &key_values[i]));
    }
}

// ---------------------------------------------------------------------------
// CRD validation

/// Validates a CustomResourceDefinition object itself (names, scope,
/// versions, exactly one storage version, schemas). Empty = valid.
pub fn validate_crd(crd: &Value) -> Vec<Cause> {
    let mut errs = Vec::new();
    let spec = &crd["spec"];
    let group = spec["group"].as_str().unwrap_or_default();
    let names = &spec["names"];
    let plural = names["plural"].as_str().unwrap_or_default();
    let kind = names["kind"].as_str().unwrap_or_default();
    let name = crd["metadata"]["name"].as_str().unwrap_or_default();

    if name.is_empty() {
        errs.push(Cause::new(
            "FieldValueRequired",
            "metadata.name",
            "Required value: name or generateName is required",
        ));
    } else {
        for e in crate::selector::dns1123_subdomain_errors(name) {
            errs.push(Cause::new(
                "FieldValueInvalid",
                "metadata.name",
                format!(
                    "Invalid value: {}: {}",
                    quote(name),
                    e.replace("bytes", "characters")
                ),
            ));
        }
        if name != format!("{plural}.{group}") {
            errs.push(Cause::new(
                "FieldValueInvalid",
                "metadata.name",
                format!(
                    "Invalid value: {}: must be spec.names.plural+\".\"+spec.group",
                    quote(name)
                ),
            ));
        }
    }

    if group.is_empty() {
        errs.push(Cause::new(
            "FieldValueRequired",
            "spec.group",
            "Required value",
        ));
    } else {
        let e = crate::selector::dns1123_subdomain_errors(group);
        if !e.is_empty() {
            errs.push(Cause::new(
                "FieldValueInvalid",
                "spec.group",
                format!(
                    "Invalid value: {}: {}",
                    quote(group),
                    e.join(",").replace("bytes", "characters")
                ),
            ));
        } else if !group.contains('.') {
            errs.push(Cause::new(
                "FieldValueInvalid",
                "spec.group",
                format!(
                    "Invalid value: {}: should be a domain with at least one dot",
                    quote(group)
                ),
            ));
        }
    }

    match spec["scope"].as_str().unwrap_or_default() {
        "" => errs.push(Cause::new(
            "FieldValueRequired",
            "spec.scope",
            "Required value",
        )),
        "Cluster" | "Namespaced" => {}
        other => errs.push(Cause::new(
            "FieldValueNotSupported",
            "spec.scope",
            format!(
                "Unsupported value: {}: supported values: \"Cluster\", \"Namespaced\"",
                quote(other)
            ),
        )),
    }

    let empty = Vec::new();
    let versions = spec["versions"].as_array().unwrap_or(&empty);
    let mut storage = 0;
    let mut seen = std::collections::HashSet::new();
    let mut unique = true;
    for (i, v) in versions.iter().enumerate() {
        let vname = v["name"].as_str().unwrap_or_default();
        if v["storage"].as_bool() == Some(true) {
            storage += 1;
        }
        if !seen.insert(vname) {
            unique = false;
        }
        let e = dns1035_errors(vname);
        if !e.is_empty() {
            errs.push(Cause::new(
                "FieldValueInvalid",
                format!("spec.versions[{i}].name"),
                format!("Invalid value: {}: {}", quote(vname), e.join(",")),
            ));
        }
        match v.get("schema").and_then(|s| s.get("openAPIV3Schema")) {
            None => errs.push(Cause::new(
                "FieldValueRequired",
                format!("spec.versions[{i}].schema.openAPIV3Schema"),
                "Required value",
            )),
            Some(s) => {
                if let Err(causes) = Schema::new(s) {
                    errs.extend(causes.into_iter().map(|c| Cause {
                        field: format!("spec.versions[{i}].schema.{}", c.field),
                        ..c
                    }));
                }
            }
        }
        if let Some(cols) = v["additionalPrinterColumns"].as_array() {
            for (j, c) in cols.iter().enumerate() {
                errs.extend(validate_column(
                    c,
                    &format!("spec.versions[{i}].additionalPrinterColumns[{j}]"),
                ));
            }
        }
    }
    if !unique {
        errs.push(Cause::new(
            "FieldValueInvalid",
            "spec.versions",
            format!(
                "Invalid value: {}: must contain unique version names",
                Value::Array(versions.clone())
            ),
        ));
    }
    if storage != 1 {
        errs.push(Cause::new(
            "FieldValueInvalid",
            "spec.versions",
            format!(
                "Invalid value: {}: must have exactly one version marked as storage version",
                Value::Array(versions.clone())
            ),
        ));
    }

    if plural.is_empty() {
        errs.push(Cause::new(
            "FieldValueRequired",
            "spec.names.plural",
            "Required value",
        ));
    }
    if kind.is_empty() {
        // singular and listKind default from kind, so they go missing with it.
        if names["singular"].as_str().unwrap_or_default().is_empty() {
            errs.push(Cause::new(
                "FieldValueRequired",
                "spec.names.singular",
                "Required value",
            ));
        }
        errs.push(Cause::new(
            "FieldValueRequired",
            "spec.names.kind",
            "Required value",
        ));
        if names["listKind"].as_str().unwrap_or_default().is_empty() {
            errs.push(Cause::new(
                "FieldValueRequired",
                "spec.names.listKind",
                "Required value",
            ));
        }
    }
    let check = |field: &str, v: &str, lower: bool, errs: &mut Vec<Cause>| {
        if v.is_empty() {
            return;
        }
        let e = dns1035_errors(&if lower {
            v.to_lowercase()
        } else {
            v.to_string()
        });
        if !e.is_empty() {
            let prefix = if lower {
                "may have mixed case, but should otherwise match: "
            } else {
                ""
            };
            errs.push(Cause::new(
                "FieldValueInvalid",
                field,
                format!("Invalid value: {}: {prefix}{}", quote(v), e.join(",")),
            ));
        }
    };
    check("spec.names.plural", plural, false, &mut errs);
    check(
        "spec.names.singular",
        names["singular"].as_str().unwrap_or_default(),
        false,
        &mut errs,
    );
    check("spec.names.kind", kind, true, &mut errs);
    let list_kind = names["listKind"].as_str().unwrap_or_default();
    check("spec.names.listKind", list_kind, true, &mut errs);
    for (field, list) in [
        ("shortNames", &names["shortNames"]),
        ("categories", &names["categories"]),
    ] {
        for (i, s) in list.as_array().unwrap_or(&empty).iter().enumerate() {
            check(
                &format!("spec.names.{field}[{i}]"),
                s.as_str().unwrap_or_default(),
                false,
                &mut errs,
            );
        }
    }
    if !kind.is_empty() && kind == list_kind {
        errs.push(Cause::new(
            "FieldValueInvalid",
            "spec.names.listKind",
            format!(
                "Invalid value: {}: kind and listKind may not be the same",
                quote(list_kind)
            ),
        ));
    }
    errs
}

fn dns1035_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    let b = v.as_bytes();
    let ok = !b.is_empty()
        && b[0].is_ascii_lowercase()
        && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-');
    if !ok {
        errs.push("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".to_string());
    }
    errs
}

fn validate_column(c: &Value, path: &str) -> Vec<Cause> {
    let mut errs = Vec::new();
    let types = "array,boolean,date,integer,number,object,string";
    if c["name"].as_str().unwrap_or_default().is_empty() {
        errs.push(Cause::new(
            "FieldValueRequired",
            format!("{path}.name"),
            "Required value",
        ));
    }
    match c["type"].as_str().unwrap_or_default() {
        "" => errs.push(Cause::new(
            "FieldValueRequired",
            format!("{path}.type"),
            format!("Required value: must be one of {types}"),
        )),
        "array" | "boolean" | "date" | "integer" | "number" | "object" | "string" => {}
        t => errs.push(Cause::new(
            "FieldValueInvalid",
            format!("{path}.type"),
            format!("Invalid value: {}: must be one of {types}", quote(t)),
        )),
    }
    let fmt = c["format"].as_str().unwrap_or_default();
    let formats = "byte,date,date-time,double,float,int32,int64,password";
    if !fmt.is_empty() && !formats.split(',').any(|f| f == fmt) {
        errs.push(Cause::new(
            "FieldValueInvalid",
            format!("{path}.format"),
            format!("Invalid value: {}: must be one of {formats}", quote(fmt)),
        ));
    }
    if c["jsonPath"].as_str().unwrap_or_default().is_empty() {
        errs.push(Cause::new(
            "FieldValueRequired",
            format!("{path}.jsonPath"),
            "Required value",
        ));
    }
    errs
}

#[cfg(test)]
mod tests;
