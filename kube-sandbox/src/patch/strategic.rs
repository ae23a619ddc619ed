//! Strategic merge patch (see the module docs of `crate::patch`).

use crate::errors::ApiError;
use serde_json::{Map, Value};

/// The patch strategy of a list field in the built-in kinds: `Some(key)`
/// for lists of maps merged by `key`, `Some("")` for primitive lists merged
/// as sets, `None` for lists that a patch replaces.
pub fn merge_key_for(field: &str) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "imagePullSecrets"
        | "resourceClaims" => "name",
        "ports" => "containerPort",
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        "conditions" | "addresses" => "type",
        "ownerReferences" => "uid",
        "hostAliases" => "ip",
        "podIPs" | "hostIPs" => "ip",
        "topologySpreadConstraints" => "topologyKey",
        "finalizers" | "podCIDRs" => "",
        _ => return None,
    })
}

const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

/// `application/strategic-merge-patch+json` (merge semantics plus the
/// `$patch`/list-merge-key handling this module documents).
///
/// On error `target` is left unchanged.
pub fn strategic_merge_patch(target: &mut Value, patch: &Value) -> Result<(), ApiError> {
    let Value::Object(patch) = patch else {
        return Err(ApiError::bad_request("invalid JSON document"));
    };
    let original = match target {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    let merged = smp_map(original, patch.clone()).map_err(SmpError::into_api)?;
    *target = Value::Object(merged);
    Ok(())
}

/// Failures of a strategic merge patch, mapped to statuses as the real
/// server's `interpretStrategicMergePatchError` does.
enum SmpError {
    BadRequest(&'static str),
    Internal(String),
}

impl SmpError {
    fn into_api(self) -> ApiError {
        match self {
            SmpError::BadRequest(m) => ApiError::bad_request(m),
            SmpError::Internal(m) => ApiError::internal(m),
        }
    }
}

fn go_type_name(v: &Value) -> &'static str {
    match v {
        Value::Object(_) => "map[string]interface {}",
        Value::Array(_) => "[]interface {}",
        Value::String(_) => "string",
        Value::Number(_) => "float64",
        Value::Bool(_) => "bool",
        Value::Null => "<nil>",
    }
}

fn smp_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
) -> Result<Map<String, Value>, SmpError> {
    if let Some(d) = patch.remove(DIRECTIVE) {
        return match d.as_str() {
            Some("replace") => Ok(patch),
            Some("delete") => Ok(Map::new()),
            _ => Err(SmpError::Internal(format!(
                "unknown patch type: {} in map: {}",
                d.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| d.to_string()),
                Value::Object(patch)
            ))),
        };
    }
    if let Some(retain) = patch.remove(RETAIN_KEYS) {
        let Value::Array(keys) = retain else {
            return Err(SmpError::BadRequest("invalid patch format of retainKeys"));
        };
        let keys: Vec<&str> = keys.iter().filter_map(Value::as_str).collect();
        for (k, v) in &patch {
            if v.is_null()
                || k.starts_with(DELETE_FROM_PRIMITIVE_LIST)
                || k.starts_with(SET_ELEMENT_ORDER)
            {
                continue;
            }
            if !keys.contains(&k.as_str()) {
                return Err(SmpError::BadRequest("invalid patch format of retainKeys"));
            }
        }
        original.retain(|k, _| keys.contains(&k.as_str()));
    }
    // `$setElementOrder/field` merges that field and reorders it.
    let orders: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER))
        .cloned()
        .collect();
    for key in orders {
        let order = patch.remove(&key).unwrap_or(Value::Null);
        let Value::Array(order) = order else {
            return Err(SmpError::BadRequest(
                "invalid patch format of setElementOrder list",
            ));
        };
        let field = &key[SET_ELEMENT_ORDER.len()..];
        let merge_key = merge_key_for(field).unwrap_or("");
        let orig_list = original.get(field).and_then(Value::as_array).cloned();
        let patch_list = patch.remove(field);
        let merged = match (orig_list.clone(), patch_list) {
            (Some(o), None) => o,
            (None, Some(Value::Array(p))) => {
                let Some(Value::Array(v)) = remove_directives(Value::Array(p)) else {
                    continue;
                };
                v
            }
            (Some(o), Some(Value::Array(p))) => smp_list(o, p, merge_key, field)?,
            (None, None) => continue,
            (_, Some(other)) => {
                return Err(SmpError::Internal(format!(
                    "expected a []interface {{}}, but received a {}",
                    go_type_name(&other)
                )));
            }
        };
        let (in_order, server_only): (Vec<Value>, Vec<Value>) = merged
            .into_iter()
            .partition(|v| index_of(&order, v, merge_key).is_some());
        let all = normalize_order(
            in_order,
            server_only,
            &order,
            &orig_list.unwrap_or_default(),
            merge_key,
        );
        original.insert(field.to_string(), Value::Array(all));
    }
    for (k, pv) in patch {
        let (k, is_delete_list) = match k.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            Some(field) => (field.to_string(), true),
            None => (k, false),
        };
        if pv.is_null() {
            original.remove(&k);
            continue;
        }
        let Some(ov) = original.get(&k) else {
            if !is_delete_list && let Some(v) = remove_directives(discard_nulls(pv)) {
                original.insert(k, v);
            }
            continue;
        };
        let same_type = std::mem::discriminant(ov) == std::mem::discriminant(&pv);
        if !same_type {
            if !is_delete_list {
                match remove_directives(discard_nulls(pv)) {
                    Some(v) => original.insert(k, v),
                    None => original.remove(&k),
                };
            }
            continue;
        }
        let ov = original.remove(&k).unwrap_or(Value::Null);
        let merged = match (ov, pv) {
            (Value::Object(o), Value::Object(p)) => Value::Object(smp_map(o, p)?),
            (Value::Array(o), Value::Array(p)) => {
                if is_delete_list {
                    Value::Array(o.into_iter().filter(|v| !p.contains(v)).collect())
                } else if let Some(mk) = merge_key_for(&k) {
                    Value::Array(smp_list(o, p, mk, &k)?)
                } else {
                    match remove_directives(Value::Array(p)) {
                        Some(v) => v,
                        None => continue,
                    }
                }
            }
            (_, p) => match remove_directives(p) {
                Some(v) => v,
                None => continue,
            },
        };
        original.insert(k, merged);
    }
    Ok(original)
}

