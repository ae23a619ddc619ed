//! The hub role: sets each site's phase and hub-owned conditions from
//! heartbeat staleness judged on the hub's own clock (design §4).
//!
//! - Every watch event for a site is an *observation*: when its
//!   `lastHeartbeatTime` value changes, the hub records its own "now" for it
//!   ([`HeartbeatObservation`]), in memory — recording costs no write.
//! - The hub writes only on a transition (phase, or the status/reason of the
//!   `Connected`, `CredentialExpiring` or `ClockSkew` condition), with a
//!   resourceVersion-guarded replace of `/status`; a 409 means another writer
//!   (the edge) got in first, so it re-reads, re-judges and retries.
//! - It requeues a site at its next threshold crossing, never by polling.
//! - Only the leader writes; a standby keeps observing, so on failover it
//!   knows when each heartbeat arrived.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt as _;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::api::Api;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use tokio::sync::watch;

use crate::api::{
    CONDITION_CLOCK_SKEW, CONDITION_CONNECTED, CONDITION_CREDENTIAL_EXPIRING, FederatedCluster,
    FederatedClusterStatus, Phase,
};
use crate::fleet::phase::{self, HeartbeatObservation};
use crate::k8s::site_status::{get_site, replace_site_status};

/// How many times one reconcile re-reads and retries after a 409.
pub const MAX_CONFLICT_RETRIES: u32 = 32;

/// Hub settings.
#[derive(Clone, Debug)]
pub struct HubConfig {
    /// `CredentialExpiring` turns True when less than this remains.
    pub credential_warning: Duration,
    /// Multiplies every heartbeat interval (tests only; 1.0 in production).
    pub interval_scale: f64,
}

impl Default for HubConfig {
    fn default() -> Self {
        Self {
            credential_warning: Duration::from_secs(7 * 24 * 3600),
            interval_scale: 1.0,
        }
    }
}

/// Counters the hub keeps (also logged at shutdown, read by tests and the
/// benchmark).
#[derive(Debug, Default)]
pub struct HubMetrics {
    /// Reconciles run.
    pub reconciles: AtomicU64,
    /// Status writes that succeeded (one per transition).
    pub writes: AtomicU64,
    /// Writes answered 409 and retried after a re-read.
    pub conflicts: AtomicU64,
    /// Reconciles that failed for another reason.
    pub errors: AtomicU64,
}

impl HubMetrics {
    fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// A plain snapshot `(reconciles, writes, conflicts, errors)`.
    pub fn snapshot(&self) -> (u64, u64, u64, u64) {
        (
            self.reconciles.load(Ordering::Relaxed),
            self.writes.load(Ordering::Relaxed),
            self.conflicts.load(Ordering::Relaxed),
            self.errors.load(Ordering::Relaxed),
        )
    }
}

/// A reconcile that failed.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// Re-reading a site after a conflict failed.
    #[error("re-reading site {site} after a conflict")]
    Reread {
        site: String,
        #[source]
        source: kube::Error,
    },
    /// Writing the site's status failed.
    #[error("writing status of site {site}")]
    Write {
        site: String,
        #[source]
        source: kube::Error,
    },
    /// Conflicts did not stop after [`MAX_CONFLICT_RETRIES`] re-reads.
    #[error("site {site} kept changing under the hub ({retries} conflicts in a row)")]
    TooManyConflicts { site: String, retries: u32 },
}

/// What the hub remembers about one site.
#[derive(Clone, Copy, Debug)]
struct LedgerEntry {
    /// The latest heartbeat value and when the hub first saw it.
    observation: Option<HeartbeatObservation>,
    /// Whether that value arrived while the hub was watching (so
    /// `observed_at` is a real observation and the skew measurable), as
    /// opposed to seeded at hub start.
    live: bool,
}

/// The hub's clock; injectable so tests can run hours of heartbeats in seconds.
pub type Clock = Arc<dyn Fn() -> Timestamp + Send + Sync>;

/// Shared state of the hub controller.
pub struct Hub {
    api: Api<FederatedCluster>,
    cfg: HubConfig,
    leading: watch::Receiver<bool>,
    ledger: Mutex<HashMap<String, LedgerEntry>>,
    clock: Clock,
    /// Signalled after every reconcile, so the fleet summary follows.
    changed: Arc<tokio::sync::Notify>,
    /// Counters.
    pub metrics: HubMetrics,
}

