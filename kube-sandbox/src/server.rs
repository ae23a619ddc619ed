//! The HTTPS front: accepting connections (HTTP/1.1 and HTTP/2 over
//! rustls), outages, request-info parsing like the real server's
//! `RequestInfoFactory`, authentication, impersonation, authorization,
//! injected faults, latency, the request log, and routing to handlers.

use crate::auth::authn::{self, Impersonation};
use crate::auth::rbac::{self, Decision, RbacSnapshot};
use crate::auth::{Attributes, UserInfo};
use crate::controls::{RequestRecord, StreamingLists};
use crate::delegate::{self, Route};
use crate::errors::ApiError;
use crate::http::{Query, RequestInfo, Resp, decode, error_response, request_info};
use crate::shared::{Shared, authenticate_token};
use crate::{discovery, handlers};
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::header::{self, HeaderMap};
use hyper::{Method, Request};
use std::sync::Arc;
use tokio::net::TcpListener;

/// Paths anyone may read without a token, as `system:public-info-viewer`
/// grants to anonymous users in a real cluster.
fn public_path(path: &str) -> bool {
    matches!(path, "/healthz" | "/livez" | "/readyz" | "/version")
        || path.starts_with("/healthz/")
        || path.starts_with("/livez/")
        || path.starts_with("/readyz/")
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
    let started = shared.controls.elapsed();
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
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or(path.as_str(), |pq| pq.as_str())
        .to_string();
    // The server's own traffic (the CRD delegate's reviews and watches) is
    // no client's: no injected fault or latency, no entry in the log.
    let loopback =
        bearer(&parts.headers).is_some_and(|t| t.is_ok_and(|t| t == shared.loopback_token));
    let request = Incoming {
        method: &parts.method,
        path_and_query: &path_and_query,
        headers: &parts.headers,
        info: &info,
        query: &query,
        loopback,
    };
    let (user, resp) = serve(&shared, request, body).await;
    if loopback {
        return resp;
    }
    // Delay rules hold back the answer to requests that were executed.
    let delay = if resp.status().is_success() {
        shared.controls.delay_for(&info.verb, &info.path)
    } else {
        None
    };
    let latency = shared.controls.latency() + delay.unwrap_or_default();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let mut resp = resp;
    let offset = shared.controls.date_offset();
    if offset != 0 {
        // What a server whose clock is `offset` off says its time is
        // (hyper adds the machine's own `Date` otherwise).
        let at = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(offset);
        let date = jiff::fmt::rfc2822::DateTimePrinter::new().timestamp_to_rfc9110_string(&at);
        if let Ok(date) = date.map(|d| hyper::header::HeaderValue::from_str(&d))
            && let Ok(value) = date
        {
            resp.headers_mut().insert(header::DATE, value);
        }
    }
    shared.controls.record(RequestRecord {
        verb: info.verb.clone(),
        method: parts.method.as_str().to_string(),
        path,
        query: raw_query,
        user,
        status: resp.status().as_u16(),
        request_bytes,
        started,
        finished: shared.controls.elapsed(),
    });
    resp
}

/// The answer of a v1.27+ API server whose WatchList feature gate is off
/// to a watch with `sendInitialEvents` (apimachinery's
/// `ValidateListOptions`).
fn streaming_list_refused() -> ApiError {
    ApiError::invalid(
        "meta.k8s.io",
        "ListOptions",
        "",
        vec![crate::errors::Cause::new(
            "FieldValueForbidden",
            "sendInitialEvents",
            "Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
        )],
    )
}

/// `resp`, a watch stream, without its initial-events-end BOOKMARK when
/// `drop` (as from a server or proxy that ignores `sendInitialEvents`: a
/// real v1.27+ server defaults a watch from `resourceVersion` 0 to a
/// streaming list, so dropping the parameter would not do). Lines are
/// passed on whole, as they come.
fn without_initial_events_end(resp: Resp, drop: bool) -> Resp {
    if !drop || !resp.status().is_success() {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let lines = futures::stream::unfold(
        (body.into_data_stream(), Vec::<u8>::new()),
        |(mut data, mut pending)| async move {
            use futures::StreamExt as _;
            loop {
                if let Some(end) = pending.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = pending.drain(..=end).collect();
                    let has = |needle: &[u8]| line.windows(needle.len()).any(|w| w == needle);
                    let marks_end = has(b"\"BOOKMARK\"") && has(b"\"k8s.io/initial-events-end\"");
                    if marks_end {
                        continue;
                    }
                    return Some((Ok(Bytes::from(line)), (data, pending)));
                }
                match data.next().await {
                    Some(Ok(chunk)) => pending.extend_from_slice(&chunk),
                    Some(Err(e)) => return Some((Err(e), (data, Vec::new()))),
                    None if pending.is_empty() => return None,
                    None => {
                        let rest = std::mem::take(&mut pending);
                        return Some((Ok(Bytes::from(rest)), (data, pending)));
                    }
                }
            }
        },
    );
    let body = http_body_util::StreamBody::new(futures::StreamExt::map(lines, |l| {
        l.map(hyper::body::Frame::data)
    }));
    hyper::Response::from_parts(parts, BodyExt::boxed(body))
}

/// One request as it came in.
struct Incoming<'a> {
    method: &'a Method,
    path_and_query: &'a str,
    headers: &'a HeaderMap,
    info: &'a RequestInfo,
    query: &'a Query,
    /// Authenticated with the loopback token.
    loopback: bool,
}

