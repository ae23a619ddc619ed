//! The hub's bucket backfill (docs/scaling.md#buckets): every site carries
//! the label `federation.kubectl-fleet.dev/bucket` with the bucket of its
//! name ([`crate::fleet::bucket`]). `kubectl fleet register` writes it; the
//! hub's leader writes it on the sites that lack it (registered by an
//! older release, or whose label was removed) and corrects a wrong one
//! (set by hand). It is the authority on the value: the admission policy
//! cannot compute SHA-256 in CEL and checks only the value's form.
//!
//! - The hub's watch tells it ([`Due`]) when a listed or changed site
//!   needs its label, once the controller's cache holds it (at the end of
//!   a list: the cache takes a list whole); a heartbeat alone changes no
//!   label and costs nothing here. It then scans that cache, never the API.
//! - Only the leader writes, one JSON merge patch of that one label per
//!   site ([`patch_site_bucket`]), one at a time and at most
//!   [`BACKFILL_PER_SECOND`]: 100,000 unlabelled sites after an upgrade are
//!   labelled in about 85 minutes, as a steady trickle beside the
//!   heartbeats rather than a write storm. A site is checked again in the
//!   cache just before its write, so one labelled meanwhile is skipped,
//!   and written over the version the cache holds: a site written since
//!   (the hub's own status write, often) answers 409 and is looked at
//!   again a moment later, so a label is never written, or counted, twice.
//! - Each write is counted in `fleet_hub_bucket_backfills_total{reason}`
//!   (`missing`, `wrong`). A failed write is retried by the next pass,
//!   [`RETRY_AFTER`] later; a pass cut short by a lost leadership or a
//!   shutdown is taken up again when this replica leads.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::api::Api;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use tokio::sync::{Notify, watch};

use super::metrics::Metrics;
use crate::api::FederatedCluster;
use crate::fleet::bucket::{BucketLabel, bucket_label_value};
use crate::k8s::site_status::patch_site_bucket;
use crate::k8s::{is_conflict, is_missing, readable};

/// The most bucket labels the hub writes per second, as
/// kube-controller-manager's default client rate (`--kube-api-qps=20`).
pub const BACKFILL_PER_SECOND: u32 = 20;

/// After a pass in which a site had changed since the cache's version
/// of it (409), how long before the next: time for the watch to bring
/// the change.
pub const CONFLICT_PAUSE: Duration = Duration::from_secs(1);

/// After a pass in which a write failed, how long before the next.
pub const RETRY_AFTER: Duration = Duration::from_secs(30);

/// Why `site`'s bucket label is to be written (`missing`, `wrong`), or
/// None when it is right.
pub fn needs_label(site: &FederatedCluster) -> Option<&'static str> {
    BucketLabel::of(site.site_name(), site.metadata.labels.as_ref()).reason()
}

/// What the hub's watch tells the backfill: that a site delivered needs
/// its label, signalled once the cache holds it.
#[derive(Debug, Default)]
pub struct Due {
    notify: Notify,
    /// A site delivered since the last signal needs its label.
    pending: AtomicBool,
    /// The event on its way into the cache is readable there once taken
    /// (not part of a list, which the cache takes whole at its end).
    readable: AtomicBool,
}

impl Due {
    /// A watch event on its way into the cache; `changed`: it changes the
    /// site in more than its heartbeat (labels change only so).
    pub fn delivered(&self, event: &watcher::Event<FederatedCluster>, changed: bool) {
        let listed = matches!(event, watcher::Event::InitApply(_));
        if let watcher::Event::InitApply(site) | watcher::Event::Apply(site) = event
            && (changed || listed)
            && needs_label(site).is_some()
        {
            self.pending.store(true, Ordering::Relaxed);
        }
        self.readable.store(
            !matches!(event, watcher::Event::Init | watcher::Event::InitApply(_)),
            Ordering::Relaxed,
        );
    }

    /// The cache holds the event last [`Due::delivered`].
    pub fn cached(&self) {
        if self.readable.load(Ordering::Relaxed) && self.pending.swap(false, Ordering::Relaxed) {
            self.notify.notify_one();
        }
    }

    /// Look again (a pass cut short or failed).
    fn again(&self) {
        self.notify.notify_one();
    }
}

/// The sites whose label this replica wrote, each with the
/// resourceVersion it was written over: until the cache holds a newer
/// version, it still shows the old label, and the site is not due again
/// (no second write of the same label, no second count).
#[derive(Debug, Default)]
struct Written(Mutex<HashMap<String, Option<String>>>);

impl Written {
    /// Why `site` (as the cache holds it) is due, unless its label was
    /// written over this very version.
    fn due(&self, site: &FederatedCluster) -> Option<&'static str> {
        let reason = needs_label(site)?;
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let written = map.get(site.site_name()) == Some(&site.metadata.resource_version);
        (!written).then_some(reason)
    }

    /// Its label was written over this version of `site`.
    fn wrote(&self, site: &FederatedCluster) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).insert(
            site.site_name().to_owned(),
            site.metadata.resource_version.clone(),
        );
    }

    /// Forgets the sites the cache has a newer version of (or no longer
    /// holds): what it shows of them is what is stored.
    fn caught_up(&self, cache: &Store<FederatedCluster>) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|name, version| {
                cache
                    .get(&ObjectRef::new(name))
                    .is_some_and(|s| s.metadata.resource_version == *version)
            });
    }
}

