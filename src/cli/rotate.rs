//! `kubectl fleet rotate SITE [--revoke]`: mint a fresh token for a Push
//! site and print the edge configuration again. `--revoke` first recreates
//! the site's ServiceAccount, so every older token is rejected (401). A
//! ServiceAccount that was deleted is recreated (its bindings name it, so
//! they apply to the new one). A site registered before the identities
//! moved to `fleet-sites` is moved first (its old ServiceAccount's tokens
//! stop working, as with `--revoke`).
//!
//! `rotate -l SELECTOR --output-dir DIR` does the same for every Push site
//! the selector matches, at most `--concurrency` at once, each edge
//! configuration in `DIR/SITE.kubeconfig` (0600), one line per site and a
//! summary; it asks first (naming how many sites) on a terminal, and
//! needs `--yes` off one.

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::StreamExt as _;

use super::register::{EdgeOutputArgs, Emit, Issued, RegisterOutput, hand_out};
use super::{Error, GlobalArgs, Io, parse_site_name, parse_token_ttl};
use crate::api::{FederatedCluster, Mode};
use crate::fleet::rbac;
use crate::fleet::rbac::SITES_NAMESPACE;
use crate::k8s::Cluster;

/// Arguments of `kubectl fleet rotate`.
#[derive(Debug, clap::Args)]
pub struct RotateArgs {
    /// The registered site
    #[arg(value_name = "SITE", value_parser = parse_site_name, required_unless_present = "selector")]
    pub site: Option<String>,
    /// Rotate every site whose labels match, e.g. fleet.kubectl-fleet.dev/region=eu-west-1
    #[arg(short = 'l', long, value_name = "SELECTOR", conflicts_with_all = ["site", "output_file", "output"], requires = "output_dir")]
    pub selector: Option<String>,
    /// With -l: write each site's edge configuration to DIR/SITE.kubeconfig (DIR/SITE.secret.yaml with --emit secret), mode 0600
    #[arg(long, value_name = "DIR", requires = "selector")]
    pub output_dir: Option<PathBuf>,
    /// With -l: how many sites to rotate at once, 1..64
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,
    /// With -l: do not ask for confirmation (required when there is no terminal to ask on)
    #[arg(short, long)]
    pub yes: bool,
    /// Recreate the site's ServiceAccount first, so every older token stops working
    #[arg(long)]
    pub revoke: bool,
    /// Requested token lifetime, at least 10m, e.g. 30d, 12h (the API server may cap it)
    #[arg(long, value_name = "DURATION", default_value = "30d", value_parser = parse_token_ttl)]
    pub token_ttl: Duration,
    /// How to hand the configuration to the edge.
    #[command(flatten)]
    pub edge: EdgeOutputArgs,
}

/// Runs `kubectl fleet rotate`.
pub async fn run(global: &GlobalArgs, args: RotateArgs, io: &mut Io<'_>) -> Result<(), Error> {
    if let Some(selector) = args.selector.clone() {
        return run_selected(global, &args, &selector, io).await;
    }
    let site = args.site.as_deref().unwrap_or_default();
    // Nothing is minted (or revoked) when the configuration could not be written.
    if let Some(path) = &args.edge.output_file {
        super::register::check_private_file(path)?;
    }
    let hub = global.hub().await?;
    let Some(existing) = hub.get_site(site).await? else {
        return Err(Error::Invalid {
            what: format!("site {site} is not registered on {}", hub.server()),
            hint: format!("register it with `kubectl fleet register {site}`"),
        });
    };
    rotate_site(&hub, &args, &existing, &args.edge, io).await
}

/// Rotates one site that exists, handing out to `edge`.
async fn rotate_site(
    hub: &Cluster,
    args: &RotateArgs,
    existing: &FederatedCluster,
    edge: &EdgeOutputArgs,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let site = existing.metadata.name.as_deref().unwrap_or_default();
    if existing.spec.mode == Mode::Pull {
        return Err(Error::Invalid {
            what: format!("site {site} is in Pull mode and has no edge token"),
            hint: format!(
                "refresh the member credential with `kubectl fleet register {site} --pull --member-kubeconfig FILE`"
            ),
        });
    }
    let mut objects = Vec::new();
    let mut removed = Vec::new();
    let uid = existing.metadata.uid.as_deref().unwrap_or_default();
    let mut present = hub.site_service_account(site).await?.is_some();
    if !present && let Some((applied, gone)) = hub.migrate_legacy_site_identity(site, uid).await? {
        writeln!(
            io.err,
            "site {site}'s identity moved from {} to {SITES_NAMESPACE}: tokens of the old ServiceAccount are now rejected",
            crate::k8s::NAMESPACE
        )?;
        objects.extend(applied);
        removed.extend(gone);
        present = true;
    }
    // `--revoke` recreates the ServiceAccount; so does a rotation that
    // finds it deleted (its tokens can then never work again).
    let why = if args.revoke {
        Some(format!(
            "recreated: every older token of {site} is now rejected"
        ))
    } else if !present {
        Some("was missing: recreated (tokens of the deleted one stay rejected)".to_owned())
    } else {
        None
    };
    if let Some(why) = why {
        objects.push(hub.recreate_service_account(site, uid).await?);
        writeln!(
            io.err,
            "ServiceAccount {SITES_NAMESPACE}/{} {why}",
            rbac::edge_identity_name(site)
        )?;
    }
    let token = hub.request_site_token(site, args.token_ttl).await?;
    let issued = Issued {
        objects,
        removed,
        token: &token,
        auto_rotate: None,
    };
    hand_out(hub, site, issued, edge, io)
}

