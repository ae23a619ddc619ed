//! The `kubectl fleet` commands: the clap tree, global flags, and dispatch.
//!
//! Each command lives in its own file and follows fetch → transform →
//! render: it talks to the cluster only through [`crate::k8s`], builds a
//! view with pure functions and writes the rendered text to the writers it
//! is given (data on stdout, human messages on stderr).

mod complete;
mod completion;
mod cordon;
mod describe;
mod enrol;
mod error;
mod incidents;
mod install;
pub mod interrupt;
mod kustomize;
mod policy;
mod pull_identity;
mod quarantine;
mod register;
mod rotate;
mod schedule;
mod select;
mod status;
mod uninstall;
mod unregister;
pub mod usage;
mod version;

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};

pub use error::Error;
pub use usage::{parse_or_exit, usage_error_line};

use crate::fleet::duration::{format_duration, parse_duration};
use crate::k8s::{Cluster, ConnectOptions};

/// Multi-cluster fleet registry for Kubernetes: register sites with a
/// least-privilege identity, see fleet status, incidents and policy.
#[derive(Debug, Parser)]
#[command(
    name = "kubectl-fleet",
    bin_name = "kubectl fleet",
    version,
    propagate_version = true,
    max_term_width = 100,
    arg_required_else_help = true
)]
pub struct Cli {
    /// Flags every command accepts.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// kubectl's connection flags, plus verbosity.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: the current context)
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s
    #[arg(long, global = true, value_name = "DURATION", default_value = "0", value_parser = parse_duration)]
    pub request_timeout: Duration,
    /// Log detail on stderr, as kubectl's -v: 1-3 info and an error's causes, 4-5 debug, 6+ trace
    #[arg(
        short = 'v',
        long = "v",
        global = true,
        value_name = "LEVEL",
        default_value = "0",
        hide_default_value = true,
        value_parser = crate::fleet::verbosity::parse_level
    )]
    pub verbose: u8,
}

impl GlobalArgs {
    /// The connection options these flags describe.
    pub fn connect_options(&self) -> ConnectOptions {
        ConnectOptions {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            request_timeout: (!self.request_timeout.is_zero()).then_some(self.request_timeout),
        }
    }

    /// Connects to the hub these flags point at.
    pub async fn hub(&self) -> Result<Cluster, Error> {
        Ok(Cluster::connect(&self.connect_options()).await?)
    }

    /// `kubectl fleet` and the connection flags given, as words of a
    /// command a hint prints: the hint then reaches the same hub.
    pub fn command_words(&self) -> Vec<String> {
        let mut words = vec!["kubectl".to_owned(), "fleet".to_owned()];
        if let Some(path) = &self.kubeconfig {
            words.extend(["--kubeconfig".to_owned(), path.display().to_string()]);
        }
        if let Some(context) = &self.context {
            words.extend(["--context".to_owned(), context.clone()]);
        }
        if !self.request_timeout.is_zero() {
            words.extend([
                "--request-timeout".to_owned(),
                format_duration(self.request_timeout),
            ]);
        }
        words
    }
}

/// Words joined into a command line a POSIX shell runs as written: a word
/// with anything but letters, digits and `@%+=:,./_-` is single-quoted.
pub fn shell_line<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| {
            let w = w.as_ref();
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c));
            if plain {
                w.to_owned()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `kubectl fleet` commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Register a site on the hub and print the edge's configuration
    Register(Box<register::RegisterArgs>),
    /// Mint a fresh token for a site (optionally revoking all older ones)
    Rotate(rotate::RotateArgs),
    /// Remove everything `register` created for a site
    Unregister(unregister::UnregisterArgs),
    /// Show per-site and fleet-wide status
    #[command(visible_aliases = ["list", "get"], after_long_help = crate::render::status::column_reference())]
    Status(status::StatusArgs),
    /// Show one site in full: conditions with reasons, inventory, signals and policy
    Describe(describe::DescribeArgs),
    /// Show the remediation policy per tier and severity
    Policy(policy::PolicyArgs),
    /// Show active correlations, cascades and grouped outages, or one incident by its ID
    Incidents(incidents::IncidentsArgs),
    /// Put sites in maintenance until a time: still judged and shown, no per-site alerts
    Cordon(cordon::CordonArgs),
    /// End sites' maintenance windows now
    Uncordon(cordon::UncordonArgs),
    /// Leave what sites report out of every fleet incident: still judged and shown
    Quarantine(quarantine::QuarantineArgs),
    /// Let sites' signals count in fleet incidents again
    Unquarantine(quarantine::UnquarantineArgs),
    /// Say when sites are expected offline: silent inside it they are Sleeping and page nobody
    Schedule(schedule::ScheduleArgs),
    /// Print (or apply) the manifests for the CRDs and the operator
    Install(install::InstallArgs),
    /// Remove the operator, its RBAC and monitoring objects (the CRDs and every site only with --crds)
    Uninstall(uninstall::UninstallArgs),
    /// Print a shell completion script
    Completion(completion::CompletionArgs),
    /// Print the version
    Version(version::VersionArgs),
}

