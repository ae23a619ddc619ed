//! The sandbox driven by the real `kubectl` binary only, for everything a
//! user of kubectl-fleet does by hand: CRDs with printer columns and short
//! names, status patches, conflicts, tokens, `auth can-i`, watches,
//! selectors, pagination and finalizers.

use kube_sandbox::Sandbox;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

struct Kubectl {
    kubeconfig: PathBuf,
    cache: PathBuf,
    _dir: tempfile::TempDir,
}

impl Kubectl {
    fn new(sb: &Sandbox) -> Kubectl {
        let dir = tempfile::Builder::new()
            .prefix("kube-sandbox-kubectl-")
            .tempdir()
            .unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        sb.write_admin_kubeconfig(&kubeconfig).unwrap();
        let cache = dir.path().join("cache");
        Kubectl {
            kubeconfig,
            cache,
            _dir: dir,
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("kubectl");
        c.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .env("KUBECACHEDIR", &self.cache)
            .env_remove("KUBECONFIG");
        c
    }

    fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut c = self.command(args);
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().expect("kubectl on PATH");
        if let Some(input) = stdin {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
        } else {
            drop(child.stdin.take());
        }
        child.wait_with_output().unwrap()
    }

    /// Runs kubectl and returns stdout, failing the test on a non-zero exit.
    fn ok(&self, args: &[&str]) -> String {
        self.ok_stdin(args, None)
    }

