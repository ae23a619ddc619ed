//! Beyond the decision table: the messages and details of a denial, the
//! reasons of an allow, effective names, the rules a subject may use,
//! aggregation, label selectors and the bootstrap objects.

use super::*;

#[test]
fn site_identity_denials_have_the_real_messages() {
    let w = world();
    let site = sa("fleet-system", "fleet-edge-site-a");
    let who = "User \"system:serviceaccount:fleet-system:fleet-edge-site-a\"";
    let cases = [
        (
            res(&site, "patch", FLEET, "federatedclusters")
                .name("site-b")
                .sub("status"),
            format!(
                "federatedclusters.federation.kubectl-fleet.dev \"site-b\" is forbidden: {who} cannot patch resource \"federatedclusters/status\" in API group \"federation.kubectl-fleet.dev\" at the cluster scope"
            ),
        ),
        (
            res(&site, "list", FLEET, "federatedclusters"),
            format!(
                "federatedclusters.federation.kubectl-fleet.dev is forbidden: {who} cannot list resource \"federatedclusters\" in API group \"federation.kubectl-fleet.dev\" at the cluster scope"
            ),
        ),
        (
            res(&site, "list", FLEET, "federatedclusters").fs("site-b"),
            format!(
                "federatedclusters.federation.kubectl-fleet.dev \"site-b\" is forbidden: {who} cannot list resource \"federatedclusters\" in API group \"federation.kubectl-fleet.dev\" at the cluster scope"
            ),
        ),
        (
            res(&site, "get", "", "secrets")
                .ns("default")
                .name("hub-ca"),
            format!(
                "secrets \"hub-ca\" is forbidden: {who} cannot get resource \"secrets\" in API group \"\" in the namespace \"default\""
            ),
        ),
        (
            res(&site, "list", "", "secrets").ns("fleet-system"),
            format!(
                "secrets is forbidden: {who} cannot list resource \"secrets\" in API group \"\" in the namespace \"fleet-system\""
            ),
        ),
        (
            res(&site, "create", "", "serviceaccounts")
                .ns("fleet-system")
                .name("fleet-edge-site-b")
                .sub("token"),
            format!(
                "serviceaccounts \"fleet-edge-site-b\" is forbidden: {who} cannot create resource \"serviceaccounts/token\" in API group \"\" in the namespace \"fleet-system\""
            ),
        ),
        (
            res(&site, "delete", FLEET, "federatedclusters").name("site-a"),
            format!(
                "federatedclusters.federation.kubectl-fleet.dev \"site-a\" is forbidden: {who} cannot delete resource \"federatedclusters\" in API group \"federation.kubectl-fleet.dev\" at the cluster scope"
            ),
        ),
        (
            path(&site, "get", "/metrics"),
            format!("forbidden: {who} cannot get path \"/metrics\""),
        ),
    ];
    for (attrs, want) in cases {
        let eval = evaluate(&w, &attrs);
        assert_eq!(
            eval,
            Evaluation {
                decision: Decision::Deny,
                reason: String::new()
            }
        );
        assert_eq!(forbidden_message_with_reason(&attrs, &eval.reason), want);
    }
}

#[test]
fn forbidden_error_carries_the_real_details() {
    let site = sa("fleet-system", "fleet-edge-site-a");
    let attrs = res(&site, "patch", FLEET, "federatedclusters")
        .name("site-b")
        .sub("status");
    let status = forbidden_error(&attrs, "").to_status();
    assert_eq!(status["code"], 403);
    assert_eq!(status["reason"], "Forbidden");
    assert_eq!(
        status["details"],
        json!({"name": "site-b", "group": FLEET, "kind": "federatedclusters"})
    );
    let list = forbidden_error(&res(&site, "list", "", "secrets").ns("x"), "").to_status();
    assert_eq!(list["details"], json!({"kind": "secrets"}));
    let url = forbidden_error(&path(&site, "get", "/metrics"), "").to_status();
    assert_eq!(url["details"], json!({}));
}

