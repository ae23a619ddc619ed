//! ValidatingAdmissionPolicy (`admissionregistration.k8s.io/v1`): every
//! create, update (PUT, every patch type, server-side apply, `/status`) and
//! delete a client sends is checked against the stored policies and their
//! bindings after the object's own validation and before it is stored, as
//! the real server's admission chain does.
//!
//! Implemented as the real server does it: a policy applies through each
//! binding naming it (`spec.policyName`); `spec.matchConstraints` and the
//! binding's `spec.matchResources` select the request (operations, groups,
//! versions, resources with subresources such as `federatedclusters/status`,
//! scope, resource names, excluded rules, namespace and object label
//! selectors); then `matchConditions` (all must be true; an error is
//! handled by `failurePolicy`), `variables` (lazy, each seeing the ones
//! before it), `validations` (`expression`, `message`, `messageExpression`,
//! `reason`) and `auditAnnotations` (only their errors matter here) over
//! `object`, `oldObject`, `request`, `params` and `namespaceObject`. A
//! denial is a 403 `Forbidden` (or the validation's `reason`, default 422
//! `Invalid`) worded `RESOURCE "NAME" is forbidden: ValidatingAdmissionPolicy
//! 'P' with binding 'B' denied request: MESSAGE`; `validationActions: [Warn]`
//! becomes a `Warning` header.
//!
//! Not implemented: `authorizer` in expressions, cost budgets, type
//! checking against schemas (`status.typeChecking`; the status stays
//! empty), `Audit` (the sandbox keeps no audit log), `matchPolicy: Exact`
//! versus `Equivalent` (every resource has one version), optional field
//! syntax (`?.`) and the CEL libraries beyond those of
//! [`crate::schema`]'s interpreter. Writes the sandbox makes itself
//! (garbage collection, namespace cleanup, bootstrap objects), reviews and
//! `namespaces/NAME/finalize` are not admitted; `/scale` writes are
//! admitted as writes of the workload; a TokenRequest is admitted as a
//! CREATE of `serviceaccounts/token` with the TokenRequest as `object`
//! (`request.kind` names the ServiceAccount, where the real server names
//! `authentication.k8s.io/v1 TokenRequest`). The policies and bindings
//! themselves are never subject to policies.

mod matching;
mod validation;

#[cfg(test)]
mod tests;

pub(crate) use validation::prepare;

use crate::auth::UserInfo;
use crate::auth::rbac::label_selector_matches;
use crate::compiled_policy::{Cache, Compiled, Denial};
use crate::errors::{ApiError, qualified};
use crate::resources::{GroupResource, ResourceDef};
use crate::store::State;
use serde_json::{Value, json};
use std::sync::Arc;

/// The API group of the policies.
pub(crate) const GROUP: &str = "admissionregistration.k8s.io";
/// Resource name of ValidatingAdmissionPolicies.
pub(crate) const POLICIES: &str = "validatingadmissionpolicies";
/// Resource name of ValidatingAdmissionPolicyBindings.
pub(crate) const BINDINGS: &str = "validatingadmissionpolicybindings";

fn gr(resource: &str) -> GroupResource {
    GroupResource {
        group: GROUP.into(),
        resource: resource.into(),
    }
}

/// Whether `def` is one of the policy kinds themselves.
pub(crate) fn is_policy_kind(def: &ResourceDef) -> bool {
    def.group == GROUP && (def.plural == POLICIES || def.plural == BINDINGS)
}

/// The admission operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    Create,
    Update,
    Delete,
}

impl Operation {
    /// As in rules and `request.operation`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
        }
    }

    fn options_kind(self) -> &'static str {
        match self {
            Operation::Create => "CreateOptions",
            Operation::Update => "UpdateOptions",
            Operation::Delete => "DeleteOptions",
        }
    }
}

/// One write to admit.
pub(crate) struct Request<'a> {
    pub operation: Operation,
    pub def: &'a ResourceDef,
    /// `status`, or empty for the resource itself.
    pub subresource: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    /// The object as it would be stored (`None` on delete).
    pub object: Option<&'a Value>,
    /// The stored object (`None` on create).
    pub old_object: Option<&'a Value>,
    pub user: &'a UserInfo,
    pub dry_run: bool,
    /// `fieldManager` of the write, if any.
    pub field_manager: &'a str,
}

/// A request with what matching needs from the store.
pub(super) struct Attributes<'a> {
    pub operation: Operation,
    pub def: &'a ResourceDef,
    pub subresource: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    pub object: Option<&'a Value>,
    pub old_object: Option<&'a Value>,
    pub namespace_object: Option<&'a Value>,
}

impl Attributes<'_> {
    /// Requests of Namespace objects are cluster-scoped yet select by
    /// namespace labels (their own).
    fn is_namespace(&self) -> bool {
        self.def.group.is_empty() && self.def.plural == "namespaces"
    }
}

