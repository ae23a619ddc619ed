//! One incident by id, and what its sites have in common.

use super::*;

#[test]
fn one_incident_shows_its_sites_and_member_signals() {
    use crate::fleet::incident::find_incident;
    let now = fixture_now();
    let sites = vec![
        FederatedCluster::test("a")
            .connected()
            .with_signal(Signal::test(SignalType::OomKilled, "ns", "Deployment", "x"))
            .with_signal(Signal::test(
                SignalType::CrashLoopBackOff,
                "ns",
                "Deployment",
                "y",
            )),
        cordoned(FederatedCluster::test("b").stale()).with_signal(Signal::test(
            SignalType::OomKilled,
            "ns",
            "Deployment",
            "x",
        )),
        FederatedCluster::test("c").connected(),
    ];
    let fleet = crate::api::FederationStatusStatus {
        correlations: vec![crate::api::Correlation {
            id: "xc-0000000a".into(),
            signal: SignalType::OomKilled,
            severity: crate::api::Severity::Critical,
            original_severity: crate::api::Severity::High,
            strictest_tier: None,
            clusters: vec!["a".into(), "b".into(), "gone".into()],
            clusters_total: 3,
            first_seen: crate::fleet::fixtures::ago(600),
            last_seen: crate::fleet::fixtures::ago(60),
            started_by: Some("b".into()),
            common_factors: Vec::new(),
        }],
        ..Default::default()
    };
    let incident = find_incident(&fleet, "xc-0000000a").unwrap();
    let r = incidents::incident_report(
        &incident,
        &sites,
        &Incidents::of(Some(&fleet)),
        &judging(),
        now,
    );
    assert_eq!(r.started_by.as_deref(), Some("b"));
    // Each member signal as the hub decides it: raised to critical by the
    // correlation, at its (unrecorded: the fallback) tier.
    for s in &r.signals {
        assert_eq!(s.decided_severity, crate::api::Severity::Critical);
        assert_eq!(s.decided_tier, None);
        assert_eq!(
            s.remediation,
            crate::fleet::policy::policy_for(None, s.decided_severity)
        );
        assert_eq!(s.raised_by, ["xc-0000000a"]);
    }
    let names: Vec<&str> = r.sites.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "gone"]);
    assert!(!r.sites[2].registered);
    assert!(r.sites[1].in_maintenance);
    assert_eq!(r.signals.len(), 2, "only the correlated signal type");
    let text = incidents::render_incident(&r, now, false);
    assert!(text.contains("Type:        Correlation"), "{text}");
    assert!(
        text.contains("Severity:    critical (raised from high)"),
        "{text}"
    );
    assert!(text.contains("Sites (3):"), "{text}");
    assert!(
        text.contains("Started by:  b (earliest evidence 10m ago, hub clock)"),
        "{text}"
    );
    assert!(
        text.contains("critical (from high)") && text.contains("xc-0000000a  -"),
        "{text}"
    );
    assert!(text.contains("Stale,Maintenance"), "{text}");
    assert!(text.contains("not registered"), "{text}");
    assert!(!text.contains("CrashLoopBackOff"), "{text}");
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["kind"], "IncidentReport");
    assert_eq!(json["type"], "Correlation");
    assert_eq!(json["correlation"]["id"], "xc-0000000a");
    assert_eq!(json["commonFactors"], serde_json::json!([]));
    assert!(text.contains("In common:   nothing that sets"), "{text}");
}

/// What an incident's sites share: full lines in `incidents ID`, escaped;
/// `commonFactors` in its JSON, on the incident and at the top; the short
/// form in the `incidents` list.
#[test]
fn an_incident_names_what_its_sites_have_in_common() {
    use crate::fleet::incident::find_incident;
    let now = fixture_now();
    let factor = |value: &str| crate::api::CommonFactor {
        attribute: "edgeVersion".into(),
        key: None,
        value: value.into(),
        affected: 38,
        affected_total: 40,
        unaffected: 3,
        unaffected_total: 50,
    };
    let label = crate::api::CommonFactor {
        attribute: "label".into(),
        key: Some("rack".into()),
        value: "r7".into(),
        ..factor("")
    };
    let fleet = crate::api::FederationStatusStatus {
        correlations: vec![crate::api::Correlation {
            id: "xc-0000000a".into(),
            signal: SignalType::OomKilled,
            severity: crate::api::Severity::Critical,
            original_severity: crate::api::Severity::High,
            strictest_tier: None,
            clusters: vec!["a".into(), "b".into()],
            clusters_total: 40,
            first_seen: crate::fleet::fixtures::ago(600),
            last_seen: crate::fleet::fixtures::ago(60),
            started_by: Some("b".into()),
            common_factors: vec![factor("0.1.0\u{1b}[2J"), label],
        }],
        ..Default::default()
    };
    let incident = find_incident(&fleet, "xc-0000000a").unwrap();
    let r = incidents::incident_report(
        &incident,
        &[],
        &Incidents::of(Some(&fleet)),
        &judging(),
        now,
    );
    let text = incidents::render_incident(&r, now, false);
    assert!(
        text.contains(
            "In common:\n  38 of 40 affected run edge 0.1.0\\x1b[2J; 6% of the other sites do (3 of 50)\n  38 of 40 affected carry label rack=r7; 6% of the other sites do (3 of 50)\nSites (2):"
        ),
        "{text}"
    );
    assert!(!text.contains('\u{1b}'), "{text:?}");
    let json = serde_json::to_value(&r).unwrap();
    let expected = serde_json::json!({
        "attribute": "edgeVersion",
        "value": "0.1.0\u{1b}[2J",
        "affected": 38,
        "affectedTotal": 40,
        "unaffected": 3,
        "unaffectedTotal": 50
    });
    assert_eq!(json["commonFactors"][0], expected);
    assert_eq!(json["commonFactors"][1]["key"], "rack");
    assert_eq!(json["correlation"]["commonFactors"][0], expected);
    let list = incidents_report(
        &[],
        fleet.correlations.clone(),
        vec![],
        vec![],
        &judging(),
        now,
    );
    let table = render_incidents(&list, now, false);
    assert!(table.contains("IN COMMON"), "{table}");
    assert!(
        table.contains("edge 0.1.0\\x1b[2J (38/40) +1 more"),
        "{table}"
    );
    let json: serde_json::Value = serde_json::from_str(&to_json(&list).unwrap()).unwrap();
    assert_eq!(json["correlations"][0]["commonFactors"][0], expected);
}
