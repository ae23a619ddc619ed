//! Server-side apply and deletion of arbitrary manifests (`kubectl fleet
//! install --apply`, `kubectl fleet uninstall`), resolving each kind through
//! API discovery like kubectl does.
//!
//! Re-applying is an upgrade, and an upgrade keeps what the cluster's
//! operators changed since: apply is not forced, and a field another
//! manager owns with a different value (a mirrored image set with `kubectl
//! set image`, a replica count from `kubectl scale`) is left to that
//! manager and reported as kept — unless the caller forces, or requires the
//! field, in which case the apply stops and names it.

use kube::api::{Api, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::discovery::{Scope, pinned_kind};
use serde_json::Value;

use super::FIELD_MANAGER;
use super::client::Cluster;
use super::error::Error;
use super::field_path;
use super::object_ref::ObjectRef;

/// How [`Cluster::apply_manifests`] treats fields another manager changed.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApplyOptions<'a> {
    /// Take every field, replacing other managers' values (`--force-conflicts`).
    pub force: bool,
    /// Field paths whose value this apply must set (the user asked for it
    /// with a flag): a conflict on one stops the apply instead of keeping
    /// the live value.
    pub required: &'a [String],
}

/// One applied object, with the fields it left to other managers.
#[derive(Debug, Clone)]
pub struct Applied {
    /// The object.
    pub object: ObjectRef,
    /// Fields whose live value was kept.
    pub kept: Vec<KeptField>,
}

/// A field whose live value was kept because another manager set it.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptField {
    /// The field path as the API server names it (`.spec.replicas`).
    pub path: String,
    /// Who set it, as the server says (`conflict with "kubectl" with subresource "scale"`).
    pub owner: String,
    /// The live value that stays (never shown for a Secret).
    pub live: Option<Value>,
}

/// One conflict of a refused apply: the field and the server's message.
fn conflicts(err: &kube::Error) -> Vec<(String, String)> {
    match err {
        kube::Error::Api(status) if status.code == 409 => status
            .details
            .iter()
            .flat_map(|d| &d.causes)
            .filter(|c| !c.field.is_empty())
            .map(|c| (c.field.clone(), c.message.clone()))
            .collect(),
        _ => Vec::new(),
    }
}

/// The object's kind and name, the way every message names it.
fn object_ref(obj: &DynamicObject) -> ObjectRef {
    ObjectRef {
        kind: obj
            .types
            .as_ref()
            .map(|t| t.kind.clone())
            .unwrap_or_default(),
        name: obj.metadata.name.clone().unwrap_or_default(),
        namespace: obj.metadata.namespace.clone(),
    }
}

