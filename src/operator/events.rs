//! The hub leader's Kubernetes Events (docs/operations.md#events): phase
//! transitions of a site (reason: the new phase), a Pull site's probe
//! failures (`ProbeFailed`, when the failure class changes) and member
//! token renewals (`CredentialRenewed`, `CredentialRenewalFailed`), new
//! correlations,
//! cascades and grouped outages (about the FederationStatus `fleet`, the
//! incident's field path naming its id).
//!
//! Written by one task through kube's recorder (`k8s::events`), which
//! folds an object's repeats of one reason into a single Event whose
//! `series` count it patches, as Kubernetes' own recorder does. kube's
//! recorder does not rate-limit, so a flapping site could still cost a
//! request per transition: [`Budget`] gives each object a token bucket
//! like client-go's event spam filter (a burst, then one Event per
//! refill period), and a full queue drops Events rather than hold a
//! reconcile. Only the leader records (the callers write only while
//! leading).

use std::collections::HashMap;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event, EventType};
use tokio::sync::{mpsc, watch};

use crate::api::{FederatedCluster, Phase};
use crate::k8s::events::EventRecorder;

/// The `reportingController` of the hub's Events.
pub const REPORTER: &str = "fleet-operator-hub";
/// Events one object may have recorded at once.
pub const BURST: u32 = 25;
/// After the burst, one more Event per object per this period.
pub const REFILL: Duration = Duration::from_secs(5 * 60);
/// Events waiting to be written; more are dropped.
const QUEUE: usize = 1024;
/// Longest note (the API's limit is 1 kB).
const MAX_NOTE: usize = 1000;

/// One Event to record.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    /// What it is about.
    pub regarding: ObjectReference,
    /// A related object (a cascade's target site).
    pub related: Option<ObjectReference>,
    /// `Warning` or `Normal`.
    pub warning: bool,
    /// `PascalCase` reason.
    pub reason: &'static str,
    /// What the hub did.
    pub action: &'static str,
    /// For humans.
    pub note: String,
}

/// The reference of a site in its Events: without its resourceVersion,
/// which moves with every heartbeat, so repeats are one series.
pub fn site_ref(site: &FederatedCluster) -> ObjectReference {
    ObjectReference {
        api_version: Some(format!("{}/{}", crate::api::GROUP, crate::api::VERSION)),
        kind: Some("FederatedCluster".into()),
        name: Some(site.site_name().to_owned()),
        uid: site.metadata.uid.clone(),
        ..Default::default()
    }
}

/// The reference of the FederationStatus `fleet`, at `field_path` (an
/// incident: `status.outages{go-…}`), so each incident is its own series.
pub fn fleet_ref(field_path: String) -> ObjectReference {
    ObjectReference {
        api_version: Some(format!("{}/{}", crate::api::GROUP, crate::api::VERSION)),
        kind: Some("FederationStatus".into()),
        name: Some(crate::api::FEDERATION_STATUS_NAME.to_owned()),
        field_path: Some(field_path),
        ..Default::default()
    }
}

/// A site's phase transition: reason the new phase, a warning when it
/// is dark.
pub fn phase_changed(site: &FederatedCluster, from: Option<Phase>, to: Phase, why: &str) -> Note {
    let from = from.map_or("-", |p| p.as_str());
    let mut note = format!("{from} → {}", to.as_str());
    if !why.is_empty() {
        note.push_str(": ");
        note.push_str(why);
    }
    Note {
        regarding: site_ref(site),
        related: None,
        warning: matches!(to, Phase::Stale | Phase::Unreachable),
        reason: to.as_str(),
        action: "Judge",
        note: bounded(note),
    }
}

/// Another Event about a site (Pull probes and credentials:
/// `ProbeFailed`, `CredentialRenewed`, `CredentialRenewalFailed`).
pub fn about_site(
    site: &FederatedCluster,
    warning: bool,
    reason: &'static str,
    action: &'static str,
    note: String,
) -> Note {
    Note {
        regarding: site_ref(site),
        related: None,
        warning,
        reason,
        action,
        note: bounded(note),
    }
}

/// An incident of the fleet summary (`CorrelationDetected`,
/// `CascadeDetected`, `GroupedOutage`).
pub fn incident(reason: &'static str, field: &str, id: &str, note: String) -> Note {
    Note {
        regarding: fleet_ref(format!("status.{field}{{{id}}}")),
        related: None,
        warning: true,
        reason,
        action: "Summarize",
        note: bounded(note),
    }
}

