use super::*;
use crate::api::Severity;
use serde_json::json;

fn now() -> Timestamp {
    "2026-01-01T12:00:00Z".parse().unwrap()
}

fn pod(v: serde_json::Value) -> Pod {
    serde_json::from_value(v).unwrap()
}

fn deployment_pod(name: &str, status: serde_json::Value) -> Pod {
    pod(json!({
        "metadata": {
            "name": name, "namespace": "shop",
            "labels": {"pod-template-hash": "5d8f7"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8f7", "uid": "u", "controller": true}]
        },
        "status": status,
    }))
}

fn rs() -> ReplicaSet {
    serde_json::from_value(json!({
        "metadata": {
            "name": "web-5d8f7", "namespace": "shop",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d", "controller": true}]
        }
    }))
    .unwrap()
}

fn waiting(reason: &str) -> serde_json::Value {
    json!({"containerStatuses": [{
        "name": "app", "image": "x", "imageID": "", "ready": false, "restartCount": 4,
        "state": {"waiting": {"reason": reason, "message": format!("{reason} happened")}}
    }]})
}

fn node(name: &str, conditions: serde_json::Value) -> Node {
    serde_json::from_value(
        json!({"metadata": {"name": name}, "status": {"conditions": conditions}}),
    )
    .unwrap()
}

fn types(obs: &[Observation]) -> Vec<SignalType> {
    obs.iter().map(|o| o.type_).collect()
}

#[test]
fn container_waiting_reasons() {
    for (reason, want) in [
        ("CrashLoopBackOff", SignalType::CrashLoopBackOff),
        ("ImagePullBackOff", SignalType::ImagePullBackOff),
        ("ErrImagePull", SignalType::ImagePullBackOff),
        (
            "CreateContainerConfigError",
            SignalType::CreateContainerConfigError,
        ),
    ] {
        let pods = [deployment_pod("web-5d8f7-abc", waiting(reason))];
        let rss = [rs()];
        let obs = observe(SignalSources {
            pods: &pods,
            replica_sets: &rss,
            ..Default::default()
        });
        assert_eq!(obs.len(), 1, "{reason}");
        assert_eq!(obs[0].type_, want);
        assert_eq!(obs[0].namespace, "shop");
        assert_eq!(obs[0].workload, WorkloadRef::new("Deployment", "web"));
        assert_eq!(
            obs[0].message.as_deref(),
            Some(format!("container app: {reason} happened").as_str())
        );
    }
    let pods = [deployment_pod("p", waiting("ContainerCreating"))];
    assert!(
        observe(SignalSources {
            pods: &pods,
            ..Default::default()
        })
        .is_empty()
    );
}

#[test]
fn oom_killed_from_last_state_or_state() {
    for key in ["lastState", "state"] {
        let pods = [deployment_pod(
            "web-5d8f7-abc",
            json!({"containerStatuses": [{
                "name": "app", "image": "x", "imageID": "", "ready": true, "restartCount": 2,
                key: {"terminated": {"reason": "OOMKilled", "exitCode": 137}}
            }]}),
        )];
        let obs = observe(SignalSources {
            pods: &pods,
            ..Default::default()
        });
        assert_eq!(types(&obs), [SignalType::OomKilled], "{key}");
        assert_eq!(
            obs[0].message.as_deref(),
            Some("container app was OOMKilled (exit code 137, 2 restarts)")
        );
    }
}

#[test]
fn init_containers_count_too() {
    let pods = [pod(json!({
        "metadata": {"name": "solo", "namespace": "a"},
        "status": {"initContainerStatuses": [{
            "name": "init", "image": "x", "imageID": "", "ready": false, "restartCount": 0,
            "state": {"waiting": {"reason": "ErrImagePull"}}
        }]}
    }))];
    let obs = observe(SignalSources {
        pods: &pods,
        ..Default::default()
    });
    assert_eq!(types(&obs), [SignalType::ImagePullBackOff]);
    assert_eq!(obs[0].workload, WorkloadRef::new("Pod", "solo"));
    assert_eq!(
        obs[0].message.as_deref(),
        Some("container init: ErrImagePull")
    );
}

#[test]
fn evicted_and_unschedulable() {
    let pods = [
        pod(
            json!({"metadata": {"name": "e", "namespace": "a"}, "status": {"phase": "Failed", "reason": "Evicted", "message": "low on memory"}}),
        ),
        pod(
            json!({"metadata": {"name": "u", "namespace": "a"}, "status": {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes available"}
            ]}}),
        ),
        pod(
            json!({"metadata": {"name": "ok", "namespace": "a"}, "status": {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "SchedulerError"}
            ]}}),
        ),
    ];
    let obs = observe(SignalSources {
        pods: &pods,
        ..Default::default()
    });
    assert_eq!(
        types(&obs),
        [SignalType::Unschedulable, SignalType::Evicted]
    );
    assert_eq!(obs[0].message.as_deref(), Some("0/3 nodes available"));
    assert_eq!(obs[1].workload, WorkloadRef::new("Pod", "e"));
}

