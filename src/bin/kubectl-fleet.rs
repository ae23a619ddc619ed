//! `kubectl fleet`: the kubectl plugin binary. Parses the command line, sets
//! up logging to stderr (`-v=LEVEL`, as kubectl's), runs the command and
//! turns a failure into one line on stderr and a non-zero exit code.

use std::io::IsTerminal as _;
use std::process::ExitCode;

use clap::Parser as _;
use kubectl_fleet::cli::{Cli, Io, run, run_internal, usage_error_line};
use kubectl_fleet::fleet::verbosity::tracing_level;
use kubectl_fleet::render::safe::terminal_safe;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Unlocked handles: tracing on runtime threads writes to stderr too.
    let (mut stdout, mut stderr) = (std::io::stdout(), std::io::stderr());
    let stdout_tty = stdout.is_terminal();
    let interactive = std::io::stdin().is_terminal() && stderr.is_terminal();
    let mut io = Io {
        stdout_tty,
        interactive,
        out: &mut stdout,
        err: &mut stderr,
    };
    if let Some(result) = run_internal(&args, &mut io) {
        return match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) if err.is_closed_pipe() => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("{}", err.user_line());
                ExitCode::from(err.exit_code())
            }
        };
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) if !err.use_stderr() => {
            // --help and --version: clap's own output on stdout.
            let _ = err.print();
            return ExitCode::SUCCESS;
        }
        Err(err)
            if err.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            // No arguments at all: the help on stdout, exit 0, as kubectl does.
            let _ = <Cli as clap::CommandFactory>::command().print_help();
            return ExitCode::SUCCESS;
        }
        Err(err) => {
            eprintln!("{}", usage_error_line(&err));
            return ExitCode::from(2);
        }
    };
    let verbose = cli.global.verbose;
    init_tracing(verbose);

    // One thread: a command is a short sequence of requests, and a
    // connection driven on the thread that reads the response costs no
    // cross-thread wake-ups (with 2 workers, `status -o json` on 5,000
    // sites spent ~60 ms CPU instead of ~45 ms, mostly futex wake-ups and
    // context switches; docs/benchmarks-cli.md).
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: failed to start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(run(cli, &mut io));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if err.is_closed_pipe() => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{}", err.user_line());
            if verbose > 0 {
                let mut source = std::error::Error::source(&err);
                while let Some(cause) = source {
                    let text = cause.to_string();
                    eprintln!("  caused by: {}", terminal_safe(&text));
                    source = cause.source();
                }
            }
            ExitCode::from(err.exit_code())
        }
    }
}

/// Logging at kubectl's `-v=LEVEL` (`fleet::verbosity`); none at 0, where
/// a failure is only its one line.
fn init_tracing(verbose: u8) {
    let Some(level) = tracing_level(verbose) else {
        return;
    };
    // RUST_LOG, when set, refines -v (e.g. RUST_LOG=kube=debug).
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    // Every line bounded, the kube crate's too, as the operator's.
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(kubectl_fleet::render::safe::BoundedLogLines::new(
            std::io::stderr,
            false,
        ))
        .with_target(false)
        .init();
}
