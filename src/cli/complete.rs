//! `kubectl-fleet __complete WORDS…`: completions in the format kubectl
//! expects from a plugin's `kubectl_complete-fleet` helper (kubectl ≥ 1.26
//! runs it with the words after `kubectl fleet`, the last one being the
//! word under the cursor): one candidate per line, `name\tdescription`,
//! then `:DIRECTIVE` (4 = no file completion, 0 = default, files allowed).
//!
//! Site names complete dynamically where a command takes an existing site
//! (`status`, `rotate`, `unregister`, `describe`, …): the caller passes a
//! lister that asks the hub named by the `--kubeconfig`/`--context` words
//! already typed; `register` names a new site, so it gets none.
//! `--context` and `--member-context` complete to the context names of the
//! kubeconfig typed before them (`--kubeconfig`/`--member-kubeconfig`, else
//! the one kubectl reads), as kubectl's own `--context` does.

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

/// Where to look up site names: the connection flags typed so far.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SiteQuery {
    /// `--kubeconfig FILE`, if typed.
    pub kubeconfig: Option<String>,
    /// `--context NAME`, if typed.
    pub context: Option<String>,
}

/// What completion may look up: the registered site names on the hub the
/// typed flags name, and the context names of a kubeconfig (`None`: the
/// one kubectl reads). Either may fail silently and return none.
pub struct Lookups<'a> {
    /// Registered site names.
    pub sites: &'a dyn Fn(&SiteQuery) -> Vec<String>,
    /// Context names of a kubeconfig file.
    pub contexts: &'a dyn Fn(Option<&str>) -> Vec<String>,
}

/// Positionals named like this complete to registered site names.
const SITE_VALUE_NAME: &str = "SITE";

/// Commands whose SITE positional names a site that does not exist yet.
const NEW_SITE_COMMANDS: &[&str] = &["register"];

/// Completes the last word of `words`, looking names up through `lookups`
/// (completion never errors: a failed lookup offers nothing).
pub fn complete(words: &[String], lookups: &Lookups<'_>) -> String {
    let mut root = command();
    root.build();
    let (partial, before) = match words.split_last() {
        Some((last, rest)) => (last.as_str(), rest),
        None => ("", &[][..]),
    };
    let mut cmd = &root;
    let mut pending_value: Option<&clap::Arg> = None;
    let mut query = SiteQuery::default();
    let mut member_kubeconfig: Option<String> = None;
    let mut positionals: Vec<&str> = Vec::new();
    for word in before {
        if let Some(arg) = pending_value.take() {
            match arg.get_long() {
                Some("kubeconfig") => query.kubeconfig = Some(word.clone()),
                Some("context") => query.context = Some(word.clone()),
                Some("member-kubeconfig") => member_kubeconfig = Some(word.clone()),
                _ => {}
            }
            continue;
        }
        if let Some((flag, value)) = word.split_once('=') {
            match flag {
                "--kubeconfig" => query.kubeconfig = Some(value.to_owned()),
                "--context" => query.context = Some(value.to_owned()),
                "--member-kubeconfig" => member_kubeconfig = Some(value.to_owned()),
                _ => {}
            }
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
            positionals.clear();
        } else {
            positionals.push(word);
        }
    }
    let mut out = String::new();
    // `--context=PART` completes like `--context PART`.
    let (pending_value, partial, prefix) = match (pending_value, partial.split_once('=')) {
        (None, Some((flag, value))) if flag.starts_with("--") => {
            match find_flag(cmd, flag).filter(|a| is_context(a)) {
                Some(arg) => (Some(arg), value, format!("{flag}=")),
                None => (None, partial, String::new()),
            }
        }
        (pending, _) => (pending, partial, String::new()),
    };
    let directive = if let Some(arg) = pending_value.filter(|a| is_context(a)) {
        let file = match arg.get_long() {
            Some("member-context") => member_kubeconfig.as_deref(),
            _ => query.kubeconfig.as_deref(),
        };
        let mut names = (lookups.contexts)(file);
        names.sort();
        for name in names.iter().filter(|n| n.starts_with(partial)) {
            push(&mut out, &format!("{prefix}{name}"), None);
        }
        NO_FILE_COMP
    } else if let Some(arg) = pending_value {
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
        if let Some(site_arg) = cmd.get_positionals().find(|a| {
            a.get_value_names()
                .is_some_and(|n| n.iter().any(|n| n == SITE_VALUE_NAME))
        }) && !NEW_SITE_COMMANDS.contains(&cmd.get_name())
        {
            let many = site_arg.get_num_args().is_some_and(|n| n.max_values() > 1);
            if many || positionals.is_empty() {
                for name in (lookups.sites)(&query) {
                    if name.starts_with(partial) && !positionals.contains(&name.as_str()) {
                        push(&mut out, &name, None);
                    }
                }
            }
        }
        NO_FILE_COMP
    };
    out.push_str(&format!(":{directive}\n"));
    out
}

