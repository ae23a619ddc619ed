//! CRD delegate mode: kube-sandbox in front of a real Kubernetes API server
//! that serves `apiextensions.k8s.io` and every group a CustomResourceDefinition
//! defines, as kube-apiserver delegates them to the apiextensions-apiserver
//! it runs inside itself.
//!
//! The sandbox authenticates, impersonates and authorizes every request
//! itself (its tokens, its RBAC), exactly as for the resources it serves.
//! A request it does not serve is then forwarded to the delegate with the
//! sandbox's front-proxy client certificate and the identity it established
//! in `X-Remote-User`, `X-Remote-Uid`, `X-Remote-Group` and
//! `X-Remote-Extra-*` (what kube-apiserver's proxy sends an aggregated API
//! server); whatever a client sent in those headers itself is dropped. The
//! delegate's answer comes back as it was sent: status code, headers, body
//! (a watch is streamed, never buffered). A delegate that cannot be reached
//! is a 503 `Status`, a delegate that does not answer within a minute a 504,
//! as kube-apiserver's request timeout.
//!
//! Discovery is merged: `/apis` (also aggregated discovery,
//! `apidiscovery.k8s.io/v2`), `/openapi/v3` and `/openapi/v2` list the
//! sandbox's groups followed by the delegate's; `/apis/GROUP[/VERSION]`
//! and `/openapi/v3/apis/GROUP/VERSION` of a delegated group are proxied.
//! The last answer of the delegate to each merged document is kept, so
//! discovery still lists its groups while it is down (and requests for
//! them get the 503), as the aggregator keeps stale discovery.
//!
//! The sandbox is also the delegate's garbage collector for dependents it
//! stores: when a proxied delete (or the update that drops a deleted
//! object's last finalizer) removes an object, the sandbox's objects it
//! owned are collected as a cluster's garbage collector would.

use crate::auth::UserInfo;
use crate::errors::ApiError;
use crate::http::{self, BodyError, Resp};
use crate::resources::Catalogue;
use crate::store::State;
use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// kube-apiserver's default `--request-timeout`: a delegate that has not
/// answered a (non-watch) request by then gets the client a 504.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// How long connecting to the delegate may take before it counts as down.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// `Accept` of aggregated discovery, as kubectl sends it (v2 only: the v2beta1
/// variant is no longer served since Kubernetes 1.33).
pub(crate) const AGGREGATED_DISCOVERY: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Where the CRD delegate is, and the client certificate that proves to it
/// that a request comes from the sandbox (its front proxy): all from a
/// kubeconfig (`kube-sandbox serve --crd-delegate KUBECONFIG`).
#[derive(Clone)]
pub struct CrdDelegate {
    /// `https://HOST:PORT` of the delegate.
    pub server: String,
    /// PEM of the CA that signed the delegate's serving certificate.
    pub ca_pem: String,
    /// PEM of the front-proxy client certificate (the delegate's
    /// `--requestheader-client-ca-file` signed it, and its common name is in
    /// `--requestheader-allowed-names`).
    pub client_cert_pem: String,
    /// PEM of its private key.
    pub client_key_pem: String,
}

