//! What the Pull prober found, per site, in memory ([`ProbeStats`]): the
//! prober records into it, the hub's judgement reads the latest verdict,
//! the benchmark and tests read the durations. A leaf below both.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::fleet::probe::{ProbeOutcome, ProbeVerdict};

/// Probe bookkeeping of one site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiteProbes {
    /// The latest verdict (what `Connected` and `RemediationCapable` say).
    pub verdict: ProbeVerdict,
    /// Probes run.
    pub probes: u64,
    /// Of those, failed ones.
    pub failures: u64,
    /// Sum of all probe durations.
    pub total: Duration,
    /// Probes that ended later than one interval after they were due (a
    /// queue for a concurrency slot plus the probe itself took too long).
    pub missed: u64,
    /// Member tokens the hub renewed for this site.
    pub renewals: u64,
}

/// What the prober has seen, per site, in memory: the latest verdict read by
/// the hub's judgement, and probe durations for the
/// `federation_health_check_duration_seconds` histogram (read them with
/// [`ProbeStats::snapshot`], or hook [`ProbeStats::record`]).
#[derive(Debug, Default)]
pub struct ProbeStats {
    sites: Mutex<HashMap<String, SiteProbes>>,
}

impl ProbeStats {
    /// Records one probe of `site`: how long it took and what it found.
    pub fn record(&self, site: &str, duration: Duration, verdict: ProbeVerdict, missed: bool) {
        let failed = matches!(verdict.outcome, ProbeOutcome::Failed { .. });
        let mut sites = self.sites.lock().unwrap_or_else(|p| p.into_inner());
        let entry = sites.entry(site.to_owned()).or_insert_with(|| SiteProbes {
            verdict: verdict.clone(),
            probes: 0,
            failures: 0,
            total: Duration::ZERO,
            missed: 0,
            renewals: 0,
        });
        entry.verdict = verdict;
        entry.probes += 1;
        entry.failures += u64::from(failed);
        entry.total += duration;
        entry.missed += u64::from(missed);
    }

    /// Counts a member token renewed for `site`.
    pub(super) fn renewed(&self, site: &str) {
        let mut sites = self.sites.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(entry) = sites.get_mut(site) {
            entry.renewals += 1;
        }
    }

    /// The latest verdict for `site`, if it was probed by this process.
    pub fn verdict(&self, site: &str) -> Option<ProbeVerdict> {
        let sites = self.sites.lock().unwrap_or_else(|p| p.into_inner());
        sites.get(site).map(|s| s.verdict.clone())
    }

    /// Everything recorded, by site.
    pub fn snapshot(&self) -> HashMap<String, SiteProbes> {
        self.sites.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Forgets a site (deleted, or no longer in Pull mode).
    pub fn forget(&self, site: &str) {
        self.sites
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(site);
    }
}
