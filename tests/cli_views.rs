//! What users see and type, through the real `kubectl` (the plugin on
//! PATH) and the built binary against kube-sandbox: maintenance windows
//! (`cordon`/`uncordon`) in every view, one incident by its id agreeing
//! with `status --incident`, edge versions, `-o name` and `-o jsonpath`,
//! and `--watch` on the terminal's alternate screen.

use crate::support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kube::api::{Api, Patch, PatchParams};
use kubectl_fleet::api::{FederatedCluster, FederationStatus};
use serde_json::json;
use support::{BIN, Hub, Lane, shell};

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

/// A judging hub and three Connected sites: a (eu-west-1, label zone=eu,
/// edge 0.2.0), b (eu-west-1, zone=eu, 0.2.0), c (us-east-1, zone=us, 0.1.0).
async fn fleet(lane: Lane) -> Hub {
    let hub = Hub::on(lane);
    for (site, region, version) in [
        ("site-a", "eu-west-1", "0.2.0"),
        ("site-b", "eu-west-1", "0.2.0"),
        ("site-c", "us-east-1", "0.1.0"),
    ] {
        hub.register(site, &["--region", region]);
        set_status(
            &hub,
            site,
            json!({
                "phase": "Connected",
                "lastHeartbeatTime": jiff::Timestamp::now().to_string(),
                "observedVersion": version,
            }),
        )
        .await;
    }
    // Labels as a team keeps them (what -l selects).
    shell(
        &hub,
        "kubectl label federatedclusters site-a site-b zone=eu && kubectl label federatedclusters site-c zone=us",
    )
    .ok();
    hub.record_hub_judgement("hub-a", jiff::Timestamp::now(), 3600)
        .await;
    hub
}

fn maintenance_of(hub: &Hub, site: &str) -> String {
    shell(
        hub,
        &format!("kubectl get federatedclusters {site} -o jsonpath='{{.spec.maintenance}}'"),
    )
    .ok()
    .stdout
}

on_both_lanes! {
async fn cordon_shows_in_every_view_survives_register_and_ends_by_itself(lane) {
    let hub = fleet(lane).await;
    let run = shell(
        &hub,
        "kubectl fleet cordon site-a --for 2h --reason 'kernel upgrade'",
    )
    .ok();
    assert!(
        run.stdout
            .starts_with("federatedcluster.federation.kubectl-fleet.dev/site-a cordoned until ")
            && run.stdout.contains("(in 120m): kernel upgrade"),
        "{}",
        run.stdout
    );
    // Recorded in the spec, as kubectl shows it.
    let window: serde_json::Value = serde_json::from_str(&maintenance_of(&hub, "site-a")).unwrap();
    assert_eq!(window["reason"], "kernel upgrade");
    let until: jiff::Timestamp = window["until"].as_str().unwrap().parse().unwrap();
    let left = until.duration_since(jiff::Timestamp::now()).as_secs();
    assert!((7000..=7200).contains(&left), "{window}");

    // status: the phase is still shown, marked; the footer counts it.
    let table = shell(&hub, "kubectl fleet status").ok().stdout;
    let cells = support::Table::parse(&table);
    assert_eq!(cells.cell("site-a", "PHASE"), "Connected,Maintenance", "{table}");
    assert_eq!(cells.cell("site-b", "PHASE"), "Connected", "{table}");
    assert!(table.contains(", 1 in maintenance\n"), "{table}");
    let wide = shell(&hub, "kubectl fleet status -o wide").ok().stdout;
    let maintenance = support::Table::parse(&wide).cell("site-a", "MAINTENANCE").to_owned();
    // Two hours from the cordon, in minutes: 119 or 120 by now.
    let left: u32 = maintenance
        .strip_suffix("m left")
        .and_then(|m| m.parse().ok())
        .unwrap_or_else(|| panic!("MAINTENANCE {maintenance:?}: {wide}"));
    assert!((118..=120).contains(&left), "{wide}");
    let report = shell(&hub, "kubectl fleet status -o json").ok().json();
    assert_eq!(report["sites"][0]["inMaintenance"], true);
    assert_eq!(report["sites"][0]["phase"], "Connected");
    assert_eq!(
        report["sites"][0]["maintenance"]["reason"],
        "kernel upgrade"
    );
    assert_eq!(report["sites"][1]["inMaintenance"], false);
    assert_eq!(report["summary"]["maintenance"], 1);
    let yaml = shell(&hub, "kubectl fleet status site-a -o yaml")
        .ok()
        .stdout;
    assert!(yaml.contains("inMaintenance: true"), "{yaml}");
    // describe
    let text = shell(&hub, "kubectl fleet describe site-a").ok().stdout;
    let line = text
        .lines()
        .find(|l| l.starts_with("Maintenance:"))
        .unwrap();
    assert!(
        line.contains("ends in 1") && line.contains(": kernel upgrade"),
        "{line}"
    );

    // A register re-run keeps the window.
    hub.register("site-a", &["--region", "eu-west-1"]);
    assert!(maintenance_of(&hub, "site-a").contains("kernel upgrade"));

    // uncordon ends it now; a second one says so and changes nothing.
    let run = shell(&hub, "kubectl fleet uncordon site-a").ok();
    assert_eq!(
        run.stdout,
        "federatedcluster.federation.kubectl-fleet.dev/site-a uncordoned\n"
    );
    assert_eq!(maintenance_of(&hub, "site-a"), "");
    let run = shell(&hub, "kubectl fleet uncordon site-a").ok();
    assert!(
        run.stdout.ends_with("site-a already uncordoned\n"),
        "{}",
        run.stdout
    );

    // A window ends by itself: nothing rewrites the spec, every view stops
    // showing it at `until`.
    shell(&hub, "kubectl fleet cordon site-b --for 2s").ok();
    let table = shell(&hub, "kubectl fleet status").ok().stdout;
    assert!(table.contains("Connected,Maintenance"), "{table}");
    std::thread::sleep(Duration::from_millis(3200));
    let table = shell(&hub, "kubectl fleet status").ok().stdout;
    assert!(
        !table.contains("Maintenance") && !table.contains("in maintenance"),
        "{table}"
    );
    let report = shell(&hub, "kubectl fleet status site-b -o json")
        .ok()
        .json();
    assert_eq!(report["sites"][0]["inMaintenance"], false);
    assert_eq!(report["sites"][0]["maintenance"]["endsInSeconds"], 0);
    let text = shell(&hub, "kubectl fleet describe site-b").ok().stdout;
    assert!(text.contains("Maintenance:        ended "), "{text}");
}
}

