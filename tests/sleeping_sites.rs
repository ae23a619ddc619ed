//! Sites that sleep (issue 36, `spec.connectivity`): through the real
//! `kubectl fleet schedule` and `register` against kube-sandbox, a hub
//! whose clock the test drives across a Berlin night, and the views a
//! user reads. A store silent inside its offline window is `Sleeping`,
//! not Unreachable, while a store without a schedule silent as long is
//! Unreachable; past the window plus three intervals the store is late to
//! wake. The schedule command keeps the maintenance window, refuses bad
//! input in one line, and finishes its writes when stdout is closed.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use kube::api::{Api, Patch, PatchParams};
use kubectl_fleet::api::{FederatedCluster, Phase};
use kubectl_fleet::operator::hub::{Hub as HubOperator, HubConfig};
use serde_json::json;
use support::{Hub, Kubectl, Table, client_from_yaml, shell};
use tokio::sync::watch;

/// `kubectl fleet ARGS…` through the real kubectl.
fn kubectl_fleet(hub: &Hub, args: &[&str]) -> support::Run {
    let mut all = vec!["fleet"];
    all.extend_from_slice(args);
    Kubectl::new(&hub.kubeconfig).args(&all).run()
}

/// The PHASE cell of `site` in `kubectl fleet status`.
fn phase_cell(hub: &Hub, site: &str) -> String {
    let out = kubectl_fleet(hub, &["status"]).ok();
    Table::find(&out.stdout, "NAME ")
        .cell(site, "PHASE")
        .to_owned()
}

