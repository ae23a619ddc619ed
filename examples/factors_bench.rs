//! What an incident's sites have in common, over a large fleet (benchmark
//! P4, common factors): 10,000 and 100,000 sites, one signal each (100,000
//! signals at the larger size, P4's budget), as the hub computes the
//! factors of every correlation, cascade and grouped outage of its
//! summary (`fleet::factors::set_common_factors`: one pass over the fleet,
//! then one over each incident's sites). Prints a Markdown table; nothing
//! is asserted.
//!
//! `cargo run --release --example factors_bench -- [RUNS]` (default: best
//! of 5 runs per size).

use std::collections::BTreeMap;
use std::time::Instant;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kubectl_fleet::api::{
    Capacity, Environment, FederatedCluster, FederatedClusterSpec, FederatedClusterStatus,
    GpuCount, NodeInfo, NodeValue, NodeValues, Phase, Signal, SignalType, Tier, WorkloadRef,
};
use kubectl_fleet::fleet::correlation::{
    CorrelationConfig, DEFAULT_LOOKBACK, correlate, detect_cascades,
};
use kubectl_fleet::fleet::factors::set_common_factors;
use kubectl_fleet::fleet::outage::{OutageConfig, grouped_outages};
use kubectl_fleet::fleet::summary::{set_outages, summarize};

/// A small deterministic generator (xorshift), so every run sees the same fleet.
struct Rng(u64);

impl Rng {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }
}

/// `sites` sites heard from now, each with one signal of a type in
/// rotation on one of 200 workloads, 4 edge versions (the sites failing
/// with OOMKilled mostly on 0.1.0-rc), 3 Kubernetes versions, 50 regions
/// (region r-007 dark for an hour: a grouped outage), environments and
/// tiers in rotation, 3 labels (a store id unique to each site), and
/// GPUs on a third of them.
fn fleet(sites: usize, now: Timestamp) -> Vec<FederatedCluster> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    (0..sites)
        .map(|i| {
            let type_ = SignalType::ALL[i % SignalType::ALL.len()];
            let region = format!("r-{:03}", i % 50);
            let dark = region == "r-007";
            let mut fc = FederatedCluster::new(
                &format!("site-{i:06}"),
                FederatedClusterSpec {
                    environment: Environment::ALL[i % Environment::ALL.len()],
                    tier: Tier::ALL[i % Tier::ALL.len()],
                    region: Some(region),
                    ..Default::default()
                },
            );
            fc.metadata.labels = Some(BTreeMap::from([
                ("store".to_owned(), format!("s{i}")),
                ("zone".to_owned(), format!("z{}", rng.next(8))),
                ("team".to_owned(), format!("t{}", rng.next(4))),
            ]));
            let version = if type_ == SignalType::OomKilled && rng.next(10) < 9 {
                "0.1.0-rc".to_owned()
            } else {
                format!("0.{}.0", rng.next(3))
            };
            let values = |vs: Vec<String>| NodeValues {
                values: vs
                    .into_iter()
                    .map(|value| NodeValue { value, nodes: 2 })
                    .collect(),
                ..Default::default()
            };
            let kernel = rng.next(6);
            let node_info = NodeInfo {
                os_image: values(vec![format!("Ubuntu 2{}.04 LTS", rng.next(3))]),
                kernel_version: values(vec![
                    format!("6.{kernel}.0-generic"),
                    format!("6.{}.0-generic", (kernel + 1) % 6),
                ]),
                container_runtime_version: values(vec![format!(
                    "containerd://1.7.{}",
                    rng.next(3)
                )]),
                gpu_model: values(if i % 3 == 0 {
                    vec!["NVIDIA-A100-SXM4-80GB".to_owned()]
                } else {
                    vec![]
                }),
            };
            let workload = rng.next(200);
            let last = rng.next(600) as i64;
            let first = last + rng.next(86_400) as i64;
            let heard = if dark {
                now - SignedDuration::from_secs(3600)
            } else {
                now
            };
            fc.status = Some(FederatedClusterStatus {
                phase: Some(if dark {
                    Phase::Unreachable
                } else {
                    Phase::Connected
                }),
                last_heartbeat_time: Some(Time(heard)),
                observed_version: Some(version),
                kubernetes_version: Some(format!("v1.3{}.0", rng.next(3))),
                capacity: (i % 3 == 0).then(|| Capacity {
                    nodes: 3,
                    gpus_total: 4,
                    gpus_allocatable: 4,
                    gpus_by_vendor: BTreeMap::from([(
                        "nvidia.com/gpu".to_owned(),
                        GpuCount {
                            total: 4,
                            allocatable: 4,
                        },
                    )]),
                }),
                node_info: Some(node_info),
                signals: Some(vec![Signal {
                    type_,
                    severity: type_.default_severity(),
                    cluster: None,
                    namespace: format!("ns-{}", workload % 20),
                    workload: WorkloadRef::new("Deployment", format!("app-{workload}")),
                    message: None,
                    first_seen: Time(now - SignedDuration::from_secs(first)),
                    last_seen: Time(now - SignedDuration::from_secs(last)),
                    count: 1,
                }]),
                ..Default::default()
            });
            fc
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs: usize = args.first().map_or(5, |a| a.parse().expect("RUNS"));
    let now: Timestamp = "2026-12-01T12:00:00Z".parse().expect("time");
    println!(
        "| sites (1 signal each) | common factors ms | ns per site | correlate + cascades ms | correlations | cascades | outages | factors named |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for sites in [10_000, 100_000] {
        let fleet = fleet(sites, now);
        let t = Instant::now();
        let correlations = correlate(&fleet, &[], now, CorrelationConfig::default());
        let cascades = detect_cascades(&fleet, now, DEFAULT_LOOKBACK);
        let detect = t.elapsed().as_secs_f64();
        let mut summary = summarize(&fleet, correlations, cascades, now);
        let outages = grouped_outages(&fleet, &[], None, now, &OutageConfig::default());
        set_outages(&mut summary, outages);
        let mut best = f64::MAX;
        let mut named = 0;
        for _ in 0..runs {
            let mut s = summary.clone();
            let t = Instant::now();
            set_common_factors(&mut s, &fleet);
            best = best.min(t.elapsed().as_secs_f64());
            named = s
                .correlations
                .iter()
                .map(|c| c.common_factors.len())
                .chain(s.cascades.iter().map(|c| c.common_factors.len()))
                .chain(s.outages.iter().map(|o| o.common_factors.len()))
                .sum::<usize>();
        }
        println!(
            "| {sites} | {:.1} | {:.0} | {:.1} | {} | {} | {} | {named} |",
            best * 1e3,
            best * 1e9 / sites as f64,
            detect * 1e3,
            summary.correlations.len(),
            summary.cascades.len(),
            summary.outages.len(),
        );
    }
}
