//! Site status I/O for the operator: read a site, send the edge's merge
//! patch, replace the hub-owned part with the resourceVersion, and check
//! that the fleet CRDs are served.

use std::borrow::Cow;
use std::collections::BTreeMap;

use futures::{Stream, TryStreamExt as _};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use serde_json::Value;

use crate::api::{API_VERSION, FederatedCluster, FederatedClusterSpec, FederatedClusterStatus};

/// The cluster-scoped FederatedCluster API.
pub fn sites(client: kube::Client) -> Api<FederatedCluster> {
    Api::all(client)
}

/// Reads one site (the edge identity may read only its own).
pub async fn get_site(
    api: &Api<FederatedCluster>,
    name: &str,
) -> Result<FederatedCluster, kube::Error> {
    api.get(name).await
}

/// Sends a JSON merge patch (`{"status": {...}}`) to the site's `/status`.
pub async fn patch_site_status(
    api: &Api<FederatedCluster>,
    name: &str,
    patch: &Value,
) -> Result<FederatedCluster, kube::Error> {
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
}

/// Replaces the site's `/status` with `site.status`, guarded by
/// `site.metadata.resourceVersion`: if anyone wrote since it was read the
/// API server answers 409 and nothing is written.
pub async fn replace_site_status(
    api: &Api<FederatedCluster>,
    site: &FederatedCluster,
) -> Result<FederatedCluster, kube::Error> {
    let name = site.metadata.name.clone().unwrap_or_default();
    api.replace_status(&name, &PostParams::default(), site)
        .await
}

/// Watches every site (kube-runtime's watcher: list, watch, resume,
/// relist) and decodes each one without its `metadata.managedFields`: they
/// are skipped in the JSON, never built. The hub reads none of them, a
/// status replace without them keeps the stored ones (both API servers take
/// them from the stored object for `/status`), and decoded they were the
/// larger part of the work per watch event: each entry's `fieldsV1` is a
/// tree of JSON maps (docs/benchmarks-operator.md).
pub fn watch_sites_unmanaged(
    api: &Api<FederatedCluster>,
    config: watcher::Config,
) -> impl Stream<Item = Result<watcher::Event<FederatedCluster>, watcher::Error>> + Send + 'static {
    let unmanaged: Api<UnmanagedSite> = Api::all(api.clone().into_client());
    watcher(unmanaged, config).map_ok(|event| match event {
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitApply(s) => watcher::Event::InitApply(s.0),
        watcher::Event::InitDone => watcher::Event::InitDone,
        watcher::Event::Apply(s) => watcher::Event::Apply(s.0),
        watcher::Event::Delete(s) => watcher::Event::Delete(s.0),
    })
}

/// `events`, read in bursts: whenever it has nothing ready even after the
/// other tasks had a turn, it is left alone for `pause` before being
/// waited on again, so the events that arrive meanwhile wait in the
/// socket and are read, decrypted and handed on together (one wake-up and
/// a few reads for a burst instead of one each). Delays an event by at
/// most `pause`.
pub fn read_in_bursts<S>(
    events: S,
    pause: std::time::Duration,
) -> impl Stream<Item = S::Item> + Send + 'static
where
    S: Stream + Send + 'static,
    S::Item: Send,
{
    use futures::StreamExt as _;
    futures::stream::unfold(Box::pin(events), move |mut events| async move {
        let next = match futures::poll!(events.next()) {
            std::task::Poll::Ready(next) => next,
            // Nothing decoded yet may only mean that the connection's task
            // has not read the socket since: it gets one turn first, and
            // the pause starts only once the socket itself is drained.
            std::task::Poll::Pending => {
                tokio::task::yield_now().await;
                match futures::poll!(events.next()) {
                    std::task::Poll::Ready(next) => next,
                    std::task::Poll::Pending => {
                        tokio::time::sleep(pause).await;
                        events.next().await
                    }
                }
            }
        };
        next.map(|event| (event, events))
    })
}

/// A FederatedCluster decoded without `metadata.managedFields`.
#[derive(Clone, Debug)]
struct UnmanagedSite(FederatedCluster);

