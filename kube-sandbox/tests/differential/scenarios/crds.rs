//! Scenarios of CustomResourceDefinitions themselves: a CRD's life under
//! its controllers, values at the edges of what a schema stores, and the
//! fleet's own CRDs.

use super::*;

pub async fn crd_lifecycle(r: &mut Run<'_>) {
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let crd_path = format!("{crds}/widgets.{}", r.group);
    let created = r.server.raw("POST", crds, None, Some(&r.crd())).await;
    assert_eq!(created.status, 201, "{}", created.text);
    r.note(
        "the created CRD",
        json!({"status": created.status, "state": crd_state(&created.json)}),
    );
    let established = until(r, &crd_path, |c| {
        c.json["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        })
    })
    .await;
    r.note("the established CRD", crd_state(&established.json));
    until(r, &r.path(""), |l| l.status == 200).await;
    // Its group in aggregated discovery, as kubectl reads it.
    let group = r.group.clone();
    let listed = r
        .server
        .raw_accept("GET", "/apis", None, support::AGGREGATED, None)
        .await;
    let item = listed.json["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|i| i["metadata"]["name"] == group.as_str())
        .cloned()
        .unwrap_or(Value::Null);
    r.note(
        "aggregated discovery of the group",
        json!({"status": listed.status, "kind": listed.json["kind"], "item": normalize(&group, item)}),
    );
    r.call(
        "discovery of the group version",
        "GET",
        &format!("/apis/{group}/v1"),
        None,
        None,
    )
    .await;
    r.call(
        "plain object",
        "POST",
        &r.path(""),
        None,
        Some(r.widget("plain", json!({"size": 1}))),
    )
    .await;
    let mut held = r.widget("held", json!({"size": 2}));
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    r.call("held object", "POST", &r.path(""), None, Some(held))
        .await;
    let deleted = r.server.raw("DELETE", &crd_path, None, None).await;
    r.note(
        "the CRD's delete answer",
        json!({"status": deleted.status, "kind": deleted.json["kind"], "state": crd_state(&deleted.json)}),
    );
    until(r, &r.path("/plain"), |o| o.status == 404).await;
    r.call(
        "the plain object is gone",
        "GET",
        &r.path("/plain"),
        None,
        None,
    )
    .await;
    r.call(
        "the held object is terminating",
        "GET",
        &r.path("/held"),
        None,
        None,
    )
    .await;
    r.call(
        "no object is created meanwhile",
        "POST",
        &r.path(""),
        None,
        Some(r.widget("late", json!({"size": 3}))),
    )
    .await;
    let terminating = r.server.raw("GET", &crd_path, None, None).await;
    r.note(
        "the terminating CRD",
        json!({"status": terminating.status, "state": crd_state(&terminating.json)}),
    );
    r.call(
        "the held object lets go",
        "PATCH",
        &r.path("/held"),
        Some(MERGE),
        Some(json!({"metadata": {"finalizers": null}})),
    )
    .await;
    until(r, &crd_path, |c| c.status == 404).await;
    r.call("the CRD is gone", "GET", &crd_path, None, None)
        .await;
}

/// Values at the edges of what a writer can store: date-times that
/// Kubernetes' `date-time` format (kube-openapi's strfmt) takes and jiff
/// does not, numbers beyond int64 or written as floats, control
/// characters under a printable-text pattern, and the same values
/// under the fleet CRD's exact date-time pattern. Each value is created
/// in its own object, and read back (what is stored).
pub async fn edge_values(r: &mut Run<'_>) {
    let crd = values_crd(&r.group);
    r.server.install_crd(&crd).await;
    let path = format!("/apis/{}/v1/namespaces/{NS}/samples", r.group);
    let times = [
        json!("2026-12-05T21:30:05Z"),
        json!("2026-12-05t21:30:05z"),
        json!("2026-12-05T21:30:05.123456789Z"),
        json!("2026-12-05T21:30:05.1234567891Z"),
        json!("2026-12-05T21:30:05x5Z"),
        json!("2026-12-05T21:30:05\u{e9}5Z"),
        json!("2026-12-05T21:30:05+99:99"),
        json!("2026-12-05T21:30:05+23:59"),
        json!("2026-12-05T21:30:05-24:00"),
        json!("2026-12-05T24:00:00Z"),
        json!("2026-12-05T21:60:00Z"),
        json!("2026-12-05T21:30:60Z"),
        json!("2026-02-29T00:00:00Z"),
        json!("2024-02-29T00:00:00Z"),
        json!("2026-12-05T21:30:05Zt"),
        json!("2026-12-05T21:30:05Zt garbage"),
        json!("2026-12-05 21:30:05Z"),
        json!("2026-12-05T21:30Z"),
        json!("2026-12-05T21:30:05.Z"),
        json!("2026-12-05T21:30:05,5Z"),
        json!("2026-12-05T21:30:05"),
        json!("20261205T213005Z"),
        json!("+2026-12-05T21:30:05Z"),
        json!("9999-12-31T23:59:59Z"),
        json!("9998-12-31T23:59:59-23:59"),
        json!("0000-01-01T00:00:00Z"),
        json!(""),
        json!(["2026-12-05T21:30:05Z"]),
        json!([]),
        json!({}),
        json!(5),
        json!(true),
    ];
    let numbers = [
        json!(5),
        json!(-1),
        json!(9223372036854775807i64),
        json!(9223372036854775808u64),
        json!(18446744073709551615u64),
        json!(1.0),
        json!(1.5),
        json!(1e3),
        json!(9007199254740993.0),
        json!(1e300),
        json!("5"),
    ];
    let texts = [
        json!("v1.33.2"),
        json!("Größe ✓"),
        json!("a\u{1b}[2Jb"),
        json!("a\u{9b}b"),
        json!("a\u{7f}b"),
        json!("a\u{202e}b"),
        json!("a\nb"),
    ];
    let mut n = 0;
    let fields = times
        .iter()
        .flat_map(|v| [("when", v), ("exact", v)])
        .chain(
            numbers
                .iter()
                .flat_map(|v| [("count", v), ("plain", v), ("bounded", v)]),
        )
        .chain(texts.iter().map(|v| ("text", v)));
    for (field, value) in fields {
        n += 1;
        let name = format!("v{n}");
        let body = json!({"apiVersion": format!("{}/v1", r.group), "kind": "Sample",
            "metadata": {"name": name, "namespace": NS}, "spec": {field: value}});
        r.call(
            &format!("{field} = {value}"),
            "POST",
            &path,
            None,
            Some(body),
        )
        .await;
        // What is stored (a 404 when refused).
        r.call(
            &format!("{field} = {value}: stored"),
            "GET",
            &format!("{path}/{name}"),
            None,
            None,
        )
        .await;
    }
}

pub async fn fleet_crds(r: &mut Run<'_>) {
    let fc = format!("/apis/{FLEET_GROUP}/v1alpha1/federatedclusters");
    let fs = format!("/apis/{FLEET_GROUP}/v1alpha1/federationstatuses");
    // Object names carry the run suffix: a long-lived real server keeps
    // the objects of earlier runs.
    let name = |n: &str| format!("{n}-{}", run_suffix());
    let site = |n: &str, spec: Value| {
        json!({"apiVersion": format!("{FLEET_GROUP}/v1alpha1"), "kind": "FederatedCluster",
               "metadata": {"name": name(n)}, "spec": spec})
    };
    let secret_ref = json!({"namespace": "fleet-system", "name": "fleet-pull-x"});
    let created = r
        .call("defaults", "POST", &fc, None, Some(site("d", json!({}))))
        .await;
    for (label, spec) in [
        ("bad tier", json!({"tier": "gold"})),
        ("bad environment", json!({"environment": "prod"})),
        ("heartbeat 5", json!({"heartbeatIntervalSeconds": 5})),
        ("heartbeat 4000", json!({"heartbeatIntervalSeconds": 4000})),
        (
            "duplicate capability",
            json!({"capabilities": ["monitoring", "monitoring"]}),
        ),
        ("unknown capability", json!({"capabilities": ["scaling"]})),
        ("pull without ref", json!({"mode": "Pull"})),
        (
            "push with ref",
            json!({"mode": "Push", "kubeconfigSecretRef": secret_ref}),
        ),
        (
            "pull with empty ref name",
            json!({"mode": "Pull", "kubeconfigSecretRef": {"namespace": "a", "name": ""}}),
        ),
        (
            "negative remediations",
            json!({"maxConcurrentRemediations": -1}),
        ),
    ] {
        r.call(label, "POST", &fc, None, Some(site("bad", spec)))
            .await;
    }
    r.call(
        "pull with ref",
        "POST",
        &fc,
        None,
        Some(site(
            "p",
            json!({"mode": "Pull", "kubeconfigSecretRef": secret_ref}),
        )),
    )
    .await;
    let mut dotted = site("x", json!({}));
    dotted["metadata"]["name"] = json!(format!("a.{}", run_suffix()));
    r.call("name with a dot", "POST", &fc, None, Some(dotted))
        .await;
    r.call(
        "fleet status not named fleet",
        "POST",
        &fs,
        None,
        Some(
            json!({"apiVersion": format!("{FLEET_GROUP}/v1alpha1"), "kind": "FederationStatus",
                    "metadata": {"name": name("nf")}}),
        ),
    )
    .await;
    // Two writers: the hub's guarded status write, an edge heartbeat, then
    // the hub's stale write.
    let d = format!("{fc}/{}", name("d"));
    let mut hub = created.json.clone();
    hub["status"] = json!({"phase": "Connected", "phaseTransitionTime": "2026-01-01T00:00:00Z",
        "conditions": [{"type": "Connected", "status": "True", "reason": "HeartbeatFresh",
                        "message": "ok", "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
    let hub_ok = r
        .call(
            "hub status write",
            "PUT",
            &format!("{d}/status"),
            None,
            Some(hub),
        )
        .await;
    r.call(
        "edge heartbeat merge patch",
        "PATCH",
        &format!("{d}/status"),
        Some(MERGE),
        Some(
            json!({"status": {"lastHeartbeatTime": "2026-01-01T00:00:30Z", "nodeCount": 3,
                               "capacity": {"nodes": 3, "gpusTotal": 8}}}),
        ),
    )
    .await;
    let mut stale = hub_ok.json.clone();
    stale["status"]["phase"] = json!("Stale");
    r.call(
        "hub stale status write",
        "PUT",
        &format!("{d}/status"),
        None,
        Some(stale),
    )
    .await;
    r.call(
        "bad phase",
        "PATCH",
        &format!("{d}/status"),
        Some(MERGE),
        Some(json!({"status": {"phase": "Lost"}})),
    )
    .await;
    // What a site could once store and no reader could decode: refused
    // whole, by both servers, through the shipped CRD.
    for (label, status) in [
        (
            "ten fraction digits",
            json!({"lastHeartbeatTime": "2026-12-05T21:30:05.1234567891Z"}),
        ),
        (
            "a letter before the fraction",
            json!({"lastHeartbeatTime": "2026-12-05T21:30:05x5Z"}),
        ),
        (
            "offset +99:99",
            json!({"lastHeartbeatTime": "2026-12-05T21:30:05+99:99"}),
        ),
        ("a list for a time", json!({"lastHeartbeatTime": []})),
        (
            "a signal seen in year 9999",
            json!({"signals": [{"type": "Evicted", "severity": "low",
            "workload": {"kind": "Pod", "name": "p"}, "count": 1,
            "firstSeen": "9999-12-31T23:59:59Z", "lastSeen": "2026-12-05T21:30:05Z"}]}),
        ),
        (
            "a count beyond int64",
            json!({"nodeCount": 18446744073709551615u64}),
        ),
        (
            "a count beyond the maximum",
            json!({"capacity": {"gpusTotal": 1_000_000_001}}),
        ),
        (
            "an escape in a version",
            json!({"kubernetesVersion": "v1.33\u{1b}[2J"}),
        ),
        (
            "a C1 control in a message",
            json!({"signals": [{"type": "Evicted", "severity": "low",
            "workload": {"kind": "Pod", "name": "p"}, "count": 1, "message": "csi\u{9b}31m",
            "firstSeen": "2026-12-05T21:30:05Z", "lastSeen": "2026-12-05T21:30:05Z"}]}),
        ),
    ] {
        r.call(
            &format!("poison: {label}"),
            "PATCH",
            &format!("{d}/status"),
            Some(MERGE),
            Some(json!({"status": status})),
        )
        .await;
    }
    r.call_accept(
        "table",
        "GET",
        &format!(
            "{fc}?labelSelector=none%21%3Dx&fieldSelector=metadata.name%3D{}",
            name("d")
        ),
        TABLE,
    )
    .await;
}
