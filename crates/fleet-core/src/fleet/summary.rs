//! The fleet-wide summary kept in the `FederationStatus` singleton and
//! shown in the `kubectl fleet status` footer, computed from the sites;
//! and, in one place, the order in which its lists name their worst
//! entries and how they are cut to fit the object
//! (docs/scaling.md#the-size-of-federationstatus).
//!
//! [`summarize`] gives the hub's full summary: every incident with all its
//! sites (what the REST API serves and the hub decides signals with), the
//! disconnected sites and per-site issue counts already cut. [`bound`]
//! turns it into what is written to the API server: every list cut by
//! count and by bytes, worst first, with exact counts of all beside it, so
//! the object stays under [`crate::api::MAX_FEDERATION_STATUS_BYTES`]
//! whatever the number of sites.
//!
//! **Worst first, by evidence a site cannot forge.** A site writes its own
//! signals, their times and severities, and its heartbeat time; the admin
//! writes its tier; the hub's clock stamps phases and detections. So the
//! order is built from what one site's token cannot bend for others:
//! cascades by the number of distinct sites reporting the signal on that
//! workload, the signal type's severity, the target's tier, then how long
//! the hub has known them ([`cascade_rank`]); disconnected sites by phase,
//! tier and how long the hub has held them in that phase; incident members
//! by tier. Never by the recency of a site-written time: a site could then
//! push the real incidents out by stamping forged ones newer.

use std::collections::{BTreeMap, HashMap, HashSet};

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::Serialize;

use crate::api::{
    CASCADES_BUDGET_BYTES, Cascade, CommonFactor, Correlation, DISCONNECTED_BUDGET_BYTES,
    DisconnectedCluster, EDGE_VERSIONS_BUDGET_BYTES, FACTORS_BUDGET_BYTES, FederatedCluster,
    FederationStatusStatus, GroupedOutage, ISSUES_BUDGET_BYTES, IssuesBySeverity, MAX_CASCADES,
    MAX_DISCONNECTED, MAX_INCIDENT_CLUSTERS, MAX_ISSUE_CLUSTERS, MAX_OUTAGES, OUTAGES_BUDGET_BYTES,
    Phase, Severity, Tier,
};
use crate::fleet::age::human_duration;

/// The phase the hub wrote for a site, Pending if nothing yet. The hub's
/// own summary counts this; views show [`shown_phase`].
pub fn effective_phase(site: &FederatedCluster) -> Phase {
    site.phase().unwrap_or(Phase::Pending)
}

/// The phase a view shows for a site, and whether it is the hub's word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShownPhase {
    /// The phase every view shows.
    pub phase: Phase,
    /// The phase the hub last wrote, if any.
    pub hub_phase: Option<Phase>,
    /// Whether `phase` is the one the hub wrote. False when no hub has
    /// judged the site, or when its heartbeat's age implies a worse phase
    /// than the hub's (see [`shown_phase`]); the view then says so.
    pub judged_by_hub: bool,
}

fn rank(phase: Phase) -> u8 {
    match phase {
        Phase::Connected => 0,
        Phase::Stale => 1,
        Phase::Unreachable => 2,
        Phase::Pending => 3,
        Phase::Sleeping => 4,
    }
}

/// The phase a view shows for `site` at `now`: the hub's, except where the
/// heartbeat's age on the hub clock (`lastHeartbeatTime -
/// clockOffsetSeconds`) contradicts it, so no view ever shows a dead site
/// as healthy because nobody judged it since (docs/operations.md#is-a-hub-judging).
/// `hub_judging` is whether a hub is judging the fleet (None: unknown).
///
/// - A site the hub last judged `Connected` whose heartbeat is older than
///   its Unreachable threshold (10·I) is shown `Unreachable`, whatever the
///   hub: a live hub would have written `Stale` at 3·I, and the clock
///   offset the hub leaves unmeasured (within max(60 s, I)) is always
///   less than 10·I − I, so this never contradicts a live hub.
/// - A site the hub last judged `Connected` whose heartbeat is older than
///   [`connected_at_most`] is shown `Stale`, even while the hub counts as
///   judging: a live hub would have written `Stale` within one of its
///   judgement periods past the threshold, so the hub that said
///   `Connected` died with the site's edge (its liveness record needs up
///   to three periods to say so).
/// - While no hub is judging (`Some(false)`), a `Connected` or `Stale`
///   site is shown with the phase its heartbeat's age implies when that is
///   worse (Stale past 3·I, Unreachable past 10·I). Not done while a hub
///   judges: an edge clock up to the skew tolerance slow would look Stale.
/// - A site no hub has judged (no phase, or `Pending` while no hub judges)
///   that has a heartbeat is shown `Pending`, or the worse phase its age
///   implies.
/// - While no hub is judging, a `Sleeping` site is shown with the phase
///   its age implies (`Stale` past 3·I, `Unreachable` past 10·I: a
///   sleeping site's heartbeat is at least that old), never as the hub's
///   judgement: whether its silence is still expected, or it is late to
///   wake, is the hub's to judge by its schedule, and nobody does. With a
///   heartbeat younger than 3·I it stays `Sleeping`, marked not judged
///   (the age never promotes).
///
/// Only demotions: the age never promotes a site, since an edge clock
/// running ahead would make a dead site's heartbeat look fresh, which only
/// the hub's own observation can rule out.
pub fn shown_phase(
    site: &FederatedCluster,
    hub_judging: Option<bool>,
    now: Timestamp,
) -> ShownPhase {
    let hub_phase = site.phase();
    let judged = |phase| ShownPhase {
        phase,
        hub_phase,
        judged_by_hub: true,
    };
    let implied_by_age = |phase| ShownPhase {
        phase,
        hub_phase,
        judged_by_hub: false,
    };
    let implied = site
        .status
        .as_ref()
        .and_then(|s| s.heartbeat_on_hub_clock())
        .map(|t| crate::fleet::phase::phase(Some(t), site.heartbeat_interval(), now));
    let silent = hub_judging == Some(false);
    let past_connected = site
        .status
        .as_ref()
        .and_then(|s| s.heartbeat_age(now))
        .and_then(|age| std::time::Duration::try_from(age).ok())
        .is_some_and(|age| age > connected_at_most(site.heartbeat_interval()));
    match (hub_phase, implied) {
        (None, None) => implied_by_age(Phase::Pending),
        (Some(p), None) => judged(p),
        (None, Some(age)) => implied_by_age(match age {
            Phase::Connected | Phase::Pending => Phase::Pending,
            worse => worse,
        }),
        (Some(Phase::Pending), Some(age)) if silent => implied_by_age(match age {
            Phase::Connected | Phase::Pending => Phase::Pending,
            worse => worse,
        }),
        // Whether a silence is still expected is the hub's judgement of
        // the schedule: nobody judges it now, so the age says how long the
        // site has been silent (never better: not promoted to Connected).
        (Some(Phase::Sleeping), Some(age)) if silent => implied_by_age(match age {
            Phase::Connected | Phase::Pending => Phase::Sleeping,
            worse => worse,
        }),
        (Some(Phase::Connected), Some(Phase::Unreachable)) => implied_by_age(Phase::Unreachable),
        (Some(p @ (Phase::Connected | Phase::Stale)), Some(age))
            if silent && age != Phase::Pending && rank(age) > rank(p) =>
        {
            implied_by_age(age)
        }
        (Some(Phase::Connected), Some(_)) if past_connected => implied_by_age(Phase::Stale),
        (Some(p), Some(_)) => judged(p),
    }
}

