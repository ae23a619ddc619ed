//! Decoding of `application/vnd.kubernetes.protobuf` request bodies.
//!
//! kubectl's generated (typed) clients send built-in objects as protobuf
//! and, unlike for CBOR, never fall back to JSON; `kubectl create token`,
//! `kubectl auth can-i` and `kubectl create serviceaccount|namespace|
//! configmap|secret|role|...` all do. Responses stay JSON (those clients
//! accept it). This module turns the protobuf envelope (`k8s\0` +
//! `runtime.Unknown`) of the kinds below into the JSON the handlers take,
//! from field tables transcribed from the upstream `generated.proto` files.
//! Pods and Deployments cover what `kubectl run` / `kubectl create
//! deployment` send (containers, ports, env, resources, scheduling basics);
//! fields outside the tables are skipped.

use base64::Engine;
use serde_json::{Map, Value, json};

/// The 4-byte prefix of every Kubernetes protobuf body.
const MAGIC: &[u8] = b"k8s\0";

#[derive(Clone, Copy)]
enum Ty {
    Str,
    /// A pointer integer in Go: present means set, even when 0.
    Int,
    /// A plain Go integer: always encoded, 0 means absent in JSON.
    Count,
    /// A pointer bool in Go: present means set, even when false.
    Bool,
    /// A plain Go bool: always encoded, false means absent in JSON.
    Flag,
    /// `intstr.IntOrString` ({type, intVal, strVal}) → number or string.
    IntOrString,
    /// `map<string, resource.Quantity>` ({string = 1} values → strings).
    MapQuantity,
    /// `meta.v1.Time` / `MicroTime`: {seconds, nanos} → RFC 3339.
    Time,
    Msg(&'static [Field]),
    MapStr,
    MapBytes,
    MapMsg(&'static [Field]),
}

#[derive(Clone, Copy)]
struct Field {
    num: u64,
    name: &'static str,
    ty: Ty,
    repeated: bool,
}

const fn f(num: u64, name: &'static str, ty: Ty) -> Field {
    Field {
        num,
        name,
        ty,
        repeated: false,
    }
}

const fn r(num: u64, name: &'static str, ty: Ty) -> Field {
    Field {
        num,
        name,
        ty,
        repeated: true,
    }
}

use Ty::*;

const OWNER_REF: &[Field] = &[
    f(5, "apiVersion", Str),
    f(1, "kind", Str),
    f(3, "name", Str),
    f(4, "uid", Str),
    f(6, "controller", Bool),
    f(7, "blockOwnerDeletion", Bool),
];

const OBJECT_META: &[Field] = &[
    f(1, "name", Str),
    f(2, "generateName", Str),
    f(3, "namespace", Str),
    f(5, "uid", Str),
    f(6, "resourceVersion", Str),
    f(7, "generation", Count),
    f(8, "creationTimestamp", Time),
    f(9, "deletionTimestamp", Time),
    f(10, "deletionGracePeriodSeconds", Int),
    f(11, "labels", MapStr),
    f(12, "annotations", MapStr),
    r(13, "ownerReferences", Msg(OWNER_REF)),
    r(14, "finalizers", Str),
];

const SELECTOR_REQ: &[Field] = &[f(1, "key", Str), f(2, "operator", Str), r(3, "values", Str)];

const LABEL_SELECTOR: &[Field] = &[
    f(1, "matchLabels", MapStr),
    r(2, "matchExpressions", Msg(SELECTOR_REQ)),
];

const OBJECT_REF: &[Field] = &[
    f(1, "kind", Str),
    f(2, "namespace", Str),
    f(3, "name", Str),
    f(4, "uid", Str),
    f(5, "apiVersion", Str),
    f(6, "resourceVersion", Str),
    f(7, "fieldPath", Str),
];

const LOCAL_REF: &[Field] = &[f(1, "name", Str)];

const SERVICE_ACCOUNT: &[Field] = &[
    f(1, "metadata", Msg(OBJECT_META)),
    r(2, "secrets", Msg(OBJECT_REF)),
    r(3, "imagePullSecrets", Msg(LOCAL_REF)),
    f(4, "automountServiceAccountToken", Bool),
];

const CONFIG_MAP: &[Field] = &[
    f(1, "metadata", Msg(OBJECT_META)),
    f(2, "data", MapStr),
    f(3, "binaryData", MapBytes),
    f(4, "immutable", Bool),
];

const SECRET: &[Field] = &[
    f(1, "metadata", Msg(OBJECT_META)),
    f(2, "data", MapBytes),
    f(3, "type", Str),
    f(4, "stringData", MapStr),
    f(5, "immutable", Bool),
];

const NAMESPACE_SPEC: &[Field] = &[r(1, "finalizers", Str)];

const NAMESPACE: &[Field] = &[
    f(1, "metadata", Msg(OBJECT_META)),
    f(2, "spec", Msg(NAMESPACE_SPEC)),
];

const BOUND_REF: &[Field] = &[
    f(1, "kind", Str),
    f(2, "apiVersion", Str),
    f(3, "name", Str),
    f(4, "uid", Str),
];

const TOKEN_REQUEST_SPEC: &[Field] = &[
    r(1, "audiences", Str),
    f(4, "expirationSeconds", Int),
    f(3, "boundObjectRef", Msg(BOUND_REF)),
];

const TOKEN_REQUEST: &[Field] = &[
    f(1, "metadata", Msg(OBJECT_META)),
    f(2, "spec", Msg(TOKEN_REQUEST_SPEC)),
];

const TOKEN_REVIEW_SPEC: &[Field] = &[f(1, "token", Str), r(2, "audiences", Str)];

const TOKEN_REVIEW: &[Field] = &[
    f(1, "metadata", Msg(OBJECT_META)),
    f(2, "spec", Msg(TOKEN_REVIEW_SPEC)),
];

const SELF_SUBJECT_REVIEW: &[Field] = &[f(1, "metadata", Msg(OBJECT_META))];

const SELECTOR_ATTRS: &[Field] = &[
    f(1, "rawSelector", Str),
    r(2, "requirements", Msg(SELECTOR_REQ)),
];

const RESOURCE_ATTRS: &[Field] = &[
    f(1, "namespace", Str),
    f(2, "verb", Str),
    f(3, "group", Str),
    f(4, "version", Str),
    f(5, "resource", Str),
    f(6, "subresource", Str),
    f(7, "name", Str),
    f(8, "fieldSelector", Msg(SELECTOR_ATTRS)),
    f(9, "labelSelector", Msg(SELECTOR_ATTRS)),
];

const NON_RESOURCE_ATTRS: &[Field] = &[f(1, "path", Str), f(2, "verb", Str)];

const SSAR_SPEC: &[Field] = &[
    f(1, "resourceAttributes", Msg(RESOURCE_ATTRS)),
    f(2, "nonResourceAttributes", Msg(NON_RESOURCE_ATTRS)),
];

const EXTRA_VALUE: &[Field] = &[r(1, "items", Str)];

const SAR_SPEC: &[Field] = &[
    f(1, "resourceAttributes", Msg(RESOURCE_ATTRS)),
    f(2, "nonResourceAttributes", Msg(NON_RESOURCE_ATTRS)),
    f(3, "user", Str),
    r(4, "groups", Str),
    f(5, "extra", MapMsg(EXTRA_VALUE)),
    f(6, "uid", Str),
];

const SSAR: &[Field] = &[
    f(1, "metadata", Msg(OBJECT_META)),
    f(2, "spec", Msg(SSAR_SPEC)),
];

const SAR: &[Field] = &[
    f(1, "metadata", Msg(OBJECT_META)),
    f(2, "spec", Msg(SAR_SPEC)),
];

const SSRR_SPEC: &[Field] = &[f(1, "namespace", Str)];

const SSRR: &[Field] = &[
    f(1, "metadata", Msg(OBJECT_META)),
    f(2, "spec", Msg(SSRR_SPEC)),
];

const POLICY_RULE: &[Field] = &[
    r(1, "verbs", Str),
    r(2, "apiGroups", Str),
    r(3, "resources", Str),
    r(4, "resourceNames", Str),
    r(5, "nonResourceURLs", Str),
];

const AGGREGATION_RULE: &[Field] = &[r(1, "clusterRoleSelectors", Msg(LABEL_SELECTOR))];

const ROLE: &[Field] = &[
    f(1, "metadata", Msg(OBJECT_META)),
    r(2, "rules", Msg(POLICY_RULE)),
];

const CLUSTER_ROLE: &[Field] = &[
    f(1, "metadata", Msg(OBJECT_META)),
    r(2, "rules", Msg(POLICY_RULE)),
    f(3, "aggregationRule", Msg(AGGREGATION_RULE)),
];

const SUBJECT: &[Field] = &[
    f(1, "kind", Str),
    f(2, "apiGroup", Str),
    f(3, "name", Str),
    f(4, "namespace", Str),
];

const ROLE_REF: &[Field] = &[f(1, "apiGroup", Str), f(2, "kind", Str), f(3, "name", Str)];

const BINDING: &[Field] = &[
    f(1, "metadata", Msg(OBJECT_META)),
    r(2, "subjects", Msg(SUBJECT)),
    f(3, "roleRef", Msg(ROLE_REF)),
];

const LEASE_SPEC: &[Field] = &[
    f(1, "holderIdentity", Str),
    f(2, "leaseDurationSeconds", Int),
    f(3, "acquireTime", Time),
    f(4, "renewTime", Time),
    f(5, "leaseTransitions", Int),
    f(6, "strategy", Str),
    f(7, "preferredHolder", Str),
];

const LEASE: &[Field] = &[
    f(1, "metadata", Msg(OBJECT_META)),
    f(2, "spec", Msg(LEASE_SPEC)),
];

const CONTAINER_PORT: &[Field] = &[
    f(1, "name", Str),
    f(2, "hostPort", Count),
    f(3, "containerPort", Count),
    f(4, "protocol", Str),
    f(5, "hostIP", Str),
];

const ENV_VAR: &[Field] = &[f(1, "name", Str), f(2, "value", Str)];

const RESOURCES: &[Field] = &[f(1, "limits", MapQuantity), f(2, "requests", MapQuantity)];

const CONTAINER: &[Field] = &[
    f(1, "name", Str),
    f(2, "image", Str),
    r(3, "command", Str),
    r(4, "args", Str),
    f(5, "workingDir", Str),
    r(6, "ports", Msg(CONTAINER_PORT)),
    r(7, "env", Msg(ENV_VAR)),
    f(8, "resources", Msg(RESOURCES)),
    f(13, "terminationMessagePath", Str),
    f(20, "terminationMessagePolicy", Str),
    f(14, "imagePullPolicy", Str),
    f(24, "restartPolicy", Str),
    f(16, "stdin", Flag),
    f(17, "stdinOnce", Flag),
    f(18, "tty", Flag),
];

const TOLERATION: &[Field] = &[
    f(1, "key", Str),
    f(2, "operator", Str),
    f(3, "value", Str),
    f(4, "effect", Str),
    f(5, "tolerationSeconds", Int),
];

const POD_SPEC: &[Field] = &[
    r(20, "initContainers", Msg(CONTAINER)),
    r(2, "containers", Msg(CONTAINER)),
    f(3, "restartPolicy", Str),
    f(4, "terminationGracePeriodSeconds", Int),
    f(5, "activeDeadlineSeconds", Int),
    f(6, "dnsPolicy", Str),
    f(7, "nodeSelector", MapStr),
    f(8, "serviceAccountName", Str),
    f(9, "serviceAccount", Str),
    f(21, "automountServiceAccountToken", Bool),
    f(10, "nodeName", Str),
    f(11, "hostNetwork", Flag),
    f(12, "hostPID", Flag),
    f(13, "hostIPC", Flag),
    r(15, "imagePullSecrets", Msg(LOCAL_REF)),
    f(16, "hostname", Str),
    f(17, "subdomain", Str),
    f(19, "schedulerName", Str),
    r(22, "tolerations", Msg(TOLERATION)),
    f(24, "priorityClassName", Str),
    f(25, "priority", Int),
    f(30, "enableServiceLinks", Bool),
    f(31, "preemptionPolicy", Str),
];

const POD_TEMPLATE: &[Field] = &[
    f(1, "metadata", Msg(OBJECT_META)),
    f(2, "spec", Msg(POD_SPEC)),
];

const POD: &[Field] = &[
    f(1, "metadata", Msg(OBJECT_META)),
    f(2, "spec", Msg(POD_SPEC)),
];

const ROLLING_UPDATE: &[Field] = &[
    f(1, "maxUnavailable", IntOrString),
    f(2, "maxSurge", IntOrString),
];

const DEPLOYMENT_STRATEGY: &[Field] = &[
    f(1, "type", Str),
    f(2, "rollingUpdate", Msg(ROLLING_UPDATE)),
];

const DEPLOYMENT_SPEC: &[Field] = &[
    f(1, "replicas", Int),
    f(2, "selector", Msg(LABEL_SELECTOR)),
    f(3, "template", Msg(POD_TEMPLATE)),
    f(4, "strategy", Msg(DEPLOYMENT_STRATEGY)),
    f(5, "minReadySeconds", Count),
    f(6, "revisionHistoryLimit", Int),
    f(7, "paused", Flag),
    f(9, "progressDeadlineSeconds", Int),
];

const DEPLOYMENT: &[Field] = &[
    f(1, "metadata", Msg(OBJECT_META)),
    f(2, "spec", Msg(DEPLOYMENT_SPEC)),
];

const PRECONDITIONS: &[Field] = &[f(1, "uid", Str), f(2, "resourceVersion", Str)];

const DELETE_OPTIONS: &[Field] = &[
    f(1, "gracePeriodSeconds", Int),
    f(2, "preconditions", Msg(PRECONDITIONS)),
    f(3, "orphanDependents", Bool),
    f(4, "propagationPolicy", Str),
    r(5, "dryRun", Str),
];

fn message_for(api_version: &str, kind: &str) -> Option<&'static [Field]> {
    Some(match (api_version, kind) {
        ("v1", "ServiceAccount") => SERVICE_ACCOUNT,
        ("v1", "ConfigMap") => CONFIG_MAP,
        ("v1", "Secret") => SECRET,
        ("v1", "Namespace") => NAMESPACE,
        (_, "DeleteOptions") => DELETE_OPTIONS,
        ("authentication.k8s.io/v1", "TokenRequest") => TOKEN_REQUEST,
        ("authentication.k8s.io/v1", "TokenReview") => TOKEN_REVIEW,
        ("authentication.k8s.io/v1", "SelfSubjectReview") => SELF_SUBJECT_REVIEW,
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview") => SSAR,
        ("authorization.k8s.io/v1", "SubjectAccessReview") => SAR,
        ("authorization.k8s.io/v1", "SelfSubjectRulesReview") => SSRR,
        ("rbac.authorization.k8s.io/v1", "Role") => ROLE,
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => CLUSTER_ROLE,
        ("rbac.authorization.k8s.io/v1", "RoleBinding" | "ClusterRoleBinding") => BINDING,
        ("coordination.k8s.io/v1", "Lease") => LEASE,
        ("v1", "Pod") => POD,
        ("apps/v1", "Deployment") => DEPLOYMENT,
        _ => return None,
    })
}

/// Why a protobuf body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtobufError {
    #[error("protobuf body does not start with the kubernetes magic number")]
    NoMagic,
    #[error("malformed protobuf body")]
    Malformed,
    #[error("protobuf encoding of {0} is not supported by kube-sandbox; send JSON")]
    UnsupportedKind(String),
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, ProtobufError> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let byte = *self.b.get(self.pos).ok_or(ProtobufError::Malformed)?;
            self.pos += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(ProtobufError::Malformed)
    }

    fn bytes(&mut self) -> Result<&'a [u8], ProtobufError> {
        let len = self.varint()? as usize;
        let end = self.pos.checked_add(len).ok_or(ProtobufError::Malformed)?;
        let s = self.b.get(self.pos..end).ok_or(ProtobufError::Malformed)?;
        self.pos = end;
        Ok(s)
    }

    fn skip(&mut self, wire: u64) -> Result<(), ProtobufError> {
        match wire {
            0 => self.varint().map(|_| ()),
            1 => self.advance(8),
            2 => self.bytes().map(|_| ()),
            5 => self.advance(4),
            _ => Err(ProtobufError::Malformed),
        }
    }

    fn advance(&mut self, n: usize) -> Result<(), ProtobufError> {
        if self.pos + n > self.b.len() {
            return Err(ProtobufError::Malformed);
        }
        self.pos += n;
        Ok(())
    }

    /// Iterates `(field number, wire type)` and hands each to `each`.
    fn fields(
        b: &'a [u8],
        mut each: impl FnMut(u64, u64, &mut Reader<'a>) -> Result<(), ProtobufError>,
    ) -> Result<(), ProtobufError> {
        let mut rd = Reader { b, pos: 0 };
        while rd.pos < rd.b.len() {
            let tag = rd.varint()?;
            each(tag >> 3, tag & 7, &mut rd)?;
        }
        Ok(())
    }
}

