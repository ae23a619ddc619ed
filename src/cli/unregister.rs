//! `kubectl fleet unregister SITE`: remove everything `register` created on
//! the hub — the FederatedCluster, the edge identity, the pull Secret.
//! With `--member-kubeconfig`, also the site's own Pull identity on the
//! member (only if this hub made it: another hub's site of the same name
//! is never touched); without it, says what stays on the member and the
//! command that removes it. Whatever is already gone is skipped (a re-run
//! after an interrupted unregister finishes it); a site of which nothing
//! is left is an error, as `kubectl delete` says of an object that does
//! not exist.

use std::path::PathBuf;

use super::{Error, GlobalArgs, Io, parse_site_name};
use crate::k8s::{Cluster, ConnectOptions};

/// Arguments of `kubectl fleet unregister`.
#[derive(Debug, clap::Args)]
pub struct UnregisterArgs {
    /// The site to remove
    #[arg(value_name = "SITE", value_parser = parse_site_name)]
    pub site: String,
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
    let site = &args.site;
    if !args.yes {
        if !io.interactive {
            return Err(Error::Invalid {
                what: format!("refusing to unregister {site} without confirmation"),
                hint: "pass --yes (no terminal to ask on)".into(),
            });
        }
        let confirmed = dialoguer::Confirm::new()
            .with_prompt(format!(
                "Unregister site {site}? Its edge will lose access to the hub"
            ))
            .default(false)
            .interact()
            .map_err(|e| Error::Output(std::io::Error::other(e)))?;
        if !confirmed {
            return Err(Error::Aborted);
        }
    }
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
    // The FederatedCluster goes first so the hub stops tracking the site
    // before its identity disappears.
    let mut removed: Vec<_> = hub.delete_site(site).await?.into_iter().collect();
    removed.extend(hub.delete_site_identity(site).await?);
    removed.extend(hub.delete_pull_secret(site).await?);
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
