//! Shared harness of the black-box `kubectl fleet` tests: a kube-sandbox hub,
//! a private temp directory with its admin kubeconfig, and helpers to run
//! the built binary and to talk to the hub as admin or as a minted token.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use kube_sandbox::{Sandbox, SandboxOptions};

use super::kubectl::{Kubectl, user_env};
use super::lane::Lane;
use super::operator::TempDir;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_kubectl-fleet");

/// The result of one run of the binary.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The result of a finished process.
    pub fn from(output: Output) -> Self {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }

    /// Panics with both streams unless the run succeeded.
    #[track_caller]
    pub fn ok(self) -> Self {
        assert_eq!(
            self.code, 0,
            "expected success\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Asserts a failure reported as exactly one `error: …` line, and
    /// returns that line.
    #[track_caller]
    pub fn one_line_error(&self) -> String {
        assert_ne!(
            self.code, 0,
            "expected failure\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "expected one line on stderr, got:\n{}",
            self.stderr
        );
        assert!(lines[0].starts_with("error: "), "{}", lines[0]);
        lines[0].to_owned()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

/// A hub (kube-sandbox, alone or in front of the real API server: its
/// [`Lane`]) plus a temp dir holding its admin kubeconfig.
pub struct Hub {
    pub sandbox: Sandbox,
    pub dir: TempDir,
    pub kubeconfig: PathBuf,
}

impl Hub {
    /// A hub with the fleet CRDs installed.
    pub fn new() -> Self {
        Self::on(Lane::Sandbox)
    }

    /// A hub on `lane` with the fleet CRDs installed.
    pub fn on(lane: Lane) -> Self {
        let hub = Self::bare_on(lane, SandboxOptions::default());
        hub.install_crds();
        hub
    }

    /// A hub whose TokenRequest lifetime is capped, with CRDs.
    pub fn with_token_cap(cap: std::time::Duration) -> Self {
        let hub = Self::bare(SandboxOptions {
            max_token_expiration: Some(cap),
            ..Default::default()
        });
        hub.install_crds();
        hub
    }

    /// A hub without the fleet CRDs.
    pub fn bare(options: SandboxOptions) -> Self {
        Self::bare_on(Lane::Sandbox, options)
    }

    /// A hub on `lane` without the fleet CRDs.
    pub fn bare_on(lane: Lane, options: SandboxOptions) -> Self {
        let sandbox = lane.sandbox_with(options);
        let dir = TempDir::new("hub");
        let kubeconfig = dir.path().join("admin.kubeconfig");
        sandbox.write_admin_kubeconfig(&kubeconfig).unwrap();
        Hub {
            sandbox,
            dir,
            kubeconfig,
        }
    }

    pub fn install_crds(&self) {
        self.fleet(&["install", "--crds-only", "--apply"]).ok();
    }

    /// Runs `kubectl-fleet --kubeconfig ADMIN ARGS…` (no TTY, no colour,
    /// no ambient kubeconfig).
    pub fn fleet(&self, args: &[&str]) -> Run {
        let mut full = vec!["--kubeconfig", self.kubeconfig.to_str().unwrap()];
        full.extend_from_slice(args);
        run_bin(&full, self.dir.path())
    }

    /// Runs the binary with a kubeconfig that authenticates with `token`.
    pub fn fleet_as(&self, token: &str, args: &[&str]) -> Run {
        let path = self
            .dir
            .path()
            .join(format!("token-{}.kubeconfig", token.len() ^ args.len()));
        std::fs::write(&path, self.sandbox.kubeconfig_for_token(token)).unwrap();
        let mut full = vec!["--kubeconfig", path.to_str().unwrap()];
        full.extend_from_slice(args);
        run_bin(&full, self.dir.path())
    }

    /// The real `kubectl ARGS…` against this hub as its admin
    /// ([`Kubectl`]); `hub.kubectl(&["fleet", "status"])` runs the plugin.
    pub fn kubectl(&self, args: &[&str]) -> Run {
        Kubectl::new(&self.kubeconfig).args(args).run()
    }

    /// `register SITE -o json EXTRA…`, returning the parsed summary.
    pub fn register(&self, site: &str, extra: &[&str]) -> serde_json::Value {
        let mut args = vec!["register", site, "-o", "json"];
        args.extend_from_slice(extra);
        self.fleet(&args).ok().json()
    }

    pub async fn admin(&self) -> kube::Client {
        client_from_yaml(&self.sandbox.admin_kubeconfig()).await
    }

    /// Records in the FederationStatus singleton, as a hub leader would,
    /// that `leader` judged every site at `at`, recording every
    /// `interval_seconds` (creates the singleton when missing).
    pub async fn record_hub_judgement(
        &self,
        leader: &str,
        at: jiff::Timestamp,
        interval_seconds: i64,
    ) {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
        use kube::api::{Api, Patch, PatchParams, PostParams};
        use kubectl_fleet::api::{FederationStatus, HubLiveness};
        let api: Api<FederationStatus> = Api::all(self.admin().await);
        if api.get_opt("fleet").await.unwrap().is_none() {
            api.create(
                &PostParams::default(),
                &FederationStatus::singleton(Default::default()),
            )
            .await
            .unwrap();
        }
        let record = HubLiveness {
            leader: leader.to_owned(),
            leader_since: Some(Time(at)),
            last_judgement_time: Time(at),
            interval_seconds,
        };
        api.patch_status(
            "fleet",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({ "status": { "hub": record } })),
        )
        .await
        .unwrap();
    }
}

/// `program` as a user of `hub` runs it: kubectl-fleet and the real
/// kubectl first on PATH, KUBECONFIG the hub's admin kubeconfig, and the
/// working directory, HOME and kubectl's cache in the hub's temp dir (so
/// relative paths never land in the repository); no colour
/// ([`super::kubectl::user_env`], as [`Kubectl`] runs kubectl).
pub fn user_command(hub: &Hub, program: &str) -> Command {
    let mut command = Command::new(program);
    command.current_dir(hub.dir.path());
    user_env(&mut command, &hub.kubeconfig, hub.dir.path());
    command
}

/// Runs `sh -c SCRIPT` as a user of `hub` ([`user_command`]).
pub fn shell(hub: &Hub, script: &str) -> Run {
    let output = user_command(hub, "/bin/sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .output()
        .expect("run sh");
    Run::from(output)
}

/// Runs the binary with a clean environment rooted at `home`.
pub fn run_bin(args: &[&str], home: &Path) -> Run {
    let output = Command::new(BIN)
        .args(args)
        .env_remove("KUBECONFIG")
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run kubectl-fleet");
    Run::from(output)
}

/// A client from kubeconfig YAML (e.g. the one `register` printed).
pub async fn client_from_yaml(yaml: &str) -> kube::Client {
    let kc = kube::config::Kubeconfig::from_yaml(yaml).expect("valid kubeconfig");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .expect("usable kubeconfig");
    kube::Client::try_from(cfg).unwrap()
}

/// The token inside a kubeconfig's first user.
pub fn token_of(kubeconfig_yaml: &str) -> String {
    let doc: serde_json::Value = serde_saphyr::from_str(kubeconfig_yaml).expect("kubeconfig YAML");
    doc["users"][0]["user"]["token"]
        .as_str()
        .expect("token auth")
        .to_owned()
}

/// The HTTP status code of a failed API call (0 if it did not fail with one).
pub fn status_code<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> u16 {
    match result {
        Err(kube::Error::Api(status)) => status.code,
        Err(other) => panic!("expected an API status, got {other:?}"),
        Ok(v) => panic!("expected a failure, got {v:?}"),
    }
}

/// Arguments of an in-process hub operator over `kubeconfig`: no leader
/// election, loopback probe and HTTPS ports, every interval scaled by `scale`.
pub fn hub_operator_args(kubeconfig: &Path, scale: f64) -> kubectl_fleet::operator::Args {
    use clap::Parser as _;
    kubectl_fleet::operator::Args::parse_from([
        "fleet-operator",
        "--kubeconfig",
        kubeconfig.to_str().unwrap(),
        "--health-addr",
        "127.0.0.1:0",
        "--secure-addr",
        "127.0.0.1:0",
        "--leader-elect=false",
        "--interval-scale",
        &scale.to_string(),
    ])
}
