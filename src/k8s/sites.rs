//! FederatedCluster and FederationStatus I/O on the hub: apply, read,
//! list, watch, delete, a site's maintenance window and quarantine, and
//! the Events recorded about a site.

use futures::{Stream, TryStreamExt};
use kube::api::{Api, ListParams};
use kube::runtime::watcher;

use super::client::Cluster;
use super::error::Error;
use super::list_token;
use super::object_ref::ObjectRef;
use super::site_decode::{self, LeanSite};
use crate::api::{
    Cascade, Connectivity, Correlation, FEDERATION_STATUS_NAME, FederatedCluster, FederationStatus,
    HubLiveness, MaintenanceWindow, Quarantine, Renewal,
};
use crate::fleet::policy::Incidents;

/// A FederatedCluster as the server applied it.
pub struct AppliedSite {
    /// What was applied, for the "… applied" line.
    pub object: ObjectRef,
    /// Its `metadata.uid`, which the site's identity objects are owned by
    /// (read from the apply's answer: no second round trip).
    pub uid: String,
}

impl Cluster {
    /// The FederatedCluster API, for the I/O shared with the operator
    /// (`k8s::site_status`).
    pub fn sites(&self) -> Api<FederatedCluster> {
        super::site_status::sites(self.client.clone())
    }

    /// The FederationStatus API, for the I/O shared with the operator
    /// (`k8s::federation_status`).
    pub fn federation_statuses(&self) -> Api<FederationStatus> {
        super::federation_status::federation_statuses(self.client.clone())
    }

    /// Awaits `read` (one of the functions the CLI shares with the
    /// operator: `k8s::site_status`, `k8s::federation_status`), its
    /// failure told as the CLI tells it ([`Error::api`]: what failed, on
    /// which server, the hint); Ok(None) when the object named is not
    /// there. A missing CRD stays an error.
    pub async fn found<T>(
        &self,
        what: impl Into<String>,
        read: impl std::future::Future<Output = Result<T, kube::Error>>,
    ) -> Result<Option<T>, Error> {
        match read.await {
            Ok(value) => Ok(Some(value)),
            Err(e) => {
                let err = Error::api(what, self.server(), e);
                if err.is_not_found() {
                    Ok(None)
                } else {
                    Err(err)
                }
            }
        }
    }

    /// Server-side applies a site's spec (the status is never sent: it has
    /// its own subresource and writers).
    pub async fn apply_site(&self, site: &FederatedCluster) -> Result<AppliedSite, Error> {
        let name = site.site_name().to_owned();
        let mut body = site.clone();
        body.status = None;
        body.metadata.resource_version = None;
        body.metadata.managed_fields = None;
        let applied = self.apply(&self.sites(), &name, &body).await?;
        Ok(AppliedSite {
            object: ObjectRef {
                kind: "FederatedCluster".into(),
                name,
                namespace: None,
            },
            uid: applied.metadata.uid.unwrap_or_default(),
        })
    }

    /// Turns a Pull site into a Push site in one JSON merge patch (mode and
    /// the removal of `kubeconfigSecretRef` together, so the CEL rule that
    /// ties them holds), before the spec is applied. Server-side apply drops
    /// the map by itself only when this field manager alone owns it; an
    /// explicit removal also works when another writer (`kubectl edit`, a
    /// GitOps tool) set or touched `kubeconfigSecretRef`.
    pub async fn switch_site_to_push(&self, name: &str) -> Result<(), Error> {
        let patch = serde_json::json!({ "spec": { "mode": "Push", "kubeconfigSecretRef": null } });
        let params = kube::api::PatchParams {
            field_manager: Some(super::FIELD_MANAGER.to_owned()),
            ..Default::default()
        };
        self.sites()
            .patch(name, &params, &kube::api::Patch::Merge(&patch))
            .await
            .map_err(|e| {
                Error::api(
                    format!("switch FederatedCluster {name} to Push"),
                    self.server(),
                    e,
                )
            })?;
        Ok(())
    }

