//! `kubectl fleet describe SITE`: one site in full, kubectl-describe style
//! (spec, phase, maintenance window, quarantine, last contact and which
//! clock stamped it, every condition with reason and message, inventory,
//! signals with the hub's remediation decision on each and the incidents
//! that raised it, credential expiry, the Pull Secret, and
//! last the Events recorded about the site, as `kubectl describe` ends),
//! and its stable `-o json|yaml` document.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::Serialize;

use crate::api::{Capability, FederatedCluster, Mode, SecretKeyRef};
use crate::api::{Severity, Tier};
use crate::fleet::age::{age, human_duration, until};
use crate::fleet::liveness::{HubState, HubVerdict};
use crate::fleet::policy::{Incidents, Policy};
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

/// One signal with the hub's remediation decision on it.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SignalPolicy {
    /// Signal type.
    pub signal: String,
    /// Severity, as the site reports it.
    pub severity: String,
    /// Namespace.
    pub namespace: String,
    /// Workload `Kind/name`.
    pub workload: String,
    /// The decision: the policy of `decidedTier` at `decidedSeverity`.
    pub policy: Policy,
    /// The severity it is decided at: its own, or critical when an
    /// incident raised it.
    pub decided_severity: Severity,
    /// The tier whose policy applies: the site's, or a correlation's
    /// strictest when stricter; null: the unknown-tier fallback.
    pub decided_tier: Option<Tier>,
    /// The incidents that raised it (`xc-…`, `cc-…`); [] when none.
    pub raised_by: Vec<String>,
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
    /// The site's bucket (`fleet::bucket`: from its name, 0–255), which a
    /// hub replica owning it judges (docs/scaling.md#buckets).
    pub bucket: u8,
    /// Whether the site's bucket label holds it: `right`, `missing` or
    /// `wrong` (the hub writes the right one).
    pub bucket_label: &'static str,
    /// Pull mode: the Secret holding the member kubeconfig.
    pub kubeconfig_secret_ref: Option<SecretKeyRef>,
    /// Which clock stamped `lastHeartbeatTime`: `hub` (Pull: the prober's
    /// successful probe) or `edge` (Push: the edge's report).
    pub heartbeat_clock: &'static str,
    /// Pull: how long the latest successful probe took.
    pub last_probe_duration_milliseconds: Option<i64>,
    /// Every signal with the hub's remediation decision on it.
    pub policies: Vec<SignalPolicy>,
    /// Whether a hub is judging the fleet (as `summary.hub` of
    /// `kubectl fleet status -o json`).
    pub hub: HubReport,
    /// The Events recorded about the site, oldest first (the latest
    /// [`MAX_EVENTS`]); null when they could not be listed.
    pub events: Option<Vec<SiteEvent>>,
    /// Events recorded about the site beyond the [`MAX_EVENTS`] shown.
    pub events_not_shown: usize,
}

/// Events `describe` shows at most: the most recent.
pub(crate) const MAX_EVENTS: usize = 100;

/// Characters of an Event's message the text shows (the JSON has it whole).
const MAX_EVENT_MESSAGE_CHARS: usize = 1024;

/// One Event about a site, as `kubectl describe` shows it.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SiteEvent {
    /// `Normal` or `Warning`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Why, in one word (e.g. `PhaseChanged`).
    pub reason: String,
    /// Who recorded it (`source.component`, else `reportingComponent`).
    pub from: String,
    /// What happened.
    pub message: String,
    /// How many times it happened (a series or an aggregated Event).
    pub count: i32,
    /// When it first happened.
    #[serde(serialize_with = "crate::render::times::option")]
    pub first_time: Option<Time>,
    /// When it last happened.
    #[serde(serialize_with = "crate::render::times::option")]
    pub last_time: Option<Time>,
}

