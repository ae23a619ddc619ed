//! JSON merge patch (RFC 7386) and JSON patch (RFC 6902).

use crate::errors::ApiError;
use serde_json::{Value, json};

/// `application/merge-patch+json`.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    json_patch::merge(target, patch);
}

/// The most operations one JSON patch may carry (as the real server).
const MAX_JSON_PATCH_OPERATIONS: usize = 10000;

/// The 422 the real server answers when a JSON patch cannot be applied
/// (failed `test`, missing path, unknown op, ...): a generic message and
/// empty details, whatever the cause.
fn json_patch_unprocessable() -> ApiError {
    ApiError {
        details: Some(json!({})),
        ..ApiError::new(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request",
        )
    }
}

/// Go's name for a JSON value's type in `json: cannot unmarshal` errors.
fn go_json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `application/json-patch+json`; errors are 422/400-style `ApiError`s.
///
/// A body that is not a list of objects is a 400 with Go's decoding
/// message; more than 10000 operations a 413; any operation that cannot be
/// applied a 422. On error `target` is left unchanged.
pub fn json_patch(target: &mut Value, patch: &Value) -> Result<(), ApiError> {
    let ops = match patch {
        Value::Null => return Ok(()),
        Value::Array(ops) => ops,
        other => {
            return Err(ApiError::bad_request(format!(
                "error decoding patch: json: cannot unmarshal {} into Go value of type []handlers.jsonPatchOp",
                go_json_type(other)
            )));
        }
    };
    if let Some(bad) = ops.iter().find(|o| !o.is_object() && !o.is_null()) {
        return Err(ApiError::bad_request(format!(
            "error decoding patch: json: cannot unmarshal {} into Go value of type handlers.jsonPatchOp",
            go_json_type(bad)
        )));
    }
    if ops.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(ApiError::new(
            413,
            "RequestEntityTooLarge",
            format!(
                "Request entity too large: The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
                ops.len()
            ),
        ));
    }
    // What the real decoder refuses before applying anything: an unknown
    // (or missing) operation, and add/replace/test without a value.
    for op in ops.iter().filter(|o| o.is_object()) {
        let invalid = |why: &str| ApiError::bad_request(format!("invalid operation {op}: {why}"));
        match op["op"].as_str() {
            Some("add" | "replace" | "test") if op.get("value").is_none() => {
                return Err(invalid(
                    "failed to decode 'value': operation, missing value field: missing value",
                ));
            }
            Some("add" | "remove" | "replace" | "move" | "copy" | "test") => {}
            _ => return Err(invalid("unsupported operation")),
        }
    }
    let parsed: json_patch::Patch =
        serde_json::from_value(patch.clone()).map_err(|_| json_patch_unprocessable())?;
    let mut out = target.clone();
    json_patch::patch(&mut out, &parsed).map_err(|_| json_patch_unprocessable())?;
    *target = out;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_patch_follows_rfc7386() {
        let cases = [
            (
                json!({"a": 1, "b": {"c": 2, "d": 3}}),
                json!({"b": {"c": null, "e": 4}}),
                json!({"a": 1, "b": {"d": 3, "e": 4}}),
            ),
            (json!({"a": [1, 2]}), json!({"a": [3]}), json!({"a": [3]})),
            (json!({"a": 1}), json!({"a": null, "z": null}), json!({})),
            (
                json!({"a": "x"}),
                json!({"a": {"b": 1}}),
                json!({"a": {"b": 1}}),
            ),
            (json!({"a": 1}), json!([1]), json!([1])),
        ];
        for (mut t, p, want) in cases {
            merge_patch(&mut t, &p);
            assert_eq!(t, want, "patch {p}");
        }
    }

    #[test]
    fn json_patch_applies_every_operation() {
        let mut t = json!({"spec": {"a": 1, "l": [1, 2]}, "metadata": {"name": "x"}});
        let p = json!([
            {"op": "add", "path": "/spec/b", "value": 2},
            {"op": "add", "path": "/spec/l/-", "value": 3},
            {"op": "remove", "path": "/spec/l/0"},
            {"op": "replace", "path": "/spec/a", "value": 10},
            {"op": "copy", "from": "/spec/a", "path": "/spec/c"},
            {"op": "move", "from": "/spec/b", "path": "/spec/d"},
            {"op": "test", "path": "/spec/d", "value": 2},
            {"op": "add", "path": "/metadata/labels", "value": {"app.kubernetes.io/name": "y"}},
            {"op": "test", "path": "/metadata/labels/app.kubernetes.io~1name", "value": "y"},
        ]);
        json_patch(&mut t, &p).unwrap();
        assert_eq!(
            t,
            json!({"spec": {"a": 10, "c": 10, "d": 2, "l": [2, 3]},
                   "metadata": {"name": "x", "labels": {"app.kubernetes.io/name": "y"}}})
        );
    }

    #[test]
    fn json_patch_failures_are_the_real_generic_422_and_leave_the_target() {
        let orig = json!({"spec": {"a": 1}});
        let cases = [
            json!([{"op": "test", "path": "/spec/a", "value": 2}]),
            json!([{"op": "replace", "path": "/spec/b", "value": 2}]),
            json!([{"op": "remove", "path": "/spec/b"}]),
            json!([{"op": "add", "path": "/nope/b", "value": 2}]),
            json!([{"op": "add", "path": "/spec/x", "value": 1}, {"op": "test", "path": "/spec/a", "value": 9}]),
        ];
        for p in cases {
            let mut t = orig.clone();
            let e = json_patch(&mut t, &p).unwrap_err();
            assert_eq!(e.code, 422, "{p}");
            assert_eq!(e.reason, "Invalid");
            assert_eq!(
                e.message,
                "the server rejected our request due to an error in our request"
            );
            assert_eq!(e.to_status()["details"], json!({}));
            assert_eq!(t, orig, "target unchanged after {p}");
        }
    }

    #[test]
    fn json_patch_decoding_errors_are_400() {
        let cases = [
            (
                json!({"op": "add"}),
                "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp",
            ),
            (
                json!("x"),
                "error decoding patch: json: cannot unmarshal string into Go value of type []handlers.jsonPatchOp",
            ),
            (
                json!(["x"]),
                "error decoding patch: json: cannot unmarshal string into Go value of type handlers.jsonPatchOp",
            ),
            (
                json!([1]),
                "error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp",
            ),
        ];
        for (p, want) in cases {
            let e = json_patch(&mut json!({}), &p).unwrap_err();
            assert_eq!(
                (e.code, e.reason.as_str(), e.message.as_str()),
                (400, "BadRequest", want)
            );
        }
        for (op, why) in [
            (
                json!({"op": "bogus", "path": "/spec"}),
                "unsupported operation",
            ),
            (json!({"path": "/spec"}), "unsupported operation"),
            (
                json!({"op": "add", "path": "/spec/x"}),
                "failed to decode 'value': operation, missing value field: missing value",
            ),
        ] {
            let e = json_patch(&mut json!({"spec": {}}), &json!([op])).unwrap_err();
            assert_eq!(
                (e.code, e.message),
                (400, format!("invalid operation {op}: {why}"))
            );
        }
        // Ops that decode but cannot apply are the generic 422.
        let e = json_patch(
            &mut json!({"spec": {}}),
            &json!([{"op": "remove", "path": "/spec/nope"}]),
        )
        .unwrap_err();
        assert_eq!(e.code, 422);
        let many = Value::Array(vec![json!({"op": "test", "path": "", "value": {}}); 10001]);
        let e = json_patch(&mut json!({}), &many).unwrap_err();
        assert_eq!(e.code, 413);
        assert_eq!(
            e.message,
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
        );
        let mut t = json!({"a": 1});
        json_patch(&mut t, &Value::Null).unwrap();
        assert_eq!(t, json!({"a": 1}));
    }
}
