//! Pull mode on the hub: the leader probes every `mode: Pull` site through
//! the kubeconfig in its `spec.kubeconfigSecretRef` (docs/architecture.md#the-life-of-a-site).
//!
//! - The pull Secrets of `fleet-system` are watched (only those labelled by
//!   `kubectl fleet register`); each site keeps one client, rebuilt only when
//!   its Secret's resourceVersion changes, so a rotated Secret takes effect
//!   on the next probe without a restart.
//! - Each site is probed every `heartbeatIntervalSeconds` (±10 % jitter),
//!   within a timeout (`--probe-timeout`, default `min(interval/2, 10s)`),
//!   at most `--probe-concurrency` at once. A probe reads the member with
//!   the edge's collector (`k8s::member::read_member` and
//!   `collect::edge_status`: one collector, two transports).
//! - A successful probe sends the edge's change-only merge patch of
//!   edge-owned keys, its heartbeat stamped with the hub clock: a steady
//!   site costs one small status patch per interval. A failed probe writes
//!   nothing itself.
//! - Every outcome is recorded in [`ProbeStats`] and then judged like any
//!   site by [`Hub::reconcile_site`]: phase from the last successful probe,
//!   `Connected` with the failure class as reason, `RemediationCapable`;
//!   written only on a transition.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt as _, watcher};

use tokio::sync::{Semaphore, watch};

use crate::api::{FederatedCluster, Mode};
use crate::fleet::probe::{
    ProbeFailure, ProbeOutcome, ProbeVerdict, RemediationAccess, remediation_access,
    remediation_needs,
};
use crate::fleet::rbac::FLEET_NAMESPACE;
use crate::fleet::signals::SignalHistory;
use crate::fleet::status_patch::{Accepted, report_patch};
use crate::k8s::member::{MemberError, read_member};
use crate::k8s::pull::{MemberKubeconfig, can_i, classify, pull_secret_watch, pull_secrets};
use crate::k8s::site_status::{patch_site_status, sites};
use crate::operator::collect::{edge_status, with_identity};
use crate::operator::credential::TokenClaims;
use crate::operator::hub::Hub;
use crate::render::safe::Untrusted;

/// Default of `--probe-concurrency`.
pub const DEFAULT_PROBE_CONCURRENCY: usize = 32;

/// Upper bound of the default probe timeout.
pub const MAX_DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Prober settings.
#[derive(Clone, Debug)]
pub struct ProberConfig {
    /// Per-probe timeout; None: `min(interval/2, 10s)` per site.
    pub timeout: Option<Duration>,
    /// Probes in flight at most.
    pub concurrency: usize,
}

impl Default for ProberConfig {
    fn default() -> Self {
        Self {
            timeout: None,
            concurrency: DEFAULT_PROBE_CONCURRENCY,
        }
    }
}

impl ProberConfig {
    /// The timeout of one probe of a site with this (effective) interval.
    pub fn timeout_for(&self, interval: Duration) -> Duration {
        self.timeout
            .unwrap_or_else(|| (interval / 2).min(MAX_DEFAULT_PROBE_TIMEOUT))
    }
}

/// Probe bookkeeping of one site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiteProbes {
    /// The latest verdict (what `Connected` and `RemediationCapable` say).
    pub verdict: ProbeVerdict,
    /// Probes run.
    pub probes: u64,
    /// Of those, failed ones.
    pub failures: u64,
    /// Sum of all probe durations.
    pub total: Duration,
    /// Probes that ended later than one interval after they were due (a
    /// queue for a concurrency slot plus the probe itself took too long).
    pub missed: u64,
}

/// What the prober has seen, per site, in memory: the latest verdict read by
/// the hub's judgement, and probe durations for the
/// `federation_health_check_duration_seconds` histogram (read them with
/// [`ProbeStats::snapshot`], or hook [`ProbeStats::record`]).
#[derive(Debug, Default)]
pub struct ProbeStats {
    sites: Mutex<HashMap<String, SiteProbes>>,
}

impl ProbeStats {
    /// Records one probe of `site`: how long it took and what it found.
    pub fn record(&self, site: &str, duration: Duration, verdict: ProbeVerdict, missed: bool) {
        let failed = matches!(verdict.outcome, ProbeOutcome::Failed { .. });
        let mut sites = self.sites.lock().unwrap_or_else(|p| p.into_inner());
        let entry = sites.entry(site.to_owned()).or_insert_with(|| SiteProbes {
            verdict: verdict.clone(),
            probes: 0,
            failures: 0,
            total: Duration::ZERO,
            missed: 0,
        });
        entry.verdict = verdict;
        entry.probes += 1;
        entry.failures += u64::from(failed);
        entry.total += duration;
        entry.missed += u64::from(missed);
    }

