//! The shipped manifests against the Pod Security "restricted" profile,
//! with a checker of the profile's controls (and a test of the checker).

use super::*;

// ---------------------------------------------------------------------------
// Pod Security Standards, "restricted" (which includes "baseline"), as
// published at kubernetes.io/docs/concepts/security/pod-security-standards.
// Each check returns the violations of one control for one pod template.

const BASELINE_CAPABILITIES: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];
const SAFE_SYSCTLS: &[&str] = &[
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
];
const RESTRICTED_VOLUME_TYPES: &[&str] = &[
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

/// Every container of a pod spec: containers, initContainers, ephemeralContainers.
fn all_containers(pod: &Value) -> Vec<&Value> {
    ["containers", "initContainers", "ephemeralContainers"]
        .iter()
        .filter_map(|k| pod[*k].as_array())
        .flatten()
        .collect()
}

fn is_true(v: &Value) -> bool {
    v.as_bool() == Some(true)
}

fn pss_restricted_violations(pod: &Value) -> Vec<String> {
    let mut v = Vec::new();
    let psc = &pod["securityContext"];
    let containers = all_containers(pod);
    // Baseline: host namespaces.
    for key in ["hostNetwork", "hostPID", "hostIPC"] {
        if is_true(&pod[key]) {
            v.push(format!("{key} must be unset or false"));
        }
    }
    // Baseline: HostProcess.
    if is_true(&psc["windowsOptions"]["hostProcess"]) {
        v.push("pod windowsOptions.hostProcess".into());
    }
    // Baseline: sysctls.
    for s in psc["sysctls"].as_array().into_iter().flatten() {
        let name = s["name"].as_str().unwrap_or_default();
        if !SAFE_SYSCTLS.contains(&name) {
            v.push(format!("sysctl {name} is not in the safe set"));
        }
    }
    // Baseline: AppArmor, SELinux, seccomp not Unconfined (pod level).
    let apparmor_ok = |a: &Value| {
        a.is_null() || matches!(a["type"].as_str(), Some("RuntimeDefault" | "Localhost"))
    };
    let selinux_ok = |s: &Value| {
        s.is_null()
            || (matches!(
                s["type"].as_str(),
                None | Some("")
                    | Some(
                        "container_t"
                            | "container_init_t"
                            | "container_kvm_t"
                            | "container_engine_t"
                    )
            ) && s["user"].is_null()
                && s["role"].is_null())
    };
    if !apparmor_ok(&psc["appArmorProfile"]) {
        v.push("pod appArmorProfile".into());
    }
    if !selinux_ok(&psc["seLinuxOptions"]) {
        v.push("pod seLinuxOptions".into());
    }
    // Restricted: volume types (baseline's hostPath is covered: not listed).
    for vol in pod["volumes"].as_array().into_iter().flatten() {
        let kind = vol
            .as_object()
            .unwrap()
            .keys()
            .find(|k| *k != "name")
            .cloned()
            .unwrap_or_default();
        if !RESTRICTED_VOLUME_TYPES.contains(&kind.as_str()) {
            v.push(format!("volume {} has type {kind}", vol["name"]));
        }
    }
    // Restricted: seccomp RuntimeDefault or Localhost, at pod level or on
    // every container; never Unconfined.
    let seccomp_set =
        |s: &Value| matches!(s["type"].as_str(), Some("RuntimeDefault" | "Localhost"));
    let pod_seccomp = seccomp_set(&psc["seccompProfile"]);
    // Restricted: runAsNonRoot true at pod level or on every container.
    let pod_non_root = is_true(&psc["runAsNonRoot"]);
    if psc["runAsUser"].as_i64() == Some(0) {
        v.push("pod runAsUser 0".into());
    }
    for c in containers {
        let name = c["name"].as_str().unwrap_or_default();
        let sc = &c["securityContext"];
        if is_true(&sc["privileged"]) {
            v.push(format!("{name}: privileged"));
        }
        if is_true(&sc["windowsOptions"]["hostProcess"]) {
            v.push(format!("{name}: hostProcess"));
        }
        for p in c["ports"].as_array().into_iter().flatten() {
            if p["hostPort"].as_i64().is_some_and(|h| h != 0) {
                v.push(format!("{name}: hostPort"));
            }
        }
        if !matches!(sc["procMount"].as_str(), None | Some("Default")) {
            v.push(format!("{name}: procMount"));
        }
        if !apparmor_ok(&sc["appArmorProfile"]) {
            v.push(format!("{name}: appArmorProfile"));
        }
        if !selinux_ok(&sc["seLinuxOptions"]) {
            v.push(format!("{name}: seLinuxOptions"));
        }
        if sc["allowPrivilegeEscalation"].as_bool() != Some(false) {
            v.push(format!("{name}: allowPrivilegeEscalation must be false"));
        }
        match sc["runAsNonRoot"].as_bool() {
            Some(false) => v.push(format!("{name}: runAsNonRoot false")),
            None if !pod_non_root => v.push(format!("{name}: runAsNonRoot unset")),
            _ => {}
        }
        if sc["runAsUser"].as_i64() == Some(0) {
            v.push(format!("{name}: runAsUser 0"));
        }
        if sc["seccompProfile"]["type"] == "Unconfined"
            || (!pod_seccomp && !seccomp_set(&sc["seccompProfile"]))
        {
            v.push(format!(
                "{name}: seccompProfile must be RuntimeDefault or Localhost"
            ));
        }
        let caps = &sc["capabilities"];
        let drops_all = caps["drop"]
            .as_array()
            .is_some_and(|d| d.iter().any(|c| c == "ALL"));
        if !drops_all {
            v.push(format!("{name}: capabilities must drop ALL"));
        }
        for add in caps["add"].as_array().into_iter().flatten() {
            let cap = add.as_str().unwrap_or_default();
            if !BASELINE_CAPABILITIES.contains(&cap) {
                v.push(format!("{name}: adds capability {cap} (baseline)"));
            } else if cap != "NET_BIND_SERVICE" {
                v.push(format!("{name}: adds capability {cap}"));
            }
        }
    }
    v
}

fn pod_templates(docs: &[Value]) -> Vec<(String, Value)> {
    docs.iter()
        .filter(|d| d["kind"] == "Deployment")
        .map(|d| {
            (
                d["metadata"]["name"].as_str().unwrap().to_owned(),
                d["spec"]["template"]["spec"].clone(),
            )
        })
        .collect()
}

#[test]
fn pss_checker_catches_what_the_profile_forbids() {
    let good = json!({
        "securityContext": { "runAsNonRoot": true, "seccompProfile": { "type": "RuntimeDefault" } },
        "containers": [{ "name": "c", "securityContext": {
            "allowPrivilegeEscalation": false, "capabilities": { "drop": ["ALL"] } } }],
    });
    assert!(pss_restricted_violations(&good).is_empty());
    let breakers: [(&str, Value); 8] = [
        ("/hostNetwork", json!(true)),
        ("/securityContext/runAsNonRoot", json!(false)),
        (
            "/securityContext/seccompProfile",
            json!({ "type": "Unconfined" }),
        ),
        (
            "/containers/0/securityContext/allowPrivilegeEscalation",
            json!(true),
        ),
        ("/containers/0/securityContext/privileged", json!(true)),
        (
            "/containers/0/securityContext/capabilities",
            json!({ "add": ["SYS_ADMIN"], "drop": ["ALL"] }),
        ),
        ("/containers/0/securityContext/runAsUser", json!(0)),
        (
            "/volumes",
            json!([{ "name": "h", "hostPath": { "path": "/" } }]),
        ),
    ];
    for (pointer, value) in breakers {
        let mut pod = good.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        pod.pointer_mut(parent).unwrap()[key] = value;
        assert!(
            !pss_restricted_violations(&pod).is_empty(),
            "{pointer} passed"
        );
    }
}

#[test]
fn hub_and_edge_manifests_pass_the_restricted_profile() {
    let dir = TempDir::new("pss");
    let hub = docs(&run_bin(&["install"], dir.path()).ok().stdout);
    let edge = docs(
        &run_bin(
            &["install", "--role", "edge", "--site", "site-a"],
            dir.path(),
        )
        .ok()
        .stdout,
    );
    let pods: Vec<_> = pod_templates(&hub)
        .into_iter()
        .chain(pod_templates(&edge))
        .collect();
    assert_eq!(pods.len(), 2);
    for (name, pod) in pods {
        let violations = pss_restricted_violations(&pod);
        assert!(violations.is_empty(), "{name}: {violations:?}");
        // The uid is numeric (the kubelet cannot check a named user against
        // runAsNonRoot) and the Secret is readable through fsGroup.
        assert_eq!(pod["securityContext"]["runAsUser"], 65532, "{name}");
        assert_eq!(pod["securityContext"]["fsGroup"], 65532, "{name}");
        for vol in pod["volumes"].as_array().into_iter().flatten() {
            assert_eq!(vol["secret"]["defaultMode"], 0o440, "{name}");
        }
        // The namespace carries no exemption: the profile is met, not waived.
        assert_eq!(pod["hostNetwork"], Value::Null);
    }
}
