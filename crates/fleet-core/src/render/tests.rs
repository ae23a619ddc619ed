//! Snapshot tests of every renderer (insta; snapshots in `snapshots/`).
//! Review changes with `cargo insta review` or `INSTA_UPDATE=always`.

use crate::api::{Environment, FederatedCluster, Signal, SignalType, Tier};
use crate::fleet::correlation::{CorrelationConfig, DEFAULT_LOOKBACK, correlate, detect_cascades};
use crate::fleet::fixtures::fixture_now;
use crate::fleet::liveness::{HubVerdict, hub_verdict};
use crate::fleet::policy::{Incidents, policy_rows_for, policy_table};
use crate::render::*;

mod columns;
mod dark_period;
mod incident;
mod node_info;
mod sleeping;
mod untrusted;
use untrusted::hostile_site;

/// A hub judging the fleet: its leader recorded a full judgement 5 s
/// before the fixtures' now.
fn judging() -> HubVerdict {
    let record = crate::api::HubLiveness {
        leader: "fleet-operator-hub-0-1".into(),
        leader_since: Some(crate::fleet::fixtures::ago(3600)),
        last_judgement_time: crate::fleet::fixtures::ago(5),
        interval_seconds: 15,
    };
    hub_verdict(Some(&record), fixture_now())
}

/// No incidents: every signal decided by its own severity and tier.
fn none() -> Incidents {
    Incidents::default()
}

/// The status table as `kubectl fleet status` prints it (`wide`: `-o
/// wide`), `hub_judging` being whether a hub is judging the fleet.
fn table_of(
    sites: &[FederatedCluster],
    hub_judging: Option<bool>,
    now: jiff::Timestamp,
    wide: bool,
    color: bool,
) -> String {
    let mut table = status::StatusTable::new(now, hub_judging, wide);
    sites.iter().for_each(|s| table.push(s));
    table.lines(color).collect()
}

/// One site's cell under `header` in `-o wide`.
fn cell(
    site: &FederatedCluster,
    hub_judging: Option<bool>,
    now: jiff::Timestamp,
    header: &str,
) -> String {
    status::site_cells(site, hub_judging, now, true)
        .into_iter()
        .find(|(h, _)| *h == header)
        .unwrap_or_else(|| panic!("no column {header}"))
        .1
}

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
    insta::assert_snapshot!(table_of(&[], Some(true), fixture_now(), false, false));
}

#[test]
fn status_every_phase() {
    insta::assert_snapshot!(table_of(&fleet(), Some(true), fixture_now(), false, false));
}

#[test]
fn status_wide() {
    insta::assert_snapshot!(table_of(&fleet(), Some(true), fixture_now(), true, false));
}

#[test]
fn status_colour_on() {
    let out = table_of(&fleet(), Some(true), fixture_now(), false, true);
    assert!(out.contains("\u{1b}[32mConnected\u{1b}[0m"));
    assert!(out.contains("\u{1b}[33mStale\u{1b}[0m"));
    assert!(out.contains("\u{1b}[31mUnreachable\u{1b}[0m"));
    assert!(out.contains("\u{1b}[36mPending\u{1b}[0m"));
    insta::assert_snapshot!(out.replace('\u{1b}', "<ESC>"));
}

#[test]
fn status_colour_off_has_no_escapes() {
    for wide in [false, true] {
        let out = table_of(&fleet(), Some(true), fixture_now(), wide, false);
        assert!(!out.contains('\u{1b}'));
    }
}

#[test]
fn colour_does_not_change_layout() {
    let plain = table_of(&fleet(), Some(true), fixture_now(), true, false);
    let colored = table_of(&fleet(), Some(true), fixture_now(), true, true);
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
        last_heartbeat_time: Some(crate::fleet::fixtures::ago(42)),
        ..Default::default()
    });
    let mut empty = FederatedCluster::test("empty");
    empty.status = Some(Default::default());
    let bare_cell = |header| cell(&bare, Some(true), fixture_now(), header);
    assert_eq!(bare_cell("LAST HEARTBEAT"), "42s");
    assert_eq!(
        (bare_cell("NODES"), bare_cell("GPUS"), bare_cell("SIGNALS")),
        ("-".into(), "-".into(), "0".into())
    );
    assert_eq!(
        cell(&empty, Some(true), fixture_now(), "LAST HEARTBEAT"),
        "never"
    );
    insta::assert_snapshot!(table_of(
        &[bare, empty],
        Some(true),
        fixture_now(),
        true,
        false
    ));
}

