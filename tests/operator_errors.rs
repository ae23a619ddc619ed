//! What `fleet-operator` says when it cannot run, and what its edge refuses,
//! as a user meets it: one line that carries its cause, and a hint that
//! applies — run as written where it is a command.

use crate::support;

use std::process::{Command, Stdio};
use std::time::Duration;

use kube::api::Api;
use kube_sandbox::Sandbox;
use kubectl_fleet::api::FederatedCluster;
use support::*;

/// Runs the operator to its exit (it fails at start), with `KUBECONFIG`
/// set to `kubeconfig_env` (unset when None); returns the exit code and the
/// lines of stderr that start with `error:`.
fn run_to_failure(args: &[&str], kubeconfig_env: Option<&str>) -> (Option<i32>, Vec<String>) {
    let mut cmd = Command::new(operator_bin());
    cmd.args(args)
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    if let Some(value) = kubeconfig_env {
        cmd.env("KUBECONFIG", value);
    }
    let out = cmd.output().expect("run fleet-operator");
    let stderr = String::from_utf8(out.stderr).unwrap();
    let errors = stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .map(str::to_owned)
        .collect();
    (out.status.code(), errors)
}

const LOOPBACK: [&str; 4] = [
    "--health-addr",
    "127.0.0.1:0",
    "--secure-addr",
    "127.0.0.1:0",
];

/// Found in use: "error: starting the HTTP servers" did not say that the port
/// was taken (every second operator on one machine hits it).
#[test]
fn a_port_in_use_is_named_with_its_cause() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    for flag in ["--secure-addr", "--health-addr"] {
        let other = if flag == "--secure-addr" {
            "--health-addr"
        } else {
            "--secure-addr"
        };
        let (code, errors) = run_to_failure(
            &[flag, &addr, other, "127.0.0.1:0", "--kubeconfig", "/unused"],
            None,
        );
        assert_eq!(code, Some(1));
        assert_eq!(errors.len(), 1, "{errors:?}");
        let line = &errors[0];
        assert!(
            line.starts_with(&format!(
                "error: starting the HTTP servers: binding {addr}: "
            )),
            "{line}"
        );
        assert!(
            line.to_lowercase().contains("address already in use"),
            "the cause: {line}"
        );
    }
}

/// Found in use: "error: loading the Kubernetes client configuration" did not
/// say which file, nor why.
#[test]
fn a_missing_kubeconfig_is_named_with_the_os_error() {
    let mut args = LOOPBACK.to_vec();
    args.extend(["--kubeconfig", "/nonexistent/hub.kubeconfig"]);
    let (code, errors) = run_to_failure(&args, None);
    assert_eq!(code, Some(1));
    assert_eq!(
        errors,
        [
            "error: loading the Kubernetes client configuration: failed to load kubeconfig /nonexistent/hub.kubeconfig: No such file or directory (os error 2)"
        ]
    );
    let (code, errors) = run_to_failure(&LOOPBACK, Some("/nonexistent/a:/nonexistent/b"));
    assert_eq!(code, Some(1));
    assert_eq!(
        errors,
        [
            "error: loading the Kubernetes client configuration: failed to load kubeconfig: none of the files KUBECONFIG lists exists (/nonexistent/a, /nonexistent/b)"
        ]
    );
}

/// kubectl skips a file of a `KUBECONFIG` list that does not exist; so does
/// the operator, which then runs against the file that does.
#[tokio::test]
async fn a_missing_file_in_a_kubeconfig_list_is_skipped() {
    let dir = TempDir::new("kclist");
    let hub = Sandbox::start();
    let hub_kc = dir.join("hub.kubeconfig");
    hub.write_admin_kubeconfig(&hub_kc).unwrap();
    install_crds(&admin(&hub).await).await;
    let list = format!(
        "{}:{}",
        dir.join("gone.kubeconfig").display(),
        hub_kc.display()
    );
    let mut args: Vec<String> = LOOPBACK.iter().map(|s| s.to_string()).collect();
    args.push("--leader-elect=false".into());
    let op = Proc::spawn_with_env(
        "hub",
        &operator_bin(),
        &args,
        dir.join("hub.log"),
        &[("KUBECONFIG", &list)],
    );
    wait_until(Duration::from_secs(20), "the hub starts", || async {
        op.log_text().contains("hub started")
    })
    .await;
    assert!(!op.log_text().contains("error"), "{}", op.log_text());
}

