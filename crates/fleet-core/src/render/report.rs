//! Machine-readable output of `kubectl fleet status -o json|yaml`: the
//! `StatusReport` schema, stable for scripts.
//!
//! ```yaml
//! apiVersion: fleet.kubectl-fleet.dev/v1   # REPORT_API_VERSION; bumped on breaking change
//! kind: StatusReport
//! generatedAt: "2026-01-01T12:00:00Z"      # client clock when rendered
//! sites:                                   # sorted by name
//! - name: site-a
//!   displayName: site-a                    # spec.displayName or the name
//!   mode: Push                             # Push | Pull
//!   tier: standard                         # critical | standard | non-critical
//!   environment: production                # development | staging | production | dr
//!   region: us-east-1                      # null when unset
//!   phase: Connected                       # Pending | Connected | Stale | Unreachable | Sleeping: the phase every view shows
//!   phaseJudgedByHub: true                 # false: the hub never judged the site, or its heartbeat's age implies a worse phase than the hub's (see below)
//!   hubPhase: Connected                    # the phase the hub last wrote; null when never judged
//!   phaseTransitionTime: "..."             # null when never judged
//!   inMaintenance: false                   # true while spec.maintenance is open (kubectl fleet cordon)
//!   maintenance: null                      # spec.maintenance as set, null when none:
//!                                          #   {since, until, reason, endsInSeconds}, endsInSeconds >= 0
//!   connectivity: null                     # spec.connectivity (kubectl fleet schedule), null when none:
//!                                          #   {timeZone, offline: ["22:00-06:00", ...], absentUpToSeconds}
//!   lateToWake: false                      # true when the hub judged it silent past that schedule (LateToWake)
//!   heartbeatIntervalSeconds: 30
//!   lastHeartbeatTime: "..."               # null when never heard from
//!   lastHeartbeatAgeSeconds: 5             # on the hub clock, >= 0; null when never heard from
//!   clockOffsetSeconds: null               # edge clock minus hub clock, as the hub measured it; null when within tolerance or Pull
//!   observedVersion: 0.1.0                 # null when unknown (same for the next 3)
//!   kubernetesVersion: v1.33.2
//!   nodeCount: 3
//!   namespaceCount: 12
//!   gpus: {total: 8, allocatable: 8, byVendor: {nvidia.com/gpu: {total: 8, allocatable: 8}}}  # null when unknown
//!   nodeInfo: {kernelVersion: {values: [{value: 6.8.0-45-generic, nodes: 3}]}, ...}  # status.nodeInfo as reported
//!                                          #   (osImage, kernelVersion, containerRuntimeVersion, gpuModel: each
//!                                          #   {values, otherValues, otherNodes}); null when the edge reported none
//!   services: {models: 1, ready: 1, failed: 0, total: 1}   # null when unknown
//!   quarantine: null                       # spec.quarantine (kubectl fleet quarantine), null when none: {since, reason}
//!   credentialExpirationTime: "..."        # null when unknown or Pull mode
//!   signals: [...]                         # as in FederatedCluster status.signals ([] when none), each followed by
//!                                          #   the hub's decision on it: remediation {mode, approvalRequired, role}
//!                                          #   at decidedSeverity and decidedTier (null: the unknown-tier fallback),
//!                                          #   raisedBy: the incidents that raised it (ids; [] when none)
//!   conditions: [...]                      # hub conditions; [] when none
//!   unreadable: null                       # what of the site's object this reader could not read (not what the
//!                                          #   CRD describes), null when it read whole: {fields: [{path, reason}],
//!                                          #   notShown}; the keys it names are null or left out above
//! summary:
//!   sites: 1
//!   phases: {connected: 1, stale: 0, unreachable: 0, pending: 0, sleeping: 0}   # as shown (phase above)
//!   notJudgedByHub: 0                      # sites whose phase is not the hub's (phaseJudgedByHub false)
//!   maintenance: 0                         # sites in maintenance (inMaintenance true)
//!   edgeVersions: {0.1.0: 1}               # sites per edge version (observedVersion; sites without one are not
//!                                          #   counted); at most 64 keys, the rest under "other"
//!   gpus: {total: 8, allocatable: 8}
//!   services: {ready: 1, failed: 0, total: 1}
//!   signals: {active: 0, critical: 0, high: 0, medium: 0, low: 0}
//!   hub:                                   # is a hub judging the fleet? (FederationStatus status.hub)
//!     state: Judging                       # Judging | Silent | NeverJudged | Unknown (the record could not be read)
//!     judging: true                        # false when Silent or NeverJudged; null when Unknown
//!     leader: fleet-operator-hub-7d9-1     # who recorded the last judgement; null when none
//!     leaderSince: "..."                   # when it became leader (hub clock); null when unknown
//!     lastJudgementTime: "..."             # when it last judged every site (hub clock); null when never
//!     lastJudgementAgeSeconds: 4           # at generatedAt on this machine's clock, >= 0; null when never
//!     intervalSeconds: 15                  # how often the leader records a judgement; null when never
//!     silentAfterSeconds: 45               # 3 intervals: older means no hub is judging; null when never
//! ```
//!
//! `phase` never shows a site healthier than its heartbeat allows
//! (`fleet::summary::shown_phase`): a site the hub left `Connected` whose
//! heartbeat is older than 10 intervals is `Unreachable`; while no hub is
//! judging (`summary.hub.judging` false), a `Connected` or `Stale` site
//! past 3 or 10 intervals is `Stale` or `Unreachable`; a site with a
//! heartbeat that no hub judged is `Pending` (or worse, by age). Each such
//! site has `phaseJudgedByHub: false`; `hubPhase` keeps what the hub wrote.
//!
//! Every key is always present (null when unknown), so `jq` paths never
//! need to test for absence. New keys may be added; none are removed or
//! renamed without changing `apiVersion`.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use serde::Serialize;

