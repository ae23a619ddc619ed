//! What an incident's sites have in common (docs/operations.md#what-an-incidents-sites-have-in-common):
//! the attributes most of its sites share and the other sites mostly do
//! not — "38 of 40 affected run edge 0.1.0; 6% of the other sites do".
//!
//! **Attributes** of a site: its edge version (`status.observedVersion`),
//! Kubernetes version (`status.kubernetesVersion`), each GPU resource it
//! has (`status.capacity.gpusByVendor` with a non-zero total), its region
//! and environment (`spec`), and each of its labels (except the
//! `federation.kubectl-fleet.dev/` ones the product sets itself).
//!
//! **Who is compared.** The population is every site the hub has heard
//! from (a heartbeat); a site never heard from reports nothing to share.
//! The affected sites are the incident's sites in it, counted by distinct
//! member cluster as incidents are
//! ([`crate::fleet::correlation::MemberKey`]: sites whose edges read one
//! cluster count once, and share a value when any of them reports it); the
//! other sites (unaffected) are the rest of the population, counted by
//! site.
//!
//! **The rule.** With `A` affected member clusters (at least
//! [`MIN_AFFECTED`]) of which `a` share a value, and `U` other sites (at
//! least one) of which `u` do, the value is named when `a/A` is at least
//! [`MIN_SHARE_PERCENT`] % and `u/U` is at most half of `a/A`. At most
//! [`MAX_COMMON_FACTORS`], the strongest first: the largest difference
//! `a/A − u/U`, then the most affected, then attribute (edge version,
//! Kubernetes version, GPU, region, environment, label), key and value. A
//! grouped outage's own grouping (its region, or its label) is never named:
//! it is what made it one outage.
//!
//! **Cost.** [`Population::of`] takes one pass over the fleet, counting
//! each attribute value; each incident then costs a pass over its own
//! sites (the other sites' count is the fleet's minus the affected), so the
//! hub's summary stays linear in the fleet and its incidents' sizes.
//!
//! Values are site-controlled text: stored without control or format
//! characters and cut to [`MAX_FACTOR_VALUE_CHARS`]; the views still print
//! them through `render::safe`.

use std::borrow::Borrow;
use std::collections::{BTreeSet, HashMap};

use crate::api::{
    CommonFactor, FederatedCluster, FederationStatusStatus, MAX_COMMON_FACTORS,
    MAX_FACTOR_KEY_CHARS, MAX_FACTOR_VALUE_CHARS,
};
use crate::fleet::bounds::{cut_to, printable};
use crate::fleet::correlation::{MemberKey, member_key};
use crate::fleet::outage::GroupBy;

/// Least share of the affected member clusters, in percent, that must
/// share a value for it to be named.
pub const MIN_SHARE_PERCENT: u64 = 80;
/// Least number of affected member clusters for anything to be "in
/// common".
pub const MIN_AFFECTED: usize = 2;
/// Label keys under this prefix are the product's own (never named).
const OWN_LABEL_PREFIX: &str = "federation.kubectl-fleet.dev/";

/// The kind of an attribute, in the order ties are broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Kind {
    EdgeVersion,
    KubernetesVersion,
    GpuVendor,
    Region,
    Environment,
    Label,
}

impl Kind {
    /// The `attribute` of a [`CommonFactor`].
    fn name(self) -> &'static str {
        match self {
            Kind::EdgeVersion => "edgeVersion",
            Kind::KubernetesVersion => "kubernetesVersion",
            Kind::GpuVendor => "gpuVendor",
            Kind::Region => "region",
            Kind::Environment => "environment",
            Kind::Label => "label",
        }
    }
}

/// One attribute value of a site (`key` is the label key, else empty).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Attr<'a> {
    kind: Kind,
    key: &'a str,
    value: &'a str,
}

/// Calls `f` with each attribute value of `site` (each at most once).
fn attributes<'a>(site: &'a FederatedCluster, mut f: impl FnMut(Attr<'a>)) {
    let mut one = |kind, key, value: &'a str| {
        if !value.is_empty() {
            f(Attr { kind, key, value });
        }
    };
    if let Some(status) = site.status.as_ref() {
        if let Some(v) = status.observed_version.as_deref() {
            one(Kind::EdgeVersion, "", v);
        }
        if let Some(v) = status.kubernetes_version.as_deref() {
            one(Kind::KubernetesVersion, "", v);
        }
        if let Some(capacity) = status.capacity.as_ref() {
            for (vendor, count) in &capacity.gpus_by_vendor {
                if count.total > 0 {
                    one(Kind::GpuVendor, "", vendor);
                }
            }
        }
    }
    if let Some(region) = site.spec.region.as_deref() {
        one(Kind::Region, "", region);
    }
    one(Kind::Environment, "", site.spec.environment.as_str());
    for (key, value) in site.metadata.labels.iter().flatten() {
        if !key.starts_with(OWN_LABEL_PREFIX) {
            one(Kind::Label, key, value);
        }
    }
}

