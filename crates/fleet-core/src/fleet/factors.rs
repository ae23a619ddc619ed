//! What an incident's sites have in common (docs/operations.md#what-an-incidents-sites-have-in-common):
//! the attributes most of its sites share and the other sites mostly do
//! not — "38 of 40 affected run edge 0.1.0; 6% of the other sites do".
//!
//! **Attributes** of a site: its edge version (`status.observedVersion`),
//! Kubernetes version (`status.kubernetesVersion`), each GPU resource it
//! has (`status.capacity.gpusByVendor` with a non-zero total), each value
//! its nodes report (`status.nodeInfo`: every GPU model, node OS image,
//! kernel and container runtime listed there, however many of its nodes
//! have it), its region and environment (`spec`), and each of its labels
//! (except the `federation.kubectl-fleet.dev/` ones the product sets
//! itself).
//!
//! **Who is compared.** The population is every site the hub has heard
//! from (a heartbeat); a site never heard from reports nothing to share.
//! The affected sites are the incident's sites in it — a correlation's
//! members, a grouped outage's sites, and for a cascade every site of the
//! cascades of its signal type and workload (its source and each
//! production site the failure reached: two sites alone have too little
//! in common to tell) — counted by distinct member cluster as incidents
//! are ([`crate::fleet::correlation::MemberKey`]: sites whose edges read
//! one cluster count once, and share a value when any of them reports
//! it); the other sites (unaffected) are the rest of the population,
//! counted by site. A value of what a site's nodes run is compared over
//! the sites that report `status.nodeInfo` only, affected and other
//! alike: an edge older than it tells nothing of its nodes, which is not
//! running something else (so the totals of such a factor may be smaller
//! than the incident's).
//!
//! **The rule.** With `A` affected member clusters (at least
//! [`MIN_AFFECTED`], the default correlation threshold) of which `a`
//! share a value, and `U` other sites (at least one) of which `u` do, the
//! value is named when `a/A` is at least [`MIN_SHARE_PERCENT`] % and
//! `u/U` is at most half of `a/A`. At most [`MAX_COMMON_FACTORS`], the
//! strongest first: the largest difference `a/A − u/U`, then the most
//! affected, then attribute (edge version, Kubernetes version, GPU, GPU
//! model, node OS, kernel, container runtime, region, environment,
//! label), key and value. What made the sites one
//! incident is never named: a grouped outage's own grouping (its region,
//! or its label), a cascade's environments (from a lower one into
//! production).
//!
//! **Cost.** [`set_common_factors`] takes one pass over each incident's
//! sites, counting their values and keeping those at least 80 % of them
//! share (the only ones the rule can name), then one pass over the fleet
//! counting only those few (a lookup per site attribute, none when no
//! incident has any; the other sites' count is the fleet's minus the
//! affected): linear in the fleet and its incidents' sizes (benchmark P4,
//! `examples/factors_bench.rs`).
//!
//! Values are site-controlled text: stored without control or format
//! characters and cut to [`MAX_FACTOR_VALUE_CHARS`]; the views still print
//! them through `render::safe`.

use std::borrow::Borrow;
use std::collections::{BTreeSet, HashMap};

use crate::api::{
    CommonFactor, FederatedCluster, FederationStatusStatus, MAX_COMMON_FACTORS,
    MAX_FACTOR_KEY_CHARS, MAX_FACTOR_VALUE_CHARS, MAX_NODE_VALUES, NodeValues, SignalType,
    WorkloadRef,
};
use crate::fleet::bounds::{cut_to, printable};
use crate::fleet::correlation::{MemberKey, member_key};
use crate::fleet::outage::GroupBy;

/// Least share of the affected member clusters, in percent, that must
/// share a value for it to be named.
pub const MIN_SHARE_PERCENT: u64 = 80;
/// Least number of affected member clusters for anything to be "in
/// common".
pub const MIN_AFFECTED: usize = 3;
/// Label keys under this prefix are the product's own (never named).
const OWN_LABEL_PREFIX: &str = "federation.kubectl-fleet.dev/";

/// The kind of an attribute, in the order ties are broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Kind {
    EdgeVersion,
    KubernetesVersion,
    GpuVendor,
    GpuModel,
    OsImage,
    KernelVersion,
    ContainerRuntime,
    Region,
    Environment,
    Label,
}

/// How many kinds there are.
const KINDS: usize = Kind::Label as usize + 1;

impl Kind {
    /// Whether the value is one of what a site's nodes run
    /// (`status.nodeInfo`), which only the sites reporting it tell.
    fn of_nodes(self) -> bool {
        matches!(
            self,
            Kind::GpuModel | Kind::OsImage | Kind::KernelVersion | Kind::ContainerRuntime
        )
    }

