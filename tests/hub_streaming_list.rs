//! The hub's first sync of the fleet (issue 35, "streaming lists with a
//! paged fallback"), through a running hub operator with exactly the RBAC
//! `kubectl fleet install` ships, on both API server lanes, with more sites
//! than one page holds ([`SITES`] > `site_status::LIST_PAGE`):
//!
//! - where the API server serves streaming lists, the hub's first list is
//!   one WATCH with `sendInitialEvents=true` and no LIST of sites at all
//!   (before, one LIST with `resourceVersion=0`, which a real server
//!   answers from its watch cache whole, whatever `limit` says);
//! - where it refuses them (the 422 of a server whose WatchList feature
//!   gate is off) or ignores them (every site ADDED, never the
//!   initial-events-end bookmark), the hub says so once in its log and
//!   lists sites in pages of 500 read from the current state (`limit=500`,
//!   then `continue`, never `resourceVersion=0`);
//!
//! and in every case it judges every site (each Connected, as its fresh
//! heartbeat says), and `fleet_hub_site_list_mode` tells which mode.

use crate::support;

use std::time::Duration;

use futures::StreamExt as _;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube_sandbox::{RequestRecord, Sandbox, StreamingLists};
use kubectl_fleet::api::{Environment, FederatedCluster, Phase};
use support::{Lane, Proc, TempDir, wait_until};

/// More than one page of the paged fallback (500).
const SITES: usize = 520;
/// A long heartbeat interval (60 s at the hub's test scale of 0.2), so one
/// heartbeat written before the hub starts keeps every site Connected for
/// the whole test.
const INTERVAL: i32 = 300;
const SCALE: f64 = 0.2;
const HUB_USER: &str = "system:serviceaccount:fleet-system:fleet-operator-hub";
const SITES_PATH: &str = "/apis/federation.kubectl-fleet.dev/v1alpha1/federatedclusters";

/// A hub API server on `lane` with the fleet installed and [`SITES`]
/// sites that each heartbeat once, just now; the hub operator's
/// kubeconfig. The request log is cleared, so it holds only what follows.
async fn fleet(lane: Lane, dir: &TempDir) -> (Sandbox, kube::Client, std::path::PathBuf) {
    let sb = lane.sandbox();
    tokio::task::block_in_place(|| support::installed_hub(&sb, dir));
    let admin = support::admin(&sb).await;
    futures::stream::iter(0..SITES)
        .map(|i| {
            let admin = admin.clone();
            async move { beating_site(&admin, &format!("site-{i:04}")).await }
        })
        .buffer_unordered(16)
        .collect::<Vec<()>>()
        .await;
    let hub_kc = support::hub_operator_kubeconfig(&sb, dir).await;
    sb.controls().clear_request_log();
    (sb, admin, hub_kc)
}

/// The hub operator, on its own (no leader election), serving its
/// metrics over HTTPS; the CA that signed its certificate.
fn start_hub(hub_kc: &std::path::Path, dir: &TempDir) -> (Proc, String) {
    support::spawn_lone_hub(hub_kc, dir, "hub-1", SCALE)
}

/// Creates site `name` with a heartbeat written just now.
async fn beating_site(admin: &kube::Client, name: &str) {
    support::create_site(admin, name, INTERVAL, Environment::Production).await;
    let api: Api<FederatedCluster> = Api::all(admin.clone());
    let now = jiff::Timestamp::now().to_string();
    let beat = serde_json::json!({"status": {"lastHeartbeatTime": now, "nodeCount": 3}});
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&beat))
        .await
        .unwrap();
}

/// Waits (bounded) until the hub listed a second page of sites.
async fn second_page_listed(sb: &Sandbox) {
    wait_until(
        Duration::from_secs(60),
        "the hub lists a second page",
        || async {
            hub_collection_requests(sb)
                .iter()
                .any(|r| r.verb == "list" && r.query.contains("continue="))
        },
    )
    .await;
}

