//! Leader election for the hub over a coordination.k8s.io Lease.
//!
//! kube-runtime 5 ships no elector, so this is the client-go algorithm in
//! small: the leader renews the Lease every `lease_duration / 3` with a
//! resourceVersion-guarded replace; a standby takes over only after it has
//! seen the same Lease record unchanged for a whole `lease_duration`,
//! measured on its *own* monotonic clock (so clock skew between replicas
//! cannot make a standby steal a live lease). A leader that cannot renew
//! steps down two thirds of the duration after it *sent* its last
//! successful renewal, before any standby may take over, so two replicas
//! never both believe they lead; a round is cut off at that deadline, so a
//! renewal the API server holds (or kube's client retries) cannot keep it
//! acting longer ([`LeaderElector::round_limit`]).
//!
//! A standby watches the Lease as well as reading it once per retry
//! period: each renewal is observed as it happens, so its "unchanged
//! since" time tracks the leader's last renewal closely, and it attempts
//! the takeover at exactly that time plus the lease duration
//! ([`LeaderElector::takeover_in`]) instead of at its next poll. Failover
//! after a leader's death is then at most one lease duration after the
//! leader's last renewal (plus the watch's delivery delay); a standby can
//! still never count from before a renewal was written, so it never takes
//! a live lease.
//!
//! Both clocks are injectable ([`LeaderElector::with_clocks`]) so tests can
//! step time instead of sleeping through lease durations.

use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::Api;
use tokio::sync::watch;

use super::clock::Clock;
use crate::k8s::lease::{create_lease, get_lease, lease_changes, replace_lease};
use crate::k8s::{is_conflict, source_chain};

/// A monotonic clock: time elapsed since an arbitrary fixed origin. The
/// elector measures how long a Lease record stayed unchanged, and how long
/// ago it renewed, on this clock only.
pub type Monotonic = Arc<dyn Fn() -> Duration + Send + Sync>;

/// The process's monotonic clock ([`Instant`]), from the moment of the call.
pub fn system_monotonic() -> Monotonic {
    let origin = Instant::now();
    Arc::new(move || origin.elapsed())
}

/// What an elector needs to know.
#[derive(Clone, Debug)]
pub struct ElectionConfig {
    /// Namespace of the Lease.
    pub namespace: String,
    /// Name of the Lease.
    pub name: String,
    /// This replica's identity, unique per process.
    pub identity: String,
    /// How long a lease stays valid without renewal.
    pub lease_duration: Duration,
}

impl ElectionConfig {
    /// How often the leader renews and a standby retries.
    pub fn retry_period(&self) -> Duration {
        (self.lease_duration / 3).max(Duration::from_millis(100))
    }

    /// How long a leader may go without a successful renewal before it
    /// stops acting as leader (strictly less than the lease duration).
    pub fn renew_deadline(&self) -> Duration {
        self.lease_duration * 2 / 3
    }
}

/// Errors talking to the Lease API.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// Reading the Lease failed.
    #[error("reading lease {namespace}/{name}")]
    Get {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
    /// Writing the Lease failed for another reason than a lost race.
    #[error("writing lease {namespace}/{name}")]
    Write {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
}

/// The part of a Lease that changes when its holder renews it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Record {
    holder: Option<String>,
    renew_time: Option<Timestamp>,
    transitions: i32,
    resource_version: Option<String>,
    /// `leaseDurationSeconds` as the holder wrote it.
    duration: Duration,
}

/// One replica's elector state.
pub struct LeaderElector {
    api: Api<Lease>,
    cfg: ElectionConfig,
    /// The last record seen and when (local monotonic clock) it was first seen.
    observed: Option<(Record, Duration)>,
    /// When this replica last renewed successfully (monotonic clock).
    last_renewal: Option<Duration>,
    /// Wall clock for the Lease's acquire and renew times (informational
    /// for other readers; never used to judge expiry).
    wall: Clock,
    /// The clock expiry and the renew deadline are judged on.
    monotonic: Monotonic,
}

impl LeaderElector {
    /// An elector for `cfg` using `api` (the Lease API in `cfg.namespace`).
    pub fn new(api: Api<Lease>, cfg: ElectionConfig) -> Self {
        Self {
            api,
            cfg,
            observed: None,
            last_renewal: None,
            wall: Arc::new(Timestamp::now),
            monotonic: system_monotonic(),
        }
    }

    /// The same elector reading `wall` and `monotonic` instead of the
    /// system clocks.
    pub fn with_clocks(mut self, wall: Clock, monotonic: Monotonic) -> Self {
        self.wall = wall;
        self.monotonic = monotonic;
        self
    }

    /// The configuration this elector runs with.
    pub fn config(&self) -> &ElectionConfig {
        &self.cfg
    }