/// The oldest heartbeat (on the hub clock) a view still shows `Connected`
/// as the hub wrote it, with heartbeat interval `interval`: the Stale
/// threshold (3·I) — or, when longer, one interval plus the edge clock
/// offset the hub leaves unmeasured (`phase::skew_tolerance`), so a live
/// site whose edge clock is that slow is never shown Stale — plus one hub
/// judgement period ([`crate::fleet::liveness::LIVENESS_INTERVAL`]).
pub(crate) fn connected_at_most(interval: std::time::Duration) -> std::time::Duration {
    let stale = interval * crate::fleet::phase::CONNECTED_INTERVALS;
    let slow_edge = interval + crate::fleet::phase::skew_tolerance(interval);
    stale.max(slow_edge) + crate::fleet::liveness::LIVENESS_INTERVAL
}

/// Why a site that is not Connected counts as disconnected, for humans.
pub fn disconnect_reason(site: &FederatedCluster, now: Timestamp) -> String {
    // The age on the hub clock (see `heartbeat_on_hub_clock`), never negative.
    let age = site.status.as_ref().and_then(|s| s.heartbeat_age(now));
    let unreadable = site
        .status
        .as_ref()
        .and_then(|s| s.unreadable())
        .is_some_and(|u| u.heartbeat());
    match (effective_phase(site), age) {
        (Phase::Connected, _) => String::new(),
        (phase, None) if unreadable => format!(
            "{}: its heartbeat cannot be read (InvalidStatus)",
            phase.as_str().to_lowercase()
        ),
        (_, None) => "never heard from".to_owned(),
        (phase, Some(age)) => format!(
            "{}: last heartbeat {} ago (interval {}s)",
            phase.as_str().to_lowercase(),
            human_duration(age),
            site.spec.heartbeat_interval_seconds
        ),
    }
}

/// Fleet-wide totals folded one site at a time, so a caller that sees the
/// fleet in pages (`kubectl fleet status`) never needs the whole list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Sites added.
    pub sites: i64,
    /// Connected sites.
    pub connected: i64,
    /// Stale sites.
    pub stale: i64,
    /// Unreachable sites.
    pub unreachable: i64,
    /// Pending sites (never judged).
    pub pending: i64,
    /// Sleeping sites (silent as their schedule expects).
    pub sleeping: i64,
    /// Sites counted with a phase no hub judged ([`ShownPhase::judged_by_hub`]
    /// false); always 0 in the hub's own summary.
    pub not_judged: i64,
    /// GPU capacity.
    pub gpus_total: i64,
    /// Allocatable GPUs.
    pub gpus_allocatable: i64,
    /// Ready inference services.
    pub services_ready: i64,
    /// Failed inference services.
    pub services_failed: i64,
    /// All inference services.
    pub services_total: i64,
    /// Active signals per severity.
    pub by_severity: IssuesBySeverity,
}

impl Totals {
    /// Counts one site in with the phase the hub wrote (the hub's summary).
    pub(crate) fn add(&mut self, site: &FederatedCluster) {
        self.add_as(site, effective_phase(site), true);
    }

    /// Counts one site in with the phase a view shows for it.
    pub(crate) fn add_shown(&mut self, site: &FederatedCluster, shown: &ShownPhase) {
        self.add_as(site, shown.phase, shown.judged_by_hub);
    }

    fn add_as(&mut self, site: &FederatedCluster, phase: Phase, judged_by_hub: bool) {
        self.sites += 1;
        if !judged_by_hub {
            self.not_judged += 1;
        }
        match phase {
            Phase::Connected => self.connected += 1,
            Phase::Stale => self.stale += 1,
            Phase::Unreachable => self.unreachable += 1,
            Phase::Pending => self.pending += 1,
            Phase::Sleeping => self.sleeping += 1,
        }
        let Some(status) = site.status.as_ref() else {
            return;
        };
        for s in status.signals() {
            self.by_severity.add(s.severity);
        }
        // Counts are what the sites wrote: sums saturate rather than
        // overflow, so no site's numbers can stop the hub or the CLI.
        if let Some(c) = &status.capacity {
            add(&mut self.gpus_total, c.gpus_total);
            add(&mut self.gpus_allocatable, c.gpus_allocatable);
        }
        if let Some(i) = &status.inference {
            add(&mut self.services_ready, i.services_ready);
            add(&mut self.services_failed, i.services_failed);
            add(&mut self.services_total, i.services_total);
        }
    }

