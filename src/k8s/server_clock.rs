//! The API server's clock as a reader sees it: the `Date` header of one of
//! its answers, against the reader's own clock when the answer arrived.
//!
//! Views judge ages — is a hub judging, how old is a heartbeat — against
//! times the hub stamped on its own clock, which runs with the API
//! server's. A workstation whose clock is 45 s fast would otherwise call a
//! live hub silent and its sites `Stale?`. So the views read "now" from a
//! [`ServerClock`] taken from the answer that brought the hub's liveness
//! record (docs/operations.md#is-a-hub-judging).

use jiff::{SignedDuration, Timestamp};

/// Differences this small are left alone: the `Date` header has whole
/// seconds, and a reader within them of the server needs no correction
/// (ages then do not jitter by a second between runs).
const NEGLIGIBLE: SignedDuration = SignedDuration::from_secs(1);

/// The API server's clock: the reader's, shifted by what an answer's
/// `Date` said.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerClock {
    /// Server clock minus reader clock.
    offset: SignedDuration,
}

impl ServerClock {
    /// The reader's own clock (no answer said otherwise).
    pub fn local() -> Self {
        Self::default()
    }

    /// The clock an answer dated `date` (a `Date` header, whole seconds)
    /// that arrived at `received` on the reader's clock implies. The
    /// server's time then lay within the second `date` names: its middle
    /// is taken.
    pub fn from_date(date: Timestamp, received: Timestamp) -> Self {
        let server = date + SignedDuration::from_millis(500);
        let offset = server.duration_since(received);
        if offset.abs() <= NEGLIGIBLE {
            return Self::local();
        }
        Self {
            offset: SignedDuration::from_secs(offset.as_secs()),
        }
    }

    /// The clock of an answer's `Date` header value (RFC 9110), received
    /// now; the reader's own when it has none or it does not parse.
    pub fn from_header(date: Option<&http::HeaderValue>) -> Self {
        let received = Timestamp::now();
        date.and_then(|d| d.to_str().ok())
            .and_then(|d| {
                jiff::fmt::rfc2822::DateTimeParser::new()
                    .parse_timestamp(d)
                    .ok()
            })
            .map_or_else(Self::local, |date| Self::from_date(date, received))
    }

    /// How far the server's clock is ahead of the reader's (negative:
    /// behind), in whole seconds; zero within a second.
    pub fn offset(&self) -> SignedDuration {
        self.offset
    }

    /// The time now on the server's clock.
    pub fn now(&self) -> Timestamp {
        let now = Timestamp::now();
        now.checked_add(self.offset).unwrap_or(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fast_reader_reads_the_servers_time() {
        let received: Timestamp = "2026-01-01T12:00:45.2Z".parse().unwrap();
        let date: Timestamp = "2026-01-01T12:00:00Z".parse().unwrap();
        let clock = ServerClock::from_date(date, received);
        assert_eq!(clock.offset(), SignedDuration::from_secs(-44));
        // Within the second of the header: no correction.
        let date: Timestamp = "2026-01-01T12:00:45Z".parse().unwrap();
        assert_eq!(ServerClock::from_date(date, received), ServerClock::local());
        // The header as servers send it.
        let header = http::HeaderValue::from_static("Thu, 01 Jan 1970 00:00:01 GMT");
        let clock = ServerClock::from_header(Some(&header));
        assert!(clock.offset() < SignedDuration::from_hours(-24 * 365 * 50));
        assert_eq!(ServerClock::from_header(None), ServerClock::local());
        let garbage = http::HeaderValue::from_static("yesterday");
        assert_eq!(
            ServerClock::from_header(Some(&garbage)),
            ServerClock::local()
        );
    }
}
