//! What a site has: node and GPU capacity from Nodes, and inference
//! workloads (LLMKube `Model`/`InferenceService`, KServe `InferenceService`)
//! classified from their status. Pure functions over listed objects; the
//! edge (Push) and the hub prober (Pull) both use them.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube_core::DynamicObject;
use serde_json::Value;

use crate::api::{Capacity, GpuCount, Inference};

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