async fn serve(shared: &Arc<Shared>, request: Incoming<'_>, body: Bytes) -> (String, Resp) {
    let Incoming {
        method,
        path_and_query,
        headers,
        info,
        query,
        loopback,
    } = request;
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
    if !loopback && let Some(status) = shared.controls.fault_for(&info.verb, &info.path) {
        return (username, error_response(&fault_error(status)));
    }
    let attrs = attributes(&user, info);
    let eval = rbac::evaluate(&snapshot, &attrs);
    if eval.decision == Decision::Deny {
        let e = rbac::forbidden_error(&attrs, &eval.reason);
        return (username, error_response(&e));
    }
    // A streaming list, as the control says the server answers it.
    let streaming = !loopback && info.verb == "watch" && query.flag("sendInitialEvents");
    let mode = shared.controls.streaming_lists();
    if streaming && mode == StreamingLists::Refused {
        return (username, error_response(&streaming_list_refused()));
    }
    let ignored = streaming && mode == StreamingLists::Ignored;
    if let Some(d) = &shared.delegate {
        let delegated = delegated(
            shared,
            d,
            method,
            path_and_query,
            headers,
            info,
            &user,
            body.clone(),
        );
        if let Some(resp) = delegated.await {
            return (username, without_initial_events_end(resp, ignored));
        }
    }
    let resp = if info.resource_request {
        let call = crate::request::Call {
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
    (username, without_initial_events_end(resp, ignored))
}

/// The delegate's answer, or a merged discovery document, when the request
/// is not the sandbox's alone (`crate::delegate`); `None` when it is.
#[allow(clippy::too_many_arguments)]
async fn delegated(
    shared: &Arc<Shared>,
    d: &delegate::Delegate,
    method: &Method,
    path_and_query: &str,
    headers: &HeaderMap,
    info: &RequestInfo,
    user: &UserInfo,
    body: Bytes,
) -> Option<Resp> {
    let (route, local) = {
        let st = shared.state.lock().unwrap();
        let route = delegate::route(
            &st.catalogue,
            &info.path,
            info.resource_request,
            &info.group,
        );
        let local = match route {
            Route::Apis => Some(discovery::apis_document(
                &st.catalogue,
                discovery::wants_aggregated(headers),
            )),
            Route::OpenApiV3 => Some(discovery::openapi_root(&st.catalogue)),
            Route::OpenApiV2 => Some(discovery::openapi_v2(&st.catalogue)),
            Route::Local | Route::Proxy => None,
        };
        (route, local.map(|l| (l, st.catalogue.clone())))
    };
    Some(match (route, local) {
        (Route::Local, _) => return None,
        (Route::Proxy, _) => {
            let forward = delegate::Forward {
                method,
                path_and_query,
                headers,
                user,
                body,
            };
            d.proxy(&shared.state, forward).await
        }
        (Route::Apis, Some((local, _))) => {
            d.apis(local, discovery::wants_aggregated(headers), user)
                .await
        }
        (Route::OpenApiV3, Some((local, cat))) => d.openapi_v3(&cat, local, user).await,
        (Route::OpenApiV2, Some(_)) if !discovery::accepts_json(headers) => {
            discovery::not_acceptable()
        }
        (Route::OpenApiV2, Some((local, cat))) => d.openapi_v2(&cat, local, user).await,
        (_, None) => return None,
    })
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
        let tcp = crate::hang::Hanging::new(tcp, shared.controls.hang());
        let acceptor = acceptor.clone();
        let shared = shared.clone();
        tokio::spawn(async move {
            let mut outage = shared.controls.outage_signal();
            outage.mark_unchanged();
            // A far-away server's TCP and TLS handshakes (benchmarks).
            let connect_delay = shared.controls.connect_delay();
            if !connect_delay.is_zero() {
                tokio::time::sleep(connect_delay).await;
            }
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
            // HTTP/2 when the client chose it in the TLS handshake (ALPN, as
            // kubectl does), HTTP/1.1 otherwise, as the real API server
            // serves. Chosen here rather than by hyper-util's sniffing
            // `auto` builder, whose feature would compile an HTTP/2 client
            // into every binary of the workspace (feature unification;
            // docs/benchmarks-cli.md#release-profile-p2).
            let h2 = tls_stream.get_ref().1.alpn_protocol() == Some(b"h2");
            let io = hyper_util::rt::TokioIo::new(tls_stream);
            if h2 {
                let conn =
                    hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                        .serve_connection(io, service);
                tokio::select! {
                    _ = conn => {}
                    _ = outage.changed() => {}
                }
            } else {
                let conn = hyper::server::conn::http1::Builder::new().serve_connection(io, service);
                tokio::select! {
                    _ = conn => {}
                    _ = outage.changed() => {}
                }
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

    #[tokio::test]
    async fn an_ignored_streaming_list_loses_only_its_initial_events_end_bookmark() {
        let lines = [
            "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n",
            "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"7\",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}}\n",
            "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"8\"}}}\n",
            "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n",
        ];
        let all = lines.concat();
        // Chunks that cut lines anywhere, as a proxied stream does.
        let resp = || {
            let chunks: Vec<Result<hyper::body::Frame<Bytes>, crate::http::BodyError>> = all
                .as_bytes()
                .chunks(13)
                .map(|c| Ok(hyper::body::Frame::data(Bytes::copy_from_slice(c))))
                .collect();
            let body = http_body_util::StreamBody::new(futures::stream::iter(chunks));
            hyper::Response::new(BodyExt::boxed(body))
        };
        let read = |r: Resp| async move {
            String::from_utf8(r.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap()
        };
        let kept = read(without_initial_events_end(resp(), true)).await;
        assert_eq!(kept, [lines[0], lines[2], lines[3]].concat());
        let whole = read(without_initial_events_end(resp(), false)).await;
        assert_eq!(whole, all);
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
