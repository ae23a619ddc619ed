//! Through the real kubectl binary, as a user types it: with the built
//! kubectl-fleet on PATH, `kubectl fleet …` runs the plugin; kubectl itself
//! shows the printer columns and applies the install manifests.

use crate::support;

use std::path::Path;

use support::{Hub, shell};

#[test]
fn kubectl_fleet_end_to_end() {
    let hub = Hub::bare(Default::default());

    // The plugin is found and the install manifests apply cleanly.
    let install = shell(&hub, "set -e; kubectl fleet install | kubectl apply -f -").ok();
    for object in [
        "customresourcedefinition.apiextensions.k8s.io/federatedclusters.federation.kubectl-fleet.dev",
        "namespace/fleet-system",
        "clusterrole.rbac.authorization.k8s.io/fleet-operator-hub",
        "deployment.apps/fleet-operator-hub",
    ] {
        assert!(
            install.stdout.contains(object),
            "missing {object} in:\n{}",
            install.stdout
        );
    }
    // Applying again is a no-op, not an error.
    shell(&hub, "set -e; kubectl fleet install | kubectl apply -f -").ok();

    let register = shell(
        &hub,
        "kubectl fleet register site-a --tier critical --region eu-west-1",
    )
    .ok();
    assert!(
        register.stdout.contains("kind: Config"),
        "{}",
        register.stdout
    );
    assert!(
        register
            .stderr
            .contains("fleet-operator --federation-role=edge --site site-a"),
        "{}",
        register.stderr
    );
    shell(&hub, "kubectl fleet register site-b --environment staging").ok();

    let status = shell(&hub, "kubectl fleet status -o json").ok().json();
    let sites = status["sites"].as_array().expect("sites array");
    let names: Vec<&str> = sites.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["site-a", "site-b"]);
    assert_eq!(sites[0]["tier"], "critical");
    assert_eq!(sites[0]["phase"], "Pending");
    assert_eq!(sites[1]["environment"], "staging");
    assert_eq!(status["summary"]["sites"], 2);

    let get = shell(&hub, "kubectl get fc").ok();
    let table = support::Table::parse(&get.stdout);
    assert_eq!(
        table.headers(),
        [
            "NAME",
            "MODE",
            "TIER",
            "ENV",
            "PHASE",
            "LAST HEARTBEAT",
            "GPUS",
            "AGE"
        ]
    );
    assert_eq!(table.column("NAME"), ["site-a", "site-b"], "{}", get.stdout);
    let row = &table.row("site-a")[..4];
    assert_eq!(
        row,
        [
            ("NAME", "site-a"),
            ("MODE", "Push"),
            ("TIER", "critical"),
            ("ENV", "production")
        ]
    );

    let version = shell(&hub, "kubectl fleet version").ok();
    assert_eq!(
        version.stdout.trim(),
        format!("kubectl-fleet {}", env!("CARGO_PKG_VERSION"))
    );

    // kubectl's plugin completion helper, from completions/.
    let helper = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/kubectl_complete-fleet");
    let complete = shell(&hub, &format!("{} reg", helper.display())).ok();
    assert!(
        complete.stdout.starts_with("register"),
        "{}",
        complete.stdout
    );
}

