//! The hub's read-only REST API (docs/observability.md) and the Kubernetes-native
//! authentication in front of it and of `/metrics`.
//!
//! Routes, all `GET`, JSON from the hub's cache ([`FleetView`]) with the
//! same types and serializer as the CLI (`crate::render`):
//!
//! | route | body |
//! | --- | --- |
//! | `/api/v1/federation/status` | `summary` of `kubectl fleet status -o json` |
//! | `/api/v1/federation/clusters?tier=&environment=&region=&phase=` | `kubectl fleet status -o json` (same filters) |
//! | `/api/v1/federation/clusters/{name}` | one entry of its `sites` |
//! | `/api/v1/federation/correlations` | `correlations` of `kubectl fleet incidents -o json` |
//! | `/api/v1/federation/cascades` | `cascades` of `kubectl fleet incidents -o json` |
//!
//! Auth ([`Auth`]): bearer token → TokenReview (cached by the token's
//! SHA-256 for [`TOKEN_TTL`]) → SubjectAccessReview `list
//! federatedclusters.federation.kubectl-fleet.dev` (allow cached for
//! [`ALLOW_TTL`], deny for [`DENY_TTL`]). No or invalid token: 401; not
//! allowed: 403; a review that fails: 500, never open. Tokens are never
//! logged.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use k8s_openapi::api::authentication::v1::UserInfo;
use serde::Deserialize;
use sha2::{Digest as _, Sha256};

use super::federation::FleetView;
use crate::api::{Environment, FederatedCluster, Phase, Tier};
use crate::fleet::filter::SiteFilter;
use crate::k8s::reviews::{review_token, user_can};
use crate::render::{self, incidents_report, status_report};

/// How long a TokenReview answer (valid or not) is reused.
pub const TOKEN_TTL: Duration = Duration::from_secs(10);
/// How long an allowing SubjectAccessReview answer is reused.
pub const ALLOW_TTL: Duration = Duration::from_secs(60);
/// How long a denying SubjectAccessReview answer is reused.
pub const DENY_TTL: Duration = Duration::from_secs(10);
/// Cached answers kept at most (per cache); expired ones go first.
const MAX_CACHED: usize = 4096;

/// What the API checks a caller for (the design's `list federatedclusters`).
const VERB: &str = "list";
const GROUP: &str = crate::api::GROUP;
const RESOURCE: &str = "federatedclusters";

/// Why a request was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Refused {
    /// No bearer token in the request.
    #[error(
        "no bearer token: send `Authorization: Bearer TOKEN` (e.g. `kubectl create token NAME`)"
    )]
    NoToken,
    /// The API server did not accept the token.
    #[error("the bearer token is not valid (unknown, expired or revoked): get a fresh one")]
    InvalidToken,
    /// The user may not list FederatedClusters.
    #[error(
        "{user} may not list federatedclusters.federation.kubectl-fleet.dev: grant it with a ClusterRole"
    )]
    Forbidden { user: String },
    /// A TokenReview or SubjectAccessReview could not be made.
    #[error("could not check the caller with the API server ({0}); try again")]
    ReviewFailed(&'static str),
}

