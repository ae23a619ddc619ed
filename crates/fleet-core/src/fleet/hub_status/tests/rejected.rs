use super::*;
use crate::fleet::fixtures::fixture_now;
use crate::fleet::probe::ProbeFailure;

const I: Duration = Duration::from_secs(30);

fn verdict(outcome: ProbeOutcome) -> ProbeVerdict {
    ProbeVerdict {
        outcome,
        duration: Duration::from_millis(5),
        remediation: None,
    }
}

fn credential(site: &FederatedCluster, probe: Option<&ProbeVerdict>) -> (String, String) {
    let seen = Sighting {
        observation: Some(HeartbeatObservation {
            reported: fixture_now(),
            observed_at: fixture_now(),
        }),
        live: true,
        earlier_offset: Some(0),
    };
    let j = pull_hub_status(
        site,
        &seen,
        I,
        probe,
        DEFAULT_CREDENTIAL_WARNING,
        None,
        fixture_now(),
    );
    let c = j
        .conditions
        .iter()
        .find(|c| c.type_ == CONDITION_CREDENTIAL_EXPIRING)
        .unwrap();
    (c.status.clone(), c.reason.clone())
}

#[test]
fn a_token_the_member_refuses_is_rejected_whatever_its_expiry() {
    let day = 24 * 3600;
    let site = FederatedCluster::test("p")
        .pull()
        .connected()
        .with_token_expiring_in(29 * day)
        .with_token_renewed_in(14 * day);
    let ok = verdict(ProbeOutcome::Reached { insecure: false });
    assert_eq!(
        credential(&site, Some(&ok)),
        ("False".into(), "RenewedByHub".into())
    );
    let refused = verdict(ProbeOutcome::Failed {
        failure: ProbeFailure::Unauthorized,
        message: "401".into(),
    });
    assert_eq!(
        credential(&site, Some(&refused)),
        ("True".into(), CREDENTIAL_REJECTED.into())
    );
    // Another failure says nothing about the credential.
    let timeout = verdict(ProbeOutcome::Failed {
        failure: ProbeFailure::Timeout,
        message: "slow".into(),
    });
    assert_eq!(
        credential(&site, Some(&timeout)),
        ("False".into(), "RenewedByHub".into())
    );
    // A hub that has not probed yet goes by the Connected it wrote.
    let stored =
        site.clone()
            .with_condition(CONDITION_CONNECTED, "False", "Unauthorized", "401", 60);
    assert_eq!(
        credential(&stored, None),
        ("True".into(), CREDENTIAL_REJECTED.into())
    );
    // A token past its expiry is refused for that: Expired.
    let expired = FederatedCluster::test("q")
        .pull()
        .connected()
        .with_token_expiring_in(-60);
    assert_eq!(
        credential(&expired, Some(&refused)),
        ("True".into(), "Expired".into())
    );
}
