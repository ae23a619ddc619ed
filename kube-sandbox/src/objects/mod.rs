//! Object semantics shared by every write: names, server-set metadata,
//! generation, status-subresource isolation, schema validation of custom
//! resources, finalizers, admission (ValidatingAdmissionPolicies, see
//! [`crate::admission`]), and the special lifecycles of namespaces and
//! CustomResourceDefinitions.

use crate::admission::{self, Operation};
use crate::auth::UserInfo;
use crate::errors::{ApiError, Cause};
use crate::patch;
use crate::resources::{GroupResource, ResourceDef, StatusOnCreate, namespaces_gr};
use crate::schema;
use crate::store::{ObjKey, State};
use serde_json::{Map, Value, json};
use std::sync::Arc;

mod crd;

use crate::names::name_errors;
use crd::{
    CRD_CLEANUP_FINALIZER, check_crd, crd_terminating, prepare_crd, run_crd_controllers,
    set_crd_condition,
};

/// Options common to writes.
#[derive(Debug, Clone, Default)]
pub struct WriteOpts {
    /// `fieldManager`, defaulted from the user agent.
    pub manager: String,
    /// `dryRun=All`: validate and answer, store nothing.
    pub dry_run: bool,
    /// PUT (whole-object replace) rather than PATCH.
    pub is_put: bool,
    /// The object already carries managedFields (server-side apply).
    pub managed_fields_done: bool,
    /// `?fieldValidation=`: what to do with fields the schema prunes.
    pub field_validation: FieldValidation,
    /// Warnings for the `Warning` response header (unknown fields under
    /// `Warn`, `Warn` admission policies).
    pub warnings: std::cell::RefCell<Vec<String>>,
    /// Who writes, for admission; `None` for the sandbox's own writes
    /// (bootstrap objects, garbage collection), which are not admitted.
    pub user: Option<UserInfo>,
}

impl WriteOpts {
    /// Runs the admission policies over a write by [`WriteOpts::user`],
    /// keeping their warnings.
    fn admit(&self, st: &mut State, req: admission::Request<'_>) -> Result<(), ApiError> {
        let warnings = admission::admit(st, &req)?;
        self.warnings.borrow_mut().extend(warnings);
        Ok(())
    }
}

/// How field ownership is tracked for a write to `def` (`subresource` is
/// `Some("status")` for `/status`): the CRD version's schema gives list and
/// map types, and the strategy's reset fields are neither written nor owned
/// (`status` through the main resource of a kind with a status subresource;
/// `spec` and `metadata` through `/status`).
pub fn field_manager_options<'a>(
    def: &'a ResourceDef,
    subresource: Option<&'a str>,
) -> patch::FieldManagerOptions<'a> {
    const MAIN_RESET: &[&str] = &["status"];
    const STATUS_RESET: &[&str] = &["spec", "metadata"];
    let ignored_fields: &[&str] = match subresource {
        Some("status") => STATUS_RESET,
        Some(_) => &[],
        None if def.has_status => MAIN_RESET,
        None => &[],
    };
    patch::FieldManagerOptions {
        schema: def.schema.as_deref(),
        subresource,
        ignored_fields,
        now: None,
    }
}

/// `fieldValidation` as the real server defines it (default `Warn`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FieldValidation {
    Ignore,
    #[default]
    Warn,
    Strict,
}

impl FieldValidation {
    /// Parses the query parameter; unknown values are the default.
    pub fn parse(v: Option<&str>) -> Self {
        match v {
            Some("Ignore") => FieldValidation::Ignore,
            Some("Strict") => FieldValidation::Strict,
            _ => FieldValidation::Warn,
        }
    }
}

