//! The `FederationStatus` custom resource: a cluster-scoped singleton named
//! `fleet`, written only by the hub operator, summarising the whole fleet.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube_derive::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cluster::{
    Environment, PRINTABLE_TEXT_PATTERN, Phase, Severity, SignalType, Tier, WorkloadRef,
};

/// Name of the one `FederationStatus` object.
pub const FEDERATION_STATUS_NAME: &str = "fleet";

// Bounds on what the hub writes into the singleton (docs/scaling.md#the-size-of-federationstatus):
// every list that grows with the fleet is cut to its worst entries by count
// and by serialized bytes (`fleet::summary::bound`), with an exact count of
// all of them beside it, so the object stays under
// [`MAX_FEDERATION_STATUS_BYTES`] whatever the number of sites. The full
// lists are the hub's REST API's (`/api/v1/federation/...`).

/// The most the `fleet` object may weigh as JSON, managedFields included,
/// whatever the number of sites: a sixth of etcd's default 1.5 MiB
/// request limit, so neither the summary nor the liveness record written
/// into the same object can be refused for its size.
pub const MAX_FEDERATION_STATUS_BYTES: usize = 256 * 1024;

/// Upper bound on `status.disconnectedClusters` (and
/// [`DISCONNECTED_BUDGET_BYTES`] of JSON); `disconnectedClustersTotal`
/// counts them all.
pub const MAX_DISCONNECTED: usize = 100;
/// Byte budget of `status.disconnectedClusters`.
pub(crate) const DISCONNECTED_BUDGET_BYTES: usize = 32 * 1024;
/// Upper bound on the entries of `status.issuesByCluster` (and
/// [`ISSUES_BUDGET_BYTES`]); `clustersWithIssues` counts them all.
pub(crate) const MAX_ISSUE_CLUSTERS: usize = 100;
/// Byte budget of `status.issuesByCluster`.
pub(crate) const ISSUES_BUDGET_BYTES: usize = 8 * 1024;
/// Upper bound on the sites an incident (a correlation, a grouped outage)
/// names in `clusters`; its `clustersTotal` counts them all.
pub const MAX_INCIDENT_CLUSTERS: usize = 50;
/// Upper bound on `status.cascades` (and [`CASCADES_BUDGET_BYTES`]):
/// each production site can be the target of up to `MAX_SIGNALS`
/// cascades; `cascadesDetected` counts them all.
pub const MAX_CASCADES: usize = 100;
/// Byte budget of `status.cascades`.
pub(crate) const CASCADES_BUDGET_BYTES: usize = 48 * 1024;
/// Byte budget of `status.outages` (at most [`MAX_OUTAGES`]).
pub(crate) const OUTAGES_BUDGET_BYTES: usize = 48 * 1024;
/// Byte budget of `status.edgeVersions` (at most [`MAX_EDGE_VERSIONS`]
/// keys); the versions that do not fit are counted under `other`.
pub(crate) const EDGE_VERSIONS_BUDGET_BYTES: usize = 16 * 1024;

/// `FederationStatus` carries no desired state: the object is only a status
/// holder, so it has no `spec` on the wire.

#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[x_kube(crates(kube_core = "::kube_core"))]
#[kube(
    crates(kube_core = "::kube_core", kube = "::kube_derive"),
    group = "federation.kubectl-fleet.dev",
    version = "v1alpha1",
    kind = "FederationStatus",
    plural = "federationstatuses",
    singular = "federationstatus",
    shortname = "fedstatus",
    category = "fleet",
    no_spec,
    status = "FederationStatusStatus",
    derive = "PartialEq",
    doc = "Fleet-wide summary kept by the hub operator (singleton named fleet)",
    validation = Rule::new("self.metadata.name == 'fleet'").message("the FederationStatus singleton must be named fleet"),
    printcolumn(name = "Clusters", type_ = "integer", json_path = ".status.totalClusters"),
    printcolumn(name = "Connected", type_ = "integer", json_path = ".status.connectedClusters"),
    printcolumn(name = "Stale", type_ = "integer", json_path = ".status.staleClusters"),
    printcolumn(name = "Unreachable", type_ = "integer", json_path = ".status.unreachableClusters"),
    printcolumn(name = "Pending", type_ = "integer", json_path = ".status.pendingClusters"),
    printcolumn(name = "Issues", type_ = "integer", json_path = ".status.totalActiveIssues"),
    printcolumn(name = "Correlations", type_ = "integer", json_path = ".status.crossClusterCorrelations"),
    printcolumn(name = "Cascades", type_ = "integer", json_path = ".status.cascadesDetected"),
    printcolumn(name = "Last Updated", type_ = "date", json_path = ".status.lastUpdated")
)]
pub struct FederationStatusFields {}

