//! The hub leader's Kubernetes Events (docs/operations.md#events): phase
//! transitions of a site (reason: the new phase), a Pull site's probe
//! failures (`ProbeFailed`, when the failure class changes) and member
//! token renewals (`CredentialRenewed`, `CredentialRenewalFailed`), and the
//! fleet's incidents (about the FederationStatus `fleet`, the incident's
//! field path naming its id): a correlation detected, grown (a site
//! joined) and ended, a cascade detected, a grouped outage detected, grown
//! and ended ([`incident_notes`]).
//!
//! Written by one task through kube's recorder (`k8s::events`), which
//! folds an object's repeats of one reason into a single Event whose
//! `series` count it patches, as Kubernetes' own recorder does — keeping
//! the first note, so every note here is worded to stay true when it is
//! repeated. kube's recorder does not rate-limit, so a flapping site could
//! still cost a request per transition: [`Budget`] gives each site, and
//! each incident, a token bucket like client-go's event spam filter (a
//! burst, then one Event per refill period), and a full queue drops Events
//! rather than hold a reconcile. An incident's bucket is its identity's
//! (a correlation's signal type, a cascade's id, an outage's group), which
//! outlives a recurrence, so a signal flapping in and out of a
//! correlation spends its own bucket only; each kind of incident also has
//! a larger shared bucket, so many incidents of one kind (a flood of
//! cascades) cannot silence another kind (a grouped outage). Only the
//! leader records (the callers write only while leading).

use std::collections::HashMap;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event, EventType};
use tokio::sync::{mpsc, watch};

use crate::api::{FederatedCluster, FederationStatusStatus, Phase};
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

/// An incident's share of the Event budget after its own bucket: the
/// bucket of its kind, shared by every incident of that kind.
pub const KIND_BURST: u32 = 100;
/// After [`KIND_BURST`], one more Event of a kind per this period.
pub const KIND_REFILL: Duration = Duration::from_secs(30);

/// One Event to record.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    /// The token buckets it spends ([`Budget`]): the site's or the
    /// incident's own, then, for an incident, its kind's.
    pub budget: (String, Option<&'static str>),
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
        budget: (site_budget(site), None),
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
        budget: (site_budget(site), None),
        regarding: site_ref(site),
        related: None,
        warning,
        reason,
        action,
        note: bounded(note),
    }
}

/// A site that turned late to wake (silent past its schedule): what to
/// check for its mode — a Push site's edge operator, a Pull site's member
/// API server, which the hub probes.
pub fn late_to_wake(site: &FederatedCluster) -> Note {
    let check = match site.spec.mode {
        crate::api::Mode::Push => "edge operator",
        crate::api::Mode::Pull => "member cluster's API server (the hub probes it)",
    };
    about_site(
        site,
        true,
        "LateToWake",
        "Judge",
        format!(
            "still silent past its offline window or longest absence (spec.connectivity) plus 3 intervals: check the site's power, uplink and {check}, or `kubectl fleet schedule` its new hours"
        ),
    )
}

/// Events about one reported dark period beyond its summary: its first
/// notable entries (`DarkPeriodEntry`), so a site cannot spend the hub's
/// Event budget with a long journal.
pub const MAX_DARK_PERIOD_EVENTS: usize = 5;

