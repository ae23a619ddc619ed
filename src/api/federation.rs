//! The `FederationStatus` custom resource: a cluster-scoped singleton named
//! `fleet`, written only by the hub operator, summarising the whole fleet.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cluster::{Environment, Phase, Severity, SignalType, Tier, WorkloadRef};

/// Name of the one `FederationStatus` object.
pub const FEDERATION_STATUS_NAME: &str = "fleet";

/// `FederationStatus` carries no desired state: the object is only a status
/// holder, so it has no `spec` on the wire.
/// Upper bound on `FederationStatus` `status.cascades`: each production
/// site can be the target of up to `MAX_SIGNALS` cascades, so the full list
/// over a large fleet could pass the API server's object size limit.
pub const MAX_CASCADES: usize = 100;

#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
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
    /// Sites that are not Connected, sorted by name; a site whose
    /// maintenance window is open is counted by its phase above but not
    /// listed here (its downtime is planned).
    #[serde(default)]
    pub disconnected_clusters: Vec<DisconnectedCluster>,
    /// Active signals over all sites.
    #[serde(default)]
    pub total_active_issues: i64,
    /// Active signals by severity.
    #[serde(default)]
    pub issues_by_severity: IssuesBySeverity,
    /// Active signals per site (sites without signals are omitted).
    #[serde(default)]
    pub issues_by_cluster: BTreeMap<String, i64>,
    /// Number of active cross-cluster correlations.
    #[serde(default)]
    pub cross_cluster_correlations: i64,
    /// Active cross-cluster correlations.
    #[serde(default)]
    pub correlations: Vec<Correlation>,
    /// Number of cascades detected within the lookback.
    #[serde(default)]
    pub cascades_detected: i64,
    /// Cascades detected within the lookback, the most recent
    /// [`MAX_CASCADES`] (`cascadesDetected` counts them all).
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
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_OUTAGES))]
    pub outages: Vec<GroupedOutage>,
    /// Sites whose maintenance window is open (`spec.maintenance`).
    #[serde(default)]
    pub maintenance_clusters: i64,
    /// How many sites report each edge version (`status.observedVersion`;
    /// sites that never reported one are not counted). At most
    /// [`MAX_EDGE_VERSIONS`] versions; the rest are counted under `other`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = MAX_EDGE_VERSIONS))]
    pub edge_versions: BTreeMap<String, i64>,
    /// The hub leader's own heartbeat: who is judging the fleet and when it
    /// last did. Absent until a hub has led; readers say the fleet state is
    /// unjudged when it is absent or older than its thresholds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hub: Option<HubLiveness>,
}

/// Upper bound on `FederationStatus` `status.outages`.
pub const MAX_OUTAGES: usize = 100;
/// Upper bound on the entries of `FederationStatus` `status.edgeVersions`.
pub const MAX_EDGE_VERSIONS: usize = 64;

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
    /// Unreachable, not in maintenance), sorted.
    pub clusters: Vec<String>,
    /// When the hub last heard from the first of them to go dark (hub
    /// clock): the outage began after this.
    pub since: Time,
    /// The first of them to go dark (the one `since` is about): the site
    /// that started the outage. Absent when written by a hub that did not
    /// record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_by: Option<String>,
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
    pub fn add(&mut self, severity: Severity) {
        match severity {
            Severity::Critical => self.critical += 1,
            Severity::High => self.high += 1,
            Severity::Medium => self.medium += 1,
            Severity::Low => self.low += 1,
        }
    }

    /// Sum over all severities.
    pub fn total(&self) -> i64 {
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
    /// Member sites, sorted.
    pub clusters: Vec<String>,
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
}
