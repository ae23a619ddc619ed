use super::*;

fn families(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .map(|l| {
            let (name, ty) = l.split_once(' ').unwrap();
            if ty == "counter" {
                format!("{name}_total")
            } else {
                name.to_owned()
            }
        })
        .collect()
}

#[test]
fn every_documented_name_is_registered_and_nothing_else() {
    let mut hub = families(&Metrics::new(MetricsRole::Hub).encode());
    // No series before the first health check / the first reported
    // site / the first restoration.
    hub.push("federation_health_check_duration_seconds".into());
    hub.push("federation_cluster_nodes".into());
    hub.push("federation_cluster_credential_expiration_timestamp_seconds".into());
    hub.push("federation_cluster_credential_renewal_timestamp_seconds".into());
    hub.push("fleet_hub_status_restored_total".into());
    hub.push("federation_cluster_disconnected".into());
    hub.push("federation_cluster_maintenance".into());
    hub.push("federation_cluster_late_to_wake".into());
    hub.push("federation_cluster_credential_expires_before_return".into());
    hub.push("federation_grouped_outage_clusters".into());
    hub.push("federation_edge_versions".into());
    let mut want: Vec<String> = HUB_METRIC_NAMES.iter().map(|s| s.to_string()).collect();
    hub.sort();
    want.sort();
    assert_eq!(hub, want);
    let mut edge = families(&Metrics::new(MetricsRole::Edge).encode());
    let mut want: Vec<String> = EDGE_METRIC_NAMES.iter().map(|s| s.to_string()).collect();
    edge.sort();
    want.sort();
    assert_eq!(edge, want);
}

#[test]
fn every_counter_exists_at_zero_for_every_label_set_it_can_take() {
    let text = Metrics::new(MetricsRole::Hub).encode();
    // A non-critical site's signal is decided `manual` only when an
    // incident raises it: that pair exists before it happens.
    for (tier, mode) in [
        ("critical", "manual"),
        ("standard", "manual"),
        ("standard", "auto"),
        ("non-critical", "auto"),
        ("non-critical", "manual"),
    ] {
        let want = format!(
            "federation_remediation_policy_applied_total{{tier=\"{tier}\",mode=\"{mode}\"}} 0\n"
        );
        assert!(text.contains(&want), "{want} in {text}");
    }
    // A critical site's decision is never automatic.
    assert!(!text.contains("tier=\"critical\",mode=\"auto\""), "{text}");
    // The bucket backfill, for each reason, before the hub wrote a label.
    for reason in crate::fleet::bucket::BACKFILL_REASONS {
        let want = format!("fleet_hub_bucket_backfills_total{{reason=\"{reason}\"}} 0\n");
        assert!(text.contains(&want), "{want} in {text}");
    }
    // How the hub lists sites: both modes at 0 until the first list.
    for mode in SITE_LIST_MODES {
        let want = format!("fleet_hub_site_list_mode{{mode=\"{mode}\"}} 0\n");
        assert!(text.contains(&want), "{want} in {text}");
    }
    let edge = Metrics::new(MetricsRole::Edge).encode();
    for cause in EDGE_FAILURE_CAUSES {
        let want = format!("fleet_edge_report_failures_total{{cause=\"{cause}\"}} 0\n");
        assert!(edge.contains(&want), "{want} in {edge}");
    }
    // Per site, from the site's first appearance: the restored counter
    // and the health-check histogram, before the first restoration or
    // check (so `increase()` and `rate()` see the first one).
    let m = Metrics::new(MetricsRole::Hub);
    let now = crate::fleet::fixtures::fixture_now();
    m.set_fleet(
        &[crate::api::FederatedCluster::test("a").connected()],
        0,
        Some(true),
        now,
    );
    let text = m.encode();
    for want in [
        "fleet_hub_status_restored_total{cluster=\"a\"} 0\n",
        "federation_health_check_duration_seconds_count{cluster=\"a\"} 0\n",
    ] {
        assert!(text.contains(want), "{want} in {text}");
    }
    m.status_restored("a");
    assert!(
        m.encode()
            .contains("fleet_hub_status_restored_total{cluster=\"a\"} 1\n")
    );
    // Deleted: its series go.
    m.set_fleet::<crate::api::FederatedCluster>(&[], 0, Some(true), now);
    assert!(!m.encode().contains("cluster=\"a\""));
}

