//! The hub's read-only REST API (docs/observability.md) and the Kubernetes-native
//! authentication in front of it and of `/metrics`.
//!
//! Routes, all `GET`, JSON from the hub's cache ([`FleetView`]) with the
//! same types and serializer as the CLI (`crate::render`):
//!
//! | route | body |
//! | --- | --- |
//! | `/api/v1/federation/status` | `summary` of `kubectl fleet status -o json` (maintenance count, edge versions included) |
//! | `/api/v1/federation/clusters?tier=&environment=&region=&phase=&version=&incident=&limit=&continue=` | `kubectl fleet status -o json` (same filters), with `metadata` |
//! | `/api/v1/federation/clusters/{name}` | one entry of its `sites` |
//! | `/api/v1/federation/correlations` | `correlations` of `kubectl fleet incidents -o json` |
//! | `/api/v1/federation/cascades?limit=&continue=` | `cascades` of `kubectl fleet incidents -o json`; with `limit`, `{items, metadata}` |
//! | `/api/v1/federation/outages` | `outages` of `kubectl fleet incidents -o json` |
//! | `/api/v1/federation/incidents/{id}?limit=&continue=` | `kubectl fleet incidents ID -o json`, with `metadata` |
//!
//! The incidents are the hub's full ones, every site of each (the
//! `FederationStatus` singleton lists at most a few dozen per incident:
//! `fleet::summary::bound`). A route refuses a query parameter it does not
//! take, and `limit`/`continue` page the long lists
//! ([`super::paging`]).
//!
//! Auth ([`Auth`]): bearer token → TokenReview with the audiences the
//! operator accepts (`--auth-token-audiences`; default the API server's
//! own) → SubjectAccessReview of the route's [`Access`]: `list
//! federatedclusters.federation.kubectl-fleet.dev` for the REST API, `get`
//! on the non-resource URL `/metrics` for `/metrics` (what kube-rbac-proxy
//! and controller-runtime's secure metrics check). Answers are kept in
//! bounded LRU caches keyed by the token's SHA-256 (valid tokens for
//! [`TOKEN_TTL`], invalid ones for [`INVALID_TOKEN_TTL`], allows for
//! [`ALLOW_TTL`], denials for [`DENY_TTL`]); concurrent requests with the
//! same token share one review; tokens never seen valid are reviewed at
//! most [`NEW_TOKEN_REVIEWS_PER_SECOND`] a second (burst
//! [`NEW_TOKEN_REVIEW_BURST`]) for each [`TokenShape`] — JWTs that look
//! issued by the API server apart from everything else — and half that
//! for each client address ([`NewTokens`]), beyond which the caller gets
//! 429 with `Retry-After`. No or invalid token: 401; not allowed: 403; a review
//! that fails: 500, never open. Tokens are never logged or stored. The
//! check is a layer on the router ([`authenticated`]), so a route added
//! to it cannot be left open by a handler that forgets to call it.
//!
//! Fleet-sized bodies (every route but one site, and `/metrics`) take one
//! of a few [`ResponseSlots`] from before they are built until their last
//! byte is handed to the kernel (`--http-max-inflight-responses`), so slow
//! readers cannot pin one body each (docs/reliability.md).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use k8s_openapi::api::authentication::v1::UserInfo;
use sha2::{Digest as _, Sha256};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use super::credential::TokenClaims;
use super::paging::{
    BadQuery, Cursor, ListMeta, PAGING, Params, list_version, name_meta, page_by_name,
    page_by_offset,
};
use super::review_cache::{Flights, Lookup, NewTokens, TtlLru};
pub use super::review_cache::{NEW_TOKEN_REVIEW_BURST, NEW_TOKEN_REVIEWS_PER_SECOND, TokenShape};
use super::view::FleetView;
use crate::api::{FederatedCluster, WireEnum};
use crate::fleet::filter::SiteFilter;
use crate::fleet::policy::Incidents;
pub use crate::k8s::reviews::Access;
use crate::k8s::reviews::{review_token, user_can};
use crate::render::{self, incidents_report, status_report};

/// How long a valid token's TokenReview answer is reused (also how long a
/// revoked token keeps working here).
pub const TOKEN_TTL: Duration = Duration::from_secs(10);
/// How long an invalid token's TokenReview answer is reused.
pub const INVALID_TOKEN_TTL: Duration = Duration::from_secs(5);
/// How long an allowing SubjectAccessReview answer is reused.
pub const ALLOW_TTL: Duration = Duration::from_secs(60);
/// How long a denying SubjectAccessReview answer is reused.
pub const DENY_TTL: Duration = Duration::from_secs(10);
/// Answers kept at most per cache; the least recently used goes first.
pub const CACHED_ANSWERS: usize = 4096;
/// How long a fleet-sized response waits for a [`ResponseSlots`] slot
/// before it is answered 503.
pub const SLOT_WAIT: Duration = Duration::from_secs(10);