#[test]
fn node_conditions() {
    let nodes = [
        node(
            "n1",
            json!([{"type": "Ready", "status": "False", "message": "kubelet stopped posting"}]),
        ),
        node(
            "n2",
            json!([{"type": "Ready", "status": "Unknown"}, {"type": "MemoryPressure", "status": "True"}]),
        ),
        node(
            "n3",
            json!([
                {"type": "Ready", "status": "True"},
                {"type": "DiskPressure", "status": "True"},
                {"type": "PIDPressure", "status": "True"},
                {"type": "MemoryPressure", "status": "False"}
            ]),
        ),
        node("n4", json!([])),
        node("ok", json!([{"type": "Ready", "status": "True"}])),
    ];
    let obs = observe(SignalSources {
        nodes: &nodes,
        ..Default::default()
    });
    let got: Vec<_> = obs
        .iter()
        .map(|o| (o.type_, o.workload.name.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (SignalType::NodeNotReady, "n1"),
            (SignalType::NodeNotReady, "n2"),
            (SignalType::NodeNotReady, "n4"),
            (SignalType::MemoryPressure, "n2"),
            (SignalType::DiskPressure, "n3"),
            (SignalType::PidPressure, "n3"),
        ]
    );
    assert!(
        obs.iter()
            .all(|o| o.namespace.is_empty() && o.workload.kind == "Node")
    );
    assert_eq!(obs[0].message.as_deref(), Some("kubelet stopped posting"));
    assert_eq!(obs[1].message.as_deref(), Some("node Ready is Unknown"));
}

#[test]
fn failed_inference_services() {
    let svc = |name: &str, health| InferenceServiceState {
        kind: "InferenceService".into(),
        namespace: "ml".into(),
        name: name.into(),
        health,
        message: Some("boom".into()),
        since: None,
    };
    let services = [
        svc("a", InferenceHealth::Failed),
        svc("b", InferenceHealth::Ready),
        svc("c", InferenceHealth::Progressing),
    ];
    let obs = observe(SignalSources {
        inference_services: &services,
        ..Default::default()
    });
    assert_eq!(types(&obs), [SignalType::InferenceServiceFailed]);
    assert_eq!(obs[0].workload, WorkloadRef::new("InferenceService", "a"));
}