impl SiteEvent {
    /// An Event as the core/v1 API returns it (events.k8s.io/v1 Events
    /// included: `eventTime`, `series`, `reportingComponent`).
    pub(crate) fn from_event(e: &k8s_openapi::api::core::v1::Event) -> Self {
        let first = e
            .event_time
            .as_ref()
            .map(|t| Time(t.0))
            .or_else(|| e.first_timestamp.clone())
            .or_else(|| e.metadata.creation_timestamp.clone());
        let last = e
            .series
            .as_ref()
            .and_then(|s| s.last_observed_time.as_ref())
            .map(|t| Time(t.0))
            .or_else(|| e.last_timestamp.clone())
            .or_else(|| first.clone());
        let count = e
            .series
            .as_ref()
            .and_then(|s| s.count)
            .or(e.count)
            .unwrap_or(1)
            .max(1);
        let from = e
            .source
            .as_ref()
            .and_then(|s| s.component.clone())
            .filter(|c| !c.is_empty())
            .or_else(|| e.reporting_component.clone())
            .unwrap_or_default();
        SiteEvent {
            type_: e.type_.clone().unwrap_or_default(),
            reason: e.reason.clone().unwrap_or_default(),
            from,
            message: e.message.clone().unwrap_or_default().trim().to_owned(),
            count,
            first_time: first,
            last_time: last,
        }
    }
}

/// The latest [`MAX_EVENTS`] of `events`, oldest first, and how many
/// older ones were left out.
pub(crate) fn site_events(events: &[k8s_openapi::api::core::v1::Event]) -> (Vec<SiteEvent>, usize) {
    let mut all: Vec<SiteEvent> = events.iter().map(SiteEvent::from_event).collect();
    all.sort_by(|a, b| {
        let key = |e: &SiteEvent| {
            (
                e.last_time.as_ref().map(|t| t.0),
                e.first_time.as_ref().map(|t| t.0),
            )
        };
        key(a).cmp(&key(b))
    });
    let left_out = all.len().saturating_sub(MAX_EVENTS);
    (all.split_off(left_out), left_out)
}

