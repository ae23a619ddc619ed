//! Time for the operator's loops: the injectable clock, the test-only
//! interval scale, and jitter. A leaf: the hub, the edge, the leader
//! elector, the prober and the summariser all read time through it.

use std::hash::{BuildHasher as _, Hasher as _};
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;

/// The hub's clock; injectable so tests can run hours of heartbeats in seconds.
pub type Clock = Arc<dyn Fn() -> Timestamp + Send + Sync>;

/// The effective heartbeat interval: `interval` times the test-only
/// `--interval-scale` (a nonsensical scale leaves it unchanged). The hub
/// and the edge both scale through this one function.
pub(crate) fn scaled(interval: Duration, scale: f64) -> Duration {
    if (scale - 1.0).abs() < f64::EPSILON || !(scale.is_finite() && scale > 0.0) {
        interval
    } else {
        interval.mul_f64(scale)
    }
}

/// `base` plus a random part of up to `spread`, so that many replicas or
/// sites retrying at once spread out.
pub fn jitter(base: Duration, spread: Duration) -> Duration {
    // A fresh RandomState is randomly keyed; that is all the randomness
    // jitter needs, without another dependency.
    let r = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    base + spread.mul_f64((r % 10_000) as f64 / 10_000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_scale_shrinks_the_interval() {
        let i = Duration::from_secs(30);
        assert_eq!(scaled(i, 0.1), Duration::from_secs(3));
        assert_eq!(scaled(i, 1.0), i);
        for nonsense in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(scaled(i, nonsense), i, "{nonsense}");
        }
    }
}
