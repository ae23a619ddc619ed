//! `examples/` (a multi-region fleet: production in the US, the EU and
//! APAC, a shared staging, DR standbys, and the Pull sites' hub Secrets)
//! applied with the real `kubectl apply -f examples/`, as a GitOps
//! repository would: on kube-sandbox whole, and on the real API server
//! (`docs/realapi.md`; it serves custom resources only, no core kinds) every
//! FederatedCluster file. The generated CRDs must accept every site as
//! written, and every Pull site's Secret must carry the labels the hub
//! selects pull Secrets by.
//!
//! `FLEET_SKIP_REALAPI=1` skips the real-server half when it is not built.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::Server;

const CRDS_FILE: &str = "deploy/crds/federation.kubectl-fleet.dev.yaml";
const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
const SITE_LABEL: &str = "federation.kubectl-fleet.dev/site";

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("examples")
}

/// Every YAML file of `examples/`, sorted, with its documents.
fn example_files() -> Vec<(PathBuf, Vec<Value>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(examples_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let docs = serde_saphyr::from_multiple::<Value>(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                .into_iter()
                .filter(|d| !d.is_null())
                .collect();
            (path, docs)
        })
        .collect()
}

/// The real `kubectl` against `server`, its cache in a temp dir.
struct Kubectl {
    dir: tempfile::TempDir,
}

impl Kubectl {
    fn new(server: &Server) -> Kubectl {
        let dir = tempfile::Builder::new()
            .prefix("kube-sandbox-examples-")
            .tempdir()
            .unwrap();
        let path = dir.path().join("kubeconfig");
        std::fs::write(&path, server.kubeconfig()).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        Kubectl { dir }
    }

    #[track_caller]
    fn ok(&self, args: &[&str]) -> String {
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(self.dir.path().join("kubeconfig"))
            .args(args)
            .env("KUBECACHEDIR", self.dir.path().join("cache"))
            .env_remove("KUBECONFIG")
            .output()
            .expect("kubectl on PATH");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
        stdout
    }

    fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).unwrap()
    }
}

async fn with_crds(server: &Server) {
    for crd in support::load_yaml_docs(CRDS_FILE) {
        server.install_crd(&crd).await;
    }
}

/// What every site of the example fleet looks like, by name.
fn sites(docs: &[Value]) -> Vec<&Value> {
    docs.iter()
        .filter(|d| d["kind"] == "FederatedCluster")
        .collect()
}

#[test]
fn the_example_fleet_covers_the_regions_staging_and_dr() {
    let all: Vec<Value> = example_files().into_iter().flat_map(|(_, d)| d).collect();
    let sites = sites(&all);
    let production_regions: Vec<&str> = sites
        .iter()
        .filter(|s| s["spec"]["environment"] == "production")
        .map(|s| s["spec"]["region"].as_str().unwrap())
        .collect();
    for continent in ["us-", "eu-", "ap-"] {
        assert!(
            production_regions.iter().any(|r| r.starts_with(continent)),
            "production in {continent}*: {production_regions:?}"
        );
    }
    assert_eq!(
        sites
            .iter()
            .filter(|s| s["spec"]["environment"] == "staging")
            .count(),
        1,
        "one shared staging"
    );
    assert!(sites.iter().any(|s| s["spec"]["environment"] == "dr"));
    // Every Pull site's Secret is in the examples, labelled for it.
    for site in sites.iter().filter(|s| s["spec"]["mode"] == "Pull") {
        let name = site["metadata"]["name"].as_str().unwrap();
        let r = &site["spec"]["kubeconfigSecretRef"];
        let secret = all
            .iter()
            .find(|d| {
                d["kind"] == "Secret"
                    && d["metadata"]["name"] == r["name"]
                    && d["metadata"]["namespace"] == r["namespace"]
            })
            .unwrap_or_else(|| panic!("no Secret {r} for {name}"));
        assert_eq!(secret["metadata"]["labels"][MANAGED_BY], "kubectl-fleet");
        assert_eq!(secret["metadata"]["labels"][SITE_LABEL], name);
        // `data`, so a re-apply is `unchanged` (stringData never is).
        let key = r["key"].as_str().unwrap();
        let data = secret["data"][key].as_str().unwrap_or_default();
        let kubeconfig = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, data)
            .map(|b| String::from_utf8(b).unwrap())
            .unwrap_or_default();
        let parsed = kube::config::Kubeconfig::from_yaml(&kubeconfig)
            .unwrap_or_else(|e| panic!("{name}: key {key} is not a kubeconfig: {e}"));
        assert_eq!(parsed.current_context.as_deref(), Some(name));
    }
}

