//! The operator's Prometheus metrics (docs/observability.md), exposed as OpenMetrics
//! text at `/metrics` by [`super::server`].
//!
//! One [`Metrics`] per process; the hub and the edge register different
//! families (see [`Metrics::new`]). Names on the wire, as
//! `prometheus-client` writes them (counters always end in `_total`):
//!
//! | on the wire | type | labels |
//! | --- | --- | --- |
//! | `federation_clusters_total` | gauge | `status` |
//! | `federation_health_check_duration_seconds` | histogram | `cluster` |
//! | `federation_cluster_nodes` | gauge | `cluster`, `region` |
//! | `cross_cluster_issues_total` | counter | `signal_type` |
//! | `cross_cluster_correlations_active` | gauge | |
//! | `cascade_detected_total` | counter | `source_tier`, `target_tier` |
//! | `federation_remediation_policy_applied_total` | counter | `tier`, `mode` |
//!
//! plus the `fleet_hub_*` and `fleet_edge_*` families below. Fleet-wide
//! counters are only moved by the leader (the callers check); a standby
//! exports the gauges it computes from its own cache.

use std::sync::atomic::{AtomicBool, Ordering};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

use crate::api::{FederatedCluster, Phase, Severity, SignalType, Tier};
use crate::fleet::policy::policy_for;
use crate::fleet::summary::effective_phase;

/// The `Content-Type` of [`Metrics::encode`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Every metric family name as it appears on the wire, hub role first.
/// The alert rules and the dashboard may only query these.
pub const HUB_METRIC_NAMES: &[&str] = &[
    "federation_clusters_total",
    "federation_health_check_duration_seconds",
    "federation_cluster_nodes",
    "cross_cluster_issues_total",
    "cross_cluster_correlations_active",
    "cascade_detected_total",
    "federation_remediation_policy_applied_total",
    "fleet_hub_reconciles_total",
    "fleet_hub_reconcile_errors_total",
    "fleet_hub_status_writes_total",
    "fleet_hub_status_conflicts_total",
    "fleet_hub_watch_event_lag_seconds",
    "fleet_hub_leader",
];

