//! `register` output options (kubeconfig, Secret manifest, 0600 file,
//! --hub-server, --insecure-skip-tls-verify), spec convergence, and the
//! read-only commands `install`, `policy`, `incidents`.

use crate::support;

use std::os::unix::fs::PermissionsExt as _;

use base64::Engine as _;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{Capability, Environment, FederatedCluster, Tier};
use support::{Hub, TempDir, client_from_yaml, run_bin};

fn docs(yaml: &str) -> Vec<serde_json::Value> {
    serde_saphyr::from_multiple(yaml).unwrap()
}

on_both_lanes! {
async fn default_output_is_a_working_hub_kubeconfig_with_the_ca_embedded(lane) {
    let hub = Hub::on(lane);
    let run = hub.fleet(&["register", "site-a"]).ok();
    let kc = &docs(&run.stdout)[0];
    let cluster = &kc["clusters"][0]["cluster"];
    assert_eq!(cluster["server"], hub.sandbox.url());
    let ca = base64::engine::general_purpose::STANDARD
        .decode(cluster["certificate-authority-data"].as_str().unwrap())
        .unwrap();
    assert_eq!(String::from_utf8(ca).unwrap(), hub.sandbox.ca_pem());
    assert!(cluster.get("insecure-skip-tls-verify").is_none());
    // Human messages on stderr, the config alone on stdout.
    assert!(run.stderr.contains(
        "and run: fleet-operator --federation-role=edge --site site-a --kubeconfig MEMBER_KUBECONFIG --hub-kubeconfig FILE"
    ));
    assert!(!run.stdout.contains("applied"));
    let client = client_from_yaml(&run.stdout).await;
    Api::<FederatedCluster>::all(client)
        .get("site-a")
        .await
        .unwrap();
}
}

#[tokio::test]
async fn emit_secret_prints_a_manifest_for_the_edge_cluster() {
    let hub = Hub::new();
    let run = hub.fleet(&["register", "site-a", "--emit", "secret"]).ok();
    let docs = docs(&run.stdout);
    assert_eq!(docs[0]["kind"], "Namespace");
    let secret = &docs[1];
    assert_eq!(secret["kind"], "Secret");
    assert_eq!(secret["metadata"]["namespace"], "fleet-system");
    assert_eq!(secret["metadata"]["name"], "fleet-hub-kubeconfig");
    let kubeconfig = base64::engine::general_purpose::STANDARD
        .decode(secret["data"]["kubeconfig"].as_str().unwrap())
        .unwrap();
    let client = client_from_yaml(std::str::from_utf8(&kubeconfig).unwrap()).await;
    Api::<FederatedCluster>::all(client)
        .get("site-a")
        .await
        .unwrap();

    // The manifest applies on an edge cluster and the edge install mounts it.
    let edge = Sandbox::start();
    let dir = TempDir::new("edge");
    let manifest = dir.path().join("secret.yaml");
    std::fs::write(&manifest, &run.stdout).unwrap();
    let edge_kc = dir.path().join("edge.kubeconfig");
    edge.write_admin_kubeconfig(&edge_kc).unwrap();
    support::Kubectl::new(&edge_kc)
        .args(["apply", "-f"])
        .arg(&manifest)
        .ok();
    run_bin(
        &[
            "--kubeconfig",
            edge_kc.to_str().unwrap(),
            "install",
            "--role",
            "edge",
            "--site",
            "site-a",
            "--apply",
        ],
        dir.path(),
    )
    .ok();
    let edge_client = client_from_yaml(&edge.admin_kubeconfig()).await;
    let deploy = Api::<Deployment>::namespaced(edge_client.clone(), "fleet-system")
        .get("fleet-operator-edge")
        .await
        .unwrap();
    let pod = deploy.spec.unwrap().template.spec.unwrap();
    assert_eq!(
        pod.volumes.unwrap()[0]
            .secret
            .as_ref()
            .unwrap()
            .secret_name
            .as_deref(),
        Some("fleet-hub-kubeconfig")
    );
    Api::<Secret>::namespaced(edge_client, "fleet-system")
        .get("fleet-hub-kubeconfig")
        .await
        .unwrap();
}

