//! The fleet-wide `FederationStatus` singleton, kept by the hub leader:
//! phase counts, disconnected sites, issues, cross-cluster correlations and
//! cascades, GPU and service totals (docs/architecture.md#signals-correlation-and-remediation-policy).
//!
//! Recomputed from the controller's cache (no extra reads) when sites
//! change, debounced, and once a minute so correlations leave their window;
//! written only when something other than timestamps and ages changed.
//! With no sites and no singleton it writes nothing.
//!
//! Two summaries come out of each recomputation ([`next_summary`]): the
//! full one, every incident with all its sites, kept in memory
//! ([`FleetView::summary`]: the REST API, the metrics and the remediation
//! decisions read it), and the one written, each list cut to its worst
//! entries with exact counts of the rest (`fleet::summary::bound`), so the
//! object stays far under the API server's size limit whatever the
//! fleet's size (docs/scaling.md#the-size-of-federationstatus).
//!
//! The leader's liveness record (`status.hub`, [`run_liveness`]) is kept
//! apart from the summary: a merge patch of `status.hub` alone every
//! liveness interval, whatever the fleet's size, while the summary write
//! carries the record it read over, guarded by the resourceVersion.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::Api;
use kube::runtime::reflector::Store;
use tokio::sync::watch;

use crate::api::{
    FederatedCluster, FederationStatus, FederationStatusStatus, GroupedOutage, HubLiveness,
    IncidentDetection, MAX_HUB_IDENTITY_CHARS,
};
use crate::fleet::correlation::{CorrelationConfig, DEFAULT_LOOKBACK, correlate, detect_cascades};
use crate::fleet::liveness::LIVENESS_INTERVAL;
use crate::fleet::outage::{OutageConfig, grouped_outages};
use crate::fleet::summary::{bound, set_outages, summarize};
use crate::k8s::federation_status::{
    create_federation_status, get_federation_status, record_hub_liveness, replace_federation_status,
};
use crate::k8s::{is_conflict, source_chain};

use super::view::FleetView;

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

impl FederationConfig {
    /// The parameters as `FederationStatus` records them.
    pub fn detection(&self) -> IncidentDetection {
        crate::fleet::incident::detection_of(self.correlation, self.cascade_lookback, &self.outage)
    }
}

/// What one recomputation gives: the full summary and the one to write.
#[derive(Clone, Debug, PartialEq)]
pub struct NextSummary {
    /// Every incident with all its sites (held in memory, never written).
    pub full: FederationStatusStatus,
    /// The same cut to fit the object (`fleet::summary::bound`).
    pub written: FederationStatusStatus,
}

