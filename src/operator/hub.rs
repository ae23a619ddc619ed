//! The hub role: sets each site's phase and hub-owned conditions from
//! heartbeat staleness judged on the hub's own clock (docs/architecture.md#who-writes-which-status-key).
//!
//! - Every watch event for a site is an *observation*: when its
//!   `lastHeartbeatTime` value changes, the hub records its own "now" for it
//!   (a [`Sighting`], see [`Sighting::fold`]), in memory — recording costs
//!   no write. A heartbeat the hub could not read is never a new one
//!   ([`Sighting::of_site`]).
//! - What to write and when to look again is judged by one pure call,
//!   [`crate::fleet::hub_status::judge`], from that sighting, the
//!   effective interval (`--interval-scale` applied) and what the hub
//!   remembers of the site (its conditions, member and latest probe).
//! - The hub writes only on a transition (phase, or the status/reason of the
//!   `Connected`, `CredentialExpiring` or `ClockSkew` condition, or the edge
//!   clock offset `clockOffsetSeconds` moving by more than the skew
//!   tolerance), with a
//!   resourceVersion-guarded replace of `/status`; a 409 means another writer
//!   (the edge) got in first, so it re-reads, re-judges and retries.
//! - It requeues a site at its next threshold crossing (phase or
//!   credential), never by polling.
//! - It remembers the member identity each site's reports name
//!   (`status.member`); a change is a `MemberChanged` Event and condition
//!   (`crate::fleet::hub_status::judge_member`), held an hour past the last
//!   change.
//! - Only the leader writes; a standby keeps observing, so on failover it
//!   knows which heartbeats are new. A new leader does not count against a
//!   site judged `Connected` the time before its takeover (its watch may
//!   still be catching up after an API outage that also kept the edges from
//!   reporting): such a site goes Stale 3·I after the takeover at the
//!   earliest, as with a freshly started hub.
//! - The hub judges only on its own clock *while it could see*: from the
//!   first error of its site watch until the watch delivers an object again
//!   or a whole list (or, while it stays down, until a GET of a site
//!   answers) the hub is blind, unless its lease watch has listed the
//!   leases since it last failed: it then sees every renewal, and judges a
//!   fleet whose every site renews a lease from the leases (`sight`). That
//!   blind time is not counted against
//!   any site — every heartbeat observed before it is shifted forward by it
//!   ([`Hub`]'s `credit`), so an API outage that also kept the edges from
//!   reporting never turns a live site Stale. While its watch is down the hub holds
//!   judgements: a site is looked at as before (when it falls due, or an
//!   event changes its judgement), and a transition it would write is
//!   judged again from a fresh GET first, never written from the cache
//!   the dead watch left behind (no GET while nothing is due; a site
//!   whose GET gets no answer is looked at again as soon as the hub sees
//!   again, and every ½–1 interval while it does not). Losing the watch
//!   hands no site to the controller by itself: at 100,000 sites that put
//!   the whole fleet ahead of a write backlog. A hung API server breaks
//!   no watch; the hub notices by the silence (`sight`): a transition
//!   judged after its watches said nothing for 5 s is judged from a fresh
//!   GET first, and a GET without an answer makes the hub blind.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use futures::{StreamExt as _, TryStreamExt as _};
use jiff::Timestamp;
use kube::api::Api;
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::reflector::Store;
use kube::runtime::{WatchStreamExt as _, reflector, watcher};
use tokio::sync::watch;

use crate::api::{FederatedCluster, Mode, Phase};
use crate::fleet::hub_status::{
    self, Bearings, CheckedConditions, DEFAULT_CREDENTIAL_WARNING, HubStatus, MemberChange,
    MemberSighting, Sighting, conditions_digest, same_heartbeat,
};
use crate::k8s::site_decode::UnmanagedSite;
use crate::k8s::site_lease::{get_site_renewal, watch_site_leases};
use crate::k8s::site_status::{
    InitialList, LIST_PAGE, get_site, in_a_list, read_in_bursts, replace_site_status,
    watch_sites_listing,
};
use crate::k8s::{is_conflict, is_missing_object, source_chain};
use crate::operator::probe_stats::ProbeStats;

use super::clock::{Clock, jitter, scaled};
use super::metrics::Metrics;
use super::renewals::with_leases;
use super::view::{FleetView, only_heartbeat_moved};
use crate::render::safe::Untrusted;
use sight::Sight;

mod budget;
mod error;
mod judged;
mod ledger;
use ledger::{Known, Noticed, signal_digest, signal_digests};
mod schedule;
mod sight;
#[cfg(test)]
mod tests;

pub use budget::{DEFAULT_STATUS_WRITE_BURST, DEFAULT_STATUS_WRITE_QPS};
pub use error::HubError;
pub use sight::watch_sight;

/// Reconciles running at once. Most are judgements in memory that end
/// without a request; the bound is on the status writes in flight, each of
/// which holds a pooled HTTPS connection to the API server. Unbounded, a
/// hub starting over 10,000 sites opened ~900 connections for its first
/// writes and kept ~600 MiB of their buffers (docs/benchmarks-operator.md).
pub const RECONCILE_CONCURRENCY: u16 = 16;

