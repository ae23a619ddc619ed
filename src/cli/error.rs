//! Command errors: one line for the user (`error: <what failed>: <causes
//! it does not already say>: <hint>`), each cause on its own line with `-v`.

use std::path::PathBuf;

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A Kubernetes call failed (classified, with its own hint). Boxed: it
    /// carries the whole `kube::Error` and would bloat every `Result`.
    #[error(transparent)]
    Kube(Box<crate::k8s::Error>),
    /// The command line was valid but the request makes no sense.
    #[error("{what}")]
    Invalid {
        /// What is wrong.
        what: String,
        /// What to do instead.
        hint: String,
    },
    /// A local file could not be read.
    #[error("failed to read {}: {source}", path.display())]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A local file could not be written.
    #[error("failed to write {}: {source}", path.display())]
    WriteFile {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Writing to stdout/stderr failed (e.g. a closed pipe).
    #[error("failed to write output: {0}")]
    Output(#[from] std::io::Error),
    /// A report could not be rendered.
    #[error(transparent)]
    Render(#[from] crate::render::RenderError),
    /// The user declined the confirmation prompt (exit 1, nothing changed).
    #[error("aborted: nothing was changed")]
    Aborted,
    /// Ctrl-C stopped a command that changes the cluster
    /// ([`super::interrupt`]): says what it left.
    #[error("interrupted")]
    Interrupted {
        /// What the command said of its changes.
        left: super::interrupt::Said,
        /// Whether a second Ctrl-C cut a step that was meant to finish.
        cut: bool,
    },
    /// A command that changes the cluster ran to its end, but its reader
    /// went away before all of its output was written.
    #[error("{stream} was closed before all output was written")]
    OutputCut {
        /// `stdout` or `stderr`.
        stream: &'static str,
    },
    /// A step failed after the command had already changed the cluster:
    /// the hint says what exists now and the command that finishes it.
    #[error("{source}")]
    Partial {
        /// The step's error.
        source: Box<Error>,
        /// What exists now, e.g. "site site-a exists on the hub but …".
        state: String,
        /// The command that finishes the job (a re-run; it converges).
        finish: String,
        /// The command that removes what was created (None when the
        /// command changed something that existed before).
        undo: Option<String>,
    },
}

impl From<crate::k8s::Error> for Error {
    fn from(err: crate::k8s::Error) -> Self {
        Error::Kube(Box::new(err))
    }
}

impl Error {
    /// What the user should do next.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::Kube(e) => Some(e.hint()),
            Error::Invalid { hint, .. } => Some(hint.clone()),
            Error::ReadFile { .. } => Some("check the path and its permissions".into()),
            Error::WriteFile { .. } => {
                Some("check the directory exists and is writable (an existing file is never overwritten with wider permissions)".into())
            }
            Error::Partial {
                source,
                state,
                finish,
                undo,
            } => {
                let first = source.hint().map(|h| format!("{h}; ")).unwrap_or_default();
                let undo = undo
                    .as_ref()
                    .map(|u| format!(", or `{u}` to remove it"))
                    .unwrap_or_default();
                Some(format!("{first}{state}: run `{finish}` to finish{undo}"))
            }
            Error::Interrupted { left, cut } => {
                use super::interrupt::Said;
                let cut = if *cut {
                    "a second Ctrl-C cut the step in progress, so what it wrote may be incomplete; "
                } else {
                    ""
                };
                Some(match left {
                    Said::Unknown => format!(
                        "{cut}the command stopped between two steps: re-run it to finish (it converges)"
                    ),
                    Said::Nothing if cut.is_empty() => "nothing was changed".to_owned(),
                    Said::Nothing => format!("{cut}re-run the command to finish"),
                    Said::Left(left) => {
                        let undo = left
                            .undo
                            .as_ref()
                            .map(|u| format!(", or `{u}` to remove it"))
                            .unwrap_or_default();
                        format!("{cut}{}: run `{}` to finish{undo}", left.state, left.finish)
                    }
                })
            }
            Error::OutputCut { .. } => Some(
                "the command ran to its end (its changes are made), but part of its report was lost: redirect the output to a file instead of closing the pipe early (e.g. `> out.txt`, then `head out.txt`)".into(),
            ),
            Error::Output(_) | Error::Render(_) | Error::Aborted => None,
        }
    }

    /// The one line printed on failure (server messages that span lines
    /// are folded, so the promise of one line holds).
    pub fn user_line(&self) -> String {
        let what = self.what_failed();
        let line = match self.hint() {
            Some(hint) => format!("error: {what}: {hint}"),
            None => format!("error: {what}"),
        };
        let line = line
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        // An API server's or member cluster's message may carry text a site
        // wrote; it reaches the terminal escaped.
        crate::render::safe::terminal_safe(&line).into_owned()
    }

    /// What failed, with the causes its message does not already say. A
    /// Kubernetes error's message already holds the readable part of its
    /// cause (the API's message, the root of a transport failure); the
    /// client library's own chain below it is for `-v`.
    fn what_failed(&self) -> String {
        match self {
            Error::Kube(e) => e.to_string(),
            Error::Partial { source, .. } => source.what_failed(),
            other => crate::k8s::with_causes(other),
        }
    }

    /// Whether the reader of our output went away (`kubectl fleet status |
    /// head`): not a failure, the command just stops, like any Unix filter.
    pub fn is_closed_pipe(&self) -> bool {
        match self {
            Error::Output(e) => e.kind() == std::io::ErrorKind::BrokenPipe,
            Error::Partial { source, .. } => source.is_closed_pipe(),
            _ => false,
        }
    }

    /// The process exit code: 1 for every failure, a declined prompt
    /// included (as kubectl exits when its confirmation is declined); 130
    /// for a command Ctrl-C stopped, as a shell reports SIGINT.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Interrupted { .. } => 130,
            _ => 1,
        }
    }
}

