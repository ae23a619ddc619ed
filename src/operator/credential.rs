//! The edge's hub credential: the kubeconfig file it reads, the token's
//! lifetime (from the JWT claims) and writing a rotated token back.
//!
//! The token is only ever held in memory and written to the file it came
//! from (mode 0600); it never reaches a log line or a `Debug` output.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use jiff::Timestamp;
use serde_json::Value;

/// Errors reading or rewriting the hub kubeconfig.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    /// The file could not be read; the cause (e.g. "Permission denied")
    /// is part of the line, since it says what to fix (and so it is not
    /// also the error's `source`: a printer of the chain would say it twice).
    #[error("reading hub kubeconfig {path}: {cause}{}", read_hint(cause))]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// The file is not a kubeconfig kube can use.
    #[error("parsing hub kubeconfig {path}")]
    Parse {
        path: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A client could not be built from it.
    #[error("building a hub client from {path}")]
    Client {
        path: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The kubeconfig would make the edge run a command (`exec`,
    /// `auth-provider`): refused, as the hub refuses it in a Pull Secret.
    #[error(
        "hub kubeconfig {path} uses {what}: the edge never runs a command its hub kubeconfig names; \
         give it the token kubeconfig `kubectl fleet register` or `kubectl fleet rotate` prints"
    )]
    Refused { path: PathBuf, what: &'static str },
    /// The kubeconfig names no token to rotate (e.g. client certificates).
    #[error("hub kubeconfig {path} has no bearer token for its current context")]
    NoToken { path: PathBuf },
    /// Writing the rotated credential failed.
    #[error("writing rotated credential to {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What to do about a file the process may not read.
fn read_hint(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => {
            " (make it readable to the edge's user: a Secret volume with defaultMode 0440 and the pod's fsGroup)"
        }
        _ => "",
    }
}

/// The claims of a ServiceAccount JWT that the edge needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenClaims {
    /// `iat`: when the token was issued.
    pub issued_at: Option<Timestamp>,
    /// `exp`: when the token expires.
    pub expires_at: Option<Timestamp>,
    /// `aud`: the audiences it was minted for.
    pub audiences: Vec<String>,
    /// `iss`: who says it minted it.
    pub issuer: Option<String>,
    /// The namespace of the ServiceAccount it belongs to
    /// (`kubernetes.io.namespace`, else from `sub`
    /// `system:serviceaccount:NAMESPACE:NAME`): where the edge renews it.
    pub namespace: Option<String>,
    /// `sub`: whom it authenticates, e.g.
    /// `system:serviceaccount:fleet-system:fleet-edge-site-a`.
    pub subject: Option<String>,
}

impl TokenClaims {
    /// Decodes the payload of a JWT without verifying it: the hub verifies
    /// the token, the edge only needs to know when to renew it.
    pub fn decode(token: &str) -> Option<Self> {
        let payload = token.split('.').nth(1)?;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload.trim_end_matches('='))
            .ok()?;
        let v: Value = serde_json::from_slice(&bytes).ok()?;
        let ts = |k: &str| {
            v.get(k)
                .and_then(Value::as_i64)
                .and_then(|s| Timestamp::from_second(s).ok())
        };
        let audiences = match v.get("aud") {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        };
        let namespace = v
            .get("kubernetes.io")
            .and_then(|k| k.get("namespace"))
            .and_then(Value::as_str)
            .or_else(|| {
                v.get("sub")?
                    .as_str()?
                    .strip_prefix("system:serviceaccount:")?
                    .split_once(':')
                    .map(|(ns, _)| ns)
            })
            .map(str::to_owned);
        Some(Self {
            issued_at: ts("iat"),
            expires_at: ts("exp"),
            audiences,
            issuer: v.get("iss").and_then(Value::as_str).map(str::to_owned),
            namespace,
            subject: v.get("sub").and_then(Value::as_str).map(str::to_owned),
        })
    }

    /// The site whose edge identity the token is (its subject is the
    /// ServiceAccount `fleet-edge-SITE`, in whichever namespace); None for
    /// any other token.
    pub fn site(&self) -> Option<&str> {
        let account = self
            .subject
            .as_deref()?
            .strip_prefix("system:serviceaccount:")?
            .split_once(':')?
            .1;
        let site = account.strip_prefix(crate::fleet::rbac::EDGE_IDENTITY_PREFIX)?;
        crate::fleet::rbac::validate_site_name(site).ok()?;
        Some(site)
    }

    /// The token's whole lifetime (`exp - iat`).
    pub fn lifetime(&self) -> Option<Duration> {
        let (iat, exp) = (self.issued_at?, self.expires_at?);
        let secs = exp.as_second() - iat.as_second();
        (secs > 0).then(|| Duration::from_secs(secs as u64))
    }

    /// When half of the lifetime is left: the edge renews after that.
    pub fn renewal_time(&self) -> Option<Timestamp> {
        let (lifetime, exp) = (self.lifetime()?, self.expires_at?);
        Timestamp::from_second(exp.as_second() - (lifetime.as_secs() / 2) as i64).ok()
    }

    /// Whether less than half of the lifetime remains at `now`.
    pub fn needs_rotation(&self, now: Timestamp) -> bool {
        self.renewal_time()
            .is_some_and(|r| now.as_second() > r.as_second())
    }
}

