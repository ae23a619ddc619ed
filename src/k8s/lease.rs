//! Lease I/O for the hub operator's leader election (coordination.k8s.io/v1).
//!
//! Domain verbs only: the elector in `operator::leader` decides, this module
//! talks to the API server. Every update is a resourceVersion-guarded replace,
//! so two replicas racing for the same Lease get a 409 instead of both winning.

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, PostParams};

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
