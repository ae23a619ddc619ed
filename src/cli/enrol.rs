//! `kubectl fleet register -f FILE|DIR|-`: declarative enrolment
//! (docs/operations.md#enrolling-many-sites-from-an-inventory).
//!
//! The inventory holds FederatedCluster objects exactly as `kubectl apply
//! -f` takes them: multi-document YAML, a `List`, JSON, every `.yaml`,
//! `.yml` and `.json` file of a directory, or stdin (`-`). Each site goes
//! through the same steps as `register SITE` ([`super::register`]), at
//! most `--concurrency` at once, its spec and labels taken from the file;
//! what is not part of a spec comes from the flags or from the per-site
//! annotations [`TOKEN_TTL_ANNOTATION`] and [`MEMBER_CONTEXT_ANNOTATION`].
//! One line per site on stdout and a summary; a site that fails fails
//! alone, and the command then exits non-zero naming it.
//!
//! Idempotent: a Push site whose spec, labels and identity are in place
//! and whose credential in `--output-dir` still works (the API server
//! reviews that token's rules) is left alone and nothing is minted;
//! `--rotate`, or a missing or no longer working file, mints a new one.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::StreamExt as _;

use super::interrupt::{self, Left};
use super::register::{
    BulkArgs, Change, Emit, Outcome, RegisterArgs, RegisterOutput, read_site, register_site,
};
use super::{Error, GlobalArgs, Io, format_duration, parse_site_name, parse_token_ttl, shell_line};
use crate::api::{API_VERSION, FederatedCluster, FederatedClusterSpec, Mode};
use crate::k8s::Cluster;
use crate::render::safe::safe_text;

/// Per-site token lifetime, overriding `--token-ttl` (e.g. `12h`).
pub const TOKEN_TTL_ANNOTATION: &str = "fleet.kubectl-fleet.dev/token-ttl";
/// Per-site context of `--member-kubeconfig` for a Pull site, overriding
/// `--member-context`.
pub const MEMBER_CONTEXT_ANNOTATION: &str = "fleet.kubectl-fleet.dev/member-context";

/// At most this many bytes of inventory are read (a file, stdin, or a
/// directory's files together).
const MAX_INVENTORY_BYTES: u64 = 64 << 20;
/// At most this many failed sites are named in the final error line.
const MAX_NAMED_FAILURES: usize = 10;

/// One site of the inventory, as declared.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Declared {
    pub name: String,
    pub spec: FederatedClusterSpec,
    pub labels: BTreeMap<String, String>,
    pub token_ttl: Option<Duration>,
    pub member_context: Option<String>,
}

/// An entry of the inventory: a site, or why it cannot be one (it fails
/// alone). `name` is what the entry calls itself, for the report.
#[derive(Debug)]
pub(super) struct Entry {
    pub name: String,
    pub site: Result<Declared, String>,
}

/// What the inventory holds.
#[derive(Debug, Default)]
pub(super) struct Inventory {
    pub entries: Vec<Entry>,
    /// Objects of other kinds, skipped (e.g. a Pull Secret kept beside).
    pub skipped: Vec<String>,
}

