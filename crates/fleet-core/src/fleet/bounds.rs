//! The caps on a site's edge-owned status, applied before it is written.
//!
//! The CRD schema rejects a status over the caps of `crate::api`
//! (`MAX_MESSAGE_CHARS`, `MAX_VERSION_CHARS`, …) with 422, for the whole
//! patch. Text an edge copies from its member cluster (a container's
//! termination message, a server's version string, an owner's kind) has no
//! such bound, so the edge (and the hub's Pull prober) clip it here first:
//! one oversized pod message must not stop a site from reporting.

use std::borrow::Cow;
use std::collections::HashMap;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::api::{
    DarkEntry, DarkPeriod, EdgeStatus, MAX_COUNT, MAX_DARK_DETAIL_CHARS, MAX_DARK_ENTRIES,
    MAX_DARK_SUBJECT_CHARS, MAX_DATE_TIME, MAX_DURATION_MILLISECONDS, MAX_LABEL_CHARS,
    MAX_MESSAGE_CHARS, MAX_NODE_VALUE_CHARS, MAX_NODE_VALUES, MAX_OBJECT_NAME_CHARS,
    MAX_VERSION_CHARS, NodeValue, NodeValues, Signal, is_control_or_format,
};

/// Appended to text that was cut (one column wide).
pub(crate) const TRUNCATION_MARKER: char = '…';

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

/// `s` without control or format characters, which the CRD refuses in
/// every string a site writes (`api::PRINTABLE_TEXT_PATTERN`): a line
/// break, tab or other whitespace control becomes a space, anything else
/// U+FFFD. Borrowed when there is none.
pub(crate) fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_control_or_format) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| match c {
                c if !is_control_or_format(c) => c,
                '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | '\u{85}' => ' ',
                _ => char::REPLACEMENT_CHARACTER,
            })
            .collect(),
    )
}

/// Makes `s` printable ([`printable`]) and cuts it to `max` characters.
fn clip(s: &mut String, max: usize) {
    if let Cow::Owned(clean) = printable(s) {
        *s = clean;
    }
    if let Cow::Owned(cut) = cut_to(s, max) {
        *s = cut;
    }
}

/// A count within the CRD's bounds (0 to `MAX_COUNT`).
fn count(n: &mut i64) {
    *n = (*n).clamp(0, MAX_COUNT);
}

/// A time the CRD admits: at most `MAX_DATE_TIME` (jiff reads up to the
/// end of 9999, the CRD's pattern the years up to 9998).
fn time(t: &mut Time) {
    let max: Timestamp = MAX_DATE_TIME.parse().expect("MAX_DATE_TIME is RFC 3339");
    if t.0 > max {
        t.0 = max;
    }
}

