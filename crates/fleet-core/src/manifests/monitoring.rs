//! The monitoring files shipped with the operator (docs/observability.md): the
//! Prometheus alert rules (a plain rule file for `promtool`, and the same
//! groups as a `PrometheusRule`), a Grafana dashboard, a ServiceMonitor
//! and the dashboard's ConfigMap. Generated from here into
//! `deploy/monitoring/` by `tools/regen.sh`, and printed by
//! `kubectl fleet install --with-monitoring`.
//!
//! Every expression queries only metrics the hub exposes (see
//! `operator::metrics::HUB_METRIC_NAMES`; xtask's tests check it): the rules and the dashboard are
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
pub(crate) const MONITORING_NAME: &str = "fleet-operator";

/// The name of the HTTPS port of the operator's Service.
pub const METRICS_PORT_NAME: &str = "https";

/// Seconds left below which `CredentialExpiring` warns (7 days, the hub's
/// default `--credential-warning`), and below which it is critical (1 day)
/// instead: one alert per credential at any time.
const CREDENTIAL_WARN: u64 = 7 * 86_400;
const CREDENTIAL_CRITICAL: u64 = 86_400;
/// How long past its renewal time a self-renewing edge's credential may
/// be before `CredentialExpiring` stops trusting the renewal.
const RENEWAL_GRACE: u64 = 15 * 60;

/// How long the hub must have judged a site Stale or Unreachable before
/// `ClusterDisconnected` pages (its `for`). A Push site is Stale 3 of its
/// intervals after the last heartbeat the hub observed, a Pull site at the
/// first failed probe; this minute on top rides out one failed probe, and
/// gives the sites of a region that went dark together the time to form a
/// grouped outage (which holds their pages back) before any of them pages.
/// docs/migrating.md's replacement alert uses the same.
pub const DISCONNECTED_FOR: &str = "1m";

/// `FleetHubDown` fires when the last full judgement a hub recorded is
/// older than this: the readers' threshold for the default cadence
/// (`fleet::liveness`, 3 × 15 s).
pub fn hub_silent_after() -> u64 {
    crate::fleet::liveness::LIVENESS_INTERVAL.as_secs()
        * u64::from(crate::fleet::liveness::SILENT_INTERVALS)
}

/// How far back `FleetHubDown` looks for the last judgement a replica
/// exported, so a hub that was killed is judged by its last record, not
/// by the moment its scrape failed (and a hub scraped at least once in
/// this window is not taken for one never scraped).
const HUB_LOOKBACK: &str = "1h";

/// True (a one-element vector) while Prometheus scrapes a hub replica that
/// has counted the fleet: `federation_clusters_total` is 0 for every phase
/// until a replica has listed the sites and published its view of them,
/// and absent while no replica is scraped. The per-site and per-incident
/// alerts follow the hub's series only then; otherwise they keep the state
/// they had ([`held`]).
pub const HUB_COUNTS_THE_FLEET: &str = "sum(max by (status) (federation_clusters_total)) > 0";

