//! Signal extraction (docs/architecture.md#signals-correlation-and-remediation-policy): active workload and node failures of one
//! member cluster, from listed Pods, Nodes and ReplicaSets (for owner
//! resolution) plus classified inference services.
//!
//! [`observe`] turns objects into one [`Observation`] per
//! (type, namespace, workload), each with its **onset**: when the member's
//! own records say the failure began (a condition's transition, a
//! container's termination, a pod's start; see [`Observation::since`]).
//! [`merge`] folds those into the previous report, taking `firstSeen` from
//! the onset and carrying it and `count` while the signal stays
//! continuous, and bounds the result to [`MAX_SIGNALS`] worst first.
//! [`collect_signals`] does both. [`SignalHistory`] is the previous report
//! a reader merges into: what it last reported, or what the hub holds.
//!
//! Because `firstSeen` is the member's fact and not the reader's memory,
//! restarting or rolling out edges (or a hub failover for Pull sites)
//! leaves it unchanged, and so never creates, hides or reorders a cascade
//! (docs/architecture.md#signal-onset).

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{
    ContainerStatus, Node, NodeCondition, Pod, PodCondition, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};

pub(crate) use crate::api::MAX_SIGNALS;
use crate::api::{FederatedCluster, Signal, SignalType, WorkloadRef};
use crate::fleet::inventory::{InferenceHealth, InferenceServiceState};

/// Default time a signal that is no longer observed stays in the report,
/// so that flapping failures (a crash-looping container is briefly Running
/// between back-offs) keep one entry, and so that a failure stays visible
/// for the default correlation window.
pub(crate) const DEFAULT_RETENTION: Duration = Duration::from_secs(15 * 60);

/// The objects signals are extracted from.
#[derive(Clone, Copy, Debug, Default)]
pub struct SignalSources<'a> {
    /// Pods of all namespaces.
    pub pods: &'a [Pod],
    /// Nodes.
    pub nodes: &'a [Node],
    /// ReplicaSets of all namespaces, to resolve Pod → ReplicaSet → Deployment.
    pub replica_sets: &'a [ReplicaSet],
    /// Inference services, already classified.
    pub inference_services: &'a [InferenceServiceState],
}

/// One failure seen in the current listing, before merging with history.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Observation {
    /// Failure type.
    pub type_: SignalType,
    /// Namespace; empty for nodes.
    pub namespace: String,
    /// The workload it is attributed to.
    pub workload: WorkloadRef,
    /// Detail from the first object showing it.
    pub message: Option<String>,
    /// The onset on the member's clock: the earliest time any object
    /// showing this failure records it began (rules per type in
    /// docs/architecture.md#signal-onset). None where the member records
    /// nothing usable; [`merge`] then falls back to the previous report,
    /// else to `now`.
    pub since: Option<Timestamp>,
}

type Key = (SignalType, String, WorkloadRef);

/// One failure of one object, before it is attributed to a workload.
struct Failure {
    type_: SignalType,
    message: Option<String>,
    since: Option<Timestamp>,
}

