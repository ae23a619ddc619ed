//! What this build is and what it expects of the cluster: a leaf the
//! roles read (the edge and the prober report the version, both roles
//! check the CRD).

/// The build version, reported as `status.observedVersion`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Name of the CRD whose absence stops the operator.
pub const CRD_NAME: &str = "federatedclusters.federation.kubectl-fleet.dev";

/// Name of the CRD of the sites' leases (`api::lease`).
pub const LEASE_CRD_NAME: &str = "federatedclusterleases.federation.kubectl-fleet.dev";
