use super::*;

fn hub(leading: watch::Receiver<bool>) -> Hub {
    hub_with(HubConfig::default(), leading)
}

/// A hub with `config` whose API server is never reached: these tests
/// make no request, and a write one makes fails at once.
fn hub_with(config: HubConfig, leading: watch::Receiver<bool>) -> Hub {
    let client = kube::Config::new("https://127.0.0.1:1".parse().unwrap());
    let client = kube::Client::try_from(client).unwrap();
    Hub::new(Api::all(client), config, leading)
}

/// A leader that has listed its sites, with `name` delivered by its site
/// watch and never written: a transition is due.
fn leading_over_a_new_site(name: &str) -> (Hub, Arc<FederatedCluster>) {
    let (_tx, rx) = watch::channel(true);
    let hub = hub(rx);
    hub.listed.store(true, std::sync::atomic::Ordering::Release);
    let site = Arc::new(FederatedCluster::test(name));
    hub.delivered(&site, true);
    (hub, site)
}

/// A replica that gains the Lease writes only once it has taken leadership
/// in (forgotten what a standby could not verify): a write made before
/// would be remembered, then forgotten, and a forgery right after it
/// restored without being told apart (`hub_truth`). A lost Lease stops
/// writes at once.
#[tokio::test]
async fn a_new_leader_writes_only_once_it_has_taken_leadership_in() {
    let (tx, rx) = watch::channel(false);
    let hub = hub(rx);
    assert!(!hub.is_leader());
    tx.send_replace(true);
    assert!(!hub.is_leader());
    hub.leadership_changed(true);
    assert!(hub.is_leader());
    tx.send_replace(false);
    assert!(!hub.is_leader());
    hub.leadership_changed(false);
    tx.send_replace(true);
    assert!(!hub.is_leader());
}

/// A replica that leads from its start (`--leader-elect=false`) has
/// nothing to forget: it writes at once.
#[tokio::test]
async fn a_hub_leading_from_its_start_writes_at_once() {
    let (_tx, rx) = watch::channel(true);
    assert!(hub(rx).is_leader());
}

/// A blind hub judges a write from a fresh read first; when that read
/// fails (the API server restarting), the site is looked at again as
/// soon as the watch delivers, not ½–1 interval later: a restarted
/// server's whole queue of due writes (~12,000 sites at 100,000) once
/// waited minutes for it, the liveness record with it
/// (docs/benchmarks-100k.md#streaming-lists-unavailable-and-a-restart-during-a-write-backlog).
#[tokio::test]
async fn a_write_whose_fresh_read_failed_is_looked_at_again_once_the_hub_sees() {
    let (_tx, rx) = watch::channel(true);
    let hub = Arc::new(hub(rx));
    // Never written: a transition is due.
    let site = Arc::new(FederatedCluster::test("store-1"));
    hub.delivered(&site, true);
    hub.watch_failed();
    reconcile(site.clone(), hub.clone()).await.unwrap();
    let now = tokio::time::Instant::now();
    let at = hub.schedule.at("store-1").expect("store-1 is scheduled");
    assert!(
        at > now + Duration::from_secs(10),
        "looked at again {:?} from now while the hub is blind",
        at - now
    );
    // The watch delivers again: a site at a newer resourceVersion.
    let mut newer = FederatedCluster::test("store-2");
    newer.metadata.resource_version = Some("2".to_owned());
    hub.delivered(&newer, true);
    assert!(!hub.blind());
    let at = hub.schedule.at("store-1").expect("store-1 is scheduled");
    assert!(
        at <= tokio::time::Instant::now(),
        "held {:?} more after the hub sees again",
        at - tokio::time::Instant::now()
    );
    // Held after the hub saw again (its read failed just before): at once.
    hub.scheduled("store-3", Some(Duration::from_secs(60)));
    hub.hold_for_sight("store-3");
    let at = hub.schedule.at("store-3").expect("store-3 is scheduled");
    assert!(at <= tokio::time::Instant::now());
}

