//! The review APIs, answered with the same authn/authz code as every request.
//!
//! Responses are shaped like the real server's: the request's `kind`,
//! `apiVersion` and `metadata` echoed (with `creationTimestamp: null`, since
//! reviews are never stored), the spec echoed (except SelfSubjectRulesReview,
//! whose real handler returns a fresh object with an empty spec), and a
//! `status` with the real field names and omitempty rules.

use super::authn::{self, AuthnError, TokenIssuer};
use super::rbac::{self, Decision, RbacSnapshot};
use super::types::{Attributes, UserInfo};
use crate::errors::{ApiError, Cause};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

const AUTHORIZATION_V1: &str = "authorization.k8s.io/v1";
const AUTHENTICATION_V1: &str = "authentication.k8s.io/v1";

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn strings_of(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The response skeleton: kind, the request's apiVersion (default `v1`) and
/// metadata with `creationTimestamp: null`, as for any unpersisted object.
fn response(
    review: &Value,
    kind: &str,
    default_api_version: &str,
    spec: Value,
    status: Value,
) -> Value {
    let api_version = match str_of(review, "apiVersion") {
        "" => default_api_version,
        v => v,
    };
    let mut metadata = review
        .get("metadata")
        .filter(|m| m.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}));
    if metadata.get("creationTimestamp").is_none() {
        metadata["creationTimestamp"] = Value::Null;
    }
    json!({
        "kind": kind,
        "apiVersion": api_version,
        "metadata": metadata,
        "spec": spec,
        "status": status,
    })
}

fn spec_of(review: &Value) -> Value {
    review
        .get("spec")
        .filter(|s| s.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}))
}

/// The request a (Self)SubjectAccessReview spec asks about, for `user`.
///
/// A `fieldSelector` in `resourceAttributes` is not turned into a name:
/// the real RBAC authorizer only sees `name`, and the request-info
/// resolver (which pins list/watch names from `metadata.name=`) does not run
/// for reviews.
fn attributes_from_spec(spec: &Value, user: UserInfo) -> Attributes {
    if let Some(ra) = spec.get("resourceAttributes").filter(|v| v.is_object()) {
        Attributes {
            user,
            verb: str_of(ra, "verb").to_string(),
            resource_request: true,
            api_group: str_of(ra, "group").to_string(),
            api_version: str_of(ra, "version").to_string(),
            resource: str_of(ra, "resource").to_string(),
            subresource: str_of(ra, "subresource").to_string(),
            namespace: str_of(ra, "namespace").to_string(),
            name: str_of(ra, "name").to_string(),
            ..Default::default()
        }
    } else {
        let nra = spec
            .get("nonResourceAttributes")
            .cloned()
            .unwrap_or_default();
        Attributes {
            user,
            verb: str_of(&nra, "verb").to_string(),
            resource_request: false,
            path: str_of(&nra, "path").to_string(),
            ..Default::default()
        }
    }
}

/// The user a SubjectAccessReview names, exactly as given: unlike
/// impersonation, no `system:authenticated` is added.
fn user_from_spec(spec: &Value) -> UserInfo {
    let extra: BTreeMap<String, Vec<String>> = spec
        .get("extra")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let vals = v
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default();
                    (k.clone(), vals)
                })
                .collect()
        })
        .unwrap_or_default();
    UserInfo {
        username: str_of(spec, "user").to_string(),
        uid: str_of(spec, "uid").to_string(),
        groups: strings_of(spec, "groups"),
        extra,
    }
}

fn access_status(rbac: &RbacSnapshot, attrs: &Attributes) -> Value {
    let eval = rbac::evaluate(rbac, attrs);
    let mut status = Map::new();
    status.insert("allowed".into(), json!(eval.decision == Decision::Allow));
    // `denied` is omitempty and RBAC never denies outright, so it never appears.
    if !eval.reason.is_empty() {
        status.insert("reason".into(), json!(eval.reason));
    }
    Value::Object(status)
}

/// `SubjectAccessReview` (`authorization.k8s.io/v1`): the request object
/// with `status` {allowed, denied, reason} filled in.
pub fn subject_access_review(rbac: &RbacSnapshot, review: &Value) -> Value {
    let spec = spec_of(review);
    let attrs = attributes_from_spec(&spec, user_from_spec(&spec));
    let status = access_status(rbac, &attrs);
    response(
        review,
        "SubjectAccessReview",
        AUTHORIZATION_V1,
        spec,
        status,
    )
}

