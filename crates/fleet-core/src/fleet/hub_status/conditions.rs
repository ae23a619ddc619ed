//! The conditions a judgement writes: how each is set and compared, which
//! types the hub owns, and what it remembers of them ([`CheckedConditions`]).

use std::borrow::Cow;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use crate::api::{
    CONDITION_CLOCK_SKEW, CONDITION_CONNECTED, CONDITION_CREDENTIAL_EXPIRING,
    CONDITION_MEMBER_CHANGED, CONDITION_REMEDIATION_CAPABLE, FederatedCluster,
    FederatedClusterStatus, Mode, Phase, Unreadable, WireEnum,
};
use crate::fleet::phase::{self};

/// The reason of a Push site's `Connected` condition: what the hub made of
/// its heartbeats (docs/operations.md#condition-reasons). A Pull site's
/// `Connected` says what its latest probe found instead
/// ([`crate::fleet::probe::ProbeFailure`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HeartbeatReason {
    /// `Unknown`: no heartbeat yet (phase `Pending`).
    NeverHeardFrom,
    /// `True`: a heartbeat within 3 intervals (phase `Connected`).
    HeartbeatReceived,
    /// `False`: none for more than 3 intervals (phase `Stale`).
    HeartbeatStale,
    /// `False`: none for more than 10 intervals (phase `Unreachable`).
    HeartbeatMissing,
    /// The hub could not read the whole site object (either mode): the
    /// status follows the phase, the message names the keys.
    InvalidStatus,
    /// `False`: silent as its schedule expects, inside an offline window
    /// or its longest absence (phase `Sleeping`, `spec.connectivity`).
    Sleeping,
    /// `False`: still silent past the end of its offline window or longest
    /// absence plus the grace (phase `Stale` or `Unreachable` by its
    /// heartbeat's age, `spec.connectivity`).
    LateToWake,
}

impl HeartbeatReason {
    /// Every value, in declaration order.
    pub const ALL: &[HeartbeatReason] = &[
        HeartbeatReason::NeverHeardFrom,
        HeartbeatReason::HeartbeatReceived,
        HeartbeatReason::HeartbeatStale,
        HeartbeatReason::HeartbeatMissing,
        HeartbeatReason::InvalidStatus,
        HeartbeatReason::Sleeping,
        HeartbeatReason::LateToWake,
    ];

    /// The reason as written in the condition.
    pub const fn as_str(self) -> &'static str {
        match self {
            HeartbeatReason::NeverHeardFrom => "NeverHeardFrom",
            HeartbeatReason::HeartbeatReceived => "HeartbeatReceived",
            HeartbeatReason::HeartbeatStale => "HeartbeatStale",
            HeartbeatReason::HeartbeatMissing => "HeartbeatMissing",
            HeartbeatReason::InvalidStatus => "InvalidStatus",
            HeartbeatReason::Sleeping => "Sleeping",
            HeartbeatReason::LateToWake => "LateToWake",
        }
    }

    /// The reason and the condition status of a site in `phase`.
    pub const fn of_phase(phase: Phase) -> (&'static str, HeartbeatReason) {
        match phase {
            Phase::Pending => ("Unknown", HeartbeatReason::NeverHeardFrom),
            Phase::Connected => ("True", HeartbeatReason::HeartbeatReceived),
            Phase::Stale => ("False", HeartbeatReason::HeartbeatStale),
            Phase::Unreachable => ("False", HeartbeatReason::HeartbeatMissing),
            Phase::Sleeping => ("False", HeartbeatReason::Sleeping),
        }
    }
}

impl WireEnum for HeartbeatReason {
    const WHAT: &'static str = "heartbeat reason";
    const ALL: &'static [Self] = HeartbeatReason::ALL;

    fn as_str(self) -> &'static str {
        HeartbeatReason::as_str(self)
    }
}

/// The condition reason of a site the hub could not read whole.
pub(crate) const INVALID_STATUS: &str = HeartbeatReason::InvalidStatus.as_str();

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
pub(super) fn invalid_state<'a>(
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
pub(super) fn set_connected(
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
    /// write, else what the object already holds (see [`clock_offset`](super::push::clock_offset)).
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

/// Every condition type the hub writes, on a site of either mode: the
/// union of [`PUSH_CONDITION_TYPES`] and [`PULL_CONDITION_TYPES`]. No
/// other writer may set conditions
/// (docs/architecture.md#who-writes-which-status-key), so any other type
/// found on a site is not the hub's word.
#[cfg(test)]
pub(super) fn hub_condition_types() -> Vec<&'static str> {
    let mut all = PUSH_CONDITION_TYPES.to_vec();
    all.extend(
        PULL_CONDITION_TYPES
            .iter()
            .filter(|t| !PUSH_CONDITION_TYPES.contains(t)),
    );
    all
}

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
pub(super) enum Check {
    /// They are what the hub last wrote or checked: statuses and reasons.
    Transitions,
    /// Unknown or changed by someone else: everything, messages included.
    Full,
}

