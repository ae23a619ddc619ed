//! `kubectl fleet describe SITE`: one site in full, kubectl-describe style
//! (spec, phase, last contact and which clock stamped it, every condition
//! with reason and message, inventory, signals with the remediation policy
//! that applies, credential expiry, the Pull Secret), and its stable
//! `-o json|yaml` document.

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use crate::api::{Capability, FederatedCluster, Mode, SecretKeyRef};
use crate::fleet::age::{age, human_duration, until};
use crate::fleet::liveness::{HubState, HubVerdict};
use crate::fleet::policy::{Policy, policy_for};
use crate::render::report::{HubReport, REPORT_API_VERSION, SiteReport, site_report};
use crate::render::safe::terminal_safe;
use crate::render::status::{MISSING, phase_cell};
use crate::render::table::PlainTable;

/// Text a site or member cluster controls (messages, versions, names it
/// reports), made safe for a terminal; whole, as describe promises (the
/// CRD bounds its length).
fn untrusted(s: &str) -> String {
    terminal_safe(s).into_owned()
}

/// One signal with the policy that applies to it on this site.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SignalPolicy {
    /// Signal type.
    pub signal: String,
    /// Severity.
    pub severity: String,
    /// Namespace.
    pub namespace: String,
    /// Workload `Kind/name`.
    pub workload: String,
    /// The policy for this tier and severity.
    pub policy: Policy,
}

/// The `kubectl fleet describe -o json|yaml` document.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SiteDescription {
    /// Always [`REPORT_API_VERSION`].
    pub api_version: &'static str,
    /// Always `SiteDescription`.
    pub kind: &'static str,
    /// The site as `status -o json` shows it.
    #[serde(flatten)]
    pub site: SiteReport,
    /// Capabilities from the spec.
    pub capabilities: Vec<Capability>,
    /// Pull mode: the Secret holding the member kubeconfig.
    pub kubeconfig_secret_ref: Option<SecretKeyRef>,
    /// Which clock stamped `lastHeartbeatTime`: `hub` (Pull: the prober's
    /// successful probe) or `edge` (Push: the edge's report).
    pub heartbeat_clock: &'static str,
    /// Pull: how long the latest successful probe took.
    pub last_probe_duration_milliseconds: Option<i64>,
    /// Every signal with its remediation policy.
    pub policies: Vec<SignalPolicy>,
    /// Whether a hub is judging the fleet (as `summary.hub` of
    /// `kubectl fleet status -o json`).
    pub hub: HubReport,
}

/// The description of `site` at `now`, `hub` being the verdict on the
/// hub's liveness.
pub fn site_description(
    site: &FederatedCluster,
    hub: &HubVerdict,
    now: Timestamp,
) -> SiteDescription {
    let report = site_report(site, hub.judging(), now);
    let policies = report
        .signals
        .iter()
        .map(|s| SignalPolicy {
            signal: s.type_.to_string(),
            severity: s.severity.to_string(),
            namespace: s.namespace.clone(),
            workload: format!("{}/{}", s.workload.kind, s.workload.name),
            policy: policy_for(Some(site.spec.tier), s.severity),
        })
        .collect();
    SiteDescription {
        api_version: REPORT_API_VERSION,
        kind: "SiteDescription",
        site: report,
        capabilities: site.spec.capabilities.clone(),
        kubeconfig_secret_ref: site.spec.kubeconfig_secret_ref.clone(),
        heartbeat_clock: match site.spec.mode {
            Mode::Pull => "hub",
            Mode::Push => "edge",
        },
        last_probe_duration_milliseconds: site
            .status
            .as_ref()
            .and_then(|s| s.last_probe_duration_milliseconds),
        policies,
        hub: HubReport::from(hub),
    }
}

/// The `Hub:` line of the text: who judges the fleet, as the report says.
fn hub_text(h: &HubReport) -> String {
    let leader = h.leader.as_deref().map(untrusted).unwrap_or_default();
    let ago =
        |secs: Option<i64>| human_duration(SignedDuration::from_secs(secs.unwrap_or(0).max(0)));
    match h.state {
        s if s == HubState::Judging.as_str() => format!(
            "judging (leader {leader}, last full judgement {} ago)",
            ago(h.last_judgement_age_seconds)
        ),
        s if s == HubState::Silent.as_str() => format!(
            "SILENT: no hub has judged the fleet for {} (last full judgement by {leader}); phases are as last judged",
            ago(h.last_judgement_age_seconds)
        ),
        s if s == HubState::NeverJudged.as_str() => {
            "NONE: no hub has ever judged this fleet".to_owned()
        }
        _ => "unknown: its liveness record could not be read".to_owned(),
    }
}

fn policy_text(p: &Policy) -> String {
    match (p.approval_required, p.role) {
        (true, Some(role)) => format!("{}, approval by {}", p.mode.as_str(), role.as_str()),
        (true, None) => format!("{}, approval required", p.mode.as_str()),
        (false, _) => format!("{}, no approval", p.mode.as_str()),
    }
}

