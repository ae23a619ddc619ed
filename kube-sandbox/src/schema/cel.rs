//! A compact CEL interpreter for CRD `x-kubernetes-validations`.
//!
//! The `cel` crates on crates.io pull in an ANTLR runtime and a large
//! dependency tree, too heavy for the sandbox's 2-core cold build, so this
//! module implements the subset CRD rules use: literals (int, uint, double,
//! string incl. raw and escapes, bool, null, lists, maps), `self`/`oldSelf`,
//! field selection and indexing, `has()`, `! - * / % + < <= > >= == != in
//! && || ?:` with CEL's error-absorbing logic, `size`, string functions
//! (`startsWith`, `endsWith`, `contains`, `matches`, `lowerAscii`,
//! `upperAscii`, `trim`, `indexOf`, `lastIndexOf`, `substring`, `replace`,
//! `split`, `join`), conversions (`int`, `uint`, `double`, `string`,
//! `bool`), list helpers (`sum`, `min`, `max`, `isSorted`, `indexOf`) and
//! the macros `all`, `exists`, `exists_one`, `map` (2- and 3-argument) and
//! `filter`. Integers and doubles compare across types, as the real
//! server's CEL environment allows. Runtime errors read like cel-go's
//! (`no such key: x`, `no such overload`, `division by zero`).
//!
//! Rule evaluation over a schema ([`RuleContext`]) mirrors the real
//! validator: rules run at every node carrying them, `oldSelf` rules only
//! when the old value correlates (object properties, keyed or set lists,
//! granular maps), failures become causes at the node's path (plus the
//! rule's `fieldPath`), worded by `message`, `messageExpression` or
//! `failed rule: RULE`, with the value omitted for objects and arrays.

use super::{FieldPath, additional, go_value, prop};
use crate::errors::Cause;
use serde_json::Value;
use std::collections::BTreeMap;

/// A parsed CEL expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Program {
    expr: Expr,
    uses_old_self: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Lit(Val),
    Ident(String),
    Select(Box<Expr>, String),
    Has(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
    Method(Box<Expr>, String, Vec<Expr>),
    Unary(char, Box<Expr>),
    Binary(String, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    List(Vec<Expr>),
    MapLit(Vec<(Expr, Expr)>),
    /// `target.macro(var, body)` and `target.map(var, filter, body)`.
    Macro(String, Box<Expr>, String, Vec<Expr>),
}

/// A CEL runtime value.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(String),
    List(Vec<Val>),
    Map(Vec<(Val, Val)>),
}

