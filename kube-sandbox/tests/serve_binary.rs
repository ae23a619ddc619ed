//! `kube-sandbox serve`: writes a private kubeconfig once ready, serves
//! kubectl with it, honours the token cap flag, and exits cleanly on SIGTERM;
//! the benchmarks' round-trip delay and request log file.

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `kube-sandbox serve --kubeconfig KUBECONFIG ARGS…`, once it has written
/// its kubeconfig (it is ready then); killed when dropped, so a failed
/// test leaves no server behind.
fn serving(kubeconfig: &std::path::Path, args: &[&std::ffi::OsStr], stderr: Stdio) -> Serving {
    let child = Command::new(env!("CARGO_BIN_EXE_kube-sandbox"))
        .args(["serve", "--kubeconfig"])
        .arg(kubeconfig)
        .args(args)
        .stderr(stderr)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !kubeconfig.exists() {
        assert!(Instant::now() < deadline, "kubeconfig written in time");
        std::thread::sleep(Duration::from_millis(50));
    }
    Serving(child)
}

/// A `kube-sandbox serve` process, killed (if still running) when dropped.
struct Serving(std::process::Child);

impl Serving {
    /// Sends it `signal` (`-TERM`, `-USR1`, …) as `kill` does.
    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.0.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill {signal}");
    }

    /// Stops it with SIGTERM, which it must exit cleanly on; what it wrote
    /// to its standard error, if that was piped.
    fn terminate(mut self) -> String {
        self.signal("-TERM");
        let exit = self.0.wait().unwrap();
        assert!(exit.success(), "clean exit on SIGTERM: {exit:?}");
        let mut stderr = String::new();
        if let Some(err) = self.0.stderr.as_mut() {
            std::io::Read::read_to_string(err, &mut stderr).unwrap();
        }
        stderr
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

#[test]
fn serve_writes_kubeconfig_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("nested-name.kubeconfig");
    let args =
        ["--listen", "127.0.0.1:0", "--max-token-expiration", "1h"].map(std::ffi::OsStr::new);
    let child = serving(&kubeconfig, &args, Stdio::piped());
    let mode = std::fs::metadata(&kubeconfig).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let text = std::fs::read_to_string(&kubeconfig).unwrap();
    assert!(
        text.contains("certificate-authority-data:") && text.contains("current-context: sandbox")
    );
    assert!(
        !text.contains("127.0.0.1:0"),
        "the real bound port is written"
    );

    let kubectl = |args: &[&str]| {
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(args)
            .env("KUBECACHEDIR", dir.path().join("cache"))
            .output()
            .unwrap()
    };
    let out = kubectl(&["get", "namespace", "default", "-o", "name"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "namespace/default"
    );
    assert!(
        kubectl(&["create", "serviceaccount", "edge"])
            .status
            .success()
    );
    let out = kubectl(&[
        "create",
        "token",
        "edge",
        "--duration=3h",
        "-o",
        "jsonpath={.status.expirationTimestamp}",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expires: jiff::Timestamp = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    let lifetime = expires.as_second() - jiff::Timestamp::now().as_second();
    assert!(
        (3590..=3600).contains(&lifetime),
        "capped at 1h: {lifetime}s"
    );

    let stderr = child.terminate();
    assert!(stderr.contains("serving on https://127.0.0.1:"), "{stderr}");
}

#[test]
fn serve_refuses_a_token_cap_the_real_server_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("never.kubeconfig");
    let out = Command::new(env!("CARGO_BIN_EXE_kube-sandbox"))
        .args(["serve", "--kubeconfig"])
        .arg(&kubeconfig)
        .args(["--listen", "127.0.0.1:0", "--max-token-expiration", "30m"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("must be between 1 hour and 2^32 seconds"),
        "{stderr}"
    );
    assert!(!kubeconfig.exists(), "nothing served");
}

/// `--crd-delegate` with a kubeconfig that cannot name the front proxy (no
/// client certificate, only a token) or that is not there: one line naming
/// the flag and what is missing, nothing served.
#[test]
fn serve_refuses_a_crd_delegate_it_cannot_reach_as_the_front_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("never.kubeconfig");
    let with_token = dir.path().join("token.kubeconfig");
    std::fs::write(
        &with_token,
        "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context: {cluster: a, user: u}\nclusters:\n- name: a\n  cluster: {server: \"https://127.0.0.1:1\", certificate-authority-data: \"\"}\nusers:\n- name: u\n  user: {token: abc}\n",
    )
    .unwrap();
    let missing = dir.path().join("missing.kubeconfig");
    for (delegate, want) in [
        (
            &with_token,
            "it names no client certificate (client-certificate or client-certificate-data): the delegate authenticates kube-sandbox by its front-proxy client certificate (tools/realapi/start.sh --prepare-delegate writes one)",
        ),
        (
            &missing,
            "reading it: No such file or directory (os error 2)",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_kube-sandbox"))
            .args(["serve", "--kubeconfig"])
            .arg(&kubeconfig)
            .arg("--crd-delegate")
            .arg(delegate)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr,
            format!(
                "kube-sandbox: --crd-delegate {}: {want}\n",
                delegate.display()
            )
        );
        assert!(!kubeconfig.exists(), "nothing served");
    }
}

/// `--round-trip-delay` holds back every answer (and every new connection
/// twice as long); `--request-log` writes each request as a JSON line with
/// its start and end.
#[test]
fn serve_models_a_far_away_hub_and_logs_each_request() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("far.kubeconfig");
    let log = dir.path().join("requests.jsonl");
    let args = [
        "--round-trip-delay".as_ref(),
        "150ms".as_ref(),
        "--request-log".as_ref(),
        log.as_os_str(),
    ];
    let child = serving(&kubeconfig, &args, Stdio::null());
    let started = Instant::now();
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["get", "--raw", "/api/v1/namespaces/default"])
        .env("KUBECACHEDIR", dir.path().join("cache"))
        .output()
        .unwrap();
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One connection (2 x 150 ms) and one answer (150 ms) at least.
    assert!(took >= Duration::from_millis(450), "{took:?}");
    child.terminate();
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let get = lines
        .iter()
        .find(|l| l["path"] == "/api/v1/namespaces/default")
        .unwrap_or_else(|| panic!("the GET is logged: {lines:?}"));
    assert_eq!(
        (get["verb"].as_str(), get["status"].as_u64()),
        (Some("get"), Some(200))
    );
    assert_eq!(get["method"], "GET");
    assert_eq!(get["user"], "sandbox-admin");
    let (start, end) = (
        get["startMicros"].as_u64().unwrap(),
        get["endMicros"].as_u64().unwrap(),
    );
    assert!(end - start >= 150_000, "held back by the delay: {get}");
}

