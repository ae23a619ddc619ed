//! The hub-owned status of a Push site: phase, `Connected`,
//! `CredentialExpiring`, `ClockSkew` and `clockOffsetSeconds`.

use std::borrow::Cow;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use super::conditions::*;
use super::credential::*;
use super::sighting::*;
use crate::api::{CONDITION_CLOCK_SKEW, CONDITION_CREDENTIAL_EXPIRING, FederatedCluster, Mode};
use crate::fleet::phase;

/// `ClockSkew` from a live observation. The message states no amount or
/// direction: a message is rewritten only when the condition's status or
/// reason changes, so a drifting clock would leave any stated amount stale.
/// The amount is in `clockOffsetSeconds`, which is rewritten whenever it
/// moves by more than the tolerance.
pub(super) fn skew_state(skewed: bool, interval: Duration) -> CondState<impl FnOnce() -> String> {
    let (status, reason) = if skewed {
        ("True", "ClockSkewDetected")
    } else {
        ("False", "WithinTolerance")
    };
    CondState::new(status, reason, move || {
        let tolerance = human(phase::skew_tolerance(interval));
        if skewed {
            format!(
                "the edge clock differs from the hub clock by more than {tolerance}: status.clockOffsetSeconds holds the offset (edge minus hub); phase and heartbeat ages are judged on the hub clock"
            )
        } else {
            format!("the edge clock is within {tolerance} of the hub clock")
        }
    })
}

/// What `clockOffsetSeconds` should hold, and whether it alone warrants a
/// write. `measured` is None when the sighting is not live (nothing to
/// measure: the object's value is kept), else the measurement.
///
/// The offset is written whenever the hub writes anyway, and on its own
/// only when it moved by more than the skew tolerance from what the object
/// holds (absent counting as 0). Report latency and second precision make
/// every heartbeat's measurement jitter by up to that much, so a skewed
/// but steady edge costs no write per heartbeat.
pub(super) fn clock_offset(
    persisted: Option<i64>,
    measured: Option<Option<i64>>,
    writing_anyway: bool,
    interval: Duration,
) -> (Option<i64>, bool) {
    let Some(measured) = measured else {
        return (persisted, false);
    };
    let tolerance = i64::try_from(phase::skew_tolerance(interval).as_secs()).unwrap_or(i64::MAX);
    let moved = measured
        .unwrap_or(0)
        .saturating_sub(persisted.unwrap_or(0))
        .saturating_abs()
        > tolerance;
    if writing_anyway || moved {
        (measured, moved)
    } else {
        (persisted, false)
    }
}

/// The hub-owned status `site` should have at `now`, given the hub's
/// `sighting` of its heartbeats and the effective heartbeat `interval`
/// (the site's, times any test scale), and the digest of the conditions
/// the hub `remembered` writing or checking last (None: check them in
/// full). `ClockSkew` is judged only on a live sighting; a seeded one
/// leaves it as it is (a full check keeps it only if its status, reason
/// and message are one of the hub's two states).
pub fn hub_status<'a>(
    site: &'a FederatedCluster,
    sighting: &Sighting,
    interval: Duration,
    credential_warning: Duration,
    remembered: Option<CheckedConditions>,
    now: Timestamp,
) -> HubStatus<'a> {
    scheduled_hub_status(
        site,
        sighting,
        interval,
        credential_warning,
        remembered,
        None,
        now,
    )
}