/// The expression of an alert that is not resolved by the hub's absence:
/// `live` while a hub replica that has counted the fleet is scraped
/// ([`HUB_COUNTS_THE_FLEET`]); otherwise the alerts of rule `name` with
/// `severity` that were firing at the previous evaluation (`ALERTS`, with
/// the labels `live` gives them), so a dead, restarting or not yet listing
/// hub neither resolves a page (and re-pages when it returns) nor raises a
/// new one. While no hub judges, `FleetHubDown` pages instead. Their value
/// is then 1, or `value` where the annotations show it.
fn held(name: &str, severity: &str, live: &str, value: Option<&str>) -> String {
    let firing =
        format!("ALERTS{{alertname=\"{name}\", alertstate=\"firing\", severity=\"{severity}\"}}");
    let kept = match value {
        None => format!("max without (alertname, alertstate, severity) ({firing})"),
        Some(value) => format!("({value}) and ignoring (alertname, alertstate, severity) {firing}"),
    };
    format!("({live}) or (({kept}) unless on () ({HUB_COUNTS_THE_FLEET}))")
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

/// The sites the hub judged Stale or Unreachable, one series per site
/// (`cluster`, `group`; the two hub replicas' gauges counted once), less
/// those in an open maintenance window and those late to wake (which
/// [`LATE_SITES`] pages for). `ClusterDisconnected` and
/// docs/migrating.md's replacement page on it. A Sleeping site has no
/// series: its silence is expected (`spec.connectivity`).
pub const DARK_SITES: &str = "max by (cluster, group) (federation_cluster_disconnected) \
     unless on (cluster) (max by (cluster) (federation_cluster_maintenance) > 0) \
     unless on (cluster) (max by (cluster) (federation_cluster_late_to_wake) > 0)";

/// The sites the hub judged late to wake (silent past their offline
/// window or longest absence, `spec.connectivity`), one series per site
/// with the labels of a dark one (`cluster`, `group`: a late site is
/// Stale or Unreachable, so it has its `federation_cluster_disconnected`
/// series), less those in an open maintenance window. `ClusterLateToWake`
/// pages on it; its `group` lets Alertmanager's inhibition by
/// `FleetGroupedOutage` hold back the stores of a region that all fail to
/// wake after one power cut, as it holds back dark sites ([`inhibit_rules`]).
pub const LATE_SITES: &str = "max by (cluster, group) (federation_cluster_disconnected) \
     and on (cluster) (max by (cluster) (federation_cluster_late_to_wake) > 0) \
     unless on (cluster) (max by (cluster) (federation_cluster_maintenance) > 0)";

/// The time left on each site's credential, less the sites whose edge
/// renews it by itself and is not more than [`RENEWAL_GRACE`] overdue.
fn credential_left() -> String {
    format!(
        "((min by (cluster) (federation_cluster_credential_expiration_timestamp_seconds) - time()) \
         unless on (cluster) (max by (cluster) (federation_cluster_credential_renewal_timestamp_seconds) > time() - {RENEWAL_GRACE}))"
    )
}

/// `{{ $value }}` seconds left as "expires in 3h 2m 1s", or "expired 5m
/// 2s ago" once negative.
const EXPIRES_IN: &str = "{{ if ge $value 0.0 }}expires in {{ humanizeDuration $value }}\
     {{ else }}expired {{ reReplaceAll \"^-\" \"\" (humanizeDuration $value) }} ago{{ end }}";

/// The rule groups (the `spec` of the PrometheusRule, and a rule file).
pub fn rule_groups() -> Value {
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
    let credential = |severity: &str, live: String, within: &str| {
        alert(
            "CredentialExpiring",
            &held(
                "CredentialExpiring",
                severity,
                &live,
                Some(&format!(
                    "min by (cluster) (last_over_time(federation_cluster_credential_expiration_timestamp_seconds[{HUB_LOOKBACK}])) - time()"
                )),
            ),
            "",
            severity,
            &format!(
                "The credential of fleet site {{{{ $labels.cluster }}}} {{{{ if ge $value 0.0 }}}}expires within {within}{{{{ else }}}}has expired{{{{ end }}}}"
            ),
            &format!(
                "The credential of site {{{{ $labels.cluster }}}} {EXPIRES_IN} (its \
                 status.credentialExpirationTime, as the hub exports it), and nothing renews it: \
                 its edge does not renew it by itself, or its renewal is more than 15 minutes \
                 overdue. A Push site: run `kubectl fleet rotate {{{{ $labels.cluster }}}}` and \
                 give the edge the new hub kubeconfig (an edge that should renew by itself names \
                 the cause in its log); a Pull site: run `kubectl fleet register \
                 {{{{ $labels.cluster }}}} --pull --member-kubeconfig FILE` with an admin \
                 kubeconfig of its member cluster (the hub's log names why it could not renew \
                 the token). `kubectl fleet describe {{{{ $labels.cluster }}}}` shows the \
                 CredentialExpiring condition. One alert per credential: warning from 7 days \
                 left, critical (instead) from 1 day."
            ),
        )
    };
    json!({
        "groups": [
            {
                "name": "kubectl-fleet.sites",
                "rules": [
                    alert(
                        "ClusterDisconnected",
                        &held("ClusterDisconnected", "critical", DARK_SITES, None),
                        DISCONNECTED_FOR,
                        "critical",
                        "Fleet site {{ $labels.cluster }} is not reporting to the hub",
                        "The hub has judged site {{ $labels.cluster }} Stale or Unreachable for a \
                         minute: a Push site's edge sent no heartbeat for 3 of its intervals \
                         (Unreachable after 10), or the hub's latest probe of a Pull site's member \
                         cluster failed (Unreachable after 10 intervals without a successful one). \
                         Run `kubectl fleet describe {{ $labels.cluster }}` (its conditions and \
                         recent events name the cause), then check the edge operator on that \
                         member cluster, or the member's API server for a Pull site (token, \
                         network, hub). One page per site, whether Stale or Unreachable. A site in \
                         a maintenance window (`kubectl fleet cordon`) raises none; while \
                         FleetGroupedOutage fires for its group ({{ $labels.group }}) \
                         Alertmanager's inhibition rule holds this one back; while no hub is \
                         scraped it keeps firing (FleetHubDown pages for the hub). `kubectl fleet \
                         status --phase Stale` and `--phase Unreachable` list every such site. A \
                         site asleep as its schedule expects (phase Sleeping, `kubectl fleet \
                         schedule`) raises none, and one late to wake raises ClusterLateToWake \
                         instead.",
                    ),
                    alert(
                        "ClusterLateToWake",
                        &held("ClusterLateToWake", "critical", LATE_SITES, None),
                        DISCONNECTED_FOR,
                        "critical",
                        "Fleet site {{ $labels.cluster }} did not wake up when its schedule said",
                        "Site {{ $labels.cluster }} declares when it is expected offline \
                         (spec.connectivity: an offline window or a longest absence), and it is \
                         still silent 3 heartbeat intervals after that ended: its Connected \
                         condition says LateToWake. Run `kubectl fleet describe \
                         {{ $labels.cluster }}` for its schedule and last heartbeat, then check the \
                         site's power, uplink and edge operator (a Pull site: its member's API \
                         server). If the site's hours changed, run \
                         `kubectl fleet schedule {{ $labels.cluster }} --offline HH:MM-HH:MM --tz ZONE` \
                         (or --absent-up-to D). While it sleeps inside its schedule it pages nobody; \
                         in a maintenance window (`kubectl fleet cordon`) it raises none; while \
                         FleetGroupedOutage fires for its group ({{ $labels.group }}: sites of one \
                         region that all failed to wake, e.g. after a power cut) Alertmanager's \
                         inhibition rule holds this one back.",
                    ),
                    alert(
                        "FleetGroupedOutage",
                        &held(
                            "FleetGroupedOutage",
                            "critical",
                            "max by (outage, group_by, group) (federation_grouped_outage_clusters) > 0",
                            None,
                        ),
                        "",
                        "critical",
                        "Sites of {{ $labels.group_by }} {{ $labels.group }} went dark together ({{ $labels.outage }})",
                        "At least 3 sites sharing {{ $labels.group_by }} {{ $labels.group }} left \
                         Connected within minutes of each other (outage {{ $labels.outage }}): a \
                         shared cause (the region's network, a power cut, the hub's route there) is \
                         likelier than separate failures. Run `kubectl fleet incidents \
                         {{ $labels.outage }}` for the sites. The outage keeps each of its sites \
                         until that site is Connected again, and the per-site ClusterDisconnected \
                         and ClusterLateToWake alerts of the group are held back by Alertmanager's \
                         inhibition rule (docs/observability.md) while this one fires. Sites late to \
                         wake count: a store that stays dark after its night is dark.",
                    ),
                    alert(
                        "CrossClusterIncident",
                        &held(
                            "CrossClusterIncident",
                            "critical",
                            "max(cross_cluster_correlations_active) > 0",
                            None,
                        ),
                        "",
                        "critical",
                        "A failure is active on 3 or more fleet sites at once",
                        "The same failure signal is active on several sites at once, which points \
                         at a shared cause (a release, an image, a dependency) rather than one \
                         site. Run `kubectl fleet incidents` for the signal, the sites and the \
                         remediation policy that applies.",
                    ),
                    cascade("critical", "critical"),
                    cascade("standard", "warning"),
                    cascade("non-critical", "info"),
                    alert(
                        "CredentialExpiresBeforeReturn",
                        &held(
                            "CredentialExpiresBeforeReturn",
                            "warning",
                            "max by (cluster) (federation_cluster_credential_expires_before_return) > 0",
                            None,
                        ),
                        "",
                        "warning",
                        "The credential of sleeping fleet site {{ $labels.cluster }} expires before it is expected back",
                        "Site {{ $labels.cluster }} is asleep as its schedule expects (spec.connectivity) \
                         and its hub credential expires before the end of its offline window or longest \
                         absence: its edge cannot renew the credential while offline, so it would return \
                         with a dead token (its CredentialExpiring condition says ExpiresBeforeReturn). \
                         Run `kubectl fleet rotate {{ $labels.cluster }}` and have the new hub \
                         kubeconfig ready for the site's operator when it returns \
                         (docs/operations.md, \"A site that returns with a dead token\").",
                    ),
                    credential(
                        "warning",
                        format!("{} < {CREDENTIAL_WARN} >= {CREDENTIAL_CRITICAL}", credential_left()),
                        "7 days",
                    ),
                    credential(
                        "critical",
                        format!("{} < {CREDENTIAL_CRITICAL}", credential_left()),
                        "1 day",
                    ),
                ],
            },
            {
                "name": "kubectl-fleet.hub",
                "rules": [
                    alert(
                        "FleetHubDown",
                        &format!(
                            "(time() - max(max_over_time(fleet_hub_last_judgement_timestamp_seconds[{HUB_LOOKBACK}])) > {silent}) \
                             or absent_over_time(fleet_hub_last_judgement_timestamp_seconds[{HUB_LOOKBACK}])",
                            silent = hub_silent_after()
                        ),
                        "",
                        "critical",
                        "No fleet hub is judging the sites",
                        "No hub leader has recorded a full judgement of every site for more than \
                         45 s (3 of its 15 s intervals), or no hub replica has been scraped for an \
                         hour: site phases, conditions and the fleet summary are not being \
                         updated, `kubectl fleet status` warns so, and the per-site alerts keep \
                         the state they had. Causes: every replica is down, none leads, or the \
                         leader cannot watch the sites or write their status. Check the \
                         fleet-operator-hub Deployment (`kubectl -n fleet-system get deployment \
                         fleet-operator-hub`) and its logs.",
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
                        "histogram_quantile(0.5, sum by (le) (rate(fleet_hub_watch_event_lag_seconds_bucket[5m]))) > 30",
                        "10m",
                        "warning",
                        "The fleet hub judges heartbeats {{ $value | humanizeDuration }} late",
                        "Half of the new heartbeats the hub judged over the last 5 minutes were \
                         more than 30 s old by the hub's clock: the hub is falling behind its \
                         watch (CPU limits, API server latency). The median is taken over every \
                         site's heartbeats, so an edge whose clock runs behind (it carries the \
                         ClockSkew condition, `kubectl fleet status -o wide`) does not raise this \
                         unless most heartbeats come from such edges. Check the hub's CPU and \
                         fleet_hub_reconcile_errors_total.",
                    ),
                ],
            },
        ],
    })
}

/// The alerts the grouped-outage inhibition holds back: the shipped
/// per-site pages of a dark site and of one late to wake, and
/// docs/migrating.md's per-group replacement for a copied ChatCLI alert.
pub(crate) const OUTAGE_INHIBITS: &[&str] = &[
    "ClusterDisconnected",
    "ClusterLateToWake",
    "FleetSitesDisconnected",
];

/// The Alertmanager inhibition rules that go with the alert rules: while
/// `FleetGroupedOutage` fires for a group, the `ClusterDisconnected` and
/// `ClusterLateToWake` alerts of that group's sites (and
/// docs/migrating.md's `FleetSitesDisconnected` of that group) are held
/// back (the `group` label of each is the site's value of the hub's
/// `--outage-group-by`). Shipped as
/// `deploy/monitoring/alertmanager-inhibit-rules.yaml`, to merge into the
/// Alertmanager configuration (docs/observability.md).
pub(crate) fn inhibit_rules() -> Value {
    json!({
        "inhibit_rules": [{
            "source_matchers": ["alertname=\"FleetGroupedOutage\""],
            "target_matchers": [format!("alertname=~\"{}\"", OUTAGE_INHIBITS.join("|"))],
            "equal": ["group"],
        }],
    })
}

/// Whether an alert with `target` labels is held back by one with `source`
/// labels under [`inhibit_rules`], as Alertmanager decides it: the source
/// matches every source matcher, the target every target matcher, and
/// both have the same value (absent is empty) of every `equal` label.
/// Matchers are `name="value"` or `name=~"a|b"` (an anchored alternation
/// of literal values, the only regular expressions the rules use).
#[cfg(any(test, feature = "fixtures"))]
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
            if let Some((k, v)) = m.split_once("=~") {
                let value = get(labels, k);
                return v.trim_matches('"').split('|').any(|alt| alt == value);
            }
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

/// The ServiceAccount whose token the ServiceMonitor sends to the hub
/// (bound to the ClusterRole `fleet-operator-metrics-reader`: `get` on
/// `/metrics` only), and the Secret the API server keeps that token in.
pub(crate) const SCRAPER_NAME: &str = "fleet-operator-metrics-scraper";
/// See [`SCRAPER_NAME`].
pub(crate) const SCRAPER_TOKEN_SECRET: &str = "fleet-operator-metrics-scraper-token";

/// The scraper's identity: its ServiceAccount, a
/// `kubernetes.io/service-account-token` Secret the API server fills with
/// a token of it (what the ServiceMonitor's `authorization` reads: the
/// Prometheus Operator takes credentials from a Secret, not from a file),
/// and the binding to `reader_role`.
pub fn scraper_identity(labels: Value, reader_role: &str) -> Vec<Value> {
    vec![
        json!({
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": { "name": SCRAPER_NAME, "namespace": NAMESPACE, "labels": labels },
        }),
        json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/service-account-token",
            "metadata": {
                "name": SCRAPER_TOKEN_SECRET,
                "namespace": NAMESPACE,
                "labels": labels,
                "annotations": { "kubernetes.io/service-account.name": SCRAPER_NAME },
            },
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": { "name": SCRAPER_NAME, "labels": labels },
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": reader_role },
            "subjects": [{ "kind": "ServiceAccount", "name": SCRAPER_NAME, "namespace": NAMESPACE }],
        }),
    ]
}

