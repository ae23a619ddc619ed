//! The edge role: runs on a member cluster, dials home and patches its own
//! site's status on the hub with the per-site credential.
//!
//! Each tick: re-read the hub kubeconfig if it changed on disk (a rotated
//! token takes effect without a restart), GET the own FederatedCluster (the
//! only site this identity may read) for `heartbeatIntervalSeconds`, read the
//! member cluster, and send ONE JSON merge patch of edge-owned keys holding
//! only what changed since the last accepted report. Errors back off with
//! jitter (never beyond one interval, so recovery is quick) and log one line
//! naming the cause and what to do; the edge never exits because the hub is
//! down. When less than half of the token's lifetime is left it mints a new
//! one for its own ServiceAccount and stores it where it reads it from.

use std::path::PathBuf;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value};
use tokio::sync::watch;

use crate::api::{FederatedCluster, FederatedClusterStatus, Signal};
use crate::fleet::status_patch::{SIGNAL_REFRESH, edge_owned, signals_to_report, status_patch};
use crate::k8s::edge_token::request_site_token;
use crate::k8s::member::{MemberError, read_member};
use crate::k8s::site_status::{get_site, patch_site_status, sites};
use crate::operator::collect::{edge_status, with_identity};
use crate::operator::credential::{CredentialError, HubKubeconfig};
use crate::render::safe::Untrusted;

/// Edge settings.
#[derive(Clone, Debug)]
pub struct EdgeConfig {
    /// The site this edge reports for.
    pub site: String,
    /// The hub kubeconfig (as printed by `kubectl fleet register`).
    pub hub_kubeconfig: PathBuf,
    /// Shift of the reported clock (tests and the demo simulate a skewed edge).
    pub clock_offset: SignedDuration,
    /// Multiplies the heartbeat interval (tests only; 1.0 in production).
    pub interval_scale: f64,
    /// Renew the token when less than half of its lifetime remains.
    pub auto_rotate: bool,
    /// The build version reported as `observedVersion`.
    pub version: String,
}

/// Why a tick failed, each with the line the user sees.
#[derive(Debug, thiserror::Error)]
pub enum EdgeError {
    /// The hub kubeconfig could not be used.
    #[error(transparent)]
    Credential(#[from] CredentialError),
    /// 401: the token expired or was revoked.
    #[error("hub rejected the site token (expired or revoked): run `kubectl fleet rotate {site}`")]
    Unauthorized { site: String },
    /// 403: the identity lacks a right it needs.
    #[error(
        "hub denied the site identity access (403) while {doing}: re-run `kubectl fleet register {site}` to restore its rights"
    )]
    Forbidden { site: String, doing: &'static str },
    /// 404: no FederatedCluster of that name.
    #[error("site {site} is not registered on the hub (404): run `kubectl fleet register {site}`")]
    NotRegistered { site: String },
    /// The hub could not be reached at all.
    #[error("hub unreachable at {url}: {cause}; retrying")]
    Unreachable { url: String, cause: String },
    /// Any other answer from the hub.
    #[error("hub answered {code} while {doing}: {message}")]
    Hub {
        code: u16,
        doing: &'static str,
        message: String,
    },
    /// The member cluster could not be read.
    #[error("reading the member cluster failed: {0}; reporting a heartbeat only")]
    Member(#[source] MemberError),
}

impl EdgeError {
    /// A short stable name of the cause, for logs and tests.
    pub fn cause_name(&self) -> &'static str {
        match self {
            EdgeError::Credential(_) => "credential",
            EdgeError::Unauthorized { .. } => "unauthorized",
            EdgeError::Forbidden { .. } => "forbidden",
            EdgeError::NotRegistered { .. } => "not-registered",
            EdgeError::Unreachable { .. } => "unreachable",
            EdgeError::Hub { .. } => "hub-error",
            EdgeError::Member(_) => "member",
        }
    }
}