/// `rotate -l SELECTOR`: every matching Push site, after confirmation.
async fn run_selected(
    global: &GlobalArgs,
    args: &RotateArgs,
    selector: &str,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let dir = args
        .output_dir
        .clone()
        .expect("clap requires --output-dir with -l");
    std::fs::create_dir_all(&dir).map_err(|source| Error::WriteFile {
        path: dir.clone(),
        source,
    })?;
    let hub = global.hub().await?;
    let sites = hub.list_sites(Some(selector)).await?;
    let (push, pull): (Vec<_>, Vec<_>) = sites
        .into_iter()
        .filter(|s| s.metadata.deletion_timestamp.is_none())
        .partition(|s| s.spec.mode == Mode::Push);
    for site in &pull {
        writeln!(
            io.err,
            "skipped site {}: Pull mode has no edge token",
            site.metadata.name.as_deref().unwrap_or_default()
        )?;
    }
    if push.is_empty() {
        writeln!(
            io.err,
            "No Push sites match {selector:?}: nothing to rotate"
        )?;
        return Ok(());
    }
    let what = if args.revoke {
        "Rotate and revoke the tokens of"
    } else {
        "Mint new tokens for"
    };
    let consequence = if args.revoke {
        "every older token of each stops working now"
    } else {
        "older tokens keep working until they expire"
    };
    super::confirm(
        args.yes,
        &format!(
            "{what} {} sites matching {selector:?}? {consequence}",
            push.len()
        ),
        &format!(
            "refusing to rotate {} sites without confirmation",
            push.len()
        ),
        io,
    )?;
    let total = push.len();
    let mut failed = Vec::new();
    let mut results = futures::stream::iter(push)
        .map(|site| {
            let hub = &hub;
            let dir = &dir;
            async move {
                let name = site.metadata.name.clone().unwrap_or_default();
                let path = dir.join(match args.edge.emit {
                    Emit::Kubeconfig => format!("{name}.kubeconfig"),
                    Emit::Secret => format!("{name}.secret.yaml"),
                });
                let (result, warnings) = rotate_to(hub, args, &site, &path).await;
                (name, path, result, warnings)
            }
        })
        .buffer_unordered(usize::from(args.concurrency));
    while let Some((name, path, result, warnings)) = results.next().await {
        for warning in warnings {
            writeln!(io.err, "warning: site {name}: {warning}")?;
        }
        match result {
            Ok(()) => writeln!(
                io.out,
                "federatedcluster/{name} rotated: credential written to {}",
                path.display()
            )?,
            Err(e) => {
                let line = e.user_line();
                let line = line.strip_prefix("error: ").unwrap_or(&line);
                writeln!(io.out, "federatedcluster/{name} failed: {line}")?;
                failed.push(name);
            }
        }
    }
    writeln!(
        io.out,
        "{total} sites: {} rotated, {} failed",
        total - failed.len(),
        failed.len()
    )?;
    super::enrol::bulk_failures(&failed, total, "rotate -l", selector)
}

/// Rotates one selected site into `path`; returns its warnings (its other
/// messages are dropped: the caller prints one line).
async fn rotate_to(
    hub: &Cluster,
    args: &RotateArgs,
    site: &FederatedCluster,
    path: &Path,
) -> (Result<(), Error>, Vec<String>) {
    if let Err(e) = super::register::check_private_file(path) {
        return (Err(e), Vec::new());
    }
    let mut edge = args.edge.clone();
    edge.output_file = Some(path.to_owned());
    edge.output = RegisterOutput::Config;
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut io = Io {
        out: &mut out,
        err: &mut err,
        stdout_tty: false,
        interactive: false,
    };
    let result = rotate_site(hub, args, site, &edge, &mut io).await;
    let warnings = String::from_utf8_lossy(&err)
        .lines()
        .filter_map(|l| l.strip_prefix("warning: "))
        .map(str::to_owned)
        .collect();
    (result, warnings)
}
