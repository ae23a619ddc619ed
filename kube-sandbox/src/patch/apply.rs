//! Server-side apply and `managedFields` (see the module docs of `crate::patch`).

use crate::errors::ApiError;
use serde_json::{Map, Value, json};

use super::fieldset::{
    Comparison, FieldSet, ListKind, Shape, apply_set, compare, item_pe, keyed_items, path_string,
};

// ---------------------------------------------------------------------------
// Server-side apply and managedFields
//
// Field sets use the real `fieldsV1` encoding: `f:<field>`, `k:<json keys>`
// for items of keyed lists, `v:<json>` for items of sets, `i:<n>` for items
// of other granular lists, and `.` marking a node that is itself owned. As
// in structured-merge-diff: an applier owns every scalar, atomic value,
// list item and map key of its configuration (struct fields with children
// are not themselves owned); an `Update` owns what it added or changed and
// takes those fields from everybody else; an apply takes nothing from
// anybody unless forced, and conflicts when it changes a value another
// manager owns. Not modelled: the cap of 10 `Update` managers
// (`ancient-changes`), `last-applied-configuration` interplay, and
// conversion of field sets between API versions.

/// Options of [`server_side_apply_with`] and [`record_update_with`].
#[derive(Debug, Clone, Copy, Default)]
pub struct FieldManagerOptions<'a> {
    /// The CRD version's schema: list types (`x-kubernetes-list-type`,
    /// `x-kubernetes-list-map-keys`) and map types come from it. Without one
    /// the built-in kinds' list keys (`super::strategic::merge_key_for`) apply and other
    /// lists are atomic.
    pub schema: Option<&'a crate::schema::Schema>,
    /// `Some("status")` for writes to `/status`; recorded in the entry.
    pub subresource: Option<&'a str>,
    /// Top-level fields the write may not touch and nobody owns through it
    /// (the real strategies' reset fields: `status` for the main resource of
    /// a kind with a status subresource, `spec` and `metadata` for `/status`).
    pub ignored_fields: &'a [&'a str],
    /// The entry time; `None` = now.
    pub now: Option<jiff::Timestamp>,
}