/// `s` cut to the note limit on a character boundary.
fn bounded(mut s: String) -> String {
    if s.len() > MAX_NOTE {
        let mut cut = MAX_NOTE - 3;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

/// Per-object token buckets: [`BURST`] Events, then one per [`REFILL`].
#[derive(Debug, Default)]
pub struct Budget {
    buckets: HashMap<String, (f64, Timestamp)>,
}

impl Budget {
    /// Whether an Event about `object` may be recorded at `now` (and
    /// takes its token).
    pub fn allow(&mut self, object: &str, now: Timestamp) -> bool {
        let per_second = 1.0 / REFILL.as_secs_f64();
        let (tokens, last) = self
            .buckets
            .entry(object.to_owned())
            .or_insert((f64::from(BURST), now));
        let elapsed = now.duration_since(*last).as_secs_f64().max(0.0);
        *tokens = (*tokens + elapsed * per_second).min(f64::from(BURST));
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Forgets buckets full again by `now`, so the map follows the fleet.
    fn prune(&mut self, now: Timestamp) {
        let full = REFILL.as_secs_f64() * f64::from(BURST);
        self.buckets
            .retain(|_, (_, last)| now.duration_since(*last).as_secs_f64() < full);
    }
}

/// Where the hub sends its Events; a sink without a writer drops them
/// (tests, and a hub told not to record).
#[derive(Clone, Debug, Default)]
pub struct EventSink(Option<mpsc::Sender<Note>>);

impl EventSink {
    /// Queues `note` (dropped when the queue is full).
    pub fn record(&self, note: Note) {
        if let Some(tx) = &self.0
            && tx.try_send(note).is_err()
        {
            tracing::debug!("event queue full: event dropped");
        }
    }
}

/// A sink and the task writing what it is given through `recorder`,
/// until shutdown.
pub fn spawn(recorder: EventRecorder, mut shutdown: watch::Receiver<bool>) -> EventSink {
    let (tx, mut rx) = mpsc::channel::<Note>(QUEUE);
    tokio::spawn(async move {
        let mut budget = Budget::default();
        let mut failing = false;
        loop {
            let note = tokio::select! {
                n = rx.recv() => match n { Some(n) => n, None => return },
                _ = shutdown.wait_for(|s| *s) => return,
            };
            let now = Timestamp::now();
            budget.prune(now);
            let key = format!(
                "{}/{}",
                note.regarding.kind.as_deref().unwrap_or_default(),
                note.regarding.name.as_deref().unwrap_or_default()
            );
            if !budget.allow(&key, now) {
                tracing::debug!(object = %key, reason = note.reason, "event rate-limited");
                continue;
            }
            let event = Event {
                type_: if note.warning {
                    EventType::Warning
                } else {
                    EventType::Normal
                },
                reason: note.reason.to_owned(),
                note: Some(note.note),
                action: note.action.to_owned(),
                secondary: note.related,
            };
            match recorder.publish(&event, &note.regarding).await {
                Ok(()) => failing = false,
                Err(e) => {
                    if !failing {
                        tracing::warn!(error = %e, "could not record an Event (needs create and patch on events.k8s.io events)");
                    }
                    failing = true;
                }
            }
        }
    });
    EventSink(Some(tx))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::fixtures::fixture_now;

    #[test]
    fn a_flapping_site_gets_a_burst_then_one_event_per_period() {
        let mut b = Budget::default();
        let now = fixture_now();
        // A transition every second for an hour.
        let mut allowed = 0;
        for s in 0..3600 {
            if b.allow(
                "FederatedCluster/flappy",
                now + jiff::SignedDuration::from_secs(s),
            ) {
                allowed += 1;
            }
        }
        assert_eq!(
            allowed,
            BURST as usize + 3600 / REFILL.as_secs() as usize - 1
        );
        // Another site is not held back by it.
        assert!(b.allow(
            "FederatedCluster/calm",
            now + jiff::SignedDuration::from_secs(3600)
        ));
        // Full buckets are forgotten.
        b.prune(now + jiff::SignedDuration::from_secs(10 * 86_400));
        assert!(b.buckets.is_empty());
    }

    #[test]
    fn notes_name_the_transition_and_are_bounded() {
        let site = FederatedCluster::test("site-a");
        let n = phase_changed(
            &site,
            Some(Phase::Connected),
            Phase::Stale,
            "no heartbeat for 3 intervals",
        );
        assert_eq!(n.reason, "Stale");
        assert!(n.warning);
        assert_eq!(n.note, "Connected → Stale: no heartbeat for 3 intervals");
        assert_eq!(n.regarding.resource_version, None);
        assert!(!phase_changed(&site, Some(Phase::Stale), Phase::Connected, "").warning);
        let long = incident("GroupedOutage", "outages", "go-0000abcd", "é".repeat(900));
        assert!(long.note.len() <= MAX_NOTE);
        assert_eq!(
            long.regarding.field_path.as_deref(),
            Some("status.outages{go-0000abcd}")
        );
    }
}
