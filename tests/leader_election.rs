//! The hub's leader election, deterministic: two electors against a real
//! Lease on kube-sandbox, with a stepped clock instead of sleeps.
//! Every negative check ("does not take over") follows a round that is
//! proven to have run (it returned, and the Lease it read is the one shown).

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use kube_sandbox::Sandbox;
use kubectl_fleet::fleet::fixtures::fixture_now;
use kubectl_fleet::operator::leader::{ElectionConfig, LeaderElector};
use support::{admin, ensure_namespace};

const NS: &str = "fleet-system";
/// The hub's default `--lease-duration`.
const LEASE: Duration = Duration::from_secs(15);

/// A clock the test steps by hand, in milliseconds since its origin.
#[derive(Clone, Default)]
struct SteppedClock(Arc<AtomicU64>);

impl SteppedClock {
    fn advance(&self, d: Duration) {
        self.0.fetch_add(d.as_millis() as u64, Ordering::SeqCst);
    }

    fn now(&self) -> Duration {
        Duration::from_millis(self.0.load(Ordering::SeqCst))
    }
}

struct Fixture {
    sb: Sandbox,
    api: Api<Lease>,
    clock: SteppedClock,
}

impl Fixture {
    async fn new() -> Self {
        let sb = Sandbox::start();
        let client = admin(&sb).await;
        ensure_namespace(&client, NS).await;
        Fixture {
            api: Api::namespaced(client, NS),
            sb,
            clock: SteppedClock::default(),
        }
    }

    fn elector(&self, identity: &str) -> LeaderElector {
        let cfg = ElectionConfig {
            namespace: NS.into(),
            name: "fleet-hub".into(),
            identity: identity.into(),
            lease_duration: LEASE,
        };
        let (wall, mono) = (self.clock.clone(), self.clock.clone());
        // The wall clock moves with the stepped one: a renewal that wrote
        // the same renewTime would be a no-op update (same resourceVersion)
        // and look like a dead leader to the standby.
        LeaderElector::new(self.api.clone(), cfg).with_clocks(
            Arc::new(move || fixture_now() + jiff::SignedDuration::try_from(wall.now()).unwrap()),
            Arc::new(move || mono.now()),
        )
    }

    async fn holder(&self) -> Option<String> {
        self.api
            .get("fleet-hub")
            .await
            .unwrap()
            .spec
            .and_then(|s| s.holder_identity)
    }
}

#[tokio::test]
async fn a_standby_takes_over_only_after_the_lease_stood_still_for_its_duration() {
    let f = Fixture::new().await;
    let (mut a, mut b) = (f.elector("hub-a"), f.elector("hub-b"));
    assert!(a.try_acquire_or_renew().await.unwrap());
    assert!(!b.try_acquire_or_renew().await.unwrap());
    assert_eq!(f.holder().await.as_deref(), Some("hub-a"));
    // hub-a dies (no more renewals). Just under the duration: still held.
    f.clock.advance(LEASE - Duration::from_millis(1));
    assert!(!b.try_acquire_or_renew().await.unwrap());
    assert_eq!(f.holder().await.as_deref(), Some("hub-a"));
    f.clock.advance(Duration::from_millis(2));
    assert!(b.try_acquire_or_renew().await.unwrap());
    let lease = f.api.get("fleet-hub").await.unwrap().spec.unwrap();
    assert_eq!(lease.holder_identity.as_deref(), Some("hub-b"));
    assert_eq!(lease.lease_transitions, Some(1));
    // The old leader, back, sees a fresh record and stands by.
    assert!(!a.try_acquire_or_renew().await.unwrap());
    assert_eq!(f.holder().await.as_deref(), Some("hub-b"));
}

#[tokio::test]
async fn a_renewing_leader_is_never_displaced() {
    let f = Fixture::new().await;
    let (mut a, mut b) = (f.elector("hub-a"), f.elector("hub-b"));
    let retry = a.config().retry_period();
    // Ten minutes of clock: hub-a renews every retry period, hub-b tries
    // every second.
    let mut since_renewal = Duration::ZERO;
    assert!(a.try_acquire_or_renew().await.unwrap());
    for _ in 0..600 {
        f.clock.advance(Duration::from_secs(1));
        since_renewal += Duration::from_secs(1);
        if since_renewal >= retry {
            assert!(a.try_acquire_or_renew().await.unwrap());
            since_renewal = Duration::ZERO;
        }
        assert!(!b.try_acquire_or_renew().await.unwrap());
    }
    assert_eq!(f.holder().await.as_deref(), Some("hub-a"));
}

