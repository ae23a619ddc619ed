//! The hub's per-site series of every site in the cache:
//! `federation_cluster_nodes`,
//! `federation_cluster_credential_{expiration,renewal}_timestamp_seconds`
//! and `fleet_hub_status_restored_total`.
//!
//! They are kept as one compact row a site, taken from the sites of each
//! fleet summary ([`super::Metrics::set_fleet`]), and written out at each
//! scrape (a [`Collector`]). Kept as `prometheus-client` families they
//! were four hash tables of owned label sets and shared atomics, rebuilt
//! at every summary: ~500 B a site asked for, the largest holder of a
//! hub's memory after the sites and its own maps
//! (docs/benchmarks-100k.md#where-the-hubs-memory-goes). A row is 80
//! bytes and two small strings (the name, the region), and only the
//! restored count of a site the hub restored at least once is kept apart. What a scrape shows is unchanged: the same names, help,
//! labels and values, every site's restored counter at 0 from its first
//! summary (so `increase()` sees its first restore), and a deleted site's
//! series gone with it.

use std::collections::HashMap;
use std::sync::Mutex;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric as _};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Unit;

use crate::api::FederatedCluster;

use super::Escaped;

const EXPIRATION: &str = "federation_cluster_credential_expiration_timestamp";
const EXPIRATION_HELP: &str = "When each site's credential expires, as a Unix timestamp (status.credentialExpirationTime: the edge's hub token, or the hub's member token of a Pull site).";
const RENEWAL: &str = "federation_cluster_credential_renewal_timestamp";
const RENEWAL_HELP: &str = "When each self-renewing edge renews its hub token, as a Unix timestamp (status.credentialRenewalTime; no series when it does not renew by itself).";
const NODES: &str = "federation_cluster_nodes";
const NODES_HELP: &str = "Nodes of each site, as last reported.";
const RESTORED: &str = "fleet_hub_status_restored";
const RESTORED_HELP: &str =
    "Site status writes that restored hub-owned conditions someone else had changed.";

/// The per-site series, written out at each scrape.
#[derive(Debug, Default)]
pub(super) struct SiteSeries {
    book: Mutex<Book>,
}

#[derive(Debug, Default)]
struct Book {
    /// The sites of the last summary, by name.
    rows: Vec<Row>,
    /// Restores counted, of the sites restored at least once.
    restored: HashMap<Box<str>, u64>,
}

/// What the series show of one site.
#[derive(Debug)]
struct Row {
    name: Box<str>,
    region: Box<str>,
    nodes: Option<i64>,
    expires: Option<i64>,
    renews: Option<i64>,
}

impl Row {
    fn of(site: &FederatedCluster) -> Row {
        let status = site.status.as_ref();
        Row {
            name: site.site_name().into(),
            region: site.spec.region.as_deref().unwrap_or_default().into(),
            nodes: status.and_then(|s| s.node_count),
            expires: status
                .and_then(|s| s.credential_expiration_time.as_ref())
                .map(|t| t.0.as_second()),
            renews: status
                .and_then(|s| s.credential_renewal_time.as_ref())
                .map(|t| t.0.as_second()),
        }
    }
}

/// Whether `rows` (sorted by name) hold site `name`.
fn listed(rows: &[Row], name: &str) -> bool {
    rows.binary_search_by(|r| (*r.name).cmp(name)).is_ok()
}

impl SiteSeries {
    /// The sites of a new summary. The restores of a site it does not
    /// hold are forgotten (a deleted site).
    pub(super) fn set<'a>(&self, sites: impl Iterator<Item = &'a FederatedCluster>) {
        let mut rows: Vec<Row> = sites.map(Row::of).collect();
        rows.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        rows.dedup_by(|a, b| a.name == b.name);
        let mut book = self.book.lock().unwrap_or_else(|p| p.into_inner());
        book.restored.retain(|name, _| listed(&rows, name));
        book.rows = rows;
    }

    /// Whether the last summary held site `name`.
    pub(super) fn lists(&self, name: &str) -> bool {
        let book = self.book.lock().unwrap_or_else(|p| p.into_inner());
        listed(&book.rows, name)
    }

    /// The hub restored `cluster`'s conditions once more.
    pub(super) fn restored(&self, cluster: &str) {
        let mut book = self.book.lock().unwrap_or_else(|p| p.into_inner());
        match book.restored.get_mut(cluster) {
            Some(n) => *n += 1,
            None => {
                book.restored.insert(cluster.into(), 1);
            }
        }
    }

    /// Forgets `cluster`'s restores (a deleted site).
    pub(super) fn forget(&self, cluster: &str) {
        self.book
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .restored
            .remove(cluster);
    }
}

impl Collector for SiteSeries {
    /// Writes each family that has a series, as `prometheus-client` does
    /// (an empty family is left out, descriptor and all).
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let book = self.book.lock().unwrap_or_else(|p| p.into_inner());
        for (name, help, of) in [
            (
                EXPIRATION,
                EXPIRATION_HELP,
                (|r: &Row| r.expires) as fn(&Row) -> _,
            ),
            (RENEWAL, RENEWAL_HELP, |r: &Row| r.renews),
        ] {
            if book.rows.iter().all(|r| of(r).is_none()) {
                continue;
            }
            let mut family =
                encoder.encode_descriptor(name, help, Some(&Unit::Seconds), MetricType::Gauge)?;
            for r in &book.rows {
                if let Some(t) = of(r) {
                    let labels = [("cluster", Escaped(&r.name))];
                    ConstGauge::new(t).encode(family.encode_family(&labels)?)?;
                }
            }
        }
        if book.rows.iter().any(|r| r.nodes.is_some()) {
            let mut family =
                encoder.encode_descriptor(NODES, NODES_HELP, None, MetricType::Gauge)?;
            for r in &book.rows {
                if let Some(n) = r.nodes {
                    let labels = [
                        ("cluster", Escaped(&r.name)),
                        ("region", Escaped(&r.region)),
                    ];
                    ConstGauge::new(n).encode(family.encode_family(&labels)?)?;
                }
            }
        }
        if book.rows.is_empty() && book.restored.is_empty() {
            return Ok(());
        }
        let mut family =
            encoder.encode_descriptor(RESTORED, RESTORED_HELP, None, MetricType::Counter)?;
        let summarised = book
            .rows
            .iter()
            .map(|r| (&*r.name, book.restored.get(&r.name).copied().unwrap_or(0)));
        let unlisted = book
            .restored
            .iter()
            .filter(|(name, _)| !listed(&book.rows, name))
            .map(|(name, n)| (&**name, *n));
        for (name, n) in summarised.chain(unlisted) {
            let labels = [("cluster", Escaped(name))];
            ConstCounter::new(n).encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }
}
