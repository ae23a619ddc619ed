//! `status.nodeInfo`: what a site's nodes run — their OS image, kernel and
//! container runtime (each Node's `status.nodeInfo`) and GPU model (the
//! well-known node labels of the vendors' feature discovery) — as the
//! distinct values with how many nodes have each
//! (docs/operations.md#what-an-incidents-sites-have-in-common).
//!
//! Edge-owned and untrusted like every field a site writes: at most
//! [`MAX_NODE_VALUES`] values per attribute (the most common; the rest
//! only counted), each at most [`MAX_NODE_VALUE_CHARS`] characters
//! without control or format characters, no value twice, counts within
//! [`MAX_COUNT`]. The edge summarises its member's Nodes within these
//! bounds (`fleet::inventory::node_info_from_nodes`) and clips again
//! before it writes (`fleet::bounds`); the CRD refuses anything else.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{MAX_COUNT, PRINTABLE_TEXT_PATTERN};

/// Upper bound on the values listed per attribute of `status.nodeInfo`.
pub const MAX_NODE_VALUES: usize = 8;
/// Upper bound, in characters, on one value of `status.nodeInfo`.
pub const MAX_NODE_VALUE_CHARS: usize = 128;

/// The node labels a GPU model is read from, in the order a node's model
/// is taken from them: NVIDIA's GPU feature discovery
/// (`nvidia.com/gpu.product`, e.g. `NVIDIA-A100-SXM4-80GB`) and AMD's node
/// labeller (`amd.com/gpu.product-name`, e.g. `AMD_Instinct_MI300X_OAM`).
pub const GPU_MODEL_LABELS: &[&str] = &["nvidia.com/gpu.product", "amd.com/gpu.product-name"];

/// What a site's nodes run (`status.nodeInfo`): per attribute, the
/// distinct values and how many nodes have each, the most common first.
/// A node that does not report an attribute (no GPU label, an empty
/// `kernelVersion`) is not counted for it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeInfo {
    /// The nodes' `status.nodeInfo.osImage` (e.g. `Ubuntu 24.04.1 LTS`).
    #[serde(default, skip_serializing_if = "NodeValues::is_empty")]
    pub os_image: NodeValues,
    /// The nodes' `status.nodeInfo.kernelVersion` (e.g. `6.8.0-45-generic`).
    #[serde(default, skip_serializing_if = "NodeValues::is_empty")]
    pub kernel_version: NodeValues,
    /// The nodes' `status.nodeInfo.containerRuntimeVersion` (e.g.
    /// `containerd://1.7.22`).
    #[serde(default, skip_serializing_if = "NodeValues::is_empty")]
    pub container_runtime_version: NodeValues,
    /// The nodes' GPU model, from the label `nvidia.com/gpu.product`
    /// (NVIDIA GPU feature discovery) or `amd.com/gpu.product-name` (AMD
    /// node labeller); nodes without either are not counted.
    #[serde(default, skip_serializing_if = "NodeValues::is_empty")]
    pub gpu_model: NodeValues,
}

impl NodeInfo {
    /// Each attribute, in the declaration order.
    pub(crate) fn attributes_mut(&mut self) -> [&mut NodeValues; 4] {
        [
            &mut self.os_image,
            &mut self.kernel_version,
            &mut self.container_runtime_version,
            &mut self.gpu_model,
        ]
    }
}

/// The distinct values of one node attribute on a site.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeValues {
    /// The most common values, at most 8, each once, the most nodes first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = MAX_NODE_VALUES),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["value"])
    )]
    pub values: Vec<NodeValue>,
    /// How many more distinct values the nodes have beyond `values`.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(range(min = 0, max = MAX_COUNT))]
    pub other_values: i64,
    /// How many nodes have those other values.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(range(min = 0, max = MAX_COUNT))]
    pub other_nodes: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

impl NodeValues {
    /// Whether no node reported the attribute.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty() && self.other_values == 0 && self.other_nodes == 0
    }
}

/// One value of a node attribute and how many nodes have it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct NodeValue {
    /// The value as the nodes report it (at most 128 characters, cut with
    /// `…`; control and format characters replaced).
    #[schemars(length(min = 1, max = MAX_NODE_VALUE_CHARS), regex(pattern = PRINTABLE_TEXT_PATTERN))]
    pub value: String,
    /// Nodes with this value.
    #[schemars(range(min = 1, max = MAX_COUNT))]
    pub nodes: i64,
}
