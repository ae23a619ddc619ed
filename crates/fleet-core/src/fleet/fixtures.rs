//! Builders for test fixtures: `FederatedCluster::test("site-a").stale().with_gpus(8)`.
//!
//! Used by the unit tests of every module and by integration tests; the
//! builders produce objects as the API server would hold them (defaults
//! applied, `creationTimestamp` set).

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use crate::api::{
    Capacity, DEFAULT_KUBECONFIG_KEY, Environment, FederatedCluster, FederatedClusterSpec,
    FederatedClusterStatus, GpuCount, Inference, Mode, Phase, SecretKeyRef, Severity, Signal,
    SignalType, Tier, WorkloadRef,
};

/// The fixed "now" of every fixture, so snapshots and ages are deterministic.
pub const FIXTURE_NOW: &str = "2026-01-01T12:00:00Z";

/// [`FIXTURE_NOW`] as a timestamp.
pub fn fixture_now() -> Timestamp {
    FIXTURE_NOW.parse().expect("FIXTURE_NOW is RFC 3339")
}

/// `secs` seconds before [`fixture_now`] (negative: in the future).
pub fn ago(secs: i64) -> Time {
    Time(fixture_now() - SignedDuration::from_secs(secs))
}

/// `n` Connected sites `site-000`, … with every edge-owned field at its cap
/// ([`FederatedCluster::at_caps`]), even ones staging sites that saw every
/// signal 10 minutes before the odd ones (production): the most
/// correlation and cascade work, and the largest FederationStatus, that
/// sites can cause.
pub fn fleet_at_caps(n: usize) -> Vec<FederatedCluster> {
    (0..n)
        .map(|i| {
            let env = if i % 2 == 0 {
                Environment::Staging
            } else {
                Environment::Production
            };
            let mut site = FederatedCluster::test(&format!("site-{i:03}"))
                .with_environment(env)
                .connected()
                .at_caps();
            if env == Environment::Staging {
                for s in site
                    .status
                    .as_mut()
                    .into_iter()
                    .flat_map(|s| s.signals.iter_mut().flatten())
                {
                    s.first_seen = ago(600);
                }
            }
            site
        })
        .collect()
}

impl FederatedCluster {
    /// A registered Push-mode site with default spec, created 10 days before
    /// [`fixture_now`], never heard from (no status).
    pub fn test(name: &str) -> Self {
        let mut fc = FederatedCluster::new(name, FederatedClusterSpec::default());
        fc.metadata = ObjectMeta {
            name: Some(name.to_owned()),
            uid: Some(format!("00000000-0000-0000-0000-{:0>12}", name.len())),
            resource_version: Some("1".to_owned()),
            generation: Some(1),
            creation_timestamp: Some(ago(10 * 24 * 3600)),
            ..ObjectMeta::default()
        };
        fc
    }

    fn status_mut(&mut self) -> &mut FederatedClusterStatus {
        self.status
            .get_or_insert_with(FederatedClusterStatus::default)
    }

    fn interval_secs(&self) -> i64 {
        self.spec.heartbeat_interval_seconds.into()
    }

    /// Pull mode with the kubeconfig Secret `register --pull` creates.
    pub fn pull(mut self) -> Self {
        self.spec.mode = Mode::Pull;
        self.spec.kubeconfig_secret_ref = Some(SecretKeyRef {
            namespace: crate::fleet::rbac::FLEET_NAMESPACE.to_owned(),
            name: crate::fleet::rbac::pull_secret_name(self.site_name()),
            key: DEFAULT_KUBECONFIG_KEY.to_owned(),
        });
        self
    }

    /// Set `spec.tier`.
    pub fn with_tier(mut self, tier: Tier) -> Self {
        self.spec.tier = tier;
        self
    }

    /// Set `spec.environment`.
    pub fn with_environment(mut self, environment: Environment) -> Self {
        self.spec.environment = environment;
        self
    }

    /// Set `spec.region`.
    pub fn with_region(mut self, region: &str) -> Self {
        self.spec.region = Some(region.to_owned());
        self
    }

    /// Set `spec.heartbeatIntervalSeconds`.
    pub fn with_interval(mut self, secs: i32) -> Self {
        self.spec.heartbeat_interval_seconds = secs;
        self
    }

