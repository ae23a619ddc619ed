//! `kubectl fleet status`: the per-site view model, the table (`-o table`
//! and `-o wide`) with its fleet-wide footer.

use jiff::Timestamp;

use crate::api::{CONDITION_CONNECTED, FederatedCluster, Mode, Phase};
use crate::fleet::age::{age, until};
use crate::fleet::summary::{effective_phase, summarize};
use crate::render::table::{PlainTable, phase_style};

/// Shown where a value is not known (not reported yet, or not applicable).
pub const MISSING: &str = "-";

/// One site as `kubectl fleet status` shows it: every cell already text,
/// so the table, tests and `--watch` redraws agree exactly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiteRow {
    /// Site (object) name.
    pub name: String,
    /// Push or Pull.
    pub mode: String,
    /// Tier.
    pub tier: String,
    /// Environment.
    pub environment: String,
    /// Phase (Pending when the hub has not judged it yet).
    pub phase: Phase,
    /// Age of the last heartbeat on the hub clock, or `never`.
    pub last_heartbeat: String,
    /// Node count or `-`.
    pub nodes: String,
    /// `allocatable/total` GPUs or `-`.
    pub gpus: String,
    /// `ready/failed/total` inference services or `-`.
    pub services: String,
    /// Number of active signals or `-`.
    pub signals: String,
    /// Wide: region or `-`.
    pub region: String,
    /// Wide: operator version reported by the edge, or `-`.
    pub version: String,
    /// Wide: Kubernetes version of the member, or `-`.
    pub kubernetes_version: String,
    /// Wide: time until the edge's hub token expires (`expired`), or `-`.
    pub token_expires: String,
    /// Wide: `vendor=allocatable/total` per GPU resource, comma-separated, or `-`.
    pub gpus_by_vendor: String,
    /// Wide: why the site is not Connected (the `Connected` condition's
    /// reason when it is not True), or `-`.
    pub reason: String,
}

/// Fleet-wide totals for the footer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FleetTotals {
    /// Number of sites.
    pub sites: usize,
    /// Sites per phase, in the order Connected, Stale, Unreachable, Pending.
    pub by_phase: [(Phase, usize); 4],
    /// Allocatable GPUs.
    pub gpus_allocatable: i64,
    /// GPU capacity.
    pub gpus_total: i64,
    /// Ready inference services.
    pub services_ready: i64,
    /// Failed inference services.
    pub services_failed: i64,
    /// All inference services.
    pub services_total: i64,
    /// Active signals.
    pub signals: i64,
    /// Active signals per severity: critical, high, medium, low.
    pub signals_by_severity: [i64; 4],
}

/// The whole status view: rows sorted by name, and the totals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusView {
    /// One row per site, sorted by name.
    pub rows: Vec<SiteRow>,
    /// Fleet-wide totals over the same sites.
    pub totals: FleetTotals,
}

fn or_missing<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| MISSING.to_owned(), |v| v.to_string())
}

/// The row of one site at `now`.
pub fn site_row(site: &FederatedCluster, now: Timestamp) -> SiteRow {
    let status = site.status.as_ref();
    let capacity = status.and_then(|s| s.capacity.as_ref());
    let inference = status.and_then(|s| s.inference.as_ref());
    let heard = status.is_some_and(|s| s.last_heartbeat_time.is_some());
    SiteRow {
        name: site.site_name().to_owned(),
        mode: site.spec.mode.to_string(),
        tier: site.spec.tier.to_string(),
        environment: site.spec.environment.to_string(),
        phase: effective_phase(site),
        // On the hub clock: the edge's time minus the offset the hub
        // measured (`clockOffsetSeconds`), so a slow edge clock does not age
        // a live site and a fast one does not freshen a dead one. Never in
        // the future (an unmeasured fast clock shows `0s`, not `<invalid>`).
        last_heartbeat: age(
            status
                .and_then(|s| s.heartbeat_on_hub_clock())
                .map(|t| t.min(now)),
            now,
        ),
        nodes: or_missing(
            status.and_then(|s| s.node_count.or(s.capacity.as_ref().map(|c| c.nodes))),
        ),
        gpus: or_missing(capacity.map(|c| format!("{}/{}", c.gpus_allocatable, c.gpus_total))),
        services: or_missing(inference.map(|i| {
            format!(
                "{}/{}/{}",
                i.services_ready, i.services_failed, i.services_total
            )
        })),
        signals: match status.and_then(|s| s.signals.as_ref()) {
            Some(signals) => signals.len().to_string(),
            None if heard => "0".to_owned(),
            None => MISSING.to_owned(),
        },
        region: or_missing(site.spec.region.as_deref().filter(|r| !r.is_empty())),
        version: or_missing(status.and_then(|s| s.observed_version.as_deref())),
        kubernetes_version: or_missing(status.and_then(|s| s.kubernetes_version.as_deref())),
        token_expires: match (
            site.spec.mode,
            status.and_then(|s| s.credential_expiration_time.as_ref()),
        ) {
            (Mode::Push, Some(t)) => until(t.0, now),
            _ => MISSING.to_owned(),
        },
        gpus_by_vendor: match capacity {
            Some(c) if !c.gpus_by_vendor.is_empty() => c
                .gpus_by_vendor
                .iter()
                .map(|(vendor, g)| format!("{vendor}={}/{}", g.allocatable, g.total))
                .collect::<Vec<_>>()
                .join(","),
            _ => MISSING.to_owned(),
        },
        reason: match status.and_then(|s| s.condition(CONDITION_CONNECTED)) {
            Some(c) if c.status != "True" && !c.reason.is_empty() => {
                crate::render::safe::safe_text(&c.reason, 32).into_owned()
            }
            _ => MISSING.to_owned(),
        },
    }
}