pub use super::decided::DecidedSignal;
use super::times;
use crate::api::{Environment, FederatedCluster, GpuCount, Mode, Phase, Tier};
use crate::fleet::liveness::HubVerdict;
use crate::fleet::policy::{Incidents, SignalPolicy};
use crate::fleet::summary::shown_phase;
use crate::render::jsonpath::{SiteStream, Template};
/// Kept here too for callers of the report (`rest`); declared in
/// [`super::totals`].
pub use crate::render::totals::ViewTotals;

/// `apiVersion` of every report this module renders.
pub const REPORT_API_VERSION: &str = "fleet.kubectl-fleet.dev/v1";

/// The `kubectl fleet status -o json|yaml` document.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct StatusReport {
    /// Always [`REPORT_API_VERSION`].
    pub api_version: &'static str,
    /// Always `StatusReport`.
    pub kind: &'static str,
    /// When the report was rendered (client clock).
    pub generated_at: Time,
    /// One entry per site, sorted by name.
    pub sites: Vec<SiteReport>,
    /// Fleet-wide totals over `sites`.
    pub summary: SummaryReport,
}

/// One site in a [`StatusReport`].
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SiteReport {
    /// Site (object) name.
    pub name: String,
    /// Display name, falling back to the name.
    pub display_name: String,
    /// Push or Pull.
    pub mode: Mode,
    /// Tier.
    pub tier: Tier,
    /// Environment.
    pub environment: Environment,
    /// Region, if set.
    pub region: Option<String>,
    /// The phase shown (see the module documentation).
    pub phase: Phase,
    /// Whether `phase` is the one the hub wrote.
    pub phase_judged_by_hub: bool,
    /// The phase the hub last wrote, if any.
    pub hub_phase: Option<Phase>,
    /// When the phase last changed.
    #[serde(serialize_with = "times::option")]
    pub phase_transition_time: Option<Time>,
    /// Whether the site's maintenance window is open (`kubectl fleet
    /// cordon`): it is still judged and shown, but raises no per-site alert.
    pub in_maintenance: bool,
    /// The site's maintenance window as set, whether open, ended or not
    /// yet begun.
    pub maintenance: Option<MaintenanceReport>,
    /// When the site is expected offline (`spec.connectivity`, `kubectl
    /// fleet schedule`), as set.
    pub connectivity: Option<crate::api::Connectivity>,
    /// Whether the hub judged the site late to wake (silent past its
    /// schedule: `Connected` reason `LateToWake`).
    pub late_to_wake: bool,
    /// The reporting cadence.
    pub heartbeat_interval_seconds: i32,
    /// Edge clock at the last report.
    #[serde(serialize_with = "times::option")]
    pub last_heartbeat_time: Option<Time>,
    /// Seconds since the last heartbeat on the hub clock
    /// (`lastHeartbeatTime - clockOffsetSeconds` of the site's status),
    /// never negative; so a skewed edge clock does not skew it.
    pub last_heartbeat_age_seconds: Option<i64>,
    /// The site's `status.clockOffsetSeconds`: how far the edge clock is
    /// ahead of the hub clock (negative: behind), null when within the
    /// `ClockSkew` tolerance or for Pull sites.
    pub clock_offset_seconds: Option<i64>,
    /// Edge operator version.
    pub observed_version: Option<String>,
    /// Member Kubernetes version.
    pub kubernetes_version: Option<String>,
    /// Nodes.
    pub node_count: Option<i64>,
    /// Namespaces.
    pub namespace_count: Option<i64>,
    /// GPU capacity.
    pub gpus: Option<GpuReport>,
    /// What the site's nodes run (`status.nodeInfo`), as reported.
    pub node_info: Option<crate::api::NodeInfo>,
    /// Inference workloads.
    pub services: Option<ServicesReport>,
    /// The site's quarantine (`kubectl fleet quarantine`): its signals are
    /// then part of no fleet incident.
    pub quarantine: Option<QuarantineReport>,
    /// Expiry of the edge's hub token (Push mode).
    #[serde(serialize_with = "times::option")]
    pub credential_expiration_time: Option<Time>,
    /// Active signals, worst first (as reported), each with the hub's
    /// decision on it.
    #[serde(serialize_with = "times::decided_signals")]
    pub signals: Vec<DecidedSignal>,
    /// Hub-written conditions.
    #[serde(serialize_with = "times::conditions")]
    pub conditions: Vec<Condition>,
    /// The member cluster the site's reports come from: the UID of its
    /// `kube-system` namespace (`status.member`); a `MemberChanged`
    /// condition says when it changed.
    pub member: Option<String>,
    /// The site's own account of its latest dark period
    /// (`status.lastDarkPeriod`: its from, to and entries are on the
    /// site's clock, as the edge's journal recorded them); null when it
    /// reported none.
    pub last_dark_period: Option<crate::api::DarkPeriod>,
    /// What of the site's object could not be read, None when it read
    /// whole (`api::lenient`).
    pub unreadable: Option<UnreadableReport>,
}

