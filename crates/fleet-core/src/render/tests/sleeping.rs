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
