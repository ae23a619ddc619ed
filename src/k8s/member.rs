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
//!   reaches the reader's memory. A node keeps capacity, allocatable and
//!   conditions. ReplicaSets, namespaces and LLMKube models are listed as
//!   metadata only (`PartialObjectMetadataList`).
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
use k8s_openapi::api::core::v1::{Namespace, Node, NodeCondition, NodeStatus, Pod, PodStatus};
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

/// A page of a list, decoded leanly.
#[derive(Deserialize)]
struct Page<T> {
    #[serde(default)]
    metadata: PageMeta,
    #[serde(default = "Option::default")]
    items: Option<Vec<T>>,
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
    owner_references: Option<Vec<OwnerReference>>,
    creation_timestamp: Option<Time>,
    deletion_timestamp: Option<Time>,
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

#[derive(Deserialize)]
struct LeanPod {
    #[serde(default)]
    metadata: LeanMeta,
    status: Option<PodStatus>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct LeanNodeStatus {
    capacity: Option<BTreeMap<String, Quantity>>,
    allocatable: Option<BTreeMap<String, Quantity>>,
    conditions: Option<Vec<NodeCondition>>,
}

#[derive(Deserialize)]
struct LeanNode {
    #[serde(default)]
    metadata: LeanMeta,
    status: Option<LeanNodeStatus>,
}

#[derive(Deserialize)]
struct LeanObject {
    #[serde(default)]
    metadata: LeanMeta,
    status: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct VersionInfo {
    #[serde(rename = "gitVersion", default)]
    git_version: String,
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

    /// Sends `req` and decodes its answer as `T`.
    async fn send<T: DeserializeOwned>(
        &self,
        what: &'static str,
        req: Result<http::Request<Vec<u8>>, kube::core::request::Error>,
    ) -> Result<T, MemberError> {
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
        serde_json::from_slice(&body).map_err(|_| MemberError::NotKubernetes { what })
    }

    async fn get<T: DeserializeOwned>(&self, what: &'static str, path: &str) -> Result<T, MemberError> {
        let req = http::Request::get(path)
            .header(http::header::ACCEPT, "application/json")
            .body(Vec::new())
            .map_err(kube::core::request::Error::BuildRequest);
        self.send(what, req).await
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
        self.send(what, req).await
    }

    /// Every object of a list, page by page, each turned into what is kept
    /// by `keep`. The memory the kept objects take is charged to the
    /// budget as the list grows.
    async fn list<L: DeserializeOwned, T>(
        &self,
        what: &'static str,
        path: &str,
        page: u32,
        metadata_only: bool,
        mut keep: impl FnMut(L) -> T,
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
            let page: Page<L> = self.send(what, req).await?;
            let items = page.items.unwrap_or_default();
            let before = out.capacity();
            out.extend(items.into_iter().map(&mut keep));
            self.charge(what, (out.capacity() - before) * std::mem::size_of::<T>())?;
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                None => break,
                // A server that hands back the token it was given would
                // page forever.
                Some(next) if token.as_deref() == Some(next.as_str()) => {
                    return Err(MemberError::NotKubernetes { what });
                }
                Some(next) => token = Some(next),
            }
        }
        out.shrink_to_fit();
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

