//! `kubectl fleet install`: everything the operator needs, as manifests to
//! pipe into `kubectl apply -f -`, or applied directly with `--apply`
//! (server-side apply, field manager `kubectl-fleet`).
//!
//! Hub role: the CRDs, namespace `fleet-system`, ServiceAccount, the least
//! ClusterRole the hub operator needs (sites and their status, the
//! FederationStatus, TokenReview and SubjectAccessReview for its REST API),
//! a Role in `fleet-system` (its leader-election Lease, reading Pull-mode
//! kubeconfig Secrets), bindings, and a 2-replica Deployment with leader
//! election.
//! Edge role: namespace, ServiceAccount, a read-only ClusterRole on the
//! member (what the edge reports), binding, a Role letting it read and
//! rewrite exactly its hub kubeconfig Secret (token renewal), a 1-replica
//! Deployment with that Secret mounted read-only, and the Secret itself when
//! `--hub-kubeconfig` is given.
//!
//! Both Deployments run as the image's numeric user [`OPERATOR_UID`] with
//! `fsGroup` set to it, so the group-readable (0440) Secret files are
//! readable by the non-root process; they pass the Pod Security
//! "restricted" profile.
//!
//! Re-running `--apply` upgrades in place and keeps what the cluster's
//! operators changed since (see [`crate::k8s::ApplyOptions`]): a mirrored
//! image, a replica count. Each kept value is reported; `--force-conflicts`
//! replaces them, and an explicit `--image` or `--hub-kubeconfig` that a
//! kept value would override stops the apply. The CRDs are always forced.

use std::path::PathBuf;

use base64::Engine as _;
use serde_json::{Value, json};

use super::register::{HUB_KUBECONFIG_MOUNT, HUB_KUBECONFIG_SECRET};
use super::version::VERSION;
use super::{Error, GlobalArgs, Io, parse_site_name};
use crate::api::DEFAULT_KUBECONFIG_KEY;
use crate::fleet::rbac;
use crate::k8s::{ApplyOptions, NAMESPACE, describe_field};

/// Name of the operator's ServiceAccount, (Cluster)Role(Binding)s and
/// Deployment, suffixed with the role.
const OPERATOR_NAME: &str = "fleet-operator";
/// Port of the operator's metrics, REST API and health endpoints.
pub const OPERATOR_HTTP_PORT: i32 = 8080;
/// The numeric user and group the operator image runs as (the `USER` of
/// the Containerfile, the conventional non-root id of distroless images).
pub const OPERATOR_UID: i64 = 65532;
/// Name of the operator's container in both Deployments.
const CONTAINER_NAME: &str = "operator";
/// Port of the operator's HTTPS server (`--secure-addr`): `/metrics` and
/// the hub's REST API.
pub const OPERATOR_HTTPS_PORT: i32 = 8443;

/// Which operator role to install.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Role {
    /// The hub: phases, correlation, FederationStatus, metrics, REST API
    Hub,
    /// An edge: dials home and reports its own site's status
    Edge,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::Hub => "hub",
            Role::Edge => "edge",
        }
    }
}

/// Arguments of `kubectl fleet install`.
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Which operator role to install
    #[arg(long, value_enum, default_value_t = Role::Hub)]
    pub role: Role,
    /// Edge role: the site this cluster is registered as
    #[arg(long, value_name = "SITE", value_parser = parse_site_name, required_if_eq("role", "edge"))]
    pub site: Option<String>,
    /// Edge role: hub kubeconfig from `register` to include as Secret fleet-system/fleet-hub-kubeconfig
    #[arg(long, value_name = "FILE")]
    pub hub_kubeconfig: Option<PathBuf>,
    /// Operator container image (default: this version's, see `default_image`)
    #[arg(long, value_name = "IMAGE", help = concat!(
        "Operator container image [default: ghcr.io/kubectl-fleet/fleet-operator:v",
        env!("CARGO_PKG_VERSION"),
        "]"
    ))]
    pub image: Option<String>,
    /// Apply to the cluster (server-side apply) instead of printing
    #[arg(long)]
    pub apply: bool,
    /// With --apply: replace values someone changed on the cluster (kept by default)
    #[arg(long, requires = "apply")]
    pub force_conflicts: bool,
    /// Only the CustomResourceDefinitions
    #[arg(long)]
    pub crds_only: bool,
    /// Hub role: also a ServiceMonitor, the PrometheusRule alerts, the Grafana
    /// dashboard ConfigMap and a ClusterRole for Prometheus to read /metrics
    /// (needs the Prometheus Operator CRDs)
    #[arg(long, conflicts_with = "crds_only")]
    pub with_monitoring: bool,
}

