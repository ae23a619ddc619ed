//! The shipped alerts, end to end: Debian's real Prometheus and
//! Alertmanager (installed by `tools/promtool.sh`; `tools/test.sh` exports
//! PROMETHEUS, ALERTMANAGER and AMTOOL) on loopback, loaded with the
//! shipped rule file, the shipped inhibition rule embedded in the
//! Alertmanager configuration and docs/migrating.md's replacement rules,
//! scraping a real hub over HTTPS with a scraper token (`authorization`,
//! as the ServiceMonitor does), and a webhook receiver in the test that
//! records every notification with its arrival time. What is asserted is
//! what Alertmanager delivers, and when.
//!
//! Intervals are scaled as the demo does (`--interval-scale 0.1`: a 10 s
//! heartbeat interval is I = 1 s); Prometheus scrapes and evaluates every
//! second and Alertmanager waits 1 s per group. The rules are the shipped
//! ones, unchanged: `ClusterDisconnected`'s minute of `for` and
//! `FleetHubDown`'s 45 s are real minutes and seconds here, so the
//! measured times are the shipped ones plus the hub's scaled thresholds
//! (docs/observability.md, "What pages, and when", has the table this
//! test prints as `ALERT-TIMING` lines).
//!
//! One fleet, every scenario at once where they do not disturb each
//! other, then the two that take the hub away:
//!
//! - **A**: one Push site dark, one Pull site dark (its member's API
//!   server stopped), three sites of one region dark together (then one
//!   recovering), three stores of another region that sleep (`--absent-up-to
//!   1m`) and stay dark past it together (one grouped outage, their
//!   `ClusterLateToWake` pages held back), a cordoned site dark, a site whose credential expires in
//!   30 minutes and is not renewed, a site whose edge clock runs 10
//!   minutes behind, and docs/migrating.md's replacement alert beside
//!   the shipped ones;
//! - **B**: the leader loses its Lease while its process lives;
//! - **C**: every hub replica killed, then started again.

use crate::support;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, PostParams};
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{FederatedCluster, Phase};
use kubectl_fleet::manifests::monitoring;
use serde_json::Value;
use support::{
    Proc, TempDir, admin, edge_args, fleet_cli, fleet_register, hub_args, hub_operator_kubeconfig,
    installed_hub, localhost_cert, member_sandbox, operator_bin, reader_token, register_pull,
    wait_until,
};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

mod harness;
use harness::*;

/// `--interval-scale` of the hub and the edges.
const SCALE: f64 = 0.1;
/// Every site's `heartbeatIntervalSeconds`; scaled, I = 1 s.
const INTERVAL: u32 = 10;
/// The scaled heartbeat interval.
const I: Duration = Duration::from_secs(1);
/// Prometheus' scrape and evaluation intervals, Alertmanager's group_wait
/// and group_interval in this test.
const SCRAPE: Duration = Duration::from_secs(1);
const EVAL: Duration = Duration::from_secs(1);
const GROUP_WAIT: Duration = Duration::from_secs(1);
/// What a loaded 2-core machine may add to a measured time (processes
/// starved of CPU for a few seconds), on top of each bound.
const LOAD: Duration = Duration::from_secs(10);

/// `amtool check-config` on a configuration that embeds the shipped
/// inhibition rules: accepted, with the inhibit rule counted.
#[test]
fn amtool_accepts_a_configuration_with_the_shipped_inhibition() {
    let Some(tools) = Tools::get() else { return };
    let dir = TempDir::new("amtool");
    let file = dir.join("alertmanager.yml");
    std::fs::write(&file, alertmanager_config("127.0.0.1:9")).unwrap();
    let out = std::process::Command::new(&tools.amtool)
        .arg("check-config")
        .arg(&file)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "amtool check-config:\n{text}");
    assert!(text.contains("SUCCESS"), "{text}");
    assert!(text.contains(" - 1 inhibit rules"), "{text}");
    // A broken one is refused, so the check above means something.
    let config = alertmanager_config("127.0.0.1:9");
    let broken = config.replace("alertname=~\"", "alertname=~\"(");
    assert_ne!(broken, config);
    std::fs::write(&file, broken).unwrap();
    let bad = std::process::Command::new(&tools.amtool)
        .arg("check-config")
        .arg(&file)
        .output()
        .unwrap();
    assert!(!bad.status.success());
}