    /// All active signals.
    pub(crate) fn active_signals(&self) -> i64 {
        self.by_severity.total()
    }
}

/// The hub's full `FederationStatus` status for `sites` with the given
/// incidents, as of `now`: correlations with all their sites, cascades all
/// of them ordered by [`cascade_rank`], the outages of [`set_outages`]
/// (none here); `disconnectedClusters` and `issuesByCluster` already cut to
/// their worst entries ([`MAX_DISCONNECTED`], [`MAX_ISSUE_CLUSTERS`]) with
/// their totals. [`bound`] cuts the rest for writing.
pub fn summarize<S: std::borrow::Borrow<FederatedCluster>>(
    sites: &[S],
    correlations: Vec<Correlation>,
    mut cascades: Vec<Cascade>,
    now: Timestamp,
) -> FederationStatusStatus {
    let mut totals = Totals::default();
    // Keys first, for every site; entries (a formatted reason each) only
    // for those kept.
    let mut disconnected: Vec<(DisconnectedKey<'_>, &FederatedCluster)> = Vec::new();
    let mut issues: Vec<(IssueKey<'_>, i64)> = Vec::new();
    for site in sites.iter().map(S::borrow) {
        totals.add(site);
        let phase = effective_phase(site);
        // A site in maintenance is judged and counted by its phase, but
        // its downtime is planned: it is not listed as disconnected.
        // Nor is a site asleep as its schedule expects.
        if !matches!(phase, Phase::Connected | Phase::Sleeping) && !site.in_maintenance(now) {
            disconnected.push((disconnected_key(site, phase), site));
        }
        let signals = site.status.as_ref().map_or(&[][..], |s| s.signals());
        if !signals.is_empty() {
            let n = count(signals.len());
            issues.push((
                IssueKey {
                    signals: std::cmp::Reverse(n),
                    tier: tier_rank(site.spec.tier),
                    name: site.site_name(),
                },
                n,
            ));
        }
    }
    let disconnected_total = count(disconnected.len());
    let disconnected = worst_first(disconnected, MAX_DISCONNECTED, |a, b| a.0.cmp(&b.0));
    let disconnected = within_budget(
        disconnected
            .into_iter()
            .map(|(_, site)| DisconnectedCluster {
                name: site.site_name().to_owned(),
                phase: effective_phase(site),
                // On the hub clock (the edge's time minus the offset the hub
                // measured), not clamped to `now`, so it changes only when a
                // heartbeat or the offset does.
                last_seen: site
                    .status
                    .as_ref()
                    .and_then(|s| s.heartbeat_on_hub_clock())
                    .map(Time),
                reason: disconnect_reason(site, now),
            }),
        MAX_DISCONNECTED,
        DISCONNECTED_BUDGET_BYTES,
    );
    let clusters_with_issues = count(issues.len());
    let issues = worst_first(issues, MAX_ISSUE_CLUSTERS, |a, b| a.0.cmp(&b.0));
    let issues_by_cluster = within_budget(
        issues.into_iter().map(|(key, n)| (key.name.to_owned(), n)),
        MAX_ISSUE_CLUSTERS,
        ISSUES_BUDGET_BYTES,
    )
    .into_iter()
    .collect();
    cascade_rank(&mut cascades);
    FederationStatusStatus {
        total_clusters: count(sites.len()),
        connected_clusters: totals.connected,
        stale_clusters: totals.stale,
        unreachable_clusters: totals.unreachable,
        pending_clusters: totals.pending,
        sleeping_clusters: totals.sleeping,
        disconnected_clusters: disconnected,
        disconnected_clusters_total: disconnected_total,
        gpus_total: totals.gpus_total,
        gpus_allocatable: totals.gpus_allocatable,
        services_ready: totals.services_ready,
        services_failed: totals.services_failed,
        services_total: totals.services_total,
        total_active_issues: totals.active_signals(),
        issues_by_severity: totals.by_severity,
        issues_by_cluster,
        clusters_with_issues,
        cross_cluster_correlations: count(correlations.len()),
        correlations: correlations
            .into_iter()
            .map(|mut c| {
                c.clusters_total = count(c.clusters.len());
                c
            })
            .collect(),
        cascades_detected: count(cascades.len()),
        cascades,
        last_updated: Some(Time(now)),
        outages: Vec::new(),
        outages_total: 0,
        maintenance_clusters: count(
            sites
                .iter()
                .filter(|s| s.borrow().in_maintenance(now))
                .count(),
        ),
        edge_versions: edge_versions(sites.iter().map(|s| s.borrow())),
        // The hub's own record is the leader's to set (it is kept apart
        // from the summary's writes).
        hub: None,
        detection: None,
    }
}

/// Sets the grouped outages of the full `summary`: the largest first
/// (then the longest dark, then by group), at most [`MAX_OUTAGES`] —
/// the hub follows no more, so its metrics stay bounded — with
/// `outagesTotal` counting them all.
pub fn set_outages(summary: &mut FederationStatusStatus, mut outages: Vec<GroupedOutage>) {
    summary.outages_total = count(outages.len());
    for o in &mut outages {
        o.clusters_total = count(o.clusters.len());
    }
    outages.sort_by(|a, b| {
        (std::cmp::Reverse(a.clusters.len()), &a.since.0, &a.value).cmp(&(
            std::cmp::Reverse(b.clusters.len()),
            &b.since.0,
            &b.value,
        ))
    });
    outages.truncate(MAX_OUTAGES);
    summary.outages = outages;
}

/// Orders cascades by the evidence behind them, strongest first: the
/// number of distinct sites reporting the signal on that workload (a
/// source and every production site it reached), then the signal type's
/// severity, then the target's tier (critical first), then how long the
/// hub has known it (`detectedTime`, on its own clock: the earliest first,
/// so newcomers cannot push an incident out), then its id. Nothing in
/// this order is a time a site wrote: with two tokens a site can forge
/// cascades, but not more evidence than its own two sites, nor an older
/// detection.
pub(crate) fn cascade_rank(cascades: &mut Vec<Cascade>) {
    let mut sites: HashMap<(crate::api::SignalType, &crate::api::WorkloadRef), HashSet<&str>> =
        HashMap::new();
    for c in cascades.iter() {
        let set = sites.entry((c.signal, &c.workload)).or_default();
        set.insert(&c.source);
        set.insert(&c.target);
    }
    let mut order: Vec<_> = cascades
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let evidence = sites.get(&(c.signal, &c.workload)).map_or(0, HashSet::len);
            (
                std::cmp::Reverse(evidence),
                severity_rank(c.signal.default_severity()),
                tier_rank(c.target_tier),
                // Not recorded (written by a hub that did not): last.
                c.detected_time
                    .as_ref()
                    .map_or((1, Timestamp::MAX), |t| (0, t.0)),
                c.id.clone(),
                c.key(),
                i,
            )
        })
        .collect();
    order.sort_unstable();
    let mut slots: Vec<Option<Cascade>> = std::mem::take(cascades).into_iter().map(Some).collect();
    cascades.extend(order.into_iter().filter_map(|k| slots[k.6].take()));
}

