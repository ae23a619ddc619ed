//! The alert rules docs/migrating.md tells a team coming from ChatCLI to
//! write, run by the real `promtool` (`tools/promtool.sh`; `tools/test.sh`
//! exports PROMTOOL): the block under the `migrating-rules` marker is taken
//! from the page as written, so the page cannot drift from what works.
//! `FleetSitesDisconnected` fires on Stale and Unreachable sites served by
//! two hub replicas (counted once) and stays quiet on a Connected fleet;
//! the copied ChatCLI expression `federation_clusters_total{status=
//! "disconnected"} > 0` selects nothing on the same series, which is why
//! the page says to replace it.

use std::path::Path;
use std::process::Command;

fn promtool() -> Option<String> {
    let p = std::env::var("PROMTOOL").ok().filter(|p| !p.is_empty());
    if p.is_none() {
        println!("skipped: PROMTOOL not set (bash tools/test.sh sets it)");
    }
    p
}

/// The YAML block that follows the `migrating-rules` marker.
fn documented_rules() -> String {
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

/// Series for both statuses on two hub replicas, `stale` and `unreachable`
/// sites each (a replica serves the same gauges from its own cache).
fn series(stale: u32, unreachable: u32) -> String {
    let mut out = String::new();
    for instance in ["hub-a", "hub-b"] {
        for (status, n) in [
            ("connected", 5),
            ("stale", stale),
            ("unreachable", unreachable),
        ] {
            out.push_str(&format!(
                "      - series: 'federation_clusters_total{{status=\"{status}\",instance=\"{instance}\"}}'\n        values: '{n}x15'\n"
            ));
        }
        out.push_str(&format!(
            "      - series: 'cross_cluster_correlations_active{{instance=\"{instance}\"}}'\n        values: '{}x15'\n",
            u32::from(stale > 0)
        ));
    }
    out
}

#[test]
fn the_documented_replacement_fires_where_the_copied_chatcli_alert_stays_silent() {
    let Some(promtool) = promtool() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut rules = documented_rules();
    assert!(rules.contains("alert: FleetSitesDisconnected"), "{rules}");
    // The ChatCLI alert as a team would copy it, beside the documented ones.
    rules.push_str(
        "      - alert: CopiedFromChatCLI\n        expr: federation_clusters_total{status=\"disconnected\"} > 0\n        for: 5m\n",
    );
    std::fs::write(dir.path().join("migrated.yaml"), &rules).unwrap();
    let tests = format!(
        "rule_files: [migrated.yaml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
{down}
    alert_rule_test:
      - alertname: FleetSitesDisconnected
        eval_time: 10m
        exp_alerts:
          - exp_labels: {{severity: critical}}
            exp_annotations: {{summary: '3 fleet site(s) are not reporting'}}
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
        down = series(2, 1),
        up = series(0, 0),
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
}