#[test]
fn owner_resolution() {
    let owned = |kind: &str, name: &str| {
        pod(json!({
            "metadata": {"name": "p", "namespace": "a", "ownerReferences": [
                {"apiVersion": "v1", "kind": kind, "name": name, "uid": "u", "controller": true}
            ]},
            "status": waiting("CrashLoopBackOff"),
        }))
    };
    let rss = [rs()];
    let cases = [
        (
            owned("StatefulSet", "db"),
            WorkloadRef::new("StatefulSet", "db"),
        ),
        (
            owned("DaemonSet", "agent"),
            WorkloadRef::new("DaemonSet", "agent"),
        ),
        (owned("Job", "migrate"), WorkloadRef::new("Job", "migrate")),
        (
            owned("InferenceService", "llm"),
            WorkloadRef::new("Pod", "p"),
        ),
        (
            owned("ReplicaSet", "orphan-rs"),
            WorkloadRef::new("ReplicaSet", "orphan-rs"),
        ),
    ];
    for (p, want) in cases {
        let pods = [p];
        let obs = observe(SignalSources {
            pods: &pods,
            replica_sets: &rss,
            ..Default::default()
        });
        assert_eq!(obs[0].workload, want);
    }
    // ReplicaSet not listed: the pod-template-hash names the Deployment.
    let pods = [deployment_pod("web-5d8f7-x", waiting("CrashLoopBackOff"))];
    let obs = observe(SignalSources {
        pods: &pods,
        ..Default::default()
    });
    assert_eq!(obs[0].workload, WorkloadRef::new("Deployment", "web"));
    // ReplicaSet listed without a Deployment owner.
    let bare: ReplicaSet =
        serde_json::from_value(json!({"metadata": {"name": "web-5d8f7", "namespace": "shop"}}))
            .unwrap();
    let rss = [bare];
    let obs = observe(SignalSources {
        pods: &pods,
        replica_sets: &rss,
        ..Default::default()
    });
    assert_eq!(obs[0].workload, WorkloadRef::new("ReplicaSet", "web-5d8f7"));
}

#[test]
fn pods_of_one_workload_merge_into_one_signal() {
    let rss = [rs()];
    let pods = [
        deployment_pod("web-5d8f7-b", waiting("CrashLoopBackOff")),
        deployment_pod("web-5d8f7-a", waiting("CrashLoopBackOff")),
    ];
    let obs = observe(SignalSources {
        pods: &pods,
        replica_sets: &rss,
        ..Default::default()
    });
    assert_eq!(obs.len(), 1);
}

fn obs(type_: SignalType, name: &str) -> Observation {
    Observation {
        type_,
        namespace: "a".into(),
        workload: WorkloadRef::new("Deployment", name),
        message: None,
        since: None,
    }
}

#[test]
fn merge_carries_first_seen_and_count() {
    let t1 = now();
    let first = merge(
        &[],
        vec![obs(SignalType::CrashLoopBackOff, "web")],
        t1,
        DEFAULT_RETENTION,
    );
    assert_eq!(first[0].count, 1);
    assert_eq!(first[0].first_seen, Time(t1));
    assert_eq!(first[0].severity, Severity::High);
    let t2 = t1 + SignedDuration::from_secs(30);
    let second = merge(
        &first,
        vec![obs(SignalType::CrashLoopBackOff, "web")],
        t2,
        DEFAULT_RETENTION,
    );
    assert_eq!(second[0].count, 2);
    assert_eq!(second[0].first_seen, Time(t1));
    assert_eq!(second[0].last_seen, Time(t2));
}

#[test]
fn merge_keeps_recent_and_drops_old_unobserved_signals() {
    let t1 = now();
    let first = merge(
        &[],
        vec![obs(SignalType::CrashLoopBackOff, "web")],
        t1,
        DEFAULT_RETENTION,
    );
    let t2 = t1 + SignedDuration::from_secs(15 * 60);
    let kept = merge(&first, vec![], t2, DEFAULT_RETENTION);
    assert_eq!(kept, first, "kept unchanged within retention");
    let t3 = t2 + SignedDuration::from_secs(1);
    assert!(merge(&kept, vec![], t3, DEFAULT_RETENTION).is_empty());
}