/// The `FederationStatus` status to write for the hub's full `summary` of
/// `sites`: every list cut to its worst entries by count and by bytes
/// (see the constants in `crate::api`), with its exact count beside it.
///
/// - a correlation's or an outage's `clusters`: at most
///   [`MAX_INCIDENT_CLUSTERS`] — the strictest tiers first (for an outage,
///   Unreachable sites before Stale ones), listed by name;
/// - `cascades` in the order of [`cascade_rank`], `outages` largest first,
///   each within its byte budget;
/// - `edgeVersions` within its byte budget, the least common versions
///   folded under `other`.
///
/// A site whose name `summary` names but `sites` lacks ranks last.
pub fn bound<S: std::borrow::Borrow<FederatedCluster>>(
    summary: &FederationStatusStatus,
    sites: &[S],
) -> FederationStatusStatus {
    let by_name: HashMap<&str, &FederatedCluster> = sites
        .iter()
        .map(|s| (s.borrow().site_name(), s.borrow()))
        .collect();
    let member_key = |name: &str, by_phase: bool| match by_name.get(name) {
        Some(site) => (
            if by_phase {
                dark_rank(effective_phase(site))
            } else {
                0
            },
            tier_rank(site.spec.tier),
        ),
        None => (u8::MAX, u8::MAX),
    };
    let cut = |clusters: &[String], by_phase: bool| -> Vec<String> {
        if clusters.len() <= MAX_INCIDENT_CLUSTERS {
            return clusters.to_vec();
        }
        let mut kept = worst_first(
            clusters
                .iter()
                .map(|n| (member_key(n, by_phase), n))
                .collect(),
            MAX_INCIDENT_CLUSTERS,
            |a, b| a.cmp(b),
        )
        .into_iter()
        .map(|(_, n)| n)
        .collect::<Vec<_>>();
        kept.sort();
        kept.into_iter().cloned().collect()
    };
    let mut out = summary.clone();
    for c in &mut out.correlations {
        c.clusters_total = c.cluster_count();
        c.clusters = cut(&c.clusters, false);
    }
    // Each list's budget is spent without the common factors, which have
    // one budget of their own (below): they never push an incident out.
    out.cascades = within_budget(
        summary.cascades.iter().map(|c| Cascade {
            common_factors: Vec::new(),
            ..c.clone()
        }),
        MAX_CASCADES,
        CASCADES_BUDGET_BYTES,
    );
    out.cascades_detected = summary.cascade_count();
    out.outages = within_budget(
        summary.outages.iter().map(|o| GroupedOutage {
            clusters: cut(&o.clusters, true),
            clusters_total: o.cluster_count(),
            common_factors: Vec::new(),
            ..o.clone()
        }),
        MAX_OUTAGES,
        OUTAGES_BUDGET_BYTES,
    );
    out.outages_total = summary.outage_count();
    out.edge_versions = versions_within_budget(&summary.edge_versions);
    factors_within_budget(&mut out, summary);
    out
}

/// The common factors of the written incidents of `out` (those of
/// `summary`, which lists the same ones in the same order first), while
/// they fit [`FACTORS_BUDGET_BYTES`] together: correlations, then
/// outages, then cascades, each incident's whole or not at all.
fn factors_within_budget(out: &mut FederationStatusStatus, summary: &FederationStatusStatus) {
    let mut left = FACTORS_BUDGET_BYTES;
    let mut keep = |factors: &Vec<CommonFactor>| -> Vec<CommonFactor> {
        let bytes = json_len(factors);
        if factors.is_empty() || bytes > left {
            return Vec::new();
        }
        left -= bytes;
        factors.clone()
    };
    for (c, full) in out.correlations.iter_mut().zip(&summary.correlations) {
        c.common_factors = keep(&full.common_factors);
    }
    for (o, full) in out.outages.iter_mut().zip(&summary.outages) {
        o.common_factors = keep(&full.common_factors);
    }
    for (c, full) in out.cascades.iter_mut().zip(&summary.cascades) {
        c.common_factors = keep(&full.common_factors);
    }
}

/// The order of `disconnectedClusters`: Unreachable, Stale, Pending; the
/// strictest tier; the longest in that phase by the hub's own
/// `phaseTransitionTime` (never set: last); the name.
type DisconnectedKey<'a> = (u8, u8, (u8, Timestamp), &'a str);

fn disconnected_key(site: &FederatedCluster, phase: Phase) -> DisconnectedKey<'_> {
    let since = site
        .status
        .as_ref()
        .and_then(|s| s.phase_transition_time.as_ref())
        .map_or((1, Timestamp::MAX), |t| (0, t.0));
    (
        dark_rank(phase),
        tier_rank(site.spec.tier),
        since,
        site.site_name(),
    )
}

/// The order of `issuesByCluster`: the most signals, the strictest tier,
/// the name.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct IssueKey<'a> {
    signals: std::cmp::Reverse<i64>,
    tier: u8,
    name: &'a str,
}

