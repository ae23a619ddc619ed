//! Reading a site whatever it wrote: the one lenient decoder of a site's
//! status (and, through [`decode_leniently`], of its spec), shared by every
//! reader — the hub's watch, the Pull prober, the REST API's cache, the
//! edge reading its own site, and every view of the CLI.
//!
//! The API server accepts what the CRD schema allows, and that was once
//! more than our types read: a `lastHeartbeatTime` with ten fraction
//! digits passes Kubernetes' `date-time` check (kube-openapi's strfmt) but
//! not jiff's parser, so one site's write made the typed list of every
//! site fail — the hub judged nothing and every view failed for everyone.
//! The CRD now refuses such values (docs/reliability.md), and this decoder
//! makes sure one that gets through anyway (an object stored before the CRD
//! was upgraded, an API server that validates less) costs only that site's
//! unreadable fields: the status is decoded typed once, from the raw JSON
//! text ([`serde_json::value::RawValue`]); only when that fails is it
//! decoded again key by key, and list by list item, keeping everything that
//! reads and recording in [`Unreadable`] what could not be read and why.
//! That record never goes on the wire (`#[serde(skip)]`): the hub judges
//! from it (condition reason `InvalidStatus`,
//! docs/operations.md#a-site-whose-status-the-hub-cannot-read) and the views
//! show it.

use std::collections::HashMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;
use serde_path_to_error::Segment;

use super::cluster::{FederatedClusterSpec, FederatedClusterStatus, HUB_OWNED_STATUS_KEYS};
use super::unreadable::{Unreadable, self_or_under};

/// How many fields the fallback leaves out of one object before it gives
/// the whole object up (each costs one more decode of it). A status holds
/// at most a few hundred leaves (100 signals of 9 keys), so this is never
/// reached by a status the CRD admits.
const MAX_ROUNDS: usize = 1024;

impl Unreadable {
    /// Whether what was left out lies only in keys the hub owns (which
    /// the hub's next write replaces with its own judgement).
    pub(crate) fn only_hub_owned(&self) -> bool {
        self.more == 0
            && self.fields.iter().all(|f| {
                HUB_OWNED_STATUS_KEYS
                    .iter()
                    .any(|k| self_or_under(&f.path, &format!("status.{k}")))
            })
    }
}

/// A type read strictly (the typed decode the lenient one starts from).
pub trait Strict: Sized {
    /// The derived, strict decode.
    fn strict<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;
}

impl Strict for FederatedClusterStatus {
    fn strict<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // The derive (`#[serde(remote = "Self")]`): inherent, not the trait.
        FederatedClusterStatus::deserialize(d)
    }
}

impl Strict for FederatedClusterSpec {
    fn strict<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <FederatedClusterSpec as Deserialize>::deserialize(d)
    }
}

/// `value` decoded as `T`, leaving out what does not decode: every field
/// whose value `T` cannot read is removed and recorded in `out` under
/// `prefix` (`status`, `spec`), and the rest decoded again, until it
/// decodes. A list item is kept or left out whole (`signals[3]`); a map
/// entry's or an object's unreadable key is left out alone, so a default
/// takes its place. None when even that does not decode (then `prefix`
/// itself is recorded). Each round costs one decode of `value`; only
/// objects that failed the typed decode come here.
pub fn decode_leniently<T: Strict>(
    mut value: Value,
    prefix: &str,
    out: &mut Unreadable,
) -> Option<T> {
    // Items left out so far per list (by the list's path): the decode
    // visits a list in order, so every item left out before lies before
    // the one failing now, and its index in what was written is the
    // current one plus their number.
    let mut removed: HashMap<String, usize> = HashMap::new();
    // The path last left out (under `prefix`).
    let mut last: Option<String> = None;
    for _ in 0..MAX_ROUNDS {
        let mut track = serde_path_to_error::Track::new();
        let result = T::strict(serde_path_to_error::Deserializer::new(&value, &mut track));
        let error = match result {
            Ok(t) => return Some(t),
            Err(e) => e,
        };
        let path: Vec<Segment> = track.path().iter().cloned().collect();
        match leave_out(&mut value, &path, &mut removed) {
            // Leaving out a required key made its object fail: the object
            // goes, recorded once, with the first reason (the real one).
            Some(shown) if last.as_deref().is_some_and(|l| self_or_under(l, &shown)) => {
                out.widen_last(format!("{prefix}{shown}"));
                last = Some(shown);
            }
            Some(shown) => {
                out.push(format!("{prefix}{shown}"), &error.to_string());
                last = Some(shown);
            }
            None => {
                out.push(prefix.to_owned(), &error.to_string());
                return None;
            }
        }
    }
    out.push(
        prefix.to_owned(),
        "too many unreadable fields to read the rest",
    );
    None
}

