//! kubectl's JSONPath templates (`-o jsonpath=TEMPLATE`), over a JSON
//! document: text outside braces is printed as written; inside them a
//! path (`{.sites[*].name}`, `$` and `@` optional), a quoted string
//! (`{"\n"}`), or `{range PATH}…{end}` over a list. Paths take `.key`
//! (`\.` escapes a dot in a key), `..key` (anywhere below), `*`, `[n]`
//! (negative from the end), `[start:end:step]`, `[n,m]`, `['key']`,
//! `['a','b']` and filters `[?(@.x == "y")]` (`==`, `!=`, `<`, `<=`, `>`,
//! `>=`, or `[?(@.x)]` for presence). The results of one path are printed
//! separated by spaces: strings as they are, numbers and booleans as
//! JSON, objects and lists as compact JSON, null as nothing. A missing key
//! prints nothing, as with kubectl's default `--allow-missing-template-keys`.
//!
//! [`Template::render`] evaluates over a whole document;
//! [`SiteStream`] evaluates a `StatusReport` site by site, so `kubectl
//! fleet status -o jsonpath` keeps the paged listing's constant memory for
//! templates that walk the sites in order (docs/views.md#-o-name-and--o-jsonpath).

use std::fmt::Write as _;

use serde_json::Value;

/// A parsed template.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    nodes: Vec<Node>,
    /// Whether string values are made terminal-safe when printed
    /// ([`Template::escaped`]).
    escape: bool,
}

#[derive(Clone, Debug, PartialEq)]
enum Node {
    /// Printed as written.
    Text(String),
    /// Printed: each result, separated by spaces.
    Path(Path),
    /// The body, once per element the path yields.
    Range(Path, Vec<Node>),
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Path {
    steps: Vec<Step>,
}

#[derive(Clone, Debug, PartialEq)]
enum Step {
    /// `.key`, `['key']`.
    Key(String),
    /// `['a','b']`.
    Keys(Vec<String>),
    /// `..key`: every value under `key` at any depth, in document order.
    Descend(String),
    /// `*`, `[*]`: every element or member value.
    All,
    /// `[n]`, `[n,m]`.
    Indices(Vec<i64>),
    /// `[start:end:step]`.
    Slice(Option<i64>, Option<i64>, Option<i64>),
    /// `[?(...)]`.
    Filter(Filter),
}

#[derive(Clone, Debug, PartialEq)]
struct Filter {
    left: Operand,
    compare: Option<(Cmp, Operand)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Debug, PartialEq)]
enum Operand {
    /// `@.path`, relative to the element tested.
    Path(Path),
    Literal(Value),
}

/// Why a template does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid jsonpath template {template:?}: {reason}")]
pub struct ParseError {
    template: String,
    reason: String,
}

impl Template {
    /// Parses a template.
    pub fn parse(template: &str) -> Result<Self, ParseError> {
        let error = |reason: String| ParseError {
            template: template.chars().take(80).collect(),
            reason,
        };
        let mut parser = Parser {
            chars: template.chars().collect(),
            at: 0,
        };
        let (nodes, ended) = parser.nodes(0).map_err(error)?;
        if ended {
            return Err(error("{end} without {range ...}".into()));
        }
        Ok(Template {
            nodes,
            escape: false,
        })
    }

    /// The first key of every path at the top level of the template (not
    /// inside a range): what the template expects the document to have.
    pub fn top_level_keys(&self) -> Vec<&str> {
        self.nodes
            .iter()
            .filter_map(|n| match n {
                Node::Path(p) | Node::Range(p, _) => match p.steps.first() {
                    Some(Step::Key(k)) => Some(k.as_str()),
                    _ => None,
                },
                Node::Text(_) => None,
            })
            .collect()
    }

    /// The same template printing string values through
    /// [`crate::render::safe::terminal_safe`] when `escape` is true (its
    /// output goes to a terminal: the values are what sites wrote).
    /// The template's own text is printed as written.
    #[must_use]
    pub(crate) fn escaped(mut self, escape: bool) -> Self {
        self.escape = escape;
        self
    }

    /// The template evaluated over `doc`.
    pub(crate) fn render(&self, doc: &Value) -> String {
        let mut out = String::new();
        render_nodes(&self.nodes, doc, &mut out, self.escape);
        out
    }
}

