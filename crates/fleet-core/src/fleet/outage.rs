//! Grouped outages (docs/observability.md#maintenance-windows-and-grouped-outages): several sites
//! sharing a group — their region, or the value of another label the hub
//! is told to group by — that left Connected close together are one outage,
//! reported once (FederationStatus `outages`, `kubectl fleet incidents`, a
//! metric, the `FleetGroupedOutage` alert, an Event) instead of a page per
//! site.
//!
//! Which sites count: those a view shows Stale or Unreachable
//! ([`crate::fleet::summary::shown_phase`]), never heard from excluded
//! (Pending sites never left Connected), and never a site whose maintenance
//! window is open (its downtime is planned). When they left: the hub-clock
//! time of their last heartbeat, which does not move while a site stays
//! dark, so the same sites always make the same outage; the first of them
//! started the outage (`startedBy`).
//!
//! A quarantined site (`spec.quarantine`) still counts: quarantine takes
//! back what a site *reports* (its signals), while an outage is made of
//! what the hub did *not* hear, judged on its own clock — a site that
//! stopped reporting is dark whether or not its reports were trusted.
//!
//! Within a group the sites are sorted by that time and chained: a site
//! joins the chain before it when it went dark at most `window` later. A
//! chain of sites on at least `min_clusters` distinct member clusters
//! ([`crate::fleet::correlation::MemberKey`]) is an outage; a group has at most
//! one outage, holding every such chain (a region that failed twice, hours
//! apart, while the first sites are still dark is one outage). A site that
//! went dark on its own, far from the others, stays out and keeps its own
//! alerts. The outage keeps its `go-` id while it lasts: carried over from
//! the previous evaluation for the same group, new when it recurs. And it
//! keeps each of its sites until that site is back (not dark any more, or
//! in a maintenance window), even once fewer than `min_clusters` are left,
//! so the first site to come back does not release the others' pages; it
//! ends when the last one is back.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::api::{FederatedCluster, GroupedOutage, Phase};
use crate::fleet::summary::shown_phase;

/// Default least number of sites of one group that make an outage.
pub(crate) const DEFAULT_MIN_CLUSTERS: usize = 3;
/// Default longest time between two sites of one outage going dark.
pub(crate) const DEFAULT_WINDOW: Duration = Duration::from_secs(10 * 60);
/// What `--outage-group-by` names for `spec.region`.
pub(crate) const REGION: &str = "region";

/// What sites are grouped by.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum GroupBy {
    /// `spec.region` (the default).
    #[default]
    Region,
    /// The value of this label of the FederatedCluster.
    Label(String),
}

impl GroupBy {
    /// Parses `--outage-group-by`: `region`, or a label key
    /// (`[prefix/]name`, as Kubernetes label keys are).
    pub fn parse(s: &str) -> Result<GroupBy, String> {
        if s == REGION {
            return Ok(GroupBy::Region);
        }
        label_key_problem(s).map_or_else(
            || Ok(GroupBy::Label(s.to_owned())),
            |p| Err(format!("{s:?} is neither `region` nor a label key: {p}")),
        )
    }

    /// `region`, or the label key: what `groupBy` says in an outage.
    pub fn key(&self) -> &str {
        match self {
            GroupBy::Region => REGION,
            GroupBy::Label(key) => key,
        }
    }

    /// The group of `site`; None (never grouped) when it has no value.
    pub fn value_of<'a>(&self, site: &'a FederatedCluster) -> Option<&'a str> {
        let value = match self {
            GroupBy::Region => site.spec.region.as_deref(),
            GroupBy::Label(key) => site
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(key))
                .map(String::as_str),
        };
        value.filter(|v| !v.is_empty())
    }
}

impl std::fmt::Display for GroupBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key())
    }
}

/// Why `key` is not a Kubernetes label key, if it is not.
fn label_key_problem(key: &str) -> Option<&'static str> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let name_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() || name.len() > 63 {
        return Some("the name part must be 1 to 63 characters");
    }
    if !name.chars().all(name_char)
        || !name.starts_with(|c: char| c.is_ascii_alphanumeric())
        || !name.ends_with(|c: char| c.is_ascii_alphanumeric())
    {
        return Some(
            "the name part must be alphanumeric characters, '-', '_' or '.', starting and ending alphanumeric",
        );
    }
    if let Some(prefix) = prefix {
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && l.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        };
        if prefix.is_empty() || prefix.len() > 253 || !prefix.split('.').all(label_ok) {
            return Some("the prefix must be a DNS subdomain (lowercase, e.g. example.com)");
        }
    }
    None
}