#[test]
fn merge_sorts_worst_first_and_bounds_to_100() {
    let mut observed: Vec<Observation> = (0..150)
        .map(|i| obs(SignalType::Evicted, &format!("w{i:03}")))
        .collect();
    observed.push(obs(SignalType::ImagePullBackOff, "img"));
    observed.push(Observation {
        type_: SignalType::NodeNotReady,
        namespace: String::new(),
        workload: WorkloadRef::new("Node", "n1"),
        message: None,
        since: None,
    });
    observed.push(obs(SignalType::OomKilled, "big"));
    observed.push(obs(SignalType::CrashLoopBackOff, "big"));
    let out = merge(&[], observed, now(), DEFAULT_RETENTION);
    assert_eq!(out.len(), MAX_SIGNALS);
    let head: Vec<_> = out
        .iter()
        .take(5)
        .map(|s| (s.type_, s.workload.name.as_str()))
        .collect();
    assert_eq!(
        head,
        [
            (SignalType::NodeNotReady, "n1"),
            (SignalType::OomKilled, "big"),
            (SignalType::CrashLoopBackOff, "big"),
            (SignalType::ImagePullBackOff, "img"),
            (SignalType::Evicted, "w000"),
        ]
    );
    assert_eq!(out.last().unwrap().workload.name, "w095");
}

#[test]
fn collect_is_deterministic_whatever_the_input_order() {
    let rss = [rs()];
    let mut pods = vec![
        deployment_pod("web-5d8f7-a", waiting("CrashLoopBackOff")),
        pod(json!({"metadata": {"name": "e", "namespace": "b"}, "status": {"reason": "Evicted"}})),
    ];
    let a = collect_signals(
        SignalSources {
            pods: &pods,
            replica_sets: &rss,
            ..Default::default()
        },
        &[],
        now(),
    );
    pods.reverse();
    let b = collect_signals(
        SignalSources {
            pods: &pods,
            replica_sets: &rss,
            ..Default::default()
        },
        &[],
        now(),
    );
    assert_eq!(a, b);
    assert_eq!(a.len(), 2);
}

// --- onsets: when the member's records say a failure began ---

/// `mins` minutes before [`now`], as the API server writes times.
fn mins_ago(mins: i64) -> String {
    (now() - SignedDuration::from_mins(mins)).to_string()
}

fn since_of(pods: &[Pod]) -> Vec<(SignalType, Option<Timestamp>)> {
    observe(SignalSources {
        pods,
        ..Default::default()
    })
    .into_iter()
    .map(|o| (o.type_, o.since))
    .collect()
}

fn ts(mins: i64) -> Option<Timestamp> {
    Some(now() - SignedDuration::from_mins(mins))
}

/// A pod of Deployment `web` created 3 h and started 2 h 59 min ago,
/// with `status` merged over its start time.
fn started_pod(status: serde_json::Value) -> Pod {
    let mut p = deployment_pod("web-5d8f7-abc", status);
    p.metadata.creation_timestamp = Some(Time(now() - SignedDuration::from_mins(180)));
    let st = p.status.get_or_insert_with(Default::default);
    st.start_time
        .get_or_insert(Time(now() - SignedDuration::from_mins(179)));
    p
}

fn container(state: serde_json::Value, last_state: serde_json::Value) -> serde_json::Value {
    json!({"name": "app", "image": "x", "imageID": "", "ready": false, "restartCount": 12,
           "state": state, "lastState": last_state})
}

fn crash_looping(last_exit_mins: i64) -> serde_json::Value {
    container(
        json!({"waiting": {"reason": "CrashLoopBackOff"}}),
        json!({"terminated": {"exitCode": 1, "reason": "Error",
                              "startedAt": mins_ago(last_exit_mins + 1),
                              "finishedAt": mins_ago(last_exit_mins)}}),
    )
}

fn condition(type_: &str, status: &str, mins: i64) -> serde_json::Value {
    json!({"type": type_, "status": status, "lastTransitionTime": mins_ago(mins)})
}

