//! The linux/arm64 binaries `tools/cross/build.sh` builds on this amd64
//! machine (Debian sid's rustc with libstd-rust-dev:arm64 in a debootstrap
//! root, docs/platforms.md) run, under `qemu-aarch64 -L ROOT/usr/aarch64-linux-gnu`:
//! `kubectl-fleet version`, and an arm64 edge that the arm64 CLI registered
//! reports to a kube-sandbox hub (amd64, judged by an amd64 hub operator
//! with the RBAC `install` ships) until the site is Connected.
//!
//! Without the arm64 build the tests fail with what to run; a quick local
//! run may skip them with `FLEET_SKIP_ARM64=1` (tools/test.sh builds them).

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use kube::api::Api;
use kube_sandbox::Sandbox;
use kubectl_fleet::api::{FederatedCluster, Phase};
use support::*;

const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The ELF `e_machine` of AArch64.
const EM_AARCH64: u16 = 0xB7;
const SCALE: f64 = 0.2;

fn elf_machine(path: &Path) -> u16 {
    let head = std::fs::read(path).unwrap();
    assert_eq!(&head[..4], b"\x7fELF", "{} is an ELF file", path.display());
    u16::from_le_bytes([head[18], head[19]])
}

fn output(mut cmd: std::process::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn arm64_binaries_are_aarch64_and_print_the_version() {
    let Some(arm) = arm64_build() else { return };
    for b in ["kubectl-fleet", "fleet-operator"] {
        assert_eq!(
            elf_machine(&arm.bin_dir.join(b)),
            EM_AARCH64,
            "{b} is built for aarch64"
        );
    }
    let mut cli = arm.command("kubectl-fleet");
    cli.args(["version", "--short"]);
    assert_eq!(output(cli).trim(), VERSION);
    let mut operator = arm.command("fleet-operator");
    operator.arg("--version");
    assert_eq!(output(operator).trim(), format!("fleet-operator {VERSION}"));
}

#[tokio::test]
async fn an_arm64_edge_registered_by_the_arm64_cli_reaches_connected() {
    let Some(arm) = arm64_build() else { return };
    let dir = TempDir::new("arm64-edge");
    let hub_sb = Sandbox::start();
    let hub_kc = installed_hub(&hub_sb, &dir);
    let operator_kc = hub_operator_kubeconfig(&hub_sb, &dir).await;
    let _hub = Proc::spawn(
        "hub",
        &operator_bin(),
        &hub_args(&operator_kc, "hub", SCALE),
        dir.join("hub.log"),
    );

    // `kubectl fleet register` by the arm64 CLI: TLS, TokenRequest and the
    // kubeconfig written 0600, all from the aarch64 build.
    let site_kc = dir.join("site-arm.kubeconfig");
    let mut register = arm.command("kubectl-fleet");
    register
        .arg("--kubeconfig")
        .arg(&hub_kc)
        .args(["register", "site-arm", "--heartbeat-interval", "10"])
        .arg("--output-file")
        .arg(&site_kc)
        .env_remove("KUBECONFIG");
    output(register);
    assert!(site_kc.is_file());

    let member = Sandbox::start();
    let member_kc = dir.join("member.kubeconfig");
    member.write_admin_kubeconfig(&member_kc).unwrap();
    let mut args = vec![
        "-L".to_owned(),
        arm.sysroot().display().to_string(),
        arm.bin_dir.join("fleet-operator").display().to_string(),
    ];
    args.extend(edge_args("site-arm", &member_kc, &site_kc, SCALE));
    let edge = Proc::spawn(
        "edge-arm64",
        Path::new("qemu-aarch64"),
        &args,
        dir.join("edge.log"),
    );

    let api: Api<FederatedCluster> = Api::all(admin(&hub_sb).await);
    let start = Instant::now();
    loop {
        let site = api.get("site-arm").await.unwrap();
        if site.phase() == Some(Phase::Connected) {
            let status = site.status.unwrap();
            assert!(status.kubernetes_version.is_some(), "{status:?}");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "site-arm still {:?} after 60 s; the arm64 edge's log:\n{}",
            site.phase(),
            edge.log_text()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    println!(
        "the arm64 edge under qemu was Connected {:.1} s after it started",
        start.elapsed().as_secs_f64()
    );

    // The arm64 CLI reads it back as a user would.
    let mut status = arm.command("kubectl-fleet");
    status
        .arg("--kubeconfig")
        .arg(&hub_kc)
        .args(["status", "site-arm", "-o", "json"])
        .env_remove("KUBECONFIG");
    let report: serde_json::Value = serde_json::from_str(&output(status)).unwrap();
    assert!(
        report.to_string().contains("\"Connected\""),
        "status -o json by the arm64 CLI: {report}"
    );
}
