//! A site's schedule (`spec.connectivity`) in the hub's judgement: a site
//! silent inside its offline window is Sleeping, not Stale or
//! Unreachable; past it, late to wake; heard from, Connected.

use super::*;
use crate::api::Connectivity;
use crate::fleet::connectivity::Schedule;
use jiff::tz::TimeZone;

fn t(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn store() -> (FederatedCluster, Schedule) {
    let mut site = FederatedCluster::test("store-7");
    let c = Connectivity {
        time_zone: Some("Europe/Berlin".into()),
        offline: vec!["22:00-06:00".into()],
        absent_up_to_seconds: None,
    };
    site.spec.connectivity = Some(c.clone());
    let zone = TimeZone::posix("CET-1CEST,M3.5.0,M10.5.0/3").unwrap();
    (site, Schedule::of(&c, Some(zone)))
}

fn judged(
    site: &FederatedCluster,
    schedule: &Schedule,
    s: Sighting,
    now: Timestamp,
) -> HubStatus<'static> {
    let bearings = Bearings {
        interval: I,
        credential_warning: DEFAULT_CREDENTIAL_WARNING,
        leader_since: None,
        probe: None,
        member: None,
        remembered: None,
        schedule: Some(schedule),
    };
    super::super::judge(site, s, &bearings, now).into_owned()
}

fn heard(reported: &str, observed: &str) -> Sighting {
    Sighting {
        observation: Some(HeartbeatObservation {
            reported: t(reported),
            observed_at: t(observed),
        }),
        live: true,
        earlier_offset: None,
    }
}

fn reason_of(h: &HubStatus) -> (String, String) {
    let c = cond(h, CONDITION_CONNECTED).unwrap();
    (c.status.clone(), c.reason.clone())
}

#[test]
fn a_store_sleeps_through_its_night_and_is_late_after_it() {
    let (site, schedule) = store();
    // Last heartbeat 21:57 CET (20:57Z), the window opens at 21:00Z.
    let s = heard("2026-01-10T20:57:00Z", "2026-01-10T20:57:00Z");
    let before = judged(&site, &schedule, s, t("2026-01-10T20:59:59Z"));
    assert_eq!(
        before.phase,
        Phase::Stale,
        "silent before its window: as usual"
    );
    assert_eq!(
        before.requeue_after,
        Some(Duration::from_secs(1) + phase::TRANSITION_MARGIN),
        "judged again when the window opens"
    );
    let site = written(site, &before);
    let asleep = judged(&site, &schedule, s, t("2026-01-10T23:00:00Z"));
    assert_eq!(asleep.phase, Phase::Sleeping);
    assert!(asleep.changed);
    assert_eq!(reason_of(&asleep), ("False".into(), "Sleeping".into()));
    let site = written(site, &asleep);
    // Re-judged inside the window: nothing to write.
    let again = judged(&site, &schedule, s, t("2026-01-11T03:00:00Z"));
    assert_eq!(again.phase, Phase::Sleeping);
    assert!(!again.changed);
    // The window ends at 06:00 CET (05:00Z); three intervals of grace.
    let waking = judged(&site, &schedule, s, t("2026-01-11T05:01:29Z"));
    assert_eq!(waking.phase, Phase::Sleeping);
    assert_eq!(
        waking.requeue_after,
        Some(Duration::from_secs(1) + phase::TRANSITION_MARGIN)
    );
    let late = judged(&site, &schedule, s, t("2026-01-11T05:01:30Z"));
    assert_eq!(
        late.phase,
        Phase::Unreachable,
        "its heartbeat is 8 hours old"
    );
    assert_eq!(reason_of(&late), ("False".into(), "LateToWake".into()));
    assert!(late.changed);
    let msg = &cond(&late, CONDITION_CONNECTED).unwrap().message;
    assert!(msg.contains("late to wake"), "{msg}");
    // It wakes: a new heartbeat is Connected, whatever the hour.
    let site = written(site, &late);
    let s = heard("2026-01-11T05:02:00Z", "2026-01-11T05:02:00Z");
    let awake = judged(&site, &schedule, s, t("2026-01-11T05:02:10Z"));
    assert_eq!(awake.phase, Phase::Connected);
    assert_eq!(
        reason_of(&awake),
        ("True".into(), "HeartbeatReceived".into())
    );
}