/// Drops conditions of types not in `owned`, and repeats of a type;
/// returns whether any went.
pub(super) fn keep_owned(conditions: &mut Cow<'_, [Condition]>, owned: &[&str]) -> bool {
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

    /// Whether `status` holds this decision already (the keys
    /// [`HubStatus::transition`] would write, as they would be written).
    pub fn is_in(&self, status: &FederatedClusterStatus) -> bool {
        status.phase == Some(self.phase)
            && status.phase_transition_time == self.phase_transition_time
            && status.conditions.as_deref() == Some(&*self.conditions)
            && status.clock_offset_seconds == self.clock_offset_seconds
    }

    /// Whether `status` holds the decision this judgement makes, whenever
    /// it was stamped: [`HubStatus::is_in`] without the phase's and the
    /// conditions' transition times. Two judgements of one version of a
    /// site differ in those times only where they stamp a change with their
    /// own `now`, so a stand-in for a write not made yet, judged again
    /// while the write waits, is the same decision and need not be built
    /// again (at 100,000 sites behind the write rate, a new copy of every
    /// waiting site at every summary held two copies of each).
    pub fn decides_as(&self, status: &FederatedClusterStatus) -> bool {
        status.phase == Some(self.phase)
            && status.phase_transition_time.is_some() == self.phase_transition_time.is_some()
            && status.clock_offset_seconds == self.clock_offset_seconds
            && status.conditions.as_deref().is_some_and(|held| {
                held.len() == self.conditions.len()
                    && held
                        .iter()
                        .zip(self.conditions.iter())
                        .all(|(a, b)| same_decision(a, b))
            })
    }

    /// What writing this decision changes in `status`, for the log: the
    /// keys (`phase`, `phaseTransitionTime`, `clockOffsetSeconds`) and the
    /// condition types whose status, reason, message or observed
    /// generation move, each once.
    pub fn changes<'s>(&'s self, status: Option<&'s FederatedClusterStatus>) -> Vec<&'s str> {
        let mut out = Vec::new();
        let held = |f: &dyn Fn(&FederatedClusterStatus) -> bool| status.is_some_and(f);
        if !held(&|s| s.phase == Some(self.phase)) {
            out.push("phase");
        }
        if !held(&|s| s.phase_transition_time == self.phase_transition_time) {
            out.push("phaseTransitionTime");
        }
        if !held(&|s| s.clock_offset_seconds == self.clock_offset_seconds) {
            out.push("clockOffsetSeconds");
        }
        let before = status.and_then(|s| s.conditions.as_deref()).unwrap_or(&[]);
        for c in self.conditions.iter() {
            let same = before
                .iter()
                .find(|b| b.type_ == c.type_)
                .is_some_and(|b| same_decision(b, c));
            if !same && !out.contains(&c.type_.as_str()) {
                out.push(&c.type_);
            }
        }
        for b in before {
            if !self.conditions.iter().any(|c| c.type_ == b.type_)
                && !out.contains(&b.type_.as_str())
            {
                out.push(&b.type_);
            }
        }
        out
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

/// Whether two conditions say the same, whenever each was stamped: all
/// but their transition times.
fn same_decision(a: &Condition, b: &Condition) -> bool {
    a.type_ == b.type_
        && a.status == b.status
        && a.reason == b.reason
        && a.message == b.message
        && a.observed_generation == b.observed_generation
}

/// A hub condition's status and reason, and its message, which is built
/// only when the condition is written (a judgement that changes nothing
/// formats nothing).
pub(super) struct CondState<M: FnOnce() -> String> {
    pub(super) status: &'static str,
    pub(super) reason: &'static str,
    pub(super) message: M,
}

impl<M: FnOnce() -> String> CondState<M> {
    pub(super) fn new(status: &'static str, reason: &'static str, message: M) -> Self {
        CondState {
            status,
            reason,
            message,
        }
    }
}

pub(super) fn human(d: Duration) -> String {
    crate::fleet::age::human_duration(SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX))
}

#[cfg(any(test, feature = "fixtures"))]
pub(super) fn connected_state(
    phase: Phase,
    interval: Duration,
) -> CondState<impl FnOnce() -> String> {
    scheduled_connected_state(phase, false, interval)
}

/// `Connected` for `phase`, and whether the site is `late` to wake
/// (`fleet::connectivity`): then the reason is `LateToWake` whatever the
/// phase its heartbeat's age gives (Stale or Unreachable).
pub(super) fn scheduled_connected_state(
    phase: Phase,
    late: bool,
    interval: Duration,
) -> CondState<impl FnOnce() -> String> {
    let (status, reason) = if late {
        ("False", HeartbeatReason::LateToWake)
    } else {
        HeartbeatReason::of_phase(phase)
    };
    CondState::new(status, reason.as_str(), move || match phase {
        _ if late => format!(
            "no heartbeat since before the end of its offline window or longest absence (spec.connectivity), and none in the {} (3 intervals) after it: late to wake",
            human(interval * crate::fleet::connectivity::GRACE_INTERVALS)
        ),
        Phase::Sleeping => format!(
            "no heartbeat, as its schedule expects (spec.connectivity): asleep until its offline window or longest absence ends, plus {} (3 intervals)",
            human(interval * crate::fleet::connectivity::GRACE_INTERVALS)
        ),
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

/// What a judgement starts from: the phase transition time (now when the
/// phase changes), the conditions the hub holds (borrowed), and whether the
/// phase changed (which alone makes a write).
pub(super) fn starting_point(
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

/// A condition message within the CRD's bounds: printable (no control or
/// format character) and at most its length (a Pull probe's message
/// quotes what the member answered, which has no bound of its own).
pub(super) fn bounded_message(message: String) -> String {
    let message = match crate::fleet::bounds::printable(&message) {
        Cow::Borrowed(_) => message,
        Cow::Owned(clean) => clean,
    };
    match crate::fleet::bounds::cut_to(&message, crate::api::MAX_CONDITION_MESSAGE_CHARS) {
        Cow::Borrowed(_) => message,
        Cow::Owned(cut) => cut,
    }
}

pub(super) fn new_condition(
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
pub(super) fn set_condition(
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

/// How the stored conditions are checked, and their digest: a full check
/// unless they are what the hub `remembered` (see the module documentation).
pub(super) fn check_for(
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

/// The phase a silent site has given its schedule (`fleet::connectivity`):
/// `Sleeping` instead of Stale or Unreachable while its schedule expects
/// the silence; whether it is late to wake; and when that may change. A
/// site heard from or never heard from is judged without it.
pub(super) fn with_schedule(
    phase: Phase,
    observed_at: Option<Timestamp>,
    schedule: Option<&crate::fleet::connectivity::Schedule>,
    interval: Duration,
    now: Timestamp,
) -> Scheduled {
    use crate::fleet::connectivity::{Expectation, expect};
    let as_usual = Scheduled {
        phase,
        late: false,
        back_by: None,
        next: None,
    };
    let (Some(observed_at), Some(schedule), Phase::Stale | Phase::Unreachable) =
        (observed_at, schedule.filter(|s| !s.is_empty()), phase)
    else {
        return as_usual;
    };
    match expect(schedule, observed_at, interval, now) {
        (Expectation::Sleeping { back_by }, next) => Scheduled {
            phase: Phase::Sleeping,
            back_by: Some(back_by),
            next,
            ..as_usual
        },
        (Expectation::LateToWake { .. }, next) => Scheduled {
            late: true,
            next,
            ..as_usual
        },
        (Expectation::AsUsual, next) => Scheduled { next, ..as_usual },
    }
}

/// What a site's schedule makes of its judgement ([`with_schedule`]).
pub(super) struct Scheduled {
    /// The phase.
    pub(super) phase: Phase,
    /// Late to wake.
    pub(super) late: bool,
    /// When a Sleeping site is due back.
    pub(super) back_by: Option<Timestamp>,
    /// When the schedule's verdict may change.
    pub(super) next: Option<Duration>,
}

/// Whether the hub judged `site` late to wake: its `Connected` condition
/// has the reason `LateToWake` (phase Stale or Unreachable).
pub fn is_late_to_wake(site: &crate::api::FederatedCluster) -> bool {
    site.status
        .as_ref()
        .and_then(|s| s.condition(crate::api::CONDITION_CONNECTED))
        .is_some_and(|c| c.status == "False" && c.reason == HeartbeatReason::LateToWake.as_str())
}