    /// Removes `keys` from a site's status in one JSON merge patch of the
    /// status subresource (a mode switch drops the old mode's credential
    /// and health-check fields); a key that is not there costs nothing.
    pub async fn clear_site_status(&self, name: &str, keys: &[&str]) -> Result<(), Error> {
        let cleared: serde_json::Map<String, serde_json::Value> = keys
            .iter()
            .map(|k| ((*k).to_owned(), serde_json::Value::Null))
            .collect();
        let patch = serde_json::json!({ "status": cleared });
        let params = kube::api::PatchParams {
            field_manager: Some(super::FIELD_MANAGER.to_owned()),
            ..Default::default()
        };
        self.sites()
            .patch_status(name, &params, &kube::api::Patch::Merge(&patch))
            .await
            .map_err(|e| {
                Error::api(
                    format!("clear the status of FederatedCluster {name}"),
                    self.server(),
                    e,
                )
            })?;
        Ok(())
    }

    /// Sets (Some) or removes (None) a site's maintenance window in one
    /// JSON merge patch of `spec.maintenance` (field manager
    /// `kubectl-fleet`), leaving the rest of the spec to its owners:
    /// `register`'s server-side applies keep a window they find. A key the
    /// new window leaves out is removed, not merged from the old one.
    /// Ok(false) when the site is not registered.
    pub async fn set_site_maintenance(
        &self,
        name: &str,
        window: Option<&MaintenanceWindow>,
    ) -> Result<bool, Error> {
        let value = match window {
            Some(w) => serde_json::json!({
                "since": w.since,
                "until": w.until,
                "reason": w.reason,
            }),
            None => serde_json::Value::Null,
        };
        let what = match window {
            Some(_) => format!("cordon FederatedCluster {name}"),
            None => format!("uncordon FederatedCluster {name}"),
        };
        self.patch_site_spec(name, "maintenance", value, what).await
    }

    /// Sets (Some) or removes (None) a site's quarantine in one JSON merge
    /// patch of `spec.quarantine` (field manager `kubectl-fleet`), as
    /// [`Cluster::set_site_maintenance`] does a maintenance window.
    /// Ok(false) when the site is not registered.
    pub async fn set_site_quarantine(
        &self,
        name: &str,
        quarantine: Option<&Quarantine>,
    ) -> Result<bool, Error> {
        let value = match quarantine {
            Some(q) => serde_json::json!({ "since": q.since, "reason": q.reason }),
            None => serde_json::Value::Null,
        };
        let what = match quarantine {
            Some(_) => format!("quarantine FederatedCluster {name}"),
            None => format!("unquarantine FederatedCluster {name}"),
        };
        self.patch_site_spec(name, "quarantine", value, what).await
    }

    /// Sets (Some) or removes (None) a site's schedule in one JSON merge
    /// patch of `spec.connectivity` (field manager `kubectl-fleet`), as
    /// [`Cluster::set_site_maintenance`] does a maintenance window. The
    /// schedule replaces the old one whole: its keys that are unset are
    /// sent as null, so a merge patch cannot keep a stale one. Ok(false)
    /// when the site is not registered.
    pub async fn set_site_connectivity(
        &self,
        name: &str,
        connectivity: Option<&Connectivity>,
    ) -> Result<bool, Error> {
        let value = match connectivity {
            Some(c) => serde_json::json!({
                "timeZone": c.time_zone,
                "offline": (!c.offline.is_empty()).then_some(&c.offline),
                "absentUpToSeconds": c.absent_up_to_seconds,
            }),
            None => serde_json::Value::Null,
        };
        let what = match connectivity {
            Some(_) => format!("schedule FederatedCluster {name}"),
            None => format!("clear the schedule of FederatedCluster {name}"),
        };
        self.patch_site_spec(name, "connectivity", value, what)
            .await
    }

