//! The hub's serving certificate: what the operator presents on its HTTPS
//! port (REST API, `/metrics`) behind Service `fleet-operator-hub`, so
//! that whoever sends it a token (Prometheus, an administrator) can verify
//! whom it talks to.
//!
//! It lives in Secret `fleet-system/fleet-operator-hub-tls` (`tls.crt`,
//! `tls.key`, and `ca.crt`, the CA a client verifies it with), made in one
//! of three ways (`kubectl fleet install`):
//!
//! - by default, `install --apply` generates a CA and a certificate for
//!   the Service's DNS names ([`generate`]); the CA's key is used once and
//!   dropped, so nothing can sign another certificate with it. A re-run
//!   keeps the Secret while it verifies ([`check`]) and is valid for
//!   [`RENEW_BEFORE_DAYS`] more days, and replaces it otherwise;
//! - `--tls-secret NAME`: a Secret the user provides (checked the same way
//!   before anything is applied);
//! - `--with-cert-manager`: cert-manager makes and renews it
//!   ([`cert_manager_manifests`]).
//!
//! Pure: generation and checks take `now`; reading and applying the Secret
//! is `install`'s job through [`crate::k8s`].

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use jiff::{SignedDuration, Timestamp};
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use rustls::client::danger::ServerCertVerifier as _;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use serde_json::{Value, json};

use crate::k8s::NAMESPACE;

/// The Secret holding the hub's serving certificate (unless `--tls-secret`
/// names another).
pub const SERVING_SECRET: &str = "fleet-operator-hub-tls";
/// The Secret cert-manager keeps its CA in (`--with-cert-manager`).
pub const CERT_MANAGER_CA_SECRET: &str = "fleet-operator-ca";
/// Key of the certificate (chain) in the Secret.
pub const TLS_CRT: &str = "tls.crt";
/// Key of the private key in the Secret.
pub const TLS_KEY: &str = "tls.key";
/// Key of the CA certificate a client verifies the server with.
pub const CA_CRT: &str = "ca.crt";
/// Where the operator's pod mounts the Secret.
pub const TLS_MOUNT: &str = "/etc/fleet-tls";
/// Lifetime of a generated certificate.
pub const VALIDITY_DAYS: i64 = 365;
/// A certificate with fewer days left than this is replaced on the next
/// `install --apply` (and cert-manager renews this long before expiry).
pub const RENEW_BEFORE_DAYS: i64 = 30;

const DAY: SignedDuration = SignedDuration::from_hours(24);

/// The DNS names of the hub's Service `service` in `fleet-system`, as
/// clients inside the cluster may spell it.
pub fn service_dns_names(service: &str) -> Vec<String> {
    vec![
        service.to_owned(),
        format!("{service}.{NAMESPACE}"),
        format!("{service}.{NAMESPACE}.svc"),
        format!("{service}.{NAMESPACE}.svc.cluster.local"),
    ]
}

/// The name a client verifies (the ServiceMonitor's `serverName`):
/// `SERVICE.fleet-system.svc`, which holds whatever the cluster's domain.
pub fn server_name(service: &str) -> String {
    format!("{service}.{NAMESPACE}.svc")
}

/// A generated CA and the serving certificate it signed, as PEM.
pub struct Generated {
    /// The CA certificate (`ca.crt`).
    pub ca_pem: String,
    /// The serving certificate (`tls.crt`).
    pub cert_pem: String,
    /// The serving certificate's private key (`tls.key`): a secret.
    pub key_pem: String,
}

impl std::fmt::Debug for Generated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generated").finish_non_exhaustive()
    }
}

/// The UTC calendar day of `t` (year, month, day), as rcgen takes dates.
fn ymd(t: Timestamp) -> (i32, u8, u8) {
    let date = t.to_zoned(jiff::tz::TimeZone::UTC).date();
    (
        i32::from(date.year()),
        date.month().unsigned_abs(),
        date.day().unsigned_abs(),
    )
}