/// Paths (`spec.a`, `spec.list[0].b`) present in `before` but not in `after`.
fn removed_paths(before: &Value, after: &Value, prefix: &str, out: &mut Vec<String>) {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            for (k, v) in b {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                match a.get(k) {
                    None => out.push(path),
                    Some(av) => removed_paths(v, av, &path, out),
                }
            }
        }
        (Value::Array(b), Value::Array(a)) => {
            for (i, (bv, av)) in b.iter().zip(a).enumerate() {
                removed_paths(bv, av, &format!("{prefix}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// The current time as the API server writes timestamps.
pub fn now_rfc3339() -> String {
    let now = jiff::Timestamp::now();
    jiff::Timestamp::from_second(now.as_second())
        .unwrap_or(now)
        .to_string()
}

fn invalid_value(v: &Value) -> String {
    format!(
        "Invalid value: {}",
        serde_json::to_string(v).unwrap_or_default()
    )
}

/// Whether the real server tracks `metadata.generation` for this kind.
pub fn tracks_generation(def: &ResourceDef) -> bool {
    def.crd
        || def.group == "apps"
        || def.plural == "customresourcedefinitions"
        || admission::is_policy_kind(def)
}

fn meta(obj: &Value) -> &Value {
    &obj["metadata"]
}

fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj["metadata"].is_object() {
        obj["metadata"] = json!({});
    }
    obj["metadata"]
        .as_object_mut()
        .expect("metadata is an object")
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn finalizers(obj: &Value) -> Vec<String> {
    meta(obj)
        .get("finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn is_deleting(obj: &Value) -> bool {
    meta(obj)
        .get("deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

/// Whether two objects differ outside `metadata` (and `status` when excluded).
fn content_differs(a: &Value, b: &Value, exclude_status: bool) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a != b;
    };
    let skip = |k: &str| k == "metadata" || (exclude_status && k == "status");
    let keys = a.keys().chain(b.keys());
    for k in keys {
        if skip(k) {
            continue;
        }
        if a.get(k) != b.get(k) {
            return true;
        }
    }
    false
}

/// Whether an update changes anything a client could see, ignoring the
/// resourceVersion and managedFields timestamps (the real server then skips
/// the write and keeps the resourceVersion).
fn is_noop(old: &Value, new: &Value) -> bool {
    if content_differs(old, new, false) {
        return false;
    }
    let (Some(a), Some(b)) = (meta(old).as_object(), meta(new).as_object()) else {
        return meta(old) == meta(new);
    };
    let skip = |k: &str| k == "resourceVersion" || k == "managedFields";
    a.keys()
        .chain(b.keys())
        .filter(|k| !skip(k))
        .all(|k| a.get(k) == b.get(k))
}

/// The label the real server keeps on every Namespace
/// (`kubernetes.io/metadata.name: NAME`), so namespace selectors can name
/// a namespace.
const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

fn label_namespace_name(def: &ResourceDef, obj: &mut Value) {
    if !(def.group.is_empty() && def.plural == "namespaces") {
        return;
    }
    let name = str_of(meta(obj), "name").to_string();
    let m = meta_mut(obj);
    let labels = m.entry("labels").or_insert_with(|| json!({}));
    if !labels.is_object() {
        *labels = json!({});
    }
    labels[NAMESPACE_NAME_LABEL] = json!(name);
}

/// Secrets: `stringData` is write-only; the real server folds it into
/// `data` (base64) when decoding a request, and defaults `type` to `Opaque`.
fn fold_string_data(def: &ResourceDef, obj: &mut Value) {
    if !(def.group.is_empty() && def.plural == "secrets") {
        return;
    }
    let Some(o) = obj.as_object_mut() else { return };
    // `SetDefaults_Secret`: a Secret without a type is `Opaque`.
    if o.get("type")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        o.insert("type".into(), json!("Opaque"));
    }
    let Some(Value::Object(string_data)) = o.remove("stringData") else {
        return;
    };
    use base64::Engine;
    let data = o.entry("data").or_insert_with(|| json!({}));
    if !data.is_object() {
        *data = json!({});
    }
    for (k, v) in string_data {
        let text = v.as_str().unwrap_or_default();
        data[k] = json!(base64::engine::general_purpose::STANDARD.encode(text));
    }
}

fn managed_fields_without_times(obj: &Value) -> Value {
    let mut mf = meta(obj)
        .get("managedFields")
        .cloned()
        .unwrap_or(Value::Null);
    if let Some(entries) = mf.as_array_mut() {
        for e in entries {
            if let Some(o) = e.as_object_mut() {
                o.remove("time");
            }
        }
    }
    mf
}

fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    uuid::Uuid::new_v4().as_bytes()[..5]
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}

/// On `/status` the real server validates `.status` with a validator of its
/// own schema: the field paths still start at `status.`, but the details
/// name the field relative to it (`count in body should be ...`), and an
/// error without a field of that validator (a range check) is filed under
/// `status`.
fn relative_to_status(causes: &mut [Cause]) {
    const CHECKED: &str = "Checked value must be of type ";
    for c in causes {
        if c.field == "<nil>"
            && let Some((head, path)) = c.message.rsplit_once(" in status.")
            && head.contains(CHECKED)
        {
            c.field = "status".to_owned();
            c.message = format!("{head} in {path}");
            continue;
        }
        if let Some(rest) = c.field.strip_prefix("status.") {
            c.message = c
                .message
                .replace(&format!("{} in body", c.field), &format!("{rest} in body"));
        }
    }
}

fn kind_group(def: &ResourceDef) -> (&str, &str) {
    (def.group.as_str(), def.kind.as_str())
}

/// Prune → default → validate, as the real server does for custom resources.
/// Unknown fields are a 400 under `fieldValidation=Strict` and a warning
/// under `Warn`, worded as the real server does.
fn apply_schema(
    def: &ResourceDef,
    obj: &mut Value,
    old: Option<&Value>,
    opts: &WriteOpts,
) -> Result<Vec<Cause>, ApiError> {
    let Some(schema) = &def.schema else {
        return Ok(Vec::new());
    };
    // Numbers as the real server's decoder makes them: beyond int64 a
    // float64, which an integer schema then refuses.
    crate::schema::go_decode_numbers(obj);
    let before = (opts.field_validation != FieldValidation::Ignore).then(|| obj.clone());
    schema.prune(obj);
    if let Some(before) = before {
        let mut unknown = Vec::new();
        removed_paths(&before, obj, "", &mut unknown);
        if !unknown.is_empty() {
            let fields: Vec<String> = unknown
                .iter()
                .map(|p| format!("unknown field \"{p}\""))
                .collect();
            if opts.field_validation == FieldValidation::Strict {
                return Err(ApiError::bad_request(format!(
                    "{kind} in version \"{version}\" cannot be handled as a {kind}: strict decoding error: {}",
                    fields.join(", "),
                    kind = def.kind,
                    version = def.version,
                )));
            }
            opts.warnings.borrow_mut().extend(fields);
        }
    }
    schema.apply_defaults(obj);
    let causes = schema.validate(obj, old);
    // Stored and served as the real server writes them: `1.0` as `1`.
    crate::schema::go_encode_numbers(obj);
    Ok(causes)
}

/// Checks the namespace of a namespaced create exists and is not terminating.
fn check_namespace(st: &State, ns: &str) -> Result<(), ApiError> {
    let key = (String::new(), ns.to_string());
    match st.get(&namespaces_gr(), &key) {
        None => Err(ApiError::not_found("", "namespaces", ns)),
        Some(n) if is_deleting(n) => Err(ApiError::forbidden(
            format!(
                "unable to create new content in namespace {ns} because it is being terminated"
            ),
            "",
            "namespaces",
            ns,
        )),
        Some(_) => Ok(()),
    }
}

/// Creates an object (POST, or server-side apply of a missing object).
pub fn create(
    st: &mut State,
    def: &Arc<ResourceDef>,
    namespace: &str,
    mut obj: Value,
    opts: &WriteOpts,
) -> Result<Arc<Value>, ApiError> {
    if !obj.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON object",
        ));
    }
    let (group, kind) = kind_group(def);
    fold_string_data(def, &mut obj);
    obj["apiVersion"] = json!(def.api_version());
    obj["kind"] = json!(def.kind);
    let m = meta_mut(&mut obj);
    let mut name = m
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if name.is_empty()
        && let Some(prefix) = m.get("generateName").and_then(Value::as_str)
        && !prefix.is_empty()
    {
        let prefix: String = prefix.chars().take(58).collect();
        name = format!("{prefix}{}", random_suffix());
        m.insert("name".into(), json!(name));
    }
    if def.crd && crd_terminating(st, def) {
        return Err(ApiError::forbidden(
            format!(
                "{} \"{name}\" is forbidden: create not allowed while custom resource definition is terminating",
                crate::errors::qualified(&def.group, &def.plural)
            ),
            &def.group,
            &def.plural,
            &name,
        ));
    }
    if def.namespaced {
        let body_ns = m
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !body_ns.is_empty() && body_ns != namespace {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        m.insert("namespace".into(), json!(namespace));
    } else {
        m.remove("namespace");
    }
    for k in [
        "resourceVersion",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
    ] {
        m.remove(k);
    }
    m.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
    m.insert("creationTimestamp".into(), json!(now_rfc3339()));
    if tracks_generation(def) {
        m.insert("generation".into(), json!(1));
    } else {
        m.remove("generation");
    }

    let mut causes = Vec::new();
    if name.is_empty() {
        causes.push(Cause::new(
            "FieldValueRequired",
            "metadata.name",
            "Required value: name or generateName is required",
        ));
    } else {
        for msg in name_errors(def.name_rule, &name) {
            causes.push(Cause::new(
                "FieldValueInvalid",
                "metadata.name",
                format!("{}: {msg}", invalid_value(&json!(name))),
            ));
        }
    }
    match &def.status_on_create {
        StatusOnCreate::Keep => {}
        StatusOnCreate::Drop => {
            if let Some(o) = obj.as_object_mut() {
                o.remove("status");
            }
        }
        StatusOnCreate::Reset(s) => obj["status"] = s.clone(),
    }
    if def.plural == "namespaces" && def.group.is_empty() {
        obj["spec"] = json!({"finalizers": ["kubernetes"]});
    }
    label_namespace_name(def, &mut obj);
    if admission::is_policy_kind(def) {
        causes.extend(admission::prepare(&def.plural, &mut obj));
    }
    causes.extend(apply_schema(def, &mut obj, None, opts)?);
    let is_crd = def.group == "apiextensions.k8s.io" && def.plural == "customresourcedefinitions";
    if is_crd && causes.is_empty() {
        causes.extend(check_crd(&obj, &name));
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid(group, kind, &name, causes));
    }
    if def.namespaced {
        check_namespace(st, namespace)?;
    }
    if let Some(user) = &opts.user {
        opts.admit(
            st,
            admission::Request {
                operation: Operation::Create,
                def,
                subresource: "",
                namespace,
                name: &name,
                object: Some(&obj),
                old_object: None,
                user,
                dry_run: opts.dry_run,
                field_manager: &opts.manager,
            },
        )?;
    }
    let key: ObjKey = (
        if def.namespaced {
            namespace.to_string()
        } else {
            String::new()
        },
        name.clone(),
    );
    let gr = def.storage_key();
    if st.get(&gr, &key).is_some() {
        return Err(ApiError::already_exists(group, &def.plural, &name));
    }
    if is_crd {
        prepare_crd(&mut obj, None);
        let mut probe = st.catalogue.clone();
        probe
            .set_crd(&obj)
            .map_err(|c| ApiError::invalid(group, kind, &name, c))?;
        if !opts.dry_run {
            st.catalogue = probe;
            st.start_watch_cache(GroupResource {
                group: str_of(&obj["spec"], "group").to_string(),
                resource: str_of(&obj["spec"]["names"], "plural").to_string(),
            });
        }
    }
    if !opts.managed_fields_done {
        patch::record_update_with(
            None,
            &mut obj,
            &opts.manager,
            field_manager_options(def, None),
        );
    }
    if opts.dry_run {
        return Ok(Arc::new(obj));
    }
    let created = st.put(&gr, key.clone(), obj);
    if is_crd {
        run_crd_controllers(st, &key);
    }
    Ok(created)
}