/// The image of this version: its tag is the crate version.
pub fn default_image() -> String {
    format!("ghcr.io/kubectl-fleet/fleet-operator:v{VERSION}")
}

/// The field path of the operator container's image, as the API server
/// names it in apply conflicts.
fn image_field_path() -> String {
    format!(".spec.template.spec.containers[name=\"{CONTAINER_NAME}\"].image")
}

/// Runs `kubectl fleet install`.
pub async fn run(global: &GlobalArgs, args: InstallArgs, io: &mut Io<'_>) -> Result<(), Error> {
    for (given, flag) in [
        (args.hub_kubeconfig.is_some(), "--hub-kubeconfig"),
        (args.site.is_some(), "--site"),
    ] {
        if given && args.role != Role::Edge {
            return Err(Error::Invalid {
                what: format!("{flag} only applies to --role edge"),
                hint: "drop it, or add --role edge --site SITE".into(),
            });
        }
    }
    let image = args.image.clone().unwrap_or_else(default_image);
    let hub_kubeconfig = match &args.hub_kubeconfig {
        Some(path) => Some(
            std::fs::read_to_string(path).map_err(|source| Error::ReadFile {
                path: path.clone(),
                source,
            })?,
        ),
        None => None,
    };
    if args.with_monitoring && args.role != Role::Hub {
        return Err(Error::Invalid {
            what: "--with-monitoring only applies to --role hub".into(),
            hint: "install the monitoring objects with the hub: `kubectl fleet install --with-monitoring`".into(),
        });
    }
    let mut docs = if args.crds_only {
        crd_manifests()
    } else {
        match args.role {
            Role::Hub => hub_manifests(&image),
            Role::Edge => edge_manifests(
                args.site
                    .as_deref()
                    .expect("clap requires --site with --role edge"),
                &image,
                hub_kubeconfig.as_deref(),
            ),
        }
    };
    if args.with_monitoring {
        docs.extend(monitoring_manifests());
    }
    if args.apply {
        apply(global, &args, docs, io).await?;
    } else {
        io.out.write_all(to_yaml_stream(&docs).as_bytes())?;
    }
    Ok(())
}

/// `--apply`: checks what the edge needs, then applies the CRDs whole and
/// the rest keeping what the cluster's operators changed (see the module
/// documentation), and reports each object and each kept value.
async fn apply(
    global: &GlobalArgs,
    args: &InstallArgs,
    docs: Vec<Value>,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let cluster = global.hub().await?;
    if args.role == Role::Edge
        && !args.crds_only
        && args.hub_kubeconfig.is_none()
        && !cluster
            .secret_exists(NAMESPACE, HUB_KUBECONFIG_SECRET)
            .await?
    {
        return Err(Error::Invalid {
            what: format!(
                "Secret {NAMESPACE}/{HUB_KUBECONFIG_SECRET} does not exist on the target cluster: the edge would not start"
            ),
            hint: "pass --hub-kubeconfig FILE (from `kubectl fleet register`), or apply the Secret from `register --emit secret` first".into(),
        });
    }
    // What the user names by flag must win over what the cluster holds:
    // the image (not a mirror set earlier), the hub kubeconfig (not the
    // token the edge renewed since).
    let mut required = Vec::new();
    if args.image.is_some() {
        required.push(image_field_path());
    }
    if args.hub_kubeconfig.is_some() {
        required.push(format!(".data.{DEFAULT_KUBECONFIG_KEY}"));
    }
    let options = ApplyOptions {
        force: args.force_conflicts,
        required: &required,
    };
    // The CRDs are this version's schema, whole: nobody's edits to them
    // are kept (a half-old schema would serve neither version).
    let (crds, rest): (Vec<Value>, Vec<Value>) = docs
        .into_iter()
        .partition(|d| d["kind"] == "CustomResourceDefinition");
    let force_crds = ApplyOptions {
        force: true,
        required: &[],
    };
    // A kind the cluster does not serve (the Prometheus Operator's, with
    // --with-monitoring) would stop the apply half-way: refuse up front.
    let unserved = cluster.unserved_kinds(&rest).await?;
    if !unserved.is_empty() {
        return Err(Error::Invalid {
            what: format!(
                "the cluster does not serve {}: nothing applied",
                unserved.join(", ")
            ),
            hint: if unserved
                .iter()
                .any(|k| k.starts_with("monitoring.coreos.com/"))
            {
                "install the Prometheus Operator's CRDs first, or drop --with-monitoring (without --apply it prints the manifests)".into()
            } else {
                "check the cluster's API server version and installed CRDs".into()
            },
        });
    }
    let mut applied = cluster.apply_manifests(&crds, force_crds).await?;
    applied.extend(cluster.apply_manifests(&rest, options).await?);
    for applied in applied {
        writeln!(io.err, "{} applied", applied.object)?;
        for kept in &applied.kept {
            writeln!(
                io.err,
                "  kept {}; --force-conflicts replaces it",
                describe_field(&kept.path, kept.live.as_ref(), &kept.owner)
            )?;
        }
    }
    Ok(())
}

