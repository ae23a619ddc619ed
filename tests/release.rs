//! A smoke-sized run of the release command (`tools/release/release.py`) on
//! a throwaway git checkout of the release inputs, with the debug binaries
//! (`FLEET_RELEASE_BIN_DIR`): it publishes the binaries, the krew archive and
//! manifest with matching sha256, the operator image as an OCI archive and
//! a checksum file; it refuses a dirty tree and disagreeing versions.

mod cli_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use cli_support::{BIN, Run, TempDir};

const INPUTS: &[&str] = &[
    "Cargo.toml",
    "krew-manifest.yaml",
    "Containerfile",
    "LICENSE",
    "completions/kubectl_complete-fleet",
    "tools/image/build.py",
    "tools/release/release.py",
];

fn git(repo: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=release-test",
            "-c",
            "user.email=release@test.invalid",
        ])
        .args(args)
        .current_dir(repo)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A git repository holding a committed copy of the release inputs.
fn checkout(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    for input in INPUTS {
        let target = repo.join(input);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join(input), &target).unwrap();
    }
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "release inputs"]);
    repo
}

fn release(repo: &Path, dist: &Path) -> Run {
    Run::from(
        Command::new("python3")
            .arg(repo.join("tools/release/release.py"))
            .arg("--dist")
            .arg(dist)
            .env("FLEET_RELEASE_BIN_DIR", Path::new(BIN).parent().unwrap())
            .output()
            .unwrap(),
    )
}

fn list_tar(path: &Path) -> Vec<String> {
    let out = Command::new("tar").arg("-tf").arg(path).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn release_publishes_every_artifact_with_checksums() {
    let dir = TempDir::new("release");
    let repo = checkout(dir.path());
    let dist = repo.join("dist");
    let v = env!("CARGO_PKG_VERSION");
    let platform = match std::env::consts::ARCH {
        "x86_64" => "linux-amd64",
        "aarch64" => "linux-arm64",
        other => panic!("no krew platform for {other}"),
    };
    release(&repo, &dist).ok();

    let mut files: Vec<String> = std::fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "SHA256SUMS".to_owned(),
            format!("fleet-operator-v{v}-{platform}"),
            format!("fleet-operator-v{v}-oci.tar"),
            "fleet.yaml".to_owned(),
            format!("kubectl-fleet-v{v}-{platform}"),
            format!("kubectl-fleet-v{v}-{platform}.tar.gz"),
        ]
    );
    // The checksum file covers everything else and verifies.
    let check = Command::new("sha256sum")
        .args(["--check", "--strict", "SHA256SUMS"])
        .current_dir(&dist)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    let sums = std::fs::read_to_string(dist.join("SHA256SUMS")).unwrap();
    assert_eq!(sums.lines().count(), files.len() - 1, "{sums}");

    // The krew archive holds what the manifest's `files` name, and the
    // manifest carries its checksum (and no placeholder).
    let archive = format!("kubectl-fleet-v{v}-{platform}.tar.gz");
    let mut entries = list_tar(&dist.join(&archive));
    entries.sort();
    assert_eq!(
        entries,
        ["LICENSE", "kubectl-fleet", "kubectl_complete-fleet"]
    );
    let archive_sum = sums
        .lines()
        .find(|l| l.ends_with(&archive))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    let manifest: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(dist.join("fleet.yaml")).unwrap()).unwrap();
    let platforms = manifest["spec"]["platforms"].as_array().unwrap();
    assert_eq!(platforms.len(), 1, "only the platform built here");
    assert_eq!(platforms[0]["sha256"], archive_sum);
    assert_eq!(manifest["spec"]["version"], format!("v{v}"));
    assert!(
        platforms[0]["uri"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/v{v}/{archive}"))
    );

    // The image is an OCI archive tagged with the version.
    let image = dist.join(format!("fleet-operator-v{v}-oci.tar"));
    let entries = list_tar(&image);
    assert!(
        entries.contains(&"oci-layout".to_owned()) && entries.contains(&"index.json".to_owned())
    );
    let index = Command::new("tar")
        .arg("-xOf")
        .arg(&image)
        .arg("index.json")
        .output()
        .unwrap();
    let index: serde_json::Value = serde_json::from_slice(&index.stdout).unwrap();
    assert_eq!(
        index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"],
        format!("v{v}")
    );
}

#[test]
fn release_refuses_a_dirty_tree_and_disagreeing_versions() {
    let dir = TempDir::new("release-refuses");
    let repo = checkout(dir.path());
    let dist = dir.path().join("dist");

    std::fs::write(repo.join("stray.txt"), "not committed").unwrap();
    let line = release(&repo, &dist).one_line_error();
    assert!(
        line.contains("the working tree is dirty") && line.contains("stray.txt"),
        "{line}"
    );
    std::fs::remove_file(repo.join("stray.txt")).unwrap();

    let manifest = repo.join("krew-manifest.yaml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace(
            &format!("version: v{}", env!("CARGO_PKG_VERSION")),
            "version: v9.9.9",
        ),
    )
    .unwrap();
    git(&repo, &["commit", "-q", "-am", "bump only the manifest"]);
    let line = release(&repo, &dist).one_line_error();
    assert!(
        line.contains("versions disagree")
            && line.contains("krew-manifest.yaml spec.version says 9.9.9"),
        "{line}"
    );
    assert!(!dist.exists(), "nothing is published when the checks fail");
}
