//! Change-only status reports from the edge: the JSON merge patch body.
//!
//! Pure functions over JSON. The edge renders what it observed into the
//! edge-owned keys, and [`status_patch`] turns "last accepted report" and
//! "now" into the smallest RFC 7386 merge patch that takes the hub from one
//! to the other. Keys outside the edge-owned set are dropped before diffing,
//! so a hub-owned key (`phase`, `phaseTransitionTime`, `conditions`) can never
//! appear in a patch, whatever the input.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value};

use crate::api::{EDGE_OWNED_STATUS_KEYS, HUB_OWNED_STATUS_KEYS, Signal};

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
pub fn merge_diff(prev: &Value, next: &Value) -> Option<Value> {
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
                        if let Some(d) = merge_diff(pv, nv) {
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
    let mut status = match merge_diff(&Value::Object(prev), &Value::Object(next.clone())) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
