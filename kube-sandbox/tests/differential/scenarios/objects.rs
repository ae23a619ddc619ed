//! Scenarios of custom objects under one CRD: writes, validation,
//! pruning and defaulting, CEL rules, versions, the status subresource,
//! patches, apply, errors, watches, tables, finalizers and selectors.

use super::*;

pub async fn crud(r: &mut Run<'_>) {
    let w = r.widget("w1", json!({"size": 3, "tags": ["a"]}));
    let created = r.call("create", "POST", &r.path(""), None, Some(w)).await;
    r.call("get", "GET", &r.path("/w1"), None, None).await;
    r.call(
        "create second",
        "POST",
        &r.path(""),
        None,
        Some(r.widget("w2", json!({"size": 4}))),
    )
    .await;
    r.call("list", "GET", &r.path(""), None, None).await;
    r.call(
        "list all namespaces",
        "GET",
        &format!("/apis/{}/v1/widgets", r.group),
        None,
        None,
    )
    .await;
    let mut replaced = created.json.clone();
    replaced["spec"]["size"] = json!(5);
    replaced["metadata"]["labels"] = json!({"app": "demo"});
    r.call("replace", "PUT", &r.path("/w1"), None, Some(replaced))
        .await;
    // PUT without resourceVersion is an unconditional update for CRs.
    let mut unconditional = r.widget("w1", json!({"size": 6}));
    unconditional["metadata"]["labels"] = json!({"app": "demo"});
    r.call(
        "replace without resourceVersion",
        "PUT",
        &r.path("/w1"),
        None,
        Some(unconditional),
    )
    .await;
    r.call("delete", "DELETE", &r.path("/w1"), None, None).await;
    r.call("get deleted", "GET", &r.path("/w1"), None, None)
        .await;
    r.call("delete again", "DELETE", &r.path("/w1"), None, None)
        .await;
    r.call("delete collection", "DELETE", &r.path(""), None, None)
        .await;
    r.call(
        "list after delete collection",
        "GET",
        &r.path(""),
        None,
        None,
    )
    .await;
    r.call(
        "create with mismatched namespace",
        "POST",
        &r.path(""),
        None,
        Some(json!({"apiVersion": r.api_version(), "kind": "Widget",
                    "metadata": {"name": "w3", "namespace": "other"}, "spec": {"size": 1}})),
    )
    .await;
    let generated = r
        .call(
            "create with generateName",
            "POST",
            &r.path(""),
            None,
            Some(json!({"apiVersion": r.api_version(), "kind": "Widget",
                        "metadata": {"generateName": "gen-"}, "spec": {"size": 1}})),
        )
        .await;
    // The random part of the name differs; its shape must not.
    let name = generated.json["metadata"]["name"]
        .as_str()
        .unwrap_or_default();
    r.note(
        "generated name shape",
        json!(name.starts_with("gen-") && name.len() == 9),
    );
}

pub async fn validation_errors(r: &mut Run<'_>) {
    let cases = [
        ("enum", json!({"size": 1, "color": "purple"})),
        ("required", json!({"color": "red"})),
        ("type", json!({"size": "three"})),
        ("minimum", json!({"size": 0})),
        ("maximum", json!({"size": 11})),
        ("maxItems", json!({"size": 1, "tags": ["a", "b", "c"]})),
        (
            "maxLength",
            json!({"size": 1, "mode": "B", "ref": "123456789"}),
        ),
        ("item type", json!({"size": 1, "tags": ["a", 7]})),
        (
            "several at once",
            json!({"size": 0, "color": "purple", "tags": ["a", "b", "c"]}),
        ),
        (
            "additionalProperties type",
            json!({"size": 1, "extra": {"k": 1}}),
        ),
    ];
    for (label, spec) in cases {
        r.call(
            label,
            "POST",
            &r.path(""),
            None,
            Some(r.widget("bad", spec)),
        )
        .await;
    }
    r.call(
        "spec missing",
        "POST",
        &r.path(""),
        None,
        Some(json!({"apiVersion": r.api_version(), "kind": "Widget", "metadata": {"name": "nospec"}})),
    )
    .await;
    r.call(
        "invalid name",
        "POST",
        &r.path(""),
        None,
        Some(r.widget("Not_Valid", json!({"size": 1}))),
    )
    .await;
    r.call("nothing stored", "GET", &r.path(""), None, None)
        .await;
    // The same checks on update.
    let ok = r
        .call(
            "create valid",
            "POST",
            &r.path(""),
            None,
            Some(r.widget("ok", json!({"size": 1}))),
        )
        .await;
    let mut bad = ok.json.clone();
    bad["spec"]["size"] = json!(20);
    r.call(
        "update to maximum+1",
        "PUT",
        &r.path("/ok"),
        None,
        Some(bad),
    )
    .await;
    r.call(
        "merge patch to bad enum",
        "PATCH",
        &r.path("/ok"),
        Some(MERGE),
        Some(json!({"spec": {"color": "pink"}})),
    )
    .await;
}

