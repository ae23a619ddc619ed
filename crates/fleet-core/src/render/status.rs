//! `kubectl fleet status`: the table (`-o table` and `-o wide`), one row of
//! [`COLUMNS`] per column, with its fleet-wide footer, and the one-line
//! warning when no hub is judging the fleet ([`hub_warning`]).
//!
//! The PHASE column shows `fleet::summary::shown_phase`: a phase no hub
//! judged — implied by the heartbeat's age, or `Pending` for a site no hub
//! ever judged — is marked with a trailing [`NOT_JUDGED_MARK`], explained
//! in a footer line (docs/operations.md#is-a-hub-judging). A site whose
//! maintenance window is open shows `PHASE,Maintenance` (as kubectl shows
//! a cordoned node `Ready,SchedulingDisabled`; docs/views.md#maintenance-windows), and
//! the footer counts such sites and which edge versions run where.

use jiff::Timestamp;

use crate::api::{
    CONDITION_CONNECTED, CONDITION_CREDENTIAL_EXPIRING, CONDITION_MEMBER_CHANGED, FederatedCluster,
    FederatedClusterStatus, Phase,
};
use crate::fleet::age::{age, human_duration, until};
use crate::fleet::hub_status::INVALID_STATUS;
use crate::fleet::liveness::{HubState, HubVerdict};
use crate::fleet::summary::{ShownPhase, shown_phase};
use crate::render::totals::ViewTotals;
use owo_colors::Style;

use crate::render::table::{GAP as TABLE_GAP, PlainTable, phase_style};

/// Shown where a value is not known (not reported yet, or not applicable).
pub(crate) const MISSING: &str = "-";

/// Appended to a phase no hub judged.
pub(crate) const NOT_JUDGED_MARK: &str = "?";

/// The wide REASON of a site whose phase no hub judged.
pub(crate) const NOT_JUDGED_REASON: &str = "NotJudgedByHub";

/// The LAST HEARTBEAT of a site whose heartbeat could not be read (as
/// kubectl shows a time it cannot place).
pub(crate) const INVALID: &str = "<invalid>";

/// Appended to the PHASE of a site whose maintenance window is open.
pub(crate) const MAINTENANCE_MARK: &str = ",Maintenance";
/// After the phase of a site the hub judged late to wake (silent past its
/// `spec.connectivity` schedule): `Unreachable,LateToWake`.
pub(crate) const LATE_TO_WAKE_MARK: &str = ",LateToWake";

/// What `kubectl fleet status -o name` prints for a site, as `kubectl get
/// federatedclusters -o name` does (the CRD's plural and group).
pub fn resource_name(site: &str) -> String {
    format!("federatedcluster.{}/{site}", crate::api::GROUP)
}

/// Edge versions the footer names; the rest are summed up after them.
pub(crate) const FOOTER_VERSIONS: usize = 5;

/// A phase as the PHASE column shows it.
pub(crate) fn phase_cell(phase: Phase, judged_by_hub: bool) -> String {
    if judged_by_hub {
        phase.to_string()
    } else {
        format!("{phase}{NOT_JUDGED_MARK}")
    }
}

/// The one line (without a newline) a view prints on stderr when no hub
/// is judging the fleet, or None when one is, or when the fleet is empty
/// (nothing to judge). `cause` says why an unknown verdict is unknown.
/// The leader's name is the hub's own text, still made terminal-safe.
pub fn hub_warning(hub: &HubVerdict, sites: usize, cause: Option<&str>) -> Option<String> {
    if sites == 0 {
        return None;
    }
    const CHECK: &str =
        "check the hub operator: kubectl -n fleet-system get deployment fleet-operator-hub";
    match hub.state {
        HubState::Judging => None,
        HubState::Silent => {
            let record = hub.record.as_ref()?;
            let since = hub
                .since_judgement
                .map(|d| {
                    human_duration(
                        jiff::SignedDuration::try_from(d).unwrap_or(jiff::SignedDuration::MAX),
                    )
                })
                .unwrap_or_default();
            Some(format!(
                "warning: no hub has judged this fleet for {since} (last full judgement by {} at {}; one is recorded every {}s): phases are as last judged, and a phase marked {NOT_JUDGED_MARK} is implied by the heartbeat's age; {CHECK}",
                crate::render::safe::safe_text(&record.leader, 64),
                crate::render::times::plain(record.last_judgement_time.0),
                record.interval_seconds,
            ))
        }
        HubState::NeverJudged => Some(format!(
            "warning: no hub has ever judged this fleet, so no phase is being set (a phase marked {NOT_JUDGED_MARK} is implied by the heartbeat's age); is the hub operator installed and running? `kubectl fleet install --apply` deploys it; {CHECK}"
        )),
        HubState::Unknown => Some(format!(
            "warning: cannot tell whether a hub is judging this fleet: {}",
            crate::render::safe::safe_text(
                cause.unwrap_or("its liveness record could not be read"),
                256
            )
        )),
    }
}

