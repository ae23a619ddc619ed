//! The fleet-wide `FederationStatus` singleton, kept by the hub leader:
//! phase counts, disconnected sites, issues, cross-cluster correlations and
//! cascades, GPU and service totals (docs/architecture.md#signals-correlation-and-remediation-policy).
//!
//! Recomputed from the controller's cache (no extra reads) when sites
//! change, debounced, and once a minute so correlations leave their window;
//! written only when something other than timestamps and ages changed.
//! With no sites and no singleton it writes nothing.
//!
//! The leader's liveness record (`status.hub`, [`run_liveness`]) is kept
//! apart from the summary: a merge patch of `status.hub` alone every
//! liveness interval, whatever the fleet's size, while the summary write
//! carries the record it read over, guarded by the resourceVersion.

use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

use jiff::Timestamp;
use kube::api::Api;
use kube::runtime::reflector::Store;
use tokio::sync::{Notify, watch};

use crate::api::{
    FederatedCluster, FederationStatus, FederationStatusStatus, HubLiveness, MAX_HUB_IDENTITY_CHARS,
};
use crate::fleet::correlation::{CorrelationConfig, DEFAULT_LOOKBACK, correlate, detect_cascades};
use crate::fleet::liveness::{HubVerdict, LIVENESS_INTERVAL, hub_verdict};
use crate::fleet::outage::{OutageConfig, grouped_outages};
use crate::fleet::policy::{Decisions, Incidents};
use crate::fleet::summary::summarize;
use crate::k8s::federation_status::{
    create_federation_status, get_federation_status, record_hub_liveness, replace_federation_status,
};
use crate::k8s::{is_conflict, source_chain};

use super::metrics::Metrics;

/// At most one recomputation per this period while sites keep changing.
pub const DEBOUNCE: Duration = Duration::from_secs(2);
/// Recompute at least this often, so correlations age out of their window.
pub const REFRESH: Duration = Duration::from_secs(60);

/// Correlation, cascade and grouped outage parameters
/// (`--correlation-window`, `--correlation-min-clusters`,
/// `--cascade-lookback`, `--outage-group-by`, `--outage-min-clusters`,
/// `--outage-window`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FederationConfig {
    /// Window and minimum number of clusters of a correlation.
    pub correlation: CorrelationConfig,
    /// How far back a cascade's source may lie.
    pub cascade_lookback: Duration,
    /// What makes sites going dark together one outage.
    pub outage: OutageConfig,
}

impl Default for FederationConfig {
    fn default() -> Self {
        Self {
            correlation: CorrelationConfig::default(),
            cascade_lookback: DEFAULT_LOOKBACK,
            outage: OutageConfig::default(),
        }
    }
}

/// The next summary from the sites, carrying correlation and outage ids
/// over.
pub fn next_summary<S: std::borrow::Borrow<FederatedCluster>>(
    sites: &[S],
    previous: Option<&FederationStatusStatus>,
    now: Timestamp,
    cfg: &FederationConfig,
) -> FederationStatusStatus {
    let prev_corr = previous
        .map(|p| p.correlations.as_slice())
        .unwrap_or_default();
    let prev_outages = previous.map(|p| p.outages.as_slice()).unwrap_or_default();
    let correlations = correlate(sites, prev_corr, now, cfg.correlation);
    let cascades = detect_cascades(sites, now, cfg.cascade_lookback);
    let mut summary = summarize(sites, correlations, cascades, now);
    // The hub computing this is the one judging: phases as it wrote them.
    summary.outages = grouped_outages(sites, prev_outages, None, now, &cfg.outage);
    summary
}

/// Whether `next` differs from `current` in more than its timestamps and
/// human-readable ages (which move every second and are not worth a write).
pub fn differs(current: Option<&FederationStatusStatus>, next: &FederationStatusStatus) -> bool {
    let Some(current) = current else {
        return true;
    };
    let strip = |s: &FederationStatusStatus| {
        let mut s = s.clone();
        s.last_updated = None;
        for d in &mut s.disconnected_clusters {
            d.reason.clear();
        }
        s
    };
    strip(current) != strip(next)
}

