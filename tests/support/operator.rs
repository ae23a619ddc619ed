//! Shared helpers of the `operator_*` integration tests: sandboxes, CRDs,
//! site identities minted like `kubectl fleet register` does, operator
//! processes killed by PID on drop, and polling with a deadline.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{Environment, FederatedCluster, FederatedClusterSpec};
use kubectl_fleet::fleet::rbac;

use super::kubectl::Kubectl;

/// A folder removed on drop.
pub struct TempDir(tempfile::TempDir);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix(&format!("fleet-op-{tag}-"))
            .tempdir()
            .unwrap();
        Self(dir)
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
}

/// A kube client from kubeconfig YAML.
pub async fn client_from(yaml: &str) -> kube::Client {
    let kc = kube::config::Kubeconfig::from_yaml(yaml).unwrap();
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    kube::Client::try_from(cfg).unwrap()
}

/// The sandbox admin client.
pub async fn admin(sb: &Sandbox) -> kube::Client {
    client_from(&sb.admin_kubeconfig()).await
}

/// Creates the fleet CRDs (as `kubectl fleet install --apply` would) and
/// waits until discovery serves them.
pub async fn install_crds(client: &kube::Client) {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in kubectl_fleet::api::crds() {
        api.create(&PostParams::default(), &crd).await.unwrap();
    }
    wait_until(Duration::from_secs(10), "CRDs served", || async {
        kubectl_fleet::k8s::site_status::crds_installed(client)
            .await
            .unwrap_or(false)
    })
    .await;
}

/// Creates a namespace if missing.
pub async fn ensure_namespace(client: &kube::Client, name: &str) {
    let api: Api<Namespace> = Api::all(client.clone());
    if api.get_opt(name).await.unwrap().is_none() {
        let ns: Namespace =
            serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).unwrap();
        api.create(&PostParams::default(), &ns).await.unwrap();
    }
}

/// A site's heartbeat as the hub reads it: the later of its status's
/// `lastHeartbeatTime` and its lease's renewal (a steady edge renews its
/// lease, not its status; `FederatedCluster::with_lease`). None when the
/// site is gone or never heard from.
pub async fn heartbeat_of(api: &Api<FederatedCluster>, site: &str) -> Option<jiff::Timestamp> {
    let mut fc = api.get_opt(site).await.unwrap()?;
    let leases = Api::<kubectl_fleet::api::FederatedClusterLease>::all(api.clone().into_client());
    if let Some(lease) = leases.get_opt(site).await.unwrap() {
        fc.with_lease(kubectl_fleet::api::Renewal::from(&lease));
    }
    fc.status?.last_heartbeat_time.map(|t| t.0)
}

/// A heartbeat as an edge before the site lease sends it: its time (now)
/// in the site's status, one merge patch.
pub async fn status_heartbeat(api: &Api<FederatedCluster>, site: &str) {
    let now = jiff::Timestamp::now();
    let beat = serde_json::json!({"status": {"lastHeartbeatTime": now.to_string()}});
    api.patch_status(
        site,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(beat),
    )
    .await
    .unwrap();
}

/// Creates a Push site.
pub async fn create_site(client: &kube::Client, name: &str, interval: i32, env: Environment) {
    let api: Api<FederatedCluster> = Api::all(client.clone());
    let spec = FederatedClusterSpec {
        heartbeat_interval_seconds: interval,
        environment: env,
        ..FederatedClusterSpec::default()
    };
    // Labelled as `register` labels a site (its bucket among them), so the
    // hub has no label to backfill.
    let mut site = FederatedCluster::new(name, spec.clone());
    site.metadata.labels = Some(rbac::site_object_labels(name, &spec));
    api.create(&PostParams::default(), &site).await.unwrap();
}

