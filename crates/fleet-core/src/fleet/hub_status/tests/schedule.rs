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
    }
}

fn reason(h: &HubStatus) -> (String, String) {
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
    assert_eq!(reason(&asleep), ("False".into(), "Sleeping".into()));
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
    assert_eq!(reason(&late), ("False".into(), "LateToWake".into()));
    assert!(late.changed);
    let msg = &cond(&late, CONDITION_CONNECTED).unwrap().message;
    assert!(msg.contains("late to wake"), "{msg}");
    // It wakes: a new heartbeat is Connected, whatever the hour.
    let site = written(site, &late);
    let s = heard("2026-01-11T05:02:00Z", "2026-01-11T05:02:00Z");
    let awake = judged(&site, &schedule, s, t("2026-01-11T05:02:10Z"));
    assert_eq!(awake.phase, Phase::Connected);
    assert_eq!(reason(&awake), ("True".into(), "HeartbeatReceived".into()));
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
        };
        assert_eq!(
            judged(&site, &schedule, s, t("2026-01-10T23:00:00Z")).phase,
            Phase::Sleeping,
            "edge clock {offset}s off"
        );
        assert_eq!(
            reason(&judged(&site, &schedule, s, t("2026-01-11T06:00:00Z"))).1,
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
