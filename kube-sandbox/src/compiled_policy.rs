//! A policy's CEL, compiled once per stored version of the policy, and its
//! evaluation for one request: match conditions, then validations (with
//! their messages), then audit annotation values, each error handled by
//! the policy's `failurePolicy` as the real validator does; and the cache
//! of compiled policies the store keeps ([`Cache`]). Below both the store
//! and admission.

use crate::schema::cel::{Activation, Program, Val, compile};
use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

/// The names an admission expression may use besides `variables`
/// (`authorizer` is not offered: the sandbox has no authorizer in CEL).
pub(crate) const INPUTS: [&str; 5] = [
    "object",
    "oldObject",
    "request",
    "params",
    "namespaceObject",
];

/// A messageExpression result longer than this is not used (the real
/// server's `MaxEvaluatedMessageExpressionSizeBytes`).
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// One expression with its source, for messages.
#[derive(Debug)]
pub(crate) struct Expression {
    pub src: String,
    pub program: Program,
}

#[derive(Debug)]
struct Validation {
    expr: Expression,
    message: String,
    message_expression: Option<Expression>,
    reason: Option<String>,
}

/// A policy ready to evaluate.
#[derive(Debug)]
pub(crate) struct Compiled {
    /// `failurePolicy: Ignore`: evaluation errors admit.
    pub ignore_failures: bool,
    /// `spec.paramKind` as `(apiVersion, kind)`.
    pub param_kind: Option<(String, String)>,
    match_conditions: Vec<Expression>,
    variables: Vec<(String, Program)>,
    validations: Vec<Validation>,
    audit_annotations: Vec<Expression>,
}

/// One denial: the message after `denied request: ` and the status reason
/// (`None` = `Invalid`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Denial {
    pub message: String,
    pub reason: Option<String>,
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// Compiles one expression (at `path`), with the compile-time name check.
/// The error is worded as the API validation's `compilation failed: ...`.
pub(crate) fn compile_expression(
    src: &str,
    variables: &[&str],
    with_variables: bool,
) -> Result<Program, String> {
    let program = compile(src).map_err(|e| format!("compilation failed: {e}"))?;
    let mut declared = INPUTS.to_vec();
    if with_variables {
        declared.push("variables");
    }
    match program.undeclared(src, &declared, variables) {
        Some(e) => Err(format!("compilation failed: {e}")),
        None => Ok(program),
    }
}

