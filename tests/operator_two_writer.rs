//! The two-writer invariant (docs/architecture.md#who-writes-which-status-key) against kube-sandbox: the edge's
//! merge patches and the hub's resourceVersion-guarded status replaces never
//! lose each other's fields.

use crate::support;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use kube::api::{Api, Patch, PatchParams};
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{
    CONDITION_CONNECTED, CONDITION_CREDENTIAL_EXPIRING, Environment, FederatedCluster,
    HUB_OWNED_STATUS_KEYS, Phase,
};
use kubectl_fleet::operator::edge::{Edge, EdgeConfig};
use kubectl_fleet::operator::hub::{Hub, HubConfig};
use serde_json::json;
use support::*;
use tokio::sync::watch;

fn edge_config(site: &str, hub_kc: &std::path::Path) -> EdgeConfig {
    EdgeConfig {
        site: site.to_owned(),
        hub_kubeconfig: hub_kc.to_owned(),
        hub_kubeconfig_secret: None,
        journal: None,
        clock_offset: SignedDuration::ZERO,
        interval_scale: 1.0,
        auto_rotate: false,
        version: env!("CARGO_PKG_VERSION").to_owned(),
    }
}

on_both_lanes! {
multi_thread async fn hub_phase_and_conditions_survive_edge_ticks(lane) {
    let hub_sb = lane.sandbox();
    let member_sb = Sandbox::start();
    let admin_c = admin(&hub_sb).await;
    install_crds(&admin_c).await;
    create_site(&admin_c, "site-a", 30, Environment::Production).await;
    let member = admin(&member_sb).await;
    seed_member(
        &member,
        &[NodeSeed {
            name: "gpu-1",
            gpus: &[("nvidia.com/gpu", 8, 6)],
            ready: true,
        }],
        &[FailingPod {
            namespace: "shop",
            deployment: "checkout",
            reason: "CrashLoopBackOff",
        }],
    )
    .await;
    let dir = TempDir::new("seed");
    let hub_kc = dir.join("hub.kubeconfig");
    let kc = mint_site_kubeconfig(&hub_sb, &admin_c, "site-a", Duration::from_secs(3600)).await;
    write_private(&hub_kc, &kc);

    // Seed: the hub judges a heartbeat, writing phase and conditions.
    let api: Api<FederatedCluster> = Api::all(admin_c.clone());
    api.patch_status(
        "site-a",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"lastHeartbeatTime": Timestamp::now().to_string()}})),
    )
    .await
    .unwrap();
    let (_lead_tx, lead_rx) = watch::channel(true);
    let hub = Hub::new(api.clone(), HubConfig::default(), lead_rx);
    let r = hub
        .reconcile_site(&api.get("site-a").await.unwrap())
        .await
        .unwrap();
    assert!(r.wrote);
    assert_eq!(r.phase, Phase::Connected);
    let seeded = api.get("site-a").await.unwrap().status.unwrap();
    let seeded_conditions = seeded.conditions.clone().unwrap();
    assert!(seeded.condition(CONDITION_CONNECTED).is_some());
    assert!(seeded.condition(CONDITION_CREDENTIAL_EXPIRING).is_some());

    // The edge, with only its minted token, reports several times, one
    // second apart on its own (stepped) clock.
    let start = Timestamp::from_second(Timestamp::now().as_second()).unwrap();
    let ticks = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(0));
    let clock = {
        let ticks = ticks.clone();
        std::sync::Arc::new(move || {
            start + SignedDuration::from_secs(ticks.load(std::sync::atomic::Ordering::SeqCst))
        })
    };
    let mut edge = Edge::new(edge_config("site-a", &hub_kc), member.clone()).with_clock(clock);
    let mut patches = Vec::new();
    for i in 0..4 {
        ticks.store(i, std::sync::atomic::Ordering::SeqCst);
        let t = edge.tick().await;
        assert!(t.error.is_none(), "{:?}", t.error);
        assert_eq!(
            t.interval,
            Some(Duration::from_secs(30)),
            "cadence read from the object"
        );
        let sent = t.sent.expect("accepted");
        assert_eq!(
            sent["status"]["lastHeartbeatTime"],
            (start + SignedDuration::from_secs(i)).to_string(),
            "the heartbeat is the edge's clock"
        );
        patches.push(sent);
    }
    for p in &patches {
        for k in HUB_OWNED_STATUS_KEYS {
            assert!(
                p["status"].get(*k).is_none(),
                "hub-owned {k} in edge patch {p}"
            );
        }
    }
    let first = &patches[0]["status"];
    assert_eq!(first["nodeCount"], 1);
    assert_eq!(
        first["capacity"]["gpusByVendor"]["nvidia.com/gpu"]["total"],
        8
    );
    assert_eq!(first["observedVersion"], env!("CARGO_PKG_VERSION"));
    assert_eq!(first["signals"][0]["type"], "CrashLoopBackOff");
    assert_eq!(first["signals"][0]["workload"]["name"], "checkout");
    // Nothing changed, so heartbeat only: its time, and (from the second
    // report on, when it differs) the previous report's round trip, which
    // the hub observes as the site's health check.
    assert!(
        patches[1]["status"]["lastReportDurationMilliseconds"].as_i64() >= Some(5),
        "{}",
        patches[1]
    );
    for later in &patches[1..] {
        let keys: Vec<&String> = later["status"].as_object().unwrap().keys().collect();
        assert!(
            keys.iter()
                .all(|k| *k == "lastHeartbeatTime" || *k == "lastReportDurationMilliseconds")
                && keys.contains(&&"lastHeartbeatTime".to_owned()),
            "nothing changed, so heartbeat only: {later}"
        );
    }
    assert_eq!(edge.stats.heartbeat_only, 3);

    let after = api.get("site-a").await.unwrap().status.unwrap();
    assert_eq!(
        after.phase,
        Some(Phase::Connected),
        "phase survived the edge"
    );
    assert_eq!(after.phase_transition_time, seeded.phase_transition_time);
    assert_eq!(
        after.conditions.unwrap(),
        seeded_conditions,
        "conditions survived"
    );
    assert_eq!(after.node_count, Some(1), "edge fields landed");
    assert_eq!(after.capacity.unwrap().gpus_allocatable, 6);
}
}

