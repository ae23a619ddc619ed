//! What one site's report may change for other sites, through a running
//! hub, the site tokens `register` minted, and the real `kubectl fleet`
//! (docs/reliability.md#what-a-sites-report-may-change-for-other-sites).
//!
//! A staging site forges, with only its own token, the signal two real
//! production sites report: a correlation and a cascade into each follow,
//! and the hub decides the real sites' signals `manual` — as it must for a
//! real incident — while every view says which incident raised each
//! decision and which site started it. The forged `lastSeen` in the
//! future keeps nothing alive once the liar goes quiet. An administrator
//! quarantines the site: its signals leave every incident, the real
//! sites' decisions are their own again, the site's own status is still
//! shown, and the site cannot lift the quarantine itself.
//!
//! Intervals: `heartbeatIntervalSeconds: 10` scaled by 0.1 (I = 1 s); a
//! correlation window of 20 s.

use crate::support;

use std::time::Duration;

use kube::api::{Api, Patch, PatchParams};
use kubectl_fleet::api::FederatedCluster;
use serde_json::{Value, json};
use support::{Hub, client_from_yaml, shell, status_code, wait_until};
use tokio::sync::watch;

/// The hub operator in process ([`support::hub_operator_args`]): I
/// scaled by 0.1, correlations over 20 s.
fn hub_args(hub: &Hub) -> kubectl_fleet::operator::Args {
    let mut args = support::hub_operator_args(&hub.kubeconfig, 0.1);
    args.correlation_window = Duration::from_secs(20);
    args
}

/// The ImagePullBackOff every site reports on Deployment/web.
fn pull_signal(first_seen: &str, last_seen: &str) -> Value {
    json!({
        "type": "ImagePullBackOff", "severity": "medium", "namespace": "shop",
        "workload": {"kind": "Deployment", "name": "web"},
        "firstSeen": first_seen, "lastSeen": last_seen, "count": 3,
    })
}

fn ago(secs: i64) -> String {
    (jiff::Timestamp::now() - jiff::SignedDuration::from_secs(secs)).to_string()
}

/// A site's own API, with the token `register` minted for it.
async fn site_api(registered: &Value) -> Api<FederatedCluster> {
    Api::all(client_from_yaml(registered["config"].as_str().unwrap()).await)
}

/// Reports for `site` with its own token every half second until dropped:
/// a heartbeat and the ImagePullBackOff begun at `first_seen`, last seen
/// at each report — or, `forged`, ten years from now.
struct Reports(tokio::task::JoinHandle<()>);