/// Renders documents as one multi-document YAML stream.
pub fn to_yaml_stream(docs: &[Value]) -> String {
    crate::k8s::plain_yaml_stream(docs)
}

/// The CRDs, as generated from the API types.
pub fn crd_manifests() -> Vec<Value> {
    crate::api::crds()
        .into_iter()
        .map(|crd| serde_json::to_value(crd).expect("CRDs serialise"))
        .collect()
}

fn labels(role: Role) -> Value {
    json!({
        "app.kubernetes.io/name": OPERATOR_NAME,
        "app.kubernetes.io/component": role.as_str(),
        rbac::MANAGED_BY_LABEL: rbac::MANAGED_BY,
    })
}

/// The hub operator's cluster-wide rules ([`rbac::hub_operator_cluster_rules`]).
pub fn hub_cluster_rules() -> Vec<Value> {
    rules_json(rbac::hub_operator_cluster_rules())
}

/// The hub operator's rules inside `fleet-system`
/// ([`rbac::hub_operator_namespace_rules`]).
pub fn hub_namespace_rules() -> Vec<Value> {
    rules_json(rbac::hub_operator_namespace_rules())
}

/// The edge operator's read-only rules on its own (member) cluster: the
/// same reads the hub's Pull prober uses.
pub fn edge_cluster_rules() -> Vec<Value> {
    rules_json(rbac::member_reader_cluster_role().rules.unwrap_or_default())
}

/// The edge operator's rules inside `fleet-system`: get and update on
/// exactly the Secret holding its hub kubeconfig.
pub fn edge_namespace_rules() -> Vec<Value> {
    rules_json(rbac::edge_secret_rules(HUB_KUBECONFIG_SECRET))
}

fn rules_json(rules: Vec<k8s_openapi::api::rbac::v1::PolicyRule>) -> Vec<Value> {
    rules
        .into_iter()
        .map(|r| serde_json::to_value(r).expect("rules serialise"))
        .collect()
}

fn namespace() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": { "name": NAMESPACE, "labels": { rbac::MANAGED_BY_LABEL: rbac::MANAGED_BY } },
    })
}

fn rbac_objects(
    role: Role,
    cluster_rules: Vec<Value>,
    namespace_rules: Option<Vec<Value>>,
) -> Vec<Value> {
    let name = format!("{OPERATOR_NAME}-{}", role.as_str());
    let subject = json!([{ "kind": "ServiceAccount", "name": name, "namespace": NAMESPACE }]);
    let mut docs = vec![
        json!({
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": { "name": name, "namespace": NAMESPACE, "labels": labels(role) },
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": { "name": name, "labels": labels(role) },
            "rules": cluster_rules,
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": { "name": name, "labels": labels(role) },
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name },
            "subjects": subject,
        }),
    ];
    if let Some(rules) = namespace_rules {
        docs.push(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": { "name": name, "namespace": NAMESPACE, "labels": labels(role) },
            "rules": rules,
        }));
        docs.push(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": { "name": name, "namespace": NAMESPACE, "labels": labels(role) },
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name },
            "subjects": subject,
        }));
    }
    docs
}

