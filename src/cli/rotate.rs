//! `kubectl fleet rotate SITE [--revoke]`: mint a fresh token for a Push
//! site and print the edge configuration again. `--revoke` first recreates
//! the site's ServiceAccount, so every older token is rejected (401). A
//! ServiceAccount that was deleted is recreated (its bindings name it, so
//! they apply to the new one). A site registered before the identities
//! moved to `fleet-sites` is moved first (its old ServiceAccount's tokens
//! stop working, as with `--revoke`).
//!
//! `rotate -l SELECTOR --output-dir DIR` does the same for every Push site
//! the selector matches, at most `--concurrency` at once, each edge
//! configuration in `DIR/SITE.kubeconfig` (0600), one line per site and a
//! summary; it asks first (naming how many sites) on a terminal, and
//! needs `--yes` off one.

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::StreamExt as _;

use super::interrupt::{self, Left};
use super::register::{EdgeOutputArgs, Emit, Issued, RegisterOutput, hand_out};
use super::select::Selection;
use super::{Error, GlobalArgs, Io, format_duration, parse_site_name, parse_token_ttl, shell_line};
use crate::api::{FederatedCluster, Mode};
use crate::fleet::rbac;
use crate::fleet::rbac::SITES_NAMESPACE;
use crate::k8s::Cluster;
use crate::k8s::site_status::get_site;

/// Arguments of `kubectl fleet rotate`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("bulk").args(["selector", "region"]).multiple(true).conflicts_with_all(["site", "output_file", "output"]).requires("output_dir"))]
pub struct RotateArgs {
    /// The registered site
    #[arg(value_name = "SITE", value_parser = parse_site_name, required_unless_present_any = ["selector", "region"])]
    pub site: Option<String>,
    /// The sites to rotate instead of one by name.
    #[command(flatten)]
    pub selection: Selection,
    /// With -l/--region: write each site's edge configuration to DIR/SITE.kubeconfig (DIR/SITE.secret.yaml with --emit secret), mode 0600
    #[arg(long, value_name = "DIR", requires = "bulk")]
    pub output_dir: Option<PathBuf>,
    /// With -l: how many sites to rotate at once, 1..64
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CONCURRENCY, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,
    /// With -l: do not ask for confirmation (required when there is no terminal to ask on)
    #[arg(short, long)]
    pub yes: bool,
    /// Recreate the site's ServiceAccount first, so every older token stops working
    #[arg(long)]
    pub revoke: bool,
    /// Requested token lifetime, at least 10m, e.g. 30d, 12h (the API server may cap it)
    #[arg(long, value_name = "DURATION", default_value = "30d", value_parser = parse_token_ttl)]
    pub token_ttl: Duration,
    /// How to hand the configuration to the edge.
    #[command(flatten)]
    pub edge: EdgeOutputArgs,
}

/// Runs `kubectl fleet rotate`.
pub async fn run(global: &GlobalArgs, args: RotateArgs, io: &mut Io<'_>) -> Result<(), Error> {
    if args.selection.given() {
        return run_selected(global, &args, io).await;
    }
    let site = args.site.as_deref().unwrap_or_default();
    // Ctrl-C before the revocation leaves nothing to finish.
    interrupt::nothing_changed();
    // Nothing is minted (or revoked) when the configuration could not be written.
    if let Some(path) = &args.edge.output_file {
        super::register::check_private_file(path)?;
    }
    let hub = global.hub().await?;
    let Some(existing) = hub
        .found(
            format!("get FederatedCluster {site}"),
            get_site(&hub.sites(), site),
        )
        .await?
    else {
        return Err(Error::Invalid {
            what: format!("site {site} is not registered on {}", hub.server()),
            hint: format!("register it with `kubectl fleet register {site}`"),
        });
    };
    rotate_site(&hub, &args, &existing, &args.edge, io).await
}

