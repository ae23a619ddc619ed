//! Bad input fails with ONE line saying what failed and what to do, a
//! non-zero exit code, and nothing a re-run cannot fix.

mod cli_support;

use cli_support::{Hub, TempDir, run_bin};
use kube::api::Api;
use kube_sandbox::SandboxOptions;
use kubectl_fleet::api::FederatedCluster;

#[test]
fn invalid_arguments_are_rejected_before_any_api_call() {
    let hub = Hub::new();
    let controls = hub.sandbox.controls();
    controls.clear_request_log();
    for (args, expect) in [
        (vec!["register", "Site_A"], "DNS-1123"),
        (vec!["register", "-site"], "error:"),
        (
            vec!["register", "site-a", "--tier", "gold"],
            "critical, standard, non-critical",
        ),
        (
            vec!["register", "site-a", "--heartbeat-interval", "5"],
            "10..=3600",
        ),
        (
            vec!["register", "site-a", "--heartbeat-interval", "3601"],
            "10..=3600",
        ),
        (
            vec!["register", "site-a", "--token-ttl", "forever"],
            "duration",
        ),
        (
            vec!["register", "site-a", "--token-ttl", "5m"],
            "shorter than 10m, the shortest token lifetime the API server issues",
        ),
        (
            vec!["rotate", "site-a", "--token-ttl", "599s"],
            "shorter than 10m",
        ),
        (vec!["status", "-o", "xml"], "table, wide, json, yaml"),
    ] {
        let run = hub.fleet(&args);
        let line = run.one_line_error();
        assert!(line.contains(expect), "{args:?}: {line}");
        assert_eq!(run.code, 2, "usage errors exit 2: {args:?}");
    }
    assert!(
        controls.request_log().is_empty(),
        "no request reached the hub"
    );
}

#[test]
fn unreadable_kubeconfig() {
    let dir = TempDir::new("bad");
    let missing = dir.path().join("nope.kubeconfig");
    let run = run_bin(
        &["--kubeconfig", missing.to_str().unwrap(), "status"],
        dir.path(),
    );
    let line = run.one_line_error();
    assert!(
        line.contains("failed to load kubeconfig") && line.contains("nope.kubeconfig"),
        "{line}"
    );
    assert!(line.contains("--kubeconfig"), "hint names the flag: {line}");

    let garbage = dir.path().join("garbage.kubeconfig");
    std::fs::write(&garbage, "clusters: [ {").unwrap();
    let line = run_bin(
        &[
            "--kubeconfig",
            garbage.to_str().unwrap(),
            "register",
            "site-a",
        ],
        dir.path(),
    )
    .one_line_error();
    assert!(line.contains("failed to load kubeconfig"), "{line}");

    let line = run_bin(
        &[
            "--kubeconfig",
            missing.to_str().unwrap(),
            "register",
            "site-a",
            "--pull",
            "--member-kubeconfig",
            missing.to_str().unwrap(),
        ],
        dir.path(),
    )
    .one_line_error();
    assert!(line.contains("failed to load kubeconfig"), "{line}");
}

#[test]
fn unreadable_member_kubeconfig() {
    let hub = Hub::new();
    let missing = hub.dir.path().join("member-missing");
    let line = hub
        .fleet(&[
            "register",
            "site-p",
            "--pull",
            "--member-kubeconfig",
            missing.to_str().unwrap(),
        ])
        .one_line_error();
    assert!(
        line.contains("failed to read") && line.contains("member-missing"),
        "{line}"
    );
}

#[test]
fn unreachable_hub() {
    let dir = TempDir::new("unreachable");
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: x\nclusters:\n- name: x\n  cluster:\n    server: https://127.0.0.1:{port}\ncontexts:\n- name: x\n  context: {{cluster: x, user: x}}\nusers:\n- name: x\n  user: {{token: t}}\n"
        ),
    )
    .unwrap();
    let run = run_bin(
        &[
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "register",
            "site-a",
        ],
        dir.path(),
    );
    let line = run.one_line_error();
    assert!(
        line.contains(&format!(
            "cannot reach the API server at https://127.0.0.1:{port}"
        )),
        "{line}"
    );
    assert!(line.contains("check the server URL"), "{line}");
    assert_eq!(run.code, 1);
}

#[tokio::test]
async fn a_caller_without_rights_gets_403_and_leaves_nothing() {
    let hub = Hub::new();
    let summary = hub.register("site-a", &[]);
    let token = cli_support::token_of(summary["config"].as_str().unwrap());
    // The site identity is a real, authenticated caller with almost no rights.
    let run = hub.fleet_as(&token, &["register", "site-b"]);
    let line = run.one_line_error();
    assert!(line.contains("forbidden"), "{line}");
    assert!(line.contains("rights on the hub"), "{line}");
    let admin: Api<FederatedCluster> = Api::all(hub.admin().await);
    assert!(admin.get_opt("site-b").await.unwrap().is_none());
    // The admin's re-run then succeeds.
    hub.register("site-b", &[]);
}

#[test]
fn missing_crds_name_the_install_command() {
    let hub = Hub::bare(SandboxOptions::default());
    for args in [vec!["status"], vec!["register", "site-a"]] {
        let line = hub.fleet(&args).one_line_error();
        assert!(
            line.ends_with("run `kubectl fleet install --apply`"),
            "{args:?}: {line}"
        );
    }
    // Nothing was written before the check.
    hub.install_crds();
    let run = hub.fleet(&["status", "-o", "json"]).ok();
    assert_eq!(run.json()["sites"], serde_json::json!([]));
}
