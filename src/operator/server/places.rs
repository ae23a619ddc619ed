//! The places of one listener (docs/reliability.md, "Who can reach the
//! operator's HTTP servers"): who holds them, so that no client address
//! holds more than its share, and a newcomer finds a place while strangers
//! flood.
//!
//! - A client address ("peer") holds at most `max_connections_per_peer`
//!   places; its next connection is closed at once, before any TLS
//!   handshake (the cheapest answer to a flood).
//! - At the listener's cap a newcomer takes the place of a connection that
//!   may be shed, from the peer holding the most places (the oldest of
//!   them) — if the newcomer's own peer holds none, or at least two fewer
//!   (so the swap leaves the two fairer, and balanced flooders do not
//!   shed each other in turn, each costing a TLS handshake); otherwise the
//!   newcomer is closed at once. The fewer places a peer holds, the later
//!   it is touched, so a kubelet or a Prometheus with one connection keeps
//!   being answered while other addresses flood. When no connection may
//!   be shed the newcomer waits (and the next ones wait in the kernel's
//!   queue).
//! - A connection may be shed while it answers nothing (TLS handshake,
//!   waiting for a request head, idle keep-alive) and its last request
//!   was not admitted by the authentication layer: a caller allowed to
//!   read `/metrics` or the REST API is never shed for a stranger.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::ServeLimits;
use super::state::ConnState;

/// The places of one listener.
#[derive(Debug)]
pub(super) struct Places {
    table: Mutex<Table>,
    /// Told when a place frees or a connection may now be shed.
    changed: Arc<Notify>,
    limits: Limits,
}

#[derive(Debug, Clone, Copy)]
struct Limits {
    max: usize,
    per_peer: usize,
    max_age: std::time::Duration,
    max_requests: u32,
}

#[derive(Debug, Default)]
struct Table {
    next_id: u64,
    /// By id: ids grow with each accepted connection, so oldest first.
    held: BTreeMap<u64, Held>,
    per_peer: HashMap<IpAddr, usize>,
}

#[derive(Debug)]
struct Held {
    peer: IpAddr,
    state: Arc<ConnState>,
}

impl Held {
    fn sheddable(&self) -> bool {
        !self.state.busy() && !self.state.trusted()
    }
}

/// What became of a newcomer.
#[derive(Debug)]
pub(super) enum Admission {
    /// It has a place, perhaps one whose connection is being shed for it
    /// (`true`).
    Placed(Place, bool),
    /// Closed at once: its address holds its share.
    Refused(Refusal),
    /// Every place is held and none may be shed: wait for [`Places::changed`].
    Full,
}

/// Why a newcomer was closed at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Its address holds `max_connections_per_peer` places.
    PeerLimit,
    /// Every place is held, and its address holds nearly as many as the
    /// one holding the most that may be shed.
    FairShare,
}

/// A connection's place, freed when it is dropped.
#[derive(Debug)]
pub(super) struct Place {
    places: Arc<Places>,
    id: u64,
    state: Arc<ConnState>,
}

impl Place {
    /// What the connection in this place is doing.
    pub(super) fn state(&self) -> &Arc<ConnState> {
        &self.state
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut t = self.places.table();
        if t.held.contains_key(&self.id) {
            t.release(self.id);
        }
        drop(t);
        self.places.changed.notify_waiters();
    }
}

impl Table {
    /// Frees the place of `id` (held).
    fn release(&mut self, id: u64) -> Option<Held> {
        let held = self.held.remove(&id)?;
        if let Some(n) = self.per_peer.get_mut(&held.peer) {
            *n -= 1;
            if *n == 0 {
                self.per_peer.remove(&held.peer);
            }
        }
        Some(held)
    }

    fn count(&self, peer: &IpAddr) -> usize {
        self.per_peer.get(peer).copied().unwrap_or(0)
    }