/// What one pass did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pass {
    /// Labels written.
    pub written: usize,
    /// Writes that failed (a site deleted meanwhile is not one).
    pub failed: usize,
    /// Writes refused because the site changed since the cache's version
    /// of it (409): taken up again by a pass a moment later.
    pub conflicts: usize,
    /// The pass stopped before the end (leadership lost, or shutdown).
    pub interrupted: bool,
}

/// Writes the label of each site of `names` still due (`still_due`: the
/// reason, read from the cache just before the write), through `write`,
/// at most `per_second` writes a second and one at a time, while
/// `keep_going` says so; counts each write in `metrics`.
pub async fn backfill<W, F>(
    names: Vec<String>,
    still_due: impl Fn(&str) -> Option<&'static str>,
    mut write: W,
    per_second: u32,
    keep_going: impl Fn() -> bool,
    metrics: &Metrics,
) -> Pass
where
    W: FnMut(String) -> F,
    F: Future<Output = Result<(), kube::Error>>,
{
    let mut pass = Pass::default();
    let mut pace = tokio::time::interval(Duration::from_secs(1) / per_second.max(1));
    pace.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    for name in names {
        if !keep_going() {
            pass.interrupted = true;
            break;
        }
        let Some(reason) = still_due(&name) else {
            continue;
        };
        pace.tick().await;
        match write(name.clone()).await {
            Ok(()) => {
                pass.written += 1;
                metrics.bucket_backfilled(reason);
                tracing::debug!(site = %name, reason, "bucket label written");
            }
            Err(e) if is_missing(&e) => {}
            // Written since the cache's version: looked at again once the
            // cache holds what was written (not a failure, not counted).
            Err(e) if is_conflict(&e) => pass.conflicts += 1,
            Err(e) => {
                if pass.failed == 0 {
                    tracing::warn!(site = %name, cause = %readable(&e), "could not write the bucket label; retrying later");
                }
                pass.failed += 1;
            }
        }
    }
    pass
}