/// The outcome of reconciling one site.
#[derive(Clone, Debug, PartialEq)]
pub struct Reconciled {
    /// The phase the hub judged.
    pub phase: Phase,
    /// Whether it wrote (a transition happened).
    pub wrote: bool,
    /// 409s met and retried in this reconcile.
    pub conflicts: u32,
    /// When to look again if nothing changes.
    pub requeue: Option<Duration>,
    /// The object as the API server returned it after the write.
    pub written: Option<Box<FederatedCluster>>,
}

/// The hub-owned part of a site's status as the hub judges it now.
#[derive(Clone, Debug, PartialEq)]
struct Judgement {
    phase: Phase,
    connected: CondState,
    credential: CondState,
    /// None: not measurable now, leave what is there.
    skew: Option<CondState>,
    requeue: Option<Duration>,
}

#[derive(Clone, Debug, PartialEq)]
struct CondState {
    status: &'static str,
    reason: &'static str,
    message: String,
}

fn scaled(interval: Duration, scale: f64) -> Duration {
    if (scale - 1.0).abs() < f64::EPSILON || !(scale.is_finite() && scale > 0.0) {
        interval
    } else {
        interval.mul_f64(scale)
    }
}

fn human(d: Duration) -> String {
    crate::fleet::age::human_duration(SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX))
}

fn connected_state(phase: Phase, interval: Duration) -> CondState {
    match phase {
        Phase::Pending => CondState {
            status: "Unknown",
            reason: "NeverHeardFrom",
            message: "no heartbeat received yet".to_owned(),
        },
        Phase::Connected => CondState {
            status: "True",
            reason: "HeartbeatReceived",
            message: format!(
                "heartbeat received within {} (3 intervals)",
                human(interval * phase::CONNECTED_INTERVALS)
            ),
        },
        Phase::Stale => CondState {
            status: "False",
            reason: "HeartbeatStale",
            message: format!(
                "no heartbeat for more than {} (3 intervals)",
                human(interval * phase::CONNECTED_INTERVALS)
            ),
        },
        Phase::Unreachable => CondState {
            status: "False",
            reason: "HeartbeatMissing",
            message: format!(
                "no heartbeat for more than {} (10 intervals)",
                human(interval * phase::STALE_INTERVALS)
            ),
        },
    }
}

/// `CredentialExpiring` and when it next changes on its own.
fn credential_state(
    expires: Option<Timestamp>,
    warning: Duration,
    now: Timestamp,
) -> (CondState, Option<Duration>) {
    let Some(exp) = expires else {
        return (
            CondState {
                status: "Unknown",
                reason: "NotReported",
                message: "the edge has not reported when its hub credential expires".to_owned(),
            },
            None,
        );
    };
    let warn_at = exp - SignedDuration::try_from(warning).unwrap_or(SignedDuration::ZERO);
    let until = |t: Timestamp| -> Option<Duration> {
        Duration::try_from(t.duration_since(now))
            .ok()
            .map(|d| d + phase::TRANSITION_MARGIN)
    };
    if now >= exp {
        (
            CondState {
                status: "True",
                reason: "Expired",
                message: format!("the site's hub credential expired at {exp}"),
            },
            None,
        )
    } else if now >= warn_at {
        (
            CondState {
                status: "True",
                reason: "ExpiresSoon",
                message: format!(
                    "the site's hub credential expires at {exp}: run `kubectl fleet rotate` or enable auto-rotation"
                ),
            },
            until(exp),
        )
    } else {
        (
            CondState {
                status: "False",
                reason: "Valid",
                message: format!("the site's hub credential is valid until {exp}"),
            },
            until(warn_at),
        )
    }
}

fn skew_state(obs: &HeartbeatObservation, interval: Duration) -> CondState {
    match obs.skew(interval) {
        Some(skew) => {
            let dir = if skew.is_negative() {
                "behind"
            } else {
                "ahead of"
            };
            let abs = Duration::try_from(skew.abs()).unwrap_or_default();
            CondState {
                status: "True",
                reason: "ClockSkewDetected",
                message: format!(
                    "the edge clock is {} {dir} the hub clock; phase is judged on the hub clock",
                    human(abs)
                ),
            }
        }
        None => CondState {
            status: "False",
            reason: "WithinTolerance",
            message: format!(
                "the edge clock is within {} of the hub clock",
                human(phase::skew_tolerance(interval))
            ),
        },
    }
}

