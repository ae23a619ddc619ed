//! Server-side apply of arbitrary manifests (`kubectl fleet install
//! --apply`), resolving each kind through API discovery like kubectl does.

use kube::api::{Api, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::discovery::{Scope, pinned_kind};

use super::FIELD_MANAGER;
use super::client::Cluster;
use super::error::Error;
use super::identity::ObjectRef;

impl Cluster {
    /// Applies the documents in order (CRDs and namespaces first is the
    /// caller's job) and returns what was applied.
    pub async fn apply_manifests(
        &self,
        docs: &[serde_json::Value],
    ) -> Result<Vec<ObjectRef>, Error> {
        let mut applied = Vec::with_capacity(docs.len());
        for doc in docs {
            let obj: DynamicObject =
                serde_json::from_value(doc.clone()).map_err(|e| Error::Unexpected {
                    what: "read manifest".into(),
                    reason: e.to_string(),
                })?;
            let types = obj.types.clone().unwrap_or_default();
            let name = obj.metadata.name.clone().unwrap_or_default();
            let what = format!("apply {} {name}", types.kind);
            let gvk = GroupVersionKind::try_from(&types).map_err(|e| Error::Unexpected {
                what: what.clone(),
                reason: e.to_string(),
            })?;
            let (resource, caps) = pinned_kind(&self.client, &gvk)
                .await
                .map_err(|e| Error::api(format!("discover {}", types.kind), self.server(), e))?;
            let namespace = obj.metadata.namespace.clone();
            let api: Api<DynamicObject> = match (&caps.scope, &namespace) {
                (Scope::Namespaced, Some(ns)) => {
                    Api::namespaced_with(self.client.clone(), ns, &resource)
                }
                (Scope::Namespaced, None) => {
                    Api::default_namespaced_with(self.client.clone(), &resource)
                }
                (Scope::Cluster, _) => Api::all_with(self.client.clone(), &resource),
            };
            api.patch(
                &name,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&obj),
            )
            .await
            .map_err(|e| Error::api(what, self.server(), e))?;
            applied.push(ObjectRef {
                kind: types.kind,
                name,
                namespace,
            });
        }
        Ok(applied)
    }
}
