//! `kubectl fleet incidents`: cross-cluster correlations, cascades and the
//! active signals of every site with the remediation decision the hub
//! makes for each (`fleet::policy::Incidents::decide`: raised to critical,
//! and to a correlation's strictest tier, by the incidents it is part of),
//! which incidents raised it, and who started each incident.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::Serialize;

use crate::api::{Cascade, CommonFactor, Correlation, FederatedCluster, Severity, Signal, Tier};
use crate::fleet::age::{age, human_duration};
use crate::fleet::correlation::{Seen, seen_on_hub_clock};
use crate::fleet::liveness::HubVerdict;
use crate::fleet::policy::{Incidents, Policy, cascade_policy, correlation_policy};
use crate::render::report::{HubReport, REPORT_API_VERSION};
use crate::render::table::{PlainTable, severity_style};

/// A site's signal with its site and the hub's decision on it.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SiteSignal {
    /// The signal as the site reports it (its own `severity`, its times as
    /// written); `cluster` is always set.
    #[serde(flatten)]
    pub signal: Signal,
    /// Tier of the site.
    pub tier: Tier,
    /// The remediation decision: the policy of `decidedTier` at
    /// `decidedSeverity`.
    pub remediation: Policy,
    /// The severity the decision is made at: the signal's own, or critical
    /// when an incident raised it.
    pub decided_severity: Severity,
    /// The tier whose policy applies: the site's, or a correlation's
    /// strictest when stricter; null: the unknown-tier fallback.
    pub decided_tier: Option<Tier>,
    /// The incidents that raised it (`xc-…`, `cc-…`); empty when its own
    /// severity and its site's tier decide.
    pub raised_by: Vec<String>,
    /// Whether its site is quarantined (then nothing raises it).
    pub quarantined: bool,
    /// Its times on the hub clock (the table's ages).
    #[serde(skip)]
    pub seen: Seen,
}

impl SiteSignal {
    /// `signal` of `site` (from its `status`), decided with `incidents`,
    /// at `now`.
    pub(crate) fn new(
        site: &FederatedCluster,
        status: &crate::api::FederatedClusterStatus,
        signal: &Signal,
        incidents: &Incidents,
        now: Timestamp,
    ) -> Self {
        let decision = incidents.decide(site, signal);
        let mut signal = signal.clone();
        signal.cluster = Some(site.site_name().to_owned());
        SiteSignal {
            seen: seen_on_hub_clock(status, &signal, now),
            signal,
            tier: site.spec.tier,
            remediation: decision.policy,
            decided_severity: decision.severity,
            decided_tier: decision.tier,
            raised_by: decision.raised_by,
            quarantined: site.is_quarantined(),
        }
    }

    /// Every signal of `site`, decided with `incidents`, at `now`, those
    /// `keep` accepts.
    pub(crate) fn of_site<'a>(
        site: &'a FederatedCluster,
        incidents: &'a Incidents,
        now: Timestamp,
        keep: impl Fn(&Signal) -> bool + 'a,
    ) -> impl Iterator<Item = SiteSignal> + 'a {
        site.status
            .iter()
            .flat_map(|status| status.signals().iter().map(move |s| (status, s)))
            .filter(move |(_, s)| keep(s))
            .map(move |(status, signal)| SiteSignal::new(site, status, signal, incidents, now))
    }
}

/// Sorted worst decided severity first, then by type, namespace, workload
/// and site.
fn sort_decided(signals: &mut [SiteSignal]) {
    signals.sort_by(|a, b| {
        let key = |s: &SiteSignal| {
            (
                s.decided_severity,
                s.signal.severity,
                s.signal.type_,
                s.signal.namespace.clone(),
                s.signal.workload.clone(),
                s.signal.cluster.clone(),
            )
        };
        key(a).cmp(&key(b))
    });
}

/// A correlation with the policy that applies to it: its strictest tier's
/// at critical severity, what every member signal is decided at, at least.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CorrelationIncident {
    /// The correlation.
    #[serde(flatten)]
    pub correlation: Correlation,
    /// The remediation policy for it.
    pub remediation: Policy,
}

impl From<Correlation> for CorrelationIncident {
    fn from(correlation: Correlation) -> Self {
        CorrelationIncident {
            remediation: correlation_policy(&correlation),
            correlation,
        }
    }
}

