//! The real `status.expirationTimestamp` is printed, and a capped lifetime
//! (the API server's --service-account-max-token-expiration) is warned about.

use crate::support;

use std::time::Duration;

use support::Hub;

fn expiry_in_seconds(summary: &serde_json::Value) -> i64 {
    let ts: jiff::Timestamp = summary["tokenExpirationTimestamp"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    ts.as_second() - jiff::Timestamp::now().as_second()
}

#[test]
fn a_capped_token_reports_the_real_expiry_and_warns() {
    let hub = Hub::with_token_cap(Duration::from_secs(3600));
    let run = hub
        .fleet(&["register", "site-a", "--token-ttl", "30d", "-o", "json"])
        .ok();
    let summary = run.json();
    assert_eq!(summary["capped"], true);
    assert_eq!(summary["requestedTTL"], "30d");
    assert_eq!(summary["grantedTTL"], "1h");
    let left = expiry_in_seconds(&summary);
    assert!(
        (3500..=3600).contains(&left),
        "expires in {left}s, expected about 1h"
    );
    assert!(
        run.stderr
            .contains("warning: the API server capped the token lifetime to 1h (requested 30d"),
        "{}",
        run.stderr
    );
    let printed = summary["tokenExpirationTimestamp"].as_str().unwrap();
    assert!(
        run.stderr.contains(printed),
        "the real expiry is printed:\n{}",
        run.stderr
    );

    // The same through the default (kubeconfig) output.
    let run = hub.fleet(&["rotate", "site-a"]).ok();
    assert!(
        run.stderr.contains("warning: the API server capped"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("kind: Config"));
}

#[test]
fn an_uncapped_token_gets_what_was_asked_and_no_warning() {
    let hub = Hub::new();
    let run = hub
        .fleet(&["register", "site-a", "--token-ttl", "30d", "-o", "json"])
        .ok();
    let summary = run.json();
    assert_eq!(summary["capped"], false);
    let left = expiry_in_seconds(&summary);
    assert!(
        (30 * 86_400 - 120..=30 * 86_400).contains(&left),
        "expires in {left}s"
    );
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
}

#[test]
fn the_capped_warning_says_what_the_edge_does_about_it() {
    let hub = Hub::with_token_cap(Duration::from_secs(3600));
    let auto = hub.fleet(&["register", "site-a", "-o", "json"]).ok();
    assert!(
        auto.stderr
            .contains("the edge renews it by itself when half of its lifetime is left"),
        "{}",
        auto.stderr
    );
    let manual = hub
        .fleet(&["register", "site-b", "--no-auto-rotate", "-o", "json"])
        .ok();
    assert!(
        manual.stderr.contains(
            "run `kubectl fleet rotate site-b` before then (nothing renews it automatically)"
        ),
        "{}",
        manual.stderr
    );
    assert!(
        !manual.stderr.contains("renews it by itself"),
        "{}",
        manual.stderr
    );
    // The edge command names the member cluster and keeps the edge from
    // trying a renewal it has no right to.
    let command = manual.json()["edgeCommand"].as_str().unwrap().to_owned();
    assert_eq!(
        command,
        "fleet-operator --federation-role=edge --site site-b --kubeconfig MEMBER_KUBECONFIG --hub-kubeconfig FILE --no-auto-rotate"
    );
}
