//! Site status I/O for the operator: read a site, send the edge's merge
//! patch, replace the hub-owned part with the resourceVersion, and check
//! that the fleet CRDs are served.

use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::Value;

use crate::api::{API_VERSION, FederatedCluster};

/// The cluster-scoped FederatedCluster API.
pub fn sites(client: kube::Client) -> Api<FederatedCluster> {
    Api::all(client)
}

/// Reads one site (the edge identity may read only its own).
pub async fn get_site(
    api: &Api<FederatedCluster>,
    name: &str,
) -> Result<FederatedCluster, kube::Error> {
    api.get(name).await
}

/// Sends a JSON merge patch (`{"status": {...}}`) to the site's `/status`.
pub async fn patch_site_status(
    api: &Api<FederatedCluster>,
    name: &str,
    patch: &Value,
) -> Result<FederatedCluster, kube::Error> {
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
}

/// Replaces the site's `/status` with `site.status`, guarded by
/// `site.metadata.resourceVersion`: if anyone wrote since it was read the
/// API server answers 409 and nothing is written.
pub async fn replace_site_status(
    api: &Api<FederatedCluster>,
    site: &FederatedCluster,
) -> Result<FederatedCluster, kube::Error> {
    let name = site.metadata.name.clone().unwrap_or_default();
    api.replace_status(&name, &PostParams::default(), site)
        .await
}

/// Whether the API server serves `federatedclusters` in the fleet group
/// (discovery; any authenticated identity may ask).
pub async fn crds_installed(client: &kube::Client) -> Result<bool, kube::Error> {
    match client.list_api_group_resources(API_VERSION).await {
        Ok(list) => Ok(list.resources.iter().any(|r| r.name == "federatedclusters")),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(false),
        Err(e) => Err(e),
    }
}
