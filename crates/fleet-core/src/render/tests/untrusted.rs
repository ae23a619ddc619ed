//! Views of what a site writes that no view may trust: terminal escapes
//! and huge text, forged or skewed clocks, values the CRD's patterns
//! would refuse, a status no reader can decode.

use super::*;

/// A site that writes terminal escapes and a 200 KB message into every
/// string it owns.
pub(super) fn hostile_site() -> FederatedCluster {
    let esc = "\u{1b}[2J\u{1b}]0;owned\u{7}\u{1b}[31m";
    let mut site = FederatedCluster::test("hostile")
        .connected()
        .with_gpu_vendor(&format!("evil.com/gpu{esc}"), 2, 1)
        .with_signal(
            Signal::test(
                SignalType::CrashLoopBackOff,
                "ns\u{1b}[8m",
                "Deployment\r",
                "web\n",
            )
            .with_message(&format!("{esc}{}", "A".repeat(200_000))),
        );
    let status = site.status.as_mut().unwrap();
    status.kubernetes_version = Some(format!("v1.33{esc}"));
    status.observed_version = Some(format!("0.1\u{202e}{esc}"));
    site
}

#[test]
fn hostile_site_text_is_escaped_and_cut_in_every_human_view() {
    let sites = [hostile_site()];
    let status = table_of(&sites, Some(true), fixture_now(), true, false);
    let incidents = render_incidents(&incidents(&sites), fixture_now(), false);
    for out in [&status, &incidents] {
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out}");
        assert!(!out.contains('\u{202e}') && !out.contains('\r'), "{out}");
        assert!(out.lines().all(|l| l.chars().count() < 400), "{out}");
    }
    insta::assert_snapshot!(status);
    insta::assert_snapshot!(incidents);
}

#[test]
fn hostile_site_text_stays_exact_in_json() {
    let sites = [hostile_site()];
    let json: serde_json::Value =
        serde_json::from_str(&to_json(&incidents(&sites)).unwrap()).unwrap();
    let message = json["signals"][0]["message"].as_str().unwrap();
    assert_eq!(
        message,
        sites[0].status.as_ref().unwrap().signals()[0]
            .message
            .as_deref()
            .unwrap()
    );
}

/// Two Push sites whose edge clocks the hub measured 10 and 30 minutes
/// off (`clockOffsetSeconds`): one live with a slow clock (heard from 5 s
/// ago on the hub clock, stamped 10m5s ago), one dead for 20 minutes whose
/// clock runs 30 minutes fast (stamped 10 minutes in the future).
fn skewed_fleet() -> Vec<FederatedCluster> {
    use crate::api::Phase;
    vec![
        FederatedCluster::test("slow-live")
            .heartbeat_ago(605)
            .with_phase(Phase::Connected, 3600)
            .with_clock_offset(-600),
        FederatedCluster::test("fast-dead")
            .heartbeat_ago(-600)
            .with_phase(Phase::Unreachable, 900)
            .with_clock_offset(1800),
    ]
}