/// Writes a new version of an existing object (PUT, PATCH, apply, `/status`).
pub fn update(
    st: &mut State,
    def: &Arc<ResourceDef>,
    key: &ObjKey,
    mut new: Value,
    subresource: Option<&str>,
    opts: &WriteOpts,
) -> Result<Arc<Value>, ApiError> {
    let (group, kind) = kind_group(def);
    let gr = def.storage_key();
    let Some(old) = st.get(&gr, key).cloned() else {
        return Err(ApiError::not_found(group, &def.plural, &key.1));
    };
    if !new.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON object",
        ));
    }
    fold_string_data(def, &mut new);
    let old_rv = check_update_request(def, key, &old, &new, opts)?;
    carry_over_stored_fields(def, &old, &mut new, subresource, &old_rv);
    label_namespace_name(def, &mut new);
    let invalid = |causes: Vec<Cause>| ApiError::invalid(group, kind, &key.1, causes);
    check_immutable_data(def, &old, &new).map_err(invalid)?;
    check_no_new_finalizers(&old, &new).map_err(invalid)?;
    let is_crd = def.group == "apiextensions.k8s.io" && def.plural == "customresourcedefinitions";
    let causes = validate_update(def, &old, &mut new, subresource, is_crd, key, opts)?;
    if !causes.is_empty() {
        return Err(invalid(causes));
    }
    if subresource.is_none()
        && tracks_generation(def)
        && content_differs(&old, &new, def.has_status)
    {
        let g = meta(&old)
            .get("generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        meta_mut(&mut new).insert("generation".into(), json!(g + 1));
    }
    if let Some(user) = &opts.user {
        opts.admit(
            st,
            admission::Request {
                operation: Operation::Update,
                def,
                subresource: subresource.unwrap_or_default(),
                namespace: &key.0,
                name: &key.1,
                object: Some(&new),
                old_object: Some(&old),
                user,
                dry_run: opts.dry_run,
                field_manager: &opts.manager,
            },
        )?;
    }
    // Server-side apply brings its own managedFields: a change of owners
    // alone is a real write, a newer timestamp alone is not.
    let owners_changed = opts.managed_fields_done
        && managed_fields_without_times(&old) != managed_fields_without_times(&new);
    if !owners_changed && is_noop(&old, &new) {
        return Ok(old);
    }
    if is_crd && subresource.is_none() {
        prepare_crd(&mut new, Some(&old));
        let mut probe = st.catalogue.clone();
        probe.set_crd(&new).map_err(invalid)?;
        if !opts.dry_run {
            st.catalogue = probe;
        }
    }
    if !opts.managed_fields_done {
        patch::record_update_with(
            Some(&old),
            &mut new,
            &opts.manager,
            field_manager_options(def, subresource),
        );
    }
    if opts.dry_run {
        return Ok(Arc::new(new));
    }
    if is_deleting(&new) && finalizers(&new).is_empty() {
        // The answer is the object as written; storage then deletes it.
        finish_delete(st, def, key);
        return Ok(Arc::new(new));
    }
    let written = st.put(&gr, key.clone(), new);
    if is_crd && subresource.is_none() {
        run_crd_controllers(st, key);
    }
    Ok(written)
}

