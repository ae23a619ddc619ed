//! State shared by every connection of one sandbox: the store, the RBAC
//! snapshot, test controls and the token issuer.

use crate::auth::rbac::RbacSnapshot;
use crate::auth::reviews;
use crate::auth::{TokenIssuer, UserInfo};
use crate::controls::Controls;
use crate::store::State;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// User name of the admin token.
pub const ADMIN_USER: &str = "sandbox-admin";
/// User name of the loopback token: the API server's own identity, which
/// the CRD delegate acts with on the sandbox (kube-apiserver's in-process
/// clients are `system:apiserver`, in `system:masters`).
pub const LOOPBACK_USER: &str = "system:apiserver";

/// State shared by every connection of one sandbox.
pub struct Shared {
    pub state: Mutex<State>,
    rbac: Mutex<Arc<RbacSnapshot>>,
    pub controls: Controls,
    pub issuer: TokenIssuer,
    pub admin_token: String,
    /// Token of [`LOOPBACK_USER`].
    pub loopback_token: String,
    pub addr: SocketAddr,
    /// The real API server serving CRDs and custom resources behind the
    /// sandbox, if any (`crate::delegate`).
    pub delegate: Option<crate::delegate::Delegate>,
}

impl Shared {
    pub fn new(
        state: State,
        controls: Controls,
        issuer: TokenIssuer,
        admin_token: String,
        loopback_token: String,
        addr: SocketAddr,
        delegate: Option<crate::delegate::Delegate>,
    ) -> Self {
        Shared {
            state: Mutex::new(state),
            rbac: Mutex::new(Arc::new(RbacSnapshot::default())),
            controls,
            issuer,
            admin_token,
            loopback_token,
            addr,
            delegate,
        }
    }

    /// The RBAC objects as of now. Changes are applied to the cached
    /// snapshot one by one (in place when no request still holds the old
    /// one), so registering many sites does not rebuild it from scratch.
    pub fn rbac(&self) -> Arc<RbacSnapshot> {
        // Lock order rbac → state: a request that starts after a change
        // was stored always sees it.
        let mut cached = self.rbac.lock().unwrap();
        let changes = self.state.lock().unwrap().take_rbac_changes();
        if !changes.is_empty() {
            let snap = Arc::make_mut(&mut cached);
            for (resource, key, obj) in changes {
                let list = match resource.as_str() {
                    "roles" => &mut snap.roles,
                    "rolebindings" => &mut snap.role_bindings,
                    "clusterroles" => &mut snap.cluster_roles,
                    "clusterrolebindings" => &mut snap.cluster_role_bindings,
                    _ => continue,
                };
                let pos = list.iter().position(|o| {
                    o["metadata"]["name"].as_str() == Some(key.1.as_str())
                        && o["metadata"]["namespace"].as_str().unwrap_or_default() == key.0
                });
                match (pos, obj) {
                    (Some(i), Some(o)) => list[i] = (*o).clone(),
                    (Some(i), None) => {
                        list.remove(i);
                    }
                    (None, Some(o)) => list.push((*o).clone()),
                    (None, None) => {}
                }
            }
        }
        cached.clone()
    }
}

/// The uid of a ServiceAccount, if it exists (tokens are bound to it).
pub fn service_account_uid(shared: &Shared, namespace: &str, name: &str) -> Option<String> {
    let st = shared.state.lock().unwrap();
    let gr = crate::resources::GroupResource {
        group: String::new(),
        resource: "serviceaccounts".into(),
    };
    st.get(&gr, &(namespace.to_string(), name.to_string()))
        .and_then(|sa| sa["metadata"]["uid"].as_str().map(String::from))
}

/// Authenticates a bearer token for API access: the admin token, the
/// loopback token, or a ServiceAccount token whose ServiceAccount still
/// exists with the uid it was bound to and whose audiences include the API
/// server's.
pub fn authenticate_token(shared: &Shared, token: &str) -> Result<UserInfo, String> {
    if token == shared.admin_token {
        return Ok(admin_user());
    }
    if token == shared.loopback_token {
        return Ok(loopback_user());
    }
    let now = jiff::Timestamp::now().as_second();
    reviews::authenticate_service_account_token(&shared.issuer, token, now, &[], |ns, name| {
        service_account_uid(shared, ns, name)
    })
    .map(|(user, _)| user)
}

/// The user of the loopback token.
pub fn loopback_user() -> UserInfo {
    UserInfo {
        username: LOOPBACK_USER.into(),
        uid: String::new(),
        groups: vec!["system:masters".into(), "system:authenticated".into()],
        extra: Default::default(),
    }
}

/// The user of the admin token.
pub fn admin_user() -> UserInfo {
    UserInfo {
        username: ADMIN_USER.into(),
        uid: String::new(),
        groups: vec!["system:masters".into(), "system:authenticated".into()],
        extra: Default::default(),
    }
}
