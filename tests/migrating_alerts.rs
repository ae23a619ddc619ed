//! The alert rules docs/migrating.md tells a team coming from ChatCLI to
//! write, run by the real `promtool` (`tools/promtool.sh`; `tools/test.sh`
//! exports PROMTOOL) beside the shipped rules: the block under the
//! `migrating-rules` marker is taken from the page as written, so the page
//! cannot drift from what works.
//!
//! `FleetSitesDisconnected` counts the sites `ClusterDisconnected` pages
//! for, per group: it fires with it and not sooner, counts two hub
//! replicas once, stays quiet for a site in a maintenance window and on a
//! Connected fleet, and the shipped inhibition holds it back during a
//! grouped outage of its group. The copied ChatCLI expression
//! `federation_clusters_total{status="disconnected"} > 0` selects nothing
//! on the same series, which is why the page says to replace it.
//! tests/alerts_live.rs loads the same block into a real Prometheus.

use std::path::Path;
use std::process::Command;

use kubectl_fleet::manifests::monitoring;
use serde_json::Value;

/// The YAML block that follows the `migrating-rules` marker.
pub fn documented_rules() -> String {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/migrating.md"))
            .unwrap();
    let after = page
        .split_once("<!-- migrating-rules:")
        .expect("docs/migrating.md has the migrating-rules marker")
        .1;
    let block = after
        .split_once("```yaml\n")
        .expect("a yaml block follows the marker")
        .1;
    block.split_once("```").unwrap().0.to_owned()
}

