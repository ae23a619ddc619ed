//! What one connection is doing ([`ConnState`]), shared by the accept
//! loop's [`super::places::Places`], the service, the body and the I/O of
//! [`super::conn`].

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::operator::rest::Slot;

/// What one connection is doing, shared by the accept loop's
/// [`super::places::Places`] (whom to shed), the service (a request came,
/// who sent it), the body (it was handed over whole) and the I/O (it was
/// flushed).
#[derive(Debug)]
pub(super) struct ConnState {
    exchange: Mutex<Exchange>,
    /// The last request was admitted by the authentication layer
    /// (`rest::authenticated`): a caller allowed what it asked for.
    trusted: AtomicBool,
    /// Requests read so far.
    requests: AtomicU32,
    /// Requests it may send.
    max_requests: u32,
    /// When it has lived long enough.
    pub(super) deadline: Instant,
    /// Told when its place goes to another client.
    pub(super) shed: Notify,
    /// The listener's: told when this connection may now be shed.
    changed: Arc<Notify>,
    /// Where it comes from.
    pub(super) peer: std::net::IpAddr,
}

#[derive(Debug, Default)]
struct Exchange {
    /// When the request being answered had been read.
    started: Option<Instant>,
    /// Its body has been handed to hyper whole.
    body_done: bool,
    /// The response slot its body holds, until the body is written.
    slot: Option<Slot>,
}

impl ConnState {
    pub(super) fn new(
        peer: std::net::IpAddr,
        deadline: Instant,
        max_requests: u32,
        changed: Arc<Notify>,
    ) -> Self {
        Self {
            peer,
            exchange: Mutex::default(),
            trusted: AtomicBool::new(false),
            requests: AtomicU32::new(0),
            max_requests: max_requests.max(1),
            deadline,
            shed: Notify::new(),
            changed,
        }
    }

    fn exchange(&self) -> std::sync::MutexGuard<'_, Exchange> {
        self.exchange.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts a request; true when it is the connection's last (its
    /// request count or its age ran out).
    pub(super) fn request_started(&self) -> bool {
        *self.exchange() = Exchange {
            started: Some(Instant::now()),
            ..Exchange::default()
        };
        let n = self
            .requests
            .fetch_add(1, Ordering::Relaxed)
            .saturating_add(1);
        n >= self.max_requests || Instant::now() >= self.deadline
    }

    pub(super) fn response_ready(&self, slot: Option<Slot>) {
        self.exchange().slot = slot;
    }

    pub(super) fn body_done(&self) {
        self.exchange().body_done = true;
    }

    /// Everything written so far reached the socket: if that included the
    /// whole body, the response is out and its slot is freed.
    pub(super) fn flushed(&self) {
        let mut x = self.exchange();
        if x.body_done {
            *x = Exchange::default();
            drop(x);
            self.changed.notify_waiters();
        }
    }

    pub(super) fn started(&self) -> Option<Instant> {
        self.exchange().started
    }

    /// Answering a request (from its head read to its last byte flushed).
    pub(super) fn busy(&self) -> bool {
        self.started().is_some()
    }

    /// Its last request came from a caller the authentication layer admitted.
    pub(super) fn trusted(&self) -> bool {
        self.trusted.load(Ordering::Relaxed)
    }

    pub(super) fn set_trusted(&self, trusted: bool) {
        if self.trusted.swap(trusted, Ordering::Relaxed) && !trusted {
            self.changed.notify_waiters();
        }
    }
}

#[cfg(test)]
impl ConnState {
    /// As if a request head had been read.
    pub(super) fn request_started_for_test(&self) -> bool {
        self.request_started()
    }

    /// As if the authentication layer had admitted its caller.
    pub(super) fn trust_for_test(&self) {
        self.set_trusted(true);
    }
}
