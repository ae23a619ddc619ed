//! The ledger: what the hub holds in memory about each site, one record
//! under one key ([`Known`]): its heartbeats as the hub saw them, the
//! conditions it last found to be its own word, the member cluster its
//! reports name, the signals and the dark period it last reported. Folded
//! by `Hub::observe` at every watch event, leader or not, so a new leader
//! knows what the old one counted; forgotten with the site.
//!
//! One record rather than a map per concern: each map held the site's name
//! and a table slot again (`docs/benchmarks-100k.md`, "Where the hub's
//! memory goes").

use jiff::Timestamp;

use crate::fleet::hub_status::{CheckedConditions, MemberChange, MemberSighting, Sighting};

/// What the hub holds in memory about one site: one record under one key
/// (a map per concern held the name once each, and a table each).
#[derive(Clone, Debug)]
pub(super) struct Known {
    /// Its heartbeats.
    pub(super) sighting: Sighting,
    /// The digest of the conditions this replica last wrote or checked
    /// (`hub_status::conditions_digest`); forgotten on becoming leader.
    pub(super) verified: Option<CheckedConditions>,
    /// The member identity its reports name (`MemberChanged`), observed
    /// leader or not.
    pub(super) member: MemberSighting,
    /// The signals it last reported (digests of their keys, sorted),
    /// observed leader or not, so a new leader does not count again what
    /// the old one counted.
    pub(super) signals: Box<[u64]>,
    /// The dark period (`status.lastDarkPeriod`: its from and to) it last
    /// reported, so each newly reported one is recorded once.
    pub(super) dark: Option<(Timestamp, Timestamp)>,
}

/// The digest of a signal's key ([`Known::signals`]).
pub(super) fn signal_digest(signal: &crate::api::Signal) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let mut h = std::hash::DefaultHasher::new();
    signal.key().hash(&mut h);
    h.finish()
}

/// The digests of `signals`' keys, sorted ([`Known::signals`]).
pub(super) fn signal_digests(signals: &[crate::api::Signal]) -> Box<[u64]> {
    sorted(signals.iter().map(signal_digest).collect())
}

/// `digests` sorted, as [`Known::signals`] holds them.
pub(super) fn sorted(mut digests: Vec<u64>) -> Box<[u64]> {
    digests.sort_unstable();
    digests.into_boxed_slice()
}

/// What observing one event of a site found, acted on once the ledger is
/// let go (logs, Events, metrics).
#[derive(Default)]
pub(super) struct Noticed {
    /// A new heartbeat while the hub watched.
    pub(super) heartbeat: bool,
    /// A change of the member cluster its reports name.
    pub(super) member: Option<MemberChange>,
    /// The signals not counted before (counted only while leading).
    pub(super) signals: Vec<crate::api::SignalType>,
    /// The dark period is one not recorded before.
    pub(super) dark: bool,
}
