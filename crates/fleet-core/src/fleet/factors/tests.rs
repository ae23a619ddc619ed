use super::*;
use crate::api::{Environment, Signal, SignalType};
use crate::fleet::correlation::{CorrelationConfig, correlate};
use crate::fleet::fixtures::fixture_now;

/// A site heard from 5 s ago running edge `version`.
fn site(name: &str, version: &str) -> FederatedCluster {
    let mut s = FederatedCluster::test(name).connected();
    s.status.as_mut().unwrap().observed_version = Some(version.to_owned());
    s
}

fn labelled(mut s: FederatedCluster, key: &str, value: &str) -> FederatedCluster {
    s.metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert(key.to_owned(), value.to_owned());
    s
}

/// `n` sites named `prefix-i`, the first `with` of them on edge `v`, the
/// others on `0.0.9`.
fn sites(prefix: &str, n: usize, with: usize, v: &str) -> Vec<FederatedCluster> {
    (0..n)
        .map(|i| {
            site(
                &format!("{prefix}-{i:03}"),
                if i < with { v } else { "0.0.9" },
            )
        })
        .collect()
}

fn names(sites: &[FederatedCluster]) -> Vec<&str> {
    sites.iter().map(|s| s.site_name()).collect()
}

fn edge_factors(f: &[CommonFactor]) -> Vec<&CommonFactor> {
    f.iter().filter(|f| f.attribute == "edgeVersion").collect()
}

#[test]
fn the_version_most_affected_sites_run_is_named_with_its_counts() {
    let affected = sites("hit", 40, 38, "0.1.0");
    let healthy = sites("ok", 50, 3, "0.1.0");
    let fleet: Vec<_> = affected.iter().chain(&healthy).cloned().collect();
    let found = Population::of(&fleet).factors(names(&affected), Given::Nothing);
    let edge = edge_factors(&found);
    assert_eq!(edge.len(), 1, "{found:?}");
    let f = edge[0];
    assert_eq!(
        (
            f.value.as_str(),
            f.affected,
            f.affected_total,
            f.unaffected,
            f.unaffected_total
        ),
        ("0.1.0", 38, 40, 3, 50)
    );
    assert_eq!(
        describe(f),
        "38 of 40 affected run edge 0.1.0; 6% of the other sites do (3 of 50)"
    );
    assert_eq!(short(f), "edge 0.1.0 (38/40)");
    // Every site is in production: shared by all, so never named.
    assert!(
        found.iter().all(|f| f.attribute != "environment"),
        "{found:?}"
    );
}

#[test]
fn a_value_the_healthy_sites_share_too_is_not_named() {
    // 40 of 40 affected (100%): named while at most half as common
    // elsewhere (25 of 50), not once more are.
    let affected = sites("hit", 40, 40, "0.1.0");
    for (elsewhere, named) in [(25, true), (26, false), (50, false)] {
        let healthy = sites("ok", 50, elsewhere, "0.1.0");
        let fleet: Vec<_> = affected.iter().chain(&healthy).cloned().collect();
        let found = Population::of(&fleet).factors(names(&affected), Given::Nothing);
        assert_eq!(
            !edge_factors(&found).is_empty(),
            named,
            "{elsewhere}: {found:?}"
        );
    }
    // 80% of the affected at least: 4 of 5 is, 3 of 5 is not.
    for (with, named) in [(4, true), (3, false)] {
        let affected = sites("hit", 5, with, "0.1.0");
        let fleet: Vec<_> = affected
            .iter()
            .chain(&sites("ok", 10, 0, ""))
            .cloned()
            .collect();
        let found = Population::of(&fleet).factors(names(&affected), Given::Nothing);
        assert_eq!(!edge_factors(&found).is_empty(), named, "{with}: {found:?}");
    }
}

#[test]
fn nothing_is_in_common_without_three_clusters_or_anyone_else() {
    let all = sites("hit", 5, 5, "0.1.0");
    // Every site affected: nothing to set them apart from.
    assert!(
        Population::of(&all)
            .factors(names(&all), Given::Nothing)
            .is_empty()
    );
    // Two sites: too few to tell a cause from a coincidence.
    let fleet: Vec<_> = all.iter().cloned().chain(sites("ok", 5, 0, "")).collect();
    assert!(
        Population::of(&fleet)
            .factors(["hit-000", "hit-001"], Given::Nothing)
            .is_empty()
    );
    assert!(
        !Population::of(&fleet)
            .factors(["hit-000", "hit-001", "hit-002"], Given::Nothing)
            .is_empty()
    );
    // Five sites whose edges read one cluster are one.
    let one: Vec<_> = all
        .iter()
        .cloned()
        .map(|s| s.with_member("6f1c2a8e-0b7d-4f3e-9a51-2c8d7e6f1b20"))
        .chain(sites("ok", 5, 0, ""))
        .collect();
    assert!(
        Population::of(&one)
            .factors(names(&all), Given::Nothing)
            .is_empty()
    );
    // A site never heard from reports nothing and is no one to compare.
    let mut fleet = all.clone();
    fleet.push(FederatedCluster::test("silent"));
    assert!(
        Population::of(&fleet)
            .factors(names(&all), Given::Nothing)
            .is_empty()
    );
}