fn render_nodes(nodes: &[Node], current: &Value, out: &mut String, escape: bool) {
    for node in nodes {
        match node {
            Node::Text(t) => out.push_str(t),
            Node::Path(p) => print_results(&p.eval(current), out, &mut true, escape),
            Node::Range(p, body) => {
                for item in range_items(p.eval(current)) {
                    render_nodes(body, item, out, escape);
                }
            }
        }
    }
}

/// What `{range PATH}` iterates over: each result, a list result's elements.
fn range_items(results: Vec<&Value>) -> Vec<&Value> {
    if let [Value::Array(items)] = results.as_slice() {
        return items.iter().collect();
    }
    results
}

fn print_results(results: &[&Value], out: &mut String, first: &mut bool, escape: bool) {
    for v in results {
        if !*first {
            out.push(' ');
        }
        *first = false;
        print_value(v, out, escape);
    }
}

fn print_value(v: &Value, out: &mut String, escape: bool) {
    match v {
        Value::Null => {}
        Value::String(s) if escape => out.push_str(&crate::render::safe::terminal_safe(s)),
        Value::String(s) => out.push_str(s),
        Value::Bool(_) | Value::Number(_) | Value::Array(_) | Value::Object(_) => {
            let _ = write!(out, "{v}");
        }
    }
}

impl Path {
    fn eval<'a>(&self, root: &'a Value) -> Vec<&'a Value> {
        eval_steps(&self.steps, vec![root])
    }
}

fn eval_steps<'a>(steps: &[Step], mut current: Vec<&'a Value>) -> Vec<&'a Value> {
    for step in steps {
        let mut next = Vec::new();
        for v in current {
            apply(step, v, &mut next);
        }
        current = next;
    }
    current
}

fn apply<'a>(step: &Step, v: &'a Value, out: &mut Vec<&'a Value>) {
    match step {
        Step::Key(k) => out.extend(v.get(k.as_str())),
        Step::Keys(keys) => out.extend(keys.iter().filter_map(|k| v.get(k.as_str()))),
        Step::Descend(k) => descend(k, v, out),
        Step::All => match v {
            Value::Array(items) => out.extend(items),
            Value::Object(map) => out.extend(map.values()),
            _ => {}
        },
        Step::Indices(indices) => {
            if let Value::Array(items) = v {
                for &i in indices {
                    if let Some(i) = index(i, items.len()) {
                        out.push(&items[i]);
                    }
                }
            }
        }
        Step::Slice(start, end, step) => {
            if let Value::Array(items) = v {
                out.extend(slice(*start, *end, *step, items.len()).map(|i| &items[i]));
            }
        }
        Step::Filter(f) => {
            if let Value::Array(items) = v {
                out.extend(items.iter().filter(|item| f.holds(item)));
            }
        }
    }
}

fn descend<'a>(key: &str, v: &'a Value, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(map) => {
            if let Some(found) = map.get(key) {
                out.push(found);
            }
            for child in map.values() {
                descend(key, child, out);
            }
        }
        Value::Array(items) => {
            for child in items {
                descend(key, child, out);
            }
        }
        _ => {}
    }
}

/// `i` of a list of `len` (negative: from the end), if in range.
fn index(i: i64, len: usize) -> Option<usize> {
    let len = i64::try_from(len).ok()?;
    let i = if i < 0 { len + i } else { i };
    (0..len)
        .contains(&i)
        .then(|| usize::try_from(i).ok())
        .flatten()
}

/// The indices of `[start:end:step]` of a list of `len`, as Python slices
/// them (negative bounds from the end; a non-positive step yields nothing).
fn slice(
    start: Option<i64>,
    end: Option<i64>,
    step: Option<i64>,
    len: usize,
) -> impl Iterator<Item = usize> {
    let n = i64::try_from(len).unwrap_or(i64::MAX);
    let clamp = |i: i64| if i < 0 { (n + i).max(0) } else { i.min(n) };
    let from = start.map_or(0, clamp);
    let to = end.map_or(n, clamp);
    let step = step.unwrap_or(1);
    let (from, to, step) = if step <= 0 {
        (0, 0, 1)
    } else {
        (from, to, step)
    };
    (from..to)
        .step_by(usize::try_from(step).unwrap_or(1))
        .filter_map(|i| usize::try_from(i).ok())
}

