//! Sandbox benchmark: how fast a list of many custom objects is and how
//! many status merge-PATCHes per second the sandbox sustains, so later
//! benchmarks know whether the sandbox is their bottleneck.
//!
//! `cargo run --release -p kube-sandbox --example bench -- [OBJECTS] [CLIENTS] [SECONDS]`
//! (defaults: 10000 objects, 16 clients, 10 seconds). Figures are printed
//! as a Markdown table for `kube-sandbox/BENCHMARKS.md`.

use futures::StreamExt;
use kube::api::{
    ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
};
use kube::{Api, Client};
use kube_sandbox::Sandbox;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const GROUP: &str = "federation.kubectl-fleet.dev";

async fn client(sb: &Sandbox) -> anyhow::Result<Client> {
    let kc = kube::config::Kubeconfig::from_yaml(&sb.admin_kubeconfig())?;
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?;
    Ok(Client::try_from(cfg)?)
}

fn crd() -> serde_json::Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("federatedclusters.{GROUP}")},
        "spec": {
            "group": GROUP, "scope": "Cluster",
            "names": {"plural": "federatedclusters", "kind": "FederatedCluster", "shortNames": ["fc"]},
            "versions": [{
                "name": "v1alpha1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "region": {"type": "string"},
                        "tier": {"type": "string", "enum": ["critical", "standard", "non-critical"]},
                        "heartbeatIntervalSeconds": {"type": "integer", "minimum": 10, "maximum": 3600}}},
                    "status": {"type": "object", "properties": {
                        "phase": {"type": "string"},
                        "lastHeartbeatTime": {"type": "string", "format": "date-time"},
                        "nodeCount": {"type": "integer"},
                        "observedVersion": {"type": "string"}}}}}}
            }]
        }
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let objects: usize = args
        .first()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(10_000);
    let clients: usize = args.get(1).map(|a| a.parse()).transpose()?.unwrap_or(16);
    let seconds: u64 = args.get(2).map(|a| a.parse()).transpose()?.unwrap_or(10);

    let sb = Sandbox::start();
    let admin = client(&sb).await?;
    let crds: Api<DynamicObject> = Api::all_with(
        admin.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    );
    crds.create(&PostParams::default(), &serde_json::from_value(crd())?)
        .await?;
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(GROUP, "v1alpha1", "FederatedCluster"),
        "federatedclusters",
    );
    let sites: Api<DynamicObject> = Api::all_with(admin.clone(), &ar);

    let started = Instant::now();
    futures::stream::iter(0..objects)
        .map(|i| {
            let sites = sites.clone();
            async move {
                let obj: DynamicObject = serde_json::from_value(json!({
                    "apiVersion": format!("{GROUP}/v1alpha1"), "kind": "FederatedCluster",
                    "metadata": {"name": format!("site-{i:05}"), "labels": {"tier": "standard"}},
                    "spec": {"region": "us-east-1", "tier": "standard", "heartbeatIntervalSeconds": 30}
                }))
                .expect("valid object");
                sites.create(&PostParams::default(), &obj).await.map(|_| ())
            }
        })
        .buffer_unordered(clients)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let create_secs = started.elapsed().as_secs_f64();

    // Full list, raw bytes as a client receives them.
    let mut list_times = Vec::new();
    let mut list_bytes = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let req = hyper::Request::get(format!("/apis/{GROUP}/v1alpha1/federatedclusters"))
            .body(Vec::new())?;
        let body = admin.request_text(req).await?;
        list_times.push(t.elapsed().as_secs_f64() * 1000.0);
        list_bytes = body.len();
    }
    list_times.sort_by(f64::total_cmp);
    let t = Instant::now();
    let typed = sites.list(&ListParams::default()).await?;
    let typed_ms = t.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(typed.items.len(), objects);
    let t = Instant::now();
    let mut pages = 0;
    let mut token: Option<String> = None;
    loop {
        let mut lp = ListParams::default().limit(500);
        if let Some(c) = &token {
            lp = lp.continue_token(c);
        }
        let page = sites.list(&lp).await?;
        pages += 1;
        token = page.metadata.continue_.filter(|c| !c.is_empty());
        if token.is_none() {
            break;
        }
    }
    let paged_ms = t.elapsed().as_secs_f64() * 1000.0;

    // Sustained status merge-PATCH (edge heartbeats) with N clients.
    let done = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut latencies = Vec::new();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let sites = sites.clone();
        let done = done.clone();
        let errors = errors.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut i = c;
            while Instant::now() < deadline {
                let name = format!("site-{:05}", i % objects);
                let patch = json!({"status": {"lastHeartbeatTime": jiff::Timestamp::now().to_string(), "nodeCount": i}});
                let t = Instant::now();
                match sites
                    .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                {
                    Ok(_) => {
                        done.fetch_add(1, Ordering::Relaxed);
                        lat.push(t.elapsed().as_secs_f64() * 1000.0);
                    }
                    Err(_) => {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
                i += clients;
            }
            lat
        }));
    }
    for t in tasks {
        latencies.extend(t.await?);
    }
    latencies.sort_by(f64::total_cmp);
    let pct = |p: f64| latencies[((latencies.len() as f64 - 1.0) * p) as usize];
    let patches = done.load(Ordering::Relaxed);
    let rate = patches as f64 / seconds as f64;

    println!("| measurement | result |");
    println!("| --- | --- |");
    println!(
        "| create {objects} objects ({clients} clients) | {create_secs:.2} s ({:.0}/s) |",
        objects as f64 / create_secs
    );
    println!(
        "| list {objects} objects, raw JSON (median of 5) | {:.1} ms, {:.1} MiB |",
        list_times[2],
        list_bytes as f64 / 1048576.0
    );
    println!("| list {objects} objects, kube-rs typed decode | {typed_ms:.1} ms |");
    println!("| list {objects} objects in pages of 500 ({pages} requests) | {paged_ms:.1} ms |");
    println!(
        "| status merge-PATCH, {clients} clients, {seconds} s | {rate:.0}/s sustained ({patches} ok, {} errors) |",
        errors.load(Ordering::Relaxed)
    );
    println!(
        "| PATCH latency p50 / p99 | {:.2} ms / {:.2} ms |",
        pct(0.5),
        pct(0.99)
    );
    sb.shutdown();
    Ok(())
}