/// What the REST API checks a caller for (the design's `list federatedclusters`).
pub const READ_FLEET: Access = Access::Resource {
    verb: "list",
    group: crate::api::GROUP,
    resource: "federatedclusters",
};

/// What `/metrics` checks a scraper for: `get` on the non-resource URL.
pub const READ_METRICS: Access = Access::NonResource {
    verb: "get",
    path: crate::fleet::rbac::METRICS_PATH,
};

/// Why a request was refused.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum Refused {
    /// No bearer token in the request.
    #[error(
        "no bearer token: send `Authorization: Bearer TOKEN` (e.g. `kubectl create token NAME`)"
    )]
    NoToken,
    /// The API server did not accept the token for the audiences asked.
    #[error("{}", invalid_token_message(.audience.as_deref()))]
    InvalidToken {
        /// The audience the operator requires, if it was given one.
        audience: Option<String>,
    },
    /// The caller may not do what the route needs.
    #[error("{}", forbidden_message(.user, *.access))]
    Forbidden { user: String, access: Access },
    /// Too many tokens never seen before, too fast: reviewing each would
    /// cost the API server a TokenReview.
    #[error("too many new bearer tokens to check at once: try again in {retry_after} s")]
    Throttled {
        /// Seconds until a review is possible again.
        retry_after: u64,
    },
    /// A TokenReview or SubjectAccessReview could not be made.
    #[error("could not check the caller with the API server ({0}); try again")]
    ReviewFailed(&'static str),
}

fn invalid_token_message(audience: Option<&str>) -> String {
    match audience {
        None => "the bearer token is not valid (unknown, expired, revoked, or minted for \
                 another audience than the API server's): get a fresh one, e.g. \
                 `kubectl create token NAME`"
            .to_owned(),
        Some(a) => format!(
            "the bearer token is not valid here (unknown, expired, revoked, or not minted \
             for audience {a:?}): get one with `kubectl create token NAME --audience {a}`"
        ),
    }
}

fn forbidden_message(user: &str, access: Access) -> String {
    let user: String = user.chars().take(253).collect();
    match access {
        Access::Resource { .. } => {
            format!("{user} may not {access}: grant it with a ClusterRole")
        }
        Access::NonResource { verb, path } => format!(
            "{user} may not {access}: bind it to a ClusterRole with nonResourceURLs \
             [\"{path}\"] and verbs [\"{verb}\"] (`kubectl fleet install --with-monitoring` \
             creates {})",
            crate::fleet::rbac::METRICS_READER_ROLE
        ),
    }
}

impl Refused {
    fn status(&self) -> StatusCode {
        match self {
            Refused::NoToken | Refused::InvalidToken { .. } => StatusCode::UNAUTHORIZED,
            Refused::Forbidden { .. } => StatusCode::FORBIDDEN,
            Refused::Throttled { .. } => StatusCode::TOO_MANY_REQUESTS,
            Refused::ReviewFailed(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let mut resp = error_response(self.status(), &self.to_string());
        match self {
            Refused::NoToken | Refused::InvalidToken { .. } => {
                resp.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            Refused::Throttled { retry_after } => {
                resp.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
            }
            _ => {}
        }
        resp
    }
}

/// A JSON error body `{"code": N, "message": "..."}` (JSON escapes any
/// control characters of echoed input; echoed input is also cut short).
pub fn error_response(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({ "code": status.as_u16(), "message": message });
    // The message may quote the request (a site name): written
    // terminal-safe, as every JSON answer (`render::to_json`).
    let text = render::to_json(&body).unwrap_or_default();
    (status, [(header::CONTENT_TYPE, "application/json")], text).into_response()
}

/// A request the API answers with an error status.
#[derive(Debug, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The one-line message, with what to do.
    pub message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        error_response(self.status, &self.message)
    }
}

/// Every [`ResponseSlots`] slot stayed taken for [`SLOT_WAIT`]: 503 with
/// `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy;

impl IntoResponse for Busy {
    fn into_response(self) -> Response {
        let mut resp = error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "the operator is busy sending other large responses: try again in a few seconds",
        );
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(1u64));
        resp
    }
}

/// What a route answers: JSON, or an error (a refused caller never gets
/// to a route: [`authenticated`]).
pub enum Answer {
    /// No response slot came free in time.
    Busy(Busy),
    /// Another error.
    Error(ApiError),
}

impl From<Busy> for Answer {
    fn from(b: Busy) -> Self {
        Answer::Busy(b)
    }
}

impl From<ApiError> for Answer {
    fn from(e: ApiError) -> Self {
        Answer::Error(e)
    }
}

