//! `kube-sandbox serve --kubeconfig PATH`: the sandbox as a process.

use clap::{Parser, Subcommand};
use kube_sandbox::{Sandbox, SandboxOptions};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// A loopback Kubernetes API server for tests and demos.
#[derive(Parser)]
#[command(name = "kube-sandbox", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve until SIGINT or SIGTERM.
    Serve {
        /// Where to write the admin kubeconfig (atomically, mode 0600) once ready.
        #[arg(long)]
        kubeconfig: PathBuf,
        /// Address to listen on; port 0 picks a free port.
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: SocketAddr,
        /// Cap on TokenRequest lifetimes, like the API server's
        /// --service-account-max-token-expiration, and within the same
        /// range: 1 hour to 2^32 seconds (e.g. 1h, 12h, 3600s).
        #[arg(long, value_parser = parse_max_token_expiration)]
        max_token_expiration: Option<Duration>,
    },
}

fn parse_max_token_expiration(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s).map_err(|e| e.to_string())?;
    kube_sandbox::validate_max_token_expiration(d)
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve {
            kubeconfig,
            listen,
            max_token_expiration,
        } => {
            let sb = Sandbox::start_with(SandboxOptions {
                listen,
                max_token_expiration,
                ..Default::default()
            })?;
            sb.write_admin_kubeconfig(&kubeconfig)
                .map_err(|e| anyhow::anyhow!("writing kubeconfig {}: {e}", kubeconfig.display()))?;
            eprintln!("serving on {}", sb.url());
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            rt.block_on(async {
                let mut term =
                    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
                tokio::select! {
                    r = tokio::signal::ctrl_c() => r,
                    _ = term.recv() => Ok(()),
                }
            })?;
            sb.shutdown();
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kube-sandbox: {e:#}");
            ExitCode::FAILURE
        }
    }
}