/// What every cell of one site's row reads.
struct RowFacts<'a> {
    site: &'a FederatedCluster,
    status: Option<&'a FederatedClusterStatus>,
    /// The phase shown ([`shown_phase`]) and whether a hub judged it.
    shown: ShownPhase,
    in_maintenance: bool,
    now: Timestamp,
}

impl<'a> RowFacts<'a> {
    /// `site` at `now`, `hub_judging` being whether a hub is judging the
    /// fleet (None: unknown).
    fn of(site: &'a FederatedCluster, hub_judging: Option<bool>, now: Timestamp) -> Self {
        Self {
            site,
            status: site.status.as_ref(),
            shown: shown_phase(site, hub_judging, now),
            in_maintenance: site.in_maintenance(now),
            now,
        }
    }
}

/// One column of `kubectl fleet status`: its header, the field of a site
/// in `-o json` that carries what it shows, whether only `-o wide` shows
/// it, and its cell (text; escaped and cut on the way into the table).
/// Adding a column is one row of [`COLUMNS`].
struct Column {
    header: &'static str,
    /// The key of a site in `status -o json`/`-o yaml` (`.sites[*]`,
    /// [`super::report::SiteReport`]) holding the column's value: `status
    /// --help` names it, for `-o jsonpath` and scripts.
    json: &'static str,
    /// Shown by `-o wide` only. Wide columns come after the others.
    wide_only: bool,
    /// The cell is coloured by the phase shown.
    phase_colored: bool,
    cell: fn(&RowFacts<'_>) -> String,
}

const fn column(
    header: &'static str,
    json: &'static str,
    cell: fn(&RowFacts<'_>) -> String,
) -> Column {
    Column {
        header,
        json,
        wide_only: false,
        phase_colored: false,
        cell,
    }
}

const fn wide(
    header: &'static str,
    json: &'static str,
    cell: fn(&RowFacts<'_>) -> String,
) -> Column {
    Column {
        wide_only: true,
        ..column(header, json, cell)
    }
}

fn or_missing<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| MISSING.to_owned(), |v| v.to_string())
}

/// Every column, in order; REASON last as the longest.
const COLUMNS: [Column; 18] = [
    column("NAME", "name", |r| r.site.site_name().to_owned()),
    column("MODE", "mode", |r| r.site.spec.mode.to_string()),
    column("TIER", "tier", |r| r.site.spec.tier.to_string()),
    column("ENV", "environment", |r| {
        r.site.spec.environment.to_string()
    }),
    Column {
        phase_colored: true,
        ..column("PHASE", "phase", |r| {
            let mut phase = phase_cell(r.shown.phase, r.shown.judged_by_hub);
            if r.shown.judged_by_hub && crate::fleet::hub_status::is_late_to_wake(r.site) {
                phase.push_str(LATE_TO_WAKE_MARK);
            }
            if r.in_maintenance {
                phase.push_str(MAINTENANCE_MARK);
            }
            phase
        })
    },
    // On the hub clock: the edge's time minus the offset the hub measured
    // (`clockOffsetSeconds`), so a slow edge clock does not age a live
    // site and a fast one does not freshen a dead one. Never in the future
    // (an unmeasured fast clock shows `0s`, not `<invalid>`).
    // `<invalid>` when the heartbeat could not be read (`kubectl fleet
    // describe` says why), rather than `never`: the site did write one.
    column("LAST HEARTBEAT", "lastHeartbeatAgeSeconds", |r| {
        if r.status
            .and_then(|s| s.unreadable())
            .is_some_and(|u| u.heartbeat())
        {
            return INVALID.to_owned();
        }
        age(
            r.status
                .and_then(|s| s.heartbeat_on_hub_clock())
                .map(|t| t.min(r.now)),
            r.now,
        )
    }),
    column("NODES", "nodeCount", |r| {
        or_missing(
            r.status
                .and_then(|s| s.node_count.or(s.capacity.as_ref().map(|c| c.nodes))),
        )
    }),
    column("GPUS", "gpus", |r| {
        or_missing(
            r.status
                .and_then(|s| s.capacity.as_ref())
                .map(|c| format!("{}/{}", c.gpus_allocatable, c.gpus_total)),
        )
    }),
    column("SERVICES", "services", |r| {
        or_missing(r.status.and_then(|s| s.inference.as_ref()).map(|i| {
            format!(
                "{}/{}/{}",
                i.services_ready, i.services_failed, i.services_total
            )
        }))
    }),
    column("SIGNALS", "signals", |r| match r.status {
        Some(s) => match &s.signals {
            Some(signals) => signals.len().to_string(),
            None if s.last_heartbeat_time.is_some() => "0".to_owned(),
            None => MISSING.to_owned(),
        },
        None => MISSING.to_owned(),
    }),
    wide("REGION", "region", |r| {
        or_missing(r.site.spec.region.as_deref().filter(|r| !r.is_empty()))
    }),
    wide("VERSION", "observedVersion", |r| {
        or_missing(r.status.and_then(|s| s.observed_version.as_deref()))
    }),
    wide("K8S", "kubernetesVersion", |r| {
        or_missing(r.status.and_then(|s| s.kubernetes_version.as_deref()))
    }),
    // Push: the edge's hub token; Pull: the hub's member token, or
    // `rejected` when the member refuses it (revoked), whatever its expiry.
    wide("TOKEN EXPIRES", "credentialExpirationTime", |r| {
        if credential_rejected(r.status) {
            return TOKEN_REJECTED.to_owned();
        }
        match r.status.and_then(|s| s.credential_expiration_time.as_ref()) {
            Some(t) => until(t.0, r.now),
            None => MISSING.to_owned(),
        }
    }),
    wide("GPUS BY VENDOR", "gpus.byVendor", |r| {
        match r.status.and_then(|s| s.capacity.as_ref()) {
            Some(c) if !c.gpus_by_vendor.is_empty() => c
                .gpus_by_vendor
                .iter()
                .map(|(vendor, g)| format!("{vendor}={}/{}", g.allocatable, g.total))
                .collect::<Vec<_>>()
                .join(","),
            _ => MISSING.to_owned(),
        }
    }),
    // Time left in the open maintenance window (`2h left`).
    wide("MAINTENANCE", "maintenance", |r| {
        match &r.site.spec.maintenance {
            Some(w) if r.in_maintenance => format!("{} left", until(w.until.0, r.now)),
            _ => MISSING.to_owned(),
        }
    }),
    // When the site expects to be silent (`spec.connectivity`, `kubectl
    // fleet schedule`): `22:00-06:00 Europe/Berlin`, `≤7d`
    // (`fleet::connectivity::compact`).
    wide("SCHEDULE", "connectivity", |r| {
        or_missing(
            r.site
                .spec
                .connectivity
                .as_ref()
                .and_then(crate::fleet::connectivity::compact),
        )
    }),
    // Why the site is not Connected: the `Connected` condition's reason
    // when it is not True, [`NOT_JUDGED_REASON`] when no hub judged the
    // phase shown, `InvalidStatus` when part of the site's object could
    // not be read (by this reader, or by the hub).
    // `MemberChanged` is added while the site's member identity changed
    // recently (two edges for one site, or an edge moved).
    wide("REASON", "conditions", |r| {
        let connected = match r.status.and_then(|s| s.condition(CONDITION_CONNECTED)) {
            _ if !r.shown.judged_by_hub => Some(NOT_JUDGED_REASON.to_owned()),
            _ if r.status.and_then(|s| s.unreadable()).is_some() => Some(INVALID_STATUS.to_owned()),
            Some(c) if c.reason == INVALID_STATUS => Some(INVALID_STATUS.to_owned()),
            Some(c) if c.status != "True" && !c.reason.is_empty() => {
                Some(crate::render::safe::safe_text(&c.reason, 32).into_owned())
            }
            _ => None,
        };
        let member = member_changed(r.status).then(|| CONDITION_MEMBER_CHANGED.to_owned());
        let reasons: Vec<String> = connected.into_iter().chain(member).collect();
        if reasons.is_empty() {
            MISSING.to_owned()
        } else {
            reasons.join(",")
        }
    }),
];

/// What TOKEN EXPIRES shows for a credential the member rejects.
pub(crate) const TOKEN_REJECTED: &str = "rejected";

/// Whether the hub judged the site's credential rejected by its member
/// (`CredentialExpiring` True/`Rejected`: a revoked Pull site).
pub(crate) fn credential_rejected(status: Option<&FederatedClusterStatus>) -> bool {
    status
        .and_then(|s| s.condition(CONDITION_CREDENTIAL_EXPIRING))
        .is_some_and(|c| {
            c.status == "True" && c.reason == crate::fleet::hub_status::CREDENTIAL_REJECTED
        })
}

/// Whether the hub flags the site's member identity as changed
/// (`MemberChanged` True).
pub(crate) fn member_changed(status: Option<&FederatedClusterStatus>) -> bool {
    status
        .and_then(|s| s.condition(CONDITION_MEMBER_CHANGED))
        .is_some_and(|c| c.status == "True")
}

/// What `kubectl fleet status --help` says of the columns: each header
/// and the key of a site in `-o json` that carries it, `-o wide`'s last.
pub fn column_reference() -> String {
    let mut out =
        String::from("Columns (KEY: the field of each site in -o json/yaml, .sites[*].KEY):\n");
    for c in &COLUMNS {
        let wide = if c.wide_only { "  (-o wide)" } else { "" };
        out.push_str(&format!("  {:<16}{}{wide}\n", c.header, c.json));
    }
    out
}

/// The columns a table shows (`wide`: all of them).
fn columns(wide: bool) -> impl Iterator<Item = &'static Column> {
    COLUMNS.iter().filter(move |c| wide || !c.wide_only)
}

