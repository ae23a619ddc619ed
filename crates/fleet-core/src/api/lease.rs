//! The `FederatedClusterLease` custom resource: a site's heartbeat, apart
//! from its status (docs/scaling.md#liveness-apart-from-status).
//!
//! One small cluster-scoped object per site, named as the site. The edge
//! renews it every heartbeat interval (one JSON merge patch of
//! `spec.renewTime` and the previous renewal's round trip) and writes
//! `FederatedCluster.status` only when what it reports changes. A renewal
//! rewrites a few hundred bytes in etcd instead of the whole site object
//! (Kubernetes moved node heartbeats onto `coordination.k8s.io` Leases for
//! the same reason, KEP-589).
//!
//! Readers never judge a lease on its own: the site as the fleet sees it is
//! its object with the later of `status.lastHeartbeatTime` and the lease's
//! `renewTime` as its heartbeat ([`FederatedCluster::with_lease`]), so an
//! older edge that still heartbeats through status, and a site without a
//! lease, are judged exactly as before.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube_derive::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use super::cluster::{FederatedCluster, MAX_DURATION_MILLISECONDS, SITE_NAME_RULE};

/// A site's heartbeat object (name = site), renewed by its edge.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[x_kube(crates(kube_core = "::kube_core"))]
#[kube(
    crates(kube_core = "::kube_core", kube = "::kube_derive"),
    group = "federation.kubectl-fleet.dev",
    version = "v1alpha1",
    kind = "FederatedClusterLease",
    plural = "federatedclusterleases",
    singular = "federatedclusterlease",
    shortname = "fcl",
    category = "fleet",
    derive = "PartialEq",
    derive = "Default",
    doc = "A site's heartbeat: renewed by its edge every interval (name = site)",
    validation = Rule::new(SITE_NAME_RULE).message("metadata.name must be the site's name: a DNS-1123 label of at most 63 characters"),
    printcolumn(name = "Renewed", type_ = "date", json_path = ".spec.renewTime"),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
#[serde(rename_all = "camelCase")]
pub struct FederatedClusterLeaseSpec {
    /// When the edge last renewed the lease, on its clock (with its clock
    /// offset applied): the site's heartbeat. The hub judges it as it
    /// judges `status.lastHeartbeatTime`: by when it sees the value change,
    /// on its own clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_time: Option<Time>,
    /// How long the edge's previous renewal took (its round trip), sent with
    /// the next one: the site's health check, as
    /// `status.lastReportDurationMilliseconds` is for an edge that
    /// heartbeats through status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = MAX_DURATION_MILLISECONDS))]
    pub last_renew_duration_milliseconds: Option<i64>,
}

impl FederatedClusterLease {
    /// The site this lease is the heartbeat of.
    pub fn site_name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
}

/// What a reader keeps of a lease: the few bytes it folds into its site.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Renewal {
    /// `spec.renewTime`.
    pub renew_time: Option<jiff::Timestamp>,
    /// `spec.lastRenewDurationMilliseconds`.
    pub duration_ms: Option<i64>,
}

impl From<&FederatedClusterLease> for Renewal {
    fn from(lease: &FederatedClusterLease) -> Self {
        Renewal {
            renew_time: lease.spec.renew_time.as_ref().map(|t| t.0),
            duration_ms: lease.spec.last_renew_duration_milliseconds,
        }
    }
}

impl FederatedCluster {
    /// Folds this site's renewal among `renewals` (by site name), if there
    /// is one ([`FederatedCluster::with_lease`]); whether it changed
    /// anything.
    pub fn with_lease_among(
        &mut self,
        renewals: &std::collections::HashMap<String, Renewal>,
    ) -> bool {
        match renewals.get(self.site_name()) {
            Some(renewal) => self.with_lease(*renewal),
            None => false,
        }
    }

    /// Folds the site's lease into it: when the lease was renewed later
    /// than `status.lastHeartbeatTime` (or the status has none), the lease's
    /// renew time becomes the heartbeat and its renewal's round trip the
    /// last report's. Returns whether anything changed. A site whose edge
    /// heartbeats through status, or that has no lease, is left as it is.
    pub fn with_lease(&mut self, lease: Renewal) -> bool {
        let Some(renewed) = lease.renew_time else {
            return false;
        };
        let status = self.status.get_or_insert_with(Default::default);
        if status
            .last_heartbeat_time
            .as_ref()
            .is_some_and(|t| t.0 >= renewed)
        {
            return false;
        }
        status.last_heartbeat_time = Some(Time(renewed));
        if lease.duration_ms.is_some() {
            status.last_report_duration_milliseconds = lease.duration_ms;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> jiff::Timestamp {
        s.parse().unwrap()
    }

    fn site(heartbeat: Option<&str>) -> FederatedCluster {
        let mut site = FederatedCluster::test("store-1").connected();
        if let Some(status) = site.status.as_mut() {
            status.last_heartbeat_time = heartbeat.map(|h| Time(at(h)));
            status.last_report_duration_milliseconds = Some(40);
        }
        site
    }

    #[test]
    fn a_later_renewal_is_the_heartbeat() {
        let mut s = site(Some("2026-12-06T10:00:00Z"));
        let changed = s.with_lease(Renewal {
            renew_time: Some(at("2026-12-06T10:00:30Z")),
            duration_ms: Some(12),
        });
        assert!(changed);
        let status = s.status.unwrap();
        assert_eq!(
            status.last_heartbeat_time,
            Some(Time(at("2026-12-06T10:00:30Z")))
        );
        assert_eq!(status.last_report_duration_milliseconds, Some(12));
    }

    /// A site takes its own renewal among many, and only its own.
    #[test]
    fn a_site_takes_its_own_renewal_among_the_fleets() {
        let later = Renewal {
            renew_time: Some(at("2026-12-06T10:00:30Z")),
            duration_ms: Some(12),
        };
        let others = std::collections::HashMap::from([("store-2".to_owned(), later)]);
        let mut s = site(Some("2026-12-06T10:00:00Z"));
        let before = s.clone();
        assert!(!s.with_lease_among(&others));
        assert_eq!(s, before);
        let mut fleet = others;
        fleet.insert("store-1".to_owned(), later);
        assert!(s.with_lease_among(&fleet));
        assert_eq!(
            s.status.unwrap().last_heartbeat_time,
            Some(Time(at("2026-12-06T10:00:30Z")))
        );
    }

    #[test]
    fn an_older_or_missing_renewal_leaves_the_status_heartbeat() {
        for lease in [
            Renewal::default(),
            Renewal {
                renew_time: Some(at("2026-12-06T09:59:00Z")),
                duration_ms: Some(12),
            },
            Renewal {
                renew_time: Some(at("2026-12-06T10:00:00Z")),
                duration_ms: Some(12),
            },
        ] {
            let mut s = site(Some("2026-12-06T10:00:00Z"));
            let before = s.clone();
            assert!(!s.with_lease(lease), "{lease:?}");
            assert_eq!(s, before);
        }
    }

    #[test]
    fn a_site_without_a_status_heartbeat_takes_the_lease() {
        let mut s = site(None);
        assert!(s.with_lease(Renewal {
            renew_time: Some(at("2026-12-06T10:00:30Z")),
            duration_ms: None,
        }));
        let status = s.status.unwrap();
        assert_eq!(
            status.last_heartbeat_time,
            Some(Time(at("2026-12-06T10:00:30Z")))
        );
        // No round trip in the lease: the status's stays.
        assert_eq!(status.last_report_duration_milliseconds, Some(40));
    }
}
