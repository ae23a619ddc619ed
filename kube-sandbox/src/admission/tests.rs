//! Admission by ValidatingAdmissionPolicies through the store's write
//! paths (`objects::create`, `update`, `delete`), as a request would run
//! them: matching, match conditions, variables, messages, reasons,
//! failure policies, actions, params, and the API validation of policies.

use super::*;
use crate::objects::{self, Preconditions, WriteOpts};
use crate::resources::Catalogue;

const SITE: &str = "system:serviceaccount:fleet-system:fleet-edge-a";
const HUB: &str = "system:serviceaccount:fleet-system:fleet-operator-hub";

fn user(name: &str) -> UserInfo {
    UserInfo {
        username: name.into(),
        uid: "u-1".into(),
        groups: vec![
            "system:serviceaccounts".into(),
            "system:authenticated".into(),
        ],
        extra: Default::default(),
    }
}

fn opts(name: &str) -> WriteOpts {
    WriteOpts {
        manager: "test".into(),
        user: Some(user(name)),
        ..Default::default()
    }
}

fn def(st: &State, group: &str, version: &str, plural: &str) -> Arc<ResourceDef> {
    st.catalogue.get(group, version, plural).cloned().unwrap()
}

/// A store serving the cluster-scoped `things.g.dev` (with `/status`) and
/// holding `thing` `a` with a hub-written status.
fn state() -> State {
    let mut st = State::new(Catalogue::builtin());
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.g.dev"},
        "spec": {"group": "g.dev", "scope": "Cluster",
            "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}
    });
    let crds = def(
        &st,
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
    );
    objects::create(&mut st, &crds, "", crd, &WriteOpts::default()).unwrap();
    let things = def(&st, "g.dev", "v1", "things");
    objects::create(
        &mut st,
        &things,
        "",
        json!({"metadata": {"name": "a", "labels": {"tier": "edge"}}, "spec": {"mode": "Push"}}),
        &WriteOpts::default(),
    )
    .unwrap();
    status(
        &mut st,
        "a",
        json!({"phase": "Connected", "lastHeartbeatTime": "t0"}),
        &WriteOpts::default(),
    )
    .unwrap();
    st
}

fn status(
    st: &mut State,
    name: &str,
    status: Value,
    o: &WriteOpts,
) -> Result<Arc<Value>, ApiError> {
    let things = def(st, "g.dev", "v1", "things");
    let key = (String::new(), name.to_string());
    let mut new = (**st.get(&things.storage_key(), &key).unwrap()).clone();
    for (k, v) in status.as_object().unwrap() {
        new["status"][k] = v.clone();
    }
    objects::update(st, &things, &key, new, Some("status"), o)
}

fn spec(st: &mut State, name: &str, spec: Value, o: &WriteOpts) -> Result<Arc<Value>, ApiError> {
    let things = def(st, "g.dev", "v1", "things");
    let key = (String::new(), name.to_string());
    let mut new = (**st.get(&things.storage_key(), &key).unwrap()).clone();
    new["spec"] = spec;
    objects::update(st, &things, &key, new, None, o)
}

fn put(st: &mut State, plural: &str, obj: Value) -> Result<Arc<Value>, ApiError> {
    let d = def(st, GROUP, "v1", plural);
    let name = obj["metadata"]["name"].as_str().unwrap().to_string();
    let key = (String::new(), name);
    if st.get(&d.storage_key(), &key).is_some() {
        objects::update(st, &d, &key, obj, None, &opts("admin"))
    } else {
        objects::create(st, &d, "", obj, &opts("admin"))
    }
}

fn policy(st: &mut State, name: &str, spec: Value) {
    put(
        st,
        POLICIES,
        json!({"metadata": {"name": name}, "spec": spec}),
    )
    .unwrap();
}

fn binding(st: &mut State, name: &str, spec: Value) {
    put(
        st,
        BINDINGS,
        json!({"metadata": {"name": name}, "spec": spec}),
    )
    .unwrap();
}

fn status_rules() -> Value {
    json!({"resourceRules": [{"apiGroups": ["g.dev"], "apiVersions": ["*"],
        "operations": ["UPDATE"], "resources": ["things/status"]}]})
}