impl<'de> serde::Deserialize<'de> for UnmanagedSite {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// The wire form; unknown keys (`managedFields`, `apiVersion`,
        /// `kind`) are skipped by serde without being decoded.
        #[derive(serde::Deserialize)]
        struct Wire {
            #[serde(default)]
            metadata: Meta,
            spec: FederatedClusterSpec,
            #[serde(default)]
            status: Option<FederatedClusterStatus>,
        }
        /// [`ObjectMeta`] but `managedFields`.
        #[derive(serde::Deserialize, Default)]
        #[serde(default, rename_all = "camelCase")]
        struct Meta {
            annotations: Option<BTreeMap<String, String>>,
            creation_timestamp: Option<Time>,
            deletion_grace_period_seconds: Option<i64>,
            deletion_timestamp: Option<Time>,
            finalizers: Option<Vec<String>>,
            generate_name: Option<String>,
            generation: Option<i64>,
            labels: Option<BTreeMap<String, String>>,
            name: Option<String>,
            namespace: Option<String>,
            owner_references: Option<Vec<OwnerReference>>,
            resource_version: Option<String>,
            self_link: Option<String>,
            uid: Option<String>,
        }
        let Wire {
            metadata: m,
            spec,
            status,
        } = Wire::deserialize(d)?;
        let mut site = FederatedCluster::new("", spec);
        site.metadata = ObjectMeta {
            annotations: m.annotations,
            creation_timestamp: m.creation_timestamp,
            deletion_grace_period_seconds: m.deletion_grace_period_seconds,
            deletion_timestamp: m.deletion_timestamp,
            finalizers: m.finalizers,
            generate_name: m.generate_name,
            generation: m.generation,
            labels: m.labels,
            managed_fields: None,
            name: m.name,
            namespace: m.namespace,
            owner_references: m.owner_references,
            resource_version: m.resource_version,
            self_link: m.self_link,
            uid: m.uid,
        };
        site.status = status;
        Ok(UnmanagedSite(site))
    }
}

impl kube::Resource for UnmanagedSite {
    type DynamicType = ();
    type Scope = <FederatedCluster as kube::Resource>::Scope;

    fn kind(dt: &()) -> Cow<'_, str> {
        FederatedCluster::kind(dt)
    }
    fn group(dt: &()) -> Cow<'_, str> {
        FederatedCluster::group(dt)
    }
    fn version(dt: &()) -> Cow<'_, str> {
        FederatedCluster::version(dt)
    }
    fn plural(dt: &()) -> Cow<'_, str> {
        FederatedCluster::plural(dt)
    }
    fn meta(&self) -> &ObjectMeta {
        &self.0.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.0.metadata
    }
}

/// Whether the API server serves `federatedclusters` in the fleet group
/// (discovery; any authenticated identity may ask).
pub async fn crds_installed(client: &kube::Client) -> Result<bool, kube::Error> {
    match client.list_api_group_resources(API_VERSION).await {
        Ok(list) => Ok(list.resources.iter().any(|r| r.name == "federatedclusters")),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt as _;
    use std::time::Duration;

    #[tokio::test(flavor = "current_thread")]
    async fn a_drained_watch_is_left_alone_for_the_pause() {
        let (tx, rx) = futures::channel::mpsc::unbounded::<u32>();
        let mut events = std::pin::pin!(read_in_bursts(rx, Duration::from_secs(3600)));
        // What is ready passes straight through.
        tx.unbounded_send(1).unwrap();
        tx.unbounded_send(2).unwrap();
        assert_eq!(events.next().await, Some(1));
        assert_eq!(events.next().await, Some(2));
        // An event that comes in while the other tasks have their turn
        // (as the connection's task reads the socket) starts no pause.
        let sender = tx.clone();
        tokio::spawn(async move { sender.unbounded_send(3).unwrap() });
        let next = tokio::time::timeout(Duration::from_secs(10), events.next()).await;
        assert_eq!(next.unwrap(), Some(3));
        // Drained: an event that comes in later waits out the pause.
        let sender = tx.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            sender.unbounded_send(4).unwrap();
        });
        let next = tokio::time::timeout(Duration::from_secs(1), events.next()).await;
        assert!(next.is_err(), "read before the pause ended: {next:?}");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn an_event_after_the_pause_is_delivered_and_the_end_passes_through() {
        let (tx, rx) = futures::channel::mpsc::unbounded::<u32>();
        let mut events = std::pin::pin!(read_in_bursts(rx, Duration::from_millis(50)));
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            tx.unbounded_send(7).unwrap();
            tx.unbounded_send(8).unwrap();
        });
        assert_eq!(events.next().await, Some(7));
        assert_eq!(events.next().await, Some(8));
        assert_eq!(
            events.next().await,
            None,
            "the sender is gone: the stream ends"
        );
    }

    #[test]
    fn a_watched_site_keeps_its_metadata_but_managed_fields() {
        let json = serde_json::json!({
            "apiVersion": "federation.kubectl-fleet.dev/v1alpha1",
            "kind": "FederatedCluster",
            "metadata": {
                "name": "site-a",
                "uid": "u-1",
                "resourceVersion": "42",
                "generation": 3,
                "labels": {"tier": "gold"},
                "annotations": {"a": "b"},
                "creationTimestamp": "2026-12-03T10:00:00Z",
                "managedFields": [{"manager": "edge", "operation": "Update",
                    "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:lastHeartbeatTime": {}}}}]
            },
            "spec": {"heartbeatIntervalSeconds": 30},
            "status": {"lastHeartbeatTime": "2026-12-03T10:00:30Z", "nodeCount": 2}
        });
        let full: FederatedCluster = serde_json::from_value(json.clone()).unwrap();
        let UnmanagedSite(lean) = serde_json::from_value(json).unwrap();
        assert!(full.metadata.managed_fields.is_some());
        assert_eq!(lean.metadata.managed_fields, None);
        let mut expected = full;
        expected.metadata.managed_fields = None;
        assert_eq!(lean, expected);
    }
}
