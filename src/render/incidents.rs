//! `kubectl fleet incidents`: cross-cluster correlations, cascades and the
//! active signals of every site with the remediation policy that applies.

use jiff::Timestamp;
use serde::Serialize;

use crate::api::{Cascade, Correlation, FederatedCluster, Signal, Tier};
use crate::fleet::age::{age, human_duration};
use crate::fleet::liveness::HubVerdict;
use crate::fleet::policy::{Policy, policy_for, policy_for_sites};
use crate::fleet::signals::sort_signals;
use crate::render::report::{HubReport, REPORT_API_VERSION};
use crate::render::table::{PlainTable, severity_style};

/// A site's signal with its site and the policy for it.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SiteSignal {
    /// The signal; `cluster` is always set.
    #[serde(flatten)]
    pub signal: Signal,
    /// Tier of the site.
    pub tier: Tier,
    /// The remediation policy for (tier, severity).
    pub remediation: Policy,
}

/// A correlation with the policy that applies to it (the strictest over
/// its member sites).
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CorrelationIncident {
    /// The correlation.
    #[serde(flatten)]
    pub correlation: Correlation,
    /// The remediation policy for it.
    pub remediation: Policy,
}

/// The `kubectl fleet incidents -o json|yaml` document:
/// `{apiVersion, kind: IncidentsReport, generatedAt, correlations, cascades, outages, signals, hub}`
/// with correlations, cascades and outages as in `FederationStatus` status (plus
/// `remediation` on correlations, and every cascade's `id`), signals as in `FederatedCluster`
/// status plus `cluster`, `tier` and `remediation {mode, approvalRequired, role}`,
/// and `hub` as `summary.hub` of `kubectl fleet status -o json` (the
/// correlations and cascades are the hub's: stale when it is not judging).
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct IncidentsReport {
    /// Always the report API version.
    pub api_version: &'static str,
    /// Always `IncidentsReport`.
    pub kind: &'static str,
    /// When the report was rendered (client clock).
    pub generated_at: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time,
    /// Active cross-cluster correlations.
    pub correlations: Vec<CorrelationIncident>,
    /// Cascades within the lookback.
    pub cascades: Vec<Cascade>,
    /// Grouped outages: sites of one region (or label value) that left
    /// Connected together.
    pub outages: Vec<crate::api::GroupedOutage>,
    /// Every site's signals, worst first.
    pub signals: Vec<SiteSignal>,
    /// Whether a hub is judging the fleet.
    pub hub: HubReport,
}