/// Statistics of the reports sent (benchmarks and tests read them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EdgeStats {
    /// Reports the hub accepted.
    pub reports: u64,
    /// Of those, heartbeat-only ones.
    pub heartbeat_only: u64,
    /// Bytes of patch bodies sent (accepted ones).
    pub bytes_sent: u64,
    /// Bytes of the latest accepted patch body.
    pub last_patch_bytes: u64,
    /// Tokens renewed.
    pub rotations: u64,
}

/// What one tick did.
#[derive(Debug)]
pub struct Tick {
    /// The interval to wait before the next tick, from the site's spec
    /// (None: the site could not be read, so back off).
    pub interval: Option<Duration>,
    /// The patch body sent, if one was accepted.
    pub sent: Option<Value>,
    /// What went wrong, if anything (the member error still sends a heartbeat).
    pub error: Option<EdgeError>,
}

struct HubConn {
    /// The file as last read from disk.
    on_disk: HubKubeconfig,
    /// What the client uses: the file, or a renewed token kept in memory
    /// when the file could not be rewritten (read-only Secret mount).
    kubeconfig: HubKubeconfig,
    client: kube::Client,
    url: String,
}

/// The last report the hub accepted, per site object (a re-created site
/// starts from scratch).
struct Accepted {
    uid: Option<String>,
    status: Map<String, Value>,
}

/// One edge agent.
pub struct Edge {
    cfg: EdgeConfig,
    member: kube::Client,
    hub: Option<HubConn>,
    accepted: Option<Accepted>,
    history: Vec<Signal>,
    last_member: Option<FederatedClusterStatus>,
    /// The edge's clock (before `clock_offset`); injectable for tests.
    clock: super::hub::Clock,
    /// Counters.
    pub stats: EdgeStats,
}