impl Val {
    fn from_json(v: &Value) -> Val {
        match v {
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Val::Int(i),
                None => match n.as_u64() {
                    Some(u) => Val::Uint(u),
                    None => Val::Double(n.as_f64().unwrap_or_default()),
                },
            },
            Value::String(s) => Val::Str(s.clone()),
            Value::Array(a) => Val::List(a.iter().map(Val::from_json).collect()),
            Value::Object(m) => Val::Map(
                m.iter()
                    .map(|(k, v)| (Val::Str(k.clone()), Val::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// Converts with the schema's types: `number` fields are doubles even
    /// when written as integers, as in the real server's typed CEL values.
    fn from_typed(v: &Value, s: Option<&Value>) -> Val {
        let Some(s) = s else {
            return Val::from_json(v);
        };
        match v {
            Value::Number(n) if s.get("type").and_then(Value::as_str) == Some("number") => {
                Val::Double(n.as_f64().unwrap_or_default())
            }
            Value::Array(a) => Val::List(
                a.iter()
                    .map(|x| Val::from_typed(x, s.get("items")))
                    .collect(),
            ),
            Value::Object(m) => Val::Map(
                m.iter()
                    .map(|(k, x)| {
                        let sub = prop(s, k).or_else(|| additional(s));
                        (Val::Str(k.clone()), Val::from_typed(x, sub))
                    })
                    .collect(),
            ),
            other => Val::from_json(other),
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Val::Null => "null_type",
            Val::Bool(_) => "bool",
            Val::Int(_) => "int",
            Val::Uint(_) => "uint",
            Val::Double(_) => "double",
            Val::Str(_) => "string",
            Val::List(_) => "list",
            Val::Map(_) => "map",
        }
    }

    fn num(&self) -> Option<f64> {
        match self {
            Val::Int(i) => Some(*i as f64),
            Val::Uint(u) => Some(*u as f64),
            Val::Double(d) => Some(*d),
            _ => None,
        }
    }

    fn display(&self) -> String {
        match self {
            Val::Null => "null".into(),
            Val::Bool(b) => b.to_string(),
            Val::Int(i) => i.to_string(),
            Val::Uint(u) => u.to_string(),
            Val::Double(d) => super::go_float(*d),
            Val::Str(s) => s.clone(),
            Val::List(l) => format!(
                "[{}]",
                l.iter().map(Val::display).collect::<Vec<_>>().join(", ")
            ),
            Val::Map(m) => format!(
                "{{{}}}",
                m.iter()
                    .map(|(k, v)| format!("{}: {}", k.display(), v.display()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

fn cel_eq(a: &Val, b: &Val) -> bool {
    match (a, b) {
        (Val::List(x), Val::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| cel_eq(p, q))
        }
        (Val::Map(x), Val::Map(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| {
                    y.iter()
                        .find(|(k2, _)| cel_eq(k, k2))
                        .is_some_and(|(_, v2)| cel_eq(v, v2))
                })
        }
        _ => match (a.num(), b.num()) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        },
    }
}

fn no_overload(op: &str, args: &[&Val]) -> String {
    format!(
        "no such overload: {op}({})",
        args.iter()
            .map(|a| a.type_name())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

// ---------------------------------------------------------------------------
// Lexer

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(String),
    Ident(String),
    Op(&'static str),
    End,
}

fn lex(src: &str) -> Result<Vec<(Tok, usize)>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    const OPS: [&str; 25] = [
        "&&", "||", "==", "!=", "<=", ">=", "!", "<", ">", "+", "-", "*", "/", "%", "?", ":", ".",
        ",", "(", ")", "[", "]", "{", "}", "=",
    ];
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            if c == '0' && matches!(chars.get(i + 1), Some('x' | 'X')) {
                i += 2;
                let s = i;
                while i < chars.len() && chars[i].is_ascii_hexdigit() {
                    i += 1;
                }
                let h: String = chars[s..i].iter().collect();
                let v =
                    i64::from_str_radix(&h, 16).map_err(|e| syntax(src, start, &e.to_string()))?;
                if matches!(chars.get(i), Some('u' | 'U')) {
                    i += 1;
                    out.push((Tok::Uint(v as u64), start));
                } else {
                    out.push((Tok::Int(v), start));
                }
                continue;
            }
            let mut is_double = false;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            if i < chars.len()
                && chars[i] == '.'
                && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit())
            {
                is_double = true;
                i += 1;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if i < chars.len() && matches!(chars[i], 'e' | 'E') {
                is_double = true;
                i += 1;
                if i < chars.len() && matches!(chars[i], '+' | '-') {
                    i += 1;
                }
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let text: String = chars[start..i].iter().collect();
            if is_double {
                let d = text
                    .parse::<f64>()
                    .map_err(|e| syntax(src, start, &e.to_string()))?;
                out.push((Tok::Double(d), start));
            } else if matches!(chars.get(i), Some('u' | 'U')) {
                i += 1;
                let u = text
                    .parse::<u64>()
                    .map_err(|e| syntax(src, start, &e.to_string()))?;
                out.push((Tok::Uint(u), start));
            } else {
                let v = text
                    .parse::<i64>()
                    .map_err(|e| syntax(src, start, &e.to_string()))?;
                out.push((Tok::Int(v), start));
            }
            continue;
        }
        let raw = matches!(c, 'r' | 'R') && matches!(chars.get(i + 1), Some('"' | '\''));
        if c == '"' || c == '\'' || raw {
            if raw {
                i += 1;
            }
            let q = chars[i];
            let triple = chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q);
            i += if triple { 3 } else { 1 };
            let mut s = String::new();
            loop {
                if i >= chars.len() {
                    return Err(syntax(src, start, "token recognition error"));
                }
                if triple {
                    if chars[i] == q && chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q)
                    {
                        i += 3;
                        break;
                    }
                } else if chars[i] == q {
                    i += 1;
                    break;
                }
                if chars[i] == '\\' && !raw {
                    i += 1;
                    let e = *chars
                        .get(i)
                        .ok_or_else(|| syntax(src, start, "token recognition error"))?;
                    s.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        '\\' => '\\',
                        '"' => '"',
                        '\'' => '\'',
                        '`' => '`',
                        '?' => '?',
                        'a' => '\u{7}',
                        'b' => '\u{8}',
                        'f' => '\u{c}',
                        'v' => '\u{b}',
                        'u' | 'x' => {
                            let n = if e == 'u' { 4 } else { 2 };
                            let h: String = chars
                                .get(i + 1..i + 1 + n)
                                .unwrap_or_default()
                                .iter()
                                .collect();
                            i += n;
                            u32::from_str_radix(&h, 16)
                                .ok()
                                .and_then(char::from_u32)
                                .ok_or_else(|| syntax(src, start, "invalid escape"))?
                        }
                        _ => return Err(syntax(src, start, "invalid escape")),
                    });
                    i += 1;
                    continue;
                }
                s.push(chars[i]);
                i += 1;
            }
            out.push((Tok::Str(s), start));
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((Tok::Ident(chars[start..i].iter().collect()), start));
            continue;
        }
        let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
        match OPS.iter().find(|op| rest.starts_with(**op)) {
            Some(op) if *op != "=" => {
                i += op.chars().count();
                out.push((Tok::Op(op), start));
            }
            _ => {
                return Err(syntax(
                    src,
                    start,
                    &format!("token recognition error at: '{c}'"),
                ));
            }
        }
    }
    out.push((Tok::End, chars.len()));
    Ok(out)
}

fn syntax(src: &str, pos: usize, msg: &str) -> String {
    let before: String = src.chars().take(pos).collect();
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count());
    format!("ERROR: <input>:{line}:{}: Syntax error: {msg}", col + 1)
}

// ---------------------------------------------------------------------------
// Parser (precedence climbing, CEL grammar)

struct Parser<'a> {
    src: &'a str,
    toks: Vec<(Tok, usize)>,
    pos: usize,
}

const MACROS: [&str; 5] = ["all", "exists", "exists_one", "map", "filter"];

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }
    fn next(&mut self) -> Tok {
        let t = self.toks[self.pos].0.clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }
    fn err<T>(&self, msg: &str) -> Result<T, String> {
        Err(syntax(self.src, self.toks[self.pos].1, msg))
    }
    fn eat(&mut self, op: &str) -> bool {
        if *self.peek() == Tok::Op(leak(op)) {
            self.next();
            true
        } else {
            false
        }
    }
    fn expect(&mut self, op: &str) -> Result<(), String> {
        if self.eat(op) {
            Ok(())
        } else {
            let found = describe(self.peek());
            self.err(&format!("mismatched input {found} expecting '{op}'"))
        }
    }