/// How a kept or conflicting field is named in one line: the path, the live
/// value if known and not secret (JSON, so control characters stay
/// escaped) and who set it.
pub fn describe_field(path: &str, live: Option<&Value>, owner: &str) -> String {
    const MAX: usize = 200;
    let mut text = match live {
        Some(value) => format!("{path} = {value} ({owner})"),
        None => format!("{path} ({owner})"),
    };
    if text.len() > MAX {
        let cut = (0..=MAX)
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(0);
        text.truncate(cut);
        text.push('…');
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

impl Cluster {
    /// The typed handle for one manifest, resolved through discovery. None
    /// when the API server does not serve its kind.
    async fn api_for(&self, obj: &DynamicObject) -> Result<Option<Api<DynamicObject>>, Error> {
        let types = obj.types.clone().unwrap_or_default();
        let gvk = GroupVersionKind::try_from(&types).map_err(|e| Error::Unexpected {
            what: format!("read manifest {}", types.kind),
            reason: e.to_string(),
        })?;
        let key = (gvk.group.clone(), gvk.version.clone(), gvk.kind.clone());
        let known = self
            .discovered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned();
        let found = match known {
            Some(found) => found,
            None => {
                let found = match pinned_kind(&self.client, &gvk).await {
                    Ok(found) => Some(found),
                    Err(kube::Error::Api(status)) if status.code == 404 => None,
                    Err(kube::Error::Discovery(_)) => None,
                    Err(e) => {
                        return Err(Error::api(
                            format!("discover {}", types.kind),
                            self.server(),
                            e,
                        ));
                    }
                };
                self.discovered
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(key, found.clone());
                found
            }
        };
        let Some((resource, caps)) = found else {
            return Ok(None);
        };
        Ok(Some(match (&caps.scope, &obj.metadata.namespace) {
            (Scope::Namespaced, Some(ns)) => {
                Api::namespaced_with(self.client.clone(), ns, &resource)
            }
            (Scope::Namespaced, None) => {
                Api::default_namespaced_with(self.client.clone(), &resource)
            }
            (Scope::Cluster, _) => Api::all_with(self.client.clone(), &resource),
        }))
    }

    /// The kinds among the documents that the API server does not serve
    /// (`apiVersion/kind`, each once, in document order), so a caller can
    /// refuse before applying anything rather than stop half-way.
    pub async fn unserved_kinds(&self, docs: &[Value]) -> Result<Vec<String>, Error> {
        let mut unserved: Vec<String> = Vec::new();
        for doc in docs {
            let obj = parse(doc).map_err(unreadable)?;
            if self.api_for(&obj).await?.is_none() {
                let types = obj.types.unwrap_or_default();
                let kind = format!("{}/{}", types.api_version, types.kind);
                if !unserved.contains(&kind) {
                    unserved.push(kind);
                }
            }
        }
        Ok(unserved)
    }

    /// Applies the documents in order (CRDs and namespaces first is the
    /// caller's job) and returns what was applied and what was kept.
    pub async fn apply_manifests(
        &self,
        docs: &[Value],
        options: ApplyOptions<'_>,
    ) -> Result<Vec<Applied>, Error> {
        let mut applied = Vec::with_capacity(docs.len());
        for doc in docs {
            let obj = parse(doc).map_err(unreadable)?;
            let object = object_ref(&obj);
            let what = format!("apply {object}");
            let api = self.api_for(&obj).await?.ok_or_else(|| Error::Unexpected {
                what: what.clone(),
                reason: format!("the API server does not serve kind {}", object.kind),
            })?;
            let params = PatchParams::apply(FIELD_MANAGER);
            let params = if options.force {
                params.force()
            } else {
                params
            };
            let mut body = doc.clone();
            let mut kept = Vec::new();
            let result = match api.patch(&object.name, &params, &Patch::Apply(&body)).await {
                Err(e) if !conflicts(&e).is_empty() => {
                    let live = api
                        .get(&object.name)
                        .await
                        .map_err(|e| Error::api(format!("get {object}"), self.server(), e))?;
                    let live = serde_json::to_value(&live).unwrap_or_default();
                    let mut refused = Vec::new();
                    for (path, owner) in conflicts(&e) {
                        // A Secret's values are credentials: never echoed.
                        let value = (object.kind != "Secret")
                            .then(|| field_path::get(&live, &path))
                            .flatten();
                        let keepable = !options.required.contains(&path)
                            && field_path::remove(&mut body, &path);
                        if keepable {
                            kept.push(KeptField {
                                path,
                                owner,
                                live: value,
                            });
                        } else {
                            refused.push(describe_field(&path, value.as_ref(), &owner));
                        }
                    }
                    if !refused.is_empty() {
                        return Err(Error::Conflict {
                            what,
                            fields: refused.join("; "),
                        });
                    }
                    api.patch(&object.name, &params, &Patch::Apply(&body)).await
                }
                other => other,
            };
            result.map_err(|e| Error::api(what, self.server(), e))?;
            applied.push(Applied { object, kept });
        }
        Ok(applied)
    }

    /// Deletes the documents' objects in reverse order and returns what
    /// existed; objects already gone and kinds not served are skipped.
    pub async fn delete_manifests(&self, docs: &[Value]) -> Result<Vec<ObjectRef>, Error> {
        let mut deleted = Vec::new();
        for doc in docs.iter().rev() {
            let obj = parse(doc).map_err(unreadable)?;
            let object = object_ref(&obj);
            let Some(api) = self.api_for(&obj).await? else {
                continue;
            };
            tracing::debug!(%object, server = self.server(), "delete");
            match api
                .delete(&object.name, &DeleteParams::background())
                .await
                .map_err(|e| Error::api(format!("delete {object}"), self.server(), e))
            {
                Ok(answer) => {
                    // Still there, marked for deletion: its finalizers run
                    // first (a CRD's deletes every object of its kind). As
                    // `kubectl delete` does, wait until it is gone.
                    let marked = answer
                        .left()
                        .is_some_and(|o| o.metadata.deletion_timestamp.is_some());
                    if marked {
                        self.wait_gone(
                            &api,
                            &object.name,
                            &object.to_string(),
                            std::time::Duration::from_secs(60),
                            " (its finalizers have not finished): run `kubectl fleet uninstall` again to wait for it",
                        )
                        .await?;
                    }
                    deleted.push(object);
                }
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(deleted)
    }
}

impl Cluster {
    /// Waits (bounded: 60 s, as `kubectl wait --for=condition=Established
    /// --timeout=60s` would) until the custom resources of the CRD documents
    /// `crds` are served: a list of each answers. A real API server answers
    /// a just-created CRD's resources with 404 for a moment after it is
    /// written (its controllers establish it, then its handler learns of
    /// it), so a `register` right after `install --apply` would be told the
    /// CRDs are not installed.
    pub async fn wait_crds_served(&self, crds: &[Value]) -> Result<(), Error> {
        for crd in crds {
            let group = crd["spec"]["group"].as_str().unwrap_or_default();
            let plural = crd["spec"]["names"]["plural"].as_str().unwrap_or_default();
            let kind = crd["spec"]["names"]["kind"].as_str().unwrap_or_default();
            let Some(version) = crd["spec"]["versions"]
                .as_array()
                .and_then(|v| v.iter().find(|v| v["served"] == true))
                .and_then(|v| v["name"].as_str())
            else {
                continue;
            };
            let gvk = GroupVersionKind::gvk(group, version, kind);
            let resource = kube::api::ApiResource::from_gvk_with_plural(&gvk, plural);
            let api: Api<DynamicObject> = Api::all_with(self.client.clone(), &resource);
            let what = format!("wait for {plural}.{group} to be served");
            let served = || async {
                match api
                    .list_metadata(&kube::api::ListParams::default().limit(1))
                    .await
                {
                    Ok(_) => Ok(true),
                    Err(kube::Error::Api(s)) if s.code == 404 => Ok(false),
                    Err(e) => Err(Error::api(what.clone(), self.server(), e)),
                }
            };
            Self::wait_for(std::time::Duration::from_secs(60), served, || {
                Error::Unexpected {
                    what: what.clone(),
                    reason: "the CRD was applied but its resources are still not served after 60s: check `kubectl get crd` for its Established condition, then run the command again".into(),
                }
            })
            .await?;
        }
        Ok(())
    }
}

fn parse(doc: &Value) -> Result<DynamicObject, serde_json::Error> {
    serde_json::from_value(doc.clone())
}

fn unreadable(e: serde_json::Error) -> Error {
    Error::Unexpected {
        what: "read manifest".into(),
        reason: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_field_is_described_in_one_bounded_escaped_line() {
        assert_eq!(
            describe_field(
                ".spec.replicas",
                Some(&json!(3)),
                "conflict with \"kubectl\""
            ),
            ".spec.replicas = 3 (conflict with \"kubectl\")"
        );
        let hostile = describe_field(".x", Some(&json!("a\u{1b}[2Jb")), "m\nx");
        assert!(
            !hostile.contains('\u{1b}') && !hostile.contains('\n'),
            "{hostile}"
        );
        let long = describe_field(".x", Some(&json!("é".repeat(500))), "m");
        assert!(long.chars().count() <= 201, "{long}");
    }
}
