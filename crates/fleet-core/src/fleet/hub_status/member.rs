//! The member cluster a site's reports come from: `MemberChanged`.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use super::conditions::*;
use crate::api::{CONDITION_MEMBER_CHANGED, FederatedCluster};
use crate::fleet::phase::{self};

/// How long `MemberChanged` stays True after the hub last saw a site's
/// member identity change: long enough for a person to see it, and a
/// second edge that keeps reporting for the site keeps it True.
pub(crate) const MEMBER_CHANGE_HOLD: Duration = Duration::from_secs(3600);

/// `MemberChanged` True.
pub(crate) const MEMBER_CHANGED: &str = "MemberChanged";
/// `MemberChanged` False: one member for [`MEMBER_CHANGE_HOLD`] since the
/// last change.
pub(crate) const MEMBER_UNCHANGED: &str = "MemberUnchanged";

/// What the hub has seen of the member identity (`status.member`) a site's
/// reports name, in memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemberSighting {
    /// The member the latest report named (kept when a report names none).
    pub current: Option<String>,
    /// When the hub last saw it change (None: not since it first saw the
    /// site, unless `MemberChanged` was True then, see [`Self::first`]).
    pub changed_at: Option<Timestamp>,
}

/// A change of a site's member the hub just saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberChange {
    /// The member the site reported before.
    pub from: String,
    /// The member it reports now.
    pub to: String,
}

impl MemberSighting {
    /// The hub's first sight of `site` (a start, or a new site). A change
    /// flagged before (`MemberChanged` True) is held from now, for a full
    /// [`MEMBER_CHANGE_HOLD`]: the hub does not know when it last happened.
    pub fn first(site: &FederatedCluster, now: Timestamp) -> Self {
        let status = site.status.as_ref();
        let flagged = status
            .and_then(|s| s.condition(CONDITION_MEMBER_CHANGED))
            .is_some_and(|c| c.status == "True");
        MemberSighting {
            current: status.and_then(|s| s.member.clone()),
            changed_at: flagged.then_some(now),
        }
    }

    /// Folds the member a site reports now into the sighting; the change,
    /// when it is one. No allocation unless the member changed.
    pub fn observe(&mut self, reported: Option<&str>, now: Timestamp) -> Option<MemberChange> {
        let reported = reported?;
        match self.current.as_deref() {
            Some(was) if was == reported => None,
            Some(was) => {
                let change = MemberChange {
                    from: was.to_owned(),
                    to: reported.to_owned(),
                };
                self.current = Some(reported.to_owned());
                self.changed_at = Some(now);
                Some(change)
            }
            None => {
                self.current = Some(reported.to_owned());
                None
            }
        }
    }

    /// When the hold of the last change ends, if the hub saw one.
    fn flagged_until(&self) -> Option<Timestamp> {
        let hold = SignedDuration::try_from(MEMBER_CHANGE_HOLD).unwrap_or(SignedDuration::MAX);
        self.changed_at.map(|t| t.checked_add(hold).unwrap_or(t))
    }
}

pub(super) fn member_state(changed: bool) -> CondState<impl FnOnce() -> String> {
    let (status, reason) = if changed {
        ("True", MEMBER_CHANGED)
    } else {
        ("False", MEMBER_UNCHANGED)
    };
    CondState::new(status, reason, move || {
        let hold = human(MEMBER_CHANGE_HOLD);
        if changed {
            format!(
                "status.member changed: the site's reports now come from another member cluster (kube-system namespace UID) than before. \
                 An edge pointed at another cluster changes it once; two edges reporting for one site change it back and forth \
                 (the hub's MemberChanged Events name each change). Stop the edge that reads the wrong cluster (each edge logs the member it reads); \
                 this turns False after {hold} of reports from one member"
            )
        } else {
            format!(
                "the site's reports have come from one member cluster for {hold} since its member last changed"
            )
        }
    })
}

