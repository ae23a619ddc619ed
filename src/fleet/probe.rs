//! What one Pull-mode probe of a member cluster found, as the hub judges
//! it: the failure classes behind the `Connected` condition's reason, and
//! the member access a site's tier policy needs for `RemediationCapable`.
//! Pure: the probe itself runs in `operator::prober`.

use std::time::Duration;

use crate::api::Tier;

/// Why the hub could not read a member cluster; the `Connected=False`
/// condition reason of a Pull site.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProbeFailure {
    /// The member rejected the credential (401): expired or revoked.
    Unauthorized,
    /// The member identity lacks a right the probe needs (403).
    Forbidden,
    /// The member did not answer within the probe timeout.
    Timeout,
    /// Nothing listens at the member's address.
    ConnectionRefused,
    /// The member's server name does not resolve.
    Dns,
    /// The TLS handshake failed (the CA does not verify the server).
    Tls,
    /// The referenced Secret (or its key) does not exist.
    SecretNotFound,
    /// The Secret's kubeconfig is unusable or refused (exec, files, garbage).
    InvalidKubeconfig,
    /// Any other failure (e.g. a 5xx from the member).
    Failed,
}

impl ProbeFailure {
    /// The condition reason.
    pub fn reason(self) -> &'static str {
        match self {
            ProbeFailure::Unauthorized => "Unauthorized",
            ProbeFailure::Forbidden => "Forbidden",
            ProbeFailure::Timeout => "Timeout",
            ProbeFailure::ConnectionRefused => "ConnectionRefused",
            ProbeFailure::Dns => "DNS",
            ProbeFailure::Tls => "TLS",
            ProbeFailure::SecretNotFound => "SecretNotFound",
            ProbeFailure::InvalidKubeconfig => "InvalidKubeconfig",
            ProbeFailure::Failed => "ProbeFailed",
        }
    }
}

/// The outcome of the latest probe of one site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// The member answered every read; `insecure` when the kubeconfig skips
    /// TLS verification.
    Reached { insecure: bool },
    /// The probe failed; `message` is one line without secrets.
    Failed {
        failure: ProbeFailure,
        message: String,
    },
}

/// `RemediationCapable` as last asked of the member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemediationAccess {
    /// Whether the member identity may do everything the tier policy's
    /// automatic remediations need.
    pub capable: bool,
    /// The condition reason.
    pub reason: &'static str,
    /// One line: what is missing, or why nothing is needed.
    pub message: String,
}

/// What the hub knows from probing one Pull site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeVerdict {
    /// The latest probe.
    pub outcome: ProbeOutcome,
    /// How long it took.
    pub duration: Duration,
    /// `RemediationCapable`, asked when the site's client was (re)built.
    pub remediation: Option<RemediationAccess>,
}

/// A member API permission, as `kubectl auth can-i VERB RESOURCE` asks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Permission {
    /// Verb, e.g. `delete`.
    pub verb: &'static str,
    /// API group, "" for core.
    pub group: &'static str,
    /// Resource, e.g. `pods`.
    pub resource: &'static str,
    /// Subresource, e.g. `eviction`, or "".
    pub subresource: &'static str,
}

impl std::fmt::Display for Permission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.verb, self.resource)?;
        if !self.subresource.is_empty() {
            write!(f, "/{}", self.subresource)?;
        }
        if !self.group.is_empty() {
            write!(f, ".{}", self.group)?;
        }
        Ok(())
    }
}

const fn perm(
    verb: &'static str,
    group: &'static str,
    resource: &'static str,
    subresource: &'static str,
) -> Permission {
    Permission {
        verb,
        group,
        resource,
        subresource,
    }
}

/// Restart a failing workload: delete its pods, or roll it out again.
const RESTART: [Permission; 4] = [
    perm("delete", "", "pods", ""),
    perm("patch", "apps", "deployments", ""),
    perm("patch", "apps", "statefulsets", ""),
    perm("patch", "apps", "daemonsets", ""),
];

/// Take a failing node out of service: cordon it and evict its pods.
const DRAIN: [Permission; 2] = [
    perm("patch", "", "nodes", ""),
    perm("create", "", "pods", "eviction"),
];

/// The member permissions the automatic remediations of `tier` need
/// (docs/architecture.md#signals-correlation-and-remediation-policy): none for `critical` (every action is manual), restarts for
/// `standard` (medium and low signals are automatic: image pulls, config
/// errors, scheduling, pressure, evictions), restarts and drains for
/// `non-critical` (every signal, NodeNotReady included, is automatic).
pub fn remediation_needs(tier: Tier) -> Vec<Permission> {
    match tier {
        Tier::Critical => Vec::new(),
        Tier::Standard => RESTART.to_vec(),
        Tier::NonCritical => RESTART.iter().chain(DRAIN.iter()).copied().collect(),
    }
}

/// `RemediationCapable` from the permissions `tier` needs and those of
/// them the member denied.
pub fn remediation_access(tier: Tier, denied: &[Permission]) -> RemediationAccess {
    if remediation_needs(tier).is_empty() {
        return RemediationAccess {
            capable: false,
            reason: "ManualByPolicy",
            message: format!(
                "tier {}: every remediation is manual with approval, so the hub needs no write access",
                tier.as_str()
            ),
        };
    }
    if denied.is_empty() {
        return RemediationAccess {
            capable: true,
            reason: "AccessGranted",
            message: format!(
                "the member identity may do what tier {} automatic remediation needs",
                tier.as_str()
            ),
        };
    }
    let missing: Vec<String> = denied.iter().map(ToString::to_string).collect();
    RemediationAccess {
        capable: false,
        reason: "AccessDenied",
        message: format!(
            "tier {} automatic remediation needs what the member identity may not do: {}",
            tier.as_str(),
            missing.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_the_documented_names() {
        let all = [
            ProbeFailure::Unauthorized,
            ProbeFailure::Forbidden,
            ProbeFailure::Timeout,
            ProbeFailure::ConnectionRefused,
            ProbeFailure::Dns,
            ProbeFailure::Tls,
            ProbeFailure::SecretNotFound,
            ProbeFailure::InvalidKubeconfig,
        ];
        let reasons: Vec<_> = all.iter().map(|f| f.reason()).collect();
        assert_eq!(
            reasons,
            [
                "Unauthorized",
                "Forbidden",
                "Timeout",
                "ConnectionRefused",
                "DNS",
                "TLS",
                "SecretNotFound",
                "InvalidKubeconfig"
            ]
        );
    }

    #[test]
    fn needs_follow_the_tier_policy() {
        assert!(remediation_needs(Tier::Critical).is_empty());
        assert_eq!(remediation_needs(Tier::Standard).len(), 4);
        let nc = remediation_needs(Tier::NonCritical);
        assert!(nc.contains(&perm("create", "", "pods", "eviction")));
        assert_eq!(nc[0].to_string(), "delete pods");
        assert_eq!(nc[5].to_string(), "create pods/eviction");
        assert_eq!(nc[1].to_string(), "patch deployments.apps");
    }

    #[test]
    fn access_says_what_is_missing() {
        let denied = &remediation_needs(Tier::Standard)[..2];
        let a = remediation_access(Tier::Standard, denied);
        assert!(!a.capable);
        assert_eq!(a.reason, "AccessDenied");
        assert!(
            a.message.ends_with("delete pods, patch deployments.apps"),
            "{}",
            a.message
        );
        assert!(remediation_access(Tier::NonCritical, &[]).capable);
        assert_eq!(
            remediation_access(Tier::Critical, &[]).reason,
            "ManualByPolicy"
        );
    }
}
