//! Connecting to a cluster the way kubectl does: `--kubeconfig` or
//! `KUBECONFIG` (a list of files, merged) or `~/.kube/config`, `--context`,
//! `--request-timeout`.
//!
//! Besides the client, a [`Cluster`] remembers the server URL and the CA of
//! the chosen context, because `register` hands both to the edge.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};

use super::error::{ContextFlags, Error, root_cause};

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

/// Discovery's answer per kind (group, version, kind), remembered for the
/// life of one [`Cluster`]: None when the API server does not serve it.
/// A kind a command's own apply starts serving (a CRD applied just before)
/// would be missed; no command applies objects of a CRD it applies.
pub(crate) type Discovered = std::collections::HashMap<
    (String, String, String),
    Option<(kube::api::ApiResource, kube::discovery::ApiCapabilities)>,
>;

/// A connected cluster: the client plus what the caller's kubeconfig says
/// about the server.
#[derive(Clone)]
pub struct Cluster {
    pub(crate) client: kube::Client,
    /// The configuration the client was built from (the edge builds a
    /// second client from it with another credential:
    /// `k8s::member::accepts_token`).
    config: kube::Config,
    server: String,
    ca_pem: Option<Vec<u8>>,
    insecure: bool,
    /// What discovery said of each kind a manifest named (None: not
    /// served), so a command that checks its manifests and then applies
    /// or deletes them asks once per kind (`k8s::manifests`).
    pub(crate) discovered: std::sync::Arc<std::sync::Mutex<Discovered>>,
}

/// The pause between two asks of a bounded wait ([`Cluster::wait_for`]).
const POLL_PAUSE: Duration = Duration::from_millis(100);

impl std::fmt::Debug for Cluster {
    // The client holds credentials; show only where it points.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// How long a client waits before each new try of a request the API
/// server answered `429`, `503` or `504`: 3 more tries over 3.5 s, then
/// the plugin's command says what failed (the operator's loops try again
/// on their own schedules). kube's client retries them 15 times by
/// default, backing off exponentially to over a minute between tries,
/// without a word: `kubectl fleet status` against an API server whose
/// backend was down (a load balancer answering 503) sat 272 s silent. A
/// `Retry-After` is not followed (an answer could ask for a day; API
/// priority and fairness asks for 1 s, which the waits cover).
const RETRY_WAITS: [Duration; 3] = [
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
];

/// kube's client (without its own retry) trying a request again after
/// each of [`RETRY_WAITS`] while the API server answers `429`, `503` or
/// `504`. A request whose body cannot be replayed (a stream) is tried
/// once. Written as one small service rather than tower's retry layer,
/// which needs a cloneable stack (a buffer over kube's boxed one): that
/// grew the plugin by 149 KB, past its 12 MiB goal.
#[derive(Clone)]
struct BoundedRetry(kube::Client);

impl tower_service::Service<http::Request<kube::client::Body>> for BoundedRetry {
    type Response = http::Response<kube::client::Body>;
    type Error = kube::Error;
    type Future = futures::future::BoxFuture<'static, Result<Self::Response, kube::Error>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), kube::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<kube::client::Body>) -> Self::Future {
        let client = self.0.clone();
        Box::pin(async move {
            let (method, uri, headers) = (
                request.method().clone(),
                request.uri().clone(),
                request.headers().clone(),
            );
            let body = request.body().try_clone();
            let mut answer = client.send(request).await?;
            for wait in RETRY_WAITS {
                if !matches!(answer.status().as_u16(), 429 | 503 | 504) {
                    break;
                }
                let Some(again) = body.as_ref().and_then(kube::client::Body::try_clone) else {
                    break;
                };
                tokio::time::sleep(wait).await;
                let mut retry = http::Request::new(again);
                *retry.method_mut() = method.clone();
                *retry.uri_mut() = uri.clone();
                *retry.headers_mut() = headers.clone();
                answer = client.send(retry).await?;
            }
            Ok(answer)
        })
    }
}

/// A client for `config` whose 429/503/504 answers are tried again only
/// after each of `RETRY_WAITS` (`BoundedRetry`), not 15 times over
/// minutes as kube's default does, silently: the plugin's, the hub's and
/// an edge's client of its member cluster. After a 45 s outage answering
/// 503, the hub's liveness record came 46.7 s after the API server served
/// again, its read of it waiting inside kube's backoff.
pub fn bounded_client(config: kube::Config) -> Result<kube::Client, kube::Error> {
    let client = unretried_client(config)?;
    let namespace = client.default_namespace().to_owned();
    Ok(kube::Client::new(BoundedRetry(client), namespace))
}

