//! Through the real kubectl binary, as a user types it: with the built
//! kubectl-fleet on PATH, `kubectl fleet …` runs the plugin; kubectl itself
//! shows the printer columns and applies the install manifests.

mod cli_support;

use std::path::Path;

use cli_support::{Hub, shell};

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
    let header: Vec<&str> = get
        .stdout
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "NAME",
            "MODE",
            "TIER",
            "ENV",
            "PHASE",
            "LAST",
            "HEARTBEAT",
            "GPUS",
            "AGE"
        ]
    );
    let row: Vec<&str> = get
        .stdout
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(&row[..4], ["site-a", "Push", "critical", "production"]);

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
