//! Snapshot tests of every renderer (insta; snapshots in `snapshots/`).
//! Review changes with `cargo insta review` or `INSTA_UPDATE=always`.

use crate::api::fixtures::fixture_now;
use crate::api::{Environment, FederatedCluster, Signal, SignalType, Tier};
use crate::fleet::correlation::{CorrelationConfig, DEFAULT_LOOKBACK, correlate, detect_cascades};
use crate::fleet::policy::{policy_rows_for, policy_table};
use crate::render::*;

/// A fleet with every phase, Pull and Push, GPUs of several vendors, an
/// expired token and a site with nothing reported.
fn fleet() -> Vec<FederatedCluster> {
    vec![
        FederatedCluster::test("us-east-prod")
            .with_region("us-east-1")
            .with_tier(Tier::Critical)
            .connected()
            .with_gpus(8)
            .with_gpu_vendor("amd.com/gpu", 4, 2)
            .with_inference(2, 3, 1, 4)
            .with_token_expiring_in(29 * 86400)
            .with_signal(
                Signal::test(SignalType::CrashLoopBackOff, "shop", "Deployment", "web")
                    .with_count(7),
            ),
        FederatedCluster::test("eu-west-staging")
            .with_region("eu-west-1")
            .with_environment(Environment::Staging)
            .stale()
            .with_token_expiring_in(-60),
        FederatedCluster::test("edge-42")
            .with_tier(Tier::NonCritical)
            .with_environment(Environment::Development)
            .unreachable(),
        FederatedCluster::test("new-site").pending(),
        FederatedCluster::test("lab")
            .pull()
            .connected()
            .with_interval(60),
    ]
}

#[test]
fn status_empty_fleet() {
    insta::assert_snapshot!(render_status_table(
        &status_view(&[], fixture_now()),
        false,
        false
    ));
}

#[test]
fn status_every_phase() {
    insta::assert_snapshot!(render_status_table(
        &status_view(&fleet(), fixture_now()),
        false,
        false
    ));
}

#[test]
fn status_wide() {
    insta::assert_snapshot!(render_status_table(
        &status_view(&fleet(), fixture_now()),
        true,
        false
    ));
}

#[test]
fn status_colour_on() {
    let out = render_status_table(&status_view(&fleet(), fixture_now()), false, true);
    assert!(out.contains("\u{1b}[32mConnected\u{1b}[0m"));
    assert!(out.contains("\u{1b}[33mStale\u{1b}[0m"));
    assert!(out.contains("\u{1b}[31mUnreachable\u{1b}[0m"));
    assert!(out.contains("\u{1b}[36mPending\u{1b}[0m"));
    insta::assert_snapshot!(out.replace('\u{1b}', "<ESC>"));
}

#[test]
fn status_colour_off_has_no_escapes() {
    for wide in [false, true] {
        let out = render_status_table(&status_view(&fleet(), fixture_now()), wide, false);
        assert!(!out.contains('\u{1b}'));
    }
}

#[test]
fn colour_does_not_change_layout() {
    let plain = render_status_table(&status_view(&fleet(), fixture_now()), true, false);
    let colored = render_status_table(&status_view(&fleet(), fixture_now()), true, true);
    assert_ne!(colored, plain);
    assert_eq!(strip_ansi(&colored), plain);
    let plain = render_incidents(&incidents(&incident_fleet()), fixture_now(), false);
    let colored = render_incidents(&incidents(&incident_fleet()), fixture_now(), true);
    assert_ne!(colored, plain);
    assert_eq!(strip_ansi(&colored), plain);
}

