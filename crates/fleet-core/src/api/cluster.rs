//! The `FederatedCluster` custom resource: one object per member cluster
//! ("site") registered on the hub.
//!
//! Status ownership is disjoint and load-bearing (docs/architecture.md#who-writes-which-status-key): in Push mode
//! the edge writes only [`EDGE_OWNED_STATUS_KEYS`] and the hub writes only
//! [`HUB_OWNED_STATUS_KEYS`]. Every status field is optional and skipped when
//! unset, so a JSON merge patch built from a partial [`FederatedClusterStatus`]
//! carries exactly the keys that were set and can never clobber the other
//! writer's keys.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube_derive::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Status keys that describe one mode's credential or health check: the
/// edge's hub token and its report round trip in Push, the member token and
/// the probe duration in Pull. `register` removes the old mode's when it
/// switches a site (the new mode's writer fills its own).
pub fn mode_status_keys(mode: Mode) -> &'static [&'static str] {
    match mode {
        Mode::Push => &[
            "credentialExpirationTime",
            "credentialRenewalTime",
            "lastReportDurationMilliseconds",
        ],
        Mode::Pull => &[
            "credentialExpirationTime",
            "credentialRenewalTime",
            "lastProbeDurationMilliseconds",
        ],
    }
}

/// Upper bound on `status.signals`, enforced by the CRD schema and by
/// [`crate::fleet::signals`].
pub const MAX_SIGNALS: usize = 100;

// Bounds on what an edge can write (docs/architecture.md#who-writes-which-status-key: a site token writes its own
// status; the hub and every admin's terminal read it). The CRD schema
// enforces them on the API server; `crate::fleet::bounds` clips what a
// well-behaved edge collects so its patch is never rejected. Together they
// keep one site's status far under the API server's object size limit
// (see `fleet::bounds` tests for the worst-case size).

/// Upper bound, in characters, on a signal's `message`.
pub const MAX_MESSAGE_CHARS: usize = 512;
/// Upper bound, in characters, on `observedVersion` and `kubernetesVersion`.
pub const MAX_VERSION_CHARS: usize = 128;
/// Upper bound, in characters, on a Kubernetes object name or resource name
/// (workload names, GPU resource names): a DNS-1123 subdomain.
pub(crate) const MAX_OBJECT_NAME_CHARS: usize = 253;
/// Upper bound, in characters, on a namespace, a workload kind or a site
/// name in a signal: a DNS-1123 label.
pub const MAX_LABEL_CHARS: usize = 63;
/// Upper bound on the number of entries of `capacity.gpusByVendor`.
pub(crate) const MAX_GPU_VENDORS: usize = 32;
/// Upper bound, in characters, on `spec.displayName`.
pub(crate) const MAX_DISPLAY_NAME_CHARS: usize = 128;
/// `spec.region`: a Kubernetes label value (at most 63 characters, letters,
/// digits, `-`, `_` and `.`, beginning and ending with a letter or digit), so
/// it is safe as a Prometheus label value, a label selector value and on a
/// terminal by construction. Checked by the CRD and by [`validate_region`].
pub const REGION_PATTERN: &str = "^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$";
/// Free text without control (C0, DEL, C1) or format characters (RE2
/// syntax, as the API server evaluates it; [`is_control_or_format`] is the
/// same set in Rust): every string a site writes, and the spec's free text,
/// so nothing stored can drive a terminal, not even through plain `kubectl
/// describe`. The edge replaces such characters in what it copies from its
/// member cluster before it writes (`fleet::bounds`).
pub const PRINTABLE_TEXT_PATTERN: &str = "^[^\\p{Cc}\\p{Cf}]*$";
/// `spec.displayName`: [`PRINTABLE_TEXT_PATTERN`].
pub(crate) const DISPLAY_NAME_PATTERN: &str = PRINTABLE_TEXT_PATTERN;
/// Every date-time field of the fleet's objects (a site's
/// `lastHeartbeatTime`, a signal's `firstSeen`, a maintenance window's
/// `until`, …): RFC 3339 exactly as the product reads it (jiff, through
/// k8s-openapi's `Time`) — a real day of a real month, hours to 23,
/// minutes and seconds to 59, at most 9 fraction digits, an offset within
/// ±23:59, years 0000–9998 (jiff's timestamps end in the last days of 9999,
/// so a later instant, or one an offset pushes there, does not read).
///
/// It replaces `format: date-time` in the generated CRDs ([`super::crds`]):
/// Kubernetes' own check of that format (kube-openapi's strfmt) is far
/// looser — any number of fraction digits, any character before them,
/// offsets up to ±99:99, anything after a second `t` — and a field with a
/// format takes a *list* without any check at all, so one site could store
/// a heartbeat no reader of the fleet can decode
/// (docs/reliability.md#what-the-crd-refuses).
pub const DATE_TIME_PATTERN: &str = concat!(
    "^(",
    // Any year 0000–9998, any day a month always has.
    "([0-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9]|999[0-8])-",
    "((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))",
    // February 29th of a leap year.
    "|([0-9]{2}(0[48]|[2468][048]|[13579][26])|(0[048]|[2468][048]|[13579][26])00)-02-29",
    ")[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$"
);
/// The latest instant a site may write ([`DATE_TIME_PATTERN`]'s last
/// year): what the edge clamps a later time to before it writes.
pub(crate) const MAX_DATE_TIME: &str = "9998-12-31T23:59:59Z";
/// Upper bound on every count a site reports (nodes, namespaces, GPUs,
/// inference models and services, a signal's `count`): far above any
/// cluster, and low enough that the hub's sums over 100,000 sites stay
/// exact in an i64 (10^14), never saturating.
pub(crate) const MAX_COUNT: i64 = 1_000_000_000;
/// Upper bound on a reported duration in milliseconds (a probe's or a
/// report's round trip): one day.
pub(crate) const MAX_DURATION_MILLISECONDS: i64 = 86_400_000;
/// Bound on `clockOffsetSeconds` either way: 10,000 years, more than any
/// two instants of [`DATE_TIME_PATTERN`] lie apart.
pub(crate) const MAX_CLOCK_OFFSET_SECONDS: i64 = 315_576_000_000;
/// Upper bound on `status.conditions`: the hub owns every condition type
/// (the `PUSH_`/`PULL_CONDITION_TYPES` of `fleet::hub_status`), so there
/// is room for them and no more.
pub(crate) const MAX_CONDITIONS: usize = 8;
/// Upper bound, in characters, on a condition's `message` (the hub's own
/// messages are far shorter; a longer one is cut by the hub).
pub(crate) const MAX_CONDITION_MESSAGE_CHARS: usize = 1024;
/// Upper bound, in characters, on a condition's `reason` and `type`.
pub(crate) const MAX_CONDITION_REASON_CHARS: usize = 128;

