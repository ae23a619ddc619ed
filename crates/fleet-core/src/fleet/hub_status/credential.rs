//! `CredentialExpiring`, for both modes: one timeline of a credential's life.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use super::conditions::*;
use crate::fleet::phase::{self};

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
///
/// A site asleep as its schedule expects (`back_by`: when it is due back,
/// `fleet::connectivity`) whose credential expires before then is True
/// with the reason [`EXPIRES_BEFORE_RETURN`], whoever renews it: an edge
/// cannot renew while it is offline, so the site would return with a dead
/// token.
pub(super) fn credential_state(
    site: &str,
    expires: Option<Timestamp>,
    renews: Option<Timestamp>,
    back_by: Option<Timestamp>,
    warning: Duration,
    interval: Duration,
    now: Timestamp,
) -> (CondState<impl FnOnce() -> String + '_>, Option<Duration>) {
    use Credential::*;
    let (state, next) = credential_timeline(expires, renews, warning, interval, now);
    let state = match (state, expires, back_by) {
        (Expired | NotReported, ..) => state,
        (_, Some(exp), Some(back)) if exp < back => LapsesAsleep,
        _ => state,
    };
    let (status, reason) = state.status_and_reason("RenewedByEdge");
    let message = move || {
        let rotate =
            || format!("run `kubectl fleet rotate {site}` and give the edge the new configuration");
        match state {
            NotReported => "the edge has not reported when its hub credential expires".to_owned(),
            LapsesAsleep => format!(
                "the site's hub credential expires before the site is expected back from its offline window or longest absence (spec.connectivity), and its edge cannot renew it while offline, so it would return with a dead token: {} before it returns (docs/operations.md#a-site-that-returns-with-a-dead-token)",
                rotate()
            ),
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
pub(super) enum Credential {
    NotReported,
    Expired,
    /// Renewed by its holder, but the renewal is overdue by `grace`.
    RenewalOverdue,
    /// Renewed by its holder, on time.
    Renewed,
    /// Not renewed by its holder, and within `warning` of its expiry.
    ExpiresSoon,
    Valid,
    /// The site sleeps (`fleet::connectivity`) and the credential expires
    /// before it is due back: nothing can renew it in time.
    LapsesAsleep,
}

/// The `CredentialExpiring` reason of a sleeping site whose credential
/// expires before it is expected back.
pub const EXPIRES_BEFORE_RETURN: &str = "ExpiresBeforeReturn";

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
            Credential::LapsesAsleep => ("True", EXPIRES_BEFORE_RETURN),
        }
    }
}

/// The state of a credential that `expires` and (when its holder renews
/// it) `renews`, its holder reporting every `interval`, and how long until
/// that state can next change (plus [`phase::TRANSITION_MARGIN`]): the one
/// timeline behind both `CredentialExpiring` judgements.
pub(super) fn credential_timeline(
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

/// The `Connected` reason of a Pull site whose member answers 401.
pub(super) const REJECTED_BY_MEMBER: &str = "Unauthorized";

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
/// that stores a fresh credential. A site asleep as its schedule expects
/// (`back_by`, as for [`credential_state`]) whose credential expires before
/// it is due back is True with [`EXPIRES_BEFORE_RETURN`]: the hub cannot
/// renew a token on a member it cannot reach.
#[allow(clippy::too_many_arguments)]
pub(super) fn pull_credential_state(
    site: &str,
    rejected: bool,
    expires: Option<Timestamp>,
    renews: Option<Timestamp>,
    back_by: Option<Timestamp>,
    warning: Duration,
    interval: Duration,
    now: Timestamp,
) -> (CondState<impl FnOnce() -> String + '_>, Option<Duration>) {
    use Credential::*;
    let (state, next) = credential_timeline(expires, renews, warning, interval, now);
    let state = match (state, expires, back_by) {
        (Expired | NotReported, ..) => state,
        (_, Some(exp), Some(back)) if exp < back => LapsesAsleep,
        _ => state,
    };
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
            LapsesAsleep => format!(
                "the site's member credential expires before the site is expected back from its offline window or longest absence (spec.connectivity), and the hub cannot renew it while the member is offline: {} before it returns",
                register()
            ),
        }
    };
    (CondState::new(status, reason, message), next)
}

/// Whether the hub judged that `site`'s credential expires before the
/// site is back from its sleep (`CredentialExpiring` True with the reason
/// `ExpiresBeforeReturn`).
pub fn credential_expires_before_return(site: &crate::api::FederatedCluster) -> bool {
    site.status
        .as_ref()
        .and_then(|s| s.condition(crate::api::CONDITION_CREDENTIAL_EXPIRING))
        .is_some_and(|c| c.status == "True" && c.reason == EXPIRES_BEFORE_RETURN)
}