#[test]
fn skewed_edge_clocks_do_not_skew_the_ages_shown() {
    let sites = skewed_fleet();
    let now = fixture_now();
    let heartbeat = |name: &str| {
        let site = sites.iter().find(|s| s.site_name() == name).unwrap();
        cell(site, Some(true), now, "LAST HEARTBEAT")
    };
    assert_eq!(heartbeat("slow-live"), "5s", "not 10m");
    assert_eq!(heartbeat("fast-dead"), "20m", "not 0s");
    insta::assert_snapshot!(table_of(&sites, Some(true), now, false, false));

    let v = serde_json::to_value(status_report(&sites, &judging(), &none(), now)).unwrap();
    let site = |name: &str| {
        v["sites"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()
            .clone()
    };
    let slow = site("slow-live");
    assert_eq!(slow["lastHeartbeatAgeSeconds"], 5);
    assert_eq!(slow["clockOffsetSeconds"], -600);
    assert_eq!(
        slow["lastHeartbeatTime"],
        sites[0]
            .status
            .as_ref()
            .unwrap()
            .last_heartbeat_time
            .as_ref()
            .unwrap()
            .0
            .to_string(),
        "lastHeartbeatTime stays exactly what the edge wrote"
    );
    let fast = site("fast-dead");
    assert_eq!(fast["lastHeartbeatAgeSeconds"], 1200);
    assert_eq!(fast["clockOffsetSeconds"], 1800);
    assert_eq!(
        fast["lastHeartbeatTime"],
        (now + jiff::SignedDuration::from_secs(600)).to_string()
    );

    let describe = |site: &FederatedCluster| {
        describe::render_description(
            &describe::site_description(site, &judging(), &none(), None, now),
            now,
        )
    };
    let text = describe(&sites[0]);
    assert!(
        text.contains("(5s ago), edge clock, 10m behind the hub clock"),
        "{text}"
    );
    let text = describe(&sites[1]);
    assert!(
        text.contains("(20m ago), edge clock, 30m ahead of the hub clock"),
        "{text}"
    );
    assert!(!text.contains("<invalid>"), "{text}");

    let summary = crate::fleet::summary::summarize(&sites, vec![], vec![], now);
    assert_eq!(summary.disconnected_clusters.len(), 1);
    assert_eq!(
        summary.disconnected_clusters[0].reason,
        "unreachable: last heartbeat 20m ago (interval 30s)"
    );
    assert_eq!(
        summary.disconnected_clusters[0].last_seen,
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            now - jiff::SignedDuration::from_secs(1200)
        )),
        "lastSeen is when the hub saw it"
    );
}

#[test]
fn an_unmeasured_fast_clock_is_never_a_negative_age() {
    // A heartbeat in the future with no offset measured (e.g. the hub
    // restarted since): 0 in every view, never negative or `<invalid>`.
    let ahead = FederatedCluster::test("ahead")
        .heartbeat_ago(-600)
        .with_phase(crate::api::Phase::Stale, 60);
    let now = fixture_now();
    let v = serde_json::to_value(status_report(
        std::slice::from_ref(&ahead),
        &judging(),
        &none(),
        now,
    ))
    .unwrap();
    assert_eq!(v["sites"][0]["lastHeartbeatAgeSeconds"], 0);
    assert!(v["sites"][0]["clockOffsetSeconds"].is_null());
    let text = describe::render_description(
        &describe::site_description(&ahead, &judging(), &none(), None, now),
        now,
    );
    assert!(
        text.contains("(0s ago), edge clock; phase is judged"),
        "{text}"
    );
    let summary = crate::fleet::summary::summarize(&[ahead], vec![], vec![], now);
    assert_eq!(
        summary.disconnected_clusters[0].reason,
        "stale: last heartbeat 0s ago (interval 30s)"
    );
}

#[test]
fn a_forged_clock_offset_cannot_panic_or_give_a_negative_age() {
    // A site token can write any status key, clockOffsetSeconds included
    // (the hub rewrites it on its next live sighting): whatever the value,
    // every view renders and no age is negative.
    let now = fixture_now();
    for offset in [i64::MIN, -1, 1, i64::MAX, 10_i64.pow(12), -(10_i64.pow(12))] {
        let site = FederatedCluster::test("forged")
            .connected()
            .with_clock_offset(offset);
        let heartbeat = cell(&site, Some(true), now, "LAST HEARTBEAT");
        assert!(!heartbeat.contains("invalid"), "{offset}: {heartbeat}");
        let v = serde_json::to_value(status_report(
            std::slice::from_ref(&site),
            &judging(),
            &none(),
            now,
        ))
        .unwrap();
        assert!(
            v["sites"][0]["lastHeartbeatAgeSeconds"].as_i64().unwrap() >= 0,
            "{offset}"
        );
        let text = describe::render_description(
            &describe::site_description(&site, &judging(), &none(), None, now),
            now,
        );
        assert!(text.contains("Last Heartbeat:"), "{offset}");
        crate::fleet::summary::summarize(&[site], vec![], vec![], now);
    }
}

#[test]
fn describe_escapes_the_region_and_the_pull_secret_reference() {
    // Values that bypassed the CRD's patterns (an old object, a server
    // without validation) still cannot drive the terminal.
    let mut site = FederatedCluster::test("hostile").pull();
    site.spec.region = Some("x\x1b[2J\x1b]0;owned\x07".into());
    if let Some(r) = site.spec.kubeconfig_secret_ref.as_mut() {
        r.name = "s\x1b[31m".into();
        r.key = "k\u{202e}".into();
    }
    let now = fixture_now();
    let text = describe::render_description(
        &describe::site_description(&site, &judging(), &none(), None, now),
        now,
    );
    assert!(
        !text.contains('\x1b') && !text.contains('\x07') && !text.contains('\u{202e}'),
        "{text:?}"
    );
    assert!(text.contains("Region:"), "{text}");
}

