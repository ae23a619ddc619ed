//! What users read, whole: `kubectl fleet status`, `status -o wide`,
//! `describe SITE` and `incidents` through the real `kubectl` (which finds
//! the built `kubectl-fleet` on PATH) against kube-sandbox, compared in
//! full with reviewed insta snapshots (`tests/snapshots/`), and the
//! one-line errors users meet (message, hint and exit code) compared
//! exactly. A new or renamed column, a changed header, footer or message
//! fails here; `src/render`'s own snapshots hold the renderers to fixed
//! inputs, these hold the command a user runs.
//!
//! The fleet is fixed: four sites of set tiers, regions, versions, GPUs,
//! services, signals, token expiries and phases, one correlation and one
//! cascade, and a judging hub. Times are written relative to now, so what
//! the plugin measures against the clock is masked narrowly, never a
//! whole line: the cells under `LAST HEARTBEAT`, `LAST SEEN` and
//! `DETECTED` become `<age>`, RFC 3339 times `<time>`, the ages `describe`
//! measures (`(5s ago)`) `<age>`, and the hub's address `<hub>`. Every
//! other age is chosen to read the same for an hour (`9h`, `29d`).

use crate::support;

use kube::api::{Api, Patch, PatchParams};
use kubectl_fleet::api::{FederatedCluster, FederationStatus};
use serde_json::{Value, json};
use support::{Hub, Run, Table, mask_column};

/// `secs` seconds before now (negative: after), as the API writes a time.
fn ago(secs: i64) -> String {
    let t = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(secs);
    // Whole seconds, as a Kubernetes `Time`.
    jiff::Timestamp::from_second(t.as_second())
        .unwrap()
        .to_string()
}

const HOUR: i64 = 3600;
const DAY: i64 = 24 * HOUR;

async fn set_status(hub: &Hub, site: &str, status: Value) {
    let api: Api<FederatedCluster> = Api::all(hub.admin().await);
    api.patch_status(
        site,
        &PatchParams::default(),
        &Patch::Merge(&json!({ "status": status })),
    )
    .await
    .unwrap();
}

/// The hub's `Connected` condition for `phase`, as it writes it for a
/// 30 s heartbeat interval, in force for `since` seconds.
fn connected(phase: &str, since: i64) -> Value {
    let (status, reason, message) = match phase {
        "Connected" => (
            "True",
            "HeartbeatReceived",
            "heartbeat received within 90s (3 intervals)",
        ),
        "Stale" => (
            "False",
            "HeartbeatStale",
            "no heartbeat for more than 90s (3 intervals)",
        ),
        "Unreachable" => (
            "False",
            "HeartbeatMissing",
            "no heartbeat for more than 5m (10 intervals)",
        ),
        _ => ("Unknown", "NeverHeardFrom", "no heartbeat received yet"),
    };
    json!([{
        "type": "Connected", "status": status, "reason": reason, "message": message,
        "lastTransitionTime": ago(since), "observedGeneration": 1,
    }])
}

/// What an edge reports of a healthy site (3 nodes, 12 namespaces).
fn reported(heartbeat_ago: i64, version: &str) -> Value {
    json!({
        "lastHeartbeatTime": ago(heartbeat_ago),
        "observedVersion": version,
        "kubernetesVersion": "v1.33.2",
        "nodeCount": 3,
        "namespaceCount": 12,
        "capacity": {"nodes": 3, "gpusTotal": 0, "gpusAllocatable": 0},
    })
}

fn merged(mut a: Value, b: Value) -> Value {
    for (k, v) in b.as_object().unwrap() {
        a[k] = v.clone();
    }
    a
}

/// The CrashLoopBackOff of `shop/Deployment web`, first seen 9 h ago.
fn crash_loop(count: i64) -> Value {
    json!({
        "type": "CrashLoopBackOff", "severity": "high", "namespace": "shop",
        "workload": {"kind": "Deployment", "name": "web"},
        "message": "back-off 5m0s restarting failed container",
        "firstSeen": ago(9 * HOUR), "lastSeen": ago(20), "count": count,
    })
}

