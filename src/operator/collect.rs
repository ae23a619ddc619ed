//! Turns what the edge read from its member cluster into its report: the
//! edge-owned part of a site's status ([`EdgeStatus`]), built once per
//! report and diffed against the last accepted one
//! (`fleet::status_patch::report_patch`). Pure: the reads happen in
//! `k8s::member`.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::api::{EdgeStatus, Signal, is_member_uid};
use crate::fleet::bounds::clip_edge_status;
use crate::fleet::inventory::{
    capacity_from_nodes, inference_counts, inference_service_state, node_info_from_nodes,
};
use crate::fleet::signals::{SignalSources, collect_signals};
use crate::k8s::member::{InferenceKind, MemberObjects};

/// The edge-owned status fields from one member read. `history` is the
/// previous signal list (`SignalHistory::previous`: carries `count`, the
/// signals kept for the retention window, and `firstSeen` where the member
/// records no onset); `firstSeen` is otherwise the member's own onset
/// (docs/architecture.md#signal-onset).
pub fn edge_status(objs: &MemberObjects, history: &[Signal], now: Timestamp) -> EdgeStatus {
    let mut models = 0;
    let mut services = Vec::new();
    for (kind, items) in &objs.inference {
        match kind {
            InferenceKind::LlmkubeModel => models += items.len(),
            InferenceKind::LlmkubeInferenceService | InferenceKind::KserveInferenceService => {
                services.extend(
                    items
                        .iter()
                        .map(|o| inference_service_state(kind.kind(), o)),
                );
            }
        }
    }
    let signals = collect_signals(
        SignalSources {
            pods: &objs.pods,
            nodes: &objs.nodes,
            replica_sets: &objs.replica_sets,
            inference_services: &services,
        },
        history,
        now,
    );
    let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    let mut status = EdgeStatus {
        kubernetes_version: Some(objs.kubernetes_version.clone()).filter(|v| !v.is_empty()),
        node_count: Some(count(objs.nodes.len())),
        namespace_count: Some(count(objs.namespace_count)),
        capacity: Some(capacity_from_nodes(&objs.nodes)),
        node_info: Some(node_info_from_nodes(&objs.nodes)),
        inference: Some(inference_counts(models, &services)),
        signals: Some(signals),
        // Only a UID as the API server makes them: anything else would
        // make the CRD refuse the whole report.
        member: objs.member_uid.clone().filter(|uid| is_member_uid(uid)),
        ..Default::default()
    };
    // Member text is unbounded; the CRD would reject the whole report.
    clip_edge_status(&mut status);
    status
}

