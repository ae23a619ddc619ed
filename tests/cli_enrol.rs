//! Declarative enrolment through the real kubectl: `kubectl fleet register
//! -f` with a 50-site inventory (a directory holding multi-document YAML
//! and a JSON List, and stdin), re-runs that change and mint nothing, a
//! bad entry that fails alone; bulk `rotate -l` and `unregister -l` with
//! their confirmation; and register's critical path counted from the
//! sandbox's timed request log.

use crate::support;

use std::os::unix::fs::PermissionsExt as _;
use std::time::Duration;

use support::{Hub, Run, shell, token_of};

const API: &str = "federation.kubectl-fleet.dev/v1alpha1";

/// One FederatedCluster as a YAML document.
fn site_yaml(name: &str, group: &str, tier: &str) -> String {
    format!(
        "apiVersion: {API}\nkind: FederatedCluster\nmetadata:\n  name: {name}\n  labels:\n    store-group: {group}\nspec:\n  region: eu-west-1\n  tier: {tier}\n  environment: production\n"
    )
}

/// Sites store-00..store-29 as multi-document YAML (plus `extra`), and
/// store-30..store-49 as a JSON List, in directory `inv`.
fn write_inventory(hub: &Hub, extra: &str) {
    let dir = hub.dir.path().join("inv");
    std::fs::create_dir_all(&dir).unwrap();
    let mut yaml: Vec<String> = (0..30)
        .map(|i| site_yaml(&format!("store-{i:02}"), &format!("g{}", i % 5), "standard"))
        .collect();
    if !extra.is_empty() {
        yaml.push(extra.to_owned());
    }
    std::fs::write(dir.join("stores.yaml"), yaml.join("---\n")).unwrap();
    let items: Vec<serde_json::Value> = (30..50)
        .map(|i| {
            serde_json::json!({
                "apiVersion": API,
                "kind": "FederatedCluster",
                "metadata": {"name": format!("store-{i:02}"), "labels": {"store-group": format!("g{}", i % 5)}},
                "spec": {"region": "eu-west-1", "tier": "standard", "environment": "production"},
            })
        })
        .collect();
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    std::fs::write(dir.join("more.json"), list.to_string()).unwrap();
}

fn lines_with<'a>(run: &'a Run, word: &str) -> Vec<&'a str> {
    run.stdout.lines().filter(|l| l.contains(word)).collect()
}

