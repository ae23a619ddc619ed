//! `kubectl fleet incidents [ID]`: active cross-cluster correlations,
//! cascades and grouped outages from the hub's FederationStatus, and every
//! site's signals with the remediation policy that applies to it; with an
//! ID, that one incident with its sites (the ones `kubectl fleet status
//! --incident ID` lists: both come from `fleet::incident`) and its member
//! signals and what its sites have in common (`fleet::factors`). Warns,
//! as `status` does, when no hub is judging (the incidents
//! are then as the hub last wrote them).
//!
//! The singleton names at most a few dozen sites per incident and a hundred
//! cascades; when it cut a list, the views name all of them from the
//! sites themselves (`fleet::incident::complete`), listing the whole
//! fleet once more when only a selection was listed.

use super::{ColorChoice, Error, GlobalArgs, Io};
use crate::render;

/// Output formats of `incidents`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IncidentsOutput {
    /// Correlations, cascades and signals as tables
    Table,
    /// The IncidentsReport document as JSON
    Json,
    /// The IncidentsReport document as YAML
    Yaml,
}

/// Arguments of `kubectl fleet incidents`.
#[derive(Debug, clap::Args)]
pub struct IncidentsArgs {
    /// Show only this incident (xc-, cc- or go- id), with its sites and member signals
    #[arg(value_name = "ID", value_parser = crate::fleet::incident::parse_incident_id, conflicts_with = "selector")]
    pub id: Option<String>,
    /// Output format
    #[arg(short, long, value_enum, default_value_t = IncidentsOutput::Table)]
    pub output: IncidentsOutput,
    /// Label selector limiting the sites whose signals are shown
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Colour severities
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// Runs `kubectl fleet incidents`.
pub async fn run(global: &GlobalArgs, args: IncidentsArgs, io: &mut Io<'_>) -> Result<(), Error> {
    let hub = global.hub().await?;
    let sites = hub.list_sites(args.selector.as_deref()).await?;
    let whole_fleet = args.selector.is_none().then_some(sites.as_slice());
    let (fleet, clock) = super::status::whole_incidents(&hub, whole_fleet, io.err).await?;
    // The record is part of the singleton just read, dated by its answer.
    let record =
        super::status::HubRecord::read_with(fleet.as_ref().and_then(|f| f.hub.clone()), clock);
    if fleet.is_none() {
        writeln!(
            io.err,
            "note: no FederationStatus on {} yet, so no correlations or cascades: they come from the hub operator (`kubectl fleet install | kubectl apply -f -`)",
            hub.server()
        )?;
    }
    // The API server's time, as the answer with the liveness record dated it.
    let now = record.now();
    let verdict = super::status::verdict_of(&record, now);
    if let Some(id) = &args.id {
        let incident = fleet
            .as_ref()
            .and_then(|f| crate::fleet::incident::find_incident(f, id))
            .ok_or_else(|| super::status::unknown_incident(id, hub.server()))?;
        let incidents = crate::fleet::policy::Incidents::of(fleet.as_ref());
        let mut report =
            render::incidents::incident_report(&incident, &sites, &incidents, &verdict, now);
        if let Some(f) = fleet.as_ref().filter(|_| report.common_factors.is_empty()) {
            // Past the singleton's budget for them (or none): named from
            // the sites, the whole fleet here, as the hub does.
            report.common_factors = crate::fleet::factors::of_incident(&incident, f, &sites);
        }
        let text = match args.output {
            IncidentsOutput::Table => {
                render::incidents::render_incident(&report, now, args.color.enabled(io.stdout_tty))
            }
            IncidentsOutput::Json => render::to_json(&report)?,
            IncidentsOutput::Yaml => render::to_yaml(&report)?,
        };
        io.out.write_all(text.as_bytes())?;
        if args.output == IncidentsOutput::Table {
            super::status::warn_about_hub(io.err, &record, sites.len(), now)?;
        }
        return Ok(());
    }
    let (correlations, cascades, outages) = fleet
        .map(|f| (f.correlations, f.cascades, f.outages))
        .unwrap_or_default();
    let report = render::incidents_report(&sites, correlations, cascades, outages, &verdict, now);
    let text = match args.output {
        IncidentsOutput::Table => {
            render::render_incidents(&report, now, args.color.enabled(io.stdout_tty))
        }
        IncidentsOutput::Json => render::to_json(&report)?,
        IncidentsOutput::Yaml => render::to_yaml(&report)?,
    };
    io.out.write_all(text.as_bytes())?;
    if args.output == IncidentsOutput::Table {
        super::status::warn_about_hub(io.err, &record, sites.len(), now)?;
    }
    Ok(())
}