    fn ok_stdin(&self, args: &[&str], stdin: Option<&str>) -> String {
        let out = self.run(args, stdin);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Runs kubectl expecting failure; returns stderr.
    fn fails(&self, args: &[&str], stdin: Option<&str>) -> String {
        let out = self.run(args, stdin);
        assert!(
            !out.status.success(),
            "kubectl {args:?} unexpectedly succeeded: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8(out.stderr).unwrap()
    }
}

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: federatedclusters.federation.kubectl-fleet.dev
spec:
  group: federation.kubectl-fleet.dev
  scope: Cluster
  names:
    plural: federatedclusters
    singular: federatedcluster
    kind: FederatedCluster
    shortNames: [fc, fcluster]
    categories: [fleet]
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources:
      status: {}
    additionalPrinterColumns:
    - name: Tier
      type: string
      jsonPath: .spec.tier
    - name: Phase
      type: string
      jsonPath: .status.phase
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              tier: {type: string}
              region: {type: string}
          status:
            type: object
            properties:
              phase: {type: string}
"#;

fn site(name: &str, tier: &str, labels: &str) -> String {
    format!(
        "apiVersion: federation.kubectl-fleet.dev/v1alpha1\nkind: FederatedCluster\nmetadata:\n  name: {name}\n  labels: {labels}\nspec:\n  tier: {tier}\n  region: us-east-1\n"
    )
}

fn with_crd(sb: &Sandbox) -> Kubectl {
    let k = Kubectl::new(sb);
    let out = k.ok_stdin(&["apply", "-f", "-"], Some(CRD));
    assert!(out.contains("created"), "{out}");
    k
}

#[test]
fn crd_printer_columns_short_names_and_api_resources() {
    let sb = Sandbox::start();
    let k = with_crd(&sb);
    k.ok_stdin(
        &["apply", "-f", "-"],
        Some(&site("site-a", "critical", "{env: prod}")),
    );
    k.ok_stdin(
        &["create", "-f", "-"],
        Some(&site("site-b", "standard", "{env: dev}")),
    );
    // A second client-side apply of a changed object patches it.
    let out = k.ok_stdin(
        &["apply", "-f", "-"],
        Some(&site("site-a", "standard", "{env: prod}")),
    );
    assert!(out.contains("configured"), "{out}");
    // And server-side apply works on the same object.
    let out = k.ok_stdin(
        &["apply", "--server-side", "--force-conflicts", "-f", "-"],
        Some(&site("site-a", "critical", "{env: prod}")),
    );
    assert!(out.contains("serverside-applied"), "{out}");

    k.ok(&[
        "patch",
        "fc",
        "site-a",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Connected"}}"#,
    ]);
    let table = k.ok(&["get", "fc"]);
    let lines: Vec<&str> = table.lines().collect();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(header, ["NAME", "TIER", "PHASE", "AGE"], "{table}");
    let row_a: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(&row_a[..3], ["site-a", "critical", "Connected"], "{table}");
    assert!(lines[2].starts_with("site-b"), "{table}");

    let by_other_short_name = k.ok(&["get", "fcluster", "site-b", "-o", "name"]);
    assert_eq!(
        by_other_short_name.trim(),
        "federatedcluster.federation.kubectl-fleet.dev/site-b"
    );
    let by_category = k.ok(&["get", "fleet", "-o", "name"]);
    assert_eq!(by_category.lines().count(), 2, "{by_category}");

    let resources = k.ok(&["api-resources"]);
    let fc = resources
        .lines()
        .find(|l| l.starts_with("federatedclusters "))
        .unwrap_or_else(|| panic!("federatedclusters listed: {resources}"));
    let cols: Vec<&str> = fc.split_whitespace().collect();
    assert_eq!(
        cols,
        [
            "federatedclusters",
            "fc,fcluster",
            "federation.kubectl-fleet.dev/v1alpha1",
            "false",
            "FederatedCluster"
        ]
    );
    for builtin in [
        "serviceaccounts",
        "leases",
        "clusterroles",
        "deployments",
        "customresourcedefinitions",
    ] {
        assert!(
            resources.lines().any(|l| l.starts_with(builtin)),
            "{builtin} listed"
        );
    }
}

#[test]
fn status_patch_and_stale_replace_conflict() {
    let sb = Sandbox::start();
    let k = with_crd(&sb);
    k.ok_stdin(
        &["create", "-f", "-"],
        Some(&site("site-a", "standard", "{}")),
    );
    let old = k.ok(&["get", "fc", "site-a", "-o", "yaml"]);
    k.ok(&[
        "patch",
        "fc",
        "site-a",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Stale"}}"#,
    ]);
    let phase = k.ok(&[
        "get",
        "fc",
        "site-a",
        "-o",
        "jsonpath={.status.phase} {.metadata.generation}",
    ]);
    assert_eq!(phase, "Stale 1");
    // A spec patch through the main resource cannot touch status.
    k.ok(&[
        "patch",
        "fc",
        "site-a",
        "--type=merge",
        "-p",
        r#"{"spec":{"tier":"critical"},"status":{"phase":"X"}}"#,
    ]);
    let after = k.ok(&[
        "get",
        "fc",
        "site-a",
        "-o",
        "jsonpath={.spec.tier} {.status.phase} {.metadata.generation}",
    ]);
    assert_eq!(after, "critical Stale 2");

    let err = k.fails(&["replace", "-f", "-"], Some(&old));
    assert!(
        err.contains("Conflict") && err.contains("the object has been modified"),
        "{err}"
    );

    let err = k.fails(
        &["create", "-f", "-"],
        Some(&site("site-a", "standard", "{}")),
    );
    assert!(err.contains("AlreadyExists"), "{err}");
    let err = k.fails(&["get", "fc", "missing"], None);
    assert!(
        err.contains("NotFound") && err.contains("\"missing\" not found"),
        "{err}"
    );
}

#[test]
fn create_token_and_auth_can_i_as_service_account() {
    let sb = Sandbox::start();
    let k = Kubectl::new(&sb);
    k.ok(&["create", "namespace", "fleet-system"]);
    k.ok(&[
        "create",
        "serviceaccount",
        "fleet-edge-site-a",
        "-n",
        "fleet-system",
    ]);
    let token = k.ok(&[
        "create",
        "token",
        "fleet-edge-site-a",
        "-n",
        "fleet-system",
        "--duration=1h",
    ]);
    let token = token.trim();
    assert_eq!(token.split('.').count(), 3, "a JWT");
    let err = k.fails(
        &[
            "create",
            "token",
            "fleet-edge-site-a",
            "-n",
            "fleet-system",
            "--duration=5m",
        ],
        None,
    );
    assert!(
        err.contains("may not specify a duration less than 10 minutes"),
        "{err}"
    );

    k.ok(&[
        "create",
        "role",
        "cm-reader",
        "-n",
        "fleet-system",
        "--verb=get",
        "--resource=configmaps",
        "--resource-name=site-a",
    ]);
    k.ok(&[
        "create",
        "rolebinding",
        "cm-reader",
        "-n",
        "fleet-system",
        "--role=cm-reader",
        "--serviceaccount=fleet-system:fleet-edge-site-a",
    ]);
    let as_sa = "--as=system:serviceaccount:fleet-system:fleet-edge-site-a";
    let yes = k.ok(&[
        "auth",
        "can-i",
        "get",
        "configmaps/site-a",
        "-n",
        "fleet-system",
        as_sa,
    ]);
    assert_eq!(yes.trim(), "yes");
    let no = k.run(
        &[
            "auth",
            "can-i",
            "list",
            "configmaps",
            "-n",
            "fleet-system",
            as_sa,
        ],
        None,
    );
    assert_eq!(String::from_utf8_lossy(&no.stdout).trim(), "no");
    assert!(!no.status.success());
    let no = k.run(
        &[
            "auth",
            "can-i",
            "get",
            "configmaps/site-b",
            "-n",
            "fleet-system",
            as_sa,
        ],
        None,
    );
    assert_eq!(String::from_utf8_lossy(&no.stdout).trim(), "no");

    // The minted token authenticates as the ServiceAccount.
    let who = k.ok(&[
        "--token",
        token,
        "auth",
        "whoami",
        "-o",
        "jsonpath={.status.userInfo.username}",
    ]);
    assert_eq!(who, "system:serviceaccount:fleet-system:fleet-edge-site-a");
    let err = k.fails(
        &["--token", token, "get", "configmaps", "-n", "fleet-system"],
        None,
    );
    assert!(
        err.contains("Forbidden") && err.contains("cannot list resource \"configmaps\""),
        "{err}"
    );
}

#[test]
fn get_watch_sees_a_change() {
    let sb = Sandbox::start();
    let k = with_crd(&sb);
    k.ok_stdin(
        &["create", "-f", "-"],
        Some(&site("site-a", "standard", "{}")),
    );
    let mut child = k
        .command(&["get", "fc", "-w"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut lines = Vec::new();
    let mut patched = false;
    while Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
            lines.push(line);
        }
        if !patched && lines.iter().any(|l| l.starts_with("site-a")) {
            k.ok(&[
                "patch",
                "fc",
                "site-a",
                "--subresource=status",
                "--type=merge",
                "-p",
                r#"{"status":{"phase":"Connected"}}"#,
            ]);
            patched = true;
        }
        if lines.iter().any(|l| l.contains("Connected")) {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        lines
            .first()
            .map(|l| l.split_whitespace().collect::<Vec<_>>()[..3].to_vec()),
        Some(vec!["NAME", "TIER", "PHASE"]),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("site-a") && l.contains("Connected")),
        "{lines:?}"
    );
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("NAME")).count(),
        1,
        "one header: {lines:?}"
    );
}