/// Adds the hub's `MemberChanged` judgement to `j`, a judgement of `site`
/// ([`hub_status`](super::hub_status) or [`pull_hub_status`](super::pull_hub_status)) made with `remembered`, from the
/// hub's sighting of its member (None: no sighting). True until
/// [`MEMBER_CHANGE_HOLD`] after the last change seen, then False; left out
/// while the hub saw no change and the site has no such condition. A
/// change makes `j` a write and moves its requeue to the end of the hold.
pub fn judge_member(
    j: &mut HubStatus<'_>,
    site: &FederatedCluster,
    seen: Option<&MemberSighting>,
    remembered: Option<CheckedConditions>,
    now: Timestamp,
) {
    // As the judgement compared the stored conditions (see `check_for`).
    let check = if j.verified.is_some() && j.verified == remembered {
        Check::Transitions
    } else {
        Check::Full
    };
    let until = seen.and_then(MemberSighting::flagged_until);
    let present = j
        .conditions
        .iter()
        .any(|c| c.type_ == CONDITION_MEMBER_CHANGED);
    let changed = match until {
        Some(until) if now < until => {
            let next = Duration::try_from(until.duration_since(now))
                .map(|d| d + phase::TRANSITION_MARGIN)
                .ok();
            j.requeue_after = match (j.requeue_after, next) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            true
        }
        Some(_) => false,
        None if present => false,
        None => return,
    };
    if set_condition(
        &mut j.conditions,
        CONDITION_MEMBER_CHANGED,
        member_state(changed),
        site.metadata.generation,
        now,
        check,
    ) {
        j.changed = true;
        j.verified = None;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{DEFAULT_CREDENTIAL_WARNING, Sighting, hub_status, pull_hub_status};
    use super::*;
    use crate::fleet::fixtures::fixture_now;
    use crate::fleet::phase::HeartbeatObservation;

    const I: Duration = Duration::from_secs(30);
    const A: &str = "6f1c2a8e-0b7d-4f3e-9a51-2c8d7e6f1b20";
    const B: &str = "0c9e1d2a-7b3f-4e5d-8a6b-1f2e3d4c5b6a";

    fn at(secs: i64) -> Timestamp {
        fixture_now() + SignedDuration::from_secs(secs)
    }

    fn live(secs: i64) -> Sighting {
        Sighting {
            observation: Some(HeartbeatObservation {
                reported: at(secs),
                observed_at: at(secs),
            }),
            live: true,
            earlier_offset: Some(0),
        }
    }

    /// The hub's whole judgement of `site` at `secs`, as the hub makes it.
    fn judge(site: &FederatedCluster, seen: &MemberSighting, secs: i64) -> HubStatus<'static> {
        let mut j = hub_status(
            site,
            &live(secs),
            I,
            DEFAULT_CREDENTIAL_WARNING,
            None,
            at(secs),
        );
        judge_member(&mut j, site, Some(seen), None, at(secs));
        j.into_owned()
    }

    fn written(mut site: FederatedCluster, j: &HubStatus) -> FederatedCluster {
        site.status = j.transition(&site).or(site.status);
        site
    }

    fn member_condition(site: &FederatedCluster) -> Option<(String, String)> {
        site.status
            .as_ref()?
            .condition(CONDITION_MEMBER_CHANGED)
            .map(|c| (c.status.clone(), c.reason.clone()))
    }

    #[test]
    fn a_site_whose_member_changes_is_flagged_for_the_hold_then_cleared() {
        let site = FederatedCluster::test("a").connected().with_member(A);
        let mut seen = MemberSighting::first(&site, at(0));
        assert_eq!(seen.observe(Some(A), at(1)), None, "same member");
        // Never changed: no condition, nothing to write.
        let j = judge(&site, &seen, 1);
        let site = written(site, &j);
        assert_eq!(member_condition(&site), None);
        assert!(!judge(&site, &seen, 2).changed);

        // Another member reports for the site.
        let site = site.with_member(B);
        let change = seen.observe(Some(B), at(10)).unwrap();
        assert_eq!((change.from.as_str(), change.to.as_str()), (A, B));
        let j = judge(&site, &seen, 10);
        assert!(j.changed, "a write");
        let site = written(site, &j);
        assert_eq!(
            member_condition(&site),
            Some(("True".into(), MEMBER_CHANGED.into()))
        );
        let hold = MEMBER_CHANGE_HOLD.as_secs() as i64;
        assert!(!judge(&site, &seen, 20).changed, "no write while it holds");

        // It changes back (a second edge): still True, no new write.
        let site = site.with_member(A);
        assert!(seen.observe(Some(A), at(40)).is_some());
        let mut j = judge(&site, &seen, 40);
        assert!(!j.changed);
        // Judged again when the hold ends, if nothing comes sooner.
        j.requeue_after = None;
        judge_member(&mut j, &site, Some(&seen), None, at(40));
        assert_eq!(
            j.requeue_after,
            Some(MEMBER_CHANGE_HOLD + phase::TRANSITION_MARGIN)
        );

        // One member for the whole hold: False, once.
        let j = judge(&site, &seen, 40 + hold);
        assert!(j.changed);
        let site = written(site, &j);
        assert_eq!(
            member_condition(&site),
            Some(("False".into(), MEMBER_UNCHANGED.into()))
        );
        assert!(!judge(&site, &seen, 50 + hold).changed);
    }

    #[test]
    fn a_restarted_hub_holds_a_flag_it_finds_and_restores_a_forged_one() {
        let site = FederatedCluster::test("a").connected().with_member(A);
        let mut seen = MemberSighting::default();
        seen.observe(Some(B), at(0));
        seen.observe(Some(A), at(5));
        let flagged = written(site.clone(), &judge(&site, &seen, 5));
        // A new hub process finds it True: held a full period from now.
        let fresh = MemberSighting::first(&flagged, at(100));
        assert_eq!(fresh.changed_at, Some(at(100)));
        assert!(!judge(&flagged, &fresh, 100).changed);
        // A site whose member never changed, carrying a condition the
        // hub did not write: the hub's word replaces it.
        let forged = site.clone().with_condition(
            CONDITION_MEMBER_CHANGED,
            "True",
            "Whatever",
            "nothing to see",
            60,
        );
        let seen = MemberSighting {
            current: Some(A.into()),
            changed_at: None,
        };
        let j = judge(&forged, &seen, 10);
        assert!(j.changed);
        assert_eq!(
            member_condition(&written(forged, &j)),
            Some(("False".into(), MEMBER_UNCHANGED.into()))
        );
    }

    #[test]
    fn a_pull_site_is_judged_the_same_way() {
        let site = FederatedCluster::test("p")
            .pull()
            .connected()
            .with_member(B);
        let mut seen = MemberSighting::first(&site, at(0));
        seen.observe(Some(A), at(3));
        let mut j = pull_hub_status(
            &site,
            &live(3),
            I,
            None,
            DEFAULT_CREDENTIAL_WARNING,
            None,
            at(3),
        );
        judge_member(&mut j, &site, Some(&seen), None, at(3));
        assert!(j.changed);
        assert!(
            j.conditions
                .iter()
                .any(|c| c.type_ == CONDITION_MEMBER_CHANGED && c.status == "True")
        );
        assert!(PULL_CONDITION_TYPES.contains(&CONDITION_MEMBER_CHANGED));
        assert!(PUSH_CONDITION_TYPES.contains(&CONDITION_MEMBER_CHANGED));
    }
}