#[test]
fn future_heartbeat_shows_as_now() {
    let ahead = FederatedCluster::test("ahead")
        .heartbeat_ago(-600)
        .with_phase(crate::api::Phase::Connected, 60);
    assert_eq!(
        cell(&ahead, Some(true), fixture_now(), "LAST HEARTBEAT"),
        "0s"
    );
}

#[test]
fn status_rows_are_sorted_whatever_the_input_order() {
    let mut sites = fleet();
    let a = table_of(&sites, Some(true), fixture_now(), true, false);
    sites.reverse();
    assert_eq!(table_of(&sites, Some(true), fixture_now(), true, false), a);
}

#[test]
fn status_json() {
    let report = status_report(&fleet(), &judging(), &none(), fixture_now());
    let json = to_json(&report).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["apiVersion"], "fleet.kubectl-fleet.dev/v1");
    assert_eq!(v["kind"], "StatusReport");
    assert_eq!(
        v["summary"]["phases"],
        serde_json::json!({"connected": 2, "stale": 1, "unreachable": 1, "pending": 1, "sleeping": 0})
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
    insta::assert_snapshot!(
        to_json(&status_report(&[], &judging(), &none(), fixture_now())).unwrap()
    );
}

#[test]
fn status_yaml() {
    let yaml = to_yaml(&status_report(
        &fleet()[..2],
        &judging(),
        &none(),
        fixture_now(),
    ))
    .unwrap();
    let back: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap();
    let json: serde_json::Value = serde_json::to_value(status_report(
        &fleet()[..2],
        &judging(),
        &none(),
        fixture_now(),
    ))
    .unwrap();
    assert_eq!(back, json, "YAML carries the same document as JSON");
    insta::assert_snapshot!(yaml);
}

