//! The hub's judgement of the whole fleet in memory, apart from its
//! writes: what the summary, the fleet gauges and the REST API hold at
//! once ([`Hub::judged_sites`]), and what the liveness record vouches for
//! ([`Hub::judged_every_site`]). Status writes follow at the rate
//! `--status-write-qps` allows ([`super::budget`]), so a fleet-wide
//! transition is told at once and written over minutes, not the other way
//! round (docs/architecture.md#status-writes).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use jiff::Timestamp;

use crate::api::FederatedCluster;
use crate::fleet::hub_status::{HubStatus, Sighting};

use super::Hub;

/// The sites whose judgement was due to be written at the last liveness
/// check, the hub's status writes by then, and the sites whose last
/// reconcile failed (its write, or the re-read after a 409).
#[derive(Debug, Default)]
pub(super) struct Unwritten {
    due: HashSet<String>,
    writes: u64,
    failing: HashSet<String>,
}

/// The fleet as the leader judges it ([`Hub::judged_sites`]).
pub(in crate::operator) struct JudgedSites {
    /// Every site: the cached object, or the one the hub is about to write.
    pub sites: Vec<Arc<FederatedCluster>>,
    /// The sites standing in for a transition not written yet, by name.
    pub unwritten: HashMap<String, Arc<FederatedCluster>>,
}

impl Unwritten {
    /// A deleted site is no longer due.
    pub(super) fn forget(&mut self, site: &str) {
        self.due.remove(site);
        self.failing.remove(site);
    }

    /// Whether the last reconcile of `site` failed.
    pub(super) fn reconciled(&mut self, site: &str, failed: bool) {
        if !failed {
            self.failing.remove(site);
        } else if !self.failing.contains(site) {
            self.failing.insert(site.to_owned());
        }
    }
}

impl Hub {
    /// Up to three of the sites due at two checks in a row (of those, the
    /// ones whose last write failed when `failing`: what withholds the
    /// record while the hub writes others), each with what the hub would
    /// write (phase, and the conditions whose status or reason it
    /// changes) and when it looks at the site by itself next: a withheld
    /// record names what it waits for.
    fn stuck_examples(
        &self,
        sites: &[Arc<FederatedCluster>],
        unwritten: &Unwritten,
        failing: bool,
        now: Timestamp,
    ) -> String {
        let mut examples = Vec::new();
        for site in sites {
            if examples.len() == 3 {
                break;
            }
            let name = site.site_name();
            if !unwritten.due.contains(name) || (failing && !unwritten.failing.contains(name)) {
                continue;
            }
            let j = self.judged_in_memory(site, now);
            let cached = site.status.as_ref();
            let was = |type_: &str| {
                cached
                    .and_then(|s| s.conditions.as_deref())
                    .and_then(|c| c.iter().find(|c| c.type_ == type_))
                    .map(|c| (&c.status, &c.reason))
            };
            let mut moved: Vec<String> = j
                .conditions
                .iter()
                .filter(|c| was(&c.type_) != Some((&c.status, &c.reason)))
                .map(|c| format!("{}={}/{}", c.type_, c.status, c.reason))
                .collect();
            let offset = cached.and_then(|s| s.clock_offset_seconds);
            if offset != j.clock_offset_seconds {
                moved.push(format!(
                    "clockOffsetSeconds={:?}->{:?}",
                    offset, j.clock_offset_seconds
                ));
            }
            if j.restored {
                moved.push("restored".to_owned());
            }
            let look = self
                .schedule
                .at(name)
                .map(|at| {
                    format!(
                        "{:.0}s",
                        at.saturating_duration_since(tokio::time::Instant::now())
                            .as_secs_f64()
                    )
                })
                .unwrap_or_else(|| "none".to_owned());
            examples.push(format!(
                "{} ({} -> {}; {}; next look in {look})",
                crate::render::safe::Untrusted(name),
                site.phase().map_or("-", |p| p.as_str()),
                j.phase.as_str(),
                if moved.is_empty() {
                    "conditions unchanged".to_owned()
                } else {
                    moved.join(", ")
                },
            ));
        }
        examples.join("; ")
    }

