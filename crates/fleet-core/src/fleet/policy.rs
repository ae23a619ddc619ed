//! The remediation policy per tier (docs/architecture.md#signals-correlation-and-remediation-policy), as one pure function,
//! [`policy_for`], that the operator evaluates for every signal and
//! correlation and `kubectl fleet policy` prints as a table.

use std::collections::{HashMap, HashSet};

use jiff::Timestamp;
use serde::Serialize;

use crate::api::{
    Cascade, Correlation, FederatedCluster, Severity, Signal, SignalType, Tier, WorkloadRef,
};

/// Whether a remediation runs by itself or waits for a human.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum RemediationMode {
    /// A human must approve before anything runs.
    Manual,
    /// Runs without approval.
    Auto,
}

impl RemediationMode {
    /// Lowercase name, as in the policy table and the
    /// `federation_remediation_policy_applied{mode}` metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            RemediationMode::Manual => "manual",
            RemediationMode::Auto => "auto",
        }
    }
}

/// Who may approve a manual remediation.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ApproverRole {
    /// Fleet administrators.
    Admin,
    /// Site operators.
    Operator,
}

impl ApproverRole {
    /// The role name as shown in the table.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ApproverRole::Admin => "Admin",
            ApproverRole::Operator => "Operator",
        }
    }
}

/// The policy that applies to one (tier, severity).
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "camelCase")]
pub struct Policy {
    /// Manual or automatic.
    pub mode: RemediationMode,
    /// Whether an approval is required before remediating.
    pub approval_required: bool,
    /// Who approves; None when no approval is needed.
    pub role: Option<ApproverRole>,
}

const MANUAL_ADMIN: Policy = Policy {
    mode: RemediationMode::Manual,
    approval_required: true,
    role: Some(ApproverRole::Admin),
};
const MANUAL_OPERATOR: Policy = Policy {
    mode: RemediationMode::Manual,
    approval_required: true,
    role: Some(ApproverRole::Operator),
};
const AUTO: Policy = Policy {
    mode: RemediationMode::Auto,
    approval_required: false,
    role: None,
};

/// The remediation policy for a signal of `severity` on a site of `tier`.
/// `None` is an unknown tier (unset, misspelt, or from a newer version) and
/// gets the safe fallback: manual, approval required, Admin.
pub fn policy_for(tier: Option<Tier>, severity: Severity) -> Policy {
    match (tier, severity) {
        (None | Some(Tier::Critical), _) => MANUAL_ADMIN,
        (Some(Tier::Standard), Severity::Critical | Severity::High) => MANUAL_OPERATOR,
        (Some(Tier::Standard), Severity::Medium | Severity::Low) => AUTO,
        (Some(Tier::NonCritical), _) => AUTO,
    }
}

impl Policy {
    /// How restrictive the policy is: manual with Admin approval, then
    /// manual with Operator approval, then automatic.
    fn strictness(&self) -> u8 {
        match (self.mode, self.role) {
            (RemediationMode::Manual, Some(ApproverRole::Admin)) => 3,
            (RemediationMode::Manual, _) => 2,
            (RemediationMode::Auto, _) => 1,
        }
    }
}

#[cfg(test)]
/// The policy for an incident spanning several sites (a cross-cluster
/// correlation): the strictest of the per-site policies, so an incident
/// touching a critical site always needs an Admin. No sites: the
/// unknown-tier fallback.
pub(crate) fn policy_for_sites(
    tiers: impl IntoIterator<Item = Option<Tier>>,
    severity: Severity,
) -> Policy {
    tiers
        .into_iter()
        .map(|t| policy_for(t, severity))
        .max_by_key(Policy::strictness)
        .unwrap_or_else(|| policy_for(None, severity))
}

