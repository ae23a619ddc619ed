//! How fast the hub writes site statuses: bursts of up to
//! `--status-write-burst` writes as fast as they go, then at most
//! `--status-write-qps` a second (a client's `--kube-api-qps` and
//! `--kube-api-burst`, for status writes), so that a fleet-wide
//! transition (every site Stale at once after a WAN cut) is written at a
//! pace the API server and etcd absorb instead of all at once, while a
//! region's outage is written as fast as before. The fleet summary, the metrics and the REST API do not wait for
//! these writes: they hold the hub's judgement at once
//! ([`super::Hub::judged_sites`]).
//!
//! A generic cell rate algorithm (the leaky bucket as a meter, one
//! timestamp of state) rather than a rate-limiting crate: one limiter, one
//! call site, no new dependency (docs/architecture.md#status-writes).

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// The hub's status writes a second unless `--status-write-qps` says
/// otherwise.
pub const DEFAULT_STATUS_WRITE_QPS: u32 = 200;

/// The writes a burst may hold unless `--status-write-burst` says
/// otherwise: ten seconds' worth at the default rate.
pub const DEFAULT_STATUS_WRITE_BURST: u32 = 2_000;

/// A write rate: [`WriteBudget::slot`] lets writes go at once while the
/// burst lasts, then paces callers one emission interval apart, in the
/// order they asked.
#[derive(Debug)]
pub struct WriteBudget {
    /// One write's share of a second.
    emission: Duration,
    /// How far ahead of its theoretical time a write may go: the burst
    /// less one write.
    tolerance: Duration,
    /// When the next write would be due were writes perfectly even.
    theoretical: Mutex<Option<Instant>>,
}

impl WriteBudget {
    /// At most `per_second` writes a second (at least one) after bursts
    /// of up to `burst` (at least one).
    pub fn new(per_second: u32, burst: u32) -> Self {
        let emission = Duration::from_secs(1) / per_second.max(1);
        Self {
            emission,
            tolerance: emission * (burst.max(1) - 1),
            theoretical: Mutex::new(None),
        }
    }

    /// Takes the next write's place in the rate: None when it may go now,
    /// else when it may go (the caller waits until then).
    pub fn slot(&self) -> Option<Instant> {
        let now = Instant::now();
        Some(self.reserve(now)).filter(|at| *at > now)
    }

    /// Reserves the next write at `now`: when it may go.
    fn reserve(&self, now: Instant) -> Instant {
        let mut theoretical = self.theoretical.lock().unwrap_or_else(|p| p.into_inner());
        let due = theoretical.map_or(now, |t| t.max(now));
        *theoretical = Some(due + self.emission);
        due.checked_sub(self.tolerance)
            .map_or(now, |at| at.max(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// When each of `n` writes asked for at `at` may go, as offsets from `t0`.
    fn go(budget: &WriteBudget, t0: Instant, at: Duration, n: usize) -> Vec<Duration> {
        (0..n).map(|_| budget.reserve(t0 + at) - t0).collect()
    }

    /// A burst goes at once; the rest follow at the rate, so 3 seconds'
    /// worth of writes, a burst of one second's worth, take 2 seconds.
    #[test]
    fn writes_burst_one_second_then_follow_the_rate() {
        let (budget, t0) = (WriteBudget::new(50, 50), Instant::now());
        let at = go(&budget, t0, Duration::ZERO, 150);
        assert!(
            at[..50].iter().all(|d| d.is_zero()),
            "the burst waits for nothing"
        );
        assert_eq!(at[50], Duration::from_millis(20));
        assert_eq!(at[149], Duration::from_secs(2));
        assert!(at.windows(2).all(|w| w[0] <= w[1]), "in the order asked");
    }

    /// An idle budget refills: after a pause, a whole burst goes at once
    /// again, never more.
    #[test]
    fn an_idle_budget_refills_up_to_one_burst() {
        let (budget, t0) = (WriteBudget::new(10, 10), Instant::now());
        go(&budget, t0, Duration::ZERO, 10);
        let later = Duration::from_secs(60);
        let at = go(&budget, t0, later, 11);
        assert!(at[..10].iter().all(|d| *d == later), "{at:?}");
        assert_eq!(
            at[10],
            later + Duration::from_millis(100),
            "the 11th waits its turn"
        );
    }

    /// A burst larger than the rate: 1,000 writes at once, then 10 a
    /// second.
    #[test]
    fn a_burst_may_hold_more_than_a_seconds_worth() {
        let (budget, t0) = (WriteBudget::new(10, 1_000), Instant::now());
        let at = go(&budget, t0, Duration::ZERO, 1_010);
        assert!(at[..1_000].iter().all(|d| d.is_zero()));
        assert_eq!(at[1_000], Duration::from_millis(100));
        assert_eq!(at[1_009], Duration::from_secs(1));
    }

    /// Writers asking at once are spread one emission interval apart, and
    /// a writer that waits for its slot waits that long.
    #[tokio::test]
    async fn writers_asking_at_once_share_the_rate() {
        let (budget, t0) = (WriteBudget::new(1, 1), Instant::now());
        assert_eq!(
            go(&budget, t0, Duration::ZERO, 4),
            (0..4).map(Duration::from_secs).collect::<Vec<_>>(),
            "one write a second"
        );
        let budget = WriteBudget::new(20, 20);
        let start = Instant::now();
        for _ in 0..22 {
            if let Some(at) = budget.slot() {
                tokio::time::sleep_until(at).await;
            }
        }
        assert!(
            start.elapsed() >= Duration::from_millis(100),
            "the 22nd write waited two slots"
        );
    }
}
