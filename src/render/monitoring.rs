//! The monitoring files shipped with the operator (docs/observability.md): the
//! Prometheus alert rules (a plain rule file for `promtool`, and the same
//! groups as a `PrometheusRule`), a Grafana dashboard, a ServiceMonitor
//! and the dashboard's ConfigMap. Generated from here into
//! `deploy/monitoring/` by `tools/regen.sh`, and printed by
//! `kubectl fleet install --with-monitoring`.
//!
//! Every expression queries only metrics the hub exposes (see
//! `operator::metrics::HUB_METRIC_NAMES`): the rules and the dashboard are
//! installed next to the hub, whose Prometheus scrapes the hub's Service;
//! edges run behind NAT on member clusters and are not scraped there, so
//! nothing here may depend on a `fleet_edge_*` series (what an edge knows
//! that matters to the fleet — its credential's expiry, its report round
//! trip — reaches the hub in the site's status and is exported by the hub).
//! `tests/operator_observability.rs` checks each name against a live scrape.

use serde_json::{Value, json};

/// Namespace of the monitoring objects (the operator's).
const NAMESPACE: &str = crate::fleet::rbac::FLEET_NAMESPACE;

/// Name of the PrometheusRule, ServiceMonitor and dashboard ConfigMap.
pub const MONITORING_NAME: &str = "fleet-operator";

/// The name of the HTTPS port of the operator's Service.
pub const METRICS_PORT_NAME: &str = "https";

/// Seconds after which `CredentialExpiring` warns (7 days, the hub's
/// default `--credential-warning`) and turns critical (1 day).
const CREDENTIAL_WARN: u64 = 7 * 86_400;
const CREDENTIAL_CRITICAL: u64 = 86_400;
/// How long past its renewal time a self-renewing edge's credential may
/// be before `CredentialExpiring` stops trusting the renewal.
const RENEWAL_GRACE: u64 = 15 * 60;

/// `FleetHubDown` fires when the last full judgement a hub recorded is
/// older than this: the readers' threshold for the default cadence
/// (`fleet::liveness`, 3 × 15 s).
fn hub_silent_after() -> u64 {
    crate::fleet::liveness::LIVENESS_INTERVAL.as_secs()
        * u64::from(crate::fleet::liveness::SILENT_INTERVALS)
}

fn alert(
    name: &str,
    expr: &str,
    for_: &str,
    severity: &str,
    summary: &str,
    description: &str,
) -> Value {
    let mut rule = json!({
        "alert": name,
        "expr": expr,
        "labels": { "severity": severity },
        "annotations": { "summary": summary, "description": description },
    });
    if !for_.is_empty() {
        rule["for"] = json!(for_);
    }
    rule
}