#[tokio::test]
async fn cordon_refuses_bad_windows_and_reasons_before_writing() {
    let hub = fleet(Lane::Sandbox).await;
    for (args, says) in [
        ("--for 0s", "does not end in the future"),
        ("--for=-1h", "does not end in the future"),
        ("--until 2020-01-01T00:00:00Z", "is not in the future"),
        ("--for 31d", "at most 30d"),
        (
            "--reason \"$(printf 'a\\033[2Jb')\"",
            "control or format characters",
        ),
        (
            &format!("--reason {}", "r".repeat(257)),
            "at most 256 characters",
        ),
    ] {
        let run = shell(&hub, &format!("kubectl fleet cordon site-a {args}"));
        let line = run.one_line_error();
        assert!(line.contains(says), "{args}: {line}");
        assert!(!line.contains('\x1b'), "{line:?}");
        assert_eq!(maintenance_of(&hub, "site-a"), "", "{args} wrote a window");
    }
    let line = shell(&hub, "kubectl fleet cordon site-a --until tomorrow").one_line_error();
    assert!(line.contains("RFC 3339"), "{line}");
    // A site that is not registered is named; the others are still done.
    let run = shell(&hub, "kubectl fleet cordon site-a nope --for 1h");
    let line = run.one_line_error();
    assert!(line.contains("site nope not registered"), "{line}");
    assert!(run.stdout.contains("site-a cordoned"), "{}", run.stdout);
}

#[tokio::test]
async fn cordon_by_selector_asks_first_like_every_bulk_command() {
    let hub = fleet(Lane::Sandbox).await;
    let line = shell(&hub, "kubectl fleet cordon -l zone=eu --for 1h").one_line_error();
    assert!(
        line.contains("refusing to cordon 2 site(s) matching -l zone=eu without confirmation")
            && line.contains("--yes"),
        "{line}"
    );
    assert_eq!(maintenance_of(&hub, "site-a"), "");
    let run = shell(&hub, "kubectl fleet cordon -l zone=eu --for 1h --yes").ok();
    assert_eq!(run.stdout.lines().count(), 2, "{}", run.stdout);
    let names = shell(
        &hub,
        "kubectl fleet status -o jsonpath='{.sites[?(@.inMaintenance==true)].name}'",
    )
    .ok()
    .stdout;
    assert_eq!(names, "site-a site-b");
    let line = shell(&hub, "kubectl fleet uncordon -l zone=nowhere --yes").one_line_error();
    assert!(line.contains("no site matches"), "{line}");
    shell(&hub, "kubectl fleet uncordon -l zone=eu --yes").ok();
    assert_eq!(maintenance_of(&hub, "site-b"), "");
}