/// A tiny deterministic generator for interleavings.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

on_both_lanes! {
multi_thread async fn thousands_of_interleaved_writes_lose_nothing(lane) {
    const SITES: usize = 6;
    const PATCHES_PER_SITE: i64 = 600;
    let sb = lane.sandbox();
    let admin_c = admin(&sb).await;
    install_crds(&admin_c).await;
    let t0 = Timestamp::from_second(Timestamp::now().as_second()).unwrap();
    // Simulated seconds since t0: the hub judges by it and the edges stamp
    // heartbeats with it, so hours of staleness pass in seconds.
    let sim = Arc::new(AtomicI64::new(0));
    let sim_now = {
        let sim = sim.clone();
        move || t0 + SignedDuration::from_secs(sim.load(Ordering::SeqCst))
    };
    let mut names = Vec::new();
    let mut edge_clients = Vec::new();
    for i in 0..SITES {
        let name = format!("site-{i}");
        create_site(&admin_c, &name, 10, Environment::Production).await;
        let kc = mint_site_kubeconfig(&sb, &admin_c, &name, Duration::from_secs(3600)).await;
        edge_clients.push(client_from(&kc).await);
        names.push(name);
    }
    let acked: Arc<Vec<AtomicI64>> = Arc::new((0..SITES).map(|_| AtomicI64::new(-1)).collect());

    // Edges: each patch sets nodeCount = n (monotonic); in "alive" stretches
    // it also carries a heartbeat, in "silent" stretches not, so the hub sees
    // sites go Stale and Unreachable and come back. Each edge uses only its
    // own token.
    let mut edges = Vec::new();
    for (i, client) in edge_clients.into_iter().enumerate() {
        let name = names[i].clone();
        let acked = acked.clone();
        let sim_now = sim_now.clone();
        edges.push(tokio::spawn(async move {
            let api: Api<FederatedCluster> = Api::all(client);
            let mut rng = Rng(0x1234_5678 + i as u64);
            let mut last_hb = None;
            let mut alive = true;
            let mut stretch = 0;
            for n in 0..PATCHES_PER_SITE {
                if stretch == 0 {
                    alive = !alive;
                    stretch = 10 + rng.below(60);
                }
                stretch -= 1;
                let mut status = json!({"nodeCount": n});
                if alive {
                    let hb = sim_now().to_string();
                    status["lastHeartbeatTime"] = json!(hb);
                    last_hb = Some(hb);
                }
                api.patch_status(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"status": status})),
                )
                .await
                .unwrap();
                acked[i].store(n, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(3 + rng.below(8))).await;
            }
            last_hb
        }));
    }

    // The hub clock jumps forward while everything runs, across the 3·I
    // and 10·I thresholds.
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let ticker = {
        let (sim, done) = (sim.clone(), done.clone());
        tokio::spawn(async move {
            let mut rng = Rng(0xfeed_f00d);
            while !done.load(Ordering::SeqCst) {
                sim.fetch_add(rng.below(50) as i64, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    // The hub reconciles all sites concurrently, as its controller does,
    // from deliberately stale reads so that edge patches land between its
    // read and its write.
    let api: Api<FederatedCluster> = Api::all(admin_c.clone());
    let (_lead_tx, lead_rx) = watch::channel(true);
    let hub = Arc::new(
        Hub::new(api.clone(), HubConfig::default(), lead_rx).with_clock(Arc::new(sim_now.clone())),
    );
    let mut hubs = Vec::new();
    for (i, name) in names.iter().cloned().enumerate() {
        let (hub, api, acked, done) = (hub.clone(), api.clone(), acked.clone(), done.clone());
        hubs.push(tokio::spawn(async move {
            let mut rng = Rng(0xdead_beef + i as u64);
            let mut last_written = None;
            let mut transitions = 0u64;
            let mut phases: HashMap<Phase, u64> = HashMap::new();
            while !done.load(Ordering::SeqCst) {
                let before = acked[i].load(Ordering::SeqCst);
                let stale = api.get(&name).await.unwrap();
                tokio::time::sleep(Duration::from_millis(rng.below(3))).await;
                let r = hub.reconcile_site(&stale).await.unwrap();
                if r.wrote {
                    transitions += 1;
                    *phases.entry(r.phase).or_default() += 1;
                    last_written = Some(r.phase);
                    let st = r.written.unwrap().status.unwrap();
                    assert!(
                        st.node_count.unwrap_or(-1) >= before,
                        "hub write reverted nodeCount of {name}: {:?} < {before}",
                        st.node_count
                    );
                }
            }
            (last_written, transitions, phases)
        }));
    }
    let mut last_hbs = Vec::new();
    for e in edges {
        last_hbs.push(e.await.unwrap());
    }
    done.store(true, Ordering::SeqCst);
    ticker.await.unwrap();
    let mut last_written: HashMap<String, Phase> = HashMap::new();
    let mut transitions = 0;
    let mut phases_seen: HashMap<Phase, u64> = HashMap::new();
    for (name, h) in names.iter().zip(hubs) {
        let (last, t, phases) = h.await.unwrap();
        transitions += t;
        for (p, n) in phases {
            *phases_seen.entry(p).or_default() += n;
        }
        if let Some(p) = last {
            last_written.insert(name.clone(), p);
        }
    }
    for (i, name) in names.iter().enumerate() {
        let st = api.get(name).await.unwrap().status.unwrap();
        assert_eq!(
            st.phase,
            last_written.get(name).copied(),
            "{name}: phase lost"
        );
        assert_eq!(
            st.node_count,
            Some(PATCHES_PER_SITE - 1),
            "{name}: edge field lost"
        );
        assert_eq!(
            st.last_heartbeat_time.map(|t| t.0.to_string()),
            last_hbs[i].clone(),
            "{name}: heartbeat lost"
        );
    }
    let (reconciles, writes, conflicts, errors) = hub.metrics.snapshot();
    eprintln!(
        "edge patches: {}, hub reconciles: {reconciles}, transitions written: {writes}, \
         409s re-read and retried: {conflicts}, phases written: {phases_seen:?}",
        SITES as i64 * PATCHES_PER_SITE
    );
    assert_eq!(writes, transitions);
    assert_eq!(errors, 0);
    assert!(
        transitions >= 100,
        "too few hub transitions to mean anything: {transitions}"
    );
    assert!(
        conflicts >= 20,
        "the interleaving produced too few conflicts: {conflicts}"
    );
    for p in [Phase::Connected, Phase::Stale, Phase::Unreachable] {
        assert!(
            phases_seen.get(&p).copied().unwrap_or(0) > 0,
            "never wrote {p}"
        );
    }
}
}
