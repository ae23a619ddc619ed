//! `kubectl fleet policy [--tier T]`: the remediation policy (docs/architecture.md#signals-correlation-and-remediation-policy),
//! from the same pure function the operator evaluates.

use super::{Error, Io, wire_enum};
use crate::api::Tier;
use crate::fleet::policy::{policy_rows_for, policy_table};
use crate::render;

/// Output formats of `policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PolicyOutput {
    /// A table
    Table,
    /// The PolicyReport document as JSON
    Json,
    /// The PolicyReport document as YAML
    Yaml,
}

/// Arguments of `kubectl fleet policy`.
#[derive(Debug, clap::Args)]
pub struct PolicyArgs {
    /// Only this tier
    #[arg(long, value_name = "TIER", value_parser = wire_enum::<Tier>())]
    pub tier: Option<Tier>,
    /// Output format
    #[arg(short, long, value_enum, default_value_t = PolicyOutput::Table)]
    pub output: PolicyOutput,
}

/// Runs `kubectl fleet policy`.
pub fn run(args: PolicyArgs, io: &mut Io<'_>) -> Result<(), Error> {
    let rows = match args.tier {
        Some(tier) => policy_rows_for(Some(tier)),
        None => policy_table(),
    };
    let text = match args.output {
        PolicyOutput::Table => render::render_policy_table(&rows),
        PolicyOutput::Json => render::to_json(&render::policy_report(rows))?,
        PolicyOutput::Yaml => render::to_yaml(&render::policy_report(rows))?,
    };
    io.out.write_all(text.as_bytes())?;
    Ok(())
}
