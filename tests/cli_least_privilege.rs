//! Design §3 at runtime: authenticating with ONLY the token `register`
//! minted, a site can read its own FederatedCluster and patch its own
//! status, and gets 403 for everything else.

mod cli_support;

use cli_support::{Hub, client_from_yaml, status_code};
use futures::StreamExt as _;
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchParams};
use kubectl_fleet::api::{FederatedCluster, FederatedClusterSpec};
use serde_json::json;

fn token_request() -> TokenRequest {
    serde_json::from_value(json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": { "audiences": [], "expirationSeconds": 3600 }
    }))
    .unwrap()
}

#[tokio::test]
async fn the_site_token_can_do_exactly_what_design_section_3_allows() {
    let hub = Hub::new();
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
    let accounts: Api<ServiceAccount> = Api::namespaced(site.clone(), "fleet-system");
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

#[tokio::test]
async fn without_auto_rotation_the_site_cannot_mint_its_own_token() {
    let hub = Hub::new();
    let c = hub.register("site-c", &["--no-auto-rotate"]);
    let site = client_from_yaml(c["config"].as_str().unwrap()).await;
    let accounts: Api<ServiceAccount> = Api::namespaced(site, "fleet-system");
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
    let accounts: Api<ServiceAccount> = Api::namespaced(site_a, "fleet-system");
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
