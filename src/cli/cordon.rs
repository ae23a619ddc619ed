//! `kubectl fleet cordon SITE...|-l SELECTOR [--for D|--until T] [--reason TEXT]`
//! and `uncordon`: open or end a site's maintenance window, recorded in its
//! `spec.maintenance` (one JSON merge patch per site, field manager
//! `kubectl-fleet`; `register` re-runs keep it). While the window is open
//! the hub still judges the site and every view shows its phase, marked
//! `,Maintenance`; it raises no per-site alert and counts in no outage; the
//! window ends by itself at `until` (docs/views.md#maintenance-windows).
//!
//! Everything is checked before the first write: the window (in the future,
//! at most [`MAX_WINDOW`]), the reason (bounded plain text), the sites, and
//! for `-l` the confirmation (`--yes` off a terminal), as for every bulk
//! command. A site that is not registered is named and the others are still
//! done; the command then exits non-zero.

use jiff::{SignedDuration, Timestamp};

use super::select::Selection;
use super::{Error, GlobalArgs, Io, interrupt, parse_site_name};
use crate::api::{FederatedCluster, MaintenanceWindow};
use crate::fleet::duration::{format_duration, parse_signed_duration};
use crate::fleet::maintenance::{MAX_WINDOW, WindowEnd, parse_until, window};
use crate::k8s::site_status::get_site;
use crate::render::status::resource_name;

/// Which sites a bulk command (cordon, uncordon, quarantine,
/// unquarantine) is for.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("which").args(["sites", "selector", "region"]).multiple(true).required(true))]
#[command(group = clap::ArgGroup::new("bulk").args(["selector", "region"]).multiple(true).conflicts_with("sites"))]
pub struct SiteChoice {
    /// The sites, by name
    #[arg(value_name = "SITE", value_parser = parse_site_name)]
    pub sites: Vec<String>,
    /// The sites chosen by label instead of by name.
    #[command(flatten)]
    pub selection: Selection,
    /// With -l/--region: do not ask for confirmation (required when stdin is not a terminal)
    #[arg(short, long)]
    pub yes: bool,
}

/// Arguments of `kubectl fleet cordon`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("end").args(["for_", "until"]))]
pub struct CordonArgs {
    /// The sites.
    #[command(flatten)]
    pub which: SiteChoice,
    /// How long the window lasts from now, e.g. 2h, 1d (default 1h; at most 30d)
    #[arg(long = "for", id = "for_", value_name = "DURATION", allow_hyphen_values = true, value_parser = parse_signed_duration)]
    pub for_: Option<SignedDuration>,
    /// When the window ends, RFC 3339 with an offset, e.g. 2026-01-02T15:04:05Z (at most 30d ahead)
    #[arg(long, value_name = "TIME", value_parser = parse_until)]
    pub until: Option<Timestamp>,
    /// Why, shown by describe, -o json and the REST API (at most 256 characters; "" clears it)
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
}

/// Arguments of `kubectl fleet uncordon`.
#[derive(Debug, clap::Args)]
pub struct UncordonArgs {
    /// The sites.
    #[command(flatten)]
    pub which: SiteChoice,
}

/// Runs `kubectl fleet cordon`.
pub async fn run_cordon(
    global: &GlobalArgs,
    args: CordonArgs,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let end = match (args.for_, args.until) {
        (Some(d), _) => Some(WindowEnd::For(d)),
        (None, Some(t)) => Some(WindowEnd::Until(t)),
        (None, None) => None,
    };
    let reason = args.reason.as_deref();
    // The window and reason are checked before anything is read.
    let now = Timestamp::now();
    window(now, end, reason, None).map_err(invalid_window)?;
    let hub = global.hub().await?;
    let (sites, missing) = chosen_sites(&hub, &args.which, "cordon").await?;
    confirm(
        &args.which,
        &sites,
        "Cordon",
        "their per-site alerts stop until the window ends",
        io,
    )?;
    let mut failed = Vec::new();
    for site in &sites {
        let name = site.site_name();
        // `now` again: a prompt may have waited. Whole seconds, as the
        // window is written.
        let now = Timestamp::now();
        let now = Timestamp::from_second(now.as_second()).unwrap_or(now);
        let current = site.spec.maintenance.as_ref();
        let w = window(now, end, reason, current).map_err(invalid_window)?;
        if interrupt::requested() {
            break;
        }
        if hub.set_site_maintenance(name, Some(&w)).await? {
            writeln!(
                io.out,
                "{} cordoned {}{}",
                resource_name(name),
                describe_window(&w, now),
                shortened(current, &w, now)
            )?;
        } else {
            failed.push(name.to_owned());
        }
    }
    finish(missing.into_iter().chain(failed).collect(), "cordon")
}

/// Runs `kubectl fleet uncordon`.
pub async fn run_uncordon(
    global: &GlobalArgs,
    args: UncordonArgs,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let hub = global.hub().await?;
    let (sites, missing) = chosen_sites(&hub, &args.which, "uncordon").await?;
    confirm(
        &args.which,
        &sites,
        "Uncordon",
        "their per-site alerts resume",
        io,
    )?;
    let mut failed = Vec::new();
    for site in &sites {
        let name = site.site_name();
        if site.spec.maintenance.is_none() {
            writeln!(io.out, "{} already uncordoned", resource_name(name))?;
            continue;
        }
        if interrupt::requested() {
            break;
        }
        if hub.set_site_maintenance(name, None).await? {
            writeln!(io.out, "{} uncordoned", resource_name(name))?;
        } else {
            failed.push(name.to_owned());
        }
    }
    finish(missing.into_iter().chain(failed).collect(), "uncordon")
}

