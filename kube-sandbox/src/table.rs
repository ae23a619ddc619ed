//! Server-side `meta.k8s.io/v1` Table responses (what `kubectl get` prints),
//! with CRD `additionalPrinterColumns` evaluated from their JSONPaths.
//!
//! Follows apiextensions-apiserver's table convertor: a `Name` column (format
//! `name`) then the printer columns in order, or `Name` and `Age` when a
//! version declares none; each cell takes the *first* JSONPath match
//! (missing → `null`); `string` columns print any value as kubectl's
//! JSONPath printer does (maps and lists as JSON), `integer`, `number` and
//! `boolean` columns keep only values of their type, and `date` columns
//! become human ages (`45s`, `5m30s`, `3h`, `12d`, `<invalid>` for an
//! unparsable time) like `HumanDuration`. Built-in kinds get the columns of
//! kube-apiserver's printers ([`printers`]).

use serde_json::{Value, json};

mod printers;
pub use printers::{Computed, builtin_columns, is_default_convertor};

/// One column of a Table (`columnDefinitions[]`) and where its cells come from.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    /// `string`, `integer`, `number`, `boolean`, `date`.
    pub type_: String,
    pub format: String,
    pub description: String,
    pub priority: i64,
    /// JSONPath of the cell (`.status.phase`); `None` for the Name column
    /// and computed cells.
    pub json_path: Option<String>,
    /// A cell a built-in printer computes from several fields.
    pub computed: Option<Computed>,
}

const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const CREATION_TIMESTAMP_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

fn name_column() -> Column {
    Column {
        name: "Name".into(),
        type_: "string".into(),
        format: "name".into(),
        description: NAME_DESCRIPTION.into(),
        priority: 0,
        json_path: None,
        computed: None,
    }
}

fn age_column() -> Column {
    Column {
        name: "Age".into(),
        type_: "date".into(),
        format: String::new(),
        description: CREATION_TIMESTAMP_DESCRIPTION.into(),
        priority: 0,
        json_path: Some(".metadata.creationTimestamp".into()),
        computed: None,
    }
}

/// Columns for a CRD version: Name plus its `additionalPrinterColumns`, or
/// Name and Age when it declares none (the real server's default).
pub fn columns_for_crd_version(version: &Value) -> Vec<Column> {
    let declared = version["additionalPrinterColumns"]
        .as_array()
        .filter(|c| !c.is_empty());
    let Some(declared) = declared else {
        return default_columns();
    };
    let mut cols = vec![name_column()];
    for c in declared {
        let path = c["jsonPath"].as_str().unwrap_or_default().to_string();
        let description = match c["description"].as_str() {
            Some(d) if !d.is_empty() => d.to_string(),
            _ => format!("Custom resource definition column (in JSONPath format): {path}"),
        };
        cols.push(Column {
            name: c["name"].as_str().unwrap_or_default().to_string(),
            type_: c["type"].as_str().unwrap_or_default().to_string(),
            format: c["format"].as_str().unwrap_or_default().to_string(),
            description,
            priority: c["priority"].as_i64().unwrap_or(0),
            json_path: Some(path),
            computed: None,
        });
    }
    cols
}

/// Name and Age: CRD versions without printer columns (and any built-in
/// kind [`builtin_columns`] does not know).
pub fn default_columns() -> Vec<Column> {
    vec![name_column(), age_column()]
}

/// What each row carries in `object` (`?includeObject=None|Metadata|Object`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeObject {
    None,
    #[default]
    Metadata,
    Object,
}

impl IncludeObject {
    /// Parses the `includeObject` query parameter (empty = the default).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "" | "Metadata" => Some(IncludeObject::Metadata),
            "None" => Some(IncludeObject::None),
            "Object" => Some(IncludeObject::Object),
            _ => None,
        }
    }
}