/// The shape `install` ships: sites may not change hub-owned status keys.
fn ownership(st: &mut State) {
    policy(
        st,
        "ownership",
        json!({
            "failurePolicy": "Fail",
            "matchConstraints": status_rules(),
            "matchConditions": [{"name": "site", "expression":
                "['fleet-sites', 'fleet-system'].exists(ns, request.userInfo.username.startsWith('system:serviceaccount:' + ns + ':fleet-edge-'))"}],
            "variables": [
                {"name": "old", "expression": "has(oldObject.status) ? oldObject.status : {}"},
                {"name": "new", "expression": "has(object.status) ? object.status : {}"},
                {"name": "changed", "expression":
                    "['phase', 'conditions'].filter(k, (k in variables.new) != (k in variables.old) || (k in variables.new && variables.new[k] != variables.old[k]))"}
            ],
            "validations": [{
                "expression": "size(variables.changed) == 0",
                "messageExpression": "variables.changed.map(k, 'status.' + k).join(', ') + ' is written only by the hub'",
                "message": "hub-owned status keys are written only by the hub",
                "reason": "Forbidden"
            }]
        }),
    );
    binding(
        st,
        "ownership",
        json!({"policyName": "ownership", "validationActions": ["Deny"]}),
    );
}

#[test]
fn a_site_changing_a_hub_owned_key_is_denied_with_the_real_wording() {
    let mut st = state();
    ownership(&mut st);
    let e = status(&mut st, "a", json!({"phase": "Stale"}), &opts(SITE)).unwrap_err();
    assert_eq!((e.code, e.reason.as_str()), (403, "Forbidden"));
    let inner = "ValidatingAdmissionPolicy 'ownership' with binding 'ownership' denied request: status.phase is written only by the hub";
    assert_eq!(
        e.message,
        format!("things.g.dev \"a\" is forbidden: {inner}")
    );
    assert_eq!(
        e.details.unwrap(),
        json!({"name": "a", "group": "g.dev", "kind": "things", "causes": [{"message": inner}]})
    );
    // Adding a key is a change too; removing one as well.
    let e = status(
        &mut st,
        "a",
        json!({"conditions": [{"type": "Connected"}]}),
        &opts(SITE),
    )
    .unwrap_err();
    assert!(
        e.message
            .ends_with("denied request: status.conditions is written only by the hub"),
        "{}",
        e.message
    );
    // The edge-owned key alone passes, and is stored.
    let ok = status(
        &mut st,
        "a",
        json!({"lastHeartbeatTime": "t1"}),
        &opts(SITE),
    )
    .unwrap();
    assert_eq!(ok["status"]["lastHeartbeatTime"], "t1");
    assert_eq!(ok["status"]["phase"], "Connected");
    // An unchanged hub-owned key in a whole-status PUT passes too.
    status(
        &mut st,
        "a",
        json!({"phase": "Connected", "lastHeartbeatTime": "t2"}),
        &opts(SITE),
    )
    .unwrap();
    // Other identities are not matched: the hub writes its keys.
    let hub = status(&mut st, "a", json!({"phase": "Stale"}), &opts(HUB)).unwrap();
    assert_eq!(hub["status"]["phase"], "Stale");
    // A site in the new namespace is matched as well.
    let e = status(
        &mut st,
        "a",
        json!({"phase": "Connected"}),
        &opts("system:serviceaccount:fleet-sites:fleet-edge-a"),
    );
    assert_eq!(e.unwrap_err().code, 403);
    // The main resource is not `things/status`.
    spec(&mut st, "a", json!({"mode": "Pull"}), &opts(SITE)).unwrap();
    // A dry run is admitted the same way.
    let dry = WriteOpts {
        dry_run: true,
        ..opts(SITE)
    };
    assert_eq!(
        status(&mut st, "a", json!({"phase": "Gone"}), &dry)
            .unwrap_err()
            .code,
        403
    );
}

