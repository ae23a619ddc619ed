//! Reads from a member cluster for the edge operator and the hub's Pull
//! prober: version, nodes, namespaces, pods, ReplicaSets (to resolve pod
//! owners), inference objects found by discovery, and the access reviews
//! and token renewal of a Pull site's identity.
//!
//! - **Paged.** Every list asks for a page (`limit`) and follows
//!   `continue`, so no single answer holds a whole large kind.
//! - **Lean.** Only what the collector uses is decoded: a pod keeps its
//!   metadata (name, namespace, owners, times) and its status; its spec —
//!   containers, commands, environment — is never decoded, so it never
//!   reaches the reader's memory. A node keeps capacity, allocatable,
//!   conditions, what it runs (`nodeInfo`'s OS image, kernel and container
//!   runtime) and, of its labels, the GPU model ones
//!   (`api::GPU_MODEL_LABELS`). ReplicaSets, namespaces and LLMKube models
//!   are listed as metadata only (`PartialObjectMetadataList`).
//! - **Read here.** Answers are read by this module, not by kube's typed
//!   calls: a body is never logged, and an answer that is not the
//!   Kubernetes API's (HTML, not JSON, an error without a `Status`) is
//!   [`MemberError::NotKubernetes`] — its class, never its text.
//! - **Bounded** (the prober): the member client cuts each answer and
//!   charges it to the probe's [`ReadBudget`] (`k8s::body_limit`); this
//!   reader charges the memory it keeps for each decoded object to the same
//!   budget, so what one probe holds never exceeds it
//!   (docs/pull-mode.md#what-a-probe-may-cost-the-hub).

use std::collections::BTreeMap;

use http_body_util::BodyExt as _;
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStatus, Namespace, Node, NodeCondition, NodeStatus, NodeSystemInfo,
    Pod, PodCondition, PodStatus,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    APIGroupList, APIResourceList, ObjectMeta, OwnerReference, Time,
};
use kube::Resource as _;
use kube::api::{ApiResource, DynamicObject, ListParams};
use kube::core::GroupVersionKind;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::body_limit::{ReadBudget, TooLarge};
use crate::fleet::probe::Permission;
use crate::fleet::rbac::FLEET_NAMESPACE;

/// Pods per list page: a page of ordinary pods is a few hundred KiB, far
/// below the prober's per-answer cap even for pods with large annotations.
pub const POD_PAGE: u32 = 100;
/// Nodes per list page (a node's status lists its images: tens of KiB).
pub const NODE_PAGE: u32 = 50;
/// Objects per page of a metadata-only list, or of inference objects.
pub const METADATA_PAGE: u32 = 500;

/// An inference kind the edge counts, if the member serves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InferenceKind {
    /// LLMKube `Model` (inference.llmkube.dev).
    LlmkubeModel,
    /// LLMKube `InferenceService` (inference.llmkube.dev).
    LlmkubeInferenceService,
    /// KServe `InferenceService` (serving.kserve.io).
    KserveInferenceService,
}

impl InferenceKind {
    /// Every kind, in a stable order.
    pub const ALL: [InferenceKind; 3] = [
        InferenceKind::LlmkubeModel,
        InferenceKind::LlmkubeInferenceService,
        InferenceKind::KserveInferenceService,
    ];

    /// API group of the kind.
    pub fn group(self) -> &'static str {
        match self {
            InferenceKind::LlmkubeModel | InferenceKind::LlmkubeInferenceService => {
                "inference.llmkube.dev"
            }
            InferenceKind::KserveInferenceService => "serving.kserve.io",
        }
    }

    /// Kind name.
    pub fn kind(self) -> &'static str {
        match self {
            InferenceKind::LlmkubeModel => "Model",
            _ => "InferenceService",
        }
    }

    /// Resource (plural) name.
    pub fn plural(self) -> &'static str {
        match self {
            InferenceKind::LlmkubeModel => "models",
            _ => "inferenceservices",
        }
    }

    /// Whether only the number of objects matters (no status is read).
    fn counted_only(self) -> bool {
        self == InferenceKind::LlmkubeModel
    }
}

