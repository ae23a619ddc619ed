//! I/O of Pull mode.
//!
//! On the hub (the prober): reading a site's pull Secret in `fleet-system`
//! by name; turning a Secret's kubeconfig into a member client —
//! refusing the kubeconfigs a hub must never use, and the addresses it must
//! never connect to — whose answers are cut at a byte cap; telling why a
//! probe failed; storing a renewed member token in the site's Secret.
//!
//! On a member (for `kubectl fleet register --pull` and `unregister`): the
//! site's own identity there ([`PullIdentity`]), which hub made it,
//! and its removal.
//!
//! A kubeconfig in a Secret is written by whoever may write Secrets in
//! `fleet-system`, and it is used by the hub's process: so it may not make
//! the hub run a command (`exec`, `auth-provider`), read a file on the hub
//! (a token, key, certificate or CA given by path), go through a proxy
//! (`proxy-url`), or reach an address the hub refuses
//! ([`AddressPolicy`]: cloud metadata, link-local, loopback, or what the
//! operator's `--pull-allow-cidr`/`--pull-deny-cidr` say). The address is
//! checked after the name is resolved, and the client then connects to that
//! very address (the name is kept for TLS), so a name that resolves to
//! something else a moment later changes nothing
//! (docs/pull-mode.md#where-the-hub-connects).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Api, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};

use super::body_limit::{BodyLimitLayer, ReadBudget};
use super::client::Cluster;
use super::error::Error;
use super::identity::IssuedToken;
use super::member::MemberError;
use super::object_ref::ObjectRef;
use crate::fleet::probe::{AddressPolicy, AddressRefusal, ProbeFailure};
use crate::fleet::rbac::{self, FLEET_NAMESPACE, MANAGED_BY, MEMBER_READER_NAME, SITE_LABEL};
use crate::manifests::rbac::PullIdentity;

/// The largest single answer the hub reads from a member: far above a page
/// of any list the prober asks for (`k8s::member`'s page sizes).
pub const MAX_ANSWER_BYTES: u64 = 8 << 20;

/// The Secrets API in `fleet-system`, where every pull Secret lives.
pub fn pull_secrets(client: kube::Client) -> Api<Secret> {
    Api::namespaced(client, FLEET_NAMESPACE)
}

/// Secret `fleet-system/NAME` (None: there is none), read by name: the
/// hub may read only the pull Secrets granted to it one by one
/// (`rbac::pull_secret_grant`), never the namespace's other Secrets.
pub async fn pull_secret(client: kube::Client, name: &str) -> Result<Option<Secret>, kube::Error> {
    pull_secrets(client).get_opt(name).await
}

/// The labels a pull Secret lacks for the hub to use it for `site` (each
/// `KEY=VALUE`, as `kubectl label` takes them): the hub requires both, so
/// a hand-made Secret without them (e.g. from a GitOps repository) is not
/// used. A site label naming another site is not "missing" (that is
/// `SecretLabelMismatch`).
pub fn missing_pull_secret_labels(
    labels: Option<&std::collections::BTreeMap<String, String>>,
    site: &str,
) -> Vec<String> {
    let get = |key: &str| labels.and_then(|l| l.get(key)).map(String::as_str);
    let mut missing = Vec::new();
    if get(rbac::MANAGED_BY_LABEL) != Some(MANAGED_BY) {
        missing.push(format!("{}={MANAGED_BY}", rbac::MANAGED_BY_LABEL));
    }
    if get(SITE_LABEL).is_none() {
        missing.push(format!("{SITE_LABEL}={site}"));
    }
    missing
}

/// The site a pull Secret is labelled for (`federation.kubectl-fleet.dev/site`).
pub fn secret_site(secret: &Secret) -> Option<&str> {
    secret
        .metadata
        .labels
        .as_ref()?
        .get(SITE_LABEL)
        .map(String::as_str)
}

/// Why a kubeconfig from a Secret is refused, in one line without secrets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct KubeconfigRefused(pub String);

/// Why the hub does not connect to a member's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddressError {
    /// The server name does not resolve.
    Dns,
    /// The address (or name) is refused by the hub's [`AddressPolicy`].
    Refused(AddressRefusal),
}