/// Writes the hub's incidents into the FederationStatus as a hub would:
/// a correlation over a and b, a cascade from c into a (no stored id, as
/// an older hub wrote it) and a grouped outage of a, b.
async fn write_incidents(hub: &Hub) -> String {
    let now = jiff::Timestamp::now().to_string();
    let api: Api<FederationStatus> = Api::all(hub.admin().await);
    api.patch_status(
        "fleet",
        &PatchParams::default(),
        &Patch::Merge(&json!({ "status": {
            "correlations": [{
                "id": "xc-0000000a", "signal": "OOMKilled", "severity": "critical",
                "originalSeverity": "high", "clusters": ["site-a", "site-b"],
                "firstSeen": now, "lastSeen": now,
            }],
            "cascades": [{
                "source": "site-c", "target": "site-a",
                "sourceEnvironment": "staging", "targetEnvironment": "production",
                "sourceTier": "standard", "targetTier": "critical",
                "signal": "CrashLoopBackOff", "workload": {"kind": "Deployment", "name": "web"},
                "sourceFirstSeen": now, "targetFirstSeen": now, "deltaSeconds": 60,
            }],
            "outages": [{
                "id": "go-0000000b", "groupBy": "region", "value": "eu-west-1",
                "clusters": ["site-a", "site-b"], "since": now,
            }],
        }})),
    )
    .await
    .unwrap();
    // The cascade's id, as the list shows it.
    let list = shell(hub, "kubectl fleet incidents -o json").ok().json();
    list["cascades"][0]["id"].as_str().unwrap().to_owned()
}

