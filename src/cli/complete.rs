//! `kubectl-fleet __complete WORDS…`: completions in the format kubectl
//! expects from a plugin's `kubectl_complete-fleet` helper (kubectl ≥ 1.26
//! runs it with the words after `kubectl fleet`, the last one being the
//! word under the cursor): one candidate per line, `name\tdescription`,
//! then `:DIRECTIVE` (4 = no file completion, 0 = default, files allowed).

use super::command;

/// Cobra's "do not fall back to file names".
const NO_FILE_COMP: u8 = 4;
/// Cobra's default directive: the shell may complete file names.
const DEFAULT_COMP: u8 = 0;

fn takes_value(arg: &clap::Arg) -> bool {
    arg.get_num_args().is_some_and(|n| n.takes_values())
}

fn is_path(arg: &clap::Arg) -> bool {
    matches!(
        arg.get_value_hint(),
        clap::ValueHint::FilePath | clap::ValueHint::AnyPath | clap::ValueHint::DirPath
    ) || arg
        .get_value_names()
        .is_some_and(|names| names.iter().any(|n| n == "FILE"))
}

fn find_flag<'a>(cmd: &'a clap::Command, word: &str) -> Option<&'a clap::Arg> {
    if let Some(long) = word.strip_prefix("--") {
        let long = long.split('=').next().unwrap_or(long);
        cmd.get_arguments().find(|a| a.get_long() == Some(long))
    } else {
        let short = word.strip_prefix('-')?.chars().next()?;
        cmd.get_arguments().find(|a| a.get_short() == Some(short))
    }
}

/// Completes the last word of `words` (pure; tested below).
pub fn complete(words: &[String]) -> String {
    let mut root = command();
    root.build();
    let (partial, before) = match words.split_last() {
        Some((last, rest)) => (last.as_str(), rest),
        None => ("", &[][..]),
    };
    let mut cmd = &root;
    let mut pending_value: Option<&clap::Arg> = None;
    for word in before {
        if pending_value.take().is_some() {
            continue;
        }
        if word.starts_with('-') && word.len() > 1 {
            if let Some(arg) = find_flag(cmd, word)
                && takes_value(arg)
                && !word.contains('=')
            {
                pending_value = Some(arg);
            }
        } else if let Some(sub) = cmd.find_subcommand(word) {
            cmd = sub;
        }
    }
    let mut out = String::new();
    let directive = if let Some(arg) = pending_value {
        for value in arg.get_possible_values() {
            if !value.is_hide_set() && value.get_name().starts_with(partial) {
                push(
                    &mut out,
                    value.get_name(),
                    value.get_help().map(|h| h.to_string()),
                );
            }
        }
        if is_path(arg) {
            DEFAULT_COMP
        } else {
            NO_FILE_COMP
        }
    } else if partial.starts_with('-') {
        let mut flags: Vec<(String, Option<String>)> = cmd
            .get_arguments()
            .filter(|a| !a.is_hide_set())
            .filter_map(|a| {
                a.get_long()
                    .map(|l| (format!("--{l}"), a.get_help().map(|h| h.to_string())))
            })
            .filter(|(name, _)| name.starts_with(partial))
            .collect();
        flags.sort();
        for (name, help) in flags {
            push(&mut out, &name, help);
        }
        NO_FILE_COMP
    } else {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            if sub.get_name().starts_with(partial) {
                push(
                    &mut out,
                    sub.get_name(),
                    sub.get_about().map(|h| h.to_string()),
                );
            }
        }
        for positional in cmd.get_positionals() {
            for value in positional.get_possible_values() {
                if value.get_name().starts_with(partial) {
                    push(
                        &mut out,
                        value.get_name(),
                        value.get_help().map(|h| h.to_string()),
                    );
                }
            }
        }
        NO_FILE_COMP
    };
    out.push_str(&format!(":{directive}\n"));
    out
}

fn push(out: &mut String, name: &str, help: Option<String>) {
    out.push_str(name);
    if let Some(help) = help {
        out.push('\t');
        out.push_str(help.lines().next().unwrap_or_default());
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| (*s).to_owned()).collect()
    }

    fn names(out: &str) -> Vec<&str> {
        out.lines()
            .filter(|l| !l.starts_with(':'))
            .map(|l| l.split('\t').next().unwrap())
            .collect()
    }

    #[test]
    fn completes_subcommands() {
        let out = complete(&words(&[""]));
        let names = names(&out);
        assert!(
            names.contains(&"register") && names.contains(&"status"),
            "{out}"
        );
        assert!(
            !names.iter().any(|n| n.starts_with("__")),
            "hidden commands stay hidden"
        );
        assert!(out.ends_with(":4\n"));
        assert_eq!(self::names(&complete(&words(&["re"]))), ["register"]);
    }

    #[test]
    fn completes_flags_and_their_values() {
        let out = complete(&words(&["register", "site-a", "--ti"]));
        assert_eq!(names(&out), ["--tier"]);
        let out = complete(&words(&["register", "site-a", "--tier", ""]));
        assert_eq!(names(&out), ["critical", "standard", "non-critical"]);
        let out = complete(&words(&["status", "-o", "w"]));
        assert_eq!(names(&out), ["wide"]);
    }

    #[test]
    fn global_flags_complete_everywhere_and_files_fall_back() {
        let out = complete(&words(&["status", "--kubec"]));
        assert_eq!(names(&out), ["--kubeconfig"]);
        let out = complete(&words(&["status", "--kubeconfig", ""]));
        assert_eq!(out, ":0\n");
        let out = complete(&words(&["completion", ""]));
        assert_eq!(names(&out), ["bash", "zsh", "fish"]);
    }
}
