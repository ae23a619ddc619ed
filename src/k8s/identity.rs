//! The per-site identity on the hub (docs/architecture.md#the-life-of-a-site):
//! namespace, ServiceAccount, RBAC, tokens, the pull Secret, and their
//! removal. (A Pull site's identity on its member is in `k8s::pull`.)
//!
//! A Push site's ServiceAccount and token Role live in `fleet-sites`
//! ([`rbac::SITES_NAMESPACE`]), apart from the operator's `fleet-system`.
//! Sites registered before that have them in `fleet-system`: `register`
//! and `rotate` move them ([`Cluster::delete_legacy_site_identity`]) and
//! `unregister` removes both.
//!
//! Every write is a server-side apply with field manager `kubectl-fleet`
//! and `force`, so a re-run converges whatever an interrupted run left.

use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde::Serialize;

use super::client::Cluster;
use super::error::Error;
use super::object_ref::ObjectRef;
use super::{FIELD_MANAGER, NAMESPACE};
use crate::fleet::rbac;
use crate::fleet::rbac::SITES_NAMESPACE;

/// A namespaced object this module applies by server-side apply.
trait NamespacedObject:
    Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
    + Clone
    + Serialize
    + serde::de::DeserializeOwned
    + std::fmt::Debug
{
}

impl<K> NamespacedObject for K where
    K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + Serialize
        + serde::de::DeserializeOwned
        + std::fmt::Debug
{
}

/// What a namespaced apply of [`Cluster::apply_site_identity`] found.
enum Namespaced {
    Applied(ObjectRef),
    NamespaceMissing,
}

/// What [`Cluster::apply_site_identity`] (and
/// [`Cluster::ensure_site_identity`]) did.
#[derive(Debug)]
pub struct AppliedIdentity {
    /// The objects applied, in order (the namespace when it had to be
    /// created; the lease last).
    pub applied: Vec<ObjectRef>,
    /// The objects removed to converge.
    pub removed: Vec<ObjectRef>,
    /// The hub does not serve `federatedclusterleases` (its CRDs predate
    /// them): no lease was created, and the site's edge heartbeats
    /// through its status.
    pub lease_unserved: bool,
}

/// A token returned by the TokenRequest API.
#[derive(Clone)]
pub struct IssuedToken {
    /// The bearer token (a secret: never log it).
    pub token: String,
    /// `status.expirationTimestamp` as the server set it.
    pub expiration: jiff::Timestamp,
    /// The lifetime that was asked for.
    pub requested: Duration,
    /// When the request was sent, to judge whether the server capped it.
    pub requested_at: jiff::Timestamp,
}

impl std::fmt::Debug for IssuedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuedToken")
            .field("expiration", &self.expiration)
            .field("requested", &self.requested)
            .finish_non_exhaustive()
    }
}

impl IssuedToken {
    /// The lifetime the server granted, measured from the request.
    pub fn granted(&self) -> Duration {
        let secs = self.expiration.as_second() - self.requested_at.as_second();
        Duration::from_secs(secs.max(0).unsigned_abs())
    }

    /// True when the server granted noticeably less than was asked (its
    /// `--service-account-max-token-expiration`). A minute of slack absorbs
    /// clock rounding between request and response.
    pub fn capped(&self) -> bool {
        self.granted() + Duration::from_secs(60) < self.requested
    }
}

impl Cluster {
    /// Server-side applies one object (field manager `kubectl-fleet`, force).
    pub(crate) async fn apply<K>(&self, api: &Api<K>, name: &str, obj: &K) -> Result<K, Error>
    where
        K: Resource<DynamicType = ()>
            + Clone
            + Serialize
            + serde::de::DeserializeOwned
            + std::fmt::Debug,
    {
        tracing::debug!(kind = %K::kind(&()), name, server = self.server(), "server-side apply");
        let params = PatchParams::apply(FIELD_MANAGER).force();
        api.patch(name, &params, &Patch::Apply(obj))
            .await
            .map_err(|e| Error::api(format!("apply {} {name}", K::kind(&())), self.server(), e))
    }