fn t(s: &str) -> jiff::Timestamp {
    s.parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_sleeps_through_its_night_and_is_late_to_wake_after_it() {
    let hub = Hub::new();
    // Registered with its schedule through the real kubectl; a second
    // store without one, and a third scheduled afterwards.
    let store7 = hub.register(
        "store-7",
        &["--offline", "22:00-06:00", "--tz", "Europe/Berlin"],
    );
    let store8 = hub.register("store-8", &[]);
    let scheduled = kubectl_fleet(
        &hub,
        &[
            "schedule",
            "store-8",
            "--offline",
            "23:00-06:00",
            "--tz",
            "Europe/Berlin",
        ],
    )
    .ok();
    assert_eq!(
        scheduled.stdout,
        "federatedcluster.federation.kubectl-fleet.dev/store-8 scheduled: offline 23:00-06:00 Europe/Berlin\n"
    );
    let store9 = hub.register("store-9", &[]);
    let admin: Api<FederatedCluster> = Api::all(hub.admin().await);
    assert_eq!(
        admin
            .get("store-7")
            .await
            .unwrap()
            .spec
            .connectivity
            .unwrap()
            .offline,
        ["22:00-06:00"]
    );

    // The hub's clock: 21:55 in Berlin on 10 January 2026 (20:55Z).
    let sim = Arc::new(AtomicI64::new(t("2026-01-10T20:55:00Z").as_second()));
    let clock = {
        let sim = sim.clone();
        Arc::new(move || jiff::Timestamp::from_second(sim.load(Ordering::SeqCst)).unwrap())
    };
    let (_lead_tx, lead_rx) = watch::channel(true);
    let operator = HubOperator::new(admin.clone(), HubConfig::default(), lead_rx).with_clock(clock);
    let set = |at: &str| sim.store(t(at).as_second(), Ordering::SeqCst);
    let judge = |site: &'static str| {
        let (admin, operator) = (admin.clone(), &operator);
        async move {
            let current = admin.get(site).await.unwrap();
            operator.reconcile_site(&current).await.unwrap();
            admin.get(site).await.unwrap()
        }
    };

    // Each store's last heartbeat, with its own token, at 21:55.
    for registered in [&store7, &store8, &store9] {
        let site = registered["site"].as_str().unwrap().to_owned();
        let api: Api<FederatedCluster> =
            Api::all(client_from_yaml(registered["config"].as_str().unwrap()).await);
        api.patch_status(
            &site,
            &PatchParams::default(),
            // store-8's edge renews its token by itself, but the token
            // expires at 05:00 Berlin, before the store is back at 06:00.
            &Patch::Merge(json!({"status": {
                "lastHeartbeatTime": "2026-01-10T20:55:00Z",
                "credentialExpirationTime": if site == "store-8" { "2026-01-11T04:00:00Z" } else { "2026-02-10T20:55:00Z" },
                "credentialRenewalTime": if site == "store-8" { "2026-01-11T03:00:00Z" } else { "2026-01-25T20:55:00Z" },
            }})),
        )
        .await
        .unwrap();
    }
    for site in ["store-7", "store-8", "store-9"] {
        assert_eq!(judge(site).await.phase(), Some(Phase::Connected), "{site}");
    }

    // 22:30 Berlin: store-7 is in its window, store-8's opens at 23:00,
    // store-9 has none.
    set("2026-01-10T21:30:00Z");
    assert_eq!(judge("store-7").await.phase(), Some(Phase::Sleeping));
    assert_eq!(judge("store-8").await.phase(), Some(Phase::Unreachable));
    assert_eq!(judge("store-9").await.phase(), Some(Phase::Unreachable));
    // This test judges site by site, so no hub has recorded a judgement
    // of the fleet: no view claims the store asleep on the hub's word
    // (whether its silence is still expected is the hub's to judge), it
    // shows its heartbeat's age, marked not judged.
    assert_eq!(phase_cell(&hub, "store-7"), "Unreachable?");
    hub.record_hub_judgement("fleet-operator-hub-0", jiff::Timestamp::now(), 15)
        .await;
    assert_eq!(phase_cell(&hub, "store-7"), "Sleeping");
    assert_eq!(phase_cell(&hub, "store-9"), "Unreachable");
    // 23:30: store-8 sleeps too, and its token would lapse before it is
    // back: it cannot renew while offline.
    set("2026-01-10T22:30:00Z");
    let asleep = judge("store-8").await;
    assert_eq!(asleep.phase(), Some(Phase::Sleeping));
    let credential = asleep
        .status
        .as_ref()
        .unwrap()
        .condition("CredentialExpiring")
        .unwrap();
    assert_eq!(
        (credential.status.as_str(), credential.reason.as_str()),
        ("True", "ExpiresBeforeReturn")
    );
    let described = kubectl_fleet(&hub, &["describe", "store-8"]).ok().stdout;
    assert!(described.contains("ExpiresBeforeReturn"), "{described}");
    assert!(
        described.contains("kubectl fleet rotate store-8"),
        "{described}"
    );
    // store-7's token outlives its night: no such warning.
    let store7 = judge("store-7").await;
    let credential = store7
        .status
        .as_ref()
        .unwrap()
        .condition("CredentialExpiring")
        .unwrap();
    assert_eq!(credential.reason, "RenewedByEdge");

    // 06:01:29 Berlin: still within the grace (3 intervals of 30 s).
    set("2026-01-11T05:01:29Z");
    assert_eq!(judge("store-7").await.phase(), Some(Phase::Sleeping));
    // 06:01:30: late to wake.
    set("2026-01-11T05:01:30Z");
    let late = judge("store-7").await;
    assert_eq!(late.phase(), Some(Phase::Unreachable));
    let connected = late
        .status
        .as_ref()
        .unwrap()
        .condition("Connected")
        .unwrap();
    assert_eq!(
        (connected.status.as_str(), connected.reason.as_str()),
        ("False", "LateToWake")
    );
    hub.record_hub_judgement("fleet-operator-hub-0", jiff::Timestamp::now(), 15)
        .await;
    assert_eq!(phase_cell(&hub, "store-7"), "Unreachable,LateToWake");
    let report = kubectl_fleet(&hub, &["status", "-o", "json"]).ok().json();
    let site = |name: &str| {
        report["sites"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(site("store-7")["lateToWake"], true);
    assert_eq!(site("store-8")["phase"], "Sleeping");
    assert_eq!(
        site("store-8")["connectivity"]["offline"],
        json!(["23:00-06:00"])
    );
    assert_eq!(report["summary"]["phases"]["sleeping"], 1);
    let wide = kubectl_fleet(&hub, &["status", "-o", "wide"]).ok();
    let wide = Table::find(&wide.stdout, "NAME ");
    assert_eq!(wide.cell("store-7", "REASON"), "LateToWake");
    assert_eq!(wide.cell("store-8", "REASON"), "Sleeping");
    assert_eq!(
        wide.cell("store-7", "SCHEDULE"),
        "22:00-06:00 Europe/Berlin"
    );
    assert_eq!(wide.cell("store-9", "SCHEDULE"), "-");
    let described = kubectl_fleet(&hub, &["describe", "store-8"]).ok().stdout;
    assert!(
        described.contains("offline 23:00-06:00 Europe/Berlin (asleep: silent as it expects)"),
        "{described}"
    );
    let names = kubectl_fleet(&hub, &["status", "--phase", "Sleeping", "-o", "name"]).ok();
    assert_eq!(
        names.stdout,
        "federatedcluster.federation.kubectl-fleet.dev/store-8\n"
    );
}

on_both_lanes! {
/// On the real API server too: the CRD's schema and rules admit what
/// `schedule` writes, and its merge patch (nulls for unset keys) replaces
/// the schedule whole.
async fn schedule_keeps_the_rest_of_the_spec_refuses_bad_input_and_survives_a_closed_pipe(lane) {
    let hub = Hub::on(lane);
    for site in ["store-1", "store-2", "store-3"] {
        hub.register(site, &["--tier", "critical"]);
    }
    kubectl_fleet(
        &hub,
        &["cordon", "store-1", "--for", "2h", "--reason", "refit"],
    )
    .ok();
    kubectl_fleet(&hub, &["schedule", "store-1", "--absent-up-to", "7d"]).ok();
    let out = kubectl_fleet(
        &hub,
        &[
            "schedule",
            "store-1",
            "--offline",
            "22:00-02:00",
            "--offline",
            "01:00-06:00",
            "--tz",
            "Europe/Berlin",
        ],
    )
    .ok();
    assert_eq!(
        out.stdout,
        "federatedcluster.federation.kubectl-fleet.dev/store-1 scheduled: offline 22:00-06:00 Europe/Berlin (was: absent up to 7d)\n"
    );
    assert!(
        out.stderr.contains(
            "note: offline windows 22:00-02:00, 01:00-06:00 overlap: merged into 22:00-06:00"
        ),
        "{}",
        out.stderr
    );
    let admin: Api<FederatedCluster> = Api::all(hub.admin().await);
    let spec = admin.get("store-1").await.unwrap().spec;
    assert_eq!(
        spec.maintenance.unwrap().reason.as_deref(),
        Some("refit"),
        "the window stays"
    );
    assert_eq!(spec.tier, kubectl_fleet::api::Tier::Critical);
    let c = spec.connectivity.unwrap();
    assert_eq!(
        c.absent_up_to_seconds, None,
        "replaced whole, nothing stale kept"
    );
    assert_eq!(c.offline, ["22:00-06:00"]);

    // Bad input: one line, non-zero, nothing written.
    for (args, says) in [
        (
            vec!["schedule", "store-2", "--offline", "22:00-06:00"],
            "add --tz ZONE",
        ),
        (
            vec![
                "schedule",
                "store-2",
                "--offline",
                "22:00-06:00",
                "--tz",
                "Europe/Berln",
            ],
            "unknown time zone",
        ),
        (
            vec!["schedule", "store-2", "--absent-up-to", "8d"],
            "a minute to a week",
        ),
        (
            vec!["schedule", "store-2", "--offline", "6pm-6am", "--tz", "UTC"],
            "e.g. 22:00-06:00",
        ),
        (
            vec![
                "schedule",
                "store-2",
                "--offline",
                "00:00-12:00",
                "--offline",
                "12:00-00:00",
                "--tz",
                "UTC",
            ],
            "no time online",
        ),
    ] {
        let run = hub.fleet(&args);
        let line = run.one_line_error();
        assert!(line.contains(says), "{args:?}: {line}");
    }
    assert_eq!(admin.get("store-2").await.unwrap().spec.connectivity, None);
    // An inventory with a misspelled field, or an overlap, is refused.
    std::fs::write(
        hub.dir.path().join("inv.yaml"),
        "apiVersion: federation.kubectl-fleet.dev/v1alpha1\nkind: FederatedCluster\nmetadata: {name: store-4}\nspec:\n  connectivity: {timeZone: UTC, ofline: ['22:00-06:00']}\n---\napiVersion: federation.kubectl-fleet.dev/v1alpha1\nkind: FederatedCluster\nmetadata: {name: store-5}\nspec:\n  connectivity: {timeZone: UTC, offline: ['22:00-02:00', '01:00-06:00']}\n---\napiVersion: federation.kubectl-fleet.dev/v1alpha1\nkind: FederatedCluster\nmetadata: {name: store-6}\nspec:\n  connectivity: {timeZone: Europe/Berlin, offline: ['22:00-06:00']}\n",
    )
    .unwrap();
    let run = shell(&hub, "kubectl fleet register -f inv.yaml --output-dir out");
    assert_ne!(run.code, 0, "{}", run.stderr);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains("unknown field \"spec.connectivity.ofline\" (did you mean \"spec.connectivity.offline\"?)"),
        "{said}"
    );
    assert!(
        said.contains("merged into 22:00-06:00: write that window instead"),
        "{said}"
    );
    assert!(admin.get_opt("store-4").await.unwrap().is_none());
    assert_eq!(
        admin
            .get("store-6")
            .await
            .unwrap()
            .spec
            .connectivity
            .unwrap()
            .time_zone
            .as_deref(),
        Some("Europe/Berlin")
    );

    // stdout closed at once: every site is still scheduled, and the lost
    // report is said (as for every mutating command).
    let run = shell(
        &hub,
        // The reader closes its end before the command starts (`go`).
        "mkfifo go; { read _ < go; kubectl fleet schedule store-1 store-2 store-3 --absent-up-to 36h; echo \"exit $?\" >&2; } | { exec 0<&-; echo > go; }",
    );
    assert!(
        run.stderr
            .contains("the command ran to its end (its changes are made)")
            && run.stderr.ends_with("exit 1\n"),
        "{}",
        run.stderr
    );
    for site in ["store-1", "store-2", "store-3"] {
        let c = admin.get(site).await.unwrap().spec.connectivity.unwrap();
        assert_eq!(c.absent_up_to_seconds, Some(36 * 3600), "{site}");
    }
    // A site that is not registered: the others are done, exit non-zero.
    let run = hub.fleet(&["schedule", "store-3", "nope", "--clear"]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("site nope not registered"),
        "{}",
        run.stderr
    );
    assert_eq!(admin.get("store-3").await.unwrap().spec.connectivity, None);
}
}

/// A Pull store with a schedule, probed by a real hub process: when its
/// member's API server stops, the failed probes meet silence inside its
/// longest absence (`--absent-up-to 1m`), so it is `Sleeping`, not Stale
/// like the same member without a schedule; past the absence plus three
/// intervals it is late to wake. Read through the real kubectl.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_store_whose_member_goes_silent_sleeps_then_is_late_to_wake() {
    use std::time::Duration;
    use support::{
        Proc, TempDir, admin, hub_args, hub_operator_kubeconfig, installed_hub, member_sandbox,
        operator_bin, register_pull, wait_until,
    };
    let dir = TempDir::new("pull-sleep");
    let hub_sb = kube_sandbox::Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let api: Api<FederatedCluster> = Api::all(admin(&hub_sb).await);
    let (store_sb, store_kc) = member_sandbox(&dir, "store", (0, 0)).await;
    let (plain_sb, plain_kc) = member_sandbox(&dir, "plain", (0, 0)).await;
    register_pull(&hub_kc, "pull-store", &store_kc, &["--absent-up-to", "1m"]);
    register_pull(&hub_kc, "pull-plain", &plain_kc, &[]);
    let operator_kc = hub_operator_kubeconfig(&hub_sb, &dir).await;
    // I = 10 s × 0.3 = 3 s.
    let mut args = hub_args(&operator_kc, "hub-1", 0.3);
    args.extend([
        "--probe-timeout".to_owned(),
        "4s".to_owned(),
        "--pull-allow-cidr".to_owned(),
        "127.0.0.0/8".to_owned(),
    ]);
    let _hub = Proc::spawn("hub", &operator_bin(), &args, dir.join("hub.log"));
    let phase = |site: &'static str| {
        let api = api.clone();
        async move { api.get(site).await.unwrap().phase() }
    };
    let reason = |site: &'static str| {
        let api = api.clone();
        async move {
            api.get(site)
                .await
                .unwrap()
                .status
                .and_then(|s| s.condition("Connected").map(|c| c.reason.clone()))
                .unwrap_or_default()
        }
    };
    let wait = Duration::from_secs(60);
    for site in ["pull-store", "pull-plain"] {
        wait_until(wait, &format!("{site} Connected"), || async {
            phase(site).await == Some(Phase::Connected)
        })
        .await;
    }
    // Both members go silent (their API servers stop).
    store_sb.shutdown();
    plain_sb.shutdown();
    let silent_at = std::time::Instant::now();
    wait_until(wait, "pull-plain Stale", || async {
        phase("pull-plain").await == Some(Phase::Stale)
    })
    .await;
    wait_until(wait, "pull-store Sleeping", || async {
        phase("pull-store").await == Some(Phase::Sleeping)
    })
    .await;
    assert_eq!(reason("pull-store").await, "Sleeping");
    let message = api
        .get("pull-store")
        .await
        .unwrap()
        .status
        .and_then(|s| s.condition("Connected").map(|c| c.message.clone()))
        .unwrap();
    assert!(message.contains("latest probe: "), "{message}");
    // As a user reads it (the hub's liveness record says it judges).
    let wide = Kubectl::new(&hub_kc)
        .args(["fleet", "status", "-o", "wide"])
        .run()
        .ok();
    let table = Table::find(&wide.stdout, "NAME ");
    assert_eq!(
        table.cell("pull-store", "PHASE"),
        "Sleeping",
        "{}",
        wide.stdout
    );
    assert_eq!(table.cell("pull-store", "REASON"), "Sleeping");
    assert_eq!(table.cell("pull-store", "SCHEDULE"), "\u{2264}1m");
    assert_eq!(table.cell("pull-plain", "SCHEDULE"), "-");
    assert!(
        table.cell("pull-plain", "PHASE").starts_with("Stale")
            || table.cell("pull-plain", "PHASE").starts_with("Unreachable"),
        "{}",
        wide.stdout
    );
    // The failed probe is a Warning for the member without a schedule,
    // Normal (and says why) for the store asleep as its schedule says.
    let events: Api<k8s_openapi::api::core::v1::Event> =
        Api::namespaced(admin(&hub_sb).await, "default");
    let probe_failed = |site: &'static str| {
        let events = events.clone();
        async move {
            let fields = format!("involvedObject.name={site},reason=ProbeFailed");
            let listed = events
                .list(&kube::api::ListParams::default().fields(&fields))
                .await
                .unwrap()
                .items;
            listed.first().map(|e| {
                (
                    e.type_.clone().unwrap_or_default(),
                    e.message.clone().unwrap_or_default(),
                )
            })
        }
    };
    wait_until(wait, "a ProbeFailed Event of each site", || async {
        probe_failed("pull-plain").await.is_some() && probe_failed("pull-store").await.is_some()
    })
    .await;
    let (plain_type, _) = probe_failed("pull-plain").await.unwrap();
    assert_eq!(plain_type, "Warning");
    let (store_type, store_note) = probe_failed("pull-store").await.unwrap();
    assert_eq!(store_type, "Normal", "{store_note}");
    assert!(
        store_note.contains("offline as its schedule says"),
        "{store_note}"
    );
    // Past the longest absence plus 3 intervals: late to wake.
    let late_by = Duration::from_secs(60) + Duration::from_secs(9);
    wait_until(late_by + wait, "pull-store late to wake", || async {
        reason("pull-store").await == "LateToWake"
    })
    .await;
    assert!(
        silent_at.elapsed() >= Duration::from_secs(60),
        "late only after its absence: {:?}",
        silent_at.elapsed()
    );
    assert!(matches!(
        phase("pull-store").await,
        Some(Phase::Stale | Phase::Unreachable)
    ));
    assert_ne!(reason("pull-plain").await, "LateToWake");
    // The hub's Event says what to check for a site it probes: the
    // member's API server, not an edge operator it does not have.
    let mut said = String::new();
    wait_until(wait, "the LateToWake Event in describe", || {
        let out = Kubectl::new(&hub_kc)
            .args(["fleet", "describe", "pull-store"])
            .run()
            .ok()
            .stdout;
        said = out.clone();
        async move { out.contains("LateToWake") }
    })
    .await;
    assert!(
        said.contains("member cluster's API server") && !said.contains("edge operator"),
        "{said}"
    );
}