/// Everything the edge reads from its member cluster in one tick.
#[derive(Clone, Debug, Default)]
pub struct MemberObjects {
    /// `gitVersion` of the member API server.
    pub kubernetes_version: String,
    /// All nodes: metadata, capacity, allocatable and conditions.
    pub nodes: Vec<Node>,
    /// Number of namespaces.
    pub namespace_count: usize,
    /// The member's identity: the UID of its `kube-system` namespace
    /// ([`IDENTITY_NAMESPACE`]), None when the list had no such namespace.
    pub member_uid: Option<String>,
    /// All pods: metadata and status, never the spec.
    pub pods: Vec<Pod>,
    /// All ReplicaSets, metadata only, to resolve a pod's Deployment.
    pub replica_sets: Vec<ReplicaSet>,
    /// Inference objects of every kind the member serves (absent kinds are
    /// simply not listed): metadata, and the status of services.
    pub inference: Vec<(InferenceKind, Vec<DynamicObject>)>,
}

/// A member read that failed.
#[derive(Debug, thiserror::Error)]
pub enum MemberError {
    /// A call to the member API server failed (transport, or an API error
    /// `Status`).
    #[error("reading {what} from the member cluster")]
    Read {
        what: &'static str,
        #[source]
        source: kube::Error,
    },
    /// The answers were larger than the reader may take.
    #[error("reading {what} from the member cluster: {source}")]
    TooLarge {
        what: &'static str,
        #[source]
        source: TooLarge,
    },
    /// Something answered, but not as a Kubernetes API server does.
    #[error("reading {what} from the member cluster: the answer is not the Kubernetes API's")]
    NotKubernetes { what: &'static str },
    /// The reading was not done within its time (the edge's: half the
    /// heartbeat interval): an API server that hangs, or keeps answering
    /// 429/503.
    #[error("the member cluster was not read within {limit:?}")]
    NotInTime { limit: std::time::Duration },
}

impl MemberError {
    fn from_kube(what: &'static str, source: kube::Error) -> Self {
        match TooLarge::find(&source) {
            Some(t) => MemberError::TooLarge { what, source: t },
            None => MemberError::Read { what, source },
        }
    }

    fn is_not_found(&self) -> bool {
        matches!(self, MemberError::Read { source: kube::Error::Api(s), .. } if s.code == 404)
    }
}

/// The error of a non-2xx answer: the member's `Status` when it sent one;
/// a bare 401 or 403 as such (the credential's fault, whatever the body);
/// anything else is not the Kubernetes API.
fn answer_error(what: &'static str, code: u16, body: &[u8]) -> MemberError {
    let status = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .filter(|v| v.get("kind").and_then(|k| k.as_str()) == Some("Status"))
        .and_then(|v| serde_json::from_value::<kube::core::Status>(v).ok());
    let status = match status {
        Some(s) => s.with_code(code),
        None if matches!(code, 401 | 403) => kube::core::Status::failure("", "").with_code(code),
        None => return MemberError::NotKubernetes { what },
    };
    MemberError::Read {
        what,
        source: kube::Error::Api(status.boxed()),
    }
}

/// Nested lists kept per object: container statuses per kind of container,
/// conditions, owners, capacity entries. Beyond these a member's object is
/// cut, not refused: no real pod, node or service comes near them, and an
/// object that does cannot make the reader hold 750 bytes for every two
/// bytes it sent (an empty container status `{}` decodes into that much).
const MAX_CONTAINERS: usize = 64;
const MAX_CONDITIONS: usize = 32;
const MAX_OWNERS: usize = 8;
const MAX_RESOURCES: usize = 64;

/// A list of at most `N` elements: the rest are skipped undecoded.
fn at_most<'de, D, T, const N: usize>(d: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Bounded<T, const N: usize>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>, const N: usize> serde::de::Visitor<'de> for Bounded<T, N> {
        type Value = Option<Vec<T>>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a list")
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_seq(self)
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while out.len() < N {
                match seq.next_element()? {
                    Some(x) => out.push(x),
                    None => return Ok(Some(out)),
                }
            }
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
            Ok(Some(out))
        }
    }
    d.deserialize_option(Bounded::<T, N>(std::marker::PhantomData))
}