/// What of a site's object a reader could not read, in a report.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct UnreadableReport {
    /// The fields left out (at most `api::MAX_UNREADABLE_FIELDS`).
    pub fields: Vec<UnreadableFieldReport>,
    /// How many more were left out.
    pub not_shown: usize,
}

/// One field a reader could not read.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct UnreadableFieldReport {
    /// Where: `status.lastHeartbeatTime`, `status.signals[3]`.
    pub path: String,
    /// Why, as the decoder said it (quoting the value).
    pub reason: String,
}

impl From<&crate::api::Unreadable> for UnreadableReport {
    fn from(u: &crate::api::Unreadable) -> Self {
        UnreadableReport {
            fields: u
                .fields
                .iter()
                .map(|f| UnreadableFieldReport {
                    path: f.path.clone(),
                    reason: f.reason.clone(),
                })
                .collect(),
            not_shown: u.more,
        }
    }
}

/// A site's quarantine (`spec.quarantine`) in a report.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct QuarantineReport {
    /// When it began.
    #[serde(serialize_with = "times::option")]
    pub since: Option<Time>,
    /// Why, as given to `quarantine --reason`.
    pub reason: Option<String>,
}

/// A site's maintenance window (`spec.maintenance`) in a report.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceReport {
    /// When it opened (or opens).
    #[serde(serialize_with = "times::option")]
    pub since: Option<Time>,
    /// When it ends by itself.
    #[serde(serialize_with = "times::option")]
    pub until: Option<Time>,
    /// Why, as given to `cordon --reason`.
    pub reason: Option<String>,
    /// Seconds until it ends, on the reader's clock; 0 once ended.
    pub ends_in_seconds: i64,
}