    /// The `attribute` of a [`CommonFactor`].
    fn name(self) -> &'static str {
        match self {
            Kind::EdgeVersion => "edgeVersion",
            Kind::KubernetesVersion => "kubernetesVersion",
            Kind::GpuVendor => "gpuVendor",
            Kind::GpuModel => "gpuModel",
            Kind::OsImage => "osImage",
            Kind::KernelVersion => "kernelVersion",
            Kind::ContainerRuntime => "containerRuntimeVersion",
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
fn attributes<'a>(site: &'a FederatedCluster, f: impl FnMut(Attr<'a>)) {
    attributes_among(site, &Wanted::All, f);
}

/// Which attributes a pass over the fleet looks at.
enum Wanted<'w> {
    /// Every one.
    All,
    /// Those of these kinds (indexed by `Kind as usize`), and of labels
    /// only these keys (sorted).
    Only([bool; KINDS], Vec<&'w str>),
}

/// Calls `f` with each attribute value of `site` that `wanted` names
/// (each at most once): a pass over the fleet for a few values skips the
/// rest before hashing anything.
fn attributes_among<'a>(
    site: &'a FederatedCluster,
    wanted: &Wanted<'_>,
    mut f: impl FnMut(Attr<'a>),
) {
    let kind_wanted = |kind: Kind| match wanted {
        Wanted::All => true,
        Wanted::Only(kinds, _) => kinds[kind as usize],
    };
    let mut one = |kind, key, value: &'a str| {
        if !value.is_empty() && kind_wanted(kind) {
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
        if let Some(info) = status.node_info.as_ref() {
            for (kind, values) in [
                (Kind::GpuModel, &info.gpu_model),
                (Kind::OsImage, &info.os_image),
                (Kind::KernelVersion, &info.kernel_version),
                (Kind::ContainerRuntime, &info.container_runtime_version),
            ] {
                if kind_wanted(kind) {
                    node_values(values, |v| one(kind, "", v));
                }
            }
        }
    }
    if let Some(region) = site.spec.region.as_deref() {
        one(Kind::Region, "", region);
    }
    one(Kind::Environment, "", site.spec.environment.as_str());
    let Some(labels) = site.metadata.labels.as_ref() else {
        return;
    };
    match wanted {
        Wanted::Only(kinds, keys) if !kinds[Kind::Label as usize] || keys.len() <= 8 => {
            for key in keys {
                if let Some((key, value)) = labels.get_key_value(*key) {
                    one(Kind::Label, key, value);
                }
            }
        }
        Wanted::Only(_, keys) => {
            for (key, value) in labels {
                if keys.binary_search(&key.as_str()).is_ok() {
                    one(Kind::Label, key, value);
                }
            }
        }
        Wanted::All => {
            for (key, value) in labels {
                if !key.starts_with(OWN_LABEL_PREFIX) {
                    one(Kind::Label, key, value);
                }
            }
        }
    }
}

/// Calls `f` with each value of `values` once: the CRD lists each once and
/// at most [`MAX_NODE_VALUES`]; a reader does not rely on it, and looks at
/// no more than that many.
fn node_values<'a>(values: &'a NodeValues, mut f: impl FnMut(&'a str)) {
    let listed = &values.values[..values.values.len().min(MAX_NODE_VALUES)];
    for (i, v) in listed.iter().enumerate() {
        if !listed[..i].iter().any(|earlier| earlier.value == v.value) {
            f(&v.value);
        }
    }
}

/// What made an incident's sites one incident, and so is never named as
/// what they have in common.
#[derive(Clone, Copy, Debug)]
pub enum Given<'g> {
    /// Nothing (a correlation: one signal type, wherever).
    Nothing,
    /// A grouped outage's grouping (its region, or its label).
    Group(&'g GroupBy),
    /// The environments (a cascade: from a lower one into production).
    Environment,
}

/// The sites of `sites` the hub has heard from (the population), by name.
fn heard<S: Borrow<FederatedCluster>>(sites: &[S]) -> HashMap<&str, &FederatedCluster> {
    sites
        .iter()
        .map(S::borrow)
        .filter(|site| {
            site.status
                .as_ref()
                .is_some_and(|s| s.last_heartbeat_time.is_some())
        })
        .map(|site| (site.site_name(), site))
        .collect()
}

/// Whether `site` reports what its nodes run (`status.nodeInfo`; an edge
/// older than it does not).
fn reports_nodes(site: &FederatedCluster) -> bool {
    site.status.as_ref().is_some_and(|s| s.node_info.is_some())
}

/// The fleet as the factors of its incidents compare it: every site heard
/// from, by name.
pub struct Population<'a> {
    by_name: HashMap<&'a str, &'a FederatedCluster>,
    /// How many of them report what their nodes run.
    reporting_nodes: usize,
}

/// The affected member clusters and the other sites a value is compared
/// over.
#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    affected: u64,
    unaffected: u64,
}

