use super::*;

#[test]
fn pull_connected_carries_the_probe_failure_class_and_writes_once() {
    use crate::fleet::probe::ProbeFailure;
    let pending = site().pull();
    let failed = verdict(ProbeOutcome::Failed {
        failure: ProbeFailure::Unauthorized,
        message: "rejected".into(),
    });
    let h = pull_hub_status(
        &pending,
        &NEVER,
        I,
        Some(&failed),
        DEFAULT_CREDENTIAL_WARNING,
        None,
        at(0),
    )
    .into_owned();
    assert!(h.changed);
    assert_eq!(h.phase, Phase::Pending, "never reached: still Pending");
    let c = cond(&h, CONDITION_CONNECTED).unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "Unauthorized")
    );
    // The same failure again: nothing to write.
    let after = written(pending, &h);
    assert!(
        !pull_hub_status(
            &after,
            &NEVER,
            I,
            Some(&failed),
            DEFAULT_CREDENTIAL_WARNING,
            None,
            at(30)
        )
        .changed
    );
    // No probe yet in this process: the condition stays as it is.
    assert!(
        !pull_hub_status(
            &after,
            &NEVER,
            I,
            None,
            DEFAULT_CREDENTIAL_WARNING,
            None,
            at(30)
        )
        .changed
    );
    // A successful probe wrote a heartbeat: Connected, reason from the
    // probe, and the insecure kubeconfig is said so.
    let reached = verdict(ProbeOutcome::Reached { insecure: true });
    let h = pull_hub_status(
        &after,
        &seen(40, 40, true),
        I,
        Some(&reached),
        DEFAULT_CREDENTIAL_WARNING,
        None,
        at(41),
    );
    assert_eq!(h.phase, Phase::Connected);
    let c = cond(&h, CONDITION_CONNECTED).unwrap();
    assert_eq!(c.reason, "InsecureSkipTLSVerify");
    assert!(c.message.contains("insecure-skip-tls-verify"));
    let c = cond(&h, CONDITION_CREDENTIAL_EXPIRING).unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("Unknown", "NotReported"),
        "no token expiry reported"
    );
}

#[test]
fn a_pull_site_whose_latest_probe_failed_is_never_connected() {
    use crate::fleet::probe::ProbeFailure;
    let reached = verdict(ProbeOutcome::Reached { insecure: false });
    let connected = written(
        site().pull().heartbeat_ago(0),
        &pull_hub_status(
            &site().pull().heartbeat_ago(0),
            &seen(0, 0, true),
            I,
            Some(&reached),
            DEFAULT_CREDENTIAL_WARNING,
            None,
            at(1),
        ),
    );
    assert_eq!(connected.phase(), Some(Phase::Connected));
    // The very next probe gets a 401, one second after a success: the
    // heartbeat is fresh, but the hub cannot read the member now.
    let unauthorized = verdict(ProbeOutcome::Failed {
        failure: ProbeFailure::Unauthorized,
        message: "rejected".into(),
    });
    let h = pull_hub_status(
        &connected,
        &seen(0, 0, true),
        I,
        Some(&unauthorized),
        DEFAULT_CREDENTIAL_WARNING,
        None,
        at(2),
    )
    .into_owned();
    assert!(h.changed);
    assert_eq!(h.phase, Phase::Stale, "one write: Stale with the reason");
    let c = cond(&h, CONDITION_CONNECTED).unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "Unauthorized")
    );
    // It stays Stale, then turns Unreachable on the usual threshold.
    let stale = written(connected, &h);
    let later = pull_hub_status(
        &stale,
        &seen(0, 0, true),
        I,
        Some(&unauthorized),
        DEFAULT_CREDENTIAL_WARNING,
        None,
        at(200),
    );
    assert_eq!(later.phase, Phase::Stale);
    assert!(!later.changed);
    let gone = pull_hub_status(
        &stale,
        &seen(0, 0, true),
        I,
        Some(&unauthorized),
        DEFAULT_CREDENTIAL_WARNING,
        None,
        at(301),
    );
    assert_eq!(gone.phase, Phase::Unreachable);
    // A success with a fresh heartbeat: Connected again.
    let back = pull_hub_status(
        &stale,
        &seen(300, 300, true),
        I,
        Some(&reached),
        DEFAULT_CREDENTIAL_WARNING,
        None,
        at(301),
    );
    assert_eq!(back.phase, Phase::Connected);
}

#[test]
fn a_pull_credential_is_renewed_by_the_hub_or_warned_with_a_command_that_runs() {
    let reached = verdict(ProbeOutcome::Reached { insecure: false });
    let judge_at = |s: &FederatedCluster, t: i64| {
        pull_hub_status(
            s,
            &seen(0, 0, true),
            I,
            Some(&reached),
            Duration::from_secs(3600),
            None,
            at(t),
        )
        .into_owned()
    };
    let state = |h: &HubStatus| {
        let c = cond(h, CONDITION_CREDENTIAL_EXPIRING).unwrap().clone();
        (c.status, c.reason, c.message)
    };
    // Renewed by the hub (its own identity): False until overdue.
    let renewed = site()
        .pull()
        .heartbeat_ago(0)
        .with_token_expiring_in(600)
        .with_token_renewed_in(300);
    let h = judge_at(&renewed, 0);
    let (status, reason, message) = state(&h);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "RenewedByHub")
    );
    assert!(message.contains("the hub renews"), "{message}");
    assert!(
        h.requeue_after.unwrap() <= Duration::from_secs(300 + 3 * 30 + 1),
        "judged again when the renewal would be overdue: {:?}",
        h.requeue_after
    );
    let (status, reason, message) = state(&judge_at(&renewed, 300 + 3 * 30));
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("True", "RenewalOverdue")
    );
    assert!(
        message.contains("kubectl fleet register site-a --pull --member-kubeconfig FILE"),
        "{message}"
    );
    // Not renewable (stored as given): warned before it expires.
    let as_is = site().pull().heartbeat_ago(0).with_token_expiring_in(7200);
    let (status, reason, _) = state(&judge_at(&as_is, 0));
    assert_eq!((status.as_str(), reason.as_str()), ("False", "Valid"));
    let (status, reason, message) = state(&judge_at(&as_is, 3600));
    assert_eq!((status.as_str(), reason.as_str()), ("True", "ExpiresSoon"));
    assert!(message.contains("--store-kubeconfig-as-is"), "{message}");
    assert!(
        message.contains("kubectl fleet register site-a --pull --member-kubeconfig FILE"),
        "{message}"
    );
    let (status, reason, _) = state(&judge_at(&as_is, 7200));
    assert_eq!((status.as_str(), reason.as_str()), ("True", "Expired"));
}

#[test]
fn pull_site_never_probed_is_unknown() {
    let h = pull_hub_status(
        &site().pull(),
        &NEVER,
        I,
        None,
        DEFAULT_CREDENTIAL_WARNING,
        None,
        at(0),
    )
    .into_owned();
    let c = cond(&h, CONDITION_CONNECTED).unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("Unknown", "NotProbedYet")
    );
}
