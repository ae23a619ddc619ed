//! `FederatedClusterLease` I/O (a site's heartbeat object, `api::lease`):
//! the edge's renewal, and the hub's watch of every lease, which keeps of
//! each only its [`Renewal`] (a few bytes: no object is cached).
//!
//! Functions over `Api<FederatedClusterLease>` answering `kube::Error`, as
//! [`super::site_status`] is for the site objects.

use futures::{Stream, TryStreamExt as _};
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use kube::runtime::watcher;
use serde_json::Value;

use crate::api::{FederatedClusterLease, Renewal};

/// The cluster-scoped FederatedClusterLease API.
pub fn site_leases(client: kube::Client) -> Api<FederatedClusterLease> {
    Api::all(client)
}

/// Renews the lease `name`: one JSON merge patch of its `spec`, which also
/// clears the lease's `managedFields`. A lease is rewritten every interval
/// by its edge alone; the API server's record of who last wrote which
/// field (about half of what a lease weighs) would otherwise be rewritten
/// into etcd with every renewal. Cleared, a renewal costs etcd 1,534 bytes
/// of WAL instead of 2,527, against 8,544 for a heartbeat through a site's
/// status (docs/benchmarks-heartbeat.md, real API server).
/// An update of an object without managedFields does not start them
/// again; an apply (a re-run `register`) does, and the next renewal
/// clears them.
pub async fn renew_site_lease(
    api: &Api<FederatedClusterLease>,
    name: &str,
    renewal: Renewal,
) -> Result<(), kube::Error> {
    let patch = renewal_patch(renewal);
    // Decoded as a DynamicObject: the answer is not read, and a lease
    // that would not type must not fail a renewal the server accepted.
    Api::<DynamicObject>::all_with(api.clone().into_client(), &resource())
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(|_| ())
}

fn resource() -> ApiResource {
    ApiResource::erase::<FederatedClusterLease>(&())
}

/// One lease as a reader keeps it: its site's name and its [`Renewal`],
/// read field by field. A lease that cannot be read (a renew time that is
/// not a date-time, a round trip out of range) is a lease without that
/// field, never an error of the watch: one lease cannot stop the hub
/// reading the others.
pub fn renewal_of(lease: &DynamicObject) -> (String, Renewal) {
    let spec = lease.data.get("spec");
    let renew_time = spec
        .and_then(|s| s.get("renewTime"))
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<jiff::Timestamp>().ok());
    let duration_ms = spec
        .and_then(|s| s.get("lastRenewDurationMilliseconds"))
        .and_then(Value::as_i64)
        .filter(|ms| (0..=MAX_RENEW_MS).contains(ms));
    (
        lease.metadata.name.clone().unwrap_or_default(),
        Renewal {
            renew_time,
            duration_ms,
        },
    )
}

/// Watches every site lease, each event carrying the lease's site and its
/// [`Renewal`] ([`renewal_of`]), listed as the sites are
/// ([`super::site_status::watch_listing`]): a streaming list where the API
/// server serves them, else pages of [`super::site_status::LIST_PAGE`],
/// never the whole fleet's leases in one response. (Paged, a list of
/// 100,000 leases read while a hub writes could outlive the history its
/// continue token needs, and start again; a stream has no token.) Errors
/// are the watcher's, each retried after a backoff.
pub fn watch_site_leases(
    client: kube::Client,
) -> impl Stream<Item = Result<watcher::Event<(String, Renewal)>, watcher::Error>> + Send + 'static
{
    let api = Api::<DynamicObject>::all_with(client, &resource());
    let watch = move |config| {
        // Retried after the site watch's backoff (at most a second apart):
        // after an API server came back the hub reads renewals again as
        // soon as it reads sites, and one that refuses leases is asked
        // once a second, not in a loop (`Renewals` logs a cause once).
        let backoff = super::site_status::WatchBackoff::new();
        kube::runtime::utils::StreamBackoff::new(watcher(api.clone(), config), backoff).map_ok(
            |event| match event {
                watcher::Event::Init => watcher::Event::Init,
                watcher::Event::InitApply(l) => watcher::Event::InitApply(renewal_of(&l)),
                watcher::Event::InitDone => watcher::Event::InitDone,
                watcher::Event::Apply(l) => watcher::Event::Apply(renewal_of(&l)),
                watcher::Event::Delete(l) => watcher::Event::Delete(renewal_of(&l)),
            },
        )
    };
    // The site watch tells the operator how the API server lists (once,
    // at WARN when it refuses streaming lists); the leases list alike.
    let told = |mode: super::site_status::InitialList, why: Option<&str>| {
        tracing::debug!(mode = mode.as_str(), why = ?why, "site leases: how they are listed");
    };
    super::site_status::watch_listing(
        watch,
        |lease: &(String, Renewal)| lease.0.clone(),
        watcher::Config::default(),
        told,
    )
}

/// Every site lease's [`Renewal`], by site, read in pages of
/// [`super::site_status::LIST_PAGE`] (a lease is a few hundred bytes;
/// only the renewal is kept, each page decoded straight into it: a lease's
/// other metadata is skipped, never built). `Ok(None)` when the API server
/// has no leases to give this identity: the CRD is not installed (an older
/// hub install, 404) or the identity may not list them (403) — readers
/// then judge sites by the heartbeat in their status alone.
pub async fn list_site_renewals(
    client: kube::Client,
) -> Result<Option<std::collections::HashMap<String, Renewal>>, kube::Error> {
    use kube::Resource as _;
    let mut renewals = std::collections::HashMap::new();
    let mut params = kube::api::ListParams::default().limit(super::site_status::LIST_PAGE);
    loop {
        let req = kube::core::Request::new(FederatedClusterLease::url_path(&(), None))
            .list(&params)
            .map_err(kube::Error::BuildRequest)?;
        let text = match client.request_text(req).await {
            Ok(text) => text,
            Err(kube::Error::Api(s)) if s.code == 403 || s.code == 404 => return Ok(None),
            Err(e) => return Err(e),
        };
        let page: LeasePage = serde_json::from_str(&text).map_err(kube::Error::SerdeError)?;
        renewals.extend(page.items.into_iter().map(LeaseItem::renewal));
        match page.metadata.continue_.filter(|t| !t.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(Some(renewals)),
        }
    }
}

