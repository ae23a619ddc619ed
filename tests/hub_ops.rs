//! Operating many sites from the hub, through the real hub
//! binary with the RBAC `kubectl fleet install` ships, the real `kubectl`
//! and the hub's `/metrics`: three sites of one region going dark make one
//! grouped outage (FederationStatus, metric) with a stable id while it
//! lasts, gone when they come back; a site in a maintenance window is still
//! judged but is neither listed as disconnected nor part of the outage, and
//! its series carry the maintenance marker the per-site alert excludes.
//!
//! Intervals: `heartbeatIntervalSeconds: 10` scaled by 0.1, so I = 1 s:
//! Stale after 3 s without a heartbeat, Unreachable after 10 s.

use crate::support;

use std::path::Path;
use std::time::Duration;

use kube::api::{Api, Patch, PatchParams};
use kubectl_fleet::api::{FederatedCluster, Phase};
use serde_json::{Value, json};
use support::*;

const SCALE: f64 = 0.1;

/// `kubectl ARGS…` (the real one) against the hub; stdout, or a panic
/// with stderr.
fn kubectl(hub_kc: &Path, args: &[&str]) -> String {
    Kubectl::new(hub_kc).args(args).ok().stdout
}

/// `status` of the FederationStatus, as the real kubectl reads it.
fn fleet_status(hub_kc: &Path) -> Value {
    let out = kubectl(
        hub_kc,
        &[
            "get",
            "federationstatus",
            "fleet",
            "-o",
            "json",
            "--ignore-not-found",
        ],
    );
    if out.trim().is_empty() {
        return Value::Null;
    }
    serde_json::from_str::<Value>(&out).unwrap()["status"].clone()
}

/// Heartbeats `sites` every half second until dropped.
struct Heartbeats(tokio::task::JoinHandle<()>);