#[tokio::test]
async fn output_file_is_created_0600_and_nothing_goes_to_stdout() {
    let hub = Hub::new();
    let path = hub.dir.path().join("edge").join("hub.kubeconfig");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let run = hub
        .fleet(&[
            "register",
            "site-a",
            "--output-file",
            path.to_str().unwrap(),
        ])
        .ok();
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr
            .contains(&format!("--hub-kubeconfig {}", path.display())),
        "{}",
        run.stderr
    );
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let client = client_from_yaml(&std::fs::read_to_string(&path).unwrap()).await;
    Api::<FederatedCluster>::all(client)
        .get("site-a")
        .await
        .unwrap();

    // Rotating into the same file keeps it private.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    hub.fleet(&["rotate", "site-a", "--output-file", path.to_str().unwrap()])
        .ok();
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

/// `register SITE > FILE`: the shell creates FILE under the user's umask
/// (0644 under 022) before the plugin runs; the plugin makes it 0600
/// before it writes the token there, and says so. A pipe is left alone.
#[test]
fn a_kubeconfig_redirected_to_a_file_others_could_read_is_made_0600() {
    let hub = Hub::new();
    let path = hub.dir.path().join("site-a.kubeconfig");
    let file = std::fs::File::create(&path).unwrap();
    file.set_permissions(std::fs::Permissions::from_mode(0o644))
        .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-fleet"))
        .args(["--kubeconfig", hub.kubeconfig.to_str().unwrap()])
        .args(["register", "site-a"])
        .stdout(file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600,
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "made the file stdout goes to mode 0600 (it was 0644): it holds the site's token"
        ),
        "{stderr}"
    );
    assert!(
        std::fs::read_to_string(&path).unwrap().contains("token: "),
        "the kubeconfig went to the file"
    );
    // To a pipe: nothing said.
    let run = hub.fleet(&["rotate", "site-a"]).ok();
    assert!(!run.stderr.contains("made the file"), "{}", run.stderr);
    assert!(run.stdout.contains("token: "));
}

#[test]
fn hub_server_and_insecure_only_when_asked() {
    let hub = Hub::new();
    let run = hub
        .fleet(&[
            "register",
            "site-a",
            "--hub-server",
            "https://hub.example.com:6443",
        ])
        .ok();
    let kc = &docs(&run.stdout)[0];
    assert_eq!(
        kc["clusters"][0]["cluster"]["server"],
        "https://hub.example.com:6443"
    );
    assert!(kc["clusters"][0]["cluster"]["certificate-authority-data"].is_string());

    let run = hub
        .fleet(&["rotate", "site-a", "--insecure-skip-tls-verify"])
        .ok();
    let kc = &docs(&run.stdout)[0];
    assert_eq!(
        kc["clusters"][0]["cluster"]["insecure-skip-tls-verify"],
        true
    );
    assert!(
        kc["clusters"][0]["cluster"]
            .get("certificate-authority-data")
            .is_none()
    );
}

