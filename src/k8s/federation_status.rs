//! I/O for the hub's `FederationStatus` singleton (`fleet`).

use kube::api::{Api, PostParams};

use crate::api::{FEDERATION_STATUS_NAME, FederationStatus};

/// The cluster-scoped FederationStatus API.
pub fn federation_statuses(client: kube::Client) -> Api<FederationStatus> {
    Api::all(client)
}

/// Reads the singleton; `Ok(None)` when it does not exist yet.
pub async fn get_federation_status(
    api: &Api<FederationStatus>,
) -> Result<Option<FederationStatus>, kube::Error> {
    api.get_opt(FEDERATION_STATUS_NAME).await
}

/// Creates the singleton (its status is set by a following status write,
/// since the API server drops status on create).
pub async fn create_federation_status(
    api: &Api<FederationStatus>,
    obj: &FederationStatus,
) -> Result<FederationStatus, kube::Error> {
    api.create(&PostParams::default(), obj).await
}

/// Replaces the singleton's `/status`, guarded by its resourceVersion.
pub async fn replace_federation_status(
    api: &Api<FederationStatus>,
    obj: &FederationStatus,
) -> Result<FederationStatus, kube::Error> {
    api.replace_status(FEDERATION_STATUS_NAME, &PostParams::default(), obj)
        .await
}
