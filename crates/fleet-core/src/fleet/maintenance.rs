//! Maintenance windows as `kubectl fleet cordon` writes them into a
//! site's `spec.maintenance`: the window that `--for`, `--until` and
//! `--reason` ask for at `now`, checked so that it always ends by itself,
//! in the future and within [`MAX_WINDOW`] (docs/views.md#maintenance-windows).

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::api::{MaintenanceWindow, validate_maintenance_reason};
use crate::fleet::duration::format_duration;

/// The longest window one `cordon` opens: a forgotten window must not
/// silence a site for good. Cordon again to extend it.
pub const MAX_WINDOW: Duration = Duration::from_secs(30 * 86_400);

/// How long a window lasts when neither `--for` nor `--until` is given
/// (amtool's default silence).
pub(crate) const DEFAULT_WINDOW: Duration = Duration::from_secs(3_600);

/// When a window ends, as the user asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowEnd {
    /// `--for DURATION` from now (a signed duration, so a negative one is
    /// refused with a reason instead of a parse error).
    For(SignedDuration),
    /// `--until TIME`.
    Until(Timestamp),
}

/// The window to write at `now`: it ends at `end` (default
/// [`DEFAULT_WINDOW`] from now), keeps the `since` of a window that is
/// open now (a re-cordon extends or shortens it; a window that is not open
/// starts now), and keeps that window's reason unless `reason` replaces it.
/// Errors say what to type instead.
pub fn window(
    now: Timestamp,
    end: Option<WindowEnd>,
    reason: Option<&str>,
    existing: Option<&MaintenanceWindow>,
) -> Result<MaintenanceWindow, String> {
    // The wire has whole seconds; so do the checks.
    let now = Timestamp::from_second(now.as_second()).unwrap_or(now);
    let until = match end.unwrap_or(WindowEnd::For(
        SignedDuration::try_from(DEFAULT_WINDOW).unwrap_or(SignedDuration::ZERO),
    )) {
        WindowEnd::For(d) => {
            if d <= SignedDuration::ZERO || d.as_secs() == 0 {
                let sign = if d.is_negative() { "-" } else { "" };
                let abs = d.unsigned_abs();
                return Err(format!(
                    "--for {sign}{} does not end in the future: give a positive duration such as 2h or 1d",
                    format_duration(abs)
                ));
            }
            now.checked_add(d).map_err(|_| too_long())?
        }
        WindowEnd::Until(t) => {
            if t.as_second() <= now.as_second() {
                return Err(format!(
                    "--until {t} is not in the future (now {now}): give a later time, e.g. {}",
                    now.checked_add(SignedDuration::from_hours(2))
                        .unwrap_or(now)
                ));
            }
            Timestamp::from_second(t.as_second()).unwrap_or(t)
        }
    };
    let longest = SignedDuration::try_from(MAX_WINDOW).unwrap_or(SignedDuration::MAX);
    if until.duration_since(now) > longest {
        return Err(too_long());
    }
    if let Some(reason) = reason {
        validate_maintenance_reason(reason).map_err(|e| format!("--reason {e}"))?;
    }
    let open = existing.filter(|w| w.is_open(now));
    Ok(MaintenanceWindow {
        since: Some(open.and_then(|w| w.since.clone()).unwrap_or(Time(now))),
        until: Time(until),
        reason: reason
            .map(str::to_owned)
            .or_else(|| open.and_then(|w| w.reason.clone()))
            .filter(|r| !r.is_empty()),
    })
}

fn too_long() -> String {
    format!(
        "a maintenance window lasts at most {}: cordon again before it ends to extend it",
        format_duration(MAX_WINDOW)
    )
}

