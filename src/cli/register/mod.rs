//! `kubectl fleet register SITE`: create or converge a site on the hub
//! (docs/architecture.md#the-life-of-a-site) and hand out the edge's configuration.
//!
//! Push (default): FederatedCluster, ClusterRole, binding, its lease (heartbeat), auto-rotation
//! Role/RoleBinding, ServiceAccount (in `fleet-sites`, created only when it
//! is missing; a site's old objects in `fleet-system` removed), then a token, printed as a hub kubeconfig (or a Secret
//! manifest for the edge cluster). A re-run that would change nothing
//! proves the identity is in place and only mints the token.
//! Pull: a read-only identity minted on the member, its kubeconfig stored in
//! hub Secret `fleet-system/fleet-pull-SITE`, FederatedCluster `mode: Pull`.
//!
//! Flags that are not given keep the site's current values (the defaults for
//! a new site), so re-running `register` never silently resets a tier — nor
//! the mode: a Pull site stays Pull. A mode change is explicit (`--pull`,
//! `--push`), says what it removes and asks first (`--yes` off a terminal).
//!
//! Everything that can be checked before the first write is: the flags, the
//! output file, the member kubeconfig, the confirmation. A step that fails
//! after the first write says what exists and the command that finishes it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use serde::Serialize;
use serde_json::json;

use super::{
    Error, GlobalArgs, Io, format_duration, parse_display_name, parse_region, parse_site_name,
    parse_token_ttl, shell_line, wire_enum,
};
use crate::api::{
    Capability, DEFAULT_KUBECONFIG_KEY, Environment, FederatedCluster, FederatedClusterSpec, Mode,
    SecretKeyRef, Tier,
};
use crate::fleet::rbac;
use crate::k8s::site_status::get_site;
use crate::k8s::{
    Cluster, ConnectOptions, ContextFlags, IssuedToken, NAMESPACE, ObjectRef, TokenKubeconfig,
    plain_yaml_stream,
};

mod hand_out;
mod pull;

pub(crate) use hand_out::{Issued, check_private_dir, check_private_file, hand_out};
use hand_out::{Renewal, handed_out_token, report_expiry};
use pull::{connect_member, register_pull, update_pull_site};

/// Name of the Secret `--emit secret` produces for the edge cluster, and
/// that `install --role edge` mounts.
pub const HUB_KUBECONFIG_SECRET: &str = "fleet-hub-kubeconfig";
/// Where `install --role edge` mounts that Secret's kubeconfig.
pub const HUB_KUBECONFIG_MOUNT: &str = "/etc/fleet-hub/kubeconfig";

