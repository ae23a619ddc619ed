//! kubectl's habits, met by `kubectl fleet` through the real kubectl (issue
//! 24): `-v=4`/`--v=4`, "did you mean" for unknown commands and flags,
//! "No sites found" on stderr, `unregister` of a missing site failing like
//! `kubectl delete`, `uninstall --yes` with or without `--crds`, a declined
//! prompt exiting 1, `--context` completing context names, and a
//! `--token-ttl` beyond the maximum naming the maximum.

use crate::support;

use std::path::Path;

use support::{Hub, Run, shell};

const CRD: &str = "federatedclusters.federation.kubectl-fleet.dev";

fn debug_lines(run: &Run) -> usize {
    run.stderr.lines().filter(|l| l.contains(" DEBUG ")).count()
}

/// kubectl's `-v LEVEL` as kubectl takes it (`-v=4`, `--v=4`, `-v 4`), in
/// the plugin's place on the line: debug logging from 4, none without it.
#[test]
fn verbosity_is_a_level_as_kubectl_takes_it() {
    let hub = Hub::new();
    hub.register("site-a", &[]);
    let quiet = shell(&hub, "kubectl fleet status").ok();
    assert_eq!(debug_lines(&quiet), 0, "{}", quiet.stderr);
    for line in [
        "kubectl fleet -v=4 status",
        "kubectl fleet --v=4 status",
        "kubectl fleet status -v 4",
        "kubectl fleet status --v=5",
    ] {
        let run = shell(&hub, line).ok();
        assert!(debug_lines(&run) > 0, "{line}: {}", run.stderr);
        assert!(run.stdout.contains("site-a"), "{line}: {}", run.stdout);
    }
    let info = shell(&hub, "kubectl fleet status -v=2").ok();
    assert_eq!(debug_lines(&info), 0, "{}", info.stderr);
    // A level is a number: the old repeated flag is a one-line usage error.
    let bad = shell(&hub, "kubectl fleet -vv status");
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    let line = bad.one_line_error();
    assert!(line.contains("-v=4"), "{line}");

    // fleet-operator takes the same flag.
    let operator = std::process::Command::new(env!("CARGO_BIN_EXE_fleet-operator"))
        .args(["--v=loud", "--federation-role=hub"])
        .output()
        .unwrap();
    let operator = Run::from(operator);
    assert_eq!(operator.code, 2, "{}", operator.stderr);
    assert!(operator.stderr.contains("-v=4"), "{}", operator.stderr);
}

/// Unknown subcommands and flags: one line saying what was meant, exit 2.
#[test]
fn unknown_commands_and_flags_get_a_did_you_mean() {
    let hub = Hub::new();
    let run = shell(&hub, "kubectl fleet statsu");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.one_line_error(),
        "error: unrecognized subcommand 'statsu': did you mean 'status'? see `kubectl fleet --help`"
    );
    let run = shell(&hub, "kubectl fleet status --wtach");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.one_line_error(),
        "error: unexpected argument '--wtach' found: did you mean '--watch'? see `kubectl fleet status --help`"
    );
    let run = shell(&hub, "kubectl fleet unregister site-a --member-kubeconfg x");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.one_line_error()
            .contains("did you mean '--member-kubeconfig'?"),
        "{}",
        run.stderr
    );
    // Nothing close: where to look instead.
    let run = shell(&hub, "kubectl fleet xyzzy");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.one_line_error(),
        "error: unrecognized subcommand 'xyzzy': see `kubectl fleet --help`"
    );
}

/// `No sites found` is a message, not data: stderr, like kubectl's `No
/// resources found`, so `kubectl fleet status | wc -l` counts sites.
#[tokio::test]
async fn no_sites_found_goes_to_stderr() {
    let hub = Hub::new();
    // A hub judging the fleet, so stderr holds no warning about it.
    hub.record_hub_judgement("hub-0", jiff::Timestamp::now(), 15)
        .await;
    let kubectl = shell(&hub, "kubectl get federatedclusters").ok();
    assert!(kubectl.stdout.is_empty(), "{}", kubectl.stdout);
    let run = shell(&hub, "kubectl fleet status").ok();
    assert_eq!(run.stdout, "", "stdout holds only data");
    assert_eq!(run.stderr, "No sites found\n");
    let wide = shell(&hub, "kubectl fleet status -o wide").ok();
    assert_eq!(
        (wide.stdout.as_str(), wide.stderr.as_str()),
        ("", "No sites found\n")
    );
    // A filter that matches nothing says the same.
    hub.register("site-a", &[]);
    let run = shell(&hub, "kubectl fleet status --tier critical").ok();
    assert_eq!(
        (run.stdout.as_str(), run.stderr.as_str()),
        ("", "No sites found\n")
    );
    // Data formats stay data: an empty list on stdout.
    let json = shell(&hub, "kubectl fleet status --tier critical -o json").ok();
    assert_eq!(json.json()["sites"], serde_json::json!([]));
}

/// `unregister` of a site that does not exist fails like `kubectl delete`
/// of a missing object.
#[test]
fn unregister_of_a_missing_site_fails_like_kubectl_delete() {
    let hub = Hub::new();
    let delete = shell(&hub, "kubectl delete federatedcluster nope");
    assert_eq!(delete.code, 1, "{}", delete.stderr);
    let run = shell(&hub, "kubectl fleet unregister nope --yes");
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.one_line_error(),
        "error: site \"nope\" not found: nothing to remove: `kubectl fleet status` lists the registered sites"
    );
    // A site that exists is removed, and only once.
    hub.register("site-a", &[]);
    let first = shell(&hub, "kubectl fleet unregister site-a --yes").ok();
    assert!(first.stderr.contains("deleted"), "{}", first.stderr);
    let again = shell(&hub, "kubectl fleet unregister site-a --yes");
    assert_eq!(again.code, 1, "{}", again.stderr);
}