impl FederationStatus {
    /// The singleton object `fleet` with the given status.
    pub fn singleton(status: FederationStatusStatus) -> Self {
        let mut fs = FederationStatus::new(FEDERATION_STATUS_NAME, FederationStatusFields {});
        fs.status = Some(status);
        fs
    }
}

/// Fleet-wide counts, incidents and totals.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FederationStatusStatus {
    /// Number of registered sites.
    #[serde(default)]
    pub total_clusters: i64,
    /// Sites in phase Connected.
    #[serde(default)]
    pub connected_clusters: i64,
    /// Sites in phase Stale.
    #[serde(default)]
    pub stale_clusters: i64,
    /// Sites in phase Unreachable.
    #[serde(default)]
    pub unreachable_clusters: i64,
    /// Sites in phase Pending.
    #[serde(default)]
    pub pending_clusters: i64,
    /// Sites in phase Sleeping (silent as their `spec.connectivity`
    /// expects): neither listed in `disconnectedClusters` nor counted in
    /// `disconnectedClustersTotal`.
    #[serde(default)]
    pub sleeping_clusters: i64,
    /// Sites that are not Connected, worst first (Unreachable, Stale, then
    /// Pending; then the strictest tier; then the longest in that phase, by
    /// the hub's clock): at most 100, fewer when they would pass 32 KiB.
    /// `disconnectedClustersTotal` counts them all; `kubectl fleet status
    /// --phase` and the REST API's `/clusters?phase=` list them all. A
    /// site whose maintenance window is open is counted by its phase above
    /// but not listed here (its downtime is planned).
    #[serde(default)]
    #[schemars(length(max = MAX_DISCONNECTED))]
    pub disconnected_clusters: Vec<DisconnectedCluster>,
    /// How many sites are not Connected (maintenance windows aside): all of
    /// them, listed in `disconnectedClusters` or not.
    #[serde(default)]
    pub disconnected_clusters_total: i64,
    /// Active signals over all sites.
    #[serde(default)]
    pub total_active_issues: i64,
    /// Active signals by severity.
    #[serde(default)]
    pub issues_by_severity: IssuesBySeverity,
    /// Active signals per site (sites without signals are omitted), for
    /// the 100 sites with the most (ties: the strictest tier, then by
    /// name), fewer when they would pass 8 KiB; `clustersWithIssues` counts
    /// them all.
    #[serde(default)]
    #[schemars(extend("maxProperties" = MAX_ISSUE_CLUSTERS))]
    pub issues_by_cluster: BTreeMap<String, i64>,
    /// How many sites have at least one active signal: all of them, in
    /// `issuesByCluster` or not.
    #[serde(default)]
    pub clusters_with_issues: i64,
    /// Number of active cross-cluster correlations.
    #[serde(default)]
    pub cross_cluster_correlations: i64,
    /// Active cross-cluster correlations (at most one per signal type).
    #[serde(default)]
    #[schemars(length(max = SignalType::ALL.len()))]
    pub correlations: Vec<Correlation>,
    /// Number of cascades detected within the lookback.
    #[serde(default)]
    pub cascades_detected: i64,
    /// Cascades detected within the lookback, the strongest evidence first
    /// (the most sites reporting the signal on that workload, the signal
    /// type's severity, the target's tier, then the longest known to the
    /// hub): at most 100, fewer when they would pass 48 KiB
    /// (`cascadesDetected` counts them all; the hub's REST API lists them
    /// all at `/api/v1/federation/cascades`).
    #[serde(default)]
    #[schemars(length(max = MAX_CASCADES))]
    pub cascades: Vec<Cascade>,
    /// GPU capacity over all sites.
    #[serde(default)]
    pub gpus_total: i64,
    /// Allocatable GPUs over all sites.
    #[serde(default)]
    pub gpus_allocatable: i64,
    /// Ready inference services over all sites.
    #[serde(default)]
    pub services_ready: i64,
    /// Failed inference services over all sites.
    #[serde(default)]
    pub services_failed: i64,
    /// Inference services over all sites.
    #[serde(default)]
    pub services_total: i64,
    /// When the hub last recomputed this summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<Time>,
    /// Grouped outages: sites sharing a region (or another label the hub
    /// groups by) that left Connected together; see [`GroupedOutage`].
    /// The largest first: at most 100 (the hub follows no more), fewer when
    /// they would pass 48 KiB; `outagesTotal` counts them all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_OUTAGES))]
    pub outages: Vec<GroupedOutage>,
    /// How many grouped outages there are: all of them, listed in
    /// `outages` or not.
    #[serde(default)]
    pub outages_total: i64,
    /// Sites whose maintenance window is open (`spec.maintenance`).
    #[serde(default)]
    pub maintenance_clusters: i64,
    /// How many sites report each edge version (`status.observedVersion`;
    /// sites that never reported one are not counted). At most 64
    /// versions, the most common, and within 16 KiB; the rest are counted
    /// under `other`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = MAX_EDGE_VERSIONS))]
    pub edge_versions: BTreeMap<String, i64>,
    /// The hub leader's own heartbeat: who is judging the fleet and when it
    /// last did. Absent until a hub has led; readers say the fleet state is
    /// unjudged when it is absent or older than its thresholds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hub: Option<HubLiveness>,
    /// What the hub detected the incidents with (its flags), so a reader
    /// holding the sites can name every member of an incident whose
    /// `clusters` list is cut, as the hub did. Absent when written by a hub
    /// that did not record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detection: Option<IncidentDetection>,
}