/// Mints the per-site identity (docs/architecture.md#the-life-of-a-site) on the hub (ServiceAccount,
/// the two-rule ClusterRole, binding, the self-renewal Role and binding)
/// and returns a hub kubeconfig with a fresh token valid for `ttl`.
pub async fn mint_site_kubeconfig(
    sb: &Sandbox,
    client: &kube::Client,
    site: &str,
    ttl: Duration,
) -> String {
    ensure_namespace(client, rbac::SITES_NAMESPACE).await;
    let pp = PostParams::default();
    let ns = rbac::SITES_NAMESPACE;
    let sa: Api<ServiceAccount> = Api::namespaced(client.clone(), ns);
    if sa
        .get_opt(&rbac::edge_identity_name(site))
        .await
        .unwrap()
        .is_none()
    {
        sa.create(
            &pp,
            &kubectl_fleet::manifests::rbac::site_service_account(site),
        )
        .await
        .unwrap();
        Api::<ClusterRole>::all(client.clone())
            .create(
                &pp,
                &kubectl_fleet::manifests::rbac::site_cluster_role(site),
            )
            .await
            .unwrap();
        Api::<ClusterRoleBinding>::all(client.clone())
            .create(
                &pp,
                &kubectl_fleet::manifests::rbac::site_cluster_role_binding(site),
            )
            .await
            .unwrap();
        Api::<Role>::namespaced(client.clone(), ns)
            .create(&pp, &kubectl_fleet::manifests::rbac::site_token_role(site))
            .await
            .unwrap();
        Api::<RoleBinding>::namespaced(client.clone(), ns)
            .create(
                &pp,
                &kubectl_fleet::manifests::rbac::site_token_role_binding(site),
            )
            .await
            .unwrap();
    }
    let token = mint_token(client, site, ttl).await;
    sb.kubeconfig_for_token(&token)
}

/// A fresh token for the site's ServiceAccount.
pub async fn mint_token(client: &kube::Client, site: &str, ttl: Duration) -> String {
    let name = rbac::edge_identity_name(site);
    service_account_token(client, rbac::SITES_NAMESPACE, &name, ttl).await
}

/// Writes a file with mode 0600.
pub fn write_private(path: &Path, text: &str) {
    kube_sandbox::write_private_atomic(path, text.as_bytes()).unwrap();
}

