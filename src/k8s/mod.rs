//! All Kubernetes I/O of `kubectl fleet`, behind domain verbs.
//!
//! Commands never build `Api` handles themselves: they connect a
//! [`Cluster`] and call verbs such as [`Cluster::ensure_site_identity`],
//! [`Cluster::request_token`], [`Cluster::list_sites`] or
//! [`Cluster::apply_manifests`]. Every failure comes back as an [`Error`]
//! that says what failed and carries a hint for the user.

mod client;
mod error;
mod field_path;
mod identity;
mod kubeconfig;
mod list_token;
mod manifests;
mod object_ref;
mod server_clock;
mod sites;

pub use client::{
    Cluster, ConnectOptions, bounded_client, kubeconfig_from_env, read_kubeconfig, shown_server,
    unretried_client,
};
pub use error::{
    ContextFlags, Error, is_conflict, is_missing, is_missing_object, readable, root_cause,
    source_chain, status_code, with_causes,
};
pub use identity::{AppliedIdentity, IssuedToken};
pub use kubeconfig::{TokenKubeconfig, check_private_file, plain_yaml_stream, write_private_file};
pub use manifests::{Applied, ApplyOptions, KeptField, describe_field};
pub use object_ref::ObjectRef;
pub use server_clock::ServerClock;
pub use sites::{LivenessRead, SITE_PAGE_SIZE, SiteChange};

/// Namespace holding the fleet's identities, Secrets and operator.
pub const NAMESPACE: &str = crate::fleet::rbac::FLEET_NAMESPACE;

pub use crate::fleet::rbac::MANAGED_BY_LABEL;

/// Field manager of every server-side apply this tool makes.
pub const FIELD_MANAGER: &str = "kubectl-fleet";

// Operator I/O (fleet-operator): site status, leases, member reads, token
// renewal and the FederationStatus singleton.
pub mod body_limit;
pub mod edge_token;
pub mod events;
pub mod federation_status;
pub mod journal;
pub mod lease;
pub mod member;
pub mod pull;
pub mod reviews;
pub mod site_decode;
pub mod site_lease;
pub mod site_status;