    fn expr(&mut self) -> Result<Expr, String> {
        let c = self.or()?;
        if self.eat("?") {
            let a = self.or()?;
            self.expect(":")?;
            let b = self.expr()?;
            return Ok(Expr::Cond(Box::new(c), Box::new(a), Box::new(b)));
        }
        Ok(c)
    }
    fn or(&mut self) -> Result<Expr, String> {
        let mut l = self.and()?;
        while self.eat("||") {
            let r = self.and()?;
            l = Expr::Binary("||".into(), Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn and(&mut self) -> Result<Expr, String> {
        let mut l = self.rel()?;
        while self.eat("&&") {
            let r = self.rel()?;
            l = Expr::Binary("&&".into(), Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn rel(&mut self) -> Result<Expr, String> {
        let mut l = self.add()?;
        loop {
            let op = match self.peek() {
                Tok::Op(o @ ("<" | "<=" | ">" | ">=" | "==" | "!=")) => o.to_string(),
                Tok::Ident(i) if i == "in" => "in".to_string(),
                _ => return Ok(l),
            };
            self.next();
            let r = self.add()?;
            l = Expr::Binary(op, Box::new(l), Box::new(r));
        }
    }
    fn add(&mut self) -> Result<Expr, String> {
        let mut l = self.mul()?;
        loop {
            let op = match self.peek() {
                Tok::Op(o @ ("+" | "-")) => o.to_string(),
                _ => return Ok(l),
            };
            self.next();
            let r = self.mul()?;
            l = Expr::Binary(op, Box::new(l), Box::new(r));
        }
    }
    fn mul(&mut self) -> Result<Expr, String> {
        let mut l = self.unary()?;
        loop {
            let op = match self.peek() {
                Tok::Op(o @ ("*" | "/" | "%")) => o.to_string(),
                _ => return Ok(l),
            };
            self.next();
            let r = self.unary()?;
            l = Expr::Binary(op, Box::new(l), Box::new(r));
        }
    }
    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat("!") {
            return Ok(Expr::Unary('!', Box::new(self.unary()?)));
        }
        if self.eat("-") {
            return Ok(match self.unary()? {
                Expr::Lit(Val::Int(i)) => Expr::Lit(Val::Int(-i)),
                Expr::Lit(Val::Double(d)) => Expr::Lit(Val::Double(-d)),
                e => Expr::Unary('-', Box::new(e)),
            });
        }
        self.postfix()
    }
    fn postfix(&mut self) -> Result<Expr, String> {
        let mut e = self.primary()?;
        loop {
            if self.eat(".") {
                let Tok::Ident(name) = self.next() else {
                    return self.err("mismatched input expecting IDENTIFIER");
                };
                if self.eat("(") {
                    let args = self.args(")")?;
                    if MACROS.contains(&name.as_str())
                        && (args.len() == 2 || (name == "map" && args.len() == 3))
                    {
                        let Expr::Ident(var) = &args[0] else {
                            return self.err(&format!("argument must be a simple name in {name}"));
                        };
                        e = Expr::Macro(name, Box::new(e), var.clone(), args[1..].to_vec());
                    } else {
                        e = Expr::Method(Box::new(e), name, args);
                    }
                } else {
                    e = Expr::Select(Box::new(e), name);
                }
            } else if self.eat("[") {
                let i = self.expr()?;
                self.expect("]")?;
                e = Expr::Index(Box::new(e), Box::new(i));
            } else {
                return Ok(e);
            }
        }
    }
    fn args(&mut self, close: &str) -> Result<Vec<Expr>, String> {
        let mut out = Vec::new();
        if self.eat(close) {
            return Ok(out);
        }
        loop {
            out.push(self.expr()?);
            if self.eat(close) {
                return Ok(out);
            }
            self.expect(",")?;
            if self.eat(close) {
                return Ok(out);
            }
        }
    }
    fn primary(&mut self) -> Result<Expr, String> {
        let at = self.pos;
        match self.next() {
            Tok::Int(i) => Ok(Expr::Lit(Val::Int(i))),
            Tok::Uint(u) => Ok(Expr::Lit(Val::Uint(u))),
            Tok::Double(d) => Ok(Expr::Lit(Val::Double(d))),
            Tok::Str(s) => Ok(Expr::Lit(Val::Str(s))),
            Tok::Ident(id) => match id.as_str() {
                "true" => Ok(Expr::Lit(Val::Bool(true))),
                "false" => Ok(Expr::Lit(Val::Bool(false))),
                "null" => Ok(Expr::Lit(Val::Null)),
                _ if self.eat("(") => {
                    let args = self.args(")")?;
                    if id == "has" {
                        return match args.as_slice() {
                            [Expr::Select(t, f)] => Ok(Expr::Has(t.clone(), f.clone())),
                            _ => self.err("invalid argument to has() macro"),
                        };
                    }
                    Ok(Expr::Call(id, args))
                }
                _ => Ok(Expr::Ident(id)),
            },
            Tok::Op("(") => {
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Op("[") => Ok(Expr::List(self.args("]")?)),
            Tok::Op("{") => {
                let mut entries = Vec::new();
                if !self.eat("}") {
                    loop {
                        let k = self.expr()?;
                        self.expect(":")?;
                        let v = self.expr()?;
                        entries.push((k, v));
                        if self.eat("}") {
                            break;
                        }
                        self.expect(",")?;
                        if self.eat("}") {
                            break;
                        }
                    }
                }
                Ok(Expr::MapLit(entries))
            }
            t => {
                self.pos = at;
                self.err(&format!(
                    "mismatched input {} expecting <expression>",
                    describe(&t)
                ))
            }
        }
    }
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::End => "'<EOF>'".into(),
        Tok::Op(o) => format!("'{o}'"),
        Tok::Ident(i) => format!("'{i}'"),
        Tok::Str(s) => format!("'{s}'"),
        Tok::Int(i) => format!("'{i}'"),
        Tok::Uint(u) => format!("'{u}u'"),
        Tok::Double(d) => format!("'{d}'"),
    }
}

/// Operators are a closed set of literals; map a borrowed one back to it.
fn leak(op: &str) -> &'static str {
    const ALL: [&str; 25] = [
        "&&", "||", "==", "!=", "<=", ">=", "!", "<", ">", "+", "-", "*", "/", "%", "?", ":", ".",
        ",", "(", ")", "[", "]", "{", "}", "=",
    ];
    ALL.iter().find(|o| **o == op).copied().unwrap_or("")
}

fn mentions_old_self(e: &Expr) -> bool {
    match e {
        Expr::Ident(i) => i == "oldSelf",
        Expr::Lit(_) => false,
        Expr::Select(t, _) | Expr::Has(t, _) | Expr::Unary(_, t) => mentions_old_self(t),
        Expr::Index(a, b) | Expr::Binary(_, a, b) => mentions_old_self(a) || mentions_old_self(b),
        Expr::Cond(a, b, c) => mentions_old_self(a) || mentions_old_self(b) || mentions_old_self(c),
        Expr::Call(_, args) | Expr::List(args) => args.iter().any(mentions_old_self),
        Expr::Method(t, _, args) | Expr::Macro(_, t, _, args) => {
            mentions_old_self(t) || args.iter().any(mentions_old_self)
        }
        Expr::MapLit(es) => es
            .iter()
            .any(|(k, v)| mentions_old_self(k) || mentions_old_self(v)),
    }
}

/// Parses a CEL expression; the error reads like cel-go's compile errors.
pub(crate) fn compile(src: &str) -> Result<Program, String> {
    let toks = lex(src)?;
    let mut p = Parser { src, toks, pos: 0 };
    let expr = p.expr()?;
    if *p.peek() != Tok::End {
        let found = describe(p.peek());
        return p.err(&format!("extraneous input {found} expecting <EOF>"));
    }
    let uses_old_self = mentions_old_self(&expr);
    Ok(Program {
        expr,
        uses_old_self,
    })
}

// ---------------------------------------------------------------------------
// Evaluation

type Env<'a> = Vec<(String, Val)>;

fn lookup<'a>(env: &'a Env<'_>, name: &str) -> Option<&'a Val> {
    env.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v)
}

fn eval(e: &Expr, env: &mut Env<'_>) -> Result<Val, String> {
    Ok(match e {
        Expr::Lit(v) => v.clone(),
        Expr::Ident(name) => lookup(env, name)
            .cloned()
            .ok_or_else(|| format!("undeclared reference to '{name}' (in container '')"))?,
        Expr::Select(t, f) => {
            let t = eval(t, env)?;
            match &t {
                Val::Map(m) => m
                    .iter()
                    .find(|(k, _)| matches!(k, Val::Str(s) if s == f))
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| format!("no such key: {f}"))?,
                other => {
                    return Err(format!(
                        "type '{}' does not support field selection",
                        other.type_name()
                    ));
                }
            }
        }
        Expr::Has(t, f) => {
            let t = eval(t, env)?;
            match &t {
                Val::Map(m) => Val::Bool(m.iter().any(|(k, _)| matches!(k, Val::Str(s) if s == f))),
                other => {
                    return Err(format!(
                        "invalid type for field selection: {}",
                        other.type_name()
                    ));
                }
            }
        }
        Expr::Index(t, i) => {
            let t = eval(t, env)?;
            let i = eval(i, env)?;
            match (&t, &i) {
                (Val::List(l), idx) => {
                    let n = match idx {
                        Val::Int(n) => *n,
                        Val::Uint(u) => *u as i64,
                        Val::Double(d) if d.fract() == 0.0 => *d as i64,
                        _ => return Err(no_overload("_[_]", &[&t, &i])),
                    };
                    if n < 0 || n as usize >= l.len() {
                        return Err(format!("index out of bounds: {n}"));
                    }
                    l[n as usize].clone()
                }
                (Val::Map(m), k) => m
                    .iter()
                    .find(|(mk, _)| cel_eq(mk, k))
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| format!("no such key: {}", k.display()))?,
                _ => return Err(no_overload("_[_]", &[&t, &i])),
            }
        }
        Expr::Unary(op, a) => {
            let v = eval(a, env)?;
            match (op, &v) {
                ('!', Val::Bool(b)) => Val::Bool(!b),
                ('-', Val::Int(i)) => Val::Int(i.checked_neg().ok_or("int overflow")?),
                ('-', Val::Double(d)) => Val::Double(-d),
                ('!', _) => return Err(no_overload("!_", &[&v])),
                _ => return Err(no_overload("-_", &[&v])),
            }
        }
        Expr::Binary(op, a, b) if op == "&&" || op == "||" => {
            let want = op == "||";
            let l = eval(a, env);
            if let Ok(Val::Bool(x)) = l
                && x == want
            {
                return Ok(Val::Bool(want));
            }
            let r = eval(b, env);
            if let Ok(Val::Bool(y)) = r
                && y == want
            {
                return Ok(Val::Bool(want));
            }
            match (l?, r?) {
                (Val::Bool(_), Val::Bool(_)) => Val::Bool(!want),
                (x, y) => return Err(no_overload(if want { "_||_" } else { "_&&_" }, &[&x, &y])),
            }
        }
        Expr::Binary(op, a, b) => {
            let l = eval(a, env)?;
            let r = eval(b, env)?;
            binary(op, l, r)?
        }
        Expr::Cond(c, a, b) => match eval(c, env)? {
            Val::Bool(true) => eval(a, env)?,
            Val::Bool(false) => eval(b, env)?,
            other => return Err(no_overload("_?_:_", &[&other])),
        },
        Expr::List(items) => Val::List(
            items
                .iter()
                .map(|i| eval(i, env))
                .collect::<Result<_, _>>()?,
        ),
        Expr::MapLit(es) => Val::Map(
            es.iter()
                .map(|(k, v)| Ok((eval(k, env)?, eval(v, env)?)))
                .collect::<Result<_, String>>()?,
        ),
        Expr::Call(f, args) => {
            let vals = args
                .iter()
                .map(|a| eval(a, env))
                .collect::<Result<Vec<_>, _>>()?;
            call(f, None, vals)?
        }
        Expr::Method(t, f, args) => {
            let t = eval(t, env)?;
            let vals = args
                .iter()
                .map(|a| eval(a, env))
                .collect::<Result<Vec<_>, _>>()?;
            call(f, Some(t), vals)?
        }
        Expr::Macro(name, t, var, body) => {
            let target = eval(t, env)?;
            let items: Vec<Val> = match &target {
                Val::List(l) => l.clone(),
                Val::Map(m) => m.iter().map(|(k, _)| k.clone()).collect(),
                other => return Err(no_overload(name, &[other])),
            };
            let run = |item: &Val, e: &Expr, env: &mut Env<'_>| {
                env.push((var.clone(), item.clone()));
                let r = eval(e, env);
                env.pop();
                r
            };
            match name.as_str() {
                "all" | "exists" => {
                    let want = name == "exists";
                    let mut err = None;
                    for it in &items {
                        match run(it, &body[0], env) {
                            Ok(Val::Bool(b)) if b == want => return Ok(Val::Bool(want)),
                            Ok(Val::Bool(_)) => {}
                            Ok(other) => err = Some(no_overload(name, &[&other])),
                            Err(e) => err = Some(e),
                        }
                    }
                    if let Some(e) = err {
                        return Err(e);
                    }
                    Val::Bool(!want)
                }
                "exists_one" => {
                    let mut n = 0;
                    for it in &items {
                        match run(it, &body[0], env)? {
                            Val::Bool(true) => n += 1,
                            Val::Bool(false) => {}
                            other => return Err(no_overload(name, &[&other])),
                        }
                    }
                    Val::Bool(n == 1)
                }
                "filter" => {
                    let mut out = Vec::new();
                    for it in &items {
                        match run(it, &body[0], env)? {
                            Val::Bool(true) => out.push(it.clone()),
                            Val::Bool(false) => {}
                            other => return Err(no_overload(name, &[&other])),
                        }
                    }
                    Val::List(out)
                }
                _ => {
                    let mut out = Vec::new();
                    for it in &items {
                        if body.len() == 2 {
                            match run(it, &body[0], env)? {
                                Val::Bool(true) => {}
                                Val::Bool(false) => continue,
                                other => return Err(no_overload(name, &[&other])),
                            }
                        }
                        out.push(run(it, body.last().unwrap_or(&body[0]), env)?);
                    }
                    Val::List(out)
                }
            }
        }
    })
}

