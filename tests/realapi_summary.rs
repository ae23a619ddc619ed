//! The hub's `FederationStatus` against the real Kubernetes API server and
//! etcd (docs/realapi.md), where an object past etcd's 1.5 MiB request
//! limit is refused: the summary the hub writes for a fleet-wide outage of
//! 100,000 sites is accepted, weighs under 256 KiB with the managedFields
//! the API server adds, and the hub's liveness record is accepted into the
//! same object after it; the unbounded summary older hubs wrote for
//! 20,000 such sites is refused, now by the schema's caps
//! (docs/scaling.md#the-size-of-federationstatus).
//!
//! Uses the server `tools/test.sh` starts (`REALAPI_KUBECONFIG`), or starts
//! one from `tools/realapi/build.sh`'s cache; `FLEET_SKIP_REALAPI=1` skips.

use crate::support::TempDir;

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResourceExt;
use kube::api::{Api, PostParams};
use kubectl_fleet::api::{
    FederatedCluster, FederationStatus, FederationStatusStatus, HubLiveness,
    MAX_FEDERATION_STATUS_BYTES, Phase,
};
use kubectl_fleet::fleet::fixtures::fixture_now;
use kubectl_fleet::k8s::federation_status::{
    create_federation_status, get_federation_status, record_hub_liveness, replace_federation_status,
};
use kubectl_fleet::operator::federation::{FederationConfig, next_summary};