/// Arguments of `kubectl fleet register`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("mode").args(["pull", "push"]))]
#[command(group = clap::ArgGroup::new("member_use").args(["pull", "push", "filename"]).multiple(true))]
pub struct RegisterArgs {
    /// Site name: a DNS-1123 label such as site-a or us-east-1-prod
    #[arg(value_name = "SITE", value_parser = parse_site_name, required_unless_present = "filename")]
    pub site: Option<String>,
    /// Human-friendly name shown by `status`, at most 128 characters (default: the site name)
    #[arg(long, value_name = "TEXT", value_parser = parse_display_name)]
    pub display_name: Option<String>,
    /// Region of the site, a label value such as us-east-1
    #[arg(long, value_name = "REGION", value_parser = parse_region)]
    pub region: Option<String>,
    /// Environment of the site (default for a new site: production)
    #[arg(long, value_name = "ENV", value_parser = wire_enum::<Environment>())]
    pub environment: Option<Environment>,
    /// Criticality tier, drives the remediation policy (default for a new site: standard)
    #[arg(long, value_name = "TIER", value_parser = wire_enum::<Tier>())]
    pub tier: Option<Tier>,
    /// What the fleet may do on the site; repeat for several (default for a new site: monitoring)
    #[arg(long = "capability", value_name = "CAPABILITY", value_parser = wire_enum::<Capability>())]
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
    /// Pull mode: the hub probes the member with a read-only identity minted there
    /// (default: the site's current mode; Push for a new site)
    #[arg(long, conflicts_with_all = ["no_auto_rotate", "output_file", "hub_server", "insecure_skip_tls_verify"])]
    pub pull: bool,
    /// Push mode: the site's edge dials home with a token minted here
    /// (switches a Pull site, removing the hub's credential for the member)
    #[arg(long)]
    pub push: bool,
    /// Kubeconfig with admin access to the member cluster: with --pull, where the
    /// read-only identity is minted; with --push, where a former Pull registration's is removed
    #[arg(long, value_name = "FILE", requires = "member_use")]
    pub member_kubeconfig: Option<PathBuf>,
    /// Context of the member kubeconfig to use (default: its current context)
    #[arg(long, value_name = "NAME", requires = "member_kubeconfig")]
    pub member_context: Option<String>,
    /// Pull mode: store the member kubeconfig unchanged instead of minting a read-only identity
    #[arg(long, requires = "member_kubeconfig", conflicts_with = "push")]
    pub store_kubeconfig_as_is: bool,
    /// Switch the site's mode without asking (required when there is no terminal to ask on)
    #[arg(short, long)]
    pub yes: bool,
    /// How to hand the configuration to the edge.
    #[command(flatten)]
    pub edge: EdgeOutputArgs,
    /// Declarative enrolment (`-f`).
    #[command(flatten)]
    pub bulk: BulkArgs,
    /// `register -f`: the spec the inventory declares (replaces the
    /// per-field flags: what it leaves out takes the default).
    /// When the site is expected offline (`spec.connectivity`; see `kubectl fleet schedule`).
    #[command(flatten)]
    pub schedule: crate::cli::schedule::ScheduleFlags,
    /// The schedule the flags ask for, once checked (`run`); None keeps
    /// the site's.
    #[arg(skip)]
    pub connectivity: Option<crate::api::Connectivity>,
    #[arg(skip)]
    pub declared: Option<Box<FederatedClusterSpec>>,
    /// `register -f`: labels the inventory gives the site, besides those
    /// `register` sets itself.
    #[arg(skip)]
    pub labels: BTreeMap<String, String>,
    /// `register -f`: a site in place whose `--output-file` still holds a
    /// working credential for exactly its identity is left as it is, and
    /// no token is minted.
    #[arg(skip)]
    pub keep_handed_out: bool,
    /// `register -f`: the whole command again with `--yes`, which a
    /// refused mode switch names (a single-site command would leave the
    /// rest of the inventory's entry unapplied).
    #[arg(skip)]
    pub bulk_rerun: Option<String>,
}

/// The flags of declarative enrolment (part of `register`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct BulkArgs {
    /// Register every FederatedCluster in FILE (multi-document YAML, a List, JSON), in every .yaml, .yml and .json file of DIR, or on stdin (-)
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "FILE|DIR|-",
        conflicts_with_all = [
            "site", "display_name", "region", "environment", "tier", "capabilities",
            "heartbeat_interval", "max_concurrent_remediations", "pull", "push",
            "offline", "tz", "absent_up_to",
            "output_file", "store_kubeconfig_as_is", "output",
        ]
    )]
    pub filename: Option<PathBuf>,
    /// With -f: write each Push site's edge configuration to DIR/SITE.kubeconfig (DIR/SITE.secret.yaml with --emit secret), mode 0600
    #[arg(long, value_name = "DIR", requires = "filename")]
    pub output_dir: Option<PathBuf>,
    /// With -f: how many sites to register at once, 1..64
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,
    /// With -f: mint a new credential for every site even when the one handed out still works
    #[arg(long, requires = "filename")]
    pub rotate: bool,
}

