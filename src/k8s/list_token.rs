//! The `metadata` of a list response, read without decoding its `items`,
//! so the next page can be requested before this one is decoded
//! ([`super::Cluster::for_each_site_page`] prefetches one page ahead).
//!
//! Servers differ in where the list's `metadata` sits: kube-sandbox writes
//! it before `items` (as Go does for typed lists), the real API server
//! serves custom resources as unstructured lists whose keys are sorted, so
//! it comes after `items`, at the very end. Both are read here cheaply:
//! the top-level members before `items` are walked from the start; after
//! `items`, the members are found from the end (only a key written
//! `"metadata":` can start them, and they must run to the closing brace of
//! the document). Anything else answers `None` and the caller decodes the
//! whole page first; the caller also checks this answer against the full
//! decode of every page, so a wrong guess costs a request, never a wrong
//! listing.

use serde::Deserialize;
use serde::de::IgnoredAny;

/// The part of a list's `metadata` paging needs.
#[derive(Deserialize, Default, Debug, Clone, PartialEq, Eq)]
pub(super) struct ListMeta {
    #[serde(default, rename = "continue")]
    pub continue_: Option<String>,
}

/// The list metadata of `body` (a JSON list response), if it can be read
/// without walking `items`.
pub(super) fn list_meta(body: &str) -> Option<ListMeta> {
    let bytes = body.as_bytes();
    let mut pos = skip_ws(bytes, 0);
    if bytes.get(pos) != Some(&b'{') {
        return None;
    }
    pos += 1;
    // Members before `items`, in order.
    let mut first = true;
    loop {
        pos = skip_ws(bytes, pos);
        match bytes.get(pos)? {
            b'}' if first => return Some(ListMeta::default()),
            b',' if !first => pos = skip_ws(bytes, pos + 1),
            _ if first => {}
            _ => return None,
        }
        first = false;
        let (key, after) = value::<std::borrow::Cow<'_, str>>(body, pos)?;
        pos = skip_ws(bytes, after);
        if bytes.get(pos) != Some(&b':') {
            return None;
        }
        pos = skip_ws(bytes, pos + 1);
        match key.as_ref() {
            "metadata" => return value::<ListMeta>(body, pos).map(|(meta, _)| meta),
            "items" => break,
            _ => pos = value::<IgnoredAny>(body, pos)?.1,
        }
    }
    // `items` came first: the metadata is among the members after it.
    let key = "\"metadata\"";
    let start = body.rfind(key)?;
    // The quote opens the key unless it is escaped (an odd run of
    // backslashes before it): then it is inside another string.
    let backslashes = bytes[..start]
        .iter()
        .rev()
        .take_while(|b| **b == b'\\')
        .count();
    if backslashes % 2 == 1 {
        return None;
    }
    let mut pos = skip_ws(bytes, start + key.len());
    if bytes.get(pos) != Some(&b':') {
        return None;
    }
    let (meta, after) = value::<ListMeta>(body, skip_ws(bytes, pos + 1))?;
    // The members that follow must close the document: only the top-level
    // object's own members end right before its last brace.
    pos = after;
    loop {
        pos = skip_ws(bytes, pos);
        match bytes.get(pos)? {
            b'}' => {
                return (skip_ws(bytes, pos + 1) == bytes.len()).then_some(meta);
            }
            b',' => {
                let (_, after) = value::<std::borrow::Cow<'_, str>>(body, skip_ws(bytes, pos + 1))?;
                pos = skip_ws(bytes, after);
                if bytes.get(pos) != Some(&b':') {
                    return None;
                }
                pos = value::<IgnoredAny>(body, skip_ws(bytes, pos + 1))?.1;
            }
            _ => return None,
        }
    }
}

/// One JSON value of type `T` starting at `pos`, and the offset after it.
fn value<'a, T: Deserialize<'a>>(body: &'a str, pos: usize) -> Option<(T, usize)> {
    let rest = body.get(pos..)?;
    let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<T>();
    let value = stream.next()?.ok()?;
    Some((value, pos + stream.byte_offset()))
}