/// The rule groups (the `spec` of the PrometheusRule, and a rule file).
pub fn rule_groups() -> Value {
    let disconnected = |status: &str, severity: &str, for_: &str| {
        alert(
            "ClusterDisconnected",
            &format!(
                "max by (cluster, group, status) (federation_cluster_disconnected{{status=\"{status}\"}}) \
                 unless on (cluster) (max by (cluster) (federation_cluster_maintenance) > 0)"
            ),
            for_,
            severity,
            &format!("Fleet site {{{{ $labels.cluster }}}} is {status}"),
            &format!(
                "The hub has not seen a heartbeat of site {{{{ $labels.cluster }}}} for 3 intervals \
                 (stale) or 10 intervals (unreachable); it is {status}. Run `kubectl fleet describe \
                 {{{{ $labels.cluster }}}}` (its conditions and recent events name the cause), then \
                 check the edge operator on that member cluster (token, network, hub). A site in a \
                 maintenance window (`kubectl fleet cordon`) raises no such alert, and while \
                 FleetGroupedOutage fires for its group ({{{{ $labels.group }}}}) Alertmanager's \
                 inhibition rule holds this one back (docs/observability.md). `kubectl fleet \
                 status --phase {}` lists every such site.",
                capitalized(status)
            ),
        )
    };
    let cascade = |target_tier: &str, severity: &str| {
        alert(
            "CascadeDetected",
            &format!(
                "sum by (source_tier, target_tier) (increase(cascade_detected_total{{target_tier=\"{target_tier}\"}}[15m])) > 0"
            ),
            "",
            severity,
            &format!("A failure spread from a lower environment to {target_tier} production"),
            "A failure first seen on a {{ $labels.source_tier }} site in a lower environment \
             reached a {{ $labels.target_tier }} production site within 24 hours. Run \
             `kubectl fleet incidents` to see the workload and both sites, and stop the \
             rollout that carries it.",
        )
    };
    let credential = |left: u64, severity: &str, within: &str| {
        alert(
            "CredentialExpiring",
            &format!(
                "(min by (cluster) (federation_cluster_credential_expiration_timestamp_seconds) - time() < {left}) \
                 unless on (cluster) (max by (cluster) (federation_cluster_credential_renewal_timestamp_seconds) > time() - {RENEWAL_GRACE})"
            ),
            "5m",
            severity,
            &format!("A site's credential expires within {within}"),
            "The credential of site {{ $labels.cluster }} expires in \
             {{ $value | humanizeDuration }} (its status.credentialExpirationTime, as the hub \
             exports it), and no renewal by the edge itself is due within 15 minutes. A Push \
             site: run `kubectl fleet rotate {{ $labels.cluster }}` and give the edge the new \
             hub kubeconfig (an edge that should renew by itself names the cause in its log); \
             a Pull site: re-run `kubectl fleet register {{ $labels.cluster }} --pull`. \
             `kubectl fleet describe {{ $labels.cluster }}` shows the CredentialExpiring \
             condition.",
        )
    };
    json!({
        "groups": [
            {
                "name": "kubectl-fleet.sites",
                "rules": [
                    disconnected("stale", "warning", "5m"),
                    disconnected("unreachable", "critical", "5m"),
                    alert(
                        "CrossClusterIncident",
                        "max(cross_cluster_correlations_active) > 0",
                        "",
                        "critical",
                        "{{ $value }} cross-cluster incident(s): one failure on 3 or more sites",
                        "The same failure signal is active on several sites at once, which points \
                         at a shared cause (a release, an image, a dependency) rather than one \
                         site. Run `kubectl fleet incidents` for the signal, the sites and the \
                         remediation policy that applies.",
                    ),
                    alert(
                        "FleetGroupedOutage",
                        "max by (outage, group_by, group) (federation_grouped_outage_clusters) > 0",
                        "",
                        "critical",
                        "{{ $value }} sites of {{ $labels.group_by }} {{ $labels.group }} went dark together",
                        "At least 3 sites sharing {{ $labels.group_by }} {{ $labels.group }} left \
                         Connected within minutes of each other (outage {{ $labels.outage }}): a \
                         shared cause (the region's network, a power cut, the hub's route there) is \
                         likelier than {{ $value }} separate failures. Run `kubectl fleet incidents \
                         {{ $labels.outage }}` for the sites. The per-site ClusterDisconnected \
                         alerts of the group are held back by Alertmanager's inhibition rule \
                         (docs/observability.md) while this one fires.",
                    ),
                    cascade("critical", "critical"),
                    cascade("standard", "warning"),
                    cascade("non-critical", "info"),
                    credential(CREDENTIAL_WARN, "warning", "7 days"),
                    credential(CREDENTIAL_CRITICAL, "critical", "1 day"),
                ],
            },
            {
                "name": "kubectl-fleet.hub",
                "rules": [
                    alert(
                        "FleetHubDown",
                        &format!(
                            "(time() - max(fleet_hub_last_judgement_timestamp_seconds) > {}) \
                             or absent(fleet_hub_last_judgement_timestamp_seconds)",
                            hub_silent_after()
                        ),
                        "1m",
                        "critical",
                        "No fleet hub is judging the sites",
                        "No hub leader has recorded a full judgement of every site for longer than \
                         3 of its intervals, or no hub replica is scraped: site phases, conditions \
                         and the fleet summary are not being updated, and `kubectl fleet status` \
                         warns so. Causes: no replica leads, or the leader cannot watch the sites \
                         or write their status. Check the fleet-operator-hub Deployment \
                         (`kubectl -n fleet-system get deployment fleet-operator-hub`) and its \
                         logs.",
                    ),
                    alert(
                        "FleetSiteStatusRestored",
                        "sum by (cluster) (increase(fleet_hub_status_restored_total[15m])) > 0",
                        "",
                        "warning",
                        "Site {{ $labels.cluster }} wrote hub-owned status",
                        "The hub found conditions on site {{ $labels.cluster }} that were not its \
                         own judgement and restored them in the last 15 minutes: something other \
                         than the hub (most likely the site's own token) writes hub-owned status. \
                         Install the admission policy with `kubectl fleet install --apply`, and \
                         if the site's token may be stolen run `kubectl fleet rotate \
                         {{ $labels.cluster }} --revoke`.",
                    ),
                    alert(
                        "FleetHubLagging",
                        "histogram_quantile(0.9, sum by (le) (rate(fleet_hub_watch_event_lag_seconds_bucket[5m]))) > 30",
                        "10m",
                        "warning",
                        "The fleet hub judges heartbeats {{ $value | humanizeDuration }} late",
                        "90% of new heartbeats were older than 30 s when the hub judged them over \
                         the last 5 minutes: the hub is falling behind its watch (CPU limits, API \
                         server latency) or edges' clocks run behind (see the ClockSkew \
                         condition in `kubectl fleet status -o wide`). Check the hub's CPU and \
                         fleet_hub_reconcile_errors_total.",
                    ),
                ],
            },
        ],
    })
}

/// The Alertmanager inhibition rules that go with the alert rules: while
/// `FleetGroupedOutage` fires for a group, the `ClusterDisconnected` alerts
/// of that group's sites are held back (the `group` label of both is the
/// site's value of the hub's `--outage-group-by`). Shipped as
/// `deploy/monitoring/alertmanager-inhibit-rules.yaml`, to merge into the
/// Alertmanager configuration (docs/observability.md).
pub fn inhibit_rules() -> Value {
    json!({
        "inhibit_rules": [{
            "source_matchers": ["alertname=\"FleetGroupedOutage\""],
            "target_matchers": ["alertname=\"ClusterDisconnected\""],
            "equal": ["group"],
        }],
    })
}

