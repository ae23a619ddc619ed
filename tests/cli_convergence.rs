//! `register` converges: make it fail at each of its API calls in turn
//! (sandbox fault injection), re-run it, and find exactly one of each object
//! and a working token. Also `rotate --revoke` and `unregister`.

use crate::support;

use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Api, ListParams};
use kube_sandbox::FaultRule;
use kubectl_fleet::api::FederatedCluster;
use support::{Hub, client_from_yaml, status_code, token_of};

const SITE_LABEL: &str = "federation.kubectl-fleet.dev/site";

/// How many objects of each kind carry the site's label.
async fn counts(client: &kube::Client, site: &str) -> [usize; 6] {
    let lp = ListParams::default().labels(&format!("{SITE_LABEL}={site}"));
    [
        Api::<ServiceAccount>::all(client.clone())
            .list(&lp)
            .await
            .unwrap()
            .items
            .len(),
        Api::<ClusterRole>::all(client.clone())
            .list(&lp)
            .await
            .unwrap()
            .items
            .len(),
        Api::<ClusterRoleBinding>::all(client.clone())
            .list(&lp)
            .await
            .unwrap()
            .items
            .len(),
        Api::<Role>::all(client.clone())
            .list(&lp)
            .await
            .unwrap()
            .items
            .len(),
        Api::<RoleBinding>::all(client.clone())
            .list(&lp)
            .await
            .unwrap()
            .items
            .len(),
        Api::<FederatedCluster>::all(client.clone())
            .list(&lp)
            .await
            .unwrap()
            .items
            .len(),
    ]
}

async fn token_works(config: &str, site: &str) {
    let client = client_from_yaml(config).await;
    Api::<FederatedCluster>::all(client)
        .get(site)
        .await
        .unwrap_or_else(|e| panic!("the token of {site} must work: {e}"));
}

/// Fails the `k`-th API call from now (counting from 0) with a 500, once.
fn fail_call(k: usize) -> FaultRule {
    FaultRule {
        status: 500,
        skip: u32::try_from(k).unwrap(),
        count: 1,
        ..Default::default()
    }
}

/// A `register` of `site` after a run that failed at call `k`: every
/// identity object exists exactly once and the printed token works.
async fn registers_whole(hub: &Hub, admin: &kube::Client, site: &str, k: usize) {
    let summary = hub.register(site, &[]);
    assert_eq!(counts(admin, site).await, [1; 6], "after failing call {k}");
    token_works(summary["config"].as_str().unwrap(), site).await;
}

on_both_lanes! {
async fn register_interrupted_after_any_call_converges_on_rerun(lane) {
    let hub = Hub::on(lane);
    let admin = hub.admin().await;
    let controls = hub.sandbox.controls();

    // The first site creates fleet-sites; the sites below find it there.
    hub.register("probe", &[]);
    controls.clear_request_log();
    hub.register("probe-2", &[]);
    let calls = controls.request_log().len();
    assert!(
        calls >= 8,
        "register of a new site makes at least 8 calls (read, 6 applies, token), saw {calls}"
    );

    for k in 0..calls {
        let site = format!("conv-{k}");
        controls.fail(fail_call(k));
        let failed = hub.fleet(&["register", &site, "-o", "json"]);
        let line = failed.one_line_error();
        assert!(line.contains("(500)"), "call {k}: {line}");
        assert!(
            line.contains("re-run"),
            "the hint says a re-run fixes it: {line}"
        );
        controls.clear_faults();
        registers_whole(&hub, &admin, &site, k).await;
    }
    let namespaces = Api::<Namespace>::all(admin.clone())
        .list(&ListParams::default())
        .await
        .unwrap();
    assert_eq!(
        namespaces
            .items
            .iter()
            .filter(|n| n.metadata.name.as_deref() == Some("fleet-sites"))
            .count(),
        1
    );
}
}

/// The first site of a hub creates `fleet-sites` when an apply finds it
/// missing: interrupted at any call of that run, a re-run converges too.
#[tokio::test]
async fn first_site_interrupted_after_any_call_converges_on_rerun() {
    let calls = {
        let hub = Hub::new();
        hub.sandbox.controls().clear_request_log();
        hub.register("first", &[]);
        hub.sandbox.controls().request_log().len()
    };
    for k in 0..calls {
        let hub = Hub::new();
        let admin = hub.admin().await;
        hub.sandbox.controls().fail(fail_call(k));
        let line = hub
            .fleet(&["register", "first", "-o", "json"])
            .one_line_error();
        assert!(line.contains("(500)"), "call {k}: {line}");
        hub.sandbox.controls().clear_faults();
        registers_whole(&hub, &admin, "first", k).await;
    }
}