/// One site's cells by header, as the table shows them before escaping
/// (`wide`: every column).
#[cfg(test)]
pub(super) fn site_cells(
    site: &FederatedCluster,
    hub_judging: Option<bool>,
    now: Timestamp,
    wide: bool,
) -> Vec<(&'static str, String)> {
    let facts = RowFacts::of(site, hub_judging, now);
    columns(wide)
        .map(|c| (c.header, (c.cell)(&facts)))
        .collect()
}

/// Each column's header and JSON key (every column).
#[cfg(test)]
pub(super) fn column_keys() -> Vec<(&'static str, &'static str)> {
    COLUMNS.iter().map(|c| (c.header, c.json)).collect()
}

/// Fleet-wide totals for the footer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FleetTotals {
    /// Number of sites.
    pub sites: usize,
    /// Sites per phase, in the order Connected, Stale, Unreachable, Pending.
    pub by_phase: [(Phase, usize); 5],
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
    /// Sites whose phase no hub judged (marked in the PHASE column).
    pub not_judged: usize,
    /// Sites whose maintenance window is open.
    pub maintenance: usize,
    /// Sites per edge version, most common first (ties by name).
    pub edge_versions: Vec<(String, i64)>,
    /// Sites whose version was not tracked (too many distinct versions).
    pub untracked_versions: i64,
}

