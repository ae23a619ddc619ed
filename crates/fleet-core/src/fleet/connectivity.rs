//! Expected connectivity (`spec.connectivity`, `kubectl fleet schedule`):
//! when a silent site is `Sleeping` rather than Stale or Unreachable, and
//! when it is `LateToWake` (docs/operations.md#expected-connectivity).
//! The hub's rules live here and only here; pure: the time zone comes
//! resolved ([`Schedule::of`]) and `now` is an argument.
//!
//! A site may declare recurring offline windows in its own time zone
//! (`22:00-06:00` every day, `Sat 00:00-Mon 06:00` every week) and/or the
//! longest absence it may take (`absentUpToSeconds`). For a site silent
//! since the hub last observed a heartbeat at `t0` (judged by
//! [`expect`]):
//!
//! - **Offline windows.** Take the first window occurrence (occurrences
//!   that overlap or touch merged) that ends after `t0`, `[start, end)`.
//!   Before `start` the silence is judged as any other; from `start` until
//!   `end` plus the grace it is expected (`Sleeping`); after that the site
//!   is `LateToWake` until it is heard from again — it stays late through
//!   later windows, so a dead site does not go back to sleep every night.
//! - **Longest absence `D`.** Expected until `t0 + D` plus the grace, late
//!   after.
//! - Both: expected while either expects it; late when one is late and
//!   none expects it.
//!
//! The grace is [`GRACE_INTERVALS`] heartbeat intervals, the margin the
//! Connected threshold gives a live site: an edge that wakes at the end of
//! its window reports within an interval, and the hub observes it within
//! the next. The phase a schedule can change is only that of a silent site
//! (Stale or Unreachable as judged today): a site heard from is Connected,
//! a site never heard from Pending, whatever its schedule says.
//!
//! Windows are local wall-clock times: a window from 22:00 to 06:00 lasts 7
//! hours on the night clocks spring forward and 9 on the night they fall
//! back. A start or end that falls in a skipped hour means the instant
//! after the gap (02:30 on a spring-forward night is 03:30 summer time); one
//! that falls in a repeated hour means its first occurrence (jiff's
//! "compatible" disambiguation, as RFC 5545 and `java.time` do).

use std::fmt;
use std::time::Duration;

use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, ToSpan};

use crate::api::{ABSENT_UP_TO_RANGE, Connectivity, MAX_OFFLINE_WINDOWS, TIME_ZONE_PATTERN};
use crate::fleet::duration::format_duration;

/// A silent site is still expected this many heartbeat intervals after its
/// window or longest absence ends (the Connected threshold of a live site).
pub const GRACE_INTERVALS: u32 = 3;

/// Minutes in a day and in a week.
const DAY: u32 = 24 * 60;
const WEEK: u32 = 7 * DAY;

/// One recurring offline window, in local wall-clock minutes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Window {
    /// Every day from `start` (minute of the day) for `len` minutes.
    Daily { start: u32, len: u32 },
    /// Every week from `start` (minute of the week, Monday 00:00 = 0) for
    /// `len` minutes.
    Weekly { start: u32, len: u32 },
}

const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

fn hh_mm(s: &str) -> Option<u32> {
    let (h, m) = s.split_once(':')?;
    if h.len() != 2 || m.len() != 2 || !(h.bytes().chain(m.bytes())).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    (h < 24 && m < 60).then_some(h * 60 + m)
}

fn day_hh_mm(s: &str) -> Option<u32> {
    let (day, time) = s.split_once(' ')?;
    let d = DAYS.iter().position(|d| *d == day)?;
    Some(u32::try_from(d).ok()? * DAY + hh_mm(time)?)
}