/// A member kubeconfig that passed the hub's checks.
#[derive(Clone)]
pub struct MemberKubeconfig {
    kubeconfig: Kubeconfig,
    server: String,
    /// The server's host: a name, or an IP address without brackets.
    host: String,
    port: u16,
    insecure: bool,
    token: Option<String>,
}

impl std::fmt::Debug for MemberKubeconfig {
    // Holds a credential; show only where it points.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberKubeconfig")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl MemberKubeconfig {
    /// Parses and checks the kubeconfig bytes of a pull Secret.
    pub fn parse(bytes: &[u8]) -> Result<Self, KubeconfigRefused> {
        let refuse = |s: &str| KubeconfigRefused(s.to_owned());
        let text = std::str::from_utf8(bytes).map_err(|_| refuse("the kubeconfig is not UTF-8"))?;
        // The parser's own message may quote the input: never repeat it.
        let kubeconfig = Kubeconfig::from_yaml(text)
            .map_err(|_| refuse("the kubeconfig is not valid kubeconfig YAML"))?;
        let context_name = kubeconfig
            .current_context
            .clone()
            .ok_or_else(|| refuse("the kubeconfig has no current-context"))?;
        let context = kubeconfig
            .contexts
            .iter()
            .find(|c| c.name == context_name)
            .and_then(|c| c.context.as_ref())
            .ok_or_else(|| refuse("the kubeconfig's current-context is not defined in it"))?;
        let cluster = kubeconfig
            .clusters
            .iter()
            .find(|c| c.name == context.cluster)
            .and_then(|c| c.cluster.as_ref())
            .ok_or_else(|| refuse("the kubeconfig's current-context names no defined cluster"))?;
        let server = cluster
            .server
            .clone()
            .ok_or_else(|| refuse("the kubeconfig's cluster has no server URL"))?;
        let uri: http::Uri = server
            .parse()
            .map_err(|_| refuse("the kubeconfig's server is not a URL"))?;
        if uri.scheme_str() != Some("https") {
            return Err(refuse(
                "the kubeconfig's server is not an https:// URL: the hub sends the member credential only over TLS",
            ));
        }
        let host = uri
            .host()
            .map(|h| h.trim_start_matches('[').trim_end_matches(']').to_owned())
            .filter(|h| !h.is_empty())
            .ok_or_else(|| refuse("the kubeconfig's server URL has no host"))?;
        let port = uri.port_u16().unwrap_or(443);
        if cluster.certificate_authority.is_some() {
            return Err(refuse(
                "the kubeconfig names a CA file: the hub reads no file a Secret names; embed it as certificate-authority-data",
            ));
        }
        if cluster.proxy_url.as_deref().is_some_and(|p| !p.is_empty()) {
            return Err(refuse(
                "the kubeconfig sets proxy-url: the hub connects to members directly, never through a proxy a Secret names",
            ));
        }
        let user = context
            .user
            .as_ref()
            .and_then(|u| kubeconfig.auth_infos.iter().find(|a| &a.name == u))
            .and_then(|a| a.auth_info.as_ref());
        let mut token = None;
        if let Some(user) = user {
            if user.exec.is_some() {
                return Err(refuse(
                    "the kubeconfig uses an exec credential plugin: the hub never runs a command a Secret names; use a token or client certificate",
                ));
            }
            if user.auth_provider.is_some() {
                return Err(refuse(
                    "the kubeconfig uses an auth-provider: the hub never runs a command a Secret names; use a token or client certificate",
                ));
            }
            if user.token_file.is_some()
                || user.client_certificate.is_some()
                || user.client_key.is_some()
            {
                return Err(refuse(
                    "the kubeconfig names a credential file: the hub reads no file a Secret names; embed the token or certificate",
                ));
            }
            // kube keeps the token behind a secret wrapper; its serialised
            // form is the plain value.
            token = serde_json::to_value(user)
                .ok()
                .and_then(|v| v.get("token").and_then(|t| t.as_str()).map(str::to_owned));
        }
        Ok(Self {
            insecure: cluster.insecure_skip_tls_verify.unwrap_or(false),
            kubeconfig,
            // Shown in conditions, Events and logs: never a userinfo.
            server: super::shown_server(&server),
            host,
            port,
            token,
        })
    }