/// The remediation decision for one signal of one site, with the fleet's
/// incidents taken into account (docs/architecture.md#signals-correlation-and-remediation-policy):
///
/// - a signal that is part of a cross-cluster correlation (its type, on a
///   member site) is decided as the incident is: critical severity, and the
///   strictest policy of the correlation's sites (`strictestTier`), so a
///   member row never says `auto` under a `manual` correlation;
/// - a cascade raises the **priority** of the production signal it reached:
///   the target site's signal of that type on that workload is decided at
///   critical severity, whatever its own (a standard-tier site's
///   ImagePullBackOff that walked in from staging needs an Operator);
/// - otherwise the signal's own severity and its site's tier decide; so
///   always for a quarantined site, whose signals are part of no incident.
///
/// The strictest of these applies.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SignalPolicy {
    /// The severity the decision is made at: the signal's own, or critical
    /// when an incident raised it.
    pub severity: Severity,
    /// The tier whose policy applies: the site's own, or a correlation's
    /// `strictestTier` when stricter; None: the unknown-tier fallback (a
    /// correlation written without one).
    pub tier: Option<Tier>,
    /// The decision.
    pub policy: Policy,
    /// The ids of the incidents that raised it (`xc-…`, `cc-…`); empty when
    /// the signal's own severity and its site's tier decide.
    pub raised_by: Vec<String>,
}

/// The policy of a correlation: its strictest tier's, at critical severity
/// (what each member signal is decided at, at least).
pub(crate) fn correlation_policy(c: &Correlation) -> Policy {
    policy_for(c.strictest_tier, Severity::Critical)
}

/// The policy of a cascade: its production target's tier at critical
/// severity (what the signal it reached is decided at, at least).
pub(crate) fn cascade_policy(c: &Cascade) -> Policy {
    policy_for(Some(c.target_tier), Severity::Critical)
}

/// A correlation as [`Incidents`] keeps it.
#[derive(Clone, Debug, PartialEq)]
struct CorrelationEntry {
    id: String,
    strictest_tier: Option<Tier>,
    members: HashSet<String>,
}

/// The fleet's incidents, indexed for deciding signals one at a time
/// (linear in the incidents once, then a lookup per signal). Owns what it
/// needs, so a view can keep it while it renders site after site.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Incidents {
    correlations: HashMap<SignalType, CorrelationEntry>,
    /// By target site: (signal, workload, id) of each cascade into it
    /// (looked up by the site's name without allocating).
    cascades: HashMap<String, Vec<(SignalType, WorkloadRef, String)>>,
}

impl Incidents {
    /// The index of `correlations` and `cascades` (those of a fleet summary).
    pub fn new(correlations: &[Correlation], cascades: &[Cascade]) -> Self {
        Incidents {
            correlations: correlations
                .iter()
                .map(|c| {
                    (
                        c.signal,
                        CorrelationEntry {
                            id: c.id.clone(),
                            strictest_tier: c.strictest_tier,
                            members: c.clusters.iter().cloned().collect(),
                        },
                    )
                })
                .collect(),
            cascades: cascades.iter().fold(HashMap::new(), |mut by_target, c| {
                by_target
                    .entry(c.target.clone())
                    .or_insert_with(Vec::new)
                    .push((
                        c.signal,
                        c.workload.clone(),
                        crate::fleet::incident::cascade_id_of(c),
                    ));
                by_target
            }),
        }
    }

    /// The index of a fleet summary's incidents (none without one).
    pub fn of(summary: Option<&crate::api::FederationStatusStatus>) -> Self {
        summary.map_or_else(Incidents::default, |s| {
            Incidents::new(&s.correlations, &s.cascades)
        })
    }

