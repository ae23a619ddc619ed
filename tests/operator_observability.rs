//! Observability against live operators on kube-sandbox: the metrics after
//! a scripted scenario (sites connect, one goes Stale, a correlation and a
//! cascade appear; each counter moves once, also across a failover), the
//! REST API's 401/403/200 matrix with the sandbox's real TokenReview and
//! SubjectAccessReview, its filters, and its body against
//! `kubectl fleet status -o json`.
//!
//! Intervals: `heartbeatIntervalSeconds: 10` scaled by 0.2, so I = 2 s.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use kube::api::Api;
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{FederatedCluster, Phase, SignalType, Tier};
use kubectl_fleet::fleet::policy::policy_for;
use kubectl_fleet::manifests::monitoring;
use kubectl_fleet::operator::metrics::{EDGE_METRIC_NAMES, HUB_METRIC_NAMES};
use serde_json::Value;
use support::*;

const SCALE: f64 = 0.2;

struct Member {
    _sb: Sandbox,
    kubeconfig: PathBuf,
}

/// A member with one ready node and, if `failing` names a Deployment, a
/// pod of it crash-looping since `since_mins` minutes ago.
async fn member(dir: &TempDir, name: &str, failing: Option<&str>, since_mins: i64) -> Member {
    let sb = Sandbox::start();
    let kubeconfig = dir.join(&format!("{name}-member.kubeconfig"));
    sb.write_admin_kubeconfig(&kubeconfig).unwrap();
    let pods: Vec<FailingPod<'_>> = failing
        .map(|deployment| FailingPod {
            namespace: "shop",
            deployment,
            reason: "CrashLoopBackOff",
        })
        .into_iter()
        .collect();
    seed_member(
        &admin(&sb).await,
        &[NodeSeed {
            name: &format!("{name}-node-1"),
            gpus: &[],
            ready: true,
        }],
        &pods,
    )
    .await;
    record_failing_since(
        &admin(&sb).await,
        jiff::Timestamp::now() - jiff::SignedDuration::from_mins(since_mins),
    )
    .await;
    Member {
        _sb: sb,
        kubeconfig,
    }
}

fn edge(dir: &TempDir, site: &str, m: &Member) -> Proc {
    let hub_kc = dir.join(&format!("{site}.kubeconfig"));
    Proc::spawn(
        site,
        &operator_bin(),
        &edge_args(site, &m.kubeconfig, &hub_kc, SCALE),
        dir.join(&format!("{site}.log")),
    )
}

fn hub(dir: &TempDir, hub_kc: &Path, id: &str, cert: &Path, key: &Path) -> Proc {
    let mut args = hub_args(hub_kc, id, SCALE);
    args.extend([
        "--tls-cert-file".into(),
        cert.display().to_string(),
        "--tls-private-key-file".into(),
        key.display().to_string(),
    ]);
    Proc::spawn(id, &operator_bin(), &args, dir.join(&format!("{id}.log")))
}

async fn phase(api: &Api<FederatedCluster>, site: &str) -> Option<Phase> {
    api.get(site).await.ok().and_then(|fc| fc.phase())
}

/// The token inside a kubeconfig written by `kubectl fleet register`.
fn kubeconfig_token(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .find_map(|l| l.trim().strip_prefix("token: "))
        .map(|t| t.trim().trim_matches('"').to_owned())
        .expect("token in kubeconfig")
}

struct Client<'a> {
    addr: String,
    token: &'a str,
    ca: &'a str,
}

impl Client<'_> {
    async fn get(&self, path: &str) -> (u16, String) {
        https_get(&self.addr, path, Some(self.token), self.ca).await
    }

    async fn json(&self, path: &str) -> Value {
        let (code, body) = self.get(path).await;
        assert_eq!(code, 200, "GET {path}: {body}");
        serde_json::from_str(&body).unwrap()
    }

    async fn scrape(&self) -> Scrape {
        let (code, body) = self.get("/metrics").await;
        assert_eq!(code, 200, "{body}");
        Scrape::parse(&body)
    }
}