    /// The connection to shed for a newcomer at the cap: one that may be
    /// shed, of the peer holding the most places, its oldest; and how many
    /// places that peer holds.
    fn fairest_victim(&self) -> Option<(u64, usize)> {
        let mut best: Option<(u64, usize)> = None;
        for (id, h) in &self.held {
            let n = self.count(&h.peer);
            // Oldest first: a later one of the same count does not win.
            if best.is_none_or(|(_, bn)| n > bn) && h.sheddable() {
                best = Some((*id, n));
            }
        }
        best
    }

    fn shed(&mut self, id: u64) {
        if let Some(h) = self.release(id) {
            h.state.shed.notify_one();
        }
    }
}

impl Places {
    /// Empty places for a listener with `limits`.
    pub(super) fn new(limits: &ServeLimits) -> Arc<Self> {
        Arc::new(Self {
            table: Mutex::default(),
            changed: Arc::new(Notify::new()),
            limits: Limits {
                max: limits.max_connections.max(1),
                per_peer: limits.max_connections_per_peer.max(1),
                max_age: limits.max_connection_age,
                max_requests: limits.max_requests_per_connection,
            },
        })
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Told when a place frees, or a connection may now be shed.
    pub(super) fn changed(&self) -> &Notify {
        &self.changed
    }

    /// Places held.
    pub(super) fn held(&self) -> usize {
        self.table().held.len()
    }

    /// Whether a newcomer could have a place now (one is free, or a
    /// connection may be shed).
    pub(super) fn room(&self) -> bool {
        let t = self.table();
        t.held.len() < self.limits.max || t.held.values().any(Held::sheddable)
    }

    /// A place for a connection from `peer`, accepted at `now`.
    pub(super) fn admit(self: &Arc<Self>, peer: IpAddr, now: Instant) -> Admission {
        let mut t = self.table();
        let mine = t.count(&peer);
        if mine >= self.limits.per_peer {
            return Admission::Refused(Refusal::PeerLimit);
        }
        let mut shed = false;
        if t.held.len() >= self.limits.max {
            match t.fairest_victim() {
                // Fairer after the swap, or an address holding nothing.
                Some((victim, theirs)) if theirs > mine + 1 || mine == 0 => {
                    t.shed(victim);
                    shed = true;
                }
                Some(_) => return Admission::Refused(Refusal::FairShare),
                None => return Admission::Full,
            }
        }
        let id = t.next_id;
        t.next_id += 1;
        // An age of a century or more (any a flag may give) is no age at all.
        const CENTURY: Duration = Duration::from_secs(100 * 365 * 86_400);
        let age = Duration::try_from_secs_f64(self.limits.max_age.as_secs_f64() * age_spread(id))
            .unwrap_or(CENTURY)
            .min(CENTURY);
        let deadline = now + age;
        let state = Arc::new(ConnState::new(
            peer,
            deadline,
            self.limits.max_requests,
            self.changed.clone(),
        ));
        t.held.insert(
            id,
            Held {
                peer,
                state: state.clone(),
            },
        );
        *t.per_peer.entry(peer).or_default() += 1;
        Admission::Placed(
            Place {
                places: self.clone(),
                id,
                state,
            },
            shed,
        )
    }
}

/// A factor in [0.9, 1.1) spreading connection `id`'s age, so the
/// connections of a burst do not all close (and come back) together.
fn age_spread(id: u64) -> f64 {
    // Fibonacci hashing: consecutive ids land far apart in [0, 1).
    let u = (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 / (1u64 << 53) as f64;
    0.9 + 0.2 * u
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: usize, per_peer: usize) -> ServeLimits {
        ServeLimits {
            max_connections: max,
            max_connections_per_peer: per_peer,
            ..ServeLimits::test()
        }
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    fn placed(a: Admission) -> Place {
        match a {
            Admission::Placed(p, _) => p,
            other => panic!("not placed: {other:?}"),
        }
    }

    /// Marks the connection in `p` as answering a request.
    fn answering(p: &Place) {
        let _ = p.state().request_started_for_test();
    }

    fn shed(p: &Place) -> bool {
        !p.places.table().held.contains_key(&p.id)
    }

    #[test]
    fn a_peer_at_its_limit_is_refused_and_others_are_not_touched() {
        let places = Places::new(&limits(100, 3));
        let now = Instant::now();
        let a: Vec<Place> = (0..3).map(|_| placed(places.admit(ip(2), now))).collect();
        assert!(matches!(
            places.admit(ip(2), now),
            Admission::Refused(Refusal::PeerLimit)
        ));
        assert!(
            a.iter().all(|p| !shed(p)),
            "nobody shed for a refused newcomer"
        );
        let _other = placed(places.admit(ip(3), now));
        assert_eq!(places.held(), 4);
        // A place given back is the address's to take again.
        drop(a);
        assert_eq!(places.held(), 1);
        let _again = placed(places.admit(ip(2), now));
    }

    #[test]
    fn at_the_cap_the_peer_holding_most_gives_way_and_a_lone_client_keeps_its_place() {
        let places = Places::new(&limits(10, 10));
        let now = Instant::now();
        // The kubelet's probe: one connection, opened first (the oldest).
        let kubelet = placed(places.admit(ip(1), now));
        let flood: Vec<Place> = (0..9).map(|_| placed(places.admit(ip(2), now))).collect();
        assert!(places.room(), "full, but connections may be shed");
        // Newcomers from a second flooding address shed peer 2's oldest
        // while that leaves the two fairer; then they are refused. The
        // lone client is never chosen.
        let mut second = Vec::new();
        let mut refused = 0;
        for _ in 0..20 {
            match places.admit(ip(3), now) {
                Admission::Placed(p, true) => second.push(p),
                Admission::Refused(Refusal::FairShare) => refused += 1,
                other => panic!("{other:?}"),
            }
        }
        let held = |p: u8| places.table().count(&ip(p));
        assert_eq!((held(1), held(2), held(3)), (1, 5, 4));
        assert_eq!((second.len(), refused), (4, 16));
        assert!(flood[..4].iter().all(shed) && !flood[4..].iter().any(shed));
        assert!(!shed(&kubelet));
        assert_eq!(places.held(), 10);
        // A newcomer from an address holding nothing gets in at once.
        let _third = placed(places.admit(ip(4), now));
        assert!(!shed(&kubelet));
        assert_eq!((held(2), held(4)), (4, 1));
    }

    #[test]
    fn at_the_cap_with_nobody_to_shed_newcomers_wait() {
        let places = Places::new(&limits(2, 2));
        let now = Instant::now();
        let a = placed(places.admit(ip(2), now));
        let b = placed(places.admit(ip(3), now));
        a.state().trust_for_test();
        answering(&b);
        assert!(!places.room());
        assert!(matches!(places.admit(ip(4), now), Admission::Full));
        drop(b);
        assert!(places.room());
        let _c = placed(places.admit(ip(4), now));
        assert!(!shed(&a), "a trusted connection keeps its place");
    }

    #[test]
    fn any_age_a_flag_may_give_is_kept_without_overflow() {
        let places = Places::new(&ServeLimits {
            max_connection_age: Duration::from_secs(i64::MAX as u64),
            ..limits(10, 10)
        });
        let now = Instant::now();
        let p = placed(places.admit(ip(2), now));
        assert!(p.state().deadline - now >= Duration::from_secs(99 * 365 * 86_400));
    }

    #[test]
    fn ages_are_spread_over_a_fifth_of_the_maximum() {
        let spread: Vec<f64> = (0..1000).map(age_spread).collect();
        assert!(spread.iter().all(|f| (0.9..1.1).contains(f)));
        let low = spread.iter().filter(|f| **f < 1.0).count();
        assert!((400..=600).contains(&low), "{low} of 1000 below the middle");
        let places = Places::new(&ServeLimits {
            max_connection_age: Duration::from_secs(100),
            ..limits(10, 10)
        });
        let now = Instant::now();
        let p = placed(places.admit(ip(2), now));
        let age = p.state().deadline - now;
        assert!(age >= Duration::from_secs(90) && age < Duration::from_secs(110));
    }
}
