//! One incident of the hub's `FederationStatus`, found by its id: a
//! cross-cluster correlation (`xc-`), a cascade (`cc-`) or a grouped
//! outage (`go-`), with the sites in it and which of their signals belong
//! to it. `kubectl fleet incidents ID`, `kubectl fleet status --incident
//! ID` and the REST API's `/incidents/{id}` all answer from here, so they
//! always name the same sites.
//!
//! The singleton names at most a few dozen sites per incident and a
//! hundred cascades (`fleet::summary::bound`); a reader holding the sites
//! names all of them with [`complete`], which runs the hub's own detection
//! with the parameters and at the time the singleton records.

use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

use crate::api::{
    Cascade, Correlation, FederatedCluster, FederationStatusStatus, GroupedOutage,
    IncidentDetection, Signal,
};
use crate::fleet::correlation::{
    CorrelationConfig, cascade_id, correlate, detect_cascades, is_incident_id,
};
use crate::fleet::outage::{GroupBy, OutageConfig, grouped_outages};

/// The incident detection parameters as `FederationStatus` records them.
pub fn detection_of(
    correlation: CorrelationConfig,
    cascade_lookback: Duration,
    outage: &OutageConfig,
) -> IncidentDetection {
    let secs = |d: Duration| i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
    let n = |n: usize| i64::try_from(n.max(1)).unwrap_or(i64::MAX);
    IncidentDetection {
        correlation_window_seconds: secs(correlation.window),
        correlation_min_clusters: n(correlation.threshold),
        cascade_lookback_seconds: secs(cascade_lookback),
        outage_group_by: outage.group_by.key().to_owned(),
        outage_min_clusters: n(outage.min_clusters),
        outage_window_seconds: secs(outage.window),
    }
}

/// The parameters [`detection_of`] recorded; None when they cannot be
/// read back (a grouping this version does not know).
fn detection_configs(d: &IncidentDetection) -> Option<(CorrelationConfig, Duration, OutageConfig)> {
    let secs = |s: i64| Duration::from_secs(u64::try_from(s).unwrap_or(0));
    let n = |n: i64| usize::try_from(n).unwrap_or(1).max(1);
    Some((
        CorrelationConfig {
            window: secs(d.correlation_window_seconds),
            threshold: n(d.correlation_min_clusters),
        },
        secs(d.cascade_lookback_seconds),
        OutageConfig {
            group_by: GroupBy::parse(&d.outage_group_by).ok()?,
            min_clusters: n(d.outage_min_clusters),
            window: secs(d.outage_window_seconds),
        },
    ))
}

/// Whether the singleton `fleet` names fewer sites or cascades than it
/// counts: its lists were cut to fit the object.
pub fn is_cut(fleet: &FederationStatusStatus) -> bool {
    fleet.correlations.iter().any(Correlation::is_cut)
        || fleet.outages.iter().any(GroupedOutage::is_cut)
        || fleet.cascade_count() > i64::try_from(fleet.cascades.len()).unwrap_or(i64::MAX)
}