fn deployment(
    role: Role,
    image: &str,
    replicas: i32,
    args: Vec<String>,
    volume: Option<(Value, Value)>,
) -> Value {
    let name = format!("{OPERATOR_NAME}-{}", role.as_str());
    let env_from_field = |env: &str, path: &str| json!({ "name": env, "valueFrom": { "fieldRef": { "fieldPath": path } } });
    let probe =
        |path: &str| json!({ "httpGet": { "path": path, "port": "http" }, "periodSeconds": 10 });
    let mut container = json!({
        "name": CONTAINER_NAME,
        "image": image,
        "args": args,
        "env": [
            env_from_field("POD_NAME", "metadata.name"),
            env_from_field("POD_NAMESPACE", "metadata.namespace"),
        ],
        "ports": [{ "name": "http", "containerPort": OPERATOR_HTTP_PORT }],
        "livenessProbe": probe("/healthz"),
        "readinessProbe": probe("/readyz"),
        "resources": {
            "requests": { "cpu": "50m", "memory": "64Mi" },
            "limits": { "memory": "256Mi" },
        },
        "securityContext": {
            "allowPrivilegeEscalation": false,
            "readOnlyRootFilesystem": true,
            "runAsNonRoot": true,
            "capabilities": { "drop": ["ALL"] },
        },
    });
    let mut pod_spec = json!({
        "serviceAccountName": name,
        "securityContext": {
            "runAsNonRoot": true,
            "runAsUser": OPERATOR_UID,
            "runAsGroup": OPERATOR_UID,
            "fsGroup": OPERATOR_UID,
            "seccompProfile": { "type": "RuntimeDefault" },
        },
        "containers": [],
    });
    if let Some((mount, vol)) = volume {
        container["volumeMounts"] = json!([mount]);
        pod_spec["volumes"] = json!([vol]);
    }
    pod_spec["containers"] = json!([container]);
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": name, "namespace": NAMESPACE, "labels": labels(role) },
        "spec": {
            "replicas": replicas,
            "selector": { "matchLabels": {
                "app.kubernetes.io/name": OPERATOR_NAME,
                "app.kubernetes.io/component": role.as_str(),
            } },
            "template": {
                "metadata": { "labels": labels(role) },
                "spec": pod_spec,
            },
        },
    })
}

/// The objects of one role's operator that `uninstall` removes: the same
/// documents install applies, without the CRDs, the namespace and the
/// edge's hub kubeconfig Secret.
pub fn operator_objects(role: Role) -> Vec<Value> {
    let docs = match role {
        Role::Hub => hub_manifests(&default_image()),
        // The site only appears in the Deployment's args, which deleting ignores.
        Role::Edge => edge_manifests("any-site", &default_image(), None),
    };
    docs.into_iter()
        .filter(|d| {
            !matches!(
                d["kind"].as_str(),
                Some("CustomResourceDefinition" | "Namespace" | "Secret")
            )
        })
        .collect()
}

/// Everything the hub operator needs, in apply order.
pub fn hub_manifests(image: &str) -> Vec<Value> {
    let mut docs = crd_manifests();
    docs.push(namespace());
    docs.extend(rbac_objects(
        Role::Hub,
        hub_cluster_rules(),
        Some(hub_namespace_rules()),
    ));
    docs.push(hub_service());
    docs.push(deployment(
        Role::Hub,
        image,
        2,
        vec!["--federation-role=hub".into()],
        None,
    ));
    docs
}

/// The Service of the hub's HTTPS port (REST API and `/metrics`).
fn hub_service() -> Value {
    let name = format!("{OPERATOR_NAME}-{}", Role::Hub.as_str());
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": { "name": name, "namespace": NAMESPACE, "labels": labels(Role::Hub) },
        "spec": {
            "selector": {
                "app.kubernetes.io/name": OPERATOR_NAME,
                "app.kubernetes.io/component": Role::Hub.as_str(),
            },
            "ports": [{
                "name": crate::render::monitoring::METRICS_PORT_NAME,
                "port": OPERATOR_HTTPS_PORT,
                "targetPort": OPERATOR_HTTPS_PORT,
                "protocol": "TCP",
            }],
        },
    })
}

/// Name of the ClusterRole that lets a scraper read the hub's `/metrics`.
pub const METRICS_READER_ROLE: &str = "fleet-operator-metrics-reader";

/// `--with-monitoring`: the ServiceMonitor for the hub's Service, the
/// PrometheusRule, the dashboard ConfigMap, and the ClusterRole the hub's
/// `/metrics` checks a scraper for (bind it to Prometheus's ServiceAccount).
pub fn monitoring_manifests() -> Vec<Value> {
    use crate::render::monitoring;
    vec![
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": { "name": METRICS_READER_ROLE, "labels": labels(Role::Hub) },
            "rules": rules_json(rbac::fleet_reader_rules()),
        }),
        monitoring::service_monitor(labels(Role::Hub)),
        monitoring::prometheus_rule(),
        monitoring::dashboard_config_map(),
    ]
}

