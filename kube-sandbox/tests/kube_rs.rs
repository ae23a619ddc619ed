//! The sandbox through kube-rs, as the operator and CLI use it: typed and
//! dynamic CRUD, the status subresource, conflicts, finalizers, a
//! kube-runtime watcher, discovery, and ServiceAccount token lifecycles.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
    PostParams,
};
use kube::runtime::watcher;
use kube::{Api, Client, Discovery};
use kube_sandbox::{Sandbox, SandboxOptions};
use serde_json::json;
use std::time::Duration;

const GROUP: &str = "federation.kubectl-fleet.dev";

async fn client_for(sb: &Sandbox, token: &str) -> Client {
    let kc = kube::config::Kubeconfig::from_yaml(&sb.kubeconfig_for_token(token)).unwrap();
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    Client::try_from(cfg).unwrap()
}

async fn admin(sb: &Sandbox) -> Client {
    client_for(sb, sb.admin_token()).await
}

fn crd() -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("federatedclusters.{GROUP}")},
        "spec": {
            "group": GROUP,
            "scope": "Cluster",
            "names": {"plural": "federatedclusters", "singular": "federatedcluster",
                      "kind": "FederatedCluster", "shortNames": ["fc", "fcluster"],
                      "categories": ["fleet"]},
            "versions": [{
                "name": "v1alpha1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "region": {"type": "string"},
                        "tier": {"type": "string"}}},
                    "status": {"type": "object", "properties": {
                        "phase": {"type": "string"}}}}}}
            }]
        }
    }))
    .unwrap()
}

fn fc_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(GROUP, "v1alpha1", "FederatedCluster"),
        "federatedclusters",
    )
}

async fn install_crd(client: &Client) -> Api<DynamicObject> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let created = crds.create(&PostParams::default(), &crd()).await.unwrap();
    // As the real server answers it: nothing accepted or established yet;
    // its controllers do that next (the sandbox's at once).
    let status = created.status.unwrap();
    assert!(
        status.conditions.is_none()
            && status
                .accepted_names
                .as_ref()
                .is_none_or(|n| n.plural.is_empty()),
        "{status:?}"
    );
    let name = created.metadata.name.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let conditions = crds
            .get(&name)
            .await
            .unwrap()
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default();
        if conditions
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "CRD not established: {conditions:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    Api::all_with(client.clone(), &fc_resource())
}

fn site(name: &str, labels: serde_json::Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": format!("{GROUP}/v1alpha1"),
        "kind": "FederatedCluster",
        "metadata": {"name": name, "labels": labels},
        "spec": {"region": "us-east-1", "tier": "standard"},
    }))
    .unwrap()
}

