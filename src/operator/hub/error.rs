//! Why a hub reconcile failed.

/// A reconcile that failed.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// Re-reading a site after a conflict failed.
    #[error("re-reading site {site} after a conflict")]
    Reread {
        site: String,
        #[source]
        source: kube::Error,
    },
    /// Writing the site's status failed.
    #[error("writing status of site {site}")]
    Write {
        site: String,
        #[source]
        source: kube::Error,
    },
    /// Conflicts did not stop after [`super::MAX_CONFLICT_RETRIES`] re-reads.
    #[error("site {site} kept changing under the hub ({retries} conflicts in a row)")]
    TooManyConflicts { site: String, retries: u32 },
}

impl HubError {
    /// The `reason` label of `fleet_hub_reconcile_errors_total`
    /// (one of [`crate::operator::metrics::HUB_ERROR_REASONS`]).
    pub fn reason(&self) -> &'static str {
        match self {
            HubError::Reread { .. } => "reread",
            HubError::Write { .. } => "write",
            HubError::TooManyConflicts { .. } => "conflicts",
        }
    }
}