/// A re-run that changes nothing skips the applies only on proof: a role
/// or binding deleted by hand since is noticed (the new token's rules
/// differ) and applied again, as is an identity whose ServiceAccount lost
/// its digest; and a re-run failing at any of its calls converges.
#[tokio::test]
async fn rerun_repairs_a_deleted_identity_object() {
    let hub = Hub::new();
    let admin = hub.admin().await;
    hub.register("site-a", &[]);
    let name = "fleet-edge-site-a";
    let dp = kube::api::DeleteParams::default();
    for kind in ["Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"] {
        match kind {
            "Role" => drop(
                Api::<Role>::namespaced(admin.clone(), "fleet-sites")
                    .delete(name, &dp)
                    .await
                    .unwrap(),
            ),
            "RoleBinding" => drop(
                Api::<RoleBinding>::namespaced(admin.clone(), "fleet-sites")
                    .delete(name, &dp)
                    .await
                    .unwrap(),
            ),
            "ClusterRole" => drop(
                Api::<ClusterRole>::all(admin.clone())
                    .delete(name, &dp)
                    .await
                    .unwrap(),
            ),
            _ => drop(
                Api::<ClusterRoleBinding>::all(admin.clone())
                    .delete(name, &dp)
                    .await
                    .unwrap(),
            ),
        }
        assert_eq!(
            counts(&admin, "site-a").await.iter().sum::<usize>(),
            5,
            "{kind} deleted"
        );
        let summary = hub.register("site-a", &[]);
        let applied: Vec<&str> = summary["objects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert!(
            applied.contains(&kind),
            "{kind} deleted: applied {applied:?}"
        );
        assert_eq!(counts(&admin, "site-a").await, [1; 6], "{kind} deleted");
        token_works(summary["config"].as_str().unwrap(), "site-a").await;
    }

    // A ServiceAccount without the digest (e.g. recreated by hand) makes
    // the re-run apply everything again.
    let accounts = Api::<ServiceAccount>::namespaced(admin.clone(), "fleet-sites");
    let patch = serde_json::json!({"metadata": {"annotations": {
        "federation.kubectl-fleet.dev/identity-digest": null}}});
    accounts
        .patch(name, &Default::default(), &kube::api::Patch::Merge(&patch))
        .await
        .unwrap();
    let summary = hub.register("site-a", &[]);
    // The identity's five objects and the site's lease.
    assert_eq!(summary["objects"].as_array().unwrap().len(), 6, "{summary}");

    // Nothing missing: nothing applied.
    let summary = hub.register("site-a", &[]);
    assert_eq!(summary["objects"], serde_json::json!([]));

    // Interrupted at any call of such a re-run, the next one converges.
    let controls = hub.sandbox.controls();
    controls.clear_request_log();
    hub.register("site-a", &[]);
    let calls = controls.request_log().len();
    for k in 0..calls {
        controls.fail(fail_call(k));
        // A failing rules review is not an error: the identity is applied.
        let _ = hub.fleet(&["register", "site-a", "-o", "json"]);
        controls.clear_faults();
        registers_whole(&hub, &admin, "site-a", k).await;
    }
}

on_both_lanes! {
async fn rotate_revoke_rejects_the_old_token_and_the_new_one_works(lane) {
    let hub = Hub::on(lane);
    let first = hub.register("site-a", &[]);
    let old_config = first["config"].as_str().unwrap().to_owned();
    token_works(&old_config, "site-a").await;

    // Without --revoke, the old token stays valid.
    let plain = hub.fleet(&["rotate", "site-a", "-o", "json"]).ok().json();
    token_works(&old_config, "site-a").await;
    token_works(plain["config"].as_str().unwrap(), "site-a").await;

    let revoked = hub
        .fleet(&["rotate", "site-a", "--revoke", "-o", "json"])
        .ok()
        .json();
    let new_config = revoked["config"].as_str().unwrap();
    assert_ne!(token_of(new_config), token_of(&old_config));
    let old = client_from_yaml(&old_config).await;
    assert_eq!(
        status_code(Api::<FederatedCluster>::all(old).get("site-a").await),
        401
    );
    let older = client_from_yaml(plain["config"].as_str().unwrap()).await;
    assert_eq!(
        status_code(Api::<FederatedCluster>::all(older).get("site-a").await),
        401
    );
    token_works(new_config, "site-a").await;

    let missing = hub.fleet(&["rotate", "site-z"]);
    let line = missing.one_line_error();
    assert!(
        line.contains("not registered") && line.contains("kubectl fleet register site-z"),
        "{line}"
    );
}
}