/// Names every site of the incidents `fleet` cut, and every cascade, from
/// `sites` (the whole fleet): the hub's detection run again with the
/// parameters and at the time (`lastUpdated`, the hub's clock) the
/// singleton records, so the members are those the hub found, as the
/// sites read now. Incidents keep their ids; cascades the singleton did
/// not list follow those it did. Returns whether nothing is left cut
/// (false when written by a hub that did not record its parameters: the
/// views then say how many more there are).
pub fn complete<S: std::borrow::Borrow<FederatedCluster>>(
    fleet: &mut FederationStatusStatus,
    sites: &[S],
) -> bool {
    if !is_cut(fleet) {
        return true;
    }
    let (Some(d), Some(at)) = (fleet.detection.as_ref(), fleet.last_updated.as_ref()) else {
        return false;
    };
    let at = at.0;
    let Some((correlation, lookback, outage)) = detection_configs(d) else {
        return false;
    };
    let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    if fleet.correlations.iter().any(Correlation::is_cut) {
        let found = correlate(sites, &fleet.correlations, at, correlation);
        for c in fleet.correlations.iter_mut().filter(|c| c.is_cut()) {
            if let Some(f) = found.iter().find(|f| f.signal == c.signal) {
                c.clusters_total = count(f.clusters.len());
                c.clusters.clone_from(&f.clusters);
            }
        }
    }
    if fleet.outages.iter().any(GroupedOutage::is_cut) {
        let found = grouped_outages(sites, &fleet.outages, None, at, &outage);
        for o in fleet.outages.iter_mut().filter(|o| o.is_cut()) {
            if let Some(f) = found
                .iter()
                .find(|f| f.group_by == o.group_by && f.value == o.value)
            {
                o.clusters_total = count(f.clusters.len());
                o.clusters.clone_from(&f.clusters);
            }
        }
    }
    if fleet.cascade_count() > count(fleet.cascades.len()) {
        let listed: HashSet<String> = fleet.cascades.iter().map(Cascade::key).collect();
        let mut rest: Vec<Cascade> = detect_cascades(sites, at, lookback)
            .into_iter()
            .filter(|c| !listed.contains(&c.key()))
            .collect();
        crate::fleet::summary::cascade_rank(&mut rest);
        fleet.cascades.extend(rest);
        fleet.cascades_detected = count(fleet.cascades.len());
    }
    !is_cut(fleet)
}

/// The id prefixes and what each names.
pub(crate) const INCIDENT_PREFIXES: [(&str, &str); 3] = [
    ("xc", "a cross-cluster correlation"),
    ("cc", "a cascade"),
    ("go", "a grouped outage"),
];

/// Checks the shape of an incident id (`xc-`, `cc-` or `go-` and 8
/// lowercase hex digits) before anything is read.
pub fn parse_incident_id(s: &str) -> Result<String, String> {
    if INCIDENT_PREFIXES
        .iter()
        .any(|(prefix, _)| is_incident_id(s, prefix))
    {
        return Ok(s.to_owned());
    }
    Err(
        "not an incident id: use xc-XXXXXXXX (correlation), cc-XXXXXXXX (cascade) or go-XXXXXXXX (grouped outage), as `kubectl fleet incidents` lists them"
            .to_owned(),
    )
}

/// One incident, borrowed from the FederationStatus that holds it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Incident<'a> {
    /// Same signal type on several sites.
    Correlation(&'a Correlation),
    /// A failure walking from a lower environment into production.
    Cascade(&'a Cascade),
    /// Sites of one group that left Connected together.
    Outage(&'a GroupedOutage),
}

/// The id a cascade goes by: its own, or (written by a hub from before
/// cascades had ids) the one its identity hashes to.
pub fn cascade_id_of(c: &Cascade) -> String {
    if c.id.is_empty() {
        cascade_id(&c.key())
    } else {
        c.id.clone()
    }
}

/// The incident with `id` in `fleet`, if the hub still reports it.
pub fn find_incident<'a>(fleet: &'a FederationStatusStatus, id: &str) -> Option<Incident<'a>> {
    match id.get(..3) {
        Some("xc-") => fleet
            .correlations
            .iter()
            .find(|c| c.id == id)
            .map(Incident::Correlation),
        Some("cc-") => fleet
            .cascades
            .iter()
            .find(|c| cascade_id_of(c) == id)
            .map(Incident::Cascade),
        Some("go-") => fleet
            .outages
            .iter()
            .find(|o| o.id == id)
            .map(Incident::Outage),
        _ => None,
    }
}

