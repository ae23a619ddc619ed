//! Which requests a policy's `spec.matchConstraints` or a binding's
//! `spec.matchResources` select, as the real server's matcher decides:
//! namespace selector, object selector, excluded rules, then the resource
//! rules (none = everything the policy matches, for a binding).

use super::Attributes;
use crate::auth::rbac::label_selector_matches;
use serde_json::Value;

/// Whether a `MatchResources` selects the request.
pub(super) fn matches(mr: &Value, a: &Attributes) -> bool {
    if !namespace_selected(mr, a) || !object_selected(mr, a) {
        return false;
    }
    if rules(mr, "excludeResourceRules").any(|r| rule_matches(r, a)) {
        return false;
    }
    let mut include = rules(mr, "resourceRules").peekable();
    include.peek().is_none() || include.any(|r| rule_matches(r, a))
}

fn rules<'a>(mr: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    mr.get(key).and_then(Value::as_array).into_iter().flatten()
}

fn strs<'a>(v: &'a Value, key: &str) -> Vec<&'a str> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn is_empty_selector(sel: Option<&Value>) -> bool {
    sel.is_none_or(|s| {
        ["matchLabels", "matchExpressions"].iter().all(|k| {
            s.get(k).is_none_or(|v| {
                v.is_null()
                    || v.as_object().is_some_and(|o| o.is_empty())
                    || v.as_array().is_some_and(|a| a.is_empty())
            })
        })
    })
}

fn labels(obj: Option<&Value>) -> Option<&Value> {
    obj.and_then(|o| o["metadata"].get("labels"))
}

/// A cluster-scoped request (other than of a Namespace itself) is never
/// excluded by a namespace selector; a Namespace is selected by its own
/// labels (the old ones on delete).
fn namespace_selected(mr: &Value, a: &Attributes) -> bool {
    let sel = mr.get("namespaceSelector");
    if is_empty_selector(sel) {
        return true;
    }
    let sel = sel.expect("not empty");
    if a.is_namespace() {
        return label_selector_matches(sel, labels(a.object.or(a.old_object)));
    }
    if a.namespace.is_empty() {
        return true;
    }
    label_selector_matches(sel, labels(a.namespace_object))
}

/// The new or the old object's labels must match.
fn object_selected(mr: &Value, a: &Attributes) -> bool {
    let sel = mr.get("objectSelector");
    if is_empty_selector(sel) {
        return true;
    }
    let sel = sel.expect("not empty");
    [a.object, a.old_object]
        .into_iter()
        .flatten()
        .any(|o| label_selector_matches(sel, labels(Some(o))))
}

/// One `NamedRuleWithOperations`: operation, group, version, resource
/// with its subresource (`pods`, `pods/status`, `pods/*`, `*/status`,
/// `*`, `*/*`), scope and resource names.
fn rule_matches(rule: &Value, a: &Attributes) -> bool {
    let any_of = |key: &str, have: &str| strs(rule, key).iter().any(|w| *w == "*" || *w == have);
    let names = strs(rule, "resourceNames");
    let scope = rule.get("scope").and_then(Value::as_str).unwrap_or("*");
    let scoped = match scope {
        "Cluster" => a.is_namespace() || a.namespace.is_empty(),
        "Namespaced" => !a.is_namespace() && !a.namespace.is_empty(),
        _ => true,
    };
    scoped
        && (names.is_empty() || names.contains(&a.name))
        && any_of("operations", a.operation.as_str())
        && any_of("apiGroups", &a.def.group)
        && any_of("apiVersions", &a.def.version)
        && strs(rule, "resources").iter().any(|r| {
            let (res, sub) = r.split_once('/').unwrap_or((r, ""));
            (res == "*" || res == a.def.plural) && (sub == "*" || sub == a.subresource)
        })
}