/// The description of `site` at `now`, `hub` being the verdict on the
/// hub's liveness and `incidents` the fleet's (what its signals are
/// decided with).
/// `events` are the site's Events as listed (None: they could not be).
pub fn site_description(
    site: &FederatedCluster,
    hub: &HubVerdict,
    incidents: &Incidents,
    events: Option<&[k8s_openapi::api::core::v1::Event]>,
    now: Timestamp,
) -> SiteDescription {
    let (events, events_not_shown) = match events.map(site_events) {
        Some((shown, left_out)) => (Some(shown), left_out),
        None => (None, 0),
    };
    let report = site_report(site, hub.judging(), incidents, now);
    let policies = report
        .signals
        .iter()
        .map(|d| SignalPolicy {
            signal: d.signal.type_.to_string(),
            severity: d.signal.severity.to_string(),
            namespace: d.signal.namespace.clone(),
            workload: format!("{}/{}", d.signal.workload.kind, d.signal.workload.name),
            policy: d.decision.policy,
            decided_severity: d.decision.severity,
            decided_tier: d.decision.tier,
            raised_by: d.decision.raised_by.clone(),
        })
        .collect();
    SiteDescription {
        api_version: REPORT_API_VERSION,
        kind: "SiteDescription",
        site: report,
        capabilities: site.spec.capabilities.clone(),
        bucket: crate::fleet::bucket::bucket_of(site.site_name()),
        bucket_label: bucket_label(site),
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
        events,
        events_not_shown,
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

/// Whether the report's site had a heartbeat that could not be read.
fn unreadable_heartbeat(s: &SiteReport) -> bool {
    s.unreadable.as_ref().is_some_and(|u| {
        u.fields
            .iter()
            .any(|f| f.path == "status" || f.path == "status.lastHeartbeatTime")
    })
}

fn policy_text(p: &Policy) -> String {
    match (p.approval_required, p.role) {
        (true, Some(role)) => format!("{}, approval by {}", p.mode.as_str(), role.as_str()),
        (true, None) => format!("{}, approval required", p.mode.as_str()),
        (false, _) => format!("{}, no approval", p.mode.as_str()),
    }
}

/// What `site`'s bucket label holds: `right`, `missing` or `wrong`
/// ([`crate::fleet::bucket::BucketLabel`]).
fn bucket_label(site: &FederatedCluster) -> &'static str {
    use crate::fleet::bucket::BucketLabel;
    BucketLabel::of(site.site_name(), site.metadata.labels.as_ref())
        .reason()
        .unwrap_or("right")
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
    field(
        "Bucket",
        &match d.bucket_label {
            "missing" => format!("{} (no bucket label yet: the hub writes it)", d.bucket),
            "wrong" => format!(
                "{} (its bucket label holds another value: the hub writes this one)",
                d.bucket
            ),
            _ => d.bucket.to_string(),
        },
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
    // Only for a site that has one (`kubectl fleet schedule`).
    if let Some(c) = &s.connectivity {
        let state = match s.phase {
            _ if s.late_to_wake => " (late to wake: still silent past it; LateToWake)".to_owned(),
            crate::api::Phase::Sleeping if s.phase_judged_by_hub => {
                " (asleep: silent as it expects)".to_owned()
            }
            _ => String::new(),
        };
        field(
            "Schedule",
            &format!(
                "{}{state}",
                untrusted(&crate::fleet::connectivity::describe(c))
            ),
        );
    }
    field(
        "Maintenance",
        &s.maintenance.as_ref().map_or_else(
            || MISSING.to_owned(),
            |m| maintenance_text(m, s.in_maintenance, now),
        ),
    );
    field(
        "Quarantine",
        &s.quarantine.as_ref().map_or_else(
            || MISSING.to_owned(),
            |q| {
                let mut text = "yes: its signals are part of no fleet incident".to_owned();
                if let Some(since) = &q.since {
                    text.push_str(&format!(", since {}", crate::render::times::plain(since.0)));
                }
                if let Some(reason) = &q.reason {
                    text.push_str(&format!(": {}", untrusted(reason)));
                }
                text
            },
        ),
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
        (None, _) if unreadable_heartbeat(s) => {
            "unreadable (see Unreadable below); not counted as a heartbeat".to_owned()
        }
        (None, _) => "never".to_owned(),
    };
    field("Last Heartbeat", &heard);
    let rejected = s.conditions.iter().any(|c| {
        c.type_ == crate::api::CONDITION_CREDENTIAL_EXPIRING
            && c.status == "True"
            && c.reason == crate::fleet::hub_status::CREDENTIAL_REJECTED
    });
    let credential = match &s.credential_expiration_time {
        _ if rejected => {
            "rejected by the member (revoked, or its identity deleted): see CredentialExpiring"
                .to_owned()
        }
        Some(t) => format!("{} (in {})", t.0, until(t.0, now)),
        None => MISSING.to_owned(),
    };
    field("Credential Expires", &credential);
    let changed = s
        .conditions
        .iter()
        .any(|c| c.type_ == crate::api::CONDITION_MEMBER_CHANGED && c.status == "True");
    let member = match &s.member {
        Some(uid) if changed => format!(
            "{} (kube-system namespace UID; changed recently: see MemberChanged)",
            untrusted(uid)
        ),
        Some(uid) => format!("{} (kube-system namespace UID)", untrusted(uid)),
        None => MISSING.to_owned(),
    };
    field("Member", &member);
    if let Some(dark) = &s.last_dark_period {
        field("Last Dark Period", &dark_period_line(dark));
    }
    if let Some(ms) = d.last_probe_duration_milliseconds {
        field(
            "Last Probe",
            &format!("{ms}ms (the latest successful probe)"),
        );
    }

    if let Some(u) = &s.unreadable {
        out.push_str(&format!(
            "{:<20}not what the CRD describes; judged without it\n",
            "Unreadable:"
        ));
        for f in &u.fields {
            out.push_str(&format!(
                "  {}: {}\n",
                untrusted(&f.path),
                untrusted(&f.reason)
            ));
        }
        if u.not_shown > 0 {
            out.push_str(&format!("  ({} more not shown)\n", u.not_shown));
        }
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
    if let Some(info) = &s.node_info {
        for (label, values) in [
            ("Node OS", &info.os_image),
            ("Kernel", &info.kernel_version),
            ("Runtime", &info.container_runtime_version),
            ("GPU Models", &info.gpu_model),
        ] {
            inv(label, node_values_text(values));
        }
    }
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
            "RAISED BY",
            "MESSAGE",
        ])
        .whole_cells();
        for (d, p) in s.signals.iter().zip(&d.policies) {
            let sig = &d.signal;
            let severity = if p.decided_severity == sig.severity {
                sig.severity.to_string()
            } else {
                format!("{} (raised from {})", p.decided_severity, sig.severity)
            };
            let raised = if s.quarantine.is_some() {
                "- (quarantined)".to_owned()
            } else if p.raised_by.is_empty() {
                MISSING.to_owned()
            } else {
                p.raised_by.join(", ")
            };
            t.push(vec![
                sig.type_.to_string(),
                severity,
                untrusted(&sig.namespace),
                untrusted(&p.workload),
                sig.count.to_string(),
                age(Some(sig.last_seen.0.min(now)), now),
                policy_text(&p.policy),
                raised,
                untrusted(sig.message.as_deref().unwrap_or(MISSING)),
            ]);
        }
        indent(&mut out, &t.render(false));
    }
    if let Some(dark) = &s.last_dark_period {
        render_dark_period(&mut out, dark);
    }
    if let Some(events) = &d.events {
        render_events(&mut out, events, d.events_not_shown, now);
    }
    out
}