/// An optional map read entry by entry, keeping the entries `keep`
/// accepts (given the key and how many are kept so far); the others are
/// skipped without being decoded. `empty_is_none`: a map with nothing
/// kept reads as None.
fn kept_map<'de, D, V>(
    d: D,
    what: &'static str,
    keep: fn(&str, usize) -> bool,
    empty_is_none: bool,
) -> Result<Option<BTreeMap<String, V>>, D::Error>
where
    D: serde::Deserializer<'de>,
    V: serde::Deserialize<'de>,
{
    struct Kept<V> {
        what: &'static str,
        keep: fn(&str, usize) -> bool,
        empty_is_none: bool,
        value: std::marker::PhantomData<V>,
    }
    impl<'de, V: serde::Deserialize<'de>> serde::de::Visitor<'de> for Kept<V> {
        type Value = Option<BTreeMap<String, V>>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.what)
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(key) = map.next_key::<String>()? {
                if (self.keep)(&key, out.len()) {
                    out.insert(key, map.next_value::<V>()?);
                } else {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            Ok(Some(out).filter(|m| !(self.empty_is_none && m.is_empty())))
        }
    }
    d.deserialize_option(Kept {
        what,
        keep,
        empty_is_none,
        value: std::marker::PhantomData,
    })
}

/// A map of at most [`MAX_RESOURCES`] entries: the rest are skipped.
fn resources<'de, D>(d: D) -> Result<Option<BTreeMap<String, Quantity>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    kept_map(
        d,
        "a map of resource quantities",
        |_, kept| kept < MAX_RESOURCES,
        false,
    )
}

/// Heap per kept label beyond its strings: the entry and the tree's share
/// of a node.
const LABEL_ENTRY: usize = 2 * size_of::<String>() + 16;

/// The labels of an object, keeping only the GPU model ones
/// (`api::GPU_MODEL_LABELS`): None when it has none of them.
fn gpu_model_labels<'de, D>(d: D) -> Result<Option<BTreeMap<String, String>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    kept_map(
        d,
        "a map of labels",
        |key, _| crate::api::GPU_MODEL_LABELS.contains(&key),
        true,
    )
}

/// A page of a list, decoded leanly, with at most as many items as were
/// asked for (a real API server never sends more; more is not the
/// Kubernetes API, and would let a page of `{}`s decode into far more
/// memory than its bytes).
struct Page<T> {
    continue_: Option<String>,
    items: Vec<T>,
}

/// Decodes a [`Page`] with at most `max` items.
struct PageSeed<T> {
    max: usize,
    item: std::marker::PhantomData<T>,
}

impl<'de, T: Deserialize<'de>> serde::de::DeserializeSeed<'de> for PageSeed<T> {
    type Value = Page<T>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Page<T>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for PageSeed<T> {
    type Value = Page<T>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Page<T>, A::Error> {
        let mut page = Page {
            continue_: None,
            items: Vec::new(),
        };
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "metadata" => page.continue_ = map.next_value::<PageMeta>()?.continue_,
                "items" => {
                    page.items = map.next_value_seed(ItemsSeed::<T> {
                        max: self.max,
                        item: std::marker::PhantomData,
                    })?
                }
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(page)
    }
}

struct ItemsSeed<T> {
    max: usize,
    item: std::marker::PhantomData<T>,
}

impl<'de, T: Deserialize<'de>> serde::de::DeserializeSeed<'de> for ItemsSeed<T> {
    type Value = Vec<T>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Vec<T>, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for ItemsSeed<T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at most {} items", self.max)
    }

    fn visit_none<E>(self) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }

    fn visit_unit<E>(self) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Vec<T>, D::Error> {
        d.deserialize_seq(self)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut out = Vec::with_capacity(self.max.min(64));
        while let Some(item) = seq.next_element()? {
            if out.len() == self.max {
                return Err(serde::de::Error::custom("more items than the page limit"));
            }
            out.push(item);
        }
        Ok(out)
    }
}

#[derive(Default, Deserialize)]
struct PageMeta {
    #[serde(rename = "continue", default)]
    continue_: Option<String>,
}

/// The metadata the collector uses; labels, annotations and managed
/// fields are skipped.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct LeanMeta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    #[serde(deserialize_with = "at_most::<_, _, MAX_OWNERS>")]
    owner_references: Option<Vec<OwnerReference>>,
    creation_timestamp: Option<Time>,
    deletion_timestamp: Option<Time>,
}

impl LeanMeta {
    /// Heap the kept metadata takes beyond its strings (which are bytes
    /// the answer already counted).
    fn nested(&self) -> usize {
        self.owner_references.as_ref().map_or(0, Vec::len) * size_of::<OwnerReference>()
    }
}

