//! Pull mode on the hub: the leader probes every `mode: Pull` site through
//! the kubeconfig in its `spec.kubeconfigSecretRef` (docs/pull-mode.md).
//!
//! - Before each probe the site's pull Secret is read by name (the hub may
//!   read only the Secrets `register` granted it, one by one: never its own
//!   serving key or a CA beside them in `fleet-system`); it must carry the
//!   labels `kubectl fleet register` puts on it, and is used only for the
//!   site its site label names. Each site keeps one parsed kubeconfig,
//!   parsed again only when its Secret's resourceVersion changes, so a
//!   rotated Secret takes effect on the next probe without a restart.
//! - Before each probe the member's server name is resolved and every
//!   address checked against `--pull-allow-cidr`/`--pull-deny-cidr` and the
//!   default refusals (metadata, link-local, loopback); the client connects
//!   to the checked address and is rebuilt only when it moves.
//! - Each site is probed every `heartbeatIntervalSeconds` (±10 % jitter),
//!   within a timeout (`--probe-timeout`, default `min(interval/2, 10s)`),
//!   at most `--probe-concurrency` at once, reading at most
//!   `--probe-max-bytes` (paged, lean lists: `k8s::member`). A probe reads
//!   the member with the edge's collector (`k8s::member` and
//!   `collect::edge_status`: one collector, two transports).
//! - A successful probe sends the edge's change-only merge patch of
//!   edge-owned keys, its heartbeat stamped with the hub clock, the member
//!   token's expiry, and when the hub renews it: a steady site costs one
//!   small status patch per interval. When less than half of the token's
//!   lifetime is left and it is the site's own Pull identity, the prober
//!   mints a new one with it and stores it in the site's pull Secret. A
//!   failed probe writes nothing itself.
//! - Every outcome is recorded in [`ProbeStats`] and then judged like any
//!   site by [`Hub::reconcile_site`]: phase from the last successful probe
//!   (never better than Stale while the latest failed), `Connected` with
//!   the failure class as reason, `RemediationCapable`,
//!   `CredentialExpiring`; written only on a transition.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;
use kube::runtime::reflector::{ObjectRef, Store};

use tokio::sync::{Semaphore, watch};

use crate::api::{Capability, FederatedCluster, Mode, SecretKeyRef, Tier};
use crate::fleet::probe::{
    AddressPolicy, ProbeFailure, ProbeOutcome, ProbeVerdict, RemediationAccess, remediation_access,
    remediation_needs,
};
use crate::fleet::rbac::{
    FLEET_NAMESPACE, MIN_TOKEN_TTL, SITE_LABEL, pull_identity_name, pull_identity_user,
    pull_secret_grant_name,
};
use crate::fleet::signals::SignalHistory;
use crate::fleet::status_patch::{Accepted, report_patch};
use crate::k8s::body_limit::ReadBudget;
use crate::k8s::member::{MemberError, MemberReader};
use crate::k8s::pull::{
    MemberKubeconfig, classify, classify_address, missing_pull_secret_labels, pull_secret,
    secret_site, store_renewed_kubeconfig,
};
use crate::k8s::site_status::{patch_site_status, sites};
use crate::operator::collect::{edge_status, with_identity};
use crate::operator::credential::TokenClaims;
use crate::operator::hub::Hub;
use crate::operator::probe_stats::ProbeStats;
use crate::render::safe::Untrusted;

/// Default of `--probe-concurrency`.
pub const DEFAULT_PROBE_CONCURRENCY: usize = 32;

/// Upper bound of the default probe timeout.
pub const MAX_DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Default of `--probe-max-bytes`: what one probe may read from a member
/// and keep of it (docs/pull-mode.md#what-a-probe-may-cost-the-hub).
pub const DEFAULT_PROBE_MAX_BYTES: u64 = 32 << 20;

/// Prober settings.
#[derive(Clone, Debug)]
pub struct ProberConfig {
    /// Per-probe timeout; None: `min(interval/2, 10s)` per site.
    pub timeout: Option<Duration>,
    /// Probes in flight at most.
    pub concurrency: usize,
    /// Bytes one probe may read (every answer) and keep (what it decodes).
    pub max_bytes: u64,
    /// Which member addresses the hub connects to.
    pub addresses: AddressPolicy,
}

