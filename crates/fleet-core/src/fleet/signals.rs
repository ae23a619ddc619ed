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
mod tests {
    use super::*;
    use crate::api::Severity;
    use serde_json::json;

    fn now() -> Timestamp {
        "2026-01-01T12:00:00Z".parse().unwrap()
    }

    fn pod(v: serde_json::Value) -> Pod {
        serde_json::from_value(v).unwrap()
    }

    fn deployment_pod(name: &str, status: serde_json::Value) -> Pod {
        pod(json!({
            "metadata": {
                "name": name, "namespace": "shop",
                "labels": {"pod-template-hash": "5d8f7"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8f7", "uid": "u", "controller": true}]
            },
            "status": status,
        }))
    }

    fn rs() -> ReplicaSet {
        serde_json::from_value(json!({
            "metadata": {
                "name": "web-5d8f7", "namespace": "shop",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d", "controller": true}]
            }
        }))
        .unwrap()
    }

    fn waiting(reason: &str) -> serde_json::Value {
        json!({"containerStatuses": [{
            "name": "app", "image": "x", "imageID": "", "ready": false, "restartCount": 4,
            "state": {"waiting": {"reason": reason, "message": format!("{reason} happened")}}
        }]})
    }

    fn node(name: &str, conditions: serde_json::Value) -> Node {
        serde_json::from_value(
            json!({"metadata": {"name": name}, "status": {"conditions": conditions}}),
        )
        .unwrap()
    }

    fn types(obs: &[Observation]) -> Vec<SignalType> {
        obs.iter().map(|o| o.type_).collect()
    }

    #[test]
    fn container_waiting_reasons() {
        for (reason, want) in [
            ("CrashLoopBackOff", SignalType::CrashLoopBackOff),
            ("ImagePullBackOff", SignalType::ImagePullBackOff),
            ("ErrImagePull", SignalType::ImagePullBackOff),
            (
                "CreateContainerConfigError",
                SignalType::CreateContainerConfigError,
            ),
        ] {
            let pods = [deployment_pod("web-5d8f7-abc", waiting(reason))];
            let rss = [rs()];
            let obs = observe(SignalSources {
                pods: &pods,
                replica_sets: &rss,
                ..Default::default()
            });
            assert_eq!(obs.len(), 1, "{reason}");
            assert_eq!(obs[0].type_, want);
            assert_eq!(obs[0].namespace, "shop");
            assert_eq!(obs[0].workload, WorkloadRef::new("Deployment", "web"));
            assert_eq!(
                obs[0].message.as_deref(),
                Some(format!("container app: {reason} happened").as_str())
            );
        }
        let pods = [deployment_pod("p", waiting("ContainerCreating"))];
        assert!(
            observe(SignalSources {
                pods: &pods,
                ..Default::default()
            })
            .is_empty()
        );
    }

    #[test]
    fn oom_killed_from_last_state_or_state() {
        for key in ["lastState", "state"] {
            let pods = [deployment_pod(
                "web-5d8f7-abc",
                json!({"containerStatuses": [{
                    "name": "app", "image": "x", "imageID": "", "ready": true, "restartCount": 2,
                    key: {"terminated": {"reason": "OOMKilled", "exitCode": 137}}
                }]}),
            )];
            let obs = observe(SignalSources {
                pods: &pods,
                ..Default::default()
            });
            assert_eq!(types(&obs), [SignalType::OomKilled], "{key}");
            assert_eq!(
                obs[0].message.as_deref(),
                Some("container app was OOMKilled (exit code 137, 2 restarts)")
            );
        }
    }

    #[test]
    fn init_containers_count_too() {
        let pods = [pod(json!({
            "metadata": {"name": "solo", "namespace": "a"},
            "status": {"initContainerStatuses": [{
                "name": "init", "image": "x", "imageID": "", "ready": false, "restartCount": 0,
                "state": {"waiting": {"reason": "ErrImagePull"}}
            }]}
        }))];
        let obs = observe(SignalSources {
            pods: &pods,
            ..Default::default()
        });
        assert_eq!(types(&obs), [SignalType::ImagePullBackOff]);
        assert_eq!(obs[0].workload, WorkloadRef::new("Pod", "solo"));
        assert_eq!(
            obs[0].message.as_deref(),
            Some("container init: ErrImagePull")
        );
    }

    #[test]
    fn evicted_and_unschedulable() {
        let pods = [
            pod(
                json!({"metadata": {"name": "e", "namespace": "a"}, "status": {"phase": "Failed", "reason": "Evicted", "message": "low on memory"}}),
            ),
            pod(
                json!({"metadata": {"name": "u", "namespace": "a"}, "status": {"phase": "Pending", "conditions": [
                    {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes available"}
                ]}}),
            ),
            pod(
                json!({"metadata": {"name": "ok", "namespace": "a"}, "status": {"phase": "Pending", "conditions": [
                    {"type": "PodScheduled", "status": "False", "reason": "SchedulerError"}
                ]}}),
            ),
        ];
        let obs = observe(SignalSources {
            pods: &pods,
            ..Default::default()
        });
        assert_eq!(
            types(&obs),
            [SignalType::Unschedulable, SignalType::Evicted]
        );
        assert_eq!(obs[0].message.as_deref(), Some("0/3 nodes available"));
        assert_eq!(obs[1].workload, WorkloadRef::new("Pod", "e"));
    }

    #[test]
    fn node_conditions() {
        let nodes = [
            node(
                "n1",
                json!([{"type": "Ready", "status": "False", "message": "kubelet stopped posting"}]),
            ),
            node(
                "n2",
                json!([{"type": "Ready", "status": "Unknown"}, {"type": "MemoryPressure", "status": "True"}]),
            ),
            node(
                "n3",
                json!([
                    {"type": "Ready", "status": "True"},
                    {"type": "DiskPressure", "status": "True"},
                    {"type": "PIDPressure", "status": "True"},
                    {"type": "MemoryPressure", "status": "False"}
                ]),
            ),
            node("n4", json!([])),
            node("ok", json!([{"type": "Ready", "status": "True"}])),
        ];
        let obs = observe(SignalSources {
            nodes: &nodes,
            ..Default::default()
        });
        let got: Vec<_> = obs
            .iter()
            .map(|o| (o.type_, o.workload.name.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (SignalType::NodeNotReady, "n1"),
                (SignalType::NodeNotReady, "n2"),
                (SignalType::NodeNotReady, "n4"),
                (SignalType::MemoryPressure, "n2"),
                (SignalType::DiskPressure, "n3"),
                (SignalType::PidPressure, "n3"),
            ]
        );
        assert!(
            obs.iter()
                .all(|o| o.namespace.is_empty() && o.workload.kind == "Node")
        );
        assert_eq!(obs[0].message.as_deref(), Some("kubelet stopped posting"));
        assert_eq!(obs[1].message.as_deref(), Some("node Ready is Unknown"));
    }

    #[test]
    fn failed_inference_services() {
        let svc = |name: &str, health| InferenceServiceState {
            kind: "InferenceService".into(),
            namespace: "ml".into(),
            name: name.into(),
            health,
            message: Some("boom".into()),
            since: None,
        };
        let services = [
            svc("a", InferenceHealth::Failed),
            svc("b", InferenceHealth::Ready),
            svc("c", InferenceHealth::Progressing),
        ];
        let obs = observe(SignalSources {
            inference_services: &services,
            ..Default::default()
        });
        assert_eq!(types(&obs), [SignalType::InferenceServiceFailed]);
        assert_eq!(obs[0].workload, WorkloadRef::new("InferenceService", "a"));
    }

    #[test]
    fn owner_resolution() {
        let owned = |kind: &str, name: &str| {
            pod(json!({
                "metadata": {"name": "p", "namespace": "a", "ownerReferences": [
                    {"apiVersion": "v1", "kind": kind, "name": name, "uid": "u", "controller": true}
                ]},
                "status": waiting("CrashLoopBackOff"),
            }))
        };
        let rss = [rs()];
        let cases = [
            (
                owned("StatefulSet", "db"),
                WorkloadRef::new("StatefulSet", "db"),
            ),
            (
                owned("DaemonSet", "agent"),
                WorkloadRef::new("DaemonSet", "agent"),
            ),
            (owned("Job", "migrate"), WorkloadRef::new("Job", "migrate")),
            (
                owned("InferenceService", "llm"),
                WorkloadRef::new("Pod", "p"),
            ),
            (
                owned("ReplicaSet", "orphan-rs"),
                WorkloadRef::new("ReplicaSet", "orphan-rs"),
            ),
        ];
        for (p, want) in cases {
            let pods = [p];
            let obs = observe(SignalSources {
                pods: &pods,
                replica_sets: &rss,
                ..Default::default()
            });
            assert_eq!(obs[0].workload, want);
        }
        // ReplicaSet not listed: the pod-template-hash names the Deployment.
        let pods = [deployment_pod("web-5d8f7-x", waiting("CrashLoopBackOff"))];
        let obs = observe(SignalSources {
            pods: &pods,
            ..Default::default()
        });
        assert_eq!(obs[0].workload, WorkloadRef::new("Deployment", "web"));
        // ReplicaSet listed without a Deployment owner.
        let bare: ReplicaSet =
            serde_json::from_value(json!({"metadata": {"name": "web-5d8f7", "namespace": "shop"}}))
                .unwrap();
        let rss = [bare];
        let obs = observe(SignalSources {
            pods: &pods,
            replica_sets: &rss,
            ..Default::default()
        });
        assert_eq!(obs[0].workload, WorkloadRef::new("ReplicaSet", "web-5d8f7"));
    }

    #[test]
    fn pods_of_one_workload_merge_into_one_signal() {
        let rss = [rs()];
        let pods = [
            deployment_pod("web-5d8f7-b", waiting("CrashLoopBackOff")),
            deployment_pod("web-5d8f7-a", waiting("CrashLoopBackOff")),
        ];
        let obs = observe(SignalSources {
            pods: &pods,
            replica_sets: &rss,
            ..Default::default()
        });
        assert_eq!(obs.len(), 1);
    }

    fn obs(type_: SignalType, name: &str) -> Observation {
        Observation {
            type_,
            namespace: "a".into(),
            workload: WorkloadRef::new("Deployment", name),
            message: None,
            since: None,
        }
    }

    #[test]
    fn merge_carries_first_seen_and_count() {
        let t1 = now();
        let first = merge(
            &[],
            vec![obs(SignalType::CrashLoopBackOff, "web")],
            t1,
            DEFAULT_RETENTION,
        );
        assert_eq!(first[0].count, 1);
        assert_eq!(first[0].first_seen, Time(t1));
        assert_eq!(first[0].severity, Severity::High);
        let t2 = t1 + SignedDuration::from_secs(30);
        let second = merge(
            &first,
            vec![obs(SignalType::CrashLoopBackOff, "web")],
            t2,
            DEFAULT_RETENTION,
        );
        assert_eq!(second[0].count, 2);
        assert_eq!(second[0].first_seen, Time(t1));
        assert_eq!(second[0].last_seen, Time(t2));
    }

    #[test]
    fn merge_keeps_recent_and_drops_old_unobserved_signals() {
        let t1 = now();
        let first = merge(
            &[],
            vec![obs(SignalType::CrashLoopBackOff, "web")],
            t1,
            DEFAULT_RETENTION,
        );
        let t2 = t1 + SignedDuration::from_secs(15 * 60);
        let kept = merge(&first, vec![], t2, DEFAULT_RETENTION);
        assert_eq!(kept, first, "kept unchanged within retention");
        let t3 = t2 + SignedDuration::from_secs(1);
        assert!(merge(&kept, vec![], t3, DEFAULT_RETENTION).is_empty());
    }

    #[test]
    fn merge_sorts_worst_first_and_bounds_to_100() {
        let mut observed: Vec<Observation> = (0..150)
            .map(|i| obs(SignalType::Evicted, &format!("w{i:03}")))
            .collect();
        observed.push(obs(SignalType::ImagePullBackOff, "img"));
        observed.push(Observation {
            type_: SignalType::NodeNotReady,
            namespace: String::new(),
            workload: WorkloadRef::new("Node", "n1"),
            message: None,
            since: None,
        });
        observed.push(obs(SignalType::OomKilled, "big"));
        observed.push(obs(SignalType::CrashLoopBackOff, "big"));
        let out = merge(&[], observed, now(), DEFAULT_RETENTION);
        assert_eq!(out.len(), MAX_SIGNALS);
        let head: Vec<_> = out
            .iter()
            .take(5)
            .map(|s| (s.type_, s.workload.name.as_str()))
            .collect();
        assert_eq!(
            head,
            [
                (SignalType::NodeNotReady, "n1"),
                (SignalType::OomKilled, "big"),
                (SignalType::CrashLoopBackOff, "big"),
                (SignalType::ImagePullBackOff, "img"),
                (SignalType::Evicted, "w000"),
            ]
        );
        assert_eq!(out.last().unwrap().workload.name, "w095");
    }

    #[test]
    fn collect_is_deterministic_whatever_the_input_order() {
        let rss = [rs()];
        let mut pods = vec![
            deployment_pod("web-5d8f7-a", waiting("CrashLoopBackOff")),
            pod(
                json!({"metadata": {"name": "e", "namespace": "b"}, "status": {"reason": "Evicted"}}),
            ),
        ];
        let a = collect_signals(
            SignalSources {
                pods: &pods,
                replica_sets: &rss,
                ..Default::default()
            },
            &[],
            now(),
        );
        pods.reverse();
        let b = collect_signals(
            SignalSources {
                pods: &pods,
                replica_sets: &rss,
                ..Default::default()
            },
            &[],
            now(),
        );
        assert_eq!(a, b);
        assert_eq!(a.len(), 2);
    }

    // --- onsets: when the member's records say a failure began ---

    /// `mins` minutes before [`now`], as the API server writes times.
    fn mins_ago(mins: i64) -> String {
        (now() - SignedDuration::from_mins(mins)).to_string()
    }

    fn since_of(pods: &[Pod]) -> Vec<(SignalType, Option<Timestamp>)> {
        observe(SignalSources {
            pods,
            ..Default::default()
        })
        .into_iter()
        .map(|o| (o.type_, o.since))
        .collect()
    }

    fn ts(mins: i64) -> Option<Timestamp> {
        Some(now() - SignedDuration::from_mins(mins))
    }

    /// A pod of Deployment `web` created 3 h and started 2 h 59 min ago,
    /// with `status` merged over its start time.
    fn started_pod(status: serde_json::Value) -> Pod {
        let mut p = deployment_pod("web-5d8f7-abc", status);
        p.metadata.creation_timestamp = Some(Time(now() - SignedDuration::from_mins(180)));
        let st = p.status.get_or_insert_with(Default::default);
        st.start_time
            .get_or_insert(Time(now() - SignedDuration::from_mins(179)));
        p
    }

    fn container(state: serde_json::Value, last_state: serde_json::Value) -> serde_json::Value {
        json!({"name": "app", "image": "x", "imageID": "", "ready": false, "restartCount": 12,
               "state": state, "lastState": last_state})
    }

    fn crash_looping(last_exit_mins: i64) -> serde_json::Value {
        container(
            json!({"waiting": {"reason": "CrashLoopBackOff"}}),
            json!({"terminated": {"exitCode": 1, "reason": "Error",
                                  "startedAt": mins_ago(last_exit_mins + 1),
                                  "finishedAt": mins_ago(last_exit_mins)}}),
        )
    }

    fn condition(type_: &str, status: &str, mins: i64) -> serde_json::Value {
        json!({"type": type_, "status": status, "lastTransitionTime": mins_ago(mins)})
    }

    #[test]
    fn crash_loop_onset_is_when_the_containers_stopped_being_ready() {
        // Failing for 60 min, last crash 2 min ago: the readiness
        // transition, not the latest crash.
        let pod = started_pod(json!({
            "conditions": [condition("Ready", "False", 60), condition("ContainersReady", "False", 60)],
            "containerStatuses": [crash_looping(2)],
        }));
        assert_eq!(since_of(&[pod]), [(SignalType::CrashLoopBackOff, ts(60))]);
        // Ready alone (no ContainersReady) serves too.
        let pod = started_pod(json!({
            "conditions": [condition("Ready", "False", 45)],
            "containerStatuses": [crash_looping(2)],
        }));
        assert_eq!(since_of(&[pod])[0].1, ts(45));
        // The next crash does not move it: same onset 5 min later.
        let later = started_pod(json!({
            "conditions": [condition("ContainersReady", "False", 60)],
            "containerStatuses": [crash_looping(0)],
        }));
        assert_eq!(since_of(&[later])[0].1, ts(60));
    }

    #[test]
    fn crash_loop_onset_without_a_readiness_record() {
        // ContainersReady True (a stale status) or absent: the last crash.
        for conditions in [json!([condition("ContainersReady", "True", 90)]), json!([])] {
            let pod = started_pod(json!({
                "conditions": conditions,
                "containerStatuses": [crash_looping(3)],
            }));
            assert_eq!(since_of(&[pod])[0].1, ts(3), "{conditions}");
        }
        // No termination on record either: the pod's start, else creation.
        let waiting_only = json!({"containerStatuses": [container(
            json!({"waiting": {"reason": "CrashLoopBackOff"}}), json!({}))]});
        assert_eq!(since_of(&[started_pod(waiting_only.clone())])[0].1, ts(179));
        let mut unstarted = started_pod(waiting_only.clone());
        unstarted.status.as_mut().unwrap().start_time = None;
        assert_eq!(since_of(&[unstarted])[0].1, ts(180));
        // Nothing recorded at all: no onset (merge falls back).
        assert_eq!(
            since_of(&[deployment_pod("web-5d8f7-abc", waiting_only)])[0].1,
            None
        );
    }

    #[test]
    fn image_and_config_errors_start_when_the_containers_went_unready() {
        for reason in [
            "ImagePullBackOff",
            "ErrImagePull",
            "CreateContainerConfigError",
        ] {
            let state = json!({"waiting": {"reason": reason}});
            let pod = started_pod(json!({
                "conditions": [condition("ContainersReady", "False", 30)],
                "containerStatuses": [container(state.clone(), json!({}))],
            }));
            assert_eq!(since_of(&[pod])[0].1, ts(30), "{reason}");
            // Never ran, no condition: since the pod started.
            let pod = started_pod(json!({"containerStatuses": [container(state, json!({}))]}));
            assert_eq!(since_of(&[pod])[0].1, ts(179), "{reason}");
        }
    }

    #[test]
    fn oom_onset_is_the_kill() {
        let killed = |key: &str, terminated: serde_json::Value| {
            let (state, last) = if key == "state" {
                (json!({"terminated": terminated}), json!({}))
            } else {
                (
                    json!({"running": {"startedAt": mins_ago(4)}}),
                    json!({"terminated": terminated}),
                )
            };
            started_pod(json!({
                "conditions": [condition("ContainersReady", "True", 4)],
                "containerStatuses": [container(state, last)],
            }))
        };
        for key in ["lastState", "state"] {
            let full = json!({"reason": "OOMKilled", "exitCode": 137,
                              "startedAt": mins_ago(20), "finishedAt": mins_ago(5)});
            assert_eq!(
                since_of(&[killed(key, full)]),
                [(SignalType::OomKilled, ts(5))],
                "{key}"
            );
            let started_only =
                json!({"reason": "OOMKilled", "exitCode": 137, "startedAt": mins_ago(20)});
            assert_eq!(since_of(&[killed(key, started_only)])[0].1, ts(20), "{key}");
            let bare = json!({"reason": "OOMKilled", "exitCode": 137});
            assert_eq!(since_of(&[killed(key, bare)])[0].1, None, "{key}");
        }
    }

    #[test]
    fn unschedulable_onset_is_the_scheduling_verdict() {
        let pending = |cond: serde_json::Value| {
            started_pod(json!({"phase": "Pending", "conditions": [cond]}))
        };
        let mut with_time = condition("PodScheduled", "False", 25);
        with_time["reason"] = json!("Unschedulable");
        assert_eq!(
            since_of(&[pending(with_time)]),
            [(SignalType::Unschedulable, ts(25))]
        );
        // No transition time: never scheduled, so since it was created.
        let bare = json!({"type": "PodScheduled", "status": "False", "reason": "Unschedulable"});
        assert_eq!(since_of(&[pending(bare)])[0].1, ts(180));
    }

    #[test]
    fn eviction_onset_is_what_the_pod_records_of_it() {
        let evicted = |extra: serde_json::Value| {
            let mut status =
                json!({"phase": "Failed", "reason": "Evicted", "message": "low on memory"});
            status
                .as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            started_pod(status)
        };
        let terminated = |mins| {
            container(
                json!({"terminated": {"exitCode": 137, "finishedAt": mins_ago(mins)}}),
                json!({}),
            )
        };
        let cases = [
            (
                json!({"conditions": [condition("DisruptionTarget", "True", 8), condition("Ready", "False", 7)]}),
                ts(8),
            ),
            (
                json!({"conditions": [condition("Ready", "False", 7)]}),
                ts(7),
            ),
            (
                json!({"containerStatuses": [terminated(9), terminated(6)]}),
                ts(6),
            ),
            // Its start says nothing about when it was evicted.
            (json!({}), None),
        ];
        for (extra, want) in cases {
            let got = since_of(&[evicted(extra.clone())]);
            assert_eq!(got, [(SignalType::Evicted, want)], "{extra}");
        }
    }

    #[test]
    fn node_onset_is_the_condition_transition() {
        let mut nodes = [
            node(
                "n1",
                json!([
                    condition("Ready", "False", 12),
                    condition("DiskPressure", "True", 14)
                ]),
            ),
            node("n2", json!([condition("Ready", "Unknown", 3)])),
            node("n3", json!([])),
            node(
                "n4",
                json!([{"type": "Ready", "status": "True"}, {"type": "PIDPressure", "status": "True"}]),
            ),
        ];
        nodes[2].metadata.creation_timestamp = Some(Time(now() - SignedDuration::from_mins(2)));
        let got: Vec<_> = observe(SignalSources {
            nodes: &nodes,
            ..Default::default()
        })
        .into_iter()
        .map(|o| (o.type_, o.workload.name, o.since))
        .collect();
        assert_eq!(
            got,
            [
                (SignalType::NodeNotReady, "n1".into(), ts(12)),
                (SignalType::NodeNotReady, "n2".into(), ts(3)),
                // Never reported Ready: NotReady since it was created.
                (SignalType::NodeNotReady, "n3".into(), ts(2)),
                (SignalType::DiskPressure, "n1".into(), ts(14)),
                (SignalType::PidPressure, "n4".into(), None),
            ]
        );
    }

    #[test]
    fn inference_onset_comes_from_the_classified_service() {
        let services = [InferenceServiceState {
            kind: "InferenceService".into(),
            namespace: "ml".into(),
            name: "llm".into(),
            health: InferenceHealth::Failed,
            message: None,
            since: ts(33),
        }];
        let obs = observe(SignalSources {
            inference_services: &services,
            ..Default::default()
        });
        assert_eq!(obs[0].since, ts(33));
    }

    #[test]
    fn a_workloads_onset_is_its_earliest_pods() {
        let rss = [rs()];
        let crashing = |name: &str, mins: Option<i64>| {
            let conditions = mins.map_or(json!([]), |m| {
                json!([condition("ContainersReady", "False", m)])
            });
            deployment_pod(
                name,
                json!({"conditions": conditions, "containerStatuses": [container(
                    json!({"waiting": {"reason": "CrashLoopBackOff"}}), json!({}))]}),
            )
        };
        // The pod sorting first records nothing, the others 40 and 70 min.
        let pods = [
            crashing("web-5d8f7-c", Some(40)),
            crashing("web-5d8f7-a", None),
            crashing("web-5d8f7-b", Some(70)),
        ];
        let obs = observe(SignalSources {
            pods: &pods,
            replica_sets: &rss,
            ..Default::default()
        });
        assert_eq!(obs.len(), 1);
        assert_eq!(obs[0].since, ts(70));
    }

    fn obs_since(name: &str, since: Option<Timestamp>) -> Observation {
        Observation {
            since,
            ..obs(SignalType::CrashLoopBackOff, name)
        }
    }

    #[test]
    fn first_seen_is_the_members_onset_whenever_the_reader_starts() {
        // Two readers (an edge before and after a restart, or two edges)
        // that first read the same member at different times agree.
        let onset = now() - SignedDuration::from_mins(90);
        let early = merge(
            &[],
            vec![obs_since("web", Some(onset))],
            now(),
            DEFAULT_RETENTION,
        );
        let late_now = now() + SignedDuration::from_mins(7);
        let late = merge(
            &[],
            vec![obs_since("web", Some(onset))],
            late_now,
            DEFAULT_RETENTION,
        );
        assert_eq!(early[0].first_seen, Time(onset));
        assert_eq!(late[0].first_seen, Time(onset));
        assert_eq!(late[0].last_seen, Time(late_now));
        assert_eq!(late[0].count, 1);
    }

    #[test]
    fn first_seen_keeps_the_earliest_onset_while_continuous() {
        let t = |m: i64| now() - SignedDuration::from_mins(m);
        let first = merge(
            &[],
            vec![obs_since("web", Some(t(60)))],
            t(30),
            DEFAULT_RETENTION,
        );
        assert_eq!(first[0].first_seen, Time(t(60)));
        // The member's record moved forward (ready between crashes): kept.
        let second = merge(
            &first,
            vec![obs_since("web", Some(t(20)))],
            t(20),
            DEFAULT_RETENTION,
        );
        assert_eq!((second[0].first_seen.0, second[0].count), (t(60), 2));
        // An earlier record (an older pod listed now): taken.
        let third = merge(
            &second,
            vec![obs_since("web", Some(t(75)))],
            t(19),
            DEFAULT_RETENTION,
        );
        assert_eq!(third[0].first_seen, Time(t(75)));
        // Nothing recorded: carried as it was.
        let fourth = merge(
            &third,
            vec![obs_since("web", None)],
            t(18),
            DEFAULT_RETENTION,
        );
        assert_eq!((fourth[0].first_seen.0, fourth[0].count), (t(75), 4));
    }

    #[test]
    fn a_failure_back_after_the_retention_gap_is_a_new_episode() {
        let t = |m: i64| now() - SignedDuration::from_mins(m);
        let before = merge(
            &[],
            vec![obs_since("web", Some(t(120)))],
            t(100),
            DEFAULT_RETENTION,
        );
        // Not seen for 15 min + 1 s: the old sighting no longer carries.
        let back = t(85) + SignedDuration::from_secs(1);
        let again = merge(
            &before,
            vec![obs_since("web", Some(t(86)))],
            back,
            DEFAULT_RETENTION,
        );
        assert_eq!((again[0].first_seen.0, again[0].count), (t(86), 1));
        let again = merge(
            &before,
            vec![obs_since("web", None)],
            back,
            DEFAULT_RETENTION,
        );
        assert_eq!(again[0].first_seen, Time(back));
        // Exactly at the retention limit it is still continuous.
        let kept = merge(
            &before,
            vec![obs_since("web", Some(t(86)))],
            t(85),
            DEFAULT_RETENTION,
        );
        assert_eq!((kept[0].first_seen.0, kept[0].count), (t(120), 2));
    }

    #[test]
    fn onsets_ahead_of_the_readers_clock_count_as_now() {
        let ahead = now() + SignedDuration::from_mins(5);
        let out = merge(
            &[],
            vec![obs_since("web", Some(ahead))],
            now(),
            DEFAULT_RETENTION,
        );
        assert_eq!(out[0].first_seen, Time(now()));
        // ... and a previous report from the future does not leak either.
        let mut future = out.clone();
        future[0].first_seen = Time(ahead);
        let out = merge(
            &future,
            vec![obs_since("web", Some(ahead))],
            now(),
            DEFAULT_RETENTION,
        );
        assert_eq!(out[0].first_seen, Time(now()));
    }

    #[test]
    fn a_previous_report_from_far_ahead_is_not_kept_for_ever() {
        // A status dated 2099 (written with the site's token, or by a
        // reader whose clock was wrong) is neither carried nor retained.
        let future = Signal::test(SignalType::OomKilled, "a", "Deployment", "big")
            .seen(-3_000_000_000, -3_000_000_000);
        assert!(
            merge(
                std::slice::from_ref(&future),
                vec![],
                now(),
                DEFAULT_RETENTION
            )
            .is_empty()
        );
        let out = merge(
            &[future],
            vec![Observation {
                type_: SignalType::OomKilled,
                ..obs_since("big", None)
            }],
            now(),
            DEFAULT_RETENTION,
        );
        assert_eq!((out[0].first_seen.0, out[0].count), (now(), 1));
        // A few seconds ahead (a clock stepped back): still continuous.
        let ahead = Signal::test(SignalType::OomKilled, "a", "Deployment", "big").seen(600, -5);
        let out = merge(
            std::slice::from_ref(&ahead),
            vec![],
            now(),
            DEFAULT_RETENTION,
        );
        assert_eq!(out, [ahead]);
    }

    #[test]
    fn history_starts_from_the_hubs_copy_of_the_site() {
        let held = Signal::test(SignalType::CrashLoopBackOff, "a", "Deployment", "web");
        let site = FederatedCluster::test("site-a").with_signal(held.clone());
        let mut history = SignalHistory::default();
        assert_eq!(history.previous(&site), std::slice::from_ref(&held));
        // Afterwards its own reports, not the (older) copy on the hub.
        let mine = merge(
            history.previous(&site),
            vec![obs(SignalType::CrashLoopBackOff, "web")],
            now(),
            DEFAULT_RETENTION,
        );
        history.record(&mine);
        assert_eq!(history.previous(&site), mine.as_slice());
        assert_eq!(
            mine[0].first_seen, held.first_seen,
            "carried from the hub's copy"
        );
        assert_eq!(mine[0].count, 2);
        // A re-created site (new uid) starts from its own, empty, status.
        let mut recreated = FederatedCluster::test("site-a");
        recreated.metadata.uid = Some("another".into());
        assert!(history.previous(&recreated).is_empty());
    }

    #[test]
    fn history_keeps_the_retained_signals_of_the_report_before_a_restart() {
        // A flapping failure not seen in this listing, 10 min ago on the
        // hub: a restarted reader keeps it for the rest of its retention.
        let held = Signal::test(SignalType::OomKilled, "a", "Deployment", "big").seen(900, 600);
        let site = FederatedCluster::test("site-a").with_signal(held.clone());
        let mut history = SignalHistory::default();
        let out = merge(history.previous(&site), vec![], now(), DEFAULT_RETENTION);
        assert_eq!(out, [held]);
    }
}
