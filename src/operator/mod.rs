//! `fleet-operator`: one binary, two roles (docs/architecture.md#components).
//!
//! - [`hub`]: phase controller over FederatedClusters, leader-elected.
//! - [`prober`]: Pull mode: the hub probes member clusters.
//! - [`bucket`]: the leader's backfill of the sites' bucket label.
//! - [`federation`]: the fleet-wide `FederationStatus` singleton (the
//!   summariser) and the leader's liveness record.
//! - [`view`], [`probe_stats`]: what the hub's loops share in memory.
//! - [`edge`]: the agent on a member cluster that dials home.
//! - [`collect`]: what the edge reports; the change-only merge patches
//!   are built by [`crate::fleet::status_patch`] (pure).
//! - [`credential`]: the edge's hub kubeconfig and token lifetime.
//! - [`leader`]: Lease-based leader election.
//! - [`server`]: the HTTP stack: probes, `/metrics`, the REST API over TLS.
//! - [`metrics`]: the Prometheus metrics.
//! - [`rest`]: the hub's read-only REST API and its authentication.
//! - [`review_cache`]: the review caches, coalescing and rate limit behind it.
//! - [`clock`], [`build`]: leaves every role reads (the clock, the
//!   interval scale and jitter; the version and the CRD name).
//!
//! [`run`] is what `main` calls: it checks the CRDs, starts the probes and
//! the role, and returns when SIGTERM/SIGINT arrives (graceful shutdown).
//! The role's loops are wired in one place each: `run_hub` builds and
//! spawns the leader elector, the controller, the prober, the summariser,
//! the liveness loop, the bucket backfill and the servers; `run_edge` the edge and its servers.

pub mod bucket;
pub mod build;
pub mod clock;
pub mod collect;
pub mod credential;
pub mod edge;
pub mod events;
pub mod federation;
pub mod hub;
pub mod leader;
pub mod metrics;
pub mod paging;
pub mod probe_stats;
pub mod prober;
pub mod renewals;
pub mod rest;
pub mod review_cache;
pub mod server;
pub mod view;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use jiff::SignedDuration;
use tokio::sync::watch;

use crate::fleet::duration::{parse_duration, parse_signed_duration};
use crate::k8s::site_status::{crds_installed, sites};

use build::{CRD_NAME, VERSION};

/// The role this process plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Role {
    /// Runs on the hub: phases, conditions, leader election.
    Hub,
    /// Runs on a member cluster: reports its site's status to the hub.
    Edge,
}

/// Log line format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// `fleet-operator` command line.
#[derive(Clone, Debug, Parser)]
#[command(
    name = "fleet-operator",
    version,
    about = "Companion operator of kubectl-fleet: hub phase controller or edge agent"
)]
pub struct Args {
    /// Which role to run.
    #[arg(long, value_enum, default_value = "hub")]
    pub federation_role: Role,

    /// Kubeconfig of the cluster this process runs against (the hub for the
    /// hub role, the member for the edge role); default: KUBECONFIG, then
    /// in-cluster.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,

    /// Kubeconfig context to use with --kubeconfig.
    #[arg(long)]
    pub context: Option<String>,

    /// Address of the plain-HTTP /healthz and /readyz server.
    #[arg(long, default_value = "0.0.0.0:8080")]
    pub health_addr: SocketAddr,

    /// Address of the HTTPS server: /metrics, the probes and (hub) the REST API.
    #[arg(long, default_value = "0.0.0.0:8443")]
    pub secure_addr: SocketAddr,

    /// PEM certificate (chain) of the HTTPS server; default: a self-signed one generated at start.
    #[arg(long, requires = "tls_private_key_file")]
    pub tls_cert_file: Option<PathBuf>,

    /// PEM private key of --tls-cert-file.
    #[arg(long, requires = "tls_cert_file")]
    pub tls_private_key_file: Option<PathBuf>,