impl std::fmt::Debug for CrdDelegate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The private key stays out of debug output.
        f.debug_struct("CrdDelegate")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl CrdDelegate {
    /// Reads the current context's cluster (server, CA) and user (client
    /// certificate and key, inline or as files relative to the kubeconfig)
    /// of the kubeconfig at `path`.
    pub fn from_kubeconfig_file(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("reading it: {e}"))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Self::from_kubeconfig(&text, dir)
    }

    /// Like [`CrdDelegate::from_kubeconfig_file`], from kubeconfig YAML whose
    /// relative file paths are relative to `dir`.
    pub fn from_kubeconfig(yaml: &str, dir: &Path) -> Result<Self, String> {
        let doc: Value =
            serde_saphyr::from_str(yaml).map_err(|e| format!("not a kubeconfig: {e}"))?;
        let current = doc["current-context"]
            .as_str()
            .filter(|c| !c.is_empty())
            .ok_or("it has no current-context")?;
        let named = |list: &str, name: &str, field: &str| -> Result<Value, String> {
            doc[list]
                .as_array()
                .and_then(|l| l.iter().find(|e| e["name"].as_str() == Some(name)))
                .map(|e| e[field].clone())
                .ok_or_else(|| format!("its {list} have no entry named {name:?}"))
        };
        let context = named("contexts", current, "context")?;
        let cluster_name = context["cluster"].as_str().unwrap_or_default();
        let user_name = context["user"].as_str().unwrap_or_default();
        let cluster = named("clusters", cluster_name, "cluster")?;
        let user = named("users", user_name, "user")?;
        let server = cluster["server"]
            .as_str()
            .filter(|s| s.starts_with("https://"))
            .ok_or("its cluster's server is not an https:// URL")?
            .trim_end_matches('/')
            .to_string();
        let pem = |entry: &Value, key: &str, what: &str, hint: &str| -> Result<String, String> {
            if let Some(data) = entry[format!("{key}-data")].as_str() {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(data.trim())
                    .map_err(|e| format!("{key}-data is not base64: {e}"))?;
                return String::from_utf8(bytes).map_err(|_| format!("{key}-data is not PEM"));
            }
            if let Some(file) = entry[key].as_str() {
                let p = dir.join(file);
                return std::fs::read_to_string(&p)
                    .map_err(|e| format!("reading {key} {}: {e}", p.display()));
            }
            Err(format!("it names no {what} ({key} or {key}-data){hint}"))
        };
        let front_proxy = ": the delegate authenticates kube-sandbox by its front-proxy client certificate (tools/realapi/start.sh --prepare-delegate writes one)";
        Ok(CrdDelegate {
            server,
            ca_pem: pem(&cluster, "certificate-authority", "CA of the delegate", "")?,
            client_cert_pem: pem(
                &user,
                "client-certificate",
                "client certificate",
                front_proxy,
            )?,
            client_key_pem: pem(&user, "client-key", "client key", front_proxy)?,
        })
    }

    fn tls_config(&self) -> Result<rustls::ClientConfig, String> {
        use rustls::pki_types::pem::PemObject as _;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(self.ca_pem.as_bytes()) {
            let cert = cert.map_err(|e| format!("the delegate's CA: {e}"))?;
            roots
                .add(cert)
                .map_err(|e| format!("the delegate's CA: {e}"))?;
        }
        let chain = CertificateDer::pem_slice_iter(self.client_cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("the client certificate: {e}"))?;
        let key = PrivateKeyDer::from_pem_slice(self.client_key_pem.as_bytes())
            .map_err(|e| format!("the client key: {e}"))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_client_auth_cert(chain, key)
            .map_err(|e| format!("the client certificate and key: {e}"))
    }
}

type Connector = hyper_rustls::HttpsConnector<HttpConnector>;

/// The running delegate client of one sandbox.
pub(crate) struct Delegate {
    server: String,
    client: Client<Connector, Full<Bytes>>,
    /// The delegate's last good answer to each merged discovery document,
    /// by path and `Accept`.
    discovery: Mutex<HashMap<String, Bytes>>,
}

/// What the sandbox does with one request in delegate mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// The sandbox answers it.
    Local,
    /// The delegate answers it.
    Proxy,
    /// `/apis`: both groups lists.
    Apis,
    /// `/openapi/v3`: both path lists.
    OpenApiV3,
    /// `/openapi/v2`: both documents.
    OpenApiV2,
}

/// Where a request goes: a group the sandbox does not serve (and
/// `apiextensions.k8s.io`, which it never serves in this mode) belongs to
/// the delegate, as an unclaimed path falls through to the
/// apiextensions-apiserver inside kube-apiserver.
pub(crate) fn route(cat: &Catalogue, path: &str, resource_request: bool, group: &str) -> Route {
    let delegated = |g: &str| !g.is_empty() && !cat.serves_group(g);
    if resource_request {
        return if delegated(group) {
            Route::Proxy
        } else {
            Route::Local
        };
    }
    let path = path.trim_end_matches('/');
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match parts.as_slice() {
        ["apis"] => Route::Apis,
        ["apis", g] | ["apis", g, _] if delegated(g) => Route::Proxy,
        ["openapi", "v3"] => Route::OpenApiV3,
        ["openapi", "v3", "apis", g] | ["openapi", "v3", "apis", g, _] if delegated(g) => {
            Route::Proxy
        }
        ["openapi", "v2"] => Route::OpenApiV2,
        _ => Route::Local,
    }
}

/// Headers never forwarded: hop-by-hop ones, the client's own credentials
/// (the sandbox authenticated them), and any identity a client claims in
/// the front proxy's headers (only the sandbox may set those).
fn forwarded(name: &HeaderName) -> bool {
    let n = name.as_str();
    !(matches!(
        n,
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authorization"
            | "proxy-authenticate"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "host"
            | "content-length"
            | "authorization"
    ) || n.starts_with("impersonate-")
        || n.starts_with("x-remote-"))
}