#[tokio::test]
async fn a_leader_that_cannot_renew_steps_down_before_a_standby_may_take_over() {
    let f = Fixture::new().await;
    let (mut a, mut b) = (f.elector("hub-a"), f.elector("hub-b"));
    assert!(a.try_acquire_or_renew().await.unwrap());
    assert!(!b.try_acquire_or_renew().await.unwrap());
    let deadline = a.config().renew_deadline();
    assert!(deadline < LEASE);
    f.sb.controls().set_outage(true);
    f.clock.advance(deadline - Duration::from_millis(1));
    assert!(a.try_acquire_or_renew().await.is_err(), "the API is down");
    assert!(!a.past_renew_deadline(), "still within the renew deadline");
    f.clock.advance(Duration::from_millis(1));
    assert!(a.past_renew_deadline(), "must stop acting as leader now");
    f.sb.controls().set_outage(false);
    // The standby has seen the same record since time 0; it may take over
    // only once the full duration has passed, after hub-a stepped down.
    assert!(!b.try_acquire_or_renew().await.unwrap());
    f.clock.advance(LEASE - deadline + Duration::from_millis(1));
    assert!(b.try_acquire_or_renew().await.unwrap());
}

#[tokio::test]
async fn a_released_lease_is_taken_at_once() {
    let f = Fixture::new().await;
    let (mut a, mut b) = (f.elector("hub-a"), f.elector("hub-b"));
    assert!(a.try_acquire_or_renew().await.unwrap());
    assert!(!b.try_acquire_or_renew().await.unwrap());
    a.release().await.unwrap();
    assert_eq!(f.holder().await, None);
    assert!(
        b.try_acquire_or_renew().await.unwrap(),
        "no clock step needed"
    );
}

/// Leader death to the standby's first write, on the stepped clock with the
/// default Lease settings, over 20 deaths spread over the leader's renew
/// cycle, with the standby driven as `leader::run` drives it: it observes
/// every Lease change through a real watch as it happens (the test waits for
/// each renewal's event before moving the clock), reads the Lease once per
/// retry period, and attempts the takeover at exactly
/// [`LeaderElector::takeover_in`]. Printed for docs/reliability.md; asserted
/// against the bound the algorithm gives: at most one lease duration (plus
/// 1 ms) after the last renewal, so never more than the lease duration after
/// the death, and never a live lease.
#[tokio::test]
async fn failover_time_over_20_leader_deaths() {
    use futures::StreamExt as _;
    use kubectl_fleet::k8s::lease::lease_changes;
    let mut times = Vec::new();
    for k in 0..20u32 {
        let f = Fixture::new().await;
        let (mut a, mut b) = (f.elector("hub-a"), f.elector("hub-b"));
        let mut changes = std::pin::pin!(lease_changes(f.api.clone(), "fleet-hub"));
        let retry = a.config().retry_period();
        // The leader dies k/20 of the way through its fourth renew cycle;
        // the standby polls at its own phase.
        let death = 4 * retry + retry * k / 20;
        let b_phase = retry * ((k * 7) % 20) / 20;
        let (mut next_renewal, mut next_poll) = (Duration::ZERO, b_phase);
        let mut delivered = 0u64;
        loop {
            let now = f.clock.now();
            if now == next_renewal && now < death {
                assert!(a.try_acquire_or_renew().await.unwrap());
                next_renewal += retry;
                // Sync point: the standby's watch delivers this version.
                let rv: u64 = f
                    .api
                    .get("fleet-hub")
                    .await
                    .unwrap()
                    .metadata
                    .resource_version
                    .unwrap()
                    .parse()
                    .unwrap();
                while delivered < rv {
                    let lease = changes.next().await.unwrap().unwrap();
                    delivered = lease
                        .metadata
                        .resource_version
                        .as_deref()
                        .unwrap()
                        .parse()
                        .unwrap();
                    b.observe(&lease);
                }
            }
            let due = b.takeover_in().is_some_and(|d| d.is_zero());
            if now == next_poll || due {
                if now == next_poll {
                    next_poll += retry;
                }
                if b.try_acquire_or_renew().await.unwrap() {
                    assert!(now > death, "the standby took a live lease at {now:?}");
                    times.push(now - death);
                    break;
                }
            }
            // Move the clock to the next thing that happens.
            let mut next = next_poll;
            if next_renewal < death {
                next = next.min(next_renewal);
            }
            if let Some(d) = b.takeover_in() {
                next = next.min(now + d);
            }
            if now < death {
                next = next.min(death);
            }
            f.clock.advance(next - now);
        }
    }
    times.sort();
    let secs: Vec<f64> = times.iter().map(Duration::as_secs_f64).collect();
    println!(
        "failover (lease {LEASE:?}, retry {:?}): min {:.3} s, median {:.3} s, max {:.3} s; all: {secs:?}",
        LEASE / 3,
        secs[0],
        secs[secs.len() / 2],
        secs[secs.len() - 1],
    );
    let bound = LEASE + Duration::from_millis(1);
    assert!(times.iter().all(|t| *t <= bound), "{secs:?} over {bound:?}");
}