    /// Require a bearer token allowed to `get` the non-resource URL /metrics
    /// (TokenReview and SubjectAccessReview); default: true on the hub, false on the edge.
    #[arg(long, action = clap::ArgAction::Set)]
    pub metrics_auth: Option<bool>,

    /// Accept only bearer tokens minted for one of these audiences (e.g.
    /// `kubectl create token NAME --audience fleet-operator`) on /metrics
    /// and the REST API; default: the API server's own audience.
    #[arg(long, value_delimiter = ',', value_name = "AUDIENCE")]
    pub auth_token_audiences: Vec<String>,

    /// Connection caps and timeouts of the HTTP servers.
    #[command(flatten)]
    pub http: server::HttpLimits,

    /// Hub: keep the `cluster` label of federation_health_check_duration_seconds
    /// (false: one fleet-wide histogram, for very large fleets).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub metrics_cluster_label: bool,

    /// Log format.
    #[arg(long, value_enum, default_value = "text")]
    pub log_format: LogFormat,

    /// Log detail, as kubectl's -v: 0-3 info, 4-5 debug, 6+ trace; RUST_LOG overrides.
    #[arg(
        short = 'v',
        long = "v",
        value_name = "LEVEL",
        default_value = "0",
        value_parser = crate::fleet::verbosity::parse_level
    )]
    pub verbose: u8,

    /// Hub: elect one active replica through a coordination.k8s.io Lease.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub leader_elect: bool,

    /// Hub: namespace of the leader Lease.
    #[arg(long, default_value = crate::fleet::rbac::FLEET_NAMESPACE)]
    pub lease_namespace: String,

    /// Hub: name of the leader Lease.
    #[arg(long, default_value = "fleet-operator-hub")]
    pub lease_name: String,

    /// Hub: how long the Lease stays valid without renewal (renewed every third).
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    pub lease_duration: Duration,

    /// Hub: this replica's identity in the Lease (default: POD_NAME or hostname, plus the pid).
    #[arg(long)]
    pub leader_identity: Option<String>,

    /// Hub: CredentialExpiring turns True when less than this remains of a site's token.
    #[arg(long, default_value = "7d", value_parser = parse_duration)]
    pub credential_warning: Duration,

    /// Hub: timeout of one Pull-site probe (default: half the site's
    /// heartbeat interval, at most 10s).
    #[arg(long, value_parser = parse_duration)]
    pub probe_timeout: Option<Duration>,

    /// Hub: Pull-site probes in flight at most.
    #[arg(long, default_value_t = prober::DEFAULT_PROBE_CONCURRENCY as u32, value_parser = clap::value_parser!(u32).range(1..))]
    pub probe_concurrency: u32,

    /// Hub: bytes one Pull probe may read from a member and keep of what it
    /// decodes (e.g. 32Mi, 128Mi); a member whose answers are larger fails
    /// the probe with reason TooLarge. One answer is cut at 8Mi whatever
    /// this says.
    #[arg(long, default_value = "32Mi", value_name = "BYTES", value_parser = crate::fleet::probe::parse_byte_size)]
    pub probe_max_bytes: u64,

    /// Hub: the only networks Pull members may be in (repeat, or separate
    /// with commas), e.g. 10.20.0.0/16; default: any address but loopback,
    /// link-local and cloud metadata ones. A network inside one of those
    /// lifts that refusal (e.g. 127.0.0.0/8 for members on the hub's host).
    #[arg(long, value_name = "CIDR", value_delimiter = ',')]
    pub pull_allow_cidr: Vec<crate::fleet::probe::Cidr>,

    /// Hub: networks the Pull prober never connects to (repeat, or
    /// separate with commas), e.g. the hub cluster's service and pod networks.
    #[arg(long, value_name = "CIDR", value_delimiter = ',')]
    pub pull_deny_cidr: Vec<crate::fleet::probe::Cidr>,

    /// Hub: a signal counts toward a cross-cluster correlation while its
    /// lastSeen is within this window.
    #[arg(long, default_value = "15m", value_parser = parse_duration)]
    pub correlation_window: Duration,

    /// Hub: distinct clusters with the same active signal that make a correlation.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub correlation_min_clusters: u32,

    /// Hub: how far back a lower environment's signal may lie to make a
    /// cascade into production.
    #[arg(long, default_value = "24h", value_parser = parse_duration)]
    pub cascade_lookback: Duration,

    /// Hub: what sites going dark together are grouped by into one outage:
    /// `region` (spec.region) or a label key of the FederatedCluster.
    #[arg(long, default_value = "region", value_name = "region|LABEL_KEY", value_parser = crate::fleet::outage::GroupBy::parse)]
    pub outage_group_by: crate::fleet::outage::GroupBy,

    /// Hub: sites of one group that must leave Connected within
    /// --outage-window to make a grouped outage.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub outage_min_clusters: u32,

    /// Hub: longest time between two sites of one group leaving Connected
    /// for them to count as one outage.
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    pub outage_window: Duration,

    /// Hub: site status writes a second at most, once a burst is spent
    /// (--status-write-burst). A fleet-wide transition is written at this
    /// pace; the fleet summary, gauges and REST API hold the hub's
    /// judgement at once.
    #[arg(long, default_value_t = hub::DEFAULT_STATUS_WRITE_QPS, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub status_write_qps: u32,

    /// Hub: site status writes that may go as fast as they can before
    /// --status-write-qps paces them (a region's outage is written at once).
    #[arg(long, default_value_t = hub::DEFAULT_STATUS_WRITE_BURST, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub status_write_burst: u32,

    /// Edge: the site this edge reports for.
    #[arg(long, required_if_eq("federation_role", "edge"), value_parser = parse_site)]
    pub site: Option<String>,

    /// Edge: kubeconfig for the hub with the site token (`kubectl fleet register` output).
    /// Re-read when it changes, so a rotated token is used without a restart.
    #[arg(long, required_if_eq("federation_role", "edge"))]
    pub hub_kubeconfig: Option<PathBuf>,

    /// Edge: the Secret (NAMESPACE/NAME, on the member cluster) the hub
    /// kubeconfig is mounted from; a renewed token is stored there (key
    /// `kubeconfig`) so a restart finds it. Needs get and update on it.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pub hub_kubeconfig_secret: Option<crate::k8s::edge_token::SecretName>,

    /// Edge: the ConfigMap (NAMESPACE/NAME, on the member cluster) holding
    /// the edge's dark-period journal, so what it sees while it cannot
    /// reach the hub survives its restarts. Needs get and update on it
    /// (it must exist: `kubectl fleet install --role edge` creates it).
    /// Without it the journal is kept in memory only.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pub journal_configmap: Option<crate::k8s::edge_token::SecretName>,

    /// Edge: do not renew the site token automatically.
    #[arg(long)]
    pub no_auto_rotate: bool,

    /// Edge: the member cluster is the hub cluster itself, on purpose (the
    /// hub's own cluster registered as a site). Without it the edge refuses
    /// to report when its member accepts the site's hub token, i.e. when
    /// --kubeconfig (or KUBECONFIG, or the in-cluster configuration) points
    /// at the hub rather than at the site's cluster.
    #[arg(long)]
    pub member_is_hub: bool,

    /// Testing: shift the edge's reported clock (signed, e.g. -10m).
    #[arg(long, hide = true, default_value = "0s", allow_hyphen_values = true, value_parser = parse_signed_duration)]
    pub clock_offset: SignedDuration,

    /// Testing: multiply heartbeat intervals (both roles must agree).
    #[arg(long, hide = true, default_value_t = 1.0)]
    pub interval_scale: f64,
}

