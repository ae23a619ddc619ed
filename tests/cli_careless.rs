//! kubectl-fleet under a careless hand (issue 31): bulk commands whose
//! reader goes away, Ctrl-C in the middle, selections that match nothing,
//! retry hints run exactly as printed.

use crate::support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kube_sandbox::FaultRule;
use support::{Hub, Run, shell, token_of, user_command};

const API: &str = "federation.kubectl-fleet.dev/v1alpha1";

/// `n` Push sites store-00.. as one multi-document YAML file `inv.yaml`.
fn write_inventory(hub: &Hub, n: usize) {
    let docs: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "apiVersion: {API}\nkind: FederatedCluster\nmetadata:\n  name: store-{i:02}\n  labels:\n    store-group: g{}\nspec:\n  region: eu-west-1\n",
                i % 2
            )
        })
        .collect();
    std::fs::write(hub.dir.path().join("inv.yaml"), docs.join("---\n")).unwrap();
}

/// Runs `script` with bash and `pipefail`, as a user of `hub`.
fn bash(hub: &Hub, script: &str) -> Run {
    let output = user_command(hub, "/bin/bash")
        .args(["-o", "pipefail", "-c", script])
        .stdin(Stdio::null())
        .output()
        .expect("run bash");
    Run::from(output)
}