/// Merges an applied configuration into the live object: maps by key,
/// keyed lists and sets by item (structured-merge-diff's ordering), other
/// values replaced.
fn merge_applied(live: &Value, cfg: &Value, shape: Shape<'_>, root: bool) -> Value {
    match (live, cfg) {
        (Value::Object(l), Value::Object(c)) if !shape.atomic_map() => {
            let mut out = l.clone();
            for (k, cv) in c {
                let merged = match l.get(k) {
                    Some(lv) => merge_applied(lv, cv, shape.child(k, root).0, false),
                    None => cv.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (Value::Array(l), Value::Array(c)) if shape.list_kind() != ListKind::Atomic => {
            let kind = shape.list_kind();
            let items = shape.items();
            let lhs = keyed_items(l, &kind);
            let rhs = keyed_items(c, &kind);
            let in_rhs = |pe: &str| rhs.iter().find(|(p, _)| p == pe).map(|(_, v)| *v);
            let in_lhs = |pe: &str| lhs.iter().find(|(p, _)| p == pe).map(|(_, v)| *v);
            let mut shared: std::collections::VecDeque<&String> = rhs
                .iter()
                .map(|(p, _)| p)
                .filter(|p| in_lhs(p).is_some())
                .collect();
            let mut next_shared = shared.pop_front();
            let mut merged_rhs: Vec<&String> = Vec::new();
            let mut out = Vec::new();
            let (mut li, mut ri) = (0, 0);
            let merge_item = |pe: &str| match (in_lhs(pe), in_rhs(pe)) {
                (Some(a), Some(b)) => merge_applied(a, b, items, false),
                (Some(a), None) => a.clone(),
                (None, Some(b)) => b.clone(),
                (None, None) => Value::Null,
            };
            while li < lhs.len() || ri < rhs.len() {
                if li < lhs.len() && ri < rhs.len() {
                    let pe = &lhs[li].0;
                    if *pe == rhs[ri].0 {
                        merged_rhs.push(pe);
                        out.push(merge_item(pe));
                        li += 1;
                        ri += 1;
                        next_shared = shared.pop_front();
                        continue;
                    }
                    if in_rhs(pe).is_some() && next_shared.is_some_and(|n| n != pe) {
                        li += 1;
                        continue;
                    }
                }
                if li < lhs.len() {
                    let pe = &lhs[li].0;
                    if in_rhs(pe).is_none() {
                        out.push(lhs[li].1.clone());
                        li += 1;
                        continue;
                    } else if merged_rhs.contains(&pe) {
                        li += 1;
                    }
                }
                if ri < rhs.len() {
                    let pe = &rhs[ri].0;
                    merged_rhs.push(pe);
                    out.push(merge_item(pe));
                    ri += 1;
                    if next_shared.is_some_and(|n| n == pe) {
                        next_shared = shared.pop_front();
                    }
                }
            }
            Value::Array(out)
        }
        _ => cfg.clone(),
    }
}

/// The proper ancestors of the owned paths of `set` that are declared
/// fields of a struct (not map keys, list items or `metadata` itself): the
/// fields `EnsureNamedFieldsAreMembers` adds to a manager's set.
fn named_parents(set: &FieldSet, shape: Shape<'_>) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for path in set.paths() {
        let mut cur = shape;
        for (i, pe) in path.iter().enumerate() {
            let is_last = i + 1 == path.len();
            let Some(f) = pe.strip_prefix("f:") else {
                cur = cur.items();
                continue;
            };
            let (next, declared) = cur.child(f, i == 0);
            let prefix = &path[..=i];
            if !is_last
                && declared
                && prefix != ["f:metadata".to_string()]
                && !out.iter().any(|p| p.as_slice() == prefix)
            {
                out.push(prefix.to_vec());
            }
            cur = next;
        }
    }
    out
}

/// Removes the node at `path` from an object.
fn remove_path(v: &mut Value, path: &[String], shape: Shape<'_>, root: bool) {
    let Some((head, rest)) = path.split_first() else {
        return;
    };
    if let Some(f) = head.strip_prefix("f:") {
        let Value::Object(m) = v else { return };
        if rest.is_empty() {
            m.remove(f);
        } else if let Some(c) = m.get_mut(f) {
            remove_path(c, rest, shape.child(f, root).0, false);
        }
        return;
    }
    let Value::Array(a) = v else { return };
    let kind = shape.list_kind();
    let Some(i) = a
        .iter()
        .position(|item| item_pe(item, &kind).as_deref() == Some(head.as_str()))
    else {
        return;
    };
    if rest.is_empty() {
        a.remove(i);
    } else {
        remove_path(&mut a[i], rest, shape.items(), false);
    }
}

/// The fields never tracked: identity and server-set metadata.
fn strip(set: &FieldSet) -> FieldSet {
    let mut s = set.without_top(&["apiVersion", "kind"]);
    if let Some(meta) = s.children.get_mut("f:metadata") {
        meta.own = false;
        for f in [
            "name",
            "namespace",
            "creationTimestamp",
            "selfLink",
            "uid",
            "clusterName",
            "generation",
            "managedFields",
            "resourceVersion",
        ] {
            meta.children.remove(&format!("f:{f}"));
        }
    }
    s
}

#[derive(Debug, Clone)]
struct Entry {
    manager: String,
    operation: String,
    api_version: String,
    time: Option<String>,
    subresource: String,
    set: FieldSet,
}

impl Entry {
    /// The real server's manager identity: Apply entries are one per
    /// manager and subresource, Update entries also per API version.
    fn same_manager(&self, o: &Entry) -> bool {
        self.manager == o.manager
            && self.operation == o.operation
            && self.subresource == o.subresource
            && (self.operation == "Apply" || self.api_version == o.api_version)
    }

    /// How a conflict names this manager (`"m"`, `"m" with subresource "status"`, `"m" using v1`).
    fn printed(&self) -> String {
        let mut s = crate::selector::quote(&self.manager);
        if !self.subresource.is_empty() {
            s.push_str(&format!(
                " with subresource {}",
                crate::selector::quote(&self.subresource)
            ));
        }
        if self.operation == "Update" {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("manager".into(), json!(self.manager));
        m.insert("operation".into(), json!(self.operation));
        m.insert("apiVersion".into(), json!(self.api_version));
        if let Some(t) = &self.time {
            m.insert("time".into(), json!(t));
        }
        m.insert("fieldsType".into(), json!("FieldsV1"));
        m.insert("fieldsV1".into(), self.set.to_json());
        if !self.subresource.is_empty() {
            m.insert("subresource".into(), json!(self.subresource));
        }
        Value::Object(m)
    }
}

fn decode_entries(obj: Option<&Value>) -> Vec<Entry> {
    let Some(list) = obj.and_then(|o| o["metadata"]["managedFields"].as_array()) else {
        return Vec::new();
    };
    list.iter()
        .map(|e| Entry {
            manager: e["manager"].as_str().unwrap_or_default().to_string(),
            operation: e["operation"].as_str().unwrap_or_default().to_string(),
            api_version: e["apiVersion"].as_str().unwrap_or_default().to_string(),
            time: e["time"].as_str().map(String::from),
            subresource: e["subresource"].as_str().unwrap_or_default().to_string(),
            set: FieldSet::from_json(&e["fieldsV1"]),
        })
        .collect()
}

fn encode_entries(obj: &mut Value, mut entries: Vec<Entry>) {
    entries.retain(|e| !e.set.is_empty());
    // The real server's order: operation, time, manager, apiVersion, subresource.
    entries.sort_by(|a, b| {
        (
            &a.operation,
            &a.time,
            &a.manager,
            &a.api_version,
            &a.subresource,
        )
            .cmp(&(
                &b.operation,
                &b.time,
                &b.manager,
                &b.api_version,
                &b.subresource,
            ))
    });
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    if entries.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert(
            "managedFields".into(),
            Value::Array(entries.iter().map(Entry::to_json).collect()),
        );
    }
}

fn without_managed_fields(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    v
}

fn now_string(opts: &FieldManagerOptions<'_>) -> String {
    let t = opts.now.unwrap_or_else(jiff::Timestamp::now);
    jiff::Timestamp::from_second(t.as_second())
        .unwrap_or(t)
        .to_string()
}

/// The Update bookkeeping shared by [`record_update_with`] and the
/// `before-first-apply` seeding: `self_entry` takes what changed from everybody.
fn update_entries(entries: &mut Vec<Entry>, cmp: &Comparison, mut me: Entry) {
    let taken = {
        let mut t = cmp.added.clone();
        t.union(&cmp.modified);
        t
    };
    for e in entries.iter_mut() {
        e.set = e.set.difference(&taken).difference(&cmp.removed);
    }
    if taken.is_empty() {
        entries.retain(|e| !e.set.is_empty());
        return;
    }
    match entries.iter_mut().find(|e| e.same_manager(&me)) {
        Some(prev) => {
            prev.set.union(&taken);
            prev.time = me.time.take();
        }
        None => {
            me.set = taken;
            entries.push(me);
        }
    }
    entries.retain(|e| !e.set.is_empty());
}

/// The managers an update starts from, as the real `decodeLiveOrNew`: the
/// request's own `managedFields` when it carries some (main resource only;
/// a single empty entry resets them), else the stored object's.
fn starting_entries(old: Option<&Value>, new: &Value, subresource: bool) -> Vec<Entry> {
    if subresource {
        return decode_entries(old);
    }
    if let Some(list) = new["metadata"]["managedFields"].as_array() {
        if list.len() == 1 && list[0].as_object().is_some_and(Map::is_empty) {
            return Vec::new();
        }
        let own = decode_entries(Some(new));
        if own.iter().any(|e| !e.set.is_empty()) {
            return own;
        }
    }
    decode_entries(old)
}

/// Records an update from `old` to `new` by `manager` (managedFields), with the CRD schema, reset fields and clock given.
///
/// As the real server: an update of an existing object that carries no
/// `managedFields` is not tracked; a create always is.
pub fn record_update_with(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    opts: FieldManagerOptions<'_>,
) {
    let mut entries = starting_entries(old, new, opts.subresource.is_some());
    if old.is_some() && entries.is_empty() {
        encode_entries(new, Vec::new());
        return;
    }
    let schema = opts.schema.map(crate::schema::Schema::raw);
    let old_clean = old.map(without_managed_fields);
    let new_clean = without_managed_fields(new);
    let mut cmp = Comparison::default();
    compare(
        old_clean.as_ref(),
        Some(&new_clean),
        Shape::root(schema),
        &mut Vec::new(),
        true,
        &mut cmp,
    );
    for s in [&mut cmp.added, &mut cmp.modified, &mut cmp.removed] {
        *s = strip(s).without_top(opts.ignored_fields);
    }
    let me = Entry {
        manager: manager.to_string(),
        operation: "Update".into(),
        api_version: new["apiVersion"].as_str().unwrap_or_default().to_string(),
        time: Some(now_string(&opts)),
        subresource: opts.subresource.unwrap_or_default().to_string(),
        set: FieldSet::default(),
    };
    update_entries(&mut entries, &cmp, me);
    encode_entries(new, entries);
}

/// Server-side apply of `applied` by `manager` onto `live`, with the CRD schema, subresource, reset fields and clock given.
pub fn server_side_apply_with(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    opts: FieldManagerOptions<'_>,
) -> Result<Value, ApiError> {
    if !applied.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be an object",
        ));
    }
    if applied["metadata"]
        .get("managedFields")
        .is_some_and(|m| !m.is_null())
    {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    let schema = opts.schema.map(crate::schema::Schema::raw);
    let shape = Shape::root(schema);
    let api_version = applied["apiVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let time = now_string(&opts);
    let subresource = opts.subresource.unwrap_or_default().to_string();
    let mut entries = decode_entries(live);
    let live_clean = live.map(without_managed_fields);

    // Objects created without field tracking: their fields belong to `before-first-apply`.
    if let Some(l) = &live_clean
        && entries.is_empty()
    {
        let mut cmp = Comparison::default();
        compare(None, Some(l), shape, &mut Vec::new(), true, &mut cmp);
        cmp.added = strip(&cmp.added).without_top(opts.ignored_fields);
        let seed = Entry {
            manager: "before-first-apply".into(),
            operation: "Update".into(),
            api_version: l["apiVersion"].as_str().unwrap_or_default().to_string(),
            time: Some(time.clone()),
            subresource: String::new(),
            set: FieldSet::default(),
        };
        update_entries(&mut entries, &cmp, seed);
    }

    // The applied configuration, without what the write may not touch.
    let mut config = applied.clone();
    if let Some(m) = config.as_object_mut() {
        for f in opts.ignored_fields {
            m.remove(*f);
        }
        if let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
    }
    let mut set = FieldSet::default();
    apply_set(&config, shape, &mut Vec::new(), true, &mut set);
    let set = strip(&set).without_top(opts.ignored_fields);

    let me = Entry {
        manager: manager.to_string(),
        operation: "Apply".into(),
        api_version,
        time: Some(time),
        subresource,
        set: set.clone(),
    };
    let mine = entries.iter().position(|e| e.same_manager(&me));
    let last = mine.map(|i| entries[i].set.clone()).unwrap_or_default();

    let mut merged = match &live_clean {
        Some(l) => merge_applied(l, &config, shape, true),
        None => config.clone(),
    };

    // Fields this manager applied before and dropped now go, unless someone else owns them.
    let mut others = FieldSet::default();
    for (i, e) in entries.iter().enumerate() {
        if Some(i) != mine {
            others.union(&e.set);
        }
    }
    let mut dropped = last.difference(&set).paths();
    dropped.sort_by_key(|p| std::cmp::Reverse(p.len()));
    for p in dropped {
        if !others.owns_within(&p) && !set.owns_within(&p) {
            remove_path(&mut merged, &p, shape, true);
        }
    }
    // As structured-merge-diff's prune: a struct field that held fields this
    // manager applied goes as a whole, with what nobody owns in it (such as
    // defaults), once nobody owns anything in it any more.
    let mut parents = named_parents(&last, shape);
    parents.sort_by_key(|p| std::cmp::Reverse(p.len()));
    for p in parents {
        if !others.owns_within(&p) && !set.owns_within(&p) {
            remove_path(&mut merged, &p, shape, true);
        }
    }

    // Conflicts: values another manager owns that this apply changes.
    let mut cmp = Comparison::default();
    compare(
        live_clean.as_ref(),
        Some(&merged),
        shape,
        &mut Vec::new(),
        true,
        &mut cmp,
    );
    let mut changed = strip(&cmp.added).without_top(opts.ignored_fields);
    changed.union(&strip(&cmp.modified).without_top(opts.ignored_fields));
    let removed = strip(&cmp.removed);
    let mut conflicts: Vec<(String, String)> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if Some(i) == mine {
            continue;
        }
        for p in e.set.intersection(&changed).paths() {
            conflicts.push((e.printed(), path_string(&p)));
        }
    }
    if !conflicts.is_empty() && !force {
        return Err(apply_conflict(conflicts));
    }
    for (i, e) in entries.iter_mut().enumerate() {
        if Some(i) != mine {
            e.set = e.set.difference(&changed).difference(&removed);
        }
    }
    let unchanged = live_clean.as_ref() == Some(&merged);
    match mine {
        Some(i) => {
            let prev = &mut entries[i];
            if !(unchanged && prev.set == me.set) {
                prev.time = me.time.clone();
            }
            prev.set = me.set;
            prev.api_version = me.api_version;
        }
        None => entries.push(me),
    }
    if merged.get("metadata").is_none_or(|m| !m.is_object()) {
        merged["metadata"] = json!({});
    }
    encode_entries(&mut merged, entries);
    Ok(merged)
}

