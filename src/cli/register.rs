//! `kubectl fleet register SITE`: create or converge a site on the hub
//! (docs/architecture.md#the-life-of-a-site) and hand out the edge's configuration.
//!
//! Push (default): FederatedCluster, ClusterRole, binding, auto-rotation
//! Role/RoleBinding, ServiceAccount (namespace `fleet-system` only when it
//! is missing), then a token, printed as a hub kubeconfig (or a Secret
//! manifest for the edge cluster). A re-run that would change nothing
//! proves the identity is in place and only mints the token.
//! Pull: a read-only identity minted on the member, its kubeconfig stored in
//! hub Secret `fleet-system/fleet-pull-SITE`, FederatedCluster `mode: Pull`.
//!
//! Flags that are not given keep the site's current values (the defaults for
//! a new site), so re-running `register` never silently resets a tier.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use serde::Serialize;
use serde_json::json;

use super::{Error, GlobalArgs, Io, format_duration, parse_site_name, parse_token_ttl, wire_enum};
use crate::api::{
    Capability, DEFAULT_KUBECONFIG_KEY, Environment, FederatedCluster, FederatedClusterSpec, Mode,
    SecretKeyRef, Tier,
};
use crate::fleet::rbac;
use crate::k8s::{
    Cluster, ConnectOptions, IssuedToken, NAMESPACE, ObjectRef, TokenKubeconfig, plain_yaml_stream,
};

/// Name of the Secret `--emit secret` produces for the edge cluster, and
/// that `install --role edge` mounts.
pub const HUB_KUBECONFIG_SECRET: &str = "fleet-hub-kubeconfig";
/// Where `install --role edge` mounts that Secret's kubeconfig.
pub const HUB_KUBECONFIG_MOUNT: &str = "/etc/fleet-hub/kubeconfig";

/// Arguments of `kubectl fleet register`.
#[derive(Debug, clap::Args)]
pub struct RegisterArgs {
    /// Site name: a DNS-1123 label such as site-a or us-east-1-prod
    #[arg(value_name = "SITE", value_parser = parse_site_name)]
    pub site: String,
    /// Human-friendly name shown by `status` (default: the site name)
    #[arg(long, value_name = "TEXT")]
    pub display_name: Option<String>,
    /// Region of the site, e.g. us-east-1
    #[arg(long, value_name = "REGION")]
    pub region: Option<String>,
    /// Environment of the site (default for a new site: production)
    #[arg(long, value_name = "ENV", value_parser = wire_enum(Environment::ALL, Environment::as_str))]
    pub environment: Option<Environment>,
    /// Criticality tier, drives the remediation policy (default for a new site: standard)
    #[arg(long, value_name = "TIER", value_parser = wire_enum(Tier::ALL, Tier::as_str))]
    pub tier: Option<Tier>,
    /// What the fleet may do on the site; repeat for several (default for a new site: monitoring)
    #[arg(long = "capability", value_name = "CAPABILITY", value_parser = wire_enum(Capability::ALL, Capability::as_str))]
    pub capabilities: Vec<Capability>,
    /// Seconds between heartbeats (Push) or probes (Pull), 10..3600 (default for a new site: 30)
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(i32).range(10..=3600))]
    pub heartbeat_interval: Option<i32>,
    /// Upper bound on remediations running at once on the site (default for a new site: 3)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(0..))]
    pub max_concurrent_remediations: Option<i32>,
    /// Requested token lifetime, at least 10m, e.g. 30d, 12h (the API server may cap it)
    #[arg(long, value_name = "DURATION", default_value = "30d", value_parser = parse_token_ttl)]
    pub token_ttl: Duration,
    /// Do not let the edge renew its own token (removes that permission on a re-run)
    #[arg(long)]
    pub no_auto_rotate: bool,
    /// Pull mode: the hub connects to the member with a read-only identity minted there
    #[arg(long, requires = "member_kubeconfig")]
    pub pull: bool,
    /// Pull mode: kubeconfig with admin access to the member cluster
    #[arg(long, value_name = "FILE", requires = "pull")]
    pub member_kubeconfig: Option<PathBuf>,
    /// Pull mode: context of the member kubeconfig to use (default: its current context)
    #[arg(long, value_name = "NAME", requires = "pull")]
    pub member_context: Option<String>,
    /// Pull mode: store the member kubeconfig unchanged instead of minting a read-only identity
    #[arg(long, requires = "pull")]
    pub store_kubeconfig_as_is: bool,
    /// How to hand the configuration to the edge.
    #[command(flatten)]
    pub edge: EdgeOutputArgs,
}

