//! A site's signal with the hub's decision on it, as the status report
//! carries it (a leaf: the report and its timestamp writers both use it).

use crate::api::Signal;
use crate::fleet::policy::SignalPolicy;

/// A site's signal and the hub's decision on it
/// (`fleet::policy::Incidents::decide`).
#[derive(Clone, Debug, PartialEq)]
pub struct DecidedSignal {
    /// The signal as the site reports it.
    pub signal: Signal,
    /// The decision: severity, tier, policy, the incidents that raised it.
    pub decision: SignalPolicy,
}
