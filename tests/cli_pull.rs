//! `register --pull`: a read-only identity minted on the member, its
//! kubeconfig in hub Secret fleet-system/fleet-pull-SITE, the site in Pull
//! mode; `--store-kubeconfig-as-is` stores the given file unchanged.

use crate::support;

use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, ListParams, PostParams};
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{FederatedCluster, Mode};
use support::{Hub, TempDir, client_from_yaml, status_code};

async fn pull_secret(hub: &Hub, site: &str) -> (Secret, String) {
    let secrets: Api<Secret> = Api::namespaced(hub.admin().await, "fleet-system");
    let secret = secrets
        .get(&format!("fleet-pull-{site}"))
        .await
        .expect("pull Secret");
    let kubeconfig =
        String::from_utf8(secret.data.as_ref().unwrap()["kubeconfig"].0.clone()).unwrap();
    (secret, kubeconfig)
}

on_both_lanes! {
async fn pull_mints_a_read_only_member_identity_and_stores_it_on_the_hub(lane) {
    let hub = Hub::on(lane);
    let member = Sandbox::start();
    let dir = TempDir::new("member");
    let member_kubeconfig = dir.path().join("member.kubeconfig");
    member.write_admin_kubeconfig(&member_kubeconfig).unwrap();

    let run = hub
        .fleet(&[
            "register",
            "site-p",
            "--pull",
            "--member-kubeconfig",
            member_kubeconfig.to_str().unwrap(),
        ])
        .ok();
    assert!(
        run.stdout.is_empty(),
        "nothing secret on stdout: {}",
        run.stdout
    );
    assert!(!run.stderr.contains("token:"), "{}", run.stderr);

    let (secret, stored) = pull_secret(&hub, "site-p").await;
    assert_eq!(secret.type_.as_deref(), Some("Opaque"));
    assert!(
        !stored.contains(member.admin_token()),
        "the admin credential is not stored"
    );

    let site = Api::<FederatedCluster>::all(hub.admin().await)
        .get("site-p")
        .await
        .unwrap();
    assert_eq!(site.spec.mode, Mode::Pull);
    let secret_ref = site.spec.kubeconfig_secret_ref.unwrap();
    assert_eq!(
        (
            secret_ref.namespace.as_str(),
            secret_ref.name.as_str(),
            secret_ref.key.as_str()
        ),
        ("fleet-system", "fleet-pull-site-p", "kubeconfig")
    );
    // Pull sites have no edge identity on the hub.
    assert!(
        run.stderr.lines().all(|l| !l.contains("fleet-edge-site-p")),
        "{}",
        run.stderr
    );

    // The stored kubeconfig reaches the member (CA embedded) and only reads.
    let reader = client_from_yaml(&stored).await;
    Api::<Namespace>::all(reader.clone())
        .list(&ListParams::default())
        .await
        .expect("the member identity can list namespaces");
    let ns = Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some("evil".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    assert_eq!(
        status_code(
            Api::<Namespace>::all(reader.clone())
                .create(&PostParams::default(), &ns)
                .await
        ),
        403
    );
    assert_eq!(
        status_code(
            Api::<Secret>::all(reader.clone())
                .list(&ListParams::default())
                .await
        ),
        403,
        "the member identity cannot read Secrets"
    );

    // The identity is the site's own, labelled with the site and the hub,
    // and it may mint tokens for itself only (the hub renews with it).
    let member_admin = client_from_yaml(&member.admin_kubeconfig()).await;
    let sa = Api::<k8s_openapi::api::core::v1::ServiceAccount>::namespaced(
        member_admin.clone(),
        "fleet-system",
    )
    .get("fleet-pull-site-p")
    .await
    .expect("the site's own ServiceAccount on the member");
    let labels = sa.metadata.labels.unwrap();
    assert_eq!(labels["federation.kubectl-fleet.dev/site"], "site-p");
    assert!(labels.contains_key("federation.kubectl-fleet.dev/hub"));
    let token_request = |name: &str| {
        serde_json::from_value::<k8s_openapi::api::authentication::v1::TokenRequest>(
            serde_json::json!({"metadata": {"name": name}, "spec": {"expirationSeconds": 600}}),
        )
        .unwrap()
    };
    let own = Api::<k8s_openapi::api::core::v1::ServiceAccount>::namespaced(
        reader.clone(),
        "fleet-system",
    );
    own.create_token_request(
        "fleet-pull-site-p",
        &PostParams::default(),
        &token_request("fleet-pull-site-p"),
    )
    .await
    .expect("the identity renews its own token");
    assert_eq!(
        status_code(
            own.create_token_request("default", &PostParams::default(), &token_request("default"),)
                .await
        ),
        403,
        "and no other account's"
    );

    // Re-running converges; unregister removes the Secret too.
    hub.fleet(&[
        "register",
        "site-p",
        "--pull",
        "--member-kubeconfig",
        member_kubeconfig.to_str().unwrap(),
    ])
    .ok();
    let run = hub.fleet(&["unregister", "site-p", "--yes"]).ok();
    assert!(
        run.stderr
            .contains("kubectl fleet unregister site-p --member-kubeconfig FILE"),
        "says what stays on the member: {}",
        run.stderr
    );
    let secrets: Api<Secret> = Api::namespaced(hub.admin().await, "fleet-system");
    assert!(
        secrets
            .get_opt("fleet-pull-site-p")
            .await
            .unwrap()
            .is_none()
    );
}
}

#[tokio::test]
async fn store_kubeconfig_as_is_keeps_the_file_unchanged() {
    let hub = Hub::new();
    let member = Sandbox::start();
    let dir = TempDir::new("member");
    let path = dir.path().join("member.kubeconfig");
    member.write_admin_kubeconfig(&path).unwrap();
    let original = std::fs::read_to_string(&path).unwrap();

    let run = hub
        .fleet(&[
            "register",
            "site-q",
            "--pull",
            "--member-kubeconfig",
            path.to_str().unwrap(),
            "--store-kubeconfig-as-is",
        ])
        .ok();
    assert!(
        !run.stdout.contains(member.admin_token()) && !run.stderr.contains(member.admin_token())
    );
    let (_, stored) = pull_secret(&hub, "site-q").await;
    assert_eq!(stored, original);
    // No identity was minted on the member.
    let sa = Api::<k8s_openapi::api::core::v1::ServiceAccount>::namespaced(
        client_from_yaml(&member.admin_kubeconfig()).await,
        "fleet-system",
    );
    assert!(sa.get_opt("fleet-member-reader").await.unwrap().is_none());
}

on_both_lanes! {
async fn switching_modes_converges_both_ways(lane) {
    use k8s_openapi::api::core::v1::ServiceAccount;
    let hub = Hub::on(lane);
    let member = Sandbox::start();
    let dir = TempDir::new("member");
    let path = dir.path().join("member.kubeconfig");
    member.write_admin_kubeconfig(&path).unwrap();
    let admin = hub.admin().await;
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), "fleet-sites");
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), "fleet-system");
    let sites: Api<FederatedCluster> = Api::all(admin.clone());

    hub.register("site-s", &["--tier", "critical"]);
    // A mode switch is explicit and, off a terminal, confirmed with --yes.
    hub.fleet(&[
        "register",
        "site-s",
        "--pull",
        "--yes",
        "--member-kubeconfig",
        path.to_str().unwrap(),
    ])
    .ok();
    assert!(
        accounts
            .get_opt("fleet-edge-site-s")
            .await
            .unwrap()
            .is_none(),
        "no edge identity in Pull"
    );
    assert!(
        secrets
            .get_opt("fleet-pull-site-s")
            .await
            .unwrap()
            .is_some()
    );
    let site = sites.get("site-s").await.unwrap();
    assert_eq!(site.spec.mode, Mode::Pull);
    assert_eq!(
        site.spec.tier,
        kubectl_fleet::api::Tier::Critical,
        "tier kept across the switch"
    );

    hub.register("site-s", &["--push", "--yes"]);
    assert!(
        secrets
            .get_opt("fleet-pull-site-s")
            .await
            .unwrap()
            .is_none(),
        "no pull Secret in Push"
    );
    assert!(
        accounts
            .get_opt("fleet-edge-site-s")
            .await
            .unwrap()
            .is_some()
    );
    let site = sites.get("site-s").await.unwrap();
    assert_eq!(site.spec.mode, Mode::Push);
    assert!(site.spec.kubeconfig_secret_ref.is_none());
}
}