pub async fn pruning_and_defaulting(r: &mut Run<'_>) {
    let mut w = r.widget(
        "p1",
        json!({"size": 2, "unknown": "x", "nested": {"keep": "k", "drop": 1}}),
    );
    w["topLevelUnknown"] = json!({"a": 1});
    w["status"] = json!({"ready": true, "bogus": 1});
    r.call(
        "create with unknown fields",
        "POST",
        &r.path(""),
        None,
        Some(w),
    )
    .await;
    r.call(
        "get pruned and defaulted",
        "GET",
        &r.path("/p1"),
        None,
        None,
    )
    .await;
    r.call(
        "explicit values beat defaults",
        "POST",
        &r.path(""),
        None,
        Some(r.widget(
            "p2",
            json!({"size": 2, "color": "blue", "nested": {"count": 9}}),
        )),
    )
    .await;
    r.call(
        "merge patch removing a defaulted field re-defaults it",
        "PATCH",
        &r.path("/p2"),
        Some(MERGE),
        Some(json!({"spec": {"color": null}})),
    )
    .await;
    r.call(
        "merge patch adding unknown field is pruned",
        "PATCH",
        &r.path("/p2"),
        Some(MERGE),
        Some(json!({"spec": {"surprise": true}})),
    )
    .await;
    r.call(
        "strict field validation rejects unknown fields",
        "POST",
        &format!("{}?fieldValidation=Strict", r.path("")),
        None,
        Some(r.widget("p3", json!({"size": 2, "unknown": "x"}))),
    )
    .await;
    r.call(
        "dry run create",
        "POST",
        &format!("{}?dryRun=All", r.path("")),
        None,
        Some(r.widget("p4", json!({"size": 2}))),
    )
    .await;
    r.call("dry run stored nothing", "GET", &r.path("/p4"), None, None)
        .await;
}

pub async fn cel_rules(r: &mut Run<'_>) {
    r.call(
        "mode A without ref",
        "POST",
        &r.path(""),
        None,
        Some(r.widget("a1", json!({"size": 1}))),
    )
    .await;
    r.call(
        "mode B with ref",
        "POST",
        &r.path(""),
        None,
        Some(r.widget("b1", json!({"size": 1, "mode": "B", "ref": "x"}))),
    )
    .await;
    r.call(
        "mode B without ref",
        "POST",
        &r.path(""),
        None,
        Some(r.widget("b2", json!({"size": 1, "mode": "B"}))),
    )
    .await;
    r.call(
        "mode A with ref",
        "POST",
        &r.path(""),
        None,
        Some(r.widget("a2", json!({"size": 1, "ref": "x"}))),
    )
    .await;
    r.call(
        "CEL and schema errors together",
        "POST",
        &r.path(""),
        None,
        Some(r.widget("a3", json!({"size": 0, "mode": "B"}))),
    )
    .await;
    r.call(
        "update into violation",
        "PATCH",
        &r.path("/a1"),
        Some(MERGE),
        Some(json!({"spec": {"mode": "B"}})),
    )
    .await;
    r.call(
        "update into valid state",
        "PATCH",
        &r.path("/a1"),
        Some(MERGE),
        Some(json!({"spec": {"mode": "B", "ref": "y"}})),
    )
    .await;
}

