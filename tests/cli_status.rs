//! `kubectl fleet status`: sorted table with footer, filters, JSON/YAML
//! report, colour rules, and `--watch` redrawing from the watch API.

use crate::support;

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use kube::api::{Api, Patch, PatchParams};
use kubectl_fleet::api::FederatedCluster;
use serde_json::json;
use support::{BIN, Hub, Lane};

async fn set_status(hub: &Hub, site: &str, status: serde_json::Value) {
    let api: Api<FederatedCluster> = Api::all(hub.admin().await);
    api.patch_status(
        site,
        &PatchParams::default(),
        &Patch::Merge(&json!({ "status": status })),
    )
    .await
    .unwrap();
}

async fn fleet_of_three(lane: Lane) -> Hub {
    let hub = Hub::on(lane);
    hub.register("site-c", &["--tier", "non-critical"]);
    hub.register("site-a", &["--tier", "critical", "--region", "eu-west-1"]);
    hub.register(
        "site-b",
        &["--environment", "staging", "--region", "us-east-1"],
    );
    let now = jiff::Timestamp::now().to_string();
    set_status(
        &hub,
        "site-a",
        json!({ "phase": "Connected", "lastHeartbeatTime": now, "nodeCount": 3 }),
    )
    .await;
    set_status(
        &hub,
        "site-b",
        json!({ "phase": "Stale", "lastHeartbeatTime": "2020-01-01T00:00:00Z" }),
    )
    .await;
    // The phases above are a hub's word: a hub judging (every hour, so the
    // record stays fresh for the test).
    hub.record_hub_judgement("hub-a", jiff::Timestamp::now(), 3600)
        .await;
    hub
}

fn first_column(table: &str) -> Vec<String> {
    support::Table::parse(table)
        .column("NAME")
        .into_iter()
        .map(str::to_owned)
        .collect()
}

on_both_lanes! {
async fn table_is_sorted_with_footer_and_filters_apply(lane) {
    let hub = fleet_of_three(lane).await;
    let table = hub.fleet(&["status"]).ok().stdout;
    assert!(table.starts_with("NAME "), "{table}");
    assert_eq!(first_column(&table), ["site-a", "site-b", "site-c"]);
    let site_c = table.lines().find(|l| l.starts_with("site-c")).unwrap();
    assert!(
        site_c.contains("Pending") && site_c.contains("never"),
        "{site_c}"
    );
    assert!(
        table.contains("Sites: 3 (1 Connected, 1 Stale, 0 Unreachable, 1 Pending)"),
        "{table}"
    );
    assert!(!table.contains('\x1b'), "no colour without a TTY");

    for (args, expect) in [
        (vec!["status", "--tier", "critical"], vec!["site-a"]),
        (vec!["status", "--environment", "staging"], vec!["site-b"]),
        (vec!["status", "--region", "us-east-1"], vec!["site-b"]),
        (vec!["status", "--phase", "Pending"], vec!["site-c"]),
        (
            vec!["status", "--phase", "Connected", "--tier", "critical"],
            vec!["site-a"],
        ),
        (
            vec!["status", "-l", "federation.kubectl-fleet.dev/site=site-c"],
            vec!["site-c"],
        ),
        (vec!["status", "site-c", "site-a"], vec!["site-a", "site-c"]),
    ] {
        let out = hub.fleet(&args).ok().stdout;
        assert_eq!(first_column(&out), expect, "{args:?}\n{out}");
    }

    let wide = hub.fleet(&["status", "-o", "wide"]).ok().stdout;
    let header = wide.lines().next().unwrap();
    for column in ["REGION", "VERSION", "K8S", "TOKEN EXPIRES"] {
        assert!(header.contains(column), "{header}");
    }
    assert!(
        wide.lines()
            .any(|l| l.starts_with("site-a") && l.contains("eu-west-1")),
        "{wide}"
    );
}
}