impl Reports {
    fn start(
        api: Api<FederatedCluster>,
        site: &'static str,
        first_seen: String,
        forged: bool,
    ) -> Self {
        Reports(tokio::spawn(async move {
            loop {
                let now = jiff::Timestamp::now().to_string();
                let last_seen = if forged {
                    FOREVER.to_owned()
                } else {
                    now.clone()
                };
                let _ = api
                    .patch_status(
                        site,
                        &PatchParams::default(),
                        &Patch::Merge(json!({"status": {
                            "lastHeartbeatTime": now,
                            "signals": [pull_signal(&first_seen, &last_seen)],
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

/// The liar's `lastSeen`.
const FOREVER: &str = "2036-01-01T00:00:00Z";

/// `kubectl fleet incidents -o json`, through the real kubectl.
fn incidents(hub: &Hub) -> Value {
    shell(hub, "kubectl fleet incidents -o json").ok().json()
}

/// The `incidents -o json` signal row of `site`.
fn row(report: &Value, site: &str) -> Value {
    report["signals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["cluster"] == site)
        .cloned()
        .unwrap_or(Value::Null)
}

/// The Events of the FederationStatus with `reason`, as kubectl reads them.
fn fleet_events(hub: &Hub, reason: &str) -> Vec<Value> {
    let out = shell(
        hub,
        &format!(
            "kubectl get events -A --field-selector involvedObject.kind=FederationStatus,reason={reason} -o json"
        ),
    )
    .ok()
    .json();
    out["items"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lying_site_bends_no_decision_beyond_what_it_reports_and_quarantine_takes_it_back() {
    let hub = Hub::new();
    let stg = hub.register(
        "stg",
        &[
            "--heartbeat-interval",
            "10",
            "--environment",
            "staging",
            "--tier",
            "standard",
        ],
    );
    let mut real = Vec::new();
    for name in ["prod-a", "prod-b"] {
        real.push(hub.register(
            name,
            &[
                "--heartbeat-interval",
                "10",
                "--environment",
                "production",
                "--tier",
                "standard",
            ],
        ));
    }
    // The real sites' failure began 10 minutes ago: a medium signal on a
    // standard-tier site runs its fix by itself.
    let _a = Reports::start(site_api(&real[0]).await, "prod-a", ago(600), false);
    let _b = Reports::start(site_api(&real[1]).await, "prod-b", ago(600), false);
    let (stop, stopped) = watch::channel(false);
    let hub_task = tokio::spawn(kubectl_fleet::operator::run_until(hub_args(&hub), stopped));
    wait_until(Duration::from_secs(30), "the hub summarises", || async {
        let r = incidents(&hub);
        r["hub"]["judging"] == true && row(&r, "prod-a")["remediation"]["mode"] == "auto"
    })
    .await;

    // The liar, with its own token: the same signal, begun "2 h ago", last
    // seen ten years from now.
    let liar = site_api(&stg).await;
    let lying = Reports::start(liar.clone(), "stg", ago(7200), true);
    wait_until(
        Duration::from_secs(30),
        "a correlation and two cascades",
        || async {
            let r = incidents(&hub);
            r["correlations"].as_array().is_some_and(|c| c.len() == 1)
                && r["cascades"].as_array().is_some_and(|c| c.len() == 2)
        },
    )
    .await;
    let r = incidents(&hub);
    let xc = &r["correlations"][0];
    let xc_id = xc["id"].as_str().unwrap().to_owned();
    assert_eq!(xc["startedBy"], "stg", "{xc}");
    assert_eq!(xc["clusters"], json!(["prod-a", "prod-b", "stg"]));
    // Its lastSeen on the hub clock: never past when the hub heard from it.
    let last: jiff::Timestamp = xc["lastSeen"].as_str().unwrap().parse().unwrap();
    assert!(last <= jiff::Timestamp::now(), "{xc}");
    for c in r["cascades"].as_array().unwrap() {
        assert_eq!(c["source"], "stg", "{c}");
    }
    // The real sites' signals are decided as the incidents say, and say so.
    for site in ["prod-a", "prod-b"] {
        let s = row(&r, site);
        assert_eq!(s["severity"], "medium", "{s}");
        assert_eq!(s["decidedSeverity"], "critical", "{s}");
        assert_eq!(s["remediation"]["mode"], "manual", "{s}");
        let raised: Vec<&str> = s["raisedBy"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(
            raised.len() == 2 && raised[0] == xc_id && raised[1].starts_with("cc-"),
            "{s}"
        );
    }
    // The incident names who started it, in text too.
    let text = shell(&hub, &format!("kubectl fleet incidents {xc_id}"))
        .ok()
        .stdout;
    assert!(
        text.contains("Started by:  stg (earliest evidence 120m ago, hub clock)"),
        "{text}"
    );
    wait_until(
        Duration::from_secs(10),
        "the CorrelationDetected Event",
        || async { !fleet_events(&hub, "CorrelationDetected").is_empty() },
    )
    .await;
    let e = &fleet_events(&hub, "CorrelationDetected")[0];
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("on 3 sites when detected, started by stg"),
        "{e}"
    );

    // An administrator quarantines the liar.
    let run = shell(
        &hub,
        "kubectl fleet quarantine stg --reason 'forged signals'",
    )
    .ok();
    assert_eq!(
        run.stdout,
        "federatedcluster.federation.kubectl-fleet.dev/stg quarantined: forged signals\n"
    );
    wait_until(
        Duration::from_secs(30),
        "the liar's incidents are gone",
        || async {
            let r = incidents(&hub);
            r["correlations"].as_array().is_some_and(Vec::is_empty)
                && r["cascades"].as_array().is_some_and(Vec::is_empty)
        },
    )
    .await;
    let r = incidents(&hub);
    for site in ["prod-a", "prod-b"] {
        let s = row(&r, site);
        assert_eq!(
            (
                &s["decidedSeverity"],
                &s["remediation"]["mode"],
                &s["raisedBy"]
            ),
            (&json!("medium"), &json!("auto"), &json!([])),
            "{s}"
        );
    }
    // Its own status is still shown, marked.
    assert_eq!(r["quarantined"][0]["name"], "stg", "{r}");
    assert_eq!(r["quarantined"][0]["reason"], "forged signals", "{r}");
    assert_eq!(row(&r, "stg")["quarantined"], true);
    let status = shell(&hub, "kubectl fleet status stg -o json").ok().json();
    assert_eq!(status["sites"][0]["quarantine"]["reason"], "forged signals");
    assert_eq!(status["sites"][0]["signals"][0]["raisedBy"], json!([]));
    let text = shell(&hub, "kubectl fleet describe stg").ok().stdout;
    assert!(
        text.contains("Quarantine:         yes: its signals are part of no fleet incident, since "),
        "{text}"
    );
    wait_until(
        Duration::from_secs(10),
        "the CorrelationEnded Event",
        || async { !fleet_events(&hub, "CorrelationEnded").is_empty() },
    )
    .await;

    // The site cannot lift it: its token may not write its spec, and its
    // status subresource ignores the spec.
    let lift = json!({"spec": {"quarantine": null}});
    assert_eq!(
        status_code(
            liar.patch("stg", &PatchParams::default(), &Patch::Merge(&lift))
                .await
        ),
        403
    );
    let _ = liar
        .patch_status("stg", &PatchParams::default(), &Patch::Merge(&lift))
        .await;
    let admin: Api<FederatedCluster> = Api::all(hub.admin().await);
    assert!(admin.get("stg").await.unwrap().spec.quarantine.is_some());
    // A register re-run keeps it.
    hub.register(
        "stg",
        &[
            "--heartbeat-interval",
            "10",
            "--environment",
            "staging",
            "--tier",
            "standard",
        ],
    );
    assert!(admin.get("stg").await.unwrap().spec.quarantine.is_some());
    let again = shell(&hub, "kubectl fleet quarantine stg").ok();
    assert!(
        again.stdout.ends_with("stg already quarantined\n"),
        "{}",
        again.stdout
    );

    // Lifted by an administrator, its report counts again — but a forged
    // lastSeen keeps nothing alive once it goes quiet: 20 s (the window)
    // after its last heartbeat, the correlation ends although its signal
    // claims to be seen until 2036.
    let run = shell(&hub, "kubectl fleet unquarantine stg").ok();
    assert_eq!(
        run.stdout,
        "federatedcluster.federation.kubectl-fleet.dev/stg unquarantined\n"
    );
    wait_until(Duration::from_secs(30), "the correlation again", || async {
        incidents(&hub)["correlations"]
            .as_array()
            .is_some_and(|c| c.len() == 1)
    })
    .await;
    drop(lying);
    wait_until(
        Duration::from_secs(60),
        "the correlation ends after the liar goes quiet",
        || async {
            incidents(&hub)["correlations"]
                .as_array()
                .is_some_and(Vec::is_empty)
        },
    )
    .await;
    let stored = admin.get_status("stg").await.unwrap();
    assert_eq!(
        stored.status.unwrap().signals()[0].last_seen.0.to_string(),
        FOREVER,
        "the forged lastSeen is still there"
    );

    // Unknown sites: named, the others done, exit 1.
    let run = shell(&hub, "kubectl fleet quarantine prod-a nope");
    assert_eq!(run.code, 1);
    assert!(
        run.one_line_error()
            .contains("site nope not registered: not quarantined"),
        "{}",
        run.one_line_error()
    );
    assert!(admin.get("prod-a").await.unwrap().spec.quarantine.is_some());
    let run = shell(
        &hub,
        "kubectl fleet quarantine prod-a --reason \"$(printf 'a\\033[2Jb')\"",
    );
    assert_eq!(run.code, 1);
    assert!(
        run.one_line_error()
            .contains("control or format characters"),
        "{}",
        run.one_line_error()
    );

    stop.send_replace(true);
    hub_task.await.unwrap().expect("hub stops cleanly");
}
