//! docs/operations.md#condition-reasons lists every `Connected` reason
//! the code declares, and no other.

use crate::api::WireEnum;
use crate::fleet::hub_status::HeartbeatReason;
use crate::fleet::probe::{ProbeFailure, ProbeReason};

fn operations_md() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/operations.md");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The first cells (between backticks) of the table rows under `heading`,
/// up to the next heading.
fn reasons_under(doc: &str, heading: &str) -> Vec<String> {
    let start = doc
        .lines()
        .position(|l| l == heading)
        .unwrap_or_else(|| panic!("docs/operations.md has no heading {heading:?}"));
    doc.lines()
        .skip(start + 1)
        .take_while(|l| !l.starts_with('#'))
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`').map(|(reason, _)| reason.to_owned()))
        .collect()
}

fn assert_documented<E: WireEnum>(heading: &str) {
    let listed = reasons_under(&operations_md(), heading);
    let declared: Vec<String> = E::ALL.iter().map(|v| v.as_str().to_owned()).collect();
    let missing: Vec<&String> = declared.iter().filter(|r| !listed.contains(r)).collect();
    let unknown: Vec<&String> = listed.iter().filter(|r| !declared.contains(r)).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "docs/operations.md {heading:?}: {} not documented: {missing:?}; documented but not a {}: {unknown:?}",
        E::WHAT,
        E::WHAT,
    );
    let mut once = listed.clone();
    once.sort();
    once.dedup();
    assert_eq!(once.len(), listed.len(), "{heading:?} lists a reason twice");
}

#[test]
fn every_heartbeat_reason_is_documented_and_no_other() {
    assert_documented::<HeartbeatReason>("### Push: heartbeat reasons");
}

#[test]
fn every_probe_failure_is_documented_and_no_other() {
    assert_documented::<ProbeFailure>("### Pull: probe failures");
}

#[test]
fn every_probe_reason_is_documented_and_no_other() {
    assert_documented::<ProbeReason>("### Pull: probe reasons");
}

#[test]
fn the_check_sees_a_missing_and_an_invented_reason() {
    let doc = "### H\n\n| reason | x |\n| --- | --- |\n| `HeartbeatStale` | a |\n| `Invented` | b |\n\n## Next\n| `NeverHeardFrom` | c |\n";
    assert_eq!(reasons_under(doc, "### H"), ["HeartbeatStale", "Invented"]);
}
