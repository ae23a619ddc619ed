//! The least-privilege site identity at runtime: authenticating with ONLY the token `register`
//! minted, a site can read its own FederatedCluster and patch its own
//! status, and gets 403 for everything else; nothing granted to the
//! operator's namespace reaches a site; and the hub operator's own
//! ServiceAccount may do what `install` grants it and no more.

use crate::support;

use futures::StreamExt as _;
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchParams};
use kubectl_fleet::api::{FederatedCluster, FederatedClusterSpec, FederationStatus};
use serde_json::json;
use support::{Hub, client_from_yaml, status_code, token_of};

fn token_request() -> TokenRequest {
    serde_json::from_value(json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": { "audiences": [], "expirationSeconds": 3600 }
    }))
    .unwrap()
}

on_both_lanes! {
async fn the_site_token_can_do_exactly_what_design_section_3_allows(lane) {
    let hub = Hub::on(lane);
    let a = hub.register("site-a", &[]);
    hub.register("site-b", &[]);
    // The kubeconfig register printed is the only credential used below.
    let site = client_from_yaml(a["config"].as_str().unwrap()).await;
    let sites: Api<FederatedCluster> = Api::all(site.clone());
    let merge = PatchParams::default();

    // Allowed.
    let own = sites.get("site-a").await.expect("get own site");
    assert_eq!(own.spec.tier, kubectl_fleet::api::Tier::Standard);
    let heartbeat =
        json!({ "status": { "lastHeartbeatTime": "2026-01-01T00:00:00Z", "nodeCount": 3 } });
    sites
        .patch_status("site-a", &merge, &Patch::Merge(&heartbeat))
        .await
        .expect("patch own status");

    // Forbidden.
    assert_eq!(
        status_code(
            sites
                .patch_status("site-b", &merge, &Patch::Merge(&heartbeat))
                .await
        ),
        403
    );
    assert_eq!(status_code(sites.get("site-b").await), 403);
    assert_eq!(status_code(sites.list(&ListParams::default()).await), 403);
    let watch = sites.watch(&WatchParams::default(), "0").await;
    match watch {
        Err(kube::Error::Api(s)) => assert_eq!(s.code, 403),
        Err(other) => panic!("unexpected watch error {other:?}"),
        Ok(stream) => {
            let first = Box::pin(stream).next().await;
            assert!(
                matches!(
                    first,
                    Some(Err(_)) | Some(Ok(kube::api::WatchEvent::Error(_)))
                ),
                "watch must be refused, got {first:?}"
            );
        }
    }
    let spec_patch = json!({ "spec": { "tier": "critical" } });
    assert_eq!(
        status_code(
            sites
                .patch("site-a", &merge, &Patch::Merge(&spec_patch))
                .await
        ),
        403
    );
    assert_eq!(
        status_code(sites.delete("site-a", &DeleteParams::default()).await),
        403
    );
    let new_site = FederatedCluster::new("site-x", FederatedClusterSpec::default());
    assert_eq!(
        status_code(sites.create(&PostParams::default(), &new_site).await),
        403
    );
    let secrets: Api<Secret> = Api::namespaced(site.clone(), "fleet-system");
    assert_eq!(status_code(secrets.get("fleet-pull-site-b").await), 403);
    assert_eq!(status_code(secrets.list(&ListParams::default()).await), 403);
    let accounts: Api<ServiceAccount> = Api::namespaced(site.clone(), "fleet-sites");
    assert_eq!(
        status_code(
            accounts
                .create_token_request(
                    "fleet-edge-site-b",
                    &PostParams::default(),
                    &token_request()
                )
                .await
        ),
        403,
        "a site must not mint tokens for another identity"
    );

    // Auto-rotation (default): the edge may renew its own token.
    let renewed = accounts
        .create_token_request(
            "fleet-edge-site-a",
            &PostParams::default(),
            &token_request(),
        )
        .await
        .expect("mint own token with auto-rotation");
    assert!(!renewed.status.unwrap().token.is_empty());

    // The spec is untouched by all of the above.
    let admin: Api<FederatedCluster> = Api::all(hub.admin().await);
    assert_eq!(
        admin.get("site-a").await.unwrap().spec.tier,
        kubectl_fleet::api::Tier::Standard
    );
    assert!(
        admin
            .get("site-b")
            .await
            .unwrap()
            .status
            .is_none_or(|s| s.node_count.is_none())
    );
}
}