/// Where a command writes, and what it may assume about the terminal.
pub struct Io<'a> {
    /// Data: kubeconfigs, tables, JSON.
    pub out: &'a mut dyn Write,
    /// Human messages, warnings, prompts.
    pub err: &'a mut dyn Write,
    /// Whether stdout is a terminal (colour, redraw).
    pub stdout_tty: bool,
    /// Whether stdin and stderr are terminals (interactive prompts).
    pub interactive: bool,
    /// Whether `out` is this process's standard output, which
    /// [`Io::before_secret`] protects when it is a file.
    pub out_is_stdout: bool,
}

impl Io<'_> {
    /// Before a secret (a site's token, in a kubeconfig or a Secret
    /// manifest) goes to `out`: when that is this process's standard output
    /// redirected to a regular file others may read (`register SITE >
    /// site.kubeconfig` under a umask of 022 makes it 0644), the file is made
    /// readable by its owner alone first, as `--output-file` writes it, and
    /// stderr says so; when it cannot be (another user's file), stderr says
    /// what to do. A terminal, a pipe or /dev/null is left alone.
    pub fn before_secret(&mut self) -> std::io::Result<()> {
        #[cfg(unix)]
        if self.out_is_stdout {
            use std::os::fd::AsFd as _;
            use std::os::unix::fs::PermissionsExt as _;
            let Ok(fd) = std::io::stdout().as_fd().try_clone_to_owned() else {
                return Ok(());
            };
            let file = std::fs::File::from(fd);
            let Ok(meta) = file.metadata() else {
                return Ok(());
            };
            let mode = meta.permissions().mode() & 0o777;
            if !meta.file_type().is_file() || mode & 0o077 == 0 {
                return Ok(());
            }
            let private = mode & 0o700;
            match file.set_permissions(std::fs::Permissions::from_mode(private)) {
                Ok(()) => writeln!(
                    self.err,
                    "made the file stdout goes to mode {private:04o} (it was {mode:04o}): it holds the site's token"
                )?,
                Err(e) => writeln!(
                    self.err,
                    "warning: stdout goes to a file others can read (mode {mode:04o}) and it will hold the site's token: \
                     `chmod 600` it, or use --output-file (could not change it: {e})"
                )?,
            }
        }
        Ok(())
    }
}

impl Command {
    /// Whether the command may change a cluster. Such a command finishes
    /// its work whatever happens to its output, and Ctrl-C stops it only
    /// between steps, saying what it left ([`interrupt`]); a read-only
    /// view just stops when its reader goes away.
    pub fn mutates(&self) -> bool {
        match self {
            Command::Register(_)
            | Command::Rotate(_)
            | Command::Unregister(_)
            | Command::Cordon(_)
            | Command::Uncordon(_)
            | Command::Quarantine(_)
            | Command::Unquarantine(_)
            | Command::Schedule(_)
            | Command::Uninstall(_) => true,
            Command::Install(args) => args.apply,
            Command::Status(_)
            | Command::Describe(_)
            | Command::Policy(_)
            | Command::Incidents(_)
            | Command::Completion(_)
            | Command::Version(_) => false,
        }
    }
}

