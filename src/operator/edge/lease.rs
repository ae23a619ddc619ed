//! The edge's heartbeat through its lease (`FederatedClusterLease` SITE,
//! `api::lease`): when a report carries nothing but the heartbeat, the
//! edge renews its lease instead of writing its site's status, so
//! `FederatedCluster.status` is written only when what the edge reports
//! changes (docs/architecture.md#liveness-the-lease).
//!
//! A fleet being upgraded keeps working. A site registered by an older
//! kubectl-fleet has no lease and a ClusterRole without the lease rule
//! (404 or 403), and a hub whose CRDs predate the lease does not serve it
//! at all (404): the edge then heartbeats through its status for that
//! report as before, logs once per cause what fixes it, and tries the
//! lease again only after [`LEASE_RETRY_HEARTBEATS`] status heartbeats, so
//! a re-registration takes effect without a restart. Any other failure of
//! a renewal is a failed report like any other (`Edge::classify`).

use std::collections::BTreeSet;

use kube::api::Api;

use super::Edge;
use crate::api::{FederatedClusterLease, Renewal};
use crate::k8s::site_lease::{renew_site_lease, renewal_patch, site_leases};

/// How many heartbeats the edge sends through its status, once its lease
/// could not be renewed (404 or 403), before it tries the lease again.
pub const LEASE_RETRY_HEARTBEATS: u32 = 10;

/// What the edge was doing when a renewal failed (its error's wording).
pub(super) const RENEWING: &str = "renewing its own lease";

/// Why the edge heartbeats through its status instead of its lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fallback {
    /// 404 naming the lease: the site has none (registered by an older
    /// kubectl-fleet, or the lease was deleted).
    NoLease,
    /// 403: the site's ClusterRole does not grant its lease (it predates it).
    Forbidden,
    /// 404 for the API itself: the hub's CRDs predate the lease.
    NotServed,
}

impl Fallback {
    /// A short stable name, for logs and tests.
    pub fn name(self) -> &'static str {
        match self {
            Fallback::NoLease => "no-lease",
            Fallback::Forbidden => "lease-forbidden",
            Fallback::NotServed => "lease-not-served",
        }
    }

    /// The line the user sees, once per cause: what is wrong, what the
    /// edge does meanwhile and what fixes it.
    fn line(self, site: &str) -> String {
        let meanwhile = "heartbeating through the site's status meanwhile (judged as before)";
        match self {
            Fallback::NoLease => format!(
                "site {site} has no FederatedClusterLease on the hub (404: registered by an older kubectl-fleet, or the lease was deleted); \
                 {meanwhile}: re-run `kubectl fleet register {site}` with this version to create it, and this edge switches to it by itself"
            ),
            Fallback::Forbidden => format!(
                "the site identity may not renew its FederatedClusterLease (403: its ClusterRole predates the lease); \
                 {meanwhile}: re-run `kubectl fleet register {site}` with this version to grant it, and this edge switches to it by itself"
            ),
            Fallback::NotServed => format!(
                "the hub does not serve FederatedClusterLease (404: its fleet CRDs predate this edge); {meanwhile}: \
                 install the new CRDs on the hub (`kubectl fleet install --apply`), then re-run `kubectl fleet register {site}`"
            ),
        }
    }
}

/// What the edge knows of its lease.
#[derive(Debug, Default)]
pub(super) struct LeaseState {
    /// Why the last renewal could not be made, while heartbeating through
    /// the status; None while the lease is renewed (or not tried yet).
    fallback: Option<Fallback>,
    /// Status heartbeats left before the lease is tried again.
    retry_in: u32,
    /// The causes already logged (each once per process).
    logged: BTreeSet<Fallback>,
    /// Whether a renewal has succeeded since the process started or since
    /// the last fallback (the switch to the lease is logged once).
    renewing: bool,
    /// When (edge clock) a renewal first met a 404 for the lease API
    /// itself since the last renewal accepted.
    unserved_since: Option<jiff::Timestamp>,
}

impl LeaseState {
    /// Whether this heartbeat goes to the lease.
    pub(super) fn to_lease(&self) -> bool {
        self.retry_in == 0
    }

    /// A heartbeat went through the status instead.
    pub(super) fn heartbeat_through_status(&mut self) {
        self.retry_in = self.retry_in.saturating_sub(1);
    }

    /// Why the edge heartbeats through its status now, if it does.
    pub(super) fn fallback(&self) -> Option<Fallback> {
        self.fallback
    }
}

/// What one attempt at renewing the lease came to.
pub(super) enum Renewed {
    /// The hub accepted it: the body sent.
    Accepted(serde_json::Value),
    /// The lease cannot be renewed (404, 403): heartbeat through the status.
    FellBack,
    /// Any other failure: a failed report.
    Failed(kube::Error),
}