impl Window {
    /// Reads one window as `spec.connectivity.offline` and `--offline`
    /// spell it (`HH:MM-HH:MM`, `DAY HH:MM-DAY HH:MM`). The error says what
    /// to type instead.
    pub fn parse(s: &str) -> Result<Window, String> {
        let bad = || {
            format!(
                "offline window {s:?} is not HH:MM-HH:MM (every day, e.g. 22:00-06:00) or DAY HH:MM-DAY HH:MM (every week, e.g. \"Sat 00:00-Mon 06:00\"; days Mon..Sun)"
            )
        };
        let (a, b) = s.split_once('-').ok_or_else(bad)?;
        let (window, m) = match (hh_mm(a), hh_mm(b)) {
            (Some(a), Some(b)) => (Window::Daily { start: a, len: 0 }, (b + DAY - a) % DAY),
            _ => {
                let (a, b) = (day_hh_mm(a).ok_or_else(bad)?, day_hh_mm(b).ok_or_else(bad)?);
                (Window::Weekly { start: a, len: 0 }, (b + WEEK - a) % WEEK)
            }
        };
        if m == 0 {
            return Err(format!(
                "offline window {s:?} ends when it starts: a window is shorter than a {} (for a site that is rarely online use --absent-up-to)",
                if matches!(window, Window::Daily { .. }) {
                    "day (for a longer one give days: \"Sat 00:00-Mon 06:00\")"
                } else {
                    "week"
                }
            ));
        }
        Ok(match window {
            Window::Daily { start, .. } => Window::Daily { start, len: m },
            Window::Weekly { start, .. } => Window::Weekly { start, len: m },
        })
    }

    fn cycle(self) -> u32 {
        match self {
            Window::Daily { .. } => DAY,
            Window::Weekly { .. } => WEEK,
        }
    }

    fn start_len(self) -> (u32, u32) {
        match self {
            Window::Daily { start, len } | Window::Weekly { start, len } => (start, len),
        }
    }

    fn with(self, start: u32, len: u32) -> Window {
        match self {
            Window::Daily { .. } => Window::Daily { start, len },
            Window::Weekly { .. } => Window::Weekly { start, len },
        }
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (start, len) = self.start_len();
        let end = (start + len) % self.cycle();
        let at = |m: u32| format!("{:02}:{:02}", (m % DAY) / 60, m % 60);
        match self {
            Window::Daily { .. } => write!(f, "{}-{}", at(start), at(end)),
            Window::Weekly { .. } => {
                let day = |m: u32| DAYS[usize::try_from(m / DAY).unwrap_or(0) % 7];
                write!(f, "{} {}-{} {}", day(start), at(start), day(end), at(end))
            }
        }
    }
}

/// Whether `zone` has the shape of an IANA name (the CRD's pattern); that
/// it exists is for the caller to look up.
fn zone_shaped(zone: &str) -> bool {
    let part = |p: &str, first: bool| {
        p.chars().next().is_some_and(|c| {
            if first {
                c.is_ascii_alphabetic()
            } else {
                c.is_ascii_alphanumeric()
            }
        }) && p
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+'))
    };
    debug_assert!(TIME_ZONE_PATTERN.starts_with('^'));
    zone.len() <= crate::api::MAX_TIME_ZONE_CHARS
        && zone.split('/').enumerate().all(|(i, p)| part(p, i == 0))
}

/// Merges windows of one cycle (all daily, or all weekly) that overlap or
/// touch, on the circle of that cycle. Returns the merged windows (sorted)
/// with the inputs each came from, or an error if they cover the whole
/// cycle.
fn merge_cycle(windows: &[(Window, String)]) -> Result<Vec<(Window, Vec<String>)>, String> {
    let Some((first, _)) = windows.first() else {
        return Ok(Vec::new());
    };
    let cycle = first.cycle();
    let mut spans: Vec<(u32, u32, Vec<String>)> = windows
        .iter()
        .map(|(w, text)| {
            let (s, len) = w.start_len();
            (s, s + len, vec![text.clone()])
        })
        .collect();
    spans.sort();
    let mut merged: Vec<(u32, u32, Vec<String>)> = Vec::new();
    for (s, e, from) in spans {
        match merged.last_mut() {
            Some(last) if s <= last.1 => {
                last.1 = last.1.max(e);
                last.2.extend(from);
            }
            _ => merged.push((s, e, from)),
        }
    }
    // Around the circle: the last may reach into the first ones.
    while merged.len() > 1 {
        let last_end = merged[merged.len() - 1].1;
        if last_end < merged[0].0 + cycle {
            break;
        }
        let first = merged.remove(0);
        let last = merged.last_mut().expect("more than one");
        last.1 = last.1.max(first.1 + cycle);
        last.2.extend(first.2);
    }
    let mut out = Vec::new();
    for (s, e, from) in merged {
        if e - s >= cycle {
            return Err(format!(
                "offline windows {} leave the site no time online: for a site that is rarely online use --absent-up-to DURATION",
                from.join(", ")
            ));
        }
        out.push((first.with(s % cycle, e - s), from));
    }
    out.sort_by_key(|(w, _)| *w);
    Ok(out)
}