/// Runs `kubectl fleet register -f`.
pub async fn run(global: &GlobalArgs, args: RegisterArgs, io: &mut Io<'_>) -> Result<(), Error> {
    let source = args
        .bulk
        .filename
        .clone()
        .expect("the register command calls enrol only with -f");
    let inventory = read_inventory(&source)?;
    for skipped in &inventory.skipped {
        writeln!(
            io.err,
            "skipped {skipped}: register -f reads only FederatedCluster objects"
        )?;
    }
    if inventory.entries.is_empty() {
        return Err(Error::Invalid {
            what: format!("{} holds no FederatedCluster", source.display()),
            hint: format!(
                "list the sites as FederatedCluster objects (apiVersion {API_VERSION}), one YAML document or List item each"
            ),
        });
    }
    // Everything that can be checked before the first write is.
    let push_sites = inventory
        .entries
        .iter()
        .any(|e| e.site.as_ref().is_ok_and(|s| s.spec.mode == Mode::Push));
    let output_dir = args.bulk.output_dir.clone();
    if push_sites {
        let Some(dir) = &output_dir else {
            return Err(Error::Invalid {
                what: "register -f needs a directory for the edge configurations of its Push sites"
                    .into(),
                hint:
                    "add --output-dir DIR: each Push site's goes to DIR/SITE.kubeconfig (mode 0600)"
                        .into(),
            });
        };
        super::register::check_private_dir(dir, io)?;
    }
    let hub = global.hub().await?;
    // Sites in flight finish after Ctrl-C; no further one starts.
    let _hold = interrupt::hold();
    let total = inventory.entries.len();
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut failed = Vec::new();
    let mut unconfirmed = false;
    let mut not_started = 0;
    let mut results = futures::stream::iter(inventory.entries)
        .map(|entry| async {
            if interrupt::requested() {
                return None;
            }
            Some(enrol_one(global, &hub, &args, output_dir.as_deref(), entry).await)
        })
        // One line per site in inventory order.
        .buffered(usize::from(args.bulk.concurrency));
    while let Some(done) = results.next().await {
        let Some(done) = done else {
            not_started += 1;
            continue;
        };
        let word = match &done.result {
            Ok(outcome) => change_word(outcome.change),
            Err(_) => "failed",
        };
        *counts.entry(word).or_default() += 1;
        writeln!(io.out, "{}", done.line())?;
        for warning in &done.warnings {
            writeln!(io.err, "warning: site {}: {warning}", done.name)?;
        }
        if let Err(e) = &done.result {
            unconfirmed |= super::register::is_unconfirmed_switch(e);
            failed.push(done.name);
        }
    }
    let mut summary = ["created", "configured", "unchanged", "failed"]
        .iter()
        .map(|w| format!("{} {w}", counts.get(w).copied().unwrap_or(0)))
        .collect::<Vec<_>>()
        .join(", ");
    if not_started > 0 {
        summary.push_str(&format!(", {not_started} not started (interrupted)"));
    }
    writeln!(io.out, "{total} sites: {summary}")?;
    let rerun = shell_line(&rerun_words(global, &args, unconfirmed));
    if not_started > 0 {
        return Err(Error::Interrupted {
            left: interrupt::Said::Left(Left {
                state: format!(
                    "{} of {total} sites of {} registered; {not_started} not started",
                    total - not_started - failed.len(),
                    source.display()
                ),
                finish: rerun,
                undo: None,
            }),
            cut: false,
        });
    }
    bulk_failures(&failed, total, &rerun)
}

/// This `register -f` command line with every flag that shaped it (a
/// re-run converges: what is in place is left alone), `--yes` added when
/// `yes` (or given).
fn rerun_words(global: &GlobalArgs, args: &RegisterArgs, yes: bool) -> Vec<String> {
    let mut w = global.command_words();
    let source = args.bulk.filename.as_deref().unwrap_or(Path::new("-"));
    w.extend([
        "register".to_owned(),
        "-f".to_owned(),
        source.display().to_string(),
    ]);
    let mut flag = |name: &str, value: Option<String>| {
        w.push(name.to_owned());
        w.extend(value);
    };
    if let Some(dir) = &args.bulk.output_dir {
        flag("--output-dir", Some(dir.display().to_string()));
    }
    if let Some(path) = &args.member_kubeconfig {
        flag("--member-kubeconfig", Some(path.display().to_string()));
    }
    if let Some(context) = &args.member_context {
        flag("--member-context", Some(context.clone()));
    }
    if args.token_ttl != super::register::DEFAULT_TOKEN_TTL {
        flag("--token-ttl", Some(format_duration(args.token_ttl)));
    }
    if args.no_auto_rotate {
        flag("--no-auto-rotate", None);
    }
    if args.bulk.rotate {
        flag("--rotate", None);
    }
    let edge = &args.edge;
    if let Some(server) = &edge.hub_server {
        flag("--hub-server", Some(server.clone()));
    }
    if edge.insecure_skip_tls_verify {
        flag("--insecure-skip-tls-verify", None);
    }
    if edge.emit == Emit::Secret {
        flag("--emit", Some("secret".into()));
    }
    if args.bulk.concurrency != 8 {
        flag("--concurrency", Some(args.bulk.concurrency.to_string()));
    }
    if yes || args.yes {
        flag("--yes", None);
    }
    w
}

/// The error a bulk command ends with when some of its `total` sites
/// failed (`Ok` when none did), naming them (the first few) and the
/// command that does the rest (`rerun`, as a shell runs it).
pub(super) fn bulk_failures(failed: &[String], total: usize, rerun: &str) -> Result<(), Error> {
    if failed.is_empty() {
        return Ok(());
    }
    let mut failed = failed.to_vec();
    failed.sort();
    let mut named = failed
        .iter()
        .take(MAX_NAMED_FAILURES)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if failed.len() > MAX_NAMED_FAILURES {
        named.push_str(&format!(" and {} more", failed.len() - MAX_NAMED_FAILURES));
    }
    let others = if failed.len() < total {
        " (the others are done)"
    } else {
        ""
    };
    Err(Error::Invalid {
        what: format!("{} of {total} sites failed: {named}", failed.len()),
        hint: format!(
            "each is listed above with its error; fix them and run `{rerun}` again{others}"
        ),
    })
}