#[test]
fn affected_sites_count_by_member_cluster() {
    // Three sites read one cluster on 0.1.0; two other clusters run 0.2.0:
    // 1 of 3 clusters, not 3 of 5 sites, run 0.1.0.
    let uid = "6f1c2a8e-0b7d-4f3e-9a51-2c8d7e6f1b20";
    let mut affected: Vec<_> = (0..3)
        .map(|i| site(&format!("dup-{i}"), "0.1.0").with_member(uid))
        .collect();
    affected.extend([site("b", "0.2.0"), site("c", "0.2.0")]);
    let fleet: Vec<_> = affected
        .iter()
        .chain(&sites("ok", 10, 0, ""))
        .cloned()
        .collect();
    let found = Population::of(&fleet).factors(names(&affected), Given::Nothing);
    assert!(edge_factors(&found).is_empty(), "{found:?}");
    // Two of three clusters on 0.2.0 is under 80 %; with all three
    // clusters on it, 3 of 3.
    for s in &mut affected[..3] {
        s.status.as_mut().unwrap().observed_version = Some("0.2.0".into());
    }
    let fleet: Vec<_> = affected
        .iter()
        .chain(&sites("ok", 10, 0, ""))
        .cloned()
        .collect();
    let found = Population::of(&fleet).factors(names(&affected), Given::Nothing);
    let edge = edge_factors(&found);
    assert_eq!(
        (edge[0].affected, edge[0].affected_total),
        (3, 3),
        "{found:?}"
    );
}

#[test]
fn the_strongest_come_first_ties_by_attribute_and_at_most_five() {
    // Every affected site shares ten labels, Kubernetes and edge versions
    // and a GPU vendor; the healthy ones share some of them.
    let with_all = |s: FederatedCluster| {
        let mut s = (0..10).fold(s, |s, i| labelled(s, &format!("team-{i}"), "x"));
        s.status.as_mut().unwrap().kubernetes_version = Some("v1.31.0".into());
        s.with_gpu_vendor("amd.com/gpu", 2, 2)
    };
    let affected: Vec<_> = sites("hit", 4, 4, "0.1.0")
        .into_iter()
        .map(with_all)
        .collect();
    let mut healthy = sites("ok", 8, 0, "");
    // Edge 0.1.0 is on 2 of the 8 others: weaker than the rest.
    for s in &mut healthy[..2] {
        s.status.as_mut().unwrap().observed_version = Some("0.1.0".into());
    }
    let fleet: Vec<_> = affected.iter().chain(&healthy).cloned().collect();
    let found = Population::of(&fleet).factors(names(&affected), Given::Nothing);
    assert_eq!(found.len(), MAX_COMMON_FACTORS);
    let order: Vec<(&str, Option<&str>)> = found
        .iter()
        .map(|f| (f.attribute.as_str(), f.key.as_deref()))
        .collect();
    // Equal strength (4 of 4, none elsewhere): Kubernetes, GPU, then the
    // labels by key; edge 0.1.0 (2 of 8 elsewhere) is weaker and cut.
    assert_eq!(
        order,
        [
            ("kubernetesVersion", None),
            ("gpuVendor", None),
            ("label", Some("team-0")),
            ("label", Some("team-1")),
            ("label", Some("team-2")),
        ]
    );
    assert_eq!(
        describe(&found[1]),
        "4 of 4 affected have amd.com/gpu GPUs; 0% of the other sites do (0 of 8)"
    );
    assert_eq!(
        describe(&found[2]),
        "4 of 4 affected carry label team-0=x; 0% of the other sites do (0 of 8)"
    );
}

