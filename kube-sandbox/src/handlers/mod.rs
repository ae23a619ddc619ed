//! Resource verbs: get, list (JSON and Table), create, update, patch (all
//! four content types), delete, deletecollection and the `/status`
//! subresource; TokenRequest and the review APIs are in [`auth`].

mod auth;

use crate::errors::{ApiError, Cause};
use crate::http::{self, Query, Resp};
use crate::objects::{self, Deleted, Preconditions, WriteOpts};
use crate::patch;
use crate::request::{Call, Selectors, content_type, include_object, to_served};
use crate::resources::ResourceDef;
use crate::store::{ObjKey, State};
use crate::table;
use base64::Engine;
use bytes::Bytes;
use hyper::Method;
use hyper::header::{self, HeaderValue};
use serde_json::{Value, json};
use std::sync::Arc;

pub(super) fn not_served() -> ApiError {
    ApiError::new(
        404,
        "NotFound",
        "the server could not find the requested resource",
    )
}

/// The plain-text 404 of the real server's mux, for a path no API serves.
fn page_not_found() -> Resp {
    let mut r = http::bytes_response(404, bytes::Bytes::from_static(b"404 page not found\n"));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// Routes a resource request to its verb.
pub async fn dispatch(call: Call<'_>) -> Result<Resp, ApiError> {
    let info = call.info;
    let def = {
        let st = call.shared.state.lock().unwrap();
        st.catalogue
            .get(&info.group, &info.version, &info.resource)
            .cloned()
    };
    let Some(def) = def else {
        // Under /apis no handler claims an unknown resource or version
        // (the custom resource handler delegates), so the mux answers.
        if !info.group.is_empty() {
            return Ok(page_not_found());
        }
        return Err(not_served());
    };
    let is_namespace_kind = def.group.is_empty() && def.plural == "namespaces";
    if !info.namespace.is_empty() && !is_namespace_kind && !def.namespaced {
        return Err(not_served());
    }
    let sub = info.subresource.as_str();
    let sub_ok = sub.is_empty()
        || (sub == "status" && def.has_status)
        || def.extra_subresources.iter().any(|(n, _, _)| n == sub);
    if !sub_ok {
        return Err(not_served());
    }
    if def.create_only {
        if def.namespaced && info.namespace.is_empty() {
            return Err(not_served());
        }
        return match info.verb.as_str() {
            "create" => auth::review(&call, &def),
            _ => Err(ApiError::method_not_allowed(
                "the server does not allow this method on the requested resource".to_string(),
            )),
        };
    }
    match (info.verb.as_str(), sub) {
        ("get", "" | "status") => get(&call, &def),
        ("list", _) => list(&call, &def),
        ("watch", _) => crate::watch::serve(&call, def),
        ("create", "") => create(&call, &def),
        ("create", "token") => auth::token_request(&call),
        ("update", "" | "status") => update(&call, &def),
        ("update", "finalize") => finalize_namespace(&call, &def),
        ("get", "scale") => get_scale(&call, &def),
        ("update" | "patch", "scale") => write_scale(&call, &def),
        ("patch", "" | "status") => patch(&call, &def),
        ("delete", "") => delete(&call, &def),
        ("deletecollection", "") => delete_collection(&call, &def),
        _ => Err(ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        )),
    }
}

fn object_response(call: &Call, def: &ResourceDef, code: u16, obj: &Arc<Value>) -> Resp {
    if call.wants_table() {
        let table = table::to_table(
            &def.columns,
            std::slice::from_ref(&*to_served(def, obj)),
            include_object(call.query),
            json!({"resourceVersion": obj["metadata"]["resourceVersion"]}),
            jiff::Timestamp::now(),
        );
        return http::json_response(code, &table);
    }
    let bytes = serde_json::to_vec(&*to_served(def, obj)).unwrap_or_default();
    http::bytes_response(code, Bytes::from(bytes))
}

/// The stored object the call names, or the real server's 404.
fn stored(call: &Call, def: &Arc<ResourceDef>) -> Result<Arc<Value>, ApiError> {
    let key = call.key(def);
    let obj = {
        let st = call.shared.state.lock().unwrap();
        st.get(&def.storage_key(), &key).cloned()
    };
    obj.ok_or_else(|| ApiError::not_found(&def.group, &def.plural, &key.1))
}

