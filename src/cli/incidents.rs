//! `kubectl fleet incidents`: the hub's active cross-cluster correlations
//! and cascades, read from the FederationStatus singleton.

use super::{Error, GlobalArgs, Io};

/// Output formats of `incidents`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IncidentsOutput {
    /// Tables of correlations and cascades
    Table,
    /// The FederationStatus status as JSON
    Json,
    /// The FederationStatus status as YAML
    Yaml,
}

/// Arguments of `kubectl fleet incidents`.
#[derive(Debug, clap::Args)]
pub struct IncidentsArgs {
    /// Output format
    #[arg(short, long, value_enum, default_value_t = IncidentsOutput::Table)]
    pub output: IncidentsOutput,
}

/// Runs `kubectl fleet incidents`.
pub async fn run(global: &GlobalArgs, args: IncidentsArgs, io: &mut Io<'_>) -> Result<(), Error> {
    let hub = global.hub().await?;
    let Some(status) = hub.get_federation_status().await? else {
        return Err(Error::Invalid {
            what: format!(
                "no FederationStatus {} on {} yet",
                crate::api::FEDERATION_STATUS_NAME,
                hub.server()
            ),
            hint: "install and start the hub operator: `kubectl fleet install | kubectl apply -f -`".into(),
        });
    };
    let fleet = status.status.unwrap_or_default();
    let text = match args.output {
        IncidentsOutput::Table => crate::render::incidents::render(&fleet, jiff::Timestamp::now()),
        IncidentsOutput::Json => {
            let mut s = serde_json::to_string_pretty(&fleet).expect("status serialises");
            s.push('\n');
            s
        }
        IncidentsOutput::Yaml => serde_saphyr::to_string(&fleet).expect("status serialises"),
    };
    io.out.write_all(text.as_bytes())?;
    Ok(())
}
