//! Non-resource endpoints: `/version`, health checks, discovery (`/api`,
//! `/api/v1`, `/apis`, `/apis/G`, `/apis/G/V`; `/api` and `/apis` also as
//! aggregated discovery, `apidiscovery.k8s.io/v2`, when the `Accept`
//! header asks for it as kubectl and client-go do), the OpenAPI v3
//! documents kubectl reads for `apply` and field validation, and an
//! OpenAPI v2 document in JSON (the protobuf one client-go asks for is not
//! served: 406, and client-go goes on without it).

use crate::http::{self, Resp};
use crate::resources::{Catalogue, ResourceDef, version_priority};
use crate::shared::Shared;
use hyper::header::HeaderMap;
use serde_json::{Value, json};
use std::sync::Arc;

/// The Kubernetes version the sandbox reports.
pub const GIT_VERSION: &str = "v1.33.0";

fn not_found() -> Resp {
    http::error_response(&crate::errors::ApiError::new(
        404,
        "NotFound",
        "the server could not find the requested resource",
    ))
}

fn text(code: u16, body: &'static str) -> Resp {
    let mut r = http::bytes_response(code, bytes::Bytes::from_static(body.as_bytes()));
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// Whether an `Accept` header asks for aggregated discovery: a media range
/// `application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`
/// (parameters in any order, not with `q=0`).
pub fn wants_aggregated(headers: &HeaderMap) -> bool {
    headers
        .get_all(hyper::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|range| {
            let mut parts = range.split(';').map(str::trim);
            if !parts
                .next()
                .is_some_and(|t| t.eq_ignore_ascii_case("application/json"))
            {
                return false;
            }
            let params: Vec<(String, String)> = parts
                .filter_map(|p| p.split_once('='))
                .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
                .collect();
            let has = |k: &str, v: &str| params.iter().any(|(pk, pv)| pk == k && pv == v);
            has("g", "apidiscovery.k8s.io")
                && has("v", "v2")
                && has("as", "APIGroupDiscoveryList")
                && !params
                    .iter()
                    .any(|(k, v)| k == "q" && v.parse::<f32>().is_ok_and(|q| q == 0.0))
        })
}

/// Whether an `Accept` header takes a JSON answer (or says nothing).
pub fn accepts_json(headers: &HeaderMap) -> bool {
    let ranges: Vec<String> = headers
        .get_all(hyper::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|r| {
            r.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .collect();
    ranges.is_empty()
        || ranges.iter().any(|r| {
            matches!(
                r.as_str(),
                "application/json" | "application/*" | "*/*" | ""
            )
        })
}

fn aggregated_response(body: &Value) -> Resp {
    let mut r = http::json_response(200, body);
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(crate::delegate::AGGREGATED_DISCOVERY),
    );
    r.headers_mut().insert(
        hyper::header::VARY,
        hyper::header::HeaderValue::from_static("Accept"),
    );
    r
}

/// Answers a non-resource path.
pub fn non_resource(shared: &Arc<Shared>, path: &str, headers: &HeaderMap) -> Resp {
    let path = path.trim_end_matches('/');
    match path {
        "/healthz" | "/livez" | "/readyz" => return text(200, "ok"),
        p if p.starts_with("/healthz/")
            || p.starts_with("/livez/")
            || p.starts_with("/readyz/") =>
        {
            return text(200, "ok");
        }
        "/version" => return http::json_response(200, &version()),
        "/api" if wants_aggregated(headers) => {
            let st = shared.state.lock().unwrap();
            return aggregated_response(&aggregated_core(&st.catalogue));
        }
        "/api" => {
            return http::json_response(
                200,
                &json!({
                    "kind": "APIVersions",
                    "versions": ["v1"],
                    "serverAddressByClientCIDRs": [
                        {"clientCIDR": "0.0.0.0/0", "serverAddress": shared.addr.to_string()}
                    ],
                }),
            );
        }
        _ => {}
    }
    let st = shared.state.lock().unwrap();
    let cat = &st.catalogue;
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match parts.as_slice() {
        ["api", "v1"] => http::json_response(200, &resource_list(cat, "", "v1")),
        ["apis"] if wants_aggregated(headers) => aggregated_response(&apis_document(cat, true)),
        ["apis"] => http::json_response(200, &apis_document(cat, false)),
        ["apis", group] => match cat.groups().into_iter().find(|(g, _)| g == group) {
            Some((g, v)) => {
                let mut body = group_json(&g, &v);
                body["kind"] = json!("APIGroup");
                body["apiVersion"] = json!("v1");
                http::json_response(200, &body)
            }
            None => not_found(),
        },
        ["apis", group, version] if cat.has_group_version(group, version) => {
            http::json_response(200, &resource_list(cat, group, version))
        }
        ["openapi", "v3"] => http::json_response(200, &openapi_root(cat)),
        ["openapi", "v2"] if !accepts_json(headers) => not_acceptable(),
        ["openapi", "v2"] => http::json_response(200, &openapi_v2(cat)),
        ["openapi", "v3", "api", "v1"] => http::json_response(200, &openapi_gv(cat, "", "v1")),
        ["openapi", "v3", "apis", group, version] if cat.has_group_version(group, version) => {
            http::json_response(200, &openapi_gv(cat, group, version))
        }
        _ => not_found(),
    }
}

/// The 406 of a document asked for in a media type the sandbox does not
/// encode (the protobuf OpenAPI v2).
pub fn not_acceptable() -> Resp {
    http::error_response(&crate::errors::ApiError::new(
        406,
        "NotAcceptable",
        "only the following media types are accepted: application/json",
    ))
}

/// `/apis`: the named groups as an `APIGroupList`, or with `aggregated`
/// as an `APIGroupDiscoveryList` of every group with its resources.
pub fn apis_document(cat: &Catalogue, aggregated: bool) -> Value {
    if aggregated {
        let items: Vec<Value> = cat
            .groups()
            .iter()
            .map(|(g, versions)| aggregated_group(cat, g, versions))
            .collect();
        return json!({
            "kind": "APIGroupDiscoveryList",
            "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {},
            "items": items,
        });
    }
    json!({
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": cat.groups().iter().map(|(g, v)| group_json(g, v)).collect::<Vec<_>>(),
    })
}

/// `/api` as aggregated discovery: the core group, unnamed.
fn aggregated_core(cat: &Catalogue) -> Value {
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": [aggregated_group(cat, "", &["v1".to_string()])],
    })
}