/// Waits (bounded) until the hub's log says `what`.
async fn logged(hub: &Proc, what: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !hub.log_text().contains(what) {
        assert!(
            std::time::Instant::now() < deadline,
            "the hub did not log {what:?} within 60s:\n{}",
            hub.log_text()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits (bounded) until the hub judged every one of `n` sites Connected.
async fn every_site_judged(admin: &kube::Client, n: usize) {
    let api: Api<FederatedCluster> = Api::all(admin.clone());
    wait_until(
        Duration::from_secs(120),
        "the hub judges every site Connected",
        || async {
            let Ok(list) = api.list(&ListParams::default()).await else {
                return false;
            };
            list.items.len() == n
                && list
                    .items
                    .iter()
                    .all(|s| s.status.as_ref().and_then(|s| s.phase) == Some(Phase::Connected))
        },
    )
    .await;
}

/// What the hub asked of the site collection (lists and watches of all
/// sites; not a single site's reads or writes).
fn hub_collection_requests(sb: &Sandbox) -> Vec<RequestRecord> {
    sb.controls()
        .request_log()
        .into_iter()
        .filter(|r| r.user == HUB_USER && r.path == SITES_PATH)
        .collect()
}

fn streaming(r: &RequestRecord) -> bool {
    r.verb == "watch" && r.query.split('&').any(|p| p == "sendInitialEvents=true")
}

/// The hub's `fleet_hub_site_list_mode` (streaming, paged), scraped from
/// its metrics as a reader.
async fn list_mode_metric(hub: &Proc, ca: &str, admin: &kube::Client) -> (f64, f64) {
    let addr = support::logged_addr(&hub.log_text(), "serving HTTPS");
    let reader = support::reader_token(admin).await;
    let (code, body) = support::https_get(&addr, "/metrics", Some(&reader), ca).await;
    assert_eq!(code, 200, "{body}");
    let scrape = support::Scrape::parse(&body);
    let at = |mode| {
        scrape
            .value("fleet_hub_site_list_mode", &[("mode", mode)])
            .unwrap_or_else(|| panic!("no fleet_hub_site_list_mode{{mode={mode}}}: {body}"))
    };
    (at("streaming"), at("paged"))
}

/// Asserts that the hub's first sync was paged: at least one refused or
/// ignored streaming list, then LISTs of 500 from the current state, the
/// second page through `continue`.
fn assert_paged(sb: &Sandbox) {
    let requests = hub_collection_requests(sb);
    let lists: Vec<&RequestRecord> = requests.iter().filter(|r| r.verb == "list").collect();
    assert!(
        requests.first().is_some_and(streaming),
        "the hub tries a streaming list first: {requests:#?}"
    );
    assert!(
        lists.len() >= 2,
        "two pages for {SITES} sites: {requests:#?}"
    );
    for l in &lists {
        assert!(
            l.query.split('&').any(|p| p == "limit=500")
                && !l.query.split('&').any(|p| p == "resourceVersion=0"),
            "a paged LIST of the current state: {l:?}"
        );
    }
    assert!(
        lists.iter().any(|l| l.query.contains("continue=")),
        "{requests:#?}"
    );
    // Decided once: no streaming list after the fallback.
    let first_list = requests.iter().position(|r| r.verb == "list").unwrap();
    assert!(
        !requests[first_list..].iter().any(streaming),
        "{requests:#?}"
    );
}

on_both_lanes! {
    /// Where streaming lists are served, the hub's first sync is one
    /// streaming WATCH and no LIST, and it judges every site.
    multi_thread async fn the_hub_streams_its_first_list(lane) {
        if !lane.runs() {
            return;
        }
        let dir = TempDir::new("stream-served");
        let (sb, admin, hub_kc) = fleet(lane, &dir).await;
        let (mut hub, ca) = start_hub(&hub_kc, &dir);
        every_site_judged(&admin, SITES).await;
        let requests = hub_collection_requests(&sb);
        assert!(
            requests.first().is_some_and(|r| streaming(r) && r.status == 200),
            "the first sync is a streaming list: {requests:#?}"
        );
        for name in ["resourceVersionMatch=NotOlderThan", "allowWatchBookmarks=true"] {
            assert!(requests[0].query.split('&').any(|p| p == name), "{:?}", requests[0]);
        }
        assert!(
            !requests.iter().any(|r| r.verb == "list"),
            "no LIST of the fleet: {requests:#?}"
        );
        logged(&hub, "site watch: lists sites as a stream").await;
        assert_eq!(list_mode_metric(&hub, &ca, &admin).await, (1.0, 0.0));
        hub.terminate();
        let log = hub.log_text();
        assert_eq!(log.matches("site watch: lists sites as a stream").count(), 1, "{log}");
        assert!(!log.contains("does not serve streaming lists"), "{log}");
    }

    /// Where the API server refuses streaming lists (422, the WatchList
    /// feature gate off), the hub falls back to paged lists at once, says
    /// so once, and judges every site.
    multi_thread async fn the_hub_lists_in_pages_where_streaming_lists_are_refused(lane) {
        if !lane.runs() {
            return;
        }
        let dir = TempDir::new("stream-refused");
        let (sb, admin, hub_kc) = fleet(lane, &dir).await;
        sb.controls().set_streaming_lists(StreamingLists::Refused);
        let (said, log) = pages_after_the_stream(&sb, &admin, &hub_kc, &dir).await;
        let refused = hub_collection_requests(&sb);
        assert_eq!(refused[0].status, 422, "{:?}", refused[0]);
        assert!(
            said.contains("422") && said.contains("sendInitialEvents is forbidden for watch"),
            "{said}"
        );
        assert!(!log.contains("lost the site watch"), "{log}");
    }

    /// Where the API server ignores `sendInitialEvents` (every site comes
    /// as ADDED, the initial-events-end bookmark never), the hub falls
    /// back to paged lists once the stream has gone quiet, and judges
    /// every site.
    multi_thread async fn the_hub_lists_in_pages_where_streaming_lists_never_end(lane) {
        if !lane.runs() {
            return;
        }
        let dir = TempDir::new("stream-ignored");
        let (sb, admin, hub_kc) = fleet(lane, &dir).await;
        sb.controls().set_streaming_lists(StreamingLists::Ignored);
        let (said, _) = pages_after_the_stream(&sb, &admin, &hub_kc, &dir).await;
        assert!(said.contains("initial-events-end bookmark"), "{said}");
    }

    /// The same on a busy fleet, whose stream never goes quiet (sites
    /// heartbeat all along): a site that comes a second time before the
    /// initial-events-end bookmark gives the server away.
    multi_thread async fn the_hub_lists_in_pages_where_streaming_lists_never_end_on_a_busy_fleet(lane) {
        if !lane.runs() {
            return;
        }
        let dir = TempDir::new("stream-busy");
        let (sb, admin, hub_kc) = fleet(lane, &dir).await;
        sb.controls().set_streaming_lists(StreamingLists::Ignored);
        let writer = admin.clone();
        let beats = tokio::spawn(async move {
            let api: Api<FederatedCluster> = Api::all(writer);
            loop {
                for i in 0..5 {
                    let now = jiff::Timestamp::now().to_string();
                    let beat = serde_json::json!({"status": {"lastHeartbeatTime": now}});
                    let _ = api
                        .patch_status(&format!("site-{i:04}"), &PatchParams::default(), &Patch::Merge(&beat))
                        .await;
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        });
        let (mut hub, _ca) = start_hub(&hub_kc, &dir);
        second_page_listed(&sb).await;
        every_site_judged(&admin, SITES).await;
        assert_paged(&sb);
        beats.abort();
        logged(&hub, "does not serve streaming lists").await;
        hub.terminate();
        let log = hub.log_text();
        assert!(log.contains("came twice before the initial-events-end bookmark"), "{log}");
    }
}

/// Starts the hub on a server that does not stream lists (as `sb` is set)
/// and checks what every fallback must do: the second page listed, every
/// site judged from the paged list and a site that comes later through
/// the watch that follows it, only paged requests, the mode in the metric,
/// the fallback said once. Returns that line and the hub's whole log.
async fn pages_after_the_stream(
    sb: &Sandbox,
    admin: &kube::Client,
    hub_kc: &std::path::Path,
    dir: &TempDir,
) -> (String, String) {
    let (mut hub, ca) = start_hub(hub_kc, dir);
    second_page_listed(sb).await;
    every_site_judged(admin, SITES).await;
    beating_site(admin, "late-site").await;
    every_site_judged(admin, SITES + 1).await;
    assert_paged(sb);
    logged(&hub, "does not serve streaming lists").await;
    assert_eq!(list_mode_metric(&hub, &ca, admin).await, (0.0, 1.0));
    hub.terminate();
    let log = hub.log_text();
    let said: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("does not serve streaming lists"))
        .collect();
    assert_eq!(said.len(), 1, "{log}");
    (said[0].to_owned(), log)
}

/// `kubectl-fleet status --watch -o wide` against `hub`: waits (bounded)
/// until it drew a row for each of `sites`, then for `later` after it is
/// registered; stops it.
fn status_watch_draws(hub: &support::Hub, sites: &[&str], later: &str) {
    use std::io::BufRead as _;
    let mut child = std::process::Command::new(support::cli_bin())
        .args(["--kubeconfig", hub.kubeconfig.to_str().unwrap()])
        .args(["status", "--watch", "-o", "wide"])
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let wait_for = |name: &str| {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) if line.split_whitespace().next() == Some(name) => return,
                Ok(_) => {}
                Err(e) => panic!("no row of {name} from status --watch: {e}"),
            }
        }
    };
    for s in sites {
        wait_for(s);
    }
    hub.register(later, &[]);
    wait_for(later);
    child.kill().unwrap();
    child.wait().unwrap();
}

on_both_lanes! {
    /// `kubectl fleet status --watch` lists the fleet as the hub does:
    /// streamed where the API server serves it (no LIST), in pages where
    /// it refuses streaming lists — and follows changes either way.
    fn status_watch_streams_or_pages_its_first_list(lane) {
        if !lane.runs() {
            return;
        }
        let hub = support::Hub::on(lane);
        hub.register("site-a", &[]);
        hub.register("site-b", &[]);
        let controls = hub.sandbox.controls();
        controls.clear_request_log();
        status_watch_draws(&hub, &["site-a", "site-b"], "site-c");
        let log: Vec<RequestRecord> = controls
            .request_log()
            .into_iter()
            .filter(|r| r.path == SITES_PATH && r.verb != "get")
            .collect();
        assert!(log.iter().any(streaming), "{log:#?}");
        assert!(!log.iter().any(|r| r.verb == "list"), "{log:#?}");

        controls.set_streaming_lists(StreamingLists::Refused);
        controls.clear_request_log();
        status_watch_draws(&hub, &["site-a", "site-b", "site-c"], "site-d");
        let log: Vec<RequestRecord> = controls
            .request_log()
            .into_iter()
            .filter(|r| r.path == SITES_PATH && r.verb != "get")
            .collect();
        assert!(log.first().is_some_and(|r| streaming(r) && r.status == 422), "{log:#?}");
        assert!(
            log.iter().any(|r| r.verb == "list" && r.query.split('&').any(|p| p == "limit=500")),
            "{log:#?}"
        );
    }
}
