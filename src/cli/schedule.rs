//! `kubectl fleet schedule SITE...|-l SELECTOR [--offline WINDOW... --tz
//! ZONE] [--absent-up-to D] | --clear`: when sites are expected to be
//! silent, recorded in their `spec.connectivity` (one JSON merge patch of
//! that key per site, field manager `kubectl-fleet`, so the maintenance
//! window, the quarantine and every other spec field stay as they are). A
//! silent site inside its schedule is `Sleeping` and pages nobody; past it
//! plus three heartbeat intervals it is late to wake
//! (docs/operations.md#expected-connectivity).
//!
//! Everything is checked before the first write, as for `cordon`: the
//! windows and the time zone (the platform's IANA database), overlapping
//! windows merged and said, the sites, and for `-l` the confirmation. The
//! flags replace the site's whole schedule: `--offline` alone drops a
//! longest absence set before (the output says what it replaced).

use std::time::Duration;

use super::cordon::{SiteChoice, chosen_sites, confirm, finish};
use super::{Error, GlobalArgs, Io, interrupt};
use crate::api::Connectivity;
use crate::fleet::connectivity::{Window, describe, validate};
use crate::fleet::duration::parse_duration;
use crate::render::status::resource_name;

/// The flags that set a schedule (shared by `schedule` and `register`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ScheduleFlags {
    /// An offline window in --tz local time: HH:MM-HH:MM every day (e.g. 22:00-06:00) or "DAY HH:MM-DAY HH:MM" every week (e.g. "Sat 00:00-Mon 06:00"); repeat for more
    #[arg(long = "offline", value_name = "WINDOW", value_parser = parse_window)]
    pub offline: Vec<String>,
    /// The IANA time zone of the --offline windows, e.g. Europe/Berlin
    #[arg(long = "tz", value_name = "ZONE")]
    pub tz: Option<String>,
    /// The longest the site may be silent at any time, e.g. 36h or 7d (1m to 7d)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub absent_up_to: Option<Duration>,
}

fn parse_window(s: &str) -> Result<String, String> {
    Window::parse(s.trim()).map(|w| w.to_string())
}

/// Whether the platform's IANA database (/usr/share/zoneinfo, or
/// `TZDIR`) has `zone`.
pub(super) fn zone_exists(zone: &str) -> bool {
    jiff::tz::db().get(zone).is_ok()
}

/// `zone` as the platform's database spells it, or as given when it does
/// not know it (validation then refuses it).
fn canonical_zone(zone: &str) -> String {
    jiff::tz::db()
        .get(zone)
        .ok()
        .and_then(|z| z.iana_name().map(str::to_owned))
        .unwrap_or_else(|| zone.to_owned())
}

impl ScheduleFlags {
    /// Whether any flag was given.
    pub fn given(&self) -> bool {
        !self.offline.is_empty() || self.tz.is_some() || self.absent_up_to.is_some()
    }

    /// The schedule the flags ask for, checked ([`validate`]), with what
    /// was merged; None when no flag was given.
    pub fn connectivity(&self) -> Result<Option<(Connectivity, Vec<String>)>, Error> {
        if !self.given() {
            return Ok(None);
        }
        let asked = Connectivity {
            // The database's own spelling (`europe/berlin` finds
            // Europe/Berlin), so every view shows the canonical name.
            time_zone: self.tz.as_deref().map(canonical_zone),
            offline: self.offline.clone(),
            absent_up_to_seconds: self
                .absent_up_to
                .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX)),
        };
        validate(&asked, zone_exists)
            .map(Some)
            .map_err(invalid_schedule)
    }

    /// The flags as words of a command line (for hints that re-run it).
    pub fn words(&self) -> Vec<String> {
        let mut w = Vec::new();
        for o in &self.offline {
            w.extend(["--offline".to_owned(), o.clone()]);
        }
        if let Some(tz) = &self.tz {
            w.extend(["--tz".to_owned(), tz.clone()]);
        }
        if let Some(d) = self.absent_up_to {
            w.extend([
                "--absent-up-to".to_owned(),
                crate::fleet::duration::format_duration(d),
            ]);
        }
        w
    }
}

/// A refused schedule as a one-line error with its hint.
pub(super) fn invalid_schedule(why: String) -> Error {
    Error::Invalid {
        what: why,
        hint: "`kubectl fleet schedule --help` has the forms".to_owned(),
    }
}

/// Arguments of `kubectl fleet schedule`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("what").args(["offline", "tz", "absent_up_to", "clear"]).multiple(true).required(true))]
pub struct ScheduleArgs {
    /// The sites.
    #[command(flatten)]
    pub which: SiteChoice,
    /// The schedule.
    #[command(flatten)]
    pub flags: ScheduleFlags,
    /// Remove the schedule: the sites' silence is judged as any other again
    #[arg(long, conflicts_with_all = ["offline", "tz", "absent_up_to"])]
    pub clear: bool,
}