impl RegisterArgs {
    /// The site (given, or set by `register -f` for each entry).
    pub fn site(&self) -> &str {
        self.site.as_deref().unwrap_or_default()
    }
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

/// Runs `kubectl fleet register SITE` (`-f` is [`super::enrol::run`]).
pub async fn run(
    global: &GlobalArgs,
    mut args: RegisterArgs,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    // The schedule is checked before anything is read or written.
    if let Some((connectivity, notes)) = args.schedule.connectivity()? {
        for note in notes {
            let _ = writeln!(io.err, "note: {note}");
        }
        args.connectivity = Some(connectivity);
    }
    // Nothing is created when the configuration could not be written.
    if let Some(path) = &args.edge.output_file {
        check_private_file(path)?;
    }
    let hub = global.hub().await?;
    // Reading first checks access and the CRD before anything is written,
    // and lets unspecified flags keep the site's current values.
    let existing = read_site(&hub, args.site()).await?;
    register_site(global, &hub, &args, existing, io).await?;
    Ok(())
}

/// The site as `register` sees it: a site being deleted is written again
/// like a new one.
pub(super) async fn read_site(
    hub: &Cluster,
    site: &str,
) -> Result<Option<FederatedCluster>, Error> {
    Ok(hub
        .found(
            format!("get FederatedCluster {site}"),
            get_site(&hub.sites(), site),
        )
        .await?
        .filter(|s| s.metadata.deletion_timestamp.is_none()))
}

/// What one site's `register` changed (as `kubectl apply` words it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Change {
    /// The site did not exist.
    Created,
    /// Something was applied or removed.
    Configured,
    /// Nothing was written.
    Unchanged,
}

/// What one site's `register` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Outcome {
    /// What changed on the hub (and member).
    pub change: Change,
    /// Whether a token was minted (and handed out or stored).
    pub minted: bool,
}

impl Outcome {
    fn of(existing: bool, objects: usize, removed: usize, minted: bool) -> Outcome {
        let change = match (existing, objects + removed) {
            (false, _) => Change::Created,
            (true, 0) => Change::Unchanged,
            (true, _) => Change::Configured,
        };
        Outcome { change, minted }
    }
}

/// Registers one site, `existing` being what [`read_site`] found.
pub(super) async fn register_site(
    global: &GlobalArgs,
    hub: &Cluster,
    args: &RegisterArgs,
    existing: Option<FederatedCluster>,
    io: &mut Io<'_>,
) -> Result<Outcome, Error> {
    let current = existing.as_ref().map(|s| s.spec.mode);
    let plan = Plan::new(args, current)?;
    // The member cluster is reached before anything is written, so a bad
    // member kubeconfig or context fails the command with nothing changed.
    let member = match (&args.member_kubeconfig, args.store_kubeconfig_as_is) {
        (Some(path), false) => {
            Some(connect_member(global, path, args.member_context.as_deref()).await?)
        }
        _ => None,
    };
    if let Some(switch) = plan.switch {
        confirm_switch(global, args, switch, member.is_some(), io)?;
    }
    // A Pull site pointed at another member cluster: said, asked, and
    // what stays on the old member named once the switch is done.
    let repointed = match (&member, existing.as_ref()) {
        (Some(member), Some(site)) if plan.mode == Mode::Pull && site.spec.mode == Mode::Pull => {
            confirm_repoint(global, hub, args, member, io).await?
        }
        _ => None,
    };
    let mut progress = Progress::new(global, args, existing.is_none(), plan.switch.is_some());
    let result = match plan.mode {
        Mode::Pull => match (&args.member_kubeconfig, existing) {
            (None, Some(existing)) => {
                update_pull_site(hub, args, existing, &mut progress, io).await
            }
            (_, existing) => register_pull(hub, args, existing, member, &mut progress, io).await,
        },
        Mode::Push => register_push(hub, args, existing, member, &mut progress, io).await,
    };
    let outcome = result.map_err(|e| progress.fail(e))?;
    if let Some(note) = repointed {
        writeln!(io.err, "{note}")?;
    }
    Ok(outcome)
}

