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
//! | `federation_cluster_disconnected` | gauge | `cluster`, `group`, `status` |
//! | `federation_cluster_maintenance` | gauge | `cluster` |
//! | `federation_cluster_late_to_wake` | gauge | `cluster` |
//! | `federation_cluster_credential_expires_before_return` | gauge | `cluster` |
//! | `federation_grouped_outages_active` | gauge | |
//! | `federation_grouped_outage_clusters` | gauge | `outage`, `group_by`, `group` |
//! | `federation_edge_versions` | gauge | `version` |
//!
//! plus `federation_cluster_credential_{expiration,renewal}_timestamp_seconds`
//! and the `fleet_hub_*` and `fleet_edge_*` families below. Fleet-wide
//! counters are only moved by the leader (the callers check); a standby
//! exports the gauges it computes from its own cache.
//!
//! The per-site series every site has (`federation_cluster_nodes`, the
//! credential timestamps, `fleet_hub_status_restored_total`) are written
//! out at each scrape from one compact row a site ([`sites`]), not kept
//! as families: at 100,000 sites those were the hub's largest holder of
//! memory after its cache and its own maps.
//!
//! Label values a site controls (`cluster`, `region`, `group`, `version`) go through
//! [`LabelValue`], which escapes them as the text format requires:
//! `prometheus-client` 0.24 writes label values as they are, so one `"`
//! or newline would corrupt the whole scrape (or forge series).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use jiff::Timestamp;
use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

use crate::api::{FederatedCluster, FederationStatusStatus, Phase, Severity, SignalType, Tier};
use crate::fleet::outage::GroupBy;
use crate::fleet::policy::{RemediationMode, policy_for};
use crate::fleet::summary::{effective_phase, shown_phase};

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
    "fleet_hub_status_writes_pending",
    "federation_cluster_credential_expiration_timestamp_seconds",
    "federation_cluster_credential_renewal_timestamp_seconds",
    "fleet_hub_status_restored_total",
    "fleet_hub_last_judgement_timestamp_seconds",
    "fleet_hub_bucket_backfills_total",
    "fleet_hub_site_list_mode",
    "fleet_hub_heartbeats_total",
    "federation_cluster_disconnected",
    "federation_cluster_maintenance",
    "federation_cluster_late_to_wake",
    "federation_cluster_credential_expires_before_return",
    "federation_grouped_outages_active",
    "federation_grouped_outage_clusters",
    "federation_edge_versions",
];

/// The values of `fleet_hub_heartbeats_total`'s `via` label: where a
/// heartbeat the hub saw move came from (`super::renewals`).
pub const HEARTBEAT_SOURCES: [&str; 2] = ["lease", "status"];

/// The values of `fleet_hub_site_list_mode`'s `mode` label
/// ([`crate::k8s::site_status::InitialList`]).
pub const SITE_LIST_MODES: [&str; 2] = ["streaming", "paged"];

/// Metric family names of the edge role, as on the wire.
pub const EDGE_METRIC_NAMES: &[&str] = &[
    "fleet_edge_reports_total",
    "fleet_edge_lease_renewals_total",
    "fleet_edge_report_bytes",
    "fleet_edge_report_failures_total",
    "fleet_edge_credential_expiry_timestamp_seconds",
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ViaLabels {
    via: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ListModeLabels {
    mode: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    status: &'static str,
}

/// A label value written escaped as the Prometheus text format and
/// OpenMetrics require (`\` as `\\`, `"` as `\"`, a newline as `\n`),
/// whatever it holds: the exposition stays valid with any site name or
/// region, even one that bypassed the CRD's pattern. Any other character a
/// terminal would interpret (C1 controls, DEL, the other C0 controls,
/// invisible layout characters: `render::safe`) becomes the visible text
/// `\u{9b}` (its backslash escaped), so `curl /metrics` on a terminal is
/// safe too; the format has no escape that keeps such a character.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct LabelValue(String);

impl LabelValue {
    /// The value `s`.
    pub fn new(s: impl Into<String>) -> Self {
        LabelValue(s.into())
    }
}

impl EncodeLabelValue for LabelValue {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        Escaped(&self.0).encode(encoder)
    }
}

/// A borrowed label value, written escaped as a [`LabelValue`] is.
#[derive(Clone, Copy, Debug)]
struct Escaped<'a>(&'a str);

