//! Every path and anchor the repository cites exists. (That the
//! checked-in generated files equal what the code generates now is tested
//! beside their generator, `xtask/src/generate.rs`.)

use std::path::{Path, PathBuf};

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

fn heading_anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors a Markdown file's headings make (outside code fences), with
/// GitHub's `-1`, `-2` suffixes for repeated headings.
fn anchors_of(markdown: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let hashes = line.len() - line.trim_start_matches('#').len();
        if fenced || !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = heading_anchor(&line[hashes..].replace('`', ""));
        let mut anchor = base.clone();
        let mut n = 0;
        while out.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        out.push(anchor);
    }
    out
}

/// The path-like word of `text` that starts at byte `start`.
fn word_at(text: &str, start: usize) -> &str {
    let len = text[start..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || "_-./#".contains(c)))
        .unwrap_or(text.len() - start);
    text[start..start + len].trim_end_matches('.')
}

/// What `reference` (a path relative to `base`, with an optional `#anchor`)
/// fails to name, if anything.
fn broken_reference(base: &Path, reference: &str) -> Option<String> {
    let (path, anchor) = reference.split_once('#').unwrap_or((reference, ""));
    let target = base.join(path);
    if !target.exists() {
        return Some(format!("{reference}: no such file"));
    }
    if anchor.is_empty() || !path.ends_with(".md") {
        return None;
    }
    let markdown = std::fs::read_to_string(&target).unwrap();
    (!anchors_of(&markdown).iter().any(|a| a == anchor))
        .then(|| format!("{reference}: no heading makes #{anchor}"))
}

/// Every file and heading the docs link to, every repository path they name
/// in backticks, and every `FILE.md#anchor` cited anywhere in the sources,
/// scripts and docs exists (docs/architecture.md is the map: it must not
/// point at what moved).
#[test]
fn every_path_and_anchor_the_repository_cites_exists() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = [
        "README.md",
        "CONTRIBUTING.md",
        "BENCHMARKS.md",
        "Cargo.toml",
    ]
    .iter()
    .map(|f| repo.join(f))
    .collect();
    for dir in [
        "docs",
        "src",
        "tests",
        "tools",
        "kube-sandbox/src",
        "kube-sandbox/tests",
    ] {
        let root = repo.join(dir);
        files.extend(files_under(&root).into_iter().map(|rel| root.join(rel)));
    }
    files.retain(|f| {
        let ext = f.extension().and_then(|e| e.to_str()).unwrap_or("");
        ["md", "rs", "sh", "py", "toml"].contains(&ext)
    });
    let mut broken = Vec::new();
    // This file names the pattern it looks for.
    files.retain(|f| !f.ends_with("tests/generated_drift.rs"));
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let rel = file.strip_prefix(repo).unwrap().display().to_string();
        let here = file.parent().unwrap();
        let mut report = |problem: Option<String>| {
            if let Some(p) = problem {
                broken.push(format!("{rel}: {p}"));
            }
        };
        if rel.ends_with(".md") {
            // Markdown links outside code fences: [text](path#anchor).
            let mut fenced = false;
            for line in text.lines() {
                if line.starts_with("```") {
                    fenced = !fenced;
                }
                if fenced {
                    continue;
                }
                for (i, _) in line.match_indices("](") {
                    let after = &line[i + 2..];
                    if after.starts_with("http") || after.starts_with("mailto:") {
                        continue;
                    }
                    let target = word_at(line, i + 2);
                    if target.is_empty() {
                        continue;
                    }
                    let target = if let Some(anchor) = target.strip_prefix('#') {
                        format!("{}#{anchor}", file.file_name().unwrap().to_str().unwrap())
                    } else {
                        target.to_owned()
                    };
                    report(broken_reference(here, &target));
                }
            }
            // Repository paths in backticks: `crates/fleet-core/src/fleet/summary.rs`.
            for (i, _) in text.match_indices('`') {
                let word = word_at(&text, i + 1);
                let top = [
                    "src/",
                    "crates/",
                    "xtask/",
                    "tests/",
                    "tools/",
                    "docs/",
                    "deploy/",
                    "kube-sandbox/",
                    "examples/",
                ];
                if top.iter().any(|t| word.starts_with(t))
                    && text[i + 1 + word.len()..].starts_with('`')
                {
                    report(broken_reference(repo, word.trim_end_matches('/')));
                }
            }
        }
        // `FILE.md#anchor` anywhere, relative to the file, the repository or docs/.
        for (i, _) in text.match_indices(".md#") {
            let start = text[..i]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || "_-./".contains(c)))
                .map_or(0, |p| p + 1);
            let reference = word_at(&text, start);
            if reference.starts_with('/')
                || text[..start].ends_with("://")
                || reference.contains("..") && !rel.ends_with(".md")
            {
                continue;
            }
            let docs = repo.join("docs");
            let base = [here, repo, docs.as_path()]
                .into_iter()
                .find(|b| b.join(reference.split('#').next().unwrap()).exists());
            match base {
                Some(base) => report(broken_reference(base, reference)),
                None if text[..start].ends_with('/') => {}
                None => report(Some(format!("{reference}: no such file"))),
            }
        }
    }
    broken.sort();
    broken.dedup();
    assert!(
        broken.is_empty(),
        "broken references (fix the citation or the heading):\n{}",
        broken.join("\n")
    );
}