fn binary(op: &str, l: Val, r: Val) -> Result<Val, String> {
    let name = match op {
        "==" => return Ok(Val::Bool(cel_eq(&l, &r))),
        "!=" => return Ok(Val::Bool(!cel_eq(&l, &r))),
        "in" => {
            return match &r {
                Val::List(items) => Ok(Val::Bool(items.iter().any(|i| cel_eq(i, &l)))),
                Val::Map(m) => Ok(Val::Bool(m.iter().any(|(k, _)| cel_eq(k, &l)))),
                _ => Err(no_overload("@in", &[&l, &r])),
            };
        }
        "<" | "<=" | ">" | ">=" => {
            let ord = match (&l, &r) {
                (Val::Str(a), Val::Str(b)) => Some(a.cmp(b)),
                (Val::Bool(a), Val::Bool(b)) => Some(a.cmp(b)),
                _ => match (l.num(), r.num()) {
                    (Some(a), Some(b)) => a.partial_cmp(&b),
                    _ => None,
                },
            };
            let name = match op {
                "<" => "_<_",
                "<=" => "_<=_",
                ">" => "_>_",
                _ => "_>=_",
            };
            let Some(ord) = ord else {
                return Err(no_overload(name, &[&l, &r]));
            };
            use std::cmp::Ordering::*;
            return Ok(Val::Bool(match op {
                "<" => ord == Less,
                "<=" => ord != Greater,
                ">" => ord == Greater,
                _ => ord != Less,
            }));
        }
        "+" => "_+_",
        "-" => "_-_",
        "*" => "_*_",
        "/" => "_/_",
        _ => "_%_",
    };
    Ok(match (&l, &r) {
        (Val::Int(a), Val::Int(b)) => {
            let (a, b) = (*a, *b);
            Val::Int(match op {
                "+" => a.checked_add(b).ok_or("integer overflow")?,
                "-" => a.checked_sub(b).ok_or("integer overflow")?,
                "*" => a.checked_mul(b).ok_or("integer overflow")?,
                "/" if b == 0 => return Err("division by zero".into()),
                "%" if b == 0 => return Err("modulus by zero".into()),
                "/" => a.checked_div(b).ok_or("integer overflow")?,
                _ => a.checked_rem(b).ok_or("integer overflow")?,
            })
        }
        (Val::Uint(a), Val::Uint(b)) => {
            let (a, b) = (*a, *b);
            Val::Uint(match op {
                "+" => a.checked_add(b).ok_or("unsigned integer overflow")?,
                "-" => a.checked_sub(b).ok_or("unsigned integer overflow")?,
                "*" => a.checked_mul(b).ok_or("unsigned integer overflow")?,
                "/" if b == 0 => return Err("division by zero".into()),
                "%" if b == 0 => return Err("modulus by zero".into()),
                "/" => a / b,
                _ => a % b,
            })
        }
        (Val::Double(a), Val::Double(b)) if op != "%" => Val::Double(match op {
            "+" => a + b,
            "-" => a - b,
            "*" => a * b,
            _ => a / b,
        }),
        (Val::Str(a), Val::Str(b)) if op == "+" => Val::Str(format!("{a}{b}")),
        (Val::List(a), Val::List(b)) if op == "+" => {
            Val::List(a.iter().chain(b).cloned().collect())
        }
        _ => return Err(no_overload(name, &[&l, &r])),
    })
}