/// Grouped outage parameters (`--outage-group-by`,
/// `--outage-min-clusters`, `--outage-window`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutageConfig {
    /// What sites are grouped by.
    pub group_by: GroupBy,
    /// Least number of sites of one group in an outage (values below 1
    /// behave as 1).
    pub min_clusters: usize,
    /// Longest time between two sites going dark for them to be chained.
    pub window: Duration,
}

impl Default for OutageConfig {
    fn default() -> Self {
        Self {
            group_by: GroupBy::Region,
            min_clusters: DEFAULT_MIN_CLUSTERS,
            window: DEFAULT_WINDOW,
        }
    }
}

/// A site that counts toward an outage: its name and when it went dark.
struct Dark<'a> {
    name: &'a str,
    /// The cluster it reads: outages count clusters, not sites.
    member: crate::fleet::correlation::MemberKey<'a>,
    last_heard: Timestamp,
}

/// Whether `site` counts toward an outage at `now` (see the module
/// documentation), and when it went dark; `hub_judging` as for
/// [`shown_phase`].
fn dark(site: &FederatedCluster, hub_judging: Option<bool>, now: Timestamp) -> Option<Timestamp> {
    if site.in_maintenance(now) {
        return None;
    }
    match shown_phase(site, hub_judging, now).phase {
        // A heartbeat the hub never measured running ahead of its clock
        // counts as heard now.
        Phase::Stale | Phase::Unreachable => site
            .status
            .as_ref()?
            .heartbeat_on_hub_clock()
            .map(|heard| heard.min(now)),
        // Expected to be silent (its schedule): not an outage.
        Phase::Connected | Phase::Pending | Phase::Sleeping => None,
    }
}

