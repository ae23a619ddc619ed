use super::*;

#[test]
fn a_pod_is_decoded_without_its_spec() {
    let pod = serde_json::json!({
        "metadata": {"name": "web-1", "namespace": "shop", "labels": {"a": "b"},
            "annotations": {"big": "x"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d", "uid": "u", "controller": true}]},
        "spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "PASSWORD", "value": "hunter2"}]}]},
        "status": {"phase": "Running", "containerStatuses": [{
            "name": "c", "image": "i", "imageID": "", "ready": false, "restartCount": 5,
            "volumeMounts": [{"name": "v", "mountPath": "/v"}],
            "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}
    });
    // A GPU model label on a pod is no more kept than any other label.
    let mut pod = pod;
    pod["metadata"]["labels"]["nvidia.com/gpu.product"] = "A100".into();
    let (pod, nested) = keep_pod(serde_json::from_value(pod).unwrap());
    assert!(pod.spec.is_none());
    assert!(!format!("{pod:?}").contains("hunter2"), "no env in memory");
    assert_eq!(pod.metadata.labels, None);
    assert_eq!(pod.metadata.annotations, None);
    assert_eq!(pod.metadata.owner_references.unwrap()[0].name, "web-7d");
    let status = pod.status.unwrap();
    let c = &status.container_statuses.unwrap()[0];
    assert_eq!(c.restart_count, 5);
    assert_eq!(c.volume_mounts, None);
    assert_eq!(
        c.state
            .as_ref()
            .unwrap()
            .waiting
            .as_ref()
            .unwrap()
            .reason
            .as_deref(),
        Some("CrashLoopBackOff")
    );
    assert_eq!(
        nested,
        size_of::<OwnerReference>() + size_of::<ContainerStatus>(),
        "what is kept beyond strings is counted"
    );
}

#[test]
fn a_node_keeps_what_it_runs_and_its_gpu_model_label_only() {
    let node = serde_json::json!({
        "metadata": {"name": "n1", "labels": {
            "kubernetes.io/hostname": "n1", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
            "nvidia.com/gpu.count": "8"}},
        "status": {
            "nodeInfo": {"osImage": "Ubuntu 24.04.1 LTS", "kernelVersion": "6.8.0-45-generic",
                         "containerRuntimeVersion": "containerd://1.7.22", "machineID": "m",
                         "bootID": "b", "kubeletVersion": "v1.33.1"},
            "images": [{"names": ["big"], "sizeBytes": 1}]
        }
    });
    let (node, nested) = keep_node(serde_json::from_value(node).unwrap());
    let info = node.status.as_ref().unwrap().node_info.as_ref().unwrap();
    assert_eq!(
        (
            info.os_image.as_str(),
            info.kernel_version.as_str(),
            info.container_runtime_version.as_str()
        ),
        (
            "Ubuntu 24.04.1 LTS",
            "6.8.0-45-generic",
            "containerd://1.7.22"
        )
    );
    assert_eq!((info.machine_id.as_str(), info.boot_id.as_str()), ("", ""));
    assert_eq!(node.status.as_ref().unwrap().images, None);
    let labels = node.metadata.labels.as_ref().unwrap();
    assert_eq!(
        labels.iter().collect::<Vec<_>>(),
        [(
            &"nvidia.com/gpu.product".to_owned(),
            &"NVIDIA-A100-SXM4-80GB".to_owned()
        )]
    );
    assert_eq!(nested, LABEL_ENTRY, "the kept label is counted");
    let info = crate::fleet::inventory::node_info_from_nodes(std::slice::from_ref(&node));
    assert_eq!(info.gpu_model.values[0].value, "NVIDIA-A100-SXM4-80GB");
    assert_eq!(info.kernel_version.values[0].value, "6.8.0-45-generic");
}

#[test]
fn nested_lists_are_cut_and_pages_hold_no_more_than_asked_for() {
    // 10,000 empty container statuses: 30 KB of JSON that would decode
    // into 7.5 MB.
    let statuses = vec![serde_json::json!({}); 10_000];
    let pod = serde_json::json!({"status": {"containerStatuses": statuses}});
    let (pod, _) = keep_pod(serde_json::from_value(pod).unwrap());
    assert_eq!(
        pod.status.unwrap().container_statuses.unwrap().len(),
        MAX_CONTAINERS
    );
    let page = |items: usize, max: usize| {
        let body = serde_json::json!({"items": vec![serde_json::json!({}); items]}).to_string();
        let mut de = serde_json::Deserializer::from_str(&body);
        serde::de::DeserializeSeed::deserialize(
            PageSeed::<MetadataOnly> {
                max,
                item: std::marker::PhantomData,
            },
            &mut de,
        )
        .map(|p| p.items.len())
    };
    assert_eq!(page(500, 500).unwrap(), 500);
    assert!(
        page(501, 500).is_err(),
        "more than the limit: not the Kubernetes API"
    );
}

#[test]
fn answers_that_are_not_the_kubernetes_api_are_told_apart() {
    let html = b"<html><body>metadata service</body></html>";
    assert!(matches!(
        answer_error("nodes", 404, html),
        MemberError::NotKubernetes { what: "nodes" }
    ));
    assert!(matches!(
        answer_error("nodes", 500, b"{\"error\": \"x\"}"),
        MemberError::NotKubernetes { .. }
    ));
    let status =
        br#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}"#;
    let e = answer_error("API resources", 404, status);
    assert!(e.is_not_found(), "{e:?}");
    // A credential problem stays one, whatever the body says.
    for code in [401, 403] {
        match answer_error("pods", code, html) {
            MemberError::Read {
                source: kube::Error::Api(s),
                ..
            } => assert_eq!(s.code, code),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_page_without_items_or_metadata_is_empty() {
    let decode = |body: &str| {
        let mut de = serde_json::Deserializer::from_str(body);
        serde::de::DeserializeSeed::deserialize(
            PageSeed::<MetadataOnly> {
                max: 10,
                item: std::marker::PhantomData,
            },
            &mut de,
        )
        .unwrap()
    };
    let page = decode(r#"{"items": null}"#);
    assert!(page.items.is_empty() && page.continue_.is_none());
    let page = decode(r#"{"kind": "List", "metadata": {"continue": "t"}, "items": [{}]}"#);
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.continue_.as_deref(), Some("t"));
}
