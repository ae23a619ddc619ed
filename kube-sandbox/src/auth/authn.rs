//! Who is calling: ServiceAccount tokens (signed JWTs bound to the
//! ServiceAccount's uid, with audiences and expiry) and impersonation.
//!
//! STUB: interface fixed, implementation owned by the "sandbox auth" work.

use std::collections::BTreeMap;

/// The authenticated user, as `user.Info` in the real server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserInfo {
    pub username: String,
    pub uid: String,
    /// Always includes `system:authenticated` for authenticated users.
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

/// The claims of a ServiceAccount token this server minted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceAccountClaims {
    pub namespace: String,
    pub name: String,
    /// uid of the ServiceAccount the token is bound to.
    pub uid: String,
    pub audiences: Vec<String>,
    /// Unix seconds.
    pub issued_at: i64,
    /// Unix seconds.
    pub expires_at: i64,
}

/// Why a token was not accepted (the client only ever sees 401).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthnError {
    #[error("token is malformed")]
    Malformed,
    #[error("token signature is invalid")]
    BadSignature,
    #[error("token has expired")]
    Expired,
}

/// Mints and verifies ServiceAccount tokens with a per-server secret key.
#[derive(Debug, Clone)]
pub struct TokenIssuer {
    #[allow(dead_code)] // STUB: used once implemented
    key: Vec<u8>,
}

impl TokenIssuer {
    /// A new issuer with a random key.
    pub fn new() -> Self {
        TokenIssuer {
            key: uuid::Uuid::new_v4().as_bytes().to_vec(),
        }
    }

    /// A signed JWT for `system:serviceaccount:NS:NAME`.
    pub fn issue(&self, claims: &ServiceAccountClaims) -> String {
        format!("stub.{}.{}.{}", claims.namespace, claims.name, claims.uid)
    }

    /// Checks signature and expiry at `now` (unix seconds). The caller checks
    /// that the ServiceAccount still exists with `claims.uid`.
    pub fn verify(&self, _token: &str, _now: i64) -> Result<ServiceAccountClaims, AuthnError> {
        Err(AuthnError::Malformed)
    }
}

impl Default for TokenIssuer {
    fn default() -> Self {
        Self::new()
    }
}

/// The user a ServiceAccount token authenticates as:
/// `system:serviceaccount:NS:NAME` in groups `system:serviceaccounts`,
/// `system:serviceaccounts:NS`, `system:authenticated`.
pub fn service_account_user(claims: &ServiceAccountClaims) -> UserInfo {
    UserInfo {
        username: format!("system:serviceaccount:{}:{}", claims.namespace, claims.name),
        uid: claims.uid.clone(),
        groups: vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{}", claims.namespace),
            "system:authenticated".into(),
        ],
        extra: BTreeMap::new(),
    }
}

/// The `Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid` and
/// `Impersonate-Extra-*` headers of one request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Impersonation {
    pub user: Option<String>,
    pub groups: Vec<String>,
    pub uid: Option<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

impl Impersonation {
    /// The user the request acts as once impersonation is allowed
    /// (a `system:serviceaccount:NS:NAME` user gets the ServiceAccount groups;
    /// `system:authenticated` is added as the real server does).
    pub fn target_user(&self) -> Option<UserInfo> {
        self.user.as_ref().map(|u| UserInfo {
            username: u.clone(),
            uid: self.uid.clone().unwrap_or_default(),
            groups: self.groups.clone(),
            extra: self.extra.clone(),
        })
    }
}