    /// One JSON merge patch of `spec.KEY` (field manager `kubectl-fleet`),
    /// leaving the rest of the spec to its owners. Ok(false) when the site
    /// is not registered.
    async fn patch_site_spec(
        &self,
        name: &str,
        key: &str,
        value: serde_json::Value,
        what: String,
    ) -> Result<bool, Error> {
        let patch = serde_json::json!({ "spec": { key: value } });
        let params = kube::api::PatchParams {
            field_manager: Some(super::FIELD_MANAGER.to_owned()),
            ..Default::default()
        };
        match self
            .sites()
            .patch(name, &params, &kube::api::Patch::Merge(&patch))
            .await
        {
            Ok(_) => Ok(true),
            Err(e) => {
                let err = Error::api(what, self.server(), e);
                if err.is_not_found() {
                    Ok(false)
                } else {
                    Err(err)
                }
            }
        }
    }

    /// The Events recorded about a site, as `kubectl describe` finds them:
    /// one list of core/v1 Events in every namespace (the object is
    /// cluster-scoped; kube's recorder files such events in `default`)
    /// whose `involvedObject` is the FederatedCluster `name`. Events written
    /// through events.k8s.io/v1 (`regarding`) are the same objects.
    pub async fn site_events(
        &self,
        name: &str,
    ) -> Result<Vec<k8s_openapi::api::core::v1::Event>, Error> {
        let api: Api<k8s_openapi::api::core::v1::Event> = Api::all(self.client.clone());
        let params = ListParams::default().fields(&site_events_selector(name));
        let list = api.list(&params).await.map_err(|e| {
            Error::api(
                format!("list the Events of FederatedCluster {name}"),
                self.server(),
                e,
            )
        })?;
        Ok(list.items)
    }

    /// The names of every registered site, sorted (a metadata-only list:
    /// shell completion asks this on every TAB).
    pub async fn list_site_names(&self) -> Result<Vec<String>, Error> {
        let list = self
            .sites()
            .list_metadata(&ListParams::default())
            .await
            .map_err(|e| Error::api(LIST_SITES, self.server(), e))?;
        let mut names: Vec<String> = list
            .items
            .into_iter()
            .filter_map(|m| m.metadata.name)
            .collect();
        names.sort();
        Ok(names)
    }

    /// Every label of the registered sites with how many sites carry it
    /// (a metadata-only list): what a selector could have matched.
    pub async fn site_label_counts(
        &self,
    ) -> Result<std::collections::BTreeMap<(String, String), usize>, Error> {
        let list = self
            .sites()
            .list_metadata(&ListParams::default())
            .await
            .map_err(|e| Error::api(LIST_SITES, self.server(), e))?;
        let mut counts = std::collections::BTreeMap::new();
        for item in list.items {
            for (k, v) in item.metadata.labels.unwrap_or_default() {
                *counts.entry((k, v)).or_default() += 1;
            }
        }
        Ok(counts)
    }

    /// Every site lease's renewal, by site (`FederatedClusterLease`,
    /// listed page by page); none where leases are not installed or this
    /// identity may not list them.
    pub async fn site_renewals(&self) -> Result<std::collections::HashMap<String, Renewal>, Error> {
        super::site_lease::list_site_renewals(self.client.clone())
            .await
            .map(Option::unwrap_or_default)
            .map_err(|e| Error::api(LIST_LEASES, self.server(), e))
    }

    /// The renewal of site `name`'s lease (`FederatedClusterLease`), if it
    /// has one this identity may read.
    pub async fn site_renewal(&self, name: &str) -> Result<Option<Renewal>, Error> {
        super::site_lease::get_site_renewal(self.client.clone(), name)
            .await
            .map_err(|e| {
                Error::api(
                    format!("get FederatedClusterLease {name}"),
                    self.server(),
                    e,
                )
            })
    }

    /// Lists sites, optionally filtered by a label selector, sorted by name;
    /// each site lean, as [`Cluster::for_each_site_page`] decodes it, its
    /// lease folded in.
    pub async fn list_sites(&self, selector: Option<&str>) -> Result<Vec<FederatedCluster>, Error> {
        self.collect_sites(selector, Heartbeats::Folded).await
    }

    /// [`Cluster::list_sites`] without reading the leases: for commands
    /// that pick sites by their labels and spec (rotate, unregister,
    /// cordon), not show or judge their heartbeats — at 100,000 sites a
    /// lease list they would not use is ~30 MB.
    pub async fn select_sites(
        &self,
        selector: Option<&str>,
    ) -> Result<Vec<FederatedCluster>, Error> {
        self.collect_sites(selector, Heartbeats::AsStored).await
    }