/// A new CA and a certificate for the Service `service`'s DNS names
/// signed by it, valid from the day before `now` (clock skew between
/// this machine and the cluster) for [`VALIDITY_DAYS`]. The CA's private
/// key is dropped on return.
pub fn generate(service: &str, now: Timestamp) -> Result<Generated, rcgen::Error> {
    let (y, m, d) = ymd(now - DAY);
    let not_before = rcgen::date_time_ymd(y, m, d);
    let (y, m, d) = ymd(now + DAY * VALIDITY_DAYS as i32);
    let not_after = rcgen::date_time_ymd(y, m, d);

    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.distinguished_name = DistinguishedName::new();
    ca.distinguished_name
        .push(DnType::CommonName, format!("{service} CA (kubectl-fleet)"));
    // It signs exactly one certificate, directly.
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    ca.not_before = not_before;
    ca.not_after = not_after;
    let ca_key = KeyPair::generate()?;
    let ca_cert = ca.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca, ca_key);

    let mut leaf = CertificateParams::new(service_dns_names(service))?;
    leaf.distinguished_name = DistinguishedName::new();
    leaf.distinguished_name
        .push(DnType::CommonName, server_name(service));
    leaf.is_ca = IsCa::ExplicitNoCa;
    leaf.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    leaf.not_before = not_before;
    leaf.not_after = not_after;
    let key = KeyPair::generate()?;
    let cert = leaf.signed_by(&key, &issuer)?;
    Ok(Generated {
        ca_pem: ca_cert.pem(),
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// Why a serving certificate Secret cannot be used (as found, or as given
/// by `--tls-secret`). Never quotes the Secret's contents.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unusable {
    /// A key is missing or empty.
    #[error("it has no {0}")]
    Missing(&'static str),
    /// A key does not hold what it should, in PEM.
    #[error("its {0} is not PEM")]
    NotPem(&'static str),
    /// The private key is not the certificate's.
    #[error("its tls.key does not belong to its tls.crt ({0})")]
    KeyMismatch(String),
    /// The certificate does not verify with `ca.crt` for the Service name.
    #[error("its tls.crt does not verify against its ca.crt for {name} ({reason})")]
    NotVerified {
        /// The name checked.
        name: String,
        /// rustls's account of why.
        reason: String,
    },
    /// It verifies now, but not [`RENEW_BEFORE_DAYS`] from now.
    #[error("its tls.crt expires within {RENEW_BEFORE_DAYS} days")]
    ExpiresSoon,
}

fn unix_time(t: Timestamp) -> UnixTime {
    UnixTime::since_unix_epoch(std::time::Duration::from_secs(
        t.as_second().max(0).unsigned_abs(),
    ))
}

fn present<'a>(
    data: &'a BTreeMap<String, Vec<u8>>,
    key: &'static str,
) -> Result<&'a [u8], Unusable> {
    data.get(key)
        .map(Vec::as_slice)
        .filter(|v| !v.is_empty())
        .ok_or(Unusable::Missing(key))
}

/// Whether the Secret's `data` is a serving certificate the operator can
/// use and a client can verify: `tls.crt` and its `tls.key`, and — when
/// `verify_as` names the Service — a `ca.crt` that `tls.crt` verifies
/// against for that name, now and [`RENEW_BEFORE_DAYS`] from `now`.
pub fn check(
    data: &BTreeMap<String, Vec<u8>>,
    verify_as: Option<&str>,
    now: Timestamp,
) -> Result<(), Unusable> {
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(present(data, TLS_CRT)?)
            .collect::<Result<_, _>>()
            .map_err(|_| Unusable::NotPem(TLS_CRT))?;
    if chain.is_empty() {
        return Err(Unusable::NotPem(TLS_CRT));
    }
    let key = PrivateKeyDer::from_pem_slice(present(data, TLS_KEY)?)
        .map_err(|_| Unusable::NotPem(TLS_KEY))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::sign::CertifiedKey::from_der(chain.clone(), key, &provider)
        .map_err(|e| Unusable::KeyMismatch(e.to_string()))?;
    let Some(name) = verify_as else {
        return Ok(());
    };
    let mut roots = rustls::RootCertStore::empty();
    for ca in CertificateDer::pem_slice_iter(present(data, CA_CRT)?) {
        let ca = ca.map_err(|_| Unusable::NotPem(CA_CRT))?;
        roots.add(ca).map_err(|_| Unusable::NotPem(CA_CRT))?;
    }
    if roots.is_empty() {
        return Err(Unusable::NotPem(CA_CRT));
    }
    let not_verified = |reason: String| Unusable::NotVerified {
        name: name.to_owned(),
        reason,
    };
    let verifier =
        rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| not_verified(e.to_string()))?;
    let server = ServerName::try_from(name.to_owned()).map_err(|e| not_verified(e.to_string()))?;
    let verify = |at: Timestamp| {
        verifier.verify_server_cert(&chain[0], &chain[1..], &server, &[], unix_time(at))
    };
    verify(now).map_err(|e| not_verified(e.to_string()))?;
    verify(now + DAY * RENEW_BEFORE_DAYS as i32).map_err(|_| Unusable::ExpiresSoon)?;
    Ok(())
}

