//! `kubectl fleet completion bash|zsh|fish`: print a completion script for
//! the `kubectl-fleet` binary (the same scripts are checked in under
//! `completions/`, with `kubectl_complete-fleet` for `kubectl fleet <TAB>`).

use super::{Error, Io, command};

/// Shells with a completion script.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    /// Bash
    Bash,
    /// Zsh
    Zsh,
    /// Fish
    Fish,
}

impl Shell {
    fn generator(self) -> clap_complete::Shell {
        match self {
            Shell::Bash => clap_complete::Shell::Bash,
            Shell::Zsh => clap_complete::Shell::Zsh,
            Shell::Fish => clap_complete::Shell::Fish,
        }
    }

    /// File name of the checked-in script under `completions/`.
    pub fn file_name(self) -> &'static str {
        match self {
            Shell::Bash => "kubectl-fleet.bash",
            Shell::Zsh => "_kubectl-fleet",
            Shell::Fish => "kubectl-fleet.fish",
        }
    }
}

/// Arguments of `kubectl fleet completion`.
#[derive(Debug, clap::Args)]
pub struct CompletionArgs {
    /// The shell to print a completion script for
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The completion script for `shell`.
pub fn script(shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell.generator(), &mut command(), "kubectl-fleet", &mut out);
    out
}

/// Runs `kubectl fleet completion`.
pub fn run(args: CompletionArgs, io: &mut Io<'_>) -> Result<(), Error> {
    io.out.write_all(&script(args.shell))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_name_the_binary_and_subcommands() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let text = String::from_utf8(script(shell)).unwrap();
            assert!(text.contains("kubectl-fleet"), "{shell:?}");
            assert!(
                text.contains("register") && text.contains("unregister"),
                "{shell:?}"
            );
            assert!(
                !text.contains("__complete"),
                "internal entry points stay out ({shell:?})"
            );
        }
    }
}