impl IntoResponse for Answer {
    fn into_response(self) -> Response {
        match self {
            Answer::Busy(b) => b.into_response(),
            Answer::Error(e) => e.into_response(),
        }
    }
}

/// At most N fleet-sized responses being built or sent at once
/// (`--http-max-inflight-responses`); a caller waits up to [`SLOT_WAIT`].
#[derive(Clone, Debug)]
pub struct ResponseSlots {
    free: Arc<Semaphore>,
    wait: Duration,
}

/// A taken slot; it is freed when the last clone goes. [`Slot::hold`]
/// hands it to the response, and the HTTP server keeps it until the body's
/// last byte was written to the connection (`server::serve`).
#[derive(Clone, Debug)]
pub struct Slot {
    /// Held for its drop: the permit goes back with the last clone.
    _permit: Arc<OwnedSemaphorePermit>,
}

impl ResponseSlots {
    /// `n` slots (at least one).
    pub fn new(n: usize) -> Self {
        Self {
            free: Arc::new(Semaphore::new(n.max(1))),
            wait: SLOT_WAIT,
        }
    }

    /// Slots free now.
    pub fn available(&self) -> usize {
        self.free.available_permits()
    }

    /// A free slot, waiting up to [`SLOT_WAIT`].
    pub async fn take(&self) -> Result<Slot, Busy> {
        match tokio::time::timeout(self.wait, self.free.clone().acquire_owned()).await {
            Ok(Ok(permit)) => Ok(Slot {
                _permit: Arc::new(permit),
            }),
            _ => Err(Busy),
        }
    }
}

impl Slot {
    /// `resp`, carrying this slot until it is sent.
    pub fn hold(self, mut resp: Response) -> Response {
        resp.extensions_mut().insert(self);
        resp
    }
}

type Digest = [u8; 32];

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

type UserAnswer = Result<Option<Arc<UserInfo>>, Refused>;

/// Bearer-token authentication and authorization against the API server
/// behind a client, with bounded caches keyed on a hash of the token (the
/// token itself is never stored), one review in flight per token, and a
/// rate limit on reviews of tokens never seen valid.
pub struct Auth {
    client: kube::Client,
    audiences: Vec<String>,
    users: Mutex<TtlLru<Digest, Option<Arc<UserInfo>>>>,
    decisions: Mutex<TtlLru<(Digest, Access), bool>>,
    user_flights: Flights<Digest, UserAnswer>,
    decision_flights: Flights<(Digest, Access), Result<bool, Refused>>,
    new_tokens: Mutex<NewTokens>,
    /// The issuers (`iss`) of tokens the API server said were valid, the
    /// latest last: what a fresh token's [`TokenShape`] is judged by.
    issuers: Mutex<Vec<String>>,
}

/// Issuers remembered at most (an API server has one, or a few while its
/// issuer changes).
const REMEMBERED_ISSUERS: usize = 4;

/// The address a request came from, told to the routes in its extensions
/// by the HTTP server (`server::serve`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientAddr(pub std::net::IpAddr);

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("audiences", &self.audiences)
            .finish_non_exhaustive()
    }
}

/// The token of an `Authorization: Bearer TOKEN` header.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

impl Auth {
    /// Checks callers with the API server behind `client`, accepting
    /// tokens minted for one of `audiences` (empty: the API server's own).
    pub fn new(client: kube::Client, audiences: Vec<String>) -> Self {
        Self {
            client,
            audiences,
            users: Mutex::new(TtlLru::new(CACHED_ANSWERS)),
            decisions: Mutex::new(TtlLru::new(CACHED_ANSWERS)),
            user_flights: Flights::default(),
            decision_flights: Flights::default(),
            new_tokens: Mutex::new(NewTokens::new(Instant::now())),
            issuers: Mutex::new(Vec::new()),
        }
    }

    /// Whether the caller of a request with `headers`, from `source` (if
    /// known), may do `access`.
    pub async fn check(
        &self,
        headers: &HeaderMap,
        source: Option<std::net::IpAddr>,
        access: Access,
    ) -> Result<(), Refused> {
        let token = bearer(headers).ok_or(Refused::NoToken)?;
        let key: Digest = Sha256::digest(token.as_bytes()).into();
        let user = self
            .user(token, key, source)
            .await?
            .ok_or_else(|| Refused::InvalidToken {
                audience: self.audiences.first().cloned(),
            })?;
        if self.allowed(&user, key, access).await? {
            Ok(())
        } else {
            Err(Refused::Forbidden {
                user: user
                    .username
                    .clone()
                    .unwrap_or_else(|| "the caller".to_owned()),
                access,
            })
        }
    }