fn get(call: &Call, def: &Arc<ResourceDef>) -> Result<Resp, ApiError> {
    Ok(object_response(call, def, 200, &stored(call, def)?))
}

fn encode_continue(rv: u64, key: &ObjKey) -> String {
    let token = json!({"v": "meta.k8s.io/v1", "rv": rv, "start": [key.0, key.1]});
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(token.to_string())
}

fn decode_continue(token: &str) -> Result<(u64, ObjKey), ApiError> {
    let bad = || {
        ApiError::bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        )
    };
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token.trim_end_matches('='))
        .map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&raw).map_err(|_| bad())?;
    let rv = v["rv"].as_u64().ok_or_else(bad)?;
    let ns = v["start"][0].as_str().ok_or_else(bad)?.to_string();
    let name = v["start"][1].as_str().ok_or_else(bad)?.to_string();
    Ok((rv, (ns, name)))
}

/// One page of a list.
pub struct Page {
    pub items: Vec<Arc<Value>>,
    pub rv: u64,
    pub continue_token: Option<String>,
    /// `metadata.remainingItemCount` of a page that is not the last.
    pub remaining_item_count: Option<u64>,
}

/// The resourceVersion a list without a continue token is served at, from
/// `resourceVersion` and `resourceVersionMatch`: unset or `0` = now; a
/// version not yet reached is a 504 `Too large resource version` (the real
/// watch cache waits up to 3s for it first; nothing can catch up in the
/// sandbox while the request holds the store); `Exact` = that version
/// (rebuilt from the event history), 410 once the history no longer
/// reaches it; `NotOlderThan` (the default) = now.
fn list_resource_version(st: &State, def: &ResourceDef, q: &Query) -> Result<u64, ApiError> {
    let current = st.current_rv();
    let param = q.get("resourceVersion").unwrap_or_default();
    let matching = q.get("resourceVersionMatch").unwrap_or_default();
    let exact = matching == "Exact";
    if param.is_empty() || param == "0" {
        return Ok(current);
    }
    let rv: u64 = param.parse().map_err(|e: std::num::ParseIntError| {
        let reason = match e.kind() {
            std::num::IntErrorKind::PosOverflow => "value out of range",
            _ => "invalid syntax",
        };
        ApiError::bad_request(format!(
            "invalid resource version: resourceVersion: Invalid value: {param:?}: strconv.ParseUint: parsing {param:?}: {reason}"
        ))
    })?;
    if rv > current {
        return Err(ApiError {
            details: Some(json!({
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1,
            })),
            ..ApiError::new(
                504,
                "Timeout",
                format!("Timeout: Too large resource version: {rv}, current: {current}"),
            )
        });
    }
    if !exact {
        return Ok(current);
    }
    if rv < st.oldest_resumable_rv_of(&def.storage_key()) {
        return Err(ApiError::gone(
            "The resourceVersion for the provided list is too old.",
        ));
    }
    Ok(rv)
}

/// `ValidateListOptions` for `resourceVersionMatch`: a 422 on `ListOptions`.
fn list_options_valid(rv: &str, matching: &str, continued: bool) -> Result<(), ApiError> {
    if matching.is_empty() {
        return Ok(());
    }
    let mut causes = Vec::new();
    let forbidden = |m: &str| {
        Cause::new(
            "FieldValueForbidden",
            "resourceVersionMatch",
            format!("Forbidden: {m}"),
        )
    };
    if rv.is_empty() {
        causes.push(forbidden(
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        ));
    }
    if continued {
        causes.push(forbidden(
            "resourceVersionMatch is forbidden when continue is provided",
        ));
    }
    if matching != "Exact" && matching != "NotOlderThan" {
        causes.push(Cause::new(
            "FieldValueNotSupported",
            "resourceVersionMatch",
            format!(
                "Unsupported value: {matching:?}: supported values: \"Exact\", \"NotOlderThan\", \"\""
            ),
        ));
    }
    if matching == "Exact" && rv == "0" {
        causes.push(forbidden(
            "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
        ));
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid("meta.k8s.io", "ListOptions", "", causes))
    }
}

