//! Views and renderers: pure functions from fetched objects to a view
//! model, and from the view model to a `String` (tables, JSON, YAML).
//! Nothing here prints or talks to a cluster; callers decide where output
//! goes and whether colour is on (TTY, `NO_COLOR`, `--color`).
//!
//! - [`status`]: `kubectl fleet status` table (`-o table|wide`) and footer.
//! - [`report`]: the stable `-o json|yaml` schema of `status`.
//! - [`jsonpath`]: kubectl's `-o jsonpath=TEMPLATE` over that report.
//! - [`policy`]: `kubectl fleet policy`.
//! - [`incidents`]: `kubectl fleet incidents`.
//! - [`describe`]: `kubectl fleet describe SITE`.
//! - [`table`]: the shared kubectl-like plain table.
//! - [`safe`]: untrusted text made terminal-safe and cut to a cell width.
//! - [`totals`]: what the status views count over the sites they show.

mod decided;
pub mod describe;
pub mod incidents;
pub mod jsonpath;
pub mod policy;
pub mod report;
pub mod safe;
pub mod status;
pub mod table;
mod times;
pub mod totals;

#[cfg(test)]
mod tests;

pub use incidents::{CorrelationIncident, IncidentsReport, incidents_report, render_incidents};
pub use policy::{PolicyReport, policy_report, render_policy_table};
pub use report::{REPORT_API_VERSION, RenderError, StatusReport, status_report, to_json, to_yaml};
