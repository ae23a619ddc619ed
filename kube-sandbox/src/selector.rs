//! Label and field selectors for list and watch (`?labelSelector=`, `?fieldSelector=`).
//!
//! The label selector grammar, its lexer quirks (`in`/`notin` are values
//! inside parentheses, `()` means the empty value) and its error strings
//! follow `k8s.io/apimachinery/pkg/labels`, so a 400 reads like the real
//! server's. Field selectors follow `k8s.io/apimachinery/pkg/fields` (terms
//! split on unescaped commas, `\` escapes) with the field labels every custom
//! resource supports: `metadata.name` and `metadata.namespace`.

use serde_json::{Map, Value};

/// The operator of one label requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    /// `key in (a,b)`, `key=a`, `key==a`.
    In,
    /// `key notin (a,b)`, `key!=a`.
    NotIn,
    /// `key`.
    Exists,
    /// `!key`.
    DoesNotExist,
    /// `key>3`: the label parses as an integer greater than the value.
    GreaterThan,
    /// `key<3`.
    LessThan,
}

/// One requirement of a label selector; requirements are ANDed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub op: Operator,
    /// Sorted, deduplicated (the real parser keeps them in a string set).
    pub values: Vec<String>,
}

impl Requirement {
    fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        let value = labels
            .and_then(|l| l.get(&self.key))
            .map(|v| v.as_str().unwrap_or_default());
        match self.op {
            Operator::In => value.is_some_and(|v| self.values.iter().any(|x| x == v)),
            Operator::NotIn => !value.is_some_and(|v| self.values.iter().any(|x| x == v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(have), Some(want)) = (
                    value.and_then(|v| v.parse::<i64>().ok()),
                    self.values.first().and_then(|v| v.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                if self.op == Operator::GreaterThan {
                    have > want
                } else {
                    have < want
                }
            }
        }
    }
}

/// A parsed `labelSelector` query (`=`, `==`, `!=`, `in`, `notin`, exists, `!`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector {
    /// Sorted by key, as the real parser does; empty selects everything.
    pub requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// Parses the query string form; the error is the message for a 400 BadRequest.
    pub fn parse(s: &str) -> Result<Self, String> {
        let tokens = lex(s);
        let mut p = Parser { tokens, pos: 0 };
        let mut requirements = p.parse()?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector { requirements })
    }

    /// Whether an object's `metadata.labels` (absent = empty) satisfy every requirement.
    pub fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    End,
    ClosedPar,
    Comma,
    Bang,
    DoubleEquals,
    Equals,
    Greater,
    Ident,
    In,
    Less,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &str) -> Option<Tok> {
    Some(match s {
        ")" => Tok::ClosedPar,
        "," => Tok::Comma,
        "!" => Tok::Bang,
        "==" => Tok::DoubleEquals,
        "=" => Tok::Equals,
        ">" => Tok::Greater,
        "in" => Tok::In,
        "<" => Tok::Less,
        "!=" => Tok::NotEquals,
        "notin" => Tok::NotIn,
        "(" => Tok::OpenPar,
        _ => return None,
    })
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Tokenizes like the real lexer: runs of special symbols are cut at the
/// longest prefix that is an operator, everything else up to a special
/// symbol or whitespace is an identifier or keyword.
fn lex(s: &str) -> Vec<(Tok, String)> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    loop {
        while i < b.len() && is_ws(b[i]) {
            i += 1;
        }
        if i >= b.len() {
            out.push((Tok::End, String::new()));
            return out;
        }
        let start = i;
        if is_special(b[i]) {
            let mut best: Option<(Tok, usize)> = None;
            while i < b.len() && is_special(b[i]) {
                match keyword(&s[start..=i]) {
                    Some(t) => best = Some((t, i + 1)),
                    None if best.is_some() => break,
                    None => {}
                }
                i += 1;
            }
            // Every single special symbol is itself a token, so `best` is set.
            let (t, end) = best.unwrap_or((Tok::Ident, i));
            i = end;
            out.push((t, s[start..end].to_string()));
        } else {
            while i < b.len() && !is_special(b[i]) && !is_ws(b[i]) {
                i += 1;
            }
            let lit = &s[start..i];
            out.push((keyword(lit).unwrap_or(Tok::Ident), lit.to_string()));
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    KeyAndOperator,
    Values,
}

struct Parser {
    tokens: Vec<(Tok, String)>,
    pos: usize,
}

impl Parser {
    fn lookahead(&self, ctx: Ctx) -> (Tok, String) {
        let (t, l) = self.tokens[self.pos.min(self.tokens.len() - 1)].clone();
        (Self::in_ctx(t, ctx), l)
    }

    fn consume(&mut self, ctx: Ctx) -> (Tok, String) {
        let r = self.lookahead(ctx);
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        r
    }

    /// `in` and `notin` are plain values where values are expected.
    fn in_ctx(t: Tok, ctx: Ctx) -> Tok {
        match (ctx, t) {
            (Ctx::Values, Tok::In | Tok::NotIn) => Tok::Ident,
            _ => t,
        }
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut reqs = Vec::new();
        loop {
            let (t, lit) = self.lookahead(Ctx::Values);
            match t {
                Tok::Ident | Tok::Bang => {
                    let r = self
                        .requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    reqs.push(r);
                    let (t, l) = self.consume(Ctx::Values);
                    match t {
                        Tok::End => return Ok(reqs),
                        Tok::Comma => {
                            let (t2, l2) = self.lookahead(Ctx::Values);
                            if t2 != Tok::Ident && t2 != Tok::Bang {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                    }
                }
                Tok::End => return Ok(reqs),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let (mut t, mut key) = self.consume(Ctx::Values);
        let negated = t == Tok::Bang;
        if negated {
            (t, key) = self.consume(Ctx::Values);
        }
        if t != Tok::Ident {
            return Err(format!("found '{key}', expected: identifier"));
        }
        // The real parser validates the key with a nil field path, hence `<nil>`.
        let errs = label_key_errors(&key);
        if !errs.is_empty() {
            return Err(format!(
                "<nil>: Invalid value: {}: {}",
                quote(&key),
                errs.join("; ")
            ));
        }
        let (next, _) = self.lookahead(Ctx::Values);
        if negated || next == Tok::End || next == Tok::Comma {
            let op = if negated {
                Operator::DoesNotExist
            } else {
                Operator::Exists
            };
            return Ok(Requirement {
                key,
                op,
                values: Vec::new(),
            });
        }
        let (t, lit) = self.consume(Ctx::KeyAndOperator);
        let (op, set_based) = match t {
            Tok::In => (Operator::In, true),
            Tok::NotIn => (Operator::NotIn, true),
            Tok::Equals | Tok::DoubleEquals => (Operator::In, false),
            Tok::NotEquals => (Operator::NotIn, false),
            Tok::Greater => (Operator::GreaterThan, false),
            Tok::Less => (Operator::LessThan, false),
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        };
        let mut values = if set_based {
            self.values()?
        } else {
            self.exact_value()?
        };
        values.sort();
        values.dedup();
        let mut errs = Vec::new();
        if matches!(op, Operator::GreaterThan | Operator::LessThan) {
            for (i, v) in values.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errs.push(format!(
                        "values[{i}]: Invalid value: {}: for 'Gt', 'Lt' operators, the value must be an integer",
                        quote(v)
                    ));
                }
            }
        }
        for (i, v) in values.iter().enumerate() {
            let e = label_value_errors(v);
            if !e.is_empty() {
                errs.push(format!(
                    "values[{i}][{key}]: Invalid value: {}: {}",
                    quote(v),
                    e.join("; ")
                ));
            }
        }
        if !errs.is_empty() {
            return Err(aggregate(errs));
        }
        Ok(Requirement { key, op, values })
    }

    fn values(&mut self) -> Result<Vec<String>, String> {
        let (t, lit) = self.consume(Ctx::Values);
        if t != Tok::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (t, lit) = self.lookahead(Ctx::Values);
        match t {
            Tok::Ident | Tok::Comma => {
                let s = self.identifiers()?;
                let (t, _) = self.consume(Ctx::Values);
                if t != Tok::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(s)
            }
            Tok::ClosedPar => {
                self.consume(Ctx::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn identifiers(&mut self) -> Result<Vec<String>, String> {
        let mut s: Vec<String> = Vec::new();
        loop {
            let (t, lit) = self.consume(Ctx::Values);
            match t {
                Tok::Ident => {
                    s.push(lit);
                    let (t2, l2) = self.lookahead(Ctx::Values);
                    match t2 {
                        Tok::Comma => continue,
                        Tok::ClosedPar => return Ok(s),
                        _ => return Err(format!("found '{l2}', expected: ',' or ')'")),
                    }
                }
                Tok::Comma => {
                    if s.is_empty() {
                        s.push(String::new());
                    }
                    let (t2, _) = self.lookahead(Ctx::Values);
                    if t2 == Tok::ClosedPar {
                        s.push(String::new());
                        return Ok(s);
                    }
                    if t2 == Tok::Comma {
                        s.push(String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn exact_value(&mut self) -> Result<Vec<String>, String> {
        let (t, _) = self.lookahead(Ctx::Values);
        if t == Tok::End || t == Tok::Comma {
            return Ok(vec![String::new()]);
        }
        let (t, lit) = self.consume(Ctx::Values);
        if t == Tok::Ident {
            Ok(vec![lit])
        } else {
            Err(format!("found '{lit}', expected: identifier"))
        }
    }
}

/// Joins several errors like apimachinery's aggregate (deduplicated, bracketed).
fn aggregate(mut errs: Vec<String>) -> String {
    let mut seen = std::collections::HashSet::new();
    errs.retain(|e| seen.insert(e.clone()));
    if errs.len() == 1 {
        errs.remove(0)
    } else {
        format!("[{}]", errs.join(", "))
    }
}

/// A Go `%q` rendering of a string, as field errors print bad values.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if !go_printable(c) && (c as u32) <= 0xffff => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if !go_printable(c) => out.push_str(&format!("\\U{:08x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `unicode.IsPrint` for the characters that matter in quoted
/// values: not a control (C0, DEL, C1), format character (`Cf`: soft
/// hyphen, bidi and zero-width controls, tags, …), separator other than
/// the ASCII space, private-use character or noncharacter. (Unassigned
/// code points, which Go also escapes, are not told apart.)
fn go_printable(c: char) -> bool {
    let u = c as u32;
    !(c.is_control()
        || matches!(
            u,
            0xA0 | 0xAD
                | 0x600..=0x605
                | 0x61C
                | 0x6DD
                | 0x70F
                | 0x890..=0x891
                | 0x8E2
                | 0x1680
                | 0x180E
                | 0x2000..=0x200F
                | 0x2028..=0x202F
                | 0x205F..=0x2064
                | 0x2066..=0x206F
                | 0x3000
                | 0xE000..=0xF8FF
                | 0xFDD0..=0xFDEF
                | 0xFEFF
                | 0xFFF9..=0xFFFB
                | 0x110BD
                | 0x110CD
                | 0x13430..=0x1343F
                | 0x1BCA0..=0x1BCA3
                | 0x1D173..=0x1D17A
                | 0xE0001
                | 0xE0020..=0xE007F
                | 0xF0000..=0x10FFFF
        )
        || u & 0xFFFE == 0xFFFE)
}

const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

fn is_label_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// Whether `s` is a lowercase RFC 1123 subdomain (without the length check).
pub(crate) fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(is_dns1123_label)
}

/// Whether `s` is a lowercase RFC 1123 label (without the length check).
pub(crate) fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// The real server's complaints about a DNS-1123 subdomain (`IsDNS1123Subdomain`).
pub(crate) fn dns1123_subdomain_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push("must be no more than 253 bytes".to_string());
    }
    if !is_dns1123_subdomain(s) {
        errs.push(format!(
            "{DNS1123_SUBDOMAIN_MSG} (e.g. 'example.com', regex used for validation is '{DNS1123_SUBDOMAIN_FMT}')"
        ));
    }
    errs
}

/// The real server's complaints about a label key (`IsLabelKey`/`IsQualifiedName`).
pub fn label_key_errors(key: &str) -> Vec<String> {
    let regex_err = format!(
        "{LABEL_KEY_MSG} (e.g. 'MyName' or 'my.name' or '123-abc', regex used for validation is '{LABEL_KEY_FMT}')"
    );
    let parts: Vec<&str> = key.split('/').collect();
    let mut errs = Vec::new();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    dns1123_subdomain_errors(prefix)
                        .into_iter()
                        .map(|e| format!("prefix part {e}")),
                );
            }
            *name
        }
        _ => {
            return vec![format!(
                "a valid label key {regex_err} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 bytes".to_string());
    }
    if !is_label_name(name) {
        errs.push(format!("name part {regex_err}"));
    }
    errs
}

/// The real server's complaints about a label value (`IsValidLabelValue`).
pub fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 bytes".to_string());
    }
    if !value.is_empty() && !is_label_name(value) {
        errs.push(format!(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue' or 'my_value' or '12345', regex used for validation is '({LABEL_KEY_FMT})?')"
        ));
    }
    errs
}

/// One term of a field selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldTerm {
    /// `metadata.name` or `metadata.namespace`.
    pub field: String,
    /// `false` for `=`/`==`, `true` for `!=`.
    pub negated: bool,
    pub value: String,
}

/// A parsed `fieldSelector` query (`metadata.name`, `metadata.namespace`; `=`, `==`, `!=`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector {
    /// Sorted by their source text, as the real parser does; ANDed.
    pub terms: Vec<FieldTerm>,
}

/// The field labels every custom resource can be selected by.
const SUPPORTED_FIELDS: [&str; 2] = ["metadata.name", "metadata.namespace"];

impl FieldSelector {
    /// Parses the query string form; unsupported field labels are an error
    /// (`field label not supported: spec.x`) for a 400 BadRequest.
    pub fn parse(s: &str) -> Result<Self, String> {
        Self::parse_with(s, &[])
    }

    /// [`FieldSelector::parse`] for a resource that also supports `extra`
    /// field labels (Events: `crate::events::FIELDS`).
    pub fn parse_with(s: &str, extra: &[&str]) -> Result<Self, String> {
        let mut parts = split_terms(s);
        parts.sort();
        let mut terms = Vec::new();
        for part in parts.into_iter().filter(|p| !p.is_empty()) {
            let Some((lhs, op, rhs)) = split_term(part) else {
                return Err(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                ));
            };
            let value = unescape_value(rhs)?;
            if !SUPPORTED_FIELDS.contains(&lhs) && !extra.contains(&lhs) {
                return Err(format!("field label not supported: {lhs}"));
            }
            terms.push(FieldTerm {
                field: lhs.to_string(),
                negated: op == "!=",
                value,
            });
        }
        Ok(FieldSelector { terms })
    }

    /// Whether a whole object satisfies every requirement.
    pub fn matches(&self, obj: &Value) -> bool {
        self.terms.iter().all(|t| {
            // A dotted path into the object; absent is empty.
            let have = t
                .field
                .split('.')
                .try_fold(obj, |v, k| v.get(k))
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                })
                .unwrap_or_default();
            (have == t.value) != t.negated
        })
    }

    /// `Some(name)` when the selector is exactly `metadata.name=NAME` (RBAC
    /// lets resourceNames grant list/watch only to such requests).
    ///
    /// Like the real server's request-info resolver (`RequiresExactMatch`),
    /// any `metadata.name=NAME` term counts, even next to other terms (they
    /// only narrow the result further), and a NAME that is not a valid path
    /// segment (`.`, `..`, containing `/` or `%`) does not.
    pub fn exact_name(&self) -> Option<&str> {
        let t = self
            .terms
            .iter()
            .find(|t| t.field == "metadata.name" && !t.negated)?;
        let n = t.value.as_str();
        let valid = n != "." && n != ".." && !n.contains('/') && !n.contains('%');
        valid.then_some(n)
    }
}

/// Splits on commas not preceded by a backslash.
fn split_terms(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in s.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&s[start..i]);
            start = i + 1;
        }
    }
    terms.push(&s[start..]);
    terms
}

