//! The bookkeeping behind [`super::rest::Auth`]: a bounded LRU of review
//! answers with expiry, one review in flight per key, and the budgets of
//! reviews of tokens never seen before ([`NewTokens`]: per client address
//! and per [`TokenShape`], so a flood of made-up tokens from one address
//! cannot lock out fresh valid ones; docs/reliability.md, "Tokens"). No
//! I/O; every function that judges time takes `now`.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::Timestamp;
use tokio::sync::OnceCell;
use tokio::time::Instant;

use super::credential::TokenClaims;

/// What a cache lookup found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup<V> {
    /// An answer still within its time to live.
    Fresh(V),
    /// An answer that has expired: ask again (the key was seen before).
    Expired(V),
    /// Nothing cached.
    Missing,
}

struct Entry<V> {
    value: V,
    until: Instant,
    /// Position in the recency order (higher: used more recently).
    tick: u64,
}

/// A map of at most `capacity` entries, each valid until its own deadline;
/// when full, the least recently used entry goes (never the whole map).
/// O(log n) per operation.
pub struct TtlLru<K, V> {
    entries: HashMap<K, Entry<V>>,
    /// tick → key, oldest first.
    order: BTreeMap<u64, K>,
    next_tick: u64,
    capacity: usize,
}

impl<K: Hash + Eq + Clone, V: Clone> TtlLru<K, V> {
    /// An empty cache of at most `capacity` (at least 1) entries.
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: HashMap::new(),
            order: BTreeMap::new(),
            next_tick: 0,
            capacity: capacity.max(1),
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn touch(&mut self, key: &K) {
        let tick = self.next_tick;
        self.next_tick += 1;
        if let Some(e) = self.entries.get_mut(key) {
            self.order.remove(&e.tick);
            e.tick = tick;
            self.order.insert(tick, key.clone());
        }
    }

    /// The answer for `key` at `now`; a hit counts as a use.
    pub fn get(&mut self, key: &K, now: Instant) -> Lookup<V> {
        let Some(e) = self.entries.get(key) else {
            return Lookup::Missing;
        };
        let found = if e.until > now {
            Lookup::Fresh(e.value.clone())
        } else {
            Lookup::Expired(e.value.clone())
        };
        self.touch(key);
        found
    }

    /// Remembers `value` for `key` until `until`, evicting the least
    /// recently used entry when full.
    pub fn insert(&mut self, key: K, value: V, until: Instant) {
        if self.entries.contains_key(&key) {
            if let Some(e) = self.entries.get_mut(&key) {
                e.value = value;
                e.until = until;
            }
            self.touch(&key);
            return;
        }
        if self.entries.len() >= self.capacity
            && let Some((_, oldest)) = self.order.pop_first()
        {
            self.entries.remove(&oldest);
        }
        let tick = self.next_tick;
        self.next_tick += 1;
        self.order.insert(tick, key.clone());
        self.entries.insert(key, Entry { value, until, tick });
    }
}

/// A token bucket: `burst` takes at once, refilled at `per_second`.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    per_second: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket at `now`.
    pub fn new(per_second: f64, burst: u32, now: Instant) -> Self {
        Self {
            per_second,
            burst: f64::from(burst.max(1)),
            tokens: f64::from(burst.max(1)),
            last: now,
        }
    }

    /// Adds what `now` brings since the last refill.
    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.per_second).min(self.burst);
        self.last = now;
    }

    /// Takes a token (after a refill that found one).
    fn take(&mut self) {
        self.tokens -= 1.0;
    }

    /// Takes one token if there is one at `now`.
    pub fn try_take(&mut self, now: Instant) -> bool {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.take();
            true
        } else {
            false
        }
    }

    /// How long until the next token, at `now` (after a refused take).
    pub fn wait(&self) -> Duration {
        if self.tokens >= 1.0 || self.per_second <= 0.0 {
            return Duration::ZERO;
        }
        Duration::from_secs_f64((1.0 - self.tokens) / self.per_second)
    }
}