/// Runs `kubectl fleet schedule`.
pub async fn run(global: &GlobalArgs, args: ScheduleArgs, io: &mut Io<'_>) -> Result<(), Error> {
    // The schedule is checked before anything is read.
    let wanted = if args.clear {
        None
    } else {
        args.flags.connectivity()?
    };
    if let Some((_, notes)) = &wanted {
        for note in notes {
            // Said on stderr, which a closed stdout does not silence.
            let _ = writeln!(io.err, "note: {note}");
        }
    }
    let wanted = wanted.map(|(c, _)| c);
    let hub = global.hub().await?;
    let (sites, missing) = chosen_sites(&hub, &args.which, "schedule").await?;
    let effect = if wanted.is_some() {
        "while silent inside it they are Sleeping and page nobody"
    } else {
        "their silence is judged as any other again"
    };
    confirm(&args.which, &sites, "Schedule", effect, io)?;
    let mut failed = Vec::new();
    for site in &sites {
        let name = site.site_name();
        let current = site.spec.connectivity.as_ref();
        if current == wanted.as_ref() {
            let said = match &wanted {
                Some(c) => format!("{} already scheduled: {}", resource_name(name), describe(c)),
                None => format!("{} has no schedule", resource_name(name)),
            };
            say(io, &said);
            continue;
        }
        if interrupt::requested() {
            break;
        }
        if !hub.set_site_connectivity(name, wanted.as_ref()).await? {
            failed.push(name.to_owned());
            continue;
        }
        let replaced = current
            .map(|c| format!(" (was: {})", describe(c)))
            .unwrap_or_default();
        let said = match &wanted {
            Some(c) => format!(
                "{} scheduled: {}{replaced}",
                resource_name(name),
                describe(c)
            ),
            None => format!("{} schedule cleared{replaced}", resource_name(name)),
        };
        say(io, &said);
    }
    finish(missing.into_iter().chain(failed).collect(), "schedule")
}

/// Writes one result line; a closed stdout does not stop the writes
/// (every site is still done, and a failure is still the exit status).
fn say(io: &mut Io<'_>, line: &str) {
    let _ = writeln!(io.out, "{line}");
}

#[cfg(test)]
mod tests {
    use crate::cli::usage::{line, parses};

    #[test]
    fn a_schedule_or_clear_for_sites_or_a_selector() {
        assert!(parses(&[
            "schedule",
            "a",
            "b",
            "--offline",
            "22:00-06:00",
            "--tz",
            "Europe/Berlin"
        ]));
        assert!(parses(&[
            "schedule",
            "a",
            "--offline",
            "Sat 00:00-Mon 06:00",
            "--offline",
            "22:00-06:00",
            "--tz",
            "UTC"
        ]));
        assert!(parses(&[
            "schedule",
            "-l",
            "kind=ship",
            "--absent-up-to",
            "7d",
            "--yes"
        ]));
        assert!(parses(&["schedule", "a", "--clear"]));
        let none = line(&["schedule", "a"]);
        assert!(none.contains("required"), "{none}");
        let both = line(&["schedule", "a", "--clear", "--absent-up-to", "1d"]);
        assert!(both.contains("cannot be used with"), "{both}");
        let bad = line(&["schedule", "a", "--offline", "22-06", "--tz", "UTC"]);
        assert!(bad.contains("e.g. 22:00-06:00"), "{bad}");
        let dur = line(&["schedule", "a", "--absent-up-to", "soon"]);
        assert!(dur.contains("soon"), "{dur}");
        let sites = line(&["schedule", "--clear"]);
        assert!(sites.contains("required"), "{sites}");
    }

    #[test]
    fn the_flags_are_checked_before_anything_is_read() {
        let flags =
            |offline: &[&str], tz: Option<&str>, absent: Option<u64>| super::ScheduleFlags {
                offline: offline.iter().map(|s| (*s).to_owned()).collect(),
                tz: tz.map(str::to_owned),
                absent_up_to: absent.map(std::time::Duration::from_secs),
            };
        let err = |f: super::ScheduleFlags| f.connectivity().unwrap_err().to_string();
        let e = err(flags(&["22:00-06:00"], None, None));
        assert!(e.contains("add --tz ZONE"), "{e}");
        let e = err(flags(&["22:00-06:00"], Some("Europe/Berln"), None));
        assert!(e.contains("unknown time zone"), "{e}");
        let e = err(flags(&[], None, Some(8 * 86_400)));
        assert!(e.contains("a minute to a week"), "{e}");
        let (c, _) = flags(&["22:00-06:00"], Some("europe/berlin"), None)
            .connectivity()
            .unwrap()
            .unwrap();
        assert_eq!(
            c.time_zone.as_deref(),
            Some("Europe/Berlin"),
            "the database's spelling"
        );
        let (c, notes) = flags(&["22:00-02:00", "01:00-06:00"], Some("UTC"), None)
            .connectivity()
            .unwrap()
            .unwrap();
        assert_eq!(c.offline, ["22:00-06:00"]);
        assert_eq!(notes.len(), 1);
        assert!(flags(&[], None, None).connectivity().unwrap().is_none());
    }
}
