//! Status patches that keep the two-writer invariant (docs/architecture.md#who-writes-which-status-key); the one
//! home of this logic for the edge agent and any other caller.
//!
//! - The edge sends a JSON merge patch (RFC 7386) of edge-owned keys only,
//!   containing only what changed since its last accepted report; when only
//!   time has passed it is just `{"status":{"lastHeartbeatTime":...}}`.
//!   Keys outside the edge-owned set are dropped before diffing, so a
//!   hub-owned key (`phase`, `phaseTransitionTime`, `conditions`) can never
//!   appear in a patch, whatever the input.
//! - Standing signals are re-sent only every [`SIGNAL_REFRESH`], so a site
//!   with a lasting failure still sends heartbeat-only patches.
//! - The hub sends phase, phaseTransitionTime and conditions with the
//!   object's resourceVersion, so a concurrent edge write makes it fail with
//!   409 instead of silently reverting anything.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use serde_json::{Map, Value, json};

use crate::api::{EDGE_OWNED_STATUS_KEYS, EdgeStatus, HUB_OWNED_STATUS_KEYS, Phase, Signal};

/// How often unchanged signals are re-sent just to move their `lastSeen`
/// and `count` forward: well inside the 15-minute correlation window, and
/// rare enough that a site with a standing failure still sends
/// heartbeat-only patches almost always.
pub const SIGNAL_REFRESH: Duration = Duration::from_secs(5 * 60);

/// The signal list to report. Signals carry `lastSeen`/`count`, which move
/// on every read; re-sending them each heartbeat would make every patch
/// large. So the last accepted list is kept as long as the same failures
/// (type, namespace, workload, severity, message, firstSeen) are active and
/// its oldest `lastSeen` is younger than `refresh`; otherwise the fresh list.
pub fn signals_to_report(
    accepted: Option<&[Signal]>,
    fresh: &[Signal],
    now: Timestamp,
    refresh: Duration,
) -> Vec<Signal> {
    let Some(accepted) = accepted else {
        return fresh.to_vec();
    };
    let same_failures = accepted.len() == fresh.len()
        && accepted.iter().zip(fresh).all(|(a, f)| {
            (
                a.type_,
                &a.namespace,
                &a.workload,
                a.severity,
                &a.message,
                &a.first_seen,
            ) == (
                f.type_,
                &f.namespace,
                &f.workload,
                f.severity,
                &f.message,
                &f.first_seen,
            )
        });
    let refresh = SignedDuration::try_from(refresh).unwrap_or(SignedDuration::MAX);
    let recent = accepted
        .iter()
        .all(|a| now.duration_since(a.last_seen.0) < refresh);
    if same_failures && recent {
        accepted.to_vec()
    } else {
        fresh.to_vec()
    }
}

/// The key that is sent on every report, even when nothing else changed.
pub const HEARTBEAT_KEY: &str = "lastHeartbeatTime";