on_both_lanes! {
async fn incidents_id_and_status_incident_agree(lane) {
    let hub = fleet(lane).await;
    let oom = json!([{
        "type": "OOMKilled", "severity": "high", "namespace": "ns",
        "workload": {"kind": "Deployment", "name": "x"}, "count": 1,
        "firstSeen": jiff::Timestamp::now().to_string(), "lastSeen": jiff::Timestamp::now().to_string(),
    }]);
    set_status(&hub, "site-a", json!({ "signals": oom })).await;
    let cc = write_incidents(&hub).await;
    assert!(cc.starts_with("cc-") && cc.len() == 11, "{cc}");
    for (id, kind, sites) in [
        ("xc-0000000a", "Correlation", vec!["site-a", "site-b"]),
        (cc.as_str(), "Cascade", vec!["site-a", "site-c"]),
        ("go-0000000b", "GroupedOutage", vec!["site-a", "site-b"]),
    ] {
        let one = shell(&hub, &format!("kubectl fleet incidents {id} -o json"))
            .ok()
            .json();
        assert_eq!(one["type"], kind);
        assert_eq!(one["id"], id);
        let named: Vec<&str> = one["sites"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(named, sites, "{id}");
        let listed = shell(
            &hub,
            &format!("kubectl fleet status --incident {id} -o name"),
        )
        .ok()
        .stdout;
        let expected: String = sites
            .iter()
            .map(|s| format!("federatedcluster.federation.kubectl-fleet.dev/{s}\n"))
            .collect();
        assert_eq!(listed, expected, "{id}");
        let text = shell(&hub, &format!("kubectl fleet incidents {id}"))
            .ok()
            .stdout;
        assert!(
            text.starts_with(&format!("ID:          {id}\nType:        {kind}\n")),
            "{text}"
        );
        assert!(
            text.contains(&format!("Sites ({}):", sites.len())),
            "{text}"
        );
    }
    let one = shell(&hub, "kubectl fleet incidents xc-0000000a -o json")
        .ok()
        .json();
    assert_eq!(
        one["signals"].as_array().unwrap().len(),
        1,
        "the member signal"
    );
    assert_eq!(one["signals"][0]["cluster"], "site-a");
    let list = shell(&hub, "kubectl fleet incidents").ok().stdout;
    assert!(
        list.contains("GROUPED OUTAGES") && list.contains("go-0000000b"),
        "{list}"
    );
    assert!(list.contains(&cc), "{list}");

    // Unknown and malformed ids: one line, exit 1.
    for cmd in ["incidents xc-ffffffff", "status --incident xc-ffffffff"] {
        let run = shell(&hub, &format!("kubectl fleet {cmd}"));
        assert_eq!(run.code, 1, "{cmd}");
        let line = run.one_line_error();
        assert!(line.contains("incident xc-ffffffff not found"), "{line}");
    }
    let line = shell(&hub, "kubectl fleet incidents xc-12").one_line_error();
    assert!(line.contains("xc-XXXXXXXX"), "{line}");
}
}

/// 60 sites that went dark together in one region, each with the same
/// signal (20 of them critical): a correlation and a grouped outage of 60
/// sites, more than the hub's FederationStatus names per incident. The
/// object names 50 and counts 60; every view names all 60, read from the
/// sites themselves.
#[tokio::test]
async fn a_cut_incident_is_named_whole_in_every_view() {
    use kubectl_fleet::api::{FederatedClusterSpec, MAX_INCIDENT_CLUSTERS, Tier};
    use kubectl_fleet::k8s::federation_status::{
        create_federation_status, replace_federation_status,
    };
    use kubectl_fleet::operator::federation::{FederationConfig, next_summary};
    let hub = Hub::new();
    let api: Api<FederatedCluster> = Api::all(hub.admin().await);
    // Last heard 8 minutes ago: Unreachable, and its signals still
    // evidence (a signal counts as seen no later than its site was heard).
    let seen = (jiff::Timestamp::now() - jiff::SignedDuration::from_secs(480)).to_string();
    let names: Vec<String> = (0..60).map(|i| format!("site-{i:02}")).collect();
    for (i, name) in names.iter().enumerate() {
        let spec = FederatedClusterSpec {
            tier: if i % 3 == 0 {
                Tier::Critical
            } else {
                Tier::Standard
            },
            region: Some("eu-west-1".into()),
            ..Default::default()
        };
        api.create(&Default::default(), &FederatedCluster::new(name, spec))
            .await
            .unwrap();
        set_status(
            &hub,
            name,
            json!({
                "phase": "Unreachable",
                "phaseTransitionTime": seen,
                "lastHeartbeatTime": seen,
                "signals": [{
                    "type": "OOMKilled", "severity": "high", "namespace": "ns",
                    "workload": {"kind": "Deployment", "name": "x"}, "count": 1,
                    "firstSeen": seen, "lastSeen": seen,
                }],
            }),
        )
        .await;
    }
    // The summary as the hub writes it.
    let sites = api.list(&Default::default()).await.unwrap().items;
    let cfg = FederationConfig::default();
    let written = next_summary(&sites, &[], jiff::Timestamp::now(), &cfg).written;
    let fs: Api<FederationStatus> = Api::all(hub.admin().await);
    let mut obj = create_federation_status(&fs, &FederationStatus::singleton(written.clone()))
        .await
        .unwrap();
    obj.status = Some(written);
    replace_federation_status(&fs, &obj).await.unwrap();
    hub.record_hub_judgement("hub-a", jiff::Timestamp::now(), 3600)
        .await;

    // The object names 50 of each and counts 60.
    let stored = shell(&hub, "kubectl get federationstatus fleet -o json")
        .ok()
        .json();
    let xc = stored["status"]["correlations"][0].clone();
    let go = stored["status"]["outages"][0].clone();
    for incident in [&xc, &go] {
        assert_eq!(
            incident["clusters"].as_array().unwrap().len(),
            MAX_INCIDENT_CLUSTERS
        );
        assert_eq!(incident["clustersTotal"], 60);
    }
    let critical = xc["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n.as_str().unwrap()[5..].parse::<usize>().unwrap() % 3 == 0)
        .count();
    assert_eq!(critical, 20, "every critical site is among those named");
    // `kubectl get` shows the phase counts, Pending included.
    let table = shell(&hub, "kubectl get federationstatus").ok().stdout;
    assert!(
        table.starts_with("NAME    CLUSTERS   CONNECTED   STALE   UNREACHABLE   PENDING   ISSUES"),
        "{table}"
    );

    // Every view names all 60: the list, one incident, status --incident,
    // and the list for a selection of sites.
    let all = serde_json::json!(names);
    let list = shell(&hub, "kubectl fleet incidents -o json").ok().json();
    assert_eq!(list["correlations"][0]["clusters"], all);
    assert_eq!(list["outages"][0]["clusters"], all);
    assert_eq!(list["correlations"][0]["clustersTotal"], 60);
    let some = shell(&hub, "kubectl fleet incidents -l nothing=here -o json")
        .ok()
        .json();
    assert_eq!(some["correlations"][0]["clusters"], all);
    for id in [xc["id"].as_str().unwrap(), go["id"].as_str().unwrap()] {
        let one = shell(&hub, &format!("kubectl fleet incidents {id} -o json"))
            .ok()
            .json();
        assert_eq!(one["sites"].as_array().unwrap().len(), 60, "{id}");
        let listed = shell(
            &hub,
            &format!("kubectl fleet status --incident {id} -o name"),
        )
        .ok()
        .stdout;
        assert_eq!(listed.lines().count(), 60, "{id}: {listed}");
    }
    let text = shell(&hub, "kubectl fleet incidents").ok().stdout;
    assert!(!text.contains("more"), "{text}");
}

#[tokio::test]
async fn edge_versions_in_the_footer_and_the_version_filter() {
    let hub = fleet(Lane::Sandbox).await;
    let table = shell(&hub, "kubectl fleet status").ok().stdout;
    assert!(table.contains("\nEdges: 0.2.0 ×2, 0.1.0 ×1\n"), "{table}");
    let report = shell(&hub, "kubectl fleet status -o json").ok().json();
    assert_eq!(
        report["summary"]["edgeVersions"],
        json!({"0.1.0": 1, "0.2.0": 2})
    );
    let names = shell(&hub, "kubectl fleet status --version 0.2.0 -o name")
        .ok()
        .stdout;
    assert_eq!(
        names,
        "federatedcluster.federation.kubectl-fleet.dev/site-a\nfederatedcluster.federation.kubectl-fleet.dev/site-b\n"
    );
    let v = shell(
        &hub,
        "kubectl fleet status --version v0.1.0 -o jsonpath='{.sites[*].name}'",
    )
    .ok()
    .stdout;
    assert_eq!(v, "site-c");
    let line = shell(&hub, "kubectl fleet status --version '0.1 .0'").one_line_error();
    assert!(line.contains("--version"), "{line}");
}

#[tokio::test]
async fn output_name_is_kubectls_and_jsonpath_runs_over_the_report() {
    let hub = fleet(Lane::Sandbox).await;
    let ours = shell(&hub, "kubectl fleet status -o name").ok().stdout;
    let kubectls = shell(&hub, "kubectl get federatedclusters -o name")
        .ok()
        .stdout;
    assert_eq!(ours, kubectls);
    let selected = shell(&hub, "kubectl fleet status -l zone=us -o name")
        .ok()
        .stdout;
    assert_eq!(
        selected,
        "federatedcluster.federation.kubectl-fleet.dev/site-c\n"
    );
    let text = shell(
        &hub,
        r#"kubectl fleet status -o jsonpath='{range .sites[*]}{.name}{"\t"}{.phase}{"\n"}{end}{.summary.sites}'"#,
    )
    .ok()
    .stdout;
    assert_eq!(
        text,
        "site-a\tConnected\nsite-b\tConnected\nsite-c\tConnected\n3"
    );
    let line = shell(&hub, "kubectl fleet status -o 'jsonpath={.sites[*].name'").one_line_error();
    assert!(line.contains("invalid jsonpath template"), "{line}");
    let line = shell(
        &hub,
        "kubectl fleet status -o jsonpath='{.items[*].metadata.name}'",
    )
    .one_line_error();
    assert!(
        line.contains("reads .items") && line.contains("{.sites[*].name}"),
        "{line}"
    );
    let line = shell(&hub, "kubectl fleet status -o jsonpath").one_line_error();
    assert!(line.contains("needs a template"), "{line}");
    let line = shell(&hub, "kubectl fleet status -o xml").one_line_error();
    assert!(
        line.contains("table, wide, json, yaml, name, jsonpath="),
        "{line}"
    );
}

/// On a terminal `--watch` draws on the alternate screen and gives the
/// screen back on Ctrl-C, exiting 0.
#[tokio::test]
async fn watch_on_a_terminal_uses_the_alternate_screen_and_restores_it() {
    use std::io::{Read as _, Write as _};
    let hub = fleet(Lane::Sandbox).await;
    // `exec`: the shell `script` starts must not stay in the terminal's
    // foreground group, where Ctrl-C would kill it (exit 130) whatever the
    // plugin does.
    let command = format!(
        "exec {BIN} --kubeconfig {} status --watch",
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
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = stdout.read(&mut buf) {
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    let text = || String::from_utf8_lossy(&shown.lock().unwrap()).into_owned();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !text().contains("site-c") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(text().contains("site-c"), "no frame: {:?}", text());
    // Ctrl-C, typed on the terminal.
    child.stdin.as_mut().unwrap().write_all(b"\x03").unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "still watching after Ctrl-C: {:?}",
            text()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    reader.join().unwrap();
    let all = text();
    assert!(status.success(), "exit {status:?}: {all:?}");
    let enter = all
        .find("\x1b[?1049h")
        .expect("entered the alternate screen");
    let frame = all.find("site-c").unwrap();
    let leave = all.rfind("\x1b[?1049l").expect("left the alternate screen");
    assert!(enter < frame && frame < leave, "{all:?}");
    assert!(
        !all[leave..].contains("site-c"),
        "nothing drawn after leaving: {all:?}"
    );
}