/// Polls `f` until it returns true, panicking after `timeout`.
pub async fn wait_until<F, Fut>(timeout: Duration, what: &str, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    loop {
        if f().await {
            return;
        }
        assert!(
            start.elapsed() < timeout,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A child process killed (by its PID) and reaped on drop; its stderr goes
/// to a log file the test can read.
pub struct Proc {
    pub child: Option<Child>,
    pub log: PathBuf,
    pub name: String,
}

impl Proc {
    pub fn spawn(name: &str, program: &Path, args: &[String], log: PathBuf) -> Proc {
        Self::spawn_cmd(name, Command::new(program), args, log, &[])
    }

    /// Like [`Proc::spawn`], with the environment variables `env` set (e.g.
    /// a `KUBECONFIG` list).
    pub fn spawn_with_env(
        name: &str,
        program: &Path,
        args: &[String],
        log: PathBuf,
        env: &[(&str, &str)],
    ) -> Proc {
        Self::spawn_cmd(name, Command::new(program), args, log, env)
    }

    /// Like [`Proc::spawn`], as user `uid` with only group `gid` (the test
    /// runs as root to do this, as the kubelet's container runtime does).
    pub fn spawn_as(
        name: &str,
        program: &Path,
        args: &[String],
        log: PathBuf,
        uid: u32,
        gid: u32,
    ) -> Proc {
        use std::os::unix::process::CommandExt as _;
        let mut cmd = Command::new(program);
        // std drops root's supplementary groups when it sets the uid.
        cmd.uid(uid).gid(gid);
        Self::spawn_cmd(name, cmd, args, log, &[])
    }

    fn spawn_cmd(
        name: &str,
        mut cmd: Command,
        args: &[String],
        log: PathBuf,
        env: &[(&str, &str)],
    ) -> Proc {
        let file = std::fs::File::create(&log).unwrap();
        let child = cmd
            .args(args)
            .env("RUST_LOG", "info")
            .env_remove("KUBECONFIG")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {name}: {e}"));
        Proc {
            child: Some(child),
            log,
            name: name.to_owned(),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    /// SIGKILL, as a crash would.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERM and wait (graceful shutdown).
    pub fn terminate(&mut self) -> Option<std::process::ExitStatus> {
        let mut c = self.child.take()?;
        let _ = Command::new("kill")
            .args(["-TERM", &c.id().to_string()])
            .status();
        let start = Instant::now();
        loop {
            if let Ok(Some(st)) = c.try_wait() {
                return Some(st);
            }
            if start.elapsed() > Duration::from_secs(10) {
                let _ = c.kill();
                return c.wait().ok();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A member kube-sandbox with one Ready node carrying `gpus` NVIDIA GPUs
/// (capacity, allocatable), its admin kubeconfig written in `dir`.
pub async fn member_sandbox(dir: &TempDir, name: &str, gpus: (i64, i64)) -> (Sandbox, PathBuf) {
    let sb = Sandbox::start();
    let kc = dir.join(&format!("{name}-member.kubeconfig"));
    sb.write_admin_kubeconfig(&kc).unwrap();
    seed_member(
        &admin(&sb).await,
        &[NodeSeed {
            name: &format!("{name}-node-1"),
            gpus: &[("nvidia.com/gpu", gpus.0, gpus.1)],
            ready: true,
        }],
        &[],
    )
    .await;
    (sb, kc)
}

/// `kubectl fleet register SITE --pull --member-kubeconfig MEMBER
/// --heartbeat-interval 10 EXTRA…`: its stdout.
pub fn register_pull(hub_kc: &Path, site: &str, member_kc: &Path, extra: &[&str]) -> String {
    let member = member_kc.display().to_string();
    let mut args = vec![
        "register",
        site,
        "--pull",
        "--member-kubeconfig",
        &member,
        "--heartbeat-interval",
        "10",
    ];
    args.extend_from_slice(extra);
    fleet_cli(hub_kc, &args)
}

/// How long a wait for a condition may take before the test fails.
pub const CONDITION_WAIT: Duration = Duration::from_secs(60);

/// (status, reason, message) of a site's condition `type_`.
pub async fn condition(
    api: &Api<FederatedCluster>,
    site: &str,
    type_: &str,
) -> Option<(String, String, String)> {
    let fc = api.get(site).await.ok()?;
    let c = fc.status?.condition(type_)?.clone();
    Some((c.status, c.reason, c.message))
}

/// Waits (up to [`CONDITION_WAIT`]) until condition `type_` of `site` has
/// `status` and `reason`, returning its message; fails naming the last
/// state seen.
pub async fn wait_condition(
    api: &Api<FederatedCluster>,
    site: &str,
    type_: &str,
    status: &str,
    reason: &str,
) -> String {
    let mut last = None;
    let start = Instant::now();
    loop {
        let got = condition(api, site, type_).await;
        if let Some((s, r, m)) = &got
            && s == status
            && r == reason
        {
            return m.clone();
        }
        last = got.or(last);
        assert!(
            start.elapsed() < CONDITION_WAIT,
            "{site}: {type_} is {last:?}, wanted {status}/{reason}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// [`wait_condition`] of the `Connected` condition.
pub async fn wait_connected(
    api: &Api<FederatedCluster>,
    site: &str,
    status: &str,
    reason: &str,
) -> String {
    wait_condition(
        api,
        site,
        kubectl_fleet::api::CONDITION_CONNECTED,
        status,
        reason,
    )
    .await
}

/// Path of the built fleet-operator binary.
pub fn operator_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fleet-operator"))
}

/// Hub operator arguments for tests: loopback servers, short lease.
pub fn hub_args(kubeconfig: &Path, identity: &str, scale: f64) -> Vec<String> {
    vec![
        "--federation-role".into(),
        "hub".into(),
        "--kubeconfig".into(),
        kubeconfig.display().to_string(),
        "--health-addr".into(),
        "127.0.0.1:0".into(),
        "--secure-addr".into(),
        "127.0.0.1:0".into(),
        "--lease-duration".into(),
        "3s".into(),
        "--leader-identity".into(),
        identity.into(),
        "--interval-scale".into(),
        scale.to_string(),
    ]
}

/// [`hub_args`] serving HTTPS with a `localhost` certificate written into
/// `dir` ([`localhost_cert`]); the certificate PEM a client trusts.
pub fn hub_args_tls(
    kubeconfig: &Path,
    dir: &TempDir,
    identity: &str,
    scale: f64,
) -> (Vec<String>, String) {
    let (cert, key, ca) = localhost_cert(dir);
    let mut args = hub_args(kubeconfig, identity, scale);
    args.extend([
        "--tls-cert-file".to_owned(),
        cert.display().to_string(),
        "--tls-private-key-file".to_owned(),
        key.display().to_string(),
    ]);
    (args, ca)
}

/// A hub process that judges alone (`--leader-elect false`), serving
/// HTTPS ([`hub_args_tls`]), logging to `dir/hub.log`; the CA a client
/// of its metrics and REST API trusts.
pub fn spawn_lone_hub(
    kubeconfig: &Path,
    dir: &TempDir,
    identity: &str,
    scale: f64,
) -> (Proc, String) {
    let (mut args, ca) = hub_args_tls(kubeconfig, dir, identity, scale);
    args.extend(["--leader-elect".to_owned(), "false".to_owned()]);
    let hub = Proc::spawn("hub", &operator_bin(), &args, dir.join("hub.log"));
    (hub, ca)
}

/// Edge operator arguments for tests.
pub fn edge_args(site: &str, member: &Path, hub: &Path, scale: f64) -> Vec<String> {
    vec![
        "--federation-role".into(),
        "edge".into(),
        "--site".into(),
        site.into(),
        "--kubeconfig".into(),
        member.display().to_string(),
        "--hub-kubeconfig".into(),
        hub.display().to_string(),
        "--health-addr".into(),
        "127.0.0.1:0".into(),
        "--secure-addr".into(),
        "127.0.0.1:0".into(),
        "--interval-scale".into(),
        scale.to_string(),
    ]
}

/// A node to seed on a member sandbox.
pub struct NodeSeed<'a> {
    pub name: &'a str,
    /// (extended resource, capacity, allocatable)
    pub gpus: &'a [(&'a str, i64, i64)],
    pub ready: bool,
}

/// A failing Deployment pod to seed: `reason` is a container waiting reason
/// such as CrashLoopBackOff or ImagePullBackOff.
pub struct FailingPod<'a> {
    pub namespace: &'a str,
    pub deployment: &'a str,
    pub reason: &'a str,
}

fn dynamic_api(
    client: &kube::Client,
    api_version: &str,
    kind: &str,
    plural: &str,
    ns: Option<&str>,
) -> Api<kube::api::DynamicObject> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let gvk = kube::core::GroupVersionKind::gvk(group, version, kind);
    let ar = kube::api::ApiResource::from_gvk_with_plural(&gvk, plural);
    match ns {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    }
}

async fn create_json(
    client: &kube::Client,
    plural: &str,
    ns: Option<&str>,
    body: serde_json::Value,
) -> kube::api::DynamicObject {
    let obj: kube::api::DynamicObject = serde_json::from_value(body).unwrap();
    let tm = obj.types.clone().unwrap();
    dynamic_api(client, &tm.api_version, &tm.kind, plural, ns)
        .create(&PostParams::default(), &obj)
        .await
        .unwrap()
}

async fn put_status(
    client: &kube::Client,
    plural: &str,
    ns: Option<&str>,
    obj: &kube::api::DynamicObject,
) {
    let tm = obj.types.clone().unwrap();
    let name = obj.metadata.name.clone().unwrap();
    dynamic_api(client, &tm.api_version, &tm.kind, plural, ns)
        .replace_status(&name, &PostParams::default(), obj)
        .await
        .unwrap();
}

/// Seeds a member cluster: nodes with GPU capacity, and failing pods owned
/// by ReplicaSets of Deployments (so signals resolve to the Deployment).
pub async fn seed_member(client: &kube::Client, nodes: &[NodeSeed<'_>], pods: &[FailingPod<'_>]) {
    for n in nodes {
        let mut capacity = serde_json::Map::new();
        let mut allocatable = serde_json::Map::new();
        capacity.insert("cpu".into(), "16".into());
        for (res, cap, alloc) in n.gpus {
            capacity.insert((*res).into(), cap.to_string().into());
            allocatable.insert((*res).into(), alloc.to_string().into());
        }
        create_json(
            client,
            "nodes",
            None,
            serde_json::json!({
                "apiVersion": "v1", "kind": "Node", "metadata": {"name": n.name},
                "status": {
                    "capacity": capacity, "allocatable": allocatable,
                    "conditions": [{"type": "Ready", "status": if n.ready {"True"} else {"False"},
                                    "reason": if n.ready {"KubeletReady"} else {"KubeletNotReady"},
                                    "message": if n.ready {"kubelet is posting ready status"} else {"container runtime is down"}}]
                }
            }),
        )
        .await;
    }
    for (i, p) in pods.iter().enumerate() {
        ensure_namespace(client, p.namespace).await;
        let rs = format!("{}-7c9f{i}", p.deployment);
        let ns = p.namespace;
        create_json(
            client,
            "replicasets",
            Some(ns),
            serde_json::json!({
                "apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": rs, "namespace": ns, "ownerReferences": [{
                    "apiVersion": "apps/v1", "kind": "Deployment", "name": p.deployment,
                    "uid": format!("00000000-0000-0000-0000-{i:012}"), "controller": true}]},
                "spec": {"selector": {"matchLabels": {"app": p.deployment}},
                         "template": {"metadata": {"labels": {"app": p.deployment}},
                                      "spec": {"containers": [{"name": "app", "image": "app:1"}]}}}
            }),
        )
        .await;
        let pod = format!("{rs}-x{i}");
        let mut created = create_json(
            client,
            "pods",
            Some(ns),
            serde_json::json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": pod, "namespace": ns, "labels": {"app": p.deployment},
                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                  "name": rs, "uid": format!("10000000-0000-0000-0000-{i:012}"),
                                                  "controller": true}]},
                "spec": {"containers": [{"name": "app", "image": "app:1"}]}
            }),
        )
        .await;
        created.data["status"] = serde_json::json!({
            "phase": "Running",
            "containerStatuses": [{"name": "app", "image": "app:1", "imageID": "", "ready": false,
                                   "restartCount": 7,
                                   "state": {"waiting": {"reason": p.reason, "message": format!("{} in {}", p.reason, p.deployment)}}}]
        });
        put_status(client, "pods", Some(ns), &created).await;
    }
}