#[test]
fn site_text_is_stored_bounded_and_printable() {
    let long = format!("1.0.0-{}\u{1b}[2J\u{202e}", "a".repeat(500));
    let affected: Vec<_> = (0..3).map(|i| site(&format!("hit-{i}"), &long)).collect();
    let fleet: Vec<_> = affected
        .iter()
        .chain(&sites("ok", 3, 0, ""))
        .cloned()
        .collect();
    let found = Population::of(&fleet).factors(names(&affected), Given::Nothing);
    let v = &edge_factors(&found)[0].value;
    assert_eq!(v.chars().count(), MAX_FACTOR_VALUE_CHARS);
    assert!(v.ends_with('…'));
    assert!(!v.chars().any(crate::api::is_control_or_format), "{v:?}");
}

#[test]
fn an_outage_never_names_its_own_grouping_and_incidents_get_theirs() {
    let crash = || Signal::test(SignalType::CrashLoopBackOff, "shop", "Deployment", "web");
    // Three sites on edge 0.1.0 in eu-west crash; ten others do not.
    let mut fleet: Vec<FederatedCluster> = (0..3)
        .map(|i| {
            site(&format!("eu-{i}"), "0.1.0")
                .with_region("eu-west")
                .with_signal(crash())
        })
        .collect();
    fleet.extend((0..10).map(|i| {
        site(&format!("us-{i}"), "0.2.0")
            .with_region("us-east")
            .with_environment(Environment::Staging)
    }));
    let correlations = correlate(&fleet, &[], fixture_now(), CorrelationConfig::default());
    let mut summary = crate::fleet::summary::summarize(&fleet, correlations, vec![], fixture_now());
    summary.outages = vec![crate::api::GroupedOutage {
        id: "go-0000000a".into(),
        group_by: "region".into(),
        value: "eu-west".into(),
        clusters: vec!["eu-0".into(), "eu-1".into(), "eu-2".into()],
        clusters_total: 3,
        since: crate::fleet::fixtures::ago(60),
        started_by: None,
        common_factors: Vec::new(),
    }];
    set_common_factors(&mut summary, &fleet);
    let c = &summary.correlations[0].common_factors;
    let attrs: Vec<&str> = c.iter().map(|f| f.attribute.as_str()).collect();
    assert_eq!(attrs, ["edgeVersion", "region", "environment"], "{c:?}");
    let o = &summary.outages[0].common_factors;
    let attrs: Vec<&str> = o.iter().map(|f| f.attribute.as_str()).collect();
    assert_eq!(
        attrs,
        ["edgeVersion", "environment"],
        "the region is the group: {o:?}"
    );
    let incident = crate::fleet::incident::find_incident(&summary, "go-0000000a").unwrap();
    assert_eq!(
        &of_incident(&incident, &summary, &fleet),
        o,
        "a reader names the same"
    );
}