pub async fn generation_and_resource_version(r: &mut Run<'_>) {
    let c = r
        .call(
            "create",
            "POST",
            &r.path(""),
            None,
            Some(r.widget("g", json!({"size": 1}))),
        )
        .await;
    let mut obj = c.json.clone();
    obj["spec"]["size"] = json!(2);
    let u1 = r
        .call(
            "spec update bumps generation",
            "PUT",
            &r.path("/g"),
            None,
            Some(obj),
        )
        .await;
    r.note("rv changed on spec update", json!(rv(&u1) != rv(&c)));
    let l = r
        .call(
            "label patch keeps generation",
            "PATCH",
            &r.path("/g"),
            Some(MERGE),
            Some(json!({"metadata": {"labels": {"x": "y"}}})),
        )
        .await;
    r.note("rv changed on label patch", json!(rv(&l) != rv(&u1)));
    let s = r
        .call(
            "status patch keeps generation",
            "PATCH",
            &r.path("/g/status"),
            Some(MERGE),
            Some(json!({"status": {"ready": true}})),
        )
        .await;
    r.note("rv changed on status patch", json!(rv(&s) != rv(&l)));
    let noop = r
        .call(
            "no-op update",
            "PUT",
            &r.path("/g"),
            None,
            Some(s.json.clone()),
        )
        .await;
    r.note("rv unchanged on no-op update", json!(rv(&noop) == rv(&s)));
    let noop_patch = r
        .call(
            "no-op merge patch",
            "PATCH",
            &r.path("/g"),
            Some(MERGE),
            Some(json!({"spec": {"size": 2}})),
        )
        .await;
    r.note(
        "rv unchanged on no-op patch",
        json!(rv(&noop_patch) == rv(&s)),
    );
    let list = r.call("list", "GET", &r.path(""), None, None).await;
    let list_rv = list.json["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    r.note(
        "list resourceVersion is at least the object's",
        json!(
            list_rv.parse::<u64>().unwrap_or(0)
                >= rv(&noop_patch).parse::<u64>().unwrap_or(u64::MAX)
        ),
    );
    r.call(
        "get with resourceVersion=0",
        "GET",
        &format!("{}?resourceVersion=0", r.path("/g")),
        None,
        None,
    )
    .await;
    r.call(
        "user-set generation is ignored",
        "PATCH",
        &r.path("/g"),
        Some(MERGE),
        Some(json!({"metadata": {"generation": 42}})),
    )
    .await;
}

pub async fn status_subresource_isolation(r: &mut Run<'_>) {
    let mut w = r.widget("s", json!({"size": 1}));
    w["status"] = json!({"ready": true});
    let c = r
        .call("create drops status", "POST", &r.path(""), None, Some(w))
        .await;
    let mut obj = c.json.clone();
    obj["status"] = json!({"ready": true, "count": 3});
    obj["spec"]["size"] = json!(2);
    let main = r
        .call(
            "main PUT ignores status",
            "PUT",
            &r.path("/s"),
            None,
            Some(obj),
        )
        .await;
    let mut obj = main.json.clone();
    obj["status"] = json!({"ready": true, "count": 3});
    obj["spec"]["size"] = json!(9);
    obj["metadata"]["labels"] = json!({"from": "status"});
    let st = r
        .call(
            "status PUT ignores spec and labels",
            "PUT",
            &r.path("/s/status"),
            None,
            Some(obj),
        )
        .await;
    r.call(
        "status merge patch ignores spec",
        "PATCH",
        &r.path("/s/status"),
        Some(MERGE),
        Some(json!({"spec": {"size": 7}, "status": {"count": 4}})),
    )
    .await;
    r.call(
        "main merge patch ignores status",
        "PATCH",
        &r.path("/s"),
        Some(MERGE),
        Some(json!({"status": {"count": 99}})),
    )
    .await;
    r.call("get status", "GET", &r.path("/s/status"), None, None)
        .await;
    r.call(
        "status is validated",
        "PATCH",
        &r.path("/s/status"),
        Some(MERGE),
        Some(json!({"status": {"count": -1}})),
    )
    .await;
    let mut gone = st.json.clone();
    gone["status"] = Value::Null;
    r.call(
        "status PUT with null status",
        "PUT",
        &r.path("/s/status"),
        None,
        Some(gone),
    )
    .await;
    r.call(
        "status of missing object",
        "GET",
        &r.path("/missing/status"),
        None,
        None,
    )
    .await;
}