/// A cascade with the policy that applies to it: its target's tier at
/// critical severity, what the production signal it reached is decided at,
/// at least.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CascadeIncident {
    /// The cascade (always with its `id`).
    #[serde(flatten)]
    pub cascade: Cascade,
    /// The remediation policy for it.
    pub remediation: Policy,
}

impl From<Cascade> for CascadeIncident {
    fn from(mut cascade: Cascade) -> Self {
        // A cascade written by a hub from before cascades had ids goes by
        // the id of its identity, as `kubectl fleet incidents ID` finds it.
        cascade.id = crate::fleet::incident::cascade_id_of(&cascade);
        CascadeIncident {
            remediation: cascade_policy(&cascade),
            cascade,
        }
    }
}

/// A quarantined site (`spec.quarantine`).
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct QuarantinedSite {
    /// The site.
    pub name: String,
    /// Since when.
    #[serde(serialize_with = "crate::render::times::option")]
    pub since: Option<Time>,
    /// Why.
    pub reason: Option<String>,
}

/// The `kubectl fleet incidents -o json|yaml` document:
/// `{apiVersion, kind: IncidentsReport, generatedAt, correlations, cascades, outages, quarantined, signals, hub}`
/// with correlations, cascades and outages as in `FederationStatus` status
/// (plus `remediation` on correlations and cascades, and every cascade's
/// `id`), `quarantined` the quarantined sites among those listed
/// (`{name, since, reason}`), signals as in `FederatedCluster` status plus
/// `cluster`, `tier`, the hub's decision (`remediation {mode,
/// approvalRequired, role}` at `decidedSeverity` and `decidedTier`, raised
/// by the incidents `raisedBy`) and `quarantined`, and `hub` as
/// `summary.hub` of `kubectl fleet status -o json` (the correlations and
/// cascades are the hub's: stale when it is not judging).
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct IncidentsReport {
    /// Always the report API version.
    pub api_version: &'static str,
    /// Always `IncidentsReport`.
    pub kind: &'static str,
    /// When the report was rendered (client clock).
    pub generated_at: Time,
    /// Active cross-cluster correlations.
    pub correlations: Vec<CorrelationIncident>,
    /// Cascades within the lookback.
    pub cascades: Vec<CascadeIncident>,
    /// Grouped outages: sites of one region (or label value) that left
    /// Connected together.
    pub outages: Vec<crate::api::GroupedOutage>,
    /// Quarantined sites: what they report is part of no incident.
    pub quarantined: Vec<QuarantinedSite>,
    /// Every site's signals, worst decided severity first.
    pub signals: Vec<SiteSignal>,
    /// Whether a hub is judging the fleet.
    pub hub: HubReport,
}

/// Gather the incidents view: every site's signals tagged with the site and
/// the hub's decision on them, sorted worst first then by site.
pub fn incidents_report(
    sites: &[FederatedCluster],
    correlations: Vec<Correlation>,
    cascades: Vec<Cascade>,
    outages: Vec<crate::api::GroupedOutage>,
    hub: &HubVerdict,
    now: Timestamp,
) -> IncidentsReport {
    let incidents = Incidents::new(&correlations, &cascades);
    let mut signals: Vec<SiteSignal> = sites
        .iter()
        .flat_map(|site| SiteSignal::of_site(site, &incidents, now, |_| true))
        .collect();
    sort_decided(&mut signals);
    IncidentsReport {
        api_version: REPORT_API_VERSION,
        kind: "IncidentsReport",
        generated_at: Time(now),
        correlations: correlations.into_iter().map(Into::into).collect(),
        cascades: cascades.into_iter().map(Into::into).collect(),
        outages,
        quarantined: sites
            .iter()
            .filter_map(|s| {
                s.spec.quarantine.as_ref().map(|q| QuarantinedSite {
                    name: s.site_name().to_owned(),
                    since: q.since.clone(),
                    reason: q.reason.clone(),
                })
            })
            .collect(),
        signals,
        hub: HubReport::from(hub),
    }
}

/// The sites an incident names, and how many more it has when its list
/// was cut (`clustersTotal`).
fn named(clusters: &[String], total: i64) -> String {
    let more = total.saturating_sub(i64::try_from(clusters.len()).unwrap_or(i64::MAX));
    if more > 0 {
        format!("{} and {more} more", clusters.join(","))
    } else {
        clusters.join(",")
    }
}