    /// Edge-reported facts of a healthy 3-node site whose last heartbeat
    /// was `secs` ago, without touching hub-owned fields.
    pub fn heartbeat_ago(mut self, secs: i64) -> Self {
        let status = self.status_mut();
        status.last_heartbeat_time = Some(ago(secs));
        status
            .observed_version
            .get_or_insert_with(|| "0.1.0".to_owned());
        status
            .kubernetes_version
            .get_or_insert_with(|| "v1.33.2".to_owned());
        status.node_count.get_or_insert(3);
        status.namespace_count.get_or_insert(12);
        status.capacity.get_or_insert_with(|| Capacity {
            nodes: 3,
            ..Capacity::default()
        });
        self
    }

    /// Set the hub-owned phase, its transition time `since_secs` ago and the
    /// matching `Connected` condition.
    pub fn with_phase(mut self, phase: Phase, since_secs: i64) -> Self {
        let generation = self.metadata.generation;
        let interval = self.heartbeat_interval();
        let status = self.status_mut();
        status.phase = Some(phase);
        status.phase_transition_time = Some(ago(since_secs));
        status.conditions = Some(vec![crate::fleet::hub_status::connected_condition(
            phase,
            interval,
            ago(since_secs).0,
            generation,
        )]);
        self
    }

    /// Replace (or add) condition `type_`, as of `since_secs` ago.
    pub fn with_condition(
        mut self,
        type_: &str,
        status: &str,
        reason: &str,
        message: &str,
        since_secs: i64,
    ) -> Self {
        let generation = self.metadata.generation;
        let conditions = self.status_mut().conditions.get_or_insert_with(Vec::new);
        conditions.retain(|c| c.type_ != type_);
        conditions.push(k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition {
            type_: type_.to_owned(),
            status: status.to_owned(),
            reason: reason.to_owned(),
            message: message.to_owned(),
            last_transition_time: ago(since_secs),
            observed_generation: generation,
        });
        self
    }

    /// The site as every reader decodes it after the status keys of
    /// `written` (an object) were written with those values (a heartbeat
    /// with ten fraction digits, a count above i64): through the lenient
    /// decoder (`api::lenient`), so what does not read is left out and
    /// recorded.
    pub fn poisoned(self, written: serde_json::Value) -> Self {
        let mut json = serde_json::to_value(&self).expect("a site serialises");
        for (key, value) in written.as_object().expect("an object of status keys") {
            json["status"][key] = value.clone();
        }
        serde_json::from_value(json).expect("a site always decodes")
    }

    /// A Pull site's latest successful probe took `ms` milliseconds.
    pub fn probed_in(mut self, ms: i64) -> Self {
        self.status_mut().last_probe_duration_milliseconds = Some(ms);
        self
    }

    /// A Push site's previous report to the hub took `ms` milliseconds.
    pub fn reported_in(mut self, ms: i64) -> Self {
        self.status_mut().last_report_duration_milliseconds = Some(ms);
        self
    }

    /// The hub measured the edge clock `secs` seconds ahead of its own
    /// (negative: behind) and wrote `clockOffsetSeconds`.
    pub fn with_clock_offset(mut self, secs: i64) -> Self {
        self.status_mut().clock_offset_seconds = Some(secs);
        self
    }

    /// Its nodes' summary (`status.nodeInfo`) as `f` sets it.
    pub fn with_node_info(mut self, f: impl FnOnce(&mut crate::api::NodeInfo)) -> Self {
        f(self
            .status_mut()
            .node_info
            .get_or_insert_with(Default::default));
        self
    }

    /// Its reports name member cluster `uid` (`status.member`).
    pub fn with_member(mut self, uid: &str) -> Self {
        self.status_mut().member = Some(uid.to_owned());
        self
    }

    /// Registered, never heard from: phase Pending, no heartbeat.
    pub fn pending(self) -> Self {
        self.with_phase(Phase::Pending, 600)
    }

    /// Heard from 5 s ago: phase Connected.
    pub fn connected(self) -> Self {
        self.heartbeat_ago(5).with_phase(Phase::Connected, 3600)
    }

    /// Last heartbeat 5 intervals ago: phase Stale.
    pub fn stale(self) -> Self {
        let i = self.interval_secs();
        self.heartbeat_ago(5 * i).with_phase(Phase::Stale, 2 * i)
    }

    /// Last heartbeat 20 intervals ago: phase Unreachable.
    pub fn unreachable(self) -> Self {
        let i = self.interval_secs();
        self.heartbeat_ago(20 * i)
            .with_phase(Phase::Unreachable, 10 * i)
    }