    async fn collect_sites(
        &self,
        selector: Option<&str>,
        heartbeats: Heartbeats,
    ) -> Result<Vec<FederatedCluster>, Error> {
        let mut sites = Vec::new();
        self.site_pages(selector, heartbeats, |page| {
            sites.extend(page);
            Ok::<_, Box<Error>>(())
        })
        .await
        .map_err(|e| *e)?;
        Ok(sites)
    }

    /// Lists sites a page at a time (`limit`/`continue`, [`SITE_PAGE_SIZE`]
    /// per request) and hands each page to `each`, sorted by name; pages
    /// follow each other in name order, so the concatenation is the sorted
    /// list of [`Cluster::list_sites`] without ever holding it. Each site is
    /// decoded lean ([`LeanSite`]): metadata only its name and resourceVersion (no
    /// `managedFields`, labels or annotations), with the full spec and
    /// status, and leniently: what one site wrote never fails the page.
    ///
    /// One page ahead is fetched while a page is decoded and handed to
    /// `each`: its request goes out as soon as this page's `continue`
    /// token is read ([`list_token`]), so the server produces the next page
    /// while this one is worked on. At most two pages are held: the one
    /// being worked on and the one arriving.
    pub async fn for_each_site_page<E: From<Error>>(
        &self,
        selector: Option<&str>,
        each: impl FnMut(Vec<FederatedCluster>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.site_pages(selector, Heartbeats::Folded, each).await
    }

    async fn site_pages<E: From<Error>>(
        &self,
        selector: Option<&str>,
        heartbeats: Heartbeats,
        mut each: impl FnMut(Vec<FederatedCluster>) -> Result<(), E>,
    ) -> Result<(), E> {
        let what = LIST_SITES;
        // The request for the page after `token`, if there is one.
        let fetch = |token: Option<&str>| {
            token
                .map(|t| self.fetch_site_page(selector, Some(t)))
                .transpose()
        };
        let mut pending = self.fetch_site_page(selector, None).map_err(|e| *e)?;
        // Each site's lease, read beside the first page and folded into
        // every site (`FederatedCluster::with_lease`): the heartbeat is the
        // later of the status's and the lease's.
        let mut leases = matches!(heartbeats, Heartbeats::Folded)
            .then(|| tokio::spawn(super::site_lease::list_site_renewals(self.client.clone())));
        let mut renewals = std::collections::HashMap::new();
        let mut last: Option<String> = None;
        loop {
            let body = pending
                .body()
                .await
                .map_err(|e| Error::api(what, self.server(), e))?;
            // The next request goes out before this page is decoded.
            let early = list_token::list_meta(&body).map(|meta| nonempty(meta.continue_));
            let mut next = fetch(early.as_ref().and_then(|t| t.as_deref())).map_err(|e| *e)?;
            if next.is_some() {
                // Lets the runtime write the request out before the CPU
                // work below (this runtime has one thread).
                tokio::task::yield_now().await;
            }
            let (meta, mut sites) =
                site_decode::decode_site_page::<list_token::ListMeta, site_decode::NameOnly>(&body)
                    .map_err(|e| Error::api(what, self.server(), kube::Error::SerdeError(e)))?;
            drop(body);
            let token = nonempty(meta.continue_);
            if early.as_ref() != Some(&token) {
                // Not read early (or, never seen, read wrong): ask now.
                next = fetch(token.as_deref()).map_err(|e| *e)?;
            }
            if let Some(leases) = leases.take() {
                renewals = leases
                    .await
                    .map_err(|e| Error::Unexpected {
                        what: LIST_LEASES.into(),
                        reason: e.to_string(),
                    })?
                    .map_err(|e| Error::api(LIST_LEASES, self.server(), e))?
                    .unwrap_or_default();
            }
            for site in &mut sites {
                site.with_lease_among(&renewals);
            }
            sites.sort_by(|a, b| a.site_name().cmp(b.site_name()));
            if let (Some(last), Some(first)) = (&last, sites.first())
                && first.site_name() <= last.as_str()
            {
                return Err(Error::Unexpected {
                    what: what.into(),
                    reason: format!(
                        "the server returned pages out of name order ({} after {last})",
                        first.site_name()
                    ),
                }
                .into());
            }
            if let Some(site) = sites.last() {
                last = Some(site.site_name().to_owned());
            }
            each(sites)?;
            match next {
                Some(next) => pending = next,
                None => return Ok(()),
            }
        }
    }

    /// Starts the request for one page of sites; its answer arrives while
    /// the caller works (see [`PageFetch`]).
    fn fetch_site_page(
        &self,
        selector: Option<&str>,
        token: Option<&str>,
    ) -> Result<PageFetch, Box<Error>> {
        let mut params = ListParams::default().limit(SITE_PAGE_SIZE);
        if let Some(selector) = selector {
            params = params.labels(selector);
        }
        if let Some(token) = token {
            params = params.continue_token(token);
        }
        let req =
            kube::core::Request::new(<FederatedCluster as kube::Resource>::url_path(&(), None))
                .list(&params)
                .map_err(|e| {
                    Box::new(Error::Unexpected {
                        what: LIST_SITES.into(),
                        reason: e.to_string(),
                    })
                })?;
        let client = self.client.clone();
        Ok(PageFetch(tokio::spawn(response_text(client, req))))
    }

    /// `kubectl fleet status --watch`'s view of
    /// [`site_status::watch_sites`](super::site_status::watch_sites) (the
    /// one watch of sites, here as [`LeanSite`]: metadata only its name
    /// and resourceVersion): the whole fleet once the initial list (or a
    /// re-list) is in, then each site applied or deleted, failures told as
    /// the CLI tells them. The caller keeps the fleet (one copy), so a
    /// change costs what the one site costs, not a copy of the fleet.
    pub fn site_changes(
        &self,
        selector: Option<&str>,
    ) -> impl Stream<Item = Result<SiteChange, Error>> + Send + 'static {
        let mut config = watcher::Config::default();
        if let Some(selector) = selector {
            config = config.labels(selector);
        }
        let server = self.server().to_owned();
        let mut initial: Vec<FederatedCluster> = Vec::new();
        // Listed as the hub lists them: streamed, else paged.
        super::site_status::watch_sites_listing::<LeanSite, _>(&self.sites(), config, |_, _| {})
            .map_err(move |e| watch_error(&server, e))
            .try_filter_map(move |event| {
                let change = match event {
                    watcher::Event::Init => {
                        initial.clear();
                        None
                    }
                    watcher::Event::InitApply(site) => {
                        initial.push(site);
                        None
                    }
                    watcher::Event::InitDone => {
                        Some(SiteChange::Listed(std::mem::take(&mut initial)))
                    }
                    watcher::Event::Apply(site) => Some(SiteChange::Applied(Box::new(site))),
                    watcher::Event::Delete(site) => {
                        Some(SiteChange::Deleted(site.site_name().to_owned()))
                    }
                };
                futures::future::ready(Ok(change))
            })
    }

