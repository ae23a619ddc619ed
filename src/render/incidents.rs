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
/// `{apiVersion, kind: IncidentsReport, generatedAt, correlations, cascades, signals, hub}`
/// with correlations and cascades as in `FederationStatus` status (plus
/// `remediation` on correlations), signals as in `FederatedCluster`
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
    hub: &HubVerdict,
    now: Timestamp,
) -> IncidentsReport {
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
        signals,
        hub: HubReport::from(hub),
    }
}

fn remediation_label(p: &Policy) -> String {
    match p.role {
        Some(role) => format!("{} ({} approval)", p.mode.as_str(), role.as_str()),
        None => p.mode.as_str().to_owned(),
    }
}

/// Three sections — CORRELATIONS, CASCADES, SIGNALS — each a table or a
/// `none` line. Severities are coloured only when `color` is true.
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
                    c.clusters.len().to_string(),
                    age(Some(c.first_seen.0), now),
                    age(Some(c.last_seen.0), now),
                    remediation_label(&incident.remediation),
                    c.clusters.join(","),
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
            "SIGNAL", "WORKLOAD", "SOURCE", "TARGET", "DELTA", "DETECTED",
        ]);
        for c in &report.cascades {
            t.push(vec![
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