impl From<LeanMeta> for ObjectMeta {
    fn from(m: LeanMeta) -> Self {
        ObjectMeta {
            name: m.name,
            namespace: m.namespace,
            uid: m.uid,
            owner_references: m.owner_references,
            creation_timestamp: m.creation_timestamp,
            deletion_timestamp: m.deletion_timestamp,
            ..ObjectMeta::default()
        }
    }
}

#[derive(Deserialize)]
struct MetadataOnly {
    #[serde(default)]
    metadata: LeanMeta,
}

/// What the collector reads of a container's status: its name, restarts,
/// readiness and states (no image, resources or volume mounts).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LeanContainerStatus {
    #[serde(default)]
    name: String,
    #[serde(default)]
    ready: bool,
    #[serde(default)]
    restart_count: i32,
    started: Option<bool>,
    state: Option<ContainerState>,
    last_state: Option<ContainerState>,
}

impl From<LeanContainerStatus> for ContainerStatus {
    fn from(c: LeanContainerStatus) -> Self {
        ContainerStatus {
            name: c.name,
            ready: c.ready,
            restart_count: c.restart_count,
            started: c.started,
            state: c.state,
            last_state: c.last_state,
            ..ContainerStatus::default()
        }
    }
}

/// What the collector reads of a pod's status.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct LeanPodStatus {
    phase: Option<String>,
    reason: Option<String>,
    message: Option<String>,
    start_time: Option<Time>,
    #[serde(deserialize_with = "at_most::<_, _, MAX_CONDITIONS>")]
    conditions: Option<Vec<PodCondition>>,
    #[serde(deserialize_with = "at_most::<_, _, MAX_CONTAINERS>")]
    init_container_statuses: Option<Vec<LeanContainerStatus>>,
    #[serde(deserialize_with = "at_most::<_, _, MAX_CONTAINERS>")]
    container_statuses: Option<Vec<LeanContainerStatus>>,
    #[serde(deserialize_with = "at_most::<_, _, MAX_CONTAINERS>")]
    ephemeral_container_statuses: Option<Vec<LeanContainerStatus>>,
}

#[derive(Deserialize)]
struct LeanPod {
    #[serde(default)]
    metadata: LeanMeta,
    status: Option<LeanPodStatus>,
}

/// The pod as the collector sees it, and the heap it keeps beyond strings.
fn keep_pod(p: LeanPod) -> (Pod, usize) {
    let containers = |l: Option<Vec<LeanContainerStatus>>| {
        l.map(|l| l.into_iter().map(ContainerStatus::from).collect::<Vec<_>>())
    };
    let mut nested = p.metadata.nested();
    let status = p.status.map(|s| {
        let status = PodStatus {
            phase: s.phase,
            reason: s.reason,
            message: s.message,
            start_time: s.start_time,
            conditions: s.conditions,
            init_container_statuses: containers(s.init_container_statuses),
            container_statuses: containers(s.container_statuses),
            ephemeral_container_statuses: containers(s.ephemeral_container_statuses),
            ..PodStatus::default()
        };
        let n = |l: &Option<Vec<ContainerStatus>>| l.as_ref().map_or(0, Vec::len);
        nested += status.conditions.as_ref().map_or(0, Vec::len) * size_of::<PodCondition>()
            + (n(&status.init_container_statuses)
                + n(&status.container_statuses)
                + n(&status.ephemeral_container_statuses))
                * size_of::<ContainerStatus>();
        status
    });
    let pod = Pod {
        metadata: p.metadata.into(),
        spec: None,
        status,
    };
    (pod, nested)
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct LeanNodeStatus {
    #[serde(deserialize_with = "resources")]
    capacity: Option<BTreeMap<String, Quantity>>,
    #[serde(deserialize_with = "resources")]
    allocatable: Option<BTreeMap<String, Quantity>>,
    #[serde(deserialize_with = "at_most::<_, _, MAX_CONDITIONS>")]
    conditions: Option<Vec<NodeCondition>>,
    #[serde(rename = "nodeInfo")]
    node_info: Option<LeanNodeInfo>,
}

/// What the collector reads of a node's `status.nodeInfo`: what it runs.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct LeanNodeInfo {
    os_image: String,
    kernel_version: String,
    container_runtime_version: String,
}