    /// Deletes a site's FederatedCluster; Ok(None) if it was not there.
    pub async fn delete_site(&self, name: &str) -> Result<Option<ObjectRef>, Error> {
        Ok(self
            .delete_if_exists(&self.sites(), name)
            .await?
            .then(|| ObjectRef {
                kind: "FederatedCluster".into(),
                name: name.to_owned(),
                namespace: None,
            }))
    }
}

impl Cluster {
    /// The FederationStatus singleton (Ok(None) when the hub operator has
    /// not written it yet), and the API server's clock as the answer's
    /// `Date` states it (views judge the hub's liveness record
    /// in it against that clock).
    pub async fn get_federation_status_dated(
        &self,
    ) -> (Result<Option<FederationStatus>, Error>, super::ServerClock) {
        self.read_federation_status::<FederationStatus>().await
    }

    /// Reads only `status.hub` of the FederationStatus singleton: the hub
    /// leader's liveness record (the rest of the object, which can be
    /// large, is not kept), and the API server's clock from the answer's
    /// `Date` header, which views judge the record's age against. The
    /// record is None when there is no singleton, or no record in it, or
    /// the cluster does not serve the kind.
    pub async fn hub_liveness(&self) -> LivenessRead {
        #[derive(serde::Deserialize)]
        struct LeanStatus {
            #[serde(default)]
            hub: Option<HubLiveness>,
        }
        let (read, clock) = self.read_federation_status::<Lean<LeanStatus>>().await;
        LivenessRead {
            record: served(read).map(|lean| lean.and_then(|l| l.status).and_then(|s| s.hub)),
            clock,
        }
    }