/// Whether an alert with `target` labels is held back by one with `source`
/// labels under [`inhibit_rules`], as Alertmanager decides it: the source
/// matches every source matcher, the target every target matcher, and
/// both have the same value (absent is empty) of every `equal` label.
pub fn inhibited(target: &[(&str, &str)], source: &[(&str, &str)]) -> bool {
    let get = |labels: &[(&str, &str)], key: &str| {
        labels
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(String::new(), |(_, v)| (*v).to_owned())
    };
    let matches = |labels: &[(&str, &str)], matchers: &Value| {
        matchers.as_array().into_iter().flatten().all(|m| {
            let m = m.as_str().unwrap_or_default();
            let Some((k, v)) = m.split_once('=') else {
                return false;
            };
            get(labels, k) == v.trim_matches('"')
        })
    };
    inhibit_rules()["inhibit_rules"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|rule| {
            matches(source, &rule["source_matchers"])
                && matches(target, &rule["target_matchers"])
                && rule["equal"].as_array().into_iter().flatten().all(|k| {
                    let k = k.as_str().unwrap_or_default();
                    get(source, k) == get(target, k)
                })
        })
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

fn labels() -> Value {
    json!({
        "app.kubernetes.io/name": MONITORING_NAME,
        "app.kubernetes.io/part-of": "kubectl-fleet",
    })
}

/// The `PrometheusRule` (monitoring.coreos.com/v1) holding [`rule_groups`].
pub fn prometheus_rule() -> Value {
    json!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": { "name": MONITORING_NAME, "namespace": NAMESPACE, "labels": labels() },
        "spec": rule_groups(),
    })
}

/// The `ServiceMonitor` scraping the hub's `/metrics` over HTTPS with the
/// Prometheus ServiceAccount's token (the hub checks it with TokenReview
/// and SubjectAccessReview: grant it `list federatedclusters`), verifying
/// the hub's certificate as `tls_config` says (`install` names the CA and
/// the Service's name: the token goes only to the hub).
pub fn service_monitor(selector: Value, tls_config: Value) -> Value {
    json!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": { "name": MONITORING_NAME, "namespace": NAMESPACE, "labels": labels() },
        "spec": {
            "selector": { "matchLabels": selector },
            "endpoints": [{
                "port": METRICS_PORT_NAME,
                "scheme": "https",
                "path": "/metrics",
                "interval": "30s",
                "bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token",
                "tlsConfig": tls_config,
            }],
        },
    })
}

/// The dashboard ConfigMap, labelled for the Grafana sidecar.
pub fn dashboard_config_map() -> Value {
    let text = serde_json::to_string_pretty(&dashboard()).unwrap_or_default();
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": format!("{MONITORING_NAME}-dashboard"),
            "namespace": NAMESPACE,
            "labels": { "grafana_dashboard": "1", "app.kubernetes.io/part-of": "kubectl-fleet" },
        },
        "data": { "kubectl-fleet.json": text },
    })
}

struct Panel {
    title: &'static str,
    kind: &'static str,
    unit: &'static str,
    targets: &'static [(&'static str, &'static str)],
}