fn utf8(b: &[u8]) -> Result<String, ProtobufError> {
    String::from_utf8(b.to_vec()).map_err(|_| ProtobufError::Malformed)
}

fn time(b: &[u8]) -> Result<Value, ProtobufError> {
    let (mut secs, mut nanos) = (0i64, 0i64);
    Reader::fields(b, |num, wire, rd| {
        match (num, wire) {
            (1, 0) => secs = rd.varint()? as i64,
            (2, 0) => nanos = rd.varint()? as i64,
            _ => rd.skip(wire)?,
        }
        Ok(())
    })?;
    if secs == 0 && nanos == 0 {
        return Ok(Value::Null);
    }
    let ts = jiff::Timestamp::new(secs, nanos as i32).map_err(|_| ProtobufError::Malformed)?;
    Ok(json!(ts.to_string()))
}

fn quantity(b: &[u8]) -> Result<Value, ProtobufError> {
    let mut out = Value::Null;
    Reader::fields(b, |num, wire, rd| {
        match (num, wire) {
            (1, 2) => out = json!(utf8(rd.bytes()?)?),
            _ => rd.skip(wire)?,
        }
        Ok(())
    })?;
    Ok(out)
}

fn int_or_string(b: &[u8]) -> Result<Value, ProtobufError> {
    let (mut is_string, mut int_val, mut str_val) = (false, 0i64, String::new());
    Reader::fields(b, |num, wire, rd| {
        match (num, wire) {
            (1, 0) => is_string = rd.varint()? == 1,
            (2, 0) => int_val = rd.varint()? as i64,
            (3, 2) => str_val = utf8(rd.bytes()?)?,
            _ => rd.skip(wire)?,
        }
        Ok(())
    })?;
    Ok(if is_string {
        json!(str_val)
    } else {
        json!(int_val as i32)
    })
}