    /// Reads only the incidents of the FederationStatus singleton that
    /// decide signals (`status.correlations`, `status.cascades`), indexed
    /// as the hub decides with them; none when there is no singleton or
    /// the cluster does not serve the kind.
    pub async fn fleet_incidents(&self) -> Result<Incidents, Error> {
        #[derive(serde::Deserialize)]
        struct LeanStatus {
            #[serde(default)]
            correlations: Vec<Correlation>,
            #[serde(default)]
            cascades: Vec<Cascade>,
        }
        let (read, _) = self.read_federation_status::<Lean<LeanStatus>>().await;
        Ok(served(read)?
            .and_then(|l| l.status)
            .map(|s| Incidents::new(&s.correlations, &s.cascades))
            .unwrap_or_default())
    }

    /// The FederationStatus singleton decoded as `T` (only what `T` names
    /// is kept; Ok(None) when there is no singleton), and the API server's
    /// clock as the answer dated it.
    async fn read_federation_status<T: serde::de::DeserializeOwned>(
        &self,
    ) -> (Result<Option<T>, Error>, super::ServerClock) {
        let what = format!("get FederationStatus {FEDERATION_STATUS_NAME}");
        let req = match kube::core::Request::new(<FederationStatus as kube::Resource>::url_path(
            &(),
            None,
        ))
        .get(FEDERATION_STATUS_NAME, &Default::default())
        {
            Ok(req) => req,
            Err(e) => {
                let err = Error::Unexpected {
                    what,
                    reason: e.to_string(),
                };
                return (Err(err), super::ServerClock::local());
            }
        };
        let (answer, clock) = dated_response_text(self.client.clone(), req).await;
        let read = match answer {
            Ok(body) => serde_json::from_str::<T>(&body)
                .map(Some)
                .map_err(|e| Error::api(&what, self.server(), kube::Error::SerdeError(e))),
            Err(e) => {
                let err = Error::api(&what, self.server(), e);
                if err.is_not_found() {
                    Ok(None)
                } else {
                    Err(err)
                }
            }
        };
        (read, clock)
    }
}

/// The hub's liveness record as a view read it, with the API server's
/// clock as that answer dated it.
#[derive(Debug)]
pub struct LivenessRead {
    /// The record (None: no singleton, or no record in it).
    pub record: Result<Option<HubLiveness>, Error>,
    /// The server's clock from the answer's `Date` (the reader's own when
    /// no answer came).
    pub clock: super::ServerClock,
}

/// A FederationStatus with only its `status` decoded, as `T`.
#[derive(serde::Deserialize)]
struct Lean<T> {
    #[serde(default = "Option::default")]
    status: Option<T>,
}

/// `read`, with a cluster that does not serve the kind read as one without
/// the singleton: views that only add the hub's record to what they show
/// go on without it.
#[allow(clippy::result_large_err)] // passes on the read's own Result unchanged
fn served<T>(read: Result<Option<T>, Error>) -> Result<Option<T>, Error> {
    match read {
        Err(Error::CrdMissing { .. }) => Ok(None),
        other => other,
    }
}

/// What a failed site list names.
const LIST_SITES: &str = "list FederatedClusters";
const LIST_LEASES: &str = "list FederatedClusterLeases";

/// The field selector of a site's Events (`kubectl get events
/// --field-selector` takes the same).
pub fn site_events_selector(name: &str) -> String {
    format!("involvedObject.kind=FederatedCluster,involvedObject.name={name}")
}

