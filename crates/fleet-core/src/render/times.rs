//! Timestamps of the status report, written as k8s-openapi writes a
//! `Time` (`%Y-%m-%dT%H:%M:%SZ`, whole seconds, UTC) without going through
//! `strftime`: the report has four or five per site, and interpreting the
//! format string for each was a twentieth of `status -o json`'s CPU.
//!
//! `serialize_with` helpers for the report's fields, including mirrors of
//! `Condition` and `Signal` whose only difference from those types' own
//! `Serialize` is how their timestamps are formatted (tests hold them to
//! the same bytes).

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use serde::{Serialize, Serializer};

use crate::api::{Severity, Signal, SignalType, WorkloadRef};

/// `ts` as `YYYY-MM-DDTHH:MM:SSZ`, for years 0 to 9999 (None otherwise:
/// the caller then formats with k8s-openapi).
fn rfc3339(ts: Timestamp, buf: &mut [u8; 20]) -> Option<&str> {
    let dt = jiff::tz::Offset::UTC.to_datetime(ts);
    let year = u32::try_from(dt.year()).ok().filter(|y| *y <= 9999)?;
    let two = |buf: &mut [u8; 20], at: usize, n: i8| {
        let n = n.unsigned_abs();
        buf[at] = b'0' + n / 10;
        buf[at + 1] = b'0' + n % 10;
    };
    buf[0] = b'0' + (year / 1000) as u8;
    buf[1] = b'0' + (year / 100 % 10) as u8;
    buf[2] = b'0' + (year / 10 % 10) as u8;
    buf[3] = b'0' + (year % 10) as u8;
    buf[4] = b'-';
    two(buf, 5, dt.month());
    buf[7] = b'-';
    two(buf, 8, dt.day());
    buf[10] = b'T';
    two(buf, 11, dt.hour());
    buf[13] = b':';
    two(buf, 14, dt.minute());
    buf[16] = b':';
    two(buf, 17, dt.second());
    buf[19] = b'Z';
    std::str::from_utf8(buf).ok()
}

/// `ts` as the reports write it (`YYYY-MM-DDTHH:MM:SSZ`), for text views.
pub(crate) fn plain(ts: Timestamp) -> String {
    let mut buf = [0; 20];
    match rfc3339(ts, &mut buf) {
        Some(text) => text.to_owned(),
        None => ts.to_string(),
    }
}

/// A `Time` that serializes as k8s-openapi's does, faster.
struct Fast<'a>(&'a Time);

impl Serialize for Fast<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut buf = [0; 20];
        match rfc3339(self.0.0, &mut buf) {
            // The same call k8s-openapi makes, with the same text.
            Some(text) => serializer.serialize_newtype_struct("Time", text),
            None => self.0.serialize(serializer),
        }
    }
}

/// For `Option<Time>` fields.
pub(super) fn option<S: Serializer>(time: &Option<Time>, serializer: S) -> Result<S::Ok, S::Error> {
    time.as_ref().map(Fast).serialize(serializer)
}

/// `Condition` as k8s-openapi serializes it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConditionOut<'a> {
    last_transition_time: Fast<'a>,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    observed_generation: Option<i64>,
    reason: &'a str,
    status: &'a str,
    #[serde(rename = "type")]
    type_: &'a str,
}

/// For `Vec<Condition>` fields.
pub(super) fn conditions<S: Serializer>(
    conditions: &[Condition],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(conditions.iter().map(|c| ConditionOut {
        last_transition_time: Fast(&c.last_transition_time),
        message: &c.message,
        observed_generation: c.observed_generation,
        reason: &c.reason,
        status: &c.status,
        type_: &c.type_,
    }))
}

/// `Signal` as its derived `Serialize` writes it, and, in a report, the
/// hub's decision on it after it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SignalOut<'a> {
    #[serde(rename = "type")]
    type_: SignalType,
    severity: Severity,
    #[serde(skip_serializing_if = "Option::is_none")]
    cluster: Option<&'a str>,
    namespace: &'a str,
    workload: &'a WorkloadRef,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    first_seen: Fast<'a>,
    last_seen: Fast<'a>,
    count: i64,
    #[serde(flatten)]
    decision: Option<DecisionOut<'a>>,
}

/// The hub's decision on a signal, as the reports write it beside the
/// signal (`remediation`, `decidedSeverity`, `decidedTier`, `raisedBy`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DecisionOut<'a> {
    remediation: &'a crate::fleet::policy::Policy,
    decided_severity: Severity,
    decided_tier: Option<crate::api::Tier>,
    raised_by: &'a [String],
}

/// For `Vec<Signal>` fields (the tests hold the mirror to `Signal`'s own
/// serialization; the report writes [`decided_signals`]).
#[cfg(test)]
pub(super) fn signals<S: Serializer>(signals: &[Signal], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(signals.iter().map(|s| signal_out(s, None)))
}

/// For `Vec<DecidedSignal>` fields: each signal, then the hub's decision.
pub(super) fn decided_signals<S: Serializer>(
    signals: &[super::decided::DecidedSignal],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(signals.iter().map(|d| {
        signal_out(
            &d.signal,
            Some(DecisionOut {
                remediation: &d.decision.policy,
                decided_severity: d.decision.severity,
                decided_tier: d.decision.tier,
                raised_by: &d.decision.raised_by,
            }),
        )
    }))
}

