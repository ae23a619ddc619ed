//! Pure fleet logic over plain data, shared by the CLI and the operator:
//! phase from heartbeat staleness, the per-site RBAC identity, signal
//! extraction, cross-cluster correlation and cascades, the remediation
//! policy, and kubectl-like ages. No I/O happens here.

pub mod age;
pub mod correlation;
pub mod inventory;
pub mod phase;
pub mod policy;
pub mod rbac;
pub mod signals;
pub mod summary;
