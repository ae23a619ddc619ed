//! What a site has: node and GPU capacity from Nodes, what its nodes run
//! (OS image, kernel, container runtime, GPU model), and inference
//! workloads (LLMKube `Model`/`InferenceService`, KServe `InferenceService`)
//! classified from their status. Pure functions over listed objects; the
//! edge (Push) and the hub prober (Pull) both use them.

use std::collections::{BTreeMap, HashMap};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube_core::DynamicObject;
use serde_json::Value;

use crate::api::{Capacity, GPU_MODEL_LABELS, GpuCount, Inference, NodeInfo};
use crate::fleet::bounds::node_values;

/// Extended resource names counted as GPUs (vendor device plugins).
pub(crate) const GPU_RESOURCES: &[&str] = &[
    "nvidia.com/gpu",
    "amd.com/gpu",
    "gpu.intel.com/i915",
    "gpu.intel.com/xe",
    "habana.ai/gaudi",
];

/// Whether `resource` is an accelerator we count as GPUs.
pub(crate) fn is_gpu_resource(resource: &str) -> bool {
    GPU_RESOURCES.contains(&resource)
}

/// A device count from a Quantity; device plugins publish plain integers,
/// anything else (fractions, suffixes) counts as zero rather than guessing.
fn device_count(q: &Quantity) -> i64 {
    q.0.trim().parse::<i64>().unwrap_or(0).max(0)
}

/// Node and GPU capacity over `nodes`: totals from `status.capacity`,
/// allocatable from `status.allocatable`, per vendor resource.
pub fn capacity_from_nodes(nodes: &[Node]) -> Capacity {
    let mut by_vendor: BTreeMap<String, GpuCount> = BTreeMap::new();
    for status in nodes.iter().filter_map(|n| n.status.as_ref()) {
        for (resource, q) in status.capacity.iter().flatten() {
            if is_gpu_resource(resource) {
                let g = by_vendor.entry(resource.clone()).or_default();
                g.total = g.total.saturating_add(device_count(q));
            }
        }
        for (resource, q) in status.allocatable.iter().flatten() {
            if is_gpu_resource(resource) {
                let g = by_vendor.entry(resource.clone()).or_default();
                g.allocatable = g.allocatable.saturating_add(device_count(q));
            }
        }
    }
    Capacity {
        nodes: i64::try_from(nodes.len()).unwrap_or(i64::MAX),
        // A member's node can publish any integer; sums saturate, never wrap.
        gpus_total: by_vendor.values().fold(0, |n, g| n.saturating_add(g.total)),
        gpus_allocatable: by_vendor
            .values()
            .fold(0, |n, g| n.saturating_add(g.allocatable)),
        gpus_by_vendor: by_vendor,
    }
}

/// What the `nodes` run (`status.nodeInfo`): the distinct values of their
/// `status.nodeInfo.osImage`, `kernelVersion` and
/// `containerRuntimeVersion`, and of their GPU model (the first of
/// [`GPU_MODEL_LABELS`] a node carries), each with how many nodes have it —
/// within the CRD's caps (`fleet::bounds::node_values`: printable, cut,
/// the most common listed and the rest counted). A node without a value
/// is not counted for that attribute. Linear in the nodes.
pub fn node_info_from_nodes<'a>(nodes: &'a [Node]) -> NodeInfo {
    let mut counts: [HashMap<&str, i64>; 4] = Default::default();
    let mut one = |i: usize, value: &'a str| {
        if !value.is_empty() {
            *counts[i].entry(value).or_default() += 1;
        }
    };
    for node in nodes {
        if let Some(info) = node.status.as_ref().and_then(|s| s.node_info.as_ref()) {
            one(0, &info.os_image);
            one(1, &info.kernel_version);
            one(2, &info.container_runtime_version);
        }
        let labels = node.metadata.labels.as_ref();
        if let Some(model) = labels.and_then(|l| GPU_MODEL_LABELS.iter().find_map(|k| l.get(*k))) {
            one(3, model);
        }
    }
    let [os, kernel, runtime, gpu] =
        counts.map(|c| node_values(c.into_iter().map(|(v, n)| (v.to_owned(), n)), 0, 0));
    NodeInfo {
        os_image: os,
        kernel_version: kernel,
        container_runtime_version: runtime,
        gpu_model: gpu,
    }
}