/// The one line printed for a command-line error: clap's first paragraph
/// (which names the argument and value) folded onto one line, plus the
/// accepted values or where to find help.
pub fn usage_error_line(err: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let rendered = err.render().to_string();
    let mut lines = rendered.lines().map(str::trim_end);
    let paragraph: Vec<&str> = lines
        .by_ref()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| !l.trim().is_empty())
        .collect();
    let mut first = paragraph
        .first()
        .map_or("invalid command line", |l| l.trim())
        .to_owned();
    let details: Vec<&str> = paragraph.iter().skip(1).map(|l| l.trim()).collect();
    if !details.is_empty() {
        first = format!("{first} {}", details.join(", "));
    }
    if !first.starts_with("error:") {
        first = format!("error: {first}");
    }
    // "Usage: kubectl fleet install --site <SITE> ..." names the command.
    let command = rendered
        .lines()
        .find_map(|l| l.trim().strip_prefix("Usage: "))
        .map(|usage| {
            usage
                .split_whitespace()
                .take_while(|w| !w.starts_with(['-', '[', '<']))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "kubectl fleet".to_owned());
    let valid = err.get(ContextKind::ValidValue).and_then(|v| match v {
        ContextValue::Strings(values) => Some(values.join(", ")),
        ContextValue::String(value) => Some(value.clone()),
        _ => None,
    });
    // The value typed is echoed (clap drops escape sequences from it, not
    // other controls): shown escaped and, when long, cut.
    if let Some(ContextValue::String(value)) = err.get(ContextKind::InvalidValue)
        && let Some(start) = first.find("value '").map(|i| i + "value '".len())
        && let Some(len) = first[start..].find("' for '")
    {
        let shown = crate::render::safe::safe_text(value, MAX_ECHOED_VALUE_CHARS);
        first.replace_range(start..start + len, &shown);
    }
    // clap's "tip: a similar subcommand/argument exists" (its `suggestions`
    // feature), folded onto the line as kubectl's "Did you mean this?".
    let suggested = [ContextKind::SuggestedSubcommand, ContextKind::SuggestedArg]
        .into_iter()
        .find_map(|kind| match err.get(kind) {
            Some(ContextValue::String(s)) => Some(vec![s.clone()]),
            Some(ContextValue::Strings(s)) if !s.is_empty() => Some(s.clone()),
            _ => None,
        });
    if let Some(names) = suggested {
        let names: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
        let line = format!(
            "{first}: did you mean {}? see `{command} --help`",
            names.join(" or ")
        );
        return crate::render::safe::terminal_safe(&line).into_owned();
    }
    // A value that is a slip of an accepted one: `-o wdie`, `--environment prod`.
    let meant = match (
        err.get(ContextKind::InvalidValue),
        err.get(ContextKind::ValidValue),
    ) {
        (Some(ContextValue::String(typed)), Some(ContextValue::Strings(values))) => {
            crate::fleet::suggest::closest(typed, values.iter().map(String::as_str))
                .map(|m| format!(" (did you mean '{m}'?)"))
        }
        _ => None,
    }
    .unwrap_or_default();
    let line = match valid {
        Some(values) => format!("{first}{meant}: use one of {values}"),
        // "invalid value 'x' for '--flag': <why>" already says what to fix.
        None if first.contains("': ") => first,
        None => format!("{first}: see `{command} --help`"),
    };
    crate::render::safe::terminal_safe(&line).into_owned()
}