/// The real server's admin kubeconfig YAML, or None (skipped).
fn real_kubeconfig() -> Option<String> {
    static REAL: OnceLock<Result<String, String>> = OnceLock::new();
    let got = REAL.get_or_init(|| {
        if let Some(path) = std::env::var_os("REALAPI_KUBECONFIG") {
            return std::fs::read_to_string(&path).map_err(|e| format!("REALAPI_KUBECONFIG: {e}"));
        }
        let start = concat!(env!("CARGO_MANIFEST_DIR"), "/tools/realapi/start.sh");
        // start.sh knows where the build puts the server (its name carries
        // a digest of its sources) and etcd.
        let check = std::process::Command::new("bash")
            .args([start, "--check"])
            .output()
            .map_err(|e| format!("tools/realapi/start.sh --check: {e}"))?;
        if !check.status.success() {
            return Err(format!(
                "{} (or set FLEET_SKIP_REALAPI=1)",
                String::from_utf8_lossy(&check.stderr).trim()
            ));
        }
        // Kept for the life of the test binary; the watcher stops the
        // servers when it exits.
        let dir = Box::leak(Box::new(TempDir::new("realapi")));
        let out = std::process::Command::new("bash")
            .arg(start)
            .arg(dir.path())
            .env("REALAPI_WATCH_PID", std::process::id().to_string())
            .output()
            .map_err(|e| format!("tools/realapi/start.sh: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "tools/realapi/start.sh failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        std::fs::read_to_string(dir.join("kubeconfig")).map_err(|e| e.to_string())
    });
    match got {
        Ok(kc) => Some(kc.clone()),
        Err(msg) if std::env::var("FLEET_SKIP_REALAPI").is_ok_and(|v| v == "1") => {
            eprintln!("skipped: {msg}");
            None
        }
        Err(msg) => panic!("{msg}"),
    }
}

/// An admin client of the real server with the FederationStatus CRD (as
/// the code generates it) installed and served.
async fn real_client() -> Option<kube::Client> {
    let kc = kube::config::Kubeconfig::from_yaml(&real_kubeconfig()?).unwrap();
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(cfg).unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = FederationStatus::crd();
    let name = crd.metadata.name.clone().unwrap();
    // A server shared by the run may hold an older version: replace it.
    match crds.create(&PostParams::default(), &crd).await {
        Ok(_) => {}
        Err(kube::Error::Api(e)) if e.code == 409 => loop {
            let mut current = crds.get(&name).await.unwrap();
            current.spec = crd.spec.clone();
            match crds.replace(&name, &PostParams::default(), &current).await {
                Ok(_) => break,
                Err(kube::Error::Api(e)) if e.code == 409 => continue,
                Err(e) => panic!("replacing CRD {name}: {e}"),
            }
        },
        Err(e) => panic!("creating CRD {name}: {e}"),
    }
    let fs: Api<FederationStatus> = Api::all(client.clone());
    let deadline = Instant::now() + Duration::from_secs(30);
    while fs.list(&Default::default()).await.is_err() {
        assert!(
            Instant::now() < deadline,
            "CRD {name} not served after 30 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Some(client)
}

/// `n` sites dark for two days in 20 regions, each with the signal its
/// edge reported before it went dark.
fn long_dark(n: usize) -> Vec<FederatedCluster> {
    use kubectl_fleet::api::{Signal, SignalType};
    (0..n)
        .map(|i| {
            FederatedCluster::test(&format!("site-{i:06}"))
                .with_region(&format!("region-{:02}", i % 20))
                .heartbeat_ago(2 * 86_400)
                .with_phase(Phase::Unreachable, 2 * 86_400 - 300)
                .with_signal(
                    Signal::test(SignalType::CrashLoopBackOff, "shop", "Deployment", "web")
                        .seen(2 * 86_400 + 600, 2 * 86_400),
                )
        })
        .collect()
}

/// Writes `status` into the singleton as the hub does (create, then a
/// resourceVersion-guarded replace of /status); the stored object.
async fn write(
    api: &Api<FederationStatus>,
    status: FederationStatusStatus,
) -> Result<FederationStatus, kube::Error> {
    for _ in 0..10 {
        let mut obj = match get_federation_status(api).await? {
            Some(obj) => obj,
            None => match create_federation_status(
                api,
                &FederationStatus::singleton(Default::default()),
            )
            .await
            {
                Ok(obj) => obj,
                Err(kube::Error::Api(e)) if e.code == 409 => continue,
                Err(e) => return Err(e),
            },
        };
        obj.status = Some(status.clone());
        match replace_federation_status(api, &obj).await {
            Err(kube::Error::Api(e)) if e.code == 409 => continue,
            other => return other,
        }
    }
    panic!("10 conflicts in a row writing FederationStatus fleet");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_of_a_100000_site_outage_is_accepted_and_the_liveness_record_after_it() {
    let Some(client) = real_client().await else {
        return;
    };
    let api: Api<FederationStatus> = Api::all(client);
    let cfg = FederationConfig::default();
    let now = fixture_now();

    // What a hub without bounds wrote for 20,000 such sites: refused (by
    // the schema's caps now; etcd's request limit refused it before them).
    let unbounded = next_summary(&long_dark(20_000), &[], now, &cfg).full;
    let mut all = unbounded.clone();
    all.disconnected_clusters = long_dark(20_000)
        .iter()
        .map(|s| kubectl_fleet::api::DisconnectedCluster {
            name: s.site_name().to_owned(),
            phase: Phase::Unreachable,
            last_seen: s
                .status
                .as_ref()
                .and_then(|st| st.heartbeat_on_hub_clock())
                .map(Time),
            reason: kubectl_fleet::fleet::summary::disconnect_reason(s, now),
        })
        .collect();
    let bytes = serde_json::to_vec(&FederationStatus::singleton(all.clone()))
        .unwrap()
        .len();
    assert!(bytes > 1536 * 1024, "{bytes}");
    let refused = write(&api, all).await;
    assert!(
        refused.is_err(),
        "a {bytes}-byte FederationStatus was accepted"
    );
    eprintln!("unbounded ({bytes} bytes): {}", refused.unwrap_err());

    // The hub's summary of 100,000: accepted, small with managedFields.
    let written = next_summary(&long_dark(100_000), &[], now, &cfg).written;
    let stored = write(&api, written)
        .await
        .expect("the bounded summary is accepted");
    let bytes = serde_json::to_vec(&stored).unwrap().len();
    eprintln!("stored FederationStatus fleet of 100,000 dark sites: {bytes} bytes");
    assert!(bytes <= MAX_FEDERATION_STATUS_BYTES, "{bytes}");
    let s = stored.status.unwrap();
    assert_eq!(s.disconnected_clusters_total, 100_000);
    assert_eq!(
        s.outages.iter().map(|o| o.clusters_total).sum::<i64>(),
        100_000
    );

    // The leader's liveness record goes into the same object.
    let record = HubLiveness {
        leader: "hub-0".into(),
        leader_since: Some(Time(now)),
        // Whole seconds, as the wire carries it.
        last_judgement_time: Time(
            jiff::Timestamp::from_second(jiff::Timestamp::now().as_second()).unwrap(),
        ),
        interval_seconds: 15,
    };
    record_hub_liveness(&api, &record)
        .await
        .expect("the liveness record is accepted");
    let read = get_federation_status(&api).await.unwrap().unwrap();
    assert_eq!(read.status.unwrap().hub, Some(record));
}