#[test]
fn allow_reasons_name_the_binding_role_and_subject() {
    let w = world();
    let site = sa("fleet-system", "fleet-edge-site-a");
    let reason = |a: &Attributes| evaluate(&w, a).reason;
    assert_eq!(
        reason(
            &res(&site, "patch", FLEET, "federatedclusters")
                .name("site-a")
                .sub("status")
        ),
        "RBAC: allowed by ClusterRoleBinding \"fleet-edge-site-a\" of ClusterRole \"fleet-edge-site-a\" to ServiceAccount \"fleet-edge-site-a/fleet-system\""
    );
    assert_eq!(
        reason(
            &res(&site, "create", "", "serviceaccounts")
                .ns("fleet-system")
                .name("fleet-edge-site-a")
                .sub("token")
        ),
        "RBAC: allowed by RoleBinding \"fleet-edge-site-a/fleet-system\" of Role \"fleet-edge-site-a\" to ServiceAccount \"fleet-edge-site-a/fleet-system\""
    );
    assert_eq!(
        reason(&res(&sa("team-a", "builder"), "create", "apps", "deployments").ns("team-a")),
        "RBAC: allowed by RoleBinding \"builder/team-a\" of Role \"deployer\" to ServiceAccount \"builder/team-a\""
    );
    assert_eq!(
        reason(&path(&site, "get", "/api")),
        "RBAC: allowed by ClusterRoleBinding \"system:discovery\" of ClusterRole \"system:discovery\" to Group \"system:authenticated\""
    );
    assert_eq!(
        reason(
            &res(&user("alice", &[]), "get", "", "pods")
                .ns("x")
                .name("p")
        ),
        "RBAC: allowed by ClusterRoleBinding \"alice-pods\" of ClusterRole \"pod-reader\" to User \"alice\""
    );
    // The privileged-group authorizer answers before RBAC, without a reason.
    assert_eq!(
        reason(&res(&user("root", &["system:masters"]), "get", "", "pods")),
        ""
    );
}

#[test]
fn bindings_to_missing_roles_are_the_denial_reason() {
    let w = world();
    let ivan = user("ivan", &[]);
    let attrs = res(&ivan, "get", "", "pods").ns("team-a").name("p");
    let eval = evaluate(&w, &attrs);
    assert_eq!(eval.decision, Decision::Deny);
    assert_eq!(
        eval.reason,
        "RBAC: [role.rbac.authorization.k8s.io \"gone\" not found, clusterrole.rbac.authorization.k8s.io \"gone-too\" not found]"
    );
    assert_eq!(
        forbidden_message_with_reason(&attrs, &eval.reason),
        "pods \"p\" is forbidden: User \"ivan\" cannot get resource \"pods\" in API group \"\" in the namespace \"team-a\": RBAC: [role.rbac.authorization.k8s.io \"gone\" not found, clusterrole.rbac.authorization.k8s.io \"gone-too\" not found]"
    );
    // Outside team-a those bindings are not visited.
    assert_eq!(evaluate(&w, &attrs.clone().ns("team-b")).reason, "");
}

#[test]
fn effective_name_comes_from_the_field_selector_only_for_list_and_watch() {
    let u = user("u", &[]);
    assert_eq!(res(&u, "list", "", "pods").fs("p").effective_name(), "p");
    assert_eq!(res(&u, "watch", "", "pods").fs("p").effective_name(), "p");
    assert_eq!(
        res(&u, "deletecollection", "", "pods")
            .fs("p")
            .effective_name(),
        ""
    );
    assert_eq!(
        res(&u, "get", "", "pods")
            .name("q")
            .fs("p")
            .effective_name(),
        "q"
    );
}