    /// The member API server URL, as it may be shown ([`super::shown_server`]).
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Whether it skips verifying the member's certificate.
    pub fn insecure(&self) -> bool {
        self.insecure
    }

    /// The bearer token, if it authenticates with one (to read its expiry).
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// The `sub` claim of the token when it is a JWT: the Kubernetes user
    /// it authenticates as (e.g. [`rbac::pull_identity_user`]).
    pub fn token_subject(&self) -> Option<String> {
        let payload = self.token.as_deref()?.split('.').nth(1)?;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload.trim_end_matches('='))
            .ok()?;
        let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
        claims.get("sub")?.as_str().map(str::to_owned)
    }

    /// The same kubeconfig with `token` for its current user, as YAML (the
    /// hub stores a renewed token this way).
    pub fn with_token(&self, token: &str) -> Result<String, KubeconfigRefused> {
        let invalid = || KubeconfigRefused("the kubeconfig could not be rewritten".to_owned());
        let mut doc = serde_json::to_value(&self.kubeconfig).map_err(|_| invalid())?;
        let context = self.kubeconfig.current_context.clone().unwrap_or_default();
        let user = self
            .kubeconfig
            .contexts
            .iter()
            .find(|c| c.name == context)
            .and_then(|c| c.context.as_ref())
            .and_then(|c| c.user.clone())
            .ok_or_else(invalid)?;
        let entry = doc
            .get_mut("users")
            .and_then(|u| u.as_array_mut())
            .and_then(|users| {
                users
                    .iter_mut()
                    .find(|u| u.get("name").and_then(|n| n.as_str()) == Some(user.as_str()))
            })
            .and_then(|u| u.get_mut("user"))
            .and_then(|u| u.as_object_mut())
            .ok_or_else(invalid)?;
        entry.insert("token".to_owned(), token.into());
        serde_saphyr::to_string(&doc).map_err(|_| invalid())
    }

    /// The address to connect to: the server's, or every address its name
    /// resolves to, checked against `policy` (one refused address refuses
    /// the member). `keep` is the address in use, kept while the name
    /// still resolves to it.
    pub async fn resolve(
        &self,
        policy: &AddressPolicy,
        keep: Option<IpAddr>,
    ) -> Result<IpAddr, AddressError> {
        if let Ok(ip) = self.host.parse::<IpAddr>() {
            policy.check(ip).map_err(AddressError::Refused)?;
            return Ok(ip);
        }
        policy
            .check_name(&self.host)
            .map_err(AddressError::Refused)?;
        let addrs: Vec<IpAddr> = tokio::net::lookup_host((self.host.as_str(), self.port))
            .await
            .map_err(|_| AddressError::Dns)?
            .map(|a| a.ip())
            .collect();
        for ip in &addrs {
            policy.check(*ip).map_err(AddressError::Refused)?;
        }
        match keep.filter(|k| addrs.contains(k)) {
            Some(k) => Ok(k),
            None => addrs.first().copied().ok_or(AddressError::Dns),
        }
    }

    /// A client that connects to `addr` (checked by [`Self::resolve`]),
    /// verifies TLS against the server's name, gives up after `timeout`,
    /// and cuts each answer at [`MAX_ANSWER_BYTES`] and all of one probe's
    /// at `budget`.
    pub async fn client(
        &self,
        addr: IpAddr,
        timeout: Duration,
        budget: Arc<ReadBudget>,
    ) -> Result<kube::Client, KubeconfigRefused> {
        let refuse = |s: &str| KubeconfigRefused(s.to_owned());
        let mut config = kube::Config::from_custom_kubeconfig(
            self.kubeconfig.clone(),
            &KubeConfigOptions::default(),
        )
        .await
        .map_err(|_| refuse("the kubeconfig could not be loaded"))?;
        // The kubeconfig's proxy-url is refused above; a proxy from the
        // hub's environment is not used either: members are dialled directly.
        config.proxy_url = None;
        if self.host.parse::<IpAddr>().is_err() && config.tls_server_name.is_none() {
            config.tls_server_name = Some(self.host.clone());
        }
        let authority = match addr {
            IpAddr::V4(v4) => format!("{v4}:{}", self.port),
            IpAddr::V6(v6) => format!("[{v6}]:{}", self.port),
        };
        let mut parts = config.cluster_url.clone().into_parts();
        parts.authority = Some(
            authority
                .parse()
                .map_err(|_| refuse("the member address is not usable"))?,
        );
        config.cluster_url =
            http::Uri::from_parts(parts).map_err(|_| refuse("the member address is not usable"))?;
        config.connect_timeout = Some(timeout);
        config.read_timeout = Some(timeout);
        config.write_timeout = Some(timeout);
        let builder = kube::client::ClientBuilder::try_from(config)
            .map_err(|_| refuse("no client can be built from the kubeconfig"))?;
        Ok(builder
            .with_layer(&BodyLimitLayer::new(MAX_ANSWER_BYTES).with_budget(budget))
            .build())
    }
}