    /// The latest verdict for `site`, if it was probed by this process.
    pub fn verdict(&self, site: &str) -> Option<ProbeVerdict> {
        let sites = self.sites.lock().unwrap_or_else(|p| p.into_inner());
        sites.get(site).map(|s| s.verdict.clone())
    }

    /// Everything recorded, by site.
    pub fn snapshot(&self) -> HashMap<String, SiteProbes> {
        self.sites.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Forgets a site (deleted, or no longer in Pull mode).
    pub fn forget(&self, site: &str) {
        self.sites
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(site);
    }
}

/// A member client built from one version of a pull Secret.
struct Cached {
    resource_version: Option<String>,
    /// The client, or why the kubeconfig was refused.
    member: Result<Member, (ProbeFailure, String)>,
}

struct Member {
    client: kube::Client,
    server: String,
    insecure: bool,
    expires: Option<Timestamp>,
    /// Asked once per client.
    remediation: Option<RemediationAccess>,
}

/// The prober of one site: its client cache and change-only baseline.
struct SiteProber {
    name: String,
    hub: Arc<Hub>,
    sites: Store<FederatedCluster>,
    secrets: Store<Secret>,
    cfg: ProberConfig,
    cached: Option<Cached>,
    accepted: Option<Accepted>,
    history: SignalHistory,
}

fn failed(failure: ProbeFailure, message: impl Into<String>) -> ProbeOutcome {
    ProbeOutcome::Failed {
        failure,
        message: message.into(),
    }
}

impl SiteProber {
    fn site(&self) -> Option<Arc<FederatedCluster>> {
        self.sites.get(&ObjectRef::new(&self.name))
    }

    /// The member client for the site's Secret as it is now, rebuilt only
    /// when the Secret's resourceVersion changed.
    async fn member(
        &mut self,
        site: &FederatedCluster,
        timeout: Duration,
    ) -> Result<&mut Member, (ProbeFailure, String)> {
        let Some(r) = site.spec.kubeconfig_secret_ref.as_ref() else {
            self.cached = None;
            return Err((
                ProbeFailure::SecretNotFound,
                format!(
                    "spec.kubeconfigSecretRef is not set: re-run `kubectl fleet register {} --pull …`",
                    self.name
                ),
            ));
        };
        if r.namespace != FLEET_NAMESPACE {
            self.cached = None;
            return Err((
                ProbeFailure::SecretNotFound,
                format!(
                    "the hub reads pull Secrets only in {FLEET_NAMESPACE}, not {}",
                    r.namespace
                ),
            ));
        }
        let Some(secret) = self
            .secrets
            .get(&ObjectRef::new(&r.name).within(FLEET_NAMESPACE))
        else {
            self.cached = None;
            return Err((
                ProbeFailure::SecretNotFound,
                format!(
                    "Secret {FLEET_NAMESPACE}/{} not found (or not labelled by `kubectl fleet register`): re-run `kubectl fleet register {} --pull …`",
                    r.name, self.name
                ),
            ));
        };
        let rv = secret.metadata.resource_version.clone();
        if self
            .cached
            .as_ref()
            .is_none_or(|c| c.resource_version != rv)
        {
            if self.cached.is_some() {
                tracing::info!(site = %self.name, secret = %r.name, "pull Secret changed, using its new kubeconfig");
            }
            let member = match secret.data.as_ref().and_then(|d| d.get(&r.key)) {
                None => Err((
                    ProbeFailure::SecretNotFound,
                    format!("Secret {FLEET_NAMESPACE}/{} has no key {:?}", r.name, r.key),
                )),
                Some(bytes) => Self::build(&bytes.0, timeout).await,
            };
            self.cached = Some(Cached {
                resource_version: rv,
                member,
            });
        }
        match self.cached.as_mut().map(|c| &mut c.member) {
            Some(Ok(m)) => Ok(m),
            Some(Err(e)) => Err(e.clone()),
            None => unreachable!("cached above"),
        }
    }

