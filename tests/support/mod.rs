//! What the integration tests share, in one module: `cli` runs the built
//! `kubectl-fleet` (and the real kubectl) against a kube-sandbox hub;
//! `operator` starts hubs, members and operator processes (killed by PID
//! on drop), mints site identities like `kubectl fleet register` does and
//! polls with deadlines; `lane` says which API server a hub runs on
//! (kube-sandbox alone, or in front of the real one) and runs a test on
//! both (`on_both_lanes!`). All are re-exported here: `use crate::support::*`.

mod cli;
mod crds;
#[macro_use]
mod lane;
mod operator;

pub use cli::*;
pub use crds::*;
pub use lane::*;
pub use operator::*;