/// Entries of a dark period the `Last Dark Period:` line names; the
/// section below it lists them all.
const DARK_LINE_ENTRIES: usize = 4;

/// `t` as `HH:MM` (UTC), with its date when it is not `day`'s.
/// One attribute of `status.nodeInfo` for a terminal: `6.8.0-45-generic
/// (3 nodes), 5.15.0-105-generic (1 node), +2 more on 5 nodes`, the values
/// escaped; `-` when no node reported it.
fn node_values_text(values: &crate::api::NodeValues) -> String {
    let nodes = |n: i64| {
        if n == 1 {
            "1 node".to_owned()
        } else {
            format!("{n} nodes")
        }
    };
    let mut parts: Vec<String> = values
        .values
        .iter()
        .map(|v| format!("{} ({})", untrusted(&v.value), nodes(v.nodes)))
        .collect();
    if values.other_values > 0 || values.other_nodes > 0 {
        parts.push(format!(
            "+{} more on {}",
            values.other_values,
            nodes(values.other_nodes)
        ));
    }
    if parts.is_empty() {
        MISSING.to_owned()
    } else {
        parts.join(", ")
    }
}

fn clock_time(t: Timestamp, day: Timestamp) -> String {
    let date = |t: Timestamp| jiff::fmt::strtime::format("%Y-%m-%d", t).unwrap_or_default();
    let time = jiff::fmt::strtime::format("%H:%M", t).unwrap_or_default();
    if date(t) == date(day) {
        time
    } else {
        format!("{} {time}", date(t))
    }
}

/// The `Last Dark Period:` line: when the site was dark, on its own
/// clock, and the first things it saw, e.g. `dark 02:10–05:42 UTC on
/// 2026-12-06 (site's clock): node store-7-n1 NotReady 02:09
/// (NodeStatusUnknown), edge restarted 05:40, back 05:42`.
fn dark_period_line(dark: &crate::api::DarkPeriod) -> String {
    use crate::api::DarkEntryKind as K;
    let day = dark.from.0;
    let at = |t: Timestamp| clock_time(t, day);
    let date = jiff::fmt::strtime::format("%Y-%m-%d", day).unwrap_or_default();
    let mut said: Vec<String> = dark
        .entries
        .iter()
        .take(DARK_LINE_ENTRIES)
        .map(|e| {
            let subject = untrusted(&e.subject);
            let t = at(e.time.0);
            let first = |d: &str| untrusted(d.split(':').next().unwrap_or_default().trim());
            match e.kind {
                K::NodeNotReady if e.detail.is_empty() => format!("node {subject} NotReady {t}"),
                K::NodeNotReady => format!("node {subject} NotReady {t} ({})", first(&e.detail)),
                K::NodeReady => format!("node {subject} Ready {t}"),
                K::EdgeRestarted => format!("edge restarted {t}"),
                K::Failure => format!("{} {subject} {t}", first(&e.detail)),
                K::Recovered => format!("{subject} recovered {t}"),
                K::CredentialRejected => format!("credential rejected {t} ({})", first(&e.detail)),
                K::HubError => format!("hub error {t} ({})", first(&e.detail)),
            }
        })
        .collect();
    let more = dark.entries.len().saturating_sub(DARK_LINE_ENTRIES);
    if more > 0 {
        said.push(format!("{more} more"));
    }
    said.push(format!("back {}", at(dark.to.0)));
    format!(
        "dark {}–{} UTC on {date} (site's clock): {}",
        at(dark.from.0),
        at(dark.to.0),
        said.join(", ")
    )
}