/// A site the hub just wrote, whose write the site watch has not delivered
/// yet, is not a judgement left unwritten: the cache still holds it as it
/// was before the write. At 100,000 sites the site watch ran tens of
/// seconds behind a backlog of writes, and such sites withheld the
/// liveness record once the writes stopped.
#[tokio::test]
async fn a_write_the_watch_has_not_delivered_yet_withholds_no_record() {
    let (hub, site) = leading_over_a_new_site("store-1");
    let sites = [site.clone()];
    let now = jiff::Timestamp::now();
    assert!(
        hub.judged_every_site(&sites, now),
        "first check: given until the next"
    );
    assert!(
        !hub.judged_every_site(&sites, now),
        "due at two checks in a row, nothing written: not judging"
    );
    // The hub writes it; the watch has not delivered the write.
    hub.written("store-1", Some(&"2".to_owned()));
    assert!(hub.judged_every_site(&sites, now));
    assert!(hub.judged_every_site(&sites, now));
    // A list under way brings the write: the cache holds the list only at
    // its end.
    let mut echoed = FederatedCluster::test("store-1");
    echoed.metadata.resource_version = Some("2".to_owned());
    hub.delivered(&echoed, true);
    assert!(!hub.unechoed().is_empty());
    hub.relisted();
    assert!(hub.unechoed().is_empty());
    // A watch event brings it: the cache holds it.
    hub.written("store-1", Some(&"3".to_owned()));
    echoed.metadata.resource_version = Some("3".to_owned());
    hub.cached(&echoed);
    assert!(hub.unechoed().is_empty());
}

/// A transition waiting for the write rate stands in for its site in the
/// summary: built once, and taken again at each summary while the decision
/// and the site's heartbeat hold, though each judgement stamps the change
/// with its own time. A stand-in built anew at every summary held a second
/// copy of the whole backlog while the next was built (at 20,000 sites
/// never judged, 127 MB of the hub's 219 MB peak heap).
#[tokio::test]
async fn a_waiting_transition_is_copied_once_not_at_every_summary() {
    let (hub, site) = leading_over_a_new_site("store-1");
    let now = jiff::Timestamp::now();
    let first = hub.judged_sites(vec![site.clone()], &HashMap::new(), now);
    let standin = first.unwritten.get("store-1").expect("a stand-in").clone();
    assert!(!Arc::ptr_eq(&standin, &site));
    let later = now + jiff::SignedDuration::from_secs(2);
    let again = hub.judged_sites(vec![site.clone()], &first.unwritten, later);
    assert!(
        Arc::ptr_eq(&again.unwritten["store-1"], &standin),
        "the same decision two seconds later was copied again"
    );
    assert!(Arc::ptr_eq(&again.sites[0], &standin));
    // A renewal moves the heartbeat, not the resourceVersion: a new
    // stand-in, with the new heartbeat.
    let mut renewed = FederatedCluster::clone(&site);
    let beat = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(later);
    renewed
        .status
        .get_or_insert_with(Default::default)
        .last_heartbeat_time = Some(beat.clone());
    let renewed = Arc::new(renewed);
    let moved = hub.judged_sites(vec![renewed], &again.unwritten, later);
    let fresh = &moved.unwritten["store-1"];
    assert!(!Arc::ptr_eq(fresh, &standin));
    assert_eq!(
        fresh.status.as_ref().unwrap().last_heartbeat_time,
        Some(beat)
    );
}

