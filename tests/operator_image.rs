//! The operator image, built offline by `tools/image/build.py` from the
//! Containerfile, is self-contained: its OCI layout is consistent (digests,
//! diff id, tag = version, user = the install manifests' runAsUser), its
//! root filesystem has no shell and nothing writable, and from that root
//! under `chroot`, as the image's numeric user, `fleet-operator --version`
//! runs and an edge reports to a kube-sandbox hub on loopback, resolving the
//! kubeconfigs' server name `localhost` through the image's own NSS files
//! and reading its credential the way the kubelet mounts it (root-owned,
//! group 65532, mode 0440).
//!
//! Starting containers is not possible on the build machines, so `chroot`
//! (root only) stands in; without root the test says so and skips. It builds
//! from the debug binary to stay fast; the release image and its size are in
//! docs/image.md.
//!
//! The multi-arch test builds the index from both architectures' debug
//! binaries (arm64 from tools/cross/build.sh, its libraries from that
//! Debian root): the index lists linux/amd64 and linux/arm64, each image is
//! at most 20 MiB compressed, skopeo reads the index and each platform, and
//! each image's binary runs from its own unpacked root as the image's user
//! (arm64 under `qemu-aarch64 -L ROOTFS`, with the image's own ld.so and
//! libc).

use crate::support;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use kube::api::Api;
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{Environment, FederatedCluster};
use serde_json::Value;
use support::*;

const IMAGE_UID: u32 = 65532;

fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn sha256_of(path: &Path) -> String {
    run("sha256sum", &[path.to_str().unwrap()])
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Runs build.py with `args` (binaries, roots) into `dir/oci`.
fn build(dir: &Path, args: &[String]) -> PathBuf {
    let layout = dir.join("oci");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/image/build.py");
    let mut all = vec![script.display().to_string()];
    all.extend(args.iter().cloned());
    all.extend(["--output".to_owned(), layout.display().to_string()]);
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    run("python3", &all);
    layout
}

/// A blob of the layout, its digest checked.
fn blob(layout: &Path, digest: &Value) -> PathBuf {
    let hex = digest.as_str().unwrap().strip_prefix("sha256:").unwrap();
    let path = layout.join("blobs/sha256").join(hex);
    assert_eq!(sha256_of(&path), hex, "blob digest");
    path
}

/// The layout's image index: index.json names it, tagged with the crate
/// version.
fn image_index(layout: &Path) -> Value {
    let index = read_json(&layout.join("index.json"));
    let entry = &index["manifests"][0];
    assert_eq!(
        entry["annotations"]["org.opencontainers.image.ref.name"],
        format!("v{}", env!("CARGO_PKG_VERSION")),
        "the tag is the crate version"
    );
    assert_eq!(
        entry["mediaType"],
        "application/vnd.oci.image.index.v1+json"
    );
    read_json(&blob(layout, &entry["digest"]))
}

/// One manifest of the index: its config, the unpacked root filesystem in
/// `dir/rootfs-ARCH`, and its compressed size (layer + config + manifest).
fn unpack(dir: &Path, layout: &Path, entry: &Value) -> (Value, PathBuf, u64) {
    let manifest = read_json(&blob(layout, &entry["digest"]));
    let config = read_json(&blob(layout, &manifest["config"]["digest"]));
    let layer = blob(layout, &manifest["layers"][0]["digest"]);
    let arch = entry["platform"]["architecture"].as_str().unwrap();
    assert_eq!(config["architecture"], arch);
    let rootfs = dir.join(format!("rootfs-{arch}"));
    std::fs::create_dir(&rootfs).unwrap();
    run(
        "tar",
        &[
            "-xzf",
            layer.to_str().unwrap(),
            "-C",
            rootfs.to_str().unwrap(),
        ],
    );
    let uncompressed = dir.join(format!("layer-{arch}.tar"));
    let out = Command::new("gzip")
        .args(["-dc", layer.to_str().unwrap()])
        .output()
        .unwrap();
    std::fs::write(&uncompressed, out.stdout).unwrap();
    assert_eq!(
        config["rootfs"]["diff_ids"][0],
        format!("sha256:{}", sha256_of(&uncompressed))
    );
    let size = entry["size"].as_u64().unwrap()
        + manifest["config"]["size"].as_u64().unwrap()
        + manifest["layers"][0]["size"].as_u64().unwrap();
    (config, rootfs, size)
}

/// Builds the image from the debug binary into `dir/oci` and returns the
/// layout's image config and the unpacked root filesystem.
fn build_and_unpack(dir: &Path) -> (Value, PathBuf) {
    let layout = build(
        dir,
        &["--binary".to_owned(), operator_bin().display().to_string()],
    );
    let index = image_index(&layout);
    let manifests = index["manifests"].as_array().unwrap();
    assert_eq!(manifests.len(), 1, "one binary, one platform");
    let (config, rootfs, _) = unpack(dir, &layout, &manifests[0]);
    (config, rootfs)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        out.push(path.clone());
        if path.is_dir() && !path.is_symlink() {
            walk(&path, out);
        }
    }
}

