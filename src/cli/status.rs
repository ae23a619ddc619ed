//! `kubectl fleet status [SITE…]`: per-site table and fleet-wide footer
//! (docs/architecture.md#the-life-of-a-site), `-o wide|json|yaml`, filters, and `--watch` that redraws on
//! every change reported by the watch API.

use std::io::Write as _;

use futures::StreamExt as _;

use super::{ColorChoice, Error, GlobalArgs, Io, wire_enum};
use crate::api::{Environment, FederatedCluster, Phase, Tier};
pub use crate::fleet::filter::SiteFilter;
use crate::render;

/// Output formats of `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StatusOutput {
    /// One row per site and a fleet footer
    Table,
    /// The table plus region, versions, token expiry, GPUs by vendor and why a site is not Connected
    Wide,
    /// The documented JSON report (sites and summary)
    Json,
    /// The same report as YAML
    Yaml,
}

/// Arguments of `kubectl fleet status`.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Only these sites (default: all)
    #[arg(value_name = "SITE")]
    pub sites: Vec<String>,
    /// Output format
    #[arg(short, long, value_enum, default_value_t = StatusOutput::Table)]
    pub output: StatusOutput,
    /// Label selector, as kubectl (e.g. -l team=ml,region!=eu)
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Only sites of this tier
    #[arg(long, value_name = "TIER", value_parser = wire_enum(Tier::ALL, Tier::as_str))]
    pub tier: Option<Tier>,
    /// Only sites of this environment
    #[arg(long, value_name = "ENV", value_parser = wire_enum(Environment::ALL, Environment::as_str))]
    pub environment: Option<Environment>,
    /// Only sites in this region
    #[arg(long, value_name = "REGION")]
    pub region: Option<String>,
    /// Only sites in this phase (any case: connected, Connected)
    #[arg(long, value_name = "PHASE", ignore_case = true, value_parser = wire_enum(Phase::ALL, Phase::as_str))]
    pub phase: Option<Phase>,
    /// Keep running and redraw whenever a site changes
    #[arg(short, long)]
    pub watch: bool,
    /// Colour the phase column
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// Runs `kubectl fleet status`.
pub async fn run(global: &GlobalArgs, args: StatusArgs, io: &mut Io<'_>) -> Result<(), Error> {
    let hub = global.hub().await?;
    let filter = SiteFilter {
        names: args.sites.clone(),
        tier: args.tier,
        environment: args.environment,
        region: args.region.clone(),
        phase: args.phase,
    };
    let color = args.color.enabled(io.stdout_tty);
    let selector = args.selector.as_deref();
    if !args.watch {
        if args.sites.is_empty() {
            return render_paged(&hub, selector, &filter, args.output, color, io).await;
        }
        let listed = hub.list_sites(selector).await?;
        // Like `kubectl get fc NAME`: what exists is shown, a name that
        // does not is an error.
        let missing: Vec<&String> = args
            .sites
            .iter()
            .filter(|n| !listed.iter().any(|s| s.site_name() == n.as_str()))
            .collect();
        let sites = filter.apply(listed);
        if missing.is_empty() || !sites.is_empty() {
            let text = render_sites(&sites, args.output, color)?;
            io.out.write_all(text.as_bytes())?;
        }
        if !missing.is_empty() {
            let names: Vec<String> = missing.iter().map(|n| format!("{n:?}")).collect();
            return Err(Error::Invalid {
                what: format!("site {} not found", names.join(", ")),
                hint: "`kubectl fleet status` lists the registered sites".to_owned(),
            });
        }
        return Ok(());
    }
    let mut updates = Box::pin(hub.watch_sites(selector));
    let mut last: Option<String> = None;
    while let Some(update) = updates.next().await {
        let sites = filter.apply(update?);
        let text = render_sites(&sites, args.output, color)?;
        // Ages move on their own; redraw only when the rendered view changed.
        if last.as_deref() == Some(text.as_str()) {
            continue;
        }
        if io.stdout_tty && matches!(args.output, StatusOutput::Table | StatusOutput::Wide) {
            // Clear the screen and home the cursor, like `watch`.
            write!(io.out, "\x1b[2J\x1b[H")?;
        } else if last.is_some() && args.output == StatusOutput::Yaml {
            writeln!(io.out, "---")?;
        }
        io.out.write_all(text.as_bytes())?;
        io.out.flush()?;
        last = Some(text);
    }
    Ok(())
}

/// One snapshot of the fleet, listed a page at a time and folded into the
/// output as it arrives: memory stays at one page plus the compact table
/// rows (`-o json|yaml` is written out page by page, keeping only totals),
/// however many sites there are. Same bytes as [`render_sites`].
async fn render_paged(
    hub: &crate::k8s::Cluster,
    selector: Option<&str>,
    filter: &SiteFilter,
    output: StatusOutput,
    color: bool,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let now = jiff::Timestamp::now();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, &mut *io.out);
    match output {
        StatusOutput::Table | StatusOutput::Wide => {
            let mut table = render::status::StatusTable::new(now, output == StatusOutput::Wide);
            hub.for_each_site_page(selector, |page| {
                page.iter()
                    .filter(|s| filter.matches(s))
                    .for_each(|s| table.push(s));
                Ok::<_, Error>(())
            })
            .await?;
            for line in table.lines(color) {
                out.write_all(line.as_bytes())?;
            }
        }
        StatusOutput::Json | StatusOutput::Yaml => {
            let format = if output == StatusOutput::Json {
                render::report::ReportFormat::Json
            } else {
                render::report::ReportFormat::Yaml
            };
            let mut buf = Vec::with_capacity(1 << 16);
            let mut report = render::report::ReportStream::begin(format, now, &mut buf)?;
            hub.for_each_site_page(selector, |page| {
                for site in page.into_iter().filter(|s| filter.matches(s)) {
                    report.site(site, &mut buf)?;
                }
                out.write_all(&buf)?;
                buf.clear();
                Ok::<_, Error>(())
            })
            .await?;
            report.finish(&mut buf)?;
            out.write_all(&buf)?;
        }
    }
    out.flush()?;
    Ok(())
}

fn render_sites(
    sites: &[FederatedCluster],
    output: StatusOutput,
    color: bool,
) -> Result<String, Error> {
    let now = jiff::Timestamp::now();
    Ok(match output {
        StatusOutput::Table => {
            render::render_status_table(&render::status_view(sites, now), false, color)
        }
        StatusOutput::Wide => {
            render::render_status_table(&render::status_view(sites, now), true, color)
        }
        StatusOutput::Json => render::to_json(&render::status_report(sites, now))?,
        StatusOutput::Yaml => render::to_yaml(&render::status_report(sites, now))?,
    })
}
