//! The edge role: runs on a member cluster, dials home and patches its own
//! site's status on the hub with the per-site credential.
//!
//! Each tick: re-read the hub kubeconfig if it changed on disk (a rotated
//! token takes effect without a restart), GET the own FederatedCluster (the
//! only site this identity may read) for `heartbeatIntervalSeconds`, read the
//! member cluster, and send ONE JSON merge patch of edge-owned keys holding
//! only what changed since the last accepted report; the previous report's
//! round trip goes with it (`lastReportDurationMilliseconds`, rounded up to
//! the hub's health-check bucket so a steady link keeps heartbeat-only
//! patches), which the hub observes as the site's health check. A report
//! with nothing but the heartbeat is no status write: the edge renews its
//! site's `FederatedClusterLease` instead, so the status is written only
//! when what the edge reports changes; a site without a lease (or a right
//! to it) is reported through its status as before (`lease`). Reports
//! follow each other one interval apart, less up to 5 % at random
//! ([`next_report_in`]), so edges started together drift apart. Errors back off with
//! jitter (never beyond one interval, so recovery is quick) and log one line
//! naming the cause and what to do — once per transient cause (hub
//! unreachable, hub errors), the retries at debug level, then one line when
//! reports are accepted again; the edge never exits because the hub is
//! down. When less than half of the token's lifetime is left it mints a new
//! one for its own ServiceAccount and persists it where its next start finds
//! it: the hub kubeconfig Secret on the member cluster when it was given one
//! (`--hub-kubeconfig-secret`; the mounted file catches up later, and the
//! new token is used from memory until then), else the file it reads. The
//! expiry it reports is that of the credential a restart would use.
//!
//! Every report names the member cluster it was read from (`status.member`,
//! the UID of its `kube-system` namespace). An edge whose member is the hub
//! itself — the hub's kubeconfig still in `KUBECONFIG`, or the edge
//! installed on the hub — would report the hub's inventory as the site's:
//! it refuses to report unless run with `--member-is-hub`. It tells by
//! asking its member API server whether it accepts the site's hub token
//! ([`member_is_hub`]; no extra right on either cluster,
//! docs/operations.md#an-edge-that-reads-the-wrong-cluster). When the hub holds a
//! report of another member for the site, another writer reported in
//! between (a second edge for one site): the edge logs it once and sends
//! its whole report again rather than only what changed since its own
//! last one, so the hub's copy is never a mix of two clusters and the hub
//! sees the member alternate (`MemberChanged`).
//!
//! While no report reaches the hub, the edge keeps a journal of what its
//! member shows (`fleet::journal`: nodes leaving and regaining Ready,
//! failures beginning and ending, its own restarts, the hub's refusals) in
//! a ConfigMap on the member (`--journal-configmap`, `k8s::journal`),
//! written only while dark; the first report that reaches the hub again
//! carries its summary (`status.lastDarkPeriod`), and the journal starts
//! again (docs/operations.md#dark-periods-explained-afterwards).

mod error;
mod lease;
mod reading;
use reading::Reading;

pub use error::EdgeError;
pub use lease::{Fallback, LEASE_RETRY_HEARTBEATS};

use std::path::PathBuf;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use serde_json::Value;
use tokio::sync::watch;

use crate::api::{EdgeStatus, FederatedCluster};
use crate::fleet::journal::{Journal, node_readiness};
use crate::fleet::rbac::MIN_TOKEN_TTL;
use crate::fleet::signals::SignalHistory;
use crate::fleet::status_patch::{Accepted, report_patch};
use crate::k8s::edge_token::{SecretName, request_site_token, store_hub_kubeconfig};
use crate::k8s::journal::{Read as JournalRead, read_journal, write_journal};
use crate::k8s::member::{MemberError, MemberObjects, accepts_token};
use crate::k8s::site_status::{get_site, patch_site_status, sites};
use crate::k8s::{readable, root_cause, source_chain, status_code};
use crate::operator::collect::{edge_status, with_identity};
use crate::operator::credential::{CredentialError, HubKubeconfig};
use crate::render::safe::Untrusted;

/// Why a call to the member cluster was given up ([`Edge::member_limit`]).
fn member_late(limit: Duration) -> String {
    format!("the member cluster did not answer within {limit:?}")
}

/// Edge settings.
#[derive(Clone, Debug)]
pub struct EdgeConfig {
    /// The site this edge reports for.
    pub site: String,
    /// The hub kubeconfig (as printed by `kubectl fleet register`).
    pub hub_kubeconfig: PathBuf,
    /// The member Secret the hub kubeconfig is mounted from, where a renewed
    /// token is persisted (None: rewrite the file itself).
    pub hub_kubeconfig_secret: Option<SecretName>,
    /// The member ConfigMap keeping the dark-period journal across restarts
    /// (None: kept in memory only).
    pub journal: Option<SecretName>,
    /// Shift of the reported clock (tests and the demo simulate a skewed edge).
    pub clock_offset: SignedDuration,
    /// Multiplies the heartbeat interval (tests only; 1.0 in production).
    pub interval_scale: f64,
    /// Renew the token when less than half of its lifetime remains.
    pub auto_rotate: bool,
    /// The build version reported as `observedVersion`.
    pub version: String,
}

