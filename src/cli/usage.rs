//! The command-line conventions both binaries share (`kubectl fleet` and
//! `fleet-operator`), applied to their clap trees in one place:
//!
//! - **A value from a fixed set matches in any case**, and means the
//!   spelling `--help` lists: `-o JSON`, `-o Wide`, `--tier CRITICAL`,
//!   `--role Edge`, `completion PowerShell`, `--federation-role Hub`,
//!   `--metrics-auth=TRUE` ([`conventions`]). kubectl itself accepts
//!   `-o JSON`, `-o YAML` and `-o NAME` but refuses `-o Wide`, `-o
//!   JSONPATH=…`, `--dry-run=Client` and `completion Bash`; here no two
//!   accepted values differ only in case, so the case never changes what
//!   a value means and is never a reason to refuse it. What the user
//!   writes freely is left as typed: names, label selectors, regions, a
//!   JSONPath template. Files are not command lines: `register -f` reads
//!   an inventory as `kubectl apply` does, with the CRD's exact spelling
//!   (`tier: Critical` is refused there, naming `critical`).
//! - **A usage error is one line on stderr, exit 2** ([`usage_error_line`]):
//!   what was wrong, the value meant when the one typed is a slip of an
//!   accepted one (`-o wdie`: did you mean 'wide'?; `--environment prod`:
//!   'production'; `--federation-role edg`: 'edge'), or the command or
//!   flag meant (`statsu`, `--regoin`), and the accepted values or where
//!   the help is.
//! - `--help` and `--version` print on stdout and exit 0; so does a
//!   command line with no arguments at all, as kubectl's does
//!   ([`parse_or_exit`]).

use std::ffi::OsString;
use std::process::ExitCode;

use clap::builder::{PossibleValuesParser, TypedValueParser as _, ValueParser};
use clap::{Arg, Command};

/// `cmd` with the conventions of this module applied to every argument
/// of it and of its subcommands.
pub fn conventions(cmd: Command) -> Command {
    cmd.mut_args(any_case).mut_subcommands(conventions)
}

/// An argument whose values come from a fixed set, matched in any case.
fn any_case(arg: Arg) -> Arg {
    if !arg.get_action().takes_values() {
        // A switch (`--yes`): no value to match.
        return arg;
    }
    if arg.get_value_parser().type_id() == ValueParser::bool().type_id() {
        // clap's `true|false` parser compares bytes; `--metrics-auth=TRUE`
        // means what it says, as Go's flags (kubectl's) read it.
        return arg.ignore_case(true).value_parser(
            PossibleValuesParser::new(["true", "false"]).map(|s| s.eq_ignore_ascii_case("true")),
        );
    }
    let enumerated = arg
        .get_value_parser()
        .possible_values()
        .is_some_and(|mut values| values.next().is_some());
    if enumerated {
        arg.ignore_case(true)
    } else {
        arg
    }
}

/// Parses `args` (the program's name first) as `T` under [`conventions`].
pub fn try_parse_from<T, I, S>(args: I) -> Result<T, clap::Error>
where
    T: clap::Parser,
    I: IntoIterator<Item = S>,
    S: Into<OsString> + Clone,
{
    let mut cmd = conventions(T::command());
    let mut matches = cmd.try_get_matches_from_mut(args)?;
    T::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut cmd))
}

/// Parses the process's command line as `T` under [`conventions`]; when
/// there is nothing to run, prints what is asked for and gives the exit
/// code: help and version on stdout (0), a usage error as one line on
/// stderr ([`usage_error_line`], 2).
pub fn parse_or_exit<T: clap::Parser>() -> Result<T, ExitCode> {
    match try_parse_from::<T, _, _>(std::env::args_os()) {
        Ok(parsed) => Ok(parsed),
        Err(err) if !err.use_stderr() => {
            // --help and --version: clap's own output on stdout.
            let _ = err.print();
            Err(ExitCode::SUCCESS)
        }
        Err(err)
            if err.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            // No arguments at all: the help on stdout, exit 0, as kubectl does.
            let _ = conventions(T::command()).print_help();
            Err(ExitCode::SUCCESS)
        }
        Err(err) => {
            eprintln!("{}", usage_error_line(&err));
            Err(ExitCode::from(2))
        }
    }
}