#[tokio::test]
async fn a_site_of_the_shared_identity_moves_to_its_own_and_the_shared_one_stays() {
    use k8s_openapi::api::core::v1::ServiceAccount;
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
    use kubectl_fleet::manifests::rbac;
    let hub = Hub::new();
    let member = Sandbox::start();
    let dir = TempDir::new("member");
    let path = dir.path().join("member.kubeconfig");
    member.write_admin_kubeconfig(&path).unwrap();
    // The identity earlier versions shared among a member's Pull sites.
    let admin = client_from_yaml(&member.admin_kubeconfig()).await;
    let pp = PostParams::default();
    Api::<Namespace>::all(admin.clone())
        .create(
            &pp,
            &serde_json::from_value(serde_json::json!({"metadata": {"name": "fleet-system"}}))
                .unwrap(),
        )
        .await
        .unwrap();
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), "fleet-system");
    accounts
        .create(&pp, &rbac::member_reader_service_account())
        .await
        .unwrap();
    Api::<ClusterRole>::all(admin.clone())
        .create(&pp, &rbac::member_reader_cluster_role())
        .await
        .unwrap();
    Api::<ClusterRoleBinding>::all(admin.clone())
        .create(&pp, &rbac::member_reader_cluster_role_binding())
        .await
        .unwrap();

    let run = hub
        .fleet(&[
            "register",
            "site-m",
            "--pull",
            "--member-kubeconfig",
            path.to_str().unwrap(),
        ])
        .ok();
    assert!(
        run.stderr.contains("fleet-system/fleet-member-reader")
            && run.stderr.contains("left in place"),
        "{}",
        run.stderr
    );
    let (_, stored) = pull_secret(&hub, "site-m").await;
    let reader = client_from_yaml(&stored).await;
    let review = Api::<k8s_openapi::api::authentication::v1::SelfSubjectReview>::all(reader)
        .create(&pp, &Default::default())
        .await
        .unwrap();
    assert_eq!(
        review
            .status
            .unwrap()
            .user_info
            .unwrap()
            .username
            .as_deref(),
        Some("system:serviceaccount:fleet-system:fleet-pull-site-m"),
        "the site uses its own identity"
    );
    assert!(
        accounts
            .get_opt("fleet-member-reader")
            .await
            .unwrap()
            .is_some(),
        "the shared identity stays"
    );
}

