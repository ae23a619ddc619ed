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

/// The phase shown for a site: what the hub wrote, Pending if nothing yet.
pub fn effective_phase(site: &FederatedCluster) -> Phase {
    site.phase().unwrap_or(Phase::Pending)
}

/// Why a site that is not Connected counts as disconnected, for humans.
pub fn disconnect_reason(site: &FederatedCluster, now: Timestamp) -> String {
    // The age on the hub clock (see `heartbeat_on_hub_clock`), never negative.
    let age = site.status.as_ref().and_then(|s| s.heartbeat_age(now));
    match (effective_phase(site), age) {
        (Phase::Connected, _) => String::new(),
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
    /// Counts one site in.
    pub fn add(&mut self, site: &FederatedCluster) {
        self.sites += 1;
        match effective_phase(site) {
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
        if phase != Phase::Connected {
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
        // The hub's own record is the leader's to set (it is kept apart
        // from the summary's writes).
        hub: None,
    }
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

    #[test]
    fn empty_fleet() {
        let s = summarize::<FederatedCluster>(&[], vec![], vec![], fixture_now());
        assert_eq!(s.total_clusters, 0);
        assert!(s.disconnected_clusters.is_empty());
        assert_eq!(s.total_active_issues, 0);
    }
}