#[test]
fn label_selectors_and_chunked_lists() {
    let sb = Sandbox::start();
    let k = Kubectl::new(&sb);
    for (name, labels) in [
        ("a", "tier=web,env=prod"),
        ("b", "tier=db,env=prod"),
        ("c", "tier=web,env=dev"),
        ("d", "env=dev"),
        ("e", ""),
    ] {
        k.ok(&["create", "configmap", name, "-n", "default"]);
        if !labels.is_empty() {
            let mut args = vec!["label", "configmap", name, "-n", "default"];
            args.extend(labels.split(','));
            k.ok(&args);
        }
    }
    let names = |sel: &str| -> Vec<String> {
        k.ok(&[
            "get",
            "configmaps",
            "-n",
            "default",
            "-l",
            sel,
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ])
        .split_whitespace()
        .map(String::from)
        .collect()
    };
    assert_eq!(names("tier=web"), ["a", "c"]);
    assert_eq!(names("tier==web,env=prod"), ["a"]);
    assert_eq!(names("tier!=web"), ["b", "d", "e"]);
    assert_eq!(names("tier in (web,db)"), ["a", "b", "c"]);
    assert_eq!(names("tier notin (web)"), ["b", "d", "e"]);
    assert_eq!(names("tier"), ["a", "b", "c"]);
    assert_eq!(names("!tier"), ["d", "e"]);
    let by_name = k.ok(&[
        "get",
        "configmaps",
        "-n",
        "default",
        "--field-selector",
        "metadata.name=c",
        "-o",
        "name",
    ]);
    assert_eq!(by_name.trim(), "configmap/c");

    sb.controls().clear_request_log();
    let all = k.ok(&[
        "get",
        "configmaps",
        "-n",
        "default",
        "--chunk-size=2",
        "-o",
        "name",
    ]);
    assert_eq!(all.lines().count(), 5, "{all}");
    let pages: Vec<_> = sb
        .controls()
        .request_log()
        .into_iter()
        .filter(|r| r.verb == "list" && r.path == "/api/v1/namespaces/default/configmaps")
        .collect();
    assert_eq!(pages.len(), 3, "5 objects in pages of 2: {pages:?}");
    assert!(pages.iter().all(|p| p.query.contains("limit=2")));
    assert_eq!(
        pages
            .iter()
            .filter(|p| p.query.contains("continue="))
            .count(),
        2
    );
}

