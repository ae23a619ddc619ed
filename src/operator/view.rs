//! What the hub knows about the fleet, from its own cache ([`FleetView`]):
//! the controller's sites, the latest full summary, the leader's liveness
//! record. The controller feeds it, the summariser
//! ([`super::federation`]) publishes into it, the REST API and `/metrics`
//! read it. A leaf below all three, so none of them reaches into another.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use jiff::Timestamp;
use kube::runtime::reflector::Store;

use crate::api::{FederatedCluster, FederationStatusStatus, HubLiveness};
use crate::fleet::liveness::{HubVerdict, hub_verdict};
use crate::fleet::policy::{Decisions, Incidents};

use super::metrics::Metrics;

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
    /// The sites whose judged transition the leader has not written yet,
    /// as it is about to write them, by name (from the last summary).
    unwritten: RwLock<Arc<HashMap<String, Arc<FederatedCluster>>>>,
    /// Set at the first reconcile: the store then holds a complete list.
    pub(super) listed: std::sync::atomic::AtomicBool,
    /// The full summary, shared: readers (each REST request, the next
    /// recomputation) take a reference, not a copy of every incident.
    summary: RwLock<Option<Arc<FederationStatusStatus>>>,
    /// The hub leader's liveness record as this replica last knew it: its
    /// own while it leads and judges, else as read from the singleton.
    /// None until known (written or read once); Some(None): there is none.
    hub: RwLock<Option<Option<HubLiveness>>>,
    /// The remediation decision last counted for each signal
    /// (`federation_remediation_policy_applied_total`).
    decisions: std::sync::Mutex<Decisions>,
    /// When this view was made: signals older than this on a site first
    /// met were counted by the replica that led then.
    pub(super) started: Timestamp,
    /// Where the leader's Events go (none until set).
    events: OnceLock<super::events::EventSink>,
    /// The full summary whose incidents the Events last told of (None
    /// until this replica wrote one: the singleton's, cut, stands in).
    told: std::sync::Mutex<Option<Arc<FederationStatusStatus>>>,
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

    /// Records the Events of the full summary `next`, just written,
    /// against the last one Events told of (`written`, the singleton as it
    /// was read, when none): new, grown and ended incidents
    /// (`operator::events::incident_notes`). Full summaries on both sides:
    /// an incident the written copy leaves out only because its list is
    /// cut has not ended.
    pub(super) fn record_incident_events(
        &self,
        written: Option<&FederationStatusStatus>,
        next: Arc<FederationStatusStatus>,
    ) {
        let mut told = self.told.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(events) = self.events.get() {
            let before = told.as_deref().or(written);
            for note in super::events::incident_notes(before, &next, Timestamp::now()) {
                events.record(note);
            }
        }
        *told = Some(next);
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
        Some(
            self.shared_sites(keep)?
                .iter()
                .map(|s| (**s).clone())
                .collect(),
        )
    }

    /// [`FleetView::sites`] without copying them: the cached objects
    /// themselves, shared; a site whose judged transition the leader has
    /// not written yet as it is about to write it (the same version of the
    /// object, judged: [`FleetView::hold_unwritten`]), as the summary
    /// counts it.
    pub fn shared_sites(
        &self,
        keep: impl Fn(&FederatedCluster) -> bool,
    ) -> Option<Vec<Arc<FederatedCluster>>> {
        let store = self.store.get()?;
        if store.is_empty() && !self.listed.load(std::sync::atomic::Ordering::Acquire) {
            return None;
        }
        let unwritten = self.unwritten();
        if unwritten.is_empty() {
            return Some(store.state_filter(|s| keep(s)));
        }
        let judged = |site: Arc<FederatedCluster>| match unwritten.get(site.site_name()) {
            Some(j) if j.metadata.resource_version == site.metadata.resource_version => j.clone(),
            _ => site,
        };
        Some(
            store
                .state()
                .into_iter()
                .map(judged)
                .filter(|s| keep(s))
                .collect(),
        )
    }

    /// The cached site `name`, as the controller's store holds it now.
    pub(super) fn cached(&self, name: &str) -> Option<Arc<FederatedCluster>> {
        self.store
            .get()?
            .get(&kube::runtime::reflector::ObjectRef::new(name))
    }

    /// The sites [`FleetView::hold_unwritten`] holds.
    pub(super) fn unwritten(&self) -> Arc<HashMap<String, Arc<FederatedCluster>>> {
        self.unwritten
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Holds the sites whose judged transition the leader has not written
    /// yet ([`super::hub::Hub::judged_sites`]) until the next summary.
    pub(super) fn hold_unwritten(&self, sites: HashMap<String, Arc<FederatedCluster>>) {
        *self.unwritten.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(sites);
    }

    /// The latest full fleet summary: every incident with all its sites
    /// (what the singleton lists is cut: `fleet::summary::bound`).
    pub fn summary(&self) -> Option<Arc<FederationStatusStatus>> {
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
    pub(super) fn know_hub(&self, record: Option<HubLiveness>) {
        self.metrics
            .set_last_judgement(record.as_ref().map(|r| r.last_judgement_time.0));
        *self.hub.write().unwrap_or_else(|p| p.into_inner()) = Some(record);
    }

    /// Publishes a freshly computed summary: gauges and the cached copy.
    /// Decides every signal with the summary's incidents and, while
    /// `leading`, counts each decision that is new or changed
    /// (`fleet::policy::Decisions`).
    pub(super) fn publish<S: std::borrow::Borrow<FederatedCluster>>(
        &self,
        sites: &[S],
        summary: FederationStatusStatus,
        leading: bool,
    ) {
        let now = Timestamp::now();
        self.metrics.set_fleet(
            sites,
            summary.correlations.len(),
            self.hub_verdict(now).judging(),
            now,
        );
        self.metrics.set_summary(&summary);
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
        *self.summary.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(summary));
    }
}