/// One `APIGroupDiscovery`: its versions (preferred first), each with its
/// resources and their subresources, as kube-apiserver lists them.
fn aggregated_group(cat: &Catalogue, group: &str, versions: &[String]) -> Value {
    let mut sorted = versions.to_vec();
    sorted.sort_by_key(|v| version_priority(v));
    let versions: Vec<Value> = sorted
        .iter()
        .map(|v| {
            let resources: Vec<Value> = cat
                .resources_in(group, v)
                .iter()
                .map(|d| aggregated_resource(d))
                .collect();
            json!({"version": v, "resources": resources, "freshness": "Current"})
        })
        .collect();
    let metadata = if group.is_empty() {
        json!({})
    } else {
        json!({"name": group})
    };
    json!({"metadata": metadata, "versions": versions})
}

fn aggregated_resource(d: &ResourceDef) -> Value {
    // A built-in's own group and version are left empty, as the real
    // server does; a custom resource's are named (the apiextensions
    // discovery controller); a subresource of another kind names its own.
    let own_kind = |kind: &str| {
        if d.crd {
            json!({"group": d.group, "version": d.version, "kind": kind})
        } else {
            json!({"group": "", "version": "", "kind": kind})
        }
    };
    let mut subresources = Vec::new();
    if d.has_status {
        subresources.push(json!({
            "subresource": "status",
            "responseKind": own_kind(&d.kind),
            "verbs": ["get", "patch", "update"],
        }));
    }
    for (sub, kind, verbs) in &d.extra_subresources {
        let response_kind = match sub.as_str() {
            "token" => json!({"group": "authentication.k8s.io", "version": "v1", "kind": kind}),
            "scale" => json!({"group": "autoscaling", "version": "v1", "kind": kind}),
            _ => own_kind(kind),
        };
        subresources
            .push(json!({"subresource": sub, "responseKind": response_kind, "verbs": verbs}));
    }
    let mut r = json!({
        "resource": d.plural,
        "responseKind": own_kind(&d.kind),
        "scope": if d.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": d.singular,
        "verbs": d.verbs,
    });
    if !d.short_names.is_empty() {
        r["shortNames"] = json!(d.short_names);
    }
    if !d.categories.is_empty() {
        r["categories"] = json!(d.categories);
    }
    if !subresources.is_empty() {
        r["subresources"] = json!(subresources);
    }
    r
}