/// Rank of a phase among sites that are not Connected, the worst first.
fn dark_rank(phase: Phase) -> u8 {
    match phase {
        Phase::Unreachable => 0,
        Phase::Stale => 1,
        Phase::Pending => 2,
        Phase::Connected | Phase::Sleeping => 3,
    }
}

/// Rank of a tier, the strictest first.
fn tier_rank(tier: Tier) -> u8 {
    match tier {
        Tier::Critical => 0,
        Tier::Standard => 1,
        Tier::NonCritical => 2,
    }
}

/// Rank of a severity, the worst first.
fn severity_rank(severity: Severity) -> u8 {
    match severity {
        Severity::Critical => 0,
        Severity::High => 1,
        Severity::Medium => 2,
        Severity::Low => 3,
    }
}

/// The `max` first of `items` by `order`, in that order; linear in
/// `items` plus the sort of those kept.
fn worst_first<T>(
    mut items: Vec<T>,
    max: usize,
    order: impl Fn(&T, &T) -> std::cmp::Ordering,
) -> Vec<T> {
    if items.len() > max && max > 0 {
        items.select_nth_unstable_by(max - 1, &order);
    }
    items.truncate(max);
    items.sort_by(&order);
    items
}

/// The leading `items` that fit: at most `max`, and at most `budget` bytes
/// of JSON together (each item's own serialization plus a separator).
/// An item too large to fit ends the list, so the order is kept.
fn within_budget<T: Serialize>(
    items: impl IntoIterator<Item = T>,
    max: usize,
    budget: usize,
) -> Vec<T> {
    let mut out = Vec::new();
    let mut used = 0usize;
    for item in items.into_iter().take(max) {
        let bytes = json_len(&item).saturating_add(1);
        if used.saturating_add(bytes) > budget {
            break;
        }
        used += bytes;
        out.push(item);
    }
    out
}

fn json_len<T: Serialize>(value: &T) -> usize {
    serde_json::to_vec(value).map_or(usize::MAX, |v| v.len())
}

/// `versions` within [`EDGE_VERSIONS_BUDGET_BYTES`]: the most common
/// versions (ties by name) kept while they fit, the others counted under
/// [`OTHER_VERSIONS`].
fn versions_within_budget(versions: &BTreeMap<String, i64>) -> BTreeMap<String, i64> {
    if json_len(versions) <= EDGE_VERSIONS_BUDGET_BYTES {
        return versions.clone();
    }
    let mut by_count: Vec<(&String, i64)> = versions
        .iter()
        .filter(|(v, _)| v.as_str() != OTHER_VERSIONS)
        .map(|(v, n)| (v, *n))
        .collect();
    by_count.sort_by(|a, b| (std::cmp::Reverse(a.1), a.0).cmp(&(std::cmp::Reverse(b.1), b.0)));
    // Room for `"other":` and its count.
    let mut used = json_len(&BTreeMap::from([(OTHER_VERSIONS, i64::MAX)]));
    let mut out = BTreeMap::new();
    let mut other = versions.get(OTHER_VERSIONS).copied().unwrap_or(0);
    for (v, n) in by_count {
        let bytes = json_len(v).saturating_add(22);
        if used.saturating_add(bytes) <= EDGE_VERSIONS_BUDGET_BYTES {
            used += bytes;
            out.insert(v.clone(), n);
        } else {
            other = other.saturating_add(n);
        }
    }
    if other > 0 {
        out.insert(OTHER_VERSIONS.to_owned(), other);
    }
    out
}

pub use crate::fleet::versions::OTHER_VERSIONS;

/// How many sites report each edge version (`status.observedVersion`),
/// the [`crate::api::MAX_EDGE_VERSIONS`] − 1 most common by name, the rest under
/// [`OTHER_VERSIONS`] (counted by [`crate::fleet::versions::EdgeVersions`],
/// as the CLI's views count them). Sites that never reported a version
/// are left out.
pub(crate) fn edge_versions<'a>(
    sites: impl Iterator<Item = &'a FederatedCluster>,
) -> BTreeMap<String, i64> {
    let mut versions = crate::fleet::versions::EdgeVersions::default();
    for site in sites {
        versions.add(site);
    }
    versions.summary()
}