/// The failure class of a member read, and a one-line message naming
/// `server` and what to do for `site` (never a credential, never text the
/// member sent, and for answers that are not the Kubernetes API's only
/// their class: no status code, no body).
pub fn classify(err: &MemberError, server: &str, site: &str) -> (ProbeFailure, String) {
    let register = format!(
        "`kubectl fleet register {site} --pull --member-kubeconfig FILE` (FILE: an admin kubeconfig of the member)"
    );
    let source = match err {
        MemberError::TooLarge { .. } => {
            return (
                ProbeFailure::TooLarge,
                format!(
                    "{server}'s answers are larger than the hub reads in one probe (--probe-max-bytes of the hub operator; at most 8 MiB per answer): raise it if the member is this large, or register the site in Push mode"
                ),
            );
        }
        MemberError::NotKubernetes { .. } => {
            return (
                ProbeFailure::NotKubernetes,
                format!(
                    "{server} did not answer as a Kubernetes API server: check the server of the kubeconfig in the site's pull Secret"
                ),
            );
        }
        MemberError::NotInTime { .. } => {
            return (
                ProbeFailure::Timeout,
                format!("{server} did not answer in time"),
            );
        }
        MemberError::Read { source, .. } => source,
    };
    if let kube::Error::Api(s) = source {
        return match s.code {
            401 => (
                ProbeFailure::Unauthorized,
                format!(
                    "{server} rejected the credential (401: expired or revoked): re-run {register} to store a fresh one"
                ),
            ),
            403 => (
                ProbeFailure::Forbidden,
                format!(
                    "{server} denied a read the probe needs (403): re-run {register} to restore the site's read-only role"
                ),
            ),
            500..=599 => (
                ProbeFailure::Failed,
                format!(
                    "{server} failed to answer a read (a server error): see the member API server's logs"
                ),
            ),
            _ => (
                ProbeFailure::NotKubernetes,
                format!(
                    "{server} did not answer as a Kubernetes API server: check the server of the kubeconfig in the site's pull Secret"
                ),
            ),
        };
    }
    let mut chain = Vec::new();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(source);
    let mut refused = false;
    while let Some(e) = cur {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            refused |= io.kind() == std::io::ErrorKind::ConnectionRefused;
        }
        chain.push(e.to_string().to_ascii_lowercase());
        cur = e.source();
    }
    let text = chain.join(": ");
    if refused || text.contains("connection refused") {
        (
            ProbeFailure::ConnectionRefused,
            format!("{server} refused the connection: is the member API server running?"),
        )
    } else if text.contains("dns error") || text.contains("failed to lookup address") {
        (
            ProbeFailure::Dns,
            format!("the member server name in {server} does not resolve"),
        )
    } else if text.contains("certificate") || text.contains("tls") || text.contains("handshake") {
        (
            ProbeFailure::Tls,
            format!(
                "TLS with {server} failed (the kubeconfig's CA does not verify the member's certificate)"
            ),
        )
    } else if text.contains("timed out") || text.contains("timeout") {
        (
            ProbeFailure::Timeout,
            format!("{server} did not answer in time"),
        )
    } else {
        (
            ProbeFailure::Failed,
            format!("{server} could not be reached"),
        )
    }
}