/// Whether the hub has heard from `site` (it is in the population).
fn heard_from(site: &FederatedCluster) -> bool {
    site.status
        .as_ref()
        .is_some_and(|s| s.last_heartbeat_time.is_some())
}

/// The fleet as the factors of its incidents compare it: every site heard
/// from, by name, and how many of them have each attribute value. Built in
/// one pass over the sites.
pub struct Population<'a> {
    by_name: HashMap<&'a str, &'a FederatedCluster>,
    counts: HashMap<Attr<'a>, u64>,
}

impl<'a> Population<'a> {
    /// The population of `sites`.
    pub fn of<S: Borrow<FederatedCluster>>(sites: &'a [S]) -> Self {
        let mut by_name = HashMap::with_capacity(sites.len());
        let mut counts: HashMap<Attr<'a>, u64> = HashMap::new();
        for site in sites.iter().map(S::borrow).filter(|s| heard_from(s)) {
            by_name.insert(site.site_name(), site);
            attributes(site, |a| *counts.entry(a).or_default() += 1);
        }
        Population { by_name, counts }
    }

    /// What the sites named `members` have in common (see the module
    /// documentation), leaving out `grouped` (a grouped outage's own
    /// grouping). Linear in the members' attributes (and their logarithm).
    pub fn factors<'m>(
        &self,
        members: impl IntoIterator<Item = &'m str>,
        grouped: Option<&GroupBy>,
    ) -> Vec<CommonFactor> {
        let names: BTreeSet<&str> = members.into_iter().collect();
        let sites: Vec<&FederatedCluster> = names
            .iter()
            .filter_map(|n| self.by_name.get(n).copied())
            .collect();
        let mut keys: Vec<MemberKey<'_>> = sites.iter().map(|s| member_key(s)).collect();
        keys.sort_unstable();
        keys.dedup();
        let affected_total = keys.len();
        let unaffected_total = u64::try_from(self.by_name.len() - sites.len()).unwrap_or(0);
        if affected_total < MIN_AFFECTED || unaffected_total == 0 {
            return Vec::new();
        }
        let left_out = |a: &Attr<'_>| match grouped {
            Some(GroupBy::Region) => a.kind == Kind::Region,
            Some(GroupBy::Label(key)) => a.kind == Kind::Label && a.key == key,
            None => false,
        };
        let mut seen: Vec<(Attr<'_>, MemberKey<'_>)> = Vec::new();
        for site in &sites {
            let key = member_key(site);
            attributes(site, |a| {
                if !left_out(&a) {
                    seen.push((a, key));
                }
            });
        }
        seen.sort_unstable();
        let total = u64::try_from(affected_total).unwrap_or(u64::MAX);
        let mut found: Vec<(Strength, CommonFactor)> = Vec::new();
        for run in seen.chunk_by(|x, y| x.0 == y.0) {
            let attr = run[0].0;
            // Each site has each value once: the run's length is its sites.
            let sites_with = u64::try_from(run.len()).unwrap_or(u64::MAX);
            let affected = u64::try_from(run.chunk_by(|x, y| x.1 == y.1).count()).unwrap_or(0);
            let unaffected = self
                .counts
                .get(&attr)
                .map_or(0, |n| n.saturating_sub(sites_with));
            // a/A ≥ 80 % and u/U ≤ (a/A)/2, in integers.
            let common =
                u128::from(affected) * 100 >= u128::from(total) * u128::from(MIN_SHARE_PERCENT);
            let rare = 2 * u128::from(unaffected) * u128::from(total)
                <= u128::from(affected) * u128::from(unaffected_total);
            if !(common && rare) {
                continue;
            }
            let strength = Strength {
                // a/A − u/U over the common denominator A·U.
                lift: i128::from(affected) * i128::from(unaffected_total)
                    - i128::from(unaffected) * i128::from(total),
                denominator: i128::from(total) * i128::from(unaffected_total),
                affected,
            };
            found.push((
                strength,
                CommonFactor {
                    attribute: attr.kind.name().to_owned(),
                    key: (attr.kind == Kind::Label)
                        .then(|| cut_to(&printable(attr.key), MAX_FACTOR_KEY_CHARS).into_owned()),
                    value: cut_to(&printable(attr.value), MAX_FACTOR_VALUE_CHARS).into_owned(),
                    affected: count(affected),
                    affected_total: count(total),
                    unaffected: count(unaffected),
                    unaffected_total: count(unaffected_total),
                },
            ));
        }
        // `seen` is sorted by attribute, so equal strengths keep the
        // attribute order: a stable sort, strongest first.
        found.sort_by(|a, b| a.0.stronger_first(&b.0));
        found.truncate(MAX_COMMON_FACTORS);
        found.into_iter().map(|(_, f)| f).collect()
    }
}