fn map_entry(b: &[u8], value_ty: Ty) -> Result<(String, Value), ProtobufError> {
    let mut key = String::new();
    let mut value = match value_ty {
        MapBytes => json!(""),
        MapMsg(_) => json!({}),
        _ => json!(""),
    };
    Reader::fields(b, |num, wire, rd| {
        match (num, wire) {
            (1, 2) => key = utf8(rd.bytes()?)?,
            (2, 2) => {
                let raw = rd.bytes()?;
                value = match value_ty {
                    MapStr => json!(utf8(raw)?),
                    MapBytes => json!(base64::engine::general_purpose::STANDARD.encode(raw)),
                    MapQuantity => quantity(raw)?,
                    MapMsg(fields) => message(raw, fields)?,
                    _ => Value::Null,
                };
            }
            _ => rd.skip(wire)?,
        }
        Ok(())
    })?;
    Ok((key, value))
}

fn message(b: &[u8], fields: &'static [Field]) -> Result<Value, ProtobufError> {
    let mut out = Map::new();
    Reader::fields(b, |num, wire, rd| {
        let Some(fd) = fields.iter().find(|x| x.num == num) else {
            return rd.skip(wire);
        };
        let value = match (fd.ty, wire) {
            (Str, 2) => json!(utf8(rd.bytes()?)?),
            (Int, 0) => json!(rd.varint()? as i64),
            (Count, 0) => match rd.varint()? as i64 {
                0 => Value::Null,
                n => json!(n),
            },
            (Bool, 0) => json!(rd.varint()? != 0),
            (Flag, 0) => match rd.varint()? {
                0 => Value::Null,
                _ => json!(true),
            },
            (IntOrString, 2) => int_or_string(rd.bytes()?)?,
            (Time, 2) => time(rd.bytes()?)?,
            (Msg(sub), 2) => message(rd.bytes()?, sub)?,
            (MapStr | MapBytes | MapQuantity | MapMsg(_), 2) => {
                let (k, v) = map_entry(rd.bytes()?, fd.ty)?;
                let entry = out.entry(fd.name).or_insert_with(|| json!({}));
                entry[k] = v;
                return Ok(());
            }
            _ => return rd.skip(wire),
        };
        if fd.repeated {
            let entry = out.entry(fd.name).or_insert_with(|| json!([]));
            if let Some(a) = entry.as_array_mut() {
                a.push(value);
            }
        } else if !(value.is_null() || value == json!("")) {
            // Go encodes unset scalars as zero values; empty strings and
            // zero times mean "absent" in JSON.
            out.insert(fd.name.to_string(), value);
        }
        Ok(())
    })?;
    Ok(Value::Object(out))
}

