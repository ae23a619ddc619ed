//! A Pull site's hub Secret made by hand, as a GitOps repository holds it
//! (docs/pull-mode.md#a-pull-secret-from-git), against a real hub
//! `fleet-operator` running with the RBAC `install` ships: applied with
//! `kubectl apply` without the hub's grant of it, the site says
//! `SecretNotGranted` naming the Role and RoleBinding; with them applied
//! but without the labels the hub requires, `SecretNotLabelled` naming each
//! missing label and the command that adds them; after running that very
//! command, the site connects without a restart.
//!
//! Intervals: `heartbeatIntervalSeconds: 10` scaled by `--interval-scale
//! 0.3`, so I = 3 s.

use crate::support;

use std::path::Path;

use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use kube_sandbox::Sandbox;
use kubectl_fleet::api::FederatedCluster;
use kubectl_fleet::fleet::rbac;
use support::*;

/// Runs the real kubectl against the hub; panics on failure, returns stdout.
fn kubectl(hub_kc: &Path, args: &[&str], stdin: Option<&str>) -> String {
    let run = Kubectl::new(hub_kc).args(args);
    match stdin {
        Some(text) => run.stdin(text),
        None => run,
    }
    .ok()
    .stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_made_pull_secret_is_used_once_labelled_and_named_when_not() {
    let dir = TempDir::new("gitops-pull");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let hub = admin(&hub_sb).await;
    let api: Api<FederatedCluster> = Api::all(hub.clone());
    let secrets: Api<Secret> = Api::namespaced(hub.clone(), rbac::FLEET_NAMESPACE);

    // The member, and a credential of the site's own identity there (what
    // the GitOps repository's sealed Secret would hold): minted by
    // `register --pull`, whose own Secret then goes away.
    let member_sb = Sandbox::start();
    let member_kc = dir.join("member.kubeconfig");
    member_sb.write_admin_kubeconfig(&member_kc).unwrap();
    seed_member(
        &admin(&member_sb).await,
        &[NodeSeed {
            name: "dr-eu-node-1",
            gpus: &[],
            ready: true,
        }],
        &[],
    )
    .await;
    fleet_cli(
        &hub_kc,
        &[
            "register",
            "dr-eu",
            "--pull",
            "--member-kubeconfig",
            member_kc.to_str().unwrap(),
            "--heartbeat-interval",
            "10",
        ],
    );
    let name = rbac::pull_secret_name("dr-eu");
    let stored = secrets.get(&name).await.unwrap();
    let kubeconfig = stored.data.as_ref().unwrap()["kubeconfig"].0.clone();
    kubectl(
        &hub_kc,
        &["delete", "secret", "-n", "fleet-system", &name],
        None,
    );
    // Nor the hub's grant of it: a repository holds that too (below).
    let grant = rbac::pull_secret_grant_name(&name);
    kubectl(
        &hub_kc,
        &["delete", "role,rolebinding", "-n", "fleet-system", &grant],
        None,
    );

    // The Secret as Git holds it, without the labels.
    let encoded = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &kubeconfig);
    let manifest = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\n  namespace: fleet-system\ntype: Opaque\ndata:\n  kubeconfig: {encoded}\n"
    );
    kubectl(&hub_kc, &["apply", "-f", "-"], Some(&manifest));

    let operator_kc = hub_operator_kubeconfig(&hub_sb, &dir).await;
    let (mut args, _) = hub_args_tls(&operator_kc, &dir, "hub-1", 0.3);
    args.extend([
        "--probe-timeout".to_owned(),
        "4s".to_owned(),
        // The member is a kube-sandbox on the hub's own loopback.
        "--pull-allow-cidr".to_owned(),
        "127.0.0.0/8".to_owned(),
    ]);
    let _hub_proc = Proc::spawn("hub", &operator_bin(), &args, dir.join("hub.log"));

    // No grant: the hub may not read it, and says what grants it.
    let message = wait_connected(&api, "dr-eu", "False", "SecretNotGranted").await;
    assert_eq!(
        message,
        format!(
            "the hub may not read Secret fleet-system/{name}: it reads only the pull Secrets granted to it by name (Role and RoleBinding fleet-system/{grant}); run `kubectl fleet register dr-eu` to grant it, or apply them where the Secret is made"
        )
    );
    // The grant as docs/pull-mode.md#a-pull-secret-from-git gives it.
    let grant_manifest = format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: {grant}\n  namespace: fleet-system\nrules:\n- apiGroups: [\"\"]\n  resources: [secrets]\n  resourceNames: [{name}]\n  verbs: [get, patch]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: {grant}\n  namespace: fleet-system\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: {grant}\nsubjects:\n- kind: ServiceAccount\n  name: fleet-operator-hub\n  namespace: fleet-system\n"
    );
    kubectl(&hub_kc, &["apply", "-f", "-"], Some(&grant_manifest));

    let message = wait_connected(&api, "dr-eu", "False", "SecretNotLabelled").await;
    let command = format!(
        "kubectl label secret -n fleet-system {name} app.kubernetes.io/managed-by=kubectl-fleet federation.kubectl-fleet.dev/site=dr-eu --overwrite"
    );
    assert_eq!(
        message,
        format!(
            "Secret fleet-system/{name} lacks the labels app.kubernetes.io/managed-by=kubectl-fleet and federation.kubectl-fleet.dev/site=dr-eu, which the hub requires of a pull Secret: run `{command}` (or add it where the Secret is made)"
        )
    );

    // (A Secret lacking one label is named the same way; the hub rewrites
    // a condition only on a transition, so that message is unit-tested in
    // `k8s::pull`.)

    // The command the first message gave, run as given: the next probe
    // uses the Secret.
    let words: Vec<&str> = command.split_whitespace().skip(1).collect();
    kubectl(&hub_kc, &words, None);
    wait_connected(&api, "dr-eu", "True", "ProbeSucceeded").await;
    let status = api.get("dr-eu").await.unwrap().status.unwrap();
    assert_eq!(status.node_count, Some(1));
}
