use super::hand_out::{edge_secret_manifest, write_private_file};
use super::*;

fn args(extra: &[&str]) -> RegisterArgs {
    let mut argv = vec!["kubectl-fleet", "register", "site-a"];
    argv.extend_from_slice(extra);
    match crate::cli::usage::try_parse_from::<crate::cli::Cli, _, _>(argv)
        .unwrap()
        .command
    {
        super::super::Command::Register(a) => *a,
        other => panic!("parsed {other:?}"),
    }
}

#[test]
fn new_site_gets_defaults_and_flags() {
    let a = args(&[
        "--tier",
        "critical",
        "--capability",
        "remediation",
        "--capability",
        "monitoring",
    ]);
    let spec = desired_spec(&a, None, Mode::Push);
    assert_eq!(spec.tier, Tier::Critical);
    assert_eq!(spec.environment, Environment::Production);
    assert_eq!(
        spec.capabilities,
        vec![Capability::Monitoring, Capability::Remediation]
    );
    assert_eq!(spec.heartbeat_interval_seconds, 30);
    assert_eq!(spec.kubeconfig_secret_ref, None);
    assert_eq!(a.token_ttl, Duration::from_secs(30 * 86_400));
}

#[test]
fn rerun_without_flags_keeps_current_values() {
    let current = FederatedClusterSpec {
        tier: Tier::Critical,
        region: Some("eu-west-1".into()),
        heartbeat_interval_seconds: 60,
        ..Default::default()
    };
    let spec = desired_spec(
        &args(&["--environment", "staging"]),
        Some(&current),
        Mode::Push,
    );
    assert_eq!(spec.tier, Tier::Critical);
    assert_eq!(spec.region.as_deref(), Some("eu-west-1"));
    assert_eq!(spec.heartbeat_interval_seconds, 60);
    assert_eq!(spec.environment, Environment::Staging);
}

#[test]
fn pull_spec_references_the_pull_secret() {
    let spec = desired_spec(&args(&[]), None, Mode::Pull);
    assert_eq!(
        spec.kubeconfig_secret_ref,
        Some(SecretKeyRef {
            namespace: "fleet-system".into(),
            name: "fleet-pull-site-a".into(),
            key: "kubeconfig".into(),
        })
    );
}

#[test]
fn the_mode_is_kept_unless_a_flag_changes_it() {
    use Mode::{Pull, Push};
    let plan = |extra: &[&str], current| Plan::new(&args(extra), current);
    let m = ["--member-kubeconfig", "m.kubeconfig"];
    let switch = |from, to| Some(Switch { from, to });
    // (flags, current mode) -> (mode, switch)
    for (extra, current, mode, switched) in [
        (vec![], None, Push, None),
        (vec![], Some(Push), Push, None),
        (vec!["--tier", "critical"], Some(Pull), Pull, None),
        (vec!["--pull"], Some(Pull), Pull, None),
        (vec!["--pull", m[0], m[1]], None, Pull, None),
        (
            vec!["--pull", m[0], m[1]],
            Some(Push),
            Pull,
            switch(Push, Pull),
        ),
        (vec!["--push"], Some(Pull), Push, switch(Pull, Push)),
        (vec!["--push", m[0], m[1]], Some(Push), Push, None),
    ] {
        let got = plan(&extra, current).unwrap();
        assert_eq!(
            (got.mode, got.switch),
            (mode, switched),
            "{extra:?} on {current:?}"
        );
    }
    let no_member = plan(&["--pull"], Some(Push)).unwrap_err();
    assert!(
        no_member
            .to_string()
            .contains("needs the member cluster's kubeconfig")
    );
    assert!(plan(&["--pull"], None).is_err());
    for flag in [
        vec!["--output-file", "x"],
        vec!["--hub-server", "https://hub:6443"],
        vec!["--insecure-skip-tls-verify"],
        vec!["--emit", "secret"],
        vec!["--no-auto-rotate"],
    ] {
        let err = plan(&flag, Some(Pull)).unwrap_err();
        assert!(
            err.to_string().contains("is in Pull mode"),
            "{flag:?}: {err}"
        );
        assert!(plan(&flag, Some(Push)).is_ok(), "{flag:?}");
    }
}

#[test]
fn the_command_to_finish_parses_back_to_the_same_run() {
    let given = [
        "--tier",
        "critical",
        "--display-name",
        "Site A (lab)",
        "--region",
        "eu-west-1",
        "--environment",
        "staging",
        "--capability",
        "remediation",
        "--heartbeat-interval",
        "60",
        "--max-concurrent-remediations",
        "1",
        "--offline",
        "Sat 00:00-Mon 06:00",
        "--offline",
        "22:00-06:00",
        "--tz",
        "Europe/Berlin",
        "--absent-up-to",
        "1d12h",
        "--token-ttl",
        "12h",
        "--no-auto-rotate",
        "--push",
        "--member-kubeconfig",
        "/tmp/member dir/kc",
        "--hub-server",
        "https://hub:6443",
        "--emit",
        "secret",
        "--output-file",
        "/tmp/it's.yaml",
        "-o",
        "json",
    ];
    let original = args(&given);
    let global = crate::cli::usage::try_parse_from::<crate::cli::Cli, _, _>([
        "kubectl-fleet",
        "--context",
        "hub",
        "version",
    ])
    .unwrap()
    .global;
    let words = command_words(&global, &original, true);
    assert_eq!(
        &words[..5],
        ["kubectl", "fleet", "--context", "hub", "register"]
    );
    let line = shell_line(&words);
    assert!(line.contains("'/tmp/member dir/kc'"), "{line}");
    // What a shell would hand the plugin (kubectl drops "kubectl").
    let mut argv = vec!["kubectl-fleet".to_owned()];
    argv.extend(words.into_iter().skip(2));
    let reparsed = match crate::cli::usage::try_parse_from::<crate::cli::Cli, _, _>(argv)
        .unwrap()
        .command
    {
        super::super::Command::Register(a) => *a,
        other => panic!("parsed {other:?}"),
    };
    assert_eq!(
        format!("{reparsed:?}"),
        format!(
            "{:?}",
            RegisterArgs {
                yes: true,
                ..original
            }
        )
    );
}

#[test]
fn hub_server_must_be_https() {
    assert_eq!(
        parse_server_url("https://hub:6443/"),
        Ok("https://hub:6443".into())
    );
    assert!(parse_server_url("http://hub:6443").is_err());
    assert!(parse_server_url("https://").is_err());
    assert!(parse_server_url("hub:6443").is_err());
}

#[test]
fn secret_manifest_holds_the_kubeconfig() {
    let docs: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(&edge_secret_manifest("site-a", "KUBECONFIG")).unwrap();
    assert_eq!(docs[0]["kind"], "Namespace");
    assert_eq!(docs[1]["metadata"]["name"], "fleet-hub-kubeconfig");
    assert_eq!(docs[1]["metadata"]["namespace"], "fleet-system");
    assert_eq!(docs[1]["data"]["kubeconfig"], "S1VCRUNPTkZJRw==");
}

#[test]
fn private_file_is_0600_even_over_a_wider_file() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hub.kubeconfig");
    std::fs::write(&path, "old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    write_private_file(&path, b"secret").unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "secret");
}