    /// Who the token belongs to (None: not valid), from the cache or one
    /// TokenReview shared by every concurrent request with this token; a
    /// token never seen valid costs its `source` and its shape a review.
    async fn user(&self, token: &str, key: Digest, source: Option<std::net::IpAddr>) -> UserAnswer {
        let seen_valid = match lock(&self.users).get(&key, Instant::now()) {
            Lookup::Fresh(user) => return Ok(user),
            Lookup::Expired(user) => user.is_some(),
            Lookup::Missing => false,
        };
        self.user_flights
            .run(&key, async {
                // A flight that just ended may have answered already.
                if let Lookup::Fresh(user) = lock(&self.users).get(&key, Instant::now()) {
                    return Ok(user);
                }
                let claims = TokenClaims::decode(token);
                if !seen_valid {
                    let shape = TokenShape::of(
                        claims.as_ref(),
                        &lock(&self.issuers),
                        &self.audiences,
                        jiff::Timestamp::now(),
                    );
                    let taken = lock(&self.new_tokens).try_take(source, shape, Instant::now());
                    if let Err(wait) = taken {
                        return Err(Refused::Throttled {
                            retry_after: wait.as_secs_f64().ceil().max(1.0) as u64,
                        });
                    }
                }
                let user = review_token(&self.client, token, &self.audiences)
                    .await
                    .map_err(|e| review_failed("TokenReview", &e))?
                    .map(Arc::new);
                if user.is_some()
                    && let Some(issuer) = claims.and_then(|c| c.issuer)
                {
                    let mut issuers = lock(&self.issuers);
                    if !issuers.contains(&issuer) {
                        if issuers.len() >= REMEMBERED_ISSUERS {
                            issuers.remove(0);
                        }
                        issuers.push(issuer);
                    }
                }
                let ttl = if user.is_some() {
                    TOKEN_TTL
                } else {
                    INVALID_TOKEN_TTL
                };
                lock(&self.users).insert(key, user.clone(), Instant::now() + ttl);
                Ok(user)
            })
            .await
    }

    /// Whether `user` may do `access`, from the cache or one
    /// SubjectAccessReview shared by concurrent requests.
    async fn allowed(&self, user: &UserInfo, key: Digest, access: Access) -> Result<bool, Refused> {
        let dkey = (key, access);
        if let Lookup::Fresh(a) = lock(&self.decisions).get(&dkey, Instant::now()) {
            return Ok(a);
        }
        self.decision_flights
            .run(&dkey, async {
                if let Lookup::Fresh(a) = lock(&self.decisions).get(&dkey, Instant::now()) {
                    return Ok(a);
                }
                let a = user_can(&self.client, user, access)
                    .await
                    .map_err(|e| review_failed("SubjectAccessReview", &e))?;
                let ttl = if a { ALLOW_TTL } else { DENY_TTL };
                lock(&self.decisions).insert(dkey, a, Instant::now() + ttl);
                Ok(a)
            })
            .await
    }
}

fn review_failed(what: &'static str, err: &kube::Error) -> Refused {
    tracing::warn!(review = what, error = %crate::render::safe::Untrusted(err), "could not check an API caller");
    Refused::ReviewFailed(what)
}

/// State of the API routes.
#[derive(Clone, Debug)]
pub struct ApiState {
    /// The hub's cache.
    pub view: Arc<FleetView>,
    /// Who may read.
    pub auth: Arc<Auth>,
    /// Fleet-sized responses in flight.
    pub slots: ResponseSlots,
}

/// Whether the authentication layer admitted a request's caller, told to
/// the HTTP server in the response's extensions: a connection whose
/// caller was admitted keeps its place while strangers flood
/// (`server::serve`). Absent when the answer says nothing about the
/// caller (429, 500).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Authenticated(pub bool);

/// Admits a request only when its caller may do `access` (401, 403, 429
/// or 500 otherwise), before any handler or extractor runs.
async fn admit(
    State((auth, access)): State<(Arc<Auth>, Access)>,
    request: Request,
    next: Next,
) -> Response {
    let source = request.extensions().get::<ClientAddr>().map(|c| c.0);
    match auth.check(request.headers(), source, access).await {
        Ok(()) => {
            let mut resp = next.run(request).await;
            resp.extensions_mut().insert(Authenticated(true));
            resp
        }
        Err(refused) => {
            let says_who = matches!(
                refused,
                Refused::NoToken | Refused::InvalidToken { .. } | Refused::Forbidden { .. }
            );
            let mut resp = refused.into_response();
            if says_who {
                resp.extensions_mut().insert(Authenticated(false));
            }
            resp
        }
    }
}

/// `router` with every route behind [`Auth`] for `access`: a route added
/// to it is authenticated by construction, not by each handler.
pub fn authenticated(router: Router, auth: Arc<Auth>, access: Access) -> Router {
    router.route_layer(axum::middleware::from_fn_with_state((auth, access), admit))
}

