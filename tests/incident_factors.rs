//! What an incident's sites have in common, through a running hub, the
//! site tokens `register` minted, the real `kubectl` and `kubectl fleet`
//! (docs/operations.md#what-an-incidents-sites-have-in-common).
//!
//! Six production sites report with their own tokens: three on edge 0.1.0
//! fail the same way, three on edge 0.2.0 are healthy. The hub's
//! correlation names the edge version the failing sites share, with its
//! counts — in `kubectl fleet incidents`, `incidents ID` (text and JSON),
//! the FederationStatus singleton and the `CorrelationDetected` Event —
//! and a version the healthy sites run too is never named.
//!
//! Then the same with what the sites' nodes run (`status.nodeInfo`): six
//! sites on one edge version, the three failing ones on a kernel the
//! others do not run, which is what the hub names.
//!
//! Intervals: `heartbeatIntervalSeconds: 10` scaled by 0.1 (I = 1 s); a
//! correlation window of 20 s.

use crate::support;

use std::time::Duration;

use kube::api::{Api, Patch, PatchParams};
use kubectl_fleet::api::FederatedCluster;
use serde_json::{Value, json};
use support::{Hub, client_from_yaml, shell, wait_until};
use tokio::sync::watch;

/// The hub operator in process ([`support::hub_operator_args`]): I
/// scaled by 0.1, correlations over 20 s.
fn hub_args(hub: &Hub) -> kubectl_fleet::operator::Args {
    let mut args = support::hub_operator_args(&hub.kubeconfig, 0.1);
    args.correlation_window = Duration::from_secs(20);
    args
}

/// Starts the hub (as [`hub_args`]) and waits until its first correlation
/// names what its sites have in common: the hub's stop switch and task,
/// and `kubectl fleet incidents -o json` as it then reads.
async fn hub_until_a_correlation_names_factors(
    hub: &Hub,
) -> (
    watch::Sender<bool>,
    tokio::task::JoinHandle<Result<(), kubectl_fleet::operator::OperatorError>>,
    Value,
) {
    let (stop, stopped) = watch::channel(false);
    let hub_task = tokio::spawn(kubectl_fleet::operator::run_until(hub_args(hub), stopped));
    wait_until(
        Duration::from_secs(60),
        "a correlation with what its sites share",
        || async {
            let r = shell(hub, "kubectl fleet incidents -o json").ok().json();
            r["correlations"][0]["commonFactors"]
                .as_array()
                .is_some_and(|f| !f.is_empty())
        },
    )
    .await;
    let r = shell(hub, "kubectl fleet incidents -o json").ok().json();
    (stop, hub_task, r)
}

/// Reports for `site` with its own token every half second until dropped:
/// a heartbeat, edge `version`, and when `failing` the ImagePullBackOff
/// begun ten minutes ago, last seen at each report.
struct Reports(tokio::task::JoinHandle<()>);

impl Reports {
    async fn start(
        registered: &Value,
        site: &'static str,
        version: &'static str,
        failing: bool,
    ) -> Self {
        Self::with_nodes(registered, site, version, failing, Value::Null).await
    }

