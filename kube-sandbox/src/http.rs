//! The HTTP vocabulary every part of the server shares: response types
//! and builders, decoded query parameters and the request-info parser (as
//! the real server's `RequestInfoFactory`). A leaf module: the front
//! (`server`), the verbs (`handlers`), `watch` and `discovery` all import
//! from here and never from each other in a circle.

use crate::errors::ApiError;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Response, StatusCode};
use serde_json::Value;
use std::collections::BTreeMap;
use std::convert::Infallible;

/// Why a response body stopped early: only a stream proxied from the CRD
/// delegate can fail (its connection broke), and the client then sees the
/// response cut off, as from the real server.
pub type BodyError = Box<dyn std::error::Error + Send + Sync>;
/// Response body: whole JSON documents, a watch stream or a proxied stream.
pub type Body = BoxBody<Bytes, BodyError>;
/// One response.
pub type Resp = Response<Body>;

/// A full JSON response.
pub fn json_response(code: u16, body: &Value) -> Resp {
    bytes_response(
        code,
        Bytes::from(serde_json::to_vec(body).unwrap_or_default()),
    )
}

/// A JSON response from already serialized bytes.
pub fn bytes_response(code: u16, body: Bytes) -> Resp {
    let mut r = Response::new(Full::new(body).map_err(never).boxed());
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// The error of a body that cannot fail.
pub fn never(e: Infallible) -> BodyError {
    match e {}
}

/// The `Status` response of an error.
pub fn error_response(e: &ApiError) -> Resp {
    json_response(e.code, &e.to_status())
}

/// What the request is about, as the real server's `RequestInfo`.
#[derive(Debug, Clone, Default)]
pub struct RequestInfo {
    pub resource_request: bool,
    pub path: String,
    pub verb: String,
    /// `api` or `apis`.
    pub prefix: String,
    pub group: String,
    pub version: String,
    pub namespace: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
}

/// Decoded query parameters (last value wins).
#[derive(Debug, Clone, Default)]
pub struct Query(pub BTreeMap<String, String>);

impl Query {
    /// Parses `a=b&c=d` with percent and `+` decoding.
    pub fn parse(q: &str) -> Self {
        let mut m = BTreeMap::new();
        for pair in q.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            m.insert(decode(k), decode(v));
        }
        Query(m)
    }

    /// A parameter, if present.
    pub fn get(&self, k: &str) -> Option<&str> {
        self.0.get(k).map(String::as_str)
    }

    /// A boolean parameter (`1`, `true`).
    pub fn flag(&self, k: &str) -> bool {
        matches!(self.get(k), Some("1" | "true" | "True"))
    }
}

pub(crate) fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses a request like `k8s.io/apiserver`'s RequestInfoFactory.
pub fn request_info(method: &Method, path: &str, query: &Query) -> RequestInfo {
    let mut info = RequestInfo {
        path: path.to_string(),
        verb: method.as_str().to_lowercase(),
        ..Default::default()
    };
    let parts: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    if parts.len() < 3 || !(parts[0] == "api" || parts[0] == "apis") {
        return info;
    }
    let mut cur = &parts[1..];
    if parts[0] == "apis" {
        if cur.len() < 3 {
            return info;
        }
        info.group = cur[0].to_string();
        cur = &cur[1..];
    }
    info.prefix = parts[0].to_string();
    info.resource_request = true;
    info.version = cur[0].to_string();
    cur = &cur[1..];
    if cur.first() == Some(&"watch") && cur.len() >= 2 {
        info.verb = "watch".into();
        cur = &cur[1..];
    } else {
        info.verb = match *method {
            Method::POST => "create",
            Method::GET | Method::HEAD => "get",
            Method::PUT => "update",
            Method::PATCH => "patch",
            Method::DELETE => "delete",
            _ => "",
        }
        .into();
    }
    if cur.first() == Some(&"namespaces") && cur.len() > 1 {
        info.namespace = cur[1].to_string();
        if cur.len() > 2 && !matches!(cur[2], "status" | "finalize") {
            cur = &cur[2..];
        }
    }
    if let Some(r) = cur.first() {
        info.resource = r.to_string();
    }
    if let Some(n) = cur.get(1) {
        info.name = n.to_string();
    }
    if let Some(s) = cur.get(2) {
        info.subresource = s.to_string();
    }
    if info.name.is_empty() && info.verb == "get" {
        info.verb = if query.flag("watch") { "watch" } else { "list" }.into();
    }
    if (info.verb == "watch" || info.verb == "list")
        && let Some(fs) = query.get("fieldSelector")
        && let Ok(sel) = crate::selector::FieldSelector::parse(fs)
        && let Some(n) = sel.exact_name()
        && crate::names::name_errors(crate::resources::NameRule::PathSegment, n).is_empty()
    {
        info.name = n.to_string();
    }
    if info.name.is_empty() && info.verb == "delete" {
        info.verb = "deletecollection".into();
    }
    info
}