fn remediation_label(p: &Policy) -> String {
    match p.role {
        Some(role) => format!("{} ({} approval)", p.mode.as_str(), role.as_str()),
        None => p.mode.as_str().to_owned(),
    }
}

/// The SEVERITY cell of a signal: the decided severity, and its own when
/// an incident raised it (`critical (from medium)`).
fn severity_cell(s: &SiteSignal) -> String {
    if s.decided_severity == s.signal.severity {
        s.decided_severity.to_string()
    } else {
        format!("{} (from {})", s.decided_severity, s.signal.severity)
    }
}

/// The RAISED BY cell: the incidents, `-`, or `quarantined`.
fn raised_by_cell(s: &SiteSignal) -> String {
    if s.quarantined {
        "quarantined".to_owned()
    } else if s.raised_by.is_empty() {
        "-".to_owned()
    } else {
        s.raised_by.join(",")
    }
}

/// The IN COMMON cell: the strongest common factor's short form, and how
/// many more there are (`-` for none). The table escapes it.
fn in_common_cell(factors: &[CommonFactor]) -> String {
    match factors {
        [] => "-".to_owned(),
        [one] => crate::fleet::factors::short(one),
        [first, rest @ ..] => format!(
            "{} +{} more",
            crate::fleet::factors::short(first),
            rest.len()
        ),
    }
}

/// The STARTED BY cell.
fn started_by_cell(site: Option<&str>) -> String {
    site.unwrap_or("-").to_owned()
}

/// Sections — CROSS-CLUSTER CORRELATIONS, CASCADES, GROUPED OUTAGES,
/// QUARANTINED SITES, SIGNALS — each a table or a `none` line (grouped
/// outages and quarantined sites only when there are any). Severities are
/// coloured only when `color` is true.
pub fn render_incidents(report: &IncidentsReport, now: Timestamp, color: bool) -> String {
    let mut out = String::new();

    out.push_str("CROSS-CLUSTER CORRELATIONS\n");
    if report.correlations.is_empty() {
        out.push_str("none\n");
    } else {
        let mut t = PlainTable::new([
            "ID",
            "SIGNAL",
            "SEVERITY",
            "ORIGINAL",
            "SITES",
            "STARTED BY",
            "FIRST SEEN",
            "LAST SEEN",
            "REMEDIATION",
            "IN COMMON",
            "CLUSTERS",
        ]);
        for incident in &report.correlations {
            let c = &incident.correlation;
            let mut styles = vec![None; 11];
            styles[2] = severity_style(c.severity);
            styles[3] = severity_style(c.original_severity);
            t.push_styled(
                vec![
                    c.id.clone(),
                    c.signal.to_string(),
                    c.severity.to_string(),
                    c.original_severity.to_string(),
                    c.cluster_count().to_string(),
                    started_by_cell(c.started_by.as_deref()),
                    age(Some(c.first_seen.0.min(now)), now),
                    age(Some(c.last_seen.0.min(now)), now),
                    remediation_label(&incident.remediation),
                    in_common_cell(&c.common_factors),
                    named(&c.clusters, c.cluster_count()),
                ],
                styles,
            );
        }
        out.push_str(&t.render(color));
    }

    out.push_str("\nCASCADES\n");
    if report.cascades.is_empty() {
        out.push_str("none\n");
    } else {
        let mut t = PlainTable::new([
            "ID",
            "SIGNAL",
            "WORKLOAD",
            "SOURCE",
            "TARGET",
            "DELTA",
            "DETECTED",
            "REMEDIATION",
            "IN COMMON",
        ]);
        for incident in &report.cascades {
            let c = &incident.cascade;
            t.push(vec![
                c.id.clone(),
                c.signal.to_string(),
                c.workload.to_string(),
                format!("{} ({})", c.source, c.source_environment),
                format!("{} ({})", c.target, c.target_environment),
                human_duration(jiff::SignedDuration::from_secs(c.delta_seconds)),
                age(Some(c.target_first_seen.0.min(now)), now),
                remediation_label(&incident.remediation),
                in_common_cell(&c.common_factors),
            ]);
        }
        out.push_str(&t.render(color));
    }

    if !report.outages.is_empty() {
        out.push_str("\nGROUPED OUTAGES\n");
        let mut t = PlainTable::new([
            "ID",
            "GROUP",
            "SITES",
            "STARTED BY",
            "SINCE",
            "IN COMMON",
            "CLUSTERS",
        ]);
        for o in &report.outages {
            t.push(vec![
                o.id.clone(),
                format!("{}={}", o.group_by, o.value),
                o.cluster_count().to_string(),
                started_by_cell(o.started_by.as_deref()),
                age(Some(o.since.0.min(now)), now),
                in_common_cell(&o.common_factors),
                named(&o.clusters, o.cluster_count()),
            ]);
        }
        out.push_str(&t.render(color));
    }

    if !report.quarantined.is_empty() {
        out.push_str("\nQUARANTINED SITES (their signals are part of no incident)\n");
        let mut t = PlainTable::new(["SITE", "SINCE", "REASON"]);
        for q in &report.quarantined {
            t.push(vec![
                q.name.clone(),
                q.since
                    .as_ref()
                    .map_or_else(|| "-".to_owned(), |t| age(Some(t.0.min(now)), now)),
                q.reason.clone().unwrap_or_else(|| "-".to_owned()),
            ]);
        }
        out.push_str(&t.render(color));
    }

    out.push_str("\nSIGNALS\n");
    if report.signals.is_empty() {
        out.push_str("none\n");
    } else {
        let mut t = PlainTable::new([
            "SITE",
            "SEVERITY",
            "TYPE",
            "NAMESPACE",
            "WORKLOAD",
            "COUNT",
            "FIRST SEEN",
            "LAST SEEN",
            "REMEDIATION",
            "RAISED BY",
            "MESSAGE",
        ]);
        for s in &report.signals {
            let sig = &s.signal;
            let mut styles = vec![None; 11];
            styles[1] = severity_style(s.decided_severity);
            t.push_styled(
                vec![
                    sig.cluster.clone().unwrap_or_default(),
                    severity_cell(s),
                    sig.type_.to_string(),
                    if sig.namespace.is_empty() {
                        "-".to_owned()
                    } else {
                        sig.namespace.clone()
                    },
                    sig.workload.to_string(),
                    sig.count.to_string(),
                    age(Some(s.seen.first), now),
                    age(Some(s.seen.last), now),
                    remediation_label(&s.remediation),
                    raised_by_cell(s),
                    sig.message.clone().unwrap_or_else(|| "-".to_owned()),
                ],
                styles,
            );
        }
        out.push_str(&t.render(color));
    }
    out
}