/// `SelfSubjectAccessReview` for the calling user.
pub fn self_subject_access_review(rbac: &RbacSnapshot, user: &UserInfo, review: &Value) -> Value {
    let spec = spec_of(review);
    let attrs = attributes_from_spec(&spec, user.clone());
    let status = access_status(rbac, &attrs);
    response(
        review,
        "SelfSubjectAccessReview",
        AUTHORIZATION_V1,
        spec,
        status,
    )
}

/// `SelfSubjectRulesReview` for the calling user in `spec.namespace`.
/// (An empty namespace is a 400; see [`validate_self_subject_rules_review`].)
pub fn self_subject_rules_review(rbac: &RbacSnapshot, user: &UserInfo, review: &Value) -> Value {
    let namespace = str_of(&spec_of(review), "namespace").to_string();
    let rules = rbac::rules_for(rbac, user, &namespace);
    let mut status = Map::new();
    status.insert(
        "resourceRules".into(),
        Value::Array(
            rules
                .resource_rules
                .iter()
                .map(rbac::PolicyRule::to_value)
                .collect(),
        ),
    );
    status.insert(
        "nonResourceRules".into(),
        Value::Array(
            rules
                .non_resource_rules
                .iter()
                .map(rbac::PolicyRule::to_value)
                .collect(),
        ),
    );
    status.insert(
        "incomplete".into(),
        json!(!rules.evaluation_error.is_empty()),
    );
    if !rules.evaluation_error.is_empty() {
        status.insert("evaluationError".into(), json!(rules.evaluation_error));
    }
    // The real handler answers with a new object: the spec is not echoed.
    let bare = json!({"apiVersion": review.get("apiVersion").cloned().unwrap_or(Value::Null)});
    response(
        &bare,
        "SelfSubjectRulesReview",
        AUTHORIZATION_V1,
        json!({}),
        Value::Object(status),
    )
}

/// `SelfSubjectReview` (`authentication.k8s.io/v1`, `kubectl auth whoami`):
/// `status.userInfo` of the calling user (after impersonation).
pub fn self_subject_review(user: &UserInfo, review: &Value) -> Value {
    let bare = json!({"apiVersion": review.get("apiVersion").cloned().unwrap_or(Value::Null),
                      "metadata": review.get("metadata").cloned().unwrap_or(Value::Null)});
    let mut out = response(
        &bare,
        "SelfSubjectReview",
        AUTHENTICATION_V1,
        Value::Null,
        json!({"userInfo": user_info_json(user)}),
    );
    // SelfSubjectReview has no spec.
    if let Some(o) = out.as_object_mut() {
        o.remove("spec");
    }
    out
}

/// `authentication.k8s.io/v1` `UserInfo`, every field omitempty.
fn user_info_json(u: &UserInfo) -> Value {
    let mut user = Map::new();
    if !u.username.is_empty() {
        user.insert("username".into(), json!(u.username));
    }
    if !u.uid.is_empty() {
        user.insert("uid".into(), json!(u.uid));
    }
    if !u.groups.is_empty() {
        user.insert("groups".into(), json!(u.groups));
    }
    if !u.extra.is_empty() {
        user.insert("extra".into(), json!(u.extra));
    }
    Value::Object(user)
}

/// `TokenReview`: `authenticated` with the user, or an error string.
/// Audiences in the answer are the review's `spec.audiences` (or the API
/// server's own); use [`review_token`] to also check them against the token.
pub fn token_review(review: &Value, result: Result<UserInfo, String>) -> Value {
    let wanted = audiences_or_default(&spec_of(review));
    token_review_with_audiences(review, result.map(|u| (u, wanted)))
}

/// A TokenReview's or TokenRequest's `spec.audiences`, or the API
/// server's own when it names none.
pub fn audiences_or_default(spec: &Value) -> Vec<String> {
    let wanted = strings_of(spec, "audiences");
    if wanted.is_empty() {
        vec![authn::ISSUER.to_string()]
    } else {
        wanted
    }
}

/// `TokenReview` with the authenticated audiences already decided.
pub fn token_review_with_audiences(
    review: &Value,
    result: Result<(UserInfo, Vec<String>), String>,
) -> Value {
    let spec = spec_of(review);
    let status = match result {
        Ok((u, audiences)) => {
            json!({"authenticated": true, "user": user_info_json(&u), "audiences": audiences})
        }
        // `authenticated: false` is omitted and `user` is an empty struct,
        // as the real server serializes them.
        Err(e) if e.is_empty() => json!({"user": {}}),
        Err(e) => json!({"user": {}, "error": e}),
    };
    response(review, "TokenReview", AUTHENTICATION_V1, spec, status)
}