fn names(report: &Value) -> Vec<String> {
    report["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

/// A report without what moves with the reader's clock (the hub's
/// liveness record is rewritten every liveness period).
fn without_clock(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("generatedAt");
    for s in v["sites"].as_array_mut().unwrap() {
        s.as_object_mut().unwrap().remove("lastHeartbeatAgeSeconds");
    }
    let hub = v["summary"].as_object_mut().unwrap().remove("hub").unwrap();
    assert_eq!(hub["state"], "Judging", "{hub}");
    v
}

on_both_lanes! {
multi_thread async fn metrics_and_rest_api_on_a_live_fleet(lane) {
    let dir = TempDir::new("obs");
    let hub_sb = lane.sandbox();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let kc = |s: &str| dir.join(&format!("{s}.kubeconfig"));
    // s1 (staging) and p1 (production) share a failing workload: a cascade.
    // With p2 (another workload) three sites share CrashLoopBackOff: a
    // correlation. x is cut off and goes Stale.
    let sites: [(&str, &[&str]); 4] = [
        (
            "site-s1",
            &["--environment", "staging", "--tier", "standard"],
        ),
        (
            "site-p1",
            &[
                "--environment",
                "production",
                "--tier",
                "critical",
                "--region",
                "eu-west-1",
            ],
        ),
        (
            "site-p2",
            &["--environment", "production", "--tier", "standard"],
        ),
        (
            "site-x",
            &["--environment", "development", "--tier", "non-critical"],
        ),
    ];
    for (s, extra) in sites {
        fleet_register(&hub_kc, s, 10, &kc(s), extra);
    }
    let admin_c = admin(&hub_sb).await;
    let api: Api<FederatedCluster> = Api::all(admin_c.clone());
    let reader = reader_token(&admin_c).await;
    // The three failing sites stand in one rack, x in another.
    for (s, rack) in [
        ("site-s1", "r7"),
        ("site-p1", "r7"),
        ("site-p2", "r7"),
        ("site-x", "r9"),
    ] {
        api.patch(
            s,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(serde_json::json!({"metadata": {"labels": {"rack": rack}}})),
        )
        .await
        .unwrap();
    }
    let site_token = kubeconfig_token(&kc("site-s1"));
    let (cert, key, ca) = localhost_cert(&dir);
    let operator_kc = hub_operator_kubeconfig(&hub_sb, &dir).await;

    let hub_a = hub(&dir, &operator_kc, "hub-a", &cert, &key);
    wait_until(Duration::from_secs(10), "hub-a leads", || async {
        lease_holder(&admin_c).await.as_deref() == Some("hub-a")
    })
    .await;
    let hub_b = hub(&dir, &operator_kc, "hub-b", &cert, &key);
    wait_until(Duration::from_secs(10), "both hubs serve", || async {
        [&hub_a, &hub_b]
            .iter()
            .all(|h| h.log_text().contains("hub started"))
    })
    .await;
    let a = Client {
        addr: logged_addr(&hub_a.log_text(), "serving HTTPS"),
        token: &reader,
        ca: &ca,
    };
    let b = Client {
        addr: logged_addr(&hub_b.log_text(), "serving HTTPS"),
        token: &reader,
        ca: &ca,
    };

    // The API answers 503 until the hub has listed the sites once.
    wait_until(
        Duration::from_secs(10),
        "the hub's cache is filled",
        || async { a.get("/api/v1/federation/status").await.0 == 200 },
    )
    .await;
    // The auth matrix, on the API and on /metrics; probes stay open.
    for path in ["/api/v1/federation/clusters", "/metrics"] {
        assert_eq!(https_get(&a.addr, path, None, &ca).await.0, 401, "{path}");
        assert_eq!(
            https_get(&a.addr, path, Some("not-a-token"), &ca).await.0,
            401,
            "{path}"
        );
        let (code, body) = https_get(&a.addr, path, Some(&site_token), &ca).await;
        assert_eq!(
            code, 403,
            "{path}: a site identity may not list sites or scrape: {body}"
        );
        let missing = if path == "/metrics" {
            "may not get /metrics"
        } else {
            "may not list federatedclusters"
        };
        assert!(body.contains(missing), "{body}");
        assert_eq!(a.get(path).await.0, 200, "{path}");
    }
    assert_eq!(https_get(&a.addr, "/readyz", None, &ca).await.0, 200);
    assert_eq!(https_get(&a.addr, "/healthz", None, &ca).await.0, 200);

    // Every site Pending before any edge runs.
    let pending = a.scrape().await;
    assert_eq!(
        pending.value("federation_clusters_total", &[("status", "pending")]),
        Some(4.0)
    );
    assert_eq!(pending.value("fleet_hub_leader", &[]), Some(1.0));
    assert_eq!(b.scrape().await.value("fleet_hub_leader", &[]), Some(0.0));

    let members = [
        // s1's `checkout` has been failing for longer than p1's: the
        // members' records make the cascade, whichever edge reports first.
        member(&dir, "s1", Some("checkout"), 10).await,
        member(&dir, "p1", Some("checkout"), 5).await,
        member(&dir, "p2", Some("payments"), 5).await,
        member(&dir, "x", None, 0).await,
    ];
    let mut edges: Vec<Proc> = ["site-s1", "site-p1", "site-p2", "site-x"]
        .iter()
        .zip(&members)
        .map(|(s, m)| edge(&dir, s, m))
        .collect();
    wait_until(Duration::from_secs(20), "all Connected", || async {
        for (s, _) in sites {
            if phase(&api, s).await != Some(Phase::Connected) {
                return false;
            }
        }
        true
    })
    .await;
    wait_until(
        Duration::from_secs(20),
        "a correlation and a cascade",
        || async {
            let m = a.scrape().await;
            m.value("cross_cluster_correlations_active", &[]) == Some(1.0)
                && m.value("cascade_detected_total", &[]).is_some()
        },
    )
    .await;

    // x is cut off: Stale.
    edges[3].kill();
    wait_until(Duration::from_secs(15), "site-x Stale", || async {
        phase(&api, "site-x").await == Some(Phase::Stale)
    })
    .await;
    wait_until(Duration::from_secs(10), "gauges follow", || async {
        a.scrape()
            .await
            .value("federation_clusters_total", &[("status", "stale")])
            == Some(1.0)
    })
    .await;
    let m = a.scrape().await;
    let expect = |name: &str, labels: &[(&str, &str)], want: f64| {
        assert_eq!(m.value(name, labels), Some(want), "{name}{labels:?}");
    };
    for (status, n) in [
        ("connected", 3.0),
        ("stale", 1.0),
        ("unreachable", 0.0),
        ("pending", 0.0),
    ] {
        expect("federation_clusters_total", &[("status", status)], n);
    }
    expect(
        "federation_cluster_nodes",
        &[("cluster", "site-p1"), ("region", "eu-west-1")],
        1.0,
    );
    expect("federation_cluster_nodes", &[("cluster", "site-s1")], 1.0);
    expect("cross_cluster_correlations_active", &[], 1.0);
    // Exactly once each: three new signals, one cascade.
    expect(
        "cross_cluster_issues_total",
        &[("signal_type", "CrashLoopBackOff")],
        3.0,
    );
    expect(
        "cascade_detected_total",
        &[("source_tier", "standard"), ("target_tier", "critical")],
        1.0,
    );
    let sev = SignalType::CrashLoopBackOff.default_severity();
    for (tier, n) in [(Tier::Standard, 2.0), (Tier::Critical, 1.0)] {
        expect(
            "federation_remediation_policy_applied_total",
            &[
                ("tier", tier.as_str()),
                ("mode", policy_for(Some(tier), sev).mode.as_str()),
            ],
            n,
        );
    }
    assert_eq!(m.sum("cross_cluster_issues_total"), 3.0);
    assert_eq!(m.sum("cascade_detected_total"), 1.0);
    assert_eq!(m.sum("federation_remediation_policy_applied_total"), 3.0);
    assert!(m.value("fleet_hub_status_writes_total", &[]).unwrap() >= 5.0);
    assert!(m.value("fleet_hub_reconciles_total", &[]).unwrap() >= 5.0);
    expect(
        "fleet_hub_reconcile_errors_total",
        &[("reason", "write")],
        0.0,
    );
    assert!(
        m.value("fleet_hub_watch_event_lag_seconds_count", &[])
            .unwrap()
            >= 3.0
    );
    // Types and every documented name on the wire.
    for (family, ty) in [
        ("federation_clusters_total", "gauge"),
        ("federation_cluster_nodes", "gauge"),
        ("cross_cluster_issues", "counter"),
        ("cross_cluster_correlations_active", "gauge"),
        ("cascade_detected", "counter"),
        ("federation_remediation_policy_applied", "counter"),
        ("fleet_hub_watch_event_lag_seconds", "histogram"),
    ] {
        assert_eq!(
            m.types.get(family).map(String::as_str),
            Some(ty),
            "{family}"
        );
    }
    // These sites are Push: each new heartbeat carries the edge's previous
    // report round trip, which the leader observes as the site's health
    // check, and the credential expiry each edge reported is a hub gauge.
    assert_eq!(
        m.types
            .get("federation_health_check_duration_seconds")
            .map(String::as_str),
        Some("histogram")
    );
    for site in ["site-p1", "site-p2", "site-s1"] {
        assert!(
            m.value(
                "federation_health_check_duration_seconds_count",
                &[("cluster", site)]
            )
            .is_some_and(|n| n >= 1.0),
            "{site} has no health check"
        );
        let expires = m
            .value(
                "federation_cluster_credential_expiration_timestamp_seconds",
                &[("cluster", site)],
            )
            .unwrap_or_default();
        assert!(
            expires > jiff::Timestamp::now().as_second() as f64,
            "{site} credential expiry {expires}"
        );
    }
    // Both replicas say when a hub last judged every site: a moment ago.
    for (replica, scrape) in [("leader", &m), ("standby", &b.scrape().await)] {
        let judged = scrape
            .value("fleet_hub_last_judgement_timestamp_seconds", &[])
            .unwrap_or_default();
        let age = jiff::Timestamp::now().as_second() as f64 - judged;
        assert!((0.0..30.0).contains(&age), "{replica}: judged {age}s ago");
    }
    // Only once a hub restored a site's conditions, a site is in a
    // maintenance window, or there is a grouped outage (tests/hub_ops.rs
    // scrapes those), or a site is late to wake or due back after its
    // credential expires (per-site series; the metrics unit tests set them).
    let after_restoration = [
        "fleet_hub_status_restored_total",
        "federation_cluster_maintenance",
        "federation_grouped_outage_clusters",
        "federation_cluster_late_to_wake",
        "federation_cluster_credential_expires_before_return",
    ];
    for name in HUB_METRIC_NAMES
        .iter()
        .filter(|n| !after_restoration.contains(n))
    {
        assert!(
            m.exposes(name) || m.exposes(&format!("{name}_count")),
            "{name} not exposed"
        );
    }
    // Every metric the alert rules and the dashboard query is on the wire.
    for expr in monitoring::expressions() {
        for name in monitoring::metric_names(&expr) {
            if after_restoration.contains(&name.as_str()) {
                continue;
            }
            assert!(
                m.exposes(&name),
                "{name} (in {expr}) is not exposed by the hub"
            );
        }
    }
    // The standby counts nothing fleet-wide but knows the gauges.
    let sb = b.scrape().await;
    for counter in [
        "cascade_detected_total",
        "cross_cluster_issues_total",
        "federation_remediation_policy_applied_total",
    ] {
        assert_eq!(sb.sum(counter), 0.0, "standby {counter}");
    }
    wait_until(
        Duration::from_secs(10),
        "the standby's gauges follow",
        || async {
            let sb = b.scrape().await;
            sb.value("federation_clusters_total", &[("status", "connected")]) == Some(3.0)
                && sb.value("federation_clusters_total", &[("status", "stale")]) == Some(1.0)
        },
    )
    .await;

    // The REST API: filters, one site, incidents.
    let all = a.json("/api/v1/federation/clusters").await;
    assert_eq!(names(&all), ["site-p1", "site-p2", "site-s1", "site-x"]);
    let prod = a
        .json("/api/v1/federation/clusters?environment=production")
        .await;
    assert_eq!(names(&prod), ["site-p1", "site-p2"]);
    let crit = a
        .json("/api/v1/federation/clusters?tier=critical&region=eu-west-1")
        .await;
    assert_eq!(names(&crit), ["site-p1"]);
    let stale = a.json("/api/v1/federation/clusters?phase=Stale").await;
    assert_eq!(names(&stale), ["site-x"]);
    let (code, body) = a.get("/api/v1/federation/clusters?tier=gold").await;
    assert_eq!(code, 400);
    assert!(body.contains("critical, standard, non-critical"), "{body}");
    // A parameter a route does not take is refused, not ignored.
    let (code, body) = a
        .get("/api/v1/federation/clusters?status=disconnected")
        .await;
    assert_eq!(code, 400, "{body}");
    let refused: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        refused["message"],
        "unknown query parameter \"status\": /api/v1/federation/clusters takes tier, \
         environment, region, phase, version, incident, limit or continue"
    );
    for path in [
        "/api/v1/federation/status?phase=Stale",
        "/api/v1/federation/correlations?limit=1",
        "/api/v1/federation/clusters?tier=critical&tier=standard",
        "/api/v1/federation/clusters?limit=0",
        "/api/v1/federation/clusters?continue=bogus",
    ] {
        assert_eq!(a.get(path).await.0, 400, "{path}");
    }
    // Pages of sites, by name, as `kubectl get --chunk-size` reads them;
    // the summary counts every site the query matches.
    let first = a.json("/api/v1/federation/clusters?limit=3").await;
    assert_eq!(names(&first), ["site-p1", "site-p2", "site-s1"]);
    assert_eq!(first["metadata"]["remainingItemCount"], 1, "{first}");
    assert_eq!(first["summary"]["sites"], 4);
    let token = first["metadata"]["continue"].as_str().unwrap();
    let second = a
        .json(&format!(
            "/api/v1/federation/clusters?limit=3&continue={token}"
        ))
        .await;
    assert_eq!(names(&second), ["site-x"]);
    assert_eq!(second["metadata"]["continue"], Value::Null);
    assert_eq!(all["metadata"]["remainingItemCount"], 0);
    let one = a.json("/api/v1/federation/clusters/site-p1").await;
    assert_eq!(one["tier"], "critical");
    assert_eq!(a.get("/api/v1/federation/clusters/nope").await.0, 404);
    let summary = a.json("/api/v1/federation/status").await;
    assert_eq!(summary["phases"]["stale"], 1);
    assert_eq!(summary["hub"]["state"], "Judging", "{summary}");
    assert_eq!(summary["hub"]["leader"], "hub-a", "{summary}");
    let corr = a.json("/api/v1/federation/correlations").await;
    assert_eq!(corr.as_array().unwrap().len(), 1);
    assert_eq!(
        corr[0]["clusters"],
        serde_json::json!(["site-p1", "site-p2", "site-s1"])
    );
    let casc = a.json("/api/v1/federation/cascades").await;
    assert_eq!(casc[0]["source"], "site-s1");
    assert_eq!(casc[0]["target"], "site-p1");
    // The hub's decision on each signal, as the REST API and the CLI show
    // it: s1's own (standard tier, high) would need an Operator; in a
    // correlation with the critical p1 it needs an Admin, raised by it.
    let s1 = a.json("/api/v1/federation/clusters/site-s1").await;
    let crash = s1["signals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["type"] == "CrashLoopBackOff")
        .unwrap()
        .clone();
    assert_eq!(crash["severity"], "high", "{crash}");
    assert_eq!(crash["decidedSeverity"], "critical", "{crash}");
    assert_eq!(crash["decidedTier"], "critical", "{crash}");
    assert_eq!(crash["remediation"]["role"], "Admin", "{crash}");
    assert_eq!(
        crash["raisedBy"],
        serde_json::json!([corr[0]["id"]]),
        "{crash}"
    );
    assert_eq!(corr[0]["remediation"]["role"], "Admin", "{corr}");
    let cli = fleet_cli(&hub_kc, &["status", "site-s1", "-o", "json"]);
    let cli: Value = serde_json::from_str(&cli[cli.find('{').unwrap()..]).unwrap();
    let decisions = |signals: &Value| -> Vec<Value> {
        signals
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                serde_json::json!([
                    s["type"],
                    s["remediation"],
                    s["decidedSeverity"],
                    s["decidedTier"],
                    s["raisedBy"]
                ])
            })
            .collect()
    };
    assert_eq!(
        decisions(&cli["sites"][0]["signals"]),
        decisions(&s1["signals"]),
        "the CLI and the REST API decide alike"
    );
    let page = a.json("/api/v1/federation/cascades?limit=1").await;
    assert_eq!(page["items"][0], casc[0], "{page}");
    assert_eq!(
        page["metadata"]["remainingItemCount"],
        casc.as_array().unwrap().len() - 1
    );
    // An incident's sites in pages; the incident names the page's sites
    // and counts all of them.
    let xc = corr[0]["id"].as_str().unwrap();
    let one = a
        .json(&format!("/api/v1/federation/incidents/{xc}?limit=2"))
        .await;
    // What the correlated sites share that x does not: their rack (every
    // edge runs one build on one Kubernetes version, so those are not
    // named, nor are the environments and regions they do not share).
    let rack = serde_json::json!([{
        "attribute": "label", "key": "rack", "value": "r7",
        "affected": 3, "affectedTotal": 3, "unaffected": 0, "unaffectedTotal": 1,
    }]);
    assert_eq!(corr[0]["commonFactors"], rack, "{corr}");
    assert_eq!(one["commonFactors"], rack, "{one}");
    assert_eq!(one["correlation"]["commonFactors"], rack, "{one}");
    assert_eq!(
        one["correlation"]["clusters"],
        serde_json::json!(["site-p1", "site-p2"])
    );
    assert_eq!(one["correlation"]["clustersTotal"], 3);
    let token = one["metadata"]["continue"].as_str().unwrap();
    let rest = a
        .json(&format!(
            "/api/v1/federation/incidents/{xc}?limit=2&continue={token}"
        ))
        .await;
    assert_eq!(rest["sites"][0]["name"], "site-s1", "{rest}");
    assert_eq!(rest["metadata"]["continue"], Value::Null);

    // One incident by its id, and the sites in it, as `kubectl fleet
    // incidents ID` and `status --incident ID` show them.
    for (id, kind) in [
        (corr[0]["id"].as_str().unwrap(), "Correlation"),
        (casc[0]["id"].as_str().unwrap(), "Cascade"),
    ] {
        let mut one = a.json(&format!("/api/v1/federation/incidents/{id}")).await;
        assert_eq!(one["type"], kind, "{one}");
        assert_eq!(one["metadata"]["continue"], Value::Null);
        one.as_object_mut().unwrap().remove("metadata");
        let sites: Vec<String> = one["sites"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_owned())
            .collect();
        let within = a
            .json(&format!("/api/v1/federation/clusters?incident={id}"))
            .await;
        assert_eq!(names(&within), sites, "{id}");
        let cli = fleet_cli(&hub_kc, &["incidents", id, "-o", "json"]);
        let cli: Value = serde_json::from_str(&cli[cli.find('{').unwrap()..]).unwrap();
        assert_eq!(
            cli["sites"], one["sites"],
            "{id}: the CLI and the REST API agree"
        );
    }
    assert_eq!(
        a.get("/api/v1/federation/incidents/xc-ffffffff").await.0,
        404
    );
    assert_eq!(a.get("/api/v1/federation/incidents/bogus").await.0, 400);
    assert_eq!(
        a.json("/api/v1/federation/outages").await,
        serde_json::json!([])
    );
    // Edge versions, and the filter by one.
    let version = env!("CARGO_PKG_VERSION");
    let summary = a.json("/api/v1/federation/status").await;
    assert_eq!(summary["edgeVersions"][version], 4, "{summary}");
    let by_version = a
        .json(&format!("/api/v1/federation/clusters?version={version}"))
        .await;
    assert_eq!(names(&by_version).len(), 4);
    let none = a.json("/api/v1/federation/clusters?version=9.9.9").await;
    assert!(names(&none).is_empty());
    // A maintenance window shows in the REST API once the hub sees it.
    fleet_cli(
        &hub_kc,
        &["cordon", "site-p2", "--for", "1h", "--reason", "rack move"],
    );
    wait_until(
        Duration::from_secs(10),
        "the REST API shows the window",
        || async {
            let one = a.json("/api/v1/federation/clusters/site-p2").await;
            one["inMaintenance"] == true && one["maintenance"]["reason"] == "rack move"
        },
    )
    .await;
    assert_eq!(a.json("/api/v1/federation/status").await["maintenance"], 1);
    fleet_cli(&hub_kc, &["uncordon", "site-p2"]);

    // Failover: the new leader counts no cascade or signal again.
    let mut hub_a = hub_a;
    hub_a.kill();
    wait_until(Duration::from_secs(15), "hub-b leads", || async {
        b.scrape().await.value("fleet_hub_leader", &[]) == Some(1.0)
    })
    .await;
    // A fleet summary written by the new leader proves it re-judged.
    let fs: Api<kubectl_fleet::api::FederationStatus> = Api::all(admin_c.clone());
    let before = fs.get("fleet").await.unwrap().metadata.resource_version;
    // Every edge stops: p1, p2 and s1 go Stale (x is Unreachable by now),
    // written by the new leader; then the fleet is quiet for ~14 s.
    for e in &mut edges {
        e.kill();
    }
    wait_until(
        Duration::from_secs(20),
        "Stale, summary rewritten",
        || async {
            for s in ["site-p1", "site-p2", "site-s1"] {
                if phase(&api, s).await != Some(Phase::Stale) {
                    return false;
                }
            }
            phase(&api, "site-x").await == Some(Phase::Unreachable)
                && fs.get("fleet").await.unwrap().metadata.resource_version != before
        },
    )
    .await;
    let after = b.scrape().await;
    for counter in [
        "cascade_detected_total",
        "cross_cluster_issues_total",
        "federation_remediation_policy_applied_total",
    ] {
        assert_eq!(after.sum(counter), 0.0, "new leader {counter}");
    }

    // The quiet fleet: the REST body equals `kubectl fleet status -o json`
    // once the hub's cache has caught up with the API server.
    wait_until(Duration::from_secs(10), "the cache follows", || async {
        let r = b.json("/api/v1/federation/clusters?phase=Stale").await;
        r["sites"].as_array().unwrap().len() == 3
    })
    .await;
    let mut rest = b.json("/api/v1/federation/clusters").await;
    assert_eq!(
        rest.as_object_mut().unwrap().remove("metadata"),
        Some(serde_json::json!({"continue": null, "remainingItemCount": 0}))
    );
    let out = Command::new(cli_bin())
        .args(["--kubeconfig"])
        .arg(&hub_kc)
        .args(["status", "-o", "json"])
        .env("KUBECACHEDIR", dir.join("kube-cache"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(without_clock(rest), without_clock(cli));

    // No token value reached any log.
    for p in [&hub_a, &hub_b] {
        let log = p.log_text();
        assert!(
            !log.contains(&reader) && !log.contains(&site_token),
            "{}",
            p.name
        );
    }
}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edge_metrics_count_reports_and_expose_the_credential_expiry() {
    let dir = TempDir::new("obs-edge");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    fleet_register(&hub_kc, "site-e", 10, &dir.join("site-e.kubeconfig"), &[]);
    let m = member(&dir, "e", None, 0).await;
    let (cert, key, ca) = localhost_cert(&dir);
    let mut args = edge_args(
        "site-e",
        &m.kubeconfig,
        &dir.join("site-e.kubeconfig"),
        SCALE,
    );
    args.extend([
        "--tls-cert-file".into(),
        cert.display().to_string(),
        "--tls-private-key-file".into(),
        key.display().to_string(),
    ]);
    let e = Proc::spawn("site-e", &operator_bin(), &args, dir.join("e.log"));
    wait_until(Duration::from_secs(10), "edge serves", || async {
        e.log_text().contains("edge started")
    })
    .await;
    let addr = logged_addr(&e.log_text(), "serving HTTPS");
    // A steady edge writes its status once, then renews its lease: the
    // two are counted apart.
    wait_until(
        Duration::from_secs(15),
        "a report and two renewals",
        || async {
            let (_, body) = https_get(&addr, "/metrics", None, &ca).await;
            let s = Scrape::parse(&body);
            s.value("fleet_edge_reports_total", &[])
                .is_some_and(|n| n >= 1.0)
                && s.value("fleet_edge_lease_renewals_total", &[])
                    .is_some_and(|n| n >= 2.0)
        },
    )
    .await;
    let (code, body) = https_get(&addr, "/metrics", None, &ca).await;
    assert_eq!(code, 200);
    let s = Scrape::parse(&body);
    let expiry = s
        .value("fleet_edge_credential_expiry_timestamp_seconds", &[])
        .unwrap();
    let api: Api<FederatedCluster> = Api::all(admin(&hub_sb).await);
    let reported = api
        .get("site-e")
        .await
        .unwrap()
        .status
        .unwrap()
        .credential_expiration_time
        .unwrap();
    assert_eq!(expiry as i64, reported.0.as_second());
    // Status patches only: a renewal's body is always the same few bytes.
    assert_eq!(
        s.value("fleet_edge_report_bytes_count", &[]),
        s.value("fleet_edge_reports_total", &[])
    );

    // The hub's API server goes away: failures are counted by cause.
    hub_sb.controls().outage_for(Duration::from_secs(4));
    wait_until(
        Duration::from_secs(15),
        "an unreachable failure",
        || async {
            let (_, body) = https_get(&addr, "/metrics", None, &ca).await;
            Scrape::parse(&body)
                .value(
                    "fleet_edge_report_failures_total",
                    &[("cause", "unreachable")],
                )
                .is_some_and(|n| n >= 1.0)
        },
    )
    .await;
    let (_, body) = https_get(&addr, "/metrics", None, &ca).await;
    let s = Scrape::parse(&body);
    // The hub's rules and dashboard never query an edge: its Prometheus
    // does not scrape member clusters.
    for expr in monitoring::expressions() {
        assert!(!expr.contains("fleet_edge_"), "{expr}");
    }
    for name in EDGE_METRIC_NAMES {
        assert!(
            s.exposes(name) || s.exposes(&format!("{name}_count")),
            "{name}"
        );
    }
}