/// A leader whose renewal goes unanswered (an API server that hangs on it;
/// kube's client retrying a 503 for minutes is the same to the elector)
/// stops acting as leader at its renew deadline: never two leaders. Both
/// replicas run as the hub runs them (`leader::run`, the system clocks);
/// only hub-a's next renewal is held (answered 60 s late but written at
/// once, as a write in flight is), so the standby sees it and may take the
/// lease a duration later, and hub-a may renew it again once it stood down.
/// A shutdown while the Lease's writes are held ends within seconds.
#[tokio::test]
async fn a_leader_whose_renewal_hangs_steps_down_and_two_never_lead() {
    use kube_sandbox::FaultRule;
    use kubectl_fleet::operator::leader;
    use tokio::sync::watch;
    let f = Fixture::new().await;
    let lease = Duration::from_secs(6);
    let elector = |identity: &str| {
        let cfg = ElectionConfig {
            namespace: NS.into(),
            name: "fleet-hub".into(),
            identity: identity.into(),
            lease_duration: lease,
        };
        LeaderElector::new(f.api.clone(), cfg)
    };
    let (stop_tx, stop) = watch::channel(false);
    let (a_tx, mut a_leads) = watch::channel(false);
    let a = tokio::spawn(leader::run(elector("hub-a"), a_tx, stop.clone()));
    tokio::time::timeout(Duration::from_secs(10), a_leads.wait_for(|l| *l))
        .await
        .expect("hub-a leads")
        .unwrap();
    let (b_tx, b_leads) = watch::channel(false);
    let b = tokio::spawn(leader::run(elector("hub-b"), b_tx, stop.clone()));
    f.sb.controls().fail(FaultRule {
        verb: Some("update".into()),
        path_contains: Some("/leases/fleet-hub".into()),
        status: 0,
        count: 1,
        delay: Duration::from_secs(60),
        ..Default::default()
    });
    let held = std::time::Instant::now();
    let mut stood_down = None;
    while held.elapsed() < 3 * lease {
        let (a_now, b_now) = (*a_leads.borrow(), *b_leads.borrow());
        assert!(
            !(a_now && b_now),
            "hub-a and hub-b both lead {:?} after hub-a's renewal was held",
            held.elapsed()
        );
        if !a_now && stood_down.is_none() {
            stood_down = Some(held.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let stood_down = stood_down.expect("hub-a stood down while its renewal was held");
    // Its last renewal was at most a retry period before the hold.
    let bound = lease / 3 + lease * 2 / 3 + Duration::from_secs(1);
    assert!(
        stood_down <= bound,
        "hub-a stood down {stood_down:?} after the hold"
    );
    assert!(
        *a_leads.borrow() || *b_leads.borrow(),
        "one of them leads again"
    );
    // Shut down while every write of the Lease is held: the leader's
    // release is given up after a retry period, not awaited for 60 s.
    f.sb.controls().fail(FaultRule {
        verb: Some("update".into()),
        path_contains: Some("/leases/fleet-hub".into()),
        status: 0,
        count: u32::MAX,
        delay: Duration::from_secs(60),
        ..Default::default()
    });
    stop_tx.send_replace(true);
    for run in [a, b] {
        tokio::time::timeout(Duration::from_secs(10), run)
            .await
            .expect("the election stops on shutdown, the release held")
            .unwrap();
    }
}