impl Totals {
    /// Whether anything can be in common: at least [`MIN_AFFECTED`]
    /// clusters, and someone else.
    fn comparable(self) -> bool {
        self.affected >= MIN_AFFECTED as u64 && self.unaffected > 0
    }
}

/// What one incident's sites share, before the other sites are counted:
/// the values at least [`MIN_SHARE_PERCENT`] % of its clusters have (the
/// only ones the rule can name).
struct Shared<'a> {
    /// (value, affected sites with it, affected member clusters with it)
    candidates: Vec<(Attr<'a>, u64, u64)>,
    /// Over every site, and (`[1]`) over those reporting what their nodes
    /// run, for a value of `status.nodeInfo`.
    totals: [Totals; 2],
}

impl Shared<'_> {
    /// The totals `kind` is compared over.
    fn totals(&self, kind: Kind) -> Totals {
        self.totals[usize::from(kind.of_nodes())]
    }
}

impl<'a> Population<'a> {
    /// The population of `sites`.
    pub fn of<S: Borrow<FederatedCluster>>(sites: &'a [S]) -> Self {
        let by_name = heard(sites);
        let reporting_nodes = by_name.values().filter(|s| reports_nodes(s)).count();
        Population {
            by_name,
            reporting_nodes,
        }
    }

    /// What the sites named `members` have in common (see the module
    /// documentation), leaving out what made them one incident (`given`).
    pub fn factors<'m>(
        &self,
        members: impl IntoIterator<Item = &'m str>,
        given: Given<'_>,
    ) -> Vec<CommonFactor> {
        self.factors_of_all([(members.into_iter().collect::<Vec<_>>(), given)])
            .pop()
            .unwrap_or_default()
    }

    /// [`Self::factors`] of many incidents: a pass over each incident's
    /// sites, then one over the fleet counting only the values some
    /// incident's sites mostly share (a lookup per site attribute, in a
    /// map of those few).
    pub fn factors_of_all<'m, 'g>(
        &self,
        incidents: impl IntoIterator<Item = (Vec<&'m str>, Given<'g>)>,
    ) -> Vec<Vec<CommonFactor>> {
        let shared: Vec<Shared<'a>> = incidents
            .into_iter()
            .map(|(members, given)| self.shared(members, given))
            .collect();
        let mut counts: HashMap<Attr<'a>, u64> = shared
            .iter()
            .flat_map(|s| &s.candidates)
            .map(|c| (c.0, 0))
            .collect();
        if !counts.is_empty() {
            let mut kinds = [false; KINDS];
            let mut keys: Vec<&str> = Vec::new();
            for a in counts.keys() {
                kinds[a.kind as usize] = true;
                if a.kind == Kind::Label {
                    keys.push(a.key);
                }
            }
            keys.sort_unstable();
            keys.dedup();
            let wanted = Wanted::Only(kinds, keys);
            for site in self.by_name.values() {
                attributes_among(site, &wanted, |a| {
                    if let Some(n) = counts.get_mut(&a) {
                        *n += 1;
                    }
                });
            }
        }
        shared.into_iter().map(|s| s.factors(&counts)).collect()
    }

    /// What the sites named `members` mostly share.
    fn shared(&self, mut names: Vec<&str>, given: Given<'_>) -> Shared<'a> {
        names.sort_unstable();
        names.dedup();
        let sites: Vec<&'a FederatedCluster> = names
            .iter()
            .filter_map(|n| self.by_name.get(n).copied())
            .collect();
        // Affected member clusters, and others, over every site and over
        // those reporting what their nodes run.
        let totals = |of: &dyn Fn(&FederatedCluster) -> bool, population: usize| {
            let mut keys: Vec<MemberKey<'_>> = sites
                .iter()
                .filter(|s| of(s))
                .map(|s| member_key(s))
                .collect();
            let affected_sites = keys.len();
            keys.sort_unstable();
            keys.dedup();
            Totals {
                affected: u64::try_from(keys.len()).unwrap_or(u64::MAX),
                unaffected: u64::try_from(population.saturating_sub(affected_sites)).unwrap_or(0),
            }
        };
        let mut shared = Shared {
            candidates: Vec::new(),
            totals: [
                totals(&|_| true, self.by_name.len()),
                totals(&reports_nodes, self.reporting_nodes),
            ],
        };
        if !shared.totals[0].comparable() {
            return shared;
        }
        let affected_total = usize::try_from(shared.totals[0].affected).unwrap_or(usize::MAX);
        let left_out = |a: &Attr<'_>| match given {
            Given::Group(GroupBy::Region) => a.kind == Kind::Region,
            Given::Group(GroupBy::Label(key)) => a.kind == Kind::Label && a.key == key,
            Given::Environment => a.kind == Kind::Environment,
            Given::Nothing => false,
        };
        let mut all: Vec<(Attr<'a>, u64, u64)> = Vec::new();
        if affected_total == sites.len() {
            // Each site its own cluster (the usual case): a count per value.
            let mut per: HashMap<Attr<'a>, u64> = HashMap::new();
            for site in &sites {
                attributes(site, |a| {
                    if !left_out(&a) {
                        *per.entry(a).or_default() += 1;
                    }
                });
            }
            all.extend(per.into_iter().map(|(a, n)| (a, n, n)));
        } else {
            let mut seen: Vec<(Attr<'a>, MemberKey<'a>)> = Vec::new();
            for site in &sites {
                let key = member_key(site);
                attributes(site, |a| {
                    if !left_out(&a) {
                        seen.push((a, key));
                    }
                });
            }
            seen.sort_unstable();
            for run in seen.chunk_by(|x, y| x.0 == y.0) {
                // Each site has each value once: the run's length is its
                // sites; its distinct keys, its clusters.
                let sites_with = u64::try_from(run.len()).unwrap_or(u64::MAX);
                let clusters = u64::try_from(run.chunk_by(|x, y| x.1 == y.1).count()).unwrap_or(0);
                all.push((run[0].0, sites_with, clusters));
            }
        }
        // a/A ≥ 80 %, in integers, over the sites that tell the value.
        shared.candidates = all
            .into_iter()
            .filter(|c| {
                let totals = shared.totals(c.0.kind);
                totals.comparable()
                    && u128::from(c.2) * 100
                        >= u128::from(totals.affected) * u128::from(MIN_SHARE_PERCENT)
            })
            .collect();
        shared
    }
}