#[test]
fn without_a_schedule_the_same_silence_is_an_outage() {
    let (mut site, schedule) = store();
    site.spec.connectivity = None;
    let s = heard("2026-01-10T20:59:00Z", "2026-01-10T20:59:00Z");
    let h = hub_status(
        &site,
        &s,
        I,
        DEFAULT_CREDENTIAL_WARNING,
        None,
        t("2026-01-10T23:00:00Z"),
    );
    assert_eq!(h.phase, Phase::Unreachable);
    // And a schedule never makes a site heard from anything but Connected.
    let (site, _) = store();
    let s = heard("2026-01-10T22:00:00Z", "2026-01-10T22:00:00Z");
    let h = judged(&site, &schedule, s, t("2026-01-10T22:00:30Z"));
    assert_eq!(h.phase, Phase::Connected);
}

#[test]
fn the_edge_clock_does_not_move_the_window() {
    // An edge clock three hours behind or ahead reports odd heartbeat
    // times; the hub judges by when it observed them.
    let (site, schedule) = store();
    for offset in [-3 * 3600, 0, 3 * 3600] {
        let observed = t("2026-01-10T20:59:00Z");
        let reported = observed + SignedDuration::from_secs(offset);
        let s = Sighting {
            observation: Some(HeartbeatObservation {
                reported,
                observed_at: observed,
            }),
            live: true,
            earlier_offset: None,
        };
        assert_eq!(
            judged(&site, &schedule, s, t("2026-01-10T23:00:00Z")).phase,
            Phase::Sleeping,
            "edge clock {offset}s off"
        );
        assert_eq!(
            reason_of(&judged(&site, &schedule, s, t("2026-01-11T06:00:00Z"))).1,
            "LateToWake",
            "edge clock {offset}s off"
        );
    }
}

#[test]
fn a_pending_site_stays_pending_inside_its_window() {
    let (site, schedule) = store();
    let h = judged(&site, &schedule, NEVER, t("2026-01-10T23:00:00Z"));
    assert_eq!(h.phase, Phase::Pending);
}

#[test]
fn a_sleeping_sites_credential_that_lapses_before_it_returns_is_flagged() {
    let (site, schedule) = store();
    let s = heard("2026-01-10T20:57:00Z", "2026-01-10T20:57:00Z");
    let now = t("2026-01-10T23:00:00Z");
    let credential = |site: &FederatedCluster| {
        let h = judged(site, &schedule, s, now);
        let c = cond(&h, CONDITION_CREDENTIAL_EXPIRING).unwrap().clone();
        (h.phase, c.status, c.reason, c.message)
    };
    // The edge renews by itself, but its token expires at 03:00 Berlin,
    // before the store is back at 06:00: it cannot renew while offline.
    let with = |expires: &str, renews: Option<&str>| {
        let mut site = site.clone();
        let status = site.status.get_or_insert_with(Default::default);
        status.credential_expiration_time = Some(Time(t(expires)));
        status.credential_renewal_time = renews.map(|r| Time(t(r)));
        site
    };
    let (phase, status, reason, message) =
        credential(&with("2026-01-11T02:00:00Z", Some("2026-01-11T01:00:00Z")));
    assert_eq!(phase, Phase::Sleeping);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("True", "ExpiresBeforeReturn")
    );
    assert!(
        message.contains("run `kubectl fleet rotate store-7`"),
        "{message}"
    );
    // Expiring after it is back: as before (renewed by the edge).
    let (_, status, reason, _) =
        credential(&with("2026-01-11T09:00:00Z", Some("2026-01-11T08:00:00Z")));
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "RenewedByEdge")
    );
    // Already expired: says so.
    let (_, _, reason, _) = credential(&with("2026-01-10T22:00:00Z", None));
    assert_eq!(reason, "Expired");
    // The same token on a store without a schedule: judged as before.
    let mut plain = with("2026-01-11T02:00:00Z", Some("2026-01-11T01:00:00Z"));
    plain.spec.connectivity = None;
    let h = hub_status(&plain, &s, I, DEFAULT_CREDENTIAL_WARNING, None, now);
    assert_eq!(h.phase, Phase::Unreachable);
    assert_eq!(
        cond(&h, CONDITION_CREDENTIAL_EXPIRING).unwrap().reason,
        "RenewedByEdge"
    );
}