/// For a Pull site given a member kubeconfig: whether it names another
/// cluster than the one the hub probes now (the member's identity is the
/// UID of its `kube-system` namespace; the server URL when the old member
/// cannot be asked). If so, says old → new and asks (`--yes` off a
/// terminal); returns what to say afterwards about the identity left on
/// the old member.
async fn confirm_repoint(
    global: &GlobalArgs,
    hub: &Cluster,
    args: &RegisterArgs,
    member: &Cluster,
    io: &mut Io<'_>,
) -> Result<Option<String>, Error> {
    let site = args.site();
    let Some(stored) = hub.pull_kubeconfig(site).await? else {
        return Ok(None);
    };
    let Ok(old) = crate::k8s::pull::MemberKubeconfig::parse(&stored) else {
        return Ok(None);
    };
    let old_server = old.server().to_owned();
    let new_server = member.server().to_owned();
    let old_id = async {
        let text = std::str::from_utf8(&stored).ok()?;
        let kubeconfig = kube::config::Kubeconfig::from_yaml(text).ok()?;
        let opts = ConnectOptions {
            kubeconfig: None,
            context: None,
            request_timeout: Some(REPOINT_CHECK_TIMEOUT),
        };
        let cluster = Cluster::from_kubeconfig(kubeconfig, &opts).await.ok()?;
        tokio::time::timeout(REPOINT_CHECK_TIMEOUT, cluster.cluster_id())
            .await
            .ok()?
            .ok()
    };
    let (old_id, new_id) = futures::join!(old_id, member.cluster_id());
    let same = match (old_id, new_id.ok()) {
        (Some(old), Some(new)) => old == new,
        _ => old_server == new_server,
    };
    if same {
        return Ok(None);
    }
    let shown = |s: &str| crate::render::safe::Untrusted(s).to_string();
    let (from, to) = (shown(&old_server), shown(&new_server));
    let name = rbac::pull_identity_name(site);
    let ns = rbac::FLEET_NAMESPACE;
    let cleanup = format!(
        "kubectl --kubeconfig FILE -n {ns} delete serviceaccount,role,rolebinding {name} && kubectl --kubeconfig FILE delete clusterrole,clusterrolebinding {name}"
    );
    let stays = format!(
        "the read-only identity `register --pull` minted for site {site} on {from} (ServiceAccount, Role and RoleBinding {ns}/{name}, ClusterRole and ClusterRoleBinding {name}) stays there, and the token the hub held works on it until it expires"
    );
    let what = format!("site {site} is a Pull site of member {from}: this points it at {to}");
    if args.yes {
        writeln!(io.err, "{what}")?;
    } else if !io.interactive {
        return Err(Error::Invalid {
            what: format!(
                "refusing to point site {site} at another member cluster without confirmation: {from} → {to}"
            ),
            hint: format!(
                "check --member-kubeconfig names the site's cluster; to move the site, run `{}`",
                shell_line(&command_words(global, args, true))
            ),
        });
    } else {
        super::ask(&format!("{what}; {stays}. Go ahead?"))?;
    }
    Ok(Some(format!(
        "member: {stays}: remove it with `{cleanup}` (FILE: an admin kubeconfig of {from})"
    )))
}

/// How long `register --pull` waits for the old member when telling
/// whether a new member kubeconfig names another cluster.
const REPOINT_CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// A change of a site's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Switch {
    from: Mode,
    to: Mode,
}

/// The mode a run leaves the site in, from the flags and the site's current
/// mode (pure: checked before anything is written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Plan {
    mode: Mode,
    switch: Option<Switch>,
}

impl Plan {
    /// `--pull`/`--push` when given, else the current mode (Push for a new
    /// site); refuses flags that do not fit that mode.
    fn new(args: &RegisterArgs, current: Option<Mode>) -> Result<Plan, Error> {
        let site = args.site();
        let asked = if args.pull {
            Some(Mode::Pull)
        } else if args.push {
            Some(Mode::Push)
        } else {
            None
        };
        let mode = asked.or(current).unwrap_or_default();
        let switch = current
            .filter(|from| *from != mode)
            .map(|from| Switch { from, to: mode });
        if mode == Mode::Pull && args.member_kubeconfig.is_none() && current != Some(Mode::Pull) {
            return Err(Error::Invalid {
                what: format!(
                    "registering site {site} in Pull mode needs the member cluster's kubeconfig"
                ),
                hint: "add --member-kubeconfig with a kubeconfig that has admin access to the member cluster".into(),
            });
        }
        if mode == Mode::Pull {
            let edge = &args.edge;
            let push_only = [
                (edge.output_file.is_some(), "--output-file"),
                (edge.hub_server.is_some(), "--hub-server"),
                (edge.insecure_skip_tls_verify, "--insecure-skip-tls-verify"),
                (edge.emit == Emit::Secret, "--emit secret"),
                (args.no_auto_rotate, "--no-auto-rotate"),
            ];
            if let Some((_, flag)) = push_only.iter().find(|(given, _)| *given) {
                return Err(Error::Invalid {
                    what: format!(
                        "site {site} is in Pull mode, and {flag} configures the edge of a Push site"
                    ),
                    hint: format!(
                        "leave out {flag} to keep the site in Pull mode, or add --push to switch it to Push"
                    ),
                });
            }
        }
        Ok(Plan { mode, switch })
    }
}

