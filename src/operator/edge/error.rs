//! Why an edge's tick failed ([`EdgeError`]), each cause with the line
//! the user sees, what the dark-period journal notes of it, and whether
//! only a person can fix it.

use jiff::Timestamp;

use crate::api::DarkEntryKind;
use crate::k8s::edge_token::SecretName;
use crate::k8s::member::MemberError;
use crate::operator::credential::CredentialError;

/// Why a tick failed, each with the line the user sees.
#[derive(Debug, thiserror::Error)]
pub enum EdgeError {
    /// The hub kubeconfig could not be used.
    #[error(transparent)]
    Credential(#[from] CredentialError),
    /// 401: the token expired or was revoked, or the site was unregistered
    /// (which deletes its identity); the edge cannot tell which.
    #[error(
        "hub rejected the site token (expired or revoked, or the site was unregistered): \
         run `kubectl fleet rotate {site}` if it is still registered, else stop this edge; retrying slowly"
    )]
    Unauthorized { site: String },
    /// 401 with a token past its expiry: only a new token helps.
    #[error(
        "hub rejected the site token: it expired at {at}; run `kubectl fleet rotate {site}` and give this edge \
         the new configuration; retrying slowly"
    )]
    Expired { site: String, at: Timestamp },
    /// 403: the identity lacks a right it needs.
    #[error(
        "hub denied the site identity access (403) while {doing}: re-run `kubectl fleet register {site}` to restore its rights"
    )]
    Forbidden { site: String, doing: &'static str },
    /// 403 with the token of another site: the edge was handed the wrong
    /// configuration (its token's ServiceAccount names the site it is for).
    #[error(
        "the hub kubeconfig holds the credential of site {owner}, not of site {site} (403): give this edge \
         the hub kubeconfig of {site} (`kubectl fleet rotate {site}` prints a new one), or run it with --site {owner}; retrying slowly"
    )]
    WrongSite { site: String, owner: String },
    /// 404: no FederatedCluster of that name.
    #[error(
        "site {site} is no longer registered on the hub (404): run `kubectl fleet register {site}` to register it again, \
         else stop this edge; retrying slowly"
    )]
    NotRegistered { site: String },
    /// The hub's certificate is not signed by the CA in the hub kubeconfig.
    #[error(
        "the hub at {url} presented a certificate the hub kubeconfig's CA does not trust ({cause}): \
         its certificate-authority-data must be the hub's CA; re-issue it with `kubectl fleet rotate {site}` \
         from a kubeconfig that trusts the hub; retrying slowly"
    )]
    HubTls {
        site: String,
        url: String,
        cause: String,
    },
    /// 404 for the API itself: the fleet CRDs are not installed on the hub.
    #[error(
        "the hub does not serve {crd} (404): the fleet CRDs were deleted; run `kubectl fleet install --apply` on the hub; retrying slowly"
    )]
    CrdMissing { crd: &'static str },
    /// 404 for the API itself for less than [`super::NOT_SERVED_PATIENCE`]
    /// since the hub last served it: an API server answers so for a few
    /// seconds after it starts, until it has loaded the CRDs.
    #[error(
        "the hub does not serve {crd} (404 for the API, not for this site): an API server answers so for a few seconds \
         after it starts, until it has loaded the CRDs; retrying (if it lasts, the fleet CRDs were deleted: \
         `kubectl fleet install --apply` on the hub)"
    )]
    NotServedYet { crd: &'static str },
    /// The hub could not be reached at all.
    #[error("hub unreachable at {url}: {cause}; retrying")]
    Unreachable { url: String, cause: String },
    /// Any other answer from the hub.
    #[error("hub answered {code} while {doing}: {message}")]
    Hub {
        code: u16,
        doing: &'static str,
        message: String,
    },
    /// The hub answered a token renewal without a usable token.
    #[error("renewing its own token failed: {0}; keeping the current token and retrying")]
    Renewal(String),
    /// The member cluster could not be read. The message carries the
    /// cause, so it is not also the error's `source` (a printer of the
    /// chain would say it twice).
    #[error("reading the member cluster failed: {0}; reporting a heartbeat only")]
    Member(MemberError),
    /// The member cluster accepts the site's hub token: it is the hub
    /// itself, and the edge was not told so (`--member-is-hub`).
    #[error(
        "the member cluster this edge reads ({member}) is the hub itself (it accepts the site's hub token): \
         not reporting the hub's inventory as site {site}'s; point --kubeconfig at the member cluster of {site}, \
         or run the edge with --member-is-hub if {site} is the hub's own cluster"
    )]
    MemberIsHub { site: String, member: String },
    /// A renewed token could not be persisted in the member Secret.
    #[error(
        "renewed the site token but could not store it in Secret {secret} on the member cluster ({cause}); \
         using it from memory, a restart would fall back to the old token: give the edge get and update on that Secret \
         (`kubectl fleet install --role edge` does); retrying"
    )]
    Persist { secret: SecretName, cause: String },
}