/// `uninstall --yes` is accepted with or without `--crds` (scripts pass
/// it everywhere); only `--crds` deletes the CRDs.
#[test]
fn uninstall_accepts_yes_with_or_without_crds() {
    let hub = Hub::bare(Default::default());
    shell(&hub, "set -e; kubectl fleet install | kubectl apply -f -").ok();
    hub.register("site-a", &[]);
    let run = shell(&hub, "kubectl fleet uninstall --yes").ok();
    assert!(
        run.stderr
            .contains("Deployment fleet-system/fleet-operator-hub deleted"),
        "{}",
        run.stderr
    );
    shell(&hub, &format!("kubectl get crd {CRD}")).ok();
    shell(&hub, "kubectl get federatedcluster site-a").ok();
    let run = shell(&hub, "kubectl fleet uninstall -y --crds").ok();
    assert!(
        run.stderr
            .contains(&format!("CustomResourceDefinition {CRD} deleted")),
        "{}",
        run.stderr
    );
    assert_ne!(shell(&hub, &format!("kubectl get crd {CRD}")).code, 0);
}

/// Runs `LINE` (through the real kubectl) on a pseudo-terminal (util-linux
/// `script`), typing `answer` once the prompt is up; returns the exit code
/// and what the terminal showed.
fn on_terminal(hub: &Hub, line: &str, prompt: &str, answer: &str) -> (Option<i32>, String) {
    use std::io::{Read as _, Write as _};
    let mut child = support::user_command(hub, "script")
        .args(["-qec", line, "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
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
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !text().contains(prompt) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(text().contains(prompt), "no prompt {prompt:?}: {}", text());
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(answer.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let status = child.wait().unwrap();
    reader.join().unwrap();
    drop(stdin);
    (status.code(), text())
}

/// Declining a confirmation is a failure (exit 1), not an interrupt
/// (130), and changes nothing.
#[test]
fn declining_a_prompt_exits_1() {
    let hub = Hub::new();
    hub.register("site-a", &[]);
    let (code, shown) = on_terminal(
        &hub,
        "kubectl fleet unregister site-a",
        "Unregister site site-a?",
        "n",
    );
    assert_eq!(code, Some(1), "{shown}");
    assert!(
        shown.contains("error: aborted: nothing was changed"),
        "{shown}"
    );
    shell(&hub, "kubectl get federatedcluster site-a").ok();
    let (code, shown) = on_terminal(
        &hub,
        "kubectl fleet uninstall --crds",
        "Delete the fleet CRDs",
        "n",
    );
    assert_eq!(code, Some(1), "{shown}");
    shell(&hub, &format!("kubectl get crd {CRD}")).ok();
}

/// `kubectl fleet … --context <TAB>` offers the context names of the
/// kubeconfig in use (or the one `--kubeconfig` names), through kubectl's
/// plugin completion and the checked-in `kubectl_complete-fleet` helper.
#[test]
fn context_completes_context_names_through_kubectl() {
    let hub = Hub::new();
    // The admin kubeconfig with three more contexts (JSON is a kubeconfig
    // kubectl reads as well).
    let mut kc = kube::config::Kubeconfig::read_from(&hub.kubeconfig).unwrap();
    let first = kc.contexts[0].clone();
    for name in ["hub-eu", "hub-us", "staging"] {
        let mut c = first.clone();
        c.name = name.to_owned();
        kc.contexts.push(c);
    }
    let many = hub.dir.path().join("many.kubeconfig");
    std::fs::write(&many, serde_json::to_string(&kc).unwrap()).unwrap();
    let own = first.name.clone();

    let complete = |words: &str| -> Vec<String> {
        let completions = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions");
        let out = shell(
            &hub,
            &format!(
                "PATH=\"{}:$PATH\" kubectl __complete fleet {words}",
                completions.display()
            ),
        )
        .ok();
        out.stdout
            .lines()
            .filter(|l| !l.starts_with(':') && !l.is_empty())
            .map(|l| l.split('\t').next().unwrap().to_owned())
            .collect()
    };
    assert_eq!(complete("status --context ''"), std::slice::from_ref(&own));
    let typed = format!("--kubeconfig {} status --context ''", many.display());
    let mut all = vec![own, "hub-eu".into(), "hub-us".into(), "staging".into()];
    all.sort();
    assert_eq!(complete(&typed), all);
    let typed = format!("--kubeconfig {} status --context hub-", many.display());
    assert_eq!(complete(&typed), ["hub-eu", "hub-us"]);
    // The completed name works.
    shell(
        &hub,
        &format!(
            "kubectl fleet --kubeconfig {} --context hub-us status",
            many.display()
        ),
    )
    .ok();
}

/// A `--token-ttl` beyond what the API server issues names the maximum.
#[test]
fn token_ttl_beyond_the_maximum_names_it() {
    let hub = Hub::new();
    for command in [
        "kubectl fleet register site-a --token-ttl 60000d",
        "kubectl fleet rotate site-a --token-ttl 60000d",
    ] {
        let run = shell(&hub, command);
        assert_eq!(run.code, 2, "{}", run.stderr);
        let line = run.one_line_error();
        assert!(
            line.contains("\"60000d\" is longer than the maximum, 49710d6h28m16s (2^32 seconds"),
            "{line}"
        );
    }
    assert!(
        shell(&hub, "kubectl get federatedclusters -o name")
            .ok()
            .stdout
            .is_empty(),
        "nothing registered"
    );
}