/// Condition type: the hub hears from the site (phase `Connected`).
pub const CONDITION_CONNECTED: &str = "Connected";
/// Condition type (Pull mode): the hub's credential for the member allows remediation.
pub const CONDITION_REMEDIATION_CAPABLE: &str = "RemediationCapable";
/// Condition type: the edge's hub token expires soon.
pub const CONDITION_CREDENTIAL_EXPIRING: &str = "CredentialExpiring";
/// `status.member`: a Kubernetes UID (RFC 4122, lowercase hex, as the API
/// server generates them), the `kube-system` namespace UID of the cluster
/// a site's reports were read from.
pub(crate) const MEMBER_UID_PATTERN: &str =
    "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";
/// Length of a [`MEMBER_UID_PATTERN`] UID.
pub(crate) const MEMBER_UID_CHARS: usize = 36;

/// Whether `uid` is a member identity as `status.member` holds it
/// ([`MEMBER_UID_PATTERN`]).
pub fn is_member_uid(uid: &str) -> bool {
    let groups: Vec<&str> = uid.split('-').collect();
    uid.len() == MEMBER_UID_CHARS
        && groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && uid
            .chars()
            .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c))
}

/// Condition type: the member cluster a site's reports come from
/// (`status.member`) changed, or keeps changing (two edges for one site),
/// within `MEMBER_CHANGE_HOLD` (an hour, `fleet::hub_status`). Absent until
/// the hub sees a change.
pub const CONDITION_MEMBER_CHANGED: &str = "MemberChanged";
/// Condition type: the edge clock differs from the hub clock by more than the
/// tolerance of [`crate::fleet::phase::skew_tolerance`].
pub const CONDITION_CLOCK_SKEW: &str = "ClockSkew";
/// Whether `region` is a valid `spec.region` ([`REGION_PATTERN`]); the
/// error says why, in words a command line can print.
pub fn validate_region(region: &str) -> Result<(), String> {
    let ok_inner = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if region.is_empty() {
        return Err("must not be empty".to_owned());
    }
    if region.chars().count() > MAX_LABEL_CHARS {
        return Err(format!("must be at most {MAX_LABEL_CHARS} characters"));
    }
    let first_last_ok = region.starts_with(|c: char| c.is_ascii_alphanumeric())
        && region.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !first_last_ok || !region.chars().all(ok_inner) {
        return Err(
            "must be letters, digits, '-', '_' or '.', beginning and ending with a letter or digit (e.g. us-east-1)"
                .to_owned(),
        );
    }
    Ok(())
}

/// Whether `name` is a valid `spec.displayName` ([`DISPLAY_NAME_PATTERN`],
/// [`MAX_DISPLAY_NAME_CHARS`]).
pub fn validate_display_name(name: &str) -> Result<(), String> {
    if name.chars().count() > MAX_DISPLAY_NAME_CHARS {
        return Err(format!(
            "must be at most {MAX_DISPLAY_NAME_CHARS} characters"
        ));
    }
    if let Some(c) = name.chars().find(|c| is_control_or_format(*c)) {
        return Err(format!(
            "must not contain control or format characters (found U+{:04X})",
            u32::from(c)
        ));
    }
    Ok(())
}

/// Unicode general categories Cc (control) and Cf (format), which the
/// display-name pattern refuses: what RE2's `\p{Cc}` and `\p{Cf}` match for
/// the characters that matter on a terminal (C0, DEL, C1, soft hyphen,
/// bidi and zero-width controls, interlinear annotations, tags).
pub(crate) fn is_control_or_format(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    c.is_control()
        || matches!(
            u32::from(c),
            0xAD | 0x600..=0x605
                | 0x61C
                | 0x6DD
                | 0x70F
                | 0x890..=0x891
                | 0x8E2
                | 0x180E
                | 0x200B..=0x200F
                | 0x202A..=0x202E
                | 0x2060..=0x2064
                | 0x2066..=0x206F
                | 0xFEFF
                | 0xFFF9..=0xFFFB
                | 0x110BD
                | 0x110CD
                | 0x13430..=0x1343F
                | 0x1BCA0..=0x1BCA3
                | 0x1D173..=0x1D17A
                | 0xE0001
                | 0xE0020..=0xE007F
        )
}

/// The CEL rule that a fleet object named as its site has a site's name:
/// a DNS-1123 label (FederatedCluster, FederatedClusterLease).
pub(crate) const SITE_NAME_RULE: &str = "self.metadata.name.size() <= 63 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')";

