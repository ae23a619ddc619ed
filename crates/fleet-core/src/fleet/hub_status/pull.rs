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
use crate::fleet::probe::{ProbeOutcome, ProbeReason, ProbeVerdict};

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
    let observed_at = sighting.observation.map(|o| o.observed_at);
    let latest_failed = probe.is_some_and(|p| matches!(p.outcome, ProbeOutcome::Failed { .. }));
    let new_phase = match phase::phase(observed_at, interval, now) {
        Phase::Connected if latest_failed => Phase::Stale,
        phase => phase,
    };
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
    match probe {
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
