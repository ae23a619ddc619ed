//! What the hub knows of one site's heartbeats: its [`Sighting`].

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use crate::api::{FederatedCluster, Phase, Unreadable};
use crate::fleet::phase::{self, HeartbeatObservation};

/// What the hub knows about one site's heartbeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sighting {
    /// The latest heartbeat value and when the hub first saw it; None when
    /// the site never reported one.
    pub observation: Option<HeartbeatObservation>,
    /// Whether that value arrived while the hub was watching (so
    /// `observed_at` is a real observation and the skew measurable), as
    /// opposed to seeded at hub start or failover. Skew is judged only then.
    pub live: bool,
    /// What the live observation before this one measured of the edge
    /// clock (its heartbeat's time minus when the hub saw it, whole
    /// seconds), kept from the last one seen at least half an interval
    /// before the next: it confirms a reading that says the edge is
    /// behind ([`Sighting::clock_offset`]).
    pub earlier_offset: Option<i32>,
}

/// Whether two `lastHeartbeatTime` values are the same heartbeat: equal
/// to the second, the precision of the wire format. A writer that sent
/// fractional seconds would otherwise see its value truncated by the hub's
/// own status write, which would look like a new heartbeat and reset the
/// site's age (intervals are at least 10 s, so two heartbeats never share
/// a second).
pub fn same_heartbeat(a: Timestamp, b: Timestamp) -> bool {
    a.as_second() == b.as_second()
}

impl Sighting {
    /// Fold the heartbeat a site currently reports into the hub's previous
    /// sighting of it (None: first sight since this process started).
    ///
    /// - First sight: no memory of when the heartbeat arrived, so it is
    ///   seeded from the persisted phase ([`HeartbeatObservation::seed`]),
    ///   not live.
    /// - A new value, or the first heartbeat of a site already watched:
    ///   observed now, live.
    /// - The same value: the previous sighting unchanged, so the age keeps
    ///   growing on the hub clock however the edge clock runs.
    /// - No heartbeat (any more): never heard from, live.
    ///
    /// A new value carries what the previous live one measured of the edge
    /// clock when that was seen at least half of `interval` before `now`
    /// (else what the previous one carried): heartbeats delivered together
    /// (a watch resuming after a gap hands over every renewal made in it)
    /// do not confirm one another.
    pub fn fold(
        previous: Option<&Sighting>,
        reported: Option<Timestamp>,
        persisted_phase: Option<Phase>,
        interval: Duration,
        now: Timestamp,
    ) -> Sighting {
        let Some(prev) = previous else {
            return Sighting {
                observation: HeartbeatObservation::observe(None, reported, persisted_phase, now),
                live: false,
                earlier_offset: None,
            };
        };
        match (prev.observation, reported) {
            (Some(obs), Some(reported)) if same_heartbeat(obs.reported, reported) => *prev,
            (_, reported) => {
                let apart = prev.observation.is_some_and(|o| {
                    now.duration_since(o.observed_at)
                        >= SignedDuration::try_from(interval / 2).unwrap_or(SignedDuration::MAX)
                });
                Sighting {
                    observation: reported.map(|reported| HeartbeatObservation {
                        reported,
                        observed_at: now,
                    }),
                    live: true,
                    earlier_offset: match prev.raw_offset() {
                        Some(offset) if apart => Some(offset),
                        _ => prev.earlier_offset,
                    },
                }
            }
        }
    }

    /// What this observation alone measures of the edge clock, if live:
    /// its heartbeat's time minus when the hub saw it, whole seconds.
    fn raw_offset(&self) -> Option<i32> {
        let obs = self.observation.filter(|_| self.live)?;
        let secs = obs.reported.duration_since(obs.observed_at).as_secs();
        Some(i32::try_from(secs).unwrap_or(if secs < 0 { i32::MIN } else { i32::MAX }))
    }

    /// The edge clock's offset from the hub clock (edge minus hub) this
    /// sighting measures with heartbeat `interval`: None when it measures
    /// nothing (not live, or an edge behind that no earlier reading
    /// confirms), else the offset when beyond [`phase::skew_tolerance`]
    /// (`Some(None)`: within it).
    ///
    /// A heartbeat delivered late makes its edge look behind by the delay,
    /// never ahead: a watch that resumes after a gap hands over renewals
    /// made minutes ago, a list of 100,000 leases may take longer than the
    /// tolerance. So a reading of an edge ahead, or within tolerance, is
    /// taken as it is, and one of an edge behind only with the earlier
    /// reading seen at least half an interval before it, the less behind
    /// of the two (the smallest delay is the truest, as NTP filters its
    /// samples). An edge whose clock falls behind is told one heartbeat
    /// later; a late delivery never makes an honest edge look skewed.
    pub fn clock_offset(&self, interval: Duration) -> Option<Option<SignedDuration>> {
        let raw = SignedDuration::from_secs(self.raw_offset()?.into());
        let offset = match phase::clock_skew(raw, interval) {
            Some(behind) if behind.is_negative() => {
                behind.max(SignedDuration::from_secs(self.earlier_offset?.into()))
            }
            _ => raw,
        };
        Some(phase::clock_skew(offset, interval))
    }
}