/// Why the operator could not run. `main` prints it with its causes on one
/// line ([`crate::k8s::with_causes`]).
#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    /// The fleet CRDs are not installed on the cluster the hub runs against.
    #[error(
        "CRD {CRD_NAME} not found: run `kubectl fleet install --apply` against this cluster (the hub)"
    )]
    CrdMissing,
    /// The edge's hub kubeconfig points at a cluster without the fleet API
    /// (a member cluster, another cluster): installing there would not help.
    #[error(
        "the hub kubeconfig {} points at {server}, a cluster without the fleet API ({CRD_NAME}): \
         check --hub-kubeconfig and its current context (it must be the hub kubeconfig `kubectl fleet register` printed for this site)",
        path.display()
    )]
    NotAHub {
        /// The edge's `--hub-kubeconfig`.
        path: PathBuf,
        /// The server its current context names.
        server: String,
    },
    /// The edge's member cluster is the hub, and it was not told so.
    #[error(
        "the member cluster this edge reads ({member}) is the hub itself: it accepts the site's hub token from {}; \
         the edge would report the hub's nodes, pods and signals as site {site}'s. Point --kubeconfig (or KUBECONFIG, \
         or run it in the site's cluster) at the member cluster of {site}; if {site} really is the hub's own cluster, \
         pass --member-is-hub",
        path.display()
    )]
    MemberIsHub {
        /// The site.
        site: String,
        /// The member's API server.
        member: String,
        /// The edge's `--hub-kubeconfig`.
        path: PathBuf,
    },
    /// No usable kubeconfig / in-cluster config.
    #[error("loading the Kubernetes client configuration")]
    Config(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The API server could not be asked whether the CRDs exist.
    #[error("checking that the fleet CRDs are installed")]
    Discovery(#[source] kube::Error),
    /// The hub kubeconfig of an edge is unusable.
    #[error(transparent)]
    Credential(#[from] credential::CredentialError),
    /// The HTTP servers could not start.
    #[error("starting the HTTP servers")]
    Server(#[from] server::ServerError),
}

pub use crate::k8s::source_chain;

/// The client configuration for the cluster this process runs against:
/// `--kubeconfig`, else the files `KUBECONFIG` lists (a missing one
/// skipped, as kubectl does), else `~/.kube/config`, else the in-cluster
/// configuration.
pub async fn config_for(
    kubeconfig: Option<&std::path::Path>,
    context: Option<&str>,
) -> Result<kube::Config, OperatorError> {
    let boxed = |e: Box<dyn std::error::Error + Send + Sync>| OperatorError::Config(e);
    if kubeconfig.is_none() && context.is_none() && crate::k8s::kubeconfig_from_env().is_none() {
        return kube::Config::infer().await.map_err(|e| boxed(Box::new(e)));
    }
    let options = crate::k8s::ConnectOptions {
        kubeconfig: kubeconfig.map(std::path::Path::to_owned),
        context: context.map(str::to_owned),
        request_timeout: None,
    };
    crate::k8s::Cluster::connect(&options)
        .await
        .map(|cluster| cluster.config().clone())
        .map_err(|e| boxed(Box::new(e)))
}

fn default_identity() -> String {
    let host = std::env::var("POD_NAME")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|s| s.trim().to_owned())
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "fleet-operator".to_owned());
    format!("{host}-{}", std::process::id())
}

/// `--site`: a site name (a DNS-1123 label), checked before anything
/// starts. An edge deployed from the kustomize edge base without an overlay
/// passes its placeholder, which no site can be called (docs/gitops.md).
fn parse_site(s: &str) -> Result<String, String> {
    crate::fleet::rbac::validate_site_name(s)
        .map(|()| s.to_owned())
        .map_err(|e| {
            format!(
                "{e}; pass the name the site was registered with (the kustomize edge base leaves it to an overlay, docs/gitops.md)"
            )
        })
}

/// Resolves on SIGTERM or SIGINT.
#[cfg(unix)]
async fn termination() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    let mut int = signal(SignalKind::interrupt()).ok();
    tokio::select! {
        _ = async { match term.as_mut() { Some(s) => { s.recv().await; } None => std::future::pending().await } } => {}
        _ = async { match int.as_mut() { Some(s) => { s.recv().await; } None => std::future::pending().await } } => {}
    }
}