#[test]
fn crash_loop_onset_is_when_the_containers_stopped_being_ready() {
    // Failing for 60 min, last crash 2 min ago: the readiness
    // transition, not the latest crash.
    let pod = started_pod(json!({
        "conditions": [condition("Ready", "False", 60), condition("ContainersReady", "False", 60)],
        "containerStatuses": [crash_looping(2)],
    }));
    assert_eq!(since_of(&[pod]), [(SignalType::CrashLoopBackOff, ts(60))]);
    // Ready alone (no ContainersReady) serves too.
    let pod = started_pod(json!({
        "conditions": [condition("Ready", "False", 45)],
        "containerStatuses": [crash_looping(2)],
    }));
    assert_eq!(since_of(&[pod])[0].1, ts(45));
    // The next crash does not move it: same onset 5 min later.
    let later = started_pod(json!({
        "conditions": [condition("ContainersReady", "False", 60)],
        "containerStatuses": [crash_looping(0)],
    }));
    assert_eq!(since_of(&[later])[0].1, ts(60));
}

#[test]
fn crash_loop_onset_without_a_readiness_record() {
    // ContainersReady True (a stale status) or absent: the last crash.
    for conditions in [json!([condition("ContainersReady", "True", 90)]), json!([])] {
        let pod = started_pod(json!({
            "conditions": conditions,
            "containerStatuses": [crash_looping(3)],
        }));
        assert_eq!(since_of(&[pod])[0].1, ts(3), "{conditions}");
    }
    // No termination on record either: the pod's start, else creation.
    let waiting_only = json!({"containerStatuses": [container(
        json!({"waiting": {"reason": "CrashLoopBackOff"}}), json!({}))]});
    assert_eq!(since_of(&[started_pod(waiting_only.clone())])[0].1, ts(179));
    let mut unstarted = started_pod(waiting_only.clone());
    unstarted.status.as_mut().unwrap().start_time = None;
    assert_eq!(since_of(&[unstarted])[0].1, ts(180));
    // Nothing recorded at all: no onset (merge falls back).
    assert_eq!(
        since_of(&[deployment_pod("web-5d8f7-abc", waiting_only)])[0].1,
        None
    );
}

#[test]
fn image_and_config_errors_start_when_the_containers_went_unready() {
    for reason in [
        "ImagePullBackOff",
        "ErrImagePull",
        "CreateContainerConfigError",
    ] {
        let state = json!({"waiting": {"reason": reason}});
        let pod = started_pod(json!({
            "conditions": [condition("ContainersReady", "False", 30)],
            "containerStatuses": [container(state.clone(), json!({}))],
        }));
        assert_eq!(since_of(&[pod])[0].1, ts(30), "{reason}");
        // Never ran, no condition: since the pod started.
        let pod = started_pod(json!({"containerStatuses": [container(state, json!({}))]}));
        assert_eq!(since_of(&[pod])[0].1, ts(179), "{reason}");
    }
}

#[test]
fn oom_onset_is_the_kill() {
    let killed = |key: &str, terminated: serde_json::Value| {
        let (state, last) = if key == "state" {
            (json!({"terminated": terminated}), json!({}))
        } else {
            (
                json!({"running": {"startedAt": mins_ago(4)}}),
                json!({"terminated": terminated}),
            )
        };
        started_pod(json!({
            "conditions": [condition("ContainersReady", "True", 4)],
            "containerStatuses": [container(state, last)],
        }))
    };
    for key in ["lastState", "state"] {
        let full = json!({"reason": "OOMKilled", "exitCode": 137,
                          "startedAt": mins_ago(20), "finishedAt": mins_ago(5)});
        assert_eq!(
            since_of(&[killed(key, full)]),
            [(SignalType::OomKilled, ts(5))],
            "{key}"
        );
        let started_only =
            json!({"reason": "OOMKilled", "exitCode": 137, "startedAt": mins_ago(20)});
        assert_eq!(since_of(&[killed(key, started_only)])[0].1, ts(20), "{key}");
        let bare = json!({"reason": "OOMKilled", "exitCode": 137});
        assert_eq!(since_of(&[killed(key, bare)])[0].1, None, "{key}");
    }
}

