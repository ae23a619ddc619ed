//! Whether the hub can see the sites (the module documentation of
//! [`super`]). The hub is blind
//! - from the first error of its site watch until the watch delivers
//!   again (a site with a resourceVersion not handed over before, or the
//!   end of a list: the cache then holds the fleet as it is now) or, while
//!   it stays down, until a GET of a site answers or the lease watch has
//!   listed the leases again (below);
//! - from the last event its watches delivered, when a fresh read made
//!   after they said nothing for [`QUIET_SIGHT`] gets no answer within
//!   [`FRESH_READ_TIMEOUT`], until a watch delivers or a read answers
//!   again: a hung API server (a stopped process, a network path that
//!   drops packets) breaks no watch, it just stops delivering, and every
//!   site would look silent.
//!
//! While the watches say nothing for [`QUIET_SIGHT`], the hub also asks
//! the API server once per spell whether it answers ([`watch_sight`]): a
//! watch that stops delivering (a hung server, a proxy holding a watch
//! whose server died) is noticed even when no transition falls due, so an
//! outage that keeps the edges from reporting is not counted against
//! them.
//!
//! While the site watch is down and the lease watch sees (it has listed
//! the leases since it last failed), the hub still sees every heartbeat
//! of a site whose edge renews a lease: it is not blind, and when the
//! lease watch holds a lease of every site it judges the fleet in memory
//! (summary, liveness record) from the leases, the sites' other detail as
//! the cache last held it ([`super::Hub::judges_in_memory`]). A site whose
//! edge heartbeats through its status (an older edge), or has no lease
//! yet, holds that judgement until the site watch delivers again. After an
//! API server's restart the lease list (small objects) comes back long
//! before the site list: after 8–29 s against ~2.5 minutes at 100,000
//! sites on the real API server (docs/benchmarks-100k.md). Every
//! transition is still written from a fresh read while the site watch is
//! down.
//!
//! That blind time is not counted against any site. A site whose
//! transition waited for a fresh read the blind hub could not make is
//! looked at again as soon as the hub sees again ([`Hub::hold_for_sight`]).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use jiff::Timestamp;

use super::{FederatedCluster, Hub};

/// How long the hub's watches may say nothing before a transition is
/// judged again from a fresh read first: a watch over a hung API server
/// is not broken, only quiet. A fleet that reports is never this quiet
/// (nor is a fleet-wide silence once the hub writes: its own writes come
/// back as events), so this costs one GET per quiet spell, not one per
/// site.
pub const QUIET_SIGHT: Duration = Duration::from_secs(5);

/// How long a fresh read may take before the hub counts the API server
/// as not answering (kube's client waits up to 295 s).
pub const FRESH_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether the hub can see the sites (see the module documentation).
#[derive(Debug, Default)]
pub(super) struct Sight {
    /// The site watch reported an error and has delivered nothing since.
    pub(super) watch_down: bool,
    /// The lease watch has listed the leases since it last failed
    /// ([`Hub::leases_seen`]).
    pub(super) leases_see: bool,
    /// A fresh read made while the watches were quiet got no answer, and
    /// nothing was delivered or answered since.
    pub(super) unanswered: bool,
    /// Since when the hub has been blind without the time being credited
    /// to the sites yet.
    pub(super) blind_since: Option<Timestamp>,
    /// When a watch last delivered an event (None: not since the hub
    /// started).
    pub(super) last_seen: Option<Timestamp>,
    /// The resourceVersion of each site as the cache last handed it to a
    /// reconcile: a new one proves the watch delivers.
    pub(super) delivered: HashMap<String, Option<String>>,
    /// The sites whose transition waits for the hub to see again: their
    /// fresh read failed while the hub was blind.
    pub(super) held: HashSet<String>,
    /// The resourceVersion of each site's latest status write by the hub
    /// whose event the site watch has not delivered yet ([`Hub::written`]).
    pub(super) unechoed: HashMap<String, String>,
}

impl Sight {
    /// Blind: the API server did not answer, or the site watch is down
    /// and the lease watch does not see either.
    fn blind(&self) -> bool {
        self.unanswered || (self.watch_down && !self.leases_see)
    }

