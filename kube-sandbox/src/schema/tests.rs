//! Unit tests of schema compilation, pruning, defaulting and validation.

use super::*;
use serde_json::json;

/// A FederatedCluster-like schema (docs/architecture.md#components) with every keyword under test.
fn fc_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["region"],
                "x-kubernetes-validations": [{
                    "rule": "self.mode == 'Pull' ? has(self.kubeconfigSecretRef) : !has(self.kubeconfigSecretRef)",
                    "message": "kubeconfigSecretRef is required in Pull mode and forbidden in Push mode"
                }],
                "properties": {
                    "displayName": {"type": "string", "maxLength": 5, "minLength": 2},
                    "mode": {"type": "string", "enum": ["Push", "Pull"], "default": "Push"},
                    "region": {"type": "string", "pattern": "^[a-z0-9-]+$"},
                    "tier": {"type": "string", "enum": ["critical", "standard", "non-critical"], "default": "standard"},
                    "capabilities": {"type": "array", "maxItems": 3, "minItems": 1,
                                     "x-kubernetes-list-type": "set",
                                     "items": {"type": "string", "enum": ["monitoring", "remediation", "chaos-engineering"]},
                                     "default": ["monitoring"]},
                    "heartbeatIntervalSeconds": {"type": "integer", "minimum": 10, "maximum": 3600, "default": 30},
                    "maxConcurrentRemediations": {"type": "integer", "minimum": 0, "exclusiveMaximum": true, "maximum": 100, "default": 3},
                    "ratio": {"type": "number", "minimum": 0.5, "exclusiveMinimum": true},
                    "port": {"x-kubernetes-int-or-string": true},
                    "kubeconfigSecretRef": {"type": "object",
                        "properties": {"namespace": {"type": "string"}, "name": {"type": "string"},
                                       "key": {"type": "string", "default": "kubeconfig"}}},
                    "labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 3}, "maxProperties": 2},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                              "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}},
                    "when": {"type": "string", "format": "date-time"},
                    "note": {"type": "string", "nullable": true},
                    "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
                              "items": {"type": "object", "properties": {"type": {"type": "string"},
                                                                          "n": {"type": "integer", "default": 1}}}}
                }
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
        }
    })
}

fn schema() -> Schema {
    Schema::new(&fc_schema()).expect("valid schema")
}

fn obj(spec: Value) -> Value {
    json!({"apiVersion": "federation.kubectl-fleet.dev/v1alpha1", "kind": "FederatedCluster",
           "metadata": {"name": "site-a"}, "spec": spec})
}

/// (reason, field, message) of a cause.
type Row = (String, String, String);

fn messages(causes: &[Cause]) -> Vec<Row> {
    causes
        .iter()
        .map(|c| (c.reason.clone(), c.field.clone(), c.message.clone()))
        .collect()
}

fn one(reason: &str, field: &str, msg: &str) -> Vec<Row> {
    vec![(reason.into(), field.into(), msg.into())]
}

#[test]
fn prune_drops_unknown_fields_and_keeps_root_meta() {
    let s = schema();
    let mut o = obj(
        json!({"region": "eu", "bogus": 1, "kubeconfigSecretRef": {"name": "x", "zzz": 2},
                           "extra": {"free": {"deep": 1}, "known": {"a": "x", "b": "pruned"}},
                           "labels": {"a": "b"}, "items": [{"type": "A", "junk": true}]}),
    );
    o["metadata"]["annotations"] = json!({"k": "v"});
    o["metadata"]["notObjectMeta"] = json!(1);
    o["unknownTop"] = json!(true);
    o["status"] = json!({"anything": {"goes": 1}});
    s.prune(&mut o);
    assert_eq!(
        o,
        json!({"apiVersion": "federation.kubectl-fleet.dev/v1alpha1", "kind": "FederatedCluster",
               "metadata": {"name": "site-a", "annotations": {"k": "v"}},
               "spec": {"region": "eu", "kubeconfigSecretRef": {"name": "x"},
                        "extra": {"free": {"deep": 1}, "known": {"a": "x"}},
                        "labels": {"a": "b"}, "items": [{"type": "A"}]},
               "status": {"anything": {"goes": 1}}})
    );
}