impl MaintenanceReport {
    /// The report of `window` at `now`.
    pub(crate) fn new(window: crate::api::MaintenanceWindow, now: Timestamp) -> Self {
        MaintenanceReport {
            ends_in_seconds: window.until.0.duration_since(now).as_secs().max(0),
            since: window.since,
            until: Some(window.until),
            reason: window.reason,
        }
    }
}

/// GPUs of one site.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct GpuReport {
    /// Capacity.
    pub total: i64,
    /// Allocatable.
    pub allocatable: i64,
    /// Per vendor resource.
    pub by_vendor: BTreeMap<String, GpuCount>,
}

/// Inference workloads of one site.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServicesReport {
    /// LLMKube models.
    pub models: i64,
    /// Ready services.
    pub ready: i64,
    /// Failed services.
    pub failed: i64,
    /// All services.
    pub total: i64,
}

/// Fleet-wide totals of a [`StatusReport`].
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SummaryReport {
    /// Number of sites.
    pub sites: i64,
    /// Sites per phase, as shown.
    pub phases: PhaseCounts,
    /// Sites whose shown phase is not the hub's.
    pub not_judged_by_hub: i64,
    /// Sites whose maintenance window is open.
    pub maintenance: i64,
    /// Sites per edge version, bounded as `FederationStatus` bounds it.
    pub edge_versions: BTreeMap<String, i64>,
    /// GPU totals.
    pub gpus: GpuTotals,
    /// Service totals.
    pub services: ServiceTotals,
    /// Signal totals.
    pub signals: SignalTotals,
    /// Whether a hub is judging the fleet.
    pub hub: HubReport,
}

/// Whether a hub is judging the fleet, as a report shows it
/// (`summary.hub`; see the module documentation).
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct HubReport {
    /// `Judging`, `Silent`, `NeverJudged` or `Unknown`.
    pub state: &'static str,
    /// Whether a hub is judging; null when unknown.
    pub judging: Option<bool>,
    /// The leader that recorded the last judgement.
    pub leader: Option<String>,
    /// When it became leader (hub clock).
    #[serde(serialize_with = "times::option")]
    pub leader_since: Option<Time>,
    /// When it last judged every site (hub clock).
    #[serde(serialize_with = "times::option")]
    pub last_judgement_time: Option<Time>,
    /// Seconds since then, on the reader's clock, never negative.
    pub last_judgement_age_seconds: Option<i64>,
    /// How often the leader records a judgement.
    pub interval_seconds: Option<i64>,
    /// Age of the record past which no hub counts as judging.
    pub silent_after_seconds: Option<i64>,
}

impl From<&HubVerdict> for HubReport {
    fn from(v: &HubVerdict) -> Self {
        let secs = |d: std::time::Duration| i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
        let record = v.record.as_ref();
        HubReport {
            state: v.state.as_str(),
            judging: v.judging(),
            leader: record.map(|r| r.leader.clone()),
            leader_since: record.and_then(|r| r.leader_since.clone()),
            last_judgement_time: record.map(|r| r.last_judgement_time.clone()),
            last_judgement_age_seconds: v.since_judgement.map(secs),
            interval_seconds: record.map(|r| r.interval_seconds),
            silent_after_seconds: v.silent_after.map(secs),
        }
    }
}

