use super::*;
use crate::names::SUBDOMAIN_MSG;
use crate::resources::NameRule;

#[test]
fn names_are_validated_like_the_real_server() {
    assert!(name_errors(NameRule::Subdomain, "site-a.example").is_empty());
    assert_eq!(
        name_errors(NameRule::Subdomain, "Bad_Name"),
        [SUBDOMAIN_MSG]
    );
    assert!(name_errors(NameRule::Label, "a.b").len() == 1);
    assert!(name_errors(NameRule::Label, &"a".repeat(64))[0].contains("63"));
    assert!(name_errors(NameRule::PathSegment, "system:discovery").is_empty());
    assert!(!name_errors(NameRule::PathSegment, "a/b").is_empty());
}

#[test]
fn noop_ignores_resource_version_and_managed_fields() {
    let a = json!({"metadata": {"name": "x", "resourceVersion": "1", "managedFields": [1]}, "spec": {"a": 1}});
    let b = json!({"metadata": {"name": "x", "resourceVersion": "1", "managedFields": [2]}, "spec": {"a": 1}});
    assert!(is_noop(&a, &b));
    let c = json!({"metadata": {"name": "x", "labels": {"k": "v"}}, "spec": {"a": 1}});
    assert!(!is_noop(&a, &c));
    assert!(content_differs(
        &a,
        &json!({"metadata": {}, "spec": {"a": 2}}),
        true
    ));
    assert!(!content_differs(
        &a,
        &json!({"metadata": {}, "spec": {"a": 1}, "status": {}}),
        true
    ));
}

#[test]
fn removed_paths_name_pruned_fields() {
    let before = json!({"spec": {"a": 1, "typo": 2, "list": [{"k": 1, "x": 2}]}, "extra": true});
    let after = json!({"spec": {"a": 1, "list": [{"k": 1}]}});
    let mut out = Vec::new();
    removed_paths(&before, &after, "", &mut out);
    out.sort();
    assert_eq!(out, ["extra", "spec.list[0].x", "spec.typo"]);
}

#[test]
fn secret_string_data_folds_into_data() {
    let def = crate::resources::Catalogue::builtin()
        .get("", "v1", "secrets")
        .cloned()
        .unwrap();
    let mut s = json!({"data": {"a": "YQ=="}, "stringData": {"b": "kubeconfig"}});
    fold_string_data(&def, &mut s);
    assert_eq!(
        s,
        json!({"data": {"a": "YQ==", "b": "a3ViZWNvbmZpZw=="}, "type": "Opaque"})
    );
    let mut typed = json!({"type": "kubernetes.io/tls", "data": {}});
    fold_string_data(&def, &mut typed);
    assert_eq!(typed["type"], "kubernetes.io/tls");
}
