//! The hub-owned part of a site's status — phase, phaseTransitionTime and
//! conditions — as the hub should write it, whether that is a transition
//! worth a write, and when to judge again. Pure: the hub operator feeds it
//! the object, its in-memory [`Sighting`], the effective heartbeat interval
//! and the clock, and writes only when [`HubStatus::changed`] says so.
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
//! (`status.member`): True for [`MEMBER_CHANGE_HOLD`] after the hub saw
//! it change, then False; absent on a site whose member never changed.
//!
//! A site whose object the hub could not read whole ([`Unreadable`],
//! `api::lenient`) is judged on what it could read: an unreadable
//! `lastHeartbeatTime` is never a new heartbeat ([`Sighting::of_site`]),
//! and `Connected` carries the reason [`INVALID_STATUS`] naming the keys
//! it could not read, whatever else the phase is (see [`invalid_status`]
//! and docs/operations.md#a-site-whose-status-the-hub-cannot-read).

use std::borrow::Cow;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use crate::api::{
    CONDITION_CLOCK_SKEW, CONDITION_CONNECTED, CONDITION_CREDENTIAL_EXPIRING,
    CONDITION_MEMBER_CHANGED, CONDITION_REMEDIATION_CAPABLE, FederatedCluster,
    FederatedClusterStatus, Mode, Phase, Unreadable,
};
use crate::fleet::phase::{self, HeartbeatObservation};
use crate::fleet::probe::{ProbeOutcome, ProbeVerdict};

/// Default warning period before the edge token expires for
/// `CredentialExpiring` to turn True.
pub const DEFAULT_CREDENTIAL_WARNING: Duration = Duration::from_secs(7 * 24 * 3600);

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
    pub fn fold(
        previous: Option<&Sighting>,
        reported: Option<Timestamp>,
        persisted_phase: Option<Phase>,
        now: Timestamp,
    ) -> Sighting {
        let Some(prev) = previous else {
            return Sighting {
                observation: HeartbeatObservation::observe(None, reported, persisted_phase, now),
                live: false,
            };
        };
        match (prev.observation, reported) {
            (Some(obs), Some(reported)) if same_heartbeat(obs.reported, reported) => *prev,
            (_, reported) => Sighting {
                observation: reported.map(|reported| HeartbeatObservation {
                    reported,
                    observed_at: now,
                }),
                live: true,
            },
        }
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
            return Sighting::fold(previous, reported, persisted, now);
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
            Some(Phase::Stale) => Some(older_than(phase::CONNECTED_INTERVALS)),
            Some(Phase::Unreachable) => Some(older_than(phase::STALE_INTERVALS)),
            Some(Phase::Pending) | None => None,
        };
        Sighting {
            observation: observed_at.map(|observed_at| HeartbeatObservation {
                reported: UNREADABLE_HEARTBEAT,
                observed_at,
            }),
            live: false,
        }
    }
}

/// The condition reason of a site the hub could not read whole.
pub(crate) const INVALID_STATUS: &str = "InvalidStatus";

/// What the hub could not read of `site` that it judges it by, if
/// anything: fields of the site's own (edge-owned status keys, or spec
/// keys an admin wrote past the CRD). Unreadable hub-owned keys alone are
/// not: the hub's next write replaces them ([`unreadable_hub_keys`]).
pub fn invalid_status(site: &FederatedCluster) -> Option<&Unreadable> {
    site.status
        .as_ref()?
        .unreadable()
        .filter(|u| !u.only_hub_owned())
}

/// Whether some hub-owned key of `site` could not be read: a write is
/// due, which replaces them with the hub's judgement.
pub(crate) fn unreadable_hub_keys(site: &FederatedCluster) -> bool {
    site.status
        .as_ref()
        .and_then(|s| s.unreadable())
        .is_some_and(|u| {
            u.keys().iter().any(|k| {
                k.strip_prefix("status.")
                    .is_some_and(|k| crate::api::HUB_OWNED_STATUS_KEYS.contains(&k))
            })
        })
}

/// `state` of `Connected` for a site the hub could not read whole: the
/// same status (it follows the phase), reason [`INVALID_STATUS`], and a
/// message naming the keys it could not read (our own key names, never
/// the site's text) before what `state` says.
fn invalid_state<'a>(
    state: CondState<impl FnOnce() -> String + 'a>,
    unreadable: &'a Unreadable,
) -> CondState<impl FnOnce() -> String + 'a> {
    CondState::new(state.status, INVALID_STATUS, move || {
        let keys = unreadable.keys().join(", ");
        let heartbeat = if unreadable.heartbeat() {
            "; a heartbeat the hub cannot read is not counted as one"
        } else {
            ""
        };
        format!(
            "the hub cannot read {keys} of this site (not what the CRD describes; `kubectl fleet describe` shows why){heartbeat}: {}",
            (state.message)()
        )
    })
}

/// Sets `Connected` to `state`, or to [`invalid_state`] of it when the hub
/// could not read the site whole; the latter is checked in full (its
/// message names the keys, so a different set of keys is a write).
fn set_connected(
    conditions: &mut Cow<'_, [Condition]>,
    site: &FederatedCluster,
    state: CondState<impl FnOnce() -> String>,
    now: Timestamp,
    check: Check,
) -> bool {
    let generation = site.metadata.generation;
    match invalid_status(site) {
        Some(unreadable) => set_condition(
            conditions,
            CONDITION_CONNECTED,
            invalid_state(state, unreadable),
            generation,
            now,
            Check::Full,
        ),
        None => set_condition(
            conditions,
            CONDITION_CONNECTED,
            state,
            generation,
            now,
            check,
        ),
    }
}

/// What the hub wants the hub-owned status of one site to be. Borrows the
/// site's conditions until a judgement changes one, so judging a site
/// whose status stays as it is copies nothing.
#[derive(Clone, Debug, PartialEq)]
pub struct HubStatus<'a> {
    /// The phase.
    pub phase: Phase,
    /// When the phase last changed: kept from the object unless it changes now.
    pub phase_transition_time: Option<Time>,
    /// All conditions: the hub's, updated, and any others (e.g. Pull-mode
    /// `RemediationCapable`, set by the prober) as they were.
    pub conditions: Cow<'a, [Condition]>,
    /// `clockOffsetSeconds`: the latest live measurement when this is a
    /// write, else what the object already holds (see [`clock_offset`]).
    pub clock_offset_seconds: Option<i64>,
    /// Whether this is a transition (so a write is due).
    pub changed: bool,
    /// When to judge again if nothing else happens: the next phase
    /// threshold, the start of the credential warning or the credential
    /// expiry, whichever is first. None when only a change can matter.
    pub requeue_after: Option<Duration>,
    /// The conditions had changed since the hub last wrote or checked them
    /// (someone else wrote them), and this judgement restores them.
    pub restored: bool,
    /// When no write is due: the site's conditions, now known to be the
    /// hub's word ([`conditions_digest`]), for the caller to remember.
    /// None when a write is due.
    pub verified: Option<CheckedConditions>,
}

/// Condition types the hub owns on a Push site.
pub(crate) const PUSH_CONDITION_TYPES: &[&str] = &[
    CONDITION_CONNECTED,
    CONDITION_CREDENTIAL_EXPIRING,
    CONDITION_CLOCK_SKEW,
    CONDITION_MEMBER_CHANGED,
];

/// Condition types the hub owns on a Pull site.
pub(crate) const PULL_CONDITION_TYPES: &[&str] = &[
    CONDITION_CONNECTED,
    CONDITION_REMEDIATION_CAPABLE,
    CONDITION_CREDENTIAL_EXPIRING,
    CONDITION_MEMBER_CHANGED,
];

/// What the hub remembers of a site's conditions once it wrote or checked
/// them: a digest of the conditions, and of what their messages depend on
/// (the mode and the interval), so it can tell cheaply whether they are
/// still the ones it vouched for. Deterministic within a process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckedConditions {
    /// Digest of the conditions.
    pub conditions: u64,
    /// Digest of the site's mode and interval.
    pub context: u64,
}

/// The [`CheckedConditions`] of `conditions` on a site of `mode` judged
/// with `interval`.
pub fn conditions_digest(
    mode: Mode,
    interval: Duration,
    conditions: &[Condition],
) -> CheckedConditions {
    use std::hash::{Hash as _, Hasher as _};
    let mut h = std::hash::DefaultHasher::new();
    for c in conditions {
        c.type_.hash(&mut h);
        c.status.hash(&mut h);
        c.reason.hash(&mut h);
        c.message.hash(&mut h);
        c.last_transition_time.0.as_nanosecond().hash(&mut h);
        c.observed_generation.hash(&mut h);
    }
    let mut context = std::hash::DefaultHasher::new();
    mode.as_str().hash(&mut context);
    interval.hash(&mut context);
    CheckedConditions {
        conditions: h.finish(),
        context: context.finish(),
    }
}

/// How a judgement compares the stored conditions with its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Check {
    /// They are what the hub last wrote or checked: statuses and reasons.
    Transitions,
    /// Unknown or changed by someone else: everything, messages included.
    Full,
}

/// Drops conditions of types not in `owned`, and repeats of a type;
/// returns whether any went.
fn keep_owned(conditions: &mut Cow<'_, [Condition]>, owned: &[&str]) -> bool {
    let mut seen: Vec<&str> = Vec::with_capacity(conditions.len());
    let keep: Vec<bool> = conditions
        .iter()
        .map(|c| {
            let ok = owned.contains(&c.type_.as_str()) && !seen.contains(&c.type_.as_str());
            seen.push(c.type_.as_str());
            ok
        })
        .collect();
    if keep.iter().all(|k| *k) {
        return false;
    }
    let mut flags = keep.into_iter();
    conditions
        .to_mut()
        .retain(|_| flags.next().unwrap_or(false));
    true
}

impl HubStatus<'_> {
    #[cfg(test)]
    /// This judgement with its conditions copied, free of the site it
    /// borrowed them from.
    pub(crate) fn into_owned(self) -> HubStatus<'static> {
        HubStatus {
            conditions: Cow::Owned(self.conditions.into_owned()),
            phase: self.phase,
            phase_transition_time: self.phase_transition_time,
            clock_offset_seconds: self.clock_offset_seconds,
            changed: self.changed,
            requeue_after: self.requeue_after,
            restored: self.restored,
            verified: self.verified,
        }
    }

    /// Write the decision into a status: the one to send, or a cache to
    /// update after a successful write. Edge-owned keys are left alone.
    pub(crate) fn apply_to(&self, status: &mut FederatedClusterStatus) {
        status.phase = Some(self.phase);
        status.phase_transition_time = self.phase_transition_time.clone();
        status.conditions = Some(self.conditions.to_vec());
        status.clock_offset_seconds = self.clock_offset_seconds;
    }

    /// The full status to write when this is a transition, else None.
    pub fn transition(&self, site: &FederatedCluster) -> Option<FederatedClusterStatus> {
        self.changed.then(|| {
            let mut status = site.status.clone().unwrap_or_default();
            self.apply_to(&mut status);
            status
        })
    }
}

