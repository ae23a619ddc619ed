//! Who is calling: ServiceAccount tokens (signed JWTs bound to the
//! ServiceAccount's uid, with audiences and expiry) and impersonation.
//!
//! Tokens carry the same claims as the real bound ServiceAccount tokens
//! (`iss`, `sub`, `aud`, `exp`, `iat`, `nbf`, `jti`, `kubernetes.io`), but are
//! signed with HS256 under a per-server random key instead of RS256: nothing
//! outside this server ever needs to verify them.

use super::types::{Attributes, UserInfo};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use std::collections::BTreeMap;

/// The issuer of every token, and the API server's default audience
/// (`--service-account-issuer` / `--api-audiences` of a kubeadm cluster).
pub const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// `user.Info` extra key holding the token's `JTI=...` (as the real server
/// sets it for ServiceAccount tokens since 1.29).
pub const CREDENTIAL_ID_EXTRA: &str = "authentication.kubernetes.io/credential-id";

/// Group every authenticated user is in.
pub const ALL_AUTHENTICATED: &str = "system:authenticated";
/// Group every unauthenticated request is in.
pub const ALL_UNAUTHENTICATED: &str = "system:unauthenticated";
/// Group of every ServiceAccount.
pub const ALL_SERVICE_ACCOUNTS: &str = "system:serviceaccounts";
/// Username prefix of ServiceAccounts.
pub const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";
/// The anonymous user.
pub const ANONYMOUS: &str = "system:anonymous";

type HmacSha256 = Hmac<Sha256>;

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

/// A token that passed [`TokenIssuer::verify_token`]: its claims and its `jti`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedToken {
    pub claims: ServiceAccountClaims,
    /// The token's unique id (`jti` claim).
    pub jti: String,
}

impl VerifiedToken {
    /// The user the token authenticates as, with the
    /// `authentication.kubernetes.io/credential-id: JTI=...` extra the real
    /// server adds.
    pub fn user(&self) -> UserInfo {
        let mut user = service_account_user(&self.claims);
        if !self.jti.is_empty() {
            user.extra.insert(
                CREDENTIAL_ID_EXTRA.to_string(),
                vec![format!("JTI={}", self.jti)],
            );
        }
        user
    }
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
#[derive(Clone)]
pub struct TokenIssuer {
    key: Vec<u8>,
}

impl std::fmt::Debug for TokenIssuer {
    // The key signs every token: never print it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenIssuer").finish_non_exhaustive()
    }
}

impl TokenIssuer {
    /// A new issuer with a random 256-bit key.
    pub fn new() -> Self {
        let mut key = Vec::with_capacity(32);
        key.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
        key.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
        TokenIssuer { key }
    }

    fn mac(&self) -> HmacSha256 {
        HmacSha256::new_from_slice(&self.key).expect("hmac accepts keys of any length")
    }