/// Places a kubeconfig in the root as the kubelet mounts a Secret with
/// `defaultMode: 0440` and `fsGroup: 65532`: root-owned, group 65532.
fn mount_secret_file(rootfs: &Path, path: &str, yaml: &str) -> String {
    let target = rootfs.join(path.trim_start_matches('/'));
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    // The hub's certificate names both 127.0.0.1 and localhost: use the
    // name, so reaching the hub needs the image's resolver.
    let yaml = yaml.replace("https://127.0.0.1:", "https://localhost:");
    assert!(yaml.contains("https://localhost:"));
    std::fs::write(&target, yaml).unwrap();
    std::os::unix::fs::chown(&target, Some(0), Some(IMAGE_UID)).unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o440)).unwrap();
    path.to_owned()
}

#[tokio::test]
async fn image_runs_an_edge_from_its_own_root_filesystem() {
    if !require_root() {
        return;
    }
    let dir = TempDir::new("image");
    let (config, rootfs) = build_and_unpack(dir.path());

    // The user the Deployments run as, numeric, present in /etc/passwd.
    assert_eq!(config["config"]["User"], format!("{IMAGE_UID}:{IMAGE_UID}"));
    let passwd = std::fs::read_to_string(rootfs.join("etc/passwd")).unwrap();
    assert!(
        passwd.contains(&format!(":{IMAGE_UID}:{IMAGE_UID}:")),
        "{passwd}"
    );
    let install = Command::new(cli_bin()).arg("install").output().unwrap();
    let manifests = String::from_utf8(install.stdout).unwrap();
    assert!(manifests.contains(&format!("runAsUser: {IMAGE_UID}")));
    // No shell, nothing writable, TLS roots present.
    assert!(!rootfs.join("bin/sh").exists());
    let mut files = Vec::new();
    walk(&rootfs, &mut files);
    for f in &files {
        let mode = std::fs::symlink_metadata(f).unwrap().permissions().mode();
        assert_eq!(mode & 0o222, 0, "{} is writable", f.display());
    }
    let bundle = std::fs::read_to_string(rootfs.join("etc/ssl/certs/ca-certificates.crt")).unwrap();
    assert!(bundle.matches("BEGIN CERTIFICATE").count() > 50);

    let version = run(
        "chroot",
        &[
            &format!("--userspec={IMAGE_UID}:{IMAGE_UID}"),
            rootfs.to_str().unwrap(),
            "/usr/local/bin/fleet-operator",
            "--version",
        ],
    );
    assert_eq!(
        version.trim(),
        format!("fleet-operator {}", env!("CARGO_PKG_VERSION"))
    );

    // An edge inside the root, reporting to a hub outside it.
    let hub = Sandbox::start();
    let member = Sandbox::start();
    let hub_admin = admin(&hub).await;
    install_crds(&hub_admin).await;
    create_site(&hub_admin, "site-a", 10, Environment::Production).await;
    let site_kc = mint_site_kubeconfig(&hub, &hub_admin, "site-a", Duration::from_secs(3600)).await;
    let hub_kc = mount_secret_file(&rootfs, "/etc/fleet-hub/kubeconfig", &site_kc);
    let member_kc = mount_secret_file(
        &rootfs,
        "/etc/fleet-member/kubeconfig",
        &member.admin_kubeconfig(),
    );
    let mut args = vec![
        format!("--userspec={IMAGE_UID}:{IMAGE_UID}"),
        rootfs.display().to_string(),
        "/usr/local/bin/fleet-operator".to_owned(),
    ];
    args.extend(edge_args(
        "site-a",
        Path::new(&member_kc),
        Path::new(&hub_kc),
        0.2,
    ));
    let mut edge = Proc::spawn(
        "edge-in-image",
        Path::new("chroot"),
        &args,
        dir.path().join("edge.log"),
    );
    let sites: Api<FederatedCluster> = Api::all(hub_admin.clone());
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let site = sites.get("site-a").await.unwrap();
        if site.status.and_then(|s| s.last_heartbeat_time).is_some() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no heartbeat from the edge in the image within 30 s; its log:\n{}",
            edge.log_text()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    edge.terminate();
}

