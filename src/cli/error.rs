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
        left: Said,
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

/// What a command said of its changes so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    /// Nothing: the command does not track its steps (a re-run converges).
    Unknown,
    /// Nothing was changed yet.
    Nothing,
    /// Something was changed: what, and how to finish it.
    Left(Left),
}

/// What a command has changed so far, and how to finish or undo it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Left {
    /// What exists now, e.g. "site site-a exists on the hub but …".
    pub state: String,
    /// The one command that finishes the job.
    pub finish: String,
    /// The command that removes what this run created, if any.
    pub undo: Option<String>,
}