#[test]
fn prune_keeps_meta_fields_of_embedded_resources_only() {
    let s = Schema::new(&json!({"type": "object", "properties": {
        "tmpl": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}},
        "plain": {"type": "object", "properties": {}}}}))
    .unwrap();
    let mut o = json!({"tmpl": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {}, "z": 1},
                       "plain": {"apiVersion": "v1", "kind": "Pod"}});
    s.prune(&mut o);
    assert_eq!(
        o,
        json!({"tmpl": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {}}, "plain": {}})
    );
}

#[test]
fn defaults_apply_like_the_real_server() {
    let s = schema();
    let mut o = obj(
        json!({"region": "eu", "kubeconfigSecretRef": {"name": "x"}, "items": [{"type": "A"}, {"type": "B", "n": 5}],
                           "tier": null, "note": null, "displayName": null}),
    );
    s.apply_defaults(&mut o);
    assert_eq!(
        o["spec"],
        json!({"region": "eu", "mode": "Push", "tier": "standard", "capabilities": ["monitoring"],
               "heartbeatIntervalSeconds": 30, "maxConcurrentRemediations": 3, "note": null,
               "kubeconfigSecretRef": {"name": "x", "key": "kubeconfig"},
               "items": [{"type": "A", "n": 1}, {"type": "B", "n": 5}]})
    );
    // No spec: nothing under it is created.
    let mut bare = json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "a"}});
    s.apply_defaults(&mut bare);
    assert_eq!(
        bare,
        json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "a"}})
    );
    // An absent object without a default is not created for its children's defaults.
    let mut o = obj(json!({"region": "eu"}));
    s.apply_defaults(&mut o);
    assert!(o["spec"].get("kubeconfigSecretRef").is_none());
}

#[test]
fn defaults_descend_into_defaulted_objects() {
    let s = Schema::new(
        &json!({"type": "object", "properties": {"a": {"type": "object", "default": {},
        "properties": {"b": {"type": "integer", "default": 7}}}}}),
    )
    .unwrap();
    let mut o = json!({});
    s.apply_defaults(&mut o);
    assert_eq!(o, json!({"a": {"b": 7}}));
}

#[test]
fn a_valid_object_has_no_causes() {
    let s = schema();
    let mut o = obj(
        json!({"region": "us-east-1", "capabilities": ["monitoring", "remediation"], "port": "http",
                           "when": "2026-01-02T03:04:05Z", "ratio": 0.6, "heartbeatIntervalSeconds": 10.0,
                           "labels": {"a": "abc"}}),
    );
    s.apply_defaults(&mut o);
    assert_eq!(s.validate(&o, None), vec![]);
}