/// Drops maps carrying `$patch` (and list items that are such maps), as the
/// real server does for values that have nothing to merge with.
fn remove_directives(v: Value) -> Option<Value> {
    match v {
        Value::Object(m) => {
            if m.contains_key(DIRECTIVE) {
                return None;
            }
            Some(Value::Object(
                m.into_iter()
                    .filter_map(|(k, v)| remove_directives(v).map(|v| (k, v)))
                    .collect(),
            ))
        }
        Value::Array(a) => Some(Value::Array(
            a.into_iter().filter_map(remove_directives).collect(),
        )),
        other => Some(other),
    }
}

fn discard_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, discard_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(discard_nulls).collect()),
        other => other,
    }
}

fn key_of<'a>(v: &'a Value, merge_key: &str) -> Option<&'a Value> {
    if merge_key.is_empty() {
        Some(v)
    } else {
        v.get(merge_key)
    }
}

fn index_of(list: &[Value], item: &Value, merge_key: &str) -> Option<usize> {
    let want = key_of(item, merge_key)?;
    list.iter().position(|v| key_of(v, merge_key) == Some(want))
}

/// Merges a patch list into a list with a merge strategy (`merge_key` ""
/// for primitive sets).
fn smp_list(
    original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
    field: &str,
) -> Result<Vec<Value>, SmpError> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let maps = original
        .first()
        .or(patch.first())
        .is_some_and(Value::is_object);
    let (merged, patch) = if !maps {
        let mut both = original.clone();
        for v in &patch {
            if !both.contains(v) {
                both.push(v.clone());
            }
        }
        (both, patch)
    } else {
        if merge_key.is_empty() {
            return Err(SmpError::Internal(format!(
                "cannot merge lists without merge key for {field}"
            )));
        }
        let mut orig = original.clone();
        let mut plain = Vec::new();
        let mut replace = false;
        for v in patch {
            let Value::Object(m) = &v else {
                return Err(SmpError::Internal(format!(
                    "expected a map[string]interface {{}}, but received a {}",
                    go_type_name(&v)
                )));
            };
            match m.get(DIRECTIVE).map(|d| d.as_str().unwrap_or_default()) {
                None => plain.push(v),
                Some("delete") => {
                    let Some(kv) = m.get(merge_key) else {
                        return Err(no_merge_key(m, merge_key));
                    };
                    orig.retain(|o| o.get(merge_key) != Some(kv));
                }
                Some("replace") => replace = true,
                Some("merge") => {
                    return Err(SmpError::Internal(
                        "merging lists cannot yet be specified in the patch".into(),
                    ));
                }
                Some(other) => {
                    return Err(SmpError::Internal(format!(
                        "unknown patch type: {other} in map: {}",
                        Value::Object(m.clone())
                    )));
                }
            }
        }
        if replace {
            return Ok(plain);
        }
        for p in &plain {
            let Value::Object(pm) = p else { continue };
            let Some(kv) = pm.get(merge_key) else {
                return Err(no_merge_key(pm, merge_key));
            };
            match orig.iter().position(|o| o.get(merge_key) == Some(kv)) {
                Some(i) => {
                    let o = match std::mem::take(&mut orig[i]) {
                        Value::Object(o) => o,
                        _ => Map::new(),
                    };
                    orig[i] = Value::Object(smp_map(o, pm.clone())?);
                }
                None => orig.push(p.clone()),
            }
        }
        (orig, plain)
    };
    let (in_patch, server_only): (Vec<Value>, Vec<Value>) = merged
        .into_iter()
        .partition(|v| index_of(&patch, v, merge_key).is_some());
    Ok(normalize_order(
        in_patch,
        server_only,
        &patch,
        &original,
        merge_key,
    ))
}

