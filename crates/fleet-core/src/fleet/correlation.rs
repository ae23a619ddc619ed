//! Cross-cluster correlation and cascade detection (docs/architecture.md#signals-correlation-and-remediation-policy), over the
//! signals the sites report in their status.
//!
//! - A **correlation** is one signal type active (lastSeen within a window)
//!   in at least `threshold` distinct member clusters ([`MemberKey`]: sites
//!   whose reports name one member count once). It is elevated to critical,
//!   keeps the original severity, and keeps its id (`xc-` + 8 hex) for as
//!   long as it stays active, even as sites join or leave it: the id is
//!   carried over from the previous set, never derived from the members.
//! - A **cascade** is one signal type on one workload (kind and name) first
//!   seen in a lower environment (development < staging) and later in
//!   production, within a lookback. Found by grouping sightings by
//!   (signal, workload) in a hash map, linear in the number of signals.
//!
//! What a site reports is evidence only as far as the hub can vouch for it
//! ([`witness`], docs/reliability.md#what-a-sites-report-may-change-for-other-sites):
//! every time is moved onto the hub clock by the offset the hub measured
//! (`clockOffsetSeconds`) and is never later than the hub last heard from
//! the site; a quarantined site, or one the hub never heard from, is no
//! evidence at all.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::api::{
    Cascade, Correlation, Environment, FederatedCluster, FederatedClusterStatus, Severity, Signal,
    SignalType, Tier, WorkloadRef,
};

/// Default window within which a signal counts as active for correlation.
pub(crate) const DEFAULT_WINDOW: Duration = Duration::from_secs(15 * 60);
/// Default number of distinct sites that makes a correlation.
pub(crate) const DEFAULT_THRESHOLD: usize = 3;
/// Default lookback for cascades.
pub const DEFAULT_LOOKBACK: Duration = Duration::from_secs(24 * 3600);

/// Tunables of [`correlate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorrelationConfig {
    /// A signal is active while `now - lastSeen` is at most this.
    pub window: Duration,
    /// Minimum number of distinct sites (values below 1 behave as 1).
    pub threshold: usize,
}

impl Default for CorrelationConfig {
    fn default() -> Self {
        Self {
            window: DEFAULT_WINDOW,
            threshold: DEFAULT_THRESHOLD,
        }
    }
}

fn within(then: Timestamp, now: Timestamp, span: Duration) -> bool {
    let span = SignedDuration::try_from(span).unwrap_or(SignedDuration::MAX);
    now.duration_since(then) <= span
}

/// A signal's `firstSeen` and `lastSeen` on the hub clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seen {
    /// When the failure began, on the hub clock; never after `last`.
    pub first: Timestamp,
    /// When it was last seen, on the hub clock; never after the hub last
    /// heard from the site, nor after `now`.
    pub last: Timestamp,
}

/// `signal`'s times, as `status` reports them, moved onto the hub clock
/// at `now`: minus the site's `clockOffsetSeconds` (an edge's signal
/// times are on its clock: `lastSeen` on the edge's, the onset on its
/// member's, which the edge runs in), `lastSeen` never later than the
/// site's latest heartbeat on the hub clock (a report cannot have seen a
/// failure after it was sent) nor than `now`, and `firstSeen` never later
/// than that `lastSeen`. So a clock running ahead or behind, or a lie,
/// neither keeps a signal active after the hub stopped hearing from its
/// site nor reorders it before or after another site's.
pub(crate) fn seen_on_hub_clock(
    status: &FederatedClusterStatus,
    signal: &Signal,
    now: Timestamp,
) -> Seen {
    let bound = status
        .heartbeat_on_hub_clock()
        .map_or(now, |heard| heard.min(now));
    let offset = SignedDuration::from_secs(status.clock_offset_seconds.unwrap_or(0));
    let shift = |t: Timestamp| t.checked_sub(offset).unwrap_or(t);
    let last = shift(signal.last_seen.0).min(bound);
    Seen {
        first: shift(signal.first_seen.0).min(last),
        last,
    }
}

/// A site whose report counts as evidence for fleet incidents.
pub(crate) struct Witness<'a> {
    status: &'a FederatedClusterStatus,
    now: Timestamp,
}

/// `site` as a witness at `now`: None when an administrator quarantined
/// it (`spec.quarantine`) or the hub never heard from it (no heartbeat,
/// so nothing vouches for when its signals were seen).
pub(crate) fn witness(site: &FederatedCluster, now: Timestamp) -> Option<Witness<'_>> {
    if site.is_quarantined() {
        return None;
    }
    let status = site.status.as_ref()?;
    status.last_heartbeat_time.as_ref()?;
    Some(Witness { status, now })
}