#[test]
fn validation_causes_match_the_real_wording() {
    let s = schema();
    let cases: Vec<(Value, Vec<Row>)> = vec![
        (
            json!({}),
            one("FieldValueRequired", "spec.region", "Required value"),
        ),
        (
            json!({"region": "eu", "tier": "gold"}),
            one(
                "FieldValueNotSupported",
                "spec.tier",
                "Unsupported value: \"gold\": supported values: \"critical\", \"standard\", \"non-critical\"",
            ),
        ),
        (
            json!({"region": "eu", "heartbeatIntervalSeconds": "string"}),
            one(
                "FieldValueTypeInvalid",
                "spec.heartbeatIntervalSeconds",
                "Invalid value: \"string\": spec.heartbeatIntervalSeconds in body must be of type integer: \"string\"",
            ),
        ),
        (
            json!({"region": "eu", "heartbeatIntervalSeconds": 5}),
            one(
                "FieldValueInvalid",
                "spec.heartbeatIntervalSeconds",
                "Invalid value: 5: spec.heartbeatIntervalSeconds in body should be greater than or equal to 10",
            ),
        ),
        (
            json!({"region": "eu", "heartbeatIntervalSeconds": 3601}),
            one(
                "FieldValueInvalid",
                "spec.heartbeatIntervalSeconds",
                "Invalid value: 3601: spec.heartbeatIntervalSeconds in body should be less than or equal to 3600",
            ),
        ),
        (
            json!({"region": "eu", "heartbeatIntervalSeconds": 12.5}),
            one(
                "FieldValueTypeInvalid",
                "spec.heartbeatIntervalSeconds",
                "Invalid value: \"number\": spec.heartbeatIntervalSeconds in body must be of type integer: \"number\"",
            ),
        ),
        (
            json!({"region": "eu", "maxConcurrentRemediations": 100}),
            one(
                "FieldValueInvalid",
                "spec.maxConcurrentRemediations",
                "Invalid value: 100: spec.maxConcurrentRemediations in body should be less than 100",
            ),
        ),
        (
            json!({"region": "eu", "ratio": 0.5}),
            one(
                "FieldValueInvalid",
                "spec.ratio",
                "Invalid value: 0.5: spec.ratio in body should be greater than 0.5",
            ),
        ),
        (
            json!({"region": "eu", "capabilities": ["monitoring", "remediation", "chaos-engineering", "monitoring"]}),
            vec![
                (
                    "FieldValueTooMany".into(),
                    "spec.capabilities".into(),
                    "Too many: 4: must have at most 3 items".into(),
                ),
                (
                    "FieldValueDuplicate".into(),
                    "spec.capabilities[3]".into(),
                    "Duplicate value: \"monitoring\"".into(),
                ),
            ],
        ),
        (
            json!({"region": "eu", "capabilities": []}),
            one(
                "FieldValueInvalid",
                "spec.capabilities",
                "Invalid value: 0: spec.capabilities in body should have at least 1 items",
            ),
        ),
        (
            json!({"region": "eu", "capabilities": ["flying"]}),
            one(
                "FieldValueNotSupported",
                "spec.capabilities[0]",
                "Unsupported value: \"flying\": supported values: \"monitoring\", \"remediation\", \"chaos-engineering\"",
            ),
        ),
        (
            json!({"region": "eu", "displayName": "toolong"}),
            one(
                "FieldValueTooLong",
                "spec.displayName",
                "Too long: may not be more than 5 bytes",
            ),
        ),
        (
            json!({"region": "eu", "displayName": "a"}),
            one(
                "FieldValueInvalid",
                "spec.displayName",
                "Invalid value: \"a\": spec.displayName in body should be at least 2 chars long",
            ),
        ),
        (
            json!({"region": "EU"}),
            one(
                "FieldValueInvalid",
                "spec.region",
                "Invalid value: \"EU\": spec.region in body should match '^[a-z0-9-]+$'",
            ),
        ),
        (
            json!({"region": "eu", "port": true}),
            one(
                "FieldValueTypeInvalid",
                "spec.port",
                "Invalid value: \"boolean\": spec.port in body must be of type integer,string: \"boolean\"",
            ),
        ),
        (
            json!({"region": "eu", "when": "yesterday"}),
            one(
                "FieldValueTypeInvalid",
                "spec.when",
                "Invalid value: \"yesterday\": spec.when in body must be of type date-time: \"yesterday\"",
            ),
        ),
        (
            json!({"region": "eu", "labels": {"a": "toolong"}}),
            one(
                "FieldValueTooLong",
                "spec.labels.a",
                "Too long: may not be more than 3 bytes",
            ),
        ),
        (
            json!({"region": "eu", "labels": {"a": "1", "b": "2", "c": "3"}}),
            one(
                "FieldValueTooMany",
                "spec.labels",
                "Too many: 3: must have at most 2 items",
            ),
        ),
        (
            json!({"region": "eu", "items": [{"type": "A"}, {"type": "A"}]}),
            one(
                "FieldValueDuplicate",
                "spec.items[1]",
                "Duplicate value: {\"type\":\"A\"}",
            ),
        ),
        (
            json!("flat"),
            one(
                "FieldValueTypeInvalid",
                "spec",
                "Invalid value: \"string\": spec in body must be of type object: \"string\"",
            ),
        ),
    ];
    for (spec, want) in cases {
        let mut o = obj(spec.clone());
        s.apply_defaults(&mut o);
        let got: Vec<_> = messages(&s.validate(&o, None))
            .into_iter()
            .filter(|(_, f, _)| f != "<nil>")
            .collect();
        assert_eq!(got, want, "spec {spec}");
    }
}

#[test]
fn nulls_that_reach_validation_are_type_errors() {
    let s = schema();
    let o = obj(json!({"region": "eu", "displayName": null, "note": null}));
    assert_eq!(
        messages(&s.validate(&o, None))[0],
        (
            "FieldValueTypeInvalid".into(),
            "spec.displayName".into(),
            "Invalid value: \"null\": spec.displayName in body must be of type string: \"null\""
                .into()
        )
    );
}