/// A client for `config` that does not retry a 429/503/504 at all: each
/// is its caller's to see (the hub's watches and its probe of the API
/// server; `bounded_client` builds on it).
pub fn unretried_client(mut config: kube::Config) -> Result<kube::Client, kube::Error> {
    config.default_retry = false;
    kube::Client::try_from(config)
}

impl Cluster {
    /// Asks `ready` every 100 ms until it answers true, for at most
    /// `limit` (the bounded waits of `kubectl wait --timeout`): Ok then,
    /// its first error at once, `late()` when time runs out. Every wait of
    /// a command for the API server to catch up goes through here.
    pub(crate) async fn wait_for<F, Fut>(
        limit: Duration,
        mut ready: F,
        late: impl FnOnce() -> Error,
    ) -> Result<(), Error>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<bool, Error>>,
    {
        let attempts = limit.as_millis() / POLL_PAUSE.as_millis();
        for _ in 0..attempts.max(1) {
            if ready().await? {
                return Ok(());
            }
            tokio::time::sleep(POLL_PAUSE).await;
        }
        Err(late())
    }

    /// Waits (at most `limit`) until the object `name` that `api` reads,
    /// just marked for deletion, is gone, so that what follows (recreating
    /// it, deleting what it depends on) does not race its finalisation.
    /// `what` names it in errors; `hint` says what to do when it outlives
    /// the wait.
    pub(crate) async fn wait_gone<K>(
        &self,
        api: &kube::Api<K>,
        name: &str,
        what: &str,
        limit: Duration,
        hint: &str,
    ) -> Result<(), Error>
    where
        K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        let ready = || async {
            match api.get_opt(name).await {
                Ok(found) => Ok(found.is_none()),
                Err(e) => Err(Error::api(
                    format!("wait for {what} to be deleted"),
                    self.server(),
                    e,
                )),
            }
        };
        Self::wait_for(limit, ready, || Error::Unexpected {
            what: format!("delete {what}"),
            reason: format!("it still exists after {}s{hint}", limit.as_secs()),
        })
        .await
    }

    /// Loads the kubeconfig ([`read_kubeconfig`]) and builds a client for
    /// the chosen context. No request is made yet: an unreachable server
    /// surfaces on first use.
    pub async fn connect(opts: &ConnectOptions) -> Result<Self, Error> {
        let kubeconfig = read_kubeconfig(opts.kubeconfig.as_deref())?;
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
        let kubeconfig_error = |source: KubeconfigError| Error::Kubeconfig {
            path: None,
            reason: root_cause(&source),
            source: Some(source),
        };
        if let Some(context) = &opts.context
            && !kubeconfig.contexts.iter().any(|c| &c.name == context)
        {
            let mut available: Vec<String> =
                kubeconfig.contexts.iter().map(|c| c.name.clone()).collect();
            available.sort();
            return Err(Error::ContextNotFound {
                context: context.clone(),
                path: opts.kubeconfig.clone(),
                available,
                flags: ContextFlags::KUBECTL,
            });
        }
        let (server, ca_pem, insecure) =
            cluster_facts(&kubeconfig, opts.context.as_deref()).map_err(kubeconfig_error)?;
        let server = shown_server(&server);
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
        // The configuration kept (`Cluster::config`, which the operator
        // builds its clients from) is as read.
        let client = bounded_client(config.clone()).map_err(|source| Error::Unreachable {
            what: "build the API client".into(),
            server: server.clone(),
            reason: root_cause(&source),
            source,
        })?;
        Ok(Cluster {
            client,
            config,
            server,
            ca_pem,
            insecure,
            discovered: Default::default(),
        })
    }

    /// The configuration of the client (where it connects, whom it
    /// trusts, its credential).
    pub fn config(&self) -> &kube::Config {
        &self.config
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

/// The files `KUBECONFIG` lists, empty entries dropped; None when it is
/// unset or lists nothing (then `~/.kube/config`, or in-cluster, applies).
pub fn kubeconfig_from_env() -> Option<Vec<PathBuf>> {
    let value = std::env::var_os("KUBECONFIG")?;
    let files: Vec<PathBuf> = std::env::split_paths(&value)
        .filter(|p| !p.as_os_str().is_empty())
        .collect();
    (!files.is_empty()).then_some(files)
}

/// Reads the kubeconfig the way kubectl does: `path` when given (it must
/// exist), else the files `KUBECONFIG` lists, merged (the first file to set
/// a value wins) — a listed file that does not exist is skipped, as kubectl
/// skips it —, else `~/.kube/config`.
// The one error type of this layer; it is built at most once per command.
#[allow(clippy::result_large_err)]
pub fn read_kubeconfig(path: Option<&Path>) -> Result<Kubeconfig, Error> {
    let error = |path: Option<&Path>, source: KubeconfigError| Error::Kubeconfig {
        path: path.map(Path::to_owned),
        reason: root_cause(&source),
        source: Some(source),
    };
    if let Some(path) = path {
        return Kubeconfig::read_from(path).map_err(|e| error(Some(path), e));
    }
    let Some(files) = kubeconfig_from_env() else {
        return Kubeconfig::read().map_err(|e| error(None, e));
    };
    let present: Vec<&PathBuf> = files
        .iter()
        .filter(
            |f| !matches!(std::fs::metadata(f), Err(e) if e.kind() == std::io::ErrorKind::NotFound),
        )
        .collect();
    if present.is_empty() {
        let listed: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        return Err(Error::Kubeconfig {
            path: None,
            reason: format!(
                "none of the files KUBECONFIG lists exists ({})",
                listed.join(", ")
            ),
            source: None,
        });
    }
    let mut merged = Kubeconfig::default();
    for file in present {
        let next = Kubeconfig::read_from(file).map_err(|e| error(Some(file), e))?;
        merged = merged.merge(next).map_err(|e| error(None, e))?;
    }
    Ok(merged)
}

/// An API server URL as it may be shown and handed on: without the
/// `user:password@` some kubeconfigs carry in it (a credential kube never
/// sends for a token or a certificate), whatever else the URL holds. Every
/// URL this crate keeps for messages, conditions, Events, logs and
/// kubeconfigs it writes for others goes through here.
pub fn shown_server(url: &str) -> String {
    let (scheme, rest) = match url.find("://") {
        Some(i) => url.split_at(i + 3),
        None => ("", url),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    match authority.rfind('@') {
        Some(at) => format!("{scheme}{}{tail}", &authority[at + 1..]),
        None => url.to_owned(),
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

    #[test]
    fn a_shown_server_url_carries_no_userinfo() {
        for (url, shown) in [
            (
                "https://admin:s3cret@hub.example:6443",
                "https://hub.example:6443",
            ),
            (
                "https://admin:s3cret@hub.example:6443/k8s/x?y#z",
                "https://hub.example:6443/k8s/x?y#z",
            ),
            ("https://a@b:c@[fd00::1]:6443", "https://[fd00::1]:6443"),
            ("https://token@hub", "https://hub"),
            ("admin:pw@hub.example:6443", "hub.example:6443"),
            (
                "https://hub.example:6443/path@x",
                "https://hub.example:6443/path@x",
            ),
            ("https://hub.example:6443", "https://hub.example:6443"),
            ("", ""),
        ] {
            assert_eq!(shown_server(url), shown, "{url}");
        }
    }

    #[tokio::test]
    async fn a_server_url_with_userinfo_is_kept_without_it() {
        let kc = Kubeconfig::from_yaml(&KUBECONFIG.replace(
            "https://a.example:6443",
            "https://admin:s3cret@a.example:6443",
        ))
        .unwrap();
        let opts = ConnectOptions {
            kubeconfig: None,
            context: Some("a".into()),
            request_timeout: None,
        };
        let cluster = Cluster::from_kubeconfig(kc, &opts).await.unwrap();
        assert_eq!(cluster.server(), "https://a.example:6443");
        assert!(!format!("{cluster:?}").contains("s3cret"));
    }

    #[tokio::test]
    async fn an_unknown_context_lists_the_kubeconfigs_contexts() {
        let kc = Kubeconfig::from_yaml(KUBECONFIG).unwrap();
        let opts = ConnectOptions {
            kubeconfig: Some("/hub.kubeconfig".into()),
            context: Some("nope".into()),
            request_timeout: None,
        };
        let err = Cluster::from_kubeconfig(kc, &opts).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "--kubeconfig /hub.kubeconfig has no context \"nope\" (its contexts: a, b)"
        );
        assert_eq!(
            err.hint(),
            "pass --context with one of them, or a --kubeconfig that has that context"
        );
    }
}