/// The hub reads a Pull site's Secret through a grant of that one Secret:
/// `register --pull` makes it (owned by the site), a re-run without a
/// member kubeconfig restores it (a site registered by an earlier version
/// has none), and `unregister` removes it with the Secret.
#[tokio::test]
async fn the_hubs_grant_of_a_pull_secret_comes_and_goes_with_the_site() {
    use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
    let hub = Hub::new();
    let member = Sandbox::start();
    let dir = TempDir::new("member");
    let path = dir.path().join("member.kubeconfig");
    member.write_admin_kubeconfig(&path).unwrap();
    let admin = hub.admin().await;
    let roles: Api<Role> = Api::namespaced(admin.clone(), "fleet-system");
    let bindings: Api<RoleBinding> = Api::namespaced(admin.clone(), "fleet-system");
    let grant = "fleet-operator-hub-fleet-pull-site-g";

    hub.fleet(&[
        "register",
        "site-g",
        "--pull",
        "--member-kubeconfig",
        path.to_str().unwrap(),
    ])
    .ok();
    let role = roles.get(grant).await.unwrap();
    assert_eq!(
        serde_json::to_value(&role.rules).unwrap(),
        serde_json::json!([{ "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["fleet-pull-site-g"], "verbs": ["get", "patch"] }])
    );
    let binding = bindings.get(grant).await.unwrap();
    assert_eq!(
        serde_json::to_value(&binding.subjects).unwrap(),
        serde_json::json!([{ "kind": "ServiceAccount", "name": "fleet-operator-hub", "namespace": "fleet-system" }])
    );
    let site = Api::<FederatedCluster>::all(admin.clone())
        .get("site-g")
        .await
        .unwrap();
    assert_eq!(
        role.metadata.owner_references.unwrap()[0].uid,
        site.metadata.uid.unwrap()
    );

    // As a site of an earlier version: no grant. A plain re-run grants it
    // and keeps the stored credential.
    let (before, _) = pull_secret(&hub, "site-g").await;
    roles.delete(grant, &Default::default()).await.unwrap();
    bindings.delete(grant, &Default::default()).await.unwrap();
    let run = hub.fleet(&["register", "site-g"]).ok();
    assert!(
        run.stderr
            .contains(&format!("Role fleet-system/{grant} applied"))
            && run
                .stderr
                .contains(&format!("RoleBinding fleet-system/{grant} applied"))
            && run.stderr.contains("stays in Pull mode"),
        "{}",
        run.stderr
    );
    roles.get(grant).await.unwrap();
    let (after, _) = pull_secret(&hub, "site-g").await;
    assert_eq!(after.data, before.data, "the member credential is kept");

    hub.fleet(&["unregister", "site-g", "--yes"]).ok();
    assert!(roles.get_opt(grant).await.unwrap().is_none());
    assert!(bindings.get_opt(grant).await.unwrap().is_none());
}
