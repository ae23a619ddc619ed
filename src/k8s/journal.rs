//! The edge's dark-period journal on its member cluster
//! (`fleet::journal`): one ConfigMap the edge owns, key [`JOURNAL_KEY`],
//! so what it saw while the hub was out of reach survives its restarts.
//!
//! The ConfigMap is created by `kubectl fleet install --role edge` (empty);
//! the edge only reads and replaces it, which needs get and update on
//! exactly that name (`fleet::rbac::edge_journal_rules`) — no create, so
//! the edge can write no other ConfigMap.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};

use crate::fleet::journal::Journal;
use crate::k8s::edge_token::SecretName;

/// The ConfigMap data key holding the journal (JSON).
pub const JOURNAL_KEY: &str = "journal";

/// Upper bound on the journal text the edge reads back: far above what
/// it writes (`fleet::journal`'s bounds), so a hand-edited ConfigMap
/// cannot make it decode megabytes.
const MAX_JOURNAL_BYTES: usize = 256 * 1024;

/// What reading the journal found.
#[derive(Debug)]
pub enum Read {
    /// The journal as last written (or empty: the ConfigMap holds none).
    Journal(Box<Journal>),
    /// The ConfigMap holds text that is not a journal (or too much of it):
    /// the edge starts a new one, and says why.
    Unreadable(String),
}

/// Reads the journal from ConfigMap `at`.
pub async fn read_journal(member: &kube::Client, at: &SecretName) -> Result<Read, kube::Error> {
    let api: Api<ConfigMap> = Api::namespaced(member.clone(), &at.namespace);
    let cm = api.get(&at.name).await?;
    let Some(text) = cm.data.as_ref().and_then(|d| d.get(JOURNAL_KEY)) else {
        return Ok(Read::Journal(Box::default()));
    };
    if text.len() > MAX_JOURNAL_BYTES {
        return Ok(Read::Unreadable(format!(
            "{} bytes, more than the {MAX_JOURNAL_BYTES} an edge writes",
            text.len()
        )));
    }
    Ok(match serde_json::from_str(text) {
        Ok(j) => Read::Journal(Box::new(j)),
        Err(e) => Read::Unreadable(e.to_string()),
    })
}

/// Replaces the journal in ConfigMap `at` (get, then update at the read
/// resourceVersion). Other keys are kept.
pub async fn write_journal(
    member: &kube::Client,
    at: &SecretName,
    journal: &Journal,
) -> Result<(), kube::Error> {
    let api: Api<ConfigMap> = Api::namespaced(member.clone(), &at.namespace);
    let mut current = api.get(&at.name).await?;
    // A journal holds strings, numbers and lists only.
    let text = serde_json::to_string(journal).unwrap_or_default();
    current
        .data
        .get_or_insert_default()
        .insert(JOURNAL_KEY.to_owned(), text);
    api.replace(&at.name, &PostParams::default(), &current)
        .await?;
    Ok(())
}
