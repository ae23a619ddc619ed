//! Status patches that keep the two-writer invariant (docs/architecture.md#who-writes-which-status-key); the one
//! home of this logic for the edge agent and any other caller.
//!
//! - The edge (and the Pull prober) sends a JSON merge patch (RFC 7386)
//!   built from a typed [`EdgeStatus`], containing only what changed since
//!   its last accepted report; when only time has passed it is just
//!   `{"status":{"lastHeartbeatTime":...}}`. `EdgeStatus` has no hub-owned
//!   field, so a hub-owned key (`phase`, `phaseTransitionTime`,
//!   `conditions`, `clockOffsetSeconds`) cannot appear in a patch: by type,
//!   not by a filter.
//! - Standing signals are re-sent only every [`SIGNAL_REFRESH`], so a site
//!   with a lasting failure still sends heartbeat-only patches.
//! - The hub writes its keys with a resourceVersion-guarded replace of
//!   `/status` (`kubectl_fleet::k8s::site_status::replace_site_status`), so a
//!   concurrent edge write makes it fail with 409 instead of silently
//!   reverting anything.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value, json};

use crate::api::{EdgeStatus, FederatedCluster, Signal};

/// How often unchanged signals are re-sent just to move their `lastSeen`
/// and `count` forward: well inside the 15-minute correlation window, and
/// rare enough that a site with a standing failure still sends
/// heartbeat-only patches almost always.
pub(crate) const SIGNAL_REFRESH: Duration = Duration::from_secs(5 * 60);

/// The signal list to report. Signals carry `lastSeen`/`count`, which move
/// on every read; re-sending them each heartbeat would make every patch
/// large. So the last accepted list is kept as long as the same failures
/// (type, namespace, workload, severity, message, firstSeen) are active and
/// its oldest `lastSeen` is younger than `refresh`; otherwise the fresh list.
pub(crate) fn signals_to_report(
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

/// RFC 7386 diff: the merge patch that turns `prev` into `next`, or `None`
/// when they are equal. Objects are diffed key by key (a removed key becomes
/// `null`); anything else, arrays included, is replaced whole.
pub(crate) fn merge_patch_diff(prev: &Value, next: &Value) -> Option<Value> {
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
/// every field of `current` that differs from `last_accepted` (everything
/// when there is no accepted report yet), and always `lastHeartbeatTime`:
/// re-sending an unchanged value is a no-op for the hub's copy, and it is
/// what tells the hub the site is alive.
pub fn edge_status_patch(last_accepted: Option<&EdgeStatus>, current: &EdgeStatus) -> Value {
    let next = to_value(current);
    let prev = last_accepted.map(to_value).unwrap_or_else(|| json!({}));
    let mut status = match merge_patch_diff(&prev, &next) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    if let Some(hb) = next.get(HEARTBEAT_KEY) {
        status
            .entry(HEARTBEAT_KEY.to_owned())
            .or_insert_with(|| strip_nulls(hb));
    }
    json!({ "status": status })
}

/// One change-only report, as the edge (Push) and the hub prober (Pull)
/// send it: `next` is the report just collected, `accepted` what the hub
/// holds from the last accepted report (`EdgeStatus::from_status` of the
/// site's status for the first report of a process). Standing signals are
/// kept as accepted (see [`signals_to_report`]). Returns the merge patch
/// and the edge status it leads to (the next `accepted`, once the hub
/// accepts it).
pub fn report_patch(
    accepted: Option<&EdgeStatus>,
    mut next: EdgeStatus,
    now: Timestamp,
) -> (Value, EdgeStatus) {
    next.signals = Some(signals_to_report(
        accepted.and_then(|a| a.signals.as_deref()),
        next.signals.as_deref().unwrap_or_default(),
        now,
        SIGNAL_REFRESH,
    ));
    (edge_status_patch(accepted, &next), next)
}

/// The last report the hub accepted, for one site object: the baseline of
/// the next [`report_patch`]. A re-created site (another uid) starts again
/// from what the hub holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Accepted {
    /// The site object's `metadata.uid`.
    pub uid: Option<String>,
    /// Its edge-owned status as the hub holds it.
    pub status: EdgeStatus,
}

impl Accepted {
    /// The baseline of the next report on `site`: the last report accepted
    /// for this very object, else (a new process, or a re-created site with
    /// another uid) what the hub holds, which `slot` then remembers.
    pub fn baseline<'a>(slot: &'a mut Option<Accepted>, site: &FederatedCluster) -> &'a EdgeStatus {
        let uid = &site.metadata.uid;
        if slot.as_ref().is_none_or(|a| &a.uid != uid) {
            *slot = Some(Accepted {
                uid: uid.clone(),
                status: site
                    .status
                    .as_ref()
                    .map(EdgeStatus::from_status)
                    .unwrap_or_default(),
            });
        }
        &slot.as_ref().expect("set above").status
    }
}

