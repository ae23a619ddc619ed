//! kubectl-like ages (`45s`, `3m`, `5h`, `2d`, `never`), following the
//! rules of kubectl's `duration.HumanDuration` so `kubectl fleet status`
//! reads like `kubectl get`.

use jiff::{SignedDuration, Timestamp};

/// Text shown for something that never happened (e.g. no heartbeat yet).
pub(crate) const NEVER: &str = "never";

/// Format a duration the way kubectl prints AGE columns. Up to one second in
/// the future counts as now (`0s`), tolerating small clock differences; more
/// than that is `<invalid>`, as in kubectl.
pub fn human_duration(d: SignedDuration) -> String {
    let secs = d.as_secs();
    if secs < -1 {
        return "<invalid>".to_owned();
    }
    if secs < 0 {
        return "0s".to_owned();
    }
    if secs < 120 {
        return format!("{secs}s");
    }
    let minutes = secs / 60;
    if minutes < 10 {
        return with_remainder(minutes, "m", secs % 60, "s");
    }
    if minutes < 3 * 60 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        return with_remainder(hours, "h", minutes % 60, "m");
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return with_remainder(days, "d", hours % 24, "h");
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    let years = days / 365;
    if hours < 24 * 365 * 8 {
        return with_remainder(years, "y", days % 365, "d");
    }
    format!("{years}y")
}

fn with_remainder(major: i64, major_unit: &str, minor: i64, minor_unit: &str) -> String {
    if minor == 0 {
        format!("{major}{major_unit}")
    } else {
        format!("{major}{major_unit}{minor}{minor_unit}")
    }
}

/// The age of `then` at `now`, or [`NEVER`] when there is no timestamp.
pub(crate) fn age(then: Option<Timestamp>, now: Timestamp) -> String {
    match then {
        Some(t) => human_duration(now.duration_since(t)),
        None => NEVER.to_owned(),
    }
}

/// Time left until `then` (e.g. token expiry): `29d`, `expired` once past.
pub fn until(then: Timestamp, now: Timestamp) -> String {
    let left = then.duration_since(now);
    if left.is_negative() {
        "expired".to_owned()
    } else {
        human_duration(left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(secs: i64) -> String {
        human_duration(SignedDuration::from_secs(secs))
    }

    #[test]
    fn matches_kubectl_human_duration() {
        let cases: &[(i64, &str)] = &[
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (45, "45s"),
            (119, "119s"),
            (120, "2m"),
            (150, "2m30s"),
            (599, "9m59s"),
            (600, "10m"),
            (3 * 3600 - 1, "179m"),
            (3 * 3600, "3h"),
            (5 * 3600 + 30 * 60, "5h30m"),
            (8 * 3600, "8h"),
            (47 * 3600 + 59 * 60, "47h"),
            (48 * 3600, "2d"),
            (50 * 3600, "2d2h"),
            (7 * 86400 + 23 * 3600, "7d23h"),
            (8 * 86400, "8d"),
            (729 * 86400, "729d"),
            (730 * 86400, "2y"),
            (731 * 86400, "2y1d"),
            (8 * 365 * 86400, "8y"),
            (10 * 365 * 86400 + 86400, "10y"),
        ];
        for (secs, want) in cases {
            assert_eq!(h(*secs), *want, "{secs}s");
        }
    }

    #[test]
    fn sub_second_parts_are_truncated() {
        assert_eq!(human_duration(SignedDuration::from_millis(-999)), "0s");
        assert_eq!(human_duration(SignedDuration::from_millis(59_999)), "59s");
    }

    #[test]
    fn age_and_until() {
        let now: Timestamp = "2026-01-01T12:00:00Z".parse().unwrap();
        assert_eq!(age(None, now), "never");
        assert_eq!(age(Some(now - SignedDuration::from_secs(180)), now), "3m");
        assert_eq!(until(now + SignedDuration::from_hours(24 * 29), now), "29d");
        assert_eq!(until(now - SignedDuration::from_secs(1), now), "expired");
    }
}
