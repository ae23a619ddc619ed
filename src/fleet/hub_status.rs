//! The hub-owned part of a site's status — phase, phaseTransitionTime and
//! conditions — as the hub should write it, and whether that is a change
//! worth a write. Pure: the hub operator feeds it the object, its in-memory
//! [`HeartbeatObservation`] and the clock, and patches only when
//! [`HubStatus::changed`] says so.
//!
//! Condition messages depend only on stable facts (phase, interval, skew
//! rounded to minutes), never on a growing age, so re-evaluating an
//! unchanged site yields an identical status and no write.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use crate::api::{
    CONDITION_CLOCK_SKEW, CONDITION_CONNECTED, CONDITION_CREDENTIAL_EXPIRING, FederatedCluster,
    Mode, Phase,
};
use crate::fleet::age::human_duration;
use crate::fleet::phase::{
    CONNECTED_INTERVALS, HeartbeatObservation, STALE_INTERVALS, next_transition, phase,
};

/// Default warning period before the edge token expires for
/// `CredentialExpiring` to turn True.
pub const DEFAULT_CREDENTIAL_WARNING: Duration = Duration::from_secs(24 * 3600);

/// What the hub wants the hub-owned status of one site to be.
#[derive(Clone, Debug, PartialEq)]
pub struct HubStatus {
    /// The phase.
    pub phase: Phase,
    /// When the phase last changed: kept from the object unless it changes now.
    pub phase_transition_time: Time,
    /// All hub conditions, sorted by type.
    pub conditions: Vec<Condition>,
    /// Whether this differs from what the object holds (so a write is due).
    pub changed: bool,
    /// When to evaluate again if nothing else happens: the next phase
    /// threshold or the start of the credential warning, whichever is first.
    pub requeue_after: Option<Duration>,
}

fn to_signed(d: Duration) -> SignedDuration {
    SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX)
}

/// Set `new` into `conditions` (by type), keeping the existing
/// `lastTransitionTime` when the status did not change, as Kubernetes
/// conventions require. Returns whether anything changed.
pub fn set_condition(conditions: &mut Vec<Condition>, mut new: Condition) -> bool {
    match conditions.iter_mut().find(|c| c.type_ == new.type_) {
        Some(existing) => {
            if existing.status == new.status {
                new.last_transition_time = existing.last_transition_time.clone();
            }
            let changed = *existing != new;
            *existing = new;
            changed
        }
        None => {
            conditions.push(new);
            true
        }
    }
}

fn condition(
    type_: &str,
    status: bool,
    reason: &str,
    message: String,
    now: Timestamp,
    generation: Option<i64>,
) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: if status { "True" } else { "False" }.to_owned(),
        reason: reason.to_owned(),
        message,
        last_transition_time: Time(now),
        observed_generation: generation,
    }
}

/// The `Connected` condition for `phase` with heartbeat `interval`.
pub fn connected_condition(
    phase: Phase,
    interval: Duration,
    now: Timestamp,
    generation: Option<i64>,
) -> Condition {
    let i = interval.as_secs();
    let message = match phase {
        Phase::Pending => "no heartbeat received yet".to_owned(),
        Phase::Connected => format!(
            "heartbeat observed within {CONNECTED_INTERVALS} intervals ({}s)",
            i * u64::from(CONNECTED_INTERVALS)
        ),
        Phase::Stale => format!(
            "no new heartbeat for more than {CONNECTED_INTERVALS} intervals ({}s)",
            i * u64::from(CONNECTED_INTERVALS)
        ),
        Phase::Unreachable => format!(
            "no new heartbeat for more than {STALE_INTERVALS} intervals ({}s)",
            i * u64::from(STALE_INTERVALS)
        ),
    };
    condition(
        CONDITION_CONNECTED,
        phase == Phase::Connected,
        phase.as_str(),
        message,
        now,
        generation,
    )
}