/// How long the site watch is left alone once it has nothing ready, so
/// the heartbeats of a large fleet are read in bursts rather than one
/// wake-up each (docs/benchmarks-operator.md). Delays an event by at most
/// this; the phase deadlines are timers and do not move.
const WATCH_PAUSE: Duration = Duration::from_millis(100);

/// How many times one reconcile re-reads and retries after a 409.
pub const MAX_CONFLICT_RETRIES: u32 = 32;

/// Hub settings.
#[derive(Clone, Debug)]
pub struct HubConfig {
    /// `CredentialExpiring` turns True when less than this remains.
    pub credential_warning: Duration,
    /// Multiplies every heartbeat interval (tests only; 1.0 in production).
    pub interval_scale: f64,
    /// This replica's identity (its Lease holder identity), recorded as
    /// the leader in the FederationStatus liveness record.
    pub identity: String,
    /// Status writes a second at most (`--status-write-qps`).
    pub status_write_qps: u32,
    /// Status writes a burst may hold (`--status-write-burst`).
    pub status_write_burst: u32,
}

impl Default for HubConfig {
    fn default() -> Self {
        Self {
            credential_warning: DEFAULT_CREDENTIAL_WARNING,
            interval_scale: 1.0,
            identity: "fleet-operator".to_owned(),
            status_write_qps: DEFAULT_STATUS_WRITE_QPS,
            status_write_burst: DEFAULT_STATUS_WRITE_BURST,
        }
    }
}

/// Shared state of the hub controller.
pub struct Hub {
    api: Api<FederatedCluster>,
    cfg: HubConfig,
    leading: watch::Receiver<bool>,
    /// Leadership taken in: false from a loss until the next
    /// [`Hub::leadership_changed`]`(true)` (see [`Hub::is_leader`]).
    acting: std::sync::atomic::AtomicBool,
    ledger: Mutex<HashMap<String, Known>>,
    /// The sites whose judgement was due to be written at the last
    /// liveness check (see [`Hub::judged_every_site`]).
    unwritten: Mutex<judged::Unwritten>,
    /// The pace of status writes (`--status-write-qps`, `--status-write-burst`).
    writes: budget::WriteBudget,
    /// The site watch has listed the sites at least once.
    listed: std::sync::atomic::AtomicBool,
    /// When this process started (hub clock): signals already present in
    /// the first sighting of a site count only if they began after it.
    started: Timestamp,
    /// When this replica last became leader (hub clock); None while standby.
    leader_since: Mutex<Option<Timestamp>>,
    /// When each site is reconciled again by itself (the requeue of its
    /// last reconcile), the timer that hands it to the controller then.
    schedule: Arc<schedule::Schedule>,
    sight: Mutex<Sight>,
    clock: Clock,
    /// Signalled when a watch event changes what the fleet summary counts
    /// (see [`Hub::summary_input`]).
    changed: Arc<tokio::sync::Notify>,
    /// The watch event on its way into the cache changes the summary.
    summary_due: std::sync::atomic::AtomicBool,
    /// Tells the bucket backfill when a site needs its label.
    bucket: Arc<super::bucket::Due>,
    /// How many watch events the cache has taken that changed more than a
    /// heartbeat (see [`Hub::summary_input`]): the prober re-reads its
    /// list of Pull sites only when this moved.
    fleet_changes: std::sync::atomic::AtomicU64,
    /// Metrics (also logged at shutdown, read by tests and the benchmark).
    pub metrics: Arc<Metrics>,
    /// The cache the REST API and the fleet gauges read.
    pub view: Arc<FleetView>,
    /// What the Pull prober found, per site.
    pub probes: Arc<ProbeStats>,
    /// The renewal of each site's lease, folded into every site the hub reads.
    pub renewals: Arc<super::renewals::Renewals>,
    /// Where the leader's Events go.
    events: super::events::EventSink,
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
    /// The write restored conditions someone else had changed.
    pub restored: bool,
    /// The transition waits for the hub to see again: the fresh read a
    /// blind hub makes before a write failed (`Hub::hold_for_sight`).
    pub held: bool,
}

impl Hub {
    /// A hub over `api`; it writes only while `leading` is true.
    pub fn new(api: Api<FederatedCluster>, cfg: HubConfig, leading: watch::Receiver<bool>) -> Self {
        let metrics = Arc::new(Metrics::default());
        let leads_now = *leading.borrow();
        metrics.set_leader(leads_now);
        let writes = budget::WriteBudget::new(cfg.status_write_qps, cfg.status_write_burst);
        Self {
            api,
            cfg,
            // A replica that leads from its start has nothing to forget.
            acting: leads_now.into(),
            leading,
            ledger: Mutex::new(HashMap::new()),
            unwritten: Default::default(),
            writes,
            listed: Default::default(),
            started: Timestamp::now(),
            leader_since: Mutex::new(None),
            schedule: Default::default(),
            sight: Mutex::new(Sight::default()),
            clock: Arc::new(Timestamp::now),
            changed: Arc::new(tokio::sync::Notify::new()),
            summary_due: Default::default(),
            bucket: Default::default(),
            fleet_changes: Default::default(),
            view: Arc::new(FleetView::new(metrics.clone())),
            metrics,
            probes: Arc::new(ProbeStats::default()),
            renewals: Default::default(),
            events: Default::default(),
        }
    }

