//! A site's last dark period, in its own words.

use super::*;

/// A factory back from three and a half hours dark: describe names the
/// dark period in one line on the site's clock, then every entry, with
/// every text the site wrote made terminal-safe.
#[test]
fn describe_tells_the_last_dark_period_in_the_sites_own_words() {
    use crate::api::{DarkEntry, DarkEntryKind};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    let t = |s: &str| Time(s.parse().unwrap());
    let entry = |time: &str, kind, subject: &str, detail: &str| DarkEntry {
        time: t(time),
        kind,
        subject: subject.into(),
        detail: detail.into(),
    };
    let mut site = FederatedCluster::test("factory-7")
        .connected()
        .with_dark_period(
            0,
            0,
            vec![
                entry(
                    "2026-01-01T02:09:00Z",
                    DarkEntryKind::NodeNotReady,
                    "store-7-n1",
                    "NodeStatusUnknown: Kubelet stopped posting node status.",
                ),
                entry(
                    "2026-01-01T03:00:00Z",
                    DarkEntryKind::Failure,
                    "line/Deployment/plc\u{1b}[2J",
                    "CrashLoopBackOff: \u{1b}]0;owned\u{7}",
                ),
                entry(
                    "2026-01-01T05:40:00Z",
                    DarkEntryKind::EdgeRestarted,
                    "edge",
                    "edge 0.2.0 started",
                ),
            ],
        );
    let dark = site
        .status
        .as_mut()
        .unwrap()
        .last_dark_period
        .as_mut()
        .unwrap();
    dark.from = t("2026-01-01T02:10:00Z");
    dark.to = t("2026-01-01T05:42:00Z");
    dark.dropped = 2;
    let d = describe::site_description(&site, &judging(), &none(), None, fixture_now());
    let text = describe::render_description(&d, fixture_now());
    let line = text
        .lines()
        .find(|l| l.starts_with("Last Dark Period:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        line,
        "Last Dark Period:   dark 02:10–05:42 UTC on 2026-01-01 (site's clock): node store-7-n1 NotReady 02:09 \
         (NodeStatusUnknown), CrashLoopBackOff line/Deployment/plc\\x1b[2J 03:00, edge restarted 05:40, back 05:42"
    );
    let section: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Last Dark Period ("))
        .collect();
    assert_eq!(
        section[0],
        "Last Dark Period (the site's own account, on its clock):"
    );
    assert!(
        section[1]
            .split_whitespace()
            .eq(["TIME", "KIND", "SUBJECT", "DETAIL"]),
        "{text}"
    );
    assert!(
        section[2].contains("2026-01-01T02:09:00Z") && section[2].contains("NodeNotReady"),
        "{text}"
    );
    assert!(section[5].contains("2 older entries dropped"), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    // The JSON carries it whole, as written.
    let json: serde_json::Value = serde_json::from_str(&to_json(&d).unwrap()).unwrap();
    assert_eq!(json["lastDarkPeriod"]["from"], "2026-01-01T02:10:00Z");
    assert_eq!(json["lastDarkPeriod"]["dropped"], 2);
    assert_eq!(
        json["lastDarkPeriod"]["entries"][1]["subject"],
        "line/Deployment/plc\u{1b}[2J"
    );
}
