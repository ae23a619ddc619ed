//! The status table's columns and the `-o json` keys they name.

use super::*;

/// Each column names the key of `-o json` that carries it (`status
/// --help` says so): the key is one a site's report has, and it holds a
/// value wherever the column shows one.
#[test]
fn every_column_names_the_json_key_that_carries_it() {
    for site in fleet() {
        let report = report::site_report(&site, Some(true), &none(), fixture_now());
        let json = serde_json::to_value(&report).unwrap();
        let cells = status::site_cells(&site, Some(true), fixture_now(), true);
        for (header, key) in status::column_keys() {
            let (first, rest) = key.split_once('.').unwrap_or((key, ""));
            let object = json.as_object().unwrap();
            assert!(
                object.contains_key(first),
                "{header}: no key {first} in {json}"
            );
            let value = rest
                .split('.')
                .filter(|k| !k.is_empty())
                .fold(&json[first], |v, k| &v[k]);
            let (_, shown) = cells.iter().find(|(h, _)| *h == header).unwrap();
            // What a cell shows for no value: nothing reported, never
            // heard from, unreadable.
            if ![status::MISSING, "never", status::INVALID].contains(&shown.as_str()) {
                assert!(
                    !value.is_null(),
                    "{}: {header} shows {shown}, {key} is null",
                    site.site_name()
                );
            }
        }
    }
    let help = status::column_reference();
    assert!(
        help.contains("LAST HEARTBEAT  lastHeartbeatAgeSeconds\n"),
        "{help}"
    );
    assert!(
        help.contains("REASON          conditions  (-o wide)\n"),
        "{help}"
    );
}