/// Builds the Table for `objects`. `list_metadata` is the list's
/// `metadata` (resourceVersion, continue). `now` formats `date` cells as ages.
pub fn to_table(
    columns: &[Column],
    objects: &[Value],
    include: IncludeObject,
    list_metadata: Value,
    now: jiff::Timestamp,
) -> Value {
    let defs: Vec<Value> = columns
        .iter()
        .map(|c| {
            json!({"name": c.name, "type": c.type_, "format": c.format,
                   "description": c.description, "priority": c.priority})
        })
        .collect();
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let cells: Vec<Value> = columns.iter().map(|c| cell(c, o, now)).collect();
            let object = match include {
                IncludeObject::None => Value::Null,
                IncludeObject::Object => o.clone(),
                IncludeObject::Metadata => json!({
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": o.get("metadata").cloned().unwrap_or_else(|| json!({})),
                }),
            };
            json!({"cells": cells, "object": object})
        })
        .collect();
    // The default convertor appends to a nil slice; the printers make one.
    let rows = if rows.is_empty() && is_default_convertor(columns) {
        Value::Null
    } else {
        Value::Array(rows)
    };
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_metadata,
        "columnDefinitions": defs,
        "rows": rows,
    })
}

fn cell(c: &Column, obj: &Value, now: jiff::Timestamp) -> Value {
    if let Some(computed) = c.computed {
        return printers::computed_cell(computed, obj, now);
    }
    let Some(path) = &c.json_path else {
        return obj["metadata"]["name"].clone();
    };
    let Some(v) = json_path(obj, path).into_iter().next() else {
        return Value::Null;
    };
    match c.type_.as_str() {
        "string" => match &v {
            Value::Null => Value::Null,
            Value::String(s) => Value::String(s.clone()),
            Value::Number(n) => Value::String(crate::schema::go_number(n)),
            other => Value::String(other.to_string()),
        },
        "integer" => match &v {
            Value::Number(n) => n
                .as_i64()
                .or_else(|| n.as_f64().map(|f| f as i64))
                .map_or(Value::Null, Value::from),
            _ => Value::Null,
        },
        "number" => match &v {
            Value::Number(n) if n.is_f64() => v.clone(),
            Value::Number(n) => n.as_i64().map_or(v.clone(), Value::from),
            _ => Value::Null,
        },
        "boolean" => match &v {
            Value::Bool(_) => v,
            _ => Value::Null,
        },
        "date" => match &v {
            Value::String(s) => match s.parse::<jiff::Timestamp>() {
                Ok(t) => Value::String(human_duration(now.duration_since(t).as_secs())),
                Err(_) => Value::String("<invalid>".into()),
            },
            _ => Value::Null,
        },
        _ => Value::Null,
    }
}

/// An age as apimachinery's `HumanDuration` prints it.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

// ---------------------------------------------------------------------------
// JSONPath

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    /// `..field`: every descendant's `field`.
    Recursive(String),
    Index(i64),
    Slice(Option<i64>, Option<i64>),
    Wildcard,
    Filter(Filter),
}

#[derive(Debug, Clone, PartialEq)]
struct Filter {
    /// Path relative to `@`.
    path: Vec<Step>,
    /// `None`: existence test.
    cmp: Option<(String, Value)>,
}

/// Evaluates a Kubernetes JSONPath (`.a.b`, `.a[0]`, `.a[*].b`,
/// `.a[?(@.type=="Ready")].status`) against an object; the matched values.
///
/// Also accepted: an optional `{...}` wrapper, `$` at the start,
/// `['key.with.dots']` and `\.` escapes in field names, negative indices,
/// slices `[1:3]`, `..field`. Missing keys and out-of-range indices match
/// nothing, as with `AllowMissingKeys(true)`; an unparsable path matches nothing.
pub fn json_path(obj: &Value, path: &str) -> Vec<Value> {
    let Ok(steps) = parse_path(path) else {
        return Vec::new();
    };
    let mut cur = vec![obj.clone()];
    for s in &steps {
        cur = apply(s, cur);
    }
    cur
}

fn parse_path(path: &str) -> Result<Vec<Step>, String> {
    let mut p = path.trim();
    if let Some(inner) = p.strip_prefix('{').and_then(|x| x.strip_suffix('}')) {
        p = inner.trim();
    }
    let p = p.strip_prefix('$').unwrap_or(p);
    let chars: Vec<char> = p.chars().collect();
    let mut i = 0;
    parse_steps(&chars, &mut i, false)
}

