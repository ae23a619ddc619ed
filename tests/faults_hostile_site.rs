//! A hostile site: authenticated with ONLY the token `register`
//! minted for it, a site writes terminal escape sequences, text at every
//! cap, a heartbeat from the future and duplicate signals into its own
//! status, and tries a 200 KB message. The API server refuses what is over
//! the caps, and the shipped CRD refuses the escapes and the counts past
//! its maximums; through the CRD a hub installed before then holds, which
//! takes them, a running hub operator keeps judging every site, and an
//! admin reading the fleet through the real `kubectl fleet …` sees the
//! hostile text escaped and cut in tables, exact in `-o json`.

use crate::support;

use std::time::Duration;

use kube::api::{Api, Patch, PatchParams};
use kubectl_fleet::api::{
    FederatedCluster, MAX_MESSAGE_CHARS, MAX_SIGNALS, MAX_VERSION_CHARS, Phase,
};
use kubectl_fleet::operator;
use serde_json::{Value, json};
use support::{Hub, client_from_yaml, hub_operator_args, shell, status_code};
use tokio::sync::watch;

/// Clear the screen, set the window title (OSC … BEL), turn text red.
const ESC: &str = "\u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}[31m";

fn hostile_signal(i: usize, message: &str) -> Value {
    json!({
        "type": "CrashLoopBackOff", "severity": "high",
        "namespace": "shop", "workload": {"kind": "Deployment", "name": format!("web-{}", i / 2)},
        "message": message,
        // In the future, as a site's clock or a liar would write it.
        "firstSeen": "2099-01-01T00:00:00Z", "lastSeen": "2099-01-01T00:00:00Z",
        "count": i64::MAX,
    })
}

/// `MAX_SIGNALS` signals, each workload twice (duplicates the edge would
/// never write), every message at the cap and starting with escapes.
fn hostile_status() -> Value {
    let message: String = format!("{ESC}{}", "A".repeat(MAX_MESSAGE_CHARS))
        .chars()
        .take(MAX_MESSAGE_CHARS)
        .collect();
    let version: String = format!("v1.33{ESC}{}", "9".repeat(MAX_VERSION_CHARS))
        .chars()
        .take(MAX_VERSION_CHARS)
        .collect();
    json!({"status": {
        "lastHeartbeatTime": "2099-01-01T00:00:00Z",
        "kubernetesVersion": version,
        "observedVersion": format!("0.1{ESC}"),
        "nodeCount": 3,
        "capacity": {"nodes": 3, "gpusTotal": i64::MAX, "gpusAllocatable": i64::MAX,
                     "gpusByVendor": {format!("evil.com/gpu{ESC}"): {"total": i64::MAX, "allocatable": i64::MAX}}},
        "signals": (0..MAX_SIGNALS).map(|i| hostile_signal(i, &message)).collect::<Vec<_>>(),
    }})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_site_cannot_hurt_the_hub_or_the_admins_terminal() {
    let hub = Hub::new();
    let evil = hub.register("evil", &["--heartbeat-interval", "10"]);
    let good = hub.register("good", &["--heartbeat-interval", "10"]);
    let evil_sites: Api<FederatedCluster> =
        Api::all(client_from_yaml(evil["config"].as_str().unwrap()).await);
    let good_sites: Api<FederatedCluster> =
        Api::all(client_from_yaml(good["config"].as_str().unwrap()).await);
    let merge = PatchParams::default();

    // Over the caps: refused whole, nothing of it stored.
    let huge = json!({"status": {
        "kubernetesVersion": "v1.33.0",
        "signals": [hostile_signal(0, &"B".repeat(200 * 1024))],
    }});
    assert_eq!(
        status_code(
            evil_sites
                .patch_status("evil", &merge, &Patch::Merge(&huge))
                .await
        ),
        422
    );
    let stored = evil_sites.get_status("evil").await.unwrap();
    assert!(stored.status.is_none_or(|s| s.kubernetes_version.is_none()));

    // The CRD refuses escapes and counts past the maximums in a site's
    // status (docs/reliability.md#what-the-crd-refuses)...
    let hostile = hostile_status();
    assert_eq!(
        status_code(
            evil_sites
                .patch_status("evil", &merge, &Patch::Merge(&hostile))
                .await
        ),
        422
    );
    // ...but a hub installed before it did holds a CRD that takes them,
    // and an object stored then keeps them: the views must stay safe.
    support::put_crds(&hub.admin().await, &support::crds_before_the_door_closed()).await;
    evil_sites
        .patch_status("evil", &merge, &Patch::Merge(&hostile))
        .await
        .expect("a site may write its own status up to the caps of that CRD");

    // The hub judges both sites while the hostile one is at its caps.
    let (stop, stopped) = watch::channel(false);
    let hub_task = tokio::spawn(operator::run_until(
        hub_operator_args(&hub.kubeconfig, 0.1),
        stopped,
    ));
    let admin: Api<FederatedCluster> = Api::all(hub.admin().await);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let heartbeat =
            json!({"status": {"lastHeartbeatTime": jiff::Timestamp::now().to_string()}});
        good_sites
            .patch_status("good", &merge, &Patch::Merge(&heartbeat))
            .await
            .unwrap();
        let phases: Vec<Option<Phase>> = futures::future::join_all(["good", "evil"].map(|n| {
            let admin = admin.clone();
            async move { admin.get(n).await.unwrap().phase() }
        }))
        .await;
        if phases == [Some(Phase::Connected), Some(Phase::Connected)] {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the hub did not judge both sites Connected: {phases:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    stop.send_replace(true);
    hub_task.await.unwrap().expect("hub stops cleanly");

    // The admin's views, through the real kubectl.
    let wide = shell(&hub, "kubectl fleet status -o wide").ok().stdout;
    let incidents = shell(&hub, "kubectl fleet incidents").ok().stdout;
    for out in [&wide, &incidents] {
        assert!(
            !out.contains(['\u{1b}', '\u{7}']),
            "raw escape reached the terminal:\n{out}"
        );
        assert!(out.contains(r"\x1b[2J\x1b]0;pwned\x07\x1b[31m"), "{out}");
        assert!(out.lines().all(|l| l.chars().count() < 1000), "{out}");
    }
    let evil_row = wide.lines().find(|l| l.starts_with("evil ")).unwrap();
    assert!(evil_row.contains(r"v1.33\x1b[2J"), "{evil_row}");
    assert!(
        evil_row.contains('…'),
        "the long version is cut: {evil_row}"
    );
    assert!(
        wide.lines()
            .any(|l| l.starts_with("good ") && l.contains("Connected"))
    );
    let signal_rows: Vec<&str> = incidents
        .lines()
        .filter(|l| l.starts_with("evil "))
        .collect();
    assert_eq!(signal_rows.len(), MAX_SIGNALS, "{incidents}");
    assert!(
        signal_rows.iter().all(|l| l.ends_with("AAA…")),
        "{incidents}"
    );

    // Scripts get the exact bytes.
    let json = shell(&hub, "kubectl fleet incidents -o json").ok().json();
    let messages: Vec<&str> = json["signals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages.len(), MAX_SIGNALS);
    let written = hostile["status"]["signals"][0]["message"].as_str().unwrap();
    assert!(messages.iter().all(|m| *m == written));
    let status = shell(&hub, "kubectl fleet status -o json").ok().json();
    let evil_json = status["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "evil")
        .unwrap()
        .clone();
    assert_eq!(
        evil_json["kubernetesVersion"], hostile["status"]["kubernetesVersion"],
        "{evil_json}"
    );
}