/// A page of leases as [`list_site_renewals`] reads it.
#[derive(serde::Deserialize)]
struct LeasePage {
    #[serde(default)]
    metadata: PageMeta,
    #[serde(default)]
    items: Vec<LeaseItem>,
}

#[derive(serde::Deserialize, Default)]
struct PageMeta {
    #[serde(rename = "continue", default)]
    continue_: Option<String>,
}

/// One lease: its name and the two fields of its spec, each kept as the
/// JSON it is so that a field of the wrong type is that field missing
/// ([`renewal_of`]'s leniency), never a page that fails.
#[derive(serde::Deserialize)]
struct LeaseItem {
    metadata: ItemMeta,
    #[serde(default)]
    spec: Option<LeaseSpecFields>,
}

#[derive(serde::Deserialize)]
struct ItemMeta {
    #[serde(default)]
    name: String,
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct LeaseSpecFields {
    #[serde(default)]
    renew_time: Option<Value>,
    #[serde(default)]
    last_renew_duration_milliseconds: Option<Value>,
}

impl LeaseItem {
    fn renewal(self) -> (String, Renewal) {
        let spec = self.spec.unwrap_or_default();
        (
            self.metadata.name,
            Renewal {
                renew_time: spec
                    .renew_time
                    .as_ref()
                    .and_then(Value::as_str)
                    .and_then(|t| t.parse().ok()),
                duration_ms: spec
                    .last_renew_duration_milliseconds
                    .as_ref()
                    .and_then(Value::as_i64)
                    .filter(|ms| (0..=MAX_RENEW_MS).contains(ms)),
            },
        )
    }
}

/// The longest round trip a lease may carry (its CRD's maximum).
const MAX_RENEW_MS: i64 = 86_400_000;

/// The [`Renewal`] of site `name`'s lease; `Ok(None)` when it has none, or
/// this identity may not read it, or leases are not installed. Decoded as
/// [`list_site_renewals`] decodes each lease.
pub async fn get_site_renewal(
    client: kube::Client,
    name: &str,
) -> Result<Option<Renewal>, kube::Error> {
    use kube::Resource as _;
    let url = format!("{}/{name}", FederatedClusterLease::url_path(&(), None));
    let req = http::Request::get(url)
        .body(Vec::new())
        .map_err(kube::Error::HttpError)?;
    match client.request_text(req).await {
        Ok(text) => {
            let lease: LeaseItem = serde_json::from_str(&text).map_err(kube::Error::SerdeError)?;
            Ok(Some(lease.renewal().1))
        }
        Err(kube::Error::Api(s)) if s.code == 403 || s.code == 404 => Ok(None),
        Err(e) => Err(e),
    }
}

/// The JSON merge patch body of a renewal ([`renew_site_lease`]): the
/// lease's `spec`, and its `managedFields` cleared (fewer bytes stored per
/// renewal); nothing else of its metadata (the admission policy
/// `fleet-site-lease` refuses a site identity any other change).
pub fn renewal_patch(renewal: Renewal) -> Value {
    let mut spec = serde_json::Map::new();
    if let Some(t) = renewal.renew_time {
        spec.insert("renewTime".into(), Value::String(t.to_string()));
    }
    if let Some(ms) = renewal.duration_ms {
        spec.insert("lastRenewDurationMilliseconds".into(), ms.into());
    }
    serde_json::json!({
        // `[{}]` is the API's way to clear them (an empty list keeps them).
        "metadata": {"managedFields": [{}]},
        "spec": spec,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page decodes lease by lease: a renew time that is not a
    /// date-time, or a round trip of the wrong type or out of range, is
    /// that field missing; the other leases and fields read.
    #[test]
    fn a_lease_page_reads_whatever_each_lease_holds() {
        let page: LeasePage = serde_json::from_value(serde_json::json!({
            "metadata": {"continue": "next"},
            "items": [
                {"metadata": {"name": "a", "managedFields": [{"manager": "x"}]},
                 "spec": {"renewTime": "2026-12-06T10:00:30Z", "lastRenewDurationMilliseconds": 25}},
                {"metadata": {"name": "b"}, "spec": {"renewTime": 7, "lastRenewDurationMilliseconds": "x"}},
                {"metadata": {"name": "c"}, "spec": {"renewTime": "yesterday",
                 "lastRenewDurationMilliseconds": 86_400_001}},
                {"metadata": {"name": "d"}}
            ]
        }))
        .unwrap();
        assert_eq!(page.metadata.continue_.as_deref(), Some("next"));
        let got: Vec<(String, Renewal)> = page.items.into_iter().map(LeaseItem::renewal).collect();
        assert_eq!(
            got[0],
            (
                "a".to_owned(),
                Renewal {
                    renew_time: Some("2026-12-06T10:00:30Z".parse().unwrap()),
                    duration_ms: Some(25)
                }
            )
        );
        for (name, renewal) in &got[1..] {
            assert_eq!(*renewal, Renewal::default(), "{name}");
        }
    }
}