fn add(total: &mut i64, n: i64) {
    *total = total.saturating_add(n);
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Signal, SignalType};
    use crate::fleet::fixtures::fixture_now;
    use std::time::Duration;

    #[test]
    fn sites_at_their_caps_yield_a_bounded_fleet_status() {
        use crate::fleet::correlation::detect_cascades;
        use crate::fleet::correlation::{CorrelationConfig, DEFAULT_LOOKBACK, correlate};
        let sites = crate::fleet::fixtures::fleet_at_caps(200);
        let now = fixture_now();
        let correlations = correlate(&sites, &[], now, CorrelationConfig::default());
        let cascades = detect_cascades(&sites, now, DEFAULT_LOOKBACK);
        let all = cascades.len();
        assert_eq!(
            all,
            100 * 100,
            "every production site is a target of every signal"
        );
        let full = summarize(&sites, correlations, cascades, now);
        assert_eq!(
            full.cascades.len(),
            10_000,
            "the full summary keeps them all"
        );
        let f = bound(&full, &sites);
        assert_eq!(f.cascades_detected, 10_000);
        assert!(!f.cascades.is_empty() && f.cascades.len() <= MAX_CASCADES);
        assert!(json_len(&f.cascades) <= CASCADES_BUDGET_BYTES + 2);
        assert_eq!(f.cascades[..], full.cascades[..f.cascades.len()]);
        assert_eq!(f.correlations.len(), SignalType::ALL.len());
        for c in &f.correlations {
            assert_eq!(
                (c.clusters.len(), c.clusters_total),
                (MAX_INCIDENT_CLUSTERS, 200)
            );
        }
        // Counts at i64::MAX on every site saturate instead of overflowing.
        assert_eq!(f.gpus_total, i64::MAX);
        assert_eq!(f.services_total, i64::MAX);
        assert_eq!(f.connected_clusters, 200);
        let bytes = serde_json::to_vec(&f).unwrap().len();
        assert!(bytes < 200 * 1024, "FederationStatus of {bytes} bytes");
    }

    #[test]
    fn counts_phases_issues_and_totals() {
        let sites = [
            FederatedCluster::test("c").unreachable(),
            FederatedCluster::test("a")
                .connected()
                .with_gpus(8)
                .with_inference(2, 3, 1, 4)
                .with_signal(Signal::test(SignalType::NodeNotReady, "", "Node", "n1"))
                .with_signal(Signal::test(SignalType::Evicted, "x", "Pod", "p")),
            FederatedCluster::test("b")
                .stale()
                .with_gpu_vendor("amd.com/gpu", 4, 2),
            FederatedCluster::test("d"),
        ];
        let s = summarize(&sites, vec![], vec![], fixture_now());
        assert_eq!(s.total_clusters, 4);
        assert_eq!(
            (
                s.connected_clusters,
                s.stale_clusters,
                s.unreachable_clusters,
                s.pending_clusters
            ),
            (1, 1, 1, 1)
        );
        let names: Vec<_> = s
            .disconnected_clusters
            .iter()
            .map(|d| (d.name.as_str(), d.phase))
            .collect();
        assert_eq!(
            names,
            [
                ("c", Phase::Unreachable),
                ("b", Phase::Stale),
                ("d", Phase::Pending)
            ],
            "worst first"
        );
        assert_eq!(s.disconnected_clusters_total, 3);
        assert_eq!(
            s.disconnected_clusters[1].reason,
            "stale: last heartbeat 2m30s ago (interval 30s)"
        );
        assert_eq!(s.disconnected_clusters[2].reason, "never heard from");
        assert_eq!(s.total_active_issues, 2);
        assert_eq!(
            s.issues_by_severity,
            IssuesBySeverity {
                critical: 1,
                high: 0,
                medium: 0,
                low: 1
            }
        );
        assert_eq!(s.issues_by_cluster, BTreeMap::from([("a".to_owned(), 2)]));
        assert_eq!(s.clusters_with_issues, 1);
        assert_eq!((s.gpus_total, s.gpus_allocatable), (12, 10));
        assert_eq!(
            (s.services_ready, s.services_failed, s.services_total),
            (3, 1, 4)
        );
        assert_eq!(s.last_updated, Some(Time(fixture_now())));
    }

    /// A site of `tier` in `phase` since `since_secs` ago (hub clock).
    fn dark(name: &str, tier: Tier, phase: Phase, since_secs: i64) -> FederatedCluster {
        FederatedCluster::test(name)
            .with_tier(tier)
            .heartbeat_ago(since_secs + 300)
            .with_phase(phase, since_secs)
    }

    #[test]
    fn the_worst_disconnected_sites_are_listed_with_the_count_of_all() {
        let mut sites: Vec<FederatedCluster> = (0..150)
            .map(|i| {
                dark(
                    &format!("a-stale-{i:03}"),
                    Tier::Standard,
                    Phase::Stale,
                    100,
                )
            })
            .collect();
        sites.push(dark("z-crit-new", Tier::Critical, Phase::Unreachable, 400));
        sites.push(dark("z-crit-old", Tier::Critical, Phase::Unreachable, 4000));
        sites.push(dark(
            "y-unreachable",
            Tier::NonCritical,
            Phase::Unreachable,
            9000,
        ));
        sites.push(dark("x-stale-crit", Tier::Critical, Phase::Stale, 10));
        sites.push(FederatedCluster::test("w-pending").pending());
        let s = summarize(&sites, vec![], vec![], fixture_now());
        assert_eq!(s.disconnected_clusters_total, 155);
        assert_eq!(s.disconnected_clusters.len(), MAX_DISCONNECTED);
        let names: Vec<&str> = s
            .disconnected_clusters
            .iter()
            .take(5)
            .map(|d| d.name.as_str())
            .collect();
        // Unreachable before Stale, the strictest tier first, then the
        // longest in its phase by the hub's clock; Pending never makes it.
        assert_eq!(
            names,
            [
                "z-crit-old",
                "z-crit-new",
                "y-unreachable",
                "x-stale-crit",
                "a-stale-000"
            ]
        );
        assert!(
            s.disconnected_clusters
                .iter()
                .all(|d| d.name != "w-pending")
        );
        // A site cannot move up by the heartbeat time it wrote.
        let mut forged = dark("b-forger", Tier::Standard, Phase::Stale, 100);
        forged.status.as_mut().unwrap().last_heartbeat_time =
            Some(crate::fleet::fixtures::ago(10 * 365 * 86_400));
        sites.push(forged);
        let s = summarize(&sites, vec![], vec![], fixture_now());
        assert!(s.disconnected_clusters.iter().all(|d| d.name != "b-forger"));
        assert_eq!(s.disconnected_clusters_total, 156);
    }

    #[test]
    fn the_sites_with_the_most_signals_are_listed_with_the_count_of_all() {
        let signal = |i: usize| Signal::test(SignalType::Evicted, "ns", "Pod", &format!("p{i}"));
        let sites: Vec<FederatedCluster> = (0..MAX_ISSUE_CLUSTERS + 20)
            .map(|i| {
                (0..=i % 3).fold(
                    FederatedCluster::test(&format!("s{i:03}")).connected(),
                    |site, j| site.with_signal(signal(j)),
                )
            })
            .collect();
        let s = summarize(&sites, vec![], vec![], fixture_now());
        assert_eq!(s.clusters_with_issues, count(MAX_ISSUE_CLUSTERS + 20));
        assert_eq!(s.issues_by_cluster.len(), MAX_ISSUE_CLUSTERS);
        // 40 sites have 3 signals, 40 have 2, 40 have 1: the 20 left out
        // are the last by name among those with one.
        assert_eq!(
            s.issues_by_cluster.values().filter(|n| **n == 1).count(),
            20
        );
        assert!(!s.issues_by_cluster.contains_key("s117"));
        assert!(s.issues_by_cluster.contains_key("s000"));
    }

    fn cascade(
        source: &str,
        target: &str,
        workload: &str,
        tier: Tier,
        detected_ago: i64,
    ) -> Cascade {
        let mut c = Cascade {
            id: String::new(),
            source: source.into(),
            target: target.into(),
            source_environment: crate::api::Environment::Staging,
            target_environment: crate::api::Environment::Production,
            source_tier: Tier::Standard,
            target_tier: tier,
            signal: SignalType::CrashLoopBackOff,
            workload: crate::api::WorkloadRef::new("Deployment", workload),
            source_first_seen: crate::fleet::fixtures::ago(detected_ago + 600),
            target_first_seen: crate::fleet::fixtures::ago(detected_ago),
            delta_seconds: 600,
            detected_time: Some(crate::fleet::fixtures::ago(detected_ago)),
            common_factors: Vec::new(),
        };
        c.id = crate::fleet::correlation::cascade_id(&c.key());
        c
    }

    #[test]
    fn cascades_are_ranked_by_evidence_not_by_site_written_times() {
        let mut all = vec![
            // Newest by every time a site wrote, one source, one target.
            cascade("forger-stg", "forger-prod", "w1", Tier::Standard, 0),
            // Older, same evidence: the hub has known it longer.
            cascade("stg", "prod-a", "web", Tier::Standard, 3600),
            // Three sites report the same signal on this workload.
            cascade("stg-2", "prod-b", "api", Tier::Standard, 60),
            cascade("stg-2", "prod-c", "api", Tier::Standard, 30),
            // Two sites, but into a critical site.
            cascade("stg-3", "prod-d", "db", Tier::Critical, 10),
        ];
        cascade_rank(&mut all);
        let order: Vec<&str> = all.iter().map(|c| c.target.as_str()).collect();
        assert_eq!(
            order,
            ["prod-b", "prod-c", "prod-d", "prod-a", "forger-prod"]
        );
    }

    #[test]
    fn incident_sites_are_cut_to_the_strictest_tiers_and_counted() {
        let sites: Vec<FederatedCluster> = (0..80)
            .map(|i| {
                let tier = if i % 30 == 29 {
                    Tier::Critical
                } else {
                    Tier::Standard
                };
                FederatedCluster::test(&format!("s{i:02}"))
                    .with_tier(tier)
                    .connected()
                    .with_signal(Signal::test(SignalType::OomKilled, "ns", "Pod", "p"))
            })
            .collect();
        let correlations =
            crate::fleet::correlation::correlate(&sites, &[], fixture_now(), Default::default());
        let full = summarize(&sites, correlations, vec![], fixture_now());
        assert_eq!(full.correlations[0].clusters.len(), 80);
        let written = bound(&full, &sites);
        let c = &written.correlations[0];
        assert_eq!(
            (c.clusters.len(), c.clusters_total),
            (MAX_INCIDENT_CLUSTERS, 80)
        );
        assert!(c.is_cut());
        for critical in ["s29", "s59"] {
            assert!(c.clusters.iter().any(|n| n == critical), "{critical}");
        }
        let mut sorted = c.clusters.clone();
        sorted.sort();
        assert_eq!(c.clusters, sorted, "listed by name");
        assert_eq!(c.strictest_tier, Some(Tier::Critical));
    }

    #[test]
    fn edge_versions_past_their_budget_are_counted_under_other() {
        let mut versions: BTreeMap<String, i64> = (0..63)
            .map(|i| (format!("{i:02}{}", "\0".repeat(126)), 1))
            .collect();
        versions.insert("0.2.0".into(), 500);
        let kept = versions_within_budget(&versions);
        assert!(
            json_len(&kept) <= EDGE_VERSIONS_BUDGET_BYTES,
            "{}",
            json_len(&kept)
        );
        assert_eq!(kept["0.2.0"], 500, "the most common first");
        assert_eq!(kept.values().sum::<i64>(), 563, "every site still counted");
        assert!(kept[OTHER_VERSIONS] > 0);
        let small = BTreeMap::from([("0.1.0".to_owned(), 3)]);
        assert_eq!(versions_within_budget(&small), small);
    }

    fn shown(site: &FederatedCluster, judging: Option<bool>, secs: i64) -> (Phase, bool) {
        let s = shown_phase(
            site,
            judging,
            fixture_now() + jiff::SignedDuration::from_secs(secs),
        );
        (s.phase, s.judged_by_hub)
    }

    #[test]
    fn a_site_past_its_unreachable_age_is_never_shown_connected() {
        // I = 30 s; Connected as the hub last wrote it, heartbeat 5 s ago.
        let site = FederatedCluster::test("a").connected();
        for judging in [Some(true), Some(false), None] {
            assert_eq!(shown(&site, judging, 0), (Phase::Connected, true));
            // Exactly 10·I: not past it, but long past what a live hub
            // leaves Connected.
            assert_eq!(shown(&site, judging, 295), (Phase::Stale, false));
            assert_eq!(
                shown(&site, judging, 296),
                (Phase::Unreachable, false),
                "{judging:?}"
            );
        }
        // Past 3·I: Stale at once when no hub judges; while one counts as
        // judging, one judgement period later (a live hub may hold an edge
        // clock up to the skew tolerance slow, and writes Stale within a
        // period): a hub that died with the edge leaves it green no longer.
        assert_eq!(
            connected_at_most(Duration::from_secs(30)),
            Duration::from_secs(105)
        );
        assert_eq!(shown(&site, Some(true), 86), (Phase::Connected, true));
        assert_eq!(shown(&site, None, 86), (Phase::Connected, true));
        assert_eq!(shown(&site, Some(false), 85), (Phase::Connected, true));
        assert_eq!(shown(&site, Some(false), 86), (Phase::Stale, false));
        for judging in [Some(true), None] {
            assert_eq!(shown(&site, judging, 100), (Phase::Connected, true));
            assert_eq!(
                shown(&site, judging, 101),
                (Phase::Stale, false),
                "{judging:?}"
            );
        }
        // A short interval leaves room for an unmeasured slow edge clock:
        // 10 s + 60 s + 15 s.
        assert_eq!(
            connected_at_most(Duration::from_secs(10)),
            Duration::from_secs(85)
        );
        // A Stale site of a silent hub goes on to Unreachable by age.
        let stale = FederatedCluster::test("b").stale();
        assert_eq!(shown(&stale, Some(true), 600), (Phase::Stale, true));
        assert_eq!(shown(&stale, Some(false), 150), (Phase::Stale, true));
        assert_eq!(shown(&stale, Some(false), 151), (Phase::Unreachable, false));
        // The age is on the hub clock: an edge 10 minutes behind, measured
        // by the hub, is not aged by it.
        let behind = FederatedCluster::test("c")
            .connected()
            .heartbeat_ago(605)
            .with_clock_offset(-600);
        assert_eq!(shown(&behind, Some(false), 0), (Phase::Connected, true));
    }

    #[test]
    fn the_age_never_promotes_and_an_unjudged_site_says_so() {
        // Unreachable as the hub wrote it, with a fresh heartbeat it has not
        // judged (a fast edge clock could fake one): stays Unreachable.
        let back = FederatedCluster::test("a").unreachable().heartbeat_ago(1);
        assert_eq!(shown(&back, Some(false), 0), (Phase::Unreachable, true));
        // Heartbeating, never judged (no hub ever ran): Pending, not the hub's.
        let mut never = FederatedCluster::test("b").heartbeat_ago(5);
        assert_eq!(shown(&never, Some(false), 0), (Phase::Pending, false));
        assert_eq!(shown(&never, Some(true), 0), (Phase::Pending, false));
        assert_eq!(shown(&never, Some(false), 300), (Phase::Unreachable, false));
        // Pending as a hub wrote it, then a heartbeat while no hub judges.
        never = never.with_phase(Phase::Pending, 60);
        assert_eq!(shown(&never, Some(false), 0), (Phase::Pending, false));
        assert_eq!(shown(&never, Some(true), 0), (Phase::Pending, true));
        assert_eq!(shown(&never, Some(false), 100), (Phase::Stale, false));
        // Registered, never heard from, never judged.
        assert_eq!(
            shown(&FederatedCluster::test("c"), Some(true), 0),
            (Phase::Pending, false)
        );
        assert_eq!(
            shown(&FederatedCluster::test("d").pending(), Some(false), 0),
            (Phase::Pending, true)
        );
        // Totals count what is shown, and how many no hub judged.
        let mut t = Totals::default();
        let stale = FederatedCluster::test("e").connected();
        let at = fixture_now() + jiff::SignedDuration::from_secs(400);
        t.add_shown(&stale, &shown_phase(&stale, Some(true), at));
        t.add(&stale);
        assert_eq!((t.connected, t.unreachable, t.not_judged), (1, 1, 1));
    }

    #[test]
    fn a_sleeping_site_is_not_claimed_asleep_while_no_hub_judges() {
        // I = 30 s; Sleeping as the hub wrote it, silent 20 intervals.
        let asleep = FederatedCluster::test("store").sleeping();
        for judging in [Some(true), None] {
            assert_eq!(
                shown(&asleep, judging, 0),
                (Phase::Sleeping, true),
                "{judging:?}"
            );
            assert_eq!(
                shown(&asleep, judging, 86_400),
                (Phase::Sleeping, true),
                "{judging:?}: a judging hub decides when it is late"
            );
        }
        // Nobody judges whether the silence is still expected: the age.
        assert_eq!(shown(&asleep, Some(false), 0), (Phase::Unreachable, false));
        let dozing = FederatedCluster::test("store")
            .sleeping()
            .heartbeat_ago(100);
        assert_eq!(shown(&dozing, Some(false), 0), (Phase::Stale, false));
        // A heartbeat younger than 3·I: not promoted, still not the hub's.
        let woke = FederatedCluster::test("store").sleeping().heartbeat_ago(5);
        assert_eq!(shown(&woke, Some(false), 0), (Phase::Sleeping, false));
        // Counted as shown, and as not judged.
        let mut t = Totals::default();
        t.add_shown(&asleep, &shown_phase(&asleep, Some(false), fixture_now()));
        assert_eq!((t.sleeping, t.unreachable, t.not_judged), (0, 1, 1));
    }

    #[test]
    fn empty_fleet() {
        let s = summarize::<FederatedCluster>(&[], vec![], vec![], fixture_now());
        assert_eq!(s.total_clusters, 0);
        assert!(s.disconnected_clusters.is_empty());
        assert_eq!(s.total_active_issues, 0);
    }
}

