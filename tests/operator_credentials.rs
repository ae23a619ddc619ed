//! An unattended edge and its hub credential, as a pod runs it: the hub
//! kubeconfig comes from a Secret on the member cluster, mounted read-only
//! by the kubelet (played here by the test, which copies the Secret to the
//! file as the kubelet's periodic sync does), and the edge runs as a
//! non-root user.
//!
//! Intervals: `heartbeatIntervalSeconds: 10` scaled by `--interval-scale
//! 0.2`, so the edge reports every 2 s. The hub caps tokens at 20 s (a test
//! knob below the real server's limits), so the edge renews every ~10 s.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{
    CONDITION_CREDENTIAL_EXPIRING, DEFAULT_KUBECONFIG_KEY, FederatedCluster, Phase,
};
use kubectl_fleet::fleet::rbac::FLEET_NAMESPACE;
use kubectl_fleet::operator::credential::TokenClaims;
use support::*;

const SCALE: f64 = 0.2;
/// The Secret `register --emit secret` prints and `install --role edge` mounts.
const HUB_KUBECONFIG_SECRET: &str = "fleet-hub-kubeconfig";

async fn phase(api: &Api<FederatedCluster>, site: &str) -> Option<Phase> {
    api.get(site).await.ok().and_then(|fc| fc.phase())
}

/// The hub kubeconfig held by the member Secret.
async fn secret_kubeconfig(member: &kube::Client) -> String {
    let api: Api<Secret> = Api::namespaced(member.clone(), FLEET_NAMESPACE);
    let s = api.get(HUB_KUBECONFIG_SECRET).await.unwrap();
    let bytes = &s.data.unwrap()[DEFAULT_KUBECONFIG_KEY].0;
    String::from_utf8(bytes.clone()).unwrap()
}

/// The `token:` of a kubeconfig's (only) user.
fn token_of(kubeconfig: &str) -> String {
    let v: serde_json::Value = serde_saphyr::from_str(kubeconfig).unwrap();
    v["users"][0]["user"]["token"].as_str().unwrap().to_owned()
}

fn expiry_of(kubeconfig: &str) -> jiff::Timestamp {
    TokenClaims::decode(&token_of(kubeconfig))
        .unwrap()
        .expires_at
        .unwrap()
}

/// What the kubelet does for a Secret volume: writes the Secret's key to
/// the file (atomically) with the volume's mode, owner root, group `gid`.
fn project(path: &Path, contents: &str, mode: u32, gid: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, contents).unwrap();
    std::os::unix::fs::chown(&tmp, Some(0), Some(gid)).unwrap();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode)).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

struct Site {
    _hub_sb: Sandbox,
    _member_sb: Sandbox,
    dir: TempDir,
    api: Api<FederatedCluster>,
    member: kube::Client,
    member_kc: PathBuf,
    mount: PathBuf,
    hub_ca: String,
    hub_admin: kube::Client,
    _hub: Proc,
}

/// A hub (operator running) with `site` registered through `kubectl fleet
/// register --emit secret`, that manifest applied on a member with the real
/// `kubectl`, and the Secret projected to `mount` (root-owned, `mode`,
/// group `gid`).
async fn site_with_secret(site: &str, token_cap: Option<Duration>, mode: u32, gid: u32) -> Site {
    let dir = TempDir::new(site);
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    // Minted before the cap: in a cluster the kubelet keeps a pod's token fresh.
    let operator_kc = hub_operator_kubeconfig(&hub_sb, &dir).await;
    if let Some(cap) = token_cap {
        hub_sb
            .controls()
            .set_min_token_expiration(Duration::from_secs(1));
        hub_sb.controls().set_max_token_expiration(Some(cap));
    }
    let manifest = dir.join("secret.yaml");
    fleet_register(&hub_kc, site, 10, &manifest, &["--emit", "secret"]);

    let member_sb = Sandbox::start();
    let admin_kc = dir.join("member-admin.kubeconfig");
    member_sb.write_admin_kubeconfig(&admin_kc).unwrap();
    Kubectl::new(&admin_kc)
        .args(["apply", "-f"])
        .arg(&manifest)
        .ok();
    let member_admin = admin(&member_sb).await;
    let edge_kc = edge_member_kubeconfig(&member_sb, &member_admin, HUB_KUBECONFIG_SECRET).await;
    let member_kc = dir.join("member-edge.kubeconfig");
    std::fs::write(&member_kc, edge_kc).unwrap();
    // The edge may run as another user: it must reach its files.
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&member_kc, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mount_dir = dir.join("etc-fleet-hub");
    std::fs::create_dir(&mount_dir).unwrap();
    let mount = mount_dir.join("kubeconfig");
    project(&mount, &secret_kubeconfig(&member_admin).await, mode, gid);

    let hub = Proc::spawn(
        "hub",
        &operator_bin(),
        &hub_args(&operator_kc, "hub", SCALE),
        dir.join("hub.log"),
    );
    Site {
        api: Api::all(admin(&hub_sb).await),
        hub_ca: hub_sb.ca_pem().to_owned(),
        hub_admin: admin(&hub_sb).await,
        _hub_sb: hub_sb,
        _member_sb: member_sb,
        dir,
        member: member_admin,
        member_kc,
        mount,
        _hub: hub,
    }
}