impl Default for ProberConfig {
    fn default() -> Self {
        Self {
            timeout: None,
            concurrency: DEFAULT_PROBE_CONCURRENCY,
            max_bytes: DEFAULT_PROBE_MAX_BYTES,
            addresses: AddressPolicy::default(),
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

/// A probe failure: the class and one line for the `Connected` condition.
type Failure = (ProbeFailure, String);

/// What one version of a site's pull Secret gives the prober.
struct Cached {
    resource_version: Option<String>,
    /// The checked kubeconfig, or why it was refused.
    member: Result<Member, Failure>,
}

/// A member as one version of its pull Secret describes it.
struct Member {
    kubeconfig: MemberKubeconfig,
    /// The connection: the checked address and a client bound to it,
    /// rebuilt when the server's name resolves elsewhere.
    connection: Option<(IpAddr, kube::Client)>,
    /// The bytes each probe may read and keep, charged by the client's
    /// body limit and by the reader.
    budget: Arc<ReadBudget>,
    /// The token's claims, when it is a JWT.
    claims: Option<TokenClaims>,
    /// Whether the hub renews the token: it is the site's own Pull identity
    /// (`register --pull` minted it), which may mint its own tokens.
    renewable: bool,
    /// Set once a renewed token is stored for this version of the Secret,
    /// so no second one is minted before a probe reads the new version.
    renewed: bool,
    /// Asked once per Secret version and tier (only of a site with the
    /// `remediation` capability).
    remediation: Option<(Tier, RemediationAccess)>,
}

/// The prober of one site: its client cache and change-only baseline.
struct SiteProber {
    name: String,
    hub: Arc<Hub>,
    sites: Store<FederatedCluster>,
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

/// Where a member's kubeconfig was read: the pull Secret's name, key and
/// resourceVersion.
struct SecretAt {
    name: String,
    key: String,
    resource_version: Option<String>,
}

/// Mints a new token for the site's own Pull identity with the current one
/// (the identity may do that for itself only), for the lifetime the
/// current one was granted, and stores the kubeconfig carrying it in the
/// site's pull Secret — only if the Secret is still the version it was
/// read from, so a `register` in between wins. The next probe reads the
/// new version. Returns the new token's expiry, or why renewing failed (one
/// line, no secret).
async fn renew(
    reader: &MemberReader<'_>,
    member: &Member,
    hub: &kube::Client,
    site: &str,
    secret: &SecretAt,
) -> Result<Timestamp, String> {
    let lifetime = member
        .claims
        .as_ref()
        .and_then(TokenClaims::lifetime)
        .unwrap_or(MIN_TOKEN_TTL)
        .max(MIN_TOKEN_TTL);
    let seconds = i64::try_from(lifetime.as_secs()).unwrap_or(i64::MAX);
    let minted = reader
        .request_token(&pull_identity_name(site), seconds)
        .await
        .map_err(|e| {
            let (failure, _) = classify(&e, member.kubeconfig.server(), site);
            format!(
                "the member answered the token request with {}",
                failure.as_str()
            )
        })?;
    let text = member
        .kubeconfig
        .with_token(&minted.token)
        .map_err(|e| e.0)?;
    let Some(version) = secret.resource_version.as_deref() else {
        return Err("the pull Secret has no resourceVersion".to_owned());
    };
    store_renewed_kubeconfig(hub, &secret.name, &secret.key, version, &text)
        .await
        .map_err(|e| {
            format!(
                "storing it in Secret {FLEET_NAMESPACE}/{} failed: {}",
                secret.name,
                crate::k8s::readable(&e)
            )
        })?;
    Ok(minted.expires_at)
}

impl SiteProber {
    fn site(&self) -> Option<Arc<FederatedCluster>> {
        self.sites.get(&ObjectRef::new(&self.name))
    }

    fn register_hint(&self) -> String {
        format!(
            "re-run `kubectl fleet register {} --pull --member-kubeconfig FILE` (FILE: an admin kubeconfig of the member)",
            self.name
        )
    }

    /// The site's pull Secret as the hub may use it, read by name (the
    /// hub may read only the Secrets it was granted, `rbac::pull_secret_grant`):
    /// referenced in `fleet-system`, labelled by `register`, and labelled
    /// for this very site (a Secret made for another site is not used for
    /// this one).
    async fn secret<'r>(
        &self,
        site: &'r FederatedCluster,
    ) -> Result<(&'r SecretKeyRef, Secret), Failure> {
        let Some(r) = site.spec.kubeconfig_secret_ref.as_ref() else {
            return Err((
                ProbeFailure::SecretNotFound,
                format!(
                    "spec.kubeconfigSecretRef is not set: {}",
                    self.register_hint()
                ),
            ));
        };
        if r.namespace != FLEET_NAMESPACE {
            return Err((
                ProbeFailure::SecretNotFound,
                format!(
                    "the hub reads pull Secrets only in {FLEET_NAMESPACE}, not {}",
                    r.namespace
                ),
            ));
        }
        let secret = match pull_secret(self.hub.client(), &r.name).await {
            Ok(Some(secret)) => secret,
            Ok(None) => {
                return Err((
                    ProbeFailure::SecretNotFound,
                    format!(
                        "Secret {FLEET_NAMESPACE}/{} not found: {}",
                        r.name,
                        self.register_hint()
                    ),
                ));
            }
            Err(kube::Error::Api(e)) if e.code == 403 => {
                return Err((
                    ProbeFailure::SecretNotGranted,
                    format!(
                        "the hub may not read Secret {FLEET_NAMESPACE}/{name}: it reads only the pull Secrets granted to it by name (Role and RoleBinding {FLEET_NAMESPACE}/{grant}); run `kubectl fleet register {site}` to grant it, or apply them where the Secret is made",
                        name = r.name,
                        grant = pull_secret_grant_name(&r.name),
                        site = self.name,
                    ),
                ));
            }
            Err(e) => {
                return Err((
                    ProbeFailure::Failed,
                    format!(
                        "reading Secret {FLEET_NAMESPACE}/{} failed: {}",
                        r.name,
                        crate::k8s::readable(&e)
                    ),
                ));
            }
        };
        let missing = missing_pull_secret_labels(secret.metadata.labels.as_ref(), &self.name);
        if !missing.is_empty() {
            return Err((
                ProbeFailure::SecretNotLabelled,
                format!(
                    "Secret {FLEET_NAMESPACE}/{} lacks the {} {}, which the hub requires of a pull Secret: run `kubectl label secret -n {FLEET_NAMESPACE} {} {} --overwrite` (or add it where the Secret is made)",
                    r.name,
                    if missing.len() == 1 {
                        "label"
                    } else {
                        "labels"
                    },
                    missing.join(" and "),
                    r.name,
                    missing.join(" ")
                ),
            ));
        }
        match secret_site(&secret) {
            Some(labelled) if labelled == self.name => Ok((r, secret)),
            labelled => Err((
                ProbeFailure::SecretLabelMismatch,
                format!(
                    "Secret {FLEET_NAMESPACE}/{} is labelled {SITE_LABEL}={}, not {}: the hub uses a pull Secret only for the site its label names; {}",
                    r.name,
                    labelled.unwrap_or_default(),
                    self.name,
                    self.register_hint()
                ),
            )),
        }
    }

    /// The member for the site's Secret as it is now (parsed again only
    /// when the Secret's resourceVersion changed), connected to the
    /// address its server resolves to now (a new client only when that
    /// moved), and that Secret's key and resourceVersion.
    async fn member(
        &mut self,
        site: &FederatedCluster,
        timeout: Duration,
    ) -> Result<(&mut Member, SecretAt), Failure> {
        let (r, secret) = match self.secret(site).await {
            Ok(found) => found,
            Err(e) => {
                self.cached = None;
                return Err(e);
            }
        };
        let key = r.key.clone();
        let secret_name = r.name.clone();
        let rv = secret.metadata.resource_version.clone();
        if self
            .cached
            .as_ref()
            .is_none_or(|c| c.resource_version != rv)
        {
            if self.cached.is_some() {
                tracing::info!(site = %self.name, secret = %secret_name, "pull Secret changed, using its new kubeconfig");
            }
            let member = match secret.data.as_ref().and_then(|d| d.get(&key)) {
                None => Err((
                    ProbeFailure::SecretNotFound,
                    format!(
                        "Secret {FLEET_NAMESPACE}/{secret_name} has no key {key:?}: {}",
                        self.register_hint()
                    ),
                )),
                Some(bytes) => self.parse(&bytes.0),
            };
            self.cached = Some(Cached {
                resource_version: rv.clone(),
                member,
            });
        }
        let member = match self.cached.as_mut().map(|c| &mut c.member) {
            Some(Ok(m)) => m,
            Some(Err(e)) => return Err(e.clone()),
            None => unreachable!("cached above"),
        };
        let kept = member.connection.as_ref().map(|(addr, _)| *addr);
        let addr = member
            .kubeconfig
            .resolve(&self.cfg.addresses, kept)
            .await
            .map_err(|e| classify_address(&e, member.kubeconfig.server()))?;
        if kept != Some(addr) {
            let client = member
                .kubeconfig
                .client(addr, timeout, member.budget.clone())
                .await
                .map_err(|e| (ProbeFailure::InvalidKubeconfig, e.0))?;
            member.connection = Some((addr, client));
        }
        let at = SecretAt {
            name: secret_name,
            key,
            resource_version: rv,
        };
        Ok((member, at))
    }

    fn parse(&self, bytes: &[u8]) -> Result<Member, Failure> {
        let kubeconfig =
            MemberKubeconfig::parse(bytes).map_err(|e| (ProbeFailure::InvalidKubeconfig, e.0))?;
        let claims = kubeconfig.token().and_then(TokenClaims::decode);
        let renewable = kubeconfig.token_subject().as_deref()
            == Some(pull_identity_user(&self.name).as_str())
            && claims.as_ref().is_some_and(|c| c.renewal_time().is_some());
        Ok(Member {
            kubeconfig,
            connection: None,
            budget: ReadBudget::new(self.cfg.max_bytes),
            claims,
            renewable,
            renewed: false,
            remediation: None,
        })
    }

    /// One probe: read the member, renew its token when half of its
    /// lifetime is gone, send the change-only patch; return the verdict and
    /// the site object to judge.
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
        let name = self.name.clone();
        let hub_client = self.hub.client();
        let hub = self.hub.clone();
        let (member, secret) = match tokio::time::timeout(timeout, self.member(site, timeout)).await
        {
            Ok(Ok(m)) => m,
            Ok(Err((f, m))) => return (verdict(failed(f, m), None), None),
            Err(_) => {
                let message = "the member server name did not resolve within the probe timeout";
                return (verdict(failed(ProbeFailure::Dns, message), None), None);
            }
        };
        let Some((_, client)) = member.connection.clone() else {
            unreachable!("connected by member()")
        };
        let server = member.kubeconfig.server().to_owned();
        let budget = member.budget.clone();
        budget.reset();
        let reader = MemberReader::with_budget(&client, &budget);
        // A site that does not ask for remediation is not asked about:
        // `RemediationCapable` says NotRequested, and no review is sent.
        let requested = site.spec.capabilities.contains(&Capability::Remediation);
        let ask_remediation =
            requested && member.remediation.as_ref().is_none_or(|(t, _)| *t != tier);
        let read = tokio::time::timeout(timeout, async {
            let objs = reader.read().await?;
            let denied = if ask_remediation {
                let mut denied = Vec::new();
                for p in remediation_needs(tier) {
                    if !reader.can_i(p).await? {
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
            Ok(Err(e)) => {
                let (f, m) = classify(&e, &server, &name);
                return (verdict(failed(f, m), None), None);
            }
            Ok(Ok(x)) => x,
        };
        if let Some(denied) = denied {
            member.remediation = Some((tier, remediation_access(tier, &denied)));
        }
        let remediation = if requested {
            member.remediation.as_ref().map(|(_, r)| r.clone())
        } else {
            Some(RemediationAccess::not_requested())
        };
        let insecure = member.kubeconfig.insecure();
        let now = Timestamp::from_second(Timestamp::now().as_second())
            .unwrap_or_else(|_| Timestamp::now());
        let expires = member.claims.as_ref().and_then(|c| c.expires_at);
        let renews = member
            .claims
            .as_ref()
            .filter(|_| member.renewable)
            .and_then(TokenClaims::renewal_time);
        if member.renewable
            && !member.renewed
            && member
                .claims
                .as_ref()
                .is_some_and(|c| c.needs_rotation(now))
        {
            let renewal =
                tokio::time::timeout(timeout, renew(&reader, member, &hub_client, &name, &secret))
                    .await;
            match renewal {
                Ok(Ok(expires_at)) => {
                    member.renewed = true;
                    hub.probes.renewed(&name);
                    hub.record_event(super::events::about_site(
                        site,
                        false,
                        "CredentialRenewed",
                        "RenewCredential",
                        format!("renewed the site's member token (expires {expires_at}) and stored it in its pull Secret"),
                    ));
                    tracing::info!(site = %name, expires = %expires_at, "renewed the site's member token and stored it in its pull Secret");
                }
                Ok(Err(cause)) => {
                    hub.record_event(super::events::about_site(
                        site,
                        true,
                        "CredentialRenewalFailed",
                        "RenewCredential",
                        format!("renewing the site's member token failed, retrying at the next probe: {}", Untrusted(&cause)),
                    ));
                    tracing::warn!(site = %name, cause = %Untrusted(&cause), "renewing the site's member token failed; keeping the current one, retrying at the next probe");
                }
                Err(_) => {
                    hub.record_event(super::events::about_site(
                        site,
                        true,
                        "CredentialRenewalFailed",
                        "RenewCredential",
                        "renewing the site's member token took longer than the probe timeout; retrying at the next probe".to_owned(),
                    ));
                    tracing::warn!(site = %name, "renewing the site's member token took longer than the probe timeout; retrying at the next probe");
                }
            }
        }
        let status = edge_status(&objs, self.history.previous(site), now);
        drop(objs);
        self.history.record(status.signals());
        let mut status = with_identity(status, now, super::build::VERSION, expires, renews);
        status.last_probe_duration_milliseconds =
            Some(i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX));
        let uid = site.metadata.uid.clone();
        let baseline = Accepted::baseline(&mut self.accepted, site);
        let (patch, next) = report_patch(Some(baseline), status, now);
        let outcome = ProbeOutcome::Reached { insecure };
        match patch_site_status(&sites(hub_client), &self.name, &patch).await {
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
        let mut due = tokio::time::Instant::now() + super::clock::jitter(Duration::ZERO, first);
        loop {
            tokio::time::sleep_until(due).await;
            let Some(site) = self.site() else { return };
            if site.spec.mode != Mode::Pull {
                return;
            }
            let interval = self.hub.effective_interval(&site);
            let next_due = due + super::clock::jitter(interval.mul_f64(0.9), interval.mul_f64(0.2));
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
            let before = stats.verdict(&self.name);
            stats.record(&self.name, verdict.duration, verdict.clone(), missed);
            self.hub
                .metrics
                .observe_health_check(&self.name, verdict.duration.as_secs_f64());
            drop(_permit);
            if let ProbeOutcome::Failed { failure, message } = &verdict.outcome {
                // The message may quote the member's answer: escaped and bounded.
                tracing::debug!(site = %self.name, reason = failure.as_str(), "{}", Untrusted(message));
                // An Event when the failure begins or changes class, not
                // at every probe of a member that stays down.
                let same = matches!(
                    before.as_ref().map(|v| &v.outcome),
                    Some(ProbeOutcome::Failed { failure: was, .. }) if was == failure
                );
                if !same {
                    // A store probed as it closes for the night, inside its
                    // schedule: Normal, not a Warning every night.
                    let asleep = asleep_as_scheduled(&site, interval, self.hub.now());
                    let expected = if asleep {
                        " (expected: the site is offline as its schedule says)"
                    } else {
                        ""
                    };
                    self.hub.record_event(super::events::about_site(
                        &site,
                        !asleep,
                        "ProbeFailed",
                        "Probe",
                        format!("{}: {}{expected}", failure.as_str(), Untrusted(message)),
                    ));
                }
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
                now + super::clock::jitter(interval.mul_f64(0.9), interval.mul_f64(0.2))
            };
        }
    }
}

/// Whether `site` is silent as its schedule expects at `now`: its last
/// successful probe (its heartbeat, on the hub's clock) was followed by an
/// offline window or lies within its longest absence, as the hub judges a
/// `Sleeping` site (`fleet::connectivity::expect`).
fn asleep_as_scheduled(site: &FederatedCluster, interval: Duration, now: Timestamp) -> bool {
    let heard = site
        .status
        .as_ref()
        .and_then(|s| s.last_heartbeat_time.as_ref());
    let (Some(c), Some(heard)) = (site.spec.connectivity.as_ref(), heard) else {
        return false;
    };
    let schedule = super::hub::site_schedule(c);
    let (expectation, _) = crate::fleet::connectivity::expect(&schedule, heard.0, interval, now);
    matches!(
        expectation,
        crate::fleet::connectivity::Expectation::Sleeping { .. }
    )
}

/// Runs the prober until `shutdown` turns true: keeps one probing task per
/// Pull site of `sites`, and records into `hub`'s [`ProbeStats`].
pub async fn run(
    hub: Arc<Hub>,
    sites: Store<FederatedCluster>,
    cfg: ProberConfig,
    mut shutdown: watch::Receiver<bool>,
) {
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
