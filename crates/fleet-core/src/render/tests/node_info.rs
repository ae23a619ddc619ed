//! What a site's nodes run (`status.nodeInfo`) in describe and `-o json`.

use super::*;
use crate::api::{NodeValue, NodeValues};

/// A store whose three nodes run two kernels, one of them a hostile string
/// (terminal escapes), a GPU model on one node, and a thousand kernels'
/// worth of others counted: describe lists each attribute on one line,
/// escaped, and the JSON carries the summary as reported.
#[test]
fn describe_lists_what_the_nodes_run() {
    let site = FederatedCluster::test("store-7")
        .connected()
        .with_gpus(1)
        .with_node_info(|n| {
            n.os_image = NodeValues::of(&[("Ubuntu 24.04.1 LTS", 3)]);
            n.kernel_version = NodeValues {
                values: vec![
                    NodeValue {
                        value: "6.8.0-45-generic".into(),
                        nodes: 2,
                    },
                    NodeValue {
                        value: "5.15\u{1b}]0;owned\u{7}".into(),
                        nodes: 1,
                    },
                ],
                other_values: 992,
                other_nodes: 995,
            };
            n.gpu_model = NodeValues::of(&[("NVIDIA-A100-SXM4-80GB", 1)]);
        });
    let d = describe::site_description(&site, &judging(), &none(), None, fixture_now());
    let text = describe::render_description(&d, fixture_now());
    let inventory: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "Inventory:")
        .take_while(|l| *l != "Signals:")
        .collect();
    insta::assert_snapshot!(inventory.join("\n"));
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    let json: serde_json::Value = serde_json::from_str(&to_json(&d).unwrap()).unwrap();
    assert_eq!(
        json["nodeInfo"]["kernelVersion"]["values"][1]["value"],
        "5.15\u{1b}]0;owned\u{7}"
    );
    assert_eq!(json["nodeInfo"]["kernelVersion"]["otherNodes"], 995);
    assert_eq!(
        json["nodeInfo"]["gpuModel"]["values"][0],
        serde_json::json!({"value": "NVIDIA-A100-SXM4-80GB", "nodes": 1})
    );
    assert!(json["nodeInfo"].get("containerRuntimeVersion").is_none());
}

/// A site whose edge reports no node summary (an older edge) shows no
/// such lines, and `nodeInfo` is null in the report.
#[test]
fn a_site_without_a_node_summary_shows_none() {
    let site = FederatedCluster::test("old-edge").connected();
    let d = describe::site_description(&site, &judging(), &none(), None, fixture_now());
    let text = describe::render_description(&d, fixture_now());
    assert!(!text.contains("Kernel:"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&to_json(&d).unwrap()).unwrap();
    assert_eq!(json["nodeInfo"], serde_json::Value::Null);
}