impl<'a> Witness<'a> {
    /// Its signals.
    pub(crate) fn signals(&self) -> &'a [Signal] {
        self.status.signals()
    }

    /// A signal's times on the hub clock ([`seen_on_hub_clock`]).
    pub(crate) fn seen(&self, signal: &Signal) -> Seen {
        seen_on_hub_clock(self.status, signal, self.now)
    }
}

/// The cluster a site's reports come from, for counting incidents by
/// cluster rather than by site: its `status.member` (the kube-system
/// namespace UID its edge or the Pull prober read), or the site itself
/// while it names none. Five sites whose edges read one cluster are one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum MemberKey<'a> {
    /// A member identity (`status.member`).
    Member(&'a str),
    /// A site that names no member.
    Site(&'a str),
}

/// The [`MemberKey`] of `site`.
pub(crate) fn member_key(site: &FederatedCluster) -> MemberKey<'_> {
    match site.status.as_ref().and_then(|s| s.member.as_deref()) {
        Some(member) => MemberKey::Member(member),
        None => MemberKey::Site(site.site_name()),
    }
}

/// How many distinct member clusters `keys` name.
pub(crate) fn distinct_members<'a>(keys: impl IntoIterator<Item = MemberKey<'a>>) -> usize {
    let mut keys: Vec<MemberKey<'a>> = keys.into_iter().collect();
    keys.sort_unstable();
    keys.dedup();
    keys.len()
}

struct Group<'a> {
    /// Member sites, each once (a site's signals are contiguous, so a
    /// repeat is always the last entry).
    clusters: Vec<&'a str>,
    /// The member cluster of each site (one cluster may hold several).
    members: Vec<MemberKey<'a>>,
    last_site: usize,
    worst: Severity,
    last_seen: Timestamp,
    strictest: Tier,
    /// The earliest evidence and its site.
    start: (Timestamp, &'a str),
}

/// The active correlations at `now`, sorted by signal type. A correlation
/// present in `previous` for the same signal type keeps its id, and its
/// start (`firstSeen`, `startedBy`) unless a member's evidence is earlier
/// or its site has been quarantined since; a new one gets a fresh id
/// derived from its signal type and detection time. Every time is on the
/// hub clock ([`witness`]); quarantined sites are never members.
///
/// Linear in the number of signals: per signal one lookup among the signal
/// types; site names are borrowed, and copied once per correlation member.
pub fn correlate<S: std::borrow::Borrow<FederatedCluster>>(
    sites: &[S],
    previous: &[Correlation],
    now: Timestamp,
    config: CorrelationConfig,
) -> Vec<Correlation> {
    let mut groups: BTreeMap<SignalType, Group<'_>> = BTreeMap::new();
    let mut quarantined: HashSet<&str> = HashSet::new();
    for (index, site) in sites.iter().enumerate() {
        let site: &FederatedCluster = S::borrow(site);
        if site.is_quarantined() {
            quarantined.insert(site.site_name());
        }
        let Some(witness) = witness(site, now) else {
            continue;
        };
        for s in witness.signals() {
            let seen = witness.seen(s);
            if !within(seen.last, now, config.window) {
                continue;
            }
            let name = site.site_name();
            let g = groups.entry(s.type_).or_insert_with(|| Group {
                clusters: Vec::new(),
                members: Vec::new(),
                last_site: usize::MAX,
                worst: s.severity,
                last_seen: seen.last,
                strictest: site.spec.tier,
                start: (seen.first, name),
            });
            if g.last_site != index {
                g.last_site = index;
                g.clusters.push(name);
                g.members.push(member_key(site));
                g.strictest = stricter_tier(g.strictest, site.spec.tier);
            }
            g.worst = g.worst.min(s.severity);
            g.last_seen = g.last_seen.max(seen.last);
            g.start = g.start.min((seen.first, name));
        }
    }
    let previous: HashMap<SignalType, &Correlation> =
        previous.iter().map(|c| (c.signal, c)).collect();
    groups
        .into_iter()
        .filter_map(|(signal, mut g)| {
            g.clusters.sort_unstable();
            g.clusters.dedup();
            // Distinct clusters, not sites: sites reading one member are one.
            if distinct_members(g.members) < config.threshold.max(1) {
                return None;
            }
            let (id, start) = match previous.get(&signal) {
                Some(p) => {
                    // A start recorded by an older hub (no site) was its
                    // detection time, not evidence: not carried.
                    let carried = p
                        .started_by
                        .as_deref()
                        .filter(|site| !quarantined.contains(site))
                        .map(|site| (p.first_seen.0, site));
                    (p.id.clone(), carried.map_or(g.start, |c| c.min(g.start)))
                }
                None => (correlation_id(signal, now), g.start),
            };
            Some(Correlation {
                id,
                signal,
                severity: Severity::Critical,
                original_severity: g.worst,
                clusters_total: i64::try_from(g.clusters.len()).unwrap_or(i64::MAX),
                clusters: g.clusters.into_iter().map(str::to_owned).collect(),
                first_seen: Time(start.0),
                last_seen: Time(g.last_seen),
                started_by: Some(start.1.to_owned()),
                strictest_tier: Some(g.strictest),
                common_factors: Vec::new(),
            })
        })
        .collect()
}