/// Selects a page of objects under the lock (Arc clones only).
pub fn list_page(
    st: &State,
    def: &ResourceDef,
    namespace: Option<&str>,
    q: &Query,
    sel: &Selectors,
) -> Result<Page, ApiError> {
    let limit: usize = q
        .get("limit")
        .and_then(|l| l.parse::<i64>().ok())
        .filter(|l| *l > 0)
        .map(|l| l as usize)
        .unwrap_or(usize::MAX);
    let continued = q.get("continue").filter(|c| !c.is_empty());
    list_options_valid(
        q.get("resourceVersion").unwrap_or_default(),
        q.get("resourceVersionMatch").unwrap_or_default(),
        continued.is_some(),
    )?;
    let (rv, after) = match continued {
        Some(token) => {
            let (rv, key) = decode_continue(token)?;
            if rv < st.oldest_resumable_rv_of(&def.storage_key()) {
                return Err(ApiError::gone(
                    "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue value from the response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
                ));
            }
            (rv, Some(key))
        }
        None => (list_resource_version(st, def, q)?, None),
    };
    let gr = def.storage_key();
    // A continued list, or an exact older version, reads the resource as it
    // was at `rv` (as etcd does); otherwise the current objects.
    let then = if rv < st.current_rv() {
        st.changed_since(&gr, namespace, rv)
    } else {
        None
    };
    let now = st.range(&gr, namespace, after.as_ref());
    let mut objects: Box<dyn Iterator<Item = (&ObjKey, &Arc<Value>)>> = match &then {
        Some(then) => Box::new(crate::store::at_version(now, then, after.as_ref())),
        None => now,
    };
    let mut items = Vec::new();
    let mut last_key: Option<ObjKey> = None;
    let mut more = false;
    for (k, obj) in objects.by_ref() {
        if !sel.matches(obj) {
            continue;
        }
        if items.len() == limit {
            more = true;
            break;
        }
        items.push(obj.clone());
        last_key = Some(k.clone());
    }
    // As the real storage: the count of what is left, when no selector
    // filters the list (otherwise it is unknown without reading it all).
    // The loop stopped on the first object of the next page.
    let remaining_item_count = (more && sel.is_everything()).then(|| 1 + objects.count() as u64);
    let last_key = last_key.as_ref();
    let continue_token = match (more, last_key) {
        (true, Some(k)) => Some(encode_continue(rv, k)),
        _ => None,
    };
    Ok(Page {
        items,
        rv,
        continue_token,
        remaining_item_count,
    })
}

fn list(call: &Call, def: &Arc<ResourceDef>) -> Result<Resp, ApiError> {
    let sel = Selectors::from_query(call.query, def)?;
    let ns =
        (def.namespaced && !call.info.namespace.is_empty()).then_some(call.info.namespace.as_str());
    let page = {
        let st = call.shared.state.lock().unwrap();
        list_page(&st, def, ns, call.query, &sel)?
    };
    let mut meta = json!({"resourceVersion": page.rv.to_string()});
    if let Some(c) = &page.continue_token {
        meta["continue"] = json!(c);
    }
    if let Some(n) = page.remaining_item_count {
        meta["remainingItemCount"] = json!(n);
    }
    if call.wants_table() {
        let objs: Vec<Value> = page
            .items
            .iter()
            .map(|o| (*to_served(def, o)).clone())
            .collect();
        let table = table::to_table(
            &def.columns,
            &objs,
            include_object(call.query),
            meta,
            jiff::Timestamp::now(),
        );
        return Ok(http::json_response(200, &table));
    }
    if def.crd && page.continue_token.is_none() {
        // Custom resource lists are unstructured: the real server keeps
        // the empty `continue` of the last page that typed lists (and
        // Tables) omit.
        meta["continue"] = json!("");
    }
    // Written by hand so a 10,000-item list is serialized straight from the
    // stored objects, without building one big Value first.
    let mut out = Vec::with_capacity(256 + page.items.len() * 512);
    out.extend_from_slice(b"{\"kind\":");
    serde_json::to_writer(&mut out, &def.list_kind).map_err(internal)?;
    out.extend_from_slice(b",\"apiVersion\":");
    serde_json::to_writer(&mut out, &def.api_version()).map_err(internal)?;
    out.extend_from_slice(b",\"metadata\":");
    serde_json::to_writer(&mut out, &meta).map_err(internal)?;
    out.extend_from_slice(b",\"items\":[");
    for (i, o) in page.items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, &*to_served(def, o)).map_err(internal)?;
    }
    out.extend_from_slice(b"]}");
    Ok(http::bytes_response(200, Bytes::from(out)))
}

