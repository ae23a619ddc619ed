//! Property tests (proptest, bounded case counts, stable Rust) of what
//! parses input a site, a member cluster or a user controls:
//!
//! - a site's status as the hub and the CLI decode it, then every judgment
//!   and view built from it: a status decodes (leniently, what does not
//!   read left out), a document that is no site may fail, nothing may panic, and a
//!   nonsense site never changes how the hub judges the others;
//! - kubeconfigs (the CLI's `--kubeconfig`, the edge's hub kubeconfig, the
//!   member kubeconfig of a Pull Secret) and the tokens inside them;
//! - site names and flag values on the command line.
//!
//! Run with more cases: `PROPTEST_CASES=5000 cargo nextest run --test integration fuzz_untrusted_input::`.

use std::time::Duration;

use clap::Parser as _;
use jiff::Timestamp;
use kubectl_fleet::api::FederatedCluster;
use kubectl_fleet::cli::Cli;
use kubectl_fleet::fleet::fixtures::fixture_now;
use kubectl_fleet::fleet::hub_status::{DEFAULT_CREDENTIAL_WARNING, Sighting, hub_status};
use kubectl_fleet::fleet::rbac::validate_site_name;
use kubectl_fleet::fleet::summary::effective_phase;
use kubectl_fleet::operator::credential::{HubKubeconfig, TokenClaims};
use kubectl_fleet::operator::federation::next_summary;
use kubectl_fleet::render;
use proptest::prelude::*;
use serde_json::{Value, json};

/// Any JSON value, a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        any::<String>().prop_map(Value::from),
        timestamp_text().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map(key(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Object keys: the status's own keys half of the time, so decoding gets
/// past the first field often.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "lastHeartbeatTime",
            "observedVersion",
            "kubernetesVersion",
            "nodeCount",
            "capacity",
            "gpusTotal",
            "gpusByVendor",
            "inference",
            "signals",
            "type",
            "severity",
            "workload",
            "kind",
            "name",
            "message",
            "firstSeen",
            "lastSeen",
            "count",
            "phase",
            "conditions",
            "credentialExpirationTime",
            "nodeInfo",
            "kernelVersion",
            "gpuModel",
            "values",
            "value",
            "nodes",
        ])
        .prop_map(str::to_owned),
        any::<String>(),
    ]
}

/// RFC 3339 text across jiff's whole range (year -9999 to 9999), plus
/// garbage that looks like a timestamp.
fn timestamp_text() -> impl Strategy<Value = String> {
    prop_oneof![
        (-377_705_116_800i64..=253_402_207_199).prop_map(|s| {
            Timestamp::from_second(s)
                .map(|t| t.to_string())
                .unwrap_or_default()
        }),
        "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,12})?(Z|[+-][0-9]{2}:[0-9]{2})",
    ]
}

/// Any integer, with the extremes (where sums overflow) as likely as the rest.
fn count() -> impl Strategy<Value = i64> {
    prop_oneof![
        any::<i64>(),
        Just(i64::MAX),
        Just(i64::MIN),
        Just(-1),
        Just(0)
    ]
}

/// A signal with any counts, times and text, valid enums.
fn signal() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec![
            "OOMKilled",
            "CrashLoopBackOff",
            "NodeNotReady",
            "Evicted",
        ]),
        prop::sample::select(vec!["critical", "high", "medium", "low"]),
        any::<String>(),
        any::<String>(),
        (timestamp_text(), timestamp_text()),
        count(),
        any::<Option<String>>(),
    )
        .prop_map(|(t, sev, ns, name, (first, last), count, message)| {
            json!({"type": t, "severity": sev, "namespace": ns,
                   "workload": {"kind": "Deployment", "name": name},
                   "message": message, "firstSeen": first, "lastSeen": last, "count": count})
        })
}

/// A status an edge could write if the schema let anything through: any
/// integers (negative, i64::MIN/MAX), any text, times from year -9999 to
/// 9999, duplicated signals.
fn nonsense_status() -> impl Strategy<Value = Value> {
    (
        timestamp_text(),
        any::<Option<String>>(),
        (count(), count(), count()),
        (count(), count(), count()),
        prop::collection::vec(signal(), 0..8),
        any::<bool>(),
        timestamp_text(),
    )
        .prop_map(
            |(hb, version, (nodes, total, alloc), (ready, failed, all), signals, dup, expires)| {
                let mut signals = signals;
                if dup {
                    signals.extend(signals.clone());
                }
                json!({
                    "lastHeartbeatTime": hb, "kubernetesVersion": version, "nodeCount": nodes,
                    "capacity": {"nodes": nodes, "gpusTotal": total, "gpusAllocatable": alloc,
                                 "gpusByVendor": {"nvidia.com/gpu": {"total": total, "allocatable": alloc}}},
                    "inference": {"servicesReady": ready, "servicesFailed": failed, "servicesTotal": all},
                    "signals": signals,
                    "credentialExpirationTime": expires,
                })
            },
        )
}

fn site_with_status(status: Value) -> serde_json::Result<FederatedCluster> {
    serde_json::from_value(json!({
        "apiVersion": "federation.kubectl-fleet.dev/v1alpha1",
        "kind": "FederatedCluster",
        "metadata": {"name": "hostile", "generation": 1, "resourceVersion": "7"},
        "spec": {"environment": "staging"},
        "status": status,
    }))
}