/// What a bearer token never seen valid looks like, before the API server
/// is asked: its reviews come from separate budgets, so made-up tokens
/// cannot use up the reviews of ones the API server issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenShape {
    /// A JWT that looks like one the API server issued: its `iss` is the
    /// issuer of a token the API server already said was valid, it names
    /// an audience the operator accepts (any, when it accepts the API
    /// server's own), and its `exp` is still to come. Anyone can make
    /// such a JWT (its signature is not checked here): the per-address
    /// budget still applies.
    Issued,
    /// Anything else: opaque tokens, other issuers, expired JWTs.
    Other,
}

impl TokenShape {
    /// The shape of a token with `claims` (None: not a JWT), given the
    /// `issuers` seen valid and the `audiences` the operator accepts
    /// (empty: the API server's own).
    pub fn of(
        claims: Option<&TokenClaims>,
        issuers: &[String],
        audiences: &[String],
        now: Timestamp,
    ) -> Self {
        let Some(c) = claims else {
            return TokenShape::Other;
        };
        let known = c.issuer.as_ref().is_some_and(|i| issuers.contains(i));
        let current = c.expires_at.is_some_and(|exp| exp > now);
        let audience = if audiences.is_empty() {
            !c.audiences.is_empty()
        } else {
            c.audiences.iter().any(|a| audiences.contains(a))
        };
        if known && current && audience {
            TokenShape::Issued
        } else {
            TokenShape::Other
        }
    }
}

/// Reviews of tokens never seen valid, per second at most, for each
/// [`TokenShape`] (all addresses together).
pub const NEW_TOKEN_REVIEWS_PER_SECOND: f64 = 10.0;
/// ... and at once.
pub const NEW_TOKEN_REVIEW_BURST: u32 = 20;
/// Reviews of tokens never seen valid, per second at most, for each client
/// address and [`TokenShape`]: half of all, so one address never takes
/// the whole budget.
pub const NEW_TOKEN_REVIEWS_PER_SOURCE_PER_SECOND: f64 = 5.0;
/// ... and at once.
pub const NEW_TOKEN_REVIEW_SOURCE_BURST: u32 = 10;
/// Client addresses whose budgets are remembered; the least recently
/// seen is forgotten first (it comes back with a full budget, within the
/// shared one).
pub const REMEMBERED_SOURCES: usize = 4096;

/// The budgets of TokenReviews of tokens never seen valid: one per
/// [`TokenShape`] for all callers (what the API server is asked at most),
/// and one per client address and shape within it (so one address cannot
/// use up what the others need).
pub struct NewTokens {
    shared: HashMap<TokenShape, TokenBucket>,
    per_source: TtlLru<(IpAddr, TokenShape), TokenBucket>,
}

impl NewTokens {
    /// Full budgets at `now`.
    pub fn new(now: Instant) -> Self {
        let full = || TokenBucket::new(NEW_TOKEN_REVIEWS_PER_SECOND, NEW_TOKEN_REVIEW_BURST, now);
        Self {
            shared: HashMap::from([(TokenShape::Issued, full()), (TokenShape::Other, full())]),
            per_source: TtlLru::new(REMEMBERED_SOURCES),
        }
    }