fn internal(e: impl std::fmt::Display) -> ApiError {
    ApiError::internal(e.to_string())
}

fn create(call: &Call, def: &Arc<ResourceDef>) -> Result<Resp, ApiError> {
    let body = call.json_body()?;
    let opts = call.write_opts(false);
    let ns = if def.namespaced {
        call.info.namespace.as_str()
    } else {
        ""
    };
    if def.namespaced && ns.is_empty() {
        return Err(not_served());
    }
    let obj = {
        let mut st = call.shared.state.lock().unwrap();
        objects::create(&mut st, def, ns, body, &opts)?
    };
    Ok(with_warnings(object_response(call, def, 201, &obj), &opts))
}

fn subresource<'a>(call: &'a Call<'_>) -> Option<&'a str> {
    (!call.info.subresource.is_empty()).then_some(call.info.subresource.as_str())
}

fn update(call: &Call, def: &Arc<ResourceDef>) -> Result<Resp, ApiError> {
    let body = call.json_body()?;
    let opts = call.write_opts(true);
    let key = call.key(def);
    let obj = {
        let mut st = call.shared.state.lock().unwrap();
        objects::update(&mut st, def, &key, body, subresource(call), &opts)?
    };
    Ok(with_warnings(object_response(call, def, 200, &obj), &opts))
}

fn finalize_namespace(call: &Call, def: &Arc<ResourceDef>) -> Result<Resp, ApiError> {
    // `PUT /namespaces/NAME/finalize` writes only spec.finalizers.
    let body = call.json_body()?;
    let key = call.key(def);
    let obj = {
        let mut st = call.shared.state.lock().unwrap();
        let current = st
            .get(&def.storage_key(), &key)
            .cloned()
            .ok_or_else(|| ApiError::not_found("", "namespaces", &key.1))?;
        let mut new = (*current).clone();
        new["spec"]["finalizers"] = body["spec"]["finalizers"].clone();
        st.put(&def.storage_key(), key, new)
    };
    Ok(object_response(call, def, 200, &obj))
}

/// The `autoscaling/v1` Scale view of a workload.
fn scale_of(obj: &Value) -> Value {
    let m = &obj["metadata"];
    let selector = obj["spec"]["selector"]["matchLabels"]
        .as_object()
        .map(|l| {
            l.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {"name": m["name"], "namespace": m["namespace"], "uid": m["uid"],
                     "resourceVersion": m["resourceVersion"], "creationTimestamp": m["creationTimestamp"]},
        "spec": {"replicas": obj["spec"]["replicas"].as_i64().unwrap_or(1)},
        "status": {"replicas": obj["status"]["replicas"].as_i64().unwrap_or(0), "selector": selector},
    })
}

fn get_scale(call: &Call, def: &Arc<ResourceDef>) -> Result<Resp, ApiError> {
    let obj = stored(call, def)?;
    Ok(http::json_response(200, &scale_of(&obj)))
}