/// Desired state of a member cluster, set by `kubectl fleet register`.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[x_kube(crates(kube_core = "::kube_core"))]
#[kube(
    crates(kube_core = "::kube_core", kube = "::kube_derive"),
    group = "federation.kubectl-fleet.dev",
    version = "v1alpha1",
    kind = "FederatedCluster",
    plural = "federatedclusters",
    singular = "federatedcluster",
    shortname = "fc",
    shortname = "fcluster",
    category = "fleet",
    status = "FederatedClusterStatus",
    derive = "PartialEq",
    doc = "A member cluster (site) registered in the fleet",
    validation = Rule::new(SITE_NAME_RULE).message("metadata.name must be a DNS-1123 label: at most 63 lowercase letters, digits or '-', starting and ending with a letter or digit"),
    printcolumn(name = "Mode", type_ = "string", json_path = ".spec.mode"),
    printcolumn(name = "Tier", type_ = "string", json_path = ".spec.tier"),
    printcolumn(name = "Env", type_ = "string", json_path = ".spec.environment"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(
        name = "Last Heartbeat",
        type_ = "date",
        json_path = ".status.lastHeartbeatTime"
    ),
    printcolumn(
        name = "GPUs",
        type_ = "integer",
        json_path = ".status.capacity.gpusTotal"
    ),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
#[x_kube(validation = Rule::new(
    "(has(self.mode) && self.mode == 'Pull') == has(self.kubeconfigSecretRef)"
).message("kubeconfigSecretRef is required when mode is Pull and must not be set when mode is Push"))]
#[serde(rename_all = "camelCase")]
pub struct FederatedClusterSpec {
    /// Human-friendly name; readers fall back to the object name when unset.
    /// At most 128 characters, no control or format characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_DISPLAY_NAME_CHARS), regex(pattern = DISPLAY_NAME_PATTERN))]
    pub display_name: Option<String>,
    /// Who connects: `Push` (the edge dials home) or `Pull` (the hub probes).
    #[serde(default)]
    pub mode: Mode,
    /// Cloud or data-centre region, e.g. us-east-1: a label value (at most
    /// 63 letters, digits, '-', '_' or '.', beginning and ending with a
    /// letter or digit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_LABEL_CHARS), regex(pattern = REGION_PATTERN))]
    pub region: Option<String>,
    /// Deployment environment; orders cascades (development < staging < production).
    #[serde(default)]
    pub environment: Environment,
    /// Criticality tier; drives the remediation policy.
    #[serde(default)]
    pub tier: Tier,
    /// What the fleet may do on this site (a set: no duplicates).
    #[serde(default = "default_capabilities")]
    #[x_kube(merge_strategy = ListMerge::Set)]
    pub capabilities: Vec<Capability>,
    /// Reporting cadence in seconds: the edge reports (Push) or the hub
    /// probes (Pull) at this interval; phase thresholds are multiples of it.
    #[serde(default = "default_heartbeat_interval")]
    #[schemars(range(min = 10, max = 3600))]
    pub heartbeat_interval_seconds: i32,
    /// Upper bound on remediations running at once on this site.
    #[serde(default = "default_max_concurrent_remediations")]
    #[schemars(range(min = 0, max = 2_147_483_647))]
    pub max_concurrent_remediations: i32,
    /// Pull mode only: the hub Secret holding a kubeconfig for the member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubeconfig_secret_ref: Option<SecretKeyRef>,
    /// A maintenance window (`kubectl fleet cordon`): while it is open the
    /// site is still judged and shown, but raises no per-site alert and
    /// does not count as an outage. It ends by itself at `until`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maintenance: Option<MaintenanceWindow>,
    /// A quarantine (`kubectl fleet quarantine`): while set, the hub leaves
    /// the site's signals out of every fleet incident (cross-cluster
    /// correlations and cascades), so nothing the site reports changes
    /// another site's remediation decision, Events or alerts. The site is
    /// still judged, and its own status and signals are still shown. It
    /// lasts until `kubectl fleet unquarantine` removes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quarantine: Option<Quarantine>,
    /// When the site is expected to be silent (`kubectl fleet schedule`):
    /// recurring offline windows in its time zone, and/or the longest
    /// absence it may take. A silent site inside them is `Sleeping`, not
    /// Stale or Unreachable, and pages nobody; one that stays silent past
    /// them is `LateToWake` (docs/operations.md#expected-connectivity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connectivity: Option<Connectivity>,
}

/// Upper bound on `spec.connectivity.offline`.
pub const MAX_OFFLINE_WINDOWS: usize = 16;
/// Upper bound, in characters, on `spec.connectivity.timeZone` (the
/// longest IANA name is 32).
pub(crate) const MAX_TIME_ZONE_CHARS: usize = 64;
/// `spec.connectivity.timeZone`: the shape of an IANA time zone name
/// (`Europe/Berlin`, `America/Argentina/Buenos_Aires`, `UTC`, `Etc/GMT+1`);
/// whether the name exists is checked against the platform's IANA
/// database by `kubectl fleet` and by the hub.
pub const TIME_ZONE_PATTERN: &str = "^[A-Za-z][-A-Za-z0-9_+]*(/[A-Za-z0-9][-A-Za-z0-9_+]*)*$";
/// One `spec.connectivity.offline` window: `HH:MM-HH:MM` every day (ending
/// the next day when the end is not after the start), or `DAY HH:MM-DAY
/// HH:MM` every week (`Sat 00:00-Mon 06:00`), in the site's time zone.
pub const OFFLINE_WINDOW_PATTERN: &str = concat!(
    "^(([01][0-9]|2[0-3]):[0-5][0-9]-([01][0-9]|2[0-3]):[0-5][0-9]",
    "|(Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([01][0-9]|2[0-3]):[0-5][0-9]-(Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([01][0-9]|2[0-3]):[0-5][0-9])$"
);
/// Allowed range of `spec.connectivity.absentUpToSeconds`: a minute to a
/// week.
pub const ABSENT_UP_TO_RANGE: std::ops::RangeInclusive<i64> = 60..=604_800;

/// When a site is expected to be unreachable (`spec.connectivity`): a store
/// that closes at night, a ship that is in port once a week. Validated by
/// `fleet::connectivity::validate`; judged by `fleet::connectivity`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[x_kube(crates(kube_core = "::kube_core"))]
#[x_kube(validation = Rule::new("!has(self.offline) || has(self.timeZone)")
    .message("offline windows need a timeZone (an IANA name such as Europe/Berlin)"))]
#[x_kube(validation = Rule::new("has(self.offline) || has(self.absentUpToSeconds)")
    .message("connectivity needs offline windows or absentUpToSeconds (remove connectivity to clear it)"))]