/// Where the token of the current context lives.
#[derive(Clone, PartialEq, Eq)]
enum TokenSource {
    /// Inline `token:` in the kubeconfig.
    Inline(String),
    /// `tokenFile:` next to it.
    File(PathBuf, String),
    /// No bearer token (certificates, exec plugins...).
    None,
}

/// A snapshot of the hub kubeconfig file as last read.
#[derive(Clone, PartialEq, Eq)]
pub struct HubKubeconfig {
    path: PathBuf,
    text: String,
    token: TokenSource,
    server: Option<String>,
}

impl fmt::Debug for HubKubeconfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HubKubeconfig")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn parse_err(path: &Path, e: impl std::error::Error + Send + Sync + 'static) -> CredentialError {
    CredentialError::Parse {
        path: path.to_owned(),
        source: Box::new(e),
    }
}

/// The `users[].user` entry of the current context, as JSON.
fn current_user_mut(doc: &mut Value) -> Option<&mut Value> {
    let ctx_name = doc.get("current-context")?.as_str()?.to_owned();
    let user_name = doc
        .get("contexts")?
        .as_array()?
        .iter()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(ctx_name.as_str()))?
        .get("context")?
        .get("user")?
        .as_str()?
        .to_owned();
    doc.get_mut("users")?
        .as_array_mut()?
        .iter_mut()
        .find(|u| u.get("name").and_then(Value::as_str) == Some(user_name.as_str()))?
        .get_mut("user")
}

/// The `server` of the current context's cluster.
fn current_server(doc: &Value) -> Option<String> {
    let ctx_name = doc.get("current-context")?.as_str()?;
    let cluster = doc
        .get("contexts")?
        .as_array()?
        .iter()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(ctx_name))?
        .get("context")?
        .get("cluster")?
        .as_str()?;
    doc.get("clusters")?
        .as_array()?
        .iter()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(cluster))?
        .get("cluster")?
        .get("server")?
        .as_str()
        .map(str::to_owned)
}

impl HubKubeconfig {
    /// Reads the kubeconfig (and its token file, if it uses one).
    pub fn read(path: &Path) -> Result<Self, CredentialError> {
        let text = std::fs::read_to_string(path).map_err(|cause| CredentialError::Read {
            path: path.to_owned(),
            cause,
        })?;
        let mut doc: Value = serde_saphyr::from_str(&text).map_err(|e| parse_err(path, e))?;
        let server = current_server(&doc).map(|s| crate::k8s::shown_server(&s));
        let user = current_user_mut(&mut doc);
        for (key, what) in [
            ("exec", "an exec credential plugin"),
            ("auth-provider", "an auth-provider"),
        ] {
            if user.as_ref().is_some_and(|u| u.get(key).is_some()) {
                return Err(CredentialError::Refused {
                    path: path.to_owned(),
                    what,
                });
            }
        }
        let token = match user {
            Some(u) => {
                if let Some(t) = u.get("token").and_then(Value::as_str) {
                    TokenSource::Inline(t.to_owned())
                } else if let Some(f) = u.get("tokenFile").and_then(Value::as_str) {
                    let file = path.parent().unwrap_or(Path::new(".")).join(f);
                    let t =
                        std::fs::read_to_string(&file).map_err(|cause| CredentialError::Read {
                            path: file.clone(),
                            cause,
                        })?;
                    TokenSource::File(file, t.trim().to_owned())
                } else {
                    TokenSource::None
                }
            }
            None => TokenSource::None,
        };
        Ok(Self {
            path: path.to_owned(),
            text,
            token,
            server,
        })
    }

    /// The hub API server URL of the current context, as it may be shown
    /// (without a userinfo).
    pub fn server(&self) -> Option<&str> {
        self.server.as_deref()
    }