/// The documented rule `name`, parsed.
fn documented_rule(name: &str) -> Value {
    let doc: Value = serde_saphyr::from_str(&documented_rules()).unwrap();
    doc["groups"][0]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["alert"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no {name} in the block"))
}

/// The shipped rule `name`.
fn shipped_rule(name: &str) -> Value {
    monitoring::rule_groups()["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["rules"].as_array().unwrap().clone())
        .find(|r| r["alert"] == name)
        .unwrap()
}

/// `promtool test rules` input series: on two hub replicas (each serves
/// the same gauges from its own cache), the hub counting 5 sites, and a
/// `federation_cluster_disconnected` series per (site, group, status,
/// `from` minute) of `dark`; `maintenance` sites carry the marker.
fn series(dark: &[(&str, &str, &str, u32)], maintenance: &[&str], correlations: u32) -> String {
    let mut out = String::new();
    for instance in ["hub-a", "hub-b"] {
        let line = |series: String, values: String| {
            format!("      - series: '{series}'\n        values: '{values}'\n")
        };
        out += &line(
            format!("federation_clusters_total{{status=\"connected\",instance=\"{instance}\"}}"),
            "5x15".into(),
        );
        for (site, group, status, from) in dark {
            let values = if *from == 0 {
                "1x15".to_owned()
            } else {
                format!("_x{from} 1x15")
            };
            out += &line(
                format!(
                    "federation_cluster_disconnected{{cluster=\"{site}\",group=\"{group}\",status=\"{status}\",instance=\"{instance}\"}}"
                ),
                values,
            );
        }
        for site in maintenance {
            out += &line(
                format!(
                    "federation_cluster_maintenance{{cluster=\"{site}\",instance=\"{instance}\"}}"
                ),
                "1x15".into(),
            );
        }
        out += &line(
            format!("cross_cluster_correlations_active{{instance=\"{instance}\"}}"),
            format!("{correlations}x15"),
        );
    }
    out
}

fn promtool() -> Option<String> {
    crate::support::require_tool("promtool").map(|p| p.display().to_string())
}

#[test]
fn the_documented_replacement_pages_as_cluster_disconnected_does_where_the_copied_chatcli_alert_stays_silent()
 {
    let Some(promtool) = promtool() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut rules = documented_rules();
    assert!(rules.contains("alert: FleetSitesDisconnected"), "{rules}");
    // The ChatCLI alert as a team would copy it, beside the documented ones.
    rules.push_str(
        "      - alert: CopiedFromChatCLI\n        expr: federation_clusters_total{status=\"disconnected\"} > 0\n        for: 5m\n",
    );
    std::fs::write(dir.path().join("migrated.yaml"), &rules).unwrap();
    // The shipped rules beside them: ClusterDisconnected is checked on the
    // same series at the same times (its labels; the annotations are the
    // shipped unit tests' matter).
    let (_, shipped) = monitoring::files()
        .into_iter()
        .find(|(name, _)| *name == "fleet-rules.yaml")
        .unwrap();
    std::fs::write(dir.path().join("shipped.yaml"), shipped).unwrap();
    // Two sites of eu-west dark from minute 2 (one Stale, one
    // Unreachable), on two replicas; a cordoned site dark from minute 0.
    let dark = series(
        &[
            ("s1", "eu-west", "stale", 2),
            ("s2", "eu-west", "unreachable", 2),
            ("c1", "us-east", "unreachable", 0),
        ],
        &["c1"],
        1,
    );
    let page = |group: &str, n: u32| {
        format!(
            "          - exp_labels: {{severity: critical, group: {group}}}\n            exp_annotations: {{summary: '{n} fleet site(s) are not reporting in {group}'}}\n"
        )
    };
    let tests = format!(
        "rule_files: [migrated.yaml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
{dark}
    alert_rule_test:
      - alertname: FleetSitesDisconnected
        eval_time: 2m
        exp_alerts: []
      - alertname: FleetSitesDisconnected
        eval_time: 3m
        exp_alerts:
{page3}
      - alertname: FleetSitesDisconnected
        eval_time: 10m
        exp_alerts:
{page10}
      - alertname: FleetCorrelationActive
        eval_time: 10m
        exp_alerts:
          - exp_labels: {{severity: critical}}
            exp_annotations: {{summary: '1 cross-cluster correlation(s) active'}}
      - alertname: CopiedFromChatCLI
        eval_time: 10m
        exp_alerts: []
  - interval: 1m
    input_series:
{up}
    alert_rule_test:
      - alertname: FleetSitesDisconnected
        eval_time: 10m
        exp_alerts: []
      - alertname: FleetCorrelationActive
        eval_time: 10m
        exp_alerts: []
",
        page3 = page("eu-west", 2),
        page10 = page("eu-west", 2),
        up = series(&[], &[], 0),
    );
    std::fs::write(dir.path().join("migrated.test.yaml"), tests).unwrap();
    for args in [
        ["check", "rules", "migrated.yaml"],
        ["test", "rules", "migrated.test.yaml"],
    ] {
        let out = Command::new(&promtool)
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "promtool {args:?}:\n{text}\n{rules}");
    }

    // ClusterDisconnected on the same series: pending at 2m, paging s1 and
    // s2 (not the cordoned c1) at 3m, as the replacement does.
    let query = |at: &str| {
        let out = Command::new(&promtool)
            .args(["test", "rules", &write_probe(dir.path(), &dark, at)])
            .current_dir(dir.path())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    let at2 = query("2m");
    assert!(
        at2.contains("SUCCESS"),
        "ClusterDisconnected only pending at 2m:\n{at2}"
    );
    let at3 = query("3m");
    for site in ["s1", "s2"] {
        assert!(
            at3.contains(&format!(
                "cluster=\"{site}\", group=\"eu-west\", severity=\"critical\""
            )),
            "ClusterDisconnected pages {site} at 3m:\n{at3}"
        );
    }
    assert!(!at3.contains("c1"), "no page for the cordoned site:\n{at3}");
}

/// A `promtool test rules` file over the shipped rules that expects no
/// ClusterDisconnected at `at`, so its failure output lists what fired.
fn write_probe(dir: &Path, series: &str, at: &str) -> String {
    let name = format!("probe-{at}.test.yaml");
    std::fs::write(
        dir.join(&name),
        format!(
            "rule_files: [shipped.yaml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
{series}
    alert_rule_test:
      - alertname: ClusterDisconnected
        eval_time: {at}
        exp_alerts: []
"
        ),
    )
    .unwrap();
    name
}

#[test]
fn the_documented_replacement_waits_as_long_and_is_held_back_by_the_shipped_inhibition() {
    let documented = documented_rule("FleetSitesDisconnected");
    let shipped = shipped_rule("ClusterDisconnected");
    // The same `for`, on the same sites.
    assert_eq!(documented["for"], shipped["for"], "{documented}");
    assert_eq!(documented["for"], monitoring::DISCONNECTED_FOR);
    let squash = |s: &str| s.split_whitespace().collect::<String>();
    assert!(
        squash(documented["expr"].as_str().unwrap()).contains(&squash(monitoring::DARK_SITES)),
        "{documented}"
    );
    // One alert per group, held back while its group's outage fires.
    assert!(
        documented["expr"]
            .as_str()
            .unwrap()
            .contains("count by (group)")
    );
    let outage = [
        ("alertname", "FleetGroupedOutage"),
        ("group", "eu-west"),
        ("group_by", "region"),
    ];
    assert!(monitoring::inhibited(
        &[
            ("alertname", "FleetSitesDisconnected"),
            ("group", "eu-west")
        ],
        &outage
    ));
    assert!(!monitoring::inhibited(
        &[
            ("alertname", "FleetSitesDisconnected"),
            ("group", "us-east")
        ],
        &outage
    ));
    assert!(!monitoring::inhibited(
        &[
            ("alertname", "FleetCorrelationActive"),
            ("group", "eu-west")
        ],
        &outage
    ));
}
