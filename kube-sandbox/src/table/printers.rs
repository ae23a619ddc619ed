//! Table columns of the built-in kinds, as kube-apiserver's printers
//! (`pkg/printers/internalversion`) define them: what `kubectl get pods`,
//! `get ns`, `get deploy`, ... print. Cells computed from several fields
//! (pod READY and STATUS, node STATUS and ROLES, counts of `data`) are
//! [`Computed`] cells; the rest are JSONPaths. Kinds without a printer
//! (CustomResourceDefinitions) get the default convertor's `Name` and
//! `Created At`.

use super::{CREATION_TIMESTAMP_DESCRIPTION, Column, age_column, human_duration, name_column};
use serde_json::{Value, json};

/// A cell the printers compute from more than one field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Computed {
    /// `metadata.creationTimestamp` as RFC 3339 in UTC (`Created At`).
    CreatedAt,
    /// `readyContainers/totalContainers`.
    PodReady,
    /// The pod's reason: `Terminating`, a container's waiting/terminated
    /// reason, `status.reason`, or the phase.
    PodStatus,
    /// Sum of the containers' `restartCount`.
    PodRestarts,
    /// `Ready`/`NotReady`/`Unknown`, with `,SchedulingDisabled`.
    NodeStatus,
    /// The `node-role.kubernetes.io/ROLE` labels, or `<none>`.
    NodeRoles,
    /// `status.readyReplicas/spec.replicas` (deployments, statefulsets).
    ReadyOfReplicas,
    /// Number of keys of `data` plus `binaryData`.
    DataCount,
    /// Number of `secrets` of a ServiceAccount.
    SecretCount,
    /// `roleRef.kind/roleRef.name`.
    RoleRef,
    /// Names of the bindings' subjects of one kind, comma separated.
    Subjects(&'static str),
    /// `kind/name` of an Event's involved object, kind lower-cased.
    EventObject,
    /// Age of an Event's last occurrence.
    EventLastSeen,
    /// `spec.template.spec.containers[*]` names or images, comma separated.
    Containers(&'static str),
    /// A workload's `spec.selector` as a label selector string.
    Selector,
    /// A DaemonSet's `spec.template.spec.nodeSelector`, or `<none>`.
    NodeSelector,
    /// An integer at a JSON pointer, 0 when unset (Go's zero value).
    IntAt(&'static str),
    /// The number of items of the list at a JSON pointer.
    LenAt(&'static str),
    /// A ValidatingAdmissionPolicy's `apiVersion/kind` of `spec.paramKind`, or `<unset>`.
    ParamKind,
    /// A binding's `namespace/name` of `spec.paramRef` (`*/name` without a
    /// namespace), or `<unset>`.
    ParamRef,
}

fn col(name: &str, type_: &str, description: &str, path: &str) -> Column {
    Column {
        name: name.into(),
        type_: type_.into(),
        format: String::new(),
        description: description.into(),
        priority: 0,
        json_path: Some(path.into()),
        computed: None,
    }
}

fn computed(name: &str, type_: &str, description: &str, c: Computed) -> Column {
    Column {
        json_path: None,
        computed: Some(c),
        ..col(name, type_, description, "")
    }
}

fn wide(mut c: Column) -> Column {
    c.priority = 1;
    c
}

/// `Name` and `Created At` (a date column holding RFC 3339 text): the
/// default table convertor of kinds without a printer.
pub fn default_convertor_columns() -> Vec<Column> {
    vec![
        name_column(),
        computed(
            "Created At",
            "date",
            CREATION_TIMESTAMP_DESCRIPTION,
            Computed::CreatedAt,
        ),
    ]
}

/// Whether `columns` are the default convertor's, whose Table of an empty
/// list has `rows: null` (the printers send `[]`).
pub fn is_default_convertor(columns: &[Column]) -> bool {
    columns == default_convertor_columns().as_slice()
}

/// The columns kube-apiserver prints for a built-in resource, or `None`
/// for one this module does not know (it keeps Name and Age).
pub fn builtin_columns(group: &str, plural: &str) -> Option<Vec<Column>> {
    use Computed::*;
    let name = name_column;
    let age = age_column;
    Some(match (group, plural) {
        ("", "namespaces") => vec![
            name(),
            col(
                "Status",
                "string",
                "The status of the namespace",
                ".status.phase",
            ),
            age(),
        ],
        ("", "nodes") => vec![
            name(),
            computed("Status", "string", "The status of the node", NodeStatus),
            computed("Roles", "string", "The roles of the node", NodeRoles),
            age(),
            col(
                "Version",
                "string",
                "Kubelet Version reported by the node.",
                ".status.nodeInfo.kubeletVersion",
            ),
            wide(col(
                "Internal-IP",
                "string",
                "List of addresses reachable to the node.",
                ".status.addresses[?(@.type==\"InternalIP\")].address",
            )),
            wide(col(
                "OS-Image",
                "string",
                "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
                ".status.nodeInfo.osImage",
            )),
        ],
        ("", "pods") => vec![
            name(),
            computed(
                "Ready",
                "string",
                "The aggregate readiness state of this pod for accepting traffic.",
                PodReady,
            ),
            computed(
                "Status",
                "string",
                "The aggregate status of the containers in this pod.",
                PodStatus,
            ),
            computed(
                "Restarts",
                "string",
                "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
                PodRestarts,
            ),
            age(),
            wide(col(
                "IP",
                "string",
                "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
                ".status.podIP",
            )),
            wide(col(
                "Node",
                "string",
                "NodeName is a request to schedule this pod onto a specific node.",
                ".spec.nodeName",
            )),
        ],
        ("", "secrets") => vec![
            name(),
            col(
                "Type",
                "string",
                "Used to facilitate programmatic handling of secret data.",
                ".type",
            ),
            computed(
                "Data",
                "string",
                "Contains the secret data. The serialized form of the secret data is a base64 encoded string.",
                DataCount,
            ),
            age(),
        ],
        ("", "configmaps") => vec![
            name(),
            computed(
                "Data",
                "string",
                "Data contains the configuration data.",
                DataCount,
            ),
            age(),
        ],
        ("", "serviceaccounts") => vec![
            name(),
            computed(
                "Secrets",
                "string",
                "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.",
                SecretCount,
            ),
            age(),
        ],
        ("", "events") => vec![
            computed(
                "Last Seen",
                "string",
                "The last time an Event was seen.",
                EventLastSeen,
            ),
            col(
                "Type",
                "string",
                "Type of this event (Normal, Warning), new types could be added in the future.",
                ".type",
            ),
            col(
                "Reason",
                "string",
                "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
                ".reason",
            ),
            computed(
                "Object",
                "string",
                "The object that this event is about.",
                EventObject,
            ),
            col(
                "Message",
                "string",
                "A human-readable description of the status of this operation.",
                ".message",
            ),
        ],
        ("apps", "deployments") => vec![
            name(),
            computed(
                "Ready",
                "string",
                "Number of the pod with ready state",
                ReadyOfReplicas,
            ),
            computed(
                "Up-to-date",
                "integer",
                "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
                IntAt("/status/updatedReplicas"),
            ),
            computed(
                "Available",
                "integer",
                "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
                IntAt("/status/availableReplicas"),
            ),
            age(),
            wide(computed(
                "Containers",
                "string",
                "Names of each container in the template.",
                Containers("name"),
            )),
            wide(computed(
                "Images",
                "string",
                "Images referenced by each container in the template.",
                Containers("image"),
            )),
            wide(computed(
                "Selector",
                "string",
                "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.",
                Selector,
            )),
        ],
        ("apps", "replicasets") => vec![
            name(),
            computed(
                "Desired",
                "integer",
                "Replicas is the number of desired pods.",
                IntAt("/spec/replicas"),
            ),
            computed(
                "Current",
                "integer",
                "Replicas is the most recently observed number of replicas.",
                IntAt("/status/replicas"),
            ),
            computed(
                "Ready",
                "integer",
                "The number of ready replicas for this replica set.",
                IntAt("/status/readyReplicas"),
            ),
            age(),
        ],
        ("apps", "statefulsets") => vec![
            name(),
            computed(
                "Ready",
                "string",
                "Number of the pod with ready state",
                ReadyOfReplicas,
            ),
            age(),
        ],
        ("apps", "daemonsets") => vec![
            name(),
            computed(
                "Desired",
                "integer",
                "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod).",
                IntAt("/status/desiredNumberScheduled"),
            ),
            computed(
                "Current",
                "integer",
                "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.",
                IntAt("/status/currentNumberScheduled"),
            ),
            computed(
                "Ready",
                "integer",
                "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.",
                IntAt("/status/numberReady"),
            ),
            computed(
                "Up-to-date",
                "integer",
                "The total number of nodes that are running updated daemon pod",
                IntAt("/status/updatedNumberScheduled"),
            ),
            computed(
                "Available",
                "integer",
                "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)",
                IntAt("/status/numberAvailable"),
            ),
            computed(
                "Node Selector",
                "string",
                "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node.",
                NodeSelector,
            ),
            age(),
        ],
        ("rbac.authorization.k8s.io", "roles" | "clusterroles") => vec![
            name(),
            computed(
                "Created At",
                "string",
                "Time at which the role was created",
                CreatedAt,
            ),
        ],
        ("rbac.authorization.k8s.io", "rolebindings" | "clusterrolebindings") => vec![
            name(),
            computed("Role", "string", "Role of the binding", RoleRef),
            age(),
            wide(computed(
                "Users",
                "string",
                "Users in the binding",
                Subjects("User"),
            )),
            wide(computed(
                "Groups",
                "string",
                "Groups in the binding",
                Subjects("Group"),
            )),
            wide(computed(
                "ServiceAccounts",
                "string",
                "ServiceAccounts in the binding",
                Subjects("ServiceAccount"),
            )),
        ],
        ("coordination.k8s.io", "leases") => vec![
            name(),
            col(
                "Holder",
                "string",
                "HolderIdentity contains the identity of the holder of a current lease.",
                ".spec.holderIdentity",
            ),
            age(),
        ],
        ("apiextensions.k8s.io", "customresourcedefinitions") => default_convertor_columns(),
        ("admissionregistration.k8s.io", "validatingadmissionpolicies") => vec![
            name(),
            computed(
                "Validations",
                "integer",
                "Validations indicates the number of validation rules defined in this configuration",
                LenAt("/spec/validations"),
            ),
            computed(
                "ParamKind",
                "string",
                "ParamKind specifies the kind of resources used to parameterize this policy",
                ParamKind,
            ),
            age(),
        ],
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings") => vec![
            name(),
            col(
                "PolicyName",
                "string",
                "PolicyName indicates the policy definition which the policy binding binded to",
                ".spec.policyName",
            ),
            computed(
                "ParamRef",
                "string",
                "ParamRef indicates the param resource which sets the configration param",
                ParamRef,
            ),
            age(),
        ],
        _ => return None,
    })
}

fn int_at(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

fn len_of(v: &Value) -> usize {
    match v {
        Value::Object(m) => m.len(),
        Value::Array(a) => a.len(),
        _ => 0,
    }
}

fn pod_status(pod: &Value) -> String {
    let status = &pod["status"];
    let mut reason = status["reason"]
        .as_str()
        .filter(|r| !r.is_empty())
        .or_else(|| status["phase"].as_str())
        .unwrap_or_default()
        .to_string();
    let containers = status["containerStatuses"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    // As printPod: the last container with a waiting or terminated reason wins.
    for c in containers.iter().rev() {
        let state = &c["state"];
        if let Some(r) = state["waiting"]["reason"]
            .as_str()
            .filter(|r| !r.is_empty())
        {
            reason = r.to_string();
            break;
        }
        if state.get("terminated").is_some_and(Value::is_object) {
            let t = &state["terminated"];
            reason = match t["reason"].as_str().filter(|r| !r.is_empty()) {
                Some(r) => r.to_string(),
                None if t.get("signal").is_some_and(|s| int_at(s) != 0) => {
                    format!("Signal:{}", int_at(&t["signal"]))
                }
                None => format!("ExitCode:{}", int_at(&t["exitCode"])),
            };
            break;
        }
    }
    if pod["metadata"]
        .get("deletionTimestamp")
        .is_some_and(|t| !t.is_null())
    {
        reason = if status["reason"] == "NodeLost" {
            "Unknown".into()
        } else {
            "Terminating".into()
        };
    }
    reason
}

fn node_status(node: &Value) -> String {
    let ready = node["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Ready"));
    let mut out = match ready.and_then(|c| c["status"].as_str()) {
        Some("True") => "Ready".to_string(),
        Some(_) => "NotReady".to_string(),
        None => "Unknown".to_string(),
    };
    if node["spec"]["unschedulable"] == true {
        out.push_str(",SchedulingDisabled");
    }
    out
}

fn node_roles(node: &Value) -> String {
    let mut roles: Vec<&str> = node["metadata"]["labels"]
        .as_object()
        .map(|l| {
            l.iter()
                .filter_map(|(k, v)| {
                    if let Some(r) = k.strip_prefix("node-role.kubernetes.io/") {
                        Some(r)
                    } else if k == "kubernetes.io/role" {
                        v.as_str()
                    } else {
                        None
                    }
                })
                .filter(|r| !r.is_empty())
                .collect()
        })
        .unwrap_or_default();
    roles.sort_unstable();
    roles.dedup();
    if roles.is_empty() {
        "<none>".into()
    } else {
        roles.join(",")
    }
}

fn selector_string(sel: &Value) -> String {
    let mut parts: Vec<String> = sel["matchLabels"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    for e in sel["matchExpressions"].as_array().into_iter().flatten() {
        let key = e["key"].as_str().unwrap_or_default();
        let values: Vec<&str> = e["values"]
            .as_array()
            .map(|v| v.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        parts.push(match e["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_string(),
            "DoesNotExist" => format!("!{key}"),
            other => format!("{key} {other}"),
        });
    }
    if parts.is_empty() {
        "<none>".into()
    } else {
        parts.join(",")
    }
}

fn age_since(t: &Value, now: jiff::Timestamp) -> String {
    match t.as_str().map(str::parse::<jiff::Timestamp>) {
        Some(Ok(t)) => human_duration(now.duration_since(t).as_secs()),
        _ => "<unknown>".into(),
    }
}

/// The cell of a computed column for `obj`.
pub fn computed_cell(c: Computed, obj: &Value, now: jiff::Timestamp) -> Value {
    use Computed::*;
    match c {
        CreatedAt => match obj["metadata"]["creationTimestamp"]
            .as_str()
            .map(str::parse::<jiff::Timestamp>)
        {
            Some(Ok(t)) => json!(t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()),
            _ => json!("0001-01-01T00:00:00Z"),
        },
        PodReady => {
            let total = len_of(&obj["spec"]["containers"]);
            let ready = obj["status"]["containerStatuses"]
                .as_array()
                .map(|c| c.iter().filter(|c| c["ready"] == true).count())
                .unwrap_or(0);
            json!(format!("{ready}/{total}"))
        }
        PodStatus => json!(pod_status(obj)),
        PodRestarts => {
            let n: i64 = obj["status"]["containerStatuses"]
                .as_array()
                .map(|c| c.iter().map(|c| int_at(&c["restartCount"])).sum())
                .unwrap_or(0);
            json!(n.to_string())
        }
        NodeStatus => json!(node_status(obj)),
        NodeRoles => json!(node_roles(obj)),
        ReadyOfReplicas => {
            let want = obj["spec"]["replicas"].as_i64().unwrap_or(1);
            let ready = int_at(&obj["status"]["readyReplicas"]);
            json!(format!("{ready}/{want}"))
        }
        DataCount => json!(len_of(&obj["data"]) + len_of(&obj["binaryData"])),
        SecretCount => json!(len_of(&obj["secrets"])),
        RoleRef => json!(format!(
            "{}/{}",
            obj["roleRef"]["kind"].as_str().unwrap_or_default(),
            obj["roleRef"]["name"].as_str().unwrap_or_default()
        )),
        Subjects(kind) => {
            let names: Vec<String> = obj["subjects"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|s| s["kind"] == kind)
                .map(|s| {
                    let name = s["name"].as_str().unwrap_or_default();
                    match s["namespace"].as_str() {
                        Some(ns) if kind == "ServiceAccount" => format!("{ns}/{name}"),
                        _ => name.to_string(),
                    }
                })
                .collect();
            json!(names.join(", "))
        }
        EventObject => {
            let o = &obj["involvedObject"];
            json!(format!(
                "{}/{}",
                o["kind"].as_str().unwrap_or_default().to_lowercase(),
                o["name"].as_str().unwrap_or_default()
            ))
        }
        EventLastSeen => {
            let t = [
                &obj["lastTimestamp"],
                &obj["eventTime"],
                &obj["firstTimestamp"],
            ]
            .into_iter()
            .find(|t| t.as_str().is_some_and(|s| !s.is_empty()))
            .cloned()
            .unwrap_or(Value::Null);
            json!(age_since(&t, now))
        }
        Containers(field) => {
            let v: Vec<&str> = obj["spec"]["template"]["spec"]["containers"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c[field].as_str())
                .collect();
            json!(v.join(","))
        }
        Selector => json!(selector_string(&obj["spec"]["selector"])),
        IntAt(ptr) => json!(obj.pointer(ptr).and_then(Value::as_i64).unwrap_or(0)),
        LenAt(ptr) => json!(obj.pointer(ptr).map_or(0, len_of)),
        ParamKind => json!(
            match obj["spec"].get("paramKind").filter(|p| p.is_object()) {
                Some(p) => format!(
                    "{}/{}",
                    p["apiVersion"].as_str().unwrap_or_default(),
                    p["kind"].as_str().unwrap_or_default()
                ),
                None => "<unset>".to_string(),
            }
        ),
        ParamRef => json!(
            match obj["spec"].get("paramRef").filter(|p| p.is_object()) {
                Some(p) => {
                    let ns = p["namespace"].as_str().unwrap_or_default();
                    let name = p["name"].as_str().unwrap_or_default();
                    format!("{}/{name}", if ns.is_empty() { "*" } else { ns })
                }
                None => "<unset>".to_string(),
            }
        ),
        NodeSelector => {
            let sel = &obj["spec"]["template"]["spec"]["nodeSelector"];
            let parts: Vec<String> = sel
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                        .collect()
                })
                .unwrap_or_default();
            json!(if parts.is_empty() {
                "<none>".to_string()
            } else {
                parts.join(",")
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{IncludeObject, to_table};

    fn now() -> jiff::Timestamp {
        "2026-01-01T10:00:00Z".parse().unwrap()
    }

    fn cells(group: &str, plural: &str, obj: Value) -> Value {
        let cols = builtin_columns(group, plural).unwrap();
        let t = to_table(&cols, &[obj], IncludeObject::None, json!({}), now());
        t["rows"][0]["cells"].clone()
    }

    const T0: &str = "2026-01-01T09:00:00Z";

    #[test]
    fn pods_print_ready_status_restarts_age() {
        let pod = json!({"metadata": {"name": "p", "creationTimestamp": T0},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 2, "state": {"running": {}}},
                {"name": "b", "ready": false, "restartCount": 1,
                 "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}});
        assert_eq!(
            cells("", "pods", pod.clone()),
            json!(["p", "1/2", "CrashLoopBackOff", "3", "60m", null, null])
        );
        let mut gone = pod;
        gone["metadata"]["deletionTimestamp"] = json!(T0);
        assert_eq!(cells("", "pods", gone)[2], "Terminating");
        let pending = json!({"metadata": {"name": "q", "creationTimestamp": T0},
            "spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Pending"}});
        assert_eq!(
            cells("", "pods", pending),
            json!(["q", "0/1", "Pending", "0", "60m", null, null])
        );
    }

    #[test]
    fn namespaces_nodes_and_workloads() {
        let ns = json!({"metadata": {"name": "fleet-system", "creationTimestamp": T0},
                        "status": {"phase": "Active"}});
        assert_eq!(
            cells("", "namespaces", ns),
            json!(["fleet-system", "Active", "60m"])
        );
        let node = json!({"metadata": {"name": "n1", "creationTimestamp": T0,
                "labels": {"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/worker": ""}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                       "nodeInfo": {"kubeletVersion": "v1.32.0"}}});
        assert_eq!(
            cells("", "nodes", node),
            json!([
                "n1",
                "Ready,SchedulingDisabled",
                "control-plane,worker",
                "60m",
                "v1.32.0",
                null,
                null
            ])
        );
        let deploy = json!({"metadata": {"name": "web", "creationTimestamp": T0},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}});
        assert_eq!(
            cells("apps", "deployments", deploy),
            json!(["web", "2/3", 3, 2, "60m", "c", "nginx:1", "app=web"])
        );
    }

    #[test]
    fn secrets_configmaps_service_accounts_and_rbac() {
        let s = json!({"metadata": {"name": "s", "creationTimestamp": T0},
                       "type": "Opaque", "data": {"a": "", "b": ""}});
        assert_eq!(cells("", "secrets", s), json!(["s", "Opaque", 2, "60m"]));
        let cm = json!({"metadata": {"name": "c", "creationTimestamp": T0},
                        "data": {"a": "1"}, "binaryData": {"b": ""}});
        assert_eq!(cells("", "configmaps", cm), json!(["c", 2, "60m"]));
        let sa = json!({"metadata": {"name": "default", "creationTimestamp": T0}});
        assert_eq!(
            cells("", "serviceaccounts", sa),
            json!(["default", 0, "60m"])
        );
        let role = json!({"metadata": {"name": "r", "creationTimestamp": T0}});
        assert_eq!(
            cells("rbac.authorization.k8s.io", "roles", role),
            json!(["r", T0])
        );
        let rb = json!({"metadata": {"name": "rb", "creationTimestamp": T0},
            "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "jane"},
                         {"kind": "ServiceAccount", "name": "e", "namespace": "fleet-system"}]});
        assert_eq!(
            cells("rbac.authorization.k8s.io", "rolebindings", rb),
            json!([
                "rb",
                "ClusterRole/view",
                "60m",
                "jane",
                "",
                "fleet-system/e"
            ])
        );
    }

    #[test]
    fn crds_use_the_default_convertor() {
        let cols = builtin_columns("apiextensions.k8s.io", "customresourcedefinitions").unwrap();
        assert!(is_default_convertor(&cols));
        let t = to_table(&cols, &[], IncludeObject::None, json!({}), now());
        assert_eq!(t["rows"], Value::Null);
        assert_eq!(t["columnDefinitions"][1]["name"], "Created At");
        let crd = json!({"metadata": {"name": "x", "creationTimestamp": T0}});
        let t = to_table(&cols, &[crd], IncludeObject::None, json!({}), now());
        assert_eq!(t["rows"][0]["cells"], json!(["x", T0]));
        let pods = builtin_columns("", "pods").unwrap();
        let t = to_table(&pods, &[], IncludeObject::None, json!({}), now());
        assert_eq!(t["rows"], json!([]));
    }
}