/// What switching a site's mode removes, in words.
fn switch_removes(site: &str, switch: Switch, member: bool) -> String {
    match switch.to {
        Mode::Pull => format!(
            "the edge identity of site {site} on the hub (ServiceAccount {0} and its RBAC), so the token its edge holds stops working",
            rbac::edge_identity_name(site)
        ),
        Mode::Push if member => format!(
            "Secret {NAMESPACE}/{0}, the hub's credential for the member cluster, and the read-only identity on the member cluster; the hub stops probing the site and its edge reports instead",
            rbac::pull_secret_name(site)
        ),
        Mode::Push => format!(
            "Secret {NAMESPACE}/{0}, the hub's credential for the member cluster; the hub stops probing the site and its edge reports instead",
            rbac::pull_secret_name(site)
        ),
    }
}

/// Asks before a mode switch (or takes `--yes`); off a terminal without
/// `--yes` it refuses, naming the command that goes ahead.
fn confirm_switch(
    global: &GlobalArgs,
    args: &RegisterArgs,
    switch: Switch,
    member: bool,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let site = args.site();
    let Switch { from, to } = switch;
    let removes = switch_removes(site, switch, member);
    if args.yes {
        writeln!(
            io.err,
            "switching site {site} from {from} to {to}: this removes {removes}"
        )?;
        return Ok(());
    }
    if !io.interactive {
        return Err(Error::Invalid {
            what: format!(
                "refusing to switch site {site} from {from} to {to} without confirmation: it removes {removes}"
            ),
            hint: match &args.bulk_rerun {
                Some(rerun) => format!(
                    "to go ahead, run `{rerun}` (it applies the whole inventory and confirms its mode switches)"
                ),
                None => format!(
                    "to go ahead, run `{}`",
                    shell_line(&command_words(global, args, true))
                ),
            },
        });
    }
    super::ask(&format!(
        "Switch site {site} from {from} to {to}? This removes {removes}"
    ))
}

/// Whether `err` is a mode switch refused for want of confirmation.
pub(super) fn is_unconfirmed_switch(err: &Error) -> bool {
    matches!(err, Error::Invalid { what, .. } if what.starts_with("refusing to switch site"))
}

/// The words of this `register` command line as given (every flag that was
/// set, so a re-run does what this run set out to do), plus `--yes` when
/// asked for.
fn command_words(global: &GlobalArgs, args: &RegisterArgs, yes: bool) -> Vec<String> {
    let mut w = global.command_words();
    let mut flag = |name: &str, value: Option<String>| {
        w.push(name.to_owned());
        w.extend(value);
    };
    flag("register", Some(args.site().to_owned()));
    if let Some(v) = &args.display_name {
        flag("--display-name", Some(v.clone()));
    }
    if let Some(v) = &args.region {
        flag("--region", Some(v.clone()));
    }
    if let Some(v) = args.environment {
        flag("--environment", Some(v.as_str().to_owned()));
    }
    if let Some(v) = args.tier {
        flag("--tier", Some(v.as_str().to_owned()));
    }
    for c in &args.capabilities {
        flag("--capability", Some(c.as_str().to_owned()));
    }
    if let Some(v) = args.heartbeat_interval {
        flag("--heartbeat-interval", Some(v.to_string()));
    }
    if let Some(v) = args.max_concurrent_remediations {
        flag("--max-concurrent-remediations", Some(v.to_string()));
    }
    for pair in args.schedule.words().chunks(2) {
        flag(&pair[0], pair.get(1).cloned());
    }
    if args.token_ttl != DEFAULT_TOKEN_TTL {
        flag("--token-ttl", Some(format_duration(args.token_ttl)));
    }
    let switches = [
        (args.no_auto_rotate, "--no-auto-rotate"),
        (args.pull, "--pull"),
        (args.push, "--push"),
    ];
    for (given, name) in switches {
        if given {
            flag(name, None);
        }
    }
    if let Some(v) = &args.member_kubeconfig {
        flag("--member-kubeconfig", Some(v.display().to_string()));
    }
    if let Some(v) = &args.member_context {
        flag("--member-context", Some(v.clone()));
    }
    if args.store_kubeconfig_as_is {
        flag("--store-kubeconfig-as-is", None);
    }
    let edge = &args.edge;
    if let Some(v) = &edge.hub_server {
        flag("--hub-server", Some(v.clone()));
    }
    if edge.insecure_skip_tls_verify {
        flag("--insecure-skip-tls-verify", None);
    }
    if edge.emit == Emit::Secret {
        flag("--emit", Some("secret".into()));
    }
    if let Some(v) = &edge.output_file {
        flag("--output-file", Some(v.display().to_string()));
    }
    if edge.output == RegisterOutput::Json {
        flag("-o", Some("json".into()));
    }
    if yes || args.yes {
        flag("--yes", None);
    }
    w
}

