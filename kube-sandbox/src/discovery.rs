//! Non-resource endpoints: `/version`, health checks, legacy discovery
//! (`/api`, `/api/v1`, `/apis`, `/apis/G`, `/apis/G/V`) and the OpenAPI v3
//! documents kubectl reads for `apply` and field validation.
//!
//! Aggregated discovery (`apidiscovery.k8s.io/v2`) is not served: clients
//! asking for it in their `Accept` list also accept plain
//! `application/json`, and a legacy `APIGroupList` answered with that
//! content type makes client-go and kube-rs fall back to per-group requests.

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

/// Answers a non-resource path.
pub fn non_resource(shared: &Arc<Shared>, path: &str, _headers: &HeaderMap) -> Resp {
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
        ["apis"] => http::json_response(
            200,
            &json!({
                "kind": "APIGroupList",
                "apiVersion": "v1",
                "groups": cat.groups().iter().map(|(g, v)| group_json(g, v)).collect::<Vec<_>>(),
            }),
        ),
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
        ["openapi", "v3", "api", "v1"] => http::json_response(200, &openapi_gv(cat, "", "v1")),
        ["openapi", "v3", "apis", group, version] if cat.has_group_version(group, version) => {
            http::json_response(200, &openapi_gv(cat, group, version))
        }
        _ => not_found(),
    }
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

fn openapi_root(cat: &Catalogue) -> Value {
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