const PANELS: &[Panel] = &[
    Panel {
        title: "Sites by phase",
        kind: "timeseries",
        unit: "short",
        targets: &[("max by (status) (federation_clusters_total)", "{{status}}")],
    },
    Panel {
        title: "Sites not Connected",
        kind: "stat",
        unit: "short",
        targets: &[(
            "sum(max by (status) (federation_clusters_total{status!=\"connected\"}))",
            "not connected",
        )],
    },
    Panel {
        title: "Health check duration (Pull probe, Push report round trip)",
        kind: "timeseries",
        unit: "s",
        targets: &[
            (
                "histogram_quantile(0.5, sum by (le) (rate(federation_health_check_duration_seconds_bucket[5m])))",
                "p50",
            ),
            (
                "histogram_quantile(0.9, sum by (le) (rate(federation_health_check_duration_seconds_bucket[5m])))",
                "p90",
            ),
            (
                "histogram_quantile(0.99, sum by (le) (rate(federation_health_check_duration_seconds_bucket[5m])))",
                "p99",
            ),
        ],
    },
    Panel {
        title: "Active cross-cluster correlations",
        kind: "timeseries",
        unit: "short",
        targets: &[("max(cross_cluster_correlations_active)", "correlations")],
    },
    Panel {
        title: "New signals and cascades (per hour)",
        kind: "timeseries",
        unit: "short",
        targets: &[
            (
                "sum by (signal_type) (increase(cross_cluster_issues_total[1h]))",
                "{{signal_type}}",
            ),
            (
                "sum by (source_tier, target_tier) (increase(cascade_detected_total[1h]))",
                "cascade {{source_tier}} → {{target_tier}}",
            ),
        ],
    },
    Panel {
        title: "Remediation policy decisions (per hour)",
        kind: "timeseries",
        unit: "short",
        targets: &[(
            "sum by (tier, mode) (increase(federation_remediation_policy_applied_total[1h]))",
            "{{tier}} {{mode}}",
        )],
    },
    Panel {
        title: "Credential time left per site",
        kind: "timeseries",
        unit: "s",
        targets: &[(
            "min by (cluster) (federation_cluster_credential_expiration_timestamp_seconds) - time()",
            "{{cluster}}",
        )],
    },
    Panel {
        title: "Seconds since a hub last judged every site",
        kind: "stat",
        unit: "s",
        targets: &[(
            "time() - max(fleet_hub_last_judgement_timestamp_seconds)",
            "since the last full judgement",
        )],
    },
    Panel {
        title: "Hub lag (age of a heartbeat when judged)",
        kind: "timeseries",
        unit: "s",
        targets: &[
            (
                "histogram_quantile(0.5, sum by (le) (rate(fleet_hub_watch_event_lag_seconds_bucket[5m])))",
                "p50",
            ),
            (
                "histogram_quantile(0.9, sum by (le) (rate(fleet_hub_watch_event_lag_seconds_bucket[5m])))",
                "p90",
            ),
        ],
    },
    Panel {
        title: "Hub reconciles, writes, conflicts, errors",
        kind: "timeseries",
        unit: "ops",
        targets: &[
            ("sum(rate(fleet_hub_reconciles_total[5m]))", "reconciles"),
            ("sum(rate(fleet_hub_status_writes_total[5m]))", "writes"),
            (
                "sum(rate(fleet_hub_status_conflicts_total[5m]))",
                "409 retries",
            ),
            (
                "sum by (reason) (rate(fleet_hub_reconcile_errors_total[5m]))",
                "errors {{reason}}",
            ),
        ],
    },
    Panel {
        title: "Hub leader",
        kind: "stat",
        unit: "short",
        targets: &[("sum(fleet_hub_leader)", "leaders")],
    },
    Panel {
        title: "Nodes per site",
        kind: "timeseries",
        unit: "short",
        targets: &[(
            "max by (cluster, region) (federation_cluster_nodes)",
            "{{cluster}} {{region}}",
        )],
    },
    Panel {
        title: "Hub-owned status restored (per hour)",
        kind: "timeseries",
        unit: "short",
        targets: &[(
            "sum by (cluster) (increase(fleet_hub_status_restored_total[1h]))",
            "{{cluster}}",
        )],
    },
];

/// The Grafana dashboard (JSON model), with a Prometheus data source variable.
pub fn dashboard() -> Value {
    let ds = json!({ "type": "prometheus", "uid": "${datasource}" });
    let panels: Vec<Value> = PANELS
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let targets: Vec<Value> = p
                .targets
                .iter()
                .zip('A'..)
                .map(|((expr, legend), id)| {
                    json!({ "datasource": ds, "expr": expr, "legendFormat": legend, "refId": id.to_string() })
                })
                .collect();
            json!({
                "id": i + 1,
                "type": p.kind,
                "title": p.title,
                "datasource": ds,
                "gridPos": { "h": 8, "w": 12, "x": (i % 2) * 12, "y": (i / 2) * 8 },
                "fieldConfig": { "defaults": { "unit": p.unit }, "overrides": [] },
                "targets": targets,
            })
        })
        .collect();
    json!({
        "uid": "kubectl-fleet",
        "title": "kubectl-fleet",
        "tags": ["kubectl-fleet"],
        "timezone": "utc",
        "schemaVersion": 39,
        "refresh": "30s",
        "time": { "from": "now-6h", "to": "now" },
        "templating": { "list": [{
            "name": "datasource",
            "label": "Prometheus",
            "type": "datasource",
            "query": "prometheus",
        }] },
        "panels": panels,
    })
}

const HEADER: &str = "# Generated by tools/regen.sh from src/render/monitoring.rs; do not edit.\n";

/// The files of `deploy/monitoring/`: (file name, contents).
pub fn files() -> Vec<(&'static str, String)> {
    let yaml = |v: &Value| format!("{HEADER}{}", super::to_yaml(v).unwrap_or_default());
    vec![
        ("fleet-rules.yaml", yaml(&rule_groups())),
        ("fleet-rules.test.yaml", yaml(&promtool_tests())),
        ("prometheus-rule.yaml", yaml(&prometheus_rule())),
        ("alertmanager-inhibit-rules.yaml", yaml(&inhibit_rules())),
        (
            "grafana-dashboard.json",
            super::to_json(&dashboard()).unwrap_or_default(),
        ),
    ]
}

/// One `promtool test rules` case: input series (interval 1m), when to
/// evaluate, which alert, and the alerts expected then as (labels, `$value`).
struct Case {
    series: &'static [(&'static str, &'static str)],
    at: &'static str,
    alert: &'static str,
    expect: &'static [(&'static [(&'static str, &'static str)], f64)],
}