    /// The kubeconfig text (holds the token: never log it).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The file this was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The bearer token, if the current context uses one.
    pub fn token(&self) -> Option<&str> {
        match &self.token {
            TokenSource::Inline(t) | TokenSource::File(_, t) => Some(t),
            TokenSource::None => None,
        }
    }

    /// The token's claims, if it is a JWT.
    pub fn claims(&self) -> Option<TokenClaims> {
        self.token().and_then(TokenClaims::decode)
    }

    /// A kube client for the hub, honouring the file's current context.
    pub async fn client(&self) -> Result<kube::Client, CredentialError> {
        let kc = kube::config::Kubeconfig::from_yaml(&self.text)
            .map_err(|e| parse_err(&self.path, e))?;
        let mut cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .map_err(|e| CredentialError::Client {
                path: self.path.clone(),
                source: Box::new(e),
            })?;
        // A hung hub must not stall a tick forever; the tick retries anyway.
        cfg.connect_timeout = Some(Duration::from_secs(5));
        cfg.read_timeout = Some(Duration::from_secs(15));
        cfg.write_timeout = Some(Duration::from_secs(15));
        // Each failed request is a failed tick the edge sees, backs off
        // from and notes in its dark-period journal: kube's own retry of a
        // 429/503/504 (15 times, backing off to minutes) held a tick
        // silently for minutes through a hub whose proxy answered 503,
        // while the hub saw the site fall silent.
        cfg.default_retry = false;
        let builder =
            kube::client::ClientBuilder::try_from(cfg).map_err(|e| CredentialError::Client {
                path: self.path.clone(),
                source: Box::new(e),
            })?;
        // What the edge reads from the hub (its own site, discovery, a
        // token) is cut like what the hub reads from a Pull member, so a
        // hostile or broken endpoint cannot fill the edge's memory.
        let cap = crate::k8s::body_limit::BodyLimitLayer::new(crate::k8s::pull::MAX_ANSWER_BYTES);
        Ok(builder.with_layer(&cap).build())
    }

    /// The same credential with `token` instead, in memory only (for a
    /// read-only mount such as a Secret volume).
    pub fn with_token(&self, token: &str) -> Result<Self, CredentialError> {
        let mut doc: Value =
            serde_saphyr::from_str(&self.text).map_err(|e| parse_err(&self.path, e))?;
        let user = current_user_mut(&mut doc).ok_or_else(|| CredentialError::NoToken {
            path: self.path.clone(),
        })?;
        if let Some(m) = user.as_object_mut() {
            m.remove("tokenFile");
        }
        user["token"] = Value::String(token.to_owned());
        let text = serde_saphyr::to_string(&doc).map_err(|e| parse_err(&self.path, e))?;
        Ok(Self {
            path: self.path.clone(),
            text,
            token: TokenSource::Inline(token.to_owned()),
            server: self.server.clone(),
        })
    }

    /// Stores `token` where this credential came from: the token file, or
    /// the kubeconfig itself (rewritten atomically, mode 0600). Returns the
    /// credential as it now reads.
    pub fn store_token(&self, token: &str) -> Result<Self, CredentialError> {
        match &self.token {
            TokenSource::File(file, _) => {
                write_private(file, format!("{token}\n").as_bytes())?;
            }
            TokenSource::Inline(_) => {
                let mut doc: Value =
                    serde_saphyr::from_str(&self.text).map_err(|e| parse_err(&self.path, e))?;
                let user = current_user_mut(&mut doc).ok_or_else(|| CredentialError::NoToken {
                    path: self.path.clone(),
                })?;
                user["token"] = Value::String(token.to_owned());
                let text = serde_saphyr::to_string(&doc).map_err(|e| parse_err(&self.path, e))?;
                write_private(&self.path, text.as_bytes())?;
            }
            TokenSource::None => {
                return Err(CredentialError::NoToken {
                    path: self.path.clone(),
                });
            }
        }
        Self::read(&self.path)
    }
}

