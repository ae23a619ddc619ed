//! The authentication and authorization APIs over HTTP: TokenRequest
//! (`serviceaccounts/NAME/token`) and the review kinds (TokenReview, the
//! SubjectAccessReviews, SelfSubjectReview, SelfSubjectRulesReview), on
//! top of `crate::auth`'s token issuer and RBAC evaluation.

use hyper::header::HeaderValue;
use serde_json::{Value, json};

use super::not_served;
use crate::auth::authn::ServiceAccountClaims;
use crate::auth::reviews;
use crate::errors::{ApiError, Cause};
use crate::http::{self, Resp};
use crate::objects;
use crate::request::Call;
use crate::resources::ResourceDef;
use crate::shared;

fn format_secs(secs: u64) -> String {
    if secs.is_multiple_of(60) {
        let m = secs / 60;
        if m == 1 {
            "1 minute".to_string()
        } else {
            format!("{m} minutes")
        }
    } else {
        format!("{secs} seconds")
    }
}

/// `POST …/serviceaccounts/NAME/token`: a signed ServiceAccount token
/// with the requested audiences, its lifetime kept within the server's
/// minimum and maximum (shortened with a warning, as the real server does).
pub(super) fn token_request(call: &Call) -> Result<Resp, ApiError> {
    let body = call.json_body()?;
    let ns = call.info.namespace.clone();
    let name = call.info.name.clone();
    let controls = &call.shared.controls;
    let min = controls.min_token_expiration().as_secs();
    let requested = body["spec"]["expirationSeconds"].as_i64().unwrap_or(3600);
    if requested < min as i64 {
        return Err(ApiError::invalid(
            "authentication.k8s.io",
            "TokenRequest",
            &name,
            vec![Cause::new(
                "FieldValueInvalid",
                "spec.expirationSeconds",
                format!(
                    "Invalid value: {requested}: may not specify a duration less than {}",
                    format_secs(min)
                ),
            )],
        ));
    }
    if requested > 1 << 32 {
        return Err(ApiError::invalid(
            "authentication.k8s.io",
            "TokenRequest",
            &name,
            vec![Cause::new(
                "FieldValueTooLong",
                "spec.expirationSeconds",
                format!(
                    "Invalid value: {requested}: may not specify a duration larger than 2^32 seconds"
                ),
            )],
        ));
    }
    let mut effective = requested;
    let mut warning = None;
    if let Some(max) = controls.max_token_expiration() {
        let max = max.as_secs() as i64;
        if max > 0 && effective > max {
            warning = Some(format!(
                "requested expiration of {requested} seconds shortened to {max} seconds"
            ));
            effective = max;
        }
    }
    let audiences = reviews::audiences_or_default(&body["spec"]);
    let sa_uid = {
        let st = call.shared.state.lock().unwrap();
        let gr = crate::resources::GroupResource {
            group: String::new(),
            resource: "serviceaccounts".into(),
        };
        st.get(&gr, &(ns.clone(), name.clone())).map(|sa| {
            sa["metadata"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
    }
    .ok_or_else(|| ApiError::not_found("", "serviceaccounts", &name))?;
    admit(call, &ns, &name, &body, requested, &audiences)?;
    let now = jiff::Timestamp::now().as_second();
    let claims = ServiceAccountClaims {
        namespace: ns.clone(),
        name: name.clone(),
        uid: sa_uid,
        audiences: audiences.clone(),
        issued_at: now,
        expires_at: now + effective,
    };
    let token = call.shared.issuer.issue(&claims);
    let expiration = jiff::Timestamp::from_second(claims.expires_at)
        .map(|t| t.to_string())
        .unwrap_or_default();
    let mut spec = body["spec"].clone();
    if !spec.is_object() {
        spec = json!({});
    }
    spec["audiences"] = json!(audiences);
    spec["expirationSeconds"] = json!(effective);
    if spec.get("boundObjectRef").is_none() {
        spec["boundObjectRef"] = Value::Null;
    }
    let out = json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": objects::now_rfc3339()},
        "spec": spec,
        "status": {"token": token, "expirationTimestamp": expiration},
    });
    let mut resp = http::json_response(201, &out);
    if let Some(w) = warning
        && let Ok(v) = HeaderValue::from_str(&format!("299 - \"{w}\""))
    {
        resp.headers_mut().insert("warning", v);
    }
    Ok(resp)
}

/// Runs the admission policies over a TokenRequest as the real server
/// does (`TokenREST.Create`: after its static validation, with the
/// audiences and `expirationSeconds` defaulted, before the server's
/// maximum shortens it): a CREATE of `serviceaccounts/token` whose
/// `object` is the TokenRequest.
fn admit(
    call: &Call,
    ns: &str,
    name: &str,
    body: &Value,
    expiration_seconds: i64,
    audiences: &[String],
) -> Result<(), ApiError> {
    let mut st = call.shared.state.lock().unwrap();
    let Some(def) = st
        .catalogue
        .resources_in("", "v1")
        .into_iter()
        .find(|d| d.plural == "serviceaccounts")
    else {
        return Ok(());
    };
    let mut spec = body["spec"].clone();
    if !spec.is_object() {
        spec = json!({});
    }
    spec["audiences"] = json!(audiences);
    spec["expirationSeconds"] = json!(expiration_seconds);
    let object = json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": objects::now_rfc3339()},
        "spec": spec,
        "status": {},
    });
    crate::admission::admit(
        &mut st,
        &crate::admission::Request {
            operation: crate::admission::Operation::Create,
            def: &def,
            subresource: "token",
            namespace: ns,
            name,
            object: Some(&object),
            old_object: None,
            user: call.user,
            dry_run: call.query.get("dryRun").is_some(),
            field_manager: "",
        },
    )
    .map(drop)
}

