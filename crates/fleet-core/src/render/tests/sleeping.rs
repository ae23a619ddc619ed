//! Sites that sleep on a schedule, and sites late to wake.

use super::*;

fn scheduled(mut site: FederatedCluster) -> FederatedCluster {
    site.spec.connectivity = Some(crate::api::Connectivity {
        time_zone: Some("Europe/Berlin".into()),
        offline: vec!["22:00-06:00".into()],
        absent_up_to_seconds: None,
    });
    site
}

#[test]
fn sleeping_and_late_to_wake_sites_are_shown_in_every_status_format() {
    let now = fixture_now();
    let sites = [
        scheduled(FederatedCluster::test("store-1").sleeping()),
        scheduled(FederatedCluster::test("store-2").late_to_wake()),
        FederatedCluster::test("store-3").connected(),
    ];
    let table = table_of(&sites, Some(true), now, false, false);
    let row = |t: &str, name: &str| t.lines().find(|l| l.starts_with(name)).unwrap().to_owned();
    assert!(row(&table, "store-1").contains(" Sleeping "), "{table}");
    assert!(
        row(&table, "store-2").contains(" Unreachable,LateToWake "),
        "{table}"
    );
    assert!(
        table.contains("Sites: 3 (1 Connected, 0 Stale, 1 Unreachable, 0 Pending, 1 Sleeping)"),
        "{table}"
    );
    let reason = |site: &FederatedCluster| cell(site, Some(true), now, "REASON");
    assert_eq!(reason(&sites[0]), "Sleeping");
    assert_eq!(reason(&sites[1]), "LateToWake");
    // No schedule in the fleet: the footer does not mention sleeping.
    let plain = table_of(&sites[2..], Some(true), now, false, false);
    assert!(!plain.contains("Sleeping"), "{plain}");

    let report = serde_json::to_value(status_report(&sites, &judging(), &none(), now)).unwrap();
    let by_name = |n: &str| {
        report["sites"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == n)
            .unwrap()
            .clone()
    };
    assert_eq!(by_name("store-1")["phase"], "Sleeping");
    assert_eq!(
        by_name("store-1")["connectivity"],
        serde_json::json!({"timeZone": "Europe/Berlin", "offline": ["22:00-06:00"]})
    );
    assert_eq!(by_name("store-1")["lateToWake"], false);
    assert_eq!(by_name("store-2")["lateToWake"], true);
    assert_eq!(by_name("store-3")["connectivity"], serde_json::Value::Null);
    assert_eq!(report["summary"]["phases"]["sleeping"], 1);

    let text = |site: &FederatedCluster| {
        let d = describe::site_description(site, &judging(), &none(), None, now);
        describe::render_description(&d, now)
    };
    let asleep = text(&sites[0]);
    assert!(
        asleep.contains("offline 22:00-06:00 Europe/Berlin (asleep: silent as it expects)"),
        "{asleep}"
    );
    let late = text(&sites[1]);
    assert!(
        late.contains("(late to wake: still silent past it; LateToWake)"),
        "{late}"
    );
    assert!(
        !text(&sites[2]).contains("Schedule"),
        "only for a site that has one"
    );
}