impl Refused {
    fn status(&self) -> StatusCode {
        match self {
            Refused::NoToken | Refused::InvalidToken => StatusCode::UNAUTHORIZED,
            Refused::Forbidden { .. } => StatusCode::FORBIDDEN,
            Refused::ReviewFailed(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let mut resp = error_response(self.status(), &self.to_string());
        if self.status() == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
        }
        resp
    }
}

/// A JSON error body `{"code": N, "message": "..."}` (JSON escapes any
/// control characters of echoed input; echoed input is also cut short).
pub fn error_response(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({ "code": status.as_u16(), "message": message });
    (status, axum::Json(body)).into_response()
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

/// What a route answers: JSON, or an error (the caller refused included).
pub enum Answer {
    /// The caller was refused.
    Refused(Refused),
    /// Another error.
    Error(ApiError),
}

impl From<Refused> for Answer {
    fn from(r: Refused) -> Self {
        Answer::Refused(r)
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
            Answer::Refused(r) => r.into_response(),
            Answer::Error(e) => e.into_response(),
        }
    }
}

type Digest = [u8; 32];

struct Cached<T> {
    value: T,
    until: Instant,
}

fn lookup<T: Clone>(cache: &Mutex<HashMap<Digest, Cached<T>>>, key: &Digest) -> Option<T> {
    let cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    cache
        .get(key)
        .filter(|c| c.until > Instant::now())
        .map(|c| c.value.clone())
}

fn remember<T>(cache: &Mutex<HashMap<Digest, Cached<T>>>, key: Digest, value: T, ttl: Duration) {
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    if cache.len() >= MAX_CACHED {
        let now = Instant::now();
        cache.retain(|_, c| c.until > now);
        if cache.len() >= MAX_CACHED {
            cache.clear();
        }
    }
    cache.insert(
        key,
        Cached {
            value,
            until: Instant::now() + ttl,
        },
    );
}

/// Bearer-token authentication and `list federatedclusters` authorization
/// against the hub's API server, with short-lived caches keyed on a hash of
/// the token (the token itself is never stored).
pub struct Auth {
    client: kube::Client,
    users: Mutex<HashMap<Digest, Cached<Option<Arc<UserInfo>>>>>,
    decisions: Mutex<HashMap<Digest, Cached<bool>>>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth").finish_non_exhaustive()
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
    /// Checks callers with the API server behind `client`.
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            users: Mutex::new(HashMap::new()),
            decisions: Mutex::new(HashMap::new()),
        }
    }

    /// Whether the request's caller may read the fleet.
    pub async fn check(&self, headers: &HeaderMap) -> Result<(), Refused> {
        let token = bearer(headers).ok_or(Refused::NoToken)?;
        let key: Digest = Sha256::digest(token.as_bytes()).into();
        let user = match lookup(&self.users, &key) {
            Some(u) => u,
            None => {
                let u = review_token(&self.client, token)
                    .await
                    .map_err(|e| review_failed("TokenReview", &e))?
                    .map(Arc::new);
                remember(&self.users, key, u.clone(), TOKEN_TTL);
                u
            }
        };
        let user = user.ok_or(Refused::InvalidToken)?;
        let allowed = match lookup(&self.decisions, &key) {
            Some(a) => a,
            None => {
                let a = user_can(&self.client, &user, VERB, GROUP, RESOURCE)
                    .await
                    .map_err(|e| review_failed("SubjectAccessReview", &e))?;
                remember(
                    &self.decisions,
                    key,
                    a,
                    if a { ALLOW_TTL } else { DENY_TTL },
                );
                a
            }
        };
        if allowed {
            Ok(())
        } else {
            Err(Refused::Forbidden {
                user: user
                    .username
                    .clone()
                    .unwrap_or_else(|| "the caller".to_owned()),
            })
        }
    }
}

fn review_failed(what: &'static str, err: &kube::Error) -> Refused {
    tracing::warn!(review = what, error = %err, "could not check an API caller");
    Refused::ReviewFailed(what)
}

/// State of the API routes.
#[derive(Clone, Debug)]
pub struct ApiState {
    /// The hub's cache.
    pub view: Arc<FleetView>,
    /// Who may read.
    pub auth: Arc<Auth>,
}

/// The `/api/v1/federation` routes.
pub fn routes(state: ApiState) -> Router {
    Router::new()
        .route("/api/v1/federation/status", get(status))
        .route("/api/v1/federation/clusters", get(clusters))
        .route("/api/v1/federation/clusters/{name}", get(cluster))
        .route("/api/v1/federation/correlations", get(correlations))
        .route("/api/v1/federation/cascades", get(cascades))
        .with_state(state)
}