/// Three sites of region eu-west unreachable from minute 1, and one of
/// us-east; the hub reports the three as one grouped outage.
const OUTAGE_SERIES: &[(&str, &str)] = &[
    (
        "federation_cluster_disconnected{cluster=\"eu-1\",group=\"eu-west\",status=\"unreachable\",instance=\"hub\"}",
        "_ 1x15",
    ),
    (
        "federation_cluster_disconnected{cluster=\"eu-2\",group=\"eu-west\",status=\"unreachable\",instance=\"hub\"}",
        "_ 1x15",
    ),
    (
        "federation_cluster_disconnected{cluster=\"eu-3\",group=\"eu-west\",status=\"unreachable\",instance=\"hub\"}",
        "_ 1x15",
    ),
    (
        "federation_cluster_disconnected{cluster=\"us-1\",group=\"us-east\",status=\"unreachable\",instance=\"hub\"}",
        "_ 1x15",
    ),
    (
        "federation_grouped_outage_clusters{outage=\"go-0000abcd\",group_by=\"region\",group=\"eu-west\",instance=\"hub\"}",
        "_ 3x15",
    ),
];

/// The per-site alerts [`OUTAGE_SERIES`] raises at 10m.
const OUTAGE_SITE_ALERTS: &[(&[(&str, &str)], f64)] = &[
    (
        &[
            ("cluster", "eu-1"),
            ("group", "eu-west"),
            ("severity", "critical"),
            ("status", "unreachable"),
        ],
        1.0,
    ),
    (
        &[
            ("cluster", "eu-2"),
            ("group", "eu-west"),
            ("severity", "critical"),
            ("status", "unreachable"),
        ],
        1.0,
    ),
    (
        &[
            ("cluster", "eu-3"),
            ("group", "eu-west"),
            ("severity", "critical"),
            ("status", "unreachable"),
        ],
        1.0,
    ),
    (
        &[
            ("cluster", "us-1"),
            ("group", "us-east"),
            ("severity", "critical"),
            ("status", "unreachable"),
        ],
        1.0,
    ),
];

/// [`OUTAGE_SERIES`] without the outage.
const OUTAGE_SERIES_WITHOUT_OUTAGE: [(&str, &str); 4] = [
    OUTAGE_SERIES[0],
    OUTAGE_SERIES[1],
    OUTAGE_SERIES[2],
    OUTAGE_SERIES[3],
];

/// The group alert [`OUTAGE_SERIES`] raises (at once).
const OUTAGE_GROUP_ALERTS: &[(&[(&str, &str)], f64)] = &[(
    &[
        ("group", "eu-west"),
        ("group_by", "region"),
        ("outage", "go-0000abcd"),
        ("severity", "critical"),
    ],
    3.0,
)];

