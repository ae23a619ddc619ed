//! Signal extraction (docs/architecture.md#signals-correlation-and-remediation-policy): active workload and node failures of one
//! member cluster, from listed Pods, Nodes and ReplicaSets (for owner
//! resolution) plus classified inference services.
//!
//! [`observe`] turns objects into one [`Observation`] per
//! (type, namespace, workload); [`merge`] folds those into the previous
//! report, carrying `firstSeen` and `count`, and bounds the result to
//! [`MAX_SIGNALS`] worst first. [`collect_signals`] does both.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{ContainerStatus, Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};

pub use crate::api::MAX_SIGNALS;
use crate::api::{Signal, SignalType, WorkloadRef};
use crate::fleet::inventory::{InferenceHealth, InferenceServiceState};

/// Default time a signal that is no longer observed stays in the report,
/// so that flapping failures (a crash-looping container is briefly Running
/// between back-offs) keep one entry, and so that a failure stays visible
/// for the default correlation window.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(15 * 60);

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
pub struct Observation {
    /// Failure type.
    pub type_: SignalType,
    /// Namespace; empty for nodes.
    pub namespace: String,
    /// The workload it is attributed to.
    pub workload: WorkloadRef,
    /// Detail from the first object showing it.
    pub message: Option<String>,
}

type Key = (SignalType, String, WorkloadRef);

/// Every failure visible in `sources`, one per (type, namespace, workload),
/// sorted by that key. When several pods of one workload fail the same way,
/// the message comes from the pod whose name sorts first.
pub fn observe(sources: SignalSources<'_>) -> Vec<Observation> {
    let mut found: BTreeMap<Key, Option<String>> = BTreeMap::new();
    let mut add =
        |type_: SignalType, namespace: &str, workload: WorkloadRef, message: Option<String>| {
            found
                .entry((type_, namespace.to_owned(), workload))
                .or_insert(message);
        };

    let mut nodes: Vec<&Node> = sources.nodes.iter().collect();
    nodes.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    for node in nodes {
        let name = node.metadata.name.clone().unwrap_or_default();
        for (type_, message) in node_failures(node) {
            add(type_, "", WorkloadRef::new("Node", name.clone()), message);
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
        for (type_, message) in failures {
            add(type_, &namespace, workload.clone(), message);
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
            SignalType::InferenceServiceFailed,
            &svc.namespace,
            WorkloadRef::new(svc.kind.clone(), svc.name.clone()),
            svc.message.clone(),
        );
    }

    found
        .into_iter()
        .map(|((type_, namespace, workload), message)| Observation {
            type_,
            namespace,
            workload,
            message,
        })
        .collect()
}

/// Node conditions that are failures: Ready not True (including a missing
/// Ready condition, which means the kubelet never reported), and the
/// pressure conditions when True.
fn node_failures(node: &Node) -> Vec<(SignalType, Option<String>)> {
    let conditions = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let mut out = Vec::new();
    match conditions.iter().find(|c| c.type_ == "Ready") {
        Some(c) if c.status == "True" => {}
        Some(c) => out.push((
            SignalType::NodeNotReady,
            Some(
                c.message
                    .clone()
                    .unwrap_or_else(|| format!("node Ready is {}", c.status)),
            ),
        )),
        None => out.push((
            SignalType::NodeNotReady,
            Some("node has no Ready condition".to_owned()),
        )),
    }
    for c in conditions.iter().filter(|c| c.status == "True") {
        let type_ = match c.type_.as_str() {
            "MemoryPressure" => SignalType::MemoryPressure,
            "DiskPressure" => SignalType::DiskPressure,
            "PIDPressure" => SignalType::PidPressure,
            _ => continue,
        };
        out.push((type_, c.message.clone()));
    }
    out
}

/// Pod-level and container-level failures of one pod.
fn pod_failures(pod: &Pod) -> Vec<(SignalType, Option<String>)> {
    let Some(status) = pod.status.as_ref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if status.reason.as_deref() == Some("Evicted") {
        out.push((SignalType::Evicted, status.message.clone()));
    }
    if let Some(c) = status.conditions.iter().flatten().find(|c| {
        c.type_ == "PodScheduled"
            && c.status == "False"
            && c.reason.as_deref() == Some("Unschedulable")
    }) {
        out.push((SignalType::Unschedulable, c.message.clone()));
    }
    let containers = status
        .init_container_statuses
        .iter()
        .chain(status.container_statuses.iter())
        .chain(status.ephemeral_container_statuses.iter())
        .flatten();
    for cs in containers {
        out.extend(container_failures(cs));
    }
    out
}

fn container_failures(cs: &ContainerStatus) -> Vec<(SignalType, Option<String>)> {
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
            out.push((type_, Some(format!("container {}: {detail}", cs.name))));
        }
    }
    // A container OOM-killed and restarted shows it in lastState; one that
    // is not restarted (restartPolicy Never) in state.
    let oom = [cs.last_state.as_ref(), cs.state.as_ref()]
        .into_iter()
        .flatten()
        .filter_map(|s| s.terminated.as_ref())
        .find(|t| t.reason.as_deref() == Some("OOMKilled"));
    if let Some(t) = oom {
        out.push((
            SignalType::OomKilled,
            Some(format!(
                "container {} was OOMKilled (exit code {}, {} restarts)",
                cs.name, t.exit_code, cs.restart_count
            )),
        ));
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
/// - seen before (same type, namespace, workload): `firstSeen` kept,
///   `count` + 1, `lastSeen` = now, message refreshed;
/// - new: `firstSeen` = `lastSeen` = now, `count` 1;
/// - no longer observed: kept unchanged while `lastSeen` is within
///   `retention`, then dropped.
///
/// The result is sorted worst first, then by type, namespace and workload,
/// and cut to [`MAX_SIGNALS`].
pub fn merge(
    previous: &[Signal],
    observed: Vec<Observation>,
    now: Timestamp,
    retention: Duration,
) -> Vec<Signal> {
    let mut prev: HashMap<Key, &Signal> = previous
        .iter()
        .map(|s| ((s.type_, s.namespace.clone(), s.workload.clone()), s))
        .collect();
    let mut out: Vec<Signal> = observed
        .into_iter()
        .map(|o| {
            let key = (o.type_, o.namespace.clone(), o.workload.clone());
            let before = prev.remove(&key);
            Signal {
                type_: o.type_,
                severity: o.type_.default_severity(),
                cluster: before.and_then(|b| b.cluster.clone()),
                namespace: o.namespace,
                workload: o.workload,
                message: o.message,
                first_seen: before.map_or(Time(now), |b| b.first_seen.clone()),
                last_seen: Time(now),
                count: before.map_or(1, |b| b.count.saturating_add(1)),
            }
        })
        .collect();
    let retention = SignedDuration::try_from(retention).unwrap_or(SignedDuration::MAX);
    out.extend(
        prev.into_values()
            .filter(|s| now.duration_since(s.last_seen.0) <= retention)
            .cloned(),
    );
    sort_signals(&mut out);
    out.truncate(MAX_SIGNALS);
    out
}

/// Sort worst first, then deterministically by type, namespace, workload
/// and cluster.
pub fn sort_signals(signals: &mut [Signal]) {
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
}