/// `/version`.
pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "emulationMajor": "1",
        "emulationMinor": "33",
        "gitVersion": GIT_VERSION,
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

fn group_json(group: &str, versions: &[String]) -> Value {
    let mut sorted = versions.to_vec();
    sorted.sort_by_key(|v| version_priority(v));
    let gv = |v: &str| json!({"groupVersion": format!("{group}/{v}"), "version": v});
    json!({
        "name": group,
        "versions": sorted.iter().map(|v| gv(v)).collect::<Vec<_>>(),
        "preferredVersion": gv(&sorted[0]),
    })
}

fn resource_json(d: &ResourceDef) -> Value {
    let mut r = json!({
        "name": d.plural,
        "singularName": d.singular,
        "namespaced": d.namespaced,
        "kind": d.kind,
        "verbs": d.verbs,
    });
    // Stored kinds only: the review kinds are never stored.
    if !d.create_only {
        r["storageVersionHash"] = json!(d.storage_version_hash());
    }
    if !d.short_names.is_empty() {
        r["shortNames"] = json!(d.short_names);
    }
    if !d.categories.is_empty() {
        r["categories"] = json!(d.categories);
    }
    r
}

/// The `APIResourceList` of one group version, subresources included.
pub fn resource_list(cat: &Catalogue, group: &str, version: &str) -> Value {
    let mut resources = Vec::new();
    for d in cat.resources_in(group, version) {
        resources.push(resource_json(&d));
        if d.has_status {
            resources.push(json!({
                "name": format!("{}/status", d.plural),
                "singularName": "",
                "namespaced": d.namespaced,
                "kind": d.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
        for (sub, kind, verbs) in &d.extra_subresources {
            let mut r = json!({
                "name": format!("{}/{sub}", d.plural),
                "singularName": "",
                "namespaced": d.namespaced,
                "kind": kind,
                "verbs": verbs,
            });
            if sub == "token" {
                r["group"] = json!("authentication.k8s.io");
                r["version"] = json!("v1");
            }
            if sub == "scale" {
                r["group"] = json!("autoscaling");
                r["version"] = json!("v1");
            }
            resources.push(r);
        }
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources})
}

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

pub fn openapi_root(cat: &Catalogue) -> Value {
    let mut paths = serde_json::Map::new();
    let mut gvs = vec![(String::new(), "v1".to_string())];
    for (g, vs) in cat.groups() {
        for v in vs {
            gvs.push((g.clone(), v));
        }
    }
    for (g, v) in gvs {
        let p = gv_path(&g, &v);
        // The hash changes with the served resources so kubectl's cache
        // never keeps a document from before a CRD changed.
        let hash = {
            use sha2::Digest;
            let doc = openapi_gv(cat, &g, &v);
            let d = sha2::Sha256::digest(doc.to_string().as_bytes());
            d.iter()
                .take(16)
                .map(|b| format!("{b:02X}"))
                .collect::<String>()
        };
        paths.insert(
            p.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={hash}")}),
        );
    }
    json!({"paths": paths})
}

/// An OpenAPI v3 document of one group version. It lists every resource
/// path with its operations, the `x-kubernetes-group-version-kind` of each
/// and the query parameters (notably `fieldValidation`, which tells kubectl
/// to let the server validate fields), and the CRD schemas.
fn openapi_gv(cat: &Catalogue, group: &str, version: &str) -> Value {
    let mut paths = serde_json::Map::new();
    let mut schemas = serde_json::Map::new();
    let prefix = format!("/{}", gv_path(group, version));
    for d in cat.resources_in(group, version) {
        let gvk = json!({"group": group, "version": version, "kind": d.kind});
        let schema_name = format!(
            "{}.{}.{}",
            if group.is_empty() {
                "io.k8s.api.core"
            } else {
                group
            },
            version,
            d.kind
        );
        let mut schema = d.schema.as_ref().map(|s| s.raw().clone()).unwrap_or_else(
            || json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
        );
        schema["x-kubernetes-group-version-kind"] = json!([gvk]);
        schemas.insert(schema_name.clone(), schema);
        let reference = json!({"$ref": format!("#/components/schemas/{schema_name}")});
        let params = json!([
            {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
            {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
            {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
            {"name": "pretty", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
        ]);
        let op = |verb: &str, action: &str| {
            json!({
                "operationId": format!("{verb}{}", d.kind),
                "parameters": params,
                "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk,
                "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": reference}}}},
            })
        };
        let base = if d.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}", d.plural)
        } else {
            format!("{prefix}/{}", d.plural)
        };
        if d.create_only {
            paths.insert(base, json!({"post": op("create", "post")}));
            continue;
        }
        paths.insert(
            base.clone(),
            json!({"get": op("list", "list"), "post": op("create", "post"),
                   "delete": op("deletecollection", "deletecollection")}),
        );
        paths.insert(
            format!("{base}/{{name}}"),
            json!({"get": op("read", "get"), "put": op("replace", "put"),
                   "patch": op("patch", "patch"), "delete": op("delete", "delete")}),
        );
        if d.has_status {
            paths.insert(
                format!("{base}/{{name}}/status"),
                json!({"get": op("read", "get"), "put": op("replace", "put"),
                       "patch": op("patch", "patch")}),
            );
        }
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": GIT_VERSION},
        "paths": paths,
        "components": {"schemas": schemas},
    })
}