/// The earlier of two optional times (a known one beats an unknown one).
fn earliest(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn at(t: Option<&Time>) -> Option<Timestamp> {
    t.map(|t| t.0)
}

/// Every failure visible in `sources`, one per (type, namespace, workload),
/// sorted by that key. When several pods of one workload fail the same way,
/// the message comes from the pod whose name sorts first and the onset is
/// the earliest any of them records.
pub(crate) fn observe(sources: SignalSources<'_>) -> Vec<Observation> {
    let mut found: BTreeMap<Key, (Option<String>, Option<Timestamp>)> = BTreeMap::new();
    let mut add = |namespace: &str, workload: WorkloadRef, f: Failure| {
        let entry = found
            .entry((f.type_, namespace.to_owned(), workload))
            .or_insert((f.message, None));
        entry.1 = earliest(entry.1, f.since);
    };

    let mut nodes: Vec<&Node> = sources.nodes.iter().collect();
    nodes.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    for node in nodes {
        let name = node.metadata.name.clone().unwrap_or_default();
        for f in node_failures(node) {
            add("", WorkloadRef::new("Node", name.clone()), f);
        }
    }

    let owners = OwnerIndex::new(sources.replica_sets);
    let mut pods: Vec<&Pod> = sources.pods.iter().collect();
    pods.sort_by(|a, b| {
        (&a.metadata.namespace, &a.metadata.name).cmp(&(&b.metadata.namespace, &b.metadata.name))
    });
    for pod in pods {
        let failures = pod_failures(pod);
        if failures.is_empty() {
            continue;
        }
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let workload = owners.workload_of(pod);
        for f in failures {
            add(&namespace, workload.clone(), f);
        }
    }

    let mut services: Vec<&InferenceServiceState> = sources.inference_services.iter().collect();
    services
        .sort_by(|a, b| (&a.namespace, &a.name, &a.kind).cmp(&(&b.namespace, &b.name, &b.kind)));
    for svc in services
        .into_iter()
        .filter(|s| s.health == InferenceHealth::Failed)
    {
        add(
            &svc.namespace,
            WorkloadRef::new(svc.kind.clone(), svc.name.clone()),
            Failure {
                type_: SignalType::InferenceServiceFailed,
                message: svc.message.clone(),
                since: svc.since,
            },
        );
    }

    found
        .into_iter()
        .map(
            |((type_, namespace, workload), (message, since))| Observation {
                type_,
                namespace,
                workload,
                message,
                since,
            },
        )
        .collect()
}

/// Node conditions that are failures: Ready not True (including a missing
/// Ready condition, which means the kubelet never reported), and the
/// pressure conditions when True. Onset: the condition's
/// lastTransitionTime; a node without a Ready condition has been NotReady
/// since it was created.
fn node_failures(node: &Node) -> Vec<Failure> {
    let conditions = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let since = |c: &NodeCondition| at(c.last_transition_time.as_ref());
    let mut out = Vec::new();
    match conditions.iter().find(|c| c.type_ == "Ready") {
        Some(c) if c.status == "True" => {}
        Some(c) => out.push(Failure {
            type_: SignalType::NodeNotReady,
            message: Some(
                c.message
                    .clone()
                    .unwrap_or_else(|| format!("node Ready is {}", c.status)),
            ),
            since: since(c),
        }),
        None => out.push(Failure {
            type_: SignalType::NodeNotReady,
            message: Some("node has no Ready condition".to_owned()),
            since: at(node.metadata.creation_timestamp.as_ref()),
        }),
    }
    for c in conditions.iter().filter(|c| c.status == "True") {
        let type_ = match c.type_.as_str() {
            "MemoryPressure" => SignalType::MemoryPressure,
            "DiskPressure" => SignalType::DiskPressure,
            "PIDPressure" => SignalType::PidPressure,
            _ => continue,
        };
        out.push(Failure {
            type_,
            message: c.message.clone(),
            since: since(c),
        });
    }
    out
}

/// Pod-level and container-level failures of one pod.
fn pod_failures(pod: &Pod) -> Vec<Failure> {
    let Some(status) = pod.status.as_ref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if status.reason.as_deref() == Some("Evicted") {
        out.push(Failure {
            type_: SignalType::Evicted,
            message: status.message.clone(),
            since: evicted_since(status),
        });
    }
    if let Some(c) = status.conditions.iter().flatten().find(|c| {
        c.type_ == "PodScheduled"
            && c.status == "False"
            && c.reason.as_deref() == Some("Unschedulable")
    }) {
        // Never scheduled: unschedulable since it was created, at the latest.
        out.push(Failure {
            type_: SignalType::Unschedulable,
            message: c.message.clone(),
            since: at(c.last_transition_time.as_ref())
                .or_else(|| at(pod.metadata.creation_timestamp.as_ref())),
        });
    }
    let containers = status
        .init_container_statuses
        .iter()
        .chain(status.container_statuses.iter())
        .chain(status.ephemeral_container_statuses.iter())
        .flatten();
    for cs in containers {
        out.extend(container_failures(pod, status, cs));
    }
    out
}

/// The pod condition of `type_`, if the pod has one.
fn pod_condition<'a>(status: &'a PodStatus, type_: &str) -> Option<&'a PodCondition> {
    status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == type_)
}

