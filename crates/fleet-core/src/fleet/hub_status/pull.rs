//! The hub-owned status of a Pull site, from the prober's latest verdict.

use std::time::Duration;

use jiff::Timestamp;

use super::conditions::*;
use super::credential::*;
use super::sighting::*;
use crate::api::{
    CONDITION_CONNECTED, CONDITION_CREDENTIAL_EXPIRING, CONDITION_REMEDIATION_CAPABLE,
    FederatedCluster, Mode, Phase,
};
use crate::fleet::phase::{self};
use crate::fleet::probe::{ProbeFailure, ProbeOutcome, ProbeReason, ProbeVerdict};

/// The hub-owned status of a Pull site. The phase comes from the same
/// thresholds as Push, over the heartbeats the prober writes on the hub
/// clock after each successful probe — but while the latest probe failed
/// it is at best `Stale`: a site the hub cannot read right now is never
/// shown Connected. `Connected` carries the latest probe's outcome (its
/// failure class as reason), `RemediationCapable` what the member said the
/// identity may do, and `CredentialExpiring` the member token the prober
/// reported ([`pull_credential_state`]). Before the first probe of this
/// process `Connected` and `RemediationCapable` stay as they are.
/// `ClockSkew` is a Push condition: the hub's own clock stamps a Pull
/// heartbeat (so there is no `clockOffsetSeconds`; one left from a time
/// the site was Push is removed).
///
/// `remembered` is as for [`hub_status`](super::hub_status); a full check drops the Push-only
/// condition (`ClockSkew`) a site switched from Push left behind. Before the first
/// probe of this process the hub cannot vouch for `Connected` and
/// `RemediationCapable`, so they are checked from the first probe on.
pub fn pull_hub_status<'a>(
    site: &'a FederatedCluster,
    sighting: &Sighting,
    interval: Duration,
    probe: Option<&ProbeVerdict>,
    credential_warning: Duration,
    remembered: Option<CheckedConditions>,
    now: Timestamp,
) -> HubStatus<'a> {
    scheduled_pull_hub_status(
        site,
        sighting,
        interval,
        probe,
        credential_warning,
        remembered,
        None,
        now,
    )
}

/// Whether the member's latest known probe outcome is silence
/// ([`ProbeFailure::is_silence`]): the latest probe's, or before the first
/// probe of this process, what the stored `Connected` says (its failure
/// class, or `Sleeping`/`LateToWake` from an earlier judgement).
fn probes_meet_silence(site: &FederatedCluster, probe: Option<&ProbeVerdict>) -> bool {
    match probe {
        Some(p) => matches!(
            p.outcome,
            ProbeOutcome::Failed { failure, .. } if failure.is_silence()
        ),
        None => site
            .status
            .as_ref()
            .and_then(|s| s.condition(CONDITION_CONNECTED))
            .is_some_and(|c| {
                c.status == "False"
                    && (c.reason == HeartbeatReason::Sleeping.as_str()
                        || c.reason == HeartbeatReason::LateToWake.as_str()
                        || ProbeFailure::ALL
                            .iter()
                            .any(|f| f.is_silence() && f.as_str() == c.reason))
            }),
    }
}

/// `Connected` of a Pull site its schedule judges (`fleet::connectivity`):
/// `Sleeping` while its probes meet silence inside its offline window or
/// longest absence, `LateToWake` after it; the message ends with what the
/// latest probe found (None: not probed by this process yet).
fn scheduled_probe_state(
    late: bool,
    interval: Duration,
    probe: Option<&ProbeVerdict>,
) -> CondState<impl FnOnce() -> String + '_> {
    let reason = if late {
        HeartbeatReason::LateToWake
    } else {
        HeartbeatReason::Sleeping
    };
    CondState::new("False", reason.as_str(), move || {
        let grace = human(interval * crate::fleet::connectivity::GRACE_INTERVALS);
        let said = if late {
            format!(
                "no successful probe of the member cluster since before the end of its offline window or longest absence (spec.connectivity), and none in the {grace} (3 intervals) after it: late to wake"
            )
        } else {
            format!(
                "the hub's probes of the member cluster fail, as its schedule expects (spec.connectivity): asleep until its offline window or longest absence ends, plus {grace} (3 intervals)"
            )
        };
        match probe.map(|p| &p.outcome) {
            Some(ProbeOutcome::Failed { failure, message }) => {
                format!("{said}; latest probe: {}: {message}", failure.as_str())
            }
            _ => said,
        }
    })
}