/// Writes (not reads) in the sandbox's log since it was last cleared,
/// apart from the SelfSubjectRulesReviews that prove a credential.
fn writes(hub: &Hub) -> Vec<String> {
    hub.sandbox
        .controls()
        .request_log()
        .iter()
        .filter(|r| !matches!(r.verb.as_str(), "get" | "list" | "watch"))
        .filter(|r| !r.path.ends_with("/selfsubjectrulesreviews"))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

on_both_lanes! {
fn a_fifty_site_inventory_registers_reruns_unchanged_and_a_bad_entry_fails_alone(lane) {
    let hub = Hub::on(lane);
    let bad = format!(
        "apiVersion: {API}\nkind: FederatedCluster\nmetadata:\n  name: store-bad\nspec:\n  tier: golden\n"
    );
    write_inventory(&hub, &bad);

    let first = shell(
        &hub,
        "kubectl fleet register -f inv --output-dir creds --concurrency 6",
    );
    assert_ne!(first.code, 0, "a failed site fails the command");
    assert_eq!(
        first.stdout.lines().count(),
        52,
        "one line per site and a summary:\n{}",
        first.stdout
    );
    assert_eq!(
        lines_with(&first, " created: credential written to creds/").len(),
        50
    );
    let failed = lines_with(&first, "failed");
    assert!(
        failed
            .iter()
            .any(|l| l.starts_with("federatedcluster/store-bad failed: ") && l.contains("golden")),
        "{}",
        first.stdout
    );
    assert!(
        first
            .stdout
            .ends_with("51 sites: 50 created, 0 configured, 0 unchanged, 1 failed\n"),
        "{}",
        first.stdout
    );
    let error = first.stderr.lines().last().unwrap();
    assert!(
        error.starts_with("error: 1 of 51 sites failed: store-bad: "),
        "{}",
        first.stderr
    );

    // kubectl sees the sites, with the inventory's labels and spec.
    let listed = shell(
        &hub,
        "kubectl get federatedclusters -l store-group=g1 -o name",
    )
    .ok();
    assert_eq!(listed.stdout.lines().count(), 10, "{}", listed.stdout);
    let tier = shell(
        &hub,
        "kubectl get fc store-42 -o jsonpath='{.spec.tier}/{.spec.region}'",
    )
    .ok();
    assert_eq!(tier.stdout, "standard/eu-west-1");
    // Each site registered has its lease, the heartbeat its edge renews.
    let leases = shell(&hub, "kubectl get fcl -o name").ok();
    assert_eq!(leases.stdout.lines().count(), 50, "{}", leases.stdout);
    assert!(
        leases
            .stdout
            .contains("federatedclusterlease.federation.kubectl-fleet.dev/store-42\n"),
        "{}",
        leases.stdout
    );
    // Each credential is private and works, as the site, through kubectl.
    for i in [0, 37] {
        let path = hub
            .dir
            .path()
            .join(format!("creds/store-{i:02}.kubeconfig"));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", path.display());
        let as_site = shell(
            &hub,
            &format!(
                "kubectl --kubeconfig {} get fc store-{i:02} -o name",
                path.display()
            ),
        )
        .ok();
        assert_eq!(
            as_site.stdout.trim(),
            format!(
                "federatedcluster.{}/store-{i:02}",
                "federation.kubectl-fleet.dev"
            )
        );
    }

    // A re-run changes nothing and mints nothing.
    hub.sandbox.controls().clear_request_log();
    let again = shell(&hub, "kubectl fleet register -f inv --output-dir creds");
    assert_ne!(again.code, 0);
    assert_eq!(
        lines_with(&again, " unchanged: credential in creds/").len(),
        50,
        "{}",
        again.stdout
    );
    assert!(
        again
            .stdout
            .ends_with("51 sites: 0 created, 0 configured, 50 unchanged, 1 failed\n")
    );
    assert_eq!(
        writes(&hub),
        Vec::<String>::new(),
        "a re-run writes nothing"
    );
    let before = std::fs::read_to_string(hub.dir.path().join("creds/store-05.kubeconfig")).unwrap();

    // Fixed inventory, one credential lost, one site's tier changed:
    // exactly that site is configured and one token is minted for the lost file.
    std::fs::remove_file(hub.dir.path().join("creds/store-11.kubeconfig")).unwrap();
    write_inventory(&hub, "");
    let inv = hub.dir.path().join("inv/stores.yaml");
    let text = std::fs::read_to_string(&inv).unwrap();
    let changed = text.replacen(
        &site_yaml("store-02", "g2", "standard"),
        &site_yaml("store-02", "g2", "critical"),
        1,
    );
    assert_ne!(text, changed);
    std::fs::write(&inv, changed).unwrap();
    hub.sandbox.controls().clear_request_log();
    let fixed = shell(&hub, "kubectl fleet register -f inv --output-dir creds").ok();
    assert!(
        fixed
            .stdout
            .ends_with("50 sites: 0 created, 1 configured, 49 unchanged, 0 failed\n"),
        "{}",
        fixed.stdout
    );
    assert!(
        fixed.stdout.contains(
            "federatedcluster/store-02 configured: credential written to creds/store-02.kubeconfig"
        ),
        "{}",
        fixed.stdout
    );
    assert!(
        fixed.stdout.contains(
            "federatedcluster/store-11 unchanged: credential written to creds/store-11.kubeconfig"
        ),
        "{}",
        fixed.stdout
    );
    let minted = hub
        .sandbox
        .controls()
        .request_log()
        .iter()
        .filter(|r| r.path.ends_with("/token"))
        .count();
    assert_eq!(minted, 2, "store-02 (re-applied) and store-11 (file lost)");
    let after = std::fs::read_to_string(hub.dir.path().join("creds/store-05.kubeconfig")).unwrap();
    assert_eq!(
        token_of(&before),
        token_of(&after),
        "an untouched site's file is kept"
    );

    // stdin, and --rotate mints for every site.
    hub.sandbox.controls().clear_request_log();
    let piped = shell(
        &hub,
        "cat inv/more.json | kubectl fleet register -f - --output-dir creds --rotate",
    )
    .ok();
    assert!(
        piped
            .stdout
            .ends_with("20 sites: 0 created, 0 configured, 20 unchanged, 0 failed\n"),
        "{}",
        piped.stdout
    );
    let minted = hub
        .sandbox
        .controls()
        .request_log()
        .iter()
        .filter(|r| r.path.ends_with("/token"))
        .count();
    assert_eq!(minted, 20);

    // Push sites need somewhere to put their credentials: nothing written.
    hub.sandbox.controls().clear_request_log();
    let nowhere = shell(&hub, "kubectl fleet register -f inv");
    let line = nowhere.one_line_error();
    assert!(line.contains("--output-dir"), "{line}");
    assert!(hub.sandbox.controls().request_log().is_empty());
}
}

on_both_lanes! {
fn bulk_rotate_and_unregister_by_selector_ask_first(lane) {
    let hub = Hub::on(lane);
    write_inventory(&hub, "");
    shell(&hub, "kubectl fleet register -f inv --output-dir creds").ok();

    // Off a terminal, without --yes: refused, nothing minted or deleted.
    hub.sandbox.controls().clear_request_log();
    let refused = shell(
        &hub,
        "kubectl fleet rotate -l store-group=g1 --output-dir rot",
    );
    let line = refused.one_line_error();
    assert!(
        line.contains("refusing to rotate 10 sites without confirmation"),
        "{line}"
    );
    assert!(line.contains("--yes"), "{line}");
    let refused = shell(&hub, "kubectl fleet unregister -l store-group=g2");
    let line = refused.one_line_error();
    assert!(line.contains("refusing to unregister 10 sites"), "{line}");
    assert_eq!(writes(&hub), Vec::<String>::new());
    // Picking sites by label reads no heartbeats: no lease list.
    let leases: Vec<String> = hub
        .sandbox
        .controls()
        .request_log()
        .into_iter()
        .filter(|r| r.path.contains("federatedclusterleases"))
        .map(|r| format!("{} {}", r.verb, r.path))
        .collect();
    assert_eq!(leases, Vec::<String>::new());

    // rotate -l --revoke: every matching site, new files; old tokens rejected.
    let old = std::fs::read_to_string(hub.dir.path().join("creds/store-01.kubeconfig")).unwrap();
    let rotated = shell(
        &hub,
        "kubectl fleet rotate -l store-group=g1 --output-dir rot --revoke --yes",
    )
    .ok();
    assert_eq!(
        lines_with(&rotated, " rotated: credential written to rot/").len(),
        10
    );
    assert!(
        rotated.stdout.ends_with("10 sites: 10 rotated, 0 failed\n"),
        "{}",
        rotated.stdout
    );
    let new = std::fs::read_to_string(hub.dir.path().join("rot/store-01.kubeconfig")).unwrap();
    assert_ne!(token_of(&old), token_of(&new));
    let with_old = shell(
        &hub,
        "kubectl --kubeconfig creds/store-01.kubeconfig get fc store-01",
    );
    assert_ne!(with_old.code, 0, "the revoked token is rejected");
    shell(
        &hub,
        "kubectl --kubeconfig rot/store-01.kubeconfig get fc store-01",
    )
    .ok();
    assert!(!hub.dir.path().join("rot/store-02.kubeconfig").exists());

    let removed = shell(&hub, "kubectl fleet unregister -l store-group=g2 --yes").ok();
    assert_eq!(
        lines_with(&removed, " deleted (").len(),
        10,
        "{}",
        removed.stdout
    );
    let left = shell(&hub, "kubectl get fc -o name").ok();
    assert_eq!(left.stdout.lines().count(), 40);
    assert!(!left.stdout.contains("store-02\n"));
    // No match is an error naming the labels that exist, for every bulk command.
    let none = shell(&hub, "kubectl fleet unregister -l store-group=nope --yes");
    let line = none.one_line_error();
    assert!(
        line.contains("no site matches -l store-group=nope"),
        "{line}"
    );
    assert!(line.contains("store-group=g"), "{line}");
}
}

on_both_lanes! {
/// The critical path of `register` for a new site, counted from the
/// sandbox's timed request log with every answer held back 400 ms: a
/// request is one round trip deeper than the deepest request that had
/// been answered before it started. The hold is long beside the CPU time
/// of what the plugin does between requests sent together (new
/// connections' TLS handshakes in a debug build on a busy 2-core machine
/// once took more than 150 ms, so requests sent at once arrived after one
/// another's answers): what is counted is round trips, not CPU. At most 4: read → site → identity
/// objects at once → the ServiceAccount's digest beside the TokenRequest.
/// The digest is still applied only once every other identity object was.
fn a_new_site_costs_four_round_trips(lane) {
    let hub = Hub::on(lane);
    hub.register("warm-up", &[]); // the first site of a hub creates fleet-sites
    let controls = hub.sandbox.controls();
    controls.set_latency(Duration::from_millis(400));
    controls.clear_request_log();
    shell(
        &hub,
        "kubectl fleet register rt-new --output-file rt.kubeconfig",
    )
    .ok();
    controls.set_latency(Duration::ZERO);
    let log = controls.request_log();
    let mut depth = vec![0usize; log.len()];
    for (i, r) in log.iter().enumerate() {
        depth[i] = 1 + log
            .iter()
            .enumerate()
            .filter(|(_, p)| p.finished <= r.started)
            .map(|(j, _)| depth[j])
            .max()
            .unwrap_or(0);
    }
    let shown: Vec<String> = log
        .iter()
        .zip(&depth)
        .map(|(r, d)| {
            format!(
                "{d} {} {} {:?}..{:?}",
                r.method, r.path, r.started, r.finished
            )
        })
        .collect();
    let deepest = depth.iter().copied().max().unwrap();
    assert!(
        deepest <= 4,
        "critical path {deepest}:\n{}",
        shown.join("\n")
    );
    // The site's lease is applied in round trip 3 beside the roles: one
    // request more, no round trip more.
    assert_eq!(log.len(), 10, "{}", shown.join("\n"));
    let lease = "/apis/federation.kubectl-fleet.dev/v1alpha1/federatedclusterleases/rt-new";
    assert!(
        log.iter()
            .zip(&depth)
            .any(|(r, d)| r.path == lease && *d == 3),
        "{}",
        shown.join("\n")
    );
    // The ServiceAccount is applied twice; the second (with the digest)
    // starts only after every role and binding was answered.
    let sa = "/api/v1/namespaces/fleet-sites/serviceaccounts/fleet-edge-rt-new";
    let last_sa = log
        .iter()
        .filter(|r| r.path == sa)
        .max_by_key(|r| r.started)
        .unwrap();
    assert_eq!(log.iter().filter(|r| r.path == sa).count(), 2);
    for r in log.iter().filter(|r| {
        r.path.contains("/roles/")
            || r.path.contains("/rolebindings/")
            || r.path.contains("clusterrole")
    }) {
        assert!(r.finished <= last_sa.started, "{}", shown.join("\n"));
    }
    println!("register critical path {deepest}:\n{}", shown.join("\n"));
}
}
