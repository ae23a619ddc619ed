//! kube-sandbox: a loopback Kubernetes API server (HTTPS, the real wire
//! protocol for the subset kubectl-fleet uses, real RBAC semantics, and
//! ValidatingAdmissionPolicies evaluated on every write — what is and is
//! not implemented of them: `admission` module and docs/realapi.md) for
//! tests, the demo and benchmarks. Never a dependency of the shipped binaries.
//!
//! In CRD delegate mode (`SandboxOptions::crd_delegate`, `delegate`
//! module) it is the front of a real Kubernetes API server that serves every
//! CRD and custom resource, as kube-apiserver is of the apiextensions-apiserver
//! inside it; [`Sandbox::start_in_front_of_realapi`] starts the pair.
//!
//! ```no_run
//! let sb = kube_sandbox::Sandbox::start();
//! std::fs::write("/tmp/kubeconfig", sb.admin_kubeconfig()).unwrap();
//! // kubectl --kubeconfig /tmp/kubeconfig get namespaces
//! ```

mod admission;
pub mod auth;
mod compiled_policy;
mod controls;
mod delegate;
mod discovery;
mod errors;
mod events;
mod handlers;
mod hang;
mod http;
mod names;
mod objects;
mod patch;
mod protobuf;
pub mod realapi;
mod request;
mod resources;
mod schema;
mod selector;
mod server;
mod shared;
mod store;
mod table;
mod tls;
mod watch;

pub use controls::{
    Controls, FaultRule, REQUEST_LOG_CAPACITY, RequestRecord, StreamingLists,
    validate_max_token_expiration,
};
pub use delegate::CrdDelegate;

/// The parsers of untrusted request input, public only so the property
/// tests (`tests/fuzz_request_parsing.rs`) can drive them directly; the
/// server is the API everything else uses.
pub mod parsers {
    pub use crate::http::Query;
    pub use crate::patch::{json_patch, merge_patch, strategic_merge_patch};
    pub use crate::protobuf::decode as decode_protobuf;
    pub use crate::selector::{FieldSelector, LabelSelector};
}

use base64::Engine;
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How to start a sandbox.
#[derive(Debug, Clone)]
pub struct SandboxOptions {
    /// Address to bind; port 0 picks a free port.
    pub listen: SocketAddr,
    /// TokenRequest lifetime cap (`--service-account-max-token-expiration`); `None` = no cap.
    pub max_token_expiration: Option<Duration>,
    /// Events kept for watch resumption and continue tokens (like etcd's
    /// compaction window); older resourceVersions get 410 Gone.
    pub watch_history: usize,
    /// CRD delegate mode: `apiextensions.k8s.io` and every group the
    /// sandbox does not serve are proxied to this real API server
    /// (`delegate` module, docs/realapi.md).
    pub crd_delegate: Option<CrdDelegate>,
}

impl Default for SandboxOptions {
    fn default() -> Self {
        SandboxOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            max_token_expiration: None,
            watch_history: store::HISTORY_CAPACITY,
            crd_delegate: None,
        }
    }
}

/// A running sandbox API server. Dropping it stops the server.
pub struct Sandbox {
    url: String,
    ca_pem: String,
    admin_token: String,
    loopback_token: String,
    controls: Controls,
    shared: Arc<shared::Shared>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// The real API server behind it ([`Sandbox::start_in_front_of_realapi`]).
    behind: Option<realapi::RealApiBehind>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The admin token is a secret and stays out of debug output.
        f.debug_struct("Sandbox")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// The default namespaces every cluster has.
const DEFAULT_NAMESPACES: [&str; 4] = ["default", "kube-system", "kube-public", "kube-node-lease"];

fn initial_state(watch_history: usize, serves_crds: bool) -> store::State {
    let catalogue = if serves_crds {
        resources::Catalogue::builtin()
    } else {
        resources::Catalogue::builtin_without_crds()
    };
    let mut st = store::State::with_history(catalogue, watch_history);
    for ns in DEFAULT_NAMESPACES {
        objects::seed(
            &mut st,
            serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        );
    }
    // The aggregated roles (admin, edit, view) are stored with the rules the
    // aggregation controller writes into them on a real cluster, so reading
    // them shows what they grant. Authorization aggregates live anyway.
    let aggregated: std::collections::BTreeMap<String, Vec<serde_json::Value>> =
        auth::rbac::aggregated_cluster_roles(&auth::rbac::bootstrap_snapshot())
            .into_iter()
            .collect();
    for mut obj in auth::rbac::bootstrap_objects() {
        if obj["kind"] == "ClusterRole"
            && let Some(rules) = obj["metadata"]["name"]
                .as_str()
                .and_then(|n| aggregated.get(n))
        {
            obj["rules"] = serde_json::Value::Array(rules.clone());
        }
        objects::seed(&mut st, obj);
    }
    st
}

impl Sandbox {
    /// Starts a sandbox on a free loopback port; panics on failure (test helper).
    pub fn start() -> Sandbox {
        Sandbox::start_with(SandboxOptions::default()).expect("starting kube-sandbox")
    }

