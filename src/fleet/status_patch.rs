//! Status patches that keep the two-writer invariant (design §4).
//!
//! - The edge sends a JSON merge patch (RFC 7386) of edge-owned keys only,
//!   built from [`EdgeStatus`], containing only what changed since its last
//!   accepted report; when only time has passed it is just
//!   `{"status":{"lastHeartbeatTime":...}}`.
//! - The hub sends phase, phaseTransitionTime and conditions with the
//!   object's resourceVersion, so a concurrent edge write makes it fail with
//!   409 instead of silently reverting anything.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use serde_json::{Map, Value, json};

use crate::api::{EdgeStatus, Phase};

/// The RFC 7386 merge patch turning `old` into `new`, or None when they are
/// equal. Objects are diffed key by key (a removed key becomes `null`);
/// anything else, arrays included, is replaced whole.
pub fn merge_patch_diff(old: &Value, new: &Value) -> Option<Value> {
    if old == new {
        return None;
    }
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            let mut patch = Map::new();
            for (k, nv) in n {
                match o.get(k) {
                    Some(ov) => {
                        if let Some(d) = merge_patch_diff(ov, nv) {
                            patch.insert(k.clone(), d);
                        }
                    }
                    None => {
                        patch.insert(k.clone(), nv.clone());
                    }
                }
            }
            for k in o.keys().filter(|k| !n.contains_key(*k)) {
                patch.insert(k.clone(), Value::Null);
            }
            Some(Value::Object(patch))
        }
        _ => Some(new.clone()),
    }
}

fn to_value(edge: &EdgeStatus) -> Value {
    // EdgeStatus holds only strings, numbers, maps and lists: serialising
    // it to a Value cannot fail.
    serde_json::to_value(edge).unwrap_or_else(|_| Value::Object(Map::new()))
}

/// The edge's status merge patch: `{"status": {...}}` with the keys of
/// `current` that differ from `last_accepted` (everything when there is no
/// accepted report yet), and always `lastHeartbeatTime`. A key the edge no
/// longer reports is sent as `null`, which deletes it. Only edge-owned keys
/// can appear, because [`EdgeStatus`] has no others.
pub fn edge_status_patch(last_accepted: Option<&EdgeStatus>, current: &EdgeStatus) -> Value {
    let new = to_value(current);
    let mut status = match last_accepted {
        Some(prev) => match merge_patch_diff(&to_value(prev), &new) {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        },
        None => new.as_object().cloned().unwrap_or_default(),
    };
    if let Some(hb) = new.get("lastHeartbeatTime") {
        status.insert("lastHeartbeatTime".to_owned(), hb.clone());
    }
    json!({ "status": status })
}