/// The registered site names.
fn site_names(hub: &Hub) -> Vec<String> {
    let run = hub.fleet(&["status", "-o", "json"]).ok();
    run.json()["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The command inside the first `run `…`` of `text`.
fn hinted_command(text: &str) -> String {
    let start = text
        .find("run `")
        .unwrap_or_else(|| panic!("no hint in {text}"))
        + 5;
    let len = text[start..].find('`').unwrap();
    text[start..start + len].to_owned()
}

/// Whether `token` is accepted by the hub (reads its own site).
async fn token_works(hub: &Hub, token: &str, site: &str) -> bool {
    let client = support::client_from_yaml(&hub.sandbox.kubeconfig_for_token(token)).await;
    let api: kube::Api<kubectl_fleet::api::FederatedCluster> = kube::Api::all(client);
    match api.get(site).await {
        Ok(_) => true,
        Err(kube::Error::Api(s)) if s.code == 401 => false,
        Err(e) => panic!("unexpected answer for the token of {site}: {e}"),
    }
}

#[test]
fn bulk_commands_finish_their_work_when_stdout_closes_and_say_so() {
    let hub = Hub::new();
    write_inventory(&hub, 40);
    let register = bash(
        &hub,
        "kubectl fleet register -f inv.yaml --output-dir out --concurrency 4 | head -1",
    );
    assert_ne!(register.code, 0, "{}", register.stderr);
    assert!(
        register
            .stderr
            .contains("stdout was closed before all output was written"),
        "{}",
        register.stderr
    );
    assert_eq!(site_names(&hub).len(), 40, "every site registered");
    let written = std::fs::read_dir(hub.dir.path().join("out"))
        .unwrap()
        .count();
    assert_eq!(written, 40, "every credential written");

    let old =
        token_of(&std::fs::read_to_string(hub.dir.path().join("out/store-39.kubeconfig")).unwrap());
    let rotate = bash(
        &hub,
        "kubectl fleet rotate -l store-group --revoke --yes --output-dir new --concurrency 4 | head -1",
    );
    assert_ne!(rotate.code, 0, "{}", rotate.stderr);
    assert!(
        rotate.stderr.contains("stdout was closed"),
        "{}",
        rotate.stderr
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    assert!(
        !rt.block_on(token_works(&hub, &old, "store-39")),
        "the last site's old token is revoked too"
    );
    assert_eq!(
        std::fs::read_dir(hub.dir.path().join("new"))
            .unwrap()
            .count(),
        40
    );

    let unregister = bash(
        &hub,
        "kubectl fleet unregister -l store-group --yes --concurrency 4 | head -1",
    );
    assert_ne!(unregister.code, 0, "{}", unregister.stderr);
    assert!(site_names(&hub).is_empty(), "every site removed");
    // A read-only view still stops quietly.
    write_inventory(&hub, 3);
    bash(&hub, "kubectl fleet register -f inv.yaml --output-dir out").ok();
    let status = bash(&hub, "kubectl fleet status | head -1");
    assert_eq!(status.code, 0, "{}", status.stderr);
    assert!(!status.stderr.contains("error"), "{}", status.stderr);
}

/// Spawns `kubectl fleet ARGS` as a user of `hub`, its output captured.
fn spawn(hub: &Hub, args: &[&str]) -> Child {
    user_command(hub, "kubectl-fleet")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits (bounded) until the sandbox has answered a request matching `pred`.
fn wait_for_request(hub: &Hub, what: &str, pred: impl Fn(&kube_sandbox::RequestRecord) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !hub.sandbox.controls().request_log().iter().any(&pred) {
        assert!(Instant::now() < deadline, "no {what} within 30 s");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn sigint(child: &Child) {
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn finish(child: Child) -> Run {
    Run::from(child.wait_with_output().unwrap())
}

/// A TokenRequest for a site identity answered `delay` late (executed at once).
fn slow_tokens(hub: &Hub, count: u32, delay: Duration) {
    hub.sandbox.controls().fail(FaultRule {
        verb: Some("create".into()),
        path_contains: Some("/token".into()),
        status: 0,
        count,
        delay,
        ..Default::default()
    });
}

fn is_sa_create(r: &kube_sandbox::RequestRecord) -> bool {
    r.method == "DELETE" && r.path.contains("/serviceaccounts/")
}

#[test]
fn ctrl_c_during_rotate_revoke_never_leaves_the_edge_without_a_working_credential() {
    let hub = Hub::new();
    shell(
        &hub,
        "kubectl fleet register site-a --output-file a.kubeconfig",
    )
    .ok();
    let old = token_of(&std::fs::read_to_string(hub.dir.path().join("a.kubeconfig")).unwrap());
    hub.sandbox.controls().clear_request_log();
    slow_tokens(&hub, 1, Duration::from_secs(2));
    let child = spawn(
        &hub,
        &[
            "rotate",
            "site-a",
            "--revoke",
            "--output-file",
            "new.kubeconfig",
        ],
    );
    // Interrupted after the old tokens were revoked, before the new one came.
    wait_for_request(&hub, "ServiceAccount recreation", is_sa_create);
    sigint(&child);
    let run = finish(child);
    hub.sandbox.controls().clear_faults();
    let written = std::fs::read_to_string(hub.dir.path().join("new.kubeconfig"))
        .unwrap_or_else(|e| panic!("no new credential ({e}); stderr:\n{}", run.stderr));
    let rt = tokio::runtime::Runtime::new().unwrap();
    assert!(rt.block_on(token_works(&hub, &token_of(&written), "site-a")));
    assert!(!rt.block_on(token_works(&hub, &old, "site-a")));
    assert_eq!(run.code, 0, "the rotation completed: {}", run.stderr);
}

#[test]
fn ctrl_c_during_register_says_what_exists_and_the_command_that_finishes_it() {
    let hub = Hub::new();
    slow_tokens(&hub, 1, Duration::from_secs(5));
    let child = spawn(
        &hub,
        &[
            "register",
            "site-b",
            "--tier",
            "critical",
            "--output-file",
            "b.kubeconfig",
        ],
    );
    // The site's identity is applied only after the site itself.
    wait_for_request(&hub, "the site's identity applied", |r| {
        r.method == "PATCH" && r.path.contains("/namespaces/fleet-sites/")
    });
    sigint(&child);
    let run = finish(child);
    hub.sandbox.controls().clear_faults();
    assert_eq!(run.code, 130, "{}", run.stderr);
    let line = run.stderr.lines().last().unwrap();
    assert!(
        line.starts_with("error: interrupted: site site-b exists on the hub"),
        "{line}"
    );
    assert!(
        line.contains("or `kubectl fleet unregister site-b --yes` to remove it"),
        "{line}"
    );
    // The command it names finishes the job, as printed.
    let finish = hinted_command(line);
    assert_eq!(
        finish,
        "kubectl fleet register site-b --tier critical --output-file b.kubeconfig"
    );
    shell(&hub, &finish).ok();
    assert!(hub.dir.path().join("b.kubeconfig").exists());
}

#[test]
fn ctrl_c_during_a_bulk_rotation_finishes_the_sites_in_flight_and_names_the_rest() {
    let hub = Hub::new();
    write_inventory(&hub, 6);
    bash(&hub, "kubectl fleet register -f inv.yaml --output-dir out").ok();
    hub.sandbox.controls().clear_request_log();
    slow_tokens(&hub, 6, Duration::from_millis(700));
    let child = spawn(
        &hub,
        &[
            "rotate",
            "--region",
            "eu-west-1",
            "--revoke",
            "--yes",
            "--output-dir",
            "new",
            "--concurrency",
            "1",
        ],
    );
    wait_for_request(&hub, "a ServiceAccount recreation", is_sa_create);
    sigint(&child);
    let run = finish(child);
    hub.sandbox.controls().clear_faults();
    assert_eq!(run.code, 130, "{}\n{}", run.stdout, run.stderr);
    let rotated: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains(" rotated: "))
        .collect();
    assert!(!rotated.is_empty() && rotated.len() < 6, "{}", run.stdout);
    assert!(
        run.stdout.contains("not started (interrupted)"),
        "{}",
        run.stdout
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    for line in &rotated {
        let site = line
            .trim_start_matches("federatedcluster/")
            .split(' ')
            .next()
            .unwrap();
        let new =
            std::fs::read_to_string(hub.dir.path().join(format!("new/{site}.kubeconfig"))).unwrap();
        assert!(
            rt.block_on(token_works(&hub, &token_of(&new), site)),
            "{site}"
        );
    }
    let line = run.stderr.lines().last().unwrap();
    assert!(line.contains("their old tokens still work"), "{line}");
    let rest = hinted_command(line);
    assert!(
        rest.contains("--output-dir new") && rest.contains("--revoke") && rest.contains("--yes"),
        "{rest}"
    );
    let again = shell(&hub, &rest).ok();
    assert_eq!(
        again
            .stdout
            .lines()
            .filter(|l| l.contains(" rotated: "))
            .count(),
        6 - rotated.len(),
        "{}",
        again.stdout
    );
    for i in 0..6 {
        let site = format!("store-{i:02}");
        let new =
            std::fs::read_to_string(hub.dir.path().join(format!("new/{site}.kubeconfig"))).unwrap();
        assert!(
            rt.block_on(token_works(&hub, &token_of(&new), &site)),
            "{site}"
        );
    }
}

#[test]
fn every_bulk_command_fails_on_a_selection_that_matches_nothing_naming_the_labels() {
    let hub = Hub::new();
    write_inventory(&hub, 2);
    bash(&hub, "kubectl fleet register -f inv.yaml --output-dir out").ok();
    for command in [
        "kubectl fleet rotate -l region=eu-west-1 --revoke --yes --output-dir new",
        "kubectl fleet unregister -l region=eu-west-1 --yes",
        "kubectl fleet cordon -l region=eu-west-1 --yes",
        "kubectl fleet uncordon --region us-east-1 --yes",
    ] {
        let run = shell(&hub, command);
        let line = run.one_line_error();
        assert_eq!(run.code, 1, "{command}");
        assert!(line.contains("no site matches"), "{command}: {line}");
        assert!(
            line.contains("federation.kubectl-fleet.dev/region=eu-west-1 (2 sites)"),
            "{command}: {line}"
        );
    }
    assert_eq!(site_names(&hub).len(), 2);
    // --region selects by the label register sets.
    let cordon = shell(
        &hub,
        "kubectl fleet cordon --region eu-west-1 --for 1h --yes",
    )
    .ok();
    assert_eq!(cordon.stdout.lines().count(), 2, "{}", cordon.stdout);
    let shorter = shell(&hub, "kubectl fleet cordon store-00 --for 10m").ok();
    assert!(
        shorter.stdout.contains("(shortened: the window open until"),
        "{}",
        shorter.stdout
    );
}

#[test]
fn register_f_retry_hints_run_as_printed() {
    let hub = Hub::new();
    write_inventory(&hub, 4);
    // store-02 fails once, after the others went through.
    hub.sandbox.controls().fail(FaultRule {
        verb: Some("patch".into()),
        path_contains: Some("/federatedclusters/store-02".into()),
        status: 500,
        count: 1,
        ..Default::default()
    });
    let first = shell(
        &hub,
        "kubectl fleet register -f inv.yaml --output-dir creds --concurrency 2",
    );
    assert_eq!(first.code, 1, "{}", first.stderr);
    // Per-site lines in inventory order.
    let order: Vec<&str> = first.stdout.lines().take(4).collect();
    for (i, line) in order.iter().enumerate() {
        assert!(
            line.starts_with(&format!("federatedcluster/store-{i:02} ")),
            "{}",
            first.stdout
        );
    }
    let line = first.stderr.lines().last().unwrap();
    assert!(line.contains("1 of 4 sites failed: store-02"), "{line}");
    assert!(line.contains("(the others are done)"), "{line}");
    let rerun = hinted_command(line);
    assert_eq!(
        rerun,
        "kubectl fleet register -f inv.yaml --output-dir creds --concurrency 2"
    );
    let again = shell(&hub, &rerun).ok();
    assert!(
        again.stdout.contains("federatedcluster/store-02 created"),
        "{}",
        again.stdout
    );
    assert!(hub.dir.path().join("creds/store-02.kubeconfig").exists());

    // 1 of 1: nothing else is done.
    std::fs::write(
        hub.dir.path().join("one.yaml"),
        format!("apiVersion: {API}\nkind: FederatedCluster\nmetadata:\n  name: lone\n"),
    )
    .unwrap();
    hub.sandbox.controls().fail(FaultRule {
        verb: Some("patch".into()),
        path_contains: Some("/federatedclusters/lone".into()),
        status: 500,
        count: 1,
        ..Default::default()
    });
    let lone = shell(
        &hub,
        "kubectl fleet register -f one.yaml --output-dir creds",
    );
    let line = lone.stderr.lines().last().unwrap();
    assert!(line.contains("1 of 1 sites failed"), "{line}");
    assert!(!line.contains("the others are done"), "{line}");
    shell(&hub, &hinted_command(line)).ok();
}

#[test]
fn output_dir_refuses_a_directory_every_user_may_write() {
    use std::os::unix::fs::PermissionsExt as _;
    let hub = Hub::new();
    write_inventory(&hub, 1);
    let shared = hub.dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let run = shell(
        &hub,
        "kubectl fleet register -f inv.yaml --output-dir shared",
    );
    let line = run.one_line_error();
    assert!(
        line.contains("writable by every user (mode 1777)"),
        "{line}"
    );
    assert!(site_names(&hub).is_empty(), "nothing registered");
    // A directory it creates is private.
    shell(
        &hub,
        "kubectl fleet register -f inv.yaml --output-dir fresh",
    )
    .ok();
    let mode = std::fs::metadata(hub.dir.path().join("fresh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
}

#[test]
fn register_f_refuses_unknown_fields_and_chatcli_yaml_naming_the_fix() {
    let hub = Hub::new();
    std::fs::write(
        hub.dir.path().join("inv.yaml"),
        format!(
            "apiVersion: {API}\nkind: FederatedCluster\nmetadata:\n  name: pos-1\nspec:\n  teir: critical\n---\napiVersion: {API}\nkind: FederatedCluster\nmetadata:\n  name: eu-prod\nspec:\n  kubeconfigSecretRef:\n    name: eu-prod-kubeconfig\n  healthCheckInterval: 60s\n---\napiVersion: platform.chatcli.io/v1alpha1\nkind: ClusterRegistration\nmetadata:\n  name: us-prod\n  namespace: fed\n---\napiVersion: {API}\nkind: FederatedCluster\nmetadata:\n  name: ok\n  labels: {{team: a}}\n  annotations: {{note: b}}\nspec:\n  tier: critical\nstatus:\n  phase: Connected\n"
        ),
    )
    .unwrap();
    let run = shell(&hub, "kubectl fleet register -f inv.yaml --output-dir out");
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let line = |site: &str| {
        run.stdout
            .lines()
            .find(|l| l.starts_with(&format!("federatedcluster/{site} ")))
            .unwrap_or_else(|| panic!("no line for {site}:\n{}", run.stdout))
            .to_owned()
    };
    assert!(
        line("pos-1").contains(r#"unknown field "spec.teir" (did you mean "spec.tier"?)"#),
        "{}",
        line("pos-1")
    );
    let eu = line("eu-prod");
    assert!(
        eu.contains("write `heartbeatIntervalSeconds: 60` instead"),
        "{eu}"
    );
    assert!(
        eu.contains(r#"missing required field "spec.kubeconfigSecretRef.namespace""#),
        "{eu}"
    );
    assert!(eu.contains("spec.mode is not Pull"), "{eu}");
    assert!(
        line("us-prod").contains("is ChatCLI's kind"),
        "{}",
        line("us-prod")
    );
    assert!(line("ok").contains("created"), "{}", line("ok"));
    assert_eq!(
        site_names(&hub),
        ["ok"],
        "nothing registered as the wrong thing"
    );
    assert!(
        !run.stderr.contains("skipped ClusterRegistration"),
        "{}",
        run.stderr
    );
}

#[test]
fn uninstall_takes_a_role_and_asks_before_removing_a_populated_hub() {
    let hub = Hub::new();
    hub.fleet(&["install", "--apply"]).ok();
    write_inventory(&hub, 3);
    bash(&hub, "kubectl fleet register -f inv.yaml --output-dir out").ok();
    let hub_deployment = || {
        shell(
            &hub,
            "kubectl -n fleet-system get deployment fleet-operator-hub -o name",
        )
        .code
            == 0
    };
    assert!(hub_deployment());
    // An edge installed on the hub by mistake is removed alone.
    let edge = shell(&hub, "kubectl fleet uninstall --role edge").ok();
    assert!(
        edge.stderr.contains("no edge operator installed"),
        "{}",
        edge.stderr
    );
    assert!(hub_deployment(), "the hub operator stays");
    // The hub role of a fleet with sites is removed only when confirmed.
    for command in [
        "kubectl fleet uninstall",
        "kubectl fleet uninstall --role hub",
    ] {
        let refused = shell(&hub, command);
        let line = refused.one_line_error();
        assert!(line.contains("with 3 registered sites"), "{line}");
        assert!(line.contains("pass --yes"), "{line}");
        assert!(hub_deployment(), "nothing removed by `{command}`");
    }
    shell(&hub, "kubectl fleet uninstall --role hub --yes").ok();
    assert!(!hub_deployment());
    assert_eq!(site_names(&hub).len(), 3, "the sites stay");
}

#[test]
fn install_role_edge_refuses_another_sites_token_an_admin_kubeconfig_and_the_hub() {
    let hub = Hub::new();
    shell(
        &hub,
        "kubectl fleet register site-a --output-file a.kubeconfig",
    )
    .ok();
    shell(
        &hub,
        "kubectl fleet register site-b --output-file b.kubeconfig",
    )
    .ok();
    let other = shell(
        &hub,
        "kubectl fleet install --role edge --site site-a --hub-kubeconfig b.kubeconfig",
    );
    let line = other.one_line_error();
    assert!(
        line.contains("is site site-b's edge credential, but this edge is --site site-a"),
        "{line}"
    );
    let admin = shell(
        &hub,
        "kubectl fleet install --role edge --site site-a --hub-kubeconfig admin.kubeconfig",
    );
    let line = admin.one_line_error();
    assert!(
        line.contains("holds no ServiceAccount token")
            || line.contains("not a site's edge credential"),
        "{line}"
    );
    // The site's own credential renders.
    let ok = shell(
        &hub,
        "kubectl fleet install --role edge --site site-a --hub-kubeconfig a.kubeconfig",
    )
    .ok();
    assert!(ok.stdout.contains("fleet-hub-kubeconfig"), "{}", ok.stdout);
    // Onto the hub itself (the admin kubeconfig is the hub's): refused.
    let onto_hub = shell(
        &hub,
        "kubectl fleet install --role edge --site site-a --hub-kubeconfig a.kubeconfig --apply",
    );
    let line = onto_hub.one_line_error();
    assert!(
        line.contains("is a fleet hub (2 registered sites)"),
        "{line}"
    );
    assert!(
        shell(
            &hub,
            "kubectl -n fleet-system get deployment fleet-operator-edge"
        )
        .code
            != 0,
        "no edge installed on the hub"
    );
}

#[test]
fn register_pull_with_another_member_says_old_to_new_asks_and_names_the_cleanup() {
    let hub = Hub::new();
    let (a, b) = (
        kube_sandbox::Sandbox::start(),
        kube_sandbox::Sandbox::start(),
    );
    a.write_admin_kubeconfig(&hub.dir.path().join("a.kubeconfig"))
        .unwrap();
    b.write_admin_kubeconfig(&hub.dir.path().join("b.kubeconfig"))
        .unwrap();
    shell(
        &hub,
        "kubectl fleet register store-p --pull --member-kubeconfig a.kubeconfig",
    )
    .ok();
    let secret = || {
        shell(&hub, "kubectl -n fleet-system get secret fleet-pull-store-p -o jsonpath='{.data.kubeconfig}'").ok().stdout
    };
    // The same member again: no question.
    shell(
        &hub,
        "kubectl fleet register store-p --pull --member-kubeconfig a.kubeconfig",
    )
    .ok();
    let before = secret();
    let refused = shell(
        &hub,
        "kubectl fleet register store-p --pull --member-kubeconfig b.kubeconfig",
    );
    let line = refused.one_line_error();
    assert!(
        line.contains(&format!("{} → {}", a.url(), b.url())),
        "{line}"
    );
    assert_eq!(secret(), before, "nothing re-pointed");
    let hinted = hinted_command(&line);
    assert!(hinted.ends_with("--yes"), "{hinted}");
    let moved = shell(&hub, &hinted).ok();
    assert_ne!(secret(), before);
    let note = moved
        .stderr
        .lines()
        .find(|l| l.contains("stays there"))
        .unwrap_or_else(|| panic!("{}", moved.stderr));
    // The cleanup it names runs as printed against the old member.
    let cleanup =
        hinted_command(&note.replace("remove it with `", "run `")).replace("FILE", "a.kubeconfig");
    let gone = shell(&hub, &cleanup);
    assert_eq!(gone.code, 0, "{cleanup}: {}", gone.stderr);
    let left = shell(
        &hub,
        "kubectl --kubeconfig a.kubeconfig -n fleet-system get serviceaccount fleet-pull-store-p",
    );
    assert_ne!(left.code, 0, "the old member's identity is removed");
}
