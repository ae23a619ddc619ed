//! Correlation and cascade detection over many signals (benchmark P4):
//! 1,000 sites sharing 10k, 100k and 1M signals, as the hub folds them into
//! `FederationStatus`, and what each incident's sites have in common
//! (`fleet::factors`, the last column: `examples/factors_bench.rs` times it
//! over 100,000 sites). Prints a Markdown table; nothing is asserted.
//!
//! `cargo run --release --example correlation_bench -- [SITES] [RUNS]`
//! (defaults: 1000 sites, best of 5 runs per size).

use std::time::Instant;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kubectl_fleet::api::{
    Environment, FederatedCluster, FederatedClusterSpec, FederatedClusterStatus, Signal,
    SignalType, Tier, WorkloadRef,
};
use kubectl_fleet::fleet::correlation::{
    CorrelationConfig, DEFAULT_LOOKBACK, correlate, detect_cascades,
};
use kubectl_fleet::fleet::factors::set_common_factors;
use kubectl_fleet::fleet::summary::summarize;

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

/// `sites` sites with `signals` signals spread over them: every signal type,
/// 200 workloads in 20 namespaces, first seen within the last 24 h and last
/// seen within the last 30 min, environments and tiers in rotation.
fn fleet(sites: usize, signals: usize, now: Timestamp) -> Vec<FederatedCluster> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let envs = Environment::ALL;
    let tiers = Tier::ALL;
    let per_site = signals / sites;
    (0..sites)
        .map(|i| {
            let mut fc = FederatedCluster::new(
                &format!("site-{i:05}"),
                FederatedClusterSpec {
                    environment: envs[i % envs.len()],
                    tier: tiers[i % tiers.len()],
                    ..Default::default()
                },
            );
            let list = (0..per_site)
                .map(|_| {
                    let type_ = SignalType::ALL[rng.next(SignalType::ALL.len() as u64) as usize];
                    let workload = rng.next(200);
                    let last = rng.next(1800) as i64;
                    let first = last + rng.next(86_400) as i64;
                    Signal {
                        type_,
                        severity: type_.default_severity(),
                        cluster: None,
                        namespace: format!("ns-{}", workload % 20),
                        workload: WorkloadRef::new("Deployment", format!("app-{workload}")),
                        message: None,
                        first_seen: Time(now - SignedDuration::from_secs(first)),
                        last_seen: Time(now - SignedDuration::from_secs(last)),
                        count: 1,
                    }
                })
                .collect();
            // Heard from now: a site's signals are evidence only as long as
            // its heartbeat is recent (docs/reliability.md); without one the
            // hub, and this benchmark, would correlate nothing.
            fc.status = Some(FederatedClusterStatus {
                last_heartbeat_time: Some(Time(now)),
                signals: Some(list),
                ..Default::default()
            });
            fc
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sites: usize = args.first().map_or(1000, |a| a.parse().expect("SITES"));
    let runs: usize = args.get(1).map_or(5, |a| a.parse().expect("RUNS"));
    let now: Timestamp = "2026-12-01T12:00:00Z".parse().expect("time");
    println!(
        "| signals ({sites} sites) | correlate ms | cascades ms | total ms | ns per signal | correlations | cascades | common factors ms |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for signals in [10_000, 100_000, 1_000_000] {
        let fleet = fleet(sites, signals, now);
        let (mut best_c, mut best_k, mut best_f) = (f64::MAX, f64::MAX, f64::MAX);
        let (mut n_c, mut n_k) = (0, 0);
        for _ in 0..runs {
            let t = Instant::now();
            let correlations = correlate(&fleet, &[], now, CorrelationConfig::default());
            let c = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let cascades = detect_cascades(&fleet, now, DEFAULT_LOOKBACK);
            let k = t.elapsed().as_secs_f64();
            best_c = best_c.min(c);
            best_k = best_k.min(k);
            n_c = correlations.len();
            n_k = cascades.len();
            let mut summary = summarize(&fleet, correlations, cascades, now);
            let t = Instant::now();
            set_common_factors(&mut summary, &fleet);
            best_f = best_f.min(t.elapsed().as_secs_f64());
        }
        let total = best_c + best_k;
        println!(
            "| {signals} | {:.1} | {:.1} | {:.1} | {:.0} | {n_c} | {n_k} | {:.1} |",
            best_c * 1e3,
            best_k * 1e3,
            total * 1e3,
            total * 1e9 / signals as f64,
            best_f * 1e3,
        );
    }
}