/// `client-go/transport`'s `headerKeyEscape`: bytes that may not appear in
/// a header name (and `%`) percent-encoded; the delegate path-unescapes.
fn header_key_escape(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for b in key.bytes() {
        let legal = b.is_ascii_alphanumeric() || b"!#$&'*+-.^_`|~".contains(&b);
        if legal {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The front proxy's identity headers for `user`.
fn identity_headers(headers: &mut HeaderMap, user: &UserInfo) {
    let mut add = |name: &str, value: &str| {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.append(n, v);
        }
    };
    add("x-remote-user", &user.username);
    if !user.uid.is_empty() {
        add("x-remote-uid", &user.uid);
    }
    for g in &user.groups {
        add("x-remote-group", g);
    }
    for (key, values) in &user.extra {
        let name = format!("x-remote-extra-{}", header_key_escape(key));
        for v in values {
            add(&name, v);
        }
    }
}

/// An error and its causes on one line (`client error (Connect): tcp
/// connect error: Connection refused (os error 111)`).
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// The 503 of a delegate that cannot be reached, worded as kube-apiserver's
/// proxy words it (`error trying to reach service: dial tcp ADDR: connect:
/// connection refused`) when the connection failed, else with the error.
fn unavailable(server: &str, e: &(dyn std::error::Error + 'static)) -> ApiError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    let mut reason = chain(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            let what = match io.kind() {
                std::io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
                std::io::ErrorKind::TimedOut => "i/o timeout".to_string(),
                _ => io.to_string().to_lowercase(),
            };
            let addr = server.trim_start_matches("https://");
            reason = format!("dial tcp {addr}: connect: {what}");
            break;
        }
        source = s.source();
    }
    ApiError::new(
        503,
        "ServiceUnavailable",
        format!("error trying to reach service: {reason}"),
    )
}

fn timeout() -> ApiError {
    ApiError {
        details: Some(
            json!({"causes": [{"reason": "UnexpectedServerResponse", "message": "request timed out"}]}),
        ),
        ..ApiError::new(
            504,
            "Timeout",
            "the server was unable to return a response in the time allotted, but may still be processing the request",
        )
    }
}

/// One request to forward.
pub(crate) struct Forward<'a> {
    pub method: &'a Method,
    /// Path and query, as the client sent them.
    pub path_and_query: &'a str,
    pub headers: &'a HeaderMap,
    pub user: &'a UserInfo,
    pub body: Bytes,
}

