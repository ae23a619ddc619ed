//! The `federation.kubectl-fleet.dev/v1alpha1` API: Rust types, and the CRDs
//! generated from them (never hand-maintained, golden-tested in
//! `tests/crd_schema.rs`).
//!
//! - [`FederatedCluster`]: one object per site, spec set by `register`,
//!   status written by the edge and the hub (disjoint keys, see
//!   [`EDGE_OWNED_STATUS_KEYS`] and [`HUB_OWNED_STATUS_KEYS`]).
//! - [`FederationStatus`]: the hub's fleet-wide singleton `fleet`.
//!
//! All timestamps are [`Time`](k8s_openapi::apimachinery::pkg::apis::meta::v1::Time)
//! (a `jiff::Timestamp`, RFC 3339 with second precision on the wire).

mod cluster;
mod dark_period;
mod federation;
mod lease;
mod lenient;
mod node_info;
mod unreadable;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use kube_core::CustomResourceExt;

pub use cluster::*;
pub use dark_period::*;
pub use federation::*;
pub use lease::*;
pub use lenient::{Strict, decode_leniently};
pub use node_info::*;
pub use unreadable::{
    MAX_UNREADABLE_FIELDS, MAX_UNREADABLE_PATH_CHARS, MAX_UNREADABLE_REASON_CHARS, Unreadable,
    UnreadableField,
};

/// API group of every fleet kind.
pub const GROUP: &str = "federation.kubectl-fleet.dev";
/// API version of every fleet kind.
pub const VERSION: &str = "v1alpha1";
/// `apiVersion` of every fleet kind.
pub const API_VERSION: &str = "federation.kubectl-fleet.dev/v1alpha1";

/// The CRDs of this API, in a stable order (FederatedCluster, FederationStatus,
/// FederatedClusterLease).
/// Every `format: date-time` of the generated schemas becomes the exact
/// [`DATE_TIME_PATTERN`] (see there why).
pub fn crds() -> Vec<CustomResourceDefinition> {
    let mut crds = vec![
        FederatedCluster::crd(),
        FederationStatus::crd(),
        FederatedClusterLease::crd(),
    ];
    for crd in &mut crds {
        for version in &mut crd.spec.versions {
            if let Some(schema) = version
                .schema
                .as_mut()
                .and_then(|v| v.open_api_v3_schema.as_mut())
            {
                exact_date_times(schema);
            }
        }
    }
    crds
}

/// Replaces `format: date-time` with [`DATE_TIME_PATTERN`] in `schema` and
/// everything under it.
fn exact_date_times(schema: &mut JSONSchemaProps) {
    if schema.format.as_deref() == Some("date-time") {
        schema.format = None;
        schema.pattern = Some(DATE_TIME_PATTERN.to_owned());
    }
    for child in schema.properties.iter_mut().flat_map(|p| p.values_mut()) {
        exact_date_times(child);
    }
    if let Some(JSONSchemaPropsOrArray::Schema(items)) = schema.items.as_mut() {
        exact_date_times(items);
    }
    if let Some(JSONSchemaPropsOrBool::Schema(extra)) = schema.additional_properties.as_mut() {
        exact_date_times(extra);
    }
}

/// The CRDs as one multi-document YAML stream, ready for `kubectl apply -f -`.
pub fn crds_yaml() -> String {
    // Serialising CRDs built from our own types cannot fail: they hold only
    // strings, numbers, maps and lists.
    serde_saphyr::to_string_multiple(&crds()).expect("CRDs serialise to YAML")
}

/// The CRDs as checked in (`deploy/crds/federation.kubectl-fleet.dev.yaml`,
/// [`crds_yaml`] written by `cargo xtask generate`; the crd_schema test and
/// CI's drift check fail when the file and the types differ).
const CHECKED_IN_CRDS: &str =
    include_str!("../../../../deploy/crds/federation.kubectl-fleet.dev.yaml");