/// Sites per phase.
#[derive(Serialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseCounts {
    /// Connected sites.
    pub connected: i64,
    /// Stale sites.
    pub stale: i64,
    /// Unreachable sites.
    pub unreachable: i64,
    /// Pending sites.
    pub pending: i64,
    /// Sleeping sites (silent as their schedule expects).
    pub sleeping: i64,
}

/// GPU totals.
#[derive(Serialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuTotals {
    /// Capacity.
    pub total: i64,
    /// Allocatable.
    pub allocatable: i64,
}

/// Inference service totals.
#[derive(Serialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServiceTotals {
    /// Ready.
    pub ready: i64,
    /// Failed.
    pub failed: i64,
    /// All.
    pub total: i64,
}

/// Active signal totals.
#[derive(Serialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SignalTotals {
    /// All active signals.
    pub active: i64,
    /// Critical.
    pub critical: i64,
    /// High.
    pub high: i64,
    /// Medium.
    pub medium: i64,
    /// Low.
    pub low: i64,
}

/// One site as the report shows it, `hub_judging` being whether a hub is
/// judging the fleet (None: unknown), its signals decided with the fleet's
/// `incidents`.
pub(crate) fn site_report(
    site: &FederatedCluster,
    hub_judging: Option<bool>,
    incidents: &Incidents,
    now: Timestamp,
) -> SiteReport {
    into_site_report(site.clone(), hub_judging, incidents, now)
}

/// [`site_report`] of a site the caller is done with: its strings and
/// lists move into the report instead of being copied.
pub(crate) fn into_site_report(
    site: FederatedCluster,
    hub_judging: Option<bool>,
    incidents: &Incidents,
    now: Timestamp,
) -> SiteReport {
    let decisions: Vec<SignalPolicy> = site
        .status
        .as_ref()
        .map(|s| s.signals())
        .unwrap_or_default()
        .iter()
        .map(|s| incidents.decide(&site, s))
        .collect();
    let shown = shown_phase(&site, hub_judging, now);
    let in_maintenance = site.in_maintenance(now);
    let late_to_wake = shown.judged_by_hub && crate::fleet::hub_status::is_late_to_wake(&site);
    let name = site.site_name().to_owned();
    let display_name = site.display_name().to_owned();
    let status = site.status.unwrap_or_default();
    let last_heartbeat_age_seconds = status.heartbeat_age(now).map(|d| d.as_secs());
    let unreadable = status.unreadable().map(UnreadableReport::from);
    SiteReport {
        name,
        display_name,
        mode: site.spec.mode,
        tier: site.spec.tier,
        environment: site.spec.environment,
        region: site.spec.region,
        phase: shown.phase,
        phase_judged_by_hub: shown.judged_by_hub,
        hub_phase: shown.hub_phase,
        phase_transition_time: status.phase_transition_time,
        in_maintenance,
        maintenance: site
            .spec
            .maintenance
            .map(|w| MaintenanceReport::new(w, now)),
        late_to_wake,
        connectivity: site.spec.connectivity,
        heartbeat_interval_seconds: site.spec.heartbeat_interval_seconds,
        last_heartbeat_age_seconds,
        clock_offset_seconds: status.clock_offset_seconds,
        last_heartbeat_time: status.last_heartbeat_time,
        observed_version: status.observed_version,
        kubernetes_version: status.kubernetes_version,
        node_count: status.node_count,
        namespace_count: status.namespace_count,
        gpus: status.capacity.map(|c| GpuReport {
            total: c.gpus_total,
            allocatable: c.gpus_allocatable,
            by_vendor: c.gpus_by_vendor,
        }),
        node_info: status.node_info,
        services: status.inference.map(|i| ServicesReport {
            models: i.models,
            ready: i.services_ready,
            failed: i.services_failed,
            total: i.services_total,
        }),
        quarantine: site.spec.quarantine.map(|q| QuarantineReport {
            since: q.since,
            reason: q.reason,
        }),
        credential_expiration_time: status.credential_expiration_time,
        unreadable,
        signals: status
            .signals
            .unwrap_or_default()
            .into_iter()
            .zip(decisions)
            .map(|(signal, decision)| DecidedSignal { signal, decision })
            .collect(),
        conditions: status.conditions.unwrap_or_default(),
        member: status.member,
        last_dark_period: status.last_dark_period,
    }
}