/// The hub's incident detection parameters (`--correlation-window`,
/// `--correlation-min-clusters`, `--cascade-lookback`,
/// `--outage-group-by`, `--outage-min-clusters`, `--outage-window`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IncidentDetection {
    /// A signal counts toward a correlation while its `lastSeen` is at
    /// most this many seconds old.
    #[schemars(range(min = 0))]
    pub correlation_window_seconds: i64,
    /// Least number of distinct sites of a correlation.
    #[schemars(range(min = 1))]
    pub correlation_min_clusters: i64,
    /// How far back, in seconds, a cascade's source may lie.
    #[schemars(range(min = 0))]
    pub cascade_lookback_seconds: i64,
    /// What outages group sites by: `region`, or a label key.
    #[schemars(length(max = 317))]
    pub outage_group_by: String,
    /// Least number of sites of one group in an outage.
    #[schemars(range(min = 1))]
    pub outage_min_clusters: i64,
    /// Longest time, in seconds, between two sites of one outage going dark.
    #[schemars(range(min = 0))]
    pub outage_window_seconds: i64,
}

impl FederationStatusStatus {
    /// Grouped outages: `outagesTotal`, or the list's length when written
    /// by a hub that did not count them.
    pub fn outage_count(&self) -> i64 {
        self.outages_total.max(count(self.outages.len()))
    }