fn split_term(term: &str) -> Option<(&str, &str, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for op in ["!=", "==", "="] {
            if let Some(rhs) = rest.strip_prefix(op) {
                return Some((&term[..i], op, rhs));
            }
        }
    }
    None
}

fn unescape_value(s: &str) -> Result<String, String> {
    if !s.contains(['\\', ',', '=']) {
        return Ok(s.to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            match c {
                '\\' | ',' | '=' => out.push(c),
                _ => {
                    return Err(format!(
                        "invalid field selector: invalid escape sequence: \\{c}"
                    ));
                }
            }
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            // Go prints the rune with %v, i.e. as its number.
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                ));
            }
            _ => out.push(c),
        }
    }
    if in_slash {
        return Err("invalid field selector: invalid escape sequence: \\".to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn sel(s: &str) -> LabelSelector {
        LabelSelector::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn label_selector_matching_table() {
        let l = labels(json!({"app": "web", "tier": "frontend", "env": "prod", "n": "5"}));
        let cases: &[(&str, bool)] = &[
            ("", true),
            ("app=web", true),
            ("app==web", true),
            ("app=db", false),
            ("app!=db", true),
            ("app!=web", false),
            ("missing!=x", true),
            ("app in (web,db)", true),
            ("app in (db)", false),
            ("app notin (db,cache)", true),
            ("app notin (web)", false),
            ("missing notin (x)", true),
            ("missing in (x)", false),
            ("app", true),
            ("missing", false),
            ("!missing", true),
            ("!app", false),
            ("app=web,tier=frontend", true),
            ("app=web,tier=backend", false),
            ("  app = web ,  tier in ( frontend , backend ) ", true),
            ("app=web,!missing,env", true),
            ("n>3", true),
            ("n>5", false),
            ("n<10", true),
            ("app>3", false),
            ("missing=", false),
            ("x in (in,notin)", false),
        ];
        for (s, want) in cases {
            assert_eq!(sel(s).matches(Some(&l)), *want, "selector {s:?}");
        }
    }

    #[test]
    fn absent_labels_are_empty() {
        assert!(sel("!a").matches(None));
        assert!(sel("a!=b").matches(None));
        assert!(!sel("a").matches(None));
        assert!(!sel("a=b").matches(None));
        assert!(sel("").matches(None));
    }

    #[test]
    fn empty_value_matches_empty_label() {
        let l = labels(json!({"a": ""}));
        assert!(sel("a=").matches(Some(&l)));
        assert!(sel("a in ()").matches(Some(&l)));
        assert!(sel("a in (,x)").matches(Some(&l)));
        assert!(!sel("a notin ()").matches(Some(&l)));
    }

    #[test]
    fn parsed_requirements_are_sorted_sets() {
        let s = sel("z in (b,a,b),a=1");
        assert_eq!(s.requirements[0].key, "a");
        assert_eq!(s.requirements[1].values, vec!["a", "b"]);
        assert_eq!(s.requirements[1].op, Operator::In);
        let s = sel("in in (in)");
        assert_eq!(s.requirements[0].key, "in");
        assert_eq!(s.requirements[0].values, vec!["in"]);
        let s = sel("example.com/app=x");
        assert_eq!(s.requirements[0].key, "example.com/app");
    }

    #[test]
    fn label_selector_errors_read_like_the_real_server() {
        let regex = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName' or 'my.name' or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
        let value_regex = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue' or 'my_value' or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
        let cases: Vec<(&str, String)> = vec![
            (
                "a b",
                "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt".into(),
            ),
            ("=a", "found '=', expected: !, identifier, or 'end of string'".into()),
            ("a=b,", "found '', expected: identifier after ','".into()),
            ("a=b,,c", "found ',', expected: identifier after ','".into()),
            ("a=b c", "found 'c', expected: ',' or 'end of string'".into()),
            (
                "a in b",
                "unable to parse requirement: found 'b' expected: '('".into(),
            ),
            (
                "a in (b",
                "unable to parse requirement: found '', expected: ',' or ')'".into(),
            ),
            (
                "a in (=)",
                "unable to parse requirement: found '=', expected: ',', ')' or identifier".into(),
            ),
            (
                "a in (b,=)",
                "unable to parse requirement: found '=', expected: ',', or identifier".into(),
            ),
            (
                "a==(",
                "unable to parse requirement: found '(', expected: identifier".into(),
            ),
            (
                "!=a",
                "found '!=', expected: !, identifier, or 'end of string'".into(),
            ),
            (
                "!(a",
                "unable to parse requirement: found '(', expected: identifier".into(),
            ),
            (
                "-a=b",
                format!("unable to parse requirement: <nil>: Invalid value: \"-a\": name part {regex}"),
            ),
            (
                "a/b/c",
                format!(
                    "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a valid label key {regex} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
                ),
            ),
            (
                "/a",
                "unable to parse requirement: <nil>: Invalid value: \"/a\": prefix part must be non-empty".into(),
            ),
            (
                "Ex.com/a",
                "unable to parse requirement: <nil>: Invalid value: \"Ex.com/a\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".into(),
            ),
            (
                "ex.com/",
                format!(
                    "unable to parse requirement: <nil>: Invalid value: \"ex.com/\": name part must be non-empty; name part {regex}"
                ),
            ),
            (
                "a=-b",
                format!("unable to parse requirement: values[0][a]: Invalid value: \"-b\": {value_regex}"),
            ),
            (
                "a in (x,-b,-c)",
                format!(
                    "unable to parse requirement: [values[0][a]: Invalid value: \"-b\": {value_regex}, values[1][a]: Invalid value: \"-c\": {value_regex}]"
                ),
            ),
            (
                "a>b",
                "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer".into(),
            ),
        ];
        for (s, want) in cases {
            assert_eq!(LabelSelector::parse(s).unwrap_err(), want, "selector {s:?}");
        }
    }

    #[test]
    fn label_keys_and_values_may_be_long_only_up_to_63() {
        let key = "a".repeat(64);
        let err = LabelSelector::parse(&format!("{key}=x")).unwrap_err();
        assert_eq!(
            err,
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"{key}\": name part must be no more than 63 bytes"
            )
        );
        let long = "v".repeat(64);
        let err = LabelSelector::parse(&format!("a={long}")).unwrap_err();
        assert_eq!(
            err,
            format!(
                "unable to parse requirement: values[0][a]: Invalid value: \"{long}\": must be no more than 63 bytes"
            )
        );
    }

    #[test]
    fn field_selector_matching_table() {
        let obj = json!({"metadata": {"name": "a", "namespace": "ns1"}});
        let cluster = json!({"metadata": {"name": "a"}});
        let cases: &[(&str, &Value, bool)] = &[
            ("", &obj, true),
            ("metadata.name=a", &obj, true),
            ("metadata.name==a", &obj, true),
            ("metadata.name=b", &obj, false),
            ("metadata.name!=b", &obj, true),
            ("metadata.name!=a", &obj, false),
            ("metadata.namespace=ns1", &obj, true),
            ("metadata.namespace=ns1,metadata.name=a", &obj, true),
            ("metadata.namespace=ns2,metadata.name=a", &obj, false),
            ("metadata.namespace=", &cluster, true),
            ("metadata.namespace!=ns1", &cluster, true),
            ("metadata.name=a,", &obj, true),
        ];
        for (s, o, want) in cases {
            let f = FieldSelector::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(f.matches(o), *want, "selector {s:?}");
        }
    }

    #[test]
    fn field_selector_unescapes_values() {
        let f = FieldSelector::parse(r"metadata.name=a\,b\=c\\d").unwrap();
        assert_eq!(f.terms[0].value, r"a,b=c\d");
        assert!(f.matches(&json!({"metadata": {"name": r"a,b=c\d"}})));
    }

    #[test]
    fn field_selector_errors_read_like_the_real_server() {
        let cases = [
            ("spec.x=1", "field label not supported: spec.x"),
            (
                "metadata.name=a,status.phase=x",
                "field label not supported: status.phase",
            ),
            (
                "metadata.name",
                "invalid selector: 'metadata.name'; can't understand 'metadata.name'",
            ),
            (
                r"metadata.name=a\x",
                r"invalid field selector: invalid escape sequence: \x",
            ),
            (
                r"metadata.name=a\",
                r"invalid field selector: invalid escape sequence: \",
            ),
            (
                "metadata.name=a=b",
                "invalid field selector: unescaped character in value: 61",
            ),
        ];
        for (s, want) in cases {
            assert_eq!(FieldSelector::parse(s).unwrap_err(), want, "selector {s:?}");
        }
    }

    #[test]
    fn exact_name_follows_requires_exact_match() {
        let cases = [
            ("metadata.name=site-a", Some("site-a")),
            ("metadata.name==site-a", Some("site-a")),
            ("metadata.name!=site-a", None),
            ("metadata.namespace=x", None),
            ("", None),
            ("metadata.namespace=x,metadata.name=site-a", Some("site-a")),
            ("metadata.name=..", None),
            ("metadata.name=a%2Fb", None),
        ];
        for (s, want) in cases {
            assert_eq!(FieldSelector::parse(s).unwrap().exact_name(), want, "{s:?}");
        }
    }

    #[test]
    fn go_quoting() {
        assert_eq!(quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
    }
}
