//! The module layers, read from the source text: no import cycle between
//! two files, no upward import, no source file over 1,200 lines.
//!
//! The layers (docs/architecture.md): `bin → cli/operator → k8s/render →
//! fleet → api`. A module may use a module of a lower layer, never one of
//! its own layer (`k8s` and `render`, `cli` and `operator` stay apart) nor
//! one above. Every `.rs` file under `src/` and `crates/*/src` of the
//! kubectl-fleet crates is one node (`fleet_core::x` is `crate::x`: the core
//! crate is re-exported at the root), and so is every file of
//! `kube-sandbox/src`; an edge is a path that names another file's module
//! (`crate::…`, `super::…`, `self::…`, a child module by name), following
//! `pub use` re-exports to the file that defines the item. Two files that
//! reach each other are one concept split in two, or two concepts tied by
//! a shared type that belongs in a leaf below both.
//!
//! Std only, so it reads as a plain program: a small tokenizer (comments,
//! strings and chars dropped), the paths of `use` trees and expressions,
//! Tarjan's strongly connected components.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The longest a source file may be, tests included.
const MAX_LINES: usize = 1_200;

/// Files still over [`MAX_LINES`], each with its line count when this list
/// was written as a ceiling: a file here may shrink, never grow, and leaves
/// the list once it is under the limit. Nothing is added to it.
const OVER_LIMIT: &[(&str, usize)] = &[];

/// Import cycles still in the tree, by the modules they join: each leaves
/// the list once it is gone, and nothing is added to it.
const KNOWN_CYCLES: &[&str] = &[];

/// Upward imports still in the tree (from module, to module); the same
/// rule as [`KNOWN_CYCLES`].
const KNOWN_UPWARD: &[(&str, &str)] = &[];