/// The fixed fleet: a judging hub and four sites.
/// - us-east-prod: critical, us-east-1, Connected 9 h, 12 GPUs (10
///   allocatable, two vendors), 4 inference services, a crash loop, token
///   29 days from expiry;
/// - eu-west-staging: staging, eu-west-1, Stale, the same crash loop
///   (a correlation and a cascade into us-east-prod), token expired;
/// - edge-42: non-critical development, Unreachable, edge 0.1.0;
/// - new-site: registered, never heard from (Pending).
async fn fleet() -> Hub {
    let hub = Hub::new();
    for (site, args) in [
        (
            "us-east-prod",
            &["--region", "us-east-1", "--tier", "critical"][..],
        ),
        (
            "eu-west-staging",
            &["--region", "eu-west-1", "--environment", "staging"][..],
        ),
        (
            "edge-42",
            &["--tier", "non-critical", "--environment", "development"][..],
        ),
        ("new-site", &[][..]),
    ] {
        hub.register(site, args);
    }
    set_status(
        &hub,
        "us-east-prod",
        merged(
            reported(5, "0.2.0"),
            json!({
                "capacity": {"nodes": 3, "gpusTotal": 12, "gpusAllocatable": 10, "gpusByVendor": {
                    "nvidia.com/gpu": {"total": 8, "allocatable": 8},
                    "amd.com/gpu": {"total": 4, "allocatable": 2},
                }},
                "inference": {"models": 2, "servicesReady": 3, "servicesFailed": 1, "servicesTotal": 4},
                "signals": [crash_loop(7)],
                "credentialExpirationTime": ago(-(29 * DAY + 12 * HOUR)),
                "phase": "Connected",
                "phaseTransitionTime": ago(9 * HOUR),
                "conditions": connected("Connected", 9 * HOUR),
            }),
        ),
    )
    .await;
    set_status(
        &hub,
        "eu-west-staging",
        merged(
            reported(150, "0.2.0"),
            json!({
                "signals": [crash_loop(2)],
                "credentialExpirationTime": ago(DAY),
                "phase": "Stale",
                "phaseTransitionTime": ago(60),
                "conditions": connected("Stale", 60),
            }),
        ),
    )
    .await;
    set_status(
        &hub,
        "edge-42",
        merged(
            reported(600, "0.1.0"),
            json!({
                "phase": "Unreachable",
                "phaseTransitionTime": ago(300),
                "conditions": connected("Unreachable", 300),
            }),
        ),
    )
    .await;
    set_status(
        &hub,
        "new-site",
        json!({
            "phase": "Pending",
            "phaseTransitionTime": ago(9 * HOUR),
            "conditions": connected("Pending", 9 * HOUR),
        }),
    )
    .await;
    // The hub's incidents over the crash loop, as its summariser writes them.
    let fs: Api<FederationStatus> = Api::all(hub.admin().await);
    fs.create(
        &Default::default(),
        &FederationStatus::singleton(Default::default()),
    )
    .await
    .unwrap();
    fs.patch_status(
        "fleet",
        &PatchParams::default(),
        &Patch::Merge(&json!({ "status": {
            "correlations": [{
                "id": "xc-0000000a", "signal": "CrashLoopBackOff", "severity": "critical",
                "originalSeverity": "high", "clusters": ["eu-west-staging", "us-east-prod"],
                "firstSeen": ago(9 * HOUR), "lastSeen": ago(20),
            }],
            "cascades": [{
                "id": "cc-0000000b",
                "source": "eu-west-staging", "target": "us-east-prod",
                "sourceEnvironment": "staging", "targetEnvironment": "production",
                "sourceTier": "standard", "targetTier": "critical",
                "signal": "CrashLoopBackOff", "workload": {"kind": "Deployment", "name": "web"},
                "sourceFirstSeen": ago(9 * HOUR), "targetFirstSeen": ago(9 * HOUR - 1800),
                "deltaSeconds": 1800,
            }],
        }})),
    )
    .await
    .unwrap();
    hub.record_hub_judgement("fleet-operator-hub-0", jiff::Timestamp::now(), 15)
        .await;
    hub
}

/// `kubectl fleet ARGS…` through the real kubectl, as the hub's admin.
fn kubectl_fleet(hub: &Hub, args: &[&str]) -> Run {
    let mut full = vec!["fleet"];
    full.extend_from_slice(args);
    hub.kubectl(&full)
}