    /// Unsure of what the cache holds: the API server did not answer, the
    /// site watch is down, or the watches have said nothing for
    /// [`QUIET_SIGHT`] by `now`.
    fn unsure(&self, now: Timestamp) -> bool {
        self.unanswered || self.watch_down || self.quiet(now)
    }

    /// Whether the watches have said nothing for [`QUIET_SIGHT`] by `now`.
    fn quiet(&self, now: Timestamp) -> bool {
        self.last_seen.is_some_and(|seen| {
            now.duration_since(seen) > jiff::SignedDuration::try_from(QUIET_SIGHT).unwrap()
        })
    }
}

/// Asks the API server whether it answers ([`crate::k8s::site_status::sites_answer`],
/// within `FRESH_READ_TIMEOUT`) every `QUIET_SIGHT` while the site
/// watch is up and the watches have said nothing for that long, and tells
/// `hub` (`Hub::looked`): no answer makes it blind from the last event
/// its watches delivered; an answer after that ends the blind time and
/// credits it. One GET per quiet spell (a fleet that reports is never
/// this quiet), until `shutdown` turns true.
///
/// `probe` reads the sites through a client that does not retry a 503
/// itself (kube's client retries 429/503/504 up to 15 times, backing off
/// to minutes: a probe would answer once the outage is over).
pub async fn watch_sight(
    hub: std::sync::Arc<Hub>,
    probe: kube::Api<FederatedCluster>,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(QUIET_SIGHT) => {}
            _ = shutdown.wait_for(|s| *s) => return,
        }
        if !hub.quiet_and_up() {
            continue;
        }
        let asked = crate::k8s::site_status::sites_answer(&probe);
        let answered = matches!(
            tokio::time::timeout(FRESH_READ_TIMEOUT, asked).await,
            Ok(Ok(()))
        );
        hub.looked(answered);
    }
}

impl Hub {
    /// The site watch failed: the hub is blind from now (if it was not
    /// already) until the watch delivers again.
    pub fn watch_failed(&self) {
        let now = (self.clock)();
        let mut sight = self.sight.lock().unwrap_or_else(|p| p.into_inner());
        if !sight.watch_down {
            sight.watch_down = true;
            if sight.leases_see {
                tracing::warn!(
                    "lost the site watch: judging from site leases until it delivers again"
                );
            } else {
                sight.blind_since.get_or_insert(now);
                tracing::warn!("lost the site watch: holding judgements until it delivers again");
            }
        }
    }

    /// The lease watch has listed the leases (`true`), or failed. While
    /// the site watch is down, the hub sees again when it has listed (the
    /// time before is credited), and is blind from when it failed.
    pub fn leases_seen(&self, sees: bool) {
        let now = (self.clock)();
        let mut sight = self.sight.lock().unwrap_or_else(|p| p.into_inner());
        if sight.leases_see == sees {
            return;
        }
        let was_blind = sight.blind();
        sight.leases_see = sees;
        if !sight.watch_down {
            return;
        }
        if !was_blind && sight.blind() {
            sight.blind_since.get_or_insert(now);
            tracing::warn!("lost the site watch and the lease watch: holding judgements");
        } else if was_blind && !sight.blind() {
            tracing::info!(
                "the site watch is down, the lease watch has listed the leases: judging from them \
                 (a site without a lease holds the liveness record until the site watch delivers again)"
            );
            self.sees_again(sight, now);
        }
    }

    /// Whether the site watch is down (the hub judges from leases alone,
    /// if at all).
    pub(super) fn site_watch_down(&self) -> bool {
        self.sight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .watch_down
    }

    /// Whether the hub is blind (judgements held, see the module
    /// documentation).
    pub fn blind(&self) -> bool {
        self.sight.lock().unwrap_or_else(|p| p.into_inner()).blind()
    }

    /// Whether the site watch is up (or, while it is down, the lease
    /// watch sees) and the watches have said nothing for [`QUIET_SIGHT`]
    /// (or the API server did not answer the last read).
    fn quiet_and_up(&self) -> bool {
        let now = (self.clock)();
        let sight = self.sight.lock().unwrap_or_else(|p| p.into_inner());
        (!sight.watch_down || sight.leases_see) && (sight.unanswered || sight.quiet(now))
    }

