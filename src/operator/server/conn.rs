//! One connection of [`super::serve`]: the TLS handshake within its
//! timeout, then HTTP/1.1 with hyper's header-read timer and buffer cap,
//! writes watched by [`Guarded`], and the end of its life — its age, its
//! request count, or its place given to another client ([`super::places`]).

use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::http::{HeaderValue, Request, header};
use axum::response::Response;
use hyper::body::Incoming as IncomingBody;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};
use tokio_rustls::TlsAcceptor;

use super::ServeLimits;
use super::places::Place;
use super::state::ConnState;
use crate::operator::rest::{Authenticated, ClientAddr, Slot};

/// One connection, holding `place` until it ends: the TLS handshake
/// within its timeout, then HTTP/1.1 until the client goes, a timeout
/// cuts it off, its age or request count runs out, or its place is given
/// to another client.
pub(super) async fn connection<I>(
    io: I,
    acceptor: Option<TlsAcceptor>,
    router: Router,
    limits: Arc<ServeLimits>,
    place: Place,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let state = place.state().clone();
    let io = Guarded::new(io, state.clone(), limits.write_timeout);
    let service = Tracked {
        inner: TowerToHyperService::new(router),
        state: state.clone(),
    };
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(limits.max_header_bytes)
        .max_header_size(limits.max_header_bytes);
    match acceptor {
        Some(a) => {
            let handshake = tokio::time::timeout(limits.tls_handshake_timeout, a.accept(io));
            let tls = tokio::select! {
                done = handshake => match done {
                    Ok(Ok(tls)) => tls,
                    _ => return,
                },
                () = state.shed.notified() => return,
            };
            drive(http.serve_connection(TokioIo::new(tls), service), &state).await;
        }
        None => drive(http.serve_connection(TokioIo::new(io), service), &state).await,
    }
    drop(place);
}

/// Serves `conn` until it ends, or until its age runs out or its place is
/// taken: then an idle connection is closed at once, and one answering a
/// request after its response.
async fn drive<I, S, B>(conn: hyper::server::conn::http1::Connection<I, S>, state: &ConnState)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
    S: hyper::service::HttpService<IncomingBody, ResBody = B>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: HttpBody + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        () = tokio::time::sleep_until(state.deadline) => {}
        () = state.shed.notified() => {}
    }
    if state.busy() {
        // Answering: finish this response, then close.
        conn.as_mut().graceful_shutdown();
        let _ = conn.await;
    }
}

/// The router as hyper calls it, telling the connection's [`ConnState`]
/// when a request arrives, handing it the response's slot and whether the
/// caller was admitted, and closing the connection after its last request.
struct Tracked<S> {
    inner: S,
    state: Arc<ConnState>,
}

impl<S> hyper::service::Service<Request<IncomingBody>> for Tracked<S>
where
    S: hyper::service::Service<
            Request<IncomingBody>,
            Response = Response<Body>,
            Error = Infallible,
        >,
    S::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn call(&self, mut req: Request<IncomingBody>) -> Self::Future {
        let last = self.state.request_started();
        req.extensions_mut().insert(ClientAddr(self.state.peer));
        let answer = self.inner.call(req);
        let state = self.state.clone();
        Box::pin(async move {
            let mut resp = answer.await?;
            if let Some(Authenticated(admitted)) = resp.extensions_mut().remove::<Authenticated>() {
                state.set_trusted(admitted);
            }
            if last {
                // hyper closes the connection once this response is out.
                resp.headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            state.response_ready(resp.extensions_mut().remove::<Slot>());
            Ok(resp.map(|body| {
                Body::new(TrackedBody {
                    body,
                    state: Some(state),
                })
            }))
        })
    }
}

/// A response body that tells its connection when hyper has all of it
/// (at its end, or when dropped).
struct TrackedBody {
    body: Body,
    state: Option<Arc<ConnState>>,
}

impl TrackedBody {
    fn done(&mut self) {
        if let Some(state) = self.state.take() {
            state.body_done();
        }
    }
}

impl Drop for TrackedBody {
    fn drop(&mut self) {
        self.done();
    }
}

impl HttpBody for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) {
            this.done();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A connection's socket with a write deadline: a write that cannot go on
/// fails once the response has taken the write timeout since its request
/// was read (or, between responses, since the write first blocked). A
/// client that stops reading, or reads a trickle, cannot keep a response
/// and its buffers alive.
struct Guarded<T> {
    io: T,
    state: Arc<ConnState>,
    write_timeout: Duration,
    /// When the pending write first could not go on.
    blocked_since: Option<Instant>,
    /// Made at the first blocked write only: most connections never need it.
    timer: Option<Pin<Box<Sleep>>>,
}

impl<T> Guarded<T> {
    fn new(io: T, state: Arc<ConnState>, write_timeout: Duration) -> Self {
        Self {
            io,
            state,
            write_timeout,
            blocked_since: None,
            timer: None,
        }
    }

    fn watch<R>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        if polled.is_ready() {
            self.blocked_since = None;
            return polled;
        }
        let blocked = *self.blocked_since.get_or_insert_with(Instant::now);
        let since = self.state.started().map_or(blocked, |s| s.min(blocked));
        let deadline = since + self.write_timeout;
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if timer.deadline() != deadline {
            timer.as_mut().reset(deadline);
        }
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client did not take the response within the write timeout",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Guarded<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Guarded<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write(cx, buf);
        this.watch(cx, polled)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.watch(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_flush(cx);
        if let Poll::Ready(Ok(())) = polled {
            this.state.flushed();
        }
        this.watch(cx, polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_shutdown(cx);
        this.watch(cx, polled)
    }
}
