//! CEL evaluation: the environment, operators and functions.

use super::*;

/// What names mean during one evaluation: the macro variables in scope
/// (innermost last) over the activation's inputs.
pub(super) struct Env<'a> {
    locals: Vec<(String, Val)>,
    activation: &'a Activation<'a>,
    /// How many of the activation's composition variables are visible: a
    /// variable sees only those declared before it, as in the real
    /// compiler's environment.
    visible: usize,
}

impl<'a> Env<'a> {
    fn new(activation: &'a Activation<'a>, visible: usize) -> Self {
        Env {
            locals: Vec::new(),
            activation,
            visible,
        }
    }

    fn push(&mut self, binding: (String, Val)) {
        self.locals.push(binding);
    }

    fn pop(&mut self) {
        self.locals.pop();
    }

    fn local(&self, name: &str) -> Option<&Val> {
        self.locals
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    fn lookup(&self, name: &str) -> Option<Val> {
        if let Some(v) = self.local(name) {
            return Some(v.clone());
        }
        let act = self.activation;
        if let Some((_, v)) = act.inputs.iter().find(|(n, _)| n == name) {
            return Some(v.clone());
        }
        let i = act.json.iter().position(|(n, _)| n == name)?;
        let mut converted = act.json_vals.borrow_mut();
        Some(
            converted[i]
                .get_or_insert_with(|| Val::from_json(act.json[i].1))
                .clone(),
        )
    }

    /// The JSON a selection `input.a.b` reaches inside a JSON input (not
    /// shadowed by a macro variable), so reading a field converts that
    /// field only, not the whole object.
    fn json_at(&self, e: &Expr) -> Option<&'a Value> {
        match e {
            Expr::Ident(n) if self.local(n).is_none() => self
                .activation
                .json
                .iter()
                .find(|(name, _)| name == n)
                .map(|(_, v)| *v),
            Expr::Select(t, f) => self.json_at(t)?.as_object()?.get(f),
            _ => None,
        }
    }

    /// Whether `variables` names the activation's composition variables
    /// here (and not a macro variable or input of that name).
    fn composes(&self, name: &str) -> bool {
        name == VARIABLES && !self.activation.variables.is_empty() && self.lookup(name).is_none()
    }

    /// `variables.NAME`: evaluated on first use, then remembered (errors
    /// too), as the real server's lazy composition does.
    fn variable(&self, name: &str) -> Result<Val, String> {
        let act = self.activation;
        let Some(i) = act.variables[..self.visible]
            .iter()
            .position(|(n, _)| n == name)
        else {
            return Err(format!("no such key: {name}"));
        };
        if let Some(done) = &act.cache.borrow()[i] {
            return done.clone();
        }
        let mut env = Env::new(act, i);
        let result = eval(&act.variables[i].1.expr, &mut env);
        act.cache.borrow_mut()[i] = Some(result.clone());
        result
    }
}

/// The identifier under which a policy's composition variables are read.
pub(super) const VARIABLES: &str = "variables";

/// The inputs of one evaluation (`object`, `request`, ... for admission;
/// `self` and `oldSelf` for CRD rules) and the composition variables
/// (`variables.NAME`) defined over them.
pub(crate) struct Activation<'p> {
    /// Inputs already converted (the schema-typed `self` of CRD rules).
    inputs: Vec<(String, Val)>,
    /// Inputs as JSON (admission's `object`, `request`, ...), converted
    /// only as far as an expression reads them.
    json: Vec<(String, &'p Value)>,
    json_vals: std::cell::RefCell<Vec<Option<Val>>>,
    variables: &'p [(String, Program)],
    cache: std::cell::RefCell<Vec<Option<Result<Val, String>>>>,
}