/// The failure of an address the hub does not connect to.
pub fn classify_address(err: &AddressError, server: &str) -> (ProbeFailure, String) {
    match err {
        AddressError::Dns => (
            ProbeFailure::Dns,
            format!("the member server name in {server} does not resolve"),
        ),
        AddressError::Refused(why) => (
            ProbeFailure::AddressRefused,
            format!("{}: {server} is not probed", why.describe()),
        ),
    }
}

/// Stores `kubeconfig` under `key` of the pull Secret `name` on the hub,
/// only if the Secret is still at `resource_version` (a `register` that
/// rewrote it in between wins).
pub async fn store_renewed_kubeconfig(
    hub: &kube::Client,
    name: &str,
    key: &str,
    resource_version: &str,
    kubeconfig: &str,
) -> Result<(), kube::Error> {
    let patch = serde_json::json!({
        "metadata": { "resourceVersion": resource_version },
        "data": { key: ByteString(kubeconfig.as_bytes().to_vec()) },
    });
    pull_secrets(hub.clone())
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(|_| ())
}

fn object_ref(kind: &str, name: &str, namespace: Option<&str>) -> ObjectRef {
    ObjectRef {
        kind: kind.to_owned(),
        name: name.to_owned(),
        namespace: namespace.map(str::to_owned),
    }
}

impl Cluster {
    /// The cluster's identity: the UID of its `kube-system` namespace
    /// (which cannot be deleted). On the hub, it names the hub in the
    /// [`rbac::HUB_LABEL`] of the identities it mints on members.
    pub async fn cluster_id(&self) -> Result<String, Error> {
        let api: Api<Namespace> = Api::all(self.client.clone());
        let ns = api
            .get("kube-system")
            .await
            .map_err(|e| Error::api("get Namespace kube-system", self.server(), e))?;
        ns.metadata.uid.ok_or_else(|| Error::Unexpected {
            what: "get Namespace kube-system".into(),
            reason: "it has no uid".into(),
        })
    }

    /// On a member: the ServiceAccount of `site`'s Pull identity, if there
    /// is one (its labels say which hub made it: [`rbac::pull_identity_owner`]).
    pub async fn pull_service_account(&self, site: &str) -> Result<Option<ServiceAccount>, Error> {
        let name = rbac::pull_identity_name(site);
        let api: Api<ServiceAccount> = Api::namespaced(self.client.clone(), FLEET_NAMESPACE);
        api.get_opt(&name).await.map_err(|e| {
            Error::api(
                format!("get ServiceAccount {FLEET_NAMESPACE}/{name}"),
                self.server(),
                e,
            )
        })
    }

    /// On a member: whether the identity earlier versions shared among Pull
    /// sites (`fleet-system/fleet-member-reader`) is still there.
    pub async fn shared_member_reader_exists(&self) -> Result<bool, Error> {
        let api: Api<ServiceAccount> = Api::namespaced(self.client.clone(), FLEET_NAMESPACE);
        api.get_opt(MEMBER_READER_NAME)
            .await
            .map(|sa| sa.is_some())
            .map_err(|e| {
                Error::api(
                    format!("get ServiceAccount {FLEET_NAMESPACE}/{MEMBER_READER_NAME}"),
                    self.server(),
                    e,
                )
            })
    }