    fn spec_for_me(&self, acquire: Option<MicroTime>, transitions: i32) -> LeaseSpec {
        let now = MicroTime((self.wall)());
        LeaseSpec {
            holder_identity: Some(self.cfg.identity.clone()),
            lease_duration_seconds: Some(self.cfg.lease_duration.as_secs().max(1) as i32),
            acquire_time: Some(acquire.unwrap_or_else(|| now.clone())),
            renew_time: Some(now),
            lease_transitions: Some(transitions),
            ..Default::default()
        }
    }

    fn record_of(lease: &Lease) -> Record {
        let spec = lease.spec.clone().unwrap_or_default();
        Record {
            holder: spec.holder_identity.filter(|h| !h.is_empty()),
            renew_time: spec.renew_time.map(|t| t.0),
            transitions: spec.lease_transitions.unwrap_or(0),
            resource_version: lease.metadata.resource_version.clone(),
            duration: Duration::from_secs(spec.lease_duration_seconds.unwrap_or(0).max(0) as u64),
        }
    }

    /// Records the Lease as read or as a watch delivered it: a record that
    /// differs from the last one seen starts a new "unchanged since" time on
    /// the monotonic clock. Feeding it every change as it happens is what
    /// makes [`LeaderElector::takeover_in`] exact.
    pub fn observe(&mut self, lease: &Lease) {
        let record = Self::record_of(lease);
        let changed = self.observed.as_ref().is_none_or(|(r, _)| {
            // A watch may deliver an older version after a newer read:
            // never go back to it.
            *r != record && !Self::older(&record, r)
        });
        if changed {
            self.observed = Some((record, (self.monotonic)()));
        }
    }

    /// Whether `a` is an older version of the Lease than `b` (both numeric
    /// resourceVersions, as kube-sandbox and etcd give; otherwise unknown,
    /// so not older).
    fn older(a: &Record, b: &Record) -> bool {
        let n = |r: &Record| r.resource_version.as_deref()?.parse::<u64>().ok();
        matches!((n(a), n(b)), (Some(a), Some(b)) if a < b)
    }

    /// For a standby: how long until the Lease record it last observed has
    /// stood still for its full duration, so that a round then takes it
    /// over (zero when it is free now). None when this replica holds it or
    /// has seen no record yet.
    pub fn takeover_in(&self) -> Option<Duration> {
        let (record, at) = self.observed.as_ref()?;
        if record.holder.as_deref() == Some(self.cfg.identity.as_str()) {
            return None;
        }
        if record.holder.is_none() {
            return Some(Duration::ZERO);
        }
        // Strictly past the duration: the round compares with `>`.
        let due = *at + record.duration + Duration::from_millis(1);
        Some(due.saturating_sub((self.monotonic)()))
    }

    fn write_err(&self, source: kube::Error) -> LeaseError {
        LeaseError::Write {
            namespace: self.cfg.namespace.clone(),
            name: self.cfg.name.clone(),
            source,
        }
    }

    /// One election round: acquire the Lease if free or expired, renew it if
    /// held. Returns whether this replica holds it now. A lost race (409) is
    /// not an error, just `Ok(false)`.
    pub async fn try_acquire_or_renew(&mut self) -> Result<bool, LeaseError> {
        let current = get_lease(&self.api, &self.cfg.name)
            .await
            .map_err(|source| LeaseError::Get {
                namespace: self.cfg.namespace.clone(),
                name: self.cfg.name.clone(),
                source,
            })?;
        // A renewal counts from before it was sent: the server may have
        // written it any time after this.
        let attempt = (self.monotonic)();
        let Some(lease) = current else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.cfg.name.clone()),
                    namespace: Some(self.cfg.namespace.clone()),
                    ..Default::default()
                },
                spec: Some(self.spec_for_me(None, 0)),
            };
            return match create_lease(&self.api, &lease).await {
                Ok(created) => {
                    self.observe(&created);
                    self.last_renewal = Some(attempt);
                    Ok(true)
                }
                Err(e) if is_conflict(&e) => Ok(false),
                Err(e) => Err(self.write_err(e)),
            };
        };
        self.observe(&lease);
        let record = Self::record_of(&lease);
        let spec = lease.spec.clone().unwrap_or_default();
        let mine = record.holder.as_deref() == Some(self.cfg.identity.as_str());
        let duration = record.duration;
        let now = (self.monotonic)();
        let unchanged_for = self
            .observed
            .as_ref()
            .map(|(_, at)| now.saturating_sub(*at))
            .unwrap_or_default();
        let free = record.holder.is_none() || unchanged_for > duration;
        if !mine && !free {
            self.last_renewal = None;
            return Ok(false);
        }
        let (acquire, transitions) = if mine {
            (spec.acquire_time.clone(), record.transitions)
        } else {
            (None, record.transitions + 1)
        };
        let mut next = lease.clone();
        next.spec = Some(self.spec_for_me(acquire, transitions));
        match replace_lease(&self.api, &next).await {
            Ok(written) => {
                self.observe(&written);
                self.last_renewal = Some(attempt);
                Ok(true)
            }
            Err(e) if is_conflict(&e) => Ok(false),
            Err(e) => Err(self.write_err(e)),
        }
    }

    /// Whether a leader that just failed to renew must stop acting.
    pub fn past_renew_deadline(&self) -> bool {
        let now = (self.monotonic)();
        self.last_renewal
            .is_none_or(|at| now.saturating_sub(at) >= self.cfg.renew_deadline())
    }

    /// How long the next round may take: for a leader, the time left
    /// until its renew deadline (a round that ends later could not keep it
    /// leading); for a standby, the renew deadline (the record it read is
    /// stale by then).
    pub fn round_limit(&self, leading: bool) -> Duration {
        let deadline = self.cfg.renew_deadline();
        match self.last_renewal {
            Some(at) if leading => deadline.saturating_sub((self.monotonic)().saturating_sub(at)),
            _ => deadline,
        }
    }

    /// Gives the Lease up (on graceful shutdown) so a standby takes over at
    /// once instead of waiting out the lease duration.
    pub async fn release(&mut self) -> Result<(), LeaseError> {
        let Some(lease) = get_lease(&self.api, &self.cfg.name)
            .await
            .map_err(|source| LeaseError::Get {
                namespace: self.cfg.namespace.clone(),
                name: self.cfg.name.clone(),
                source,
            })?
        else {
            return Ok(());
        };
        let spec = lease.spec.clone().unwrap_or_default();
        if spec.holder_identity.as_deref() != Some(self.cfg.identity.as_str()) {
            return Ok(());
        }
        let mut next = lease.clone();
        next.spec = Some(LeaseSpec {
            holder_identity: None,
            lease_duration_seconds: Some(1),
            renew_time: Some(MicroTime((self.wall)())),
            ..spec
        });
        match replace_lease(&self.api, &next).await {
            Ok(_) => Ok(()),
            Err(e) if is_conflict(&e) => Ok(()),
            Err(e) => Err(self.write_err(e)),
        }
    }
}