pub async fn merge_and_json_patch(r: &mut Run<'_>) {
    r.call(
        "create",
        "POST",
        &r.path(""),
        None,
        Some(r.widget(
            "m",
            json!({"size": 1, "tags": ["a", "b"], "extra": {"k1": "v1", "k2": "v2"}}),
        )),
    )
    .await;
    r.call(
        "merge patch replaces lists and deletes map keys",
        "PATCH",
        &r.path("/m"),
        Some(MERGE),
        Some(json!({"spec": {"tags": ["z"], "extra": {"k1": null, "k3": "v3"}}})),
    )
    .await;
    r.call(
        "json patch add/replace/remove",
        "PATCH",
        &r.path("/m"),
        Some(JSON_PATCH),
        Some(json!([
            {"op": "add", "path": "/spec/tags/-", "value": "y"},
            {"op": "replace", "path": "/spec/size", "value": 4},
            {"op": "remove", "path": "/spec/extra/k2"},
        ])),
    )
    .await;
    r.call(
        "json patch test op fails",
        "PATCH",
        &r.path("/m"),
        Some(JSON_PATCH),
        Some(json!([{"op": "test", "path": "/spec/size", "value": 99}])),
    )
    .await;
    r.call(
        "json patch remove of missing path",
        "PATCH",
        &r.path("/m"),
        Some(JSON_PATCH),
        Some(json!([{"op": "remove", "path": "/spec/nope"}])),
    )
    .await;
    r.call(
        "json patch producing invalid object",
        "PATCH",
        &r.path("/m"),
        Some(JSON_PATCH),
        Some(json!([{"op": "replace", "path": "/spec/size", "value": 50}])),
    )
    .await;
    r.call(
        "json patch that is not a list",
        "PATCH",
        &r.path("/m"),
        Some(JSON_PATCH),
        Some(json!({"op": "add"})),
    )
    .await;
    r.call(
        "strategic merge patch is unsupported for CRs",
        "PATCH",
        &r.path("/m"),
        Some(STRATEGIC),
        Some(json!({"spec": {"size": 2}})),
    )
    .await;
    r.call(
        "unknown patch content type",
        "PATCH",
        &r.path("/m"),
        Some("text/plain"),
        Some(json!({"spec": {"size": 2}})),
    )
    .await;
    r.call(
        "merge patch of missing object",
        "PATCH",
        &r.path("/missing"),
        Some(MERGE),
        Some(json!({"spec": {"size": 2}})),
    )
    .await;
    r.call("get final", "GET", &r.path("/m"), None, None).await;
}

pub async fn server_side_apply(r: &mut Run<'_>) {
    let apply = |r: &Run<'_>, spec: Value| {
        json!({"apiVersion": r.api_version(), "kind": "Widget",
               "metadata": {"name": "ssa", "namespace": NS}, "spec": spec})
    };
    r.call(
        "apply creates",
        "PATCH",
        &format!("{}?fieldManager=alice", r.path("/ssa")),
        Some(APPLY),
        Some(apply(r, json!({"size": 1, "color": "green"}))),
    )
    .await;
    r.call(
        "same manager re-apply changes its field",
        "PATCH",
        &format!("{}?fieldManager=alice", r.path("/ssa")),
        Some(APPLY),
        Some(apply(r, json!({"size": 2, "color": "green"}))),
    )
    .await;
    r.call(
        "other manager conflicts",
        "PATCH",
        &format!("{}?fieldManager=bob", r.path("/ssa")),
        Some(APPLY),
        Some(apply(r, json!({"size": 3}))),
    )
    .await;
    r.call(
        "other manager disjoint field",
        "PATCH",
        &format!("{}?fieldManager=bob", r.path("/ssa")),
        Some(APPLY),
        Some(apply(r, json!({"size": 2, "tags": ["b"]}))),
    )
    .await;
    r.call(
        "force takes ownership",
        "PATCH",
        &format!("{}?fieldManager=bob&force=true", r.path("/ssa")),
        Some(APPLY),
        Some(apply(r, json!({"size": 5, "tags": ["b"]}))),
    )
    .await;
    r.call(
        "apply without fieldManager",
        "PATCH",
        &r.path("/ssa"),
        Some(APPLY),
        Some(apply(r, json!({"size": 5}))),
    )
    .await;
    r.call(
        "apply invalid object",
        "PATCH",
        &format!("{}?fieldManager=alice", r.path("/ssa")),
        Some(APPLY),
        Some(apply(r, json!({"size": 500, "color": "green"}))),
    )
    .await;
    r.call(
        "alice drops color (field removed)",
        "PATCH",
        &format!("{}?fieldManager=alice", r.path("/ssa")),
        Some(APPLY),
        Some(apply(r, json!({}))),
    )
    .await;
    r.call(
        "apply to status subresource",
        "PATCH",
        &format!("{}?fieldManager=carol", r.path("/ssa/status")),
        Some(APPLY),
        Some(json!({"apiVersion": r.api_version(), "kind": "Widget",
                    "metadata": {"name": "ssa", "namespace": NS}, "status": {"ready": true}})),
    )
    .await;
    r.call(
        "get with managed fields",
        "GET",
        &r.path("/ssa"),
        None,
        None,
    )
    .await;
}

