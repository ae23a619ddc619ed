//! What the real API server admits in a site's status, every reader of the
//! fleet reads (issue 30): a property test that generates, for each
//! edge-owned status key, values its schema in the shipped CRD admits *as
//! the real API server checks it* — a `pattern` as a regular expression,
//! `format: date-time` as kube-openapi's strfmt (ten fraction digits, any
//! character before them, offsets to ±99:99, anything after a second `t`),
//! integers within `minimum`/`maximum` and int64, strings within
//! `maxLength`, lists within `maxItems`, maps within `maxProperties` — and
//! shows that the hub (its watch decoder and its judgement), the CLI (its
//! paged decoder, table, describe, incidents and `-o json`) and the REST
//! API (the same report, from the hub's cache) read every one of them
//! whole: nothing is left unread, and what is shown is what was written.
//! The schemas are read from `kubectl_fleet::api::crds()`, so a field
//! added without a pattern or maximum is generated loosely and fails here.
//!
//! The differential suite (`kube-sandbox/tests/differential.rs`,
//! `edge_values` and `fleet_crds`) holds the sandbox to what the real
//! server admits; this holds the readers to it.
//!
//! Run with more cases: `PROPTEST_CASES=2000 cargo nextest run --test integration decode_admitted::`.

use std::time::Duration;

use kubectl_fleet::api::{EDGE_OWNED_STATUS_KEYS, FederatedCluster};
use kubectl_fleet::fleet::fixtures::fixture_now;
use kubectl_fleet::fleet::hub_status::{DEFAULT_CREDENTIAL_WARNING, Sighting, hub_status};
use kubectl_fleet::k8s::site_decode::{LeanSite, UnmanagedSite};
use kubectl_fleet::render;
use proptest::prelude::*;
use proptest::strategy::ValueTree as _;
use serde_json::{Map, Value, json};

/// The schema of `status` in the shipped FederatedCluster CRD.
fn status_schema() -> Value {
    let crd = serde_json::to_value(&kubectl_fleet::api::crds()[0]).unwrap();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"].clone()
}