/// Every object name the docs cite — `fleet-system/NAME`, `fleet-sites/NAME`
/// and any backticked `fleet-operator…` — is one the generated manifests
/// (deploy/kustomize, deploy/monitoring) create or mount, or one that
/// `register` makes per site: a doc naming the wrong Secret leaves the
/// hub's pods in ContainerCreating.
#[test]
fn every_object_name_the_docs_cite_is_one_the_manifests_make() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names = std::collections::BTreeSet::new();
    fn collect(value: &serde_json::Value, names: &mut std::collections::BTreeSet<String>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, v) in map {
                    if let ("name" | "secretName" | "serviceAccountName", Some(s)) =
                        (key.as_str(), v.as_str())
                    {
                        names.insert(s.to_owned());
                    }
                    collect(v, names);
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| collect(v, names)),
            _ => {}
        }
    }
    for dir in ["deploy/kustomize", "deploy/monitoring", "deploy/crds"] {
        for file in files_under(&repo.join(dir)) {
            if file.extension().and_then(|e| e.to_str()) != Some("yaml") {
                continue;
            }
            let text = std::fs::read_to_string(repo.join(dir).join(&file)).unwrap();
            let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text)
                .unwrap_or_else(|e| panic!("{dir}/{}: {e}", file.display()));
            docs.iter().for_each(|d| collect(d, &mut names));
        }
    }
    assert!(
        names.contains("fleet-operator-hub-tls"),
        "the hub mounts its serving Secret"
    );
    // Made by `register` (per site) and `register --emit secret`.
    // An object name has no capitals: one with capitals has a placeholder
    // (`SITE`, `SECRET`) a user fills in.
    let per_site = |name: &str| {
        name.contains(|c: char| c.is_ascii_uppercase())
            || name.starts_with("fleet-pull-")
            || name.starts_with("fleet-edge-")
            || name == "fleet-hub-kubeconfig"
    };
    let resources = ["serviceaccounts", "roles", "rolebindings", "secrets"];
    let mut docs: Vec<PathBuf> = files_under(&repo.join("docs"))
        .into_iter()
        .filter(|f| f.extension().and_then(|e| e.to_str()) == Some("md"))
        .map(|f| Path::new("docs").join(f))
        .collect();
    docs.push("README.md".into());
    let mut wrong = Vec::new();
    for doc in docs {
        let text = std::fs::read_to_string(repo.join(&doc)).unwrap();
        let words = text.split(|c: char| !(c.is_ascii_alphanumeric() || "-/.`".contains(c)));
        for word in words {
            let bare = word.trim_matches(|c| c == '`' || c == '.');
            let cited = ["fleet-system/", "fleet-sites/"]
                .iter()
                .find_map(|ns| bare.strip_prefix(ns))
                .filter(|n| !n.is_empty() && !resources.contains(n))
                .or_else(|| {
                    // `fleet-operator-…` in backticks: an object name.
                    (word.starts_with('`')
                        && bare.starts_with("fleet-operator-")
                        && !bare.contains(['/', '.']))
                    .then_some(bare)
                });
            if let Some(name) = cited
                && !names.contains(name)
                && !per_site(name)
            {
                wrong.push(format!("{}: {name}", doc.display()));
            }
        }
    }
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "the docs cite objects no manifest makes:\n{}",
        wrong.join("\n")
    );
}
