//! The live alert test's harness: the tools, the webhook receiver that
//! records every delivery, Prometheus and Alertmanager on loopback with
//! the shipped rules and inhibition, and the hub's clocks and lease.

use super::*;

/// The tools, from tools/test.sh.
pub(super) struct Tools {
    pub(super) prometheus: String,
    pub(super) alertmanager: String,
    pub(super) amtool: String,
}

impl Tools {
    pub(super) fn get() -> Option<Tools> {
        let [prometheus, alertmanager, amtool] =
            crate::support::require_tools(["prometheus", "alertmanager", "amtool"])?
                .map(|p| p.display().to_string());
        Some(Tools {
            prometheus,
            alertmanager,
            amtool,
        })
    }
}

/// One alert of one notification Alertmanager delivered.
#[derive(Clone, Debug)]
pub(super) struct Delivery {
    pub(super) at: Timestamp,
    /// `firing` or `resolved`.
    pub(super) status: String,
    pub(super) labels: BTreeMap<String, String>,
    pub(super) annotations: BTreeMap<String, String>,
}

impl Delivery {
    pub(super) fn label(&self, key: &str) -> &str {
        self.labels.get(key).map_or("", String::as_str)
    }

    pub(super) fn name(&self) -> &str {
        self.label("alertname")
    }

    /// `alertname` and the label that tells the alert apart (its site,
    /// group, or severity), with the status: `ClusterDisconnected solo firing`.
    pub(super) fn key(&self) -> String {
        let which = ["cluster", "group"]
            .iter()
            .map(|k| self.label(k))
            .find(|v| !v.is_empty())
            .unwrap_or_else(|| self.label("severity"));
        format!("{} {} {}", self.name(), which, self.status)
    }
}

/// What the webhook receiver got, in order.
#[derive(Clone, Default)]
pub(super) struct Inbox(pub(super) Arc<Mutex<Vec<Delivery>>>);

impl Inbox {
    pub(super) fn all(&self) -> Vec<Delivery> {
        self.0.lock().unwrap().clone()
    }

    pub(super) fn count(&self, key: &str) -> usize {
        self.all().iter().filter(|d| d.key() == key).count()
    }