/// Adds what the edge knows about itself: heartbeat time (its own clock),
/// build version, credential expiry and when it renews the credential by
/// itself (None: it does not).
pub fn with_identity(
    mut status: EdgeStatus,
    heartbeat: Timestamp,
    version: &str,
    credential_expires: Option<Timestamp>,
    credential_renews: Option<Timestamp>,
) -> EdgeStatus {
    status.last_heartbeat_time = Some(Time(heartbeat));
    status.observed_version = Some(version.to_owned());
    status.credential_expiration_time = credential_expires.map(Time);
    status.credential_renewal_time = credential_renews.map(Time);
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Node, Pod};
    use kube::api::DynamicObject;
    use serde_json::json;

    fn now() -> Timestamp {
        "2026-01-01T12:00:00Z".parse().unwrap()
    }

    fn objects() -> MemberObjects {
        let node: Node = serde_json::from_value(json!({
            "metadata": {"name": "gpu-1", "labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}},
            "status": {
                "nodeInfo": {"osImage": "Ubuntu 24.04.1 LTS", "kernelVersion": "6.8.0-45-generic",
                             "containerRuntimeVersion": "containerd://1.7.22", "architecture": "amd64",
                             "bootID": "", "kubeProxyVersion": "", "kubeletVersion": "v1.33.1",
                             "machineID": "", "operatingSystem": "linux", "systemUUID": ""},
                "capacity": {"nvidia.com/gpu": "8", "cpu": "64"},
                "allocatable": {"nvidia.com/gpu": "6"},
                "conditions": [{"type": "Ready", "status": "True"}]
            }
        }))
        .unwrap();
        let intel: Node = serde_json::from_value(json!({
            "metadata": {"name": "intel-1"},
            "status": {
                "capacity": {"gpu.intel.com/xe": "2", "habana.ai/gaudi": "4"},
                "allocatable": {"gpu.intel.com/xe": "2", "habana.ai/gaudi": "4"},
                "conditions": [{"type": "Ready", "status": "False"}]
            }
        }))
        .unwrap();
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "web-1", "namespace": "shop"},
            "status": {"containerStatuses": [{
                "name": "c", "image": "i", "imageID": "", "ready": false, "restartCount": 5,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}}
            }]}
        }))
        .unwrap();
        let isvc: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
            "metadata": {"name": "llm", "namespace": "ml"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}
        }))
        .unwrap();
        let model: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "inference.llmkube.dev/v1alpha1", "kind": "Model",
            "metadata": {"name": "m", "namespace": "ml"}
        }))
        .unwrap();
        MemberObjects {
            kubernetes_version: "v1.33.1".into(),
            nodes: vec![node, intel],
            namespace_count: 4,
            member_uid: Some("6f1c2a8e-0b7d-4f3e-9a51-2c8d7e6f1b20".into()),
            pods: vec![pod],
            replica_sets: vec![],
            inference: vec![
                (InferenceKind::LlmkubeModel, vec![model]),
                (InferenceKind::KserveInferenceService, vec![isvc]),
            ],
        }
    }

    #[test]
    fn gpus_by_vendor_inference_and_signals() {
        let s = edge_status(&objects(), &[], now());
        let cap = s.capacity.unwrap();
        assert_eq!(
            (cap.nodes, cap.gpus_total, cap.gpus_allocatable),
            (2, 14, 12)
        );
        assert_eq!(cap.gpus_by_vendor["nvidia.com/gpu"].allocatable, 6);
        assert_eq!(cap.gpus_by_vendor["habana.ai/gaudi"].total, 4);
        let inf = s.inference.unwrap();
        assert_eq!(
            (inf.models, inf.services_ready, inf.services_total),
            (1, 1, 1)
        );
        let types: Vec<_> = s
            .signals
            .unwrap()
            .iter()
            .map(|x| x.type_.as_str())
            .collect();
        assert_eq!(types, ["NodeNotReady", "CrashLoopBackOff"], "worst first");
        assert_eq!(s.node_count, Some(2));
        assert_eq!(s.namespace_count, Some(4));
    }

    #[test]
    fn a_restarted_reader_reports_the_members_onset_as_before() {
        // A pod unready since 11:00 whose container last crashed at 11:58.
        let crashing: Pod = serde_json::from_value(json!({
            "metadata": {"name": "web-1", "namespace": "shop"},
            "status": {
                "conditions": [{"type": "ContainersReady", "status": "False",
                                "lastTransitionTime": "2026-01-01T11:00:00Z"}],
                "containerStatuses": [{
                    "name": "c", "image": "i", "imageID": "", "ready": false, "restartCount": 9,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"exitCode": 1,
                                                 "finishedAt": "2026-01-01T11:58:00Z"}}
                }]
            }
        }))
        .unwrap();
        let mut o = objects();
        o.pods = vec![crashing];
        let first_seen = |status: EdgeStatus| {
            status
                .signals()
                .iter()
                .find(|s| s.type_ == crate::api::SignalType::CrashLoopBackOff)
                .map(|s| s.first_seen.0)
        };
        let onset = "2026-01-01T11:00:00Z".parse().ok();
        let running = edge_status(&o, &[], now());
        assert_eq!(first_seen(running.clone()), onset);
        // A restart 20 minutes later without its memory: the same onset.
        let later = now() + jiff::SignedDuration::from_mins(20);
        assert_eq!(first_seen(edge_status(&o, &[], later)), onset);
        // ... and with it, too.
        assert_eq!(first_seen(edge_status(&o, running.signals(), later)), onset);
    }

    #[test]
    fn the_member_is_named_by_its_kube_system_uid_when_it_is_one() {
        let s = edge_status(&objects(), &[], now());
        assert_eq!(
            s.member.as_deref(),
            Some("6f1c2a8e-0b7d-4f3e-9a51-2c8d7e6f1b20")
        );
        let mut o = objects();
        o.member_uid = None;
        assert_eq!(edge_status(&o, &[], now()).member, None);
        // A member that answers something else is not named at all (the
        // CRD would refuse the whole report).
        for odd in [
            "\u{1b}[2J",
            "not-a-uid",
            "6F1C2A8E-0B7D-4F3E-9A51-2C8D7E6F1B20",
        ] {
            o.member_uid = Some(odd.into());
            assert_eq!(edge_status(&o, &[], now()).member, None, "{odd}");
        }
    }

    #[test]
    fn the_report_says_what_the_nodes_run() {
        let mut o = objects();
        // A node whose kernel string is hostile: clipped like every member text.
        let mut odd = o.nodes[0].clone();
        odd.status
            .as_mut()
            .unwrap()
            .node_info
            .as_mut()
            .unwrap()
            .kernel_version = format!("6.8\u{1b}[2J{}", "9".repeat(10_000));
        o.nodes.push(odd);
        let info = edge_status(&o, &[], now()).node_info.unwrap();
        let listed = |v: &crate::api::NodeValues| -> Vec<(String, i64)> {
            v.values
                .iter()
                .map(|v| (v.value.clone(), v.nodes))
                .collect()
        };
        assert_eq!(
            listed(&info.os_image),
            [("Ubuntu 24.04.1 LTS".to_owned(), 2)],
            "the intel node reports none"
        );
        assert_eq!(
            listed(&info.gpu_model),
            [("NVIDIA-H100-80GB-HBM3".to_owned(), 2)]
        );
        let kernels = listed(&info.kernel_version);
        assert_eq!(kernels[0], ("6.8.0-45-generic".to_owned(), 1));
        assert!(kernels[1].0.starts_with("6.8\u{fffd}[2J999"), "{kernels:?}");
        assert_eq!(
            kernels[1].0.chars().count(),
            crate::api::MAX_NODE_VALUE_CHARS
        );
    }

    #[test]
    fn absent_inference_kinds_count_zero() {
        let mut o = objects();
        o.inference.clear();
        let inf = edge_status(&o, &[], now()).inference.unwrap();
        assert_eq!((inf.models, inf.services_total), (0, 0));
    }
}
