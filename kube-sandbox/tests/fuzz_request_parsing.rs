//! Property tests (proptest, bounded case counts) of kube-sandbox's request
//! parsing: every test of this project trusts the sandbox, and a
//! hostile site's token talks to it in the fault suite, so no request body,
//! patch, selector or query string may crash it or get a 500.
//!
//! - the parsers directly, many cases: label and field selectors, query
//!   strings, protobuf bodies, merge / JSON / strategic merge patches;
//! - the server over HTTPS, fewer cases: arbitrary bytes as JSON, YAML and
//!   protobuf create bodies, arbitrary patch documents of every patch type
//!   on the status subresource, arbitrary selectors and query parameters on
//!   lists. Every answer is a 2xx or a 4xx with a `Status` body, and the
//!   server still serves afterwards.
//!
//! More cases: `PROPTEST_CASES=5000 cargo nextest run -p kube-sandbox --test integration fuzz_request_parsing::`.

use crate::support;

use kube_sandbox::parsers::{
    FieldSelector, LabelSelector, Query, decode_protobuf, json_patch, merge_patch,
    strategic_merge_patch,
};
use proptest::prelude::*;
use serde_json::{Value, json};
use support::Server;

const FC: &str = "/apis/federation.kubectl-fleet.dev/v1alpha1/federatedclusters";

/// `cases` unless `PROPTEST_CASES` asks for another count.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(cases),
        // Failures become explicit regression tests, not a seed file.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Any JSON value, a few levels deep, with keys that patches and objects use.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        any::<String>().prop_map(Value::from),
        "/[a-z/~01-]{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map(
                prop_oneof![
                    prop::sample::select(vec![
                        "op",
                        "path",
                        "from",
                        "value",
                        "metadata",
                        "name",
                        "labels",
                        "spec",
                        "status",
                        "signals",
                        "$patch",
                        "$retainKeys",
                        "$setElementOrder/signals",
                        "apiVersion",
                        "kind",
                        "conditions",
                        "type",
                    ])
                    .prop_map(str::to_owned),
                    any::<String>(),
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Selector-like text: the selector grammar's tokens mixed with anything.
fn selector_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            prop::sample::select(vec![
                "a",
                "b.io/k",
                "=",
                "==",
                "!=",
                ",",
                "!",
                " in ",
                " notin ",
                "(",
                ")",
                "x",
                "",
                "metadata.name",
                "metadata.namespace",
                "spec.x",
                "\\",
                " ",
            ])
            .prop_map(str::to_owned),
            any::<String>(),
        ],
        0..12,
    )
    .prop_map(|parts| parts.concat())
}

/// Percent-encodes everything but unreserved characters.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn selectors_and_query_strings_parse_or_are_refused(s in selector_text(), raw in any::<String>()) {
        if let Ok(sel) = LabelSelector::parse(&s) {
            sel.matches(None);
            sel.matches(json!({"a": "b", "b.io/k": "x"}).as_object());
        }
        if let Ok(sel) = FieldSelector::parse(&s) {
            sel.matches(&json!({"metadata": {"name": "x", "namespace": "y"}}));
        }
        Query::parse(&s);
        Query::parse(&raw);
    }

    #[test]
    fn protobuf_bodies_decode_or_are_refused(
        bytes in prop::collection::vec(any::<u8>(), 0..256),
        tail in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let _ = decode_protobuf(&bytes);
        // With the real magic prefix the decoder goes past the header.
        let mut framed = b"k8s\0".to_vec();
        framed.extend(&bytes);
        framed.extend(&tail);
        let _ = decode_protobuf(&framed);
    }

    #[test]
    fn patches_apply_or_are_refused(target in any_json(), patch in any_json()) {
        let mut t = target.clone();
        merge_patch(&mut t, &patch);
        let mut t = target.clone();
        if json_patch(&mut t, &patch).is_err() {
            prop_assert_eq!(&t, &target, "a refused JSON patch leaves the target unchanged");
        }
        let mut t = target;
        let _ = strategic_merge_patch(&mut t, &patch);
    }
}

/// A 2xx, or a 4xx whose body is a `Status` (what clients decode).
fn assert_answered(r: &support::Reply, what: &str) -> Result<(), TestCaseError> {
    prop_assert!(
        (200..300).contains(&r.status)
            || ((400..500).contains(&r.status) && r.json["kind"] == "Status"),
        "{what}: {} {}",
        r.status,
        r.text
    );
    Ok(())
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn the_server_answers_any_body_patch_or_selector_without_a_500(
        body in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..512),
            any_json().prop_map(|v| serde_json::to_vec(&v).unwrap()),
            any_json().prop_map(|v| serde_json::to_vec(&json!({
                "apiVersion": "federation.kubectl-fleet.dev/v1alpha1",
                "kind": "FederatedCluster", "metadata": {"name": "fuzz"}, "spec": v,
            })).unwrap()),
        ],
        body_type in prop::sample::select(vec![
            "application/json", "application/yaml", "application/vnd.kubernetes.protobuf", "text/plain",
        ]),
        patch in any_json(),
        patch_type in prop::sample::select(vec![
            "application/merge-patch+json", "application/json-patch+json",
            "application/strategic-merge-patch+json", "application/apply-patch+yaml",
        ]),
        label in selector_text(),
        field in selector_text(),
        extra in any::<String>(),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let server = SERVER.get_or_init(start_with_site).await;
            let r = server.raw_bytes("POST", FC, Some(body_type), "application/json", Some(body)).await;
            assert_answered(&r, "create")?;
            let r = server
                .raw_bytes(
                    "PATCH",
                    &format!("{FC}/site/status?fieldManager=fuzz&force=true"),
                    Some(patch_type),
                    "application/json",
                    Some(serde_json::to_vec(&patch).unwrap()),
                )
                .await;
            assert_answered(&r, "patch")?;
            let query = format!(
                "labelSelector={}&fieldSelector={}&limit={}&continue={}&resourceVersion={}",
                encode(&label), encode(&field), encode(&extra), encode(&extra), encode(&extra)
            );
            let r = server.raw("GET", &format!("{FC}?{query}"), None, None).await;
            assert_answered(&r, "list")?;
            // Still serving, and the site's object still reads back.
            let r = server.raw("GET", &format!("{FC}/site"), None, None).await;
            prop_assert_eq!(r.status, 200, "{}", r.text);
            Ok(())
        })?;
    }
}

/// One sandbox for every case of the HTTP property, with the fleet CRDs and
/// one site. Each case runs on its own runtime, so only the server (not a
/// client) is shared.
static SERVER: tokio::sync::OnceCell<Server> = tokio::sync::OnceCell::const_new();

async fn start_with_site() -> Server {
    let server = Server::sandbox();
    for crd in support::load_yaml_docs("deploy/crds/federation.kubectl-fleet.dev.yaml") {
        server.install_crd(&crd).await;
    }
    let site = json!({
        "apiVersion": "federation.kubectl-fleet.dev/v1alpha1",
        "kind": "FederatedCluster", "metadata": {"name": "site"}, "spec": {},
    });
    assert_eq!(server.raw("POST", FC, None, Some(&site)).await.status, 201);
    server
}
