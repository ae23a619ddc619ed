//! The fleet-wide summary kept in the `FederationStatus` singleton and
//! shown in the `kubectl fleet status` footer, computed from the sites.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::api::{
    Cascade, Correlation, DisconnectedCluster, FederatedCluster, FederationStatusStatus,
    IssuesBySeverity, MAX_CASCADES, Phase,
};
use crate::fleet::age::human_duration;

/// The phase the hub wrote for a site, Pending if nothing yet. The hub's
/// own summary counts this; views show [`shown_phase`].
pub fn effective_phase(site: &FederatedCluster) -> Phase {
    site.phase().unwrap_or(Phase::Pending)
}

/// The phase a view shows for a site, and whether it is the hub's word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShownPhase {
    /// The phase every view shows.
    pub phase: Phase,
    /// The phase the hub last wrote, if any.
    pub hub_phase: Option<Phase>,
    /// Whether `phase` is the one the hub wrote. False when no hub has
    /// judged the site, or when its heartbeat's age implies a worse phase
    /// than the hub's (see [`shown_phase`]); the view then says so.
    pub judged_by_hub: bool,
}

fn rank(phase: Phase) -> u8 {
    match phase {
        Phase::Connected => 0,
        Phase::Stale => 1,
        Phase::Unreachable => 2,
        Phase::Pending => 3,
    }
}

/// The phase a view shows for `site` at `now`: the hub's, except where the
/// heartbeat's age on the hub clock (`lastHeartbeatTime -
/// clockOffsetSeconds`) contradicts it, so no view ever shows a dead site
/// as healthy because nobody judged it since (docs/operations.md#is-a-hub-judging).
/// `hub_judging` is whether a hub is judging the fleet (None: unknown).
///
/// - A site the hub last judged `Connected` whose heartbeat is older than
///   its Unreachable threshold (10·I) is shown `Unreachable`, whatever the
///   hub: a live hub would have written `Stale` at 3·I, and the clock
///   offset the hub leaves unmeasured (within max(60 s, I)) is always
///   less than 10·I − I, so this never contradicts a live hub.
/// - While no hub is judging (`Some(false)`), a `Connected` or `Stale`
///   site is shown with the phase its heartbeat's age implies when that is
///   worse (Stale past 3·I, Unreachable past 10·I). Not done while a hub
///   judges: an edge clock up to the skew tolerance slow would look Stale.
/// - A site no hub has judged (no phase, or `Pending` while no hub judges)
///   that has a heartbeat is shown `Pending`, or the worse phase its age
///   implies.
///
/// Only demotions: the age never promotes a site, since an edge clock
/// running ahead would make a dead site's heartbeat look fresh, which only
/// the hub's own observation can rule out.
pub fn shown_phase(
    site: &FederatedCluster,
    hub_judging: Option<bool>,
    now: Timestamp,
) -> ShownPhase {
    let hub_phase = site.phase();
    let judged = |phase| ShownPhase {
        phase,
        hub_phase,
        judged_by_hub: true,
    };
    let implied_by_age = |phase| ShownPhase {
        phase,
        hub_phase,
        judged_by_hub: false,
    };
    let implied = site
        .status
        .as_ref()
        .and_then(|s| s.heartbeat_on_hub_clock())
        .map(|t| crate::fleet::phase::phase(Some(t), site.heartbeat_interval(), now));
    let silent = hub_judging == Some(false);
    match (hub_phase, implied) {
        (None, None) => implied_by_age(Phase::Pending),
        (Some(p), None) => judged(p),
        (None, Some(age)) => implied_by_age(match age {
            Phase::Connected | Phase::Pending => Phase::Pending,
            worse => worse,
        }),
        (Some(Phase::Pending), Some(age)) if silent => implied_by_age(match age {
            Phase::Connected | Phase::Pending => Phase::Pending,
            worse => worse,
        }),
        (Some(Phase::Connected), Some(Phase::Unreachable)) => implied_by_age(Phase::Unreachable),
        (Some(p @ (Phase::Connected | Phase::Stale)), Some(age))
            if silent && age != Phase::Pending && rank(age) > rank(p) =>
        {
            implied_by_age(age)
        }
        (Some(p), Some(_)) => judged(p),
    }
}