/// Runs a parsed command line: a command that changes the cluster under
/// the rules of [`interrupt`] (it finishes whatever happens to its
/// output; Ctrl-C stops it between steps, saying what it left).
pub async fn run(cli: Cli, io: &mut Io<'_>) -> Result<(), Error> {
    if !cli.command.mutates() {
        return dispatch(cli, io).await;
    }
    let mut out = interrupt::PipeGuard::new(&mut *io.out);
    let mut err = interrupt::PipeGuard::new(&mut *io.err);
    let result = {
        let mut guarded = Io {
            out: &mut out,
            err: &mut err,
            stdout_tty: io.stdout_tty,
            interactive: io.interactive,
            out_is_stdout: io.out_is_stdout,
        };
        interrupt::run(dispatch(cli, &mut guarded)).await
    };
    let _ = out.flush();
    match result {
        Ok(()) if out.closed() => Err(Error::OutputCut { stream: "stdout" }),
        Ok(()) if err.closed() => Err(Error::OutputCut { stream: "stderr" }),
        other => other,
    }
}

/// Runs a parsed command line as it is.
async fn dispatch(cli: Cli, io: &mut Io<'_>) -> Result<(), Error> {
    let global = &cli.global;
    match cli.command {
        Command::Register(args) if args.bulk.filename.is_some() => {
            enrol::run(global, *args, io).await
        }
        Command::Register(args) => register::run(global, *args, io).await,
        Command::Rotate(args) => rotate::run(global, args, io).await,
        Command::Unregister(args) => unregister::run(global, args, io).await,
        Command::Status(args) => status::run(global, args, io).await,
        Command::Describe(args) => describe::run(global, args, io).await,
        Command::Policy(args) => policy::run(args, io),
        Command::Incidents(args) => incidents::run(global, args, io).await,
        Command::Cordon(args) => cordon::run_cordon(global, args, io).await,
        Command::Uncordon(args) => cordon::run_uncordon(global, args, io).await,
        Command::Quarantine(args) => quarantine::run_quarantine(global, args, io).await,
        Command::Unquarantine(args) => quarantine::run_unquarantine(global, args, io).await,
        Command::Schedule(args) => schedule::run(global, args, io).await,
        Command::Install(args) => install::run(global, args, io).await,
        Command::Uninstall(args) => uninstall::run(global, args, io).await,
        Command::Completion(args) => completion::run(args, io),
        Command::Version(args) => version::run(args, io),
    }
}

/// Internal entry points that are not part of the command tree (so help
/// and completions never show them), reached by their first word:
/// `__complete WORDS…` for `kubectl_complete-fleet`. None otherwise.
pub fn run_internal(args: &[String], io: &mut Io<'_>) -> Option<Result<(), Error>> {
    match args.split_first() {
        Some((first, rest)) if first == "__complete" => Some(
            io.out
                .write_all(
                    complete::complete(
                        rest,
                        &complete::Lookups {
                            sites: &complete_site_names,
                            contexts: &complete_context_names,
                        },
                    )
                    .as_bytes(),
                )
                .map_err(Error::from),
        ),
        _ => None,
    }
}

/// How long shell completion waits for the hub before offering no site names.
const COMPLETION_TIMEOUT: Duration = Duration::from_secs(3);

/// The registered site names for shell completion, from the hub the typed
/// `--kubeconfig`/`--context` point at; any failure (no kubeconfig, hub
/// down, no right to list) completes nothing rather than printing an error
/// into the user's command line.
fn complete_site_names(query: &complete::SiteQuery) -> Vec<String> {
    let opts = ConnectOptions {
        kubeconfig: query.kubeconfig.as_ref().map(PathBuf::from),
        context: query.context.clone(),
        request_timeout: Some(COMPLETION_TIMEOUT),
    };
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return Vec::new();
    };
    runtime.block_on(async {
        let list = async { Cluster::connect(&opts).await?.list_site_names().await };
        match tokio::time::timeout(COMPLETION_TIMEOUT, list).await {
            Ok(Ok(names)) => names,
            _ => Vec::new(),
        }
    })
}