/// Rotates one site that exists, handing out to `edge`.
async fn rotate_site(
    hub: &Cluster,
    args: &RotateArgs,
    existing: &FederatedCluster,
    edge: &EdgeOutputArgs,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let site = existing.metadata.name.as_deref().unwrap_or_default();
    if existing.spec.mode == Mode::Pull {
        return Err(Error::Invalid {
            what: format!("site {site} is in Pull mode and has no edge token"),
            hint: format!(
                "refresh the member credential with `kubectl fleet register {site} --pull --member-kubeconfig FILE`"
            ),
        });
    }
    let mut objects = Vec::new();
    let mut removed = Vec::new();
    let uid = existing.metadata.uid.as_deref().unwrap_or_default();
    let mut present = hub.site_service_account(site).await?.is_some();
    if !present && let Some((applied, gone)) = hub.migrate_legacy_site_identity(site, uid).await? {
        writeln!(
            io.err,
            "site {site}'s identity moved from {} to {SITES_NAMESPACE}: tokens of the old ServiceAccount are now rejected",
            crate::k8s::NAMESPACE
        )?;
        objects.extend(applied);
        removed.extend(gone);
        present = true;
    }
    // `--revoke` recreates the ServiceAccount; so does a rotation that
    // finds it deleted (its tokens can then never work again).
    let why = if args.revoke {
        Some(format!(
            "recreated: every older token of {site} is now rejected"
        ))
    } else if !present {
        Some("was missing: recreated (tokens of the deleted one stay rejected)".to_owned())
    } else {
        None
    };
    // From the revocation to the new credential written, Ctrl-C waits:
    // stopped in between, the edge would hold a revoked token and no new
    // one. (A token is bound to its ServiceAccount's uid, so the new one
    // can only be minted after the recreation.)
    let _hold = why.as_ref().map(|_| interrupt::hold());
    let revoked = why.is_some();
    if let Some(why) = why {
        objects.push(hub.recreate_service_account(site, uid).await?);
        if args.site.is_some() {
            interrupt::set_left(Left {
                state: format!(
                    "every older token of site {site} is revoked and the new credential is not handed out yet"
                ),
                finish: shell_line(&single_words(args, site, edge)),
                undo: None,
            });
        }
        writeln!(
            io.err,
            "ServiceAccount {SITES_NAMESPACE}/{} {why}",
            rbac::edge_identity_name(site)
        )?;
    }
    let revoked_then = |err: Error| -> Error {
        if !revoked {
            return err;
        }
        Error::Partial {
            source: Box::new(err),
            state: format!(
                "every older token of site {site} is revoked and no new credential was handed out"
            ),
            finish: shell_line(&single_words(args, site, edge)),
            undo: None,
        }
    };
    let token = hub
        .request_site_token(site, args.token_ttl)
        .await
        .map_err(|e| revoked_then(e.into()))?;
    let issued = Issued {
        objects,
        removed,
        token: &token,
        auto_rotate: None,
    };
    hand_out(hub, site, issued, edge, io).map_err(revoked_then)
}

/// `kubectl fleet rotate SITE` with the flags that hand the credential out
/// as `edge` says (a re-run mints a working one).
fn single_words(args: &RotateArgs, site: &str, edge: &EdgeOutputArgs) -> Vec<String> {
    let mut w = vec![
        "kubectl".to_owned(),
        "fleet".to_owned(),
        "rotate".to_owned(),
        site.to_owned(),
    ];
    if args.token_ttl != super::register::DEFAULT_TOKEN_TTL {
        w.extend(["--token-ttl".to_owned(), format_duration(args.token_ttl)]);
    }
    w.extend(edge_words(edge));
    if let Some(path) = &edge.output_file {
        w.extend(["--output-file".to_owned(), path.display().to_string()]);
    }
    w
}

/// The flags of `edge` that shape the configuration handed out.
fn edge_words(edge: &EdgeOutputArgs) -> Vec<String> {
    let mut w = Vec::new();
    if let Some(server) = &edge.hub_server {
        w.extend(["--hub-server".to_owned(), server.clone()]);
    }
    if edge.insecure_skip_tls_verify {
        w.push("--insecure-skip-tls-verify".to_owned());
    }
    if edge.emit == Emit::Secret {
        w.extend(["--emit".to_owned(), "secret".to_owned()]);
    }
    w
}