on_both_lanes! {
async fn without_auto_rotation_the_site_cannot_mint_its_own_token(lane) {
    let hub = Hub::on(lane);
    let c = hub.register("site-c", &["--no-auto-rotate"]);
    let site = client_from_yaml(c["config"].as_str().unwrap()).await;
    let accounts: Api<ServiceAccount> = Api::namespaced(site, "fleet-sites");
    assert_eq!(
        status_code(
            accounts
                .create_token_request(
                    "fleet-edge-site-c",
                    &PostParams::default(),
                    &token_request()
                )
                .await
        ),
        403
    );

    // Converging: turning auto-rotation off on a re-run removes the Role.
    let a = hub.register("site-a", &[]);
    let site_a = client_from_yaml(a["config"].as_str().unwrap()).await;
    let accounts: Api<ServiceAccount> = Api::namespaced(site_a, "fleet-sites");
    accounts
        .create_token_request(
            "fleet-edge-site-a",
            &PostParams::default(),
            &token_request(),
        )
        .await
        .expect("auto-rotation on");
    let again = hub.register("site-a", &["--no-auto-rotate"]);
    let removed: Vec<String> = again["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(removed, ["RoleBinding", "Role"]);
    assert_eq!(
        status_code(
            accounts
                .create_token_request(
                    "fleet-edge-site-a",
                    &PostParams::default(),
                    &token_request()
                )
                .await
        ),
        403
    );
}
}

/// A token for ServiceAccount `ns/name`, minted as admin.
async fn token_for(admin: &kube::Client, ns: &str, name: &str) -> String {
    Api::<ServiceAccount>::namespaced(admin.clone(), ns)
        .create_token_request(name, &PostParams::default(), &token_request())
        .await
        .unwrap()
        .status
        .unwrap()
        .token
}

fn object<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).unwrap()
}

/// Namespace `fleet-system`, as `install` makes it (these hubs have only
/// the CRDs).
async fn operator_namespace(admin: &kube::Client) {
    Api::<Namespace>::all(admin.clone())
        .create(
            &PostParams::default(),
            &object(json!({ "metadata": { "name": "fleet-system" } })),
        )
        .await
        .unwrap();
}

on_both_lanes! {
/// Whatever a cluster grants the operator's namespace — here a role bound
/// to the group of every ServiceAccount in `fleet-system`, which does
/// reach a ServiceAccount there — reaches no site: site identities live in
/// `fleet-sites`, no pod mounts their tokens, and nothing may run there
/// unrestricted.
async fn grants_to_the_operator_namespace_do_not_reach_a_site(lane) {
    let hub = Hub::on(lane);
    let a = hub.register("site-a", &[]);
    hub.register("site-b", &[]);
    let admin = hub.admin().await;
    let pp = PostParams::default();
    Api::<ClusterRole>::all(admin.clone())
        .create(
            &pp,
            &object(json!({
                "metadata": { "name": "operator-namespace-wide" },
                "rules": [
                    { "apiGroups": ["federation.kubectl-fleet.dev"], "resources": ["federatedclusters"], "verbs": ["list", "get"] },
                    { "apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"] },
                    { "apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"] },
                ],
            })),
        )
        .await
        .unwrap();
    Api::<ClusterRoleBinding>::all(admin.clone())
        .create(
            &pp,
            &object(json!({
                "metadata": { "name": "operator-namespace-wide" },
                "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "operator-namespace-wide" },
                "subjects": [{ "apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:serviceaccounts:fleet-system" }],
            })),
        )
        .await
        .unwrap();

    // The grant works for a ServiceAccount of fleet-system...
    operator_namespace(&admin).await;
    Api::<ServiceAccount>::namespaced(admin.clone(), "fleet-system")
        .create(&pp, &object(json!({ "metadata": { "name": "neighbour" } })))
        .await
        .unwrap();
    let neighbour = client_from_yaml(
        &hub.sandbox
            .kubeconfig_for_token(&token_for(&admin, "fleet-system", "neighbour").await),
    )
    .await;
    Api::<FederatedCluster>::all(neighbour)
        .list(&ListParams::default())
        .await
        .expect("the grant reaches fleet-system's ServiceAccounts");

    // ...and not a site's.
    let site = client_from_yaml(a["config"].as_str().unwrap()).await;
    let sites: Api<FederatedCluster> = Api::all(site.clone());
    assert_eq!(status_code(sites.list(&ListParams::default()).await), 403);
    assert_eq!(status_code(sites.get("site-b").await), 403);
    let secrets: Api<Secret> = Api::namespaced(site.clone(), "fleet-system");
    assert_eq!(status_code(secrets.list(&ListParams::default()).await), 403);
    let accounts: Api<ServiceAccount> = Api::namespaced(site.clone(), "fleet-sites");
    assert_eq!(
        status_code(
            accounts
                .create_token_request("fleet-edge-site-b", &pp, &token_request())
                .await
        ),
        403
    );

    // Where a site's identity lives, and that no pod gets its token.
    let sa = Api::<ServiceAccount>::namespaced(admin.clone(), "fleet-sites")
        .get("fleet-edge-site-a")
        .await
        .unwrap();
    assert_eq!(sa.automount_service_account_token, Some(false));
    let ns = Api::<Namespace>::all(admin.clone())
        .get("fleet-sites")
        .await
        .unwrap();
    assert_eq!(
        ns.metadata.labels.unwrap()["pod-security.kubernetes.io/enforce"],
        "restricted"
    );
    for (kind, found) in [
        (
            "ServiceAccount",
            Api::<ServiceAccount>::namespaced(admin.clone(), "fleet-system")
                .get_opt("fleet-edge-site-a")
                .await
                .unwrap()
                .is_some(),
        ),
        (
            "Role",
            Api::<Role>::namespaced(admin.clone(), "fleet-system")
                .get_opt("fleet-edge-site-a")
                .await
                .unwrap()
                .is_some(),
        ),
    ] {
        assert!(!found, "{kind} fleet-edge-site-a in fleet-system");
    }
}
}