/// Statistics of the reports sent (benchmarks and tests read them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EdgeStats {
    /// Status patches the hub accepted.
    pub reports: u64,
    /// Of those, heartbeat-only ones (sent while the lease cannot be
    /// renewed, `lease::Fallback`).
    pub heartbeat_only: u64,
    /// Lease renewals the hub accepted (heartbeats that wrote no status).
    pub renewals: u64,
    /// Bytes of patch bodies sent (accepted ones: status patches and
    /// lease renewals).
    pub bytes_sent: u64,
    /// Bytes of the latest accepted patch body.
    pub last_patch_bytes: u64,
    /// What the latest accepted body was.
    pub last_sent: Option<Sent>,
    /// Tokens renewed.
    pub rotations: u64,
}

/// What an accepted body was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sent {
    /// A status patch carrying a change.
    Report,
    /// A status patch carrying the heartbeat alone (the lease's fallback).
    StatusHeartbeat,
    /// A lease renewal.
    Renewal,
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
    /// until the file catches up (a Secret mount) or for good (a read-only
    /// file and no Secret to persist it in).
    kubeconfig: HubKubeconfig,
    /// What a restart would use: the file, or the member Secret once the
    /// renewed token is stored there. Its expiry is the one reported.
    durable: HubKubeconfig,
    client: kube::Client,
    url: String,
}

/// Whether the edge's member cluster is the hub (see [`member_is_hub`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemberCheck {
    /// The member does not accept the site's hub token: another cluster.
    NotTheHub,
    /// The member accepts the site's hub token: it is the hub.
    IsTheHub,
    /// `--member-is-hub`: the site is the hub's own cluster, on purpose.
    ToldItIsTheHub,
    /// Not known yet (the member did not answer, or the hub kubeconfig has
    /// no token to ask with): asked again before each report.
    Unknown(String),
}

/// How long asking the member whether it is the hub may take.
const MEMBER_CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether the member cluster reached with `member` is the hub of
/// `hub_kubeconfig`: it is when the member's API server authenticates the
/// site's hub token (an access review sent with that token, which any
/// authenticated identity may create, answers instead of 401). Only the
/// hub, or a cluster sharing its ServiceAccount signing key, does. The
/// token goes only to the member's own API server, which already holds it
/// (the hub kubeconfig is in a Secret or file on the member).
pub async fn member_is_hub(member: &kube::Config, hub_kubeconfig: &HubKubeconfig) -> MemberCheck {
    let Some(token) = hub_kubeconfig.token() else {
        return MemberCheck::Unknown(
            "the hub kubeconfig holds no token to ask the member with".to_owned(),
        );
    };
    match tokio::time::timeout(MEMBER_CHECK_TIMEOUT, accepts_token(member, token)).await {
        Ok(Ok(true)) => MemberCheck::IsTheHub,
        Ok(Ok(false)) => MemberCheck::NotTheHub,
        Ok(Err(e)) => MemberCheck::Unknown(e.to_string()),
        Err(_) => MemberCheck::Unknown(format!(
            "the member did not answer within {}s",
            MEMBER_CHECK_TIMEOUT.as_secs()
        )),
    }
}

/// One edge agent.
pub struct Edge {
    cfg: EdgeConfig,
    member: kube::Client,
    hub: Option<HubConn>,
    accepted: Option<Accepted>,
    /// The previous signal report (carries `firstSeen` and `count`; from
    /// the hub when this process starts).
    history: SignalHistory,
    last_member: Option<EdgeStatus>,
    /// How long the previous accepted report took (its status write's
    /// round trip), as reported with the next one
    /// (`lastReportDurationMilliseconds`, see [`super::metrics::report_duration_ms`]).
    last_report_ms: Option<i64>,
    /// The edge's clock (before `clock_offset`); injectable for tests.
    clock: super::clock::Clock,
    /// Counters.
    pub stats: EdgeStats,
    metrics: Option<std::sync::Arc<super::metrics::Metrics>>,
    /// Whether the member is the hub, and the member configuration to ask
    /// again with while that is unknown.
    member_check: MemberCheck,
    member_config: Option<kube::Config>,
    /// The other member the hub last held a report of for this site
    /// (logged once per value).
    foreign_member: Option<String>,
    /// Its lease, or why it heartbeats through its status (`lease`).
    lease: lease::LeaseState,
    /// When (edge clock) the hub first answered a 404 for the fleet's API
    /// itself since it last accepted a report: see [`NOT_SERVED_PATIENCE`].
    unserved_since: Option<Timestamp>,
    /// The dark-period journal (`fleet::journal`).
    journal: Journal,
    /// Its copy on the member cluster.
    journal_store: JournalStore,
    /// The site's heartbeat interval as last read (scaled): a call to the
    /// member may take half of it ([`Edge::member_limit`]).
    interval: Duration,
    /// A reading of the member given up on for the last report, kept to
    /// serve the next one ([`Reading`]). In a mutex only to keep `Edge`
    /// `Sync` (a boxed future is not); only ever reached through `&mut`.
    reading: std::sync::Mutex<Option<Reading>>,
}

