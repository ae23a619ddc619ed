//! `ClockSkew` as the hub measures it from heartbeats it is handed late.

use super::*;

/// The hub's view of a site whose edge reported a heartbeat at `reported`,
/// folded in as the hub folds a watch event at `delivered` (both in seconds
/// from the fixture's now), and judged then; returns the new sighting and
/// the site as the hub's write (if any) left it.
fn deliver(
    site: FederatedCluster,
    before: &Sighting,
    reported: i64,
    delivered: i64,
) -> (Sighting, FederatedCluster, HubStatus<'static>) {
    let site = site.heartbeat_ago(-reported);
    let sighting = Sighting::of_site(Some(before), &site, I, at(delivered));
    let h = judge(&site, &sighting, at(delivered));
    (sighting, written(site, &h), h)
}

fn skew_of(site: &FederatedCluster) -> Option<(String, Option<i64>)> {
    let status = site.status.as_ref()?;
    let c = status.condition(CONDITION_CLOCK_SKEW)?;
    Some((c.status.clone(), status.clock_offset_seconds))
}

/// An honest edge (its clock the hub's) seen live, then a watch gap of
/// 110 s (the lease watch reconnecting, a re-list of 100,000 leases on a
/// loaded API server): the renewals made in the gap arrive together when
/// the watch resumes, each up to 110 s late, beyond the 60 s tolerance.
#[test]
fn heartbeats_delivered_late_never_make_an_honest_edge_look_skewed() {
    let mut site = site();
    let mut s = NEVER;
    for t in [0, 30, 60] {
        (s, site, _) = deliver(site, &s, t, t);
    }
    assert_eq!(skew_of(&site), Some(("False".into(), None)));
    // Renewed at 90, 120, 150 and 180; all handed over at 200.
    for t in [90, 120, 150, 180] {
        let h;
        (s, site, h) = deliver(site, &s, t, 200);
        assert_eq!(
            skew_of(&site),
            Some(("False".into(), None)),
            "a renewal made at {t} and delivered at 200 taken for a skewed clock"
        );
        assert_eq!(h.clock_offset_seconds, None);
    }
    // The watch delivers at once again.
    (s, site, _) = deliver(site, &s, 210, 210);
    assert_eq!(skew_of(&site), Some(("False".into(), None)));
    // One renewal alone delivered late (a re-list hands over only the
    // latest, up to an interval plus the list's length old).
    (_, site, _) = deliver(site, &s, 240, 330);
    assert_eq!(skew_of(&site), Some(("False".into(), None)));
}

/// An edge whose clock falls 10 minutes behind is told at its second
/// heartbeat so read (one interval later than a single reading would
/// tell); one whose clock jumps ahead at its first; either set right is
/// cleared at once.
#[test]
fn a_skewed_edge_is_still_told() {
    let mut site = site();
    let mut s = NEVER;
    for t in [0, 30] {
        (s, site, _) = deliver(site, &s, t, t);
    }
    (s, site, _) = deliver(site, &s, 60 - 600, 60);
    assert_eq!(
        skew_of(&site),
        Some(("False".into(), None)),
        "one reading of an edge behind is not enough"
    );
    let before = site.status.clone();
    let h;
    (s, site, h) = deliver(site, &s, 90 - 600, 90);
    assert_eq!(skew_of(&site), Some(("True".into(), Some(-600))));
    assert_eq!(
        h.changes(before.as_ref()),
        ["clockOffsetSeconds", "ClockSkew"],
        "what the hub's log names for this write"
    );
    // Set right: cleared at the first heartbeat.
    (s, site, _) = deliver(site, &s, 120, 120);
    assert_eq!(skew_of(&site), Some(("False".into(), None)));
    // Ahead: told at once.
    (s, site, _) = deliver(site, &s, 150 + 600, 150);
    assert_eq!(skew_of(&site), Some(("True".into(), Some(600))));
    (_, site, _) = deliver(site, &s, 180, 180);
    assert_eq!(skew_of(&site), Some(("False".into(), None)));
}

/// A site first seen live with its edge behind (nothing earlier to confirm
/// the reading): the hub says nothing of its clock until a second reading.
#[test]
fn a_lone_reading_of_an_edge_behind_measures_nothing() {
    let site = site();
    let first = Sighting::of_site(None, &site.clone().heartbeat_ago(0), I, at(0));
    let (s, site, _) = deliver(site, &first, 30 - 600, 30);
    assert_eq!(skew_of(&site), None);
    let (_, site, _) = deliver(site, &s, 60 - 600, 60);
    assert_eq!(skew_of(&site), Some(("True".into(), Some(-600))));
}