impl Sighting {
    /// The sighting as a replica that became leader at `leader_since` may
    /// judge it. A heartbeat of a site last judged `Connected` is not held
    /// against it from before the takeover: what a standby observed may be
    /// behind (its watch can still be reconnecting after an API outage that
    /// also kept the edges from reporting), so the new leader gives it the
    /// same benefit of the doubt as a freshly started hub
    /// ([`HeartbeatObservation::seed`]) and counts its age from the takeover.
    /// Such a sighting is not live (skew is not judged from it). Sightings
    /// newer than the takeover, or of sites not `Connected`, are unchanged,
    /// so only a promotion, never a demotion, can come from this.
    pub fn since_takeover(
        self,
        leader_since: Option<Timestamp>,
        persisted_phase: Option<Phase>,
    ) -> Sighting {
        match (self.observation, leader_since) {
            (Some(obs), Some(since))
                if persisted_phase == Some(Phase::Connected) && obs.observed_at < since =>
            {
                Sighting {
                    observation: Some(HeartbeatObservation {
                        reported: obs.reported,
                        observed_at: since,
                    }),
                    live: false,
                    earlier_offset: self.earlier_offset,
                }
            }
            _ => self,
        }
    }
}

/// Stands for a `lastHeartbeatTime` the hub could not read in a sighting
/// seeded without one ([`Sighting::of_site`]): no readable heartbeat
/// equals it (the CRD admits the years 0000–9998 only), so the first one
/// the site writes afterwards counts as new.
pub(crate) const UNREADABLE_HEARTBEAT: Timestamp = Timestamp::MIN;

impl Sighting {
    /// Folds `site`'s current heartbeat into the hub's previous sighting of
    /// it ([`Sighting::fold`]), `interval` being the effective heartbeat
    /// interval. A heartbeat the hub could not read is never a new one:
    /// the previous sighting stands, so the site ages on the hub clock as a
    /// silent one does; with no previous sighting (hub start, failover) it
    /// is seeded as any heartbeat the hub has not seen move, from what the
    /// hub last judged: observed now if that was `Connected` (as
    /// [`HeartbeatObservation::seed`] does), else just old enough for the
    /// persisted phase at its `phaseTransitionTime` (never heard from if
    /// `Pending` or never judged).
    pub fn of_site(
        previous: Option<&Sighting>,
        site: &FederatedCluster,
        interval: Duration,
        now: Timestamp,
    ) -> Sighting {
        let status = site.status.as_ref();
        let persisted = status.and_then(|s| s.phase);
        if !status
            .and_then(|s| s.unreadable())
            .is_some_and(Unreadable::heartbeat)
        {
            let reported = status
                .and_then(|s| s.last_heartbeat_time.as_ref())
                .map(|t| t.0);
            return Sighting::fold(previous, reported, persisted, interval, now);
        }
        if let Some(prev) = previous {
            return *prev;
        }
        let since = status
            .and_then(|s| s.phase_transition_time.as_ref())
            .map_or(now, |t| t.0.min(now));
        let older_than = |intervals: u32| {
            let age = SignedDuration::try_from(interval * intervals + phase::TRANSITION_MARGIN)
                .unwrap_or(SignedDuration::MAX);
            since.checked_sub(age).unwrap_or(Timestamp::MIN)
        };
        let observed_at = match persisted {
            Some(Phase::Connected) => Some(now),
            Some(Phase::Stale | Phase::Sleeping) => Some(older_than(phase::CONNECTED_INTERVALS)),
            Some(Phase::Unreachable) => Some(older_than(phase::STALE_INTERVALS)),
            Some(Phase::Pending) | None => None,
        };
        Sighting {
            observation: observed_at.map(|observed_at| HeartbeatObservation {
                reported: UNREADABLE_HEARTBEAT,
                observed_at,
            }),
            live: false,
            earlier_offset: None,
        }
    }
}
