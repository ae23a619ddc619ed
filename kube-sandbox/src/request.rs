//! One authenticated, authorized resource request ([`Call`]) and the
//! request-level helpers the verbs and the watch stream share (selectors,
//! `includeObject`, the served version of an object).

use crate::auth::UserInfo;
use crate::auth::rbac::RbacSnapshot;
use crate::errors::ApiError;
use crate::http::{Query, RequestInfo};
use crate::objects::{self, WriteOpts};
use crate::resources::ResourceDef;
use crate::selector::{FieldSelector, LabelSelector};
use crate::shared::Shared;
use crate::store::ObjKey;
use crate::table::IncludeObject;
use bytes::Bytes;
use hyper::Method;
use hyper::header::{self, HeaderMap};
use serde_json::{Value, json};
use std::sync::Arc;

/// One resource request, authenticated and authorized.
pub struct Call<'a> {
    pub shared: &'a Arc<Shared>,
    pub method: &'a Method,
    pub headers: &'a HeaderMap,
    pub info: &'a RequestInfo,
    pub query: &'a Query,
    pub user: &'a UserInfo,
    pub snapshot: &'a Arc<RbacSnapshot>,
    pub body: Bytes,
}

impl Call<'_> {
    pub(crate) fn wants_table(&self) -> bool {
        self.headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("as=Table"))
    }

    pub(crate) fn manager(&self) -> String {
        if let Some(m) = self.query.get("fieldManager") {
            return m.to_string();
        }
        self.headers
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .and_then(|ua| ua.split('/').next())
            .filter(|s| !s.is_empty())
            .unwrap_or("unknown")
            .to_string()
    }

    pub(crate) fn write_opts(&self, is_put: bool) -> WriteOpts {
        WriteOpts {
            manager: self.manager(),
            dry_run: self.query.get("dryRun") == Some("All"),
            is_put,
            managed_fields_done: false,
            field_validation: objects::FieldValidation::parse(self.query.get("fieldValidation")),
            warnings: Default::default(),
            user: Some(self.user.clone()),
        }
    }

    pub(crate) fn key(&self, def: &ResourceDef) -> ObjKey {
        let ns = if def.namespaced {
            self.info.namespace.clone()
        } else {
            String::new()
        };
        (ns, self.info.name.clone())
    }

    pub(crate) fn json_body(&self) -> Result<Value, ApiError> {
        let ct = content_type(self);
        if crate::protobuf::is_protobuf(&ct) {
            return crate::protobuf::decode(&self.body)
                .map_err(|e| ApiError::unsupported_media_type(e.to_string()));
        }
        if ct == "application/yaml" {
            return serde_saphyr::from_slice(&self.body).map_err(|e| {
                ApiError::bad_request(format!("error decoding YAML request body: {e}"))
            });
        }
        serde_json::from_slice(&self.body).map_err(|e| {
            ApiError::bad_request(format!(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml ({e})"
            ))
        })
    }
}

/// Serializes an object as served in `def`'s version.
pub fn to_served(def: &ResourceDef, obj: &Arc<Value>) -> Arc<Value> {
    let av = def.api_version();
    if obj["apiVersion"].as_str() == Some(av.as_str()) {
        obj.clone()
    } else {
        // Conversion strategy None: only apiVersion changes between versions.
        let mut o = (**obj).clone();
        o["apiVersion"] = json!(av);
        Arc::new(o)
    }
}

/// `?includeObject=`.
pub fn include_object(q: &Query) -> IncludeObject {
    // An unknown value is the real server's default too.
    IncludeObject::parse(q.get("includeObject").unwrap_or_default()).unwrap_or_default()
}

/// Parsed list/watch selectors.
pub struct Selectors {
    pub labels: LabelSelector,
    pub fields: FieldSelector,
}

impl Selectors {
    /// From `labelSelector` / `fieldSelector` of a request for `def`;
    /// errors are 400s.
    pub fn from_query(q: &Query, def: &crate::resources::ResourceDef) -> Result<Self, ApiError> {
        let labels = LabelSelector::parse(q.get("labelSelector").unwrap_or_default())
            .map_err(ApiError::bad_request)?;
        let fields = FieldSelector::parse_with(
            q.get("fieldSelector").unwrap_or_default(),
            crate::events::fields_of(&def.group, &def.plural),
        )
        .map_err(ApiError::bad_request)?;
        Ok(Selectors { labels, fields })
    }

    /// Whether neither selector restricts anything.
    pub fn is_everything(&self) -> bool {
        self.labels.is_empty() && self.fields.terms.is_empty()
    }

    /// Whether an object is selected.
    pub fn matches(&self, obj: &Value) -> bool {
        self.labels
            .matches(obj["metadata"].get("labels").and_then(Value::as_object))
            && self.fields.matches(obj)
    }
}

pub(crate) fn content_type(call: &Call) -> String {
    call.headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_string()
}