#[test]
fn resource_rules_match_like_the_real_matcher() {
    let cases: [(Value, bool, bool); 9] = [
        // (rule, matches a /status update, matches a main-resource update)
        (json!({"resources": ["things"]}), false, true),
        (json!({"resources": ["things/status"]}), true, false),
        // `x/*` is the resource and every subresource (the real matcher's
        // `sub == "*" || sub == opSub`).
        (json!({"resources": ["things/*"]}), true, true),
        (json!({"resources": ["*/status"]}), true, false),
        (json!({"resources": ["*"]}), false, true),
        (json!({"resources": ["*/*"]}), true, true),
        (
            json!({"resources": ["*/*"], "operations": ["CREATE", "DELETE"]}),
            false,
            false,
        ),
        (
            json!({"resources": ["*/*"], "scope": "Namespaced"}),
            false,
            false,
        ),
        (
            json!({"resources": ["*/*"], "resourceNames": ["b"]}),
            false,
            false,
        ),
    ];
    for (rule, on_status, on_main) in cases {
        let mut st = state();
        let mut r = json!({"apiGroups": ["g.dev"], "apiVersions": ["v1"], "operations": ["*"], "scope": "Cluster"});
        for (k, v) in rule.as_object().unwrap() {
            r[k] = v.clone();
        }
        policy(
            &mut st,
            "p",
            json!({"matchConstraints": {"resourceRules": [r]}, "validations": [{"expression": "false"}]}),
        );
        binding(
            &mut st,
            "b",
            json!({"policyName": "p", "validationActions": ["Deny"]}),
        );
        let s = status(&mut st, "a", json!({"n": 1}), &opts(SITE)).is_err();
        let m = spec(&mut st, "a", json!({"n": 2}), &opts(SITE)).is_err();
        assert_eq!((s, m), (on_status, on_main), "{rule}");
    }
}

#[test]
fn selectors_excluded_rules_and_binding_match_resources_narrow_the_match() {
    let deny_all = |st: &mut State, constraints: Value, binding_match: Option<Value>| {
        let mut c = json!({"resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*/*"]}]});
        for (k, v) in constraints.as_object().unwrap() {
            c[k] = v.clone();
        }
        policy(
            st,
            "p",
            json!({"matchConstraints": c, "validations": [{"expression": "false", "message": "no"}]}),
        );
        let mut b = json!({"policyName": "p", "validationActions": ["Deny"]});
        if let Some(m) = binding_match {
            b["matchResources"] = m;
        }
        binding(st, "b", b);
    };
    let denied = |st: &mut State| status(st, "a", json!({"n": 1}), &opts(SITE)).is_err();

    let mut st = state();
    deny_all(
        &mut st,
        json!({"objectSelector": {"matchLabels": {"tier": "edge"}}}),
        None,
    );
    assert!(denied(&mut st));
    deny_all(
        &mut st,
        json!({"objectSelector": {"matchLabels": {"tier": "core"}}}),
        None,
    );
    assert!(!denied(&mut st));
    // A namespace selector never excludes a cluster-scoped object.
    deny_all(
        &mut st,
        json!({"namespaceSelector": {"matchLabels": {"x": "y"}}}),
        None,
    );
    assert!(denied(&mut st));
    deny_all(
        &mut st,
        json!({"excludeResourceRules": [{"apiGroups": ["g.dev"], "apiVersions": ["*"], "operations": ["UPDATE"], "resources": ["things/status"]}]}),
        None,
    );
    assert!(!denied(&mut st));
    // The binding narrows what the policy matches.
    deny_all(
        &mut st,
        json!({}),
        Some(
            json!({"objectSelector": {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["edge"]}]}}),
        ),
    );
    assert!(!denied(&mut st));
    deny_all(
        &mut st,
        json!({}),
        Some(
            json!({"resourceRules": [{"apiGroups": ["g.dev"], "apiVersions": ["*"], "operations": ["UPDATE"], "resources": ["things/status"]}]}),
        ),
    );
    assert!(denied(&mut st));

    // Namespaced objects are selected by their namespace's labels.
    let ns = def(&st, "", "v1", "namespaces");
    objects::create(
        &mut st,
        &ns,
        "",
        json!({"metadata": {"name": "prod", "labels": {"env": "prod"}}}),
        &WriteOpts::default(),
    )
    .unwrap();
    objects::create(
        &mut st,
        &ns,
        "",
        json!({"metadata": {"name": "dev"}}),
        &WriteOpts::default(),
    )
    .unwrap();
    deny_all(
        &mut st,
        json!({"namespaceSelector": {"matchLabels": {"env": "prod"}}}),
        None,
    );
    let cms = def(&st, "", "v1", "configmaps");
    let cm = |n: &str| json!({"metadata": {"name": "c"}, "data": {"n": n}});
    assert_eq!(
        objects::create(&mut st, &cms, "prod", cm("1"), &opts(SITE))
            .unwrap_err()
            .code,
        422
    );
    objects::create(&mut st, &cms, "dev", cm("1"), &opts(SITE)).unwrap();
}