/// Every `YYYY-MM-DDTHH:MM:SSZ` in `text` as `<time>`.
fn mask_times(text: &str) -> String {
    let bytes = text.as_bytes();
    let shape = b"dddd-dd-ddTdd:dd:ddZ";
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let is_time = bytes.len() - i >= shape.len()
            && shape.iter().zip(&bytes[i..]).all(|(s, b)| match s {
                b'd' => b.is_ascii_digit(),
                s => s == b,
            });
        if is_time {
            out.push_str("<time>");
            i += shape.len();
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// On the line starting with `prefix`, the age right before `before`
/// (`5s` in `(5s ago)`) as `<age>`; the line must hold one.
#[track_caller]
fn mask_age(text: &str, prefix: &str, before: &str) -> String {
    let mut done = false;
    let out = text
        .split_inclusive('\n')
        .map(|line| {
            if done || !line.trim_start().starts_with(prefix) {
                return line.to_owned();
            }
            let Some(at) = line.find(before) else {
                return line.to_owned();
            };
            let start = line[..at]
                .rfind(|c: char| !c.is_ascii_alphanumeric())
                .map_or(0, |i| i + 1);
            assert!(start < at, "no age before {before:?} in {line:?}");
            done = true;
            format!("{}<age>{}", &line[..start], &line[at..])
        })
        .collect();
    assert!(
        done,
        "no line {prefix:?} with an age before {before:?} in\n{text}"
    );
    out
}

/// The hub's address, which the sandbox picked, as `<hub>`.
fn mask_hub(hub: &Hub, text: &str) -> String {
    text.replace(&hub.sandbox.url(), "<hub>")
}

/// A command that succeeded and wrote nothing on stderr: its stdout.
#[track_caller]
fn quiet_ok(run: Run) -> String {
    let run = run.ok();
    assert_eq!(run.stderr, "", "stderr of a healthy fleet's view");
    run.stdout
}

#[tokio::test]
async fn status_wide_describe_and_incidents_read_as_reviewed() {
    let hub = fleet().await;

    let status = quiet_ok(kubectl_fleet(&hub, &["status"]));
    // The sites in name order, each cell under its header.
    let table = Table::parse(&status);
    assert_eq!(
        table.column("NAME"),
        ["edge-42", "eu-west-staging", "new-site", "us-east-prod"]
    );
    assert_eq!(table.cell("us-east-prod", "GPUS"), "10/12");
    insta::assert_snapshot!(
        "status",
        mask_column(&status, "NAME ", "LAST HEARTBEAT", "<age>")
    );

    let wide = quiet_ok(kubectl_fleet(&hub, &["status", "-o", "wide"]));
    let table = Table::parse(&wide);
    assert_eq!(table.cell("us-east-prod", "TOKEN EXPIRES"), "29d");
    assert_eq!(table.cell("eu-west-staging", "TOKEN EXPIRES"), "expired");
    insta::assert_snapshot!(
        "status_wide",
        mask_column(&wide, "NAME ", "LAST HEARTBEAT", "<age>")
    );

    let describe = quiet_ok(kubectl_fleet(&hub, &["describe", "us-east-prod"]));
    let masked = mask_times(&describe);
    let masked = mask_age(&masked, "Hub:", " ago)");
    let masked = mask_age(&masked, "Last Heartbeat:", " ago)");
    let masked = mask_column(&masked, "SIGNAL ", "LAST SEEN", "<age>");
    insta::assert_snapshot!("describe", masked);

    let incidents = quiet_ok(kubectl_fleet(&hub, &["incidents"]));
    let masked = mask_column(&incidents, "ID ", "LAST SEEN", "<age>");
    let masked = mask_column(&masked, "ID ", "DETECTED", "<age>");
    let masked = mask_column(&masked, "SITE ", "LAST SEEN", "<age>");
    insta::assert_snapshot!("incidents", masked);
}

/// The errors a careless hand meets: one `error:` line saying what is
/// wrong and what to do, nothing on stdout, and the exit code scripts
/// test (2 for usage, 1 for what the cluster says).
#[tokio::test]
async fn errors_are_one_line_with_a_hint_and_their_exit_code() {
    let hub = fleet().await;
    let cases: [(&[&str], i32, &str); 5] = [
        (
            &["describe", "nope"],
            1,
            "error: site nope is not registered on <hub>: list the registered sites with \
             `kubectl fleet status`",
        ),
        (
            &["status", "-o", "xml"],
            2,
            "error: invalid value 'xml' for '--output <FORMAT>': use one of table, wide, json, \
             yaml, name, jsonpath=TEMPLATE",
        ),
        (
            &["status", "--tier", "gold"],
            2,
            "error: invalid value 'gold' for '--tier <TIER>': use one of critical, standard, \
             non-critical",
        ),
        (
            &["incidents", "xc-nope"],
            2,
            "error: invalid value 'xc-nope' for '[ID]': not an incident id: use xc-XXXXXXXX \
             (correlation), cc-XXXXXXXX (cascade) or go-XXXXXXXX (grouped outage), as \
             `kubectl fleet incidents` lists them",
        ),
        (
            &["incidents", "xc-0000000f"],
            1,
            "error: incident xc-0000000f not found on <hub>: `kubectl fleet incidents` lists \
             the active correlations, cascades and grouped outages (an incident ends when its \
             signals clear)",
        ),
    ];
    for (args, code, line) in cases {
        let run = kubectl_fleet(&hub, args);
        assert_eq!(
            (run.code, mask_hub(&hub, &run.stderr), run.stdout.as_str()),
            (code, format!("{line}\n"), ""),
            "kubectl fleet {args:?}"
        );
    }
}

/// A hub without the fleet's CRDs: `status` says what is missing and the
/// command that installs it, once.
#[test]
fn status_on_a_hub_without_the_fleet_says_how_to_install_it() {
    let hub = Hub::bare(Default::default());
    let run = kubectl_fleet(&hub, &["status"]);
    assert_eq!(
        (run.code, mask_hub(&hub, &run.stderr), run.stdout.as_str()),
        (
            1,
            "error: list FederatedClusters: the federation.kubectl-fleet.dev CRDs are not \
             installed on <hub>: check that --kubeconfig/--context point at the hub; if <hub> is \
             the hub, run `kubectl fleet install --apply`\n"
                .to_owned(),
            ""
        ),
        "kubectl fleet status on a bare hub"
    );
}
