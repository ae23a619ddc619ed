//! One site cannot blind the hub (issue 30, "one site blinds the hub
//! fleet-wide"): a site stores a status the API server accepts and no
//! reader of the fleet can decode — a `lastHeartbeatTime` with ten
//! fraction digits, which Kubernetes' own `date-time` check passes — and
//! the hub restarts after the poison. Before, the hub's typed list of every
//! site failed from then on: it judged nothing (a dead site stayed
//! Connected), and `kubectl fleet status` failed for every user.
//!
//! The same run on both API server lanes, through the CRD a hub installed
//! before this release holds (no exact date-time pattern yet), with three
//! sites: one live, one that dies before the restart, one poisoned:
//! - kube-sandbox, the poison written with the site's own token;
//! - a real Kubernetes API server of the test's own (`tools/realapi/`,
//!   CRDs only and no RBAC, so every write is the admin's: the heartbeats
//!   and the poison are admin merge patches of `/status`, and the hub runs
//!   as that admin without leader election).
//!
//! What must hold on each, after the hub restart: the dead site goes Stale
//! on time (3 intervals after the new hub first saw it), the live one stays
//! Connected, the poisoned one is judged as not heard from and says
//! `InvalidStatus`, and the real `kubectl fleet status`, `describe` and
//! `incidents` work for everyone. Re-installing the current CRD closes the
//! door: the same write is then refused with 422, the stored poison stays
//! (ratcheting) and is still read. No log line of the hub exceeds the cap.

use crate::support;

use std::path::PathBuf;
use std::time::Duration;

use kube::api::Api;
use kubectl_fleet::api::{CONDITION_CONNECTED, FederatedCluster, Phase};
use kubectl_fleet::render::safe::MAX_LOG_LINE_BYTES;
use serde_json::json;
use support::{
    Proc, RealApi, Table, TempDir, client_from, crds_before_the_door_closed, hub_args,
    kubectl_fleet, operator_bin, put_crds, status_code, wait_until,
};

/// The heartbeat interval (10 s) times the hub's test scale (0.2).
const I: Duration = Duration::from_secs(2);
const SCALE: f64 = 0.2;
const POISON: &str = "2026-12-05T21:30:05.1234567891Z";
const SITES: [&str; 3] = ["live", "dead", "poisoned"];

/// One API server lane: how to write each site's status, and the
/// kubeconfigs of the hub operator and of the admin (for `kubectl fleet`).
struct Lane {
    name: &'static str,
    admin: kube::Client,
    admin_kc: PathBuf,
    hub_kc: PathBuf,
    /// The client each site writes its status with (its own token on the
    /// sandbox, the admin on the real server).
    writers: Vec<kube::Client>,
}

/// A JSON merge patch of `site`'s `/status`, its answer not decoded (a
/// reader that decodes it is what is under test, not the writer).
async fn patch_status(
    writer: &kube::Client,
    site: &str,
    patch: &serde_json::Value,
) -> Result<(), kube::Error> {
    let req = http::Request::patch(format!(
        "/apis/federation.kubectl-fleet.dev/v1alpha1/federatedclusters/{site}/status"
    ))
    .header("content-type", "application/merge-patch+json")
    .body(patch.to_string().into_bytes())
    .unwrap();
    writer.request_text(req).await.map(drop)
}

fn heartbeat() -> serde_json::Value {
    json!({"status": {"lastHeartbeatTime": jiff::Timestamp::now().to_string(), "nodeCount": 3}})
}

/// Heartbeats every `I / 4` for the sites still in `beating`.
fn spawn_heartbeats(
    writers: Vec<kube::Client>,
    beating: std::sync::Arc<std::sync::Mutex<Vec<bool>>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            for (i, writer) in writers.iter().enumerate() {
                let on = beating.lock().unwrap()[i];
                if on {
                    let _ = patch_status(writer, SITES[i], &heartbeat()).await;
                }
            }
            tokio::time::sleep(I / 4).await;
        }
    })
}

