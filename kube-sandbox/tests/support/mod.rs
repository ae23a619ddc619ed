//! Test support shared by the integration tests that need a Kubernetes API
//! server: one [`Server`] interface over `kube-sandbox` and over a real
//! Kubernetes API server (apiextensions-apiserver + etcd, built by
//! `tools/realapi/build.sh`), so the same scenario runs against both.
//!
//! The real server is started once per test binary (a `OnceLock`) through
//! `tools/realapi/start.sh`, or taken from `REALAPI_KUBECONFIG` when a caller
//! (CI) already runs one. A process-watcher started by `start.sh` stops etcd
//! and the server as soon as the test process is gone, whether the tests
//! passed, panicked or the process was killed: Rust never drops statics, so an
//! exit hook in the test binary would not be reliable.
//!
//! When the real server is not built, [`Server::real`] panics with a hint to
//! run `tools/realapi/build.sh`; with `FLEET_SKIP_REALAPI=1` it prints
//! "skipped" and returns `None` instead.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use hyper::{Method, Request};
use kube::client::Body;
use serde_json::Value;

/// Any of the servers behind one interface.
pub enum Server {
    /// A fresh in-process kube-sandbox (one per call to [`Server::sandbox`]).
    Sandbox(kube_sandbox::Sandbox),
    /// The shared real API server of this test binary.
    Real(RealServer),
    /// A fresh kube-sandbox in front of a fresh real API server that
    /// serves its CRDs and custom resources ([`Server::front`]).
    Front(kube_sandbox::Sandbox),
}

/// A running real API server (kubeconfig of its admin user).
#[derive(Clone)]
pub struct RealServer {
    kubeconfig: String,
    url: String,
}

impl std::fmt::Debug for RealServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The kubeconfig holds the admin private key and stays out of output.
        f.debug_struct("RealServer")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// One HTTP answer: status, raw body and the body parsed as JSON
/// (`Value::Null` when it is not JSON).
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub text: String,
    pub json: Value,
}

/// The outcome of a watch request: HTTP status and the events read (each the
/// decoded `{"type": ..., "object": ...}` line).
#[derive(Debug, Clone)]
pub struct WatchReply {
    pub status: u16,
    pub events: Vec<Value>,
}

const SKIP_ENV: &str = kube_sandbox::realapi::SKIP_ENV;
/// `Accept` of aggregated discovery (`/apis` with every group's resources).
pub const AGGREGATED: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("kube-sandbox lives inside the workspace")
        .to_path_buf()
}

