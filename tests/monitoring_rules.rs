//! The shipped alert rules checked by the real `promtool` (Debian's
//! `prometheus` package, fetched by `tools/promtool.sh`; `tools/test.sh`
//! exports its path as PROMTOOL): `promtool check rules` on the rule file
//! and `promtool test rules` with a firing and a not-firing case for every
//! alert (deploy/monitoring/fleet-rules.test.yaml, generated next to it).

use std::path::Path;
use std::process::Command;

fn promtool() -> Option<String> {
    let p = std::env::var("PROMTOOL").ok().filter(|p| !p.is_empty());
    if p.is_none() {
        println!("skipped: PROMTOOL not set (bash tools/test.sh sets it)");
    }
    p
}

fn run(promtool: &str, args: &[&str]) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/monitoring");
    let out = Command::new(promtool)
        .args(args)
        .current_dir(&dir)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "promtool {args:?}:\n{text}");
    text
}

#[test]
fn rules_pass_promtool_check() {
    let Some(p) = promtool() else { return };
    let out = run(&p, &["check", "rules", "fleet-rules.yaml"]);
    assert!(out.contains("SUCCESS: 10 rules found"), "{out}");
}

#[test]
fn every_alert_fires_and_stays_quiet_as_its_unit_tests_say() {
    let Some(p) = promtool() else { return };
    let out = run(&p, &["test", "rules", "fleet-rules.test.yaml"]);
    assert!(out.contains("SUCCESS"), "{out}");
    // Each alert has at least one case where it fires and one where it does not.
    let tests = kubectl_fleet::render::monitoring::promtool_tests();
    let mut seen: std::collections::BTreeMap<String, (bool, bool)> = Default::default();
    for t in tests["tests"].as_array().unwrap() {
        for a in t["alert_rule_test"].as_array().unwrap() {
            let e = seen
                .entry(a["alertname"].as_str().unwrap().to_owned())
                .or_default();
            if a["exp_alerts"].as_array().unwrap().is_empty() {
                e.1 = true;
            } else {
                e.0 = true;
            }
        }
    }
    let rules = kubectl_fleet::render::monitoring::rule_groups();
    for g in rules["groups"].as_array().unwrap() {
        for r in g["rules"].as_array().unwrap() {
            let name = r["alert"].as_str().unwrap();
            assert_eq!(
                seen.get(name),
                Some(&(true, true)),
                "{name}: (fires in a case, stays quiet in a case)"
            );
        }
    }
}