/// The metadata the collector uses of a node: [`LeanMeta`]'s, and of its
/// labels only the GPU model ones (`api::GPU_MODEL_LABELS`).
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct LeanNodeMeta {
    name: Option<String>,
    uid: Option<String>,
    creation_timestamp: Option<Time>,
    deletion_timestamp: Option<Time>,
    #[serde(deserialize_with = "gpu_model_labels")]
    labels: Option<BTreeMap<String, String>>,
}

impl From<LeanNodeMeta> for ObjectMeta {
    fn from(m: LeanNodeMeta) -> Self {
        ObjectMeta {
            name: m.name,
            uid: m.uid,
            creation_timestamp: m.creation_timestamp,
            deletion_timestamp: m.deletion_timestamp,
            labels: m.labels,
            ..ObjectMeta::default()
        }
    }
}

#[derive(Deserialize)]
struct LeanNode {
    #[serde(default)]
    metadata: LeanNodeMeta,
    status: Option<LeanNodeStatus>,
}

/// Heap per entry of a resource map beyond its strings: the entry and the
/// tree's share of a node.
const RESOURCE_ENTRY: usize = size_of::<String>() + size_of::<Quantity>() + 16;

fn keep_node(n: LeanNode) -> (Node, usize) {
    let mut nested = n.metadata.labels.as_ref().map_or(0, BTreeMap::len) * LABEL_ENTRY;
    let status = n.status.map(|s| {
        let entries = |m: &Option<BTreeMap<String, Quantity>>| m.as_ref().map_or(0, BTreeMap::len);
        nested += (entries(&s.capacity) + entries(&s.allocatable)) * RESOURCE_ENTRY
            + s.conditions.as_ref().map_or(0, Vec::len) * size_of::<NodeCondition>();
        NodeStatus {
            capacity: s.capacity,
            allocatable: s.allocatable,
            conditions: s.conditions,
            node_info: s.node_info.map(|i| NodeSystemInfo {
                os_image: i.os_image,
                kernel_version: i.kernel_version,
                container_runtime_version: i.container_runtime_version,
                ..NodeSystemInfo::default()
            }),
            ..NodeStatus::default()
        }
    });
    let node = Node {
        metadata: n.metadata.into(),
        status,
        ..Node::default()
    };
    (node, nested)
}

/// What the collector reads of an inference service's status
/// (`fleet::inventory::inference_service_state`).
#[derive(Default, Deserialize)]
#[serde(default)]
struct LeanInferenceStatus {
    phase: Option<String>,
    message: Option<String>,
    #[serde(deserialize_with = "at_most::<_, _, MAX_CONDITIONS>")]
    conditions: Option<Vec<LeanCondition>>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct LeanCondition {
    #[serde(rename = "type")]
    type_: Option<String>,
    status: Option<String>,
    reason: Option<String>,
    message: Option<String>,
}

#[derive(Deserialize)]
struct LeanObject {
    #[serde(default)]
    metadata: LeanMeta,
    status: Option<LeanInferenceStatus>,
}

/// Heap of a JSON value holding one short field: the map entry and the value.
const JSON_FIELD: usize = size_of::<String>() + size_of::<serde_json::Value>() + 16;

fn keep_object(o: LeanObject, types: &Option<kube::core::TypeMeta>) -> (DynamicObject, usize) {
    let mut nested = o.metadata.nested();
    let data = match o.status {
        None => serde_json::json!({}),
        Some(s) => {
            let conditions: Vec<serde_json::Value> = s
                .conditions
                .unwrap_or_default()
                .into_iter()
                .map(|c| {
                    serde_json::json!({
                        "type": c.type_, "status": c.status,
                        "reason": c.reason, "message": c.message,
                    })
                })
                .collect();
            nested += (3 + conditions.len() * 5) * JSON_FIELD;
            serde_json::json!({
                "status": {"phase": s.phase, "message": s.message, "conditions": conditions}
            })
        }
    };
    let object = DynamicObject {
        types: types.clone(),
        metadata: o.metadata.into(),
        data,
    };
    (object, nested)
}

#[derive(Deserialize)]
struct VersionInfo {
    #[serde(rename = "gitVersion", default)]
    git_version: String,
}

/// The namespace whose UID is a cluster's identity: it exists in every
/// cluster and cannot be deleted, so its UID lives as long as the cluster
/// (`Cluster::cluster_id` reads the hub's the same way).
pub const IDENTITY_NAMESPACE: &str = "kube-system";

/// Whether the API server `client` reaches (with the credential it
/// carries) authenticates `token`: true when it answers a
/// SelfSubjectAccessReview sent with that token (any authenticated
/// identity may create one), false when it answers 401. The edge asks this
/// of its member with its hub token: only the hub itself (or a cluster
/// sharing its ServiceAccount signing key) accepts it
/// (docs/operations.md#an-edge-that-reads-the-wrong-cluster).
pub async fn accepts_token(member: &kube::Config, token: &str) -> Result<bool, MemberError> {
    let what = "an access review with the hub token";
    let mut config = member.clone();
    config.auth_info = kube::config::AuthInfo {
        token: Some(token.to_owned().into()),
        ..Default::default()
    };
    let client =
        kube::Client::try_from(config).map_err(|e| MemberError::Read { what, source: e })?;
    match MemberReader::new(&client)
        .can_i(Permission {
            verb: "get",
            group: "",
            resource: "namespaces",
            subresource: "",
        })
        .await
    {
        Ok(_) => Ok(true),
        Err(MemberError::Read {
            source: kube::Error::Api(s),
            ..
        }) if s.code == 401 => Ok(false),
        Err(e) => Err(e),
    }
}

/// Reads a member cluster through `client`; with a budget (the prober),
/// charges what it keeps to it.
#[derive(Clone, Copy)]
pub struct MemberReader<'a> {
    client: &'a kube::Client,
    budget: Option<&'a ReadBudget>,
}

