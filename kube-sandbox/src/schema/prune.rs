//! Pruning of fields the schema does not know, and defaulting.

use super::*;

pub(super) fn prune(x: &mut Value, s: Option<&Value>, resource_root: bool) {
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
pub(super) fn is_meta_field(k: &str, v: &Value) -> bool {
    match k {
        "apiVersion" | "kind" => v.is_string(),
        "metadata" => v.is_object(),
        _ => false,
    }
}

/// The fields of `ObjectMeta`; others are dropped from a resource's
/// `metadata`, as the real server's decoding into `ObjectMeta` does.
pub(super) const OBJECT_META_FIELDS: [&str; 15] = [
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

pub(super) fn keep_meta_field(k: &str, v: &mut Value) -> bool {
    let keep = is_meta_field(k, v);
    if keep
        && k == "metadata"
        && let Some(m) = v.as_object_mut()
    {
        m.retain(|f, _| OBJECT_META_FIELDS.contains(&f.as_str()));
    }
    keep
}

pub(super) fn skip_prune(x: &mut Value, s: &Value, embedded: bool) {
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

pub(super) fn non_nullable_null(v: &Value, s: &Value) -> bool {
    v.is_null() && !flag(s, "nullable")
}

pub(super) fn default(x: &mut Value, s: &Value) {
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

pub(super) fn prune_nulls(x: &mut Value, s: &Value) {
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