/// Resolves on Ctrl-C, the one termination signal Windows has (the
/// operator ships for Linux; the library compiles for the Windows CLI).
#[cfg(not(unix))]
async fn termination() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// How long a graceful shutdown may take before the process just exits
/// (a Kubernetes pod gets 30 s by default before SIGKILL).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Runs the operator until SIGTERM/SIGINT.
pub async fn run(args: Args) -> Result<(), OperatorError> {
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut stopping = stop_rx.clone();
    tokio::spawn(async move {
        termination().await;
        tracing::info!("shutting down");
        stop_tx.send_replace(true);
    });
    let work = run_until(args, stop_rx);
    tokio::pin!(work);
    tokio::select! {
        r = &mut work => r,
        _ = async {
            let _ = stopping.wait_for(|s| *s).await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } => {
            tracing::warn!(grace = ?SHUTDOWN_GRACE, "graceful shutdown took too long, exiting");
            Ok(())
        }
    }
}

/// The HTTPS listener, its TLS configuration and limits, handed to the role.
struct Secure {
    listener: tokio::net::TcpListener,
    tls: Arc<rustls::ServerConfig>,
    limits: server::ServeLimits,
}

impl Secure {
    /// Serves `router` on a thread of its own until the result is dropped.
    fn serve(self, router: axum::Router) -> Result<server::Apart, OperatorError> {
        Ok(server::serve_apart(
            "https",
            self.listener,
            Some(self.tls),
            router,
            self.limits,
        )?)
    }
}