/// The first denial and who made it.
struct Denied {
    policy: String,
    binding: Option<String>,
    denial: Denial,
}

/// Admits a write: `Ok` with the warnings of `Warn` bindings, or the
/// denial of the first policy and binding that denies it.
pub(crate) fn admit(st: &mut State, req: &Request<'_>) -> Result<Vec<String>, ApiError> {
    if is_policy_kind(req.def) {
        return Ok(Vec::new());
    }
    let bindings: Vec<Arc<Value>> = st
        .range(&gr(BINDINGS), None, None)
        .map(|(_, b)| b.clone())
        .collect();
    if bindings.is_empty() {
        return Ok(Vec::new());
    }
    let policies: Vec<Arc<Value>> = st
        .range(&gr(POLICIES), None, None)
        .map(|(_, p)| p.clone())
        .collect();
    let mut cache = std::mem::take(&mut st.admission);
    let result = admit_with(st, &mut cache, req, &policies, &bindings);
    st.admission = cache;
    result
}

fn admit_with(
    st: &State,
    cache: &mut Cache,
    req: &Request<'_>,
    policies: &[Arc<Value>],
    bindings: &[Arc<Value>],
) -> Result<Vec<String>, ApiError> {
    let ns_key = (String::new(), req.namespace.to_string());
    let is_namespace = req.def.group.is_empty() && req.def.plural == "namespaces";
    let namespace_object = (!req.namespace.is_empty() && !is_namespace)
        .then(|| st.get(&crate::resources::namespaces_gr(), &ns_key))
        .flatten()
        .map(|n| &**n);
    let a = Attributes {
        operation: req.operation,
        def: req.def,
        subresource: req.subresource,
        namespace: req.namespace,
        name: req.name,
        object: req.object,
        old_object: req.old_object,
        namespace_object,
    };
    let request = request_json(req);
    let namespace_input = namespace_view(namespace_object);
    let null = Value::Null;
    let mut warnings = Vec::new();
    let mut denied: Option<Denied> = None;
    let mut deny = |policy: &str, binding: Option<&str>, denial: Denial| {
        denied.get_or_insert_with(|| Denied {
            policy: policy.to_string(),
            binding: binding.map(String::from),
            denial,
        });
    };
    for policy in policies {
        let name = policy["metadata"]["name"].as_str().unwrap_or_default();
        let mine: Vec<&Arc<Value>> = bindings
            .iter()
            .filter(|b| b["spec"]["policyName"].as_str() == Some(name))
            .collect();
        if mine.is_empty() || !matching::matches(&policy["spec"]["matchConstraints"], &a) {
            continue;
        }
        let compiled = cache.get(policy);
        let compiled = match &*compiled {
            Ok(c) => c,
            Err(e) => {
                if policy["spec"]["failurePolicy"] != "Ignore" {
                    deny(name, None, config_error("policy", e));
                }
                continue;
            }
        };
        for binding in mine {
            let bname = binding["metadata"]["name"].as_str().unwrap_or_default();
            if let Some(mr) = binding["spec"]
                .get("matchResources")
                .filter(|m| m.is_object())
                && !matching::matches(mr, &a)
            {
                continue;
            }
            let params = match params(st, compiled, &binding["spec"], req.namespace) {
                Ok(p) => p,
                Err(e) => {
                    if !compiled.ignore_failures {
                        deny(name, Some(bname), config_error("binding", &e));
                    }
                    continue;
                }
            };
            for param in &params {
                let inputs = [
                    ("object", req.object.unwrap_or(&null)),
                    ("oldObject", req.old_object.unwrap_or(&null)),
                    ("request", &request),
                    ("params", param.as_deref().unwrap_or(&null)),
                    ("namespaceObject", &namespace_input),
                ];
                for d in compiled.evaluate(&inputs) {
                    for action in binding["spec"]["validationActions"]
                        .as_array()
                        .into_iter()
                        .flatten()
                    {
                        match action.as_str() {
                            Some("Deny") => deny(name, Some(bname), d.clone()),
                            Some("Warn") => warnings.push(format!(
                                "Validation failed for ValidatingAdmissionPolicy '{name}' with binding '{bname}': {}",
                                d.message
                            )),
                            _ => {}
                        }
                    }
                }
            }
        }
    }
    match denied {
        Some(d) => Err(forbidden(req, &d)),
        None => Ok(warnings),
    }
}

fn config_error(what: &str, e: &str) -> Denial {
    Denial {
        message: format!("failed to configure {what}: {e}"),
        reason: None,
    }
}