/// The query of `/clusters`.
#[derive(Debug, Default, Deserialize)]
pub struct ClusterQuery {
    tier: Option<String>,
    environment: Option<String>,
    region: Option<String>,
    phase: Option<String>,
}

fn wire<T: Copy>(
    key: &str,
    value: Option<&str>,
    all: &[T],
    name: fn(T) -> &'static str,
) -> Result<Option<T>, ApiError> {
    let Some(v) = value else { return Ok(None) };
    all.iter()
        .copied()
        .find(|t| name(*t) == v)
        .map(Some)
        .ok_or_else(|| {
            let valid: Vec<&str> = all.iter().map(|t| name(*t)).collect();
            ApiError::new(
                StatusCode::BAD_REQUEST,
                format!(
                    "invalid {key} {:?}: use one of {}",
                    v.chars().take(64).collect::<String>(),
                    valid.join(", ")
                ),
            )
        })
}

impl ClusterQuery {
    /// The filter this query asks for, or a 400 naming the bad parameter.
    pub fn filter(&self) -> Result<SiteFilter, ApiError> {
        Ok(SiteFilter {
            names: Vec::new(),
            tier: wire("tier", self.tier.as_deref(), Tier::ALL, Tier::as_str)?,
            environment: wire(
                "environment",
                self.environment.as_deref(),
                Environment::ALL,
                Environment::as_str,
            )?,
            region: self.region.clone(),
            phase: wire("phase", self.phase.as_deref(), Phase::ALL, Phase::as_str)?,
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

async fn status(State(s): State<ApiState>, headers: HeaderMap) -> Result<Response, Answer> {
    s.auth.check(&headers).await?;
    let sites = cached(&s.view, |_| true)?;
    let now = jiff::Timestamp::now();
    json(&status_report(&sites, &s.view.hub_verdict(now), now).summary)
}

async fn clusters(
    State(s): State<ApiState>,
    headers: HeaderMap,
    query: Result<Query<ClusterQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, Answer> {
    s.auth.check(&headers).await?;
    let Ok(Query(query)) = query else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid query: use tier, environment, region and phase",
        )
        .into());
    };
    let filter = query.filter()?;
    let now = jiff::Timestamp::now();
    let hub = s.view.hub_verdict(now);
    let sites = cached(&s.view, |site| filter.matches(site, hub.judging(), now))?;
    json(&status_report(&sites, &hub, now))
}

async fn cluster(
    State(s): State<ApiState>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Result<Response, Answer> {
    s.auth.check(&headers).await?;
    let sites = cached(&s.view, |site| site.site_name() == name)?;
    let now = jiff::Timestamp::now();
    match status_report(&sites, &s.view.hub_verdict(now), now)
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

/// The incidents report from the cache.
fn incidents(view: &FleetView) -> Result<render::IncidentsReport, ApiError> {
    let sites = cached(view, |_| true)?;
    let summary = view.summary().unwrap_or_default();
    let now = jiff::Timestamp::now();
    Ok(incidents_report(
        &sites,
        summary.correlations,
        summary.cascades,
        &view.hub_verdict(now),
        now,
    ))
}

async fn correlations(State(s): State<ApiState>, headers: HeaderMap) -> Result<Response, Answer> {
    s.auth.check(&headers).await?;
    json(&incidents(&s.view)?.correlations)
}

async fn cascades(State(s): State<ApiState>, headers: HeaderMap) -> Result<Response, Answer> {
    s.auth.check(&headers).await?;
    json(&incidents(&s.view)?.cascades)
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
    fn refusals_map_to_401_403_500() {
        assert_eq!(Refused::NoToken.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(Refused::InvalidToken.status(), StatusCode::UNAUTHORIZED);
        let f = Refused::Forbidden { user: "u".into() };
        assert_eq!(f.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            Refused::ReviewFailed("TokenReview").status(),
            StatusCode::INTERNAL_SERVER_ERROR
        );
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
        assert_eq!(f.tier, Some(Tier::Critical));
        assert_eq!(f.phase, Some(Phase::Stale));
    }
}