/// Found in use: an edge whose hub kubeconfig points at a member cluster was
/// told "CRD not found: run `kubectl fleet install --apply`", inviting a
/// hub install on a member. It is told to check its hub kubeconfig.
#[test]
fn an_edge_pointed_at_a_cluster_without_the_fleet_api_checks_its_hub_kubeconfig() {
    let dir = TempDir::new("nothub");
    let member = Sandbox::start();
    let member_kc = dir.join("member.kubeconfig");
    member.write_admin_kubeconfig(&member_kc).unwrap();
    let member_kc = member_kc.to_str().unwrap();
    let mut args = LOOPBACK.to_vec();
    args.extend([
        "--federation-role",
        "edge",
        "--site",
        "site-a",
        "--kubeconfig",
        member_kc,
        "--hub-kubeconfig",
        member_kc,
    ]);
    let (code, errors) = run_to_failure(&args, None);
    assert_eq!(code, Some(1));
    assert_eq!(
        errors,
        [format!(
            "error: the hub kubeconfig {member_kc} points at {}, a cluster without the fleet API (federatedclusters.federation.kubectl-fleet.dev): check --hub-kubeconfig and its current context (it must be the hub kubeconfig `kubectl fleet register` printed for this site)",
            member.url()
        )]
    );
}

/// Found in use: the edge's own hub kubeconfig still honoured `exec`. Refused,
/// as the hub refuses it in a Pull Secret: the command never runs.
#[test]
fn the_edge_never_runs_a_command_its_hub_kubeconfig_names() {
    let dir = TempDir::new("exec");
    let member = Sandbox::start();
    let member_kc = dir.join("member.kubeconfig");
    member.write_admin_kubeconfig(&member_kc).unwrap();
    let marker = dir.join("ran");
    let hub_kc = dir.join("hub.kubeconfig");
    std::fs::write(
        &hub_kc,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: hub\nclusters:\n- name: hub\n  cluster: {{server: \"{}\"}}\ncontexts:\n- name: hub\n  context: {{cluster: hub, user: edge}}\nusers:\n- name: edge\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [-c, \"touch {}\"]\n",
            member.url(),
            marker.display()
        ),
    )
    .unwrap();
    let mut args = LOOPBACK.to_vec();
    let (member_kc, hub_kc) = (member_kc.to_str().unwrap(), hub_kc.to_str().unwrap());
    args.extend([
        "--federation-role",
        "edge",
        "--site",
        "site-a",
        "--kubeconfig",
        member_kc,
        "--hub-kubeconfig",
        hub_kc,
    ]);
    let (code, errors) = run_to_failure(&args, None);
    assert_eq!(code, Some(1));
    assert_eq!(
        errors,
        [format!(
            "error: hub kubeconfig {hub_kc} uses an exec credential plugin: the edge never runs a command its hub kubeconfig names; give it the token kubeconfig `kubectl fleet register` or `kubectl fleet rotate` prints"
        )]
    );
    assert!(!marker.exists(), "the command did not run");
}

/// Found in use: an edge given another site's credential was told to re-run
/// `register` for its own site, which changes nothing. It names the site
/// the token belongs to, and the fix it names works: `kubectl fleet rotate
/// SITE` writes the right credential into the file, and the edge reports.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edge_with_another_sites_credential_names_it_and_the_fix_works() {
    let dir = TempDir::new("wrongsite");
    let hub = Sandbox::start();
    let hub_kc = installed_hub(&hub, &dir);
    let edge_kc = dir.join("edge-hub.kubeconfig");
    fleet_register(&hub_kc, "site-b", 10, &edge_kc, &[]);
    fleet_register(&hub_kc, "site-c", 10, &dir.join("site-c.kubeconfig"), &[]);
    let member = Sandbox::start();
    let member_kc = dir.join("member.kubeconfig");
    member.write_admin_kubeconfig(&member_kc).unwrap();
    let edge = Proc::spawn(
        "edge",
        &operator_bin(),
        &edge_args("site-c", &member_kc, &edge_kc, 0.2),
        dir.join("edge.log"),
    );
    let said = "the hub kubeconfig holds the credential of site site-b, not of site site-c (403): give this edge the hub kubeconfig of site-c (`kubectl fleet rotate site-c` prints a new one), or run it with --site site-b";
    wait_until(
        Duration::from_secs(20),
        "the edge names the token's site",
        || async { edge.log_text().contains(said) },
    )
    .await;
    let log = edge.log_text();
    let line = log.lines().find(|l| l.contains(said)).unwrap();
    assert!(line.contains("cause=\"wrong-site\""), "{line}");
    assert!(!log.contains("kubectl fleet register site-c"), "{log}");

    fleet_cli(
        &hub_kc,
        &[
            "rotate",
            "site-c",
            "--output-file",
            edge_kc.to_str().unwrap(),
        ],
    );
    let sites: Api<FederatedCluster> = Api::all(admin(&hub).await);
    wait_until(Duration::from_secs(20), "site-c reports", || async {
        sites
            .get("site-c")
            .await
            .unwrap()
            .status
            .is_some_and(|s| s.last_heartbeat_time.is_some())
    })
    .await;
}