/// One site of an incident, as `kubectl fleet incidents ID` lists it.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct IncidentSite {
    /// The site's name.
    pub name: String,
    /// Whether it is registered (an incident can outlive a site).
    pub registered: bool,
    /// The phase every view shows for it; null when not registered.
    pub phase: Option<crate::api::Phase>,
    /// Whether its maintenance window is open.
    pub in_maintenance: bool,
    /// Whether it is quarantined (its signals are then part of no
    /// incident: it can only be in a grouped outage).
    pub quarantined: bool,
    /// Its tier; null when not registered.
    pub tier: Option<Tier>,
    /// Its environment; null when not registered.
    pub environment: Option<crate::api::Environment>,
    /// Its region.
    pub region: Option<String>,
}

/// The `kubectl fleet incidents ID -o json|yaml` document (also the REST
/// API's `/api/v1/federation/incidents/{id}`): `{apiVersion, kind:
/// IncidentReport, generatedAt, id, type, startedBy, startedAt,
/// correlation|cascade|outage, commonFactors, sites, signals, hub}`; exactly one of
/// `correlation`, `cascade` and `outage` is set (as in FederationStatus, a
/// correlation or cascade with its `remediation`), `startedBy` the site
/// that started it and `startedAt` its earliest evidence (hub clock),
/// `commonFactors` what its sites have in common (`fleet::factors`:
/// `{attribute, key, value, affected, affectedTotal, unaffected,
/// unaffectedTotal}`), `sites` are the sites `kubectl fleet status
/// --incident ID` lists,
/// `signals` the member signals with the hub's decision (as in
/// `IncidentsReport`).
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct IncidentReport {
    /// Always the report API version.
    pub api_version: &'static str,
    /// Always `IncidentReport`.
    pub kind: &'static str,
    /// When the report was rendered (client clock).
    pub generated_at: Time,
    /// The incident's id.
    pub id: String,
    /// `Correlation`, `Cascade` or `GroupedOutage`.
    #[serde(rename = "type")]
    pub type_: &'static str,
    /// The site that started it (earliest evidence on the hub clock); null
    /// when the hub that wrote it did not record it.
    pub started_by: Option<String>,
    /// When it started, on the hub clock.
    pub started_at: Time,
    /// The correlation, when it is one.
    pub correlation: Option<CorrelationIncident>,
    /// The cascade, when it is one.
    pub cascade: Option<CascadeIncident>,
    /// The grouped outage, when it is one.
    pub outage: Option<crate::api::GroupedOutage>,
    /// What its sites have in common that the other sites mostly do not
    /// (`fleet::factors`), the strongest first: the hub's, as the incident
    /// records them.
    pub common_factors: Vec<CommonFactor>,
    /// Its sites, by name.
    pub sites: Vec<IncidentSite>,
    /// Its member signals, worst decided severity first.
    pub signals: Vec<SiteSignal>,
    /// Whether a hub is judging the fleet.
    pub hub: HubReport,
}