impl Delegate {
    /// A client for `config`; no connection is made yet.
    pub(crate) fn new(config: &CrdDelegate) -> Result<Delegate, String> {
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(CONNECT_TIMEOUT));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(config.tls_config()?)
            .https_only()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(hyper_util::rt::TokioExecutor::new()).build(connector);
        Ok(Delegate {
            server: config.server.clone(),
            client,
            discovery: Mutex::new(HashMap::new()),
        })
    }

    async fn send(
        &self,
        f: &Forward<'_>,
        strip_encoding: bool,
    ) -> Result<hyper::Response<hyper::body::Incoming>, ApiError> {
        let mut builder = Request::builder()
            .method(f.method.clone())
            .uri(format!("{}{}", self.server, f.path_and_query));
        let headers = builder.headers_mut().expect("a fresh request builder");
        for (name, value) in f.headers {
            if forwarded(name) && !(strip_encoding && name == header::ACCEPT_ENCODING) {
                headers.append(name.clone(), value.clone());
            }
        }
        identity_headers(headers, f.user);
        let req = builder
            .body(Full::new(f.body.clone()))
            .map_err(|e| ApiError::bad_request(format!("cannot forward the request: {e}")))?;
        let sent = self.client.request(req);
        // A watch's headers come at once too; what a watch waits for is
        // events, which stream without a deadline.
        match tokio::time::timeout(REQUEST_TIMEOUT, sent).await {
            Ok(Ok(resp)) => Ok(resp),
            Ok(Err(e)) => {
                tracing::warn!(error = %chain(&e), "CRD delegate unreachable");
                Err(unavailable(&self.server, &e))
            }
            Err(_) => Err(timeout()),
        }
    }

    /// Forwards one request and hands back the delegate's answer as it is
    /// (a streamed body). A write that may have removed an object is read
    /// whole first, for the garbage collector.
    pub(crate) async fn proxy(&self, state: &Mutex<State>, f: Forward<'_>) -> Resp {
        let may_remove = matches!(*f.method, Method::DELETE | Method::PUT | Method::PATCH);
        let resp = match self.send(&f, may_remove).await {
            Ok(r) => r,
            Err(e) => return http::error_response(&e),
        };
        let (mut parts, body) = resp.into_parts();
        strip_hop_by_hop(&mut parts.headers);
        if !(may_remove && parts.status.is_success()) {
            let body = body.map_err(|e| Box::new(e) as BodyError).boxed();
            return hyper::Response::from_parts(parts, body);
        }
        let bytes = match body.collect().await {
            Ok(b) => b.to_bytes(),
            Err(e) => return http::error_response(&unavailable(&self.server, &e)),
        };
        if let Ok(answer) = serde_json::from_slice::<Value>(&bytes) {
            collect_garbage(state, f.path_and_query, &f.body, &answer);
        }
        let body = Full::new(bytes).map_err(http::never).boxed();
        hyper::Response::from_parts(parts, body)
    }

    /// GETs a document from the delegate as `user` (200 only), remembering
    /// it; when the delegate cannot answer, its last good answer.
    async fn document(&self, path: &str, accept: &str, user: &UserInfo) -> Option<Value> {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_str(accept).unwrap_or(HeaderValue::from_static("application/json")),
        );
        let f = Forward {
            method: &Method::GET,
            path_and_query: path,
            headers: &headers,
            user,
            body: Bytes::new(),
        };
        let key = format!("{path} {accept}");
        let fresh = match self.send(&f, true).await {
            Ok(resp) if resp.status().is_success() => {
                resp.into_body().collect().await.ok().map(|b| b.to_bytes())
            }
            Ok(resp) => {
                tracing::warn!(path, status = %resp.status(), "CRD delegate refused a discovery document");
                None
            }
            Err(_) => None,
        };
        let bytes = {
            let mut cache = self.discovery.lock().unwrap();
            match fresh {
                Some(b) => {
                    cache.insert(key, b.clone());
                    b
                }
                None => cache.get(&key)?.clone(),
            }
        };
        serde_json::from_slice(&bytes).ok()
    }

    /// `/apis`, legacy or aggregated: the sandbox's groups, then the
    /// delegate's. Both come from the delegate's aggregated discovery: the
    /// apiextensions-apiserver lists the groups of its CRDs only there (in
    /// kube-apiserver the aggregator serves the legacy list from it).
    pub(crate) async fn apis(&self, local: Value, aggregated: bool, user: &UserInfo) -> Resp {
        let list = if aggregated { "items" } else { "groups" };
        let name_of = |g: &Value| -> String {
            if aggregated {
                g["metadata"]["name"].as_str().unwrap_or_default().into()
            } else {
                g["name"].as_str().unwrap_or_default().into()
            }
        };
        let mut merged = local;
        if let Some(remote) = self.document("/apis", AGGREGATED_DISCOVERY, user).await {
            let have: Vec<String> = merged[list]
                .as_array()
                .map(|a| a.iter().map(name_of).collect())
                .unwrap_or_default();
            let extra: Vec<Value> = remote["items"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|g| {
                    if aggregated {
                        g.clone()
                    } else {
                        legacy_group(g)
                    }
                })
                .filter(|g| !have.contains(&name_of(g)))
                .collect();
            if let Some(a) = merged[list].as_array_mut() {
                a.extend(extra);
            }
        }
        let mut resp = http::json_response(200, &merged);
        if aggregated {
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(AGGREGATED_DISCOVERY),
            );
            resp.headers_mut()
                .insert(header::VARY, HeaderValue::from_static("Accept"));
        }
        resp
    }

    /// `/openapi/v3`: the sandbox's group versions, then the delegate's
    /// (whose documents are proxied from there).
    pub(crate) async fn openapi_v3(&self, cat: &Catalogue, local: Value, user: &UserInfo) -> Resp {
        let mut merged = local;
        if let Some(remote) = self.document("/openapi/v3", "application/json", user).await
            && let (Some(ours), Some(theirs)) =
                (merged["paths"].as_object_mut(), remote["paths"].as_object())
        {
            for (k, v) in theirs {
                let group = k.strip_prefix("apis/").and_then(|r| r.split('/').next());
                if group.is_some_and(|g| !g.is_empty() && !cat.serves_group(g)) {
                    ours.insert(k.clone(), v.clone());
                }
            }
        }
        http::json_response(200, &merged)
    }

    /// `/openapi/v2`: the sandbox's paths and definitions, then the
    /// delegate's paths of its groups and the definitions the sandbox lacks.
    pub(crate) async fn openapi_v2(&self, cat: &Catalogue, local: Value, user: &UserInfo) -> Resp {
        let mut merged = local;
        if let Some(remote) = self.document("/openapi/v2", "application/json", user).await {
            if let (Some(ours), Some(theirs)) =
                (merged["paths"].as_object_mut(), remote["paths"].as_object())
            {
                for (k, v) in theirs {
                    let group = k.strip_prefix("/apis/").and_then(|r| r.split('/').next());
                    if group.is_some_and(|g| !g.is_empty() && !cat.serves_group(g)) {
                        ours.insert(k.clone(), v.clone());
                    }
                }
            }
            if let (Some(ours), Some(theirs)) = (
                merged["definitions"].as_object_mut(),
                remote["definitions"].as_object(),
            ) {
                for (k, v) in theirs {
                    ours.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
        http::json_response(200, &merged)
    }
}

/// The legacy `APIGroup` of an aggregated `APIGroupDiscovery`: its versions
/// in the order listed (preferred first).
fn legacy_group(g: &Value) -> Value {
    let name = g["metadata"]["name"].as_str().unwrap_or_default();
    let versions: Vec<Value> = g["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["version"].as_str())
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    let mut group = json!({"name": name, "versions": versions});
    if let Some(first) = group["versions"].get(0).cloned() {
        group["preferredVersion"] = first;
    }
    group
}

fn strip_hop_by_hop(headers: &mut HeaderMap) {
    for name in [
        header::CONNECTION,
        header::TRANSFER_ENCODING,
        header::TE,
        header::TRAILER,
        header::UPGRADE,
        HeaderName::from_static("keep-alive"),
        HeaderName::from_static("proxy-connection"),
    ] {
        headers.remove(name);
    }
}

/// The uids of the objects a successful write removed, from its answer: a
/// delete's `Status` (`details.uid`); an object marked deleted without
/// finalizers left (a delete, or the update that removed the last one);
/// each such item of a deletecollection's list.
fn removed_uids(answer: &Value) -> Vec<String> {
    let gone = |o: &Value| -> Option<String> {
        let m = &o["metadata"];
        let finalizers_left = m["finalizers"].as_array().is_some_and(|f| !f.is_empty());
        (m["deletionTimestamp"].is_string() && !finalizers_left)
            .then(|| m["uid"].as_str().map(String::from))
            .flatten()
    };
    if answer["kind"] == "Status" {
        return (answer["status"] == "Success")
            .then(|| answer["details"]["uid"].as_str().map(String::from))
            .flatten()
            .into_iter()
            .collect();
    }
    if let Some(items) = answer["items"].as_array() {
        // A deletecollection's answer lists what it deleted; those still
        // waiting for finalizers are marked, the others are gone.
        return items
            .iter()
            .filter_map(|o| {
                let pending = o["metadata"]["finalizers"]
                    .as_array()
                    .is_some_and(|f| !f.is_empty());
                (!pending)
                    .then(|| o["metadata"]["uid"].as_str().map(String::from))
                    .flatten()
            })
            .collect();
    }
    gone(answer).into_iter().collect()
}

/// The garbage collector's part for owners stored in the delegate.
fn collect_garbage(
    state: &Mutex<State>,
    path_and_query: &str,
    request_body: &[u8],
    answer: &Value,
) {
    let query = path_and_query.split_once('?').map(|(_, q)| q).unwrap_or("");
    let q = http::Query::parse(query);
    let body: Value = serde_json::from_slice(request_body).unwrap_or(Value::Null);
    let policy = q
        .get("propagationPolicy")
        .map(str::to_string)
        .or_else(|| body["propagationPolicy"].as_str().map(str::to_string));
    let orphan = policy.as_deref() == Some("Orphan") || body["orphanDependents"] == true;
    let uids = removed_uids(answer);
    if uids.is_empty() {
        return;
    }
    let mut st = state.lock().unwrap();
    for uid in uids {
        crate::objects::collect_dependents(&mut st, &uid, orphan);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_keys_are_escaped_as_client_go_does() {
        assert_eq!(
            header_key_escape("authentication.kubernetes.io/credential-id"),
            "authentication.kubernetes.io%2Fcredential-id"
        );
        assert_eq!(header_key_escape("a%b c"), "a%25b%20c");
    }

    #[test]
    fn a_client_cannot_claim_an_identity_through_the_proxy() {
        for h in [
            "x-remote-user",
            "x-remote-group",
            "x-remote-extra-scopes",
            "impersonate-user",
            "authorization",
            "connection",
        ] {
            assert!(!forwarded(&HeaderName::from_static(h)), "{h}");
        }
        for h in ["accept", "content-type", "user-agent", "accept-encoding"] {
            assert!(forwarded(&HeaderName::from_static(h)), "{h}");
        }
        let mut headers = HeaderMap::new();
        let user = UserInfo {
            username: "system:serviceaccount:ns:sa".into(),
            uid: "u-1".into(),
            groups: vec![
                "system:serviceaccounts".into(),
                "system:authenticated".into(),
            ],
            extra: [(
                "authentication.kubernetes.io/credential-id".to_string(),
                vec!["JTI=abc".to_string()],
            )]
            .into(),
        };
        identity_headers(&mut headers, &user);
        assert_eq!(headers["x-remote-user"], "system:serviceaccount:ns:sa");
        assert_eq!(headers["x-remote-uid"], "u-1");
        assert_eq!(headers.get_all("x-remote-group").iter().count(), 2);
        assert_eq!(
            headers["x-remote-extra-authentication.kubernetes.io%2Fcredential-id"],
            "JTI=abc"
        );
    }

    #[test]
    fn routes_follow_the_groups_the_sandbox_serves() {
        let cat = Catalogue::builtin_without_crds();
        let r = |p: &str, res: bool, g: &str| route(&cat, p, res, g);
        assert_eq!(r("/apis/x.dev/v1/things", true, "x.dev"), Route::Proxy);
        assert_eq!(
            r(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                true,
                "apiextensions.k8s.io"
            ),
            Route::Proxy
        );
        assert_eq!(r("/api/v1/namespaces", true, ""), Route::Local);
        assert_eq!(r("/apis/apps/v1/deployments", true, "apps"), Route::Local);
        assert_eq!(r("/apis", false, ""), Route::Apis);
        assert_eq!(r("/apis/", false, ""), Route::Apis);
        assert_eq!(r("/apis/x.dev", false, ""), Route::Proxy);
        assert_eq!(r("/apis/x.dev/v1", false, ""), Route::Proxy);
        assert_eq!(r("/apis/apps/v1", false, ""), Route::Local);
        assert_eq!(r("/openapi/v3", false, ""), Route::OpenApiV3);
        assert_eq!(r("/openapi/v3/apis/x.dev/v1", false, ""), Route::Proxy);
        assert_eq!(r("/openapi/v3/api/v1", false, ""), Route::Local);
        assert_eq!(r("/openapi/v2", false, ""), Route::OpenApiV2);
        assert_eq!(r("/version", false, ""), Route::Local);
        assert_eq!(r("/api", false, ""), Route::Local);
    }

    #[test]
    fn legacy_groups_come_from_aggregated_discovery() {
        let g = json!({"metadata": {"name": "x.dev"}, "versions": [
            {"version": "v2", "resources": []}, {"version": "v1", "resources": []}]});
        assert_eq!(
            legacy_group(&g),
            json!({"name": "x.dev",
                   "versions": [{"groupVersion": "x.dev/v2", "version": "v2"},
                                {"groupVersion": "x.dev/v1", "version": "v1"}],
                   "preferredVersion": {"groupVersion": "x.dev/v2", "version": "v2"}})
        );
    }

    #[test]
    fn removed_objects_are_read_from_the_answer() {
        let status = json!({"kind": "Status", "status": "Success", "details": {"uid": "u1"}});
        assert_eq!(removed_uids(&status), ["u1"]);
        let pending = json!({"metadata": {"uid": "u2", "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["x"]}});
        assert!(removed_uids(&pending).is_empty());
        let done = json!({"metadata": {"uid": "u3", "deletionTimestamp": "2026-01-01T00:00:00Z"}});
        assert_eq!(removed_uids(&done), ["u3"]);
        let live = json!({"metadata": {"uid": "u4"}});
        assert!(removed_uids(&live).is_empty());
        let list = json!({"items": [{"metadata": {"uid": "a"}}, {"metadata": {"uid": "b", "finalizers": ["x"]}}]});
        assert_eq!(removed_uids(&list), ["a"]);
    }
}