fn parse_steps(c: &[char], i: &mut usize, in_filter: bool) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    while *i < c.len() {
        match c[*i] {
            '.' => {
                *i += 1;
                let recursive = *i < c.len() && c[*i] == '.';
                if recursive {
                    *i += 1;
                }
                if *i < c.len() && c[*i] == '*' {
                    *i += 1;
                    steps.push(Step::Wildcard);
                    continue;
                }
                if *i < c.len() && c[*i] == '[' {
                    continue;
                }
                let name = field_name(c, i, in_filter);
                if name.is_empty() {
                    if recursive || *i < c.len() {
                        return Err("empty field name".into());
                    }
                    continue;
                }
                steps.push(if recursive {
                    Step::Recursive(name)
                } else {
                    Step::Field(name)
                });
            }
            '[' => {
                *i += 1;
                let start = *i;
                if *i < c.len() && (c[*i] == '\'' || c[*i] == '"') {
                    let q = c[*i];
                    *i += 1;
                    let s = *i;
                    while *i < c.len() && c[*i] != q {
                        *i += 1;
                    }
                    let name: String = c[s..*i].iter().collect();
                    *i += 1;
                    expect(c, i, ']')?;
                    steps.push(Step::Field(name));
                    continue;
                }
                if *i < c.len() && c[*i] == '?' {
                    *i += 1;
                    expect(c, i, '(')?;
                    let f = parse_filter(c, i)?;
                    expect(c, i, ')')?;
                    expect(c, i, ']')?;
                    steps.push(Step::Filter(f));
                    continue;
                }
                while *i < c.len() && c[*i] != ']' {
                    *i += 1;
                }
                let inner: String = c[start..*i].iter().collect::<String>().trim().to_string();
                expect(c, i, ']')?;
                if inner == "*" {
                    steps.push(Step::Wildcard);
                } else if let Some((a, b)) = inner.split_once(':') {
                    let num = |s: &str| -> Result<Option<i64>, String> {
                        let s = s.split(':').next().unwrap_or_default().trim();
                        if s.is_empty() {
                            Ok(None)
                        } else {
                            s.parse().map(Some).map_err(|_| format!("bad index {s}"))
                        }
                    };
                    steps.push(Step::Slice(num(a)?, num(b)?));
                } else {
                    steps.push(Step::Index(
                        inner.parse().map_err(|_| format!("bad index {inner}"))?,
                    ));
                }
            }
            _ if in_filter => break,
            ch => return Err(format!("unexpected {ch}")),
        }
    }
    Ok(steps)
}

fn expect(c: &[char], i: &mut usize, want: char) -> Result<(), String> {
    while *i < c.len() && c[*i] == ' ' {
        *i += 1;
    }
    if *i < c.len() && c[*i] == want {
        *i += 1;
        Ok(())
    } else {
        Err(format!("expected {want}"))
    }
}

fn field_name(c: &[char], i: &mut usize, in_filter: bool) -> String {
    let mut name = String::new();
    while *i < c.len() {
        let ch = c[*i];
        if ch == '\\' && *i + 1 < c.len() {
            name.push(c[*i + 1]);
            *i += 2;
            continue;
        }
        if ch == '.' || ch == '[' || (in_filter && matches!(ch, ' ' | '=' | '!' | '<' | '>' | ')'))
        {
            break;
        }
        name.push(ch);
        *i += 1;
    }
    name
}