/// The hub's status merge patch for a phase transition, carrying
/// `metadata.resourceVersion` so the API server rejects it with 409 if the
/// object changed since it was read. Conditions are sent whole (a merge
/// patch replaces lists), which is fine because only the hub writes them.
pub fn hub_status_patch(
    resource_version: &str,
    phase: Phase,
    phase_transition_time: &Time,
    conditions: &[Condition],
) -> Value {
    json!({
        "metadata": { "resourceVersion": resource_version },
        "status": {
            "phase": phase,
            "phaseTransitionTime": phase_transition_time,
            "conditions": conditions,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::fixtures::ago;
    use crate::api::{
        Capacity, EDGE_OWNED_STATUS_KEYS, FederatedCluster, GpuCount, HUB_OWNED_STATUS_KEYS,
        Signal, SignalType,
    };

    fn report(hb_ago: i64) -> EdgeStatus {
        let fc = FederatedCluster::test("s")
            .heartbeat_ago(hb_ago)
            .with_gpus(8)
            .with_inference(1, 1, 0, 1)
            .with_token_expiring_in(3600)
            .with_signal(Signal::test(SignalType::OomKilled, "a", "Deployment", "w"));
        EdgeStatus::from_status(fc.status.as_ref().unwrap())
    }

    #[test]
    fn first_report_sends_everything_edge_owned() {
        let patch = edge_status_patch(None, &report(0));
        let keys: Vec<&str> = patch["status"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut want: Vec<&str> = EDGE_OWNED_STATUS_KEYS.to_vec();
        want.sort();
        assert_eq!(keys, want);
        assert_eq!(patch.as_object().unwrap().len(), 1, "only status");
    }

    #[test]
    fn nothing_changed_but_time_sends_only_the_heartbeat() {
        let before = report(30);
        let mut now = before.clone();
        now.last_heartbeat_time = Some(ago(0));
        let patch = edge_status_patch(Some(&before), &now);
        assert_eq!(
            patch,
            json!({"status": {"lastHeartbeatTime": "2026-01-01T12:00:00Z"}})
        );
        assert!(serde_json::to_vec(&patch).unwrap().len() < 100);
    }

    #[test]
    fn heartbeat_is_sent_even_if_identical() {
        let r = report(0);
        assert_eq!(
            edge_status_patch(Some(&r), &r),
            json!({"status": {"lastHeartbeatTime": "2026-01-01T12:00:00Z"}})
        );
    }

    #[test]
    fn changed_nested_fields_and_removed_keys() {
        let before = report(30);
        let mut now = before.clone();
        now.last_heartbeat_time = Some(ago(0));
        now.node_count = Some(4);
        now.capacity = Some(Capacity {
            nodes: 4,
            gpus_total: 2,
            gpus_allocatable: 2,
            gpus_by_vendor: [(
                "amd.com/gpu".to_owned(),
                GpuCount {
                    total: 2,
                    allocatable: 2,
                },
            )]
            .into(),
        });
        now.signals = None;
        let patch = edge_status_patch(Some(&before), &now);
        assert_eq!(
            patch,
            json!({"status": {
                "lastHeartbeatTime": "2026-01-01T12:00:00Z",
                "nodeCount": 4,
                "capacity": {
                    "nodes": 4, "gpusTotal": 2, "gpusAllocatable": 2,
                    "gpusByVendor": {"amd.com/gpu": {"total": 2, "allocatable": 2}, "nvidia.com/gpu": null}
                },
                "signals": null,
            }})
        );
    }

    #[test]
    fn no_hub_owned_key_can_appear() {
        for prev in [None, Some(report(30))] {
            let patch = edge_status_patch(prev.as_ref(), &report(0));
            for key in HUB_OWNED_STATUS_KEYS {
                assert!(patch["status"].get(key).is_none(), "{key}");
            }
            for key in patch["status"].as_object().unwrap().keys() {
                assert!(EDGE_OWNED_STATUS_KEYS.contains(&key.as_str()), "{key}");
            }
        }
    }

    #[test]
    fn edge_status_round_trips_through_the_full_status() {
        let fc = FederatedCluster::test("s").connected().with_gpus(2);
        let status = fc.status.unwrap();
        let edge = EdgeStatus::from_status(&status);
        let mut rebuilt = status.clone();
        rebuilt.phase = Some(Phase::Stale);
        edge.apply_to(&mut rebuilt);
        assert_eq!(
            rebuilt.phase,
            Some(Phase::Stale),
            "apply_to leaves hub keys alone"
        );
        rebuilt.phase = status.phase;
        assert_eq!(rebuilt, status);
    }

    #[test]
    fn merge_patch_diff_rfc7386() {
        assert_eq!(merge_patch_diff(&json!({"a": 1}), &json!({"a": 1})), None);
        assert_eq!(
            merge_patch_diff(&json!({"a": 1, "b": 2}), &json!({"a": 1})),
            Some(json!({"b": null}))
        );
        assert_eq!(
            merge_patch_diff(&json!({"l": [1, 2]}), &json!({"l": [1]})),
            Some(json!({"l": [1]}))
        );
        assert_eq!(
            merge_patch_diff(&json!(1), &json!({"x": 1})),
            Some(json!({"x": 1}))
        );
    }

    #[test]
    fn hub_patch_carries_resource_version_and_only_hub_keys() {
        let patch = hub_status_patch("42", Phase::Stale, &ago(0), &[]);
        assert_eq!(patch["metadata"]["resourceVersion"], "42");
        let mut keys: Vec<&str> = patch["status"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort();
        let mut want = HUB_OWNED_STATUS_KEYS.to_vec();
        want.sort();
        assert_eq!(keys, want);
        assert_eq!(patch["status"]["phase"], "Stale");
    }
}