/// Runs the election until `shutdown` turns true, publishing leadership on
/// `leading`. On shutdown a leader releases the Lease.
pub async fn run(
    mut elector: LeaderElector,
    leading: watch::Sender<bool>,
    mut shutdown: watch::Receiver<bool>,
) {
    let retry = elector.config().retry_period();
    let mut changes = std::pin::pin!(lease_changes(elector.api.clone(), &elector.config().name));
    let mut first = true;
    'rounds: loop {
        let was_leader = *leading.borrow();
        // A round is bounded by the time a leader has left to renew (a
        // standby's by the renew deadline): a request the API server holds,
        // or kube's client retries for minutes, would otherwise keep a
        // leader acting past its deadline while a standby takes over.
        let limit = elector.round_limit(was_leader);
        let round = tokio::time::timeout(limit, elector.try_acquire_or_renew()).await;
        let now_leader = match round {
            Ok(Ok(held)) => held,
            Ok(Err(err)) => {
                tracing::warn!(error = %err, cause = %source_chain(&err), "leader election round failed");
                was_leader && !elector.past_renew_deadline()
            }
            Err(_) => {
                tracing::warn!(limit = ?limit, "leader election round not answered in time");
                was_leader && !elector.past_renew_deadline()
            }
        };
        if now_leader != was_leader {
            if now_leader {
                tracing::info!(identity = %elector.config().identity, "became leader");
            } else {
                tracing::warn!(identity = %elector.config().identity, "lost leadership, standing by");
            }
            leading.send_replace(now_leader);
        } else if first && !now_leader {
            tracing::info!(identity = %elector.config().identity, "another replica leads, standing by");
        }
        first = false;
        // The leader renews every retry period. A standby reads the Lease
        // every retry period too (in case the watch is down), and sooner
        // when the record it watches will have stood still long enough.
        let next_round = |e: &LeaderElector, leading: bool| {
            let wait = if leading {
                retry
            } else {
                e.takeover_in().map_or(retry, |d| d.min(retry))
            };
            tokio::time::Instant::now() + wait
        };
        let mut deadline = next_round(&elector, now_leader);
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(deadline) => break,
                Some(change) = futures::StreamExt::next(&mut changes) => match change {
                    Ok(lease) => {
                        elector.observe(&lease);
                        if !*leading.borrow() {
                            deadline = next_round(&elector, false);
                        }
                    }
                    Err(err) => tracing::debug!(error = %err, "lease watch"),
                },
                _ = shutdown.wait_for(|s| *s) => break 'rounds,
            }
        }
    }
    if *leading.borrow() {
        leading.send_replace(false);
        // Bounded as a round is: an API server that holds the request must
        // not hold the shutdown (a standby then takes over a duration later).
        match tokio::time::timeout(retry, elector.release()).await {
            Ok(Ok(())) => tracing::info!("released the lease"),
            Ok(Err(err)) => tracing::warn!(error = %err, "could not release the lease on shutdown"),
            Err(_) => {
                tracing::warn!(limit = ?retry, "could not release the lease on shutdown: not answered in time")
            }
        }
    }
}
