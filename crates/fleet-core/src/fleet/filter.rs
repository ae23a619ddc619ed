//! Which sites a view shows: the filters of `kubectl fleet status` and of
//! the hub's REST `/clusters` (tier, environment, region, phase, names,
//! edge version, the sites of an incident).
//! The phase is the one the views show, so a filter never lists a site
//! under a phase its row contradicts.

use std::collections::BTreeSet;

use jiff::Timestamp;

use crate::api::{Environment, FederatedCluster, Phase, Tier};
use crate::fleet::summary::shown_phase;

/// The site filters (everything but a label selector, which the API server
/// applies).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SiteFilter {
    /// Site names; empty means all.
    pub names: Vec<String>,
    /// Tier to keep.
    pub tier: Option<Tier>,
    /// Environment to keep.
    pub environment: Option<Environment>,
    /// Region to keep.
    pub region: Option<String>,
    /// Phase to keep, as the views show it (`fleet::summary::shown_phase`:
    /// a site without a phase counts as `Pending`, one whose heartbeat is
    /// past its thresholds as the phase its age implies).
    pub phase: Option<Phase>,
    /// Edge version to keep (`status.observedVersion`; a leading `v` is
    /// ignored, see [`crate::fleet::versions::runs_version`]).
    pub version: Option<String>,
    /// Only these sites (the sites of an incident: `status --incident ID`);
    /// None means all.
    pub within: Option<BTreeSet<String>>,
}

impl SiteFilter {
    /// Whether `site` passes every filter at `now`, `hub_judging` being
    /// whether a hub is judging the fleet (None: unknown).
    pub fn matches(
        &self,
        site: &FederatedCluster,
        hub_judging: Option<bool>,
        now: Timestamp,
    ) -> bool {
        (self.names.is_empty() || self.names.iter().any(|n| n == site.site_name()))
            && self.tier.is_none_or(|t| site.spec.tier == t)
            && self.environment.is_none_or(|e| site.spec.environment == e)
            && self
                .region
                .as_deref()
                .is_none_or(|r| site.spec.region.as_deref() == Some(r))
            && self
                .within
                .as_ref()
                .is_none_or(|w| w.contains(site.site_name()))
            && self
                .version
                .as_deref()
                .is_none_or(|v| crate::fleet::versions::runs_version(site, v))
            && self
                .phase
                .is_none_or(|p| shown_phase(site, hub_judging, now).phase == p)
    }

    /// The sites that pass, keeping their (name-sorted) order.
    pub fn apply(
        &self,
        sites: Vec<FederatedCluster>,
        hub_judging: Option<bool>,
        now: Timestamp,
    ) -> Vec<FederatedCluster> {
        sites
            .into_iter()
            .filter(|s| self.matches(s, hub_judging, now))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::FederatedClusterSpec;

    fn site(name: &str, tier: Tier, env: Environment, region: Option<&str>) -> FederatedCluster {
        FederatedCluster::new(
            name,
            FederatedClusterSpec {
                tier,
                environment: env,
                region: region.map(str::to_owned),
                ..Default::default()
            },
        )
    }

    #[test]
    fn filters_combine() {
        let sites = vec![
            site("a", Tier::Critical, Environment::Production, Some("eu")),
            site("b", Tier::Standard, Environment::Staging, Some("us")),
            site("c", Tier::Critical, Environment::Staging, None),
        ];
        let now = crate::fleet::fixtures::fixture_now();
        let names = |f: &SiteFilter| {
            f.apply(sites.clone(), Some(true), now)
                .iter()
                .map(|s| s.site_name().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&SiteFilter::default()), ["a", "b", "c"]);
        let by_tier = SiteFilter {
            tier: Some(Tier::Critical),
            ..Default::default()
        };
        assert_eq!(names(&by_tier), ["a", "c"]);
        let tier_env = SiteFilter {
            environment: Some(Environment::Staging),
            ..by_tier
        };
        assert_eq!(names(&tier_env), ["c"]);
        let region = SiteFilter {
            region: Some("us".into()),
            ..Default::default()
        };
        assert_eq!(names(&region), ["b"]);
        let named = SiteFilter {
            names: vec!["c".into(), "a".into()],
            ..Default::default()
        };
        assert_eq!(names(&named), ["a", "c"]);
        let pending = SiteFilter {
            phase: Some(Phase::Pending),
            ..Default::default()
        };
        assert_eq!(
            names(&pending),
            ["a", "b", "c"],
            "never heard from counts as Pending"
        );
    }

    #[test]
    fn version_and_incident_filters() {
        let now = crate::fleet::fixtures::fixture_now();
        let reporting = |name: &str, v: &str| {
            let mut s = FederatedCluster::test(name);
            s.status = Some(crate::api::FederatedClusterStatus {
                observed_version: Some(v.into()),
                ..Default::default()
            });
            s
        };
        let sites = vec![
            reporting("a", "0.2.0"),
            reporting("b", "0.1.0"),
            FederatedCluster::test("c"),
        ];
        let names = |f: &SiteFilter| {
            f.apply(sites.clone(), Some(true), now)
                .iter()
                .map(|s| s.site_name().to_owned())
                .collect::<Vec<_>>()
        };
        let v = SiteFilter {
            version: Some("v0.1.0".into()),
            ..Default::default()
        };
        assert_eq!(names(&v), ["b"]);
        let within = SiteFilter {
            within: Some(["c".to_owned(), "a".to_owned(), "gone".to_owned()].into()),
            ..Default::default()
        };
        assert_eq!(names(&within), ["a", "c"]);
        let none = SiteFilter {
            within: Some(BTreeSet::new()),
            ..Default::default()
        };
        assert!(names(&none).is_empty());
    }

    #[test]
    fn the_phase_filter_sees_the_phase_every_view_shows() {
        let now = crate::fleet::fixtures::fixture_now();
        // Left Connected by a hub that stopped; heard from 20 intervals ago.
        let dead = FederatedCluster::test("dead")
            .heartbeat_ago(600)
            .with_phase(Phase::Connected, 3600);
        let unreachable = SiteFilter {
            phase: Some(Phase::Unreachable),
            ..Default::default()
        };
        assert!(unreachable.matches(&dead, Some(false), now));
        assert!(unreachable.matches(&dead, Some(true), now));
        let connected = SiteFilter {
            phase: Some(Phase::Connected),
            ..Default::default()
        };
        assert!(!connected.matches(&dead, None, now));
    }
}