/// The `ServiceMonitor` scraping the hub's `/metrics` over HTTPS with the
/// scraper's token ([`scraper_identity`], sent with `authorization`, not
/// the deprecated `bearerTokenFile`; the hub checks it with TokenReview
/// and SubjectAccessReview), verifying the hub's certificate as
/// `tls_config` says (`install` names the CA and the Service's name: the
/// token goes only to the hub).
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
                "authorization": {
                    "type": "Bearer",
                    "credentials": { "name": SCRAPER_TOKEN_SECRET, "key": "token" },
                },
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
    /// A liveness panel: it must say "down" when the hub is, never "No
    /// data" (see [`Liveness`]).
    liveness: Option<Liveness>,
}

/// How a liveness panel says "down".
#[derive(Clone, Copy, PartialEq, Eq)]
enum Liveness {
    /// Its expression is 0 while no hub is scraped (`or vector(0)`): 0,
    /// and no data at all, show "down".
    ZeroIsDown,
    /// Its expression keeps a value while no hub is scraped (the age of
    /// the last judgement keeps growing); no data at all shows "down".
    NoDataIsDown,
}

impl Panel {
    const fn new(
        title: &'static str,
        kind: &'static str,
        unit: &'static str,
        targets: &'static [(&'static str, &'static str)],
    ) -> Panel {
        Panel {
            title,
            kind,
            unit,
            targets,
            liveness: None,
        }
    }