    /// Cascades: `cascadesDetected`, at least the list's length.
    pub(crate) fn cascade_count(&self) -> i64 {
        self.cascades_detected.max(count(self.cascades.len()))
    }
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Upper bound on `FederationStatus` `status.outages`.
pub(crate) const MAX_OUTAGES: usize = 100;
/// Upper bound on the entries of `FederationStatus` `status.edgeVersions`.
pub(crate) const MAX_EDGE_VERSIONS: usize = 64;

/// Several sites sharing a group (a region, or the value of another label
/// the hub is told to group by) that left Connected within a window: one
/// outage, instead of a page per site.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupedOutage {
    /// Stable id while the outage lasts, `go-` and 8 hex digits.
    pub id: String,
    /// What the sites share: `region`, or the label key grouped by.
    pub group_by: String,
    /// The shared value (a region, a label value).
    pub value: String,
    /// The sites of the group that went dark together (Stale or
    /// Unreachable, not in maintenance), sorted by name: at most 50 — when
    /// there are more, the Unreachable ones and the strictest tiers first.
    /// `clustersTotal` counts them all; `kubectl fleet incidents ID` and
    /// the hub's REST API name them all.
    #[schemars(length(max = MAX_INCIDENT_CLUSTERS))]
    pub clusters: Vec<String>,
    /// How many sites the outage holds: all of them, listed in `clusters`
    /// or not.
    #[serde(default)]
    pub clusters_total: i64,
    /// When the hub last heard from the first of them to go dark (hub
    /// clock): the outage began after this.
    pub since: Time,
    /// The first of them to go dark (the one `since` is about): the site
    /// that started the outage. Absent when written by a hub that did not
    /// record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_by: Option<String>,
    /// What its sites have in common, besides the group, that the other
    /// sites mostly do not, the strongest first: at most 5. Left out of
    /// the `fleet` object past 16 KiB of them over all incidents;
    /// `kubectl fleet incidents ID` and the REST API always name them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_COMMON_FACTORS))]
    pub common_factors: Vec<CommonFactor>,
}

impl GroupedOutage {
    /// Its sites: `clustersTotal`, or the list's length when written by a
    /// hub that did not count them.
    pub fn cluster_count(&self) -> i64 {
        self.clusters_total.max(count(self.clusters.len()))
    }

    /// Whether `clusters` names fewer sites than the outage holds.
    pub(crate) fn is_cut(&self) -> bool {
        self.cluster_count() > count(self.clusters.len())
    }
}

/// Upper bound, in characters, on the leader identity recorded in
/// [`HubLiveness`] (a pod name plus a process id).
pub const MAX_HUB_IDENTITY_CHARS: usize = 253;

/// The hub leader's record that it is judging the fleet, rewritten every
/// `intervalSeconds` while it leads (a write rate independent of the
/// fleet's size).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HubLiveness {
    /// Identity of the leading replica (its Lease holder identity).
    #[schemars(length(max = MAX_HUB_IDENTITY_CHARS))]
    pub leader: String,
    /// When that replica became leader (hub clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader_since: Option<Time>,
    /// When the leader last judged every site (hub clock).
    pub last_judgement_time: Time,
    /// How often the leader rewrites `lastJudgementTime`, in seconds.
    #[schemars(range(min = 1))]
    pub interval_seconds: i64,
}

/// A site that is not Connected.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DisconnectedCluster {
    /// Site name.
    pub name: String,
    /// Its phase (Pending, Stale or Unreachable).
    pub phase: Phase,
    /// When the hub last observed a heartbeat from it, on the hub clock
    /// (its `lastHeartbeatTime` minus `clockOffsetSeconds`); unset if never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<Time>,
    /// Why it counts as disconnected, for humans.
    #[serde(default)]
    pub reason: String,
}

/// Signal counts per severity.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct IssuesBySeverity {
    /// Critical signals.
    #[serde(default)]
    pub critical: i64,
    /// High signals.
    #[serde(default)]
    pub high: i64,
    /// Medium signals.
    #[serde(default)]
    pub medium: i64,
    /// Low signals.
    #[serde(default)]
    pub low: i64,
}

impl IssuesBySeverity {
    /// Count one more signal of `severity`.
    pub(crate) fn add(&mut self, severity: Severity) {
        match severity {
            Severity::Critical => self.critical += 1,
            Severity::High => self.high += 1,
            Severity::Medium => self.medium += 1,
            Severity::Low => self.low += 1,
        }
    }

    /// Sum over all severities.
    pub(crate) fn total(&self) -> i64 {
        self.critical + self.high + self.medium + self.low
    }
}