/// Records on every pod of a member, as a kubelet would, that its
/// containers have not been ready since `since` (pod `startTime` and the
/// ContainersReady/Ready conditions' `lastTransitionTime`): the onset the
/// edge reports as the signals' `firstSeen` (docs/architecture.md#signal-onset).
pub async fn record_failing_since(client: &kube::Client, since: jiff::Timestamp) {
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::all(client.clone());
    let at = since.to_string();
    for pod in pods.list(&Default::default()).await.unwrap() {
        let ns = pod.metadata.namespace.clone().unwrap_or_default();
        let name = pod.metadata.name.clone().unwrap_or_default();
        let status = serde_json::json!({"status": {
            "startTime": at,
            "conditions": [
                {"type": "ContainersReady", "status": "False", "reason": "ContainersNotReady", "lastTransitionTime": at},
                {"type": "Ready", "status": "False", "reason": "ContainersNotReady", "lastTransitionTime": at}
            ]
        }});
        Api::<k8s_openapi::api::core::v1::Pod>::namespaced(client.clone(), &ns)
            .patch_status(
                &name,
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(&status),
            )
            .await
            .unwrap();
    }
}

/// Path of the built kubectl-fleet binary.
pub fn cli_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubectl-fleet"))
}

/// Runs `kubectl-fleet --kubeconfig HUB ARGS...`, panicking on failure;
/// returns stderr (the human messages).
pub fn fleet_cli(hub_kc: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new(cli_bin());
    cmd.arg("--kubeconfig").arg(hub_kc).args(args);
    run_fleet(cmd, hub_kc, args)
}