/// Why a site that is not Connected counts as disconnected, for humans.
pub fn disconnect_reason(site: &FederatedCluster, now: Timestamp) -> String {
    // The age on the hub clock (see `heartbeat_on_hub_clock`), never negative.
    let age = site.status.as_ref().and_then(|s| s.heartbeat_age(now));
    let unreadable = site
        .status
        .as_ref()
        .and_then(|s| s.unreadable())
        .is_some_and(|u| u.heartbeat());
    match (effective_phase(site), age) {
        (Phase::Connected, _) => String::new(),
        (phase, None) if unreadable => format!(
            "{}: its heartbeat cannot be read (InvalidStatus)",
            phase.as_str().to_lowercase()
        ),
        (_, None) => "never heard from".to_owned(),
        (phase, Some(age)) => format!(
            "{}: last heartbeat {} ago (interval {}s)",
            phase.as_str().to_lowercase(),
            human_duration(age),
            site.spec.heartbeat_interval_seconds
        ),
    }
}

/// Fleet-wide totals folded one site at a time, so a caller that sees the
/// fleet in pages (`kubectl fleet status`) never needs the whole list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Sites added.
    pub sites: i64,
    /// Connected sites.
    pub connected: i64,
    /// Stale sites.
    pub stale: i64,
    /// Unreachable sites.
    pub unreachable: i64,
    /// Pending sites (never judged).
    pub pending: i64,
    /// Sites counted with a phase no hub judged ([`ShownPhase::judged_by_hub`]
    /// false); always 0 in the hub's own summary.
    pub not_judged: i64,
    /// GPU capacity.
    pub gpus_total: i64,
    /// Allocatable GPUs.
    pub gpus_allocatable: i64,
    /// Ready inference services.
    pub services_ready: i64,
    /// Failed inference services.
    pub services_failed: i64,
    /// All inference services.
    pub services_total: i64,
    /// Active signals per severity.
    pub by_severity: IssuesBySeverity,
}

impl Totals {
    /// Counts one site in with the phase the hub wrote (the hub's summary).
    pub fn add(&mut self, site: &FederatedCluster) {
        self.add_as(site, effective_phase(site), true);
    }

    /// Counts one site in with the phase a view shows for it.
    pub fn add_shown(&mut self, site: &FederatedCluster, shown: &ShownPhase) {
        self.add_as(site, shown.phase, shown.judged_by_hub);
    }

    fn add_as(&mut self, site: &FederatedCluster, phase: Phase, judged_by_hub: bool) {
        self.sites += 1;
        if !judged_by_hub {
            self.not_judged += 1;
        }
        match phase {
            Phase::Connected => self.connected += 1,
            Phase::Stale => self.stale += 1,
            Phase::Unreachable => self.unreachable += 1,
            Phase::Pending => self.pending += 1,
        }
        let Some(status) = site.status.as_ref() else {
            return;
        };
        for s in status.signals() {
            self.by_severity.add(s.severity);
        }
        // Counts are what the sites wrote: sums saturate rather than
        // overflow, so no site's numbers can stop the hub or the CLI.
        if let Some(c) = &status.capacity {
            add(&mut self.gpus_total, c.gpus_total);
            add(&mut self.gpus_allocatable, c.gpus_allocatable);
        }
        if let Some(i) = &status.inference {
            add(&mut self.services_ready, i.services_ready);
            add(&mut self.services_failed, i.services_failed);
            add(&mut self.services_total, i.services_total);
        }
    }

    /// All active signals.
    pub fn active_signals(&self) -> i64 {
        self.by_severity.total()
    }
}

