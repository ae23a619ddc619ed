//! When the hub looks at each site again by itself: the next threshold its
//! last judgement set (Stale at 3·I, Unreachable at 10·I, a credential
//! warning), one timer for the whole fleet.
//!
//! kube-runtime's `Controller` can requeue a reconcile itself
//! (`Action::requeue`), but its scheduler then holds every site twice (a
//! `DelayQueue` slot and a map entry, each with the site's name,
//! resourceVersion and uid), ~870 bytes a site measured at 20,000 sites
//! (docs/benchmarks-100k.md#where-the-hubs-memory-goes). Every site of a
//! quiet fleet is always scheduled, so that is ~85 MB at 100,000 sites
//! before the allocator's share. This schedule keeps one instant and one
//! shared name per site and hands the controller a site only when it is
//! due ([`Schedule::fire`]), so the controller's scheduler holds only the
//! sites being reconciled now. A watch event still goes to the controller
//! as before (`Hub::needs_reconcile` reads [`Schedule::at`]).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::Stream;
use tokio::sync::Notify;
use tokio::time::Instant;

/// Every site's next look, and the order they come in.
#[derive(Debug, Default)]
pub struct Schedule {
    inner: Mutex<Due>,
    /// An earlier look than the timer waits for was set.
    sooner: Notify,
}

#[derive(Debug, Default)]
struct Due {
    /// Each scheduled site's next look; absent when nothing is scheduled.
    at: HashMap<Arc<str>, Instant>,
    /// The same looks by time. An entry whose site has since been
    /// scheduled again (or forgotten) is left in place and skipped when
    /// it comes up; the heap is rebuilt from `at` when such entries
    /// outnumber the live ones.
    order: BinaryHeap<Reverse<(Instant, Arc<str>)>>,
}

impl Due {
    fn rebuild(&mut self) {
        self.order = self
            .at
            .iter()
            .map(|(name, at)| Reverse((*at, name.clone())))
            .collect();
    }
}

impl Schedule {
    /// When `site` is looked at again by itself, if it is scheduled.
    pub fn at(&self, site: &str) -> Option<Instant> {
        self.lock().at.get(site).copied()
    }

    /// Looks at `site` again `after` from now, or never by itself (None).
    pub fn set(&self, site: &str, after: Option<Duration>) {
        let Some(after) = after else {
            self.forget(site);
            return;
        };
        let at = Instant::now() + after;
        let mut due = self.lock();
        let name = match due.at.get_key_value(site) {
            Some((name, _)) => name.clone(),
            None => Arc::from(site),
        };
        due.at.insert(name.clone(), at);
        let sooner = due.order.peek().is_none_or(|Reverse((next, _))| at < *next);
        due.order.push(Reverse((at, name)));
        if due.order.len() > 2 * due.at.len() + 64 {
            due.rebuild();
        }
        drop(due);
        if sooner {
            self.sooner.notify_one();
        }
    }

    /// Forgets `site` (deleted, or nothing to look for).
    pub fn forget(&self, site: &str) {
        self.lock().at.remove(site);
    }

    /// How many sites are scheduled.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().at.len()
    }

    /// The sites due now, in the order they fell due, and when the next
    /// one falls due.
    fn take_due(&self, now: Instant) -> (Vec<Arc<str>>, Option<Instant>) {
        let mut due = self.lock();
        let mut ready = Vec::new();
        while let Some(Reverse((at, _))) = due.order.peek() {
            if *at > now {
                break;
            }
            let Some(Reverse((at, name))) = due.order.pop() else {
                break;
            };
            // Only the entry of the site's latest look counts; it stays
            // scheduled (at a past instant) until its reconcile sets the
            // next one.
            if due.at.get(&name) == Some(&at) {
                ready.push(name);
            }
        }
        let next = due.order.peek().map(|Reverse((at, _))| *at);
        (ready, next)
    }

    /// The sites as they fall due, for as long as the stream is read.
    pub fn fire(self: Arc<Self>) -> impl Stream<Item = Arc<str>> + Send + 'static {
        let state = (self, std::collections::VecDeque::<Arc<str>>::new());
        futures::stream::unfold(state, |(schedule, mut ready)| async move {
            loop {
                if let Some(name) = ready.pop_front() {
                    return Some((name, (schedule, ready)));
                }
                let (now_due, next) = schedule.take_due(Instant::now());
                if !now_due.is_empty() {
                    ready.extend(now_due);
                    continue;
                }
                match next {
                    Some(next) => tokio::select! {
                        () = tokio::time::sleep_until(next) => {}
                        () = schedule.sooner.notified() => {}
                    },
                    None => schedule.sooner.notified().await,
                }
            }
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Due> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt as _;

    const MS: Duration = Duration::from_millis(1);

    #[tokio::test]
    async fn sites_come_when_due_in_order_and_a_new_look_replaces_the_old() {
        let schedule = Arc::new(Schedule::default());
        let start = Instant::now();
        schedule.set("b", Some(MS * 200));
        schedule.set("a", Some(MS * 100));
        schedule.set("c", Some(MS * 50));
        // c looked at again later, before it fell due: once, at its new look.
        schedule.set("c", Some(MS * 300));
        schedule.set("gone", Some(MS * 10));
        schedule.forget("gone");
        let mut fired = Box::pin(schedule.clone().fire());
        let mut seen = Vec::new();
        for _ in 0..3 {
            let name = fired.next().await.unwrap();
            seen.push(name.to_string());
            let due = schedule.at(&name).unwrap();
            assert!(Instant::now() >= due, "{name} came before it was due");
        }
        assert_eq!(seen, ["a", "b", "c"], "each site once, at its latest look");
        assert!(Instant::now() - start >= MS * 300);
        // A due site stays scheduled until its reconcile sets the next look.
        assert_eq!(schedule.len(), 3);
        assert!(schedule.at("gone").is_none());
        let more = tokio::time::timeout(MS * 100, fired.next()).await;
        assert!(more.is_err(), "nothing more is due: {more:?}");
    }

    #[tokio::test]
    async fn an_earlier_look_wakes_a_timer_waiting_for_a_later_one() {
        let schedule = Arc::new(Schedule::default());
        schedule.set("late", Some(Duration::from_secs(600)));
        let mut fired = Box::pin(schedule.clone().fire());
        let waiter = tokio::spawn(async move { fired.next().await.unwrap().to_string() });
        tokio::time::sleep(MS * 50).await;
        schedule.set("soon", Some(MS * 20));
        let first = tokio::time::timeout(Duration::from_secs(60), waiter).await;
        assert_eq!(first.unwrap().unwrap(), "soon");
    }

    #[test]
    fn rescheduling_a_site_over_and_over_keeps_the_heap_bounded() {
        let schedule = Schedule::default();
        for round in 0..10_000u64 {
            schedule.set(
                &format!("site-{}", round % 10),
                Some(Duration::from_secs(100 + round)),
            );
        }
        let due = schedule.lock();
        assert_eq!(due.at.len(), 10);
        assert!(due.order.len() <= 2 * 10 + 64 + 1, "{}", due.order.len());
    }
}
