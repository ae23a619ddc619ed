//! The edge's own token renewal: a TokenRequest for its ServiceAccount on
//! the hub (`fleet-system/fleet-edge-SITE`), made with the site identity
//! itself, which `register` allows for exactly that ServiceAccount.

use jiff::Timestamp;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, PostParams};

use crate::fleet::rbac::{FLEET_NAMESPACE, edge_identity_name};

/// A freshly minted token and its expiry as the API server set it. Not
/// `Debug`, so the token cannot end up in a log by accident.
pub struct MintedToken {
    /// The bearer token.
    pub token: String,
    /// `status.expirationTimestamp`.
    pub expires_at: Timestamp,
}

/// A token renewal that failed.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The API server refused or could not be reached.
    #[error("requesting a token for the site's ServiceAccount")]
    Request(#[source] kube::Error),
    /// The answer carried no token.
    #[error("the token request for the site's ServiceAccount returned no token")]
    Empty,
}

/// Requests a token for the site's own ServiceAccount, valid for
/// `expiration_seconds` (the server may cap it) and for `audiences` (empty:
/// the API server's default audience).
pub async fn request_site_token(
    hub: &kube::Client,
    site: &str,
    expiration_seconds: i64,
    audiences: Vec<String>,
) -> Result<MintedToken, TokenError> {
    let api: Api<ServiceAccount> = Api::namespaced(hub.clone(), FLEET_NAMESPACE);
    let req = TokenRequest {
        metadata: Default::default(),
        spec: TokenRequestSpec {
            audiences,
            expiration_seconds: Some(expiration_seconds),
            bound_object_ref: None,
        },
        status: None,
    };
    let resp: TokenRequest = api
        .create_subresource(
            "token",
            &edge_identity_name(site),
            &PostParams::default(),
            &req,
        )
        .await
        .map_err(TokenError::Request)?;
    let status = resp
        .status
        .filter(|s| !s.token.is_empty())
        .ok_or(TokenError::Empty)?;
    Ok(MintedToken {
        token: status.token,
        expires_at: status.expiration_timestamp.0,
    })
}
