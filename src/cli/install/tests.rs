use super::*;

fn kinds(docs: &[Value]) -> Vec<String> {
    docs.iter()
        .map(|d| {
            format!(
                "{}/{}",
                d["kind"].as_str().unwrap(),
                d["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect()
}

fn find<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    docs.iter().find(|d| d["kind"] == kind).unwrap()
}

#[test]
fn hub_install_is_complete_and_ordered() {
    let docs = hub_manifests("img", &ServingCert::Generated);
    assert_eq!(
        kinds(&docs),
        [
            "CustomResourceDefinition/federatedclusters.federation.kubectl-fleet.dev",
            "CustomResourceDefinition/federationstatuses.federation.kubectl-fleet.dev",
            "CustomResourceDefinition/federatedclusterleases.federation.kubectl-fleet.dev",
            "Namespace/fleet-system",
            "Namespace/fleet-sites",
            "ServiceAccount/fleet-operator-hub",
            "ClusterRole/fleet-operator-hub",
            "ClusterRoleBinding/fleet-operator-hub",
            "Role/fleet-operator-hub",
            "RoleBinding/fleet-operator-hub",
            "Role/fleet-operator-hub",
            "RoleBinding/fleet-operator-hub",
            "ValidatingAdmissionPolicy/fleet-site-status-ownership",
            "ValidatingAdmissionPolicyBinding/fleet-site-status-ownership",
            "ValidatingAdmissionPolicy/fleet-site-token-requests",
            "ValidatingAdmissionPolicyBinding/fleet-site-token-requests",
            "ValidatingAdmissionPolicy/fleet-site-bucket",
            "ValidatingAdmissionPolicyBinding/fleet-site-bucket",
            "ValidatingAdmissionPolicy/fleet-site-lease",
            "ValidatingAdmissionPolicyBinding/fleet-site-lease",
            "Service/fleet-operator-hub",
            "NetworkPolicy/fleet-operator-hub",
            "Deployment/fleet-operator-hub",
        ]
    );
    let svc = find(&docs, "Service");
    assert_eq!(svc["spec"]["ports"][0]["port"], OPERATOR_HTTPS_PORT);
    let deploy = docs.last().unwrap();
    assert_eq!(svc["spec"]["selector"], deploy_selector(deploy));
    assert_eq!(deploy["spec"]["replicas"], 2);
    assert_eq!(
        deploy["spec"]["template"]["spec"]["containers"][0]["image"],
        "img"
    );
    // Printing is deterministic: the same flags, the same documents.
    assert_eq!(docs, hub_manifests("img", &ServingCert::Generated));
}

#[test]
fn every_namespace_enforces_the_restricted_profile() {
    for docs in [
        hub_manifests("img", &ServingCert::Generated),
        edge_manifests("s", "img", None, None),
    ] {
        for ns in docs.iter().filter(|d| d["kind"] == "Namespace") {
            assert_eq!(
                ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"], "restricted",
                "{ns}"
            );
        }
    }
}

#[test]
fn the_hub_roles_live_in_their_namespaces_only() {
    let docs = hub_manifests("img", &ServingCert::Generated);
    let role = find(&docs, "Role");
    assert_eq!(role["metadata"]["namespace"], "fleet-system");
    assert_eq!(role["rules"], json!(hub_namespace_rules()));
    assert_eq!(operator_name(Role::Hub), rbac::HUB_OPERATOR_ACCOUNT);
    // Its Events only where it records them.
    let events: Vec<&Value> = docs
        .iter()
        .filter(|d| d["metadata"]["namespace"] == rbac::EVENTS_NAMESPACE)
        .collect();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0]["kind"], "Role");
    assert_eq!(events[0]["rules"], json!(hub_events_rules()));
    assert_eq!(events[1]["kind"], "RoleBinding");
    assert_eq!(events[1]["roleRef"]["name"], events[0]["metadata"]["name"]);
    // No Secret anywhere: each Pull site's is granted by `register`.
    let grants = json!([
        hub_cluster_rules(),
        hub_namespace_rules(),
        hub_events_rules()
    ]);
    assert!(!grants.to_string().contains("secrets"), "{grants}");
    assert_eq!(
        find(&docs, "ClusterRole")["rules"],
        json!(hub_cluster_rules())
    );
    // Nothing is granted in fleet-sites: the hub cannot touch a site's identity.
    assert!(
        docs.iter()
            .all(|d| d["metadata"]["namespace"] != rbac::SITES_NAMESPACE)
    );
}

#[test]
fn the_hub_serves_the_certificate_of_its_secret() {
    for (tls, secret) in [
        (ServingCert::Generated, SERVING_SECRET),
        (ServingCert::CertManager, SERVING_SECRET),
        (ServingCert::Given("mine".into()), "mine"),
    ] {
        let docs = hub_manifests("img", &tls);
        let pod = &docs.last().unwrap()["spec"]["template"]["spec"];
        let container = &pod["containers"][0];
        let volume = &pod["volumes"][0];
        assert_eq!(volume["secret"]["secretName"], secret);
        assert_eq!(volume["secret"]["defaultMode"], 0o440);
        assert_eq!(container["volumeMounts"][0]["mountPath"], "/etc/fleet-tls");
        assert_eq!(container["volumeMounts"][0]["readOnly"], true);
        let args = container["args"].as_array().unwrap();
        assert!(args.contains(&json!("--tls-cert-file=/etc/fleet-tls/tls.crt")));
        assert!(args.contains(&json!("--tls-private-key-file=/etc/fleet-tls/tls.key")));
        assert!(docs.iter().all(|d| d["kind"] != "Secret"));
        let cert_manager = docs.iter().any(|d| d["kind"] == "Certificate");
        assert_eq!(cert_manager, tls == ServingCert::CertManager);
    }
    let cm = hub_manifests("img", &ServingCert::CertManager);
    let cert = cm.iter().rfind(|d| d["kind"] == "Certificate").unwrap();
    assert_eq!(
        cert["spec"]["dnsNames"][2],
        "fleet-operator-hub.fleet-system.svc"
    );
    assert_eq!(
        cert["spec"]["dnsNames"][0],
        find(&cm, "Service")["metadata"]["name"]
    );
}

#[test]
fn network_policies_select_the_operator_pods_and_open_only_their_https_port() {
    for docs in [
        hub_manifests("img", &ServingCert::Generated),
        edge_manifests("s", "img", None, None),
    ] {
        let policy = find(&docs, "NetworkPolicy");
        let deploy = docs.last().unwrap();
        assert_eq!(
            policy["spec"]["podSelector"]["matchLabels"],
            deploy_selector(deploy)
        );
        let declared: Vec<&Value> = deploy["spec"]["template"]["spec"]["containers"][0]["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| &p["containerPort"])
            .collect();
        let open: Vec<&Value> = policy["spec"]["ingress"][0]["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| &p["port"])
            .collect();
        assert_eq!(open, [&json!(OPERATOR_HTTPS_PORT)]);
        assert!(open.iter().all(|p| declared.contains(p)), "{open:?}");
        // The probes' port is the kubelet's alone: no pod may reach it.
        let container = &deploy["spec"]["template"]["spec"]["containers"][0];
        for probe in ["livenessProbe", "readinessProbe"] {
            assert_eq!(container[probe]["httpGet"]["port"], "http", "{probe}");
        }
        let http = container["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "http")
            .unwrap();
        assert!(!open.contains(&&http["containerPort"]), "{open:?}");
    }
}

#[test]
fn edge_mounts_the_hub_kubeconfig_read_only() {
    let docs = edge_manifests("site-a", "img", Some("KC"), None);
    let secret = find(&docs, "Secret");
    assert_eq!(secret["metadata"]["name"], "fleet-hub-kubeconfig");
    let deploy = docs.last().unwrap();
    let container = &deploy["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["volumeMounts"][0]["readOnly"], true);
    assert_eq!(container["volumeMounts"][0]["mountPath"], "/etc/fleet-hub");
    assert!(
        container["args"]
            .as_array()
            .unwrap()
            .contains(&json!("--site=site-a"))
    );
    let volume = &deploy["spec"]["template"]["spec"]["volumes"][0];
    assert_eq!(volume["secret"]["defaultMode"], 0o440);
    assert!(container["args"].as_array().unwrap().contains(&json!(
        "--hub-kubeconfig-secret=fleet-system/fleet-hub-kubeconfig"
    )));
    let rules = serde_json::to_string(&edge_cluster_rules()).unwrap();
    for verb in ["create", "update", "patch", "delete"] {
        assert!(
            !rules.contains(verb),
            "edge member rules are read-only: {rules}"
        );
    }
    assert!(
        edge_manifests("site-a", "img", None, None)
            .iter()
            .all(|d| d["kind"] != "Secret")
    );
    // Its own serving certificate when given; else it makes one at start.
    let with_tls = edge_manifests("site-a", "img", None, Some("edge-tls"));
    let pod = &with_tls.last().unwrap()["spec"]["template"]["spec"];
    assert_eq!(pod["volumes"][1]["secret"]["secretName"], "edge-tls");
    assert!(
        pod["containers"][0]["args"]
            .as_array()
            .unwrap()
            .contains(&json!("--tls-cert-file=/etc/fleet-tls/tls.crt"))
    );
    assert!(
        !serde_json::to_string(docs.last().unwrap())
            .unwrap()
            .contains("--tls-cert-file")
    );
}

fn deploy_selector(deploy: &Value) -> Value {
    deploy["spec"]["selector"]["matchLabels"].clone()
}

#[test]
fn monitoring_scrapes_the_hub_service_over_verified_https() {
    let docs = monitoring_manifests(SERVING_SECRET);
    assert_eq!(
        kinds(&docs),
        [
            "ClusterRole/fleet-operator-metrics-reader",
            "ServiceMonitor/fleet-operator",
            "PrometheusRule/fleet-operator",
            "ConfigMap/fleet-operator-dashboard",
            "ServiceAccount/fleet-operator-metrics-scraper",
            "Secret/fleet-operator-metrics-scraper-token",
            "ClusterRoleBinding/fleet-operator-metrics-scraper",
        ]
    );
    // The token comes from the scraper's token Secret through
    // `authorization` (not the deprecated `bearerTokenFile`), and the
    // scraper may read /metrics only.
    let endpoint = &docs[1]["spec"]["endpoints"][0];
    assert_eq!(
        endpoint["authorization"],
        json!({
            "type": "Bearer",
            "credentials": { "name": "fleet-operator-metrics-scraper-token", "key": "token" },
        })
    );
    assert!(!docs[1].to_string().contains("bearerTokenFile"));
    assert_eq!(
        docs[5]["metadata"]["annotations"]["kubernetes.io/service-account.name"],
        "fleet-operator-metrics-scraper"
    );
    assert_eq!(docs[5]["type"], "kubernetes.io/service-account-token");
    assert_eq!(docs[6]["roleRef"]["name"], "fleet-operator-metrics-reader");
    assert_eq!(
        docs[6]["subjects"][0]["name"],
        "fleet-operator-metrics-scraper"
    );
    let svc = hub_service();
    let sm = &docs[1]["spec"];
    for (k, v) in sm["selector"]["matchLabels"].as_object().unwrap() {
        assert_eq!(&svc["metadata"]["labels"][k], v, "{k}");
    }
    let endpoint = &sm["endpoints"][0];
    assert_eq!(endpoint["port"], svc["spec"]["ports"][0]["name"]);
    assert_eq!(endpoint["scheme"], "https");
    // The token goes only to a server the CA vouches for, by the Service's name.
    assert_eq!(
        endpoint["tlsConfig"],
        json!({
            "ca": { "secret": { "name": "fleet-operator-hub-tls", "key": "ca.crt" } },
            "serverName": "fleet-operator-hub.fleet-system.svc",
        })
    );
    assert!(!docs[1].to_string().contains("insecureSkipVerify"));
    assert_eq!(
        monitoring_manifests("mine")[1]["spec"]["endpoints"][0]["tlsConfig"]["ca"]["secret"]["name"],
        "mine"
    );
}

#[test]
fn edge_may_rewrite_only_its_own_secret_and_journal_in_its_namespace() {
    let docs = edge_manifests("site-a", "img", None, None);
    assert_eq!(
        kinds(&docs),
        [
            "Namespace/fleet-system",
            "ServiceAccount/fleet-operator-edge",
            "ClusterRole/fleet-operator-edge",
            "ClusterRoleBinding/fleet-operator-edge",
            "Role/fleet-operator-edge",
            "RoleBinding/fleet-operator-edge",
            "ConfigMap/fleet-edge-journal",
            "NetworkPolicy/fleet-operator-edge",
            "Deployment/fleet-operator-edge",
        ]
    );
    let role = find(&docs, "Role");
    assert_eq!(role["metadata"]["namespace"], "fleet-system");
    assert_eq!(
        role["rules"],
        json!([
            {
                "apiGroups": [""],
                "resources": ["secrets"],
                "resourceNames": ["fleet-hub-kubeconfig"],
                "verbs": ["get", "update"],
            },
            {
                "apiGroups": [""],
                "resources": ["configmaps"],
                "resourceNames": ["fleet-edge-journal"],
                "verbs": ["get", "update"],
            }
        ])
    );
    let binding = find(&docs, "RoleBinding");
    assert_eq!(
        binding["subjects"],
        json!([{ "kind": "ServiceAccount", "name": "fleet-operator-edge", "namespace": "fleet-system" }])
    );
    assert_eq!(binding["roleRef"]["name"], "fleet-operator-edge");
}

#[test]
fn both_operators_run_as_the_image_user_with_fs_group() {
    for docs in [
        hub_manifests("img", &ServingCert::Generated),
        edge_manifests("s", "img", None, None),
    ] {
        let pod = &docs.last().unwrap()["spec"]["template"]["spec"];
        let ctx = &pod["securityContext"];
        for key in ["runAsUser", "runAsGroup", "fsGroup"] {
            assert_eq!(ctx[key], 65532, "{key}");
        }
        assert_eq!(ctx["runAsNonRoot"], true);
    }
}

#[test]
fn uninstall_removes_operator_and_rbac_but_no_crd_namespace_or_site_secret() {
    let objects: Vec<String> = [Role::Hub, Role::Edge]
        .into_iter()
        .flat_map(|r| kinds(&operator_objects(r)))
        .collect();
    assert!(
        objects
            .iter()
            .all(|o| !o.starts_with("CustomResourceDefinition/")
                && !o.starts_with("Namespace/")
                && o != "Secret/fleet-hub-kubeconfig")
    );
    for expected in [
        "Deployment/fleet-operator-edge",
        "Service/fleet-operator-hub",
        "NetworkPolicy/fleet-operator-hub",
        "NetworkPolicy/fleet-operator-edge",
        "Certificate/fleet-operator-hub",
        "Issuer/fleet-operator-ca",
        "Secret/fleet-operator-hub-tls",
        "Secret/fleet-operator-ca",
        "ValidatingAdmissionPolicy/fleet-site-status-ownership",
        "ValidatingAdmissionPolicyBinding/fleet-site-status-ownership",
    ] {
        assert!(
            objects.contains(&expected.to_owned()),
            "{expected}: {objects:?}"
        );
    }
}

#[test]
fn secret_names_are_dns_subdomains() {
    for ok in ["a", "hub-tls", "hub.tls-1"] {
        assert_eq!(parse_secret_name(ok), Ok(ok.to_owned()));
    }
    for bad in ["", "Hub", "-a", "a-", "a..b", "a/b", &"a".repeat(254)] {
        assert!(parse_secret_name(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_image_path_is_the_one_the_api_server_names() {
    assert_eq!(
        image_field_path(),
        ".spec.template.spec.containers[name=\"operator\"].image"
    );
    assert!(default_image().ends_with(&format!(":v{VERSION}")));
    let install = crate::cli::command()
        .find_subcommand("install")
        .unwrap()
        .clone();
    let image = install
        .get_arguments()
        .find(|a| a.get_id() == "image")
        .unwrap();
    let help = image.get_help().unwrap().to_string();
    assert!(
        help.ends_with(&format!("[default: {}]", default_image())),
        "{help}"
    );
}

#[test]
fn yaml_stream_round_trips() {
    let docs = hub_manifests("img", &ServingCert::CertManager);
    let back: Vec<Value> = serde_saphyr::from_multiple(&to_yaml_stream(&docs)).unwrap();
    assert_eq!(back, docs);
}
