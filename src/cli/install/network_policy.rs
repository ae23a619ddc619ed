//! The NetworkPolicy `install` ships for each operator's pods
//! (docs/reliability.md#what-install-ships-who-can-reach-what).
//!
//! Ingress: only the operator's HTTPS port (`/metrics` and, on the hub,
//! the REST API), and only from pods of the cluster. The plain health
//! port is admitted from no pod: the kubelet probes it from the pod's own
//! node, which a NetworkPolicy always lets through, so no other pod can
//! take the places the kubelet's probes need
//! (docs/reliability.md#who-can-reach-the-operators-http-servers).
//!
//! Egress: DNS (port 53) and TCP to [`API_SERVER_PORTS`] on any address.
//! A NetworkPolicy cannot name the API server — it is not a pod, and
//! behind the `kubernetes` Service it is whatever its endpoints are (the
//! control plane's addresses, or a managed endpoint outside the cluster),
//! on the port the endpoints use (6443 on kubeadm, k3s and most
//! self-managed clusters; 443 on most managed ones). Address rules would
//! differ per cluster, so the policy pins the ports instead: the hub's
//! own API server, a Pull site's member API server (any address: members
//! are wherever they are) and, for an edge, its member and the hub. An
//! API server on another port needs one more NetworkPolicy selecting the
//! same pods; NetworkPolicies add up.

use serde_json::{Value, json};

/// TCP ports the operators may dial besides DNS: where API servers listen.
pub const API_SERVER_PORTS: [i32; 2] = [443, 6443];
/// The DNS port, UDP and TCP.
pub const DNS_PORT: i32 = 53;

/// The NetworkPolicy `name` in `namespace` for the pods matching
/// `selector`: ingress on `ports` (TCP) from any pod of the cluster (and
/// on every port from the pods' own node, as for any NetworkPolicy),
/// egress to DNS and to API servers only.
pub fn operator_policy(
    name: &str,
    namespace: &str,
    labels: Value,
    selector: Value,
    ports: &[i32],
) -> Value {
    let tcp = |port: &i32| json!({ "protocol": "TCP", "port": port });
    json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": { "name": name, "namespace": namespace, "labels": labels },
        "spec": {
            "podSelector": { "matchLabels": selector },
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [{
                // Every namespace's pods; nothing from outside the cluster.
                "from": [{ "namespaceSelector": {} }],
                "ports": ports.iter().map(tcp).collect::<Vec<_>>(),
            }],
            "egress": [
                { "ports": [
                    { "protocol": "UDP", "port": DNS_PORT },
                    { "protocol": "TCP", "port": DNS_PORT },
                ] },
                { "ports": API_SERVER_PORTS.iter().map(tcp).collect::<Vec<_>>() },
            ],
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_given_ports_in_and_dns_and_api_servers_out() {
        let p = operator_policy("n", "ns", json!({}), json!({ "app": "x" }), &[8443]);
        let spec = &p["spec"];
        assert_eq!(spec["policyTypes"], json!(["Ingress", "Egress"]));
        assert_eq!(spec["podSelector"]["matchLabels"], json!({ "app": "x" }));
        assert_eq!(spec["ingress"].as_array().unwrap().len(), 1);
        assert_eq!(
            spec["ingress"][0]["ports"],
            json!([{ "protocol": "TCP", "port": 8443 }])
        );
        assert_eq!(
            spec["ingress"][0]["from"],
            json!([{ "namespaceSelector": {} }])
        );
        let out: Vec<(String, i64)> = spec["egress"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| {
                assert!(r.get("to").is_none(), "ports only: {r}");
                r["ports"].as_array().unwrap().clone()
            })
            .map(|p| {
                (
                    p["protocol"].as_str().unwrap().to_owned(),
                    p["port"].as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            out,
            [
                ("UDP".to_owned(), 53),
                ("TCP".to_owned(), 53),
                ("TCP".to_owned(), 443),
                ("TCP".to_owned(), 6443),
            ]
        );
    }
}
