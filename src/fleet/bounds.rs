//! The caps on a site's edge-owned status, applied before it is written.
//!
//! The CRD schema rejects a status over the caps of `crate::api`
//! (`MAX_MESSAGE_CHARS`, `MAX_VERSION_CHARS`, …) with 422, for the whole
//! patch. Text an edge copies from its member cluster (a container's
//! termination message, a server's version string, an owner's kind) has no
//! such bound, so the edge (and the hub's Pull prober) clip it here first:
//! one oversized pod message must not stop a site from reporting.

use std::borrow::Cow;

use crate::api::{
    FederatedClusterStatus, MAX_LABEL_CHARS, MAX_MESSAGE_CHARS, MAX_OBJECT_NAME_CHARS,
    MAX_VERSION_CHARS, Signal,
};

/// Appended to text that was cut (one column wide).
pub const TRUNCATION_MARKER: char = '…';

/// `s` cut to at most `max` characters (Unicode scalar values, as the API
/// server counts `maxLength`), the last of them [`TRUNCATION_MARKER`] when
/// anything was cut. Borrowed when it fits.
pub fn cut_to(s: &str, max: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => Cow::Borrowed(s),
        Some(_) if max == 0 => Cow::Borrowed(""),
        Some(_) => {
            let keep = s.char_indices().nth(max - 1).map_or(s.len(), |(i, _)| i);
            let mut out = String::with_capacity(keep + TRUNCATION_MARKER.len_utf8());
            out.push_str(&s[..keep]);
            out.push(TRUNCATION_MARKER);
            Cow::Owned(out)
        }
    }
}

fn clip(s: &mut String, max: usize) {
    if let Cow::Owned(cut) = cut_to(s, max) {
        *s = cut;
    }
}

/// Clip the text fields of one signal to the CRD's caps.
pub fn clip_signal(signal: &mut Signal) {
    clip(&mut signal.namespace, MAX_LABEL_CHARS);
    clip(&mut signal.workload.kind, MAX_LABEL_CHARS);
    clip(&mut signal.workload.name, MAX_OBJECT_NAME_CHARS);
    if let Some(cluster) = signal.cluster.as_mut() {
        clip(cluster, MAX_LABEL_CHARS);
    }
    if let Some(message) = signal.message.as_mut() {
        clip(message, MAX_MESSAGE_CHARS);
    }
}

/// Clip every edge-owned text field of `status` to the CRD's caps. The
/// signal count is capped where signals are merged (`signals::merge`), and
/// GPU resources are a fixed list (`inventory::GPU_RESOURCES`).
pub fn clip_edge_status(status: &mut FederatedClusterStatus) {
    for version in [&mut status.observed_version, &mut status.kubernetes_version]
        .into_iter()
        .flatten()
    {
        clip(version, MAX_VERSION_CHARS);
    }
    for signal in status.signals.iter_mut().flatten() {
        clip_signal(signal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{FederatedCluster, SignalType};

    #[test]
    fn cut_to_counts_characters_and_marks_the_cut() {
        assert_eq!(cut_to("abcdef", 6), "abcdef");
        assert_eq!(cut_to("abcdefg", 6), "abcde…");
        assert_eq!(cut_to("日本語テキスト", 4), "日本語…");
        assert_eq!(cut_to("abc", 0), "");
        assert_eq!(cut_to("", 0), "");
        assert!(matches!(cut_to("fits", 4), Cow::Borrowed("fits")));
    }

    #[test]
    fn oversized_member_text_is_clipped_to_the_crd_caps() {
        let mut status = FederatedClusterStatus {
            kubernetes_version: Some("v".repeat(10_000)),
            observed_version: Some("0.1.0".into()),
            signals: Some(vec![Signal {
                message: Some("é".repeat(200_000)),
                cluster: Some("c".repeat(100)),
                ..Signal::test(
                    SignalType::OomKilled,
                    &"n".repeat(100),
                    &"K".repeat(100),
                    &"w".repeat(1000),
                )
            }]),
            ..Default::default()
        };
        clip_edge_status(&mut status);
        let chars = |s: &str| s.chars().count();
        assert_eq!(
            chars(status.kubernetes_version.as_deref().unwrap()),
            MAX_VERSION_CHARS
        );
        assert_eq!(status.observed_version.as_deref(), Some("0.1.0"));
        let s = &status.signals().first().unwrap();
        assert_eq!(chars(s.message.as_deref().unwrap()), MAX_MESSAGE_CHARS);
        assert!(s.message.as_deref().unwrap().ends_with(TRUNCATION_MARKER));
        assert_eq!(chars(&s.namespace), MAX_LABEL_CHARS);
        assert_eq!(chars(&s.workload.kind), MAX_LABEL_CHARS);
        assert_eq!(chars(&s.workload.name), MAX_OBJECT_NAME_CHARS);
        assert_eq!(chars(s.cluster.as_deref().unwrap()), MAX_LABEL_CHARS);
    }

    #[test]
    fn a_status_at_every_cap_stays_far_under_the_object_size_limit() {
        // etcd's default request limit is 1.5 MiB and the API server's
        // write limit 3 MiB; one site must stay well under either (half).
        let site = FederatedCluster::test("at-caps").at_caps();
        let bytes = serde_json::to_vec(&site).unwrap().len();
        assert!(bytes < 768 * 1024, "{bytes} bytes");
        eprintln!("worst-case site object: {bytes} bytes of JSON");
        // Clipping a status already at its caps changes nothing.
        let mut clipped = site.status.clone().unwrap();
        clip_edge_status(&mut clipped);
        assert_eq!(Some(clipped), site.status);
    }
}