#[test]
fn only_the_hubs_own_judgement_is_exported_as_disconnected() {
    // No hub judges: the views show a Pull site whose last probe is
    // old as Unreachable (implied by the heartbeat's age), but nobody
    // probed it; the per-site gauge the pages read stays as the hub
    // last judged it.
    let now = crate::fleet::fixtures::fixture_now();
    let unprobed = crate::api::FederatedCluster::test("p")
        .pull()
        .connected()
        .heartbeat_ago(3600);
    let judged_dark = crate::api::FederatedCluster::test("d")
        .unreachable()
        .heartbeat_ago(3600);
    let m = Metrics::new(MetricsRole::Hub);
    m.set_fleet(&[unprobed, judged_dark], 0, Some(false), now);
    let text = m.encode();
    assert!(
        text.contains("federation_clusters_total{status=\"unreachable\"} 2\n"),
        "the views' count: {text}"
    );
    assert!(
        text.contains(
            "federation_cluster_disconnected{cluster=\"d\",group=\"\",status=\"unreachable\"} 1\n"
        ),
        "{text}"
    );
    assert!(!text.contains("disconnected{cluster=\"p\""), "{text}");
}

#[test]
fn counters_count_once_per_call_with_the_policy_mode() {
    let m = Metrics::new(MetricsRole::Hub);
    m.new_signal(SignalType::CrashLoopBackOff);
    let mode = policy_for(Some(Tier::Critical), Severity::High).mode;
    m.policy_applied(Tier::Critical, mode);
    m.new_cascade(Tier::Standard, Tier::Critical);
    let text = m.encode();
    let mode = mode.as_str();
    assert!(text.contains("cross_cluster_issues_total{signal_type=\"CrashLoopBackOff\"} 1\n"));
    assert!(text.contains(&format!(
        "federation_remediation_policy_applied_total{{tier=\"critical\",mode=\"{mode}\"}} 1\n"
    )));
    assert!(
        text.contains(
            "cascade_detected_total{source_tier=\"standard\",target_tier=\"critical\"} 1\n"
        )
    );
}

