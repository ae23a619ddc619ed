//! The repository's build tool, kept out of the shipped binaries:
//! `cargo xtask regen [DIR]` (what `tools/regen.sh` runs) writes every
//! generated file that is checked in under DIR (default: the repository
//! root). Its unit tests are the drift check: the checked-in copies equal
//! what the code generates now.

mod generate;
mod promtool;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask regen [DIR]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["regen"] | ["regen", _] => {
            let root = args.get(1).map_or_else(
                || {
                    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                        .parent()
                        .expect("xtask lives in the repository")
                        .to_owned()
                },
                PathBuf::from,
            );
            match generate::write_all(&root) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