/// `spec.connectivity` checked as `kubectl fleet register` and `schedule`
/// write it: the time zone is an IANA name that `zone_exists` (the
/// platform's database) knows, windows are well-formed and shorter than
/// their cycle, windows that overlap or touch are merged (each merge is
/// said in the returned notes), at most [`MAX_OFFLINE_WINDOWS`] remain,
/// and the longest absence is a minute to a week. Errors say what to type
/// instead; the returned spec is the normalised one to write.
pub fn validate(
    c: &Connectivity,
    zone_exists: impl Fn(&str) -> bool,
) -> Result<(Connectivity, Vec<String>), String> {
    if c.offline.is_empty() && c.absent_up_to_seconds.is_none() {
        return Err(
            "a schedule needs offline windows (--offline HH:MM-HH:MM --tz ZONE) or a longest absence (--absent-up-to DURATION); --clear removes it"
                .to_owned(),
        );
    }
    let mut notes = Vec::new();
    match (&c.time_zone, c.offline.is_empty()) {
        (None, false) => {
            return Err(
                "offline windows need a time zone: add --tz ZONE (an IANA name such as Europe/Berlin)"
                    .to_owned(),
            );
        }
        (Some(zone), true) => {
            return Err(format!(
                "time zone {zone:?} without offline windows means nothing: add --offline HH:MM-HH:MM"
            ));
        }
        (Some(zone), false) => {
            if !zone_shaped(zone) || !zone_exists(zone) {
                let shown = crate::fleet::bounds::printable(zone);
                let shown = crate::fleet::bounds::cut_to(&shown, 64);
                return Err(format!(
                    "unknown time zone {shown:?}: give an IANA name from /usr/share/zoneinfo, e.g. Europe/Berlin, America/New_York or UTC"
                ));
            }
        }
        (None, true) => {}
    }
    let mut daily = Vec::new();
    let mut weekly = Vec::new();
    for text in &c.offline {
        let w = Window::parse(text.trim())?;
        match w {
            Window::Daily { .. } => daily.push((w, text.trim().to_owned())),
            Window::Weekly { .. } => weekly.push((w, text.trim().to_owned())),
        }
    }
    let mut offline = Vec::new();
    for set in [daily, weekly] {
        for (w, from) in merge_cycle(&set)? {
            if from.len() > 1 {
                notes.push(format!(
                    "offline windows {} overlap: merged into {w}",
                    from.join(", ")
                ));
            }
            offline.push(w.to_string());
        }
    }
    if offline.len() > MAX_OFFLINE_WINDOWS {
        return Err(format!(
            "{} offline windows: a site has at most {MAX_OFFLINE_WINDOWS} (merge some into longer ones)",
            offline.len()
        ));
    }
    if let Some(secs) = c.absent_up_to_seconds
        && !ABSENT_UP_TO_RANGE.contains(&secs)
    {
        let d = Duration::from_secs(secs.unsigned_abs());
        return Err(format!(
            "--absent-up-to {}{} is out of range: give a minute to a week (1m to 7d), e.g. 36h",
            if secs < 0 { "-" } else { "" },
            format_duration(d)
        ));
    }
    Ok((
        Connectivity {
            time_zone: c.time_zone.clone(),
            offline,
            absent_up_to_seconds: c.absent_up_to_seconds,
        },
        notes,
    ))
}

/// A site's `spec.connectivity` as the hub judges it: its windows read and
/// its time zone resolved by the caller (None when the zone is unset or
/// unknown to the hub's database: the windows are then not judged, the
/// longest absence still is).
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    zone: Option<TimeZone>,
    windows: Vec<Window>,
    absent_up_to: Option<Duration>,
}