    /// Deletes one object; Ok(false) when it was already gone.
    pub(crate) async fn delete_if_exists<K>(&self, api: &Api<K>, name: &str) -> Result<bool, Error>
    where
        K: Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        tracing::debug!(kind = %K::kind(&()), name, server = self.server(), "delete");
        match api.delete(name, &DeleteParams::background()).await {
            Ok(_) => Ok(true),
            Err(e) => {
                let err = Error::api(format!("delete {} {name}", K::kind(&())), self.server(), e);
                if err.is_not_found() {
                    Ok(false)
                } else {
                    Err(err)
                }
            }
        }
    }

    /// Ensures namespace `name` exists, labelled like every namespace this
    /// project creates ([`rbac::namespace_labels`]: Pod Security
    /// "restricted" enforced).
    pub async fn ensure_namespace(&self, name: &str) -> Result<ObjectRef, Error> {
        let api: Api<Namespace> = Api::all(self.client.clone());
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                labels: Some(rbac::namespace_labels()),
                ..Default::default()
            },
            ..Default::default()
        };
        self.apply(&api, name, &ns).await?;
        Ok(ObjectRef::of::<Namespace>(name, None))
    }

    /// Applies a named object and returns its reference.
    async fn ensure<K>(&self, api: Api<K>, obj: K) -> Result<ObjectRef, Error>
    where
        K: Resource<DynamicType = ()>
            + Clone
            + Serialize
            + serde::de::DeserializeOwned
            + std::fmt::Debug,
    {
        let name = obj.meta().name.clone().unwrap_or_default();
        let namespace = obj.meta().namespace.clone();
        self.apply(&api, &name, &obj).await?;
        Ok(ObjectRef::of::<K>(&name, namespace.as_deref()))
    }

    /// Applies a namespaced object into its namespace (`fleet-system` or
    /// `fleet-sites`). The namespace is not applied up front (`install`
    /// creates both on a hub, and one more request per `register` is what
    /// the round-trip benchmark P6 counts): only when the server answers that it does
    /// not exist is it created, and the apply sent once more. A created
    /// namespace is pushed onto `created`.
    async fn ensure_in_namespace<K: NamespacedObject>(
        &self,
        obj: K,
        created: &mut Vec<ObjectRef>,
    ) -> Result<ObjectRef, Error> {
        let namespace = obj.meta().namespace.clone().unwrap_or_default();
        match self.apply_in_namespace(obj.clone()).await {
            Err(e) if e.is_namespace_missing(&namespace) => {
                created.push(self.ensure_namespace(&namespace).await?);
                self.apply_in_namespace(obj).await
            }
            other => other,
        }
    }

    /// Applies the Push-mode identity of a site (docs/architecture.md#the-life-of-a-site):
    /// [`Cluster::apply_site_identity`], then
    /// [`Cluster::seal_site_identity`]. Returns the objects applied (with
    /// the namespace when it had to be created) and those removed.
    pub async fn ensure_site_identity(
        &self,
        identity: &crate::manifests::rbac::SiteIdentity,
    ) -> Result<AppliedIdentity, Error> {
        let done = self.apply_site_identity(identity).await?;
        self.seal_site_identity(identity).await?;
        Ok(done)
    }

    /// The first of a site identity's two steps, every request at once
    /// (one round trip): its ClusterRole with exactly the three site rules
    /// and binding; the site's lease (`FederatedClusterLease` SITE, its
    /// heartbeat: created when missing, a live one's renewal kept); with
    /// auto-rotation the Role/RoleBinding that lets the
    /// edge renew only its own token (without it they are removed, so
    /// re-running with `--no-auto-rotate` converges); and the
    /// ServiceAccount **without** its digest annotation (a ServiceAccount
    /// that had one loses it until the second step). Every object is owned
    /// by the site's FederatedCluster, so deleting the site deletes them.
    ///
    /// A hub whose CRDs predate the lease (404 for the lease's API) gets
    /// the rest: [`AppliedIdentity::lease_unserved`] says so, and the edge
    /// heartbeats through the site's status there.
    ///
    /// When `fleet-sites` turns out to be missing (the first site of a
    /// hub), it is created once and the applies that found it missing are
    /// sent again, at once.
    pub async fn apply_site_identity(
        &self,
        identity: &crate::manifests::rbac::SiteIdentity,
    ) -> Result<AppliedIdentity, Error> {
        use futures::future::{BoxFuture, FutureExt as _, try_join_all};
        let client = &self.client;
        let name = identity
            .service_account
            .metadata
            .name
            .clone()
            .unwrap_or_default();
        let mut unsealed = identity.service_account.clone();
        if let Some(annotations) = unsealed.metadata.annotations.as_mut() {
            annotations.remove(crate::manifests::rbac::IDENTITY_DIGEST_ANNOTATION);
        }
        let lease = async {
            match self
                .ensure(
                    crate::k8s::site_lease::site_leases(client.clone()),
                    identity.lease.clone(),
                )
                .await
            {
                Ok(applied) => Ok(Some(applied)),
                // Server-side apply creates a missing object: a 404 is
                // the API itself missing (the CRDs predate the lease).
                Err(e) if e.is_crd_missing() || e.is_not_found() => Ok(None),
                Err(e) => Err(e),
            }
        };
        let cluster_scoped = async {
            futures::try_join!(
                self.ensure(Api::all(client.clone()), identity.cluster_role.clone()),
                self.ensure(
                    Api::all(client.clone()),
                    identity.cluster_role_binding.clone()
                ),
                lease,
            )
        };
        let mut namespaced: Vec<BoxFuture<'_, Result<Namespaced, Error>>> = Vec::new();
        if let Some((role, binding)) = &identity.token_role {
            namespaced.push(self.try_in_namespace(role.clone()).boxed());
            namespaced.push(self.try_in_namespace(binding.clone()).boxed());
        }
        namespaced.push(self.try_in_namespace(unsealed.clone()).boxed());
        let removal = async {
            match identity.token_role {
                Some(_) => Ok(Vec::new()),
                None => self.delete_token_role(SITES_NAMESPACE, &name).await,
            }
        };
        let ((role, binding, lease), first, removed) =
            futures::try_join!(cluster_scoped, try_join_all(namespaced), removal)?;
        let lease_unserved = lease.is_none();
        let mut applied = vec![role, binding];
        let mut retry: Vec<BoxFuture<'_, Result<ObjectRef, Error>>> = Vec::new();
        for (i, outcome) in first.into_iter().enumerate() {
            match outcome {
                Namespaced::Applied(obj) => applied.push(obj),
                Namespaced::NamespaceMissing => {
                    // The same objects, in the same order, as pushed above.
                    let fut = match (&identity.token_role, i) {
                        (Some((role, _)), 0) => self.apply_in_namespace(role.clone()).boxed(),
                        (Some((_, binding)), 1) => self.apply_in_namespace(binding.clone()).boxed(),
                        _ => self.apply_in_namespace(unsealed.clone()).boxed(),
                    };
                    retry.push(fut);
                }
            }
        }
        if !retry.is_empty() {
            applied.insert(2, self.ensure_namespace(SITES_NAMESPACE).await?);
            applied.extend(try_join_all(retry).await?);
        }
        applied.extend(lease);
        Ok(AppliedIdentity {
            applied,
            removed,
            lease_unserved,
        })
    }

    /// Whether the site's lease (`FederatedClusterLease` SITE) exists: false
    /// when it or its API is missing (a hub whose CRDs predate it).
    pub async fn site_lease_exists(&self, site: &str) -> Result<bool, Error> {
        let api = crate::k8s::site_lease::site_leases(self.client.clone());
        match api.get_metadata_opt(site).await {
            Ok(found) => Ok(found.is_some()),
            Err(e) if super::status_code(&e) == Some(404) => Ok(false),
            Err(e) => Err(Error::api(
                format!("get FederatedClusterLease {site}"),
                self.server(),
                e,
            )),
        }
    }

    /// The second step: the ServiceAccount with the digest of the whole
    /// identity ([`crate::manifests::rbac::SiteIdentity`]), applied only once every other
    /// object is, so the digest proves a complete run. A token can be
    /// requested at the same time: applying keeps the ServiceAccount's uid.
    pub async fn seal_site_identity(
        &self,
        identity: &crate::manifests::rbac::SiteIdentity,
    ) -> Result<(), Error> {
        self.apply_in_namespace(identity.service_account.clone())
            .await?;
        Ok(())
    }

    /// Applies a namespaced object into its namespace, reporting (not
    /// creating) a missing namespace.
    async fn try_in_namespace<K: NamespacedObject>(&self, obj: K) -> Result<Namespaced, Error> {
        let namespace = obj.meta().namespace.clone().unwrap_or_default();
        match self.apply_in_namespace(obj).await {
            Err(e) if e.is_namespace_missing(&namespace) => Ok(Namespaced::NamespaceMissing),
            other => other.map(Namespaced::Applied),
        }
    }

    /// Applies a namespaced object into its namespace.
    async fn apply_in_namespace<K: NamespacedObject>(&self, obj: K) -> Result<ObjectRef, Error> {
        let namespace = obj.meta().namespace.clone().unwrap_or_default();
        let api: Api<K> = Api::namespaced(self.client.clone(), &namespace);
        let name = obj.meta().name.clone().unwrap_or_default();
        self.apply(&api, &name, &obj).await?;
        Ok(ObjectRef::of::<K>(&name, Some(&namespace)))
    }

    /// The site's RoleBinding and Role `fleet-edge-SITE` in `namespace`,
    /// binding first, deleted if they exist; returns what was deleted.
    async fn delete_token_role(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Vec<ObjectRef>, Error> {
        let mut removed = Vec::new();
        let bindings: Api<RoleBinding> = Api::namespaced(self.client.clone(), namespace);
        if self.delete_if_exists(&bindings, name).await? {
            removed.push(ObjectRef::of::<RoleBinding>(name, Some(namespace)));
        }
        let roles: Api<Role> = Api::namespaced(self.client.clone(), namespace);
        if self.delete_if_exists(&roles, name).await? {
            removed.push(ObjectRef::of::<Role>(name, Some(namespace)));
        }
        Ok(removed)
    }

    /// The site's ServiceAccount `fleet-sites/fleet-edge-SITE`, if it exists.
    pub async fn site_service_account(&self, site: &str) -> Result<Option<ServiceAccount>, Error> {
        self.service_account(SITES_NAMESPACE, &rbac::edge_identity_name(site))
            .await
    }

    async fn service_account(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<ServiceAccount>, Error> {
        let api: Api<ServiceAccount> = Api::namespaced(self.client.clone(), namespace);
        api.get_opt(name).await.map_err(|e| {
            Error::api(
                format!("get ServiceAccount {namespace}/{name}"),
                self.server(),
                e,
            )
        })
    }

    /// For a site registered before the identities moved to `fleet-sites`
    /// (its ServiceAccount still in `fleet-system`): applies its identity
    /// in `fleet-sites` — with the token Role if it had one — and removes
    /// the old objects, whose tokens stop working with them. `Ok(None)`
    /// when there is nothing to move. `rotate` calls it; `register`
    /// applies the identity anyway and calls
    /// [`Cluster::delete_legacy_site_identity`].
    pub async fn migrate_legacy_site_identity(
        &self,
        site: &str,
        site_uid: &str,
    ) -> Result<Option<(Vec<ObjectRef>, Vec<ObjectRef>)>, Error> {
        let name = rbac::edge_identity_name(site);
        if self.service_account(NAMESPACE, &name).await?.is_none() {
            return Ok(None);
        }
        let roles: Api<Role> = Api::namespaced(self.client.clone(), NAMESPACE);
        let auto_rotate = roles
            .get_opt(&name)
            .await
            .map_err(|e| Error::api(format!("get Role {NAMESPACE}/{name}"), self.server(), e))?
            .is_some();
        let identity = crate::manifests::rbac::SiteIdentity::new(site, site_uid, auto_rotate);
        let AppliedIdentity {
            applied,
            mut removed,
            ..
        } = self.ensure_site_identity(&identity).await?;
        removed.extend(self.delete_legacy_site_identity(site).await?);
        Ok(Some((applied, removed)))
    }

    /// Removes what a site registered before the move to `fleet-sites`
    /// left in `fleet-system`: its RoleBinding, Role and ServiceAccount
    /// `fleet-edge-SITE` (tokens of that ServiceAccount stop working).
    /// Returns what was deleted; nothing there is no error.
    pub async fn delete_legacy_site_identity(&self, site: &str) -> Result<Vec<ObjectRef>, Error> {
        let name = rbac::edge_identity_name(site);
        let mut removed = self.delete_token_role(NAMESPACE, &name).await?;
        let sa: Api<ServiceAccount> = Api::namespaced(self.client.clone(), NAMESPACE);
        if self.delete_if_exists(&sa, &name).await? {
            removed.push(ObjectRef::of::<ServiceAccount>(&name, Some(NAMESPACE)));
        }
        Ok(removed)
    }

    /// What a bearer token may do in `fleet-sites` (cluster-wide rules
    /// included), as the API server reports it to the token's own holder
    /// (a SelfSubjectRulesReview, which every authenticated identity may
    /// create), reduced to [`rbac::site_rule_tuples`]. `Ok(None)` when the
    /// server says its answer is incomplete.
    pub async fn token_site_rules(
        &self,
        token: &str,
    ) -> Result<Option<std::collections::BTreeSet<rbac::RuleTuple>>, Error> {
        use k8s_openapi::api::authorization::v1::{
            SelfSubjectRulesReview, SelfSubjectRulesReviewSpec,
        };
        let what = "review the rules of the new token";
        let kubeconfig = super::TokenKubeconfig {
            cluster_name: "hub",
            user_name: "site",
            server: self.server(),
            ca_pem: self.ca_pem(),
            insecure_skip_tls_verify: self.insecure(),
            token,
        }
        .to_yaml();
        let kubeconfig =
            kube::config::Kubeconfig::from_yaml(&kubeconfig).map_err(|e| Error::Unexpected {
                what: what.into(),
                reason: e.to_string(),
            })?;
        let as_site = Cluster::from_kubeconfig(kubeconfig, &Default::default()).await?;
        let review = SelfSubjectRulesReview {
            spec: SelfSubjectRulesReviewSpec {
                namespace: Some(SITES_NAMESPACE.to_owned()),
            },
            ..Default::default()
        };
        let api: Api<SelfSubjectRulesReview> = Api::all(as_site.client.clone());
        let answer = api
            .create(&kube::api::PostParams::default(), &review)
            .await
            .map_err(|e| Error::api(what, self.server(), e))?;
        let Some(status) = answer.status else {
            return Ok(None);
        };
        if status.incomplete {
            return Ok(None);
        }
        let rules: Vec<k8s_openapi::api::rbac::v1::PolicyRule> = status
            .resource_rules
            .into_iter()
            .map(|r| k8s_openapi::api::rbac::v1::PolicyRule {
                api_groups: r.api_groups,
                resources: r.resources,
                resource_names: r.resource_names,
                verbs: r.verbs,
                non_resource_urls: None,
            })
            .collect();
        Ok(Some(rbac::site_rule_tuples(&rules)))
    }

    /// Mints a token for the site's ServiceAccount
    /// `fleet-sites/fleet-edge-SITE` with the TokenRequest API.
    pub async fn request_site_token(
        &self,
        site: &str,
        ttl: Duration,
    ) -> Result<IssuedToken, Error> {
        self.request_token(SITES_NAMESPACE, &rbac::edge_identity_name(site), ttl)
            .await
    }

    /// Mints a token for ServiceAccount `NAMESPACE/NAME` with the
    /// TokenRequest API.
    pub async fn request_token(
        &self,
        namespace: &str,
        service_account: &str,
        ttl: Duration,
    ) -> Result<IssuedToken, Error> {
        let requested_at = jiff::Timestamp::now();
        let what = format!("request a token for ServiceAccount {namespace}/{service_account}");
        let seconds = i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX);
        let minted = super::edge_token::request_token(
            &self.client,
            namespace,
            service_account,
            seconds,
            Vec::new(),
        )
        .await
        .map_err(|e| match e {
            super::edge_token::TokenError::Request(e) => Error::api(what, self.server(), e),
            empty => Error::Unexpected {
                what,
                reason: empty.to_string(),
            },
        })?;
        Ok(IssuedToken {
            token: minted.token,
            expiration: minted.expires_at,
            requested: ttl,
            requested_at,
        })
    }

    /// Deletes and recreates the site's ServiceAccount: the new one has a new
    /// UID, so every token minted for the old one is rejected from now on.
    pub async fn recreate_service_account(
        &self,
        site: &str,
        site_uid: &str,
    ) -> Result<ObjectRef, Error> {
        let name = rbac::edge_identity_name(site);
        let api: Api<ServiceAccount> = Api::namespaced(self.client.clone(), SITES_NAMESPACE);
        if self.delete_if_exists(&api, &name).await? {
            let what = format!("ServiceAccount {SITES_NAMESPACE}/{name}");
            self.wait_gone(&api, &name, &what, Duration::from_secs(10), "")
                .await?;
        }
        let mut sa = crate::manifests::rbac::site_service_account(site);
        sa.metadata.owner_references = Some(vec![crate::manifests::rbac::site_owner_reference(
            site, site_uid,
        )]);
        self.ensure(api, sa).await
    }

    /// Removes the site's Push identity, bindings before roles, the
    /// ServiceAccount last — in `fleet-sites` and, for a site registered
    /// before the move, in `fleet-system`. Returns what was actually
    /// deleted; missing objects are skipped, so a re-run after an
    /// interruption finishes the job.
    pub async fn delete_site_identity(&self, site: &str) -> Result<Vec<ObjectRef>, Error> {
        let name = rbac::edge_identity_name(site);
        let client = &self.client;
        let mut removed = self.delete_token_role(SITES_NAMESPACE, &name).await?;
        let crb: Api<ClusterRoleBinding> = Api::all(client.clone());
        if self.delete_if_exists(&crb, &name).await? {
            removed.push(ObjectRef::of::<ClusterRoleBinding>(&name, None));
        }
        let cr: Api<ClusterRole> = Api::all(client.clone());
        if self.delete_if_exists(&cr, &name).await? {
            removed.push(ObjectRef::of::<ClusterRole>(&name, None));
        }
        let sa: Api<ServiceAccount> = Api::namespaced(client.clone(), SITES_NAMESPACE);
        if self.delete_if_exists(&sa, &name).await? {
            removed.push(ObjectRef::of::<ServiceAccount>(
                &name,
                Some(SITES_NAMESPACE),
            ));
        }
        // Its heartbeat object (a 404 is also a hub without its API).
        let lease = crate::k8s::site_lease::site_leases(client.clone());
        match self.delete_if_exists(&lease, site).await {
            Ok(true) => removed.push(ObjectRef::of::<crate::api::FederatedClusterLease>(
                site, None,
            )),
            Ok(false) => {}
            Err(e) if e.is_crd_missing() => {}
            Err(e) => return Err(e),
        }
        removed.extend(self.delete_legacy_site_identity(site).await?);
        Ok(removed)
    }

    /// Stores a Pull-mode site's member kubeconfig in hub Secret
    /// `fleet-system/fleet-pull-SITE` (type Opaque, key `kubeconfig`).
    ///
    /// The Secret is owned by the site's FederatedCluster (`site_uid`), so
    /// deleting the site deletes the member credential too, and a Secret
    /// can only outlive its site until the garbage collector runs. Returns
    /// the namespace first when it had to be created.
    pub async fn store_pull_secret(
        &self,
        site: &str,
        site_uid: &str,
        kubeconfig: &str,
    ) -> Result<Vec<ObjectRef>, Error> {
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(rbac::pull_secret_name(site)),
                namespace: Some(NAMESPACE.to_owned()),
                labels: Some(rbac::site_labels(site)),
                owner_references: Some(vec![crate::manifests::rbac::site_owner_reference(
                    site, site_uid,
                )]),
                ..Default::default()
            },
            type_: Some("Opaque".into()),
            data: Some(
                [(
                    crate::api::DEFAULT_KUBECONFIG_KEY.to_owned(),
                    ByteString(kubeconfig.as_bytes().to_vec()),
                )]
                .into(),
            ),
            ..Default::default()
        };
        let mut objects = Vec::new();
        let stored = self.ensure_in_namespace(secret, &mut objects).await?;
        objects.push(stored);
        objects.extend(
            self.grant_pull_secret(site, site_uid, &rbac::pull_secret_name(site))
                .await?,
        );
        Ok(objects)
    }

    /// Grants the hub operator Secret `fleet-system/SECRET`, which site
    /// `site` (`site_uid`) is probed with, by name
    /// ([`crate::manifests::rbac::pull_secret_grant`]): the hub reads no other Secret.
    pub async fn grant_pull_secret(
        &self,
        site: &str,
        site_uid: &str,
        secret: &str,
    ) -> Result<Vec<ObjectRef>, Error> {
        let (role, binding) = crate::manifests::rbac::pull_secret_grant(site, site_uid, secret);
        let mut objects = Vec::new();
        let role = self.ensure_in_namespace(role, &mut objects).await?;
        objects.push(role);
        let binding = self.ensure_in_namespace(binding, &mut objects).await?;
        objects.push(binding);
        Ok(objects)
    }

    /// Whether Secret `namespace/name` exists.
    pub async fn secret_exists(&self, namespace: &str, name: &str) -> Result<bool, Error> {
        let api: Api<Secret> = Api::namespaced(self.client.clone(), namespace);
        api.get_opt(name)
            .await
            .map(|s| s.is_some())
            .map_err(|e| Error::api(format!("get Secret {namespace}/{name}"), self.server(), e))
    }

    /// The data of Secret `namespace/name`, if it exists. The values are
    /// credentials: callers check them, never print them.
    pub async fn secret_data(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<std::collections::BTreeMap<String, Vec<u8>>>, Error> {
        let api: Api<Secret> = Api::namespaced(self.client.clone(), namespace);
        let secret = api
            .get_opt(name)
            .await
            .map_err(|e| Error::api(format!("get Secret {namespace}/{name}"), self.server(), e))?;
        Ok(secret.map(|s| {
            s.data
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| (k, v.0))
                .collect()
        }))
    }

    /// Deletes the pull Secret of a site, and the hub's grant of it, where
    /// present.
    pub async fn delete_pull_secret(&self, site: &str) -> Result<Vec<ObjectRef>, Error> {
        let name = rbac::pull_secret_name(site);
        let grant = rbac::pull_secret_grant_name(&name);
        let mut removed = Vec::new();
        let bindings: Api<RoleBinding> = Api::namespaced(self.client.clone(), NAMESPACE);
        if self.delete_if_exists(&bindings, &grant).await? {
            removed.push(ObjectRef::of::<RoleBinding>(&grant, Some(NAMESPACE)));
        }
        let roles: Api<Role> = Api::namespaced(self.client.clone(), NAMESPACE);
        if self.delete_if_exists(&roles, &grant).await? {
            removed.push(ObjectRef::of::<Role>(&grant, Some(NAMESPACE)));
        }
        let api: Api<Secret> = Api::namespaced(self.client.clone(), NAMESPACE);
        if self.delete_if_exists(&api, &name).await? {
            removed.push(ObjectRef::of::<Secret>(&name, Some(NAMESPACE)));
        }
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(requested: u64, granted: i64) -> IssuedToken {
        let at = jiff::Timestamp::from_second(1_000_000).unwrap();
        IssuedToken {
            token: String::new(),
            expiration: at + jiff::SignedDuration::from_secs(granted),
            requested: Duration::from_secs(requested),
            requested_at: at,
        }
    }

    #[test]
    fn capped_only_when_granted_is_clearly_shorter() {
        assert!(token(30 * 86400, 3600).capped());
        assert!(!token(3600, 3600).capped());
        assert!(!token(3600, 3590).capped(), "rounding is not a cap");
        assert_eq!(token(30 * 86400, 3600).granted(), Duration::from_secs(3600));
    }
}
