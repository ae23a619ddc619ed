use super::*;
use crate::fleet::fixtures::{ago, fixture_now};

fn node(name: &str, ready: bool, why: &str, since_ago: i64) -> NodeReadiness {
    NodeReadiness {
        name: name.to_owned(),
        ready,
        why: why.to_owned(),
        since: Some(ago(since_ago).0),
    }
}

fn at(secs_ago: i64) -> Timestamp {
    ago(secs_ago).0
}

#[test]
fn a_connected_edge_keeps_only_a_baseline_and_reports_nothing() {
    let mut j = Journal::default();
    j.observe(&[node("n1", false, "KubeletNotReady", 50)], &[], at(40));
    j.observe(&[node("n1", true, "KubeletReady", 30)], &[], at(20));
    assert!(!j.is_dark());
    assert!(j.entries.is_empty());
    assert_eq!(j.summary(fixture_now()), None);
}

#[test]
fn a_dark_period_tells_nodes_failures_restarts_and_credentials_in_time_order() {
    let mut j = Journal::default();
    let crash = Signal {
        message: Some("back-off 5m0s restarting failed container".into()),
        ..Signal::test(SignalType::CrashLoopBackOff, "shop", "Deployment", "web").seen(500, 10)
    };
    // Connected: the baseline has n1 ready and no failure.
    j.observe(
        &[node("store-7-n1", true, "KubeletReady", 9000)],
        &[],
        at(3700),
    );
    j.report_failed(at(3600), "unreachable", None);
    j.report_failed(at(3590), "unreachable", None);
    // The node lost power one minute before the edge noticed the hub was gone.
    j.observe(
        &[node(
            "store-7-n1",
            false,
            "NodeStatusUnknown: Kubelet stopped posting node status.",
            3660,
        )],
        std::slice::from_ref(&crash),
        at(3500),
    );
    // The edge restarts; the hub refuses its (expired) token twice.
    let mut j: Journal = serde_json::from_value(serde_json::to_value(&j).unwrap()).unwrap();
    j.edge_started(at(200), "0.2.0");
    j.report_failed(
        at(190),
        "token-expired",
        Some((DarkEntryKind::CredentialRejected, "401: token expired")),
    );
    j.report_failed(
        at(180),
        "token-expired",
        Some((DarkEntryKind::CredentialRejected, "401: token expired")),
    );
    j.observe(
        &[node(
            "store-7-n1",
            true,
            "KubeletReady: kubelet is posting ready status",
            100,
        )],
        &[],
        at(90),
    );
    let dark = j.summary(at(0)).unwrap();
    assert_eq!((dark.from.0, dark.to.0, dark.dropped), (at(3600), at(0), 0));
    let seen: Vec<(Timestamp, DarkEntryKind, &str, &str)> = dark
        .entries
        .iter()
        .map(|e| (e.time.0, e.kind, e.subject.as_str(), e.detail.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            (
                at(3660),
                DarkEntryKind::NodeNotReady,
                "store-7-n1",
                "NodeStatusUnknown: Kubelet stopped posting node status."
            ),
            (
                at(500),
                DarkEntryKind::Failure,
                "shop/Deployment/web",
                "CrashLoopBackOff: back-off 5m0s restarting failed container"
            ),
            (
                at(200),
                DarkEntryKind::EdgeRestarted,
                "edge",
                "edge 0.2.0 started"
            ),
            (
                at(190),
                DarkEntryKind::CredentialRejected,
                "hub",
                "401: token expired"
            ),
            (
                at(100),
                DarkEntryKind::NodeReady,
                "store-7-n1",
                "KubeletReady: kubelet is posting ready status"
            ),
            (
                at(90),
                DarkEntryKind::Recovered,
                "shop/Deployment/web",
                "CrashLoopBackOff"
            ),
        ]
    );
    // Reported: the journal starts again from the baseline.
    j.reported();
    assert!(!j.is_dark() && j.entries.is_empty() && j.dropped == 0);
    assert!(j.seen.is_some());
    assert_eq!(j.summary(fixture_now()), None);
}

#[test]
fn a_restart_while_connected_is_no_entry() {
    let mut j = Journal::default();
    j.edge_started(at(10), "0.2.0");
    assert!(j.entries.is_empty() && !j.is_dark());
}