impl<'p> Activation<'p> {
    /// Inputs given as JSON (absent values are CEL `null`), and the
    /// variables in declaration order.
    pub(crate) fn new(inputs: &[(&str, &'p Value)], variables: &'p [(String, Program)]) -> Self {
        Activation {
            inputs: Vec::new(),
            json: inputs.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
            json_vals: std::cell::RefCell::new(vec![None; inputs.len()]),
            cache: std::cell::RefCell::new(vec![None; variables.len()]),
            variables,
        }
    }

    fn typed(inputs: Vec<(String, Val)>) -> Self {
        Activation {
            inputs,
            json: Vec::new(),
            json_vals: Default::default(),
            variables: &[],
            cache: Default::default(),
        }
    }
}

pub(super) fn eval(e: &Expr, env: &mut Env<'_>) -> Result<Val, String> {
    Ok(match e {
        Expr::Lit(v) => v.clone(),
        Expr::Ident(name) if env.composes(name) => {
            let names: Vec<String> = env.activation.variables[..env.visible]
                .iter()
                .map(|(n, _)| n.clone())
                .collect();
            let mut entries = Vec::with_capacity(names.len());
            for n in names {
                let v = env.variable(&n)?;
                entries.push((Val::Str(n), v));
            }
            Val::map(entries)
        }
        Expr::Ident(name) => env
            .lookup(name)
            .ok_or_else(|| format!("undeclared reference to '{name}' (in container '')"))?,
        Expr::Select(t, f) if env.json_at(t).and_then(|p| p.get(f)).is_some() => {
            Val::from_json(env.json_at(t).and_then(|p| p.get(f)).expect("checked"))
        }
        Expr::Has(t, f) if env.json_at(t).is_some_and(Value::is_object) => {
            Val::Bool(env.json_at(t).is_some_and(|p| p.get(f).is_some()))
        }
        Expr::Select(t, f) if matches!(&**t, Expr::Ident(n) if env.composes(n)) => {
            env.variable(f)?
        }
        Expr::Has(t, f) if matches!(&**t, Expr::Ident(n) if env.composes(n)) => Val::Bool(
            env.activation.variables[..env.visible]
                .iter()
                .any(|(n, _)| n == f),
        ),
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
        Expr::List(items) => Val::list(
            items
                .iter()
                .map(|i| eval(i, env))
                .collect::<Result<_, _>>()?,
        ),
        Expr::MapLit(es) => Val::map(
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
                Val::List(l) => (**l).clone(),
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
                    Val::list(out)
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
                    Val::list(out)
                }
            }
        }
    })
}

pub(super) fn binary(op: &str, l: Val, r: Val) -> Result<Val, String> {
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
            Val::list(a.iter().chain(b.iter()).cloned().collect())
        }
        _ => return Err(no_overload(name, &[&l, &r])),
    })
}

pub(super) fn str_arg<'a>(
    f: &str,
    args: &'a [Val],
    i: usize,
    all: &[&Val],
) -> Result<&'a str, String> {
    match args.get(i) {
        Some(Val::Str(s)) => Ok(s),
        _ => Err(no_overload(f, all)),
    }
}

pub(super) fn int_arg(f: &str, args: &[Val], i: usize, all: &[&Val]) -> Result<i64, String> {
    match args.get(i) {
        Some(Val::Int(n)) => Ok(*n),
        _ => Err(no_overload(f, all)),
    }
}

pub(super) fn call(f: &str, target: Option<Val>, args: Vec<Val>) -> Result<Val, String> {
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
            let re = super::super::go_regex(str_arg(f, rest, 0, &all)?)
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
        ("split", Some(s), 1) => Val::list(
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
    pub(super) fn run(&self, this: &Value, old: Option<&Value>) -> Result<Val, String> {
        self.run_typed(this, old, None)
    }

    /// Evaluates with `self` typed by the schema node `s`.
    pub(super) fn run_typed(
        &self,
        this: &Value,
        old: Option<&Value>,
        s: Option<&Value>,
    ) -> Result<Val, String> {
        let mut inputs = vec![("self".to_string(), Val::from_typed(this, s))];
        if let Some(o) = old {
            inputs.push(("oldSelf".to_string(), Val::from_typed(o, s)));
        }
        let act = Activation::typed(inputs);
        eval(&self.expr, &mut Env::new(&act, 0))
    }

    /// Evaluates over an activation (admission: `object`, `request`,
    /// `variables`, ...).
    pub(crate) fn eval_in(&self, act: &Activation<'_>) -> Result<Val, String> {
        eval(&self.expr, &mut Env::new(act, act.variables.len()))
    }
}