impl Incident<'_> {
    /// `Correlation`, `Cascade` or `GroupedOutage`.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Incident::Correlation(_) => "Correlation",
            Incident::Cascade(_) => "Cascade",
            Incident::Outage(_) => "GroupedOutage",
        }
    }

    /// Its id.
    pub fn id(&self) -> String {
        match self {
            Incident::Correlation(c) => c.id.clone(),
            Incident::Cascade(c) => cascade_id_of(c),
            Incident::Outage(o) => o.id.clone(),
        }
    }

    /// Whether it names fewer sites than it has (the singleton cut its
    /// list: [`complete`] names them all).
    pub fn is_cut(&self) -> bool {
        match self {
            Incident::Correlation(c) => c.is_cut(),
            Incident::Cascade(_) => false,
            Incident::Outage(o) => o.is_cut(),
        }
    }

    /// The sites in it, sorted: a correlation's members, a cascade's
    /// source and target, an outage's sites.
    pub fn sites(&self) -> BTreeSet<String> {
        match self {
            Incident::Correlation(c) => c.clusters.iter().cloned().collect(),
            Incident::Cascade(c) => [c.source.clone(), c.target.clone()].into(),
            Incident::Outage(o) => o.clusters.iter().cloned().collect(),
        }
    }

    /// The site that started it, by the earliest evidence on the hub
    /// clock: a correlation's `startedBy`, a cascade's source, the first
    /// site of an outage to go dark. None when a hub that did not record
    /// it wrote the incident.
    pub(crate) fn started_by(&self) -> Option<&str> {
        match self {
            Incident::Correlation(c) => c.started_by.as_deref(),
            Incident::Cascade(c) => Some(&c.source),
            Incident::Outage(o) => o.started_by.as_deref(),
        }
    }

    /// When it started, on the hub clock: a correlation's `firstSeen`, a
    /// cascade's `sourceFirstSeen`, an outage's `since`.
    pub(crate) fn started_at(&self) -> jiff::Timestamp {
        match self {
            Incident::Correlation(c) => c.first_seen.0,
            Incident::Cascade(c) => c.source_first_seen.0,
            Incident::Outage(o) => o.since.0,
        }
    }

    /// Whether `signal`, reported by `site`, is one of the incident's
    /// member signals: the correlated signal type on a member site; the
    /// cascading signal type on the cascade's workload at its source or
    /// target. A grouped outage is about connectivity: it has none.
    pub(crate) fn has_member_signal(&self, site: &str, signal: &Signal) -> bool {
        match self {
            Incident::Correlation(c) => {
                signal.type_ == c.signal && c.clusters.iter().any(|n| n == site)
            }
            Incident::Cascade(c) => {
                signal.type_ == c.signal
                    && signal.workload == c.workload
                    && (site == c.source || site == c.target)
            }
            Incident::Outage(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Environment, Severity, SignalType, Tier, WorkloadRef};
    use crate::fleet::fixtures::ago;

    fn fleet() -> FederationStatusStatus {
        FederationStatusStatus {
            correlations: vec![Correlation {
                id: "xc-0000000a".into(),
                signal: SignalType::OomKilled,
                severity: Severity::Critical,
                original_severity: Severity::High,
                strictest_tier: None,
                clusters: vec!["c".into(), "a".into(), "b".into()],
                clusters_total: 3,
                first_seen: ago(60),
                last_seen: ago(5),
                started_by: Some("b".into()),
                common_factors: Vec::new(),
            }],
            cascades: vec![Cascade {
                id: String::new(),
                source: "stg".into(),
                target: "prod".into(),
                source_environment: Environment::Staging,
                target_environment: Environment::Production,
                source_tier: Tier::Standard,
                target_tier: Tier::Critical,
                signal: SignalType::CrashLoopBackOff,
                workload: WorkloadRef::new("Deployment", "web"),
                source_first_seen: ago(600),
                target_first_seen: ago(60),
                delta_seconds: 540,
                detected_time: None,
                common_factors: Vec::new(),
            }],
            outages: vec![GroupedOutage {
                id: "go-0000000b".into(),
                group_by: "region".into(),
                value: "eu-west-1".into(),
                clusters: vec!["e1".into(), "e2".into(), "e3".into()],
                clusters_total: 3,
                since: ago(120),
                started_by: None,
                common_factors: Vec::new(),
            }],
            ..Default::default()
        }
    }

    #[test]
    fn ids_are_checked_before_anything_is_read() {
        for ok in ["xc-0123abcd", "cc-00000000", "go-ffffffff"] {
            assert_eq!(parse_incident_id(ok).as_deref(), Ok(ok));
        }
        for bad in ["xc-0123ABCD", "zz-00000000", "xc-123", "", "xc-0123abcde"] {
            let e = parse_incident_id(bad).unwrap_err();
            assert!(e.contains("xc-XXXXXXXX"), "{bad}: {e}");
        }
    }

    #[test]
    fn each_kind_is_found_with_its_sites_and_member_signals() {
        let f = fleet();
        let xc = find_incident(&f, "xc-0000000a").unwrap();
        assert_eq!(xc.kind(), "Correlation");
        assert_eq!((xc.started_by(), xc.started_at()), (Some("b"), ago(60).0));
        assert_eq!(xc.sites().into_iter().collect::<Vec<_>>(), ["a", "b", "c"]);
        let oom = Signal::test(SignalType::OomKilled, "ns", "Deployment", "x");
        assert!(xc.has_member_signal("a", &oom));
        assert!(!xc.has_member_signal("z", &oom));
        let crash = Signal::test(SignalType::CrashLoopBackOff, "ns", "Deployment", "web");
        assert!(!xc.has_member_signal("a", &crash));

        // A cascade without a stored id goes by the id of its identity.
        let id = cascade_id(&f.cascades[0].key());
        let cc = find_incident(&f, &id).unwrap();
        assert_eq!(cc.id(), id);
        assert_eq!(cc.sites().into_iter().collect::<Vec<_>>(), ["prod", "stg"]);
        assert!(cc.has_member_signal("prod", &crash));
        let other_workload = Signal::test(SignalType::CrashLoopBackOff, "ns", "Deployment", "api");
        assert!(!cc.has_member_signal("prod", &other_workload));

        assert_eq!(
            (cc.started_by(), cc.started_at()),
            (Some("stg"), ago(600).0)
        );
        let go = find_incident(&f, "go-0000000b").unwrap();
        assert_eq!(go.kind(), "GroupedOutage");
        assert_eq!(
            go.started_by(),
            None,
            "written by a hub that did not record it"
        );
        assert_eq!(go.sites().len(), 3);
        assert!(!go.has_member_signal("e1", &oom));

        assert_eq!(find_incident(&f, "xc-ffffffff"), None);
        assert_eq!(
            find_incident(&f, "go-0000000a"),
            None,
            "prefix decides the kind"
        );
    }

    /// The hub's summary of 150 production sites a staging failure
    /// reached, cut as the hub writes it, named whole again from the sites.
    #[test]
    fn a_cut_summary_is_completed_from_the_sites() {
        use crate::api::{MAX_CASCADES, MAX_INCIDENT_CLUSTERS};
        use crate::fleet::fixtures::fixture_now;
        use crate::fleet::summary::{bound, set_outages, summarize};
        let crash = |first_ago| {
            Signal::test(SignalType::CrashLoopBackOff, "shop", "Deployment", "web")
                .seen(first_ago, 5)
        };
        let mut sites = vec![
            FederatedCluster::test("stg")
                .with_environment(Environment::Staging)
                .connected()
                .with_signal(crash(7200)),
        ];
        sites.extend((0..150).map(|i| {
            FederatedCluster::test(&format!("p{i:03}"))
                .connected()
                .with_signal(crash(600))
        }));
        let now = fixture_now();
        let cfg = (
            CorrelationConfig::default(),
            crate::fleet::correlation::DEFAULT_LOOKBACK,
            OutageConfig::default(),
        );
        let mut cascades = detect_cascades(&sites, now, cfg.1);
        for c in &mut cascades {
            c.detected_time = Some(crate::fleet::fixtures::ago(0));
        }
        let mut full = summarize(&sites, correlate(&sites, &[], now, cfg.0), cascades, now);
        set_outages(&mut full, Vec::new());
        full.detection = Some(detection_of(cfg.0, cfg.1, &cfg.2));
        let mut written = bound(&full, &sites);
        assert!(is_cut(&written));
        assert_eq!(
            written.correlations[0].clusters.len(),
            MAX_INCIDENT_CLUSTERS
        );
        assert!(written.cascades.len() <= MAX_CASCADES);
        let unlisted = full.cascades.last().unwrap().id.clone();
        assert!(find_incident(&written, &unlisted).is_none());
        let listed: Vec<String> = written.cascades.iter().map(|c| c.id.clone()).collect();

        assert!(complete(&mut written, &sites));
        assert!(!is_cut(&written));
        assert_eq!(
            written.correlations[0].clusters,
            full.correlations[0].clusters
        );
        assert_eq!(written.correlations[0].id, full.correlations[0].id);
        assert_eq!(written.cascades.len(), 150);
        assert_eq!(written.cascades_detected, 150);
        let ids: Vec<&str> = written.cascades.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids[..listed.len()], listed, "those the hub listed first");
        assert!(find_incident(&written, &unlisted).is_some());

        // Written by a hub that did not record its parameters: left as it is.
        let mut old = bound(&full, &sites);
        old.detection = None;
        let before = old.clone();
        assert!(!complete(&mut old, &sites));
        assert_eq!(old, before);
    }

    #[test]
    fn every_kind_of_incident_names_its_sites() {
        use crate::api::{FederatedCluster, FederationStatusStatus, GroupedOutage, Signal};
        use crate::fleet::correlation::{
            CorrelationConfig, DEFAULT_LOOKBACK, correlate, detect_cascades,
        };
        use crate::fleet::fixtures::fixture_now;
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
        let crash = |first_ago| {
            Signal::test(SignalType::CrashLoopBackOff, "shop", "Deployment", "web")
                .seen(first_ago, 60)
        };
        let site = |name: &str, env, tier, first_ago| {
            FederatedCluster::test(name)
                .with_environment(env)
                .with_tier(tier)
                .connected()
                .with_signal(crash(first_ago))
        };
        // Staging first, then production: a cascade into each.
        let sites = [
            site("stg", Environment::Staging, Tier::NonCritical, 3600),
            site("p-b", Environment::Production, Tier::Critical, 600),
            site("p-a", Environment::Production, Tier::Standard, 600),
        ];
        let now = fixture_now();
        let correlations = correlate(&sites, &[], now, CorrelationConfig::default());
        assert_eq!(correlations[0].strictest_tier, Some(Tier::Critical));
        let summary = FederationStatusStatus {
            cascades: detect_cascades(&sites, now, DEFAULT_LOOKBACK),
            correlations,
            outages: vec![GroupedOutage {
                id: "go-0000abcd".into(),
                group_by: "region".into(),
                value: "eu".into(),
                clusters: vec!["z".into(), "y".into()],
                clusters_total: 2,
                since: Time(now),
                started_by: None,
                common_factors: Vec::new(),
            }],
            ..Default::default()
        };
        let sites_of = |id: &str| {
            find_incident(&summary, id).map(|i| i.sites().into_iter().collect::<Vec<_>>())
        };
        let xc = summary.correlations[0].id.clone();
        assert_eq!(sites_of(&xc).unwrap(), ["p-a", "p-b", "stg"]);
        let cascade = summary.cascades.iter().find(|c| c.target == "p-a").unwrap();
        assert_eq!(sites_of(&cascade.id).unwrap(), ["p-a", "stg"]);
        assert_eq!(sites_of("go-0000abcd").unwrap(), ["y", "z"]);
        assert_eq!(sites_of("go-0000abce"), None);
        assert_eq!(sites_of("site-a"), None);
    }
}
