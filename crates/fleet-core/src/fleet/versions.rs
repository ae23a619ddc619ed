//! Which edge versions run where (`status.observedVersion` of Push sites:
//! a Pull site runs no edge, the hub's prober stamps its own version
//! there), counted one site at a time in bounded memory: the hub's `FederationStatus`
//! `edgeVersions`, the `Edges:` line of `kubectl fleet status` and its
//! report's `summary.edgeVersions` all count with [`EdgeVersions`].

use std::collections::BTreeMap;

use crate::api::{FederatedCluster, MAX_EDGE_VERSIONS, Mode};

/// Key under which versions past the bound are counted.
pub const OTHER_VERSIONS: &str = "other";

/// Distinct versions tracked one by one; sites reporting any further
/// version are counted under [`OTHER_VERSIONS`] straight away, so a fleet
/// of sites each reporting a different string costs a bounded map.
pub(crate) const MAX_TRACKED_VERSIONS: usize = 4096;

/// Sites per edge version, folded one site at a time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EdgeVersions {
    counts: BTreeMap<String, i64>,
    /// Sites whose version came after [`MAX_TRACKED_VERSIONS`] others.
    untracked: i64,
}

impl EdgeVersions {
    /// Counts `site`'s edge version in; a site that never reported one,
    /// and a Pull site (no edge), are not counted.
    pub(crate) fn add(&mut self, site: &FederatedCluster) {
        if let Some(v) = edge_version(site) {
            self.add_version(v);
        }
    }

    /// Counts one site reporting `version`.
    pub(crate) fn add_version(&mut self, version: &str) {
        if let Some(n) = self.counts.get_mut(version) {
            *n = n.saturating_add(1);
        } else if self.counts.len() < MAX_TRACKED_VERSIONS {
            self.counts.insert(version.to_owned(), 1);
        } else {
            self.untracked = self.untracked.saturating_add(1);
        }
    }

    #[cfg(test)]
    /// Whether no site reported a version.
    pub(crate) fn is_empty(&self) -> bool {
        self.counts.is_empty() && self.untracked == 0
    }

    /// At most `max` entries by name: the `max − 1` most common versions
    /// (ties by name) and the rest under [`OTHER_VERSIONS`]; every
    /// version when they fit.
    pub(crate) fn bounded(&self, max: usize) -> BTreeMap<String, i64> {
        if self.untracked == 0 && self.counts.len() <= max {
            return self.counts.clone();
        }
        let mut out: BTreeMap<String, i64> = BTreeMap::new();
        for (i, (v, n)) in self.by_count().into_iter().enumerate() {
            let key = if i + 1 < max { v } else { OTHER_VERSIONS };
            let e = out.entry(key.to_owned()).or_default();
            *e = e.saturating_add(n);
        }
        if self.untracked > 0 {
            let e = out.entry(OTHER_VERSIONS.to_owned()).or_default();
            *e = e.saturating_add(self.untracked);
        }
        out
    }

    /// The bounded map `FederationStatus` and the reports carry
    /// ([`MAX_EDGE_VERSIONS`] entries at most).
    pub(crate) fn summary(&self) -> BTreeMap<String, i64> {
        self.bounded(MAX_EDGE_VERSIONS)
    }

    /// Every tracked version, most common first (ties by name).
    pub(crate) fn by_count(&self) -> Vec<(&str, i64)> {
        let mut v: Vec<(&str, i64)> = self.counts.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v
    }

    /// Sites counted under [`OTHER_VERSIONS`] because too many distinct
    /// versions came before theirs.
    pub(crate) fn untracked(&self) -> i64 {
        self.untracked
    }
}

/// The version of the edge reporting for `site`: its `observedVersion`
/// in Push mode; None in Pull mode, where no edge runs (the hub's prober
/// writes its own version there) or when none was reported.
pub(crate) fn edge_version(site: &FederatedCluster) -> Option<&str> {
    if site.spec.mode != Mode::Push {
        return None;
    }
    site.status.as_ref()?.observed_version.as_deref()
}

/// Whether an edge of `version` reports for the site; a leading `v` is
/// ignored on both sides (`v0.2.0` finds `0.2.0`). Never a Pull site.
pub(crate) fn runs_version(site: &FederatedCluster, version: &str) -> bool {
    let plain = |v: &str| v.strip_prefix('v').unwrap_or(v).to_owned();
    edge_version(site).is_some_and(|v| plain(v) == plain(version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_bounded_with_an_other_bucket() {
        let mut v = EdgeVersions::default();
        assert!(v.is_empty());
        for version in ["0.2.0", "0.2.0", "0.1.0", "0.3.0"] {
            v.add_version(version);
        }
        assert_eq!(v.by_count(), [("0.2.0", 2), ("0.1.0", 1), ("0.3.0", 1)]);
        assert_eq!(v.bounded(3).len(), 3);
        assert_eq!(
            v.bounded(2),
            BTreeMap::from([("0.2.0".to_owned(), 2), (OTHER_VERSIONS.to_owned(), 2)])
        );
    }

    #[test]
    fn too_many_distinct_versions_stay_bounded() {
        let mut v = EdgeVersions::default();
        for i in 0..MAX_TRACKED_VERSIONS + 10 {
            v.add_version(&format!("1.0.{i}"));
        }
        v.add_version("1.0.0");
        assert_eq!(v.untracked(), 10);
        let s = v.summary();
        assert_eq!(s.len(), MAX_EDGE_VERSIONS);
        assert_eq!(s["1.0.0"], 2);
        assert_eq!(
            s.values().sum::<i64>(),
            i64::try_from(MAX_TRACKED_VERSIONS + 11).unwrap()
        );
    }

    #[test]
    fn a_version_filter_ignores_a_leading_v() {
        let mut site = FederatedCluster::test("a");
        assert!(!runs_version(&site, "0.2.0"), "never reported");
        site.status = Some(crate::api::FederatedClusterStatus {
            observed_version: Some("0.2.0".into()),
            ..Default::default()
        });
        assert!(runs_version(&site, "0.2.0"));
        assert!(runs_version(&site, "v0.2.0"));
        assert!(!runs_version(&site, "0.2"));
    }

    #[test]
    fn a_pull_site_runs_no_edge() {
        let mut v = EdgeVersions::default();
        let status = crate::api::FederatedClusterStatus {
            observed_version: Some("0.2.0".into()),
            ..Default::default()
        };
        let mut push = FederatedCluster::test("push");
        push.status = Some(status.clone());
        let mut pull = FederatedCluster::test("pull").pull();
        pull.status = Some(status);
        v.add(&push);
        v.add(&pull);
        assert_eq!(
            v.by_count(),
            [("0.2.0", 1)],
            "the prober's version is no edge's"
        );
        assert!(runs_version(&push, "0.2.0"));
        assert!(!runs_version(&pull, "0.2.0"));
    }
}
