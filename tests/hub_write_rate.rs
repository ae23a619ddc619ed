//! A fleet-wide silence is told at once and written at the rate (issue 35,
//! docs/architecture.md#status-writes): once a burst is spent, the hub
//! writes site statuses at most `--status-write-qps` a second, while the `fleet` summary, the
//! fleet gauges and the REST API hold its judgement as soon as it is made,
//! and its liveness record goes on saying it judges while the backlog is
//! written.

use crate::support;

use std::time::{Duration, Instant};

use kube::api::{Api, ListParams};
use kubectl_fleet::api::{Environment, FederatedCluster, FederationStatus, Phase};
use support::*;

const SITES: usize = 30;
const QPS: &str = "2";

fn site_name(i: usize) -> String {
    format!("store-{i:02}")
}

/// Each site's written phase, by name.
async fn written_phases(api: &Api<FederatedCluster>) -> Vec<(String, Option<Phase>)> {
    api.list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|s| (s.site_name().to_owned(), s.phase()))
        .collect()
}

fn dark(phase: Option<Phase>) -> bool {
    matches!(phase, Some(Phase::Stale | Phase::Unreachable))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_wide_silence_is_told_at_once_and_written_at_the_rate() {
    let sb = kube_sandbox::Sandbox::start();
    let client = admin(&sb).await;
    install_crds(&client).await;
    ensure_namespace(&client, "fleet-system").await;
    for i in 0..SITES {
        create_site(&client, &site_name(i), 20, Environment::Production).await;
    }
    let api: Api<FederatedCluster> = Api::all(client.clone());
    let summaries: Api<FederationStatus> = Api::all(client.clone());
    let dir = TempDir::new("write-rate");
    let kc = dir.join("admin.kubeconfig");
    sb.write_admin_kubeconfig(&kc).unwrap();
    // I = 20 s scaled by 0.3: Stale after 18 s of silence, Unreachable
    // after 60 s; liveness records every 4.5 s.
    let (mut args, ca) = hub_args_tls(&kc, &dir, "hub-1", 0.3);
    args.extend(
        [
            "--leader-elect",
            "false",
            "--status-write-qps",
            QPS,
            "--status-write-burst",
            QPS,
        ]
        .map(str::to_owned),
    );
    let hub = Proc::spawn("hub", &operator_bin(), &args, dir.join("hub.log"));

    // Every site heartbeats until all are Connected.
    let beating = tokio::spawn({
        let api = api.clone();
        async move {
            loop {
                for i in 0..SITES {
                    status_heartbeat(&api, &site_name(i)).await;
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    });
    wait_until(Duration::from_secs(120), "every site Connected", || async {
        written_phases(&api)
            .await
            .iter()
            .all(|(_, p)| *p == Some(Phase::Connected))
    })
    .await;
    // Then all fall silent at once (a WAN cut).
    beating.abort();
    let _ = beating.await;

    // The summary counts every site dark while the objects are still being
    // written: the hub told its judgement before writing it.
    let told = Instant::now() + Duration::from_secs(60);
    let (summary, still_connected) = loop {
        assert!(
            Instant::now() < told,
            "the summary never counted every site dark\n{}",
            hub.log_text()
        );
        let fleet = summaries.get("fleet").await.unwrap();
        let status = fleet.status.unwrap_or_default();
        if status.disconnected_clusters_total == SITES as i64 {
            let connected: Vec<String> = written_phases(&api)
                .await
                .into_iter()
                .filter(|(_, p)| !dark(*p))
                .map(|(n, _)| n)
                .collect();
            break (status, connected);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert!(
        !still_connected.is_empty(),
        "every site was written dark before the summary said so: the summary waited for the writes"
    );
    let judged_at = summary
        .hub
        .as_ref()
        .map(|h| h.last_judgement_time.0)
        .expect("a liveness record");

    // The REST API and the gauges say what the summary says.
    let addr = logged_addr(&hub.log_text(), "serving HTTPS");
    let reader = reader_token(&client).await;
    let site = &still_connected[0];
    let (code, body) = https_get(
        &addr,
        &format!("/api/v1/federation/clusters/{site}"),
        Some(&reader),
        &ca,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let entry: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(
        matches!(entry["phase"].as_str(), Some("Stale" | "Unreachable")),
        "the REST API shows {site} as its object said, not as the hub judged: {entry}"
    );

    // While the backlog is written, the hub keeps recording that it judges,
    // and says how many judgements wait for their write.
    let mut recorded_during_backlog = false;
    let mut most_pending = 0.0f64;
    let mut first_dark = None::<Instant>;
    let drained = Instant::now() + Duration::from_secs(90);
    loop {
        assert!(
            Instant::now() < drained,
            "the backlog was never written\n{}",
            hub.log_text()
        );
        let phases = written_phases(&api).await;
        let dark_now = phases.iter().filter(|(_, p)| dark(*p)).count();
        if dark_now > 0 && first_dark.is_none() {
            first_dark = Some(Instant::now());
        }
        let (code, body) = https_get(&addr, "/metrics", Some(&reader), &ca).await;
        assert_eq!(code, 200, "{body}");
        let scrape = Scrape::parse(&body);
        let pending = scrape
            .value("fleet_hub_status_writes_pending", &[])
            .unwrap_or_else(|| panic!("no fleet_hub_status_writes_pending: {body}"));
        most_pending = most_pending.max(pending);
        if dark_now == SITES {
            break;
        }
        let record = summaries.get("fleet").await.unwrap();
        if record
            .status
            .and_then(|s| s.hub)
            .is_some_and(|h| h.last_judgement_time.0 > judged_at)
        {
            recorded_during_backlog = true;
            let stale = scrape
                .value("federation_clusters_total", &[("status", "stale")])
                .unwrap_or_default()
                + scrape
                    .value("federation_clusters_total", &[("status", "unreachable")])
                    .unwrap_or_default();
            assert_eq!(
                stale, SITES as f64,
                "the gauges count what the summary counts: {body}"
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(
        recorded_during_backlog,
        "no liveness record while the backlog was written\n{}",
        hub.log_text()
    );
    assert!(most_pending >= 1.0, "the pending writes were never counted");
    // Written at the rate: 30 writes at 2 a second, a burst of 2, take
    // 14 s; unpaced they took well under a second.
    let spread = first_dark.unwrap().elapsed();
    eprintln!("{SITES} transitions written over {spread:?} at most {QPS}/s");
    assert!(
        spread >= Duration::from_secs(8),
        "{SITES} transitions written in {spread:?}: not paced at {QPS}/s"
    );
    drop(hub);
}