/// The Events of a dark period `site` reported (`status.lastDarkPeriod`,
/// the site's own account on its own clock): one `DarkPeriodReported`
/// summary, then one `DarkPeriodEntry` per notable entry (what went wrong,
/// not what recovered), at most [`MAX_DARK_PERIOD_EVENTS`]. Each entry is
/// its own series (its field path names the period and the entry), so a
/// later dark period's entries never fold into an earlier one's. Site text
/// is made terminal-safe.
pub fn dark_period(site: &FederatedCluster, dark: &crate::api::DarkPeriod) -> Vec<Note> {
    let safe = |s: &str| crate::render::safe::terminal_safe(s).into_owned();
    let from = dark.from.0;
    let mut summary = format!(
        "the site reports it could not reach the hub from {from} to {} (the site's own account, on its clock): {} entr{}",
        dark.to.0,
        dark.entries.len(),
        if dark.entries.len() == 1 { "y" } else { "ies" }
    );
    if dark.dropped > 0 {
        summary.push_str(&format!(" ({} older dropped)", dark.dropped));
    }
    summary.push_str("; `kubectl fleet describe` shows them");
    let mut notes = vec![about_site(
        site,
        false,
        "DarkPeriodReported",
        "Record",
        summary,
    )];
    for (i, e) in dark
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind.is_notable())
        .take(MAX_DARK_PERIOD_EVENTS)
    {
        let mut regarding = site_ref(site);
        regarding.field_path = Some(format!("status.lastDarkPeriod{{{from}}}.entries[{i}]"));
        let mut note = format!(
            "{} {} at {} (site's clock)",
            e.kind,
            safe(&e.subject),
            e.time.0
        );
        if !e.detail.is_empty() {
            note.push_str(": ");
            note.push_str(&safe(&e.detail));
        }
        notes.push(Note {
            budget: (site_budget(site), None),
            regarding,
            related: None,
            warning: true,
            reason: "DarkPeriodEntry",
            action: "Record",
            note: bounded(note),
        });
    }
    notes
}

/// A site's own bucket.
fn site_budget(site: &FederatedCluster) -> String {
    format!("FederatedCluster/{}", site.site_name())
}

/// An Event about an incident of the fleet summary: `reason`, at field
/// `status.{field}{ID}` of the FederationStatus, spending the bucket of
/// the incident's identity `key` and of its kind (`field`).
pub fn incident(
    reason: &'static str,
    field: &'static str,
    id: &str,
    key: String,
    note: String,
) -> Note {
    Note {
        budget: (format!("{field}/{key}"), Some(field)),
        regarding: fleet_ref(format!("status.{field}{{{id}}}")),
        related: None,
        warning: true,
        reason,
        action: "Summarize",
        note: bounded(note),
    }
}

/// `sites` for a note: the first 20, then how many more.
fn site_list<'a>(sites: impl IntoIterator<Item = &'a str>) -> String {
    let sites: Vec<&str> = sites.into_iter().collect();
    let shown: Vec<&str> = sites.iter().take(20).copied().collect();
    let more = sites.len().saturating_sub(shown.len());
    let mut s = shown.join(", ");
    if more > 0 {
        s.push_str(&format!(" and {more} more"));
    }
    s
}

/// A reference to site `name` (an incident's `related` object).
fn named_site_ref(name: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some(format!("{}/{}", crate::api::GROUP, crate::api::VERSION)),
        kind: Some("FederatedCluster".into()),
        name: Some(name.to_owned()),
        ..Default::default()
    }
}

/// `, started by SITE` when the incident records who started it.
fn started(by: Option<&str>) -> String {
    by.map(|s| format!(", started by {s}")).unwrap_or_default()
}

/// `; in common: ...` with an incident's two strongest common factors
/// (`fleet::factors`), when it has any: before the site list, so the
/// note's limit never cuts them. Site text, escaped.
fn in_common(factors: &[crate::api::CommonFactor]) -> String {
    if factors.is_empty() {
        return String::new();
    }
    let lines: Vec<String> = factors
        .iter()
        .take(2)
        .map(|f| crate::render::safe::Untrusted(crate::fleet::factors::describe(f)).to_string())
        .collect();
    let more = factors.len().saturating_sub(lines.len());
    let mut s = format!("; in common: {}", lines.join("; "));
    if more > 0 {
        s.push_str(&format!(" (+{more} more: kubectl fleet incidents ID)"));
    }
    s
}

/// One note per site of `after` not in `before` (made by `note`), each
/// with that site as its `related` object: kube's recorder keeps Events
/// with different related objects apart, so each says whom it is about.
fn joined<'a>(
    before: &'a [String],
    after: &'a [String],
    note: impl Fn(&str) -> Note + 'a,
) -> impl Iterator<Item = Note> + 'a {
    after
        .iter()
        .filter(move |s| !before.contains(s))
        .map(move |site| {
            let mut n = note(site);
            n.related = Some(named_site_ref(site));
            n
        })
}