/// Remove ANSI SGR sequences (`ESC [ ... m`).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn status_missing_fields() {
    // Heard from, but the edge reported nothing else; and a site with an
    // empty status object.
    let mut bare = FederatedCluster::test("bare");
    bare.status = Some(crate::api::FederatedClusterStatus {
        last_heartbeat_time: Some(crate::api::fixtures::ago(42)),
        ..Default::default()
    });
    let mut empty = FederatedCluster::test("empty");
    empty.status = Some(Default::default());
    let view = status_view(&[bare, empty], fixture_now());
    let bare_row = &view.rows[0];
    assert_eq!(bare_row.last_heartbeat, "42s");
    assert_eq!(
        (
            bare_row.nodes.as_str(),
            bare_row.gpus.as_str(),
            bare_row.signals.as_str()
        ),
        ("-", "-", "0")
    );
    assert_eq!(view.rows[1].last_heartbeat, "never");
    insta::assert_snapshot!(render_status_table(&view, true, false));
}

#[test]
fn future_heartbeat_shows_as_now() {
    let ahead = FederatedCluster::test("ahead")
        .heartbeat_ago(-600)
        .with_phase(crate::api::Phase::Connected, 60);
    let view = status_view(&[ahead], fixture_now());
    assert_eq!(view.rows[0].last_heartbeat, "0s");
}

#[test]
fn status_rows_are_sorted_whatever_the_input_order() {
    let mut sites = fleet();
    let a = render_status_table(&status_view(&sites, fixture_now()), true, false);
    sites.reverse();
    assert_eq!(
        render_status_table(&status_view(&sites, fixture_now()), true, false),
        a
    );
}

#[test]
fn status_json() {
    let report = status_report(&fleet(), fixture_now());
    let json = to_json(&report).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["apiVersion"], "fleet.kubectl-fleet.dev/v1");
    assert_eq!(v["kind"], "StatusReport");
    assert_eq!(
        v["summary"]["phases"],
        serde_json::json!({"connected": 2, "stale": 1, "unreachable": 1, "pending": 1})
    );
    assert_eq!(v["sites"][0]["name"], "edge-42");
    // Unknown values are explicit nulls, never missing keys.
    let pending = &v["sites"][3];
    assert_eq!(pending["name"], "new-site");
    assert!(
        pending
            .as_object()
            .unwrap()
            .contains_key("lastHeartbeatTime")
    );
    assert!(pending["lastHeartbeatTime"].is_null());
    insta::assert_snapshot!(json);
}

#[test]
fn status_json_empty() {
    insta::assert_snapshot!(to_json(&status_report(&[], fixture_now())).unwrap());
}

#[test]
fn status_yaml() {
    let yaml = to_yaml(&status_report(&fleet()[..2], fixture_now())).unwrap();
    let back: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap();
    let json: serde_json::Value =
        serde_json::to_value(status_report(&fleet()[..2], fixture_now())).unwrap();
    assert_eq!(back, json, "YAML carries the same document as JSON");
    insta::assert_snapshot!(yaml);
}