impl Filter {
    fn holds(&self, item: &Value) -> bool {
        let left = self.left.values(item);
        match &self.compare {
            None => left.iter().any(|v| !v.is_null()),
            Some((cmp, right)) => {
                let right = right.values(item);
                left.iter()
                    .any(|l| right.iter().any(|r| compare(l, *cmp, r)))
            }
        }
    }
}

impl Operand {
    fn values<'a>(&'a self, item: &'a Value) -> Vec<&'a Value> {
        match self {
            Operand::Path(p) => p.eval(item),
            Operand::Literal(v) => vec![v],
        }
    }
}

fn compare(l: &Value, cmp: Cmp, r: &Value) -> bool {
    use std::cmp::Ordering;
    let order = match (l, r) {
        (Value::Number(a), Value::Number(b)) => a.as_f64().partial_cmp(&b.as_f64()),
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        (Value::Bool(a), Value::Bool(b)) => Some(a.cmp(b)),
        (Value::Null, Value::Null) => Some(Ordering::Equal),
        _ => None,
    };
    match (cmp, order) {
        (Cmp::Eq, o) => o == Some(Ordering::Equal),
        (Cmp::Ne, o) => o != Some(Ordering::Equal),
        (Cmp::Lt, Some(o)) => o == Ordering::Less,
        (Cmp::Le, Some(o)) => o != Ordering::Greater,
        (Cmp::Gt, Some(o)) => o == Ordering::Greater,
        (Cmp::Ge, Some(o)) => o != Ordering::Less,
        (_, None) => false,
    }
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

/// Deepest `{range}` nesting accepted (a template is a command-line flag;
/// this only keeps a hostile one from recursing without bound).
const MAX_DEPTH: usize = 32;

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    fn starts_with(&self, word: &str) -> bool {
        word.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    /// Nodes up to the end of the template or an `{end}`; the flag says
    /// which ended them.
    fn nodes(&mut self, depth: usize) -> Result<(Vec<Node>, bool), String> {
        if depth > MAX_DEPTH {
            return Err(format!("more than {MAX_DEPTH} nested {{range}}"));
        }
        let mut nodes = Vec::new();
        let mut text = String::new();
        while let Some(c) = self.peek() {
            if c != '{' {
                text.push(c);
                self.at += 1;
                continue;
            }
            if !text.is_empty() {
                nodes.push(Node::Text(std::mem::take(&mut text)));
            }
            self.at += 1;
            self.skip_spaces();
            if self.starts_with("end") && self.closes_after(3) {
                self.at += 3;
                self.skip_spaces();
                self.expect('}')?;
                return Ok((nodes, true));
            }
            if self.starts_with("range") && self.peek_at(5).is_some_and(char::is_whitespace) {
                self.at += 5;
                self.skip_spaces();
                let path = self.path()?;
                self.skip_spaces();
                self.expect('}')?;
                let (body, ended) = self.nodes(depth + 1)?;
                if !ended {
                    return Err("{range ...} without {end}".into());
                }
                nodes.push(Node::Range(path, body));
                continue;
            }
            if matches!(self.peek(), Some('"' | '\'')) {
                let literal = self.quoted()?;
                self.skip_spaces();
                self.expect('}')?;
                nodes.push(Node::Text(literal));
                continue;
            }
            let path = self.path()?;
            self.skip_spaces();
            self.expect('}')?;
            nodes.push(Node::Path(path));
        }
        if !text.is_empty() {
            nodes.push(Node::Text(text));
        }
        Ok((nodes, false))
    }

    /// Whether only spaces lie between `ahead` characters from here and a `}`.
    fn closes_after(&self, ahead: usize) -> bool {
        let mut i = ahead;
        while self.peek_at(i).is_some_and(char::is_whitespace) {
            i += 1;
        }
        self.peek_at(i) == Some('}')
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(match self.peek() {
                Some(found) => format!(
                    "expected {c:?} at character {}, found {found:?}",
                    self.at + 1
                ),
                None => format!("expected {c:?} before the end"),
            })
        }
    }

    /// A path, up to a `}`, a space, a comparison or a `)`.
    fn path(&mut self) -> Result<Path, String> {
        let mut steps = Vec::new();
        if matches!(self.peek(), Some('$' | '@')) {
            self.at += 1;
        }
        loop {
            match self.peek() {
                Some('.') if self.peek_at(1) == Some('.') => {
                    self.at += 2;
                    steps.push(Step::Descend(self.key()?));
                }
                Some('.') => {
                    self.at += 1;
                    if self.eat('*') {
                        steps.push(Step::All);
                    } else if self.peek() == Some('[') {
                        // `.[0]`: the dot is optional before a bracket.
                    } else {
                        steps.push(Step::Key(self.key()?));
                    }
                }
                Some('[') => {
                    self.at += 1;
                    steps.push(self.bracket()?);
                }
                Some('*') if steps.is_empty() => {
                    self.at += 1;
                    steps.push(Step::All);
                }
                _ => break,
            }
        }
        Ok(Path { steps })
    }

    fn key(&mut self) -> Result<String, String> {
        let mut key = String::new();
        while let Some(c) = self.peek() {
            if c == '\\' {
                match self.peek_at(1) {
                    Some(next) => {
                        key.push(next);
                        self.at += 2;
                        continue;
                    }
                    None => return Err("a key ends in a lone \\".into()),
                }
            }
            if c.is_whitespace() || "{}[].,()=!<>\"'".contains(c) {
                break;
            }
            key.push(c);
            self.at += 1;
        }
        if key.is_empty() {
            return Err(match self.peek() {
                Some(c) => format!("expected a key at character {}, found {c:?}", self.at + 1),
                None => "expected a key before the end".into(),
            });
        }
        Ok(key)
    }

    fn bracket(&mut self) -> Result<Step, String> {
        self.skip_spaces();
        let step = if self.eat('*') {
            Step::All
        } else if self.eat('?') {
            self.skip_spaces();
            self.expect('(')?;
            let filter = self.filter()?;
            self.skip_spaces();
            self.expect(')')?;
            Step::Filter(filter)
        } else if matches!(self.peek(), Some('"' | '\'')) {
            let mut keys = vec![self.quoted()?];
            self.skip_spaces();
            while self.eat(',') {
                self.skip_spaces();
                keys.push(self.quoted()?);
                self.skip_spaces();
            }
            if keys.len() == 1 {
                Step::Key(keys.remove(0))
            } else {
                Step::Keys(keys)
            }
        } else {
            self.indices()?
        };
        self.skip_spaces();
        self.expect(']')?;
        Ok(step)
    }

    fn indices(&mut self) -> Result<Step, String> {
        let first = self.integer()?;
        self.skip_spaces();
        if self.peek() == Some(':') {
            self.at += 1;
            self.skip_spaces();
            let end = self.integer()?;
            self.skip_spaces();
            let step = if self.eat(':') {
                self.skip_spaces();
                self.integer()?
            } else {
                None
            };
            return Ok(Step::Slice(first, end, step));
        }
        let mut all =
            vec![first.ok_or("expected an index, a slice, *, a key or a filter in [...]")?];
        while self.eat(',') {
            self.skip_spaces();
            all.push(self.integer()?.ok_or("expected an index after ,")?);
            self.skip_spaces();
        }
        Ok(Step::Indices(all))
    }

    fn integer(&mut self) -> Result<Option<i64>, String> {
        let start = self.at;
        if self.peek() == Some('-') {
            self.at += 1;
        }
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        let text: String = self.chars[start..self.at].iter().collect();
        if text.is_empty() {
            return Ok(None);
        }
        text.parse()
            .map(Some)
            .map_err(|_| format!("{text:?} is not an index"))
    }

    fn filter(&mut self) -> Result<Filter, String> {
        self.skip_spaces();
        let left = self.operand()?;
        self.skip_spaces();
        let cmp = [
            ("==", Cmp::Eq),
            ("!=", Cmp::Ne),
            ("<=", Cmp::Le),
            (">=", Cmp::Ge),
            ("<", Cmp::Lt),
            (">", Cmp::Gt),
        ]
        .into_iter()
        .find(|(op, _)| self.starts_with(op));
        let Some((op, cmp)) = cmp else {
            return Ok(Filter {
                left,
                compare: None,
            });
        };
        self.at += op.len();
        self.skip_spaces();
        let right = self.operand()?;
        Ok(Filter {
            left,
            compare: Some((cmp, right)),
        })
    }

    fn operand(&mut self) -> Result<Operand, String> {
        match self.peek() {
            Some('@' | '$' | '.') => Ok(Operand::Path(self.path()?)),
            Some('"' | '\'') => Ok(Operand::Literal(Value::String(self.quoted()?))),
            Some(c) if c == '-' || c.is_ascii_digit() => {
                let start = self.at;
                self.at += 1;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
                {
                    self.at += 1;
                }
                let text: String = self.chars[start..self.at].iter().collect();
                let n: serde_json::Number = text
                    .parse()
                    .map_err(|_| format!("{text:?} is not a number"))?;
                Ok(Operand::Literal(Value::Number(n)))
            }
            _ => {
                for (word, value) in [
                    ("true", Value::Bool(true)),
                    ("false", Value::Bool(false)),
                    ("null", Value::Null),
                ] {
                    if self.starts_with(word) {
                        self.at += word.len();
                        return Ok(Operand::Literal(value));
                    }
                }
                Err(format!(
                    "expected @.path, a quoted string or a number in a filter at character {}",
                    self.at + 1
                ))
            }
        }
    }

    /// A quoted string, `"…"` or `'…'`, with `\n`, `\t`, `\r`, `\\` and
    /// the quote escaped.
    fn quoted(&mut self) -> Result<String, String> {
        let quote = self.peek().ok_or("expected a quoted string")?;
        self.at += 1;
        let mut out = String::new();
        loop {
            let c = self.peek().ok_or("a quoted string is not closed")?;
            self.at += 1;
            match c {
                '\\' => {
                    let e = self.peek().ok_or("a quoted string is not closed")?;
                    self.at += 1;
                    out.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        other => other,
                    });
                }
                c if c == quote => return Ok(out),
                c => out.push(c),
            }
        }
    }
}

