//! A smoke-sized run of the release command (`tools/release/release.py`) on
//! a throwaway git checkout of the release inputs, with the debug binaries
//! (`FLEET_RELEASE_BIN_DIR`): it publishes the binaries, the krew archive and
//! manifest with matching sha256, the operator image as an OCI archive and
//! a checksum file; it refuses a dirty tree, disagreeing versions and a
//! foreign archive missing a file. The filled krew manifest passes krew's
//! rules (`krew_violations`), and the archive, installed the way krew
//! installs it into a scratch `KREW_ROOT`, runs as `kubectl fleet` through
//! the real kubectl, completion helper included.
//!
//! With the linux/arm64 build (tools/cross/build.sh) the release also holds
//! the arm64 binaries and krew archive and an image index of both
//! architectures, which `--push` copies to a Distribution registry
//! (Debian's docker-registry on 127.0.0.1) and skopeo pulls back by digest.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use support::{BIN, Run, TempDir};

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
    release_with(repo, dist, &[])
}

fn release_with(repo: &Path, dist: &Path, extra: &[&str]) -> Run {
    let mut cmd = Command::new("python3");
    cmd.arg(repo.join("tools/release/release.py"))
        .arg("--dist")
        .arg(dist)
        .args(extra)
        .env("FLEET_RELEASE_BIN_DIR", Path::new(BIN).parent().unwrap());
    if let Some(tools) = std::env::var_os("FLEET_IMAGE_TOOLS") {
        let mut path = vec![PathBuf::from(tools)];
        path.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        cmd.env("PATH", std::env::join_paths(path).unwrap());
    }
    Run::from(cmd.output().unwrap())
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
            format!("kubectl-fleet-v{v}-{platform}"),
            format!("kubectl-fleet-v{v}-{platform}.tar.gz"),
            "plugins".to_owned(),
        ]
    );
    // The krew index entry, as this repository's index serves it.
    let manifest_path = dist.join("plugins/fleet.yaml");
    assert_eq!(
        std::fs::read_dir(dist.join("plugins")).unwrap().count(),
        1,
        "plugins/ holds only the manifest"
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
    assert!(sums.contains("  plugins/fleet.yaml\n"), "{sums}");

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
    let manifest_text = std::fs::read_to_string(&manifest_path).unwrap();
    let manifest: Value = serde_saphyr::from_str(&manifest_text).unwrap();
    assert_eq!(
        krew_violations("fleet.yaml", &manifest, &dist),
        Vec::<String>::new()
    );
    let platforms = manifest["spec"]["platforms"].as_array().unwrap();
    // Only this machine's platform is built in this run (the arm64 one
    // comes with --arm64-bin-dir, below; darwin and windows on their own
    // runners), so the manifest claims no other.
    assert_eq!(platforms.len(), 1, "only the platform built here");
    assert_eq!(platforms[0]["sha256"], archive_sum);
    assert_eq!(manifest["spec"]["version"], format!("v{v}"));
    assert!(
        platforms[0]["uri"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/v{v}/{archive}"))
    );
    let (os, arch) = platform.split_once('-').unwrap();
    installed_by_krew_runs_through_kubectl(dir.path(), &manifest_text, &dist, os, arch);

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

    // An archive for another platform, put into dist by hand, must hold
    // every file the manifest installs: checked before anything is built.
    let foreign = dir.path().join("dist-foreign");
    std::fs::create_dir_all(foreign.join("files")).unwrap();
    std::fs::write(foreign.join("files/kubectl-fleet"), "binary").unwrap();
    let archive = format!(
        "kubectl-fleet-v{}-darwin-arm64.tar.gz",
        env!("CARGO_PKG_VERSION")
    );
    let tar = Command::new("tar")
        .arg("-czf")
        .arg(foreign.join(&archive))
        .arg("-C")
        .arg(foreign.join("files"))
        .arg("kubectl-fleet")
        .status()
        .unwrap();
    assert!(tar.success());
    std::fs::remove_dir_all(foreign.join("files")).unwrap();
    let line = release(&repo, &foreign).one_line_error();
    assert!(
        line.contains(&format!("{archive} has no kubectl_complete-fleet")),
        "{line}"
    );
    let left: Vec<_> = std::fs::read_dir(&foreign)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, [archive.as_str()], "nothing is published");

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

/// Every platform a krew selector could name: enough to see two entries
/// claim the same one.
const KREW_OS_ARCH: &[(&str, &str)] = &[
    ("linux", "amd64"),
    ("linux", "arm64"),
    ("linux", "arm"),
    ("linux", "386"),
    ("darwin", "amd64"),
    ("darwin", "arm64"),
    ("windows", "amd64"),
    ("windows", "arm64"),
    ("windows", "386"),
];

/// `*` and `?` as in a krew `files.from` pattern (neither crosses `/`).
fn glob(pattern: &[u8], name: &[u8]) -> bool {
    match (pattern.split_first(), name.split_first()) {
        (None, None) => true,
        (Some((b'*', rest)), _) => {
            glob(rest, name)
                || name
                    .split_first()
                    .is_some_and(|(c, tail)| *c != b'/' && glob(pattern, tail))
        }
        (Some((b'?', rest)), Some((c, tail))) => *c != b'/' && glob(rest, tail),
        (Some((p, rest)), Some((c, tail))) => p == c && glob(rest, tail),
        _ => false,
    }
}

/// Whether a platform's selector (`matchLabels` only) picks `os`/`arch`.
fn selects(platform: &Value, os: &str, arch: &str) -> bool {
    let labels = platform["selector"]["matchLabels"].as_object();
    labels.is_some_and(|labels| {
        labels.iter().all(|(k, v)| match k.as_str() {
            "os" => v == os,
            "arch" => v == arch,
            _ => false,
        })
    })
}

/// Where each file of an archive ends up: `files` move every entry a
/// `from` pattern matches into the `to` directory under its base name. One
/// violation per `from` that matches nothing.
fn installed_files(platform: &Value, entries: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut installed, mut violations) = (Vec::new(), Vec::new());
    for op in platform["files"].as_array().into_iter().flatten() {
        let from = op["from"].as_str().unwrap_or("");
        let to = op["to"].as_str().unwrap_or(".").trim_end_matches('/');
        let matched: Vec<&String> = entries
            .iter()
            .filter(|e| glob(from.as_bytes(), e.as_bytes()))
            .collect();
        if matched.is_empty() {
            violations.push(format!(
                "files.from {from:?} matches nothing in the archive"
            ));
        }
        for entry in matched {
            let base = entry.rsplit('/').next().unwrap();
            installed.push(match to {
                "" | "." => base.to_owned(),
                dir => format!("{}/{base}", dir.trim_start_matches("./")),
            });
        }
    }
    (installed, violations)
}