/// What the edge knows of its journal's copy on the member cluster.
#[derive(Debug, Default)]
struct JournalStore {
    /// Read at start (or found missing, or refused: memory only).
    loaded: bool,
    /// What it holds as last read or written.
    written: Option<Journal>,
    /// The cause of the latest failure to read or write it (logged once).
    failing: Option<String>,
}

impl Edge {
    /// An edge for `cfg` reading its member cluster through `member`.
    pub fn new(cfg: EdgeConfig, member: kube::Client) -> Self {
        Self {
            member,
            hub: None,
            accepted: None,
            history: SignalHistory::default(),
            last_member: None,
            last_report_ms: None,
            clock: std::sync::Arc::new(Timestamp::now),
            stats: EdgeStats::default(),
            metrics: None,
            member_check: MemberCheck::NotTheHub,
            member_config: None,
            foreign_member: None,
            lease: lease::LeaseState::default(),
            unserved_since: None,
            journal: Journal::default(),
            journal_store: JournalStore::default(),
            interval: super::clock::scaled(
                Duration::from_secs(crate::api::DEFAULT_HEARTBEAT_INTERVAL_SECONDS as u64),
                cfg.interval_scale,
            ),
            reading: std::sync::Mutex::new(None),
            cfg,
        }
    }

    /// The same edge knowing what [`member_is_hub`] found at start; while
    /// it is unknown, it asks again through `member` before each report
    /// and sends none once the member turns out to be the hub.
    pub fn with_member_check(mut self, check: MemberCheck, member: kube::Config) -> Self {
        if let MemberCheck::Unknown(why) = &check {
            tracing::warn!(site = %self.cfg.site, cause = %Untrusted(why), "could not tell whether the member cluster is the hub; asking again before each report");
        }
        self.member_check = check;
        self.member_config = Some(member);
        self
    }

    /// Asks again whether the member is the hub while that is unknown;
    /// an error when it is (the tick then sends nothing).
    async fn check_member(&mut self) -> Result<(), EdgeError> {
        if let (MemberCheck::Unknown(_), Some(config), Some(hub)) =
            (&self.member_check, &self.member_config, &self.hub)
        {
            let check = member_is_hub(config, &hub.kubeconfig).await;
            if check == MemberCheck::NotTheHub {
                tracing::info!(site = %self.cfg.site, "the member cluster is not the hub");
            }
            if !matches!(check, MemberCheck::Unknown(_)) {
                self.member_check = check;
            }
        }
        match &self.member_check {
            MemberCheck::IsTheHub => Err(EdgeError::MemberIsHub {
                site: self.cfg.site.clone(),
                member: self
                    .member_config
                    .as_ref()
                    .map(|c| c.cluster_url.to_string())
                    .unwrap_or_default(),
            }),
            _ => Ok(()),
        }
    }

    /// Notes the member the hub holds a report of for `site` when it is
    /// not the one this edge reads: another writer reported in between.
    /// Returns whether that is so (the report is then sent in full).
    fn other_member_reported(&mut self, site: &FederatedCluster, ours: Option<&str>) -> bool {
        let held = site.status.as_ref().and_then(|s| s.member.as_deref());
        let (Some(held), Some(ours)) = (held, ours) else {
            return false;
        };
        if held == ours {
            self.foreign_member = None;
            return false;
        }
        if self.foreign_member.as_deref() != Some(held) {
            tracing::warn!(
                site = %self.cfg.site,
                reported = %Untrusted(held),
                reads = %ours,
                "the hub holds a report for this site from another member cluster (kube-system UID): another edge reports \
                 for this site, or the site was moved; stop the edge that reads the wrong cluster (each edge logs the member it reads)"
            );
            self.foreign_member = Some(held.to_owned());
        }
        true
    }

