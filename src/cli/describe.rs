//! `kubectl fleet describe SITE`: one site in full — why it is or is not
//! Connected, from the hub's conditions, and whether a hub is judging at
//! all (the liveness record, read alongside the site), its signals with
//! the hub's decision on each (the fleet's incidents, read alongside) —
//! ending with the
//! Events recorded about the site, as `kubectl describe` does — as text or
//! `-o json|yaml`.

use super::{Error, GlobalArgs, Io, parse_site_name};
use crate::k8s::site_status::get_site;
use crate::render;
use crate::render::describe::{render_description, site_description};

/// Output formats of `describe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DescribeOutput {
    /// kubectl-describe style text
    Text,
    /// The SiteDescription document as JSON
    Json,
    /// The SiteDescription document as YAML
    Yaml,
}

/// Arguments of `kubectl fleet describe`.
#[derive(Debug, clap::Args)]
pub struct DescribeArgs {
    /// The registered site
    #[arg(value_name = "SITE", value_parser = parse_site_name)]
    pub site: String,
    /// Output format
    #[arg(short, long, value_enum, default_value_t = DescribeOutput::Text)]
    pub output: DescribeOutput,
}

/// Runs `kubectl fleet describe`.
pub async fn run(global: &GlobalArgs, args: DescribeArgs, io: &mut Io<'_>) -> Result<(), Error> {
    let site = &args.site;
    let hub = global.hub().await?;
    // The site's Events are listed alongside (one list with a field
    // selector); like `kubectl describe`, a failed list only leaves the
    // Events section out (`events: null` in JSON/YAML).
    let sites = hub.sites();
    let (found, renewal, record, events, incidents) = tokio::join!(
        hub.found(
            format!("get FederatedCluster {site}"),
            get_site(&sites, site)
        ),
        hub.site_renewal(site),
        super::status::read_hub_record(&hub),
        hub.site_events(site),
        super::status::read_incidents(&hub)
    );
    let Some(mut found) = found? else {
        return Err(Error::Invalid {
            what: format!("site {site} is not registered on {}", hub.server()),
            hint: "list the registered sites with `kubectl fleet status`".into(),
        });
    };
    // Its heartbeat: the later of its status's and its lease's.
    if let Some(renewal) = renewal? {
        found.with_lease(renewal);
    }
    // The API server's time, as the answer with the liveness record dated it.
    let now = record.now();
    let events = events
        .inspect_err(|e| tracing::debug!(error = %e, "listing the site's Events failed"))
        .ok();
    let incidents = super::status::incidents_or_warn(incidents, io.err)?;
    let description = site_description(
        &found,
        &super::status::verdict_of(&record, now),
        &incidents,
        events.as_deref(),
        now,
    );
    if args.output == DescribeOutput::Text {
        super::status::warn_about_hub(io.err, &record, 1, now)?;
    }
    let text = match args.output {
        DescribeOutput::Text => render_description(&description, now),
        DescribeOutput::Json => render::to_json(&description)?,
        DescribeOutput::Yaml => render::to_yaml(&description)?,
    };
    io.out.write_all(text.as_bytes())?;
    Ok(())
}