/// `kubectl fleet <TAB>`: kubectl runs the plugin's `kubectl_complete-fleet`
/// helper (the checked-in one, as krew installs it) from PATH.
fn complete_through_kubectl(hub: &Hub, words: &str) -> Vec<String> {
    let completions = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions");
    let out = shell(
        hub,
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
}

#[test]
fn site_names_complete_dynamically_through_kubectl() {
    let hub = Hub::new();
    for site in ["site-a", "site-b", "gpu-1"] {
        hub.register(site, &[]);
    }
    for command in ["status", "rotate", "unregister"] {
        assert_eq!(
            complete_through_kubectl(&hub, &format!("{command} ''")),
            ["gpu-1", "site-a", "site-b"],
            "kubectl fleet {command} <TAB>"
        );
    }
    assert_eq!(
        complete_through_kubectl(&hub, "rotate site-"),
        ["site-a", "site-b"]
    );
    assert_eq!(
        complete_through_kubectl(&hub, "status site-a ''"),
        ["gpu-1", "site-b"]
    );
    // A new site's name cannot be completed; subcommands still are.
    assert!(complete_through_kubectl(&hub, "register ''").is_empty());
    assert!(complete_through_kubectl(&hub, "st").contains(&"status".to_owned()));
}

/// kubectl's own conventions, met through `kubectl fleet`: no arguments
/// prints the help and succeeds; `--phase` takes the lower-case spelling
/// `--tier` and `--environment` use; a named site that does not exist is an
/// error, like `kubectl get fc NAME`.
#[test]
fn kubectl_conventions() {
    let hub = Hub::new();
    let help = shell(&hub, "kubectl fleet");
    assert_eq!(help.code, 0, "{}", help.stderr);
    assert!(
        help.stdout.contains("Usage: kubectl fleet"),
        "{}",
        help.stdout
    );

    shell(
        &hub,
        "kubectl fleet register site-a --output-file a.kubeconfig",
    )
    .ok();
    for spelling in ["pending", "Pending", "PENDING"] {
        let run = shell(&hub, &format!("kubectl fleet status --phase {spelling}")).ok();
        assert!(run.stdout.contains("site-a"), "{spelling}: {}", run.stdout);
    }

    let get = shell(&hub, "kubectl get fc nope");
    assert_ne!(get.code, 0);
    let run = shell(&hub, "kubectl fleet status nope");
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr.trim(),
        "error: site \"nope\" not found: `kubectl fleet status` lists the registered sites"
    );
    let both = shell(&hub, "kubectl fleet status site-a nope");
    assert_eq!(both.code, 1);
    assert!(both.stdout.contains("site-a"), "{}", both.stdout);
}

/// `kubectl delete fc SITE` revokes the site: its identity objects are
/// owned by the FederatedCluster, so the garbage collector deletes them and
/// the token stops working.
#[test]
fn deleting_a_site_revokes_its_identity() {
    let hub = Hub::new();
    shell(
        &hub,
        "kubectl fleet register site-a --output-file a.kubeconfig",
    )
    .ok();
    let as_site = "kubectl --kubeconfig a.kubeconfig get fc site-a -o name";
    let before = shell(&hub, as_site).ok();
    assert_eq!(
        before.stdout.trim(),
        "federatedcluster.federation.kubectl-fleet.dev/site-a"
    );
    let identity = "kubectl get -n fleet-sites serviceaccount/fleet-edge-site-a \
                    role/fleet-edge-site-a rolebinding/fleet-edge-site-a \
                    clusterrole/fleet-edge-site-a clusterrolebinding/fleet-edge-site-a -o name";
    assert_eq!(shell(&hub, identity).ok().stdout.lines().count(), 5);

    shell(&hub, "kubectl delete fc site-a").ok();
    let after = shell(&hub, identity);
    assert_ne!(after.code, 0, "{}\n{}", after.stdout, after.stderr);
    assert_eq!(after.stdout.trim(), "", "all five are gone");
    assert_eq!(
        after.stderr.matches("NotFound").count(),
        5,
        "{}",
        after.stderr
    );
    let rejected = shell(&hub, as_site);
    assert_ne!(rejected.code, 0);
    assert!(
        rejected.stderr.contains("Unauthorized") || rejected.stderr.contains("provide credentials"),
        "{}",
        rejected.stderr
    );
}

#[test]
fn register_labels_select_sites_with_kubectl_and_follow_re_registration() {
    let hub = Hub::new();
    hub.fleet(&[
        "register",
        "site-a",
        "--tier",
        "critical",
        "--environment",
        "staging",
        "--region",
        "eu-west-1",
    ])
    .ok();
    hub.fleet(&["register", "site-b", "--tier", "standard"])
        .ok();
    let get = |selector: &str| {
        shell(
            &hub,
            &format!(
                "kubectl get fc -l {selector} -o custom-columns=NAME:.metadata.name --no-headers"
            ),
        )
        .ok()
        .stdout
    };
    assert_eq!(
        get("federation.kubectl-fleet.dev/tier=critical"),
        "site-a\n"
    );
    assert_eq!(
        get(
            "federation.kubectl-fleet.dev/environment=staging,federation.kubectl-fleet.dev/region=eu-west-1"
        ),
        "site-a\n"
    );
    // Re-registering with another tier moves the label with the spec.
    hub.fleet(&["register", "site-a", "--tier", "standard"])
        .ok();
    assert_eq!(get("federation.kubectl-fleet.dev/tier=critical"), "");
    assert_eq!(
        get("federation.kubectl-fleet.dev/tier=standard"),
        "site-a\nsite-b\n"
    );
    assert_eq!(
        get("federation.kubectl-fleet.dev/region=eu-west-1"),
        "site-a\n",
        "a value not given again is kept, label included"
    );
}
