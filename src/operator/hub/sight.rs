//! Whether the hub can see the sites (the module documentation of
//! [`super`]): from the first error of its site watch until the watch
//! delivers again (a site with a resourceVersion not handed over before,
//! or the end of a list: the cache then holds the fleet as it is now) or,
//! while it stays down, until a GET of a site answers, the hub is blind,
//! and that blind time is not counted against any site.

use std::collections::HashMap;

use jiff::Timestamp;

use super::{FederatedCluster, Hub};

/// Whether the hub can see the sites (see the module documentation).
#[derive(Debug, Default)]
pub(super) struct Sight {
    /// The site watch reported an error and has delivered nothing since.
    pub(super) watch_down: bool,
    /// Since when the hub has been blind without the time being credited
    /// to the sites yet.
    pub(super) blind_since: Option<Timestamp>,
    /// The resourceVersion of each site as the cache last handed it to a
    /// reconcile: a new one proves the watch delivers.
    pub(super) delivered: HashMap<String, Option<String>>,
}

impl Hub {
    /// The site watch failed: the hub is blind from now (if it was not
    /// already) until the watch delivers again.
    pub fn watch_failed(&self) {
        let now = (self.clock)();
        let mut sight = self.sight.lock().unwrap_or_else(|p| p.into_inner());
        if !sight.watch_down {
            sight.watch_down = true;
            sight.blind_since.get_or_insert(now);
            tracing::warn!("lost the site watch: holding judgements until it delivers again");
        }
    }

    /// Whether the site watch is down (judgements held, see the module
    /// documentation).
    pub fn watch_down(&self) -> bool {
        self.sight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .watch_down
    }

    /// Notes the object the cache handed to a reconcile; a resourceVersion
    /// not handed over before proves the watch delivers again.
    pub(super) fn delivered(&self, site: &FederatedCluster) {
        let now = (self.clock)();
        let mut sight = self.sight.lock().unwrap_or_else(|p| p.into_inner());
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
            self.sees_again(sight, now);
        }
    }

    /// The cache holds a whole list the site watch made (the first, or
    /// one after the watch broke or was told `410 Gone`): the watch
    /// delivers. After an API server's restart a quiet fleet's list holds
    /// no site changed since, and waiting for a changed one would keep
    /// the hub blind for as long as no status changes.
    pub(super) fn relisted(&self) {
        let sight = self.sight.lock().unwrap_or_else(|p| p.into_inner());
        self.sees_again(sight, (self.clock)());
    }

    fn sees_again(&self, mut sight: std::sync::MutexGuard<'_, Sight>, now: Timestamp) {
        if sight.watch_down {
            sight.watch_down = false;
            let blind = sight.blind_since.take();
            drop(sight);
            tracing::info!("the site watch delivers again: judging resumes");
            self.credit(blind, now);
        }
    }

    /// A GET made while the watch is down answered (`Ok`) or not.
    pub(super) fn looked(&self, answered: bool) {
        let now = (self.clock)();
        let mut sight = self.sight.lock().unwrap_or_else(|p| p.into_inner());
        if answered {
            let blind = sight.blind_since.take();
            drop(sight);
            self.credit(blind, now);
        } else {
            sight.blind_since.get_or_insert(now);
        }
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
