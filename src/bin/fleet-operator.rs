//! `fleet-operator`: the hub / edge companion operator binary.
//!
//! Parses flags, sets up tracing, runs [`kubectl_fleet::operator::run`] and
//! maps its error to one line on stderr — what failed and every cause that
//! line does not already say — and a non-zero exit code.

use std::io::IsTerminal as _;
use std::process::ExitCode;

use kubectl_fleet::cli::parse_or_exit;
use kubectl_fleet::fleet::verbosity::tracing_level;
use kubectl_fleet::k8s::with_causes;
use kubectl_fleet::logging::BoundedLogLines;
use kubectl_fleet::operator::{self, Args, LogFormat};
use kubectl_fleet::render::safe::terminal_safe;
use tracing_subscriber::EnvFilter;

fn init_tracing(args: &Args) {
    // kubectl's -v levels (`fleet::verbosity`); info below 4.
    let default = tracing_level(args.verbose).unwrap_or("info");
    // kube's own debug output includes request URLs but never headers, so
    // the bearer token cannot reach the log at any level. kube's client
    // logs every failed request at ERROR; the operator logs one line per
    // cause itself, so that one is off unless RUST_LOG names kube_client.
    let mut filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(format!("{default},hyper=warn,rustls=warn,tower=warn")));
    if !std::env::var("RUST_LOG").is_ok_and(|v| v.contains("kube_client")) {
        filter = filter.add_directive(
            "kube_client::client::builder=off"
                .parse()
                .expect("a valid directive"),
        );
    }
    // kube-runtime's controller opens an info-level span per reconcile
    // ("reconciling object") and formats its fields each time, a steady
    // part of a large hub's CPU (docs/benchmarks-operator.md); every hub
    // log line names its site itself. Below -v=4 (debug), and unless
    // RUST_LOG names kube_runtime, that target logs warnings only.
    if default == "info" && !std::env::var("RUST_LOG").is_ok_and(|v| v.contains("kube_runtime")) {
        filter = filter.add_directive(
            "kube_runtime::controller=warn"
                .parse()
                .expect("a valid directive"),
        );
    }
    // Colour only on a terminal; log files and collectors get plain text.
    let ansi = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    // Every line bounded, the kube crate's too (`render::safe::BoundedLogLines`).
    let json = matches!(args.log_format, LogFormat::Json);
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(BoundedLogLines::new(std::io::stderr, json));
    match args.log_format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
}

fn main() -> ExitCode {
    // The plugin's command-line conventions: a value of a fixed set in
    // any case (`--federation-role Edge`), a usage error in one line with
    // the value or flag meant (exit 2), help on stdout.
    let args = match parse_or_exit::<Args>() {
        Ok(args) => args,
        Err(code) => return code,
    };
    init_tracing(&args);
    let verbose = args.verbose > 0;
    // One thread: the operator waits on the network almost all the time
    // and its work per event is microseconds, so a second worker only
    // cost wake-ups: a 10,000-site hub on two workers spent more of its
    // CPU in futex and task-switch system calls than in judging sites
    // (docs/benchmarks-operator.md). Blocking work (DNS, files) still goes
    // to tokio's blocking pool.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: starting the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(operator::run(args));
    // Never hang on exit because of a request still stuck on a dead peer.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // A cause may quote an API server or a file: escaped.
            eprintln!("error: {}", terminal_safe(&with_causes(&e)));
            let chain = operator::source_chain(&e);
            if verbose && !chain.is_empty() {
                eprintln!("  caused by: {}", terminal_safe(&chain));
            }
            ExitCode::FAILURE
        }
    }
}