/// Whether a Content-Type is Kubernetes protobuf.
pub fn is_protobuf(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|t| t.trim() == "application/vnd.kubernetes.protobuf")
}

/// Decodes a protobuf request body into the equivalent JSON object.
pub fn decode(body: &[u8]) -> Result<Value, ProtobufError> {
    let rest = body.strip_prefix(MAGIC).ok_or(ProtobufError::NoMagic)?;
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &[][..]);
    Reader::fields(rest, |num, wire, rd| {
        match (num, wire) {
            (1, 2) => {
                Reader::fields(rd.bytes()?, |n, w, r2| {
                    match (n, w) {
                        (1, 2) => api_version = utf8(r2.bytes()?)?,
                        (2, 2) => kind = utf8(r2.bytes()?)?,
                        _ => r2.skip(w)?,
                    }
                    Ok(())
                })?;
            }
            (2, 2) => raw = rd.bytes()?,
            _ => rd.skip(wire)?,
        }
        Ok(())
    })?;
    let fields = message_for(&api_version, &kind)
        .ok_or_else(|| ProtobufError::UnsupportedKind(format!("{api_version}, Kind={kind}")))?;
    let mut obj = message(raw, fields)?;
    obj["apiVersion"] = json!(api_version);
    obj["kind"] = json!(kind);
    Ok(obj)
}