    /// Takes one review of a token of `shape` from `source` (None: an
    /// address unknown, only the shared budget applies), or says how long
    /// until one could be had.
    pub fn try_take(
        &mut self,
        source: Option<IpAddr>,
        shape: TokenShape,
        now: Instant,
    ) -> Result<(), Duration> {
        let mut own = source.map(|ip| match self.per_source.get(&(ip, shape), now) {
            Lookup::Fresh(b) | Lookup::Expired(b) => b,
            Lookup::Missing => TokenBucket::new(
                NEW_TOKEN_REVIEWS_PER_SOURCE_PER_SECOND,
                NEW_TOKEN_REVIEW_SOURCE_BURST,
                now,
            ),
        });
        let shared = self.shared.entry(shape).or_insert_with(|| {
            TokenBucket::new(NEW_TOKEN_REVIEWS_PER_SECOND, NEW_TOKEN_REVIEW_BURST, now)
        });
        shared.refill(now);
        let mut wait = shared.wait();
        if let Some(b) = own.as_mut() {
            b.refill(now);
            wait = wait.max(b.wait());
        }
        let taken = wait.is_zero();
        if taken {
            shared.take();
            if let Some(b) = own.as_mut() {
                b.take();
            }
        }
        if let (Some(ip), Some(b)) = (source, own) {
            // A bucket left alone for a minute is full again anyway.
            self.per_source
                .insert((ip, shape), b, now + Duration::from_secs(60));
        }
        if taken { Ok(()) } else { Err(wait) }
    }
}

/// One computation in flight per key: callers asking for the same key
/// while it runs wait for its answer instead of starting their own. A
/// caller that goes away mid-flight hands the work to the next waiter
/// (tokio's `OnceCell`); a key nobody waits for any more is forgotten.
pub struct Flights<K, V> {
    running: Mutex<HashMap<K, Arc<OnceCell<V>>>>,
}

impl<K, V> Default for Flights<K, V> {
    fn default() -> Self {
        Self {
            running: Mutex::new(HashMap::new()),
        }
    }
}

/// Removes a flight's entry once its last caller is done with it.
struct Leave<'a, K: Hash + Eq, V> {
    flights: &'a Flights<K, V>,
    key: &'a K,
    cell: Arc<OnceCell<V>>,
}

impl<K: Hash + Eq, V> Drop for Leave<'_, K, V> {
    fn drop(&mut self) {
        let mut running = self
            .flights
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        // Under the lock no one can take a new reference: the map's and
        // ours are the last two when nobody else waits.
        let last = Arc::strong_count(&self.cell) <= 2;
        let same = running
            .get(self.key)
            .is_some_and(|c| Arc::ptr_eq(c, &self.cell));
        if same && (last || self.cell.initialized()) {
            running.remove(self.key);
        }
    }
}

impl<K: Hash + Eq + Clone, V: Clone> Flights<K, V> {
    /// The answer of the flight for `key`, running `work` only if no
    /// flight for it is under way.
    pub async fn run<F>(&self, key: &K, work: F) -> V
    where
        F: Future<Output = V>,
    {
        let cell = self
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(key.clone())
            .or_default()
            .clone();
        let leave = Leave {
            flights: self,
            key,
            cell,
        };
        leave.cell.get_or_init(|| work).await.clone()
    }