impl Compiled {
    /// Compiles a policy's spec (already validated on write, so an error
    /// here is a configuration error of a policy stored before a change).
    pub(crate) fn new(spec: &Value) -> Result<Compiled, String> {
        let list = |key: &str| {
            spec.get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let mut variables: Vec<(String, Program)> = Vec::new();
        for v in list("variables") {
            let names: Vec<&str> = variables.iter().map(|(n, _)| n.as_str()).collect();
            let p = compile_expression(text(&v, "expression"), &names, true)?;
            variables.push((text(&v, "name").to_string(), p));
        }
        let names: Vec<&str> = variables.iter().map(|(n, _)| n.as_str()).collect();
        let expression = |src: &str, with_vars: bool| -> Result<Expression, String> {
            Ok(Expression {
                src: src.to_string(),
                program: compile_expression(src, &names, with_vars)?,
            })
        };
        let mut match_conditions = Vec::new();
        for m in list("matchConditions") {
            match_conditions.push(expression(text(&m, "expression"), false)?);
        }
        let mut validations = Vec::new();
        for v in list("validations") {
            let me = text(&v, "messageExpression");
            validations.push(Validation {
                expr: expression(text(&v, "expression"), true)?,
                message: text(&v, "message").trim().to_string(),
                message_expression: if me.trim().is_empty() {
                    None
                } else {
                    Some(expression(me, true)?)
                },
                reason: v.get("reason").and_then(Value::as_str).map(String::from),
            });
        }
        let mut audit_annotations = Vec::new();
        for a in list("auditAnnotations") {
            audit_annotations.push(expression(text(&a, "valueExpression"), true)?);
        }
        let param_kind = spec.get("paramKind").filter(|p| p.is_object()).map(|p| {
            (
                text(p, "apiVersion").to_string(),
                text(p, "kind").to_string(),
            )
        });
        Ok(Compiled {
            ignore_failures: text(spec, "failurePolicy") == "Ignore",
            param_kind,
            match_conditions,
            variables,
            validations,
            audit_annotations,
        })
    }

    /// The denials of one evaluation with these inputs (`object`,
    /// `oldObject`, `request`, `params`, `namespaceObject`): empty when the
    /// request is admitted or the match conditions exclude it.
    pub(crate) fn evaluate(&self, inputs: &[(&str, &Value)]) -> Vec<Denial> {
        let failed = |message: String| -> Vec<Denial> {
            if self.ignore_failures {
                Vec::new()
            } else {
                vec![Denial {
                    message,
                    reason: None,
                }]
            }
        };
        // Match conditions see no variables.
        let bare = Activation::new(inputs, &[]);
        let mut errors = Vec::new();
        for m in &self.match_conditions {
            match m.program.eval_in(&bare) {
                Ok(Val::Bool(false)) => return Vec::new(),
                Ok(Val::Bool(true)) => {}
                Ok(other) => errors.push(resulted_in_error(
                    &m.src,
                    &format!("no such overload: {} is not bool", other.type_name()),
                )),
                Err(e) => errors.push(resulted_in_error(&m.src, &e)),
            }
        }
        if !errors.is_empty() {
            // `utilerrors.NewAggregate`: one error as is, several in brackets.
            let message = if errors.len() == 1 {
                errors.remove(0)
            } else {
                format!("[{}]", errors.join(", "))
            };
            return failed(message);
        }
        let act = Activation::new(inputs, &self.variables);
        let mut out = Vec::new();
        for v in &self.validations {
            match v.expr.program.eval_in(&act) {
                Ok(Val::Bool(true)) => {}
                Ok(_) => out.push(Denial {
                    message: self.message(v, &act),
                    reason: Some(v.reason.clone().unwrap_or_else(|| "Invalid".to_string())),
                }),
                Err(e) => out.extend(failed(resulted_in_error(&v.expr.src, &e))),
            }
        }
        for a in &self.audit_annotations {
            match a.program.eval_in(&act) {
                Ok(Val::Str(_) | Val::Null) => {}
                Ok(other) => out.push(Denial {
                    message: format!(
                        "valueExpression '{}' resulted in unsupported return type: {}. Return type must be either string or null.",
                        a.src,
                        other.type_name()
                    ),
                    reason: None,
                }),
                Err(e) => out.extend(failed(resulted_in_error(&a.src, &e))),
            }
        }
        out
    }

    /// A failed validation's message: the messageExpression's string
    /// (trimmed, one line, at most 5 KiB), else `message`, else the
    /// expression.
    fn message(&self, v: &Validation, act: &Activation<'_>) -> String {
        let from_expression = v
            .message_expression
            .as_ref()
            .and_then(|me| match me.program.eval_in(act) {
                Ok(Val::Str(s)) => Some(s.trim().to_string()),
                _ => None,
            })
            .filter(|m| !m.is_empty() && m.len() <= MAX_MESSAGE_BYTES && !m.contains('\n'));
        from_expression.unwrap_or_else(|| {
            if v.message.is_empty() {
                format!("failed expression: {}", v.expr.src.trim())
            } else {
                v.message.clone()
            }
        })
    }
}

/// The real filter's wording of an evaluation error.
fn resulted_in_error(src: &str, e: &str) -> String {
    format!("expression '{src}' resulted in error: {e}")
}

/// Compiled policies by name, with the resourceVersion they were compiled
/// from, so a heartbeat does not recompile the policy it is checked against.
#[derive(Debug, Default)]
pub(crate) struct Cache(HashMap<String, (String, Arc<Result<Compiled, String>>)>);

impl Cache {
    pub(crate) fn get(&mut self, policy: &Value) -> Arc<Result<Compiled, String>> {
        let name = policy["metadata"]["name"].as_str().unwrap_or_default();
        let rv = policy["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default();
        if let Some((seen, c)) = self.0.get(name)
            && seen == rv
        {
            return c.clone();
        }
        let compiled = Arc::new(Compiled::new(&policy["spec"]));
        self.0
            .insert(name.to_string(), (rv.to_string(), compiled.clone()));
        compiled
    }
}