/// Update stage 1: the body names the object of the URL, and its
/// resourceVersion (if any) is the stored one; a PUT without one is
/// refused where the kind requires it. Returns the stored resourceVersion.
fn check_update_request(
    def: &ResourceDef,
    key: &ObjKey,
    old: &Value,
    new: &Value,
    opts: &WriteOpts,
) -> Result<String, ApiError> {
    let (group, _) = kind_group(def);
    let body_name = str_of(meta(new), "name");
    if !body_name.is_empty() && body_name != key.1 {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({})",
            key.1
        )));
    }
    if def.namespaced {
        let body_ns = str_of(meta(new), "namespace");
        if !body_ns.is_empty() && body_ns != key.0 {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    }
    let sent_rv = str_of(meta(new), "resourceVersion");
    let old_rv = str_of(meta(old), "resourceVersion").to_string();
    if !sent_rv.is_empty() && sent_rv != old_rv {
        return Err(ApiError::conflict(group, &def.plural, &key.1));
    }
    if sent_rv.is_empty() && opts.is_put && !def.allow_unconditional_update {
        // The registry names the resource here (`widgets.group`), not the Kind.
        return Err(ApiError::invalid(
            group,
            &def.plural,
            &key.1,
            vec![Cause::new(
                "FieldValueInvalid",
                "metadata.resourceVersion",
                "Invalid value: 0: must be specified for an update",
            )],
        ));
    }
    Ok(old_rv)
}