#[cfg(test)]
mod edge_version_tests {
    use super::*;
    use crate::api::MAX_EDGE_VERSIONS;

    fn reporting(name: &str, version: Option<&str>) -> FederatedCluster {
        let mut s = FederatedCluster::test(name);
        s.status = Some(crate::api::FederatedClusterStatus {
            observed_version: version.map(str::to_owned),
            ..Default::default()
        });
        s
    }

    #[test]
    fn versions_are_counted_and_bounded() {
        let sites = [
            reporting("a", Some("0.2.0")),
            reporting("b", Some("0.2.0")),
            reporting("c", Some("0.1.0")),
            reporting("d", None),
        ];
        let v = edge_versions(sites.iter());
        assert_eq!(
            v,
            BTreeMap::from([("0.1.0".to_owned(), 1), ("0.2.0".to_owned(), 2)])
        );
        let many: Vec<_> = (0..MAX_EDGE_VERSIONS + 10)
            .map(|i| reporting(&format!("s{i}"), Some(&format!("1.0.{i}"))))
            .collect();
        let v = edge_versions(many.iter());
        assert_eq!(v.len(), MAX_EDGE_VERSIONS);
        assert_eq!(v[OTHER_VERSIONS], 11);
        assert_eq!(v.values().sum::<i64>(), i64::try_from(many.len()).unwrap());
    }
}