#[tokio::test]
async fn rerun_updates_given_flags_and_keeps_the_rest() {
    let hub = Hub::new();
    let summary = hub.register(
        "site-a",
        &[
            "--tier",
            "critical",
            "--region",
            "eu-west-1",
            "--capability",
            "remediation",
            "--heartbeat-interval",
            "60",
            "--display-name",
            "Site A",
        ],
    );
    let kinds: Vec<&str> = summary["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    // The first site of a hub without `install` also creates fleet-sites,
    // when the first namespaced apply finds it missing; the ServiceAccount
    // goes last of the identity, then the site's lease.
    assert_eq!(
        kinds,
        [
            "FederatedCluster",
            "ClusterRole",
            "ClusterRoleBinding",
            "Namespace",
            "Role",
            "RoleBinding",
            "ServiceAccount",
            "FederatedClusterLease"
        ]
    );
    hub.register("site-a", &["--environment", "staging"]);
    let site = Api::<FederatedCluster>::all(hub.admin().await)
        .get("site-a")
        .await
        .unwrap();
    assert_eq!(site.spec.tier, Tier::Critical);
    assert_eq!(site.spec.environment, Environment::Staging);
    assert_eq!(site.spec.region.as_deref(), Some("eu-west-1"));
    assert_eq!(site.spec.capabilities, [Capability::Remediation]);
    assert_eq!(site.spec.heartbeat_interval_seconds, 60);
    assert_eq!(site.spec.display_name.as_deref(), Some("Site A"));
}

#[tokio::test]
async fn install_apply_creates_the_hub_operator() {
    let hub = Hub::bare(Default::default());
    let run = hub.fleet(&["install", "--apply"]).ok();
    assert!(
        run.stderr
            .contains("Deployment fleet-system/fleet-operator-hub applied"),
        "{}",
        run.stderr
    );
    let deploy = Api::<Deployment>::namespaced(hub.admin().await, "fleet-system")
        .get("fleet-operator-hub")
        .await
        .unwrap();
    assert_eq!(deploy.spec.unwrap().replicas, Some(2));
    // Re-applying converges.
    hub.fleet(&["install", "--apply"]).ok();
    // Now the CRDs are served.
    hub.register("site-a", &[]);
}

#[test]
fn policy_and_incidents() {
    let hub = Hub::new();
    let table = hub.fleet(&["policy"]).ok().stdout;
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("unknown") && l.contains("Admin")),
        "{table}"
    );
    let report = hub
        .fleet(&["policy", "-o", "json", "--tier", "standard"])
        .ok()
        .json();
    assert_eq!(report["kind"], "PolicyReport");
    assert!(
        report["rules"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["tier"] == "standard")
    );
    hub.fleet(&["policy", "--tier", "gold"]).one_line_error();

    let run = hub.fleet(&["incidents"]).ok();
    assert!(
        run.stdout.contains("CROSS-CLUSTER CORRELATIONS"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("no FederationStatus"), "{}", run.stderr);
    let report = hub.fleet(&["incidents", "-o", "json"]).ok().json();
    assert_eq!(report["kind"], "IncidentsReport");
}

on_both_lanes! {
/// API round trips of `register SITE` (benchmark P6), counted from the
/// sandbox's request log: the first site of a hub (no `fleet-sites` yet),
/// a fresh site, then a re-run that finds everything in place. Counts, not
/// timings: each one is a request an administrator waits for on a
/// far-away hub. docs/benchmarks-cli.md#register-round-trips-p6 lists them.
fn register_round_trips(lane) {
    let hub = Hub::on(lane);
    let log = || hub.sandbox.controls().request_log();
    let describe = |records: &[kube_sandbox::RequestRecord]| {
        records
            .iter()
            .map(|r| format!("{} {} {} -> {}", r.verb, r.method, r.path, r.status))
            .collect::<Vec<_>>()
            .join("\n")
    };
    hub.sandbox.controls().clear_request_log();
    hub.register("rt-first", &[]);
    let first = log();
    hub.sandbox.controls().clear_request_log();
    hub.register("rt-site", &[]);
    let fresh = log();
    hub.sandbox.controls().clear_request_log();
    let again = hub.register("rt-site", &[]);
    let rerun = log();
    println!(
        "register round trips: fresh {}, re-run {}, first site of a hub {}\nfresh:\n{}\nre-run:\n{}\nfirst site:\n{}",
        fresh.len(),
        rerun.len(),
        first.len(),
        describe(&fresh),
        describe(&rerun),
        describe(&first)
    );
    // Fresh: the read of the site, one server-side apply per object (site,
    // ClusterRole and binding, the site's lease, Role and binding,
    // ServiceAccount), the ServiceAccount once more with its digest beside
    // the TokenRequest (4 round trips for one request more; cli_enrol
    // counts the round trips). The goal is 6; the five identity objects
    // are each needed without widening what a site token may do (see the
    // docs), and the lease, the edge's heartbeat, is applied beside them
    // (round trip 3): one request more, no round trip more. This guards
    // against the count growing.
    assert!(fresh.len() <= 10, "fresh site:\n{}", describe(&fresh));
    assert!(
        fresh.iter().any(|r| r.path
            == "/apis/federation.kubectl-fleet.dev/v1alpha1/federatedclusterleases/rt-site"
            && r.status == 201),
        "a new site gets its lease:\n{}",
        describe(&fresh)
    );
    // The first site also creates the namespace, when the applies sent at
    // once find it missing, and sends those three again.
    assert!(first.len() <= 14, "first site:\n{}", describe(&first));
    assert!(
        first
            .iter()
            .any(|r| r.path == "/api/v1/namespaces/fleet-sites" && r.status < 300),
        "the first site creates fleet-sites:\n{}",
        describe(&first)
    );
    // Re-run, nothing changed: read the site, its ServiceAccount and its
    // lease (those two at once: a lease deleted since is applied again),
    // mint the token, and ask the server what that token may do. No
    // writes; 4 round trips, 5 requests.
    assert!(rerun.len() <= 5, "re-run:\n{}", describe(&rerun));
    let writes: Vec<_> = rerun
        .iter()
        .filter(|r| !matches!(r.verb.as_str(), "get" | "list" | "watch"))
        .map(|r| r.path.as_str())
        .collect();
    assert_eq!(
        writes,
        [
            "/api/v1/namespaces/fleet-sites/serviceaccounts/fleet-edge-rt-site/token",
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
        ],
        "re-run:\n{}",
        describe(&rerun)
    );
    let review = rerun
        .iter()
        .find(|r| r.path.ends_with("selfsubjectrulesreviews"))
        .unwrap();
    assert_eq!(
        review.user, "system:serviceaccount:fleet-sites:fleet-edge-rt-site",
        "the rules reviewed are the new token's own"
    );
    assert_eq!(again["objects"], serde_json::json!([]));
    // The token of the re-run works.
    let config = again["config"].as_str().unwrap().to_owned();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        Api::<FederatedCluster>::all(client_from_yaml(&config).await)
            .get("rt-site")
            .await
            .unwrap();
    });
}
}

