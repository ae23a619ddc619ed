//! What the API server checks and defaults when a ValidatingAdmissionPolicy
//! or a binding is written (`pkg/apis/admissionregistration/validation`):
//! required fields, supported values, CEL that compiles (with the names an
//! expression may use), and the defaults `kubectl get -o yaml` shows
//! (`failurePolicy: Fail`, `matchPolicy: Equivalent`, empty selectors,
//! `scope: "*"`). Causes are worded like the real field errors, on one line
//! (the real compile errors add the source and a caret on two more).

use crate::compiled_policy::compile_expression;
use crate::errors::Cause;
use crate::names::name_errors;
use crate::resources::NameRule;
use serde_json::{Value, json};

const OPERATIONS: [&str; 5] = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
const REASONS: [&str; 4] = [
    "Forbidden",
    "Invalid",
    "RequestEntityTooLarge",
    "Unauthorized",
];
const ACTIONS: [&str; 3] = ["Audit", "Deny", "Warn"];

struct Errs(Vec<Cause>);

impl Errs {
    fn required(&mut self, field: &str, detail: &str) {
        let msg = if detail.is_empty() {
            "Required value".to_string()
        } else {
            format!("Required value: {detail}")
        };
        self.0.push(Cause::new("FieldValueRequired", field, msg));
    }
    fn invalid(&mut self, field: &str, value: &Value, detail: &str) {
        self.0.push(Cause::new(
            "FieldValueInvalid",
            field,
            format!("Invalid value: {value}: {detail}"),
        ));
    }
    fn not_supported(&mut self, field: &str, value: &Value, supported: &[&str]) {
        let list = supported
            .iter()
            .map(|s| format!("{s:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        self.0.push(Cause::new(
            "FieldValueNotSupported",
            field,
            format!("Unsupported value: {value}: supported values: {list}"),
        ));
    }
    fn duplicate(&mut self, field: &str, value: &Value) {
        self.0.push(Cause::new(
            "FieldValueDuplicate",
            field,
            format!("Duplicate value: {value}"),
        ));
    }
    fn forbidden(&mut self, field: &str, detail: &str) {
        self.0.push(Cause::new(
            "FieldValueForbidden",
            field,
            format!("Forbidden: {detail}"),
        ));
    }
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Defaults and validates a policy or binding about to be stored; the
/// causes are for a 422.
pub(crate) fn prepare(plural: &str, obj: &mut Value) -> Vec<Cause> {
    let mut errs = Errs(Vec::new());
    if !obj["spec"].is_object() {
        obj["spec"] = json!({});
    }
    match plural {
        super::POLICIES => {
            default_policy(&mut obj["spec"]);
            policy(&obj["spec"], &mut errs);
        }
        super::BINDINGS => {
            if let Some(mr) = obj["spec"]
                .get_mut("matchResources")
                .filter(|m| m.is_object())
            {
                default_match_resources(mr);
            }
            binding(&obj["spec"], &mut errs);
        }
        _ => {}
    }
    errs.0
}

fn default_policy(spec: &mut Value) {
    if spec.get("failurePolicy").is_none_or(Value::is_null) {
        spec["failurePolicy"] = json!("Fail");
    }
    if let Some(mc) = spec.get_mut("matchConstraints").filter(|m| m.is_object()) {
        default_match_resources(mc);
    }
}

fn default_match_resources(mr: &mut Value) {
    if mr.get("matchPolicy").is_none_or(Value::is_null) {
        mr["matchPolicy"] = json!("Equivalent");
    }
    for key in ["namespaceSelector", "objectSelector"] {
        if mr.get(key).is_none_or(Value::is_null) {
            mr[key] = json!({});
        }
    }
    for key in ["resourceRules", "excludeResourceRules"] {
        if let Some(rules) = mr.get_mut(key).and_then(Value::as_array_mut) {
            for r in rules.iter_mut().filter(|r| r.is_object()) {
                if r.get("scope").is_none_or(Value::is_null) {
                    r["scope"] = json!("*");
                }
            }
        }
    }
}

fn policy(spec: &Value, errs: &mut Errs) {
    let fp = &spec["failurePolicy"];
    if !matches!(fp.as_str(), Some("Fail" | "Ignore")) {
        errs.not_supported("spec.failurePolicy", fp, &["Fail", "Ignore"]);
    }
    if let Some(pk) = spec.get("paramKind").filter(|p| !p.is_null()) {
        for key in ["apiVersion", "kind"] {
            if text(pk, key).is_empty() {
                errs.required(&format!("spec.paramKind.{key}"), "");
            }
        }
    }
    match spec.get("matchConstraints").filter(|m| m.is_object()) {
        None => errs.required("spec.matchConstraints", ""),
        Some(mc) => {
            match_resources(mc, "spec.matchConstraints", errs);
            if items(mc, "resourceRules").is_empty() {
                errs.required("spec.matchConstraints.resourceRules", "");
            }
        }
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, m) in items(spec, "matchConditions").iter().enumerate() {
        let at = format!("spec.matchConditions[{i}]");
        expression(m, "expression", &at, &[], false, "", errs);
        let name = text(m, "name");
        if name.is_empty() {
            errs.required(&format!("{at}.name"), "");
        } else if names.contains(&name) {
            errs.duplicate(&format!("{at}.name"), &json!(name));
        } else {
            names.push(name);
        }
    }
    let mut variables: Vec<&str> = Vec::new();
    for (i, v) in items(spec, "variables").iter().enumerate() {
        let at = format!("spec.variables[{i}]");
        let name = text(v, "name");
        if name.trim().is_empty() {
            errs.required(&format!("{at}.name"), "name is not specified");
        } else if !is_cel_identifier(name) {
            errs.invalid(
                &format!("{at}.name"),
                &json!(name),
                "name is not a valid CEL identifier",
            );
        }
        expression(
            v,
            "expression",
            &at,
            &variables,
            true,
            "expression is not specified",
            errs,
        );
        variables.push(name);
    }
    let validations = items(spec, "validations");
    let audits = items(spec, "auditAnnotations");
    if validations.is_empty() && audits.is_empty() {
        let why = "validations or auditAnnotations must contain at least one item";
        errs.required("spec.validations", why);
        errs.required("spec.auditAnnotations", why);
    }
    for (i, v) in validations.iter().enumerate() {
        let at = format!("spec.validations[{i}]");
        expression(
            v,
            "expression",
            &at,
            &variables,
            true,
            "expression is not specified",
            errs,
        );
        let me = text(v, "messageExpression");
        if !me.is_empty() && me.trim().is_empty() {
            errs.invalid(
                &format!("{at}.messageExpression"),
                &json!(me),
                "must be non-empty if specified",
            );
        } else if !me.is_empty() {
            expression(v, "messageExpression", &at, &variables, true, "", errs);
        }
        let msg = text(v, "message");
        if !msg.is_empty() && msg.trim().is_empty() {
            errs.invalid(
                &format!("{at}.message"),
                &json!(msg),
                "message must be non-empty if specified",
            );
        } else if msg.trim().contains(['\n', '\r']) {
            errs.invalid(
                &format!("{at}.message"),
                &json!(msg),
                "message must not contain line breaks",
            );
        }
        if let Some(reason) = v.get("reason").filter(|r| !r.is_null())
            && !reason.as_str().is_some_and(|r| REASONS.contains(&r))
        {
            errs.not_supported(&format!("{at}.reason"), reason, &REASONS);
        }
    }
    let mut keys: Vec<&str> = Vec::new();
    for (i, a) in audits.iter().enumerate() {
        let at = format!("spec.auditAnnotations[{i}]");
        expression(
            a,
            "valueExpression",
            &at,
            &variables,
            true,
            "valueExpression is not specified",
            errs,
        );
        let key = text(a, "key");
        if keys.contains(&key) {
            errs.duplicate(&format!("{at}.key"), &json!(key));
        }
        keys.push(key);
    }
}

/// A required CEL field of `v` at `at.field` that must compile.
fn expression(
    v: &Value,
    field: &str,
    at: &str,
    variables: &[&str],
    with_variables: bool,
    missing: &str,
    errs: &mut Errs,
) {
    let path = format!("{at}.{field}");
    let src = text(v, field);
    if src.trim().is_empty() {
        errs.required(&path, missing);
        return;
    }
    if let Err(e) = compile_expression(src, variables, with_variables) {
        errs.invalid(&path, &json!(src), &e);
    }
}

fn is_cel_identifier(s: &str) -> bool {
    const RESERVED: [&str; 20] = [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
    ];
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !RESERVED.contains(&s)
}

fn match_resources(mr: &Value, at: &str, errs: &mut Errs) {
    let mp = &mr["matchPolicy"];
    if !matches!(mp.as_str(), Some("Exact" | "Equivalent")) {
        errs.not_supported(&format!("{at}.matchPolicy"), mp, &["Equivalent", "Exact"]);
    }
    for key in ["resourceRules", "excludeResourceRules"] {
        for (i, r) in items(mr, key).iter().enumerate() {
            rule(r, &format!("{at}.{key}[{i}]"), errs);
        }
    }
}

fn rule(r: &Value, at: &str, errs: &mut Errs) {
    let ops = items(r, "operations");
    if ops.is_empty() {
        errs.required(&format!("{at}.operations"), "");
    }
    for (i, op) in ops.iter().enumerate() {
        if !op.as_str().is_some_and(|o| OPERATIONS.contains(&o)) {
            errs.not_supported(&format!("{at}.operations[{i}]"), op, &OPERATIONS);
        }
    }
    for key in ["apiGroups", "apiVersions", "resources"] {
        if items(r, key).is_empty() {
            errs.required(&format!("{at}.{key}"), "");
        }
    }
    let scope = &r["scope"];
    if !matches!(scope.as_str(), Some("*" | "Cluster" | "Namespaced")) {
        errs.not_supported(
            &format!("{at}.scope"),
            scope,
            &["*", "Cluster", "Namespaced"],
        );
    }
}

fn binding(spec: &Value, errs: &mut Errs) {
    let policy = text(spec, "policyName");
    if policy.is_empty() {
        errs.required("spec.policyName", "");
    } else {
        for msg in name_errors(NameRule::Subdomain, policy) {
            errs.invalid("spec.policyName", &json!(policy), &msg);
        }
    }
    if let Some(pr) = spec.get("paramRef").filter(|p| !p.is_null()) {
        let named = !text(pr, "name").is_empty();
        let selected = pr.get("selector").is_some_and(|s| !s.is_null());
        if named && selected {
            errs.forbidden(
                "spec.paramRef.name",
                "name and selector are mutually exclusive",
            );
            errs.forbidden(
                "spec.paramRef.selector",
                "name and selector are mutually exclusive",
            );
        }
        if !named && !selected {
            errs.required("spec.paramRef", "one of name or selector must be specified");
        }
        match pr.get("parameterNotFoundAction").and_then(Value::as_str) {
            None | Some("") => errs.required("spec.paramRef.parameterNotFoundAction", ""),
            Some("Deny" | "Allow") => {}
            Some(other) => errs.not_supported(
                "spec.paramRef.parameterNotFoundAction",
                &json!(other),
                &["Deny", "Allow"],
            ),
        }
    }
    if let Some(mr) = spec.get("matchResources").filter(|m| m.is_object()) {
        match_resources(mr, "spec.matchResources", errs);
    }
    let actions = items(spec, "validationActions");
    let mut seen: Vec<&str> = Vec::new();
    for (i, a) in actions.iter().enumerate() {
        let at = format!("spec.validationActions[{i}]");
        let name = a.as_str().unwrap_or_default();
        if !ACTIONS.contains(&name) {
            errs.not_supported(&at, a, &ACTIONS);
        }
        if seen.contains(&name) {
            errs.duplicate(&at, a);
        }
        seen.push(name);
    }
    if seen.contains(&"Deny") && seen.contains(&"Warn") {
        errs.invalid(
            "spec.validationActions",
            &spec["validationActions"],
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        );
    }
    if seen.is_empty() {
        errs.required(
            "spec.validationActions",
            "at least one validation action is required",
        );
    }
}