    /// On a member: applies a site's Pull identity (the namespace first,
    /// then its roles, bindings and ServiceAccount at once) and mints a
    /// token for it. The caller checked that it is free or this hub's
    /// ([`Cluster::pull_service_account`]).
    pub async fn ensure_pull_identity(
        &self,
        identity: &PullIdentity,
        ttl: Duration,
    ) -> Result<(Vec<ObjectRef>, IssuedToken), Error> {
        let client = &self.client;
        let name = identity
            .service_account
            .metadata
            .name
            .clone()
            .unwrap_or_default();
        let mut objects = vec![self.ensure_namespace(FLEET_NAMESPACE).await?];
        let sa: Api<ServiceAccount> = Api::namespaced(client.clone(), FLEET_NAMESPACE);
        let cr: Api<ClusterRole> = Api::all(client.clone());
        let crb: Api<ClusterRoleBinding> = Api::all(client.clone());
        let role: Api<Role> = Api::namespaced(client.clone(), FLEET_NAMESPACE);
        let rb: Api<RoleBinding> = Api::namespaced(client.clone(), FLEET_NAMESPACE);
        futures::try_join!(
            self.apply(&sa, &name, &identity.service_account),
            self.apply(&cr, &name, &identity.cluster_role),
            self.apply(&crb, &name, &identity.cluster_role_binding),
            self.apply(&role, &name, &identity.token_role),
            self.apply(&rb, &name, &identity.token_role_binding),
        )?;
        objects.extend([
            object_ref("ServiceAccount", &name, Some(FLEET_NAMESPACE)),
            object_ref("ClusterRole", &name, None),
            object_ref("ClusterRoleBinding", &name, None),
            object_ref("Role", &name, Some(FLEET_NAMESPACE)),
            object_ref("RoleBinding", &name, Some(FLEET_NAMESPACE)),
        ]);
        let token = self.request_token(FLEET_NAMESPACE, &name, ttl).await?;
        Ok((objects, token))
    }

    /// On a member: removes a site's Pull identity (bindings before roles,
    /// the ServiceAccount last), which revokes every token minted for it.
    /// The caller checked that it is this hub's. Returns what was deleted;
    /// nothing else on the member is touched.
    pub async fn delete_pull_identity(&self, site: &str) -> Result<Vec<ObjectRef>, Error> {
        let name = rbac::pull_identity_name(site);
        let client = &self.client;
        let mut removed = Vec::new();
        let rb: Api<RoleBinding> = Api::namespaced(client.clone(), FLEET_NAMESPACE);
        if self.delete_if_exists(&rb, &name).await? {
            removed.push(object_ref("RoleBinding", &name, Some(FLEET_NAMESPACE)));
        }
        let role: Api<Role> = Api::namespaced(client.clone(), FLEET_NAMESPACE);
        if self.delete_if_exists(&role, &name).await? {
            removed.push(object_ref("Role", &name, Some(FLEET_NAMESPACE)));
        }
        let crb: Api<ClusterRoleBinding> = Api::all(client.clone());
        if self.delete_if_exists(&crb, &name).await? {
            removed.push(object_ref("ClusterRoleBinding", &name, None));
        }
        let cr: Api<ClusterRole> = Api::all(client.clone());
        if self.delete_if_exists(&cr, &name).await? {
            removed.push(object_ref("ClusterRole", &name, None));
        }
        let sa: Api<ServiceAccount> = Api::namespaced(client.clone(), FLEET_NAMESPACE);
        if self.delete_if_exists(&sa, &name).await? {
            removed.push(object_ref("ServiceAccount", &name, Some(FLEET_NAMESPACE)));
        }
        Ok(removed)
    }