fn parse_filter(c: &[char], i: &mut usize) -> Result<Filter, String> {
    while *i < c.len() && c[*i] == ' ' {
        *i += 1;
    }
    if *i >= c.len() || c[*i] != '@' {
        return Err("filter must start with @".into());
    }
    *i += 1;
    let path = parse_steps(c, i, true)?;
    while *i < c.len() && c[*i] == ' ' {
        *i += 1;
    }
    let mut op = String::new();
    while *i < c.len() && matches!(c[*i], '=' | '!' | '<' | '>') {
        op.push(c[*i]);
        *i += 1;
    }
    if op.is_empty() {
        return Ok(Filter { path, cmp: None });
    }
    while *i < c.len() && c[*i] == ' ' {
        *i += 1;
    }
    let value = if *i < c.len() && (c[*i] == '\'' || c[*i] == '"') {
        let q = c[*i];
        *i += 1;
        let s = *i;
        while *i < c.len() && c[*i] != q {
            *i += 1;
        }
        let v: String = c[s..*i].iter().collect();
        *i += 1;
        Value::String(v)
    } else {
        let s = *i;
        while *i < c.len() && c[*i] != ')' && c[*i] != ' ' {
            *i += 1;
        }
        let lit: String = c[s..*i].iter().collect();
        serde_json::from_str(&lit).map_err(|_| format!("bad literal {lit}"))?
    };
    Ok(Filter {
        path,
        cmp: Some((op, value)),
    })
}

fn apply(step: &Step, cur: Vec<Value>) -> Vec<Value> {
    let mut out = Vec::new();
    for v in cur {
        match step {
            Step::Field(f) => {
                if let Some(x) = v.get(f) {
                    out.push(x.clone());
                }
            }
            Step::Recursive(f) => collect_recursive(&v, f, &mut out),
            Step::Index(n) => {
                if let Value::Array(a) = &v {
                    let idx = if *n < 0 { a.len() as i64 + n } else { *n };
                    if idx >= 0
                        && let Some(x) = a.get(idx as usize)
                    {
                        out.push(x.clone());
                    }
                }
            }
            Step::Slice(a, b) => {
                if let Value::Array(arr) = &v {
                    let len = arr.len() as i64;
                    let norm = |x: i64| if x < 0 { (len + x).max(0) } else { x.min(len) };
                    let s = norm(a.unwrap_or(0));
                    let e = norm(b.unwrap_or(len));
                    if s < e {
                        out.extend(arr[s as usize..e as usize].iter().cloned());
                    }
                }
            }
            Step::Wildcard => match &v {
                Value::Array(a) => out.extend(a.iter().cloned()),
                Value::Object(m) => out.extend(m.values().cloned()),
                _ => {}
            },
            Step::Filter(f) => {
                let items: Vec<Value> = match &v {
                    Value::Array(a) => a.clone(),
                    Value::Object(m) => m.values().cloned().collect(),
                    _ => Vec::new(),
                };
                out.extend(items.into_iter().filter(|item| filter_matches(f, item)));
            }
        }
    }
    out
}

fn collect_recursive(v: &Value, f: &str, out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => {
            if let Some(x) = m.get(f) {
                out.push(x.clone());
            }
            for x in m.values() {
                collect_recursive(x, f, out);
            }
        }
        Value::Array(a) => {
            for x in a {
                collect_recursive(x, f, out);
            }
        }
        _ => {}
    }
}

fn filter_matches(f: &Filter, item: &Value) -> bool {
    let mut cur = vec![item.clone()];
    for s in &f.path {
        cur = apply(s, cur);
    }
    let Some((op, want)) = &f.cmp else {
        return !cur.is_empty();
    };
    cur.iter().any(|have| compare(have, op, want))
}

