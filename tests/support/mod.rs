//! What the integration tests share, in one module: `cli` runs the built
//! `kubectl-fleet` (and the real kubectl) against a kube-sandbox hub;
//! `operator` starts hubs, members and operator processes (killed by PID
//! on drop), mints site identities like `kubectl fleet register` does and
//! polls with deadlines. Both are re-exported here: `use crate::support::*`.

mod cli;
mod crds;
mod operator;

pub use cli::*;
pub use crds::*;
pub use operator::*;
