//! I/O for the hub's `FederationStatus` singleton (`fleet`), shared by the
//! operator and the CLI (functions over `Api<FederationStatus>` answering
//! `kube::Error`, as `k8s::site_status`).

use kube::api::{Api, Patch, PatchParams, PostParams};

use crate::api::{FEDERATION_STATUS_NAME, FederationStatus, HubLiveness};

/// The cluster-scoped FederationStatus API.
pub fn federation_statuses(client: kube::Client) -> Api<FederationStatus> {
    Api::all(client)
}

/// Reads the singleton; `Ok(None)` when it does not exist yet (a 404 that
/// names it: a cluster that does not serve the kind answers a 404 naming
/// nothing, which stays an error the CLI tells as a missing CRD).
pub async fn get_federation_status(
    api: &Api<FederationStatus>,
) -> Result<Option<FederationStatus>, kube::Error> {
    match api.get(FEDERATION_STATUS_NAME).await {
        Ok(status) => Ok(Some(status)),
        Err(kube::Error::Api(s))
            if s.code == 404 && s.details.as_ref().is_some_and(|d| !d.name.is_empty()) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
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

/// Sets `status.hub` of the singleton (the leader's liveness record) with
/// a JSON merge patch, leaving the summary as it is; a summary write
/// (a resourceVersion-guarded replace of `/status`) that read the object
/// before this patch gets a 409 and re-reads, so neither clobbers the
/// other. Creates the singleton first when it does not exist.
pub async fn record_hub_liveness(
    api: &Api<FederationStatus>,
    record: &HubLiveness,
) -> Result<(), kube::Error> {
    let patch = Patch::Merge(serde_json::json!({ "status": { "hub": record } }));
    for _ in 0..2 {
        match api
            .patch_status(FEDERATION_STATUS_NAME, &PatchParams::default(), &patch)
            .await
        {
            Ok(_) => return Ok(()),
            Err(e) if super::is_missing(&e) => {
                match create_federation_status(
                    api,
                    &FederationStatus::singleton(Default::default()),
                )
                .await
                {
                    Ok(_) => {}
                    Err(e) if super::is_conflict(&e) => {}
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        }
    }
    api.patch_status(FEDERATION_STATUS_NAME, &PatchParams::default(), &patch)
        .await
        .map(|_| ())
}