/// The `ClockSkew` condition: True when the edge clock is off by more than
/// the tolerance. The message rounds the skew to whole minutes so jitter
/// does not cause writes.
pub fn clock_skew_condition(
    skew: Option<SignedDuration>,
    now: Timestamp,
    generation: Option<i64>,
) -> Condition {
    match skew {
        Some(s) => {
            let minutes = (s.as_secs() as f64 / 60.0).round() as i64;
            let direction = if s.is_negative() {
                "behind"
            } else {
                "ahead of"
            };
            let amount = if minutes == 0 {
                "about a minute".to_owned()
            } else {
                human_duration(SignedDuration::from_mins(minutes.abs()))
            };
            condition(
                CONDITION_CLOCK_SKEW,
                true,
                "ClockSkewDetected",
                format!(
                    "edge clock is {amount} {direction} the hub clock; phase is judged on the hub clock"
                ),
                now,
                generation,
            )
        }
        None => condition(
            CONDITION_CLOCK_SKEW,
            false,
            "ClocksAgree",
            "edge and hub clocks agree".to_owned(),
            now,
            generation,
        ),
    }
}

/// The `CredentialExpiring` condition from the edge-reported token expiry,
/// True within `warning` of it (or after). None when not known.
pub fn credential_expiring_condition(
    expiration: Option<Timestamp>,
    warning: Duration,
    now: Timestamp,
    generation: Option<i64>,
) -> Option<Condition> {
    let expiration = expiration?;
    let expired = expiration <= now;
    let expiring = expiration.duration_since(now) <= to_signed(warning);
    let (reason, message) = if expired {
        (
            "TokenExpired",
            format!("hub token expired at {}", Time(expiration).0),
        )
    } else if expiring {
        (
            "TokenExpiringSoon",
            format!("hub token expires at {}", Time(expiration).0),
        )
    } else {
        (
            "TokenValid",
            format!("hub token valid until {}", Time(expiration).0),
        )
    };
    Some(condition(
        CONDITION_CREDENTIAL_EXPIRING,
        expiring,
        reason,
        message,
        now,
        generation,
    ))
}

/// The hub-owned status `site` should have at `now`, given the hub's
/// observation of its heartbeats. Conditions the hub does not compute
/// (e.g. Pull-mode `RemediationCapable`, set by the prober) are kept.
pub fn hub_status(
    site: &FederatedCluster,
    observation: Option<&HeartbeatObservation>,
    credential_warning: Duration,
    now: Timestamp,
) -> HubStatus {
    let interval = site.heartbeat_interval();
    let generation = site.metadata.generation;
    let status = site.status.clone().unwrap_or_default();
    let observed_at = observation.map(|o| o.observed_at);
    let new_phase = phase(observed_at, interval, now);
    let phase_changed = status.phase != Some(new_phase);
    let phase_transition_time = match (&status.phase_transition_time, phase_changed) {
        (Some(t), false) => t.clone(),
        _ => Time(now),
    };

    let mut conditions = status.conditions.clone().unwrap_or_default();
    let mut changed = phase_changed || status.phase_transition_time.is_none();
    changed |= set_condition(
        &mut conditions,
        connected_condition(new_phase, interval, now, generation),
    );
    // Skew is only known once a heartbeat has been observed.
    if let Some(o) = observation {
        changed |= set_condition(
            &mut conditions,
            clock_skew_condition(o.skew(interval), now, generation),
        );
    }
    let expiration = status.credential_expiration_time.as_ref().map(|t| t.0);
    // Only a Push-mode edge holds a hub token.
    if site.spec.mode == Mode::Push
        && let Some(c) =
            credential_expiring_condition(expiration, credential_warning, now, generation)
    {
        changed |= set_condition(&mut conditions, c);
    }
    conditions.sort_by(|a, b| a.type_.cmp(&b.type_));
    if status.conditions.as_ref().is_some_and(|old| {
        let mut old = old.clone();
        old.sort_by(|a, b| a.type_.cmp(&b.type_));
        old != conditions
    }) {
        changed = true;
    }

    let credential_requeue = expiration.and_then(|exp| {
        let warn_at = exp - to_signed(credential_warning);
        Duration::try_from(warn_at.duration_since(now))
            .ok()
            .filter(|d| !d.is_zero())
    });
    let requeue_after = match (
        next_transition(observed_at, interval, now),
        credential_requeue,
    ) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    HubStatus {
        phase: new_phase,
        phase_transition_time,
        conditions,
        changed,
        requeue_after,
    }
}