/// The 409 of a refused apply, worded as the real server's field manager.
fn apply_conflict(mut conflicts: Vec<(String, String)>) -> ApiError {
    conflicts.sort();
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|(m, p)| json!({"reason": "FieldManagerConflict", "message": format!("conflict with {m}"), "field": p}))
        .collect();
    let message = if conflicts.len() == 1 {
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            conflicts[0].0, conflicts[0].1
        )
    } else {
        let mut lines = Vec::new();
        let mut current: Option<&str> = None;
        for (m, p) in &conflicts {
            if current != Some(m.as_str()) {
                lines.push(format!("conflicts with {m}:"));
                current = Some(m);
            }
            lines.push(format!("- {p}"));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    ApiError {
        details: Some(json!({"causes": causes})),
        ..ApiError::new(409, "Conflict", message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`server_side_apply_with`] for a built-in kind.
    fn server_side_apply(
        live: Option<&Value>,
        applied: &Value,
        manager: &str,
        force: bool,
    ) -> Result<Value, ApiError> {
        server_side_apply_with(
            live,
            applied,
            manager,
            force,
            FieldManagerOptions::default(),
        )
    }

    /// [`record_update_with`] for a built-in kind.
    fn record_update(
        old: Option<&Value>,
        new: &mut Value,
        manager: &str,
        subresource: Option<&str>,
    ) {
        record_update_with(
            old,
            new,
            manager,
            FieldManagerOptions {
                subresource,
                ..Default::default()
            },
        )
    }

    // -- server-side apply and managedFields --------------------------------

    const AV: &str = "federation.kubectl-fleet.dev/v1alpha1";

    fn t0() -> jiff::Timestamp {
        "2026-01-01T00:00:00Z".parse().unwrap()
    }

    fn fc_schema() -> crate::schema::Schema {
        crate::schema::Schema::new(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "tier": {"type": "string"}, "mode": {"type": "string"}, "region": {"type": "string"},
                "capabilities": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "tags": {"type": "array", "items": {"type": "string"}},
                "gpus": {"type": "object", "additionalProperties": {"type": "object", "properties": {"total": {"type": "integer"}}}}}},
            "status": {"type": "object", "properties": {
                "phase": {"type": "string"},
                "conditions": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
                               "items": {"type": "object", "properties": {"type": {"type": "string"}, "status": {"type": "string"}}}}}}}}))
        .unwrap()
    }

    fn fc(spec: Value) -> Value {
        json!({"apiVersion": AV, "kind": "FederatedCluster", "metadata": {"name": "site-a"}, "spec": spec})
    }

    fn apply(
        live: Option<&Value>,
        cfg: &Value,
        manager: &str,
        force: bool,
    ) -> Result<Value, ApiError> {
        let s = fc_schema();
        server_side_apply_with(
            live,
            cfg,
            manager,
            force,
            FieldManagerOptions {
                schema: Some(&s),
                now: Some(t0()),
                ..Default::default()
            },
        )
    }

    fn fields_of(obj: &Value, manager: &str) -> Value {
        obj["metadata"]["managedFields"]
            .as_array()
            .and_then(|l| l.iter().find(|e| e["manager"] == manager))
            .map(|e| e["fieldsV1"].clone())
            .unwrap_or(Value::Null)
    }

    #[test]
    fn apply_creates_with_a_real_managed_fields_entry() {
        let mut cfg = fc(
            json!({"tier": "critical", "capabilities": ["monitoring"], "tags": ["a"], "gpus": {"nvidia": {"total": 2}}}),
        );
        cfg["metadata"]["labels"] = json!({"app": "fleet"});
        let out = apply(None, &cfg, "kubectl", false).unwrap();
        assert_eq!(out["spec"], cfg["spec"]);
        assert_eq!(out["metadata"]["labels"], json!({"app": "fleet"}));
        assert_eq!(
            out["metadata"]["managedFields"],
            json!([{"manager": "kubectl", "operation": "Apply", "apiVersion": AV, "time": "2026-01-01T00:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}},
                                 "f:spec": {"f:capabilities": {"v:\"monitoring\"": {}}, "f:tags": {}, "f:tier": {},
                                            "f:gpus": {"f:nvidia": {".": {}, "f:total": {}}}}}}])
        );
    }

    #[test]
    fn dropping_every_applied_field_of_a_struct_field_removes_it_whole() {
        let first = apply(
            None,
            &fc(json!({"tier": "critical", "gpus": {"nvidia": {"total": 2}}})),
            "m",
            false,
        )
        .unwrap();
        // A key nobody owns (as a default would be) inside the applied field.
        let mut live = first.clone();
        live["spec"]["gpus"]["amd"] = json!({"total": 1});
        let out = apply(Some(&live), &fc(json!({"tier": "critical"})), "m", false).unwrap();
        assert_eq!(out["spec"], json!({"tier": "critical"}));
        // Once another manager owns something in it, only the dropped fields go.
        let mut other = live.clone();
        record_update_with(
            Some(&first),
            &mut other,
            "other",
            FieldManagerOptions {
                schema: Some(&fc_schema()),
                now: Some(t0()),
                ..Default::default()
            },
        );
        let out = apply(Some(&other), &fc(json!({"tier": "critical"})), "m", false).unwrap();
        assert_eq!(
            out["spec"],
            json!({"tier": "critical", "gpus": {"amd": {"total": 1}}})
        );
    }

    #[test]
    fn apply_conflicts_with_another_managers_value_unless_forced() {
        let live = apply(
            None,
            &fc(json!({"tier": "critical", "mode": "Push"})),
            "kubectl",
            false,
        )
        .unwrap();
        let e = apply(
            Some(&live),
            &fc(json!({"tier": "standard"})),
            "fleet-operator",
            false,
        )
        .unwrap_err();
        assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
        assert_eq!(
            e.message,
            "Apply failed with 1 conflict: conflict with \"kubectl\": .spec.tier"
        );
        assert_eq!(
            e.to_status()["details"],
            json!({"causes": [{"reason": "FieldManagerConflict", "message": "conflict with \"kubectl\"", "field": ".spec.tier"}]})
        );
        // The same value is no conflict: ownership is shared.
        let shared = apply(
            Some(&live),
            &fc(json!({"tier": "critical"})),
            "fleet-operator",
            false,
        )
        .unwrap();
        assert_eq!(
            fields_of(&shared, "fleet-operator"),
            json!({"f:spec": {"f:tier": {}}})
        );
        assert_eq!(
            fields_of(&shared, "kubectl"),
            json!({"f:spec": {"f:mode": {}, "f:tier": {}}})
        );
        // Forced: the value changes and ownership moves.
        let forced = apply(
            Some(&live),
            &fc(json!({"tier": "standard"})),
            "fleet-operator",
            true,
        )
        .unwrap();
        assert_eq!(forced["spec"], json!({"tier": "standard", "mode": "Push"}));
        assert_eq!(
            fields_of(&forced, "fleet-operator"),
            json!({"f:spec": {"f:tier": {}}})
        );
        assert_eq!(
            fields_of(&forced, "kubectl"),
            json!({"f:spec": {"f:mode": {}}})
        );
    }

    #[test]
    fn several_conflicts_are_grouped_by_sorted_manager() {
        let live = apply(
            None,
            &fc(json!({"tier": "critical", "mode": "Push"})),
            "b-manager",
            false,
        )
        .unwrap();
        let live = apply(
            Some(&live),
            &fc(json!({"region": "eu"})),
            "a-manager",
            false,
        )
        .unwrap();
        let mut edited = live.clone();
        edited["spec"]["mode"] = json!("Pull");
        record_update_with(
            Some(&live),
            &mut edited,
            "kubectl-edit",
            FieldManagerOptions {
                now: Some(t0()),
                ..Default::default()
            },
        );
        let e = apply(
            Some(&edited),
            &fc(json!({"tier": "standard", "mode": "Push", "region": "us"})),
            "new",
            false,
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "Apply failed with 3 conflicts: conflicts with \"a-manager\":\n- .spec.region\nconflicts with \"b-manager\":\n- .spec.tier\nconflicts with \"kubectl-edit\" using federation.kubectl-fleet.dev/v1alpha1:\n- .spec.mode"
        );
        assert_eq!(
            e.to_status()["details"]["causes"].as_array().unwrap().len(),
            3
        );
    }

    #[test]
    fn dropped_fields_are_removed_unless_someone_else_owns_them() {
        let live = apply(
            None,
            &fc(json!({"tier": "critical", "mode": "Push", "region": "eu"})),
            "kubectl",
            false,
        )
        .unwrap();
        let live = apply(Some(&live), &fc(json!({"region": "eu"})), "other", false).unwrap();
        let out = apply(
            Some(&live),
            &fc(json!({"tier": "critical"})),
            "kubectl",
            false,
        )
        .unwrap();
        assert_eq!(out["spec"], json!({"tier": "critical", "region": "eu"}));
        assert_eq!(
            fields_of(&out, "kubectl"),
            json!({"f:spec": {"f:tier": {}}})
        );
        assert_eq!(
            fields_of(&out, "other"),
            json!({"f:spec": {"f:region": {}}})
        );
    }

    #[test]
    fn keyed_lists_merge_by_key_and_record_k_paths() {
        let s = fc_schema();
        let opts = FieldManagerOptions {
            schema: Some(&s),
            subresource: Some("status"),
            now: Some(t0()),
            ..Default::default()
        };
        let mut live = fc(json!({"tier": "critical"}));
        live["status"] = json!({"conditions": [{"type": "Connected", "status": "True"}]});
        let mut created = live.clone();
        record_update_with(None, &mut created, "hub", opts);
        let cfg = json!({"apiVersion": AV, "kind": "FederatedCluster", "metadata": {"name": "site-a"},
                         "status": {"phase": "Connected", "conditions": [{"type": "Ready", "status": "True"}]}});
        let out = server_side_apply_with(Some(&created), &cfg, "edge", false, opts).unwrap();
        assert_eq!(
            out["status"]["conditions"],
            json!([{"type": "Connected", "status": "True"}, {"type": "Ready", "status": "True"}])
        );
        assert_eq!(
            fields_of(&out, "edge"),
            json!({"f:status": {"f:phase": {}, "f:conditions": {"k:{\"type\":\"Ready\"}": {".": {}, "f:status": {}, "f:type": {}}}}})
        );
        let entry = out["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["manager"] == "edge")
            .unwrap()
            .clone();
        assert_eq!(entry["subresource"], "status");
        // Changing the hub's condition conflicts, naming the subresource.
        let cfg = json!({"apiVersion": AV, "kind": "FederatedCluster", "metadata": {"name": "site-a"},
                         "status": {"conditions": [{"type": "Connected", "status": "False"}]}});
        let e = server_side_apply_with(Some(&out), &cfg, "edge", false, opts).unwrap_err();
        assert_eq!(
            e.message,
            "Apply failed with 1 conflict: conflict with \"hub\" with subresource \"status\" using federation.kubectl-fleet.dev/v1alpha1: .status.conditions[type=\"Connected\"].status"
        );
    }

    #[test]
    fn record_update_tracks_what_each_write_changed() {
        let opts = FieldManagerOptions {
            now: Some(t0()),
            ..Default::default()
        };
        let mut created = fc(json!({"tier": "critical"}));
        created["metadata"]["labels"] = json!({"app": "x"});
        created["metadata"]["uid"] = json!("u1");
        record_update_with(None, &mut created, "kubectl-create", opts);
        assert_eq!(
            created["metadata"]["managedFields"],
            json!([{"manager": "kubectl-create", "operation": "Update", "apiVersion": AV, "time": "2026-01-01T00:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}, "f:spec": {".": {}, "f:tier": {}}}}])
        );
        // Another manager's change takes the field; unchanged fields stay.
        let mut edited = created.clone();
        edited["spec"]["tier"] = json!("standard");
        edited["spec"]["mode"] = json!("Pull");
        record_update_with(
            Some(&created),
            &mut edited,
            "kubectl-edit",
            FieldManagerOptions {
                now: Some("2026-01-01T00:01:00Z".parse().unwrap()),
                ..opts
            },
        );
        assert_eq!(
            fields_of(&edited, "kubectl-create"),
            json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}}}, "f:spec": {}})
        );
        assert_eq!(
            fields_of(&edited, "kubectl-edit"),
            json!({"f:spec": {"f:mode": {}, "f:tier": {}}})
        );
        // A no-op write adds no entry.
        let mut same = edited.clone();
        record_update_with(Some(&edited), &mut same, "noop", opts);
        assert_eq!(
            same["metadata"]["managedFields"],
            edited["metadata"]["managedFields"]
        );
        // Removing a field removes it from its owner.
        let mut removed = edited.clone();
        removed["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("labels");
        record_update(Some(&edited), &mut removed, "kubectl-edit", None);
        assert_eq!(fields_of(&removed, "kubectl-create"), json!({"f:spec": {}}));
    }

    #[test]
    fn untracked_objects_stay_untracked_on_update_and_seed_before_first_apply() {
        let live = fc(json!({"tier": "critical"}));
        let mut next = fc(json!({"tier": "standard"}));
        record_update(Some(&live), &mut next, "kubectl", None);
        assert!(next["metadata"].get("managedFields").is_none());
        let e = apply(
            Some(&live),
            &fc(json!({"tier": "standard"})),
            "kubectl",
            false,
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "Apply failed with 1 conflict: conflict with \"before-first-apply\" using federation.kubectl-fleet.dev/v1alpha1: .spec.tier"
        );
    }

    #[test]
    fn ignored_fields_are_neither_applied_nor_owned() {
        let s = fc_schema();
        let opts = FieldManagerOptions {
            schema: Some(&s),
            ignored_fields: &["status"],
            now: Some(t0()),
            ..Default::default()
        };
        let mut cfg = fc(json!({"tier": "critical"}));
        cfg["status"] = json!({"phase": "Connected"});
        let out = server_side_apply_with(None, &cfg, "kubectl", false, opts).unwrap();
        assert!(out.get("status").is_none());
        assert_eq!(
            fields_of(&out, "kubectl"),
            json!({"f:spec": {"f:tier": {}}})
        );
    }

    #[test]
    fn builtin_lists_use_their_merge_keys_without_a_schema() {
        let cfg = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "finalizers": ["a"]},
                         "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "x:1", "args": ["--v"]}]}}}});
        let out = server_side_apply(None, &cfg, "kubectl", false).unwrap();
        let f = &out["metadata"]["managedFields"][0]["fieldsV1"];
        assert_eq!(
            *f,
            json!({"f:metadata": {"f:finalizers": {"v:\"a\"": {}}},
                   "f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:args": {}, "f:image": {}, "f:name": {}}}}}}})
        );
        assert!(
            out["metadata"]["managedFields"][0]["time"]
                .as_str()
                .unwrap()
                .ends_with('Z')
        );
        let cfg2 = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                          "spec": {"template": {"spec": {"containers": [{"name": "side", "image": "y:1"}]}}}});
        let out2 = server_side_apply(Some(&out), &cfg2, "other", false).unwrap();
        let names: Vec<&str> = out2["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["app", "side"]);
    }

    #[test]
    fn managed_fields_in_requests() {
        let mut cfg = fc(json!({"tier": "x"}));
        cfg["metadata"]["managedFields"] = json!([]);
        let e = apply(None, &cfg, "m", false).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (400, "metadata.managedFields must be nil")
        );
        // An update that carries managedFields sets them (then records itself).
        let opts = FieldManagerOptions {
            now: Some(t0()),
            ..Default::default()
        };
        let mut live = fc(json!({"tier": "a"}));
        record_update_with(None, &mut live, "creator", opts);
        let mut new = live.clone();
        new["metadata"]["managedFields"][0]["manager"] = json!("renamed");
        record_update_with(Some(&live), &mut new, "creator", opts);
        assert_eq!(new["metadata"]["managedFields"][0]["manager"], "renamed");
        // A single empty entry resets them, and the update is then untracked.
        let mut reset = live.clone();
        reset["metadata"]["managedFields"] = json!([{}]);
        reset["spec"]["tier"] = json!("b");
        record_update_with(Some(&live), &mut reset, "creator", opts);
        assert!(reset["metadata"].get("managedFields").is_none());
        // Writes to a subresource cannot set them.
        let mut status = live.clone();
        status["metadata"]["managedFields"] = json!([{}]);
        status["status"] = json!({"phase": "x"});
        record_update_with(
            Some(&live),
            &mut status,
            "edge",
            FieldManagerOptions {
                subresource: Some("status"),
                ..opts
            },
        );
        let managers: Vec<&str> = status["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(managers, ["creator", "edge"]);
    }

    #[test]
    fn keyed_list_merge_follows_structured_merge_diff_order() {
        let shape = Shape::Builtin {
            field: "containers",
            map_keys: false,
        };
        let names = |v: &Value| -> Vec<String> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|c| c["name"].as_str().unwrap().to_string())
                .collect()
        };
        let l = |ns: &[&str]| Value::Array(ns.iter().map(|n| json!({"name": n})).collect());
        let cases: [(&[&str], &[&str], &[&str]); 6] = [
            (&["a", "b", "c"], &["b", "d"], &["a", "b", "c", "d"]),
            (&["a", "b"], &["d", "b"], &["a", "d", "b"]),
            (&["a", "b"], &["b", "a"], &["b", "a"]),
            (&["a", "b", "c"], &["c", "a"], &["b", "c", "a"]),
            (&[], &["x", "y"], &["x", "y"]),
            (&["a"], &[], &["a"]),
        ];
        for (live, cfg, want) in cases {
            let got = merge_applied(&l(live), &l(cfg), shape, false);
            assert_eq!(names(&got), want, "live {live:?} applied {cfg:?}");
        }
    }

    #[test]
    fn fieldsv1_round_trips_and_prints_paths() {
        let v = json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}}}, "f:spec": {"f:l": {"v:\"x\"": {}, "i:3": {}}}});
        let s = FieldSet::from_json(&v);
        assert_eq!(s.to_json(), v);
        let printed: Vec<String> = s.paths().iter().map(|p| path_string(p)).collect();
        assert_eq!(
            printed,
            [
                ".metadata.labels",
                ".metadata.labels.app",
                ".spec.l[3]",
                ".spec.l[=\"x\"]"
            ]
        );
        assert_eq!(
            path_string(&["f:s".into(), "k:{\"port\":80,\"protocol\":\"TCP\"}".into()]),
            ".s[port=80,protocol=\"TCP\"]"
        );
    }
}