/// The backfill loop of the hub (spawned by `run_hub`): waits for `due`,
/// then, while `leading`, writes every due site's label in `cache`
/// through `api`, until `shutdown` turns true.
pub async fn run(
    due: Arc<Due>,
    api: Api<FederatedCluster>,
    mut leading: watch::Receiver<bool>,
    metrics: Arc<Metrics>,
    cache: Store<FederatedCluster>,
    mut shutdown: watch::Receiver<bool>,
) {
    let written = Written::default();
    loop {
        tokio::select! {
            () = due.notify.notified() => {}
            _ = shutdown.wait_for(|s| *s) => return,
        }
        tokio::select! {
            led = leading.wait_for(|l| *l) => if led.is_err() { return },
            _ = shutdown.wait_for(|s| *s) => return,
        }
        written.caught_up(&cache);
        let names: Vec<String> = cache
            .state()
            .iter()
            .filter(|s| written.due(s).is_some())
            .map(|s| s.site_name().to_owned())
            .collect();
        let (stop, lead) = (shutdown.clone(), leading.clone());
        let pass = backfill(
            names,
            |name| {
                cache
                    .get(&ObjectRef::new(name))
                    .and_then(|s| written.due(&s))
            },
            |name| {
                let (api, site, written) =
                    (api.clone(), cache.get(&ObjectRef::new(&name)), &written);
                async move {
                    let version = site
                        .as_ref()
                        .and_then(|s| s.metadata.resource_version.clone());
                    patch_site_bucket(&api, &name, &bucket_label_value(&name), version.as_deref())
                        .await?;
                    if let Some(site) = site {
                        written.wrote(&site);
                    }
                    Ok(())
                }
            },
            BACKFILL_PER_SECOND,
            || *lead.borrow() && !*stop.borrow(),
            &metrics,
        )
        .await;
        if pass.written > 0 || pass.failed > 0 {
            tracing::info!(
                written = pass.written,
                failed = pass.failed,
                "bucket labels backfilled"
            );
        }
        if pass.interrupted || pass.failed > 0 || pass.conflicts > 0 {
            // Taken up again: at once when this replica leads again, after
            // a moment for the cache to catch up with a site written since,
            // after a pause when a write failed.
            due.again();
        }
        if pass.conflicts > 0 && pass.failed == 0 {
            tokio::select! {
                () = tokio::time::sleep(CONFLICT_PAUSE) => {}
                _ = shutdown.wait_for(|s| *s) => return,
            }
        }
        if pass.failed > 0 {
            tokio::select! {
                () = tokio::time::sleep(RETRY_AFTER) => {}
                _ = shutdown.wait_for(|s| *s) => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Instant;

    fn api_error(code: u16, reason: &str) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure(reason, reason)
                .with_code(code)
                .boxed(),
        )
    }

    #[test]
    fn a_site_needs_its_label_when_it_is_missing_or_wrong() {
        let mut site = FederatedCluster::test("site-a");
        site.metadata.labels = None;
        assert_eq!(needs_label(&site), Some("missing"));
        site.metadata.labels =
            Some([(crate::fleet::bucket::BUCKET_LABEL.to_owned(), "17".into())].into());
        assert_eq!(needs_label(&site), Some("wrong"));
        site.metadata.labels =
            Some([(crate::fleet::bucket::BUCKET_LABEL.to_owned(), "215".into())].into());
        assert_eq!(needs_label(&site), None);
    }

    /// 40 due sites at 100 a second take at least 390 ms (the first write
    /// goes at once): a lower bound only, which a loaded machine can but
    /// lengthen; without the pacing they take microseconds. A site no
    /// longer due is skipped without a write, a deleted one (404) is not a
    /// failure, one written since the cache's version (409) is neither a
    /// failure nor counted, and every write is counted by its reason.
    #[tokio::test]
    async fn writes_are_paced_skipped_when_done_and_counted() {
        let metrics = Metrics::default();
        let names: Vec<String> = (0..42).map(|i| format!("s{i}")).collect();
        let written = Mutex::new(Vec::new());
        let started = Instant::now();
        let pass = backfill(
            names,
            |name| match name {
                "s0" => None,
                "s1" => Some("wrong"),
                _ => Some("missing"),
            },
            |name| {
                let gone = name == "s41";
                let changed = name == "s40";
                written.lock().unwrap().push((name, started.elapsed()));
                async move {
                    if gone {
                        Err(api_error(404, "NotFound"))
                    } else if changed {
                        Err(api_error(409, "Conflict"))
                    } else {
                        Ok(())
                    }
                }
            },
            100,
            || true,
            &metrics,
        )
        .await;
        assert_eq!(
            pass,
            Pass {
                written: 39,
                failed: 0,
                conflicts: 1,
                interrupted: false
            }
        );
        let written = written.into_inner().unwrap();
        assert_eq!(written.len(), 41);
        assert_eq!(written[0].0, "s1");
        assert!(
            written[40].1 >= Duration::from_millis(390),
            "41 writes in {:?}",
            written[40].1
        );
        let text = metrics.encode();
        assert!(
            text.contains("fleet_hub_bucket_backfills_total{reason=\"missing\"} 38\n")
                && text.contains("fleet_hub_bucket_backfills_total{reason=\"wrong\"} 1\n"),
            "{text}"
        );
    }

    /// A site whose label was written is not due again until the cache
    /// holds a newer version of it (which shows the label written), and
    /// then only if that version's label is wrong again.
    #[test]
    fn a_label_written_is_not_written_again_over_the_same_version() {
        let (store, mut writer) = kube::runtime::reflector::store::<FederatedCluster>();
        let mut site = FederatedCluster::test("site-a");
        site.metadata.labels = None;
        site.metadata.resource_version = Some("1".into());
        writer.apply_watcher_event(&watcher::Event::Apply(site.clone()));
        let written = Written::default();
        assert_eq!(written.due(&site), Some("missing"));
        written.wrote(&site);
        assert_eq!(written.due(&site), None);
        written.caught_up(&store);
        assert_eq!(written.due(&site), None, "the cache has not caught up");
        // The cache takes the patched version: forgotten, and right.
        let mut patched = site.clone();
        patched.metadata.resource_version = Some("2".into());
        patched.metadata.labels =
            Some([(crate::fleet::bucket::BUCKET_LABEL.to_owned(), "215".into())].into());
        writer.apply_watcher_event(&watcher::Event::Apply(patched.clone()));
        written.caught_up(&store);
        assert_eq!(written.due(&patched), None);
        // Someone sets it wrong again later: due again.
        let mut edited = patched.clone();
        edited.metadata.resource_version = Some("3".into());
        edited.metadata.labels =
            Some([(crate::fleet::bucket::BUCKET_LABEL.to_owned(), "9".into())].into());
        assert_eq!(written.due(&edited), Some("wrong"));
        assert!(written.0.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_lost_leadership_stops_the_pass_and_failures_are_counted_apart() {
        let metrics = Metrics::default();
        let calls = Mutex::new(0);
        let pass = backfill(
            (0..10).map(|i| format!("s{i}")).collect(),
            |_| Some("missing"),
            |_| {
                *calls.lock().unwrap() += 1;
                async { Err(api_error(403, "Forbidden")) }
            },
            1000,
            || *calls.lock().unwrap() < 3,
            &metrics,
        )
        .await;
        assert_eq!(
            pass,
            Pass {
                written: 0,
                failed: 3,
                conflicts: 0,
                interrupted: true
            }
        );
        assert!(
            metrics
                .encode()
                .contains("fleet_hub_bucket_backfills_total{reason=\"missing\"} 0\n")
        );
    }
}