#[test]
fn cel_rules_are_evaluated_with_the_real_wording() {
    let s = schema();
    let msg = "kubeconfigSecretRef is required in Pull mode and forbidden in Push mode";
    let bad_pull = obj(json!({"region": "eu", "mode": "Pull"}));
    assert_eq!(
        messages(&s.validate(&bad_pull, None)),
        one(
            "FieldValueInvalid",
            "spec",
            &format!("Invalid value: {msg}")
        )
    );
    let bad_push =
        obj(json!({"region": "eu", "mode": "Push", "kubeconfigSecretRef": {"name": "x"}}));
    assert_eq!(
        messages(&s.validate(&bad_push, None)),
        one(
            "FieldValueInvalid",
            "spec",
            &format!("Invalid value: {msg}")
        )
    );
    let good = obj(json!({"region": "eu", "mode": "Pull", "kubeconfigSecretRef": {"name": "x"}}));
    assert_eq!(s.validate(&good, None), vec![]);
}

#[test]
fn blocking_errors_skip_cel_with_the_real_cause() {
    let s = schema();
    let o = obj(json!({"mode": "Pull"}));
    assert_eq!(
        messages(&s.validate(&o, None)),
        vec![
            ("FieldValueRequired".into(), "spec.region".into(), "Required value".into()),
            ("FieldValueInvalid".into(), "<nil>".into(),
             "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation".into()),
        ]
    );
}

#[test]
fn cel_rule_options_fieldpath_reason_message_expression_and_old_self() {
    let s = Schema::new(&json!({"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.a > 0", "fieldPath": ".a", "reason": "FieldValueForbidden", "message": "a must be positive"},
            {"rule": "self.b.size() < 3", "messageExpression": "'b is too long: ' + string(self.b.size())"},
            {"rule": "self.c == oldSelf.c", "message": "c is immutable"},
            {"rule": "!has(self.d) || self.d != 'x'"}],
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "string"},
                       "d": {"type": "string", "x-kubernetes-validations": [{"rule": "self != 'y'", "reason": "FieldValueRequired"}]}}}}}))
    .unwrap();
    let o = json!({"spec": {"a": 0, "b": "long", "c": "new", "d": "x"}});
    let old = json!({"spec": {"a": 1, "b": "", "c": "old"}});
    assert_eq!(
        messages(&s.validate(&o, Some(&old))),
        vec![
            (
                "FieldValueForbidden".into(),
                "spec.a".into(),
                "Forbidden: a must be positive".into()
            ),
            (
                "FieldValueInvalid".into(),
                "spec".into(),
                "Invalid value: b is too long: 4".into()
            ),
            (
                "FieldValueInvalid".into(),
                "spec".into(),
                "Invalid value: c is immutable".into()
            ),
            (
                "FieldValueInvalid".into(),
                "spec".into(),
                "Invalid value: failed rule: !has(self.d) || self.d != 'x'".into()
            ),
        ]
    );
    // Without an old object the transition rule is not run.
    assert_eq!(s.validate(&o, None).len(), 3);
    // Scalar rules show the value; reason Required.
    let o = json!({"spec": {"a": 1, "b": "", "c": "x", "d": "y"}});
    assert_eq!(
        messages(&s.validate(&o, None)),
        one(
            "FieldValueRequired",
            "spec.d",
            "Required value: failed rule: self != 'y'"
        )
    );
}