    async fn build(bytes: &[u8], timeout: Duration) -> Result<Member, (ProbeFailure, String)> {
        let invalid =
            |e: crate::k8s::pull::KubeconfigRefused| (ProbeFailure::InvalidKubeconfig, e.0);
        let kc = MemberKubeconfig::parse(bytes).map_err(invalid)?;
        let client = kc.client(timeout).await.map_err(invalid)?;
        Ok(Member {
            client,
            server: kc.server().to_owned(),
            insecure: kc.insecure(),
            expires: kc
                .token()
                .and_then(TokenClaims::decode)
                .and_then(|c| c.expires_at),
            remediation: None,
        })
    }

    /// One probe: read the member, send the change-only patch, return the
    /// verdict and the site object to judge.
    async fn probe(
        &mut self,
        site: &FederatedCluster,
        timeout: Duration,
    ) -> (ProbeVerdict, Option<FederatedCluster>) {
        let started = tokio::time::Instant::now();
        let verdict = |outcome, remediation| ProbeVerdict {
            outcome,
            duration: started.elapsed(),
            remediation,
        };
        let tier = site.spec.tier;
        let member = match self.member(site, timeout).await {
            Ok(m) => m,
            Err((f, m)) => return (verdict(failed(f, m), None), None),
        };
        let client = member.client.clone();
        let server = member.server.clone();
        let read = tokio::time::timeout(timeout, async {
            let objs = read_member(&client).await?;
            let denied = if member.remediation.is_none() {
                let mut denied = Vec::new();
                for p in remediation_needs(tier) {
                    let allowed = can_i(&client, p)
                        .await
                        .map_err(|source| MemberError::Read {
                            what: "access reviews",
                            source,
                        })?;
                    if !allowed {
                        denied.push(p);
                    }
                }
                Some(denied)
            } else {
                None
            };
            Ok::<_, MemberError>((objs, denied))
        })
        .await;
        let (objs, denied) = match read {
            Err(_) => {
                let message = format!(
                    "{server} did not answer within the probe timeout ({}s)",
                    timeout.as_secs_f64()
                );
                return (verdict(failed(ProbeFailure::Timeout, message), None), None);
            }
            Ok(Err(MemberError::Read { source, .. })) => {
                let (f, m) = classify(&source, &server, &self.name);
                return (verdict(failed(f, m), None), None);
            }
            Ok(Ok(x)) => x,
        };
        if let Some(denied) = denied {
            member.remediation = Some(remediation_access(tier, &denied));
        }
        let remediation = member.remediation.clone();
        let insecure = member.insecure;
        let expires = member.expires;
        let now = Timestamp::from_second(Timestamp::now().as_second())
            .unwrap_or_else(|_| Timestamp::now());
        let status = edge_status(&objs, self.history.previous(site), now);
        self.history.record(status.signals());
        let mut status = with_identity(status, now, super::VERSION, expires, None);
        status.last_probe_duration_milliseconds =
            Some(i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX));
        let uid = site.metadata.uid.clone();
        let baseline = Accepted::baseline(&mut self.accepted, site);
        let (patch, next) = report_patch(Some(baseline), &status, now);
        let outcome = ProbeOutcome::Reached { insecure };
        match patch_site_status(&sites(self.hub.client()), &self.name, &patch).await {
            Ok(written) => {
                self.accepted = Some(Accepted { uid, status: next });
                (verdict(outcome, remediation), Some(written))
            }
            Err(e) => {
                // The member answered; only the hub write failed. The next
                // probe sends the whole difference again.
                self.accepted = None;
                tracing::warn!(site = %self.name, error = %e, "writing the probed status failed");
                (verdict(outcome, remediation), None)
            }
        }
    }