/// What the edge receives and where it goes (shared by `register` and `rotate`).
#[derive(Debug, Clone, clap::Args)]
pub struct EdgeOutputArgs {
    /// API server URL the edge must dial (default: the server of your kubeconfig context)
    #[arg(long, value_name = "URL", value_parser = parse_server_url)]
    pub hub_server: Option<String>,
    /// Tell the edge not to verify the hub's certificate (insecure; only when you must)
    #[arg(long)]
    pub insecure_skip_tls_verify: bool,
    /// What to print: a hub kubeconfig, or a Secret manifest to apply on the edge cluster
    #[arg(long, value_enum, default_value_t = Emit::Kubeconfig)]
    pub emit: Emit,
    /// Write the configuration to this file (mode 0600) instead of stdout
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// Output format of stdout: the configuration itself, or a JSON summary
    #[arg(short, long, value_enum, default_value_t = RegisterOutput::Config)]
    pub output: RegisterOutput,
}

/// `--emit` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    /// A kubeconfig for the hub
    Kubeconfig,
    /// Namespace + Secret `fleet-system/fleet-hub-kubeconfig` for the edge cluster
    Secret,
}

/// `-o` values of register and rotate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RegisterOutput {
    /// The configuration (kubeconfig or Secret manifest)
    Config,
    /// A JSON summary (objects, token expiry, whether the server capped it)
    Json,
}

/// Accepts an `https://host[:port][/path]` API server URL.
fn parse_server_url(s: &str) -> Result<String, String> {
    let rest = s.strip_prefix("https://").ok_or_else(|| {
        format!("{s:?} is not an https:// URL (the edge verifies the hub over TLS)")
    })?;
    let host = rest.split('/').next().unwrap_or_default();
    if host.is_empty() || host.contains(char::is_whitespace) {
        return Err(format!("{s:?} has no host"));
    }
    Ok(s.trim_end_matches('/').to_owned())
}

/// The `-o json` summary of register and rotate (a stable schema).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// The site.
    pub site: String,
    /// `Push` or `Pull`.
    pub mode: Mode,
    /// Objects created or updated, in the order they were applied.
    pub objects: Vec<ObjectRef>,
    /// Objects removed to converge (e.g. the auto-rotation Role with `--no-auto-rotate`).
    pub removed: Vec<ObjectRef>,
    /// The token's `status.expirationTimestamp` as the API server set it.
    pub token_expiration_timestamp: String,
    /// The lifetime asked for, e.g. `30d`.
    #[serde(rename = "requestedTTL")]
    pub requested_ttl: String,
    /// The lifetime the server granted, e.g. `1h`.
    #[serde(rename = "grantedTTL")]
    pub granted_ttl: String,
    /// True when the server granted less than was asked.
    pub capped: bool,
    /// The edge operator's command line.
    pub edge_command: String,
    /// Where the configuration was written (`--output-file`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_file: Option<PathBuf>,
    /// The configuration itself, when it was not written to a file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
}

/// The `-o json` summary of `register --pull` (a stable schema). Token
/// fields are null with `--store-kubeconfig-as-is` (nothing was minted).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PullSummary {
    /// The site.
    pub site: String,
    /// Always `Pull`.
    pub mode: Mode,
    /// Objects applied on the member cluster (the read-only identity).
    pub member_objects: Vec<ObjectRef>,
    /// Objects applied on the hub.
    pub objects: Vec<ObjectRef>,
    /// Objects removed from the hub (a former Push identity).
    pub removed: Vec<ObjectRef>,
    /// Expiry of the member token the hub will use.
    pub token_expiration_timestamp: Option<String>,
    /// The lifetime asked for.
    #[serde(rename = "requestedTTL")]
    pub requested_ttl: Option<String>,
    /// The lifetime the member's API server granted.
    #[serde(rename = "grantedTTL")]
    pub granted_ttl: Option<String>,
    /// True when the member's API server granted less than was asked.
    pub capped: bool,
}

