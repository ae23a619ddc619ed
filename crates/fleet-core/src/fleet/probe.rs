//! What one Pull-mode probe of a member cluster found, as the hub judges
//! it: the failure classes behind the `Connected` condition's reason, and
//! the member access a site's tier policy needs for `RemediationCapable`.
//! Pure: the probe itself runs in `operator::prober`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use crate::api::Tier;

/// Why the hub could not read a member cluster; the `Connected=False`
/// condition reason of a Pull site.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProbeFailure {
    /// The member rejected the credential (401): expired or revoked.
    Unauthorized,
    /// The member identity lacks a right the probe needs (403).
    Forbidden,
    /// The member did not answer within the probe timeout.
    Timeout,
    /// Nothing listens at the member's address.
    ConnectionRefused,
    /// The member's server name does not resolve.
    Dns,
    /// The TLS handshake failed (the CA does not verify the server).
    Tls,
    /// The referenced Secret (or its key) does not exist.
    SecretNotFound,
    /// The Secret's kubeconfig is unusable or refused (exec, files, proxy,
    /// garbage).
    InvalidKubeconfig,
    /// The Secret is labelled for another site than the one naming it.
    SecretLabelMismatch,
    /// The Secret exists but lacks a label the hub requires of a pull
    /// Secret (a hand-made one, e.g. from GitOps); the message names it.
    SecretNotLabelled,
    /// The hub may not read the Secret: it reads only the pull Secrets
    /// granted to it by name (`register` grants each; a hand-made Secret
    /// needs its grant too).
    SecretNotGranted,
    /// The member's address is one the hub does not connect to (loopback,
    /// link-local, cloud metadata, or outside the allowed networks).
    AddressRefused,
    /// The member's answers were larger than the hub reads in one probe.
    TooLarge,
    /// Something answered, but not as a Kubernetes API server does (HTML,
    /// not JSON, an unexpected status).
    NotKubernetes,
    /// Any other failure (e.g. a 5xx from the member).
    Failed,
}

impl ProbeFailure {
    /// Every value, in declaration order.
    pub const ALL: &[ProbeFailure] = &[
        ProbeFailure::Unauthorized,
        ProbeFailure::Forbidden,
        ProbeFailure::Timeout,
        ProbeFailure::ConnectionRefused,
        ProbeFailure::Dns,
        ProbeFailure::Tls,
        ProbeFailure::SecretNotFound,
        ProbeFailure::InvalidKubeconfig,
        ProbeFailure::SecretLabelMismatch,
        ProbeFailure::SecretNotLabelled,
        ProbeFailure::SecretNotGranted,
        ProbeFailure::AddressRefused,
        ProbeFailure::TooLarge,
        ProbeFailure::NotKubernetes,
        ProbeFailure::Failed,
    ];

    /// Whether the failure is the member's silence — nothing answered in
    /// time, the connection was refused, its name did not resolve, it
    /// could not be reached or a server in front of it failed — as a site
    /// that is switched off or offline gives, rather than an answer that
    /// names a fault of its own (credential, access, TLS, Secret, address,
    /// size). Only silence is judged by the site's schedule
    /// (`spec.connectivity`, `fleet::connectivity`): a member that rejects
    /// the hub's token at night is awake and broken, not asleep.
    pub const fn is_silence(self) -> bool {
        matches!(
            self,
            ProbeFailure::Timeout
                | ProbeFailure::ConnectionRefused
                | ProbeFailure::Dns
                | ProbeFailure::Failed
        )
    }