fn str_arg<'a>(f: &str, args: &'a [Val], i: usize, all: &[&Val]) -> Result<&'a str, String> {
    match args.get(i) {
        Some(Val::Str(s)) => Ok(s),
        _ => Err(no_overload(f, all)),
    }
}

fn int_arg(f: &str, args: &[Val], i: usize, all: &[&Val]) -> Result<i64, String> {
    match args.get(i) {
        Some(Val::Int(n)) => Ok(*n),
        _ => Err(no_overload(f, all)),
    }
}

fn call(f: &str, target: Option<Val>, args: Vec<Val>) -> Result<Val, String> {
    let all: Vec<&Val> = target.iter().chain(args.iter()).collect();
    let (recv, rest): (&Val, &[Val]) = match &target {
        Some(t) => (t, &args[..]),
        None => match args.split_first() {
            Some((a, r)) => (a, r),
            None => return Err(format!("no matching overload for '{f}'")),
        },
    };
    let s_recv = match recv {
        Val::Str(s) => Some(s.as_str()),
        _ => None,
    };
    Ok(match (f, s_recv, rest.len()) {
        ("size", _, 0) => Val::Int(match recv {
            Val::Str(s) => s.chars().count() as i64,
            Val::List(l) => l.len() as i64,
            Val::Map(m) => m.len() as i64,
            _ => return Err(no_overload("size", &all)),
        }),
        ("startsWith", Some(s), 1) => Val::Bool(s.starts_with(str_arg(f, rest, 0, &all)?)),
        ("endsWith", Some(s), 1) => Val::Bool(s.ends_with(str_arg(f, rest, 0, &all)?)),
        ("contains", Some(s), 1) => Val::Bool(s.contains(str_arg(f, rest, 0, &all)?)),
        ("matches", Some(s), 1) => {
            let re = super::go_regex(str_arg(f, rest, 0, &all)?)
                .map_err(|e| format!("invalid regex: {e}"))?;
            Val::Bool(re.is_match(s))
        }
        ("lowerAscii", Some(s), 0) => Val::Str(s.to_ascii_lowercase()),
        ("upperAscii", Some(s), 0) => Val::Str(s.to_ascii_uppercase()),
        ("trim", Some(s), 0) => Val::Str(s.trim().to_string()),
        ("indexOf", Some(s), 1) => {
            let needle = str_arg(f, rest, 0, &all)?;
            Val::Int(s.find(needle).map_or(-1, |b| s[..b].chars().count() as i64))
        }
        ("lastIndexOf", Some(s), 1) => {
            let needle = str_arg(f, rest, 0, &all)?;
            Val::Int(
                s.rfind(needle)
                    .map_or(-1, |b| s[..b].chars().count() as i64),
            )
        }
        ("substring", Some(s), 1 | 2) => {
            let chars: Vec<char> = s.chars().collect();
            let start = int_arg(f, rest, 0, &all)?;
            let end = if rest.len() == 2 {
                int_arg(f, rest, 1, &all)?
            } else {
                chars.len() as i64
            };
            if start < 0 || end < start || end as usize > chars.len() {
                return Err(format!(
                    "index out of range: {}",
                    if start < 0 || start as usize > chars.len() {
                        start
                    } else {
                        end
                    }
                ));
            }
            Val::Str(chars[start as usize..end as usize].iter().collect())
        }
        ("replace", Some(s), 2) => {
            Val::Str(s.replace(str_arg(f, rest, 0, &all)?, str_arg(f, rest, 1, &all)?))
        }
        ("split", Some(s), 1) => Val::List(
            s.split(str_arg(f, rest, 0, &all)?)
                .map(|p| Val::Str(p.to_string()))
                .collect(),
        ),
        ("join", None, 0 | 1) => {
            let Val::List(l) = recv else {
                return Err(no_overload(f, &all));
            };
            let sep = if rest.is_empty() {
                ""
            } else {
                str_arg(f, rest, 0, &all)?
            };
            let parts = l
                .iter()
                .map(|v| match v {
                    Val::Str(s) => Ok(s.clone()),
                    _ => Err(no_overload(f, &all)),
                })
                .collect::<Result<Vec<_>, _>>()?;
            Val::Str(parts.join(sep))
        }
        ("indexOf" | "lastIndexOf", None, 1) => {
            let Val::List(l) = recv else {
                return Err(no_overload(f, &all));
            };
            let pos = if f == "indexOf" {
                l.iter().position(|v| cel_eq(v, &rest[0]))
            } else {
                l.iter().rposition(|v| cel_eq(v, &rest[0]))
            };
            Val::Int(pos.map_or(-1, |p| p as i64))
        }
        ("sum" | "min" | "max" | "isSorted", None, 0) => {
            let Val::List(l) = recv else {
                return Err(no_overload(f, &all));
            };
            match f {
                "isSorted" => Val::Bool(l.windows(2).all(|w| {
                    matches!(
                        binary("<=", w[0].clone(), w[1].clone()),
                        Ok(Val::Bool(true))
                    )
                })),
                "sum" => {
                    let mut acc = Val::Int(0);
                    for (i, v) in l.iter().enumerate() {
                        acc = if i == 0 {
                            v.clone()
                        } else {
                            binary("+", acc, v.clone())?
                        };
                    }
                    acc
                }
                _ => {
                    let mut it = l.iter();
                    let mut best = it
                        .next()
                        .cloned()
                        .ok_or_else(|| format!("{f} called on empty list"))?;
                    for v in it {
                        let less = matches!(binary("<", v.clone(), best.clone())?, Val::Bool(true));
                        if less == (f == "min") {
                            best = v.clone();
                        }
                    }
                    best
                }
            }
        }
        ("int", _, 0) if target.is_none() => Val::Int(match recv {
            Val::Int(i) => *i,
            Val::Uint(u) => i64::try_from(*u).map_err(|_| "range error converting uint to int")?,
            Val::Double(d) if d.is_finite() && d.abs() < 9.2e18 => d.trunc() as i64,
            Val::Str(s) => s
                .parse()
                .map_err(|_| format!("cannot convert '{s}' to int"))?,
            _ => return Err(no_overload("int", &all)),
        }),
        ("uint", _, 0) if target.is_none() => Val::Uint(match recv {
            Val::Uint(u) => *u,
            Val::Int(i) => u64::try_from(*i).map_err(|_| "range error converting int to uint")?,
            Val::Double(d) if *d >= 0.0 && d.is_finite() => d.trunc() as u64,
            Val::Str(s) => s
                .parse()
                .map_err(|_| format!("cannot convert '{s}' to uint"))?,
            _ => return Err(no_overload("uint", &all)),
        }),
        ("double", _, 0) if target.is_none() => Val::Double(match recv {
            Val::Str(s) => s
                .parse()
                .map_err(|_| format!("cannot convert '{s}' to double"))?,
            v => v.num().ok_or_else(|| no_overload("double", &all))?,
        }),
        ("string", _, 0) if target.is_none() => match recv {
            Val::List(_) | Val::Map(_) | Val::Null => return Err(no_overload("string", &all)),
            v => Val::Str(v.display()),
        },
        ("bool", _, 0) if target.is_none() => match recv {
            Val::Bool(b) => Val::Bool(*b),
            Val::Str(s) => match s.as_str() {
                "true" | "TRUE" | "True" | "t" | "1" => Val::Bool(true),
                "false" | "FALSE" | "False" | "f" | "0" => Val::Bool(false),
                _ => return Err("type conversion error from 'string' to 'bool'".to_string()),
            },
            _ => return Err(no_overload("bool", &all)),
        },
        _ => return Err(no_overload(f, &all)),
    })
}

