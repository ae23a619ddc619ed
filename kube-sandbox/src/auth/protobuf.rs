//! Request bodies in the Kubernetes protobuf wire format
//! (`application/vnd.kubernetes.protobuf`), decoded to the JSON the rest of
//! the server works with.
//!
//! kubectl's typed clients send protobuf for built-in kinds and client-go
//! never falls back to JSON: without this, `kubectl auth can-i`,
//! `kubectl auth whoami`, `kubectl create token`, `kubectl create sa` and
//! `kubectl create role|rolebinding|...` fail. The envelope is the 4-byte
//! magic `k8s\0` followed by a `runtime.Unknown` {typeMeta, raw}; `raw` is
//! the object's own message. Only the kinds below are known; fields this
//! server does not use (timestamps, managedFields, ownerReferences) are
//! skipped. Scalars at their zero value are left out, as Go's `omitempty`
//! JSON would; embedded messages are kept even when empty, because their
//! presence matters (`resourceAttributes` vs `nonResourceAttributes`).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

/// The protobuf media type of the real API server.
pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";

const MAGIC: &[u8] = b"k8s\0";

/// Whether a `Content-Type` header names the Kubernetes protobuf encoding.
pub fn is_protobuf(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case(CONTENT_TYPE))
}

/// Why a protobuf body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtobufError {
    #[error("body does not start with the kubernetes protobuf magic number")]
    NoMagic,
    #[error("protobuf body is truncated or malformed")]
    Malformed,
    #[error("protobuf decoding of {0} is not supported by kube-sandbox")]
    Unsupported(String),
}