/// The stricter of two tiers for the remediation policy (critical, then
/// standard, then non-critical).
fn stricter_tier(a: Tier, b: Tier) -> Tier {
    let rank = |t: Tier| match t {
        Tier::Critical => 2,
        Tier::Standard => 1,
        Tier::NonCritical => 0,
    };
    if rank(b) > rank(a) { b } else { a }
}

/// 32-bit FNV-1a of `bytes`: small, deterministic across processes and
/// versions (unlike std's hashers), enough for short incident ids.
pub fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in bytes {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// `xc-` and 8 hex digits of an FNV-1a hash of the signal type and the
/// detection time: deterministic, and different for each new occurrence.
pub(crate) fn correlation_id(signal: SignalType, detected_at: Timestamp) -> String {
    let nanos = detected_at.as_nanosecond().to_le_bytes();
    let hash = fnv1a(signal.as_str().bytes().chain([0]).chain(nanos));
    format!("xc-{hash:08x}")
}

/// `cc-` and 8 hex digits of an FNV-1a hash of a cascade's identity
/// ([`Cascade::key`]: source, target, signal, workload): the same cascade
/// keeps its id from one evaluation to the next.
pub(crate) fn cascade_id(key: &str) -> String {
    format!("cc-{:08x}", fnv1a(key.bytes()))
}

/// Whether `id` has the `PREFIX-` + 8 lowercase hex shape of an incident
/// id (`xc-` correlations, `cc-` cascades, `go-` grouped outages).
pub fn is_incident_id(id: &str, prefix: &str) -> bool {
    id.strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|hex| {
            hex.len() == 8
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
}

#[derive(Clone)]
struct Sighting<'a> {
    cluster: &'a str,
    environment: Environment,
    tier: Tier,
    first_seen: Timestamp,
}

/// Rank in the promotion chain; None for environments outside it (dr).
fn stage(env: Environment) -> Option<u8> {
    match env {
        Environment::Development => Some(0),
        Environment::Staging => Some(1),
        Environment::Production => Some(2),
        Environment::Dr => None,
    }
}

/// Cascades at `now`: for every production site whose signal on a workload
/// was first seen within `lookback` (times on the hub clock, quarantined
/// sites left out: [`witness`]), the earliest strictly earlier sighting
/// of the same signal type on the same workload kind and name in a lower
/// environment within the lookback is its source. One cascade per
/// (signal, workload, production site), sorted by target first-seen, then
/// signal, workload and target.
pub fn detect_cascades<S: std::borrow::Borrow<FederatedCluster>>(
    sites: &[S],
    now: Timestamp,
    lookback: Duration,
) -> Vec<Cascade> {
    // Earliest firstSeen per (signal, workload) per site, across
    // namespaces. A site's signals are contiguous, so its sighting in a
    // group, if any, is that group's last entry.
    let mut groups: HashMap<(SignalType, &WorkloadRef), Vec<(usize, Sighting<'_>)>> =
        HashMap::new();
    for (index, site) in sites.iter().enumerate() {
        let site: &FederatedCluster = S::borrow(site);
        let env = site.spec.environment;
        if stage(env).is_none() {
            continue;
        }
        let Some(witness) = witness(site, now) else {
            continue;
        };
        for s in witness.signals() {
            // On the hub clock: a skewed clock neither hides nor invents a
            // cascade, and a sighting cannot come from the future (an edge
            // clock running ahead, or a lie, counts as seen when the hub
            // last heard from the site).
            let first_seen = witness.seen(s).first;
            if !within(first_seen, now, lookback) {
                continue;
            }
            let by_site = groups.entry((s.type_, &s.workload)).or_default();
            match by_site.last_mut() {
                Some((i, e)) if *i == index => e.first_seen = e.first_seen.min(first_seen),
                _ => by_site.push((
                    index,
                    Sighting {
                        cluster: site.site_name(),
                        environment: env,
                        tier: site.spec.tier,
                        first_seen,
                    },
                )),
            }
        }
    }
    let mut out = Vec::new();
    for ((signal, workload), by_site) in groups {
        let (targets, lower): (Vec<_>, Vec<_>) = by_site
            .into_iter()
            .map(|(_, sighting)| sighting)
            .partition(|s| s.environment == Environment::Production);
        // The earliest lower-environment sighting (ties: lower stage, then
        // name) is the source for every later production sighting.
        let Some(source) = lower.into_iter().min_by(|a, b| {
            (a.first_seen, stage(a.environment), a.cluster).cmp(&(
                b.first_seen,
                stage(b.environment),
                b.cluster,
            ))
        }) else {
            continue;
        };
        for target in targets
            .into_iter()
            .filter(|t| t.first_seen > source.first_seen)
        {
            let mut cascade = Cascade {
                id: String::new(),
                source: source.cluster.to_owned(),
                target: target.cluster.to_owned(),
                source_environment: source.environment,
                target_environment: target.environment,
                source_tier: source.tier,
                target_tier: target.tier,
                signal,
                workload: workload.clone(),
                source_first_seen: Time(source.first_seen),
                target_first_seen: Time(target.first_seen),
                delta_seconds: target
                    .first_seen
                    .duration_since(source.first_seen)
                    .as_secs(),
                detected_time: None,
                common_factors: Vec::new(),
            };
            cascade.id = cascade_id(&cascade.key());
            out.push(cascade);
        }
    }
    // (signal, workload, target) is unique, so an unstable sort is exact.
    out.sort_unstable_by(|a, b| {
        (&a.target_first_seen, a.signal, &a.workload, &a.target).cmp(&(
            &b.target_first_seen,
            b.signal,
            &b.workload,
            &b.target,
        ))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Signal;
    use crate::fleet::fixtures::{ago, fixture_now};

    fn site(name: &str, env: Environment, signals: Vec<Signal>) -> FederatedCluster {
        signals.into_iter().fold(
            FederatedCluster::test(name)
                .with_environment(env)
                .connected(),
            |fc, s| fc.with_signal(s),
        )
    }

    fn crash(first_ago: i64, last_ago: i64) -> Signal {
        Signal::test(SignalType::CrashLoopBackOff, "shop", "Deployment", "web")
            .seen(first_ago, last_ago)
    }

    fn prod(name: &str, signals: Vec<Signal>) -> FederatedCluster {
        site(name, Environment::Production, signals)
    }

    #[test]
    fn three_sites_make_one_critical_correlation() {
        let sites = [
            prod("a", vec![crash(600, 60)]),
            prod("b", vec![crash(600, 60)]),
            prod("c", vec![crash(600, 60)]),
        ];
        let out = correlate(&sites, &[], fixture_now(), CorrelationConfig::default());
        assert_eq!(out.len(), 1);
        let c = &out[0];
        assert!(is_incident_id(&c.id, "xc"), "{}", c.id);
        assert_eq!(c.signal, SignalType::CrashLoopBackOff);
        assert_eq!(c.severity, Severity::Critical);
        assert_eq!(c.original_severity, Severity::High);
        assert_eq!(c.clusters, ["a", "b", "c"]);
        // The earliest evidence, not the detection time (ties: by name).
        assert_eq!(c.first_seen, ago(600));
        assert_eq!(c.last_seen, ago(60));
        assert_eq!(c.started_by.as_deref(), Some("a"));
    }

    #[test]
    fn first_seen_is_the_earliest_evidence_and_never_after_last_seen() {
        let cfg = CorrelationConfig::default();
        // Standing signals are re-sent every 5 minutes: when the hub finds
        // the correlation, the latest lastSeen may be minutes old.
        let sites = [
            prod("a", vec![crash(900, 240)]),
            prod("b", vec![crash(1800, 280)]),
            prod("c", vec![crash(300, 270)]),
        ];
        let found = correlate(&sites, &[], fixture_now(), cfg);
        let c = &found[0];
        assert!(c.first_seen.0 <= c.last_seen.0, "{c:?}");
        assert_eq!(
            (c.first_seen.clone(), c.last_seen.clone()),
            (ago(1800), ago(240))
        );
        assert_eq!(c.started_by.as_deref(), Some("b"));
        // b recovers and leaves: the start is kept while it lasts.
        let later = fixture_now() + SignedDuration::from_secs(60);
        let without_b = [
            sites[0].clone(),
            sites[2].clone(),
            prod("d", vec![crash(60, 0)]),
        ];
        let kept = correlate(&without_b, &found, later, cfg);
        assert_eq!(kept[0].id, c.id);
        assert_eq!(kept[0].started_by.as_deref(), Some("b"));
        assert_eq!(kept[0].first_seen, ago(1800));
        // A member with earlier evidence moves it earlier.
        let with_e = [
            sites[0].clone(),
            sites[2].clone(),
            prod("e", vec![crash(7200, 30)]),
        ];
        let moved = correlate(&with_e, &kept, later, cfg);
        assert_eq!(moved[0].started_by.as_deref(), Some("e"));
        assert_eq!(moved[0].first_seen, ago(7200));
        // A start an older hub wrote (its detection time, no site) is not
        // evidence: the members' is taken.
        let mut old = found.clone();
        old[0].started_by = None;
        old[0].first_seen = Time(fixture_now());
        let from_old = correlate(&sites, &old, later, cfg);
        assert_eq!(from_old[0].first_seen, ago(1800));
    }

    #[test]
    fn a_future_last_seen_keeps_nothing_alive_after_its_site_goes_silent() {
        let cfg = CorrelationConfig::default();
        let forever = 10 * 365 * 24 * 3600;
        // The liar's signal claims to be seen for the next ten years.
        let liar = |heard_ago| {
            site("liar", Environment::Staging, vec![crash(600, -forever)]).heartbeat_ago(heard_ago)
        };
        let sites = [
            liar(5),
            prod("a", vec![crash(600, 60)]),
            prod("b", vec![crash(600, 60)]),
        ];
        let out = correlate(&sites, &[], fixture_now(), cfg);
        assert_eq!(out[0].clusters, ["a", "b", "liar"]);
        // Never later than the hub last heard from it.
        assert_eq!(out[0].last_seen, ago(5));
        // It stops reporting; 15 minutes after its last heartbeat its
        // signal is no evidence any more, whatever it claims.
        let sites = [
            liar(901),
            prod("a", vec![crash(600, 60)]),
            prod("b", vec![crash(600, 60)]),
        ];
        assert!(correlate(&sites, &out, fixture_now(), cfg).is_empty());
        // A status with signals but no heartbeat (never heard from, or the
        // key removed) is no evidence either.
        let mut unheard = liar(5);
        if let Some(st) = unheard.status.as_mut() {
            st.last_heartbeat_time = None;
        }
        let sites = [
            unheard,
            prod("a", vec![crash(600, 60)]),
            prod("b", vec![crash(600, 60)]),
        ];
        assert!(correlate(&sites, &[], fixture_now(), cfg).is_empty());
    }

    fn quarantined(site: FederatedCluster) -> FederatedCluster {
        let mut site = site;
        site.spec.quarantine = Some(crate::api::Quarantine {
            since: Some(ago(60)),
            reason: Some("forged signals".into()),
        });
        site
    }

    #[test]
    fn a_quarantined_site_is_part_of_no_correlation_or_cascade() {
        let cfg = CorrelationConfig::default();
        let liar = site("liar", Environment::Staging, vec![crash(7200, 30)]);
        let sites = [
            liar.clone(),
            prod("a", vec![crash(600, 60)]),
            prod("b", vec![crash(600, 60)]),
        ];
        let found = correlate(&sites, &[], fixture_now(), cfg);
        assert_eq!(found[0].started_by.as_deref(), Some("liar"));
        assert_eq!(
            detect_cascades(&sites, fixture_now(), DEFAULT_LOOKBACK).len(),
            2
        );
        let sites = [
            quarantined(liar.clone()),
            sites[1].clone(),
            sites[2].clone(),
        ];
        assert!(correlate(&sites, &found, fixture_now(), cfg).is_empty());
        assert!(detect_cascades(&sites, fixture_now(), DEFAULT_LOOKBACK).is_empty());
        // With enough others the correlation goes on without it, and the
        // start it claimed is not carried over.
        let mut more = sites.to_vec();
        more.push(prod("c", vec![crash(300, 60)]));
        let without = correlate(&more, &found, fixture_now(), cfg);
        assert_eq!(without[0].id, found[0].id);
        assert_eq!(without[0].clusters, ["a", "b", "c"]);
        assert_eq!(without[0].started_by.as_deref(), Some("a"));
        assert_eq!(without[0].first_seen, ago(600));
    }

    #[test]
    fn measured_clock_offsets_move_onsets_onto_the_hub_clock() {
        let hour = 3600;
        // Staging's failure began 2 h before production's, but its edge
        // clock runs 3 h ahead: on its own clock it came 1 h after.
        let stg_ahead = site(
            "stg",
            Environment::Staging,
            vec![crash(2 * hour - 3 * hour, 60 - 3 * hour)],
        )
        .heartbeat_ago(5 - 3 * hour)
        .with_clock_offset(3 * hour);
        let p = prod("p", vec![crash(0, 0)]);
        let out = detect_cascades(&[stg_ahead, p.clone()], fixture_now(), DEFAULT_LOOKBACK);
        assert_eq!(
            out.len(),
            1,
            "a fast staging clock hid the cascade: {out:?}"
        );
        assert_eq!(out[0].source_first_seen, ago(2 * hour));
        assert_eq!(out[0].delta_seconds, 2 * hour - 5);
        // Staging's failure began 1 h after production's, but its clock
        // runs 3 h behind: on its own clock it came 2 h before.
        let p = prod("p", vec![crash(2 * hour, 0)]);
        let stg_behind = site(
            "stg",
            Environment::Staging,
            vec![crash(hour + 3 * hour, 60 + 3 * hour)],
        )
        .heartbeat_ago(5 + 3 * hour)
        .with_clock_offset(-3 * hour);
        assert!(
            detect_cascades(
                &[stg_behind.clone(), p.clone()],
                fixture_now(),
                DEFAULT_LOOKBACK
            )
            .is_empty(),
            "a slow staging clock invented a cascade"
        );
        // The same slow clock does not hide the site from a correlation:
        // its signal was seen 60 s ago, 3 h ago on its clock.
        let sites = [stg_behind, p, prod("q", vec![crash(600, 60)])];
        let found = correlate(&sites, &[], fixture_now(), CorrelationConfig::default());
        assert_eq!(found[0].clusters, ["p", "q", "stg"]);
        assert_eq!(found[0].last_seen, ago(5), "p's, seen when last heard");
    }

    /// `site` as its reports name member `uid` (`status.member`).
    fn reading(mut site: FederatedCluster, uid: &str) -> FederatedCluster {
        site.status.get_or_insert_with(Default::default).member = Some(uid.to_owned());
        site
    }

    #[test]
    fn sites_whose_edges_read_one_cluster_count_once() {
        const ONE: &str = "6f1c2a8e-0b7d-4f3e-9a51-2c8d7e6f1b20";
        const OTHER: &str = "0c9e1d2a-7b3f-4e5d-8a6b-1f2e3d4c5b6a";
        // Five "sites" whose edges all read one cluster: one cluster, no
        // cross-cluster correlation.
        let five: Vec<_> = ["a", "b", "c", "d", "e"]
            .into_iter()
            .map(|n| reading(prod(n, vec![crash(600, 60)]), ONE))
            .collect();
        assert!(correlate(&five, &[], fixture_now(), CorrelationConfig::default()).is_empty());
        // Two clusters plus a site that names no member yet: three.
        let mut three = five[..2].to_vec();
        three.push(reading(prod("f", vec![crash(600, 60)]), OTHER));
        three.push(prod("g", vec![crash(600, 60)]));
        let out = correlate(&three, &[], fixture_now(), CorrelationConfig::default());
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].clusters, ["a", "b", "f", "g"], "every site is named");
        assert_eq!(distinct_members(three.iter().map(member_key)), 3);
    }

    #[test]
    fn below_threshold_or_outside_window_is_no_correlation() {
        let two = [
            prod("a", vec![crash(600, 60)]),
            prod("b", vec![crash(600, 60)]),
        ];
        assert!(correlate(&two, &[], fixture_now(), CorrelationConfig::default()).is_empty());
        let cfg = CorrelationConfig {
            threshold: 2,
            ..CorrelationConfig::default()
        };
        assert_eq!(
            correlate(&two, &[], fixture_now(), cfg).len(),
            1,
            "threshold is configurable"
        );
        // c's signal was last seen 15 min + 1 s ago: not active.
        let sites = [
            prod("a", vec![crash(600, 60)]),
            prod("b", vec![crash(600, 900)]),
            prod("c", vec![crash(1200, 901)]),
        ];
        assert!(correlate(&sites, &[], fixture_now(), CorrelationConfig::default()).is_empty());
    }

    #[test]
    fn same_site_twice_counts_once() {
        let other = Signal::test(SignalType::CrashLoopBackOff, "shop", "Deployment", "api");
        let sites = [
            prod("a", vec![crash(600, 60), other]),
            prod("b", vec![crash(600, 60)]),
        ];
        assert!(correlate(&sites, &[], fixture_now(), CorrelationConfig::default()).is_empty());
    }

    #[test]
    fn id_is_stable_while_sites_join_and_leave() {
        let cfg = CorrelationConfig::default();
        let abc = [
            prod("a", vec![crash(600, 60)]),
            prod("b", vec![crash(600, 60)]),
            prod("c", vec![crash(600, 60)]),
        ];
        let first = correlate(&abc, &[], fixture_now(), cfg);
        let later = fixture_now() + SignedDuration::from_secs(60);
        let bcd = [
            prod("b", vec![crash(600, 0)]),
            prod("c", vec![crash(600, 0)]),
            prod("d", vec![crash(600, 0)]),
            prod("e", vec![crash(600, 0)]),
        ];
        let second = correlate(&bcd, &first, later, cfg);
        assert_eq!(second[0].id, first[0].id);
        assert_eq!(second[0].first_seen, first[0].first_seen);
        assert_eq!(second[0].clusters, ["b", "c", "d", "e"]);
        // It ends, then recurs: a new id.
        let ended = correlate(&bcd[..2], &second, later, cfg);
        assert!(ended.is_empty());
        let again = correlate(&bcd, &ended, later + SignedDuration::from_secs(60), cfg);
        assert_ne!(again[0].id, first[0].id);
    }

    #[test]
    fn original_severity_is_worst_member_severity() {
        let raised = crash(600, 60).with_severity(Severity::Critical);
        let sites = [
            prod("a", vec![crash(600, 60)]),
            prod("b", vec![raised]),
            prod("c", vec![crash(600, 60)]),
        ];
        let out = correlate(&sites, &[], fixture_now(), CorrelationConfig::default());
        assert_eq!(out[0].original_severity, Severity::Critical);
    }

    #[test]
    fn one_correlation_per_signal_type_sorted() {
        let evict = || Signal::test(SignalType::Evicted, "x", "Pod", "p");
        let sites = [
            prod("a", vec![crash(600, 60), evict()]),
            prod("b", vec![crash(600, 60), evict()]),
            prod("c", vec![crash(600, 60), evict()]),
        ];
        let out = correlate(&sites, &[], fixture_now(), CorrelationConfig::default());
        let signals: Vec<_> = out.iter().map(|c| c.signal).collect();
        assert_eq!(signals, [SignalType::CrashLoopBackOff, SignalType::Evicted]);
        assert_ne!(out[0].id, out[1].id);
    }

    #[test]
    fn ids_are_xc_and_8_hex() {
        let id = correlation_id(SignalType::OomKilled, fixture_now());
        assert!(is_incident_id(&id, "xc"));
        assert_eq!(
            id,
            correlation_id(SignalType::OomKilled, fixture_now()),
            "deterministic"
        );
        assert!(!is_incident_id("xc-1234567", "xc"));
        assert!(!is_incident_id("xc-1234567G", "xc"));
        assert!(!is_incident_id("yc-12345678", "xc"));
    }

    #[test]
    fn staging_then_production_is_a_cascade() {
        let sites = [
            site("stg", Environment::Staging, vec![crash(3600, 60)]),
            prod("prod-1", vec![crash(600, 60)]),
            prod("prod-0", vec![crash(3600, 60)]), // same time as staging: not later
        ];
        let out = detect_cascades(&sites, fixture_now(), DEFAULT_LOOKBACK);
        assert_eq!(out.len(), 1);
        let c = &out[0];
        assert_eq!((c.source.as_str(), c.target.as_str()), ("stg", "prod-1"));
        assert_eq!(c.source_environment, Environment::Staging);
        assert_eq!(c.target_environment, Environment::Production);
        assert_eq!(
            (c.source_tier, c.target_tier),
            (Tier::Standard, Tier::Standard)
        );
        assert_eq!(c.signal, SignalType::CrashLoopBackOff);
        assert_eq!(c.workload, WorkloadRef::new("Deployment", "web"));
        assert_eq!(c.delta_seconds, 3000);
    }

    #[test]
    fn a_sighting_dated_in_the_future_counts_as_seen_when_last_heard() {
        let future = 10 * 365 * 24 * 3600;
        let sites = [
            site("stg", Environment::Staging, vec![crash(3600, 60)]),
            prod("prod-1", vec![crash(-future, -future)]),
            // A lying staging site cannot claim to come after everyone.
            site("dev", Environment::Development, vec![crash(-future, 60)]),
        ];
        let out = detect_cascades(&sites, fixture_now(), DEFAULT_LOOKBACK);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(
            (out[0].source.as_str(), out[0].target.as_str()),
            ("stg", "prod-1")
        );
        // Seen when the hub last heard from prod-1 (5 s ago).
        assert_eq!(out[0].target_first_seen, ago(5));
        assert_eq!(out[0].delta_seconds, 3595);
    }

    #[test]
    fn earliest_lower_environment_is_the_source() {
        let sites = [
            site("stg", Environment::Staging, vec![crash(3600, 60)]),
            site("dev", Environment::Development, vec![crash(7200, 60)]),
            prod("p", vec![crash(60, 60)]),
        ];
        let out = detect_cascades(&sites, fixture_now(), DEFAULT_LOOKBACK);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].source, "dev");
        assert_eq!(out[0].delta_seconds, 7140);
    }

    #[test]
    fn no_cascade_without_same_workload_or_lower_environment() {
        let api =
            Signal::test(SignalType::CrashLoopBackOff, "shop", "Deployment", "api").seen(60, 60);
        let sts =
            Signal::test(SignalType::CrashLoopBackOff, "shop", "StatefulSet", "web").seen(60, 60);
        let oom = Signal::test(SignalType::OomKilled, "shop", "Deployment", "web").seen(60, 60);
        let sites = [
            site("stg", Environment::Staging, vec![crash(3600, 60)]),
            prod("p", vec![api, sts, oom]),
            site("dr", Environment::Dr, vec![crash(7200, 60)]),
            prod("p2", vec![crash(7200, 60)]),
        ];
        assert!(detect_cascades(&sites, fixture_now(), DEFAULT_LOOKBACK).is_empty());
        // Production first, then staging: not a cascade either.
        let sites = [
            prod("p", vec![crash(3600, 60)]),
            site("stg", Environment::Staging, vec![crash(60, 60)]),
        ];
        assert!(detect_cascades(&sites, fixture_now(), DEFAULT_LOOKBACK).is_empty());
    }

    #[test]
    fn namespace_does_not_matter_for_cascades() {
        let other_ns = Signal::test(
            SignalType::CrashLoopBackOff,
            "shop-prod",
            "Deployment",
            "web",
        )
        .seen(60, 60);
        let sites = [
            site("stg", Environment::Staging, vec![crash(3600, 60)]),
            prod("p", vec![other_ns]),
        ];
        assert_eq!(
            detect_cascades(&sites, fixture_now(), DEFAULT_LOOKBACK).len(),
            1
        );
    }

    #[test]
    fn outside_lookback_is_ignored() {
        let sites = [
            site("stg", Environment::Staging, vec![crash(24 * 3600 + 1, 60)]),
            prod("p", vec![crash(60, 60)]),
        ];
        assert!(detect_cascades(&sites, fixture_now(), DEFAULT_LOOKBACK).is_empty());
        let sites = [
            site("stg", Environment::Staging, vec![crash(24 * 3600, 60)]),
            prod("p", vec![crash(60, 60)]),
        ];
        assert_eq!(
            detect_cascades(&sites, fixture_now(), DEFAULT_LOOKBACK).len(),
            1
        );
    }

    #[test]
    fn many_targets_sorted() {
        let sites = [
            site("stg", Environment::Staging, vec![crash(7200, 60)]),
            prod("p-b", vec![crash(60, 60)]),
            prod("p-a", vec![crash(60, 60)]),
            prod("p-c", vec![crash(3600, 60)]),
        ];
        let out = detect_cascades(&sites, fixture_now(), DEFAULT_LOOKBACK);
        let targets: Vec<_> = out.iter().map(|c| c.target.as_str()).collect();
        assert_eq!(targets, ["p-c", "p-a", "p-b"]);
    }
}

#[cfg(test)]
mod cascade_id_tests {
    use super::*;

    #[test]
    fn a_cascade_keeps_its_id_and_ids_have_their_shape() {
        let a = cascade_id("staging-1->prod-1:CrashLoopBackOff:Deployment/api");
        assert_eq!(
            a,
            cascade_id("staging-1->prod-1:CrashLoopBackOff:Deployment/api")
        );
        assert_ne!(
            a,
            cascade_id("staging-1->prod-2:CrashLoopBackOff:Deployment/api")
        );
        assert!(is_incident_id(&a, "cc"));
        assert!(!is_incident_id(&a, "xc"));
        assert!(!is_incident_id("cc-1234567", "cc"));
    }
}