/// The one line printed for a command-line error: clap's first paragraph
/// (which names the argument and value) folded onto one line, plus the
/// value, command or flag probably meant, and the accepted values or
/// where to find help.
pub fn usage_error_line(err: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let rendered = err.render().to_string();
    let mut lines = rendered.lines().map(str::trim_end);
    let paragraph: Vec<&str> = lines
        .by_ref()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| !l.trim().is_empty())
        .collect();
    let valid = err.get(ContextKind::ValidValue).and_then(|v| match v {
        ContextValue::Strings(values) => Some(values.join(", ")),
        ContextValue::String(value) => Some(value.clone()),
        _ => None,
    });
    let mut first = paragraph
        .first()
        .map_or("invalid command line", |l| l.trim())
        .to_owned();
    let details: Vec<&str> = paragraph
        .iter()
        .skip(1)
        .map(|l| l.trim())
        // clap's "[possible values: …]": said once, below, as "use one of".
        .filter(|l| valid.is_none() || !l.starts_with("[possible values:"))
        .collect();
    if !details.is_empty() {
        first = format!("{first} {}", details.join(", "));
    }
    if !first.starts_with("error:") {
        first = format!("error: {first}");
    }
    // The program's name: "fleet-operator", or the command of the usage
    // line ("Usage: kubectl fleet install --site <SITE> ..."), so the
    // hint names the help that exists.
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
    // A value that is a slip of an accepted one (`-o wdie`, `--environment
    // prod`), by the shared did-you-mean; else the value the parser
    // suggested itself.
    let meant = match (
        err.get(ContextKind::InvalidValue),
        err.get(ContextKind::ValidValue),
    ) {
        (Some(ContextValue::String(typed)), Some(ContextValue::Strings(values))) => {
            crate::fleet::suggest::closest(typed, values.iter().map(String::as_str))
                .map(str::to_owned)
        }
        _ => None,
    }
    .or_else(|| match err.get(ContextKind::SuggestedValue) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(s)) => s.first().cloned(),
        _ => None,
    })
    .map(|m| format!(" (did you mean '{m}'?)"))
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

/// The command line `kubectl fleet ARGS...` parsed, for the commands'
/// unit tests.
#[cfg(test)]
pub(crate) fn parse_args(args: &[&str]) -> Result<crate::cli::Cli, clap::Error> {
    let mut argv = vec!["kubectl-fleet"];
    argv.extend_from_slice(args);
    try_parse_from::<crate::cli::Cli, _, _>(argv)
}

/// The one-line usage error `kubectl fleet ARGS...` prints (panics when
/// it parses).
#[cfg(test)]
pub(crate) fn line(args: &[&str]) -> String {
    usage_error_line(&parse_args(args).unwrap_err())
}