/// The report of `incident` over the registered `sites` (any superset of
/// its sites; others are ignored); `incidents` are the fleet's (a member
/// signal may be raised by another incident too).
pub fn incident_report(
    incident: &crate::fleet::incident::Incident<'_>,
    sites: &[FederatedCluster],
    incidents: &Incidents,
    hub: &HubVerdict,
    now: Timestamp,
) -> IncidentReport {
    use crate::fleet::incident::Incident;
    let names = incident.sites();
    let members: Vec<&FederatedCluster> = sites
        .iter()
        .filter(|s| names.contains(s.site_name()))
        .collect();
    let find = |name: &str| members.iter().copied().find(|s| s.site_name() == name);
    let site_rows = names
        .iter()
        .map(|name| match find(name) {
            Some(s) => IncidentSite {
                name: name.clone(),
                registered: true,
                phase: Some(crate::fleet::summary::shown_phase(s, hub.judging(), now).phase),
                in_maintenance: s.in_maintenance(now),
                quarantined: s.is_quarantined(),
                tier: Some(s.spec.tier),
                environment: Some(s.spec.environment),
                region: s.spec.region.clone(),
            },
            None => IncidentSite {
                name: name.clone(),
                registered: false,
                phase: None,
                in_maintenance: false,
                quarantined: false,
                tier: None,
                environment: None,
                region: None,
            },
        })
        .collect();
    let mut signals: Vec<SiteSignal> = members
        .iter()
        .flat_map(|site| {
            SiteSignal::of_site(site, incidents, now, move |sig| {
                incident.has_member_signal(site.site_name(), sig)
            })
        })
        .collect();
    sort_decided(&mut signals);
    let common_factors = match incident {
        Incident::Correlation(c) => c.common_factors.clone(),
        Incident::Cascade(c) => c.common_factors.clone(),
        Incident::Outage(o) => o.common_factors.clone(),
    };
    let (correlation, cascade, outage) = match incident {
        Incident::Correlation(c) => (Some((*c).clone().into()), None, None),
        Incident::Cascade(c) => (None, Some((*c).clone().into()), None),
        Incident::Outage(o) => (None, None, Some((*o).clone())),
    };
    IncidentReport {
        api_version: REPORT_API_VERSION,
        kind: "IncidentReport",
        generated_at: Time(now),
        id: incident.id(),
        type_: incident.kind(),
        started_by: incident.started_by().map(str::to_owned),
        started_at: Time(incident.started_at()),
        correlation,
        cascade,
        outage,
        common_factors,
        sites: site_rows,
        signals,
        hub: HubReport::from(hub),
    }
}

