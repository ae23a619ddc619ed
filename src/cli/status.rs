//! `kubectl fleet status [SITE…]`: per-site table and fleet-wide footer
//! (docs/architecture.md#the-life-of-a-site), `-o wide|json|yaml`, filters, and `--watch` that redraws
//! on the changes reported by the watch API, at most once a second.

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
    /// Keep running and redraw when sites change (at most once a second)
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
            let mut frame = Frame::begin(args.output, jiff::Timestamp::now())?;
            for site in sites {
                frame.push(std::borrow::Cow::Owned(site))?;
            }
            frame.finish(color, &mut io.out)?;
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
    watch(&hub, selector, &filter, args.output, color, io).await
}

/// At most this many frames per second are drawn by `--watch`: a large
/// fleet heartbeats many times a second, and each frame renders every site.
const FRAME_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// `--watch`: one copy of the fleet, updated by each change the watch API
/// reports. A frame is drawn once every change that is ready has been
/// taken in, at most once per [`FRAME_EVERY`] (a change that comes sooner
/// is drawn at the next frame), and only when it differs from the last.
/// A table on a terminal is also redrawn every [`FRAME_EVERY`] without a
/// change, like `watch`, so its ages move on (still only when the text
/// changed); a stream of tables or reports gets a frame per change.
async fn watch(
    hub: &crate::k8s::Cluster,
    selector: Option<&str>,
    filter: &SiteFilter,
    output: StatusOutput,
    color: bool,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    use crate::k8s::SiteChange;
    use futures::FutureExt as _;
    use std::collections::BTreeMap;

    let mut changes = Box::pin(hub.watch_sites(selector));
    let mut fleet: BTreeMap<String, FederatedCluster> = BTreeMap::new();
    let mut listed = false;
    let mut pending = false;
    let mut next_frame = tokio::time::Instant::now();
    let mut last: Option<Vec<u8>> = None;
    let screen = io.stdout_tty && matches!(output, StatusOutput::Table | StatusOutput::Wide);
    loop {
        // None: the pending frame is due; Some(None): the watch ended.
        let next = if pending {
            tokio::select! {
                change = changes.next() => Some(change),
                () = tokio::time::sleep_until(next_frame) => None,
            }
        } else {
            Some(changes.next().await)
        };
        let mut change = match next {
            Some(None) => return Ok(()),
            Some(Some(change)) => Some(change),
            None => None,
        };
        // Take in whatever else is ready before drawing.
        while let Some(c) = change.take() {
            match c? {
                SiteChange::Listed(sites) => {
                    fleet = sites
                        .into_iter()
                        .map(|s| (s.site_name().to_owned(), s))
                        .collect();
                    listed = true;
                }
                SiteChange::Applied(site) => {
                    fleet.insert(site.site_name().to_owned(), *site);
                }
                SiteChange::Deleted(name) => {
                    fleet.remove(&name);
                }
            }
            pending = listed;
            change = changes.next().now_or_never().flatten();
        }
        if !pending || tokio::time::Instant::now() < next_frame {
            continue;
        }
        // On a screen the next frame is always due (ages move on).
        pending = screen;
        next_frame = tokio::time::Instant::now() + FRAME_EVERY;
        let mut frame = Frame::begin(output, jiff::Timestamp::now())?;
        for site in fleet.values().filter(|s| filter.matches(s)) {
            frame.push(std::borrow::Cow::Borrowed(site))?;
        }
        let mut text = Vec::new();
        frame.finish(color, &mut text)?;
        // Ages move on their own; redraw only when the rendered view changed.
        if last.as_deref() == Some(text.as_slice()) {
            continue;
        }
        if screen {
            // Clear the screen and home the cursor, like `watch`.
            write!(io.out, "\x1b[2J\x1b[H")?;
        } else if last.is_some() && output == StatusOutput::Yaml {
            writeln!(io.out, "---")?;
        }
        io.out.write_all(&text)?;
        io.out.flush()?;
        last = Some(text);
    }
}

/// One rendering of the status, folded site by site: the table keeps its
/// compact rows and totals, the JSON/YAML report is written as it goes
/// (see [`Frame::drain`]) and keeps only its totals.
enum Frame {
    Table(render::status::StatusTable),
    Report(render::report::ReportStream, Vec<u8>),
}

impl Frame {
    fn begin(output: StatusOutput, now: jiff::Timestamp) -> Result<Self, Error> {
        use render::report::{ReportFormat, ReportStream};
        let format = match output {
            StatusOutput::Table | StatusOutput::Wide => {
                return Ok(Frame::Table(render::status::StatusTable::new(
                    now,
                    output == StatusOutput::Wide,
                )));
            }
            StatusOutput::Json => ReportFormat::Json,
            StatusOutput::Yaml => ReportFormat::Yaml,
        };
        let mut buf = Vec::with_capacity(1 << 16);
        let report = ReportStream::begin(format, now, &mut buf)?;
        Ok(Frame::Report(report, buf))
    }

    /// Adds one site; a report needs them in name order.
    fn push(&mut self, site: std::borrow::Cow<'_, FederatedCluster>) -> Result<(), Error> {
        match self {
            Frame::Table(table) => table.push(&site),
            Frame::Report(report, buf) => report.site(site.into_owned(), buf)?,
        }
        Ok(())
    }

    /// Writes out what is rendered so far (only a report has any).
    fn drain(&mut self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        if let Frame::Report(_, buf) = self {
            out.write_all(buf)?;
            buf.clear();
        }
        Ok(())
    }

    /// Writes out the rest: the whole table, or the end of the report.
    fn finish(self, color: bool, out: &mut impl std::io::Write) -> Result<(), Error> {
        match self {
            Frame::Table(table) => {
                for line in table.lines(color) {
                    out.write_all(line.as_bytes())?;
                }
            }
            Frame::Report(report, mut buf) => {
                report.finish(&mut buf)?;
                out.write_all(&buf)?;
            }
        }
        Ok(())
    }
}

/// One snapshot of the fleet, listed a page at a time and folded into the
/// output as it arrives: memory stays at one page plus the compact table
/// rows (`-o json|yaml` is written out page by page, keeping only totals),
/// however many sites there are. Same bytes as the whole-list renderers
/// ([`render::status_view`], [`render::status_report`]) of the same sites.
async fn render_paged(
    hub: &crate::k8s::Cluster,
    selector: Option<&str>,
    filter: &SiteFilter,
    output: StatusOutput,
    color: bool,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, &mut *io.out);
    let mut frame = Frame::begin(output, jiff::Timestamp::now())?;
    hub.for_each_site_page(selector, |page| {
        for site in page.into_iter().filter(|s| filter.matches(s)) {
            frame.push(std::borrow::Cow::Owned(site))?;
        }
        frame.drain(&mut out)?;
        Ok::<_, Error>(())
    })
    .await?;
    frame.finish(color, &mut out)?;
    out.flush()?;
    Ok(())
}
