//! `FederatedClusterLease` I/O (a site's heartbeat object, `api::lease`):
//! the edge's renewal, and the hub's watch of every lease, which keeps of
//! each only its [`Renewal`] (a few bytes: no object is cached).
//!
//! Functions over `Api<FederatedClusterLease>` answering `kube::Error`, as
//! [`super::site_status`] is for the site objects.

use futures::{Stream, TryStreamExt as _};
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use kube::runtime::watcher;
use serde_json::Value;

use crate::api::{FederatedClusterLease, Renewal};

/// The cluster-scoped FederatedClusterLease API.
pub fn site_leases(client: kube::Client) -> Api<FederatedClusterLease> {
    Api::all(client)
}

/// Renews the lease `name`: one JSON merge patch of its `spec`.
pub async fn renew_site_lease(
    api: &Api<FederatedClusterLease>,
    name: &str,
    renewal: Renewal,
) -> Result<(), kube::Error> {
    let patch = renewal_patch(renewal);
    // Decoded as a DynamicObject: the answer is not read, and a lease
    // that would not type must not fail a renewal the server accepted.
    Api::<DynamicObject>::all_with(api.clone().into_client(), &resource())
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(|_| ())
}

fn resource() -> ApiResource {
    ApiResource::erase::<FederatedClusterLease>(&())
}

/// One lease as a reader keeps it: its site's name and its [`Renewal`],
/// read field by field. A lease that cannot be read (a renew time that is
/// not a date-time, a round trip out of range) is a lease without that
/// field, never an error of the watch: one lease cannot stop the hub
/// reading the others.
pub fn renewal_of(lease: &DynamicObject) -> (String, Renewal) {
    let spec = lease.data.get("spec");
    let renew_time = spec
        .and_then(|s| s.get("renewTime"))
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<jiff::Timestamp>().ok());
    let duration_ms = spec
        .and_then(|s| s.get("lastRenewDurationMilliseconds"))
        .and_then(Value::as_i64)
        .filter(|ms| (0..=86_400_000).contains(ms));
    (
        lease.metadata.name.clone().unwrap_or_default(),
        Renewal {
            renew_time,
            duration_ms,
        },
    )
}

/// Watches every site lease, each event carrying the lease's site and its
/// [`Renewal`] ([`renewal_of`]): lists in pages of
/// [`super::site_status::LIST_PAGE`], never the whole fleet's leases in one
/// response.
pub fn watch_site_leases(
    client: kube::Client,
) -> impl Stream<Item = Result<watcher::Event<(String, Renewal)>, watcher::Error>> + Send + 'static
{
    let api = Api::<DynamicObject>::all_with(client, &resource());
    let config = watcher::Config::default().page_size(super::site_status::LIST_PAGE);
    watcher(api, config).map_ok(|event| match event {
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitApply(l) => watcher::Event::InitApply(renewal_of(&l)),
        watcher::Event::InitDone => watcher::Event::InitDone,
        watcher::Event::Apply(l) => watcher::Event::Apply(renewal_of(&l)),
        watcher::Event::Delete(l) => watcher::Event::Delete(renewal_of(&l)),
    })
}

/// The JSON merge patch body of a renewal ([`renew_site_lease`]): the
/// lease's `spec` alone, nothing of its metadata (the admission policy
/// `fleet-site-lease` refuses a site identity anything else).
pub fn renewal_patch(renewal: Renewal) -> Value {
    let mut spec = serde_json::Map::new();
    if let Some(t) = renewal.renew_time {
        spec.insert("renewTime".into(), Value::String(t.to_string()));
    }
    if let Some(ms) = renewal.duration_ms {
        spec.insert("lastRenewDurationMilliseconds".into(), ms.into());
    }
    serde_json::json!({ "spec": spec })
}
