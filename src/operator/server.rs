//! The operator's one HTTP stack (axum): `/healthz`, `/livez` and `/readyz`
//! on the plain probe address, and over TLS on the secure address the
//! probes again, `/metrics` and (hub) the REST API of [`super::api`].
//!
//! The certificate comes from `--tls-cert-file`/`--tls-private-key-file`
//! (e.g. a mounted `kubernetes.io/tls` Secret), or is generated at start and
//! self-signed when none is given (logged as such).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

use super::api::Auth;
use super::metrics::{CONTENT_TYPE, Metrics};

/// Shared readiness flag, flipped by the role once it is serving.
#[derive(Clone, Debug, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    /// Marks the operator ready (or not).
    pub fn set(&self, ready: bool) {
        self.0.store(ready, Ordering::Relaxed);
    }

    /// Whether the operator is ready.
    pub fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A listener could not bind.
    #[error("binding {addr}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// Only one of the certificate and the key was given.
    #[error(
        "--tls-cert-file and --tls-private-key-file go together: give both, or neither for a self-signed certificate"
    )]
    HalfTls,
    /// The certificate or key file could not be read.
    #[error("reading the TLS {what} from {path}: expected PEM")]
    Pem {
        what: &'static str,
        path: String,
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    /// Generating a self-signed certificate failed.
    #[error("generating a self-signed certificate")]
    Generate(#[from] rcgen::Error),
    /// The certificate and key do not make a TLS configuration.
    #[error("the TLS certificate and key do not fit together")]
    Rustls(#[from] rustls::Error),
}

/// The TLS configuration: the given certificate, or a fresh self-signed
/// one. The flag says which.
pub fn tls_config(
    cert: Option<&Path>,
    key: Option<&Path>,
) -> Result<(Arc<rustls::ServerConfig>, bool), ServerError> {
    let pem = |what, path: &Path, source| ServerError::Pem {
        what,
        path: path.display().to_string(),
        source,
    };
    let (chain, key, self_signed) = match (cert, key) {
        (Some(c), Some(k)) => {
            let chain = CertificateDer::pem_file_iter(c)
                .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                .map_err(|e| pem("certificate", c, e))?;
            let key = PrivateKeyDer::from_pem_file(k).map_err(|e| pem("private key", k, e))?;
            (chain, key, false)
        }
        (None, None) => {
            let names = vec![
                "localhost".to_owned(),
                "127.0.0.1".to_owned(),
                "fleet-operator".to_owned(),
            ];
            let generated = rcgen::generate_simple_self_signed(names)?;
            let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
                generated.signing_key.serialize_der(),
            ));
            (vec![generated.cert.der().clone()], key, true)
        }
        _ => return Err(ServerError::HalfTls),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok((Arc::new(config), self_signed))
}

fn text(status: StatusCode, body: &'static str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

async fn healthz() -> Response {
    text(StatusCode::OK, "ok\n")
}

async fn readyz(State(ready): State<Readiness>) -> Response {
    if ready.get() {
        text(StatusCode::OK, "ok\n")
    } else {
        text(StatusCode::SERVICE_UNAVAILABLE, "not ready\n")
    }
}

async fn not_found() -> Response {
    text(StatusCode::NOT_FOUND, "not found\n")
}

/// `/healthz`, `/livez` and `/readyz`, always open.
pub fn probe_routes(ready: Readiness) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/livez", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(ready)
        .fallback(not_found)
}

#[derive(Clone, Debug)]
struct MetricsState {
    metrics: Arc<Metrics>,
    auth: Option<Arc<Auth>>,
}

async fn metrics(State(s): State<MetricsState>, headers: HeaderMap) -> Response {
    if let Some(auth) = &s.auth
        && let Err(r) = auth.check(&headers).await
    {
        return r.into_response();
    }
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], s.metrics.encode()).into_response()
}

/// `/metrics` (behind `auth` when given) on top of `base`.
pub fn with_metrics(base: Router, metrics: Arc<Metrics>, auth: Option<Arc<Auth>>) -> Router {
    base.merge(
        Router::new()
            .route("/metrics", get(self::metrics))
            .with_state(MetricsState { metrics, auth }),
    )
}

/// Binds a listener; the caller learns the real port (for `:0`).
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, ServerError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ServerError::Bind { addr, source })
}

/// Serves `router` on `listener` (over TLS when `tls` is given) until
/// `shutdown` turns true.
pub async fn serve(
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    router: Router,
    mut shutdown: watch::Receiver<bool>,
) {
    let acceptor = tls.map(TlsAcceptor::from);
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = shutdown.wait_for(|s| *s) => return,
        };
        let Ok((stream, _)) = accepted else { continue };
        let service = TowerToHyperService::new(router.clone());
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let http = hyper::server::conn::http1::Builder::new();
            let _ = match acceptor {
                Some(a) => match a.accept(stream).await {
                    Ok(tls) => http.serve_connection(TokioIo::new(tls), service).await,
                    Err(_) => return,
                },
                None => http.serve_connection(TokioIo::new(stream), service).await,
            };
        });
    }
}