/// Authenticates a ServiceAccount token at `now` the way every request is
/// authenticated: signature, expiry, the bound ServiceAccount still existing
/// with the same uid, and the token's audiences. `service_account_uid(ns,
/// name)` looks up the current uid of a ServiceAccount.
pub fn authenticate_service_account_token(
    issuer: &TokenIssuer,
    token: &str,
    now: i64,
    wanted_audiences: &[String],
    service_account_uid: impl Fn(&str, &str) -> Option<String>,
) -> Result<(UserInfo, Vec<String>), String> {
    let verified = issuer.verify_token(token, now).map_err(|e| match e {
        AuthnError::Expired => {
            "[invalid bearer token, service account token has expired]".to_string()
        }
        other => format!("[invalid bearer token, {other}]"),
    })?;
    let c = &verified.claims;
    match service_account_uid(&c.namespace, &c.name) {
        None => {
            return Err(format!(
                "[invalid bearer token, serviceaccounts \"{}\" not found]",
                c.name
            ));
        }
        Some(uid) if uid != c.uid => {
            return Err(format!(
                "[invalid bearer token, service account UID ({uid}) does not match claim ({})]",
                c.uid
            ));
        }
        Some(_) => {}
    }
    let audiences = authn::authenticated_audiences(&c.audiences, wanted_audiences);
    if audiences.is_empty() {
        let wanted = if wanted_audiences.is_empty() {
            vec![authn::ISSUER.to_string()]
        } else {
            wanted_audiences.to_vec()
        };
        return Err(format!(
            "[invalid bearer token, token audiences {} is invalid for the target audiences {}]",
            go_quoted_list(&c.audiences),
            go_quoted_list(&wanted)
        ));
    }
    Ok((verified.user(), audiences))
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
fn go_quoted_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(" "))
}

/// A complete TokenReview for a ServiceAccount token minted by `issuer`.
/// Tokens that are not ServiceAccount tokens (the admin token) are the
/// caller's to recognize first.
pub fn review_token(
    issuer: &TokenIssuer,
    review: &Value,
    now: i64,
    service_account_uid: impl Fn(&str, &str) -> Option<String>,
) -> Value {
    let spec = spec_of(review);
    let wanted = strings_of(&spec, "audiences");
    let result = authenticate_service_account_token(
        issuer,
        str_of(&spec, "token"),
        now,
        &wanted,
        service_account_uid,
    );
    token_review_with_audiences(review, result)
}

fn invalid(kind: &str, group: &str, causes: Vec<Cause>) -> Result<(), ApiError> {
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(group, kind, "", causes))
    }
}

fn access_review_causes(spec: &Value) -> Vec<Cause> {
    let ra = spec.get("resourceAttributes").filter(|v| !v.is_null());
    let nra = spec.get("nonResourceAttributes").filter(|v| !v.is_null());
    let mut causes = Vec::new();
    match (ra, nra) {
        (Some(_), Some(n)) => causes.push(Cause::new(
            "FieldValueInvalid",
            "spec.nonResourceAttributes",
            format!("Invalid value: {n}: cannot be specified in combination with resourceAttributes"),
        )),
        (None, None) => causes.push(Cause::new(
            "FieldValueInvalid",
            "spec.resourceAttributes",
            "Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified",
        )),
        _ => {}
    }
    causes
}

/// The 422 the real server answers for a SubjectAccessReview without
/// exactly one of resource/non-resource attributes, or without a user or group.
pub fn validate_subject_access_review(review: &Value) -> Result<(), ApiError> {
    let spec = spec_of(review);
    let mut causes = access_review_causes(&spec);
    if str_of(&spec, "user").is_empty() && strings_of(&spec, "groups").is_empty() {
        causes.push(Cause::new(
            "FieldValueInvalid",
            "spec.user",
            "Invalid value: \"\": at least one of user or group must be specified",
        ));
    }
    invalid("SubjectAccessReview", "authorization.k8s.io", causes)
}

/// The 422 for a SelfSubjectAccessReview without exactly one of
/// resource/non-resource attributes.
pub fn validate_self_subject_access_review(review: &Value) -> Result<(), ApiError> {
    invalid(
        "SelfSubjectAccessReview",
        "authorization.k8s.io",
        access_review_causes(&spec_of(review)),
    )
}

/// The 400 `no namespace on request` of a SelfSubjectRulesReview without
/// `spec.namespace`.
pub fn validate_self_subject_rules_review(review: &Value) -> Result<(), ApiError> {
    if str_of(&spec_of(review), "namespace").is_empty() {
        return Err(ApiError::bad_request("no namespace on request"));
    }
    Ok(())
}

/// The 400 of a TokenReview without `spec.token`.
pub fn validate_token_review(review: &Value) -> Result<(), ApiError> {
    if str_of(&spec_of(review), "token").is_empty() {
        return Err(ApiError::bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
