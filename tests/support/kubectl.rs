//! The one way the tests run the real `kubectl`: [`Kubectl`], a command
//! line with a kubeconfig, arguments and optional stdin, run as a user
//! runs it, whose result is a [`Run`] (exit code, stdout, stderr).
//!
//! ```ignore
//! let run = Kubectl::new(&hub.kubeconfig).args(["fleet", "status"]).run();
//! let out = Kubectl::new(&kc).args(["apply", "-f", "-"]).stdin(yaml).ok();
//! ```

use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::cli::{BIN, Run};

/// The kubectl binary: the first on PATH (the project's machines have
/// /usr/bin/kubectl; tools/test.sh may install one elsewhere).
pub fn kubectl() -> PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join("kubectl"))
        .find(|p| p.is_file())
        .expect("kubectl must be on PATH for the kubectl tests")
}

/// The PATH a user of the built plugin has: the directory of the built
/// `kubectl-fleet` first (kubectl finds the plugin there, as after `krew
/// install fleet`), then kubectl's, then /usr/bin:/bin.
pub fn user_path() -> OsString {
    let bin_dir = Path::new(BIN).parent().unwrap();
    let kubectl = kubectl();
    std::env::join_paths([
        bin_dir,
        kubectl.parent().unwrap(),
        Path::new("/usr/bin"),
        Path::new("/bin"),
    ])
    .unwrap()
}

/// Sets what a user's shell would hold for `command` against the cluster
/// of `kubeconfig`: [`user_path`], `KUBECONFIG`, `HOME` and kubectl's
/// cache (`KUBECACHEDIR`) in `home`, no colour.
pub fn user_env(command: &mut Command, kubeconfig: &Path, home: &Path) {
    command
        .env("PATH", user_path())
        .env("KUBECONFIG", kubeconfig)
        .env("KUBECACHEDIR", home.join("kube-cache"))
        .env("HOME", home)
        .env("NO_COLOR", "1");
}

/// One run of the real kubectl. Nothing comes from this process's
/// environment: PATH, KUBECONFIG, HOME and the cache are set explicitly
/// ([`user_env`]), so a developer's own kubeconfig is never touched and
/// `kubectl fleet …` runs the plugin this build made.
pub struct Kubectl {
    command: Command,
    shown: Vec<String>,
    stdin: Option<Vec<u8>>,
}

impl Kubectl {
    /// `kubectl` against the cluster of `kubeconfig` (as `KUBECONFIG`, which
    /// the plugin inherits; `kubectl --kubeconfig X fleet …` would not pass
    /// it on), with HOME and kubectl's cache beside the kubeconfig.
    pub fn new(kubeconfig: &Path) -> Self {
        let home = kubeconfig.parent().unwrap_or(Path::new("/"));
        let mut command = Command::new(kubectl());
        command.env_clear();
        user_env(&mut command, kubeconfig, home);
        Kubectl {
            command,
            shown: Vec::new(),
            stdin: None,
        }
    }

    /// `kubectl` with no cluster at all (e.g. `kubectl kustomize DIR`):
    /// KUBECONFIG names a file that does not exist, HOME is a fresh
    /// temp dir's.
    pub fn offline(home: &Path) -> Self {
        let mut command = Command::new(kubectl());
        command.env_clear();
        user_env(&mut command, &home.join("no-kubeconfig"), home);
        Kubectl {
            command,
            shown: Vec::new(),
            stdin: None,
        }
    }

    pub fn arg(mut self, arg: impl AsRef<std::ffi::OsStr>) -> Self {
        self.shown.push(arg.as_ref().to_string_lossy().into_owned());
        self.command.arg(arg);
        self
    }

    pub fn args<I, S>(self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        args.into_iter().fold(self, Kubectl::arg)
    }

    /// Feeds `text` to kubectl's stdin (else stdin is empty, as in a pipe
    /// that was closed: never the test runner's terminal).
    pub fn stdin(mut self, text: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(text.into());
        self
    }

    /// Sets one environment variable for this run (after the defaults).
    pub fn env(
        mut self,
        key: impl AsRef<std::ffi::OsStr>,
        value: impl AsRef<std::ffi::OsStr>,
    ) -> Self {
        self.command.env(key, value);
        self
    }

    /// Replaces PATH with exactly `dirs` then /usr/bin:/bin (for a test of
    /// what kubectl finds on a PATH of its own, e.g. krew's bin dir only).
    pub fn path(mut self, dirs: &[&Path]) -> Self {
        let path = std::env::join_paths(
            dirs.iter()
                .copied()
                .chain([Path::new("/usr/bin"), Path::new("/bin")]),
        )
        .unwrap();
        self.command.env("PATH", path);
        self
    }

    /// Runs kubectl to the end.
    pub fn run(mut self) -> Run {
        self.command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = self
            .command
            .spawn()
            .unwrap_or_else(|e| panic!("kubectl {:?}: {e}", self.shown));
        let mut input = child.stdin.take().unwrap();
        if let Some(text) = &self.stdin {
            input.write_all(text).unwrap();
        }
        drop(input);
        Run::from(child.wait_with_output().unwrap())
    }

    /// Runs kubectl, panicking with the command line and both streams
    /// unless it exits 0.
    #[track_caller]
    pub fn ok(self) -> Run {
        let shown = self.shown.join(" ");
        let run = self.run();
        assert_eq!(
            run.code, 0,
            "kubectl {shown} failed\nstdout:\n{}\nstderr:\n{}",
            run.stdout, run.stderr
        );
        run
    }
}