    /// Records an Event (only the leader calls this: it alone probes and
    /// writes).
    pub(super) fn record_event(&self, note: super::events::Note) {
        self.events.record(note);
    }

    /// The same hub recording its Events into `events` (call after
    /// [`Hub::with_metrics`]).
    pub fn with_events(mut self, events: super::events::EventSink) -> Self {
        self.view.set_events(events.clone());
        self.events = events;
        self
    }

    /// The same hub recording into `metrics` (the ones `/metrics` serves).
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        metrics.set_leader(self.is_leader());
        self.view = Arc::new(FleetView::new(metrics.clone()));
        self.metrics = metrics;
        self
    }

    /// The same hub judging time by `clock` instead of the system clock.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.started = clock();
        self.clock = clock;
        self
    }

    /// The FederatedCluster API the hub writes through.
    pub(super) fn api(&self) -> Api<FederatedCluster> {
        self.api.clone()
    }

    /// Whether this replica leads (only the leader writes and probes): it
    /// holds the Lease, and has taken leadership in ([`Hub::leadership_changed`]
    /// ran, forgetting what a standby could not verify), so no write of a
    /// new term is remembered and then forgotten.
    pub fn is_leader(&self) -> bool {
        *self.leading.borrow() && self.acting.load(std::sync::atomic::Ordering::Acquire)
    }

    /// A client for the hub's API server.
    pub(super) fn client(&self) -> kube::Client {
        self.api.clone().into_client()
    }

    /// The hub's clock now.
    pub fn now(&self) -> Timestamp {
        (self.clock)()
    }

    /// The test-only interval scale.
    pub fn interval_scale(&self) -> f64 {
        self.cfg.interval_scale
    }

    /// This replica's identity.
    pub fn identity(&self) -> &str {
        &self.cfg.identity
    }

    /// Whether this replica leads, as the elector says (watch it).
    pub fn leading(&self) -> watch::Receiver<bool> {
        self.leading.clone()
    }

    /// What the bucket backfill (`operator::bucket`) waits on.
    pub fn bucket_due(&self) -> Arc<super::bucket::Due> {
        self.bucket.clone()
    }

    /// Notified when a watch event changes what the fleet summary counts
    /// (the summariser waits on it).
    pub fn summary_changes(&self) -> Arc<tokio::sync::Notify> {
        self.changed.clone()
    }

    /// When this replica became leader, as recorded so far (None while
    /// standby, or before it has noticed its leadership).
    pub fn leading_since(&self) -> Option<Timestamp> {
        if !self.is_leader() {
            return None;
        }
        *self.leader_since.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The site's heartbeat interval as this hub applies it.
    pub fn effective_interval(&self, site: &FederatedCluster) -> Duration {
        scaled(site.heartbeat_interval(), self.cfg.interval_scale)
    }

    /// When this replica became leader, or None while it is standby. The
    /// first reconcile after a takeover stamps it, so the time is right even
    /// before the leadership stream is polled.
    fn leader_since(&self, now: Timestamp) -> Option<Timestamp> {
        let mut since = self.leader_since.lock().unwrap_or_else(|p| p.into_inner());
        if self.is_leader() {
            Some(*since.get_or_insert(now))
        } else {
            *since = None;
            None
        }
    }

    /// Records a change of leadership seen by the controller. A new
    /// leader forgets which conditions it had checked: what the previous
    /// leader wrote since is checked in full once, and not taken for a
    /// site's forgery.
    fn leadership_changed(&self, leading: bool) {
        use std::sync::atomic::Ordering;
        if !leading {
            self.acting.store(false, Ordering::Release);
        }
        let mut since = self.leader_since.lock().unwrap_or_else(|p| p.into_inner());
        *since = leading.then(|| (self.clock)());
        drop(since);
        if leading {
            let mut ledger = self.ledger.lock().unwrap_or_else(|p| p.into_inner());
            for known in ledger.values_mut() {
                known.verified = None;
            }
            drop(ledger);
            self.acting.store(true, Ordering::Release);
        }
        self.metrics.set_leader(leading);
    }

    /// Folds the site's current heartbeat, member, signals and dark period
    /// into the ledger; returns the sighting and the digest of the
    /// conditions last checked. What it notices is acted on once the
    /// ledger is let go ([`Hub::act_on`]).
    fn observe(
        &self,
        site: &FederatedCluster,
        now: Timestamp,
    ) -> (Sighting, Option<CheckedConditions>) {
        let name = site.site_name();
        let status = site.status.as_ref();
        // None when the hub could not read it (`Sighting::of_site`).
        let reported = status
            .filter(|s| s.unreadable().is_none_or(|u| !u.heartbeat()))
            .and_then(|s| s.last_heartbeat_time.as_ref())
            .map(|t| t.0);
        let signals = status.map(|s| s.signals()).unwrap_or_default();
        let dark = status
            .and_then(|s| s.last_dark_period.as_ref())
            .map(|d| (d.from.0, d.to.0));
        let leading = self.is_leader();
        let interval = self.effective_interval(site);
        let mut noticed = Noticed::default();
        let mut ledger = self.ledger.lock().unwrap_or_else(|p| p.into_inner());
        let (sighting, verified) = match ledger.get_mut(name) {
            // In place when the site is known: no key allocated per event.
            Some(known) => {
                // A heartbeat that changed while the hub watched: its age
                // says how far behind the hub judges (includes any edge
                // clock skew).
                noticed.heartbeat = reported.is_some_and(|t| {
                    known
                        .sighting
                        .observation
                        .is_none_or(|o| !same_heartbeat(o.reported, t))
                });
                noticed.member = known
                    .member
                    .observe(status.and_then(|s| s.member.as_deref()), now);
                if !(signals.is_empty() && known.signals.is_empty()) {
                    // Each key hashed once, for the count and the record.
                    let each: Vec<u64> = signals.iter().map(signal_digest).collect();
                    if leading {
                        noticed.signals = signals
                            .iter()
                            .zip(&each)
                            .filter(|(_, d)| known.signals.binary_search(d).is_err())
                            .map(|(s, _)| s.type_)
                            .collect();
                    }
                    known.signals = ledger::sorted(each);
                }
                noticed.dark = dark.is_some() && known.dark != dark;
                known.dark = dark;
                known.sighting = Sighting::of_site(Some(&known.sighting), site, interval, now);
                (known.sighting, known.verified)
            }
            // The first sighting (a start, a takeover's warm cache, or a
            // new site): what it already shows counts only if it began
            // after this process started (older was counted by the replica
            // that led then).
            None => {
                if leading {
                    noticed.signals = signals
                        .iter()
                        .filter(|s| s.first_seen.0 > self.started)
                        .map(|s| s.type_)
                        .collect();
                }
                noticed.dark = dark.is_some_and(|(_, to)| to > self.started);
                let sighting = Sighting::of_site(None, site, interval, now);
                ledger.insert(
                    name.to_owned(),
                    Known {
                        sighting,
                        verified: None,
                        member: MemberSighting::first(site, now),
                        signals: signal_digests(signals),
                        dark,
                    },
                );
                (sighting, None)
            }
        };
        drop(ledger);
        self.act_on(site, noticed, reported, now);
        (sighting, verified)
    }

    /// What [`Hub::observe`] noticed of `site`: a new heartbeat's lag (and
    /// a Push site's report duration); a member change (logged; while
    /// leading, a `MemberChanged` Event naming both members); new signals,
    /// counted once (their policy decisions are counted with the fleet's
    /// incidents, by the summary: [`super::federation`]); a new dark period
    /// (logged; while leading, its Events, [`super::events::dark_period`];
    /// nothing of it feeds the hub's judgement: it is the site's own
    /// account).
    fn act_on(
        &self,
        site: &FederatedCluster,
        noticed: Noticed,
        reported: Option<Timestamp>,
        now: Timestamp,
    ) {
        if let Some(t) = reported.filter(|_| noticed.heartbeat) {
            self.metrics
                .event_lag(now.duration_since(t).as_secs_f64().max(0.0));
            self.observe_report(site);
        }
        for signal_type in noticed.signals {
            self.metrics.new_signal(signal_type);
        }
        if let Some(change) = noticed.member {
            self.member_changed(site, change);
        }
        let dark = site
            .status
            .as_ref()
            .and_then(|s| s.last_dark_period.as_ref());
        if let Some(dark) = dark.filter(|_| noticed.dark) {
            tracing::info!(
                site = %site.site_name(),
                from = %dark.from.0,
                to = %dark.to.0,
                entries = dark.entries.len(),
                dropped = dark.dropped,
                "the site reported a dark period (its own account)"
            );
            if self.is_leader() {
                for note in super::events::dark_period(site, dark) {
                    self.events.record(note);
                }
            }
        }
    }

    /// The member cluster `site`'s reports come from changed: logged;
    /// while leading, a `MemberChanged` Event naming both members.
    fn member_changed(&self, site: &FederatedCluster, change: MemberChange) {
        tracing::warn!(
            site = %site.site_name(),
            from = %Untrusted(&change.from),
            to = %Untrusted(&change.to),
            "the member cluster the site's reports come from changed"
        );
        if self.is_leader() {
            self.events.record(super::events::about_site(
                site,
                true,
                "MemberChanged",
                "Judge",
                format!(
                    "status.member changed from {} to {} (kube-system namespace UIDs): the site's reports now come from another cluster; \
                     if it changes back, two edges report for this site",
                    Untrusted(&change.from),
                    Untrusted(&change.to)
                ),
            ));
        }
    }

    /// A new heartbeat of a Push site carries how long the edge's previous
    /// report took (`lastReportDurationMilliseconds`): while leading, that
    /// is the site's health check, as a probe is for a Pull site.
    fn observe_report(&self, site: &FederatedCluster) {
        if site.spec.mode != Mode::Push || !self.is_leader() {
            return;
        }
        if let Some(ms) = site
            .status
            .as_ref()
            .and_then(|s| s.last_report_duration_milliseconds)
        {
            self.metrics
                .observe_health_check(site.site_name(), ms.max(0) as f64 / 1000.0);
        }
    }

    /// Remembers that `site`'s conditions, with `digest`, are the hub's word.
    fn remember_conditions(&self, site: &str, digest: CheckedConditions) {
        let mut ledger = self.ledger.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(known) = ledger.get_mut(site) {
            known.verified = Some(digest);
        }
    }

    /// Forgets a site (it was deleted).
    pub fn forget(&self, site: &str) {
        self.ledger
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(site);
        {
            let mut sight = self.sight.lock().unwrap_or_else(|p| p.into_inner());
            sight.delivered.remove(site);
            sight.held.remove(site);
            sight.unechoed.remove(site);
        }
        self.schedule.forget(site);
        self.unwritten
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .forget(site);
        self.metrics.forget_site(site);
    }

    /// Observes `site` and judges it as this replica may now (see
    /// `Sighting::since_takeover`); the ledger keeps what was really
    /// observed, and which conditions it found to be the hub's word. Not
    /// those of a version other than the hub's own last write while the
    /// site watch owes that write ([`Hub::owes_echo`]): a renewal folded
    /// into the cache's object from before the write, found to need no
    /// write, would make the hub's own write look like someone else's
    /// when it arrives, and the hub would restore its own word as a
    /// forgery (`fleet_hub_status_restored_total`, the alert
    /// `FleetSiteStatusRestored`): seen at 100,000 sites, where the site
    /// watch ran seconds behind the hub's writes.
    fn judge<'a>(&self, site: &'a FederatedCluster, now: Timestamp) -> HubStatus<'a> {
        let (sighting, remembered) = self.observe(site, now);
        let j = self.judge_sighting(site, sighting, remembered, now);
        if let Some(digest) = j.verified
            && remembered != Some(digest)
            && !self.owes_echo(site)
        {
            self.remember_conditions(site.site_name(), digest);
        }
        j
    }

    /// The hub wrote `written` (the API server's answer): the site watch
    /// owes it, and its conditions are the hub's word.
    fn wrote(&self, written: &FederatedCluster) {
        let name = written.site_name();
        self.written(name, written.metadata.resource_version.as_ref());
        if let Some(conditions) = written
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_deref())
        {
            self.remember_conditions(
                name,
                conditions_digest(
                    written.spec.mode,
                    self.effective_interval(written),
                    conditions,
                ),
            );
        }
    }

    /// The judgement of `site` from a sighting and the remembered
    /// conditions digest, without touching the ledger.
    fn judge_sighting<'a>(
        &self,
        site: &'a FederatedCluster,
        sighting: Sighting,
        remembered: Option<CheckedConditions>,
        now: Timestamp,
    ) -> HubStatus<'a> {
        let leader_since = self.leader_since(now);
        // Only a Pull site has a prober's verdict: no lookup per heartbeat
        // of a Push site.
        let probe = match site.spec.mode {
            Mode::Push => None,
            Mode::Pull => self.probes.verdict(site.site_name()),
        };
        let schedule = site.spec.connectivity.as_ref().map(site_schedule);
        let interval = self.effective_interval(site);
        let ledger = self.ledger.lock().unwrap_or_else(|p| p.into_inner());
        let bearings = Bearings {
            interval,
            credential_warning: self.cfg.credential_warning,
            leader_since,
            probe: probe.as_ref(),
            member: ledger.get(site.site_name()).map(|k| &k.member),
            remembered,
            schedule: schedule.as_ref(),
        };
        hub_status::judge(site, sighting, &bearings, now)
    }

    /// Whether a watch event for `site` needs a reconcile. Every event is
    /// observed here, as a reconcile would (heartbeat folded into the
    /// ledger, signals counted; the fleet summary is told apart, by
    /// [`Hub::summary_input`]). An event whose
    /// judgement writes nothing, of a site whose scheduled reconcile comes
    /// no later than the threshold this judgement sets, is not handed to the
    /// controller: that reconcile judges again and requeues at the new
    /// threshold. So a heartbeat costs a fold and a judgement in memory,
    /// not a pass through the controller's scheduler and runner, and a site
    /// is reconciled about once per 3 intervals instead of once per
    /// heartbeat (docs/benchmarks-operator.md). The same holds while the
    /// watch is down: a delivery ends the blind time here, and an event
    /// that changes nothing (a re-list of a fleet the hub already holds,
    /// a renewal of a site judged Connected) is no cause to look, so a
    /// lost watch costs reconciles of the sites with something due, not
    /// of the whole fleet ahead of a backlog's writes
    /// (docs/benchmarks-100k.md#streaming-lists-unavailable-and-a-restart-during-a-write-backlog).
    fn needs_reconcile(&self, site: &FederatedCluster) -> bool {
        self.delivered(site, true);
        let j = self.judge(site, (self.clock)());
        if j.changed {
            return true;
        }
        match (self.schedule.at(site.site_name()), j.requeue_after) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(at), Some(after)) => at > tokio::time::Instant::now() + after,
        }
    }

    /// Whether a watch event changes what the fleet summary counts, judged
    /// before the cache takes it in (`cache` still holds the site as it
    /// was): the sites listed, one deleted, or one changed in more than
    /// its heartbeat. A heartbeat alone changes nothing the summary counts
    /// (a disconnected site that reports again changes phase by the hub's
    /// write, which is an event of its own), so a fleet that only
    /// heartbeats is not summed up again every 2 s. The summary is told
    /// by [`Hub::summary_cached`] once the cache holds the event.
    fn summary_input(
        &self,
        event: &mut watcher::Event<FederatedCluster>,
        cache: &reflector::Store<FederatedCluster>,
    ) {
        let relevant = match event {
            watcher::Event::Init | watcher::Event::InitApply(_) => false,
            watcher::Event::InitDone | watcher::Event::Delete(_) => true,
            watcher::Event::Apply(site) => cache
                .get(&reflector::ObjectRef::from_obj(site))
                .is_none_or(|old| !only_heartbeat_moved(&old, site)),
        };
        self.summary_due
            .store(relevant, std::sync::atomic::Ordering::Relaxed);
        self.bucket.delivered(event, relevant);
    }

    /// The cache holds the event [`Hub::summary_input`] judged last. At
    /// the end of a list it holds the whole fleet as it is now: the hub
    /// has listed, and sees again if its watch was down.
    fn summary_cached(&self, event: &watcher::Event<FederatedCluster>) {
        self.bucket.cached();
        if let watcher::Event::Apply(site) = event {
            self.cached(site);
        }
        if matches!(event, watcher::Event::InitDone) {
            self.listed
                .store(true, std::sync::atomic::Ordering::Release);
            self.relisted();
        }
        if self
            .summary_due
            .swap(false, std::sync::atomic::Ordering::Relaxed)
        {
            self.fleet_changes
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.changed.notify_one();
        }
    }

    /// A count that moves whenever the cache takes a site that changed in
    /// more than its heartbeat, a new one, or a deletion.
    pub(super) fn fleet_changes(&self) -> u64 {
        self.fleet_changes
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Remembers when `site` is reconciled again by itself.
    fn scheduled(&self, site: &str, requeue: Option<Duration>) {
        self.schedule.set(site, requeue);
    }

    /// The site was deleted while being reconciled: forget it, no write.
    fn gone(&self, name: &str, phase: Phase, conflicts: u32) -> Reconciled {
        self.forget(name);
        Reconciled {
            phase,
            wrote: false,
            conflicts,
            requeue: None,
            written: None,
            restored: false,
            held: false,
        }
    }

    /// The fresh read of `site` got no answer: no write, the hub is blind
    /// ([`Hub::looked`]), and the site is looked at again when it sees
    /// again, or ½–1 interval later ([`Hub::hold_for_sight`]).
    fn unanswered(&self, site: &FederatedCluster, judged: Phase, conflicts: u32) -> Reconciled {
        self.looked(false);
        let interval = self.effective_interval(site);
        Reconciled {
            phase: site.phase().unwrap_or(judged),
            wrote: false,
            conflicts,
            requeue: Some(jitter(interval / 2, interval / 2)),
            written: None,
            restored: false,
            held: true,
        }
    }

    /// Reads site `name` afresh, its lease folded in: while the hub is
    /// unsure of its watches ([`Hub::unsure`]) the lease watch may be as
    /// old as the site watch, so the site's lease is read afresh too (a
    /// site whose edge renews a lease would otherwise look as silent to a
    /// fresh read as to the dead watch's cache). Gives up after
    /// [`sight::FRESH_READ_TIMEOUT`] (None): an API server that hangs
    /// holds a request for as long as kube's client waits (295 s).
    async fn read_site(&self, name: &str) -> Option<Result<FederatedCluster, kube::Error>> {
        let read = async {
            let mut site = get_site(&self.api, name).await?;
            self.renewals.fold(&mut site);
            if self.unsure()
                && let Ok(Some(renewal)) =
                    get_site_renewal(self.api.clone().into_client(), name).await
            {
                site.with_lease(renewal);
            }
            Ok(site)
        };
        tokio::time::timeout(sight::FRESH_READ_TIMEOUT, read)
            .await
            .ok()
    }

    /// Observes `site`, and if this is a transition and this replica leads,
    /// writes it with the site's resourceVersion, re-reading and retrying on
    /// every 409.
    pub async fn reconcile_site(&self, site: &FederatedCluster) -> Result<Reconciled, HubError> {
        self.metrics.reconcile();
        let name = site.site_name().to_owned();
        self.delivered(site, false);
        // The watch's object until the hub re-reads it: no copy per
        // heartbeat, only of the objects it writes.
        let mut current: Cow<'_, FederatedCluster> = Cow::Borrowed(site);
        // Whether `current` was read from the API server in this reconcile.
        let mut fresh = false;
        // Whether this reconcile has its place in the write rate.
        let mut paced = false;
        let mut conflicts = 0;
        loop {
            let j = self.judge(&current, (self.clock)());
            let Some(status) = j.transition(&current) else {
                return Ok(Reconciled {
                    phase: j.phase,
                    wrote: false,
                    conflicts,
                    requeue: j.requeue_after,
                    written: None,
                    restored: false,
                    held: false,
                });
            };
            if !self.is_leader() {
                return Ok(Reconciled {
                    phase: j.phase,
                    wrote: false,
                    conflicts,
                    requeue: None,
                    written: None,
                    restored: false,
                    held: false,
                });
            }
            if !fresh && self.unsure() {
                // Held: the cache may be as old as the watches' last
                // delivery, so a write is judged again from a fresh read.
                match self.read_site(&name).await {
                    Some(Ok(read)) => {
                        self.looked(true);
                        current = Cow::Owned(read);
                        fresh = true;
                        continue;
                    }
                    Some(Err(e)) if is_missing_object(&e, &name) => {
                        self.looked(true);
                        return Ok(self.gone(&name, j.phase, conflicts));
                    }
                    Some(Err(_)) | None => {
                        return Ok(self.unanswered(&current, j.phase, conflicts));
                    }
                }
            }
            if !paced {
                // One place in the write rate per reconcile (a 409's retry
                // keeps it).
                paced = true;
                if let Some(at) = self.writes.slot() {
                    // Queued like every site of the backlog, whether or
                    // not its last write failed: a write that failed while
                    // the API server restarted, retried behind the
                    // backlog, withheld the liveness record until its turn
                    // (`Hub::judged_every_site`). A write that fails again
                    // marks it failing again.
                    self.unwritten
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .reconciled(&name, false);
                    // Queued: the summary holds this judgement as soon as
                    // it is told (`Hub::judged_sites`), not when the write
                    // goes (a write that goes now tells it by its own
                    // watch event). The wait may be long: the site is
                    // judged again after it, from what the cache holds
                    // then (so the write does not meet a 409 for every
                    // report made meanwhile, nor miss a lease renewal,
                    // which moves the heartbeat and not the
                    // resourceVersion), and from a fresh read if the watch
                    // was lost meanwhile.
                    self.changed.notify_one();
                    tokio::time::sleep_until(at).await;
                    if !fresh && let Some(now) = self.view.cached(&name) {
                        current = Cow::Owned(FederatedCluster::clone(&now));
                    }
                    continue;
                }
            }
            let from = current.phase();
            let was_late = hub_status::is_late_to_wake(&current);
            let mut next = FederatedCluster::clone(&current);
            next.status = Some(status);
            match replace_site_status(&self.api, &next).await {
                Ok(written) => {
                    self.metrics.status_write();
                    self.wrote(&written);
                    if let Some(unreadable) = hub_status::invalid_status(&current) {
                        // Logged with each write of its judgement, so once
                        // per change of what the hub cannot read.
                        let fields: Vec<String> = unreadable
                            .fields
                            .iter()
                            .map(|f| format!("{}: {}", f.path, f.reason))
                            .collect();
                        tracing::warn!(
                            site = %name,
                            unreadable = %Untrusted(fields.join("; ")),
                            more = unreadable.more,
                            "the hub cannot read part of this site's object (condition reason InvalidStatus): judged on the rest"
                        );
                    }
                    if j.restored {
                        self.metrics.status_restored(&name);
                        tracing::warn!(
                            site = %name,
                            "the site's conditions were not the hub's judgement (written by someone else, e.g. with the site's token): restored"
                        );
                    }
                    if !was_late && hub_status::is_late_to_wake(&written) {
                        self.events.record(super::events::late_to_wake(&written));
                    }
                    if from != Some(j.phase) {
                        let why = written
                            .status
                            .as_ref()
                            .and_then(|s| s.conditions.as_deref())
                            .and_then(|c| c.iter().find(|c| c.type_ == "Connected"))
                            .map(|c| c.message.clone())
                            .unwrap_or_default();
                        self.events.record(super::events::phase_changed(
                            &written,
                            from,
                            j.phase,
                            &Untrusted(&why).to_string(),
                        ));
                        tracing::info!(
                            site = %name,
                            from = from.map(|p| p.as_str()).unwrap_or("-"),
                            to = j.phase.as_str(),
                            "phase transition"
                        );
                    } else {
                        tracing::info!(
                            site = %name,
                            phase = j.phase.as_str(),
                            changes = %j.changes(current.status.as_ref()).join(","),
                            "condition transition"
                        );
                    }
                    return Ok(Reconciled {
                        phase: j.phase,
                        wrote: true,
                        conflicts,
                        requeue: j.requeue_after,
                        written: Some(Box::new(written)),
                        restored: j.restored,
                        held: false,
                    });
                }
                Err(e) if is_conflict(&e) => {
                    self.metrics.status_conflict();
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
                        tokio::time::sleep(jitter(Duration::ZERO, step)).await;
                    }
                    fresh = true;
                    current = match self.read_site(&name).await {
                        Some(Ok(read)) => Cow::Owned(read),
                        Some(Err(e)) if is_missing_object(&e, &name) => {
                            return Ok(self.gone(&name, j.phase, conflicts));
                        }
                        Some(Err(source)) => {
                            return Err(HubError::Reread { site: name, source });
                        }
                        None => return Ok(self.unanswered(&current, j.phase, conflicts)),
                    };
                }
                // Only a 404 naming the site is its deletion; one naming
                // nothing (the server not serving the resource yet) is a
                // failed write, retried.
                Err(e) if is_missing_object(&e, &name) => {
                    return Ok(self.gone(&name, j.phase, conflicts));
                }
                Err(source) => return Err(HubError::Write { site: name, source }),
            }
        }
    }
}

