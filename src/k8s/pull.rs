//! Hub-side I/O of Pull mode: the watch over the pull Secrets in
//! `fleet-system`, turning a Secret's kubeconfig into a member client (and
//! refusing the kubeconfigs a hub must never use), telling why a probe
//! failed, and asking the member what its identity may do.
//!
//! A kubeconfig in a Secret is written by whoever may write Secrets in
//! `fleet-system`, and it is used by the hub's process: so it may not make
//! the hub run a command (`exec`, `auth-provider`) or read a file on the hub
//! (a token, key, certificate or CA given by path).

use std::time::Duration;

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::watcher;

use crate::fleet::probe::{Permission, ProbeFailure};
use crate::fleet::rbac::{FLEET_NAMESPACE, MANAGED_BY, SITE_LABEL};

/// The Secrets API in `fleet-system`, where every pull Secret lives.
pub fn pull_secrets(client: kube::Client) -> Api<Secret> {
    Api::namespaced(client, FLEET_NAMESPACE)
}

/// The watch over pull Secrets: only Secrets `kubectl fleet register`
/// labelled as a site's (managed-by and site labels), so the hub holds no
/// other Secret of the namespace in memory.
pub fn pull_secret_watch() -> watcher::Config {
    watcher::Config::default().labels(&format!(
        "app.kubernetes.io/managed-by={MANAGED_BY},{SITE_LABEL}"
    ))
}

/// Why a kubeconfig from a Secret is refused, in one line without secrets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct KubeconfigRefused(pub String);

/// A member kubeconfig that passed the hub's checks.
#[derive(Clone)]
pub struct MemberKubeconfig {
    kubeconfig: Kubeconfig,
    server: String,
    insecure: bool,
    token: Option<String>,
}

impl std::fmt::Debug for MemberKubeconfig {
    // Holds a credential; show only where it points.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberKubeconfig")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl MemberKubeconfig {
    /// Parses and checks the kubeconfig bytes of a pull Secret.
    pub fn parse(bytes: &[u8]) -> Result<Self, KubeconfigRefused> {
        let refuse = |s: &str| KubeconfigRefused(s.to_owned());
        let text = std::str::from_utf8(bytes).map_err(|_| refuse("the kubeconfig is not UTF-8"))?;
        // The parser's own message may quote the input: never repeat it.
        let kubeconfig = Kubeconfig::from_yaml(text)
            .map_err(|_| refuse("the kubeconfig is not valid kubeconfig YAML"))?;
        let context_name = kubeconfig
            .current_context
            .clone()
            .ok_or_else(|| refuse("the kubeconfig has no current-context"))?;
        let context = kubeconfig
            .contexts
            .iter()
            .find(|c| c.name == context_name)
            .and_then(|c| c.context.as_ref())
            .ok_or_else(|| refuse("the kubeconfig's current-context is not defined in it"))?;
        let cluster = kubeconfig
            .clusters
            .iter()
            .find(|c| c.name == context.cluster)
            .and_then(|c| c.cluster.as_ref())
            .ok_or_else(|| refuse("the kubeconfig's current-context names no defined cluster"))?;
        let server = cluster
            .server
            .clone()
            .ok_or_else(|| refuse("the kubeconfig's cluster has no server URL"))?;
        if cluster.certificate_authority.is_some() {
            return Err(refuse(
                "the kubeconfig names a CA file: the hub reads no file a Secret names; embed it as certificate-authority-data",
            ));
        }
        let user = context
            .user
            .as_ref()
            .and_then(|u| kubeconfig.auth_infos.iter().find(|a| &a.name == u))
            .and_then(|a| a.auth_info.as_ref());
        let mut token = None;
        if let Some(user) = user {
            if user.exec.is_some() {
                return Err(refuse(
                    "the kubeconfig uses an exec credential plugin: the hub never runs a command a Secret names; use a token or client certificate",
                ));
            }
            if user.auth_provider.is_some() {
                return Err(refuse(
                    "the kubeconfig uses an auth-provider: the hub never runs a command a Secret names; use a token or client certificate",
                ));
            }
            if user.token_file.is_some()
                || user.client_certificate.is_some()
                || user.client_key.is_some()
            {
                return Err(refuse(
                    "the kubeconfig names a credential file: the hub reads no file a Secret names; embed the token or certificate",
                ));
            }
            // kube keeps the token behind a secret wrapper; its serialised
            // form is the plain value.
            token = serde_json::to_value(user)
                .ok()
                .and_then(|v| v.get("token").and_then(|t| t.as_str()).map(str::to_owned));
        }
        Ok(Self {
            insecure: cluster.insecure_skip_tls_verify.unwrap_or(false),
            kubeconfig,
            server,
            token,
        })
    }

    /// The member API server URL.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Whether it skips verifying the member's certificate.
    pub fn insecure(&self) -> bool {
        self.insecure
    }

    /// The bearer token, if it authenticates with one (to read its expiry).
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// A client whose connections give up after `timeout`.
    pub async fn client(&self, timeout: Duration) -> Result<kube::Client, KubeconfigRefused> {
        let mut config = kube::Config::from_custom_kubeconfig(
            self.kubeconfig.clone(),
            &KubeConfigOptions::default(),
        )
        .await
        .map_err(|_| KubeconfigRefused("the kubeconfig could not be loaded".to_owned()))?;
        config.connect_timeout = Some(timeout);
        config.read_timeout = Some(timeout);
        config.write_timeout = Some(timeout);
        kube::Client::try_from(config)
            .map_err(|_| KubeconfigRefused("no client can be built from the kubeconfig".to_owned()))
    }
}