    /// Whether a transition must be judged again from a fresh read before
    /// it is written: the hub is blind, its site watch is down, or its
    /// watches have said nothing for [`QUIET_SIGHT`].
    pub(super) fn unsure(&self) -> bool {
        let now = (self.clock)();
        self.sight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .unsure(now)
    }

    /// Notes the object the cache handed to a reconcile, or (`event`) a
    /// watch event: an event shows the API server delivers, and a
    /// resourceVersion not handed over before proves the site watch does.
    pub(super) fn delivered(&self, site: &FederatedCluster, event: bool) {
        let now = (self.clock)();
        let mut sight = self.sight.lock().unwrap_or_else(|p| p.into_inner());
        if event {
            sight.last_seen = Some(now);
            if sight.unanswered {
                sight.unanswered = false;
                tracing::info!("the API server delivers again");
            }
        }
        let rv = &site.metadata.resource_version;
        let fresh = match sight.delivered.get_mut(site.site_name()) {
            Some(held) => {
                let fresh = held != rv;
                held.clone_from(rv);
                fresh
            }
            None => {
                sight
                    .delivered
                    .insert(site.site_name().to_owned(), rv.clone());
                true
            }
        };
        if fresh {
            Self::watch_delivers(&mut sight);
        }
        self.sees_again(sight, now);
    }

    fn watch_delivers(sight: &mut Sight) {
        if sight.watch_down {
            sight.watch_down = false;
            tracing::info!("the site watch delivers again: judging resumes");
        }
    }

    /// The cache holds a whole list the site watch made (the first, or
    /// one after the watch broke or was told `410 Gone`): the watch
    /// delivers. After an API server's restart a quiet fleet's list holds
    /// no site changed since, and waiting for a changed one would keep
    /// the hub blind for as long as no status changes.
    pub(super) fn relisted(&self) {
        let now = (self.clock)();
        let mut sight = self.sight.lock().unwrap_or_else(|p| p.into_inner());
        sight.last_seen = Some(now);
        sight.unanswered = false;
        // The list is the fleet as it is now, the hub's writes included.
        sight.unechoed = HashMap::new();
        Self::watch_delivers(&mut sight);
        self.sees_again(sight, now);
    }

    /// The hub wrote `site`'s status, the API server answering with
    /// `resource_version`: until the site watch delivers that version, the
    /// cache holds the site as it was before the write, and judged from
    /// the cache the site would look due for the very write just made.
    /// At 100,000 sites the site watch ran tens of seconds behind a
    /// backlog of writes, and each such site counted as a judgement not
    /// written, withholding the liveness record once the writes stopped
    /// (docs/benchmarks-100k.md#streaming-lists-unavailable-and-a-restart-during-a-write-backlog).
    pub(super) fn written(&self, site: &str, resource_version: Option<&String>) {
        let mut sight = self.sight.lock().unwrap_or_else(|p| p.into_inner());
        match resource_version {
            Some(rv) => {
                sight.unechoed.insert(site.to_owned(), rv.clone());
            }
            None => {
                sight.unechoed.remove(site);
            }
        }
    }

    /// The cache took `site` from a watch event (not from a list under
    /// way: the cache takes a list only at its end, [`Hub::relisted`]):
    /// the hub's write it carries is no longer owed to the cache.
    pub(super) fn cached(&self, site: &FederatedCluster) {
        let mut sight = self.sight.lock().unwrap_or_else(|p| p.into_inner());
        if !sight.unechoed.is_empty()
            && sight.unechoed.get(site.site_name()) == site.metadata.resource_version.as_ref()
        {
            sight.unechoed.remove(site.site_name());
        }
    }

    /// Whether `site` is another version than the hub's latest write to
    /// it, which the site watch has not delivered yet: the cache's object
    /// from before that write (a lease renewal folded into it makes it an
    /// event again), or a fresh read that met a later one.
    pub(super) fn owes_echo(&self, site: &FederatedCluster) -> bool {
        let sight = self.sight.lock().unwrap_or_else(|p| p.into_inner());
        sight
            .unechoed
            .get(site.site_name())
            .is_some_and(|rv| Some(rv) != site.metadata.resource_version.as_ref())
    }

