//! Pure fleet logic over plain data, shared by the CLI and the operator.
//! No I/O happens here; every function takes the clock (`now`) as an
//! argument so behaviour is reproducible in tests.
//!
//! - [`phase`]: phase from hub-observed heartbeat age, next requeue, clock skew.
//! - [`hub_status`]: the hub's judgement of a site ([`hub_status::judge`]): the hub-owned status to write, and when.
//! - [`status_patch`]: change-only edge merge patches and the hub's guarded patch.
//! - [`rbac`]: the per-site least-privilege identity and site-name validation.
//! - [`bucket`]: a site's bucket (0–255, a hash of its name), the label
//!   hub replicas will shard by.
//! - [`signals`]: failure signals from Pods, Nodes and inference services.
//! - [`inventory`]: GPU capacity and inference service counts.
//! - [`journal`]: the edge's dark-period journal and the summary it reports.
//! - [`correlation`]: cross-cluster correlations and cascades.
//! - [`outage`]: grouped outages (sites of one region going dark together).
//! - [`factors`]: what an incident's sites have in common that the others do not.
//! - [`policy`]: the remediation policy per tier and severity, and each
//!   signal's decision with the fleet's incidents.
//! - [`filter`]: which sites a view shows (tier, environment, region, phase,
//!   edge version, the sites of an incident).
//! - [`incident`]: one correlation, cascade or grouped outage by its id.
//! - [`maintenance`]: the maintenance window `kubectl fleet cordon` writes.
//! - [`connectivity`]: expected connectivity (`spec.connectivity`): when a
//!   silent site is Sleeping or late to wake.
//! - [`versions`]: which edge versions run where, counted in bounded memory.
//! - [`probe`]: Pull-mode probe outcomes, failure reasons and the access
//!   remediation needs.
//! - [`summary`]: fleet-wide totals for `FederationStatus` and the CLI footer,
//!   and the phase every view shows for a site.
//! - [`liveness`]: whether a hub is judging the fleet, from the leader's record.
//! - [`age`]: kubectl-like ages.
//! - [`duration`]: durations as flags take them, and back.
//! - [`bounds`]: the caps on edge-owned status text, applied before writing.
//! - [`verbosity`]: kubectl's `-v=LEVEL` and the log detail each level means.
//! - `fixtures`: builders of the API types for tests of every module
//!   (a judged site's conditions come from [`hub_status`], so they live
//!   here, above `api`), compiled only for tests (the crate's own unit
//!   tests, and through the `fixtures` feature the library's, `tests/` and
//!   `xtask/`; never the binaries).

pub mod age;
pub mod bounds;
pub mod bucket;
pub mod connectivity;
pub mod correlation;
pub mod duration;
pub mod factors;
pub mod filter;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
pub mod hub_status;
pub mod incident;
pub mod inventory;
pub mod journal;
pub mod liveness;
pub mod maintenance;
pub mod outage;
pub mod phase;
pub mod policy;
pub mod probe;
pub mod rbac;
pub mod signals;
pub mod status_patch;
pub mod suggest;
pub mod summary;
pub mod verbosity;
pub mod versions;