on_both_lanes! {
async fn json_and_yaml_reports_are_the_documented_schema(lane) {
    let hub = fleet_of_three(lane).await;
    let report = hub.fleet(&["status", "-o", "json"]).ok().json();
    assert_eq!(report["kind"], "StatusReport");
    let names: Vec<&str> = report["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["site-a", "site-b", "site-c"]);
    assert_eq!(report["sites"][0]["phase"], "Connected");
    assert_eq!(report["sites"][0]["nodeCount"], 3);
    assert_eq!(
        report["sites"][2]["lastHeartbeatTime"],
        serde_json::Value::Null
    );
    assert_eq!(report["summary"]["sites"], 3);
    assert_eq!(
        report["summary"]["phases"],
        json!({ "connected": 1, "stale": 1, "unreachable": 0, "pending": 1, "sleeping": 0 })
    );

    let yaml = hub
        .fleet(&["status", "-o", "yaml", "--tier", "critical"])
        .ok()
        .stdout;
    let doc: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap();
    assert_eq!(doc["sites"].as_array().unwrap().len(), 1);
    assert_eq!(doc["sites"][0]["tier"], "critical");

    // Named sites: the same report, of those sites only, in name order.
    let named = hub
        .fleet(&["status", "-o", "json", "site-c", "site-a"])
        .ok()
        .json();
    assert_eq!(named["sites"][0]["name"], "site-a");
    assert_eq!(named["sites"][0]["nodeCount"], 3);
    assert_eq!(named["sites"][1]["name"], "site-c");
    assert_eq!(named["sites"].as_array().unwrap().len(), 2);
    assert_eq!(named["summary"]["sites"], 2);
}
}

#[tokio::test]
async fn colour_only_when_asked_or_on_a_terminal() {
    let hub = fleet_of_three(Lane::Sandbox).await;
    let coloured = hub.fleet(&["status", "--color", "always"]).ok().stdout;
    assert!(coloured.contains("\x1b["), "{coloured:?}");
    let plain = hub.fleet(&["status", "--color", "never"]).ok().stdout;
    assert!(!plain.contains('\x1b'));
    // --color=auto without a TTY: plain even without NO_COLOR.
    let out = Command::new(BIN)
        .args(["--kubeconfig", hub.kubeconfig.to_str().unwrap(), "status"])
        .env_remove("NO_COLOR")
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    assert!(!String::from_utf8(out.stdout).unwrap().contains('\x1b'));
}

/// `kubectl-fleet status --watch -o OUTPUT` against the hub, its stdout piped.
fn watch_status(hub: &Hub, output: &str) -> std::process::Child {
    Command::new(BIN)
        .args(["--kubeconfig", hub.kubeconfig.to_str().unwrap()])
        .args(["status", "--watch", "-o", output])
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn watch_redraws_on_change_through_the_watch_api() {
    let hub = Hub::new();
    hub.register("site-a", &[]);
    let controls = hub.sandbox.controls();
    controls.clear_request_log();
    let mut child = watch_status(&hub, "wide");
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let wait_for = |needle: &str| {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) if line.starts_with(needle) => return line,
                Ok(_) => {}
                Err(e) => panic!("no line starting with {needle:?} from --watch: {e}"),
            }
        }
    };
    wait_for("site-a");
    hub.register("site-b", &["--tier", "critical"]);
    let row = wait_for("site-b");
    assert!(row.contains("critical"), "{row}");
    child.kill().unwrap();
    child.wait().unwrap();

    let log = controls.request_log();
    let watches = log
        .iter()
        .filter(|r| r.verb == "watch" && r.path.ends_with("/federatedclusters"))
        .count();
    let lists = log
        .iter()
        .filter(|r| r.verb == "list" && r.path.ends_with("/federatedclusters"))
        .count();
    assert!(watches >= 1, "status --watch must use the watch API");
    assert!(lists <= 1, "one initial list, no polling: {lists} lists");
}