    /// Starts a sandbox with options, on its own thread and tokio runtime.
    /// Returns once it accepts requests.
    pub fn start_with(opts: SandboxOptions) -> anyhow::Result<Sandbox> {
        if let Some(max) = opts.max_token_expiration {
            controls::validate_max_token_expiration(max).map_err(anyhow::Error::msg)?;
        }
        let tls = tls::generate()?;
        let std_listener = std::net::TcpListener::bind(opts.listen)?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let admin_token = format!("sandbox-admin-{}", uuid::Uuid::new_v4().simple());
        let loopback_token = format!("sandbox-loopback-{}", uuid::Uuid::new_v4().simple());
        let controls = Controls::new(opts.max_token_expiration);
        let delegate = match &opts.crd_delegate {
            Some(config) => Some(
                delegate::Delegate::new(config)
                    .map_err(|e| anyhow::anyhow!("CRD delegate {}: {e}", config.server))?,
            ),
            None => None,
        };
        let shared = Arc::new(shared::Shared::new(
            initial_state(opts.watch_history, delegate.is_none()),
            controls.clone(),
            auth::TokenIssuer::new(),
            admin_token.clone(),
            loopback_token.clone(),
            addr,
            delegate,
        ));
        let (tx, rx) = tokio::sync::oneshot::channel();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<anyhow::Result<()>>();
        let server_config = tls.server_config.clone();
        let served = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("kube-sandbox-{}", addr.port()))
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .thread_name("kube-sandbox-worker")
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.into()));
                        return;
                    }
                };
                rt.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(std_listener) {
                        Ok(l) => l,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e.into()));
                            return;
                        }
                    };
                    let _ = ready_tx.send(Ok(()));
                    server::run(listener, server_config, served, rx).await;
                });
                // Dropping the runtime here cancels open connections and watches.
                rt.shutdown_timeout(Duration::from_secs(1));
            })?;
        ready_rx
            .recv()
            .map_err(|_| anyhow::anyhow!("sandbox thread exited before serving"))??;
        Ok(Sandbox {
            url: format!("https://{addr}"),
            ca_pem: tls.ca_pem,
            admin_token,
            loopback_token,
            controls,
            shared,
            shutdown: Some(tx),
            thread: Some(thread),
            behind: None,
        })
    }

    /// Models a restart of the API server (drills): for `down`, every
    /// connection is dropped and every new one refused (open watches
    /// end), and from now on no watch resumes from a resourceVersion
    /// older than this moment (`410 Gone`, as from the new watch caches
    /// of a restarted server). What is stored stays, and lists and
    /// continue tokens are served from it as before.
    pub fn restart(&self, down: Duration) {
        self.shared
            .state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .restart_watch_caches();
        self.controls.outage_for(down);
    }

    /// `https://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// PEM of the CA that signed the serving certificate.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// Bearer token of user `sandbox-admin` in group `system:masters`.
    pub fn admin_token(&self) -> &str {
        &self.admin_token
    }

    /// Kubeconfig YAML for the admin token; cluster, user and context are all
    /// named `sandbox`, with the CA embedded.
    pub fn admin_kubeconfig(&self) -> String {
        self.kubeconfig_for_token(&self.admin_token)
    }

    /// Kubeconfig YAML authenticating with `token`.
    pub fn kubeconfig_for_token(&self, token: &str) -> String {
        let ca = base64::engine::general_purpose::STANDARD.encode(self.ca_pem.as_bytes());
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: sandbox\n  cluster:\n    server: {url}\n    certificate-authority-data: {ca}\nusers:\n- name: sandbox\n  user:\n    token: {token}\ncontexts:\n- name: sandbox\n  context:\n    cluster: sandbox\n    user: sandbox\ncurrent-context: sandbox\npreferences: {{}}\n",
            url = self.url,
        )
    }

    /// Kubeconfig YAML of the API server's own loopback identity
    /// (`system:apiserver`, in `system:masters`): what the CRD delegate acts
    /// with on the sandbox, as kube-apiserver's in-process clients do on
    /// it. Its requests are the server's own traffic, not clients': no
    /// injected fault or latency applies to them and the request log
    /// leaves them out.
    pub fn loopback_kubeconfig(&self) -> String {
        self.kubeconfig_for_token(&self.loopback_token)
    }

    /// Writes the admin kubeconfig atomically with mode 0600.
    pub fn write_admin_kubeconfig(&self, path: &Path) -> std::io::Result<()> {
        write_private_atomic(path, self.admin_kubeconfig().as_bytes())
    }

    /// The test controls.
    pub fn controls(&self) -> &Controls {
        &self.controls
    }

    /// Stops the server and frees the port.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        // The real server behind first: it is a client of this sandbox.
        drop(self.behind.take());
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Writes `data` to a temporary file beside `path` with mode 0600, then
/// renames it into place, so readers never see a partial kubeconfig.
pub fn write_private_atomic(path: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("kubeconfig path has no file name"))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        file_name.to_string_lossy(),
        uuid::Uuid::new_v4().simple()
    ));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
