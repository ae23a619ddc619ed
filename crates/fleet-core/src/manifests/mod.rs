//! Manifest builders: the Kubernetes objects and configuration files the
//! product ships or applies, built as values (`render` is for what a user
//! reads; this is for what a cluster or Prometheus reads).
//!
//! - [`admission`]: the ValidatingAdmissionPolicies that keep sites off the
//!   hub-owned status keys and off other sites' tokens.
//! - [`monitoring`]: the alert rules, Alertmanager inhibitions, Grafana
//!   dashboard, ServiceMonitor and the scraper's identity.
//! - [`rbac`]: a site's identity objects (ServiceAccount, roles, bindings)
//!   on the hub and on a Pull member, and the hub's grant of a Pull
//!   site's Secret.

pub mod admission;
pub mod monitoring;
pub mod rbac;