    /// `site` judged again in memory from what the hub observed, at `now`:
    /// nothing folded, counted or remembered.
    fn judged_in_memory<'a>(&self, site: &'a FederatedCluster, now: Timestamp) -> HubStatus<'a> {
        let known = self
            .ledger
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(site.site_name())
            .map(|k| (k.sighting, k.verified));
        let sighting = Sighting::of_site(
            known.as_ref().map(|(sighting, _)| sighting),
            site,
            self.effective_interval(site),
            now,
        );
        self.judge_sighting(
            site,
            sighting,
            known.and_then(|(_, verified)| verified),
            now,
        )
    }

    /// Whether the fleet `sites` (the complete cache) is judged in memory
    /// now: this replica leads and sees (its site watch has listed the
    /// sites, and is up, or is down while the lease watch holds a lease of
    /// every site: every heartbeat then reaches the hub, see [`super::sight`]).
    pub(super) fn judges_in_memory(&self, sites: &[Arc<FederatedCluster>]) -> bool {
        self.is_leader()
            && !self.blind()
            && self.listed.load(std::sync::atomic::Ordering::Acquire)
            && (!self.site_watch_down() || self.renewals.cover(sites))
    }

    /// Whether this replica leads but cannot judge the fleet `sites` in
    /// memory for want of sight (blind, or its site watch down while some
    /// site renews no lease, or not listed yet): its liveness check then
    /// looks again every second, so the record follows as soon as it sees
    /// again rather than up to a liveness period later.
    pub fn waits_for_sight(&self, sites: &[Arc<FederatedCluster>]) -> bool {
        self.is_leader() && !self.judges_in_memory(sites)
    }

    /// `sites` (the complete cache) as this replica judges them at `now`:
    /// each site whose judgement is a transition not written yet (queued
    /// behind the write rate, or in flight) stands in with the status the
    /// hub is about to write, so the fleet summary, the gauges and the REST
    /// API say at once what the hub judged. Such a stand-in from the last
    /// summary (`held`) is taken again while it is the same decision
    /// about the same version of the site and heartbeat
    /// ([`HubStatus::decides_as`]: the times a judgement stamps a change
    /// with aside, so a stand-in shows the time the hub first judged the
    /// change): a backlog is copied once, not at every summary, and never
    /// held twice. As the cache holds them while this replica does not
    /// judge (standby, blind, not listed yet): a blind hub's judgement
    /// would count its blind time against every site.
    pub(in crate::operator) fn judged_sites(
        &self,
        sites: Vec<Arc<FederatedCluster>>,
        held: &HashMap<String, Arc<FederatedCluster>>,
        now: Timestamp,
    ) -> JudgedSites {
        let mut unwritten = HashMap::new();
        if !self.judges_in_memory(&sites) {
            return JudgedSites { sites, unwritten };
        }
        let sites = sites
            .into_iter()
            .map(|site| {
                let j = self.judged_in_memory(&site, now);
                if !j.changed {
                    return site;
                }
                // The same decision about the same version of the site,
                // heartbeat included (a lease renewal moves it, not the
                // resourceVersion), stamped again with this summary's time:
                // the stand-in held.
                let judged = match held.get(site.site_name()) {
                    Some(before)
                        if before.metadata.resource_version == site.metadata.resource_version
                            && heartbeat(before) == heartbeat(&site)
                            && before.status.as_ref().is_some_and(|s| j.decides_as(s)) =>
                    {
                        before.clone()
                    }
                    _ => {
                        let Some(status) = j.transition(&site) else {
                            return site;
                        };
                        Arc::new(FederatedCluster {
                            metadata: site.metadata.clone(),
                            spec: site.spec.clone(),
                            status: Some(status),
                        })
                    }
                };
                unwritten.insert(site.site_name().to_owned(), judged.clone());
                judged
            })
            .collect();
        JudgedSites { sites, unwritten }
    }

    /// Whether this replica, at `now`, has judged every site of `sites`
    /// (its complete cache): it leads, its site watch has listed the sites
    /// and is up (not blind), and its writes are not stuck. Each site is
    /// judged again here, in memory, from what the hub observed (nothing
    /// is folded or counted); what the summary says comes from the same
    /// judgement ([`Hub::judged_sites`]). Writes are stuck when a site's
    /// transition was due at the previous check and still is, and either
    /// its last write failed or the hub wrote no status since: a site
    /// still due while others are written is queued behind the write rate
    /// (a fleet-wide transition), in whatever order the controller takes
    /// them, not failing. A transition found due is given until the next
    /// check to be written, since the controller writes it within
    /// milliseconds unless the writes fail or queue. This is what the leader's
    /// `lastJudgementTime` vouches for (docs/operations.md#is-a-hub-judging).
    /// Exports the transitions not written yet
    /// (`fleet_hub_status_writes_pending`).
    pub fn judged_every_site(&self, sites: &[Arc<FederatedCluster>], now: Timestamp) -> bool {
        if !self.judges_in_memory(sites) {
            self.metrics.set_writes_pending(0);
            return false;
        }
        // A site the hub wrote whose write the cache does not hold yet is
        // not unwritten (`Hub::written`).
        let unechoed = self.unechoed();
        let due: HashSet<String> = sites
            .iter()
            .filter(|site| !unechoed.contains(site.site_name()))
            .filter(|site| self.judged_in_memory(site, now).changed)
            .map(|site| site.site_name().to_owned())
            .collect();
        self.metrics.set_writes_pending(due.len());
        let writes = self.metrics.snapshot().1;
        let mut unwritten = self.unwritten.lock().unwrap_or_else(|p| p.into_inner());
        // Due at the previous check too, and of those, failing.
        let (mut waiting, mut failing) = (0, 0);
        for site in due.intersection(&unwritten.due) {
            waiting += 1;
            failing += usize::from(unwritten.failing.contains(site));
        }
        let wrote = writes.saturating_sub(unwritten.writes);
        unwritten.due = due;
        unwritten.writes = writes;
        let stuck = if wrote == 0 { waiting } else { failing };
        if stuck > 0 {
            let examples = self.stuck_examples(sites, &unwritten, wrote > 0, now);
            tracing::warn!(
                sites = stuck,
                examples = %examples,
                "some sites' judgements have not been written since the last check: not recording a full judgement"
            );
            return false;
        }
        if waiting > 0 {
            tracing::info!(
                pending = unwritten.due.len(),
                written = wrote,
                "writing a backlog of sites' judgements at the status write rate; the summary holds them already"
            );
        }
        true
    }
}

/// A site's heartbeat as the cache holds it (its lease folded in): the
/// time and the report's round trip (none for a site without a status).
fn heartbeat(
    site: &FederatedCluster,
) -> (
    Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
    Option<i64>,
) {
    let status = site.status.as_ref();
    (
        status.and_then(|s| s.last_heartbeat_time.as_ref()),
        status.and_then(|s| s.last_report_duration_milliseconds),
    )
}