/// Clip the text fields of one signal to the CRD's caps (printable and
/// within their lengths), and its count and times to their bounds.
pub(crate) fn clip_signal(signal: &mut Signal) {
    signal.count = signal.count.clamp(1, MAX_COUNT);
    time(&mut signal.first_seen);
    time(&mut signal.last_seen);
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

/// Clip every edge-owned field of `status` to the CRD's caps: text
/// printable and within its length, counts, durations and times within
/// their bounds. The number of signals is capped where signals are merged
/// (`signals::merge`), and GPU resources are a fixed list
/// (`inventory::GPU_RESOURCES`).
pub fn clip_edge_status(status: &mut EdgeStatus) {
    for n in [&mut status.node_count, &mut status.namespace_count]
        .into_iter()
        .flatten()
    {
        count(n);
    }
    if let Some(c) = status.capacity.as_mut() {
        count(&mut c.nodes);
        count(&mut c.gpus_total);
        count(&mut c.gpus_allocatable);
        for g in c.gpus_by_vendor.values_mut() {
            count(&mut g.total);
            count(&mut g.allocatable);
        }
    }
    if let Some(i) = status.inference.as_mut() {
        for n in [
            &mut i.models,
            &mut i.services_ready,
            &mut i.services_failed,
            &mut i.services_total,
        ] {
            count(n);
        }
    }
    for ms in [
        &mut status.last_probe_duration_milliseconds,
        &mut status.last_report_duration_milliseconds,
    ]
    .into_iter()
    .flatten()
    {
        *ms = (*ms).clamp(0, MAX_DURATION_MILLISECONDS);
    }
    for t in [
        &mut status.last_heartbeat_time,
        &mut status.credential_expiration_time,
        &mut status.credential_renewal_time,
    ]
    .into_iter()
    .flatten()
    {
        time(t);
    }
    for version in [&mut status.observed_version, &mut status.kubernetes_version]
        .into_iter()
        .flatten()
    {
        clip(version, MAX_VERSION_CHARS);
    }
    for signal in status.signals.iter_mut().flatten() {
        clip_signal(signal);
    }
    if let Some(dark) = status.last_dark_period.as_mut() {
        clip_dark_period(dark);
    }
    if let Some(info) = status.node_info.as_mut() {
        for values in info.attributes_mut() {
            let listed = std::mem::take(&mut values.values)
                .into_iter()
                .map(|v| (v.value, v.nodes));
            *values = node_values(listed, values.other_values, values.other_nodes);
        }
    }
}

/// One attribute of `status.nodeInfo` within the CRD's caps, from
/// `counts` (a value and how many nodes have it; a value may come more
/// than once) and what is already counted beyond a list (`other_values`,
/// `other_nodes`): each value printable and cut to
/// `MAX_NODE_VALUE_CHARS` before values are told apart (two that differ
/// only past the cut are one), empty values and counts below one left
/// out, the most nodes first (then by value), at most `MAX_NODE_VALUES`
/// listed and the rest counted, every count within `MAX_COUNT`.
pub(crate) fn node_values(
    counts: impl IntoIterator<Item = (String, i64)>,
    other_values: i64,
    other_nodes: i64,
) -> NodeValues {
    let mut merged: HashMap<String, i64> = HashMap::new();
    for (mut value, nodes) in counts {
        clip(&mut value, MAX_NODE_VALUE_CHARS);
        if !value.is_empty() && nodes > 0 {
            let n = merged.entry(value).or_default();
            *n = n.saturating_add(nodes);
        }
    }
    let mut all: Vec<(String, i64)> = merged.into_iter().collect();
    all.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let rest = all.split_off(all.len().min(MAX_NODE_VALUES));
    let mut other_values = other_values
        .max(0)
        .saturating_add(i64::try_from(rest.len()).unwrap_or(i64::MAX));
    let mut other_nodes = rest
        .iter()
        .fold(other_nodes.max(0), |n, r| n.saturating_add(r.1));
    count(&mut other_values);
    count(&mut other_nodes);
    NodeValues {
        values: all
            .into_iter()
            .map(|(value, nodes)| NodeValue {
                value,
                nodes: nodes.min(MAX_COUNT),
            })
            .collect(),
        other_values,
        other_nodes,
    }
}

/// Clip one journal entry to the CRD's caps: its text printable and
/// within its length, its time within the bound.
pub(crate) fn clip_dark_entry(entry: &mut DarkEntry) {
    time(&mut entry.time);
    clip(&mut entry.subject, MAX_DARK_SUBJECT_CHARS);
    clip(&mut entry.detail, MAX_DARK_DETAIL_CHARS);
}

/// Clip a dark period to the CRD's caps: at most `MAX_DARK_ENTRIES`
/// entries (the oldest beyond them counted in `dropped`), each clipped,
/// its times and count within their bounds.
pub(crate) fn clip_dark_period(dark: &mut DarkPeriod) {
    time(&mut dark.from);
    time(&mut dark.to);
    let over = dark.entries.len().saturating_sub(MAX_DARK_ENTRIES);
    dark.entries.drain(..over);
    dark.dropped = dark
        .dropped
        .saturating_add(i64::try_from(over).unwrap_or(i64::MAX));
    count(&mut dark.dropped);
    dark.entries.iter_mut().for_each(clip_dark_entry);
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
        let mut status = EdgeStatus {
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
    fn what_the_crd_refuses_is_made_admissible() {
        let mut status = EdgeStatus {
            kubernetes_version: Some("v1.33\u{1b}[2J\u{9b}\u{202e}".into()),
            node_count: Some(i64::MAX),
            namespace_count: Some(-1),
            last_report_duration_milliseconds: Some(i64::MAX),
            credential_expiration_time: Some(Time("9999-12-30T00:00:00Z".parse().unwrap())),
            capacity: Some(crate::api::Capacity {
                gpus_total: MAX_COUNT + 1,
                ..Default::default()
            }),
            signals: Some(vec![Signal {
                message: Some("line one\nline two\r\tend\u{7f}".into()),
                count: i64::MAX,
                ..Signal::test(SignalType::OomKilled, "ns", "Deployment", "web")
            }]),
            ..Default::default()
        };
        clip_edge_status(&mut status);
        assert_eq!(
            status.kubernetes_version.as_deref(),
            Some("v1.33\u{fffd}[2J\u{fffd}\u{fffd}")
        );
        assert_eq!(status.node_count, Some(MAX_COUNT));
        assert_eq!(status.namespace_count, Some(0));
        assert_eq!(
            status.last_report_duration_milliseconds,
            Some(MAX_DURATION_MILLISECONDS)
        );
        assert_eq!(status.capacity.as_ref().unwrap().gpus_total, MAX_COUNT);
        assert_eq!(
            status
                .credential_expiration_time
                .as_ref()
                .unwrap()
                .0
                .to_string(),
            MAX_DATE_TIME
        );
        let s = &status.signals()[0];
        assert_eq!(s.message.as_deref(), Some("line one line two  end\u{fffd}"));
        assert_eq!(s.count, MAX_COUNT);
        let re = regex_lite(crate::api::PRINTABLE_TEXT_PATTERN);
        assert!(re(s.message.as_deref().unwrap()));
    }

    #[test]
    fn node_info_is_clipped_to_its_caps_and_stays_one_entry_per_value() {
        let long = "k".repeat(MAX_NODE_VALUE_CHARS + 50);
        let mut cut_twin = long.clone();
        cut_twin.push('x');
        let mut status = EdgeStatus {
            node_info: Some(crate::api::NodeInfo {
                kernel_version: NodeValues {
                    values: (0..12)
                        .map(|i| NodeValue {
                            value: format!("5.15.{i}"),
                            nodes: i + 1,
                        })
                        .chain([
                            NodeValue {
                                value: long.clone(),
                                nodes: 20,
                            },
                            NodeValue {
                                value: cut_twin,
                                nodes: 30,
                            },
                            NodeValue {
                                value: "6.8\u{1b}]0;owned\u{7}".into(),
                                nodes: i64::MAX,
                            },
                            NodeValue {
                                value: String::new(),
                                nodes: 4,
                            },
                        ])
                        .collect(),
                    other_values: 3,
                    other_nodes: -7,
                },
                ..Default::default()
            }),
            ..Default::default()
        };
        clip_edge_status(&mut status);
        let k = &status.node_info.as_ref().unwrap().kernel_version;
        let listed: Vec<(&str, i64)> = k
            .values
            .iter()
            .map(|v| (v.value.as_str(), v.nodes))
            .collect();
        let cut = format!("{}…", &long[..MAX_NODE_VALUE_CHARS - 1]);
        assert_eq!(listed.len(), MAX_NODE_VALUES);
        assert_eq!(listed[0], ("6.8\u{fffd}]0;owned\u{fffd}", MAX_COUNT));
        // The two that differ only past the cut are one value.
        assert_eq!(listed[1], (cut.as_str(), 50));
        assert_eq!(listed[2], ("5.15.11", 12));
        assert_eq!(listed[7], ("5.15.6", 7));
        // 6 of the twelve are left out (1 + … + 6 nodes), beside the 3 already counted.
        assert_eq!((k.other_values, k.other_nodes), (3 + 6, 21));
        let mut again = status.clone();
        clip_edge_status(&mut again);
        assert_eq!(again, status);
    }

    /// Whether `s` has no control or format character, as the CRD's
    /// printable-text pattern checks.
    fn regex_lite(pattern: &str) -> impl Fn(&str) -> bool {
        assert_eq!(pattern, "^[^\\p{Cc}\\p{Cf}]*$");
        |s: &str| !s.chars().any(is_control_or_format)
    }

    #[test]
    fn a_status_at_every_cap_stays_far_under_the_object_size_limit() {
        // etcd's default request limit is 1.5 MiB and the API server's
        // write limit 3 MiB; one site must stay well under either (half).
        let mut site = FederatedCluster::test("at-caps").at_caps();
        // And a dark period at its caps (NUL text, as the fixture's).
        let fill = |n: usize| "\0".repeat(n);
        let at = Time(crate::fleet::fixtures::fixture_now());
        site.status.as_mut().unwrap().last_dark_period = Some(DarkPeriod {
            from: at.clone(),
            to: at.clone(),
            entries: (0..MAX_DARK_ENTRIES + 5)
                .map(|_| DarkEntry {
                    time: at.clone(),
                    kind: crate::api::DarkEntryKind::Failure,
                    subject: fill(MAX_DARK_SUBJECT_CHARS),
                    detail: fill(MAX_DARK_DETAIL_CHARS),
                })
                .collect(),
            dropped: i64::MAX,
        });
        let bytes = serde_json::to_vec(&site).unwrap().len();
        assert!(bytes < 768 * 1024, "{bytes} bytes");
        eprintln!("worst-case site object: {bytes} bytes of JSON");
        // The fixture goes past what the CRD admits (NUL text, counts at
        // i64::MAX): clipped once it is admissible, and clipping that
        // again changes nothing.
        let full = site.status.clone().unwrap();
        let mut clipped = EdgeStatus::from_status(&full);
        clip_edge_status(&mut clipped);
        assert_ne!(clipped, EdgeStatus::from_status(&full));
        assert_eq!(clipped.node_count, Some(MAX_COUNT));
        assert!(!clipped.observed_version.as_deref().unwrap().contains('\0'));
        let dark = clipped.last_dark_period.as_ref().unwrap();
        assert_eq!(
            (dark.entries.len(), dark.dropped),
            (MAX_DARK_ENTRIES, MAX_COUNT)
        );
        assert!(!dark.entries[0].detail.contains('\0'));
        let mut again = clipped.clone();
        clip_edge_status(&mut again);
        assert_eq!(again, clipped);
    }
}