/// Gather the incidents view: every site's signals tagged with the site and
/// its policy, sorted worst first then by site.
pub fn incidents_report(
    sites: &[FederatedCluster],
    correlations: Vec<Correlation>,
    cascades: Vec<Cascade>,
    outages: Vec<crate::api::GroupedOutage>,
    hub: &HubVerdict,
    now: Timestamp,
) -> IncidentsReport {
    // A cascade written by a hub from before cascades had ids goes by the
    // id of its identity, as `kubectl fleet incidents ID` finds it.
    let cascades = cascades
        .into_iter()
        .map(|mut c| {
            c.id = crate::fleet::incident::cascade_id_of(&c);
            c
        })
        .collect();
    let mut all: Vec<Signal> = Vec::new();
    for site in sites {
        let Some(status) = site.status.as_ref() else {
            continue;
        };
        all.extend(status.signals().iter().cloned().map(|mut s| {
            s.cluster = Some(site.site_name().to_owned());
            s
        }));
    }
    sort_signals(&mut all);
    let tier_of = |name: &str| {
        sites
            .iter()
            .find(|s| s.site_name() == name)
            .map_or(Tier::default(), |s| s.spec.tier)
    };
    let signals = all
        .into_iter()
        .map(|signal| {
            let tier = tier_of(signal.cluster.as_deref().unwrap_or_default());
            SiteSignal {
                remediation: policy_for(Some(tier), signal.severity),
                tier,
                signal,
            }
        })
        .collect();
    let correlations = correlations
        .into_iter()
        .map(|correlation| CorrelationIncident {
            remediation: policy_for_sites(
                correlation.clusters.iter().map(|name| {
                    sites
                        .iter()
                        .find(|s| s.site_name() == name)
                        .map(|s| s.spec.tier)
                }),
                correlation.severity,
            ),
            correlation,
        })
        .collect();
    IncidentsReport {
        api_version: REPORT_API_VERSION,
        kind: "IncidentsReport",
        generated_at: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now),
        correlations,
        cascades,
        outages,
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

/// Four sections — CORRELATIONS, CASCADES, GROUPED OUTAGES, SIGNALS — each
/// a table or a `none` line (grouped outages only when there are any). Severities are coloured only when `color` is true.
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
            "FIRST SEEN",
            "LAST SEEN",
            "REMEDIATION",
            "CLUSTERS",
        ]);
        for incident in &report.correlations {
            let c = &incident.correlation;
            t.push_styled(
                vec![
                    c.id.clone(),
                    c.signal.to_string(),
                    c.severity.to_string(),
                    c.original_severity.to_string(),
                    c.cluster_count().to_string(),
                    age(Some(c.first_seen.0), now),
                    age(Some(c.last_seen.0), now),
                    remediation_label(&incident.remediation),
                    named(&c.clusters, c.cluster_count()),
                ],
                vec![
                    None,
                    None,
                    severity_style(c.severity),
                    severity_style(c.original_severity),
                    None,
                    None,
                    None,
                    None,
                    None,
                ],
            );
        }
        out.push_str(&t.render(color));
    }

    out.push_str("\nCASCADES\n");
    if report.cascades.is_empty() {
        out.push_str("none\n");
    } else {
        let mut t = PlainTable::new([
            "ID", "SIGNAL", "WORKLOAD", "SOURCE", "TARGET", "DELTA", "DETECTED",
        ]);
        for c in &report.cascades {
            t.push(vec![
                c.id.clone(),
                c.signal.to_string(),
                c.workload.to_string(),
                format!("{} ({})", c.source, c.source_environment),
                format!("{} ({})", c.target, c.target_environment),
                human_duration(jiff::SignedDuration::from_secs(c.delta_seconds)),
                age(Some(c.target_first_seen.0), now),
            ]);
        }
        out.push_str(&t.render(color));
    }

    if !report.outages.is_empty() {
        out.push_str("\nGROUPED OUTAGES\n");
        let mut t = PlainTable::new(["ID", "GROUP", "SITES", "SINCE", "CLUSTERS"]);
        for o in &report.outages {
            t.push(vec![
                o.id.clone(),
                format!("{}={}", o.group_by, o.value),
                o.cluster_count().to_string(),
                age(Some(o.since.0), now),
                named(&o.clusters, o.cluster_count()),
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
            "MESSAGE",
        ]);
        for s in &report.signals {
            let sig = &s.signal;
            let mut styles = vec![None; 10];
            styles[1] = severity_style(sig.severity);
            t.push_styled(
                vec![
                    sig.cluster.clone().unwrap_or_default(),
                    sig.severity.to_string(),
                    sig.type_.to_string(),
                    if sig.namespace.is_empty() {
                        "-".to_owned()
                    } else {
                        sig.namespace.clone()
                    },
                    sig.workload.to_string(),
                    sig.count.to_string(),
                    age(Some(sig.first_seen.0), now),
                    age(Some(sig.last_seen.0), now),
                    remediation_label(&s.remediation),
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
    /// Its tier; null when not registered.
    pub tier: Option<Tier>,
    /// Its environment; null when not registered.
    pub environment: Option<crate::api::Environment>,
    /// Its region.
    pub region: Option<String>,
}

/// The `kubectl fleet incidents ID -o json|yaml` document (also the REST
/// API's `/api/v1/federation/incidents/{id}`): `{apiVersion, kind:
/// IncidentReport, generatedAt, id, type, correlation|cascade|outage,
/// sites, signals, hub}`; exactly one of `correlation`, `cascade` and
/// `outage` is set (as in FederationStatus, a correlation with its
/// `remediation`), `sites` are the sites `kubectl fleet status --incident
/// ID` lists, `signals` the member signals (as in `IncidentsReport`).
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct IncidentReport {
    /// Always the report API version.
    pub api_version: &'static str,
    /// Always `IncidentReport`.
    pub kind: &'static str,
    /// When the report was rendered (client clock).
    pub generated_at: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time,
    /// The incident's id.
    pub id: String,
    /// `Correlation`, `Cascade` or `GroupedOutage`.
    #[serde(rename = "type")]
    pub type_: &'static str,
    /// The correlation, when it is one.
    pub correlation: Option<CorrelationIncident>,
    /// The cascade, when it is one.
    pub cascade: Option<Cascade>,
    /// The grouped outage, when it is one.
    pub outage: Option<crate::api::GroupedOutage>,
    /// Its sites, by name.
    pub sites: Vec<IncidentSite>,
    /// Its member signals, worst first.
    pub signals: Vec<SiteSignal>,
    /// Whether a hub is judging the fleet.
    pub hub: HubReport,
}

/// The report of `incident` over the registered `sites` (any superset of
/// its sites; others are ignored).
pub fn incident_report(
    incident: &crate::fleet::incident::Incident<'_>,
    sites: &[FederatedCluster],
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
                tier: Some(s.spec.tier),
                environment: Some(s.spec.environment),
                region: s.spec.region.clone(),
            },
            None => IncidentSite {
                name: name.clone(),
                registered: false,
                phase: None,
                in_maintenance: false,
                tier: None,
                environment: None,
                region: None,
            },
        })
        .collect();
    let mut all: Vec<Signal> = Vec::new();
    for site in &members {
        let Some(status) = site.status.as_ref() else {
            continue;
        };
        all.extend(
            status
                .signals()
                .iter()
                .filter(|sig| incident.has_member_signal(site.site_name(), sig))
                .cloned()
                .map(|mut sig| {
                    sig.cluster = Some(site.site_name().to_owned());
                    sig
                }),
        );
    }
    sort_signals(&mut all);
    let signals = all
        .into_iter()
        .map(|signal| {
            let tier = find(signal.cluster.as_deref().unwrap_or_default())
                .map_or(Tier::default(), |s| s.spec.tier);
            SiteSignal {
                remediation: policy_for(Some(tier), signal.severity),
                tier,
                signal,
            }
        })
        .collect();
    let (correlation, cascade, outage) = match incident {
        Incident::Correlation(c) => (
            Some(CorrelationIncident {
                remediation: policy_for_sites(
                    c.clusters
                        .iter()
                        .map(|name| find(name).map(|s| s.spec.tier)),
                    c.severity,
                ),
                correlation: (*c).clone(),
            }),
            None,
            None,
        ),
        Incident::Cascade(c) => {
            let mut c = (*c).clone();
            c.id = incident.id();
            (None, Some(c), None)
        }
        Incident::Outage(o) => (None, None, Some((*o).clone())),
    };
    IncidentReport {
        api_version: REPORT_API_VERSION,
        kind: "IncidentReport",
        generated_at: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now),
        id: incident.id(),
        type_: incident.kind(),
        correlation,
        cascade,
        outage,
        sites: site_rows,
        signals,
        hub: HubReport::from(hub),
    }
}

