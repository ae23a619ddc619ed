//! `kubectl fleet rotate SITE [--revoke]`: mint a fresh token for a Push
//! site and print the edge configuration again. `--revoke` first recreates
//! the site's ServiceAccount, so every older token is rejected (401). A
//! ServiceAccount that was deleted is recreated (its bindings name it, so
//! they apply to the new one). A site registered before the identities
//! moved to `fleet-sites` is moved first (its old ServiceAccount's tokens
//! stop working, as with `--revoke`).

use std::time::Duration;

use super::register::{EdgeOutputArgs, Issued, hand_out};
use super::{Error, GlobalArgs, Io, parse_site_name, parse_token_ttl};
use crate::api::Mode;
use crate::fleet::rbac;
use crate::fleet::rbac::SITES_NAMESPACE;

/// Arguments of `kubectl fleet rotate`.
#[derive(Debug, clap::Args)]
pub struct RotateArgs {
    /// The registered site
    #[arg(value_name = "SITE", value_parser = parse_site_name)]
    pub site: String,
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
    let site = &args.site;
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
    hand_out(&hub, site, issued, &args.edge, io)
}