/// The hub's own write is never taken for someone else's. A site goes
/// Stale and the hub writes it; the edge's renewal comes before the site
/// watch delivers that write, so the cache's object from before the
/// write, the renewal folded in, needs no write (it still says
/// Connected). Taking those old conditions for the hub's word made the
/// Stale write, when the watch delivered it, look like a forgery: the
/// hub "restored" its own conditions and counted it
/// (`fleet_hub_status_restored_total`, which pages as
/// `FleetSiteStatusRestored` and advises revoking the site's token). A
/// real forgery after that is still told apart.
#[tokio::test]
async fn the_hubs_own_write_delivered_late_is_not_a_forgery() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    let (hub, _) = leading_over_a_new_site("store-1");
    let t0 = jiff::Timestamp::now();
    let beat = |site: &FederatedCluster, at: jiff::Timestamp, rv: &str| {
        let mut s = site.clone();
        s.metadata.resource_version = Some(rv.to_owned());
        s.status
            .get_or_insert_with(Default::default)
            .last_heartbeat_time = Some(Time(at));
        s
    };
    // What the API server answers to a write of `site`'s judgement at `at`.
    let write = |site: &FederatedCluster, at: jiff::Timestamp, rv: &str| {
        let j = hub.judge(site, at);
        let mut written = site.clone();
        written.status = Some(j.transition(site).expect("a transition"));
        written.metadata.resource_version = Some(rv.to_owned());
        hub.wrote(&written);
        (written, j.phase)
    };
    // Seen at the first list, then renewed while the hub watches.
    let site = beat(&FederatedCluster::test("store-1"), t0, "1");
    hub.judge(&site, t0);
    let t0 = t0 + jiff::SignedDuration::from_secs(1);
    let site = beat(&site, t0, "1");
    let (connected, phase) = write(&site, t0, "2");
    assert_eq!(phase, Phase::Connected);
    hub.cached(&connected);
    // Silent for 4 intervals: Stale, written; the watch owes the write.
    let interval = i64::from(site.spec.heartbeat_interval_seconds);
    let t1 = t0 + jiff::SignedDuration::from_secs(4 * interval);
    let (stale, phase) = write(&connected, t1, "3");
    assert_eq!(phase, Phase::Stale);
    // The renewal, folded into the cache's object from before the write.
    let t2 = t1 + jiff::SignedDuration::from_secs(1);
    let renewed_before = beat(&connected, t2, "2");
    assert!(!hub.judge(&renewed_before, t2).changed, "it says Connected");
    // The watch delivers the Stale write, the renewal folded in.
    let renewed = beat(&stale, t2, "3");
    hub.cached(&renewed);
    let j = hub.judge(&renewed, t2);
    assert_eq!((j.phase, j.changed), (Phase::Connected, true));
    assert!(!j.restored, "the hub's own Stale write taken for a forgery");
    // Written and delivered; then someone else rewrites the conditions.
    let (written, _) = write(&renewed, t2, "4");
    hub.cached(&written);
    let mut forged = written.clone();
    forged.metadata.resource_version = Some("5".to_owned());
    for c in forged.status.as_mut().unwrap().conditions.as_mut().unwrap() {
        c.message = "all good, trust me".to_owned();
    }
    hub.cached(&forged);
    assert!(hub.judge(&forged, t2).restored, "a forgery restored");
}

/// A write that failed (the API server restarting) and is retried behind
/// a backlog of writes is queued like the rest of the backlog: it does
/// not withhold the liveness record while it waits for its turn, as long
/// as the hub writes. It once did, for as long as the backlog ahead of it.
#[tokio::test]
async fn a_failed_write_queued_again_behind_the_backlog_withholds_no_record() {
    let (_tx, rx) = watch::channel(true);
    let paced = HubConfig {
        status_write_qps: 1,
        status_write_burst: 1,
        ..HubConfig::default()
    };
    let hub = Arc::new(hub_with(paced, rx));
    hub.listed.store(true, std::sync::atomic::Ordering::Release);
    let sites: Vec<_> = ["store-1", "store-2"]
        .map(|n| Arc::new(FederatedCluster::test(n)))
        .into();
    for site in &sites {
        hub.delivered(site, true);
    }
    let now = jiff::Timestamp::now();
    assert!(
        hub.judged_every_site(&sites, now),
        "first check: given until the next"
    );
    // store-1's write goes at once (the burst) and fails.
    assert!(reconcile(sites[0].clone(), hub.clone()).await.is_err());
    // The hub writes other sites meanwhile; store-1's retry is queued
    // behind them.
    hub.metrics.status_write();
    let retry = tokio::spawn(reconcile(sites[0].clone(), hub.clone()));
    // Its place in the rate is 1 s away: queued well before then.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !retry.is_finished(),
        "the retry waits for its place in the rate"
    );
    assert!(
        hub.judged_every_site(&sites, now),
        "a queued retry of a failed write withheld the record"
    );
    retry.abort();
}

