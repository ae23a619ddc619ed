//! A site as every reader decodes it off the wire: the hub's watch and its
//! re-reads, the answers to the hub's and the edge's status writes, the
//! edge's read of its own site, the CLI's pages, `status --watch` and
//! `get`. One decoder ([`decode_site`]), two views of the metadata:
//! [`UnmanagedSite`] keeps all of it but `managedFields`, [`LeanSite`] only
//! the name (all the views read) and the resourceVersion (a watch resumes
//! from it).
//!
//! A site never fails to decode because of what a site (or an admin past
//! the CRD) wrote: the status is decoded leniently by its own type
//! (`api::lenient`), and the spec here the same way — typed once from its
//! raw text, key by key only when that fails, what could not be read
//! recorded beside the status (`FederatedClusterStatus::unreadable`, paths
//! under `spec.`). So a list or a watch event of many sites is decoded item
//! by item in effect: one bad site costs its own unreadable fields, never
//! the others (docs/architecture.md#reading-what-a-site-wrote).

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::api::{
    FederatedCluster, FederatedClusterSpec, FederatedClusterStatus, Strict, Unreadable,
};

/// How much of a site's metadata a reader keeps.
pub(crate) trait KeptMeta: for<'de> Deserialize<'de> + Default {
    /// The metadata kept, as Kubernetes' type.
    fn into_meta(self) -> ObjectMeta;
}

/// Decodes one site: metadata as `M` keeps it, the spec typed (else key by
/// key, defaults for what does not read), the status leniently. Fails only
/// when the value is not an object or its metadata does not decode, which
/// no API server serves.
pub(crate) fn decode_site<'de, D: Deserializer<'de>, M: KeptMeta>(
    d: D,
) -> Result<FederatedCluster, D::Error> {
    /// The wire form; unknown keys (`apiVersion`, `kind`, and whatever `M`
    /// does not keep) are skipped by serde without being decoded.
    #[derive(Deserialize)]
    #[serde(bound = "M: KeptMeta")]
    struct Wire<M> {
        #[serde(default)]
        metadata: M,
        #[serde(default)]
        spec: Option<Box<RawValue>>,
        #[serde(default)]
        status: Option<FederatedClusterStatus>,
    }
    let Wire {
        metadata,
        spec,
        mut status,
    } = Wire::<M>::deserialize(d)?;
    let spec = match spec {
        None => FederatedClusterSpec::default(),
        Some(raw) => match serde_json::from_str::<FederatedClusterSpec>(raw.get()) {
            Ok(spec) => spec,
            Err(_) => lenient_spec(raw.get(), &mut status),
        },
    };
    let mut site = FederatedCluster::new("", spec);
    site.metadata = metadata.into_meta();
    site.status = status;
    Ok(site)
}

/// A site decoded strictly: its spec and status typed straight from the
/// text, in one pass, failing on the first value they cannot read. The
/// fast path of a page of sites ([`decode_site_page`]); equal to
/// [`decode_site`]'s result whenever it succeeds (which decodes the same
/// types, from the same text, only from a copy of it).
struct StrictSite<M>(FederatedCluster, std::marker::PhantomData<M>);

impl<'de, M: KeptMeta> Deserialize<'de> for StrictSite<M> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// A value read by its type's strict decode ([`Strict`]).
        struct Typed<T>(T);
        impl<'de, T: Strict> Deserialize<'de> for Typed<T> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                T::strict(d).map(Typed)
            }
        }
        #[derive(Deserialize)]
        #[serde(bound = "M: KeptMeta")]
        struct Wire<M> {
            #[serde(default)]
            metadata: M,
            #[serde(default)]
            spec: Option<Typed<FederatedClusterSpec>>,
            #[serde(default)]
            status: Option<Typed<FederatedClusterStatus>>,
        }
        let Wire {
            metadata,
            spec,
            status,
        } = Wire::<M>::deserialize(d)?;
        let mut site = FederatedCluster::new("", spec.map(|s| s.0).unwrap_or_default());
        site.metadata = metadata.into_meta();
        site.status = status.map(|s| s.0);
        Ok(StrictSite(site, std::marker::PhantomData))
    }
}