/// Whether a list of sites reads their leases too.
#[derive(Clone, Copy)]
enum Heartbeats {
    /// Each site's lease folded in (`FederatedCluster::with_lease`).
    Folded,
    /// The sites as stored: `status.lastHeartbeatTime` is the last status
    /// report.
    AsStored,
}

/// Sites per list request of [`Cluster::for_each_site_page`]: kubectl's
/// own chunk size, enough to keep round trips few and a page small.
pub const SITE_PAGE_SIZE: u32 = 500;

/// One change of the fleet, as [`Cluster::site_changes`] reports it.
#[derive(Debug)]
pub enum SiteChange {
    /// Every site, as (re)listed: replaces all that was known.
    Listed(Vec<FederatedCluster>),
    /// A site was added or changed.
    Applied(Box<FederatedCluster>),
    /// The site of this name was deleted.
    Deleted(String),
}

/// A list request under way on the runtime (so it progresses while the
/// caller decodes the previous page); dropped, it is cancelled.
struct PageFetch(tokio::task::JoinHandle<Result<String, kube::Error>>);

impl PageFetch {
    /// The answer's body, once whole.
    async fn body(&mut self) -> Result<String, kube::Error> {
        match (&mut self.0).await {
            Ok(body) => body,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => Err(kube::Error::Service(Box::new(e))),
        }
    }
}

impl Drop for PageFetch {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// An empty `continue` means the last page, as no `continue` does.
fn nonempty(token: Option<String>) -> Option<String> {
    token.filter(|t| !t.is_empty())
}

/// Sends `req` and returns the answer's body as text (checked as UTF-8 once
/// here, so decoding does not check every string again). `Client::request`
/// would also copy the body into a `String`, but from a second buffer;
/// error answers become `kube::Error::Api` as kube makes them.
async fn response_text(
    client: kube::Client,
    req: hyper::Request<Vec<u8>>,
) -> Result<String, kube::Error> {
    dated_response_text(client, req).await.0
}

/// [`response_text`], and the server's clock as the answer's `Date`
/// header states it (the reader's own when there was no answer).
async fn dated_response_text(
    client: kube::Client,
    req: hyper::Request<Vec<u8>>,
) -> (Result<String, kube::Error>, super::ServerClock) {
    let res = match client.send(req.map(kube::client::Body::from)).await {
        Ok(res) => res,
        Err(e) => return (Err(e), super::ServerClock::local()),
    };
    let clock = super::ServerClock::from_header(res.headers().get(http::header::DATE));
    (answer_text(res).await, clock)
}

/// The body of an answer as text; error answers as kube makes them.
async fn answer_text(res: http::Response<kube::client::Body>) -> Result<String, kube::Error> {
    use http_body_util::BodyExt as _;
    use hyper::body::Body as _;
    let code = res.status();
    let mut body = res.into_body();
    let mut bytes = Vec::with_capacity(body.size_hint().lower().try_into().unwrap_or(0));
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            bytes.extend_from_slice(&data);
        }
    }
    if code.is_client_error() || code.is_server_error() {
        let status = serde_json::from_slice::<kube::core::Status>(&bytes).unwrap_or_else(|_| {
            kube::core::Status::failure(
                String::from_utf8_lossy(&bytes).trim(),
                "Failed to parse error data",
            )
            .with_code(code.as_u16())
        });
        return Err(kube::Error::Api(status.boxed()));
    }
    String::from_utf8(bytes).map_err(|e| {
        kube::Error::SerdeError(<serde_json::Error as serde::de::Error>::custom(
            e.utf8_error(),
        ))
    })
}

fn watch_error(server: &str, err: watcher::Error) -> Error {
    let what = "watch FederatedClusters";
    match err {
        watcher::Error::InitialListFailed(e)
        | watcher::Error::WatchStartFailed(e)
        | watcher::Error::WatchFailed(e) => Error::api(what, server, e),
        watcher::Error::WatchError(status) => Error::api(what, server, kube::Error::Api(status)),
        watcher::Error::NoResourceVersion => Error::Unexpected {
            what: what.into(),
            reason: "the list response has no resourceVersion".into(),
        },
    }
}