/// The OpenAPI v2 (swagger) document of every served resource: each path
/// with its operations and `x-kubernetes-group-version-kind`, and the CRD
/// schemas as definitions (other kinds are open objects).
pub fn openapi_v2(cat: &Catalogue) -> Value {
    let mut paths = serde_json::Map::new();
    let mut definitions = serde_json::Map::new();
    let mut gvs = vec![(String::new(), "v1".to_string())];
    for (g, vs) in cat.groups() {
        for v in vs {
            gvs.push((g.clone(), v));
        }
    }
    for (group, version) in gvs {
        let doc = openapi_gv(cat, &group, &version);
        if let Some(schemas) = doc["components"]["schemas"].as_object() {
            for (name, schema) in schemas {
                definitions.insert(name.clone(), schema.clone());
            }
        }
        let Some(v3_paths) = doc["paths"].as_object() else {
            continue;
        };
        for (path, ops) in v3_paths {
            let mut v2_ops = serde_json::Map::new();
            for (method, op) in ops.as_object().into_iter().flatten() {
                let mut op = op.clone();
                let reference =
                    op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
                        .as_str()
                        .map(|r| r.replace("#/components/schemas/", "#/definitions/"));
                op["responses"] =
                    json!({"200": {"description": "OK", "schema": {"$ref": reference}}});
                if let Some(params) = op["parameters"].as_array_mut() {
                    for p in params {
                        p["type"] = json!("string");
                        p["uniqueItems"] = json!(true);
                        if let Some(o) = p.as_object_mut() {
                            o.remove("schema");
                        }
                    }
                }
                op["consumes"] = json!(["application/json"]);
                op["produces"] = json!(["application/json"]);
                v2_ops.insert(method.clone(), op);
            }
            paths.insert(path.clone(), Value::Object(v2_ops));
        }
    }
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": GIT_VERSION},
        "paths": paths,
        "definitions": definitions,
    })
}
