//! kubectl's `-v, --v LEVEL` (klog's verbosity) as both binaries take it,
//! and the log detail each level turns on (docs/operations.md#logging-errors-and-exit-codes).
//!
//! kubectl and every Kubernetes component take a number (`-v=4`, `--v=4`,
//! `-v 4`), not a repeated flag; so do `kubectl fleet` and
//! `fleet-operator`. The levels follow klog's conventions: 1–3 the
//! steady-state information, 4–5 debugging, 6 and above trace.

/// The `tracing` level `-v=LEVEL` turns on: `None` at 0 (each binary keeps
/// its own quiet default), `info` for 1–3, `debug` for 4–5 and `trace` from
/// 6 on (everything the libraries log).
pub fn tracing_level(level: u8) -> Option<&'static str> {
    match level {
        0 => None,
        1..=3 => Some("info"),
        4 | 5 => Some("debug"),
        _ => Some("trace"),
    }
}

/// Parses a `-v` level: a non-negative number, as kubectl takes it; levels
/// above 255 mean the same as 255 (everything).
pub fn parse_level(s: &str) -> Result<u8, String> {
    let s = s.trim();
    match s.parse::<u64>() {
        Ok(n) => Ok(u8::try_from(n).unwrap_or(u8::MAX)),
        Err(_) => Err(
            "a log level is a number, as kubectl's -v takes it: e.g. -v=4 \
                       (1-3 info, 4-5 debug, 6 and above trace)"
                .to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_klog_conventions() {
        assert_eq!(tracing_level(0), None);
        assert_eq!(tracing_level(2), Some("info"));
        assert_eq!(tracing_level(4), Some("debug"));
        assert_eq!(tracing_level(5), Some("debug"));
        assert_eq!(tracing_level(6), Some("trace"));
        assert_eq!(tracing_level(10), Some("trace"));
    }

    #[test]
    fn a_level_is_a_number() {
        assert_eq!(parse_level("4"), Ok(4));
        assert_eq!(parse_level("0"), Ok(0));
        assert_eq!(parse_level("1000"), Ok(u8::MAX));
        let err = parse_level("status").unwrap_err();
        assert!(err.contains("-v=4"), "{err}");
        assert!(parse_level("-1").is_err());
        assert!(parse_level("v").is_err());
    }
}