/// Whether `kubectl fleet ARGS...` parses.
#[cfg(test)]
pub(crate) fn parses(args: &[&str]) -> bool {
    parse_args(args).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_arguments_are_named_on_the_one_line() {
        assert_eq!(
            line(&["install", "--role", "edge"]),
            "error: the following required arguments were not provided: --site <SITE>: see `kubectl fleet install --help`"
        );
        // `required_if_eq` holds whatever the case the role was typed in.
        assert_eq!(
            line(&["install", "--role", "EDGE"]),
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
    fn slips_of_enum_values_get_a_did_you_mean_and_the_values_once() {
        assert_eq!(
            line(&["register", "a", "--environment", "prod"]),
            "error: invalid value 'prod' for '--environment <ENV>' (did you mean 'production'?): use one of development, staging, production, dr"
        );
        let tier = line(&["register", "a", "--tier", "critcal"]);
        assert!(tier.contains("(did you mean 'critical'?)"), "{tier}");
        assert_eq!(tier.matches("non-critical").count(), 1, "{tier}");
        assert_eq!(
            line(&["status", "-o", "wdie"]),
            "error: invalid value 'wdie' for '--output <FORMAT>' (did you mean 'wide'?): use one of table, wide, json, yaml, name, jsonpath=TEMPLATE"
        );
        assert_eq!(
            line(&["status", "-o", "jsonpth={.sites[*].name}"]),
            "error: invalid value 'jsonpth={.sites[*].name}' for '--output <FORMAT>' (did you mean 'jsonpath={.sites[*].name}'?): use one of table, wide, json, yaml, name, jsonpath=TEMPLATE"
        );
        let nothing_close = line(&["status", "-o", "xml"]);
        assert_eq!(
            nothing_close,
            "error: invalid value 'xml' for '--output <FORMAT>': use one of table, wide, json, yaml, name, jsonpath=TEMPLATE"
        );
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

    #[test]
    fn values_from_a_fixed_set_match_in_any_case() {
        for args in [
            &["status", "-o", "JSON"][..],
            &["status", "-o", "Wide"],
            &["status", "-o", "JSONPATH={.sites[*].name}"],
            &[
                "status",
                "--tier",
                "CRITICAL",
                "--environment",
                "Production",
            ],
            &["status", "--phase", "stale"],
            &["incidents", "-o", "Yaml"],
            &["describe", "a", "-o", "JSON"],
            &["policy", "--tier", "Non-Critical", "-o", "Json"],
            &[
                "register",
                "a",
                "--capability",
                "Remediation",
                "--emit",
                "Secret",
            ],
            &["install", "--role", "Hub"],
            &["uninstall", "--role", "EDGE"],
            &["completion", "Bash"],
            &["status", "--color", "NEVER"],
        ] {
            assert!(parses(args), "{args:?}: {}", line(args));
        }
        // What the user names freely keeps its case: a JSONPath key is not a value of a set.
        assert!(line(&["status", "-o", "jsonpath={.Sites}"]).contains(".Sites"));
    }

    /// The rule holds for every argument of the tree, not a list: each
    /// value `--help` offers is accepted in upper case and means itself.
    #[test]
    fn every_enumerated_value_of_the_tree_is_accepted_in_upper_case() {
        fn walk(cmd: &Command, checked: &mut usize) {
            for arg in cmd.get_arguments() {
                let Some(values) = arg.get_value_parser().possible_values() else {
                    continue;
                };
                if !arg.get_action().takes_values() {
                    continue;
                }
                // The argument's parser and case setting, alone on a
                // command of its own (its relations to others left out).
                let alone = Command::new("t").arg(
                    Arg::new("x")
                        .long("x")
                        .action(clap::ArgAction::Set)
                        .value_parser(arg.get_value_parser().clone())
                        .ignore_case(arg.is_ignore_case_set()),
                );
                for value in values.filter(|v| !v.is_hide_set()) {
                    let mut upper = value.get_name().to_ascii_uppercase();
                    if upper.ends_with('=') {
                        // `jsonpath=` takes a template (which keeps its case).
                        upper.push_str("{.sites[*].name}");
                    }
                    let parsed = alone.clone().try_get_matches_from(["t", "--x", &upper]);
                    assert!(
                        parsed.is_ok(),
                        "{} {}: {upper} refused",
                        cmd.get_name(),
                        arg.get_id()
                    );
                    *checked += 1;
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, checked);
            }
        }
        let mut cmd = crate::cli::command();
        cmd.build();
        let mut checked = 0;
        walk(&cmd, &mut checked);
        assert!(checked > 30, "only {checked} values checked");
    }
}