fn compare(have: &Value, op: &str, want: &Value) -> bool {
    use std::cmp::Ordering;
    let ord = match (have, want) {
        (Value::Number(a), Value::Number(b)) => a.as_f64().partial_cmp(&b.as_f64()),
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        _ => {
            return match op {
                "==" => have == want,
                "!=" => have != want,
                _ => false,
            };
        }
    };
    let Some(ord) = ord else { return false };
    match op {
        "==" => ord == Ordering::Equal,
        "!=" => ord != Ordering::Equal,
        "<" => ord == Ordering::Less,
        "<=" => ord != Ordering::Greater,
        ">" => ord == Ordering::Greater,
        ">=" => ord != Ordering::Less,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fc() -> Value {
        json!({
            "apiVersion": "federation.kubectl-fleet.dev/v1alpha1", "kind": "FederatedCluster",
            "metadata": {"name": "site-a", "creationTimestamp": "2026-01-01T00:00:00Z", "resourceVersion": "7",
                         "labels": {"app.kubernetes.io/name": "fleet"}},
            "spec": {"mode": "Push", "tier": "critical", "heartbeatIntervalSeconds": 30, "capabilities": ["monitoring", "chaos"]},
            "status": {"phase": "Connected", "lastHeartbeatTime": "2026-01-01T09:55:00Z",
                       "capacity": {"gpusTotal": 8, "ratio": 0.5},
                       "conditions": [{"type": "Connected", "status": "True"}, {"type": "Ready", "status": "False"}]}
        })
    }

    fn now() -> jiff::Timestamp {
        "2026-01-01T10:00:00Z".parse().unwrap()
    }

    #[test]
    fn json_path_subset() {
        let o = fc();
        let cases: &[(&str, Vec<Value>)] = &[
            (".spec.mode", vec![json!("Push")]),
            ("{.spec.mode}", vec![json!("Push")]),
            ("$.spec.tier", vec![json!("critical")]),
            (".spec.capabilities[0]", vec![json!("monitoring")]),
            (".spec.capabilities[-1]", vec![json!("chaos")]),
            (".spec.capabilities[5]", vec![]),
            (
                ".spec.capabilities[*]",
                vec![json!("monitoring"), json!("chaos")],
            ),
            (".spec.capabilities[0:1]", vec![json!("monitoring")]),
            (
                ".status.conditions[*].type",
                vec![json!("Connected"), json!("Ready")],
            ),
            (
                ".status.conditions[?(@.type==\"Ready\")].status",
                vec![json!("False")],
            ),
            (
                ".status.conditions[?(@.type == 'Connected')].status",
                vec![json!("True")],
            ),
            (
                ".status.conditions[?(@.type!=\"Ready\")].type",
                vec![json!("Connected")],
            ),
            (".status.capacity[?(@ > 1)]", vec![json!(8)]),
            (
                ".metadata.labels.app\\.kubernetes\\.io/name",
                vec![json!("fleet")],
            ),
            (
                ".metadata.labels['app.kubernetes.io/name']",
                vec![json!("fleet")],
            ),
            ("..gpusTotal", vec![json!(8)]),
            (".status.missing.deeper", vec![]),
            (".spec.mode[", vec![]),
        ];
        for (p, want) in cases {
            assert_eq!(&json_path(&o, p), want, "path {p}");
        }
    }

    #[test]
    fn human_durations_match_apimachinery() {
        let cases = [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (330, "5m30s"),
            (600, "10m"),
            (179 * 60, "179m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 60 * 5, "3h5m"),
            (8 * 3600, "8h"),
            (47 * 3600, "47h"),
            (48 * 3600, "2d"),
            (50 * 3600, "2d2h"),
            (8 * 86400, "8d"),
            (729 * 86400, "729d"),
            (730 * 86400, "2y"),
            (731 * 86400, "2y1d"),
            (9 * 365 * 86400, "9y"),
        ];
        for (s, want) in cases {
            assert_eq!(human_duration(s), want, "{s}s");
        }
    }

    fn fc_version() -> Value {
        json!({"name": "v1alpha1", "additionalPrinterColumns": [
            {"name": "Mode", "type": "string", "jsonPath": ".spec.mode"},
            {"name": "Tier", "type": "string", "jsonPath": ".spec.tier", "priority": 1, "description": "remediation tier"},
            {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
            {"name": "Last Heartbeat", "type": "date", "jsonPath": ".status.lastHeartbeatTime"},
            {"name": "GPUs", "type": "integer", "jsonPath": ".status.capacity.gpusTotal"},
            {"name": "Interval", "type": "string", "jsonPath": ".spec.heartbeatIntervalSeconds"},
            {"name": "Caps", "type": "string", "jsonPath": ".spec.capabilities"},
            {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
            {"name": "Ratio", "type": "number", "jsonPath": ".status.capacity.ratio"},
            {"name": "Missing", "type": "string", "jsonPath": ".status.nothing"},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]})
    }

    #[test]
    fn crd_columns_and_cells() {
        let cols = columns_for_crd_version(&fc_version());
        let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "Name",
                "Mode",
                "Tier",
                "Phase",
                "Last Heartbeat",
                "GPUs",
                "Interval",
                "Caps",
                "Ready",
                "Ratio",
                "Missing",
                "Age"
            ]
        );
        assert_eq!(cols[0].format, "name");
        assert_eq!(
            cols[1].description,
            "Custom resource definition column (in JSONPath format): .spec.mode"
        );
        assert_eq!(cols[2].description, "remediation tier");
        assert_eq!(cols[2].priority, 1);
        let t = to_table(
            &cols,
            &[fc()],
            IncludeObject::Metadata,
            json!({"resourceVersion": "9"}),
            now(),
        );
        assert_eq!(t["kind"], "Table");
        assert_eq!(t["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(t["metadata"], json!({"resourceVersion": "9"}));
        assert_eq!(
            t["rows"][0]["cells"],
            json!([
                "site-a",
                "Push",
                "critical",
                "Connected",
                "5m",
                8,
                "30",
                "[\"monitoring\",\"chaos\"]",
                "False",
                0.5,
                null,
                "10h"
            ])
        );
        assert_eq!(
            t["columnDefinitions"][4],
            json!({"name": "Last Heartbeat", "type": "date", "format": "", "priority": 0,
                   "description": "Custom resource definition column (in JSONPath format): .status.lastHeartbeatTime"})
        );
        assert_eq!(
            t["rows"][0]["object"],
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": fc()["metadata"]})
        );
    }

    #[test]
    fn default_columns_are_name_and_age() {
        let cols = columns_for_crd_version(&json!({"name": "v1"}));
        assert_eq!(cols, default_columns());
        assert_eq!(cols[1].type_, "date");
        let mut o = fc();
        let t = to_table(&cols, &[o.clone()], IncludeObject::Object, json!({}), now());
        assert_eq!(t["rows"][0]["cells"], json!(["site-a", "10h"]));
        assert_eq!(t["rows"][0]["object"], o);
        o["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("creationTimestamp");
        o["metadata"]["name"] = json!("b");
        let t = to_table(&cols, &[o], IncludeObject::None, json!({}), now());
        assert_eq!(t["rows"][0], json!({"cells": ["b", null], "object": null}));
    }

    #[test]
    fn typed_cells_drop_values_of_other_types() {
        let col = |t: &str, p: &str| Column {
            name: "X".into(),
            type_: t.into(),
            format: String::new(),
            description: String::new(),
            priority: 0,
            json_path: Some(p.into()),
            computed: None,
        };
        let o = json!({"metadata": {"name": "a"}, "s": "x", "i": 3, "f": 2.7, "b": true, "t": "not a time"});
        let cases = [
            (col("integer", ".s"), Value::Null),
            (col("integer", ".f"), json!(2)),
            (col("integer", ".i"), json!(3)),
            (col("number", ".i"), json!(3)),
            (col("number", ".f"), json!(2.7)),
            (col("boolean", ".b"), json!(true)),
            (col("boolean", ".s"), Value::Null),
            (col("date", ".t"), json!("<invalid>")),
            (col("date", ".i"), Value::Null),
            (col("string", ".b"), json!("true")),
            (col("string", ".f"), json!("2.7")),
            (col("object", ".s"), Value::Null),
        ];
        for (c, want) in cases {
            assert_eq!(cell(&c, &o, now()), want, "{c:?}");
        }
    }

    #[test]
    fn include_object_parses_the_query_values() {
        assert_eq!(IncludeObject::parse(""), Some(IncludeObject::Metadata));
        assert_eq!(IncludeObject::parse("None"), Some(IncludeObject::None));
        assert_eq!(IncludeObject::parse("Object"), Some(IncludeObject::Object));
        assert_eq!(IncludeObject::parse("All"), None);
    }
}