    /// The sites whose latest status write the site watch has not
    /// delivered yet.
    pub(super) fn unechoed(&self) -> HashSet<String> {
        let sight = self.sight.lock().unwrap_or_else(|p| p.into_inner());
        sight.unechoed.keys().cloned().collect()
    }

    /// A fresh read answered (`Ok`) or not. An answer ends the blind time
    /// of a hung API server and credits the blind time so far (a site
    /// watch that is down stays down). No answer makes the hub blind from
    /// the last event its watches delivered, if it was not already.
    pub(super) fn looked(&self, answered: bool) {
        let now = (self.clock)();
        let mut sight = self.sight.lock().unwrap_or_else(|p| p.into_inner());
        if answered {
            // Not a delivery: `last_seen` is the watches' alone (a read
            // answered over a watch whose connection is dead says nothing
            // of what the cache holds).
            sight.unanswered = false;
            if sight.blind() {
                let blind = sight.blind_since.take();
                drop(sight);
                self.credit(blind, now);
                return;
            }
            self.sees_again(sight, now);
        } else {
            let since = sight.last_seen.unwrap_or(now);
            sight.blind_since.get_or_insert(since);
            if !sight.blind() {
                sight.unanswered = true;
                tracing::warn!(
                    "the API server does not answer: holding judgements until it delivers or answers again"
                );
            }
        }
    }

    /// Once the hub is no longer blind: the blind time is credited and
    /// the sites held for sight are looked at again.
    fn sees_again(&self, mut sight: std::sync::MutexGuard<'_, Sight>, now: Timestamp) {
        if sight.blind() || (sight.blind_since.is_none() && sight.held.is_empty()) {
            return;
        }
        let blind = sight.blind_since.take();
        let held = std::mem::take(&mut sight.held);
        drop(sight);
        self.credit(blind, now);
        if !held.is_empty() {
            tracing::info!(
                sites = held.len(),
                "looking again at once at the sites whose write waited for the hub to see"
            );
        }
        for site in held {
            self.schedule.set(&site, Some(Duration::ZERO));
        }
    }

    /// `site` had a transition to write, and the fresh read that must come
    /// first while the hub is unsure (blind, or its watches quiet) failed
    /// (the API server did not answer): it is looked at again as soon as
    /// the hub sees again, or at once if it already does. Its own look,
    /// ½–1 interval later, stays in case the hub stays blind. Called once
    /// that look is scheduled. Looking again only that late once held a
    /// restarted API server's whole queue of due writes (~12,000 sites at
    /// 100,000) for minutes, and the liveness record with it
    /// (docs/benchmarks-100k.md#streaming-lists-unavailable-and-a-restart-during-a-write-backlog).
    pub(super) fn hold_for_sight(&self, site: &str) {
        let mut sight = self.sight.lock().unwrap_or_else(|p| p.into_inner());
        if sight.blind() {
            sight.held.insert(site.to_owned());
            return;
        }
        drop(sight);
        self.schedule.set(site, Some(Duration::ZERO));
    }

    /// Does not count the time the hub was blind (since `since`, until
    /// `now`) against any site: every heartbeat observed before it counts
    /// as observed that much later. Such a sighting is no longer live (no
    /// clock skew is measured from it).
    pub(super) fn credit(&self, since: Option<Timestamp>, now: Timestamp) {
        let Some(since) = since else { return };
        let blind = now.duration_since(since);
        if blind <= jiff::SignedDuration::ZERO {
            return;
        }
        let mut ledger = self.ledger.lock().unwrap_or_else(|p| p.into_inner());
        for sighting in ledger.values_mut().map(|k| &mut k.sighting) {
            if let Some(obs) = sighting.observation.as_mut()
                && obs.observed_at < now
            {
                obs.observed_at = obs.observed_at.checked_add(blind).unwrap_or(now).min(now);
                sighting.live = false;
            }
        }
        tracing::info!(
            blind = %crate::fleet::age::human_duration(blind),
            sites = ledger.len(),
            "not counting the time the hub could not see against any site"
        );
    }
}
