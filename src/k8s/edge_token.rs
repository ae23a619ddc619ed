//! Site tokens: the one TokenRequest path ([`request_token`]), used by
//! `register` and `rotate` with the admin's credentials and by the edge's
//! own renewal ([`request_site_token`]: made with the site identity itself,
//! which `register` allows for exactly its ServiceAccount); and
//! persisting the renewed hub kubeconfig in the Secret on the MEMBER cluster
//! that the edge pod mounts, so a restart finds the new token.
//!
//! The edge renews the token of the ServiceAccount it *is*: the namespace
//! comes from its current token's claims (`fleet-sites` for a site
//! registered now, `fleet-system` for one registered before the site
//! identities moved), not from a constant.

use jiff::Timestamp;
use k8s_openapi::ByteString;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::api::{Api, PostParams};

use crate::fleet::rbac::{SITES_NAMESPACE, edge_identity_name, validate_site_name};

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
    #[error("the API server answered the token request without a token")]
    Empty,
}

/// The namespace of the site's ServiceAccount, from the namespace claim
/// of the token it holds now (`kubernetes.io.namespace`, or the `sub`
/// `system:serviceaccount:NAMESPACE:NAME`); [`SITES_NAMESPACE`] when the
/// claims name none that is a valid namespace name.
pub fn site_namespace(claimed: Option<&str>) -> &str {
    claimed
        .filter(|ns| validate_site_name(ns).is_ok())
        .unwrap_or(SITES_NAMESPACE)
}

/// Requests a token for the site's own ServiceAccount `fleet-edge-SITE`
/// in the namespace its current token names (`claimed_namespace`, see
/// [`site_namespace`]), valid for `expiration_seconds` (the server may
/// cap it) and for `audiences` (empty: the API server's default audience).
pub async fn request_site_token(
    hub: &kube::Client,
    site: &str,
    claimed_namespace: Option<&str>,
    expiration_seconds: i64,
    audiences: Vec<String>,
) -> Result<MintedToken, TokenError> {
    request_token(
        hub,
        site_namespace(claimed_namespace),
        &edge_identity_name(site),
        expiration_seconds,
        audiences,
    )
    .await
}

/// The one TokenRequest of the product (`register`, `rotate` and the edge's
/// renewal): a token for ServiceAccount `NAMESPACE/SERVICE_ACCOUNT`.
pub async fn request_token(
    client: &kube::Client,
    namespace: &str,
    service_account: &str,
    expiration_seconds: i64,
    audiences: Vec<String>,
) -> Result<MintedToken, TokenError> {
    let api: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
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
        .create_token_request(service_account, &PostParams::default(), &req)
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

/// A Secret on the member cluster, `NAMESPACE/NAME`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretName {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl std::str::FromStr for SecretName {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split_once('/') {
            Some((ns, name)) if !ns.is_empty() && !name.is_empty() && !name.contains('/') => {
                Ok(Self {
                    namespace: ns.to_owned(),
                    name: name.to_owned(),
                })
            }
            _ => Err(format!(
                "{s:?} is not NAMESPACE/NAME (e.g. fleet-system/fleet-hub-kubeconfig)"
            )),
        }
    }
}

impl std::fmt::Display for SecretName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Replaces key `key` of the member Secret `secret` with `kubeconfig`
/// (get, then update at the read resourceVersion: needs exactly the rights
/// of [`crate::fleet::rbac::edge_secret_rules`]). Other keys are kept.
pub async fn store_hub_kubeconfig(
    member: &kube::Client,
    secret: &SecretName,
    key: &str,
    kubeconfig: &str,
) -> Result<(), kube::Error> {
    let api: Api<Secret> = Api::namespaced(member.clone(), &secret.namespace);
    let mut current = api.get(&secret.name).await?;
    // `stringData` would win over `data` on the write; it is write-only, so
    // a read never carries it, but a hand-made object might.
    if let Some(sd) = current.string_data.as_mut() {
        sd.remove(key);
    }
    current
        .data
        .get_or_insert_default()
        .insert(key.to_owned(), ByteString(kubeconfig.as_bytes().to_vec()));
    api.replace(&secret.name, &PostParams::default(), &current)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_site_namespace_is_the_one_the_token_names() {
        assert_eq!(site_namespace(Some("fleet-sites")), "fleet-sites");
        // A site registered before the identities moved.
        assert_eq!(site_namespace(Some("fleet-system")), "fleet-system");
        assert_eq!(site_namespace(None), "fleet-sites");
        // Not a namespace name: never put into a request path.
        for odd in ["", "a/b", "../x", "A"] {
            assert_eq!(site_namespace(Some(odd)), "fleet-sites", "{odd:?}");
        }
    }

    #[test]
    fn secret_names_parse_as_namespace_slash_name() {
        let s: SecretName = "fleet-system/fleet-hub-kubeconfig".parse().unwrap();
        assert_eq!(s.namespace, "fleet-system");
        assert_eq!(s.name, "fleet-hub-kubeconfig");
        assert_eq!(s.to_string(), "fleet-system/fleet-hub-kubeconfig");
        for bad in ["", "name", "/name", "ns/", "a/b/c"] {
            assert!(bad.parse::<SecretName>().is_err(), "{bad}");
        }
    }
}
