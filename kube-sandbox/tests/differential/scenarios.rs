//! The scenarios. Each is deterministic: the same requests in the same order
//! on either server, with later requests built from earlier answers only
//! through values that normalization hides (resourceVersions).

use super::*;

mod crds;
mod objects;

pub use crds::{crd_lifecycle, edge_values, fleet_crds};
pub use objects::{
    cel_rules, crud, finalizers_and_deletion, generation_and_resource_version,
    label_selectors_and_pagination, merge_and_json_patch, not_found_and_conflict_bodies,
    pruning_and_defaulting, server_side_apply, status_subresource_isolation, table_output,
    validation_errors, watch_sequences,
};

/// Polls `path` until `done` holds for its answer (at most 90 s: a
/// real server's controllers act within a second or two, its CRD
/// finalizer re-checks every second).
async fn until(r: &Run<'_>, path: &str, done: impl Fn(&Reply) -> bool) -> Reply {
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        let reply = r.server.raw("GET", path, None, None).await;
        if done(&reply) {
            return reply;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} server: {path} never reached the awaited state: {}",
            r.server.kind(),
            reply.text
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The parts of a CRD its controllers write: finalizers, whether it is
/// marked for deletion, accepted names, conditions without times.
fn crd_state(crd: &Value) -> Value {
    let conditions: Vec<Value> = crd["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| json!([c["type"], c["status"], c["reason"], c["message"]]))
        .collect();
    json!({
        "finalizers": crd["metadata"]["finalizers"],
        "deleting": crd["metadata"]["deletionTimestamp"].is_string(),
        "acceptedNames": crd["status"]["acceptedNames"],
        "storedVersions": crd["status"]["storedVersions"],
        "conditions": conditions,
    })
}