    /// [`Self::start`], reporting `node_info` as `status.nodeInfo` too.
    async fn with_nodes(
        registered: &Value,
        site: &'static str,
        version: &'static str,
        failing: bool,
        node_info: Value,
    ) -> Self {
        let api: Api<FederatedCluster> =
            Api::all(client_from_yaml(registered["config"].as_str().unwrap()).await);
        let began = (jiff::Timestamp::now() - jiff::SignedDuration::from_secs(600)).to_string();
        Reports(tokio::spawn(async move {
            loop {
                let now = jiff::Timestamp::now().to_string();
                let signals = if failing {
                    json!([{
                        "type": "ImagePullBackOff", "severity": "medium", "namespace": "shop",
                        "workload": {"kind": "Deployment", "name": "web"},
                        "firstSeen": began, "lastSeen": now, "count": 3,
                    }])
                } else {
                    json!([])
                };
                let _ = api
                    .patch_status(
                        site,
                        &PatchParams::default(),
                        &Patch::Merge(json!({"status": {
                            "lastHeartbeatTime": now,
                            "observedVersion": version,
                            "signals": signals,
                            "nodeInfo": node_info,
                        }})),
                    )
                    .await;
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }))
    }
}

impl Drop for Reports {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_incident_names_the_edge_version_its_sites_share() {
    let hub = Hub::new();
    let sites: [(&'static str, &'static str, bool); 6] = [
        ("store-1", "0.1.0", true),
        ("store-2", "0.1.0", true),
        ("store-3", "0.1.0", true),
        ("store-4", "0.2.0", false),
        ("store-5", "0.2.0", false),
        ("store-6", "0.2.0", false),
    ];
    let mut reports = Vec::new();
    let mut tokens = Vec::new();
    for (name, version, failing) in sites {
        let registered = hub.register(name, &["--heartbeat-interval", "10", "--region", "eu-west"]);
        reports.push(Reports::start(&registered, name, version, failing).await);
        tokens.push(registered);
    }
    let (stop, hub_task, r) = hub_until_a_correlation_names_factors(&hub).await;
    let xc = &r["correlations"][0];
    let id = xc["id"].as_str().unwrap().to_owned();
    assert_eq!(xc["clusters"], json!(["store-1", "store-2", "store-3"]));
    // Only the edge version sets them apart: all six share the region and
    // the environment.
    let expected = json!([{
        "attribute": "edgeVersion",
        "value": "0.1.0",
        "affected": 3,
        "affectedTotal": 3,
        "unaffected": 0,
        "unaffectedTotal": 3,
    }]);
    assert_eq!(xc["commonFactors"], expected, "{xc}");

    // The singleton the hub wrote carries them.
    let fs = shell(&hub, "kubectl get federationstatus fleet -o json")
        .ok()
        .json();
    assert_eq!(fs["status"]["correlations"][0]["commonFactors"], expected);

    // `incidents ID`: the full line; `-o json`: `commonFactors`.
    let text = shell(&hub, &format!("kubectl fleet incidents {id}"))
        .ok()
        .stdout;
    assert!(
        text.contains(
            "In common:\n  3 of 3 affected run edge 0.1.0; 0% of the other sites do (0 of 3)\n"
        ),
        "{text}"
    );
    let one = shell(&hub, &format!("kubectl fleet incidents {id} -o json"))
        .ok()
        .json();
    assert_eq!(one["commonFactors"], expected, "{one}");
    assert_eq!(one["correlation"]["commonFactors"], expected, "{one}");
    let yaml = shell(&hub, &format!("kubectl fleet incidents {id} -o yaml"))
        .ok()
        .stdout;
    assert!(yaml.contains("commonFactors:"), "{yaml}");
    // The list: the short form.
    let list = shell(&hub, "kubectl fleet incidents").ok().stdout;
    assert!(
        list.contains("IN COMMON") && list.contains("edge 0.1.0 (3/3)"),
        "{list}"
    );

    // The Event of the detection says it.
    wait_until(Duration::from_secs(20), "the CorrelationDetected Event", || async {
        let out = shell(
            &hub,
            "kubectl get events -A --field-selector involvedObject.kind=FederationStatus,reason=CorrelationDetected -o json",
        )
        .ok()
        .json();
        out["items"].as_array().is_some_and(|items| {
            items.iter().any(|e| {
                e["message"].as_str().is_some_and(|m| {
                    m.contains("; in common: 3 of 3 affected run edge 0.1.0; 0% of the other sites do (0 of 3): store-1, store-2, store-3")
                })
            })
        })
    })
    .await;