impl Program {
    /// Evaluates with `self` (and `oldSelf` when given), untyped.
    #[cfg(test)]
    fn run(&self, this: &Value, old: Option<&Value>) -> Result<Val, String> {
        self.run_typed(this, old, None)
    }

    /// Evaluates with `self` typed by the schema node `s`.
    fn run_typed(
        &self,
        this: &Value,
        old: Option<&Value>,
        s: Option<&Value>,
    ) -> Result<Val, String> {
        let mut env: Env<'_> = vec![("self".into(), Val::from_typed(this, s))];
        if let Some(o) = old {
            env.push(("oldSelf".into(), Val::from_typed(o, s)));
        }
        eval(&self.expr, &mut env)
    }
}

/// Runs the `x-kubernetes-validations` of a schema tree over an object.
pub(crate) struct RuleContext<'a> {
    pub(crate) programs: &'a BTreeMap<String, Program>,
    pub(crate) errs: &'a mut Vec<Cause>,
}

impl RuleContext<'_> {
    pub(crate) fn validate(
        &mut self,
        s: &Value,
        v: &Value,
        old: Option<&Value>,
        path: &FieldPath,
        root: bool,
    ) {
        if v.is_null() {
            return;
        }
        let old = old.filter(|o| !o.is_null());
        self.rules(s, v, old, path, root);
        match v {
            Value::Object(m) => {
                let granular =
                    s.get("x-kubernetes-map-type").and_then(Value::as_str) != Some("atomic");
                let old_m = old.and_then(Value::as_object);
                if let Some(a) = additional(s) {
                    for (k, x) in m {
                        let ov = if granular {
                            old_m.and_then(|o| o.get(k))
                        } else {
                            None
                        };
                        self.validate(a, x, ov, &path.key(k), false);
                    }
                }
                if s.get("properties").is_some() {
                    for (k, x) in m {
                        if let Some(p) = prop(s, k) {
                            let ov = if granular {
                                old_m.and_then(|o| o.get(k))
                            } else {
                                None
                            };
                            self.validate(p, x, ov, &path.child(k), false);
                        }
                    }
                }
            }
            Value::Array(a) => {
                let Some(items) = s.get("items") else { return };
                let old_a = old.and_then(Value::as_array);
                for (i, x) in a.iter().enumerate() {
                    let ov = old_a.and_then(|o| correlate(s, x, o));
                    self.validate(items, x, ov, &path.index(i), false);
                }
            }
            _ => {}
        }
    }

    fn rules(&mut self, s: &Value, v: &Value, old: Option<&Value>, path: &FieldPath, root: bool) {
        let Some(rules) = s.get("x-kubernetes-validations").and_then(Value::as_array) else {
            return;
        };
        let ty = s.get("type").and_then(Value::as_str).unwrap_or_default();
        let this = if root { root_view(v) } else { v.clone() };
        let old_this = old.map(|o| if root { root_view(o) } else { o.clone() });
        for r in rules {
            let src = r.get("rule").and_then(Value::as_str).unwrap_or_default();
            let Some(p) = self.programs.get(src) else {
                continue;
            };
            let optional_old = r
                .get("optionalOldSelf")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if p.uses_old_self && old_this.is_none() && !optional_old {
                continue;
            }
            let message = r
                .get("message")
                .and_then(Value::as_str)
                .map(str::trim)
                .unwrap_or_default();
            let rule_str = if message.is_empty() {
                src.trim()
            } else {
                message
            };
            let ty_value = format!("Invalid value: {}", quote_ty(ty));
            let old_arg = if p.uses_old_self {
                old_this.as_ref()
            } else {
                None
            };
            match p.run_typed(&this, old_arg, Some(s)) {
                Ok(Val::Bool(true)) => continue,
                Ok(Val::Bool(false)) => {}
                Ok(other) => {
                    self.errs.push(Cause::new(
                        "FieldValueInvalid",
                        path.render(),
                        format!(
                            "{ty_value}: 'no such overload: {}' evaluating rule: {rule_str}",
                            other.type_name()
                        ),
                    ));
                    continue;
                }
                Err(e) => {
                    let detail = if e.starts_with("no such overload") {
                        format!(
                            "'{e}': call arguments did not match a supported operator, function or macro signature for rule: {rule_str}"
                        )
                    } else {
                        format!("{e} evaluating rule: {rule_str}")
                    };
                    self.errs.push(Cause::new(
                        "FieldValueInvalid",
                        path.render(),
                        format!("{ty_value}: {detail}"),
                    ));
                    continue;
                }
            }
            // Ratcheting: a rule without oldSelf that fails on an unchanged
            // value is only a warning on the real server.
            if !p.uses_old_self && old_this.as_ref() == Some(&this) {
                continue;
            }
            let mut at = path.clone();
            if let Some(fp) = r.get("fieldPath").and_then(Value::as_str) {
                let fp = fp.trim_start_matches('.');
                if !fp.is_empty() {
                    at = at.child(fp);
                }
            }
            let mut detail = None;
            if let Some(me) = r.get("messageExpression").and_then(Value::as_str)
                && let Some(mp) = self.programs.get(me)
                && let Ok(Val::Str(m)) = mp.run_typed(&this, old_arg, Some(s))
                && !m.trim().is_empty()
                && !m.contains('\n')
            {
                detail = Some(m);
            }
            let detail = detail.unwrap_or_else(|| {
                if message.is_empty() {
                    format!("failed rule: {}", src.trim())
                } else {
                    message.to_string()
                }
            });
            let shown = if ty == "object" || ty == "array" {
                None
            } else {
                Some(go_value(v))
            };
            let reason = r
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or("FieldValueInvalid");
            let (reason, msg) = match reason {
                "FieldValueForbidden" => (reason, format!("Forbidden: {detail}")),
                "FieldValueRequired" => (reason, format!("Required value: {detail}")),
                "FieldValueDuplicate" => (
                    reason,
                    format!(
                        "Duplicate value: {}",
                        shown.clone().unwrap_or_else(|| v.to_string())
                    ),
                ),
                _ => (
                    "FieldValueInvalid",
                    match shown {
                        Some(val) => format!("Invalid value: {val}: {detail}"),
                        None => format!("Invalid value: {detail}"),
                    },
                ),
            };
            self.errs.push(Cause::new(reason, at.render(), msg));
        }
    }
}

