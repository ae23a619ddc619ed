//! CEL parser (precedence climbing over the CEL grammar) and [`compile`].

use super::*;

pub(super) struct Parser<'a> {
    src: &'a str,
    toks: Vec<(Tok, usize)>,
    pos: usize,
}

pub(super) const MACROS: [&str; 5] = ["all", "exists", "exists_one", "map", "filter"];

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

pub(super) fn describe(t: &Tok) -> String {
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
pub(super) fn leak(op: &str) -> &'static str {
    const ALL: [&str; 25] = [
        "&&", "||", "==", "!=", "<=", ">=", "!", "<", ">", "+", "-", "*", "/", "%", "?", ":", ".",
        ",", "(", ")", "[", "]", "{", "}", "=",
    ];
    ALL.iter().find(|o| **o == op).copied().unwrap_or("")
}

pub(super) fn mentions_old_self(e: &Expr) -> bool {
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

impl Program {
    /// The compile-time check of names: the first identifier that is
    /// neither `declared` nor a macro variable in scope, or the first
    /// `variables.NAME` whose NAME is not among `variables` (the
    /// composition variables declared before this expression), as cel-go's
    /// checker words it.
    pub(crate) fn undeclared(
        &self,
        src: &str,
        declared: &[&str],
        variables: &[&str],
    ) -> Option<String> {
        let mut scope = Vec::new();
        let (name, field) = first_undeclared(&self.expr, declared, variables, &mut scope)?;
        Some(match field {
            false => syntax_at(
                src,
                &name,
                false,
                &format!("undeclared reference to '{name}' (in container '')"),
            ),
            true => syntax_at(src, &name, true, &format!("undefined field '{name}'")),
        })
    }
}

/// `(name, is_variables_field)` of the first name no declaration covers.
fn first_undeclared(
    e: &Expr,
    declared: &[&str],
    variables: &[&str],
    scope: &mut Vec<String>,
) -> Option<(String, bool)> {
    let walk = |e: &Expr, scope: &mut Vec<String>| first_undeclared(e, declared, variables, scope);
    let is_variables = |t: &Expr, scope: &[String]| matches!(t, Expr::Ident(n) if n == eval::VARIABLES && declared.contains(&eval::VARIABLES) && !scope.contains(n));
    match e {
        Expr::Lit(_) => None,
        Expr::Ident(n) => {
            (!scope.contains(n) && !declared.contains(&n.as_str())).then(|| (n.clone(), false))
        }
        Expr::Select(t, f) | Expr::Has(t, f) if is_variables(t, scope) => {
            (!variables.contains(&f.as_str())).then(|| (f.clone(), true))
        }
        Expr::Select(t, _) | Expr::Has(t, _) | Expr::Unary(_, t) => walk(t, scope),
        Expr::Index(a, b) | Expr::Binary(_, a, b) => walk(a, scope).or_else(|| walk(b, scope)),
        Expr::Cond(a, b, c) => walk(a, scope)
            .or_else(|| walk(b, scope))
            .or_else(|| walk(c, scope)),
        Expr::Call(_, args) | Expr::List(args) => args.iter().find_map(|a| walk(a, scope)),
        Expr::Method(t, _, args) => {
            walk(t, scope).or_else(|| args.iter().find_map(|a| walk(a, scope)))
        }
        Expr::MapLit(es) => es
            .iter()
            .find_map(|(k, v)| walk(k, scope).or_else(|| walk(v, scope))),
        Expr::Macro(_, t, var, body) => walk(t, scope).or_else(|| {
            scope.push(var.clone());
            let found = body.iter().find_map(|b| walk(b, scope));
            scope.pop();
            found
        }),
    }
}

/// A compile error at the first identifier token `name` (one after a `.`
/// when `after_dot`), positioned like cel-go's.
fn syntax_at(src: &str, name: &str, after_dot: bool, msg: &str) -> String {
    let toks = lex(src).unwrap_or_default();
    let pos = toks
        .iter()
        .enumerate()
        .find(|(i, (t, _))| {
            *t == Tok::Ident(name.to_string())
                && (*i > 0 && toks[i - 1].0 == Tok::Op(".")) == after_dot
        })
        .map_or(0, |(_, (_, p))| *p);
    syntax(src, pos, msg).replacen("Syntax error: ", "", 1)
}
