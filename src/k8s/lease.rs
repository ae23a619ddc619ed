//! Lease I/O for the hub operator's leader election (coordination.k8s.io/v1).
//!
//! Domain verbs only: the elector in `operator::leader` decides, this module
//! talks to the API server. Every update is a resourceVersion-guarded replace,
//! so two replicas racing for the same Lease get a 409 instead of both winning.

use futures::{Stream, StreamExt as _};
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, PostParams};
use kube::runtime::{WatchStreamExt as _, watcher};

/// The Lease API in one namespace.
pub fn lease_api(client: kube::Client, namespace: &str) -> Api<Lease> {
    Api::namespaced(client, namespace)
}

/// Reads a Lease; `Ok(None)` when it does not exist yet.
pub async fn get_lease(api: &Api<Lease>, name: &str) -> Result<Option<Lease>, kube::Error> {
    api.get_opt(name).await
}

/// Creates a Lease; fails with 409 AlreadyExists when another replica won.
pub async fn create_lease(api: &Api<Lease>, lease: &Lease) -> Result<Lease, kube::Error> {
    api.create(&PostParams::default(), lease).await
}

/// Replaces a Lease. `lease.metadata.resourceVersion` must be the version
/// that was read, so a concurrent writer makes this fail with 409.
pub async fn replace_lease(api: &Api<Lease>, lease: &Lease) -> Result<Lease, kube::Error> {
    let name = lease.metadata.name.clone().unwrap_or_default();
    api.replace(&name, &PostParams::default(), lease).await
}

/// Every version of the Lease `name` as the API server writes it (a watch
/// on that one object, re-established with backoff after errors, which are
/// passed on). A standby elector observes renewals through it as they
/// happen.
pub fn lease_changes(
    api: Api<Lease>,
    name: &str,
) -> impl Stream<Item = Result<Lease, watcher::Error>> + Send + 'static {
    let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
    watcher(api, config)
        .default_backoff()
        .applied_objects()
        .boxed()
}