/// The sites, each with its own member cluster: (name, region, mode).
const PUSH_SITES: &[(&str, &str)] = &[
    ("solo", "solo-r"),
    ("eu-1", "eu-west"),
    ("eu-2", "eu-west"),
    ("eu-3", "eu-west"),
    ("cordoned", "maint-r"),
    ("expiring", "cred-r"),
    ("skewed", "skew-r"),
    ("steady-1", "steady-r"),
    ("steady-2", "steady-r"),
    ("late-1", "late-r"),
    ("late-2", "late-r"),
    ("late-3", "late-r"),
];
/// Stores that may be silent for a minute at a time (`--absent-up-to
/// 1m`, the shortest a schedule allows; not scaled), all of region late-r.
const LATE_STORES: [&str; 3] = ["late-1", "late-2", "late-3"];
const PULL_SITES: &[(&str, &str)] = &[("pull-solo", "pull-r"), ("pull-ok", "pull-ok-r")];

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_shipped_alerts_page_once_on_time_and_never_for_nothing() {
    let Some(tools) = Tools::get() else { return };
    let dir = TempDir::new("alerts-live");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let admin_c = admin(&hub_sb).await;
    let api: Api<FederatedCluster> = Api::all(admin_c.clone());

    // The fleet: Push sites with their edges, Pull sites probed by the hub.
    let mut members: HashMap<&str, Sandbox> = HashMap::new();
    let mut member_kcs: HashMap<&str, PathBuf> = HashMap::new();
    for (site, region) in PUSH_SITES.iter().chain(PULL_SITES) {
        let (sb, kc) = member_sandbox(&dir, site, (0, 0)).await;
        members.insert(site, sb);
        member_kcs.insert(site, kc);
        if PULL_SITES.iter().any(|(s, _)| s == site) {
            register_pull(&hub_kc, site, &member_kcs[site], &["--region", region]);
            continue;
        }
        let mut extra = vec!["--region", region];
        if *site == "expiring" {
            // Expires in 30 minutes and its edge does not renew it.
            extra.extend(["--token-ttl", "30m"]);
        }
        if LATE_STORES.contains(site) {
            extra.extend(["--absent-up-to", "1m"]);
        }
        fleet_register(
            &hub_kc,
            site,
            INTERVAL,
            &dir.join(&format!("{site}.kubeconfig")),
            &extra,
        );
    }
    let edge = |site: &str| {
        let mut args = edge_args(
            site,
            &member_kcs[site],
            &dir.join(&format!("{site}.kubeconfig")),
            SCALE,
        );
        match site {
            "expiring" => args.push("--no-auto-rotate".into()),
            "skewed" => args.extend(["--clock-offset".into(), "-10m".into()]),
            _ => {}
        }
        Proc::spawn(
            site,
            &operator_bin(),
            &args,
            dir.join(&format!("{site}-edge.log")),
        )
    };
    let mut edges: HashMap<&str, Proc> = PUSH_SITES.iter().map(|(s, _)| (*s, edge(s))).collect();

    let (cert, key, ca_pem) = localhost_cert(&dir);
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, &ca_pem).unwrap();
    let operator_kc = hub_operator_kubeconfig(&hub_sb, &dir).await;
    let hub_port = free_port();
    let hub_args = live_hub_args(&operator_kc, hub_port, &cert, &key);
    let mut hub = Proc::spawn("hub", &operator_bin(), &hub_args, dir.join("hub.log"));

    let all: Vec<&str> = PUSH_SITES
        .iter()
        .chain(PULL_SITES)
        .map(|(s, _)| *s)
        .collect();
    wait_until(Duration::from_secs(120), "every site Connected", || async {
        for s in &all {
            if phase(&api, s).await != Some(Phase::Connected) {
                return false;
            }
        }
        true
    })
    .await;
    fleet_cli(
        &hub_kc,
        &["cordon", "cordoned", "--for", "1h", "--reason", "planned"],
    );
    // The hub measures the skewed edge's clock.
    wait_until(Duration::from_secs(60), "skewed's ClockSkew", || async {
        api.get("skewed")
            .await
            .ok()
            .and_then(|s| s.status)
            .and_then(|s| s.condition("ClockSkew").map(|c| c.status == "True"))
            .unwrap_or(false)
    })
    .await;

    // Alertmanager with the shipped inhibition, the webhook, Prometheus.
    let inbox = Inbox::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let webhook = listener.local_addr().unwrap().to_string();
    tokio::spawn(serve_webhook(listener, inbox.clone()));
    let (am, _am_proc) = start_alertmanager(&tools, &dir, &webhook).await;
    let token = dir.join("scraper.token");
    support::write_private(&token, &reader_token(&admin_c).await);
    let prom = start_prometheus(
        &tools,
        &dir,
        &format!("127.0.0.1:{hub_port}"),
        &ca,
        &token,
        &am,
    )
    .await;
    // The rules are loaded once the hub is scraped, so their first
    // evaluation sees it (a Prometheus with no data of the hub at all
    // would raise FleetHubDown at once, which a real group_wait of 30 s
    // hides and this test's 1 s would not).
    wait_until(Duration::from_secs(60), "the hub scraped", || async {
        prom.value(monitoring::HUB_COUNTS_THE_FLEET).await.is_some()
            && prom
                .value("time() - max(fleet_hub_last_judgement_timestamp_seconds) < 10")
                .await
                .is_some()
    })
    .await;
    let (_, shipped) = monitoring::files()
        .into_iter()
        .find(|(name, _)| *name == "fleet-rules.yaml")
        .unwrap();
    std::fs::write(prom.dir.join("fleet-rules.yaml"), shipped).unwrap();
    std::fs::write(
        prom.dir.join("migrated.yaml"),
        crate::migrating_alerts::documented_rules(),
    )
    .unwrap();
    prom.load_rules(&["fleet-rules.yaml", "migrated.yaml"])
        .await;
    let started = Timestamp::now();

    // A credential that expires in 30 minutes, not renewed: one
    // notification, critical, saying when.
    let credential = inbox
        .wait(
            "CredentialExpiring expiring firing",
            Duration::from_secs(30),
        )
        .await;
    assert_eq!(credential.label("severity"), "critical", "{credential:?}");
    // "expires in 28m 12s": the time left, as the minutes since it was
    // minted allow.
    let description = &credential.annotations["description"];
    let minutes: u32 = description
        .split_once("expires in ")
        .and_then(|(_, rest)| rest.split_once('m'))
        .and_then(|(m, _)| m.parse().ok())
        .unwrap_or_else(|| panic!("{description}"));
    assert!((20..30).contains(&minutes), "{description}");
    assert!(
        credential.annotations["summary"].ends_with("expires within 1 day"),
        "{credential:?}"
    );
    // What to run, for either mode (the alert does not know the mode).
    for fix in [
        "kubectl fleet rotate expiring",
        "kubectl fleet register expiring --pull --member-kubeconfig FILE",
    ] {
        assert!(description.contains(fix), "{fix}: {description}");
    }
    println!(
        "ALERT-TIMING credential expiring in 30 min, not renewed: CredentialExpiring delivered {:.1} s after the rules were loaded",
        secs(started, credential.at)
    );

    // ---- A: sites go dark. ----
    for s in ["solo", "eu-1", "eu-2", "eu-3", "cordoned"]
        .into_iter()
        .chain(LATE_STORES)
    {
        edges.get_mut(s).unwrap().kill();
    }
    members.remove("pull-solo").unwrap().shutdown();
    let dark_at = Timestamp::now();
    let mut last = HashMap::new();
    for s in ["solo", "eu-1", "eu-2", "eu-3", "cordoned"]
        .into_iter()
        .chain(LATE_STORES)
    {
        last.insert(s, last_heartbeat(&api, s).await);
    }
    wait_until(Duration::from_secs(30), "pull-solo Stale", || async {
        phase(&api, "pull-solo").await == Some(Phase::Stale)
    })
    .await;
    last.insert("pull-solo", last_heartbeat(&api, "pull-solo").await);
    let for_ = Duration::from_secs(60);
    // Stale written → the gauge (the summary's debounce) → a scrape → an
    // evaluation that starts `for` → the one that ends it → Alertmanager.
    let pipeline = kubectl_fleet::operator::federation::DEBOUNCE + SCRAPE + EVAL * 2 + GROUP_WAIT;
    let page_wait = I * 3 + for_ + pipeline + LOAD * 2;

    let solo = inbox
        .wait("ClusterDisconnected solo firing", page_wait)
        .await;
    assert_eq!(solo.label("severity"), "critical");
    timing(
        "one Push site dark: its last heartbeat → ClusterDisconnected delivered",
        secs(last["solo"], solo.at),
        I * 3 + for_,
        I * 3 + for_ + pipeline,
    );
    let pull = inbox
        .wait("ClusterDisconnected pull-solo firing", page_wait)
        .await;
    timing(
        "one Pull site dark: its last successful probe → ClusterDisconnected delivered",
        secs(last["pull-solo"], pull.at),
        for_,
        I.mul_f64(1.1) + for_ + pipeline,
    );
    let outage = inbox
        .wait("FleetGroupedOutage eu-west firing", page_wait)
        .await;
    let eu_last = ["eu-1", "eu-2", "eu-3"]
        .iter()
        .map(|s| last[s])
        .max()
        .unwrap();
    timing(
        "three sites of one region dark: the last one's last heartbeat → FleetGroupedOutage delivered",
        secs(eu_last, outage.at),
        I * 3,
        I * 3 + pipeline,
    );
    // docs/migrating.md's replacement: with the site's page, not sooner.
    for (site, group, page) in [("solo", "solo-r", &solo), ("pull-solo", "pull-r", &pull)] {
        let migrated = inbox
            .wait(&format!("FleetSitesDisconnected {group} firing"), page_wait)
            .await;
        let early = secs(migrated.at, page.at);
        println!(
            "ALERT-TIMING docs/migrating.md's FleetSitesDisconnected for {site}: {:.1} s after its ClusterDisconnected",
            -early
        );
        assert!(
            early <= (EVAL * 2 + GROUP_WAIT).as_secs_f64(),
            "FleetSitesDisconnected {group} came {early:.1} s before ClusterDisconnected {site}"
        );
    }
    // The cordoned site went dark with solo and would have paged with it;
    // the outage's sites too: Prometheus raises their alerts, Alertmanager
    // holds them back (inhibited by the outage).
    let am_alerts = |am: String| async move {
        let (code, body) = http(&am, "GET", "/api/v2/alerts").await;
        assert_eq!(code, 200, "{body}");
        serde_json::from_str::<Vec<Value>>(&body).unwrap()
    };
    // They went dark with solo, but each site's Stale reaches the gauges
    // with the summary that follows its write (within seconds of solo's).
    let raised = |held: &[Value]| {
        ["eu-1", "eu-2", "eu-3"].iter().all(|s| {
            held.iter().any(|a| {
                a["labels"]["alertname"] == "ClusterDisconnected" && a["labels"]["cluster"] == *s
            })
        }) && held.iter().any(|a| {
            a["labels"]["alertname"] == "FleetSitesDisconnected"
                && a["labels"]["group"] == "eu-west"
        })
    };
    let deadline = std::time::Instant::now() + pipeline + LOAD;
    let held = loop {
        let held = am_alerts(am.clone()).await;
        if raised(&held) {
            break held;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "Prometheus raises the outage's sites' pages: {held:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    for s in ["eu-1", "eu-2", "eu-3"] {
        let a = held
            .iter()
            .find(|a| {
                a["labels"]["alertname"] == "ClusterDisconnected" && a["labels"]["cluster"] == s
            })
            .unwrap();
        assert!(
            !a["status"]["inhibitedBy"].as_array().unwrap().is_empty(),
            "{s} is held back by the outage: {a}"
        );
    }
    let eu_migrated = held
        .iter()
        .find(|a| {
            a["labels"]["alertname"] == "FleetSitesDisconnected"
                && a["labels"]["group"] == "eu-west"
        })
        .expect("the replacement alert fires for eu-west");
    assert!(
        !eu_migrated["status"]["inhibitedBy"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{eu_migrated}"
    );

    // One of the three comes back: the outage keeps the other two, whose
    // pages stay held back.
    edges.insert("eu-1", edge("eu-1"));
    wait_until(Duration::from_secs(30), "eu-1 Connected", || async {
        phase(&api, "eu-1").await == Some(Phase::Connected)
    })
    .await;
    wait_until(
        Duration::from_secs(30),
        "the outage down to 2 sites",
        || async {
            prom.value("max(federation_grouped_outage_clusters{group=\"eu-west\"})")
                .await
                == Some(2.0)
        },
    )
    .await;
    // Long enough for a released page to arrive (they are firing already).
    tokio::time::sleep(SCRAPE + EVAL * 2 + GROUP_WAIT * 2 + LOAD).await;
    for s in ["eu-1", "eu-2", "eu-3", "cordoned"] {
        assert_eq!(
            inbox.count(&format!("ClusterDisconnected {s} firing")),
            0,
            "{s} paged: {:?}",
            inbox.keys()
        );
    }
    for group in ["eu-west", "maint-r"] {
        assert_eq!(
            inbox.count(&format!("FleetSitesDisconnected {group} firing")),
            0,
            "{:?}",
            inbox.keys()
        );
    }
    // The late-r stores slept a minute (no page), then stayed dark past
    // it: late to wake, one grouped outage, and their ClusterLateToWake
    // pages raised but held back by it (one page, not three).
    let absent = Duration::from_secs(60);
    let late_last = LATE_STORES.iter().map(|s| last[s]).max().unwrap();
    let late_outage = inbox
        .wait(
            "FleetGroupedOutage late-r firing",
            absent + I * 3 + pipeline + LOAD * 2,
        )
        .await;
    timing(
        "three stores late to wake together: the last one's last heartbeat → FleetGroupedOutage delivered",
        secs(late_last, late_outage.at),
        absent + I * 3,
        absent + I * 3 + pipeline,
    );
    for s in LATE_STORES {
        let site = api.get(s).await.unwrap();
        assert!(
            kubectl_fleet::fleet::hub_status::is_late_to_wake(&site),
            "{s}: {:?}",
            site.status
        );
    }
    let late_raised = |alerts: &[Value]| {
        LATE_STORES.iter().all(|s| {
            alerts.iter().any(|a| {
                a["labels"]["alertname"] == "ClusterLateToWake"
                    && a["labels"]["cluster"] == *s
                    && a["labels"]["group"] == "late-r"
            })
        })
    };
    let deadline = std::time::Instant::now() + for_ + pipeline + LOAD * 2;
    let held = loop {
        let held = am_alerts(am.clone()).await;
        if late_raised(&held) {
            break held;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "Prometheus raises the late stores' pages: {held:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    for s in LATE_STORES {
        let a = held
            .iter()
            .find(|a| {
                a["labels"]["alertname"] == "ClusterLateToWake" && a["labels"]["cluster"] == s
            })
            .unwrap();
        assert!(
            !a["status"]["inhibitedBy"].as_array().unwrap().is_empty(),
            "{s} is held back by its region's outage: {a}"
        );
    }
    // Long enough for a page that is not held back to arrive.
    tokio::time::sleep(EVAL * 2 + GROUP_WAIT * 2 + LOAD).await;
    for s in LATE_STORES {
        for alert in ["ClusterLateToWake", "ClusterDisconnected"] {
            assert_eq!(
                inbox.count(&format!("{alert} {s} firing")),
                0,
                "{s} paged: {:?}",
                inbox.keys()
            );
        }
    }

    // The skewed edge is in the hub's lag histogram, not in its median.
    let p50 = prom
        .value("histogram_quantile(0.5, sum by (le) (rate(fleet_hub_watch_event_lag_seconds_bucket[5m])))")
        .await
        .unwrap();
    let p90 = prom
        .value("histogram_quantile(0.9, sum by (le) (rate(fleet_hub_watch_event_lag_seconds_bucket[5m])))")
        .await
        .unwrap();
    println!("hub lag with one edge 10 min behind: p50 {p50:.2} s, p90 {p90:.0} s");
    assert!(p50 < 30.0, "{p50}");
    // The skewed edge's heartbeats are in the histogram (about 600 s old
    // by the edge's clock): the median leaves them out, not the data.
    let window = secs(started, Timestamp::now()).ceil() as u64 + 1;
    let late = prom
        .value(&format!(
            "sum(increase(fleet_hub_watch_event_lag_seconds_bucket{{le=\"+Inf\"}}[{window}s])) \
             - sum(increase(fleet_hub_watch_event_lag_seconds_bucket{{le=~\"512|512[.]0\"}}[{window}s]))"
        ))
        .await
        .unwrap_or(0.0);
    assert!(late > 0.0, "heartbeats older than 512 s judged: {late}");

    // ---- B: the leader loses its Lease; its process lives. ----
    let solo_active = prom
        .active_at("ClusterDisconnected", "cluster", "solo")
        .await;
    assert!(solo_active.is_some());
    let b_start = Timestamp::now();
    let not_connected =
        "sum(max by (status) (federation_clusters_total{status=~\"stale|unreachable\"}))";
    let dark_before = prom.value(not_connected).await.unwrap();
    let thief = steal_lease(admin_c.clone());
    let down = inbox
        .wait(
            "FleetHubDown critical firing",
            Duration::from_secs(45) + pipeline + LOAD * 3,
        )
        .await;
    let judged = prom
        .value("max(max_over_time(fleet_hub_last_judgement_timestamp_seconds[10m]))")
        .await
        .unwrap();
    let judged = Timestamp::from_second(judged as i64).unwrap();
    let silent = Duration::from_secs(monitoring::hub_silent_after());
    timing(
        "leader lost, process alive: the last full judgement → FleetHubDown delivered",
        secs(judged, down.at),
        silent,
        silent + SCRAPE + EVAL + GROUP_WAIT + Duration::from_secs(1),
    );
    // Nobody probes pull-ok now: once the hub has summed the fleet up
    // again while no hub judges (at the latest a minute on), the views
    // count it by its heartbeat's age (Stale?), but it pages nobody: not
    // even pending.
    wait_until(
        kubectl_fleet::operator::federation::REFRESH + LOAD * 3,
        "the hub's gauges counting pull-ok by its age",
        || async {
            prom.value(not_connected)
                .await
                .is_some_and(|n| n > dark_before)
        },
    )
    .await;
    tokio::time::sleep(SCRAPE + EVAL * 2 + LOAD).await;
    let b_secs = secs(b_start, Timestamp::now()).ceil() as u64 + 1;
    let pending = prom
        .query(&format!(
            "max_over_time(ALERTS{{alertname=\"ClusterDisconnected\", cluster=\"pull-ok\"}}[{b_secs}s])"
        ))
        .await;
    assert!(pending.is_empty(), "pull-ok while no hub led: {pending:?}");
    thief.abort();
    inbox
        .wait("FleetHubDown critical resolved", Duration::from_secs(60))
        .await;

    // ---- C: every hub replica killed, then started again. ----
    wait_until(
        Duration::from_secs(30),
        "the hub counting the fleet",
        || async { prom.value(monitoring::HUB_COUNTS_THE_FLEET).await.is_some() },
    )
    .await;
    let before: Vec<(String, Option<String>)> = {
        let mut v = Vec::new();
        for (name, key, value) in [
            ("ClusterDisconnected", "cluster", "solo"),
            ("ClusterDisconnected", "cluster", "pull-solo"),
            ("FleetGroupedOutage", "group", "eu-west"),
            ("FleetGroupedOutage", "group", "late-r"),
            ("ClusterLateToWake", "cluster", "late-1"),
            ("CredentialExpiring", "cluster", "expiring"),
        ] {
            v.push((
                format!("{name} {value}"),
                prom.active_at(name, key, value).await,
            ));
        }
        v
    };
    assert_eq!(inbox.count("FleetHubDown critical firing"), 1);
    hub.kill();
    let c_start = Timestamp::now();
    let down_dead = inbox
        .wait_nth(
            "FleetHubDown critical firing",
            2,
            Duration::from_secs(45) + pipeline + LOAD * 3,
        )
        .await;
    let judged = prom
        .value("max(max_over_time(fleet_hub_last_judgement_timestamp_seconds[10m]))")
        .await
        .unwrap();
    let judged = Timestamp::from_second(judged as i64).unwrap();
    timing(
        "every hub killed: the last full judgement → FleetHubDown delivered",
        secs(judged, down_dead.at),
        silent,
        silent + SCRAPE + EVAL + GROUP_WAIT + Duration::from_secs(1),
    );
    hub = Proc::spawn("hub", &operator_bin(), &hub_args, dir.join("hub-2.log"));
    inbox
        .wait_nth("FleetHubDown critical resolved", 2, Duration::from_secs(60))
        .await;
    wait_until(
        Duration::from_secs(30),
        "the new hub counting the fleet",
        || async { prom.value(monitoring::HUB_COUNTS_THE_FLEET).await.is_some() },
    )
    .await;
    // A few evaluations with the new hub's series: the same alerts, still
    // firing since before the kill.
    tokio::time::sleep(EVAL * 3 + SCRAPE + GROUP_WAIT + LOAD).await;
    for (alert, active) in &before {
        let (name, value) = alert.split_once(' ').unwrap();
        let key = if name == "FleetGroupedOutage" {
            "group"
        } else {
            "cluster"
        };
        assert!(active.is_some(), "{alert} was firing before the kill");
        assert_eq!(
            &prom.active_at(name, key, value).await,
            active,
            "{alert} is the same alert after the hub came back"
        );
    }

    // ---- Everything Alertmanager delivered: each page once, nothing
    // else, nothing resolved but FleetHubDown. docs/migrating.md's
    // replacement is not held while no hub is scraped (its page then
    // resolves and comes back: docs/migrating.md says so). ----
    let mut got: Vec<String> = inbox
        .all()
        .iter()
        .filter(|d| !(d.name() == "FleetSitesDisconnected" && d.at >= c_start))
        .map(Delivery::key)
        .collect();
    got.sort();
    let mut want: Vec<String> = [
        "ClusterDisconnected pull-solo firing",
        "ClusterDisconnected solo firing",
        "CredentialExpiring expiring firing",
        "FleetGroupedOutage eu-west firing",
        "FleetGroupedOutage late-r firing",
        "FleetHubDown critical firing",
        "FleetHubDown critical firing",
        "FleetHubDown critical resolved",
        "FleetHubDown critical resolved",
        "FleetSitesDisconnected pull-r firing",
        "FleetSitesDisconnected solo-r firing",
    ]
    .map(str::to_owned)
    .to_vec();
    want.sort();
    assert_eq!(got, want);
    // Never even pending: the cordoned site's page and the migrated one for
    // its region, and FleetHubLagging over the skewed edge.
    let whole = secs(started, Timestamp::now()).ceil() as u64 + 1;
    for series in [
        "ALERTS{alertname=\"ClusterDisconnected\", cluster=\"cordoned\"}",
        "ALERTS{alertname=\"FleetSitesDisconnected\", group=\"maint-r\"}",
        "ALERTS{alertname=\"FleetHubLagging\"}",
        "ALERTS{alertname=\"CredentialExpiring\", severity=\"warning\"}",
    ] {
        let seen = prom
            .query(&format!("max_over_time({series}[{whole}s])"))
            .await;
        assert!(seen.is_empty(), "{series}: {seen:?}");
    }
    println!("dark since {dark_at}; deliveries: {:?}", inbox.keys());
    drop(hub);
}

/// The liveness panels of the shipped dashboard say "down" while no hub
/// is scraped, never "No data": their expressions have a value (0 is
/// mapped to "down"), or the age keeps growing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_liveness_panels_have_a_value_while_no_hub_is_scraped() {
    let Some(tools) = Tools::get() else { return };
    let dir = TempDir::new("alerts-panels");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let admin_c = admin(&hub_sb).await;
    fleet_register(
        &hub_kc,
        "site-a",
        INTERVAL,
        &dir.join("site-a.kubeconfig"),
        &[],
    );
    let (cert, key, ca_pem) = localhost_cert(&dir);
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, &ca_pem).unwrap();
    let operator_kc = hub_operator_kubeconfig(&hub_sb, &dir).await;
    let hub_port = free_port();
    let mut hub = Proc::spawn(
        "hub",
        &operator_bin(),
        &live_hub_args(&operator_kc, hub_port, &cert, &key),
        dir.join("hub.log"),
    );
    let token = dir.join("scraper.token");
    support::write_private(&token, &reader_token(&admin_c).await);
    let prom = start_prometheus(
        &tools,
        &dir,
        &format!("127.0.0.1:{hub_port}"),
        &ca,
        &token,
        "127.0.0.1:9",
    )
    .await;
    wait_until(
        Duration::from_secs(60),
        "the hub judging, scraped",
        || async {
            prom.value("time() - max(fleet_hub_last_judgement_timestamp_seconds) < 10")
                .await
                .is_some()
        },
    )
    .await;
    let dashboard = monitoring::dashboard();
    let exprs = monitoring::liveness_expressions();
    assert!(exprs.len() >= 3, "{exprs:?}");
    for expr in &exprs {
        assert!(
            prom.value(expr).await.is_some(),
            "{expr} while the hub is up"
        );
    }
    hub.kill();
    wait_until(Duration::from_secs(30), "the hub's series gone", || async {
        prom.value("count(fleet_hub_leader)").await.is_none()
    })
    .await;
    for expr in &exprs {
        let v = prom.value(expr).await;
        assert!(v.is_some(), "{expr} has no data while the hub is down");
        let panel = dashboard["panels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["targets"][0]["expr"] == *expr)
            .unwrap();
        let defaults = &panel["fieldConfig"]["defaults"];
        assert_eq!(defaults["noValue"], monitoring::DOWN, "{panel}");
        if v == Some(0.0) {
            assert_eq!(
                defaults["mappings"][0]["options"]["0"]["text"],
                monitoring::DOWN,
                "{panel}"
            );
        } else {
            assert!(v.unwrap() > 0.0, "{expr}: the age since the last judgement");
        }
    }
}