fn api_code<T: std::fmt::Debug>(r: Result<T, kube::Error>) -> u16 {
    match r {
        Err(kube::Error::Api(s)) => s.code,
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn crud_status_conflicts_and_finalizers() {
    let sb = Sandbox::start();
    let client = admin(&sb).await;
    let sites = install_crd(&client).await;
    let pp = PostParams::default();

    let a = sites
        .create(&pp, &site("site-a", json!({"env": "prod"})))
        .await
        .unwrap();
    let uid = a.metadata.uid.clone().unwrap();
    assert_eq!(a.metadata.generation, Some(1));
    assert_eq!(
        api_code(sites.create(&pp, &site("site-a", json!({}))).await),
        409
    );
    sites
        .create(&pp, &site("site-b", json!({"env": "dev"})))
        .await
        .unwrap();
    assert_eq!(api_code(sites.get("nope").await), 404);
    assert_eq!(
        api_code(sites.create(&pp, &site("Bad_Name", json!({}))).await),
        422
    );

    let prod = sites
        .list(&ListParams::default().labels("env=prod"))
        .await
        .unwrap();
    let names: Vec<_> = prod
        .items
        .iter()
        .map(|o| o.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, ["site-a"]);
    assert!(prod.metadata.resource_version.is_some());

    // Status subresource: /status writes only status and keeps generation.
    let patched = sites
        .patch_status(
            "site-a",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Connected"}, "spec": {"region": "x"}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.data["status"]["phase"], "Connected");
    assert_eq!(patched.data["spec"]["region"], "us-east-1");
    assert_eq!(patched.metadata.generation, Some(1));

    // The main resource ignores status and bumps generation on spec changes.
    let patched = sites
        .patch(
            "site-a",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Gone"}, "spec": {"region": "eu-west-1"}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.data["status"]["phase"], "Connected");
    assert_eq!(patched.data["spec"]["region"], "eu-west-1");
    assert_eq!(patched.metadata.generation, Some(2));

    // Replace with a stale resourceVersion is a conflict; with the current one it works.
    let mut stale = a.clone();
    stale.data["spec"]["tier"] = json!("critical");
    assert_eq!(api_code(sites.replace("site-a", &pp, &stale).await), 409);
    let mut fresh = sites.get("site-a").await.unwrap();
    fresh.data["spec"]["tier"] = json!("critical");
    let replaced = sites.replace("site-a", &pp, &fresh).await.unwrap();
    assert_eq!(replaced.data["spec"]["tier"], "critical");
    assert_eq!(replaced.metadata.uid.as_deref(), Some(uid.as_str()));
    let mut stale_status = a.clone();
    stale_status.data["status"] = json!({"phase": "Stale"});
    let r = sites.replace_status("site-a", &pp, &stale_status).await;
    assert_eq!(api_code(r), 409);

    // Deletion waits for finalizers.
    sites
        .patch(
            "site-b",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["fleet/cleanup"]}})),
        )
        .await
        .unwrap();
    let deleted = sites
        .delete("site-b", &DeleteParams::default())
        .await
        .unwrap();
    let pending = deleted.left().expect("object kept while finalizers remain");
    assert!(pending.metadata.deletion_timestamp.is_some());
    assert!(
        sites
            .get("site-b")
            .await
            .unwrap()
            .metadata
            .deletion_timestamp
            .is_some()
    );
    sites
        .patch(
            "site-b",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    assert_eq!(api_code(sites.get("site-b").await), 404);

    let gone = sites
        .delete("site-a", &DeleteParams::default())
        .await
        .unwrap();
    assert!(gone.is_right(), "immediate deletion answers a Status");
    assert_eq!(api_code(sites.get("site-a").await), 404);
}

#[tokio::test]
async fn server_side_apply_creates_then_merges() {
    let sb = Sandbox::start();
    let client = admin(&sb).await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    let pp = PatchParams::apply("fleet-test");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "applied"}, "data": {"a": "1"}});
    let created = cms.patch("applied", &pp, &Patch::Apply(&cm)).await.unwrap();
    assert_eq!(created.data.unwrap()["a"], "1");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "applied"}, "data": {"a": "2"}});
    let updated = cms.patch("applied", &pp, &Patch::Apply(&cm)).await.unwrap();
    assert_eq!(updated.data.unwrap()["a"], "2");
}

#[tokio::test]
async fn watcher_sees_add_modify_delete() {
    let sb = Sandbox::start();
    let client = admin(&sb).await;
    let sites = install_crd(&client).await;
    sites
        .create(&PostParams::default(), &site("existing", json!({})))
        .await
        .unwrap();

    let mut stream = watcher(sites.clone(), watcher::Config::default()).boxed();
    let mut seen_existing = false;
    while let Some(ev) = tokio::time::timeout(Duration::from_secs(10), stream.try_next())
        .await
        .expect("initial list")
        .unwrap()
    {
        match ev {
            watcher::Event::InitApply(o) => {
                seen_existing |= o.metadata.name.as_deref() == Some("existing")
            }
            watcher::Event::InitDone => break,
            _ => {}
        }
    }
    assert!(
        seen_existing,
        "the initial list contains the existing object"
    );

    let pp = PostParams::default();
    sites.create(&pp, &site("new", json!({}))).await.unwrap();
    sites
        .patch_status(
            "new",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Connected"}})),
        )
        .await
        .unwrap();
    sites.delete("new", &DeleteParams::default()).await.unwrap();

    let mut log = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(10), stream.try_next())
            .await
            .expect("watch event in time")
            .unwrap()
            .expect("stream open");
        match ev {
            watcher::Event::Apply(o) => log.push(format!(
                "apply {} {}",
                o.metadata.name.unwrap(),
                o.data["status"]["phase"].as_str().unwrap_or("-")
            )),
            watcher::Event::Delete(o) => {
                log.push(format!("delete {}", o.metadata.name.unwrap()));
                break;
            }
            _ => {}
        }
    }
    assert_eq!(log, ["apply new -", "apply new Connected", "delete new"]);
}

