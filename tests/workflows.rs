//! The GitHub Actions workflows (`.github/workflows/`) pass actionlint,
//! with shellcheck checking their `run:` scripts, and say what
//! docs/platforms.md says: the release builds the CLI on a runner of every
//! platform the krew manifest lists, and CI runs the README's test command.
//! tools/test.sh installs actionlint (PyPI) and shellcheck (Debian).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn workflows() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join(".github/workflows"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    files.sort();
    files
}

/// actionlint (`ACTIONLINT`, else PATH), with shellcheck on PATH (actionlint
/// checks `run:` scripts with it); missing, see [`crate::support::require_tools`].
fn actionlint() -> Option<PathBuf> {
    let [actionlint, _] = crate::support::require_tools(["actionlint", "shellcheck"])?;
    Some(actionlint)
}

/// actionlint's verdict on `files` and its report.
fn lint(actionlint: &Path, files: &[PathBuf]) -> (bool, String) {
    let out = Command::new(actionlint)
        .args(["-no-color", "-oneline"])
        .args(files)
        .current_dir(repo())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn yaml(path: &Path) -> Value {
    serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn every_workflow_passes_actionlint() {
    let Some(actionlint) = actionlint() else {
        return;
    };
    let files = workflows();
    assert!(files.len() >= 2, "{files:?}");
    let (ok, report) = lint(&actionlint, &files);
    assert!(ok, "actionlint:\n{report}");
}

/// The lint is not a formality: a mistake in an expression and one in a
/// `run:` script (shellcheck's) are each reported.
#[test]
fn actionlint_reports_expression_and_script_mistakes() {
    let Some(actionlint) = actionlint() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ci = std::fs::read_to_string(repo().join(".github/workflows/ci.yml")).unwrap();
    let broken = dir.path().join("broken.yml");
    let bad_step =
        "      - name: Broken\n        run: echo ${{ matrix.nowhere }} && cd $HOME/unquoted\n";
    std::fs::write(
        &broken,
        ci.replacen("    steps:\n", &format!("    steps:\n{bad_step}"), 1),
    )
    .unwrap();
    let (ok, report) = lint(&actionlint, &[broken]);
    assert!(!ok, "{report}");
    assert!(
        report.contains("matrix.nowhere") || report.contains("nowhere"),
        "{report}"
    );
    assert!(
        report.contains("SC2086") || report.contains("shellcheck"),
        "{report}"
    );
}

/// The release workflow builds kubectl-fleet for exactly the platforms the
/// krew manifest template lists: linux/amd64 in the publish job (which
/// also builds the operator image, arm64 through tools/cross/build.sh),
/// the others on their own runners.
#[test]
fn the_release_builds_every_krew_platform_on_its_own_runner() {
    let manifest = yaml(&repo().join("krew-manifest.yaml"));
    let mut krew: Vec<String> = manifest["spec"]["platforms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let labels = &p["selector"]["matchLabels"];
            format!(
                "{}-{}",
                labels["os"].as_str().unwrap(),
                labels["arch"].as_str().unwrap()
            )
        })
        .collect();
    krew.sort();

    let release = yaml(&repo().join(".github/workflows/release.yml"));
    let jobs = &release["jobs"];
    let matrix = jobs["cli"]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap();
    let mut built: Vec<String> = matrix
        .iter()
        .map(|m| m["platform"].as_str().unwrap().to_owned())
        .collect();
    for m in matrix {
        let (os, arch) = m["platform"].as_str().unwrap().split_once('-').unwrap();
        let runner = m["runner"].as_str().unwrap();
        let native = match os {
            "linux" => {
                runner.starts_with("ubuntu-") && (arch == "arm64") == runner.ends_with("-arm")
            }
            "darwin" => {
                runner.starts_with("macos-") && (arch == "amd64") == runner.ends_with("-intel")
            }
            "windows" => runner.starts_with("windows-") && !runner.ends_with("-arm"),
            _ => false,
        };
        assert!(
            native,
            "{os}/{arch} is built on {runner}, not its own platform"
        );
    }
    let steps = |job: &str| -> String {
        jobs[job]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["run"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(steps("cli").contains("release.py --cli-only"));
    let publish = steps("publish");
    assert_eq!(jobs["publish"]["runs-on"], "ubuntu-24.04", "linux/amd64");
    assert!(publish.contains("tools/release/release.py --dist dist"));
    assert!(publish.contains("tools/cross/build.sh --release"));
    assert!(publish.contains("--arm64-bin-dir") && publish.contains("--push"));
    built.push("linux-amd64".into());
    built.sort();
    assert_eq!(built, krew);
}

/// CI runs the README's test command on pull requests.
#[test]
fn ci_runs_the_readme_test_command_on_pull_requests() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let section = readme
        .split("## Run the tests")
        .nth(1)
        .expect("README has a Run the tests section");
    let command = section
        .lines()
        .find(|l| l.starts_with("bash "))
        .expect("a bash command in it")
        .trim();
    let ci = yaml(&repo().join(".github/workflows/ci.yml"));
    assert!(
        ci["on"].as_object().unwrap().contains_key("pull_request"),
        "{}",
        ci["on"]
    );
    let runs: Vec<&str> = ci["jobs"]["test"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    assert!(
        runs.iter().any(|r| r.trim() == command),
        "ci.yml runs {command:?}: {runs:?}"
    );
}