/// The context names of a kubeconfig for shell completion: `file` when
/// typed, else the one kubectl reads (`KUBECONFIG`, `~/.kube/config`); an
/// unreadable one completes nothing. A name that could not be typed back
/// as one shell word (control characters, spaces) is not offered.
fn complete_context_names(file: Option<&str>) -> Vec<String> {
    crate::k8s::read_kubeconfig(file.map(std::path::Path::new))
        .map(|kc| {
            kc.contexts
                .into_iter()
                .map(|c| c.name)
                .filter(|n| {
                    !n.is_empty() && !n.chars().any(|c| c.is_control() || c.is_whitespace())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The clap command tree under the shared conventions ([`usage`]): what
/// the binary parses with, and what completions, the man pages and tests
/// are made from.
pub fn command() -> clap::Command {
    usage::conventions(<Cli as clap::CommandFactory>::command())
}

/// Parses `--token-ttl`: a duration the API server's TokenRequest accepts
/// (at least 10 minutes, at most 2^32 seconds), so a bad value stops before
/// anything is created.
pub fn parse_token_ttl(s: &str) -> Result<Duration, String> {
    let longest = || {
        format!(
            "{s:?} is longer than the maximum, {} (2^32 seconds, the longest token lifetime the API server issues; a hub may cap it lower, which register and rotate report)",
            format_duration(MAX_TOKEN_TTL)
        )
    };
    let d = parse_duration(s).map_err(|e| {
        if e.ends_with("too long") {
            longest()
        } else {
            e
        }
    })?;
    let min = crate::fleet::rbac::MIN_TOKEN_TTL;
    if d < min {
        return Err(format!(
            "{s:?} is shorter than {}, the shortest token lifetime the API server issues (use e.g. 1h, 30d)",
            format_duration(min)
        ));
    }
    if d > MAX_TOKEN_TTL {
        return Err(longest());
    }
    Ok(d)
}

/// The longest `--token-ttl`: the API server refuses a TokenRequest for
/// more than 2^32 seconds (about 136 years).
const MAX_TOKEN_TTL: Duration = Duration::from_secs(1 << 32);

/// The confirmation rules of every command that removes or changes what
/// others rely on: `--yes` goes ahead; off a terminal without it, refuses
/// with `refusal`; on a terminal, asks `prompt` ([`ask`]).
pub(crate) fn confirm(yes: bool, prompt: &str, refusal: &str, io: &Io<'_>) -> Result<(), Error> {
    if yes {
        return Ok(());
    }
    if !io.interactive {
        return Err(Error::Invalid {
            what: refusal.to_owned(),
            hint: "pass --yes (no terminal to ask on)".into(),
        });
    }
    ask(prompt)
}

/// Asks `prompt` on the terminal (default no); a declined prompt is
/// [`Error::Aborted`] (exit 1, nothing changed).
pub(crate) fn ask(prompt: &str) -> Result<(), Error> {
    let confirmed = dialoguer::Confirm::new()
        .with_prompt(prompt)
        .default(false)
        .interact()
        .map_err(|e| Error::Output(std::io::Error::other(e)))?;
    if confirmed {
        Ok(())
    } else {
        Err(Error::Aborted)
    }
}

/// What the repository's build tool (`xtask`, `cargo xtask regen`) writes
/// from the plugin's own definitions: the completion scripts and the
/// kustomize bases. Nothing in the plugin calls it, so it is not in the
/// shipped binary.
#[doc(hidden)]
pub mod generated {
    pub use super::completion::{Shell, script};
    pub use super::kustomize::{Artifact, artifacts as kustomize_artifacts};
    pub use super::version::VERSION;
}

/// The value parser of an argument taking a [`crate::api::WireEnum`]: its
/// wire values are the possible values (listed in `--help` and completed).
fn wire_enum<T: crate::api::WireEnum>() -> impl TypedValueParser<Value = T> {
    // Matched in any case ([`usage::conventions`]): the value as written
    // in the API, whatever the case typed.
    PossibleValuesParser::new(T::ALL.iter().map(|v| v.as_str())).map(|s| {
        *T::ALL
            .iter()
            .find(|v| v.as_str().eq_ignore_ascii_case(&s))
            .expect("clap only passes one of the possible values")
    })
}

/// Validates a site name on the command line, before any API call.
fn parse_site_name(s: &str) -> Result<String, String> {
    crate::fleet::rbac::validate_site_name(s)
        .map(|()| s.to_owned())
        .map_err(|e| {
            let msg = e.to_string();
            let msg = msg
                .strip_prefix("invalid site name ")
                .unwrap_or(&msg)
                .to_owned();
            format!("{msg}; {}", e.hint())
        })
}

/// Validates `--region` on the command line: a label value, as the CRD
/// requires, so a bad one stops before anything is written.
fn parse_region(s: &str) -> Result<String, String> {
    crate::api::validate_region(s).map(|()| s.to_owned())
}

/// Validates `--display-name` on the command line (length, no control or
/// format characters), as the CRD requires.
fn parse_display_name(s: &str) -> Result<String, String> {
    crate::api::validate_display_name(s).map(|()| s.to_owned())
}

/// How `--color` decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and NO_COLOR is unset
    Auto,
    /// Always colour
    Always,
    /// Never colour
    Never,
}

impl ColorChoice {
    /// Resolves the choice against the terminal and `NO_COLOR`.
    pub fn enabled(self, stdout_tty: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                stdout_tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_tree_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn durations() {
        assert_eq!(parse_token_ttl("10m"), Ok(Duration::from_secs(600)));
        let short = parse_token_ttl("5m").unwrap_err();
        assert!(short.contains("shorter than 10m"), "{short}");
        let long = parse_token_ttl("9999999999").unwrap_err();
        assert!(
            long.contains("longer than the maximum, 49710d6h28m16s (2^32 seconds"),
            "{long}"
        );
        assert_eq!(
            parse_token_ttl("49710d6h28m16s"),
            Ok(Duration::from_secs(1 << 32))
        );
    }

    #[test]
    fn invalid_site_name_is_rejected_by_the_parser() {
        let err = usage::try_parse_from::<Cli, _, _>(["kubectl-fleet", "register", "Site_A"])
            .unwrap_err();
        let line = usage_error_line(&err);
        assert!(
            line.starts_with("error: invalid value 'Site_A' for '[SITE]'"),
            "{line}"
        );
        assert!(line.contains("DNS-1123"), "{line}");
        assert!(!line.contains('\n'));
    }

    #[test]
    fn unknown_tier_and_heartbeat_range_are_one_line() {
        let err = usage::try_parse_from::<Cli, _, _>([
            "kubectl-fleet",
            "register",
            "a",
            "--tier",
            "gold",
        ])
        .unwrap_err();
        let line = usage_error_line(&err);
        assert!(
            line.contains("'gold'") && line.contains("critical, standard, non-critical"),
            "{line}"
        );
        let err = usage::try_parse_from::<Cli, _, _>([
            "kubectl-fleet",
            "register",
            "a",
            "--heartbeat-interval",
            "5",
        ])
        .unwrap_err();
        let line = usage_error_line(&err);
        assert!(line.contains("10..=3600"), "{line}");
    }

    #[test]
    fn region_and_display_name_are_checked_on_the_command_line() {
        let line = |args: &[&str]| {
            let mut argv = vec!["kubectl-fleet", "register", "a"];
            argv.extend_from_slice(args);
            usage_error_line(&usage::try_parse_from::<Cli, _, _>(argv).unwrap_err())
        };
        let region = line(&["--region", "us east"]);
        assert!(
            region.starts_with(
                "error: invalid value 'us east' for '--region <REGION>': must be letters, digits"
            ),
            "{region}"
        );
        assert!(region.contains("e.g. us-east-1"), "{region}");
        let long = line(&["--region", &"a".repeat(64)]);
        assert!(long.contains("at most 63 characters"), "{long}");
        let name = line(&["--display-name", "Site\u{202e}A"]);
        assert!(name.contains("control or format characters"), "{name}");
        assert!(!name.contains('\u{202e}'), "{name}");
        let long = line(&["--display-name", &"n".repeat(129)]);
        assert!(long.contains("at most 128 characters"), "{long}");
        assert!(
            usage::try_parse_from::<Cli, _, _>([
                "kubectl-fleet",
                "register",
                "a",
                "--region",
                "eu-west-1"
            ])
            .is_ok()
        );
    }

    #[test]
    fn shell_lines_run_as_written() {
        assert_eq!(
            shell_line(&[
                "kubectl",
                "fleet",
                "register",
                "site-a",
                "--output-file",
                "/tmp/a b/it's"
            ]),
            r"kubectl fleet register site-a --output-file '/tmp/a b/it'\''s'"
        );
        assert_eq!(shell_line(&["--display-name", ""]), "--display-name ''");
    }

    #[test]
    fn no_color_env_and_flag() {
        assert!(!ColorChoice::Never.enabled(true));
        assert!(ColorChoice::Always.enabled(false));
        assert!(!ColorChoice::Auto.enabled(false));
    }
}
