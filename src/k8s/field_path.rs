//! Field paths as a server-side apply conflict names them
//! (structured-merge-diff's `fieldpath.Path` string form:
//! `.spec.template.spec.containers[name="operator"].image`), resolved
//! against a manifest so `install` can leave a conflicting field to the
//! manager that changed it.

use serde_json::Value;

/// One step of a field path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// `.name`: a field of an object.
    Field(String),
    /// `[k=v,…]`: the item of a keyed list whose keys have these values.
    Key(Vec<(String, Value)>),
    /// `[=v]`: the item of a set list equal to this value.
    Item(Value),
    /// `[n]`: the n-th item of an atomic-by-index list.
    Index(usize),
}

/// Parses a path; None if it is not in the form the API server prints.
fn parse(path: &str) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return None;
            }
            steps.push(Step::Field(r[..end].to_owned()));
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let (inner, after) = split_bracket(r)?;
            steps.push(parse_bracket(inner)?);
            rest = after;
        } else {
            return None;
        }
    }
    (!steps.is_empty()).then_some(steps)
}

/// Splits `inner]rest` at the closing bracket, skipping brackets inside
/// JSON strings.
fn split_bracket(s: &str) -> Option<(&str, &str)> {
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            ']' if !in_string => return Some((&s[..i], &s[i + 1..])),
            _ => {}
        }
    }
    None
}

fn parse_bracket(inner: &str) -> Option<Step> {
    if let Some(v) = inner.strip_prefix('=') {
        return serde_json::from_str(v).ok().map(Step::Item);
    }
    if let Ok(i) = inner.parse::<usize>() {
        return Some(Step::Index(i));
    }
    // `k=v,k2=v2`, values in JSON; a comma inside a string value is data.
    let mut keys = Vec::new();
    let mut rest = inner;
    while !rest.is_empty() {
        let eq = rest.find('=')?;
        let key = rest[..eq].to_owned();
        let mut de = serde_json::Deserializer::from_str(&rest[eq + 1..]).into_iter::<Value>();
        let value = de.next()?.ok()?;
        let used = eq + 1 + de.byte_offset();
        keys.push((key, value));
        rest = rest[used..].strip_prefix(',').unwrap_or(&rest[used..]);
    }
    (!keys.is_empty()).then_some(Step::Key(keys))
}

fn child<'a>(node: &'a mut Value, step: &Step) -> Option<&'a mut Value> {
    match (step, node) {
        (Step::Field(name), Value::Object(map)) => map.get_mut(name),
        (Step::Key(keys), Value::Array(items)) => items
            .iter_mut()
            .find(|item| keys.iter().all(|(k, v)| item.get(k) == Some(v))),
        (Step::Item(value), Value::Array(items)) => items.iter_mut().find(|item| *item == value),
        (Step::Index(i), Value::Array(items)) => items.get_mut(*i),
        _ => None,
    }
}

/// The value at `path` in `doc`, if the path parses and leads somewhere.
pub fn get(doc: &Value, path: &str) -> Option<Value> {
    let steps = parse(path)?;
    let mut copy = doc.clone();
    let mut node = &mut copy;
    for step in &steps {
        node = child(node, step)?;
    }
    Some(node.take())
}

/// Removes the value at `path` from `doc`. False if the path does not
/// parse or does not lead to a value.
pub fn remove(doc: &mut Value, path: &str) -> bool {
    let Some(steps) = parse(path) else {
        return false;
    };
    let (last, parents) = steps.split_last().expect("parse returns a step");
    let mut node = &mut *doc;
    for step in parents {
        match child(node, step) {
            Some(next) => node = next,
            None => return false,
        }
    }
    match (last, node) {
        (Step::Field(name), Value::Object(map)) => map.remove(name).is_some(),
        (Step::Key(keys), Value::Array(items)) => {
            let before = items.len();
            items.retain(|item| !keys.iter().all(|(k, v)| item.get(k) == Some(v)));
            items.len() < before
        }
        (Step::Item(value), Value::Array(items)) => {
            let before = items.len();
            items.retain(|item| item != value);
            items.len() < before
        }
        // Removing by index would shift the items after it: not a field
        // this client can hand over.
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment() -> Value {
        json!({
            "spec": {
                "replicas": 2,
                "template": { "spec": { "containers": [
                    { "name": "operator", "image": "a", "ports": [
                        { "containerPort": 8080, "protocol": "TCP", "name": "http" },
                    ] },
                    { "name": "side", "image": "b", "args": ["x", "y"] },
                ] } },
            },
        })
    }

    #[test]
    fn removes_fields_keyed_items_and_set_items() {
        let mut d = deployment();
        assert!(remove(&mut d, ".spec.replicas"));
        assert!(d["spec"].get("replicas").is_none());
        assert!(remove(
            &mut d,
            ".spec.template.spec.containers[name=\"operator\"].image"
        ));
        let containers = &d["spec"]["template"]["spec"]["containers"];
        assert!(containers[0].get("image").is_none());
        assert_eq!(containers[1]["image"], "b");
        assert!(remove(
            &mut d,
            ".spec.template.spec.containers[name=\"operator\"].ports[containerPort=8080,protocol=\"TCP\"]"
        ));
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][0]["ports"],
            json!([])
        );
        assert!(remove(
            &mut d,
            ".spec.template.spec.containers[name=\"side\"].args[=\"x\"]"
        ));
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][1]["args"],
            json!(["y"])
        );
    }

    #[test]
    fn reads_what_it_can_remove() {
        let d = deployment();
        assert_eq!(
            get(&d, ".spec.template.spec.containers[name=\"side\"].image"),
            Some(json!("b"))
        );
        assert_eq!(get(&d, ".spec.replicas"), Some(json!(2)));
    }

    #[test]
    fn unknown_or_malformed_paths_remove_nothing() {
        let mut d = deployment();
        for path in [
            ".spec.paused",
            ".spec.template.spec.containers[name=\"nope\"].image",
            "spec.replicas",
            ".spec.template.spec.containers[name=\"operator\"",
            ".spec.template.spec.containers[0]",
            "",
        ] {
            assert!(!remove(&mut d, path), "{path}");
        }
        assert_eq!(d, deployment());
    }

    #[test]
    fn brackets_and_commas_inside_values_are_data() {
        let mut d = json!({ "l": [{ "k": "a],b=c", "v": 1 }] });
        assert!(remove(&mut d, ".l[k=\"a],b=c\"].v"));
        assert_eq!(d, json!({ "l": [{ "k": "a],b=c" }] }));
    }
}