    /// The condition reason.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProbeFailure::Unauthorized => "Unauthorized",
            ProbeFailure::Forbidden => "Forbidden",
            ProbeFailure::Timeout => "Timeout",
            ProbeFailure::ConnectionRefused => "ConnectionRefused",
            ProbeFailure::Dns => "DNS",
            ProbeFailure::Tls => "TLS",
            ProbeFailure::SecretNotFound => "SecretNotFound",
            ProbeFailure::InvalidKubeconfig => "InvalidKubeconfig",
            ProbeFailure::SecretLabelMismatch => "SecretLabelMismatch",
            ProbeFailure::SecretNotLabelled => "SecretNotLabelled",
            ProbeFailure::SecretNotGranted => "SecretNotGranted",
            ProbeFailure::AddressRefused => "AddressRefused",
            ProbeFailure::TooLarge => "TooLarge",
            ProbeFailure::NotKubernetes => "NotKubernetes",
            ProbeFailure::Failed => "ProbeFailed",
        }
    }
}

impl crate::api::WireEnum for ProbeFailure {
    const WHAT: &'static str = "probe failure";
    const ALL: &'static [Self] = ProbeFailure::ALL;

    fn as_str(self) -> &'static str {
        ProbeFailure::as_str(self)
    }
}

/// A Pull site's `Connected` reason when no probe failed: before the
/// first probe, or after one that read the member.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProbeReason {
    /// `Unknown`: the hub has not probed the member yet.
    NotProbedYet,
    /// `True`: the latest probe read the member.
    Succeeded,
    /// `True`: the latest probe read the member without verifying its
    /// certificate (the kubeconfig sets `insecure-skip-tls-verify`).
    InsecureSkipTlsVerify,
}

impl ProbeReason {
    /// Every value, in declaration order.
    pub const ALL: &[ProbeReason] = &[
        ProbeReason::NotProbedYet,
        ProbeReason::Succeeded,
        ProbeReason::InsecureSkipTlsVerify,
    ];

    /// The condition reason.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProbeReason::NotProbedYet => "NotProbedYet",
            ProbeReason::Succeeded => "ProbeSucceeded",
            ProbeReason::InsecureSkipTlsVerify => "InsecureSkipTLSVerify",
        }
    }
}

impl crate::api::WireEnum for ProbeReason {
    const WHAT: &'static str = "probe reason";
    const ALL: &'static [Self] = ProbeReason::ALL;

    fn as_str(self) -> &'static str {
        ProbeReason::as_str(self)
    }
}

/// The outcome of the latest probe of one site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// The member answered every read; `insecure` when the kubeconfig skips
    /// TLS verification.
    Reached { insecure: bool },
    /// The probe failed; `message` is one line without secrets.
    Failed {
        failure: ProbeFailure,
        message: String,
    },
}

/// `RemediationCapable` as last asked of the member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemediationAccess {
    /// Whether the member identity may do everything the tier policy's
    /// automatic remediations need.
    pub capable: bool,
    /// The condition reason.
    pub reason: &'static str,
    /// One line: what is missing, or why nothing is needed.
    pub message: String,
}

/// What the hub knows from probing one Pull site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeVerdict {
    /// The latest probe.
    pub outcome: ProbeOutcome,
    /// How long it took.
    pub duration: Duration,
    /// `RemediationCapable`, asked when the site's client was (re)built.
    pub remediation: Option<RemediationAccess>,
}

/// A member API permission, as `kubectl auth can-i VERB RESOURCE` asks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Permission {
    /// Verb, e.g. `delete`.
    pub verb: &'static str,
    /// API group, "" for core.
    pub group: &'static str,
    /// Resource, e.g. `pods`.
    pub resource: &'static str,
    /// Subresource, e.g. `eviction`, or "".
    pub subresource: &'static str,
}

impl std::fmt::Display for Permission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.verb, self.resource)?;
        if !self.subresource.is_empty() {
            write!(f, "/{}", self.subresource)?;
        }
        if !self.group.is_empty() {
            write!(f, ".{}", self.group)?;
        }
        Ok(())
    }
}

const fn perm(
    verb: &'static str,
    group: &'static str,
    resource: &'static str,
    subresource: &'static str,
) -> Permission {
    Permission {
        verb,
        group,
        resource,
        subresource,
    }
}

