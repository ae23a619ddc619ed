//! `/healthz` and `/readyz` for the operator's probes.
//!
//! A deliberately tiny HTTP/1 server on hyper (already in the dependency
//! tree through kube): liveness answers while the process runs. Readiness:
//! the hub once it has started (CRDs found, clients built); the edge while
//! it is reporting (its last report was accepted by the hub).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;

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

fn answer(req: &Request<Incoming>, ready: &Readiness) -> Response<Full<&'static [u8]>> {
    let (status, body): (StatusCode, &'static [u8]) = match (req.method(), req.uri().path()) {
        (&Method::GET | &Method::HEAD, "/healthz" | "/livez") => (StatusCode::OK, b"ok\n"),
        (&Method::GET | &Method::HEAD, "/readyz") if ready.get() => (StatusCode::OK, b"ok\n"),
        (&Method::GET | &Method::HEAD, "/readyz") => {
            (StatusCode::SERVICE_UNAVAILABLE, b"not ready\n")
        }
        (&Method::GET | &Method::HEAD, _) => (StatusCode::NOT_FOUND, b"not found\n"),
        _ => (StatusCode::METHOD_NOT_ALLOWED, b"method not allowed\n"),
    };
    let mut resp = Response::new(Full::new(body));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

/// Binds the probe server; the caller learns the real port (for `:0`).
pub async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(addr).await
}

/// Serves probes on `listener` until `shutdown` turns true.
pub async fn serve(listener: TcpListener, ready: Readiness, mut shutdown: watch::Receiver<bool>) {
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = shutdown.wait_for(|s| *s) => return,
        };
        let Ok((stream, _)) = accepted else { continue };
        let ready = ready.clone();
        tokio::spawn(async move {
            let svc = service_fn(move |req: Request<Incoming>| {
                let resp = answer(&req, &ready);
                async move { Ok::<_, std::convert::Infallible>(resp) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}
