//! A sandbox in front of the real Kubernetes API server of
//! `tools/realapi/` (docs/realapi.md): what tests start to run a scenario on
//! the lane where Kubernetes' own code serves and admits every custom
//! resource. The scripts make the certificates and run the server's
//! processes; this module starts the sandbox between their two steps and
//! owns the processes (stopped by PID when the sandbox is dropped, and by
//! the scripts' watcher if the test process dies first).

use crate::{CrdDelegate, Sandbox, SandboxOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Set to `1` to make [`Sandbox::start_in_front_of_realapi`] fail with a
/// message saying so (the test support then prints `skipped`) when the
/// real server is not built.
pub const SKIP_ENV: &str = "FLEET_SKIP_REALAPI";

fn tools_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/realapi")
}

/// The real API server behind one sandbox: its folder (certificates, data,
/// logs) and its processes.
pub struct RealApiBehind {
    dir: PathBuf,
    url: String,
}

impl std::fmt::Debug for RealApiBehind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealApiBehind")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl RealApiBehind {
    /// `https://127.0.0.1:PORT` of the real server.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Its log so far (klog lines: `refreshing policies`, errors).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("apiserver.log")).unwrap_or_default()
    }

    /// Kills the real server (SIGKILL) and waits until it is gone, as a
    /// crash would; the sandbox in front then answers its groups with 503.
    pub fn kill(&self) {
        let Ok(pid) = std::fs::read_to_string(self.dir.join("apiserver.pid")) else {
            return;
        };
        let pid = pid.trim();
        let _ = Command::new("kill").args(["-KILL", pid]).status();
        for _ in 0..100 {
            let alive = Command::new("kill")
                .args(["-0", pid])
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !alive {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    fn stop(&self) {
        let _ = Command::new("bash")
            .arg(tools_dir().join("stop.sh"))
            .arg(&self.dir)
            .env("REALAPI_STOP_NOW", "1")
            .env("REALAPI_STOP_REMOVES_DIR", "1")
            .status();
    }
}

impl Drop for RealApiBehind {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Whether the real API server is built for this work tree (`Err` says
/// what to run).
pub fn built() -> Result<(), String> {
    let out = Command::new("bash")
        .arg(tools_dir().join("start.sh"))
        .arg("--check")
        .output()
        .map_err(|e| format!("running tools/realapi/start.sh: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// Whether a test that needs the real API server runs: true when it is
/// built; false (printing `skipped`) when it is not and
/// `FLEET_SKIP_REALAPI=1`; otherwise a panic saying what to run.
pub fn runs_or_skips() -> bool {
    match built() {
        Ok(()) => true,
        Err(msg) if std::env::var(SKIP_ENV).is_ok_and(|v| v == "1") => {
            println!("skipped: {msg}");
            false
        }
        Err(msg) => panic!("{msg} (or set {SKIP_ENV}=1 to skip the tests that need it)"),
    }
}

fn script(args: &[&str], dir: &Path) -> Result<std::process::Output, String> {
    Command::new("bash")
        .arg(tools_dir().join("start.sh"))
        .args(args)
        .arg(dir)
        .env("REALAPI_WATCH_PID", std::process::id().to_string())
        .env("REALAPI_STOP_NOW", "1")
        .env("REALAPI_STOP_REMOVES_DIR", "1")
        .output()
        .map_err(|e| format!("running tools/realapi/start.sh: {e}"))
}

impl Sandbox {
    /// Starts a sandbox in CRD delegate mode in front of a fresh real API
    /// server (`tools/realapi/start.sh --prepare-delegate`, then `--behind`
    /// this sandbox): one API server to clients, whose custom resources
    /// Kubernetes' own code stores, validates and admits. Uses the etcd of
    /// `REALAPI_ETCD_SERVERS` when set (under a prefix of its own), else
    /// starts one. Fails with what to run when the server is not built.
    pub fn start_in_front_of_realapi(opts: SandboxOptions) -> Result<Sandbox, String> {
        let mut last = String::new();
        for _ in 0..3 {
            let dir = std::env::temp_dir().join(format!(
                "fleet-realapi-behind-{}-{}",
                std::process::id(),
                uuid::Uuid::new_v4().simple()
            ));
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let prepared = script(&["--prepare-delegate"], &dir)?;
            if !prepared.status.success() {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(String::from_utf8_lossy(&prepared.stderr).into_owned());
            }
            let config = CrdDelegate::from_kubeconfig_file(&dir.join("delegate.kubeconfig"))?;
            let url = config.server.clone();
            let mut sandbox = Sandbox::start_with(SandboxOptions {
                crd_delegate: Some(config),
                ..opts.clone()
            })
            .map_err(|e| e.to_string())?;
            // The guard first: whatever happens next, the processes go
            // with the sandbox.
            sandbox.behind = Some(RealApiBehind {
                dir: dir.clone(),
                url,
            });
            // The real server acts on the sandbox as the API server's own
            // loopback identity (its reviews, its informers).
            let hub = dir.join("loopback.kubeconfig");
            crate::write_private_atomic(&hub, sandbox.loopback_kubeconfig().as_bytes())
                .map_err(|e| format!("{}: {e}", hub.display()))?;
            let hub = hub.to_string_lossy().into_owned();
            let started = script(&["--behind", &hub], &dir)?;
            if started.status.success() {
                return Ok(sandbox);
            }
            last = String::from_utf8_lossy(&started.stderr).into_owned();
            // 3: the prepared port was taken in between; anything else is
            // an error worth reading.
            if started.status.code() != Some(3) {
                break;
            }
        }
        Err(format!(
            "starting the real API server behind kube-sandbox: {last}"
        ))
    }

    /// The real API server behind this sandbox, if it was started by
    /// [`Sandbox::start_in_front_of_realapi`].
    pub fn realapi(&self) -> Option<&RealApiBehind> {
        self.behind.as_ref()
    }
}
