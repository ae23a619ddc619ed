//! `kubectl fleet version`.

use super::{Error, Io};

/// Arguments of `kubectl fleet version`.
#[derive(Debug, clap::Args)]
pub struct VersionArgs {
    /// Print only the version number
    #[arg(long)]
    pub short: bool,
}

/// The crate version this binary was built from.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Runs `kubectl fleet version`.
pub fn run(args: VersionArgs, io: &mut Io<'_>) -> Result<(), Error> {
    if args.short {
        writeln!(io.out, "{VERSION}")?;
    } else {
        writeln!(io.out, "kubectl-fleet {VERSION}")?;
    }
    Ok(())
}