/// Removes from `value` what the decode error at `path` lies in: the list
/// item, if the path passes through a list, else the key itself. Returns
/// the removed element's path as written by the site (`.signals[3]`), or
/// None when the path names nothing removable.
fn leave_out(
    value: &mut Value,
    path: &[Segment],
    removed: &mut HashMap<String, usize>,
) -> Option<String> {
    // Down to the first list item on the path, or to the last key.
    let end = match path.iter().position(|s| matches!(s, Segment::Seq { .. })) {
        Some(i) => i + 1,
        None => {
            path.iter()
                .rposition(|s| matches!(s, Segment::Map { .. }))?
                + 1
        }
    };
    let (parents, last) = path[..end].split_at(end - 1);
    let mut shown = String::new();
    let mut node = value;
    for segment in parents {
        node = match (segment, node) {
            (Segment::Map { key }, Value::Object(m)) => {
                shown.push_str(&show_key(key));
                m.get_mut(key)?
            }
            (Segment::Seq { index }, Value::Array(a)) => {
                let original = index + removed.get(&shown).copied().unwrap_or(0);
                shown.push_str(&format!("[{original}]"));
                a.get_mut(*index)?
            }
            _ => return None,
        };
    }
    match (&last[0], node) {
        (Segment::Map { key }, Value::Object(m)) => {
            m.remove(key)?;
            shown.push_str(&show_key(key));
        }
        (Segment::Seq { index }, Value::Array(a)) if *index < a.len() => {
            a.remove(*index);
            let count = removed.entry(shown.clone()).or_default();
            let original = index + *count;
            *count += 1;
            shown.push_str(&format!("[{original}]"));
        }
        _ => return None,
    }
    Some(shown)
}

/// A key as a path shows it: `.name` for a field name, `["…"]` for any
/// other text (map keys are the site's).
fn show_key(key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        format!(".{key}")
    } else {
        format!("[{key:?}]")
    }
}

impl FederatedClusterStatus {
    /// What could not be read of this status (and of the site's spec),
    /// when anything; see the module documentation.
    pub fn unreadable(&self) -> Option<&Unreadable> {
        self.unreadable.as_deref().filter(|u| !u.is_empty())
    }