/// The report for `sites` at `now`, sorted by name, with `hub` the
/// verdict on the hub's liveness and `incidents` the fleet's (what the
/// signals are decided with).
pub fn status_report(
    sites_in: &[FederatedCluster],
    hub: &HubVerdict,
    incidents: &Incidents,
    now: Timestamp,
) -> StatusReport {
    let judging = hub.judging();
    let mut sites: Vec<SiteReport> = sites_in
        .iter()
        .map(|s| site_report(s, judging, incidents, now))
        .collect();
    sites.sort_by(|a, b| a.name.cmp(&b.name));
    let mut totals = ViewTotals::default();
    for site in sites_in {
        totals.add(site, &shown_phase(site, judging, now), now);
    }
    StatusReport {
        api_version: REPORT_API_VERSION,
        kind: "StatusReport",
        generated_at: Time(now),
        sites,
        summary: SummaryReport::new(&totals, hub),
    }
}

/// The text formats of a [`StatusReport`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    /// [`to_json`].
    Json,
    /// [`to_yaml`].
    Yaml,
}

/// A [`StatusReport`] rendered site by site, for fleets too large to hold:
/// the caller feeds sites in name order and writes out each piece as it
/// comes; the concatenation is byte for byte what [`to_json`] or
/// [`to_yaml`] make of [`status_report`] over the same sites. Only the
/// running totals are kept.
#[derive(Debug)]
pub struct ReportStream {
    format: ReportFormat,
    now: Timestamp,
    hub: HubVerdict,
    incidents: Incidents,
    totals: ViewTotals,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReportHead {
    api_version: &'static str,
    kind: &'static str,
    generated_at: Time,
}

#[derive(Serialize)]
struct SitesPart<'a> {
    sites: &'a [SiteReport],
}

#[derive(Serialize)]
struct SummaryPart<'a> {
    summary: &'a SummaryReport,
}

impl ReportStream {
    /// A report generated at `now` with `hub` the verdict on the hub's
    /// liveness and `incidents` the fleet's; appends its opening to `out`.
    pub fn begin(
        format: ReportFormat,
        hub: HubVerdict,
        incidents: Incidents,
        now: Timestamp,
        out: &mut Vec<u8>,
    ) -> Result<Self, RenderError> {
        let head = ReportHead {
            api_version: REPORT_API_VERSION,
            kind: "StatusReport",
            generated_at: Time(now),
        };
        match format {
            ReportFormat::Json => {
                // Our own constants and the clock: nothing to escape.
                out.extend_from_slice(b"{\n  \"apiVersion\": ");
                serde_json::to_writer(&mut *out, head.api_version).map_err(RenderError::Json)?;
                out.extend_from_slice(b",\n  \"kind\": ");
                serde_json::to_writer(&mut *out, head.kind).map_err(RenderError::Json)?;
                out.extend_from_slice(b",\n  \"generatedAt\": ");
                serde_json::to_writer(&mut *out, &head.generated_at).map_err(RenderError::Json)?;
                out.extend_from_slice(b",\n");
            }
            ReportFormat::Yaml => out.extend_from_slice(to_yaml(&head)?.as_bytes()),
        }
        Ok(Self {
            format,
            now,
            hub,
            incidents,
            totals: ViewTotals::default(),
        })
    }

