//! The hub's reading of site leases (`FederatedClusterLease`, the heartbeat
//! apart from the status, docs/scaling.md#liveness-apart-from-status).
//!
//! The hub keeps of each lease only its [`Renewal`] (the renew time and the
//! renewal's round trip: a few dozen bytes a site, no object) and folds it
//! into the site wherever the hub reads one ([`FederatedCluster::with_lease`]:
//! the later of `status.lastHeartbeatTime` and the lease's `renewTime` is the
//! heartbeat). The site watch and the lease watch become one stream of site
//! events ([`with_leases`]): a renewal that moves a cached site's heartbeat
//! is that site again, folded, as if its status had carried the heartbeat;
//! everything downstream — the judgement, the cache the REST API, the
//! prober and the summary read, the blind-time bookkeeping — sees sites
//! only. So an edge that renews a lease, an older edge that heartbeats
//! through its status, and a site without a lease are judged alike.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use futures::{Stream, StreamExt as _};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;

use crate::api::{FederatedCluster, Renewal};
use crate::render::safe::Untrusted;

use super::metrics::Metrics;

/// The renewal of every site lease the hub has seen, by site.
#[derive(Debug, Default)]
pub struct Renewals {
    book: Mutex<Book>,
}

#[derive(Debug, Default)]
struct Book {
    by_site: HashMap<String, Renewal>,
    /// The leases of the (re-)list under way: those not in it are gone.
    listing: Option<HashSet<String>>,
    /// The cause of the lease watch's failure last logged.
    failing: Option<String>,
}

impl Renewals {
    /// Folds the site's lease, if the hub knows one, into `site`; whether
    /// it moved the heartbeat.
    pub fn fold(&self, site: &mut FederatedCluster) -> bool {
        let book = self.book.lock().unwrap_or_else(|p| p.into_inner());
        site.with_lease_among(&book.by_site)
    }

