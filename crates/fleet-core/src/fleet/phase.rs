//! Phase from heartbeat staleness, judged on the hub's clock (docs/architecture.md#who-writes-which-status-key).
//!
//! With `I = heartbeatIntervalSeconds` and `age` the time since the hub
//! *observed* the latest new heartbeat: `Pending` if never heard from,
//! `Connected` if `age ≤ 3·I`, `Stale` if `age ≤ 10·I`, else `Unreachable`.
//!
//! The edge's reported `lastHeartbeatTime` is only used to notice that a new
//! heartbeat arrived (its value changed); how old it is comes from the hub's
//! clock via [`HeartbeatObservation`]. So an edge clock minutes off can
//! neither keep a dead site Connected nor make a live one Stale; the skew is
//! reported separately ([`clock_skew`]).

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use crate::api::Phase;

/// Connected while the heartbeat age is at most this many intervals.
pub(crate) const CONNECTED_INTERVALS: u32 = 3;
/// Stale while the heartbeat age is at most this many intervals; Unreachable after.
pub(crate) const STALE_INTERVALS: u32 = 10;

/// How far past a threshold [`next_transition`] points, so that a requeue at
/// exactly that delay sees the new phase even with coarse timers.
pub(crate) const TRANSITION_MARGIN: Duration = Duration::from_millis(1);

/// Time since `observed_at` on the hub clock; an observation in the future
/// counts as age zero.
pub(crate) fn heartbeat_age(observed_at: Timestamp, now: Timestamp) -> Duration {
    now.duration_since(observed_at)
        .try_into()
        .unwrap_or(Duration::ZERO)
}

/// The phase of a site whose latest new heartbeat the hub observed at
/// `observed_at` (None: never heard from), for heartbeat `interval`, at `now`.
pub(crate) fn phase(observed_at: Option<Timestamp>, interval: Duration, now: Timestamp) -> Phase {
    let Some(observed_at) = observed_at else {
        return Phase::Pending;
    };
    let age = heartbeat_age(observed_at, now);
    if age <= interval * CONNECTED_INTERVALS {
        Phase::Connected
    } else if age <= interval * STALE_INTERVALS {
        Phase::Stale
    } else {
        Phase::Unreachable
    }
}

/// How long until the phase computed by [`phase`] changes if no new
/// heartbeat arrives: the hub requeues after this instead of polling. None
/// when only a new heartbeat can change the phase (Pending, Unreachable).
pub(crate) fn next_transition(
    observed_at: Option<Timestamp>,
    interval: Duration,
    now: Timestamp,
) -> Option<Duration> {
    let age = heartbeat_age(observed_at?, now);
    [CONNECTED_INTERVALS, STALE_INTERVALS]
        .into_iter()
        .map(|n| interval * n)
        .find(|threshold| age <= *threshold)
        .map(|threshold| threshold - age + TRANSITION_MARGIN)
}

/// What the hub remembers about a site's heartbeats: the latest reported
/// `lastHeartbeatTime` and when the hub (its own clock) first saw that value.
///
/// The hub keeps this in memory, not in the object, so that recording an
/// observation never costs an API write (the hub writes only on a phase
/// transition).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeartbeatObservation {
    /// The edge-reported `status.lastHeartbeatTime` (edge clock).
    pub reported: Timestamp,
    /// When the hub first saw this `reported` value (hub clock).
    pub observed_at: Timestamp,
}

impl HeartbeatObservation {
    /// Fold the currently reported heartbeat into the previous observation.
    ///
    /// - No heartbeat reported: None (the site is Pending).
    /// - Same value as before: the previous observation, unchanged, so the
    ///   age keeps growing on the hub clock however the edge clock runs.
    /// - A new value: observed now.
    /// - No previous observation (hub start, leader failover): see [`Self::seed`].
    pub(crate) fn observe(
        previous: Option<&HeartbeatObservation>,
        reported: Option<Timestamp>,
        persisted_phase: Option<Phase>,
        now: Timestamp,
    ) -> Option<HeartbeatObservation> {
        let reported = reported?;
        match previous {
            Some(prev) if prev.reported == reported => Some(*prev),
            Some(_) => Some(HeartbeatObservation {
                reported,
                observed_at: now,
            }),
            None => Some(Self::seed(reported, persisted_phase, now)),
        }
    }