/// The next summary from the sites, carrying incident ids, correlations'
/// firstSeen and cascades' detection times over from `previous` (the
/// summaries this hub knows, the first one that holds an incident
/// winning: the singleton as read, then its own last full summary).
pub fn next_summary<S: std::borrow::Borrow<FederatedCluster>>(
    sites: &[S],
    previous: &[&FederationStatusStatus],
    now: Timestamp,
    cfg: &FederationConfig,
) -> NextSummary {
    // Every correlation is written (at most one per signal type), so the
    // first summary that has any holds them all.
    let prev_corr = previous
        .iter()
        .find(|p| !p.correlations.is_empty())
        .map(|p| p.correlations.as_slice())
        .unwrap_or_default();
    // `grouped_outages` takes an outage's id and keeps each of its sites
    // until that site is back: the sites are the union of what the
    // singleton (cut) and this hub's full summary name.
    // Each outage's names in a set while they are merged: an outage of
    // 100,000 sites named by both summaries took tens of seconds checked
    // name by name against a list (docs/benchmarks-100k.md#a-fleet-wide-silence-at-100000-sites).
    let mut prev_outages: Vec<(GroupedOutage, HashSet<&str>)> = Vec::new();
    for o in previous.iter().flat_map(|p| &p.outages) {
        match prev_outages
            .iter_mut()
            .find(|(p, _)| p.group_by == o.group_by && p.value == o.value)
        {
            Some((p, named)) => {
                for c in &o.clusters {
                    if named.insert(c) {
                        p.clusters.push(c.clone());
                    }
                }
            }
            None => prev_outages.push((o.clone(), o.clusters.iter().map(String::as_str).collect())),
        }
    }
    let prev_outages: Vec<GroupedOutage> = prev_outages.into_iter().map(|(o, _)| o).collect();
    let mut detected: HashMap<String, &Time> = HashMap::new();
    for c in previous.iter().flat_map(|p| &p.cascades) {
        if let Some(t) = &c.detected_time {
            detected.entry(c.key()).or_insert(t);
        }
    }
    let correlations = correlate(sites, prev_corr, now, cfg.correlation);
    let mut cascades = detect_cascades(sites, now, cfg.cascade_lookback);
    for c in &mut cascades {
        c.detected_time = Some(detected.get(&c.key()).map_or(Time(now), |t| (*t).clone()));
    }
    let mut full = summarize(sites, correlations, cascades, now);
    // The hub computing this is the one judging: phases as it wrote them.
    set_outages(
        &mut full,
        grouped_outages(sites, &prev_outages, None, now, &cfg.outage),
    );
    full.detection = Some(cfg.detection());
    crate::fleet::factors::set_common_factors(&mut full, sites);
    let written = bound(&full, sites);
    NextSummary { full, written }
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

/// A failed write of the singleton.
#[derive(Debug, thiserror::Error)]
#[error("writing FederationStatus fleet")]
pub struct FederationError(#[source] kube::Error);

/// One recomputation: reads the singleton, writes it if the summary changed.
/// Returns whether it wrote. Sets the fleet gauges, and counts each cascade
/// neither the singleton nor this hub's last full summary knew (so a new
/// leader, which computed the summary as a standby, does not count a
/// cascade again; a hub just started counts only those whose target saw
/// the signal after it started, as it counts decisions).
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
        let memory = view.summary();
        let previous: Vec<&FederationStatusStatus> =
            held.into_iter().chain(memory.as_deref()).collect();
        let NextSummary { full, mut written } =
            next_summary(sites, &previous, Timestamp::now(), cfg);
        // The liveness record is the leader's to write; carried over as read.
        written.hub = held.and_then(|h| h.hub.clone());
        let known: std::collections::HashSet<String> = previous
            .iter()
            .flat_map(|p| &p.cascades)
            .map(|c| c.key())
            .collect();
        let new_cascades: Vec<_> = full
            .cascades
            .iter()
            .filter(|c| {
                !known.contains(&c.key())
                    && (memory.is_some() || c.target_first_seen.0 > view.started)
            })
            .map(|c| (c.source_tier, c.target_tier))
            .collect();
        view.publish(sites, full, true);
        for (source, target) in new_cascades {
            view.metrics.new_cascade(source, target);
        }
        if !differs(held, &written) {
            return Ok(false);
        }
        let held_copy = held.cloned();
        let base = match current {
            Some(c) => c,
            None => {
                match create_federation_status(api, &FederationStatus::singleton(written.clone()))
                    .await
                {
                    Ok(created) => created,
                    Err(e) if is_conflict(&e) => continue,
                    Err(e) => return Err(FederationError(e)),
                }
            }
        };
        let mut obj = base;
        obj.status = Some(written);
        match replace_federation_status(api, &obj).await {
            Ok(_) => {
                if let Some(full) = view.summary() {
                    view.record_incident_events(held_copy.as_ref(), full);
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
    hub: Arc<super::hub::Hub>,
    store: Store<FederatedCluster>,
    view: Arc<FleetView>,
    cfg: FederationConfig,
    mut shutdown: watch::Receiver<bool>,
) {
    let (changed, leading) = (hub.summary_changes(), hub.leading());
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
        // The cached objects themselves, shared (a deep copy of every site
        // at each recomputation was most of a large hub's steady CPU), as
        // the leader judges them now: a transition not written yet stands
        // in (`Hub::judged_sites`), so the summary does not wait for the
        // write rate.
        let judged = hub.judged_sites(store.state(), &view.unwritten(), hub.now());
        let sites = judged.sites;
        view.hold_unwritten(judged.unwritten);
        if !*leading.borrow() {
            let held = view.summary();
            let next = next_summary(
                &sites,
                &held.as_deref().into_iter().collect::<Vec<_>>(),
                Timestamp::now(),
                &cfg,
            );
            view.publish(&sites, next.full, false);
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
    let period =
        super::clock::scaled(LIVENESS_INTERVAL, interval_scale).max(Duration::from_secs(1));
    let secs = i64::try_from(period.as_secs()).unwrap_or(i64::MAX);
    let secs = if period.subsec_nanos() > 0 {
        secs.saturating_add(1)
    } else {
        secs
    };
    (period, secs)
}

/// The hub's liveness, every liveness period until shutdown (every second
/// until the first record or read, and while a leader cannot see:
/// [`super::hub::Hub::waits_for_sight`]) (docs/operations.md#is-a-hub-judging). While this replica leads and has
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
        // A leader that cannot see (an API server restarting) records as
        // soon as it sees again: at 100,000 sites the record once came
        // 13 s after the hub judged again, at its next period.
        if hub.waits_for_sight(&sites) {
            settled = false;
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
pub(crate) mod tests {
    use super::*;
    use crate::fleet::fixtures::fixture_now;
    use crate::operator::view::only_heartbeat_moved;

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
        let cfg = FederationConfig::default();
        let a = next_summary(&sites, &[], fixture_now(), &cfg).written;
        let b = next_summary(
            &sites,
            &[&a],
            fixture_now() + jiff::SignedDuration::from_secs(30),
            &cfg,
        )
        .written;
        assert_ne!(
            a.disconnected_clusters[0].reason,
            b.disconnected_clusters[0].reason
        );
        assert!(!differs(Some(&a), &b));
        assert!(differs(None, &b));
        let c = next_summary(
            &[FederatedCluster::test("a").connected()],
            &[&a],
            fixture_now(),
            &cfg,
        )
        .written;
        assert!(differs(Some(&a), &c), "a phase change is a change");
    }

    /// `n` sites dark for two days, in 20 regions, as a fleet-wide outage
    /// leaves them (docs/scaling.md#the-size-of-federationstatus): names
    /// `site-000000`…, each with one CrashLoopBackOff its edge reported
    /// before it went dark when `signal`.
    pub(crate) fn long_dark(n: usize, signal: bool) -> Vec<FederatedCluster> {
        use crate::api::{Phase, Signal, SignalType};
        (0..n)
            .map(|i| {
                let site = FederatedCluster::test(&format!("site-{i:06}"))
                    .with_region(&format!("region-{:02}", i % 20))
                    .heartbeat_ago(2 * 86_400)
                    .with_phase(Phase::Unreachable, 2 * 86_400 - 300);
                if signal {
                    site.with_signal(
                        Signal::test(SignalType::CrashLoopBackOff, "shop", "Deployment", "web")
                            .seen(2 * 86_400 + 600, 2 * 86_400),
                    )
                } else {
                    site
                }
            })
            .collect()
    }

    /// The object the hub writes for `sites`, with the longest liveness
    /// record and the metadata the API server adds.
    fn written_object(sites: &[FederatedCluster], cfg: &FederationConfig) -> FederationStatus {
        written_object_of(sites, cfg, |_| {})
    }

    /// The object written for `sites` once `tweak` changed the full summary.
    fn written_object_of(
        sites: &[FederatedCluster],
        cfg: &FederationConfig,
        tweak: impl FnOnce(&mut FederationStatusStatus),
    ) -> FederationStatus {
        let mut full = next_summary(sites, &[], fixture_now(), cfg).full;
        tweak(&mut full);
        let mut written = bound(&full, sites);
        written.hub = Some(HubLiveness {
            leader: "l".repeat(MAX_HUB_IDENTITY_CHARS),
            leader_since: Some(Time(fixture_now())),
            last_judgement_time: Time(fixture_now()),
            interval_seconds: 15,
        });
        let mut obj = FederationStatus::singleton(written);
        obj.metadata.uid = Some("00000000-0000-0000-0000-000000000000".into());
        obj.metadata.resource_version = Some("18446744073709551615".into());
        obj.metadata.generation = Some(1);
        obj.metadata.creation_timestamp = Some(Time(fixture_now()));
        obj
    }

    fn json_bytes(obj: &FederationStatus) -> usize {
        serde_json::to_vec(obj).unwrap().len()
    }

    #[test]
    fn a_long_outage_of_the_whole_fleet_keeps_the_summary_small() {
        let cfg = FederationConfig::default();
        for (n, signal) in [
            (20_000, false),
            (100_000, false),
            (20_000, true),
            (100_000, true),
        ] {
            let sites = long_dark(n, signal);
            let obj = written_object(&sites, &cfg);
            let bytes = json_bytes(&obj);
            eprintln!(
                "FederationStatus fleet, {n} long-dark sites, signal {signal}: {bytes} bytes"
            );
            // The unbounded summary was 3.1 MB at 20,000 and 15.4 MB at
            // 100,000 (3.4 and 17 MB with a signal each).
            assert!(bytes < 64 * 1024, "{n} sites: {bytes} bytes");
            let s = obj.status.unwrap();
            let n = i64::try_from(n).unwrap();
            assert_eq!(
                (s.unreachable_clusters, s.disconnected_clusters_total),
                (n, n)
            );
            assert_eq!(s.disconnected_clusters.len(), crate::api::MAX_DISCONNECTED);
            assert_eq!(s.clusters_with_issues, if signal { n } else { 0 });
            assert_eq!(s.outage_count(), 20);
            assert_eq!(s.outages.iter().map(|o| o.clusters_total).sum::<i64>(), n);
        }
    }

    /// The largest object any fleet can make the hub write: 100,000 dark
    /// sites with the longest names in 1,000 regions of the longest values,
    /// a third of them in correlations (the others long dark) and reporting its own edge version of the
    /// longest (escaped) text, plus 200 sites with every edge-owned field at
    /// its cap making 10,000 cascades of the longest workloads.
    #[test]
    fn the_summary_stays_under_its_size_limit_whatever_the_sites_write() {
        use crate::api::{MAX_FEDERATION_STATUS_BYTES, Phase, Signal, SignalType, Tier};
        let long = |prefix: String, n: usize| format!("{prefix:0<n$}");
        let mut sites: Vec<FederatedCluster> = (0..100_000)
            .map(|i| {
                let (phase, tier) = match i % 3 {
                    0 => (Phase::Unreachable, Tier::Critical),
                    1 => (Phase::Stale, Tier::Standard),
                    _ => (Phase::Pending, Tier::NonCritical),
                };
                // A site's signals are evidence only while the hub hears
                // from it: the Stale third heard from a minute ago makes
                // the correlations as large as they get.
                let heard = if phase == Phase::Stale { 60 } else { 86_400 };
                let mut site = FederatedCluster::test(&long(format!("s{i}-"), 63))
                    .with_tier(tier)
                    .with_region(&long(format!("r{}-", i % 1000), 63))
                    .heartbeat_ago(heard)
                    .with_phase(phase, 86_000)
                    .with_signal(
                        Signal::test(SignalType::ALL[i % SignalType::ALL.len()], "ns", "Pod", "p")
                            .seen(600, 60),
                    );
                site.status.as_mut().unwrap().observed_version =
                    Some(format!("{i}{}", "\0".repeat(120)));
                site
            })
            .collect();
        sites.extend(crate::fleet::fixtures::fleet_at_caps(200));
        let cfg = FederationConfig {
            outage: OutageConfig {
                window: Duration::from_secs(86_400),
                ..OutageConfig::default()
            },
            ..FederationConfig::default()
        };
        // Every incident with the most common factors of the longest text
        // (4-byte characters): more than any fleet makes.
        let widest = crate::api::CommonFactor {
            attribute: "label".into(),
            key: Some("𝔘".repeat(crate::api::MAX_FACTOR_KEY_CHARS)),
            value: "𝔘".repeat(crate::api::MAX_FACTOR_VALUE_CHARS),
            affected: i64::MAX,
            affected_total: i64::MAX,
            unaffected: i64::MAX,
            unaffected_total: i64::MAX,
        };
        let most = vec![widest; crate::api::MAX_COMMON_FACTORS];
        let plain = written_object(&sites, &cfg);
        let obj = written_object_of(&sites, &cfg, |full| {
            for c in &mut full.correlations {
                c.common_factors.clone_from(&most);
            }
            for c in &mut full.cascades {
                c.common_factors.clone_from(&most);
            }
            for o in &mut full.outages {
                o.common_factors.clone_from(&most);
            }
        });
        let bytes = json_bytes(&obj);
        let s = obj.status.as_ref().unwrap();
        eprintln!("worst-case FederationStatus fleet: {bytes} bytes");
        // The factors have a budget of their own: they push no incident
        // out, and the first incidents keep theirs.
        let p = plain.status.as_ref().unwrap();
        assert_eq!(
            (s.correlations.len(), s.cascades.len(), s.outages.len()),
            (p.correlations.len(), p.cascades.len(), p.outages.len())
        );
        assert_eq!(s.correlations[0].common_factors, most);
        let factor_bytes: usize = s
            .correlations
            .iter()
            .map(|c| &c.common_factors)
            .chain(s.cascades.iter().map(|c| &c.common_factors))
            .chain(s.outages.iter().map(|o| &o.common_factors))
            .filter(|f| !f.is_empty())
            .map(|f| serde_json::to_vec(f).unwrap().len())
            .sum();
        assert!(factor_bytes <= 16 * 1024, "{factor_bytes}");
        // Every list is cut, and counted whole.
        assert_eq!(s.total_clusters, 100_200);
        assert_eq!(s.disconnected_clusters_total, 100_000);
        assert_eq!(s.clusters_with_issues, 100_200);
        assert_eq!(s.cascades_detected, 10_000);
        assert_eq!(s.outage_count(), 1_000);
        assert_eq!(s.correlations.len(), SignalType::ALL.len());
        assert!(s.correlations.iter().all(|c| c.clusters_total > 3_000));
        assert!(
            s.edge_versions
                .contains_key(crate::fleet::summary::OTHER_VERSIONS)
        );
        // The API server adds managedFields: one entry per key of the two
        // maps (their keys again, at most), and a few hundred bytes more.
        let map_keys: usize = s
            .issues_by_cluster
            .keys()
            .chain(s.edge_versions.keys())
            .map(|k| serde_json::to_vec(k).unwrap().len() + 8)
            .sum();
        let stored = bytes + map_keys + 2 * 1024;
        assert!(
            stored <= MAX_FEDERATION_STATUS_BYTES,
            "{bytes} bytes, {stored} with managedFields"
        );
    }

    /// With two site tokens, 100 forged cascades stamped newer than the one
    /// real cascade used to push it out of the 100 the singleton keeps
    /// (issue 30): the real one stays, and first, since the hub knew it
    /// first; and one reaching more sites beats any forged pair.
    #[test]
    fn forged_cascades_cannot_push_a_real_one_out() {
        use crate::api::{Environment, MAX_CASCADES, Signal, SignalType};
        let crash = |workload: &str, first_ago: i64| {
            Signal::test(SignalType::CrashLoopBackOff, "shop", "Deployment", workload)
                .seen(first_ago, 5)
        };
        let site = |name: &str, env: Environment| {
            FederatedCluster::test(name)
                .with_environment(env)
                .connected()
        };
        let real = vec![
            site("stg", Environment::Staging).with_signal(crash("web", 7200)),
            site("prod-a", Environment::Production).with_signal(crash("web", 3600)),
        ];
        let forgers = |n: usize| {
            let mut stg = site("forger-stg", Environment::Staging);
            let mut prod = site("forger-prod", Environment::Production);
            for i in 0..n {
                stg = stg.with_signal(crash(&format!("w{i:03}"), 60));
                prod = prod.with_signal(crash(&format!("w{i:03}"), 0));
            }
            [stg, prod]
        };
        let cfg = FederationConfig::default();
        let first = next_summary(
            &real,
            &[],
            fixture_now() - jiff::SignedDuration::from_secs(60),
            &cfg,
        );
        let mut sites = real.clone();
        sites.extend(forgers(MAX_CASCADES));
        let next = next_summary(&sites, &[&first.written, &first.full], fixture_now(), &cfg);
        let w = &next.written;
        assert_eq!(
            w.cascades_detected,
            1 + i64::try_from(MAX_CASCADES).unwrap()
        );
        assert_eq!(w.cascades[0].target, "prod-a", "{:?}", w.cascades[0]);
        assert_eq!(
            w.cascades[0].detected_time,
            first.written.cascades[0].detected_time
        );
        assert_eq!(
            next.full.cascades.len(),
            MAX_CASCADES + 1,
            "the hub keeps them all"
        );

        // The forgers came first; the real failure reaches two production sites.
        let mut sites: Vec<FederatedCluster> = forgers(MAX_CASCADES).into();
        let before = next_summary(
            &sites,
            &[],
            fixture_now() - jiff::SignedDuration::from_secs(60),
            &cfg,
        );
        sites.extend(real);
        sites.push(site("prod-b", Environment::Production).with_signal(crash("web", 1800)));
        let next = next_summary(&sites, &[&before.written], fixture_now(), &cfg);
        let targets: Vec<&str> = next.written.cascades[..2]
            .iter()
            .map(|c| c.target.as_str())
            .collect();
        assert_eq!(targets, ["prod-a", "prod-b"]);
    }
}