/// Whether `new` differs from `old` in its heartbeat alone — its time
/// and the report round trip sent with it — (spec, labels and every other
/// status field equal): nothing the fleet summary reads. `new` is left as
/// it was.
pub fn only_heartbeat_moved(old: &FederatedCluster, new: &mut FederatedCluster) -> bool {
    if old.spec != new.spec || old.metadata.labels != new.metadata.labels {
        return false;
    }
    match (old.status.as_ref(), new.status.as_mut()) {
        (Some(before), Some(now)) => {
            let beat = std::mem::replace(
                &mut now.last_heartbeat_time,
                before.last_heartbeat_time.clone(),
            );
            let took = std::mem::replace(
                &mut now.last_report_duration_milliseconds,
                before.last_report_duration_milliseconds,
            );
            let same = before == now;
            now.last_heartbeat_time = beat;
            now.last_report_duration_milliseconds = took;
            same
        }
        (None, None) => true,
        _ => false,
    }
}

/// What the hub knows about the fleet, from its own cache: the sites (the
/// controller's reflector store), the latest fleet summary and the metrics.
/// The REST API and `/metrics` read it; nothing here calls the API server.
#[derive(Debug, Default)]
pub struct FleetView {
    store: OnceLock<Store<FederatedCluster>>,
    /// Set at the first reconcile: the store then holds a complete list.
    listed: std::sync::atomic::AtomicBool,
    summary: RwLock<Option<FederationStatusStatus>>,
    /// The hub leader's liveness record as this replica last knew it: its
    /// own while it leads and judges, else as read from the singleton.
    /// None until known (written or read once); Some(None): there is none.
    hub: RwLock<Option<Option<HubLiveness>>>,
    /// The remediation decision last counted for each signal
    /// (`federation_remediation_policy_applied_total`).
    decisions: std::sync::Mutex<Decisions>,
    /// When this view was made: signals older than this on a site first
    /// met were counted by the replica that led then.
    started: Timestamp,
    /// Where the leader's Events go (none until set).
    events: OnceLock<super::events::EventSink>,
    /// The process's metrics.
    pub metrics: Arc<Metrics>,
}

impl FleetView {
    /// A view recording into `metrics`.
    pub fn new(metrics: Arc<Metrics>) -> Self {
        Self {
            metrics,
            started: Timestamp::now(),
            ..Default::default()
        }
    }

    /// Records the leader's incident Events into `events` (once).
    pub fn set_events(&self, events: super::events::EventSink) {
        let _ = self.events.set(events);
    }

    /// Records the Events of `next` against `held`: new, grown and ended
    /// incidents (`operator::events::incident_notes`).
    fn record_incident_events(
        &self,
        held: Option<&FederationStatusStatus>,
        next: &FederationStatusStatus,
    ) {
        if let Some(events) = self.events.get() {
            for note in super::events::incident_notes(held, next, Timestamp::now()) {
                events.record(note);
            }
        }
    }

    /// Attaches the controller's store (once; later calls are ignored).
    pub fn attach(&self, store: Store<FederatedCluster>) {
        let _ = self.store.set(store);
    }

    /// The cached sites matching `keep`, or None until the controller has
    /// listed them once (the reflector swaps in the whole first list at
    /// once, so a non-empty store is complete; an empty fleet counts as
    /// listed from its first reconcile on, i.e. once a site exists).
    pub fn sites(&self, keep: impl Fn(&FederatedCluster) -> bool) -> Option<Vec<FederatedCluster>> {
        let store = self.store.get()?;
        if store.is_empty() && !self.listed.load(std::sync::atomic::Ordering::Acquire) {
            return None;
        }
        Some(
            store
                .state_filter(|s| keep(s))
                .iter()
                .map(|s| (**s).clone())
                .collect(),
        )
    }