on_both_lanes! {
/// The hub operator as `install --apply` ships it: a token of its own
/// ServiceAccount does what the hub's code does (watch sites, write their
/// status, keep the FederationStatus, its Lease, read and update each Pull
/// site's Secret by name, record Events in `default`, review callers'
/// tokens) and is refused the rest: no site spec, no deletes, no other
/// Secret (its serving key, the cert-manager CA) and no list of Secrets,
/// no Event elsewhere, nothing in `fleet-sites`, no token for any identity.
async fn the_hub_operator_may_do_what_its_code_does_and_nothing_more(lane) {
    let hub = Hub::bare_on(lane, Default::default());
    hub.fleet(&["install", "--apply"]).ok();
    hub.register("site-a", &[]);
    let member = kube_sandbox::Sandbox::start();
    let member_kc = hub.dir.path().join("member.kubeconfig");
    member.write_admin_kubeconfig(&member_kc).unwrap();
    support::register_pull(&hub.kubeconfig, "dr-eu", &member_kc, &[]);
    let admin = hub.admin().await;
    let operator = client_from_yaml(
        &hub.sandbox
            .kubeconfig_for_token(&token_for(&admin, "fleet-system", "fleet-operator-hub").await),
    )
    .await;
    let pp = PostParams::default();
    let merge = PatchParams::default();

    // Allowed.
    let sites: Api<FederatedCluster> = Api::all(operator.clone());
    sites
        .list(&ListParams::default())
        .await
        .expect("list sites");
    sites
        .patch_status(
            "site-a",
            &merge,
            &Patch::Merge(json!({ "status": { "nodeCount": 1 } })),
        )
        .await
        .expect("patch a site's status (Pull prober)");
    let site = sites.get("site-a").await.expect("get a site");
    sites
        .replace_status("site-a", &pp, &site)
        .await
        .expect("replace a site's status (judgement)");
    let statuses: Api<FederationStatus> = Api::all(operator.clone());
    let fleet = statuses
        .create(&pp, &FederationStatus::singleton(Default::default()))
        .await
        .expect("create the FederationStatus");
    statuses
        .replace_status("fleet", &pp, &fleet)
        .await
        .expect("replace its status");
    statuses.get("fleet").await.expect("get it");
    let leases: Api<k8s_openapi::api::coordination::v1::Lease> =
        Api::namespaced(operator.clone(), "fleet-system");
    leases
        .create(
            &pp,
            &object(json!({ "metadata": { "name": "fleet-operator-hub" } })),
        )
        .await
        .expect("create its Lease");
    leases
        .list(&ListParams::default())
        .await
        .expect("watch its Lease");
    let secrets: Api<Secret> = Api::namespaced(operator.clone(), "fleet-system");
    let pull = secrets
        .get("fleet-pull-dr-eu")
        .await
        .expect("read a Pull site's Secret");
    secrets
        .patch(
            "fleet-pull-dr-eu",
            &merge,
            &Patch::Merge(
                json!({ "metadata": { "resourceVersion": pull.metadata.resource_version } }),
            ),
        )
        .await
        .expect("store a renewed member token in it");
    let events: Api<k8s_openapi::api::events::v1::Event> =
        Api::namespaced(operator.clone(), "default");
    let event = || {
        object::<k8s_openapi::api::events::v1::Event>(json!({
            "metadata": { "generateName": "site-a." },
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "reportingController": "fleet-operator-hub",
            "reportingInstance": "hub-0",
            "action": "Judged",
            "reason": "Stale",
            "type": "Warning",
            "regarding": { "apiVersion": "federation.kubectl-fleet.dev/v1alpha1", "kind": "FederatedCluster", "name": "site-a" },
        }))
    };
    events
        .create(&pp, &event())
        .await
        .expect("record an Event in default");

    // Refused.
    let spec = json!({ "spec": { "tier": "critical" } });
    assert_eq!(
        status_code(sites.patch("site-a", &merge, &Patch::Merge(&spec)).await),
        403,
        "no site spec"
    );
    assert_eq!(
        status_code(sites.delete("site-a", &DeleteParams::default()).await),
        403
    );
    assert_eq!(
        status_code(
            sites
                .create(
                    &pp,
                    &FederatedCluster::new("x", FederatedClusterSpec::default())
                )
                .await
        ),
        403
    );
    assert_eq!(
        status_code(statuses.get("other").await),
        403,
        "only the singleton"
    );
    assert_eq!(
        status_code(statuses.delete("fleet", &DeleteParams::default()).await),
        403
    );
    for other in [
        "fleet-operator-hub-tls",
        "fleet-operator-ca",
        "fleet-pull-other",
    ] {
        assert_eq!(
            status_code(secrets.get(other).await),
            403,
            "no Secret but a granted pull Secret: {other}"
        );
    }
    for ns in ["fleet-system", "fleet-sites", "default", "kube-system"] {
        let secrets: Api<Secret> = Api::namespaced(operator.clone(), ns);
        assert_eq!(
            status_code(secrets.list(&ListParams::default()).await),
            403,
            "{ns}"
        );
    }
    for ns in ["fleet-system", "kube-system"] {
        let elsewhere: Api<k8s_openapi::api::events::v1::Event> =
            Api::namespaced(operator.clone(), ns);
        assert_eq!(
            status_code(elsewhere.create(&pp, &event()).await),
            403,
            "no Event in {ns}"
        );
    }
    let site_accounts: Api<ServiceAccount> = Api::namespaced(operator.clone(), "fleet-sites");
    assert_eq!(
        status_code(
            site_accounts
                .create_token_request("fleet-edge-site-a", &pp, &token_request())
                .await
        ),
        403,
        "the hub cannot mint a site's token"
    );
    assert_eq!(
        status_code(site_accounts.get("fleet-edge-site-a").await),
        403
    );
    let own: Api<ServiceAccount> = Api::namespaced(operator.clone(), "fleet-system");
    assert_eq!(
        status_code(
            own.create_token_request("fleet-operator-hub", &pp, &token_request())
                .await
        ),
        403
    );
    assert_eq!(
        status_code(
            Api::<RoleBinding>::namespaced(operator.clone(), "fleet-system")
                .list(&ListParams::default())
                .await
        ),
        403
    );
}
}