/// What krew (its index validation and `krew install`) would reject in the
/// manifest stored as `file_name`, with the archives its URIs name looked
/// up in `archives`. Empty when it passes.
fn krew_violations(file_name: &str, manifest: &Value, archives: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let name = manifest["metadata"]["name"].as_str().unwrap_or("");
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        out.push(format!("plugin name {name:?} is not [A-Za-z0-9_-]+"));
    }
    if file_name != format!("{name}.yaml") {
        out.push(format!("file {file_name} holds plugin {name:?}"));
    }
    if manifest["apiVersion"] != "krew.googlecontainertools.github.com/v1alpha2"
        || manifest["kind"] != "Plugin"
    {
        out.push("not a krew v1alpha2 Plugin".to_owned());
    }
    let spec = &manifest["spec"];
    let version = spec["version"].as_str().unwrap_or("");
    let semver = version.strip_prefix('v').is_some_and(|rest| {
        let core = rest.split(['-', '+']).next().unwrap();
        let parts: Vec<&str> = core.split('.').collect();
        parts.len() == 3
            && parts.iter().all(|p| {
                !p.is_empty()
                    && p.bytes().all(|b| b.is_ascii_digit())
                    && (p.len() == 1 || !p.starts_with('0'))
            })
    });
    if !semver {
        out.push(format!(
            "version {version:?} is not semver with a leading v"
        ));
    }
    let short = spec["shortDescription"].as_str().unwrap_or("");
    if short.is_empty() || short.chars().count() > 50 {
        out.push(format!(
            "shortDescription {short:?} is empty or over 50 characters"
        ));
    }
    let platforms = spec["platforms"].as_array().cloned().unwrap_or_default();
    if platforms.is_empty() {
        out.push("no platforms".to_owned());
    }
    for (os, arch) in KREW_OS_ARCH {
        let n = platforms.iter().filter(|p| selects(p, os, arch)).count();
        if n > 1 {
            out.push(format!("{n} platforms select {os}/{arch}"));
        }
    }
    for (i, p) in platforms.iter().enumerate() {
        let at = format!("platform {i}");
        let labels = p["selector"]["matchLabels"].as_object();
        if labels.is_none_or(|l| l.is_empty() || l.keys().any(|k| k != "os" && k != "arch"))
            || !p["selector"]["matchExpressions"].is_null()
        {
            out.push(format!(
                "{at}: selector missing, empty or not os/arch matchLabels"
            ));
        }
        let sha = p["sha256"].as_str().unwrap_or("");
        if sha.len() != 64 || !sha.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            out.push(format!(
                "{at}: sha256 {sha:?} is not 64 lowercase hex digits"
            ));
        }
        let uri = p["uri"].as_str().unwrap_or("");
        if !uri.starts_with("https://") {
            out.push(format!("{at}: uri {uri:?} is not https"));
        }
        let archive = archives.join(uri.rsplit('/').next().unwrap());
        if !archive.is_file() {
            out.push(format!("{at}: claims {uri}, which was not built"));
            continue;
        }
        let actual = hex(&Sha256::digest(std::fs::read(&archive).unwrap()));
        if actual != sha {
            out.push(format!("{at}: sha256 is not the archive's ({actual})"));
        }
        if p["files"].as_array().is_none_or(Vec::is_empty) {
            out.push(format!("{at}: no files"));
        }
        let (installed, missing) = installed_files(p, &list_tar(&archive));
        out.extend(missing.into_iter().map(|m| format!("{at}: {m}")));
        let license = installed.iter().any(|f| {
            let base = f.rsplit('/').next().unwrap().to_ascii_uppercase();
            base.starts_with("LICENSE") || base.starts_with("COPYING")
        });
        if !license {
            out.push(format!("{at}: installs no license file ({installed:?})"));
        }
        let bin = p["bin"].as_str().unwrap_or("").trim_start_matches("./");
        if bin.is_empty() || !installed.iter().any(|f| f == bin) {
            out.push(format!(
                "{at}: bin {bin:?} is not an installed file ({installed:?})"
            ));
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn symlink(target: &Path, link: &Path) {
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// Installs the `os`/`arch` platform of the manifest the way
/// `kubectl krew install` lays it out under `KREW_ROOT` (`store/NAME/VERSION`
/// with the `files`, `bin/kubectl-NAME` linked to its `bin`, the receipt),
/// then runs it through the real kubectl with only `KREW_ROOT/bin` providing
/// plugins, and completes through the helper the caveats say to copy.
fn installed_by_krew_runs_through_kubectl(
    scratch: &Path,
    manifest_text: &str,
    dist: &Path,
    os: &str,
    arch: &str,
) {
    let manifest: Value = serde_saphyr::from_str(manifest_text).unwrap();
    let name = manifest["metadata"]["name"].as_str().unwrap();
    let version = manifest["spec"]["version"].as_str().unwrap();
    let platform = manifest["spec"]["platforms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| selects(p, os, arch))
        .unwrap_or_else(|| panic!("no platform selects {os}/{arch}"));
    let uri = platform["uri"].as_str().unwrap();
    let archive = dist.join(uri.rsplit('/').next().unwrap());
    assert_eq!(
        hex(&Sha256::digest(std::fs::read(&archive).unwrap())),
        platform["sha256"],
        "krew checks the download against sha256"
    );

    let root = scratch.join("krew");
    let staging = scratch.join("krew-download");
    std::fs::create_dir_all(&staging).unwrap();
    let untar = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&staging)
        .status()
        .unwrap();
    assert!(untar.success());
    let store = root.join("store").join(name).join(version);
    let entries = list_tar(&archive);
    for op in platform["files"].as_array().unwrap() {
        let to = match op["to"].as_str().unwrap().trim_end_matches('/') {
            "" | "." => store.clone(),
            dir => store.join(dir),
        };
        std::fs::create_dir_all(&to).unwrap();
        for entry in entries
            .iter()
            .filter(|e| glob(op["from"].as_str().unwrap().as_bytes(), e.as_bytes()))
        {
            let base = entry.rsplit('/').next().unwrap();
            std::fs::rename(staging.join(entry), to.join(base)).unwrap();
        }
    }
    let bin = store.join(platform["bin"].as_str().unwrap());
    symlink(&bin, &root.join("bin").join(format!("kubectl-{name}")));
    let receipts = root.join("receipts");
    std::fs::create_dir_all(&receipts).unwrap();
    std::fs::write(
        receipts.join(format!("{name}.yaml")),
        format!("{manifest_text}status:\n  source:\n    name: kubectl-fleet\n"),
    )
    .unwrap();

    // kubectl alone in its own directory; /usr/bin:/bin only for sh.
    let tools = scratch.join("tools");
    symlink(&support::kubectl(), &tools.join("kubectl"));
    let user_bin = scratch.join("user-bin");
    std::fs::create_dir_all(&user_bin).unwrap();
    let home = scratch.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let kubectl = |path: &[&Path], args: &[&str]| {
        support::Kubectl::offline(&home)
            .path(path)
            .env("KREW_ROOT", &root)
            .args(args)
            .run()
    };
    let krew_bin = root.join("bin");
    let plugins = kubectl(&[&krew_bin, &tools], &["plugin", "list"]);
    let fleet_plugins: Vec<&str> = plugins
        .stdout
        .lines()
        .filter(|l| l.contains("kubectl-fleet"))
        .collect();
    assert_eq!(
        fleet_plugins,
        [krew_bin.join("kubectl-fleet").to_str().unwrap()],
        "{}{}",
        plugins.stdout,
        plugins.stderr
    );
    let run = kubectl(&[&krew_bin, &tools], &["fleet", "version"]).ok();
    assert_eq!(
        run.stdout,
        format!("kubectl-fleet {}\n", version.strip_prefix('v').unwrap())
    );

    // Completion: nothing without the helper on PATH; with the copy the
    // caveats ask for, kubectl runs it and it runs the installed plugin.
    let caveats = manifest["spec"]["caveats"].as_str().unwrap();
    let store_text = format!("/store/{name}/{version}/");
    assert!(caveats.contains(&store_text), "{caveats}");
    let complete = |path: &[&Path]| -> Vec<String> {
        let run = kubectl(path, &["__complete", "fleet", "ver"]).ok();
        run.stdout
            .lines()
            .filter(|l| !l.starts_with(':') && !l.is_empty())
            .map(|l| l.split('\t').next().unwrap().to_owned())
            .collect()
    };
    assert!(complete(&[&krew_bin, &tools]).is_empty());
    std::fs::copy(
        store.join("kubectl_complete-fleet"),
        user_bin.join("kubectl_complete-fleet"),
    )
    .unwrap();
    assert_eq!(complete(&[&krew_bin, &tools, &user_bin]), ["version"]);
}

/// A manifest filled for a hand-made archive, for the rule checks below.
fn filled_manifest(dir: &Path, with_license: bool) -> Value {
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    let mut names = vec!["kubectl-fleet", "kubectl_complete-fleet"];
    if with_license {
        names.push("LICENSE");
    }
    for f in &names {
        std::fs::write(files.join(f), f).unwrap();
    }
    let archive = dir.join(format!(
        "kubectl-fleet-v{}-linux-amd64.tar.gz",
        env!("CARGO_PKG_VERSION")
    ));
    let tar = Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(&files)
        .args(&names)
        .status()
        .unwrap();
    assert!(tar.success());
    let template =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("krew-manifest.yaml"))
            .unwrap();
    let mut manifest: Value = serde_saphyr::from_str(&template).unwrap();
    let platforms = manifest["spec"]["platforms"].as_array_mut().unwrap();
    platforms.retain(|p| selects(p, "linux", "amd64"));
    platforms[0]["sha256"] = json!(hex(&Sha256::digest(std::fs::read(&archive).unwrap())));
    manifest
}

/// The checks of the filled manifest catch each thing krew rejects.
#[test]
fn krew_rule_checks_catch_each_violation() {
    let dir = TempDir::new("krew-rules");
    let good = filled_manifest(dir.path(), true);
    assert_eq!(
        krew_violations("fleet.yaml", &good, dir.path()),
        Vec::<String>::new()
    );
    type Break = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Break, &str)> = vec![
        (
            "other.yaml",
            Box::new(|_| {}),
            "file other.yaml holds plugin",
        ),
        (
            "fleet.yaml",
            Box::new(|m| m["spec"]["version"] = json!("0.1.0")),
            "not semver with a leading v",
        ),
        (
            "fleet.yaml",
            Box::new(|m| m["spec"]["version"] = json!("v1.02.0")),
            "not semver with a leading v",
        ),
        (
            "fleet.yaml",
            Box::new(|m| m["spec"]["platforms"][0]["sha256"] = json!("A".repeat(64))),
            "not 64 lowercase hex digits",
        ),
        (
            "fleet.yaml",
            Box::new(|m| m["spec"]["platforms"][0]["sha256"] = json!("0".repeat(64))),
            "sha256 is not the archive's",
        ),
        (
            "fleet.yaml",
            Box::new(|m| m["spec"]["platforms"][0]["selector"] = Value::Null),
            "selector missing",
        ),
        (
            "fleet.yaml",
            Box::new(|m| {
                let mut twin = m["spec"]["platforms"][0].clone();
                twin["selector"]["matchLabels"] = json!({"os": "linux"});
                m["spec"]["platforms"].as_array_mut().unwrap().push(twin);
            }),
            "2 platforms select linux/amd64",
        ),
        (
            "fleet.yaml",
            Box::new(|m| {
                let mut darwin = m["spec"]["platforms"][0].clone();
                darwin["selector"]["matchLabels"]["os"] = json!("darwin");
                darwin["uri"] = json!(
                    darwin["uri"]
                        .as_str()
                        .unwrap()
                        .replace("linux-amd64", "darwin-amd64")
                );
                m["spec"]["platforms"].as_array_mut().unwrap().push(darwin);
            }),
            "darwin-amd64.tar.gz, which was not built",
        ),
        (
            "fleet.yaml",
            Box::new(|m| m["spec"]["platforms"][0]["files"][1]["from"] = json!("completion-*")),
            "files.from \"completion-*\" matches nothing",
        ),
        (
            "fleet.yaml",
            Box::new(|m| m["spec"]["platforms"][0]["bin"] = json!("kubectl-fleet.exe")),
            "bin \"kubectl-fleet.exe\" is not an installed file",
        ),
        (
            "fleet.yaml",
            Box::new(|m| {
                m["spec"]["platforms"][0]["files"]
                    .as_array_mut()
                    .unwrap()
                    .retain(|f| f["from"] != "LICENSE")
            }),
            "installs no license file",
        ),
        (
            "fleet.yaml",
            Box::new(|m| m["spec"]["shortDescription"] = json!("x".repeat(51))),
            "over 50 characters",
        ),
        (
            "fleet x.yaml",
            Box::new(|m| m["metadata"]["name"] = json!("fleet x")),
            "is not [A-Za-z0-9_-]+",
        ),
        (
            "fleet.yaml",
            Box::new(|m| m["kind"] = json!("Plugins")),
            "not a krew v1alpha2 Plugin",
        ),
        (
            "fleet.yaml",
            Box::new(|m| {
                let uri = m["spec"]["platforms"][0]["uri"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                m["spec"]["platforms"][0]["uri"] = json!(uri.replace("https:", "http:"));
            }),
            "is not https",
        ),
        (
            "fleet.yaml",
            Box::new(|m| m["spec"]["platforms"][0]["files"] = json!([])),
            "no files",
        ),
        (
            "fleet.yaml",
            Box::new(|m| m["spec"]["platforms"] = json!([])),
            "no platforms",
        ),
    ];
    for (file, mutate, expected) in cases {
        let mut manifest = good.clone();
        mutate(&mut manifest);
        let found = krew_violations(file, &manifest, dir.path());
        assert!(
            found.iter().any(|v| v.contains(expected)),
            "{expected:?} not in {found:?}"
        );
    }
    // A pattern installs every match: `kubectl*` covers the binary and
    // the helper, so the bin is still installed.
    let mut globbed = good.clone();
    globbed["spec"]["platforms"][0]["files"][0]["from"] = json!("kubectl*");
    assert_eq!(
        krew_violations("fleet.yaml", &globbed, dir.path()),
        Vec::<String>::new()
    );
    // An archive without LICENSE fails `files.from` and the license rule.
    let bare = TempDir::new("krew-rules-bare");
    let manifest = filled_manifest(bare.path(), false);
    let found = krew_violations("fleet.yaml", &manifest, bare.path());
    assert!(
        found
            .iter()
            .any(|v| v.contains("\"LICENSE\" matches nothing"))
            && found.iter().any(|v| v.contains("installs no license file")),
        "{found:?}"
    );
}

fn skopeo(skopeo: &Path, args: &[&str]) -> String {
    let out = Command::new(skopeo).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "skopeo {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A free port on loopback (the registry needs one named in its config).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Debian's docker-registry serving from `dir` on 127.0.0.1, stopped by
/// its PID when the returned process is dropped.
fn start_registry(registry: &Path, dir: &Path) -> (support::Proc, String) {
    let port = free_port();
    let config = dir.join("registry.yml");
    std::fs::write(
        &config,
        format!(
            "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
            dir.join("registry-data").display()
        ),
    )
    .unwrap();
    let registry = support::Proc::spawn(
        "docker-registry",
        registry,
        &["serve".to_owned(), config.display().to_string()],
        dir.join("registry.log"),
    );
    let addr = format!("127.0.0.1:{port}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the registry did not listen on {addr}: {}",
            registry.log_text()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    (registry, addr)
}

#[test]
fn release_pushes_the_multi_arch_index_and_it_pulls_back_by_digest() {
    let Some(arm) = support::arm64_build() else {
        return;
    };
    // skopeo and docker-registry: tools/image/tools.sh, FLEET_IMAGE_TOOLS.
    let Some([skopeo_bin, registry]) = support::require_tools(["skopeo", "docker-registry"]) else {
        return;
    };
    let dir = TempDir::new("release-push");
    let repo = checkout(dir.path());
    let dist = repo.join("dist");
    let v = env!("CARGO_PKG_VERSION");
    let (_registry, addr) = start_registry(&registry, dir.path());
    let target = format!("{addr}/fleet/fleet-operator");
    let arm_bins = arm.bin_dir.display().to_string();
    let arm_root = arm.root.display().to_string();
    let run = release_with(
        &repo,
        &dist,
        &[
            "--arm64-bin-dir",
            &arm_bins,
            "--arm64-root",
            &arm_root,
            "--push",
            &target,
            "--insecure-registry",
        ],
    )
    .ok();
    assert!(
        run.stderr.contains(&format!("pushed {target}:v{v}")),
        "{}",
        run.stderr
    );

    // Both architectures are published: binaries, the arm64 krew archive
    // in the manifest, and the digest of what was pushed.
    for f in [
        format!("kubectl-fleet-v{v}-linux-arm64"),
        format!("fleet-operator-v{v}-linux-arm64"),
        format!("kubectl-fleet-v{v}-linux-arm64.tar.gz"),
        format!("fleet-operator-v{v}.digest"),
    ] {
        assert!(dist.join(&f).is_file(), "{f}");
    }
    let manifest: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(dist.join("plugins/fleet.yaml")).unwrap())
            .unwrap();
    assert_eq!(
        krew_violations("fleet.yaml", &manifest, &dist),
        Vec::<String>::new()
    );
    let platforms = manifest["spec"]["platforms"].as_array().unwrap();
    assert!(platforms.iter().any(|p| selects(p, "linux", "arm64")));
    assert!(platforms.iter().any(|p| selects(p, "linux", "amd64")));
    let sums = std::fs::read_to_string(dist.join("SHA256SUMS")).unwrap();
    assert!(
        sums.contains(&format!("  fleet-operator-v{v}.digest\n")),
        "{sums}"
    );

    // The pushed digest is the image index in the OCI archive.
    let digest = std::fs::read_to_string(dist.join(format!("fleet-operator-v{v}.digest")))
        .unwrap()
        .trim()
        .to_owned();
    let index = Command::new("tar")
        .arg("-xOf")
        .arg(dist.join(format!("fleet-operator-v{v}-oci.tar")))
        .arg("index.json")
        .output()
        .unwrap();
    let index: Value = serde_json::from_slice(&index.stdout).unwrap();
    assert_eq!(index["manifests"][0]["digest"], digest.as_str());

    // Pulled back by digest, from the registry: the index with both
    // platforms, each manifest and its blobs, the same digests.
    let by_digest = format!("docker://{target}@{digest}");
    let raw: Value = serde_json::from_str(&skopeo(
        &skopeo_bin,
        &["inspect", "--raw", "--tls-verify=false", &by_digest],
    ))
    .unwrap();
    let mut archs: Vec<&str> = raw["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["platform"]["architecture"].as_str().unwrap())
        .collect();
    archs.sort();
    assert_eq!(archs, ["amd64", "arm64"]);
    let pulled = dir.path().join("pulled");
    let pulled_ref = format!("oci:{}:pulled", pulled.display());
    skopeo(
        &skopeo_bin,
        &[
            "copy",
            "--all",
            "--preserve-digests",
            "--src-tls-verify=false",
            &by_digest,
            &pulled_ref,
        ],
    );
    let pulled_index: Value =
        serde_json::from_slice(&std::fs::read(pulled.join("index.json")).unwrap()).unwrap();
    assert_eq!(pulled_index["manifests"][0]["digest"], digest.as_str());
    for m in raw["manifests"].as_array().unwrap() {
        let want = m["digest"]
            .as_str()
            .unwrap()
            .strip_prefix("sha256:")
            .unwrap();
        let blob = std::fs::read(pulled.join("blobs/sha256").join(want)).unwrap();
        assert_eq!(hex(&Sha256::digest(&blob)), want, "manifest pulled intact");
        let manifest: Value = serde_json::from_slice(&blob).unwrap();
        let layer = manifest["layers"][0]["digest"].as_str().unwrap();
        assert!(
            pulled
                .join("blobs/sha256")
                .join(layer.strip_prefix("sha256:").unwrap())
                .is_file()
        );
    }
}
