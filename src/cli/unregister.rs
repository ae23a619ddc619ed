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

use super::interrupt::{self, Left};
use super::select::Selection;
use super::{Error, GlobalArgs, Io, parse_site_name, shell_line};
use crate::k8s::{Cluster, ConnectOptions, ObjectRef};

/// Arguments of `kubectl fleet unregister`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("bulk").args(["selector", "region"]).multiple(true).conflicts_with_all(["site", "member_kubeconfig"]))]
pub struct UnregisterArgs {
    /// The site to remove
    #[arg(value_name = "SITE", value_parser = parse_site_name, required_unless_present_any = ["selector", "region"])]
    pub site: Option<String>,
    /// The sites to remove instead of one by name.
    #[command(flatten)]
    pub selection: Selection,
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
    if args.selection.given() {
        return run_selected(global, &args, io).await;
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
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let hub = global.hub().await?;
    let selection = &args.selection;
    let sites: Vec<String> = selection
        .sites(&hub, "remove")
        .await?
        .into_iter()
        .filter_map(|s| s.metadata.name)
        .collect();
    let total = sites.len();
    super::confirm(
        args.yes,
        &format!(
            "Unregister {total} sites matching {}? Their edges will lose access to the hub",
            selection.describe()
        ),
        &format!("refusing to unregister {total} sites without confirmation"),
        io,
    )?;
    // Sites in flight finish after Ctrl-C; no further one starts.
    let _hold = interrupt::hold();
    let mut failed = Vec::new();
    let mut not_started = 0;
    let mut results = futures::stream::iter(sites)
        .map(|site| {
            let hub = &hub;
            async move {
                if interrupt::requested() {
                    return (site, None);
                }
                let stored = hub.pull_kubeconfig(&site).await;
                let result = match stored {
                    Ok(stored) => remove_from_hub(hub, &site).await.map(|removed| {
                        let note =
                            super::pull_identity::left_on_member(&site, stored.as_deref(), false);
                        (removed, note)
                    }),
                    Err(e) => Err(e.into()),
                };
                (site, Some(result))
            }
        })
        // One line per site in name order, as listed.
        .buffered(usize::from(args.concurrency));
    while let Some((site, result)) = results.next().await {
        match result {
            None => not_started += 1,
            Some(Ok((removed, note))) => {
                let n = removed.len();
                writeln!(
                    io.out,
                    "federatedcluster/{site} deleted ({n} object{} removed)",
                    if n == 1 { "" } else { "s" }
                )?;
                if let Some(note) = note {
                    writeln!(io.err, "{note}")?;
                }
            }
            Some(Err(e)) => {
                let line = e.user_line();
                let line = line.strip_prefix("error: ").unwrap_or(&line);
                writeln!(io.out, "federatedcluster/{site} failed: {line}")?;
                failed.push(site);
            }
        }
    }
    let deleted = total - failed.len() - not_started;
    writeln!(
        io.out,
        "{total} sites: {deleted} deleted, {} failed{}",
        failed.len(),
        match not_started {
            0 => String::new(),
            n => format!(", {n} not started (interrupted)"),
        }
    )?;
    // The same selection again: what is gone no longer matches.
    let mut rerun = global.command_words();
    rerun.push("unregister".to_owned());
    rerun.extend(selection.words());
    if args.concurrency != 8 {
        rerun.extend(["--concurrency".to_owned(), args.concurrency.to_string()]);
    }
    rerun.push("--yes".to_owned());
    let rerun = shell_line(&rerun);
    if not_started > 0 {
        return Err(Error::Interrupted {
            left: interrupt::Said::Left(Left {
                state: format!(
                    "{deleted} of {total} sites removed; {} still registered",
                    total - deleted
                ),
                finish: rerun,
                undo: None,
            }),
            cut: false,
        });
    }
    super::enrol::bulk_failures(&failed, total, &rerun)
}