fn change_word(change: Change) -> &'static str {
    match change {
        Change::Created => "created",
        Change::Configured => "configured",
        Change::Unchanged => "unchanged",
    }
}

/// What happened to one site.
struct Done {
    name: String,
    mode: Option<Mode>,
    result: Result<Outcome, Error>,
    /// Where its edge configuration went (Push).
    output: Option<PathBuf>,
    warnings: Vec<String>,
}

impl Done {
    /// The site's one line, as `kubectl apply` words it.
    fn line(&self) -> String {
        let name = &self.name;
        match &self.result {
            Ok(outcome) => {
                let word = change_word(outcome.change);
                let detail = match (self.mode, &self.output, outcome.minted) {
                    (Some(Mode::Push), Some(path), true) => {
                        format!(": credential written to {}", path.display())
                    }
                    (Some(Mode::Push), Some(path), false) => {
                        format!(": credential in {} still works", path.display())
                    }
                    (Some(Mode::Pull), _, true) => {
                        ": member credential minted and stored on the hub".to_owned()
                    }
                    _ => String::new(),
                };
                format!("federatedcluster/{name} {word}{detail}")
            }
            Err(err) => format!("federatedcluster/{name} failed: {}", failure_text(err)),
        }
    }
}

/// An error as one line without the `error: ` prefix. A step that failed
/// after a write says what exists; re-running `register -f` finishes it.
fn failure_text(err: &Error) -> String {
    let (err, state) = match err {
        Error::Partial { source, state, .. } => (source.as_ref(), Some(state)),
        other => (other, None),
    };
    let line = err.user_line();
    let line = line.strip_prefix("error: ").unwrap_or(&line).to_owned();
    match state {
        Some(state) => format!("{line} ({state})"),
        None => line,
    }
}

/// Registers one entry of the inventory, its messages kept for the report.
async fn enrol_one(
    global: &GlobalArgs,
    hub: &Cluster,
    args: &RegisterArgs,
    output_dir: Option<&Path>,
    entry: Entry,
) -> Done {
    let name = entry.name;
    let declared = match entry.site {
        Ok(declared) => declared,
        Err(why) => {
            return Done {
                name,
                mode: None,
                result: Err(Error::Invalid {
                    what: why,
                    hint: "fix the entry in the inventory".into(),
                }),
                output: None,
                warnings: Vec::new(),
            };
        }
    };
    let mode = declared.spec.mode;
    let output = match (mode, output_dir) {
        (Mode::Push, Some(dir)) => Some(dir.join(match args.edge.emit {
            Emit::Kubeconfig => format!("{name}.kubeconfig"),
            Emit::Secret => format!("{name}.secret.yaml"),
        })),
        _ => None,
    };
    let mut out = Vec::new();
    let mut err = Vec::new();
    let result = {
        let mut io = Io {
            out: &mut out,
            err: &mut err,
            stdout_tty: false,
            interactive: false,
            out_is_stdout: false,
        };
        enrol_declared(global, hub, args, output.as_deref(), declared, &mut io).await
    };
    let warnings = String::from_utf8_lossy(&err)
        .lines()
        .filter_map(|l| l.strip_prefix("warning: "))
        .map(str::to_owned)
        .collect();
    Done {
        name,
        mode: Some(mode),
        result,
        output,
        warnings,
    }
}

async fn enrol_declared(
    global: &GlobalArgs,
    hub: &Cluster,
    args: &RegisterArgs,
    output: Option<&Path>,
    declared: Declared,
    io: &mut Io<'_>,
) -> Result<Outcome, Error> {
    if let Some(path) = output {
        super::register::check_private_file(path)?;
    }
    let existing = read_site(hub, &declared.name).await?;
    let rerun = shell_line(&rerun_words(global, args, true));
    let args = site_args(args, &rerun, output, declared, existing.as_ref());
    register_site(global, hub, &args, existing, io).await
}