// ---- Re-running register is safe: the mode is kept unless asked ----

/// A member sandbox and its admin kubeconfig in the hub's temp dir.
fn member_cluster(hub: &Hub) -> (Sandbox, std::path::PathBuf) {
    let member = Sandbox::start();
    let path = hub.dir.path().join("member.kubeconfig");
    member.write_admin_kubeconfig(&path).unwrap();
    (member, path)
}

async fn site(hub: &Hub, name: &str) -> FederatedCluster {
    Api::<FederatedCluster>::all(hub.admin().await)
        .get(name)
        .await
        .unwrap()
}

async fn set_status(hub: &Hub, site: &str, status: serde_json::Value) {
    use kube::api::{Patch, PatchParams};
    Api::<FederatedCluster>::all(hub.admin().await)
        .patch_status(
            site,
            &PatchParams::default(),
            &Patch::Merge(&serde_json::json!({ "status": status })),
        )
        .await
        .unwrap();
}

/// Whether the site's Push identity is on the hub (its ClusterRole, which is
/// cluster-scoped and named after the site).
async fn has_edge_identity(hub: &Hub, site: &str) -> bool {
    Api::<k8s_openapi::api::rbac::v1::ClusterRole>::all(hub.admin().await)
        .get_opt(&format!("fleet-edge-{site}"))
        .await
        .unwrap()
        .is_some()
}

/// The member kubeconfig the hub holds for a Pull site (None: no Secret).
async fn pull_kubeconfig(hub: &Hub, site: &str) -> Option<String> {
    let secret = Api::<Secret>::namespaced(hub.admin().await, "fleet-system")
        .get_opt(&format!("fleet-pull-{site}"))
        .await
        .unwrap()?;
    Some(String::from_utf8(secret.data.unwrap()["kubeconfig"].0.clone()).unwrap())
}

/// What the member answers the identity of a stored kubeconfig when it
/// lists namespaces: 200, or 401 once that identity is gone.
async fn member_answers(kubeconfig: &str) -> u16 {
    use k8s_openapi::api::core::v1::Namespace;
    match Api::<Namespace>::all(client_from_yaml(kubeconfig).await)
        .list(&Default::default())
        .await
    {
        Ok(_) => 200,
        Err(kube::Error::Api(s)) => s.code,
        Err(e) => panic!("{e}"),
    }
}

/// The command between the last pair of backticks of a line.
fn quoted_command(line: &str) -> String {
    let end = line.rfind('`').expect("a command in backticks");
    let start = line[..end].rfind('`').expect("a command in backticks");
    line[start + 1..end].to_owned()
}