/// Runs `kubectl fleet register`.
pub async fn run(global: &GlobalArgs, args: RegisterArgs, io: &mut Io<'_>) -> Result<(), Error> {
    let hub = global.hub().await?;
    // Reading first checks access and the CRD before anything is written,
    // and lets unspecified flags keep the site's current values.
    let existing = hub.get_site(&args.site).await?;
    if args.pull {
        register_pull(&hub, &args, existing, io).await
    } else {
        register_push(&hub, &args, existing, io).await
    }
}

/// The spec to apply: flags given win, else the current values, else defaults.
fn desired_spec(
    args: &RegisterArgs,
    existing: Option<&FederatedClusterSpec>,
    mode: Mode,
) -> FederatedClusterSpec {
    let base = existing.cloned().unwrap_or_default();
    FederatedClusterSpec {
        display_name: args.display_name.clone().or(base.display_name),
        mode,
        region: args.region.clone().or(base.region),
        environment: args.environment.unwrap_or(base.environment),
        tier: args.tier.unwrap_or(base.tier),
        capabilities: if args.capabilities.is_empty() {
            base.capabilities
        } else {
            let mut caps = args.capabilities.clone();
            caps.sort();
            caps.dedup();
            caps
        },
        heartbeat_interval_seconds: args
            .heartbeat_interval
            .unwrap_or(base.heartbeat_interval_seconds),
        max_concurrent_remediations: args
            .max_concurrent_remediations
            .unwrap_or(base.max_concurrent_remediations),
        kubeconfig_secret_ref: (mode == Mode::Pull).then(|| SecretKeyRef {
            namespace: NAMESPACE.to_owned(),
            name: rbac::pull_secret_name(&args.site),
            key: DEFAULT_KUBECONFIG_KEY.to_owned(),
        }),
    }
}

fn site_object(site: &str, spec: FederatedClusterSpec) -> FederatedCluster {
    let labels = rbac::site_object_labels(site, &spec);
    let mut fc = FederatedCluster::new(site, spec);
    fc.metadata.labels = Some(labels);
    fc
}

async fn register_push(
    hub: &Cluster,
    args: &RegisterArgs,
    existing: Option<FederatedCluster>,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let site = &args.site;
    let auto_rotate = !args.no_auto_rotate;
    let spec = desired_spec(args, existing.as_ref().map(|s| &s.spec), Mode::Push);
    let desired = site_object(site, spec);
    // A site being deleted is written again like a new one (as before).
    let existing = existing.filter(|s| s.metadata.deletion_timestamp.is_none());
    let has_pull_ref = existing
        .as_ref()
        .is_some_and(|s| s.spec.kubeconfig_secret_ref.is_some());

    // A re-run that changes nothing: prove the identity is in place instead
    // of applying it again (docs/benchmarks-cli.md#register-round-trips).
    // The site as it stands when `register` would not change it.
    let unchanged = existing
        .as_ref()
        .filter(|s| !has_pull_ref && same_site(s, &desired));
    let mut minted = None;
    if let Some(current) = unchanged {
        let uid = current.metadata.uid.clone().unwrap_or_default();
        let identity = rbac::SiteIdentity::new(site, &uid, auto_rotate);
        let (in_place, token) = identity_in_place(hub, site, &identity, args.token_ttl).await?;
        if let (true, Some(token)) = (in_place, &token) {
            writeln!(
                io.err,
                "FederatedCluster {site} and its identity are in place: nothing to apply"
            )?;
            let issued = Issued {
                objects: Vec::new(),
                removed: Vec::new(),
                token,
                auto_rotate: Some(auto_rotate),
            };
            return hand_out(hub, site, issued, &args.edge, io);
        }
        minted = token;
    }

    let mut objects = Vec::new();
    let mut removed = Vec::new();
    if has_pull_ref {
        // The pull Secret goes before the reference to it: interrupted in
        // between, the site still names it and a re-run removes it again.
        // A site without the reference has no pull Secret: `register
        // --pull` writes the reference first and the Secret owned by the
        // site, so the garbage collector removes it with a deleted site.
        removed.extend(hub.delete_pull_secret(site).await?);
        hub.switch_site_to_push(site).await?;
    }
    // The site first: its identity objects are owned by it.
    let uid = match unchanged {
        Some(current) => current.metadata.uid.clone().unwrap_or_default(),
        None => {
            let applied = hub.apply_site(&desired).await?;
            objects.push(applied.object);
            applied.uid
        }
    };
    let identity = rbac::SiteIdentity::new(site, &uid, auto_rotate);
    let (applied, gone) = hub.ensure_site_identity(&identity).await?;
    objects.extend(applied);
    removed.extend(gone);
    // A token minted while checking stays valid: applying the identity
    // keeps the ServiceAccount (and its uid) as it is.
    let token = match minted {
        Some(token) => token,
        None => {
            hub.request_token(&rbac::edge_identity_name(site), args.token_ttl)
                .await?
        }
    };

    for obj in &objects {
        writeln!(io.err, "{obj} applied")?;
    }
    for obj in &removed {
        writeln!(io.err, "{obj} removed")?;
    }
    let issued = Issued {
        objects,
        removed,
        token: &token,
        auto_rotate: Some(auto_rotate),
    };
    hand_out(hub, site, issued, &args.edge, io)
}