/// `-o wide` names each site's schedule in a few words (SCHEDULE), from
/// the key `-o json` carries it in (`connectivity`); `-` without one.
#[test]
fn the_wide_table_shows_each_sites_schedule() {
    let now = fixture_now();
    let with = |name: &str, zone: Option<&str>, offline: &[&str], absent: Option<i64>| {
        let mut site = FederatedCluster::test(name).connected();
        site.spec.connectivity = Some(crate::api::Connectivity {
            time_zone: zone.map(str::to_owned),
            offline: offline.iter().map(|w| (*w).to_owned()).collect(),
            absent_up_to_seconds: absent,
        });
        site
    };
    let sites = [
        with("store", Some("Europe/Berlin"), &["22:00-06:00"], None),
        with("ship", None, &[], Some(7 * 86_400)),
        with(
            "both",
            Some("America/New_York"),
            &["22:00-06:00"],
            Some(36 * 3600),
        ),
        with(
            "many",
            Some("UTC"),
            &[
                "01:00-02:00",
                "Sat 00:00-Mon 06:00",
                "03:00-04:00",
                "05:00-05:30",
            ],
            None,
        ),
        // Written past the CRD: escaped, never raw.
        with("hostile", Some("Evil/\u{1b}[2J"), &["22:00-06:00"], None),
        FederatedCluster::test("plain").connected(),
    ];
    let shown: Vec<String> = sites
        .iter()
        .map(|s| cell(s, Some(true), now, "SCHEDULE"))
        .collect();
    assert_eq!(
        shown,
        [
            "22:00-06:00 Europe/Berlin",
            "\u{2264}7d",
            "22:00-06:00 America/New_York \u{2264}1d12h",
            "01:00-02:00,Sat 00:00-Mon 06:00,+2 UTC",
            "22:00-06:00 Evil/\u{fffd}[2J",
            "-",
        ]
    );
    let wide = table_of(&sites, Some(true), now, true, false);
    assert!(
        wide.lines().next().unwrap().contains(" SCHEDULE "),
        "{wide}"
    );
    assert!(!wide.contains('\u{1b}'), "{wide}");
    let store = wide.lines().find(|l| l.starts_with("store ")).unwrap();
    assert!(store.contains("  22:00-06:00 Europe/Berlin  "), "{wide}");
    // Only `-o wide`.
    assert!(!table_of(&sites, Some(true), now, false, false).contains("SCHEDULE"));
    // The key it names carries the schedule wherever the column shows one.
    for site in &sites {
        let report = report::site_report(site, Some(true), &none(), now);
        let json = serde_json::to_value(&report).unwrap();
        let shown = cell(site, Some(true), now, "SCHEDULE");
        assert_eq!(json["connectivity"].is_null(), shown == "-", "{json}");
    }
    assert!(
        status::column_reference().contains("SCHEDULE        connectivity  (-o wide)\n"),
        "{}",
        status::column_reference()
    );
}

/// While no hub judges, no view claims a site asleep as the hub's word:
/// whether its silence is still expected (or it is late to wake) is the
/// hub's to judge by its schedule. Its heartbeat's age is shown instead,
/// marked not judged, as for every other phase.
#[test]
fn no_view_claims_a_site_asleep_while_no_hub_judges() {
    let now = fixture_now();
    let (_, silent) = hubless_fleet();
    assert_eq!(silent.judging(), Some(false));
    let asleep = scheduled(FederatedCluster::test("store-1").sleeping());
    let sites = [asleep.clone()];
    let table = table_of(&sites, silent.judging(), now, true, false);
    let row = table.lines().find(|l| l.starts_with("store-1")).unwrap();
    assert!(row.contains(" Unreachable? "), "{table}");
    assert!(!row.contains("Sleeping"), "{table}");
    assert_eq!(
        cell(&asleep, silent.judging(), now, "REASON"),
        status::NOT_JUDGED_REASON
    );
    assert!(
        table.contains("Sites: 1 (0 Connected, 0 Stale, 1 Unreachable, 0 Pending)"),
        "{table}"
    );
    let v = serde_json::to_value(status_report(&sites, &silent, &none(), now)).unwrap();
    let site = &v["sites"][0];
    assert_eq!(site["phase"], "Unreachable");
    assert_eq!(site["phaseJudgedByHub"], false);
    assert_eq!(site["hubPhase"], "Sleeping");
    assert_eq!(v["summary"]["phases"]["sleeping"], 0);
    let text = describe::render_description(
        &describe::site_description(&asleep, &silent, &none(), None, now),
        now,
    );
    assert!(
        text.contains("Unreachable? (implied by the heartbeat's age: no hub has judged it since; the hub last wrote Sleeping"),
        "{text}"
    );
    assert!(!text.contains("(asleep: silent as it expects)"), "{text}");
    // Heard from since, nobody judging: not promoted, not the hub's word.
    let woke = scheduled(
        FederatedCluster::test("store-2")
            .sleeping()
            .heartbeat_ago(5),
    );
    assert_eq!(cell(&woke, silent.judging(), now, "PHASE"), "Sleeping?");
    let text = describe::render_description(
        &describe::site_description(&woke, &silent, &none(), None, now),
        now,
    );
    assert!(!text.contains("asleep: silent as it expects"), "{text}");
    // With a judging hub, the hub's word.
    assert_eq!(cell(&asleep, Some(true), now, "PHASE"), "Sleeping");
}