/// Runs `kubectl fleet ARGS...` through the real `kubectl` ([`Kubectl`]),
/// which finds the built plugin on PATH as after `krew install fleet`
/// (KUBECONFIG is the hub's admin kubeconfig); panics on failure, returns
/// stderr then stdout.
pub fn kubectl_fleet(hub_kc: &Path, args: &[&str]) -> String {
    let run = Kubectl::new(hub_kc).arg("fleet").args(args).ok();
    run.stderr + &run.stdout
}

fn run_fleet(mut cmd: Command, hub_kc: &Path, args: &[&str]) -> String {
    let cache = hub_kc.parent().unwrap().join("kube-cache");
    let out = cmd
        .env("KUBECACHEDIR", cache)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "kubectl-fleet {args:?} failed: {stderr}"
    );
    stderr + &String::from_utf8_lossy(&out.stdout)
}

/// `kubectl fleet install --apply` on the hub.
pub fn fleet_install(hub_kc: &Path) {
    fleet_cli(hub_kc, &["install", "--apply"]);
}

/// Writes `hub`'s admin kubeconfig to `dir/hub.kubeconfig`, installs the
/// fleet there with `kubectl fleet install --apply`, and returns the path.
pub fn installed_hub(hub: &Sandbox, dir: &TempDir) -> PathBuf {
    let hub_kc = dir.join("hub.kubeconfig");
    hub.write_admin_kubeconfig(&hub_kc).unwrap();
    fleet_install(&hub_kc);
    hub_kc
}

/// The kubeconfig a hub operator runs with in the e2e suites: a token of
/// its own ServiceAccount `fleet-system/fleet-operator-hub`, whose rights
/// are exactly the ClusterRole and Role `kubectl fleet install --apply`
/// ships (applied by [`installed_hub`]; nothing else is bound to it). A
/// request the hub's code makes that the shipped RBAC does not allow
/// fails the test with a 403, as it would in a cluster. Written to
/// `dir/hub-operator.kubeconfig`.
pub async fn hub_operator_kubeconfig(hub: &Sandbox, dir: &TempDir) -> PathBuf {
    let token = service_account_token(
        &admin(hub).await,
        rbac::FLEET_NAMESPACE,
        "fleet-operator-hub",
        Duration::from_secs(86_400),
    )
    .await;
    let path = dir.join("hub-operator.kubeconfig");
    write_private(&path, &hub.kubeconfig_for_token(&token));
    path
}