#[cfg(test)]
mod golden;

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    fn ld(num: u64, payload: &[u8], out: &mut Vec<u8>) {
        varint(num << 3 | 2, out);
        varint(payload.len() as u64, out);
        out.extend_from_slice(payload);
    }

    fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        let mut tm = Vec::new();
        ld(1, api_version.as_bytes(), &mut tm);
        ld(2, kind.as_bytes(), &mut tm);
        let mut unknown = Vec::new();
        ld(1, &tm, &mut unknown);
        ld(2, raw, &mut unknown);
        let mut out = MAGIC.to_vec();
        out.extend(unknown);
        out
    }

    #[test]
    fn decodes_a_token_request_like_kubectl_sends() {
        let mut meta = Vec::new();
        ld(1, b"edge", &mut meta);
        ld(3, b"fleet-system", &mut meta);
        ld(8, &[], &mut meta); // zero creationTimestamp, as Go always writes it
        let mut spec = Vec::new();
        ld(1, b"https://kubernetes.default.svc", &mut spec);
        varint(4 << 3, &mut spec);
        varint(600, &mut spec);
        let mut tr = Vec::new();
        ld(1, &meta, &mut tr);
        ld(2, &spec, &mut tr);
        let body = envelope("authentication.k8s.io/v1", "TokenRequest", &tr);
        let v = decode(&body).unwrap();
        assert_eq!(v["kind"], "TokenRequest");
        assert_eq!(
            v["metadata"],
            json!({"name": "edge", "namespace": "fleet-system"})
        );
        assert_eq!(v["spec"]["expirationSeconds"], 600);
        assert_eq!(
            v["spec"]["audiences"],
            json!(["https://kubernetes.default.svc"])
        );
    }

    #[test]
    fn decodes_maps_and_rejects_unknown_kinds() {
        let mut entry = Vec::new();
        ld(1, b"k", &mut entry);
        ld(2, b"\x00\x01", &mut entry);
        let mut secret = Vec::new();
        ld(2, &entry, &mut secret);
        let v = decode(&envelope("v1", "Secret", &secret)).unwrap();
        assert_eq!(v["data"]["k"], "AAE=");
        assert_eq!(
            decode(&envelope("v1", "Service", &[])),
            Err(ProtobufError::UnsupportedKind("v1, Kind=Service".into()))
        );
        assert_eq!(decode(b"{}"), Err(ProtobufError::NoMagic));
    }

    #[test]
    fn decodes_workload_quantities_and_int_or_string() {
        let mut qty = Vec::new();
        ld(1, b"200m", &mut qty);
        let mut entry = Vec::new();
        ld(1, b"cpu", &mut entry);
        ld(2, &qty, &mut entry);
        let mut resources = Vec::new();
        ld(1, &entry, &mut resources);
        let mut container = Vec::new();
        ld(1, b"web", &mut container);
        ld(8, &resources, &mut container);
        varint(16 << 3, &mut container); // stdin: false, always encoded by Go
        varint(0, &mut container);
        let mut pod_spec = Vec::new();
        ld(2, &container, &mut pod_spec);
        let mut template = Vec::new();
        ld(2, &pod_spec, &mut template);
        let mut surge = Vec::new();
        varint(1 << 3, &mut surge);
        varint(1, &mut surge); // type: String
        ld(3, b"25%", &mut surge);
        let mut rolling = Vec::new();
        ld(2, &surge, &mut rolling);
        let mut strategy = Vec::new();
        ld(2, &rolling, &mut strategy);
        let mut spec = Vec::new();
        varint(1 << 3, &mut spec);
        varint(3, &mut spec);
        ld(3, &template, &mut spec);
        ld(4, &strategy, &mut spec);
        let mut dep = Vec::new();
        ld(2, &spec, &mut dep);
        let v = decode(&envelope("apps/v1", "Deployment", &dep)).unwrap();
        assert_eq!(v["spec"]["replicas"], 3);
        assert_eq!(v["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
        let c = &v["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(c["resources"]["limits"]["cpu"], "200m");
        assert!(
            c.get("stdin").is_none(),
            "false plain bools are omitted: {c}"
        );
    }
}