/// A list answer's page of sites (`metadata` as `L`, `items` decoded with
/// their metadata as `M` keeps it), decoded as [`decode_site`] decodes
/// each site, in one pass over the text when every site reads typed (the
/// rule, nearly always): only when one does not is the page decoded again
/// site by site, so one bad site still costs only its own unreadable
/// fields. The second pass over each site's spec and status that
/// [`decode_site`] makes to keep its text for that case (a third of
/// `kubectl fleet status -o json`'s decoding) is paid only by the rare
/// page that needs it.
pub(crate) fn decode_site_page<L, M>(
    body: &str,
) -> Result<(L, Vec<FederatedCluster>), serde_json::Error>
where
    L: for<'de> Deserialize<'de> + Default,
    M: KeptMeta,
{
    #[derive(Deserialize)]
    #[serde(bound = "L: Deserialize<'de> + Default, S: Deserialize<'de>")]
    struct Page<L, S> {
        #[serde(default)]
        metadata: L,
        #[serde(default = "Vec::new")]
        items: Vec<S>,
    }
    /// One site as [`decode_site`] decodes it.
    struct Lenient<M>(FederatedCluster, std::marker::PhantomData<M>);
    impl<'de, M: KeptMeta> Deserialize<'de> for Lenient<M> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            decode_site::<D, M>(d).map(|site| Lenient(site, std::marker::PhantomData))
        }
    }
    match serde_json::from_str::<Page<L, StrictSite<M>>>(body) {
        Ok(page) => Ok((page.metadata, page.items.into_iter().map(|s| s.0).collect())),
        Err(_) => {
            let page = serde_json::from_str::<Page<L, Lenient<M>>>(body)?;
            Ok((page.metadata, page.items.into_iter().map(|s| s.0).collect()))
        }
    }
}

/// The spec in `raw` key by key, defaults where a key does not read; what
/// was left out is recorded under `spec.` beside the status (made for the
/// purpose when the site has none).
fn lenient_spec(raw: &str, status: &mut Option<FederatedClusterStatus>) -> FederatedClusterSpec {
    let mut unreadable = Unreadable::default();
    let spec = match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(value @ serde_json::Value::Object(_)) => {
            crate::api::decode_leniently::<FederatedClusterSpec>(value, "spec", &mut unreadable)
        }
        Ok(_) => {
            unreadable.push("spec".to_owned(), "expected an object");
            None
        }
        Err(e) => {
            unreadable.push("spec".to_owned(), &e.to_string());
            None
        }
    };
    let status = status.get_or_insert_with(Default::default);
    let record = status.unreadable.get_or_insert_with(Default::default);
    for f in unreadable.fields {
        record.push(f.path, &f.reason);
    }
    record.more += unreadable.more;
    spec.unwrap_or_default()
}

/// A site's metadata kept only as far as its name, and its
/// resourceVersion (kube-runtime's watcher resumes from the last one it
/// saw).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NameOnly {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    resource_version: Option<String>,
}

impl KeptMeta for NameOnly {
    fn into_meta(self) -> ObjectMeta {
        ObjectMeta {
            name: self.name,
            resource_version: self.resource_version,
            ..ObjectMeta::default()
        }
    }
}

/// [`ObjectMeta`] but `managedFields`: they are skipped in the JSON, never
/// built. Nothing reads them, a status write without them keeps the stored
/// ones (both API servers take them from the stored object for
/// `/status`), and decoded they were the larger part of the hub's work per
/// watch event: each entry's `fieldsV1` is a tree of JSON maps
/// (docs/benchmarks-operator.md).
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct AllButManagedFields {
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

impl KeptMeta for AllButManagedFields {
    fn into_meta(self) -> ObjectMeta {
        ObjectMeta {
            annotations: self.annotations,
            creation_timestamp: self.creation_timestamp,
            deletion_grace_period_seconds: self.deletion_grace_period_seconds,
            deletion_timestamp: self.deletion_timestamp,
            finalizers: self.finalizers,
            generate_name: self.generate_name,
            generation: self.generation,
            labels: self.labels,
            managed_fields: None,
            name: self.name,
            namespace: self.namespace,
            owner_references: self.owner_references,
            resource_version: self.resource_version,
            self_link: self.self_link,
            uid: self.uid,
        }
    }
}

/// A view of a site as one reader keeps it, decoded by [`decode_site`]:
/// what `k8s::site_status::watch_sites` and the reads are generic over.
pub trait SiteView:
    kube::Resource<DynamicType = ()>
    + for<'de> Deserialize<'de>
    + Clone
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
    /// The site decoded.
    fn into_site(self) -> FederatedCluster;
}

