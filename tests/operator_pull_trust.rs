//! Pull mode you can trust and that cannot be turned against the hub
//! (docs/pull-mode.md), through real processes: a hub `fleet-operator`,
//! `kubectl fleet` and member kube-sandboxes (or, where a member must
//! misbehave, a small HTTPS server in this file).
//!
//! - Each Pull site has its own identity on its member: unregistering one
//!   of two sites on one member leaves the other Connected, and a second
//!   hub can neither take over nor delete it.
//! - A failed probe never leaves a site green; a 401 says a command that
//!   runs.
//! - The hub renews a site's member token before it expires; one it cannot
//!   renew is warned, and table, wide and JSON agree.
//! - Metadata, refused and proxied addresses, a Secret labelled for another
//!   site and answers that are not the Kubernetes API are refused or named
//!   by class only.
//! - A member that answers 100 MB leaves the hub's (and an edge's) memory
//!   bounded.
//!
//! Intervals: `heartbeatIntervalSeconds: 10` scaled by the hidden
//! `--interval-scale 0.3`, so I = 3 s; `--probe-timeout 4s`. Members live on
//! 127.0.0.1, so every hub here allows loopback with `--pull-allow-cidr`.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::watcher;
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{
    CONDITION_CONNECTED, CONDITION_CREDENTIAL_EXPIRING, FederatedCluster, FederatedClusterSpec,
    Mode, Phase, SecretKeyRef,
};
use kubectl_fleet::fleet::rbac;
use support::*;

const WAIT: Duration = CONDITION_WAIT;

async fn wait_phase(api: &Api<FederatedCluster>, site: &str, phase: Phase) {
    wait_until(WAIT, &format!("{site} {phase:?}"), || async {
        api.get(site).await.unwrap().phase() == Some(phase)
    })
    .await;
}

/// A member sandbox with one node of 2 GPUs (2 allocatable).
async fn member(dir: &TempDir, name: &str) -> (Sandbox, PathBuf) {
    member_sandbox(dir, name, (2, 2)).await
}