#[tokio::test]
async fn discovery_finds_crd_resources_and_subresources() {
    let sb = Sandbox::start();
    let client = admin(&sb).await;
    install_crd(&client).await;
    let discovery = Discovery::new(client).run().await.unwrap();
    let gvk = GroupVersionKind::gvk(GROUP, "v1alpha1", "FederatedCluster");
    let (ar, caps) = discovery.resolve_gvk(&gvk).expect("CRD kind discovered");
    assert_eq!(ar.plural, "federatedclusters");
    assert_eq!(caps.scope, kube::discovery::Scope::Cluster);
    assert!(
        caps.subresources
            .iter()
            .any(|(sub, _)| sub.plural == "status")
    );
    let sa = GroupVersionKind::gvk("", "v1", "ServiceAccount");
    let (_, caps) = discovery.resolve_gvk(&sa).expect("core kinds discovered");
    assert_eq!(caps.scope, kube::discovery::Scope::Namespaced);
    assert!(
        caps.subresources
            .iter()
            .any(|(sub, _)| sub.plural == "token")
    );
    let coordination = discovery
        .groups()
        .find(|g| g.name() == "coordination.k8s.io")
        .expect("leases served");
    assert!(
        coordination
            .recommended_resources()
            .iter()
            .any(|(ar, _)| ar.plural == "leases")
    );
}

async fn mint(sas: &Api<ServiceAccount>, name: &str, seconds: i64) -> TokenRequest {
    let tr: TokenRequest = serde_json::from_value(json!({
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"expirationSeconds": seconds}
    }))
    .unwrap();
    sas.create_subresource("token", name, &PostParams::default(), &tr)
        .await
        .unwrap()
}

#[tokio::test]
async fn service_account_tokens_expire_and_die_with_their_account() {
    let sb = Sandbox::start_with(SandboxOptions {
        max_token_expiration: Some(Duration::from_secs(3600)),
        ..Default::default()
    })
    .unwrap();
    let client = admin(&sb).await;
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    let sa: ServiceAccount = serde_json::from_value(json!({"metadata": {"name": "edge"}})).unwrap();
    sas.create(&PostParams::default(), &sa).await.unwrap();

    // Below the minimum lifetime: 422 like the real server.
    let tr: TokenRequest =
        serde_json::from_value(json!({"spec": {"expirationSeconds": 60}})).unwrap();
    let r: Result<TokenRequest, _> = sas
        .create_subresource("token", "edge", &PostParams::default(), &tr)
        .await;
    assert_eq!(api_code(r), 422);

    // Above the cap: silently shortened.
    let capped = mint(&sas, "edge", 7200).await;
    let status = capped.status.unwrap();
    let lifetime = status.expiration_timestamp.0.as_second() - jiff::Timestamp::now().as_second();
    assert!(
        (3590..=3600).contains(&lifetime),
        "capped to 1h, got {lifetime}s"
    );
    let long_lived = status.token;

    sb.controls()
        .set_min_token_expiration(Duration::from_secs(1));
    let short = mint(&sas, "edge", 2).await.status.unwrap().token;
    let as_sa = client_for(&sb, &short).await;
    let cms: Api<ConfigMap> = Api::namespaced(as_sa.clone(), "default");
    // Authenticated but not authorized: 403, not 401.
    assert_eq!(api_code(cms.list(&ListParams::default()).await), 403);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(api_code(cms.list(&ListParams::default()).await), 401);

    let lived = client_for(&sb, &long_lived).await;
    let cms: Api<ConfigMap> = Api::namespaced(lived, "default");
    assert_eq!(api_code(cms.list(&ListParams::default()).await), 403);
    sas.delete("edge", &DeleteParams::default()).await.unwrap();
    assert_eq!(api_code(cms.list(&ListParams::default()).await), 401);
    // A new account with the same name does not revive old tokens.
    sas.create(&PostParams::default(), &sa).await.unwrap();
    assert_eq!(api_code(cms.list(&ListParams::default()).await), 401);

    let log = sb.controls().request_log();
    assert!(
        log.iter()
            .any(|r| r.status == 401 && r.verb == "list" && r.path.ends_with("/configmaps"))
    );
}