/// Runs the operator until `shutdown` turns true (tests drive this).
pub async fn run_until(args: Args, shutdown: watch::Receiver<bool>) -> Result<(), OperatorError> {
    let open_files = server::raise_open_file_limit();
    let listener = server::bind(args.health_addr).await?;
    let bound = listener.local_addr().unwrap_or(args.health_addr);
    let secure = server::bind(args.secure_addr).await?;
    let secure_bound = secure.local_addr().unwrap_or(args.secure_addr);
    let (tls, self_signed) = server::tls_config(
        args.tls_cert_file.as_deref(),
        args.tls_private_key_file.as_deref(),
    )?;
    let ready = server::Readiness::default();
    tracing::info!(addr = %bound, "serving /healthz and /readyz");
    if self_signed {
        tracing::info!(
            addr = %secure_bound,
            "serving HTTPS with a self-signed certificate generated at start \
             (give --tls-cert-file and --tls-private-key-file to use your own)"
        );
    } else {
        tracing::info!(addr = %secure_bound, "serving HTTPS");
    }
    let _probes = server::serve_apart(
        "probes",
        listener,
        None,
        server::probe_routes(ready.clone()),
        args.http.probes(),
    )?;
    let secure = Secure {
        listener: secure,
        tls,
        limits: args.http.secure(open_files),
    };
    // `_probes` stops the probe server when this returns, whatever ends the role.
    match args.federation_role {
        Role::Hub => run_hub(&args, ready, secure, shutdown).await,
        Role::Edge => run_edge(&args, ready, secure, shutdown).await,
    }
}