/// When the pod's containers last stopped being ready: the
/// lastTransitionTime of ContainersReady (else Ready) while it is not True.
fn unready_since(status: &PodStatus) -> Option<Timestamp> {
    let c = pod_condition(status, "ContainersReady").or_else(|| pod_condition(status, "Ready"))?;
    if c.status == "True" {
        return None;
    }
    at(c.last_transition_time.as_ref())
}

/// When the pod started: `status.startTime`, else its creation.
fn pod_started(pod: &Pod, status: &PodStatus) -> Option<Timestamp> {
    at(status.start_time.as_ref()).or_else(|| at(pod.metadata.creation_timestamp.as_ref()))
}

/// Onset of a container waiting in a failure (CrashLoopBackOff,
/// ImagePullBackOff, CreateContainerConfigError): the earlier of when the
/// pod's containers last stopped being ready and the container's last
/// termination (`lastState.terminated.finishedAt`); with neither recorded,
/// the pod's start (a container that never ran has failed since then).
///
/// The readiness transition is the stable part: it does not move while
/// the container keeps failing without becoming ready again. The last
/// termination moves forward with every crash; it only matters when no
/// readiness condition is recorded, and [`merge`] keeps the earliest onset
/// while the signal is continuous.
fn waiting_since(pod: &Pod, status: &PodStatus, cs: &ContainerStatus) -> Option<Timestamp> {
    let last_exit = cs
        .last_state
        .as_ref()
        .and_then(|s| s.terminated.as_ref())
        .and_then(|t| at(t.finished_at.as_ref()));
    earliest(unready_since(status), last_exit).or_else(|| pod_started(pod, status))
}

/// Onset of an eviction: the kubelet's DisruptionTarget condition (True),
/// else the Ready condition's transition to not True, else the latest
/// time a container was terminated. Nothing else a pod records says when
/// it was evicted (its startTime is when it started running).
fn evicted_since(status: &PodStatus) -> Option<Timestamp> {
    let condition = |type_: &str, evicted: fn(&str) -> bool| {
        pod_condition(status, type_)
            .filter(|c| evicted(&c.status))
            .and_then(|c| at(c.last_transition_time.as_ref()))
    };
    condition("DisruptionTarget", |s| s == "True")
        .or_else(|| condition("Ready", |s| s != "True"))
        .or_else(|| {
            status
                .container_statuses
                .iter()
                .flatten()
                .filter_map(|cs| cs.state.as_ref()?.terminated.as_ref())
                .filter_map(|t| at(t.finished_at.as_ref()))
                .max()
        })
}

fn container_failures(pod: &Pod, status: &PodStatus, cs: &ContainerStatus) -> Vec<Failure> {
    let mut out = Vec::new();
    if let Some(waiting) = cs.state.as_ref().and_then(|s| s.waiting.as_ref()) {
        let type_ = match waiting.reason.as_deref() {
            Some("CrashLoopBackOff") => Some(SignalType::CrashLoopBackOff),
            Some("ImagePullBackOff" | "ErrImagePull") => Some(SignalType::ImagePullBackOff),
            Some("CreateContainerConfigError") => Some(SignalType::CreateContainerConfigError),
            _ => None,
        };
        if let Some(type_) = type_ {
            let detail = waiting
                .message
                .as_deref()
                .or(waiting.reason.as_deref())
                .unwrap_or_default();
            out.push(Failure {
                type_,
                message: Some(format!("container {}: {detail}", cs.name)),
                since: waiting_since(pod, status, cs),
            });
        }
    }
    // A container OOM-killed and restarted shows it in lastState; one that
    // is not restarted (restartPolicy Never) in state. Onset: the kill
    // (finishedAt), else the start of the run that was killed.
    let oom = [cs.last_state.as_ref(), cs.state.as_ref()]
        .into_iter()
        .flatten()
        .filter_map(|s| s.terminated.as_ref())
        .find(|t| t.reason.as_deref() == Some("OOMKilled"));
    if let Some(t) = oom {
        out.push(Failure {
            type_: SignalType::OomKilled,
            message: Some(format!(
                "container {} was OOMKilled (exit code {}, {} restarts)",
                cs.name, t.exit_code, cs.restart_count
            )),
            since: at(t.finished_at.as_ref()).or_else(|| at(t.started_at.as_ref())),
        });
    }
    out
}