/// The `FederationStatus` status for `sites` with the given incidents, as of `now`.
pub fn summarize<S: std::borrow::Borrow<FederatedCluster>>(
    sites: &[S],
    correlations: Vec<Correlation>,
    cascades: Vec<Cascade>,
    now: Timestamp,
) -> FederationStatusStatus {
    let mut sorted: Vec<&FederatedCluster> = sites.iter().map(S::borrow).collect();
    sorted.sort_by(|a, b| a.site_name().cmp(b.site_name()));
    let mut totals = Totals::default();
    let mut disconnected = Vec::new();
    let mut by_cluster = BTreeMap::new();
    for site in sorted {
        totals.add(site);
        let phase = effective_phase(site);
        // A site in maintenance is judged and counted by its phase, but
        // its downtime is planned: it is not listed as disconnected.
        if phase != Phase::Connected && !site.in_maintenance(now) {
            disconnected.push(DisconnectedCluster {
                name: site.site_name().to_owned(),
                phase,
                // On the hub clock (the edge's time minus the offset the
                // hub measured), not clamped to `now`, so it changes only
                // when a heartbeat or the offset does.
                last_seen: site
                    .status
                    .as_ref()
                    .and_then(|s| s.heartbeat_on_hub_clock())
                    .map(Time),
                reason: disconnect_reason(site, now),
            });
        }
        let signals = site.status.as_ref().map_or(&[][..], |s| s.signals());
        if !signals.is_empty() {
            by_cluster.insert(site.site_name().to_owned(), count(signals.len()));
        }
    }
    FederationStatusStatus {
        total_clusters: count(sites.len()),
        connected_clusters: totals.connected,
        stale_clusters: totals.stale,
        unreachable_clusters: totals.unreachable,
        pending_clusters: totals.pending,
        disconnected_clusters: disconnected,
        gpus_total: totals.gpus_total,
        gpus_allocatable: totals.gpus_allocatable,
        services_ready: totals.services_ready,
        services_failed: totals.services_failed,
        services_total: totals.services_total,
        total_active_issues: totals.active_signals(),
        issues_by_severity: totals.by_severity,
        issues_by_cluster: by_cluster,
        cross_cluster_correlations: count(correlations.len()),
        correlations,
        cascades_detected: count(cascades.len()),
        cascades: most_recent(cascades),
        last_updated: Some(Time(now)),
        outages: Vec::new(),
        maintenance_clusters: count(
            sites
                .iter()
                .filter(|s| s.borrow().in_maintenance(now))
                .count(),
        ),
        edge_versions: edge_versions(sites.iter().map(|s| s.borrow())),
        // The hub's own record is the leader's to set (it is kept apart
        // from the summary's writes).
        hub: None,
    }
}

pub use crate::fleet::versions::OTHER_VERSIONS;

/// How many sites report each edge version (`status.observedVersion`),
/// the [`crate::api::MAX_EDGE_VERSIONS`] − 1 most common by name, the rest under
/// [`OTHER_VERSIONS`] (counted by [`crate::fleet::versions::EdgeVersions`],
/// as the CLI's views count them). Sites that never reported a version
/// are left out.
pub fn edge_versions<'a>(
    sites: impl Iterator<Item = &'a FederatedCluster>,
) -> BTreeMap<String, i64> {
    let mut versions = crate::fleet::versions::EdgeVersions::default();
    for site in sites {
        versions.add(site);
    }
    versions.summary()
}

/// Cascades come sorted oldest first; the FederationStatus keeps the most
/// recent [`MAX_CASCADES`], so its size stays bounded.
fn most_recent(mut cascades: Vec<Cascade>) -> Vec<Cascade> {
    cascades.split_off(cascades.len().saturating_sub(MAX_CASCADES))
}