    /// Probes every interval until the site goes away or leaves Pull mode.
    async fn run(mut self, gate: Arc<Semaphore>, stats: Arc<ProbeStats>) {
        // Spread the first probes of many sites over a whole interval: the
        // probes of hung members (each holding a concurrency slot up to the
        // timeout) then stay spread out too, instead of arriving together
        // every interval and queueing the healthy ones behind them. A new
        // leader's first judgement of a Pull site thus takes up to one
        // interval, well inside the 3·I before it could turn Stale.
        let first = self
            .site()
            .map(|s| self.hub.effective_interval(&s))
            .unwrap_or_default();
        let mut due = tokio::time::Instant::now() + super::jitter(Duration::ZERO, first);
        loop {
            tokio::time::sleep_until(due).await;
            let Some(site) = self.site() else { return };
            if site.spec.mode != Mode::Pull {
                return;
            }
            let interval = self.hub.effective_interval(&site);
            let next_due = due + super::jitter(interval.mul_f64(0.9), interval.mul_f64(0.2));
            if !self.hub.is_leader() {
                // A standby keeps no client and writes nothing; when it takes
                // over it starts from what the hub holds.
                self.accepted = None;
                due = next_due;
                continue;
            }
            let timeout = self.cfg.timeout_for(interval);
            let Ok(_permit) = gate.acquire().await else {
                return;
            };
            // The Secret or the site may have changed while queued.
            let site = self.site().unwrap_or(site);
            let (verdict, written) = self.probe(&site, timeout).await;
            let missed = tokio::time::Instant::now() > due + interval;
            stats.record(&self.name, verdict.duration, verdict.clone(), missed);
            self.hub
                .metrics
                .observe_health_check(&self.name, verdict.duration.as_secs_f64());
            drop(_permit);
            if let ProbeOutcome::Failed { failure, message } = &verdict.outcome {
                // The message may quote the member's answer: escaped and bounded.
                tracing::debug!(site = %self.name, reason = failure.reason(), "{}", Untrusted(message));
            }
            let judged = written.map(Arc::new).unwrap_or(site);
            if let Err(e) = self.hub.reconcile_site(&judged).await {
                tracing::warn!(site = %self.name, error = %e, "judging the probed site failed");
            }
            // A probe that ended past its next slot (it queued behind hung
            // members, or the hub was starved) is not followed by catch-up
            // probes: the next one is an interval from now.
            let now = tokio::time::Instant::now();
            due = if next_due > now {
                next_due
            } else {
                now + super::jitter(interval.mul_f64(0.9), interval.mul_f64(0.2))
            };
        }
    }
}

/// Runs the prober until `shutdown` turns true: watches the pull Secrets,
/// keeps one probing task per Pull site of `sites`, and records into
/// `hub`'s [`ProbeStats`].
pub async fn run(
    hub: Arc<Hub>,
    sites: Store<FederatedCluster>,
    cfg: ProberConfig,
    mut shutdown: watch::Receiver<bool>,
) {
    let (secrets, writer) = reflector::store();
    let secret_watch = tokio::spawn(
        reflector::reflector(
            writer,
            watcher(pull_secrets(hub.client()), pull_secret_watch()),
        )
        .default_backoff()
        .for_each(|ev| async move {
            if let Err(e) = ev {
                tracing::warn!(error = %e, "watching pull Secrets");
            }
        }),
    );
    let gate = Arc::new(Semaphore::new(cfg.concurrency.max(1)));
    let mut tasks: HashMap<String, tokio::task::JoinHandle<()>> = HashMap::new();
    // The Pull sites, read from the cache again only when a site changed in
    // more than its heartbeat (or came or went): not a copy of every site
    // each second.
    let mut pull: Vec<String> = Vec::new();
    let mut read_at = None;
    loop {
        let changes = hub.fleet_changes();
        if read_at != Some(changes) {
            read_at = Some(changes);
            pull = sites
                .state()
                .iter()
                .filter(|s| s.spec.mode == Mode::Pull)
                .map(|s| s.site_name().to_owned())
                .collect();
        }
        tasks.retain(|name, task| {
            let keep = !task.is_finished() && pull.contains(name);
            if !keep {
                task.abort();
                hub.probes.forget(name);
                hub.metrics.forget_health_check(name);
            }
            keep
        });
        for name in &pull {
            tasks.entry(name.clone()).or_insert_with(|| {
                let prober = SiteProber {
                    name: name.clone(),
                    hub: hub.clone(),
                    sites: sites.clone(),
                    secrets: secrets.clone(),
                    cfg: cfg.clone(),
                    cached: None,
                    accepted: None,
                    history: SignalHistory::default(),
                };
                tokio::spawn(prober.run(gate.clone(), hub.probes.clone()))
            });
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = shutdown.wait_for(|s| *s) => break,
        }
    }
    for task in tasks.values() {
        task.abort();
    }
    secret_watch.abort();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_timeout_is_half_the_interval_at_most_ten_seconds() {
        let cfg = ProberConfig::default();
        assert_eq!(
            cfg.timeout_for(Duration::from_secs(10)),
            Duration::from_secs(5)
        );
        assert_eq!(
            cfg.timeout_for(Duration::from_secs(300)),
            Duration::from_secs(10)
        );
        let fixed = ProberConfig {
            timeout: Some(Duration::from_secs(2)),
            ..cfg
        };
        assert_eq!(
            fixed.timeout_for(Duration::from_secs(300)),
            Duration::from_secs(2)
        );
    }
}