/// The `register SITE` run for one declared site: its spec and labels
/// from the inventory, the rest from the flags (and the annotations).
fn site_args(
    args: &RegisterArgs,
    rerun: &str,
    output: Option<&Path>,
    declared: Declared,
    existing: Option<&FederatedCluster>,
) -> RegisterArgs {
    let pull = declared.spec.mode == Mode::Pull;
    // A Pull site already probed by the hub keeps its member credential
    // unless asked (`--rotate`); one that is new, or was Push, gets one
    // minted on the member.
    let stays_pull = existing.is_some_and(|s| s.spec.mode == Mode::Pull);
    let member_kubeconfig = if pull && (!stays_pull || args.bulk.rotate) {
        args.member_kubeconfig.clone()
    } else {
        None
    };
    let member_context = member_kubeconfig.as_ref().and(
        declared
            .member_context
            .or_else(|| args.member_context.clone()),
    );
    let mut edge = args.edge.clone();
    edge.output = RegisterOutput::Config;
    edge.output_file = output.map(Path::to_owned);
    if pull {
        edge.hub_server = None;
        edge.insecure_skip_tls_verify = false;
        edge.emit = Emit::Kubeconfig;
    }
    RegisterArgs {
        site: Some(declared.name),
        display_name: None,
        region: None,
        environment: None,
        tier: None,
        capabilities: Vec::new(),
        heartbeat_interval: None,
        max_concurrent_remediations: None,
        schedule: Default::default(),
        connectivity: None,
        token_ttl: declared.token_ttl.unwrap_or(args.token_ttl),
        no_auto_rotate: args.no_auto_rotate && !pull,
        pull,
        push: !pull,
        member_kubeconfig,
        member_context,
        store_kubeconfig_as_is: false,
        yes: args.yes,
        edge,
        bulk: BulkArgs::default(),
        declared: Some(Box::new(declared.spec)),
        labels: declared.labels,
        keep_handed_out: !args.bulk.rotate,
        bulk_rerun: Some(rerun.to_owned()),
    }
}