fn controller_of(owners: Option<&Vec<OwnerReference>>) -> Option<&OwnerReference> {
    let owners = owners?;
    owners
        .iter()
        .find(|o| o.controller == Some(true))
        .or_else(|| owners.first())
}

/// ReplicaSets by (namespace, name), to find their Deployment.
struct OwnerIndex<'a> {
    replica_sets: HashMap<(&'a str, &'a str), &'a ReplicaSet>,
}

impl<'a> OwnerIndex<'a> {
    fn new(replica_sets: &'a [ReplicaSet]) -> Self {
        let replica_sets = replica_sets
            .iter()
            .filter_map(|rs| {
                Some((
                    (
                        rs.metadata.namespace.as_deref().unwrap_or_default(),
                        rs.metadata.name.as_deref()?,
                    ),
                    rs,
                ))
            })
            .collect();
        Self { replica_sets }
    }

    /// The workload a pod belongs to: its Deployment (through its
    /// ReplicaSet), StatefulSet, DaemonSet or Job; else the Pod itself.
    fn workload_of(&self, pod: &Pod) -> WorkloadRef {
        let pod_ref = || WorkloadRef::new("Pod", pod.metadata.name.clone().unwrap_or_default());
        let Some(owner) = controller_of(pod.metadata.owner_references.as_ref()) else {
            return pod_ref();
        };
        match owner.kind.as_str() {
            "StatefulSet" | "DaemonSet" | "Job" => {
                WorkloadRef::new(owner.kind.clone(), owner.name.clone())
            }
            "ReplicaSet" => {
                let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
                match self.replica_sets.get(&(ns, owner.name.as_str())) {
                    Some(rs) => match controller_of(rs.metadata.owner_references.as_ref()) {
                        Some(o) if o.kind == "Deployment" => {
                            WorkloadRef::new("Deployment", o.name.clone())
                        }
                        _ => WorkloadRef::new("ReplicaSet", owner.name.clone()),
                    },
                    // Not listed (e.g. just created): a Deployment's ReplicaSet
                    // is named DEPLOYMENT-HASH with the pod's template hash.
                    None => match pod
                        .metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get("pod-template-hash"))
                        .and_then(|hash| owner.name.strip_suffix(&format!("-{hash}")))
                    {
                        Some(deployment) => WorkloadRef::new("Deployment", deployment),
                        None => WorkloadRef::new("ReplicaSet", owner.name.clone()),
                    },
                }
            }
            _ => pod_ref(),
        }
    }
}