/// One incident, kubectl-describe style: what it is, its sites (with the
/// phase every view shows) and its member signals.
pub fn render_incident(r: &IncidentReport, now: Timestamp, color: bool) -> String {
    let mut out = String::new();
    let mut field = |k: &str, v: &str| out.push_str(&format!("{:<13}{v}\n", format!("{k}:")));
    field("ID", &r.id);
    field("Type", r.type_);
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
            &format!("{} ago", age(Some(c.first_seen.0), now)),
        );
        field(
            "Last seen",
            &format!("{} ago", age(Some(c.last_seen.0), now)),
        );
        field("Remediation", &remediation_label(&i.remediation));
    }
    if let Some(c) = &r.cascade {
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
                age(Some(c.source_first_seen.0), now)
            ),
        );
        field(
            "Target",
            &format!(
                "{} ({}, first seen {} ago)",
                c.target,
                c.target_environment,
                age(Some(c.target_first_seen.0), now)
            ),
        );
        field(
            "Delta",
            &human_duration(jiff::SignedDuration::from_secs(c.delta_seconds)),
        );
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
        field("Since", &format!("{} ago", age(Some(o.since.0), now)));
    }
    out.push_str(&format!("Sites ({}):\n", r.sites.len()));
    let mut t = PlainTable::new(["NAME", "PHASE", "TIER", "ENVIRONMENT", "REGION"]);
    for s in &r.sites {
        let phase = match (s.phase, s.in_maintenance) {
            (None, _) => "not registered".to_owned(),
            (Some(p), false) => p.to_string(),
            (Some(p), true) => format!("{p}{}", crate::render::status::MAINTENANCE_MARK),
        };
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
                "MESSAGE",
            ]);
            for s in &r.signals {
                let sig = &s.signal;
                let mut styles = vec![None; 8];
                styles[1] = severity_style(sig.severity);
                t.push_styled(
                    vec![
                        sig.cluster.clone().unwrap_or_default(),
                        sig.severity.to_string(),
                        sig.type_.to_string(),
                        sig.workload.to_string(),
                        sig.count.to_string(),
                        age(Some(sig.last_seen.0), now),
                        remediation_label(&s.remediation),
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