    /// Silent for 20 intervals inside its offline window: phase Sleeping.
    pub fn sleeping(self) -> Self {
        let i = self.interval_secs();
        self.heartbeat_ago(20 * i)
            .with_phase(Phase::Sleeping, 10 * i)
    }

    /// Still silent past its offline window: Unreachable, `Connected`
    /// with the reason `LateToWake`.
    pub fn late_to_wake(self) -> Self {
        self.unreachable().with_condition(
            crate::api::CONDITION_CONNECTED,
            "False",
            crate::fleet::hub_status::HeartbeatReason::LateToWake.as_str(),
            "late to wake",
            60,
        )
    }

    /// `n` NVIDIA GPUs, all allocatable.
    pub fn with_gpus(self, n: i64) -> Self {
        self.with_gpu_vendor("nvidia.com/gpu", n, n)
    }

    /// Add GPUs of one vendor resource and update the totals.
    pub fn with_gpu_vendor(mut self, vendor: &str, total: i64, allocatable: i64) -> Self {
        let capacity = self
            .status_mut()
            .capacity
            .get_or_insert_with(Capacity::default);
        let entry = capacity
            .gpus_by_vendor
            .entry(vendor.to_owned())
            .or_default();
        *entry = GpuCount { total, allocatable };
        capacity.gpus_total = capacity.gpus_by_vendor.values().map(|g| g.total).sum();
        capacity.gpus_allocatable = capacity
            .gpus_by_vendor
            .values()
            .map(|g| g.allocatable)
            .sum();
        self
    }

    /// Set the inference counts.
    pub fn with_inference(mut self, models: i64, ready: i64, failed: i64, total: i64) -> Self {
        self.status_mut().inference = Some(Inference {
            models,
            services_ready: ready,
            services_failed: failed,
            services_total: total,
        });
        self
    }

    /// Append one signal.
    pub fn with_signal(mut self, signal: Signal) -> Self {
        self.status_mut()
            .signals
            .get_or_insert_with(Vec::new)
            .push(signal);
        self
    }

    /// Every edge-owned field at its cap (`MAX_SIGNALS` signals, every
    /// string at its `maxLength`, `MAX_GPU_VENDORS` GPU resources, counts
    /// at `i64::MAX`), text in NUL characters, the longest once stored as
    /// JSON (`\u0000`). Past what the CRD admits today (no control
    /// characters, counts up to `MAX_COUNT`): the most a reader can be
    /// handed by an API server that validates less. Signal `i` has type `i` mod the number of types on
    /// workload `Kind/NNN…`, the same on every site built this way, so
    /// correlation and cascade detection over such sites do the most work.
    pub fn at_caps(mut self) -> Self {
        use crate::api::{
            MAX_GPU_VENDORS, MAX_LABEL_CHARS, MAX_MESSAGE_CHARS, MAX_NODE_VALUE_CHARS,
            MAX_NODE_VALUES, MAX_OBJECT_NAME_CHARS, MAX_SIGNALS, MAX_VERSION_CHARS, NodeInfo,
            NodeValue, NodeValues,
        };
        let fill = |prefix: String, n: usize| {
            let mut s = prefix;
            while s.chars().count() < n {
                s.push('\0');
            }
            s
        };
        let at = Time(fixture_now());
        let signal = |i: usize| Signal {
            type_: SignalType::ALL[i % SignalType::ALL.len()],
            severity: Severity::ALL[i % Severity::ALL.len()],
            cluster: Some(fill(String::new(), MAX_LABEL_CHARS)),
            namespace: fill(String::new(), MAX_LABEL_CHARS),
            workload: WorkloadRef::new(
                fill("Kind".into(), MAX_LABEL_CHARS),
                fill(format!("{i:03}"), MAX_OBJECT_NAME_CHARS),
            ),
            message: Some(fill(String::new(), MAX_MESSAGE_CHARS)),
            first_seen: at.clone(),
            last_seen: at.clone(),
            count: i64::MAX,
        };
        let gpus = GpuCount {
            total: i64::MAX,
            allocatable: i64::MAX,
        };
        self.status = Some(FederatedClusterStatus {
            last_heartbeat_time: Some(at.clone()),
            observed_version: Some(fill(String::new(), MAX_VERSION_CHARS)),
            kubernetes_version: Some(fill(String::new(), MAX_VERSION_CHARS)),
            node_count: Some(i64::MAX),
            namespace_count: Some(i64::MAX),
            capacity: Some(Capacity {
                nodes: i64::MAX,
                gpus_total: i64::MAX,
                gpus_allocatable: i64::MAX,
                gpus_by_vendor: (0..MAX_GPU_VENDORS)
                    .map(|i| (fill(format!("{i:02}"), MAX_OBJECT_NAME_CHARS), gpus))
                    .collect(),
            }),
            inference: Some(Inference {
                models: i64::MAX,
                services_ready: i64::MAX,
                services_failed: i64::MAX,
                services_total: i64::MAX,
            }),
            signals: Some((0..MAX_SIGNALS).map(signal).collect()),
            node_info: Some({
                let values = NodeValues {
                    values: (0..MAX_NODE_VALUES)
                        .map(|i| NodeValue {
                            value: fill(format!("{i}"), MAX_NODE_VALUE_CHARS),
                            nodes: i64::MAX,
                        })
                        .collect(),
                    other_values: i64::MAX,
                    other_nodes: i64::MAX,
                };
                NodeInfo {
                    os_image: values.clone(),
                    kernel_version: values.clone(),
                    container_runtime_version: values.clone(),
                    gpu_model: values,
                }
            }),
            credential_expiration_time: Some(at),
            ..self.status.unwrap_or_default()
        });
        self
    }

