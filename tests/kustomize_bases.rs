//! The GitOps bases under `deploy/kustomize/` render, through the real
//! `kubectl kustomize` (kustomize built into kubectl), exactly the objects
//! `kubectl fleet install` prints for the same choices: the hub base is
//! `install --role hub`, the edge base `install --role edge --site SITE`
//! with the placeholder site, and the example overlays (image mirror,
//! replicas, the cert-manager and monitoring components, a site named by
//! one JSON patch) what the matching flags print. docs/gitops.md shows
//! them; `tools/regen.sh` writes them and the tests of `xtask/` check
//! they are current.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::{BIN, Kubectl, TempDir};

const VERSION: &str = env!("CARGO_PKG_VERSION");
const MIRROR: &str = "registry.example.com/mirror/fleet-operator";
const PLACEHOLDER: &str = "SET-THE-SITE-IN-AN-OVERLAY";

fn kustomize_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kustomize")
}

fn parse(stream: &str) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(stream)
        .unwrap()
        .into_iter()
        .filter(|d| !d.is_null())
        .collect()
}

/// `kubectl kustomize DIR`, parsed.
fn kustomize(rel: &str) -> Vec<Value> {
    let home = TempDir::new("kustomize");
    let run = Kubectl::offline(home.path())
        .arg("kustomize")
        .arg(kustomize_dir().join(rel))
        .ok();
    parse(&run.stdout)
}

/// `kubectl-fleet install ARGS` (printing, no cluster), parsed.
fn install(args: &[&str]) -> Vec<Value> {
    let out = Command::new(BIN)
        .arg("install")
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "install {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse(&String::from_utf8(out.stdout).unwrap())
}

/// Every number as a float: kustomize writes a schema's `minimum: 0.0` as
/// `0` (one number to the API server, which decodes both into a float64).
fn normalize(v: Value) -> Value {
    match v {
        Value::Number(n) => Value::from(n.as_f64().unwrap()),
        Value::Array(items) => Value::Array(items.into_iter().map(normalize).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, normalize(v))).collect())
        }
        other => other,
    }
}

fn key(doc: &Value) -> String {
    format!(
        "{}/{}/{}",
        doc["kind"].as_str().unwrap(),
        doc["metadata"]["namespace"].as_str().unwrap_or(""),
        doc["metadata"]["name"].as_str().unwrap()
    )
}

/// The documents by kind/namespace/name (kustomize orders by kind; the
/// objects, not their order in the stream, are what an apply creates).
fn by_key(docs: Vec<Value>) -> BTreeMap<String, Value> {
    let n = docs.len();
    let map: BTreeMap<String, Value> = docs.into_iter().map(|d| (key(&d), normalize(d))).collect();
    assert_eq!(map.len(), n, "no object twice");
    map
}

fn assert_same_objects(rendered: Vec<Value>, expected: Vec<Value>, what: &str) {
    let rendered = by_key(rendered);
    let expected = by_key(expected);
    assert_eq!(
        rendered.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "{what}: the same objects"
    );
    for (k, doc) in &expected {
        assert!(
            rendered[k] == *doc,
            "{what}: {k} differs\nkustomize: {}\ninstall: {}",
            serde_json::to_string_pretty(&rendered[k]).unwrap(),
            serde_json::to_string_pretty(doc).unwrap()
        );
    }
}

fn deployment<'a>(docs: &'a mut [Value], name: &str) -> &'a mut Value {
    docs.iter_mut()
        .find(|d| d["kind"] == "Deployment" && d["metadata"]["name"] == name)
        .unwrap()
}

#[test]
fn hub_base_renders_what_install_prints() {
    let hub = install(&["--role", "hub"]);
    assert!(hub.len() >= 12, "{}", hub.len());
    assert_same_objects(kustomize("hub"), hub, "deploy/kustomize/hub");
}

#[test]
fn edge_base_is_install_with_the_site_left_to_an_overlay() {
    let mut edge = install(&["--role", "edge", "--site", "some-site"]);
    let args = &mut deployment(&mut edge, "fleet-operator-edge")["spec"]["template"]["spec"]["containers"]
        [0]["args"];
    assert_eq!(args[1], "--site=some-site");
    args[1] = format!("--site={PLACEHOLDER}").into();
    assert_same_objects(kustomize("edge"), edge, "deploy/kustomize/edge");
}

/// An edge deployed from the base alone, without the overlay naming its
/// site, refuses to start: its container's arguments, as rendered, make
/// `fleet-operator` exit with a one-line error about the site.
#[test]
fn an_edge_from_the_base_without_an_overlay_refuses_to_start() {
    let mut edge = kustomize("edge");
    let args: Vec<String> = deployment(&mut edge, "fleet-operator-edge")["spec"]["template"]
        ["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_fleet-operator"))
        .args(&args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(PLACEHOLDER) && stderr.contains("site") && stderr.contains("overlay"),
        "{stderr}"
    );
}

#[test]
fn edge_overlay_names_its_site_and_mirror_like_install_flags() {
    let image = format!("{MIRROR}:v{VERSION}");
    assert_same_objects(
        kustomize("examples/edge-site"),
        install(&["--role", "edge", "--site", "factory-7", "--image", &image]),
        "deploy/kustomize/examples/edge-site",
    );
}

#[test]
fn hub_overlay_with_both_components_mirror_and_replicas_is_install_with_those_flags() {
    let image = format!("{MIRROR}:v{VERSION}");
    let mut expected = install(&[
        "--with-cert-manager",
        "--with-monitoring",
        "--image",
        &image,
    ]);
    // install has no replica flag: a replica count is an overlay's (and
    // `install --apply` keeps one changed on the cluster).
    deployment(&mut expected, "fleet-operator-hub")["spec"]["replicas"] = 3.into();
    let rendered = kustomize("examples/hub-production");
    for kind in ["Certificate", "Issuer", "ServiceMonitor", "PrometheusRule"] {
        assert!(rendered.iter().any(|d| d["kind"] == kind), "{kind}");
    }
    assert_same_objects(
        rendered,
        expected,
        "deploy/kustomize/examples/hub-production",
    );
}
