//! Site I/O shared by the operator and the CLI (one face: functions over
//! `Api<FederatedCluster>` answering `kube::Error`, which the operator
//! classifies for its retries and the CLI for the user through
//! [`Cluster::found`](super::Cluster::found)): read a site, watch sites,
//! send the edge's merge patch, replace the hub-owned part with the
//! resourceVersion, write a site's bucket label (the hub's backfill), and
//! check that the fleet CRDs are served.

use futures::{Stream, TryStreamExt as _};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use serde_json::Value;

use super::site_decode::{SiteView, UnmanagedSite};
use crate::api::{API_VERSION, FederatedCluster, HUB_OWNED_STATUS_KEYS};

/// The cluster-scoped FederatedCluster API.
pub fn sites(client: kube::Client) -> Api<FederatedCluster> {
    Api::all(client)
}

/// The same API, decoding each site leniently and without its
/// `managedFields` ([`UnmanagedSite`]): a site always reads, whatever it
/// wrote (`k8s::site_decode`).
fn lenient(api: &Api<FederatedCluster>) -> Api<UnmanagedSite> {
    Api::all(api.clone().into_client())
}

/// Reads one site, decoded leniently without its `managedFields` (the
/// edge identity may read only its own).
pub async fn get_site(
    api: &Api<FederatedCluster>,
    name: &str,
) -> Result<FederatedCluster, kube::Error> {
    lenient(api).get(name).await.map(|s| s.0)
}

/// The site name the hub reads to learn whether the API server answers
/// ([`sites_answer`]): any site of that name, or none, is an answer.
pub const SIGHT_PROBE_NAME: &str = "kubectl-fleet-sight-probe";

