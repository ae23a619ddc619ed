//! Which sites a view shows: the filters of `kubectl fleet status` and of
//! the hub's REST `/clusters` (tier, environment, region, phase, names).

use crate::api::{Environment, FederatedCluster, Phase, Tier};
use crate::fleet::summary::effective_phase;

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
    /// Phase to keep; a site without a phase counts as `Pending`.
    pub phase: Option<Phase>,
}

impl SiteFilter {
    /// Whether `site` passes every filter.
    pub fn matches(&self, site: &FederatedCluster) -> bool {
        (self.names.is_empty() || self.names.iter().any(|n| n == site.site_name()))
            && self.tier.is_none_or(|t| site.spec.tier == t)
            && self.environment.is_none_or(|e| site.spec.environment == e)
            && self
                .region
                .as_deref()
                .is_none_or(|r| site.spec.region.as_deref() == Some(r))
            && self.phase.is_none_or(|p| effective_phase(site) == p)
    }

    /// The sites that pass, keeping their (name-sorted) order.
    pub fn apply(&self, sites: Vec<FederatedCluster>) -> Vec<FederatedCluster> {
        sites.into_iter().filter(|s| self.matches(s)).collect()
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
        let names = |f: &SiteFilter| {
            f.apply(sites.clone())
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
}