/// Health of one inference service, from its status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InferenceHealth {
    /// Serving.
    Ready,
    /// Failed (phase Failed/Error, or condition Ready=False with a failure reason).
    Failed,
    /// Anything else: creating, progressing, unknown.
    Progressing,
}

/// One inference service as the signal and counting code needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InferenceServiceState {
    /// `InferenceService` (LLMKube or KServe).
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Health from status.
    pub health: InferenceHealth,
    /// Message of the failing condition or status, if any.
    pub message: Option<String>,
    /// When it failed, as the object records it: the `Ready` condition's
    /// lastTransitionTime while that condition is not True (None when it
    /// is not failed, or records no such time).
    pub since: Option<Timestamp>,
}

/// Reasons on a Ready=False condition that mean "still starting", not failed.
const PROGRESSING_REASONS: &[&str] = &[
    "",
    "Progressing",
    "Pending",
    "Creating",
    "Initializing",
    "Deploying",
];

/// Classify an inference service from its status: LLMKube sets
/// `status.phase` (Ready, Failed, ...); KServe sets a `Ready` condition.
pub fn inference_service_state(kind: &str, obj: &DynamicObject) -> InferenceServiceState {
    let status = obj.data.get("status");
    let phase = status
        .and_then(|s| s.get("phase"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let ready = status
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
        });
    let cond = |key: &str| {
        ready
            .and_then(|c| c.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let status_message = status
        .and_then(|s| s.get("message"))
        .and_then(Value::as_str);
    let (health, message) = if matches!(phase, "Failed" | "Error") {
        (
            InferenceHealth::Failed,
            status_message.or(Some(cond("message"))),
        )
    } else if cond("status") == "False" && !PROGRESSING_REASONS.contains(&cond("reason")) {
        (InferenceHealth::Failed, Some(cond("message")))
    } else if phase == "Ready" || phase == "Running" || cond("status") == "True" {
        (InferenceHealth::Ready, None)
    } else {
        (InferenceHealth::Progressing, None)
    };
    let since = (health == InferenceHealth::Failed && cond("status") != "True")
        .then(|| cond("lastTransitionTime").parse::<Timestamp>().ok())
        .flatten();
    InferenceServiceState {
        kind: kind.to_owned(),
        namespace: obj.metadata.namespace.clone().unwrap_or_default(),
        name: obj.metadata.name.clone().unwrap_or_default(),
        health,
        message: message.filter(|m| !m.is_empty()).map(str::to_owned),
        since,
    }
}

/// Inference counts for `status.inference`: `models` LLMKube Model objects,
/// and ready/failed/total over every inference service (absent kinds are
/// simply not in the slice and count 0).
pub fn inference_counts(models: usize, services: &[InferenceServiceState]) -> Inference {
    let count = |h: InferenceHealth| {
        i64::try_from(services.iter().filter(|s| s.health == h).count()).unwrap_or(i64::MAX)
    };
    Inference {
        models: i64::try_from(models).unwrap_or(i64::MAX),
        services_ready: count(InferenceHealth::Ready),
        services_failed: count(InferenceHealth::Failed),
        services_total: i64::try_from(services.len()).unwrap_or(i64::MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::NodeStatus;
    use serde_json::json;

    fn node(name: &str, capacity: &[(&str, &str)], allocatable: &[(&str, &str)]) -> Node {
        let map = |kv: &[(&str, &str)]| {
            Some(
                kv.iter()
                    .map(|(k, v)| ((*k).to_owned(), Quantity((*v).to_owned())))
                    .collect(),
            )
        };
        Node {
            metadata: kube_core::ObjectMeta {
                name: Some(name.to_owned()),
                ..Default::default()
            },
            status: Some(NodeStatus {
                capacity: map(capacity),
                allocatable: map(allocatable),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn gpus_by_vendor_over_nodes() {
        let nodes = [
            node(
                "a",
                &[("cpu", "8"), ("nvidia.com/gpu", "8")],
                &[("nvidia.com/gpu", "7")],
            ),
            node(
                "b",
                &[("nvidia.com/gpu", "4"), ("amd.com/gpu", "2")],
                &[("nvidia.com/gpu", "4"), ("amd.com/gpu", "2")],
            ),
            node(
                "c",
                &[
                    ("habana.ai/gaudi", "8"),
                    ("gpu.intel.com/xe", "1"),
                    ("example.com/fpga", "3"),
                ],
                &[("habana.ai/gaudi", "8")],
            ),
            node("d", &[("gpu.intel.com/i915", "bogus")], &[]),
        ];
        let c = capacity_from_nodes(&nodes);
        assert_eq!(c.nodes, 4);
        assert_eq!(c.gpus_total, 8 + 4 + 2 + 8 + 1);
        assert_eq!(c.gpus_allocatable, 7 + 4 + 2 + 8);
        assert_eq!(
            c.gpus_by_vendor["nvidia.com/gpu"],
            GpuCount {
                total: 12,
                allocatable: 11
            }
        );
        assert_eq!(
            c.gpus_by_vendor["amd.com/gpu"],
            GpuCount {
                total: 2,
                allocatable: 2
            }
        );
        assert_eq!(
            c.gpus_by_vendor["gpu.intel.com/xe"],
            GpuCount {
                total: 1,
                allocatable: 0
            }
        );
        assert_eq!(c.gpus_by_vendor["gpu.intel.com/i915"], GpuCount::default());
        assert!(!c.gpus_by_vendor.contains_key("example.com/fpga"));
    }

    #[test]
    fn huge_device_counts_saturate_instead_of_overflowing() {
        let max = i64::MAX.to_string();
        let nodes = [
            node(
                "a",
                &[("nvidia.com/gpu", &max)],
                &[("nvidia.com/gpu", &max)],
            ),
            node("b", &[("nvidia.com/gpu", &max), ("amd.com/gpu", &max)], &[]),
        ];
        let c = capacity_from_nodes(&nodes);
        assert_eq!(c.gpus_by_vendor["nvidia.com/gpu"].total, i64::MAX);
        assert_eq!(c.gpus_total, i64::MAX);
        assert_eq!(c.gpus_allocatable, i64::MAX);
    }

    #[test]
    fn no_nodes_no_gpus() {
        assert_eq!(capacity_from_nodes(&[]), Capacity::default());
    }

    /// A node running `os`, `kernel` and `runtime` (empty: not reported),
    /// with `labels`.
    fn running(os: &str, kernel: &str, runtime: &str, labels: Value) -> Node {
        serde_json::from_value(json!({
            "metadata": {"name": "n", "labels": labels},
            "status": {"nodeInfo": {
                "architecture": "amd64", "bootID": "", "containerRuntimeVersion": runtime,
                "kernelVersion": kernel, "kubeProxyVersion": "", "kubeletVersion": "v1.33.1",
                "machineID": "", "operatingSystem": "linux", "osImage": os, "systemUUID": ""
            }}
        }))
        .unwrap()
    }

    fn listed(v: &crate::api::NodeValues) -> Vec<(&str, i64)> {
        v.values
            .iter()
            .map(|v| (v.value.as_str(), v.nodes))
            .collect()
    }

    #[test]
    fn what_the_nodes_run_with_how_many_nodes_each() {
        let nvidia = |m: &str| json!({"nvidia.com/gpu.product": m, "rack": "r1"});
        let nodes = [
            running(
                "Ubuntu 24.04.1 LTS",
                "6.8.0-45-generic",
                "containerd://1.7.22",
                nvidia("NVIDIA-A100-SXM4-80GB"),
            ),
            running(
                "Ubuntu 24.04.1 LTS",
                "6.8.0-45-generic",
                "containerd://1.7.22",
                nvidia("NVIDIA-A100-SXM4-80GB"),
            ),
            running(
                "Ubuntu 22.04.4 LTS",
                "5.15.0-105-generic",
                "containerd://1.7.22",
                json!({"amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM"}),
            ),
            running("Ubuntu 24.04.1 LTS", "", "", json!({})),
            // No nodeInfo at all, and a GPU label only a lookalike of the real ones.
            node("bare", &[], &[]),
            running(
                "",
                "6.8.0-45-generic",
                "cri-o://1.31.0",
                json!({"nvidia.com/gpu.product.x": "fake"}),
            ),
        ];
        let info = node_info_from_nodes(&nodes);
        assert_eq!(
            listed(&info.os_image),
            [("Ubuntu 24.04.1 LTS", 3), ("Ubuntu 22.04.4 LTS", 1)]
        );
        assert_eq!(
            listed(&info.kernel_version),
            [("6.8.0-45-generic", 3), ("5.15.0-105-generic", 1)]
        );
        assert_eq!(
            listed(&info.container_runtime_version),
            [("containerd://1.7.22", 3), ("cri-o://1.31.0", 1)]
        );
        assert_eq!(
            listed(&info.gpu_model),
            [("NVIDIA-A100-SXM4-80GB", 2), ("AMD_Instinct_MI300X_OAM", 1)]
        );
        assert_eq!(
            (
                info.kernel_version.other_values,
                info.kernel_version.other_nodes
            ),
            (0, 0)
        );
        assert_eq!(node_info_from_nodes(&[]), NodeInfo::default());
        // On the wire: camelCase, empty attributes left out.
        let one = node_info_from_nodes(&nodes[3..4]);
        assert_eq!(
            serde_json::to_value(&one).unwrap(),
            json!({"osImage": {"values": [{"value": "Ubuntu 24.04.1 LTS", "nodes": 1}]}})
        );
    }

    #[test]
    fn a_thousand_kernels_list_the_most_common_and_count_the_rest() {
        let mut nodes: Vec<Node> = (0..1000)
            .map(|i| running("os", &format!("6.{i}.0"), "", json!({})))
            .collect();
        nodes.extend((0..5).map(|_| running("os", "6.999.0", "", json!({}))));
        nodes.extend((0..3).map(|_| running("os", "6.7.0", "", json!({}))));
        let k = node_info_from_nodes(&nodes).kernel_version;
        assert_eq!(k.values.len(), crate::api::MAX_NODE_VALUES);
        assert_eq!(listed(&k)[..2], [("6.999.0", 6), ("6.7.0", 4)]);
        // The rest: ties broken by value, so the report does not flap.
        assert_eq!(listed(&k)[2], ("6.0.0", 1));
        assert_eq!((k.other_values, k.other_nodes), (1000 - 8, 1000 - 8));
        let listed_nodes: i64 = k.values.iter().map(|v| v.nodes).sum();
        assert_eq!(listed_nodes + k.other_nodes, 1008);
    }

    #[test]
    fn hostile_node_values_are_made_printable_and_cut() {
        let huge = format!("evil\u{1b}[2J\u{202e}{}", "x".repeat(1_000_000));
        let nodes = [
            running(
                &huge,
                "6.8\r\n\u{9b}31m",
                "",
                json!({"nvidia.com/gpu.product": "\u{7}A100\u{200b}"}),
            ),
            running(&huge, "", "", json!({})),
        ];
        let info = node_info_from_nodes(&nodes);
        let os = &info.os_image.values[0];
        assert_eq!(os.nodes, 2);
        assert_eq!(os.value.chars().count(), crate::api::MAX_NODE_VALUE_CHARS);
        assert!(
            os.value.starts_with("evil\u{fffd}[2J\u{fffd}xxx"),
            "{:?}",
            &os.value[..20]
        );
        assert!(os.value.ends_with('…'));
        assert_eq!(listed(&info.kernel_version), [("6.8  \u{fffd}31m", 1)]);
        assert_eq!(listed(&info.gpu_model), [("\u{fffd}A100\u{fffd}", 1)]);
        for values in [&info.os_image, &info.kernel_version, &info.gpu_model] {
            for v in &values.values {
                assert!(
                    !v.value.chars().any(crate::api::is_control_or_format),
                    "{:?}",
                    v.value
                );
            }
        }
    }

    fn isvc(status: Value) -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
            "metadata": {"name": "llm", "namespace": "ml"},
            "status": status,
        }))
        .unwrap()
    }

    #[test]
    fn classifies_llmkube_and_kserve_status() {
        let s = inference_service_state("InferenceService", &isvc(json!({"phase": "Ready"})));
        assert_eq!(s.health, InferenceHealth::Ready);
        assert_eq!((s.namespace.as_str(), s.name.as_str()), ("ml", "llm"));
        let s = inference_service_state(
            "InferenceService",
            &isvc(json!({"phase": "Failed", "message": "model download failed"})),
        );
        assert_eq!(s.health, InferenceHealth::Failed);
        assert_eq!(s.message.as_deref(), Some("model download failed"));
        let s = inference_service_state(
            "InferenceService",
            &isvc(
                json!({"conditions": [{"type": "Ready", "status": "False", "reason": "RevisionFailed", "message": "crash"}]}),
            ),
        );
        assert_eq!(s.health, InferenceHealth::Failed);
        assert_eq!(s.message.as_deref(), Some("crash"));
        let s = inference_service_state(
            "InferenceService",
            &isvc(
                json!({"conditions": [{"type": "Ready", "status": "False", "reason": "Progressing"}]}),
            ),
        );
        assert_eq!(s.health, InferenceHealth::Progressing);
        let s = inference_service_state(
            "InferenceService",
            &isvc(json!({"conditions": [{"type": "Ready", "status": "True"}]})),
        );
        assert_eq!(s.health, InferenceHealth::Ready);
        let s = inference_service_state("InferenceService", &isvc(json!({})));
        assert_eq!(s.health, InferenceHealth::Progressing);
    }

    #[test]
    fn a_failed_services_onset_is_its_ready_conditions_transition() {
        let at = |status: Value| inference_service_state("InferenceService", &isvc(status)).since;
        let t = "2026-01-01T11:00:00Z";
        assert_eq!(
            at(
                json!({"conditions": [{"type": "Ready", "status": "False", "reason": "RevisionFailed",
                                      "lastTransitionTime": t}]})
            ),
            Some(t.parse().unwrap())
        );
        assert_eq!(
            at(
                json!({"phase": "Failed", "conditions": [{"type": "Ready", "status": "False",
                                                         "lastTransitionTime": t}]})
            ),
            Some(t.parse().unwrap())
        );
        // Phase only, no time recorded; or not failed at all: none.
        assert_eq!(at(json!({"phase": "Failed"})), None);
        assert_eq!(
            at(
                json!({"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": t}]})
            ),
            None
        );
        assert_eq!(
            at(
                json!({"conditions": [{"type": "Ready", "status": "False", "reason": "Progressing",
                                      "lastTransitionTime": t}]})
            ),
            None
        );
    }

    #[test]
    fn counts() {
        let mk = |h| InferenceServiceState {
            kind: "InferenceService".into(),
            namespace: "ml".into(),
            name: "x".into(),
            health: h,
            message: None,
            since: None,
        };
        let services = [
            mk(InferenceHealth::Ready),
            mk(InferenceHealth::Ready),
            mk(InferenceHealth::Failed),
            mk(InferenceHealth::Progressing),
        ];
        assert_eq!(
            inference_counts(2, &services),
            Inference {
                models: 2,
                services_ready: 2,
                services_failed: 1,
                services_total: 4
            }
        );
        assert_eq!(inference_counts(0, &[]), Inference::default());
    }
}