/// `kubectl-fleet --kubeconfig HUB ARGS…` that may fail: (success, stderr).
fn fleet_try(hub_kc: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(cli_bin())
        .arg("--kubeconfig")
        .arg(hub_kc)
        .args(args)
        .env("NO_COLOR", "1")
        .env("KUBECACHEDIR", hub_kc.parent().unwrap().join("kube-cache"))
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A hub operator with I = 3 s, a 4 s probe timeout, loopback members
/// allowed, and `extra` flags.
fn start_hub(hub_kc: &Path, dir: &TempDir, name: &str, extra: &[&str]) -> Proc {
    let mut args = hub_args(hub_kc, name, 0.3);
    args.extend(
        ["--probe-timeout", "4s", "--pull-allow-cidr", "127.0.0.0/8"]
            .iter()
            .chain(extra)
            .map(|s| (*s).to_owned()),
    );
    Proc::spawn(
        name,
        &operator_bin(),
        &args,
        dir.join(&format!("{name}.log")),
    )
}

fn pull_secret_text(secret: &Secret) -> String {
    String::from_utf8(secret.data.as_ref().unwrap()["kubeconfig"].0.clone()).unwrap()
}

/// The token of the (only) user of a kubeconfig.
fn token_of(kubeconfig: &str) -> String {
    let doc: serde_json::Value = serde_saphyr::from_str(kubeconfig).unwrap();
    doc["users"][0]["user"]["token"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `lastHeartbeatTime` of a site, in seconds.
async fn heartbeat(api: &Api<FederatedCluster>, site: &str) -> Option<i64> {
    api.get(site)
        .await
        .ok()?
        .status?
        .last_heartbeat_time
        .map(|t| t.0.as_second())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pull_sites_on_one_member_keep_their_own_identities() {
    let dir = TempDir::new("pull-identity");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let hub = admin(&hub_sb).await;
    let api: Api<FederatedCluster> = Api::all(hub.clone());
    let (member_sb, member_kc) = member(&dir, "shared").await;
    let member_admin = admin(&member_sb).await;
    let member_accounts: Api<ServiceAccount> =
        Api::namespaced(member_admin.clone(), rbac::FLEET_NAMESPACE);

    register_pull(&hub_kc, "pull-1", &member_kc, &[]);
    register_pull(&hub_kc, "pull-2", &member_kc, &[]);
    let _hub = start_hub(&hub_kc, &dir, "hub-1", &[]);
    for site in ["pull-1", "pull-2"] {
        wait_connected(&api, site, "True", "ProbeSucceeded").await;
        wait_phase(&api, site, Phase::Connected).await;
    }
    // Two identities on the member, each labelled with its site and hub.
    for site in ["pull-1", "pull-2"] {
        let sa = member_accounts
            .get(&rbac::pull_identity_name(site))
            .await
            .unwrap();
        let labels = sa.metadata.labels.unwrap();
        assert_eq!(labels[rbac::SITE_LABEL], site);
        assert!(labels.contains_key(rbac::HUB_LABEL), "{labels:?}");
    }

    // A second hub cannot take pull-2's identity over, nor delete it.
    let other_sb = Sandbox::start();
    let other_dir = TempDir::new("pull-identity-other");
    let other_kc = installed_hub(&other_sb, &other_dir);
    let member_arg = member_kc.display().to_string();
    let (ok, err) = fleet_try(
        &other_kc,
        &[
            "register",
            "pull-2",
            "--pull",
            "--member-kubeconfig",
            &member_arg,
        ],
    );
    assert!(!ok, "a second hub registering pull-2 on the same member");
    assert!(err.contains("another hub"), "{err}");
    let (ok, err) = fleet_try(
        &other_kc,
        &[
            "unregister",
            "pull-2",
            "--yes",
            "--member-kubeconfig",
            &member_arg,
        ],
    );
    assert!(
        !ok,
        "a second hub unregistering pull-2 with the member kubeconfig"
    );
    assert!(err.contains("another hub"), "{err}");
    assert!(
        member_accounts
            .get_opt(&rbac::pull_identity_name("pull-2"))
            .await
            .unwrap()
            .is_some()
    );

    // Unregistering pull-1 removes its identity only.
    let out = fleet_cli(
        &hub_kc,
        &[
            "unregister",
            "pull-1",
            "--yes",
            "--member-kubeconfig",
            &member_arg,
        ],
    );
    assert!(
        out.contains("member: ServiceAccount fleet-system/fleet-pull-pull-1 deleted"),
        "{out}"
    );
    assert!(!out.contains("pull-2"), "{out}");

    // pull-2 stays Connected over the next three probes.
    let mut last = heartbeat(&api, "pull-2").await.unwrap();
    let mut probes = 0;
    let start = std::time::Instant::now();
    while probes < 3 {
        let site = api.get("pull-2").await.unwrap();
        let (status, reason, _) = condition(&api, "pull-2", CONDITION_CONNECTED)
            .await
            .unwrap();
        assert_eq!(
            (status.as_str(), reason.as_str(), site.phase()),
            ("True", "ProbeSucceeded", Some(Phase::Connected)),
            "pull-2 after pull-1 was unregistered"
        );
        let now = heartbeat(&api, "pull-2").await.unwrap();
        if now != last {
            probes += 1;
            last = now;
        }
        assert!(start.elapsed() < WAIT, "pull-2 was not probed three times");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Revoke pull-2: from the first failed probe on it is never shown
    // Connected, and the reason says a command that runs.
    let mut versions = Box::pin(watcher(
        api.clone(),
        watcher::Config::default().fields("metadata.name=pull-2"),
    ));
    member_accounts
        .delete(
            &rbac::pull_identity_name("pull-2"),
            &DeleteParams::default(),
        )
        .await
        .unwrap();
    let watched = tokio::time::timeout(WAIT, async {
        while let Some(event) = versions.next().await {
            let Ok(watcher::Event::Apply(site)) = event else {
                continue;
            };
            if site.metadata.name.as_deref() != Some("pull-2") {
                continue;
            }
            let connected = site
                .status
                .as_ref()
                .and_then(|s| s.condition(CONDITION_CONNECTED))
                .cloned();
            if let Some(c) = connected.filter(|c| c.status == "False") {
                assert_ne!(
                    site.phase(),
                    Some(Phase::Connected),
                    "Connected with {}",
                    c.reason
                );
                if c.reason == "Unauthorized" {
                    return c.message;
                }
            }
        }
        panic!("the watch ended");
    })
    .await
    .expect("pull-2 turned Unauthorized");
    assert!(
        watched.contains("kubectl fleet register pull-2 --pull --member-kubeconfig FILE"),
        "{watched}"
    );
    let wide = fleet_cli(&hub_kc, &["status", "-o", "wide", "pull-2"]);
    let row = wide.lines().find(|l| l.starts_with("pull-2")).unwrap();
    assert!(row.contains("Stale"), "{wide}");
    assert!(row.trim_end().ends_with("Unauthorized"), "{wide}");

    // Without the member kubeconfig, unregister says what stays there.
    let out = fleet_cli(&hub_kc, &["unregister", "pull-2", "--yes"]);
    assert!(
        out.contains("kubectl fleet unregister pull-2 --member-kubeconfig FILE"),
        "{out}"
    );
    drop(other_sb);
}

/// The wide table's `column` value in the row of `site`.
fn wide_column(wide: &str, site: &str, column: &str) -> String {
    Table::find(wide, "NAME ").cell(site, column).to_owned()
}

/// Pull sites say only what is so: `RemediationCapable` is `NotRequested`
/// for a site without the `remediation` capability (and no access review
/// is sent for it), a revoked site's credential is shown rejected rather
/// than valid for weeks, and no edge is counted for Pull sites (none runs).
/// Each report names its member by the kube-system namespace UID.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pull_sites_claim_no_remediation_check_no_valid_revoked_token_and_no_edge() {
    let dir = TempDir::new("pull-claims");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let hub = admin(&hub_sb).await;
    let api: Api<FederatedCluster> = Api::all(hub.clone());
    let (member_sb, member_kc) = member(&dir, "m").await;
    register_pull(&hub_kc, "watched", &member_kc, &[]);
    register_pull(
        &hub_kc,
        "fixable",
        &member_kc,
        &["--capability", "monitoring", "--capability", "remediation"],
    );
    let _hub_proc = start_hub(&hub_kc, &dir, "hub", &[]);
    wait_connected(&api, "watched", "True", "ProbeSucceeded").await;
    wait_connected(&api, "fixable", "True", "ProbeSucceeded").await;
    let m = wait_condition(
        &api,
        "watched",
        kubectl_fleet::api::CONDITION_REMEDIATION_CAPABLE,
        "False",
        "NotRequested",
    )
    .await;
    assert!(m.contains("capabilities do not include remediation"), "{m}");
    let m = wait_condition(
        &api,
        "fixable",
        kubectl_fleet::api::CONDITION_REMEDIATION_CAPABLE,
        "False",
        "AccessDenied",
    )
    .await;
    assert!(m.contains("delete pods"), "{m}");
    // No access review is sent for the site that did not ask.
    let member_admin = admin(&member_sb).await;
    let reviews = member_sb
        .controls()
        .request_log()
        .iter()
        .filter(|r| r.path.ends_with("selfsubjectaccessreviews"))
        .filter(|r| r.user.ends_with(":fleet-pull-watched"))
        .count();
    assert_eq!(reviews, 0, "watched was not asked about write access");
    wait_condition(
        &api,
        "watched",
        CONDITION_CREDENTIAL_EXPIRING,
        "False",
        "RenewedByHub",
    )
    .await;
    // The member named by its kube-system namespace UID.
    let kube_system = Api::<k8s_openapi::api::core::v1::Namespace>::all(member_admin.clone())
        .get("kube-system")
        .await
        .unwrap()
        .metadata
        .uid;
    assert!(kube_system.is_some());
    let status = api.get("watched").await.unwrap().status.unwrap();
    assert_eq!(status.member, kube_system);
    // Pull sites run no edge: no `Edges:` line, no site for the prober's
    // version.
    let table = fleet_cli_stdout(&hub_kc, &["status"]);
    assert!(!table.contains("Edges:"), "{table}");
    let prober_version = status.observed_version.unwrap();
    let by_version = fleet_cli_stdout(
        &hub_kc,
        &["status", "--version", &prober_version, "-o", "name"],
    );
    assert_eq!(by_version, "", "no edge runs version {prober_version}");
    let summary = fleet_cli_stdout(&hub_kc, &["status", "-o", "json"]);
    let summary: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(
        summary["summary"]["edgeVersions"],
        serde_json::json!({}),
        "{summary}"
    );

    // Revoked on the member: the credential it carries is no longer valid.
    let before = wide_column(
        &fleet_cli_stdout(&hub_kc, &["status", "-o", "wide"]),
        "watched",
        "TOKEN EXPIRES",
    );
    assert_ne!(before, "rejected");
    Api::<ServiceAccount>::namespaced(member_admin, rbac::FLEET_NAMESPACE)
        .delete(
            &rbac::pull_identity_name("watched"),
            &DeleteParams::default(),
        )
        .await
        .unwrap();
    wait_connected(&api, "watched", "False", "Unauthorized").await;
    let m = wait_condition(
        &api,
        "watched",
        CONDITION_CREDENTIAL_EXPIRING,
        "True",
        "Rejected",
    )
    .await;
    assert!(
        m.contains("kubectl fleet register watched --pull --member-kubeconfig FILE"),
        "{m}"
    );
    let wide = fleet_cli_stdout(&hub_kc, &["status", "-o", "wide"]);
    assert_eq!(
        wide_column(&wide, "watched", "TOKEN EXPIRES"),
        "rejected",
        "{wide}"
    );
    assert_ne!(
        wide_column(&wide, "fixable", "TOKEN EXPIRES"),
        "rejected",
        "{wide}"
    );
    let described = fleet_cli_stdout(&hub_kc, &["describe", "watched"]);
    assert!(
        described.contains("Credential Expires: rejected by the member"),
        "{described}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hub_renews_a_pull_token_and_warns_of_one_it_cannot_renew() {
    let dir = TempDir::new("pull-renew");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let hub = admin(&hub_sb).await;
    let api: Api<FederatedCluster> = Api::all(hub.clone());
    let secrets: Api<Secret> = Api::namespaced(hub.clone(), rbac::FLEET_NAMESPACE);
    let (member_sb, member_kc) = member(&dir, "short").await;
    // The member grants 24 s tokens, whatever is asked.
    member_sb
        .controls()
        .set_max_token_expiration(Some(Duration::from_secs(24)));
    register_pull(&hub_kc, "renew", &member_kc, &[]);
    // The same credential stored as given for another site: it is not
    // that site's own identity, so the hub cannot renew it.
    let first = pull_secret_text(&secrets.get("fleet-pull-renew").await.unwrap());
    let as_is_kc = dir.join("as-is.kubeconfig");
    write_private(&as_is_kc, &first);
    register_pull(&hub_kc, "as-is", &as_is_kc, &["--store-kubeconfig-as-is"]);
    let hub_proc = start_hub(&hub_kc, &dir, "hub", &["--credential-warning", "1h"]);

    wait_connected(&api, "renew", "True", "ProbeSucceeded").await;
    let m = wait_condition(
        &api,
        "renew",
        CONDITION_CREDENTIAL_EXPIRING,
        "False",
        "RenewedByHub",
    )
    .await;
    assert!(m.contains("the hub renews"), "{m}");
    let m = wait_condition(
        &api,
        "as-is",
        CONDITION_CREDENTIAL_EXPIRING,
        "True",
        "ExpiresSoon",
    )
    .await;
    assert!(
        m.contains("kubectl fleet register as-is --pull --member-kubeconfig FILE"),
        "{m}"
    );

    // Over three lifetimes of its token the renewed site never fails a
    // probe, and its Secret holds a new token each time.
    let mut tokens = vec![token_of(&first)];
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_secs(72) {
        let (status, reason, message) =
            condition(&api, "renew", CONDITION_CONNECTED).await.unwrap();
        assert_eq!(
            (status.as_str(), reason.as_str()),
            ("True", "ProbeSucceeded"),
            "renew: {message}"
        );
        assert_eq!(
            api.get("renew").await.unwrap().phase(),
            Some(Phase::Connected)
        );
        let token = token_of(&pull_secret_text(
            &secrets.get("fleet-pull-renew").await.unwrap(),
        ));
        if tokens.last() != Some(&token) {
            tokens.push(token);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(
        tokens.len() >= 4,
        "{} renewals in 72 s of 24 s tokens:\n{}",
        tokens.len() - 1,
        hub_proc.log_text()
    );
    let status = api.get("renew").await.unwrap().status.unwrap();
    let expires = status.credential_expiration_time.unwrap().0;
    assert!(status.credential_renewal_time.unwrap().0 < expires);
    assert!(
        expires > jiff::Timestamp::now(),
        "the reported expiry is the current token's"
    );

    // The token the hub cannot renew expires: said, and never green.
    wait_connected(&api, "as-is", "False", "Unauthorized").await;
    wait_condition(
        &api,
        "as-is",
        CONDITION_CREDENTIAL_EXPIRING,
        "True",
        "Expired",
    )
    .await;
    assert_ne!(
        api.get("as-is").await.unwrap().phase(),
        Some(Phase::Connected)
    );

    // Table, wide and JSON agree on the Pull token.
    let wide = fleet_cli(&hub_kc, &["status", "-o", "wide"]);
    let renew_expires = wide_column(&wide, "renew", "TOKEN EXPIRES");
    assert!(renew_expires.ends_with('s'), "{wide}");
    assert_eq!(
        wide_column(&wide, "as-is", "TOKEN EXPIRES"),
        "expired",
        "{wide}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&fleet_cli_stdout(&hub_kc, &["status", "-o", "json"])).unwrap();
    let site = json["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "renew")
        .unwrap()
        .clone();
    assert!(site["credentialExpirationTime"].is_string(), "{site:#}");
}

/// Stdout of `kubectl-fleet --kubeconfig HUB ARGS…` (panics on failure).
fn fleet_cli_stdout(hub_kc: &Path, args: &[&str]) -> String {
    let out = Command::new(cli_bin())
        .arg("--kubeconfig")
        .arg(hub_kc)
        .args(args)
        .env("NO_COLOR", "1")
        .env("KUBECACHEDIR", hub_kc.parent().unwrap().join("kube-cache"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A kubeconfig for `server` with `token`, trusting `ca_pem` (or skipping
/// verification), with `cluster_extra` lines in its cluster.
fn kubeconfig(server: &str, ca_pem: Option<&str>, token: &str, cluster_extra: &str) -> String {
    use base64::Engine as _;
    let trust = match ca_pem {
        Some(ca) => format!(
            "    certificate-authority-data: {}\n",
            base64::engine::general_purpose::STANDARD.encode(ca)
        ),
        None => "    insecure-skip-tls-verify: true\n".to_owned(),
    };
    format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: m\nclusters:\n- name: m\n  cluster:\n    server: {server}\n{trust}{cluster_extra}contexts:\n- name: m\n  context: {{cluster: m, user: u}}\nusers:\n- name: u\n  user:\n    token: {token}\n"
    )
}

/// How [`FakeMember`] answers.
#[derive(Clone, Copy, Debug)]
enum Answer {
    /// Every request: an HTML page with this status.
    Html(u16),
    /// `/version` as a Kubernetes API server would; anything else a JSON
    /// list that goes on for 100 MB, with no length announced.
    Endless,
    /// `/version` as a Kubernetes API server would; a list in pages of 50
    /// items (as many as asked for) of 60 KiB each, with a `continue`
    /// token, 100 MB in all.
    Pages,
}

const HUNDRED_MB: u64 = 100 << 20;

/// A small HTTPS server (TLS on 127.0.0.1) playing a member that misbehaves.
struct FakeMember {
    url: String,
    ca_pem: String,
    /// Requests answered.
    requests: Arc<AtomicU64>,
    /// The most bytes written for one answer before the client went away.
    largest_answer: Arc<AtomicU64>,
    /// The deepest page asked for (`continue` token) of [`Answer::Pages`].
    deepest_page: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeMember {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn fake_member(answer: Answer) -> FakeMember {
    use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
    let generated =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        generated.signing_key.serialize_der(),
    ));
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![generated.cert.der().clone()], key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    let requests = Arc::new(AtomicU64::new(0));
    let largest_answer = Arc::new(AtomicU64::new(0));
    let deepest_page = Arc::new(AtomicU64::new(0));
    let counters = (
        requests.clone(),
        largest_answer.clone(),
        deepest_page.clone(),
    );
    let task = tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, counters) = (acceptor.clone(), counters.clone());
            tokio::spawn(async move {
                if let Ok(tls) = acceptor.accept(tcp).await {
                    serve(tls, answer, counters).await;
                }
            });
        }
    });
    FakeMember {
        url,
        ca_pem: generated.cert.pem(),
        requests,
        largest_answer,
        deepest_page,
        task,
    }
}

async fn serve<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    mut conn: S,
    answer: Answer,
    (requests, largest, deepest): (Arc<AtomicU64>, Arc<AtomicU64>, Arc<AtomicU64>),
) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 16 << 10];
    loop {
        // One request head, and its body by Content-Length.
        let head = loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                let length: usize = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse().unwrap_or(0))
                    })
                    .unwrap_or(0);
                if buf.len() >= end + 4 + length {
                    buf.drain(..end + 4 + length);
                    break head;
                }
            }
            match conn.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        requests.fetch_add(1, Ordering::Relaxed);
        let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
        let respond = |code: u16, kind: &str, body: &str| {
            format!(
                "HTTP/1.1 {code} X\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
        };
        let version = r#"{"major":"1","minor":"33","gitVersion":"v1.33.0"}"#;
        let written = match answer {
            Answer::Html(code) => {
                let page = "<html><body><h1>Not Found</h1>instance metadata service</body></html>";
                conn.write_all(respond(code, "text/html", page).as_bytes())
                    .await
                    .map(|()| page.len() as u64)
            }
            _ if path == "/version" => conn
                .write_all(respond(200, "application/json", version).as_bytes())
                .await
                .map(|()| version.len() as u64),
            Answer::Endless => {
                let item = r#"{"metadata":{"name":"n"}},"#.repeat(2048);
                let mut sent = 0u64;
                let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"kind\":\"List\",\"items\":[";
                let mut result = conn.write_all(head.as_bytes()).await;
                while result.is_ok() && sent < HUNDRED_MB {
                    result = conn.write_all(item.as_bytes()).await;
                    sent += item.len() as u64;
                }
                largest.fetch_max(sent, Ordering::Relaxed);
                return;
            }
            Answer::Pages => {
                let page: u64 = path
                    .split("continue=")
                    .nth(1)
                    .and_then(|c| c.split('&').next())
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(0);
                deepest.fetch_max(page, Ordering::Relaxed);
                let name = "x".repeat(60 << 10);
                let items: Vec<String> = (0..50)
                    .map(|i| format!(r#"{{"metadata":{{"name":"{name}{i}"}}}}"#))
                    .collect();
                let more = (page + 1) * 50 * (60 << 10) < HUNDRED_MB;
                let next = if more {
                    format!(r#","continue":"{}""#, page + 1)
                } else {
                    String::new()
                };
                let body = format!(
                    r#"{{"kind":"List","metadata":{{"resourceVersion":"1"{next}}},"items":[{}]}}"#,
                    items.join(",")
                );
                conn.write_all(respond(200, "application/json", &body).as_bytes())
                    .await
                    .map(|()| body.len() as u64)
            }
        };
        match written {
            Ok(n) => {
                largest.fetch_max(n, Ordering::Relaxed);
            }
            Err(_) => return,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hub_connects_only_where_it_may_and_names_what_answered_by_class_only() {
    let dir = TempDir::new("pull-refuse");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let hub = admin(&hub_sb).await;
    let api: Api<FederatedCluster> = Api::all(hub.clone());
    let (member_sb, member_kc) = member(&dir, "real").await;
    let port = member_sb.url().rsplit(':').next().unwrap().to_owned();
    let html = fake_member(Answer::Html(200)).await;
    let html404 = fake_member(Answer::Html(404)).await;
    let admin_token = member_sb.admin_token().to_owned();
    let member_ca = {
        let kc = member_sb.admin_kubeconfig();
        let b64 = kc
            .lines()
            .find_map(|l| l.trim().strip_prefix("certificate-authority-data: "))
            .unwrap()
            .to_owned();
        use base64::Engine as _;
        String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap(),
        )
        .unwrap()
    };
    let as_is = |site: &str, text: String| {
        let path = dir.join(&format!("{site}.kubeconfig"));
        write_private(&path, &text);
        register_pull(&hub_kc, site, &path, &["--store-kubeconfig-as-is"]);
    };
    as_is(
        "metadata-ip",
        kubeconfig("https://169.254.169.254", None, "t", ""),
    );
    as_is(
        "metadata-name",
        kubeconfig("https://metadata.google.internal", None, "t", ""),
    );
    as_is(
        "denied",
        kubeconfig(&format!("https://127.0.0.2:{port}"), None, &admin_token, ""),
    );
    as_is(
        "ipv6-loopback",
        kubeconfig(&format!("https://[::1]:{port}"), None, &admin_token, ""),
    );
    as_is(
        "proxied",
        kubeconfig(
            &member_sb.url(),
            Some(&member_ca),
            &admin_token,
            "    proxy-url: http://127.0.0.1:3128\n",
        ),
    );
    as_is("html", kubeconfig(&html.url, Some(&html.ca_pem), "t", ""));
    // The metadata endpoint written as NAT64 and as 6to4 addresses.
    as_is(
        "nat64-metadata",
        kubeconfig("https://[64:ff9b::a9fe:a9fe]", None, "t", ""),
    );
    as_is(
        "6to4-metadata",
        kubeconfig("https://[2002:a9fe:a9fe::1]", None, "t", ""),
    );
    // A server URL with a password in it: shown nowhere.
    let with_userinfo = html.url.replacen("https://", "https://admin:s3cret-pw@", 1);
    let printed = register_pull(
        &hub_kc,
        "userinfo",
        &{
            let path = dir.join("userinfo.kubeconfig");
            write_private(
                &path,
                &kubeconfig(&with_userinfo, Some(&html.ca_pem), "t", ""),
            );
            path
        },
        &["--store-kubeconfig-as-is"],
    );
    assert!(!printed.contains("s3cret-pw"), "{printed}");
    as_is(
        "html-404",
        kubeconfig(&html404.url, Some(&html404.ca_pem), "t", ""),
    );
    // A site of its own, and one that names the first one's Secret.
    register_pull(&hub_kc, "owner", &member_kc, &[]);
    let thief = FederatedClusterSpec {
        mode: Mode::Pull,
        heartbeat_interval_seconds: 10,
        kubeconfig_secret_ref: Some(SecretKeyRef {
            namespace: rbac::FLEET_NAMESPACE.into(),
            name: rbac::pull_secret_name("owner"),
            key: "kubeconfig".into(),
        }),
        ..FederatedClusterSpec::default()
    };
    api.create(
        &PostParams::default(),
        &FederatedCluster::new("thief", thief),
    )
    .await
    .unwrap();

    let mut hub_proc = start_hub(&hub_kc, &dir, "hub", &["--pull-deny-cidr", "127.0.0.2/32"]);
    wait_connected(&api, "owner", "True", "ProbeSucceeded").await;
    let m = wait_connected(&api, "metadata-ip", "False", "AddressRefused").await;
    assert!(m.contains("cloud metadata endpoint"), "{m}");
    let m = wait_connected(&api, "metadata-name", "False", "AddressRefused").await;
    assert!(m.contains("cloud metadata endpoint"), "{m}");
    let m = wait_connected(&api, "denied", "False", "AddressRefused").await;
    assert!(m.contains("--pull-deny-cidr"), "{m}");
    let m = wait_connected(&api, "ipv6-loopback", "False", "AddressRefused").await;
    assert!(m.contains("loopback"), "{m}");
    let m = wait_connected(&api, "proxied", "False", "InvalidKubeconfig").await;
    assert!(m.contains("proxy-url"), "{m}");
    let m = wait_connected(&api, "thief", "False", "SecretLabelMismatch").await;
    assert!(
        m.contains("labelled federation.kubectl-fleet.dev/site=owner, not thief"),
        "{m}"
    );
    let m = wait_connected(&api, "nat64-metadata", "False", "AddressRefused").await;
    assert!(m.contains("cloud metadata endpoint"), "{m}");
    let m = wait_connected(&api, "6to4-metadata", "False", "AddressRefused").await;
    assert!(m.contains("cloud metadata endpoint"), "{m}");
    let m = wait_connected(&api, "userinfo", "False", "NotKubernetes").await;
    assert!(!m.contains("s3cret-pw") && !m.contains("admin:"), "{m}");
    assert!(m.contains(&html.url), "the server is still named: {m}");
    let described = fleet_cli(&hub_kc, &["describe", "userinfo"]);
    assert!(!described.contains("s3cret-pw"), "{described}");
    assert!(described.contains(&html.url), "{described}");
    for site in ["html", "html-404"] {
        let m = wait_connected(&api, site, "False", "NotKubernetes").await;
        assert!(
            m.contains("did not answer as a Kubernetes API server"),
            "{m}"
        );
        for leak in ["<html", "Not Found", "metadata service", "answered"] {
            assert!(!m.contains(leak), "{site}: {m}");
        }
    }
    assert!(
        html.requests.load(Ordering::Relaxed) > 0,
        "the HTML server was asked"
    );
    for site in ["metadata-ip", "denied", "thief", "html"] {
        assert_eq!(
            api.get(site).await.unwrap().phase(),
            Some(Phase::Pending),
            "{site}: never probed successfully"
        );
    }
    // The owner's site is untouched by the site that named its Secret.
    assert_eq!(
        api.get("owner").await.unwrap().phase(),
        Some(Phase::Connected)
    );
    hub_proc.terminate();
    let log = hub_proc.log_text();
    assert!(
        !log.contains(&admin_token),
        "a member token reached the hub log"
    );
    assert!(
        !log.contains("s3cret-pw"),
        "a member URL's password reached the hub log"
    );
    // Nor any Event the hub recorded.
    let events: Api<k8s_openapi::api::events::v1::Event> = Api::all(hub.clone());
    let events = events.list(&Default::default()).await.unwrap();
    assert!(
        !serde_json::to_string(&events.items)
            .unwrap()
            .contains("s3cret-pw"),
        "a member URL's password in an Event"
    );
}

/// Peak resident set size of process `pid` in KiB (`VmHWM`).
fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// The hub's peak RSS stays below this while two members each answer 100 MB
/// (one answer without end, and 100 MB in pages of 3 MiB): 32 MiB for the
/// process itself (it peaks near 27 MiB without Pull sites) plus what each
/// of the two probes may hold, its `--probe-max-bytes` (32 MiB) and one
/// answer being read (at most 8 MiB): docs/pull-mode.md#what-a-probe-may-cost-the-hub.
/// Reading one 100 MB answer whole, as the hub did before, takes it past
/// 127 MiB.
const HUB_PEAK_BOUND_KIB: u64 = (32 + 2 * (32 + 8)) << 10;
/// An edge's peak RSS while the hub it dials answers 100 MB: the process
/// and one answer of at most 8 MiB being read (33 MiB measured), with room;
/// reading the answer whole would take it past 100 MiB.
const EDGE_PEAK_BOUND_KIB: u64 = 64 << 10;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_that_answer_100_mb_leave_the_hub_and_the_edge_bounded() {
    let dir = TempDir::new("pull-large");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let hub = admin(&hub_sb).await;
    let api: Api<FederatedCluster> = Api::all(hub.clone());
    let endless = fake_member(Answer::Endless).await;
    let pages = fake_member(Answer::Pages).await;
    for (site, fake) in [("endless", &endless), ("pages", &pages)] {
        let path = dir.join(&format!("{site}.kubeconfig"));
        write_private(&path, &kubeconfig(&fake.url, Some(&fake.ca_pem), "t", ""));
        register_pull(&hub_kc, site, &path, &["--store-kubeconfig-as-is"]);
    }
    let hub_proc = start_hub(&hub_kc, &dir, "hub", &[]);
    let m = wait_connected(&api, "endless", "False", "TooLarge").await;
    assert!(m.contains("--probe-max-bytes"), "{m}");
    wait_connected(&api, "pages", "False", "TooLarge").await;
    // Let each be probed a few more times.
    let asked = endless.requests.load(Ordering::Relaxed);
    wait_until(WAIT, "three more probes of the endless member", || async {
        endless.requests.load(Ordering::Relaxed) >= asked + 6
    })
    .await;
    let peak = peak_rss_kib(hub_proc.pid());
    println!("hub peak RSS: {} MiB", peak >> 10);
    assert!(
        peak < HUB_PEAK_BOUND_KIB,
        "hub peak RSS {peak} KiB, bound {HUB_PEAK_BOUND_KIB} KiB"
    );
    // The hub stopped reading: no answer was taken whole.
    let largest = endless.largest_answer.load(Ordering::Relaxed);
    assert!(
        largest < HUNDRED_MB / 2,
        "{largest} bytes of one answer sent"
    );
    // The member offers 33 pages of 3 MiB; a probe stops after its 32 MiB.
    let deepest = pages.deepest_page.load(Ordering::Relaxed);
    assert!(
        (5..12).contains(&deepest),
        "the deepest page asked for is {deepest}"
    );

    // An edge whose hub answers 100 MB.
    let (_member_sb, member_kc) = member(&dir, "edge").await;
    let edge_hub = fake_member(Answer::Endless).await;
    let edge_hub_kc = dir.join("edge-hub.kubeconfig");
    write_private(
        &edge_hub_kc,
        &kubeconfig(&edge_hub.url, Some(&edge_hub.ca_pem), "t", ""),
    );
    let edge = Proc::spawn(
        "edge",
        &operator_bin(),
        &edge_args("edge", &member_kc, &edge_hub_kc, 0.3),
        dir.join("edge.log"),
    );
    wait_until(WAIT, "the edge asked its hub twice", || async {
        edge_hub.requests.load(Ordering::Relaxed) >= 2
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let peak = peak_rss_kib(edge.pid());
    println!("edge peak RSS: {} MiB", peak >> 10);
    assert!(
        peak < EDGE_PEAK_BOUND_KIB,
        "edge peak RSS {peak} KiB, bound {EDGE_PEAK_BOUND_KIB} KiB"
    );
    assert!(edge_hub.largest_answer.load(Ordering::Relaxed) < HUNDRED_MB / 2);
}