fn judge(
    site: &FederatedCluster,
    entry: &LedgerEntry,
    cfg: &HubConfig,
    now: Timestamp,
) -> Judgement {
    let interval = scaled(site.heartbeat_interval(), cfg.interval_scale);
    let observed_at = entry.observation.map(|o| o.observed_at);
    let phase = phase::phase(observed_at, interval, now);
    let expires = site
        .status
        .as_ref()
        .and_then(|s| s.credential_expiration_time.as_ref())
        .map(|t| t.0);
    let (credential, credential_next) = credential_state(expires, cfg.credential_warning, now);
    let skew = match (&entry.observation, entry.live) {
        (Some(obs), true) => Some(skew_state(obs, interval)),
        _ => None,
    };
    let requeue = [
        phase::next_transition(observed_at, interval, now),
        credential_next,
    ]
    .into_iter()
    .flatten()
    .min();
    Judgement {
        phase,
        connected: connected_state(phase, interval),
        credential,
        skew,
        requeue,
    }
}

/// Sets condition `type_` to `state`, keeping `lastTransitionTime` when the
/// status does not change. Returns whether status or reason changed.
fn set_condition(
    conditions: &mut Vec<Condition>,
    type_: &str,
    state: &CondState,
    generation: Option<i64>,
    now: Timestamp,
) -> bool {
    match conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(c) => {
            let changed = c.status != state.status || c.reason != state.reason;
            if c.status != state.status {
                c.last_transition_time = Time(now);
            }
            if changed {
                c.status = state.status.to_owned();
                c.reason = state.reason.to_owned();
                c.message = state.message.clone();
                c.observed_generation = generation;
            }
            changed
        }
        None => {
            conditions.push(Condition {
                type_: type_.to_owned(),
                status: state.status.to_owned(),
                reason: state.reason.to_owned(),
                message: state.message.clone(),
                last_transition_time: Time(now),
                observed_generation: generation,
            });
            true
        }
    }
}

/// The status to write if the judgement is a transition, else None. Only
/// hub-owned keys differ from `current`.
fn transition(
    site: &FederatedCluster,
    j: &Judgement,
    now: Timestamp,
) -> Option<FederatedClusterStatus> {
    let mut status = site.status.clone().unwrap_or_default();
    let generation = site.metadata.generation;
    let mut changed = false;
    if status.phase != Some(j.phase) {
        status.phase = Some(j.phase);
        status.phase_transition_time = Some(Time(now));
        changed = true;
    }
    let mut conditions = status.conditions.take().unwrap_or_default();
    changed |= set_condition(
        &mut conditions,
        CONDITION_CONNECTED,
        &j.connected,
        generation,
        now,
    );
    changed |= set_condition(
        &mut conditions,
        CONDITION_CREDENTIAL_EXPIRING,
        &j.credential,
        generation,
        now,
    );
    if let Some(skew) = &j.skew {
        changed |= set_condition(&mut conditions, CONDITION_CLOCK_SKEW, skew, generation, now);
    }
    status.conditions = Some(conditions);
    changed.then_some(status)
}

fn is_status(err: &kube::Error, code: u16) -> bool {
    matches!(err, kube::Error::Api(s) if s.code == code)
}

impl Hub {
    /// A hub over `api`; it writes only while `leading` is true.
    pub fn new(api: Api<FederatedCluster>, cfg: HubConfig, leading: watch::Receiver<bool>) -> Self {
        Self {
            api,
            cfg,
            leading,
            ledger: Mutex::new(HashMap::new()),
            clock: Arc::new(Timestamp::now),
            changed: Arc::new(tokio::sync::Notify::new()),
            metrics: HubMetrics::default(),
        }
    }

