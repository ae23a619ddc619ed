//! `kubectl fleet unregister SITE`: remove everything `register` created on
//! the hub — the FederatedCluster, the edge identity, the pull Secret.
//! With `--member-kubeconfig`, also the site's own Pull identity on the
//! member (only if this hub made it: another hub's site of the same name
//! is never touched); without it, says what stays on the member and the
//! command that removes it. Whatever is already gone is skipped (a re-run
//! after an interrupted unregister finishes it); a site of which nothing
//! is left is an error, as `kubectl delete` says of an object that does
//! not exist.
//!
//! `unregister -l SELECTOR` removes every site the selector matches (one
//! line each and a summary), after the same confirmation, naming how many.

use std::path::PathBuf;

use futures::StreamExt as _;

use super::{Error, GlobalArgs, Io, parse_site_name};
use crate::k8s::{Cluster, ConnectOptions, ObjectRef};

/// Arguments of `kubectl fleet unregister`.
#[derive(Debug, clap::Args)]
pub struct UnregisterArgs {
    /// The site to remove
    #[arg(value_name = "SITE", value_parser = parse_site_name, required_unless_present = "selector")]
    pub site: Option<String>,
    /// Remove every site whose labels match, e.g. fleet.kubectl-fleet.dev/environment=staging
    #[arg(short = 'l', long, value_name = "SELECTOR", conflicts_with_all = ["site", "member_kubeconfig"])]
    pub selector: Option<String>,
    /// With -l: how many sites to remove at once, 1..64
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,
    /// Do not ask for confirmation (required when stdin is not a terminal)
    #[arg(short, long)]
    pub yes: bool,
    /// Pull mode: also remove the site's own identity `register --pull` minted on the member
    #[arg(long, value_name = "FILE")]
    pub member_kubeconfig: Option<PathBuf>,
    /// Context of the member kubeconfig (default: its current context)
    #[arg(long, value_name = "NAME", requires = "member_kubeconfig")]
    pub member_context: Option<String>,
}

/// Runs `kubectl fleet unregister`.
pub async fn run(global: &GlobalArgs, args: UnregisterArgs, io: &mut Io<'_>) -> Result<(), Error> {
    if let Some(selector) = &args.selector {
        return run_selected(global, &args, selector, io).await;
    }
    let site = args.site.as_deref().unwrap_or_default();
    super::confirm(
        args.yes,
        &format!("Unregister site {site}? Its edge will lose access to the hub"),
        &format!("refusing to unregister {site} without confirmation"),
        io,
    )?;
    let hub = global.hub().await?;
    // Connect to the member before deleting anything, so a bad member
    // kubeconfig fails the command while the hub is still intact.
    let member = match &args.member_kubeconfig {
        Some(path) => Some(
            Cluster::connect(&ConnectOptions {
                kubeconfig: Some(path.clone()),
                context: args.member_context.clone(),
                request_timeout: global.connect_options().request_timeout,
            })
            .await
            .map_err(|e| e.naming_flags(crate::k8s::ContextFlags::MEMBER))?,
        ),
        None => None,
    };
    // What the pull Secret holds says what the member holds; read before
    // it goes. A member identity that is not this hub's stops the command
    // before anything is deleted.
    let stored = hub.pull_kubeconfig(site).await?;
    if let Some(member) = &member {
        super::pull_identity::check_removable(&hub, member, site).await?;
    }
    let removed = remove_from_hub(&hub, site).await?;
    let mut removed_on_member = 0;
    if let Some(member) = &member {
        for obj in member.delete_pull_identity(site).await? {
            writeln!(io.err, "member: {obj} deleted")?;
            removed_on_member += 1;
        }
    }
    // Like `kubectl delete fc SITE`: a site that is not there is an error
    // (a re-run after a partial unregister still finishes the job).
    if removed.is_empty() && removed_on_member == 0 {
        return Err(Error::Invalid {
            what: format!("site {site:?} not found: nothing to remove"),
            hint: "`kubectl fleet status` lists the registered sites".to_owned(),
        });
    }
    for obj in &removed {
        writeln!(io.err, "{obj} deleted")?;
    }
    if let Some(note) =
        super::pull_identity::left_on_member(site, stored.as_deref(), member.is_some())
    {
        writeln!(io.err, "{note}")?;
    }
    Ok(())
}

/// Removes a site's objects from the hub; returns what was deleted. The
/// FederatedCluster goes first so the hub stops tracking the site before
/// its identity disappears.
async fn remove_from_hub(hub: &Cluster, site: &str) -> Result<Vec<ObjectRef>, Error> {
    let mut removed: Vec<_> = hub.delete_site(site).await?.into_iter().collect();
    removed.extend(hub.delete_site_identity(site).await?);
    removed.extend(hub.delete_pull_secret(site).await?);
    Ok(removed)
}

/// `unregister -l SELECTOR`: every matching site, after confirmation. A
/// Pull site's identity on its member stays (as without
/// `--member-kubeconfig`), and the line says so.
async fn run_selected(
    global: &GlobalArgs,
    args: &UnregisterArgs,
    selector: &str,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let hub = global.hub().await?;
    let mut sites: Vec<String> = hub
        .list_sites(Some(selector))
        .await?
        .into_iter()
        .filter_map(|s| s.metadata.name)
        .collect();
    sites.sort();
    if sites.is_empty() {
        writeln!(io.err, "No sites match {selector:?}: nothing to remove")?;
        return Ok(());
    }
    let total = sites.len();
    super::confirm(
        args.yes,
        &format!(
            "Unregister {total} sites matching {selector:?}? Their edges will lose access to the hub"
        ),
        &format!("refusing to unregister {total} sites without confirmation"),
        io,
    )?;
    let mut failed = Vec::new();
    let mut results = futures::stream::iter(sites)
        .map(|site| {
            let hub = &hub;
            async move {
                let stored = hub.pull_kubeconfig(&site).await;
                let result = match stored {
                    Ok(stored) => remove_from_hub(hub, &site).await.map(|removed| {
                        let note =
                            super::pull_identity::left_on_member(&site, stored.as_deref(), false);
                        (removed, note)
                    }),
                    Err(e) => Err(e.into()),
                };
                (site, result)
            }
        })
        .buffer_unordered(usize::from(args.concurrency));
    while let Some((site, result)) = results.next().await {
        match result {
            Ok((removed, note)) => {
                writeln!(
                    io.out,
                    "federatedcluster/{site} deleted ({} objects removed)",
                    removed.len()
                )?;
                if let Some(note) = note {
                    writeln!(io.err, "{note}")?;
                }
            }
            Err(e) => {
                let line = e.user_line();
                let line = line.strip_prefix("error: ").unwrap_or(&line);
                writeln!(io.out, "federatedcluster/{site} failed: {line}")?;
                failed.push(site);
            }
        }
    }
    writeln!(
        io.out,
        "{total} sites: {} deleted, {} failed",
        total - failed.len(),
        failed.len()
    )?;
    super::enrol::bulk_failures(&failed, total, "unregister -l", selector)
}