/// A refused window as a one-line error with its hint.
fn invalid_window(why: String) -> Error {
    Error::Invalid {
        what: why,
        hint: format!(
            "a window ends by itself: --for DURATION (e.g. 2h) or --until TIME (RFC 3339), at most {} ahead",
            format_duration(MAX_WINDOW)
        ),
    }
}

/// What a new window does to an open one that ended later: `cordon`
/// sets the end it is given, so it says so (empty otherwise).
fn shortened(
    current: Option<&MaintenanceWindow>,
    new: &MaintenanceWindow,
    now: Timestamp,
) -> String {
    match current {
        Some(old) if old.until.0 > new.until.0 && old.until.0 > now => format!(
            " (shortened: the window open until {} (in {}) now ends earlier)",
            old.until.0,
            crate::fleet::age::until(old.until.0, now)
        ),
        _ => String::new(),
    }
}

/// `until 2026-01-02T15:04:05Z (in 2h): reason`.
fn describe_window(w: &MaintenanceWindow, now: Timestamp) -> String {
    let mut text = format!(
        "until {} (in {})",
        w.until.0,
        crate::fleet::age::until(w.until.0, now)
    );
    if let Some(reason) = &w.reason {
        text.push_str(": ");
        text.push_str(&crate::render::safe::safe_text(reason, 256));
    }
    text
}

/// The sites named (read one by one; the names not registered come back
/// apart) or selected with `-l` (one list).
pub(super) async fn chosen_sites(
    hub: &crate::k8s::Cluster,
    which: &SiteChoice,
    verb: &str,
) -> Result<(Vec<FederatedCluster>, Vec<String>), Error> {
    if which.selection.given() {
        return Ok((which.selection.sites(hub, verb).await?, Vec::new()));
    }
    let mut found = Vec::new();
    let mut missing = Vec::new();
    let mut names = which.sites.clone();
    names.dedup();
    for name in names {
        match hub
            .found(
                format!("get FederatedCluster {name}"),
                get_site(&hub.sites(), &name),
            )
            .await?
        {
            Some(site) => found.push(site),
            None => missing.push(name),
        }
    }
    Ok((found, missing))
}

/// The confirmation `-l` asks for, as other bulk commands do: on a
/// terminal a prompt naming how many sites, off one `--yes`. Named sites
/// are not asked about (as `kubectl cordon NODE`).
pub(super) fn confirm(
    which: &SiteChoice,
    sites: &[FederatedCluster],
    verb: &str,
    effect: &str,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    if !which.selection.given() {
        return Ok(());
    }
    let selector = which.selection.describe();
    if which.yes || sites.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = sites
        .iter()
        .take(5)
        .map(FederatedCluster::site_name)
        .collect();
    let more = if sites.len() > shown.len() {
        format!(", … ({} more)", sites.len() - shown.len())
    } else {
        String::new()
    };
    super::confirm(
        false,
        &format!(
            "{verb} {} site(s) matching {selector} ({}{more})? {effect}",
            sites.len(),
            shown.join(", ")
        ),
        &format!(
            "refusing to {} {} site(s) matching {selector} without confirmation",
            verb.to_lowercase(),
            sites.len()
        ),
        io,
    )
}

/// The end of a run: an error naming the sites that are not registered
/// (a selection that matched none failed before), or that Ctrl-C stopped
/// it between two sites (those done are done; a re-run converges).
pub(super) fn finish(missing: Vec<String>, verb: &str) -> Result<(), Error> {
    if !missing.is_empty() {
        return Err(Error::Invalid {
            what: format!(
                "site {} not registered: not {}",
                missing.join(", "),
                past_participle(verb)
            ),
            hint: "`kubectl fleet status` lists the registered sites".to_owned(),
        });
    }
    if interrupt::requested() {
        return Err(Error::Interrupted {
            left: interrupt::Said::Unknown,
            cut: false,
        });
    }
    Ok(())
}

/// `cordoned`, `quarantined`.
fn past_participle(verb: &str) -> String {
    if verb.ends_with('e') {
        format!("{verb}d")
    } else {
        format!("{verb}ed")
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::usage::{line, parses};

    #[test]
    fn sites_or_a_selector_and_one_end() {
        assert!(parses(&["cordon", "a", "b", "--for", "2h"]));
        assert!(parses(&["cordon", "-l", "region=eu", "--yes"]));
        assert!(
            parses(&["cordon", "a", "--for=-1h"]),
            "refused later, with a reason"
        );
        let none = line(&["cordon"]);
        assert!(none.contains("required"), "{none}");
        let both = line(&["cordon", "a", "-l", "x=y"]);
        assert!(both.contains("cannot be used with"), "{both}");
        let ends = line(&[
            "cordon",
            "a",
            "--for",
            "1h",
            "--until",
            "2030-01-01T00:00:00Z",
        ]);
        assert!(ends.contains("cannot be used with"), "{ends}");
        let until = line(&["cordon", "a", "--until", "tomorrow"]);
        assert!(until.contains("RFC 3339"), "{until}");
        let name = line(&["uncordon", "Site_A"]);
        assert!(name.contains("DNS-1123"), "{name}");
    }
}
