//! `kubectl fleet quarantine SITE...|-l SELECTOR [--reason TEXT]` and
//! `unquarantine`: distrust what a site reports, recorded in its
//! `spec.quarantine` (one JSON merge patch per site, field manager
//! `kubectl-fleet`; `register` re-runs keep it). While it is set the hub
//! leaves the site's signals out of every fleet incident — cross-cluster
//! correlations and cascades — so nothing the site reports changes another
//! site's remediation decision, Events or alerts; the site is still judged
//! and every view still shows its own status and signals (marked
//! quarantined). It stays in grouped outages: those are made of what the
//! hub did not hear, not of what the site reported
//! (docs/reliability.md#what-a-sites-report-may-change-for-other-sites).
//! A site cannot lift its own quarantine: its token may write only its
//! status.
//!
//! Everything is checked before the first write: the reason (bounded plain
//! text), the sites, and for `-l` the confirmation (`--yes` off a
//! terminal), as for every bulk command. A site that is not registered is
//! named and the others are still done; the command then exits non-zero.
//! Every site is done even when stdout goes away (`| head -1`).

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::cordon::{SiteChoice, chosen_sites, confirm, finish};
use super::{Error, GlobalArgs, Io, interrupt};
use crate::api::{Quarantine, validate_maintenance_reason};
use crate::render::status::resource_name;

/// Arguments of `kubectl fleet quarantine`.
#[derive(Debug, clap::Args)]
pub struct QuarantineArgs {
    /// The sites.
    #[command(flatten)]
    pub which: SiteChoice,
    /// Why, shown by describe, incidents, -o json and the REST API (at most 256 characters; "" clears it)
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
}

/// Arguments of `kubectl fleet unquarantine`.
#[derive(Debug, clap::Args)]
pub struct UnquarantineArgs {
    /// The sites.
    #[command(flatten)]
    pub which: SiteChoice,
}

/// Runs `kubectl fleet quarantine`.
pub async fn run_quarantine(
    global: &GlobalArgs,
    args: QuarantineArgs,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    // The reason is checked before anything is read.
    let reason = args.reason.as_deref().filter(|r| !r.is_empty());
    if let Some(reason) = reason {
        validate_maintenance_reason(reason).map_err(|why| Error::Invalid {
            what: format!("--reason {why}"),
            hint: "give a short plain-text reason, e.g. --reason 'forged signals, see INC-42'"
                .to_owned(),
        })?;
    }
    let hub = global.hub().await?;
    let (sites, missing) = chosen_sites(&hub, &args.which, "quarantine").await?;
    confirm(
        &args.which,
        &sites,
        "Quarantine",
        "their signals leave every fleet incident until unquarantined",
        io,
    )?;
    let mut failed = Vec::new();
    for site in &sites {
        let name = site.site_name();
        let held = site.spec.quarantine.as_ref();
        // A quarantine keeps when it began; a reason given replaces the
        // one it had ("" clears it).
        let since = held.and_then(|q| q.since.clone()).unwrap_or_else(|| {
            let now = Timestamp::now();
            Time(Timestamp::from_second(now.as_second()).unwrap_or(now))
        });
        let quarantine = Quarantine {
            since: Some(since),
            reason: match &args.reason {
                Some(_) => reason.map(str::to_owned),
                None => held.and_then(|q| q.reason.clone()),
            },
        };
        if held == Some(&quarantine) {
            writeln!(io.out, "{} already quarantined", resource_name(name))?;
            continue;
        }
        if interrupt::requested() {
            break;
        }
        if hub.set_site_quarantine(name, Some(&quarantine)).await? {
            let mut line = format!("{} quarantined", resource_name(name));
            if let Some(reason) = &quarantine.reason {
                line.push_str(": ");
                line.push_str(&crate::render::safe::safe_text(reason, 256));
            }
            writeln!(io.out, "{line}")?;
        } else {
            failed.push(name.to_owned());
        }
    }
    finish(missing.into_iter().chain(failed).collect(), "quarantine")
}

/// Runs `kubectl fleet unquarantine`.
pub async fn run_unquarantine(
    global: &GlobalArgs,
    args: UnquarantineArgs,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let hub = global.hub().await?;
    let (sites, missing) = chosen_sites(&hub, &args.which, "unquarantine").await?;
    confirm(
        &args.which,
        &sites,
        "Unquarantine",
        "their signals count in fleet incidents again",
        io,
    )?;
    let mut failed = Vec::new();
    for site in &sites {
        let name = site.site_name();
        if site.spec.quarantine.is_none() {
            writeln!(io.out, "{} not quarantined", resource_name(name))?;
            continue;
        }
        if interrupt::requested() {
            break;
        }
        if hub.set_site_quarantine(name, None).await? {
            writeln!(io.out, "{} unquarantined", resource_name(name))?;
        } else {
            failed.push(name.to_owned());
        }
    }
    finish(missing.into_iter().chain(failed).collect(), "unquarantine")
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, usage_error_line};
    use clap::Parser as _;

    #[test]
    fn sites_or_a_selector() {
        assert!(Cli::try_parse_from(["kubectl-fleet", "quarantine", "a", "b"]).is_ok());
        assert!(
            Cli::try_parse_from([
                "kubectl-fleet",
                "quarantine",
                "-l",
                "env=staging",
                "--yes",
                "--reason",
                "forged signals"
            ])
            .is_ok()
        );
        let line = |args: &[&str]| {
            let mut argv = vec!["kubectl-fleet"];
            argv.extend_from_slice(args);
            usage_error_line(&Cli::try_parse_from(argv).unwrap_err())
        };
        assert!(line(&["quarantine"]).contains("required"));
        assert!(line(&["unquarantine", "a", "-l", "x=y"]).contains("cannot be used with"));
        assert!(line(&["unquarantine", "Site_A"]).contains("DNS-1123"));
        assert!(line(&["unquarantine", "a", "--reason", "x"]).contains("--reason"));
    }
}