/// `kubectl fleet register SITE --heartbeat-interval N --output-file OUT [extra]`.
pub fn fleet_register(hub_kc: &Path, site: &str, interval: u32, out: &Path, extra: &[&str]) {
    let interval = interval.to_string();
    let out_s = out.display().to_string();
    let mut args = vec![
        "register",
        site,
        "--heartbeat-interval",
        &interval,
        "--output-file",
        &out_s,
    ];
    args.extend_from_slice(extra);
    fleet_cli(hub_kc, &args);
}

/// The edge operator's identity on a MEMBER cluster as `install --role
/// edge` grants it: the read-only member reader rights plus
/// [`rbac::edge_secret_rules`] on the hub kubeconfig Secret only. Returns a
/// kubeconfig for that identity.
pub async fn edge_member_kubeconfig(sb: &Sandbox, client: &kube::Client, secret: &str) -> String {
    ensure_namespace(client, rbac::FLEET_NAMESPACE).await;
    let pp = PostParams::default();
    let ns = rbac::FLEET_NAMESPACE;
    let name = rbac::MEMBER_READER_NAME;
    Api::<ServiceAccount>::namespaced(client.clone(), ns)
        .create(
            &pp,
            &kubectl_fleet::manifests::rbac::member_reader_service_account(),
        )
        .await
        .unwrap();
    Api::<ClusterRole>::all(client.clone())
        .create(
            &pp,
            &kubectl_fleet::manifests::rbac::member_reader_cluster_role(),
        )
        .await
        .unwrap();
    Api::<ClusterRoleBinding>::all(client.clone())
        .create(
            &pp,
            &kubectl_fleet::manifests::rbac::member_reader_cluster_role_binding(),
        )
        .await
        .unwrap();
    let meta = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        name: Some(name.to_owned()),
        namespace: Some(ns.to_owned()),
        ..Default::default()
    };
    Api::<Role>::namespaced(client.clone(), ns)
        .create(
            &pp,
            &Role {
                metadata: meta.clone(),
                rules: Some(rbac::edge_secret_rules(secret)),
            },
        )
        .await
        .unwrap();
    Api::<RoleBinding>::namespaced(client.clone(), ns)
        .create(
            &pp,
            &RoleBinding {
                metadata: meta,
                role_ref: k8s_openapi::api::rbac::v1::RoleRef {
                    api_group: "rbac.authorization.k8s.io".into(),
                    kind: "Role".into(),
                    name: name.into(),
                },
                subjects: Some(vec![k8s_openapi::api::rbac::v1::Subject {
                    kind: "ServiceAccount".into(),
                    name: name.into(),
                    namespace: Some(ns.into()),
                    api_group: None,
                }]),
            },
        )
        .await
        .unwrap();
    sb.kubeconfig_for_token(
        &service_account_token(client, ns, name, Duration::from_secs(86_400)).await,
    )
}

/// GET `path` from the probe server whose address the process logged.
pub fn probe(log: &str, path: &str) -> u16 {
    use std::io::{Read as _, Write as _};
    let addr = log
        .lines()
        .find(|l| l.contains("serving /healthz and /readyz"))
        .and_then(|l| l.split("addr=").nth(1))
        .map(|a| a.trim().to_owned())
        .expect("probe address logged");
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// A certificate for `localhost` and its key, written as PEM files (the key
/// 0600) for `--tls-cert-file`/`--tls-private-key-file`; returns the paths
/// and the certificate PEM a client trusts.
pub fn localhost_cert(dir: &TempDir) -> (PathBuf, PathBuf, String) {
    let generated = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let cert_pem = generated.cert.pem();
    let (cert, key) = (dir.join("tls.crt"), dir.join("tls.key"));
    std::fs::write(&cert, &cert_pem).unwrap();
    write_private(&key, &generated.signing_key.serialize_pem());
    (cert, key, cert_pem)
}

/// The address a process logged for `what` (`addr=` of the first log line
/// containing it).
pub fn logged_addr(log: &str, what: &str) -> String {
    log.lines()
        .find(|l| l.contains(what))
        .and_then(|l| l.split("addr=").nth(1))
        .and_then(|a| a.split_whitespace().next())
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no {what:?} address in the log:\n{log}"))
}

/// A TLS connection to `addr` (which must accept TCP) that trusts only
/// the certificates in `ca_pem` and requires the server's certificate to
/// name `server_name`; the handshake's failure is returned.
pub async fn tls_connect(
    addr: &str,
    ca_pem: &[u8],
    server_name: &str,
) -> std::io::Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from(server_name.to_owned()).unwrap();
    connector.connect(name, tcp).await
}