/// A date-time kube-openapi's strfmt `IsDateTime` admits: a real date, `t`,
/// `HH:MM:SS` within range, optionally one character of any kind and
/// digits, `z` or an offset of any two digits each, optionally a further
/// `t` and anything — in either case.
fn strfmt_date_time() -> impl Strategy<Value = String> {
    let date = (0u32..=9999, 1u32..=12, 1u32..=31).prop_map(|(y, m, d)| {
        let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        let days = match m {
            2 if leap => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        format!("{y:04}-{m:02}-{:02}", d.min(days))
    });
    let time = (0u32..24, 0u32..60, 0u32..60).prop_map(|(h, m, s)| format!("{h:02}:{m:02}:{s:02}"));
    let fraction = prop::option::of(("[.,x\u{e9}]", "[0-9]{1,12}").prop_map(|(c, d)| c + &d));
    let zone = prop_oneof!["[zZ]", "[+-][0-9]{2}:[0-9]{2}"];
    let tail = prop::option::of("t[ -~]{0,8}");
    (date, "[tT]", time, fraction, zone, tail).prop_map(|(d, t, h, f, z, tail)| {
        format!(
            "{d}{t}{h}{}{z}{}",
            f.unwrap_or_default(),
            tail.unwrap_or_default()
        )
    })
}

/// A string a `pattern` admits (RE2 and Rust's regex syntax agree on the
/// ones the CRD uses), within `max` characters.
fn matching(pattern: &str, max: usize) -> BoxedStrategy<String> {
    let inner = pattern
        .strip_prefix('^')
        .and_then(|p| p.strip_suffix('$'))
        .unwrap_or(pattern)
        // Long runs say nothing more than short ones, and keep cases fast.
        .replace("]*", "]{0,24}");
    proptest::string::string_regex(&inner)
        .unwrap_or_else(|e| panic!("pattern {pattern}: {e}"))
        .prop_filter("within maxLength", move |s| s.chars().count() <= max)
        .boxed()
}

/// Values `schema` admits on the real API server.
fn admitted(schema: &Value) -> BoxedStrategy<Value> {
    let int_kw = |k: &str| schema.get(k).and_then(Value::as_f64);
    match schema["type"].as_str().unwrap_or_default() {
        "string" => {
            if let Some(values) = schema["enum"].as_array() {
                return prop::sample::select(values.clone()).boxed();
            }
            let max = int_kw("maxLength").map_or(64, |m| m as usize);
            let text = match (schema["pattern"].as_str(), schema["format"].as_str()) {
                (Some(p), _) => matching(p, max),
                (None, Some("date-time")) => strfmt_date_time().boxed(),
                (None, _) => prop::string::string_regex(&format!("(?s:.{{0,{}}})", max.min(24)))
                    .unwrap()
                    .boxed(),
            };
            text.prop_map(Value::from).boxed()
        }
        "integer" => {
            // The real server refuses anything beyond int64 (it decodes it
            // as a float, and the type check says no).
            let min = int_kw("minimum").map_or(i64::MIN, |m| m as i64);
            let max = int_kw("maximum").map_or(i64::MAX, |m| m.min(9.2e18) as i64);
            prop_oneof![Just(min), Just(max), min..=max]
                .prop_map(Value::from)
                .boxed()
        }
        "boolean" => any::<bool>().prop_map(Value::from).boxed(),
        "array" => {
            let max = int_kw("maxItems").map_or(4, |m| (m as usize).min(4));
            prop::collection::vec(admitted(&schema["items"]), 0..=max)
                .prop_map(Value::from)
                .boxed()
        }
        "object" => {
            if let Some(extra) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                let max = int_kw("maxProperties").map_or(3, |m| (m as usize).min(3));
                // Keys as the CEL rule on them admits: printable, ≤ 253.
                let key = matching(kubectl_fleet::api::PRINTABLE_TEXT_PATTERN, 253);
                return prop::collection::btree_map(key, admitted(extra), 0..=max)
                    .prop_map(|m| Value::Object(m.into_iter().collect()))
                    .boxed();
            }
            let required: Vec<String> = schema["required"]
                .as_array()
                .map(|r| {
                    r.iter()
                        .filter_map(|k| k.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            let props = schema["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = props
                .into_iter()
                .map(|(k, s)| {
                    let value = admitted(&s);
                    if required.contains(&k) {
                        value.prop_map(move |v| Some((k.clone(), v))).boxed()
                    } else {
                        prop::option::of(value.prop_map(move |v| (k.clone(), v))).boxed()
                    }
                })
                .collect();
            fields
                .prop_map(|fields| {
                    Value::Object(fields.into_iter().flatten().collect::<Map<_, _>>())
                })
                .boxed()
        }
        other => panic!("no generator for schema type {other:?}: {schema}"),
    }
}

/// A status of edge-owned keys, each present or not, with values the CRD
/// admits.
fn admitted_status() -> impl Strategy<Value = Value> {
    let schema = status_schema();
    let keys: Vec<BoxedStrategy<Option<(String, Value)>>> = EDGE_OWNED_STATUS_KEYS
        .iter()
        .map(|k| {
            let key = (*k).to_owned();
            prop::option::of(
                admitted(&schema["properties"][*k]).prop_map(move |v| (key.clone(), v)),
            )
            .boxed()
        })
        .collect();
    keys.prop_map(|kv| Value::Object(kv.into_iter().flatten().collect()))
}

fn site_json(name: &str, status: &Value) -> Value {
    json!({
        "apiVersion": "federation.kubectl-fleet.dev/v1alpha1",
        "kind": "FederatedCluster",
        "metadata": {"name": name, "resourceVersion": "7", "uid": "u-1",
            "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"heartbeatIntervalSeconds": 10},
        "status": status,
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_status_the_api_server_admits_is_read_whole_by_hub_cli_and_rest(status in admitted_status()) {
        let now = fixture_now();
        let text = site_json("s", &status).to_string();
        let list = json!({"apiVersion": "v1", "kind": "List", "metadata": {},
            "items": [site_json("s", &status), site_json("t", &json!({}))]})
        .to_string();
        // The hub's watch decoder, a list of it, and the CLI's paged one.
        let UnmanagedSite(hub) = serde_json::from_str(&text).unwrap();
        let listed: kube::core::ObjectList<UnmanagedSite> = serde_json::from_str(&list).unwrap();
        let LeanSite(cli) = serde_json::from_str(&text).unwrap();
        for site in [&hub, &listed.items[0].0, &cli] {
            let unread = site.status.as_ref().and_then(|s| s.unreadable());
            prop_assert!(unread.is_none(), "not read: {:?}\nof {}", unread, status);
        }
        // What was written is what was read (re-serialised: the same keys
        // and values; times compared as instants).
        let back = serde_json::to_value(hub.status.clone().unwrap_or_default()).unwrap();
        for (k, v) in status.as_object().unwrap() {
            match k.as_str() {
                "lastHeartbeatTime" | "credentialExpirationTime" | "credentialRenewalTime" => {
                    // Written back at second precision, as `Time` always is.
                    let a: jiff::Timestamp = v.as_str().unwrap().parse().unwrap();
                    let a = jiff::fmt::strtime::format("%Y-%m-%dT%H:%M:%SZ", a).unwrap();
                    prop_assert_eq!(back[k].as_str().unwrap(), a.as_str(), "{}", k);
                }
                "signals" => prop_assert_eq!(
                    back[k].as_array().map(Vec::len), v.as_array().map(Vec::len), "{}", k
                ),
                "nodeCount" | "namespaceCount" | "observedVersion" | "kubernetesVersion"
                | "lastProbeDurationMilliseconds" | "lastReportDurationMilliseconds" => {
                    prop_assert_eq!(&back[k], v, "{}", k);
                }
                _ => prop_assert!(back.get(k).is_some(), "{} lost", k),
            }
        }
        // The hub judges it as a site it reads whole.
        let interval = Duration::from_secs(10);
        let reported = hub.status.as_ref().and_then(|s| s.last_heartbeat_time.as_ref()).map(|t| t.0);
        let sighting = Sighting::of_site(None, &hub, interval, now);
        prop_assert_eq!(sighting.observation.map(|o| o.reported), reported);
        let judged = hub_status(&hub, &sighting, interval, DEFAULT_CREDENTIAL_WARNING, None, now);
        let connected = judged.conditions.iter().find(|c| c.type_ == "Connected").unwrap();
        prop_assert_ne!(connected.reason.as_str(), "InvalidStatus");
        // The CLI's views and the REST API's report.
        let sites: Vec<FederatedCluster> = vec![cli, hub];
        let verdict = kubectl_fleet::fleet::liveness::hub_verdict(None, now);
        let mut table = render::status::StatusTable::new(now, verdict.judging(), true);
        sites.iter().for_each(|s| table.push(s));
        let out: String = table.lines(false).collect();
        prop_assert!(!out.contains("<invalid>") && !out.contains("InvalidStatus"), "{}", out);
        let d = render::describe::site_description(&sites[0], &verdict, &kubectl_fleet::fleet::policy::Incidents::default(), None, now);
        prop_assert!(!render::describe::render_description(&d, now).contains("Unreadable"));
        render::render_incidents(
            &render::incidents_report(&sites, vec![], vec![], vec![], &verdict, now),
            now,
            false,
        );
        let report: Value = serde_json::from_str(
            &render::to_json(&render::status_report(&sites, &verdict, &kubectl_fleet::fleet::policy::Incidents::default(), now)).unwrap(),
        )
        .unwrap();
        for s in report["sites"].as_array().unwrap() {
            prop_assert!(s["unreadable"].is_null(), "{}", s);
            if let Some(n) = status.get("nodeCount") {
                prop_assert_eq!(&s["nodeCount"], n);
            }
        }
    }
}

#[test]
fn the_generator_admits_what_the_real_server_does_of_a_date_time() {
    // The loose forms strfmt takes, one of each, are what the generator
    // makes for a `format: date-time` (the CRD before its patterns).
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = strfmt_date_time();
    let samples: Vec<String> = (0..200)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect();
    assert!(
        samples
            .iter()
            .any(|s| s.parse::<jiff::Timestamp>().is_err()),
        "{samples:?}"
    );
    assert!(
        samples.iter().any(|s| s.parse::<jiff::Timestamp>().is_ok()),
        "{samples:?}"
    );
}