/// The objects a binding's `paramRef` names (`None` = `params` is null):
/// one null when the policy has no `paramKind` or the binding no
/// `paramRef`; none when nothing is found and `parameterNotFoundAction`
/// is `Allow` (the policy then validates nothing).
fn params(
    st: &State,
    compiled: &Compiled,
    binding: &Value,
    namespace: &str,
) -> Result<Vec<Option<Arc<Value>>>, String> {
    let (Some((api_version, kind)), Some(pr)) = (
        &compiled.param_kind,
        binding.get("paramRef").filter(|p| p.is_object()),
    ) else {
        return Ok(vec![None]);
    };
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let def = st
        .catalogue
        .resources_in(group, version)
        .into_iter()
        .find(|d| &d.kind == kind)
        .ok_or_else(|| format!("paramKind kind `{api_version}, Kind={kind}` not known"))?;
    let pr_ns = pr["namespace"].as_str().unwrap_or_default();
    let ns = if def.namespaced {
        if !pr_ns.is_empty() {
            pr_ns
        } else if !namespace.is_empty() {
            namespace
        } else {
            return Err(
                "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
                    .into(),
            );
        }
    } else if !pr_ns.is_empty() {
        return Err(
            "paramRef.namespace must not be provided for a cluster-scoped `paramKind`".into(),
        );
    } else {
        ""
    };
    let found: Vec<Option<Arc<Value>>> = match pr["name"].as_str().filter(|n| !n.is_empty()) {
        Some(n) => st
            .get(&def.storage_key(), &(ns.to_string(), n.to_string()))
            .cloned()
            .map(Some)
            .into_iter()
            .collect(),
        None => st
            .range(&def.storage_key(), def.namespaced.then_some(ns), None)
            .filter(|(_, o)| label_selector_matches(&pr["selector"], o["metadata"].get("labels")))
            .map(|(_, o)| Some(o.clone()))
            .collect(),
    };
    if found.is_empty() && pr["parameterNotFoundAction"] == "Deny" {
        return Err(
            "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
        );
    }
    Ok(found)
}

/// What `namespaceObject` shows of a namespace: its spec, status and the
/// metadata the real server keeps (not managedFields).
fn namespace_view(ns: Option<&Value>) -> Value {
    let Some(ns) = ns else {
        return Value::Null;
    };
    let mut v = json!({"spec": ns["spec"], "status": ns["status"], "metadata": {}});
    for key in [
        "name",
        "generateName",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "finalizers",
    ] {
        if let Some(x) = ns["metadata"].get(key) {
            v["metadata"][key] = x.clone();
        }
    }
    v
}

/// `request`: the AdmissionRequest the real server builds.
fn request_json(req: &Request<'_>) -> Value {
    let def = req.def;
    let kind = json!({"group": def.group, "version": def.version, "kind": def.kind});
    let resource = json!({"group": def.group, "version": def.version, "resource": def.plural});
    let mut options = json!({"kind": req.operation.options_kind(), "apiVersion": "meta.k8s.io/v1"});
    if !req.field_manager.is_empty() && req.operation != Operation::Delete {
        options["fieldManager"] = json!(req.field_manager);
    }
    if req.dry_run {
        options["dryRun"] = json!(["All"]);
    }
    json!({
        "uid": uuid::Uuid::new_v4().to_string(),
        "kind": kind,
        "resource": resource,
        "subResource": req.subresource,
        "requestKind": kind,
        "requestResource": resource,
        "requestSubResource": req.subresource,
        "name": req.name,
        "namespace": req.namespace,
        "operation": req.operation.as_str(),
        "userInfo": {
            "username": req.user.username,
            "uid": req.user.uid,
            "groups": req.user.groups,
            "extra": req.user.extra,
        },
        "dryRun": req.dry_run,
        "options": options,
    })
}

/// The denial as the real server answers it (`admission.NewForbidden`
/// with the decision's reason and code).
fn forbidden(req: &Request<'_>, d: &Denied) -> ApiError {
    let message = match &d.binding {
        Some(b) => format!(
            "ValidatingAdmissionPolicy '{}' with binding '{b}' denied request: {}",
            d.policy, d.denial.message
        ),
        None => format!(
            "ValidatingAdmissionPolicy '{}' denied request: {}",
            d.policy, d.denial.message
        ),
    };
    let reason = d.denial.reason.as_deref().unwrap_or("Invalid");
    let code = match reason {
        "Forbidden" => 403,
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    };
    let name = if req.name.is_empty() {
        "Unknown"
    } else {
        req.name
    };
    let mut details =
        json!({"name": name, "kind": req.def.plural, "causes": [{"message": message}]});
    if !req.def.group.is_empty() {
        details["group"] = json!(req.def.group);
    }
    ApiError {
        details: Some(details),
        ..ApiError::new(
            code,
            reason,
            format!(
                "{} \"{name}\" is forbidden: {message}",
                qualified(&req.def.group, &req.def.plural)
            ),
        )
    }
}