/// `--token-ttl`'s default.
pub(super) const DEFAULT_TOKEN_TTL: Duration = Duration::from_secs(30 * 86_400);

/// What a run has written so far, so that a step failing after the first
/// write says what exists and how to finish (a re-run of the same command
/// converges) or, for a site this run created, how to remove it again.
struct Progress {
    /// What exists, once something was written.
    state: Option<String>,
    finish: String,
    undo: Option<String>,
    /// Whether this is `register SITE` (not one site of `register -f`).
    single: bool,
}

impl Progress {
    fn new(global: &GlobalArgs, args: &RegisterArgs, new_site: bool, switch: bool) -> Self {
        let finish = shell_line(&command_words(global, args, switch));
        let undo = new_site.then(|| {
            let mut w = global.command_words();
            w.extend([
                "unregister".to_owned(),
                args.site().to_owned(),
                "--yes".to_owned(),
            ]);
            if let Some(path) = &args.member_kubeconfig {
                w.extend(["--member-kubeconfig".to_owned(), path.display().to_string()]);
                if let Some(context) = &args.member_context {
                    w.extend(["--member-context".to_owned(), context.clone()]);
                }
            }
            shell_line(&w)
        });
        // One site on its own says on Ctrl-C what it left; `register -f`
        // speaks for its sites itself.
        let single = args.declared.is_none();
        if single {
            super::interrupt::nothing_changed();
        }
        Progress {
            state: None,
            finish,
            undo,
            single,
        }
    }

    /// Records that `state` now holds (after a write).
    fn wrote(&mut self, state: String) {
        if self.single {
            super::interrupt::set_left(super::interrupt::Left {
                state: state.clone(),
                finish: self.finish.clone(),
                undo: self.undo.clone(),
            });
        }
        self.state = Some(state);
    }

    /// `err`, saying what exists when something was written before it.
    fn fail(self, err: Error) -> Error {
        match self.state {
            // A closed stdout ends the command quietly, like any filter.
            Some(_) if err.is_closed_pipe() => err,
            Some(state) => Error::Partial {
                source: Box::new(err),
                state,
                finish: self.finish,
                undo: self.undo,
            },
            None => err,
        }
    }
}

/// The spec to apply: flags given win, else the current values, else defaults.
fn desired_spec(
    args: &RegisterArgs,
    existing: Option<&FederatedClusterSpec>,
    mode: Mode,
) -> FederatedClusterSpec {
    let base = existing.cloned().unwrap_or_default();
    let kubeconfig_secret_ref = (mode == Mode::Pull).then(|| SecretKeyRef {
        namespace: NAMESPACE.to_owned(),
        name: rbac::pull_secret_name(args.site()),
        key: DEFAULT_KUBECONFIG_KEY.to_owned(),
    });
    if let Some(declared) = &args.declared {
        let mut capabilities = declared.capabilities.clone();
        capabilities.sort();
        capabilities.dedup();
        // A declared schedule is the file's (absent: none), as for every
        // other declared field.
        return FederatedClusterSpec {
            mode,
            capabilities,
            maintenance: base.maintenance,
            quarantine: base.quarantine,
            kubeconfig_secret_ref,
            ..(**declared).clone()
        };
    }
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
        // A maintenance window is `cordon`'s, a quarantine `quarantine`'s:
        // a re-run keeps them.
        maintenance: base.maintenance,
        quarantine: base.quarantine,
        connectivity: args.connectivity.clone().or(base.connectivity),
        kubeconfig_secret_ref,
    }
}

