//! Command errors: one line for the user (`error: <what failed>: <hint>`),
//! the cause chain with `-v`.

use std::path::PathBuf;

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A Kubernetes call failed (classified, with its own hint).
    #[error(transparent)]
    Kube(#[from] crate::k8s::Error),
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
    /// The user declined the confirmation prompt.
    #[error("aborted")]
    Aborted,
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
            Error::Output(_) | Error::Render(_) | Error::Aborted => None,
        }
    }

    /// The one line printed on failure (server messages that span lines
    /// are folded, so the promise of one line holds).
    pub fn user_line(&self) -> String {
        let line = match self.hint() {
            Some(hint) => format!("error: {self}: {hint}"),
            None => format!("error: {self}"),
        };
        line.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The process exit code: 1 for failures, 130 when the user aborted
    /// (like an interrupted prompt).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Aborted => 130,
            _ => 1,
        }
    }
}

/// The one line printed for a command-line error: clap's first line (which
/// names the argument and value) plus the accepted values or the help hint.
pub fn usage_error_line(err: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let rendered = err.render().to_string();
    let first = rendered
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("error: invalid command line")
        .trim_end()
        .to_owned();
    let first = if first.starts_with("error:") {
        first
    } else {
        format!("error: {first}")
    };
    let valid = err.get(ContextKind::ValidValue).and_then(|v| match v {
        ContextValue::Strings(values) => Some(values.join(", ")),
        ContextValue::String(value) => Some(value.clone()),
        _ => None,
    });
    match valid {
        Some(values) => format!("{first}: use one of {values}"),
        None if first.contains(": ") && first.matches(':').count() >= 2 => first,
        None => format!("{first}: see `kubectl fleet --help`"),
    }
}
