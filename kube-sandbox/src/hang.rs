//! A hung API server, as a client meets one when the server's process is
//! stopped or the network path to it drops packets: connections, open or
//! new, are neither refused nor closed, they just stop moving — no
//! answer, no watch event, no bookmark — until the server is let go
//! ([`crate::Controls::set_hung`]). An outage ([`crate::Controls::outage_for`])
//! refuses and closes instead, which a client notices at once.
//!
//! Every connection's socket is wrapped in [`Hanging`], which neither reads
//! nor writes while the server hangs (the TLS handshake of a new connection
//! included) and wakes whoever waits on it when the server is let go.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Whether the server hangs, and the connections waiting for it not to.
#[derive(Debug, Default)]
pub(crate) struct Hang {
    hung: AtomicBool,
    waiting: Mutex<Vec<Waker>>,
}

impl Hang {
    /// Hangs the server (`true`) or lets it go (`false`: every waiting
    /// connection moves again).
    pub(crate) fn set(&self, hung: bool) {
        self.hung.store(hung, Ordering::SeqCst);
        if !hung {
            let waiting = std::mem::take(&mut *self.waiting.lock().unwrap());
            for waker in waiting {
                waker.wake();
            }
        }
    }

    /// Ready unless the server hangs; then woken when it is let go.
    fn poll_free(&self, cx: &mut Context<'_>) -> Poll<()> {
        if !self.hung.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        self.waiting.lock().unwrap().push(cx.waker().clone());
        // Let go between the first look and the registration: go on.
        if self.hung.load(Ordering::SeqCst) {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}

/// A connection's socket that stands still while the server hangs.
pub(crate) struct Hanging<S> {
    inner: S,
    hang: Arc<Hang>,
}

impl<S> Hanging<S> {
    pub(crate) fn new(inner: S, hang: Arc<Hang>) -> Self {
        Self { inner, hang }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Hanging<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        std::task::ready!(self.hang.poll_free(cx));
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Hanging<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        std::task::ready!(self.hang.poll_free(cx));
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        std::task::ready!(self.hang.poll_free(cx));
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        std::task::ready!(self.hang.poll_free(cx));
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    /// While hung, a connection passes nothing either way and is not
    /// closed; let go, what waited goes through.
    #[tokio::test]
    async fn a_hung_connection_passes_nothing_until_let_go() {
        let hang = Arc::new(Hang::default());
        let (near, far) = tokio::io::duplex(64);
        let mut near = Hanging::new(near, hang.clone());
        let mut far = far;
        hang.set(true);
        far.write_all(b"ping").await.unwrap();
        let mut buf = [0u8; 4];
        let read =
            tokio::time::timeout(Duration::from_millis(100), near.read_exact(&mut buf)).await;
        assert!(read.is_err(), "read while hung: {read:?}");
        let reader = tokio::spawn(async move {
            let mut buf = [0u8; 4];
            near.read_exact(&mut buf).await.map(|_| buf)
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!reader.is_finished());
        hang.set(false);
        let got = tokio::time::timeout(Duration::from_secs(5), reader).await;
        assert_eq!(&got.unwrap().unwrap().unwrap(), b"ping");
    }
}
