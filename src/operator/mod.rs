//! `fleet-operator`: the hub and edge roles.
//!
//! - [`hub`]: phase controller over FederatedClusters, leader-elected.
//! - [`edge`]: the agent on a member cluster that dials home.
//! - [`report`]: change-only status patches (pure).
//! - [`credential`]: the edge's hub kubeconfig and token lifetime.
//! - [`leader`]: Lease-based leader election.
//! - [`health`]: `/healthz` and `/readyz`.

pub mod credential;
pub mod health;
pub mod leader;
pub mod report;