/// A hub condition's status and reason, and its message, which is built
/// only when the condition is written (a judgement that changes nothing
/// formats nothing).
struct CondState<M: FnOnce() -> String> {
    status: &'static str,
    reason: &'static str,
    message: M,
}

impl<M: FnOnce() -> String> CondState<M> {
    fn new(status: &'static str, reason: &'static str, message: M) -> Self {
        CondState {
            status,
            reason,
            message,
        }
    }
}

fn human(d: Duration) -> String {
    crate::fleet::age::human_duration(SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX))
}

fn connected_state(phase: Phase, interval: Duration) -> CondState<impl FnOnce() -> String> {
    let (status, reason) = match phase {
        Phase::Pending => ("Unknown", "NeverHeardFrom"),
        Phase::Connected => ("True", "HeartbeatReceived"),
        Phase::Stale => ("False", "HeartbeatStale"),
        Phase::Unreachable => ("False", "HeartbeatMissing"),
    };
    CondState::new(status, reason, move || match phase {
        Phase::Pending => "no heartbeat received yet".to_owned(),
        Phase::Connected => format!(
            "heartbeat received within {} (3 intervals)",
            human(interval * phase::CONNECTED_INTERVALS)
        ),
        Phase::Stale => format!(
            "no heartbeat for more than {} (3 intervals)",
            human(interval * phase::CONNECTED_INTERVALS)
        ),
        Phase::Unreachable => format!(
            "no heartbeat for more than {} (10 intervals)",
            human(interval * phase::STALE_INTERVALS)
        ),
    })
}

/// How long past its renewal time a credential's holder (a self-renewing
/// edge, or the hub's prober for a Pull site) may still report the old one:
/// it renews at its first tick after that time (up to one interval), the
/// renewed expiry reaches the hub with the report after that (one more),
/// and the hub judges on its own tick (one more). Fewer intervals would
/// flag an on-time renewal as overdue for a moment.
pub(crate) const RENEWAL_GRACE_INTERVALS: u32 = 3;

/// `CredentialExpiring` and when it next changes on its own.
///
/// A site whose edge renews its token by itself (`renews` is reported) is
/// judged against that: True only once the credential a restart would use
/// is past its renewal time by [`RENEWAL_GRACE_INTERVALS`] (a renewal that
/// should have happened and did not), however short the lifetime the API
/// server grants. Otherwise it turns True `warning` before the expiry.
/// Messages state no times: the expiry is in `credentialExpirationTime`,
/// and a message is not rewritten when only that moves.
fn credential_state(
    site: &str,
    expires: Option<Timestamp>,
    renews: Option<Timestamp>,
    warning: Duration,
    interval: Duration,
    now: Timestamp,
) -> (CondState<impl FnOnce() -> String + '_>, Option<Duration>) {
    use Credential::*;
    let (state, next) = credential_timeline(expires, renews, warning, interval, now);
    let (status, reason) = state.status_and_reason("RenewedByEdge");
    let message = move || {
        let rotate =
            || format!("run `kubectl fleet rotate {site}` and give the edge the new configuration");
        match state {
            NotReported => "the edge has not reported when its hub credential expires".to_owned(),
            Expired => format!("the site's hub credential has expired: {}", rotate()),
            RenewalOverdue => "the edge renews its hub credential by itself, but the one a restart would use is past its renewal time: the edge's log names the cause".to_owned(),
            Renewed => "the edge renews its hub credential by itself when half of its lifetime is left".to_owned(),
            ExpiresSoon => format!(
                "the site's hub credential expires within {} and the edge does not report renewing it by itself: {}",
                human(warning),
                rotate()
            ),
            Valid => format!(
                "the site's hub credential is valid for more than {}; the edge does not report renewing it by itself",
                human(warning)
            ),
        }
    };
    (CondState::new(status, reason, message), next)
}

/// Where a credential stands in its life, whoever renews it (the edge for
/// a Push site's hub credential, the hub for a Pull site's member one).
#[derive(Clone, Copy)]
enum Credential {
    NotReported,
    Expired,
    /// Renewed by its holder, but the renewal is overdue by `grace`.
    RenewalOverdue,
    /// Renewed by its holder, on time.
    Renewed,
    /// Not renewed by its holder, and within `warning` of its expiry.
    ExpiresSoon,
    Valid,
}

impl Credential {
    /// The `CredentialExpiring` status and reason of this state; `renewed`
    /// names who renews it on time (`RenewedByEdge`, `RenewedByHub`).
    fn status_and_reason(self, renewed: &'static str) -> (&'static str, &'static str) {
        match self {
            Credential::NotReported => ("Unknown", "NotReported"),
            Credential::Expired => ("True", "Expired"),
            Credential::RenewalOverdue => ("True", "RenewalOverdue"),
            Credential::Renewed => ("False", renewed),
            Credential::ExpiresSoon => ("True", "ExpiresSoon"),
            Credential::Valid => ("False", "Valid"),
        }
    }
}

/// The state of a credential that `expires` and (when its holder renews
/// it) `renews`, its holder reporting every `interval`, and how long until
/// that state can next change (plus [`phase::TRANSITION_MARGIN`]): the one
/// timeline behind both `CredentialExpiring` judgements.
fn credential_timeline(
    expires: Option<Timestamp>,
    renews: Option<Timestamp>,
    warning: Duration,
    interval: Duration,
    now: Timestamp,
) -> (Credential, Option<Duration>) {
    use Credential::*;
    let grace = interval * RENEWAL_GRACE_INTERVALS;
    let until = |t: Timestamp| -> Option<Duration> {
        Duration::try_from(t.duration_since(now))
            .ok()
            .map(|d| d + phase::TRANSITION_MARGIN)
    };
    match (expires, renews) {
        (None, _) => (NotReported, None),
        (Some(exp), _) if now >= exp => (Expired, None),
        (Some(exp), Some(renews)) => {
            let overdue_at =
                renews + SignedDuration::try_from(grace).unwrap_or(SignedDuration::ZERO);
            if now >= overdue_at {
                (RenewalOverdue, until(exp))
            } else {
                (Renewed, until(overdue_at))
            }
        }
        (Some(exp), None) => {
            let warn_at = exp - SignedDuration::try_from(warning).unwrap_or(SignedDuration::ZERO);
            if now >= warn_at {
                (ExpiresSoon, until(exp))
            } else {
                (Valid, until(warn_at))
            }
        }
    }
}

/// What a judgement starts from: the phase transition time (now when the
/// phase changes), the conditions the hub holds (borrowed), and whether the
/// phase changed (which alone makes a write).
fn starting_point(
    status: Option<&FederatedClusterStatus>,
    new_phase: Phase,
    now: Timestamp,
) -> (Option<Time>, Cow<'_, [Condition]>, bool) {
    let changed = status.and_then(|s| s.phase) != Some(new_phase);
    let phase_transition_time = if changed {
        Some(Time(now))
    } else {
        status.and_then(|s| s.phase_transition_time.clone())
    };
    let conditions = status
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    (phase_transition_time, Cow::Borrowed(conditions), changed)
}

