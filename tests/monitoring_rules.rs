//! The shipped alert rules checked by the real `promtool` (Debian's
//! `prometheus` package, installed by `tools/promtool.sh`; `tools/test.sh`
//! exports its path as PROMTOOL): `promtool check rules` on the rule file
//! and `promtool test rules` with a firing and a not-firing case for every
//! alert (deploy/monitoring/fleet-rules.test.yaml, generated next to it).
//! tests/alerts_live.rs runs the same rules in a real Prometheus.

use std::path::Path;
use std::process::Command;

/// promtool (`PROMTOOL`, which `tools/test.sh` exports from
/// `tools/promtool.sh`, else PATH); missing, see
/// [`crate::support::require_tool`].
fn promtool() -> Option<String> {
    crate::support::require_tool("promtool").map(|p| p.display().to_string())
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
    let rules: usize = kubectl_fleet::manifests::monitoring::rule_groups()["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["rules"].as_array().unwrap().len())
        .sum();
    assert!(
        out.contains(&format!("SUCCESS: {rules} rules found")),
        "{out}"
    );
}

#[test]
fn every_alert_fires_and_stays_quiet_as_its_unit_tests_say() {
    let Some(p) = promtool() else { return };
    let out = run(&p, &["test", "rules", "fleet-rules.test.yaml"]);
    assert!(out.contains("SUCCESS"), "{out}");
    // Each alert has at least one case where it fires and one where it does not.
    // The cases as generated (xtask/src/promtool.rs; xtask's tests keep
    // the checked-in file current).
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/monitoring/fleet-rules.test.yaml"),
    )
    .unwrap();
    let tests: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
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
    let rules = kubectl_fleet::manifests::monitoring::rule_groups();
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

/// `promtool check metrics` on the hub's exposition for a fleet whose site
/// names and regions hold what a hostile writer would put there (values
/// the CRD patterns refuse, as a server without validation or an older
/// object could still hold them): it parses (exit 0, or 3 for lint
/// findings alone), and no series is forged. Without the escaping, the
/// lone `"` is a parse error (exit 1) and the region below adds a second
/// `federation_clusters_total{status="unreachable"}` sample.
#[test]
fn a_hostile_fleet_still_exposes_valid_metrics() {
    use kubectl_fleet::api::FederatedCluster;
    use kubectl_fleet::operator::metrics::{Metrics, MetricsRole};
    let Some(p) = promtool() else { return };
    let mut sites = Vec::new();
    for (i, region) in [
        "x\"} 0\nfederation_clusters_total{status=\"unreachable\"} 0\n#",
        "\"",
        "back\\slash",
        "new\nline",
    ]
    .iter()
    .enumerate()
    {
        let mut site = FederatedCluster::test(&format!("site-{i}")).connected();
        site.spec.region = Some((*region).to_owned());
        sites.push(site);
    }
    let metrics = Metrics::new(MetricsRole::Hub);
    metrics.set_fleet(&sites, 0, Some(true), jiff::Timestamp::now());
    metrics.observe_health_check("quote\"d\nname", 0.01);
    let text = metrics.encode();
    let forged = text
        .lines()
        .filter(|l| l.starts_with("federation_clusters_total{status=\"unreachable\"}"))
        .count();
    assert_eq!(forged, 1, "{text}");
    let mut child = Command::new(&p)
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let report =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    // 3: lint findings only (the design's gauge name ending in _total).
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "promtool check metrics: {:?}\n{report}\n{text}",
        out.status
    );
    assert!(!report.contains("error while linting"), "{report}");
    assert!(!report.contains("parsing error"), "{report}");
}
