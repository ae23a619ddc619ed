//! kubectl-fleet's pure core: what the fleet is and how it is judged and
//! shown, over plain data. No Kubernetes client, no async runtime, no clock
//! and no I/O — the dependencies of this crate make that a compile-time
//! fact (docs/architecture.md#crates). The `kubectl-fleet` crate re-exports
//! these modules, so `kubectl_fleet::api` is this crate's [`api`].
//!
//! - [`api`]: the `federation.kubectl-fleet.dev/v1alpha1` types and their CRDs.
//! - [`fleet`]: pure fleet logic (phase, RBAC rules, signals, correlation,
//!   cascades, remediation policy); every function takes `now`.
//! - [`render`]: tables and machine-readable views.
//! - [`manifests`]: the objects and files the product ships or applies
//!   (alert rules, dashboard, ServiceMonitor, RBAC identities, admission
//!   policies).

// Items are `pub(crate)` unless another crate uses them, and the docs of
// public items still link to the private ones they explain: those links
// resolve in `cargo doc --document-private-items`, the way to read this
// crate's docs.
#![allow(rustdoc::private_intra_doc_links)]

// kube-derive's `CustomResource` derives `KubeSchema` on the root type
// (for its `validation` rules) without passing on `crates(kube_core = …)`,
// so that expansion names `::kube::core`: this crate answers to that name,
// with kube-core behind it, rather than depending on kube (whose client
// would then be one feature away from this crate).
extern crate self as kube;
mod core {
    pub use kube_core::*;
}

pub mod api;
pub mod fleet;
pub mod manifests;
pub mod render;
