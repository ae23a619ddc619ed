//! The remediation policy per tier (docs/architecture.md#signals-correlation-and-remediation-policy), as one pure function,
//! [`policy_for`], that the operator evaluates for every signal and
//! correlation and `kubectl fleet policy` prints as a table.

use serde::Serialize;

use crate::api::{Severity, Tier};

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
    pub fn as_str(self) -> &'static str {
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

/// [`policy_for`] with a tier given as text; anything that is not a known
/// tier name gets the unknown-tier fallback.
pub fn policy_for_tier_name(tier: &str, severity: Severity) -> Policy {
    policy_for(tier.parse().ok(), severity)
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

/// The policy for an incident spanning several sites (a cross-cluster
/// correlation): the strictest of the per-site policies, so an incident
/// touching a critical site always needs an Admin. No sites: the
/// unknown-tier fallback.
pub fn policy_for_sites(
    tiers: impl IntoIterator<Item = Option<Tier>>,
    severity: Severity,
) -> Policy {
    tiers
        .into_iter()
        .map(|t| policy_for(t, severity))
        .max_by_key(Policy::strictness)
        .unwrap_or_else(|| policy_for(None, severity))
}

/// Label of the unknown-tier rows.
pub const UNKNOWN_TIER: &str = "unknown";

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
    pub fn severity_label(&self) -> String {
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
            assert_eq!(policy_for_tier_name("gold", s), MANUAL_ADMIN, "gold/{s}");
        }
        assert_eq!(policy_for(Some(Tier::Standard), Critical), MANUAL_OPERATOR);
        assert_eq!(policy_for(Some(Tier::Standard), High), MANUAL_OPERATOR);
        assert_eq!(policy_for(Some(Tier::Standard), Medium), AUTO);
        assert_eq!(policy_for(Some(Tier::Standard), Low), AUTO);
        assert_eq!(policy_for_tier_name("standard", Low), AUTO);
        assert_eq!(
            policy_for_tier_name("Standard", Low),
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