/// `ClockSkew` from a live observation. The message states no amount or
/// direction: a message is rewritten only when the condition's status or
/// reason changes, so a drifting clock would leave any stated amount stale.
/// The amount is in `clockOffsetSeconds`, which is rewritten whenever it
/// moves by more than the tolerance.
fn skew_state(skewed: bool, interval: Duration) -> CondState<impl FnOnce() -> String> {
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

/// The `clockOffsetSeconds` a live observation measures: the edge clock
/// minus the hub clock in whole seconds when beyond the skew tolerance,
/// else None (absent).
fn measured_offset(obs: &HeartbeatObservation, interval: Duration) -> Option<i64> {
    obs.skew(interval).map(|skew| skew.as_secs())
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
fn clock_offset(
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

/// A condition message within the CRD's bounds: printable (no control or
/// format character) and at most its length (a Pull probe's message
/// quotes what the member answered, which has no bound of its own).
fn bounded_message(message: String) -> String {
    let message = match crate::fleet::bounds::printable(&message) {
        Cow::Borrowed(_) => message,
        Cow::Owned(clean) => clean,
    };
    match crate::fleet::bounds::cut_to(&message, crate::api::MAX_CONDITION_MESSAGE_CHARS) {
        Cow::Borrowed(_) => message,
        Cow::Owned(cut) => cut,
    }
}

fn new_condition(
    type_: &str,
    state: CondState<impl FnOnce() -> String>,
    generation: Option<i64>,
    now: Timestamp,
) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: state.status.to_owned(),
        reason: state.reason.to_owned(),
        message: bounded_message((state.message)()),
        last_transition_time: Time(now),
        observed_generation: generation,
    }
}

/// Sets condition `type_` to `state`, keeping `lastTransitionTime` when the
/// status does not change, as Kubernetes conventions require. Returns
/// whether it changed the condition. With [`Check::Transitions`] only a
/// new status or reason is a change, and only then is the message built
/// and updated; with [`Check::Full`] the message is built and compared
/// too. Only a change copies the conditions from the site.
fn set_condition(
    conditions: &mut Cow<'_, [Condition]>,
    type_: &str,
    state: CondState<impl FnOnce() -> String>,
    generation: Option<i64>,
    now: Timestamp,
    check: Check,
) -> bool {
    match conditions.iter().position(|c| c.type_ == type_) {
        Some(i) if conditions[i].status == state.status && conditions[i].reason == state.reason => {
            if check == Check::Transitions {
                return false;
            }
            let message = bounded_message((state.message)());
            if conditions[i].message == message {
                return false;
            }
            let c = &mut conditions.to_mut()[i];
            c.message = message;
            c.observed_generation = generation;
            true
        }
        Some(i) => {
            let c = &mut conditions.to_mut()[i];
            if c.status != state.status {
                c.last_transition_time = Time(now);
            }
            c.status = state.status.to_owned();
            c.reason = state.reason.to_owned();
            c.message = bounded_message((state.message)());
            c.observed_generation = generation;
            true
        }
        None => {
            conditions
                .to_mut()
                .push(new_condition(type_, state, generation, now));
            true
        }
    }
}

#[cfg(any(test, feature = "fixtures"))]
/// The `Connected` condition for `phase` with heartbeat `interval`, as the
/// hub writes it (fixtures use it to build realistic objects).
pub(crate) fn connected_condition(
    phase: Phase,
    interval: Duration,
    now: Timestamp,
    generation: Option<i64>,
) -> Condition {
    new_condition(
        CONDITION_CONNECTED,
        connected_state(phase, interval),
        generation,
        now,
    )
}

/// How the stored conditions are checked, and their digest: a full check
/// unless they are what the hub `remembered` (see the module documentation).
fn check_for(
    status: Option<&FederatedClusterStatus>,
    mode: Mode,
    interval: Duration,
    remembered: Option<CheckedConditions>,
) -> (Check, CheckedConditions) {
    let stored = status
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let digest = conditions_digest(mode, interval, stored);
    let check = if remembered == Some(digest) {
        Check::Transitions
    } else {
        Check::Full
    };
    (check, digest)
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
    let observed_at = sighting.observation.map(|o| o.observed_at);
    let new_phase = phase::phase(observed_at, interval, now);
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
        credential_warning,
        interval,
        now,
    );
    let live = sighting.observation.filter(|_| sighting.live);
    let skew = live
        .as_ref()
        .map(|obs| skew_state(obs.skew(interval).is_some(), interval));
    let (check, digest) = check_for(status, Mode::Push, interval, remembered);
    let requeue_after = [
        phase::next_transition(observed_at, interval, now),
        credential_next,
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
        connected_state(new_phase, interval),
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
        live.as_ref().map(|obs| measured_offset(obs, interval)),
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
fn check_unmeasured_skew(conditions: &mut Cow<'_, [Condition]>, interval: Duration) -> bool {
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
/// `remembered` is as for [`hub_status`]; a full check drops the Push-only
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
            let state = CondState::new("Unknown", "NotProbedYet", || {
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

/// The `Connected` reason of a Pull site whose member answers 401.
const REJECTED_BY_MEMBER: &str = "Unauthorized";

/// `CredentialExpiring` True of a Pull site whose member rejects its
/// credential (`Connected` False/Unauthorized): views then show the
/// credential as rejected, not the expiry it carries.
pub(crate) const CREDENTIAL_REJECTED: &str = "Rejected";

/// `CredentialExpiring` of a Pull site, from the member token the prober
/// reported (`credentialExpirationTime`) and, when the hub renews it
/// (`credentialRenewalTime` set: it is the site's own Pull identity), when
/// it renews. A renewed credential is True only once its renewal is overdue
/// by [`RENEWAL_GRACE_INTERVALS`]; one the hub cannot renew (stored
/// with `--store-kubeconfig-as-is`, or an identity from before each site
/// had its own) turns True `warning` before it expires. A credential the
/// member `rejected` (401) is True with reason [`CREDENTIAL_REJECTED`],
/// whatever its expiry. Every True state's message ends with the command
/// that stores a fresh credential.
fn pull_credential_state(
    site: &str,
    rejected: bool,
    expires: Option<Timestamp>,
    renews: Option<Timestamp>,
    warning: Duration,
    interval: Duration,
    now: Timestamp,
) -> (CondState<impl FnOnce() -> String + '_>, Option<Duration>) {
    use Credential::*;
    let (state, next) = credential_timeline(expires, renews, warning, interval, now);
    // A token past its expiry is refused for that: it says Expired.
    let rejected = rejected && !matches!(state, Expired);
    let (status, reason) = if rejected {
        ("True", CREDENTIAL_REJECTED)
    } else {
        state.status_and_reason("RenewedByHub")
    };
    let next = next.filter(|_| !rejected);
    let message = move || {
        let register = || {
            format!(
                "run `kubectl fleet register {site} --pull --member-kubeconfig FILE` (FILE: an admin kubeconfig of the member) to store a fresh one"
            )
        };
        const CANNOT: &str = "the hub cannot renew it (it is not the site's own Pull identity: stored with --store-kubeconfig-as-is, or registered before each site had its own)";
        if rejected {
            return format!(
                "the member rejects the site's credential (401 Unauthorized): it was revoked, or its identity on the member was deleted, whatever expiry it carries; {}",
                register()
            );
        }
        match state {
            NotReported => "the hub has not read when the site's member credential expires (not probed successfully yet, or not a ServiceAccount token)".to_owned(),
            Expired => format!("the site's member credential has expired: {}", register()),
            RenewalOverdue => format!(
                "the hub renews the site's member credential by itself, but its renewal is overdue (the hub operator's log names the cause): {}",
                register()
            ),
            Renewed => "the hub renews the site's member credential by itself when half of its lifetime is left".to_owned(),
            ExpiresSoon => format!(
                "the site's member credential expires within {} and {CANNOT}: {}",
                human(warning),
                register()
            ),
            Valid => format!(
                "the site's member credential is valid for more than {}; {CANNOT}",
                human(warning)
            ),
        }
    };
    (CondState::new(status, reason, message), next)
}

fn probe_connected_state(probe: &ProbeVerdict) -> CondState<impl FnOnce() -> String + '_> {
    const THROUGH_SECRET: &str = "the hub read the member cluster through its kubeconfig Secret";
    const INSECURE: &str = "the hub read the member cluster without verifying its certificate (the kubeconfig sets insecure-skip-tls-verify)";
    let (status, reason) = match &probe.outcome {
        ProbeOutcome::Reached { insecure: false } => ("True", "ProbeSucceeded"),
        ProbeOutcome::Reached { insecure: true } => ("True", "InsecureSkipTLSVerify"),
        ProbeOutcome::Failed { failure, .. } => ("False", failure.reason()),
    };
    CondState::new(status, reason, || match &probe.outcome {
        ProbeOutcome::Reached { insecure: false } => THROUGH_SECRET.to_owned(),
        ProbeOutcome::Reached { insecure: true } => INSECURE.to_owned(),
        ProbeOutcome::Failed { message, .. } => message.clone(),
    })
}

// The member cluster a site's reports come from: `MemberChanged`.

/// How long `MemberChanged` stays True after the hub last saw a site's
/// member identity change: long enough for a person to see it, and a
/// second edge that keeps reporting for the site keeps it True.
pub(crate) const MEMBER_CHANGE_HOLD: Duration = Duration::from_secs(3600);

/// `MemberChanged` True.
pub(crate) const MEMBER_CHANGED: &str = "MemberChanged";
/// `MemberChanged` False: one member for [`MEMBER_CHANGE_HOLD`] since the
/// last change.
pub(crate) const MEMBER_UNCHANGED: &str = "MemberUnchanged";

/// What the hub has seen of the member identity (`status.member`) a site's
/// reports name, in memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemberSighting {
    /// The member the latest report named (kept when a report names none).
    pub current: Option<String>,
    /// When the hub last saw it change (None: not since it first saw the
    /// site, unless `MemberChanged` was True then, see [`Self::first`]).
    pub changed_at: Option<Timestamp>,
}

/// A change of a site's member the hub just saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberChange {
    /// The member the site reported before.
    pub from: String,
    /// The member it reports now.
    pub to: String,
}

impl MemberSighting {
    /// The hub's first sight of `site` (a start, or a new site). A change
    /// flagged before (`MemberChanged` True) is held from now, for a full
    /// [`MEMBER_CHANGE_HOLD`]: the hub does not know when it last happened.
    pub fn first(site: &FederatedCluster, now: Timestamp) -> Self {
        let status = site.status.as_ref();
        let flagged = status
            .and_then(|s| s.condition(CONDITION_MEMBER_CHANGED))
            .is_some_and(|c| c.status == "True");
        MemberSighting {
            current: status.and_then(|s| s.member.clone()),
            changed_at: flagged.then_some(now),
        }
    }

    /// Folds the member a site reports now into the sighting; the change,
    /// when it is one. No allocation unless the member changed.
    pub fn observe(&mut self, reported: Option<&str>, now: Timestamp) -> Option<MemberChange> {
        let reported = reported?;
        match self.current.as_deref() {
            Some(was) if was == reported => None,
            Some(was) => {
                let change = MemberChange {
                    from: was.to_owned(),
                    to: reported.to_owned(),
                };
                self.current = Some(reported.to_owned());
                self.changed_at = Some(now);
                Some(change)
            }
            None => {
                self.current = Some(reported.to_owned());
                None
            }
        }
    }

    /// When the hold of the last change ends, if the hub saw one.
    fn flagged_until(&self) -> Option<Timestamp> {
        let hold = SignedDuration::try_from(MEMBER_CHANGE_HOLD).unwrap_or(SignedDuration::MAX);
        self.changed_at.map(|t| t.checked_add(hold).unwrap_or(t))
    }
}

fn member_state(changed: bool) -> CondState<impl FnOnce() -> String> {
    let (status, reason) = if changed {
        ("True", MEMBER_CHANGED)
    } else {
        ("False", MEMBER_UNCHANGED)
    };
    CondState::new(status, reason, move || {
        let hold = human(MEMBER_CHANGE_HOLD);
        if changed {
            format!(
                "status.member changed: the site's reports now come from another member cluster (kube-system namespace UID) than before. \
                 An edge pointed at another cluster changes it once; two edges reporting for one site change it back and forth \
                 (the hub's MemberChanged Events name each change). Stop the edge that reads the wrong cluster (each edge logs the member it reads); \
                 this turns False after {hold} of reports from one member"
            )
        } else {
            format!(
                "the site's reports have come from one member cluster for {hold} since its member last changed"
            )
        }
    })
}

/// Adds the hub's `MemberChanged` judgement to `j`, a judgement of `site`
/// ([`hub_status`] or [`pull_hub_status`]) made with `remembered`, from the
/// hub's sighting of its member (None: no sighting). True until
/// [`MEMBER_CHANGE_HOLD`] after the last change seen, then False; left out
/// while the hub saw no change and the site has no such condition. A
/// change makes `j` a write and moves its requeue to the end of the hold.
pub fn judge_member(
    j: &mut HubStatus<'_>,
    site: &FederatedCluster,
    seen: Option<&MemberSighting>,
    remembered: Option<CheckedConditions>,
    now: Timestamp,
) {
    // As the judgement compared the stored conditions (see `check_for`).
    let check = if j.verified.is_some() && j.verified == remembered {
        Check::Transitions
    } else {
        Check::Full
    };
    let until = seen.and_then(MemberSighting::flagged_until);
    let present = j
        .conditions
        .iter()
        .any(|c| c.type_ == CONDITION_MEMBER_CHANGED);
    let changed = match until {
        Some(until) if now < until => {
            let next = Duration::try_from(until.duration_since(now))
                .map(|d| d + phase::TRANSITION_MARGIN)
                .ok();
            j.requeue_after = match (j.requeue_after, next) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            true
        }
        Some(_) => false,
        None if present => false,
        None => return,
    };
    if set_condition(
        &mut j.conditions,
        CONDITION_MEMBER_CHANGED,
        member_state(changed),
        site.metadata.generation,
        now,
        check,
    ) {
        j.changed = true;
        j.verified = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::fixtures::fixture_now;

    const I: Duration = Duration::from_secs(30);

    fn at(secs: i64) -> Timestamp {
        fixture_now() + SignedDuration::from_secs(secs)
    }

    fn seen(reported: i64, observed: i64, live: bool) -> Sighting {
        Sighting {
            observation: Some(HeartbeatObservation {
                reported: at(reported),
                observed_at: at(observed),
            }),
            live,
        }
    }

    #[test]
    fn the_hub_truncating_a_fractional_heartbeat_is_no_new_heartbeat() {
        let sent = at(0) + SignedDuration::from_millis(750);
        let first = Sighting::fold(Some(&NEVER), Some(sent), Some(Phase::Connected), at(1));
        // The hub's own status write stored the value at second precision.
        let rewritten = Sighting::fold(Some(&first), Some(at(0)), Some(Phase::Stale), at(95));
        assert_eq!(rewritten, first, "same second, same heartbeat");
        let next = Sighting::fold(Some(&first), Some(at(30)), Some(Phase::Stale), at(96));
        assert_eq!(next.observation.unwrap().observed_at, at(96));
    }

    const NEVER: Sighting = Sighting {
        observation: None,
        live: false,
    };

    fn site() -> FederatedCluster {
        FederatedCluster::test("site-a")
    }

    fn judge(site: &FederatedCluster, s: &Sighting, now: Timestamp) -> HubStatus<'static> {
        hub_status(site, s, I, DEFAULT_CREDENTIAL_WARNING, None, now).into_owned()
    }

    fn cond<'a>(h: &'a HubStatus, type_: &str) -> Option<&'a Condition> {
        h.conditions.iter().find(|c| c.type_ == type_)
    }

    /// Apply a decision to the object, as a successful hub write would.
    fn written(mut site: FederatedCluster, h: &HubStatus) -> FederatedCluster {
        site.status = h.transition(&site).or(site.status);
        site
    }

    #[test]
    fn sightings_are_live_only_once_watched() {
        // First sight of a Connected site: seeded now, not live.
        let first = Sighting::fold(None, Some(at(-600)), Some(Phase::Connected), at(0));
        assert_eq!(first, seen(-600, 0, false));
        // First sight of a Stale site: the reported time, capped at now.
        let stale = Sighting::fold(None, Some(at(-600)), Some(Phase::Stale), at(0));
        assert_eq!(stale, seen(-600, -600, false));
        assert_eq!(Sighting::fold(None, None, None, at(0)), NEVER);
        // The same value later: unchanged, the age keeps growing.
        assert_eq!(
            Sighting::fold(Some(&first), Some(at(-600)), Some(Phase::Connected), at(50)),
            first
        );
        // A new value: observed now, live.
        let next = Sighting::fold(Some(&first), Some(at(-570)), Some(Phase::Connected), at(30));
        assert_eq!(next, seen(-570, 30, true));
        // The first heartbeat of a site already watched: live.
        let watched = Sighting::fold(Some(&NEVER), Some(at(5)), Some(Phase::Pending), at(6));
        assert_eq!(watched, seen(5, 6, true));
        // The heartbeat went away: never heard from.
        assert_eq!(
            Sighting::fold(Some(&next), None, Some(Phase::Connected), at(60)),
            Sighting {
                observation: None,
                live: true
            }
        );
    }

    /// A heartbeat with ten fraction digits: Kubernetes' date-time check
    /// passes it, jiff does not read it.
    fn unreadable_heartbeat() -> serde_json::Value {
        serde_json::json!({"lastHeartbeatTime": "2026-01-01T12:00:05.1234567891Z"})
    }

    #[test]
    fn an_unreadable_heartbeat_is_never_a_new_sighting() {
        let s = FederatedCluster::test("p")
            .connected()
            .poisoned(unreadable_heartbeat());
        // Watched before: the previous sighting stands, however often the
        // unreadable value changes.
        let before = seen(-5, -5, true);
        assert_eq!(Sighting::of_site(Some(&before), &s, I, at(60)), before);
        let h = judge(&s, &before, at(100));
        assert_eq!(h.phase, Phase::Stale, "it ages as a silent site does");
        // A readable heartbeat afterwards is new.
        let fixed = FederatedCluster::test("p").heartbeat_ago(0);
        let after = Sighting::of_site(Some(&before), &fixed, I, at(120));
        assert_eq!(after.observation.unwrap().observed_at, at(120));
    }

    #[test]
    fn after_a_restart_an_unreadable_heartbeat_counts_as_one_that_did_not_move() {
        let first = |site: &FederatedCluster| Sighting::of_site(None, site, I, at(0));
        let poison = |site: FederatedCluster| site.poisoned(unreadable_heartbeat());
        // Last judged Connected: observed now, Stale 3·I later.
        let c = first(&poison(FederatedCluster::test("p").connected()));
        assert_eq!(c.observation.unwrap().observed_at, at(0));
        assert!(!c.live);
        let site = poison(FederatedCluster::test("p").connected());
        assert_eq!(judge(&site, &c, at(90)).phase, Phase::Connected);
        assert_eq!(judge(&site, &c, at(91)).phase, Phase::Stale);
        // Last judged Stale 60 s ago: as old as that judgement says, so
        // Unreachable when it would have been (7·I after it).
        let site = poison(FederatedCluster::test("p").with_phase(Phase::Stale, 60));
        let s = first(&site);
        assert_eq!(judge(&site, &s, at(0)).phase, Phase::Stale);
        assert_eq!(judge(&site, &s, at(149)).phase, Phase::Stale);
        assert_eq!(judge(&site, &s, at(150)).phase, Phase::Unreachable);
        let site = poison(FederatedCluster::test("p").with_phase(Phase::Unreachable, 600));
        assert_eq!(judge(&site, &first(&site), at(0)).phase, Phase::Unreachable);
        // Never judged, or Pending: never heard from.
        for site in [
            poison(FederatedCluster::test("p")),
            poison(FederatedCluster::test("p").pending()),
        ] {
            assert_eq!(first(&site), NEVER);
            assert_eq!(judge(&site, &NEVER, at(0)).phase, Phase::Pending);
        }
        // The seeded heartbeat is no real one: the first readable one is new.
        let fixed = FederatedCluster::test("p").connected();
        let next = Sighting::of_site(Some(&c), &fixed, I, at(30));
        assert_eq!(
            next,
            Sighting {
                observation: Some(HeartbeatObservation {
                    reported: fixed.status.unwrap().last_heartbeat_time.unwrap().0,
                    observed_at: at(30)
                }),
                live: true
            }
        );
    }

    #[test]
    fn connected_says_invalid_status_and_names_the_keys_it_cannot_read() {
        let site = FederatedCluster::test("p")
            .connected()
            .poisoned(serde_json::json!({
                "lastHeartbeatTime": "2026-01-01T12:00:05.1234567891Z",
                "nodeCount": 18446744073709551615u64,
            }));
        let h = judge(&site, &seen(0, 0, false), at(10));
        assert_eq!(h.phase, Phase::Connected);
        assert!(h.changed, "the reason changes: a write");
        let c = cond(&h, CONDITION_CONNECTED).unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("True", INVALID_STATUS)
        );
        assert_eq!(
            c.message,
            "the hub cannot read status.lastHeartbeatTime, status.nodeCount of this site (not what the CRD describes; `kubectl fleet describe` shows why); a heartbeat the hub cannot read is not counted as one: heartbeat received within 90s (3 intervals)"
        );
        // Written, judged again: nothing to write; Stale keeps the reason.
        let site = written(site, &h);
        assert!(!judge(&site, &seen(0, 0, false), at(20)).changed);
        let stale = judge(&site, &seen(0, 0, false), at(91));
        let c = cond(&stale, CONDITION_CONNECTED).unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("False", INVALID_STATUS)
        );
        // Another set of keys is another message: a write.
        let mut other = site.clone();
        other.status.as_mut().unwrap().unreadable = FederatedCluster::test("p")
            .connected()
            .poisoned(serde_json::json!({"capacity": {"nodes": "x"}}))
            .status
            .unwrap()
            .unreadable;
        let h = judge(&other, &seen(0, 0, false), at(20));
        assert!(h.changed);
        assert!(
            cond(&h, CONDITION_CONNECTED)
                .unwrap()
                .message
                .starts_with("the hub cannot read status.capacity of")
        );
        // Readable again: back to the heartbeat's own reason.
        let mut fixed = site;
        fixed.status.as_mut().unwrap().unreadable = None;
        let h = judge(&fixed, &seen(0, 0, false), at(20));
        assert!(h.changed);
        assert_eq!(
            cond(&h, CONDITION_CONNECTED).unwrap().reason,
            "HeartbeatReceived"
        );
    }

    #[test]
    fn unreadable_hub_owned_keys_alone_are_rewritten_not_flagged() {
        let site = FederatedCluster::test("p")
            .connected()
            .poisoned(serde_json::json!({"phaseTransitionTime": "2026-01-01T12:00:05x5Z"}));
        assert!(invalid_status(&site).is_none());
        let h = judge(&site, &seen(0, 0, false), at(10));
        assert!(h.changed, "a write replaces what the hub could not read");
        assert_eq!(
            cond(&h, CONDITION_CONNECTED).unwrap().reason,
            "HeartbeatReceived"
        );
    }

    #[test]
    fn condition_messages_are_printable() {
        assert_eq!(
            bounded_message("denied\n\u{1b}[2J\u{9b}\u{202e}x".to_owned()),
            "denied \u{fffd}[2J\u{fffd}\u{fffd}x"
        );
    }

    #[test]
    fn requeue_is_the_next_threshold_crossing() {
        let h = judge(&site(), &seen(0, 0, true), at(10));
        assert_eq!(h.phase, Phase::Connected);
        assert_eq!(
            h.requeue_after,
            Some(Duration::from_secs(80) + phase::TRANSITION_MARGIN)
        );
        let h = judge(&site(), &seen(0, 0, true), at(91));
        assert_eq!(h.phase, Phase::Stale);
        assert_eq!(
            h.requeue_after,
            Some(Duration::from_secs(209) + phase::TRANSITION_MARGIN)
        );
        let h = judge(&site(), &seen(0, 0, true), at(301));
        assert_eq!(h.phase, Phase::Unreachable);
        assert_eq!(
            h.requeue_after, None,
            "only a new heartbeat can change Unreachable"
        );
        let never = Sighting {
            observation: None,
            live: true,
        };
        assert_eq!(judge(&site(), &never, at(0)).requeue_after, None);
    }

    #[test]
    fn the_effective_interval_sets_the_thresholds() {
        // A 3 s effective interval (e.g. 30 s scaled by 0.1): Stale after 9 s.
        let i = Duration::from_secs(3);
        let h = |now| {
            hub_status(
                &site(),
                &seen(0, 0, true),
                i,
                DEFAULT_CREDENTIAL_WARNING,
                None,
                now,
            )
            .into_owned()
        };
        assert_eq!(h(at(9)).phase, Phase::Connected);
        assert_eq!(h(at(10)).phase, Phase::Stale);
        assert_eq!(
            h(at(0)).requeue_after,
            Some(Duration::from_secs(9) + phase::TRANSITION_MARGIN)
        );
    }

    #[test]
    fn transitions_write_once_each_and_requeue_at_thresholds() {
        let s = seen(0, 0, true);
        let h = judge(&site(), &s, fixture_now());
        assert_eq!(h.phase, Phase::Connected);
        assert!(h.changed);
        let mut site = written(site(), &h);
        let mut now = fixture_now();
        let mut phases = vec![];
        let mut writes = 0;
        while let Some(d) = judge(&site, &s, now).requeue_after {
            now += SignedDuration::try_from(d).unwrap();
            let h = judge(&site, &s, now);
            if h.changed {
                writes += 1;
                site = written(site, &h);
            }
            phases.push(h.phase);
            // Re-judging without time passing never writes.
            assert!(!judge(&site, &s, now).changed);
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
            ("False", "HeartbeatMissing")
        );
        assert_eq!(c.message, "no heartbeat for more than 5m (10 intervals)");
    }

    #[test]
    fn requeue_includes_the_credential_warning_and_expiry() {
        let warning = Duration::from_secs(3600);
        let mut s = site();
        s.status = Some(FederatedClusterStatus {
            credential_expiration_time: Some(Time(at(3600 + 60))),
            ..Default::default()
        });
        let judge = |now| hub_status(&s, &seen(-1000, -1000, true), I, warning, None, now);
        // Unreachable, so the phase never requeues; the credential does.
        let h = judge(at(0));
        let c = cond(&h, CONDITION_CREDENTIAL_EXPIRING).unwrap();
        assert_eq!((c.status.as_str(), c.reason.as_str()), ("False", "Valid"));
        assert_eq!(
            h.requeue_after,
            Some(Duration::from_secs(60) + phase::TRANSITION_MARGIN)
        );
        let h = judge(at(61));
        let c = cond(&h, CONDITION_CREDENTIAL_EXPIRING).unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("True", "ExpiresSoon")
        );
        assert_eq!(
            h.requeue_after,
            Some(Duration::from_secs(3600 - 1) + phase::TRANSITION_MARGIN),
            "requeue at the moment the token expires"
        );
        let h = judge(at(3660));
        let c = cond(&h, CONDITION_CREDENTIAL_EXPIRING).unwrap();
        assert_eq!((c.status.as_str(), c.reason.as_str()), ("True", "Expired"));
        assert_eq!(h.requeue_after, None);
    }

    #[test]
    fn a_self_renewing_site_is_judged_against_its_renewal_not_the_warning() {
        // Capped at 1 h, far below the 7 d warning: the edge renews at 30 m.
        let warning = DEFAULT_CREDENTIAL_WARNING;
        let s = FederatedCluster::test("a")
            .heartbeat_ago(0)
            .with_token_expiring_in(3600)
            .with_token_renewed_in(1800);
        let judge = |s: &FederatedCluster, secs| {
            hub_status(s, &seen(secs, secs, true), I, warning, None, at(secs)).into_owned()
        };
        let h = judge(&s, 0);
        let c = cond(&h, CONDITION_CREDENTIAL_EXPIRING).unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("False", "RenewedByEdge")
        );
        assert_eq!(
            c.message,
            "the edge renews its hub credential by itself when half of its lifetime is left"
        );
        let (_, next) = credential_state("a", Some(at(3600)), Some(at(1800)), warning, I, at(0));
        assert_eq!(
            next,
            Some(Duration::from_secs(1800 + 90) + phase::TRANSITION_MARGIN),
            "judged again when the renewal is overdue"
        );
        // Renewed in time: the reported times move, the condition does not.
        let renewed = written(s.clone(), &h)
            .with_token_expiring_in(1800 + 3600)
            .with_token_renewed_in(1800 + 1800);
        let h2 = judge(&renewed, 1810);
        assert!(!h2.changed, "a renewal rewrites nothing");
        // Two intervals past its renewal time an on-time renewal may not
        // have reached the hub yet: still False.
        let h = judge(&s, 1800 + 60);
        let c = cond(&h, CONDITION_CREDENTIAL_EXPIRING).unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("False", "RenewedByEdge")
        );
        // Not renewed three intervals past its renewal time: True, and the
        // message points at the edge's log, not at auto-rotation.
        let h = judge(&s, 1800 + 90);
        let c = cond(&h, CONDITION_CREDENTIAL_EXPIRING).unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("True", "RenewalOverdue")
        );
        assert!(
            c.message.contains("the edge's log names the cause"),
            "{}",
            c.message
        );
        assert!(!c.message.contains("enable auto-rotation"));
        assert!(h.changed);
    }

    #[test]
    fn credential_messages_state_no_times_and_name_the_site() {
        let warning = Duration::from_secs(86400);
        for (secs, reason) in [
            (2 * 86400, "Valid"),
            (3600, "ExpiresSoon"),
            (-60, "Expired"),
        ] {
            let s = FederatedCluster::test("site-a")
                .heartbeat_ago(0)
                .with_token_expiring_in(secs);
            let h = hub_status(&s, &seen(0, 0, true), I, warning, None, fixture_now());
            let c = cond(&h, CONDITION_CREDENTIAL_EXPIRING).unwrap();
            assert_eq!(c.reason, reason);
            assert!(
                !c.message.contains(&fixture_now().to_string()[..4]),
                "{}",
                c.message
            );
            if reason != "Valid" {
                assert!(
                    c.message.contains("kubectl fleet rotate site-a"),
                    "{}",
                    c.message
                );
            }
        }
    }

    #[test]
    fn credential_condition_across_its_life() {
        let warning = Duration::from_secs(86400);
        let s = FederatedCluster::test("a")
            .heartbeat_ago(0)
            .with_token_expiring_in(2 * 86400);
        let h = hub_status(&s, &seen(0, 0, true), I, warning, None, fixture_now()).into_owned();
        let c = cond(&h, CONDITION_CREDENTIAL_EXPIRING).unwrap();
        assert_eq!((c.status.as_str(), c.reason.as_str()), ("False", "Valid"));
        let s = written(s, &h);
        let h = hub_status(&s, &seen(86400, 86400, true), I, warning, None, at(86400));
        let c = cond(&h, CONDITION_CREDENTIAL_EXPIRING).unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("True", "ExpiresSoon")
        );
        assert!(h.changed, "entering the warning is a transition");
        // Not reported: Unknown, no requeue for it.
        let h = judge(&site(), &NEVER, fixture_now());
        let c = cond(&h, CONDITION_CREDENTIAL_EXPIRING).unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("Unknown", "NotReported")
        );
        // Far from expiry the next evaluation is the phase threshold.
        let far = FederatedCluster::test("b")
            .heartbeat_ago(0)
            .with_token_expiring_in(30 * 86400);
        let h = hub_status(&far, &seen(0, 0, true), I, warning, None, fixture_now());
        assert_eq!(
            h.requeue_after,
            Some(Duration::from_secs(90) + phase::TRANSITION_MARGIN)
        );
        // Pending with a token expiring in 2 days: requeue when the warning starts.
        let pending = FederatedCluster::test("c").with_token_expiring_in(2 * 86400);
        let h = hub_status(&pending, &NEVER, I, warning, None, fixture_now());
        assert_eq!(
            h.requeue_after,
            Some(Duration::from_secs(86400) + phase::TRANSITION_MARGIN)
        );
    }

    #[test]
    fn skew_is_judged_only_on_live_sightings() {
        // Edge clock 10 minutes behind, seen live: ClockSkew True, phase Connected.
        let h = judge(&site(), &seen(-600, 0, true), at(5));
        assert_eq!(h.phase, Phase::Connected);
        let skew = cond(&h, CONDITION_CLOCK_SKEW).unwrap();
        assert_eq!(
            (skew.status.as_str(), skew.reason.as_str()),
            ("True", "ClockSkewDetected")
        );
        assert_eq!(
            skew.message,
            "the edge clock differs from the hub clock by more than 60s: status.clockOffsetSeconds holds the offset (edge minus hub); phase and heartbeat ages are judged on the hub clock"
        );
        assert_eq!(h.clock_offset_seconds, Some(-600));
        // A second of jitter on the next heartbeat: no write.
        let s = written(site(), &h);
        assert!(!judge(&s, &seen(30 - 601, 30, true), at(30)).changed);
        // Seeded at hub start: not measurable, left alone.
        assert_eq!(
            cond(
                &judge(&site(), &seen(-600, 0, false), at(5)),
                CONDITION_CLOCK_SKEW
            ),
            None
        );
        let kept = judge(&s, &seen(-600, 0, false), at(5));
        assert_eq!(
            cond(&kept, CONDITION_CLOCK_SKEW).unwrap().status,
            "True",
            "a seeded sighting keeps the last live judgement"
        );
        // Within tolerance.
        let h = judge(&site(), &seen(-2, 0, true), at(5));
        let skew = cond(&h, CONDITION_CLOCK_SKEW).unwrap();
        assert_eq!(
            (skew.status.as_str(), skew.reason.as_str()),
            ("False", "WithinTolerance")
        );
    }

    /// The offset a written object holds.
    fn offset(site: &FederatedCluster) -> Option<i64> {
        site.status.as_ref().and_then(|s| s.clock_offset_seconds)
    }

    #[test]
    fn the_clock_offset_is_written_with_the_condition_not_per_heartbeat() {
        // Edge 10 minutes behind, heartbeats every 30 s with report latency
        // and second rounding: the first live sighting writes ClockSkew and
        // the offset together, then a steady edge costs nothing.
        let h = judge(&site(), &seen(-600, 0, true), at(1));
        assert!(h.changed);
        let mut s = written(site(), &h);
        assert_eq!(offset(&s), Some(-600));
        let json = serde_json::to_value(s.status.as_ref().unwrap()).unwrap();
        assert_eq!(json["clockOffsetSeconds"], -600);
        let skew_since = cond(&h, CONDITION_CLOCK_SKEW)
            .unwrap()
            .last_transition_time
            .clone();
        let mut writes = 0;
        for (i, jitter) in [0, -1, 3, -20, 29, -45, 10, 59, -59, 1].iter().enumerate() {
            let t = 30 * (i as i64 + 1);
            let h = judge(&s, &seen(t - 600 + jitter, t, true), at(t));
            assert_eq!(h.phase, Phase::Connected);
            assert_eq!(h.clock_offset_seconds, Some(-600), "kept at {t}");
            if h.changed {
                writes += 1;
                s = written(s, &h);
            }
        }
        assert_eq!(writes, 0, "no write per heartbeat");
        // The edge clock drifts by more than the tolerance: one write of
        // the new offset; the condition (status, time, message) is as it was.
        let h = judge(&s, &seen(330 - 700, 330, true), at(330));
        assert!(h.changed, "the offset moved by more than 1m");
        s = written(s, &h);
        assert_eq!(offset(&s), Some(-700));
        let c = s
            .status
            .as_ref()
            .unwrap()
            .condition(CONDITION_CLOCK_SKEW)
            .unwrap();
        assert_eq!(
            (c.status.as_str(), &c.last_transition_time),
            ("True", &skew_since)
        );
        assert!(
            !c.message.contains("10m") && !c.message.contains("11m"),
            "{}",
            c.message
        );
        // A phase transition writes the freshest measurement with it.
        let h = judge(&s, &seen(330 - 730, 330, true), at(421));
        assert_eq!(h.phase, Phase::Stale);
        assert_eq!(h.clock_offset_seconds, Some(-730));
        s = written(s, &h);
        // A seeded sighting (hub restart) measures nothing: kept, no write.
        let h = judge(&s, &seen(330 - 730, 330, false), at(422));
        assert!(!h.changed);
        assert_eq!(h.clock_offset_seconds, Some(-730));
        // The clock is fixed: back within tolerance, cleared with the
        // condition turning False, in one write, and gone from the JSON.
        let h = judge(&s, &seen(450 - 5, 450, true), at(450));
        assert!(h.changed);
        s = written(s, &h);
        assert_eq!(offset(&s), None);
        assert_eq!(
            cond(&h, CONDITION_CLOCK_SKEW).unwrap().reason,
            "WithinTolerance"
        );
        let json = serde_json::to_value(s.status.as_ref().unwrap()).unwrap();
        assert!(json.get("clockOffsetSeconds").is_none(), "{json}");
        assert!(!judge(&s, &seen(480 - 3, 480, true), at(480)).changed);
    }

    #[test]
    fn skew_within_tolerance_writes_no_offset_and_pull_sites_have_none() {
        let h = judge(&site(), &seen(-59, 0, true), at(0));
        assert_eq!(h.clock_offset_seconds, None);
        // A site switched from Push to Pull: the hub stamps its heartbeat
        // now, so an offset left over is removed (one write).
        let s = site().pull().heartbeat_ago(0).with_clock_offset(-600);
        let h = pull_hub_status(
            &s,
            &seen(0, 0, true),
            I,
            None,
            DEFAULT_CREDENTIAL_WARNING,
            None,
            at(1),
        )
        .into_owned();
        assert!(h.changed);
        let s = written(s, &h);
        assert_eq!(offset(&s), None);
        assert!(
            !pull_hub_status(
                &s,
                &seen(0, 0, true),
                I,
                None,
                DEFAULT_CREDENTIAL_WARNING,
                None,
                at(2)
            )
            .changed
        );
    }

    #[test]
    fn writes_only_on_transition_and_keeps_edge_fields() {
        let mut s = site();
        s.status = Some(FederatedClusterStatus {
            last_heartbeat_time: Some(Time(at(0))),
            node_count: Some(3),
            ..Default::default()
        });
        let e = seen(0, 0, true);
        let first = judge(&s, &e, at(1))
            .transition(&s)
            .expect("first judgement is a transition");
        assert_eq!(first.phase, Some(Phase::Connected));
        assert_eq!(first.node_count, Some(3), "edge-owned fields survive");
        assert_eq!(first.phase_transition_time, Some(Time(at(1))));
        s.status = Some(first);
        // Same judgement later: no write.
        assert_eq!(judge(&s, &e, at(60)).transition(&s), None);
        // Crossing 3·I: one write, Connected condition False, time moves.
        let stale = judge(&s, &e, at(91)).transition(&s).unwrap();
        assert_eq!(stale.phase, Some(Phase::Stale));
        assert_eq!(stale.phase_transition_time, Some(Time(at(91))));
        let c = stale.condition(CONDITION_CONNECTED).unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("False", "HeartbeatStale")
        );
        assert_eq!(c.last_transition_time, Time(at(91)));
        let cred = stale.condition(CONDITION_CREDENTIAL_EXPIRING).unwrap();
        assert_eq!(
            cred.last_transition_time,
            Time(at(1)),
            "unchanged condition keeps its time"
        );
    }

    #[test]
    fn pending_site_gets_one_write() {
        let h = judge(&site(), &NEVER, at(0));
        assert_eq!(h.phase, Phase::Pending);
        assert_eq!(h.requeue_after, None);
        let st = h.transition(&site()).unwrap();
        assert_eq!(st.phase, Some(Phase::Pending));
        assert_eq!(st.condition(CONDITION_CONNECTED).unwrap().status, "Unknown");
        let mut s2 = site();
        s2.status = Some(st);
        let again = judge(&s2, &NEVER, at(3600));
        assert_eq!(again.transition(&s2), None, "no write without a transition");
        assert_eq!(again.phase_transition_time, Some(Time(at(0))));
    }

    #[test]
    fn set_condition_keeps_transition_time_when_status_is_unchanged() {
        let mut cs = Cow::Borrowed(&[][..]);
        let state = |p| connected_state(p, I);
        let type_ = CONDITION_CONNECTED;
        assert!(set_condition(
            &mut cs,
            type_,
            state(Phase::Connected),
            Some(1),
            fixture_now(),
            Check::Transitions
        ));
        // An unchanged condition is neither rewritten nor copied.
        let held = cs.clone();
        let mut unchanged = Cow::Borrowed(&held[..]);
        assert!(!set_condition(
            &mut unchanged,
            type_,
            state(Phase::Connected),
            Some(1),
            at(60),
            Check::Transitions
        ));
        assert!(matches!(unchanged, Cow::Borrowed(_)));
        assert_eq!(cs[0].last_transition_time, Time(fixture_now()));
        // A message-only change is not a transition.
        let reworded = CondState::new("True", "HeartbeatReceived", || "other words".to_owned());
        assert!(!set_condition(
            &mut cs,
            type_,
            reworded,
            Some(1),
            at(61),
            Check::Transitions
        ));
        assert_eq!(cs[0].message, (state(Phase::Connected).message)());
        // Same status, new reason: a transition that keeps the time.
        assert!(set_condition(
            &mut cs,
            type_,
            state(Phase::Stale),
            Some(1),
            at(120),
            Check::Transitions
        ));
        assert_eq!(cs[0].last_transition_time, Time(at(120)));
        assert!(set_condition(
            &mut cs,
            type_,
            state(Phase::Unreachable),
            Some(2),
            at(400),
            Check::Transitions
        ));
        assert_eq!(cs[0].last_transition_time, Time(at(120)));
        assert_eq!(
            (cs[0].reason.as_str(), cs[0].observed_generation),
            ("HeartbeatMissing", Some(2))
        );
        assert_eq!(cs.len(), 1);
        assert_eq!(
            connected_condition(Phase::Stale, I, at(120), Some(1)),
            new_condition(type_, state(Phase::Stale), Some(1), at(120))
        );
    }

    /// The digest a hub that wrote or checked `site` remembers.
    fn digest(site: &FederatedCluster) -> Option<CheckedConditions> {
        let conditions = site
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_deref())
            .unwrap_or_default();
        Some(conditions_digest(site.spec.mode, I, conditions))
    }

    fn types(h: &HubStatus) -> Vec<String> {
        h.conditions.iter().map(|c| c.type_.clone()).collect()
    }

    #[test]
    fn a_forged_condition_is_restored_and_foreign_types_dropped() {
        // The hub judged a live site and wrote it.
        let first = judge(&site().heartbeat_ago(0), &seen(0, 0, true), at(1));
        let honest = written(site().heartbeat_ago(0), &first);
        let remembered = digest(&honest);
        let again = hub_status(
            &honest,
            &seen(0, 0, true),
            I,
            DEFAULT_CREDENTIAL_WARNING,
            remembered,
            at(2),
        );
        assert!(!again.changed);
        assert_eq!(again.verified, remembered, "still the hub's word");
        // With its token the site rewrites the Connected message, adds
        // RemediationCapable (a Pull condition) and a type of its own.
        let forged = honest
            .clone()
            .with_condition(
                CONDITION_CONNECTED,
                "True",
                "HeartbeatReceived",
                "all good, trust me",
                0,
            )
            .with_condition(
                CONDITION_REMEDIATION_CAPABLE,
                "True",
                "Granted",
                "the hub may remediate",
                0,
            )
            .with_condition("Hacked", "True", "ByTheSite", "x", 0);
        let h = hub_status(
            &forged,
            &seen(0, 0, true),
            I,
            DEFAULT_CREDENTIAL_WARNING,
            remembered,
            at(3),
        )
        .into_owned();
        assert!(h.changed && h.restored, "{h:?}");
        assert_eq!(h.verified, None);
        assert_eq!(types(&h), ["CredentialExpiring", "ClockSkew", "Connected"]);
        let c = cond(&h, CONDITION_CONNECTED).unwrap();
        assert_eq!(c.message, "heartbeat received within 90s (3 intervals)");
        // Later the site claims Connected=True although it went Stale.
        let stale = written(forged, &h);
        let h = hub_status(
            &stale,
            &seen(0, 0, true),
            I,
            DEFAULT_CREDENTIAL_WARNING,
            digest(&stale),
            at(100),
        )
        .into_owned();
        let stale = written(stale, &h);
        assert_eq!(stale.phase(), Some(Phase::Stale));
        let lie = stale.clone().with_condition(
            CONDITION_CONNECTED,
            "True",
            "HeartbeatReceived",
            "heartbeat received within 90s (3 intervals)",
            0,
        );
        let h = hub_status(
            &lie,
            &seen(0, 0, true),
            I,
            DEFAULT_CREDENTIAL_WARNING,
            digest(&stale),
            at(101),
        );
        assert!(h.changed && h.restored);
        let c = cond(&h, CONDITION_CONNECTED).unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("False", "HeartbeatStale")
        );
        assert_eq!(
            c.last_transition_time,
            Time(at(101)),
            "its status changed back"
        );
        // A hub with no memory of the site (just started) checks in full
        // too, and restores, but cannot tell it was a forgery.
        let h = hub_status(
            &lie,
            &seen(0, 0, true),
            I,
            DEFAULT_CREDENTIAL_WARNING,
            None,
            at(101),
        );
        assert!(h.changed && !h.restored);
    }

    #[test]
    fn an_honest_site_is_compared_by_status_and_reason_only() {
        let h = judge(&site().heartbeat_ago(0), &seen(0, 0, true), at(1));
        let mut honest = written(site().heartbeat_ago(0), &h);
        // The hub's own words from an earlier version: not a forgery, since
        // the hub remembers writing exactly these conditions.
        for c in honest.status.as_mut().unwrap().conditions.as_mut().unwrap() {
            c.message = format!("older words for {}", c.type_);
        }
        let h = hub_status(
            &honest,
            &seen(0, 0, true),
            I,
            DEFAULT_CREDENTIAL_WARNING,
            digest(&honest),
            at(2),
        );
        assert!(!h.changed, "messages alone are no write");
        assert!(matches!(h.conditions, Cow::Borrowed(_)), "nothing copied");
        // Another interval changes the messages: checked in full once.
        let h = hub_status(
            &honest,
            &seen(0, 0, true),
            Duration::from_secs(60),
            DEFAULT_CREDENTIAL_WARNING,
            digest(&honest),
            at(2),
        );
        assert!(h.changed);
    }

    #[test]
    fn a_mode_switch_leaves_no_condition_of_the_old_mode() {
        // Pull, probed, RemediationCapable written; then switched to Push.
        let reached = ProbeVerdict {
            remediation: Some(crate::fleet::probe::RemediationAccess {
                capable: false,
                reason: "AccessDenied",
                message: "the member identity may not patch".into(),
            }),
            ..verdict(ProbeOutcome::Reached { insecure: false })
        };
        let pull = site().pull().heartbeat_ago(0);
        let h = pull_hub_status(
            &pull,
            &seen(0, 0, true),
            I,
            Some(&reached),
            DEFAULT_CREDENTIAL_WARNING,
            None,
            at(1),
        )
        .into_owned();
        let pull = written(pull, &h);
        assert_eq!(
            types(&h),
            ["Connected", "RemediationCapable", "CredentialExpiring"]
        );
        let mut push = pull.clone();
        push.spec.mode = Mode::Push;
        push.spec.kubeconfig_secret_ref = None;
        let h = hub_status(
            &push,
            &seen(0, 0, true),
            I,
            DEFAULT_CREDENTIAL_WARNING,
            digest(&pull),
            at(2),
        );
        assert!(h.changed && !h.restored, "a switch is no forgery");
        assert_eq!(types(&h), ["Connected", "CredentialExpiring", "ClockSkew"]);
        // Push with a measured skew; then back to Pull: the Push judgement of
        // CredentialExpiring is replaced by the Pull one, ClockSkew and the
        // offset go, in one write.
        let skewed = judge(&push, &seen(-600, 0, true), at(3));
        let push = written(push.heartbeat_ago(0), &skewed);
        assert!(push.status.as_ref().unwrap().clock_offset_seconds.is_some());
        let mut back = push.clone().pull();
        back.status.as_mut().unwrap().last_heartbeat_time = Some(Time(at(4)));
        let h = pull_hub_status(
            &back,
            &seen(4, 4, true),
            I,
            Some(&reached),
            DEFAULT_CREDENTIAL_WARNING,
            digest(&push),
            at(5),
        )
        .into_owned();
        assert!(h.changed);
        assert_eq!(
            types(&h),
            ["Connected", "CredentialExpiring", "RemediationCapable"]
        );
        let back = written(back, &h);
        assert_eq!(back.status.as_ref().unwrap().clock_offset_seconds, None);
        assert!(
            !pull_hub_status(
                &back,
                &seen(4, 4, true),
                I,
                Some(&reached),
                DEFAULT_CREDENTIAL_WARNING,
                digest(&back),
                at(6)
            )
            .changed
        );
    }

    #[test]
    fn an_unmeasured_clock_skew_stays_only_as_the_hubs_own() {
        let measured = written(
            site().heartbeat_ago(0),
            &judge(&site().heartbeat_ago(0), &seen(-600, 0, true), at(1)),
        );
        // Seeded sighting (hub restart): the hub's own ClockSkew is kept.
        assert!(!judge(&measured, &seen(-600, 0, false), at(2)).changed);
        // A status/reason pair the hub never writes: dropped.
        let odd = measured.clone().with_condition(
            CONDITION_CLOCK_SKEW,
            "False",
            "ClockSkewDetected",
            "x",
            0,
        );
        let h = judge(&odd, &seen(-600, 0, false), at(2));
        assert!(h.changed);
        assert!(cond(&h, CONDITION_CLOCK_SKEW).is_none());
        // The hub's pair with other words: the words are restored.
        let reworded =
            measured.with_condition(CONDITION_CLOCK_SKEW, "True", "ClockSkewDetected", "x", 0);
        let h = judge(&reworded, &seen(-600, 0, false), at(2));
        assert!(h.changed);
        assert!(
            cond(&h, CONDITION_CLOCK_SKEW)
                .unwrap()
                .message
                .contains("clockOffsetSeconds")
        );
    }

    #[test]
    fn a_new_leader_does_not_demote_a_connected_site_for_time_before_its_takeover() {
        // Seen live at 0 by the standby; it took over at 200 (after an
        // outage its watch may not have caught up): still Connected at 200
        // and until 3·I after the takeover, Stale only after that.
        let standby = seen(0, 0, true);
        let led = standby.since_takeover(Some(at(200)), Some(Phase::Connected));
        assert_eq!(led, seen(0, 200, false));
        let connected = site().pull().heartbeat_ago(0);
        assert_eq!(judge(&connected, &standby, at(200)).phase, Phase::Stale);
        assert_eq!(judge(&connected, &led, at(200)).phase, Phase::Connected);
        assert_eq!(judge(&connected, &led, at(289)).phase, Phase::Connected);
        assert_eq!(judge(&connected, &led, at(291)).phase, Phase::Stale);
        // A sighting newer than the takeover, no leadership, or a site not
        // judged Connected: unchanged (this can never promote a Stale site).
        let fresh = seen(250, 250, true);
        assert_eq!(
            fresh.since_takeover(Some(at(200)), Some(Phase::Connected)),
            fresh
        );
        assert_eq!(
            standby.since_takeover(None, Some(Phase::Connected)),
            standby
        );
        for p in [Some(Phase::Stale), Some(Phase::Unreachable), None] {
            assert_eq!(standby.since_takeover(Some(at(200)), p), standby, "{p:?}");
        }
        assert_eq!(
            NEVER.since_takeover(Some(at(200)), Some(Phase::Connected)),
            NEVER
        );
    }

    fn verdict(outcome: ProbeOutcome) -> ProbeVerdict {
        ProbeVerdict {
            outcome,
            duration: Duration::from_millis(12),
            remediation: None,
        }
    }

    #[test]
    fn pull_connected_carries_the_probe_failure_class_and_writes_once() {
        use crate::fleet::probe::ProbeFailure;
        let pending = site().pull();
        let failed = verdict(ProbeOutcome::Failed {
            failure: ProbeFailure::Unauthorized,
            message: "rejected".into(),
        });
        let h = pull_hub_status(
            &pending,
            &NEVER,
            I,
            Some(&failed),
            DEFAULT_CREDENTIAL_WARNING,
            None,
            at(0),
        )
        .into_owned();
        assert!(h.changed);
        assert_eq!(h.phase, Phase::Pending, "never reached: still Pending");
        let c = cond(&h, CONDITION_CONNECTED).unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("False", "Unauthorized")
        );
        // The same failure again: nothing to write.
        let after = written(pending, &h);
        assert!(
            !pull_hub_status(
                &after,
                &NEVER,
                I,
                Some(&failed),
                DEFAULT_CREDENTIAL_WARNING,
                None,
                at(30)
            )
            .changed
        );
        // No probe yet in this process: the condition stays as it is.
        assert!(
            !pull_hub_status(
                &after,
                &NEVER,
                I,
                None,
                DEFAULT_CREDENTIAL_WARNING,
                None,
                at(30)
            )
            .changed
        );
        // A successful probe wrote a heartbeat: Connected, reason from the
        // probe, and the insecure kubeconfig is said so.
        let reached = verdict(ProbeOutcome::Reached { insecure: true });
        let h = pull_hub_status(
            &after,
            &seen(40, 40, true),
            I,
            Some(&reached),
            DEFAULT_CREDENTIAL_WARNING,
            None,
            at(41),
        );
        assert_eq!(h.phase, Phase::Connected);
        let c = cond(&h, CONDITION_CONNECTED).unwrap();
        assert_eq!(c.reason, "InsecureSkipTLSVerify");
        assert!(c.message.contains("insecure-skip-tls-verify"));
        let c = cond(&h, CONDITION_CREDENTIAL_EXPIRING).unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("Unknown", "NotReported"),
            "no token expiry reported"
        );
    }

    #[test]
    fn a_pull_site_whose_latest_probe_failed_is_never_connected() {
        use crate::fleet::probe::ProbeFailure;
        let reached = verdict(ProbeOutcome::Reached { insecure: false });
        let connected = written(
            site().pull().heartbeat_ago(0),
            &pull_hub_status(
                &site().pull().heartbeat_ago(0),
                &seen(0, 0, true),
                I,
                Some(&reached),
                DEFAULT_CREDENTIAL_WARNING,
                None,
                at(1),
            ),
        );
        assert_eq!(connected.phase(), Some(Phase::Connected));
        // The very next probe gets a 401, one second after a success: the
        // heartbeat is fresh, but the hub cannot read the member now.
        let unauthorized = verdict(ProbeOutcome::Failed {
            failure: ProbeFailure::Unauthorized,
            message: "rejected".into(),
        });
        let h = pull_hub_status(
            &connected,
            &seen(0, 0, true),
            I,
            Some(&unauthorized),
            DEFAULT_CREDENTIAL_WARNING,
            None,
            at(2),
        )
        .into_owned();
        assert!(h.changed);
        assert_eq!(h.phase, Phase::Stale, "one write: Stale with the reason");
        let c = cond(&h, CONDITION_CONNECTED).unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("False", "Unauthorized")
        );
        // It stays Stale, then turns Unreachable on the usual threshold.
        let stale = written(connected, &h);
        let later = pull_hub_status(
            &stale,
            &seen(0, 0, true),
            I,
            Some(&unauthorized),
            DEFAULT_CREDENTIAL_WARNING,
            None,
            at(200),
        );
        assert_eq!(later.phase, Phase::Stale);
        assert!(!later.changed);
        let gone = pull_hub_status(
            &stale,
            &seen(0, 0, true),
            I,
            Some(&unauthorized),
            DEFAULT_CREDENTIAL_WARNING,
            None,
            at(301),
        );
        assert_eq!(gone.phase, Phase::Unreachable);
        // A success with a fresh heartbeat: Connected again.
        let back = pull_hub_status(
            &stale,
            &seen(300, 300, true),
            I,
            Some(&reached),
            DEFAULT_CREDENTIAL_WARNING,
            None,
            at(301),
        );
        assert_eq!(back.phase, Phase::Connected);
    }

    #[test]
    fn a_pull_credential_is_renewed_by_the_hub_or_warned_with_a_command_that_runs() {
        let reached = verdict(ProbeOutcome::Reached { insecure: false });
        let judge_at = |s: &FederatedCluster, t: i64| {
            pull_hub_status(
                s,
                &seen(0, 0, true),
                I,
                Some(&reached),
                Duration::from_secs(3600),
                None,
                at(t),
            )
            .into_owned()
        };
        let state = |h: &HubStatus| {
            let c = cond(h, CONDITION_CREDENTIAL_EXPIRING).unwrap().clone();
            (c.status, c.reason, c.message)
        };
        // Renewed by the hub (its own identity): False until overdue.
        let renewed = site()
            .pull()
            .heartbeat_ago(0)
            .with_token_expiring_in(600)
            .with_token_renewed_in(300);
        let h = judge_at(&renewed, 0);
        let (status, reason, message) = state(&h);
        assert_eq!(
            (status.as_str(), reason.as_str()),
            ("False", "RenewedByHub")
        );
        assert!(message.contains("the hub renews"), "{message}");
        assert!(
            h.requeue_after.unwrap() <= Duration::from_secs(300 + 3 * 30 + 1),
            "judged again when the renewal would be overdue: {:?}",
            h.requeue_after
        );
        let (status, reason, message) = state(&judge_at(&renewed, 300 + 3 * 30));
        assert_eq!(
            (status.as_str(), reason.as_str()),
            ("True", "RenewalOverdue")
        );
        assert!(
            message.contains("kubectl fleet register site-a --pull --member-kubeconfig FILE"),
            "{message}"
        );
        // Not renewable (stored as given): warned before it expires.
        let as_is = site().pull().heartbeat_ago(0).with_token_expiring_in(7200);
        let (status, reason, _) = state(&judge_at(&as_is, 0));
        assert_eq!((status.as_str(), reason.as_str()), ("False", "Valid"));
        let (status, reason, message) = state(&judge_at(&as_is, 3600));
        assert_eq!((status.as_str(), reason.as_str()), ("True", "ExpiresSoon"));
        assert!(message.contains("--store-kubeconfig-as-is"), "{message}");
        assert!(
            message.contains("kubectl fleet register site-a --pull --member-kubeconfig FILE"),
            "{message}"
        );
        let (status, reason, _) = state(&judge_at(&as_is, 7200));
        assert_eq!((status.as_str(), reason.as_str()), ("True", "Expired"));
    }

    #[test]
    fn pull_site_never_probed_is_unknown() {
        let h = pull_hub_status(
            &site().pull(),
            &NEVER,
            I,
            None,
            DEFAULT_CREDENTIAL_WARNING,
            None,
            at(0),
        )
        .into_owned();
        let c = cond(&h, CONDITION_CONNECTED).unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("Unknown", "NotProbedYet")
        );
    }
}

