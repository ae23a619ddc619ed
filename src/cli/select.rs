//! Which sites a bulk command (`rotate`, `unregister`, `cordon`,
//! `uncordon`) is for: a label selector as kubectl takes it (`-l`) and the
//! shorthand `--region`, with one rule for all of them: a selection that
//! matches no site is an error (exit 1) that lists the labels the sites do
//! carry, so a mistyped key or value is seen at once.

use std::collections::BTreeMap;

use super::{Error, parse_region};
use crate::api::FederatedCluster;
use crate::fleet::rbac::{REGION_LABEL, SITE_LABEL};
use crate::k8s::Cluster;
use crate::render::safe::safe_text;

/// At most this many labels are listed when a selection matches nothing.
const MAX_LISTED_LABELS: usize = 12;

/// `-l SELECTOR` and `--region REGION`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Selection {
    /// Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Every site in this region (its federation.kubectl-fleet.dev/region label); with -l, sites matching both
    #[arg(long, value_name = "REGION", value_parser = parse_region)]
    pub region: Option<String>,
}

impl Selection {
    /// Whether sites are chosen by selection (rather than by name).
    pub fn given(&self) -> bool {
        self.selector.is_some() || self.region.is_some()
    }

    /// The label selector sent to the API server.
    pub fn label_selector(&self) -> Option<String> {
        let region = self.region.as_ref().map(|r| format!("{REGION_LABEL}={r}"));
        match (self.selector.as_deref(), region) {
            (Some(s), Some(r)) => Some(format!("{s},{r}")),
            (Some(s), None) => Some(s.to_owned()),
            (None, r) => r,
        }
    }

    /// The selection as the user typed it, e.g. `-l tier=critical --region eu`.
    pub fn words(&self) -> Vec<String> {
        let mut w = Vec::new();
        if let Some(s) = &self.selector {
            w.extend(["-l".to_owned(), s.clone()]);
        }
        if let Some(r) = &self.region {
            w.extend(["--region".to_owned(), r.clone()]);
        }
        w
    }

    /// The selection in a sentence, e.g. `"-l tier=critical"`.
    pub fn describe(&self) -> String {
        super::shell_line(&self.words())
    }

    /// The sites selected (not being deleted), sorted by name; none is an
    /// error naming the labels that exist.
    pub async fn sites(&self, hub: &Cluster, verb: &str) -> Result<Vec<FederatedCluster>, Error> {
        let selector = self.label_selector();
        let sites: Vec<FederatedCluster> = hub
            .select_sites(selector.as_deref())
            .await?
            .into_iter()
            .filter(|s| s.metadata.deletion_timestamp.is_none())
            .collect();
        if sites.is_empty() {
            return Err(self.matched_none(hub, verb).await);
        }
        Ok(sites)
    }

    /// The error of a selection that matched no site.
    pub async fn matched_none(&self, hub: &Cluster, verb: &str) -> Error {
        let what = format!("no site matches {}: nothing to {verb}", self.describe());
        let hint = match hub.site_label_counts().await {
            Ok(counts) => {
                // A slip of a region that exists: named first.
                let meant = self.region.as_deref().and_then(|typed| {
                    let regions = counts
                        .keys()
                        .filter(|(k, _)| k == REGION_LABEL)
                        .map(|(_, v)| v.as_str());
                    crate::fleet::suggest::closest(typed, regions)
                });
                match meant {
                    Some(region) => format!(
                        "did you mean --region {}? {}",
                        safe_text(region, 63),
                        labels_hint(&counts)
                    ),
                    None => labels_hint(&counts),
                }
            }
            Err(_) => {
                "`kubectl get federatedclusters --show-labels` lists the sites' labels".into()
            }
        };
        Error::Invalid { what, hint }
    }
}

/// What the sites' labels are, most common first (each site's own name
/// label left out).
fn labels_hint(counts: &BTreeMap<(String, String), usize>) -> String {
    let mut labels: Vec<(&(String, String), &usize)> = counts
        .iter()
        .filter(|((k, _), _)| k != SITE_LABEL)
        .collect();
    if labels.is_empty() {
        return if counts.is_empty() {
            "no site is registered".into()
        } else {
            "the sites carry no label but their names".into()
        };
    }
    labels.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let shown: Vec<String> = labels
        .iter()
        .take(MAX_LISTED_LABELS)
        .map(|((k, v), n)| {
            format!(
                "{}={} ({n} site{})",
                safe_text(k, 80),
                safe_text(v, 63),
                if **n == 1 { "" } else { "s" }
            )
        })
        .collect();
    let more = match labels.len().saturating_sub(MAX_LISTED_LABELS) {
        0 => String::new(),
        n => format!(" and {n} more (`kubectl get federatedclusters --show-labels`)"),
    };
    format!("the sites' labels are {}{more}", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_is_a_label_selector_and_combines_with_l() {
        let s = Selection {
            selector: Some("store-group=g1".into()),
            region: Some("eu-west-1".into()),
        };
        assert_eq!(
            s.label_selector().unwrap(),
            "store-group=g1,federation.kubectl-fleet.dev/region=eu-west-1"
        );
        assert_eq!(s.describe(), "-l store-group=g1 --region eu-west-1");
        assert!(!Selection::default().given());
    }

    #[test]
    fn the_hint_lists_the_labels_that_exist_most_common_first() {
        let mut counts = BTreeMap::new();
        counts.insert((SITE_LABEL.to_owned(), "a".to_owned()), 1);
        counts.insert((REGION_LABEL.to_owned(), "eu-west-1".to_owned()), 3);
        counts.insert(("store-group".to_owned(), "g1".to_owned()), 1);
        assert_eq!(
            labels_hint(&counts),
            "the sites' labels are federation.kubectl-fleet.dev/region=eu-west-1 (3 sites), store-group=g1 (1 site)"
        );
        assert_eq!(labels_hint(&BTreeMap::new()), "no site is registered");
    }
}