fn write_scale(call: &Call, def: &Arc<ResourceDef>) -> Result<Resp, ApiError> {
    let key = call.key(def);
    let body: Value = serde_json::from_slice(&call.body)
        .map_err(|e| ApiError::bad_request(format!("error decoding scale: {e}")))?;
    let opts = call.write_opts(false);
    let obj = {
        let mut st = call.shared.state.lock().unwrap();
        let current = st
            .get(&def.storage_key(), &key)
            .cloned()
            .ok_or_else(|| ApiError::not_found(&def.group, &def.plural, &key.1))?;
        let mut scale = scale_of(&current);
        if call.method == Method::PUT {
            scale = body;
        } else {
            match content_type(call).as_str() {
                "application/json-patch+json" => patch::json_patch(&mut scale, &body)?,
                _ => patch::merge_patch(&mut scale, &body),
            }
        }
        let Some(replicas) = scale["spec"]["replicas"].as_i64() else {
            return Err(ApiError::invalid(
                "autoscaling",
                "Scale",
                &key.1,
                vec![Cause::new(
                    "FieldValueRequired",
                    "spec.replicas",
                    "Required value",
                )],
            ));
        };
        let mut new = (*current).clone();
        new["spec"]["replicas"] = json!(replicas);
        new["metadata"]["resourceVersion"] = scale["metadata"]["resourceVersion"].clone();
        objects::update(&mut st, def, &key, new, None, &opts)?
    };
    Ok(http::json_response(200, &scale_of(&obj)))
}

fn patch(call: &Call, def: &Arc<ResourceDef>) -> Result<Resp, ApiError> {
    let ct = content_type(call);
    let key = call.key(def);
    let sub = subresource(call);
    let mut opts = call.write_opts(false);
    if ct == "application/apply-patch+yaml" {
        return apply(call, def, &key, sub, opts);
    }
    let patch_body: Value = serde_json::from_slice(&call.body)
        .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
    if def.crd && ct == "application/strategic-merge-patch+json" {
        return Err(ApiError::unsupported_media_type("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml".to_string()));
    }
    opts.is_put = false;
    let obj = {
        let mut st = call.shared.state.lock().unwrap();
        let current = st
            .get(&def.storage_key(), &key)
            .cloned()
            .ok_or_else(|| ApiError::not_found(&def.group, &def.plural, &key.1))?;
        let mut target = (*to_served(def, &current)).clone();
        match ct.as_str() {
            "application/merge-patch+json" => patch::merge_patch(&mut target, &patch_body),
            "application/json-patch+json" => patch::json_patch(&mut target, &patch_body)?,
            "application/strategic-merge-patch+json" => {
                patch::strategic_merge_patch(&mut target, &patch_body)?
            }
            _ => {
                return Err(ApiError::unsupported_media_type(format!(
                    "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml{}",
                    if def.crd {
                        ""
                    } else {
                        ", application/strategic-merge-patch+json"
                    }
                )));
            }
        }
        objects::update(&mut st, def, &key, target, sub, &opts)?
    };
    Ok(with_warnings(object_response(call, def, 200, &obj), &opts))
}

