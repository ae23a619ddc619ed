//! kube-sandbox: a loopback Kubernetes API server (HTTPS, the real wire
//! protocol for the subset kubectl-fleet uses, real RBAC semantics) for
//! tests, the demo and benchmarks. Never a dependency of the shipped binaries.

pub mod auth;
pub mod errors;
pub mod patch;
pub mod schema;
pub mod selector;
pub mod table;