#[test]
fn unschedulable_onset_is_the_scheduling_verdict() {
    let pending =
        |cond: serde_json::Value| started_pod(json!({"phase": "Pending", "conditions": [cond]}));
    let mut with_time = condition("PodScheduled", "False", 25);
    with_time["reason"] = json!("Unschedulable");
    assert_eq!(
        since_of(&[pending(with_time)]),
        [(SignalType::Unschedulable, ts(25))]
    );
    // No transition time: never scheduled, so since it was created.
    let bare = json!({"type": "PodScheduled", "status": "False", "reason": "Unschedulable"});
    assert_eq!(since_of(&[pending(bare)])[0].1, ts(180));
}

#[test]
fn eviction_onset_is_what_the_pod_records_of_it() {
    let evicted = |extra: serde_json::Value| {
        let mut status =
            json!({"phase": "Failed", "reason": "Evicted", "message": "low on memory"});
        status
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        started_pod(status)
    };
    let terminated = |mins| {
        container(
            json!({"terminated": {"exitCode": 137, "finishedAt": mins_ago(mins)}}),
            json!({}),
        )
    };
    let cases = [
        (
            json!({"conditions": [condition("DisruptionTarget", "True", 8), condition("Ready", "False", 7)]}),
            ts(8),
        ),
        (
            json!({"conditions": [condition("Ready", "False", 7)]}),
            ts(7),
        ),
        (
            json!({"containerStatuses": [terminated(9), terminated(6)]}),
            ts(6),
        ),
        // Its start says nothing about when it was evicted.
        (json!({}), None),
    ];
    for (extra, want) in cases {
        let got = since_of(&[evicted(extra.clone())]);
        assert_eq!(got, [(SignalType::Evicted, want)], "{extra}");
    }
}

#[test]
fn node_onset_is_the_condition_transition() {
    let mut nodes = [
        node(
            "n1",
            json!([
                condition("Ready", "False", 12),
                condition("DiskPressure", "True", 14)
            ]),
        ),
        node("n2", json!([condition("Ready", "Unknown", 3)])),
        node("n3", json!([])),
        node(
            "n4",
            json!([{"type": "Ready", "status": "True"}, {"type": "PIDPressure", "status": "True"}]),
        ),
    ];
    nodes[2].metadata.creation_timestamp = Some(Time(now() - SignedDuration::from_mins(2)));
    let got: Vec<_> = observe(SignalSources {
        nodes: &nodes,
        ..Default::default()
    })
    .into_iter()
    .map(|o| (o.type_, o.workload.name, o.since))
    .collect();
    assert_eq!(
        got,
        [
            (SignalType::NodeNotReady, "n1".into(), ts(12)),
            (SignalType::NodeNotReady, "n2".into(), ts(3)),
            // Never reported Ready: NotReady since it was created.
            (SignalType::NodeNotReady, "n3".into(), ts(2)),
            (SignalType::DiskPressure, "n1".into(), ts(14)),
            (SignalType::PidPressure, "n4".into(), None),
        ]
    );
}

#[test]
fn inference_onset_comes_from_the_classified_service() {
    let services = [InferenceServiceState {
        kind: "InferenceService".into(),
        namespace: "ml".into(),
        name: "llm".into(),
        health: InferenceHealth::Failed,
        message: None,
        since: ts(33),
    }];
    let obs = observe(SignalSources {
        inference_services: &services,
        ..Default::default()
    });
    assert_eq!(obs[0].since, ts(33));
}