impl Shared<'_> {
    /// The factors named, given how many sites of the fleet have each
    /// candidate value (`counts`).
    fn factors(self, counts: &HashMap<Attr<'_>, u64>) -> Vec<CommonFactor> {
        let mut found: Vec<(Strength, Attr<'_>, u64, Totals)> = Vec::new();
        for &(attr, sites_with, affected) in &self.candidates {
            let totals = self.totals(attr.kind);
            let (total, unaffected_total) = (totals.affected, totals.unaffected);
            let unaffected = counts
                .get(&attr)
                .map_or(0, |n| n.saturating_sub(sites_with));
            // u/U ≤ (a/A)/2, in integers.
            let rare = 2 * u128::from(unaffected) * u128::from(total)
                <= u128::from(affected) * u128::from(unaffected_total);
            if rare {
                let strength = Strength {
                    // a/A − u/U over the common denominator A·U.
                    lift: i128::from(affected) * i128::from(unaffected_total)
                        - i128::from(unaffected) * i128::from(total),
                    denominator: i128::from(total) * i128::from(unaffected_total),
                    affected,
                };
                found.push((strength, attr, unaffected, totals));
            }
        }
        // Strongest first; equal strengths in the attribute order.
        found.sort_by(|a, b| a.0.stronger_first(&b.0).then(a.1.cmp(&b.1)));
        found.truncate(MAX_COMMON_FACTORS);
        found
            .into_iter()
            .map(|(strength, attr, unaffected, totals)| CommonFactor {
                attribute: attr.kind.name().to_owned(),
                key: (attr.kind == Kind::Label)
                    .then(|| cut_to(&printable(attr.key), MAX_FACTOR_KEY_CHARS).into_owned()),
                value: cut_to(&printable(attr.value), MAX_FACTOR_VALUE_CHARS).into_owned(),
                affected: count(strength.affected),
                affected_total: count(totals.affected),
                unaffected: count(unaffected),
                unaffected_total: count(totals.unaffected),
            })
            .collect()
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
/// outage of the hub's full `summary` from `sites` (the whole fleet): one
/// pass over the fleet, plus one over each incident's sites. A cascade's
/// sites are those of every cascade of its signal type and workload (its
/// source and each production site the same failure reached, as
/// `fleet::summary::cascade_rank` counts its evidence): two sites alone
/// have too little in common to tell.
pub fn set_common_factors<S: Borrow<FederatedCluster>>(
    summary: &mut FederationStatusStatus,
    sites: &[S],
) {
    let mut cascades: HashMap<(SignalType, &WorkloadRef), BTreeSet<&str>> = HashMap::new();
    for c in &summary.cascades {
        let set = cascades.entry((c.signal, &c.workload)).or_default();
        set.insert(&c.source);
        set.insert(&c.target);
    }
    let groups: Vec<Option<GroupBy>> = summary
        .outages
        .iter()
        .map(|o| GroupBy::parse(&o.group_by).ok())
        .collect();
    let cascades: Vec<((SignalType, &WorkloadRef), BTreeSet<&str>)> =
        cascades.into_iter().collect();
    fn names(clusters: &[String]) -> Vec<&str> {
        clusters.iter().map(String::as_str).collect()
    }
    let incidents = summary
        .correlations
        .iter()
        .map(|c| (names(&c.clusters), Given::Nothing))
        .chain(summary.outages.iter().zip(&groups).map(|(o, group)| {
            let given = group.as_ref().map_or(Given::Nothing, Given::Group);
            (names(&o.clusters), given)
        }))
        .chain(
            cascades
                .iter()
                .map(|(_, set)| (set.iter().copied().collect(), Given::Environment)),
        );
    let mut found = Population::of(sites).factors_of_all(incidents).into_iter();
    for c in &mut summary.correlations {
        c.common_factors = found.next().unwrap_or_default();
    }
    for o in &mut summary.outages {
        o.common_factors = found.next().unwrap_or_default();
    }
    let by_workload: HashMap<(SignalType, &WorkloadRef), usize> = cascades
        .iter()
        .enumerate()
        .map(|(i, (key, _))| (*key, i))
        .collect();
    let group: Vec<Option<usize>> = summary
        .cascades
        .iter()
        .map(|c| by_workload.get(&(c.signal, &c.workload)).copied())
        .collect();
    let found: Vec<Vec<CommonFactor>> = found.collect();
    for (c, i) in summary.cascades.iter_mut().zip(group) {
        if let Some(f) = i.and_then(|i| found.get(i)) {
            c.common_factors.clone_from(f);
        }
    }
}

/// What the sites of `incident` have in common, from `sites` (the whole
/// fleet; `summary` the FederationStatus holding the incident, whose
/// cascades of the same signal and workload are a cascade's sites too):
/// for a reader holding the sites when the singleton wrote none for it
/// (past its byte budget).
pub fn of_incident<S: Borrow<FederatedCluster>>(
    incident: &crate::fleet::incident::Incident<'_>,
    summary: &FederationStatusStatus,
    sites: &[S],
) -> Vec<CommonFactor> {
    use crate::fleet::incident::Incident;
    let mut names: BTreeSet<&str> = BTreeSet::new();
    let mut grouped = None;
    let mut cascade = false;
    match incident {
        Incident::Correlation(c) => names.extend(c.clusters.iter().map(String::as_str)),
        Incident::Outage(o) => {
            names.extend(o.clusters.iter().map(String::as_str));
            grouped = GroupBy::parse(&o.group_by).ok();
        }
        Incident::Cascade(c) => {
            for other in summary
                .cascades
                .iter()
                .filter(|o| o.signal == c.signal && o.workload == c.workload)
                .chain([*c])
            {
                names.insert(&other.source);
                names.insert(&other.target);
            }
            cascade = true;
        }
    }
    let given = match grouped.as_ref() {
        Some(g) => Given::Group(g),
        None if cascade => Given::Environment,
        None => Given::Nothing,
    };
    Population::of(sites).factors(names, given)
}

/// What the affected sites of `factor` do, for humans: `run edge 0.1.0`.
/// The value and key are as stored (site text: a view escapes them).
pub fn shared(factor: &CommonFactor) -> String {
    let value = &factor.value;
    match factor.attribute.as_str() {
        "edgeVersion" => format!("run edge {value}"),
        "kubernetesVersion" => format!("run Kubernetes {value}"),
        "gpuVendor" => format!("have {value} GPUs"),
        "gpuModel" => format!("have nodes with {value} GPUs"),
        "osImage" => format!("have nodes running {value}"),
        "kernelVersion" => format!("have nodes on kernel {value}"),
        "containerRuntimeVersion" => format!("have nodes on container runtime {value}"),
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
        "gpuModel" => format!("gpu-model {value}"),
        "osImage" => format!("os {value}"),
        "kernelVersion" => format!("kernel {value}"),
        "containerRuntimeVersion" => format!("runtime {value}"),
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