#[tokio::test]
async fn no_token_is_unauthorized_and_faults_are_injected() {
    let sb = Sandbox::start();
    let http = reqwest_like_get(&sb, "/api/v1/namespaces", None).await;
    assert_eq!(http, 401);
    assert_eq!(reqwest_like_get(&sb, "/livez", None).await, 200);

    let client = admin(&sb).await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    sb.controls().fail(kube_sandbox::FaultRule {
        verb: Some("create".into()),
        path_contains: Some("/configmaps".into()),
        status: 500,
        skip: 1,
        count: 1,
        ..Default::default()
    });
    let cm = |n: &str| -> ConfigMap {
        serde_json::from_value(json!({"metadata": {"name": n}})).unwrap()
    };
    cms.create(&PostParams::default(), &cm("one"))
        .await
        .unwrap();
    assert_eq!(
        api_code(cms.create(&PostParams::default(), &cm("two")).await),
        500
    );
    assert_eq!(
        api_code(cms.get("two").await),
        404,
        "a failed request is not executed"
    );
    cms.create(&PostParams::default(), &cm("two"))
        .await
        .unwrap();
}

/// A GET with an optional bearer token through kube's own HTTP stack, to
/// see status codes kube would otherwise turn into errors.
async fn reqwest_like_get(sb: &Sandbox, path: &str, token: Option<&str>) -> u16 {
    let kc = kube::config::Kubeconfig::from_yaml(&sb.admin_kubeconfig()).unwrap();
    let mut cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    cfg.auth_info.token = token.map(|t| t.to_string().into());
    let client = Client::try_from(cfg).unwrap();
    let req = hyper::Request::get(path).body(Vec::new()).unwrap();
    match client.request_text(req).await {
        Ok(_) => 200,
        Err(kube::Error::Api(s)) => s.code,
        Err(e) => panic!("unexpected error {e:?}"),
    }
}

/// The garbage collector's behaviour for dependents: deleting an owner
/// deletes the objects it alone owns (background propagation), strips it
/// from objects that have another owner, and with `Orphan` only strips it.
#[tokio::test]
async fn deleting_an_owner_collects_its_dependents() {
    let sb = Sandbox::start();
    let c = admin(&sb).await;
    let cms: Api<ConfigMap> = Api::namespaced(c.clone(), "default");
    let sas: Api<ServiceAccount> = Api::namespaced(c.clone(), "default");
    let pp = PostParams::default();
    let mk = |name: &str| -> ConfigMap {
        serde_json::from_value(json!({"metadata": {"name": name}})).unwrap()
    };
    let owner = cms.create(&pp, &mk("owner")).await.unwrap();
    let other = cms.create(&pp, &mk("other")).await.unwrap();
    let kept = cms.create(&pp, &mk("kept")).await.unwrap();
    let owner_ref = |cm: &ConfigMap| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "name": cm.metadata.name, "uid": cm.metadata.uid})
    };
    let sa = |name: &str, owners: Vec<serde_json::Value>| -> ServiceAccount {
        serde_json::from_value(json!({"metadata": {"name": name, "ownerReferences": owners}}))
            .unwrap()
    };
    sas.create(&pp, &sa("only-owned", vec![owner_ref(&owner)]))
        .await
        .unwrap();
    sas.create(
        &pp,
        &sa("two-owners", vec![owner_ref(&owner), owner_ref(&other)]),
    )
    .await
    .unwrap();
    sas.create(&pp, &sa("orphaned", vec![owner_ref(&kept)]))
        .await
        .unwrap();

    cms.delete("owner", &DeleteParams::background())
        .await
        .unwrap();
    assert_eq!(api_code(sas.get("only-owned").await), 404);
    let two = sas.get("two-owners").await.unwrap();
    let refs = two.metadata.owner_references.unwrap();
    assert_eq!(refs.len(), 1);
    assert_eq!(refs[0].name, "other");

    cms.delete("kept", &DeleteParams::orphan()).await.unwrap();
    let orphan = sas.get("orphaned").await.unwrap();
    assert!(
        orphan
            .metadata
            .owner_references
            .is_none_or(|r| r.is_empty())
    );
}