#[test]
fn delete_waits_for_finalizers() {
    let sb = Sandbox::start();
    let k = Kubectl::new(&sb);
    k.ok_stdin(
        &["create", "-f", "-"],
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  namespace: default\n  finalizers: [fleet.dev/cleanup]\n"),
    );
    let out = k.ok(&[
        "delete",
        "configmap",
        "held",
        "-n",
        "default",
        "--wait=false",
    ]);
    assert!(out.contains("deleted"), "{out}");
    let ts = k.ok(&[
        "get",
        "configmap",
        "held",
        "-n",
        "default",
        "-o",
        "jsonpath={.metadata.deletionTimestamp}",
    ]);
    assert!(!ts.is_empty(), "still present with a deletionTimestamp");
    k.ok(&[
        "patch",
        "configmap",
        "held",
        "-n",
        "default",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ]);
    let err = k.fails(&["get", "configmap", "held", "-n", "default"], None);
    assert!(err.contains("NotFound"), "{err}");

    // Deleting a namespace removes what it holds.
    k.ok(&["create", "namespace", "doomed"]);
    k.ok(&["create", "configmap", "inside", "-n", "doomed"]);
    k.ok(&["delete", "namespace", "doomed"]);
    let err = k.fails(&["get", "configmap", "inside", "-n", "doomed"], None);
    assert!(err.contains("NotFound"), "{err}");
}

#[test]
fn built_ins_through_apply_create_and_typed_commands() {
    let sb = Sandbox::start();
    let k = Kubectl::new(&sb);
    let deployment = |image: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: default\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {{app: web}}\n  template:\n    metadata:\n      labels: {{app: web}}\n    spec:\n      containers:\n      - name: web\n        image: {image}\n"
        )
    };
    assert!(
        k.ok_stdin(&["apply", "-f", "-"], Some(&deployment("nginx:1")))
            .contains("created")
    );
    assert!(
        k.ok_stdin(&["apply", "-f", "-"], Some(&deployment("nginx:2")))
            .contains("configured")
    );
    let out = k.ok(&[
        "get",
        "deployment",
        "web",
        "-n",
        "default",
        "-o",
        "jsonpath={.spec.template.spec.containers[0].image} {.metadata.generation}",
    ]);
    assert_eq!(out, "nginx:2 2");
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: default\ndata:\n  mode: push\n";
    assert!(
        k.ok_stdin(&["apply", "--server-side", "-f", "-"], Some(cm))
            .contains("serverside-applied")
    );
    k.ok(&[
        "scale",
        "deployment",
        "web",
        "-n",
        "default",
        "--replicas=5",
    ]);
    let out = k.ok(&[
        "get",
        "deployment",
        "web",
        "-n",
        "default",
        "-o",
        "jsonpath={.spec.replicas}",
    ]);
    assert_eq!(out, "5");

    // Generator commands send protobuf bodies.
    k.ok(&[
        "create",
        "deployment",
        "api",
        "-n",
        "default",
        "--image=example/api:1",
        "--replicas=2",
    ]);
    k.ok(&[
        "run",
        "probe",
        "-n",
        "default",
        "--image=busybox",
        "--env=MODE=check",
        "--",
        "sleep",
        "1",
    ]);
    let out = k.ok(&[
        "get",
        "pod",
        "probe",
        "-n",
        "default",
        "-o",
        "jsonpath={.spec.containers[0].env[0].value} {.status.phase}",
    ]);
    assert_eq!(out, "check Pending");
    k.ok(&[
        "create",
        "secret",
        "generic",
        "creds",
        "-n",
        "default",
        "--from-literal=token=abc",
    ]);
    let out = k.ok(&[
        "get",
        "secret",
        "creds",
        "-n",
        "default",
        "-o",
        "jsonpath={.data.token}",
    ]);
    assert_eq!(out, "YWJj");
    k.ok(&[
        "create",
        "clusterrole",
        "reader",
        "--verb=get,list",
        "--resource=nodes",
    ]);
    k.ok(&[
        "create",
        "clusterrolebinding",
        "reader",
        "--clusterrole=reader",
        "--user=alice",
    ]);
    let yes = k.ok(&["auth", "can-i", "list", "nodes", "--as=alice"]);
    assert_eq!(yes.trim(), "yes");
}