/// Characters of a rejected value echoed in a usage error.
const MAX_ECHOED_VALUE_CHARS: usize = 80;

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    fn line(args: &[&str]) -> String {
        let mut argv = vec!["kubectl-fleet"];
        argv.extend_from_slice(args);
        usage_error_line(&crate::cli::Cli::try_parse_from(argv).unwrap_err())
    }

    #[test]
    fn missing_arguments_are_named_on_the_one_line() {
        assert_eq!(
            line(&["install", "--role", "edge"]),
            "error: the following required arguments were not provided: --site <SITE>: see `kubectl fleet install --help`"
        );
        let completion = line(&["completion"]);
        assert!(completion.contains("<SHELL>"), "{completion}");
        let long = "x".repeat(500);
        let bad_region = line(&[
            "register",
            "a",
            "--region",
            &format!("\u{1b}]0;pwned\u{7}{long}"),
        ]);
        assert!(!bad_region.contains('\u{1b}'), "{bad_region}");
        assert!(bad_region.contains(r"\x1b]0;pwned\x07"), "{bad_region}");
        assert!(bad_region.chars().count() < 300, "{bad_region}");
        assert!(bad_region.contains("--region"), "{bad_region}");
        let unknown = line(&["registr"]);
        assert!(
            unknown.starts_with("error: unrecognized subcommand 'registr'"),
            "{unknown}"
        );
        assert!(!unknown.contains('\n'));
    }

    #[test]
    fn slips_of_enum_values_get_a_did_you_mean() {
        let env = line(&["register", "a", "--environment", "prod"]);
        assert!(
            env.contains("(did you mean 'production'?): use one of"),
            "{env}"
        );
        let tier = line(&["register", "a", "--tier", "critcal"]);
        assert!(tier.contains("(did you mean 'critical'?)"), "{tier}");
    }

    #[test]
    fn unknown_commands_and_flags_get_a_did_you_mean() {
        assert_eq!(
            line(&["statsu"]),
            "error: unrecognized subcommand 'statsu': did you mean 'status'? see `kubectl fleet --help`"
        );
        assert_eq!(
            line(&["register", "a", "--regoin", "eu"]),
            "error: unexpected argument '--regoin' found: did you mean '--region'? see `kubectl fleet register --help`"
        );
        // Nothing close: where to look instead.
        assert_eq!(
            line(&["xyzzy"]),
            "error: unrecognized subcommand 'xyzzy': see `kubectl fleet --help`"
        );
    }
}