/// The failure class of an error from a member call, and a one-line
/// message naming `server` and what to do for `site` (never a credential,
/// never text the member sent).
pub fn classify(err: &kube::Error, server: &str, site: &str) -> (ProbeFailure, String) {
    if let kube::Error::Api(s) = err {
        let class = match s.code {
            401 => ProbeFailure::Unauthorized,
            403 => ProbeFailure::Forbidden,
            _ => ProbeFailure::Failed,
        };
        let message = match class {
            ProbeFailure::Unauthorized => format!(
                "{server} rejected the credential (401: expired or revoked): re-run `kubectl fleet register {site} --pull` to store a fresh one"
            ),
            ProbeFailure::Forbidden => format!(
                "{server} denied the member identity ({}): re-run `kubectl fleet register {site} --pull` to restore its read-only role",
                s.code
            ),
            _ => format!("{server} answered {}", s.code),
        };
        return (class, message);
    }
    let mut chain = Vec::new();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    let mut refused = false;
    while let Some(e) = cur {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            refused |= io.kind() == std::io::ErrorKind::ConnectionRefused;
        }
        chain.push(e.to_string().to_ascii_lowercase());
        cur = e.source();
    }
    let text = chain.join(": ");
    if refused || text.contains("connection refused") {
        (
            ProbeFailure::ConnectionRefused,
            format!("{server} refused the connection: is the member API server running?"),
        )
    } else if text.contains("dns error") || text.contains("failed to lookup address") {
        (
            ProbeFailure::Dns,
            format!("the member server name in {server} does not resolve"),
        )
    } else if text.contains("certificate") || text.contains("tls") || text.contains("handshake") {
        (
            ProbeFailure::Tls,
            format!(
                "TLS with {server} failed (the kubeconfig's CA does not verify the member's certificate)"
            ),
        )
    } else if text.contains("timed out") || text.contains("timeout") {
        (
            ProbeFailure::Timeout,
            format!("{server} did not answer in time"),
        )
    } else {
        (
            ProbeFailure::Failed,
            format!("{server} could not be reached"),
        )
    }
}

/// Whether the client's identity may do `access` in every namespace
/// (SelfSubjectAccessReview, which any authenticated identity may create).
pub async fn can_i(client: &kube::Client, access: Permission) -> Result<bool, kube::Error> {
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                verb: Some(access.verb.to_owned()),
                group: Some(access.group.to_owned()),
                resource: Some(access.resource.to_owned()),
                subresource: (!access.subresource.is_empty())
                    .then(|| access.subresource.to_owned()),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let api: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let answer = api.create(&PostParams::default(), &review).await?;
    Ok(answer.status.is_some_and(|s| s.allowed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kubeconfig(user: &str, cluster_extra: &str) -> String {
        format!(
            r#"
apiVersion: v1
kind: Config
current-context: m
clusters:
- name: m
  cluster:
    server: https://127.0.0.1:6443
{cluster_extra}
contexts:
- name: m
  context: {{cluster: m, user: u}}
users:
- name: u
  user:
{user}
"#
        )
    }

    #[test]
    fn token_kubeconfig_is_accepted() {
        let kc = MemberKubeconfig::parse(
            kubeconfig("    token: abc", "    insecure-skip-tls-verify: true").as_bytes(),
        )
        .unwrap();
        assert_eq!(kc.server(), "https://127.0.0.1:6443");
        assert!(kc.insecure());
        assert_eq!(kc.token(), Some("abc"));
        assert!(!format!("{kc:?}").contains("abc"), "Debug hides the token");
    }

    #[test]
    fn commands_and_files_named_by_a_secret_are_refused() {
        let exec = "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [-c, id]";
        let e = MemberKubeconfig::parse(kubeconfig(exec, "").as_bytes()).unwrap_err();
        assert!(e.0.contains("exec credential plugin"), "{e}");
        let ap = "    auth-provider:\n      name: gcp";
        let e = MemberKubeconfig::parse(kubeconfig(ap, "").as_bytes()).unwrap_err();
        assert!(e.0.contains("auth-provider"), "{e}");
        let file = "    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token";
        let e = MemberKubeconfig::parse(kubeconfig(file, "").as_bytes()).unwrap_err();
        assert!(e.0.contains("credential file"), "{e}");
        let ca = "    certificate-authority: /etc/ssl/ca.pem";
        let e = MemberKubeconfig::parse(kubeconfig("    token: t", ca).as_bytes()).unwrap_err();
        assert!(e.0.contains("CA file"), "{e}");
    }

    #[test]
    fn garbage_is_refused_without_echoing_it() {
        let e = MemberKubeconfig::parse(b"token: hunter2\n: [").unwrap_err();
        assert!(!e.0.contains("hunter2"), "{e}");
        assert!(MemberKubeconfig::parse(&[0xff, 0xfe]).is_err());
    }

    #[test]
    fn api_answers_map_to_reasons_without_the_members_text() {
        let api = |code| {
            kube::Error::Api(
                kube::core::Status::failure("\u{1b}]0;pwned\u{7}", "x")
                    .with_code(code)
                    .boxed(),
            )
        };
        let (f, m) = classify(&api(401), "https://m:6443", "site-a");
        assert_eq!(f, ProbeFailure::Unauthorized);
        assert!(m.contains("kubectl fleet register site-a --pull"), "{m}");
        assert_eq!(
            classify(&api(403), "https://m:6443", "site-a").0,
            ProbeFailure::Forbidden
        );
        let (f, m) = classify(&api(500), "https://m:6443", "site-a");
        assert_eq!(f, ProbeFailure::Failed);
        assert!(
            !m.contains("pwned"),
            "the member's message is not repeated: {m}"
        );
    }
}