/// The `/api/v1/federation` routes, each readable by who may list
/// FederatedClusters.
pub fn routes(state: ApiState) -> Router {
    let auth = state.auth.clone();
    let routes = Router::new()
        .route("/api/v1/federation/status", get(status))
        .route("/api/v1/federation/clusters", get(clusters))
        .route("/api/v1/federation/clusters/{name}", get(cluster))
        .route("/api/v1/federation/correlations", get(correlations))
        .route("/api/v1/federation/cascades", get(cascades))
        .route("/api/v1/federation/outages", get(outages))
        .route("/api/v1/federation/incidents/{id}", get(incident))
        .with_state(state);
    authenticated(routes, auth, READ_FLEET)
}

/// The routes, as their errors name them.
const STATUS: &str = "/api/v1/federation/status";
const CLUSTERS: &str = "/api/v1/federation/clusters";
const CLUSTER: &str = "/api/v1/federation/clusters/{name}";
const CORRELATIONS: &str = "/api/v1/federation/correlations";
const CASCADES: &str = "/api/v1/federation/cascades";
const OUTAGES: &str = "/api/v1/federation/outages";
const INCIDENT: &str = "/api/v1/federation/incidents/{id}";

/// The query parameters of `/clusters`.
const CLUSTER_PARAMS: [&str; 8] = [
    "tier",
    "environment",
    "region",
    "phase",
    "version",
    "incident",
    "limit",
    "continue",
];

impl From<BadQuery> for ApiError {
    fn from(b: BadQuery) -> Self {
        ApiError::new(b.status, b.message)
    }
}

impl From<BadQuery> for Answer {
    fn from(b: BadQuery) -> Self {
        Answer::Error(b.into())
    }
}

/// An answer with the paging state of its list.
#[derive(serde::Serialize)]
struct Paged<'a, T: serde::Serialize> {
    #[serde(flatten)]
    body: &'a T,
    metadata: ListMeta,
}

/// A page of a list that is a JSON array without paging.
#[derive(serde::Serialize)]
struct Items<'a, T: serde::Serialize> {
    items: &'a [T],
    metadata: ListMeta,
}

/// The query of `/clusters`.
#[derive(Debug, Default)]
pub struct ClusterQuery {
    tier: Option<String>,
    environment: Option<String>,
    region: Option<String>,
    phase: Option<String>,
    version: Option<String>,
    incident: Option<String>,
}

/// The query parameter `key` as a [`WireEnum`], or a 400 naming the
/// values it takes.
fn wire<T: WireEnum>(key: &str, value: Option<&str>) -> Result<Option<T>, ApiError> {
    let Some(v) = value else { return Ok(None) };
    T::from_wire(v).map(Some).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "invalid {key} {:?}: use one of {}",
                v.chars().take(64).collect::<String>(),
                e.allowed
            ),
        )
    })
}

impl ClusterQuery {
    /// The filters of checked `/clusters` parameters.
    pub fn from_params(p: &Params) -> Self {
        let get = |k: &str| p.get(k).map(str::to_owned);
        ClusterQuery {
            tier: get("tier"),
            environment: get("environment"),
            region: get("region"),
            phase: get("phase"),
            version: get("version"),
            incident: get("incident"),
        }
    }

    /// The filter this query asks for, or a 400 naming the bad parameter.
    pub fn filter(&self) -> Result<SiteFilter, ApiError> {
        Ok(SiteFilter {
            names: Vec::new(),
            tier: wire("tier", self.tier.as_deref())?,
            environment: wire("environment", self.environment.as_deref())?,
            region: self.region.clone(),
            phase: wire("phase", self.phase.as_deref())?,
            version: match self.version.as_deref() {
                Some(v) if v.is_empty() || v.chars().count() > 64 => {
                    return Err(ApiError::new(
                        StatusCode::BAD_REQUEST,
                        "invalid version: give 1 to 64 characters, e.g. version=0.2.0",
                    ));
                }
                v => v.map(str::to_owned),
            },
            within: None,
        })
    }
}

fn json<T: serde::Serialize>(value: &T) -> Result<Response, Answer> {
    let text = render::to_json(value)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    Ok(([(header::CONTENT_TYPE, "application/json")], text).into_response())
}

/// The cached sites passing `keep`, or a 503 until the first list is in.
fn cached(
    view: &FleetView,
    keep: impl Fn(&FederatedCluster) -> bool,
) -> Result<Vec<FederatedCluster>, ApiError> {
    view.sites(keep).ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the hub has not listed the sites yet: try again in a few seconds",
        )
    })
}

/// The cached sites, shared, or a 503 until the first list is in.
fn shared(
    view: &FleetView,
    keep: impl Fn(&FederatedCluster) -> bool,
) -> Result<Vec<Arc<FederatedCluster>>, ApiError> {
    view.shared_sites(keep).ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the hub has not listed the sites yet: try again in a few seconds",
        )
    })
}