    /// How many leases the hub holds.
    pub fn len(&self) -> usize {
        self.book
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .by_site
            .len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the hub holds a lease of every one of `sites`: while the
    /// lease watch sees (it has listed the leases since it last failed),
    /// every heartbeat of theirs then reaches the hub without the site
    /// watch (their edges renew leases, and a renewal is their heartbeat).
    pub fn cover(&self, sites: &[Arc<FederatedCluster>]) -> bool {
        let book = self.book.lock().unwrap_or_else(|p| p.into_inner());
        sites
            .iter()
            .all(|site| book.by_site.contains_key(site.site_name()))
    }

    /// Takes in one lease event; returns the site it renews, folded, when
    /// `cache` holds that site and the renewal moves its heartbeat.
    fn lease_event(
        &self,
        event: watcher::Event<(String, Renewal)>,
        cache: &Store<FederatedCluster>,
    ) -> Option<FederatedCluster> {
        let mut book = self.book.lock().unwrap_or_else(|p| p.into_inner());
        if book.failing.take().is_some() {
            tracing::info!("site leases: reading them again");
        }
        let (name, renewal) = match event {
            watcher::Event::Init => {
                book.listing = Some(HashSet::new());
                return None;
            }
            watcher::Event::InitDone => {
                if let Some(listed) = book.listing.take() {
                    book.by_site.retain(|site, _| listed.contains(site));
                }
                return None;
            }
            watcher::Event::Delete((name, _)) => {
                book.by_site.remove(&name);
                return None;
            }
            watcher::Event::InitApply(lease) | watcher::Event::Apply(lease) => lease,
        };
        if let Some(listed) = book.listing.as_mut() {
            listed.insert(name.clone());
        }
        if book.by_site.get(&name) == Some(&renewal) {
            return None;
        }
        book.by_site.insert(name.clone(), renewal);
        drop(book);
        let mut site = FederatedCluster::clone(&*cache.get(&ObjectRef::new(&name))?);
        site.with_lease(renewal).then_some(site)
    }

    /// The lease watch failed: logged once per cause (the watch retries
    /// with backoff). The hub keeps judging: sites whose edges heartbeat
    /// through their status as before, the others as silent if this lasts.
    fn lease_error(&self, err: &watcher::Error) {
        let cause = err.to_string();
        let mut book = self.book.lock().unwrap_or_else(|p| p.into_inner());
        if book.failing.as_deref() == Some(cause.as_str()) {
            tracing::debug!(error = %Untrusted(&cause), "site leases");
            return;
        }
        book.failing = Some(cause.clone());
        let code = match err {
            watcher::Error::InitialListFailed(kube::Error::Api(s))
            | watcher::Error::WatchStartFailed(kube::Error::Api(s)) => Some(s.code),
            watcher::Error::WatchError(s) => Some(s.code),
            _ => None,
        };
        match code {
            Some(403 | 404) => tracing::warn!(
                error = %Untrusted(&cause),
                "cannot read site leases: judging sites by the heartbeat in their status only, \
                 so a site whose edge renews a lease looks silent (install this release's CRDs and \
                 hub RBAC: kubectl fleet install --role hub)"
            ),
            _ => tracing::warn!(
                error = %Untrusted(&cause),
                "site lease watch failed, retrying"
            ),
        }
    }
}

/// The site watch `sites` and the lease watch `leases` as one stream of
/// site events: each site folded with its lease ([`Renewals::fold`]), and
/// each renewal that moves a site of `cache`'s heartbeat as that site,
/// folded (an `Apply`). Lease watch errors never end or break the site
/// stream ([`Renewals::lease_error`]); `leases_seen` is told each time the
/// lease watch has listed the leases (`true`) and each time it fails
/// (`false`). Counts each heartbeat the hub sees
/// move by where it came from (`fleet_hub_heartbeats_total{via}`).
///
/// While the site watch lists (between its `Init` and `InitDone`), a
/// renewal of a site already listed is folded into the cache the list
/// replaces at its end: the listed object, folded at its page with the
/// renewals known then, would take the cache's heartbeat back. So each
/// site renewed during a list is folded again from the new cache right
/// after the list's end (the reflector takes `InitDone` before this stream
/// is asked for more). Without it, an API server restart at 100,000
/// sites, paged (a re-list of about a minute), left ~12,500 sites cached
/// with a heartbeat older than the hub had seen: each judged again in
/// memory as a new heartbeat from its edge (a clock-skew condition due),
/// never written, and the liveness record withheld for minutes
/// (docs/benchmarks-100k.md#streaming-lists-unavailable-and-a-restart-during-a-write-backlog).
pub fn with_leases<S, L, F>(
    sites: S,
    leases: L,
    renewals: Arc<Renewals>,
    cache: Store<FederatedCluster>,
    metrics: Arc<Metrics>,
    leases_seen: F,
) -> impl Stream<Item = Result<watcher::Event<FederatedCluster>, watcher::Error>> + Send + 'static
where
    S: Stream<Item = Result<watcher::Event<FederatedCluster>, watcher::Error>> + Send + 'static,
    L: Stream<Item = Result<watcher::Event<(String, Renewal)>, watcher::Error>> + Send + 'static,
    F: Fn(bool) + Send + Sync + 'static,
{
    let leases_seen = Arc::new(leases_seen);
    enum From {
        Site(Box<Result<watcher::Event<FederatedCluster>, watcher::Error>>),
        Lease(Result<watcher::Event<(String, Renewal)>, watcher::Error>),
    }
    struct Merging<M> {
        merged: M,
        /// The site watch lists: the names of the sites renewed meanwhile.
        listing: Option<HashSet<String>>,
        /// Renewed during the list that just ended: folded again from the
        /// cache that now holds the list.
        again: Vec<String>,
    }
    let sites = sites.map(|next| From::Site(Box::new(next)));
    let merged = futures::stream::select(sites, leases.map(From::Lease)).boxed();
    let start = Merging {
        merged,
        listing: None,
        again: Vec::new(),
    };
    futures::stream::unfold(start, move |mut st| {
        let (renewals, cache, metrics) = (renewals.clone(), cache.clone(), metrics.clone());
        let leases_seen = leases_seen.clone();
        async move {
            loop {
                if let Some(name) = st.again.pop() {
                    let Some(cached) = cache.get(&ObjectRef::new(&name)) else {
                        continue;
                    };
                    let mut site = FederatedCluster::clone(&cached);
                    if renewals.fold(&mut site) {
                        return Some((Ok(watcher::Event::Apply(site)), st));
                    }
                    continue;
                }
                let next = match st.merged.next().await? {
                    From::Site(site) => Ok(*site),
                    From::Lease(lease) => Err(lease),
                };
                let out = match next {
                    Ok(Ok(mut event)) => {
                        match &mut event {
                            watcher::Event::Init => st.listing = Some(HashSet::new()),
                            watcher::Event::InitApply(site) => {
                                renewals.fold(site);
                            }
                            watcher::Event::InitDone => {
                                st.again =
                                    st.listing.take().unwrap_or_default().into_iter().collect();
                            }
                            watcher::Event::Apply(site) => {
                                let before = cache
                                    .get(&ObjectRef::from_obj(site))
                                    .and_then(|old| heartbeat(&old));
                                let reported = heartbeat(site);
                                if !renewals.fold(site) && reported.is_some() && reported != before
                                {
                                    metrics.heartbeat_seen("status");
                                }
                            }
                            watcher::Event::Delete(_) => {}
                        }
                        Some(Ok(event))
                    }
                    Ok(Err(e)) => Some(Err(e)),
                    Err(Ok(watcher::Event::InitDone)) => {
                        renewals.lease_event(watcher::Event::InitDone, &cache);
                        leases_seen(true);
                        None
                    }
                    Err(Ok(event)) => renewals.lease_event(event, &cache).map(|site| {
                        metrics.heartbeat_seen("lease");
                        if let Some(renewed) = st.listing.as_mut() {
                            renewed.insert(site.site_name().to_owned());
                        }
                        Ok(watcher::Event::Apply(site))
                    }),
                    Err(Err(e)) => {
                        renewals.lease_error(&e);
                        leases_seen(false);
                        None
                    }
                };
                if let Some(out) = out {
                    return Some((out, st));
                }
            }
        }
    })
}

fn heartbeat(site: &FederatedCluster) -> Option<jiff::Timestamp> {
    site.status
        .as_ref()
        .and_then(|s| s.last_heartbeat_time.as_ref())
        .map(|t| t.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use kube::runtime::reflector;

    fn at(s: &str) -> jiff::Timestamp {
        s.parse().unwrap()
    }

    fn site(name: &str, heartbeat: &str) -> FederatedCluster {
        let mut s = FederatedCluster::test(name).connected();
        s.status.as_mut().unwrap().last_heartbeat_time = Some(Time(at(heartbeat)));
        s
    }

    fn renewal(t: &str) -> Renewal {
        Renewal {
            renew_time: Some(at(t)),
            duration_ms: Some(7),
        }
    }

    type SiteEvent = Result<watcher::Event<FederatedCluster>, watcher::Error>;
    type LeaseEvent = Result<watcher::Event<(String, Renewal)>, watcher::Error>;

    /// Runs `sites` then `leases` through [`with_leases`] (sites first, so
    /// the cache holds them), the cache taking every site event.
    async fn run(
        sites: Vec<SiteEvent>,
        leases: Vec<LeaseEvent>,
    ) -> (Vec<SiteEvent>, Arc<Renewals>) {
        let (cache, mut writer) = reflector::store();
        let renewals = Arc::new(Renewals::default());
        for e in sites.iter().flatten() {
            writer.apply_watcher_event(e);
        }
        let out = with_leases(
            futures::stream::iter(Vec::<SiteEvent>::new()),
            futures::stream::iter(leases),
            renewals.clone(),
            cache,
            Arc::new(Metrics::default()),
            |_| {},
        )
        .collect()
        .await;
        (out, renewals)
    }

    #[tokio::test]
    async fn a_renewal_is_its_site_with_the_later_heartbeat() {
        let (out, renewals) = run(
            vec![Ok(watcher::Event::Apply(site(
                "store-1",
                "2026-12-06T10:00:00Z",
            )))],
            vec![Ok(watcher::Event::Apply((
                "store-1".into(),
                renewal("2026-12-06T10:00:30Z"),
            )))],
        )
        .await;
        let [Ok(watcher::Event::Apply(s))] = &out[..] else {
            panic!("{out:?}")
        };
        let status = s.status.as_ref().unwrap();
        assert_eq!(
            status.last_heartbeat_time,
            Some(Time(at("2026-12-06T10:00:30Z")))
        );
        assert_eq!(status.last_report_duration_milliseconds, Some(7));
        assert_eq!(renewals.len(), 1);
    }

    #[tokio::test]
    async fn a_renewal_older_than_the_status_or_of_an_unknown_site_is_no_event() {
        let (out, renewals) = run(
            vec![Ok(watcher::Event::Apply(site(
                "store-1",
                "2026-12-06T10:00:00Z",
            )))],
            vec![
                Ok(watcher::Event::Apply((
                    "store-1".into(),
                    renewal("2026-12-06T09:00:00Z"),
                ))),
                Ok(watcher::Event::Apply((
                    "gone".into(),
                    renewal("2026-12-06T10:00:00Z"),
                ))),
            ],
        )
        .await;
        assert!(out.is_empty(), "{out:?}");
        // Both kept: the site's next status or its arrival folds them.
        assert_eq!(renewals.len(), 2);
    }

    #[tokio::test]
    async fn a_relist_forgets_the_leases_it_no_longer_lists_and_errors_end_nothing() {
        let (out, renewals) = run(
            vec![],
            vec![
                Ok(watcher::Event::Apply((
                    "a".into(),
                    renewal("2026-12-06T10:00:00Z"),
                ))),
                Ok(watcher::Event::Apply((
                    "b".into(),
                    renewal("2026-12-06T10:00:00Z"),
                ))),
                Err(watcher::Error::WatchStartFailed(kube::Error::Api(
                    Box::new(kube::core::Status::failure("forbidden", "Forbidden").with_code(403)),
                ))),
                Ok(watcher::Event::Init),
                Ok(watcher::Event::InitApply((
                    "b".into(),
                    renewal("2026-12-06T10:00:30Z"),
                ))),
                Ok(watcher::Event::InitDone),
            ],
        )
        .await;
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(renewals.len(), 1);
        let mut b = site("b", "2026-12-06T10:00:00Z");
        assert!(renewals.fold(&mut b));
        let mut a = site("a", "2026-12-06T09:00:00Z");
        assert!(!renewals.fold(&mut a));
    }

    /// A renewal of a site already listed, while the site watch lists
    /// again, holds in the cache after the list's end: the listed object
    /// (folded at its page) replaces the cache then, and would take the
    /// heartbeat back to before the renewal.
    #[tokio::test]
    async fn a_renewal_during_a_list_holds_after_the_lists_end() {
        use futures::channel::mpsc;
        let (cache, mut writer) = reflector::store();
        writer.apply_watcher_event(&watcher::Event::Apply(site("a", "2026-12-06T10:00:00Z")));
        writer.apply_watcher_event(&watcher::Event::Apply(site("b", "2026-12-06T10:00:00Z")));
        let (sites_tx, sites_rx) = mpsc::unbounded::<SiteEvent>();
        let (leases_tx, leases_rx) = mpsc::unbounded::<LeaseEvent>();
        let renewals = Arc::new(Renewals::default());
        let mut out = Box::pin(with_leases(
            sites_rx,
            leases_rx,
            renewals.clone(),
            cache.clone(),
            Arc::new(Metrics::default()),
            |_| {},
        ));
        // Each event as the reflector takes it, before the next is asked for.
        let mut next = async || {
            let event = out.next().await.unwrap().unwrap();
            writer.apply_watcher_event(&event);
            event
        };
        let cached = |name: &str| {
            heartbeat(&cache.get(&ObjectRef::new(name)).unwrap()).map(|t| t.to_string())
        };
        sites_tx.unbounded_send(Ok(watcher::Event::Init)).unwrap();
        sites_tx
            .unbounded_send(Ok(watcher::Event::InitApply(site(
                "a",
                "2026-12-06T10:00:00Z",
            ))))
            .unwrap();
        assert!(matches!(next().await, watcher::Event::Init));
        assert!(matches!(next().await, watcher::Event::InitApply(_)));
        // `a` renews after its page.
        leases_tx
            .unbounded_send(Ok(watcher::Event::Apply((
                "a".into(),
                renewal("2026-12-06T10:00:30Z"),
            ))))
            .unwrap();
        assert!(matches!(next().await, watcher::Event::Apply(_)));
        sites_tx
            .unbounded_send(Ok(watcher::Event::InitApply(site(
                "b",
                "2026-12-06T10:00:00Z",
            ))))
            .unwrap();
        sites_tx
            .unbounded_send(Ok(watcher::Event::InitDone))
            .unwrap();
        assert!(matches!(next().await, watcher::Event::InitApply(_)));
        assert!(matches!(next().await, watcher::Event::InitDone));
        assert_eq!(
            cached("a").as_deref(),
            Some("2026-12-06T10:00:00Z"),
            "the list's end took the cache back (what this fold mends)"
        );
        let again = tokio::time::timeout(std::time::Duration::from_secs(5), out.next()).await;
        let Ok(Some(Ok(watcher::Event::Apply(again)))) = again else {
            panic!("no fold after the list's end: {again:?}")
        };
        writer.apply_watcher_event(&watcher::Event::Apply(again));
        assert_eq!(cached("a").as_deref(), Some("2026-12-06T10:00:30Z"));
        assert_eq!(cached("b").as_deref(), Some("2026-12-06T10:00:00Z"));
        drop((sites_tx, leases_tx));
        assert!(out.next().await.is_none(), "nothing else to fold");
    }
}
