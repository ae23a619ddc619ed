//! Reads from a member cluster for the edge operator (and the hub prober):
//! version, nodes, namespaces, pods, ReplicaSets (to resolve pod owners) and
//! inference objects found by discovery.
//!
//! List calls ask for everything at once; a member cluster's API server is
//! the only one that sees them, and one list per kind per heartbeat is what a
//! kubelet-sized cluster serves all day.

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kube::core::GroupVersionKind;

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
}

/// Everything the edge reads from its member cluster in one tick.
#[derive(Clone, Debug, Default)]
pub struct MemberObjects {
    /// `gitVersion` of the member API server.
    pub kubernetes_version: String,
    /// All nodes.
    pub nodes: Vec<Node>,
    /// Number of namespaces.
    pub namespace_count: usize,
    /// All pods.
    pub pods: Vec<Pod>,
    /// All ReplicaSets, to resolve a pod's Deployment.
    pub replica_sets: Vec<ReplicaSet>,
    /// Inference objects of every kind the member serves (absent kinds are
    /// simply not listed).
    pub inference: Vec<(InferenceKind, Vec<DynamicObject>)>,
}

/// A member read that failed.
#[derive(Debug, thiserror::Error)]
pub enum MemberError {
    /// A call to the member API server failed.
    #[error("reading {what} from the member cluster")]
    Read {
        what: &'static str,
        #[source]
        source: kube::Error,
    },
}

fn read(what: &'static str) -> impl FnOnce(kube::Error) -> MemberError {
    move |source| MemberError::Read { what, source }
}

fn is_not_found(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.code == 404)
}

/// The version of `kind`'s group the member prefers, when it serves the kind.
async fn discover(
    client: &kube::Client,
    groups: &k8s_openapi::apimachinery::pkg::apis::meta::v1::APIGroupList,
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
    let resources = match client.list_api_group_resources(&version).await {
        Ok(r) => r,
        Err(e) if is_not_found(&e) => return Ok(None),
        Err(e) => return Err(read("API resources")(e)),
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

/// Reads everything one edge report needs from the member cluster.
pub async fn read_member(client: &kube::Client) -> Result<MemberObjects, MemberError> {
    let version = client
        .apiserver_version()
        .await
        .map_err(read("server version"))?;
    let lp = ListParams::default();
    let nodes = Api::<Node>::all(client.clone())
        .list(&lp)
        .await
        .map_err(read("nodes"))?
        .items;
    let namespace_count = Api::<Namespace>::all(client.clone())
        .list_metadata(&lp)
        .await
        .map_err(read("namespaces"))?
        .items
        .len();
    let pods = Api::<Pod>::all(client.clone())
        .list(&lp)
        .await
        .map_err(read("pods"))?
        .items;
    // A member without apps/v1 still reports; pods then resolve to themselves.
    let replica_sets = match Api::<ReplicaSet>::all(client.clone()).list(&lp).await {
        Ok(l) => l.items,
        Err(e) if is_not_found(&e) => Vec::new(),
        Err(e) => return Err(read("replicasets")(e)),
    };
    let groups = client.list_api_groups().await.map_err(read("API groups"))?;
    let mut inference = Vec::new();
    for kind in InferenceKind::ALL {
        let Some(ar) = discover(client, &groups, kind).await? else {
            continue;
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
        match api.list(&lp).await {
            Ok(l) => inference.push((kind, l.items)),
            Err(e) if is_not_found(&e) => {}
            Err(e) => return Err(read("inference objects")(e)),
        }
    }
    Ok(MemberObjects {
        kubernetes_version: version.git_version,
        nodes,
        namespace_count,
        pods,
        replica_sets,
        inference,
    })
}
