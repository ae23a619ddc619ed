//! kubectl-fleet: a multi-cluster fleet registry for Kubernetes.
//!
//! The library holds the I/O layers over the pure core crate
//! (`crates/fleet-core`); the two binaries in `src/bin` only parse
//! arguments, set up logging and map errors to exit codes.
//!
//! - [`api`], [`fleet`], [`render`], [`manifests`]: re-exported from
//!   `fleet-core` (the API types, pure fleet logic, views, shipped
//!   objects), so `crate::api::…` reads the same
//!   here as there.
//! - [`k8s`]: all Kubernetes I/O, behind domain verbs.
//! - [`cli`]: the `kubectl fleet` commands.
//! - [`operator`]: the hub and edge roles of `fleet-operator`.

pub use fleet_core::{api, fleet, manifests, render};

pub mod cli;
pub mod k8s;
pub mod logging;
pub mod operator;