/// A short digest of the certificate `install` deploys (SHA-256 of
/// `tls.crt`, 16 hex digits): the Deployment's pod template carries it,
/// so a replaced certificate rolls the operator's pods, which read it at
/// start.
pub fn digest(cert_pem: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(cert_pem)
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The Secret holding `generated`, type `kubernetes.io/tls`.
pub fn secret_manifest(generated: &Generated, labels: Value) -> Value {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": { "name": SERVING_SECRET, "namespace": NAMESPACE, "labels": labels },
        "type": "kubernetes.io/tls",
        "data": {
            TLS_CRT: b64(&generated.cert_pem),
            TLS_KEY: b64(&generated.key_pem),
            CA_CRT: b64(&generated.ca_pem),
        },
    })
}

/// `--with-cert-manager`: a self-signed Issuer that makes a CA
/// (Certificate `fleet-operator-ca`, kept in Secret
/// [`CERT_MANAGER_CA_SECRET`]), an Issuer of that CA, and the serving
/// Certificate for the Service `service`, written to [`SERVING_SECRET`]
/// with the CA as `ca.crt`. cert-manager renews it
/// [`RENEW_BEFORE_DAYS`] before it expires.
pub fn cert_manager_manifests(service: &str, labels: Value) -> Vec<Value> {
    const API: &str = "cert-manager.io/v1";
    let self_signed = "fleet-operator-selfsigned";
    let ca = "fleet-operator-ca";
    let meta = |name: &str| json!({ "name": name, "namespace": NAMESPACE, "labels": labels });
    let issuer_ref =
        |name: &str| json!({ "name": name, "kind": "Issuer", "group": "cert-manager.io" });
    let key = json!({ "algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always" });
    let hours = |days: i64| format!("{}h", days * 24);
    vec![
        json!({
            "apiVersion": API, "kind": "Issuer", "metadata": meta(self_signed),
            "spec": { "selfSigned": {} },
        }),
        json!({
            "apiVersion": API, "kind": "Certificate", "metadata": meta(ca),
            "spec": {
                "isCA": true,
                "commonName": format!("{service} CA (kubectl-fleet)"),
                "secretName": CERT_MANAGER_CA_SECRET,
                "duration": hours(10 * 365),
                "privateKey": key,
                "issuerRef": issuer_ref(self_signed),
            },
        }),
        json!({
            "apiVersion": API, "kind": "Issuer", "metadata": meta(ca),
            "spec": { "ca": { "secretName": CERT_MANAGER_CA_SECRET } },
        }),
        json!({
            "apiVersion": API, "kind": "Certificate", "metadata": meta(service),
            "spec": {
                "secretName": SERVING_SECRET,
                "commonName": server_name(service),
                "dnsNames": service_dns_names(service),
                "duration": hours(VALIDITY_DAYS),
                "renewBefore": hours(RENEW_BEFORE_DAYS),
                "usages": ["server auth", "digital signature"],
                "privateKey": key,
                "issuerRef": issuer_ref(ca),
            },
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERVICE: &str = "fleet-operator-hub";

    fn now() -> Timestamp {
        "2026-03-01T12:00:00Z".parse().unwrap()
    }

    fn data(g: &Generated) -> BTreeMap<String, Vec<u8>> {
        BTreeMap::from([
            (TLS_CRT.to_owned(), g.cert_pem.clone().into_bytes()),
            (TLS_KEY.to_owned(), g.key_pem.clone().into_bytes()),
            (CA_CRT.to_owned(), g.ca_pem.clone().into_bytes()),
        ])
    }

    #[test]
    fn a_generated_certificate_verifies_for_every_service_name_and_nothing_else() {
        let g = generate(SERVICE, now()).unwrap();
        let d = data(&g);
        for name in service_dns_names(SERVICE) {
            assert_eq!(check(&d, Some(&name), now()), Ok(()), "{name}");
        }
        assert_eq!(server_name(SERVICE), "fleet-operator-hub.fleet-system.svc");
        for other in [
            "localhost",
            "fleet-operator-hub.default.svc",
            "evil.example",
        ] {
            assert!(
                matches!(
                    check(&d, Some(other), now()),
                    Err(Unusable::NotVerified { .. })
                ),
                "{other}"
            );
        }
        // Without a name to verify, only the pair is checked.
        assert_eq!(check(&d, None, now()), Ok(()));
    }

    #[test]
    fn a_certificate_is_replaced_before_it_expires() {
        let g = generate(SERVICE, now()).unwrap();
        let d = data(&g);
        let name = server_name(SERVICE);
        let late = now() + DAY * (VALIDITY_DAYS - RENEW_BEFORE_DAYS + 1) as i32;
        assert_eq!(check(&d, Some(&name), late), Err(Unusable::ExpiresSoon));
        let expired = now() + DAY * (VALIDITY_DAYS + 2) as i32;
        assert!(matches!(
            check(&d, Some(&name), expired),
            Err(Unusable::NotVerified { .. })
        ));
        // A cluster clock a few hours behind this machine's still accepts it.
        let behind = now() - SignedDuration::from_hours(6);
        assert_eq!(check(&d, Some(&name), behind), Ok(()));
    }

    #[test]
    fn broken_secrets_are_named_without_their_contents() {
        let g = generate(SERVICE, now()).unwrap();
        let other = generate(SERVICE, now()).unwrap();
        let name = server_name(SERVICE);
        let mut d = data(&g);
        d.remove(CA_CRT);
        assert_eq!(
            check(&d, Some(&name), now()),
            Err(Unusable::Missing("ca.crt"))
        );
        let mut d = data(&g);
        d.insert(TLS_KEY.into(), other.key_pem.clone().into_bytes());
        let err = check(&d, None, now()).unwrap_err();
        assert!(matches!(err, Unusable::KeyMismatch(_)), "{err}");
        assert!(!err.to_string().contains("PRIVATE KEY"), "{err}");
        // Signed by another CA.
        let mut d = data(&g);
        d.insert(CA_CRT.into(), other.ca_pem.clone().into_bytes());
        assert!(matches!(
            check(&d, Some(&name), now()),
            Err(Unusable::NotVerified { .. })
        ));
        let mut d = data(&g);
        d.insert(TLS_CRT.into(), b"not a certificate".to_vec());
        assert_eq!(check(&d, None, now()), Err(Unusable::NotPem("tls.crt")));
    }

    #[test]
    fn each_generation_is_a_new_ca() {
        let a = generate(SERVICE, now()).unwrap();
        let b = generate(SERVICE, now()).unwrap();
        assert_ne!(a.ca_pem, b.ca_pem);
        assert_ne!(digest(a.cert_pem.as_bytes()), digest(b.cert_pem.as_bytes()));
        assert_eq!(digest(a.cert_pem.as_bytes()).len(), 16);
        assert!(!format!("{a:?}").contains("PRIVATE"));
    }

    #[test]
    fn cert_manager_writes_the_same_secret_for_the_same_names() {
        let docs = cert_manager_manifests(SERVICE, json!({}));
        let kinds: Vec<String> = docs
            .iter()
            .map(|d| {
                format!(
                    "{}/{}",
                    d["kind"].as_str().unwrap(),
                    d["metadata"]["name"].as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "Issuer/fleet-operator-selfsigned",
                "Certificate/fleet-operator-ca",
                "Issuer/fleet-operator-ca",
                "Certificate/fleet-operator-hub",
            ]
        );
        let serving = &docs[3]["spec"];
        assert_eq!(serving["secretName"], SERVING_SECRET);
        assert_eq!(serving["dnsNames"], json!(service_dns_names(SERVICE)));
        assert_eq!(serving["issuerRef"]["name"], docs[2]["metadata"]["name"]);
        assert_eq!(
            docs[2]["spec"]["ca"]["secretName"],
            docs[1]["spec"]["secretName"]
        );
    }
}
