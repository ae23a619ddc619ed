//! `kube-sandbox serve --kubeconfig PATH`: the sandbox as a process.

use clap::{Parser, Subcommand};
use kube_sandbox::{CrdDelegate, Sandbox, SandboxOptions};
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

/// How long a restart ordered by SIGUSR1 keeps the server down.
const RESTART_DOWN: Duration = Duration::from_secs(5);

#[derive(Subcommand)]
enum Command {
    /// Serve until SIGINT or SIGTERM. Drills: SIGUSR1 models a restart of
    /// the API server (5 s in which every connection is dropped and
    /// refused; then no watch resumes from before it: 410 Gone, as from
    /// a restarted server's new watch caches). What is stored stays.
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
        /// Benchmarks only: model a hub this far away (e.g. 20ms). Every
        /// answer is held back by it, and every new connection by twice
        /// it before its TLS handshake (TCP's and TLS 1.3's round trips).
        #[arg(long, value_name = "DURATION", value_parser = parse_delay)]
        round_trip_delay: Option<Duration>,
        /// Benchmarks only: write every request answered to this file, one
        /// JSON line each with its verb, method, path, user, status and its
        /// start and end in microseconds since the sandbox started.
        #[arg(long, value_name = "FILE")]
        request_log: Option<PathBuf>,
        /// Serve as kube-apiserver does with its apiextensions-apiserver:
        /// apiextensions.k8s.io and every group a CRD defines are proxied,
        /// after the sandbox's own authentication and authorization, to
        /// the real API server this kubeconfig names, with its client
        /// certificate as the front proxy (docs/realapi.md).
        #[arg(long, value_name = "KUBECONFIG")]
        crd_delegate: Option<PathBuf>,
        /// Also write a kubeconfig of the server's own loopback identity
        /// (system:apiserver, in system:masters): what the CRD delegate
        /// acts with on the sandbox. Its requests get no injected faults
        /// and stay out of the request log.
        #[arg(long, value_name = "FILE")]
        loopback_kubeconfig: Option<PathBuf>,
        /// How to answer a streaming list (a watch with sendInitialEvents):
        /// served; refused with the 422 of a server whose WatchList
        /// feature gate is off; or ignored, as by a server that does not
        /// know the parameter (every object ADDED, no initial-events-end
        /// bookmark).
        #[arg(long, value_enum, default_value = "served")]
        streaming_lists: StreamingListsArg,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum StreamingListsArg {
    Served,
    Refused,
    Ignored,
}

fn parse_max_token_expiration(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s).map_err(|e| e.to_string())?;
    kube_sandbox::validate_max_token_expiration(d)
}

/// A round-trip delay: at most a minute (a benchmark's far-away hub, not
/// an outage).
fn parse_delay(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s).map_err(|e| e.to_string())?;
    if d > Duration::from_secs(60) {
        return Err(format!("{s:?} is longer than a minute"));
    }
    Ok(d)
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve {
            kubeconfig,
            listen,
            max_token_expiration,
            round_trip_delay,
            request_log,
            crd_delegate,
            loopback_kubeconfig,
            streaming_lists,
        } => {
            let crd_delegate = match crd_delegate {
                Some(path) => Some(
                    CrdDelegate::from_kubeconfig_file(&path)
                        .map_err(|e| anyhow::anyhow!("--crd-delegate {}: {e}", path.display()))?,
                ),
                None => None,
            };
            let sb = Sandbox::start_with(SandboxOptions {
                listen,
                max_token_expiration,
                crd_delegate,
                ..Default::default()
            })?;
            if let Some(path) = &request_log {
                sb.controls()
                    .write_request_log_to(path)
                    .map_err(|e| anyhow::anyhow!("request log {}: {e}", path.display()))?;
            }
            sb.controls().set_streaming_lists(match streaming_lists {
                StreamingListsArg::Served => kube_sandbox::StreamingLists::Served,
                StreamingListsArg::Refused => kube_sandbox::StreamingLists::Refused,
                StreamingListsArg::Ignored => kube_sandbox::StreamingLists::Ignored,
            });
            if let Some(delay) = round_trip_delay {
                sb.controls().set_latency(delay);
                sb.controls().set_connect_delay(delay * 2);
            }
            if let Some(path) = &loopback_kubeconfig {
                kube_sandbox::write_private_atomic(path, sb.loopback_kubeconfig().as_bytes())
                    .map_err(|e| anyhow::anyhow!("writing kubeconfig {}: {e}", path.display()))?;
            }
            sb.write_admin_kubeconfig(&kubeconfig)
                .map_err(|e| anyhow::anyhow!("writing kubeconfig {}: {e}", kubeconfig.display()))?;
            eprintln!("serving on {}", sb.url());
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            rt.block_on(async {
                use tokio::signal::unix::{SignalKind, signal};
                let mut term = signal(SignalKind::terminate())?;
                let mut restart = signal(SignalKind::user_defined1())?;
                loop {
                    tokio::select! {
                        r = tokio::signal::ctrl_c() => return r,
                        _ = term.recv() => return Ok(()),
                        _ = restart.recv() => {
                            eprintln!("SIGUSR1: restarting (down {RESTART_DOWN:?}, watch caches start again)");
                            sb.restart(RESTART_DOWN);
                        }
                    }
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
