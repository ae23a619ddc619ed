//! Server-side `meta.k8s.io/v1` Table responses (what `kubectl get` prints),
//! with CRD `additionalPrinterColumns` evaluated from their JSONPaths.
//!
//! STUB: interface fixed, implementation owned by the "sandbox pure modules" work.

use serde_json::{Value, json};

/// One column of a Table (`columnDefinitions[]`) and where its cells come from.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    /// `string`, `integer`, `number`, `boolean`, `date`.
    pub type_: String,
    pub format: String,
    pub description: String,
    pub priority: i64,
    /// JSONPath of the cell (`.status.phase`); `None` for the Name column.
    pub json_path: Option<String>,
}

/// Columns for a CRD version: Name plus its `additionalPrinterColumns`, or
/// Name and Age when it declares none (the real server's default).
pub fn columns_for_crd_version(_version: &Value) -> Vec<Column> {
    default_columns()
}

/// Name and Age, for built-in kinds and CRDs without printer columns.
pub fn default_columns() -> Vec<Column> {
    vec![Column {
        name: "Name".into(),
        type_: "string".into(),
        format: "name".into(),
        description: "Name must be unique within a namespace.".into(),
        priority: 0,
        json_path: None,
    }]
}

/// What each row carries in `object` (`?includeObject=None|Metadata|Object`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeObject {
    None,
    #[default]
    Metadata,
    Object,
}

/// Builds the Table for `objects`. `list_metadata` is the list's
/// `metadata` (resourceVersion, continue). `now` formats `date` cells as ages.
pub fn to_table(
    _columns: &[Column],
    objects: &[Value],
    _include: IncludeObject,
    list_metadata: Value,
    _now: jiff::Timestamp,
) -> Value {
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_metadata,
        "columnDefinitions": [],
        "rows": objects.iter().map(|o| json!({"cells": [o["metadata"]["name"]], "object": o})).collect::<Vec<_>>(),
    })
}

/// Evaluates a Kubernetes JSONPath (`.a.b`, `.a[0]`, `.a[*].b`,
/// `.a[?(@.type=="Ready")].status`) against an object; the matched values.
pub fn json_path(_obj: &Value, _path: &str) -> Vec<Value> {
    Vec::new()
}