impl From<&ViewTotals> for FleetTotals {
    fn from(v: &ViewTotals) -> Self {
        let t = &v.fleet;
        let by = &t.by_severity;
        FleetTotals {
            sites: usize::try_from(t.sites).unwrap_or(0),
            by_phase: [
                (Phase::Connected, t.connected),
                (Phase::Stale, t.stale),
                (Phase::Unreachable, t.unreachable),
                (Phase::Pending, t.pending),
                (Phase::Sleeping, t.sleeping),
            ]
            .map(|(p, n)| (p, usize::try_from(n).unwrap_or(0))),
            gpus_allocatable: t.gpus_allocatable,
            gpus_total: t.gpus_total,
            services_ready: t.services_ready,
            services_failed: t.services_failed,
            services_total: t.services_total,
            signals: t.active_signals(),
            signals_by_severity: [by.critical, by.high, by.medium, by.low],
            not_judged: usize::try_from(t.not_judged).unwrap_or(0),
            maintenance: usize::try_from(v.maintenance).unwrap_or(0),
            edge_versions: v
                .versions
                .by_count()
                .into_iter()
                .map(|(version, n)| (version.to_owned(), n))
                .collect(),
            untracked_versions: v.versions.untracked(),
        }
    }
}

/// The status table built site by site for large fleets: each row is kept
/// only as its cell text in one shared buffer (no per-site objects), with
/// the running column widths and fleet totals. [`StatusTable::lines`]
/// yields the table sorted by name whatever order the sites came in, laid
/// out exactly as [`PlainTable`] lays it out.
#[derive(Debug)]
pub struct StatusTable {
    now: Timestamp,
    hub_judging: Option<bool>,
    wide: bool,
    columns: usize,
    /// The column coloured by phase.
    phase_column: Option<usize>,
    /// Every cell's text, back to back.
    text: String,
    /// End offset in `text` of each cell, `columns` per row.
    ends: Vec<usize>,
    phases: Vec<Phase>,
    widths: Vec<usize>,
    /// Whether every cell is one plain line (no newline, tab or escape),
    /// which the direct layout handles; otherwise the shared table does it.
    simple: bool,
    totals: ViewTotals,
}