/// Found in use: `kubectl fleet register pull-2 --tier critical`, the natural
/// way to change a tier, used to turn a Pull site into a Push site (Secret
/// removed, a Push token minted) without a word. Omitted flags keep the
/// mode like every other field.
#[tokio::test]
async fn a_rerun_with_only_a_tier_keeps_a_pull_site_pull() {
    let hub = Hub::new();
    let (_member, member_kc) = member_cluster(&hub);
    hub.fleet(&[
        "register",
        "pull-2",
        "--pull",
        "--member-kubeconfig",
        member_kc.to_str().unwrap(),
    ])
    .ok();
    let stored = pull_kubeconfig(&hub, "pull-2").await.unwrap();

    let run = support::shell(&hub, "kubectl fleet register pull-2 --tier critical").ok();
    assert!(
        run.stdout.is_empty(),
        "no Push credential printed: {}",
        run.stdout
    );
    assert!(
        run.stderr.contains("site pull-2 stays in Pull mode"),
        "{}",
        run.stderr
    );
    let now = site(&hub, "pull-2").await;
    assert_eq!(now.spec.mode, kubectl_fleet::api::Mode::Pull);
    assert_eq!(now.spec.tier, Tier::Critical);
    assert!(now.spec.kubeconfig_secret_ref.is_some());
    assert_eq!(
        pull_kubeconfig(&hub, "pull-2").await.as_ref(),
        Some(&stored)
    );
    assert!(!has_edge_identity(&hub, "pull-2").await, "no Push identity");
    assert_eq!(
        member_answers(&stored).await,
        200,
        "the member identity stays"
    );

    // Push-only output flags on a site that stays Pull are refused, not ignored.
    let line = hub
        .fleet(&["register", "pull-2", "--output-file", "edge.kubeconfig"])
        .one_line_error();
    assert!(
        line.contains(
            "site pull-2 is in Pull mode, and --output-file configures the edge of a Push site"
        ),
        "{line}"
    );
    assert!(
        line.ends_with("or add --push to switch it to Push"),
        "{line}"
    );

    // A site that is not Pull yet cannot become Pull without its member.
    let line = hub
        .fleet(&["register", "site-new", "--pull"])
        .one_line_error();
    assert!(
        line.contains("registering site site-new in Pull mode needs the member cluster's kubeconfig: add --member-kubeconfig"),
        "{line}"
    );
    let sites: Api<FederatedCluster> = Api::all(hub.admin().await);
    assert!(sites.get_opt("site-new").await.unwrap().is_none());
}

/// A switch from Push to Pull off a terminal needs `--yes`: refused with
/// nothing changed, naming what it removes and the command that goes
/// ahead — which, run as written, switches the site, removes the edge
/// identity and the Push-only status fields, and keeps the inventory.
#[tokio::test]
async fn a_mode_switch_off_a_terminal_needs_yes_and_the_hint_runs() {
    let hub = Hub::new();
    let (member, member_kc) = member_cluster(&hub);
    hub.register("site-s", &["--tier", "critical"]);
    let expiry = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(24)).to_string();
    set_status(
        &hub,
        "site-s",
        serde_json::json!({
            "nodeCount": 3,
            "credentialExpirationTime": expiry,
            "credentialRenewalTime": expiry,
            "lastReportDurationMilliseconds": 12,
        }),
    )
    .await;
    member.controls().clear_request_log();

    let run = hub.fleet(&[
        "register",
        "site-s",
        "--pull",
        "--member-kubeconfig",
        member_kc.to_str().unwrap(),
    ]);
    let line = run.one_line_error();
    assert!(
        line.starts_with(
            "error: refusing to switch site site-s from Push to Pull without confirmation: it removes the edge identity of site site-s on the hub"
        ),
        "{line}"
    );
    let command = quoted_command(&line);
    assert_eq!(
        command,
        format!(
            "kubectl fleet --kubeconfig {} register site-s --pull --member-kubeconfig {} --yes",
            hub.kubeconfig.display(),
            member_kc.display()
        )
    );
    assert_eq!(
        site(&hub, "site-s").await.spec.mode,
        kubectl_fleet::api::Mode::Push
    );
    assert!(has_edge_identity(&hub, "site-s").await);
    assert!(
        member
            .controls()
            .request_log()
            .iter()
            .all(|r| matches!(r.verb.as_str(), "get" | "list")),
        "nothing written on the member"
    );

    let run = support::shell(&hub, &command).ok();
    assert!(
        run.stderr
            .contains("switching site site-s from Push to Pull: this removes the edge identity"),
        "{}",
        run.stderr
    );
    let now = site(&hub, "site-s").await;
    assert_eq!(now.spec.mode, kubectl_fleet::api::Mode::Pull);
    assert_eq!(now.spec.tier, Tier::Critical, "the tier is kept");
    assert!(!has_edge_identity(&hub, "site-s").await);
    let status = serde_json::to_value(now.status.unwrap()).unwrap();
    for key in [
        "credentialExpirationTime",
        "credentialRenewalTime",
        "lastReportDurationMilliseconds",
    ] {
        assert!(status.get(key).is_none(), "{key} cleared: {status}");
    }
    assert_eq!(status["nodeCount"], 3, "the inventory is kept: {status}");
}