/// One incident, kubectl-describe style: what it is, who started it, its
/// sites (with the phase every view shows) and its member signals with
/// the hub's decision on each.
pub fn render_incident(r: &IncidentReport, now: Timestamp, color: bool) -> String {
    let mut out = String::new();
    let mut field = |k: &str, v: &str| out.push_str(&format!("{:<13}{v}\n", format!("{k}:")));
    field("ID", &r.id);
    field("Type", r.type_);
    field(
        "Started by",
        &format!(
            "{} (earliest evidence {} ago, hub clock)",
            r.started_by.as_deref().map_or_else(
                || "unknown".to_owned(),
                |s| { crate::render::safe::safe_cell(s).into_owned() }
            ),
            age(Some(r.started_at.0.min(now)), now)
        ),
    );
    if let Some(i) = &r.correlation {
        let c = &i.correlation;
        field("Signal", c.signal.as_str());
        let severity = if c.severity == c.original_severity {
            c.severity.to_string()
        } else {
            format!("{} (raised from {})", c.severity, c.original_severity)
        };
        field("Severity", &severity);
        field(
            "First seen",
            &format!("{} ago", age(Some(c.first_seen.0.min(now)), now)),
        );
        field(
            "Last seen",
            &format!("{} ago", age(Some(c.last_seen.0.min(now)), now)),
        );
        field("Remediation", &remediation_label(&i.remediation));
    }
    if let Some(i) = &r.cascade {
        let c = &i.cascade;
        field("Signal", c.signal.as_str());
        field(
            "Workload",
            &crate::render::safe::safe_cell(&c.workload.to_string()),
        );
        field(
            "Source",
            &format!(
                "{} ({}, first seen {} ago)",
                c.source,
                c.source_environment,
                age(Some(c.source_first_seen.0.min(now)), now)
            ),
        );
        field(
            "Target",
            &format!(
                "{} ({}, first seen {} ago)",
                c.target,
                c.target_environment,
                age(Some(c.target_first_seen.0.min(now)), now)
            ),
        );
        field(
            "Delta",
            &human_duration(jiff::SignedDuration::from_secs(c.delta_seconds)),
        );
        field("Remediation", &remediation_label(&i.remediation));
    }
    if let Some(o) = &r.outage {
        field(
            "Group",
            &format!(
                "{}={}",
                crate::render::safe::safe_cell(&o.group_by),
                crate::render::safe::safe_cell(&o.value)
            ),
        );
        field(
            "Since",
            &format!("{} ago", age(Some(o.since.0.min(now)), now)),
        );
    }
    if r.common_factors.is_empty() {
        out.push_str("In common:   nothing that sets its sites apart from the others\n");
    } else {
        out.push_str("In common:");
        out.push('\n');
        for f in &r.common_factors {
            out.push_str("  ");
            out.push_str(&crate::render::safe::terminal_safe(
                &crate::fleet::factors::describe(f),
            ));
            out.push('\n');
        }
    }
    out.push_str(&format!("Sites ({}):\n", r.sites.len()));
    let mut t = PlainTable::new(["NAME", "PHASE", "TIER", "ENVIRONMENT", "REGION"]);
    for s in &r.sites {
        let mut phase = match s.phase {
            None => "not registered".to_owned(),
            Some(p) => p.to_string(),
        };
        if s.in_maintenance {
            phase.push_str(crate::render::status::MAINTENANCE_MARK);
        }
        if s.quarantined {
            phase.push_str(QUARANTINE_MARK);
        }
        t.push(vec![
            s.name.clone(),
            phase,
            s.tier.map_or_else(|| "-".to_owned(), |t| t.to_string()),
            s.environment
                .map_or_else(|| "-".to_owned(), |e| e.to_string()),
            s.region.clone().unwrap_or_else(|| "-".to_owned()),
        ]);
    }
    for line in t.render(color).lines() {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
    if r.outage.is_none() {
        out.push_str("Signals:");
        if r.signals.is_empty() {
            out.push_str(" none active\n");
        } else {
            out.push('\n');
            let mut t = PlainTable::new([
                "SITE",
                "SEVERITY",
                "TYPE",
                "WORKLOAD",
                "COUNT",
                "LAST SEEN",
                "REMEDIATION",
                "RAISED BY",
                "MESSAGE",
            ]);
            for s in &r.signals {
                let sig = &s.signal;
                let mut styles = vec![None; 9];
                styles[1] = severity_style(s.decided_severity);
                t.push_styled(
                    vec![
                        sig.cluster.clone().unwrap_or_default(),
                        severity_cell(s),
                        sig.type_.to_string(),
                        sig.workload.to_string(),
                        sig.count.to_string(),
                        age(Some(s.seen.last), now),
                        remediation_label(&s.remediation),
                        raised_by_cell(s),
                        sig.message.clone().unwrap_or_else(|| "-".to_owned()),
                    ],
                    styles,
                );
            }
            for line in t.render(color).lines() {
                out.push_str("  ");
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// Appended to a quarantined site's phase where an incident lists it.
pub(crate) const QUARANTINE_MARK: &str = ",Quarantined";