#[test]
fn sigusr1_models_an_api_server_restart() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let child = serving(&kubeconfig, &[], Stdio::piped());
    let kubectl = |args: &[&str]| {
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(["--request-timeout", "3s"])
            .args(args)
            .env("KUBECACHEDIR", dir.path().join("cache"))
            .output()
            .unwrap()
    };
    let text = |out: &std::process::Output| String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let out = kubectl(&["create", "configmap", "kept", "--from-literal=a=b"]);
    assert!(out.status.success(), "{out:?}");
    let before = text(&kubectl(&[
        "get",
        "configmap",
        "kept",
        "-o",
        "jsonpath={.metadata.resourceVersion}",
    ]));
    let watch_from = |rv: &str| {
        let out = kubectl(&[
            "get",
            "--raw",
            &format!(
                "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds=1"
            ),
        ]);
        format!("{}{}", text(&out), String::from_utf8_lossy(&out.stderr))
    };
    assert!(
        !watch_from(&before).contains("\"code\":410"),
        "resumable before the restart"
    );
    // Written after `before`: a restarted server's watch cache starts
    // past it.
    let out = kubectl(&["create", "configmap", "later", "--from-literal=a=b"]);
    assert!(out.status.success(), "{out:?}");

    child.signal("-USR1");
    std::thread::sleep(Duration::from_millis(300));
    let down = kubectl(&["get", "configmap", "kept", "-o", "name"]);
    assert!(!down.status.success(), "down while it restarts: {down:?}");

    // Up again after its 5 s: what was stored stays, and no watch resumes
    // from before the restart.
    let deadline = Instant::now() + Duration::from_secs(30);
    let up = loop {
        let out = kubectl(&["get", "configmap", "kept", "-o", "name"]);
        if out.status.success() {
            break out;
        }
        assert!(Instant::now() < deadline, "up again: {out:?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(text(&up), "configmap/kept");
    let gone = watch_from(&before);
    assert!(
        gone.contains("\"code\":410") && gone.contains("too old resource version"),
        "{gone}"
    );
    // Storage outlives the restart: a list at that very version is still
    // served, as a restarted server serves it from etcd.
    let exact = kubectl(&[
        "get",
        "--raw",
        &format!(
            "/api/v1/namespaces/default/configmaps?resourceVersion={before}&resourceVersionMatch=Exact"
        ),
    ]);
    assert!(exact.status.success(), "{exact:?}");
    let listed = text(&exact);
    assert!(
        listed.contains("\"kept\"") && !listed.contains("\"later\""),
        "the list as it was at {before}: {listed}"
    );
    let now = text(&kubectl(&[
        "get",
        "configmaps",
        "-o",
        "jsonpath={.metadata.resourceVersion}",
    ]));
    assert!(
        !watch_from(&now).contains("\"code\":410"),
        "a watch from after the restart resumes"
    );

    let stderr = child.terminate();
    assert!(stderr.contains("SIGUSR1: restarting"), "{stderr}");
}