/// How [`SiteStream`] evaluates one top-level node.
#[derive(Debug)]
enum Plan {
    /// Text: printed as written.
    Text(String),
    /// Evaluated at the end, over the document without `sites`.
    AtEnd(Node),
    /// Evaluated on each site as it arrives: `which` picks the sites
    /// (by index and value), `rest` is the path below one site.
    PerSite {
        which: Step,
        rest: Path,
        range: Option<Vec<Node>>,
    },
}

/// A template evaluated over a document `{…, <list>: [...], …}` whose list
/// arrives one element at a time (the `sites` of a `StatusReport`): each
/// element is evaluated when it comes and dropped, and only the printed
/// text is kept, when every path into the list walks it in order
/// (`[*]`, a filter, one index ≥ 0, a forward slice). Any other template
/// (`{.sites}`, `{..name}`, `{.sites[-1]}`) keeps the elements and is
/// evaluated over the whole document at the end. Either way the text is
/// exactly what [`Template::render`] makes of the whole document.
#[derive(Debug)]
pub(crate) struct SiteStream {
    list_key: String,
    escape: bool,
    mode: Mode,
    seen: usize,
}

#[derive(Debug)]
enum Mode {
    /// Per node: its plan and the text printed so far (and whether it has
    /// printed a result yet, for the spaces between results).
    Streaming(Vec<(Plan, String, bool)>),
    /// The template and every element, for the end.
    Whole(Template, Vec<Value>),
}