    const fn liveness(mut self, how: Liveness) -> Panel {
        self.liveness = Some(how);
        self
    }
}

/// What the hub's liveness panels show when it is down.
pub const DOWN: &str = "down";

const PANELS: &[Panel] = &[
    Panel::new(
        "Sites by phase",
        "timeseries",
        "short",
        &[("max by (status) (federation_clusters_total)", "{{status}}")],
    ),
    Panel::new(
        "Sites not Connected",
        "stat",
        "short",
        &[(
            "sum(max by (status) (federation_clusters_total{status!=\"connected\"}))",
            "not connected",
        )],
    ),
    Panel::new(
        "Disconnected sites (as the hub judged them)",
        "table",
        "short",
        &[(
            "max by (cluster, group, status) (federation_cluster_disconnected)",
            "{{cluster}} {{status}}",
        )],
    ),
    Panel::new(
        "Grouped outages",
        "timeseries",
        "short",
        &[
            ("max(federation_grouped_outages_active)", "outages"),
            (
                "max by (outage, group_by, group) (federation_grouped_outage_clusters)",
                "{{outage}} {{group_by}}={{group}} (sites)",
            ),
        ],
    ),
    Panel::new(
        "Sites in a maintenance window",
        "table",
        "short",
        &[(
            "max by (cluster) (federation_cluster_maintenance)",
            "{{cluster}}",
        )],
    ),
    Panel::new(
        "Edge versions (sites)",
        "timeseries",
        "short",
        &[("max by (version) (federation_edge_versions)", "{{version}}")],
    ),
    Panel::new(
        "Health check duration (Pull probe, Push report round trip)",
        "timeseries",
        "s",
        &[
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
    ),
    Panel::new(
        "Active cross-cluster correlations",
        "timeseries",
        "short",
        &[("max(cross_cluster_correlations_active)", "correlations")],
    ),
    Panel::new(
        "New signals and cascades (per hour)",
        "timeseries",
        "short",
        &[
            (
                "sum by (signal_type) (increase(cross_cluster_issues_total[1h]))",
                "{{signal_type}}",
            ),
            (
                "sum by (source_tier, target_tier) (increase(cascade_detected_total[1h]))",
                "cascade {{source_tier}} → {{target_tier}}",
            ),
        ],
    ),
    Panel::new(
        "Remediation policy decisions (per hour)",
        "timeseries",
        "short",
        &[(
            "sum by (tier, mode) (increase(federation_remediation_policy_applied_total[1h]))",
            "{{tier}} {{mode}}",
        )],
    ),
    Panel::new(
        "Credential time left per site",
        "timeseries",
        "s",
        &[(
            "min by (cluster) (federation_cluster_credential_expiration_timestamp_seconds) - time()",
            "{{cluster}}",
        )],
    ),
    Panel::new(
        "Credential renewal due per site (self-renewing edges, Pull sites)",
        "timeseries",
        "s",
        &[(
            "min by (cluster) (federation_cluster_credential_renewal_timestamp_seconds) - time()",
            "{{cluster}}",
        )],
    ),
    Panel::new(
        "Seconds since a hub last judged every site",
        "stat",
        "s",
        // The last judgement any replica exported within the hour, so the
        // age keeps growing while no hub is scraped.
        &[(
            "time() - max(max_over_time(fleet_hub_last_judgement_timestamp_seconds[1h]))",
            "since the last full judgement",
        )],
    )
    .liveness(Liveness::NoDataIsDown),
    Panel::new(
        "Hub replicas scraped",
        "stat",
        "short",
        &[("count(fleet_hub_leader) or vector(0)", "replicas")],
    )
    .liveness(Liveness::ZeroIsDown),
    Panel::new(
        "Hub leader",
        "stat",
        "short",
        &[("sum(fleet_hub_leader) or vector(0)", "leaders")],
    )
    .liveness(Liveness::ZeroIsDown),
    Panel::new(
        "Hub lag (age of a heartbeat when judged)",
        "timeseries",
        "s",
        &[
            (
                "histogram_quantile(0.5, sum by (le) (rate(fleet_hub_watch_event_lag_seconds_bucket[5m])))",
                "p50 (FleetHubLagging)",
            ),
            (
                "histogram_quantile(0.9, sum by (le) (rate(fleet_hub_watch_event_lag_seconds_bucket[5m])))",
                "p90 (edges with ClockSkew included)",
            ),
        ],
    ),
    Panel::new(
        "Hub reconciles, writes, conflicts, errors",
        "timeseries",
        "ops",
        &[
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
    ),
    Panel::new(
        "Nodes per site",
        "timeseries",
        "short",
        &[(
            "max by (cluster, region) (federation_cluster_nodes)",
            "{{cluster}} {{region}}",
        )],
    ),
    Panel::new(
        "Hub-owned status restored (per hour)",
        "timeseries",
        "short",
        &[(
            "sum by (cluster) (increase(fleet_hub_status_restored_total[1h]))",
            "{{cluster}}",
        )],
    ),
];

/// The `fieldConfig.defaults` of a panel: its unit, and for a liveness
/// panel "down" for no data (and for 0, see [`Liveness`]).
fn field_defaults(p: &Panel) -> Value {
    let mut defaults = json!({ "unit": p.unit });
    if let Some(how) = p.liveness {
        defaults["noValue"] = json!(DOWN);
        if how == Liveness::ZeroIsDown {
            defaults["mappings"] = json!([{
                "type": "value",
                "options": { "0": { "text": DOWN, "color": "red", "index": 0 } },
            }]);
        }
    }
    defaults
}

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
                    let mut target = json!({ "datasource": ds, "expr": expr, "legendFormat": legend, "refId": id.to_string() });
                    if p.kind == "table" {
                        target["format"] = json!("table");
                        target["instant"] = json!(true);
                    }
                    target
                })
                .collect();
            json!({
                "id": i + 1,
                "type": p.kind,
                "title": p.title,
                "datasource": ds,
                "gridPos": { "h": 8, "w": 12, "x": (i % 2) * 12, "y": (i / 2) * 8 },
                "fieldConfig": { "defaults": field_defaults(p), "overrides": [] },
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

/// The expressions of the liveness panels (which must have a value, or
/// say "down", while no hub is scraped).
pub fn liveness_expressions() -> Vec<&'static str> {
    PANELS
        .iter()
        .filter(|p| p.liveness.is_some())
        .flat_map(|p| p.targets.iter().map(|(e, _)| *e))
        .collect()
}

/// The first line of every generated YAML file (the promtool unit tests
/// of `xtask` say where they come from the same way).
pub(crate) const HEADER: &str = "# Generated by tools/regen.sh from crates/fleet-core/src/manifests/monitoring.rs; do not edit.\n";

/// The files of `deploy/monitoring/` (file name, contents), but for the
/// rules' `promtool` unit tests, which `xtask` writes beside them.
pub fn files() -> Vec<(&'static str, String)> {
    let yaml = |v: &Value| format!("{HEADER}{}", crate::render::to_yaml(v).unwrap_or_default());
    vec![
        ("fleet-rules.yaml", yaml(&rule_groups())),
        ("prometheus-rule.yaml", yaml(&prometheus_rule())),
        ("alertmanager-inhibit-rules.yaml", yaml(&inhibit_rules())),
        (
            "grafana-dashboard.json",
            crate::render::to_json(&dashboard()).unwrap_or_default(),
        ),
    ]
}

/// Every PromQL expression of the rules and the dashboard.
#[cfg(any(test, feature = "fixtures"))]
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
#[cfg(any(test, feature = "fixtures"))]
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

    fn rules() -> Vec<Value> {
        rule_groups()["groups"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["rules"].as_array().unwrap().clone())
            .collect()
    }

    #[test]
    fn a_dark_site_has_one_page_whatever_its_phase() {
        let pages: Vec<Value> = rules()
            .into_iter()
            .filter(|r| r["alert"] == "ClusterDisconnected")
            .collect();
        assert_eq!(pages.len(), 1, "one rule, one severity");
        let page = &pages[0];
        assert_eq!(page["labels"]["severity"], "critical");
        assert_eq!(page["for"], DISCONNECTED_FOR);
        let expr = page["expr"].as_str().unwrap();
        // Aggregated without `status`: Stale turning Unreachable is the
        // same alert.
        assert!(expr.contains("max by (cluster, group) (federation_cluster_disconnected)"));
        assert!(!expr.contains("group, status"), "{expr}");
        assert!(!expr.contains("federation_cluster_disconnected{"), "{expr}");
        // Its text is true of Pull sites too.
        let text = page["annotations"]["description"].as_str().unwrap();
        assert!(text.contains("probe of a Pull site"), "{text}");
        assert!(!text.contains("for 3 intervals (stale)"), "{text}");
    }

    #[test]
    fn pages_from_the_hubs_series_are_held_while_no_hub_counts_the_fleet() {
        for name in [
            "ClusterDisconnected",
            "ClusterLateToWake",
            "FleetGroupedOutage",
            "CrossClusterIncident",
            "CredentialExpiring",
        ] {
            for rule in rules().into_iter().filter(|r| r["alert"] == name) {
                let expr = rule["expr"].as_str().unwrap();
                let severity = rule["labels"]["severity"].as_str().unwrap();
                assert!(
                    expr.contains(&format!(
                        "ALERTS{{alertname=\"{name}\", alertstate=\"firing\", severity=\"{severity}\"}}"
                    )),
                    "{name} keeps its own firing alerts: {expr}"
                );
                assert!(
                    expr.contains(&format!("unless on () ({HUB_COUNTS_THE_FLEET})")),
                    "{expr}"
                );
            }
        }
    }

    #[test]
    fn one_credential_expiring_alert_at_a_time_with_both_fixes() {
        let credential: Vec<Value> = rules()
            .into_iter()
            .filter(|r| r["alert"] == "CredentialExpiring")
            .collect();
        assert_eq!(credential.len(), 2);
        let warning = credential
            .iter()
            .find(|r| r["labels"]["severity"] == "warning")
            .unwrap();
        // The warning stops where the critical starts.
        assert!(
            warning["expr"]
                .as_str()
                .unwrap()
                .contains(&format!("< {CREDENTIAL_WARN} >= {CREDENTIAL_CRITICAL}"))
        );
        for rule in &credential {
            let text = rule["annotations"]["description"].as_str().unwrap();
            assert!(
                text.contains(
                    "`kubectl fleet register {{ $labels.cluster }} --pull --member-kubeconfig FILE`"
                ),
                "{text}"
            );
            assert!(
                text.contains("its renewal is more than 15 minutes overdue"),
                "{text}"
            );
            assert!(
                !text.contains("no renewal by the edge itself is due"),
                "{text}"
            );
        }
    }

    #[test]
    fn the_liveness_panels_say_down_and_the_hubs_series_have_panels() {
        let dashboard = dashboard();
        let panels = dashboard["panels"].as_array().unwrap();
        let liveness = liveness_expressions();
        assert_eq!(liveness.len(), 3);
        for expr in liveness {
            let panel = panels
                .iter()
                .find(|p| p["targets"][0]["expr"] == expr)
                .unwrap();
            assert_eq!(panel["fieldConfig"]["defaults"]["noValue"], DOWN);
        }
        let queried = dashboard.to_string();
        for name in [
            "federation_grouped_outages_active",
            "federation_grouped_outage_clusters",
            "federation_cluster_maintenance",
            "federation_cluster_disconnected",
            "federation_edge_versions",
            "federation_cluster_credential_renewal_timestamp_seconds",
        ] {
            assert!(
                PANELS
                    .iter()
                    .any(|p| p.targets.iter().any(|(e, _)| e.contains(name))),
                "no panel for {name}"
            );
            assert!(queried.contains(name));
        }
    }

    #[test]
    fn the_service_monitor_sends_the_scrapers_token_with_authorization() {
        let sm = service_monitor(json!({}), json!({}));
        let endpoint = &sm["spec"]["endpoints"][0];
        assert_eq!(endpoint["authorization"]["type"], "Bearer");
        assert_eq!(
            endpoint["authorization"]["credentials"],
            json!({ "name": SCRAPER_TOKEN_SECRET, "key": "token" })
        );
        assert!(endpoint.get("bearerTokenFile").is_none());
        let identity = scraper_identity(json!({}), "reader");
        assert_eq!(identity[1]["metadata"]["name"], SCRAPER_TOKEN_SECRET);
        assert_eq!(identity[2]["roleRef"]["name"], "reader");
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