fn apply(
    call: &Call,
    def: &Arc<ResourceDef>,
    key: &ObjKey,
    sub: Option<&str>,
    mut opts: WriteOpts,
) -> Result<Resp, ApiError> {
    let Some(manager) = call.query.get("fieldManager").filter(|m| !m.is_empty()) else {
        // The real validation is of the PatchOptions, which have no name.
        return Err(ApiError::invalid(
            "meta.k8s.io",
            "PatchOptions",
            "",
            vec![Cause::new(
                "FieldValueRequired",
                "fieldManager",
                "Required value: is required for apply patch",
            )],
        ));
    };
    let applied: Value = serde_saphyr::from_slice(&call.body)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
    if !applied.is_object() {
        return Err(ApiError::bad_request("apply patch must be an object"));
    }
    let force = call.query.flag("force");
    opts.managed_fields_done = true;
    let (code, obj) = {
        let mut st = call.shared.state.lock().unwrap();
        let current = st.get(&def.storage_key(), key).cloned();
        match current {
            None if sub.is_some() => {
                return Err(ApiError::not_found(&def.group, &def.plural, &key.1));
            }
            None => {
                let new = patch::server_side_apply_with(
                    None,
                    &applied,
                    manager,
                    force,
                    objects::field_manager_options(def, None),
                )?;
                let mut new = new;
                if new["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .is_empty()
                {
                    new["metadata"]["name"] = json!(key.1);
                }
                (201, objects::create(&mut st, def, &key.0, new, &opts)?)
            }
            Some(live) => {
                let live = to_served(def, &live);
                let new = patch::server_side_apply_with(
                    Some(&live),
                    &applied,
                    manager,
                    force,
                    objects::field_manager_options(def, sub),
                )?;
                (200, objects::update(&mut st, def, key, new, sub, &opts)?)
            }
        }
    };
    Ok(with_warnings(object_response(call, def, code, &obj), &opts))
}

/// Adds `Warning: 299 - "..."` headers, as the real server does.
fn with_warnings(mut resp: Resp, opts: &WriteOpts) -> Resp {
    for w in opts.warnings.borrow().iter() {
        let escaped = w.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(v) = HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
            resp.headers_mut().append("warning", v);
        }
    }
    resp
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct DeleteOptions {
    #[serde(default)]
    preconditions: Option<PreconditionsBody>,
    #[serde(default)]
    dry_run: Option<Vec<String>>,
    #[serde(default)]
    propagation_policy: Option<String>,
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct PreconditionsBody {
    uid: Option<String>,
    resource_version: Option<String>,
}

/// Parsed DeleteOptions: preconditions, dry run, and the GC finalizer a
/// `propagationPolicy` of `Foreground` or `Orphan` puts on the object.
fn delete_options(call: &Call) -> (Preconditions, bool) {
    let (pre, dry, _) = delete_options_with_policy(call);
    (pre, dry)
}

fn delete_options_with_policy(call: &Call) -> (Preconditions, bool, Option<&'static str>) {
    let opts: DeleteOptions = if call.body.is_empty() {
        DeleteOptions::default()
    } else if crate::protobuf::is_protobuf(&content_type(call)) {
        crate::protobuf::decode(&call.body)
            .ok()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default()
    } else {
        serde_json::from_slice(&call.body).unwrap_or_default()
    };
    let pre = opts
        .preconditions
        .map(|p| Preconditions {
            uid: p.uid,
            resource_version: p.resource_version,
        })
        .unwrap_or_default();
    let dry = call.query.get("dryRun") == Some("All")
        || opts.dry_run.is_some_and(|d| d.iter().any(|x| x == "All"));
    let policy = call
        .query
        .get("propagationPolicy")
        .map(str::to_string)
        .or(opts.propagation_policy);
    let gc_finalizer = match policy.as_deref() {
        Some("Foreground") => Some("foregroundDeletion"),
        Some("Orphan") => Some("orphan"),
        _ => None,
    };
    (pre, dry, gc_finalizer)
}

/// The object as the real server answers a delete that the garbage
/// collector finishes: marked for deletion and carrying its GC finalizer.
/// The sandbox has no dependents to wait for, so it does the collector's
/// part at once and the object is already gone (or only waits for its
/// other finalizers).
fn marked_for_gc(def: &ResourceDef, obj: &Value, finalizer: &str, was_gone: bool) -> Value {
    let mut out = obj.clone();
    let Some(m) = out.get_mut("metadata").and_then(Value::as_object_mut) else {
        return out;
    };
    if was_gone {
        m.insert("deletionTimestamp".into(), json!(objects::now_rfc3339()));
        m.insert("deletionGracePeriodSeconds".into(), json!(0));
        if objects::tracks_generation(def)
            && let Some(g) = m.get("generation").and_then(Value::as_i64)
        {
            m.insert("generation".into(), json!(g + 1));
        }
    }
    let list = m.entry("finalizers").or_insert_with(|| json!([]));
    if let Some(a) = list.as_array_mut()
        && !a.iter().any(|f| f == finalizer)
    {
        a.push(json!(finalizer));
    }
    out
}

fn success_status(def: &ResourceDef, obj: &Value) -> Value {
    let mut details = json!({
        "name": obj["metadata"]["name"],
        "kind": def.plural,
        "uid": obj["metadata"]["uid"],
    });
    if !def.group.is_empty() {
        details["group"] = json!(def.group);
    }
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    })
}

/// Write options of a delete: its dry run and who deletes.
fn delete_write_opts(call: &Call, dry_run: bool) -> WriteOpts {
    WriteOpts {
        dry_run,
        ..call.write_opts(false)
    }
}