    /// A signed JWT for `system:serviceaccount:NS:NAME`.
    pub fn issue(&self, claims: &ServiceAccountClaims) -> String {
        let header = json!({"alg": "HS256", "typ": "JWT"});
        let payload = json!({
            "aud": claims.audiences,
            "exp": claims.expires_at,
            "iat": claims.issued_at,
            "iss": ISSUER,
            "jti": uuid::Uuid::new_v4().to_string(),
            "kubernetes.io": {
                "namespace": claims.namespace,
                "serviceaccount": {"name": claims.name, "uid": claims.uid},
            },
            "nbf": claims.issued_at,
            "sub": format!("{SERVICE_ACCOUNT_PREFIX}{}:{}", claims.namespace, claims.name),
        });
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(payload.to_string())
        );
        let mut mac = self.mac();
        mac.update(signing_input.as_bytes());
        let sig = mac.finalize().into_bytes();
        format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(sig))
    }

    /// Checks signature and expiry at `now` (unix seconds). The caller checks
    /// that the ServiceAccount still exists with `claims.uid`.
    pub fn verify(&self, token: &str, now: i64) -> Result<ServiceAccountClaims, AuthnError> {
        self.verify_token(token, now).map(|v| v.claims)
    }

    /// Like [`TokenIssuer::verify`], also returning the token's `jti`.
    ///
    /// Expiry is strict (`exp <= now` is expired): the real server allows a
    /// minute of clock skew, which would only make expiry tests slower here.
    pub fn verify_token(&self, token: &str, now: i64) -> Result<VerifiedToken, AuthnError> {
        let mut parts = token.split('.');
        let (Some(h), Some(p), Some(s), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(AuthnError::Malformed);
        };
        let header: Value = decode_json(h)?;
        if header.get("alg").and_then(Value::as_str) != Some("HS256") {
            return Err(AuthnError::Malformed);
        }
        let sig = URL_SAFE_NO_PAD
            .decode(s)
            .map_err(|_| AuthnError::Malformed)?;
        let mut mac = self.mac();
        mac.update(h.as_bytes());
        mac.update(b".");
        mac.update(p.as_bytes());
        // verify_slice compares in constant time.
        mac.verify_slice(&sig)
            .map_err(|_| AuthnError::BadSignature)?;

        let payload: Value = decode_json(p)?;
        let verified = parse_claims(&payload).ok_or(AuthnError::Malformed)?;
        if verified.claims.expires_at <= now {
            return Err(AuthnError::Expired);
        }
        Ok(verified)
    }
}

impl Default for TokenIssuer {
    fn default() -> Self {
        Self::new()
    }
}

fn decode_json(part: &str) -> Result<Value, AuthnError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(part)
        .map_err(|_| AuthnError::Malformed)?;
    serde_json::from_slice(&bytes).map_err(|_| AuthnError::Malformed)
}

fn parse_claims(payload: &Value) -> Option<VerifiedToken> {
    if payload.get("iss")?.as_str()? != ISSUER {
        return None;
    }
    let k8s = payload.get("kubernetes.io")?;
    let namespace = k8s.get("namespace")?.as_str()?.to_string();
    let sa = k8s.get("serviceaccount")?;
    let name = sa.get("name")?.as_str()?.to_string();
    let uid = sa.get("uid")?.as_str()?.to_string();
    if payload.get("sub")?.as_str()? != format!("{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}") {
        return None;
    }
    // `aud` may be a single string or a list, as in any JWT.
    let audiences = match payload.get("aud")? {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()?,
        _ => return None,
    };
    Some(VerifiedToken {
        claims: ServiceAccountClaims {
            namespace,
            name,
            uid,
            audiences,
            issued_at: payload.get("iat")?.as_i64()?,
            expires_at: payload.get("exp")?.as_i64()?,
        },
        jti: payload
            .get("jti")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    })
}

/// The audiences a token is good for among `wanted` (the TokenReview's
/// `spec.audiences`, or the API server's own audience when empty). Empty
/// means the token must be rejected.
pub fn authenticated_audiences(token_audiences: &[String], wanted: &[String]) -> Vec<String> {
    let api = [ISSUER.to_string()];
    let wanted = if wanted.is_empty() { &api[..] } else { wanted };
    wanted
        .iter()
        .filter(|w| token_audiences.contains(w))
        .cloned()
        .collect()
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

/// `(namespace, name)` of a `system:serviceaccount:NS:NAME` username, when
/// both parts are valid names (`serviceaccount.SplitUsername`).
pub fn split_service_account_username(username: &str) -> Option<(&str, &str)> {
    let rest = username.strip_prefix(SERVICE_ACCOUNT_PREFIX)?;
    let mut parts = rest.split(':');
    let (Some(ns), Some(name), None) = (parts.next(), parts.next(), parts.next()) else {
        return None;
    };
    (is_dns1123_label(ns) && is_dns1123_subdomain(name)).then_some((ns, name))
}

fn is_dns1123_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns1123_label)
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
    /// Whether any impersonation header was sent.
    pub fn is_requested(&self) -> bool {
        self.user.is_some()
            || !self.groups.is_empty()
            || self.uid.is_some()
            || !self.extra.is_empty()
    }

    /// The user the request acts as once impersonation is allowed
    /// (a `system:serviceaccount:NS:NAME` user gets the ServiceAccount groups;
    /// `system:authenticated` is added as the real server does).
    ///
    /// `None` without `Impersonate-User`: groups, uid or extra alone are
    /// rejected by the real server (`requested [...] without impersonating a user`).
    pub fn target_user(&self) -> Option<UserInfo> {
        let username = self.user.clone()?;
        let mut groups = self.groups.clone();
        if self.groups.is_empty()
            && let Some((ns, _)) = split_service_account_username(&username)
        {
            // A ServiceAccount's groups are a fixed mapping, so the real
            // filter supplies them when none were asked for.
            groups = vec![
                ALL_SERVICE_ACCOUNTS.to_string(),
                format!("{ALL_SERVICE_ACCOUNTS}:{ns}"),
            ];
        }
        if username == ANONYMOUS {
            if !groups.iter().any(|g| g == ALL_UNAUTHENTICATED) {
                groups.push(ALL_UNAUTHENTICATED.to_string());
            }
        } else if !groups
            .iter()
            .any(|g| g == ALL_AUTHENTICATED || g == ALL_UNAUTHENTICATED)
        {
            groups.push(ALL_AUTHENTICATED.to_string());
        }
        Some(UserInfo {
            username,
            uid: self.uid.clone().unwrap_or_default(),
            groups,
            extra: self.extra.clone(),
        })
    }
}

