//! One incident of the hub's `FederationStatus`, found by its id: a
//! cross-cluster correlation (`xc-`), a cascade (`cc-`) or a grouped
//! outage (`go-`), with the sites in it and which of their signals belong
//! to it. `kubectl fleet incidents ID`, `kubectl fleet status --incident
//! ID` and the REST API's `/incidents/{id}` all answer from here, so they
//! always name the same sites.

use std::collections::BTreeSet;

use crate::api::{Cascade, Correlation, FederationStatusStatus, GroupedOutage, Signal};
use crate::fleet::correlation::{cascade_id, is_incident_id};

/// The id prefixes and what each names.
pub const INCIDENT_PREFIXES: [(&str, &str); 3] = [
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
    pub fn kind(&self) -> &'static str {
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

    /// The sites in it, sorted: a correlation's members, a cascade's
    /// source and target, an outage's sites.
    pub fn sites(&self) -> BTreeSet<String> {
        match self {
            Incident::Correlation(c) => c.clusters.iter().cloned().collect(),
            Incident::Cascade(c) => [c.source.clone(), c.target.clone()].into(),
            Incident::Outage(o) => o.clusters.iter().cloned().collect(),
        }
    }

    /// Whether `signal`, reported by `site`, is one of the incident's
    /// member signals: the correlated signal type on a member site; the
    /// cascading signal type on the cascade's workload at its source or
    /// target. A grouped outage is about connectivity: it has none.
    pub fn has_member_signal(&self, site: &str, signal: &Signal) -> bool {
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
    use crate::api::fixtures::ago;
    use crate::api::{Environment, Severity, SignalType, Tier, WorkloadRef};

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
            }],
            outages: vec![GroupedOutage {
                id: "go-0000000b".into(),
                group_by: "region".into(),
                value: "eu-west-1".into(),
                clusters: vec!["e1".into(), "e2".into(), "e3".into()],
                clusters_total: 3,
                since: ago(120),
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

        let go = find_incident(&f, "go-0000000b").unwrap();
        assert_eq!(go.kind(), "GroupedOutage");
        assert_eq!(go.sites().len(), 3);
        assert!(!go.has_member_signal("e1", &oom));

        assert_eq!(find_incident(&f, "xc-ffffffff"), None);
        assert_eq!(
            find_incident(&f, "go-0000000a"),
            None,
            "prefix decides the kind"
        );
    }
}