fn delete(call: &Call, def: &Arc<ResourceDef>) -> Result<Resp, ApiError> {
    let key = call.key(def);
    let (pre, dry, gc_finalizer) = delete_options_with_policy(call);
    let opts = delete_write_opts(call, dry);
    let resp = delete_answer(call, def, &key, &pre, &opts, gc_finalizer)?;
    Ok(with_warnings(resp, &opts))
}

fn delete_answer(
    call: &Call,
    def: &Arc<ResourceDef>,
    key: &ObjKey,
    pre: &Preconditions,
    opts: &WriteOpts,
    gc_finalizer: Option<&str>,
) -> Result<Resp, ApiError> {
    let dry = opts.dry_run;
    let result = {
        let mut st = call.shared.state.lock().unwrap();
        let result = objects::delete(&mut st, def, key, pre, opts)?;
        if let (Deleted::Gone(gone), false) = (&result, dry) {
            let uid = gone["metadata"]["uid"].as_str().unwrap_or_default();
            objects::collect_dependents(&mut st, uid, gc_finalizer == Some("orphan"));
        }
        result
    };
    let is_namespace = def.group.is_empty() && def.plural == "namespaces";
    if let Some(f) = gc_finalizer.filter(|_| !is_namespace) {
        let (obj, was_gone) = match &result {
            Deleted::Gone(o) => (o, true),
            Deleted::Pending(o) => (o, false),
        };
        let shown = marked_for_gc(def, &to_served(def, obj), f, was_gone);
        return Ok(object_response(call, def, 200, &Arc::new(shown)));
    }
    Ok(match result {
        Deleted::Pending(obj) => object_response(call, def, 200, &obj),
        // Namespaces come back as the object, as the real server answers.
        Deleted::Gone(obj) if def.group.is_empty() && def.plural == "namespaces" => {
            object_response(call, def, 200, &obj)
        }
        Deleted::Gone(obj) => http::json_response(200, &success_status(def, &obj)),
    })
}

fn delete_collection(call: &Call, def: &Arc<ResourceDef>) -> Result<Resp, ApiError> {
    let sel = Selectors::from_query(call.query, def)?;
    let ns =
        (def.namespaced && !call.info.namespace.is_empty()).then_some(call.info.namespace.as_str());
    let (pre, dry) = delete_options(call);
    let opts = delete_write_opts(call, dry);
    let (items, rv) = {
        let mut st = call.shared.state.lock().unwrap();
        let keys: Vec<ObjKey> = st
            .range(&def.storage_key(), ns, None)
            .filter(|(_, o)| sel.matches(o))
            .map(|(k, _)| k.clone())
            .collect();
        let mut items = Vec::new();
        for k in keys {
            match objects::delete(&mut st, def, &k, &pre, &opts) {
                Ok(Deleted::Gone(o) | Deleted::Pending(o)) => items.push(o),
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        (items, st.current_rv())
    };
    let items: Vec<Value> = items.iter().map(|o| (*to_served(def, o)).clone()).collect();
    let resp = http::json_response(
        200,
        &json!({
            "kind": def.list_kind,
            "apiVersion": def.api_version(),
            "metadata": if def.crd {
                json!({"resourceVersion": rv.to_string(), "continue": ""})
            } else {
                json!({"resourceVersion": rv.to_string()})
            },
            "items": items,
        }),
    );
    Ok(with_warnings(resp, &opts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_resource_versions_not_reached_yet_are_504() {
        let st = State::new(crate::resources::Catalogue::builtin());
        let def = st.catalogue.get("", "v1", "configmaps").unwrap().clone();
        let q = Query::parse("resourceVersion=999");
        let e = list_resource_version(&st, &def, &q).unwrap_err();
        assert_eq!((e.code, e.reason.as_str()), (504, "Timeout"));
        assert_eq!(
            e.message,
            format!(
                "Timeout: Too large resource version: 999, current: {}",
                st.current_rv()
            )
        );
        assert_eq!(e.details.unwrap()["retryAfterSeconds"], 1);
        let now = Query::parse(&format!("resourceVersion={}", st.current_rv()));
        assert_eq!(
            list_resource_version(&st, &def, &now).unwrap(),
            st.current_rv()
        );
    }
}
