//! What a site token may do to the heartbeat objects (`FederatedClusterLease`),
//! through the real kubectl on both lanes: its ClusterRole names its own
//! lease only (get, update, patch), and the admission policy
//! `fleet-site-lease` that `kubectl fleet install` ships confines it to
//! that lease's spec even when an administrator grants it more.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use kubectl_fleet::manifests::admission::SITE_LEASE_POLICY;
use support::{Hub, Kubectl, Run};

fn as_site(kubeconfig: &Path, args: &[&str]) -> Run {
    Kubectl::new(kubeconfig).args(args).run()
}

/// Asserts the site's kubectl was refused by the lease policy with `message`.
#[track_caller]
fn assert_policy_refused(run: &Run, message: &str) {
    assert_eq!(run.code, 1, "{}", run.stdout);
    let want = format!(
        "ValidatingAdmissionPolicy '{SITE_LEASE_POLICY}' with binding '{SITE_LEASE_POLICY}' denied request: {message}\n"
    );
    assert!(
        run.stderr.starts_with("Error from server (Forbidden)") && run.stderr.ends_with(&want),
        "want …{want}got {}",
        run.stderr
    );
}

/// Asserts the site's kubectl was refused by RBAC (not by a policy).
#[track_caller]
fn assert_rbac_refused(run: &Run, verb: &str) {
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr.contains("Error from server (Forbidden)")
            && run.stderr.contains(&format!(
                "cannot {verb} resource \"federatedclusterleases\""
            ))
            && !run.stderr.contains("ValidatingAdmissionPolicy"),
        "{}",
        run.stderr
    );
}

const SPEC_ONLY: &str = "a site may change only the spec of its FederatedClusterLease: its labels, annotations, finalizers and owners are register's";

on_both_lanes! {
fn a_site_token_may_renew_only_the_spec_of_its_own_lease(lane) {
    let hub = Hub::bare_on(lane, Default::default());
    let run = hub.fleet(&["install", "--apply"]).ok();
    assert!(
        run.stderr.contains(&format!("ValidatingAdmissionPolicy {SITE_LEASE_POLICY} applied")),
        "{}",
        run.stderr
    );
    let site_a = hub.dir.path().join("site-a.kubeconfig");
    let site_b = hub.dir.path().join("site-b.kubeconfig");
    for (site, out) in [("site-a", &site_a), ("site-b", &site_b)] {
        hub.fleet(&["register", site, "--output-file", &out.display().to_string()])
            .ok();
    }
    // The policy is in force once the site's label write is refused (the
    // real server's admission plugin learns of it a moment after).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let run = as_site(&site_a, &["label", "fcl", "site-a", "x=y", "--dry-run=server"]);
        if run.code != 0 {
            assert_policy_refused(&run, SPEC_ONLY);
            break;
        }
        assert!(Instant::now() < deadline, "the lease policy is not in force after 20s");
        std::thread::sleep(Duration::from_millis(100));
    }

    // Its own lease's spec: renewed, as the edge renews it (clearing the
    // lease's managedFields, `k8s::site_lease::renewal_patch`).
    let renew = r#"{"metadata":{"managedFields":[{}]},"spec":{"renewTime":"2026-12-06T10:00:00Z","lastRenewDurationMilliseconds":10}}"#;
    as_site(&site_a, &["patch", "fcl", "site-a", "--type", "merge", "-p", renew]).ok();
    let lease = hub
        .kubectl(&["get", "fcl", "site-a", "-o", "json", "--show-managed-fields"])
        .ok()
        .json();
    assert_eq!(lease["spec"]["renewTime"], "2026-12-06T10:00:00Z");
    // The renewal cleared the record of who wrote what (register's apply).
    assert!(lease["metadata"].get("managedFields").is_none(), "{lease}");
    // Anything else of it: the policy.
    for args in [
        vec!["label", "fcl", "site-a", "x=y"],
        vec!["annotate", "fcl", "site-a", "x=y"],
        vec!["patch", "fcl", "site-a", "--type", "merge", "-p", r#"{"metadata":{"finalizers":["example.com/keep"]}}"#],
        vec!["patch", "fcl", "site-a", "--type", "merge", "-p", r#"{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"x","uid":"6a3c1b2e-0000-4000-8000-000000000001"}]},"spec":{"renewTime":"2026-12-06T10:00:05Z"}}"#],
        vec!["label", "fcl", "site-a", "federation.kubectl-fleet.dev/bucket=7", "--overwrite"],
    ] {
        assert_policy_refused(&as_site(&site_a, &args), SPEC_ONLY);
    }
    // Another site's lease (kubectl reads it before patching), deleting
    // its own, listing: RBAC.
    assert_rbac_refused(
        &as_site(&site_a, &["patch", "fcl", "site-b", "--type", "merge", "-p", renew]),
        "get",
    );
    assert_rbac_refused(&as_site(&site_a, &["delete", "fcl", "site-a"]), "delete");
    assert_rbac_refused(&as_site(&site_a, &["get", "fcl"]), "list");

    // An administrator grants the site every verb on every lease: the
    // policy still keeps it to its own lease's spec.
    let grant = r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"careless-leases"},"rules":[{"apiGroups":["federation.kubectl-fleet.dev"],"resources":["federatedclusterleases"],"verbs":["*"]}]}"#;
    let grant_file = hub.dir.path().join("careless.json");
    std::fs::write(&grant_file, grant).unwrap();
    hub.kubectl(&["apply", "-f", &grant_file.display().to_string()]).ok();
    hub.kubectl(&[
        "create", "clusterrolebinding", "careless-leases", "--clusterrole", "careless-leases",
        "--serviceaccount", "fleet-sites:fleet-edge-site-a",
    ])
    .ok();
    let deadline = Instant::now() + Duration::from_secs(20);
    while as_site(&site_a, &["get", "fcl"]).code != 0 {
        assert!(Instant::now() < deadline, "the grant is not in force after 20s");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_policy_refused(
        &as_site(&site_a, &["patch", "fcl", "site-b", "--type", "merge", "-p", renew]),
        "a site may renew only the FederatedClusterLease named as its own site",
    );
    let no_create_delete = "a site may not create or delete a FederatedClusterLease: `kubectl fleet register SITE` creates it, `kubectl fleet unregister SITE` deletes it";
    assert_policy_refused(&as_site(&site_a, &["delete", "fcl", "site-a"]), no_create_delete);
    assert_policy_refused(&as_site(&site_a, &["delete", "fcl", "site-b"]), no_create_delete);
    let other = hub.dir.path().join("other.json");
    std::fs::write(
        &other,
        r#"{"apiVersion":"federation.kubectl-fleet.dev/v1alpha1","kind":"FederatedClusterLease","metadata":{"name":"site-z"},"spec":{}}"#,
    )
    .unwrap();
    assert_policy_refused(
        &as_site(&site_a, &["create", "-f", &other.display().to_string()]),
        no_create_delete,
    );
    // Both leases are as register and the renewal left them.
    for site in ["site-a", "site-b"] {
        let lease = hub.kubectl(&["get", "fcl", site, "-o", "json"]).ok().json();
        assert!(lease["metadata"]["labels"].get("x").is_none(), "{lease}");
        assert!(lease["metadata"].get("ownerReferences").is_none(), "{lease}");
        assert!(lease["metadata"].get("finalizers").is_none(), "{lease}");
    }
    assert_eq!(
        hub.kubectl(&["get", "fcl", "site-b", "-o", "jsonpath={.spec}"]).ok().stdout,
        "{}"
    );
}
}