/// The same signal type active in several sites at once.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Correlation {
    /// Stable id, `xc-` and 8 hex digits, kept while the correlation stays active.
    pub id: String,
    /// The shared signal type.
    pub signal: SignalType,
    /// Always critical: a fleet-wide incident.
    pub severity: Severity,
    /// The signal type's own severity (worst seen among members).
    pub original_severity: Severity,
    /// Member sites, sorted by name: at most 50 — when there are more,
    /// those of the strictest tiers first. `clustersTotal` counts them all;
    /// `kubectl fleet incidents ID` and the hub's REST API name them all.
    #[schemars(length(max = MAX_INCIDENT_CLUSTERS))]
    pub clusters: Vec<String>,
    /// How many member sites it has: all of them, listed in `clusters` or
    /// not.
    #[serde(default)]
    pub clusters_total: i64,
    /// The earliest evidence of the incident, on the hub clock: the
    /// earliest `firstSeen` of its member signals (each moved onto the hub
    /// clock by its site's `clockOffsetSeconds` and never later than the
    /// hub last heard from the site), kept while the correlation lasts.
    pub first_seen: Time,
    /// Latest `lastSeen` among the member signals, on the hub clock (never
    /// later than the hub last heard from the site that reported it).
    pub last_seen: Time,
    /// The site whose signal is the earliest evidence (`firstSeen`): the
    /// site that started the incident. Absent when written by a hub that
    /// did not record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_by: Option<String>,
    /// The strictest tier among the member sites: the remediation policy of
    /// the incident, and of each member's signal, is this tier's at
    /// critical severity (`fleet::policy::signal_policy`). Absent when
    /// written by a hub that did not record it; readers then take the
    /// unknown-tier fallback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strictest_tier: Option<Tier>,
    /// What its sites have in common that the other sites mostly do not,
    /// the strongest first: at most 5. Left out of the `fleet` object
    /// past 16 KiB of them over all incidents; `kubectl fleet incidents
    /// ID` and the REST API always name them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_COMMON_FACTORS))]
    pub common_factors: Vec<CommonFactor>,
}

impl Correlation {
    /// Its member sites: `clustersTotal`, or the list's length when
    /// written by a hub that did not count them.
    pub fn cluster_count(&self) -> i64 {
        self.clusters_total.max(count(self.clusters.len()))
    }

    /// Whether `clusters` names fewer sites than the correlation has.
    pub(crate) fn is_cut(&self) -> bool {
        self.cluster_count() > count(self.clusters.len())
    }
}

impl Cascade {
    /// Identity of a cascade across evaluations (source, target, signal,
    /// workload), e.g. to count each new cascade once.
    pub fn key(&self) -> String {
        format!(
            "{}->{}:{}:{}",
            self.source, self.target, self.signal, self.workload
        )
    }
}

/// The same failure reaching production after a lower environment.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Cascade {
    /// Stable id, `cc-` and 8 hex digits of its identity (source, target,
    /// signal, workload), so `kubectl fleet incidents ID` can name it.
    #[serde(default)]
    pub id: String,
    /// Site where the failure appeared first (lower environment): the site
    /// that started the incident.
    pub source: String,
    /// Production site where it appeared later.
    pub target: String,
    /// Environment of the source site.
    pub source_environment: Environment,
    /// Environment of the target site (production).
    pub target_environment: Environment,
    /// Tier of the source site.
    pub source_tier: Tier,
    /// Tier of the target site.
    pub target_tier: Tier,
    /// The shared signal type.
    pub signal: SignalType,
    /// The shared workload (kind and name).
    pub workload: WorkloadRef,
    /// When the source first saw it, on the hub clock.
    pub source_first_seen: Time,
    /// When the target first saw it, on the hub clock.
    pub target_first_seen: Time,
    /// Seconds between the two first sightings.
    pub delta_seconds: i64,
    /// When the hub first detected it, on the hub's clock (kept while it
    /// stays detected): unlike the first sightings, which the sites
    /// report, a site cannot move it. Absent when written by a hub that
    /// did not record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detected_time: Option<Time>,
    /// What the sites of the cascades of its signal type and workload (its
    /// source, and every production site the failure reached) have in
    /// common that the other sites mostly do not, their environments
    /// aside, the strongest first: at most 5. Left out of the `fleet`
    /// object past 16 KiB of them over all incidents; `kubectl fleet
    /// incidents ID` and the REST API always name them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_COMMON_FACTORS))]
    pub common_factors: Vec<CommonFactor>,
}