#[test]
fn a_cascade_names_what_every_site_the_failure_reached_shares() {
    let crash = |first_ago| {
        Signal::test(SignalType::CrashLoopBackOff, "shop", "Deployment", "web").seen(first_ago, 30)
    };
    // Staging, then three production sites, all on edge 0.1.0; eight
    // others on 0.2.0.
    let mut fleet = vec![
        site("stg", "0.1.0")
            .with_environment(Environment::Staging)
            .with_signal(crash(7200)),
    ];
    fleet.extend((0..3).map(|i| site(&format!("prod-{i}"), "0.1.0").with_signal(crash(600))));
    fleet.extend(sites("ok", 8, 0, ""));
    let cascades = crate::fleet::correlation::detect_cascades(
        &fleet,
        fixture_now(),
        crate::fleet::correlation::DEFAULT_LOOKBACK,
    );
    assert_eq!(cascades.len(), 3);
    let mut summary = crate::fleet::summary::summarize(&fleet, vec![], cascades, fixture_now());
    set_common_factors(&mut summary, &fleet);
    for c in &summary.cascades {
        let edge = edge_factors(&c.common_factors);
        assert_eq!(
            (
                edge[0].affected,
                edge[0].affected_total,
                edge[0].unaffected,
                edge[0].unaffected_total
            ),
            (4, 4, 0, 8),
            "{c:?}"
        );
    }
    let id = crate::fleet::incident::cascade_id_of(&summary.cascades[0]);
    let incident = crate::fleet::incident::find_incident(&summary, &id).unwrap();
    assert_eq!(
        of_incident(&incident, &summary, &fleet),
        summary.cascades[0].common_factors
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Whatever the fleet, every factor named keeps the rule, there are at
    /// most five, and they come strongest first.
    #[test]
    fn every_factor_named_keeps_the_rule(
        versions in proptest::collection::vec((0u8..4, 0u8..3, proptest::bool::ANY), 2..120),
        affected in proptest::collection::vec(proptest::bool::ANY, 2..120),
    ) {
        let fleet: Vec<FederatedCluster> = versions
            .iter()
            .enumerate()
            .map(|(i, (v, l, gpu))| {
                let s = labelled(site(&format!("s{i:03}"), &format!("0.{v}.0")), "zone", &format!("z{l}"));
                if *gpu { s.with_gpus(1) } else { s }
            })
            .collect();
        let hit: Vec<&str> = fleet
            .iter()
            .zip(affected.iter().chain(std::iter::repeat(&false)))
            .filter(|(_, a)| **a)
            .map(|(s, _)| s.site_name())
            .collect();
        let found = Population::of(&fleet).factors(hit.iter().copied(), Given::Nothing);
        proptest::prop_assert!(found.len() <= MAX_COMMON_FACTORS);
        let mut last = f64::INFINITY;
        for f in &found {
            proptest::prop_assert!(f.affected_total >= 2 && f.unaffected_total >= 1);
            proptest::prop_assert!(f.affected * 100 >= f.affected_total * 80, "{f:?}");
            proptest::prop_assert!(2 * f.unaffected * f.affected_total <= f.affected * f.unaffected_total, "{f:?}");
            proptest::prop_assert_eq!(f.affected_total + f.unaffected_total, i64::try_from(fleet.len()).unwrap());
            let lift = f.affected as f64 / f.affected_total as f64 - f.unaffected as f64 / f.unaffected_total as f64;
            proptest::prop_assert!(lift <= last + 1e-12);
            last = lift;
        }
    }
}

/// `s` with nodes on each of `kernels`.
fn on_kernels(s: FederatedCluster, kernels: &[(&str, i64)]) -> FederatedCluster {
    s.with_node_info(|n| n.kernel_version = crate::api::NodeValues::of(kernels))
}

#[test]
fn a_kernel_the_affected_sites_nodes_share_is_named_with_its_counts() {
    // Ten affected sites: nine have nodes on 5.15.0-105 (some beside a
    // newer kernel), one only on 6.8; of twenty others, two have it.
    let affected: Vec<_> = (0..10)
        .map(|i| {
            let s = site(&format!("hit-{i}"), "0.1.0");
            match i {
                0..=5 => on_kernels(s, &[("5.15.0-105-generic", 3)]),
                6..=8 => on_kernels(s, &[("6.8.0-45-generic", 5), ("5.15.0-105-generic", 1)]),
                _ => on_kernels(s, &[("6.8.0-45-generic", 2)]),
            }
        })
        .collect();
    let healthy: Vec<_> = (0..20)
        .map(|i| {
            let s = site(&format!("ok-{i:02}"), "0.1.0");
            if i < 2 {
                on_kernels(s, &[("5.15.0-105-generic", 1), ("6.8.0-45-generic", 4)])
            } else {
                on_kernels(s, &[("6.8.0-45-generic", 3)])
            }
        })
        .collect();
    let fleet: Vec<_> = affected.iter().chain(&healthy).cloned().collect();
    let found = Population::of(&fleet).factors(names(&affected), Given::Nothing);
    assert_eq!(
        found.len(),
        1,
        "edge 0.1.0 and 6.8 are everywhere: {found:?}"
    );
    let f = &found[0];
    assert_eq!(
        (
            f.attribute.as_str(),
            f.key.as_deref(),
            f.value.as_str(),
            f.affected,
            f.affected_total,
            f.unaffected,
            f.unaffected_total
        ),
        ("kernelVersion", None, "5.15.0-105-generic", 9, 10, 2, 20)
    );
    assert_eq!(
        describe(f),
        "9 of 10 affected have nodes on kernel 5.15.0-105-generic; 10% of the other sites do (2 of 20)"
    );
    assert_eq!(short(f), "kernel 5.15.0-105-generic (9/10)");
}

#[test]
fn node_os_gpu_model_and_runtime_are_compared_in_their_order() {
    use crate::api::NodeValues;
    let affected: Vec<_> = (0..4)
        .map(|i| {
            site(&format!("hit-{i}"), "0.1.0").with_node_info(|n| {
                n.os_image = NodeValues::of(&[("Flatcar Container Linux 3815.2.0", 2)]);
                n.container_runtime_version = NodeValues::of(&[("containerd://1.6.8", 2)]);
                n.gpu_model = NodeValues::of(&[("NVIDIA-A100-SXM4-80GB", 1)]);
                // A value listed twice (not what the CRD admits) counts once.
                n.kernel_version =
                    NodeValues::of(&[("6.1.0-rt", 1), ("6.1.0-rt", 1), ("6.8.0", 1)]);
            })
        })
        .collect();
    let mut healthy: Vec<_> = (0..4)
        .map(|i| {
            site(&format!("ok-{i}"), "0.1.0").with_node_info(|n| {
                n.os_image = NodeValues::of(&[("Ubuntu 24.04.1 LTS", 2)]);
                n.kernel_version = NodeValues::of(&[("6.8.0", 2)]);
            })
        })
        .collect();
    // One other site on the kernel: weaker than the rest.
    healthy[0] = on_kernels(healthy[0].clone(), &[("6.1.0-rt", 1)]);
    let fleet: Vec<_> = affected.iter().chain(&healthy).cloned().collect();
    let found = Population::of(&fleet).factors(names(&affected), Given::Nothing);
    let got: Vec<(&str, &str, i64, i64)> = found
        .iter()
        .map(|f| {
            (
                f.attribute.as_str(),
                f.value.as_str(),
                f.affected,
                f.unaffected,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("gpuModel", "NVIDIA-A100-SXM4-80GB", 4, 0),
            ("osImage", "Flatcar Container Linux 3815.2.0", 4, 0),
            ("containerRuntimeVersion", "containerd://1.6.8", 4, 0),
            ("kernelVersion", "6.1.0-rt", 4, 1),
        ]
    );
    let lines: Vec<String> = found.iter().map(describe).collect();
    assert_eq!(
        lines[..3],
        [
            "4 of 4 affected have nodes with NVIDIA-A100-SXM4-80GB GPUs; 0% of the other sites do (0 of 4)",
            "4 of 4 affected have nodes running Flatcar Container Linux 3815.2.0; 0% of the other sites do (0 of 4)",
            "4 of 4 affected have nodes on container runtime containerd://1.6.8; 0% of the other sites do (0 of 4)",
        ]
    );
    let shorts: Vec<String> = found.iter().map(short).collect();
    assert_eq!(
        shorts,
        [
            "gpu-model NVIDIA-A100-SXM4-80GB (4/4)",
            "os Flatcar Container Linux 3815.2.0 (4/4)",
            "runtime containerd://1.6.8 (4/4)",
            "kernel 6.1.0-rt (4/4)",
        ]
    );
}

#[test]
fn only_sites_that_report_their_nodes_are_compared_on_them() {
    use crate::api::NodeValues;
    // Halfway through an edge rollout: four affected sites and four others
    // report their nodes, all on Ubuntu; ten others run an edge that
    // reports nothing of them.
    let reporting = |name: String, kernel: &str| {
        site(&name, "0.2.0").with_node_info(|n| {
            n.os_image = NodeValues::of(&[("Ubuntu 24.04.1 LTS", 2)]);
            n.kernel_version = NodeValues::of(&[(kernel, 2)]);
        })
    };
    let affected: Vec<_> = (0..4)
        .map(|i| reporting(format!("hit-{i}"), "5.15.0-105-generic"))
        .collect();
    let mut fleet: Vec<_> = affected.clone();
    fleet.extend((0..4).map(|i| reporting(format!("ok-{i}"), "6.8.0-45-generic")));
    fleet.extend((0..10).map(|i| site(&format!("old-{i}"), "0.1.0")));
    let found = Population::of(&fleet).factors(names(&affected), Given::Nothing);
    let got: Vec<(&str, &str, i64, i64, i64, i64)> = found
        .iter()
        .map(|f| {
            (
                f.attribute.as_str(),
                f.value.as_str(),
                f.affected,
                f.affected_total,
                f.unaffected,
                f.unaffected_total,
            )
        })
        .collect();
    // The kernel over the 4 others that report one; the edge version over
    // all 14; Ubuntu, which every site that tells runs, not at all.
    assert_eq!(
        got,
        [
            ("kernelVersion", "5.15.0-105-generic", 4, 4, 0, 4),
            ("edgeVersion", "0.2.0", 4, 4, 4, 14),
        ]
    );
    // Fewer than three affected clusters that tell: nothing of their nodes
    // can be in common.
    for s in &mut fleet[..2] {
        s.status.as_mut().unwrap().node_info = None;
    }
    let found = Population::of(&fleet).factors(names(&affected), Given::Nothing);
    assert!(
        found.iter().all(|f| f.attribute == "edgeVersion"),
        "{found:?}"
    );
    // Nobody else tells: neither.
    let lone: Vec<_> = affected
        .iter()
        .cloned()
        .chain((0..10).map(|i| site(&format!("old-{i}"), "0.1.0")))
        .collect();
    let found = Population::of(&lone).factors(names(&affected), Given::Nothing);
    assert!(
        found.iter().all(|f| f.attribute == "edgeVersion"),
        "{found:?}"
    );
}