impl Site {
    fn edge_args(&self, site: &str) -> Vec<String> {
        let mut args = edge_args(site, &self.member_kc, &self.mount, SCALE);
        args.extend([
            "--hub-kubeconfig-secret".to_owned(),
            format!("{FLEET_NAMESPACE}/{HUB_KUBECONFIG_SECRET}"),
        ]);
        args
    }

    /// An edge process for `site` (as root), once its site is Connected.
    async fn connected_edge(&self, site: &str) -> Proc {
        let edge = Proc::spawn(
            "edge",
            &operator_bin(),
            &self.edge_args(site),
            self.log("edge"),
        );
        wait_until(Duration::from_secs(15), "Connected", || async {
            phase(&self.api, site).await == Some(Phase::Connected)
        })
        .await;
        edge
    }

    fn log(&self, name: &str) -> PathBuf {
        self.dir.join(&format!("{name}.log"))
    }

    async fn last_heartbeat(&self, site: &str) -> Option<jiff::Timestamp> {
        let st = self.api.get(site).await.ok()?.status?;
        st.last_heartbeat_time.map(|t| t.0)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewed_token_survives_a_restart_after_the_first_one_expired() {
    let s = site_with_secret("site-p", Some(Duration::from_secs(20)), 0o440, 0).await;
    let first = secret_kubeconfig(&s.member).await;
    let first_exp = expiry_of(&first);

    // The kubelet's periodic sync of the Secret volume.
    let (member, mount) = (s.member.clone(), s.mount.clone());
    let kubelet = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(3)).await;
            let now = secret_kubeconfig(&member).await;
            if std::fs::read_to_string(&mount).ok().as_deref() != Some(now.as_str()) {
                project(&mount, &now, 0o440, 0);
            }
        }
    });

    let mut edge = Proc::spawn(
        "edge",
        &operator_bin(),
        &s.edge_args("site-p"),
        s.log("edge-1"),
    );
    wait_until(Duration::from_secs(15), "Connected", || async {
        phase(&s.api, "site-p").await == Some(Phase::Connected)
    })
    .await;
    // The renewed token lands in the member Secret, and what the edge
    // reports is the expiry of that persisted credential.
    wait_until(
        Duration::from_secs(30),
        "a renewed token in the Secret",
        || async { token_of(&secret_kubeconfig(&s.member).await) != token_of(&first) },
    )
    .await;
    wait_until(
        Duration::from_secs(10),
        "the persisted expiry reported",
        || async {
            let held = expiry_of(&secret_kubeconfig(&s.member).await);
            let reported = s
                .api
                .get("site-p")
                .await
                .ok()
                .and_then(|fc| fc.status?.credential_expiration_time);
            reported.is_some_and(|r| r.0 == held)
        },
    )
    .await;
    // A 20 s token is far below the 7 d warning, but the edge renews it in
    // time: CredentialExpiring stays False.
    let fc = s.api.get("site-p").await.unwrap();
    let cond = fc
        .status
        .as_ref()
        .and_then(|st| st.condition(CONDITION_CREDENTIAL_EXPIRING))
        .cloned()
        .unwrap();
    assert_eq!(
        (cond.status.as_str(), cond.reason.as_str()),
        ("False", "RenewedByEdge"),
        "{cond:?}"
    );
    let log = edge.log_text();
    assert!(
        log.contains("stored the renewed token in the member Secret"),
        "{log}"
    );

    // Past the first token's expiry, then a crash.
    let past_first = first_exp + jiff::SignedDuration::from_secs(2);
    if let Ok(d) = Duration::try_from(past_first.duration_since(jiff::Timestamp::now())) {
        tokio::time::sleep(d).await;
    }
    assert_eq!(
        phase(&s.api, "site-p").await,
        Some(Phase::Connected),
        "{}",
        edge.log_text()
    );
    edge.kill();
    let killed_at = jiff::Timestamp::now();

    // Restarted, nobody acting: it reads the mount and reports again.
    let edge = Proc::spawn(
        "edge",
        &operator_bin(),
        &s.edge_args("site-p"),
        s.log("edge-2"),
    );
    wait_until(
        Duration::from_secs(15),
        "a report from the restarted edge",
        || async {
            s.last_heartbeat("site-p")
                .await
                .is_some_and(|t| t > killed_at)
        },
    )
    .await;
    // The hub may have judged the site Stale while nothing reported; the
    // restarted edge's reports bring it back.
    wait_until(Duration::from_secs(15), "Connected again", || async {
        phase(&s.api, "site-p").await == Some(Phase::Connected)
    })
    .await;
    let log = edge.log_text();
    assert!(!log.contains("hub rejected the site token"), "{log}");
    assert_ne!(
        token_of(&std::fs::read_to_string(&s.mount).unwrap()),
        token_of(&first),
        "the mount holds the renewed token"
    );
    kubelet.abort();
}