/// Restart a failing workload: delete its pods, or roll it out again.
const RESTART: [Permission; 4] = [
    perm("delete", "", "pods", ""),
    perm("patch", "apps", "deployments", ""),
    perm("patch", "apps", "statefulsets", ""),
    perm("patch", "apps", "daemonsets", ""),
];

/// Take a failing node out of service: cordon it and evict its pods.
const DRAIN: [Permission; 2] = [
    perm("patch", "", "nodes", ""),
    perm("create", "", "pods", "eviction"),
];

/// The member permissions the automatic remediations of `tier` need
/// (docs/architecture.md#signals-correlation-and-remediation-policy): none for `critical` (every action is manual), restarts for
/// `standard` (medium and low signals are automatic: image pulls, config
/// errors, scheduling, pressure, evictions), restarts and drains for
/// `non-critical` (every signal, NodeNotReady included, is automatic).
pub fn remediation_needs(tier: Tier) -> Vec<Permission> {
    match tier {
        Tier::Critical => Vec::new(),
        Tier::Standard => RESTART.to_vec(),
        Tier::NonCritical => RESTART.iter().chain(DRAIN.iter()).copied().collect(),
    }
}

impl RemediationAccess {
    /// `RemediationCapable` of a site whose capabilities do not include
    /// `remediation`: the hub asks the member nothing about write access.
    pub fn not_requested() -> Self {
        RemediationAccess {
            capable: false,
            reason: "NotRequested",
            message: "the site's capabilities do not include remediation, so the hub does not ask what the member identity may change".to_owned(),
        }
    }
}

/// `RemediationCapable` from the permissions `tier` needs and those of
/// them the member denied.
pub fn remediation_access(tier: Tier, denied: &[Permission]) -> RemediationAccess {
    if remediation_needs(tier).is_empty() {
        return RemediationAccess {
            capable: false,
            reason: "ManualByPolicy",
            message: format!(
                "tier {}: every remediation is manual with approval, so the hub needs no write access",
                tier.as_str()
            ),
        };
    }
    if denied.is_empty() {
        return RemediationAccess {
            capable: true,
            reason: "AccessGranted",
            message: format!(
                "the member identity may do what tier {} automatic remediation needs",
                tier.as_str()
            ),
        };
    }
    let missing: Vec<String> = denied.iter().map(ToString::to_string).collect();
    RemediationAccess {
        capable: false,
        reason: "AccessDenied",
        message: format!(
            "tier {} automatic remediation needs what the member identity may not do: {}",
            tier.as_str(),
            missing.join(", ")
        ),
    }
}

/// A network, `ADDRESS/PREFIX` (`10.0.0.0/8`, `fd00::/8`); a bare address
/// is the network of just that address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl Cidr {
    const fn v4(a: u8, b: u8, c: u8, d: u8, prefix: u8) -> Self {
        Cidr {
            addr: IpAddr::V4(Ipv4Addr::new(a, b, c, d)),
            prefix,
        }
    }

    const fn v6(segments: [u16; 8], prefix: u8) -> Self {
        let [a, b, c, d, e, f, g, h] = segments;
        Cidr {
            addr: IpAddr::V6(Ipv6Addr::new(a, b, c, d, e, f, g, h)),
            prefix,
        }
    }

    /// Whether `ip` lies in this network (an IPv4-mapped IPv6 address
    /// counts as its IPv4 address).
    pub(crate) fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, canonical(ip)) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }

    /// Whether every address of `self` lies in `other`.
    fn within(&self, other: &Cidr) -> bool {
        self.prefix >= other.prefix && other.contains(self.addr)
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

impl std::str::FromStr for Cidr {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = addr
            .parse()
            .map_err(|_| format!("{s:?} is not an IP network such as 10.0.0.0/8 or fd00::/8"))?;
        let addr = canonical(addr);
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("{s:?}: the prefix length must be 0..={max}"))?,
        };
        Ok(Cidr { addr, prefix })
    }
}