fn to_value(edge: &EdgeStatus) -> Value {
    // EdgeStatus holds only strings, numbers, maps and lists: serialising
    // it cannot fail.
    serde_json::to_value(edge).unwrap_or_else(|_| json!({}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{
        Capacity, EDGE_OWNED_STATUS_KEYS, FederatedCluster, GpuCount, HUB_OWNED_STATUS_KEYS,
        NodeValues, Phase, Signal, SignalType,
    };
    use crate::fleet::fixtures::ago;

    fn report(hb_ago: i64) -> EdgeStatus {
        let fc = FederatedCluster::test("s")
            .heartbeat_ago(hb_ago)
            .with_gpus(8)
            .with_inference(1, 1, 0, 1)
            .with_token_expiring_in(3600)
            .with_token_renewed_in(1800)
            .probed_in(12)
            .reported_in(40)
            .with_member("6f1c2a8e-0b7d-4f3e-9a51-2c8d7e6f1b20")
            .with_dark_period(7200, 3600, vec![])
            .with_node_info(|n| {
                n.os_image = NodeValues::of(&[("Ubuntu 24.04.1 LTS", 3)]);
                n.kernel_version = NodeValues::of(&[("6.8.0-45-generic", 3)]);
            })
            .with_signal(Signal::test(SignalType::OomKilled, "a", "Deployment", "w"));
        EdgeStatus::from_status(fc.status.as_ref().unwrap())
    }

    #[test]
    fn a_kernel_upgrade_sends_only_the_kernel_list() {
        let prev = report(10);
        let mut next = report(0);
        next.node_info.as_mut().unwrap().kernel_version =
            NodeValues::of(&[("6.8.0-47-generic", 2), ("6.8.0-45-generic", 1)]);
        let patch = edge_status_patch(Some(&prev), &next);
        assert_eq!(
            patch["status"]["nodeInfo"],
            json!({"kernelVersion": {"values": [
                {"value": "6.8.0-47-generic", "nodes": 2},
                {"value": "6.8.0-45-generic", "nodes": 1},
            ]}})
        );
        assert_eq!(patch["status"].as_object().unwrap().len(), 2, "{patch}");
        // The last node gone from the list: the key is removed, not emptied.
        next.node_info.as_mut().unwrap().kernel_version = NodeValues::default();
        let patch = edge_status_patch(Some(&prev), &next);
        assert_eq!(
            patch["status"]["nodeInfo"],
            json!({"kernelVersion": null}),
            "{patch}"
        );
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
    }

    #[test]
    fn property_diff_applied_to_prev_gives_next() {
        // Checked against json-patch's RFC 7386 merge, which kube-sandbox
        // applies (the same semantics as the API server's).
        let mut g = Gen(0x9e37_79b9_7f4a_7c15);
        for _ in 0..5000 {
            let (prev, next) = (g.value(0), g.value(0));
            let mut held = prev.clone();
            if let Some(patch) = merge_patch_diff(&prev, &next) {
                json_patch::merge(&mut held, &patch);
            }
            let (mut got, mut want) = (held, next.clone());
            normalize(&mut got);
            normalize(&mut want);
            assert_eq!(got, want, "prev={prev} next={next}");
        }
    }

    #[test]
    fn report_keeps_standing_signals_and_sends_only_the_heartbeat() {
        let fc = FederatedCluster::test("s")
            .heartbeat_ago(30)
            .with_signal(Signal::test(SignalType::OomKilled, "a", "Deployment", "w"));
        let status = EdgeStatus::from_status(fc.status.as_ref().unwrap());
        let (_, accepted) = report_patch(None, status.clone(), ago(30).0);
        let mut later = status.clone();
        later.last_heartbeat_time = Some(ago(0));
        for s in later.signals.iter_mut().flatten() {
            s.last_seen = ago(0);
            s.count += 1;
        }
        let (patch, next) = report_patch(Some(&accepted), later, ago(0).0);
        assert_eq!(
            patch,
            json!({"status": {"lastHeartbeatTime": "2026-01-01T12:00:00Z"}})
        );
        assert_eq!(next.signals, accepted.signals);
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