fn add(total: &mut i64, n: i64) {
    *total = total.saturating_add(n);
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::fixtures::fixture_now;
    use crate::api::{Signal, SignalType};

    #[test]
    fn sites_at_their_caps_yield_a_bounded_fleet_status() {
        use crate::fleet::correlation::detect_cascades;
        use crate::fleet::correlation::{CorrelationConfig, DEFAULT_LOOKBACK, correlate};
        let sites = crate::api::fixtures::fleet_at_caps(200);
        let now = fixture_now();
        let correlations = correlate(&sites, &[], now, CorrelationConfig::default());
        let cascades = detect_cascades(&sites, now, DEFAULT_LOOKBACK);
        let all = cascades.len();
        assert_eq!(
            all,
            100 * 100,
            "every production site is a target of every signal"
        );
        let f = summarize(&sites, correlations, cascades, now);
        assert_eq!(f.cascades_detected, 10_000);
        assert_eq!(f.cascades.len(), MAX_CASCADES);
        assert_eq!(f.correlations.len(), SignalType::ALL.len());
        // Counts at i64::MAX on every site saturate instead of overflowing.
        assert_eq!(f.gpus_total, i64::MAX);
        assert_eq!(f.services_total, i64::MAX);
        assert_eq!(f.connected_clusters, 200);
        let bytes = serde_json::to_vec(&f).unwrap().len();
        assert!(bytes < 768 * 1024, "FederationStatus of {bytes} bytes");
    }

    #[test]
    fn counts_phases_issues_and_totals() {
        let sites = [
            FederatedCluster::test("c").unreachable(),
            FederatedCluster::test("a")
                .connected()
                .with_gpus(8)
                .with_inference(2, 3, 1, 4)
                .with_signal(Signal::test(SignalType::NodeNotReady, "", "Node", "n1"))
                .with_signal(Signal::test(SignalType::Evicted, "x", "Pod", "p")),
            FederatedCluster::test("b")
                .stale()
                .with_gpu_vendor("amd.com/gpu", 4, 2),
            FederatedCluster::test("d"),
        ];
        let s = summarize(&sites, vec![], vec![], fixture_now());
        assert_eq!(s.total_clusters, 4);
        assert_eq!(
            (
                s.connected_clusters,
                s.stale_clusters,
                s.unreachable_clusters,
                s.pending_clusters
            ),
            (1, 1, 1, 1)
        );
        let names: Vec<_> = s
            .disconnected_clusters
            .iter()
            .map(|d| (d.name.as_str(), d.phase))
            .collect();
        assert_eq!(
            names,
            [
                ("b", Phase::Stale),
                ("c", Phase::Unreachable),
                ("d", Phase::Pending)
            ]
        );
        assert_eq!(
            s.disconnected_clusters[0].reason,
            "stale: last heartbeat 2m30s ago (interval 30s)"
        );
        assert_eq!(s.disconnected_clusters[2].reason, "never heard from");
        assert_eq!(s.total_active_issues, 2);
        assert_eq!(
            s.issues_by_severity,
            IssuesBySeverity {
                critical: 1,
                high: 0,
                medium: 0,
                low: 1
            }
        );
        assert_eq!(s.issues_by_cluster, BTreeMap::from([("a".to_owned(), 2)]));
        assert_eq!((s.gpus_total, s.gpus_allocatable), (12, 10));
        assert_eq!(
            (s.services_ready, s.services_failed, s.services_total),
            (3, 1, 4)
        );
        assert_eq!(s.last_updated, Some(Time(fixture_now())));
    }

    fn shown(site: &FederatedCluster, judging: Option<bool>, secs: i64) -> (Phase, bool) {
        let s = shown_phase(
            site,
            judging,
            fixture_now() + jiff::SignedDuration::from_secs(secs),
        );
        (s.phase, s.judged_by_hub)
    }

    #[test]
    fn a_site_past_its_unreachable_age_is_never_shown_connected() {
        // I = 30 s; Connected as the hub last wrote it, heartbeat 5 s ago.
        let site = FederatedCluster::test("a").connected();
        for judging in [Some(true), Some(false), None] {
            assert_eq!(shown(&site, judging, 0), (Phase::Connected, true));
            // Exactly 10·I: not past it.
            let at_threshold = if judging == Some(false) {
                (Phase::Stale, false)
            } else {
                (Phase::Connected, true)
            };
            assert_eq!(shown(&site, judging, 295), at_threshold);
            assert_eq!(
                shown(&site, judging, 296),
                (Phase::Unreachable, false),
                "{judging:?}"
            );
        }
        // Past 3·I: Stale only when no hub judges (a live hub may hold an
        // edge clock up to the skew tolerance slow).
        assert_eq!(shown(&site, Some(true), 86), (Phase::Connected, true));
        assert_eq!(shown(&site, None, 86), (Phase::Connected, true));
        assert_eq!(shown(&site, Some(false), 85), (Phase::Connected, true));
        assert_eq!(shown(&site, Some(false), 86), (Phase::Stale, false));
        // A Stale site of a silent hub goes on to Unreachable by age.
        let stale = FederatedCluster::test("b").stale();
        assert_eq!(shown(&stale, Some(true), 600), (Phase::Stale, true));
        assert_eq!(shown(&stale, Some(false), 150), (Phase::Stale, true));
        assert_eq!(shown(&stale, Some(false), 151), (Phase::Unreachable, false));
        // The age is on the hub clock: an edge 10 minutes behind, measured
        // by the hub, is not aged by it.
        let behind = FederatedCluster::test("c")
            .connected()
            .heartbeat_ago(605)
            .with_clock_offset(-600);
        assert_eq!(shown(&behind, Some(false), 0), (Phase::Connected, true));
    }

    #[test]
    fn the_age_never_promotes_and_an_unjudged_site_says_so() {
        // Unreachable as the hub wrote it, with a fresh heartbeat it has not
        // judged (a fast edge clock could fake one): stays Unreachable.
        let back = FederatedCluster::test("a").unreachable().heartbeat_ago(1);
        assert_eq!(shown(&back, Some(false), 0), (Phase::Unreachable, true));
        // Heartbeating, never judged (no hub ever ran): Pending, not the hub's.
        let mut never = FederatedCluster::test("b").heartbeat_ago(5);
        assert_eq!(shown(&never, Some(false), 0), (Phase::Pending, false));
        assert_eq!(shown(&never, Some(true), 0), (Phase::Pending, false));
        assert_eq!(shown(&never, Some(false), 300), (Phase::Unreachable, false));
        // Pending as a hub wrote it, then a heartbeat while no hub judges.
        never = never.with_phase(Phase::Pending, 60);
        assert_eq!(shown(&never, Some(false), 0), (Phase::Pending, false));
        assert_eq!(shown(&never, Some(true), 0), (Phase::Pending, true));
        assert_eq!(shown(&never, Some(false), 100), (Phase::Stale, false));
        // Registered, never heard from, never judged.
        assert_eq!(
            shown(&FederatedCluster::test("c"), Some(true), 0),
            (Phase::Pending, false)
        );
        assert_eq!(
            shown(&FederatedCluster::test("d").pending(), Some(false), 0),
            (Phase::Pending, true)
        );
        // Totals count what is shown, and how many no hub judged.
        let mut t = Totals::default();
        let stale = FederatedCluster::test("e").connected();
        let at = fixture_now() + jiff::SignedDuration::from_secs(400);
        t.add_shown(&stale, &shown_phase(&stale, Some(true), at));
        t.add(&stale);
        assert_eq!((t.connected, t.unreachable, t.not_judged), (1, 1, 1));
    }

    #[test]
    fn empty_fleet() {
        let s = summarize::<FederatedCluster>(&[], vec![], vec![], fixture_now());
        assert_eq!(s.total_clusters, 0);
        assert!(s.disconnected_clusters.is_empty());
        assert_eq!(s.total_active_issues, 0);
    }
}