/// Whether the live site already has the spec and labels `register` would
/// apply (other labels and annotations may be there too).
fn same_site(live: &FederatedCluster, desired: &FederatedCluster) -> bool {
    let labels = live.metadata.labels.clone().unwrap_or_default();
    live.spec == desired.spec
        && desired
            .metadata
            .labels
            .iter()
            .flatten()
            .all(|(k, v)| labels.get(k) == Some(v))
}

/// For a site whose spec is already right: whether its identity is
/// provably complete, and the token minted on the way (if it got that far;
/// it stays valid when the identity is then applied). Proof, in three
/// requests: the ServiceAccount exists, is owned by this site and carries
/// the digest of exactly this identity (it is applied last, so every other
/// object was applied before it by the same run); a token is minted for
/// it; and the API server's own account of what that token may do (a
/// SelfSubjectRulesReview) is exactly the identity's rules — so a role or
/// binding deleted or edited since is noticed and applied again.
async fn identity_in_place(
    hub: &Cluster,
    site: &str,
    identity: &rbac::SiteIdentity,
    ttl: Duration,
) -> Result<(bool, Option<IssuedToken>), Error> {
    let Some(live) = hub.site_service_account(site).await? else {
        return Ok((false, None));
    };
    if !identity.written_by_complete_run(&live) {
        return Ok((false, None));
    }
    let token = hub
        .request_token(&rbac::edge_identity_name(site), ttl)
        .await?;
    let in_place = match hub.token_site_rules(&token.token).await {
        Ok(Some(rules)) => rules == identity.granted(),
        Ok(None) => false,
        Err(e) => {
            tracing::debug!(error = %e, "could not review the token's rules; applying the identity");
            false
        }
    };
    Ok((in_place, Some(token)))
}