async fn status(State(s): State<ApiState>, uri: Uri) -> Result<Response, Answer> {
    Params::parse(STATUS, &[], &uri)?;
    let slot = s.slots.take().await?;
    let sites = shared(&s.view, |_| true)?;
    let now = jiff::Timestamp::now();
    let hub = s.view.hub_verdict(now);
    Ok(slot.hold(json(&summary_of(&sites, &hub, now))?))
}

/// The report's summary over `sites` (without a report entry for each).
fn summary_of(
    sites: &[Arc<FederatedCluster>],
    hub: &crate::fleet::liveness::HubVerdict,
    now: jiff::Timestamp,
) -> render::report::SummaryReport {
    let mut totals = render::report::ViewTotals::default();
    for site in sites {
        let shown = crate::fleet::summary::shown_phase(site, hub.judging(), now);
        totals.add(site, &shown, now);
    }
    render::report::SummaryReport::new(&totals, hub)
}

async fn clusters(State(s): State<ApiState>, uri: Uri) -> Result<Response, Answer> {
    let params = Params::parse(CLUSTERS, &CLUSTER_PARAMS, &uri)?;
    let query = ClusterQuery::from_params(&params);
    let mut filter = query.filter()?;
    let limit = params.limit()?;
    let after = match params.cursor()? {
        None => None,
        Some(Cursor::Clusters { after }) => Some(after),
        Some(other) => return Err(ApiError::from(other.wrong_list()).into()),
    };
    if let Some(id) = &query.incident {
        let summary = s.view.summary().unwrap_or_default();
        filter.within = Some(find_incident(&summary, id)?.sites());
    }
    let slot = s.slots.take().await?;
    let now = jiff::Timestamp::now();
    let hub = s.view.hub_verdict(now);
    let matching = shared(&s.view, |site| filter.matches(site, hub.judging(), now))?;
    // The summary counts every site the query matches, on every page.
    let summary = summary_of(&matching, &hub, now);
    let (page, remaining) =
        page_by_name(matching, |site| site.site_name(), after.as_deref(), limit);
    let page: Vec<FederatedCluster> = page.iter().map(|s| (**s).clone()).collect();
    let metadata = name_meta(
        remaining,
        page.last().map(FederatedCluster::site_name),
        |after| Cursor::Clusters { after },
    );
    let incidents = Incidents::of(s.view.summary().as_deref());
    let mut report = status_report(&page, &hub, &incidents, now);
    report.summary = summary;
    Ok(slot.hold(json(&Paged {
        body: &report,
        metadata,
    })?))
}

async fn cluster(
    State(s): State<ApiState>,
    Path(name): Path<String>,
    uri: Uri,
) -> Result<Response, Answer> {
    Params::parse(CLUSTER, &[], &uri)?;
    // One site: a small body, no slot.
    let sites = cached(&s.view, |site| site.site_name() == name)?;
    let now = jiff::Timestamp::now();
    let incidents = Incidents::of(s.view.summary().as_deref());
    match status_report(&sites, &s.view.hub_verdict(now), &incidents, now)
        .sites
        .pop()
    {
        Some(site) => json(&site),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!(
                "site {:?} is not registered: list them with /api/v1/federation/clusters",
                name.chars().take(253).collect::<String>()
            ),
        )
        .into()),
    }
}

/// The incident `id` of `summary`: a 400 for what is not an incident id, a
/// 404 for one the hub does not report.
fn find_incident<'a>(
    summary: &'a crate::api::FederationStatusStatus,
    id: &str,
) -> Result<crate::fleet::incident::Incident<'a>, ApiError> {
    let id: String = id.chars().take(64).collect();
    crate::fleet::incident::parse_incident_id(&id).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("invalid incident {id:?}: {e}"),
        )
    })?;
    crate::fleet::incident::find_incident(summary, &id).ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!(
                "incident {id} not found: list the active ones with /api/v1/federation/correlations, /cascades and /outages"
            ),
        )
    })
}

