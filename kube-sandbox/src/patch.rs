//! Patch semantics: JSON merge patch (RFC 7386), JSON patch (RFC 6902),
//! strategic merge patch, and server-side apply with `managedFields`.
//!
//! STUB: interface fixed, implementation owned by the "sandbox pure modules" work.

use crate::errors::ApiError;
use serde_json::Value;

/// `application/merge-patch+json`.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    json_patch::merge(target, patch);
}

/// `application/json-patch+json`; errors are 422/400-style `ApiError`s.
pub fn json_patch(_target: &mut Value, _patch: &Value) -> Result<(), ApiError> {
    Err(ApiError::internal("json patch not implemented yet"))
}

/// `application/strategic-merge-patch+json` (merge semantics plus the
/// `$patch`/list-merge-key handling this module documents).
pub fn strategic_merge_patch(target: &mut Value, patch: &Value) -> Result<(), ApiError> {
    merge_patch(target, patch);
    Ok(())
}

/// `application/apply-patch+yaml` (server-side apply). `live` is the stored
/// object (None: create), `applied` the parsed request body. Returns the
/// new object with `metadata.managedFields` updated, or a 409 Conflict
/// naming the conflicting managers and fields unless `force`.
pub fn server_side_apply(
    live: Option<&Value>,
    applied: &Value,
    _manager: &str,
    _force: bool,
) -> Result<Value, ApiError> {
    let mut out = live.cloned().unwrap_or(Value::Null);
    if out.is_null() {
        return Ok(applied.clone());
    }
    merge_patch(&mut out, applied);
    Ok(out)
}

/// Records a non-apply write (create/update/patch) by `manager` in
/// `new.metadata.managedFields`, as the real server does for `Update` operations.
/// `subresource` is `Some("status")` for writes to `/status`.
pub fn record_update(
    _old: Option<&Value>,
    _new: &mut Value,
    _manager: &str,
    _subresource: Option<&str>,
) {
}