/// The same store in Pull mode: the hub probes its member cluster, and the
/// last successful probe stands where a Push site's last heartbeat does.
fn pull_store() -> (FederatedCluster, Schedule) {
    let (site, schedule) = store();
    (site.pull(), schedule)
}

fn probed(
    site: &FederatedCluster,
    schedule: &Schedule,
    probe: Option<&ProbeVerdict>,
    s: Sighting,
    now: Timestamp,
) -> HubStatus<'static> {
    let bearings = Bearings {
        interval: I,
        credential_warning: DEFAULT_CREDENTIAL_WARNING,
        leader_since: None,
        probe,
        member: None,
        remembered: None,
        schedule: Some(schedule),
    };
    super::super::judge(site, s, &bearings, now).into_owned()
}

fn failed(failure: crate::fleet::probe::ProbeFailure) -> ProbeVerdict {
    verdict(ProbeOutcome::Failed {
        failure,
        message: format!("member said {}", failure.as_str()),
    })
}

#[test]
fn a_pull_store_whose_probes_meet_silence_sleeps_and_is_late_after_it() {
    use crate::fleet::probe::ProbeFailure;
    let (site, schedule) = pull_store();
    // Last successful probe 21:57 CET (20:57Z); the window opens 21:00Z.
    let s = heard("2026-01-10T20:57:00Z", "2026-01-10T20:57:00Z");
    // (when, phase, Connected reason) for every probe failure that is
    // the member's silence.
    let cases = [
        ("2026-01-10T20:59:59Z", Phase::Stale, None),
        ("2026-01-10T23:00:00Z", Phase::Sleeping, Some("Sleeping")),
        ("2026-01-11T05:01:29Z", Phase::Sleeping, Some("Sleeping")),
        (
            "2026-01-11T05:01:30Z",
            Phase::Unreachable,
            Some("LateToWake"),
        ),
        // Late through the next night too, until a probe succeeds.
        (
            "2026-01-11T23:00:00Z",
            Phase::Unreachable,
            Some("LateToWake"),
        ),
    ];
    for failure in ProbeFailure::ALL.iter().filter(|f| f.is_silence()) {
        let probe = failed(*failure);
        for (now, phase, reason) in cases {
            let h = probed(&site, &schedule, Some(&probe), s, t(now));
            assert_eq!(h.phase, phase, "{failure:?} at {now}");
            let (status, got) = reason_of(&h);
            assert_eq!(status, "False", "{failure:?} at {now}");
            assert_eq!(
                got,
                reason.unwrap_or(failure.as_str()),
                "{failure:?} at {now}"
            );
        }
    }
    // The message says what the schedule expects and what the probe found.
    let h = probed(
        &site,
        &schedule,
        Some(&failed(ProbeFailure::Timeout)),
        s,
        t("2026-01-10T23:00:00Z"),
    );
    let msg = &cond(&h, CONDITION_CONNECTED).unwrap().message;
    assert!(msg.contains("as its schedule expects"), "{msg}");
    assert!(
        msg.contains("latest probe: Timeout: member said Timeout"),
        "{msg}"
    );
    assert_eq!(
        h.requeue_after,
        Some(
            Duration::try_from(t("2026-01-11T05:01:30Z").duration_since(t("2026-01-10T23:00:00Z")))
                .unwrap()
                + phase::TRANSITION_MARGIN
        ),
        "judged again when it turns late"
    );
    let late = probed(
        &site,
        &schedule,
        Some(&failed(ProbeFailure::Timeout)),
        s,
        t("2026-01-11T05:01:30Z"),
    );
    assert!(crate::fleet::hub_status::is_late_to_wake(&written(
        site.clone(),
        &late
    )));
    // A successful probe: Connected, whatever the hour.
    let reached = verdict(ProbeOutcome::Reached { insecure: false });
    let s = heard("2026-01-10T23:00:00Z", "2026-01-10T23:00:00Z");
    let h = probed(
        &site,
        &schedule,
        Some(&reached),
        s,
        t("2026-01-10T23:00:01Z"),
    );
    assert_eq!(h.phase, Phase::Connected);
    assert_eq!(reason_of(&h), ("True".into(), "ProbeSucceeded".into()));
}