#[test]
fn rules_for_lists_what_the_site_identity_may_do() {
    let w = world();
    let site = sa("fleet-system", "fleet-edge-site-a");
    let rules = rules_for(&w, &site, "fleet-system");
    let resource: Vec<Value> = rules
        .resource_rules
        .iter()
        .map(PolicyRule::to_value)
        .collect();
    for want in [
        named(
            &["get", "update", "patch"],
            &[FLEET],
            &["federatedclusters/status"],
            &["site-a"],
        ),
        named(&["get"], &[FLEET], &["federatedclusters"], &["site-a"]),
        named(
            &["create"],
            &[""],
            &["serviceaccounts/token"],
            &["fleet-edge-site-a"],
        ),
        r(
            &["create"],
            &["authorization.k8s.io"],
            &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
        ),
    ] {
        assert!(resource.contains(&want), "missing {want} in {resource:?}");
    }
    assert_eq!(resource.len(), 5, "{resource:?}");
    assert!(
        rules
            .non_resource_rules
            .iter()
            .any(|r| r.non_resource_urls.contains(&"/apis/*".to_string()))
    );
    assert!(
        rules
            .non_resource_rules
            .iter()
            .all(|r| r.resources.is_empty())
    );
    assert_eq!(rules.evaluation_error, "");
    // Another namespace: the token Role does not apply.
    let elsewhere = rules_for(&w, &site, "default");
    assert_eq!(elsewhere.resource_rules.len(), 4);
    // A missing role makes the answer incomplete.
    let ivan = rules_for(&w, &user("ivan", &[]), "team-a");
    assert_eq!(
        ivan.evaluation_error,
        "[role.rbac.authorization.k8s.io \"gone\" not found, clusterrole.rbac.authorization.k8s.io \"gone-too\" not found]"
    );
}

#[test]
fn aggregation_follows_selectors_transitively() {
    let mut w = world();
    w.cluster_roles.extend([
        json!({"metadata": {"name": "monitoring"},
               "aggregationRule": {"clusterRoleSelectors": [
                   {"matchLabels": {"example.com/aggregate-to-monitoring": "true"}},
                   {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["observability"]}]}]},
               // Rules stored on an aggregated role are replaced, as the controller does.
               "rules": [r(&["*"], &["*"], &["*"])]}),
        cr_labeled("monitoring-pods", json!({"example.com/aggregate-to-monitoring": "true"}),
            vec![r(&["get"], &[""], &["pods"])]),
        cr_labeled("monitoring-nodes", json!({"tier": "observability"}),
            vec![r(&["get"], &[""], &["nodes"]), r(&["get"], &[""], &["pods"])]),
        cr_labeled("not-monitoring", json!({"example.com/aggregate-to-monitoring": "false"}),
            vec![r(&["delete"], &[""], &["pods"])]),
        // Two aggregated roles selecting each other must not loop.
        json!({"metadata": {"name": "loop-a", "labels": {"loop": "b"}},
               "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"loop": "a"}}]}}),
        json!({"metadata": {"name": "loop-b", "labels": {"loop": "a"}},
               "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"loop": "b"}}]}}),
    ]);
    w.cluster_role_bindings
        .push(crb("mon", "monitoring", vec![subj_user("mon")]));
    let mon = user("mon", &[]);
    assert_eq!(
        w.cluster_role_rules("monitoring").unwrap(),
        vec![
            PolicyRule::from_value(&r(&["get"], &[""], &["pods"])),
            PolicyRule::from_value(&r(&["get"], &[""], &["nodes"])),
        ],
        "matches in name order, duplicates dropped, stored rules replaced"
    );
    assert_eq!(
        authorize(&w, &res(&mon, "get", "", "nodes").name("n")),
        Decision::Allow
    );
    assert_eq!(
        authorize(&w, &res(&mon, "delete", "", "pods").ns("x").name("p")),
        Decision::Deny
    );
    assert_eq!(
        authorize(&w, &res(&mon, "get", "", "secrets").ns("x").name("s")),
        Decision::Deny
    );
    assert!(w.cluster_role_rules("loop-a").unwrap().is_empty());

    let admin_rules = w.cluster_role_rules("admin").unwrap();
    let view_rules = w.cluster_role_rules("view").unwrap();
    assert!(
        view_rules.iter().all(|r| admin_rules.contains(r)),
        "admin contains view"
    );
    let written = aggregated_cluster_roles(&w);
    let names: Vec<&str> = written.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["admin", "edit", "view", "monitoring", "loop-a", "loop-b"]
    );
    assert_eq!(
        written[3].1,
        vec![
            r(&["get"], &[""], &["pods"]),
            r(&["get"], &[""], &["nodes"])
        ]
    );
}

#[test]
fn label_selectors_match_like_metav1() {
    let labels = json!({"a": "1", "b": "2"});
    let m = |sel: Value| label_selector_matches(&sel, Some(&labels));
    assert!(m(json!({})));
    assert!(m(json!({"matchLabels": {"a": "1"}})));
    assert!(!m(json!({"matchLabels": {"a": "2"}})));
    assert!(m(
        json!({"matchExpressions": [{"key": "a", "operator": "In", "values": ["0", "1"]}]})
    ));
    assert!(!m(
        json!({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]})
    ));
    assert!(m(
        json!({"matchExpressions": [{"key": "c", "operator": "NotIn", "values": ["1"]}]})
    ));
    assert!(m(
        json!({"matchExpressions": [{"key": "b", "operator": "Exists"}]})
    ));
    assert!(m(
        json!({"matchExpressions": [{"key": "c", "operator": "DoesNotExist"}]})
    ));
    assert!(
        !m(json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["1"]}]})),
        "invalid"
    );
    assert!(
        !m(json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["0"]}]})),
        "unknown operator"
    );
    assert!(!label_selector_matches(
        &json!({"matchLabels": {"a": "1"}}),
        None
    ));
}