#[test]
fn cel_runtime_errors_and_root_rules() {
    let s = Schema::new(&json!({"type": "object",
        "x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('site-')"}, {"rule": "self.spec.nope == 1"}],
        "properties": {"spec": {"type": "object"}}}))
    .unwrap();
    let o = json!({"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "hub", "uid": "u"}, "spec": {}});
    assert_eq!(
        messages(&s.validate(&o, None)),
        vec![
            (
                "FieldValueInvalid".into(),
                "<nil>".into(),
                "Invalid value: failed rule: self.metadata.name.startsWith('site-')".into()
            ),
            (
                "FieldValueInvalid".into(),
                "<nil>".into(),
                "Invalid value: \"object\": no such key: nope evaluating rule: self.spec.nope == 1"
                    .into()
            ),
        ]
    );
}

#[test]
fn old_self_correlates_through_keyed_lists_only() {
    let s = Schema::new(&json!({"type": "object", "properties": {
        "keyed": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
                  "items": {"type": "object", "x-kubernetes-validations": [{"rule": "self.v == oldSelf.v", "message": "immutable"}],
                            "properties": {"k": {"type": "string"}, "v": {"type": "string"}}}},
        "atomic": {"type": "array",
                   "items": {"type": "object", "x-kubernetes-validations": [{"rule": "self.v == oldSelf.v", "message": "immutable"}],
                             "properties": {"k": {"type": "string"}, "v": {"type": "string"}}}}}}))
    .unwrap();
    let old = json!({"keyed": [{"k": "a", "v": "1"}], "atomic": [{"k": "a", "v": "1"}]});
    let new = json!({"keyed": [{"k": "b", "v": "9"}, {"k": "a", "v": "2"}], "atomic": [{"k": "a", "v": "2"}]});
    assert_eq!(
        messages(&s.validate(&new, Some(&old))),
        one("FieldValueInvalid", "keyed[1]", "Invalid value: immutable")
    );
}

#[test]
fn schema_compile_errors() {
    let cases = [
        (
            json!({"type": "object", "properties": {"a": {}}}),
            "openAPIV3Schema.properties[a].type",
            "Required value: must not be empty for specified object fields",
        ),
        (
            json!({"type": "string"}),
            "openAPIV3Schema.type",
            "Invalid value: \"string\": must be object at the root",
        ),
        (
            json!({"type": "object", "properties": {"l": {"type": "array", "uniqueItems": true, "items": {"type": "string"}}}}),
            "openAPIV3Schema.properties[l].uniqueItems",
            "Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ),
        (
            json!({"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object"}}}}),
            "openAPIV3Schema.properties[l].x-kubernetes-list-map-keys",
            "Required value: must not be empty if x-kubernetes-list-type is map",
        ),
        (
            json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.a =="}]}),
            "openAPIV3Schema.x-kubernetes-validations[0].rule",
            "Invalid value: \"self.a ==\": compilation failed: ERROR: <input>:1:10: Syntax error: mismatched input '<EOF>' expecting <expression>",
        ),
        (
            json!({"type": "object", "x-kubernetes-validations": [{"rule": "true", "reason": "Nope"}]}),
            "openAPIV3Schema.x-kubernetes-validations[0].reason",
            "Unsupported value: \"Nope\": supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\"",
        ),
    ];
    for (s, field, msg) in cases {
        let errs = Schema::new(&s).unwrap_err();
        assert_eq!(errs.len(), 1, "{s}: {errs:?}");
        assert_eq!(
            (errs[0].field.as_str(), errs[0].message.as_str()),
            (field, msg),
            "{s}"
        );
    }
    assert!(Schema::new(&fc_schema()).is_ok());
    assert!(Schema::new(&json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                                "properties": {"x": {"x-kubernetes-preserve-unknown-fields": true}}})).is_ok());
}

fn crd() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "federatedclusters.federation.kubectl-fleet.dev"},
           "spec": {"group": "federation.kubectl-fleet.dev", "scope": "Cluster",
                    "names": {"plural": "federatedclusters", "singular": "federatedcluster", "kind": "FederatedCluster",
                              "listKind": "FederatedClusterList", "shortNames": ["fc", "fcluster"], "categories": ["fleet"]},
                    "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                                  "schema": {"openAPIV3Schema": fc_schema()},
                                  "additionalPrinterColumns": [{"name": "Mode", "type": "string", "jsonPath": ".spec.mode"}]}]}})
}

#[test]
fn a_valid_crd_passes() {
    assert_eq!(validate_crd(&crd()), vec![]);
}