/// GET `path` over HTTPS from `addr`, trusting only `ca_pem`, with an
/// optional bearer token; returns the status code and the body.
pub async fn https_get(addr: &str, path: &str, token: Option<&str>, ca_pem: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut tls = tls_connect(addr, ca_pem.as_bytes(), "localhost")
        .await
        .unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n");
    tls.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    match tls.read_to_end(&mut raw).await {
        Ok(_) => {}
        // A server that closes after the response without TLS close_notify
        // (rustls reports it as an unexpected EOF): the response is whole.
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !raw.is_empty() => {}
        Err(e) => panic!("GET {path} from {addr}: {e} (after {} bytes)", raw.len()),
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    (code, body)
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// Parsed OpenMetrics text: `# TYPE` of each family and every sample.
pub struct Scrape {
    pub types: std::collections::BTreeMap<String, String>,
    /// (sample name, labels text without braces, value)
    pub samples: Vec<(String, String, f64)>,
}

impl Scrape {
    pub fn parse(text: &str) -> Scrape {
        let mut types = std::collections::BTreeMap::new();
        let mut samples = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, ty) = rest.split_once(' ').unwrap();
                types.insert(name.to_owned(), ty.to_owned());
            } else if !line.starts_with('#') && !line.is_empty() {
                let (series, value) = line.rsplit_once(' ').unwrap();
                let (name, labels) = match series.split_once('{') {
                    Some((n, l)) => (n, l.trim_end_matches('}')),
                    None => (series, ""),
                };
                samples.push((name.to_owned(), labels.to_owned(), value.parse().unwrap()));
            }
        }
        Scrape { types, samples }
    }

    /// The value of the sample `name` whose labels contain every `key="value"` in `labels`.
    pub fn value(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        self.samples
            .iter()
            .find(|(n, l, _)| {
                n == name
                    && labels
                        .iter()
                        .all(|(k, v)| l.split(',').any(|kv| kv == format!("{k}=\"{v}\"")))
            })
            .map(|(_, _, v)| *v)
    }

    /// The sum of every sample named `name`.
    pub fn sum(&self, name: &str) -> f64 {
        self.samples
            .iter()
            .filter(|(n, _, _)| n == name)
            .map(|(_, _, v)| v)
            .sum()
    }

    /// Whether a PromQL metric name is exposed: a sample name, or declared
    /// by a `# TYPE` line before its first sample (a counter family's
    /// `_total`, a histogram's `_bucket`/`_sum`/`_count`, a gauge).
    pub fn exposes(&self, metric: &str) -> bool {
        let declared = |base: &str, ty: &str| self.types.get(base).is_some_and(|t| t == ty);
        self.samples.iter().any(|(n, _, _)| n == metric)
            || declared(metric, "gauge")
            || metric
                .strip_suffix("_total")
                .is_some_and(|base| declared(base, "counter"))
            || ["_bucket", "_sum", "_count"].iter().any(|sfx| {
                metric
                    .strip_suffix(sfx)
                    .is_some_and(|base| declared(base, "histogram"))
            })
    }
}

/// A ServiceAccount allowed exactly `list federatedclusters` (the REST API)
/// and `get` on the non-resource URL `/metrics` (scraping), and a token for it.
pub async fn reader_token(client: &kube::Client) -> String {
    let pp = PostParams::default();
    let ns = "fleet-system";
    let sa: ServiceAccount = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "dashboards", "namespace": ns}
    }))
    .unwrap();
    Api::<ServiceAccount>::namespaced(client.clone(), ns)
        .create(&pp, &sa)
        .await
        .unwrap();
    let role: ClusterRole = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "fleet-api-reader"},
        "rules": [{"apiGroups": ["federation.kubectl-fleet.dev"],
                   "resources": ["federatedclusters"], "verbs": ["list"]},
                  {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    }))
    .unwrap();
    Api::<ClusterRole>::all(client.clone())
        .create(&pp, &role)
        .await
        .unwrap();
    let binding: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "fleet-api-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "fleet-api-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "dashboards", "namespace": ns}]
    }))
    .unwrap();
    Api::<ClusterRoleBinding>::all(client.clone())
        .create(&pp, &binding)
        .await
        .unwrap();
    service_account_token(client, ns, "dashboards", Duration::from_secs(3600)).await
}

