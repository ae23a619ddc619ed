//! kubectl's connection flags: KUBECONFIG (a list of files), --context,
//! --request-timeout; -v adds the cause chain.

use crate::support;

use std::process::{Command, Stdio};
use std::time::Duration;

use support::{BIN, Hub, Run};

fn run_env(args: &[&str], kubeconfig_env: &str, home: &std::path::Path) -> Run {
    let out = Command::new(BIN)
        .args(args)
        .env("KUBECONFIG", kubeconfig_env)
        .env("HOME", home)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

#[test]
fn kubeconfig_env_list_and_context_are_honoured() {
    let hub = Hub::new();
    hub.register("site-a", &[]);
    // A second file whose current context points nowhere; the admin
    // context of the first file is picked with --context.
    let other = hub.dir.path().join("other.kubeconfig");
    std::fs::write(
        &other,
        "apiVersion: v1\nkind: Config\ncurrent-context: dead\nclusters:\n- name: dead\n  cluster: {server: 'https://127.0.0.1:1'}\ncontexts:\n- name: dead\n  context: {cluster: dead, user: dead}\nusers:\n- name: dead\n  user: {token: x}\n",
    )
    .unwrap();
    let list = format!("{}:{}", other.display(), hub.kubeconfig.display());
    let dead = run_env(&["status"], &list, hub.dir.path());
    assert!(
        dead.one_line_error().contains("https://127.0.0.1:1"),
        "the first file's current-context wins"
    );
    let ok = run_env(
        &["--context", "sandbox", "status", "-o", "json"],
        &list,
        hub.dir.path(),
    )
    .ok();
    assert_eq!(ok.json()["sites"][0]["name"], "site-a");
    let missing = run_env(&["--context", "nope", "status"], &list, hub.dir.path());
    let line = missing.one_line_error();
    assert!(
        line.contains("nope") && line.contains("--context"),
        "{line}"
    );
}

#[test]
fn request_timeout_bounds_a_slow_server() {
    let hub = Hub::new();
    hub.sandbox.controls().set_latency(Duration::from_secs(3));
    let run = hub.fleet(&["--request-timeout", "500ms", "status"]);
    let line = run.one_line_error();
    assert!(line.contains("--request-timeout"), "{line}");
    hub.sandbox.controls().set_latency(Duration::ZERO);
    hub.fleet(&["--request-timeout", "10s", "status"]).ok();
}

#[test]
fn verbose_adds_the_cause_chain() {
    let hub = Hub::new();
    hub.sandbox.controls().set_outage(true);
    let run = hub.fleet(&["-v=1", "status"]);
    hub.sandbox.controls().set_outage(false);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.lines().any(|l| l.starts_with("error: ")),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("caused by:"), "{}", run.stderr);
}

#[test]
fn a_password_in_the_server_url_is_never_shown() {
    let hub = Hub::new();
    let with_userinfo = hub.dir.path().join("userinfo.kubeconfig");
    std::fs::write(
        &with_userinfo,
        "apiVersion: v1\nkind: Config\ncurrent-context: dead\nclusters:\n- name: dead\n  cluster: {server: 'https://admin:s3cret-pw@127.0.0.1:1'}\ncontexts:\n- name: dead\n  context: {cluster: dead, user: dead}\nusers:\n- name: dead\n  user: {token: x}\n",
    )
    .unwrap();
    let env = with_userinfo.display().to_string();
    for args in [
        &["status"][..],
        &["-v=1", "status"],
        &["describe", "site-a"],
    ] {
        let run = run_env(args, &env, hub.dir.path());
        assert_ne!(run.code, 0);
        // -v adds the cause chain and the client's own log lines.
        let line = run
            .stderr
            .lines()
            .find(|l| l.starts_with("error: "))
            .unwrap();
        assert!(line.contains("https://127.0.0.1:1"), "{args:?}: {line}");
        for out in [&run.stdout, &run.stderr] {
            assert!(!out.contains("s3cret-pw"), "{args:?}: {out}");
        }
    }
}

/// An API server answering `503` (a load balancer whose backend is down)
/// or `429` (API priority and fairness): a command tries each request 3
/// more times, ½–2 s apart, then fails with one line naming the answer,
/// instead of kube's 15 silent tries backing off to over a minute; an
/// answer that passes within those tries is not noticed.
#[test]
fn an_unavailable_api_server_is_retried_briefly_then_told() {
    let hub = Hub::new();
    hub.register("site-a", &[]);
    let controls = hub.sandbox.controls();
    controls.clear_request_log();
    controls.fail(kube_sandbox::FaultRule {
        status: 503,
        count: u32::MAX,
        ..Default::default()
    });
    let run = hub.fleet(&["status"]);
    controls.clear_faults();
    let line = run.one_line_error();
    let mut tries = std::collections::BTreeMap::<String, usize>::new();
    for r in controls.request_log() {
        *tries.entry(format!("{} {}", r.verb, r.path)).or_default() += 1;
    }
    // The command's requests run at once; it ends when the first has had
    // its 4 tries, so another may be caught before its last.
    assert!(
        tries.values().all(|n| *n <= 4) && tries.values().any(|n| *n == 4),
        "{tries:?}"
    );
    assert!(line.contains("503"), "{line}");

    // Refused twice, then served: nothing to tell.
    controls.fail(kube_sandbox::FaultRule {
        status: 429,
        count: 2,
        ..Default::default()
    });
    let run = hub.fleet(&["status", "-o", "json"]).ok();
    assert_eq!(run.json()["sites"][0]["name"], "site-a");
}
