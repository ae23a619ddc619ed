//! The review APIs, answered with the same authn/authz code as every request.
//!
//! STUB: interface fixed, implementation owned by the "sandbox auth" work.

use super::authn::UserInfo;
use super::rbac::RbacSnapshot;
use serde_json::Value;

/// `SubjectAccessReview` (`authorization.k8s.io/v1`): the request object
/// with `status` {allowed, denied, reason} filled in.
pub fn subject_access_review(_rbac: &RbacSnapshot, review: &Value) -> Value {
    review.clone()
}

/// `SelfSubjectAccessReview` for the calling user.
pub fn self_subject_access_review(_rbac: &RbacSnapshot, _user: &UserInfo, review: &Value) -> Value {
    review.clone()
}

/// `SelfSubjectRulesReview` for the calling user in `spec.namespace`.
pub fn self_subject_rules_review(_rbac: &RbacSnapshot, _user: &UserInfo, review: &Value) -> Value {
    review.clone()
}

/// `TokenReview`: `authenticated` with the user, or an error string.
pub fn token_review(review: &Value, result: Result<UserInfo, String>) -> Value {
    let mut out = review.clone();
    out["status"] = match result {
        Ok(u) => {
            serde_json::json!({"authenticated": true, "user": {"username": u.username, "uid": u.uid, "groups": u.groups}})
        }
        Err(e) => serde_json::json!({"authenticated": false, "error": e}),
    };
    out
}