const CASES: &[Case] = &[
    // Stale from minute 2: pending at 4m; firing, warning, at 8m.
    Case {
        series: &[(
            "federation_cluster_disconnected{cluster=\"site-a\",group=\"eu-west\",status=\"stale\",instance=\"hub\"}",
            "_ _ 1x10",
        )],
        at: "4m",
        alert: "ClusterDisconnected",
        expect: &[],
    },
    Case {
        series: &[(
            "federation_cluster_disconnected{cluster=\"site-a\",group=\"eu-west\",status=\"stale\",instance=\"hub\"}",
            "_ _ 1x10",
        )],
        at: "8m",
        alert: "ClusterDisconnected",
        expect: &[(
            &[
                ("cluster", "site-a"),
                ("group", "eu-west"),
                ("severity", "warning"),
                ("status", "stale"),
            ],
            1.0,
        )],
    },
    Case {
        series: &[(
            "federation_cluster_disconnected{cluster=\"site-b\",group=\"\",status=\"unreachable\",instance=\"hub\"}",
            "_x3 1x10",
        )],
        at: "10m",
        alert: "ClusterDisconnected",
        // No group: Prometheus drops the empty label.
        expect: &[(
            &[
                ("cluster", "site-b"),
                ("severity", "critical"),
                ("status", "unreachable"),
            ],
            1.0,
        )],
    },
    // The same site in a maintenance window: no page.
    Case {
        series: &[
            (
                "federation_cluster_disconnected{cluster=\"site-b\",group=\"\",status=\"unreachable\",instance=\"hub\"}",
                "_x3 1x10",
            ),
            (
                "federation_cluster_maintenance{cluster=\"site-b\",instance=\"hub\"}",
                "1x13",
            ),
        ],
        at: "10m",
        alert: "ClusterDisconnected",
        expect: &[],
    },
    // A grouped outage: every site's alert is raised (and held back by
    // Alertmanager's inhibition rule while the group alert fires, see
    // `tests::the_inhibition_rule_holds_back_exactly_the_groups_pages`).
    Case {
        series: OUTAGE_SERIES,
        at: "10m",
        alert: "ClusterDisconnected",
        expect: OUTAGE_SITE_ALERTS,
    },
    Case {
        series: OUTAGE_SERIES,
        at: "2m",
        alert: "FleetGroupedOutage",
        expect: OUTAGE_GROUP_ALERTS,
    },
    Case {
        series: OUTAGE_SERIES,
        at: "10m",
        alert: "FleetGroupedOutage",
        expect: OUTAGE_GROUP_ALERTS,
    },
    // Sites dark, but no outage reported: no group alert.
    Case {
        series: &OUTAGE_SERIES_WITHOUT_OUTAGE,
        at: "10m",
        alert: "FleetGroupedOutage",
        expect: &[],
    },
    Case {
        series: &[(
            "cross_cluster_correlations_active{instance=\"hub\"}",
            "0 0 1 1 0",
        )],
        at: "1m",
        alert: "CrossClusterIncident",
        expect: &[],
    },
    Case {
        series: &[(
            "cross_cluster_correlations_active{instance=\"hub\"}",
            "0 0 1 1 0",
        )],
        at: "2m",
        alert: "CrossClusterIncident",
        expect: &[(&[("severity", "critical")], 1.0)],
    },
    Case {
        series: &[(
            "cross_cluster_correlations_active{instance=\"hub\"}",
            "0 0 1 1 0",
        )],
        at: "4m",
        alert: "CrossClusterIncident",
        expect: &[],
    },
    Case {
        series: &[(
            "cascade_detected_total{source_tier=\"standard\",target_tier=\"critical\",instance=\"hub\"}",
            "0 0 1x40",
        )],
        at: "1m",
        alert: "CascadeDetected",
        expect: &[],
    },
    Case {
        series: &[(
            "cascade_detected_total{source_tier=\"standard\",target_tier=\"critical\",instance=\"hub\"}",
            "0 0 1x40",
        )],
        at: "3m",
        alert: "CascadeDetected",
        expect: &[(
            &[
                ("severity", "critical"),
                ("source_tier", "standard"),
                ("target_tier", "critical"),
            ],
            f64::NAN,
        )],
    },
    Case {
        series: &[(
            "cascade_detected_total{source_tier=\"standard\",target_tier=\"non-critical\",instance=\"hub\"}",
            "0 0 1x40",
        )],
        at: "3m",
        alert: "CascadeDetected",
        expect: &[(
            &[
                ("severity", "info"),
                ("source_tier", "standard"),
                ("target_tier", "non-critical"),
            ],
            f64::NAN,
        )],
    },
    // The 15-minute window has passed: resolved.
    Case {
        series: &[(
            "cascade_detected_total{source_tier=\"standard\",target_tier=\"critical\",instance=\"hub\"}",
            "0 0 1x40",
        )],
        at: "30m",
        alert: "CascadeDetected",
        expect: &[],
    },
    // At 10m (time() = 600): a expires in 3 days, b in 10, d in 12 h; e in
    // 12 h too, but its edge renews it by itself in 30 minutes.
    Case {
        series: &[
            (
                "federation_cluster_credential_expiration_timestamp_seconds{cluster=\"a\",instance=\"hub\"}",
                "259800x12",
            ),
            (
                "federation_cluster_credential_expiration_timestamp_seconds{cluster=\"b\",instance=\"hub\"}",
                "864600x12",
            ),
            (
                "federation_cluster_credential_expiration_timestamp_seconds{cluster=\"d\",instance=\"hub\"}",
                "43800x12",
            ),
            (
                "federation_cluster_credential_expiration_timestamp_seconds{cluster=\"e\",instance=\"hub\"}",
                "43800x12",
            ),
            (
                "federation_cluster_credential_renewal_timestamp_seconds{cluster=\"e\",instance=\"hub\"}",
                "2400x12",
            ),
        ],
        at: "10m",
        alert: "CredentialExpiring",
        expect: &[
            (&[("cluster", "a"), ("severity", "warning")], 259_200.0),
            (&[("cluster", "d"), ("severity", "warning")], 43_200.0),
            (&[("cluster", "d"), ("severity", "critical")], 43_200.0),
        ],
    },
    // At 40m (time() = 2400): e's renewal is 30 minutes overdue.
    Case {
        series: &[
            (
                "federation_cluster_credential_expiration_timestamp_seconds{cluster=\"e\",instance=\"hub\"}",
                "45600x45",
            ),
            (
                "federation_cluster_credential_renewal_timestamp_seconds{cluster=\"e\",instance=\"hub\"}",
                "600x45",
            ),
        ],
        at: "40m",
        alert: "CredentialExpiring",
        expect: &[
            (&[("cluster", "e"), ("severity", "warning")], 43_200.0),
            (&[("cluster", "e"), ("severity", "critical")], 43_200.0),
        ],
    },
    Case {
        series: &[(
            "federation_cluster_credential_expiration_timestamp_seconds{cluster=\"b\",instance=\"hub\"}",
            "864600x12",
        )],
        at: "10m",
        alert: "CredentialExpiring",
        expect: &[],
    },
    // Both replicas export the last judgement; it moves with time.
    Case {
        series: &[
            (
                "fleet_hub_last_judgement_timestamp_seconds{instance=\"hub-a\"}",
                "0+60x13",
            ),
            (
                "fleet_hub_last_judgement_timestamp_seconds{instance=\"hub-b\"}",
                "0+60x13",
            ),
        ],
        at: "10m",
        alert: "FleetHubDown",
        expect: &[],
    },
    // The leader stopped judging at 3m (stopped, or blind): firing at 10m.
    Case {
        series: &[
            (
                "fleet_hub_last_judgement_timestamp_seconds{instance=\"hub-a\"}",
                "0 60 120 180x10",
            ),
            (
                "fleet_hub_last_judgement_timestamp_seconds{instance=\"hub-b\"}",
                "0 60 120 180x10",
            ),
        ],
        at: "10m",
        alert: "FleetHubDown",
        expect: &[(&[("severity", "critical")], 420.0)],
    },
    // No hub scraped at all.
    Case {
        series: &[("up{job=\"other\"}", "1x10")],
        at: "7m",
        alert: "FleetHubDown",
        expect: &[(&[("severity", "critical")], 1.0)],
    },
    Case {
        series: &[(
            "fleet_hub_status_restored_total{cluster=\"site-a\",instance=\"hub\"}",
            "0 0 1x40",
        )],
        at: "5m",
        alert: "FleetSiteStatusRestored",
        expect: &[(&[("cluster", "site-a"), ("severity", "warning")], f64::NAN)],
    },
    Case {
        series: &[(
            "fleet_hub_status_restored_total{cluster=\"site-a\",instance=\"hub\"}",
            "0 0 1x40",
        )],
        at: "30m",
        alert: "FleetSiteStatusRestored",
        expect: &[],
    },
    // Every heartbeat judged within 1 s.
    Case {
        series: &[
            (
                "fleet_hub_watch_event_lag_seconds_bucket{le=\"1.0\",instance=\"hub\"}",
                "0+60x20",
            ),
            (
                "fleet_hub_watch_event_lag_seconds_bucket{le=\"32.0\",instance=\"hub\"}",
                "0+60x20",
            ),
            (
                "fleet_hub_watch_event_lag_seconds_bucket{le=\"+Inf\",instance=\"hub\"}",
                "0+60x20",
            ),
        ],
        at: "15m",
        alert: "FleetHubLagging",
        expect: &[],
    },
    // Every heartbeat older than 32 s when judged.
    Case {
        series: &[
            (
                "fleet_hub_watch_event_lag_seconds_bucket{le=\"1.0\",instance=\"hub\"}",
                "0x20",
            ),
            (
                "fleet_hub_watch_event_lag_seconds_bucket{le=\"32.0\",instance=\"hub\"}",
                "0x20",
            ),
            (
                "fleet_hub_watch_event_lag_seconds_bucket{le=\"+Inf\",instance=\"hub\"}",
                "0+60x20",
            ),
        ],
        at: "15m",
        alert: "FleetHubLagging",
        expect: &[(&[("severity", "warning")], 32.0)],
    },
];