    /// On the hub: the kubeconfig in the site's pull Secret, if it exists.
    pub async fn pull_kubeconfig(&self, site: &str) -> Result<Option<Vec<u8>>, Error> {
        let name = rbac::pull_secret_name(site);
        let secret = pull_secrets(self.client.clone())
            .get_opt(&name)
            .await
            .map_err(|e| {
                Error::api(
                    format!("get Secret {FLEET_NAMESPACE}/{name}"),
                    self.server(),
                    e,
                )
            })?;
        Ok(secret
            .and_then(|s| s.data)
            .and_then(|mut d| d.remove(crate::api::DEFAULT_KUBECONFIG_KEY))
            .map(|b| b.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hand_made_pull_secret_is_told_which_label_it_lacks() {
        let labels = |pairs: &[(&str, &str)]| -> std::collections::BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        assert_eq!(
            missing_pull_secret_labels(None, "dr-eu"),
            [
                "app.kubernetes.io/managed-by=kubectl-fleet",
                "federation.kubectl-fleet.dev/site=dr-eu"
            ]
        );
        let helm = labels(&[
            ("app.kubernetes.io/managed-by", "Helm"),
            ("federation.kubectl-fleet.dev/site", "dr-eu"),
        ]);
        assert_eq!(
            missing_pull_secret_labels(Some(&helm), "dr-eu"),
            ["app.kubernetes.io/managed-by=kubectl-fleet"]
        );
        let no_site = labels(&[("app.kubernetes.io/managed-by", "kubectl-fleet")]);
        assert_eq!(
            missing_pull_secret_labels(Some(&no_site), "dr-eu"),
            ["federation.kubectl-fleet.dev/site=dr-eu"]
        );
        let other = labels(&[
            ("app.kubernetes.io/managed-by", "kubectl-fleet"),
            ("federation.kubectl-fleet.dev/site", "dr-us"),
        ]);
        assert!(missing_pull_secret_labels(Some(&other), "dr-eu").is_empty());
    }

    fn kubeconfig(user: &str, cluster_extra: &str) -> String {
        kubeconfig_at("https://127.0.0.1:6443", user, cluster_extra)
    }

    fn kubeconfig_at(server: &str, user: &str, cluster_extra: &str) -> String {
        format!(
            r#"
apiVersion: v1
kind: Config
current-context: m
clusters:
- name: m
  cluster:
    server: {server}
{cluster_extra}
contexts:
- name: m
  context: {{cluster: m, user: u}}
users:
- name: u
  user:
{user}
"#
        )
    }

    fn jwt(claims: &str) -> String {
        let e = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        format!(
            "{}.{}.sig",
            e.encode(r#"{"alg":"RS256"}"#),
            e.encode(claims)
        )
    }

    #[test]
    fn token_kubeconfig_is_accepted() {
        let kc = MemberKubeconfig::parse(
            kubeconfig("    token: abc", "    insecure-skip-tls-verify: true").as_bytes(),
        )
        .unwrap();
        assert_eq!(kc.server(), "https://127.0.0.1:6443");
        assert!(kc.insecure());
        assert_eq!(kc.token(), Some("abc"));
        assert_eq!(kc.token_subject(), None, "not a JWT");
        assert!(!format!("{kc:?}").contains("abc"), "Debug hides the token");
    }

    #[test]
    fn a_renewed_token_replaces_only_the_current_users() {
        let token = jwt(r#"{"sub":"system:serviceaccount:fleet-system:fleet-pull-a"}"#);
        let kc = MemberKubeconfig::parse(
            kubeconfig(
                &format!("    token: {token}"),
                "    certificate-authority-data: Q0E=",
            )
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(
            kc.token_subject().as_deref(),
            Some("system:serviceaccount:fleet-system:fleet-pull-a")
        );
        let renewed =
            MemberKubeconfig::parse(kc.with_token("new-token").unwrap().as_bytes()).unwrap();
        assert_eq!(renewed.token(), Some("new-token"));
        assert_eq!(renewed.server(), kc.server());
        let text = kc.with_token("new-token").unwrap();
        assert!(text.contains("Q0E="), "the CA is kept: {text}");
    }

    #[test]
    fn commands_files_and_proxies_named_by_a_secret_are_refused() {
        let exec = "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [-c, id]";
        let e = MemberKubeconfig::parse(kubeconfig(exec, "").as_bytes()).unwrap_err();
        assert!(e.0.contains("exec credential plugin"), "{e}");
        let ap = "    auth-provider:\n      name: gcp";
        let e = MemberKubeconfig::parse(kubeconfig(ap, "").as_bytes()).unwrap_err();
        assert!(e.0.contains("auth-provider"), "{e}");
        let file = "    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token";
        let e = MemberKubeconfig::parse(kubeconfig(file, "").as_bytes()).unwrap_err();
        assert!(e.0.contains("credential file"), "{e}");
        let ca = "    certificate-authority: /etc/ssl/ca.pem";
        let e = MemberKubeconfig::parse(kubeconfig("    token: t", ca).as_bytes()).unwrap_err();
        assert!(e.0.contains("CA file"), "{e}");
        let proxy = "    proxy-url: http://10.0.0.9:3128";
        let e = MemberKubeconfig::parse(kubeconfig("    token: t", proxy).as_bytes()).unwrap_err();
        assert!(e.0.contains("proxy-url"), "{e}");
        let plain = kubeconfig_at("http://10.0.0.1:8080", "    token: t", "");
        let e = MemberKubeconfig::parse(plain.as_bytes()).unwrap_err();
        assert!(e.0.contains("https://"), "{e}");
    }

    #[test]
    fn garbage_is_refused_without_echoing_it() {
        let e = MemberKubeconfig::parse(b"token: hunter2\n: [").unwrap_err();
        assert!(!e.0.contains("hunter2"), "{e}");
        assert!(MemberKubeconfig::parse(&[0xff, 0xfe]).is_err());
    }

    #[tokio::test]
    async fn metadata_and_refused_addresses_are_refused_before_connecting() {
        let policy = AddressPolicy::default();
        for (server, why) in [
            ("https://169.254.169.254", AddressRefusal::Metadata),
            ("https://[fd00:ec2::254]:443", AddressRefusal::Metadata),
            ("https://metadata.google.internal", AddressRefusal::Metadata),
            ("https://127.0.0.1:6443", AddressRefusal::Loopback),
            ("https://[::ffff:127.0.0.1]:6443", AddressRefusal::Loopback),
        ] {
            let kc = MemberKubeconfig::parse(kubeconfig_at(server, "    token: t", "").as_bytes())
                .unwrap();
            assert_eq!(
                kc.resolve(&policy, None).await,
                Err(AddressError::Refused(why)),
                "{server}"
            );
        }
        let kc = MemberKubeconfig::parse(kubeconfig("    token: t", "").as_bytes()).unwrap();
        let loopback = AddressPolicy {
            allow: vec!["127.0.0.0/8".parse().unwrap()],
            deny: Vec::new(),
        };
        assert_eq!(
            kc.resolve(&loopback, None).await,
            Ok("127.0.0.1".parse().unwrap())
        );
        let (f, m) = classify_address(
            &AddressError::Refused(AddressRefusal::Metadata),
            "https://169.254.169.254",
        );
        assert_eq!(f, ProbeFailure::AddressRefused);
        assert!(m.contains("metadata"), "{m}");
    }

    #[test]
    fn member_answers_map_to_classes_without_the_members_text_or_code() {
        let api = |code| MemberError::Read {
            what: "nodes",
            source: kube::Error::Api(
                kube::core::Status::failure("\u{1b}]0;pwned\u{7}", "x")
                    .with_code(code)
                    .boxed(),
            ),
        };
        let (f, m) = classify(&api(401), "https://m:6443", "site-a");
        assert_eq!(f, ProbeFailure::Unauthorized);
        assert!(
            m.contains("kubectl fleet register site-a --pull --member-kubeconfig FILE"),
            "a hint that runs: {m}"
        );
        assert_eq!(
            classify(&api(403), "https://m:6443", "site-a").0,
            ProbeFailure::Forbidden
        );
        let (f, m) = classify(&api(500), "https://m:6443", "site-a");
        assert_eq!(f, ProbeFailure::Failed);
        assert!(!m.contains("pwned") && !m.contains("500"), "{m}");
        let (f, m) = classify(&api(404), "https://m:6443", "site-a");
        assert_eq!(f, ProbeFailure::NotKubernetes);
        assert!(!m.contains("404"), "the class only: {m}");
        let (f, _) = classify(
            &MemberError::NotKubernetes { what: "nodes" },
            "https://m:6443",
            "site-a",
        );
        assert_eq!(f, ProbeFailure::NotKubernetes);
        let (f, m) = classify(
            &MemberError::TooLarge {
                what: "pods",
                source: super::super::body_limit::TooLarge::Budget { limit: 1 },
            },
            "https://m:6443",
            "site-a",
        );
        assert_eq!(f, ProbeFailure::TooLarge);
        assert!(m.contains("--probe-max-bytes"), "{m}");
    }
}