    /// Reads everything one report needs from the member cluster.
    pub async fn read(&self) -> Result<MemberObjects, MemberError> {
        let version: VersionInfo = self.get("server version", "/version").await?;
        let nodes = self
            .list("nodes", &Node::url_path(&(), None), NODE_PAGE, false, |n: LeanNode| Node {
                metadata: n.metadata.into(),
                status: n.status.map(|s| NodeStatus {
                    capacity: s.capacity,
                    allocatable: s.allocatable,
                    conditions: s.conditions,
                    ..NodeStatus::default()
                }),
                ..Node::default()
            })
            .await?;
        let namespace_count = self
            .list(
                "namespaces",
                &Namespace::url_path(&(), None),
                METADATA_PAGE,
                true,
                |_: MetadataOnly| (),
            )
            .await?
            .len();
        let pods = self
            .list("pods", &Pod::url_path(&(), None), POD_PAGE, false, |p: LeanPod| Pod {
                metadata: p.metadata.into(),
                spec: None,
                status: p.status,
            })
            .await?;
        // A member without apps/v1 still reports; pods then resolve to themselves.
        let replica_sets = match self
            .list(
                "replicasets",
                &ReplicaSet::url_path(&(), None),
                METADATA_PAGE,
                true,
                |r: MetadataOnly| ReplicaSet {
                    metadata: r.metadata.into(),
                    ..ReplicaSet::default()
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
                self.list("inference objects", &path, METADATA_PAGE, true, |o: MetadataOnly| {
                    DynamicObject {
                        types: types.clone(),
                        metadata: o.metadata.into(),
                        data: serde_json::json!({}),
                    }
                })
                .await
            } else {
                self.list("inference objects", &path, METADATA_PAGE, false, |o: LeanObject| {
                    DynamicObject {
                        types: types.clone(),
                        metadata: o.metadata.into(),
                        data: match o.status {
                            Some(status) => serde_json::json!({ "status": status }),
                            None => serde_json::json!({}),
                        },
                    }
                })
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
mod tests {
    use super::*;

    #[test]
    fn a_pod_is_decoded_without_its_spec() {
        let pod = serde_json::json!({
            "metadata": {"name": "web-1", "namespace": "shop", "labels": {"a": "b"},
                "annotations": {"big": "x"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d", "uid": "u", "controller": true}]},
            "spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "PASSWORD", "value": "hunter2"}]}]},
            "status": {"phase": "Running", "containerStatuses": [{
                "name": "c", "image": "i", "imageID": "", "ready": false, "restartCount": 5,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}
        });
        let lean: LeanPod = serde_json::from_value(pod).unwrap();
        let pod = Pod {
            metadata: lean.metadata.into(),
            spec: None,
            status: lean.status,
        };
        assert!(pod.spec.is_none());
        assert!(!format!("{pod:?}").contains("hunter2"), "no env in memory");
        assert_eq!(pod.metadata.labels, None);
        assert_eq!(pod.metadata.annotations, None);
        assert_eq!(pod.metadata.owner_references.unwrap()[0].name, "web-7d");
        assert_eq!(
            pod.status.unwrap().container_statuses.unwrap()[0].restart_count,
            5
        );
    }

    #[test]
    fn answers_that_are_not_the_kubernetes_api_are_told_apart() {
        let html = b"<html><body>metadata service</body></html>";
        assert!(matches!(
            answer_error("nodes", 404, html),
            MemberError::NotKubernetes { what: "nodes" }
        ));
        assert!(matches!(
            answer_error("nodes", 500, b"{\"error\": \"x\"}"),
            MemberError::NotKubernetes { .. }
        ));
        let status = br#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}"#;
        let e = answer_error("API resources", 404, status);
        assert!(e.is_not_found(), "{e:?}");
        // A credential problem stays one, whatever the body says.
        for code in [401, 403] {
            match answer_error("pods", code, html) {
                MemberError::Read {
                    source: kube::Error::Api(s),
                    ..
                } => assert_eq!(s.code, code),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_page_without_items_or_metadata_is_empty() {
        let page: Page<MetadataOnly> = serde_json::from_str(r#"{"items": null}"#).unwrap();
        assert!(page.items.is_none() && page.metadata.continue_.is_none());
        let page: Page<MetadataOnly> =
            serde_json::from_str(r#"{"metadata": {"continue": "t"}, "items": [{}]}"#).unwrap();
        assert_eq!(page.items.unwrap().len(), 1);
        assert_eq!(page.metadata.continue_.as_deref(), Some("t"));
    }
}
