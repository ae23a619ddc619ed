//! The edge's dark-period journal (docs/operations.md#dark-periods-explained-afterwards):
//! while the edge cannot reach the hub it notes, with the site's own
//! timestamps, what it sees on its member cluster — nodes leaving and
//! regaining Ready (with the kubelet's reason), failures starting and
//! ending (the signals it collects anyway), its own restarts and the hub
//! refusing its credential — and reports a bounded summary
//! (`status.lastDarkPeriod`) once it reaches the hub again.
//!
//! Pure: the edge keeps it in a ConfigMap on its member cluster
//! (`k8s::journal`) so it survives restarts, and passes the clock in.
//! Bounded: at most [`MAX_DARK_ENTRIES`] entries (the oldest dropped and
//! counted), each clipped to the CRD's caps, and at most
//! [`MAX_TRACKED_NODES`] not-ready nodes remembered to compare with.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::{Deserialize, Serialize};

use crate::api::{DarkEntry, DarkEntryKind, DarkPeriod, MAX_DARK_ENTRIES, Signal, SignalType};
use crate::fleet::bounds::{clip_dark_entry, clip_dark_period};

/// Not-ready nodes the journal remembers to tell a transition (a larger
/// outage still records its first ones, and the count of entries dropped).
pub const MAX_TRACKED_NODES: usize = 1000;

/// The subject of entries about the edge itself.
pub const EDGE_SUBJECT: &str = "edge";

/// A node's readiness as the member reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeReadiness {
    /// The node's name.
    pub name: String,
    /// Whether its Ready condition is True.
    pub ready: bool,
    /// The condition's reason and message, as one text.
    pub why: String,
    /// The condition's lastTransitionTime (the member's clock).
    pub since: Option<Timestamp>,
}

/// The readiness of each of `nodes` (a node without a Ready condition is
/// not ready).
pub fn node_readiness(nodes: &[Node]) -> Vec<NodeReadiness> {
    nodes
        .iter()
        .map(|n| {
            let ready = n
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_deref())
                .and_then(|c| c.iter().find(|c| c.type_ == "Ready"));
            let why = ready.map_or_else(
                || "no Ready condition".to_owned(),
                |c| {
                    let parts: Vec<&str> = [c.reason.as_deref(), c.message.as_deref()]
                        .into_iter()
                        .flatten()
                        .filter(|s| !s.is_empty())
                        .collect();
                    parts.join(": ")
                },
            );
            NodeReadiness {
                name: n.metadata.name.clone().unwrap_or_default(),
                ready: ready.is_some_and(|c| c.status == "True"),
                why,
                since: ready.and_then(|c| c.last_transition_time.as_ref().map(|t| t.0)),
            }
        })
        .collect()
}

/// A failure the journal knows of, to tell when it ends.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct KnownFailure {
    /// The signal type.
    #[serde(rename = "type")]
    pub type_: SignalType,
    /// What it is about (`namespace/Kind/name`, or a node).
    pub subject: String,
}

/// What the member looked like at the latest read: the baseline the next
/// one is compared with.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Seen {
    /// Nodes whose Ready condition was not True.
    #[serde(default)]
    pub not_ready: BTreeSet<String>,
    /// Failures other than a node not being ready, by signal key.
    #[serde(default)]
    pub failures: BTreeMap<String, KnownFailure>,
}

/// The journal: empty while the edge reaches the hub, filled while it
/// does not.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Journal {
    /// When the edge first failed to reach the hub (edge clock); None
    /// while it reaches it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dark_since: Option<Time>,
    /// What it saw, in the order it saw it (at most [`MAX_DARK_ENTRIES`]).
    #[serde(default)]
    pub entries: Vec<DarkEntry>,
    /// Entries dropped, oldest first.
    #[serde(default)]
    pub dropped: i64,
    /// The cause of the latest failed report, to note each change once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_cause: Option<String>,
    /// The member at the latest read (None: not read yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen: Option<Seen>,
}

/// The subject of a signal: `namespace/Kind/name`, or the object's name
/// when it is cluster-scoped (a node).
fn subject(s: &Signal) -> String {
    if s.namespace.is_empty() {
        s.workload.name.clone()
    } else {
        format!("{}/{}/{}", s.namespace, s.workload.kind, s.workload.name)
    }
}

impl Journal {
    /// Whether the edge is dark (it failed to reach the hub since it last
    /// reported).
    pub fn is_dark(&self) -> bool {
        self.dark_since.is_some()
    }