/// `rotate -l SELECTOR`: every matching Push site, after confirmation.
async fn run_selected(
    global: &GlobalArgs,
    args: &RotateArgs,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let dir = args
        .output_dir
        .clone()
        .expect("clap requires --output-dir with -l");
    super::register::check_private_dir(&dir, io)?;
    let hub = global.hub().await?;
    let selection = &args.selection;
    let sites = selection.sites(&hub, "rotate").await?;
    let (push, pull): (Vec<_>, Vec<_>) = sites.into_iter().partition(|s| s.spec.mode == Mode::Push);
    for site in &pull {
        writeln!(
            io.err,
            "skipped site {}: Pull mode has no edge token",
            site.metadata.name.as_deref().unwrap_or_default()
        )?;
    }
    if push.is_empty() {
        return Err(Error::Invalid {
            what: format!(
                "the {} sites matching {} are all in Pull mode: nothing to rotate",
                pull.len(),
                selection.describe()
            ),
            hint: "a Pull site's member credential is renewed by the hub; `kubectl fleet register SITE --pull --member-kubeconfig FILE` replaces it".into(),
        });
    }
    let what = if args.revoke {
        "Rotate and revoke the tokens of"
    } else {
        "Mint new tokens for"
    };
    let consequence = if args.revoke {
        "every older token of each stops working now"
    } else {
        "older tokens keep working until they expire"
    };
    let selected = selection.describe();
    super::confirm(
        args.yes,
        &format!(
            "{what} {} sites matching {selected}? {consequence}",
            push.len()
        ),
        &format!(
            "refusing to rotate {} sites without confirmation",
            push.len()
        ),
        io,
    )?;
    // Sites in flight finish after Ctrl-C; no further one starts.
    let _hold = interrupt::hold();
    let total = push.len();
    let mut failed = Vec::new();
    let mut not_started = Vec::new();
    let mut done = 0;
    let mut results = futures::stream::iter(push)
        .map(|site| {
            let hub = &hub;
            let dir = &dir;
            async move {
                let name = site.metadata.name.clone().unwrap_or_default();
                let path = dir.join(match args.edge.emit {
                    Emit::Kubeconfig => format!("{name}.kubeconfig"),
                    Emit::Secret => format!("{name}.secret.yaml"),
                });
                if interrupt::requested() {
                    return (name, path, None, Vec::new());
                }
                let (result, warnings) = rotate_to(hub, args, &site, &path).await;
                (name, path, Some(result), warnings)
            }
        })
        // One line per site in name order, as listed.
        .buffered(usize::from(args.concurrency));
    while let Some((name, path, result, warnings)) = results.next().await {
        for warning in warnings {
            writeln!(io.err, "warning: site {name}: {warning}")?;
        }
        match result {
            None => not_started.push(name),
            Some(Ok(())) => {
                done += 1;
                writeln!(
                    io.out,
                    "federatedcluster/{name} rotated: credential written to {}",
                    path.display()
                )?;
            }
            Some(Err(e)) => {
                let line = e.user_line();
                let line = line.strip_prefix("error: ").unwrap_or(&line);
                writeln!(io.out, "federatedcluster/{name} failed: {line}")?;
                failed.push(name);
            }
        }
    }
    writeln!(
        io.out,
        "{total} sites: {done} rotated, {} failed{}",
        failed.len(),
        match not_started.len() {
            0 => String::new(),
            n => format!(", {n} not started (interrupted)"),
        }
    )?;
    let mut rest = failed.clone();
    rest.extend(not_started.iter().cloned());
    let rerun = shell_line(&bulk_words(global, args, &rest));
    if !not_started.is_empty() {
        let revoked = if args.revoke {
            ": their old tokens still work"
        } else {
            ""
        };
        return Err(Error::Interrupted {
            left: interrupt::Said::Left(Left {
                state: format!(
                    "{done} of {total} sites rotated into {}; {} not rotated{revoked}",
                    dir.display(),
                    rest.len()
                ),
                finish: rerun,
                undo: None,
            }),
            cut: false,
        });
    }
    super::enrol::bulk_failures(&failed, total, &rerun)
}

/// The `rotate` command line that does again for `sites` what this run
/// set out to do (the selection narrowed to those sites, `--yes` added).
fn bulk_words(global: &GlobalArgs, args: &RotateArgs, sites: &[String]) -> Vec<String> {
    let mut w = global.command_words();
    w.push("rotate".to_owned());
    let mut names = sites.to_vec();
    names.sort();
    let only = format!(
        "{} in ({})",
        crate::fleet::rbac::SITE_LABEL,
        names.join(",")
    );
    let selector = match &args.selection.selector {
        Some(s) => format!("{s},{only}"),
        None => only,
    };
    w.extend(["-l".to_owned(), selector]);
    if let Some(region) = &args.selection.region {
        w.extend(["--region".to_owned(), region.clone()]);
    }
    if let Some(dir) = &args.output_dir {
        w.extend(["--output-dir".to_owned(), dir.display().to_string()]);
    }
    if args.revoke {
        w.push("--revoke".to_owned());
    }
    if args.token_ttl != super::register::DEFAULT_TOKEN_TTL {
        w.extend(["--token-ttl".to_owned(), format_duration(args.token_ttl)]);
    }
    if args.concurrency != DEFAULT_CONCURRENCY {
        w.extend(["--concurrency".to_owned(), args.concurrency.to_string()]);
    }
    w.extend(edge_words(&args.edge));
    w.push("--yes".to_owned());
    w
}

/// `--concurrency`'s default.
const DEFAULT_CONCURRENCY: u16 = 8;

/// Rotates one selected site into `path`; returns its warnings (its other
/// messages are dropped: the caller prints one line).
async fn rotate_to(
    hub: &Cluster,
    args: &RotateArgs,
    site: &FederatedCluster,
    path: &Path,
) -> (Result<(), Error>, Vec<String>) {
    if let Err(e) = super::register::check_private_file(path) {
        return (Err(e), Vec::new());
    }
    let mut edge = args.edge.clone();
    edge.output_file = Some(path.to_owned());
    edge.output = RegisterOutput::Config;
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut io = Io {
        out: &mut out,
        err: &mut err,
        stdout_tty: false,
        interactive: false,
        out_is_stdout: false,
    };
    let result = rotate_site(hub, args, site, &edge, &mut io).await;
    let warnings = String::from_utf8_lossy(&err)
        .lines()
        .filter_map(|l| l.strip_prefix("warning: "))
        .map(str::to_owned)
        .collect();
    (result, warnings)
}