/// The old-style identity of `site` (before the move to fleet-sites):
/// ServiceAccount, token Role and binding in fleet-system, the
/// ClusterRoleBinding naming that ServiceAccount. Replaces what `register`
/// made in fleet-sites; returns a token of the old ServiceAccount.
async fn make_legacy(admin: &kube::Client, site: &str) -> String {
    let name = format!("fleet-edge-{site}");
    let dp = DeleteParams::default();
    Api::<RoleBinding>::namespaced(admin.clone(), "fleet-sites")
        .delete(&name, &dp)
        .await
        .unwrap();
    Api::<Role>::namespaced(admin.clone(), "fleet-sites")
        .delete(&name, &dp)
        .await
        .unwrap();
    Api::<ServiceAccount>::namespaced(admin.clone(), "fleet-sites")
        .delete(&name, &dp)
        .await
        .unwrap();
    let labels = json!({ "federation.kubectl-fleet.dev/site": site, "app.kubernetes.io/managed-by": "kubectl-fleet" });
    let subject = json!([{ "kind": "ServiceAccount", "name": name, "namespace": "fleet-system" }]);
    let pp = PostParams::default();
    Api::<ServiceAccount>::namespaced(admin.clone(), "fleet-system")
        .create(
            &pp,
            &object(json!({ "metadata": { "name": name, "labels": labels } })),
        )
        .await
        .unwrap();
    Api::<Role>::namespaced(admin.clone(), "fleet-system")
        .create(
            &pp,
            &object(json!({
                "metadata": { "name": name, "labels": labels },
                "rules": [{ "apiGroups": [""], "resources": ["serviceaccounts/token"], "resourceNames": [name], "verbs": ["create"] }],
            })),
        )
        .await
        .unwrap();
    Api::<RoleBinding>::namespaced(admin.clone(), "fleet-system")
        .create(
            &pp,
            &object(json!({
                "metadata": { "name": name, "labels": labels },
                "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name },
                "subjects": subject,
            })),
        )
        .await
        .unwrap();
    Api::<ClusterRoleBinding>::all(admin.clone())
        .patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "subjects": subject })),
        )
        .await
        .unwrap();
    token_for(admin, "fleet-system", &name).await
}