/// A byte size as flags take it: a number of bytes, or with a binary
/// suffix `Ki`, `Mi`, `Gi` (`32Mi`).
pub fn parse_byte_size(s: &str) -> Result<u64, String> {
    let (digits, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, ""),
    };
    let shift = match unit {
        "" => 0,
        "Ki" => 10,
        "Mi" => 20,
        "Gi" => 30,
        _ => return Err(format!("{s:?} is not a size such as 32Mi, 512Ki or 1Gi")),
    };
    digits
        .parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(|| format!("{s:?} is not a size such as 32Mi, 512Ki or 1Gi"))
}

/// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) as the IPv4 address it
/// reaches, so no check can be passed by writing it the other way.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// The IPv4 addresses an IPv6 address leads to through a translator or a
/// tunnel, each of which a connection to it may reach: IPv4-compatible
/// (`::a.b.c.d`, but not `::` and `::1`), IPv4-translated
/// (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::/96`, and `64:ff9b:1::/48` read
/// at every prefix length RFC 6052 allows in it: /48, /56, /64, /96), 6to4
/// (`2002::/16`) and Teredo (`2001::/32`: its server, and its client
/// address, stored inverted). IPv4-mapped addresses are [`canonical`]'s.
fn embedded_ipv4(v6: Ipv6Addr) -> Vec<Ipv4Addr> {
    let o = v6.octets();
    let seg = v6.segments();
    let v4 = |a: u8, b: u8, c: u8, d: u8| Ipv4Addr::new(a, b, c, d);
    let last = v4(o[12], o[13], o[14], o[15]);
    match seg {
        [0, 0, 0, 0, 0, 0, ..] if u32::from(last) > 1 => vec![last],
        [0, 0, 0, 0, 0xffff, 0, ..] => vec![last],
        [0x64, 0xff9b, 0, 0, 0, 0, ..] => vec![last],
        // The local-use prefix is split at a length each network picks:
        // every reading of the address RFC 6052 allows (octet 8 zero, the
        // bits after the IPv4 address zero), but none as 0.0.0.0, which
        // a /96 reading of the shorter forms always gives.
        [0x64, 0xff9b, 1, ..] => {
            let zero = |from: usize| o[from..].iter().all(|b| *b == 0);
            let mut found = Vec::new();
            if o[8] == 0 {
                if zero(11) {
                    found.push(v4(o[6], o[7], o[9], o[10]));
                }
                if zero(12) {
                    found.push(v4(o[7], o[9], o[10], o[11]));
                }
                if zero(13) {
                    found.push(v4(o[9], o[10], o[11], o[12]));
                }
            }
            found.push(last);
            found.retain(|a| !a.is_unspecified());
            found
        }
        [0x2002, ..] => vec![v4(o[2], o[3], o[4], o[5])],
        [0x2001, 0, ..] => vec![v4(o[4], o[5], o[6], o[7]), Ipv4Addr::from(!u32::from(last))],
        _ => Vec::new(),
    }
}

/// Why the hub does not connect to a member address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressRefusal {
    /// A cloud instance metadata endpoint (by address or by name).
    Metadata,
    /// Link-local (169.254.0.0/16, fe80::/10).
    LinkLocal,
    /// Loopback (127.0.0.0/8, ::1): the hub itself.
    Loopback,
    /// The unspecified address (0.0.0.0, ::), which reaches the hub itself.
    Unspecified,
    /// Multicast or broadcast: no API server lives there.
    Multicast,
    /// In a network of `--pull-deny-cidr`.
    Denied(Cidr),
    /// Outside every network of `--pull-allow-cidr`.
    NotAllowed,
}