fn api_code(err: &kube::Error) -> Option<u16> {
    match err {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}

/// The innermost cause of a transport error, without anything secret
/// (kube errors never carry the token).
fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = err;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

impl Edge {
    /// An edge for `cfg` reading its member cluster through `member`.
    pub fn new(cfg: EdgeConfig, member: kube::Client) -> Self {
        Self {
            cfg,
            member,
            hub: None,
            accepted: None,
            history: Vec::new(),
            last_member: None,
            clock: std::sync::Arc::new(Timestamp::now),
            stats: EdgeStats::default(),
        }
    }

    /// The same edge reading `clock` instead of the system clock (its
    /// heartbeats, signal times and token-renewal decisions).
    pub fn with_clock(mut self, clock: super::hub::Clock) -> Self {
        self.clock = clock;
        self
    }

    fn classify(&self, err: kube::Error, doing: &'static str) -> EdgeError {
        let site = self.cfg.site.clone();
        match api_code(&err) {
            Some(401) => EdgeError::Unauthorized { site },
            Some(403) => EdgeError::Forbidden { site, doing },
            Some(404) => EdgeError::NotRegistered { site },
            Some(code) => EdgeError::Hub {
                code,
                doing,
                message: match err {
                    kube::Error::Api(s) => s.message,
                    _ => String::new(),
                },
            },
            None => EdgeError::Unreachable {
                url: self.hub.as_ref().map(|h| h.url.clone()).unwrap_or_default(),
                cause: root_cause(&err),
            },
        }
    }

    /// Re-reads the hub kubeconfig; rebuilds the client when it changed.
    async fn refresh_hub(&mut self) -> Result<(), CredentialError> {
        let fresh = HubKubeconfig::read(&self.cfg.hub_kubeconfig)?;
        if self.hub.as_ref().is_some_and(|h| h.on_disk == fresh) {
            return Ok(());
        }
        let client = fresh.client().await?;
        let url = fresh.server().unwrap_or("the hub").to_owned();
        if self.hub.is_some() {
            tracing::info!(path = %fresh.path().display(), "hub kubeconfig changed on disk, using the new credential");
        }
        self.hub = Some(HubConn {
            on_disk: fresh.clone(),
            kubeconfig: fresh,
            client,
            url,
        });
        Ok(())
    }

    fn interval_of(&self, site: &FederatedCluster) -> Duration {
        let i = site.heartbeat_interval();
        let s = self.cfg.interval_scale;
        if s.is_finite() && s > 0.0 && (s - 1.0).abs() > f64::EPSILON {
            i.mul_f64(s)
        } else {
            i
        }
    }

    /// The edge-owned status to report now.
    async fn observe_member(
        &mut self,
        now: Timestamp,
    ) -> (FederatedClusterStatus, Option<EdgeError>) {
        match read_member(&self.member).await {
            Ok(objs) => {
                let status = edge_status(&objs, &self.history, now);
                self.history = status.signals.clone().unwrap_or_default();
                self.last_member = Some(status.clone());
                (status, None)
            }
            // Keep reporting what was last known: the edge is alive even if
            // its own API server is not answering.
            Err(e) => (
                self.last_member.clone().unwrap_or_default(),
                Some(EdgeError::Member(e)),
            ),
        }
    }

    /// One report. Never panics, never exits: every failure is returned in
    /// [`Tick::error`] for the caller to log and back off on.
    pub async fn tick(&mut self) -> Tick {
        if let Err(e) = self.refresh_hub().await {
            return Tick {
                interval: None,
                sent: None,
                error: Some(e.into()),
            };
        }
        let hub = self.hub.as_ref().expect("refreshed above");
        let api = sites(hub.client.clone());
        let site = match get_site(&api, &self.cfg.site).await {
            Ok(s) => s,
            Err(e) => {
                return Tick {
                    interval: None,
                    sent: None,
                    error: Some(self.classify(e, "reading its own site")),
                };
            }
        };
        let interval = self.interval_of(&site);
        // Whole seconds, as on the wire, so the report compares equal to
        // what the hub holds.
        let clock_now = (self.clock)();
        let now = Timestamp::from_second(clock_now.as_second()).unwrap_or(clock_now);
        let (member, member_err) = self.observe_member(now).await;
        let hub = self.hub.as_ref().expect("refreshed above");
        let claims = hub.kubeconfig.claims();
        let mut status = with_identity(
            member,
            now + self.cfg.clock_offset,
            &self.cfg.version,
            claims.as_ref().and_then(|c| c.expires_at),
        );
        let uid = site.metadata.uid.clone();
        // The baseline is the last accepted report for this very object; a
        // new edge process (or a re-created site) starts from what the hub holds.
        if self.accepted.as_ref().is_none_or(|a| a.uid != uid) {
            let held = site
                .status
                .as_ref()
                .and_then(|s| serde_json::to_value(s).ok())
                .and_then(|v| v.as_object().cloned())
                .unwrap_or_default();
            self.accepted = Some(Accepted {
                uid: uid.clone(),
                status: edge_owned(&held),
            });
        }
        let baseline = self.accepted.as_ref().map(|a| &a.status);
        let accepted_signals: Option<Vec<Signal>> = baseline
            .and_then(|b| b.get("signals"))
            .and_then(|v| serde_json::from_value(v.clone()).ok());
        status.signals = Some(signals_to_report(
            accepted_signals.as_deref(),
            status.signals.as_deref().unwrap_or_default(),
            now,
            SIGNAL_REFRESH,
        ));
        let next = match serde_json::to_value(&status) {
            Ok(Value::Object(m)) => edge_owned(&m),
            _ => Map::new(),
        };
        let patch = status_patch(baseline, &next);
        match patch_site_status(&api, &self.cfg.site, &patch).await {
            Ok(_) => {
                let bytes = serde_json::to_vec(&patch).map(|b| b.len()).unwrap_or(0) as u64;
                self.stats.reports += 1;
                self.stats.bytes_sent += bytes;
                self.stats.last_patch_bytes = bytes;
                if patch["status"].as_object().is_some_and(|m| m.len() == 1) {
                    self.stats.heartbeat_only += 1;
                }
                self.accepted = Some(Accepted { uid, status: next });
                let rotate_err = self.maybe_rotate().await.err();
                Tick {
                    interval: Some(interval),
                    sent: Some(patch),
                    error: member_err.or(rotate_err),
                }
            }
            Err(e) => Tick {
                interval: Some(interval),
                sent: None,
                error: Some(self.classify(e, "patching its own status")),
            },
        }
    }

    /// Renews the token when less than half of its lifetime remains.
    async fn maybe_rotate(&mut self) -> Result<(), EdgeError> {
        if !self.cfg.auto_rotate {
            return Ok(());
        }
        let Some(hub) = self.hub.as_ref() else {
            return Ok(());
        };
        let Some(claims) = hub.kubeconfig.claims() else {
            return Ok(());
        };
        if !claims.needs_rotation((self.clock)()) {
            return Ok(());
        }
        let Some(lifetime) = claims.lifetime() else {
            return Ok(());
        };
        let minted = request_site_token(
            &hub.client,
            &self.cfg.site,
            lifetime.as_secs() as i64,
            claims.audiences.clone(),
        )
        .await
        .map_err(|e| match e {
            crate::k8s::edge_token::TokenError::Request(e) => {
                self.classify(e, "renewing its own token")
            }
            empty => EdgeError::Hub {
                code: 200,
                doing: "renewing its own token",
                message: empty.to_string(),
            },
        })?;
        self.stats.rotations += 1;
        match hub.kubeconfig.store_token(&minted.token) {
            Ok(stored) => {
                tracing::info!(
                    site = %self.cfg.site,
                    expires = %minted.expires_at,
                    path = %stored.path().display(),
                    "renewed the site token"
                );
                // The next tick re-reads the file and switches to the new token.
                Ok(())
            }
            Err(e) => {
                // A read-only mount (a Secret volume): use the new token from
                // memory; a restart falls back to the file's token.
                let in_memory = hub.kubeconfig.with_token(&minted.token)?;
                let client = in_memory.client().await?;
                tracing::warn!(
                    site = %self.cfg.site,
                    expires = %minted.expires_at,
                    error = %e,
                    cause = %super::source_chain(&e),
                    "renewed the site token but could not store it; using it from memory until restart \
                     (mount the hub kubeconfig writable, or update its Secret with `kubectl fleet rotate {}`)",
                    self.cfg.site
                );
                if let Some(h) = self.hub.as_mut() {
                    h.kubeconfig = in_memory;
                    h.client = client;
                }
                Ok(())
            }
        }
    }
}

/// Backoff after `failures` consecutive failed ticks: doubling from 1 s,
/// never beyond `cap` (one heartbeat interval), with ±20 % jitter.
pub fn backoff(failures: u32, cap: Duration) -> Duration {
    let base = Duration::from_secs(1u64 << failures.min(10)).min(cap);
    super::jitter(base.mul_f64(0.8), base.mul_f64(0.4))
}

/// Runs the edge until `shutdown` turns true.
pub async fn run(mut edge: Edge, mut shutdown: watch::Receiver<bool>) {
    let mut failures = 0u32;
    let mut last_interval =
        Duration::from_secs(crate::api::DEFAULT_HEARTBEAT_INTERVAL_SECONDS as u64);
    loop {
        let started = tokio::time::Instant::now();
        let tick = tokio::select! {
            t = edge.tick() => t,
            _ = shutdown.wait_for(|s| *s) => break,
        };
        if let Some(i) = tick.interval {
            last_interval = i;
        }
        let wait = match (&tick.sent, &tick.error) {
            (Some(_), err) => {
                if let Some(e) = err {
                    tracing::warn!(site = %edge.cfg.site, cause = e.cause_name(), "{}", Untrusted(e));
                }
                if failures > 0 {
                    tracing::info!(site = %edge.cfg.site, "reporting to the hub again");
                }
                failures = 0;
                last_interval.saturating_sub(started.elapsed())
            }
            (None, Some(e)) => {
                tracing::warn!(site = %edge.cfg.site, cause = e.cause_name(), "{}", Untrusted(e));
                failures = failures.saturating_add(1);
                backoff(failures, last_interval)
            }
            (None, None) => last_interval,
        };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = shutdown.wait_for(|s| *s) => break,
        }
    }
    tracing::info!(
        site = %edge.cfg.site,
        reports = edge.stats.reports,
        heartbeat_only = edge.stats.heartbeat_only,
        bytes = edge.stats.bytes_sent,
        "edge stopped"
    );
}