/// Keeps only edge-owned keys with a non-null value.
pub fn edge_owned(status: &Map<String, Value>) -> Map<String, Value> {
    status
        .iter()
        .filter(|(k, v)| {
            EDGE_OWNED_STATUS_KEYS.contains(&k.as_str())
                && !HUB_OWNED_STATUS_KEYS.contains(&k.as_str())
                && !v.is_null()
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// RFC 7386 diff: the merge patch that turns `prev` into `next`, or `None`
/// when they are equal. Objects are diffed key by key (a removed key becomes
/// `null`); anything else, arrays included, is replaced whole.
pub fn merge_patch_diff(prev: &Value, next: &Value) -> Option<Value> {
    match (prev, next) {
        (Value::Object(p), Value::Object(n)) => {
            let mut out = Map::new();
            for (k, nv) in n {
                if nv.is_null() {
                    if p.get(k).is_some_and(|pv| !pv.is_null()) {
                        out.insert(k.clone(), Value::Null);
                    }
                    continue;
                }
                match p.get(k) {
                    Some(pv) if !pv.is_null() => {
                        if let Some(d) = merge_patch_diff(pv, nv) {
                            out.insert(k.clone(), d);
                        }
                    }
                    _ => {
                        out.insert(k.clone(), strip_nulls(nv));
                    }
                }
            }
            for (k, pv) in p {
                if !pv.is_null() && !n.contains_key(k) {
                    out.insert(k.clone(), Value::Null);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        (p, n) if p == n => None,
        (_, n) => Some(strip_nulls(n)),
    }
}

/// A merge patch cannot carry a literal null inside a new object (it would
/// mean "delete"), so new values are sent without their null members.
fn strip_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), strip_nulls(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The `/status` merge patch body for one report: `{"status": {...}}` with
/// the heartbeat and every edge-owned key that differs from `accepted` (the
/// last report the hub accepted, `None` before the first one).
pub fn status_patch(accepted: Option<&Map<String, Value>>, next: &Map<String, Value>) -> Value {
    let next = edge_owned(next);
    let prev = accepted.map(edge_owned).unwrap_or_default();
    let mut status = match merge_patch_diff(&Value::Object(prev), &Value::Object(next.clone())) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    // Re-sending an unchanged value is a no-op for the hub's copy, and it
    // is what tells the hub the site is alive.
    if let Some(hb) = next.get(HEARTBEAT_KEY) {
        status
            .entry(HEARTBEAT_KEY.to_owned())
            .or_insert_with(|| strip_nulls(hb));
    }
    let mut body = Map::new();
    body.insert("status".to_owned(), Value::Object(status));
    Value::Object(body)
}

/// The edge-owned part of the status the hub holds: the baseline of the
/// first report a new reporter (or a re-created site) sends.
pub fn held_edge_owned(status: Option<&crate::api::FederatedClusterStatus>) -> Map<String, Value> {
    let held = status
        .and_then(|s| serde_json::to_value(s).ok())
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default();
    edge_owned(&held)
}

/// One change-only report, as the edge (Push) and the hub prober (Pull)
/// send it: `status` is the edge-owned status just collected, `accepted`
/// the edge-owned status the hub holds from the last accepted report.
/// Standing signals are kept as accepted (see [`signals_to_report`]).
/// Returns the merge patch and the edge-owned status it leads to (the next
/// `accepted`, once the hub accepts it).
pub fn report_patch(
    accepted: Option<&Map<String, Value>>,
    mut status: crate::api::FederatedClusterStatus,
    now: Timestamp,
) -> (Value, Map<String, Value>) {
    let accepted_signals: Option<Vec<Signal>> = accepted
        .and_then(|b| b.get("signals"))
        .and_then(|v| serde_json::from_value(v.clone()).ok());
    status.signals = Some(signals_to_report(
        accepted_signals.as_deref(),
        status.signals.as_deref().unwrap_or_default(),
        now,
        SIGNAL_REFRESH,
    ));
    let next = match serde_json::to_value(&status) {
        Ok(Value::Object(m)) => edge_owned(&m),
        _ => Map::new(),
    };
    (status_patch(accepted, &next), next)
}

/// Applies a merge patch (RFC 7386) to `target`; the hub does the same, so
/// the edge can keep its "last accepted" view without re-reading.
pub fn apply_merge_patch(target: &mut Value, patch: &Value) {
    match patch {
        Value::Object(pm) => {
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            let tm = target.as_object_mut().expect("made an object above");
            for (k, pv) in pm {
                if pv.is_null() {
                    tm.remove(k);
                } else {
                    apply_merge_patch(tm.entry(k.clone()).or_insert(Value::Null), pv);
                }
            }
        }
        other => *target = other.clone(),
    }
}

fn to_object(edge: &EdgeStatus) -> Map<String, Value> {
    // EdgeStatus holds only strings, numbers, maps and lists: serialising
    // it to a JSON object cannot fail.
    match serde_json::to_value(edge) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// [`status_patch`] for typed reports: the keys of `current` that differ
/// from `last_accepted` (everything when there is no accepted report yet),
/// and always `lastHeartbeatTime`.
pub fn edge_status_patch(last_accepted: Option<&EdgeStatus>, current: &EdgeStatus) -> Value {
    let prev = last_accepted.map(to_object);
    status_patch(prev.as_ref(), &to_object(current))
}

/// The hub's status merge patch for a phase transition, carrying
/// `metadata.resourceVersion` so the API server rejects it with 409 if the
/// object changed since it was read. Conditions are sent whole (a merge
/// patch replaces lists), which is fine because only the hub writes them.
/// A `clockOffsetSeconds` of None is sent as null, which removes it.
pub fn hub_status_patch(
    resource_version: &str,
    phase: Phase,
    phase_transition_time: &Time,
    conditions: &[Condition],
    clock_offset_seconds: Option<i64>,
) -> Value {
    json!({
        "metadata": { "resourceVersion": resource_version },
        "status": {
            "phase": phase,
            "phaseTransitionTime": phase_transition_time,
            "conditions": conditions,
            "clockOffsetSeconds": clock_offset_seconds,
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
            .with_token_renewed_in(1800)
            .probed_in(12)
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
        let patch = hub_status_patch("42", Phase::Stale, &ago(0), &[], None);
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

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn signal(workload: &str, last_seen: i64, count: i64) -> Signal {
        let t0: Timestamp = "2026-01-01T12:00:00Z".parse().unwrap();
        let at = |s| {
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(t0 + SignedDuration::from_secs(s))
        };
        Signal {
            type_: crate::api::SignalType::CrashLoopBackOff,
            severity: crate::api::Severity::High,
            cluster: None,
            namespace: "shop".into(),
            workload: crate::api::WorkloadRef::new("Deployment", workload),
            message: None,
            first_seen: at(0),
            last_seen: at(last_seen),
            count,
        }
    }

    #[test]
    fn standing_signals_are_refreshed_rarely() {
        let t0: Timestamp = "2026-01-01T12:00:00Z".parse().unwrap();
        let now = |s| t0 + SignedDuration::from_secs(s);
        let accepted = vec![signal("web", 0, 1)];
        let fresh = vec![signal("web", 30, 2)];
        let r = Duration::from_secs(300);
        assert_eq!(
            signals_to_report(Some(&accepted), &fresh, now(30), r),
            accepted
        );
        assert_eq!(
            signals_to_report(Some(&accepted), &fresh, now(300), r),
            fresh,
            "refresh due"
        );
        let other = vec![signal("web", 30, 2), signal("api", 30, 1)];
        assert_eq!(
            signals_to_report(Some(&accepted), &other, now(30), r),
            other,
            "new failure"
        );
        assert_eq!(
            signals_to_report(Some(&accepted), &[], now(30), r),
            Vec::<Signal>::new()
        );
        assert_eq!(signals_to_report(None, &fresh, now(30), r), fresh);
    }

    #[test]
    fn first_report_sends_every_edge_owned_key() {
        let next = obj(json!({
            "lastHeartbeatTime": "2026-01-01T00:00:00Z",
            "nodeCount": 3,
            "capacity": {"nodes": 3, "gpusTotal": 8},
        }));
        let p = status_patch(None, &next);
        assert_eq!(p, json!({"status": next}));
    }

    #[test]
    fn unchanged_report_is_heartbeat_only() {
        let a = obj(json!({"lastHeartbeatTime": "t1", "nodeCount": 3, "capacity": {"nodes": 3}}));
        let b = obj(json!({"lastHeartbeatTime": "t2", "nodeCount": 3, "capacity": {"nodes": 3}}));
        assert_eq!(
            status_patch(Some(&a), &b),
            json!({"status": {"lastHeartbeatTime": "t2"}})
        );
    }

    #[test]
    fn removed_nested_vendor_is_deleted_with_null() {
        let a = obj(
            json!({"lastHeartbeatTime": "t1", "capacity": {"gpusByVendor": {
            "nvidia.com/gpu": {"total": 8, "allocatable": 8},
            "amd.com/gpu": {"total": 2, "allocatable": 2}}}}),
        );
        let b = obj(
            json!({"lastHeartbeatTime": "t2", "capacity": {"gpusByVendor": {
            "nvidia.com/gpu": {"total": 8, "allocatable": 6}}}}),
        );
        assert_eq!(
            status_patch(Some(&a), &b),
            json!({"status": {"lastHeartbeatTime": "t2", "capacity": {"gpusByVendor": {
                "nvidia.com/gpu": {"allocatable": 6}, "amd.com/gpu": null}}}})
        );
    }

    #[test]
    fn hub_owned_keys_never_appear() {
        let a = obj(json!({"phase": "Stale", "lastHeartbeatTime": "t1"}));
        let b = obj(
            json!({"phase": "Connected", "conditions": [], "phaseTransitionTime": "x",
                           "lastHeartbeatTime": "t2"}),
        );
        assert_eq!(
            status_patch(Some(&a), &b),
            json!({"status": {"lastHeartbeatTime": "t2"}})
        );
    }

    /// A small deterministic generator (xorshift), so the property run is
    /// reproducible without a dependency.
    struct Gen(u64);
    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
            xs[(self.next() % xs.len() as u64) as usize]
        }
        fn value(&mut self, depth: u32) -> Value {
            match self.next() % if depth > 2 { 4 } else { 6 } {
                0 => Value::Null,
                1 => json!(self.next() % 5),
                2 => json!(self.pick(&["a", "b", "Connected"])),
                3 => json!([self.next() % 3]),
                _ => {
                    let mut m = Map::new();
                    for _ in 0..self.next() % 4 {
                        let k = self.pick(&["phase", "nodes", "total", "conditions", "x"]);
                        m.insert(k.to_owned(), self.value(depth + 1));
                    }
                    Value::Object(m)
                }
            }
        }
        fn status(&mut self) -> Map<String, Value> {
            let keys: Vec<&str> = EDGE_OWNED_STATUS_KEYS
                .iter()
                .chain(HUB_OWNED_STATUS_KEYS.iter())
                .copied()
                .chain(["unknownKey"])
                .collect();
            let mut m = Map::new();
            for _ in 0..self.next() % 12 {
                let k = self.pick(&keys);
                m.insert(k.to_owned(), self.value(0));
            }
            m
        }
    }

    #[test]
    fn property_patch_is_edge_only_and_applies_to_next() {
        let mut g = Gen(0x9e37_79b9_7f4a_7c15);
        for _ in 0..5000 {
            let prev = g.status();
            let next = g.status();
            let patch = status_patch(Some(&prev), &next);
            let status = patch["status"].as_object().unwrap();
            for k in status.keys() {
                assert!(
                    EDGE_OWNED_STATUS_KEYS.contains(&k.as_str()),
                    "non edge-owned key {k} in {patch}"
                );
                assert!(!HUB_OWNED_STATUS_KEYS.contains(&k.as_str()), "{patch}");
            }
            // Applying the patch to what the hub held (the previous report
            // plus hub-owned keys) yields the next report and keeps every
            // hub-owned key untouched.
            let mut held = Value::Object(prev.clone());
            apply_merge_patch(&mut held, &patch["status"]);
            let mut want = Value::Object(edge_owned(&next));
            let mut got = Value::Object(edge_owned(held.as_object().unwrap()));
            normalize(&mut want);
            normalize(&mut got);
            assert_eq!(got, want, "prev={prev:?} next={next:?} patch={patch}");
            for k in HUB_OWNED_STATUS_KEYS {
                assert_eq!(held.get(*k), prev.get(*k), "hub key {k} changed by {patch}");
            }
        }
    }

    /// Drops nulls and empty objects that a merge patch cannot distinguish
    /// from absence.
    fn normalize(v: &mut Value) {
        if let Value::Object(m) = v {
            for (_, x) in m.iter_mut() {
                normalize(x);
            }
            m.retain(|_, x| !x.is_null());
        }
    }
}