/// The Events of a new fleet summary `next` against the one the hub held
/// before (`held`; None: there was none) at `now`: each correlation,
/// cascade and grouped outage that is new (`CorrelationDetected`,
/// `CascadeDetected`, `GroupedOutage`), each correlation and outage that
/// grew (`CorrelationGrew`, `GroupedOutageGrew`: one Event per site that
/// joined, that site its `related` object) and each one that ended
/// (`CorrelationEnded`, `GroupedOutageEnded`). Every note says what was
/// true when it was written ("on 3 sites when detected"), since a repeat
/// of the same reason about the same incident keeps the first note.
pub fn incident_notes(
    held: Option<&FederationStatusStatus>,
    next: &FederationStatusStatus,
    now: Timestamp,
) -> Vec<Note> {
    let none = FederationStatusStatus::default();
    let held = held.unwrap_or(&none);
    let mut notes = Vec::new();
    for c in &next.correlations {
        let key = c.signal.as_str().to_owned();
        match held.correlations.iter().find(|h| h.id == c.id) {
            None => notes.push(incident(
                "CorrelationDetected",
                "correlations",
                &c.id,
                key,
                format!(
                    "{} {} on {} sites when detected{}{}: {}",
                    c.id,
                    c.signal.as_str(),
                    c.cluster_count(),
                    started(c.started_by.as_deref()),
                    in_common(&c.common_factors),
                    site_list(c.clusters.iter().map(String::as_str))
                ),
            )),
            Some(h) => {
                let n = c.cluster_count();
                notes.extend(joined(&h.clusters, &c.clusters, |site| {
                    incident(
                        "CorrelationGrew",
                        "correlations",
                        &c.id,
                        key.clone(),
                        format!(
                            "{} {} reached {site}: {n} sites then",
                            c.id,
                            c.signal.as_str()
                        ),
                    )
                }));
            }
        }
    }
    for h in &held.correlations {
        if !next.correlations.iter().any(|c| c.id == h.id) {
            let mut n = incident(
                "CorrelationEnded",
                "correlations",
                &h.id,
                h.signal.as_str().to_owned(),
                format!(
                    "{} {} ended: no longer active on enough sites (it was on {} when last recorded)",
                    h.id,
                    h.signal.as_str(),
                    h.cluster_count()
                ),
            );
            n.warning = false;
            notes.push(n);
        }
    }
    for c in &next.cascades {
        let id = crate::fleet::incident::cascade_id_of(c);
        if held
            .cascades
            .iter()
            .any(|h| crate::fleet::incident::cascade_id_of(h) == id)
        {
            continue;
        }
        let mut n = incident(
            "CascadeDetected",
            "cascades",
            &id,
            id.clone(),
            format!(
                "{} {} on {}/{} reached production site {} from {}{}",
                id,
                c.signal.as_str(),
                crate::render::safe::Untrusted(&c.workload.kind),
                crate::render::safe::Untrusted(&c.workload.name),
                c.target,
                c.source,
                in_common(&c.common_factors)
            ),
        );
        n.related = Some(named_site_ref(&c.target));
        notes.push(n);
    }
    for o in &next.outages {
        let key = format!("{}={}", o.group_by, o.value);
        match held.outages.iter().find(|h| h.id == o.id) {
            None => notes.push(incident(
                "GroupedOutage",
                "outages",
                &o.id,
                key,
                format!(
                    "{} {} sites of {} {} went dark together{}{}: {}",
                    o.id,
                    o.cluster_count(),
                    o.group_by,
                    o.value,
                    started(o.started_by.as_deref()),
                    in_common(&o.common_factors),
                    site_list(o.clusters.iter().map(String::as_str))
                ),
            )),
            Some(h) => {
                let n = o.cluster_count();
                notes.extend(joined(&h.clusters, &o.clusters, |site| {
                    incident(
                        "GroupedOutageGrew",
                        "outages",
                        &o.id,
                        key.clone(),
                        format!(
                            "{} {site} of {} {} went dark too: {n} sites then",
                            o.id, o.group_by, o.value
                        ),
                    )
                }));
            }
        }
    }
    for h in &held.outages {
        if !next.outages.iter().any(|o| o.id == h.id) {
            let lasted = crate::fleet::age::human_duration(
                now.duration_since(h.since.0)
                    .max(jiff::SignedDuration::ZERO),
            );
            let mut n = incident(
                "GroupedOutageEnded",
                "outages",
                &h.id,
                format!("{}={}", h.group_by, h.value),
                format!(
                    "{} the outage of {} {} ended after {lasted}: its sites are back or no longer dark together",
                    h.id, h.group_by, h.value
                ),
            );
            n.warning = false;
            notes.push(n);
        }
    }
    notes
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

/// Token buckets by name: a site's or an incident's ([`BURST`] Events,
/// then one per [`REFILL`]), and one per kind of incident
/// ([`KIND_BURST`], then one per [`KIND_REFILL`]).
#[derive(Debug, Default)]
pub struct Budget {
    buckets: HashMap<String, Bucket>,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    last: Timestamp,
    burst: u32,
    refill: Duration,
}

impl Bucket {
    fn new(burst: u32, refill: Duration, now: Timestamp) -> Self {
        Bucket {
            tokens: f64::from(burst),
            last: now,
            burst,
            refill,
        }
    }

    /// Refills up to `now`; whether a token is there.
    fn refill(&mut self, now: Timestamp) -> bool {
        let elapsed = now.duration_since(self.last).as_secs_f64().max(0.0);
        self.tokens =
            (self.tokens + elapsed / self.refill.as_secs_f64()).min(f64::from(self.burst));
        self.last = now;
        self.tokens >= 1.0
    }

    /// Whether it is full again at `now`.
    fn full(&self, now: Timestamp) -> bool {
        let missing = f64::from(self.burst) - self.tokens;
        now.duration_since(self.last).as_secs_f64() >= missing * self.refill.as_secs_f64()
    }
}

impl Budget {
    /// Whether `note` may be recorded at `now`: a token in its own bucket
    /// and, for an incident, in its kind's; both are taken, or neither.
    pub fn allow(&mut self, note: &Note, now: Timestamp) -> bool {
        let (own, kind) = &note.budget;
        let own_ok = self
            .buckets
            .entry(own.clone())
            .or_insert_with(|| Bucket::new(BURST, REFILL, now))
            .refill(now);
        let kind_ok = kind.is_none_or(|k| {
            self.buckets
                .entry(format!("kind/{k}"))
                .or_insert_with(|| Bucket::new(KIND_BURST, KIND_REFILL, now))
                .refill(now)
        });
        if !(own_ok && kind_ok) {
            return false;
        }
        for key in std::iter::once(own.clone()).chain(kind.map(|k| format!("kind/{k}"))) {
            if let Some(b) = self.buckets.get_mut(&key) {
                b.tokens -= 1.0;
            }
        }
        true
    }

    /// Forgets buckets full again by `now`, so the map follows the fleet.
    fn prune(&mut self, now: Timestamp) {
        self.buckets.retain(|_, b| !b.full(now));
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
            if !budget.allow(&note, now) {
                tracing::debug!(bucket = %note.budget.0, reason = note.reason, "event rate-limited");
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
    use crate::api::{Correlation, GroupedOutage, Severity, SignalType, Tier};
    use crate::fleet::fixtures::{ago, fixture_now};
    use jiff::SignedDuration;

    fn at(s: i64) -> Timestamp {
        fixture_now() + SignedDuration::from_secs(s)
    }

    #[test]
    fn a_flapping_site_gets_a_burst_then_one_event_per_period() {
        let mut b = Budget::default();
        let flappy = FederatedCluster::test("flappy");
        let flap = |i: i64| {
            let to = if i % 2 == 0 {
                Phase::Stale
            } else {
                Phase::Connected
            };
            phase_changed(&flappy, None, to, "")
        };
        // A transition every second for an hour.
        let allowed = (0..3600).filter(|s| b.allow(&flap(*s), at(*s))).count();
        assert_eq!(
            allowed,
            BURST as usize + 3600 / REFILL.as_secs() as usize - 1
        );
        // Another site is not held back by it.
        let calm = FederatedCluster::test("calm");
        assert!(b.allow(&phase_changed(&calm, None, Phase::Stale, ""), at(3600)));
        // Full buckets are forgotten.
        b.prune(at(10 * 86_400));
        assert!(b.buckets.is_empty());
    }

    fn correlation(id: &str, clusters: &[&str]) -> Correlation {
        Correlation {
            id: id.into(),
            signal: SignalType::ImagePullBackOff,
            severity: Severity::Critical,
            original_severity: Severity::Medium,
            clusters: clusters.iter().map(|c| (*c).to_owned()).collect(),
            clusters_total: clusters.len() as i64,
            first_seen: ago(600),
            last_seen: ago(5),
            started_by: Some(clusters[0].to_owned()),
            strictest_tier: Some(Tier::Standard),
            common_factors: Vec::new(),
        }
    }

    fn outage(id: &str, clusters: &[&str]) -> GroupedOutage {
        GroupedOutage {
            id: id.into(),
            group_by: "region".into(),
            value: "eu-west".into(),
            clusters: clusters.iter().map(|c| (*c).to_owned()).collect(),
            clusters_total: clusters.len() as i64,
            since: ago(120),
            started_by: Some(clusters[0].to_owned()),
            common_factors: Vec::new(),
        }
    }

    /// The notes the budget lets through, summary after summary.
    fn recorded(
        budget: &mut Budget,
        held: &FederationStatusStatus,
        next: &FederationStatusStatus,
        now: Timestamp,
    ) -> Vec<Note> {
        incident_notes(Some(held), next, now)
            .into_iter()
            .filter(|n| budget.allow(n, now))
            .collect()
    }

    #[test]
    fn a_flapping_forged_correlation_does_not_silence_a_real_outage() {
        // A site flaps a forged signal every 3 s for an hour: a correlation
        // forms (a new id each time it recurs) and ends, again and again.
        let mut budget = Budget::default();
        let mut held = FederationStatusStatus::default();
        let mut spent = 0;
        for i in 0..1200 {
            let next = FederationStatusStatus {
                correlations: if i % 2 == 0 {
                    vec![correlation(&format!("xc-{i:08x}"), &["liar", "a", "b"])]
                } else {
                    vec![]
                },
                ..Default::default()
            };
            spent += recorded(&mut budget, &held, &next, at(3 * i)).len();
            held = next;
        }
        // Its own bucket holds it to a burst, then one per period.
        assert!(
            spent <= BURST as usize + 3600 / REFILL.as_secs() as usize,
            "{spent}"
        );
        // A real grouped outage still gets its Event.
        let next = FederationStatusStatus {
            outages: vec![outage("go-0000abcd", &["eu-1", "eu-2", "eu-3"])],
            ..Default::default()
        };
        let out = recorded(&mut budget, &held, &next, at(3600));
        assert_eq!(
            out.iter().map(|n| n.reason).collect::<Vec<_>>(),
            ["GroupedOutage"]
        );
        // And so does a correlation of another signal type.
        let mut other = correlation("xc-0000beef", &["c", "d", "e"]);
        other.signal = SignalType::OomKilled;
        let next = FederationStatusStatus {
            correlations: vec![other],
            ..next
        };
        let out = recorded(&mut budget, &held, &next, at(3601));
        assert!(
            out.iter().any(|n| n.reason == "CorrelationDetected"),
            "{out:?}"
        );
    }

    #[test]
    fn a_flood_of_one_kind_is_bounded_and_leaves_the_others_their_events() {
        let mut budget = Budget::default();
        let held = FederationStatusStatus::default();
        let cascade = |i: usize| crate::api::Cascade {
            id: format!("cc-{i:08x}"),
            source: "liar-stg".into(),
            target: "liar-prod".into(),
            source_environment: crate::api::Environment::Staging,
            target_environment: crate::api::Environment::Production,
            source_tier: Tier::Standard,
            target_tier: Tier::Standard,
            signal: SignalType::CrashLoopBackOff,
            workload: crate::api::WorkloadRef::new("Deployment", format!("w{i}")),
            source_first_seen: ago(600),
            target_first_seen: ago(60),
            delta_seconds: 540,
            detected_time: None,
            common_factors: Vec::new(),
        };
        let flood = FederationStatusStatus {
            cascades: (0..300).map(cascade).collect(),
            ..Default::default()
        };
        let out = recorded(&mut budget, &held, &flood, at(0));
        assert_eq!(
            out.len(),
            KIND_BURST as usize,
            "the kind's bucket bounds a flood"
        );
        let next = FederationStatusStatus {
            outages: vec![outage("go-0000abcd", &["eu-1", "eu-2", "eu-3"])],
            correlations: vec![correlation("xc-0000000a", &["a", "b", "c"])],
            ..flood.clone()
        };
        let out = recorded(&mut budget, &flood, &next, at(1));
        let mut reasons: Vec<_> = out.iter().map(|n| n.reason).collect();
        reasons.sort_unstable();
        assert_eq!(reasons, ["CorrelationDetected", "GroupedOutage"]);
    }

    #[test]
    fn incidents_are_told_when_found_grown_and_ended_in_words_that_stay_true() {
        let held = FederationStatusStatus {
            correlations: vec![correlation("xc-0000000a", &["a", "b", "c"])],
            outages: vec![outage("go-0000000b", &["eu-1", "eu-2", "eu-3"])],
            ..Default::default()
        };
        let notes = incident_notes(None, &held, fixture_now());
        let found: Vec<(&str, &str)> = notes.iter().map(|n| (n.reason, n.note.as_str())).collect();
        assert_eq!(
            found,
            [
                (
                    "CorrelationDetected",
                    "xc-0000000a ImagePullBackOff on 3 sites when detected, started by a: a, b, c"
                ),
                (
                    "GroupedOutage",
                    "go-0000000b 3 sites of region eu-west went dark together, started by eu-1: eu-1, eu-2, eu-3"
                ),
            ]
        );
        // Both grow by a site each: an Event naming that site, related to it.
        let grown = FederationStatusStatus {
            correlations: vec![correlation("xc-0000000a", &["a", "b", "c", "d"])],
            outages: vec![outage("go-0000000b", &["eu-1", "eu-2", "eu-3", "eu-4"])],
            ..Default::default()
        };
        let notes = incident_notes(Some(&held), &grown, fixture_now());
        let told: Vec<(&str, &str, Option<&str>)> = notes
            .iter()
            .map(|n| {
                (
                    n.reason,
                    n.note.as_str(),
                    n.related.as_ref().and_then(|r| r.name.as_deref()),
                )
            })
            .collect();
        assert_eq!(
            told,
            [
                (
                    "CorrelationGrew",
                    "xc-0000000a ImagePullBackOff reached d: 4 sites then",
                    Some("d")
                ),
                (
                    "GroupedOutageGrew",
                    "go-0000000b eu-4 of region eu-west went dark too: 4 sites then",
                    Some("eu-4")
                ),
            ]
        );
        assert!(incident_notes(Some(&grown), &grown, fixture_now()).is_empty());
        // Both end: Normal Events, the outage with how long it lasted.
        let notes = incident_notes(
            Some(&grown),
            &FederationStatusStatus::default(),
            fixture_now(),
        );
        let ended: Vec<(&str, bool, &str)> = notes
            .iter()
            .map(|n| (n.reason, n.warning, n.note.as_str()))
            .collect();
        assert_eq!(
            ended,
            [
                (
                    "CorrelationEnded",
                    false,
                    "xc-0000000a ImagePullBackOff ended: no longer active on enough sites (it was on 4 when last recorded)"
                ),
                (
                    "GroupedOutageEnded",
                    false,
                    "go-0000000b the outage of region eu-west ended after 2m: its sites are back or no longer dark together"
                ),
            ]
        );
        assert!(
            notes
                .iter()
                .all(|n| n.regarding.kind.as_deref() == Some("FederationStatus")),
            "{notes:?}"
        );
    }

    #[test]
    fn a_detected_incident_says_what_its_sites_have_in_common() {
        let factor = |value: &str| crate::api::CommonFactor {
            attribute: "edgeVersion".into(),
            key: None,
            value: value.into(),
            affected: 38,
            affected_total: 40,
            unaffected: 3,
            unaffected_total: 50,
        };
        let many: Vec<String> = (0..40).map(|i| format!("site-{i:02}")).collect();
        let mut c = correlation("xc-0000000a", &["a"]);
        c.clusters = many;
        c.clusters_total = 40;
        c.common_factors = vec![factor("0.1.0"), factor("0.2.0\u{1b}[2J"), factor("0.3.0")];
        let mut o = outage("go-0000000b", &["eu-1", "eu-2", "eu-3"]);
        o.common_factors = vec![factor("0.1.0")];
        let next = FederationStatusStatus {
            correlations: vec![c],
            outages: vec![o],
            ..Default::default()
        };
        let notes = incident_notes(None, &next, fixture_now());
        let note = &notes[0].note;
        assert!(
            note.starts_with(
                "xc-0000000a ImagePullBackOff on 40 sites when detected, started by a; in common: 38 of 40 affected run edge 0.1.0; 6% of the other sites do (3 of 50); 38 of 40 affected run edge 0.2.0\\x1b[2J; 6% of the other sites do (3 of 50) (+1 more: kubectl fleet incidents ID): site-00, "
            ),
            "{note}"
        );
        assert!(note.ends_with("and 20 more"), "{note}");
        assert_eq!(
            notes[1].note,
            "go-0000000b 3 sites of region eu-west went dark together, started by eu-1; in common: 38 of 40 affected run edge 0.1.0; 6% of the other sites do (3 of 50): eu-1, eu-2, eu-3"
        );
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
        let long = incident(
            "GroupedOutage",
            "outages",
            "go-0000abcd",
            "region=eu".into(),
            "é".repeat(900),
        );
        assert!(long.note.len() <= MAX_NOTE);
        assert_eq!(
            long.regarding.field_path.as_deref(),
            Some("status.outages{go-0000abcd}")
        );
    }

    #[test]
    fn a_dark_period_is_one_summary_and_at_most_five_entries_each_its_own_series() {
        use crate::api::{DarkEntry, DarkEntryKind};
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
        let entry = |i: i64, kind| DarkEntry {
            time: Time(at(i)),
            kind,
            subject: format!("n{i}\u{1b}[2J"),
            detail: "power\u{7}".into(),
        };
        let mut entries = vec![
            entry(1, DarkEntryKind::NodeReady),
            entry(2, DarkEntryKind::Recovered),
        ];
        entries.extend((3..12).map(|i| entry(i, DarkEntryKind::NodeNotReady)));
        let site = FederatedCluster::test("factory-7").with_dark_period(600, 0, entries);
        let dark = site
            .status
            .as_ref()
            .unwrap()
            .last_dark_period
            .as_ref()
            .unwrap();
        let notes = dark_period(&site, dark);
        assert_eq!(notes.len(), 1 + MAX_DARK_PERIOD_EVENTS, "{notes:?}");
        assert_eq!(notes[0].reason, "DarkPeriodReported");
        assert!(!notes[0].warning);
        assert!(
            notes[0]
                .note
                .contains("the site's own account, on its clock"),
            "{}",
            notes[0].note
        );
        assert!(notes[0].note.contains("11 entries"), "{}", notes[0].note);
        // Recoveries are no Events; the first notable entries are.
        assert!(
            notes[1].note.starts_with("NodeNotReady n3"),
            "{}",
            notes[1].note
        );
        let paths: std::collections::HashSet<_> = notes[1..]
            .iter()
            .map(|n| n.regarding.field_path.clone())
            .collect();
        assert_eq!(
            paths.len(),
            MAX_DARK_PERIOD_EVENTS,
            "each entry its own series"
        );
        assert_eq!(
            notes[1].regarding.field_path.as_deref(),
            Some("status.lastDarkPeriod{2026-01-01T11:50:00Z}.entries[2]")
        );
        for n in &notes {
            assert!(
                !n.note.contains('\u{1b}') && !n.note.contains('\u{7}'),
                "{:?}",
                n.note
            );
            assert_eq!(
                n.budget.0, "FederatedCluster/factory-7",
                "the site's own bucket"
            );
        }
    }
}