/// Starts (or finds) the real server; `Err` carries a message for the user.
fn start_real() -> Result<RealServer, String> {
    if let Some(path) = std::env::var_os("REALAPI_KUBECONFIG") {
        let kubeconfig = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "reading REALAPI_KUBECONFIG {}: {e}",
                PathBuf::from(&path).display()
            )
        })?;
        let url = server_url(&kubeconfig);
        return Ok(RealServer { kubeconfig, url });
    }
    let dir = std::env::temp_dir().join(format!("fleet-realapi-{}", std::process::id()));
    let out = Command::new("bash")
        .arg(repo_root().join("tools/realapi/start.sh"))
        .arg(&dir)
        .env("REALAPI_WATCH_PID", std::process::id().to_string())
        .env("REALAPI_STOP_REMOVES_DIR", "1")
        .output()
        .map_err(|e| format!("running tools/realapi/start.sh: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "tools/realapi/start.sh failed ({}; set {SKIP_ENV}=1 to skip the tests that need it):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let kubeconfig = std::fs::read_to_string(dir.join("kubeconfig"))
        .map_err(|e| format!("reading {}/kubeconfig: {e}", dir.display()))?;
    let url = server_url(&kubeconfig);
    Ok(RealServer { kubeconfig, url })
}

fn server_url(kubeconfig: &str) -> String {
    kubeconfig
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: "))
        .unwrap_or_default()
        .to_string()
}

impl Server {
    /// A fresh kube-sandbox.
    pub fn sandbox() -> Server {
        Server::Sandbox(kube_sandbox::Sandbox::start())
    }

    /// The real server of this test binary, started on first use. Panics when
    /// it is not built, unless `FLEET_SKIP_REALAPI=1` (then `None`).
    pub fn real() -> Option<Server> {
        static REAL: OnceLock<Result<RealServer, String>> = OnceLock::new();
        match REAL.get_or_init(start_real) {
            Ok(real) => Some(Server::Real(real.clone())),
            Err(msg) if std::env::var(SKIP_ENV).is_ok_and(|v| v == "1") => {
                eprintln!("skipped: {msg}");
                None
            }
            Err(msg) => panic!("{msg}"),
        }
    }

    /// A fresh kube-sandbox in front of a fresh real API server (CRD
    /// delegate mode, docs/realapi.md). Panics when the real server is not
    /// built, unless `FLEET_SKIP_REALAPI=1` (then `None`).
    pub fn front() -> Option<Server> {
        match kube_sandbox::Sandbox::start_in_front_of_realapi(Default::default()) {
            Ok(sb) => Some(Server::Front(sb)),
            Err(msg) if std::env::var(SKIP_ENV).is_ok_and(|v| v == "1") => {
                eprintln!("skipped: {msg}");
                None
            }
            Err(msg) => panic!("{msg}"),
        }
    }

    /// `"sandbox"`, `"real"` or `"front"`, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Server::Sandbox(_) => "sandbox",
            Server::Real(_) => "real",
            Server::Front(_) => "front",
        }
    }

    /// The in-process sandbox (alone or in front).
    pub fn sandbox_ref(&self) -> Option<&kube_sandbox::Sandbox> {
        match self {
            Server::Sandbox(sb) | Server::Front(sb) => Some(sb),
            Server::Real(_) => None,
        }
    }

    /// Admin kubeconfig YAML.
    pub fn kubeconfig(&self) -> String {
        match self {
            Server::Sandbox(sb) | Server::Front(sb) => sb.admin_kubeconfig(),
            Server::Real(real) => real.kubeconfig.clone(),
        }
    }

    /// A kube client authenticated as admin. Build one per test: a client is
    /// tied to the tokio runtime it was made on.
    pub async fn client(&self) -> kube::Client {
        let kc = kube::config::Kubeconfig::from_yaml(&self.kubeconfig()).expect("parse kubeconfig");
        let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .expect("kubeconfig to client config");
        kube::Client::try_from(cfg).expect("build kube client")
    }

    /// One raw request. `body` is sent as JSON text with `content_type`
    /// (default `application/json`).
    pub async fn raw(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: Option<&Value>,
    ) -> Reply {
        self.raw_accept(method, path, content_type, "application/json", body)
            .await
    }

    /// Like [`Server::raw`] with an explicit `Accept` header (Table output).
    pub async fn raw_accept(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        accept: &str,
        body: Option<&Value>,
    ) -> Reply {
        let bytes = body.map(|b| serde_json::to_vec(b).expect("serialize body"));
        let content_type = body.map(|_| content_type.unwrap_or("application/json"));
        self.raw_bytes(method, path, content_type, accept, bytes)
            .await
    }

    /// One raw request with `body` sent as is (any bytes, any content type).
    pub async fn raw_bytes(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        accept: &str,
        body: Option<Vec<u8>>,
    ) -> Reply {
        let client = self.client().await;
        let req = build_request(method, path, content_type, accept, body);
        let resp = client
            .send(req)
            .await
            .unwrap_or_else(|e| panic!("{} server: {method} {path}: {e}", self.kind()));
        let status = resp.status().as_u16();
        let bytes = resp.into_body().collect_bytes().await.unwrap_or_else(|e| {
            panic!(
                "{} server: reading body of {method} {path}: {e}",
                self.kind()
            )
        });
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply { status, text, json }
    }

    /// Opens a watch (`path` carries `watch=true` and any other query) and
    /// reads events until `max` arrived or `timeout` passed.
    pub async fn watch(&self, path: &str, max: usize, timeout: Duration) -> WatchReply {
        let client = self.client().await;
        let req = build_request("GET", path, None, "application/json", None);
        let resp = client
            .send(req)
            .await
            .unwrap_or_else(|e| panic!("{} server: watch {path}: {e}", self.kind()));
        let status = resp.status().as_u16();
        let mut events = Vec::new();
        let mut body = resp.into_body();
        let mut buf: Vec<u8> = Vec::new();
        let deadline = Instant::now() + timeout;
        while events.len() < max {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match tokio::time::timeout(left, body.frame()).await {
                Ok(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data() {
                        buf.extend_from_slice(&data);
                        while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
                            let line: Vec<u8> = buf.drain(..=pos).collect();
                            if let Ok(v) = serde_json::from_slice::<Value>(&line) {
                                events.push(v);
                            }
                        }
                    }
                }
                // Stream ended, failed or timed out: what we have is the answer.
                _ => break,
            }
        }
        if !buf.is_empty()
            && let Ok(v) = serde_json::from_slice::<Value>(&buf)
        {
            events.push(v);
        }
        WatchReply { status, events }
    }

    /// Creates a CRD (or accepts that it exists) and waits until it is
    /// Established and its resources are served.
    pub async fn install_crd(&self, crd: &Value) {
        let name = crd["metadata"]["name"]
            .as_str()
            .expect("CRD has a name")
            .to_string();
        let created = self
            .raw(
                "POST",
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                None,
                Some(crd),
            )
            .await;
        assert!(
            created.status == 201 || created.status == 409,
            "{} server rejected CRD {name}: {} {}",
            self.kind(),
            created.status,
            created.text
        );
        let crd_path = format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}");
        if created.status == 409 {
            // A long-lived server (REALAPI_KUBECONFIG) may hold an older
            // version of this CRD: replace its spec with the one under test.
            // The CRD controllers (and parallel tests) write it too, so retry
            // on conflicts; an unchanged spec is a no-op update.
            let mut attempts = 0;
            loop {
                let mut current = self.raw("GET", &crd_path, None, None).await.json;
                current["spec"] = crd["spec"].clone();
                let replaced = self.raw("PUT", &crd_path, None, Some(&current)).await;
                attempts += 1;
                if replaced.status == 200 {
                    break;
                }
                assert!(
                    replaced.status == 409 && attempts < 20,
                    "{} server rejected the update of CRD {name}: {}",
                    self.kind(),
                    replaced.text
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        let group = crd["spec"]["group"].as_str().expect("CRD group");
        let plural = crd["spec"]["names"]["plural"].as_str().expect("CRD plural");
        let version = crd["spec"]["versions"][0]["name"]
            .as_str()
            .expect("CRD version");
        let list = format!("/apis/{group}/{version}/{plural}");
        let discovery = format!("/apis/{group}/{version}");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let got = self.raw("GET", &crd_path, None, None).await;
            let established = got.json["status"]["conditions"]
                .as_array()
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c["type"] == "Established" && c["status"] == "True")
                });
            // Served, and listed by discovery (which a real server updates
            // a moment after it serves the resource).
            if established
                && self.raw("GET", &list, None, None).await.status == 200
                && self.raw("GET", &discovery, None, None).await.json["resources"]
                    .as_array()
                    .is_some_and(|rs| rs.iter().any(|r| r["name"] == plural))
                && self
                    .raw_accept("GET", "/apis", None, AGGREGATED, None)
                    .await
                    .json["items"]
                    .as_array()
                    .is_some_and(|gs| gs.iter().any(|g| g["metadata"]["name"] == group))
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{} server: CRD {name} not served after 30s: {}",
                self.kind(),
                got.text
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn build_request(
    method: &str,
    path: &str,
    content_type: Option<&str>,
    accept: &str,
    body: Option<Vec<u8>>,
) -> Request<Body> {
    let method = Method::from_bytes(method.as_bytes()).expect("valid HTTP method");
    let mut builder = Request::builder()
        .method(method)
        .uri(path)
        .header("accept", accept);
    if let Some(ct) = content_type {
        builder = builder.header("content-type", ct);
    }
    builder
        .body(Body::from(body.unwrap_or_default()))
        .expect("build request")
}

/// Reads all documents of a multi-document YAML file (path relative to the
/// repository root) as JSON values.
pub fn load_yaml_docs(rel_path: &str) -> Vec<Value> {
    let path = repo_root().join(rel_path);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_saphyr::from_multiple::<Value>(&text)
        .unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// A short random suffix, the same for the whole test process, so names made
/// from it do not collide with earlier runs on a long-lived real server.
pub fn run_suffix() -> &'static str {
    static SUFFIX: OnceLock<String> = OnceLock::new();
    SUFFIX.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        format!(
            "{:06x}",
            (nanos ^ std::process::id().rotate_left(13)) & 0xff_ffff
        )
    })
}

/// The value at a JSON pointer, `Null` when absent (for terse assertions).
pub fn at<'a>(v: &'a Value, pointer: &str) -> &'a Value {
    static NULL: Value = Value::Null;
    v.pointer(pointer).unwrap_or(&NULL)
}