/// How one field of a message maps to JSON.
enum F {
    Str(&'static str),
    Int(&'static str),
    Bool(&'static str),
    Msg(&'static str, &'static [(u32, F)]),
    RepStr(&'static str),
    RepMsg(&'static str, &'static [(u32, F)]),
    /// `map<string, string>`.
    MapStr(&'static str),
    /// `map<string, bytes>`: values base64 in JSON.
    MapBytes(&'static str),
    /// `map<string, ExtraValue>` (ExtraValue = `repeated string items = 1`).
    MapExtra(&'static str),
}

type Schema = &'static [(u32, F)];

static OBJECT_META: Schema = &[
    (1, F::Str("name")),
    (2, F::Str("generateName")),
    (3, F::Str("namespace")),
    (5, F::Str("uid")),
    (6, F::Str("resourceVersion")),
    (11, F::MapStr("labels")),
    (12, F::MapStr("annotations")),
    (14, F::RepStr("finalizers")),
];

static SELECTOR_REQUIREMENT: Schema = &[
    (1, F::Str("key")),
    (2, F::Str("operator")),
    (3, F::RepStr("values")),
];

static LABEL_SELECTOR: Schema = &[
    (1, F::MapStr("matchLabels")),
    (2, F::RepMsg("matchExpressions", SELECTOR_REQUIREMENT)),
];

static SELECTOR_ATTRIBUTES: Schema = &[
    (1, F::Str("rawSelector")),
    (2, F::RepMsg("requirements", SELECTOR_REQUIREMENT)),
];

static RESOURCE_ATTRIBUTES: Schema = &[
    (1, F::Str("namespace")),
    (2, F::Str("verb")),
    (3, F::Str("group")),
    (4, F::Str("version")),
    (5, F::Str("resource")),
    (6, F::Str("subresource")),
    (7, F::Str("name")),
    (8, F::Msg("fieldSelector", SELECTOR_ATTRIBUTES)),
    (9, F::Msg("labelSelector", SELECTOR_ATTRIBUTES)),
];

static NON_RESOURCE_ATTRIBUTES: Schema = &[(1, F::Str("path")), (2, F::Str("verb"))];

static SELF_SUBJECT_ACCESS_REVIEW_SPEC: Schema = &[
    (1, F::Msg("resourceAttributes", RESOURCE_ATTRIBUTES)),
    (2, F::Msg("nonResourceAttributes", NON_RESOURCE_ATTRIBUTES)),
];

static SUBJECT_ACCESS_REVIEW_SPEC: Schema = &[
    (1, F::Msg("resourceAttributes", RESOURCE_ATTRIBUTES)),
    (2, F::Msg("nonResourceAttributes", NON_RESOURCE_ATTRIBUTES)),
    (3, F::Str("user")),
    (4, F::RepStr("groups")),
    (5, F::MapExtra("extra")),
    (6, F::Str("uid")),
];

static SELF_SUBJECT_RULES_REVIEW_SPEC: Schema = &[(1, F::Str("namespace"))];

static BOUND_OBJECT_REFERENCE: Schema = &[
    (1, F::Str("kind")),
    (2, F::Str("apiVersion")),
    (3, F::Str("name")),
    (4, F::Str("uid")),
];

static TOKEN_REQUEST_SPEC: Schema = &[
    (1, F::RepStr("audiences")),
    (3, F::Msg("boundObjectRef", BOUND_OBJECT_REFERENCE)),
    (4, F::Int("expirationSeconds")),
];

static TOKEN_REVIEW_SPEC: Schema = &[(1, F::Str("token")), (2, F::RepStr("audiences"))];

static POLICY_RULE: Schema = &[
    (1, F::RepStr("verbs")),
    (2, F::RepStr("apiGroups")),
    (3, F::RepStr("resources")),
    (4, F::RepStr("resourceNames")),
    (5, F::RepStr("nonResourceURLs")),
];

static AGGREGATION_RULE: Schema = &[(1, F::RepMsg("clusterRoleSelectors", LABEL_SELECTOR))];

static SUBJECT: Schema = &[
    (1, F::Str("kind")),
    (2, F::Str("apiGroup")),
    (3, F::Str("name")),
    (4, F::Str("namespace")),
];

static ROLE_REF: Schema = &[
    (1, F::Str("apiGroup")),
    (2, F::Str("kind")),
    (3, F::Str("name")),
];

static OBJECT_REFERENCE: Schema = &[
    (1, F::Str("kind")),
    (2, F::Str("namespace")),
    (3, F::Str("name")),
    (4, F::Str("uid")),
    (5, F::Str("apiVersion")),
    (6, F::Str("resourceVersion")),
    (7, F::Str("fieldPath")),
];

static LOCAL_OBJECT_REFERENCE: Schema = &[(1, F::Str("name"))];

static NAMESPACE_SPEC: Schema = &[(1, F::RepStr("finalizers"))];

static SELF_SUBJECT_ACCESS_REVIEW: Schema = &[
    (1, F::Msg("metadata", OBJECT_META)),
    (2, F::Msg("spec", SELF_SUBJECT_ACCESS_REVIEW_SPEC)),
];
static SUBJECT_ACCESS_REVIEW: Schema = &[
    (1, F::Msg("metadata", OBJECT_META)),
    (2, F::Msg("spec", SUBJECT_ACCESS_REVIEW_SPEC)),
];
static SELF_SUBJECT_RULES_REVIEW: Schema = &[
    (1, F::Msg("metadata", OBJECT_META)),
    (2, F::Msg("spec", SELF_SUBJECT_RULES_REVIEW_SPEC)),
];
static TOKEN_REQUEST: Schema = &[
    (1, F::Msg("metadata", OBJECT_META)),
    (2, F::Msg("spec", TOKEN_REQUEST_SPEC)),
];
static TOKEN_REVIEW: Schema = &[
    (1, F::Msg("metadata", OBJECT_META)),
    (2, F::Msg("spec", TOKEN_REVIEW_SPEC)),
];
static SELF_SUBJECT_REVIEW: Schema = &[(1, F::Msg("metadata", OBJECT_META))];
static ROLE: Schema = &[
    (1, F::Msg("metadata", OBJECT_META)),
    (2, F::RepMsg("rules", POLICY_RULE)),
];
static CLUSTER_ROLE: Schema = &[
    (1, F::Msg("metadata", OBJECT_META)),
    (2, F::RepMsg("rules", POLICY_RULE)),
    (3, F::Msg("aggregationRule", AGGREGATION_RULE)),
];
static BINDING: Schema = &[
    (1, F::Msg("metadata", OBJECT_META)),
    (2, F::RepMsg("subjects", SUBJECT)),
    (3, F::Msg("roleRef", ROLE_REF)),
];
static SERVICE_ACCOUNT: Schema = &[
    (1, F::Msg("metadata", OBJECT_META)),
    (2, F::RepMsg("secrets", OBJECT_REFERENCE)),
    (3, F::RepMsg("imagePullSecrets", LOCAL_OBJECT_REFERENCE)),
    (4, F::Bool("automountServiceAccountToken")),
];
static NAMESPACE: Schema = &[
    (1, F::Msg("metadata", OBJECT_META)),
    (2, F::Msg("spec", NAMESPACE_SPEC)),
];
static SECRET: Schema = &[
    (1, F::Msg("metadata", OBJECT_META)),
    (2, F::MapBytes("data")),
    (3, F::Str("type")),
    (4, F::MapStr("stringData")),
    (5, F::Bool("immutable")),
];
static CONFIG_MAP: Schema = &[
    (1, F::Msg("metadata", OBJECT_META)),
    (2, F::MapStr("data")),
    (3, F::MapBytes("binaryData")),
    (4, F::Bool("immutable")),
];

fn schema_for(api_version: &str, kind: &str) -> Option<Schema> {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    Some(match (group, kind) {
        ("authorization.k8s.io", "SelfSubjectAccessReview") => SELF_SUBJECT_ACCESS_REVIEW,
        ("authorization.k8s.io", "SubjectAccessReview" | "LocalSubjectAccessReview") => {
            SUBJECT_ACCESS_REVIEW
        }
        ("authorization.k8s.io", "SelfSubjectRulesReview") => SELF_SUBJECT_RULES_REVIEW,
        ("authentication.k8s.io", "TokenRequest") => TOKEN_REQUEST,
        ("authentication.k8s.io", "TokenReview") => TOKEN_REVIEW,
        ("authentication.k8s.io", "SelfSubjectReview") => SELF_SUBJECT_REVIEW,
        ("rbac.authorization.k8s.io", "Role") => ROLE,
        ("rbac.authorization.k8s.io", "ClusterRole") => CLUSTER_ROLE,
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => BINDING,
        ("", "ServiceAccount") => SERVICE_ACCOUNT,
        ("", "Namespace") => NAMESPACE,
        ("", "Secret") => SECRET,
        ("", "ConfigMap") => CONFIG_MAP,
        _ => return None,
    })
}

/// One field on the wire.
enum Wire<'a> {
    Varint(u64),
    Len(&'a [u8]),
    Fixed,
}

struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, ProtobufError> {
        let mut v: u64 = 0;
        for i in 0..10 {
            let (&b, rest) = self.buf.split_first().ok_or(ProtobufError::Malformed)?;
            self.buf = rest;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(ProtobufError::Malformed)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ProtobufError> {
        if n > self.buf.len() {
            return Err(ProtobufError::Malformed);
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    fn next_field(&mut self) -> Result<Option<(u32, Wire<'a>)>, ProtobufError> {
        if self.buf.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let number = u32::try_from(key >> 3).map_err(|_| ProtobufError::Malformed)?;
        let wire = match key & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Wire::Fixed
            }
            2 => {
                let n = usize::try_from(self.varint()?).map_err(|_| ProtobufError::Malformed)?;
                Wire::Len(self.take(n)?)
            }
            5 => {
                self.take(4)?;
                Wire::Fixed
            }
            _ => return Err(ProtobufError::Malformed),
        };
        Ok(Some((number, wire)))
    }
}

fn fields(buf: &[u8]) -> impl Iterator<Item = Result<(u32, Wire<'_>), ProtobufError>> {
    let mut r = Reader { buf };
    std::iter::from_fn(move || r.next_field().transpose())
}

fn utf8(b: &[u8]) -> Result<String, ProtobufError> {
    String::from_utf8(b.to_vec()).map_err(|_| ProtobufError::Malformed)
}

/// A `map<string, V>` entry: key = 1, value = 2.
fn map_entry(b: &[u8]) -> Result<(String, &[u8]), ProtobufError> {
    let (mut key, mut value): (String, &[u8]) = (String::new(), &[]);
    for f in fields(b) {
        match f? {
            (1, Wire::Len(k)) => key = utf8(k)?,
            (2, Wire::Len(v)) => value = v,
            _ => {}
        }
    }
    Ok((key, value))
}

fn obj<'m>(out: &'m mut Map<String, Value>, name: &str) -> &'m mut Map<String, Value> {
    let v = out.entry(name).or_insert_with(|| json!({}));
    if !v.is_object() {
        *v = json!({});
    }
    v.as_object_mut().expect("just made an object")
}

fn arr<'m>(out: &'m mut Map<String, Value>, name: &str) -> &'m mut Vec<Value> {
    let v = out.entry(name).or_insert_with(|| json!([]));
    if !v.is_array() {
        *v = json!([]);
    }
    v.as_array_mut().expect("just made an array")
}

fn message(buf: &[u8], schema: Schema) -> Result<Map<String, Value>, ProtobufError> {
    let mut out = Map::new();
    for f in fields(buf) {
        let (number, wire) = f?;
        let Some((_, field)) = schema.iter().find(|(n, _)| *n == number) else {
            continue;
        };
        match (field, wire) {
            (F::Str(name), Wire::Len(b)) => {
                let s = utf8(b)?;
                if !s.is_empty() {
                    out.insert((*name).into(), json!(s));
                }
            }
            (F::Int(name), Wire::Varint(v)) => {
                // int64 travels as its two's complement bit pattern.
                out.insert((*name).into(), json!(v as i64));
            }
            (F::Bool(name), Wire::Varint(v)) => {
                out.insert((*name).into(), json!(v != 0));
            }
            (F::Msg(name, sub), Wire::Len(b)) => {
                // A repeated embedded message merges, as in protobuf.
                let decoded = message(b, sub)?;
                obj(&mut out, name).extend(decoded);
            }
            (F::RepStr(name), Wire::Len(b)) => arr(&mut out, name).push(json!(utf8(b)?)),
            (F::RepMsg(name, sub), Wire::Len(b)) => {
                let decoded = message(b, sub)?;
                arr(&mut out, name).push(Value::Object(decoded));
            }
            (F::MapStr(name), Wire::Len(b)) => {
                let (k, v) = map_entry(b)?;
                obj(&mut out, name).insert(k, json!(utf8(v)?));
            }
            (F::MapBytes(name), Wire::Len(b)) => {
                let (k, v) = map_entry(b)?;
                obj(&mut out, name).insert(k, json!(STANDARD.encode(v)));
            }
            (F::MapExtra(name), Wire::Len(b)) => {
                let (k, v) = map_entry(b)?;
                let mut items = Vec::new();
                for f in fields(v) {
                    if let (1, Wire::Len(item)) = f? {
                        items.push(json!(utf8(item)?));
                    }
                }
                obj(&mut out, name).insert(k, Value::Array(items));
            }
            _ => return Err(ProtobufError::Malformed),
        }
    }
    Ok(out)
}

/// Decodes a `k8s\0`-prefixed protobuf request body of a supported kind to
/// its JSON form, `apiVersion` and `kind` included.
pub fn decode(body: &[u8]) -> Result<Value, ProtobufError> {
    let rest = body.strip_prefix(MAGIC).ok_or(ProtobufError::NoMagic)?;
    let (mut api_version, mut kind, mut raw): (String, String, &[u8]) =
        (String::new(), String::new(), &[]);
    for f in fields(rest) {
        match f? {
            (1, Wire::Len(type_meta)) => {
                for tf in fields(type_meta) {
                    match tf? {
                        (1, Wire::Len(v)) => api_version = utf8(v)?,
                        (2, Wire::Len(k)) => kind = utf8(k)?,
                        _ => {}
                    }
                }
            }
            (2, Wire::Len(r)) => raw = r,
            _ => {}
        }
    }
    let schema = schema_for(&api_version, &kind)
        .ok_or_else(|| ProtobufError::Unsupported(format!("{api_version}, Kind={kind}")))?;
    let mut out = Map::new();
    out.insert("apiVersion".into(), json!(api_version));
    out.insert("kind".into(), json!(kind));
    out.extend(message(raw, schema)?);
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests;