    /// The same hub judging time by `clock` instead of the system clock.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    fn is_leader(&self) -> bool {
        *self.leading.borrow()
    }

    /// Folds the site's current heartbeat into the ledger.
    fn observe(&self, site: &FederatedCluster, now: Timestamp) -> LedgerEntry {
        let name = site.site_name().to_owned();
        let status = site.status.as_ref();
        let reported = status
            .and_then(|s| s.last_heartbeat_time.as_ref())
            .map(|t| t.0);
        let persisted = status.and_then(|s| s.phase);
        let mut ledger = self.ledger.lock().unwrap_or_else(|p| p.into_inner());
        let entry = match ledger.get(&name) {
            // First sight since this process started: no memory of when the
            // heartbeat arrived, so seed from the persisted phase.
            None => LedgerEntry {
                observation: HeartbeatObservation::observe(None, reported, persisted, now),
                live: false,
            },
            Some(prev) => match (prev.observation, reported) {
                (_, None) => LedgerEntry {
                    observation: None,
                    live: true,
                },
                // The first heartbeat of a site we were already watching.
                (None, Some(reported)) => LedgerEntry {
                    observation: Some(HeartbeatObservation {
                        reported,
                        observed_at: now,
                    }),
                    live: true,
                },
                (Some(obs), Some(reported)) if obs.reported == reported => *prev,
                (Some(obs), Some(_)) => LedgerEntry {
                    observation: HeartbeatObservation::observe(
                        Some(&obs),
                        reported,
                        persisted,
                        now,
                    ),
                    live: true,
                },
            },
        };
        ledger.insert(name, entry);
        entry
    }

    /// Forgets a site (it was deleted).
    pub fn forget(&self, site: &str) {
        self.ledger
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(site);
    }

    /// Observes `site`, and if this is a transition and this replica leads,
    /// writes it with the site's resourceVersion, re-reading and retrying on
    /// every 409.
    pub async fn reconcile_site(&self, site: &FederatedCluster) -> Result<Reconciled, HubError> {
        HubMetrics::bump(&self.metrics.reconciles);
        let name = site.site_name().to_owned();
        let mut current = site.clone();
        let mut conflicts = 0;
        loop {
            let now = (self.clock)();
            let entry = self.observe(&current, now);
            let j = judge(&current, &entry, &self.cfg, now);
            let Some(status) = transition(&current, &j, now) else {
                return Ok(Reconciled {
                    phase: j.phase,
                    wrote: false,
                    conflicts,
                    requeue: j.requeue,
                    written: None,
                });
            };
            if !self.is_leader() {
                return Ok(Reconciled {
                    phase: j.phase,
                    wrote: false,
                    conflicts,
                    requeue: None,
                    written: None,
                });
            }
            let from = current.phase();
            let mut next = current.clone();
            next.status = Some(status);
            match replace_site_status(&self.api, &next).await {
                Ok(written) => {
                    HubMetrics::bump(&self.metrics.writes);
                    if from != Some(j.phase) {
                        tracing::info!(
                            site = %name,
                            from = from.map(|p| p.as_str()).unwrap_or("-"),
                            to = j.phase.as_str(),
                            "phase transition"
                        );
                    } else {
                        tracing::info!(site = %name, phase = j.phase.as_str(), "condition transition");
                    }
                    return Ok(Reconciled {
                        phase: j.phase,
                        wrote: true,
                        conflicts,
                        requeue: j.requeue,
                        written: Some(Box::new(written)),
                    });
                }
                Err(e) if is_status(&e, 409) => {
                    HubMetrics::bump(&self.metrics.conflicts);
                    conflicts += 1;
                    if conflicts > MAX_CONFLICT_RETRIES {
                        return Err(HubError::TooManyConflicts {
                            site: name,
                            retries: conflicts,
                        });
                    }
                    tracing::debug!(site = %name, "status changed under the hub (409), re-reading");
                    if conflicts > 2 {
                        // A site patched in a tight loop: step aside briefly
                        // so the re-read and the write fit between patches.
                        let step = Duration::from_millis(2 * u64::from(conflicts));
                        tokio::time::sleep(super::jitter(Duration::ZERO, step)).await;
                    }
                    current = match get_site(&self.api, &name).await {
                        Ok(fresh) => fresh,
                        Err(e) if is_status(&e, 404) => {
                            self.forget(&name);
                            return Ok(Reconciled {
                                phase: j.phase,
                                wrote: false,
                                conflicts,
                                requeue: None,
                                written: None,
                            });
                        }
                        Err(source) => return Err(HubError::Reread { site: name, source }),
                    };
                }
                Err(e) if is_status(&e, 404) => {
                    self.forget(&name);
                    return Ok(Reconciled {
                        phase: j.phase,
                        wrote: false,
                        conflicts,
                        requeue: None,
                        written: None,
                    });
                }
                Err(source) => return Err(HubError::Write { site: name, source }),
            }
        }
    }
}

