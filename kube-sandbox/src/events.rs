//! Events, as the real API server serves them: one stored object, two
//! views. A core `v1` Event and an `events.k8s.io/v1` Event of the same
//! namespace and name are the same object, converted field by field as
//! the real conversion does (`involvedObject` ↔ `regarding`, `message` ↔
//! `note`, `reportingComponent` ↔ `reportingController`, `source` ↔
//! `deprecatedSource`, `count`/`firstTimestamp`/`lastTimestamp` ↔
//! `deprecatedCount`/`deprecatedFirstTimestamp`/`deprecatedLastTimestamp`;
//! `series`, `related`, `action`, `reason`, `type`, `eventTime`,
//! `reportingInstance` and metadata as they are). Each write of one view
//! is stored in both at the same resourceVersion ([`crate::store`]), so a
//! watch or list of either sees it. Each view can be selected by its own
//! field labels ([`fields_of`]).

use crate::resources::GroupResource;
use serde_json::{Map, Value, json};

/// The API group of the new Events API.
const EVENTS_GROUP: &str = "events.k8s.io";

/// Field labels of core `v1` Events (besides `metadata.name` and
/// `metadata.namespace`).
const CORE_FIELDS: &[&str] = &[
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "type",
];

/// Field labels of `events.k8s.io/v1` Events.
const NEW_FIELDS: &[&str] = &[
    "regarding.kind",
    "regarding.namespace",
    "regarding.name",
    "regarding.uid",
    "regarding.apiVersion",
    "regarding.resourceVersion",
    "regarding.fieldPath",
    "reason",
    "reportingController",
    "type",
];

/// The field labels a resource supports beyond the metadata ones.
pub fn fields_of(group: &str, plural: &str) -> &'static [&'static str] {
    match (group, plural) {
        ("", "events") => CORE_FIELDS,
        (EVENTS_GROUP, "events") => NEW_FIELDS,
        _ => &[],
    }
}

/// The other view's storage of an Event resource.
pub fn other_resource(gr: &GroupResource) -> Option<GroupResource> {
    if gr.resource != "events" {
        return None;
    }
    let group = match gr.group.as_str() {
        "" => EVENTS_GROUP,
        EVENTS_GROUP => "",
        _ => return None,
    };
    Some(GroupResource {
        group: group.to_owned(),
        resource: "events".to_owned(),
    })
}

/// For an Event written to `gr`: the other view's storage and the object
/// as that view shows it.
pub fn other_view(gr: &GroupResource, obj: &Value) -> Option<(GroupResource, Value)> {
    let other = other_resource(gr)?;
    let view = if other.group.is_empty() {
        to_core(obj)
    } else {
        to_new(obj)
    };
    Some((other, view))
}

/// (core field, events.k8s.io field) renamed by the conversion.
const RENAMED: &[(&str, &str)] = &[
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("reportingComponent", "reportingController"),
    ("source", "deprecatedSource"),
    ("count", "deprecatedCount"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
];

/// Kept as they are.
const SAME: &[&str] = &[
    "metadata",
    "series",
    "related",
    "action",
    "reason",
    "type",
    "eventTime",
    "reportingInstance",
];

fn convert(obj: &Value, api_version: &str, to_new: bool) -> Value {
    let mut out = Map::new();
    out.insert("apiVersion".into(), json!(api_version));
    out.insert("kind".into(), json!("Event"));
    for k in SAME {
        if let Some(v) = obj.get(*k).filter(|v| !v.is_null()) {
            out.insert((*k).into(), v.clone());
        }
    }
    for (core, new) in RENAMED {
        let (from, to) = if to_new { (core, new) } else { (new, core) };
        if let Some(v) = obj.get(*from).filter(|v| !v.is_null()) {
            out.insert((*to).into(), v.clone());
        }
    }
    Value::Object(out)
}

/// The `events.k8s.io/v1` view of a core Event.
pub fn to_new(core: &Value) -> Value {
    convert(core, "events.k8s.io/v1", true)
}

/// The core `v1` view of an `events.k8s.io/v1` Event.
pub fn to_core(new: &Value) -> Value {
    convert(new, "v1", false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_views_are_converted_field_by_field_and_back() {
        let new = json!({
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "site-a.1", "namespace": "default"},
            "regarding": {"kind": "FederatedCluster", "name": "site-a"},
            "note": "Stale: no heartbeat",
            "reason": "Stale",
            "type": "Warning",
            "action": "Judge",
            "reportingController": "fleet-operator-hub",
            "reportingInstance": "hub-a",
            "eventTime": "2026-12-04T10:00:00.000000Z",
            "series": {"count": 3, "lastObservedTime": "2026-12-04T10:05:00.000000Z"},
        });
        let core = to_core(&new);
        assert_eq!(core["apiVersion"], "v1");
        assert_eq!(core["involvedObject"]["name"], "site-a");
        assert_eq!(core["message"], "Stale: no heartbeat");
        assert_eq!(core["reportingComponent"], "fleet-operator-hub");
        assert_eq!(core["series"]["count"], 3);
        assert!(core.get("regarding").is_none() && core.get("note").is_none());
        assert_eq!(to_new(&core), new);
    }

    #[test]
    fn each_view_is_selected_by_its_own_field_labels() {
        use crate::selector::FieldSelector;
        let core = to_core(&json!({
            "metadata": {"name": "e", "namespace": "default"},
            "regarding": {"kind": "FederatedCluster", "name": "site-a"},
            "reason": "Stale",
            "type": "Warning",
        }));
        let sel = |s: &str, group: &str| FieldSelector::parse_with(s, fields_of(group, "events"));
        let hit = |s: &str| sel(s, "").unwrap().matches(&core);
        assert!(hit("involvedObject.name=site-a"));
        assert!(hit(
            "involvedObject.kind=FederatedCluster,involvedObject.name=site-a,type=Warning"
        ));
        assert!(!hit("involvedObject.name=site-b"));
        assert!(hit("reason!=Connected"));
        assert!(sel("regarding.name=site-a", "").is_err());
        let new = to_new(&core);
        assert!(
            sel("regarding.name=site-a", EVENTS_GROUP)
                .unwrap()
                .matches(&new)
        );
        assert_eq!(
            sel("involvedObject.name=x", EVENTS_GROUP).unwrap_err(),
            "field label not supported: involvedObject.name"
        );
        assert!(
            FieldSelector::parse("involvedObject.name=x").is_err(),
            "pods have no such field"
        );
    }
}