#[tokio::test]
async fn kubectl_apply_examples_on_the_sandbox() {
    let server = Server::sandbox();
    with_crds(&server).await;
    let kubectl = Kubectl::new(&server);
    let dir = examples_dir();
    let dir = dir.to_str().unwrap();
    let applied = kubectl.ok(&["apply", "-f", dir]);
    let files = example_files();
    let all: Vec<&Value> = files.iter().flat_map(|(_, d)| d).collect();
    assert_eq!(applied.lines().count(), all.len(), "{applied}");
    assert!(
        applied.lines().all(|l| l.ends_with(" created")),
        "{applied}"
    );
    // Applying again changes nothing.
    let again = kubectl.ok(&["apply", "-f", dir]);
    assert!(again.lines().all(|l| l.ends_with(" unchanged")), "{again}");

    let listed = kubectl.json(&["get", "federatedclusters", "-o", "json"]);
    let listed = listed["items"].as_array().unwrap();
    let owned: Vec<Value> = all.iter().map(|v| (*v).clone()).collect();
    let expected = sites(&owned);
    assert_eq!(listed.len(), expected.len());
    for want in expected {
        let name = want["metadata"]["name"].as_str().unwrap();
        let got = listed
            .iter()
            .find(|s| s["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("{name} not listed"));
        for field in [
            "mode",
            "region",
            "environment",
            "tier",
            "heartbeatIntervalSeconds",
        ] {
            assert_eq!(got["spec"][field], want["spec"][field], "{name}: {field}");
        }
    }
    // The hub's pull Secret watch selects exactly these labels.
    let selected = kubectl.ok(&[
        "get",
        "secrets",
        "-n",
        "fleet-system",
        "-l",
        &format!("{MANAGED_BY}=kubectl-fleet,{SITE_LABEL}"),
        "-o",
        "name",
    ]);
    let pull_sites = listed
        .iter()
        .filter(|s| s["spec"]["mode"] == "Pull")
        .count();
    assert_eq!(selected.lines().count(), pull_sites, "{selected}");
    // Region, environment and tier select sites as `register`'s labels do.
    let dr = kubectl.ok(&[
        "get",
        "fc",
        "-l",
        "federation.kubectl-fleet.dev/environment=dr",
        "-o",
        "name",
    ]);
    assert_eq!(dr.lines().count(), 3, "{dr}");
}

#[tokio::test]
async fn kubectl_apply_examples_on_the_real_api_server() {
    let Some(server) = Server::real() else {
        return;
    };
    with_crds(&server).await;
    let kubectl = Kubectl::new(&server);
    // The real server of this lane serves no core kinds (Namespace,
    // Secret): every file of sites goes, the Secrets' file is the
    // sandbox's half.
    let files = example_files();
    let site_files: Vec<&PathBuf> = files
        .iter()
        .filter(|(_, docs)| docs.iter().all(|d| d["kind"] == "FederatedCluster"))
        .map(|(p, _)| p)
        .collect();
    let skipped: Vec<&PathBuf> = files
        .iter()
        .map(|(p, _)| p)
        .filter(|p| !site_files.contains(p))
        .collect();
    assert_eq!(
        skipped
            .iter()
            .map(|p| p.file_name().unwrap().to_str().unwrap())
            .collect::<Vec<_>>(),
        ["pull-secrets.yaml"],
        "only the Secrets' file holds core kinds"
    );
    let mut args = vec!["apply".to_owned()];
    for f in &site_files {
        args.extend(["-f".to_owned(), f.to_str().unwrap().to_owned()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let applied = kubectl.ok(&args);
    let count: usize = files
        .iter()
        .filter(|(p, _)| site_files.contains(&p))
        .map(|(_, d)| d.len())
        .sum();
    assert_eq!(applied.lines().count(), count, "{applied}");
    // The server defaulted and kept every field as written.
    let all: Vec<Value> = files.iter().flat_map(|(_, d)| d.clone()).collect();
    for want in sites(&all) {
        let name = want["metadata"]["name"].as_str().unwrap();
        let got = kubectl.json(&["get", "federatedcluster", name, "-o", "json"]);
        for field in [
            "mode",
            "region",
            "environment",
            "tier",
            "heartbeatIntervalSeconds",
            "capabilities",
            "kubeconfigSecretRef",
        ] {
            assert_eq!(got["spec"][field], want["spec"][field], "{name}: {field}");
        }
        assert_eq!(got["spec"]["maxConcurrentRemediations"], 3, "defaulted");
    }
    // The server is shared by the tests: leave it as found.
    let mut delete = args.clone();
    delete[0] = "delete";
    delete.push("--ignore-not-found");
    kubectl.ok(&delete);
}