fn no_merge_key(m: &Map<String, Value>, key: &str) -> SmpError {
    SmpError::Internal(format!(
        "map: {} does not contain declared merge key: {key}",
        Value::Object(m.clone())
    ))
}

/// The real element order: patch items sorted by the patch order, server
/// items by the server order, then interleaved by server position, with
/// items the server does not have placed first.
fn normalize_order(
    mut patch_items: Vec<Value>,
    mut server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
) -> Vec<Value> {
    let pos = |order: &[Value], v: &Value| index_of(order, v, merge_key).unwrap_or(usize::MAX);
    patch_items.sort_by_key(|v| pos(patch_order, v));
    server_only.sort_by_key(|v| pos(server_order, v));
    let mut out = Vec::with_capacity(patch_items.len() + server_only.len());
    let (mut l, mut r) = (
        server_only.into_iter().peekable(),
        patch_items.into_iter().peekable(),
    );
    loop {
        match (l.peek(), r.peek()) {
            (None, None) => break,
            (Some(_), None) => out.extend(l.next()),
            (None, Some(_)) => out.extend(r.next()),
            (Some(a), Some(b)) => {
                let (ia, ib) = (
                    index_of(server_order, a, merge_key),
                    index_of(server_order, b, merge_key),
                );
                match (ia, ib) {
                    (Some(ia), Some(ib)) if ia < ib => out.extend(l.next()),
                    _ => out.extend(r.next()),
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn smp(t: Value, p: Value) -> Value {
        let mut t = t;
        strategic_merge_patch(&mut t, &p).unwrap_or_else(|e| panic!("{p}: {e}"));
        t
    }

    #[test]
    fn smp_merges_maps_and_replaces_unkeyed_lists() {
        let t = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"args": ["x", "y"], "n": 1}});
        let got = smp(
            t,
            json!({"metadata": {"labels": {"a": null, "c": "3"}}, "spec": {"args": ["z"], "gone": null}}),
        );
        assert_eq!(
            got,
            json!({"metadata": {"labels": {"b": "2", "c": "3"}}, "spec": {"args": ["z"], "n": 1}})
        );
    }

    #[test]
    fn smp_merges_containers_by_name_in_the_real_order() {
        let t = json!({"spec": {"containers": [
            {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}]},
            {"name": "b", "image": "b:1"}]}});
        // Every item named by the patch: the patch order wins.
        let got = smp(
            t.clone(),
            json!({"spec": {"containers": [
            {"name": "b", "image": "b:2"},
            {"name": "a", "env": [{"name": "Y", "value": "2"}]},
            {"name": "c", "image": "c:1"}]}}),
        );
        assert_eq!(
            got,
            json!({"spec": {"containers": [
            {"name": "b", "image": "b:2"},
            {"name": "a", "image": "a:1", "env": [{"name": "Y", "value": "2"}, {"name": "X", "value": "1"}]},
            {"name": "c", "image": "c:1"}]}})
        );
        // New items go before server items, known ones keep the server order.
        let got = smp(
            t,
            json!({"spec": {"containers": [{"name": "c"}, {"name": "b", "image": "b:2"}]}}),
        );
        let names: Vec<&str> = got["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["c", "a", "b"]);
        assert_eq!(got["spec"]["containers"][2]["image"], "b:2");
    }

    #[test]
    fn smp_list_directives() {
        let t = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]}});
        let got = smp(
            t.clone(),
            json!({"status": {"conditions": [{"type": "Synced", "$patch": "delete"}]}}),
        );
        assert_eq!(
            got,
            json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
        );
        let got = smp(
            t.clone(),
            json!({"status": {"conditions": [{"type": "New", "status": "True"}, {"$patch": "replace"}]}}),
        );
        assert_eq!(
            got,
            json!({"status": {"conditions": [{"type": "New", "status": "True"}]}})
        );
        let got = smp(
            t,
            json!({"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "X"}]}}),
        );
        assert_eq!(
            got["status"]["conditions"][0],
            json!({"type": "Ready", "status": "False", "reason": "X"})
        );
        assert_eq!(got["status"]["conditions"][1]["type"], "Synced");
    }

    #[test]
    fn smp_map_directives() {
        let t = json!({"data": {"a": "1", "b": "2"}, "spec": {"x": 1}});
        assert_eq!(
            smp(t.clone(), json!({"data": {"$patch": "replace", "c": "3"}})),
            json!({"data": {"c": "3"}, "spec": {"x": 1}})
        );
        assert_eq!(
            smp(t.clone(), json!({"data": {"$patch": "delete"}})),
            json!({"data": {}, "spec": {"x": 1}})
        );
        assert_eq!(
            smp(t.clone(), json!({"$patch": "replace", "kind": "X"})),
            json!({"kind": "X"})
        );
        assert_eq!(
            smp(
                t.clone(),
                json!({"data": {"$retainKeys": ["b", "c"], "c": "3"}})
            ),
            json!({"data": {"b": "2", "c": "3"}, "spec": {"x": 1}})
        );
        assert_eq!(
            smp(
                t,
                json!({"new": {"x": {"$patch": "delete"}, "y": null, "z": 1}})
            ),
            json!({"data": {"a": "1", "b": "2"}, "spec": {"x": 1}, "new": {"z": 1}})
        );
    }

    #[test]
    fn smp_finalizers_are_a_set_union_and_support_delete_from_primitive_list() {
        let t = json!({"metadata": {"finalizers": ["a", "b"]}});
        assert_eq!(
            smp(t.clone(), json!({"metadata": {"finalizers": ["b", "c"]}})),
            json!({"metadata": {"finalizers": ["a", "b", "c"]}})
        );
        assert_eq!(
            smp(t.clone(), json!({"metadata": {"finalizers": ["c"]}})),
            json!({"metadata": {"finalizers": ["c", "a", "b"]}})
        );
        assert_eq!(
            smp(
                t,
                json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}})
            ),
            json!({"metadata": {"finalizers": ["b"]}})
        );
    }

    #[test]
    fn smp_set_element_order_reorders() {
        let t = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
        let got = smp(
            t,
            json!({"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}], "containers": [{"name": "b", "image": "x"}]}}),
        );
        assert_eq!(
            got,
            json!({"spec": {"containers": [{"name": "b", "image": "x"}, {"name": "a"}]}})
        );
    }

    #[test]
    fn smp_errors_map_to_real_statuses() {
        let t = json!({"data": {"a": "1"}, "status": {"conditions": [{"type": "A"}]}});
        let cases = [
            (
                json!({"data": {"$retainKeys": ["a"], "b": "2"}}),
                400,
                "invalid patch format of retainKeys",
            ),
            (
                json!({"data": {"$patch": "bogus"}}),
                500,
                "unknown patch type: bogus in map: {}",
            ),
            (
                json!({"status": {"conditions": [{"status": "x"}]}}),
                500,
                "map: {\"status\":\"x\"} does not contain declared merge key: type",
            ),
            (json!([]), 400, "invalid JSON document"),
        ];
        for (p, code, msg) in cases {
            let mut tt = t.clone();
            let e = strategic_merge_patch(&mut tt, &p).unwrap_err();
            assert_eq!((e.code, e.message.as_str()), (code, msg), "{p}");
            assert_eq!(tt, t);
        }
    }
}