/// Whether the API server answers a read of the sites: a GET of the site
/// [`SIGHT_PROBE_NAME`], found or not found (a 404 naming it). Any other
/// error (a 503 of a proxy whose server is down, the `404 page not found`
/// of a server that has not loaded the CRDs yet) is no answer.
pub async fn sites_answer(api: &Api<FederatedCluster>) -> Result<(), kube::Error> {
    match get_site(api, SIGHT_PROBE_NAME).await {
        Ok(_) => Ok(()),
        Err(e) if crate::k8s::is_missing_object(&e, SIGHT_PROBE_NAME) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Sends a JSON merge patch (`{"status": {...}}`) to the site's `/status`.
pub async fn patch_site_status(
    api: &Api<FederatedCluster>,
    name: &str,
    patch: &Value,
) -> Result<FederatedCluster, kube::Error> {
    lenient(api)
        .patch_status(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .map(|s| s.0)
}

/// Sets the bucket label of site `name` to `bucket` (the hub's backfill,
/// `operator::bucket`): one JSON merge patch of that label alone, so the
/// rest of the site's metadata and its spec are sent as they are not at
/// all (and the admission policy refuses the hub anything more). Guarded
/// by `resource_version`, the version the hub saw the wrong label in: if
/// anyone wrote since (the hub's own status write among them), the API
/// server answers 409 and nothing is written, so a label is written, and
/// counted, only over a version that lacked it (the cache may still show
/// an older one after the label was written).
pub async fn patch_site_bucket(
    api: &Api<FederatedCluster>,
    name: &str,
    bucket: &str,
    resource_version: Option<&str>,
) -> Result<(), kube::Error> {
    let mut patch = serde_json::json!({
        "metadata": {"labels": {crate::fleet::bucket::BUCKET_LABEL: bucket}}
    });
    if let Some(version) = resource_version {
        patch["metadata"]["resourceVersion"] = version.into();
    }
    lenient(api)
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(|_| ())
}

/// Writes the hub-owned part of `site.status`, guarded by
/// `site.metadata.resourceVersion`: if anyone wrote since it was read the
/// API server answers 409 and nothing is written.
///
/// A site whose status read whole is replaced (`PUT /status`). A site with
/// fields the hub could not read ([`crate::api::Unreadable`]) gets a JSON
/// merge patch of the hub-owned keys alone, carrying the resourceVersion:
/// a replace would send the status without what the hub could not read,
/// and so remove the site's own keys.
pub async fn replace_site_status(
    api: &Api<FederatedCluster>,
    site: &FederatedCluster,
) -> Result<FederatedCluster, kube::Error> {
    let name = site.metadata.name.clone().unwrap_or_default();
    let status = site.status.as_ref();
    if status.and_then(|s| s.unreadable()).is_none() {
        return lenient(api)
            .replace_status(&name, &PostParams::default(), &UnmanagedSite(site.clone()))
            .await
            .map(|s| s.0);
    }
    let written = serde_json::to_value(status.cloned().unwrap_or_default())
        .map_err(kube::Error::SerdeError)?;
    let hub_keys: serde_json::Map<String, Value> = HUB_OWNED_STATUS_KEYS
        .iter()
        .map(|k| {
            (
                (*k).to_owned(),
                written.get(*k).cloned().unwrap_or(Value::Null),
            )
        })
        .collect();
    let patch = serde_json::json!({
        "metadata": {"resourceVersion": site.metadata.resource_version},
        "status": hub_keys,
    });
    lenient(api)
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(|s| s.0)
}

/// Watches sites (kube-runtime's watcher: list, watch, resume, relist),
/// each decoded leniently as the view `V` keeps it: the hub's
/// [`UnmanagedSite`] (all its metadata but `managedFields`, which are
/// never decoded), `status --watch`'s [`LeanSite`](super::site_decode::LeanSite)
/// (only the name and resourceVersion). A list or an event never fails on
/// what one site wrote (`k8s::site_decode`). The one watch of sites: the
/// hub's controller and `kubectl fleet status --watch`
/// ([`Cluster::site_changes`](super::Cluster::site_changes)) both read it.
pub fn watch_sites<V: SiteView>(
    api: &Api<FederatedCluster>,
    config: watcher::Config,
) -> impl Stream<Item = Result<watcher::Event<FederatedCluster>, watcher::Error>> + Send + 'static + use<V>
{
    let api: Api<V> = Api::all(api.clone().into_client());
    // Retried after a backoff ([`WatchBackoff`]): an API server that is
    // down is not asked again in a loop.
    let watch = kube::runtime::utils::StreamBackoff::new(watcher(api, config), WatchBackoff::new());
    watch.map_ok(|event| match event {
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitApply(s) => watcher::Event::InitApply(s.into_site()),
        watcher::Event::InitDone => watcher::Event::InitDone,
        watcher::Event::Apply(s) => watcher::Event::Apply(s.into_site()),
        watcher::Event::Delete(s) => watcher::Event::Delete(s.into_site()),
    })
}

/// How long the site watch waits before it tries again after an error:
/// 0.25 s, doubling up to 1 s while the errors go on, from 0.25 s again
/// after anything else. kube's default (0.8 s doubling to 30 s, as
/// client-go's reflector) is made for thousands of clients of one API
/// server; a hub is one or two, asking once a second costs a down API
/// server nothing, and every second its site watch waits after the
/// server came back is a second the hub holds judgements, writes no
/// liveness record and serves its REST API from an older cache. Without
/// jitter for the same reason.
#[derive(Debug)]
pub struct WatchBackoff {
    next: std::time::Duration,
}

impl WatchBackoff {
    const FIRST: std::time::Duration = std::time::Duration::from_millis(250);
    const MOST: std::time::Duration = std::time::Duration::from_secs(1);

    pub fn new() -> Self {
        Self { next: Self::FIRST }
    }
}

impl Default for WatchBackoff {
    fn default() -> Self {
        Self::new()
    }
}

impl Iterator for WatchBackoff {
    type Item = std::time::Duration;

    fn next(&mut self) -> Option<Self::Item> {
        let now = self.next;
        self.next = (now * 2).min(Self::MOST);
        Some(now)
    }
}

impl kube::runtime::utils::Backoff for WatchBackoff {
    fn reset(&mut self) {
        self.next = Self::FIRST;
    }
}

/// How a site watch makes its first list, and every re-list after a
/// `410 Gone` or a broken watch ([`watch_sites_listing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitialList {
    /// A streaming list: one WATCH with `sendInitialEvents=true` whose
    /// initial state arrives as ADDED events, object by object, ended by
    /// a BOOKMARK annotated `k8s.io/initial-events-end` (Kubernetes'
    /// WatchList; the v1.36 API server of the real-API test lane serves
    /// it without configuration).
    Streaming,
    /// Paged LISTs of [`LIST_PAGE`] sites each, read from the current
    /// state (no `resourceVersion=0`: the API server's watch cache ignores
    /// `limit` for those and answers the whole list at once), then a
    /// WATCH from the list's resourceVersion.
    Paged,
}

impl InitialList {
    /// Its name in the log and in the hub's `fleet_hub_site_list_mode`.
    pub fn as_str(self) -> &'static str {
        match self {
            InitialList::Streaming => "streaming",
            InitialList::Paged => "paged",
        }
    }
}

/// Sites per page of [`InitialList::Paged`].
pub const LIST_PAGE: u32 = 500;

/// How long a streaming list may go quiet before its initial-events-end
/// bookmark came: an API server that ignores `sendInitialEvents` (one
/// older than v1.27, or a proxy that drops the parameter) answers such a
/// watch with every object as ADDED and then nothing, never the bookmark.
/// A healthy server streams from its watch cache without pauses this
/// long; a false alarm costs nothing but the paged lists.
pub const STREAM_QUIET: std::time::Duration = std::time::Duration::from_secs(10);

/// Why the API server's answer `err` to a streaming list means it does
/// not serve them, if it does: a `400`/`422` to the watch request itself
/// (a v1.27+ server with the WatchList feature off answers 422
/// "sendInitialEvents is forbidden for watch unless the WatchList feature
/// gate is enabled"; a server that predates the parameters refuses
/// `resourceVersionMatch` on a watch the same way), or any other client error, at the start or as an ERROR
/// event, that names the parameters. A refusal of the watch as such (403
/// without either name: the identity may not watch), a `410 Gone`, a
/// `429` or a server error is not one: the watcher retries those as it
/// would any watch.
fn streaming_refused(err: &watcher::Error) -> Option<String> {
    let (status, at_start) = match err {
        watcher::Error::WatchStartFailed(kube::Error::Api(s)) => (s, true),
        watcher::Error::WatchError(s) => (s, false),
        _ => return None,
    };
    let names = ["sendInitialEvents", "resourceVersionMatch", "WatchList"]
        .iter()
        .any(|n| status.message.contains(n));
    let refused = match status.code {
        400 | 422 if at_start => true,
        401 | 408 | 410 | 429 => false,
        400..=499 => names,
        _ => false,
    };
    refused.then(|| {
        format!(
            "the API server answered the streaming list {}: {}",
            status.code, status.message
        )
    })
}

/// A 64-bit hash of a site name (a collision could only cause a needless
/// fallback to paged lists).
fn name_hash(name: &str) -> u64 {
    use std::hash::{BuildHasher as _, BuildHasherDefault};
    BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(name)
}

/// How long a watch may stay silent after an error before it is made to
/// list again ([`watch_listing`]). After an error kube's watcher resumes
/// from the last resourceVersion it saw, and a resumed watch says nothing
/// until an object changes: a watch resumed after an API server's restart
/// at the very resourceVersion the server restarted at (nothing written
/// since its last event) is not told `410 Gone`, and over a fleet whose
/// statuses do not change (heartbeats on leases) nothing would tell the
/// hub that its watch works again. A list is that proof (its end), at the
/// cost of one list of a quiet fleet after such an error.
pub const RESUMED_QUIET: std::time::Duration = std::time::Duration::from_secs(10);

/// [`watch_sites`] with its first list (and every re-list) made as a
/// streaming list ([`InitialList::Streaming`], `base` with
/// `streaming_lists()`), falling back for good to paged lists
/// ([`InitialList::Paged`]) when the API server refuses them
/// ([`streaming_refused`]) or never ends their initial events: quiet for
/// [`STREAM_QUIET`] before the initial-events-end bookmark (an idle fleet),
/// or a site delivered twice before it (a busy one: a streaming list sends
/// each object once, then the bookmark, then changes; a server that
/// ignores the parameter sends changes at once, so a site that heartbeats
/// comes again). A refusal is
/// not an error of the stream: it is told to `told` with the mode and why,
/// and the same watch goes on paged (whatever the streaming list had
/// delivered is dropped: the paged watcher starts with its own `Init`,
/// which resets every reader's buffer). `told` hears
/// [`InitialList::Streaming`] when the first streaming list is complete,
/// and each change of mode after that, so a caller logs each decision
/// once.
pub fn watch_sites_listing<V: SiteView, F>(
    api: &Api<FederatedCluster>,
    base: watcher::Config,
    told: F,
) -> impl Stream<Item = Result<watcher::Event<FederatedCluster>, watcher::Error>>
+ Send
+ 'static
+ use<V, F>
where
    F: FnMut(InitialList, Option<&str>) + Send + 'static,
{
    let api = api.clone();
    watch_listing(
        move |config| watch_sites::<V>(&api, config),
        |site: &FederatedCluster| site.metadata.name.clone().unwrap_or_default(),
        base,
        told,
    )
}

/// What [`watch_sites_listing`] does for sites, for any watch: `watch`
/// makes the watch from a configuration (streaming lists asked for, or
/// paged ones), `name` names an item (to tell a server that ignores
/// `sendInitialEvents` by an item delivered twice). The site leases' watch
/// lists the same way (`k8s::site_lease::watch_site_leases`).
pub fn watch_listing<T, W, S, N, F>(
    watch: W,
    name: N,
    base: watcher::Config,
    told: F,
) -> impl Stream<Item = Result<watcher::Event<T>, watcher::Error>> + Send + 'static
where
    T: Send + 'static,
    W: Fn(watcher::Config) -> S + Send + 'static,
    S: Stream<Item = Result<watcher::Event<T>, watcher::Error>> + Send + 'static,
    N: Fn(&T) -> String + Send + 'static,
    F: FnMut(InitialList, Option<&str>) + Send + 'static,
{
    listing(watch, name, base, told, RESUMED_QUIET)
}

/// [`watch_listing`], a watch silent for `resumed_quiet` after an error
/// listing again.
fn listing<T, W, S, N, F>(
    watch: W,
    name: N,
    base: watcher::Config,
    told: F,
    resumed_quiet: std::time::Duration,
) -> impl Stream<Item = Result<watcher::Event<T>, watcher::Error>> + Send + 'static
where
    T: Send + 'static,
    W: Fn(watcher::Config) -> S + Send + 'static,
    S: Stream<Item = Result<watcher::Event<T>, watcher::Error>> + Send + 'static,
    N: Fn(&T) -> String + Send + 'static,
    F: FnMut(InitialList, Option<&str>) + Send + 'static,
{
    use futures::StreamExt as _;
    struct Listing<T, W, N, F> {
        watch: W,
        name: N,
        base: watcher::Config,
        inner: futures::stream::BoxStream<'static, Result<watcher::Event<T>, watcher::Error>>,
        mode: InitialList,
        /// The last mode told (`None`: none yet).
        told_mode: Option<InitialList>,
        /// Between an `Init` and its `InitDone`.
        initial: bool,
        /// Hashes of the sites delivered since that `Init` (8 bytes a
        /// site, dropped at `InitDone`).
        seen: std::collections::HashSet<u64>,
        told: F,
        /// The last item was an error: the watcher resumes or fails
        /// again, and lists again if it stays silent ([`RESUMED_QUIET`]).
        after_error: bool,
    }
    impl<T, W, S, N, F> Listing<T, W, N, F>
    where
        W: Fn(watcher::Config) -> S,
        S: Stream<Item = Result<watcher::Event<T>, watcher::Error>> + Send + 'static,
        F: FnMut(InitialList, Option<&str>),
    {
        /// A new watcher in the same mode: it lists first.
        fn relist(&mut self) {
            self.initial = false;
            self.seen = Default::default();
            let config = match self.mode {
                InitialList::Streaming => self.base.clone().streaming_lists(),
                InitialList::Paged => self.base.clone().page_size(LIST_PAGE),
            };
            self.inner = (self.watch)(config).boxed();
        }
        /// From now on paged lists, from a new watcher.
        fn fall_back(&mut self, why: &str) {
            self.mode = InitialList::Paged;
            self.relist();
            self.tell(InitialList::Paged, Some(why));
        }
        fn tell(&mut self, mode: InitialList, why: Option<&str>) {
            if self.told_mode != Some(mode) {
                self.told_mode = Some(mode);
                (self.told)(mode, why);
            }
        }
    }
    let start = Listing {
        inner: watch(base.clone().streaming_lists()).boxed(),
        watch,
        name,
        base,
        mode: InitialList::Streaming,
        told_mode: None,
        initial: false,
        seen: Default::default(),
        told,
        after_error: false,
    };
    futures::stream::unfold(start, move |mut st| async move {
        loop {
            let next = if st.after_error {
                // Resumed, or still failing: either shows within
                // `resumed_quiet`; a silent watch lists again.
                match tokio::time::timeout(resumed_quiet, st.inner.next()).await {
                    Ok(next) => next,
                    Err(_) => {
                        st.after_error = false;
                        st.relist();
                        continue;
                    }
                }
            } else if st.mode == InitialList::Streaming && st.initial {
                match tokio::time::timeout(STREAM_QUIET, st.inner.next()).await {
                    Ok(next) => next,
                    Err(_) => {
                        st.fall_back(&format!(
                            "no initial-events-end bookmark after {}s without an event (the API server ignores sendInitialEvents)",
                            STREAM_QUIET.as_secs()
                        ));
                        continue;
                    }
                }
            } else {
                st.inner.next().await
            };
            st.after_error = matches!(next, Some(Err(_)));
            if st.mode == InitialList::Paged {
                return next.map(|next| (next, st));
            }
            match next {
                None => return None,
                Some(Err(err)) => match streaming_refused(&err) {
                    Some(why) => {
                        st.after_error = false;
                        st.fall_back(&why);
                    }
                    None => return Some((Err(err), st)),
                },
                Some(Ok(event)) => {
                    match &event {
                        watcher::Event::Init => {
                            st.initial = true;
                            st.seen = Default::default();
                        }
                        watcher::Event::InitApply(item) if st.initial => {
                            let name = (st.name)(item);
                            if !st.seen.insert(name_hash(&name)) {
                                st.fall_back(&format!(
                                    "{:?} came twice before the initial-events-end bookmark (the API server ignores sendInitialEvents)",
                                    name
                                ));
                                continue;
                            }
                        }
                        watcher::Event::InitDone => {
                            st.initial = false;
                            st.seen = Default::default();
                            st.tell(InitialList::Streaming, None);
                        }
                        _ => {}
                    }
                    return Some((Ok(event), st));
                }
            }
        }
    })
}

/// `events`, read in bursts: whenever it has nothing ready even after the
/// other tasks had a turn, it is left alone for `pause` before being
/// waited on again, so the events that arrive meanwhile wait in the
/// socket and are read, decrypted and handed on together (one wake-up and
/// a few reads for a burst instead of one each). Delays an event by at
/// most `pause`.
///
/// Never inside a list: after an event for which `listing` says more of a
/// list is on its way (a watcher's `Init` or `InitApply`, see
/// [`in_a_list`]), the next one is waited for at once. A list arrives as
/// fast as the connection carries it; paused, it was read about one socket
/// buffer per pause — 97 s for the first list of 100,000 sites, with the
/// hub and the API server mostly idle (docs/benchmarks-100k.md).
pub fn read_in_bursts<S, F>(
    events: S,
    pause: std::time::Duration,
    listing: F,
) -> impl Stream<Item = S::Item> + Send + 'static
where
    S: Stream + Send + 'static,
    S::Item: Send,
    F: Fn(&S::Item) -> bool + Send + Sync + 'static,
{
    use futures::StreamExt as _;
    let start = (Box::pin(events), false, listing);
    futures::stream::unfold(start, move |(mut events, in_list, listing)| async move {
        let next = if in_list {
            events.next().await
        } else {
            match futures::poll!(events.next()) {
                std::task::Poll::Ready(next) => next,
                // Nothing decoded yet may only mean that the connection's task
                // has not read the socket since: it gets one turn first, and
                // the pause starts only once the socket itself is drained.
                std::task::Poll::Pending => {
                    tokio::task::yield_now().await;
                    match futures::poll!(events.next()) {
                        std::task::Poll::Ready(next) => next,
                        std::task::Poll::Pending => {
                            tokio::time::sleep(pause).await;
                            events.next().await
                        }
                    }
                }
            }
        };
        let event = next?;
        let in_list = listing(&event);
        Some((event, (events, in_list, listing)))
    })
}

/// Whether a watcher's `event` is part of a list that goes on (its `Init`
/// or one of its `InitApply`): what [`read_in_bursts`] reads without pausing.
pub fn in_a_list<K, E>(event: &Result<watcher::Event<K>, E>) -> bool {
    matches!(
        event,
        Ok(watcher::Event::Init | watcher::Event::InitApply(_))
    )
}

/// Whether the API server serves `federatedclusters` in the fleet group
/// (discovery; any authenticated identity may ask).
pub async fn crds_installed(client: &kube::Client) -> Result<bool, kube::Error> {
    match client.list_api_group_resources(API_VERSION).await {
        Ok(list) => Ok(list.resources.iter().any(|r| r.name == "federatedclusters")),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, message: &str) -> Box<kube::core::Status> {
        Box::new(kube::core::Status::failure(message, "").with_code(code))
    }

    #[test]
    fn a_streaming_list_is_refused_by_a_client_error_about_it_not_by_a_retryable_one() {
        let at_start = |code, message| {
            streaming_refused(&watcher::Error::WatchStartFailed(kube::Error::Api(status(
                code, message,
            ))))
        };
        let gate_off = "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled";
        let why = at_start(422, gate_off).expect("the WatchList gate off refuses");
        assert!(
            why.contains("422") && why.contains("sendInitialEvents is forbidden"),
            "{why}"
        );
        // An older server that knows neither parameter.
        assert!(
            at_start(
                422,
                "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch"
            )
            .is_some()
        );
        assert!(at_start(400, "bad request").is_some());
        // A proxy or policy that names the parameter.
        assert!(at_start(403, "sendInitialEvents is not allowed here").is_some());
        // The identity may not watch; the server is busy, gone or broken:
        // the watcher retries those as any watch, still streaming.
        assert!(
            at_start(
                403,
                "federatedclusters is forbidden: User \"x\" cannot watch"
            )
            .is_none()
        );
        for code in [401, 410, 429, 500, 503] {
            assert!(at_start(code, "sendInitialEvents").is_none(), "{code}");
        }
        // An ERROR event in the stream only when it names the parameters.
        assert!(streaming_refused(&watcher::Error::WatchError(status(400, "bad"))).is_none());
        assert!(
            streaming_refused(&watcher::Error::WatchError(status(
                400,
                "sendInitialEvents is not supported"
            )))
            .is_some()
        );
        assert!(streaming_refused(&watcher::Error::NoResourceVersion).is_none());
    }
    use futures::StreamExt as _;
    use std::time::Duration;

    #[tokio::test(flavor = "current_thread")]
    async fn a_drained_watch_is_left_alone_for_the_pause() {
        let (tx, rx) = futures::channel::mpsc::unbounded::<u32>();
        let mut events = std::pin::pin!(read_in_bursts(rx, Duration::from_secs(3600), |_| false));
        // What is ready passes straight through.
        tx.unbounded_send(1).unwrap();
        tx.unbounded_send(2).unwrap();
        assert_eq!(events.next().await, Some(1));
        assert_eq!(events.next().await, Some(2));
        // An event that comes in while the other tasks have their turn
        // (as the connection's task reads the socket) starts no pause.
        let sender = tx.clone();
        tokio::spawn(async move { sender.unbounded_send(3).unwrap() });
        let next = tokio::time::timeout(Duration::from_secs(10), events.next()).await;
        assert_eq!(next.unwrap(), Some(3));
        // Drained: an event that comes in later waits out the pause.
        let sender = tx.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            sender.unbounded_send(4).unwrap();
        });
        let next = tokio::time::timeout(Duration::from_secs(1), events.next()).await;
        assert!(next.is_err(), "read before the pause ended: {next:?}");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn an_event_after_the_pause_is_delivered_and_the_end_passes_through() {
        let (tx, rx) = futures::channel::mpsc::unbounded::<u32>();
        let mut events = std::pin::pin!(read_in_bursts(rx, Duration::from_millis(50), |_| false));
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            tx.unbounded_send(7).unwrap();
            tx.unbounded_send(8).unwrap();
        });
        assert_eq!(events.next().await, Some(7));
        assert_eq!(events.next().await, Some(8));
        assert_eq!(
            events.next().await,
            None,
            "the sender is gone: the stream ends"
        );
    }

    /// Inside a list nothing is paused: events that come in one after
    /// another while a list goes on are read as they come.
    #[tokio::test(flavor = "current_thread")]
    async fn a_list_is_read_without_pauses() {
        let (tx, rx) = futures::channel::mpsc::unbounded::<u32>();
        // Odd numbers stand for a list's events, an even one ends it.
        let mut events =
            std::pin::pin!(read_in_bursts(rx, Duration::from_secs(3600), |n| n % 2 == 1));
        tx.unbounded_send(1).unwrap();
        assert_eq!(events.next().await, Some(1));
        for n in [3, 5, 6] {
            let sender = tx.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(10)).await;
                sender.unbounded_send(n).unwrap();
            });
            let next = tokio::time::timeout(Duration::from_secs(10), events.next()).await;
            assert_eq!(next.expect("paused inside a list"), Some(n));
        }
        // The list is over: a later event waits out the pause again.
        let sender = tx.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            sender.unbounded_send(8).unwrap();
        });
        let next = tokio::time::timeout(Duration::from_secs(1), events.next()).await;
        assert!(next.is_err(), "read before the pause ended: {next:?}");
    }

    /// A watch that resumes after an error and then says nothing (resumed
    /// at the resourceVersion an API server restarted at, over a fleet
    /// whose objects do not change) is made to list again after
    /// [`RESUMED_QUIET`] (shortened here): the end of that list is how a
    /// reader knows its watch works again.
    #[tokio::test(flavor = "current_thread")]
    async fn a_resumed_watch_that_stays_silent_lists_again() {
        use futures::StreamExt as _;
        use std::sync::atomic::{AtomicUsize, Ordering};
        type Item = Result<watcher::Event<String>, watcher::Error>;
        let made = std::sync::Arc::new(AtomicUsize::new(0));
        let counted = made.clone();
        let watch = move |_config: watcher::Config| {
            let n = counted.fetch_add(1, Ordering::SeqCst);
            let list: Vec<Item> = vec![
                Ok(watcher::Event::Init),
                Ok(watcher::Event::InitApply(format!("site-{n}"))),
                Ok(watcher::Event::InitDone),
            ];
            let failed: Vec<Item> = if n == 0 {
                vec![Err(watcher::Error::NoResourceVersion)]
            } else {
                vec![]
            };
            futures::stream::iter(list)
                .chain(futures::stream::iter(failed))
                .chain(futures::stream::pending())
        };
        let quiet = Duration::from_millis(300);
        let mut events = Box::pin(listing(
            watch,
            String::clone,
            watcher::Config::default(),
            |_, _| {},
            quiet,
        ));
        let mut next = async || events.next().await.expect("the watch ended");
        for _ in 0..3 {
            assert!(next().await.is_ok());
        }
        let started = tokio::time::Instant::now();
        assert!(next().await.is_err(), "the error is passed on");
        let relisted = tokio::time::timeout(quiet * 20, next()).await;
        assert!(
            matches!(relisted, Ok(Ok(watcher::Event::Init))),
            "the silent watch was not made to list again: {relisted:?}"
        );
        assert!(
            started.elapsed() >= quiet,
            "listed again before the watch was quiet for {quiet:?}"
        );
        assert!(matches!(next().await, Ok(watcher::Event::InitApply(s)) if s == "site-1"));
        assert!(matches!(next().await, Ok(watcher::Event::InitDone)));
        assert_eq!(made.load(Ordering::SeqCst), 2, "one new watcher");
    }

    /// The site watch retries after 0.25 s, doubling to at most 1 s, and
    /// from 0.25 s again once something else than an error came.
    #[test]
    fn the_site_watch_backs_off_to_five_seconds_and_starts_over() {
        use kube::runtime::utils::Backoff as _;
        let mut backoff = WatchBackoff::new();
        let ms =
            |b: &mut WatchBackoff, n| -> Vec<u128> { b.take(n).map(|d| d.as_millis()).collect() };
        assert_eq!(ms(&mut backoff, 5), [250, 500, 1000, 1000, 1000]);
        backoff.reset();
        assert_eq!(ms(&mut backoff, 2), [250, 500]);
    }
}