/// Upper bound on an incident's `commonFactors`.
pub const MAX_COMMON_FACTORS: usize = 5;
/// Upper bound, in characters, on a common factor's `value` (longer
/// values are cut with `…`).
pub const MAX_FACTOR_VALUE_CHARS: usize = 128;
/// Upper bound, in characters, on a common factor's `key` (a label key
/// is at most 317).
pub const MAX_FACTOR_KEY_CHARS: usize = 317;
/// Byte budget of every incident's `commonFactors` together in the
/// written `FederationStatus` (correlations first, then outages, then
/// cascades, in their order): an incident past it is written without
/// them, and `kubectl fleet incidents ID` names them from the sites.
pub(crate) const FACTORS_BUDGET_BYTES: usize = 16 * 1024;

/// An attribute most of an incident's sites share and the other sites
/// mostly do not: "38 of 40 affected run edge 0.1.0; 6% of the other
/// sites do" (`fleet::factors`, docs/operations.md#what-an-incidents-sites-have-in-common).
/// Affected sites are counted by distinct member cluster, as incidents
/// are; the other sites are those the hub has heard from that are not in
/// the incident.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommonFactor {
    /// What is shared: `edgeVersion`, `kubernetesVersion`, `gpuVendor`
    /// (a GPU resource the site has), `gpuModel`, `osImage`,
    /// `kernelVersion`, `containerRuntimeVersion` (a value some of the
    /// site's nodes report in `status.nodeInfo`), `region`, `environment`
    /// or `label`.
    #[schemars(length(max = 32), regex(pattern = "^[a-zA-Z]*$"))]
    pub attribute: String,
    /// The label key, for `label`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_FACTOR_KEY_CHARS), regex(pattern = PRINTABLE_TEXT_PATTERN))]
    pub key: Option<String>,
    /// The shared value (site-controlled text: at most 128 characters,
    /// cut with `…`).
    #[schemars(length(max = MAX_FACTOR_VALUE_CHARS), regex(pattern = PRINTABLE_TEXT_PATTERN))]
    pub value: String,
    /// Affected member clusters with this value.
    pub affected: i64,
    /// Affected member clusters the hub has heard from.
    pub affected_total: i64,
    /// Other sites with this value.
    pub unaffected: i64,
    /// Other sites the hub has heard from.
    pub unaffected_total: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The field documentation above (and so `kubectl explain` and the
    /// CRD) states these bounds in words.
    #[test]
    fn the_documented_bounds_are_the_constants() {
        assert_eq!(
            (MAX_DISCONNECTED, DISCONNECTED_BUDGET_BYTES),
            (100, 32 * 1024)
        );
        assert_eq!((MAX_ISSUE_CLUSTERS, ISSUES_BUDGET_BYTES), (100, 8 * 1024));
        assert_eq!((MAX_CASCADES, CASCADES_BUDGET_BYTES), (100, 48 * 1024));
        assert_eq!((MAX_OUTAGES, OUTAGES_BUDGET_BYTES), (100, 48 * 1024));
        assert_eq!(
            (MAX_EDGE_VERSIONS, EDGE_VERSIONS_BUDGET_BYTES),
            (64, 16 * 1024)
        );
        assert_eq!(MAX_INCIDENT_CLUSTERS, 50);
        assert_eq!(
            (
                MAX_COMMON_FACTORS,
                FACTORS_BUDGET_BYTES,
                MAX_FACTOR_VALUE_CHARS
            ),
            (5, 16 * 1024, 128)
        );
    }
}