/// The paged `status` path feeds sites one by one into a stream; what it
/// writes must be byte for byte the document of the whole-list renderers.
fn streamed_report(sites: &[FederatedCluster], format: report::ReportFormat) -> String {
    let mut sorted: Vec<&FederatedCluster> = sites.iter().collect();
    sorted.sort_by(|a, b| a.site_name().cmp(b.site_name()));
    let mut out = Vec::new();
    let mut stream =
        report::ReportStream::begin(format, judging(), none(), fixture_now(), &mut out).unwrap();
    for site in sorted {
        stream.site(site.clone(), &mut out).unwrap();
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
        let whole = status_report(&sites, &judging(), &none(), fixture_now());
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

/// The status table's direct layout (every cell one plain line) is the
/// shared table's layout, and neither depends on the order sites come in.
#[test]
fn status_table_direct_layout_is_the_shared_tables() {
    let wide_region = |name: &str, region: &str| FederatedCluster::test(name).with_region(region);
    let mut inputs = fleets();
    // Wide characters, and a cell the direct layout hands to the shared table.
    inputs.push(vec![wide_region("b", "東京-1"), wide_region("a", "x")]);
    inputs.push(vec![wide_region("b", "two\nlines"), wide_region("a", "x")]);
    // Escapes, a bidi override, a BEL and over-long cells.
    inputs.push(vec![
        hostile_site(),
        wide_region("a", &format!("x\u{7}\u{202e}{}", "r".repeat(100))),
    ]);
    for mut sites in inputs {
        let mut first_order = std::collections::BTreeMap::new();
        for _ in 0..2 {
            for (wide, color) in [(false, false), (true, false), (false, true), (true, true)] {
                let mut table = status::StatusTable::new(fixture_now(), Some(true), wide);
                sites.iter().for_each(|s| table.push(s));
                let direct: String = table.lines(color).collect();
                assert_eq!(
                    direct,
                    table.plain_lines(color).concat(),
                    "wide={wide} color={color}"
                );
                let first = first_order.entry((wide, color)).or_insert(direct.clone());
                assert_eq!(&direct, first, "wide={wide} color={color}");
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
    incidents_report(sites, correlations, cascades, vec![], &judging(), now)
}

/// What every view says about one signal of `site`: (severity, mode,
/// approver, raised by) from `incidents -o json`, `incidents ID -o json`,
/// `describe -o json` and `status -o json` (the REST API serves the same
/// documents).
#[test]
fn every_view_shows_the_hubs_decision_and_what_raised_it() {
    use crate::fleet::incident::find_incident;
    let now = fixture_now();
    let sites = incident_fleet();
    let correlations = correlate(&sites, &[], now, CorrelationConfig::default());
    let cascades = detect_cascades(&sites, now, DEFAULT_LOOKBACK);
    let fleet = crate::api::FederationStatusStatus {
        correlations: correlations.clone(),
        cascades: cascades.clone(),
        ..Default::default()
    };
    let decided = Incidents::of(Some(&fleet));
    let xc = correlations[0].id.clone();
    let cc = cascades
        .iter()
        .find(|c| c.target == "prod-b")
        .unwrap()
        .id
        .clone();
    // prod-b is standard tier: its high CrashLoopBackOff alone would need
    // an Operator; in a correlation with a critical site it needs an Admin.
    let want = serde_json::json!({
        "severity": "high", "decidedSeverity": "critical", "decidedTier": "critical",
        "remediation": {"mode": "manual", "approvalRequired": true, "role": "Admin"},
        "raisedBy": [xc, cc],
    });
    let pick = |v: &serde_json::Value| {
        serde_json::json!({
            "severity": v["severity"], "decidedSeverity": v["decidedSeverity"],
            "decidedTier": v["decidedTier"], "remediation": v["remediation"].clone(),
            "raisedBy": v["raisedBy"],
        })
    };
    let crash = |v: &&serde_json::Value| {
        v["type"] == "CrashLoopBackOff" || v["signal"] == "CrashLoopBackOff"
    };
    let list = serde_json::to_value(incidents(&sites)).unwrap();
    let row = list["signals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["cluster"] == "prod-b" && crash(s))
        .unwrap();
    assert_eq!(pick(row), want, "incidents -o json");
    let one = incidents::incident_report(
        &find_incident(&fleet, &xc).unwrap(),
        &sites,
        &decided,
        &judging(),
        now,
    );
    let one = serde_json::to_value(one).unwrap();
    let row = one["signals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["cluster"] == "prod-b")
        .unwrap();
    assert_eq!(pick(row), want, "incidents ID -o json");
    let d = serde_json::to_value(describe::site_description(
        &sites[2],
        &judging(),
        &decided,
        None,
        now,
    ))
    .unwrap();
    let row = d["policies"]
        .as_array()
        .unwrap()
        .iter()
        .find(crash)
        .unwrap();
    let mut described = pick(row);
    described["remediation"] = row["policy"].clone();
    assert_eq!(described, want, "describe -o json");
    let row = d["signals"].as_array().unwrap().iter().find(crash).unwrap();
    assert_eq!(pick(row), want, "describe -o json, the site's signals");
    let status = serde_json::to_value(status_report(&sites, &judging(), &decided, now)).unwrap();
    let row = status["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "prod-b")
        .unwrap()["signals"]
        .as_array()
        .unwrap()
        .iter()
        .find(crash)
        .unwrap()
        .clone();
    assert_eq!(pick(&row), want, "status -o json");
    // describe's text says so too.
    let text = describe::render_description(
        &describe::site_description(&sites[2], &judging(), &decided, None, now),
        now,
    );
    let line = text
        .lines()
        .find(|l| l.contains("CrashLoopBackOff"))
        .unwrap();
    assert!(
        line.contains("critical (raised from high)")
            && line.contains("manual, approval by Admin")
            && line.contains(&format!("{xc}, {cc}")),
        "{line}"
    );
}

#[test]
fn a_quarantined_site_is_shown_and_marked_in_every_view() {
    let now = fixture_now();
    let mut sites = incident_fleet();
    sites[0].spec.quarantine = Some(crate::api::Quarantine {
        since: Some(crate::fleet::fixtures::ago(3600)),
        reason: Some("forged signals".into()),
    });
    let report = incidents(&sites);
    // stg's signals start no correlation (two sites are left) and no cascade.
    assert!(report.correlations.is_empty() && report.cascades.is_empty());
    let text = render_incidents(&report, now, false);
    assert!(
        text.contains("QUARANTINED SITES (their signals are part of no incident)\nSITE  SINCE  REASON\nstg   60m    forged signals\n"),
        "{text}"
    );
    let signals = text.split("\nSIGNALS\n").nth(1).unwrap();
    let row = signals.lines().find(|l| l.starts_with("stg ")).unwrap();
    assert!(
        row.contains("high  ") && row.contains("quarantined"),
        "its own signal is still listed, decided alone: {row}"
    );
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["quarantined"][0]["name"], "stg");
    let status = serde_json::to_value(status_report(&sites, &judging(), &none(), now)).unwrap();
    let stg = status["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "stg")
        .unwrap();
    assert_eq!(stg["quarantine"]["reason"], "forged signals", "{stg}");
    assert_eq!(stg["signals"].as_array().unwrap().len(), 1);
    let text = describe::render_description(
        &describe::site_description(&sites[0], &judging(), &none(), None, now),
        now,
    );
    assert!(
        text.contains("Quarantine:         yes: its signals are part of no fleet incident, since 2026-01-01T11:00:00Z: forged signals\n"),
        "{text}"
    );
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

/// A Pull site the hub could not probe after it had been Connected: the
/// reason, the Secret, inventory, signals with their policy, and a hostile
/// message escaped.
fn unauthorized_pull_site() -> FederatedCluster {
    FederatedCluster::test("factory-7")
        .pull()
        .with_region("eu-central-1")
        .stale()
        .with_gpus(4)
        .probed_in(42)
        .with_token_expiring_in(86400)
        .with_condition(
            "Connected",
            "False",
            "Unauthorized",
            "https://10.0.0.7:6443 rejected the credential (401: expired or revoked): re-run `kubectl fleet register factory-7 --pull` to store a fresh one",
            120,
        )
        .with_condition(
            "RemediationCapable",
            "False",
            "AccessDenied",
            "tier standard automatic remediation needs what the member identity may not do: delete pods",
            900,
        )
        .with_signal(
            Signal::test(SignalType::ImagePullBackOff, "line", "Deployment", "plc-gw")
                .with_message("pull \u{1b}[2Jfailed\u{7}"),
        )
}

#[test]
fn describe_pull_site_text() {
    let d = describe::site_description(
        &unauthorized_pull_site(),
        &judging(),
        &none(),
        None,
        fixture_now(),
    );
    let text = describe::render_description(&d, fixture_now());
    assert!(
        !text.contains('\u{1b}'),
        "no raw escape reaches the terminal"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn describe_json() {
    let d = describe::site_description(
        &unauthorized_pull_site(),
        &judging(),
        &none(),
        None,
        fixture_now(),
    );
    insta::assert_snapshot!(to_json(&d).unwrap());
}

#[test]
fn status_wide_shows_why_not_connected() {
    let reason = |site: &FederatedCluster| cell(site, Some(true), fixture_now(), "REASON");
    assert_eq!(reason(&unauthorized_pull_site()), "Unauthorized");
    assert_eq!(reason(&FederatedCluster::test("ok").connected()), "-");
}

/// The reported scenario: the hub stopped 3 minutes ago (its last full
/// judgement then), an edge died a minute before it (`dead`, left
/// Connected by the hub), another kept reporting (`alive`), and a site
/// heartbeats that no hub ever judged (`orphan`). I = 10 s.
fn hubless_fleet() -> (Vec<FederatedCluster>, HubVerdict) {
    use crate::api::Phase;
    let record = crate::api::HubLiveness {
        leader: "hub-a".into(),
        leader_since: Some(crate::fleet::fixtures::ago(3600)),
        last_judgement_time: crate::fleet::fixtures::ago(180),
        interval_seconds: 15,
    };
    let sites = vec![
        FederatedCluster::test("dead")
            .with_interval(10)
            .heartbeat_ago(240)
            .with_phase(Phase::Connected, 3600),
        FederatedCluster::test("alive")
            .with_interval(10)
            .heartbeat_ago(3)
            .with_phase(Phase::Connected, 3600),
        FederatedCluster::test("orphan")
            .with_interval(10)
            .heartbeat_ago(4),
    ];
    (sites, hub_verdict(Some(&record), fixture_now()))
}

#[test]
fn a_silent_hub_shows_no_stale_green_and_says_so_once() {
    let (sites, hub) = hubless_fleet();
    let now = fixture_now();
    assert_eq!(hub.judging(), Some(false));
    let table = table_of(&sites, hub.judging(), now, true, false);
    insta::assert_snapshot!(table);
    let site = |name: &str| sites.iter().find(|s| s.site_name() == name).unwrap();
    let shown = |name: &str, header| cell(site(name), hub.judging(), now, header);
    assert_eq!(shown("dead", "PHASE"), "Unreachable?");
    assert_eq!(shown("alive", "PHASE"), "Connected");
    assert_eq!(shown("orphan", "REASON"), status::NOT_JUDGED_REASON);
    let warning = status::hub_warning(&hub, sites.len(), None).unwrap();
    assert_eq!(
        warning,
        "warning: no hub has judged this fleet for 3m (last full judgement by hub-a at 2026-01-01T11:57:00Z; one is recorded every 15s): phases are as last judged, and a phase marked ? is implied by the heartbeat's age; check the hub operator: kubectl -n fleet-system get deployment fleet-operator-hub"
    );
    assert!(!warning.contains('\n'));
    // The same sites with a judging hub: only the 10·I rule applies.
    assert!(cell(site("dead"), Some(true), now, "PHASE").starts_with("Unreachable"));
    assert!(status::hub_warning(&judging(), 3, None).is_none());
    assert!(
        status::hub_warning(&hub, 0, None).is_none(),
        "nothing to judge"
    );
    let never = hub_verdict(None, now);
    assert!(
        status::hub_warning(&never, 1, None)
            .unwrap()
            .starts_with("warning: no hub has ever judged this fleet")
    );
    let unknown = status::hub_warning(
        &HubVerdict::unknown(),
        1,
        Some("get FederationStatus fleet: forbidden: \x1b[2J"),
    )
    .unwrap();
    assert!(!unknown.contains('\x1b'), "{unknown:?}");

    let v = serde_json::to_value(status_report(&sites, &hub, &none(), now)).unwrap();
    let dead = &v["sites"][1];
    assert_eq!(
        (
            &dead["name"],
            &dead["phase"],
            &dead["phaseJudgedByHub"],
            &dead["hubPhase"]
        ),
        (
            &serde_json::json!("dead"),
            &serde_json::json!("Unreachable"),
            &serde_json::json!(false),
            &serde_json::json!("Connected")
        )
    );
    assert_eq!(v["summary"]["hub"]["state"], "Silent");
    assert_eq!(v["summary"]["hub"]["judging"], false);
    assert_eq!(v["summary"]["hub"]["lastJudgementAgeSeconds"], 180);
    assert_eq!(v["summary"]["notJudgedByHub"], 2);
    assert_eq!(v["summary"]["phases"]["connected"], 1);

    let text = describe::render_description(
        &describe::site_description(&sites[0], &hub, &none(), None, now),
        now,
    );
    assert!(
        text.contains("Phase:              Unreachable? (implied by the heartbeat's age: no hub has judged it since; the hub last wrote Connected (for 60m))"),
        "{text}"
    );
    assert!(
        text.contains("Hub:                SILENT: no hub has judged the fleet for 3m (last full judgement by hub-a)"),
        "{text}"
    );
    let text = describe::render_description(
        &describe::site_description(&sites[2], &hub, &none(), None, now),
        now,
    );
    assert!(
        text.contains("Phase:              Pending? (no hub has judged this site)"),
        "{text}"
    );
    let incidents = incidents_report(&sites, vec![], vec![], vec![], &hub, now);
    assert_eq!(
        serde_json::to_value(&incidents).unwrap()["hub"]["state"],
        "Silent"
    );
}

/// A site of [`fleet`] in maintenance for another two hours, opened an
/// hour ago.
fn cordoned(site: FederatedCluster) -> FederatedCluster {
    let mut site = site;
    site.spec.maintenance = Some(crate::api::MaintenanceWindow {
        since: Some(crate::fleet::fixtures::ago(3600)),
        until: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            fixture_now() + jiff::SignedDuration::from_hours(2),
        ),
        reason: Some("rack move\x1b[2J".into()),
    });
    site
}

#[test]
fn a_site_in_maintenance_is_marked_in_every_status_format() {
    let now = fixture_now();
    let mut sites = fleet();
    sites[2] = cordoned(sites[2].clone()); // edge-42, Unreachable
    let table = table_of(&sites, Some(true), now, false, false);
    let row = table.lines().find(|l| l.starts_with("edge-42")).unwrap();
    assert!(row.contains("Unreachable,Maintenance"), "{table}");
    assert!(
        table.contains(
            "Sites: 5 (2 Connected, 1 Stale, 1 Unreachable, 1 Pending), 1 in maintenance"
        ),
        "{table}"
    );
    let wide = table_of(&sites, Some(true), now, true, false);
    let row = wide.lines().find(|l| l.starts_with("edge-42")).unwrap();
    assert!(row.contains(" 120m left "), "{wide}");
    let report = serde_json::to_value(status_report(&sites, &judging(), &none(), now)).unwrap();
    let site = &report["sites"][0];
    assert_eq!(site["name"], "edge-42");
    assert_eq!(site["inMaintenance"], true);
    assert_eq!(site["phase"], "Unreachable", "still judged and shown");
    assert_eq!(site["maintenance"]["endsInSeconds"], 7200);
    assert_eq!(
        site["maintenance"]["reason"], "rack move\x1b[2J",
        "JSON keeps the bytes"
    );
    assert_eq!(report["summary"]["maintenance"], 1);
    let yaml = to_yaml(&status_report(&sites, &judging(), &none(), now)).unwrap();
    assert!(yaml.contains("inMaintenance: true"), "{yaml}");

    let text = describe::render_description(
        &describe::site_description(&sites[2], &judging(), &none(), None, now),
        now,
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("Maintenance:"))
        .unwrap();
    assert!(line.contains("ends in 120m"), "{line}");
    assert!(line.contains("rack move"), "{line}");
    assert!(!line.contains('\x1b'), "the reason is escaped: {line:?}");

    // Ended: no mark, not counted, and describe says it ended.
    let ended = {
        let mut s = cordoned(sites[0].clone());
        if let Some(w) = s.spec.maintenance.as_mut() {
            w.until = crate::fleet::fixtures::ago(60);
        }
        s
    };
    let table = table_of(std::slice::from_ref(&ended), Some(true), now, false, false);
    assert!(!table.contains("Maintenance"), "{table}");
    assert!(!table.contains("in maintenance"), "{table}");
    let text = describe::render_description(
        &describe::site_description(&ended, &judging(), &none(), None, now),
        now,
    );
    assert!(text.contains("Maintenance:        ended 60s ago"), "{text}");
}

#[test]
fn the_footer_names_edge_versions_most_common_first() {
    let now = fixture_now();
    let mut sites = Vec::new();
    for i in 0..1180 {
        sites.push(FederatedCluster::test(&format!("a{i}")).connected());
    }
    for i in 0..20 {
        let mut s = FederatedCluster::test(&format!("b{i}")).connected();
        if let Some(st) = s.status.as_mut() {
            st.observed_version = Some("0.0.9".into());
        }
        sites.push(s);
    }
    let table = table_of(&sites, Some(true), now, false, false);
    assert!(
        table.contains("\nEdges: 0.1.0 ×1,180, 0.0.9 ×20\n"),
        "{table}"
    );
    let report = serde_json::to_value(status_report(&sites, &judging(), &none(), now)).unwrap();
    assert_eq!(
        report["summary"]["edgeVersions"],
        serde_json::json!({"0.1.0": 1180, "0.0.9": 20})
    );
    assert_eq!(status::thousands(1_234_567), "1,234,567");
}

fn event(reason: &str, ago: i64, count: i32, message: &str) -> k8s_openapi::api::core::v1::Event {
    use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
    Event {
        type_: Some("Warning".into()),
        reason: Some(reason.into()),
        message: Some(message.into()),
        count: Some(count),
        first_timestamp: Some(crate::fleet::fixtures::ago(ago + 600)),
        last_timestamp: Some(crate::fleet::fixtures::ago(ago)),
        source: Some(EventSource {
            component: Some("fleet-operator".into()),
            ..Default::default()
        }),
        involved_object: ObjectReference {
            kind: Some("FederatedCluster".into()),
            name: Some("lab".into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

#[test]
fn describe_ends_with_the_sites_events_like_kubectl_describe() {
    let now = fixture_now();
    let site = &fleet()[4];
    let events = [
        event("PhaseChanged", 60, 1, "Connected -> Stale\x1b]0;owned\x07"),
        event("ProbeFailed", 300, 4, "timeout"),
    ];
    let d = describe::site_description(site, &judging(), &none(), Some(&events), now);
    let text = describe::render_description(&d, now);
    let tail: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Events:"))
        .collect();
    assert_eq!(tail[0], "Events:", "{text}");
    assert!(
        tail[1]
            .split_whitespace()
            .eq(["Type", "Reason", "Age", "From", "Message"]),
        "{text}"
    );
    // Oldest first, a repeated event with its count, as kubectl shows them.
    assert!(
        tail[3].contains("ProbeFailed") && tail[3].contains("5m (x4 over 15m)"),
        "{text}"
    );
    assert!(
        tail[4].contains("PhaseChanged") && tail[4].contains("fleet-operator"),
        "{text}"
    );
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    assert_eq!(tail.len(), 5, "Events is the last section: {text}");
    let json = serde_json::to_value(&d).unwrap();
    assert_eq!(json["events"][1]["reason"], "PhaseChanged");
    assert_eq!(json["events"][0]["count"], 4);

    let no_events = describe::render_description(
        &describe::site_description(site, &judging(), &none(), Some(&[]), now),
        now,
    );
    assert!(
        no_events.ends_with("Events:             <none>\n"),
        "{no_events}"
    );
    // Could not be listed: no section, as kubectl describe.
    let unlisted = describe::render_description(
        &describe::site_description(site, &judging(), &none(), None, now),
        now,
    );
    assert!(!unlisted.contains("Events:"), "{unlisted}");
}

#[test]
fn jsonpath_runs_over_the_json_report_and_escapes_on_a_terminal() {
    let now = fixture_now();
    let mut sites = fleet();
    sites.sort_by(|a, b| a.site_name().cmp(b.site_name()));
    let mut hostile = FederatedCluster::test("zz").connected();
    if let Some(st) = hostile.status.as_mut() {
        st.observed_version = Some("1\x1b[2J".into());
    }
    sites.push(hostile);
    let run = |t: &str, escape: bool| {
        let mut r = report::JsonPathReport::begin(
            jsonpath::Template::parse(t).unwrap(),
            judging(),
            none(),
            now,
            escape,
        );
        for s in &sites {
            r.site(s.clone()).unwrap();
        }
        r.finish().unwrap()
    };
    let whole = serde_json::to_value(status_report(&sites, &judging(), &none(), now)).unwrap();
    for t in [
        "{.sites[*].name}",
        "{range .sites[*]}{.name}{\"\\t\"}{.phase}{\"\\n\"}{end}",
        "{.summary.sites} {.summary.edgeVersions}",
        "{.sites[-1].observedVersion}",
    ] {
        assert_eq!(
            run(t, false),
            jsonpath::Template::parse(t).unwrap().render(&whole),
            "{t}"
        );
    }
    assert_eq!(
        run("{.sites[*].name}", false),
        "edge-42 eu-west-staging lab new-site us-east-prod zz"
    );
    assert_eq!(run("{.sites[-1].observedVersion}", false), "1\x1b[2J");
    assert!(!run("{.sites[-1].observedVersion}", true).contains('\x1b'));
    assert_eq!(
        status::resource_name("site-a"),
        "federatedcluster.federation.kubectl-fleet.dev/site-a"
    );
}