async fn register_pull(
    hub: &Cluster,
    args: &RegisterArgs,
    existing: Option<FederatedCluster>,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let site = &args.site;
    let path = args
        .member_kubeconfig
        .as_deref()
        .expect("clap requires --member-kubeconfig with --pull");
    let raw = std::fs::read_to_string(path).map_err(|source| Error::ReadFile {
        path: path.to_owned(),
        source,
    })?;
    let mut member_objects = Vec::new();
    let mut token = None;
    let stored = if args.store_kubeconfig_as_is {
        // Validate that it is a kubeconfig, but store the user's bytes.
        kube::config::Kubeconfig::from_yaml(&raw).map_err(|e| Error::Invalid {
            what: format!("{} is not a kubeconfig: {e}", path.display()),
            hint: "pass the member cluster's kubeconfig file".into(),
        })?;
        raw
    } else {
        let member = connect_member(path, args.member_context.as_deref(), &raw).await?;
        let (objs, issued) =
            super::pull_identity::mint(hub, &member, site, args.token_ttl, io).await?;
        let kubeconfig = TokenKubeconfig {
            cluster_name: site,
            user_name: &rbac::pull_identity_name(site),
            server: member.server(),
            ca_pem: member.ca_pem(),
            insecure_skip_tls_verify: member.insecure(),
            token: &issued.token,
        }
        .to_yaml();
        member_objects = objs;
        token = Some(issued);
        kubeconfig
    };

    // The site (naming the Secret) before the Secret, which it owns: a
    // pull Secret never exists without a site that references it, so a
    // later Push `register` knows from the site alone whether to remove one.
    let spec = desired_spec(args, existing.as_ref().map(|s| &s.spec), Mode::Pull);
    let applied = hub.apply_site(&site_object(site, spec)).await?;
    let mut objects = vec![applied.object];
    objects.extend(hub.store_pull_secret(site, &applied.uid, &stored).await?);
    // A site switching from Push keeps no edge identity behind.
    let removed = hub.delete_site_identity(site).await?;

    for obj in &member_objects {
        writeln!(io.err, "member: {obj} applied")?;
    }
    for obj in &objects {
        writeln!(io.err, "{obj} applied")?;
    }
    for obj in &removed {
        writeln!(io.err, "{obj} removed")?;
    }
    if let Some(token) = &token {
        report_expiry(site, token, "the member's read-only token", Some(false), io)?;
    }
    if args.edge.output == RegisterOutput::Json {
        let summary = PullSummary {
            site: site.clone(),
            mode: Mode::Pull,
            member_objects,
            objects,
            removed,
            token_expiration_timestamp: token.as_ref().map(|t| t.expiration.to_string()),
            requested_ttl: token.as_ref().map(|t| format_duration(t.requested)),
            granted_ttl: token.as_ref().map(|t| format_duration(t.granted())),
            capped: token.as_ref().is_some_and(IssuedToken::capped),
        };
        writeln!(
            io.out,
            "{}",
            serde_json::to_string_pretty(&summary).expect("summary serialises")
        )?;
    }
    writeln!(
        io.err,
        "site {site} registered in Pull mode: the hub operator probes it with the kubeconfig in Secret {NAMESPACE}/{}",
        rbac::pull_secret_name(site)
    )?;
    Ok(())
}

async fn connect_member(path: &Path, context: Option<&str>, raw: &str) -> Result<Cluster, Error> {
    let kubeconfig = kube::config::Kubeconfig::from_yaml(raw).map_err(|e| Error::Invalid {
        what: format!("{} is not a kubeconfig: {e}", path.display()),
        hint: "pass the member cluster's kubeconfig file with --member-kubeconfig".into(),
    })?;
    let opts = ConnectOptions {
        kubeconfig: Some(path.to_owned()),
        context: context.map(str::to_owned),
        request_timeout: None,
    };
    Ok(Cluster::from_kubeconfig(kubeconfig, &opts).await?)
}

/// Prints when the token expires and warns if the server capped it, saying
/// what the edge does about it (`auto_rotate`: None when not known here).
fn report_expiry(
    site: &str,
    token: &IssuedToken,
    what: &str,
    auto_rotate: Option<bool>,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    writeln!(
        io.err,
        "{what} expires at {} (in {}, requested {})",
        token.expiration,
        format_duration(token.granted()),
        format_duration(token.requested)
    )?;
    if token.capped() {
        let then = match auto_rotate {
            Some(true) => {
                "the edge renews it by itself when half of its lifetime is left".to_owned()
            }
            Some(false) => format!(
                "run `kubectl fleet rotate {site}` before then (nothing renews it automatically)"
            ),
            None => format!(
                "run `kubectl fleet rotate {site}` before then unless the edge renews it by itself"
            ),
        };
        writeln!(
            io.err,
            "warning: the API server capped the token lifetime to {} (requested {}, limited by its --service-account-max-token-expiration): it expires at {}; {then}",
            format_duration(token.granted()),
            format_duration(token.requested),
            token.expiration
        )?;
    }
    Ok(())
}