fn quote_ty(ty: &str) -> String {
    crate::selector::quote(ty)
}

/// The root `self`: `apiVersion`, `kind`, and only `name`/`generateName` of
/// `metadata`, as the real server exposes them to rules.
fn root_view(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.retain(|k, _| k == "name" || k == "generateName");
    }
    v
}

/// The old item a new list item correlates with: same keys in a
/// `list-type: map`, same value in a `set`; other lists do not correlate.
pub(crate) fn correlate<'a>(s: &Value, item: &Value, old: &'a [Value]) -> Option<&'a Value> {
    match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => old.iter().find(|o| *o == item),
        Some("map") => {
            let keys: Vec<&str> = s
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|k| k.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            old.iter()
                .find(|o| keys.iter().all(|k| o.get(*k) == item.get(*k)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(src: &str, this: Value) -> Result<Val, String> {
        compile(src)?.run(&this, None)
    }

    #[test]
    fn evaluates_the_rule_subset() {
        let obj = json!({"mode": "Pull", "n": 5, "f": 2.5, "tags": ["a", "b"], "m": {"k": "v"},
                         "ref": {"name": "x"}, "items": [{"type": "Ready", "ok": true}, {"type": "X", "ok": false}]});
        let yes = [
            "self.mode == 'Pull'",
            "self.mode == \"Pull\" && has(self.ref)",
            "self.mode == 'Push' ? !has(self.ref) : has(self.ref)",
            "!has(self.missing)",
            "self.n >= 5 && self.n < 6 && self.n != 4 && self.n > 4.5",
            "self.f * 2.0 == 5.0 && self.n + 1 == 6 && self.n - 1 == 4 && self.n / 2 == 2 && self.n % 2 == 1",
            "size(self.tags) == 2 && self.tags.size() == 2 && size(self.mode) == 4",
            "'a' in self.tags && !('z' in self.tags) && 'k' in self.m",
            "self.mode.startsWith('Pu') && self.mode.endsWith('ll') && self.mode.contains('ul')",
            "self.mode.matches('^P[a-z]+$') && self.mode.lowerAscii() == 'pull'",
            "self.tags.all(t, t.size() == 1) && self.tags.exists(t, t == 'b') && self.tags.exists_one(t, t == 'a')",
            "self.tags.map(t, t + t) == ['aa', 'bb'] && self.tags.filter(t, t != 'a') == ['b']",
            "self.items.filter(i, i.ok).map(i, i.type) == ['Ready']",
            "self.items.map(i, i.ok, i.type) == ['Ready']",
            "self.m.all(k, self.m[k] == 'v') && self.tags[1] == 'b'",
            "int('12') == 12 && string(self.n) == '5' && double(self.n) == 5.0",
            "[1, 2, 3].sum() == 6 && [3, 1].min() == 1 && [1, 2].isSorted()",
            "{'a': 1}.a == 1 && [1, 2] + [3] == [1, 2, 3]",
            "self.tags.join(',') == 'a,b' && 'a,b'.split(',') == self.tags",
            "'hello'.substring(1, 3) == 'el' && 'hello'.indexOf('l') == 2 && r'\\d' == '\\\\d'",
            "null == null && 1u == 1 && 0x10 == 16 && -3 < 0",
            "false || true",
            "self.missing == 1 || true",
            "!(false && self.missing == 1)",
        ];
        for r in yes {
            assert_eq!(run(r, obj.clone()), Ok(Val::Bool(true)), "{r}");
        }
        let no = [
            "self.mode == 'Push'",
            "self.tags.all(t, t == 'a')",
            "has(self.ref) && self.n > 10",
        ];
        for r in no {
            assert_eq!(run(r, obj.clone()), Ok(Val::Bool(false)), "{r}");
        }
    }

    #[test]
    fn runtime_errors_read_like_cel_go() {
        let obj = json!({"n": 1, "s": "x", "l": [1]});
        let cases = [
            ("self.missing == 1", "no such key: missing"),
            ("self.n / 0 == 1", "division by zero"),
            ("self.s + 1 == 'x1'", "no such overload: _+_(string, int)"),
            ("self.l[3] == 1", "index out of bounds: 3"),
            ("self.s > 1", "no such overload: _>_(string, int)"),
            (
                "self.n.startsWith('a')",
                "no such overload: startsWith(int, string)",
            ),
        ];
        for (r, want) in cases {
            assert_eq!(run(r, obj.clone()), Err(want.to_string()), "{r}");
        }
    }

    #[test]
    fn number_fields_are_doubles_even_when_written_as_integers() {
        let s = json!({"type": "object", "properties": {"ratio": {"type": "number"}, "n": {"type": "integer"},
                       "l": {"type": "array", "items": {"type": "number"}}}});
        let p = compile("self.ratio * 2.0 == 2.0 && self.n * 2 == 4 && self.l[0] / 2.0 == 1.5")
            .unwrap();
        let v = json!({"ratio": 1, "n": 2, "l": [3]});
        assert_eq!(p.run_typed(&v, None, Some(&s)), Ok(Val::Bool(true)));
        assert_eq!(
            p.run(&v, None),
            Err("no such overload: _*_(int, double)".to_string())
        );
    }

    #[test]
    fn old_self_is_bound_for_transition_rules() {
        let p = compile("self == oldSelf").unwrap();
        assert!(p.uses_old_self);
        assert_eq!(p.run(&json!("a"), Some(&json!("a"))), Ok(Val::Bool(true)));
        assert_eq!(p.run(&json!("b"), Some(&json!("a"))), Ok(Val::Bool(false)));
        assert!(!compile("self == 1").unwrap().uses_old_self);
    }

    #[test]
    fn syntax_errors_point_at_the_input() {
        let cases = [
            (
                "self.a ==",
                "ERROR: <input>:1:10: Syntax error: mismatched input '<EOF>' expecting <expression>",
            ),
            (
                "self.a == 1)",
                "ERROR: <input>:1:12: Syntax error: extraneous input ')' expecting <EOF>",
            ),
            (
                "self.a # 1",
                "ERROR: <input>:1:8: Syntax error: token recognition error at: '#'",
            ),
            (
                "has(self)",
                "ERROR: <input>:1:10: Syntax error: invalid argument to has() macro",
            ),
            (
                "'abc",
                "ERROR: <input>:1:1: Syntax error: token recognition error",
            ),
        ];
        for (src, want) in cases {
            assert_eq!(compile(src).unwrap_err(), want, "{src}");
        }
    }
}