/// The dark period's entries, as the site's edge recorded them.
fn render_dark_period(out: &mut String, dark: &crate::api::DarkPeriod) {
    out.push_str("Last Dark Period (the site's own account, on its clock):\n");
    if dark.entries.is_empty() {
        out.push_str("  <nothing recorded>\n");
    } else {
        let mut t = PlainTable::new(["TIME", "KIND", "SUBJECT", "DETAIL"]).whole_cells();
        for e in &dark.entries {
            t.push(vec![
                crate::render::times::plain(e.time.0),
                e.kind.to_string(),
                untrusted(&e.subject),
                untrusted(&e.detail),
            ]);
        }
        indent(out, &t.render(false));
    }
    if dark.dropped > 0 {
        out.push_str(&format!("  ({} older entries dropped)\n", dark.dropped));
    }
}

/// The `Maintenance:` line: open, ended or not yet begun, with the reason.
fn maintenance_text(
    m: &crate::render::report::MaintenanceReport,
    open: bool,
    now: Timestamp,
) -> String {
    let until = m.until.as_ref().map(|t| t.0);
    let when = |t: Option<Timestamp>| t.map(crate::render::times::plain).unwrap_or_default();
    let mut text = match (open, until) {
        (true, Some(u)) => format!(
            "until {} (ends in {}; no per-site alerts, not counted as an outage)",
            when(Some(u)),
            until_text(u, now)
        ),
        (false, Some(u)) if u <= now => {
            format!("ended {} ago ({})", age(Some(u), now), when(Some(u)))
        }
        (false, _) => format!(
            "from {} until {} (not begun)",
            when(m.since.as_ref().map(|t| t.0)),
            when(until)
        ),
        (true, None) => "open".to_owned(),
    };
    if open && let Some(since) = &m.since {
        text.push_str(&format!(", since {}", when(Some(since.0))));
    }
    if let Some(reason) = &m.reason {
        text.push_str(&format!(": {}", untrusted(reason)));
    }
    text
}

fn until_text(t: Timestamp, now: Timestamp) -> String {
    until(t, now)
}

/// The `Events:` section, as `kubectl describe` writes it (Type, Reason,
/// Age — `AGE (xN over FIRST)` for a repeated Event — From, Message), or
/// `<none>`.
fn render_events(out: &mut String, events: &[SiteEvent], left_out: usize, now: Timestamp) {
    if events.is_empty() {
        out.push_str("Events:             <none>\n");
        return;
    }
    out.push_str("Events:\n");
    let mut t = PlainTable::new(["Type", "Reason", "Age", "From", "Message"]).whole_cells();
    t.push(
        ["----", "------", "----", "----", "-------"]
            .map(str::to_owned)
            .to_vec(),
    );
    for e in events {
        let first = age(e.first_time.as_ref().map(|t| t.0.min(now)), now);
        let when = if e.count > 1 {
            format!(
                "{} (x{} over {first})",
                age(e.last_time.as_ref().map(|t| t.0.min(now)), now),
                e.count
            )
        } else {
            first
        };
        t.push(vec![
            untrusted(&e.type_),
            untrusted(&e.reason),
            when,
            untrusted(&e.from),
            crate::render::safe::safe_text(&e.message, MAX_EVENT_MESSAGE_CHARS).into_owned(),
        ]);
    }
    indent(out, &t.render(false));
    if left_out > 0 {
        out.push_str(&format!("  ({left_out} older events not shown)\n"));
    }
}

fn indent(out: &mut String, table: &str) {
    for line in table.lines() {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
}
