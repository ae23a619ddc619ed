//! Bad input fails with ONE line saying what failed and what to do, a
//! non-zero exit code, and nothing a re-run cannot fix.

use crate::support;

use kube::api::Api;
use kube_sandbox::SandboxOptions;
use kubectl_fleet::api::FederatedCluster;
use support::{Hub, TempDir, run_bin};

#[test]
fn invalid_arguments_are_rejected_before_any_api_call() {
    let hub = Hub::new();
    let long_region = "a".repeat(64);
    let long_name = "n".repeat(129);
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
        (
            vec!["register", "site-a", "--region", "us east"],
            "invalid value 'us east' for '--region <REGION>': must be letters, digits",
        ),
        (
            vec!["register", "site-a", "--region", &long_region],
            "must be at most 63 characters",
        ),
        (
            vec![
                "register",
                "site-a",
                "--display-name",
                "evil\u{1b}]0;pwned\u{7}",
            ],
            r"invalid value 'evil\x1b]0;pwned\x07' for '--display-name <TEXT>': must not contain control or format characters",
        ),
        (
            vec!["register", "site-a", "--display-name", &long_name],
            "must be at most 128 characters",
        ),
        (
            vec!["register", "site-a", "--pull", "--push"],
            "cannot be used with",
        ),
        (
            vec!["register", "site-a", "--member-kubeconfig", "m.kubeconfig"],
            "--pull",
        ),
        (
            vec!["register", "site-a", "--pull", "--output-file", "x"],
            "cannot be used with",
        ),
    ] {
        let run = hub.fleet(&args);
        let line = run.one_line_error();
        assert!(line.contains(expect), "{args:?}: {line}");
        assert!(!line.contains('\u{1b}'), "{args:?}: {line}");
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
    assert!(
        line.contains("No such file or directory"),
        "the cause: {line}"
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
    let token = support::token_of(summary["config"].as_str().unwrap());
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

/// A hub kubeconfig pointing at a cluster without the fleet CRDs: the
/// hint says to check that it is the hub, and its install command runs as
/// written.
#[test]
fn missing_crds_name_the_install_command() {
    let hub = Hub::bare(SandboxOptions::default());
    let server = hub.sandbox.url();
    for args in [vec!["status"], vec!["register", "site-a"]] {
        let line = hub.fleet(&args).one_line_error();
        assert!(
            line.ends_with(&format!(
                "check that --kubeconfig/--context point at the hub; if {server} is the hub, run `kubectl fleet install --apply`"
            )),
            "{args:?}: {line}"
        );
        assert!(!line.contains("Status {"), "no Debug dump: {line}");
    }
    // Nothing was written before the check; the hint's command installs.
    support::shell(&hub, "kubectl fleet install --apply").ok();
    let run = hub.fleet(&["status", "-o", "json"]).ok();
    assert_eq!(run.json()["sites"], serde_json::json!([]));
}

/// Found in use: `--member-context nope` named the hub's flags. The error names
/// the member flags and lists the contexts there are; nothing is written.
#[test]
fn an_unknown_member_context_names_the_member_flags_and_the_contexts() {
    let hub = Hub::new();
    let member = kube_sandbox::Sandbox::start();
    let member_kc = hub.dir.path().join("member.kubeconfig");
    member.write_admin_kubeconfig(&member_kc).unwrap();
    let contexts = kube::config::Kubeconfig::read_from(&member_kc)
        .unwrap()
        .contexts;
    let names: Vec<&str> = contexts.iter().map(|c| c.name.as_str()).collect();
    hub.sandbox.controls().clear_request_log();
    let line = hub
        .fleet(&[
            "register",
            "site-p",
            "--pull",
            "--member-kubeconfig",
            member_kc.to_str().unwrap(),
            "--member-context",
            "nope",
        ])
        .one_line_error();
    assert_eq!(
        line,
        format!(
            "error: --member-kubeconfig {} has no context \"nope\" (its contexts: {}): pass --member-context with one of them, or a --member-kubeconfig that has that context",
            member_kc.display(),
            names.join(", ")
        )
    );
    assert!(
        hub.sandbox
            .controls()
            .request_log()
            .iter()
            .all(|r| r.verb == "get"),
        "only the site was read on the hub"
    );
    assert!(
        member.controls().request_log().is_empty(),
        "the member was not asked"
    );
    // The hub's own --context names the hub's flags.
    let line = hub.fleet(&["--context", "nope", "status"]).one_line_error();
    assert!(
        line.ends_with("pass --context with one of them, or a --kubeconfig that has that context"),
        "{line}"
    );
}

/// kubectl skips a file of a KUBECONFIG list that does not exist; so does
/// the plugin. When none exists, the error names them.
#[test]
fn a_missing_file_in_a_kubeconfig_list_is_skipped_as_kubectl_does() {
    let hub = Hub::new();
    let missing = hub.dir.path().join("gone.kubeconfig");
    let list = format!("{}:{}", missing.display(), hub.kubeconfig.display());
    let script = format!(
        "KUBECONFIG={list} kubectl get federatedclusters && KUBECONFIG={list} kubectl fleet status"
    );
    let run = support::shell(&hub, &script).ok();
    assert!(run.stderr.contains("No sites found"), "{}", run.stderr);
    let run = support::shell(
        &hub,
        &format!("KUBECONFIG={} kubectl fleet status", missing.display()),
    );
    let line = run.one_line_error();
    assert_eq!(
        line,
        format!(
            "error: failed to load kubeconfig: none of the files KUBECONFIG lists exists ({}): pass a readable kubeconfig with --kubeconfig or KUBECONFIG, and an existing --context",
            missing.display()
        )
    );
}
