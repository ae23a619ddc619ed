//! The HTTPS front: accepting connections (HTTP/1.1 and HTTP/2 over
//! rustls), outages, request-info parsing like the real server's
//! `RequestInfoFactory`, authentication, impersonation, authorization,
//! injected faults, latency, the request log, and routing to handlers.

use crate::auth::TokenIssuer;
use crate::auth::authn::{self, Impersonation, UserInfo};
use crate::auth::rbac::{self, Attributes, Decision, RbacSnapshot};
use crate::auth::reviews;
use crate::controls::{Controls, RequestRecord};
use crate::errors::ApiError;
use crate::store::State;
use crate::{discovery, handlers};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;

/// Response body: whole JSON documents or a watch stream.
pub type Body = BoxBody<Bytes, Infallible>;
/// One response.
pub type Resp = Response<Body>;

/// The audience every token this server accepts for API access carries.
pub const API_AUDIENCE: &str = authn::ISSUER;

/// User name of the admin token.
pub const ADMIN_USER: &str = "sandbox-admin";

/// State shared by every connection of one sandbox.
pub struct Shared {
    pub state: Mutex<State>,
    rbac: Mutex<Arc<RbacSnapshot>>,
    pub controls: Controls,
    pub issuer: TokenIssuer,
    pub admin_token: String,
    pub addr: SocketAddr,
}

impl Shared {
    pub fn new(
        state: State,
        controls: Controls,
        issuer: TokenIssuer,
        admin_token: String,
        addr: SocketAddr,
    ) -> Self {
        Shared {
            state: Mutex::new(state),
            rbac: Mutex::new(Arc::new(RbacSnapshot::default())),
            controls,
            issuer,
            admin_token,
            addr,
        }
    }

    /// The RBAC objects as of now. Changes are applied to the cached
    /// snapshot one by one (in place when no request still holds the old
    /// one), so registering many sites does not rebuild it from scratch.
    pub fn rbac(&self) -> Arc<RbacSnapshot> {
        // Lock order rbac → state: a request that starts after a change
        // was stored always sees it.
        let mut cached = self.rbac.lock().unwrap();
        let changes = self.state.lock().unwrap().take_rbac_changes();
        if !changes.is_empty() {
            let snap = Arc::make_mut(&mut cached);
            for (resource, key, obj) in changes {
                let list = match resource.as_str() {
                    "roles" => &mut snap.roles,
                    "rolebindings" => &mut snap.role_bindings,
                    "clusterroles" => &mut snap.cluster_roles,
                    "clusterrolebindings" => &mut snap.cluster_role_bindings,
                    _ => continue,
                };
                let pos = list.iter().position(|o| {
                    o["metadata"]["name"].as_str() == Some(key.1.as_str())
                        && o["metadata"]["namespace"].as_str().unwrap_or_default() == key.0
                });
                match (pos, obj) {
                    (Some(i), Some(o)) => list[i] = (*o).clone(),
                    (Some(i), None) => {
                        list.remove(i);
                    }
                    (None, Some(o)) => list.push((*o).clone()),
                    (None, None) => {}
                }
            }
        }
        cached.clone()
    }
}

/// A full JSON response.
pub fn json_response(code: u16, body: &Value) -> Resp {
    bytes_response(
        code,
        Bytes::from(serde_json::to_vec(body).unwrap_or_default()),
    )
}

