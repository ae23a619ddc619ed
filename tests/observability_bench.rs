//! Benchmarks of the hub's observability surface (ignored by default; the
//! figures go to docs/observability.md, they are not asserted):
//!
//! ```text
//! cargo test --release --test integration observability_bench:: -- --ignored --nocapture --test-threads 1
//! ```
//!
//! - `metrics_scrape_10000_sites`: the hub's real `/metrics` HTTPS server
//!   (in process) with 10,000 sites in the gauges and a probe-duration
//!   histogram per site (the worst case: every site Pull), with and without
//!   the `cluster` label: bytes per scrape, encode time, scrape latency.
//! - `rest_clusters_5000_sites`: a real hub process over 5,000 sites on
//!   kube-sandbox: latency of `GET /api/v1/federation/clusters` against
//!   `kubectl fleet status -o json` on the same fleet.

use crate::support;

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use kube::api::{Api, PostParams};
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{FederatedCluster, FederatedClusterSpec};
use kubectl_fleet::operator::metrics::{Metrics, MetricsRole};
use kubectl_fleet::operator::server;
use support::*;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run explicitly, see the module docs"]
async fn metrics_scrape_10000_sites() {
    const SITES: usize = 10_000;
    let dir = TempDir::new("metrics-bench");
    let (cert, key, ca) = localhost_cert(&dir);
    let sites: Vec<FederatedCluster> = (0..SITES)
        .map(|i| {
            let mut s = FederatedCluster::test(&format!("site-{i:05}"))
                .connected()
                .with_region(["eu-west-1", "us-east-1", "ap-south-1"][i % 3]);
            if let Some(st) = s.status.as_mut() {
                st.node_count = Some(3);
            }
            s
        })
        .collect();
    for per_cluster in [true, false] {
        let metrics =
            Arc::new(Metrics::new(MetricsRole::Hub).with_per_cluster_histograms(per_cluster));
        metrics.set_fleet(&sites, 2, Some(true), jiff::Timestamp::now());
        for (i, s) in sites.iter().enumerate() {
            metrics.observe_health_check(s.site_name(), 0.01 + (i % 50) as f64 * 0.01);
        }
        let encode_start = Instant::now();
        let text = metrics.encode();
        let encode = encode_start.elapsed();
        let (tls, _) = server::tls_config(Some(&cert), Some(&key)).unwrap();
        let listener = server::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let limits = server::HttpLimits::default();
        let serving = tokio::spawn(server::serve(
            listener,
            Some(tls),
            server::with_metrics(
                axum::Router::new(),
                metrics.clone(),
                None,
                limits.response_slots(),
            ),
            limits.secure(None),
            stop_rx,
        ));
        let mut times = Vec::new();
        let mut bytes = 0;
        for _ in 0..20 {
            let t = Instant::now();
            let (code, body) = https_get(&addr, "/metrics", None, &ca).await;
            times.push(t.elapsed());
            assert_eq!(code, 200);
            bytes = body.len();
        }
        stop_tx.send_replace(true);
        serving.abort();
        eprintln!(
            "metrics, {SITES} sites, cluster label {}: {} series lines, {} bytes ({} encoded), encode {:?}, scrape median {:?} max {:?}",
            if per_cluster { "on" } else { "off" },
            text.lines().filter(|l| !l.starts_with('#')).count(),
            bytes,
            text.len(),
            encode,
            median(times.clone()),
            times.iter().max().unwrap(),
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run explicitly, see the module docs"]
async fn rest_clusters_5000_sites() {
    const SITES: usize = 5_000;
    let sb = Sandbox::start();
    let client = admin(&sb).await;
    install_crds(&client).await;
    ensure_namespace(&client, "fleet-system").await;
    let api: Api<FederatedCluster> = Api::all(client.clone());
    let created = Instant::now();
    futures::stream::iter(0..SITES)
        .map(|i| {
            let api = api.clone();
            async move {
                let spec = FederatedClusterSpec {
                    region: Some(["eu-west-1", "us-east-1"][i % 2].to_owned()),
                    ..FederatedClusterSpec::default()
                };
                api.create(
                    &PostParams::default(),
                    &FederatedCluster::new(&format!("site-{i:05}"), spec),
                )
                .await
                .unwrap();
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    eprintln!("created {SITES} sites in {:?}", created.elapsed());
    let token = reader_token(&client).await;
    let dir = TempDir::new("rest-bench");
    let kc = dir.join("admin.kubeconfig");
    sb.write_admin_kubeconfig(&kc).unwrap();
    let (cert, key, ca) = localhost_cert(&dir);
    let mut args = hub_args(&kc, "hub-bench", 1.0);
    args.extend([
        "--tls-cert-file".into(),
        cert.display().to_string(),
        "--tls-private-key-file".into(),
        key.display().to_string(),
    ]);
    let hub = Proc::spawn("hub", &operator_bin(), &args, dir.join("hub.log"));
    wait_until(Duration::from_secs(30), "hub serves", || async {
        hub.log_text().contains("hub started")
    })
    .await;
    let addr = logged_addr(&hub.log_text(), "serving HTTPS");
    // Every site judged (Pending written) and in the hub's cache.
    wait_until(Duration::from_secs(300), "all sites Pending", || async {
        let (code, body) = https_get(&addr, "/api/v1/federation/status", Some(&token), &ca).await;
        code == 200
            && serde_json::from_str::<serde_json::Value>(&body)
                .is_ok_and(|v| v["phases"]["pending"] == SITES as u64)
    })
    .await;
    let mut rest = Vec::new();
    let mut rest_bytes = 0;
    for _ in 0..10 {
        let t = Instant::now();
        let (code, body) = https_get(&addr, "/api/v1/federation/clusters", Some(&token), &ca).await;
        rest.push(t.elapsed());
        assert_eq!(code, 200);
        rest_bytes = body.len();
    }
    let mut filtered = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        let (code, _) = https_get(
            &addr,
            "/api/v1/federation/clusters?region=eu-west-1",
            Some(&token),
            &ca,
        )
        .await;
        filtered.push(t.elapsed());
        assert_eq!(code, 200);
    }
    let mut cli = Vec::new();
    let mut cli_bytes = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let out = Command::new(cli_bin())
            .arg("--kubeconfig")
            .arg(&kc)
            .args(["status", "-o", "json"])
            .env("KUBECACHEDIR", dir.join("kube-cache"))
            .output()
            .unwrap();
        cli.push(t.elapsed());
        assert!(out.status.success());
        cli_bytes = out.stdout.len();
    }
    eprintln!(
        "REST /clusters, {SITES} sites: median {:?} max {:?} ({rest_bytes} bytes); ?region= (2,500 sites) median {:?}; \
         kubectl fleet status -o json: median {:?} max {:?} ({cli_bytes} bytes)",
        median(rest.clone()),
        rest.iter().max().unwrap(),
        median(filtered),
        median(cli.clone()),
        cli.iter().max().unwrap(),
    );
}