/// Metric family names of the edge role, as on the wire.
pub const EDGE_METRIC_NAMES: &[&str] = &[
    "fleet_edge_reports_total",
    "fleet_edge_report_bytes",
    "fleet_edge_report_failures_total",
    "fleet_edge_credential_expiry_timestamp_seconds",
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ClusterLabels {
    cluster: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NodeLabels {
    cluster: String,
    region: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SignalLabels {
    signal_type: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CascadeLabels {
    source_tier: &'static str,
    target_tier: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PolicyLabels {
    tier: &'static str,
    mode: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CauseLabels {
    cause: &'static str,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn probe_histogram() -> Histogram {
    // 5 ms … ~41 s: a probe is a few API round trips, bounded by its timeout.
    Histogram::new(exponential_buckets(0.005, 2.0, 14))
}

fn lag_histogram() -> Histogram {
    // 0.25 s … ~17 min: a hub that falls behind shows up in the upper buckets.
    Histogram::new(exponential_buckets(0.25, 2.0, 13))
}

fn bytes_histogram() -> Histogram {
    // 64 B … 256 KiB: heartbeat-only patches are ~100 B, full reports a few KiB.
    Histogram::new(exponential_buckets(64.0, 4.0, 7))
}

/// Which metrics a process exposes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricsRole {
    /// The hub: the seven federation metrics and the `fleet_hub_*` families.
    Hub,
    /// The edge: the `fleet_edge_*` families.
    Edge,
}

/// The operator's metrics and the registry that exposes them.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    per_cluster_histograms: AtomicBool,
    clusters: Family<StatusLabels, Gauge>,
    health_check: HistogramFamily<ClusterLabels>,
    nodes: Family<NodeLabels, Gauge>,
    issues: Family<SignalLabels, Counter>,
    correlations_active: Gauge,
    cascades: Family<CascadeLabels, Counter>,
    policy_applied: Family<PolicyLabels, Counter>,
    reconciles: Counter,
    reconcile_errors: Family<ReasonLabels, Counter>,
    writes: Counter,
    conflicts: Counter,
    event_lag: Histogram,
    leader: Gauge,
    reports: Counter,
    report_bytes: Histogram,
    report_failures: Family<CauseLabels, Counter>,
    credential_expiry: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new(MetricsRole::Hub)
    }
}

impl Metrics {
    /// The metrics of `role`, registered for exposition.
    pub fn new(role: MetricsRole) -> Self {
        let mut m = Metrics {
            registry: Registry::default(),
            per_cluster_histograms: AtomicBool::new(true),
            clusters: Family::default(),
            health_check: Family::new_with_constructor(probe_histogram),
            nodes: Family::default(),
            issues: Family::default(),
            correlations_active: Gauge::default(),
            cascades: Family::default(),
            policy_applied: Family::default(),
            reconciles: Counter::default(),
            reconcile_errors: Family::default(),
            writes: Counter::default(),
            conflicts: Counter::default(),
            event_lag: lag_histogram(),
            leader: Gauge::default(),
            reports: Counter::default(),
            report_bytes: bytes_histogram(),
            report_failures: Family::default(),
            credential_expiry: Gauge::default(),
        };
        let r = &mut m.registry;
        match role {
            MetricsRole::Hub => {
                r.register(
                    "federation_clusters_total",
                    "Sites per phase (connected, stale, unreachable, pending), from the hub's cache",
                    m.clusters.clone(),
                );
                r.register_with_unit(
                    "federation_health_check_duration",
                    "Duration of the hub's health probes of Pull-mode sites",
                    Unit::Seconds,
                    m.health_check.clone(),
                );
                r.register(
                    "federation_cluster_nodes",
                    "Nodes of each site, as last reported",
                    m.nodes.clone(),
                );
                r.register(
                    "cross_cluster_issues",
                    "New signals seen by the leading hub, by signal type",
                    m.issues.clone(),
                );
                r.register(
                    "cross_cluster_correlations_active",
                    "Active cross-cluster correlations",
                    m.correlations_active.clone(),
                );
                r.register(
                    "cascade_detected",
                    "New staging-to-production cascades recorded by the leading hub",
                    m.cascades.clone(),
                );
                r.register(
                    "federation_remediation_policy_applied",
                    "Remediation policy decisions for new signals, by site tier and mode",
                    m.policy_applied.clone(),
                );
                r.register(
                    "fleet_hub_reconciles",
                    "Site reconciles run",
                    m.reconciles.clone(),
                );
                r.register(
                    "fleet_hub_reconcile_errors",
                    "Site reconciles that failed, by reason",
                    m.reconcile_errors.clone(),
                );
                r.register(
                    "fleet_hub_status_writes",
                    "Site status writes that succeeded (one per transition)",
                    m.writes.clone(),
                );
                r.register(
                    "fleet_hub_status_conflicts",
                    "Site status writes answered 409 and retried after a re-read",
                    m.conflicts.clone(),
                );
                r.register_with_unit(
                    "fleet_hub_watch_event_lag",
                    "Age of a new heartbeat (edge clock) when the hub judged it",
                    Unit::Seconds,
                    m.event_lag.clone(),
                );
                // Every series a fleet can have, present at 0 from the start:
                // alerts and rate() see the first event, and every name in
                // the rules and the dashboard is on the wire.
                for p in Phase::ALL {
                    let _ = m.clusters.get_or_create(&StatusLabels {
                        status: phase_label(*p),
                    });
                }
                for t in SignalType::ALL {
                    let _ = m.issues.get_or_create(&SignalLabels {
                        signal_type: t.as_str(),
                    });
                }
                for source in Tier::ALL {
                    for target in Tier::ALL {
                        let _ = m.cascades.get_or_create(&CascadeLabels {
                            source_tier: source.as_str(),
                            target_tier: target.as_str(),
                        });
                    }
                    for severity in Severity::ALL {
                        let _ = m.policy_applied.get_or_create(&PolicyLabels {
                            tier: source.as_str(),
                            mode: policy_for(Some(*source), *severity).mode.as_str(),
                        });
                    }
                }
                for &reason in HUB_ERROR_REASONS {
                    // Present at 0, so a rate() over them starts right away.
                    let _ = m.reconcile_errors.get_or_create(&ReasonLabels { reason });
                }
                r.register(
                    "fleet_hub_leader",
                    "1 while this hub replica leads, 0 while standby",
                    m.leader.clone(),
                );
            }
            MetricsRole::Edge => {
                r.register(
                    "fleet_edge_reports",
                    "Status reports the hub accepted",
                    m.reports.clone(),
                );
                r.register_with_unit(
                    "fleet_edge_report",
                    "Size of each accepted status patch body",
                    Unit::Bytes,
                    m.report_bytes.clone(),
                );
                r.register(
                    "fleet_edge_report_failures",
                    "Failed report attempts, by cause",
                    m.report_failures.clone(),
                );
                r.register_with_unit(
                    "fleet_edge_credential_expiry_timestamp",
                    "Expiry of the edge's hub token as a Unix timestamp (0 when unknown)",
                    Unit::Seconds,
                    m.credential_expiry.clone(),
                );
            }
        }
        m
    }

    /// Drops the `cluster` label of `federation_health_check_duration_seconds`
    /// (one fleet-wide histogram instead of one per site) when `per_cluster`
    /// is false.
    pub fn with_per_cluster_histograms(self, per_cluster: bool) -> Self {
        self.per_cluster_histograms
            .store(per_cluster, Ordering::Relaxed);
        self
    }

    /// The OpenMetrics text of every registered family.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    /// One health probe of `cluster` took `seconds`. The Pull-mode prober
    /// calls this; Push sites are not probed, so they have no series.
    pub fn observe_health_check(&self, cluster: &str, seconds: f64) {
        let cluster = if self.per_cluster_histograms.load(Ordering::Relaxed) {
            cluster.to_owned()
        } else {
            String::new()
        };
        self.health_check
            .get_or_create(&ClusterLabels { cluster })
            .observe(seconds);
    }

    /// Drops the probe-duration series of a site no longer probed (deleted,
    /// or moved to Push), so the series do not outgrow the fleet.
    pub fn forget_health_check(&self, cluster: &str) {
        if self.per_cluster_histograms.load(Ordering::Relaxed) {
            self.health_check.remove(&ClusterLabels {
                cluster: cluster.to_owned(),
            });
        }
    }

    /// Sets the per-phase and per-site gauges from the hub's cache.
    pub fn set_fleet<S: std::borrow::Borrow<FederatedCluster>>(
        &self,
        sites: &[S],
        correlations_active: usize,
    ) {
        let mut counts = [0i64; 4];
        for s in sites.iter().map(S::borrow) {
            counts[phase_index(effective_phase(s))] += 1;
        }
        for p in Phase::ALL {
            self.clusters
                .get_or_create(&StatusLabels {
                    status: phase_label(*p),
                })
                .set(counts[phase_index(*p)]);
        }
        // Deleted sites must disappear, so the family is rebuilt.
        self.nodes.clear();
        for s in sites.iter().map(S::borrow) {
            let Some(n) = s.status.as_ref().and_then(|st| st.node_count) else {
                continue;
            };
            self.nodes
                .get_or_create(&NodeLabels {
                    cluster: s.site_name().to_owned(),
                    region: s.spec.region.clone().unwrap_or_default(),
                })
                .set(n);
        }
        self.correlations_active
            .set(i64::try_from(correlations_active).unwrap_or(i64::MAX));
    }

    /// A signal the leading hub has not seen before, on a site of `tier`:
    /// counts the issue and the policy decision made for it.
    pub fn new_signal(&self, signal_type: SignalType, tier: Tier, severity: Severity) {
        self.issues
            .get_or_create(&SignalLabels {
                signal_type: signal_type.as_str(),
            })
            .inc();
        let policy = policy_for(Some(tier), severity);
        self.policy_applied
            .get_or_create(&PolicyLabels {
                tier: tier.as_str(),
                mode: policy.mode.as_str(),
            })
            .inc();
    }

    /// A cascade the leading hub recorded for the first time.
    pub fn new_cascade(&self, source_tier: Tier, target_tier: Tier) {
        self.cascades
            .get_or_create(&CascadeLabels {
                source_tier: source_tier.as_str(),
                target_tier: target_tier.as_str(),
            })
            .inc();
    }

    /// A site reconcile started.
    pub fn reconcile(&self) {
        self.reconciles.inc();
    }

    /// A site reconcile failed for `reason`.
    pub fn reconcile_error(&self, reason: &'static str) {
        self.reconcile_errors
            .get_or_create(&ReasonLabels { reason })
            .inc();
    }

    /// A site status write succeeded.
    pub fn status_write(&self) {
        self.writes.inc();
    }

    /// A site status write met a 409 and is retried.
    pub fn status_conflict(&self) {
        self.conflicts.inc();
    }

    /// The hub judged a heartbeat `seconds` old.
    pub fn event_lag(&self, seconds: f64) {
        self.event_lag.observe(seconds.max(0.0));
    }

    /// This replica leads (or not).
    pub fn set_leader(&self, leading: bool) {
        self.leader.set(i64::from(leading));
    }

    /// The hub accepted a report of `bytes`.
    pub fn report_sent(&self, bytes: u64) {
        self.reports.inc();
        self.report_bytes.observe(bytes as f64);
    }

    /// A report attempt failed with `cause` (an `EdgeError::cause_name`).
    pub fn report_failed(&self, cause: &'static str) {
        self.report_failures
            .get_or_create(&CauseLabels { cause })
            .inc();
    }

    /// The edge's token expires at `unix_seconds` (0: unknown).
    pub fn set_credential_expiry(&self, unix_seconds: i64) {
        self.credential_expiry.set(unix_seconds);
    }

    /// A plain snapshot `(reconciles, writes, conflicts, errors)` of the hub counters.
    pub fn snapshot(&self) -> (u64, u64, u64, u64) {
        let errors = HUB_ERROR_REASONS
            .iter()
            .map(|&reason| {
                self.reconcile_errors
                    .get_or_create(&ReasonLabels { reason })
                    .get()
            })
            .sum();
        (
            self.reconciles.get(),
            self.writes.get(),
            self.conflicts.get(),
            errors,
        )
    }
}

/// Every `reason` label of `fleet_hub_reconcile_errors_total`.
pub const HUB_ERROR_REASONS: &[&str] = &["reread", "write", "conflicts"];

fn phase_index(p: Phase) -> usize {
    match p {
        Phase::Connected => 0,
        Phase::Stale => 1,
        Phase::Unreachable => 2,
        Phase::Pending => 3,
    }
}

fn phase_label(p: Phase) -> &'static str {
    match p {
        Phase::Connected => "connected",
        Phase::Stale => "stale",
        Phase::Unreachable => "unreachable",
        Phase::Pending => "pending",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn families(text: &str) -> Vec<String> {
        text.lines()
            .filter_map(|l| l.strip_prefix("# TYPE "))
            .map(|l| {
                let (name, ty) = l.split_once(' ').unwrap();
                if ty == "counter" {
                    format!("{name}_total")
                } else {
                    name.to_owned()
                }
            })
            .collect()
    }

    #[test]
    fn every_documented_name_is_registered_and_nothing_else() {
        let mut hub = families(&Metrics::new(MetricsRole::Hub).encode());
        // No series before the first Pull probe / the first reported site.
        hub.push("federation_health_check_duration_seconds".into());
        hub.push("federation_cluster_nodes".into());
        let mut want: Vec<String> = HUB_METRIC_NAMES.iter().map(|s| s.to_string()).collect();
        hub.sort();
        want.sort();
        assert_eq!(hub, want);
        let mut edge = families(&Metrics::new(MetricsRole::Edge).encode());
        edge.push("fleet_edge_report_failures_total".into());
        let mut want: Vec<String> = EDGE_METRIC_NAMES.iter().map(|s| s.to_string()).collect();
        edge.sort();
        want.sort();
        assert_eq!(edge, want);
    }

    #[test]
    fn counters_count_once_per_call_with_the_policy_mode() {
        let m = Metrics::new(MetricsRole::Hub);
        m.new_signal(SignalType::CrashLoopBackOff, Tier::Critical, Severity::High);
        m.new_cascade(Tier::Standard, Tier::Critical);
        let text = m.encode();
        let mode = policy_for(Some(Tier::Critical), Severity::High)
            .mode
            .as_str();
        assert!(text.contains("cross_cluster_issues_total{signal_type=\"CrashLoopBackOff\"} 1\n"));
        assert!(text.contains(&format!(
            "federation_remediation_policy_applied_total{{tier=\"critical\",mode=\"{mode}\"}} 1\n"
        )));
        assert!(text.contains(
            "cascade_detected_total{source_tier=\"standard\",target_tier=\"critical\"} 1\n"
        ));
    }

    #[test]
    fn the_cluster_label_can_be_dropped() {
        let m = Metrics::new(MetricsRole::Hub).with_per_cluster_histograms(false);
        m.observe_health_check("site-a", 0.02);
        m.observe_health_check("site-b", 0.03);
        let text = m.encode();
        assert!(text.contains("federation_health_check_duration_seconds_count{cluster=\"\"} 2\n"));
        assert!(!text.contains("site-a"));
    }
}
