//! `kubectl fleet`: the kubectl plugin binary. Parses the command line, sets
//! up logging to stderr (`-v=LEVEL`, as kubectl's), runs the command and
//! turns a failure into one line on stderr and a non-zero exit code.

use std::io::IsTerminal as _;
use std::process::ExitCode;

use kubectl_fleet::cli::{Cli, Io, parse_or_exit, run, run_internal};
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
        out_is_stdout: true,
        out: &mut stdout,
        err: &mut stderr,
    };
    if let Some(result) = run_internal(&args, &mut io) {
        return match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) if err.is_closed_pipe() => ExitCode::SUCCESS,
            Err(err) => {
                say(&err.user_line());
                ExitCode::from(err.exit_code())
            }
        };
    }
    // Help, --version and usage errors (one line, exit 2): cli::usage.
    let cli = match parse_or_exit::<Cli>() {
        Ok(cli) => cli,
        Err(code) => return code,
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
            say(&err.user_line());
            if verbose > 0 {
                let mut source = std::error::Error::source(&err);
                while let Some(cause) = source {
                    let text = cause.to_string();
                    say(&format!("  caused by: {}", terminal_safe(&text)));
                    source = cause.source();
                }
            }
            ExitCode::from(err.exit_code())
        }
    }
}

/// Writes a line to stderr; a closed stderr leaves the exit code to speak.
fn say(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{line}");
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
        .with_writer(kubectl_fleet::logging::BoundedLogLines::new(
            std::io::stderr,
            false,
        ))
        // Colour only on a terminal: a log redirected to a file stays text.
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
}
