//! kubectl-fleet: a multi-cluster fleet registry for Kubernetes.
//!
//! The library holds everything; the two binaries in `src/bin` only parse
//! arguments, set up logging and map errors to exit codes.
//!
//! - [`api`]: the `federation.kubectl-fleet.dev/v1alpha1` types and their CRDs.
//! - [`fleet`]: pure fleet logic (phase, RBAC rules, signals, correlation,
//!   cascades, remediation policy) over plain data.
//! - [`k8s`]: all Kubernetes I/O, behind domain verbs.
//! - [`cli`]: the `kubectl fleet` commands.
//! - [`operator`]: the hub and edge roles of `fleet-operator`.
//! - [`render`]: tables and machine-readable views.

pub mod api;
pub mod cli;
pub mod fleet;
pub mod k8s;
pub mod operator;
pub mod render;