/// Everything the hub and the CLI do with decoded sites; panics propagate.
fn judge_and_render(sites: &[FederatedCluster], now: Timestamp) -> String {
    let interval = Duration::from_secs(10);
    for site in sites {
        let reported = site
            .status
            .as_ref()
            .and_then(|s| s.last_heartbeat_time.as_ref())
            .map(|t| t.0);
        let first = Sighting::fold(None, reported, site.phase(), interval, now);
        let live = Sighting::fold(Some(&first), reported, site.phase(), interval, now);
        for sighting in [first, live] {
            hub_status(
                site,
                &sighting,
                interval,
                DEFAULT_CREDENTIAL_WARNING,
                None,
                now,
            );
        }
    }
    let fleet = next_summary(sites, &[], now, &Default::default()).written;
    // No hub ever judged: every site's phase is also judged by its age.
    let hub = kubectl_fleet::fleet::liveness::hub_verdict(None, now);
    let report = render::incidents_report(
        sites,
        fleet.correlations,
        fleet.cascades,
        fleet.outages,
        &hub,
        now,
    );
    let mut table = render::status::StatusTable::new(now, hub.judging(), true);
    sites.iter().for_each(|s| table.push(s));
    let mut out: String = table.lines(true).collect();
    out.push_str(&render::render_incidents(&report, now, true));
    render::to_json(&report).expect("a decoded report serializes");
    render::to_json(&render::status_report(
        sites,
        &hub,
        &Default::default(),
        now,
    ))
    .expect("status serializes");
    out
}

fn good_site() -> FederatedCluster {
    FederatedCluster::test("good").connected().with_gpus(4)
}

proptest! {
    // Failures are kept as explicit regression tests, not in a seed file.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_status_document_decodes_or_fails_without_panicking(status in any_json()) {
        if let Ok(site) = site_with_status(status) {
            judge_and_render(&[site, good_site()], fixture_now());
        }
    }

    #[test]
    fn a_nonsense_site_never_changes_how_the_others_are_judged(status in nonsense_status(), now_s in 0i64..4_102_444_800) {
        let now = Timestamp::from_second(now_s).unwrap();
        let Ok(hostile) = site_with_status(status) else {
            // Not a site at all (the status itself always decodes).
            return Ok(());
        };
        let good = good_site();
        let alone = judge_and_render(std::slice::from_ref(&good), now);
        let together = judge_and_render(&[hostile.clone(), good.clone()], now);
        let escapes_only_colour = !together.contains("\u{1b}]") && !together.contains("\u{1b}[2J");
        prop_assert!(escapes_only_colour, "raw escape in:\n{}", together);
        // Column widths follow the widest cell; the cells themselves must not move.
        let good_line = |out: &str| {
            out.lines()
                .find(|l| l.starts_with("good "))
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        };
        prop_assert_eq!(good_line(&alone), good_line(&together));
        prop_assert_eq!(effective_phase(&good), kubectl_fleet::api::Phase::Connected);
    }

    #[test]
    fn any_jwt_shaped_token_decodes_or_is_ignored(
        parts in prop::collection::vec("[A-Za-z0-9_=+/-]{0,40}", 0..5),
        claims in any_json(),
    ) {
        use base64::Engine as _;
        TokenClaims::decode(&parts.join("."));
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(claims.to_string());
        TokenClaims::decode(&format!("e30.{payload}.sig"));
    }

    #[test]
    fn any_kubeconfig_is_read_or_refused_without_leaking_the_token(
        server in any::<String>(),
        token in any::<String>(),
        context in any::<String>(),
        ca in any::<String>(),
        garbage in any::<String>(),
        shape in 0u8..4,
    ) {
        let doc = json!({
            "apiVersion": "v1", "kind": "Config", "current-context": context,
            "clusters": [{"name": "hub", "cluster": {"server": server, "certificate-authority-data": ca}}],
            "users": [{"name": "site", "user": {"token": token}}],
            "contexts": [{"name": context, "context": {"cluster": "hub", "user": "site"}}],
        });
        let text = match shape {
            0 => serde_json::to_string(&doc).unwrap(),
            1 => garbage.clone(),
            2 => format!("apiVersion: v1\nkind: Config\ncurrent-context: {garbage}\nclusters: {garbage}\n"),
            _ => serde_json::to_string(&doc).unwrap().replace('"', &garbage),
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hub.kubeconfig");
        std::fs::write(&path, &text).unwrap();
        let read = HubKubeconfig::read(&path);
        let _ = std::fs::remove_file(&path);
        match read {
            Ok(kc) => {
                kc.claims();
                let _ = kc.server();
            }
            Err(e) => {
                let line = e.to_string();
                prop_assert!(!line.contains(&token) || token.len() < 8, "token leaked: {line}");
            }
        }
        // The client side of the same document, as the CLI and the Pull prober build it.
        if let Ok(kc) = kube::config::Kubeconfig::from_yaml(&text) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let opts = kubectl_fleet::k8s::ConnectOptions::default();
            if let Err(e) = rt.block_on(kubectl_fleet::k8s::Cluster::from_kubeconfig(kc, &opts)) {
                let line = e.to_string();
                prop_assert!(!line.contains(&token) || token.len() < 8, "token leaked: {line}");
            }
        }
    }

    #[test]
    fn any_site_name_or_flag_value_parses_or_is_refused(
        name in any::<String>(),
        flag in prop::sample::select(vec!["--tier", "--environment", "--region", "--heartbeat-interval", "--token-duration", "--server", "--display-name", "-o", "--output-file"]),
        value in any::<String>(),
    ) {
        if validate_site_name(&name).is_ok() {
            prop_assert!(name.len() <= 63 && !name.is_empty());
            prop_assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'));
        }
        for sub in ["register", "status", "rotate", "unregister", "incidents", "policy"] {
            let _ = Cli::try_parse_from(["kubectl-fleet", sub, name.as_str(), flag, value.as_str()]);
        }
    }
}