async fn phase(admin: &Api<FederatedCluster>, site: &str) -> Option<Phase> {
    // Read leniently, as every reader of the product does.
    kubectl_fleet::k8s::site_status::get_site(admin, site)
        .await
        .ok()?
        .phase()
}

fn start_hub(lane: &Lane, dir: &TempDir, n: u32) -> Proc {
    let mut args = hub_args(&lane.hub_kc, &format!("hub-{n}"), SCALE);
    args.extend(["--leader-elect".to_owned(), "false".to_owned()]);
    Proc::spawn(
        &format!("hub-{n}"),
        &operator_bin(),
        &args,
        dir.join(&format!("hub-{n}.log")),
    )
}

async fn poison_run(lane: Lane, dir: &TempDir) {
    let sites: Api<FederatedCluster> = Api::all(lane.admin.clone());
    let beating = std::sync::Arc::new(std::sync::Mutex::new(vec![true; 3]));
    let beats = spawn_heartbeats(lane.writers.clone(), beating.clone());
    let mut hub = start_hub(&lane, dir, 1);
    for s in SITES {
        wait_until(
            Duration::from_secs(60),
            &format!("{s} Connected"),
            || async { phase(&sites, s).await == Some(Phase::Connected) },
        )
        .await;
    }

    // The poison, accepted by the CRD such a hub holds; its site is silent
    // from then on.
    beating.lock().unwrap()[2] = false;
    let poison = json!({"status": {"lastHeartbeatTime": POISON}});
    patch_status(&lane.writers[2], "poisoned", &poison)
        .await
        .unwrap_or_else(|e| panic!("{}: the older CRD accepts the poison: {e}", lane.name));

    // The hub restarts after the poison, and the dead site is dead by then.
    beating.lock().unwrap()[1] = false;
    hub.kill();
    let restart = jiff::Timestamp::now();
    let mut hub = start_hub(&lane, dir, 2);

    // The dead site goes Stale on time: 3 intervals after the new hub first
    // saw it (it was Connected, so it is given that long from then).
    wait_until(Duration::from_secs(60), "the dead site Stale", || async {
        phase(&sites, "dead").await == Some(Phase::Stale)
    })
    .await;
    let dead = sites.get("dead").await.unwrap().status.unwrap();
    let stale_at = dead.phase_transition_time.unwrap().0;
    let after = stale_at.duration_since(restart);
    let three = jiff::SignedDuration::try_from(I * 3).unwrap();
    assert!(
        after >= three - jiff::SignedDuration::from_secs(1)
            && after <= three + jiff::SignedDuration::from_secs(10),
        "{}: the dead site went Stale {after:?} after the restart, not ~{three:?}",
        lane.name
    );
    // The poisoned site: not heard from, and the hub says why.
    let message = support::wait_connected(&sites, "poisoned", "False", "InvalidStatus").await;
    assert!(
        message.starts_with("the hub cannot read status.lastHeartbeatTime of this site"),
        "{message}"
    );
    assert_eq!(phase(&sites, "poisoned").await, Some(Phase::Stale));
    let live = sites.get("live").await.unwrap().status.unwrap();
    assert_eq!(live.phase, Some(Phase::Connected), "{}", lane.name);
    assert_eq!(
        live.condition(CONDITION_CONNECTED).unwrap().reason,
        "HeartbeatReceived"
    );
    // The poison is still stored as written: the hub wrote only its keys.
    let raw: serde_json::Value = lane
        .admin
        .request(
            http::Request::get(
                "/apis/federation.kubectl-fleet.dev/v1alpha1/federatedclusters/poisoned",
            )
            .body(Vec::new())
            .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(raw["status"]["lastHeartbeatTime"], POISON);

    // Everyone's views, through the real kubectl.
    let wide = kubectl_fleet(&lane.admin_kc, &["status", "-o", "wide"]);
    let table = Table::find(&wide, "NAME ");
    assert_eq!(table.cell("live", "PHASE"), "Connected", "{wide}");
    assert_eq!(table.cell("dead", "PHASE"), "Stale", "{wide}");
    assert_eq!(
        table.cell("poisoned", "LAST HEARTBEAT"),
        "<invalid>",
        "{wide}"
    );
    assert_eq!(table.cell("poisoned", "REASON"), "InvalidStatus", "{wide}");
    let described = kubectl_fleet(&lane.admin_kc, &["describe", "poisoned"]);
    assert!(
        described.contains("Unreadable:") && described.contains("status.lastHeartbeatTime: "),
        "{described}"
    );
    kubectl_fleet(&lane.admin_kc, &["incidents"]);
    let json: serde_json::Value = serde_json::from_str(
        kubectl_fleet(&lane.admin_kc, &["status", "-o", "json"]).trim_start_matches(|c| c != '{'),
    )
    .unwrap();
    let p = json["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "poisoned")
        .unwrap();
    assert_eq!(
        p["unreadable"]["fields"][0]["path"],
        "status.lastHeartbeatTime"
    );

    // The current CRD closes the door; what is stored stays and reads.
    put_crds(
        &lane.admin,
        &kubectl_fleet::api::crds()
            .into_iter()
            .map(|c| serde_json::to_value(c).unwrap())
            .collect::<Vec<_>>(),
    )
    .await;
    let again = json!({"status": {"lastHeartbeatTime": "2026-12-05T21:30:05x5Z"}});
    assert_eq!(
        status_code(patch_status(&lane.writers[2], "poisoned", &again).await),
        422,
        "{}",
        lane.name
    );
    let too_big = json!({"status": {"nodeCount": 18446744073709551615u64}});
    assert_eq!(
        status_code(patch_status(&lane.writers[0], "live", &too_big).await),
        422,
        "{}",
        lane.name
    );
    kubectl_fleet(&lane.admin_kc, &["status"]);

    beats.abort();
    hub.terminate();
    let log = hub.log_text();
    assert!(
        log.contains("the hub cannot read part of this site's object"),
        "{log}"
    );
    for line in log.lines() {
        assert!(
            line.len() < MAX_LOG_LINE_BYTES,
            "a log line of {} bytes",
            line.len()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poisoned_site_cannot_blind_the_hub_on_kube_sandbox() {
    let dir = TempDir::new("poison-sandbox");
    let sb = kube_sandbox::Sandbox::start();
    let admin_kc = support::installed_hub(&sb, &dir);
    for s in SITES {
        support::fleet_register(&admin_kc, s, 10, &dir.join(&format!("{s}.kubeconfig")), &[]);
    }
    let admin = support::admin(&sb).await;
    put_crds(&admin, &crds_before_the_door_closed()).await;
    let mut writers = Vec::new();
    for s in SITES {
        let token_kc = std::fs::read_to_string(dir.join(&format!("{s}.kubeconfig"))).unwrap();
        writers.push(client_from(&token_kc).await);
    }
    let hub_kc = support::hub_operator_kubeconfig(&sb, &dir).await;
    poison_run(
        Lane {
            name: "kube-sandbox",
            admin,
            admin_kc,
            hub_kc,
            writers,
        },
        &dir,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poisoned_site_cannot_blind_the_hub_on_the_real_api_server() {
    let Some(real) = RealApi::start() else { return };
    let dir = TempDir::new("poison-real");
    let admin_kc: PathBuf = real.kubeconfig();
    let admin = client_from(&std::fs::read_to_string(&admin_kc).unwrap()).await;
    put_crds(&admin, &crds_before_the_door_closed()).await;
    for s in SITES {
        support::create_site(&admin, s, 10, kubectl_fleet::api::Environment::Production).await;
    }
    let writers = SITES.map(|_| admin.clone()).to_vec();
    poison_run(
        Lane {
            name: "real API server",
            admin,
            hub_kc: admin_kc.clone(),
            admin_kc,
            writers,
        },
        &dir,
    )
    .await;
    drop(real);
}
