//! Connecting to a cluster the way kubectl does: `--kubeconfig` or
//! `KUBECONFIG` (a list of files, merged) or `~/.kube/config`, `--context`,
//! `--request-timeout`.
//!
//! Besides the client, a [`Cluster`] remembers the server URL and the CA of
//! the chosen context, because `register` hands both to the edge.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use kube::config::{KubeConfigOptions, Kubeconfig};

use super::error::{Error, root_cause};

/// How to reach a cluster, as given on the command line.
#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    /// Explicit kubeconfig file; None reads `KUBECONFIG` or `~/.kube/config`.
    pub kubeconfig: Option<PathBuf>,
    /// Context to use instead of the current context.
    pub context: Option<String>,
    /// Upper bound for each request; None waits as long as the server takes.
    pub request_timeout: Option<Duration>,
}

/// A connected cluster: the client plus what the caller's kubeconfig says
/// about the server.
#[derive(Clone)]
pub struct Cluster {
    pub(crate) client: kube::Client,
    server: String,
    ca_pem: Option<Vec<u8>>,
    insecure: bool,
    /// What discovery said of each kind a manifest named (None: not
    /// served), so a command that checks its manifests and then applies
    /// or deletes them asks once per kind (`k8s::manifests`).
    pub(crate) discovered: std::sync::Arc<std::sync::Mutex<super::manifests::Discovered>>,
}

impl std::fmt::Debug for Cluster {
    // The client holds credentials; show only where it points.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl Cluster {
    /// Loads the kubeconfig and builds a client for the chosen context.
    /// No request is made yet: an unreachable server surfaces on first use.
    pub async fn connect(opts: &ConnectOptions) -> Result<Self, Error> {
        let kubeconfig_error = |source: kube::config::KubeconfigError| Error::Kubeconfig {
            path: opts.kubeconfig.clone(),
            reason: root_cause(&source),
            source,
        };
        let kubeconfig = match &opts.kubeconfig {
            Some(path) => Kubeconfig::read_from(path),
            None => Kubeconfig::read(),
        }
        .map_err(kubeconfig_error)?;
        Self::from_kubeconfig(kubeconfig, opts)
            .await
            .map_err(|e| match e {
                Error::Kubeconfig { reason, source, .. } => Error::Kubeconfig {
                    path: opts.kubeconfig.clone(),
                    reason,
                    source,
                },
                other => other,
            })
    }

    /// Builds a client from an already parsed kubeconfig (the member
    /// kubeconfig of `register --pull`, or a test's).
    pub async fn from_kubeconfig(
        kubeconfig: Kubeconfig,
        opts: &ConnectOptions,
    ) -> Result<Self, Error> {
        let kubeconfig_error = |source: kube::config::KubeconfigError| Error::Kubeconfig {
            path: None,
            reason: root_cause(&source),
            source,
        };
        let (server, ca_pem, insecure) =
            cluster_facts(&kubeconfig, opts.context.as_deref()).map_err(kubeconfig_error)?;
        let options = KubeConfigOptions {
            context: opts.context.clone(),
            ..Default::default()
        };
        let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .map_err(kubeconfig_error)?;
        if let Some(timeout) = opts.request_timeout {
            config.connect_timeout = Some(timeout);
            config.read_timeout = Some(timeout);
            config.write_timeout = Some(timeout);
            config.reset_reader_on_write = true;
        }
        let client = kube::Client::try_from(config).map_err(|source| Error::Unreachable {
            what: "build the API client".into(),
            server: server.clone(),
            reason: root_cause(&source),
            source,
        })?;
        Ok(Cluster {
            client,
            server,
            ca_pem,
            insecure,
            discovered: Default::default(),
        })
    }

    /// The API server URL of the chosen context.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The PEM CA bundle the caller trusts for this server, if the
    /// kubeconfig names one (embedded or as a file).
    pub fn ca_pem(&self) -> Option<&[u8]> {
        self.ca_pem.as_deref()
    }

    /// Whether the caller's kubeconfig skips TLS verification for this server.
    pub fn insecure(&self) -> bool {
        self.insecure
    }
}

/// Resolves the context to its cluster and returns (server, CA PEM,
/// insecure-skip-tls-verify).
fn cluster_facts(
    kubeconfig: &Kubeconfig,
    context: Option<&str>,
) -> Result<(String, Option<Vec<u8>>, bool), kube::config::KubeconfigError> {
    use kube::config::KubeconfigError as E;
    let context_name = context
        .map(str::to_owned)
        .or_else(|| kubeconfig.current_context.clone())
        .ok_or(E::CurrentContextNotSet)?;
    let ctx = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context_name)
        .and_then(|c| c.context.as_ref())
        .ok_or_else(|| E::LoadContext(context_name.clone()))?;
    let cluster = kubeconfig
        .clusters
        .iter()
        .find(|c| c.name == ctx.cluster)
        .and_then(|c| c.cluster.as_ref())
        .ok_or_else(|| E::LoadClusterOfContext(ctx.cluster.clone()))?;
    let server = cluster.server.clone().ok_or(E::MissingClusterUrl)?;
    let ca_pem = match (
        &cluster.certificate_authority_data,
        &cluster.certificate_authority,
    ) {
        (Some(data), _) => Some(
            base64::engine::general_purpose::STANDARD
                .decode(data.trim())
                .map_err(|e| {
                    E::LoadCertificateAuthority(kube::config::LoadDataError::DecodeBase64(e))
                })?,
        ),
        (None, Some(file)) => Some(read_file(Path::new(file)).map_err(|e| {
            E::LoadCertificateAuthority(kube::config::LoadDataError::ReadFile(e, file.into()))
        })?),
        (None, None) => None,
    };
    Ok((
        server,
        ca_pem,
        cluster.insecure_skip_tls_verify.unwrap_or(false),
    ))
}

fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    std::fs::read(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KUBECONFIG: &str = r#"
apiVersion: v1
kind: Config
current-context: a
clusters:
- name: ca
  cluster:
    server: https://a.example:6443
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
- name: cb
  cluster:
    server: https://b.example:6443
    insecure-skip-tls-verify: true
contexts:
- name: a
  context: {cluster: ca, user: u}
- name: b
  context: {cluster: cb, user: u}
users:
- name: u
  user: {token: t}
"#;

    #[test]
    fn resolves_current_and_named_context() {
        let kc = Kubeconfig::from_yaml(KUBECONFIG).unwrap();
        let (server, ca, insecure) = cluster_facts(&kc, None).unwrap();
        assert_eq!(server, "https://a.example:6443");
        assert_eq!(ca.unwrap(), b"-----BEGIN CERTIFICATE-----\n");
        assert!(!insecure);
        let (server, ca, insecure) = cluster_facts(&kc, Some("b")).unwrap();
        assert_eq!(server, "https://b.example:6443");
        assert!(ca.is_none());
        assert!(insecure);
        assert!(cluster_facts(&kc, Some("nope")).is_err());
    }
}