/// The kubelet's ownership of a Secret volume file (root, group fsGroup)
/// and the edge as a non-root user. `defaultMode: 0400` (owner-only) locks
/// it out, with the cause on the line; 0440 with the fsGroup works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_root_edge_reads_its_mounted_credential_through_the_fs_group() {
    if !require_root() {
        return;
    }
    const RUN_AS_USER: u32 = 65534;
    const FS_GROUP: u32 = 2000;
    let s = site_with_secret("site-u", None, 0o400, FS_GROUP).await;

    let mut locked = Proc::spawn_as(
        "edge",
        &operator_bin(),
        &s.edge_args("site-u"),
        s.log("edge-0400"),
        RUN_AS_USER,
        FS_GROUP,
    );
    let status = locked
        .child
        .as_mut()
        .unwrap()
        .wait()
        .expect("the edge exits");
    let log = locked.log_text();
    assert!(!status.success(), "{log}");
    let line = log
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("one error line:\n{log}"));
    assert!(line.contains("reading hub kubeconfig"), "{line}");
    assert!(line.contains("Permission denied"), "{line}");
    assert!(line.contains("fsGroup"), "{line}");

    let held = std::fs::read_to_string(&s.mount).unwrap();
    project(&s.mount, &held, 0o440, FS_GROUP);
    let edge = Proc::spawn_as(
        "edge",
        &operator_bin(),
        &s.edge_args("site-u"),
        s.log("edge-0440"),
        RUN_AS_USER,
        FS_GROUP,
    );
    wait_until(Duration::from_secs(15), "Connected", || async {
        phase(&s.api, "site-u").await == Some(Phase::Connected)
    })
    .await;
    let log = edge.log_text();
    assert!(!log.contains("WARN"), "{log}");
}

/// After `unregister` the edge says so, retries at a slow cadence instead
/// of once an interval, and is no longer ready (ready means reporting).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unregistered_site_backs_off_and_is_not_ready() {
    let s = site_with_secret("site-g", None, 0o440, 0).await;
    let edge = s.connected_edge("site-g").await;
    assert_eq!(probe(&edge.log_text(), "/readyz"), 200);

    fleet_cli(
        &s.dir.join("hub.kubeconfig"),
        &["unregister", "site-g", "--yes"],
    );
    let said = "the site was unregistered";
    wait_until(Duration::from_secs(30), "four failed retries", || async {
        edge.log_text().matches(said).count() >= 4
    })
    .await;
    let log = edge.log_text();
    let waits: Vec<u64> = log
        .lines()
        .filter(|l| l.contains(said))
        .filter_map(|l| l.split("retry_in=").nth(1))
        .filter_map(|w| w.split('s').next()?.parse().ok())
        .collect();
    // Doubling from 1 s: the fourth wait (8 s ± 20 %) is beyond the 2 s
    // heartbeat interval that bounds the retry of a transient failure.
    assert!(waits.len() >= 4 && waits[3] > 2, "{waits:?}\n{log}");
    assert!(!log.contains("Status {"), "no Debug dumps: {log}");
    assert_eq!(probe(&log, "/readyz"), 503);
}