/// The view of `sites` at `now`, sorted by name.
pub fn status_view(sites: &[FederatedCluster], now: Timestamp) -> StatusView {
    let mut sorted: Vec<&FederatedCluster> = sites.iter().collect();
    sorted.sort_by(|a, b| a.site_name().cmp(b.site_name()));
    let f = summarize(sites, Vec::new(), Vec::new(), now);
    let by = &f.issues_by_severity;
    let totals = FleetTotals {
        sites: sites.len(),
        by_phase: [
            (Phase::Connected, f.connected_clusters),
            (Phase::Stale, f.stale_clusters),
            (Phase::Unreachable, f.unreachable_clusters),
            (Phase::Pending, f.pending_clusters),
        ]
        .map(|(p, n)| (p, usize::try_from(n).unwrap_or(0))),
        gpus_allocatable: f.gpus_allocatable,
        gpus_total: f.gpus_total,
        services_ready: f.services_ready,
        services_failed: f.services_failed,
        services_total: f.services_total,
        signals: f.total_active_issues,
        signals_by_severity: [by.critical, by.high, by.medium, by.low],
    };
    StatusView {
        rows: sorted.iter().map(|s| site_row(s, now)).collect(),
        totals,
    }
}

const HEADERS: [&str; 10] = [
    "NAME",
    "MODE",
    "TIER",
    "ENV",
    "PHASE",
    "LAST HEARTBEAT",
    "NODES",
    "GPUS",
    "SERVICES",
    "SIGNALS",
];
const WIDE_HEADERS: [&str; 6] = [
    "REGION",
    "VERSION",
    "K8S",
    "TOKEN EXPIRES",
    "GPUS BY VENDOR",
    "REASON",
];
const PHASE_COLUMN: usize = 4;

/// The status table (`wide` adds REGION, VERSION, K8S, TOKEN EXPIRES,
/// GPUS BY VENDOR and REASON), then a blank line and the fleet footer. The PHASE
/// column is coloured only when `color` is true. An empty fleet renders
/// as the single line `No sites found`.
pub fn render_status_table(view: &StatusView, wide: bool, color: bool) -> String {
    if view.rows.is_empty() {
        return "No sites found\n".to_owned();
    }
    let headers: Vec<&str> = if wide {
        HEADERS.iter().chain(WIDE_HEADERS.iter()).copied().collect()
    } else {
        HEADERS.to_vec()
    };
    let mut table = PlainTable::new(headers.iter().copied());
    for r in &view.rows {
        let mut cells = vec![
            r.name.clone(),
            r.mode.clone(),
            r.tier.clone(),
            r.environment.clone(),
            r.phase.to_string(),
            r.last_heartbeat.clone(),
            r.nodes.clone(),
            r.gpus.clone(),
            r.services.clone(),
            r.signals.clone(),
        ];
        if wide {
            cells.extend([
                r.region.clone(),
                r.version.clone(),
                r.kubernetes_version.clone(),
                r.token_expires.clone(),
                r.gpus_by_vendor.clone(),
                r.reason.clone(),
            ]);
        }
        let mut styles = vec![None; cells.len()];
        styles[PHASE_COLUMN] = Some(phase_style(r.phase));
        table.push_styled(cells, styles);
    }
    let mut out = table.render(color);
    out.push('\n');
    out.push_str(&render_footer(&view.totals, color));
    out
}

/// The fleet-wide footer: sites per phase, GPUs, services, active signals.
pub fn render_footer(t: &FleetTotals, color: bool) -> String {
    use owo_colors::OwoColorize;
    let phases = t
        .by_phase
        .iter()
        .map(|(phase, n)| {
            let name = if color {
                phase.as_str().style(phase_style(*phase)).to_string()
            } else {
                phase.as_str().to_owned()
            };
            format!("{n} {name}")
        })
        .collect::<Vec<_>>()
        .join(", ");
    let severities = crate::api::Severity::ALL
        .iter()
        .zip(t.signals_by_severity)
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| format!("{n} {s}"))
        .collect::<Vec<_>>();
    let signals = if severities.is_empty() {
        format!("{} active", t.signals)
    } else {
        format!("{} active ({})", t.signals, severities.join(", "))
    };
    format!(
        "Sites: {} ({phases})\nGPUs: {}/{} allocatable  Services: {} ready, {} failed, {} total  Signals: {signals}\n",
        t.sites,
        t.gpus_allocatable,
        t.gpus_total,
        t.services_ready,
        t.services_failed,
        t.services_total,
    )
}