/// What `register` or `rotate` did for a site, to hand out.
pub(super) struct Issued<'a> {
    /// Objects applied.
    pub objects: Vec<ObjectRef>,
    /// Objects removed.
    pub removed: Vec<ObjectRef>,
    /// The minted token.
    pub token: &'a IssuedToken,
    /// Whether the edge may renew it by itself (None: not known here).
    pub auto_rotate: Option<bool>,
}

/// Renders the edge configuration for a freshly minted token and writes it
/// to stdout or `--output-file`; shared with `rotate`.
pub(super) fn hand_out(
    hub: &Cluster,
    site: &str,
    issued: Issued<'_>,
    edge: &EdgeOutputArgs,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let Issued {
        objects,
        removed,
        token,
        auto_rotate,
    } = issued;
    let server = edge.hub_server.as_deref().unwrap_or(hub.server());
    if !edge.insecure_skip_tls_verify && hub.ca_pem().is_none() {
        writeln!(
            io.err,
            "warning: your kubeconfig has no CA for {server}; the edge will verify the hub against its system roots"
        )?;
    }
    let user = rbac::edge_identity_name(site);
    let kubeconfig = TokenKubeconfig {
        cluster_name: "fleet-hub",
        user_name: &user,
        server,
        ca_pem: hub.ca_pem(),
        insecure_skip_tls_verify: edge.insecure_skip_tls_verify,
        token: &token.token,
    }
    .to_yaml();
    let config = match edge.emit {
        Emit::Kubeconfig => kubeconfig,
        Emit::Secret => edge_secret_manifest(site, &kubeconfig),
    };
    let hub_kubeconfig_path = match (edge.emit, &edge.output_file) {
        (Emit::Secret, _) => HUB_KUBECONFIG_MOUNT.to_owned(),
        (Emit::Kubeconfig, Some(path)) => path.display().to_string(),
        (Emit::Kubeconfig, None) => "FILE".to_owned(),
    };
    // The edge reads its member cluster through --kubeconfig: without it, a
    // shell pointed at the hub would report the hub as the site.
    let no_rotate = if auto_rotate == Some(false) {
        " --no-auto-rotate"
    } else {
        ""
    };
    let edge_command = format!(
        "fleet-operator --federation-role=edge --site {site} --kubeconfig MEMBER_KUBECONFIG --hub-kubeconfig {hub_kubeconfig_path}{no_rotate}"
    );

    if let Some(path) = &edge.output_file {
        write_private_file(path, config.as_bytes())?;
        writeln!(
            io.err,
            "wrote the edge configuration to {} (mode 0600)",
            path.display()
        )?;
    }
    report_expiry(site, token, "token", auto_rotate, io)?;
    match edge.emit {
        Emit::Kubeconfig if edge.output_file.is_some() => writeln!(
            io.err,
            "copy it to the edge and run: {edge_command} (MEMBER_KUBECONFIG: a kubeconfig for the site's own cluster)"
        )?,
        Emit::Kubeconfig => writeln!(
            io.err,
            "save this kubeconfig (0600) as FILE on the edge and run: {edge_command} (MEMBER_KUBECONFIG: a kubeconfig for the site's own cluster)"
        )?,
        Emit::Secret => writeln!(
            io.err,
            "apply the manifest on the edge cluster (`kubectl apply -f -`), then `kubectl fleet install --role edge --site {site} | kubectl apply -f -` there"
        )?,
    }

    match edge.output {
        RegisterOutput::Config => {
            if edge.output_file.is_none() {
                io.out.write_all(config.as_bytes())?;
            }
        }
        RegisterOutput::Json => {
            let summary = Summary {
                site: site.to_owned(),
                mode: Mode::Push,
                objects,
                removed,
                token_expiration_timestamp: token.expiration.to_string(),
                requested_ttl: format_duration(token.requested),
                granted_ttl: format_duration(token.granted()),
                capped: token.capped(),
                edge_command,
                output_file: edge.output_file.clone(),
                config: edge.output_file.is_none().then_some(config),
            };
            writeln!(
                io.out,
                "{}",
                serde_json::to_string_pretty(&summary).expect("summary serialises")
            )?;
        }
    }
    Ok(())
}