impl EdgeError {
    /// Whether only a person can fix this: the edge then retries at a slow
    /// cadence (and at once when its hub kubeconfig changes on disk).
    pub fn needs_a_person(&self) -> bool {
        matches!(
            self,
            EdgeError::Unauthorized { .. }
                | EdgeError::Expired { .. }
                | EdgeError::NotRegistered { .. }
                | EdgeError::Forbidden { .. }
                | EdgeError::WrongSite { .. }
                | EdgeError::HubTls { .. }
                | EdgeError::CrdMissing { .. }
                | EdgeError::MemberIsHub { .. }
        )
    }

    /// Whether this failure leaves the site dark: no report reached the
    /// hub (an edge that refuses to report, its member being the hub, is
    /// not dark but misconfigured).
    pub(super) fn leaves_dark(&self) -> bool {
        !matches!(self, EdgeError::MemberIsHub { .. })
    }

    /// What the dark-period journal notes about this failure: the hub
    /// refusing the credential or answering with an error (a hub that does
    /// not answer at all is what a dark period is; it is not repeated).
    pub(super) fn journal_entry(&self) -> Option<(DarkEntryKind, String)> {
        let rejected = |d: String| Some((DarkEntryKind::CredentialRejected, d));
        let error = |d: String| Some((DarkEntryKind::HubError, d));
        match self {
            EdgeError::Expired { at, .. } => {
                rejected(format!("401: the site token expired at {at}"))
            }
            EdgeError::Unauthorized { .. } => rejected(
                "401: the site token was rejected (revoked, or the site unregistered)".into(),
            ),
            EdgeError::Forbidden { doing, .. } => rejected(format!("403 while {doing}")),
            EdgeError::WrongSite { owner, .. } => rejected(format!(
                "403: the hub kubeconfig holds the credential of site {owner}"
            )),
            EdgeError::NotRegistered { .. } => {
                error("404: the site is not registered on the hub".into())
            }
            EdgeError::CrdMissing { crd } | EdgeError::NotServedYet { crd } => {
                error(format!("404: the hub does not serve {crd}"))
            }
            EdgeError::HubTls { .. } => error("the hub's certificate is not trusted".into()),
            EdgeError::Hub { code, doing, .. } => error(format!("{code} while {doing}")),
            EdgeError::Credential(_) => error("the hub kubeconfig could not be used".into()),
            _ => None,
        }
    }

    /// A short stable name of the cause, for logs and tests.
    pub fn cause_name(&self) -> &'static str {
        match self {
            EdgeError::Credential(_) => "credential",
            EdgeError::Unauthorized { .. } => "unauthorized",
            EdgeError::Expired { .. } => "token-expired",
            EdgeError::Forbidden { .. } => "forbidden",
            EdgeError::WrongSite { .. } => "wrong-site",
            EdgeError::NotRegistered { .. } => "not-registered",
            EdgeError::HubTls { .. } => "hub-tls",
            EdgeError::CrdMissing { .. } => "crd-missing",
            EdgeError::NotServedYet { .. } => "not-served-yet",
            EdgeError::Unreachable { .. } => "unreachable",
            EdgeError::Hub { .. } => "hub-error",
            EdgeError::Member(_) => "member",
            EdgeError::Renewal(_) => "renewal",
            EdgeError::Persist { .. } => "persist-token",
            EdgeError::MemberIsHub { .. } => "member-is-hub",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_journal_notes_refusals_and_errors_not_silence() {
        let site = || "s".to_owned();
        let at: Timestamp = "2026-01-01T02:00:00Z".parse().unwrap();
        let kind = |e: EdgeError| e.journal_entry();
        assert_eq!(
            kind(EdgeError::Expired { site: site(), at }),
            Some((
                DarkEntryKind::CredentialRejected,
                "401: the site token expired at 2026-01-01T02:00:00Z".to_owned()
            ))
        );
        assert_eq!(
            kind(EdgeError::Forbidden {
                site: site(),
                doing: "patching its own status"
            }),
            Some((
                DarkEntryKind::CredentialRejected,
                "403 while patching its own status".to_owned()
            ))
        );
        assert_eq!(
            kind(EdgeError::Hub {
                code: 503,
                doing: "reading its own site",
                message: "\u{1b}[2J".into()
            }),
            Some((
                DarkEntryKind::HubError,
                "503 while reading its own site".to_owned()
            )),
            "the hub's message is not copied"
        );
        let unreachable = EdgeError::Unreachable {
            url: "https://hub".into(),
            cause: "connection refused".into(),
        };
        assert!(unreachable.leaves_dark());
        assert_eq!(unreachable.journal_entry(), None);
        let misconfigured = EdgeError::MemberIsHub {
            site: site(),
            member: "https://hub".into(),
        };
        assert!(!misconfigured.leaves_dark());
    }
}