    /// Waits (up to `timeout`) until `key` has been delivered `n` times;
    /// the `n`th delivery.
    pub(super) async fn wait_nth(&self, key: &str, n: usize, timeout: Duration) -> Delivery {
        let start = std::time::Instant::now();
        loop {
            if let Some(d) = self.all().into_iter().filter(|d| d.key() == key).nth(n - 1) {
                return d;
            }
            assert!(
                start.elapsed() < timeout,
                "{key} not delivered {n} time(s) within {timeout:?}; delivered: {:?}",
                self.keys()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits (up to `timeout`) for the first delivery of `key`.
    pub(super) async fn wait(&self, key: &str, timeout: Duration) -> Delivery {
        self.wait_nth(key, 1, timeout).await
    }

    pub(super) fn keys(&self) -> Vec<String> {
        self.all().iter().map(Delivery::key).collect()
    }
}

/// The receiver: one HTTP/1.1 POST per notification, answered 200.
pub(super) async fn serve_webhook(listener: tokio::net::TcpListener, inbox: Inbox) {
    while let Ok((stream, _)) = listener.accept().await {
        let inbox = inbox.clone();
        tokio::spawn(async move { webhook_connection(stream, inbox).await });
    }
}

pub(super) async fn webhook_connection(mut stream: tokio::net::TcpStream, inbox: Inbox) {
    let mut buf = Vec::new();
    loop {
        // One request: its head, then Content-Length bytes of body.
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let mut chunk = [0u8; 8192];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + len {
            let mut chunk = [0u8; 8192];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let at = Timestamp::now();
        let body: Value =
            serde_json::from_slice(&buf[head_end..head_end + len]).unwrap_or_default();
        buf.drain(..head_end + len);
        let strings = |v: &Value| -> BTreeMap<String, String> {
            v.as_object()
                .map(|o| {
                    o.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                        .collect()
                })
                .unwrap_or_default()
        };
        {
            let mut got = inbox.0.lock().unwrap();
            for a in body["alerts"].as_array().into_iter().flatten() {
                let d = Delivery {
                    at,
                    status: a["status"].as_str().unwrap_or_default().to_owned(),
                    labels: strings(&a["labels"]),
                    annotations: strings(&a["annotations"]),
                };
                println!("delivered at {at}: {}", d.key());
                got.push(d);
            }
        }
        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        if stream.write_all(ok).await.is_err() {
            return;
        }
    }
}

/// `method path` on a plain-HTTP server on loopback: (status, body).
pub(super) async fn http(addr: &str, method: &str, path: &str) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        let mut out = String::new();
        let mut rest = body;
        while let Some((size, after)) = rest.split_once("\r\n") {
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if n == 0 || after.len() < n {
                break;
            }
            out.push_str(&after[..n]);
            rest = after[n..].trim_start_matches("\r\n");
        }
        out
    } else {
        body.to_owned()
    };
    (code, body)
}

/// Percent-encodes a query parameter.
pub(super) fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A free port on loopback (bound and released: the process given it
/// binds it again at once).
pub(super) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The Prometheus under test.
pub(super) struct Prometheus {
    pub(super) addr: String,
    pub(super) dir: PathBuf,
    pub(super) config: String,
    pub(super) _proc: Proc,
}

impl Prometheus {
    /// `query` at Prometheus' now: the result vector.
    pub(super) async fn query(&self, query: &str) -> Vec<Value> {
        let (code, body) = http(
            &self.addr,
            "GET",
            &format!("/api/v1/query?query={}", encode(query)),
        )
        .await;
        assert_eq!(code, 200, "{query}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        v["data"]["result"].as_array().cloned().unwrap_or_default()
    }

    /// The single value of `query` (None: empty).
    pub(super) async fn value(&self, query: &str) -> Option<f64> {
        self.query(query)
            .await
            .first()
            .and_then(|r| r["value"][1].as_str())
            .and_then(|v| v.parse().ok())
    }

    /// The alerts Prometheus holds (pending and firing).
    pub(super) async fn alerts(&self) -> Vec<Value> {
        let (code, body) = http(&self.addr, "GET", "/api/v1/alerts").await;
        assert_eq!(code, 200, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        v["data"]["alerts"].as_array().cloned().unwrap_or_default()
    }

    /// `activeAt` of the alert `name` whose label `key` is `value`.
    pub(super) async fn active_at(&self, name: &str, key: &str, value: &str) -> Option<String> {
        self.alerts()
            .await
            .into_iter()
            .find(|a| a["labels"]["alertname"] == name && a["labels"][key] == value)
            .and_then(|a| a["activeAt"].as_str().map(str::to_owned))
    }

    /// Loads `rule_files` (in the config's folder) and reloads.
    pub(super) async fn load_rules(&self, rule_files: &[&str]) {
        let files: Vec<String> = rule_files.iter().map(|f| format!("'{f}'")).collect();
        let config = format!("rule_files: [{}]\n{}", files.join(", "), self.config);
        std::fs::write(self.dir.join("prometheus.yml"), config).unwrap();
        let (code, body) = http(&self.addr, "POST", "/-/reload").await;
        assert_eq!(code, 200, "reload: {body}");
    }
}

/// Starts Prometheus scraping the hub's `/metrics` at `hub` over HTTPS
/// (trusting `ca` for `localhost`, sending the token in `token_file`),
/// alerting `alertmanager`, with no rules yet.
pub(super) async fn start_prometheus(
    tools: &Tools,
    dir: &TempDir,
    hub: &str,
    ca: &Path,
    token_file: &Path,
    alertmanager: &str,
) -> Prometheus {
    let folder = dir.join("prometheus");
    std::fs::create_dir_all(folder.join("data")).unwrap();
    let config = format!(
        "global:
  scrape_interval: {scrape}s
  scrape_timeout: {scrape}s
  evaluation_interval: {eval}s
alerting:
  alertmanagers:
    - static_configs:
        - targets: ['{alertmanager}']
scrape_configs:
  - job_name: fleet-hub
    scheme: https
    metrics_path: /metrics
    authorization:
      credentials_file: '{token}'
    tls_config:
      ca_file: '{ca}'
      server_name: localhost
    static_configs:
      - targets: ['{hub}']
",
        scrape = SCRAPE.as_secs(),
        eval = EVAL.as_secs(),
        token = token_file.display(),
        ca = ca.display(),
    );
    std::fs::write(folder.join("prometheus.yml"), &config).unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let args: Vec<String> = vec![
        format!("--config.file={}", folder.join("prometheus.yml").display()),
        format!("--storage.tsdb.path={}", folder.join("data").display()),
        format!("--web.listen-address={addr}"),
        "--web.enable-lifecycle".into(),
        // Firing alerts go to Alertmanager at every evaluation, as they
        // change, not once a minute.
        "--rules.alert.resend-delay=1s".into(),
    ];
    let proc = Proc::spawn(
        "prometheus",
        Path::new(&tools.prometheus),
        &args,
        dir.join("prometheus.log"),
    );
    let prom = Prometheus {
        addr,
        dir: folder,
        config,
        _proc: proc,
    };
    wait_until(Duration::from_secs(60), "Prometheus ready", || async {
        tokio::net::TcpStream::connect(&prom.addr).await.is_ok()
            && http(&prom.addr, "GET", "/-/ready").await.0 == 200
    })
    .await;
    prom
}

/// The Alertmanager configuration: every alert its own group, delivered to
/// the webhook at `webhook` (resolved too), and the shipped inhibition
/// rules embedded as shipped.
pub(super) fn alertmanager_config(webhook: &str) -> String {
    let shipped = monitoring::files()
        .into_iter()
        .find(|(name, _)| *name == "alertmanager-inhibit-rules.yaml")
        .unwrap()
        .1;
    let on_disk = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("deploy/monitoring/alertmanager-inhibit-rules.yaml"),
    )
    .unwrap();
    assert_eq!(
        shipped, on_disk,
        "deploy/monitoring is stale: bash tools/regen.sh"
    );
    format!(
        "route:
  receiver: webhook
  group_by: ['...']
  group_wait: {wait}s
  group_interval: {wait}s
  repeat_interval: 12h
receivers:
  - name: webhook
    webhook_configs:
      - url: 'http://{webhook}/'
        send_resolved: true
{on_disk}",
        wait = GROUP_WAIT.as_secs(),
    )
}

/// Starts Alertmanager with [`alertmanager_config`].
pub(super) async fn start_alertmanager(
    tools: &Tools,
    dir: &TempDir,
    webhook: &str,
) -> (String, Proc) {
    let folder = dir.join("alertmanager");
    std::fs::create_dir_all(folder.join("data")).unwrap();
    let file = folder.join("alertmanager.yml");
    std::fs::write(&file, alertmanager_config(webhook)).unwrap();
    let check = std::process::Command::new(&tools.amtool)
        .arg("check-config")
        .arg(&file)
        .output()
        .unwrap();
    assert!(check.status.success(), "{check:?}");
    let addr = format!("127.0.0.1:{}", free_port());
    let args: Vec<String> = vec![
        format!("--config.file={}", file.display()),
        format!("--storage.path={}", folder.join("data").display()),
        format!("--web.listen-address={addr}"),
        // No gossip with other Alertmanagers.
        "--cluster.listen-address=".into(),
    ];
    let proc = Proc::spawn(
        "alertmanager",
        Path::new(&tools.alertmanager),
        &args,
        dir.join("alertmanager.log"),
    );
    wait_until(Duration::from_secs(60), "Alertmanager ready", || async {
        tokio::net::TcpStream::connect(&addr).await.is_ok()
            && http(&addr, "GET", "/-/ready").await.0 == 200
    })
    .await;
    (addr, proc)
}

/// Seconds from `from` to `to`.
pub(super) fn secs(from: Timestamp, to: Timestamp) -> f64 {
    to.duration_since(from).as_secs_f64()
}

/// Asserts `measured` (seconds) lies in `[low, high + LOAD]` and prints
/// the timing line the docs' table is made from.
pub(super) fn timing(what: &str, measured: f64, low: Duration, high: Duration) {
    let high = high + LOAD;
    println!(
        "ALERT-TIMING {what}: {measured:.1} s (allowed {:.0}–{:.0} s)",
        low.as_secs_f64(),
        high.as_secs_f64()
    );
    assert!(
        measured >= low.as_secs_f64() && measured <= high.as_secs_f64(),
        "{what}: {measured:.1} s, not within {low:?}..{high:?}"
    );
}

/// The hub-clock time of a site's last heartbeat (Push: the edge's, whose
/// clock is the test's, from its lease or its status as the hub reads it;
/// Pull: the hub's last successful probe).
pub(super) async fn last_heartbeat(api: &Api<FederatedCluster>, site: &str) -> Timestamp {
    crate::support::heartbeat_of(api, site)
        .await
        .unwrap_or_else(|| panic!("{site} has no heartbeat"))
}

pub(super) async fn phase(api: &Api<FederatedCluster>, site: &str) -> Option<Phase> {
    api.get(site).await.ok()?.phase()
}

/// The hub operator's arguments: loopback servers, its HTTPS port fixed
/// (so a restarted hub is scraped at the same address), this test's
/// certificate, loopback Pull members allowed.
pub(super) fn live_hub_args(kc: &Path, port: u16, cert: &Path, key: &Path) -> Vec<String> {
    let mut args = hub_args(kc, "hub-a", SCALE);
    let at = args.iter().position(|a| a == "--secure-addr").unwrap();
    args[at + 1] = format!("127.0.0.1:{port}");
    args.extend(
        [
            "--tls-cert-file",
            &cert.display().to_string(),
            "--tls-private-key-file",
            &key.display().to_string(),
            "--pull-allow-cidr",
            "127.0.0.0/8",
            "--probe-timeout",
            "4s",
        ]
        .map(str::to_owned),
    );
    args
}

/// Keeps the hub's Lease held by someone else (renewed every second)
/// until dropped: the leader loses it while its process lives.
pub(super) fn steal_lease(client: kube::Client) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let leases: Api<Lease> =
            Api::namespaced(client, kubectl_fleet::fleet::rbac::FLEET_NAMESPACE);
        loop {
            if let Ok(mut lease) = leases.get("fleet-operator-hub").await {
                let spec = lease.spec.get_or_insert_with(Default::default);
                if spec.holder_identity.as_deref() != Some("thief") {
                    spec.acquire_time = Some(MicroTime(Timestamp::now()));
                }
                spec.holder_identity = Some("thief".into());
                spec.renew_time = Some(MicroTime(Timestamp::now()));
                spec.lease_duration_seconds = Some(3);
                let _ = leases
                    .replace("fleet-operator-hub", &PostParams::default(), &lease)
                    .await;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    })
}