/// Layer of each top-level module of the kubectl-fleet crates (higher
/// uses lower).
const LAYERS: &[(&str, u8)] = &[
    ("api", 0),
    ("fleet", 1),
    // Views, then the objects the product ships (which serialise through
    // render's YAML writer), then the I/O that applies them.
    ("render", 2),
    ("manifests", 3),
    ("k8s", 4),
    ("cli", 5),
    ("operator", 5),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn no_import_cycle_and_no_upward_import() {
    let root = root();
    let mut problems = Vec::new();
    let mut fleet = Graph::default();
    fleet.add_tree(&root, "src");
    for dir in crate_dirs(&root) {
        fleet.add_tree(&root, &format!("crates/{dir}/src"));
        fleet.aliases.insert(dir.replace('-', "_"));
    }
    fleet.link();
    assert!(
        fleet.files.len() > 50,
        "read {} files of src/",
        fleet.files.len()
    );
    let mut cycles: BTreeSet<&str> = KNOWN_CYCLES.iter().copied().collect();
    problems.extend(fleet.cycles(&mut cycles));
    problems.extend(fleet.upward());

    let mut sandbox = Graph::default();
    sandbox.add_tree(&root, "kube-sandbox/src");
    sandbox.link();
    assert!(
        sandbox.files.len() > 20,
        "read {} files of kube-sandbox/src",
        sandbox.files.len()
    );
    problems.extend(sandbox.cycles(&mut cycles));
    for gone in cycles {
        problems.push(format!(
            "no cycle among {gone} any more: remove it from KNOWN_CYCLES"
        ));
    }

    assert!(
        problems.is_empty(),
        "the module layers are broken:\n{}",
        problems.join("\n")
    );
}

#[test]
fn no_source_file_over_the_line_limit() {
    let root = root();
    let mut files = Vec::new();
    for dir in ["src", "crates", "kube-sandbox", "xtask", "tests"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "found {} .rs files", files.len());
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for file in &files {
        let rel = relative(&root, file);
        let lines = std::fs::read_to_string(file)
            .expect("read a source file")
            .lines()
            .count();
        match OVER_LIMIT.iter().find(|(name, _)| *name == rel) {
            Some((_, ceiling)) => {
                seen.insert(rel.clone());
                if lines > *ceiling {
                    problems.push(format!(
                        "{rel}: {lines} lines, over its ceiling of {ceiling} (split it; it may only shrink)"
                    ));
                } else if lines <= MAX_LINES {
                    problems.push(format!(
                        "{rel}: {lines} lines, now under {MAX_LINES}: remove it from OVER_LIMIT"
                    ));
                }
            }
            None if lines > MAX_LINES => problems.push(format!(
                "{rel}: {lines} lines, over {MAX_LINES} (split it where the seams are)"
            )),
            None => {}
        }
    }
    for (name, _) in OVER_LIMIT {
        if !seen.contains(*name) {
            problems.push(format!(
                "{name}: in OVER_LIMIT but gone: remove it from the list"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "source files too long:\n{}",
        problems.join("\n")
    );
}

/// The package directories under `crates/`.
fn crate_dirs(root: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root.join("crates")) else {
        return Vec::new();
    };
    let mut dirs: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("src").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    dirs
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            if entry.file_name() != "target" {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn relative(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .unwrap_or(file)
        .to_string_lossy()
        .replace('\\', "/")
}

type ModPath = Vec<String>;

/// Where a file names another module: the path as written and its line.
#[derive(Clone, Debug)]
struct Evidence {
    line: usize,
    path: String,
}

#[derive(Debug)]
struct File {
    /// Relative to the repository root.
    name: String,
    module: ModPath,
    tokens: Vec<(Tok, usize)>,
}

#[derive(Default)]
struct Graph {
    files: Vec<File>,
    /// Module path → index of the file that holds it.
    modules: BTreeMap<ModPath, usize>,
    /// Names other than `crate` that mean this crate's root.
    aliases: BTreeSet<String>,
    /// (module, exported name) → the absolute path it re-exports.
    reexports: BTreeMap<(ModPath, String), ModPath>,
    /// (from, to) → the first place `from` names `to`.
    edges: BTreeMap<(usize, usize), Evidence>,
}

impl Graph {
    /// Reads every module file under `dir` (a crate's `src`); `main.rs` and
    /// `src/bin` are other crates.
    fn add_tree(&mut self, root: &Path, dir: &str) {
        let base = root.join(dir);
        let mut files = Vec::new();
        rust_files(&base, &mut files);
        for path in files {
            let rel = path.strip_prefix(&base).expect("under its tree");
            let mut parts: Vec<String> = rel
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            if parts.first().is_some_and(|p| p == "bin") || parts == ["main.rs"] {
                continue;
            }
            let last = parts.pop().expect("a file name");
            let stem = last.trim_end_matches(".rs");
            if !matches!(stem, "mod" | "lib") {
                parts.push(stem.to_string());
            }
            let text = std::fs::read_to_string(&path).expect("read a source file");
            let index = self.files.len();
            self.modules.entry(parts.clone()).or_insert(index);
            self.files.push(File {
                name: relative(root, &path),
                module: parts,
                tokens: tokenize(&text),
            });
        }
    }

    /// Collects re-exports, then every file's references.
    fn link(&mut self) {
        let mut uses = Vec::new();
        for (index, file) in self.files.iter().enumerate() {
            for found in scan(file) {
                uses.push((index, found));
            }
        }
        for (_, found) in &uses {
            if let Some(export) = &found.export
                && let Some(abs) = self.absolute(&found.module, &found.path)
            {
                self.reexports
                    .insert((found.module.clone(), export.clone()), abs);
            }
        }
        let mut edges = BTreeMap::new();
        for (from, found) in uses {
            // Tests drive a module through the stack above it.
            if found.module.iter().any(|m| m == "tests") {
                continue;
            }
            let Some(abs) = self.absolute(&found.module, &found.path) else {
                continue;
            };
            let Some(to) = self.resolve(&abs, 0) else {
                continue;
            };
            if to != from {
                edges.entry((from, to)).or_insert(Evidence {
                    line: found.line,
                    path: found.path.join("::"),
                });
            }
        }
        self.edges = edges;
    }

    /// The absolute module path a written path starts from, or `None` for
    /// a path outside this crate.
    fn absolute(&self, module: &ModPath, path: &ModPath) -> Option<ModPath> {
        let first = path.first()?;
        let mut abs = if first == "crate" || self.aliases.contains(first) {
            Vec::new()
        } else if first == "self" || first == "super" {
            module.clone()
        } else {
            let mut child = module.clone();
            child.push(first.clone());
            if !self.modules.contains_key(&child) {
                return None;
            }
            child
        };
        let mut rest = path.iter().skip(1).peekable();
        if first == "super" {
            abs.pop()?;
            while rest.peek().is_some_and(|s| *s == "super") {
                rest.next();
                abs.pop()?;
            }
        }
        abs.extend(rest.cloned());
        Some(abs)
    }

    /// The file that defines what an absolute path names.
    fn resolve(&self, abs: &ModPath, depth: usize) -> Option<usize> {
        let mut module = Vec::new();
        for (i, seg) in abs.iter().enumerate() {
            let mut next = module.clone();
            next.push(seg.clone());
            if self.modules.contains_key(&next) {
                module = next;
                continue;
            }
            if depth < 8
                && let Some(target) = self.reexports.get(&(module.clone(), seg.clone()))
            {
                let mut target = target.clone();
                target.extend(abs[i + 1..].iter().cloned());
                if let Some(found) = self.resolve(&target, depth + 1) {
                    return Some(found);
                }
            }
            break;
        }
        self.modules.get(&module).copied()
    }

    /// Every set of files that reach each other, with one cycle through it.
    fn cycles(&self, allowed: &mut BTreeSet<&str>) -> Vec<String> {
        // Nodes: every module; an edge between two files becomes an edge
        // between the two siblings (children of their nearest common
        // module) that contain them.
        let names: Vec<&ModPath> = self.modules.keys().collect();
        let node = |m: &ModPath| names.binary_search(&m).expect("a known module");
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); names.len()];
        let mut why: BTreeMap<(usize, usize), (usize, usize)> = BTreeMap::new();
        for &(from, to) in self.edges.keys() {
            let (a, b) = (&self.files[from].module, &self.files[to].module);
            let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            if common == a.len() || common == b.len() {
                continue; // a module and its own parent or child
            }
            let (sa, sb) = (node(&a[..=common].to_vec()), node(&b[..=common].to_vec()));
            if !next[sa].contains(&sb) {
                next[sa].push(sb);
            }
            why.entry((sa, sb)).or_insert((from, to));
        }
        let mut out = Vec::new();
        for component in strongly_connected(&next) {
            if component.len() < 2 {
                continue;
            }
            let members: BTreeSet<usize> = component.iter().copied().collect();
            let start = *members.iter().min().expect("non-empty");
            let cycle = shortest_cycle(&next, &members, start);
            let key = members
                .iter()
                .map(|&i| names[i].join("::"))
                .collect::<Vec<_>>()
                .join(", ");
            if allowed.remove(key.as_str()) {
                continue;
            }
            let mut text = format!("import cycle among {key}:");
            for pair in cycle.windows(2) {
                let (from, to) = why[&(pair[0], pair[1])];
                let evidence = &self.edges[&(from, to)];
                let _ = write!(
                    text,
                    "\n    {}:{} uses {} ({})",
                    self.files[from].name, evidence.line, evidence.path, self.files[to].name
                );
            }
            out.push(text);
        }
        out
    }

    /// Every edge from a layer to its own or a higher one.
    fn upward(&self) -> Vec<String> {
        let layer = |i: usize| {
            let top = self.files[i].module.first()?;
            LAYERS
                .iter()
                .find(|(name, _)| name == top)
                .map(|&(name, rank)| (name, rank))
        };
        let mut allowed: BTreeSet<(String, String)> = KNOWN_UPWARD
            .iter()
            .map(|&(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let mut out = Vec::new();
        for (&(from, to), evidence) in &self.edges {
            let (Some((from_top, from_rank)), Some((to_top, to_rank))) = (layer(from), layer(to))
            else {
                continue;
            };
            if from_top != to_top && to_rank >= from_rank {
                let pair = (
                    self.files[from].module.join("::"),
                    self.files[to].module.join("::"),
                );
                if allowed.remove(&pair) {
                    continue;
                }
                out.push(format!(
                    "upward import: {}:{} ({from_top}) uses {} ({to_top}, {})",
                    self.files[from].name, evidence.line, evidence.path, self.files[to].name
                ));
            }
        }
        for (a, b) in allowed {
            out.push(format!(
                "{a} no longer uses {b}: remove it from KNOWN_UPWARD"
            ));
        }
        out
    }
}

/// Tarjan's algorithm, iterative.
fn strongly_connected(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = next.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut counter = 0;
    let mut out = Vec::new();
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0usize)];
        while let Some(&mut (v, ref mut child)) = work.last_mut() {
            if *child == 0 && index[v] == usize::MAX {
                index[v] = counter;
                low[v] = counter;
                counter += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = next[v].get(*child) {
                *child += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                out.push(component);
            }
        }
    }
    out
}

/// A shortest path from `start` back to itself inside `members`.
fn shortest_cycle(next: &[Vec<usize>], members: &BTreeSet<usize>, start: usize) -> Vec<usize> {
    let mut came_from = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in &next[v] {
            if !members.contains(&w) {
                continue;
            }
            if w == start {
                let mut path = vec![start, v];
                let mut at = v;
                while at != start {
                    at = came_from[&at];
                    path.push(at);
                }
                path.reverse();
                return path;
            }
            if w != start && !came_from.contains_key(&w) {
                came_from.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    vec![start]
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    Path,
    Punct(char),
}

/// Identifiers and punctuation with their line; comments, string, char
/// and number literals and lifetimes dropped.
fn tokenize(text: &str) -> Vec<(Tok, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let skip_to = |i: &mut usize, line: &mut usize, end: usize| {
        for c in &chars[*i..end.min(chars.len())] {
            if *c == '\n' {
                *line += 1;
            }
        }
        *i = end.min(chars.len());
    };
    while i < chars.len() {
        let c = chars[i];
        let at = |k: usize| chars.get(i + k).copied().unwrap_or('\0');
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(1) == '*' {
            let mut depth = 0;
            let mut j = i;
            while j < chars.len() {
                if chars[j] == '/' && chars.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if chars[j] == '*' && chars.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            skip_to(&mut i, &mut line, j);
        } else if (c == 'r' || c == 'b' || c == 'c')
            && (at(1) == '"' || at(1) == '#' || (c != 'r' && at(1) == 'r'))
            && raw_or_prefixed_string(&chars, i).is_some()
        {
            let end = raw_or_prefixed_string(&chars, i).expect("checked");
            skip_to(&mut i, &mut line, end);
        } else if c == '"' {
            let end = quoted(&chars, i + 1, '"');
            skip_to(&mut i, &mut line, end);
        } else if c == '\'' {
            if at(1) == '\\' {
                let end = quoted(&chars, i + 1, '\'');
                skip_to(&mut i, &mut line, end);
            } else if at(2) == '\'' {
                i += 3;
            } else {
                // A lifetime or a label.
                i += 1;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let mut word: String = chars[start..i].iter().collect();
            if let Some(raw) = word.strip_prefix("r#") {
                word = raw.to_string();
            }
            out.push((Tok::Ident(word), line));
        } else if c == ':' && at(1) == ':' {
            out.push((Tok::Path, line));
            i += 2;
        } else {
            out.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// The end of a string that starts after its opening quote.
fn quoted(chars: &[char], mut i: usize, close: char) -> usize {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            c if c == close => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// The end of `r"…"`, `r#"…"#`, `b"…"`, `br#"…"#`, `c"…"` starting at `i`.
fn raw_or_prefixed_string(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    let mut raw = false;
    while j < chars.len() && j < i + 2 && matches!(chars[j], 'b' | 'c' | 'r') {
        raw |= chars[j] == 'r';
        j += 1;
    }
    if !raw {
        return (chars.get(j) == Some(&'"')).then(|| quoted(chars, j + 1, '"'));
    }
    let mut hashes = 0;
    while chars.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        if chars[j] == '"' && (0..hashes).all(|k| chars.get(j + 1 + k) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(j)
}

/// One path a file writes.
#[derive(Debug)]
struct Found {
    /// The module the path is written in (inline modules included).
    module: ModPath,
    path: ModPath,
    line: usize,
    /// The name a `pub use` exports it under.
    export: Option<String>,
}

/// Every path of `use` trees and every `a::b` path in expressions and types.
fn scan(file: &File) -> Vec<Found> {
    let toks = &file.tokens;
    let mut out = Vec::new();
    let mut depth = 0usize;
    // Inline `mod name { … }`: the brace depth inside it.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let current = |inline: &[(String, usize)]| {
        let mut m = file.module.clone();
        m.extend(inline.iter().map(|(n, _)| n.clone()));
        m
    };
    let ident = |k: usize| match toks.get(k) {
        Some((Tok::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
            Tok::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Tok::Punct('}') => {
                depth = depth.saturating_sub(1);
                while inline.last().is_some_and(|(_, d)| *d > depth) {
                    inline.pop();
                }
                i += 1;
            }
            Tok::Ident(word) if word == "mod" => {
                if let (Some(name), Some((Tok::Punct('{'), _))) = (ident(i + 1), toks.get(i + 2)) {
                    depth += 1;
                    inline.push((name.to_string(), depth));
                    i += 3;
                } else {
                    i += 1;
                }
            }
            Tok::Ident(word) if word == "use" => {
                let public = i > 0
                    && (ident(i - 1) == Some("pub")
                        || (matches!(toks[i - 1].0, Tok::Punct(')'))
                            && (1..6).any(|k| i > k && ident(i - k) == Some("pub"))));
                let module = current(&inline);
                let mut end = i + 1;
                while end < toks.len() && toks[end].0 != Tok::Punct(';') {
                    end += 1;
                }
                let mut paths = Vec::new();
                use_tree(&toks[i + 1..end], Vec::new(), &mut paths);
                for (path, alias) in paths {
                    let export = if public && alias != "*" {
                        Some(alias)
                    } else {
                        None
                    };
                    out.push(Found {
                        module: module.clone(),
                        path,
                        line: toks[i].1,
                        export,
                    });
                }
                i = end + 1;
            }
            Tok::Ident(word)
                if toks.get(i + 1).is_some_and(|t| t.0 == Tok::Path)
                    && (i == 0 || toks[i - 1].0 != Tok::Path) =>
            {
                let module = current(&inline);
                let mut path = vec![word.clone()];
                let mut j = i + 1;
                while toks.get(j).is_some_and(|t| t.0 == Tok::Path) {
                    match ident(j + 1) {
                        Some(seg) => {
                            path.push(seg.to_string());
                            j += 2;
                        }
                        None => break,
                    }
                }
                out.push(Found {
                    module,
                    path,
                    line: toks[i].1,
                    export: None,
                });
                i = j;
            }
            _ => i += 1,
        }
    }
    out
}

/// Expands a `use` tree into (path, name it binds).
fn use_tree(toks: &[(Tok, usize)], prefix: ModPath, out: &mut Vec<(ModPath, String)>) {
    let mut path = prefix;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
            Tok::Ident(word) if word == "as" => {
                if let Some((Tok::Ident(alias), _)) = toks.get(i + 1) {
                    out.push((path.clone(), alias.clone()));
                }
                return;
            }
            Tok::Ident(word) if word == "self" && !path.is_empty() => {
                let name = path.last().cloned().unwrap_or_default();
                if let Some((Tok::Ident(kw), _)) = toks.get(i + 1)
                    && kw == "as"
                    && let Some((Tok::Ident(alias), _)) = toks.get(i + 2)
                {
                    out.push((path, alias.clone()));
                    return;
                }
                out.push((path, name));
                return;
            }
            Tok::Ident(word) => {
                path.push(word.clone());
                i += 1;
            }
            Tok::Path => i += 1,
            Tok::Punct('*') => {
                out.push((path, "*".to_string()));
                return;
            }
            Tok::Punct('{') => {
                // Split the group at its top-level commas.
                let mut depth = 0;
                let mut start = i + 1;
                for k in i..toks.len() {
                    match toks[k].0 {
                        Tok::Punct('{') => depth += 1,
                        Tok::Punct('}') => {
                            depth -= 1;
                            if depth == 0 {
                                if start < k {
                                    use_tree(&toks[start..k], path.clone(), out);
                                }
                                return;
                            }
                        }
                        Tok::Punct(',') if depth == 1 => {
                            if start < k {
                                use_tree(&toks[start..k], path.clone(), out);
                            }
                            start = k + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            _ => i += 1,
        }
    }
    if let Some(name) = path.last().cloned() {
        out.push((path, name));
    }
}