#[test]
fn crd_validation_messages() {
    let versions_err = |c: &Value| {
        format!(
            "Invalid value: {}: must have exactly one version marked as storage version",
            c["spec"]["versions"]
        )
    };
    type Edit = fn(&mut Value);
    let cases: Vec<(Edit, &str, String)> = vec![
        (|c| c["metadata"]["name"] = json!("wrong.federation.kubectl-fleet.dev"), "metadata.name",
         "Invalid value: \"wrong.federation.kubectl-fleet.dev\": must be spec.names.plural+\".\"+spec.group".into()),
        (|c| c["spec"]["scope"] = json!("Global"), "spec.scope",
         "Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\"".into()),
        (|c| c["spec"]["scope"] = json!(""), "spec.scope", "Required value".into()),
        (|c| c["spec"]["versions"][0]["storage"] = json!(false), "spec.versions", String::new()),
        (|c| c["spec"]["versions"][0]["name"] = json!("V1"), "spec.versions[0].name",
         "Invalid value: \"V1\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".into()),
        (|c| c["spec"]["names"]["listKind"] = json!("FederatedCluster"), "spec.names.listKind",
         "Invalid value: \"FederatedCluster\": kind and listKind may not be the same".into()),
        (|c| c["spec"]["names"]["shortNames"] = json!(["FC"]), "spec.names.shortNames[0]",
         "Invalid value: \"FC\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".into()),
        (|c| c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["x"] = json!({}),
         "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[x].type",
         "Required value: must not be empty for specified object fields".into()),
        (|c| c["spec"]["versions"][0]["additionalPrinterColumns"][0]["type"] = json!("text"),
         "spec.versions[0].additionalPrinterColumns[0].type",
         "Invalid value: \"text\": must be one of array,boolean,date,integer,number,object,string".into()),
        (|c| { c["spec"]["versions"][0].as_object_mut().unwrap().remove("schema"); },
         "spec.versions[0].schema.openAPIV3Schema", "Required value".into()),
    ];
    for (edit, field, msg) in cases {
        let mut c = crd();
        edit(&mut c);
        let msg = if msg.is_empty() {
            versions_err(&c)
        } else {
            msg
        };
        let errs = validate_crd(&c);
        assert!(
            errs.iter().any(|e| e.field == field && e.message == msg),
            "want {field}: {msg}\ngot {errs:?}"
        );
    }
    let mut c = crd();
    c["spec"]["names"] = json!({"plural": "federatedclusters"});
    let fields: Vec<String> = validate_crd(&c).into_iter().map(|e| e.field).collect();
    assert_eq!(
        fields,
        [
            "spec.names.singular",
            "spec.names.kind",
            "spec.names.listKind"
        ]
    );
    let mut c = crd();
    let v = c["spec"]["versions"][0].clone();
    c["spec"]["versions"] = json!([v.clone(), v]);
    let fields: Vec<String> = validate_crd(&c).into_iter().map(|e| e.field).collect();
    assert_eq!(fields, ["spec.versions", "spec.versions"]);
}

#[test]
fn go_float_formatting() {
    let cases = [
        (10.0, "10"),
        (0.5, "0.5"),
        (1e6, "1e+06"),
        (123456.0, "123456"),
        (1e-5, "1e-05"),
        (0.0001, "0.0001"),
        (-2.5, "-2.5"),
        (1.5e21, "1.5e+21"),
    ];
    for (f, want) in cases {
        assert_eq!(go_float(f), want);
    }
}

#[test]
fn unchanged_invalid_values_are_ratcheted_on_update() {
    let s = schema();
    let mut old = obj(
        json!({"region": "eu", "tier": "gold", "heartbeatIntervalSeconds": 5,
                             "items": [{"type": "A"}, {"type": "A"}]}),
    );
    s.apply_defaults(&mut old);
    // Only the display name changes: the stored invalid values are let through.
    let mut new = old.clone();
    new["spec"]["displayName"] = json!("ok");
    assert_eq!(s.validate(&new, Some(&old)), vec![]);
    // Changing an invalid value to another invalid one is reported.
    new["spec"]["heartbeatIntervalSeconds"] = json!(6);
    assert_eq!(
        messages(&s.validate(&new, Some(&old))),
        one(
            "FieldValueInvalid",
            "spec.heartbeatIntervalSeconds",
            "Invalid value: 6: spec.heartbeatIntervalSeconds in body should be greater than or equal to 10"
        )
    );
    // A create validates everything, duplicates in keyed lists included.
    let fields: Vec<String> = s
        .validate(&old, None)
        .into_iter()
        .map(|c| c.field)
        .collect();
    assert_eq!(
        fields,
        [
            "spec.heartbeatIntervalSeconds",
            "spec.tier",
            "spec.items[1]",
            "<nil>"
        ]
    );
}

#[test]
fn unchanged_values_failing_a_rule_are_ratcheted() {
    let s = schema();
    let mut old = obj(json!({"region": "eu", "mode": "Pull"}));
    s.apply_defaults(&mut old);
    let mut new = old.clone();
    new["metadata"]["labels"] = json!({"a": "b"});
    assert_eq!(s.validate(&new, Some(&old)), vec![]);
    new["spec"]["region"] = json!("us");
    assert_eq!(s.validate(&new, Some(&old)).len(), 1);
}