/// The CRDs as manifests, from the checked-in YAML: what the plugin
/// installs (`kubectl fleet install`) and checks `register -f` against.
/// The binaries carry this text rather than the schema generator behind
/// [`crds`] (schemars and a schema builder per type: about 330 KB of the
/// plugin, docs/benchmarks-cli.md#release-profile-p2); the two are the
/// same documents (tested below).
pub fn crd_manifests() -> Vec<serde_json::Value> {
    // The text is this crate's own generated YAML, checked by a test.
    serde_saphyr::from_multiple(CHECKED_IN_CRDS).expect("the checked-in CRDs are YAML")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CRDs the binaries carry are the ones the types generate (when
    /// this fails, `bash tools/regen.sh` writes the file anew).
    #[test]
    fn the_checked_in_crds_are_the_generated_ones() {
        let generated: Vec<serde_json::Value> = crds()
            .iter()
            .map(|crd| serde_json::to_value(crd).unwrap())
            .collect();
        assert_eq!(crd_manifests(), generated);
    }

    #[test]
    fn crd_names_and_scope() {
        let crds = crds();
        assert_eq!(
            crds[0].metadata.name.as_deref(),
            Some("federatedclusters.federation.kubectl-fleet.dev")
        );
        assert_eq!(
            crds[1].metadata.name.as_deref(),
            Some("federationstatuses.federation.kubectl-fleet.dev")
        );
        assert_eq!(
            crds[2].metadata.name.as_deref(),
            Some("federatedclusterleases.federation.kubectl-fleet.dev")
        );
        assert_eq!(
            crds[2].spec.names.short_names.as_deref(),
            Some(&["fcl".to_owned()][..])
        );
        // A lease is renewed with one patch of the object: no status.
        assert!(crds[2].spec.versions[0].subresources.is_none());
        for crd in &crds {
            assert_eq!(crd.spec.scope, "Cluster");
            assert_eq!(crd.spec.group, GROUP);
            assert_eq!(crd.spec.versions[0].name, VERSION);
        }
        for crd in &crds[..2] {
            assert!(
                crd.spec.versions[0]
                    .subresources
                    .as_ref()
                    .unwrap()
                    .status
                    .is_some()
            );
        }
        let names = &crds[0].spec.names;
        assert_eq!(
            names.short_names.as_deref(),
            Some(&["fc".to_owned(), "fcluster".to_owned()][..])
        );
        assert_eq!(names.categories.as_deref(), Some(&["fleet".to_owned()][..]));
        assert_eq!(
            crds[1].spec.names.short_names.as_deref(),
            Some(&["fedstatus".to_owned()][..])
        );
    }

    #[test]
    fn printer_columns_are_design_section_2() {
        let crd = FederatedCluster::crd();
        let cols: Vec<(String, String, String)> = crd.spec.versions[0]
            .additional_printer_columns
            .clone()
            .unwrap()
            .into_iter()
            .map(|c| (c.name, c.type_, c.json_path))
            .collect();
        let want = [
            ("Mode", "string", ".spec.mode"),
            ("Tier", "string", ".spec.tier"),
            ("Env", "string", ".spec.environment"),
            ("Phase", "string", ".status.phase"),
            ("Last Heartbeat", "date", ".status.lastHeartbeatTime"),
            ("GPUs", "integer", ".status.capacity.gpusTotal"),
            ("Age", "date", ".metadata.creationTimestamp"),
        ];
        let want: Vec<(String, String, String)> = want
            .iter()
            .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
            .collect();
        assert_eq!(cols, want);
    }

    #[test]
    fn status_ownership_is_disjoint_and_covers_every_key() {
        let fc = FederatedCluster::test("s")
            .connected()
            .with_gpus(2)
            .with_inference(1, 1, 0, 1)
            .with_token_expiring_in(60)
            .with_token_renewed_in(30)
            .probed_in(12)
            .reported_in(40)
            .with_clock_offset(-600)
            .with_member("6f1c2a8e-0b7d-4f3e-9a51-2c8d7e6f1b20")
            .with_dark_period(600, 60, vec![])
            .with_node_info(|n| n.kernel_version = NodeValues::of(&[("6.8.0", 2)]))
            .with_signal(Signal::test(SignalType::Evicted, "ns", "Pod", "p"));
        let status = serde_json::to_value(fc.status.unwrap()).unwrap();
        let mut keys: Vec<&str> = status
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort();
        let mut owned: Vec<&str> = EDGE_OWNED_STATUS_KEYS
            .iter()
            .chain(HUB_OWNED_STATUS_KEYS)
            .copied()
            .collect();
        owned.sort();
        assert_eq!(keys, owned);
        assert!(
            EDGE_OWNED_STATUS_KEYS
                .iter()
                .all(|k| !HUB_OWNED_STATUS_KEYS.contains(k))
        );
    }

    #[test]
    fn empty_status_serialises_to_no_keys() {
        let v = serde_json::to_value(FederatedClusterStatus::default()).unwrap();
        assert_eq!(v, serde_json::json!({}));
    }

    #[test]
    fn spec_defaults_match_design() {
        let fc: FederatedCluster = serde_json::from_value(serde_json::json!({
            "apiVersion": API_VERSION, "kind": "FederatedCluster",
            "metadata": {"name": "a"}, "spec": {}
        }))
        .unwrap();
        assert_eq!(fc.spec, FederatedClusterSpec::default());
        assert_eq!(fc.spec.mode, Mode::Push);
        assert_eq!(fc.spec.environment, Environment::Production);
        assert_eq!(fc.spec.tier, Tier::Standard);
        assert_eq!(fc.spec.capabilities, vec![Capability::Monitoring]);
        assert_eq!(fc.spec.heartbeat_interval_seconds, 30);
        assert_eq!(fc.spec.max_concurrent_remediations, 3);
        assert_eq!(fc.display_name(), "a");
        let spec = serde_json::to_value(&fc.spec).unwrap();
        assert_eq!(
            spec,
            serde_json::json!({
                "mode": "Push", "environment": "production", "tier": "standard",
                "capabilities": ["monitoring"], "heartbeatIntervalSeconds": 30,
                "maxConcurrentRemediations": 3
            })
        );
    }

    #[test]
    fn enums_round_trip_their_wire_names() {
        assert_eq!("non-critical".parse::<Tier>(), Ok(Tier::NonCritical));
        assert_eq!(SignalType::OomKilled.as_str(), "OOMKilled");
        assert_eq!(SignalType::PidPressure.to_string(), "PIDPressure");
        let err = "gold".parse::<Tier>().unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"unknown tier "gold": expected one of critical, standard, non-critical"#
        );
        for t in SignalType::ALL {
            assert_eq!(serde_json::to_value(t).unwrap(), t.as_str());
        }
        assert!(Severity::Critical < Severity::Low, "worst sorts first");
        assert!(
            Environment::Development < Environment::Staging
                && Environment::Staging < Environment::Production
        );
    }

    #[test]
    fn every_date_time_is_the_exact_pattern() {
        let yaml = crds_yaml();
        assert!(!yaml.contains("date-time"), "no format date-time left");
        let fc = serde_json::to_value(&crds()[0]).unwrap();
        let status = &fc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
            ["properties"];
        for time in [
            &status["lastHeartbeatTime"],
            &status["signals"]["items"]["properties"]["firstSeen"],
            &status["conditions"]["items"]["properties"]["lastTransitionTime"],
        ] {
            assert_eq!(time["pattern"], DATE_TIME_PATTERN, "{time}");
            assert_eq!(time["type"], "string");
        }
    }

    #[test]
    fn yaml_is_deterministic() {
        assert_eq!(crds_yaml(), crds_yaml());
        assert!(crds_yaml().contains("\n---\n"));
    }
}