    /// The decision for `signal` of `site`.
    pub(crate) fn decide(&self, site: &FederatedCluster, signal: &Signal) -> SignalPolicy {
        let tier = site.spec.tier;
        let mut decided = SignalPolicy {
            severity: signal.severity,
            tier: Some(tier),
            policy: policy_for(Some(tier), signal.severity),
            raised_by: Vec::new(),
        };
        // What a quarantined site reports raises nothing, even under a
        // summary written before the quarantine.
        if site.is_quarantined() {
            return decided;
        }
        let name = site.site_name();
        // The tiers the raising incidents decide at: a correlation's
        // strictest, a cascade its target's (this site's own).
        let mut tiers: Vec<Option<Tier>> = Vec::new();
        if let Some(c) = self.correlations.get(&signal.type_)
            && c.members.contains(name)
        {
            decided.raised_by.push(c.id.clone());
            tiers.push(c.strictest_tier);
        }
        if let Some((_, _, id)) = self.cascades.get(name).and_then(|into| {
            into.iter()
                .find(|(t, w, _)| *t == signal.type_ && *w == signal.workload)
        }) {
            decided.raised_by.push(id.clone());
        }
        if !decided.raised_by.is_empty() {
            // Critical severity, at the strictest of those tiers and the
            // site's own (its own on a tie: last, as max_by_key keeps it).
            tiers.push(Some(tier));
            let (tier, policy) = tiers
                .into_iter()
                .map(|t| (t, policy_for(t, Severity::Critical)))
                .max_by_key(|(_, p)| p.strictness())
                .unwrap_or((Some(tier), decided.policy));
            // Never laxer than its own: a tier's policy at critical is at
            // least as strict as at any other severity.
            decided.severity = Severity::Critical;
            decided.tier = tier;
            decided.policy = policy;
        }
        decided
    }
}

#[cfg(test)]
/// [`Incidents::decide`] for one signal, without keeping the index.
pub(crate) fn signal_policy(
    site: &FederatedCluster,
    signal: &Signal,
    correlations: &[Correlation],
    cascades: &[Cascade],
) -> SignalPolicy {
    Incidents::new(correlations, cascades).decide(site, signal)
}

/// The remediation mode last counted for each signal of each site: the
/// memory behind `federation_remediation_policy_applied_total`.
#[derive(Clone, Debug, Default)]
pub struct Decisions {
    by_site: HashMap<String, HashMap<String, RemediationMode>>,
}

impl Decisions {
    /// Decides every signal of `sites` with the fleet's incidents
    /// ([`Incidents::decide`]), remembers the decisions, and returns those
    /// to count as (site tier, mode): one for each signal not decided
    /// before — on a site already known, or, for a site met for the first
    /// time, a signal that began after `counted_from` (older ones were
    /// counted by whoever decided them then) — and one more each time an
    /// incident changes a signal's mode (raised by a correlation or a
    /// cascade, or back when it ends). Signals and sites that are gone are
    /// forgotten.
    pub fn update<S: std::borrow::Borrow<FederatedCluster>>(
        &mut self,
        sites: &[S],
        incidents: &Incidents,
        counted_from: Timestamp,
    ) -> Vec<(Tier, RemediationMode)> {
        let mut counted = Vec::new();
        let mut next: HashMap<String, HashMap<String, RemediationMode>> = HashMap::new();
        for site in sites.iter().map(S::borrow) {
            let signals = site.status.as_ref().map_or(&[][..], |s| s.signals());
            let name = site.site_name();
            let tier = site.spec.tier;
            let before = self.by_site.get(name);
            let mut now_decided = HashMap::with_capacity(signals.len());
            for s in signals {
                let mode = incidents.decide(site, s).policy.mode;
                let key = s.key();
                let count = match before.map(|b| b.get(&key)) {
                    Some(Some(was)) => *was != mode,
                    Some(None) => true,
                    None => s.first_seen.0 > counted_from,
                };
                if count {
                    counted.push((tier, mode));
                }
                now_decided.insert(key, mode);
            }
            next.insert(name.to_owned(), now_decided);
        }
        self.by_site = next;
        counted
    }
}

/// Label of the unknown-tier rows.
pub(crate) const UNKNOWN_TIER: &str = "unknown";