#[test]
fn patterns_follow_go_regexp_semantics() {
    let cases = [
        ("^\\d+$", "123", true),
        ("^\\d+$", "١٢٣", false),
        ("^\\w+$", "abc_1", true),
        ("^\\w+$", "héllo", false),
        ("^[\\d.]+$", "1.2", true),
        ("^[^\\d]+$", "ab", true),
        ("^\\D+$", "é", true),
        ("\\bfoo\\b", "a foo b", true),
        ("^[]a]+$", "]a", true),
        ("^\\s$", "\u{a0}", false),
        ("^é+$", "éé", true),
    ];
    for (p, v, want) in cases {
        assert_eq!(go_regex(p).unwrap().is_match(v), want, "{p} on {v:?}");
    }
}

#[test]
fn defaults_are_validated_when_the_schema_is_compiled() {
    let cases = [
        (
            json!({"type": "object", "properties": {"tier": {"type": "string", "enum": ["a", "b"], "default": "gold"}}}),
            "openAPIV3Schema.properties[tier].default",
            "Unsupported value: \"gold\": supported values: \"a\", \"b\"",
        ),
        (
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 10, "default": 5}}}),
            "openAPIV3Schema.properties[n].default",
            "Invalid value: 5:  in body should be greater than or equal to 10",
        ),
        (
            json!({"type": "object", "properties": {"o": {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": 1}}}}),
            "openAPIV3Schema.properties[o].default.a",
            "Invalid value: \"integer\": a in body must be of type string: \"integer\"",
        ),
        (
            json!({"type": "object", "properties": {"o": {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"zz": "x"}}}}),
            "openAPIV3Schema.properties[o].default",
            "Invalid value: {\"zz\":\"x\"}: must not have unknown fields",
        ),
        (
            json!({"type": "object", "properties": {"o": {"type": "object", "default": {"a": "x"},
                 "x-kubernetes-validations": [{"rule": "self.a == 'y'", "message": "a must be y"}],
                 "properties": {"a": {"type": "string"}}}}}),
            "openAPIV3Schema.properties[o].default",
            "Invalid value: a must be y",
        ),
    ];
    for (s, field, msg) in cases {
        let errs = Schema::new(&s).unwrap_err();
        assert_eq!(
            messages(&errs)
                .into_iter()
                .map(|(_, f, m)| (f, m))
                .collect::<Vec<_>>(),
            vec![(field.to_string(), msg.to_string())],
            "{s}"
        );
    }
    assert!(Schema::new(&fc_schema()).is_ok());
}

/// A bound an integer's format cannot hold (i64::MAX stored as the float
/// 2^63) is refused on every write carrying the field, as the real server
/// does (found on the real-API lane: kube-openapi's `IsValueValidAgainstRange`);
/// a bound it can hold is compared as usual.
#[test]
fn an_integer_bound_outside_its_format_refuses_every_value() {
    let s = Schema::new(&json!({
        "type": "object",
        "properties": {"status": {"type": "object", "properties": {
            "big": {"type": "integer", "format": "int64", "maximum": 9.223372036854776e18},
            "fits": {"type": "integer", "format": "int64", "maximum": 9_007_199_254_740_992_i64},
            "small": {"type": "integer", "format": "int32", "minimum": -3e9}
        }}}
    }))
    .expect("valid schema");
    let o = json!({"status": {"big": 1, "fits": 1, "small": 1}});
    assert_eq!(
        messages(&s.validate(&o, None)),
        [
            (
                "FieldValueInvalid".into(),
                "status".into(),
                "Invalid value: \"\": Maximum boundary value must be of type integer with format int64 in big".into()
            ),
            (
                "FieldValueInvalid".into(),
                "status".into(),
                "Invalid value: \"\": Minimum boundary value must be of type integer with format int32 in small".into()
            ),
        ]
    );
    let over = json!({"status": {"fits": 9_007_199_254_741_000_i64}});
    assert_eq!(messages(&s.validate(&over, None)).len(), 1);
    assert_eq!(s.validate(&json!({"status": {"fits": 3}}), None), vec![]);
}