async fn reconcile(site: Arc<FederatedCluster>, hub: Arc<Hub>) -> Result<Action, HubError> {
    let r = hub.reconcile_site(&site).await;
    hub.changed.notify_one();
    let r = r?;
    Ok(match r.requeue {
        Some(d) => Action::requeue(d),
        None => Action::await_change(),
    })
}

fn error_policy(site: Arc<FederatedCluster>, err: &HubError, hub: Arc<Hub>) -> Action {
    HubMetrics::bump(&hub.metrics.errors);
    tracing::warn!(
        site = site.site_name(),
        error = %err,
        cause = %super::source_chain(err),
        "reconcile failed, retrying"
    );
    Action::requeue(super::jitter(
        Duration::from_secs(2),
        Duration::from_secs(3),
    ))
}

/// Runs the controller until `shutdown` turns true. Every time this replica
/// becomes leader all sites are re-judged at once, since a standby did not
/// write what it observed.
pub async fn run_controller(hub: Arc<Hub>, mut shutdown: watch::Receiver<bool>) {
    let leading = hub.leading.clone();
    let became_leader = futures::stream::unfold(leading, |mut rx| async move {
        loop {
            rx.changed().await.ok()?;
            if *rx.borrow_and_update() {
                return Some(((), rx));
            }
        }
    });
    let api = hub.api.clone();
    let controller = Controller::new(api, watcher::Config::default().any_semantic());
    let summary = tokio::spawn(super::federation::run(
        crate::k8s::federation_status::federation_statuses(hub.api.clone().into_client()),
        controller.store(),
        hub.changed.clone(),
        hub.leading.clone(),
        shutdown.clone(),
    ));
    controller
        .reconcile_all_on(became_leader)
        .graceful_shutdown_on(async move {
            let _ = shutdown.wait_for(|s| *s).await;
        })
        .run(reconcile, error_policy, hub)
        .for_each(|res| async move {
            if let Err(e) = res {
                tracing::debug!(error = %e, "controller event");
            }
        })
        .await;
    let _ = summary.await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::fixtures::fixture_now;

    fn at(secs: i64) -> Timestamp {
        fixture_now() + SignedDuration::from_secs(secs)
    }

    fn entry(reported: i64, observed: i64, live: bool) -> LedgerEntry {
        LedgerEntry {
            observation: Some(HeartbeatObservation {
                reported: at(reported),
                observed_at: at(observed),
            }),
            live,
        }
    }

    fn site() -> FederatedCluster {
        FederatedCluster::test("site-a")
    }

    #[test]
    fn requeue_is_the_next_threshold_crossing() {
        let cfg = HubConfig::default();
        let j = judge(&site(), &entry(0, 0, true), &cfg, at(10));
        assert_eq!(j.phase, Phase::Connected);
        assert_eq!(
            j.requeue,
            Some(Duration::from_secs(80) + phase::TRANSITION_MARGIN)
        );
        let j = judge(&site(), &entry(0, 0, true), &cfg, at(91));
        assert_eq!(j.phase, Phase::Stale);
        assert_eq!(
            j.requeue,
            Some(Duration::from_secs(209) + phase::TRANSITION_MARGIN)
        );
        let j = judge(&site(), &entry(0, 0, true), &cfg, at(301));
        assert_eq!(j.phase, Phase::Unreachable);
        assert_eq!(
            j.requeue, None,
            "only a new heartbeat can change Unreachable"
        );
        let never = LedgerEntry {
            observation: None,
            live: true,
        };
        assert_eq!(judge(&site(), &never, &cfg, at(0)).requeue, None);
    }

    #[test]
    fn requeue_includes_the_credential_warning() {
        let cfg = HubConfig {
            credential_warning: Duration::from_secs(3600),
            ..HubConfig::default()
        };
        let mut s = site();
        s.status = Some(FederatedClusterStatus {
            credential_expiration_time: Some(Time(at(3600 + 60))),
            ..Default::default()
        });
        // Unreachable, so the phase never requeues; the credential does.
        let j = judge(&s, &entry(-1000, -1000, true), &cfg, at(0));
        assert_eq!(j.credential.status, "False");
        assert_eq!(
            j.requeue,
            Some(Duration::from_secs(60) + phase::TRANSITION_MARGIN)
        );
        let j = judge(&s, &entry(-1000, -1000, true), &cfg, at(61));
        assert_eq!(
            (j.credential.status, j.credential.reason),
            ("True", "ExpiresSoon")
        );
        assert_eq!(
            j.requeue,
            Some(Duration::from_secs(3600 - 1) + phase::TRANSITION_MARGIN)
        );
        let j = judge(&s, &entry(-1000, -1000, true), &cfg, at(3660));
        assert_eq!(j.credential.reason, "Expired");
        assert_eq!(j.requeue, None);
    }

    #[test]
    fn interval_scale_shrinks_thresholds() {
        let cfg = HubConfig {
            interval_scale: 0.1,
            ..HubConfig::default()
        };
        // I = 30 s scaled to 3 s: Stale after 9 s.
        assert_eq!(
            judge(&site(), &entry(0, 0, true), &cfg, at(9)).phase,
            Phase::Connected
        );
        assert_eq!(
            judge(&site(), &entry(0, 0, true), &cfg, at(10)).phase,
            Phase::Stale
        );
    }

    #[test]
    fn skew_is_judged_only_on_live_observations() {
        let cfg = HubConfig::default();
        // Edge clock 10 minutes behind, seen live: ClockSkew True, phase Connected.
        let j = judge(&site(), &entry(-600, 0, true), &cfg, at(5));
        assert_eq!(j.phase, Phase::Connected);
        let skew = j.skew.unwrap();
        assert_eq!((skew.status, skew.reason), ("True", "ClockSkewDetected"));
        assert!(skew.message.contains("10m behind"), "{}", skew.message);
        // Seeded at hub start: not measurable, left alone.
        assert_eq!(
            judge(&site(), &entry(-600, 0, false), &cfg, at(5)).skew,
            None
        );
        // Within tolerance.
        let j = judge(&site(), &entry(-2, 0, true), &cfg, at(5));
        assert_eq!(j.skew.unwrap().status, "False");
    }

    #[test]
    fn writes_only_on_transition_and_keeps_edge_fields() {
        let cfg = HubConfig::default();
        let mut s = site();
        s.status = Some(FederatedClusterStatus {
            last_heartbeat_time: Some(Time(at(0))),
            node_count: Some(3),
            ..Default::default()
        });
        let e = entry(0, 0, true);
        let j = judge(&s, &e, &cfg, at(1));
        let first = transition(&s, &j, at(1)).expect("first judgement is a transition");
        assert_eq!(first.phase, Some(Phase::Connected));
        assert_eq!(first.node_count, Some(3), "edge-owned fields survive");
        assert_eq!(first.phase_transition_time, Some(Time(at(1))));
        s.status = Some(first);
        // Same judgement later: no write.
        let j = judge(&s, &e, &cfg, at(60));
        assert_eq!(transition(&s, &j, at(60)), None);
        // Crossing 3·I: one write, Connected condition False, time moves.
        let j = judge(&s, &e, &cfg, at(91));
        let stale = transition(&s, &j, at(91)).unwrap();
        assert_eq!(stale.phase, Some(Phase::Stale));
        assert_eq!(stale.phase_transition_time, Some(Time(at(91))));
        let c = stale.condition(CONDITION_CONNECTED).unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("False", "HeartbeatStale")
        );
        assert_eq!(c.last_transition_time, Time(at(91)));
        let cred = stale.condition(CONDITION_CREDENTIAL_EXPIRING).unwrap();
        assert_eq!(
            cred.last_transition_time,
            Time(at(1)),
            "unchanged condition keeps its time"
        );
    }

    #[test]
    fn pending_site_gets_one_write() {
        let cfg = HubConfig::default();
        let s = site();
        let e = LedgerEntry {
            observation: None,
            live: false,
        };
        let st = transition(&s, &judge(&s, &e, &cfg, at(0)), at(0)).unwrap();
        assert_eq!(st.phase, Some(Phase::Pending));
        assert_eq!(st.condition(CONDITION_CONNECTED).unwrap().status, "Unknown");
        let mut s2 = s.clone();
        s2.status = Some(st);
        assert_eq!(
            transition(&s2, &judge(&s2, &e, &cfg, at(500)), at(500)),
            None
        );
    }
}