/// The most one architecture's image may weigh, compressed (docs/image.md).
const MAX_COMPRESSED: u64 = 20 * 1024 * 1024;

#[test]
fn image_index_holds_amd64_and_arm64_and_each_runs_as_the_image_user() {
    let Some(arm) = arm64_build() else { return };
    if !require_root() {
        return;
    }
    let Some(skopeo) = require_tool("skopeo") else {
        return;
    };
    let dir = TempDir::new("image-multiarch");
    // The image's user must reach the unpacked roots.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let layout = build(
        dir.path(),
        &[
            "--binary".to_owned(),
            operator_bin().display().to_string(),
            "--binary".to_owned(),
            arm.bin_dir.join("fleet-operator").display().to_string(),
            "--root".to_owned(),
            format!("arm64={}", arm.root.display()),
        ],
    );
    let index = image_index(&layout);
    let platforms: Vec<String> = index["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let p = &m["platform"];
            let variant = p["variant"]
                .as_str()
                .map(|v| format!("/{v}"))
                .unwrap_or_default();
            format!(
                "{}/{}{variant}",
                p["os"].as_str().unwrap(),
                p["architecture"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(platforms, ["linux/amd64", "linux/arm64/v8"]);

    let version = format!("fleet-operator {}", env!("CARGO_PKG_VERSION"));
    for entry in index["manifests"].as_array().unwrap() {
        let (config, rootfs, size) = unpack(dir.path(), &layout, entry);
        let arch = config["architecture"].as_str().unwrap().to_owned();
        assert!(
            size <= MAX_COMPRESSED,
            "linux/{arch}: {size} bytes compressed"
        );
        assert_eq!(config["config"]["User"], format!("{IMAGE_UID}:{IMAGE_UID}"));
        let packages = config["config"]["Labels"]["dev.kubectl-fleet.debian-packages"]
            .as_str()
            .unwrap();
        for package in packages.split(' ') {
            let (name, version) = package.split_once('=').unwrap();
            assert!(
                !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c))
                    && !version.is_empty(),
                "linux/{arch}: {package:?} is not a Debian NAME=VERSION in {packages:?}"
            );
        }
        assert!(packages.contains("libc6="), "{packages}");
        assert!(packages.contains("ca-certificates="), "{packages}");
        assert!(!rootfs.join("bin/sh").exists());
        let bundle =
            std::fs::read_to_string(rootfs.join("etc/ssl/certs/ca-certificates.crt")).unwrap();
        assert!(bundle.matches("BEGIN CERTIFICATE").count() > 50);
        let binary = rootfs.join("usr/local/bin/fleet-operator");
        let machine =
            u16::from_le_bytes(std::fs::read(&binary).unwrap()[18..20].try_into().unwrap());
        assert_eq!(machine, if arch == "arm64" { 0xB7 } else { 0x3E }, "{arch}");
        // From its own root only: chroot for amd64; for arm64, qemu with the
        // image's root as its prefix (the image's ld.so, libc and libgcc).
        let mut cmd = if arch == "arm64" {
            use std::os::unix::process::CommandExt as _;
            let mut c = Command::new("qemu-aarch64");
            c.arg("-L").arg(&rootfs).arg(&binary);
            c.uid(IMAGE_UID).gid(IMAGE_UID);
            c
        } else {
            let mut c = Command::new("chroot");
            c.arg(format!("--userspec={IMAGE_UID}:{IMAGE_UID}"))
                .arg(&rootfs)
                .arg("/usr/local/bin/fleet-operator");
            c
        };
        let out = cmd.arg("--version").output().unwrap();
        assert!(
            out.status.success(),
            "linux/{arch} image: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            version,
            "{arch}"
        );
        println!(
            "linux/{arch} image: {:.1} MiB compressed",
            size as f64 / 1048576.0
        );
    }

    // skopeo reads the index and each platform's image from the layout.
    let reference = format!("oci:{}:v{}", layout.display(), env!("CARGO_PKG_VERSION"));
    let raw = run(skopeo.to_str().unwrap(), &["inspect", "--raw", &reference]);
    let raw: Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(raw["manifests"].as_array().unwrap().len(), 2);
    for arch in ["amd64", "arm64"] {
        let seen = run(
            skopeo.to_str().unwrap(),
            &[
                "--override-arch",
                arch,
                "--override-os",
                "linux",
                "inspect",
                "--config",
                &reference,
            ],
        );
        let seen: Value = serde_json::from_str(&seen).unwrap();
        assert_eq!(seen["architecture"], arch);
    }
}