    /// The same edge recording each tick into `metrics`.
    pub fn with_metrics(mut self, metrics: std::sync::Arc<super::metrics::Metrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Records what one tick did: the report and its size, the failure's
    /// cause, and the credential's expiry.
    fn record(&self, tick: &Tick) {
        let Some(m) = &self.metrics else { return };
        match (tick.sent.is_some(), self.stats.last_sent) {
            (true, Some(Sent::Renewal)) => m.lease_renewed(),
            (true, _) => m.report_sent(self.stats.last_patch_bytes),
            (false, _) => {}
        }
        if let Some(e) = &tick.error {
            m.report_failed(e.cause_name());
        }
        let expires = self
            .hub
            .as_ref()
            .and_then(|h| h.kubeconfig.claims())
            .and_then(|c| c.expires_at);
        m.set_credential_expiry(expires.map_or(0, |t| t.as_second()));
    }

    /// The same edge reading `clock` instead of the system clock (its
    /// heartbeats, signal times and token-renewal decisions).
    pub fn with_clock(mut self, clock: super::clock::Clock) -> Self {
        self.clock = clock;
        self
    }

    fn classify(&self, err: kube::Error, doing: &'static str) -> EdgeError {
        let site = self.cfg.site.clone();
        match status_code(&err) {
            // The token's own expiry tells an expired token from a revoked one.
            Some(401) => match self
                .hub
                .as_ref()
                .and_then(|h| h.kubeconfig.claims())
                .and_then(|c| c.expires_at)
            {
                Some(at) if at <= (self.clock)() => EdgeError::Expired { site, at },
                _ => EdgeError::Unauthorized { site },
            },
            Some(403) => match self
                .hub
                .as_ref()
                .and_then(|h| h.kubeconfig.claims())
                .and_then(|c| c.site().map(str::to_owned))
            {
                Some(owner) if owner != site => EdgeError::WrongSite { site, owner },
                _ => EdgeError::Forbidden { site, doing },
            },
            // The object missing names it; the API missing does not.
            Some(404) if crate::k8s::is_missing_object(&err, &site) => {
                EdgeError::NotRegistered { site }
            }
            Some(404) => EdgeError::CrdMissing {
                crd: if doing == lease::RENEWING {
                    super::build::LEASE_CRD_NAME
                } else {
                    super::build::CRD_NAME
                },
            },
            Some(code) => EdgeError::Hub {
                code,
                doing,
                message: match err {
                    kube::Error::Api(s) => s.message,
                    _ => String::new(),
                },
            },
            None => {
                let url = self.hub.as_ref().map(|h| h.url.clone()).unwrap_or_default();
                let cause = root_cause(&err);
                if cause.contains("certificate") {
                    EdgeError::HubTls { site, url, cause }
                } else {
                    EdgeError::Unreachable { url, cause }
                }
            }
        }
    }

    /// Whether the hub kubeconfig on disk differs from the one last read.
    fn credential_changed(&self) -> bool {
        let Some(hub) = &self.hub else {
            return false;
        };
        HubKubeconfig::read(&self.cfg.hub_kubeconfig).is_ok_and(|fresh| fresh != hub.on_disk)
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
            durable: fresh.clone(),
            kubeconfig: fresh,
            client,
            url,
        });
        Ok(())
    }

    fn interval_of(&self, site: &FederatedCluster) -> Duration {
        super::clock::scaled(site.heartbeat_interval(), self.cfg.interval_scale)
    }

    /// How long one call to the member cluster may take (its reading, the
    /// journal, the renewed token's Secret): half the heartbeat interval
    /// (the hub's probe of a Pull site is bounded alike). A member API
    /// server that hangs, or keeps answering 503, delays the heartbeat by
    /// that much and never silences the site: the edge reports what it
    /// last read, and why not more.
    fn member_limit(&self) -> Duration {
        (self.interval / 2).max(Duration::from_millis(100))
    }

    /// The reading kept for the next report (never locked: `&mut self`).
    fn kept_reading(&mut self) -> &mut Option<Reading> {
        self.reading
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `call` to the member cluster, given up after [`Edge::member_limit`]
    /// (then `Err` of that limit).
    async fn on_member<T>(&self, call: impl Future<Output = T>) -> Result<T, Duration> {
        let limit = self.member_limit();
        tokio::time::timeout(limit, call).await.map_err(|_| limit)
    }

    /// The member cluster's objects, read within [`Edge::member_limit`]. A
    /// reading given up on for the last report (or dark-period note) goes
    /// on and serves this one, unless it has run for three intervals (a
    /// connection that will never answer): then a new one starts.
    async fn read_member(&mut self) -> Result<MemberObjects, MemberError> {
        let kept = self.kept_reading().take();
        let mut reading = match kept {
            // Read between reports. A member that slow is read on so: the
            // next reading starts now, to serve the next report.
            Some(Reading {
                done: Some((read, took)),
                ..
            }) => {
                if took > self.member_limit() {
                    *self.kept_reading() = Some(Reading::start(&self.member));
                }
                return read;
            }
            Some(r) if r.started.elapsed() < self.interval * 3 => r,
            _ => Reading::start(&self.member),
        };
        match self.on_member(&mut reading.read).await {
            Ok(read) => read,
            Err(limit) => {
                *self.kept_reading() = Some(reading);
                Err(MemberError::NotInTime { limit })
            }
        }
    }

    /// The edge-owned status to report now for `site` (its object on the
    /// hub, whose signals are the previous report when this process starts).
    async fn observe_member(
        &mut self,
        site: &FederatedCluster,
        now: Timestamp,
    ) -> (EdgeStatus, Option<EdgeError>) {
        let read = self.read_member().await;
        match read {
            Ok(objs) => {
                let status = edge_status(&objs, self.history.previous(site), now);
                if status.member != self.last_member.as_ref().and_then(|m| m.member.clone()) {
                    tracing::info!(
                        site = %self.cfg.site,
                        member = status.member.as_deref().unwrap_or("unknown"),
                        "reading the member cluster (its kube-system namespace UID)"
                    );
                }
                self.history.record(status.signals());
                // Connected: the journal's baseline follows the member.
                self.journal
                    .observe(&node_readiness(&objs.nodes), status.signals(), now);
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

    /// The edge's clock as it reports it (shifted by `clock_offset`), in
    /// whole seconds as on the wire.
    fn site_clock(&self) -> Timestamp {
        let now = (self.clock)();
        Timestamp::from_second(now.as_second()).unwrap_or(now) + self.cfg.clock_offset
    }

    /// One report, and the dark-period journal: a report that does not
    /// reach the hub begins (or continues) a dark period, and what the
    /// member shows meanwhile is noted; the first report that does carries
    /// the dark period's summary, and the journal starts again. Never
    /// panics, never exits: every failure is returned in [`Tick::error`]
    /// for the caller to log and back off on.
    pub async fn tick(&mut self) -> Tick {
        let now = self.site_clock();
        self.load_journal(now).await;
        let mut tick = self.report().await;
        self.patience_with_an_unserved_api(&mut tick, now);
        if let (None, Some(e)) = (&tick.sent, &tick.error)
            && e.leaves_dark()
        {
            let entry = e.journal_entry();
            self.journal.report_failed(
                now,
                e.cause_name(),
                entry.as_ref().map(|(k, d)| (*k, d.as_str())),
            );
            self.observe_dark(now).await;
        }
        self.save_journal().await;
        tick
    }

    /// A 404 for the fleet's API itself (`crd-missing`) is taken for an API
    /// server that has just started, and retried as quickly as any
    /// transient failure (`not-served-yet`), for [`NOT_SERVED_PATIENCE`]
    /// after the first one since the hub last accepted a report; only then
    /// for missing CRDs, retried slowly.
    fn patience_with_an_unserved_api(&mut self, tick: &mut Tick, now: Timestamp) {
        if tick.sent.is_some() {
            self.unserved_since = None;
            return;
        }
        let Some(EdgeError::CrdMissing { crd }) = tick.error else {
            return;
        };
        if still_patient(&mut self.unserved_since, now) {
            tick.error = Some(EdgeError::NotServedYet { crd });
        }
    }

    /// Reads the journal the edge kept on its member cluster, once (again
    /// on the next tick while the member does not answer); a journal found
    /// dark means the edge restarted during a dark period.
    async fn load_journal(&mut self, now: Timestamp) {
        if self.journal_store.loaded {
            return;
        }
        let Some(at) = self.cfg.journal.clone() else {
            self.journal_store.loaded = true;
            return;
        };
        let read = match self.on_member(read_journal(&self.member, &at)).await {
            Ok(read) => read,
            Err(limit) => {
                self.journal_failing(&at, "read", member_late(limit));
                return;
            }
        };
        match read {
            Ok(JournalRead::Journal(found)) => {
                if found.is_dark() {
                    tracing::info!(site = %self.cfg.site, configmap = %at, entries = found.entries.len(), "restarted during a dark period: continuing its journal");
                }
                self.journal_store.written = Some((*found).clone());
                self.journal = *found;
            }
            Ok(JournalRead::Unreadable(why)) => {
                tracing::warn!(site = %self.cfg.site, configmap = %at, cause = %Untrusted(&why), "the dark-period journal on the member is not one this edge wrote; starting a new one");
            }
            Err(e) if matches!(status_code(&e), Some(403 | 404)) => {
                tracing::warn!(
                    site = %self.cfg.site,
                    configmap = %at,
                    cause = %readable(&e),
                    "cannot keep the dark-period journal on the member cluster; keeping it in memory (lost on restart): \
                     the ConfigMap must exist and the edge needs get and update on it (`kubectl fleet install --role edge` does both)"
                );
            }
            Err(e) => {
                // Not loaded: asked again next tick, and never overwritten
                // with a journal that does not know what it holds.
                self.journal_failing(&at, "read", readable(&e));
                return;
            }
        }
        self.journal_store.loaded = true;
        self.journal_store.failing = None;
        self.journal.edge_started(now, &self.cfg.version);
    }

    /// Writes the journal to the member while it matters: when it is
    /// dark, or to clear it once its dark period was reported.
    async fn save_journal(&mut self) {
        let Some(at) = self.cfg.journal.clone() else {
            return;
        };
        let store = &self.journal_store;
        let held_dark = store.written.as_ref().is_some_and(Journal::is_dark);
        if !store.loaded
            || !(self.journal.is_dark() || held_dark)
            || store.written.as_ref() == Some(&self.journal)
        {
            return;
        }
        let write = write_journal(&self.member, &at, &self.journal);
        match self.on_member(write).await {
            Ok(Ok(())) => {
                self.journal_store.written = Some(self.journal.clone());
                self.journal_store.failing = None;
            }
            Ok(Err(e)) => self.journal_failing(&at, "write", readable(&e)),
            Err(limit) => self.journal_failing(&at, "write", member_late(limit)),
        }
    }

    /// Logs (once per cause) that the journal on the member could not be
    /// read or written (`what`); it stays in memory and is tried again
    /// next tick.
    fn journal_failing(&mut self, at: &SecretName, what: &str, cause: String) {
        if self.journal_store.failing.as_deref() != Some(cause.as_str()) {
            tracing::warn!(site = %self.cfg.site, configmap = %at, cause = %cause, "could not {what} the dark-period journal on the member cluster; keeping it in memory and retrying");
            self.journal_store.failing = Some(cause);
        }
    }

    /// Notes in the journal what the member shows while the site is dark.
    async fn observe_dark(&mut self, now: Timestamp) {
        if let Ok(objs) = self.read_member().await {
            let signals = edge_status(&objs, &[], now).signals.unwrap_or_default();
            self.journal
                .observe(&node_readiness(&objs.nodes), &signals, now);
        }
    }

    /// One report (see [`Edge::tick`]).
    async fn report(&mut self) -> Tick {
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
        self.interval = interval;
        if let Err(e) = self.check_member().await {
            return Tick {
                interval: Some(interval),
                sent: None,
                error: Some(e),
            };
        }
        // Whole seconds, as on the wire, so the report compares equal to
        // what the hub holds.
        let clock_now = (self.clock)();
        let now = Timestamp::from_second(clock_now.as_second()).unwrap_or(clock_now);
        let (member, member_err) = self.observe_member(&site, now).await;
        let hub = self.hub.as_ref().expect("refreshed above");
        let claims = hub.durable.claims();
        let mut status = with_identity(
            member,
            now + self.cfg.clock_offset,
            &self.cfg.version,
            claims.as_ref().and_then(|c| c.expires_at),
            claims
                .as_ref()
                .filter(|_| self.cfg.auto_rotate)
                .and_then(|c| c.renewal_time()),
        );
        // The hub's health check of a Push site: the previous report's
        // round trip (this one's is known only once it is answered).
        status.last_report_duration_milliseconds = self.last_report_ms;
        // The dark period just ended, else the one the hub holds.
        let dark = self.journal.summary(now + self.cfg.clock_offset);
        let reporting_dark = dark.is_some();
        status.last_dark_period = dark.or_else(|| {
            site.status
                .as_ref()
                .and_then(|s| s.last_dark_period.clone())
        });
        crate::fleet::bounds::clip_edge_status(&mut status);
        let uid = site.metadata.uid.clone();
        // Another member's report in between: start again from what the
        // hub holds, so this report replaces all of it.
        if self.other_member_reported(&site, status.member.as_deref()) {
            self.accepted = None;
        }
        // The baseline is the last accepted report for this very object; a
        // new edge process (or a re-created site) starts from what the hub holds.
        let baseline = Accepted::baseline(&mut self.accepted, &site);
        let (patch, next) = report_patch(Some(baseline), status, now);
        let heartbeat_only = is_heartbeat_only(&patch);
        // Nothing but the heartbeat (and the previous round trip): the
        // lease carries it, the status stays as it is (`lease`).
        if heartbeat_only && self.lease.to_lease() {
            let renewal = crate::api::Renewal {
                renew_time: Some(now + self.cfg.clock_offset),
                duration_ms: self.last_report_ms,
            };
            let client = api.clone().into_client();
            match self.renew_lease(client, renewal).await {
                lease::Renewed::Accepted(body) => {
                    self.count_sent(&body, Sent::Renewal);
                    return self.accepted_tick(interval, body, member_err).await;
                }
                lease::Renewed::FellBack => {}
                lease::Renewed::Failed(e) => {
                    return Tick {
                        interval: Some(interval),
                        sent: None,
                        error: Some(self.classify(e, lease::RENEWING)),
                    };
                }
            }
        }
        let sending = std::time::Instant::now();
        match patch_site_status(&api, &self.cfg.site, &patch).await {
            Ok(_) => {
                self.last_report_ms = Some(super::metrics::report_duration_ms(sending.elapsed()));
                if heartbeat_only {
                    self.lease.heartbeat_through_status();
                }
                self.count_sent(
                    &patch,
                    if heartbeat_only {
                        Sent::StatusHeartbeat
                    } else {
                        Sent::Report
                    },
                );
                if reporting_dark && let Some(d) = &next.last_dark_period {
                    tracing::info!(
                        site = %self.cfg.site,
                        from = %d.from.0,
                        entries = d.entries.len(),
                        dropped = d.dropped,
                        "reported the dark period (the site's own account, on its clock)"
                    );
                    self.journal.reported();
                }
                self.accepted = Some(Accepted { uid, status: next });
                self.accepted_tick(interval, patch, member_err).await
            }
            Err(e) => Tick {
                interval: Some(interval),
                sent: None,
                error: Some(self.classify(e, "patching its own status")),
            },
        }
    }

    /// A tick whose report (`sent`) the hub accepted: the token is renewed
    /// when due, and stored.
    async fn accepted_tick(
        &mut self,
        interval: Duration,
        sent: Value,
        member_err: Option<EdgeError>,
    ) -> Tick {
        let rotate_err = match self.maybe_rotate().await {
            Ok(()) => self.persist().await.err(),
            Err(e) => Some(e),
        };
        Tick {
            interval: Some(interval),
            sent: Some(sent),
            error: member_err.or(rotate_err),
        }
    }

    /// Counts an accepted body in [`EdgeStats`].
    fn count_sent(&mut self, body: &Value, what: Sent) {
        let bytes = serde_json::to_vec(body).map(|b| b.len()).unwrap_or(0) as u64;
        let stats = &mut self.stats;
        stats.bytes_sent += bytes;
        stats.last_patch_bytes = bytes;
        stats.last_sent = Some(what);
        match what {
            Sent::Renewal => stats.renewals += 1,
            Sent::StatusHeartbeat => {
                stats.reports += 1;
                stats.heartbeat_only += 1;
            }
            Sent::Report => stats.reports += 1,
        }
    }

    /// Why the edge heartbeats through its status instead of its lease
    /// (None while it renews its lease, or has not tried yet).
    pub fn lease_fallback(&self) -> Option<lease::Fallback> {
        self.lease.fallback()
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
        // Ask for the lifetime granted last time, but never below what the
        // API server accepts (a capped token can be shorter than that; the
        // server caps the new one the same way), nor above what a site may
        // mint itself (the hub's admission policy refuses more).
        let minted = request_site_token(
            &hub.client,
            &self.cfg.site,
            claims.namespace.as_deref(),
            lifetime
                .max(MIN_TOKEN_TTL)
                .min(crate::fleet::rbac::MAX_SITE_TOKEN_TTL)
                .as_secs() as i64,
            claims.audiences.clone(),
        )
        .await
        .map_err(|e| match e {
            crate::k8s::edge_token::TokenError::Request(e) => {
                self.classify(e, "renewing its own token")
            }
            empty => EdgeError::Renewal(empty.to_string()),
        })?;
        self.stats.rotations += 1;
        let in_memory = hub.kubeconfig.with_token(&minted.token)?;
        if let Some(secret) = &self.cfg.hub_kubeconfig_secret {
            // Persisted by `persist` right after; the mounted file catches
            // up within the kubelet's sync period.
            tracing::info!(site = %self.cfg.site, expires = %minted.expires_at, secret = %secret, "renewed the site token");
            return self.use_in_memory(in_memory).await;
        }
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
                // A read-only file and no Secret to persist it in: use the
                // new token from memory; a restart falls back to the file's
                // token, whose expiry stays the one reported.
                tracing::warn!(
                    site = %self.cfg.site,
                    expires = %minted.expires_at,
                    error = %e,
                    cause = %source_chain(&e),
                    "renewed the site token but could not store it; using it from memory until restart \
                     (run the edge with --hub-kubeconfig-secret NAMESPACE/NAME of the Secret the file is mounted from, \
                     or mount it writable)"
                );
                self.use_in_memory(in_memory).await
            }
        }
    }

    async fn use_in_memory(&mut self, kubeconfig: HubKubeconfig) -> Result<(), EdgeError> {
        let client = kubeconfig.client().await?;
        if let Some(h) = self.hub.as_mut() {
            h.kubeconfig = kubeconfig;
            h.client = client;
        }
        Ok(())
    }

    /// Stores a token renewed in memory in the member Secret, until that
    /// succeeds; after that a restart uses it too.
    async fn persist(&mut self) -> Result<(), EdgeError> {
        let (Some(secret), Some(hub)) = (&self.cfg.hub_kubeconfig_secret, self.hub.as_ref()) else {
            return Ok(());
        };
        if hub.durable.token() == hub.kubeconfig.token() {
            return Ok(());
        }
        let store = store_hub_kubeconfig(
            &self.member,
            secret,
            crate::api::DEFAULT_KUBECONFIG_KEY,
            hub.kubeconfig.text(),
        );
        let cause = match self.on_member(store).await {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(readable(&e)),
            Err(limit) => Some(member_late(limit)),
        };
        if let Some(cause) = cause {
            return Err(EdgeError::Persist {
                secret: secret.clone(),
                cause,
            });
        }
        tracing::info!(site = %self.cfg.site, secret = %secret, "stored the renewed token in the member Secret; a restart uses it");
        if let Some(h) = self.hub.as_mut() {
            h.durable = h.kubeconfig.clone();
        }
        Ok(())
    }
}

/// Whether a report patch carries the heartbeat alone: its time, and at
/// most the previous report's round trip that goes with it.
fn is_heartbeat_only(patch: &Value) -> bool {
    patch["status"].as_object().is_some_and(|m| {
        m.keys().all(|k| {
            k == crate::fleet::status_patch::HEARTBEAT_KEY || k == "lastReportDurationMilliseconds"
        })
    })
}

/// How long the hub may answer 404 for the fleet's API itself (not for the
/// site) before the edge takes the CRDs for missing: the real API server
/// answers `404 page not found` for custom resources for a few seconds
/// after it starts, until it has loaded their definitions. Meanwhile a
/// report is retried as quickly as after any transient failure, and a
/// lease renewal that met it is not replaced by status heartbeats (at
/// 100,000 sites, every edge renewing in those seconds would write its
/// status for [`lease::LEASE_RETRY_HEARTBEATS`] heartbeats), and nothing
/// tells a person to install CRDs that are there.
pub const NOT_SERVED_PATIENCE: Duration = Duration::from_secs(60);

/// Whether an API unserved since `since` (set to `now` if unset) has been
/// for less than [`NOT_SERVED_PATIENCE`] by `now`.
fn still_patient(since: &mut Option<Timestamp>, now: Timestamp) -> bool {
    let since = *since.get_or_insert(now);
    Duration::try_from(now.duration_since(since)).unwrap_or(Duration::ZERO) < NOT_SERVED_PATIENCE
}

/// How many heartbeat intervals the slow retry of an error only a person can
/// fix may reach (30 s intervals: 5 minutes).
pub const SLOW_RETRY_INTERVALS: u32 = 10;

/// Backoff after `failures` consecutive failed ticks: doubling from 1 s,
/// never beyond `cap` (one heartbeat interval, or [`SLOW_RETRY_INTERVALS`]
/// for an error only a person can fix), with ±20 % jitter.
pub fn backoff(failures: u32, cap: Duration) -> Duration {
    let base = Duration::from_secs(1u64 << failures.min(10)).min(cap);
    super::clock::jitter(base.mul_f64(0.8), base.mul_f64(0.4))
}

/// The wait before the next report after one the hub accepted, `elapsed`
/// into an interval of `interval`: the rest of the interval, less up to
/// 5 % of it at random (never later than the interval, so the hub's
/// thresholds are unaffected). Edges started together (a power cut ends
/// at every store at once) drift apart this way, as kubelets' node lease
/// renewals do, instead of reaching the hub in one burst every interval.
pub fn next_report_in(interval: Duration, elapsed: Duration) -> Duration {
    let rest = interval.saturating_sub(elapsed);
    let spread = rest.min(interval / 20);
    super::clock::jitter(rest - spread, spread)
}

/// Runs the edge until `shutdown` turns true. `ready` is true while the
/// edge is reporting: after a report the hub accepted, until one fails.
pub async fn run(
    mut edge: Edge,
    ready: super::server::Readiness,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut failures = 0u32;
    // The transient cause already logged in this run of failures: its
    // repeats go to debug, so an outage costs one line, not one per retry.
    let mut logged: Option<&'static str> = None;
    // The same for a cause of reports sent with an error.
    let mut noted: Option<&'static str> = None;
    loop {
        let started = tokio::time::Instant::now();
        let tick = tokio::select! {
            t = edge.tick() => t,
            _ = shutdown.wait_for(|s| *s) => break,
        };
        edge.record(&tick);
        // The site's interval as last read (the default before), scaled.
        let last_interval = edge.interval;
        ready.set(tick.sent.is_some());
        let mut person = false;
        let wait = match (&tick.sent, &tick.error) {
            (Some(_), err) => {
                // A report sent with an error (the member not read): one
                // line per cause while it lasts (a member down for an hour
                // at I = 10 s said so 360 times), one when it is gone; a
                // cause only a person can fix repeats as a reminder.
                match err {
                    Some(e) if noted == Some(e.cause_name()) => {
                        tracing::debug!(site = %edge.cfg.site, cause = e.cause_name(), "{}", Untrusted(e));
                    }
                    Some(e) => {
                        tracing::warn!(site = %edge.cfg.site, cause = e.cause_name(), "{}", Untrusted(e));
                    }
                    None => {
                        if let Some(cause) = noted {
                            tracing::info!(site = %edge.cfg.site, cause, "reporting without that error again");
                        }
                    }
                }
                noted = err
                    .as_ref()
                    .filter(|e| !e.needs_a_person())
                    .map(EdgeError::cause_name);
                if failures > 0 {
                    tracing::info!(site = %edge.cfg.site, failed_reports = failures, "reporting to the hub again");
                }
                failures = 0;
                logged = None;
                next_report_in(last_interval, started.elapsed())
            }
            (None, Some(e)) => {
                failures = failures.saturating_add(1);
                person = e.needs_a_person();
                let cap = if person {
                    last_interval * SLOW_RETRY_INTERVALS
                } else {
                    last_interval
                };
                let wait = backoff(failures, cap);
                let retry_in = format!("{}s", wait.as_secs());
                // One line per transient cause; a cause only a person can
                // fix repeats at its slow cadence as a reminder.
                if !person && logged == Some(e.cause_name()) {
                    tracing::debug!(site = %edge.cfg.site, cause = e.cause_name(), retry_in = %retry_in, "{}", Untrusted(e));
                } else {
                    tracing::warn!(site = %edge.cfg.site, cause = e.cause_name(), retry_in = %retry_in, "{}", Untrusted(e));
                }
                logged = (!person).then(|| e.cause_name());
                wait
            }
            (None, None) => last_interval,
        };
        // A member reading the last report gave up on reads on meanwhile.
        let mut reading = edge.kept_reading().take();
        // A slow retry ends early when a new credential arrives on disk.
        let credential_arrives = async {
            if !person {
                return std::future::pending().await;
            }
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                if edge.credential_changed() {
                    return;
                }
            }
        };
        let read_on = async {
            if let Some(r) = reading.as_mut() {
                r.finish().await;
            }
            std::future::pending::<()>().await
        };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = credential_arrives => {}
            _ = read_on => {}
            _ = shutdown.wait_for(|s| *s) => break,
        }
        *edge.kept_reading() = reading;
    }
    tracing::info!(
        site = %edge.cfg.site,
        status_reports = edge.stats.reports,
        status_heartbeats = edge.stats.heartbeat_only,
        lease_renewals = edge.stats.renewals,
        bytes = edge.stats.bytes_sent,
        "edge stopped"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next report comes within the last 5 % of the interval, never
    /// after it, and edges do not all pick the same moment.
    #[test]
    fn reports_are_spread_over_the_last_twentieth_of_the_interval() {
        let interval = Duration::from_secs(30);
        let waits: Vec<Duration> = (0..200)
            .map(|_| next_report_in(interval, Duration::from_millis(200)))
            .collect();
        let rest = Duration::from_millis(29_800);
        assert!(
            waits
                .iter()
                .all(|w| *w <= rest && *w >= rest - Duration::from_millis(1_500)),
            "{waits:?}"
        );
        let distinct: std::collections::BTreeSet<_> = waits.iter().collect();
        assert!(distinct.len() > 50, "not spread: {distinct:?}");
        // A report that took the whole interval is followed at once.
        assert_eq!(next_report_in(interval, interval * 2), Duration::ZERO);
    }
}