/// Go's `humanizeDuration` of Prometheus templates, for whole seconds.
fn humanize_duration(v: f64) -> String {
    let d = v as i64;
    let (days, hours, minutes, seconds) = (d / 86_400, d / 3_600 % 24, d / 60 % 60, d % 60);
    if days != 0 {
        format!("{days}d {hours}h {minutes}m {seconds}s")
    } else if hours != 0 {
        format!("{hours}h {minutes}m {seconds}s")
    } else if minutes != 0 {
        format!("{minutes}m {seconds}s")
    } else {
        format!("{v}s")
    }
}

/// An annotation template with `$value` and `$labels` filled in (the only
/// template features the rules use).
fn expand(template: &str, labels: &[(&str, &str)], value: f64) -> String {
    let mut out = template
        .replace("{{ $value | humanizeDuration }}", &humanize_duration(value))
        .replace("{{ $value }}", &format!("{value}"));
    for (k, v) in labels {
        out = out.replace(&format!("{{{{ $labels.{k} }}}}"), v);
    }
    // A label the alert does not have expands to nothing.
    while let Some(start) = out.find("{{ $labels.") {
        let end = out[start..].find("}}").map_or(out.len(), |e| start + e + 2);
        out.replace_range(start..end, "");
    }
    out
}

/// The rule that raises `alert` with `severity` (and, for several such
/// rules, whose expression mentions every expected label value).
fn rule_for(alert: &str, labels: &[(&str, &str)]) -> Value {
    let severity = labels
        .iter()
        .find(|(k, _)| *k == "severity")
        .map(|(_, v)| *v)
        .unwrap_or_default();
    rule_groups()["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["rules"].as_array().cloned().unwrap_or_default())
        .find(|r| {
            r["alert"] == alert
                && r["labels"]["severity"] == severity
                && labels.iter().all(|(k, v)| {
                    *k == "severity"
                        || *k == "instance"
                        || *k == "cluster"
                        || *k == "source_tier"
                        || *k == "group"
                        || *k == "group_by"
                        || *k == "outage"
                        || r["expr"]
                            .as_str()
                            .unwrap_or_default()
                            .contains(&format!("\"{v}\""))
                })
        })
        .unwrap_or(Value::Null)
}

/// The `promtool test rules` file: every alert firing and not firing.
pub fn promtool_tests() -> Value {
    let tests: Vec<Value> = CASES
        .iter()
        .map(|c| {
            let series: Vec<Value> = c
                .series
                .iter()
                .map(|(s, v)| json!({ "series": s, "values": v }))
                .collect();
            let alerts: Vec<Value> = c
                .expect
                .iter()
                .map(|(labels, value)| {
                    let rule = rule_for(c.alert, labels);
                    let ann = |key: &str| {
                        expand(
                            rule["annotations"][key].as_str().unwrap_or_default(),
                            labels,
                            *value,
                        )
                    };
                    let exp_labels: serde_json::Map<String, Value> =
                        labels.iter().map(|(k, v)| ((*k).to_owned(), json!(v))).collect();
                    json!({
                        "exp_labels": exp_labels,
                        "exp_annotations": { "summary": ann("summary"), "description": ann("description") },
                    })
                })
                .collect();
            json!({
                "interval": "1m",
                "input_series": series,
                "alert_rule_test": [{ "eval_time": c.at, "alertname": c.alert, "exp_alerts": alerts }],
            })
        })
        .collect();
    json!({ "rule_files": ["fleet-rules.yaml"], "evaluation_interval": "1m", "tests": tests })
}

/// Every PromQL expression of the rules and the dashboard.
pub fn expressions() -> Vec<String> {
    let mut out = Vec::new();
    for group in rule_groups()["groups"].as_array().into_iter().flatten() {
        for rule in group["rules"].as_array().into_iter().flatten() {
            out.push(rule["expr"].as_str().unwrap_or_default().to_owned());
        }
    }
    out.extend(
        PANELS
            .iter()
            .flat_map(|p| p.targets.iter().map(|(e, _)| (*e).to_owned())),
    );
    out
}

/// The operator metric names an expression uses (identifiers with the
/// operator's prefixes).
pub fn metric_names(expr: &str) -> Vec<String> {
    const PREFIXES: &[&str] = &["federation_", "cross_cluster_", "cascade_", "fleet_"];
    let mut out: Vec<String> = expr
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .filter(|w| PREFIXES.iter().any(|p| w.starts_with(p)))
        .map(str::to_owned)
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_alert_has_a_severity_summary_and_description() {
        let groups = rule_groups();
        let mut names = Vec::new();
        for g in groups["groups"].as_array().unwrap() {
            for r in g["rules"].as_array().unwrap() {
                names.push(r["alert"].as_str().unwrap().to_owned());
                assert!(r["labels"]["severity"].is_string());
                assert!(r["annotations"]["summary"].as_str().unwrap().len() > 10);
                assert!(r["annotations"]["description"].as_str().unwrap().len() > 80);
            }
        }
        names.dedup();
        for want in [
            "ClusterDisconnected",
            "CrossClusterIncident",
            "CascadeDetected",
            "CredentialExpiring",
            "FleetHubDown",
            "FleetHubLagging",
            "FleetSiteStatusRestored",
            "FleetGroupedOutage",
        ] {
            assert!(names.iter().any(|n| n == want), "{want}");
        }
    }

    #[test]
    fn the_inhibition_rule_holds_back_exactly_the_groups_pages() {
        // The alerts promtool proves fire together (CASES) under the rule
        // Alertmanager is given: the outage's three sites are held back,
        // the lone site of another region still pages.
        let group = OUTAGE_GROUP_ALERTS[0].0;
        let held: Vec<&str> = OUTAGE_SITE_ALERTS
            .iter()
            .filter(|(site, _)| {
                let mut labels = site.to_vec();
                labels.push(("alertname", "ClusterDisconnected"));
                let mut source = group.to_vec();
                source.push(("alertname", "FleetGroupedOutage"));
                inhibited(&labels, &source)
            })
            .map(|(site, _)| site.iter().find(|(k, _)| *k == "cluster").unwrap().1)
            .collect();
        assert_eq!(held, ["eu-1", "eu-2", "eu-3"]);
        // Only the group alert inhibits, and only ClusterDisconnected.
        let site = [("alertname", "ClusterDisconnected"), ("group", "eu-west")];
        assert!(!inhibited(
            &site,
            &[("alertname", "CrossClusterIncident"), ("group", "eu-west")]
        ));
        assert!(!inhibited(
            &[("alertname", "CredentialExpiring"), ("group", "eu-west")],
            &[("alertname", "FleetGroupedOutage"), ("group", "eu-west")]
        ));
        // Both sides of the rule name alerts and labels the rules have.
        let rules = rule_groups().to_string();
        for needle in ["\"FleetGroupedOutage\"", "\"ClusterDisconnected\"", "group"] {
            assert!(rules.contains(needle), "{needle}");
        }
    }

    /// The family a series name belongs to (histogram suffixes off).
    fn family(name: &str) -> &str {
        ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix))
            .unwrap_or(name)
    }

    #[test]
    fn every_expression_uses_only_series_the_hub_serves() {
        use crate::operator::metrics::HUB_METRIC_NAMES;
        for expr in expressions() {
            for name in metric_names(&expr) {
                assert!(
                    HUB_METRIC_NAMES.contains(&family(&name)),
                    "{name} in `{expr}` is not a hub series: the hub's Prometheus never scrapes edges"
                );
            }
        }
    }

    #[test]
    fn names_are_found_in_expressions() {
        assert_eq!(
            metric_names(
                "sum by (le) (rate(fleet_hub_watch_event_lag_seconds_bucket[5m])) and absent(fleet_hub_leader)"
            ),
            [
                "fleet_hub_leader",
                "fleet_hub_watch_event_lag_seconds_bucket"
            ]
        );
    }
}