/// Pull to Push with `--member-kubeconfig`: the hub's Secret and the
/// member's read-only identity go (its token stops working), and so do the
/// Pull-only status fields.
#[tokio::test]
async fn switching_to_push_removes_the_pull_credential_on_both_sides() {
    let hub = Hub::new();
    let (_member, member_kc) = member_cluster(&hub);
    let member_kc = member_kc.to_str().unwrap();
    hub.fleet(&[
        "register",
        "site-p",
        "--pull",
        "--member-kubeconfig",
        member_kc,
    ])
    .ok();
    let stored = pull_kubeconfig(&hub, "site-p").await.unwrap();
    assert_eq!(member_answers(&stored).await, 200);
    let expiry = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(24)).to_string();
    set_status(
        &hub,
        "site-p",
        serde_json::json!({
            "nodeCount": 2,
            "credentialExpirationTime": expiry,
            "lastProbeDurationMilliseconds": 40,
        }),
    )
    .await;

    let summary = hub.register(
        "site-p",
        &["--push", "--yes", "--member-kubeconfig", member_kc],
    );
    assert_eq!(summary["mode"], "Push");
    assert!(
        summary["config"].is_string(),
        "the edge configuration: {summary}"
    );
    assert_eq!(pull_kubeconfig(&hub, "site-p").await, None);
    assert_eq!(
        member_answers(&stored).await,
        401,
        "the member identity is gone"
    );
    let now = site(&hub, "site-p").await;
    assert_eq!(now.spec.mode, kubectl_fleet::api::Mode::Push);
    assert!(now.spec.kubeconfig_secret_ref.is_none());
    let status = serde_json::to_value(now.status.unwrap()).unwrap();
    assert!(status.get("credentialExpirationTime").is_none(), "{status}");
    assert!(
        status.get("lastProbeDurationMilliseconds").is_none(),
        "{status}"
    );
    assert_eq!(status["nodeCount"], 2);
}

/// Pull to Push without the member kubeconfig: the member identity cannot
/// be reached, so `register` says it is left and how to remove it — and
/// that command removes it.
#[tokio::test]
async fn a_member_identity_left_behind_is_named_with_the_command_that_removes_it() {
    let hub = Hub::new();
    let (_member, member_kc) = member_cluster(&hub);
    hub.fleet(&[
        "register",
        "site-q",
        "--pull",
        "--member-kubeconfig",
        member_kc.to_str().unwrap(),
    ])
    .ok();
    let stored = pull_kubeconfig(&hub, "site-q").await.unwrap();
    let run = hub.fleet(&["register", "site-q", "--push", "--yes"]).ok();
    let warning = run
        .stderr
        .lines()
        .find(|l| l.starts_with("warning: a read-only identity"))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    let command = quoted_command(warning);
    assert_eq!(
        command,
        "kubectl fleet register site-q --push --member-kubeconfig FILE"
    );
    assert_eq!(member_answers(&stored).await, 200, "left behind");
    let command = command.replace("FILE", member_kc.to_str().unwrap());
    support::shell(&hub, &command).ok();
    assert_eq!(member_answers(&stored).await, 401, "removed");
}