async fn incident(
    State(s): State<ApiState>,
    Path(id): Path<String>,
    uri: Uri,
) -> Result<Response, Answer> {
    let params = Params::parse(INCIDENT, &PAGING, &uri)?;
    let limit = params.limit()?;
    let summary = s.view.summary().unwrap_or_default();
    let found = find_incident(&summary, &id)?;
    let after = match params.cursor()? {
        None => None,
        Some(Cursor::Incident { id: of, after }) if of == found.id() => Some(after),
        Some(other) => return Err(ApiError::from(other.wrong_list()).into()),
    };
    let names = found.sites();
    // A grouped outage can hold a large share of the fleet.
    let slot = s.slots.take().await?;
    let sites = cached(&s.view, |site| names.contains(site.site_name()))?;
    let now = jiff::Timestamp::now();
    let mut report = render::incidents::incident_report(
        &found,
        &sites,
        &Incidents::of(Some(&summary)),
        &s.view.hub_verdict(now),
        now,
    );
    let (page, remaining) = page_by_name(
        std::mem::take(&mut report.sites),
        |site| site.name.as_str(),
        after.as_deref(),
        limit,
    );
    let metadata = name_meta(remaining, page.last().map(|p| p.name.as_str()), |after| {
        Cursor::Incident {
            id: found.id(),
            after,
        }
    });
    if after.is_some() || remaining > 0 {
        // A page names only its own sites; `clustersTotal` counts them all.
        let on_page: std::collections::HashSet<&str> =
            page.iter().map(|p| p.name.as_str()).collect();
        let keep = |name: &String| on_page.contains(name.as_str());
        report
            .signals
            .retain(|sig| sig.signal.cluster.as_ref().is_some_and(keep));
        if let Some(c) = report.correlation.as_mut() {
            c.correlation.clusters_total = c.correlation.cluster_count();
            c.correlation.clusters.retain(keep);
        }
        if let Some(o) = report.outage.as_mut() {
            o.clusters_total = o.cluster_count();
            o.clusters.retain(keep);
        }
    }
    report.sites = page;
    Ok(slot.hold(json(&Paged {
        body: &report,
        metadata,
    })?))
}

async fn outages(State(s): State<ApiState>, uri: Uri) -> Result<Response, Answer> {
    Params::parse(OUTAGES, &[], &uri)?;
    let slot = s.slots.take().await?;
    Ok(slot.hold(json(&incidents(&s.view)?.outages)?))
}

/// The incidents report from the cache.
fn incidents(view: &FleetView) -> Result<render::IncidentsReport, ApiError> {
    let sites = cached(view, |_| true)?;
    let summary = view.summary().unwrap_or_default();
    let now = jiff::Timestamp::now();
    Ok(incidents_report(
        &sites,
        summary.correlations.clone(),
        summary.cascades.clone(),
        summary.outages.clone(),
        &view.hub_verdict(now),
        now,
    ))
}

async fn correlations(State(s): State<ApiState>, uri: Uri) -> Result<Response, Answer> {
    Params::parse(CORRELATIONS, &[], &uri)?;
    let slot = s.slots.take().await?;
    Ok(slot.hold(json(&incidents(&s.view)?.correlations)?))
}