/// [`hub_status`] for a site with `schedule`, its `spec.connectivity` as
/// the hub resolved it (`fleet::connectivity`): a silent site its schedule
/// expects to be silent is `Sleeping`, one late to wake says so in
/// `Connected`.
pub(super) fn scheduled_hub_status<'a>(
    site: &'a FederatedCluster,
    sighting: &Sighting,
    interval: Duration,
    credential_warning: Duration,
    remembered: Option<CheckedConditions>,
    schedule: Option<&crate::fleet::connectivity::Schedule>,
    now: Timestamp,
) -> HubStatus<'a> {
    let observed_at = sighting.observation.map(|o| o.observed_at);
    let Scheduled {
        phase: new_phase,
        late,
        back_by,
        next: schedule_next,
    } = with_schedule(
        phase::phase(observed_at, interval, now),
        observed_at,
        schedule,
        interval,
        now,
    );
    let status = site.status.as_ref();
    let expires = status
        .and_then(|s| s.credential_expiration_time.as_ref())
        .map(|t| t.0);
    let renews = status
        .and_then(|s| s.credential_renewal_time.as_ref())
        .map(|t| t.0);
    let site_name = site.metadata.name.as_deref().unwrap_or_default();
    let (credential, credential_next) = credential_state(
        site_name,
        expires,
        renews,
        back_by,
        credential_warning,
        interval,
        now,
    );
    let measured = sighting.clock_offset(interval);
    let skew = measured.map(|offset| skew_state(offset.is_some(), interval));
    let (check, digest) = check_for(status, Mode::Push, interval, remembered);
    let requeue_after = [
        phase::next_transition(observed_at, interval, now),
        credential_next,
        schedule_next,
    ]
    .into_iter()
    .flatten()
    .min();

    let generation = site.metadata.generation;
    let (phase_transition_time, mut conditions, mut changed) =
        starting_point(status, new_phase, now);
    let mut rewritten = false;
    if check == Check::Full {
        rewritten |= keep_owned(&mut conditions, PUSH_CONDITION_TYPES);
    }
    rewritten |= set_connected(
        &mut conditions,
        site,
        scheduled_connected_state(new_phase, late, interval),
        now,
        check,
    );
    rewritten |= set_condition(
        &mut conditions,
        CONDITION_CREDENTIAL_EXPIRING,
        credential,
        generation,
        now,
        check,
    );
    match skew {
        Some(skew) => {
            rewritten |= set_condition(
                &mut conditions,
                CONDITION_CLOCK_SKEW,
                skew,
                generation,
                now,
                check,
            );
        }
        None if check == Check::Full => {
            rewritten |= check_unmeasured_skew(&mut conditions, interval);
        }
        None => {}
    }
    changed |= rewritten || unreadable_hub_keys(site);
    let (clock_offset_seconds, offset_moved) = clock_offset(
        status.and_then(|s| s.clock_offset_seconds),
        measured.map(|offset| offset.map(|o| o.as_secs())),
        changed,
        interval,
    );
    changed |= offset_moved;
    HubStatus {
        phase: new_phase,
        phase_transition_time,
        conditions,
        clock_offset_seconds,
        changed,
        requeue_after,
        restored: rewritten && remembered.is_some_and(|r| r.conditions != digest.conditions),
        verified: (!changed).then_some(digest),
    }
}

/// A full check of `ClockSkew` when the hub has no live measurement: the
/// stored condition stays only as one of the hub's two states, word for
/// word (a wrong message is rewritten); anything else is dropped, since
/// the hub cannot vouch for it until it measures again. Returns whether
/// the conditions changed.
pub(super) fn check_unmeasured_skew(
    conditions: &mut Cow<'_, [Condition]>,
    interval: Duration,
) -> bool {
    let Some(i) = conditions
        .iter()
        .position(|c| c.type_ == CONDITION_CLOCK_SKEW)
    else {
        return false;
    };
    let stored = &conditions[i];
    let skewed = match (stored.status.as_str(), stored.reason.as_str()) {
        ("True", "ClockSkewDetected") => true,
        ("False", "WithinTolerance") => false,
        _ => {
            conditions.to_mut().remove(i);
            return true;
        }
    };
    let message = bounded_message((skew_state(skewed, interval).message)());
    if stored.message == message {
        return false;
    }
    conditions.to_mut()[i].message = message;
    true
}