/// Reads everything one edge report needs from the member cluster.
pub async fn read_member(client: &kube::Client) -> Result<MemberObjects, MemberError> {
    MemberReader::new(client).read().await
}

impl<'a> MemberReader<'a> {
    /// A reader without a budget (the edge, on its own cluster).
    pub fn new(client: &'a kube::Client) -> Self {
        Self {
            client,
            budget: None,
        }
    }

    /// A reader that charges what it keeps to `budget`, the one the
    /// client's body limit charges every answer to.
    pub fn with_budget(client: &'a kube::Client, budget: &'a ReadBudget) -> Self {
        Self {
            client,
            budget: Some(budget),
        }
    }

    /// Sends `req` and returns the body of a successful answer.
    async fn send(
        &self,
        what: &'static str,
        req: Result<http::Request<Vec<u8>>, kube::core::request::Error>,
    ) -> Result<Vec<u8>, MemberError> {
        let req = req.map_err(|e| MemberError::Read {
            what,
            source: kube::Error::BuildRequest(e),
        })?;
        let res = self
            .client
            .send(req.map(kube::client::Body::from))
            .await
            .map_err(|e| MemberError::from_kube(what, e))?;
        let code = res.status();
        let body = collect(res.into_body())
            .await
            .map_err(|e| MemberError::from_kube(what, e))?;
        if !code.is_success() {
            return Err(answer_error(what, code.as_u16(), &body));
        }
        Ok(body)
    }

    async fn get<T: DeserializeOwned>(
        &self,
        what: &'static str,
        path: &str,
    ) -> Result<T, MemberError> {
        let req = http::Request::get(path)
            .header(http::header::ACCEPT, "application/json")
            .body(Vec::new())
            .map_err(kube::core::request::Error::BuildRequest);
        let body = self.send(what, req).await?;
        serde_json::from_slice(&body).map_err(|_| MemberError::NotKubernetes { what })
    }

    async fn post<T: DeserializeOwned>(
        &self,
        what: &'static str,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<T, MemberError> {
        let req = http::Request::post(path)
            .header(http::header::ACCEPT, "application/json")
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(body.to_string().into_bytes())
            .map_err(kube::core::request::Error::BuildRequest);
        let body = self.send(what, req).await?;
        serde_json::from_slice(&body).map_err(|_| MemberError::NotKubernetes { what })
    }