/// `POST` of a TokenReview or an access review: answered from the token
/// issuer and the RBAC snapshot, never stored.
pub(super) fn review(call: &Call, def: &ResourceDef) -> Result<Resp, ApiError> {
    let mut body = call.json_body()?;
    body["apiVersion"] = json!(def.api_version());
    body["kind"] = json!(def.kind);
    let snap = call.snapshot;
    let out = match def.plural.as_str() {
        "tokenreviews" => {
            reviews::validate_token_review(&body)?;
            let token = body["spec"]["token"].as_str().unwrap_or_default();
            if token == call.shared.admin_token {
                reviews::token_review(&body, Ok(shared::admin_user()))
            } else if token == call.shared.loopback_token {
                reviews::token_review(&body, Ok(shared::loopback_user()))
            } else {
                let now = jiff::Timestamp::now().as_second();
                reviews::review_token(&call.shared.issuer, &body, now, |ns, name| {
                    shared::service_account_uid(call.shared, ns, name)
                })
            }
        }
        "selfsubjectreviews" => reviews::self_subject_review(call.user, &body),
        "subjectaccessreviews" => {
            reviews::validate_subject_access_review(&body)?;
            reviews::subject_access_review(snap, &body)
        }
        "localsubjectaccessreviews" => {
            reviews::validate_subject_access_review(&body)?;
            let ns = call.info.namespace.as_str();
            let asked = body["spec"]["resourceAttributes"]["namespace"]
                .as_str()
                .unwrap_or_default();
            if body["spec"]
                .get("nonResourceAttributes")
                .is_some_and(|v| !v.is_null())
            {
                return Err(ApiError::invalid(
                    "authorization.k8s.io",
                    "LocalSubjectAccessReview",
                    "",
                    vec![Cause::new(
                        "FieldValueInvalid",
                        "spec.nonResourceAttributes",
                        "Invalid value: disallowed on this kind of request",
                    )],
                ));
            }
            if asked != ns {
                return Err(ApiError::invalid(
                    "authorization.k8s.io",
                    "LocalSubjectAccessReview",
                    "",
                    vec![Cause::new(
                        "FieldValueInvalid",
                        "spec.resourceAttributes.namespace",
                        format!("Invalid value: {asked:?}: must match metadata.namespace"),
                    )],
                ));
            }
            let mut out = reviews::subject_access_review(snap, &body);
            out["kind"] = json!("LocalSubjectAccessReview");
            out["metadata"]["namespace"] = json!(ns);
            out
        }
        "selfsubjectaccessreviews" => {
            reviews::validate_self_subject_access_review(&body)?;
            reviews::self_subject_access_review(snap, call.user, &body)
        }
        "selfsubjectrulesreviews" => {
            reviews::validate_self_subject_rules_review(&body)?;
            reviews::self_subject_rules_review(snap, call.user, &body)
        }
        _ => return Err(not_served()),
    };
    let mut out = out;
    if out.get("metadata").is_none_or(Value::is_null) {
        out["metadata"] = json!({});
    }
    Ok(http::json_response(201, &out))
}