/// Fold the current observations into the previous report at `now`:
///
/// - continuous (same type, namespace and workload in `previous`, last
///   seen within `retention` of `now`, before or after): `firstSeen` is the earlier of the previous
///   `firstSeen` and the member's onset, `count` + 1;
/// - new, or back after a gap longer than `retention`: `firstSeen` is the
///   member's onset (else `now`), `count` 1;
/// - either way `lastSeen` = now and the message is refreshed; an onset
///   later than `now` (a member clock ahead of the reader's) counts as
///   `now`;
/// - no longer observed: kept unchanged while `lastSeen` is within
///   `retention`, then dropped.
///
/// So `firstSeen` never moves forward while a failure lasts (a crash loop
/// whose container is briefly ready between crashes keeps its first onset)
/// and is the same whichever reader first saw it, or when.
///
/// The result is sorted worst first, then by type, namespace and workload,
/// and cut to [`MAX_SIGNALS`].
pub(crate) fn merge(
    previous: &[Signal],
    observed: Vec<Observation>,
    now: Timestamp,
    retention: Duration,
) -> Vec<Signal> {
    let retention = SignedDuration::try_from(retention).unwrap_or(SignedDuration::MAX);
    // Within `retention` either way: a lastSeen far ahead of `now` (a
    // status someone else wrote, taken over by a restarted reader) must
    // not keep a signal for ever.
    let continuous = |s: &Signal| now.duration_since(s.last_seen.0).abs() <= retention;
    let mut prev: HashMap<Key, &Signal> = previous
        .iter()
        .filter(|s| continuous(s))
        .map(|s| ((s.type_, s.namespace.clone(), s.workload.clone()), s))
        .collect();
    let mut out: Vec<Signal> = observed
        .into_iter()
        .map(|o| {
            let key = (o.type_, o.namespace.clone(), o.workload.clone());
            let before = prev.remove(&key);
            let onset = o.since.map_or(now, |t| t.min(now));
            Signal {
                type_: o.type_,
                severity: o.type_.default_severity(),
                cluster: before.and_then(|b| b.cluster.clone()),
                namespace: o.namespace,
                workload: o.workload,
                message: o.message,
                first_seen: Time(before.map_or(onset, |b| b.first_seen.0.min(onset))),
                last_seen: Time(now),
                count: before.map_or(1, |b| b.count.saturating_add(1)),
            }
        })
        .collect();
    out.extend(prev.into_values().cloned());
    sort_signals(&mut out);
    out.truncate(MAX_SIGNALS);
    out
}

/// Sort worst first, then deterministically by type, namespace, workload
/// and cluster.
pub(crate) fn sort_signals(signals: &mut [Signal]) {
    signals.sort_by(|a, b| {
        (a.severity, a.type_, &a.namespace, &a.workload, &a.cluster).cmp(&(
            b.severity,
            b.type_,
            &b.namespace,
            &b.workload,
            &b.cluster,
        ))
    });
}

/// [`observe`] then [`merge`] with [`DEFAULT_RETENTION`]: the next value
/// of `status.signals`.
pub fn collect_signals(
    sources: SignalSources<'_>,
    previous: &[Signal],
    now: Timestamp,
) -> Vec<Signal> {
    merge(previous, observe(sources), now, DEFAULT_RETENTION)
}

/// The previous report a reader of one site (its edge, or the hub's Pull
/// prober) merges the next observations into: the signals it last
/// reported for this very site object, or — on its first report, and when
/// the site was re-created — the signals the site's status on the hub
/// holds. A restarted edge, or a new hub leader probing a Pull site,
/// therefore carries `firstSeen`, `count` and the signals kept for the
/// retention window on from the report before it instead of starting over.
#[derive(Clone, Debug, Default)]
pub struct SignalHistory {
    /// The uid of the site object `signals` belong to (None: nothing yet).
    site_uid: Option<Option<String>>,
    signals: Vec<Signal>,
}

impl SignalHistory {
    /// The previous report for `site` as the hub holds it now.
    pub fn previous(&mut self, site: &FederatedCluster) -> &[Signal] {
        if self.site_uid.as_ref() != Some(&site.metadata.uid) {
            self.site_uid = Some(site.metadata.uid.clone());
            self.signals = site
                .status
                .as_ref()
                .map(|s| s.signals().to_vec())
                .unwrap_or_default();
        }
        &self.signals
    }

    /// Remembers the report just built, for the next one.
    pub fn record(&mut self, signals: &[Signal]) {
        self.signals = signals.to_vec();
    }
}

#[cfg(test)]
mod tests;