/// The project's own FederatedCluster CRD (defaults, CEL Pull/Push rule).
const FLEET_CRDS: &str = include_str!("../../deploy/crds/federation.kubectl-fleet.dev.yaml");

#[test]
fn server_side_apply_removes_a_struct_its_manager_stopped_applying() {
    // As on a real apiextensions-apiserver: switching a site from Pull to
    // Push by re-applying without `kubeconfigSecretRef` removes it whole,
    // including its defaulted `key`, instead of leaving `{key: kubeconfig}`
    // behind and failing validation.
    let sb = Sandbox::start();
    let k = Kubectl::new(&sb);
    k.ok_stdin(&["apply", "-f", "-"], Some(FLEET_CRDS));
    let apply = |body: &str| {
        k.ok_stdin(
            &[
                "apply",
                "--server-side",
                "--force-conflicts",
                "--field-manager=M",
                "-f",
                "-",
            ],
            Some(body),
        )
    };
    let head = "apiVersion: federation.kubectl-fleet.dev/v1alpha1\nkind: FederatedCluster\nmetadata: {name: site-a}\n";
    apply(&format!(
        "{head}spec:\n  mode: Pull\n  kubeconfigSecretRef: {{name: s, namespace: fleet-system}}\n"
    ));
    let spec = k.ok(&["get", "fc", "site-a", "-o", "jsonpath={.spec}"]);
    let spec: serde_json::Value = serde_json::from_str(&spec).unwrap();
    assert_eq!(
        spec["kubeconfigSecretRef"],
        serde_json::json!({"key": "kubeconfig", "name": "s", "namespace": "fleet-system"})
    );
    let out = apply(&format!("{head}spec:\n  mode: Push\n"));
    assert!(out.contains("serverside-applied"), "{out}");
    let spec = k.ok(&["get", "fc", "site-a", "-o", "jsonpath={.spec}"]);
    let spec: serde_json::Value = serde_json::from_str(&spec).unwrap();
    assert_eq!(spec["mode"], "Push");
    assert!(spec.get("kubeconfigSecretRef").is_none(), "{spec}");
    // Fields nobody applied (defaults) stay.
    assert_eq!(spec["tier"], "standard");
    assert_eq!(spec["heartbeatIntervalSeconds"], 30);
}

const POLICY: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: safe-settings
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [configmaps]
  matchConditions:
  - name: not-admin
    expression: "!('system:masters' in request.userInfo.groups) || object.metadata.name != 'exempt'"
  variables:
  - name: mode
    expression: "has(object.data) && has(object.data.mode) ? object.data.mode : 'unset'"
  validations:
  - expression: "variables.mode == 'safe'"
    messageExpression: "'data.mode is ' + variables.mode + ', only safe is allowed'"
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: safe-settings-default
spec:
  policyName: safe-settings
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: default
"#;