impl AddressRefusal {
    /// One line for the `Connected` condition: the class, never the address
    /// a name resolved to.
    pub fn describe(self) -> String {
        let lift = |example: &str| {
            format!(
                " (a fleet whose members live there allows it with --pull-allow-cidr {example})"
            )
        };
        match self {
            AddressRefusal::Metadata => {
                "the member server is a cloud metadata endpoint: the hub never connects there"
                    .to_owned()
            }
            AddressRefusal::LinkLocal => format!(
                "the member server has a link-local address: the hub does not connect there{}",
                lift("169.254.0.0/16")
            ),
            AddressRefusal::Loopback => format!(
                "the member server has a loopback address, which is the hub itself{}",
                lift("127.0.0.0/8")
            ),
            AddressRefusal::Unspecified => {
                "the member server has the unspecified address, which is the hub itself".to_owned()
            }
            AddressRefusal::Multicast => {
                "the member server has a multicast or broadcast address".to_owned()
            }
            AddressRefusal::Denied(net) => {
                format!("the member server's address is in {net}, which --pull-deny-cidr refuses")
            }
            AddressRefusal::NotAllowed => {
                "the member server's address is outside every network --pull-allow-cidr allows"
                    .to_owned()
            }
        }
    }
}

/// Cloud instance metadata endpoints: AWS (also on IPv6), GCP, Azure,
/// OpenStack and DigitalOcean share 169.254.169.254; Alibaba Cloud uses
/// 100.100.100.200.
const METADATA_ADDRESSES: [Cidr; 3] = [
    Cidr::v4(169, 254, 169, 254, 32),
    Cidr::v6([0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254], 128),
    Cidr::v4(100, 100, 100, 200, 32),
];

/// Names of metadata endpoints, refused before they are resolved.
const METADATA_NAMES: [&str; 5] = [
    "metadata",
    "metadata.google.internal",
    "metadata.goog",
    "instance-data",
    "instance-data.ec2.internal",
];

/// Networks refused by default, each with its class. An allowed network
/// lifts a refusal only when it lies inside the refused one (so
/// `--pull-allow-cidr 127.0.0.0/8` admits loopback members, while
/// `0.0.0.0/0` admits no loopback, link-local or metadata address).
const REFUSED_BY_DEFAULT: [(Cidr, AddressRefusal); 9] = [
    (METADATA_ADDRESSES[0], AddressRefusal::Metadata),
    (METADATA_ADDRESSES[1], AddressRefusal::Metadata),
    (METADATA_ADDRESSES[2], AddressRefusal::Metadata),
    (Cidr::v4(169, 254, 0, 0, 16), AddressRefusal::LinkLocal),
    (
        Cidr::v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10),
        AddressRefusal::LinkLocal,
    ),
    (Cidr::v4(127, 0, 0, 0, 8), AddressRefusal::Loopback),
    (
        Cidr::v6([0, 0, 0, 0, 0, 0, 0, 1], 128),
        AddressRefusal::Loopback,
    ),
    (Cidr::v4(224, 0, 0, 0, 4), AddressRefusal::Multicast),
    (
        Cidr::v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8),
        AddressRefusal::Multicast,
    ),
];

/// Which member addresses the hub's prober may connect to
/// (`--pull-allow-cidr`, `--pull-deny-cidr`). Whoever may write a pull
/// Secret and a FederatedCluster chooses where the hub connects: without
/// this, the cloud's metadata endpoint, the hub's own loopback services or
/// anything on its network would be one kubeconfig away.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    /// When not empty, a member address must lie in one of these; one
    /// inside a default refusal lifts it.
    pub allow: Vec<Cidr>,
    /// Refused, whatever `allow` says.
    pub deny: Vec<Cidr>,
}

impl AddressPolicy {
    /// Whether the hub may connect to `ip`: every IPv4 address it embeds
    /// ([`embedded_ipv4`]), then it, must pass — a NAT64 or 6to4 form of
    /// the metadata endpoint is refused as the metadata endpoint, and an
    /// allow list must admit both forms.
    pub fn check(&self, ip: IpAddr) -> Result<(), AddressRefusal> {
        let ip = canonical(ip);
        if let IpAddr::V6(v6) = ip {
            for v4 in embedded_ipv4(v6) {
                self.check_one(IpAddr::V4(v4))?;
            }
        }
        self.check_one(ip)
    }