#[test]
fn a_workloads_onset_is_its_earliest_pods() {
    let rss = [rs()];
    let crashing = |name: &str, mins: Option<i64>| {
        let conditions = mins.map_or(json!([]), |m| {
            json!([condition("ContainersReady", "False", m)])
        });
        deployment_pod(
            name,
            json!({"conditions": conditions, "containerStatuses": [container(
                json!({"waiting": {"reason": "CrashLoopBackOff"}}), json!({}))]}),
        )
    };
    // The pod sorting first records nothing, the others 40 and 70 min.
    let pods = [
        crashing("web-5d8f7-c", Some(40)),
        crashing("web-5d8f7-a", None),
        crashing("web-5d8f7-b", Some(70)),
    ];
    let obs = observe(SignalSources {
        pods: &pods,
        replica_sets: &rss,
        ..Default::default()
    });
    assert_eq!(obs.len(), 1);
    assert_eq!(obs[0].since, ts(70));
}

fn obs_since(name: &str, since: Option<Timestamp>) -> Observation {
    Observation {
        since,
        ..obs(SignalType::CrashLoopBackOff, name)
    }
}

#[test]
fn first_seen_is_the_members_onset_whenever_the_reader_starts() {
    // Two readers (an edge before and after a restart, or two edges)
    // that first read the same member at different times agree.
    let onset = now() - SignedDuration::from_mins(90);
    let early = merge(
        &[],
        vec![obs_since("web", Some(onset))],
        now(),
        DEFAULT_RETENTION,
    );
    let late_now = now() + SignedDuration::from_mins(7);
    let late = merge(
        &[],
        vec![obs_since("web", Some(onset))],
        late_now,
        DEFAULT_RETENTION,
    );
    assert_eq!(early[0].first_seen, Time(onset));
    assert_eq!(late[0].first_seen, Time(onset));
    assert_eq!(late[0].last_seen, Time(late_now));
    assert_eq!(late[0].count, 1);
}

#[test]
fn first_seen_keeps_the_earliest_onset_while_continuous() {
    let t = |m: i64| now() - SignedDuration::from_mins(m);
    let first = merge(
        &[],
        vec![obs_since("web", Some(t(60)))],
        t(30),
        DEFAULT_RETENTION,
    );
    assert_eq!(first[0].first_seen, Time(t(60)));
    // The member's record moved forward (ready between crashes): kept.
    let second = merge(
        &first,
        vec![obs_since("web", Some(t(20)))],
        t(20),
        DEFAULT_RETENTION,
    );
    assert_eq!((second[0].first_seen.0, second[0].count), (t(60), 2));
    // An earlier record (an older pod listed now): taken.
    let third = merge(
        &second,
        vec![obs_since("web", Some(t(75)))],
        t(19),
        DEFAULT_RETENTION,
    );
    assert_eq!(third[0].first_seen, Time(t(75)));
    // Nothing recorded: carried as it was.
    let fourth = merge(
        &third,
        vec![obs_since("web", None)],
        t(18),
        DEFAULT_RETENTION,
    );
    assert_eq!((fourth[0].first_seen.0, fourth[0].count), (t(75), 4));
}

#[test]
fn a_failure_back_after_the_retention_gap_is_a_new_episode() {
    let t = |m: i64| now() - SignedDuration::from_mins(m);
    let before = merge(
        &[],
        vec![obs_since("web", Some(t(120)))],
        t(100),
        DEFAULT_RETENTION,
    );
    // Not seen for 15 min + 1 s: the old sighting no longer carries.
    let back = t(85) + SignedDuration::from_secs(1);
    let again = merge(
        &before,
        vec![obs_since("web", Some(t(86)))],
        back,
        DEFAULT_RETENTION,
    );
    assert_eq!((again[0].first_seen.0, again[0].count), (t(86), 1));
    let again = merge(
        &before,
        vec![obs_since("web", None)],
        back,
        DEFAULT_RETENTION,
    );
    assert_eq!(again[0].first_seen, Time(back));
    // Exactly at the retention limit it is still continuous.
    let kept = merge(
        &before,
        vec![obs_since("web", Some(t(86)))],
        t(85),
        DEFAULT_RETENTION,
    );
    assert_eq!((kept[0].first_seen.0, kept[0].count), (t(120), 2));
}