/// The hub role: every loop it runs, built and spawned here (none spawns
/// another), until `shutdown` turns true.
async fn run_hub(
    args: &Args,
    ready: server::Readiness,
    secure: Secure,
    shutdown: watch::Receiver<bool>,
) -> Result<(), OperatorError> {
    let config = config_for(args.kubeconfig.as_deref(), args.context.as_deref()).await?;
    // kube's client would retry a 429/503/504 inside the request up to 15
    // times, backing off exponentially to over a minute. The hub's reads
    // and writes try 3 more times over 3.5 s, then their loops try again
    // on their own schedules (`k8s::bounded_client`).
    let client = crate::k8s::bounded_client(config.clone())
        .map_err(|e| OperatorError::Config(Box::new(e)))?;
    // The hub's watches and its probe of whether the API server answers
    // (`hub::watch_sight`) see each 429 and 503 themselves. A restarted
    // API server answers 429 to every watch while it rebuilds its watch
    // cache; the watches retry at most a second apart
    // (`k8s::site_status::WatchBackoff`).
    let unretried =
        crate::k8s::unretried_client(config).map_err(|e| OperatorError::Config(Box::new(e)))?;
    if !crds_installed(&client)
        .await
        .map_err(OperatorError::Discovery)?
    {
        return Err(OperatorError::CrdMissing);
    }
    let (lead_tx, lead_rx) = watch::channel(!args.leader_elect);
    let identity = args
        .leader_identity
        .clone()
        .unwrap_or_else(default_identity);
    let elector = if args.leader_elect {
        let cfg = leader::ElectionConfig {
            namespace: args.lease_namespace.clone(),
            name: args.lease_name.clone(),
            identity: identity.clone(),
            lease_duration: args.lease_duration,
        };
        tracing::info!(identity = %cfg.identity, lease = %format!("{}/{}", cfg.namespace, cfg.name), "leader election on");
        let api = crate::k8s::lease::lease_api(client.clone(), &cfg.namespace);
        Some(tokio::spawn(leader::run(
            leader::LeaderElector::new(api, cfg),
            lead_tx,
            shutdown.clone(),
        )))
    } else {
        drop(lead_tx);
        None
    };
    let metrics = Arc::new(
        metrics::Metrics::new(metrics::MetricsRole::Hub)
            .with_per_cluster_histograms(args.metrics_cluster_label)
            .with_outage_group_by(args.outage_group_by.clone()),
    );
    let prober_cfg = prober::ProberConfig {
        timeout: args.probe_timeout,
        concurrency: args.probe_concurrency as usize,
        max_bytes: args.probe_max_bytes,
        addresses: crate::fleet::probe::AddressPolicy {
            allow: args.pull_allow_cidr.clone(),
            deny: args.pull_deny_cidr.clone(),
        },
    };
    let federation_cfg = federation::FederationConfig {
        correlation: crate::fleet::correlation::CorrelationConfig {
            window: args.correlation_window,
            threshold: args.correlation_min_clusters as usize,
        },
        cascade_lookback: args.cascade_lookback,
        outage: crate::fleet::outage::OutageConfig {
            group_by: args.outage_group_by.clone(),
            min_clusters: args.outage_min_clusters as usize,
            window: args.outage_window,
        },
    };
    let recorder =
        crate::k8s::events::EventRecorder::new(client.clone(), events::REPORTER, &identity);
    let hub = Arc::new(
        hub::Hub::new(
            sites(client.clone()),
            hub::HubConfig {
                credential_warning: args.credential_warning,
                interval_scale: args.interval_scale,
                identity,
                status_write_qps: args.status_write_qps,
                status_write_burst: args.status_write_burst,
            },
            lead_rx,
        )
        .with_metrics(metrics.clone())
        .with_events(events::spawn(recorder, shutdown.clone())),
    );
    let statuses = crate::k8s::federation_status::federation_statuses(client.clone());
    let auth = Arc::new(rest::Auth::new(client, args.auth_token_audiences.clone()));
    let routes = server::probe_routes(ready.clone()).merge(rest::routes(rest::ApiState {
        view: hub.view.clone(),
        auth: auth.clone(),
        slots: args.http.response_slots(),
    }));
    let metrics_auth = args.metrics_auth.unwrap_or(true).then_some(auth);
    let serving = secure.serve(server::with_metrics(
        routes,
        metrics,
        metrics_auth,
        args.http.response_slots(),
    ))?;
    ready.set(true);
    tracing::info!(version = VERSION, "hub started");
    // Every loop of the hub, started here and nowhere else: the phase
    // controller, the Pull prober, the bucket backfill, the fleet
    // summariser and the liveness record, all over the controller's cache.
    let (cache, controller) = hub::controller(hub.clone(), unretried.clone(), shutdown.clone());
    let prober = tokio::spawn(prober::run(
        hub.clone(),
        cache.clone(),
        prober_cfg,
        shutdown.clone(),
    ));
    let backfill = tokio::spawn(bucket::run(
        hub.bucket_due(),
        hub.api(),
        hub.leading(),
        hub.metrics.clone(),
        cache.clone(),
        shutdown.clone(),
    ));
    let summary = tokio::spawn(federation::run(
        statuses.clone(),
        hub.clone(),
        cache.clone(),
        hub.view.clone(),
        federation_cfg,
        shutdown.clone(),
    ));
    let sight = tokio::spawn(hub::watch_sight(
        hub.clone(),
        sites(unretried),
        shutdown.clone(),
    ));
    let liveness = tokio::spawn(federation::run_liveness(
        statuses,
        hub.clone(),
        cache,
        hub.view.clone(),
        shutdown,
    ));
    controller.await;
    let _ = summary.await;
    let _ = liveness.await;
    let _ = prober.await;
    let _ = backfill.await;
    let _ = sight.await;
    if let Some(e) = elector {
        let _ = e.await;
    }
    drop(serving);
    let (reconciles, writes, conflicts, errors) = hub.metrics.snapshot();
    tracing::info!(reconciles, writes, conflicts, errors, "hub stopped");
    Ok(())
}