/// The kubectl-describe style text of `d` at `now`.
pub fn render_description(d: &SiteDescription, now: Timestamp) -> String {
    let s = &d.site;
    let mut out = String::new();
    let mut field = |k: &str, v: &str| out.push_str(&format!("{:<20}{v}\n", format!("{k}:")));
    field("Name", &s.name);
    field("Display Name", &untrusted(&s.display_name));
    field("Mode", s.mode.as_str());
    field("Tier", s.tier.as_str());
    field("Environment", s.environment.as_str());
    field(
        "Region",
        &s.region
            .as_deref()
            .map_or_else(|| MISSING.to_owned(), untrusted),
    );
    let caps: Vec<&str> = d.capabilities.iter().map(|c| c.as_str()).collect();
    field("Capabilities", &caps.join(", "));
    field(
        "Heartbeat Interval",
        &format!("{}s", s.heartbeat_interval_seconds),
    );
    if let Some(r) = &d.kubeconfig_secret_ref {
        field(
            "Pull Secret",
            &format!(
                "{}/{} (key {})",
                untrusted(&r.namespace),
                untrusted(&r.name),
                untrusted(&r.key)
            ),
        );
    }
    let since = s
        .phase_transition_time
        .as_ref()
        .map(|t| format!(" (for {})", age(Some(t.0.min(now)), now)))
        .unwrap_or_default();
    let judged = match (s.phase_judged_by_hub, s.hub_phase) {
        (true, _) => since,
        (false, Some(hub)) if hub != s.phase => format!(
            " (implied by the heartbeat's age: no hub has judged it since; the hub last wrote {hub}{since})"
        ),
        (false, _) => " (no hub has judged this site)".to_owned(),
    };
    field(
        "Phase",
        &format!("{}{judged}", phase_cell(s.phase, s.phase_judged_by_hub)),
    );
    field("Hub", &hub_text(&d.hub));
    let clock = match (d.heartbeat_clock, s.clock_offset_seconds) {
        ("hub", _) => "hub clock, last successful probe".to_owned(),
        (_, Some(offset)) if offset != 0 => format!(
            "edge clock, {} {} the hub clock; age and phase are on the hub clock",
            human_duration(SignedDuration::from_secs(offset.saturating_abs())),
            if offset < 0 { "behind" } else { "ahead of" }
        ),
        _ => "edge clock; phase is judged on the hub clock".to_owned(),
    };
    // The age is the report's: on the hub clock, never negative.
    let heard = match (&s.last_heartbeat_time, s.last_heartbeat_age_seconds) {
        (Some(t), Some(secs)) => format!(
            "{} ({} ago), {clock}",
            t.0,
            human_duration(SignedDuration::from_secs(secs))
        ),
        (Some(t), None) => format!("{}, {clock}", t.0),
        (None, _) => "never".to_owned(),
    };
    field("Last Heartbeat", &heard);
    let credential = match &s.credential_expiration_time {
        Some(t) => format!("{} (in {})", t.0, until(t.0, now)),
        None => MISSING.to_owned(),
    };
    field("Credential Expires", &credential);
    if let Some(ms) = d.last_probe_duration_milliseconds {
        field(
            "Last Probe",
            &format!("{ms}ms (the latest successful probe)"),
        );
    }

    out.push_str("Conditions:\n");
    if s.conditions.is_empty() {
        out.push_str("  <none>\n");
    } else {
        let mut t = PlainTable::new(["TYPE", "STATUS", "REASON", "AGE", "MESSAGE"]).whole_cells();
        for c in &s.conditions {
            t.push(vec![
                untrusted(&c.type_),
                untrusted(&c.status),
                untrusted(&c.reason),
                age(Some(c.last_transition_time.0.min(now)), now),
                untrusted(&c.message),
            ]);
        }
        indent(&mut out, &t.render(false));
    }

    out.push_str("Inventory:\n");
    let opt = |v: Option<String>| v.unwrap_or_else(|| MISSING.to_owned());
    let mut inv = |k: &str, v: String| out.push_str(&format!("  {:<18}{v}\n", format!("{k}:")));
    inv(
        "Kubernetes",
        opt(s.kubernetes_version.as_deref().map(untrusted)),
    );
    inv(
        "Operator",
        opt(s.observed_version.as_deref().map(untrusted)),
    );
    inv("Nodes", opt(s.node_count.map(|n| n.to_string())));
    inv("Namespaces", opt(s.namespace_count.map(|n| n.to_string())));
    inv(
        "GPUs",
        opt(s.gpus.as_ref().map(|g| {
            let vendors: Vec<String> = g
                .by_vendor
                .iter()
                .map(|(v, c)| format!("{}={}/{}", untrusted(v), c.allocatable, c.total))
                .collect();
            let mut text = format!("{}/{} allocatable", g.allocatable, g.total);
            if !vendors.is_empty() {
                text.push_str(&format!(" ({})", vendors.join(", ")));
            }
            text
        })),
    );
    inv(
        "Inference",
        opt(s.services.as_ref().map(|i| {
            format!(
                "{} models; services {} ready, {} failed, {} total",
                i.models, i.ready, i.failed, i.total
            )
        })),
    );

    out.push_str("Signals:\n");
    if s.signals.is_empty() {
        out.push_str("  <none>\n");
    } else {
        let mut t = PlainTable::new([
            "SIGNAL",
            "SEVERITY",
            "NAMESPACE",
            "WORKLOAD",
            "COUNT",
            "LAST SEEN",
            "POLICY",
            "MESSAGE",
        ])
        .whole_cells();
        for (sig, p) in s.signals.iter().zip(&d.policies) {
            t.push(vec![
                sig.type_.to_string(),
                sig.severity.to_string(),
                untrusted(&sig.namespace),
                untrusted(&p.workload),
                sig.count.to_string(),
                age(Some(sig.last_seen.0.min(now)), now),
                policy_text(&p.policy),
                untrusted(sig.message.as_deref().unwrap_or(MISSING)),
            ]);
        }
        indent(&mut out, &t.render(false));
    }
    out
}

fn indent(out: &mut String, table: &str) {
    for line in table.lines() {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
}
