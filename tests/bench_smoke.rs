//! A smoke-sized run of the release benchmark harness
//! (`tools/bench/cli.py --smoke`) on this build's binaries, so the harness
//! cannot rot between the runs written down in docs/benchmarks-cli.md.
//! Only that it runs and reports every measure is checked, never a figure;
//! the smoke pass needs neither a release build nor the real API server.

use std::path::Path;
use std::process::Command;

#[test]
fn cli_bench_harness_smoke() {
    if crate::support::require_tools(["python3", "curl", "kubectl", "/usr/bin/time"]).is_none() {
        return;
    }
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_kubectl-fleet"))
        .parent()
        .unwrap();
    if !bin_dir.join("kube-sandbox").is_file() {
        // Built with the rest of the workspace; alone, build it here.
        let built = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "-p", "kube-sandbox", "--bin", "kube-sandbox"])
            .status()
            .expect("run cargo");
        assert!(built.success());
    }
    let root = env!("CARGO_MANIFEST_DIR");
    let harness = Path::new(root).join("tools/bench/cli.py");
    // The BENCH-RESULT parser the goal table is built with (operator_bench's
    // lines and the harness's own): malformed lines rejected, targets judged.
    let selftest = Command::new("python3")
        .arg(&harness)
        .arg("--self-test")
        .output()
        .expect("run python3");
    assert!(
        selftest.status.success(),
        "{}",
        String::from_utf8_lossy(&selftest.stderr)
    );
    let out = Command::new("python3")
        .arg(&harness)
        .args(["--smoke", "--bin-dir"])
        .arg(bin_dir)
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for expected in [
        "| 120 | `curl GET list` |",
        "| 120 | `kubectl get fc -o json` |",
        "| 120 | `kubectl fleet status -o json` |",
        "| 120 | `kubectl fleet status` |",
        "| P1 | status -o json peak RSS (120 sites, kube-sandbox) |",
        "| P1b | status (table) wall / kubectl get fc (120 sites, kube-sandbox) |",
        "| P2 | `kubectl-fleet --help` start, median of 30 |",
        "| 120 | json wall / curl | ≤ 1.5× |",
        "| `kubectl-fleet` |",
        "| `fleet-operator` |",
        "| P1w | `kubectl fleet status --watch` CPU / `kubectl get fc --watch`'s (60 sites,",
        "| `kubectl fleet status --watch -o json` |",
        "| `/bin/true` (the floor) |",
    ] {
        assert!(stdout.contains(expected), "no {expected:?} in:\n{stdout}");
    }
    // Every figure in the goal table came through a BENCH-RESULT line.
    let emitted = stderr
        .lines()
        .filter(|l| l.starts_with("BENCH-RESULT {"))
        .count();
    let rows = stdout.lines().filter(|l| l.starts_with("| P")).count();
    assert!(
        emitted > 0 && rows == emitted,
        "{emitted} lines, {rows} rows:\n{stdout}"
    );
}
