//! What every status view counts over the sites it shows, one site at a
//! time: the table's footer ([`super::status`]) and the JSON/YAML report's
//! summary ([`super::report`]) both fold the sites into a [`ViewTotals`].

use jiff::Timestamp;

use crate::api::FederatedCluster;
use crate::fleet::summary::{ShownPhase, Totals};
use crate::fleet::versions::EdgeVersions;

/// What the views count over the sites they show, one site at a time: the
/// fleet totals, the sites in maintenance and the edge versions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ViewTotals {
    /// Phases, GPUs, services, signals.
    pub fleet: Totals,
    /// Sites whose maintenance window is open.
    pub maintenance: i64,
    /// Sites per edge version.
    pub versions: EdgeVersions,
}

impl ViewTotals {
    /// Counts one site in, with the phase the view shows for it.
    pub fn add(&mut self, site: &FederatedCluster, shown: &ShownPhase, now: Timestamp) {
        self.fleet.add_shown(site, shown);
        if site.in_maintenance(now) {
            self.maintenance += 1;
        }
        self.versions.add(site);
    }
}