on_both_lanes! {
async fn unregister_leaves_nothing_behind_and_is_idempotent(lane) {
    let hub = Hub::on(lane);
    let admin = hub.admin().await;
    hub.register("site-a", &[]);
    hub.register("site-b", &[]);

    let refused = hub.fleet(&["unregister", "site-a"]);
    let line = refused.one_line_error();
    assert!(line.contains("--yes"), "{line}");
    assert_eq!(
        counts(&admin, "site-a").await,
        [1; 6],
        "nothing removed without confirmation"
    );

    let run = hub.fleet(&["unregister", "site-a", "--yes"]).ok();
    assert!(
        run.stderr.contains("FederatedCluster site-a deleted"),
        "{}",
        run.stderr
    );
    assert_eq!(counts(&admin, "site-a").await, [0; 6]);
    let secrets = Api::<Secret>::namespaced(admin.clone(), "fleet-system");
    assert!(
        secrets
            .list(&ListParams::default().labels(&format!("{SITE_LABEL}=site-a")))
            .await
            .unwrap()
            .items
            .is_empty()
    );
    assert_eq!(
        counts(&admin, "site-b").await,
        [1; 6],
        "other sites untouched"
    );

    // Nothing left: an error, as `kubectl delete` of a missing object.
    let again = hub.fleet(&["unregister", "site-a", "--yes"]);
    assert_eq!(
        again.one_line_error(),
        "error: site \"site-a\" not found: nothing to remove: `kubectl fleet status` lists the registered sites"
    );
}
}

#[tokio::test]
async fn unregister_interrupted_after_any_call_finishes_on_rerun() {
    let hub = Hub::new();
    let admin = hub.admin().await;
    let controls = hub.sandbox.controls();

    hub.register("probe", &[]);
    controls.clear_request_log();
    hub.fleet(&["unregister", "probe", "--yes"]).ok();
    let calls = controls.request_log().len();
    assert!(
        calls >= 7,
        "unregister deletes at least 7 objects, saw {calls} calls"
    );

    for k in 0..calls {
        let site = format!("gone-{k}");
        hub.register(&site, &[]);
        controls.fail(fail_call(k));
        hub.fleet(&["unregister", &site, "--yes"]).one_line_error();
        controls.clear_faults();
        // The re-run removes what is left; when the failed call was the
        // last (of an object a Push site never had), nothing is left and
        // it says so, as `kubectl delete` of a missing object does.
        let rerun = hub.fleet(&["unregister", &site, "--yes"]);
        assert!(
            rerun.code == 0
                || rerun
                    .one_line_error()
                    .contains("not found: nothing to remove"),
            "after failing call {k}: {}",
            rerun.stderr
        );
        assert_eq!(
            counts(&admin, &site).await,
            [0; 6],
            "after failing call {k}"
        );
    }
}

/// `unregister` asks on a terminal (a pseudo-terminal from util-linux
/// `script`) and only proceeds on "y".
#[tokio::test]
async fn unregister_confirms_on_a_terminal() {
    assert!(
        std::process::Command::new("script")
            .arg("--version")
            .output()
            .is_ok(),
        "util-linux `script` is needed to drive a pseudo-terminal"
    );
    let hub = Hub::new();
    let admin = hub.admin().await;
    hub.register("site-a", &[]);
    let answer = |key: &str| {
        let cmd = format!(
            "{} --kubeconfig {} unregister site-a",
            support::BIN,
            hub.kubeconfig.display()
        );
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "(sleep 1; printf {key}) | script -qec '{cmd}' /dev/null"
            ))
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, out) = answer("n");
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("Unregister site site-a?"), "{out}");
    assert_eq!(
        counts(&admin, "site-a").await,
        [1; 6],
        "declined: nothing removed"
    );
    let (code, out) = answer("y");
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(counts(&admin, "site-a").await, [0; 6]);
}
