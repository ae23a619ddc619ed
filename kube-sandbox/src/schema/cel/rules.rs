//! Running the `x-kubernetes-validations` of a schema tree over an object.

use super::*;

/// Runs the `x-kubernetes-validations` of a schema tree over an object.
pub(crate) struct RuleContext<'a> {
    pub(crate) programs: &'a BTreeMap<String, Program>,
    pub(crate) errs: &'a mut Vec<Cause>,
}

impl RuleContext<'_> {
    pub(crate) fn validate(
        &mut self,
        s: &Value,
        v: &Value,
        old: Option<&Value>,
        path: &FieldPath,
        root: bool,
    ) {
        if v.is_null() {
            return;
        }
        let old = old.filter(|o| !o.is_null());
        self.rules(s, v, old, path, root);
        match v {
            Value::Object(m) => {
                let granular =
                    s.get("x-kubernetes-map-type").and_then(Value::as_str) != Some("atomic");
                let old_m = old.and_then(Value::as_object);
                if let Some(a) = additional(s) {
                    for (k, x) in m {
                        let ov = if granular {
                            old_m.and_then(|o| o.get(k))
                        } else {
                            None
                        };
                        self.validate(a, x, ov, &path.key(k), false);
                    }
                }
                if s.get("properties").is_some() {
                    for (k, x) in m {
                        if let Some(p) = prop(s, k) {
                            let ov = if granular {
                                old_m.and_then(|o| o.get(k))
                            } else {
                                None
                            };
                            self.validate(p, x, ov, &path.child(k), false);
                        }
                    }
                }
            }
            Value::Array(a) => {
                let Some(items) = s.get("items") else { return };
                let old_a = old.and_then(Value::as_array);
                for (i, x) in a.iter().enumerate() {
                    let ov = old_a.and_then(|o| correlate(s, x, o));
                    self.validate(items, x, ov, &path.index(i), false);
                }
            }
            _ => {}
        }
    }

    fn rules(&mut self, s: &Value, v: &Value, old: Option<&Value>, path: &FieldPath, root: bool) {
        let Some(rules) = s.get("x-kubernetes-validations").and_then(Value::as_array) else {
            return;
        };
        let ty = s.get("type").and_then(Value::as_str).unwrap_or_default();
        let this = if root { root_view(v) } else { v.clone() };
        let old_this = old.map(|o| if root { root_view(o) } else { o.clone() });
        for r in rules {
            let src = r.get("rule").and_then(Value::as_str).unwrap_or_default();
            let Some(p) = self.programs.get(src) else {
                continue;
            };
            let optional_old = r
                .get("optionalOldSelf")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if p.uses_old_self && old_this.is_none() && !optional_old {
                continue;
            }
            let message = r
                .get("message")
                .and_then(Value::as_str)
                .map(str::trim)
                .unwrap_or_default();
            let rule_str = if message.is_empty() {
                src.trim()
            } else {
                message
            };
            let ty_value = format!("Invalid value: {}", quote_ty(ty));
            let old_arg = if p.uses_old_self {
                old_this.as_ref()
            } else {
                None
            };
            match p.run_typed(&this, old_arg, Some(s)) {
                Ok(Val::Bool(true)) => continue,
                Ok(Val::Bool(false)) => {}
                Ok(other) => {
                    self.errs.push(Cause::new(
                        "FieldValueInvalid",
                        path.render(),
                        format!(
                            "{ty_value}: 'no such overload: {}' evaluating rule: {rule_str}",
                            other.type_name()
                        ),
                    ));
                    continue;
                }
                Err(e) => {
                    let detail = if e.starts_with("no such overload") {
                        format!(
                            "'{e}': call arguments did not match a supported operator, function or macro signature for rule: {rule_str}"
                        )
                    } else {
                        format!("{e} evaluating rule: {rule_str}")
                    };
                    self.errs.push(Cause::new(
                        "FieldValueInvalid",
                        path.render(),
                        format!("{ty_value}: {detail}"),
                    ));
                    continue;
                }
            }
            // Ratcheting: a rule without oldSelf that fails on an unchanged
            // value is only a warning on the real server.
            if !p.uses_old_self && old_this.as_ref() == Some(&this) {
                continue;
            }
            let mut at = path.clone();
            if let Some(fp) = r.get("fieldPath").and_then(Value::as_str) {
                let fp = fp.trim_start_matches('.');
                if !fp.is_empty() {
                    at = at.child(fp);
                }
            }
            let mut detail = None;
            if let Some(me) = r.get("messageExpression").and_then(Value::as_str)
                && let Some(mp) = self.programs.get(me)
                && let Ok(Val::Str(m)) = mp.run_typed(&this, old_arg, Some(s))
                && !m.trim().is_empty()
                && !m.contains('\n')
            {
                detail = Some(m);
            }
            let detail = detail.unwrap_or_else(|| {
                if message.is_empty() {
                    format!("failed rule: {}", src.trim())
                } else {
                    message.to_string()
                }
            });
            let shown = if ty == "object" || ty == "array" {
                None
            } else {
                Some(go_value(v))
            };
            let reason = r
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or("FieldValueInvalid");
            let (reason, msg) = match reason {
                "FieldValueForbidden" => (reason, format!("Forbidden: {detail}")),
                "FieldValueRequired" => (reason, format!("Required value: {detail}")),
                "FieldValueDuplicate" => (
                    reason,
                    format!(
                        "Duplicate value: {}",
                        shown.clone().unwrap_or_else(|| v.to_string())
                    ),
                ),
                _ => (
                    "FieldValueInvalid",
                    match shown {
                        Some(val) => format!("Invalid value: {val}: {detail}"),
                        None => format!("Invalid value: {detail}"),
                    },
                ),
            };
            self.errs.push(Cause::new(reason, at.render(), msg));
        }
    }
}

pub(super) fn quote_ty(ty: &str) -> String {
    crate::selector::quote(ty)
}

/// The root `self`: `apiVersion`, `kind`, and only `name`/`generateName` of
/// `metadata`, as the real server exposes them to rules.
pub(super) fn root_view(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.retain(|k, _| k == "name" || k == "generateName");
    }
    v
}

/// The old item a new list item correlates with: same keys in a
/// `list-type: map`, same value in a `set`; other lists do not correlate.
pub(crate) fn correlate<'a>(s: &Value, item: &Value, old: &'a [Value]) -> Option<&'a Value> {
    match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => old.iter().find(|o| *o == item),
        Some("map") => {
            let keys: Vec<&str> = s
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|k| k.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            old.iter()
                .find(|o| keys.iter().all(|k| o.get(*k) == item.get(*k)))
        }
        _ => None,
    }
}
