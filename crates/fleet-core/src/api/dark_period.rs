//! `status.lastDarkPeriod`: the edge's own account of its latest dark
//! period — the time it could not reach the hub — from the journal it kept
//! on its member cluster meanwhile (docs/operations.md#dark-periods-explained-afterwards).
//!
//! Edge-owned and untrusted like every field a site writes: bounded by
//! the CRD (at most [`MAX_DARK_ENTRIES`] entries, short printable text,
//! exact date-times, a bounded `dropped`), and never read by the hub's
//! judgement (phase and conditions come from the hub's own clock and
//! sightings, not from what a site says happened). Its times are the
//! site's: `from` and `to` on the edge's clock, an entry's `time` on the
//! member's (a node condition's transition, a container's onset) or the
//! edge's.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{MAX_COUNT, PRINTABLE_TEXT_PATTERN};

/// Upper bound on `lastDarkPeriod.entries` (and on the edge's journal):
/// the oldest are dropped, and counted in `dropped`.
pub const MAX_DARK_ENTRIES: usize = 20;
/// Upper bound, in characters, on an entry's `subject`: a namespace, a
/// kind and an object name (`shop/Deployment/web`).
pub const MAX_DARK_SUBJECT_CHARS: usize = 384;
/// Upper bound, in characters, on an entry's `detail`.
pub const MAX_DARK_DETAIL_CHARS: usize = 256;

/// What a journal entry records.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum DarkEntryKind {
    /// The edge process started again while the site was dark.
    EdgeRestarted,
    /// A node's Ready condition left True (subject: the node; detail: its
    /// reason and message; time: the member's transition time).
    NodeNotReady,
    /// A node that was not ready is ready again.
    NodeReady,
    /// A failure began: a pod or workload failure, a node pressure, an
    /// inference service failing (detail: the signal type and message;
    /// time: its onset on the member).
    Failure,
    /// A failure recorded before ended.
    Recovered,
    /// The hub refused the site's credential (401 or 403).
    CredentialRejected,
    /// The hub answered with another error (not merely unreachable).
    HubError,
}

impl DarkEntryKind {
    /// The kind as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            DarkEntryKind::EdgeRestarted => "EdgeRestarted",
            DarkEntryKind::NodeNotReady => "NodeNotReady",
            DarkEntryKind::NodeReady => "NodeReady",
            DarkEntryKind::Failure => "Failure",
            DarkEntryKind::Recovered => "Recovered",
            DarkEntryKind::CredentialRejected => "CredentialRejected",
            DarkEntryKind::HubError => "HubError",
        }
    }

    /// Whether the hub records an Event for it: what went wrong, not
    /// what recovered.
    pub fn is_notable(self) -> bool {
        !matches!(self, DarkEntryKind::NodeReady | DarkEntryKind::Recovered)
    }
}

impl std::fmt::Display for DarkEntryKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// One thing the edge saw while it could not reach the hub.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DarkEntry {
    /// When it happened, on the site's clock (the member's own timestamp
    /// where it has one).
    pub time: Time,
    /// What happened.
    pub kind: DarkEntryKind,
    /// What it happened to: a node, `namespace/Kind/name`, or `edge`.
    #[schemars(length(max = MAX_DARK_SUBJECT_CHARS), regex(pattern = PRINTABLE_TEXT_PATTERN))]
    pub subject: String,
    /// Why, as the member or the hub said it (clipped).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = MAX_DARK_DETAIL_CHARS), regex(pattern = PRINTABLE_TEXT_PATTERN))]
    pub detail: String,
}

/// The edge's account of its latest dark period, reported when it
/// reaches the hub again.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DarkPeriod {
    /// When the edge first failed to reach the hub (edge clock).
    pub from: Time,
    /// When it reached the hub again (edge clock).
    pub to: Time,
    /// What it saw meanwhile, in time order: at most 20, the latest
    /// (`MAX_DARK_ENTRIES`).
    #[serde(default)]
    #[schemars(length(max = MAX_DARK_ENTRIES))]
    pub entries: Vec<DarkEntry>,
    /// Entries dropped, oldest first, to keep within the bound.
    #[serde(default)]
    #[schemars(range(min = 0, max = MAX_COUNT))]
    pub dropped: i64,
}
