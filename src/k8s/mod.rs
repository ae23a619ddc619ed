//! k8s (filled in by its issue).
pub mod edge_token;
pub mod lease;
pub mod member;
pub mod site_status;