#[test]
fn match_conditions_skip_or_fail_by_the_failure_policy() {
    for (failure_policy, condition, outcome) in [
        ("Fail", "request.userInfo.username == 'nobody'", Ok(())),
        (
            "Fail",
            "object.spec.missing == 1",
            Err("expression 'object.spec.missing == 1' resulted in error: no such key: missing"),
        ),
        ("Ignore", "object.spec.missing == 1", Ok(())),
        // An error `||` false is still an error.
        (
            "Fail",
            "object.spec.missing == 1 || false",
            Err(
                "expression 'object.spec.missing == 1 || false' resulted in error: no such key: missing",
            ),
        ),
    ] {
        let mut st = state();
        policy(
            &mut st,
            "p",
            json!({"failurePolicy": failure_policy, "matchConstraints": status_rules(),
                   "matchConditions": [{"name": "c", "expression": condition}],
                   "validations": [{"expression": "false", "message": "denied"}]}),
        );
        binding(
            &mut st,
            "b",
            json!({"policyName": "p", "validationActions": ["Deny"]}),
        );
        let got = status(&mut st, "a", json!({"n": 1}), &opts(SITE))
            .map(|_| ())
            .map_err(|e| e.message);
        match outcome {
            Ok(()) => assert!(got.is_ok(), "{condition}: {got:?}"),
            Err(want) => {
                let e = got.unwrap_err();
                assert!(e.ends_with(&format!("denied request: {want}")), "{e}");
            }
        }
    }
    // A false condition wins over another's error.
    let mut st = state();
    policy(
        &mut st,
        "p",
        json!({"matchConstraints": status_rules(),
               "matchConditions": [{"name": "c", "expression": "object.spec.missing == 1"}, {"name": "d", "expression": "false"}],
               "validations": [{"expression": "false"}]}),
    );
    binding(
        &mut st,
        "b",
        json!({"policyName": "p", "validationActions": ["Deny"]}),
    );
    status(&mut st, "a", json!({"n": 1}), &opts(SITE)).unwrap();
}

#[test]
fn messages_reasons_and_errors_follow_the_validator() {
    let deny = |validation: Value, failure_policy: &str| {
        let mut st = state();
        policy(
            &mut st,
            "p",
            json!({"failurePolicy": failure_policy, "matchConstraints": status_rules(), "validations": [validation]}),
        );
        binding(
            &mut st,
            "b",
            json!({"policyName": "p", "validationActions": ["Deny"]}),
        );
        status(&mut st, "a", json!({"n": 1}), &opts(SITE))
            .err()
            .map(|e| {
                let msg = e
                    .message
                    .split("denied request: ")
                    .nth(1)
                    .unwrap()
                    .to_string();
                (e.code, e.reason, msg)
            })
    };
    let inv = |m: &str| Some((422, "Invalid".to_string(), m.to_string()));
    assert_eq!(
        deny(
            json!({"expression": " object.spec.mode == 'Pull' "}),
            "Fail"
        ),
        inv("failed expression: object.spec.mode == 'Pull'")
    );
    assert_eq!(
        deny(json!({"expression": "false", "message": "  no  "}), "Fail"),
        inv("no")
    );
    assert_eq!(
        deny(
            json!({"expression": "false", "message": "m", "messageExpression": "'mode ' + object.spec.mode"}),
            "Fail"
        ),
        inv("mode Push")
    );
    // A messageExpression that fails, is not a string, is blank or spans
    // lines falls back to message.
    for me in ["object.spec.nope", "1", "'  '", "'a\\nb'"] {
        assert_eq!(
            deny(
                json!({"expression": "false", "message": "m", "messageExpression": me}),
                "Fail"
            ),
            inv("m"),
            "{me}"
        );
    }
    assert_eq!(
        deny(
            json!({"expression": "false", "reason": "Unauthorized"}),
            "Fail"
        ),
        Some((
            401,
            "Unauthorized".to_string(),
            "failed expression: false".to_string()
        ))
    );
    assert_eq!(
        deny(
            json!({"expression": "false", "reason": "RequestEntityTooLarge"}),
            "Fail"
        )
        .unwrap()
        .0,
        413
    );
    // A runtime error denies under Fail (with the default reason) and
    // admits under Ignore; a non-bool result denies.
    assert_eq!(
        deny(
            json!({"expression": "object.spec.nope == 1", "reason": "Forbidden"}),
            "Fail"
        ),
        inv("expression 'object.spec.nope == 1' resulted in error: no such key: nope")
    );
    assert_eq!(
        deny(json!({"expression": "object.spec.nope == 1"}), "Ignore"),
        None
    );
    assert_eq!(
        deny(json!({"expression": "'yes'"}), "Ignore"),
        inv("failed expression: 'yes'")
    );
}

