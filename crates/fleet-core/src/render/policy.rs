//! `kubectl fleet policy`: the remediation policy table (docs/architecture.md#signals-correlation-and-remediation-policy),
//! rendered from [`crate::fleet::policy`] (never from a copy of it).

use serde::Serialize;

use crate::fleet::policy::PolicyRow;
use crate::render::report::REPORT_API_VERSION;
use crate::render::table::PlainTable;

/// The table TIER, SEVERITY, MODE, APPROVAL, ROLE; one line per row.
pub fn render_policy_table(rows: &[PolicyRow]) -> String {
    let mut table = PlainTable::new(["TIER", "SEVERITY", "MODE", "APPROVAL", "ROLE"]);
    for r in rows {
        table.push(vec![
            r.tier.clone(),
            r.severity_label(),
            r.policy.mode.as_str().to_owned(),
            if r.policy.approval_required {
                "required"
            } else {
                "no"
            }
            .to_owned(),
            r.policy.role.map_or("-", |role| role.as_str()).to_owned(),
        ]);
    }
    table.render(false)
}

/// The `kubectl fleet policy -o json|yaml` document:
/// `{apiVersion, kind: PolicyReport, rules: [{tier, severities, mode, approvalRequired, role}]}`
/// where `role` is null when no approval is needed.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PolicyReport {
    /// Always the report API version.
    pub api_version: &'static str,
    /// Always `PolicyReport`.
    pub kind: &'static str,
    /// The rows, in table order.
    pub rules: Vec<PolicyRow>,
}

/// Wrap rows into a [`PolicyReport`].
pub fn policy_report(rows: Vec<PolicyRow>) -> PolicyReport {
    PolicyReport {
        api_version: REPORT_API_VERSION,
        kind: "PolicyReport",
        rules: rows,
    }
}