#[test]
fn the_journal_keeps_the_latest_entries_and_counts_the_dropped() {
    let mut j = Journal::default();
    j.observe(&[], &[], at(1000));
    j.report_failed(at(999), "unreachable", None);
    for i in 0..(MAX_DARK_ENTRIES as i64 + 7) {
        let name = format!("n{i}");
        j.observe(&[node(&name, false, "flap", 900 - i)], &[], at(900 - i));
        j.observe(&[node(&name, true, "", 900 - i)], &[], at(900 - i));
    }
    let dark = j.summary(at(0)).unwrap();
    assert_eq!(dark.entries.len(), MAX_DARK_ENTRIES);
    assert_eq!(
        dark.dropped,
        2 * (MAX_DARK_ENTRIES as i64 + 7) - MAX_DARK_ENTRIES as i64
    );
    // The latest are kept.
    assert_eq!(
        dark.entries.last().unwrap().subject,
        format!("n{}", MAX_DARK_ENTRIES + 6)
    );
    // A persisted journal stays within the same bound.
    assert!(serde_json::to_vec(&j).unwrap().len() < 64 * 1024);
}

#[test]
fn member_text_is_clipped_to_what_the_crd_admits() {
    let mut j = Journal::default();
    j.observe(&[], &[], at(100));
    j.report_failed(at(99), "unreachable", None);
    let long = format!("\u{1b}[2J{}\n", "x".repeat(10_000));
    j.observe(&[node(&"n".repeat(1000), false, &long, 50)], &[], at(40));
    let e = &j.summary(at(0)).unwrap().entries[0];
    assert_eq!(
        e.subject.chars().count(),
        crate::api::MAX_DARK_SUBJECT_CHARS
    );
    assert_eq!(e.detail.chars().count(), crate::api::MAX_DARK_DETAIL_CHARS);
    assert!(!e.detail.chars().any(crate::api::is_control_or_format));
}

#[test]
fn a_cleared_journal_restarted_remembers_the_baseline() {
    // A node already not ready when the edge went dark is no new entry.
    let mut j = Journal::default();
    j.observe(&[node("n1", false, "down", 5000)], &[], at(4000));
    j.report_failed(at(3000), "unreachable", None);
    j.observe(&[node("n1", false, "down", 5000)], &[], at(2000));
    assert!(j.entries.is_empty());
    let dark = j.summary(at(0)).unwrap();
    assert!(dark.entries.is_empty());
}

#[test]
fn node_readiness_reads_reason_message_and_transition() {
    let n: Node = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "store-7-n1"},
        "status": {"conditions": [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
            "message": "Kubelet stopped posting node status.", "lastTransitionTime": "2026-01-01T02:09:00Z"}]}
    }))
    .unwrap();
    let bare: Node =
        serde_json::from_value(serde_json::json!({"metadata": {"name": "b"}})).unwrap();
    let r = node_readiness(&[n, bare]);
    assert_eq!(
        r[0],
        NodeReadiness {
            name: "store-7-n1".into(),
            ready: false,
            why: "NodeStatusUnknown: Kubelet stopped posting node status.".into(),
            since: Some("2026-01-01T02:09:00Z".parse().unwrap()),
        }
    );
    assert!(!r[1].ready);
    assert_eq!(r[1].why, "no Ready condition");
}

/// A site cannot forge the hub's judgement through its dark period: the
/// hub judges a silent site the same whatever its journal claims (that it
/// was never dark, that it came back a second ago), and a live one too.
#[test]
fn the_hubs_judgement_never_reads_the_dark_period() {
    use crate::api::FederatedCluster;
    use crate::fleet::hub_status::{DEFAULT_CREDENTIAL_WARNING, Sighting, hub_status};
    let interval = std::time::Duration::from_secs(30);
    let claim = vec![DarkEntry {
        time: ago(1),
        kind: DarkEntryKind::NodeReady,
        subject: "all".into(),
        detail: "Connected: HeartbeatReceived".into(),
    }];
    for site in [
        FederatedCluster::test("s").connected(),
        FederatedCluster::test("s").stale(),
        FederatedCluster::test("s").unreachable(),
    ] {
        let judged = |site: &FederatedCluster| {
            let sighting = Sighting::of_site(None, site, interval, fixture_now());
            let j = hub_status(
                site,
                &sighting,
                interval,
                DEFAULT_CREDENTIAL_WARNING,
                None,
                fixture_now(),
            );
            (
                j.phase,
                j.conditions.into_owned(),
                j.changed,
                j.requeue_after,
            )
        };
        let forged = site.clone().with_dark_period(0, 0, claim.clone());
        assert_eq!(judged(&forged), judged(&site));
    }
}