impl StatusTable {
    /// An empty table of the sites seen at `now`, `hub_judging` being
    /// whether a hub is judging the fleet (None: unknown).
    pub fn new(now: Timestamp, hub_judging: Option<bool>, wide: bool) -> Self {
        let headers = Self::headers(wide);
        Self {
            now,
            hub_judging,
            wide,
            columns: headers.len(),
            phase_column: columns(wide).position(|c| c.phase_colored),
            text: String::new(),
            ends: Vec::new(),
            phases: Vec::new(),
            widths: headers.iter().map(|h| cell_width(h)).collect(),
            simple: true,
            totals: ViewTotals::default(),
        }
    }

    fn headers(wide: bool) -> Vec<&'static str> {
        columns(wide).map(|c| c.header).collect()
    }

    /// Whether no site was pushed (the table is then `No sites found`,
    /// which the command prints on stderr, as kubectl does).
    pub fn is_empty(&self) -> bool {
        self.phases.is_empty()
    }

    /// Adds one site.
    pub fn push(&mut self, site: &FederatedCluster) {
        let facts = RowFacts::of(site, self.hub_judging, self.now);
        self.totals.add(site, &facts.shown, self.now);
        self.phases.push(facts.shown.phase);
        for (i, column) in columns(self.wide).enumerate() {
            let cell = (column.cell)(&facts);
            // Escaped and cut exactly as PlainTable does it on the way in,
            // so the fast layout below never prints site text raw.
            let cell = crate::render::safe::safe_cell(&cell);
            let cell = cell.as_ref();
            self.simple &= !cell.contains(['\n', '\r', '\t', '\x1b']);
            self.widths[i] = self.widths[i].max(cell_width(cell));
            self.text.push_str(cell);
            self.ends.push(self.text.len());
        }
    }

    fn cell(&self, row: usize, column: usize) -> &str {
        let i = row * self.columns + column;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }

    /// The rendered table, one line (with its `\n`) at a time.
    pub fn lines(&self, color: bool) -> Box<dyn Iterator<Item = String> + '_> {
        if self.phases.is_empty() {
            return Box::new(std::iter::once("No sites found\n".to_owned()));
        }
        if !self.simple {
            return Box::new(self.plain_lines(color).into_iter());
        }
        let order = self.order();
        let footer = std::iter::once(self.footer(color));
        let header = self.layout(Self::headers(self.wide).into_iter(), None);
        let rows = order.into_iter().map(move |row| {
            let style = color.then(|| phase_style(self.phases[row]));
            self.layout((0..self.columns).map(|c| self.cell(row, c)), style)
        });
        Box::new(std::iter::once(header).chain(rows).chain(footer))
    }

    /// Row indices sorted by site name.
    fn order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.phases.len()).collect();
        order.sort_by(|a, b| self.cell(*a, 0).cmp(self.cell(*b, 0)));
        order
    }

    /// A blank line, then the fleet-wide footer.
    fn footer(&self, color: bool) -> String {
        format!(
            "\n{}",
            render_footer(&FleetTotals::from(&self.totals), color)
        )
    }

    /// The same table laid out by the shared [`PlainTable`]: what
    /// [`StatusTable::lines`] falls back to when a cell is not one plain
    /// line, and what its direct layout must equal.
    pub(super) fn plain_lines(&self, color: bool) -> Vec<String> {
        if self.phases.is_empty() {
            return vec!["No sites found\n".to_owned()];
        }
        let mut table = PlainTable::new(Self::headers(self.wide));
        for row in self.order() {
            let cells = (0..self.columns)
                .map(|c| self.cell(row, c).to_owned())
                .collect();
            let mut styles = vec![None; self.columns];
            if let Some(phase) = self.phase_column {
                styles[phase] = Some(phase_style(self.phases[row]));
            }
            table.push_styled(cells, styles);
        }
        let text = table.render(color);
        let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_owned).collect();
        lines.push(self.footer(color));
        lines
    }

    /// One line: each cell padded to its column's width plus the gap, the
    /// last unpadded, trailing blanks trimmed (as [`PlainTable`] lays out).
    fn layout<'a>(&self, cells: impl Iterator<Item = &'a str>, phase: Option<Style>) -> String {
        use owo_colors::OwoColorize;
        let mut line = String::with_capacity(128);
        for (i, cell) in cells.enumerate() {
            match phase {
                Some(style) if Some(i) == self.phase_column && !cell.is_empty() => {
                    line.push_str(&cell.style(style).to_string());
                }
                _ => line.push_str(cell),
            }
            if i + 1 < self.columns {
                let pad = self.widths[i] - cell_width(cell) + TABLE_GAP;
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        line.truncate(line.trim_end().len());
        line.push('\n');
        line
    }
}

/// Display width of a one-line cell, as the table layout measures it.
fn cell_width(cell: &str) -> usize {
    tabled::grid::util::string::get_text_width(cell)
}

/// The fleet-wide footer: sites per phase, GPUs, services, active signals.
pub(crate) fn render_footer(t: &FleetTotals, color: bool) -> String {
    use owo_colors::OwoColorize;
    let phases = t
        .by_phase
        .iter()
        // Sleeping only in a fleet that has schedules.
        .filter(|(phase, n)| *phase != Phase::Sleeping || *n > 0)
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
    let maintenance = if t.maintenance > 0 {
        format!(", {} in maintenance", t.maintenance)
    } else {
        String::new()
    };
    let mut footer = format!(
        "Sites: {} ({phases}){maintenance}\nGPUs: {}/{} allocatable  Services: {} ready, {} failed, {} total  Signals: {signals}\n",
        t.sites,
        t.gpus_allocatable,
        t.gpus_total,
        t.services_ready,
        t.services_failed,
        t.services_total,
    );
    if let Some(edges) = edges_line(t) {
        footer.push_str(&edges);
    }
    if t.not_judged > 0 {
        footer.push_str(&format!(
            "{NOT_JUDGED_MARK} {} site(s): no hub has judged the phase shown; it is implied by the heartbeat's age (Pending: never judged; Sleeping: heard from since)\n",
            t.not_judged
        ));
    }
    footer
}

/// The footer's `Edges:` line: sites per edge version, most common first
/// (`Edges: 0.2.0 ×1,180, 0.1.0 ×20`), the first [`FOOTER_VERSIONS`]
/// named and the rest summed up; None when no site reported a version.
/// Versions are the sites' own text: escaped and cut.
pub(crate) fn edges_line(t: &FleetTotals) -> Option<String> {
    if t.edge_versions.is_empty() && t.untracked_versions == 0 {
        return None;
    }
    let mut parts: Vec<String> = t
        .edge_versions
        .iter()
        .take(FOOTER_VERSIONS)
        .map(|(v, n)| {
            format!(
                "{} \u{d7}{}",
                crate::render::safe::safe_text(v, 32),
                thousands(*n)
            )
        })
        .collect();
    let rest: Vec<i64> = t
        .edge_versions
        .iter()
        .skip(FOOTER_VERSIONS)
        .map(|(_, n)| *n)
        .collect();
    let versions = rest.len() + usize::from(t.untracked_versions > 0);
    if versions > 0 {
        let sites = rest
            .iter()
            .fold(t.untracked_versions, |a, n| a.saturating_add(*n));
        let more = if t.untracked_versions > 0 { "+" } else { "" };
        parts.push(format!(
            "{versions}{more} other version{} \u{d7}{}",
            if versions == 1 && more.is_empty() {
                ""
            } else {
                "s"
            },
            thousands(sites)
        ));
    }
    Some(format!("Edges: {}\n", parts.join(", ")))
}

/// `1180` as `1,180`.
pub(crate) fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