/// [`pull_hub_status`] for a site with `schedule`, its `spec.connectivity`
/// as the hub resolved it: while the latest probe meets the member's
/// silence ([`ProbeFailure::is_silence`]), the one rule Push sites are
/// judged by ([`with_schedule`], over the last successful probe instead of
/// the last heartbeat) makes the site `Sleeping` inside its offline
/// window or longest absence, and late to wake (`Connected` reason
/// `LateToWake`) past its end plus the grace. A probe that names a fault
/// of the member's own (a rejected token, TLS, the Secret) is judged as
/// without a schedule, whatever the hour.
#[allow(clippy::too_many_arguments)]
pub(super) fn scheduled_pull_hub_status<'a>(
    site: &'a FederatedCluster,
    sighting: &Sighting,
    interval: Duration,
    probe: Option<&ProbeVerdict>,
    credential_warning: Duration,
    remembered: Option<CheckedConditions>,
    schedule: Option<&crate::fleet::connectivity::Schedule>,
    now: Timestamp,
) -> HubStatus<'a> {
    let observed_at = sighting.observation.map(|o| o.observed_at);
    let latest_failed = probe.is_some_and(|p| matches!(p.outcome, ProbeOutcome::Failed { .. }));
    let by_probes = match phase::phase(observed_at, interval, now) {
        Phase::Connected if latest_failed => Phase::Stale,
        phase => phase,
    };
    let Scheduled {
        phase: new_phase,
        late,
        back_by,
        next: schedule_next,
    } = with_schedule(
        by_probes,
        observed_at,
        schedule.filter(|_| probes_meet_silence(site, probe)),
        interval,
        now,
    );
    let scheduled = late || new_phase == Phase::Sleeping;
    let status = site.status.as_ref();
    let generation = site.metadata.generation;
    let (check, digest) = check_for(status, Mode::Pull, interval, remembered);
    let (phase_transition_time, mut conditions, mut changed) =
        starting_point(status, new_phase, now);
    if status.is_some_and(|s| s.clock_offset_seconds.is_some()) {
        changed = true;
    }
    let mut rewritten = false;
    if check == Check::Full {
        rewritten |= keep_owned(&mut conditions, PULL_CONDITION_TYPES);
    }
    if scheduled {
        // Before the first probe of this process, a stored `Connected`
        // with the same reason keeps the probe's message it names.
        let kept = probe.is_none()
            && status
                .and_then(|s| s.condition(CONDITION_CONNECTED))
                .is_some_and(|c| {
                    c.status == "False"
                        && c.reason == scheduled_probe_state(late, interval, None).reason
                });
        if !kept {
            rewritten |= set_connected(
                &mut conditions,
                site,
                scheduled_probe_state(late, interval, probe),
                now,
                check,
            );
        }
    }
    match probe {
        Some(_) if scheduled => {}
        Some(probe) => {
            rewritten |= set_connected(
                &mut conditions,
                site,
                probe_connected_state(probe),
                now,
                check,
            );
            if let Some(r) = &probe.remediation {
                let status = if r.capable { "True" } else { "False" };
                let state = CondState::new(status, r.reason, || r.message.clone());
                rewritten |= set_condition(
                    &mut conditions,
                    CONDITION_REMEDIATION_CAPABLE,
                    state,
                    generation,
                    now,
                    check,
                );
            }
        }
        None if scheduled => {}
        None if !conditions.iter().any(|c| c.type_ == CONDITION_CONNECTED) => {
            let state = CondState::new("Unknown", ProbeReason::NotProbedYet.as_str(), || {
                "the hub has not probed the member cluster yet".to_owned()
            });
            rewritten |= set_connected(&mut conditions, site, state, now, check);
        }
        None => {}
    }
    let site_name = site.metadata.name.as_deref().unwrap_or_default();
    // The member refuses the credential (401): whatever expiry it carries,
    // it is no longer valid (revoked, or its identity deleted). Before the
    // first probe of this process, as the stored `Connected` says.
    let rejected = match probe {
        Some(p) => matches!(
            p.outcome,
            ProbeOutcome::Failed {
                failure: crate::fleet::probe::ProbeFailure::Unauthorized,
                ..
            }
        ),
        None => status
            .and_then(|s| s.condition(CONDITION_CONNECTED))
            .is_some_and(|c| c.status == "False" && c.reason == REJECTED_BY_MEMBER),
    };
    let (credential, credential_next) = pull_credential_state(
        site_name,
        rejected,
        status
            .and_then(|s| s.credential_expiration_time.as_ref())
            .map(|t| t.0),
        status
            .and_then(|s| s.credential_renewal_time.as_ref())
            .map(|t| t.0),
        back_by,
        credential_warning,
        interval,
        now,
    );
    rewritten |= set_condition(
        &mut conditions,
        CONDITION_CREDENTIAL_EXPIRING,
        credential,
        generation,
        now,
        check,
    );
    let requeue_after = [
        phase::next_transition(observed_at, interval, now),
        credential_next,
        schedule_next,
    ]
    .into_iter()
    .flatten()
    .min();
    changed |= rewritten || unreadable_hub_keys(site);
    HubStatus {
        phase: new_phase,
        phase_transition_time,
        conditions,
        clock_offset_seconds: None,
        changed,
        requeue_after,
        restored: rewritten && remembered.is_some_and(|r| r.conditions != digest.conditions),
        verified: (!changed).then_some(digest),
    }
}

pub(super) fn probe_connected_state(
    probe: &ProbeVerdict,
) -> CondState<impl FnOnce() -> String + '_> {
    const THROUGH_SECRET: &str = "the hub read the member cluster through its kubeconfig Secret";
    const INSECURE: &str = "the hub read the member cluster without verifying its certificate (the kubeconfig sets insecure-skip-tls-verify)";
    let (status, reason) = match &probe.outcome {
        ProbeOutcome::Reached { insecure: false } => ("True", ProbeReason::Succeeded.as_str()),
        ProbeOutcome::Reached { insecure: true } => {
            ("True", ProbeReason::InsecureSkipTlsVerify.as_str())
        }
        ProbeOutcome::Failed { failure, .. } => ("False", failure.as_str()),
    };
    CondState::new(status, reason, || match &probe.outcome {
        ProbeOutcome::Reached { insecure: false } => THROUGH_SECRET.to_owned(),
        ProbeOutcome::Reached { insecure: true } => INSECURE.to_owned(),
        ProbeOutcome::Failed { message, .. } => message.clone(),
    })
}