    fn check_one(&self, ip: IpAddr) -> Result<(), AddressRefusal> {
        if let Some(net) = self.deny.iter().find(|n| n.contains(ip)) {
            return Err(AddressRefusal::Denied(*net));
        }
        if ip.is_unspecified() || ip == IpAddr::V4(Ipv4Addr::BROADCAST) {
            return Err(if ip.is_unspecified() {
                AddressRefusal::Unspecified
            } else {
                AddressRefusal::Multicast
            });
        }
        let allowed = self.allow.iter().find(|n| n.contains(ip));
        for (net, class) in REFUSED_BY_DEFAULT {
            if net.contains(ip) && !allowed.is_some_and(|a| a.within(&net)) {
                return Err(class);
            }
        }
        if !self.allow.is_empty() && allowed.is_none() {
            return Err(AddressRefusal::NotAllowed);
        }
        Ok(())
    }

    /// Whether the hub may resolve and connect to host name `name`: the
    /// names of metadata endpoints are refused before any lookup (what a
    /// name resolves to is checked with [`AddressPolicy::check`]).
    pub fn check_name(&self, name: &str) -> Result<(), AddressRefusal> {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        if METADATA_NAMES.contains(&name.as_str()) {
            return Err(AddressRefusal::Metadata);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_the_documented_names() {
        let reasons: Vec<_> = ProbeFailure::ALL.iter().map(|f| f.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "Unauthorized",
                "Forbidden",
                "Timeout",
                "ConnectionRefused",
                "DNS",
                "TLS",
                "SecretNotFound",
                "InvalidKubeconfig",
                "SecretLabelMismatch",
                "SecretNotLabelled",
                "SecretNotGranted",
                "AddressRefused",
                "TooLarge",
                "NotKubernetes",
                "ProbeFailed",
            ]
        );
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn cidrs(list: &[&str]) -> Vec<Cidr> {
        list.iter().map(|c| c.parse().unwrap()).collect()
    }

    #[test]
    fn byte_sizes() {
        assert_eq!(parse_byte_size("32Mi"), Ok(32 << 20));
        assert_eq!(parse_byte_size("512Ki"), Ok(512 << 10));
        assert_eq!(parse_byte_size("1Gi"), Ok(1 << 30));
        assert_eq!(parse_byte_size("1000"), Ok(1000));
        for bad in ["", "0", "Mi", "32MB", "-1", "32 Mi"] {
            assert!(parse_byte_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn networks_parse_and_contain() {
        let net: Cidr = "10.0.0.0/8".parse().unwrap();
        assert!(net.contains(ip("10.255.0.1")));
        assert!(!net.contains(ip("11.0.0.1")));
        assert!(net.contains(ip("::ffff:10.1.2.3")), "IPv4-mapped counts");
        let host: Cidr = "fd00::1".parse().unwrap();
        assert_eq!(host.to_string(), "fd00::1/128");
        assert!("0.0.0.0/0".parse::<Cidr>().unwrap().contains(ip("8.8.8.8")));
        assert!(!"0.0.0.0/0".parse::<Cidr>().unwrap().contains(ip("::1")));
        for bad in [
            "10.0.0.0/33",
            "fd00::/129",
            "example.com/8",
            "",
            "10.0.0.0/x",
        ] {
            assert!(bad.parse::<Cidr>().is_err(), "{bad}");
        }
    }

    #[test]
    fn metadata_link_local_loopback_are_refused_by_default() {
        let p = AddressPolicy::default();
        for (addr, class) in [
            ("169.254.169.254", AddressRefusal::Metadata),
            ("::ffff:169.254.169.254", AddressRefusal::Metadata),
            ("fd00:ec2::254", AddressRefusal::Metadata),
            ("100.100.100.200", AddressRefusal::Metadata),
            ("169.254.10.1", AddressRefusal::LinkLocal),
            ("fe80::1", AddressRefusal::LinkLocal),
            ("127.0.0.1", AddressRefusal::Loopback),
            ("::1", AddressRefusal::Loopback),
            ("0.0.0.0", AddressRefusal::Unspecified),
            ("::", AddressRefusal::Unspecified),
            ("224.0.0.1", AddressRefusal::Multicast),
            ("255.255.255.255", AddressRefusal::Multicast),
        ] {
            assert_eq!(p.check(ip(addr)), Err(class), "{addr}");
        }
        for ok in ["10.0.0.5", "192.168.1.10", "203.0.113.7", "fd12::5"] {
            assert_eq!(p.check(ip(ok)), Ok(()), "{ok}");
        }
        assert_eq!(
            p.check_name("metadata.google.internal."),
            Err(AddressRefusal::Metadata)
        );
        assert_eq!(p.check_name("METADATA"), Err(AddressRefusal::Metadata));
        assert_eq!(p.check_name("member.example.com"), Ok(()));
    }

    #[test]
    fn ipv6_forms_that_embed_an_ipv4_address_are_judged_by_it() {
        let p = AddressPolicy::default();
        for (addr, class) in [
            // IPv4-compatible and IPv4-translated.
            ("::169.254.169.254", AddressRefusal::Metadata),
            ("::127.0.0.1", AddressRefusal::Loopback),
            ("::ffff:0:169.254.169.254", AddressRefusal::Metadata),
            // NAT64, well-known prefix and local-use prefix at /48 and /96.
            ("64:ff9b::169.254.169.254", AddressRefusal::Metadata),
            ("64:ff9b::127.0.0.1", AddressRefusal::Loopback),
            ("64:ff9b::a9fe:1", AddressRefusal::LinkLocal),
            ("64:ff9b:1:7f00:0:100::", AddressRefusal::Loopback),
            ("64:ff9b:1:a9:fe:a9fe::", AddressRefusal::Metadata),
            ("64:ff9b:1::169.254.169.254", AddressRefusal::Metadata),
            // 6to4.
            ("2002:a9fe:a9fe::1", AddressRefusal::Metadata),
            ("2002:7f00:1::", AddressRefusal::Loopback),
            // Teredo: the client address is stored inverted.
            (
                "2001:0:4136:e378:8000:63bf:80ff:fffe",
                AddressRefusal::Loopback,
            ),
            ("2001:0:a9fe:a9fe::", AddressRefusal::Metadata),
        ] {
            assert_eq!(p.check(ip(addr)), Err(class), "{addr}");
        }
        // Their public counterparts, and the addresses that only look alike.
        for ok in [
            "64:ff9b::203.0.113.7",
            "64:ff9b:1:cb00:0:7107::",
            "64:ff9b:1::203.0.113.7",
            "2002:cb00:7107::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:db8::1",
            "64:ff9b:2::1",
        ] {
            assert_eq!(p.check(ip(ok)), Ok(()), "{ok}");
        }
        assert_eq!(p.check(ip("::1")), Err(AddressRefusal::Loopback));
        assert_eq!(p.check(ip("::")), Err(AddressRefusal::Unspecified));
        // A deny list reaches the embedded address; an allow list must
        // admit both forms.
        let deny = AddressPolicy {
            allow: Vec::new(),
            deny: cidrs(&["10.96.0.0/12"]),
        };
        assert!(matches!(
            deny.check(ip("64:ff9b::10.96.0.1")),
            Err(AddressRefusal::Denied(_))
        ));
        let nat64 = AddressPolicy {
            allow: cidrs(&["64:ff9b::/96"]),
            deny: Vec::new(),
        };
        assert_eq!(
            nat64.check(ip("64:ff9b::10.1.2.3")),
            Err(AddressRefusal::NotAllowed)
        );
        let both = AddressPolicy {
            allow: cidrs(&["64:ff9b::/96", "10.0.0.0/8"]),
            deny: Vec::new(),
        };
        assert_eq!(both.check(ip("64:ff9b::10.1.2.3")), Ok(()));
        assert_eq!(
            both.check(ip("64:ff9b::169.254.169.254")),
            Err(AddressRefusal::Metadata)
        );
    }

    #[test]
    fn an_allow_list_restricts_and_lifts_only_what_it_names() {
        let p = AddressPolicy {
            allow: cidrs(&["127.0.0.0/8", "10.1.0.0/16"]),
            deny: Vec::new(),
        };
        assert_eq!(p.check(ip("127.0.0.1")), Ok(()));
        assert_eq!(p.check(ip("10.1.2.3")), Ok(()));
        assert_eq!(p.check(ip("10.2.0.1")), Err(AddressRefusal::NotAllowed));
        assert_eq!(p.check(ip("::1")), Err(AddressRefusal::Loopback));
        let everything = AddressPolicy {
            allow: cidrs(&["0.0.0.0/0", "::/0"]),
            deny: Vec::new(),
        };
        assert_eq!(everything.check(ip("8.8.8.8")), Ok(()));
        assert_eq!(
            everything.check(ip("169.254.169.254")),
            Err(AddressRefusal::Metadata),
            "a wide allow lifts no default refusal"
        );
        assert_eq!(
            everything.check(ip("127.0.0.1")),
            Err(AddressRefusal::Loopback)
        );
        let link_local = AddressPolicy {
            allow: cidrs(&["169.254.0.0/16"]),
            deny: Vec::new(),
        };
        assert_eq!(link_local.check(ip("169.254.3.4")), Ok(()));
        assert_eq!(
            link_local.check(ip("169.254.169.254")),
            Err(AddressRefusal::Metadata),
            "metadata stays refused unless allowed by its own address"
        );
    }

    #[test]
    fn a_deny_list_wins() {
        let p = AddressPolicy {
            allow: cidrs(&["10.0.0.0/8"]),
            deny: cidrs(&["10.96.0.0/12"]),
        };
        let denied = "10.96.0.0/12".parse().unwrap();
        assert_eq!(
            p.check(ip("10.96.0.1")),
            Err(AddressRefusal::Denied(denied))
        );
        assert_eq!(p.check(ip("10.0.0.1")), Ok(()));
        assert!(
            AddressRefusal::Denied(denied)
                .describe()
                .contains("10.96.0.0/12")
        );
        assert!(
            AddressRefusal::Loopback
                .describe()
                .contains("--pull-allow-cidr 127.0.0.0/8")
        );
    }

    #[test]
    fn needs_follow_the_tier_policy() {
        assert!(remediation_needs(Tier::Critical).is_empty());
        assert_eq!(remediation_needs(Tier::Standard).len(), 4);
        let nc = remediation_needs(Tier::NonCritical);
        assert!(nc.contains(&perm("create", "", "pods", "eviction")));
        assert_eq!(nc[0].to_string(), "delete pods");
        assert_eq!(nc[5].to_string(), "create pods/eviction");
        assert_eq!(nc[1].to_string(), "patch deployments.apps");
    }

    #[test]
    fn access_says_what_is_missing() {
        let denied = &remediation_needs(Tier::Standard)[..2];
        let a = remediation_access(Tier::Standard, denied);
        assert!(!a.capable);
        assert_eq!(a.reason, "AccessDenied");
        assert!(
            a.message.ends_with("delete pods, patch deployments.apps"),
            "{}",
            a.message
        );
        assert!(remediation_access(Tier::NonCritical, &[]).capable);
        assert_eq!(
            remediation_access(Tier::Critical, &[]).reason,
            "ManualByPolicy"
        );
    }
}