#[test]
fn variables_are_lazy_and_see_only_earlier_variables() {
    let mut st = state();
    policy(
        &mut st,
        "p",
        json!({"matchConstraints": status_rules(),
               "variables": [
                   {"name": "broken", "expression": "object.spec.nope"},
                   {"name": "mode", "expression": "object.spec.mode"},
                   {"name": "push", "expression": "variables.mode == 'Push'"}],
               "validations": [{"expression": "!variables.push", "message": "push sites may not"}]}),
    );
    binding(
        &mut st,
        "b",
        json!({"policyName": "p", "validationActions": ["Deny"]}),
    );
    let e = status(&mut st, "a", json!({"n": 1}), &opts(SITE)).unwrap_err();
    assert!(
        e.message.ends_with("denied request: push sites may not"),
        "{}",
        e.message
    );
    policy(
        &mut st,
        "p",
        json!({"matchConstraints": status_rules(),
               "variables": [{"name": "broken", "expression": "object.spec.nope"}],
               "validations": [{"expression": "variables.broken == 1"}]}),
    );
    let e = status(&mut st, "a", json!({"n": 2}), &opts(SITE)).unwrap_err();
    assert!(
        e.message.ends_with("denied request: expression 'variables.broken == 1' resulted in error: no such key: nope"),
        "{}",
        e.message
    );
}

#[test]
fn warn_and_audit_actions_do_not_deny() {
    let mut st = state();
    policy(
        &mut st,
        "p",
        json!({"matchConstraints": status_rules(), "validations": [{"expression": "false", "message": "careful"}]}),
    );
    binding(
        &mut st,
        "b",
        json!({"policyName": "p", "validationActions": ["Warn", "Audit"]}),
    );
    let o = opts(SITE);
    status(&mut st, "a", json!({"n": 1}), &o).unwrap();
    assert_eq!(
        o.warnings.borrow().as_slice(),
        ["Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': careful"]
    );
    // A binding of a policy that does not exist, and a policy without a
    // binding, change nothing.
    binding(
        &mut st,
        "b",
        json!({"policyName": "missing", "validationActions": ["Deny"]}),
    );
    status(&mut st, "a", json!({"n": 2}), &opts(SITE)).unwrap();
}

#[test]
fn params_come_from_the_binding_param_ref() {
    let mut st = state();
    let ns = def(&st, "", "v1", "namespaces");
    objects::create(
        &mut st,
        &ns,
        "",
        json!({"metadata": {"name": "cfg"}}),
        &WriteOpts::default(),
    )
    .unwrap();
    let cms = def(&st, "", "v1", "configmaps");
    objects::create(
        &mut st,
        &cms,
        "cfg",
        json!({"metadata": {"name": "limits"}, "data": {"mode": "Pull"}}),
        &WriteOpts::default(),
    )
    .unwrap();
    policy(
        &mut st,
        "p",
        json!({"matchConstraints": status_rules(), "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
               "validations": [{"expression": "object.spec.mode == params.data.mode", "messageExpression": "'mode must be ' + params.data.mode"}]}),
    );
    let bind = |st: &mut State, name: &str, action: &str| {
        binding(
            st,
            "b",
            json!({"policyName": "p", "validationActions": ["Deny"],
                   "paramRef": {"name": name, "namespace": "cfg", "parameterNotFoundAction": action}}),
        );
    };
    bind(&mut st, "limits", "Deny");
    let e = status(&mut st, "a", json!({"n": 1}), &opts(SITE)).unwrap_err();
    assert!(
        e.message.ends_with("denied request: mode must be Pull"),
        "{}",
        e.message
    );
    bind(&mut st, "other", "Allow");
    status(&mut st, "a", json!({"n": 2}), &opts(SITE)).unwrap();
    bind(&mut st, "other", "Deny");
    let e = status(&mut st, "a", json!({"n": 3}), &opts(SITE)).unwrap_err();
    assert!(
        e.message.ends_with("with binding 'b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"),
        "{}",
        e.message
    );
}