async fn run_edge(
    args: &Args,
    ready: server::Readiness,
    secure: Secure,
    shutdown: watch::Receiver<bool>,
) -> Result<(), OperatorError> {
    let site = args.site.clone().unwrap_or_default();
    let hub_path = args.hub_kubeconfig.clone().unwrap_or_default();
    let member_config = config_for(args.kubeconfig.as_deref(), args.context.as_deref()).await?;
    let member = crate::k8s::bounded_client(member_config.clone())
        .map_err(|e| OperatorError::Config(Box::new(e)))?;
    let hub_kc = credential::HubKubeconfig::read(&hub_path)?;
    let hub_client = hub_kc.client().await?;
    // The hub being down must not stop the edge; only a hub that answers
    // "no such API" does.
    match crds_installed(&hub_client).await {
        Ok(true) => {}
        Ok(false) => {
            return Err(OperatorError::NotAHub {
                path: hub_path,
                server: hub_kc.server().unwrap_or("its server").to_owned(),
            });
        }
        Err(e) => tracing::warn!(
            cause = %crate::k8s::readable(&e),
            "could not check the fleet CRDs on the hub yet; reporting anyway"
        ),
    }
    // An edge whose member is the hub would report the hub's inventory as
    // the site's: refuse, unless told the site is the hub's own cluster.
    let member_check = if args.member_is_hub {
        tracing::info!(site = %site, "--member-is-hub: this edge reports the hub's own cluster as site {site}");
        edge::MemberCheck::ToldItIsTheHub
    } else {
        match edge::member_is_hub(&member_config, &hub_kc).await {
            edge::MemberCheck::IsTheHub => {
                return Err(OperatorError::MemberIsHub {
                    site,
                    member: member_config.cluster_url.to_string(),
                    path: hub_path,
                });
            }
            checked => checked,
        }
    };
    let edge = edge::Edge::new(
        edge::EdgeConfig {
            site: site.clone(),
            hub_kubeconfig: hub_path,
            hub_kubeconfig_secret: args.hub_kubeconfig_secret.clone(),
            journal: args.journal_configmap.clone(),
            clock_offset: args.clock_offset,
            interval_scale: args.interval_scale,
            auto_rotate: !args.no_auto_rotate,
            version: VERSION.to_owned(),
        },
        member.clone(),
    )
    .with_member_check(member_check, member_config);
    let metrics = Arc::new(metrics::Metrics::new(metrics::MetricsRole::Edge));
    let edge = edge.with_metrics(metrics.clone());
    // The edge's callers authenticate against its member cluster.
    let metrics_auth = args
        .metrics_auth
        .unwrap_or(false)
        .then(|| Arc::new(rest::Auth::new(member, args.auth_token_audiences.clone())));
    let serving = secure.serve(server::with_metrics(
        server::probe_routes(ready.clone()),
        metrics,
        metrics_auth,
        args.http.response_slots(),
    ))?;
    // Ready means reporting: the edge flips it after each tick.
    tracing::info!(site = %site, version = VERSION, "edge started");
    edge::run(edge, ready, shutdown).await;
    drop(serving);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_probe_and_correlation_flags_default_to_the_design() {
        let a = Args::try_parse_from(["fleet-operator"]).unwrap();
        assert_eq!(a.probe_timeout, None, "min(interval/2, 10s) per site");
        assert_eq!(a.probe_concurrency, 32);
        assert_eq!(a.correlation_window, Duration::from_secs(15 * 60));
        assert_eq!(a.correlation_min_clusters, 3);
        assert_eq!(a.cascade_lookback, Duration::from_secs(24 * 3600));
        assert_eq!(a.outage_group_by, crate::fleet::outage::GroupBy::Region);
        assert_eq!(a.outage_min_clusters, 3);
        assert_eq!(a.outage_window, Duration::from_secs(600));
        let a = Args::try_parse_from([
            "fleet-operator",
            "--probe-timeout",
            "3s",
            "--correlation-min-clusters",
            "2",
        ])
        .unwrap();
        assert_eq!(a.probe_timeout, Some(Duration::from_secs(3)));
        assert_eq!(a.correlation_min_clusters, 2);
        let a = Args::try_parse_from([
            "fleet-operator",
            "--outage-group-by",
            "example.com/store-group",
        ])
        .unwrap();
        assert_eq!(a.outage_group_by.key(), "example.com/store-group");
        let e = Args::try_parse_from(["fleet-operator", "--outage-group-by", "Store Group"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("neither `region` nor a label key"), "{e}");
        assert!(Args::try_parse_from(["fleet-operator", "--probe-concurrency", "0"]).is_err());
        assert_eq!(a.probe_max_bytes, 32 << 20);
        assert!(a.pull_allow_cidr.is_empty() && a.pull_deny_cidr.is_empty());
        let a = Args::try_parse_from([
            "fleet-operator",
            "--probe-max-bytes",
            "128Mi",
            "--pull-allow-cidr",
            "127.0.0.0/8,10.0.0.0/8",
            "--pull-deny-cidr",
            "10.96.0.0/12",
        ])
        .unwrap();
        assert_eq!(a.probe_max_bytes, 128 << 20);
        assert_eq!(a.pull_allow_cidr.len(), 2);
        assert_eq!(a.pull_deny_cidr[0].to_string(), "10.96.0.0/12");
        assert!(
            Args::try_parse_from(["fleet-operator", "--pull-allow-cidr", "localhost"]).is_err()
        );
    }

    #[test]
    fn edge_role_requires_site_and_hub_kubeconfig() {
        assert!(Args::try_parse_from(["fleet-operator", "--federation-role", "edge"]).is_err());
        let a = Args::try_parse_from([
            "fleet-operator",
            "--federation-role",
            "edge",
            "--site",
            "a",
            "--hub-kubeconfig",
            "/k",
            "--clock-offset",
            "-10m",
        ])
        .unwrap();
        assert_eq!(a.clock_offset, SignedDuration::from_mins(-10));
        assert_eq!(
            Args::try_parse_from(["fleet-operator"])
                .unwrap()
                .federation_role,
            Role::Hub
        );
    }
}