/// On a terminal the switch is a question: "n" changes nothing (exit 1),
/// "y" switches.
#[tokio::test]
async fn a_mode_switch_on_a_terminal_asks_first() {
    let hub = Hub::new();
    let (_member, member_kc) = member_cluster(&hub);
    hub.fleet(&[
        "register",
        "site-t",
        "--pull",
        "--member-kubeconfig",
        member_kc.to_str().unwrap(),
    ])
    .ok();
    let answer = |key: &str| {
        use std::io::{Read as _, Write as _};
        let command = format!(
            "{} --kubeconfig {} register site-t --push",
            support::BIN,
            hub.kubeconfig.display()
        );
        let mut child = std::process::Command::new("script")
            .args(["-qec", &command, "/dev/null"])
            .env("NO_COLOR", "1")
            .env_remove("KUBECONFIG")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("util-linux script");
        let mut stdout = child.stdout.take().unwrap();
        let shown = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = shown.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stdout.read(&mut buf) {
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let text = || String::from_utf8_lossy(&shown.lock().unwrap()).into_owned();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !text().contains("Switch site site-t from Pull to Push?")
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(
            text().contains("This removes Secret fleet-system/fleet-pull-site-t"),
            "{}",
            text()
        );
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(key.as_bytes()).unwrap();
        stdin.flush().unwrap();
        let status = child.wait().unwrap();
        reader.join().unwrap();
        (status.code(), text())
    };
    let (code, text) = answer("n");
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(
        site(&hub, "site-t").await.spec.mode,
        kubectl_fleet::api::Mode::Pull
    );
    assert!(pull_kubeconfig(&hub, "site-t").await.is_some());
    let (code, text) = answer("y");
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(
        site(&hub, "site-t").await.spec.mode,
        kubectl_fleet::api::Mode::Push
    );
    assert!(pull_kubeconfig(&hub, "site-t").await.is_none());
}

/// Found in use: `--output-file /nonexistent-dir/x` created the site, its RBAC
/// and a token, then failed. The file is checked first: nothing reaches
/// the hub (nor does `rotate --revoke` revoke anything).
#[test]
fn an_unwritable_output_file_stops_before_anything_is_created() {
    let hub = Hub::new();
    hub.register("site-a", &[]);
    let controls = hub.sandbox.controls();
    controls.clear_request_log();
    for args in [
        vec![
            "register",
            "site-new",
            "--output-file",
            "/nonexistent-dir/x",
        ],
        vec![
            "rotate",
            "site-a",
            "--revoke",
            "--output-file",
            "/nonexistent-dir/x",
        ],
    ] {
        let line = hub.fleet(&args).one_line_error();
        assert!(
            line.starts_with(
                "error: failed to write /nonexistent-dir/x: No such file or directory"
            ),
            "{args:?}: {line}"
        );
        assert!(line.contains("check the directory exists"), "{line}");
    }
    assert_eq!(
        controls.request_log(),
        Vec::new(),
        "no request reached the hub"
    );
}

/// A step failing after the site exists says what exists and the command
/// that finishes it (a re-run of the same command) or, for a new site,
/// removes it; both run as written.
#[tokio::test]
async fn a_failure_after_the_site_exists_names_the_commands_that_finish_or_undo_it() {
    let hub = Hub::new();
    let fail_next_token = || {
        hub.sandbox.controls().fail(kube_sandbox::FaultRule {
            verb: Some("create".into()),
            path_contains: Some("/token".into()),
            status: 500,
            count: 1,
            ..Default::default()
        })
    };
    let out = hub.dir.path().join("site-f.kubeconfig");
    fail_next_token();
    let run = hub.fleet(&[
        "register",
        "site-f",
        "--tier",
        "critical",
        "--output-file",
        out.to_str().unwrap(),
    ]);
    let line = run.one_line_error();
    let kubeconfig = hub.kubeconfig.display();
    let finish = format!(
        "kubectl fleet --kubeconfig {kubeconfig} register site-f --tier critical --output-file {}",
        out.display()
    );
    let undo = format!("kubectl fleet --kubeconfig {kubeconfig} unregister site-f --yes");
    assert!(
        line.ends_with(&format!(
            "site site-f and its edge identity exist on the hub, but no edge configuration was handed out: run `{finish}` to finish, or `{undo}` to remove it"
        )),
        "{line}"
    );
    assert!(!out.exists());
    support::shell(&hub, &finish).ok();
    let client = client_from_yaml(&std::fs::read_to_string(&out).unwrap()).await;
    Api::<FederatedCluster>::all(client)
        .get("site-f")
        .await
        .unwrap();

    fail_next_token();
    let line = hub.fleet(&["register", "site-g"]).one_line_error();
    let undo = format!("kubectl fleet --kubeconfig {kubeconfig} unregister site-g --yes");
    assert!(
        line.ends_with(&format!("or `{undo}` to remove it")),
        "{line}"
    );
    support::shell(&hub, &undo).ok();
    let sites: Api<FederatedCluster> = Api::all(hub.admin().await);
    assert!(sites.get_opt("site-g").await.unwrap().is_none());
    assert!(!has_edge_identity(&hub, "site-g").await);

    // An existing site is never offered for removal.
    fail_next_token();
    let line = hub
        .fleet(&["register", "site-f", "--tier", "standard"])
        .one_line_error();
    assert!(line.contains("to finish"), "{line}");
    assert!(!line.contains("unregister"), "{line}");
}

/// A member that caps the read-only token's lifetime: the warning names
/// the command that stores a fresh one — `rotate` has no Pull token — and
/// that command runs as written.
#[tokio::test]
async fn a_capped_member_token_names_the_command_that_renews_it() {
    let hub = Hub::new();
    let member = Sandbox::start_with(kube_sandbox::SandboxOptions {
        max_token_expiration: Some(std::time::Duration::from_secs(3600)),
        ..Default::default()
    })
    .unwrap();
    let member_kc = hub.dir.path().join("member.kubeconfig");
    member.write_admin_kubeconfig(&member_kc).unwrap();
    let run = hub
        .fleet(&[
            "register",
            "site-c",
            "--pull",
            "--member-kubeconfig",
            member_kc.to_str().unwrap(),
        ])
        .ok();
    let warning = run
        .stderr
        .lines()
        .find(|l| l.starts_with("warning: the API server capped the token lifetime to 1h"))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    let command = quoted_command(warning);
    assert_eq!(
        command,
        format!(
            "kubectl fleet register site-c --pull --member-kubeconfig {}",
            member_kc.display()
        )
    );
    let before = pull_kubeconfig(&hub, "site-c").await.unwrap();
    support::shell(&hub, &command).ok();
    let after = pull_kubeconfig(&hub, "site-c").await.unwrap();
    assert_ne!(before, after, "a fresh token is stored");
    assert_eq!(member_answers(&after).await, 200);
}

/// A newer kubectl-fleet on a hub whose CRDs predate the site's lease:
/// `register` says so and registers the site without one (its edge
/// heartbeats through the status), `unregister` removes it all the same,
/// and once the CRDs are installed a re-run creates the lease.
#[test]
fn register_on_a_hub_without_the_lease_crd_warns_and_registers() {
    let hub = Hub::new();
    hub.kubectl(&[
        "delete",
        "crd",
        "federatedclusterleases.federation.kubectl-fleet.dev",
    ])
    .ok();
    let out = hub.dir.path().join("old.kubeconfig");
    let run = hub
        .fleet(&[
            "register",
            "old-crds",
            "--output-file",
            &out.display().to_string(),
        ])
        .ok();
    assert!(
        run.stderr.contains(
            "warning: the hub does not serve FederatedClusterLease (its fleet CRDs predate this kubectl-fleet): \
             site old-crds's edge heartbeats through its status until you run `kubectl fleet install --apply` on the hub \
             and re-run `kubectl fleet register old-crds`"
        ),
        "{}",
        run.stderr
    );
    assert!(out.exists());
    // Installing the CRDs, then re-running, creates the lease.
    hub.install_crds();
    let again = hub
        .fleet(&[
            "register",
            "old-crds",
            "--output-file",
            &out.display().to_string(),
        ])
        .ok();
    assert!(
        again
            .stderr
            .contains("FederatedClusterLease old-crds applied"),
        "{}",
        again.stderr
    );
    hub.kubectl(&["get", "fcl", "old-crds"]).ok();
    // Unregister deletes it (or the garbage collector does first: the
    // lease is owned by its site).
    hub.fleet(&["unregister", "old-crds", "--yes"]).ok();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while hub.kubectl(&["get", "fcl", "old-crds"]).code == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the lease outlived its site"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Unregistering on a hub without the lease CRD is no error either.
    hub.fleet(&["register", "old-crds-2"]).ok();
    hub.kubectl(&[
        "delete",
        "crd",
        "federatedclusterleases.federation.kubectl-fleet.dev",
    ])
    .ok();
    hub.fleet(&["unregister", "old-crds-2", "--yes"]).ok();
}