/// The site object to apply: `extra` labels (an inventory's), then those
/// `register` sets itself, which win.
fn site_object(
    site: &str,
    spec: FederatedClusterSpec,
    extra: &BTreeMap<String, String>,
) -> FederatedCluster {
    let mut labels = extra.clone();
    labels.extend(rbac::site_object_labels(site, &spec));
    let mut fc = FederatedCluster::new(site, spec);
    fc.metadata.labels = Some(labels);
    fc
}

async fn register_push(
    hub: &Cluster,
    args: &RegisterArgs,
    existing: Option<FederatedCluster>,
    member: Option<Cluster>,
    progress: &mut Progress,
    io: &mut Io<'_>,
) -> Result<Outcome, Error> {
    let site = args.site();
    let auto_rotate = !args.no_auto_rotate;
    let spec = desired_spec(args, existing.as_ref().map(|s| &s.spec), Mode::Push);
    let desired = site_object(site, spec, &args.labels);
    let from_pull = existing
        .as_ref()
        .is_some_and(|s| s.spec.mode == Mode::Pull || s.spec.kubeconfig_secret_ref.is_some());

    // A re-run that changes nothing: prove the identity is in place instead
    // of applying it again (docs/benchmarks-cli.md#register-round-trips-p6).
    // The site as it stands when `register` would not change it.
    let unchanged = existing
        .as_ref()
        .filter(|s| !from_pull && member.is_none() && same_site(s, &desired));
    let mut minted = None;
    if let Some(current) = unchanged {
        let uid = current.metadata.uid.clone().unwrap_or_default();
        let identity = crate::manifests::rbac::SiteIdentity::new(site, &uid, auto_rotate);
        let handed_out = match (&args.edge.output_file, args.keep_handed_out) {
            (Some(path), true) => handed_out_token(path, args.edge.emit),
            _ => None,
        };
        let (in_place, token) =
            identity_in_place(hub, site, &identity, args.token_ttl, handed_out).await?;
        if let (true, None) = (in_place, &token) {
            writeln!(
                io.err,
                "FederatedCluster {site} and its identity are in place, and the credential handed out still works: nothing to apply, nothing minted"
            )?;
            return Ok(Outcome {
                change: Change::Unchanged,
                minted: false,
            });
        }
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
            hand_out(hub, site, issued, &args.edge, io)?;
            return Ok(Outcome {
                change: Change::Unchanged,
                minted: true,
            });
        }
        minted = token;
    }

    let mut objects = Vec::new();
    let mut removed = Vec::new();
    let incomplete = if existing.is_some() {
        format!(
            "the spec of site {site} is applied in Push mode, but its edge identity may be incomplete and no edge configuration was handed out"
        )
    } else {
        format!(
            "site {site} exists on the hub, but its edge identity is incomplete and no edge configuration was handed out"
        )
    };
    if from_pull {
        // The pull Secret goes before the reference to it: interrupted in
        // between, the site still names it and a re-run removes it again.
        // A site without the reference has no pull Secret: `register
        // --pull` writes the reference first and the Secret owned by the
        // site, so the garbage collector removes it with a deleted site.
        removed.extend(hub.delete_pull_secret(site).await?);
        progress.wrote(format!(
            "site {site} is half switched from Pull to Push: the hub no longer holds a credential for its member cluster, and no edge configuration was handed out"
        ));
        hub.switch_site_to_push(site).await?;
        progress.wrote(incomplete.clone());
        // The member token's expiry and the probe's duration describe a
        // credential and a check that are gone.
        hub.clear_site_status(site, crate::api::mode_status_keys(Mode::Pull))
            .await?;
    }
    // The site first: its identity objects are owned by it.
    let uid = match unchanged {
        Some(current) => current.metadata.uid.clone().unwrap_or_default(),
        None => {
            let applied = hub.apply_site(&desired).await?;
            progress.wrote(incomplete.clone());
            objects.push(applied.object);
            applied.uid
        }
    };
    let identity = crate::manifests::rbac::SiteIdentity::new(site, &uid, auto_rotate);
    // Round trip 3: every identity object at once, the ServiceAccount
    // without its digest (docs/benchmarks-cli.md#register-round-trips-p6).
    let applied = hub.apply_site_identity(&identity).await?;
    objects.extend(applied.applied);
    removed.extend(applied.removed);
    if applied.lease_unserved {
        writeln!(
            io.err,
            "warning: the hub does not serve FederatedClusterLease (its fleet CRDs predate this kubectl-fleet): \
             site {site}'s edge heartbeats through its status until you run `kubectl fleet install --apply` on the hub \
             and re-run `kubectl fleet register {site}`"
        )?;
    }
    // A site registered before the identities moved to fleet-sites.
    if existing.is_some() {
        removed.extend(hub.delete_legacy_site_identity(site).await?);
    }
    // Round trip 4: the digest, now that everything else is applied, and
    // the token beside it. A token minted while checking stays valid:
    // applying the identity keeps the ServiceAccount (and its uid) as it is.
    let mint = async {
        match minted {
            Some(token) => Ok(token),
            None => hub.request_site_token(site, args.token_ttl).await,
        }
    };
    let (sealed, token) = futures::join!(hub.seal_site_identity(&identity), mint);
    sealed?;
    progress.wrote(format!(
        "site {site} and its edge identity exist on the hub, but no edge configuration was handed out"
    ));
    let token = token?;
    let member_removed = match &member {
        Some(member) => {
            super::pull_identity::check_removable(hub, member, site).await?;
            member.delete_pull_identity(site).await?
        }
        None => Vec::new(),
    };

    for obj in &objects {
        writeln!(io.err, "{obj} applied")?;
    }
    for obj in &removed {
        writeln!(io.err, "{obj} removed")?;
    }
    for obj in &member_removed {
        writeln!(io.err, "member: {obj} removed")?;
    }
    if from_pull && member.is_none() {
        writeln!(
            io.err,
            "warning: a read-only identity `register --pull` minted on the member cluster is left there (the hub no longer holds its token): remove it with `{}`",
            shell_line(&member_cleanup_words(args))
        )?;
    }
    let outcome = Outcome::of(
        existing.is_some(),
        objects.len(),
        removed.len() + member_removed.len(),
        true,
    );
    let issued = Issued {
        objects,
        removed,
        token: &token,
        auto_rotate: Some(auto_rotate),
    };
    hand_out(hub, site, issued, &args.edge, io)?;
    Ok(outcome)
}

