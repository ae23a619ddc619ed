//! What the integration tests share, in one module: `cli` runs the built
//! `kubectl-fleet` against a kube-sandbox hub; `kubectl` is the one runner
//! of the real kubectl ([`Kubectl`]: kubeconfig, args, stdin → [`Run`]);
//! `table` finds cells of the tables users read by their header;
//! `tools` finds the tools a test drives (a missing one fails under `CI`,
//! else is skipped out loud); `operator` starts hubs, members and operator
//! processes (killed by PID on drop), mints site identities like `kubectl
//! fleet register` does and polls with deadlines; `lane` says which API
//! server a hub runs on (kube-sandbox alone, or in front of the real one)
//! and runs a test on both (`on_both_lanes!`). All are re-exported here:
//! `use crate::support::*`.

mod cli;
mod crds;
mod kubectl;
#[macro_use]
mod lane;
mod operator;
mod table;
mod tools;

pub use cli::*;
pub use crds::*;
pub use kubectl::*;
pub use lane::*;
pub use operator::*;
pub use table::*;
pub use tools::*;