#[cfg(test)]
mod member_tests {
    use super::*;
    use crate::api::fixtures::fixture_now;

    const I: Duration = Duration::from_secs(30);
    const A: &str = "6f1c2a8e-0b7d-4f3e-9a51-2c8d7e6f1b20";
    const B: &str = "0c9e1d2a-7b3f-4e5d-8a6b-1f2e3d4c5b6a";

    fn at(secs: i64) -> Timestamp {
        fixture_now() + SignedDuration::from_secs(secs)
    }

    fn live(secs: i64) -> Sighting {
        Sighting {
            observation: Some(HeartbeatObservation {
                reported: at(secs),
                observed_at: at(secs),
            }),
            live: true,
        }
    }

    /// The hub's whole judgement of `site` at `secs`, as the hub makes it.
    fn judge(site: &FederatedCluster, seen: &MemberSighting, secs: i64) -> HubStatus<'static> {
        let mut j = hub_status(
            site,
            &live(secs),
            I,
            DEFAULT_CREDENTIAL_WARNING,
            None,
            at(secs),
        );
        judge_member(&mut j, site, Some(seen), None, at(secs));
        j.into_owned()
    }

    fn written(mut site: FederatedCluster, j: &HubStatus) -> FederatedCluster {
        site.status = j.transition(&site).or(site.status);
        site
    }

    fn member_condition(site: &FederatedCluster) -> Option<(String, String)> {
        site.status
            .as_ref()?
            .condition(CONDITION_MEMBER_CHANGED)
            .map(|c| (c.status.clone(), c.reason.clone()))
    }

    #[test]
    fn a_site_whose_member_changes_is_flagged_for_the_hold_then_cleared() {
        let site = FederatedCluster::test("a").connected().with_member(A);
        let mut seen = MemberSighting::first(&site, at(0));
        assert_eq!(seen.observe(Some(A), at(1)), None, "same member");
        // Never changed: no condition, nothing to write.
        let j = judge(&site, &seen, 1);
        let site = written(site, &j);
        assert_eq!(member_condition(&site), None);
        assert!(!judge(&site, &seen, 2).changed);

        // Another member reports for the site.
        let site = site.with_member(B);
        let change = seen.observe(Some(B), at(10)).unwrap();
        assert_eq!((change.from.as_str(), change.to.as_str()), (A, B));
        let j = judge(&site, &seen, 10);
        assert!(j.changed, "a write");
        let site = written(site, &j);
        assert_eq!(
            member_condition(&site),
            Some(("True".into(), MEMBER_CHANGED.into()))
        );
        let hold = MEMBER_CHANGE_HOLD.as_secs() as i64;
        assert!(!judge(&site, &seen, 20).changed, "no write while it holds");

        // It changes back (a second edge): still True, no new write.
        let site = site.with_member(A);
        assert!(seen.observe(Some(A), at(40)).is_some());
        let mut j = judge(&site, &seen, 40);
        assert!(!j.changed);
        // Judged again when the hold ends, if nothing comes sooner.
        j.requeue_after = None;
        judge_member(&mut j, &site, Some(&seen), None, at(40));
        assert_eq!(
            j.requeue_after,
            Some(MEMBER_CHANGE_HOLD + phase::TRANSITION_MARGIN)
        );

        // One member for the whole hold: False, once.
        let j = judge(&site, &seen, 40 + hold);
        assert!(j.changed);
        let site = written(site, &j);
        assert_eq!(
            member_condition(&site),
            Some(("False".into(), MEMBER_UNCHANGED.into()))
        );
        assert!(!judge(&site, &seen, 50 + hold).changed);
    }

    #[test]
    fn a_restarted_hub_holds_a_flag_it_finds_and_restores_a_forged_one() {
        let site = FederatedCluster::test("a").connected().with_member(A);
        let mut seen = MemberSighting::default();
        seen.observe(Some(B), at(0));
        seen.observe(Some(A), at(5));
        let flagged = written(site.clone(), &judge(&site, &seen, 5));
        // A new hub process finds it True: held a full period from now.
        let fresh = MemberSighting::first(&flagged, at(100));
        assert_eq!(fresh.changed_at, Some(at(100)));
        assert!(!judge(&flagged, &fresh, 100).changed);
        // A site whose member never changed, carrying a condition the
        // hub did not write: the hub's word replaces it.
        let forged = site.clone().with_condition(
            CONDITION_MEMBER_CHANGED,
            "True",
            "Whatever",
            "nothing to see",
            60,
        );
        let seen = MemberSighting {
            current: Some(A.into()),
            changed_at: None,
        };
        let j = judge(&forged, &seen, 10);
        assert!(j.changed);
        assert_eq!(
            member_condition(&written(forged, &j)),
            Some(("False".into(), MEMBER_UNCHANGED.into()))
        );
    }

    #[test]
    fn a_pull_site_is_judged_the_same_way() {
        let site = FederatedCluster::test("p")
            .pull()
            .connected()
            .with_member(B);
        let mut seen = MemberSighting::first(&site, at(0));
        seen.observe(Some(A), at(3));
        let mut j = pull_hub_status(
            &site,
            &live(3),
            I,
            None,
            DEFAULT_CREDENTIAL_WARNING,
            None,
            at(3),
        );
        judge_member(&mut j, &site, Some(&seen), None, at(3));
        assert!(j.changed);
        assert!(
            j.conditions
                .iter()
                .any(|c| c.type_ == CONDITION_MEMBER_CHANGED && c.status == "True")
        );
        assert!(PULL_CONDITION_TYPES.contains(&CONDITION_MEMBER_CHANGED));
        assert!(PUSH_CONDITION_TYPES.contains(&CONDITION_MEMBER_CHANGED));
    }
}