/// A token of lifetime `ttl` for the ServiceAccount `ns/name`.
pub async fn service_account_token(
    client: &kube::Client,
    ns: &str,
    name: &str,
    ttl: Duration,
) -> String {
    let req = TokenRequest {
        metadata: Default::default(),
        spec: TokenRequestSpec {
            audiences: vec![],
            expiration_seconds: Some(ttl.as_secs() as i64),
            bound_object_ref: None,
        },
        status: None,
    };
    let minted: TokenRequest = Api::<ServiceAccount>::namespaced(client.clone(), ns)
        .create_subresource("token", name, &PostParams::default(), &req)
        .await
        .unwrap();
    minted.status.unwrap().token
}

/// Who holds the hub's leader Lease, if anyone.
pub async fn lease_holder(client: &kube::Client) -> Option<String> {
    let api: Api<k8s_openapi::api::coordination::v1::Lease> =
        Api::namespaced(client.clone(), rbac::FLEET_NAMESPACE);
    api.get_opt("fleet-operator-hub")
        .await
        .ok()
        .flatten()
        .and_then(|l| l.spec)
        .and_then(|s| s.holder_identity)
}

/// The resident set size of process `pid` in KiB (`VmRSS` of
/// `/proc/PID/status`), or None once it is gone.
pub fn vm_rss_kib(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// Prints one figure of a benchmark for the one-command runner, besides
/// the human text: `BENCH-RESULT {json}` on one line, `value` a number
/// (NaN, when nothing was measured, prints as `null`) and `target` the goal
/// as text (`"info"` when the figure has none).
pub fn bench_result(goal: &str, measure: &str, value: f64, unit: &str, target: &str) {
    let line = serde_json::json!({
        "goal": goal,
        "measure": measure,
        "value": value,
        "unit": unit,
        "target": target,
    });
    println!("BENCH-RESULT {line}");
}

/// The linux/arm64 build of both binaries that `tools/cross/build.sh`
/// makes (docs/platforms.md), and the Debian root it was built in.
pub struct Arm64 {
    /// `kubectl-fleet` and `fleet-operator` for aarch64-unknown-linux-gnu.
    pub bin_dir: PathBuf,
    /// The Debian sid root: arm64 libraries and their package database.
    pub root: PathBuf,
}

impl Arm64 {
    /// The `-L` prefix of `qemu-aarch64`: the cross glibc the binaries link.
    pub fn sysroot(&self) -> PathBuf {
        self.root.join("usr/aarch64-linux-gnu")
    }

    /// A command running arm64 binary `name` under `qemu-aarch64`.
    pub fn command(&self, name: &str) -> Command {
        let mut cmd = Command::new("qemu-aarch64");
        cmd.arg("-L")
            .arg(self.sysroot())
            .arg(self.bin_dir.join(name));
        cmd
    }
}

/// Set to 1 to let the arm64 tests print `skipped` on a machine without the
/// cross build (a quick local run); CI never sets it, so there they fail.
pub const SKIP_ARM64_ENV: &str = "FLEET_SKIP_ARM64";

/// The arm64 build: `FLEET_ARM64_BIN_DIR` and `FLEET_ARM64_ROOT` (which
/// tools/test.sh exports), else `tools/cross/build.sh`'s cache. Missing, it
/// panics with what to run, or returns None (printing `skipped`) under
/// `FLEET_SKIP_ARM64=1`.
pub fn arm64_build() -> Option<Arm64> {
    let cache = std::env::var_os("CROSS_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()))
                .join(".cache/kubectl-fleet-cross")
        });
    let env_path =
        |var: &str, default: PathBuf| std::env::var_os(var).map(PathBuf::from).unwrap_or(default);
    let build = Arm64 {
        bin_dir: env_path("FLEET_ARM64_BIN_DIR", cache.join("out/dev")),
        root: env_path("FLEET_ARM64_ROOT", cache.join("root")),
    };
    let qemu = Command::new("qemu-aarch64")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let mut missing = Vec::new();
    for b in ["kubectl-fleet", "fleet-operator"] {
        if !build.bin_dir.join(b).is_file() {
            missing.push(build.bin_dir.join(b).display().to_string());
        }
    }
    if !build.sysroot().join("lib/libc.so.6").exists() {
        missing.push(build.sysroot().display().to_string());
    }
    if !qemu {
        missing.push("qemu-aarch64 (apt-get install qemu-user)".into());
    }
    if missing.is_empty() {
        return Some(build);
    }
    if std::env::var(SKIP_ARM64_ENV).as_deref() == Ok("1") {
        println!("skipped: no arm64 build ({SKIP_ARM64_ENV}=1): missing {missing:?}");
        return None;
    }
    panic!(
        "the arm64 build is missing: {missing:?}. Run `bash tools/cross/build.sh` (tools/test.sh does), \
         or set {SKIP_ARM64_ENV}=1 to skip the arm64 tests in a quick local run"
    );
}