#[cfg(test)]
mod edge_version_tests {
    use super::*;
    use crate::api::MAX_EDGE_VERSIONS;

    fn reporting(name: &str, version: Option<&str>) -> FederatedCluster {
        let mut s = FederatedCluster::test(name);
        s.status = Some(crate::api::FederatedClusterStatus {
            observed_version: version.map(str::to_owned),
            ..Default::default()
        });
        s
    }

    #[test]
    fn versions_are_counted_and_bounded() {
        let sites = [
            reporting("a", Some("0.2.0")),
            reporting("b", Some("0.2.0")),
            reporting("c", Some("0.1.0")),
            reporting("d", None),
        ];
        let v = edge_versions(sites.iter());
        assert_eq!(
            v,
            BTreeMap::from([("0.1.0".to_owned(), 1), ("0.2.0".to_owned(), 2)])
        );
        let many: Vec<_> = (0..MAX_EDGE_VERSIONS + 10)
            .map(|i| reporting(&format!("s{i}"), Some(&format!("1.0.{i}"))))
            .collect();
        let v = edge_versions(many.iter());
        assert_eq!(v.len(), MAX_EDGE_VERSIONS);
        assert_eq!(v[OTHER_VERSIONS], 11);
        assert_eq!(v.values().sum::<i64>(), i64::try_from(many.len()).unwrap());
    }
}