#[test]
fn create_and_delete_are_admitted_with_object_and_old_object() {
    let mut st = state();
    policy(
        &mut st,
        "p",
        json!({"matchConstraints": {"resourceRules": [{"apiGroups": ["g.dev"], "apiVersions": ["v1"], "operations": ["CREATE", "DELETE"], "resources": ["things"]}]},
               "validations": [
                   {"expression": "request.operation != 'CREATE' || object.metadata.name.startsWith('ok-')", "message": "bad name"},
                   {"expression": "request.operation != 'DELETE' || (object == null && !has(oldObject.metadata.labels))", "message": "labelled things stay"}]}),
    );
    binding(
        &mut st,
        "b",
        json!({"policyName": "p", "validationActions": ["Deny"]}),
    );
    let things = def(&st, "g.dev", "v1", "things");
    let e = objects::create(
        &mut st,
        &things,
        "",
        json!({"metadata": {"name": "b"}}),
        &opts(SITE),
    )
    .unwrap_err();
    assert_eq!(
        e.message,
        "things.g.dev \"b\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: bad name"
    );
    objects::create(
        &mut st,
        &things,
        "",
        json!({"metadata": {"name": "ok-b"}}),
        &opts(SITE),
    )
    .unwrap();
    let key = |n: &str| (String::new(), n.to_string());
    let e = objects::delete(
        &mut st,
        &things,
        &key("a"),
        &Preconditions::default(),
        &opts(SITE),
    );
    assert!(e.is_err_and(|e| e.message.ends_with("labelled things stay")));
    assert!(
        objects::delete(
            &mut st,
            &things,
            &key("ok-b"),
            &Preconditions::default(),
            &opts(SITE)
        )
        .is_ok()
    );
}

#[test]
fn a_changed_policy_is_recompiled() {
    let mut st = state();
    policy(
        &mut st,
        "p",
        json!({"matchConstraints": status_rules(), "validations": [{"expression": "true"}]}),
    );
    binding(
        &mut st,
        "b",
        json!({"policyName": "p", "validationActions": ["Deny"]}),
    );
    status(&mut st, "a", json!({"n": 1}), &opts(SITE)).unwrap();
    policy(
        &mut st,
        "p",
        json!({"matchConstraints": status_rules(), "validations": [{"expression": "false"}]}),
    );
    assert!(status(&mut st, "a", json!({"n": 2}), &opts(SITE)).is_err());
}

