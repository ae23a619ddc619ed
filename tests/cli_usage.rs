//! The command-line conventions both binaries share (src/cli/usage.rs),
//! as a careless hand meets them (issue 31): a slip of a value is named
//! with the value meant in one line (exit 2), a value of a fixed set is
//! accepted in any case, and the Windows plugin's shell gets completion.

use crate::support;

use std::process::{Command, Stdio};

use support::{Hub, Run, operator_bin, run_bin};

/// Runs `fleet-operator ARGS` with no cluster to reach.
fn operator(args: &[&str]) -> Run {
    let output = Command::new(operator_bin())
        .args(args)
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run fleet-operator");
    Run::from(output)
}

#[test]
fn a_slip_of_status_output_names_the_format_meant_in_one_line() {
    let home = support::TempDir::new("cli-usage");
    let run = run_bin(&["status", "-o", "wdie"], home.path());
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.one_line_error(),
        "error: invalid value 'wdie' for '--output <FORMAT>' (did you mean 'wide'?): use one of table, wide, json, yaml, name, jsonpath=TEMPLATE"
    );
    // A slip of the jsonpath word keeps the template typed.
    let run = run_bin(&["status", "-o", "jsonpth={.sites[*].name}"], home.path());
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.one_line_error()
            .contains("(did you mean 'jsonpath={.sites[*].name}'?)"),
        "{}",
        run.stderr
    );
}

#[test]
fn values_of_a_fixed_set_are_accepted_in_any_case_and_mean_the_listed_spelling() {
    let hub = Hub::new();
    hub.register(
        "site-a",
        &[
            "--tier",
            "CRITICAL",
            "--environment",
            "Staging",
            "--region",
            "eu-west-1",
        ],
    );
    let json = hub.fleet(&["status", "-o", "JSON"]).ok().json();
    let site = &json["sites"][0];
    assert_eq!(site["name"], "site-a");
    // Stored as the API spells them, whatever the case typed.
    assert_eq!(site["tier"], "critical", "{site}");
    assert_eq!(site["environment"], "staging", "{site}");
    let wide = hub
        .fleet(&[
            "status", "-o", "Wide", "--tier", "Critical", "--phase", "pending",
        ])
        .ok();
    assert!(
        wide.stdout.starts_with("NAME") && wide.stdout.contains("REGION"),
        "{}",
        wide.stdout
    );
    assert!(wide.stdout.contains("site-a"), "{}", wide.stdout);
    let names = hub
        .fleet(&["status", "-o", "JSONPATH={.sites[*].name}"])
        .ok();
    assert_eq!(names.stdout.trim(), "site-a");
    // A region is a label value, matched as typed; a slip of one that
    // exists is named.
    let run = hub.fleet(&["cordon", "--region", "eu-wst-1", "--for", "1h"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.one_line_error().starts_with(
            "error: no site matches --region eu-wst-1: nothing to cordon: did you mean --region eu-west-1? the sites' labels are"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn fleet_operator_usage_errors_are_one_line_with_the_value_or_flag_meant() {
    let run = operator(&["--federation-role", "edg"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.one_line_error(),
        "error: invalid value 'edg' for '--federation-role <FEDERATION_ROLE>' (did you mean 'edge'?): use one of hub, edge"
    );
    let run = operator(&["--federaton-role", "edge"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.one_line_error(),
        "error: unexpected argument '--federaton-role' found: did you mean '--federation-role'? see `fleet-operator --help`"
    );
    let run = operator(&["--log-format", "jsno"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.one_line_error().contains("(did you mean 'json'?)"),
        "{}",
        run.stderr
    );
    // Any case: the edge role is understood (and so needs its site).
    let run = operator(&["--federation-role", "EDGE", "--log-format", "Json"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.one_line_error(),
        "error: the following required arguments were not provided: --site <SITE>, --hub-kubeconfig <HUB_KUBECONFIG>: see `fleet-operator --help`"
    );
    let run = operator(&["--federation-role", "Hub", "--metrics-auth=TRUE", "--help"]).ok();
    assert!(run.stdout.contains("--federation-role"), "{}", run.stdout);
}

#[test]
fn completion_powershell_prints_the_checked_in_script() {
    let home = support::TempDir::new("cli-usage");
    let run = run_bin(&["completion", "powershell"], home.path()).ok();
    assert!(
        run.stdout
            .contains("Register-ArgumentCompleter -Native -CommandName 'kubectl-fleet'"),
        "{}",
        run.stdout
    );
    let checked_in = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/kubectl-fleet.ps1"),
    )
    .unwrap();
    assert_eq!(run.stdout, checked_in);
    // The shell's name in any case, as every value of a set.
    run_bin(&["completion", "PowerShell"], home.path()).ok();
}