/// Whether the flag names a kubeconfig context (`--context`,
/// `--member-context`).
fn is_context(arg: &clap::Arg) -> bool {
    matches!(arg.get_long(), Some("context" | "member-context"))
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

    fn no_sites(_: &SiteQuery) -> Vec<String> {
        panic!("this completion must not ask the hub")
    }

    fn no_contexts(_: Option<&str>) -> Vec<String> {
        panic!("this completion must not read a kubeconfig")
    }

    fn complete(words: &[String]) -> String {
        super::complete(
            words,
            &Lookups {
                sites: &no_sites,
                contexts: &no_contexts,
            },
        )
    }

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
        assert_eq!(names(&out), ["bash", "zsh", "fish", "powershell"]);
    }

    #[test]
    fn existing_sites_complete_from_the_hub_the_typed_flags_name() {
        let asked = std::cell::RefCell::new(Vec::new());
        let lister = |q: &SiteQuery| {
            asked.borrow_mut().push(q.clone());
            vec!["site-a".to_owned(), "site-b".to_owned(), "gpu-1".to_owned()]
        };
        let lookups = Lookups {
            sites: &lister,
            contexts: &no_contexts,
        };
        let run = |w: &[&str]| super::complete(&words(w), &lookups);
        assert_eq!(names(&run(&["rotate", "si"])), ["site-a", "site-b"]);
        assert_eq!(
            asked.borrow().last().unwrap(),
            &SiteQuery::default(),
            "no flags typed: the default kubeconfig"
        );
        // `status` takes many sites and does not offer one already typed.
        assert_eq!(
            names(&run(&[
                "--kubeconfig",
                "/k",
                "status",
                "--context=hub",
                "site-a",
                ""
            ])),
            ["site-b", "gpu-1"]
        );
        assert_eq!(
            asked.borrow().last().unwrap(),
            &SiteQuery {
                kubeconfig: Some("/k".into()),
                context: Some("hub".into())
            }
        );
        // `unregister` takes one site: none after it.
        assert_eq!(
            names(&run(&["unregister", "site-a", ""])),
            Vec::<&str>::new()
        );
        // `register` names a new site: the hub is not asked.
        let before = asked.borrow().len();
        assert_eq!(names(&run(&["register", ""])), Vec::<&str>::new());
        assert_eq!(asked.borrow().len(), before);
    }

    #[test]
    fn contexts_complete_from_the_kubeconfig_typed_before_them() {
        let asked = std::cell::RefCell::new(Vec::new());
        let contexts = |file: Option<&str>| {
            asked.borrow_mut().push(file.map(str::to_owned));
            vec!["hub-eu".to_owned(), "edge".to_owned(), "hub-us".to_owned()]
        };
        let lookups = Lookups {
            sites: &no_sites,
            contexts: &contexts,
        };
        let run = |w: &[&str]| super::complete(&words(w), &lookups);
        assert_eq!(
            run(&["status", "--context", ""]),
            "edge\nhub-eu\nhub-us\n:4\n"
        );
        assert_eq!(asked.borrow().last().unwrap(), &None);
        assert_eq!(
            names(&run(&["--kubeconfig", "/k", "status", "--context", "hub-"])),
            ["hub-eu", "hub-us"]
        );
        assert_eq!(asked.borrow().last().unwrap().as_deref(), Some("/k"));
        assert_eq!(
            names(&run(&["status", "--context=hub-e"])),
            ["--context=hub-eu"]
        );
        // The member's contexts come from the member's kubeconfig.
        assert_eq!(
            names(&run(&[
                "--kubeconfig",
                "/hub",
                "register",
                "a",
                "--pull",
                "--member-kubeconfig=/member",
                "--member-context",
                "e"
            ])),
            ["edge"]
        );
        assert_eq!(asked.borrow().last().unwrap().as_deref(), Some("/member"));
    }
}