/// The paged `status` path feeds sites one by one into a stream; what it
/// writes must be byte for byte the document of the whole-list renderers.
fn streamed_report(sites: &[FederatedCluster], format: report::ReportFormat) -> String {
    let mut sorted: Vec<&FederatedCluster> = sites.iter().collect();
    sorted.sort_by(|a, b| a.site_name().cmp(b.site_name()));
    let mut out = Vec::new();
    let mut stream = report::ReportStream::begin(format, fixture_now(), &mut out).unwrap();
    for site in sorted {
        stream.site(site, &mut out).unwrap();
    }
    stream.finish(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn fleets() -> Vec<Vec<FederatedCluster>> {
    let mut odd = FederatedCluster::test("odd\nname\t\"quoted\" \u{1f680}").with_region("日本");
    odd.spec.display_name = Some("line one\nline two: x".into());
    vec![
        vec![],
        fleet()[..1].to_vec(),
        fleet()[..2].to_vec(),
        fleet(),
        [fleet(), vec![odd]].concat(),
    ]
}

#[test]
fn status_report_streamed_is_the_same_document() {
    for sites in fleets() {
        let whole = status_report(&sites, fixture_now());
        assert_eq!(
            streamed_report(&sites, report::ReportFormat::Json),
            to_json(&whole).unwrap()
        );
        assert_eq!(
            streamed_report(&sites, report::ReportFormat::Yaml),
            to_yaml(&whole).unwrap()
        );
    }
}

#[test]
fn status_table_streamed_is_the_same_table() {
    let wide_region = |name: &str, region: &str| FederatedCluster::test(name).with_region(region);
    let mut inputs = fleets();
    // Wide characters, and a cell the direct layout hands to the shared table.
    inputs.push(vec![wide_region("b", "東京-1"), wide_region("a", "x")]);
    inputs.push(vec![wide_region("b", "two\nlines"), wide_region("a", "x")]);
    for mut sites in inputs {
        for _ in 0..2 {
            for (wide, color) in [(false, false), (true, false), (false, true), (true, true)] {
                let mut table = status::StatusTable::new(fixture_now(), wide);
                sites.iter().for_each(|s| table.push(s));
                let streamed: String = table.lines(color).collect();
                assert_eq!(
                    streamed,
                    render_status_table(&status_view(&sites, fixture_now()), wide, color),
                    "wide={wide} color={color}"
                );
            }
            sites.reverse();
        }
    }
}

#[test]
fn policy_table_snapshot() {
    insta::assert_snapshot!(render_policy_table(&policy_table()));
}

#[test]
fn policy_table_one_tier() {
    assert_eq!(
        render_policy_table(&policy_rows_for(Some(Tier::Standard))),
        "TIER      SEVERITY        MODE    APPROVAL  ROLE\nstandard  critical, high  manual  required  Operator\nstandard  medium, low     auto    no        -\n"
    );
}

#[test]
fn policy_json() {
    insta::assert_snapshot!(to_json(&policy_report(policy_table())).unwrap());
}

fn incident_fleet() -> Vec<FederatedCluster> {
    let crash = |first, last| {
        Signal::test(SignalType::CrashLoopBackOff, "shop", "Deployment", "web").seen(first, last)
    };
    vec![
        FederatedCluster::test("stg")
            .with_environment(Environment::Staging)
            .connected()
            .with_signal(crash(7200, 30)),
        FederatedCluster::test("prod-a")
            .with_tier(Tier::Critical)
            .connected()
            .with_signal(crash(1800, 30))
            .with_signal(
                Signal::test(SignalType::NodeNotReady, "", "Node", "gpu-3")
                    .with_message("kubelet stopped posting node status"),
            ),
        FederatedCluster::test("prod-b")
            .connected()
            .with_signal(crash(600, 30).with_count(3))
            .with_signal(Signal::test(SignalType::Evicted, "batch", "Pod", "job-x")),
    ]
}

fn incidents(sites: &[FederatedCluster]) -> IncidentsReport {
    let now = fixture_now();
    let correlations = correlate(sites, &[], now, CorrelationConfig::default());
    let cascades = detect_cascades(sites, now, DEFAULT_LOOKBACK);
    incidents_report(sites, correlations, cascades, now)
}

#[test]
fn incidents_table() {
    let report = incidents(&incident_fleet());
    assert_eq!(report.correlations.len(), 1);
    assert_eq!(report.cascades.len(), 2);
    insta::assert_snapshot!(render_incidents(&report, fixture_now(), false));
}

#[test]
fn incidents_colour_on() {
    let out = render_incidents(&incidents(&incident_fleet()), fixture_now(), true);
    assert!(
        out.contains("\u{1b}[1m\u{1b}[31mcritical")
            || out.contains("\u{1b}[31;1mcritical")
            || out.contains("\u{1b}[1;31mcritical"),
        "{out:?}"
    );
    insta::assert_snapshot!(out.replace('\u{1b}', "<ESC>"));
}

#[test]
fn incidents_none() {
    insta::assert_snapshot!(render_incidents(
        &incidents(&fleet()[3..]),
        fixture_now(),
        false
    ));
}

#[test]
fn incidents_json() {
    insta::assert_snapshot!(to_json(&incidents(&incident_fleet())).unwrap());
}