pub async fn not_found_and_conflict_bodies(r: &mut Run<'_>) {
    r.call("get missing", "GET", &r.path("/nope"), None, None)
        .await;
    r.call(
        "put missing",
        "PUT",
        &r.path("/nope"),
        None,
        Some(r.widget("nope", json!({"size": 1}))),
    )
    .await;
    r.call("delete missing", "DELETE", &r.path("/nope"), None, None)
        .await;
    r.call(
        "unknown resource",
        "GET",
        &format!("/apis/{}/v1/namespaces/{NS}/gadgets", r.group),
        None,
        None,
    )
    .await;
    r.call(
        "unknown version",
        "GET",
        &format!("/apis/{}/v9/namespaces/{NS}/widgets", r.group),
        None,
        None,
    )
    .await;
    let c = r
        .call(
            "create",
            "POST",
            &r.path(""),
            None,
            Some(r.widget("c", json!({"size": 1}))),
        )
        .await;
    r.call(
        "create duplicate",
        "POST",
        &r.path(""),
        None,
        Some(r.widget("c", json!({"size": 1}))),
    )
    .await;
    let mut first = c.json.clone();
    first["spec"]["size"] = json!(2);
    r.call(
        "update with current rv",
        "PUT",
        &r.path("/c"),
        None,
        Some(first),
    )
    .await;
    let mut stale = c.json.clone();
    stale["spec"]["size"] = json!(3);
    r.call(
        "update with stale rv",
        "PUT",
        &r.path("/c"),
        None,
        Some(stale.clone()),
    )
    .await;
    stale["status"] = json!({"ready": true});
    r.call(
        "status update with stale rv",
        "PUT",
        &r.path("/c/status"),
        None,
        Some(stale),
    )
    .await;
    r.call(
        "merge patch with stale rv",
        "PATCH",
        &r.path("/c"),
        Some(MERGE),
        Some(json!({"metadata": {"resourceVersion": rv(&c)}, "spec": {"size": 4}})),
    )
    .await;
    let mut renamed = c.json.clone();
    renamed["metadata"]["name"] = json!("other");
    r.call(
        "update with name mismatch",
        "PUT",
        &r.path("/c"),
        None,
        Some(renamed),
    )
    .await;
    r.call(
        "delete with uid precondition mismatch",
        "DELETE",
        &r.path("/c"),
        None,
        Some(json!({"kind": "DeleteOptions", "apiVersion": "v1",
                    "preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}})),
    )
    .await;
    r.call(
        "delete with stale rv precondition",
        "DELETE",
        &r.path("/c"),
        None,
        Some(json!({"kind": "DeleteOptions", "apiVersion": "v1",
                    "preconditions": {"resourceVersion": rv(&c)}})),
    )
    .await;
    r.call(
        "malformed json body",
        "POST",
        &r.path(""),
        None,
        Some(json!("not an object")),
    )
    .await;
}

pub async fn watch_sequences(r: &mut Run<'_>) {
    let list = r.call("initial list", "GET", &r.path(""), None, None).await;
    let start = list.json["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    r.call(
        "create a",
        "POST",
        &r.path(""),
        None,
        Some(r.widget("a", json!({"size": 1}))),
    )
    .await;
    let mut labelled = r.widget("b", json!({"size": 1}));
    labelled["metadata"]["labels"] = json!({"app": "x"});
    r.call("create b", "POST", &r.path(""), None, Some(labelled))
        .await;
    r.call(
        "patch a",
        "PATCH",
        &r.path("/a"),
        Some(MERGE),
        Some(json!({"spec": {"size": 2}})),
    )
    .await;
    r.call("delete a", "DELETE", &r.path("/a"), None, None)
        .await;
    let events = r
        .watch("watch from list rv", &format!("resourceVersion={start}"), 5)
        .await;
    // Resume from the second event: only what came after it.
    let resume_rv = events
        .get(1)
        .and_then(|e| e["object"]["metadata"]["resourceVersion"].as_str())
        .unwrap_or_default()
        .to_string();
    r.watch(
        "resume from second event",
        &format!("resourceVersion={resume_rv}"),
        5,
    )
    .await;
    r.watch(
        "label-filtered watch",
        &format!("resourceVersion={start}&labelSelector=app%3Dx"),
        3,
    )
    .await;
    r.watch(
        "field-filtered watch",
        &format!("resourceVersion={start}&fieldSelector=metadata.name%3Da"),
        4,
    )
    .await;
    r.watch("watch without rv lists current state", "", 2).await;
    r.watch("watch rv=0", "resourceVersion=0", 2).await;
    // Older than anything this resource kept: 410 Gone as an ERROR event.
    r.watch("watch from rv 1 is too old", "resourceVersion=1", 2)
        .await;
    r.watch("watch with invalid rv", "resourceVersion=abc", 2)
        .await;
    r.watch(
        "bookmarks with sendInitialEvents",
        "sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan",
        3,
    )
    .await;
    r.watch("single object watch", "fieldSelector=metadata.name%3Db", 2)
        .await;
}

pub async fn table_output(r: &mut Run<'_>) {
    r.call(
        "create one",
        "POST",
        &r.path(""),
        None,
        Some(r.widget("t1", json!({"size": 1, "tags": ["a", "b"]}))),
    )
    .await;
    r.call(
        "create two",
        "POST",
        &r.path(""),
        None,
        Some(r.widget("t2", json!({"size": 2, "color": "blue"}))),
    )
    .await;
    r.call(
        "status for ready column",
        "PATCH",
        &r.path("/t1/status"),
        Some(MERGE),
        Some(json!({"status": {"ready": true}})),
    )
    .await;
    r.call_accept("table list", "GET", &r.path(""), TABLE).await;
    r.call_accept("table get", "GET", &r.path("/t1"), TABLE)
        .await;
    r.call_accept(
        "table list without object",
        "GET",
        &format!("{}?includeObject=None", r.path("")),
        TABLE,
    )
    .await;
    r.call_accept("table of missing object", "GET", &r.path("/missing"), TABLE)
        .await;
    r.call_accept(
        "table of the CRD list",
        "GET",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?labelSelector=none%3Dnone",
        TABLE,
    )
    .await;
}

pub async fn finalizers_and_deletion(r: &mut Run<'_>) {
    let list = r.call("initial list", "GET", &r.path(""), None, None).await;
    let start = list.json["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut w = r.widget("f", json!({"size": 1}));
    w["metadata"]["finalizers"] = json!(["example.com/hold"]);
    r.call("create with finalizer", "POST", &r.path(""), None, Some(w))
        .await;
    r.call(
        "delete marks for deletion",
        "DELETE",
        &r.path("/f"),
        None,
        None,
    )
    .await;
    r.call(
        "still readable while finalizing",
        "GET",
        &r.path("/f"),
        None,
        None,
    )
    .await;
    r.call(
        "spec change while terminating",
        "PATCH",
        &r.path("/f"),
        Some(MERGE),
        Some(json!({"spec": {"size": 2}})),
    )
    .await;
    r.call(
        "new finalizer while terminating is refused",
        "PATCH",
        &r.path("/f"),
        Some(JSON_PATCH),
        Some(json!([{"op": "add", "path": "/metadata/finalizers/-", "value": "example.com/more"}])),
    )
    .await;
    r.call("second delete", "DELETE", &r.path("/f"), None, None)
        .await;
    r.call(
        "removing the finalizer deletes",
        "PATCH",
        &r.path("/f"),
        Some(MERGE),
        Some(json!({"metadata": {"finalizers": null}})),
    )
    .await;
    r.call("gone", "GET", &r.path("/f"), None, None).await;
    r.watch(
        "events of the finalized delete",
        &format!("resourceVersion={start}"),
        6,
    )
    .await;
    r.call(
        "create for propagation",
        "POST",
        &r.path(""),
        None,
        Some(r.widget("g", json!({"size": 1}))),
    )
    .await;
    r.call(
        "delete with foreground propagation",
        "DELETE",
        &r.path("/g"),
        None,
        Some(
            json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"}),
        ),
    )
    .await;
    r.call(
        "foreground delete leaves a finalizer",
        "GET",
        &r.path("/g"),
        None,
        None,
    )
    .await;
    r.call(
        "dry-run delete",
        "DELETE",
        &format!("{}?dryRun=All", r.path("/g")),
        None,
        None,
    )
    .await;
}

pub async fn label_selectors_and_pagination(r: &mut Run<'_>) {
    let labels = [
        ("l1", json!({"app": "a", "tier": "web"})),
        ("l2", json!({"app": "b", "tier": "web"})),
        ("l3", json!({"app": "c"})),
        ("l4", json!({"tier": "db"})),
        ("l5", json!({"app": "a", "tier": "db"})),
    ];
    for (name, l) in labels {
        let mut w = r.widget(name, json!({"size": 1}));
        w["metadata"]["labels"] = l;
        r.call(
            &format!("create {name}"),
            "POST",
            &r.path(""),
            None,
            Some(w),
        )
        .await;
    }
    for (label, sel) in [
        ("equality", "app%3Da"),
        ("inequality", "app!%3Da"),
        ("set in", "app%20in%20(a,b)"),
        ("set notin", "app%20notin%20(a)"),
        ("exists", "tier"),
        ("not exists", "!app"),
        ("conjunction", "app%3Da,tier%3Ddb"),
        ("no match", "app%3Dzzz"),
        ("invalid selector", "app%20in%20a"),
    ] {
        let names = r
            .call(
                label,
                "GET",
                &format!("{}?labelSelector={sel}", r.path("")),
                None,
                None,
            )
            .await;
        let names: Vec<Value> = names.json["items"]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .map(|i| i["metadata"]["name"].clone())
                    .collect()
            })
            .unwrap_or_default();
        r.note(&format!("{label}: names"), json!(names));
    }
    r.call(
        "field selector on name",
        "GET",
        &format!("{}?fieldSelector=metadata.name%3Dl2", r.path("")),
        None,
        None,
    )
    .await;
    r.call(
        "unsupported field selector",
        "GET",
        &format!("{}?fieldSelector=spec.size%3D1", r.path("")),
        None,
        None,
    )
    .await;
    let mut cont = String::new();
    for page in 1..=3 {
        let q = if cont.is_empty() {
            "limit=2".to_string()
        } else {
            format!("limit=2&continue={cont}")
        };
        let p = r
            .call(
                &format!("page {page}"),
                "GET",
                &format!("{}?{q}", r.path("")),
                None,
                None,
            )
            .await;
        cont = p.json["metadata"]["continue"]
            .as_str()
            .unwrap_or_default()
            .to_string();
    }
    r.call(
        "paginated with selector",
        "GET",
        &format!("{}?limit=1&labelSelector=tier%3Dweb", r.path("")),
        None,
        None,
    )
    .await;
    r.call(
        "invalid continue token",
        "GET",
        &format!("{}?limit=2&continue=garbage", r.path("")),
        None,
        None,
    )
    .await;
}