/// The grouped outages at `now`, sorted by group value. An outage of a
/// group that `previous` already holds keeps its id; a new one gets an id
/// derived from its group and start. All of them: the hub keeps the
/// largest [`crate::api::MAX_OUTAGES`] (`fleet::summary::set_outages`).
pub fn grouped_outages<S: std::borrow::Borrow<FederatedCluster>>(
    sites: &[S],
    previous: &[GroupedOutage],
    hub_judging: Option<bool>,
    now: Timestamp,
    cfg: &OutageConfig,
) -> Vec<GroupedOutage> {
    let mut groups: BTreeMap<&str, Vec<Dark<'_>>> = BTreeMap::new();
    for site in sites.iter().map(S::borrow) {
        let Some(value) = cfg.group_by.value_of(site) else {
            continue;
        };
        if let Some(last_heard) = dark(site, hub_judging, now) {
            groups.entry(value).or_default().push(Dark {
                name: site.site_name(),
                member: crate::fleet::correlation::member_key(site),
                last_heard,
            });
        }
    }
    let min = cfg.min_clusters.max(1);
    // Distinct member clusters, not sites: sites reading one member are one.
    let clusters =
        |ds: &[&Dark<'_>]| crate::fleet::correlation::distinct_members(ds.iter().map(|d| d.member));
    let window = SignedDuration::try_from(cfg.window).unwrap_or(SignedDuration::MAX);
    groups
        .into_iter()
        .filter_map(|(value, mut dark)| {
            let group_by = cfg.group_by.key();
            let before = previous
                .iter()
                .find(|p| p.group_by == group_by && p.value == value);
            if dark.len() < min && before.is_none() {
                return None;
            }
            dark.sort_by(|a, b| (a.last_heard, a.name).cmp(&(b.last_heard, b.name)));
            let mut members: Vec<&Dark<'_>> = Vec::new();
            let mut chain: Vec<&Dark<'_>> = Vec::new();
            for d in &dark {
                if chain
                    .last()
                    .is_some_and(|prev| d.last_heard.duration_since(prev.last_heard) > window)
                {
                    if clusters(&chain) >= min {
                        members.append(&mut chain);
                    }
                    chain.clear();
                }
                chain.push(d);
            }
            if clusters(&chain) >= min {
                members.append(&mut chain);
            }
            // An outage keeps each of its sites until that site is back:
            // one coming back does not release the others (their pages are
            // held back while the outage lasts), however few stay dark.
            if let Some(before) = before {
                // Sets, not lists, to look names up in: at 100,000 dark
                // sites a lookup through each list took tens of seconds.
                let named: HashSet<&str> = before.clusters.iter().map(String::as_str).collect();
                let mut kept: HashSet<&str> = members.iter().map(|m| m.name).collect();
                for d in &dark {
                    if named.contains(d.name) && kept.insert(d.name) {
                        members.push(d);
                    }
                }
                members.sort_by(|a, b| (a.last_heard, a.name).cmp(&(b.last_heard, b.name)));
            }
            let first = members.first()?;
            let (since, started_by) = (first.last_heard, first.name.to_owned());
            let mut clusters: Vec<String> = members.iter().map(|d| d.name.to_owned()).collect();
            clusters.sort_unstable();
            let id = before.map_or_else(|| outage_id(group_by, value, since), |p| p.id.clone());
            Some(GroupedOutage {
                id,
                group_by: group_by.to_owned(),
                value: value.to_owned(),
                clusters_total: i64::try_from(clusters.len()).unwrap_or(i64::MAX),
                clusters,
                since: Time(since),
                started_by: Some(started_by),
                common_factors: Vec::new(),
            })
        })
        .collect()
}

/// `go-` and 8 hex digits of an FNV-1a hash of the group and when the
/// outage began: deterministic, and different for each new occurrence.
pub(crate) fn outage_id(group_by: &str, value: &str, since: Timestamp) -> String {
    let nanos = since.as_nanosecond().to_le_bytes();
    let bytes = group_by
        .bytes()
        .chain([0])
        .chain(value.bytes())
        .chain([0])
        .chain(nanos);
    format!("go-{:08x}", crate::fleet::correlation::fnv1a(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::correlation::is_incident_id;
    use crate::fleet::fixtures::fixture_now;

    fn eu(name: &str) -> FederatedCluster {
        FederatedCluster::test(name).with_region("eu-west")
    }

    /// Unreachable, last heard `secs` ago (I = 30 s).
    fn dark_since(site: FederatedCluster, secs: i64) -> FederatedCluster {
        site.unreachable().heartbeat_ago(secs)
    }

    fn ids_and_members(out: &[GroupedOutage]) -> Vec<(String, Vec<String>)> {
        out.iter()
            .map(|o| (o.value.clone(), o.clusters.clone()))
            .collect()
    }

    #[test]
    fn three_sites_of_one_region_going_dark_are_one_outage() {
        let sites = [
            dark_since(eu("a"), 700),
            dark_since(eu("b"), 650),
            eu("c").stale().heartbeat_ago(600),
            eu("d").connected(),
            dark_since(FederatedCluster::test("x").with_region("us-east"), 650),
        ];
        let out = grouped_outages(&sites, &[], None, fixture_now(), &OutageConfig::default());
        assert_eq!(
            ids_and_members(&out),
            [(
                "eu-west".to_owned(),
                vec!["a".into(), "b".into(), "c".into()]
            )]
        );
        let o = &out[0];
        assert!(is_incident_id(&o.id, "go"), "{}", o.id);
        assert_eq!(o.group_by, "region");
        assert_eq!(o.since.0, fixture_now() - SignedDuration::from_secs(700));
        assert_eq!(o.started_by.as_deref(), Some("a"), "the first to go dark");
        // Two are not enough, unless the hub is told so.
        let two = &sites[..2];
        assert!(
            grouped_outages(two, &[], None, fixture_now(), &OutageConfig::default()).is_empty()
        );
        let cfg = OutageConfig {
            min_clusters: 2,
            ..OutageConfig::default()
        };
        assert_eq!(
            grouped_outages(two, &[], None, fixture_now(), &cfg).len(),
            1
        );
    }

    #[test]
    fn stores_of_one_region_that_all_fail_to_wake_are_one_outage() {
        // They closed at 22:00 within minutes of each other and a power
        // cut kept them dark past 06:00: each is late to wake (Unreachable
        // by its heartbeat's age, `Connected` reason LateToWake), and
        // together they are one outage, so Alertmanager holds back their
        // ClusterLateToWake pages as it does dark sites' pages.
        let night = 8 * 3600;
        let store = |name: &str, secs: i64| eu(name).late_to_wake().heartbeat_ago(night + secs);
        let sites = [
            store("store-1", 240),
            store("store-2", 120),
            store("store-3", 0),
            eu("store-4").connected(),
        ];
        assert!(
            sites[..3]
                .iter()
                .all(crate::fleet::hub_status::is_late_to_wake)
        );
        let out = grouped_outages(&sites, &[], None, fixture_now(), &OutageConfig::default());
        assert_eq!(
            ids_and_members(&out),
            [(
                "eu-west".to_owned(),
                vec!["store-1".into(), "store-2".into(), "store-3".into()]
            )]
        );
        assert_eq!(out[0].started_by.as_deref(), Some("store-1"));
        // Asleep as their schedule expects: no outage.
        let asleep: Vec<FederatedCluster> = ["store-1", "store-2", "store-3"]
            .iter()
            .map(|n| eu(n).sleeping().heartbeat_ago(night))
            .collect();
        assert!(
            grouped_outages(&asleep, &[], None, fixture_now(), &OutageConfig::default()).is_empty()
        );
    }

    #[test]
    fn sites_reading_one_cluster_are_one_member_of_an_outage() {
        const ONE: &str = "6f1c2a8e-0b7d-4f3e-9a51-2c8d7e6f1b20";
        let reading = |mut site: FederatedCluster| {
            site.status.get_or_insert_with(Default::default).member = Some(ONE.to_owned());
            site
        };
        let sites = [
            reading(dark_since(eu("a"), 700)),
            reading(dark_since(eu("b"), 650)),
            reading(dark_since(eu("c"), 600)),
        ];
        assert!(
            grouped_outages(&sites, &[], None, fixture_now(), &OutageConfig::default()).is_empty(),
            "three sites, one cluster"
        );
        let mut more = sites.to_vec();
        more.push(dark_since(eu("d"), 640));
        more.push(dark_since(eu("e"), 620));
        let out = grouped_outages(&more, &[], None, fixture_now(), &OutageConfig::default());
        assert_eq!(out.len(), 1, "three clusters");
        assert_eq!(out[0].clusters, ["a", "b", "c", "d", "e"]);
    }

    #[test]
    fn maintenance_pending_and_far_apart_sites_do_not_count() {
        let now = fixture_now();
        let mut cordoned = dark_since(eu("c"), 650);
        cordoned.spec.maintenance = Some(crate::api::MaintenanceWindow {
            since: None,
            until: Time(now + SignedDuration::from_secs(3600)),
            reason: None,
        });
        let sites = [
            dark_since(eu("a"), 700),
            dark_since(eu("b"), 650),
            cordoned.clone(),
            eu("p").pending(),
            // Dark for a day: its own problem, not this outage.
            dark_since(eu("old"), 86_400),
        ];
        assert!(grouped_outages(&sites, &[], None, now, &OutageConfig::default()).is_empty());
        // The window closes by itself: now it counts.
        let later = now + SignedDuration::from_secs(3601);
        let out = grouped_outages(&sites, &[], None, later, &OutageConfig::default());
        assert_eq!(out[0].clusters, ["a", "b", "c"]);
        // A rolling failure chains: each within 10 minutes of the one before.
        let rolling = [
            dark_since(eu("r1"), 2000),
            dark_since(eu("r2"), 1500),
            dark_since(eu("r3"), 1000),
            dark_since(eu("r4"), 500),
        ];
        let out = grouped_outages(&rolling, &[], None, now, &OutageConfig::default());
        assert_eq!(out[0].clusters.len(), 4);
    }

    #[test]
    fn an_unmeasured_heartbeat_from_the_future_counts_as_heard_now_and_quarantine_keeps_a_site_in()
    {
        let now = fixture_now();
        // A dark site whose last heartbeat claims to come from the future
        // (its clock ahead, never measured, or a lie) cannot start the
        // outage "later than now" nor move its start.
        let mut liar = dark_since(eu("liar"), 600);
        liar.status.as_mut().unwrap().last_heartbeat_time =
            Some(crate::fleet::fixtures::ago(-86_400));
        liar.spec.quarantine = Some(crate::api::Quarantine {
            since: None,
            reason: None,
        });
        let sites = [dark_since(eu("a"), 700), dark_since(eu("b"), 650), liar];
        let cfg = OutageConfig {
            window: Duration::from_secs(86_400),
            ..OutageConfig::default()
        };
        let out = grouped_outages(&sites, &[], None, now, &cfg);
        // A quarantined site still counts: its silence is the hub's own
        // observation, not something it reported.
        assert_eq!(out[0].clusters, ["a", "b", "liar"]);
        assert!(out.iter().all(|o| o.since.0 <= now));
        assert_eq!(out[0].started_by.as_deref(), Some("a"));
    }

    #[test]
    fn the_id_lasts_while_the_outage_does_and_a_recurrence_is_new() {
        let cfg = OutageConfig::default();
        let abc = [
            dark_since(eu("a"), 700),
            dark_since(eu("b"), 650),
            dark_since(eu("c"), 600),
        ];
        let first = grouped_outages(&abc, &[], None, fixture_now(), &cfg);
        let mut more = abc.to_vec();
        more.push(dark_since(eu("d"), 100));
        let later = fixture_now() + SignedDuration::from_secs(60);
        let second = grouped_outages(&more, &first, None, later, &cfg);
        assert_eq!(second[0].id, first[0].id);
        assert_eq!(second[0].clusters, ["a", "b", "c", "d"]);
        // b and c come back: a is still dark and stays in the outage (its
        // page stays held back), under the same id.
        let partly = grouped_outages(
            &[abc[0].clone(), eu("b").connected(), eu("c").connected()],
            &second,
            None,
            later,
            &cfg,
        );
        assert_eq!(
            ids_and_members(&partly),
            [("eu-west".into(), vec!["a".into()])]
        );
        assert_eq!(partly[0].id, first[0].id);
        // A site that goes dark now, far from the outage's, does not join it.
        let lone = grouped_outages(
            &[
                abc[0].clone(),
                eu("b").connected(),
                dark_since(eu("late"), 10),
            ],
            &partly,
            None,
            later,
            &cfg,
        );
        assert_eq!(
            ids_and_members(&lone),
            [("eu-west".into(), vec!["a".into()])]
        );
        // a comes back too: over.
        let ended = grouped_outages(
            &[
                eu("a").connected(),
                eu("b").connected(),
                eu("c").connected(),
            ],
            &partly,
            None,
            later,
            &cfg,
        );
        assert!(ended.is_empty());
        // The region goes dark again later: a new outage, a new id.
        let again = [
            dark_since(eu("a"), 100),
            dark_since(eu("b"), 90),
            dark_since(eu("c"), 80),
        ];
        let third = grouped_outages(&again, &ended, None, later, &cfg);
        assert_ne!(third[0].id, first[0].id);
    }

    #[test]
    fn sites_are_grouped_by_a_label_when_told() {
        let store = |name: &str, group: &str| {
            let mut s = dark_since(FederatedCluster::test(name), 600);
            s.metadata.labels = Some(
                [("example.com/store-group".to_owned(), group.to_owned())]
                    .into_iter()
                    .collect(),
            );
            s
        };
        let sites = [
            store("s1", "north"),
            store("s2", "north"),
            store("s3", "north"),
            store("s4", "south"),
        ];
        let cfg = OutageConfig {
            group_by: GroupBy::parse("example.com/store-group").unwrap(),
            ..OutageConfig::default()
        };
        let out = grouped_outages(&sites, &[], None, fixture_now(), &cfg);
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].group_by.as_str(), out[0].value.as_str()),
            ("example.com/store-group", "north")
        );
        // No region set: nothing grouped by region.
        assert!(
            grouped_outages(&sites, &[], None, fixture_now(), &OutageConfig::default()).is_empty()
        );
    }

    #[test]
    fn group_by_takes_region_or_a_label_key() {
        assert_eq!(GroupBy::parse("region"), Ok(GroupBy::Region));
        assert_eq!(
            GroupBy::parse("topology.kubernetes.io/zone"),
            Ok(GroupBy::Label("topology.kubernetes.io/zone".into()))
        );
        assert_eq!(GroupBy::parse("tier").unwrap().key(), "tier");
        for bad in ["", "-x", "a b", "Example.com/x", "a/", "/x", "x/y/z"] {
            assert!(GroupBy::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn every_outage_is_found_and_the_summary_keeps_the_largest() {
        use crate::api::MAX_OUTAGES;
        let mut sites = Vec::new();
        for r in 0..(MAX_OUTAGES + 5) {
            for s in 0..3 {
                sites.push(dark_since(
                    FederatedCluster::test(&format!("r{r}-s{s}")).with_region(&format!("r{r:03}")),
                    600,
                ));
            }
        }
        // One more site in the last group: the largest outage.
        let last = format!("r{:03}", MAX_OUTAGES + 4);
        sites.push(dark_since(
            FederatedCluster::test("r-last-s3").with_region(&last),
            600,
        ));
        let out = grouped_outages(&sites, &[], None, fixture_now(), &OutageConfig::default());
        assert_eq!(out.len(), MAX_OUTAGES + 5, "every outage is found");
        let mut summary = crate::api::FederationStatusStatus::default();
        crate::fleet::summary::set_outages(&mut summary, out);
        assert_eq!(summary.outages.len(), MAX_OUTAGES);
        assert_eq!(
            summary.outages_total,
            i64::try_from(MAX_OUTAGES + 5).unwrap()
        );
        assert_eq!(summary.outages[0].value, last, "the largest first");
        assert_eq!(summary.outages[0].clusters_total, 4);
    }
}