#[test]
fn validating_admission_policies_through_kubectl() {
    let sb = Sandbox::start();
    let k = Kubectl::new(&sb);
    let out = k.ok_stdin(&["apply", "-f", "-"], Some(POLICY));
    assert!(
        out.contains("validatingadmissionpolicy.admissionregistration.k8s.io/safe-settings created")
            && out.contains("validatingadmissionpolicybinding.admissionregistration.k8s.io/safe-settings-default created"),
        "{out}"
    );
    let out = k.ok(&[
        "api-resources",
        "--api-group=admissionregistration.k8s.io",
        "--no-headers",
    ]);
    assert!(
        out.contains("validatingadmissionpolicies")
            && out.contains("validatingadmissionpolicybindings"),
        "{out}"
    );
    let table = k.ok(&["get", "validatingadmissionpolicies"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]);
    assert!(
        table
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("safe-settings   1             <unset>"),
        "{table}"
    );
    let table = k.ok(&["get", "validatingadmissionpolicybindings"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "POLICYNAME", "PARAMREF", "AGE"]);
    // The defaults the real server fills in.
    let out = k.ok(&[
        "get",
        "validatingadmissionpolicy",
        "safe-settings",
        "-o",
        "jsonpath={.spec.failurePolicy} {.spec.matchConstraints.matchPolicy} {.spec.matchConstraints.resourceRules[0].scope}",
    ]);
    assert_eq!(out, "Fail Equivalent *");

    // A typed create (protobuf body) is denied with the real wording; the
    // namespace the binding does not select is not checked.
    let err = k.fails(
        &[
            "create",
            "configmap",
            "settings",
            "-n",
            "default",
            "--from-literal=mode=fast",
        ],
        None,
    );
    assert_eq!(
        err,
        "error: failed to create configmap: configmaps \"settings\" is forbidden: ValidatingAdmissionPolicy 'safe-settings' with binding 'safe-settings-default' denied request: data.mode is fast, only safe is allowed\n"
    );
    k.ok(&[
        "create",
        "configmap",
        "settings",
        "-n",
        "kube-public",
        "--from-literal=mode=fast",
    ]);
    k.ok(&[
        "create",
        "configmap",
        "settings",
        "-n",
        "default",
        "--from-literal=mode=safe",
    ]);
    // Patches are updates: denied by the same policy, the object unchanged.
    let err = k.fails(
        &[
            "patch",
            "configmap",
            "settings",
            "-n",
            "default",
            "--type=merge",
            "-p",
            r#"{"data":{"mode":"fast"}}"#,
        ],
        None,
    );
    assert!(err.starts_with("Error from server (Forbidden): configmaps \"settings\" is forbidden: ValidatingAdmissionPolicy 'safe-settings'"), "{err}");
    assert_eq!(
        k.ok(&[
            "get",
            "cm",
            "settings",
            "-n",
            "default",
            "-o",
            "jsonpath={.data.mode}"
        ]),
        "safe"
    );
    // The match condition exempts the admin's `exempt` map.
    k.ok(&[
        "create",
        "configmap",
        "exempt",
        "-n",
        "default",
        "--from-literal=mode=fast",
    ]);

    // Warn instead of Deny: the write passes, kubectl prints the warning.
    let warn = POLICY.replace("validationActions: [Deny]", "validationActions: [Warn]");
    k.ok_stdin(&["apply", "-f", "-"], Some(&warn));
    let out = k.run(
        &[
            "create",
            "configmap",
            "other",
            "-n",
            "default",
            "--from-literal=mode=fast",
        ],
        None,
    );
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Warning: Validation failed for ValidatingAdmissionPolicy 'safe-settings' with binding 'safe-settings-default': data.mode is fast, only safe is allowed\n"
    );

    // A policy whose CEL does not compile is refused when written.
    let bad = POLICY.replace("variables.mode == 'safe'", "variables.mood == 'safe'");
    let err = k.fails(&["apply", "-f", "-"], Some(&bad));
    assert!(
        err.contains("The ValidatingAdmissionPolicy \"safe-settings\" is invalid: spec.validations[0].expression: Invalid value: \"variables.mood == 'safe'\": compilation failed: ERROR: <input>:1:11: undefined field 'mood'"),
        "{err}"
    );
    // Deleting the binding lifts the policy.
    k.ok(&[
        "delete",
        "validatingadmissionpolicybinding",
        "safe-settings-default",
    ]);
    k.ok(&[
        "create",
        "configmap",
        "third",
        "-n",
        "default",
        "--from-literal=mode=fast",
    ]);
}