/// A burst of changes (a large fleet heartbeats many times a second) is
/// drawn as one frame once it is taken in, not one frame per change; the
/// last frame shows the last change, and a deleted site leaves it.
#[tokio::test]
async fn watch_draws_a_burst_of_changes_as_few_frames_ending_in_the_last() {
    let hub = Hub::new();
    hub.register("site-a", &[]);
    hub.register("site-b", &[]);
    let mut child = watch_status(&hub, "json");
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for frame in serde_json::Deserializer::from_reader(stdout).into_iter::<serde_json::Value>()
        {
            if tx.send(frame.unwrap()).is_err() {
                break;
            }
        }
    });
    let next_frame = || {
        rx.recv_timeout(Duration::from_secs(20))
            .expect("a frame from --watch")
    };
    let first = next_frame();
    assert_eq!(first["summary"]["sites"], 2, "{first}");

    const CHANGES: i64 = 40;
    let api: Api<FederatedCluster> = Api::all(hub.admin().await);
    for i in 1..=CHANGES {
        api.patch_status(
            "site-a",
            &PatchParams::default(),
            &Patch::Merge(&json!({ "status": { "nodeCount": i } })),
        )
        .await
        .unwrap();
    }
    api.delete("site-b", &Default::default()).await.unwrap();
    let mut frames = 0;
    loop {
        let frame = next_frame();
        frames += 1;
        let sites = frame["sites"].as_array().unwrap();
        if sites.len() == 1 && sites[0]["nodeCount"] == CHANGES {
            assert_eq!(frame["summary"]["sites"], 1, "{frame}");
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // One frame per change would be 41; the burst takes well under a
    // second on loopback, so it spans a few frames at most.
    assert!(frames <= 5, "{frames} frames for {} changes", CHANGES + 1);
}

/// On a terminal the table is redrawn without any change, like `watch`,
/// so a site that stopped reporting shows its heartbeat age growing.
#[tokio::test]
async fn watch_on_a_terminal_moves_the_ages_on_without_changes() {
    use std::io::Read as _;
    let hub = Hub::new();
    hub.register("site-a", &[]);
    let five_seconds_ago = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(5);
    set_status(
        &hub,
        "site-a",
        json!({ "phase": "Connected", "lastHeartbeatTime": five_seconds_ago.to_string() }),
    )
    .await;
    let command = format!(
        "{BIN} --kubeconfig {} status --watch",
        hub.kubeconfig.display()
    );
    let mut child = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("util-linux script");
    let mut stdout = child.stdout.take().unwrap();
    let shown = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = shown.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = stdout.read(&mut buf) {
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    // The distinct rows of site-a drawn so far, one per frame.
    let rows = || {
        let text = String::from_utf8_lossy(&shown.lock().unwrap()).into_owned();
        let rows: std::collections::BTreeSet<String> = text
            .split("\x1b[2J\x1b[H")
            .filter_map(|frame| frame.lines().find(|l| l.starts_with("site-a")))
            .map(|l| l.trim_end().to_owned())
            .collect();
        (rows, text)
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while rows().0.len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let (rows, text) = rows();
    assert!(
        rows.len() >= 2,
        "the row of a quiet site was drawn once, its age never moved: {text:?}"
    );
}

#[tokio::test]
async fn a_closed_pipe_ends_quietly_with_exit_0() {
    // `kubectl fleet status -o json | head -c 0`: the reader is gone before
    // the report is written, so every write meets EPIPE.
    let hub = fleet_of_three(Lane::Sandbox).await;
    let kubeconfig = hub.kubeconfig.to_str().unwrap().to_owned();
    let mut child = Command::new(BIN)
        .args(["--kubeconfig", &kubeconfig, "status", "-o", "json"])
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "exit {:?}", out.status);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

on_both_lanes! {
/// A fleet larger than one list page: `status` reads it in pages
/// (`limit`/`continue`) and still shows every site once, sorted, with the
/// totals of all of them, and the label selector applies on every page.
async fn a_fleet_of_several_pages_is_complete_and_sorted(lane) {
    use futures::StreamExt as _;
    use kube::api::PostParams;
    use kubectl_fleet::api::{FederatedClusterSpec, Tier};
    use kubectl_fleet::k8s::SITE_PAGE_SIZE;

    let hub = Hub::on(lane);
    let api: Api<FederatedCluster> = Api::all(hub.admin().await);
    let n = 2 * SITE_PAGE_SIZE as usize + 7;
    // Created in a shuffled order, so name order is the server's doing.
    futures::stream::iter((0..n).map(|i| (i * 7919) % n))
        .map(|i| {
            let api = api.clone();
            async move {
                let mut site = FederatedCluster::new(
                    &format!("page-site-{i:04}"),
                    FederatedClusterSpec {
                        tier: if i % 2 == 0 {
                            Tier::Critical
                        } else {
                            Tier::Standard
                        },
                        ..Default::default()
                    },
                );
                site.metadata.labels = Some([("half".to_owned(), (i % 2).to_string())].into());
                api.create(&PostParams::default(), &site).await.unwrap();
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    hub.sandbox.controls().clear_request_log();

    let report = hub.fleet(&["status", "-o", "json"]).ok().json();
    let names: Vec<&str> = report["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = (0..n).map(|i| format!("page-site-{i:04}")).collect();
    assert_eq!(names, expected);
    assert_eq!(report["summary"]["sites"], n);
    assert_eq!(report["summary"]["phases"]["pending"], n);
    let lists: Vec<String> = hub
        .sandbox
        .controls()
        .request_log()
        .into_iter()
        .filter(|r| r.verb == "list" && r.path.ends_with("/federatedclusters"))
        .map(|r| r.query)
        .collect();
    assert_eq!(lists.len(), 3, "{lists:?}");
    assert!(lists.iter().all(|q| q.contains("limit=500")), "{lists:?}");
    assert!(
        lists[1..].iter().all(|q| q.contains("continue=")),
        "{lists:?}"
    );

    let table = hub.fleet(&["status", "-l", "half=1"]).ok().stdout;
    let odd: Vec<String> = expected.iter().skip(1).step_by(2).cloned().collect();
    assert_eq!(first_column(&table), odd);
    assert!(
        table.contains(&format!("Sites: {} (0 Connected", odd.len())),
        "{table}"
    );
    let yaml = hub
        .fleet(&["status", "-o", "yaml", "--tier", "critical"])
        .ok()
        .stdout;
    let doc: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap();
    assert_eq!(doc["sites"].as_array().unwrap().len(), n.div_ceil(2));
    assert_eq!(doc["summary"]["sites"], n.div_ceil(2));
}
}