#[cfg(test)]
mod rejected_credential_tests {
    use super::*;
    use crate::api::fixtures::fixture_now;
    use crate::fleet::probe::ProbeFailure;

    const I: Duration = Duration::from_secs(30);

    fn verdict(outcome: ProbeOutcome) -> ProbeVerdict {
        ProbeVerdict {
            outcome,
            duration: Duration::from_millis(5),
            remediation: None,
        }
    }

    fn credential(site: &FederatedCluster, probe: Option<&ProbeVerdict>) -> (String, String) {
        let seen = Sighting {
            observation: Some(HeartbeatObservation {
                reported: fixture_now(),
                observed_at: fixture_now(),
            }),
            live: true,
        };
        let j = pull_hub_status(
            site,
            &seen,
            I,
            probe,
            DEFAULT_CREDENTIAL_WARNING,
            None,
            fixture_now(),
        );
        let c = j
            .conditions
            .iter()
            .find(|c| c.type_ == CONDITION_CREDENTIAL_EXPIRING)
            .unwrap();
        (c.status.clone(), c.reason.clone())
    }

    #[test]
    fn a_token_the_member_refuses_is_rejected_whatever_its_expiry() {
        let day = 24 * 3600;
        let site = FederatedCluster::test("p")
            .pull()
            .connected()
            .with_token_expiring_in(29 * day)
            .with_token_renewed_in(14 * day);
        let ok = verdict(ProbeOutcome::Reached { insecure: false });
        assert_eq!(
            credential(&site, Some(&ok)),
            ("False".into(), "RenewedByHub".into())
        );
        let refused = verdict(ProbeOutcome::Failed {
            failure: ProbeFailure::Unauthorized,
            message: "401".into(),
        });
        assert_eq!(
            credential(&site, Some(&refused)),
            ("True".into(), CREDENTIAL_REJECTED.into())
        );
        // Another failure says nothing about the credential.
        let timeout = verdict(ProbeOutcome::Failed {
            failure: ProbeFailure::Timeout,
            message: "slow".into(),
        });
        assert_eq!(
            credential(&site, Some(&timeout)),
            ("False".into(), "RenewedByHub".into())
        );
        // A hub that has not probed yet goes by the Connected it wrote.
        let stored =
            site.clone()
                .with_condition(CONDITION_CONNECTED, "False", "Unauthorized", "401", 60);
        assert_eq!(
            credential(&stored, None),
            ("True".into(), CREDENTIAL_REJECTED.into())
        );
        // A token past its expiry is refused for that: Expired.
        let expired = FederatedCluster::test("q")
            .pull()
            .connected()
            .with_token_expiring_in(-60);
        assert_eq!(
            credential(&expired, Some(&refused)),
            ("True".into(), "Expired".into())
        );
    }
}