impl SiteStream {
    /// Evaluates `template` over a document whose `list_key` list is fed
    /// with [`SiteStream::push`].
    pub(crate) fn new(template: Template, list_key: &str) -> Self {
        let escape = template.escape;
        let plans: Option<Vec<Plan>> = template.nodes.iter().map(|n| plan(n, list_key)).collect();
        let mode = match plans {
            Some(plans) => Mode::Streaming(
                plans
                    .into_iter()
                    .map(|p| (p, String::new(), true))
                    .collect(),
            ),
            None => Mode::Whole(template, Vec::new()),
        };
        Self {
            list_key: list_key.to_owned(),
            escape,
            mode,
            seen: 0,
        }
    }

    #[cfg(test)]
    /// Whether the elements are evaluated as they come (not kept).
    pub(crate) fn streams(&self) -> bool {
        matches!(self.mode, Mode::Streaming(_))
    }

    /// The next element of the list.
    pub(crate) fn push(&mut self, item: Value) {
        let i = self.seen;
        self.seen += 1;
        let escape = self.escape;
        match &mut self.mode {
            Mode::Whole(_, items) => items.push(item),
            Mode::Streaming(plans) => {
                for (plan, out, first) in plans.iter_mut() {
                    let Plan::PerSite { which, rest, range } = plan else {
                        continue;
                    };
                    if !selects(which, i, &item) {
                        continue;
                    }
                    let results = rest.eval(&item);
                    match range {
                        None => print_results(&results, out, first, escape),
                        Some(body) => {
                            for element in range_items(results) {
                                render_nodes(body, element, out, escape);
                            }
                        }
                    }
                }
            }
        }
    }