/// How strongly a value sets the affected apart: `lift / denominator`
/// (a/A − u/U, the denominator positive), then the number affected.
#[derive(Clone, Copy, Debug)]
struct Strength {
    lift: i128,
    denominator: i128,
    affected: u64,
}

impl Strength {
    /// The order of [`Population::factors`]: the stronger first. The
    /// fractions are compared crosswise (fleets are far below 2^32 sites,
    /// so the products stay inside i128).
    fn stronger_first(&self, other: &Self) -> std::cmp::Ordering {
        (other.lift.saturating_mul(self.denominator))
            .cmp(&self.lift.saturating_mul(other.denominator))
            .then(other.affected.cmp(&self.affected))
    }
}

fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Sets the `commonFactors` of every correlation, cascade and grouped
/// outage of the hub's full `summary` from `sites` (the whole fleet), in
/// one pass over the fleet plus one over each incident's sites.
pub fn set_common_factors<S: Borrow<FederatedCluster>>(
    summary: &mut FederationStatusStatus,
    sites: &[S],
) {
    let population = Population::of(sites);
    for c in &mut summary.correlations {
        c.common_factors = population.factors(c.clusters.iter().map(String::as_str), None);
    }
    for c in &mut summary.cascades {
        c.common_factors = population.factors([c.source.as_str(), c.target.as_str()], None);
    }
    for o in &mut summary.outages {
        let grouped = GroupBy::parse(&o.group_by).ok();
        o.common_factors =
            population.factors(o.clusters.iter().map(String::as_str), grouped.as_ref());
    }
}

/// What the sites named by `incident` have in common, from `sites` (the
/// whole fleet): for a reader holding the sites when the singleton wrote
/// none for it (past its byte budget).
pub fn of_incident<S: Borrow<FederatedCluster>>(
    incident: &crate::fleet::incident::Incident<'_>,
    sites: &[S],
) -> Vec<CommonFactor> {
    use crate::fleet::incident::Incident;
    let population = Population::of(sites);
    let names = incident.sites();
    let grouped = match incident {
        Incident::Outage(o) => GroupBy::parse(&o.group_by).ok(),
        _ => None,
    };
    population.factors(names.iter().map(String::as_str), grouped.as_ref())
}

/// What the affected sites of `factor` do, for humans: `run edge 0.1.0`.
/// The value and key are as stored (site text: a view escapes them).
pub fn shared(factor: &CommonFactor) -> String {
    let value = &factor.value;
    match factor.attribute.as_str() {
        "edgeVersion" => format!("run edge {value}"),
        "kubernetesVersion" => format!("run Kubernetes {value}"),
        "gpuVendor" => format!("have {value} GPUs"),
        "region" => format!("are in region {value}"),
        "environment" => format!("are in {value}"),
        "label" => format!(
            "carry label {}={value}",
            factor.key.as_deref().unwrap_or_default()
        ),
        other => format!("share {other} {value}"),
    }
}

/// The short form of `factor`: `edge 0.1.0 (38/40)`.
pub fn short(factor: &CommonFactor) -> String {
    let value = &factor.value;
    let what = match factor.attribute.as_str() {
        "edgeVersion" => format!("edge {value}"),
        "kubernetesVersion" => format!("k8s {value}"),
        "gpuVendor" => format!("gpu {value}"),
        "region" => format!("region {value}"),
        "environment" => value.clone(),
        "label" => format!("{}={value}", factor.key.as_deref().unwrap_or_default()),
        other => format!("{other} {value}"),
    };
    format!("{what} ({}/{})", factor.affected, factor.affected_total)
}

/// One line for `factor`: "38 of 40 affected run edge 0.1.0; 6% of the
/// other sites do (3 of 50)".
pub fn describe(factor: &CommonFactor) -> String {
    format!(
        "{} of {} affected {}; {} of the other sites do ({} of {})",
        factor.affected,
        factor.affected_total,
        shared(factor),
        percent(factor.unaffected, factor.unaffected_total),
        factor.unaffected,
        factor.unaffected_total
    )
}

/// `n` of `total` in whole percent, `<1%` for a few of many.
fn percent(n: i64, total: i64) -> String {
    if total <= 0 {
        return "0%".to_owned();
    }
    let p = i128::from(n) * 100 / i128::from(total);
    if p == 0 && n > 0 {
        "<1%".to_owned()
    } else {
        format!("{p}%")
    }
}

#[cfg(test)]
mod tests;
