//! Multi-process end to end against kube-sandbox: two hub replicas and
//! several edges as real `fleet-operator` processes, every edge
//! authenticating with only the token `kubectl fleet register` minted and
//! every hub with only its own ServiceAccount's token, bound to exactly the
//! RBAC `kubectl fleet install` ships.
//!
//! Intervals: `heartbeatIntervalSeconds: 10` scaled by the hidden
//! `--interval-scale 0.2` on every process, so I = 2 s (Stale after 6 s,
//! Unreachable after 20 s).

use crate::support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kube::api::Api;
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{CONDITION_CLOCK_SKEW, FederatedCluster, Phase};
use support::*;

const SCALE: f64 = 0.2;
const I: Duration = Duration::from_secs(2);

async fn phase(api: &Api<FederatedCluster>, site: &str) -> Option<Phase> {
    api.get(site).await.ok().and_then(|fc| fc.phase())
}

/// Waits for `want`, returning how long it took.
async fn wait_phase(
    api: &Api<FederatedCluster>,
    site: &str,
    want: Phase,
    timeout: Duration,
) -> Duration {
    let start = Instant::now();
    loop {
        let got = phase(api, site).await;
        if got == Some(want) {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < timeout,
            "{site}: still {got:?} after {timeout:?}, wanted {want}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

struct Member {
    _sb: Sandbox,
    kubeconfig: PathBuf,
}

async fn member(
    dir: &TempDir,
    name: &str,
    gpus: &[(&str, i64, i64)],
    failing: &[FailingPod<'_>],
) -> Member {
    let sb = Sandbox::start();
    let kubeconfig = dir.join(&format!("{name}-member.kubeconfig"));
    sb.write_admin_kubeconfig(&kubeconfig).unwrap();
    let c = admin(&sb).await;
    seed_member(
        &c,
        &[NodeSeed {
            name: &format!("{name}-node-1"),
            gpus,
            ready: true,
        }],
        failing,
    )
    .await;
    Member {
        _sb: sb,
        kubeconfig,
    }
}

fn edge(dir: &TempDir, site: &str, m: &Member, hub_kc: &Path, extra: &[&str]) -> Proc {
    let mut args = edge_args(site, &m.kubeconfig, hub_kc, SCALE);
    args.extend(extra.iter().map(|s| s.to_string()));
    Proc::spawn(
        site,
        &operator_bin(),
        &args,
        dir.join(&format!("{site}-{}.log", now_ms())),
    )
}

/// A hub process (running with `operator_kc`, see
/// [`hub_operator_kubeconfig`]) and the edge of `site` (on a member with
/// one plain node), once the hub shows the site Connected: the hub, the
/// member (kept alive for the edge) and the edge.
async fn hub_with_connected_edge(
    dir: &TempDir,
    operator_kc: &Path,
    api: &Api<FederatedCluster>,
    site: &str,
    site_kc: &Path,
    extra: &[&str],
) -> (Proc, Member, Proc) {
    let hub = Proc::spawn(
        "hub",
        &operator_bin(),
        &hub_args(operator_kc, "hub", SCALE),
        dir.join("hub.log"),
    );
    let name = site.strip_prefix("site-").unwrap_or(site);
    let m = member(dir, name, &[], &[]).await;
    let e = edge(dir, site, &m, site_kc, extra);
    wait_phase(api, site, Phase::Connected, Duration::from_secs(15)).await;
    (hub, m, e)
}

fn now_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

/// A hub sandbox (on `lane`) with the fleet installed and `sites` registered, hub
/// replicas `hubs` running (the first one leading), and one member
/// sandbox plus edge per site (`skewed` sites' clocks run 10 minutes behind).
/// Returns once every site is Connected.
struct Fleet {
    dir: TempDir,
    hub_sb: Sandbox,
    admin: kube::Client,
    api: Api<FederatedCluster>,
    hubs: Vec<Proc>,
    members: Vec<Member>,
    edges: Vec<Proc>,
}

impl Fleet {
    async fn start(lane: Lane, tag: &str, sites: &[&str], hubs: &[&str], skewed: &[&str]) -> Fleet {
        let dir = TempDir::new(tag);
        let hub_sb = lane.sandbox();
        let hub_kc = installed_hub(&hub_sb, &dir);
        for s in sites {
            fleet_register(&hub_kc, s, 10, &dir.join(&format!("{s}.kubeconfig")), &[]);
        }
        let operator_kc = hub_operator_kubeconfig(&hub_sb, &dir).await;
        let admin_c = admin(&hub_sb).await;
        let api: Api<FederatedCluster> = Api::all(admin_c.clone());
        let mut procs = Vec::new();
        for h in hubs {
            procs.push(Proc::spawn(
                h,
                &operator_bin(),
                &hub_args(&operator_kc, h, SCALE),
                dir.join(&format!("{h}.log")),
            ));
            // The first replica leads: wait for it before starting the next.
            if procs.len() == 1 {
                wait_until(Duration::from_secs(10), "the first hub leads", || async {
                    lease_holder(&admin_c).await.as_deref() == Some(*h)
                })
                .await;
            }
        }
        for s in sites {
            wait_phase(&api, s, Phase::Pending, Duration::from_secs(10)).await;
        }
        let mut fleet = Fleet {
            dir,
            hub_sb,
            admin: admin_c,
            api,
            hubs: procs,
            members: Vec::new(),
            edges: Vec::new(),
        };
        for (i, s) in sites.iter().enumerate() {
            let failing = [FailingPod {
                namespace: "shop",
                deployment: "checkout",
                reason: "CrashLoopBackOff",
            }];
            let m = member(
                &fleet.dir,
                s,
                &[("nvidia.com/gpu", 8, 8)],
                if i == 0 { &failing } else { &[] },
            )
            .await;
            fleet.members.push(m);
            let extra: &[&str] = if skewed.contains(s) {
                &["--clock-offset", "-10m"]
            } else {
                &[]
            };
            let e = fleet.edge(i, s, extra);
            fleet.edges.push(e);
        }
        for s in sites {
            wait_phase(&fleet.api, s, Phase::Connected, Duration::from_secs(15)).await;
        }
        fleet
    }

    fn edge(&self, i: usize, site: &str, extra: &[&str]) -> Proc {
        edge(
            &self.dir,
            site,
            &self.members[i],
            &self.dir.join(&format!("{site}.kubeconfig")),
            extra,
        )
    }
}

on_both_lanes! {
multi_thread async fn edges_report_their_member_data_with_only_their_token(lane) {
    let f = Fleet::start(lane, "e2e-data", &["site-a"], &["hub-a"], &[]).await;
    let a = f.api.get("site-a").await.unwrap().status.unwrap();
    assert_eq!(
        a.capacity.unwrap().gpus_by_vendor["nvidia.com/gpu"].total,
        8
    );
    assert_eq!(a.signals.unwrap()[0].workload.name, "checkout");
    assert_eq!(
        a.observed_version.as_deref(),
        Some(env!("CARGO_PKG_VERSION"))
    );
    assert!(a.credential_expiration_time.is_some());
    assert!(
        !f.edges[0].log_text().contains("eyJ"),
        "a token reached the edge log"
    );
}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skewed_live_site_stays_connected_is_flagged_and_shows_its_hub_clock_age() {
    let f = Fleet::start(
        Lane::Sandbox,
        "e2e-skew",
        &["site-d"],
        &["hub-a"],
        &["site-d"],
    )
    .await;
    wait_until(Duration::from_secs(10), "site-d ClockSkew", || async {
        f.api
            .get("site-d")
            .await
            .unwrap()
            .status
            .unwrap()
            .condition(CONDITION_CLOCK_SKEW)
            .is_some_and(|c| c.status == "True")
    })
    .await;
    let d = f.api.get("site-d").await.unwrap().status.unwrap();
    assert_eq!(
        d.phase,
        Some(Phase::Connected),
        "a skewed but live site stays Connected"
    );
    assert!(
        d.condition(CONDITION_CLOCK_SKEW)
            .unwrap()
            .message
            .contains("status.clockOffsetSeconds"),
        "the message points at the offset instead of stating it"
    );
    // Edge clock minus hub clock, measured when a heartbeat arrived (the
    // report latency makes it a little more negative than -600).
    let offset = d
        .clock_offset_seconds
        .expect("the hub persisted the offset");
    assert!(
        (-615..=-595).contains(&offset),
        "clockOffsetSeconds {offset}"
    );
    // What a user sees: the heartbeat a few seconds old, not 10 minutes,
    // while lastHeartbeatTime stays what the edge wrote.
    let hub_kc = f.dir.join("hub.kubeconfig");
    let table = fleet_cli(&hub_kc, &["status"]);
    // stderr's notes come first: the table starts at its header.
    let cells = Table::find(&table, "NAME ");
    assert_eq!(cells.cell("site-d", "PHASE"), "Connected", "{table}");
    let last = cells.cell("site-d", "LAST HEARTBEAT");
    let age: u64 = last
        .strip_suffix('s')
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("LAST HEARTBEAT {last:?} is not seconds: {table}"));
    assert!(age <= 3 * I.as_secs() + 2, "LAST HEARTBEAT {age}s: {table}");
    let out = fleet_cli(&hub_kc, &["status", "-o", "json"]);
    let json: serde_json::Value = serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap();
    let site = &json["sites"][0];
    assert_eq!(site["name"], "site-d");
    assert!(
        site["lastHeartbeatAgeSeconds"].as_u64().unwrap() <= 3 * I.as_secs() + 2,
        "{site}"
    );
    let reported: jiff::Timestamp = site["lastHeartbeatTime"].as_str().unwrap().parse().unwrap();
    assert!(
        jiff::Timestamp::now().duration_since(reported) >= jiff::SignedDuration::from_mins(9),
        "lastHeartbeatTime is the edge's slow clock, unchanged: {site}"
    );
    // Further heartbeats measure the same offset within tolerance: the hub
    // writes nothing for them (it logs every write that is not a phase
    // transition as a condition transition).
    // The heartbeat as the hub reads it: the later of the status's and the
    // lease's renewal (a steady edge renews its lease, not its status).
    let heartbeat = || async { support::heartbeat_of(&f.api, "site-d").await.unwrap() };
    let before = f.api.get("site-d").await.unwrap().status.unwrap();
    let beat = heartbeat().await;
    wait_until(Duration::from_secs(10), "three more heartbeats", || async {
        heartbeat().await >= beat + jiff::SignedDuration::from_secs(6)
    })
    .await;
    let after = f.api.get("site-d").await.unwrap().status.unwrap();
    assert_eq!(after.clock_offset_seconds, Some(offset));
    assert_eq!(after.phase_transition_time, before.phase_transition_time);
    let hub_log = f.hubs[0].log_text();
    let writes_for = |what: &str| {
        hub_log
            .lines()
            .filter(|l| l.contains(what) && l.contains("site-d"))
            .count()
    };
    assert_eq!(
        writes_for("phase transition"),
        2,
        "Pending, then Connected: {hub_log}"
    );
    // A reading of an edge behind is confirmed by the one before it (a
    // heartbeat delivered late looks behind too): ClockSkew and the offset
    // in one write at the second heartbeat seen, and none after.
    assert_eq!(
        writes_for("condition transition"),
        1,
        "one write of ClockSkew, no hub write per heartbeat: {hub_log}"
    );
    assert_eq!(
        writes_for("changes=clockOffsetSeconds,ClockSkew"),
        1,
        "{hub_log}"
    );
}

on_both_lanes! {
multi_thread async fn a_killed_edge_goes_stale_then_unreachable_and_reconnects(lane) {
    let mut f = Fleet::start(lane, "e2e-kill", &["site-a", "site-b"], &["hub-a"], &[]).await;
    // Stale after 3·I, Unreachable after 10·I (of its last heartbeat).
    f.edges[1].kill();
    let killed = Instant::now();
    wait_phase(
        &f.api,
        "site-b",
        Phase::Stale,
        3 * I + Duration::from_secs(5),
    )
    .await;
    let to_stale = killed.elapsed();
    assert!(
        to_stale >= 2 * I,
        "Stale after {to_stale:?}, before 3·I since the last heartbeat"
    );
    wait_phase(
        &f.api,
        "site-b",
        Phase::Unreachable,
        10 * I + Duration::from_secs(5),
    )
    .await;
    let to_unreachable = killed.elapsed();
    assert!(
        to_unreachable >= 9 * I,
        "Unreachable after only {to_unreachable:?}"
    );
    assert_eq!(
        phase(&f.api, "site-a").await,
        Some(Phase::Connected),
        "site-a unaffected"
    );
    f.edges[1] = f.edge(1, "site-b", &[]);
    wait_phase(&f.api, "site-b", Phase::Connected, Duration::from_secs(10)).await;
}
}

on_both_lanes! {
multi_thread async fn edges_recover_from_a_hub_api_outage_without_restarting(lane) {
    let f = Fleet::start(lane, "e2e-outage", &["site-a", "site-b"], &["hub-a"], &[]).await;
    let pids: Vec<u32> = f.edges.iter().map(Proc::pid).collect();
    f.hub_sb.controls().outage_for(2 * I);
    // Sync points instead of sleeps: every edge saw the outage, then every
    // edge reported again, then every site is (still) Connected.
    wait_until(Duration::from_secs(10), "edges see the outage", || async {
        f.edges.iter().all(|e| {
            e.log_text()
                .contains("hub unreachable at https://127.0.0.1:")
        })
    })
    .await;
    wait_until(Duration::from_secs(15), "edges report again", || async {
        f.edges
            .iter()
            .all(|e| e.log_text().contains("reporting to the hub again"))
    })
    .await;
    for s in ["site-a", "site-b"] {
        wait_phase(&f.api, s, Phase::Connected, Duration::from_secs(15)).await;
    }
    assert_eq!(
        pids,
        f.edges.iter().map(Proc::pid).collect::<Vec<_>>(),
        "no edge restarted"
    );
}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_standby_takes_over_when_the_leader_is_killed() {
    let mut f = Fleet::start(
        Lane::Sandbox,
        "e2e-failover",
        &["site-a", "site-d"],
        &["hub-a", "hub-b"],
        &["site-d"],
    )
    .await;
    f.hubs[0].kill();
    wait_until(Duration::from_secs(15), "hub-b leads", || async {
        lease_holder(&f.admin).await.as_deref() == Some("hub-b")
    })
    .await;
    // The Lease is written before the replica logs and starts acting on it.
    wait_until(Duration::from_secs(5), "hub-b acts as leader", || async {
        f.hubs[1].log_text().contains("became leader")
    })
    .await;
    // A site that dies after the takeover is judged by the new leader; its
    // clock running ahead must not matter either way.
    f.edges[1].kill();
    let killed = Instant::now();
    let to_stale = wait_phase(
        &f.api,
        "site-d",
        Phase::Stale,
        3 * I + Duration::from_secs(6),
    )
    .await;
    assert!(
        killed.elapsed() >= 2 * I,
        "site-d went Stale after {to_stale:?}"
    );
    // The transition is logged right after the write the API showed.
    wait_until(
        Duration::from_secs(5),
        "hub-b logs site-d's transition",
        || async { f.hubs[1].log_text().contains("site=site-d") },
    )
    .await;
    assert_eq!(phase(&f.api, "site-a").await, Some(Phase::Connected));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_the_leader_cleanly_and_releases_the_lease() {
    let mut f = Fleet::start(Lane::Sandbox, "e2e-sigterm", &["site-a"], &["hub-a"], &[]).await;
    assert_eq!(probe(&f.hubs[0].log_text(), "/healthz"), 200);
    assert_eq!(probe(&f.hubs[0].log_text(), "/readyz"), 200);
    assert_eq!(probe(&f.edges[0].log_text(), "/readyz"), 200);
    let st = f.hubs[0].terminate().unwrap();
    assert!(
        st.success(),
        "hub exit status {st:?}: {}",
        f.hubs[0].log_text()
    );
    assert!(
        f.hubs[0].log_text().contains("released the lease"),
        "{}",
        f.hubs[0].log_text()
    );
    wait_until(Duration::from_secs(5), "lease released", || async {
        lease_holder(&f.admin).await.is_none()
    })
    .await;
}

/// An installed hub whose API server caps tokens at `max_secs` (a test
/// knob below the real server's limits, to compress time), with `site`
/// registered: the sandbox, the admin kubeconfig, the hub operator's
/// (minted before the cap: in a cluster the kubelet keeps a pod's token
/// fresh) and the site's.
async fn short_token_hub(
    dir: &TempDir,
    site: &str,
    max_secs: u64,
) -> (Sandbox, PathBuf, PathBuf, PathBuf) {
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, dir);
    let operator_kc = hub_operator_kubeconfig(&hub_sb, dir).await;
    hub_sb
        .controls()
        .set_min_token_expiration(Duration::from_secs(1));
    hub_sb
        .controls()
        .set_max_token_expiration(Some(Duration::from_secs(max_secs)));
    let site_kc = dir.join(&format!("{site}.kubeconfig"));
    fleet_register(&hub_kc, site, 10, &site_kc, &[]);
    (hub_sb, hub_kc, operator_kc, site_kc)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_rotation_keeps_a_short_lived_token_connected() {
    let dir = TempDir::new("rotate");
    let (hub_sb, _hub_kc, operator_kc, site_kc) = short_token_hub(&dir, "site-r", 12).await;
    let first = std::fs::read_to_string(&site_kc).unwrap();
    let api: Api<FederatedCluster> = Api::all(admin(&hub_sb).await);
    let (_hub, _m, e) =
        hub_with_connected_edge(&dir, &operator_kc, &api, "site-r", &site_kc, &[]).await;
    let first_exp = api
        .get("site-r")
        .await
        .unwrap()
        .status
        .unwrap()
        .credential_expiration_time
        .unwrap();
    // Two renewals (each once less than half of the 12 s lifetime is left),
    // then well past the first token's expiry.
    wait_until(Duration::from_secs(40), "two token renewals", || async {
        e.log_text().matches("renewed the site token").count() >= 2
    })
    .await;
    let past_first = first_exp.0 + jiff::SignedDuration::from_secs(3);
    if let Ok(d) = Duration::try_from(past_first.duration_since(jiff::Timestamp::now())) {
        tokio::time::sleep(d).await;
    }
    assert_eq!(
        phase(&api, "site-r").await,
        Some(Phase::Connected),
        "{}",
        e.log_text()
    );
    let st = api.get("site-r").await.unwrap().status.unwrap();
    assert!(
        st.credential_expiration_time.unwrap() > first_exp,
        "the reported expiry moved"
    );
    let log = e.log_text();
    assert!(log.matches("renewed the site token").count() >= 2, "{log}");
    assert!(!log.contains("hub rejected the site token"), "{log}");
    let now = std::fs::read_to_string(&site_kc).unwrap();
    assert_ne!(
        now, first,
        "the new token was stored where the edge reads it"
    );
    use std::os::unix::fs::PermissionsExt as _;
    assert_eq!(
        std::fs::metadata(&site_kc).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoked_token_logs_the_hint_until_the_new_kubeconfig_arrives() {
    let dir = TempDir::new("revoke");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let site_kc = dir.join("site-v.kubeconfig");
    fleet_register(&hub_kc, "site-v", 10, &site_kc, &[]);
    let api: Api<FederatedCluster> = Api::all(admin(&hub_sb).await);
    let operator_kc = hub_operator_kubeconfig(&hub_sb, &dir).await;
    let (_hub, _m, e) =
        hub_with_connected_edge(&dir, &operator_kc, &api, "site-v", &site_kc, &[]).await;

    // Revoke, writing the new config elsewhere: the edge keeps the old one.
    let new_kc = dir.join("site-v.new.kubeconfig");
    fleet_cli(
        &hub_kc,
        &[
            "rotate",
            "site-v",
            "--revoke",
            "--output-file",
            &new_kc.display().to_string(),
        ],
    );
    let hint = "hub rejected the site token (expired or revoked, or the site was unregistered): run `kubectl fleet rotate site-v` if it is still registered";
    wait_until(Duration::from_secs(10), "the 401 hint, twice", || async {
        e.log_text().matches(hint).count() >= 2
    })
    .await;
    wait_phase(&api, "site-v", Phase::Stale, Duration::from_secs(15)).await;
    // Hand it the new kubeconfig: it switches without a restart.
    let pid = e.pid();
    std::fs::copy(&new_kc, &site_kc).unwrap();
    wait_phase(&api, "site-v", Phase::Connected, Duration::from_secs(10)).await;
    assert_eq!(e.pid(), pid);
    assert!(
        e.log_text().contains("hub kubeconfig changed on disk"),
        "{}",
        e.log_text()
    );
}

/// A token that expired (the edge runs without auto-rotation; the hub caps
/// tokens at 8 s, a test knob): the edge names the expiry and the command
/// in one line, keeps running, and reports again once `kubectl fleet
/// rotate` hands it a new credential.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_named_until_rotate_hands_a_new_one() {
    let dir = TempDir::new("expired");
    let (hub_sb, hub_kc, operator_kc, site_kc) = short_token_hub(&dir, "site-x", 8).await;
    let api: Api<FederatedCluster> = Api::all(admin(&hub_sb).await);
    let (_hub, _m, e) = hub_with_connected_edge(
        &dir,
        &operator_kc,
        &api,
        "site-x",
        &site_kc,
        &["--no-auto-rotate"],
    )
    .await;
    let said = "hub rejected the site token: it expired at ";
    wait_until(Duration::from_secs(30), "the expiry hint", || async {
        e.log_text().contains(said)
    })
    .await;
    let log = e.log_text();
    let line = log.lines().find(|l| l.contains(said)).unwrap();
    assert!(
        line.contains("run `kubectl fleet rotate site-x`")
            && line.contains("cause=\"token-expired\""),
        "{line}"
    );
    assert!(!log.contains("panicked"), "{log}");
    wait_phase(&api, "site-x", Phase::Stale, Duration::from_secs(15)).await;
    hub_sb.controls().set_max_token_expiration(None);
    let new_kc = dir.join("site-x.new.kubeconfig");
    fleet_cli(
        &hub_kc,
        &[
            "rotate",
            "site-x",
            "--output-file",
            &new_kc.display().to_string(),
        ],
    );
    let pid = e.pid();
    std::fs::copy(&new_kc, &site_kc).unwrap();
    wait_phase(&api, "site-x", Phase::Connected, Duration::from_secs(15)).await;
    assert_eq!(e.pid(), pid, "no restart");
    assert!(e.log_text().contains("hub kubeconfig changed on disk"));
}

/// The site's ServiceAccount deleted under a running edge: the edge gives
/// the 401 hint in one line, keeps running; `kubectl fleet rotate` (no
/// `--revoke`) recreates the missing ServiceAccount, says so, and the new
/// credential reconnects the edge without a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_service_account_is_recreated_by_rotate() {
    use k8s_openapi::api::core::v1::ServiceAccount;
    let dir = TempDir::new("sa-gone");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let site_kc = dir.join("site-y.kubeconfig");
    fleet_register(&hub_kc, "site-y", 10, &site_kc, &[]);
    let admin_c = admin(&hub_sb).await;
    let api: Api<FederatedCluster> = Api::all(admin_c.clone());
    let operator_kc = hub_operator_kubeconfig(&hub_sb, &dir).await;
    let (_hub, _m, e) =
        hub_with_connected_edge(&dir, &operator_kc, &api, "site-y", &site_kc, &[]).await;
    let sas: Api<ServiceAccount> =
        Api::namespaced(admin_c.clone(), kubectl_fleet::fleet::rbac::SITES_NAMESPACE);
    sas.delete(
        &kubectl_fleet::fleet::rbac::edge_identity_name("site-y"),
        &Default::default(),
    )
    .await
    .unwrap();
    let hint = "hub rejected the site token (expired or revoked, or the site was unregistered): run `kubectl fleet rotate site-y` if it is still registered";
    wait_until(Duration::from_secs(15), "the 401 hint", || async {
        e.log_text().contains(hint)
    })
    .await;
    let new_kc = dir.join("site-y.new.kubeconfig");
    let out = fleet_cli(
        &hub_kc,
        &[
            "rotate",
            "site-y",
            "--output-file",
            &new_kc.display().to_string(),
        ],
    );
    assert!(out.contains("was missing: recreated"), "{out}");
    let pid = e.pid();
    std::fs::copy(&new_kc, &site_kc).unwrap();
    wait_until(Duration::from_secs(15), "site-y reports again", || async {
        e.log_text().contains("hub kubeconfig changed on disk")
            && e.log_text().contains("reporting to the hub again")
    })
    .await;
    wait_phase(&api, "site-y", Phase::Connected, Duration::from_secs(15)).await;
    assert_eq!(e.pid(), pid, "no restart");
    assert!(!e.log_text().contains("panicked"));
}