#[serde(rename_all = "camelCase")]
pub struct Connectivity {
    /// The IANA time zone the offline windows are in, e.g. Europe/Berlin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_TIME_ZONE_CHARS), regex(pattern = TIME_ZONE_PATTERN))]
    pub time_zone: Option<String>,
    /// Recurring windows in which the site is expected to be offline:
    /// `22:00-06:00` (every day, ending the next morning) or `Sat
    /// 00:00-Mon 06:00` (every week), local time in `timeZone`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = MAX_OFFLINE_WINDOWS), inner(regex(pattern = OFFLINE_WINDOW_PATTERN)))]
    pub offline: Vec<String>,
    /// The longest the site may be silent at any time (an intermittent
    /// site, e.g. a ship back in port at least weekly), in seconds: a
    /// minute to a week.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 60, max = 604_800))]
    pub absent_up_to_seconds: Option<i64>,
}

/// Why and since when an administrator distrusts what a site reports
/// (`spec.quarantine`, written by `kubectl fleet quarantine`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Quarantine {
    /// When the quarantine began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Time>,
    /// Why, for humans (the bounds of a maintenance reason: at most 256
    /// characters, no control or format characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_MAINTENANCE_REASON_CHARS), regex(pattern = DISPLAY_NAME_PATTERN))]
    pub reason: Option<String>,
}

/// Upper bound, in characters, on a maintenance window's `reason`.
pub(crate) const MAX_MAINTENANCE_REASON_CHARS: usize = 256;

/// A planned window during which a site's outage is expected.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceWindow {
    /// When the window opened (or opens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Time>,
    /// When it ends by itself.
    pub until: Time,
    /// Why, for humans (no control or format characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_MAINTENANCE_REASON_CHARS), regex(pattern = DISPLAY_NAME_PATTERN))]
    pub reason: Option<String>,
}

/// Whether `reason` is a valid maintenance `reason` (the CRD's bounds:
/// at most [`MAX_MAINTENANCE_REASON_CHARS`] characters, no control or
/// format characters), so `kubectl fleet cordon` refuses it before writing.
pub fn validate_maintenance_reason(reason: &str) -> Result<(), String> {
    if reason.chars().count() > MAX_MAINTENANCE_REASON_CHARS {
        return Err(format!(
            "must be at most {MAX_MAINTENANCE_REASON_CHARS} characters"
        ));
    }
    if let Some(c) = reason.chars().find(|c| is_control_or_format(*c)) {
        return Err(format!(
            "must not contain control or format characters (found U+{:04X})",
            u32::from(c)
        ));
    }
    Ok(())
}

impl MaintenanceWindow {
    /// Whether the window is open at `now`: from `since` (or always, when
    /// unset) up to but not including `until`.
    pub(crate) fn is_open(&self, now: Timestamp) -> bool {
        self.since.as_ref().is_none_or(|s| s.0 <= now) && now < self.until.0
    }
}

/// Default `spec.heartbeatIntervalSeconds`.
pub const DEFAULT_HEARTBEAT_INTERVAL_SECONDS: i32 = 30;
/// Default `spec.maxConcurrentRemediations`.
pub(crate) const DEFAULT_MAX_CONCURRENT_REMEDIATIONS: i32 = 3;
/// Allowed range of `spec.heartbeatIntervalSeconds`.
pub(crate) const HEARTBEAT_INTERVAL_RANGE: std::ops::RangeInclusive<i32> = 10..=3600;
/// Default key inside the Pull-mode kubeconfig Secret.
pub const DEFAULT_KUBECONFIG_KEY: &str = "kubeconfig";
/// A Secret data key, as the API server accepts them.
pub const SECRET_KEY_PATTERN: &str = "^[-._a-zA-Z0-9]+$";

fn default_capabilities() -> Vec<Capability> {
    vec![Capability::Monitoring]
}
fn default_heartbeat_interval() -> i32 {
    DEFAULT_HEARTBEAT_INTERVAL_SECONDS
}
fn default_max_concurrent_remediations() -> i32 {
    DEFAULT_MAX_CONCURRENT_REMEDIATIONS
}
fn default_kubeconfig_key() -> String {
    DEFAULT_KUBECONFIG_KEY.to_owned()
}

impl Default for FederatedClusterSpec {
    /// The spec the API server would default an empty `spec: {}` to.
    fn default() -> Self {
        Self {
            display_name: None,
            mode: Mode::default(),
            region: None,
            environment: Environment::default(),
            tier: Tier::default(),
            capabilities: default_capabilities(),
            heartbeat_interval_seconds: DEFAULT_HEARTBEAT_INTERVAL_SECONDS,
            max_concurrent_remediations: DEFAULT_MAX_CONCURRENT_REMEDIATIONS,
            kubeconfig_secret_ref: None,
            maintenance: None,
            quarantine: None,
            connectivity: None,
        }
    }
}

impl FederatedCluster {
    /// The object name (site name); empty only for an unsaved object without a name.
    pub fn site_name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// `spec.displayName`, falling back to the site name.
    pub(crate) fn display_name(&self) -> &str {
        self.spec
            .display_name
            .as_deref()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| self.site_name())
    }

    /// The heartbeat interval as a duration, clamped into the schema's range
    /// so that a hand-edited or pre-validation object cannot yield zero.
    pub fn heartbeat_interval(&self) -> std::time::Duration {
        let secs = self.spec.heartbeat_interval_seconds.clamp(
            *HEARTBEAT_INTERVAL_RANGE.start(),
            *HEARTBEAT_INTERVAL_RANGE.end(),
        );
        std::time::Duration::from_secs(secs.unsigned_abs().into())
    }

    /// The phase the hub last wrote, if any.
    pub fn phase(&self) -> Option<Phase> {
        self.status.as_ref().and_then(|s| s.phase)
    }

    /// Whether an administrator quarantined the site (`spec.quarantine`):
    /// its signals are then no evidence for any fleet incident.
    pub(crate) fn is_quarantined(&self) -> bool {
        self.spec.quarantine.is_some()
    }

    /// Whether the site's maintenance window is open at `now`.
    pub fn in_maintenance(&self, now: Timestamp) -> bool {
        self.spec
            .maintenance
            .as_ref()
            .is_some_and(|m| m.is_open(now))
    }
}