async fn cascades(State(s): State<ApiState>, uri: Uri) -> Result<Response, Answer> {
    let params = Params::parse(CASCADES, &PAGING, &uri)?;
    let limit = params.limit()?;
    let cursor = params.cursor()?;
    let slot = s.slots.take().await?;
    let all = incidents(&s.view)?.cascades;
    if limit.is_none() && cursor.is_none() {
        return Ok(slot.hold(json(&all)?));
    }
    let version = list_version(all.iter().map(|c| c.cascade.id.as_str()));
    let (range, metadata) = page_by_offset(all.len(), &version, cursor, limit)?;
    Ok(slot.hold(json(&Items {
        items: &all[range],
        metadata,
    })?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_are_parsed_strictly() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer(&h), None);
        h.insert(header::AUTHORIZATION, "Bearer abc".parse().unwrap());
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(header::AUTHORIZATION, "bearer  abc ".parse().unwrap());
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert_eq!(bearer(&h), None);
        h.insert(header::AUTHORIZATION, "Bearer ".parse().unwrap());
        assert_eq!(bearer(&h), None);
    }

    #[test]
    fn refusals_map_to_401_403_429_500() {
        assert_eq!(Refused::NoToken.status(), StatusCode::UNAUTHORIZED);
        let invalid = Refused::InvalidToken { audience: None };
        assert_eq!(invalid.status(), StatusCode::UNAUTHORIZED);
        let f = Refused::Forbidden {
            user: "u".into(),
            access: READ_FLEET,
        };
        assert_eq!(f.status(), StatusCode::FORBIDDEN);
        let throttled = Refused::Throttled { retry_after: 2 };
        assert_eq!(throttled.status(), StatusCode::TOO_MANY_REQUESTS);
        let resp = throttled.into_response();
        assert_eq!(resp.headers()[header::RETRY_AFTER], "2");
        assert_eq!(
            Refused::ReviewFailed("TokenReview").status(),
            StatusCode::INTERNAL_SERVER_ERROR
        );
        let busy = Busy.into_response();
        assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(busy.headers()[header::RETRY_AFTER], "1");
    }

    #[test]
    fn refusals_say_what_to_grant_or_mint() {
        let metrics = Refused::Forbidden {
            user: "system:serviceaccount:monitoring:prometheus".into(),
            access: READ_METRICS,
        }
        .to_string();
        assert_eq!(
            metrics,
            "system:serviceaccount:monitoring:prometheus may not get /metrics: bind it to a \
             ClusterRole with nonResourceURLs [\"/metrics\"] and verbs [\"get\"] \
             (`kubectl fleet install --with-monitoring` creates fleet-operator-metrics-reader)"
        );
        let api = Refused::Forbidden {
            user: "jane".into(),
            access: READ_FLEET,
        }
        .to_string();
        assert_eq!(
            api,
            "jane may not list federatedclusters.federation.kubectl-fleet.dev: grant it with a \
             ClusterRole"
        );
        let aud = Refused::InvalidToken {
            audience: Some("fleet-operator".into()),
        }
        .to_string();
        assert!(
            aud.contains("kubectl create token NAME --audience fleet-operator"),
            "{aud}"
        );
    }

    /// Every route is behind the auth layer: without a bearer token each
    /// answers 401 before its handler runs (the cache is empty, so a
    /// handler would have answered 503).
    #[tokio::test]
    async fn every_route_refuses_a_caller_without_a_token() {
        use tower_service::Service as _;
        let config = kube::Config::new("https://127.0.0.1:9".parse().unwrap());
        let client = kube::Client::try_from(config).unwrap();
        let state = ApiState {
            view: Arc::new(FleetView::default()),
            auth: Arc::new(Auth::new(client, Vec::new())),
            slots: ResponseSlots::new(1),
        };
        let mut router = routes(state);
        for path in [
            "/api/v1/federation/status",
            "/api/v1/federation/clusters?tier=critical",
            "/api/v1/federation/clusters/site-a",
            "/api/v1/federation/correlations",
            "/api/v1/federation/cascades",
            "/api/v1/federation/outages",
            "/api/v1/federation/incidents/xc-12345678",
        ] {
            let request = axum::http::Request::get(path)
                .body(axum::body::Body::empty())
                .unwrap();
            std::future::poll_fn(|cx| {
                tower_service::Service::<axum::http::Request<axum::body::Body>>::poll_ready(
                    &mut router,
                    cx,
                )
            })
            .await
            .unwrap();
            let response = router.call(request).await.unwrap();
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{path}");
        }
    }

    #[tokio::test]
    async fn a_slot_is_held_by_its_response_and_busy_after_the_wait() {
        let slots = ResponseSlots {
            wait: Duration::from_millis(20),
            ..ResponseSlots::new(1)
        };
        let slot = slots.take().await.unwrap();
        let resp = slot.clone().hold("body".into_response());
        drop(slot);
        assert_eq!(slots.available(), 0, "the response holds it");
        assert_eq!(slots.take().await.unwrap_err(), Busy);
        drop(resp);
        assert_eq!(slots.available(), 1);
        assert!(slots.take().await.is_ok());
    }

    #[test]
    fn bad_filters_are_a_400_naming_the_choices() {
        let q = ClusterQuery {
            tier: Some("gold".into()),
            ..Default::default()
        };
        let r = q.filter().unwrap_err();
        assert_eq!(r.status, StatusCode::BAD_REQUEST);
        assert!(
            r.message.contains("critical, standard, non-critical"),
            "{}",
            r.message
        );
        let ok = ClusterQuery {
            tier: Some("critical".into()),
            phase: Some("Stale".into()),
            ..Default::default()
        };
        let f = ok.filter().unwrap();
        assert_eq!(f.tier, Some(crate::api::Tier::Critical));
        assert_eq!(f.phase, Some(crate::api::Phase::Stale));
        let long = ClusterQuery {
            version: Some("1".repeat(65)),
            ..Default::default()
        };
        assert_eq!(long.filter().unwrap_err().status, StatusCode::BAD_REQUEST);
        let v = ClusterQuery {
            version: Some("0.2.0".into()),
            ..Default::default()
        };
        assert_eq!(v.filter().unwrap().version.as_deref(), Some("0.2.0"));
    }

    #[test]
    fn incidents_are_found_by_id_or_refused_with_400_or_404() {
        let summary = crate::api::FederationStatusStatus {
            outages: vec![crate::api::GroupedOutage {
                id: "go-0000000b".into(),
                group_by: "region".into(),
                value: "eu-west-1".into(),
                clusters: vec!["a".into(), "b".into()],
                clusters_total: 2,
                since: crate::fleet::fixtures::ago(60),
                started_by: None,
                common_factors: Vec::new(),
            }],
            ..Default::default()
        };
        let found = find_incident(&summary, "go-0000000b").unwrap();
        assert_eq!(found.sites().len(), 2);
        assert_eq!(
            find_incident(&summary, "go-0000000c").unwrap_err().status,
            StatusCode::NOT_FOUND
        );
        let bad = find_incident(&summary, &"x".repeat(10_000)).unwrap_err();
        assert_eq!(bad.status, StatusCode::BAD_REQUEST);
        assert!(bad.message.len() < 400, "bounded: {}", bad.message);
    }
}