/// One row of the policy table: a tier and the severities sharing a policy.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRow {
    /// Tier name, or `unknown` for the fallback.
    pub tier: String,
    /// The severities this row covers, worst first.
    pub severities: Vec<Severity>,
    /// The policy.
    #[serde(flatten)]
    pub policy: Policy,
}

impl PolicyRow {
    /// `any` when the row covers every severity, else e.g. `critical, high`.
    pub(crate) fn severity_label(&self) -> String {
        if self.severities.len() == Severity::ALL.len() {
            "any".to_owned()
        } else {
            self.severities
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        }
    }
}

/// The whole table, derived from [`policy_for`]: every tier then the
/// unknown fallback, severities with the same policy merged into one row.
pub fn policy_table() -> Vec<PolicyRow> {
    Tier::ALL
        .iter()
        .map(|t| Some(*t))
        .chain([None])
        .flat_map(policy_rows_for)
        .collect()
}

/// The rows of the table for one tier (None: the unknown fallback).
pub fn policy_rows_for(tier: Option<Tier>) -> Vec<PolicyRow> {
    let label = tier.map_or(UNKNOWN_TIER, Tier::as_str);
    let mut rows: Vec<PolicyRow> = Vec::new();
    for &severity in Severity::ALL {
        let policy = policy_for(tier, severity);
        match rows.last_mut() {
            Some(row) if row.policy == policy => row.severities.push(severity),
            _ => rows.push(PolicyRow {
                tier: label.to_owned(),
                severities: vec![severity],
                policy,
            }),
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tier_and_severity() {
        use Severity::*;
        for s in [Critical, High, Medium, Low] {
            assert_eq!(
                policy_for(Some(Tier::Critical), s),
                MANUAL_ADMIN,
                "critical/{s}"
            );
            assert_eq!(
                policy_for(Some(Tier::NonCritical), s),
                AUTO,
                "non-critical/{s}"
            );
            assert_eq!(policy_for(None, s), MANUAL_ADMIN, "unknown/{s}");
            assert_eq!(policy_for("gold".parse().ok(), s), MANUAL_ADMIN, "gold/{s}");
        }
        assert_eq!(policy_for(Some(Tier::Standard), Critical), MANUAL_OPERATOR);
        assert_eq!(policy_for(Some(Tier::Standard), High), MANUAL_OPERATOR);
        assert_eq!(policy_for(Some(Tier::Standard), Medium), AUTO);
        assert_eq!(policy_for(Some(Tier::Standard), Low), AUTO);
        assert_eq!(policy_for("standard".parse().ok(), Low), AUTO);
        assert_eq!(
            policy_for("Standard".parse().ok(), Low),
            MANUAL_ADMIN,
            "tier names are exact"
        );
    }

    #[test]
    fn multi_site_incidents_take_the_strictest_policy() {
        use Severity::*;
        let t = |v: &[Tier]| v.iter().map(|t| Some(*t)).collect::<Vec<_>>();
        assert_eq!(
            policy_for_sites(t(&[Tier::NonCritical, Tier::Standard]), Critical),
            MANUAL_OPERATOR
        );
        assert_eq!(
            policy_for_sites(
                t(&[Tier::NonCritical, Tier::Critical, Tier::Standard]),
                Critical
            ),
            MANUAL_ADMIN
        );
        assert_eq!(
            policy_for_sites(t(&[Tier::NonCritical, Tier::Standard]), Low),
            AUTO
        );
        assert_eq!(policy_for_sites([], Low), MANUAL_ADMIN);
        assert_eq!(
            policy_for_sites([Some(Tier::NonCritical), None], Low),
            MANUAL_ADMIN
        );
    }

    #[test]
    fn table_has_the_rows_of_design_section_5() {
        let rows: Vec<(String, String, &str, bool, Option<&str>)> = policy_table()
            .iter()
            .map(|r| {
                (
                    r.tier.clone(),
                    r.severity_label(),
                    r.policy.mode.as_str(),
                    r.policy.approval_required,
                    r.policy.role.map(ApproverRole::as_str),
                )
            })
            .collect();
        let want = [
            ("critical", "any", "manual", true, Some("Admin")),
            (
                "standard",
                "critical, high",
                "manual",
                true,
                Some("Operator"),
            ),
            ("standard", "medium, low", "auto", false, None),
            ("non-critical", "any", "auto", false, None),
            ("unknown", "any", "manual", true, Some("Admin")),
        ];
        let want: Vec<_> = want
            .iter()
            .map(|(t, s, m, a, r)| (t.to_string(), s.to_string(), *m, *a, *r))
            .collect();
        assert_eq!(rows, want);
    }

    #[test]
    fn a_correlation_decides_its_member_signals_and_a_cascade_raises_its_target() {
        use crate::api::{Environment, SignalType};
        use crate::fleet::correlation::{
            CorrelationConfig, DEFAULT_LOOKBACK, correlate, detect_cascades,
        };
        use crate::fleet::fixtures::fixture_now;
        let pull = |first_ago| {
            Signal::test(SignalType::ImagePullBackOff, "shop", "Deployment", "web")
                .seen(first_ago, 60)
        };
        let site = |name: &str, env, tier, first_ago| {
            FederatedCluster::test(name)
                .with_environment(env)
                .with_tier(tier)
                .connected()
                .with_signal(pull(first_ago))
        };
        // A medium signal on a non-critical, a standard and a critical site.
        let sites = [
            site("stg", Environment::Staging, Tier::NonCritical, 3600),
            site("prod-std", Environment::Production, Tier::Standard, 600),
            site("prod-crit", Environment::Production, Tier::Critical, 600),
        ];
        let now = fixture_now();
        let [stg, prod_std, _] = &sites;
        let alone = Incidents::new(&[], &[]);
        let signal = pull(3600);
        assert_eq!(alone.decide(stg, &signal).policy, AUTO);
        assert_eq!(alone.decide(prod_std, &signal).policy, AUTO);
        // In a correlation every member is decided as the incident: Admin,
        // at the critical site's tier.
        let correlations = correlate(&sites, &[], now, CorrelationConfig::default());
        let cascades = detect_cascades(&sites, now, DEFAULT_LOOKBACK);
        let incidents = Incidents::new(&correlations, &cascades);
        let decided = incidents.decide(stg, &signal);
        assert_eq!(decided.policy, MANUAL_ADMIN);
        assert_eq!(decided.severity, Severity::Critical);
        assert_eq!(decided.tier, Some(Tier::Critical));
        assert_eq!(decided.raised_by, [correlations[0].id.clone()]);
        assert_eq!(correlation_policy(&correlations[0]), MANUAL_ADMIN);
        // The cascade's target carries both ids.
        let target = incidents.decide(prod_std, &pull(600));
        assert_eq!(target.raised_by.len(), 2, "{target:?}");
        // A cascade alone raises the production signal's priority, at its
        // own tier.
        let two = &sites[..2];
        let cascades = detect_cascades(two, now, DEFAULT_LOOKBACK);
        let incidents = Incidents::new(&[], &cascades);
        let target = incidents.decide(prod_std, &pull(600));
        assert_eq!(
            (target.severity, target.tier, target.policy),
            (Severity::Critical, Some(Tier::Standard), MANUAL_OPERATOR)
        );
        assert_eq!(target.raised_by, [cascades[0].id.clone()]);
        assert_eq!(cascade_policy(&cascades[0]), MANUAL_OPERATOR);
        assert_eq!(incidents.decide(stg, &signal).policy, AUTO);
        // An older hub's correlation without a tier: the safe fallback.
        let mut old = correlate(&sites, &[], now, CorrelationConfig::default());
        old[0].strictest_tier = None;
        let fallback = signal_policy(stg, &signal, &old, &[]);
        assert_eq!((fallback.tier, fallback.policy), (None, MANUAL_ADMIN));
    }

    #[test]
    fn a_quarantined_sites_signals_are_raised_by_nothing() {
        use crate::api::{Quarantine, SignalType};
        use crate::fleet::correlation::{CorrelationConfig, correlate};
        use crate::fleet::fixtures::fixture_now;
        let pull =
            Signal::test(SignalType::ImagePullBackOff, "shop", "Deployment", "web").seen(600, 60);
        let site = |name: &str| {
            FederatedCluster::test(name)
                .with_tier(Tier::Standard)
                .connected()
                .with_signal(pull.clone())
        };
        let sites = [site("a"), site("b"), site("c")];
        let correlations = correlate(&sites, &[], fixture_now(), CorrelationConfig::default());
        let incidents = Incidents::new(&correlations, &[]);
        assert_eq!(incidents.decide(&sites[0], &pull).policy, MANUAL_OPERATOR);
        // Quarantined after the summary was written: its own policy only.
        let mut quarantined = sites[0].clone();
        quarantined.spec.quarantine = Some(Quarantine {
            since: None,
            reason: None,
        });
        let decided = incidents.decide(&quarantined, &pull);
        assert_eq!(
            (decided.severity, decided.policy, decided.raised_by.len()),
            (Severity::Medium, AUTO, 0)
        );
    }

    #[test]
    fn decisions_count_new_signals_and_each_change_an_incident_makes() {
        use crate::api::SignalType;
        use crate::fleet::correlation::{CorrelationConfig, correlate};
        use crate::fleet::fixtures::fixture_now;
        let now = fixture_now();
        let crash =
            Signal::test(SignalType::CrashLoopBackOff, "shop", "Deployment", "web").seen(600, 60);
        let site = |name: &str, tier| {
            FederatedCluster::test(name)
                .with_tier(tier)
                .connected()
                .with_signal(crash.clone())
        };
        let started = now - jiff::SignedDuration::from_secs(3600);
        let mut d = Decisions::default();
        let two = [site("a", Tier::NonCritical), site("b", Tier::Standard)];
        let none = Incidents::new(&[], &[]);
        // Began after the process started: counted with the site's policy.
        assert_eq!(
            d.update(&two, &none, started),
            [
                (Tier::NonCritical, RemediationMode::Auto),
                (Tier::Standard, RemediationMode::Manual)
            ]
        );
        assert!(d.update(&two, &none, started).is_empty(), "once");
        // A third site makes a correlation: a's decision turns manual.
        let three = [two[0].clone(), two[1].clone(), site("c", Tier::Critical)];
        let correlations = correlate(&three, &[], now, CorrelationConfig::default());
        let incidents = Incidents::new(&correlations, &[]);
        assert_eq!(
            d.update(&three, &incidents, started),
            [
                (Tier::NonCritical, RemediationMode::Manual),
                (Tier::Critical, RemediationMode::Manual)
            ]
        );
        assert!(d.update(&three, &incidents, started).is_empty());
        // A site known without signals: its first signals count, however
        // old (the site was met before they began).
        let mut quiet = Decisions::default();
        let bare = [FederatedCluster::test("a")
            .with_tier(Tier::NonCritical)
            .connected()];
        assert!(quiet.update(&bare, &none, now).is_empty());
        assert_eq!(
            quiet.update(&two[..1], &none, now),
            [(Tier::NonCritical, RemediationMode::Auto)]
        );
        // A site first met with a signal older than the process: not counted.
        let mut fresh = Decisions::default();
        assert!(fresh.update(&two, &none, now).is_empty());
        assert!(fresh.update(&two, &none, now).is_empty());
    }

    #[test]
    fn policy_serialises_for_json_output() {
        let v = serde_json::to_value(&policy_rows_for(Some(Tier::Standard))[0]).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "tier": "standard", "severities": ["critical", "high"],
                "mode": "manual", "approvalRequired": true, "role": "Operator"
            })
        );
    }
}
