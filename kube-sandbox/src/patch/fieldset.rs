//! Field sets in the real `fieldsV1` encoding and the comparison of two
//! objects over them (structured-merge-diff's `Set` and `Compare`), which
//! server-side apply and `managedFields` (`super::apply`) are built on.

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

use super::strategic::merge_key_for;

/// A set of field paths in `fieldsV1` shape.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct FieldSet {
    pub(super) own: bool,
    pub(super) children: BTreeMap<String, FieldSet>,
}

impl FieldSet {
    pub(super) fn from_json(v: &Value) -> FieldSet {
        let mut s = FieldSet::default();
        if let Value::Object(m) = v {
            for (k, c) in m {
                if k == "." {
                    s.own = true;
                } else {
                    let mut child = FieldSet::from_json(c);
                    if child.children.is_empty() {
                        child.own = true;
                    }
                    s.children.insert(k.clone(), child);
                }
            }
        }
        s
    }

    pub(super) fn to_json(&self) -> Value {
        let mut m = Map::new();
        if self.own && !self.children.is_empty() {
            m.insert(".".into(), json!({}));
        }
        for (k, c) in &self.children {
            if !c.is_empty() {
                m.insert(k.clone(), c.to_json());
            }
        }
        Value::Object(m)
    }

    pub(super) fn is_empty(&self) -> bool {
        !self.own && self.children.values().all(FieldSet::is_empty)
    }

    pub(super) fn insert(&mut self, path: &[String]) {
        match path.split_first() {
            None => self.own = true,
            Some((h, rest)) => self.children.entry(h.clone()).or_default().insert(rest),
        }
    }

    pub(super) fn union(&mut self, o: &FieldSet) {
        self.own |= o.own;
        for (k, c) in &o.children {
            self.children.entry(k.clone()).or_default().union(c);
        }
    }

    /// Paths owned here and not in `o`.
    pub(super) fn difference(&self, o: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            own: self.own && !o.own,
            children: BTreeMap::new(),
        };
        for (k, c) in &self.children {
            let d = match o.children.get(k) {
                Some(oc) => c.difference(oc),
                None => c.clone(),
            };
            if !d.is_empty() {
                out.children.insert(k.clone(), d);
            }
        }
        out
    }

    pub(super) fn intersection(&self, o: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            own: self.own && o.own,
            children: BTreeMap::new(),
        };
        for (k, c) in &self.children {
            if let Some(oc) = o.children.get(k) {
                let i = c.intersection(oc);
                if !i.is_empty() {
                    out.children.insert(k.clone(), i);
                }
            }
        }
        out
    }

    /// Drops the subtree at each of these top-level field names.
    pub(super) fn without_top(&self, names: &[&str]) -> FieldSet {
        let mut out = self.clone();
        for n in names {
            out.children.remove(&format!("f:{n}"));
        }
        out
    }

    /// Whether anything at or below `path` is owned.
    pub(super) fn owns_within(&self, path: &[String]) -> bool {
        match path.split_first() {
            None => !self.is_empty(),
            Some((h, rest)) => self.children.get(h).is_some_and(|c| c.owns_within(rest)),
        }
    }

    /// Every owned path, in set order.
    pub(super) fn paths(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        let mut cur = Vec::new();
        self.collect(&mut cur, &mut out);
        out
    }

    pub(super) fn collect(&self, cur: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        if self.own {
            out.push(cur.clone());
        }
        for (k, c) in &self.children {
            cur.push(k.clone());
            c.collect(cur, out);
            cur.pop();
        }
    }
}

/// A path as structured-merge-diff prints it: `.spec.conditions[type="Ready"].status`.
pub(super) fn path_string(path: &[String]) -> String {
    let mut s = String::new();
    for pe in path {
        if let Some(f) = pe.strip_prefix("f:") {
            s.push('.');
            s.push_str(f);
        } else if let Some(k) = pe.strip_prefix("k:") {
            let keys: Map<String, Value> = serde_json::from_str(k).unwrap_or_default();
            let parts: Vec<String> = keys
                .iter()
                .map(|(k, v)| format!("{k}={}", smd_value(v)))
                .collect();
            s.push_str(&format!("[{}]", parts.join(",")));
        } else if let Some(v) = pe.strip_prefix("v:") {
            let v: Value = serde_json::from_str(v).unwrap_or(Value::Null);
            s.push_str(&format!("[={}]", smd_value(&v)));
        } else if let Some(i) = pe.strip_prefix("i:") {
            s.push_str(&format!("[{i}]"));
        }
    }
    s
}

