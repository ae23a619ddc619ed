//! The checked-in generated files (completions, man page, CRD YAML, krew
//! manifest template) equal what the code generates now. On failure, run
//! `tools/regen.sh` and commit the result.

use std::path::{Path, PathBuf};
use std::process::Command;

fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn generated_files_are_up_to_date() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("generated");
    let status = Command::new(env!("CARGO_BIN_EXE_kubectl-fleet"))
        .arg("__generate")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let generated = files_under(&out);
    assert!(generated.len() >= 7, "{generated:?}");
    let mut stale = Vec::new();
    for rel in &generated {
        let fresh = std::fs::read(out.join(rel)).unwrap();
        match std::fs::read(repo.join(rel)) {
            Ok(current) if current == fresh => {}
            _ => stale.push(rel.display().to_string()),
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files {stale:?}: run tools/regen.sh and commit the result"
    );
}