/// Reads FILE, DIR or `-` into an inventory. A file that is not YAML or
/// JSON fails the whole command (nothing is written); an entry that is
/// not a valid site fails alone later.
pub(super) fn read_inventory(source: &Path) -> Result<Inventory, Error> {
    let mut inventory = Inventory::default();
    let mut budget = MAX_INVENTORY_BYTES;
    if source == Path::new("-") {
        let text = read_bounded(std::io::stdin().lock(), source, &mut budget)?;
        parse_into(&text, "stdin", &mut inventory)?;
    } else if source.is_dir() {
        let read = |e| Error::ReadFile {
            path: source.to_owned(),
            source: e,
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(source)
            .map_err(read)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .map_err(read)?;
        files.retain(|p| {
            p.is_file()
                && p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
        });
        files.sort();
        for file in files {
            let text = read_file(&file, &mut budget)?;
            parse_into(&text, &file.display().to_string(), &mut inventory)?;
        }
    } else {
        let text = read_file(source, &mut budget)?;
        parse_into(&text, &source.display().to_string(), &mut inventory)?;
    }
    // A site listed twice fails (every time): which one is meant?
    let mut seen = BTreeMap::<String, usize>::new();
    for entry in &inventory.entries {
        *seen.entry(entry.name.clone()).or_default() += 1;
    }
    for entry in &mut inventory.entries {
        if seen[&entry.name] > 1 && entry.site.is_ok() {
            entry.site = Err(format!(
                "site {} is listed {} times in the inventory",
                entry.name, seen[&entry.name]
            ));
        }
    }
    Ok(inventory)
}

fn read_file(path: &Path, budget: &mut u64) -> Result<String, Error> {
    let file = std::fs::File::open(path).map_err(|source| Error::ReadFile {
        path: path.to_owned(),
        source,
    })?;
    read_bounded(file, path, budget)
}

fn read_bounded(
    reader: impl std::io::Read,
    path: &Path,
    budget: &mut u64,
) -> Result<String, Error> {
    let mut text = String::new();
    let read = reader
        .take(*budget + 1)
        .read_to_string(&mut text)
        .map_err(|source| Error::ReadFile {
            path: path.to_owned(),
            source,
        })?;
    if read as u64 > *budget {
        return Err(Error::Invalid {
            what: format!(
                "the inventory is larger than {} MiB",
                MAX_INVENTORY_BYTES >> 20
            ),
            hint: "split it into several files and register them one by one".into(),
        });
    }
    *budget -= read as u64;
    Ok(text)
}

/// Parses one file's documents (YAML or JSON; a `List` is unpacked).
fn parse_into(text: &str, origin: &str, inventory: &mut Inventory) -> Result<(), Error> {
    let not_yaml = |e: String| {
        Error::Invalid {
        what: format!("{origin} is not YAML or JSON: {}", safe_text(&e, 200)),
        hint: "pass what `kubectl apply -f` accepts: YAML documents or JSON holding FederatedCluster objects".into(),
    }
    };
    let docs: Vec<serde_json::Value> = if text.trim_start().starts_with(['{', '[']) {
        vec![serde_json::from_str(text).map_err(|e| not_yaml(e.to_string()))?]
    } else {
        serde_saphyr::from_multiple(text).map_err(|e| not_yaml(e.to_string()))?
    };
    let mut index = 0;
    for doc in docs {
        let items = match doc {
            serde_json::Value::Null => continue,
            serde_json::Value::Object(ref o)
                if o.get("kind")
                    .and_then(|k| k.as_str())
                    .is_some_and(|k| k.ends_with("List"))
                    && o.get("items").is_some_and(|i| i.is_array()) =>
            {
                o["items"].as_array().cloned().unwrap_or_default()
            }
            other => vec![other],
        };
        for item in items {
            index += 1;
            let kind = item["kind"].as_str().unwrap_or_default();
            let api_version = item["apiVersion"].as_str().unwrap_or_default();
            let raw_name = item.pointer("/metadata/name").and_then(|n| n.as_str());
            if kind == CHATCLI_KIND {
                // ChatCLI's registration: never skipped in silence.
                let name =
                    raw_name.map_or_else(|| format!("#{index}"), |n| safe_text(n, 80).into_owned());
                inventory.entries.push(Entry {
                    site: Err(format!(
                        "{CHATCLI_KIND} {name} is ChatCLI's kind: write it as a FederatedCluster (apiVersion {API_VERSION}; field by field in {MIGRATING})"
                    )),
                    name,
                });
                continue;
            }
            if kind != "FederatedCluster" || api_version != API_VERSION {
                let what = match raw_name {
                    Some(n) => format!("{} {}", safe_text(kind, 64), safe_text(n, 64)),
                    None => format!("{} (object {index} of {origin})", safe_text(kind, 64)),
                };
                inventory.skipped.push(what);
                continue;
            }
            let (name, site) = match raw_name {
                None => (
                    format!("#{index}"),
                    Err(format!("object {index} of {origin} has no metadata.name")),
                ),
                Some(n) => (safe_text(n, 80).into_owned(), declared_site(&item)),
            };
            inventory.entries.push(Entry { name, site });
        }
    }
    Ok(())
}

/// ChatCLI's kind for a registered cluster.
const CHATCLI_KIND: &str = "ClusterRegistration";
/// Where a ChatCLI user finds each field's replacement.
const MIGRATING: &str = "docs/migrating.md#clusterregistration--federatedcluster";
/// At most this many problems of one entry are named.
const MAX_PROBLEMS: usize = 5;

/// Top-level fields of an object `kubectl apply` takes (`status` is
/// accepted and ignored by the API server, as here).
const OBJECT_FIELDS: [&str; 5] = ["apiVersion", "kind", "metadata", "spec", "status"];
/// The fields of ObjectMeta.
const META_FIELDS: [&str; 15] = [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// What strict decoding (`kubectl apply`'s `--validate=strict`, the API
/// server's field validation) refuses in an inventory entry: unknown
/// fields (with the field probably meant), missing required fields and
/// values outside an enum, each with its path; ChatCLI's field names get
/// their replacement.
fn strict_problems(item: &serde_json::Value) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(object) = item.as_object() else {
        return vec!["the entry is not an object".into()];
    };
    for key in object.keys() {
        if !OBJECT_FIELDS.contains(&key.as_str()) {
            problems.push(unknown_field("", key, &OBJECT_FIELDS));
        }
    }
    if let Some(meta) = item.get("metadata").and_then(|m| m.as_object()) {
        for key in meta.keys() {
            if !META_FIELDS.contains(&key.as_str()) {
                problems.push(unknown_field("metadata.", key, &META_FIELDS));
            }
        }
    }
    if let Some(spec) = item.get("spec") {
        let crds = crate::api::crd_manifests();
        let schema = &crds[0]["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        walk_schema(spec, &schema["properties"]["spec"], "spec", &mut problems);
        // ChatCLI's interval, converted: `healthCheckInterval: 1m` is
        // `heartbeatIntervalSeconds: 60`.
        if let Some(interval) = spec.get("healthCheckInterval").and_then(|i| i.as_str())
            && let Ok(d) = crate::fleet::duration::parse_duration(interval)
            && let Some(problem) = problems
                .iter_mut()
                .find(|p| p.starts_with("unknown field \"spec.healthCheckInterval\""))
        {
            problem.push_str(&format!(
                ": write `heartbeatIntervalSeconds: {}` instead",
                d.as_secs()
            ));
        }
        if spec
            .get("kubeconfigSecretRef")
            .is_some_and(|r| !r.is_null())
            && spec.get("mode").and_then(|m| m.as_str()) != Some("Pull")
        {
            problems.push(format!(
                "spec.kubeconfigSecretRef is set but spec.mode is not Pull (a site is Push unless it says `mode: Pull`; ChatCLI's hub-probed registration is a Pull site here): add `mode: Pull` and register with --member-kubeconfig, or drop kubeconfigSecretRef for a Push site ({MIGRATING})"
            ));
        }
    }
    problems
}

/// Checks `value` against an OpenAPI `schema` at `path`.
fn walk_schema(
    value: &serde_json::Value,
    schema: &serde_json::Value,
    path: &str,
    out: &mut Vec<String>,
) {
    use serde_json::Value;
    match value {
        Value::Object(object) => {
            let Some(properties) = schema.get("properties").and_then(|p| p.as_object()) else {
                return;
            };
            let known: Vec<&str> = properties.keys().map(String::as_str).collect();
            for (key, v) in object {
                match properties.get(key) {
                    Some(s) => walk_schema(v, s, &format!("{path}.{key}"), out),
                    None => out.push(unknown_field(&format!("{path}."), key, &known)),
                }
            }
            for required in schema
                .get("required")
                .and_then(|r| r.as_array())
                .into_iter()
                .flatten()
                .filter_map(|r| r.as_str())
            {
                if !object.contains_key(required) {
                    out.push(format!("missing required field \"{path}.{required}\""));
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    walk_schema(v, item_schema, &format!("{path}[{i}]"), out);
                }
            }
        }
        Value::String(s) => {
            if let Some(allowed) = schema.get("enum").and_then(|e| e.as_array()) {
                let allowed: Vec<&str> = allowed.iter().filter_map(|a| a.as_str()).collect();
                if !allowed.is_empty() && !allowed.contains(&s.as_str()) {
                    let meant = crate::fleet::suggest::closest(s, allowed.iter().copied())
                        .map(|m| format!(" (did you mean \"{m}\"?)"))
                        .unwrap_or_default();
                    out.push(format!(
                        "{path}: unsupported value \"{}\"{meant}: use one of {}",
                        safe_text(s, 64),
                        allowed.join(", ")
                    ));
                }
            }
        }
        _ => {}
    }
}

/// A declared `spec.connectivity` is checked as `kubectl fleet schedule`
/// checks its flags; windows that overlap are refused with the merged
/// form to write instead (a file says what is stored, so nothing is
/// rewritten behind it).
fn declared_schedule(name: &str, c: &crate::api::Connectivity) -> Result<(), String> {
    let (_, notes) = crate::fleet::connectivity::validate(c, super::schedule::zone_exists)
        .map_err(|e| format!("site {name}: spec.connectivity: {e}"))?;
    match notes.first() {
        Some(note) => Err(format!(
            "site {name}: spec.connectivity: {note}: write that window instead"
        )),
        None => Ok(()),
    }
}

/// ChatCLI's ClusterRegistration fields, and what replaces them.
const CHATCLI_FIELDS: [(&str, &str); 2] = [
    (
        "spec.healthCheckInterval",
        "ChatCLI's healthCheckInterval is spec.heartbeatIntervalSeconds here, an integer of seconds",
    ),
    (
        "spec.labels",
        "ChatCLI's spec.labels are ordinary metadata.labels here",
    ),
];

/// `unknown field "spec.teir" (did you mean "spec.tier"?)`, as kubectl
/// apply words it; a ChatCLI field names its replacement.
fn unknown_field(prefix: &str, key: &str, known: &[&str]) -> String {
    let path = format!("{prefix}{}", safe_text(key, 64));
    if let Some((_, replacement)) = CHATCLI_FIELDS.iter().find(|(f, _)| *f == path) {
        return format!("unknown field \"{path}\": {replacement} ({MIGRATING})");
    }
    match crate::fleet::suggest::closest(key, known.iter().copied()) {
        Some(meant) => format!("unknown field \"{path}\" (did you mean \"{prefix}{meant}\"?)"),
        None => format!("unknown field \"{path}\""),
    }
}

/// A FederatedCluster object of the inventory as a [`Declared`] site.
fn declared_site(item: &serde_json::Value) -> Result<Declared, String> {
    let raw = item["metadata"]["name"].as_str().unwrap_or_default();
    let name = parse_site_name(raw)?;
    let mut problems = strict_problems(item);
    if !problems.is_empty() {
        let more = problems.len().saturating_sub(MAX_PROBLEMS);
        problems.truncate(MAX_PROBLEMS);
        if more > 0 {
            problems.push(format!("and {more} more"));
        }
        return Err(format!(
            "site {name}: strict decoding error: {}",
            problems.join("; ")
        ));
    }
    let spec = item
        .get("spec")
        .cloned()
        .unwrap_or_else(|| serde_json::json!({}));
    let spec: FederatedClusterSpec = serde_json::from_value(spec)
        .map_err(|e| format!("site {name}: spec: {}", safe_text(&e.to_string(), 200)))?;
    if let Some(c) = &spec.connectivity {
        declared_schedule(&name, c)?;
    }
    let strings = |key: &str| -> Result<BTreeMap<String, String>, String> {
        match item["metadata"].get(key) {
            None | Some(serde_json::Value::Null) => Ok(BTreeMap::new()),
            Some(v) => serde_json::from_value(v.clone())
                .map_err(|_| format!("site {name}: metadata.{key} must map strings to strings")),
        }
    };
    let labels = strings("labels")?;
    let annotations = strings("annotations")?;
    let token_ttl = annotations
        .get(TOKEN_TTL_ANNOTATION)
        .map(|v| {
            parse_token_ttl(v).map_err(|e| format!("site {name}: {TOKEN_TTL_ANNOTATION}: {e}"))
        })
        .transpose()?;
    let member_context = annotations.get(MEMBER_CONTEXT_ANNOTATION).cloned();
    if member_context.is_some() && spec.mode != Mode::Pull {
        return Err(format!(
            "site {name}: {MEMBER_CONTEXT_ANNOTATION} names a member context, but the site is not in Pull mode (spec.mode: Pull)"
        ));
    }
    Ok(Declared {
        name,
        spec,
        labels,
        token_ttl,
        member_context,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Tier;
    use std::collections::BTreeSet;

    fn names(inventory: &Inventory) -> BTreeSet<String> {
        inventory.entries.iter().map(|e| e.name.clone()).collect()
    }

    fn parse(text: &str) -> Inventory {
        let mut inv = Inventory::default();
        parse_into(text, "inv.yaml", &mut inv).unwrap();
        inv
    }

    const SITE: &str =
        "apiVersion: federation.kubectl-fleet.dev/v1alpha1\nkind: FederatedCluster\n";

    #[test]
    fn multi_document_yaml_a_list_and_json_are_read_alike() {
        let yaml = format!(
            "{SITE}metadata:\n  name: a\nspec:\n  tier: critical\n---\n---\n{SITE}metadata:\n  name: b\n"
        );
        let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: federation.kubectl-fleet.dev/v1alpha1\n  kind: FederatedCluster\n  metadata: {name: a, labels: {store: '7'}}\n  spec: {tier: critical}\n- {apiVersion: federation.kubectl-fleet.dev/v1alpha1, kind: FederatedCluster, metadata: {name: b}}\n".to_owned();
        let json = r#"{"apiVersion":"v1","kind":"List","items":[
            {"apiVersion":"federation.kubectl-fleet.dev/v1alpha1","kind":"FederatedCluster","metadata":{"name":"a"},"spec":{"tier":"critical"}},
            {"apiVersion":"federation.kubectl-fleet.dev/v1alpha1","kind":"FederatedCluster","metadata":{"name":"b"}}]}"#;
        for text in [yaml.as_str(), list.as_str(), json] {
            let inv = parse(text);
            assert_eq!(names(&inv), ["a", "b"].map(str::to_owned).into(), "{text}");
            let a = inv.entries[0].site.as_ref().unwrap();
            assert_eq!(a.spec.tier, Tier::Critical);
            assert_eq!(
                inv.entries[1].site.as_ref().unwrap().spec,
                FederatedClusterSpec::default()
            );
        }
        assert_eq!(
            parse(&list).entries[0].site.as_ref().unwrap().labels["store"],
            "7"
        );
    }

    #[test]
    fn a_bad_entry_fails_alone_and_other_kinds_are_skipped() {
        let text = format!(
            "{SITE}metadata:\n  name: good\n---\n{SITE}metadata:\n  name: bad\nspec:\n  tier: golden\n---\n{SITE}metadata:\n  name: Not_A_Name\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: fleet-pull-x\n---\n{SITE}metadata:\n  name: ttl\n  annotations:\n    fleet.kubectl-fleet.dev/token-ttl: 1m\n"
        );
        let inv = parse(&text);
        assert_eq!(inv.skipped, ["Secret fleet-pull-x"]);
        let by_name: BTreeMap<_, _> = inv
            .entries
            .iter()
            .map(|e| (e.name.as_str(), &e.site))
            .collect();
        assert!(by_name["good"].is_ok());
        assert!(
            by_name["bad"].as_ref().unwrap_err().contains(
                "site bad: strict decoding error: spec.tier: unsupported value \"golden\""
            ),
            "{:?}",
            by_name["bad"]
        );
        assert!(by_name["Not_A_Name"].is_err());
        assert!(
            by_name["ttl"].as_ref().unwrap_err().contains("token-ttl"),
            "{:?}",
            by_name["ttl"]
        );
    }

    #[test]
    fn inventories_are_decoded_strictly_naming_each_field_and_the_one_meant() {
        let text = format!(
            "{SITE}metadata:\n  name: a\n  lables: {{x: y}}\nspec:\n  teir: critical\n  environment: prod\n---\n{SITE}metadata:\n  name: b\nspec:\n  mode: Pull\n  kubeconfigSecretRef: {{name: s}}\n---\n{SITE}metadata:\n  name: c\n  labels: {{x: one}}\n  annotations: {{note: two}}\n  resourceVersion: '1'\nspec:\n  tier: critical\nstatus:\n  phase: Connected\n"
        );
        let inv = parse(&text);
        let a = inv.entries[0].site.as_ref().unwrap_err();
        assert_eq!(
            a,
            "site a: strict decoding error: unknown field \"metadata.lables\" (did you mean \"metadata.labels\"?); spec.environment: unsupported value \"prod\" (did you mean \"production\"?): use one of development, staging, production, dr; unknown field \"spec.teir\" (did you mean \"spec.tier\"?)"
        );
        let b = inv.entries[1].site.as_ref().unwrap_err();
        assert!(
            b.contains("missing required field \"spec.kubeconfigSecretRef.namespace\""),
            "{b}"
        );
        // What kubectl apply accepts is accepted: labels, annotations,
        // server-set metadata and a status (ignored).
        assert!(inv.entries[2].site.is_ok(), "{:?}", inv.entries[2].site);
    }

    #[test]
    fn chatcli_registrations_are_named_with_their_replacement() {
        let text = "apiVersion: platform.chatcli.io/v1alpha1\nkind: ClusterRegistration\nmetadata:\n  name: eu-prod\n---\napiVersion: federation.kubectl-fleet.dev/v1alpha1\nkind: FederatedCluster\nmetadata:\n  name: eu\nspec:\n  kubeconfigSecretRef: {name: eu-kubeconfig, namespace: fleet-system}\n  healthCheckInterval: 1m\n  labels: {team: payments}\n";
        let inv = parse(text);
        assert!(inv.skipped.is_empty());
        let cr = inv.entries[0].site.as_ref().unwrap_err();
        assert!(
            cr.starts_with(
                "ClusterRegistration eu-prod is ChatCLI's kind: write it as a FederatedCluster"
            ),
            "{cr}"
        );
        assert!(
            cr.contains("docs/migrating.md#clusterregistration--federatedcluster"),
            "{cr}"
        );
        let eu = inv.entries[1].site.as_ref().unwrap_err();
        assert!(
            eu.contains("unknown field \"spec.healthCheckInterval\": ChatCLI's healthCheckInterval is spec.heartbeatIntervalSeconds here, an integer of seconds (docs/migrating.md#clusterregistration--federatedcluster): write `heartbeatIntervalSeconds: 60` instead"),
            "{eu}"
        );
        assert!(
            eu.contains("ChatCLI's spec.labels are ordinary metadata.labels"),
            "{eu}"
        );
        assert!(
            eu.contains("spec.kubeconfigSecretRef is set but spec.mode is not Pull"),
            "{eu}"
        );
    }

    #[test]
    fn annotations_carry_what_a_spec_does_not() {
        let text = format!(
            "{SITE}metadata:\n  name: p\n  annotations:\n    fleet.kubectl-fleet.dev/token-ttl: 12h\n    fleet.kubectl-fleet.dev/member-context: store-7\nspec:\n  mode: Pull\n---\n{SITE}metadata:\n  name: q\n  annotations:\n    fleet.kubectl-fleet.dev/member-context: x\n"
        );
        let inv = parse(&text);
        let p = inv.entries[0].site.as_ref().unwrap();
        assert_eq!(p.token_ttl, Some(Duration::from_secs(12 * 3600)));
        assert_eq!(p.member_context.as_deref(), Some("store-7"));
        assert!(
            inv.entries[1]
                .site
                .as_ref()
                .unwrap_err()
                .contains("not in Pull mode")
        );
    }

    #[test]
    fn a_site_listed_twice_fails_and_a_directory_reads_yaml_and_json_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.yaml"),
            format!("{SITE}metadata:\n  name: a\n"),
        )
        .unwrap();
        std::fs::write(dir.path().join("b.json"), r#"{"apiVersion":"federation.kubectl-fleet.dev/v1alpha1","kind":"FederatedCluster","metadata":{"name":"a"}}"#).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not: [yaml").unwrap();
        let inv = read_inventory(dir.path()).unwrap();
        assert_eq!(inv.entries.len(), 2);
        assert!(
            inv.entries
                .iter()
                .all(|e| e.site.as_ref().unwrap_err().contains("listed 2 times"))
        );
        std::fs::write(dir.path().join("c.yml"), "a: [b").unwrap();
        let err = read_inventory(dir.path()).unwrap_err();
        assert!(err.to_string().contains("is not YAML or JSON"), "{err}");
    }
}