/// Runs the lease watch's `events` through [`with_leases`] into `hub`
/// (no site events: the site watch is down or says nothing).
async fn lease_watch(
    hub: &Arc<Hub>,
    events: Vec<Result<watcher::Event<(String, crate::api::Renewal)>, watcher::Error>>,
) {
    let (cache, _writer) = reflector::store::<FederatedCluster>();
    let told = hub.clone();
    with_leases(
        futures::stream::empty(),
        futures::stream::iter(events),
        hub.renewals.clone(),
        cache,
        hub.metrics.clone(),
        move |sees| told.leases_seen(sees),
    )
    .collect::<Vec<_>>()
    .await;
}

/// The lease watch lists `sites`' leases.
fn leases_listed(
    sites: &[&str],
) -> Vec<Result<watcher::Event<(String, crate::api::Renewal)>, watcher::Error>> {
    let renewal = crate::api::Renewal {
        renew_time: Some(jiff::Timestamp::now()),
        duration_ms: Some(7),
    };
    let mut events = vec![Ok(watcher::Event::Init)];
    events.extend(
        sites
            .iter()
            .map(|s| Ok(watcher::Event::InitApply(((*s).to_owned(), renewal)))),
    );
    events.push(Ok(watcher::Event::InitDone));
    events
}

/// While its site watch is down (an API server restarted and rebuilds its
/// watch cache of every site before it serves them again: ~2.5 minutes at
/// 100,000 sites, the leases' list back after 8 s), a hub whose lease
/// watch has listed the leases again sees every renewal: it is not blind,
/// and it judges in memory (summary, liveness record) a fleet whose every
/// site renews a lease. A site without a lease (an older edge heartbeats
/// through its status, which only the site watch brings) holds that
/// judgement; a failed lease watch makes the hub blind again.
#[tokio::test]
async fn without_its_site_watch_a_hub_judges_from_leases_a_fleet_that_renews_them() {
    let (hub, leased) = leading_over_a_new_site("store-1");
    let hub = Arc::new(hub);
    lease_watch(&hub, leases_listed(&["store-1"])).await;
    let fleet = [leased.clone()];
    assert!(hub.judges_in_memory(&fleet));

    hub.watch_failed();
    assert!(!hub.blind(), "blind though every renewal reaches it");
    assert!(hub.unsure(), "a write is judged from a fresh read first");
    assert!(hub.judges_in_memory(&fleet));
    let older = Arc::new(FederatedCluster::test("store-2"));
    assert!(
        !hub.judges_in_memory(&[leased.clone(), older]),
        "judged a site whose heartbeats only the site watch brings"
    );

    // The lease watch fails too (the API server restarting): blind.
    let refused = kube::core::Status::failure("unavailable", "ServiceUnavailable").with_code(503);
    let failed = watcher::Error::WatchStartFailed(kube::Error::Api(Box::new(refused)));
    lease_watch(&hub, vec![Err(failed)]).await;
    assert!(hub.blind());
    assert!(!hub.judges_in_memory(&fleet));
    // It lists the leases again: the hub sees, the blind time credited.
    lease_watch(&hub, leases_listed(&["store-1"])).await;
    assert!(!hub.blind());
    assert!(hub.judges_in_memory(&fleet));
    assert!(
        hub.sight.lock().unwrap().blind_since.is_none(),
        "the blind time was not credited"
    );
    // The site watch lists again: writes need no fresh read.
    hub.relisted();
    assert!(!hub.unsure());
}