#[test]
fn policies_are_defaulted_and_validated_on_write() {
    let mut st = state();
    let stored = put(
        &mut st,
        POLICIES,
        json!({"metadata": {"name": "p"}, "spec": {"matchConstraints": status_rules(), "validations": [{"expression": "true"}]}}),
    )
    .unwrap();
    assert_eq!(stored["spec"]["failurePolicy"], "Fail");
    assert_eq!(stored["metadata"]["generation"], 1);
    let mc = &stored["spec"]["matchConstraints"];
    assert_eq!(
        (
            &mc["matchPolicy"],
            &mc["namespaceSelector"],
            &mc["objectSelector"]
        ),
        (&json!("Equivalent"), &json!({}), &json!({}))
    );
    assert_eq!(mc["resourceRules"][0]["scope"], "*");

    let invalid = |plural: &str, spec: Value| -> String {
        let mut st = state();
        put(
            &mut st,
            plural,
            json!({"metadata": {"name": "x"}, "spec": spec}),
        )
        .unwrap_err()
        .message
    };
    assert_eq!(
        invalid(POLICIES, json!({})),
        "ValidatingAdmissionPolicy.admissionregistration.k8s.io \"x\" is invalid: [spec.matchConstraints: Required value, spec.validations: Required value: validations or auditAnnotations must contain at least one item, spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item]"
    );
    assert_eq!(
        invalid(
            POLICIES,
            json!({"failurePolicy": "Maybe", "matchConstraints": {"resourceRules": [{"operations": ["PATCH"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}]}, "validations": [{"expression": "self.x == 1", "reason": "Teapot"}]})
        ),
        "ValidatingAdmissionPolicy.admissionregistration.k8s.io \"x\" is invalid: [spec.failurePolicy: Unsupported value: \"Maybe\": supported values: \"Fail\", \"Ignore\", spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value: \"PATCH\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\", spec.validations[0].expression: Invalid value: \"self.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'self' (in container ''), spec.validations[0].reason: Unsupported value: \"Teapot\": supported values: \"Forbidden\", \"Invalid\", \"RequestEntityTooLarge\", \"Unauthorized\"]"
    );
    let e = invalid(
        POLICIES,
        json!({"matchConstraints": status_rules(), "variables": [{"name": "a", "expression": "variables.b"}, {"name": "b", "expression": "1 +"}], "validations": [{"expression": "true"}]}),
    );
    assert!(e.contains("spec.variables[0].expression: Invalid value: \"variables.b\": compilation failed: ERROR: <input>:1:11: undefined field 'b'"), "{e}");
    assert!(e.contains("spec.variables[1].expression: Invalid value: \"1 +\": compilation failed: ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>' expecting <expression>"), "{e}");
    assert_eq!(
        invalid(
            BINDINGS,
            json!({"validationActions": ["Deny", "Warn", "Deny", "Block"]})
        ),
        "ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io \"x\" is invalid: [spec.policyName: Required value, spec.validationActions[2]: Duplicate value: \"Deny\", spec.validationActions[3]: Unsupported value: \"Block\": supported values: \"Audit\", \"Deny\", \"Warn\", spec.validationActions: Invalid value: [\"Deny\",\"Warn\",\"Deny\",\"Block\"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)]"
    );
    assert!(invalid(BINDINGS, json!({"policyName": "p"})).ends_with(
        "spec.validationActions: Required value: at least one validation action is required"
    ));
}

mod any_policy {
    use super::*;
    use proptest::prelude::*;

    /// JSON built from the words a policy or binding uses, so the values
    /// land where the code looks.
    fn any_spec() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            prop::sample::select(vec![
                "*",
                "Fail",
                "Ignore",
                "Deny",
                "Warn",
                "Audit",
                "UPDATE",
                "CREATE",
                "things",
                "things/status",
                "*/*",
                "g.dev",
                "v1",
                "p",
                "In",
                "Exists",
                "tier",
                "Forbidden",
                "true",
                "false",
                "object.spec.mode == 'Push'",
                "variables.v",
                "params.data.x",
                "request.userInfo.username.startsWith('system:')",
                "1 +",
                "has(object.status)",
            ])
            .prop_map(Value::from),
        ];
        let keys = prop::sample::select(vec![
            "failurePolicy",
            "matchConstraints",
            "resourceRules",
            "excludeResourceRules",
            "operations",
            "apiGroups",
            "apiVersions",
            "resources",
            "scope",
            "resourceNames",
            "namespaceSelector",
            "objectSelector",
            "matchLabels",
            "matchExpressions",
            "key",
            "operator",
            "values",
            "matchConditions",
            "name",
            "expression",
            "variables",
            "validations",
            "message",
            "messageExpression",
            "reason",
            "auditAnnotations",
            "valueExpression",
            "paramKind",
            "apiVersion",
            "kind",
            "policyName",
            "validationActions",
            "matchResources",
            "paramRef",
            "namespace",
            "selector",
            "parameterNotFoundAction",
        ]);
        leaf.prop_recursive(5, 64, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map(keys.clone(), inner, 0..6).prop_map(|m| Value::Object(
                    m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
                )),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

        /// Whatever a client writes as a policy and binding is stored or
        /// refused with causes, and a write after it is admitted or
        /// denied: never a panic.
        #[test]
        fn any_policy_is_refused_or_enforced_without_panicking(policy_spec in any_spec(), binding_spec in any_spec()) {
            let mut st = state();
            let _ = put(&mut st, POLICIES, json!({"metadata": {"name": "p"}, "spec": policy_spec}));
            let _ = put(&mut st, BINDINGS, json!({"metadata": {"name": "b"}, "spec": binding_spec}));
            let _ = status(&mut st, "a", json!({"n": 1}), &opts(SITE));
            let things = def(&st, "g.dev", "v1", "things");
            let _ = objects::delete(&mut st, &things, &(String::new(), "a".into()), &Preconditions::default(), &opts(SITE));
        }
    }
}