    /// Appends one site; sites must come in name order.
    pub fn site(&mut self, site: FederatedCluster, out: &mut Vec<u8>) -> Result<(), RenderError> {
        let first = self.totals.fleet.sites == 0;
        let judging = self.hub.judging();
        self.totals
            .add(&site, &shown_phase(&site, judging, self.now), self.now);
        let report = into_site_report(site, judging, &self.incidents, self.now);
        match self.format {
            ReportFormat::Json => {
                out.extend_from_slice(if first {
                    b"  \"sites\": [\n    "
                } else {
                    b",\n    "
                });
                // Written in place, already indented as an element of
                // `sites` (no second pass to indent it).
                let mut ser =
                    serde_json::Serializer::with_formatter(&mut *out, IndentedPretty::new(b"    "));
                report.serialize(&mut ser).map_err(RenderError::Json)?;
            }
            ReportFormat::Yaml => {
                let part = to_yaml(&SitesPart {
                    sites: std::slice::from_ref(&report),
                })?;
                // `sites:` opens the sequence once; each later site is only
                // its `- ...` lines.
                let body = if first {
                    part.as_str()
                } else {
                    part.split_once('\n').map_or("", |(_, rest)| rest)
                };
                out.extend_from_slice(body.as_bytes());
            }
        }
        Ok(())
    }

    /// Appends the end of the sites and the summary.
    pub fn finish(self, out: &mut Vec<u8>) -> Result<(), RenderError> {
        let summary = SummaryReport::new(&self.totals, &self.hub);
        match self.format {
            ReportFormat::Json => {
                out.extend_from_slice(if self.totals.fleet.sites == 0 {
                    b"  \"sites\": [],\n"
                } else {
                    b"\n  ],\n"
                });
                out.extend_from_slice(b"  \"summary\": ");
                let mut ser =
                    serde_json::Serializer::with_formatter(&mut *out, IndentedPretty::new(b"  "));
                summary.serialize(&mut ser).map_err(RenderError::Json)?;
                out.extend_from_slice(b"\n}\n");
            }
            ReportFormat::Yaml => {
                if self.totals.fleet.sites == 0 {
                    out.extend_from_slice(to_yaml(&SitesPart { sites: &[] })?.as_bytes());
                }
                out.extend_from_slice(to_yaml(&SummaryPart { summary: &summary })?.as_bytes());
            }
        }
        Ok(())
    }
}

/// `kubectl fleet status -o jsonpath=TEMPLATE`: the template evaluated
/// over the JSON report ([`StatusReport`]), fed site by site in name
/// order like [`ReportStream`]. Each site becomes its report entry, is
/// evaluated and dropped when the template walks `sites` in order
/// ([`SiteStream`]); only the totals and the printed text are kept.
#[derive(Debug)]
pub struct JsonPathReport {
    stream: SiteStream,
    now: Timestamp,
    hub: HubVerdict,
    incidents: Incidents,
    totals: ViewTotals,
}

impl JsonPathReport {
    /// A report generated at `now`, its signals decided with `incidents`;
    /// `escape`: string values are made terminal-safe (the output goes to
    /// a terminal).
    pub fn begin(
        template: Template,
        hub: HubVerdict,
        incidents: Incidents,
        now: Timestamp,
        escape: bool,
    ) -> Self {
        Self {
            stream: SiteStream::new(template.escaped(escape), "sites"),
            now,
            hub,
            incidents,
            totals: ViewTotals::default(),
        }
    }

    /// Adds one site; sites must come in name order.
    pub fn site(&mut self, site: FederatedCluster) -> Result<(), RenderError> {
        let judging = self.hub.judging();
        self.totals
            .add(&site, &shown_phase(&site, judging, self.now), self.now);
        let report = into_site_report(site, judging, &self.incidents, self.now);
        self.stream
            .push(serde_json::to_value(&report).map_err(RenderError::Json)?);
        Ok(())
    }

    /// The printed text (kubectl prints no newline of its own after it).
    pub fn finish(self) -> Result<String, RenderError> {
        let summary = SummaryReport::new(&self.totals, &self.hub);
        let mut doc = serde_json::Map::new();
        doc.insert("apiVersion".into(), REPORT_API_VERSION.into());
        doc.insert("kind".into(), "StatusReport".into());
        doc.insert(
            "generatedAt".into(),
            serde_json::to_value(Time(self.now)).map_err(RenderError::Json)?,
        );
        doc.insert(
            "summary".into(),
            serde_json::to_value(&summary).map_err(RenderError::Json)?,
        );
        Ok(self.stream.finish(doc))
    }
}