/// The Namespace and Secret `fleet-system/fleet-hub-kubeconfig` to apply on
/// the edge cluster, holding the hub kubeconfig under key `kubeconfig`.
pub fn edge_secret_manifest(site: &str, kubeconfig: &str) -> String {
    let namespace = json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": { "name": NAMESPACE },
    });
    let secret = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": HUB_KUBECONFIG_SECRET,
            "namespace": NAMESPACE,
            "labels": rbac::site_labels(site),
        },
        "type": "Opaque",
        "data": {
            DEFAULT_KUBECONFIG_KEY: base64::engine::general_purpose::STANDARD.encode(kubeconfig),
        },
    });
    plain_yaml_stream(&[namespace, secret])
}

/// Writes a file holding a secret with mode 0600, atomically.
pub(super) fn write_private_file(path: &Path, contents: &[u8]) -> Result<(), Error> {
    crate::k8s::write_private_file(path, contents).map_err(|source| Error::WriteFile {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    fn args(extra: &[&str]) -> RegisterArgs {
        let mut argv = vec!["kubectl-fleet", "register", "site-a"];
        argv.extend_from_slice(extra);
        match super::super::Cli::parse_from(argv).command {
            super::super::Command::Register(a) => a,
            other => panic!("parsed {other:?}"),
        }
    }

    #[test]
    fn new_site_gets_defaults_and_flags() {
        let a = args(&[
            "--tier",
            "critical",
            "--capability",
            "remediation",
            "--capability",
            "monitoring",
        ]);
        let spec = desired_spec(&a, None, Mode::Push);
        assert_eq!(spec.tier, Tier::Critical);
        assert_eq!(spec.environment, Environment::Production);
        assert_eq!(
            spec.capabilities,
            vec![Capability::Monitoring, Capability::Remediation]
        );
        assert_eq!(spec.heartbeat_interval_seconds, 30);
        assert_eq!(spec.kubeconfig_secret_ref, None);
        assert_eq!(a.token_ttl, Duration::from_secs(30 * 86_400));
    }

    #[test]
    fn rerun_without_flags_keeps_current_values() {
        let current = FederatedClusterSpec {
            tier: Tier::Critical,
            region: Some("eu-west-1".into()),
            heartbeat_interval_seconds: 60,
            ..Default::default()
        };
        let spec = desired_spec(
            &args(&["--environment", "staging"]),
            Some(&current),
            Mode::Push,
        );
        assert_eq!(spec.tier, Tier::Critical);
        assert_eq!(spec.region.as_deref(), Some("eu-west-1"));
        assert_eq!(spec.heartbeat_interval_seconds, 60);
        assert_eq!(spec.environment, Environment::Staging);
    }

    #[test]
    fn pull_spec_references_the_pull_secret() {
        let spec = desired_spec(&args(&[]), None, Mode::Pull);
        assert_eq!(
            spec.kubeconfig_secret_ref,
            Some(SecretKeyRef {
                namespace: "fleet-system".into(),
                name: "fleet-pull-site-a".into(),
                key: "kubeconfig".into(),
            })
        );
    }

    #[test]
    fn hub_server_must_be_https() {
        assert_eq!(
            parse_server_url("https://hub:6443/"),
            Ok("https://hub:6443".into())
        );
        assert!(parse_server_url("http://hub:6443").is_err());
        assert!(parse_server_url("https://").is_err());
        assert!(parse_server_url("hub:6443").is_err());
    }

    #[test]
    fn secret_manifest_holds_the_kubeconfig() {
        let docs: Vec<serde_json::Value> =
            serde_saphyr::from_multiple(&edge_secret_manifest("site-a", "KUBECONFIG")).unwrap();
        assert_eq!(docs[0]["kind"], "Namespace");
        assert_eq!(docs[1]["metadata"]["name"], "fleet-hub-kubeconfig");
        assert_eq!(docs[1]["metadata"]["namespace"], "fleet-system");
        assert_eq!(docs[1]["data"]["kubeconfig"], "S1VCRUNPTkZJRw==");
    }

    #[test]
    fn private_file_is_0600_even_over_a_wider_file() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hub.kubeconfig");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private_file(&path, b"secret").unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "secret");
    }
}
