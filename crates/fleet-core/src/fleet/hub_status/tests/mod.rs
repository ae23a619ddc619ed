use super::conditions::*;
use super::credential::*;
use super::pull::*;
use super::push::*;
use super::sighting::*;
use super::*;
use std::borrow::Cow;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use crate::api::{
    CONDITION_CLOCK_SKEW, CONDITION_CONNECTED, CONDITION_CREDENTIAL_EXPIRING,
    CONDITION_MEMBER_CHANGED, CONDITION_REMEDIATION_CAPABLE, FederatedCluster,
    FederatedClusterStatus, Mode, Phase,
};
use crate::fleet::fixtures::fixture_now;
use crate::fleet::phase::{self, HeartbeatObservation};
use crate::fleet::probe::{ProbeOutcome, ProbeVerdict};

const I: Duration = Duration::from_secs(30);

fn at(secs: i64) -> Timestamp {
    fixture_now() + SignedDuration::from_secs(secs)
}

/// A sighting of a heartbeat reported at `reported` and seen at
/// `observed`; if `live`, of a steady edge (the reading before it measured
/// the same offset).
fn seen(reported: i64, observed: i64, live: bool) -> Sighting {
    Sighting {
        observation: Some(HeartbeatObservation {
            reported: at(reported),
            observed_at: at(observed),
        }),
        live,
        earlier_offset: live.then(|| i32::try_from(reported - observed).unwrap()),
    }
}

#[test]
fn the_hub_truncating_a_fractional_heartbeat_is_no_new_heartbeat() {
    let sent = at(0) + SignedDuration::from_millis(750);
    let first = Sighting::fold(Some(&NEVER), Some(sent), Some(Phase::Connected), I, at(1));
    // The hub's own status write stored the value at second precision.
    let rewritten = Sighting::fold(Some(&first), Some(at(0)), Some(Phase::Stale), I, at(95));
    assert_eq!(rewritten, first, "same second, same heartbeat");
    let next = Sighting::fold(Some(&first), Some(at(30)), Some(Phase::Stale), I, at(96));
    assert_eq!(next.observation.unwrap().observed_at, at(96));
}

const NEVER: Sighting = Sighting {
    observation: None,
    live: false,
    earlier_offset: None,
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
    let first = Sighting::fold(None, Some(at(-600)), Some(Phase::Connected), I, at(0));
    assert_eq!(first, seen(-600, 0, false));
    // First sight of a Stale site: the reported time, capped at now.
    let stale = Sighting::fold(None, Some(at(-600)), Some(Phase::Stale), I, at(0));
    assert_eq!(stale, seen(-600, -600, false));
    assert_eq!(Sighting::fold(None, None, None, I, at(0)), NEVER);
    // The same value later: unchanged, the age keeps growing.
    assert_eq!(
        Sighting::fold(
            Some(&first),
            Some(at(-600)),
            Some(Phase::Connected),
            I,
            at(50)
        ),
        first
    );
    // A new value: observed now, live.
    let next = Sighting::fold(
        Some(&first),
        Some(at(-570)),
        Some(Phase::Connected),
        I,
        at(30),
    );
    assert_eq!(
        next,
        Sighting {
            earlier_offset: None,
            ..seen(-570, 30, true)
        },
        "nothing live before it"
    );
    // The first heartbeat of a site already watched: live.
    let watched = Sighting::fold(Some(&NEVER), Some(at(5)), Some(Phase::Pending), I, at(6));
    assert_eq!(
        watched,
        Sighting {
            earlier_offset: None,
            ..seen(5, 6, true)
        }
    );
    // The heartbeat went away: never heard from.
    assert_eq!(
        Sighting::fold(Some(&next), None, Some(Phase::Connected), I, at(60)),
        Sighting {
            observation: None,
            live: true,
            earlier_offset: Some(-600),
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
            live: true,
            earlier_offset: None,
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
        earlier_offset: None,
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

/// A judgement not written yet is told apart from one a status holds:
/// what the hub holds for the summary while the write waits its turn.
#[test]
fn a_status_holds_a_judgement_once_it_is_written() {
    let s = seen(0, 0, true);
    let before = site();
    let h = judge(&before, &s, fixture_now());
    assert!(h.changed);
    assert!(!h.is_in(&before.status.clone().unwrap_or_default()));
    let after = written(before, &h);
    assert!(h.is_in(after.status.as_ref().unwrap()));
    // Another judgement (Stale, later) is not the one written.
    let later = judge(&after, &s, at(100));
    assert_eq!(later.phase, Phase::Stale);
    assert!(!later.is_in(after.status.as_ref().unwrap()));
}

/// A transition judged again from the same version of a site, a little
/// later, stamps its change with the later time: the same decision, which
/// the stand-in for its write already holds (`decides_as`), while `is_in`
/// tells the stamps apart. A different decision is never the same.
#[test]
fn a_transition_judged_again_later_is_the_same_decision() {
    let s = seen(0, 0, true);
    let before = site();
    let first = judge(&before, &s, fixture_now());
    assert!(first.changed);
    let standin = written(before.clone(), &first);
    let again = judge(&before, &s, fixture_now() + SignedDuration::from_secs(2));
    assert!(again.changed);
    assert_ne!(again.phase_transition_time, first.phase_transition_time);
    assert!(!again.is_in(standin.status.as_ref().unwrap()));
    assert!(again.decides_as(standin.status.as_ref().unwrap()));
    // Judged much later, the phase is another one: another decision.
    let later = judge(&before, &s, at(100));
    assert_ne!(later.phase, first.phase);
    assert!(!later.decides_as(standin.status.as_ref().unwrap()));
    // The same phase with a condition's reason changed: another decision.
    let mut moved = standin.status.clone().unwrap();
    moved.conditions.as_mut().unwrap()[0].reason = "Elsewhere".to_owned();
    assert!(!again.decides_as(&moved));
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
    let (_, next) = credential_state("a", Some(at(3600)), Some(at(1800)), None, warning, I, at(0));
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
    let odd =
        measured
            .clone()
            .with_condition(CONDITION_CLOCK_SKEW, "False", "ClockSkewDetected", "x", 0);
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
    assert_eq!(
        led,
        Sighting {
            earlier_offset: standby.earlier_offset,
            ..seen(0, 200, false)
        }
    );
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
fn every_hub_condition_fits_the_schema_bound() {
    let all = hub_condition_types();
    assert_eq!(
        all,
        [
            CONDITION_CONNECTED,
            CONDITION_CREDENTIAL_EXPIRING,
            CONDITION_CLOCK_SKEW,
            CONDITION_MEMBER_CHANGED,
            CONDITION_REMEDIATION_CAPABLE,
        ]
    );
    assert!(all.len() <= crate::api::MAX_CONDITIONS);
}

mod pull;
mod reasons_doc;
mod rejected;

mod schedule;
mod skew;