/// A hub kubeconfig whose CA does not match the hub: the edge says that,
/// in one line, not "unreachable", and no library line repeats it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_ca_is_reported_as_such_in_one_line() {
    use base64::Engine as _;
    let s = site_with_secret("site-w", None, 0o440, 0).await;
    let other = Sandbox::start();
    let b64 = base64::engine::general_purpose::STANDARD;
    let text = std::fs::read_to_string(&s.mount).unwrap();
    let right = b64.encode(s.hub_ca.as_bytes());
    assert!(text.contains(&right));
    let wrong = text.replace(&right, &b64.encode(other.ca_pem().as_bytes()));
    project(&s.mount, &wrong, 0o440, 0);
    let edge = Proc::spawn(
        "edge",
        &operator_bin(),
        &s.edge_args("site-w"),
        s.log("edge"),
    );
    let said = "does not trust";
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while edge.log_text().matches(said).count() < 2 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let log = edge.log_text();
    assert!(
        log.matches(said).count() >= 2,
        "two failed attempts:\n{log}"
    );
    assert!(!log.contains("unreachable"), "{log}");
    assert!(!log.contains("ERROR"), "one line per cause: {log}");
    let line = log.lines().find(|l| l.contains(said)).unwrap();
    assert!(line.contains("cause=\"hub-tls\""), "{line}");
}

/// The fleet CRDs deleted under a running edge: one readable line naming
/// the missing CRD, not "not registered" and not a `Debug` dump.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleted_crds_are_named_in_one_readable_line() {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let s = site_with_secret("site-d", None, 0o440, 0).await;
    let edge = s.connected_edge("site-d").await;
    let crds: Api<CustomResourceDefinition> = Api::all(s.hub_admin.clone());
    crds.delete(
        "federatedclusters.federation.kubectl-fleet.dev",
        &Default::default(),
    )
    .await
    .unwrap();
    // Taken for a starting API server for a minute (`not-served-yet`; the
    // slow `crd-missing` after it: tests/edge_lease.rs), named and with
    // its fix from the first line.
    let said =
        "the hub does not serve federatedclusters.federation.kubectl-fleet.dev (404 for the API";
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while !edge.log_text().contains(said) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let log = edge.log_text();
    assert!(log.contains(said), "{log}");
    assert!(log.contains("kubectl fleet install --apply"), "{log}");
    assert!(!log.contains("no longer registered"), "{log}");
    assert!(!log.contains("Status {"), "{log}");
}

/// A site registered with a token longer than a site may mint itself
/// (`register --token-ttl 365d`, an administrator's choice): at half its
/// lifetime the edge renews it for the longest the hub's admission policy
/// allows a site, 90 days, instead of being refused for asking a year.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edge_renews_a_long_token_within_what_a_site_may_mint_itself() {
    use kubectl_fleet::fleet::rbac::MAX_SITE_TOKEN_TTL;
    use kubectl_fleet::operator::edge::{Edge, EdgeConfig};
    let dir = TempDir::new("long-token");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let member_sb = Sandbox::start();
    let site_kc = dir.join("site-a.kubeconfig");
    fleet_register(&hub_kc, "site-a", 30, &site_kc, &["--token-ttl", "365d"]);
    let first = std::fs::read_to_string(&site_kc).unwrap();
    let lifetime = |kc: &str| {
        TokenClaims::decode(&token_of(kc))
            .unwrap()
            .lifetime()
            .unwrap()
    };
    assert_eq!(lifetime(&first), Duration::from_secs(365 * 86_400));
    // The edge's clock 200 days on: past half of the year.
    let later = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(200 * 24);
    let config = EdgeConfig {
        site: "site-a".to_owned(),
        hub_kubeconfig: site_kc.clone(),
        hub_kubeconfig_secret: None,
        journal: None,
        clock_offset: jiff::SignedDuration::ZERO,
        interval_scale: 1.0,
        auto_rotate: true,
        version: env!("CARGO_PKG_VERSION").to_owned(),
    };
    let mut edge =
        Edge::new(config, admin(&member_sb).await).with_clock(std::sync::Arc::new(move || later));
    let tick = edge.tick().await;
    assert!(tick.error.is_none(), "{:?}", tick.error);
    let renewed = std::fs::read_to_string(&site_kc).unwrap();
    assert_ne!(token_of(&renewed), token_of(&first), "renewed");
    assert_eq!(lifetime(&renewed), MAX_SITE_TOKEN_TTL);
}