#[test]
fn hostile_label_values_cannot_break_or_forge_the_exposition() {
    let m = Metrics::new(MetricsRole::Hub);
    let mut site = crate::api::FederatedCluster::test("a").connected();
    // What the CRD's pattern now refuses, as an older object or a
    // server without validation could still hold it.
    site.spec.region =
        Some("x\"} 0\nfederation_clusters_total{status=\"unreachable\"} 0\n#\\".to_owned());
    m.set_fleet(
        &[site],
        0,
        Some(true),
        crate::fleet::fixtures::fixture_now(),
    );
    m.observe_health_check("b\"\n", 0.01);
    m.observe_health_check("c\u{9b}31m\u{7f}\u{1b}[2J\u{202e}", 0.01);
    let text = m.encode();
    assert!(
        text.contains(
            "federation_health_check_duration_seconds_count{cluster=\"c\\\\u{9b}31m\\\\u{7f}\\\\u{1b}[2J\\\\u{202e}\"} 1\n"
        ),
        "{text}"
    );
    assert!(
        !text.contains(['\u{9b}', '\u{7f}', '\u{1b}', '\u{202e}']),
        "no raw control reaches the scrape"
    );
    assert!(
        text.contains(
            "federation_cluster_nodes{cluster=\"a\",region=\"x\\\"} 0\\nfederation_clusters_total{status=\\\"unreachable\\\"} 0\\n#\\\\\"} 3\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("federation_health_check_duration_seconds_count{cluster=\"b\\\"\\n\"} 1\n"),
        "{text}"
    );
    let forged = text
        .lines()
        .filter(|l| l.starts_with("federation_clusters_total{status=\"unreachable\"}"))
        .count();
    assert_eq!(forged, 1, "{text}");
}

#[test]
fn report_durations_are_rounded_up_to_their_bucket_bound() {
    use std::time::Duration;
    let ms = |n| report_duration_ms(Duration::from_micros(n));
    assert_eq!(ms(0), 5);
    assert_eq!(ms(5_000), 5);
    assert_eq!(ms(5_001), 10);
    assert_eq!(ms(37_000), 40);
    assert_eq!(ms(40_960_000), 40_960);
    assert_eq!(ms(50_000_000), 50_000);
}

#[test]
fn per_site_series_follow_the_fleet() {
    let m = Metrics::new(MetricsRole::Hub);
    let now = crate::fleet::fixtures::fixture_now();
    let a = crate::api::FederatedCluster::test("a")
        .connected()
        .with_token_expiring_in(3600)
        .with_token_renewed_in(1800);
    let b = crate::api::FederatedCluster::test("b").connected();
    m.observe_health_check("a", 0.02);
    m.observe_health_check("b", 0.02);
    m.set_fleet(&[a.clone(), b], 0, Some(true), now);
    let text = m.encode();
    let expires = now.as_second() + 3600;
    assert!(
        text.contains(&format!(
            "federation_cluster_credential_expiration_timestamp_seconds{{cluster=\"a\"}} {expires}\n"
        )),
        "{text}"
    );
    assert!(text.contains(&format!(
        "federation_cluster_credential_renewal_timestamp_seconds{{cluster=\"a\"}} {}\n",
        now.as_second() + 1800
    )));
    assert!(!text.contains("timestamp_seconds{cluster=\"b\"}"));
    // b is deleted: its health check goes with it.
    m.set_fleet(&[a], 0, Some(true), now);
    let text = m.encode();
    assert!(text.contains("federation_health_check_duration_seconds_count{cluster=\"a\"}"));
    assert!(!text.contains("cluster=\"b\""), "{text}");
    m.set_last_judgement(Some(now));
    assert!(m.encode().contains(&format!(
        "fleet_hub_last_judgement_timestamp_seconds {}\n",
        now.as_second()
    )));
}

#[test]
fn dark_sites_carry_their_group_and_maintenance_its_marker() {
    use crate::api::{GroupedOutage, MaintenanceWindow};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    let now = crate::fleet::fixtures::fixture_now();
    let m = Metrics::new(MetricsRole::Hub);
    let mut cordoned = crate::api::FederatedCluster::test("b")
        .with_region("eu-west")
        .unreachable()
        .heartbeat_ago(900);
    cordoned.spec.maintenance = Some(MaintenanceWindow {
        since: Some(Time(now - jiff::SignedDuration::from_secs(60))),
        until: Time(now + jiff::SignedDuration::from_secs(3600)),
        reason: None,
    });
    let sites = [
        crate::api::FederatedCluster::test("a")
            .with_region("eu-west")
            .stale()
            .heartbeat_ago(120),
        cordoned,
        crate::api::FederatedCluster::test("c").connected(),
    ];
    m.set_fleet(&sites, 0, Some(true), now);
    m.set_summary(&FederationStatusStatus {
        outages: vec![GroupedOutage::test(
            "go-0000abcd",
            "eu-west",
            &["a", "d", "e"],
            Time(now),
        )],
        edge_versions: [("0.2.0".to_owned(), 1180), ("0.1.0".to_owned(), 20)].into(),
        ..Default::default()
    });
    let text = m.encode();
    for want in [
        "federation_cluster_disconnected{cluster=\"a\",group=\"eu-west\",status=\"stale\"} 1\n",
        "federation_cluster_disconnected{cluster=\"b\",group=\"eu-west\",status=\"unreachable\"} 1\n",
        "federation_cluster_maintenance{cluster=\"b\"} 1\n",
        "federation_grouped_outages_active 1\n",
        "federation_grouped_outage_clusters{outage=\"go-0000abcd\",group_by=\"region\",group=\"eu-west\"} 3\n",
        "federation_edge_versions{version=\"0.2.0\"} 1180\n",
        "federation_edge_versions{version=\"0.1.0\"} 20\n",
    ] {
        assert!(text.contains(want), "{want} in {text}");
    }
    assert!(!text.contains("disconnected{cluster=\"c\""), "{text}");
    assert!(!text.contains("maintenance{cluster=\"a\""), "{text}");
    // Grouped by a label: its value; none when the site has no value.
    let m = Metrics::new(MetricsRole::Hub)
        .with_outage_group_by(GroupBy::parse("example.com/store-group").unwrap());
    m.set_fleet(&sites[..1], 0, Some(true), now);
    m.set_summary(&FederationStatusStatus::default());
    let text = m.encode();
    assert!(
        text.contains(
            "federation_cluster_disconnected{cluster=\"a\",group=\"\",status=\"stale\"} 1\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("federation_grouped_outages_active 0\n"),
        "{text}"
    );
    assert!(!text.contains("federation_edge_versions{"), "{text}");
}

#[test]
fn the_cluster_label_can_be_dropped() {
    let m = Metrics::new(MetricsRole::Hub).with_per_cluster_histograms(false);
    m.observe_health_check("site-a", 0.02);
    m.observe_health_check("site-b", 0.03);
    let text = m.encode();
    assert!(text.contains("federation_health_check_duration_seconds_count{cluster=\"\"} 2\n"));
    assert!(!text.contains("site-a"));
}

#[test]
fn a_sleeping_site_is_counted_apart_and_a_late_one_marked() {
    let now = crate::fleet::fixtures::fixture_now();
    let m = Metrics::new(MetricsRole::Hub);
    // Present at 0 before any site sleeps.
    let text = m.encode();
    assert!(
        text.contains("federation_clusters_total{status=\"sleeping\"} 0\n"),
        "{text}"
    );
    let sites = [
        crate::api::FederatedCluster::test("store-1").sleeping(),
        crate::api::FederatedCluster::test("store-2").late_to_wake(),
        crate::api::FederatedCluster::test("store-3").unreachable(),
    ];
    m.set_fleet(&sites, 0, Some(true), now);
    let text = m.encode();
    for want in [
        "federation_clusters_total{status=\"sleeping\"} 1\n",
        "federation_clusters_total{status=\"unreachable\"} 2\n",
        "federation_cluster_late_to_wake{cluster=\"store-2\"} 1\n",
        "federation_cluster_disconnected{cluster=\"store-2\",group=\"\",status=\"unreachable\"} 1\n",
    ] {
        assert!(text.contains(want), "{want} in {text}");
    }
    assert!(!text.contains("disconnected{cluster=\"store-1\""), "{text}");
    assert!(!text.contains("late_to_wake{cluster=\"store-3\""), "{text}");
    assert!(!text.contains("late_to_wake{cluster=\"store-1\""), "{text}");
}

#[test]
fn a_credential_that_lapses_asleep_is_marked() {
    let now = crate::fleet::fixtures::fixture_now();
    let m = Metrics::new(MetricsRole::Hub);
    let sites = [
        crate::api::FederatedCluster::test("store-1")
            .sleeping()
            .with_condition(
                "CredentialExpiring",
                "True",
                "ExpiresBeforeReturn",
                "lapses",
                60,
            ),
        crate::api::FederatedCluster::test("store-2")
            .sleeping()
            .with_condition("CredentialExpiring", "False", "RenewedByEdge", "ok", 60),
    ];
    m.set_fleet(&sites, 0, Some(true), now);
    let text = m.encode();
    assert!(
        text.contains(
            "federation_cluster_credential_expires_before_return{cluster=\"store-1\"} 1\n"
        ),
        "{text}"
    );
    assert!(
        !text.contains("expires_before_return{cluster=\"store-2\""),
        "{text}"
    );
}

#[test]
fn the_site_list_mode_is_one_mode_at_a_time() {
    let m = Metrics::new(MetricsRole::Hub);
    m.site_list_mode("streaming");
    let text = m.encode();
    assert!(
        text.contains("fleet_hub_site_list_mode{mode=\"streaming\"} 1\n"),
        "{text}"
    );
    assert!(
        text.contains("fleet_hub_site_list_mode{mode=\"paged\"} 0\n"),
        "{text}"
    );
    m.site_list_mode("paged");
    let text = m.encode();
    assert!(
        text.contains("fleet_hub_site_list_mode{mode=\"streaming\"} 0\n"),
        "{text}"
    );
    assert!(
        text.contains("fleet_hub_site_list_mode{mode=\"paged\"} 1\n"),
        "{text}"
    );
}

/// The lines of family `name` (its descriptor and its series) in `text`,
/// sorted.
fn family_lines(text: &str, name: &str) -> Vec<String> {
    let descriptor = ["# HELP ", "# TYPE ", "# UNIT "].map(|p| format!("{p}{name} "));
    let series = [format!("{name}{{"), format!("{name}_total{{")];
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| {
            descriptor
                .iter()
                .chain(&series)
                .any(|p| l.starts_with(p.as_str()))
        })
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

#[test]
fn per_site_series_written_at_scrape_read_as_prometheus_client_families_do() {
    // The families as they were kept before they were written out at
    // scrape (`metrics::sites`), filled with the same sites' values: the
    // text a scrape shows must be the same, escaping included.
    let now = crate::fleet::fixtures::fixture_now();
    let a = crate::api::FederatedCluster::test("a")
        .connected()
        .with_region("eu \"west\"\n")
        .with_token_expiring_in(3600)
        .with_token_renewed_in(1800);
    let mut b = crate::api::FederatedCluster::test("b").connected();
    b.status.as_mut().unwrap().node_count = Some(4);
    let mut c = crate::api::FederatedCluster::test("c\u{9b}").connected();
    c.status.as_mut().unwrap().node_count = Some(7);
    let m = Metrics::new(MetricsRole::Hub);
    m.set_fleet(&[c.clone(), a.clone(), b.clone()], 0, Some(true), now);
    m.status_restored("b");
    m.status_restored("b");
    // Restored before any summary held it: shown all the same.
    m.status_restored("new");

    #[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
    struct NodeLabels {
        cluster: LabelValue,
        region: LabelValue,
    }
    let mut r = Registry::default();
    let expiration = Family::<ClusterLabels, Gauge>::default();
    let renewal = Family::<ClusterLabels, Gauge>::default();
    let nodes = Family::<NodeLabels, Gauge>::default();
    let restored = Family::<ClusterLabels, Counter>::default();
    r.register_with_unit(
        "federation_cluster_credential_expiration_timestamp",
        "When each site's credential expires, as a Unix timestamp (status.credentialExpirationTime: the edge's hub token, or the hub's member token of a Pull site)",
        Unit::Seconds,
        expiration.clone(),
    );
    r.register_with_unit(
        "federation_cluster_credential_renewal_timestamp",
        "When each self-renewing edge renews its hub token, as a Unix timestamp (status.credentialRenewalTime; no series when it does not renew by itself)",
        Unit::Seconds,
        renewal.clone(),
    );
    r.register(
        "federation_cluster_nodes",
        "Nodes of each site, as last reported",
        nodes.clone(),
    );
    r.register(
        "fleet_hub_status_restored",
        "Site status writes that restored hub-owned conditions someone else had changed",
        restored.clone(),
    );
    for s in [&a, &b, &c] {
        let name = s.site_name();
        let status = s.status.as_ref().unwrap();
        if let Some(t) = &status.credential_expiration_time {
            expiration
                .get_or_create(&ClusterLabels::of(name))
                .set(t.0.as_second());
        }
        if let Some(t) = &status.credential_renewal_time {
            renewal
                .get_or_create(&ClusterLabels::of(name))
                .set(t.0.as_second());
        }
        if let Some(n) = status.node_count {
            let region = LabelValue::new(s.spec.region.clone().unwrap_or_default());
            let labels = NodeLabels {
                cluster: LabelValue::new(name),
                region,
            };
            nodes.get_or_create(&labels).set(n);
        }
        let _ = restored.get_or_create(&ClusterLabels::of(name));
    }
    restored.get_or_create(&ClusterLabels::of("b")).inc_by(2);
    restored.get_or_create(&ClusterLabels::of("new")).inc();
    let mut want = String::new();
    prometheus_client::encoding::text::encode(&mut want, &r).unwrap();

    let got = m.encode();
    for name in [
        "federation_cluster_credential_expiration_timestamp_seconds",
        "federation_cluster_credential_renewal_timestamp_seconds",
        "federation_cluster_nodes",
        "fleet_hub_status_restored",
    ] {
        let want = family_lines(&want, name);
        assert!(want.len() > 2, "{name}: {want:?}");
        assert_eq!(family_lines(&got, name), want, "{name}");
    }
    assert!(
        got.contains("fleet_hub_status_restored_total{cluster=\"b\"} 2\n"),
        "{got}"
    );
    assert!(
        got.contains("federation_cluster_nodes{cluster=\"c\\\\u{9b}\",region=\"\"} 7\n"),
        "{got}"
    );

    // Restores survive later summaries; a deleted site's series go.
    m.set_fleet(&[a.clone(), b.clone()], 0, Some(true), now);
    m.set_fleet(&[a.clone(), b], 0, Some(true), now);
    let text = m.encode();
    assert!(
        text.contains("fleet_hub_status_restored_total{cluster=\"b\"} 2\n"),
        "{text}"
    );
    assert!(!text.contains("cluster=\"c"), "{text}");
    m.set_fleet(&[a], 0, Some(true), now);
    let text = m.encode();
    assert!(!text.contains("cluster=\"b\""), "{text}");
    assert!(
        text.contains("federation_cluster_nodes{cluster=\"a\""),
        "{text}"
    );
    m.set_fleet::<crate::api::FederatedCluster>(&[], 0, Some(true), now);
    let text = m.encode();
    assert!(!text.contains("fleet_hub_status_restored"), "{text}");
    assert!(!text.contains("timestamp_seconds{"), "{text}");
}