on_both_lanes! {
/// A site registered before the identities moved keeps working — its
/// edge even renews its token in `fleet-system`, the namespace its token
/// names — until `register` (or `rotate`) moves it: then the identity is
/// in `fleet-sites`, nothing of it is left in `fleet-system`, the old
/// token is rejected and the new one works.
async fn a_site_from_before_the_move_works_until_register_or_rotate_moves_it(lane) {
    use kubectl_fleet::k8s::edge_token::request_site_token;
    use kubectl_fleet::operator::credential::TokenClaims;
    let hub = Hub::on(lane);
    let admin = hub.admin().await;
    operator_namespace(&admin).await;
    for site in ["old-a", "old-b"] {
        hub.register(site, &[]);
        let old_token = make_legacy(&admin, site).await;
        let old = client_from_yaml(&hub.sandbox.kubeconfig_for_token(&old_token)).await;
        Api::<FederatedCluster>::all(old.clone())
            .get(site)
            .await
            .expect("the old identity still works");
        let claims = TokenClaims::decode(&old_token).unwrap();
        assert_eq!(claims.namespace.as_deref(), Some("fleet-system"));
        let renewed = request_site_token(&old, site, claims.namespace.as_deref(), 3600, vec![])
            .await
            .expect("the old edge renews its own token where it lives");
        assert!(!renewed.token.is_empty());

        // old-a moves with a re-run of register, old-b with rotate.
        let (moved, removed) = if site == "old-a" {
            let summary = hub.register(site, &[]);
            (
                summary["config"].as_str().unwrap().to_owned(),
                summary["removed"].clone(),
            )
        } else {
            let run = hub.fleet(&["rotate", site, "-o", "json"]).ok();
            assert!(
                run.stderr
                    .contains("identity moved from fleet-system to fleet-sites"),
                "{}",
                run.stderr
            );
            let summary = run.json();
            (
                summary["config"].as_str().unwrap().to_owned(),
                summary["removed"].clone(),
            )
        };
        let removed: Vec<String> = removed
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                format!(
                    "{} {}",
                    o["kind"].as_str().unwrap(),
                    o["namespace"].as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(
            removed,
            [
                "RoleBinding fleet-system",
                "Role fleet-system",
                "ServiceAccount fleet-system"
            ],
            "{site}"
        );
        assert_eq!(
            status_code(Api::<FederatedCluster>::all(old).get(site).await),
            401
        );
        let new = client_from_yaml(&moved).await;
        Api::<FederatedCluster>::all(new.clone())
            .get(site)
            .await
            .expect("the moved identity works");
        let claims = TokenClaims::decode(&token_of(&moved)).unwrap();
        assert_eq!(claims.namespace.as_deref(), Some("fleet-sites"));
        // It kept its auto-rotation.
        request_site_token(&new, site, claims.namespace.as_deref(), 3600, vec![])
            .await
            .expect("renews in fleet-sites");
    }
}
}