    /// Adds an entry (clipped to the CRD's caps), dropping the oldest
    /// beyond [`MAX_DARK_ENTRIES`].
    pub fn push(&mut self, mut entry: DarkEntry) {
        clip_dark_entry(&mut entry);
        self.entries.push(entry);
        let over = self.entries.len().saturating_sub(MAX_DARK_ENTRIES);
        if over > 0 {
            self.entries.drain(..over);
            self.dropped = self
                .dropped
                .saturating_add(i64::try_from(over).unwrap_or(i64::MAX));
        }
    }

    fn note(&mut self, time: Timestamp, kind: DarkEntryKind, subject: &str, detail: &str) {
        self.push(DarkEntry {
            time: Time(time),
            kind,
            subject: subject.to_owned(),
            detail: detail.to_owned(),
        });
    }

    /// A report failed at `now` (edge clock) because of `cause` (a short
    /// stable name); `entry` is the kind and text to note when the hub
    /// answered with a refusal or an error rather than not at all. The dark
    /// period begins with the first failure; each change of cause is noted
    /// once.
    pub fn report_failed(
        &mut self,
        now: Timestamp,
        cause: &str,
        entry: Option<(DarkEntryKind, &str)>,
    ) {
        if self.dark_since.is_none() {
            self.dark_since = Some(Time(now));
        }
        if self.last_cause.as_deref() == Some(cause) {
            return;
        }
        self.last_cause = Some(cause.to_owned());
        if let Some((kind, detail)) = entry {
            self.note(now, kind, "hub", detail);
        }
    }

    /// The edge process started at `now` (edge clock): an entry when the
    /// journal it found was dark (it restarted during the dark period).
    pub fn edge_started(&mut self, now: Timestamp, version: &str) {
        if self.is_dark() {
            self.note(
                now,
                DarkEntryKind::EdgeRestarted,
                EDGE_SUBJECT,
                &format!("edge {version} started"),
            );
        }
    }

    /// Compares a read of the member with the previous one: while dark,
    /// each node that left or regained Ready and each failure that began
    /// or ended is an entry (a transition at the member's own time where
    /// it has one, else `now`); either way the read becomes the baseline.
    /// The first read has nothing to compare with and notes nothing.
    pub fn observe(&mut self, nodes: &[NodeReadiness], signals: &[Signal], now: Timestamp) {
        let mut next = Seen::default();
        for n in nodes.iter().filter(|n| !n.ready) {
            if next.not_ready.len() < MAX_TRACKED_NODES {
                next.not_ready.insert(n.name.clone());
            }
        }
        for s in signals
            .iter()
            .filter(|s| s.type_ != SignalType::NodeNotReady)
        {
            next.failures.insert(
                s.key(),
                KnownFailure {
                    type_: s.type_,
                    subject: subject(s),
                },
            );
        }
        if let (Some(before), true) = (self.seen.take(), self.is_dark()) {
            for n in nodes {
                let was = before.not_ready.contains(&n.name);
                let is = next.not_ready.contains(&n.name);
                let at = n.since.unwrap_or(now);
                match (was, is) {
                    (false, true) => self.note(at, DarkEntryKind::NodeNotReady, &n.name, &n.why),
                    (true, false) if n.ready => {
                        self.note(at, DarkEntryKind::NodeReady, &n.name, &n.why);
                    }
                    _ => {}
                }
            }
            for s in signals
                .iter()
                .filter(|s| s.type_ != SignalType::NodeNotReady)
            {
                if !before.failures.contains_key(&s.key()) {
                    let detail = match &s.message {
                        Some(m) if !m.is_empty() => format!("{}: {m}", s.type_),
                        _ => s.type_.to_string(),
                    };
                    self.note(s.first_seen.0, DarkEntryKind::Failure, &subject(s), &detail);
                }
            }
            for (key, f) in &before.failures {
                if !next.failures.contains_key(key) {
                    self.note(now, DarkEntryKind::Recovered, &f.subject, f.type_.as_str());
                }
            }
        }
        self.seen = Some(next);
    }

    /// The dark period to report at `now` (edge clock), when there is one:
    /// its entries in time order.
    pub fn summary(&self, now: Timestamp) -> Option<DarkPeriod> {
        let from = self.dark_since.clone()?;
        let mut entries = self.entries.clone();
        entries.sort_by_key(|e| e.time.0);
        let mut dark = DarkPeriod {
            from,
            to: Time(now),
            entries,
            dropped: self.dropped,
        };
        clip_dark_period(&mut dark);
        Some(dark)
    }

    /// The dark period was reported: the journal starts again, keeping
    /// only the baseline.
    pub fn reported(&mut self) {
        *self = Journal {
            seen: self.seen.take(),
            ..Journal::default()
        };
    }
}

#[cfg(test)]
mod tests;