impl Heartbeats {
    fn start(api: Api<FederatedCluster>, sites: &[&str]) -> Self {
        let sites: Vec<String> = sites.iter().map(|s| (*s).to_owned()).collect();
        Heartbeats(tokio::spawn(async move {
            loop {
                for site in &sites {
                    let now = jiff::Timestamp::now().to_string();
                    let _ = api
                        .patch_status(
                            site,
                            &PatchParams::default(),
                            &Patch::Merge(json!({"status": {"lastHeartbeatTime": now}})),
                        )
                        .await;
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }))
    }
}

impl Drop for Heartbeats {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn phase(api: &Api<FederatedCluster>, site: &str) -> Option<Phase> {
    api.get(site).await.ok().and_then(|fc| fc.phase())
}

fn outage_ids(status: &Value) -> Vec<String> {
    status["outages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| o["id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

on_both_lanes! {
multi_thread async fn a_region_going_dark_is_one_outage_and_a_site_in_maintenance_is_not_counted(lane) {
    let dir = TempDir::new("hubops");
    let hub_sb = lane.sandbox();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let eu = ["eu-1", "eu-2", "eu-3"];
    for s in eu.iter().chain(&["eu-4"]) {
        fleet_register(
            &hub_kc,
            s,
            10,
            &dir.join(&format!("{s}.kubeconfig")),
            &["--region", "eu-west"],
        );
    }
    fleet_register(
        &hub_kc,
        "us-1",
        10,
        &dir.join("us-1.kubeconfig"),
        &["--region", "us-east"],
    );
    // eu-4 is in a maintenance window for the next hour.
    let until = (jiff::Timestamp::now() + jiff::SignedDuration::from_secs(3600)).to_string();
    kubectl(
        &hub_kc,
        &[
            "patch",
            "federatedcluster",
            "eu-4",
            "--type",
            "merge",
            "-p",
            &json!({"spec": {"maintenance": {"until": until, "reason": "disk swap"}}}).to_string(),
        ],
    );
    let admin_c = admin(&hub_sb).await;
    let api: Api<FederatedCluster> = Api::all(admin_c.clone());
    let all = ["eu-1", "eu-2", "eu-3", "eu-4", "us-1"];
    let beats = Heartbeats::start(api.clone(), &all);
    let reader = reader_token(&admin_c).await;
    let (cert, key, ca) = localhost_cert(&dir);
    let operator_kc = hub_operator_kubeconfig(&hub_sb, &dir).await;
    let mut args = hub_args(&operator_kc, "hub-a", SCALE);
    args.extend([
        "--tls-cert-file".into(),
        cert.display().to_string(),
        "--tls-private-key-file".into(),
        key.display().to_string(),
    ]);
    let hub = Proc::spawn("hub-a", &operator_bin(), &args, dir.join("hub-a.log"));
    wait_until(Duration::from_secs(20), "every site Connected", || async {
        for s in all {
            if phase(&api, s).await != Some(Phase::Connected) {
                return false;
            }
        }
        true
    })
    .await;
    let addr = logged_addr(&hub.log_text(), "serving HTTPS");
    let scrape = || async {
        let (code, body) = https_get(&addr, "/metrics", Some(&reader), &ca).await;
        assert_eq!(code, 200, "{body}");
        Scrape::parse(&body)
    };
    assert_eq!(
        scrape()
            .await
            .value("federation_grouped_outages_active", &[]),
        Some(0.0)
    );

    // Every site goes dark at once.
    drop(beats);
    wait_until(Duration::from_secs(20), "one outage", || async {
        outage_ids(&fleet_status(&hub_kc)).len() == 1
    })
    .await;
    let status = fleet_status(&hub_kc);
    let outage = &status["outages"][0];
    assert_eq!(outage["groupBy"], "region", "{outage}");
    assert_eq!(outage["value"], "eu-west", "{outage}");
    assert_eq!(
        outage["clusters"],
        json!(eu),
        "eu-4 is in maintenance: {outage}"
    );
    let id = outage["id"].as_str().unwrap().to_owned();
    assert!(
        kubectl_fleet::fleet::correlation::is_incident_id(&id, "go"),
        "{id}"
    );
    // eu-4 is judged as usual, but its downtime is planned.
    wait_until(
        Duration::from_secs(20),
        "eu-4 judged Unreachable",
        || async { phase(&api, "eu-4").await == Some(Phase::Unreachable) },
    )
    .await;
    let status = fleet_status(&hub_kc);
    // Every dark site but eu-4. Their order (worst phase, then the
    // earliest transition, then the name) depends on when the hub judged
    // each, which the summary may still show as Stale: the set is what
    // this test holds (summary.rs's tests hold the order).
    let mut listed: Vec<&str> = status["disconnectedClusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    listed.sort_unstable();
    assert_eq!(listed, ["eu-1", "eu-2", "eu-3", "us-1"], "{status}");
    assert_eq!(status["maintenanceClusters"], 1, "{status}");
    // The outage keeps its id while it lasts (the sites are Unreachable now).
    assert_eq!(outage_ids(&status), std::slice::from_ref(&id), "{status}");
    // The gauges follow at the hub's next summary.
    wait_until(
        Duration::from_secs(10),
        "the gauges say unreachable",
        || async {
            let m = scrape().await;
            ["eu-1", "eu-4", "us-1"].iter().all(|site| {
                m.value(
                    "federation_cluster_disconnected",
                    &[("cluster", site), ("status", "unreachable")],
                ) == Some(1.0)
            })
        },
    )
    .await;
    let m = scrape().await;
    assert_eq!(m.value("federation_grouped_outages_active", &[]), Some(1.0));
    assert_eq!(
        m.value(
            "federation_grouped_outage_clusters",
            &[
                ("outage", &id),
                ("group_by", "region"),
                ("group", "eu-west")
            ]
        ),
        Some(3.0)
    );
    assert_eq!(
        m.value("federation_cluster_maintenance", &[("cluster", "eu-4")]),
        Some(1.0)
    );
    assert_eq!(
        m.value("federation_cluster_maintenance", &[("cluster", "eu-1")]),
        None
    );
    for (site, group) in [
        ("eu-1", "eu-west"),
        ("eu-4", "eu-west"),
        ("us-1", "us-east"),
    ] {
        assert_eq!(
            m.value(
                "federation_cluster_disconnected",
                &[
                    ("cluster", site),
                    ("group", group),
                    ("status", "unreachable")
                ]
            ),
            Some(1.0),
            "{site}"
        );
    }

    // The leader recorded Events (events.k8s.io/v1, with the RBAC
    // `install` ships): each site's transitions, and the outage once.
    // The real kubectl reads them as core v1 Events, by field selector.
    let events = |selector: String| {
        let out = kubectl(
            &hub_kc,
            &[
                "get",
                "events",
                "-A",
                "--field-selector",
                &selector,
                "-o",
                "json",
            ],
        );
        serde_json::from_str::<Value>(&out).unwrap()["items"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    wait_until(Duration::from_secs(10), "eu-1's Events", || async {
        let reasons: Vec<String> = events("involvedObject.name=eu-1".into())
            .iter()
            .map(|e| e["reason"].as_str().unwrap_or_default().to_owned())
            .collect();
        reasons.iter().any(|r| r == "Stale") && reasons.iter().any(|r| r == "Unreachable")
    })
    .await;
    let stale = events("involvedObject.name=eu-1,reason=Stale".into());
    assert_eq!(stale.len(), 1, "{stale:?}");
    let e = &stale[0];
    assert_eq!(e["involvedObject"]["kind"], "FederatedCluster", "{e}");
    assert_eq!(e["metadata"]["namespace"], "default", "{e}");
    assert_eq!(e["type"], "Warning", "{e}");
    assert_eq!(e["reportingComponent"], "fleet-operator-hub", "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .starts_with("Connected → Stale"),
        "{e}"
    );
    let grouped = events("reason=GroupedOutage".into());
    assert_eq!(grouped.len(), 1, "{grouped:?}");
    let message = grouped[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&id) && message.contains("eu-1, eu-2, eu-3"),
        "{message}"
    );
    // Who started it: the first of them to go dark (all at once here).
    assert_eq!(
        status["outages"][0]["startedBy"], outage["clusters"][0],
        "{status}"
    );
    assert!(!message.contains("eu-4"), "{message}");
    // `kubectl events --for` finds them too (in `default`, where the
    // events of cluster-scoped objects are).
    let out = kubectl(
        &hub_kc,
        &["events", "-n", "default", "--for", "federatedcluster/eu-1"],
    );
    assert!(
        out.contains("Unreachable") && out.contains("Stale"),
        "{out}"
    );
    assert!(!out.contains("eu-2"), "{out}");

    // The region comes back: the outage ends.
    let _beats = Heartbeats::start(api.clone(), &eu);
    wait_until(Duration::from_secs(20), "the outage ends", || async {
        outage_ids(&fleet_status(&hub_kc)).is_empty()
    })
    .await;
    assert_eq!(
        scrape()
            .await
            .value("federation_grouped_outages_active", &[]),
        Some(0.0)
    );
    // And an Event says so.
    wait_until(
        Duration::from_secs(10),
        "the GroupedOutageEnded Event",
        || async { !events("reason=GroupedOutageEnded".into()).is_empty() },
    )
    .await;
    let ended = events("reason=GroupedOutageEnded".into());
    assert_eq!(ended[0]["type"], "Normal", "{ended:?}");
    let message = ended[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("{id} the outage of region eu-west ended after ")),
        "{message}"
    );
}
}