    /// A reported dark period (`status.lastDarkPeriod`) from `from_ago` to
    /// `to_ago` seconds before [`fixture_now`], with `entries`.
    pub fn with_dark_period(
        mut self,
        from_ago: i64,
        to_ago: i64,
        entries: Vec<crate::api::DarkEntry>,
    ) -> Self {
        self.status_mut().last_dark_period = Some(crate::api::DarkPeriod {
            from: ago(from_ago),
            to: ago(to_ago),
            entries,
            dropped: 0,
        });
        self
    }

    /// The edge's hub token expires `secs` after [`fixture_now`].
    pub fn with_token_expiring_in(mut self, secs: i64) -> Self {
        self.status_mut().credential_expiration_time = Some(ago(-secs));
        self
    }

    /// The edge renews its hub token by itself `secs` after [`fixture_now`].
    pub fn with_token_renewed_in(mut self, secs: i64) -> Self {
        self.status_mut().credential_renewal_time = Some(ago(-secs));
        self
    }
}

impl Signal {
    /// A signal of `type_` on `kind/name` in `namespace` with the type's
    /// default severity, first seen 10 min and last seen 1 min before
    /// [`fixture_now`], count 1.
    pub fn test(type_: SignalType, namespace: &str, kind: &str, name: &str) -> Self {
        Signal {
            type_,
            severity: type_.default_severity(),
            cluster: None,
            namespace: namespace.to_owned(),
            workload: WorkloadRef::new(kind, name),
            message: None,
            first_seen: ago(600),
            last_seen: ago(60),
            count: 1,
        }
    }

    /// Set firstSeen and lastSeen, in seconds before [`fixture_now`].
    pub fn seen(mut self, first_ago: i64, last_ago: i64) -> Self {
        self.first_seen = ago(first_ago);
        self.last_seen = ago(last_ago);
        self
    }

    /// Set the severity.
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// Set the count.
    pub fn with_count(mut self, count: i64) -> Self {
        self.count = count;
        self
    }

    /// Set the message.
    pub fn with_message(mut self, message: &str) -> Self {
        self.message = Some(message.to_owned());
        self
    }
}

impl crate::api::GroupedOutage {
    /// The grouped outage `id` of the sites of region `value` named
    /// `clusters`, dark since `since`, its start not recorded.
    pub fn test(id: &str, value: &str, clusters: &[&str], since: Time) -> Self {
        crate::api::GroupedOutage {
            id: id.to_owned(),
            group_by: "region".to_owned(),
            value: value.to_owned(),
            clusters: clusters.iter().map(|c| (*c).to_owned()).collect(),
            clusters_total: i64::try_from(clusters.len()).unwrap_or(i64::MAX),
            since,
            started_by: None,
            common_factors: Vec::new(),
        }
    }
}

impl crate::api::NodeValues {
    /// These values with their node counts, as listed (nothing else).
    pub fn of(values: &[(&str, i64)]) -> Self {
        crate::api::NodeValues {
            values: values
                .iter()
                .map(|(value, nodes)| crate::api::NodeValue {
                    value: (*value).to_owned(),
                    nodes: *nodes,
                })
                .collect(),
            ..Default::default()
        }
    }
}