#[test]
fn onsets_ahead_of_the_readers_clock_count_as_now() {
    let ahead = now() + SignedDuration::from_mins(5);
    let out = merge(
        &[],
        vec![obs_since("web", Some(ahead))],
        now(),
        DEFAULT_RETENTION,
    );
    assert_eq!(out[0].first_seen, Time(now()));
    // ... and a previous report from the future does not leak either.
    let mut future = out.clone();
    future[0].first_seen = Time(ahead);
    let out = merge(
        &future,
        vec![obs_since("web", Some(ahead))],
        now(),
        DEFAULT_RETENTION,
    );
    assert_eq!(out[0].first_seen, Time(now()));
}

#[test]
fn a_previous_report_from_far_ahead_is_not_kept_for_ever() {
    // A status dated 2099 (written with the site's token, or by a
    // reader whose clock was wrong) is neither carried nor retained.
    let future = Signal::test(SignalType::OomKilled, "a", "Deployment", "big")
        .seen(-3_000_000_000, -3_000_000_000);
    assert!(
        merge(
            std::slice::from_ref(&future),
            vec![],
            now(),
            DEFAULT_RETENTION
        )
        .is_empty()
    );
    let out = merge(
        &[future],
        vec![Observation {
            type_: SignalType::OomKilled,
            ..obs_since("big", None)
        }],
        now(),
        DEFAULT_RETENTION,
    );
    assert_eq!((out[0].first_seen.0, out[0].count), (now(), 1));
    // A few seconds ahead (a clock stepped back): still continuous.
    let ahead = Signal::test(SignalType::OomKilled, "a", "Deployment", "big").seen(600, -5);
    let out = merge(
        std::slice::from_ref(&ahead),
        vec![],
        now(),
        DEFAULT_RETENTION,
    );
    assert_eq!(out, [ahead]);
}

#[test]
fn history_starts_from_the_hubs_copy_of_the_site() {
    let held = Signal::test(SignalType::CrashLoopBackOff, "a", "Deployment", "web");
    let site = FederatedCluster::test("site-a").with_signal(held.clone());
    let mut history = SignalHistory::default();
    assert_eq!(history.previous(&site), std::slice::from_ref(&held));
    // Afterwards its own reports, not the (older) copy on the hub.
    let mine = merge(
        history.previous(&site),
        vec![obs(SignalType::CrashLoopBackOff, "web")],
        now(),
        DEFAULT_RETENTION,
    );
    history.record(&mine);
    assert_eq!(history.previous(&site), mine.as_slice());
    assert_eq!(
        mine[0].first_seen, held.first_seen,
        "carried from the hub's copy"
    );
    assert_eq!(mine[0].count, 2);
    // A re-created site (new uid) starts from its own, empty, status.
    let mut recreated = FederatedCluster::test("site-a");
    recreated.metadata.uid = Some("another".into());
    assert!(history.previous(&recreated).is_empty());
}

#[test]
fn history_keeps_the_retained_signals_of_the_report_before_a_restart() {
    // A flapping failure not seen in this listing, 10 min ago on the
    // hub: a restarted reader keeps it for the rest of its retention.
    let held = Signal::test(SignalType::OomKilled, "a", "Deployment", "big").seen(900, 600);
    let site = FederatedCluster::test("site-a").with_signal(held.clone());
    let mut history = SignalHistory::default();
    let out = merge(history.previous(&site), vec![], now(), DEFAULT_RETENTION);
    assert_eq!(out, [held]);
}