/// Writes `contents` to `path` atomically with mode 0600, since it holds a
/// credential.
pub fn write_private(path: &Path, contents: &[u8]) -> Result<(), CredentialError> {
    crate::k8s::write_private_file(path, contents).map_err(|source| CredentialError::Write {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &str) -> String {
        let e = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        format!(
            "{}.{}.sig",
            e.encode(r#"{"alg":"RS256"}"#),
            e.encode(claims)
        )
    }

    #[test]
    fn decodes_exp_iat_aud() {
        let c =
            TokenClaims::decode(&jwt(r#"{"iat":1000,"exp":4600,"aud":["https://hub"]}"#)).unwrap();
        assert_eq!(c.lifetime(), Some(Duration::from_secs(3600)));
        assert_eq!(c.audiences, vec!["https://hub".to_owned()]);
        assert_eq!(c.expires_at, Some(Timestamp::from_second(4600).unwrap()));
    }

    #[test]
    fn decodes_the_service_account_namespace() {
        let c = TokenClaims::decode(&jwt(
            r#"{"sub":"system:serviceaccount:fleet-system:fleet-edge-a","kubernetes.io":{"namespace":"fleet-sites"}}"#,
        ))
        .unwrap();
        assert_eq!(c.namespace.as_deref(), Some("fleet-sites"));
        let c = TokenClaims::decode(&jwt(
            r#"{"sub":"system:serviceaccount:fleet-system:fleet-edge-a"}"#,
        ))
        .unwrap();
        assert_eq!(c.namespace.as_deref(), Some("fleet-system"));
        let c = TokenClaims::decode(&jwt(r#"{"sub":"someone"}"#)).unwrap();
        assert_eq!(c.namespace, None);
    }

    #[test]
    fn the_site_of_a_token_is_its_edge_service_account() {
        let of = |sub: &str| {
            TokenClaims::decode(&jwt(&format!(r#"{{"sub":"{sub}"}}"#)))
                .unwrap()
                .site()
                .map(str::to_owned)
        };
        assert_eq!(
            of("system:serviceaccount:fleet-system:fleet-edge-site-b"),
            Some("site-b".into())
        );
        assert_eq!(
            of("system:serviceaccount:fleet-sites:fleet-edge-site-b"),
            Some("site-b".into())
        );
        assert_eq!(of("system:serviceaccount:kube-system:default"), None);
        assert_eq!(of("system:serviceaccount:x:fleet-edge-Bad_Name"), None);
        assert_eq!(of("admin"), None);
    }

    #[test]
    fn a_hub_kubeconfig_that_runs_a_command_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hub.kubeconfig");
        for (user, what) in [
            (
                "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [-c, id]\n",
                "exec credential plugin",
            ),
            ("    auth-provider:\n      name: gcp\n", "auth-provider"),
        ] {
            let text = KUBECONFIG.replace("    token: old-token\n", user);
            std::fs::write(&path, text).unwrap();
            let err = HubKubeconfig::read(&path).unwrap_err();
            let line = err.to_string();
            assert!(line.contains(what), "{line}");
            assert!(line.contains("never runs a command"), "{line}");
        }
        // The other context's user is never used, so it is not judged.
        std::fs::write(
            &path,
            KUBECONFIG.replace(
                "    token: not-this-one\n",
                "    exec: {command: /bin/sh}\n",
            ),
        )
        .unwrap();
        assert_eq!(
            HubKubeconfig::read(&path).unwrap().token(),
            Some("old-token")
        );
    }

    #[test]
    fn not_a_jwt_gives_none() {
        assert_eq!(TokenClaims::decode("opaque-token"), None);
        assert_eq!(TokenClaims::decode("a.!!!.c"), None);
    }

    #[test]
    fn rotation_starts_when_less_than_half_remains() {
        let c = TokenClaims::decode(&jwt(r#"{"iat":1000,"exp":2000}"#)).unwrap();
        let at = |s| Timestamp::from_second(s).unwrap();
        assert!(!c.needs_rotation(at(1000)));
        assert!(!c.needs_rotation(at(1500)), "exactly half remains");
        assert!(c.needs_rotation(at(1501)));
        assert!(c.needs_rotation(at(2500)), "already expired");
    }

    const KUBECONFIG: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: hub\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: other\n  context:\n    cluster: hub\n    user: nobody\n- name: edge\n  context:\n    cluster: hub\n    user: site\ncurrent-context: edge\nusers:\n- name: nobody\n  user:\n    token: not-this-one\n- name: site\n  user:\n    token: old-token\n";

    #[test]
    fn store_token_rewrites_only_the_current_user_with_mode_0600() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hub.kubeconfig");
        std::fs::write(&path, KUBECONFIG).unwrap();
        let kc = HubKubeconfig::read(&path).unwrap();
        assert_eq!(kc.token(), Some("old-token"));
        assert_eq!(kc.server(), Some("https://127.0.0.1:1"));
        let next = kc.store_token("new-token").unwrap();
        assert_eq!(next.token(), Some("new-token"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("not-this-one"), "{text}");
        assert!(!text.contains("old-token"));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(
            !format!("{next:?}").contains("new-token"),
            "Debug must not leak the token"
        );
    }
}