/// serde_json's pretty layout (two spaces per level) for a value nested in
/// a larger document: every line after the first starts with `base`. Every
/// JSON document the views and the REST API write goes through it, and it
/// writes strings terminal-safe: what serde_json leaves raw and a terminal
/// would interpret (C1 controls, DEL, bidi and other invisible characters)
/// as `\uXXXX` escapes (`render::safe::write_json_fragment`), the same
/// string to any JSON reader.
struct IndentedPretty {
    /// What starts a line at the current level: a newline, the base, two
    /// spaces per level (written in one piece).
    line: Vec<u8>,
    has_value: bool,
}

impl IndentedPretty {
    fn new(base: &[u8]) -> Self {
        let mut line = Vec::with_capacity(64);
        line.push(b'\n');
        line.extend_from_slice(base);
        Self {
            line,
            has_value: false,
        }
    }

    fn newline<W: ?Sized + std::io::Write>(&self, w: &mut W) -> std::io::Result<()> {
        w.write_all(&self.line)
    }

    fn open<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        bracket: &[u8],
    ) -> std::io::Result<()> {
        self.line.extend_from_slice(b"  ");
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        bracket: &[u8],
    ) -> std::io::Result<()> {
        self.line.truncate(self.line.len().saturating_sub(2));
        if self.has_value {
            self.newline(w)?;
        }
        w.write_all(bracket)
    }

    fn item<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        self.newline(w)
    }
}

impl serde_json::ser::Formatter for IndentedPretty {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        super::safe::write_json_fragment(w, fragment)
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.item(w, first)
    }

    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.item(w, first)
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

impl SummaryReport {
    /// The report's summary from folded view totals and the hub verdict.
    pub fn new(v: &ViewTotals, hub: &HubVerdict) -> Self {
        let t = &v.fleet;
        let by = &t.by_severity;
        SummaryReport {
            sites: t.sites,
            phases: PhaseCounts {
                connected: t.connected,
                stale: t.stale,
                unreachable: t.unreachable,
                pending: t.pending,
                sleeping: t.sleeping,
            },
            not_judged_by_hub: t.not_judged,
            maintenance: v.maintenance,
            edge_versions: v.versions.summary(),
            gpus: GpuTotals {
                total: t.gpus_total,
                allocatable: t.gpus_allocatable,
            },
            services: ServiceTotals {
                ready: t.services_ready,
                failed: t.services_failed,
                total: t.services_total,
            },
            signals: SignalTotals {
                active: t.active_signals(),
                critical: by.critical,
                high: by.high,
                medium: by.medium,
                low: by.low,
            },
            hub: HubReport::from(hub),
        }
    }
}

/// Errors turning a report into text.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// JSON serialisation failed.
    #[error("failed to render JSON")]
    Json(#[source] serde_json::Error),
    /// YAML serialisation failed.
    #[error("failed to render YAML")]
    Yaml(#[source] serde_saphyr::SerializeError),
}

/// Pretty JSON with a trailing newline, terminal-safe (see
/// [`IndentedPretty`]): serde_json's pretty layout.
pub fn to_json<T: Serialize>(value: &T) -> Result<String, RenderError> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, IndentedPretty::new(b""));
    value.serialize(&mut ser).map_err(RenderError::Json)?;
    out.push(b'\n');
    // serde_json writes only UTF-8, and the escapes are ASCII.
    Ok(String::from_utf8(out).unwrap_or_default())
}

/// YAML (serde-saphyr).
pub fn to_yaml<T: Serialize>(value: &T) -> Result<String, RenderError> {
    serde_saphyr::to_string(value).map_err(RenderError::Yaml)
}