/// Parses `--until`: an RFC 3339 time with its offset, as `kubectl` prints
/// times (`2026-01-02T15:04:05Z`, `2026-01-02T17:04:05+02:00`).
pub fn parse_until(s: &str) -> Result<Timestamp, String> {
    s.trim().parse::<Timestamp>().map_err(|_| {
        format!("{s:?} is not an RFC 3339 time with an offset (e.g. 2026-01-02T15:04:05Z)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        crate::fleet::fixtures::fixture_now()
    }

    fn at(secs: i64) -> Timestamp {
        now() + SignedDuration::from_secs(secs)
    }

    #[test]
    fn a_window_ends_by_itself_in_the_future_and_within_the_maximum() {
        let w = window(now(), None, None, None).unwrap();
        assert_eq!(w.since, Some(Time(now())));
        assert_eq!(w.until, Time(at(3600)), "default: one hour");
        assert_eq!(w.reason, None);
        let w = window(
            now(),
            Some(WindowEnd::For(SignedDuration::from_hours(2))),
            Some("kernel upgrade"),
            None,
        )
        .unwrap();
        assert_eq!(w.until, Time(at(7200)));
        assert_eq!(w.reason.as_deref(), Some("kernel upgrade"));
        let w = window(now(), Some(WindowEnd::Until(at(90))), None, None).unwrap();
        assert_eq!(w.until, Time(at(90)));

        for bad in [SignedDuration::ZERO, SignedDuration::from_secs(-600)] {
            let e = window(now(), Some(WindowEnd::For(bad)), None, None).unwrap_err();
            assert!(e.contains("does not end in the future"), "{e}");
        }
        let e = window(now(), Some(WindowEnd::Until(at(-1))), None, None).unwrap_err();
        assert!(e.contains("is not in the future"), "{e}");
        let e = window(now(), Some(WindowEnd::Until(now())), None, None).unwrap_err();
        assert!(e.contains("is not in the future"), "{e}");
        let month = SignedDuration::from_secs(30 * 86_400);
        assert!(window(now(), Some(WindowEnd::For(month)), None, None).is_ok());
        let e = window(
            now(),
            Some(WindowEnd::For(month + SignedDuration::from_secs(1))),
            None,
            None,
        )
        .unwrap_err();
        assert!(e.contains("at most 30d"), "{e}");
        let e = window(now(), Some(WindowEnd::For(SignedDuration::MAX)), None, None).unwrap_err();
        assert!(e.contains("at most 30d"), "{e}");
    }

    #[test]
    fn reasons_are_bounded_and_plain_text() {
        let e = window(now(), None, Some("a\u{1b}[2Jb"), None).unwrap_err();
        assert!(e.contains("control or format"), "{e}");
        let long = "r".repeat(crate::api::MAX_MAINTENANCE_REASON_CHARS + 1);
        let e = window(now(), None, Some(&long), None).unwrap_err();
        assert!(e.contains("at most 256 characters"), "{e}");
        let w = window(now(), None, Some(""), None).unwrap();
        assert_eq!(w.reason, None, "an empty reason clears it");
    }

    #[test]
    fn a_re_cordon_keeps_an_open_windows_start_and_reason() {
        let open = MaintenanceWindow {
            since: Some(Time(at(-600))),
            until: Time(at(600)),
            reason: Some("rack move".into()),
        };
        let w = window(
            now(),
            Some(WindowEnd::For(SignedDuration::from_hours(4))),
            None,
            Some(&open),
        )
        .unwrap();
        assert_eq!(w.since, Some(Time(at(-600))));
        assert_eq!(w.until, Time(at(4 * 3600)));
        assert_eq!(w.reason.as_deref(), Some("rack move"));
        // A window that already ended (or has not begun) is not extended.
        let ended = MaintenanceWindow {
            since: Some(Time(at(-7200))),
            until: Time(at(-3600)),
            ..open
        };
        let w = window(now(), None, None, Some(&ended)).unwrap();
        assert_eq!(w.since, Some(Time(now())));
        assert_eq!(w.reason, None);
    }

    #[test]
    fn until_takes_rfc3339_with_an_offset() {
        assert_eq!(
            parse_until("2026-01-02T17:04:05+02:00").unwrap(),
            parse_until("2026-01-02T15:04:05Z").unwrap()
        );
        let e = parse_until("2026-01-02 15:04").unwrap_err();
        assert!(e.contains("e.g. 2026-01-02T15:04:05Z"), "{e}");
    }
}