impl EncodeLabelValue for Escaped<'_> {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        use std::fmt::Write as _;
        let escaped =
            |c: char| matches!(c, '\\' | '"' | '\n') || crate::render::safe::needs_escape(c);
        let mut rest = self.0;
        while let Some(i) = rest.find(escaped) {
            encoder.write_str(&rest[..i])?;
            let c = rest[i..].chars().next().unwrap_or_default();
            match c {
                '\\' => encoder.write_str("\\\\")?,
                '"' => encoder.write_str("\\\"")?,
                '\n' => encoder.write_str("\\n")?,
                c => write!(encoder, "\\\\u{{{:x}}}", u32::from(c))?,
            }
            rest = &rest[i + c.len_utf8()..];
        }
        encoder.write_str(rest)
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ClusterLabels {
    cluster: LabelValue,
}

impl ClusterLabels {
    fn of(cluster: &str) -> Self {
        ClusterLabels {
            cluster: LabelValue::new(cluster),
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DisconnectedLabels {
    cluster: LabelValue,
    group: LabelValue,
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutageLabels {
    outage: LabelValue,
    group_by: LabelValue,
    group: LabelValue,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VersionLabels {
    version: LabelValue,
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

/// The first bucket bound of `federation_health_check_duration_seconds`.
const HEALTH_CHECK_FIRST_BUCKET: f64 = 0.005;
/// Its number of bucket bounds (each twice the previous one).
const HEALTH_CHECK_BUCKETS: u16 = 14;

fn probe_histogram() -> Histogram {
    // 5 ms … ~41 s: a probe is a few API round trips, bounded by its
    // timeout; a Push report is one.
    Histogram::new(exponential_buckets(
        HEALTH_CHECK_FIRST_BUCKET,
        2.0,
        HEALTH_CHECK_BUCKETS,
    ))
}

/// A Push edge's report round trip as it reports it
/// (`status.lastReportDurationMilliseconds`): rounded up to the bucket
/// bound of `federation_health_check_duration_seconds` it falls in (5, 10,
/// 20, … ms; whole milliseconds beyond the last), so the hub's histogram
/// counts exactly what it would from the raw figure, and a link whose
/// latency stays in one bucket still sends heartbeat-only patches.
pub fn report_duration_ms(took: std::time::Duration) -> i64 {
    let ms = took.as_secs_f64() * 1000.0;
    let mut bound = HEALTH_CHECK_FIRST_BUCKET * 1000.0;
    for _ in 0..HEALTH_CHECK_BUCKETS {
        if ms <= bound {
            return bound.round() as i64;
        }
        bound *= 2.0;
    }
    i64::try_from(took.as_millis()).unwrap_or(i64::MAX)
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
    writes_pending: Gauge,
    /// `federation_cluster_nodes`, the credential timestamps and
    /// `fleet_hub_status_restored_total`, written out at each scrape.
    site_series: Arc<sites::SiteSeries>,
    bucket_backfills: Family<ReasonLabels, Counter>,
    site_list_mode: Family<ListModeLabels, Gauge>,
    heartbeats: Family<ViaLabels, Counter>,
    last_judgement: Gauge,
    /// The sites with a `federation_health_check_duration_seconds` series,
    /// so a deleted site's goes with it.
    checked: Mutex<HashSet<String>>,
    reports: Counter,
    lease_renewals: Counter,
    report_bytes: Histogram,
    report_failures: Family<CauseLabels, Counter>,
    credential_expiry: Gauge,
    disconnected: Family<DisconnectedLabels, Gauge>,
    maintenance: Family<ClusterLabels, Gauge>,
    late_to_wake: Family<ClusterLabels, Gauge>,
    expires_before_return: Family<ClusterLabels, Gauge>,
    outages_active: Gauge,
    outage_clusters: Family<OutageLabels, Gauge>,
    edge_versions: Family<VersionLabels, Gauge>,
    /// What the `group` label of `federation_cluster_disconnected` holds.
    group_by: GroupBy,
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
            issues: Family::default(),
            correlations_active: Gauge::default(),
            cascades: Family::default(),
            policy_applied: Family::default(),
            reconciles: Counter::default(),
            reconcile_errors: Family::default(),
            bucket_backfills: Family::default(),
            site_list_mode: Family::default(),
            heartbeats: Family::default(),
            writes: Counter::default(),
            conflicts: Counter::default(),
            event_lag: lag_histogram(),
            leader: Gauge::default(),
            writes_pending: Gauge::default(),
            site_series: Arc::default(),
            last_judgement: Gauge::default(),
            checked: Mutex::new(HashSet::new()),
            reports: Counter::default(),
            lease_renewals: Counter::default(),
            report_bytes: bytes_histogram(),
            report_failures: Family::default(),
            credential_expiry: Gauge::default(),
            disconnected: Family::default(),
            maintenance: Family::default(),
            late_to_wake: Family::default(),
            expires_before_return: Family::default(),
            outages_active: Gauge::default(),
            outage_clusters: Family::default(),
            edge_versions: Family::default(),
            group_by: GroupBy::default(),
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
                    "Duration of each site's health check: the hub's probe of a Pull site, the edge's status write round trip of a Push site (one per new heartbeat, as the edge reports it)",
                    Unit::Seconds,
                    m.health_check.clone(),
                );
                r.register_collector(Box::new(m.site_series.clone()));
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
                    "Remediation policy decisions, by site tier and mode: one per new signal, and one more each time a correlation or cascade changes a signal's decision",
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
                    for mode in reachable_modes(*source) {
                        let _ = m.policy_applied.get_or_create(&PolicyLabels {
                            tier: source.as_str(),
                            mode: mode.as_str(),
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
                r.register(
                    "fleet_hub_status_writes_pending",
                    "Sites whose judged transition the leader has not written yet (queued behind --status-write-qps, or failing), at its last liveness check; the fleet summary and gauges hold these judgements already. 0 on a standby",
                    m.writes_pending.clone(),
                );
                r.register(
                    "fleet_hub_bucket_backfills",
                    "Bucket labels the hub wrote on sites, by reason: missing (a site registered by an older release) or wrong (a value that is not the bucket of its name)",
                    m.bucket_backfills.clone(),
                );
                for &reason in &crate::fleet::bucket::BACKFILL_REASONS {
                    let _ = m.bucket_backfills.get_or_create(&ReasonLabels { reason });
                }
                r.register(
                    "fleet_hub_site_list_mode",
                    "1 for how the hub lists sites when its site watch starts or re-lists: streaming (a watch with sendInitialEvents) or paged (LISTs of 500 sites, where the API server refuses streaming lists); both 0 until the first list",
                    m.site_list_mode.clone(),
                );
                for mode in SITE_LIST_MODES {
                    let _ = m.site_list_mode.get_or_create(&ListModeLabels { mode });
                }
                r.register(
                    "fleet_hub_heartbeats",
                    "Site heartbeats the hub saw move, by where they came from: lease (a FederatedClusterLease renewal) or status (status.lastHeartbeatTime, as edges older than the lease write it)",
                    m.heartbeats.clone(),
                );
                for via in HEARTBEAT_SOURCES {
                    let _ = m.heartbeats.get_or_create(&ViaLabels { via });
                }
                r.register(
                    "federation_cluster_disconnected",
                    "1 for each site shown stale or unreachable, with the value of its outage group (--outage-group-by) as `group`; sites in maintenance included (see federation_cluster_maintenance)",
                    m.disconnected.clone(),
                );
                r.register(
                    "federation_cluster_maintenance",
                    "1 for each site whose maintenance window (spec.maintenance) is open: the per-site alerts leave it out",
                    m.maintenance.clone(),
                );
                r.register(
                    "federation_cluster_late_to_wake",
                    "1 for each site late to wake: silent past its offline window or longest absence (spec.connectivity); ClusterLateToWake pages for it instead of ClusterDisconnected",
                    m.late_to_wake.clone(),
                );
                r.register(
                    "federation_cluster_credential_expires_before_return",
                    "1 for each sleeping site whose credential expires before it is expected back (CredentialExpiring reason ExpiresBeforeReturn)",
                    m.expires_before_return.clone(),
                );
                r.register(
                    "federation_grouped_outages_active",
                    "Active grouped outages (FederationStatus status.outages)",
                    m.outages_active.clone(),
                );
                r.register(
                    "federation_grouped_outage_clusters",
                    "Sites in each active grouped outage, by outage id and group",
                    m.outage_clusters.clone(),
                );
                r.register(
                    "federation_edge_versions",
                    "Sites reporting each edge version (FederationStatus status.edgeVersions; the rarest under `other`)",
                    m.edge_versions.clone(),
                );
                r.register_with_unit(
                    "fleet_hub_last_judgement_timestamp",
                    "When a hub leader last judged every site (status.hub.lastJudgementTime of the FederationStatus as this replica knows it), as a Unix timestamp; 0 when none ever has",
                    Unit::Seconds,
                    m.last_judgement.clone(),
                );
            }
            MetricsRole::Edge => {
                for &cause in EDGE_FAILURE_CAUSES {
                    let _ = m.report_failures.get_or_create(&CauseLabels { cause });
                }
                r.register(
                    "fleet_edge_reports",
                    "Status reports the hub accepted (written when what the edge reports changes, or as the heartbeat while its lease cannot be renewed)",
                    m.reports.clone(),
                );
                r.register(
                    "fleet_edge_lease_renewals",
                    "Renewals of the site's FederatedClusterLease the hub accepted (heartbeats that wrote no status)",
                    m.lease_renewals.clone(),
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

    /// Labels `federation_cluster_disconnected` with each site's value of
    /// `group_by` (the hub's `--outage-group-by`).
    pub fn with_outage_group_by(mut self, group_by: GroupBy) -> Self {
        self.group_by = group_by;
        self
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

    /// One health check of `cluster` took `seconds`: a Pull-mode probe
    /// (the prober), or a Push edge's report round trip (the hub, from each
    /// new heartbeat).
    pub fn observe_health_check(&self, cluster: &str, seconds: f64) {
        let labels = if self.per_cluster_histograms.load(Ordering::Relaxed) {
            self.observe_health_check_series(cluster);
            ClusterLabels::of(cluster)
        } else {
            ClusterLabels::of("")
        };
        self.health_check.get_or_create(&labels).observe(seconds);
    }

    /// Creates `cluster`'s health-check histogram (at 0) if missing, and
    /// remembers it so it goes with the site.
    fn observe_health_check_series(&self, cluster: &str) {
        let mut checked = self.checked.lock().unwrap_or_else(|p| p.into_inner());
        if !checked.contains(cluster) {
            checked.insert(cluster.to_owned());
            let _ = self.health_check.get_or_create(&ClusterLabels::of(cluster));
        }
    }

    /// Drops the health-check series of a site no longer checked this way
    /// (deleted, or moved between modes), so the series do not outgrow the
    /// fleet.
    pub fn forget_health_check(&self, cluster: &str) {
        if self.per_cluster_histograms.load(Ordering::Relaxed) {
            self.checked
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(cluster);
            self.health_check.remove(&ClusterLabels::of(cluster));
        }
    }

    /// Drops every per-site series of a deleted site.
    pub fn forget_site(&self, cluster: &str) {
        self.forget_health_check(cluster);
        self.site_series.forget(cluster);
    }

    /// The hub restored `cluster`'s conditions.
    pub fn status_restored(&self, cluster: &str) {
        self.site_series.restored(cluster);
    }

    /// The last full judgement of the fleet a leader recorded (None: none).
    pub fn set_last_judgement(&self, at: Option<Timestamp>) {
        self.last_judgement.set(at.map_or(0, |t| t.as_second()));
    }

    /// Sets the per-phase and per-site gauges from the hub's cache at
    /// `now`. Phases are counted as every view shows them
    /// (`fleet::summary::shown_phase`, with `hub_judging` whether a hub is
    /// judging the fleet), so the gauges never count a site Connected whose
    /// heartbeat is past its Unreachable age.
    pub fn set_fleet<S: std::borrow::Borrow<FederatedCluster>>(
        &self,
        sites: &[S],
        correlations_active: usize,
        hub_judging: Option<bool>,
        now: Timestamp,
    ) {
        let mut counts = [0i64; 5];
        for s in sites.iter().map(S::borrow) {
            counts[phase_index(shown_phase(s, hub_judging, now).phase)] += 1;
        }
        for p in Phase::ALL {
            self.clusters
                .get_or_create(&StatusLabels {
                    status: phase_label(*p),
                })
                .set(counts[phase_index(*p)]);
        }
        // Deleted sites must disappear, so the families are rebuilt.
        self.disconnected.clear();
        self.maintenance.clear();
        self.late_to_wake.clear();
        self.expires_before_return.clear();
        let per_cluster = self.per_cluster_histograms.load(Ordering::Relaxed);
        for s in sites.iter().map(S::borrow) {
            if per_cluster {
                self.observe_health_check_series(s.site_name());
            }
            if s.in_maintenance(now) {
                self.maintenance
                    .get_or_create(&ClusterLabels::of(s.site_name()))
                    .set(1);
            }
            // The hub's own judgement only: a phase a view implies from the
            // heartbeat's age while no hub judges (a Pull site nobody
            // probes) pages nobody; FleetHubDown does.
            let phase = effective_phase(s);
            if crate::fleet::hub_status::credential_expires_before_return(s) {
                self.expires_before_return
                    .get_or_create(&ClusterLabels::of(s.site_name()))
                    .set(1);
            }
            if crate::fleet::hub_status::is_late_to_wake(s) {
                self.late_to_wake
                    .get_or_create(&ClusterLabels::of(s.site_name()))
                    .set(1);
            }
            if matches!(phase, Phase::Stale | Phase::Unreachable) {
                self.disconnected
                    .get_or_create(&DisconnectedLabels {
                        cluster: LabelValue::new(s.site_name()),
                        group: LabelValue::new(self.group_by.value_of(s).unwrap_or_default()),
                        status: phase_label(phase),
                    })
                    .set(1);
            }
        }
        // The per-site series (each site's restored counter at 0 from its
        // first summary, so the first restore is an increase); a deleted
        // site's series go with it, its health-check histogram too.
        self.site_series.set(sites.iter().map(S::borrow));
        let checked = self
            .checked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for cluster in checked.iter().filter(|c| !self.site_series.lists(c)) {
            self.forget_health_check(cluster);
        }
        self.correlations_active
            .set(i64::try_from(correlations_active).unwrap_or(i64::MAX));
    }

    /// Sets the gauges of the fleet summary's grouped outages and edge
    /// versions.
    pub fn set_summary(&self, summary: &FederationStatusStatus) {
        self.outages_active
            .set(i64::try_from(summary.outages.len()).unwrap_or(i64::MAX));
        self.outage_clusters.clear();
        for o in &summary.outages {
            self.outage_clusters
                .get_or_create(&OutageLabels {
                    outage: LabelValue::new(o.id.as_str()),
                    group_by: LabelValue::new(o.group_by.as_str()),
                    group: LabelValue::new(o.value.as_str()),
                })
                .set(i64::try_from(o.clusters.len()).unwrap_or(i64::MAX));
        }
        self.edge_versions.clear();
        for (version, n) in &summary.edge_versions {
            self.edge_versions
                .get_or_create(&VersionLabels {
                    version: LabelValue::new(version.as_str()),
                })
                .set(*n);
        }
    }

    /// A signal the leading hub has not seen before: counts the issue.
    pub fn new_signal(&self, signal_type: SignalType) {
        self.issues
            .get_or_create(&SignalLabels {
                signal_type: signal_type.as_str(),
            })
            .inc();
    }

    /// The leading hub decided a signal of a site of `tier` as `mode`
    /// (`fleet::policy::Decisions`: a new signal, or one whose decision an
    /// incident changed).
    pub fn policy_applied(&self, tier: Tier, mode: RemediationMode) {
        self.policy_applied
            .get_or_create(&PolicyLabels {
                tier: tier.as_str(),
                mode: mode.as_str(),
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

    /// The hub wrote a site's bucket label, for `reason` (one of
    /// [`crate::fleet::bucket::BACKFILL_REASONS`]).
    pub fn bucket_backfilled(&self, reason: &'static str) {
        self.bucket_backfills
            .get_or_create(&ReasonLabels { reason })
            .inc();
    }

    /// The hub's site watch lists sites as `mode` (one of
    /// [`SITE_LIST_MODES`]) from now on.
    pub fn site_list_mode(&self, mode: &'static str) {
        for m in SITE_LIST_MODES {
            self.site_list_mode
                .get_or_create(&ListModeLabels { mode: m })
                .set(i64::from(m == mode));
        }
    }

    /// The hub saw a site's heartbeat move, `via` its lease or its status
    /// (one of [`HEARTBEAT_SOURCES`]).
    pub fn heartbeat_seen(&self, via: &'static str) {
        self.heartbeats.get_or_create(&ViaLabels { via }).inc();
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

    /// Sites whose judged transition is not written yet
    /// (`fleet_hub_status_writes_pending`).
    pub fn set_writes_pending(&self, sites: usize) {
        self.writes_pending
            .set(i64::try_from(sites).unwrap_or(i64::MAX));
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

    /// The hub accepted a renewal of the edge's lease.
    pub fn lease_renewed(&self) {
        self.lease_renewals.inc();
    }

    /// A report attempt failed with `cause` (an `EdgeError::cause_name`,
    /// one of [`EDGE_FAILURE_CAUSES`]).
    pub fn report_failed(&self, cause: &'static str) {
        debug_assert!(
            EDGE_FAILURE_CAUSES.contains(&cause),
            "{cause} is missing from EDGE_FAILURE_CAUSES"
        );
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

/// Every `cause` label of `fleet_edge_report_failures_total`
/// (`EdgeError::cause_name`), each at 0 from the start.
pub const EDGE_FAILURE_CAUSES: &[&str] = &[
    "credential",
    "unauthorized",
    "token-expired",
    "forbidden",
    "wrong-site",
    "not-registered",
    "hub-tls",
    "crd-missing",
    "not-served-yet",
    "unreachable",
    "hub-error",
    "member",
    "renewal",
    "persist-token",
];

/// The modes a decision for a signal of a site of `tier` can take: its
/// own policy at any severity, and manual, since an incident (a
/// correlation with a stricter site, a cascade) can always raise a
/// decision to it (`fleet::policy::Incidents::decide` only raises).
fn reachable_modes(tier: Tier) -> Vec<RemediationMode> {
    let mut modes: Vec<RemediationMode> = Severity::ALL
        .iter()
        .map(|s| policy_for(Some(tier), *s).mode)
        .chain([RemediationMode::Manual])
        .collect();
    modes.sort_by_key(|m| m.as_str());
    modes.dedup();
    modes
}

fn phase_index(p: Phase) -> usize {
    match p {
        Phase::Connected => 0,
        Phase::Stale => 1,
        Phase::Unreachable => 2,
        Phase::Pending => 3,
        Phase::Sleeping => 4,
    }
}

fn phase_label(p: Phase) -> &'static str {
    match p {
        Phase::Connected => "connected",
        Phase::Stale => "stale",
        Phase::Unreachable => "unreachable",
        Phase::Pending => "pending",
        Phase::Sleeping => "sleeping",
    }
}

mod sites;
#[cfg(test)]
mod tests;