/// Update stage 2: what the write may not change comes from the stored
/// object — everything but `status` on the status subresource, `status`
/// on the main resource, type meta, and the server-owned metadata.
fn carry_over_stored_fields(
    def: &ResourceDef,
    old: &Value,
    new: &mut Value,
    subresource: Option<&str>,
    old_rv: &str,
) {
    if subresource == Some("status") {
        // A status write keeps everything but status (and the managedFields
        // that track it) from the stored object.
        let status = new.get("status").cloned();
        let managed = meta(new).get("managedFields").cloned();
        let mut merged = old.clone();
        match status {
            Some(s) => merged["status"] = s,
            None => {
                if let Some(o) = merged.as_object_mut() {
                    o.remove("status");
                }
            }
        }
        if let Some(mf) = managed {
            meta_mut(&mut merged).insert("managedFields".into(), mf);
        }
        *new = merged;
    } else if def.has_status {
        match old.get("status") {
            Some(s) => new["status"] = s.clone(),
            None => {
                if let Some(o) = new.as_object_mut() {
                    o.remove("status");
                }
            }
        }
    }
    new["apiVersion"] = json!(def.api_version());
    new["kind"] = json!(def.kind);
    let old_meta = meta(old);
    let m = meta_mut(new);
    for k in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "generation",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    ] {
        match old_meta.get(k) {
            Some(v) => m.insert(k.into(), v.clone()),
            None => m.remove(k),
        };
    }
    m.insert("resourceVersion".into(), json!(old_rv));
    m.remove("selfLink");
}