/// A JSON response from already serialized bytes.
pub fn bytes_response(code: u16, body: Bytes) -> Resp {
    let mut r = Response::new(Full::new(body).boxed());
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
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

fn decode(s: &str) -> String {
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
        && crate::objects::name_errors(crate::resources::NameRule::PathSegment, n).is_empty()
    {
        info.name = n.to_string();
    }
    if info.name.is_empty() && info.verb == "delete" {
        info.verb = "deletecollection".into();
    }
    info
}

/// Paths anyone may read without a token, as `system:public-info-viewer`
/// grants to anonymous users in a real cluster.
fn public_path(path: &str) -> bool {
    matches!(path, "/healthz" | "/livez" | "/readyz" | "/version")
        || path.starts_with("/healthz/")
        || path.starts_with("/livez/")
        || path.starts_with("/readyz/")
}

/// The uid of a ServiceAccount, if it exists (tokens are bound to it).
pub fn service_account_uid(shared: &Shared, namespace: &str, name: &str) -> Option<String> {
    let st = shared.state.lock().unwrap();
    let gr = crate::resources::GroupResource {
        group: String::new(),
        resource: "serviceaccounts".into(),
    };
    st.get(&gr, &(namespace.to_string(), name.to_string()))
        .and_then(|sa| sa["metadata"]["uid"].as_str().map(String::from))
}

/// Authenticates a bearer token for API access: the admin token, or a
/// ServiceAccount token whose ServiceAccount still exists with the uid it
/// was bound to and whose audiences include the API server's.
pub fn authenticate_token(shared: &Shared, token: &str) -> Result<UserInfo, String> {
    if token == shared.admin_token {
        return Ok(admin_user());
    }
    let now = jiff::Timestamp::now().as_second();
    reviews::authenticate_service_account_token(&shared.issuer, token, now, &[], |ns, name| {
        service_account_uid(shared, ns, name)
    })
    .map(|(user, _)| user)
}

/// The user of the admin token.
pub fn admin_user() -> UserInfo {
    UserInfo {
        username: ADMIN_USER.into(),
        uid: String::new(),
        groups: vec!["system:masters".into(), "system:authenticated".into()],
        extra: Default::default(),
    }
}

fn bearer(headers: &HeaderMap) -> Option<Result<String, ()>> {
    let v = headers.get(header::AUTHORIZATION)?;
    let v = v.to_str().map_err(|_| ()).ok()?;
    let (scheme, token) = v.split_once(' ').unwrap_or((v, ""));
    if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() {
        Some(Ok(token.trim().to_string()))
    } else {
        Some(Err(()))
    }
}

fn impersonation(headers: &HeaderMap) -> Option<Impersonation> {
    let mut imp = Impersonation::default();
    let mut any = false;
    for (name, value) in headers {
        let n = name.as_str();
        let Ok(v) = value.to_str() else { continue };
        if n == "impersonate-user" {
            imp.user = Some(v.to_string());
            any = true;
        } else if n == "impersonate-group" {
            imp.groups.push(v.to_string());
            any = true;
        } else if n == "impersonate-uid" {
            imp.uid = Some(v.to_string());
            any = true;
        } else if let Some(key) = n.strip_prefix("impersonate-extra-") {
            imp.extra
                .entry(decode(key))
                .or_default()
                .push(v.to_string());
            any = true;
        }
    }
    any.then_some(imp)
}

/// Checks the `impersonate` permissions and returns the user to act as.
fn impersonate(
    rbac_snap: &RbacSnapshot,
    requester: &UserInfo,
    imp: &Impersonation,
) -> Result<UserInfo, ApiError> {
    let Some(target) = imp.target_user() else {
        return Err(ApiError::internal(
            "requested impersonation of groups, uid or extra without impersonating a user",
        ));
    };
    for attrs in authn::impersonation_checks(imp, requester) {
        let eval = rbac::evaluate(rbac_snap, &attrs);
        if eval.decision == Decision::Deny {
            return Err(rbac::forbidden_error(&attrs, &eval.reason));
        }
    }
    Ok(target)
}

/// Builds authorization attributes for a request.
pub fn attributes(user: &UserInfo, info: &RequestInfo) -> Attributes {
    let field_selector_name = matches!(info.verb.as_str(), "list" | "watch")
        .then(|| info.name.clone())
        .filter(|n| !n.is_empty());
    Attributes {
        user: user.clone(),
        verb: info.verb.clone(),
        resource_request: info.resource_request,
        api_group: info.group.clone(),
        api_version: info.version.clone(),
        resource: info.resource.clone(),
        subresource: info.subresource.clone(),
        namespace: info.namespace.clone(),
        name: info.name.clone(),
        path: info.path.clone(),
        field_selector_name,
    }
}

fn fault_error(status: u16) -> ApiError {
    let (reason, message) = match status {
        400 => ("BadRequest", "injected bad request"),
        401 => ("Unauthorized", "Unauthorized"),
        403 => ("Forbidden", "injected forbidden"),
        404 => (
            "NotFound",
            "the server could not find the requested resource",
        ),
        409 => ("Conflict", "injected conflict"),
        410 => ("Expired", "injected expiry"),
        422 => ("Invalid", "injected invalid"),
        429 => (
            "TooManyRequests",
            "the server has received too many requests and has asked us to try again later",
        ),
        500 => (
            "InternalError",
            "an error on the server (\"injected fault\") has prevented the request from succeeding",
        ),
        503 => (
            "ServiceUnavailable",
            "the server is currently unable to handle the request",
        ),
        504 => (
            "Timeout",
            "the server was unable to return a response in the time allotted, but may still be processing the request",
        ),
        _ => ("", "injected fault"),
    };
    let mut e = ApiError::new(status, reason, message);
    if status == 429 || status == 503 {
        e.details = Some(serde_json::json!({"retryAfterSeconds": 1}));
    }
    e
}

/// Answers one HTTP request.
pub async fn handle(shared: Arc<Shared>, req: Request<hyper::body::Incoming>) -> Resp {
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().to_string();
    let raw_query = parts.uri.query().unwrap_or_default().to_string();
    let query = Query::parse(&raw_query);
    let info = request_info(&parts.method, &path, &query);
    let body = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let request_bytes = body.len();
    let (user, resp) = serve(&shared, &parts.method, &parts.headers, &info, &query, body).await;
    let latency = shared.controls.latency();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    shared.controls.record(RequestRecord {
        verb: info.verb.clone(),
        method: parts.method.as_str().to_string(),
        path,
        query: raw_query,
        user,
        status: resp.status().as_u16(),
        request_bytes,
    });
    resp
}

async fn serve(
    shared: &Arc<Shared>,
    method: &Method,
    headers: &HeaderMap,
    info: &RequestInfo,
    query: &Query,
    body: Bytes,
) -> (String, Resp) {
    let requester = match bearer(headers) {
        None => None,
        Some(Err(())) => return (String::new(), error_response(&ApiError::unauthorized())),
        Some(Ok(token)) => match authenticate_token(shared, &token) {
            Ok(u) => Some(u),
            Err(_) => return (String::new(), error_response(&ApiError::unauthorized())),
        },
    };
    let Some(requester) = requester else {
        if public_path(&info.path) {
            if let Some(status) = shared.controls.fault_for(&info.verb, &info.path) {
                return (String::new(), error_response(&fault_error(status)));
            }
            return (
                String::new(),
                discovery::non_resource(shared, &info.path, headers),
            );
        }
        return (String::new(), error_response(&ApiError::unauthorized()));
    };
    let snapshot = shared.rbac();
    let user = match impersonation(headers) {
        None => requester,
        Some(imp) => match impersonate(&snapshot, &requester, &imp) {
            Ok(u) => u,
            Err(e) => return (requester.username.clone(), error_response(&e)),
        },
    };
    let username = user.username.clone();
    if let Some(status) = shared.controls.fault_for(&info.verb, &info.path) {
        return (username, error_response(&fault_error(status)));
    }
    let attrs = attributes(&user, info);
    let eval = rbac::evaluate(&snapshot, &attrs);
    if eval.decision == Decision::Deny {
        let e = rbac::forbidden_error(&attrs, &eval.reason);
        return (username, error_response(&e));
    }
    let resp = if info.resource_request {
        let call = handlers::Call {
            shared,
            method,
            headers,
            info,
            query,
            user: &user,
            snapshot: &snapshot,
            body,
        };
        match handlers::dispatch(call).await {
            Ok(r) => r,
            Err(e) => error_response(&e),
        }
    } else {
        discovery::non_resource(shared, &info.path, headers)
    };
    (username, resp)
}

/// Accepts connections until `shutdown` fires.
pub async fn run(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    shared: Arc<Shared>,
    mut shutdown: tokio::sync::oneshot::Receiver<()>,
) {
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    loop {
        let accepted = tokio::select! {
            _ = &mut shutdown => return,
            a = listener.accept() => a,
        };
        let Ok((tcp, _peer)) = accepted else { continue };
        if shared.controls.in_outage() {
            drop(tcp);
            continue;
        }
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let shared = shared.clone();
        tokio::spawn(async move {
            let mut outage = shared.controls.outage_signal();
            outage.mark_unchanged();
            let Ok(tls_stream) = acceptor.accept(tcp).await else {
                return;
            };
            let svc_shared = shared.clone();
            let service = hyper::service::service_fn(move |req| {
                let shared = svc_shared.clone();
                async move {
                    if shared.controls.in_outage() {
                        return Err(std::io::Error::other("outage"));
                    }
                    Ok::<_, std::io::Error>(handle(shared, req).await)
                }
            });
            let builder =
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
            let conn = builder.serve_connection(hyper_util::rt::TokioIo::new(tls_stream), service);
            tokio::select! {
                _ = conn => {}
                _ = outage.changed() => {}
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(method: Method, path: &str, q: &str) -> RequestInfo {
        request_info(&method, path, &Query::parse(q))
    }

    #[test]
    fn request_info_matches_the_real_factory() {
        let i = info(Method::GET, "/api/v1/namespaces/ns1/pods/p1/status", "");
        assert_eq!(
            (
                i.verb.as_str(),
                i.namespace.as_str(),
                i.resource.as_str(),
                i.name.as_str(),
                i.subresource.as_str()
            ),
            ("get", "ns1", "pods", "p1", "status")
        );
        let i = info(Method::GET, "/api/v1/namespaces/ns1", "");
        assert_eq!(
            (i.resource.as_str(), i.name.as_str(), i.namespace.as_str()),
            ("namespaces", "ns1", "ns1")
        );
        let i = info(Method::PUT, "/api/v1/namespaces/ns1/finalize", "");
        assert_eq!(
            (i.resource.as_str(), i.subresource.as_str()),
            ("namespaces", "finalize")
        );
        let i = info(Method::GET, "/apis/g.dev/v1/things", "watch=true");
        assert_eq!(i.verb, "watch");
        let i = info(Method::GET, "/apis/g.dev/v1/watch/things", "");
        assert_eq!((i.verb.as_str(), i.resource.as_str()), ("watch", "things"));
        let i = info(Method::DELETE, "/api/v1/namespaces/a/configmaps", "");
        assert_eq!(i.verb, "deletecollection");
        assert!(!info(Method::GET, "/apis/g.dev/v1", "").resource_request);
        assert!(!info(Method::GET, "/api/v1", "").resource_request);
        assert!(!info(Method::GET, "/healthz", "").resource_request);
        let i = info(
            Method::POST,
            "/api/v1/namespaces/a/serviceaccounts/sa/token",
            "",
        );
        assert_eq!(
            (i.verb.as_str(), i.subresource.as_str()),
            ("create", "token")
        );
    }

    #[test]
    fn query_decoding() {
        let q = Query::parse("labelSelector=app%3Dweb%2Ctier+in+(a)&watch=1");
        assert_eq!(q.get("labelSelector"), Some("app=web,tier in (a)"));
        assert!(q.flag("watch"));
        assert_eq!(decode("a%2"), "a%2");
    }
}