    /// Every object of a list, `page` at a time, each turned by `keep`
    /// into what is kept and the heap that takes beyond its strings. What
    /// the kept objects take is charged to the budget before it is
    /// allocated.
    async fn list<L: DeserializeOwned, T>(
        &self,
        what: &'static str,
        path: &str,
        page: u32,
        metadata_only: bool,
        mut keep: impl FnMut(L) -> (T, usize),
    ) -> Result<Vec<T>, MemberError> {
        let request = kube::core::Request::new(path);
        let mut out: Vec<T> = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut lp = ListParams::default().limit(page);
            if let Some(t) = &token {
                lp = lp.continue_token(t);
            }
            let req = if metadata_only {
                request.list_metadata(&lp)
            } else {
                request.list(&lp)
            };
            let body = self.send(what, req).await?;
            let seed = PageSeed::<L> {
                max: page as usize,
                item: std::marker::PhantomData,
            };
            let mut de = serde_json::Deserializer::from_slice(&body);
            let decoded = serde::de::DeserializeSeed::deserialize(seed, &mut de)
                .and_then(|p| de.end().map(|()| p))
                .map_err(|_| MemberError::NotKubernetes { what })?;
            drop(body);
            let needed = out.len() + decoded.items.len();
            if needed > out.capacity() {
                let grown = needed.max(out.capacity() * 2);
                self.charge(what, (grown - out.capacity()) * size_of::<T>())?;
                out.reserve_exact(grown - out.len());
            }
            for item in decoded.items {
                let (kept, nested) = keep(item);
                self.charge(what, nested)?;
                out.push(kept);
            }
            match decoded.continue_.filter(|c| !c.is_empty()) {
                None => break,
                // A server that hands back the token it was given would
                // page forever.
                Some(next) if token.as_deref() == Some(next.as_str()) => {
                    return Err(MemberError::NotKubernetes { what });
                }
                Some(next) => token = Some(next),
            }
        }
        Ok(out)
    }

    fn charge(&self, what: &'static str, bytes: usize) -> Result<(), MemberError> {
        match self.budget {
            Some(b) => b
                .charge(bytes as u64)
                .map_err(|source| MemberError::TooLarge { what, source }),
            None => Ok(()),
        }
    }

    /// The version of `kind`'s group the member prefers, when it serves the kind.
    async fn discover(
        &self,
        groups: &APIGroupList,
        kind: InferenceKind,
    ) -> Result<Option<ApiResource>, MemberError> {
        let Some(group) = groups.groups.iter().find(|g| g.name == kind.group()) else {
            return Ok(None);
        };
        let Some(version) = group
            .preferred_version
            .as_ref()
            .or_else(|| group.versions.first())
            .map(|v| v.group_version.clone())
        else {
            return Ok(None);
        };
        let resources: APIResourceList =
            match self.get("API resources", &format!("/apis/{version}")).await {
                Ok(r) => r,
                Err(e) if e.is_not_found() => return Ok(None),
                Err(e) => return Err(e),
            };
        let served = resources
            .resources
            .iter()
            .any(|r| r.name == kind.plural() && r.kind == kind.kind());
        if !served {
            return Ok(None);
        }
        let v = version.rsplit('/').next().unwrap_or_default();
        let gvk = GroupVersionKind::gvk(kind.group(), v, kind.kind());
        Ok(Some(ApiResource::from_gvk_with_plural(&gvk, kind.plural())))
    }

    /// Reads everything one report needs from the member cluster. Boxed,
    /// so that one copy of the reading's code serves the hub's prober and
    /// the edge, which keeps a reading across reports as a boxed future of
    /// its own (`operator::edge::Reading`): without this box the compiler
    /// built the reading into each, and fleet-operator grew by ~240 KB.
    pub fn read(&self) -> futures::future::BoxFuture<'_, Result<MemberObjects, MemberError>> {
        Box::pin(self.read_all())
    }

    /// [`MemberReader::read`], unboxed.
    async fn read_all(&self) -> Result<MemberObjects, MemberError> {
        let version: VersionInfo = self.get("server version", "/version").await?;
        let nodes = self
            .list(
                "nodes",
                &Node::url_path(&(), None),
                NODE_PAGE,
                false,
                keep_node,
            )
            .await?;
        // The namespaces are listed anyway (to count them): the member's
        // identity comes with them, at no extra request or permission.
        let mut member_uid = None;
        let namespace_count = self
            .list(
                "namespaces",
                &Namespace::url_path(&(), None),
                METADATA_PAGE,
                true,
                |n: MetadataOnly| {
                    if n.metadata.name.as_deref() == Some(IDENTITY_NAMESPACE) {
                        member_uid = n.metadata.uid;
                    }
                    ((), 0)
                },
            )
            .await?
            .len();
        let pods = self
            .list("pods", &Pod::url_path(&(), None), POD_PAGE, false, keep_pod)
            .await?;
        // A member without apps/v1 still reports; pods then resolve to themselves.
        let replica_sets = match self
            .list(
                "replicasets",
                &ReplicaSet::url_path(&(), None),
                METADATA_PAGE,
                true,
                |r: MetadataOnly| {
                    let nested = r.metadata.nested();
                    let rs = ReplicaSet {
                        metadata: r.metadata.into(),
                        ..ReplicaSet::default()
                    };
                    (rs, nested)
                },
            )
            .await
        {
            Ok(l) => l,
            Err(e) if e.is_not_found() => Vec::new(),
            Err(e) => return Err(e),
        };
        let groups: APIGroupList = self.get("API groups", "/apis").await?;
        let mut inference = Vec::new();
        for kind in InferenceKind::ALL {
            let Some(ar) = self.discover(&groups, kind).await? else {
                continue;
            };
            let path = DynamicObject::url_path(&ar, None);
            let types = Some(kube::core::TypeMeta {
                api_version: ar.api_version.clone(),
                kind: ar.kind.clone(),
            });
            let listed = if kind.counted_only() {
                self.list(
                    "inference objects",
                    &path,
                    METADATA_PAGE,
                    true,
                    |o: MetadataOnly| {
                        let object = DynamicObject {
                            types: types.clone(),
                            metadata: o.metadata.into(),
                            data: serde_json::json!({}),
                        };
                        (object, 0)
                    },
                )
                .await
            } else {
                self.list(
                    "inference objects",
                    &path,
                    METADATA_PAGE,
                    false,
                    |o: LeanObject| keep_object(o, &types),
                )
                .await
            };
            match listed {
                Ok(items) => inference.push((kind, items)),
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(MemberObjects {
            kubernetes_version: version.git_version,
            nodes,
            namespace_count,
            member_uid,
            pods,
            replica_sets,
            inference,
        })
    }

    /// Whether the reader's identity may do `access` in every namespace
    /// (a SelfSubjectAccessReview, which any authenticated identity may
    /// create).
    pub async fn can_i(&self, access: Permission) -> Result<bool, MemberError> {
        #[derive(Deserialize)]
        struct Review {
            status: Option<ReviewStatus>,
        }
        #[derive(Deserialize)]
        struct ReviewStatus {
            #[serde(default)]
            allowed: bool,
        }
        let mut attributes = serde_json::json!({
            "verb": access.verb,
            "group": access.group,
            "resource": access.resource,
        });
        if !access.subresource.is_empty() {
            attributes["subresource"] = access.subresource.into();
        }
        let review = serde_json::json!({
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": { "resourceAttributes": attributes },
        });
        let answer: Review = self
            .post(
                "access reviews",
                "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                &review,
            )
            .await?;
        Ok(answer.status.is_some_and(|s| s.allowed))
    }

    /// A new token for ServiceAccount `fleet-system/SERVICE_ACCOUNT`, valid
    /// for `seconds` (the member may cap it), requested with the reader's
    /// own credential (a Pull identity may do this for itself only).
    pub async fn request_token(
        &self,
        service_account: &str,
        seconds: i64,
    ) -> Result<super::edge_token::MintedToken, MemberError> {
        #[derive(Deserialize)]
        struct Answer {
            status: Option<AnswerStatus>,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct AnswerStatus {
            #[serde(default)]
            token: String,
            expiration_timestamp: Option<Timestamp>,
        }
        let what = "a token for the Pull identity";
        let request = serde_json::json!({
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": { "expirationSeconds": seconds },
        });
        let answer: Answer = self
            .post(
                what,
                &format!(
                    "/api/v1/namespaces/{FLEET_NAMESPACE}/serviceaccounts/{service_account}/token"
                ),
                &request,
            )
            .await?;
        match answer.status {
            Some(AnswerStatus {
                token,
                expiration_timestamp: Some(expires_at),
            }) if !token.is_empty() => Ok(super::edge_token::MintedToken { token, expires_at }),
            _ => Err(MemberError::NotKubernetes { what }),
        }
    }
}

/// The whole body of an answer (the member client's body limit, when it
/// has one, cuts it).
async fn collect(mut body: kube::client::Body) -> Result<Vec<u8>, kube::Error> {
    use http_body::Body as _;
    // Reserve what the answer declares, within reason: a declared size is
    // only a hint until the bytes arrive.
    let hint = body.size_hint().exact().unwrap_or(0).min(1 << 20);
    let mut out = Vec::with_capacity(hint as usize);
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