/// Update stage 3: an `immutable` ConfigMap or Secret keeps its data and
/// stays immutable.
fn check_immutable_data(def: &ResourceDef, old: &Value, new: &Value) -> Result<(), Vec<Cause>> {
    let immutable_kind =
        def.group.is_empty() && matches!(def.plural.as_str(), "configmaps" | "secrets");
    if !immutable_kind || old.get("immutable") != Some(&Value::Bool(true)) {
        return Ok(());
    }
    let forbidden = |field: &str| {
        Cause::new(
            "FieldValueForbidden",
            field,
            "Forbidden: field is immutable when `immutable` is set",
        )
    };
    let mut causes: Vec<Cause> = ["data", "binaryData"]
        .into_iter()
        .filter(|field| old.get(*field) != new.get(*field))
        .map(forbidden)
        .collect();
    if new.get("immutable") != Some(&Value::Bool(true)) {
        causes.push(forbidden("immutable"));
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(causes)
    }
}

/// Update stage 4: an object being deleted takes no new finalizers.
fn check_no_new_finalizers(old: &Value, new: &Value) -> Result<(), Vec<Cause>> {
    if !is_deleting(old) {
        return Ok(());
    }
    let before = finalizers(old);
    let added: Vec<String> = finalizers(new)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    if added.is_empty() {
        return Ok(());
    }
    // Go's `%#v` of the sorted list; the real server validates object
    // metadata twice on update (common fields, then the strategy), so the
    // cause is listed twice.
    let mut added: Vec<&str> = added.iter().map(|f| f.as_ref()).collect();
    added.sort_unstable();
    added.dedup();
    let list = added
        .iter()
        .map(|f| format!("{f:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let cause = Cause::new(
        "FieldValueForbidden",
        "metadata.finalizers",
        format!(
            "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{list}}}"
        ),
    );
    Err(vec![cause.clone(), cause])
}

/// Update stage 5: schema pruning, defaulting and validation (paths
/// relative to `status` on the status subresource), and for a CRD its own
/// rules and immutable names. Returns the validation causes.
fn validate_update(
    def: &ResourceDef,
    old: &Value,
    new: &mut Value,
    subresource: Option<&str>,
    is_crd: bool,
    key: &ObjKey,
    opts: &WriteOpts,
) -> Result<Vec<Cause>, ApiError> {
    let mut causes = apply_schema(def, new, Some(old), opts)?;
    if subresource == Some("status") {
        relative_to_status(&mut causes);
    }
    if subresource.is_none() && admission::is_policy_kind(def) {
        causes.extend(admission::prepare(&def.plural, new));
    }
    if is_crd && subresource.is_none() && causes.is_empty() {
        causes.extend(check_crd(new, &key.1));
        let names_changed = new["spec"]["group"] != old["spec"]["group"]
            || new["spec"]["names"]["plural"] != old["spec"]["names"]["plural"];
        if names_changed {
            causes.push(Cause::new(
                "FieldValueInvalid",
                "spec.names.plural",
                "Invalid value: field is immutable",
            ));
        }
    }
    Ok(causes)
}

/// Result of a DELETE of one object.
pub enum Deleted {
    /// Removed now (the object as deleted).
    Gone(Arc<Value>),
    /// Still present, waiting for finalizers (the object with deletionTimestamp).
    Pending(Arc<Value>),
}

/// DeleteOptions preconditions.
#[derive(Debug, Default, Clone)]
pub struct Preconditions {
    pub uid: Option<String>,
    pub resource_version: Option<String>,
}

/// Deletes one object, honouring finalizers. `opts` gives the dry run and
/// who deletes (for admission; its warnings are collected there).
pub fn delete(
    st: &mut State,
    def: &Arc<ResourceDef>,
    key: &ObjKey,
    pre: &Preconditions,
    opts: &WriteOpts,
) -> Result<Deleted, ApiError> {
    let dry_run = opts.dry_run;
    let gr = def.storage_key();
    let Some(old) = st.get(&gr, key).cloned() else {
        return Err(ApiError::not_found(&def.group, &def.plural, &key.1));
    };
    if let Some(uid) = &pre.uid {
        let actual = str_of(meta(&old), "uid");
        if uid != actual {
            // `rest.BeforeDelete`: the conflict names the Kind, not the resource.
            return Err(ApiError::conflict_because(
                &def.group,
                &def.kind,
                &key.1,
                &format!(
                    "the UID in the precondition ({uid}) does not match the UID in record ({actual}). The object might have been deleted and then recreated"
                ),
            ));
        }
    }
    if let Some(rv) = &pre.resource_version {
        let actual = str_of(meta(&old), "resourceVersion");
        if rv != actual {
            return Err(ApiError::conflict_because(
                &def.group,
                &def.kind,
                &key.1,
                &format!(
                    "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({actual}). The object might have been modified"
                ),
            ));
        }
    }
    if let Some(user) = &opts.user {
        opts.admit(
            st,
            admission::Request {
                operation: Operation::Delete,
                def,
                subresource: "",
                namespace: &key.0,
                name: &key.1,
                object: None,
                old_object: Some(&old),
                user,
                dry_run,
                field_manager: "",
            },
        )?;
    }
    if dry_run {
        return Ok(Deleted::Gone(old));
    }
    let is_namespace = def.group.is_empty() && def.plural == "namespaces";
    if is_namespace && matches!(key.1.as_str(), "default" | "kube-system" | "kube-public") {
        // The NamespaceLifecycle admission plugin protects these.
        return Err(ApiError::forbidden(
            format!(
                "namespaces \"{}\" is forbidden: this namespace may not be deleted",
                key.1
            ),
            "",
            "namespaces",
            &key.1,
        ));
    }
    if is_namespace {
        return Ok(delete_namespace(st, &key.1, old));
    }
    let is_crd = def.group == "apiextensions.k8s.io" && def.plural == "customresourcedefinitions";
    if is_crd && !is_deleting(&old) {
        // The CRD's own REST storage: its objects go first, behind a
        // finalizer; the answer is the CRD marked for deletion. The
        // finalizer controller then runs (here at once).
        let mut marked = (*old).clone();
        let m = meta_mut(&mut marked);
        m.insert("deletionTimestamp".into(), json!(now_rfc3339()));
        let list = m.entry("finalizers").or_insert_with(|| json!([]));
        if let Some(a) = list.as_array_mut()
            && !a.iter().any(|f| f == CRD_CLEANUP_FINALIZER)
        {
            a.push(json!(CRD_CLEANUP_FINALIZER));
        }
        set_crd_condition(
            &mut marked,
            "Terminating",
            "True",
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        );
        let answer = st.put(&gr, key.clone(), marked);
        run_crd_controllers(st, key);
        return Ok(Deleted::Pending(answer));
    }
    if !finalizers(&old).is_empty() {
        if is_deleting(&old) {
            return Ok(Deleted::Pending(old));
        }
        let mut new = (*old).clone();
        let m = meta_mut(&mut new);
        m.insert("deletionTimestamp".into(), json!(now_rfc3339()));
        m.insert("deletionGracePeriodSeconds".into(), json!(0));
        if let Some(g) = m.get("generation").and_then(Value::as_i64) {
            m.insert("generation".into(), json!(g + 1));
        }
        return Ok(Deleted::Pending(st.put(&gr, key.clone(), new)));
    }
    match finish_delete(st, def, key) {
        Some(gone) => Ok(Deleted::Gone(gone)),
        None => Err(ApiError::not_found(&def.group, &def.plural, &key.1)),
    }
}

/// Removes an object for good, with the cascades the real server's
/// controllers would perform: a CRD takes its objects with it, and the last
/// object leaving a terminating namespace lets the namespace go.
fn finish_delete(st: &mut State, def: &ResourceDef, key: &ObjKey) -> Option<Arc<Value>> {
    let gr = def.storage_key();
    let gone = st.remove(&gr, key)?;
    if def.group == "apiextensions.k8s.io" && def.plural == "customresourcedefinitions" {
        let group = str_of(&gone["spec"], "group").to_string();
        let plural = str_of(&gone["spec"]["names"], "plural").to_string();
        let cr = GroupResource {
            group: group.clone(),
            resource: plural.clone(),
        };
        for k in st.keys(&cr, None) {
            st.remove(&cr, &k);
        }
        st.catalogue.remove_crd(&group, &plural);
    } else if def.crd {
        // The last object of a terminating CRD lets the CRD go.
        if st.keys(&gr, None).is_empty() && crd_terminating(st, def) {
            let crd_key = (String::new(), format!("{}.{}", def.plural, def.group));
            run_crd_controllers(st, &crd_key);
        }
    }
    if def.namespaced {
        maybe_finish_namespace(st, &key.0);
    }
    Some(gone)
}

/// The garbage collector's part once an owner is gone (background
/// propagation, done at once): every object listing `owner_uid` in its
/// `metadata.ownerReferences` loses that reference, and one left with no
/// owner is deleted (honouring its own finalizers, and collecting its own
/// dependents in turn). With `orphan` the dependents only lose the
/// reference, as `propagationPolicy: Orphan` asks.
pub fn collect_dependents(st: &mut State, owner_uid: &str, orphan: bool) {
    if owner_uid.is_empty() {
        return;
    }
    let defs: Vec<Arc<ResourceDef>> = st
        .resources_with_objects()
        .into_iter()
        .filter_map(|gr| st.catalogue.any_version(&gr).cloned())
        .collect();
    for d in defs {
        let gr = d.storage_key();
        for k in st.keys(&gr, None) {
            let Some(obj) = st.get(&gr, &k).cloned() else {
                continue;
            };
            let Some(refs) = meta(&obj).get("ownerReferences").and_then(Value::as_array) else {
                continue;
            };
            if !refs.iter().any(|r| str_of(r, "uid") == owner_uid) {
                continue;
            }
            let left: Vec<Value> = refs
                .iter()
                .filter(|r| str_of(r, "uid") != owner_uid)
                .cloned()
                .collect();
            if left.is_empty() && !orphan {
                if let Ok(Deleted::Gone(gone)) =
                    delete(st, &d, &k, &Preconditions::default(), &WriteOpts::default())
                {
                    let uid = str_of(meta(&gone), "uid").to_string();
                    collect_dependents(st, &uid, false);
                }
                continue;
            }
            let mut new = (*obj).clone();
            let m = meta_mut(&mut new);
            if left.is_empty() {
                m.remove("ownerReferences");
            } else {
                m.insert("ownerReferences".into(), Value::Array(left));
            }
            st.put(&gr, k, new);
        }
    }
}

fn delete_namespace(st: &mut State, ns: &str, old: Arc<Value>) -> Deleted {
    let ns_gr = namespaces_gr();
    let ns_key = (String::new(), ns.to_string());
    let current = if is_deleting(&old) {
        old
    } else {
        let mut new = (*old).clone();
        meta_mut(&mut new).insert("deletionTimestamp".into(), json!(now_rfc3339()));
        meta_mut(&mut new).insert("deletionGracePeriodSeconds".into(), json!(0));
        new["status"]["phase"] = json!("Terminating");
        st.put(&ns_gr, ns_key.clone(), new)
    };
    // What the namespace controller does: delete every namespaced object,
    // each honouring its own finalizers.
    let defs: Vec<Arc<ResourceDef>> = st
        .resources_with_objects()
        .into_iter()
        .filter_map(|gr| st.catalogue.any_version(&gr).cloned())
        .filter(|d| d.namespaced)
        .collect();
    for d in defs {
        for k in st.keys(&d.storage_key(), Some(ns)) {
            let _ = delete(st, &d, &k, &Preconditions::default(), &WriteOpts::default());
        }
    }
    if st.get(&ns_gr, &ns_key).is_none() {
        return Deleted::Gone(current);
    }
    if namespace_is_empty(st, ns)
        && finalizers(&current).is_empty()
        && let Some(gone) = st.remove(&ns_gr, &ns_key)
    {
        return Deleted::Gone(gone);
    }
    Deleted::Pending(st.get(&ns_gr, &ns_key).cloned().unwrap_or(current))
}

fn namespace_is_empty(st: &State, ns: &str) -> bool {
    st.resources_with_objects().iter().all(|gr| {
        st.catalogue.any_version(gr).is_none_or(|d| !d.namespaced) || st.count(gr, Some(ns)) == 0
    })
}

fn maybe_finish_namespace(st: &mut State, ns: &str) {
    let key = (String::new(), ns.to_string());
    let terminating = st
        .get(&namespaces_gr(), &key)
        .is_some_and(|n| is_deleting(n) && finalizers(n).is_empty());
    if terminating && namespace_is_empty(st, ns) {
        st.remove(&namespaces_gr(), &key);
    }
}

/// Seeds an object at start (bootstrap RBAC, default namespaces).
pub fn seed(st: &mut State, obj: Value) {
    let api_version = str_of(&obj, "apiVersion").to_string();
    let kind = str_of(&obj, "kind").to_string();
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g.to_string(), v.to_string()),
        None => (String::new(), api_version.clone()),
    };
    let def = st
        .catalogue
        .resources_in(&group, &version)
        .into_iter()
        .find(|d| d.kind == kind);
    let Some(def) = def else {
        tracing::warn!(%api_version, %kind, "bootstrap object of an unknown kind skipped");
        return;
    };
    let ns = str_of(meta(&obj), "namespace").to_string();
    let opts = WriteOpts {
        manager: "kube-apiserver".into(),
        ..Default::default()
    };
    if let Err(e) = create(st, &def, &ns, obj, &opts) {
        tracing::warn!(error = %e, "bootstrap object rejected");
    }
}

#[cfg(test)]
mod tests;