/// Everything an edge operator needs on its member cluster, in apply order.
pub fn edge_manifests(site: &str, image: &str, hub_kubeconfig: Option<&str>) -> Vec<Value> {
    let mut docs = vec![namespace()];
    docs.extend(rbac_objects(
        Role::Edge,
        edge_cluster_rules(),
        Some(edge_namespace_rules()),
    ));
    if let Some(kubeconfig) = hub_kubeconfig {
        docs.push(json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": { "name": HUB_KUBECONFIG_SECRET, "namespace": NAMESPACE, "labels": rbac::site_labels(site) },
            "type": "Opaque",
            "data": { DEFAULT_KUBECONFIG_KEY: base64::engine::general_purpose::STANDARD.encode(kubeconfig) },
        }));
    }
    let mount_dir = std::path::Path::new(HUB_KUBECONFIG_MOUNT)
        .parent()
        .expect("the mount path has a directory")
        .display()
        .to_string();
    let mount = json!({ "name": "hub-kubeconfig", "mountPath": mount_dir, "readOnly": true });
    let volume = json!({
        "name": "hub-kubeconfig",
        "secret": {
            "secretName": HUB_KUBECONFIG_SECRET,
            // Group-readable: the kubelet makes the files root-owned with
            // group fsGroup, and the operator runs as that group.
            "defaultMode": 0o440,
            "items": [{ "key": DEFAULT_KUBECONFIG_KEY, "path": DEFAULT_KUBECONFIG_KEY }],
        },
    });
    docs.push(deployment(
        Role::Edge,
        image,
        1,
        vec![
            "--federation-role=edge".into(),
            format!("--site={site}"),
            format!("--hub-kubeconfig={HUB_KUBECONFIG_MOUNT}"),
            format!("--hub-kubeconfig-secret={NAMESPACE}/{HUB_KUBECONFIG_SECRET}"),
        ],
        Some((mount, volume)),
    ));
    docs
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn hub_install_is_complete_and_ordered() {
        let docs = hub_manifests("img");
        assert_eq!(
            kinds(&docs),
            [
                "CustomResourceDefinition/federatedclusters.federation.kubectl-fleet.dev",
                "CustomResourceDefinition/federationstatuses.federation.kubectl-fleet.dev",
                "Namespace/fleet-system",
                "ServiceAccount/fleet-operator-hub",
                "ClusterRole/fleet-operator-hub",
                "ClusterRoleBinding/fleet-operator-hub",
                "Role/fleet-operator-hub",
                "RoleBinding/fleet-operator-hub",
                "Service/fleet-operator-hub",
                "Deployment/fleet-operator-hub",
            ]
        );
        let svc = &docs[docs.len() - 2];
        assert_eq!(svc["spec"]["ports"][0]["port"], OPERATOR_HTTPS_PORT);
        assert_eq!(
            svc["spec"]["selector"],
            deploy_selector(docs.last().unwrap())
        );
        let deploy = docs.last().unwrap();
        assert_eq!(deploy["spec"]["replicas"], 2);
        assert_eq!(
            deploy["spec"]["template"]["spec"]["containers"][0]["image"],
            "img"
        );
    }

    #[test]
    fn hub_rules_are_exactly_what_the_hub_operator_uses() {
        let g = "federation.kubectl-fleet.dev";
        assert_eq!(
            serde_json::to_value(hub_cluster_rules()).unwrap(),
            json!([
                { "apiGroups": [g], "resources": ["federatedclusters"], "verbs": ["get", "list", "watch", "update", "patch"] },
                { "apiGroups": [g], "resources": ["federatedclusters/status"], "verbs": ["get", "update", "patch"] },
                { "apiGroups": [g], "resources": ["federationstatuses", "federationstatuses/status"], "verbs": ["get", "list", "watch", "create", "update", "patch"] },
                { "apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"] },
                { "apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"] },
            ])
        );
        // Leases and Secrets only inside fleet-system (a Role, not cluster-wide).
        assert_eq!(
            serde_json::to_value(hub_namespace_rules()).unwrap(),
            json!([
                { "apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "list", "watch", "create", "update", "patch"] },
                { "apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch", "patch"] },
            ])
        );
        let role = hub_manifests("img")
            .into_iter()
            .find(|d| d["kind"] == "Role")
            .unwrap();
        assert_eq!(role["metadata"]["namespace"], "fleet-system");
    }

    #[test]
    fn edge_mounts_the_hub_kubeconfig_read_only() {
        let docs = edge_manifests("site-a", "img", Some("KC"));
        let secret = docs.iter().find(|d| d["kind"] == "Secret").unwrap();
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
            edge_manifests("site-a", "img", None)
                .iter()
                .all(|d| d["kind"] != "Secret")
        );
    }

    fn deploy_selector(deploy: &Value) -> Value {
        deploy["spec"]["selector"]["matchLabels"].clone()
    }

    #[test]
    fn monitoring_scrapes_the_hub_service_over_https() {
        let docs = monitoring_manifests();
        assert_eq!(
            kinds(&docs),
            [
                "ClusterRole/fleet-operator-metrics-reader",
                "ServiceMonitor/fleet-operator",
                "PrometheusRule/fleet-operator",
                "ConfigMap/fleet-operator-dashboard",
            ]
        );
        let svc = hub_service();
        let sm = &docs[1]["spec"];
        for (k, v) in sm["selector"]["matchLabels"].as_object().unwrap() {
            assert_eq!(&svc["metadata"]["labels"][k], v, "{k}");
        }
        assert_eq!(sm["endpoints"][0]["port"], svc["spec"]["ports"][0]["name"]);
        assert_eq!(sm["endpoints"][0]["scheme"], "https");
    }

    #[test]
    fn edge_may_rewrite_only_its_own_secret_in_its_namespace() {
        let docs = edge_manifests("site-a", "img", None);
        assert_eq!(
            kinds(&docs),
            [
                "Namespace/fleet-system",
                "ServiceAccount/fleet-operator-edge",
                "ClusterRole/fleet-operator-edge",
                "ClusterRoleBinding/fleet-operator-edge",
                "Role/fleet-operator-edge",
                "RoleBinding/fleet-operator-edge",
                "Deployment/fleet-operator-edge",
            ]
        );
        let role = docs.iter().find(|d| d["kind"] == "Role").unwrap();
        assert_eq!(role["metadata"]["namespace"], "fleet-system");
        assert_eq!(
            role["rules"],
            json!([{
                "apiGroups": [""],
                "resources": ["secrets"],
                "resourceNames": ["fleet-hub-kubeconfig"],
                "verbs": ["get", "update"],
            }])
        );
        let binding = docs.iter().find(|d| d["kind"] == "RoleBinding").unwrap();
        assert_eq!(
            binding["subjects"],
            json!([{ "kind": "ServiceAccount", "name": "fleet-operator-edge", "namespace": "fleet-system" }])
        );
        assert_eq!(binding["roleRef"]["name"], "fleet-operator-edge");
    }

    #[test]
    fn both_operators_run_as_the_image_user_with_fs_group() {
        for docs in [hub_manifests("img"), edge_manifests("s", "img", None)] {
            let pod = &docs.last().unwrap()["spec"]["template"]["spec"];
            let ctx = &pod["securityContext"];
            for key in ["runAsUser", "runAsGroup", "fsGroup"] {
                assert_eq!(ctx[key], 65532, "{key}");
            }
            assert_eq!(ctx["runAsNonRoot"], true);
        }
    }

    #[test]
    fn uninstall_removes_operator_and_rbac_but_no_crd_namespace_or_secret() {
        let objects: Vec<String> = [Role::Hub, Role::Edge]
            .into_iter()
            .flat_map(|r| kinds(&operator_objects(r)))
            .collect();
        assert_eq!(objects.len(), 13, "{objects:?}");
        assert!(
            objects
                .iter()
                .all(|o| !o.starts_with("CustomResourceDefinition/")
                    && !o.starts_with("Namespace/")
                    && !o.starts_with("Secret/"))
        );
        assert!(objects.contains(&"Deployment/fleet-operator-edge".to_owned()));
        assert!(objects.contains(&"Service/fleet-operator-hub".to_owned()));
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
        let docs = hub_manifests("img");
        let back: Vec<Value> = serde_saphyr::from_multiple(&to_yaml_stream(&docs)).unwrap();
        assert_eq!(back, docs);
    }
}