impl HubStatus {
    /// Write the decision into a status (e.g. to update a cache after a
    /// successful patch).
    pub fn apply_to(&self, status: &mut crate::api::FederatedClusterStatus) {
        status.phase = Some(self.phase);
        status.phase_transition_time = Some(self.phase_transition_time.clone());
        status.conditions = Some(self.conditions.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::fixtures::{ago, fixture_now};

    fn at(secs: i64) -> Timestamp {
        fixture_now() + SignedDuration::from_secs(secs)
    }

    fn obs(reported_ago: i64, observed: Timestamp) -> HeartbeatObservation {
        HeartbeatObservation {
            reported: ago(reported_ago).0,
            observed_at: observed,
        }
    }

    /// Apply a decision to the object, as a successful hub patch would.
    fn written(mut site: FederatedCluster, h: &HubStatus) -> FederatedCluster {
        h.apply_to(site.status.get_or_insert_with(Default::default));
        site
    }

    #[test]
    fn never_heard_is_pending_and_written_once() {
        let site = FederatedCluster::test("a");
        let h = hub_status(&site, None, DEFAULT_CREDENTIAL_WARNING, fixture_now());
        assert_eq!(h.phase, Phase::Pending);
        assert!(h.changed);
        assert_eq!(h.requeue_after, None);
        let site = written(site, &h);
        let again = hub_status(&site, None, DEFAULT_CREDENTIAL_WARNING, at(3600));
        assert!(!again.changed, "no write without a transition");
        assert_eq!(again.phase_transition_time, Time(fixture_now()));
    }

    #[test]
    fn transitions_write_once_each_and_requeue_at_thresholds() {
        let site = FederatedCluster::test("a").heartbeat_ago(0);
        let o = obs(0, fixture_now());
        let h = hub_status(&site, Some(&o), DEFAULT_CREDENTIAL_WARNING, fixture_now());
        assert_eq!(h.phase, Phase::Connected);
        assert!(h.changed);
        let site = written(site, &h);
        let mut now = fixture_now();
        let mut phases = vec![];
        let mut writes = 0;
        let mut site = site;
        while let Some(d) =
            hub_status(&site, Some(&o), DEFAULT_CREDENTIAL_WARNING, now).requeue_after
        {
            now += to_signed(d);
            let h = hub_status(&site, Some(&o), DEFAULT_CREDENTIAL_WARNING, now);
            if h.changed {
                writes += 1;
                site = written(site, &h);
            }
            phases.push(h.phase);
            // Re-evaluating without time passing never writes.
            assert!(!hub_status(&site, Some(&o), DEFAULT_CREDENTIAL_WARNING, now).changed);
        }
        assert_eq!(phases, [Phase::Stale, Phase::Unreachable]);
        assert_eq!(writes, 2);
        let c = site
            .status
            .as_ref()
            .unwrap()
            .condition(CONDITION_CONNECTED)
            .unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("False", "Unreachable")
        );
        assert_eq!(
            c.message,
            "no new heartbeat for more than 10 intervals (300s)"
        );
    }

    #[test]
    fn skew_sets_clock_skew_and_keeps_phase_on_hub_clock() {
        let site = FederatedCluster::test("a").heartbeat_ago(600);
        let o = obs(600, fixture_now());
        let h = hub_status(&site, Some(&o), DEFAULT_CREDENTIAL_WARNING, fixture_now());
        assert_eq!(h.phase, Phase::Connected);
        let skew = h
            .conditions
            .iter()
            .find(|c| c.type_ == CONDITION_CLOCK_SKEW)
            .unwrap();
        assert_eq!(skew.status, "True");
        assert_eq!(
            skew.message,
            "edge clock is 10m behind the hub clock; phase is judged on the hub clock"
        );
        // One second of jitter on the next heartbeat: same message, no write.
        let site = written(site, &h);
        let o2 = HeartbeatObservation {
            reported: at(30 - 601),
            observed_at: at(30),
        };
        assert!(!hub_status(&site, Some(&o2), DEFAULT_CREDENTIAL_WARNING, at(30)).changed);
    }

    #[test]
    fn credential_expiring_condition_and_requeue() {
        let site = FederatedCluster::test("a")
            .heartbeat_ago(0)
            .with_token_expiring_in(2 * 86400);
        let o = obs(0, fixture_now());
        let h = hub_status(&site, Some(&o), DEFAULT_CREDENTIAL_WARNING, fixture_now());
        let c = h
            .conditions
            .iter()
            .find(|c| c.type_ == CONDITION_CREDENTIAL_EXPIRING)
            .unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("False", "TokenValid")
        );
        let site = written(site, &h);
        let h = hub_status(
            &site,
            Some(&HeartbeatObservation {
                reported: at(86400),
                observed_at: at(86400),
            }),
            DEFAULT_CREDENTIAL_WARNING,
            at(86400),
        );
        let c = h
            .conditions
            .iter()
            .find(|c| c.type_ == CONDITION_CREDENTIAL_EXPIRING)
            .unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("True", "TokenExpiringSoon")
        );
        assert!(h.changed);
        let expired = credential_expiring_condition(
            Some(at(-1)),
            DEFAULT_CREDENTIAL_WARNING,
            fixture_now(),
            None,
        )
        .unwrap();
        assert_eq!(
            (expired.status.as_str(), expired.reason.as_str()),
            ("True", "TokenExpired")
        );
        assert!(
            credential_expiring_condition(None, DEFAULT_CREDENTIAL_WARNING, fixture_now(), None)
                .is_none()
        );
        // Far from expiry the next evaluation is the phase threshold.
        let far = FederatedCluster::test("b")
            .heartbeat_ago(0)
            .with_token_expiring_in(30 * 86400);
        let h = hub_status(&far, Some(&o), DEFAULT_CREDENTIAL_WARNING, fixture_now());
        assert_eq!(
            h.requeue_after,
            Some(Duration::from_secs(90) + crate::fleet::phase::TRANSITION_MARGIN)
        );
        // Pending with a token expiring in 2 days: requeue when the warning starts.
        let pending = FederatedCluster::test("c").with_token_expiring_in(2 * 86400);
        let h = hub_status(&pending, None, DEFAULT_CREDENTIAL_WARNING, fixture_now());
        assert_eq!(h.requeue_after, Some(Duration::from_secs(86400)));
    }

    #[test]
    fn set_condition_keeps_transition_time_when_status_is_unchanged() {
        let mut cs = vec![];
        assert!(set_condition(
            &mut cs,
            connected_condition(
                Phase::Connected,
                Duration::from_secs(30),
                fixture_now(),
                Some(1)
            )
        ));
        assert!(!set_condition(
            &mut cs,
            connected_condition(Phase::Connected, Duration::from_secs(30), at(60), Some(1))
        ));
        assert_eq!(cs[0].last_transition_time, Time(fixture_now()));
        assert!(set_condition(
            &mut cs,
            connected_condition(Phase::Stale, Duration::from_secs(30), at(120), Some(1))
        ));
        assert_eq!(cs[0].last_transition_time, Time(at(120)));
        assert_eq!(cs.len(), 1);
    }

    #[test]
    fn foreign_conditions_are_kept() {
        let mut site = FederatedCluster::test("a").pull().heartbeat_ago(0);
        site.status.as_mut().unwrap().conditions = Some(vec![condition(
            crate::api::CONDITION_REMEDIATION_CAPABLE,
            false,
            "ReadOnly",
            "read-only credential".into(),
            fixture_now(),
            None,
        )]);
        let h = hub_status(
            &site,
            Some(&obs(0, fixture_now())),
            DEFAULT_CREDENTIAL_WARNING,
            fixture_now(),
        );
        let types: Vec<_> = h.conditions.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(types, ["ClockSkew", "Connected", "RemediationCapable"]);
    }
}