    /// The latest fleet summary (correlations and cascades included).
    pub fn summary(&self) -> Option<FederationStatusStatus> {
        self.summary
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Whether a hub is judging the fleet, at `now`, from the liveness
    /// record this replica knows ([`crate::fleet::liveness`]); unknown
    /// until it has read or written one.
    pub fn hub_verdict(&self, now: Timestamp) -> HubVerdict {
        match &*self.hub.read().unwrap_or_else(|p| p.into_inner()) {
            Some(record) => hub_verdict(record.as_ref(), now),
            None => HubVerdict::unknown(),
        }
    }

    /// Remembers the liveness record (written or read; None: there is none)
    /// and exports its time.
    fn know_hub(&self, record: Option<HubLiveness>) {
        self.metrics
            .set_last_judgement(record.as_ref().map(|r| r.last_judgement_time.0));
        *self.hub.write().unwrap_or_else(|p| p.into_inner()) = Some(record);
    }

    /// Publishes a freshly computed summary: gauges and the cached copy.
    /// Decides every signal with the summary's incidents and, while
    /// `leading`, counts each decision that is new or changed
    /// (`fleet::policy::Decisions`).
    fn publish<S: std::borrow::Borrow<FederatedCluster>>(
        &self,
        sites: &[S],
        summary: &FederationStatusStatus,
        leading: bool,
    ) {
        let now = Timestamp::now();
        self.metrics.set_fleet(
            sites,
            summary.correlations.len(),
            self.hub_verdict(now).judging(),
            now,
        );
        self.metrics.set_summary(summary);
        let incidents = Incidents::new(&summary.correlations, &summary.cascades);
        let counted = self
            .decisions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .update(sites, &incidents, self.started);
        if leading {
            for (tier, mode) in counted {
                self.metrics.policy_applied(tier, mode);
            }
        }
        *self.summary.write().unwrap_or_else(|p| p.into_inner()) = Some(summary.clone());
    }
}

/// A failed write of the singleton.
#[derive(Debug, thiserror::Error)]
#[error("writing FederationStatus fleet")]
pub struct FederationError(#[source] kube::Error);

/// One recomputation: reads the singleton, writes it if the summary changed.
/// Returns whether it wrote. Sets the fleet gauges, and counts each cascade
/// this write records for the first time (the singleton is the memory of
/// what was counted, so a new leader does not count a cascade again).
pub async fn sync_once<S: std::borrow::Borrow<FederatedCluster> + Sync>(
    api: &Api<FederationStatus>,
    sites: &[S],
    view: &FleetView,
    cfg: &FederationConfig,
) -> Result<bool, FederationError> {
    for _ in 0..8 {
        let current = get_federation_status(api).await.map_err(FederationError)?;
        if current.is_none() && sites.is_empty() {
            return Ok(false);
        }
        let held = current.as_ref().and_then(|c| c.status.as_ref());
        let mut next = next_summary(sites, held, Timestamp::now(), cfg);
        // The liveness record is the leader's to write; carried over as read.
        next.hub = held.and_then(|h| h.hub.clone());
        view.publish(sites, &next, true);
        if !differs(held, &next) {
            return Ok(false);
        }
        let recorded: Vec<String> = held
            .map(|h| h.cascades.iter().map(|c| c.key()).collect())
            .unwrap_or_default();
        let new_cascades: Vec<_> = next
            .cascades
            .iter()
            .filter(|c| !recorded.contains(&c.key()))
            .map(|c| (c.source_tier, c.target_tier))
            .collect();
        let held_copy = held.cloned();
        let base = match current {
            Some(c) => c,
            None => match create_federation_status(api, &FederationStatus::singleton(next.clone()))
                .await
            {
                Ok(created) => created,
                Err(e) if is_conflict(&e) => continue,
                Err(e) => return Err(FederationError(e)),
            },
        };
        let mut obj = base;
        obj.status = Some(next);
        match replace_federation_status(api, &obj).await {
            Ok(_) => {
                view.record_incident_events(
                    held_copy.as_ref(),
                    obj.status
                        .as_ref()
                        .unwrap_or(&FederationStatusStatus::default()),
                );
                for (source, target) in new_cascades {
                    view.metrics.new_cascade(source, target);
                }
                return Ok(true);
            }
            Err(e) if is_conflict(&e) => continue,
            Err(e) => return Err(FederationError(e)),
        }
    }
    Ok(false)
}

/// Keeps the singleton current while this replica leads, and the fleet
/// gauges current on every replica (a standby from its own cache), until
/// shutdown.
pub async fn run(
    api: Api<FederationStatus>,
    store: Store<FederatedCluster>,
    changed: std::sync::Arc<Notify>,
    leading: watch::Receiver<bool>,
    view: Arc<FleetView>,
    cfg: FederationConfig,
    mut shutdown: watch::Receiver<bool>,
) {
    view.attach(store.clone());
    // The first signal comes once the site watch has listed the sites, so
    // the cache is complete; with no sites at all nothing is ever written.
    tokio::select! {
        _ = changed.notified() => {}
        _ = shutdown.wait_for(|s| *s) => return,
    }
    view.listed
        .store(true, std::sync::atomic::Ordering::Release);
    loop {
        // The cached objects themselves, shared: a deep copy of every site
        // at each recomputation was most of a large hub's steady CPU.
        let sites: Vec<Arc<FederatedCluster>> = store.state();
        if !*leading.borrow() {
            let held = view.summary();
            view.publish(
                &sites,
                &next_summary(&sites, held.as_ref(), Timestamp::now(), &cfg),
                false,
            );
        } else {
            match sync_once(&api, &sites, &view, &cfg).await {
                Ok(true) => tracing::debug!(sites = sites.len(), "FederationStatus updated"),
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(error = %e, cause = %source_chain(&e), "could not update FederationStatus")
                }
            }
        }
        tokio::select! {
            _ = changed.notified() => {}
            _ = tokio::time::sleep(REFRESH) => {}
            _ = shutdown.wait_for(|s| *s) => return,
        }
        tokio::select! {
            _ = tokio::time::sleep(DEBOUNCE) => {}
            _ = shutdown.wait_for(|s| *s) => return,
        }
    }
}

/// How often the leader records that it judges: [`LIVENESS_INTERVAL`]
/// times the test-only interval scale, at least a second; and that period
/// in whole seconds, rounded up, as the record states it.
pub fn liveness_period(interval_scale: f64) -> (Duration, i64) {
    let period = super::hub::scaled(LIVENESS_INTERVAL, interval_scale).max(Duration::from_secs(1));
    let secs = i64::try_from(period.as_secs()).unwrap_or(i64::MAX);
    let secs = if period.subsec_nanos() > 0 {
        secs.saturating_add(1)
    } else {
        secs
    };
    (period, secs)
}

/// The hub's liveness, every liveness period until shutdown (every second
/// until the first record or read) (docs/operations.md#is-a-hub-judging). While this replica leads and has
/// judged every site of its cache ([`super::hub::Hub::judged_every_site`]),
/// it records so in `status.hub` of the singleton (one merge patch; none
/// while the fleet has no sites, so an empty install writes nothing) and
/// exports the time. Otherwise it records nothing, so the record ages:
/// a blind or stuck leader is not taken for a judging one; this replica
/// then reads the record instead, so its REST API and metrics say what
/// the leader last recorded.
pub async fn run_liveness(
    api: Api<FederationStatus>,
    hub: Arc<super::hub::Hub>,
    store: Store<FederatedCluster>,
    view: Arc<FleetView>,
    mut shutdown: watch::Receiver<bool>,
) {
    let (period, interval_seconds) = liveness_period(hub.interval_scale());
    let leader: String = hub
        .identity()
        .chars()
        .take(MAX_HUB_IDENTITY_CHARS)
        .collect();
    // Logged once per run of failures.
    let mut failing = false;
    // Until it has first recorded a judgement (leading) or read the record
    // (standby), this replica looks again every second rather than every
    // period: a hub that just started says it is judging as soon as it
    // has judged every site, not a period later.
    let mut settled = false;
    let mut next = tokio::time::Instant::now();
    loop {
        tokio::select! {
            _ = tokio::time::sleep_until(next) => {}
            _ = shutdown.wait_for(|s| *s) => return,
        }
        next = tokio::time::Instant::now()
            + if settled {
                period
            } else {
                period.min(Duration::from_secs(1))
            };
        let now = hub.now();
        let sites = store.state();
        if hub.judged_every_site(&sites, now) {
            let record = HubLiveness {
                leader: leader.clone(),
                leader_since: hub
                    .leading_since()
                    .map(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time),
                last_judgement_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now),
                interval_seconds,
            };
            settled = true;
            if sites.is_empty() {
                // Nothing to judge, nothing written; the metric still says
                // the hub is judging.
                view.know_hub(Some(record));
                continue;
            }
            match record_hub_liveness(&api, &record).await {
                Ok(()) => {
                    if failing {
                        tracing::info!("recording the hub's liveness again");
                    }
                    failing = false;
                    view.know_hub(Some(record));
                }
                Err(e) => {
                    if !failing {
                        tracing::warn!(error = %e, cause = %source_chain(&e), "could not record the hub's liveness in FederationStatus fleet; readers will warn that no hub is judging");
                    }
                    failing = true;
                }
            }
            continue;
        }
        match get_federation_status(&api).await {
            Ok(current) => {
                settled |= !hub.is_leader();
                view.know_hub(current.and_then(|c| c.status).and_then(|s| s.hub));
            }
            Err(e) => tracing::debug!(error = %e, "reading the hub's liveness record"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::fixtures::fixture_now;

    #[test]
    fn the_liveness_period_scales_and_states_whole_seconds() {
        assert_eq!(liveness_period(1.0), (Duration::from_secs(15), 15));
        assert_eq!(liveness_period(0.1), (Duration::from_millis(1500), 2));
        assert_eq!(liveness_period(0.01), (Duration::from_secs(1), 1));
    }

    #[test]
    fn only_a_moved_heartbeat_leaves_the_summary_alone() {
        use crate::api::{Signal, SignalType};
        let old = FederatedCluster::test("a").connected().heartbeat_ago(30);
        let mut beat = old.clone().heartbeat_ago(0);
        let before = beat.clone();
        assert!(only_heartbeat_moved(&old, &mut beat));
        assert_eq!(beat, before, "the new object is left as it was");
        let mut same = old.clone();
        assert!(only_heartbeat_moved(&old, &mut same));
        let signal = Signal::test(SignalType::CrashLoopBackOff, "shop", "Deployment", "web");
        for mut changed in [
            old.clone().heartbeat_ago(0).with_signal(signal),
            old.clone().heartbeat_ago(0).stale(),
            old.clone().with_gpus(8),
            old.clone().with_region("eu-west"),
            FederatedCluster::test("a"),
        ] {
            assert!(!only_heartbeat_moved(&old, &mut changed), "{changed:?}");
        }
    }

    #[test]
    fn ages_alone_are_no_change() {
        let sites = [FederatedCluster::test("a").stale()];
        let a = next_summary(&sites, None, fixture_now(), &FederationConfig::default());
        let b = next_summary(
            &sites,
            Some(&a),
            fixture_now() + jiff::SignedDuration::from_secs(30),
            &FederationConfig::default(),
        );
        assert_ne!(
            a.disconnected_clusters[0].reason,
            b.disconnected_clusters[0].reason
        );
        assert!(!differs(Some(&a), &b));
        assert!(differs(None, &b));
        let c = next_summary(
            &[FederatedCluster::test("a").connected()],
            Some(&a),
            fixture_now(),
            &FederationConfig::default(),
        );
        assert!(differs(Some(&a), &c), "a phase change is a change");
    }
}