/// Reference to one key of a Secret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretKeyRef {
    /// Namespace of the Secret on the hub.
    #[schemars(length(min = 1, max = MAX_LABEL_CHARS))]
    pub namespace: String,
    /// Name of the Secret.
    #[schemars(length(min = 1, max = MAX_OBJECT_NAME_CHARS))]
    pub name: String,
    /// Key within the Secret's data.
    #[serde(default = "default_kubeconfig_key")]
    #[schemars(length(min = 1, max = MAX_OBJECT_NAME_CHARS), regex(pattern = SECRET_KEY_PATTERN))]
    pub key: String,
}

macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $name:ident $label:literal { $($(#[$vmeta:meta])* $variant:ident => $wire:literal),+ $(,)? }
        $(default $default:ident)?
    ) => {
        $(#[$meta])*
        #[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, JsonSchema)]
        pub enum $name {
            $(
                $(#[$vmeta])*
                #[serde(rename = $wire)]
                $variant,
            )+
        }

        $(
            impl Default for $name {
                fn default() -> Self {
                    $name::$default
                }
            }
        )?

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &[$name] = &[$($name::$variant),+];

            /// The value as written on the wire and accepted on the command line.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl WireEnum for $name {
            const WHAT: &'static str = $label;
            const ALL: &'static [Self] = $name::ALL;

            fn as_str(self) -> &'static str {
                $name::as_str(self)
            }
        }

        impl FromStr for $name {
            type Err = UnknownValue;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                <$name as WireEnum>::from_wire(s)
            }
        }
    };
}