/// One authorization check per impersonated attribute, in the real filter's
/// order: the user (`users`, or `serviceaccounts` in its namespace), each
/// group, each extra value (`userextras/KEY` in `authentication.k8s.io`) and
/// the uid (`uids` in `authentication.k8s.io`). Every one must be allowed
/// for `requestor` before [`Impersonation::target_user`] is used; a denial is
/// answered with [`super::rbac::forbidden_message`] of that check.
pub fn impersonation_checks(imp: &Impersonation, requestor: &UserInfo) -> Vec<Attributes> {
    let check =
        |group: &str, resource: &str, subresource: &str, namespace: &str, name: &str| Attributes {
            user: requestor.clone(),
            verb: "impersonate".to_string(),
            resource_request: true,
            api_group: group.to_string(),
            api_version: "v1".to_string(),
            resource: resource.to_string(),
            subresource: subresource.to_string(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            ..Default::default()
        };
    let mut checks = Vec::new();
    if let Some(user) = &imp.user {
        checks.push(match split_service_account_username(user) {
            Some((ns, name)) => check("", "serviceaccounts", "", ns, name),
            None => check("", "users", "", "", user),
        });
    }
    for g in &imp.groups {
        checks.push(check("", "groups", "", "", g));
    }
    for (key, values) in &imp.extra {
        for v in values {
            checks.push(check("authentication.k8s.io", "userextras", key, "", v));
        }
    }
    if let Some(uid) = &imp.uid {
        checks.push(check("authentication.k8s.io", "uids", "", "", uid));
    }
    checks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(exp: i64) -> ServiceAccountClaims {
        ServiceAccountClaims {
            namespace: "fleet-system".into(),
            name: "fleet-edge-site-a".into(),
            uid: "6f1e6c1e-0000-4000-8000-000000000001".into(),
            audiences: vec![ISSUER.into()],
            issued_at: 1_000,
            expires_at: exp,
        }
    }

    fn b64json(token: &str, idx: usize) -> Value {
        let part = token.split('.').nth(idx).unwrap();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    #[test]
    fn issued_token_verifies_and_round_trips_claims() {
        let issuer = TokenIssuer::new();
        let c = claims(5_000);
        let token = issuer.issue(&c);
        assert_eq!(issuer.verify(&token, 4_999), Ok(c.clone()));
        let v = issuer.verify_token(&token, 1_000).unwrap();
        assert_eq!(v.jti.len(), 36, "jti is a uuid");
        assert_eq!(
            v.user().extra[CREDENTIAL_ID_EXTRA],
            vec![format!("JTI={}", v.jti)]
        );
    }

    #[test]
    fn token_has_the_real_header_and_claims() {
        let token = TokenIssuer::new().issue(&claims(5_000));
        assert_eq!(b64json(&token, 0), json!({"alg": "HS256", "typ": "JWT"}));
        let p = b64json(&token, 1);
        assert_eq!(p["iss"], ISSUER);
        assert_eq!(
            p["sub"],
            "system:serviceaccount:fleet-system:fleet-edge-site-a"
        );
        assert_eq!(p["aud"], json!([ISSUER]));
        assert_eq!(
            (p["iat"].as_i64(), p["nbf"].as_i64(), p["exp"].as_i64()),
            (Some(1_000), Some(1_000), Some(5_000))
        );
        assert_eq!(p["kubernetes.io"]["namespace"], "fleet-system");
        assert_eq!(
            p["kubernetes.io"]["serviceaccount"]["name"],
            "fleet-edge-site-a"
        );
        assert_eq!(
            p["kubernetes.io"]["serviceaccount"]["uid"],
            "6f1e6c1e-0000-4000-8000-000000000001"
        );
        assert!(p["jti"].is_string());
    }

    #[test]
    fn two_tokens_for_the_same_claims_differ() {
        let issuer = TokenIssuer::new();
        assert_ne!(issuer.issue(&claims(5_000)), issuer.issue(&claims(5_000)));
    }

    #[test]
    fn expired_token_is_rejected_at_and_after_exp() {
        let issuer = TokenIssuer::new();
        let token = issuer.issue(&claims(5_000));
        assert_eq!(issuer.verify(&token, 5_000), Err(AuthnError::Expired));
        assert_eq!(issuer.verify(&token, 9_000), Err(AuthnError::Expired));
    }

    #[test]
    fn tampered_payload_or_signature_is_rejected() {
        let issuer = TokenIssuer::new();
        let token = issuer.issue(&claims(5_000));
        let parts: Vec<&str> = token.split('.').collect();

        // A payload naming another ServiceAccount, re-using the signature.
        let mut p = b64json(&token, 1);
        p["kubernetes.io"]["serviceaccount"]["name"] = json!("fleet-edge-site-b");
        p["sub"] = json!("system:serviceaccount:fleet-system:fleet-edge-site-b");
        let forged = format!(
            "{}.{}.{}",
            parts[0],
            URL_SAFE_NO_PAD.encode(p.to_string()),
            parts[2]
        );
        assert_eq!(issuer.verify(&forged, 1_000), Err(AuthnError::BadSignature));

        // A flipped signature byte.
        let mut sig = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        sig[0] ^= 1;
        let flipped = format!("{}.{}.{}", parts[0], parts[1], URL_SAFE_NO_PAD.encode(sig));
        assert_eq!(
            issuer.verify(&flipped, 1_000),
            Err(AuthnError::BadSignature)
        );

        // Another server's key.
        assert_eq!(
            TokenIssuer::new().verify(&token, 1_000),
            Err(AuthnError::BadSignature)
        );
    }

    #[test]
    fn alg_none_and_wrong_structure_are_malformed() {
        let issuer = TokenIssuer::new();
        let token = issuer.issue(&claims(5_000));
        let parts: Vec<&str> = token.split('.').collect();
        let none = URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT"}"#);
        for bad in [
            String::new(),
            "not-a-jwt".to_string(),
            format!("{}.{}", parts[0], parts[1]),
            format!("{token}.extra"),
            format!("{none}.{}.", parts[1]),
            format!("!!!.{}.{}", parts[1], parts[2]),
            format!("{}.{}.***", parts[0], parts[1]),
            "sandbox-admin-token".to_string(),
        ] {
            assert_eq!(
                issuer.verify(&bad, 1_000),
                Err(AuthnError::Malformed),
                "{bad}"
            );
        }
    }

    #[test]
    fn service_account_user_has_the_three_groups() {
        let u = service_account_user(&claims(5_000));
        assert_eq!(
            u.username,
            "system:serviceaccount:fleet-system:fleet-edge-site-a"
        );
        assert_eq!(
            u.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:fleet-system",
                "system:authenticated"
            ]
        );
    }

    #[test]
    fn audiences_default_to_the_api_server() {
        let aud = vec![ISSUER.to_string(), "vault".to_string()];
        assert_eq!(authenticated_audiences(&aud, &[]), vec![ISSUER.to_string()]);
        assert_eq!(
            authenticated_audiences(&aud, &["vault".into()]),
            vec!["vault".to_string()]
        );
        assert!(authenticated_audiences(&["vault".into()], &[]).is_empty());
    }

    #[test]
    fn impersonating_a_service_account_adds_its_groups() {
        let imp = Impersonation {
            user: Some("system:serviceaccount:fleet-system:fleet-edge-a".into()),
            ..Default::default()
        };
        let u = imp.target_user().unwrap();
        assert_eq!(
            u.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:fleet-system",
                "system:authenticated"
            ]
        );
    }

    #[test]
    fn impersonated_groups_replace_defaults_and_gain_authenticated() {
        let imp = Impersonation {
            user: Some("system:serviceaccount:ns:sa".into()),
            groups: vec!["devs".into()],
            ..Default::default()
        };
        assert_eq!(
            imp.target_user().unwrap().groups,
            ["devs", "system:authenticated"]
        );
        let plain = Impersonation {
            user: Some("jane".into()),
            uid: Some("u1".into()),
            ..Default::default()
        };
        let u = plain.target_user().unwrap();
        assert_eq!((u.username.as_str(), u.uid.as_str()), ("jane", "u1"));
        assert_eq!(u.groups, ["system:authenticated"]);
        let anon = Impersonation {
            user: Some(ANONYMOUS.into()),
            ..Default::default()
        };
        assert_eq!(
            anon.target_user().unwrap().groups,
            ["system:unauthenticated"]
        );
        let groups_only = Impersonation {
            groups: vec!["g".into()],
            ..Default::default()
        };
        assert!(groups_only.is_requested());
        assert_eq!(groups_only.target_user(), None);
    }

    #[test]
    fn malformed_service_account_usernames_are_plain_users() {
        assert_eq!(
            split_service_account_username("system:serviceaccount:ns:sa"),
            Some(("ns", "sa"))
        );
        for u in [
            "system:serviceaccount:ns",
            "system:serviceaccount:ns:sa:x",
            "system:serviceaccount::sa",
            "system:serviceaccount:NS:sa",
            "jane",
        ] {
            assert_eq!(split_service_account_username(u), None, "{u}");
        }
    }

    #[test]
    fn impersonation_checks_follow_the_real_filter() {
        let admin = UserInfo {
            username: "admin".into(),
            ..Default::default()
        };
        let imp = Impersonation {
            user: Some("system:serviceaccount:fleet-system:fleet-edge-a".into()),
            groups: vec!["g1".into()],
            uid: Some("u-1".into()),
            extra: BTreeMap::from([("scopes".to_string(), vec!["a".to_string(), "b".to_string()])]),
        };
        let checks = impersonation_checks(&imp, &admin);
        let got: Vec<_> = checks
            .iter()
            .map(|a| {
                (
                    a.verb.as_str(),
                    a.api_group.as_str(),
                    a.resource.as_str(),
                    a.subresource.as_str(),
                    a.namespace.as_str(),
                    a.name.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    "impersonate",
                    "",
                    "serviceaccounts",
                    "",
                    "fleet-system",
                    "fleet-edge-a"
                ),
                ("impersonate", "", "groups", "", "", "g1"),
                (
                    "impersonate",
                    "authentication.k8s.io",
                    "userextras",
                    "scopes",
                    "",
                    "a"
                ),
                (
                    "impersonate",
                    "authentication.k8s.io",
                    "userextras",
                    "scopes",
                    "",
                    "b"
                ),
                (
                    "impersonate",
                    "authentication.k8s.io",
                    "uids",
                    "",
                    "",
                    "u-1"
                ),
            ]
        );
        assert!(checks.iter().all(|a| a.resource_request && a.user == admin));
        let user = Impersonation {
            user: Some("jane".into()),
            ..Default::default()
        };
        assert_eq!(impersonation_checks(&user, &admin)[0].resource, "users");
    }
}