    // Two healthy sites move to 0.1.0: half the others run it too, so it
    // no longer sets the failing sites apart, and nothing is named.
    reports.truncate(4);
    reports.push(Reports::start(&tokens[4], "store-5", "0.1.0", false).await);
    reports.push(Reports::start(&tokens[5], "store-6", "0.1.0", false).await);
    wait_until(
        Duration::from_secs(60),
        "the version no longer named",
        || async {
            let r = shell(&hub, &format!("kubectl fleet incidents {id} -o json"))
                .ok()
                .json();
            r["commonFactors"] == json!([])
        },
    )
    .await;
    let text = shell(&hub, &format!("kubectl fleet incidents {id}"))
        .ok()
        .stdout;
    assert!(
        text.contains("In common:   nothing that sets its sites apart from the others\n"),
        "{text}"
    );
    stop.send_replace(true);
    hub_task.await.unwrap().expect("hub stops cleanly");
}

/// `status.nodeInfo` of three nodes on `kernel`.
fn nodes_on(kernel: &str) -> Value {
    json!({
        "osImage": {"values": [{"value": "Ubuntu 22.04.4 LTS", "nodes": 3}]},
        "kernelVersion": {"values": [{"value": kernel, "nodes": 3}]},
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_incident_names_the_kernel_its_sites_nodes_share() {
    let hub = Hub::new();
    let sites: [(&'static str, &'static str, bool); 6] = [
        ("store-1", "5.15.0-105-generic", true),
        ("store-2", "5.15.0-105-generic", true),
        ("store-3", "5.15.0-105-generic", true),
        ("store-4", "6.8.0-45-generic", false),
        ("store-5", "6.8.0-45-generic", false),
        ("store-6", "6.8.0-45-generic", false),
    ];
    let mut reports = Vec::new();
    let mut tokens = Vec::new();
    for (name, kernel, failing) in sites {
        let registered = hub.register(name, &["--heartbeat-interval", "10", "--region", "eu-west"]);
        reports
            .push(Reports::with_nodes(&registered, name, "0.1.0", failing, nodes_on(kernel)).await);
        tokens.push(registered);
    }
    // What the CRD refuses of a site's node summary, written with its own
    // token: a terminal escape, a value twice, a ninth value.
    let api: Api<FederatedCluster> =
        Api::all(client_from_yaml(tokens[0]["config"].as_str().unwrap()).await);
    let one = |v: &str| json!({"value": v, "nodes": 1});
    for hostile in [
        json!({"kernelVersion": {"values": [one("6.8\u{1b}]0;owned\u{7}")]}}),
        json!({"kernelVersion": {"values": [one("6.8"), one("6.8")]}}),
        json!({"gpuModel": {"values": (0..9).map(|i| one(&format!("m{i}"))).collect::<Vec<_>>()}}),
    ] {
        let refused = api
            .patch_status(
                "store-1",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"nodeInfo": hostile}})),
            )
            .await;
        assert!(
            matches!(&refused, Err(kube::Error::Api(s)) if s.code == 422),
            "{hostile}: {refused:?}"
        );
    }
    let (stop, hub_task, r) = hub_until_a_correlation_names_factors(&hub).await;
    let xc = &r["correlations"][0];
    let id = xc["id"].as_str().unwrap().to_owned();
    assert_eq!(xc["clusters"], json!(["store-1", "store-2", "store-3"]));
    // All six run edge 0.1.0 and Ubuntu 22.04 in eu-west: only the kernel
    // sets the failing ones apart.
    let expected = json!([{
        "attribute": "kernelVersion",
        "value": "5.15.0-105-generic",
        "affected": 3,
        "affectedTotal": 3,
        "unaffected": 0,
        "unaffectedTotal": 3,
    }]);
    assert_eq!(xc["commonFactors"], expected, "{xc}");
    let text = shell(&hub, &format!("kubectl fleet incidents {id}"))
        .ok()
        .stdout;
    assert!(
        text.contains(
            "In common:\n  3 of 3 affected have nodes on kernel 5.15.0-105-generic; 0% of the other sites do (0 of 3)\n"
        ),
        "{text}"
    );
    let list = shell(&hub, "kubectl fleet incidents").ok().stdout;
    assert!(list.contains("kernel 5.15.0-105-generic (3/3)"), "{list}");
    // What each site's nodes run: describe and the report.
    let described = shell(&hub, "kubectl fleet describe store-1").ok().stdout;
    assert!(
        described.contains("  Node OS:          Ubuntu 22.04.4 LTS (3 nodes)\n")
            && described.contains("  Kernel:           5.15.0-105-generic (3 nodes)\n"),
        "{described}"
    );
    let report = shell(&hub, "kubectl fleet status -o json").ok().json();
    assert_eq!(
        report["sites"][3]["nodeInfo"],
        nodes_on("6.8.0-45-generic"),
        "{report}"
    );
    stop.send_replace(true);
    hub_task.await.unwrap().expect("hub stops cleanly");
}
