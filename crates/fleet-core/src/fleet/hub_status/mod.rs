//! The hub-owned part of a site's status — phase, phaseTransitionTime and
//! conditions — as the hub should write it, whether that is a transition
//! worth a write, and when to judge again. Pure: the hub operator makes one
//! call per look at a site, [`judge`], with the object, its in-memory
//! [`Sighting`], what else it holds of the site ([`Bearings`]) and the
//! clock, and writes only when [`HubStatus::changed`] says so.
//!
//! A write is due only when the phase, or the status or reason of the
//! `Connected`, `CredentialExpiring` or `ClockSkew` condition, changes, or
//! when the measured edge clock offset (`clockOffsetSeconds`) moves by more
//! than the skew tolerance; messages follow the condition they belong to
//! and never cause a write on their own, so re-judging an unchanged site
//! yields no write, and a skewed edge's jittering heartbeats yield none
//! either.
//!
//! Field ownership (docs/architecture.md#who-writes-which-status-key): the
//! conditions are the hub's alone, so whatever else a site's status holds
//! there is restored to the hub's judgement. The hub remembers, per site, a
//! digest of the conditions it last wrote or checked ([`conditions_digest`]).
//! While the stored conditions still match it, only statuses and reasons
//! are compared, as above: an honest site costs no formatting. When they
//! do not (someone else wrote them, the site changed mode or interval, or
//! the hub has no memory of the site), every condition is checked in full
//! — status, reason and message against the hub's own — and types the hub
//! does not own for the site's mode are dropped: `RemediationCapable` on a
//! Push site, `CredentialExpiring` and `ClockSkew` on a Pull site, any
//! other type on either. Any difference is a write ([`HubStatus::restored`]
//! when the hub had checked the conditions before: someone changed them).
//!
//! `MemberChanged` (both modes) is judged apart, by [`judge_member`], from
//! the hub's [`MemberSighting`] of the identity a site's reports name
//! (`status.member`): True for [`MEMBER_CHANGE_HOLD`](member::MEMBER_CHANGE_HOLD) after the hub saw
//! it change, then False; absent on a site whose member never changed.
//!
//! A site whose object the hub could not read whole ([`Unreadable`](crate::api::Unreadable),
//! `api::lenient`) is judged on what it could read: an unreadable
//! `lastHeartbeatTime` is never a new heartbeat ([`Sighting::of_site`]),
//! and `Connected` carries the reason [`INVALID_STATUS`] naming the keys
//! it could not read, whatever else the phase is (see [`invalid_status`]
//! and docs/operations.md#a-site-whose-status-the-hub-cannot-read).

use std::time::Duration;

use jiff::Timestamp;

use crate::api::{FederatedCluster, Mode};
use crate::fleet::probe::ProbeVerdict;

mod conditions;
mod credential;
mod member;
mod pull;
mod push;
mod sighting;
#[cfg(test)]
mod tests;

pub(crate) use conditions::INVALID_STATUS;
pub use conditions::{
    CheckedConditions, HeartbeatReason, HubStatus, conditions_digest, invalid_status,
    is_late_to_wake,
};
pub(crate) use credential::CREDENTIAL_REJECTED;
pub use credential::credential_expires_before_return;
pub use member::{MemberChange, MemberSighting, judge_member};
pub use pull::pull_hub_status;
pub use push::hub_status;
pub use sighting::{Sighting, same_heartbeat};

/// Default warning period before the edge token expires for
/// `CredentialExpiring` to turn True.
pub const DEFAULT_CREDENTIAL_WARNING: Duration = Duration::from_secs(7 * 24 * 3600);

#[cfg(any(test, feature = "fixtures"))]
/// The `Connected` condition for `phase` with heartbeat `interval`, as the
/// hub writes it (fixtures use it to build realistic objects).
pub(crate) fn connected_condition(
    phase: crate::api::Phase,
    interval: Duration,
    now: Timestamp,
    generation: Option<i64>,
) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition {
    use conditions::{connected_state, new_condition};
    new_condition(
        crate::api::CONDITION_CONNECTED,
        connected_state(phase, interval),
        generation,
        now,
    )
}

/// What the hub brings to the judgement of one site besides the site, its
/// sighting and the clock: the hub's own settings and memory.
#[derive(Clone, Copy, Debug)]
pub struct Bearings<'h> {
    /// The effective heartbeat interval (the site's, times any test scale).
    pub interval: Duration,
    /// How long before an expiry `CredentialExpiring` turns True.
    pub credential_warning: Duration,
    /// When this replica became leader (None: it does not lead), see
    /// [`Sighting::since_takeover`].
    pub leader_since: Option<Timestamp>,
    /// The prober's latest verdict on a Pull site (None: not probed by
    /// this process yet; ignored for a Push site).
    pub probe: Option<&'h ProbeVerdict>,
    /// What the hub saw of the member identity the site's reports name.
    pub member: Option<&'h MemberSighting>,
    /// The digest of the conditions the hub last wrote or checked (None:
    /// check them in full).
    pub remembered: Option<CheckedConditions>,
    /// The site's `spec.connectivity` with its time zone resolved (None:
    /// it has none). Judged for both modes: a Push site's silence, a Pull
    /// site's probes that meet silence (`ProbeFailure::is_silence`).
    pub schedule: Option<&'h crate::fleet::connectivity::Schedule>,
}

/// The hub's judgement of one site at `now`: the one call the hub makes
/// per look at a site. From the hub's `sighting` of its heartbeats (as this
/// replica may count it since its takeover), the phase and hub-owned
/// conditions of its mode ([`hub_status`] for Push, [`pull_hub_status`]
/// for Pull) and `MemberChanged` ([`judge_member`]): what to write, whether
/// a write is due, and when to judge again.
pub fn judge<'a>(
    site: &'a FederatedCluster,
    sighting: Sighting,
    bearings: &Bearings<'_>,
    now: Timestamp,
) -> HubStatus<'a> {
    let sighting = sighting.since_takeover(bearings.leader_since, site.phase());
    let mut j = match site.spec.mode {
        Mode::Push => push::scheduled_hub_status(
            site,
            &sighting,
            bearings.interval,
            bearings.credential_warning,
            bearings.remembered,
            bearings.schedule,
            now,
        ),
        Mode::Pull => pull::scheduled_pull_hub_status(
            site,
            &sighting,
            bearings.interval,
            bearings.probe,
            bearings.credential_warning,
            bearings.remembered,
            bearings.schedule,
            now,
        ),
    };
    judge_member(&mut j, site, bearings.member, bearings.remembered, now);
    j
}
