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
//!
//! - [`lexer`]: source text to tokens.
//! - [`parser`]: tokens to an expression tree ([`compile`]).
//! - [`eval`]: the evaluator and CEL's functions and operators, over an
//!   [`Activation`]: named inputs and lazily evaluated composition
//!   variables (`variables.NAME`, as ValidatingAdmissionPolicies use them).
//! - [`rules`]: running a schema's rules over an object ([`RuleContext`]).
//!
//! The admission policies of `crate::admission` use the same interpreter
//! with their own inputs (`object`, `oldObject`, `request`, `params`,
//! `namespaceObject`, `variables`); [`Program::undeclared`] gives them the
//! compile-time check of names the real compiler's type checker makes.

mod eval;
mod lexer;
mod parser;
mod rules;

use lexer::*;

pub(crate) use eval::Activation;
pub(crate) use parser::compile;
pub(crate) use rules::{RuleContext, correlate};

use super::{FieldPath, additional, go_value, prop};
use crate::errors::Cause;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

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
pub(crate) enum Val {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(String),
    /// Lists and maps are shared, so reading a large object (a status with
    /// many signals) through several variables does not copy it.
    List(Arc<Vec<Val>>),
    Map(Arc<Vec<(Val, Val)>>),
}

impl Val {
    fn list(items: Vec<Val>) -> Val {
        Val::List(Arc::new(items))
    }

    fn map(entries: Vec<(Val, Val)>) -> Val {
        Val::Map(Arc::new(entries))
    }

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
            Value::Array(a) => Val::list(a.iter().map(Val::from_json).collect()),
            Value::Object(m) => Val::map(
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
            Value::Array(a) => Val::list(
                a.iter()
                    .map(|x| Val::from_typed(x, s.get("items")))
                    .collect(),
            ),
            Value::Object(m) => Val::map(
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

    /// The CEL type name (`bool`, `string`, `map`, `null_type`, ...).
    pub(crate) fn type_name(&self) -> &'static str {
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
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| cel_eq(p, q))
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
    fn composition_variables_are_lazy_cached_and_ordered() {
        let vars: Vec<(String, Program)> = [
            ("boom", "object.nope"),
            ("n", "object.n + 1"),
            ("twice", "variables.n * 2"),
        ]
        .iter()
        .map(|(n, e)| (n.to_string(), compile(e).unwrap()))
        .collect();
        let obj = json!({"n": 1});
        let act = Activation::new(&[("object", &obj)], &vars);
        let run = |src: &str| compile(src).unwrap().eval_in(&act);
        assert_eq!(
            run("variables.twice == 4 && variables.n == 2"),
            Ok(Val::Bool(true))
        );
        assert_eq!(
            run("has(variables.n) && !has(variables.other)"),
            Ok(Val::Bool(true))
        );
        assert_eq!(
            run("variables.boom == 1"),
            Err("no such key: nope".to_string())
        );
        assert_eq!(
            run("variables.other"),
            Err("no such key: other".to_string())
        );
        // A macro variable named `variables` shadows the composition.
        assert_eq!(
            run("[{'n': 7}].all(variables, variables.n == 7)"),
            Ok(Val::Bool(true))
        );
        // A variable sees only those declared before it.
        let later = vec![
            ("a".to_string(), compile("variables.b").unwrap()),
            ("b".to_string(), compile("1").unwrap()),
        ];
        let act = Activation::new(&[], &later);
        assert_eq!(
            compile("variables.a").unwrap().eval_in(&act),
            Err("no such key: b".to_string())
        );
    }

    #[test]
    fn undeclared_names_are_compile_errors_like_cel_go() {
        let check = |src: &str| {
            compile(src)
                .unwrap()
                .undeclared(src, &["object", "variables"], &["a"])
        };
        assert_eq!(check("object.x == variables.a"), None);
        assert_eq!(
            check("object.l.all(x, x > 0) && [1].map(y, y + 1) == [2]"),
            None
        );
        assert_eq!(
            check("object.x == self.x"),
            Some(
                "ERROR: <input>:1:13: undeclared reference to 'self' (in container '')".to_string()
            )
        );
        assert_eq!(
            check("variables.a + variables.b"),
            Some("ERROR: <input>:1:25: undefined field 'b'".to_string())
        );
        assert_eq!(
            check("object.l.all(x, x > y)"),
            Some("ERROR: <input>:1:21: undeclared reference to 'y' (in container '')".to_string())
        );
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