fn signal_out<'a>(s: &'a Signal, decision: Option<DecisionOut<'a>>) -> SignalOut<'a> {
    {
        // Every field named, so a new field of Signal fails to compile here.
        let Signal {
            type_,
            severity,
            cluster,
            namespace,
            workload,
            message,
            first_seen,
            last_seen,
            count,
        } = s;
        SignalOut {
            type_: *type_,
            severity: *severity,
            cluster: cluster.as_deref(),
            namespace,
            workload,
            message: message.as_deref(),
            first_seen: Fast(first_seen),
            last_seen: Fast(last_seen),
            count: *count,
            decision,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jiff_text(ts: Timestamp) -> String {
        serde_json::to_string(&Time(ts)).unwrap()
    }

    #[test]
    fn edges_of_the_fast_range() {
        for (y, mo, d, h, mi, sec, ns) in [
            (0, 1, 1, 0, 0, 0, 0),
            (999, 12, 31, 23, 59, 59, 0),
            (1970, 1, 1, 0, 0, 0, 0),
            (2024, 2, 29, 12, 34, 56, 999_999_999),
            (9999, 12, 30, 21, 59, 59, 999_999_999),
            (-1, 6, 1, 0, 0, 0, 0),
        ] {
            let civil = jiff::civil::date(y, mo, d).at(h, mi, sec, ns);
            let ts = jiff::tz::Offset::UTC.to_timestamp(civil).unwrap();
            assert_eq!(
                serde_json::to_string(&Fast(&Time(ts))).unwrap(),
                jiff_text(ts),
                "{civil}"
            );
        }
        assert!(rfc3339(Timestamp::MIN, &mut [0; 20]).is_none());
        assert_eq!(
            serde_json::to_string(&Fast(&Time(Timestamp::MIN))).unwrap(),
            jiff_text(Timestamp::MIN)
        );
    }

    proptest::proptest! {
        #[test]
        fn the_same_text_as_k8s_openapi(
            secs in Timestamp::MIN.as_second()..=Timestamp::MAX.as_second(),
            nanos in 0i32..1_000_000_000,
        ) {
            let ts = Timestamp::new(secs, nanos).unwrap_or(Timestamp::new(secs, 0).unwrap());
            proptest::prop_assert_eq!(serde_json::to_string(&Fast(&Time(ts))).unwrap(), jiff_text(ts));
        }
    }

    #[test]
    fn mirrors_serialize_as_the_types_do() {
        let t = |s: &str| Time(s.parse().unwrap());
        let conds = vec![
            Condition {
                last_transition_time: t("2026-01-01T00:00:00Z"),
                message: "m \"q\"\n".into(),
                observed_generation: Some(3),
                reason: "R".into(),
                status: "True".into(),
                type_: "Ready".into(),
            },
            Condition {
                last_transition_time: t("2026-01-01T00:00:01.5Z"),
                message: String::new(),
                observed_generation: None,
                reason: String::new(),
                status: "False".into(),
                type_: "Other".into(),
            },
        ];
        let mut with = serde_json::Serializer::new(Vec::new());
        conditions(&conds, &mut with).unwrap();
        assert_eq!(with.into_inner(), serde_json::to_vec(&conds).unwrap());

        let full = Signal {
            type_: SignalType::CrashLoopBackOff,
            severity: Severity::High,
            cluster: Some("site-a".into()),
            namespace: "ns".into(),
            workload: WorkloadRef::new("Deployment", "d"),
            message: Some("back-off".into()),
            first_seen: t("2026-01-01T00:00:00Z"),
            last_seen: t("2026-01-02T00:00:00Z"),
            count: 7,
        };
        let bare = Signal {
            cluster: None,
            message: None,
            namespace: String::new(),
            ..full.clone()
        };
        let list = vec![full, bare];
        let mut with = serde_json::Serializer::new(Vec::new());
        signals(&list, &mut with).unwrap();
        assert_eq!(with.into_inner(), serde_json::to_vec(&list).unwrap());
        // A decided signal is the signal's own keys, then the decision's.
        let decided: Vec<super::super::report::DecidedSignal> = list
            .iter()
            .map(|s| super::super::report::DecidedSignal {
                signal: s.clone(),
                decision: crate::fleet::policy::SignalPolicy {
                    severity: Severity::Critical,
                    tier: None,
                    policy: crate::fleet::policy::policy_for(None, Severity::Critical),
                    raised_by: vec!["xc-0000000a".into()],
                },
            })
            .collect();
        let mut with = serde_json::Serializer::new(Vec::new());
        decided_signals(&decided, &mut with).unwrap();
        let got: serde_json::Value = serde_json::from_slice(&with.into_inner()).unwrap();
        for (got, s) in got.as_array().unwrap().iter().zip(&list) {
            let mut want = serde_json::to_value(s).unwrap();
            let extra = serde_json::json!({
                "remediation": {"mode": "manual", "approvalRequired": true, "role": "Admin"},
                "decidedSeverity": "critical", "decidedTier": null, "raisedBy": ["xc-0000000a"],
            });
            want.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            assert_eq!(got, &want);
        }
        // YAML too (the report's other format).
        #[derive(Serialize)]
        struct Both<'a> {
            #[serde(serialize_with = "super::signals")]
            s: &'a [Signal],
            #[serde(serialize_with = "super::conditions")]
            c: &'a [Condition],
            #[serde(serialize_with = "super::option")]
            t: Option<Time>,
        }
        #[derive(Serialize)]
        struct Plain<'a> {
            s: &'a [Signal],
            c: &'a [Condition],
            t: Option<Time>,
        }
        let time = Some(t("2026-03-04T05:06:07Z"));
        assert_eq!(
            serde_saphyr::to_string(&Both {
                s: &list,
                c: &conds,
                t: time.clone()
            })
            .unwrap(),
            serde_saphyr::to_string(&Plain {
                s: &list,
                c: &conds,
                t: time
            })
            .unwrap()
        );
    }
}