impl Schedule {
    /// The schedule of `c` in `zone`. Windows that do not read (the CRD
    /// refuses them; an object written past it) are left out.
    pub fn of(c: &Connectivity, zone: Option<TimeZone>) -> Schedule {
        Schedule {
            windows: if zone.is_some() {
                c.offline
                    .iter()
                    .filter_map(|w| Window::parse(w).ok())
                    .collect()
            } else {
                Vec::new()
            },
            zone,
            absent_up_to: c
                .absent_up_to_seconds
                .filter(|s| ABSENT_UP_TO_RANGE.contains(s))
                .map(|s| Duration::from_secs(s.unsigned_abs())),
        }
    }

    /// Whether the schedule expects anything (else judging by it is moot).
    pub fn is_empty(&self) -> bool {
        self.windows.is_empty() && self.absent_up_to.is_none()
    }

    /// The occurrences of the windows, as instants, merged where they
    /// overlap or touch, starting on local days `around` ± 8 (every window
    /// recurs at least weekly, so the first that ends after `around`
    /// starts among them).
    fn occurrences(&self, zone: &TimeZone, around: Timestamp) -> Vec<(Timestamp, Timestamp)> {
        let day0 = around.to_zoned(zone.clone()).date();
        let mut out: Vec<(Timestamp, Timestamp)> = Vec::new();
        for offset in -8i64..=8 {
            let Ok(day) = day0.checked_add(offset.days()) else {
                continue;
            };
            let midnight = DateTime::from(day);
            let weekday_minute =
                u32::from(day.weekday().to_monday_zero_offset().unsigned_abs()) * DAY;
            for w in &self.windows {
                let (start, len) = w.start_len();
                let start_of_day = match w {
                    Window::Daily { .. } => start,
                    Window::Weekly { .. } => {
                        if start / DAY * DAY != weekday_minute {
                            continue;
                        }
                        start % DAY
                    }
                };
                let local = |m: u32| {
                    midnight
                        .checked_add(SignedDuration::from_mins(i64::from(m)))
                        .ok()
                        .and_then(|dt| zone.to_ambiguous_timestamp(dt).compatible().ok())
                };
                if let (Some(s), Some(e)) = (local(start_of_day), local(start_of_day + len))
                    && s < e
                {
                    out.push((s, e));
                }
            }
        }
        out.sort();
        let mut merged: Vec<(Timestamp, Timestamp)> = Vec::new();
        for (s, e) in out {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        merged
    }
}

/// What a site's schedule says of its silence at `now`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expectation {
    /// Nothing: the silence is judged as any other.
    AsUsual,
    /// The silence is expected; the site is due back by `back_by` (the
    /// end of its window or longest absence, plus the grace).
    Sleeping {
        /// When it turns late if still silent.
        back_by: Timestamp,
    },
    /// The site was due back by `due` and is still silent.
    LateToWake {
        /// When it was due back.
        due: Timestamp,
    },
}

fn grace(interval: Duration) -> SignedDuration {
    SignedDuration::try_from(interval * GRACE_INTERVALS).unwrap_or(SignedDuration::MAX)
}

fn plus(t: Timestamp, d: SignedDuration) -> Timestamp {
    t.checked_add(d).unwrap_or(Timestamp::MAX)
}