/// A site whose heartbeat and node count no reader can decode (the hub
/// judged it `InvalidStatus`), and a value that quotes terminal escapes.
fn unreadable_site() -> FederatedCluster {
    use crate::api::Phase;
    FederatedCluster::test("poisoned")
        .connected()
        .with_phase(Phase::Stale, 60)
        .with_condition(
            "Connected",
            "False",
            "InvalidStatus",
            "the hub cannot read status.lastHeartbeatTime, status.nodeCount of this site",
            60,
        )
        .poisoned(serde_json::json!({
            "lastHeartbeatTime": "2026-01-01T12:00:05.1234567891Z",
            "nodeCount": 18446744073709551615u64,
            "capacity": {"nodes": 3, "gpusByVendor": {"evil\u{1b}[2J/gpu": {"total": "\u{1b}]0;owned\u{7}"}}},
        }))
}

#[test]
fn an_unreadable_site_is_shown_with_what_could_not_be_read() {
    let sites = [
        unreadable_site(),
        FederatedCluster::test("fine").connected(),
    ];
    let now = fixture_now();
    let poisoned = &sites[0];
    assert_eq!(
        cell(poisoned, Some(true), now, "LAST HEARTBEAT"),
        "<invalid>"
    );
    assert_eq!(cell(poisoned, Some(true), now, "REASON"), "InvalidStatus");
    assert_eq!(
        cell(poisoned, Some(true), now, "NODES"),
        "3",
        "from capacity"
    );
    let table = table_of(&sites, Some(true), now, true, false);
    let d = describe::site_description(
        poisoned,
        &judging(),
        &crate::fleet::policy::Incidents::default(),
        None,
        now,
    );
    let text = describe::render_description(&d, now);
    for out in [&table, &text] {
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out}");
    }
    insta::assert_snapshot!(table);
    insta::assert_snapshot!(text);
    let json: serde_json::Value = serde_json::from_str(
        &to_json(&status_report(
            &sites,
            &judging(),
            &crate::fleet::policy::Incidents::default(),
            now,
        ))
        .unwrap(),
    )
    .unwrap();
    let u = &json["sites"][1]["unreadable"];
    assert_eq!(
        u["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect::<Vec<_>>(),
        [
            "status.capacity.gpusByVendor[\"evil\\u{1b}[2J/gpu\"].total",
            "status.lastHeartbeatTime",
            "status.nodeCount"
        ]
    );
    assert!(json["sites"][1]["lastHeartbeatTime"].is_null());
    assert!(
        json["sites"][0]["unreadable"].is_null(),
        "the other site read whole"
    );
}

#[test]
fn json_output_escapes_what_a_terminal_would_interpret_and_keeps_the_exact_string() {
    // C1 CSI (xterm reads U+009B as ESC [), DEL and a bidi override, as an
    // object stored before the CRD refused them could still hold.
    let text = "0.1\u{9b}2J\u{7f}\u{202e}x";
    let mut site = FederatedCluster::test("c1").connected();
    site.status.as_mut().unwrap().observed_version = Some(text.to_owned());
    let sites = [site];
    let whole = to_json(&status_report(
        &sites,
        &judging(),
        &crate::fleet::policy::Incidents::default(),
        fixture_now(),
    ))
    .unwrap();
    let streamed = streamed_report(&sites, report::ReportFormat::Json);
    for json in [&whole, &streamed] {
        assert!(!json.contains(['\u{9b}', '\u{7f}', '\u{202e}']), "{json}");
        assert!(
            json.contains(r#""observedVersion": "0.1\u009b2J\u007f\u202ex""#),
            "{json}"
        );
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(v["sites"][0]["observedVersion"], text, "the exact string");
    }
    let d = describe::site_description(
        &sites[0],
        &judging(),
        &crate::fleet::policy::Incidents::default(),
        None,
        fixture_now(),
    );
    assert!(!to_json(&d).unwrap().contains('\u{9b}'));
}
