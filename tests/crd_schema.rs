//! Golden test of the generated CRDs: the full YAML of
//! `kubectl_fleet::api::crds_yaml()` must equal the checked-in
//! `deploy/crds/federation.kubectl-fleet.dev.yaml`, so every schema change is
//! reviewed as a diff and the shipped file never drifts from the types.
//!
//! Regenerate after an intended change with
//! `UPDATE_GOLDEN=1 cargo test --test integration crd_schema::`.

use std::path::PathBuf;

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/crds/federation.kubectl-fleet.dev.yaml")
}

#[test]
fn generated_crds_match_golden_file() {
    let generated = kubectl_fleet::api::crds_yaml();
    let path = golden_path();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &generated).expect("write golden CRD file");
        return;
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}\nregenerate it with `UPDATE_GOLDEN=1 cargo test --test integration crd_schema::`",
            path.display()
        )
    });
    if golden != generated {
        panic!(
            "generated CRDs differ from {}:\n{}\nif the change is intended, regenerate with \
             `UPDATE_GOLDEN=1 cargo test --test integration crd_schema::` and commit the file",
            path.display(),
            line_diff(&golden, &generated)
        );
    }
}

#[test]
fn generated_yaml_parses_back_into_the_same_crds() {
    let yaml = kubectl_fleet::api::crds_yaml();
    let crds: Vec<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        serde_saphyr::from_str_multiple(&yaml).expect("generated CRD YAML parses");
    assert_eq!(crds, kubectl_fleet::api::crds());
}

/// A minimal line diff (longest common subsequence) so a failure shows what
/// changed, with `-` for the golden file and `+` for the generated text.
fn line_diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push_str(&format!("+{}: {}\n", j + 1, b[j]));
            j += 1;
        } else {
            out.push_str(&format!("-{}: {}\n", i + 1, a[i]));
            i += 1;
        }
    }
    out
}