/// An enum spelled the same on the wire (the CRD), on the command line
/// and in the REST API's queries: the one parser behind `FromStr`, the
/// CLI's value parsers and the API's filters.
pub trait WireEnum: Copy + Send + Sync + 'static {
    /// What a value is called in errors (`tier`, `signal type`).
    const WHAT: &'static str;
    /// Every value, in declaration order.
    const ALL: &'static [Self];

    /// The value as written on the wire.
    fn as_str(self) -> &'static str;

    /// The value spelled exactly `s`, or an error naming the allowed ones.
    fn from_wire(s: &str) -> Result<Self, UnknownValue> {
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnknownValue {
                what: Self::WHAT,
                value: s.to_owned(),
                allowed: Self::allowed(),
            })
    }

    /// The allowed values, comma-separated.
    fn allowed() -> String {
        Self::ALL
            .iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A string that is not one of an enum's wire values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {value:?}: expected one of {allowed}")]
pub struct UnknownValue {
    /// What was being parsed (tier, environment, ...).
    pub what: &'static str,
    /// The rejected input.
    pub value: String,
    /// Comma-separated allowed values.
    pub allowed: String,
}

wire_enum! {
    /// Connectivity mode of a site.
    Mode "mode" {
        /// The edge operator dials home and patches its own status (default).
        Push => "Push",
        /// The hub probes the member with a stored kubeconfig.
        Pull => "Pull",
    } default Push
}

wire_enum! {
    /// Deployment environment. The derived order (development < staging <
    /// production < dr) is the promotion order cascades follow.
    Environment "environment" {
        /// `development`
        Development => "development",
        /// `staging`
        Staging => "staging",
        /// `production` (default)
        Production => "production",
        /// `dr` (disaster recovery)
        Dr => "dr",
    } default Production
}

wire_enum! {
    /// Criticality tier, which selects the remediation policy.
    Tier "tier" {
        /// `critical`: every remediation needs an Admin's approval.
        Critical => "critical",
        /// `standard` (default)
        Standard => "standard",
        /// `non-critical`: remediation runs automatically.
        NonCritical => "non-critical",
    } default Standard
}

wire_enum! {
    /// Something the fleet may do on a site.
    Capability "capability" {
        /// `monitoring` (default)
        Monitoring => "monitoring",
        /// `remediation`
        Remediation => "remediation",
        /// `chaos-engineering`
        ChaosEngineering => "chaos-engineering",
    }
}

wire_enum! {
    /// Connection phase, judged by the hub on its own clock (docs/architecture.md#who-writes-which-status-key).
    Phase "phase" {
        /// Registered, never heard from.
        Pending => "Pending",
        /// Heard from within 3 heartbeat intervals.
        Connected => "Connected",
        /// Heard from within 10 heartbeat intervals.
        Stale => "Stale",
        /// Silent for more than 10 heartbeat intervals.
        Unreachable => "Unreachable",
        /// Silent, and expected to be: inside an offline window or the
        /// longest absence of its `spec.connectivity`.
        Sleeping => "Sleeping",
    }
}

wire_enum! {
    /// Severity of a signal, ordered worst first (`Critical < High < ...` in
    /// `Ord`, so an ascending sort puts the worst first).
    Severity "severity" {
        /// `critical`
        Critical => "critical",
        /// `high`
        High => "high",
        /// `medium`
        Medium => "medium",
        /// `low`
        Low => "low",
    }
}

wire_enum! {
    /// A workload or node failure type (docs/architecture.md#signals-correlation-and-remediation-policy).
    SignalType "signal type" {
        /// Node condition Ready is not True.
        NodeNotReady => "NodeNotReady",
        /// A container's last termination reason is OOMKilled.
        OomKilled => "OOMKilled",
        /// A container is waiting in CrashLoopBackOff.
        CrashLoopBackOff => "CrashLoopBackOff",
        /// An inference service reports a failed phase or Ready=False.
        InferenceServiceFailed => "InferenceServiceFailed",
        /// A container cannot pull its image (ImagePullBackOff or ErrImagePull).
        ImagePullBackOff => "ImagePullBackOff",
        /// A container's configuration (Secret, ConfigMap) is missing.
        CreateContainerConfigError => "CreateContainerConfigError",
        /// A pod cannot be scheduled.
        Unschedulable => "Unschedulable",
        /// Node condition MemoryPressure is True.
        MemoryPressure => "MemoryPressure",
        /// Node condition DiskPressure is True.
        DiskPressure => "DiskPressure",
        /// Node condition PIDPressure is True.
        PidPressure => "PIDPressure",
        /// A pod was evicted.
        Evicted => "Evicted",
    }
}

impl SignalType {
    /// The default severity of the signal type (docs/architecture.md#signals-correlation-and-remediation-policy).
    pub fn default_severity(self) -> Severity {
        match self {
            SignalType::NodeNotReady => Severity::Critical,
            SignalType::OomKilled
            | SignalType::CrashLoopBackOff
            | SignalType::InferenceServiceFailed => Severity::High,
            SignalType::ImagePullBackOff
            | SignalType::CreateContainerConfigError
            | SignalType::Unschedulable
            | SignalType::MemoryPressure
            | SignalType::DiskPressure
            | SignalType::PidPressure => Severity::Medium,
            SignalType::Evicted => Severity::Low,
        }
    }
}

/// Declares the status types from one row per field (its docs and schema
/// bounds, its wire key, its Rust name and type): [`FederatedClusterStatus`]
/// (every field), its edge-owned part [`EdgeStatus`], and the key lists
/// [`EDGE_OWNED_STATUS_KEYS`] and [`HUB_OWNED_STATUS_KEYS`] that the
/// admission policy, the lenient decoder and the status patches use. The
/// full status keeps the edge fields inline rather than as a
/// `#[serde(flatten)]` field: serde buffers a flattened struct and
/// deserialises it afterwards, so the lenient decoder
/// (`serde_path_to_error`) would lose the key of an unreadable edge field
/// and give up the whole status, and the hub's typed decode of every site
/// would pay for the buffering.
macro_rules! status_types {
    (
        hub { $( $(#[$hub_attr:meta])* $hub_key:literal => $hub_field:ident: $hub_ty:ty, )* }
        edge { $( $(#[$edge_attr:meta])* $edge_key:literal => $edge_field:ident: $edge_ty:ty, )* }
    ) => {
        /// Status keys the edge operator writes in Push mode (the hub writes
        /// them in Pull mode): the fields of [`EdgeStatus`]. An edge status
        /// patch contains only keys from this list.
        pub const EDGE_OWNED_STATUS_KEYS: &[&str] = &[$($edge_key),*];

        /// Status keys only the hub operator ever writes, in both modes.
        pub const HUB_OWNED_STATUS_KEYS: &[&str] = &[$($hub_key),*];

        /// Observed state of a site. Every field is optional and omitted when unset,
        /// so each writer patches only its own keys: the hub owns phase,
        /// phaseTransitionTime, conditions and clockOffsetSeconds; in Push mode the
        /// edge owns the rest.
        //
        // Decoded leniently (`api::lenient`): a status that does not read whole
        // still decodes, without what could not be read, which `unreadable()`
        // names. The derives below are the strict decode the lenient one starts
        // from (`remote = "Self"` makes them inherent functions; the trait impls
        // are in `api::lenient`).
        #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
        #[serde(remote = "Self", rename_all = "camelCase")]
        #[schemars(rename = "FederatedClusterStatus")]
        pub struct FederatedClusterStatus {
            $(
                $(#[$hub_attr])*
                #[serde(rename = $hub_key, default, skip_serializing_if = "Option::is_none")]
                pub $hub_field: $hub_ty,
            )*
            $(
                $(#[$edge_attr])*
                #[serde(rename = $edge_key, default, skip_serializing_if = "Option::is_none")]
                pub $edge_field: $edge_ty,
            )*
            /// Not on the wire: what the lenient decoder could not read of the
            /// site ([`Self::unreadable`], `api::lenient`); None for a status that
            /// read whole.
            #[serde(skip)]
            #[schemars(skip)]
            pub unreadable: Option<Box<super::Unreadable>>,
        }

        /// The edge-owned part of a site's status: exactly the keys of
        /// [`EDGE_OWNED_STATUS_KEYS`], so a patch built from it can never carry a
        /// hub-owned key. The edge (Push) or the hub prober (Pull) fills it from
        /// the member cluster. Its fields are [`FederatedClusterStatus`]'s
        /// edge-owned fields, declared once for both.
        #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
        pub struct EdgeStatus {
            $(
                $(#[$edge_attr])*
                #[serde(rename = $edge_key, default, skip_serializing_if = "Option::is_none")]
                pub $edge_field: $edge_ty,
            )*
        }

        impl EdgeStatus {
            /// The edge-owned fields of `status`.
            pub fn from_status(status: &FederatedClusterStatus) -> Self {
                Self { $($edge_field: status.$edge_field.clone(),)* }
            }

            /// Overwrite the edge-owned fields of `status` with these, leaving the
            /// hub-owned fields alone.
            #[cfg(test)]
            pub(crate) fn apply_to(&self, status: &mut FederatedClusterStatus) {
                $(status.$edge_field = self.$edge_field.clone();)*
            }
        }
    };
}

status_types! {
    hub {
        /// Hub-owned: connection phase.
        "phase" => phase: Option<Phase>,
        /// Hub-owned: when `phase` last changed (hub clock).
        "phaseTransitionTime" => phase_transition_time: Option<Time>,
        /// Hub-owned: `Connected`, `CredentialExpiring`, `ClockSkew`, and in Pull
        /// mode `RemediationCapable`.
        #[schemars(schema_with = "conditions_schema")]
        "conditions" => conditions: Option<Vec<Condition>>,
        /// Hub-owned: how far the edge clock is ahead of the hub clock (negative:
        /// behind), in whole seconds, as the hub last measured it when a new
        /// heartbeat arrived. Absent while the difference is within the
        /// `ClockSkew` tolerance, and always for Pull sites (the hub stamps their
        /// heartbeat). Written only with the `ClockSkew` condition or when it
        /// moves by more than the tolerance, so it may lag by up to that much.
        /// `lastHeartbeatTime - clockOffsetSeconds` is the heartbeat on the hub
        /// clock, which every age shown to a user is computed from.
        #[schemars(range(min = -MAX_CLOCK_OFFSET_SECONDS, max = MAX_CLOCK_OFFSET_SECONDS))]
        "clockOffsetSeconds" => clock_offset_seconds: Option<i64>,
    }
    edge {
        /// Edge-owned: the edge's clock when it sent its latest report. The hub
        /// judges age by when it observed a new value here, on its own clock.
        "lastHeartbeatTime" => last_heartbeat_time: Option<Time>,
        /// Edge-owned: version of the reporting operator build.
        #[schemars(length(max = MAX_VERSION_CHARS), regex(pattern = PRINTABLE_TEXT_PATTERN))]
        "observedVersion" => observed_version: Option<String>,
        /// Edge-owned: the member's Kubernetes version, e.g. v1.33.2.
        #[schemars(length(max = MAX_VERSION_CHARS), regex(pattern = PRINTABLE_TEXT_PATTERN))]
        "kubernetesVersion" => kubernetes_version: Option<String>,
        /// Edge-owned: number of nodes.
        #[schemars(range(min = 0, max = MAX_COUNT))]
        "nodeCount" => node_count: Option<i64>,
        /// Edge-owned: number of namespaces.
        #[schemars(range(min = 0, max = MAX_COUNT))]
        "namespaceCount" => namespace_count: Option<i64>,
        /// Edge-owned: node and accelerator capacity.
        "capacity" => capacity: Option<Capacity>,
        /// Edge-owned: inference workloads found by discovery.
        "inference" => inference: Option<Inference>,
        /// Edge-owned: active failures, worst first, at most 100.
        #[schemars(length(max = MAX_SIGNALS))]
        "signals" => signals: Option<Vec<Signal>>,
        /// Edge-owned: when the edge's hub token expires (the token a restart
        /// of the edge would use).
        "credentialExpirationTime" => credential_expiration_time: Option<Time>,
        /// Edge-owned: when the edge renews that token by itself (half its
        /// lifetime before expiry); absent when it does not renew it.
        "credentialRenewalTime" => credential_renewal_time: Option<Time>,
        /// Pull only: how long the hub's latest successful probe of the member
        /// took, sent with the heartbeat it stamps.
        #[schemars(range(min = 0, max = MAX_DURATION_MILLISECONDS))]
        "lastProbeDurationMilliseconds" => last_probe_duration_milliseconds: Option<i64>,
        /// Push only: how long the edge's previous report to the hub took (its
        /// status write's round trip), sent with the next heartbeat. The hub
        /// observes it as the site's health-check duration.
        #[schemars(range(min = 0, max = MAX_DURATION_MILLISECONDS))]
        "lastReportDurationMilliseconds" => last_report_duration_milliseconds: Option<i64>,
        /// Edge-owned: the identity of the member cluster the report was read
        /// from — the UID of its `kube-system` namespace, which lives as long
        /// as the cluster. The hub flags a site whose member changes
        /// (condition `MemberChanged`) and counts incidents by member.
        #[schemars(length(min = MEMBER_UID_CHARS, max = MEMBER_UID_CHARS), regex(pattern = MEMBER_UID_PATTERN))]
        "member" => member: Option<String>,
        /// Edge-owned: the site's own account of its latest dark period
        /// (when it could not reach the hub, on its own clock, and what it
        /// saw meanwhile, from its journal on the member cluster). The
        /// hub's judgement never reads it.
        "lastDarkPeriod" => last_dark_period: Option<super::DarkPeriod>,
        /// Edge-owned: what the member's nodes run — the distinct OS
        /// images, kernels, container runtimes and GPU models with how many
        /// nodes have each (at most 8 per attribute, the rest counted).
        "nodeInfo" => node_info: Option<super::NodeInfo>,
    }
}

/// The schema of `status.conditions`: `metav1.Condition`'s, bounded (at
/// most [`MAX_CONDITIONS`] entries, status one of True/False/Unknown,
/// reason and type short identifiers, message at most
/// [`MAX_CONDITION_MESSAGE_CHARS`]), so no writer can store a megabyte of
/// text in what every view prints.
fn conditions_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "nullable": true,
        "maxItems": MAX_CONDITIONS,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
        "items": {
            "description": "One aspect of the site's state, as the hub judged it (metav1.Condition).",
            "type": "object",
            "required": ["lastTransitionTime", "message", "reason", "status", "type"],
            "properties": {
                "lastTransitionTime": {
                    "description": "When the condition's status last changed (hub clock).",
                    "type": "string",
                    "format": "date-time"
                },
                "message": {
                    "description": "Human-readable detail.",
                    "type": "string",
                    "maxLength": MAX_CONDITION_MESSAGE_CHARS,
                    "pattern": PRINTABLE_TEXT_PATTERN
                },
                "observedGeneration": {
                    "description": "The metadata.generation the condition was set from.",
                    "type": "integer",
                    "format": "int64",
                    "minimum": 0,
                    // 2^53: a bound the API server can hold as an int64
                    // (i64::MAX is stored as the float 2^63, which the real
                    // server refuses as a bound for an int64 on every write
                    // carrying the field) and far above any generation.
                    "maximum": 9_007_199_254_740_992_i64
                },
                "reason": {
                    "description": "Why, in CamelCase.",
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_CONDITION_REASON_CHARS,
                    "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
                },
                "status": {
                    "description": "True, False or Unknown.",
                    "type": "string",
                    "enum": ["True", "False", "Unknown"]
                },
                "type": {
                    "description": "Condition type in CamelCase.",
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_CONDITION_REASON_CHARS,
                    "pattern": "^[A-Za-z]([A-Za-z0-9_]*[A-Za-z0-9])?$"
                }
            }
        }
    })
}

impl FederatedClusterStatus {
    /// `lastHeartbeatTime` moved onto the hub clock: minus
    /// `clockOffsetSeconds` when the hub measured one. None when never
    /// heard from. Ages shown to users are taken from this, not from the
    /// edge-stamped time, so a slow edge clock does not make a live site
    /// look old and a fast one does not make a dead site look fresh.
    pub fn heartbeat_on_hub_clock(&self) -> Option<Timestamp> {
        let reported = self.last_heartbeat_time.as_ref()?.0;
        let offset = self.clock_offset_seconds.unwrap_or(0);
        Some(
            reported
                .checked_sub(SignedDuration::from_secs(offset))
                .unwrap_or(reported),
        )
    }

    /// The age of the latest heartbeat on the hub clock at `now` (see
    /// [`Self::heartbeat_on_hub_clock`]), never negative; None when never
    /// heard from.
    pub(crate) fn heartbeat_age(&self, now: Timestamp) -> Option<SignedDuration> {
        self.heartbeat_on_hub_clock()
            .map(|t| now.duration_since(t).max(SignedDuration::ZERO))
    }

    /// The condition of the given type, if present.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions
            .as_deref()?
            .iter()
            .find(|c| c.type_ == type_)
    }

    /// Signals reported, or an empty slice.
    pub fn signals(&self) -> &[Signal] {
        self.signals.as_deref().unwrap_or_default()
    }
}

impl EdgeStatus {
    /// The reported signals (none when unset).
    pub fn signals(&self) -> &[Signal] {
        self.signals.as_deref().unwrap_or_default()
    }
}

/// Node and accelerator capacity of a site.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Capacity {
    /// Number of nodes.
    #[serde(default)]
    #[schemars(range(min = 0, max = MAX_COUNT))]
    pub nodes: i64,
    /// Sum of GPU capacity over all vendors.
    #[serde(default)]
    #[schemars(range(min = 0, max = MAX_COUNT))]
    pub gpus_total: i64,
    /// Sum of allocatable GPUs over all vendors.
    #[serde(default)]
    #[schemars(range(min = 0, max = MAX_COUNT))]
    pub gpus_allocatable: i64,
    /// Per extended-resource name (nvidia.com/gpu, amd.com/gpu, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend(
        "maxProperties" = MAX_GPU_VENDORS,
        "x-kubernetes-validations" = [{
            "rule": "self.all(k, k.size() <= 253 && k.matches('^[^\\\\p{Cc}\\\\p{Cf}]*$'))",
            "message": "GPU resource names are at most 253 characters, without control or format characters"
        }]
    ))]
    pub gpus_by_vendor: BTreeMap<String, GpuCount>,
}

/// GPU counts of one vendor resource.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GpuCount {
    /// Node capacity.
    #[serde(default)]
    #[schemars(range(min = 0, max = MAX_COUNT))]
    pub total: i64,
    /// Node allocatable.
    #[serde(default)]
    #[schemars(range(min = 0, max = MAX_COUNT))]
    pub allocatable: i64,
}

/// Inference workloads on a site (LLMKube and KServe; absent kinds count 0).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Inference {
    /// LLMKube Model objects.
    #[serde(default)]
    #[schemars(range(min = 0, max = MAX_COUNT))]
    pub models: i64,
    /// Inference services that are ready.
    #[serde(default)]
    #[schemars(range(min = 0, max = MAX_COUNT))]
    pub services_ready: i64,
    /// Inference services that failed.
    #[serde(default)]
    #[schemars(range(min = 0, max = MAX_COUNT))]
    pub services_failed: i64,
    /// All inference services.
    #[serde(default)]
    #[schemars(range(min = 0, max = MAX_COUNT))]
    pub services_total: i64,
}