/// Implements `kube::Resource` (as a FederatedCluster), [`SiteView`] and
/// the decode for a site newtype, so `Api<Self>` and kube-runtime's
/// watcher decode with [`decode_site`].
macro_rules! site_view {
    ($(#[$doc:meta])* $name:ident, $meta:ty) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name(pub FederatedCluster);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                decode_site::<D, $meta>(d).map($name)
            }
        }

        impl SiteView for $name {
            fn into_site(self) -> FederatedCluster {
                self.0
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.0.serialize(s)
            }
        }

        impl kube::Resource for $name {
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
    };
}

site_view!(
    /// A site with all its metadata but `managedFields`
    /// ([`AllButManagedFields`]): what the operator and `get` read.
    UnmanagedSite,
    AllButManagedFields
);

site_view!(
    /// A site with its metadata cut down to the name, which is all the
    /// views read (`managedFields` alone is often most of an object), and
    /// the resourceVersion a watch resumes from.
    LeanSite,
    NameOnly
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn wire(spec: serde_json::Value, status: serde_json::Value) -> serde_json::Value {
        json!({
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
            "spec": spec,
            "status": status,
        })
    }

    #[test]
    fn a_watched_site_keeps_its_metadata_but_managed_fields() {
        let json = wire(
            json!({"heartbeatIntervalSeconds": 30}),
            json!({"lastHeartbeatTime": "2026-12-03T10:00:30Z", "nodeCount": 2}),
        );
        let full: FederatedCluster = serde_json::from_value(json.clone()).unwrap();
        let UnmanagedSite(lean) = serde_json::from_value(json).unwrap();
        assert!(full.metadata.managed_fields.is_some());
        assert_eq!(lean.metadata.managed_fields, None);
        let mut expected = full;
        expected.metadata.managed_fields = None;
        assert_eq!(lean, expected);
    }

    #[test]
    fn a_lean_site_keeps_only_the_name_and_resource_version() {
        let json = wire(json!({"tier": "critical"}), json!({"nodeCount": 2}));
        let LeanSite(site) = serde_json::from_str(&json.to_string()).unwrap();
        assert_eq!(
            site.metadata,
            ObjectMeta {
                name: Some("site-a".into()),
                resource_version: Some("42".into()),
                ..Default::default()
            }
        );
        assert_eq!(site.spec.tier, crate::api::Tier::Critical);
        assert_eq!(site.status.unwrap().node_count, Some(2));
    }

    #[test]
    fn an_unreadable_spec_key_takes_its_default_and_is_recorded() {
        let json = wire(
            json!({"tier": "critical", "maxConcurrentRemediations": 9_999_999_999i64,
                "maintenance": {"until": "2026-12-05T21:30:05.1234567891Z"}}),
            serde_json::Value::Null,
        );
        for site in [
            serde_json::from_value::<UnmanagedSite>(json.clone())
                .unwrap()
                .0,
            serde_json::from_value::<LeanSite>(json.clone()).unwrap().0,
        ] {
            assert_eq!(site.spec.tier, crate::api::Tier::Critical);
            assert_eq!(site.spec.max_concurrent_remediations, 3);
            assert_eq!(site.spec.maintenance, None);
            let status = site.status.expect("made to hold the record");
            let paths: Vec<&str> = status
                .unreadable()
                .unwrap()
                .fields
                .iter()
                .map(|f| f.path.as_str())
                .collect();
            // `until` is required: the window goes, recorded once.
            assert_eq!(
                paths,
                ["spec.maintenance", "spec.maxConcurrentRemediations"]
            );
            assert_eq!(status.last_heartbeat_time, None);
        }
    }

    #[test]
    fn one_bad_site_in_a_list_costs_only_its_own_fields() {
        let good = wire(
            json!({}),
            json!({"lastHeartbeatTime": "2026-12-03T10:00:30Z"}),
        );
        let mut bad = wire(
            json!({}),
            json!({"lastHeartbeatTime": "2026-12-05T21:30:05x5Z", "nodeCount": 18446744073709551615u64}),
        );
        bad["metadata"]["name"] = json!("site-b");
        let list = json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": "7"},
            "items": [good, bad]});
        let list: kube::core::ObjectList<UnmanagedSite> =
            serde_json::from_str(&list.to_string()).unwrap();
        let sites: Vec<FederatedCluster> = list.items.into_iter().map(|s| s.0).collect();
        assert_eq!(sites.len(), 2);
        assert!(sites[0].status.as_ref().unwrap().unreadable().is_none());
        let bad = sites[1].status.as_ref().unwrap();
        assert!(bad.unreadable().unwrap().heartbeat());
        assert_eq!(bad.node_count, None);
    }

    /// A page as `kubectl fleet status` reads it decodes every site as
    /// [`decode_site`] does, whether the page takes the one-pass typed path
    /// (all sites read) or the site-by-site one (one site does not): the
    /// good sites whole, the bad one without what it cannot read, the
    /// spec's unreadable keys defaulted and recorded, the paging metadata
    /// kept.
    #[test]
    fn a_page_of_sites_decodes_as_each_site_does() {
        let good = |name: &str| {
            let mut site = wire(
                json!({"tier": "critical", "region": "eu-west"}),
                json!({"lastHeartbeatTime": "2026-12-03T10:00:30Z", "nodeCount": 2,
                    "conditions": [{"type": "Connected", "status": "True", "reason": "HeartbeatReceived",
                        "message": "ok", "lastTransitionTime": "2026-12-03T10:00:00Z"}]}),
            );
            site["metadata"]["name"] = json!(name);
            site
        };
        let mut no_status = good("site-c");
        no_status.as_object_mut().unwrap().remove("status");
        let mut bad_status = good("site-d");
        bad_status["status"]["lastHeartbeatTime"] = json!("2026-12-05T21:30:05x5Z");
        let mut bad_spec = good("site-e");
        bad_spec["spec"]["maxConcurrentRemediations"] = json!(9_999_999_999i64);
        let all_good = vec![good("site-a"), good("site-b"), no_status];
        let with_bad = vec![good("site-a"), bad_status, bad_spec, good("site-f")];
        for items in [all_good, with_bad] {
            let page = json!({"apiVersion": "v1", "kind": "List",
                "metadata": {"continue": "next-page", "resourceVersion": "7"}, "items": items});
            let (meta, sites) =
                decode_site_page::<crate::k8s::list_token::ListMeta, NameOnly>(&page.to_string())
                    .unwrap();
            assert_eq!(meta.continue_.as_deref(), Some("next-page"));
            let each: Vec<FederatedCluster> = items
                .iter()
                .map(|item| {
                    serde_json::from_str::<LeanSite>(&item.to_string())
                        .unwrap()
                        .0
                })
                .collect();
            assert_eq!(sites, each);
        }
        let with_bad = vec![good("site-a"), {
            let mut bad = good("site-d");
            bad["status"]["lastHeartbeatTime"] = json!("2026-12-05T21:30:05x5Z");
            bad
        }];
        let page = json!({"items": with_bad});
        let (_, sites) =
            decode_site_page::<crate::k8s::list_token::ListMeta, NameOnly>(&page.to_string())
                .unwrap();
        assert!(sites[0].status.as_ref().unwrap().unreadable().is_none());
        let bad = sites[1].status.as_ref().unwrap();
        assert!(bad.unreadable().unwrap().heartbeat());
        assert_eq!(bad.node_count, Some(2));
        assert_eq!(sites[1].spec.tier, crate::api::Tier::Critical);
    }
}