    /// The status in `raw` (one JSON value): typed in one pass when it
    /// reads, else key by key ([`decode_leniently`]).
    fn from_raw(raw: &str) -> Self {
        let mut de = serde_json::Deserializer::from_str(raw);
        if let Ok(status) = FederatedClusterStatus::deserialize(&mut de) {
            return status;
        }
        let mut unreadable = Unreadable::default();
        let status = match serde_json::from_str::<Value>(raw) {
            Ok(value @ Value::Object(_)) => decode_leniently(value, "status", &mut unreadable),
            Ok(other) => {
                unreadable.push(
                    "status".to_owned(),
                    &format!("expected an object, found {}", json_type(&other)),
                );
                None
            }
            Err(e) => {
                unreadable.push("status".to_owned(), &e.to_string());
                None
            }
        };
        let mut status: FederatedClusterStatus = status.unwrap_or_default();
        status.unreadable = Some(Box::new(unreadable));
        status
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

impl Serialize for FederatedClusterStatus {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // The derive (`#[serde(remote = "Self")]`): inherent, not the trait.
        FederatedClusterStatus::serialize(self, s)
    }
}

impl<'de> Deserialize<'de> for FederatedClusterStatus {
    /// Never fails on JSON: see the module documentation. Reads from
    /// serde_json (text or `Value`) only, as every reader of a site does.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(d)?;
        Ok(FederatedClusterStatus::from_raw(raw.get()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{
        FederatedCluster, MAX_UNREADABLE_FIELDS, MAX_UNREADABLE_PATH_CHARS,
        MAX_UNREADABLE_REASON_CHARS,
    };
    use serde_json::json;

    fn site(status: Value) -> FederatedCluster {
        serde_json::from_value(json!({
            "apiVersion": "federation.kubectl-fleet.dev/v1alpha1",
            "kind": "FederatedCluster",
            "metadata": {"name": "s"},
            "spec": {},
            "status": status,
        }))
        .expect("a site always decodes")
    }

    fn paths(u: &Unreadable) -> Vec<&str> {
        u.fields.iter().map(|f| f.path.as_str()).collect()
    }

    #[test]
    fn a_readable_status_carries_no_record() {
        let s = site(json!({"lastHeartbeatTime": "2026-12-05T21:30:05Z", "nodeCount": 3}));
        let st = s.status.unwrap();
        assert_eq!(st.unreadable, None);
        assert_eq!(st.node_count, Some(3));
    }

    #[test]
    fn an_unreadable_heartbeat_leaves_out_that_key_alone() {
        for bad in [
            "2026-12-05T21:30:05.1234567891Z",
            "2026-12-05T21:30:05x5Z",
            "2026-12-05T21:30:05+99:99",
        ] {
            let s =
                site(json!({"lastHeartbeatTime": bad, "nodeCount": 3, "observedVersion": "1.0"}));
            let st = s.status.unwrap();
            let u = st.unreadable().expect("recorded");
            assert_eq!(paths(u), ["status.lastHeartbeatTime"], "{bad}");
            assert!(u.fields[0].reason.contains("parse"), "{u:?}");
            assert!(u.heartbeat());
            assert_eq!(st.last_heartbeat_time, None);
            assert_eq!(st.node_count, Some(3));
            assert_eq!(st.observed_version.as_deref(), Some("1.0"));
        }
    }

    #[test]
    fn list_items_are_kept_or_left_out_whole_with_their_index_as_written() {
        let good = |i: i64| {
            json!({"type": "Evicted", "severity": "low", "namespace": "ns",
                "workload": {"kind": "Pod", "name": format!("p{i}")},
                "firstSeen": "2026-12-05T21:30:05Z", "lastSeen": "2026-12-05T21:30:05Z", "count": i})
        };
        let mut bad1 = good(1);
        bad1["firstSeen"] = json!("2026-12-05T21:30:05.1234567891Z");
        let mut bad3 = good(3);
        bad3["count"] = json!(18446744073709551615u64);
        let s = site(json!({
            "signals": [good(0), bad1, good(2), bad3, good(4)],
            "capacity": {"nodes": 2, "gpusTotal": 1.5, "gpusByVendor": {
                "nvidia.com/gpu": {"total": 4, "allocatable": "x"}}},
            "nodeCount": 18446744073709551615u64,
        }));
        let st = s.status.unwrap();
        let u = st.unreadable().unwrap();
        assert_eq!(
            paths(u),
            [
                "status.capacity.gpusByVendor[\"nvidia.com/gpu\"].allocatable",
                "status.capacity.gpusTotal",
                "status.nodeCount",
                "status.signals[1]",
                "status.signals[3]",
            ],
            "in the order the keys decode (by name)"
        );
        let names: Vec<&str> = st
            .signals()
            .iter()
            .map(|s| s.workload.name.as_str())
            .collect();
        assert_eq!(names, ["p0", "p2", "p4"]);
        let cap = st.capacity.clone().unwrap();
        assert_eq!((cap.nodes, cap.gpus_total), (2, 0));
        assert_eq!(cap.gpus_by_vendor["nvidia.com/gpu"].total, 4);
        assert_eq!(
            u.keys(),
            ["status.capacity", "status.nodeCount", "status.signals"]
        );
        assert!(!u.heartbeat() && !u.only_hub_owned());
    }

    #[test]
    fn a_status_that_is_not_an_object_is_left_out_whole() {
        for bad in [json!("x"), json!([1]), json!(7)] {
            let st = site(bad.clone()).status.unwrap();
            let u = st.unreadable().unwrap();
            assert_eq!(paths(u), ["status"], "{bad}");
            assert!(u.heartbeat(), "the whole status covers its heartbeat");
            assert_eq!(st.last_heartbeat_time, None);
        }
        assert_eq!(site(Value::Null).status, None);
    }

    #[test]
    fn hub_owned_keys_alone_are_told_apart() {
        let st = site(json!({
            "phaseTransitionTime": "2026-12-05T21:30:05.1234567891Z",
            "conditions": [{"type": "Connected", "status": "True", "reason": "R",
                "message": "", "lastTransitionTime": "nope"}],
            "nodeCount": 1,
        }))
        .status
        .unwrap();
        let u = st.unreadable().unwrap();
        assert_eq!(
            paths(u),
            ["status.conditions[0]", "status.phaseTransitionTime"]
        );
        assert!(u.only_hub_owned());
        assert_eq!(st.conditions, Some(vec![]));
    }

    #[test]
    fn the_record_is_bounded_and_never_serialised() {
        let signals: Vec<Value> = (0..40).map(|_| json!({"type": "nope"})).collect();
        let long_key = "k".repeat(1000);
        let st = site(json!({
            "signals": signals,
            "capacity": {"gpusByVendor": {long_key.clone(): {"total": "x"}}},
        }))
        .status
        .unwrap();
        let u = st.unreadable().unwrap();
        assert_eq!(u.fields.len(), MAX_UNREADABLE_FIELDS);
        assert_eq!(u.more, 41 - MAX_UNREADABLE_FIELDS);
        assert!(
            u.fields
                .iter()
                .all(|f| f.path.chars().count() <= MAX_UNREADABLE_PATH_CHARS
                    && f.reason.chars().count() <= MAX_UNREADABLE_REASON_CHARS)
        );
        assert_eq!(st.signals, Some(vec![]));
        // The unreadable count is left out, the entry kept (defaults).
        let back = serde_json::to_value(&st).unwrap();
        assert_eq!(
            back["capacity"]["gpusByVendor"][&long_key],
            json!({"total": 0, "allocatable": 0})
        );
        assert_eq!(back["signals"], json!([]));
        assert_eq!(
            back.as_object().unwrap().len(),
            2,
            "no record on the wire: {back}"
        );
    }

    #[test]
    fn text_and_value_readers_agree() {
        let status = json!({"lastHeartbeatTime": "2026-12-05T21:30:05x5Z", "nodeCount": 2});
        let from_value: FederatedClusterStatus = serde_json::from_value(status.clone()).unwrap();
        let from_text: FederatedClusterStatus = serde_json::from_str(&status.to_string()).unwrap();
        let from_ref = <FederatedClusterStatus as Deserialize>::deserialize(&status).unwrap();
        assert_eq!(from_value, from_text);
        assert_eq!(from_ref, from_text);
        assert!(from_text.unreadable().unwrap().heartbeat());
    }
}