/// The workload a signal is attributed to.
#[derive(
    Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, JsonSchema,
)]
pub struct WorkloadRef {
    /// Deployment, StatefulSet, DaemonSet, Job, Pod, Node or an inference kind.
    #[schemars(length(max = MAX_LABEL_CHARS), regex(pattern = PRINTABLE_TEXT_PATTERN))]
    pub kind: String,
    /// Object name.
    #[schemars(length(max = MAX_OBJECT_NAME_CHARS), regex(pattern = PRINTABLE_TEXT_PATTERN))]
    pub name: String,
}

impl WorkloadRef {
    /// A reference to a workload of `kind` named `name`.
    pub fn new(kind: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            name: name.into(),
        }
    }
}

impl Signal {
    /// Identity of a failure across reports (type, namespace, workload),
    /// e.g. to count each new signal once.
    pub fn key(&self) -> String {
        format!("{}:{}:{}", self.type_, self.namespace, self.workload)
    }
}

impl fmt::Display for WorkloadRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.kind, self.name)
    }
}

/// One active failure on a site, merged per (type, namespace, workload).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Signal {
    /// Failure type.
    #[serde(rename = "type")]
    pub type_: SignalType,
    /// Severity (the type's default unless raised).
    pub severity: Severity,
    /// Site name; set where signals of many sites are listed together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_LABEL_CHARS), regex(pattern = PRINTABLE_TEXT_PATTERN))]
    pub cluster: Option<String>,
    /// Namespace of the workload; empty for cluster-scoped objects (nodes).
    #[serde(default)]
    #[schemars(length(max = MAX_LABEL_CHARS), regex(pattern = PRINTABLE_TEXT_PATTERN))]
    pub namespace: String,
    /// The workload the failure belongs to.
    pub workload: WorkloadRef,
    /// Human-readable detail from the source object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_MESSAGE_CHARS), regex(pattern = PRINTABLE_TEXT_PATTERN))]
    pub message: Option<String>,
    /// When this failure was first seen.
    pub first_seen: Time,
    /// When this failure was last seen.
    pub last_seen: Time,
    /// How many reports saw this failure (at least 1).
    #[schemars(range(min = 1, max = MAX_COUNT))]
    pub count: i64,
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod maintenance_tests;