/// `value.ToString` of structured-merge-diff.
pub(super) fn smd_value(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::String(s) => crate::selector::quote(s),
        Value::Number(n) => crate::schema::go_number(n),
        Value::Bool(b) => b.to_string(),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(smd_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{k}={}", smd_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum ListKind {
    Atomic,
    Set,
    Map(Vec<String>),
}

/// What the field manager knows about the type at one position.
#[derive(Clone, Copy)]
pub(super) enum Shape<'a> {
    /// Described by a CRD schema node.
    Typed(&'a Value),
    /// A built-in kind's field (or ObjectMeta), known by its name.
    Builtin { field: &'a str, map_keys: bool },
    /// Untyped (preserved unknown fields): granular maps, atomic lists.
    Deduced,
}

const MAP_KEYED_FIELDS: [&str; 7] = [
    "labels",
    "annotations",
    "data",
    "stringData",
    "binaryData",
    "nodeSelector",
    "matchLabels",
];

impl<'a> Shape<'a> {
    pub(super) fn root(schema: Option<&'a Value>) -> Shape<'a> {
        match schema {
            Some(s) => Shape::Typed(s),
            None => Shape::Builtin {
                field: "",
                map_keys: false,
            },
        }
    }

    /// The shape of `key` of an object of this shape, and whether `key` is
    /// a declared field (rather than a key of a map).
    pub(super) fn child(&self, key: &'a str, at_root: bool) -> (Shape<'a>, bool) {
        if at_root && key == "metadata" {
            return (
                Shape::Builtin {
                    field: "metadata",
                    map_keys: false,
                },
                true,
            );
        }
        match self {
            Shape::Typed(s) => {
                if let Some(p) = s.get("properties").and_then(|p| p.get(key)) {
                    (Shape::Typed(p), true)
                } else if let Some(a) = s.get("additionalProperties").filter(|a| a.is_object()) {
                    (Shape::Typed(a), false)
                } else {
                    (Shape::Deduced, false)
                }
            }
            Shape::Builtin { field, map_keys } => {
                if *map_keys {
                    (Shape::Deduced, false)
                } else {
                    let _ = field;
                    (
                        Shape::Builtin {
                            field: key,
                            map_keys: MAP_KEYED_FIELDS.contains(&key),
                        },
                        true,
                    )
                }
            }
            Shape::Deduced => (Shape::Deduced, false),
        }
    }

    pub(super) fn items(&self) -> Shape<'a> {
        match self {
            Shape::Typed(s) => s.get("items").map_or(Shape::Deduced, Shape::Typed),
            Shape::Builtin { .. } => Shape::Builtin {
                field: "",
                map_keys: false,
            },
            Shape::Deduced => Shape::Deduced,
        }
    }

    pub(super) fn list_kind(&self) -> ListKind {
        match self {
            Shape::Typed(s) => match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("set") => ListKind::Set,
                Some("map") => ListKind::Map(
                    s.get("x-kubernetes-list-map-keys")
                        .and_then(Value::as_array)
                        .map(|k| {
                            k.iter()
                                .filter_map(Value::as_str)
                                .map(String::from)
                                .collect()
                        })
                        .unwrap_or_default(),
                ),
                _ => ListKind::Atomic,
            },
            Shape::Builtin { field, .. } => match merge_key_for(field) {
                Some("") => ListKind::Set,
                Some(k) => ListKind::Map(vec![k.to_string()]),
                None => ListKind::Atomic,
            },
            Shape::Deduced => ListKind::Atomic,
        }
    }

    pub(super) fn atomic_map(&self) -> bool {
        matches!(self, Shape::Typed(s) if s.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic"))
    }
}

/// The path element of a list item, or `None` when it cannot be keyed.
pub(super) fn item_pe(item: &Value, kind: &ListKind) -> Option<String> {
    match kind {
        ListKind::Atomic => None,
        ListKind::Set => Some(format!("v:{item}")),
        ListKind::Map(keys) => {
            let mut m = Map::new();
            for k in keys {
                if let Some(v) = item.get(k) {
                    m.insert(k.clone(), v.clone());
                }
            }
            if m.is_empty() {
                None
            } else {
                Some(format!("k:{}", Value::Object(m)))
            }
        }
    }
}

/// The applier's set: every scalar, atomic value, list item and map key.
pub(super) fn apply_set(
    v: &Value,
    shape: Shape<'_>,
    path: &mut Vec<String>,
    root: bool,
    out: &mut FieldSet,
) {
    match v {
        Value::Object(m) if !shape.atomic_map() => {
            for (k, x) in m {
                let (cs, declared) = shape.child(k, root);
                path.push(format!("f:{k}"));
                apply_set(x, cs, path, false, out);
                let empty_map = x.as_object().is_some_and(Map::is_empty);
                if x.is_null() || empty_map || !declared {
                    out.insert(path);
                }
                path.pop();
            }
        }
        Value::Array(a) => {
            let kind = shape.list_kind();
            if kind == ListKind::Atomic {
                out.insert(path);
                return;
            }
            for item in a {
                let Some(pe) = item_pe(item, &kind) else {
                    continue;
                };
                path.push(pe);
                apply_set(item, shape.items(), path, false, out);
                out.insert(path);
                path.pop();
            }
        }
        _ => {
            if !root {
                out.insert(path);
            }
        }
    }
}

/// Every node of a value (compound ones included), as an `Update` adding it owns it.
pub(super) fn all_nodes(
    v: &Value,
    shape: Shape<'_>,
    path: &mut Vec<String>,
    root: bool,
    out: &mut FieldSet,
) {
    if !root {
        out.insert(path);
    }
    match v {
        Value::Object(m) if !shape.atomic_map() => {
            for (k, x) in m {
                path.push(format!("f:{k}"));
                all_nodes(x, shape.child(k, root).0, path, false, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            let kind = shape.list_kind();
            if kind == ListKind::Atomic {
                return;
            }
            for item in a {
                let Some(pe) = item_pe(item, &kind) else {
                    continue;
                };
                path.push(pe);
                all_nodes(item, shape.items(), path, false, out);
                path.pop();
            }
        }
        _ => {}
    }
}

pub(super) fn keyed_items<'v>(a: &'v [Value], kind: &ListKind) -> Vec<(String, &'v Value)> {
    let mut out: Vec<(String, &Value)> = Vec::new();
    for item in a {
        if let Some(pe) = item_pe(item, kind)
            && !out.iter().any(|(p, _)| *p == pe)
        {
            out.push((pe, item));
        }
    }
    out
}

/// What changed between two objects, as structured-merge-diff's `Compare`.
#[derive(Default)]
pub(super) struct Comparison {
    pub(super) added: FieldSet,
    pub(super) modified: FieldSet,
    pub(super) removed: FieldSet,
}

pub(super) fn compare(
    old: Option<&Value>,
    new: Option<&Value>,
    shape: Shape<'_>,
    path: &mut Vec<String>,
    root: bool,
    c: &mut Comparison,
) {
    match (old, new) {
        (None, None) => {}
        (None, Some(n)) => all_nodes(n, shape, path, root, &mut c.added),
        (Some(o), None) => all_nodes(o, shape, path, root, &mut c.removed),
        (Some(Value::Object(o)), Some(Value::Object(n))) if !shape.atomic_map() => {
            let keys: std::collections::BTreeSet<&String> = o.keys().chain(n.keys()).collect();
            for k in keys {
                path.push(format!("f:{k}"));
                compare(o.get(k), n.get(k), shape.child(k, root).0, path, false, c);
                path.pop();
            }
        }
        (Some(Value::Array(o)), Some(Value::Array(n))) if shape.list_kind() != ListKind::Atomic => {
            let kind = shape.list_kind();
            let (oi, ni) = (keyed_items(o, &kind), keyed_items(n, &kind));
            let mut pes: Vec<&String> = oi.iter().map(|(p, _)| p).collect();
            for (p, _) in &ni {
                if !pes.contains(&p) {
                    pes.push(p);
                }
            }
            for pe in pes {
                let ov = oi.iter().find(|(p, _)| p == pe).map(|(_, v)| *v);
                let nv = ni.iter().find(|(p, _)| p == pe).map(|(_, v)| *v);
                path.push(pe.clone());
                compare(ov, nv, shape.items(), path, false, c);
                path.pop();
            }
        }
        (Some(o), Some(n)) => {
            if o != n && !root {
                c.modified.insert(path);
            }
        }
    }
}