    /// The text, given the rest of the document (`doc` without the list).
    pub(crate) fn finish(self, mut doc: serde_json::Map<String, Value>) -> String {
        match self.mode {
            Mode::Whole(template, items) => {
                doc.insert(self.list_key, Value::Array(items));
                template.render(&Value::Object(doc))
            }
            Mode::Streaming(plans) => {
                let escape = self.escape;
                let doc = Value::Object(doc);
                let mut text = String::new();
                for (plan, out, _) in plans {
                    match plan {
                        Plan::Text(t) => text.push_str(&t),
                        Plan::AtEnd(node) => {
                            render_nodes(std::slice::from_ref(&node), &doc, &mut text, escape)
                        }
                        Plan::PerSite { .. } => text.push_str(&out),
                    }
                }
                text
            }
        }
    }
}

/// The streaming plan of a top-level node, or None when it needs the
/// whole list at once.
fn plan(node: &Node, list_key: &str) -> Option<Plan> {
    let (path, range) = match node {
        Node::Text(t) => return Some(Plan::Text(t.clone())),
        Node::Path(p) => (p, None),
        Node::Range(p, body) => (p, Some(body.clone())),
    };
    match path.steps.as_slice() {
        [Step::Key(k), ..] if k != list_key => Some(Plan::AtEnd(node.clone())),
        [Step::Key(_), which, rest @ ..] if in_order(which) => Some(Plan::PerSite {
            which: which.clone(),
            rest: Path {
                steps: rest.to_vec(),
            },
            range,
        }),
        _ => None,
    }
}

/// Whether a step picks list elements in list order, each at most once,
/// knowing only its index and value.
fn in_order(step: &Step) -> bool {
    match step {
        Step::All | Step::Filter(_) => true,
        Step::Indices(i) => matches!(i.as_slice(), [n] if *n >= 0),
        Step::Slice(start, end, step) => {
            start.is_none_or(|s| s >= 0) && end.is_none_or(|e| e >= 0) && step.is_none_or(|s| s > 0)
        }
        _ => false,
    }
}