    /// Flights under way (or abandoned and not yet cleaned up).
    pub fn len(&self) -> usize {
        self.running.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether no flight is under way.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn at(base: Instant, secs: u64) -> Instant {
        base + Duration::from_secs(secs)
    }

    #[test]
    fn entries_expire_but_stay_known() {
        let t0 = Instant::now();
        let mut c = TtlLru::new(4);
        assert_eq!(c.get(&"a", t0), Lookup::Missing);
        c.insert("a", 1, at(t0, 10));
        assert_eq!(c.get(&"a", at(t0, 9)), Lookup::Fresh(1));
        assert_eq!(c.get(&"a", at(t0, 10)), Lookup::Expired(1));
        c.insert("a", 2, at(t0, 20));
        assert_eq!(c.get(&"a", at(t0, 11)), Lookup::Fresh(2));
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn a_full_cache_evicts_the_least_recently_used_entry_only() {
        let t0 = Instant::now();
        let mut c = TtlLru::new(3);
        let k = |s: &str| s.to_owned();
        for (key, v) in [("a", 1), ("b", 2), ("c", 3)] {
            c.insert(k(key), v, at(t0, 60));
        }
        // "a" is used, so "b" is now the least recently used.
        assert_eq!(c.get(&k("a"), t0), Lookup::Fresh(1));
        c.insert(k("d"), 4, at(t0, 60));
        assert_eq!(c.len(), 3);
        assert_eq!(c.get(&k("b"), t0), Lookup::Missing);
        for key in ["a", "c", "d"] {
            assert!(matches!(c.get(&k(key), t0), Lookup::Fresh(_)), "{key}");
        }
        // A flood of new keys pushes out old ones one at a time; the
        // cache never empties.
        for i in 0..100 {
            c.insert(format!("x{i}"), i, at(t0, 60));
            assert_eq!(c.len(), 3);
        }
        assert_eq!(c.get(&k("x98"), t0), Lookup::Fresh(98));
        // Re-inserting a held key does not grow the cache.
        c.insert(k("x99"), 0, at(t0, 60));
        assert_eq!(c.len(), 3);
        assert_eq!(c.order.len(), 3);
    }

    #[test]
    fn the_bucket_allows_a_burst_then_its_rate() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(10.0, 5, t0);
        for _ in 0..5 {
            assert!(b.try_take(t0));
        }
        assert!(!b.try_take(t0));
        assert_eq!(b.wait(), Duration::from_millis(100));
        // 100 ms later: one more, not two.
        let t1 = t0 + Duration::from_millis(100);
        assert!(b.try_take(t1));
        assert!(!b.try_take(t1));
        // A long pause refills to the burst, no further.
        let t2 = t1 + Duration::from_secs(60);
        let taken = (0..100).filter(|_| b.try_take(t2)).count();
        assert_eq!(taken, 5);
    }

    fn addr(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    #[test]
    fn made_up_tokens_from_one_address_leave_the_others_their_reviews() {
        use TokenShape::{Issued, Other};
        let t0 = Instant::now();
        let mut n = NewTokens::new(t0);
        // One address floods made-up tokens: its burst, then refused.
        for _ in 0..NEW_TOKEN_REVIEW_SOURCE_BURST {
            assert_eq!(n.try_take(Some(addr(1)), Other, t0), Ok(()));
        }
        assert_eq!(
            n.try_take(Some(addr(1)), Other, t0),
            Err(Duration::from_millis(200))
        );
        // Another address still has its share of what is left, and tokens
        // shaped like issued ones have their own budget, from any address.
        assert_eq!(n.try_take(Some(addr(2)), Other, t0), Ok(()));
        for _ in 0..NEW_TOKEN_REVIEW_SOURCE_BURST {
            assert_eq!(n.try_take(Some(addr(1)), Issued, t0), Ok(()));
        }
        // Ten addresses exhaust the shared budget of made-up tokens ...
        for i in 3..20 {
            let _ = n.try_take(Some(addr(i)), Other, t0);
        }
        assert!(n.try_take(Some(addr(30)), Other, t0).is_err());
        assert!(n.try_take(None, Other, t0).is_err());
        // ... not that of issued-looking ones.
        assert_eq!(n.try_take(Some(addr(30)), Issued, t0), Ok(()));
        // A second later each budget has refilled by its rate.
        let t1 = t0 + Duration::from_secs(1);
        let back = (0..100)
            .filter(|_| n.try_take(Some(addr(1)), Other, t1).is_ok())
            .count();
        assert_eq!(back, NEW_TOKEN_REVIEWS_PER_SOURCE_PER_SECOND as usize);
    }

    #[test]
    fn a_token_looks_issued_only_from_a_known_issuer_for_an_accepted_audience_until_it_expires() {
        let now = Timestamp::from_second(1_000).unwrap();
        let claims = |iss: Option<&str>, aud: &[&str], exp: i64| TokenClaims {
            issued_at: None,
            expires_at: Timestamp::from_second(exp).ok(),
            audiences: aud.iter().map(|a| (*a).to_owned()).collect(),
            issuer: iss.map(str::to_owned),
            namespace: None,
            subject: None,
        };
        let issuers = ["https://kubernetes.default.svc".to_owned()];
        let k8s = Some("https://kubernetes.default.svc");
        let ok = claims(k8s, &["https://kubernetes.default.svc"], 2_000);
        assert_eq!(
            TokenShape::of(Some(&ok), &issuers, &[], now),
            TokenShape::Issued
        );
        for (what, c) in [
            (
                "unknown issuer",
                claims(Some("https://evil"), &["x"], 2_000),
            ),
            ("no issuer", claims(None, &["x"], 2_000)),
            ("expired", claims(k8s, &["x"], 1_000)),
            ("no audience", claims(k8s, &[], 2_000)),
        ] {
            assert_eq!(
                TokenShape::of(Some(&c), &issuers, &[], now),
                TokenShape::Other,
                "{what}"
            );
        }
        assert_eq!(TokenShape::of(None, &issuers, &[], now), TokenShape::Other);
        // Before any token was seen valid, nothing looks issued.
        assert_eq!(TokenShape::of(Some(&ok), &[], &[], now), TokenShape::Other);
        // With audiences of its own, the operator wants one of them.
        let mine = ["fleet-operator".to_owned()];
        assert_eq!(
            TokenShape::of(Some(&ok), &issuers, &mine, now),
            TokenShape::Other
        );
        let for_me = claims(k8s, &["other", "fleet-operator"], 2_000);
        assert_eq!(
            TokenShape::of(Some(&for_me), &issuers, &mine, now),
            TokenShape::Issued
        );
    }

    /// Waits until `n` callers wait on the flight for `key`.
    async fn waiting<K: Hash + Eq, V>(flights: &Flights<K, V>, key: &K, n: usize) {
        loop {
            let count = flights
                .running
                .lock()
                .unwrap()
                .get(key)
                .map_or(0, |c| Arc::strong_count(c) - 1);
            if count >= n {
                return;
            }
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn concurrent_callers_of_one_key_share_one_run() {
        let flights: Arc<Flights<&str, u32>> = Arc::default();
        let runs = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(tokio::sync::Notify::new());
        let mut tasks = Vec::new();
        for _ in 0..20 {
            let (flights, runs, gate) = (flights.clone(), runs.clone(), gate.clone());
            tasks.push(tokio::spawn(async move {
                flights
                    .run(&"t", async {
                        runs.fetch_add(1, Ordering::SeqCst);
                        gate.notified().await;
                        7
                    })
                    .await
            }));
        }
        waiting(&flights, &"t", 20).await;
        gate.notify_waiters();
        for t in tasks {
            assert_eq!(t.await.unwrap(), 7);
        }
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert!(flights.is_empty(), "a finished flight is forgotten");
        // The next call runs again (answers are cached elsewhere).
        assert_eq!(flights.run(&"t", async { 8 }).await, 8);
    }

    #[tokio::test]
    async fn an_abandoned_flight_is_taken_over_or_forgotten() {
        let flights: Arc<Flights<&str, u32>> = Arc::default();
        // The first caller goes away mid-flight; a waiter takes over.
        let first = {
            let flights = flights.clone();
            tokio::spawn(async move { flights.run(&"t", std::future::pending()).await })
        };
        waiting(&flights, &"t", 1).await;
        let second = {
            let flights = flights.clone();
            tokio::spawn(async move { flights.run(&"t", async { 2 }).await })
        };
        waiting(&flights, &"t", 2).await;
        first.abort();
        assert_eq!(second.await.unwrap(), 2);
        assert!(flights.is_empty());
        // A caller alone that goes away leaves nothing behind.
        let lone = {
            let flights = flights.clone();
            tokio::spawn(async move { flights.run(&"u", std::future::pending()).await })
        };
        waiting(&flights, &"u", 1).await;
        lone.abort();
        let _ = lone.await;
        assert!(flights.is_empty());
    }
}
