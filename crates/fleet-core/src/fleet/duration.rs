//! Durations as users type them in flags (`30d`, `1h30m`, `90s`, `-10m`, or
//! a bare number of seconds), and back. The one parser behind every
//! duration flag of `kubectl fleet` and `fleet-operator`.

use std::time::Duration;

use jiff::{SignedDuration, Span, SpanRelativeTo};

/// Parses a signed duration: `15s`, `10m`, `-10m`, `7d`, `2w`, `1h30m`,
/// ISO 8601 (`PT15S`), or a bare number of seconds. Days are 24 hours and
/// weeks 7 days, as flags mean them.
pub fn parse_signed_duration(s: &str) -> Result<SignedDuration, String> {
    let s = s.trim();
    if let Ok(secs) = s.parse::<i64>() {
        return Ok(SignedDuration::from_secs(secs));
    }
    if let Ok(d) = s.parse::<SignedDuration>() {
        return Ok(d);
    }
    let span: Span = s.parse().map_err(|_| {
        // A number and one unit that still fails is out of range.
        let unit = s.trim_start_matches(|c: char| c.is_ascii_digit());
        if unit.len() < s.len() && ["w", "d", "h", "m", "s"].contains(&unit) {
            format!("{s:?} is too long")
        } else {
            format!("{s:?} is not a duration (use e.g. 30d, 12h, 90m, 3600s)")
        }
    })?;
    span.to_duration(SpanRelativeTo::days_are_24_hours())
        .map_err(|_| format!("{s:?} is not a fixed duration (use d, h, m, s)"))
}

/// Parses a duration that must not be negative (see [`parse_signed_duration`]).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let d = parse_signed_duration(s)?;
    Duration::try_from(d).map_err(|_| format!("{:?} is negative", s.trim()))
}

/// Formats a duration the short way users type it (`30d`, `1h`, `1h30m`).
pub fn format_duration(d: Duration) -> String {
    let mut secs = d.as_secs();
    if secs == 0 {
        return "0s".into();
    }
    let mut out = String::new();
    for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)] {
        if secs >= size {
            out.push_str(&format!("{}{unit}", secs / size));
            secs %= size;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_as_flags_mean_them() {
        assert_eq!(parse_duration("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5_400)));
        assert_eq!(parse_duration("3600s"), Ok(Duration::from_secs(3_600)));
        assert_eq!(parse_duration("3600"), Ok(Duration::from_secs(3_600)));
        assert_eq!(parse_duration("2w"), Ok(Duration::from_secs(14 * 86_400)));
        assert_eq!(parse_duration("15s"), Ok(Duration::from_secs(15)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(
            parse_signed_duration("-10m"),
            Ok(SignedDuration::from_mins(-10))
        );
        assert!(parse_duration("-1s").unwrap_err().contains("negative"));
        assert!(parse_duration("soon").unwrap_err().contains("e.g. 30d"));
        assert!(
            parse_duration("999999999d")
                .unwrap_err()
                .contains("too long")
        );
    }

    #[test]
    fn durations_format_the_short_way() {
        assert_eq!(format_duration(Duration::from_secs(30 * 86_400)), "30d");
        assert_eq!(format_duration(Duration::from_secs(5_400)), "1h30m");
        assert_eq!(format_duration(Duration::from_secs(59)), "59s");
        assert_eq!(format_duration(Duration::ZERO), "0s");
        for s in ["30d", "1h30m", "59s", "2d3h4m5s"] {
            assert_eq!(format_duration(parse_duration(s).unwrap()), s);
        }
    }
}