/// Whether the in-order step `which` picks element `i` (value `item`).
fn selects(which: &Step, i: usize, item: &Value) -> bool {
    let i = i64::try_from(i).unwrap_or(i64::MAX);
    match which {
        Step::All => true,
        Step::Filter(f) => f.holds(item),
        Step::Indices(n) => n.first() == Some(&i),
        Step::Slice(start, end, step) => {
            let start = start.unwrap_or(0);
            let step = step.unwrap_or(1).max(1);
            i >= start && end.is_none_or(|e| i < e) && (i - start) % step == 0
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({
            "kind": "StatusReport",
            "sites": [
                {"name": "a", "phase": "Connected", "nodeCount": 3, "region": "eu",
                 "gpus": {"byVendor": {"nvidia.com/gpu": {"total": 8}}}, "signals": [{"type": "OOMKilled"}]},
                {"name": "b", "phase": "Stale", "nodeCount": 1, "region": null, "gpus": null, "signals": []},
                {"name": "c", "phase": "Connected", "nodeCount": 12, "region": "us", "gpus": null,
                 "signals": [{"type": "Evicted"}, {"type": "OOMKilled"}]}
            ],
            "summary": {"sites": 3, "phases": {"connected": 2, "stale": 1}}
        })
    }

    fn render(t: &str) -> String {
        Template::parse(t).unwrap().render(&doc())
    }

    #[test]
    fn kubectl_templates() {
        assert_eq!(render("{.sites[*].name}"), "a b c");
        assert_eq!(render("{$.sites[*].name}"), "a b c");
        assert_eq!(
            render("{range .sites[*]}{.name}{\"\\t\"}{.phase}{\"\\n\"}{end}"),
            "a\tConnected\nb\tStale\nc\tConnected\n"
        );
        assert_eq!(render("{range .sites}[{.name}]{end}"), "[a][b][c]");
        assert_eq!(render("sites: {.summary.sites}"), "sites: 3");
        assert_eq!(render("{.summary.phases}"), r#"{"connected":2,"stale":1}"#);
        assert_eq!(render("{.sites[0].name}"), "a");
        assert_eq!(render("{.sites[-1].name}"), "c");
        assert_eq!(render("{.sites[0,2].name}"), "a c");
        assert_eq!(render("{.sites[1:].name}"), "b c");
        assert_eq!(render("{.sites[:2].name}"), "a b");
        assert_eq!(render("{.sites[::2].name}"), "a c");
        assert_eq!(render("{.sites[?(@.phase==\"Connected\")].name}"), "a c");
        assert_eq!(render("{.sites[?(@.phase!='Connected')].name}"), "b");
        assert_eq!(render("{.sites[?(@.nodeCount > 2)].name}"), "a c");
        assert_eq!(render("{.sites[?(@.nodeCount<=3)].name}"), "a b");
        assert_eq!(render("{.sites[?(@.region)].name}"), "a c");
        assert_eq!(render("{..type}"), "OOMKilled Evicted OOMKilled");
        assert_eq!(
            render("{.sites[0].gpus.byVendor.nvidia\\.com/gpu.total}"),
            "8"
        );
        assert_eq!(render("{.sites[0]['name','phase']}"), "a Connected");
        assert_eq!(render("{.sites[1].region}|{.sites[9].name}|{.nope}"), "||");
        assert_eq!(render("{.summary.*}"), r#"{"connected":2,"stale":1} 3"#);
        assert_eq!(
            render("{range .sites[*]}{.name}:{range .signals[*]}{.type},{end};{end}"),
            "a:OOMKilled,;b:;c:Evicted,OOMKilled,;"
        );
        assert_eq!(render("plain text"), "plain text");
    }

    #[test]
    fn bad_templates_say_why() {
        for (t, why) in [
            ("{.sites[*].name", "expected '}'"),
            ("{range .sites[*]}{.name}", "without {end}"),
            ("{.name}{end}", "{end} without"),
            ("{.sites[x]}", "expected an index"),
            ("{.sites[?(@.a == )]}", "in a filter"),
            ("{\"open}", "not closed"),
            ("{.}", "expected a key"),
        ] {
            let e = Template::parse(t).unwrap_err().to_string();
            assert!(e.contains(why), "{t}: {e}");
        }
        let deep = "{range .a}".repeat(40) + &"{end}".repeat(40);
        assert!(Template::parse(&deep).is_err());
    }

    fn streamed(t: &str) -> (String, bool) {
        let Value::Object(mut whole) = doc() else {
            unreachable!()
        };
        let Some(Value::Array(sites)) = whole.remove("sites") else {
            unreachable!()
        };
        let mut stream = SiteStream::new(Template::parse(t).unwrap(), "sites");
        let streams = stream.streams();
        for site in sites {
            stream.push(site);
        }
        (stream.finish(whole), streams)
    }

    #[test]
    fn streamed_text_is_the_whole_documents() {
        for (t, streams) in [
            ("{.sites[*].name}", true),
            (
                "{.kind}: {range .sites[*]}{.name}={.phase} {end}({.summary.sites})",
                true,
            ),
            (
                "{.sites[?(@.phase==\"Stale\")].name} {.sites[*].nodeCount}",
                true,
            ),
            ("{.sites[1].name}{.sites[1:3].name}{.sites[::2].name}", true),
            ("{.summary.phases.connected}", true),
            ("{.sites}", false),
            ("{.sites[-1].name}", false),
            ("{.sites[2,0].name}", false),
            ("{..name}", false),
            ("{@}", false),
            ("{.*}", false),
        ] {
            let (text, did_stream) = streamed(t);
            assert_eq!(text, render(t), "{t}");
            assert_eq!(did_stream, streams, "{t}");
        }
    }
}
