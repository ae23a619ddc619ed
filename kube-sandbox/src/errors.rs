//! API errors rendered as `meta.k8s.io/v1` `Status` bodies, worded like the
//! real API server so that kubectl and kube-rs print the same messages.

use serde_json::{Value, json};

/// One field-level cause of a 422 Invalid, as in `Status.details.causes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// e.g. `FieldValueRequired`, `FieldValueNotSupported`, `FieldValueInvalid`.
    pub reason: String,
    /// e.g. `Unsupported value: "gold": supported values: "critical", "standard"`.
    pub message: String,
    /// JSON path of the field, e.g. `spec.tier`.
    pub field: String,
}

impl Cause {
    /// A cause with its `reason`, `field` path and `message`.
    pub fn new(reason: &str, field: impl Into<String>, message: impl Into<String>) -> Self {
        Cause {
            reason: reason.to_string(),
            message: message.into(),
            field: field.into(),
        }
    }
}

/// An error answered to a client: HTTP code plus a `Status` body.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status code (also `Status.code`).
    pub code: u16,
    /// `metav1.StatusReason`: `NotFound`, `AlreadyExists`, `Conflict`, ...
    pub reason: String,
    /// Human-readable `Status.message`.
    pub message: String,
    /// `Status.details` (name, group, kind, causes, retryAfterSeconds), if any.
    pub details: Option<Value>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}

/// `resource.group` as the API server prints it (`pods`, `federatedclusters.federation.kubectl-fleet.dev`).
pub fn qualified(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

fn details(name: &str, group: &str, kind: &str) -> Value {
    let mut d = serde_json::Map::new();
    if !name.is_empty() {
        d.insert("name".into(), json!(name));
    }
    if !group.is_empty() {
        d.insert("group".into(), json!(group));
    }
    d.insert("kind".into(), json!(kind));
    Value::Object(d)
}

impl ApiError {
    /// An error with a code, a `StatusReason` and a message.
    pub fn new(code: u16, reason: &str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason: reason.to_string(),
            message: message.into(),
            details: None,
        }
    }

    /// 404: `pods "x" not found`. `resource` is the plural resource name.
    pub fn not_found(group: &str, resource: &str, name: &str) -> Self {
        ApiError {
            details: Some(details(name, group, resource)),
            ..Self::new(
                404,
                "NotFound",
                format!("{} \"{name}\" not found", qualified(group, resource)),
            )
        }
    }

    /// 409: `pods "x" already exists`.
    pub fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        ApiError {
            details: Some(details(name, group, resource)),
            ..Self::new(
                409,
                "AlreadyExists",
                format!("{} \"{name}\" already exists", qualified(group, resource)),
            )
        }
    }

    /// 409 on a stale resourceVersion, worded as the real server does.
    pub fn conflict(group: &str, resource: &str, name: &str) -> Self {
        ApiError {
            details: Some(details(name, group, resource)),
            ..Self::new(
                409,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
                    qualified(group, resource)
                ),
            )
        }
    }

    /// 409 Conflict with its own reason (`apierrors.NewConflict`):
    /// `Operation cannot be fulfilled on RESOURCE.group "name": DETAIL`.
    pub fn conflict_because(group: &str, resource: &str, name: &str, detail: &str) -> Self {
        ApiError {
            details: Some(details(name, group, resource)),
            ..Self::new(
                409,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {} \"{name}\": {detail}",
                    qualified(group, resource)
                ),
            )
        }
    }

    /// 422 with field causes: `Kind.group "name" is invalid: field: message, field2: message2`.
    pub fn invalid(group: &str, kind: &str, name: &str, causes: Vec<Cause>) -> Self {
        let qual_kind = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let summary = causes
            .iter()
            .map(|c| {
                if c.field.is_empty() {
                    c.message.clone()
                } else {
                    format!("{}: {}", c.field, c.message)
                }
            })
            .fold(Vec::new(), |mut seen: Vec<String>, m| {
                // As `utilerrors.Aggregate`: a repeated message is shown once.
                if !seen.contains(&m) {
                    seen.push(m);
                }
                seen
            });
        let summary = if summary.len() == 1 {
            summary[0].clone()
        } else {
            format!("[{}]", summary.join(", "))
        };
        let mut d = details(name, group, kind);
        d["causes"] = Value::Array(
            causes
                .iter()
                .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
                .collect(),
        );
        ApiError {
            details: Some(d),
            ..Self::new(
                422,
                "Invalid",
                format!("{qual_kind} \"{name}\" is invalid: {summary}"),
            )
        }
    }

    /// 403 with the message already built by the authorizer.
    pub fn forbidden(message: impl Into<String>, group: &str, resource: &str, name: &str) -> Self {
        ApiError {
            details: Some(details(name, group, resource)),
            ..Self::new(403, "Forbidden", message)
        }
    }

    /// 401 `Unauthorized`.
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    /// 400 `BadRequest`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 405 for a verb a resource does not support.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(405, "MethodNotAllowed", message)
    }

    /// 410 for a watch or continue token whose resourceVersion was compacted.
    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 415 for an unsupported patch content type.
    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::new(415, "UnsupportedMediaType", message)
    }

    /// 500.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    /// The `Status` object sent as the response body.
    pub fn to_status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        if self.reason.is_empty() {
            s.as_object_mut().unwrap().remove("reason");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_names_the_qualified_resource() {
        let e = ApiError::not_found("federation.kubectl-fleet.dev", "federatedclusters", "a");
        assert_eq!(
            e.message,
            "federatedclusters.federation.kubectl-fleet.dev \"a\" not found"
        );
        assert_eq!(e.to_status()["details"]["kind"], "federatedclusters");
    }

    #[test]
    fn invalid_joins_causes_like_the_real_server() {
        let e = ApiError::invalid(
            "g.dev",
            "Thing",
            "x",
            vec![
                Cause::new("FieldValueRequired", "spec.a", "Required value"),
                Cause::new("FieldValueInvalid", "spec.b", "Invalid value: 3"),
            ],
        );
        assert_eq!(
            e.message,
            "Thing.g.dev \"x\" is invalid: [spec.a: Required value, spec.b: Invalid value: 3]"
        );
        assert_eq!(e.code, 422);
    }
}