impl Edge {
    /// Renews the site's lease with `renewal` (one JSON merge patch of its
    /// spec), keeping its round trip as the next report's.
    pub(super) async fn renew_lease(&mut self, client: kube::Client, renewal: Renewal) -> Renewed {
        let api: Api<FederatedClusterLease> = site_leases(client);
        let sending = std::time::Instant::now();
        match renew_site_lease(&api, &self.cfg.site, renewal).await {
            Ok(()) => {
                self.last_report_ms =
                    Some(super::super::metrics::report_duration_ms(sending.elapsed()));
                let lease = &mut self.lease;
                if !lease.renewing {
                    tracing::info!(
                        site = %self.cfg.site,
                        "renewing the site's FederatedClusterLease: its status is written only when what it reports changes"
                    );
                }
                lease.renewing = true;
                lease.fallback = None;
                lease.unserved_since = None;
                Renewed::Accepted(renewal_patch(renewal))
            }
            Err(e) => match fallback_of(&e, &self.cfg.site) {
                // The lease API unserved while the edge was renewing its
                // lease: an API server that has just started, for a while
                // (`super::NOT_SERVED_PATIENCE`), a failed report retried
                // soon, not status heartbeats.
                Some(Fallback::NotServed)
                    if self.lease.renewing
                        && super::still_patient(&mut self.lease.unserved_since, (self.clock)()) =>
                {
                    Renewed::Failed(e)
                }
                Some(cause) => {
                    let lease = &mut self.lease;
                    lease.renewing = false;
                    lease.fallback = Some(cause);
                    lease.retry_in = LEASE_RETRY_HEARTBEATS;
                    if lease.logged.insert(cause) {
                        tracing::warn!(site = %self.cfg.site, cause = cause.name(), "{}", cause.line(&self.cfg.site));
                    } else {
                        tracing::debug!(site = %self.cfg.site, cause = cause.name(), "the lease still cannot be renewed; heartbeating through the status");
                    }
                    Renewed::FellBack
                }
                None => Renewed::Failed(e),
            },
        }
    }
}

/// The fallback a failed renewal calls for, if any: 403, or 404 (the lease
/// missing names it; the API missing does not).
fn fallback_of(err: &kube::Error, site: &str) -> Option<Fallback> {
    match crate::k8s::status_code(err) {
        Some(403) => Some(Fallback::Forbidden),
        Some(404) if crate::k8s::is_missing_object(err, site) => Some(Fallback::NoLease),
        Some(404) => Some(Fallback::NotServed),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error(code: u16, message: &str) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure(message, "NotFound")
                .with_code(code)
                .boxed(),
        )
    }

    #[test]
    fn a_renewal_falls_back_on_404_and_403_only() {
        let missing = api_error(
            404,
            "federatedclusterleases.federation.kubectl-fleet.dev \"site-a\" not found",
        );
        assert_eq!(fallback_of(&missing, "site-a"), Some(Fallback::NoLease));
        let unserved = api_error(404, "the server could not find the requested resource");
        assert_eq!(fallback_of(&unserved, "site-a"), Some(Fallback::NotServed));
        let denied = api_error(403, "forbidden");
        assert_eq!(fallback_of(&denied, "site-a"), Some(Fallback::Forbidden));
        for code in [429, 500, 503, 422] {
            assert_eq!(fallback_of(&api_error(code, "x"), "site-a"), None, "{code}");
        }
    }

    #[test]
    fn each_fallback_names_its_fix() {
        for cause in [Fallback::NoLease, Fallback::Forbidden] {
            assert!(
                cause
                    .line("site-a")
                    .contains("re-run `kubectl fleet register site-a` with this version"),
                "{cause:?}"
            );
        }
        assert!(
            Fallback::NotServed
                .line("site-a")
                .contains("`kubectl fleet install --apply`")
        );
    }

    #[test]
    fn the_lease_is_tried_again_after_ten_status_heartbeats() {
        let mut s = LeaseState::default();
        assert!(s.to_lease());
        s.retry_in = LEASE_RETRY_HEARTBEATS;
        for _ in 0..LEASE_RETRY_HEARTBEATS {
            assert!(!s.to_lease());
            s.heartbeat_through_status();
        }
        assert!(s.to_lease());
    }

    #[test]
    fn the_body_is_the_spec_and_cleared_managed_fields() {
        let body = renewal_patch(Renewal {
            renew_time: Some("2026-12-06T10:00:30Z".parse().unwrap()),
            duration_ms: Some(10),
        });
        assert_eq!(
            body,
            serde_json::json!({
                "metadata": {"managedFields": [{}]},
                "spec": {"renewTime": "2026-12-06T10:00:30Z", "lastRenewDurationMilliseconds": 10},
            })
        );
    }
}
