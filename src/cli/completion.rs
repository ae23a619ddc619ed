//! `kubectl fleet completion bash|zsh|fish|powershell`: print a completion
//! script for the `kubectl-fleet` binary (the same scripts are checked in
//! under `completions/`, with `kubectl_complete-fleet` for `kubectl fleet
//! <TAB>` on Unix).
//!
//! PowerShell (the Windows plugin's shell, and `pwsh` elsewhere):
//! `kubectl-fleet completion powershell | Out-String | Invoke-Expression`
//! in the profile completes the commands and flags of `kubectl-fleet …`,
//! the binary's own name (not the values of a flag), loaded as kubectl's
//! own `completion powershell` is.

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
    /// PowerShell (Windows PowerShell 5.1 and PowerShell 7)
    Powershell,
}

impl Shell {
    /// Every shell with a script, as `completions/` holds them.
    pub const ALL: [Shell; 4] = [Shell::Bash, Shell::Zsh, Shell::Fish, Shell::Powershell];
}

impl Shell {
    fn generator(self) -> clap_complete::Shell {
        match self {
            Shell::Bash => clap_complete::Shell::Bash,
            Shell::Zsh => clap_complete::Shell::Zsh,
            Shell::Fish => clap_complete::Shell::Fish,
            Shell::Powershell => clap_complete::Shell::PowerShell,
        }
    }

    /// File name of the checked-in script under `completions/`.
    pub fn file_name(self) -> &'static str {
        match self {
            Shell::Bash => "kubectl-fleet.bash",
            Shell::Zsh => "_kubectl-fleet",
            Shell::Fish => "kubectl-fleet.fish",
            Shell::Powershell => "kubectl-fleet.ps1",
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
        for shell in Shell::ALL {
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

    #[test]
    fn powershell_registers_a_completer_for_the_binary_with_its_values() {
        let text = String::from_utf8(script(Shell::Powershell)).unwrap();
        assert!(
            text.contains("Register-ArgumentCompleter -Native -CommandName 'kubectl-fleet'"),
            "{text}"
        );
        // Commands and their flags are offered (clap_complete's PowerShell
        // script completes no flag values).
        for word in ["'status'", "'rotate'", "'--revoke'", "'--output-dir'"] {
            assert!(text.contains(word), "{word} missing");
        }
    }
}