    /// The first observation of a heartbeat the hub has no memory of (it
    /// just started or took over leadership).
    ///
    /// If the last hub judgement (the persisted phase) was Connected the
    /// site gets the benefit of the doubt: observed now, so it stays
    /// Connected for up to 3·I and goes Stale if no new heartbeat arrives,
    /// and a live site with a skewed clock never flaps. Otherwise the
    /// reported time is the only evidence, capped at `now` so an edge clock
    /// running ahead cannot make an old heartbeat look fresh for longer
    /// than one hub judgement.
    pub(crate) fn seed(
        reported: Timestamp,
        persisted_phase: Option<Phase>,
        now: Timestamp,
    ) -> HeartbeatObservation {
        let observed_at = if persisted_phase == Some(Phase::Connected) {
            now
        } else {
            reported.min(now)
        };
        HeartbeatObservation {
            reported,
            observed_at,
        }
    }
}

/// Largest difference between an edge's reported heartbeat time and the
/// hub's observation of it that is not reported as skew: max(60 s, I).
/// Report latency is bounded by one interval, and the wire format has
/// second precision.
pub(crate) fn skew_tolerance(interval: Duration) -> Duration {
    interval.max(Duration::from_secs(60))
}

/// The edge clock's `offset` from the hub clock (positive: edge ahead)
/// when its magnitude exceeds [`skew_tolerance`], else None.
pub(crate) fn clock_skew(offset: SignedDuration, interval: Duration) -> Option<SignedDuration> {
    let tolerance = SignedDuration::try_from(skew_tolerance(interval)).ok()?;
    (offset.abs() > tolerance).then_some(offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    const I: Duration = Duration::from_secs(30);

    fn t0() -> Timestamp {
        "2026-01-01T12:00:00Z".parse().unwrap()
    }

    fn at(secs: i64) -> Timestamp {
        t0() + SignedDuration::from_secs(secs)
    }

    fn ns(n: i64) -> SignedDuration {
        SignedDuration::from_nanos(n)
    }

    #[test]
    fn never_heard_is_pending() {
        assert_eq!(phase(None, I, t0()), Phase::Pending);
        assert_eq!(next_transition(None, I, t0()), None);
    }

    #[test]
    fn every_boundary() {
        let seen = t0();
        assert_eq!(phase(Some(seen), I, at(0)), Phase::Connected);
        assert_eq!(phase(Some(seen), I, at(89)), Phase::Connected);
        assert_eq!(
            phase(Some(seen), I, at(90)),
            Phase::Connected,
            "exactly 3·I"
        );
        assert_eq!(phase(Some(seen), I, at(90) + ns(1)), Phase::Stale);
        assert_eq!(phase(Some(seen), I, at(300)), Phase::Stale, "exactly 10·I");
        assert_eq!(phase(Some(seen), I, at(300) + ns(1)), Phase::Unreachable);
        assert_eq!(phase(Some(seen), I, at(86_400)), Phase::Unreachable);
    }

    #[test]
    fn thresholds_scale_with_interval() {
        let i = Duration::from_secs(3600);
        assert_eq!(phase(Some(t0()), i, at(3 * 3600)), Phase::Connected);
        assert_eq!(phase(Some(t0()), i, at(3 * 3600 + 1)), Phase::Stale);
        assert_eq!(phase(Some(t0()), i, at(10 * 3600 + 1)), Phase::Unreachable);
        let i = Duration::from_secs(10);
        assert_eq!(phase(Some(t0()), i, at(31)), Phase::Stale);
    }

    #[test]
    fn future_dated_observation_counts_as_age_zero() {
        assert_eq!(heartbeat_age(at(600), t0()), Duration::ZERO);
        assert_eq!(phase(Some(at(600)), I, t0()), Phase::Connected);
        assert_eq!(
            next_transition(Some(at(600)), I, t0()),
            Some(Duration::from_secs(90) + TRANSITION_MARGIN)
        );
    }

    #[test]
    fn next_transition_points_just_past_each_threshold() {
        let seen = Some(t0());
        assert_eq!(
            next_transition(seen, I, at(0)),
            Some(Duration::from_secs(90) + TRANSITION_MARGIN)
        );
        assert_eq!(
            next_transition(seen, I, at(60)),
            Some(Duration::from_secs(30) + TRANSITION_MARGIN)
        );
        assert_eq!(next_transition(seen, I, at(90)), Some(TRANSITION_MARGIN));
        assert_eq!(
            next_transition(seen, I, at(91)),
            Some(Duration::from_secs(209) + TRANSITION_MARGIN)
        );
        assert_eq!(next_transition(seen, I, at(300)), Some(TRANSITION_MARGIN));
        assert_eq!(next_transition(seen, I, at(301)), None);
    }

    #[test]
    fn requeue_at_next_transition_sees_the_new_phase() {
        let seen = Some(t0());
        let mut now = at(0);
        let mut phases = vec![phase(seen, I, now)];
        while let Some(d) = next_transition(seen, I, now) {
            now += SignedDuration::try_from(d).unwrap();
            phases.push(phase(seen, I, now));
        }
        assert_eq!(phases, [Phase::Connected, Phase::Stale, Phase::Unreachable]);
    }

    #[test]
    fn observation_ages_on_the_hub_clock_only() {
        // The edge clock is 10 minutes behind: its reports look 10 minutes old.
        let skew = SignedDuration::from_mins(10);
        let hb1 = t0() - skew;
        let first = HeartbeatObservation {
            reported: hb1,
            observed_at: t0(),
        };
        // Same value seen again later: the observation does not move.
        let same =
            HeartbeatObservation::observe(Some(&first), Some(hb1), Some(Phase::Connected), at(60));
        assert_eq!(same, Some(first));
        assert_eq!(phase(Some(first.observed_at), I, at(60)), Phase::Connected);
        // A new heartbeat is observed at the hub's now, whatever it says.
        let hb2 = at(30) - skew;
        let second =
            HeartbeatObservation::observe(Some(&first), Some(hb2), Some(Phase::Connected), at(31))
                .unwrap();
        assert_eq!(second.observed_at, at(31));
        assert_eq!(
            phase(Some(second.observed_at), I, at(100)),
            Phase::Connected
        );
        // A dead edge with a clock far ahead: no new value, so it goes stale.
        let ahead = HeartbeatObservation {
            reported: at(3600),
            observed_at: t0(),
        };
        let later = HeartbeatObservation::observe(
            Some(&ahead),
            Some(at(3600)),
            Some(Phase::Connected),
            at(91),
        )
        .unwrap();
        assert_eq!(phase(Some(later.observed_at), I, at(91)), Phase::Stale);
    }

    #[test]
    fn no_heartbeat_means_no_observation() {
        assert_eq!(HeartbeatObservation::observe(None, None, None, t0()), None);
    }

    #[test]
    fn hub_restart_seeds_from_persisted_phase() {
        // Previously Connected: benefit of the doubt, even with a clock 10 min behind.
        let behind = t0() - SignedDuration::from_mins(10);
        let s = HeartbeatObservation::observe(None, Some(behind), Some(Phase::Connected), t0())
            .unwrap();
        assert_eq!(s.observed_at, t0());
        assert_eq!(phase(Some(s.observed_at), I, at(90)), Phase::Connected);
        assert_eq!(phase(Some(s.observed_at), I, at(91)), Phase::Stale);
        // Previously Unreachable and the heartbeat is old: stays Unreachable.
        let s = HeartbeatObservation::seed(behind, Some(Phase::Unreachable), t0());
        assert_eq!(phase(Some(s.observed_at), I, t0()), Phase::Unreachable);
        // Previously Stale with an edge clock ahead: capped at now, never fresher.
        let s = HeartbeatObservation::seed(at(3600), Some(Phase::Stale), t0());
        assert_eq!(s.observed_at, t0());
        // Pending then a first heartbeat seen at hub start.
        let s = HeartbeatObservation::seed(at(-5), Some(Phase::Pending), t0());
        assert_eq!(phase(Some(s.observed_at), I, t0()), Phase::Connected);
    }

    #[test]
    fn clock_skew_beyond_tolerance() {
        assert_eq!(skew_tolerance(I), Duration::from_secs(60));
        assert_eq!(
            skew_tolerance(Duration::from_secs(600)),
            Duration::from_secs(600)
        );
        let secs = SignedDuration::from_secs;
        assert_eq!(clock_skew(secs(60), I), None, "exactly the tolerance");
        assert_eq!(clock_skew(secs(-60), I), None);
        assert_eq!(clock_skew(secs(61), I), Some(secs(61)));
        assert_eq!(clock_skew(secs(-600), I), Some(secs(-600)));
        assert_eq!(clock_skew(secs(-600), Duration::from_secs(3600)), None);
    }
}