#[test]
fn a_pull_store_whose_member_answers_with_a_fault_is_not_asleep() {
    use crate::fleet::probe::ProbeFailure;
    let (site, schedule) = pull_store();
    let s = heard("2026-01-10T20:57:00Z", "2026-01-10T20:57:00Z");
    // Inside the window, the member answers: a revoked token, a denied
    // read, a broken Secret are faults to fix, not a sleep.
    for failure in ProbeFailure::ALL.iter().filter(|f| !f.is_silence()) {
        let h = probed(
            &site,
            &schedule,
            Some(&failed(*failure)),
            s,
            t("2026-01-10T23:00:00Z"),
        );
        assert_eq!(h.phase, Phase::Unreachable, "{failure:?}");
        assert_eq!(
            reason_of(&h),
            ("False".into(), failure.as_str().into()),
            "{failure:?}"
        );
    }
    // Without a schedule, the same silence is an outage.
    let mut plain = site.clone();
    plain.spec.connectivity = None;
    let h = pull_hub_status(
        &plain,
        &s,
        I,
        Some(&failed(ProbeFailure::Timeout)),
        DEFAULT_CREDENTIAL_WARNING,
        None,
        t("2026-01-10T23:00:00Z"),
    );
    assert_eq!(h.phase, Phase::Unreachable);
}

#[test]
fn a_sleeping_pull_store_stays_asleep_across_a_hub_restart() {
    use crate::fleet::probe::ProbeFailure;
    let (site, schedule) = pull_store();
    let s = heard("2026-01-10T20:57:00Z", "2026-01-10T20:57:00Z");
    let asleep = probed(
        &site,
        &schedule,
        Some(&failed(ProbeFailure::ConnectionRefused)),
        s,
        t("2026-01-10T23:00:00Z"),
    );
    let site = written(site, &asleep);
    // A new hub process, not probed yet: the stored judgement stands,
    // nothing to write.
    let restarted = probed(&site, &schedule, None, s, t("2026-01-10T23:05:00Z"));
    assert_eq!(restarted.phase, Phase::Sleeping);
    assert!(!restarted.changed, "{:?}", restarted.conditions);
    // ... and turns late on time.
    let late = probed(&site, &schedule, None, s, t("2026-01-11T05:01:30Z"));
    assert_eq!(late.phase, Phase::Unreachable);
    assert_eq!(reason_of(&late).1, "LateToWake");
}

#[test]
fn a_sleeping_pull_stores_member_token_that_lapses_before_it_returns_is_flagged() {
    use crate::fleet::probe::ProbeFailure;
    let (mut site, schedule) = pull_store();
    let status = site.status.get_or_insert_with(Default::default);
    // The hub renews it, but cannot reach the member before 06:00.
    status.credential_expiration_time = Some(Time(t("2026-01-11T02:00:00Z")));
    status.credential_renewal_time = Some(Time(t("2026-01-11T01:00:00Z")));
    let s = heard("2026-01-10T20:57:00Z", "2026-01-10T20:57:00Z");
    let h = probed(
        &site,
        &schedule,
        Some(&failed(ProbeFailure::Timeout)),
        s,
        t("2026-01-10T23:00:00Z"),
    );
    let c = cond(&h, CONDITION_CREDENTIAL_EXPIRING).unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("True", "ExpiresBeforeReturn")
    );
    assert!(
        c.message
            .contains("kubectl fleet register store-7 --pull --member-kubeconfig FILE"),
        "{}",
        c.message
    );
}