/// What `schedule` says at `now` of a site the hub last heard from at
/// `observed_at` (hub clock), with heartbeat `interval`, and how long
/// until that may change if the site stays silent (None: only a heartbeat
/// or a new schedule changes it). See the module documentation.
pub fn expect(
    schedule: &Schedule,
    observed_at: Timestamp,
    interval: Duration,
    now: Timestamp,
) -> (Expectation, Option<Duration>) {
    let grace = grace(interval);
    let mut verdicts: Vec<(Expectation, Option<Timestamp>)> = Vec::with_capacity(2);
    if let Some(zone) = schedule
        .zone
        .as_ref()
        .filter(|_| !schedule.windows.is_empty())
    {
        let window = schedule
            .occurrences(zone, observed_at)
            .into_iter()
            .find(|(_, end)| *end > observed_at);
        verdicts.push(match window {
            Some((start, _)) if start > now => (Expectation::AsUsual, Some(start)),
            Some((_, end)) => {
                let back_by = plus(end, grace);
                if now < back_by {
                    (Expectation::Sleeping { back_by }, Some(back_by))
                } else {
                    (Expectation::LateToWake { due: back_by }, None)
                }
            }
            None => (Expectation::AsUsual, None),
        });
    }
    if let Some(d) = schedule.absent_up_to {
        let back_by = plus(
            plus(
                observed_at,
                SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX),
            ),
            grace,
        );
        verdicts.push(if now < back_by {
            (Expectation::Sleeping { back_by }, Some(back_by))
        } else {
            (Expectation::LateToWake { due: back_by }, None)
        });
    }
    let sleeping = verdicts
        .iter()
        .filter_map(|(e, _)| match e {
            Expectation::Sleeping { back_by } => Some(*back_by),
            _ => None,
        })
        .max();
    let late = verdicts
        .iter()
        .filter_map(|(e, _)| match e {
            Expectation::LateToWake { due } => Some(*due),
            _ => None,
        })
        .max();
    let expectation = match (sleeping, late) {
        (Some(back_by), _) => Expectation::Sleeping { back_by },
        (None, Some(due)) => Expectation::LateToWake { due },
        (None, None) => Expectation::AsUsual,
    };
    let next = verdicts
        .iter()
        .filter_map(|(_, at)| *at)
        .filter(|at| *at > now)
        .min()
        .map(|at| {
            Duration::try_from(at.duration_since(now)).unwrap_or(Duration::ZERO)
                + crate::fleet::phase::TRANSITION_MARGIN
        });
    (expectation, next)
}

/// The windows a [`compact`] schedule names; the rest are counted (`+2`).
pub const COMPACT_WINDOWS: usize = 2;

/// A schedule in a few words, for a table cell (`kubectl fleet status -o
/// wide`'s SCHEDULE): its windows and time zone (`22:00-06:00
/// Europe/Berlin`; the first [`COMPACT_WINDOWS`] windows named, the others
/// counted: `22:00-06:00,Sat 00:00-Mon 06:00,+1 Europe/Berlin`), and its
/// longest absence (`≤7d`), both when it has both. None when it expects
/// nothing. Printable (control and format characters escaped by
/// `fleet::bounds::printable`); the table escapes and cuts it again.
pub fn compact(c: &Connectivity) -> Option<String> {
    let mut parts = Vec::new();
    if !c.offline.is_empty() {
        let mut windows: Vec<String> = c
            .offline
            .iter()
            .take(COMPACT_WINDOWS)
            .map(|w| crate::fleet::bounds::printable(w).into_owned())
            .collect();
        if c.offline.len() > COMPACT_WINDOWS {
            windows.push(format!("+{}", c.offline.len() - COMPACT_WINDOWS));
        }
        let zone = c
            .time_zone
            .as_deref()
            .map(|z| crate::fleet::bounds::printable(z).into_owned())
            .unwrap_or_default();
        parts.push(
            format!("{} {zone}", windows.join(","))
                .trim_end()
                .to_owned(),
        );
    }
    if let Some(secs) = c.absent_up_to_seconds {
        parts.push(format!(
            "\u{2264}{}",
            format_duration(Duration::from_secs(secs.unsigned_abs()))
        ));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// One line for people: `22:00-06:00 Europe/Berlin, absent up to 1d 12h`.
pub fn describe(c: &Connectivity) -> String {
    let mut parts = Vec::new();
    if !c.offline.is_empty() {
        let windows = c
            .offline
            .iter()
            .map(|w| crate::fleet::bounds::printable(w).into_owned())
            .collect::<Vec<_>>()
            .join(", ");
        let zone = c
            .time_zone
            .as_deref()
            .map(|z| crate::fleet::bounds::printable(z).into_owned())
            .unwrap_or_default();
        parts.push(format!("offline {windows} {zone}").trim_end().to_owned());
    }
    if let Some(secs) = c.absent_up_to_seconds {
        parts.push(format!(
            "absent up to {}",
            format_duration(Duration::from_secs(secs.unsigned_abs()))
        ));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests;
