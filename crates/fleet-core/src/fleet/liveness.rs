//! Whether a hub is judging the fleet, from the leader's own record in the
//! `FederationStatus` singleton ([`HubLiveness`], docs/operations.md#is-a-hub-judging).
//!
//! The hub leader rewrites `status.hub.lastJudgementTime` every
//! `intervalSeconds` while it judges every site it knows on a live watch.
//! A reader compares that time with its own clock: within
//! [`SILENT_INTERVALS`] intervals the fleet is being judged; older, nobody
//! has judged it since; absent, no hub ever has. Pure: the caller passes
//! the record and `now`.

use std::time::Duration;

use jiff::Timestamp;

use crate::api::HubLiveness;

/// How often the hub leader records that it judges (before the test-only
/// interval scale): a fixed cadence, so the write rate does not grow with
/// the fleet.
pub const LIVENESS_INTERVAL: Duration = Duration::from_secs(15);

/// A record older than this many of its intervals means no hub is judging.
/// Three, so one late or failed write is not a warning.
pub(crate) const SILENT_INTERVALS: u32 = 3;

/// What a reader can tell about the hub's judging.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HubState {
    /// The leader recorded a full judgement within its threshold.
    Judging,
    /// A hub judged the fleet once, but not within the threshold.
    Silent,
    /// No hub has ever recorded a judgement.
    NeverJudged,
    /// The record could not be read, so the reader cannot tell.
    Unknown,
}

impl HubState {
    /// The name used in reports (`summary.hub.state`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            HubState::Judging => "Judging",
            HubState::Silent => "Silent",
            HubState::NeverJudged => "NeverJudged",
            HubState::Unknown => "Unknown",
        }
    }
}

/// The reader's verdict on the hub, with the record it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct HubVerdict {
    /// Judging, silent, never judged or unknown.
    pub state: HubState,
    /// The record as read (None: none, or it could not be read).
    pub record: Option<HubLiveness>,
    /// Time since the last judgement at the reader's `now` (zero when the
    /// record is dated in the reader's future).
    pub since_judgement: Option<Duration>,
    /// Age of the record past which the hub counts as silent.
    pub silent_after: Option<Duration>,
}

/// The threshold of a record: [`SILENT_INTERVALS`] of its interval.
pub(crate) fn silent_after(record: &HubLiveness) -> Duration {
    let interval = Duration::from_secs(record.interval_seconds.max(1).unsigned_abs());
    interval * SILENT_INTERVALS
}

/// The verdict on `record` (None: there is none) at `now`.
pub fn hub_verdict(record: Option<&HubLiveness>, now: Timestamp) -> HubVerdict {
    let Some(record) = record else {
        return HubVerdict {
            state: HubState::NeverJudged,
            record: None,
            since_judgement: None,
            silent_after: None,
        };
    };
    let since = Duration::try_from(now.duration_since(record.last_judgement_time.0))
        .unwrap_or(Duration::ZERO);
    let threshold = silent_after(record);
    HubVerdict {
        state: if since <= threshold {
            HubState::Judging
        } else {
            HubState::Silent
        },
        record: Some(record.clone()),
        since_judgement: Some(since),
        silent_after: Some(threshold),
    }
}

impl HubVerdict {
    /// The verdict when the record could not be read.
    pub fn unknown() -> Self {
        HubVerdict {
            state: HubState::Unknown,
            record: None,
            since_judgement: None,
            silent_after: None,
        }
    }

    /// Whether a hub is judging: None when the reader cannot tell.
    pub fn judging(&self) -> Option<bool> {
        match self.state {
            HubState::Judging => Some(true),
            HubState::Silent | HubState::NeverJudged => Some(false),
            HubState::Unknown => None,
        }
    }

    #[cfg(test)]
    /// When the recorded judgement happened (hub clock).
    pub(crate) fn last_judgement_time(&self) -> Option<Timestamp> {
        self.record.as_ref().map(|r| r.last_judgement_time.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::fixtures::{ago, fixture_now};

    fn record(judged_ago: i64, interval: i64) -> HubLiveness {
        HubLiveness {
            leader: "hub-a".into(),
            leader_since: Some(ago(3600)),
            last_judgement_time: ago(judged_ago),
            interval_seconds: interval,
        }
    }

    #[test]
    fn judging_until_three_intervals_then_silent() {
        let now = fixture_now();
        let v = hub_verdict(Some(&record(45, 15)), now);
        assert_eq!(v.state, HubState::Judging, "exactly 3 intervals");
        assert_eq!(v.judging(), Some(true));
        assert_eq!(v.silent_after, Some(Duration::from_secs(45)));
        let v = hub_verdict(Some(&record(46, 15)), now);
        assert_eq!(v.state, HubState::Silent);
        assert_eq!(v.judging(), Some(false));
        assert_eq!(v.since_judgement, Some(Duration::from_secs(46)));
        assert_eq!(v.last_judgement_time(), Some(ago(46).0));
        // The record's own cadence sets the threshold.
        assert_eq!(
            hub_verdict(Some(&record(46, 2)), now).silent_after,
            Some(Duration::from_secs(6))
        );
    }

    #[test]
    fn never_unknown_and_a_record_from_the_readers_future() {
        let now = fixture_now();
        let never = hub_verdict(None, now);
        assert_eq!(never.state, HubState::NeverJudged);
        assert_eq!(never.judging(), Some(false));
        assert_eq!(HubVerdict::unknown().judging(), None);
        // A reader whose clock is behind the hub's: judging, age zero.
        let ahead = hub_verdict(Some(&record(-30, 15)), now);
        assert_eq!(ahead.state, HubState::Judging);
        assert_eq!(ahead.since_judgement, Some(Duration::ZERO));
        // A nonsensical interval counts as one second.
        assert_eq!(
            silent_after(&record(0, 0)),
            Duration::from_secs(u64::from(SILENT_INTERVALS))
        );
    }
}