/// `kubectl fleet register SITE --push --member-kubeconfig FILE`, which
/// removes what a former Pull registration left on the member.
fn member_cleanup_words(args: &RegisterArgs) -> Vec<String> {
    [
        "kubectl",
        "fleet",
        "register",
        args.site(),
        "--push",
        "--member-kubeconfig",
        "FILE",
    ]
    .map(str::to_owned)
    .to_vec()
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
/// round trips: the ServiceAccount exists, is owned by this site and carries
/// the digest of exactly this identity (it is applied last, so every other
/// object was applied before it by the same run), and the site's lease
/// exists (read at the same time); a token is minted for
/// it; and the API server's own account of what that token may do (a
/// SelfSubjectRulesReview) is exactly the identity's rules — so a role or
/// binding deleted or edited since is noticed and applied again.
///
/// With `handed_out` (the token of a credential handed out before), that
/// token is reviewed first: when its rules are exactly the identity's, the
/// identity is in place and the credential still works, and nothing is
/// minted (`(true, None)`).
async fn identity_in_place(
    hub: &Cluster,
    site: &str,
    identity: &crate::manifests::rbac::SiteIdentity,
    ttl: Duration,
    handed_out: Option<String>,
) -> Result<(bool, Option<IssuedToken>), Error> {
    // The lease is read beside the ServiceAccount (one round trip): a
    // lease deleted since, or one the hub could not serve when the site
    // was registered, is applied again.
    let (live, lease) = futures::join!(hub.site_service_account(site), hub.site_lease_exists(site));
    let Some(live) = live? else {
        return Ok((false, None));
    };
    if !identity.written_by_complete_run(&live) || !lease? {
        return Ok((false, None));
    }
    if let Some(handed_out) = handed_out
        && let Ok(Some(rules)) = hub.token_site_rules(&handed_out).await
        && rules == identity.granted()
    {
        return Ok((true, None));
    }
    let token = hub.request_site_token(site, ttl).await?;
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

#[cfg(test)]
mod tests;