async fn reconcile(site: Arc<FederatedCluster>, hub: Arc<Hub>) -> Result<Action, HubError> {
    let r = hub.reconcile_site(&site).await;
    // A failed reconcile is retried by the error policy; until then every
    // event of the site goes to the controller.
    hub.scheduled(site.site_name(), r.as_ref().ok().and_then(|r| r.requeue));
    if r.as_ref().is_ok_and(|r| r.held) {
        hub.hold_for_sight(site.site_name());
    }
    hub.unwritten
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .reconciled(site.site_name(), r.is_err());
    // The hub's own schedule hands the site back when it is due, not the
    // controller's scheduler (`schedule`: a name and an instant a site).
    r?;
    Ok(Action::await_change())
}

fn error_policy(site: Arc<FederatedCluster>, err: &HubError, hub: Arc<Hub>) -> Action {
    hub.metrics.reconcile_error(err.reason());
    tracing::warn!(
        site = site.site_name(),
        error = %Untrusted(err),
        cause = %Untrusted(source_chain(err)),
        "reconcile failed, retrying"
    );
    Action::requeue(jitter(Duration::from_secs(2), Duration::from_secs(3)))
}

/// The controller over `hub`: the cache of the sites it keeps (the prober,
/// the summariser and the liveness loop read it) and the future that runs
/// it until `shutdown` turns true ([`super::run_hub`] spawns them all).
/// Every time this replica becomes leader all sites are re-judged at once,
/// since a standby did not write what it observed.
pub fn controller(
    hub: Arc<Hub>,
    watches: kube::Client,
    mut shutdown: watch::Receiver<bool>,
) -> (Store<FederatedCluster>, impl Future<Output = ()> + Send) {
    let leading = hub.leading.clone();
    let on_change = hub.clone();
    let became_leader = futures::stream::unfold(leading, move |mut rx| {
        let hub = on_change.clone();
        async move {
            loop {
                rx.changed().await.ok()?;
                let now_leading = *rx.borrow_and_update();
                hub.leadership_changed(now_leading);
                if now_leading {
                    return Some(((), rx));
                }
            }
        }
    });
    let (store, writer) = reflector::store();
    // The cache keeps each site without its managedFields (never decoded).
    let (notes, cache) = (hub.clone(), store.clone());
    // The first list and every re-list streamed where the API server
    // serves streaming lists, else paged (`site_status::watch_sites_listing`):
    // never the whole fleet in one response.
    let metrics = hub.metrics.clone();
    let told = move |mode: InitialList, why: Option<&str>| {
        metrics.site_list_mode(mode.as_str());
        match why {
            None => tracing::info!(mode = mode.as_str(), "site watch: lists sites as a stream"),
            Some(why) => tracing::warn!(
                mode = mode.as_str(),
                page = LIST_PAGE,
                why = %Untrusted(why),
                "site watch: the API server does not serve streaming lists; listing sites in pages"
            ),
        }
    };
    let listing = watch_sites_listing::<UnmanagedSite, _>(
        &Api::all(watches.clone()),
        Default::default(),
        told,
    );
    // Each site with its lease folded in; a renewal is its site again.
    // Both watches are read in bursts, each at full speed while it lists.
    let listing = read_in_bursts(listing, WATCH_PAUSE, in_a_list);
    let leases = watch_site_leases(watches);
    let leases = read_in_bursts(leases, WATCH_PAUSE, in_a_list);
    let (renewals, metrics, seen) = (hub.renewals.clone(), hub.metrics.clone(), hub.clone());
    let leases_seen = move |sees| seen.leases_seen(sees);
    let sites = with_leases(
        listing,
        leases,
        renewals,
        store.clone(),
        metrics,
        leases_seen,
    )
    .map_ok(move |mut event| {
        notes.summary_input(&mut event, &cache);
        event
    });
    let (told, filter, failed) = (hub.clone(), hub.clone(), hub.clone());
    // The site watch's errors end here, not in the controller: kube-runtime
    // backs off its whole trigger stream on an error (0.8 s doubling to
    // 30 s), which paused the hub's own schedule of due sites with it;
    // the site watch has a backoff of its own (`watch_sites`).
    let triggers = reflector(writer, sites)
        .inspect_ok(move |event| told.summary_cached(event))
        .applied_objects()
        .try_filter(move |site| std::future::ready(filter.needs_reconcile(site)))
        .filter_map(move |site| {
            std::future::ready(match site {
                Ok(site) => Some(Ok::<_, watcher::Error>(site)),
                Err(e) => {
                    tracing::debug!(error = %e, "site watch");
                    failed.watch_failed();
                    None
                }
            })
        });
    let controller = Controller::for_stream(triggers, store)
        .with_config(controller::Config::default().concurrency(RECONCILE_CONCURRENCY));
    let cache = controller.store();
    let due = hub
        .schedule
        .clone()
        .fire()
        .map(|name| reflector::ObjectRef::new(&name));
    let run = controller
        .reconcile_on(due)
        .reconcile_all_on(became_leader)
        .graceful_shutdown_on(async move {
            let _ = shutdown.wait_for(|s| *s).await;
        })
        .run(reconcile, error_policy, hub)
        .for_each(|res| async move {
            if let Err(e) = res {
                tracing::debug!(error = %e, "controller event");
            }
        });
    (cache, run)
}

/// A site's `spec.connectivity` as the hub judges it, its time zone read
/// from the platform's IANA database (jiff caches each zone it read). A
/// zone the database lacks leaves the windows unjudged (the CLI refuses
/// such a zone; docs/operations.md#expected-connectivity).
pub(crate) fn site_schedule(c: &crate::api::Connectivity) -> crate::fleet::connectivity::Schedule {
    let zone = c
        .time_zone
        .as_deref()
        .and_then(|z| jiff::tz::db().get(z).ok());
    crate::fleet::connectivity::Schedule::of(c, zone)
}