fn skip_ws(bytes: &[u8], mut pos: usize) -> usize {
    while matches!(bytes.get(pos), Some(b' ' | b'\n' | b'\r' | b'\t')) {
        pos += 1;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(body: &str) -> Option<Option<String>> {
        list_meta(body).map(|m| m.continue_)
    }

    #[test]
    fn metadata_before_items() {
        let body = r#"{"kind":"L","apiVersion":"v1","metadata":{"continue":"abc","remainingItemCount":3,"resourceVersion":"7"},"items":[{"metadata":{"continue":"no"}}]}"#;
        assert_eq!(token(body), Some(Some("abc".into())));
        let last_page = r#"{"kind":"L","metadata":{"resourceVersion":"7"},"items":[]}"#;
        assert_eq!(token(last_page), Some(None));
        let spaced = " {\n \"metadata\" :\n {\"continue\": \"a\\u0062c\"} , \"items\": [] }\n";
        assert_eq!(token(spaced), Some(Some("abc".into())));
    }

    #[test]
    fn metadata_after_items() {
        // The real API server's order for custom resources (sorted keys).
        let body = r#"{"apiVersion":"v1","items":[{"metadata":{"name":"a","labels":{"metadata":"x"}}}],"kind":"L","metadata":{"continue":"abc","resourceVersion":"7"}}"#;
        assert_eq!(token(body), Some(Some("abc".into())));
        let last_page =
            r#"{"apiVersion":"v1","items":[],"kind":"L","metadata":{"resourceVersion":"7"}}"#;
        assert_eq!(token(last_page), Some(None));
        // Members after the metadata are fine as long as they close the document.
        let more = r#"{"items":[],"metadata":{"continue":"abc"},"kind":"L","x":[1,{"y":2}]} "#;
        assert_eq!(token(more), Some(Some("abc".into())));
    }

    #[test]
    fn only_the_documents_own_metadata_counts() {
        // The last "metadata" key is an item's: the document does not end
        // after its members, and the list has none of its own.
        let nested = r#"{"items":[{"metadata":{"continue":"wrong"}}]}"#;
        assert_eq!(token(nested), None);
        let nested_last = r#"{"items":[],"x":{"metadata":{"continue":"wrong"}}}"#;
        assert_eq!(token(nested_last), None);
        // Inside a string the key's quotes are escaped.
        let in_string = r#"{"items":[],"metadata":{"continue":"ok"},"kind":"\"metadata\":{\"continue\":\"wrong\"}"}"#;
        assert_eq!(token(in_string), Some(Some("ok".into())));
        let escaped_key = r#"{"items":[],"a\"metadata":{"continue":"wrong"}}"#;
        assert_eq!(token(escaped_key), None);
    }

    #[test]
    fn malformed_bodies_answer_none() {
        for body in [
            "",
            "[]",
            "{",
            r#"{"metadata""#,
            r#"{"metadata":{"continue":1}}"#,
            r#"{"items":[],"metadata":{"continue":"a"}"#,
            r#"{"items":[],"metadata":{"continue":"a"}}}"#,
            r#"{"items":[],"metadata":{"continue":"a"}} x"#,
            r#"{"kind" "L","metadata":{}}"#,
        ] {
            assert_eq!(token(body), None, "{body:?}");
        }
        assert_eq!(token("{}"), Some(None));
    }

    proptest::proptest! {
        /// Whatever the order of the members and the contents of the items,
        /// the answer is the one a full decode gives.
        #[test]
        fn agrees_with_a_full_decode(
            order in 0usize..6,
            labels in proptest::collection::vec("[a-z\"\\\\{}:,]{0,12}", 0..4),
            cont in proptest::option::of("[A-Za-z0-9_-]{1,20}"),
        ) {
            let items: Vec<serde_json::Value> = labels.iter().map(|l| serde_json::json!({
                "metadata": {"name": l, "labels": {l.as_str(): l, "metadata": {"continue": l}}},
            })).collect();
            let mut meta = serde_json::json!({"resourceVersion": "9"});
            if let Some(c) = &cont {
                meta["continue"] = serde_json::json!(c);
            }
            let members = [
                ("kind", serde_json::json!("FederatedClusterList")),
                ("metadata", meta),
                ("items", serde_json::Value::Array(items)),
            ];
            let orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
            let body = format!(
                "{{{}}}",
                orders[order]
                    .iter()
                    .map(|i| format!("{}:{}", serde_json::json!(members[*i].0), members[*i].1))
                    .collect::<Vec<_>>()
                    .join(",")
            );
            let full: serde_json::Value = serde_json::from_str(&body).unwrap();
            let want = full["metadata"]["continue"].as_str().map(str::to_owned);
            // In any order of the members: read cheaply, and right.
            proptest::prop_assert_eq!(token(&body), Some(want));
        }
    }
}