#[test]
fn bootstrap_objects_are_valid_rbac_v1() {
    let objs = bootstrap_objects();
    let names: Vec<&str> = objs
        .iter()
        .map(|o| str_at(o, &["metadata", "name"]))
        .collect();
    for want in [
        "cluster-admin",
        "system:discovery",
        "system:public-info-viewer",
        "system:basic-user",
        "admin",
        "edit",
        "view",
    ] {
        assert!(names.contains(&want), "{want} missing");
    }
    for o in &objs {
        assert_eq!(o["apiVersion"], "rbac.authorization.k8s.io/v1");
        assert!(matches!(
            o["kind"].as_str(),
            Some("ClusterRole" | "ClusterRoleBinding")
        ));
        assert_eq!(
            o["metadata"]["labels"]["kubernetes.io/bootstrapping"],
            "rbac-defaults"
        );
        assert!(o["metadata"].get("uid").is_none());
        if o["kind"] == "ClusterRoleBinding" {
            let role = str_at(o, &["roleRef", "name"]);
            assert!(names.contains(&role), "{role} is bootstrapped");
        } else {
            for rule in o["rules"].as_array().unwrap() {
                let rule = PolicyRule::from_value(rule);
                assert!(!rule.verbs.is_empty());
                // v1 validation: a rule names resources or URLs, not both.
                assert!(rule.resources.is_empty() != rule.non_resource_urls.is_empty());
            }
        }
    }
    let discovery = objs
        .iter()
        .find(|o| o["metadata"]["name"] == "system:discovery")
        .unwrap();
    assert_eq!(
        discovery["rules"],
        json!([{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"], "verbs": ["get"]}])
    );
    let public = objs
        .iter()
        .find(|o| {
            o["kind"] == "ClusterRoleBinding"
                && o["metadata"]["name"] == "system:public-info-viewer"
        })
        .unwrap();
    assert_eq!(public["subjects"][1]["name"], "system:unauthenticated");
    // Unauthenticated callers may read health and version only.
    let anon = UserInfo {
        username: "system:anonymous".into(),
        groups: vec!["system:unauthenticated".into()],
        ..Default::default()
    };
    let snap = bootstrap_snapshot();
    assert_eq!(
        authorize(&snap, &path(&anon, "get", "/version")),
        Decision::Allow
    );
    assert_eq!(
        authorize(&snap, &path(&anon, "get", "/api")),
        Decision::Deny
    );
}
