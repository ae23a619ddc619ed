//! The structural-schema rules a CRD's `openAPIV3Schema` must meet, and
//! that its defaults must validate against it.

use super::*;

pub(super) fn check_structural(
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
pub(super) fn check_defaults(
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
