//! In-memory object storage: one table per resource ordered by
//! `(namespace, name)`, one global resourceVersion counter, and a bounded
//! event history per resource (as the real API server keeps a watch cache
//! per resource) so watches can resume from a recent resourceVersion.

use crate::resources::{Catalogue, GroupResource};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use tokio::sync::broadcast;

/// Default number of events kept for watch resumption, per resource; a
/// watch from an older resourceVersion gets 410 Gone, as from a real API
/// server's watch cache of that resource. Per resource, as the real
/// server's: a flood of one resource's writes (100,000 site leases
/// renewed every 30 s: 20,000 events in 6 s) does not push another's
/// watchers out of their history.
pub const HISTORY_CAPACITY: usize = 20_000;

/// `(namespace, name)`; namespace is empty for cluster-scoped objects.
pub type ObjKey = (String, String);

/// ADDED / MODIFIED / DELETED.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change to one object.
#[derive(Debug)]
pub struct Event {
    pub rv: u64,
    pub gr: GroupResource,
    pub namespace: String,
    pub kind: EventType,
    /// The object after the change (for DELETED: as deleted, with the
    /// deletion's resourceVersion).
    pub object: Arc<Value>,
    /// The object before the change, so selector watches can turn a change
    /// that leaves the selection into DELETED.
    pub old: Option<Arc<Value>>,
}

/// Everything the server holds, behind one lock.
pub struct State {
    rv: u64,
    pub catalogue: Catalogue,
    tables: HashMap<GroupResource, BTreeMap<ObjKey, Arc<Value>>>,
    /// Each resource's last events, oldest first.
    history: HashMap<GroupResource, VecDeque<Arc<Event>>>,
    history_capacity: usize,
    tx: broadcast::Sender<Arc<Event>>,
    /// RBAC objects changed since the authorizer's snapshot was last
    /// brought up to date: (resource, key, object or None when deleted).
    rbac_changes: Vec<(String, ObjKey, Option<Arc<Value>>)>,
    /// Custom resources: the resourceVersion their CRD was created at,
    /// where the real server's watch cache of them starts.
    watch_floors: HashMap<GroupResource, u64>,
    /// The ValidatingAdmissionPolicies compiled so far.
    pub admission: crate::compiled_policy::Cache,
    /// No watch resumes from before this resourceVersion: where the watch
    /// caches of a restarted API server start
    /// ([`State::restart_watch_caches`]). Lists and continue tokens are
    /// served from storage, which a restart keeps.
    restarted_at: u64,
}

impl State {
    /// An empty store serving `catalogue`.
    #[cfg(test)]
    pub fn new(catalogue: Catalogue) -> Self {
        Self::with_history(catalogue, HISTORY_CAPACITY)
    }

    /// An empty store keeping the last `history_capacity` events.
    pub fn with_history(catalogue: Catalogue, history_capacity: usize) -> Self {
        let (tx, _) = broadcast::channel(65_536);
        State {
            rv: 1,
            catalogue,
            tables: HashMap::new(),
            history: HashMap::new(),
            history_capacity: history_capacity.max(1),
            tx,
            rbac_changes: Vec::new(),
            watch_floors: HashMap::new(),
            admission: Default::default(),
            restarted_at: 0,
        }
    }

    /// The current (latest) resourceVersion.
    pub fn current_rv(&self) -> u64 {
        self.rv
    }

    /// The oldest resourceVersion a watch of `gr` can resume from by its
    /// history alone.
    fn oldest_in_history(&self, gr: &GroupResource) -> u64 {
        match self
            .history
            .get(gr)
            .and_then(|h| h.front().map(|e| (e, h.len())))
        {
            // Once events were dropped, only watches from the version just
            // before the oldest kept event still see every change.
            Some((e, len)) if len >= self.history_capacity => e.rv - 1,
            _ => 0,
        }
    }

    /// Marks that watches of `gr` start now: older resourceVersions are
    /// too old for them (set when a CRD is created).
    pub fn start_watch_cache(&mut self, gr: GroupResource) {
        self.watch_floors.insert(gr, self.rv);
    }

    /// The oldest resourceVersion a watch of `gr` can resume from: its
    /// history's, or the start of the resource's watch cache.
    pub fn oldest_resumable_rv_of(&self, gr: &GroupResource) -> u64 {
        let floor = self.watch_floors.get(gr).copied().unwrap_or(0);
        self.oldest_in_history(gr).max(floor)
    }

    /// The oldest resourceVersion a watch of `gr` can start from: as
    /// [`State::oldest_resumable_rv_of`], and never before the watch
    /// caches last started again ([`State::restart_watch_caches`]).
    pub fn oldest_watchable_rv_of(&self, gr: &GroupResource) -> u64 {
        self.oldest_resumable_rv_of(gr).max(self.restarted_at)
    }

    /// Every watch cache starts again now, as a restarted API server's
    /// do: a watch from an older resourceVersion is told `410 Gone` and
    /// its client lists again.
    pub fn restart_watch_caches(&mut self) {
        self.restarted_at = self.rv;
    }

    /// Subscribes to every future event.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.tx.subscribe()
    }

    /// Events of `gr` after `rv` (exclusive), oldest first.
    pub fn events_since(&self, gr: &GroupResource, rv: u64) -> impl Iterator<Item = &Arc<Event>> {
        self.history.get(gr).into_iter().flat_map(move |h| {
            let start = h.partition_point(|e| e.rv <= rv);
            h.range(start..)
        })
    }

    /// One object.
    pub fn get(&self, gr: &GroupResource, key: &ObjKey) -> Option<&Arc<Value>> {
        self.tables.get(gr)?.get(key)
    }

    /// Objects of a resource in key order, in one namespace (`Some`) or all,
    /// starting strictly after `after`.
    pub fn range<'a>(
        &'a self,
        gr: &GroupResource,
        namespace: Option<&'a str>,
        after: Option<&ObjKey>,
    ) -> Box<dyn Iterator<Item = (&'a ObjKey, &'a Arc<Value>)> + 'a> {
        use std::ops::Bound;
        let Some(table) = self.tables.get(gr) else {
            return Box::new(std::iter::empty());
        };
        let lower = match (after, namespace) {
            (Some(k), _) => Bound::Excluded(k.clone()),
            (None, Some(ns)) => Bound::Included((ns.to_string(), String::new())),
            (None, None) => Bound::Unbounded,
        };
        let it = table.range((lower, Bound::Unbounded));
        match namespace {
            Some(ns) => Box::new(it.take_while(move |(k, _)| k.0 == ns)),
            None => Box::new(it),
        }
    }

    /// How the objects of `gr` (in `namespace`, or all) were at
    /// resourceVersion `rv`, where they differ from now: each key written
    /// since, with its object as it was then (`None`: absent then), read
    /// by undoing the kept events after `rv`; `None` when the history no
    /// longer reaches back that far. The rest are as now, so a page of a
    /// list at `rv` reads the current objects from its start key with
    /// this overlaid ([`at_version`]) instead of a copy of the whole
    /// resource per page: at 100,000 sites that copy, under the state
    /// lock, cost every continued page 100,000 clones while every write
    /// waited.
    pub fn changed_since(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        rv: u64,
    ) -> Option<BTreeMap<ObjKey, Option<Arc<Value>>>> {
        if rv < self.oldest_resumable_rv_of(gr) || rv > self.rv {
            return None;
        }
        let mut then: BTreeMap<ObjKey, Option<Arc<Value>>> = BTreeMap::new();
        // Oldest first: the first event after `rv` of a key says how it
        // was at `rv`.
        for ev in self.events_since(gr, rv) {
            if &ev.gr != gr || namespace.is_some_and(|ns| ns != ev.namespace) {
                continue;
            }
            let name = ev.object["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let key = (ev.namespace.clone(), name);
            if then.contains_key(&key) {
                continue;
            }
            let was = match (&ev.kind, &ev.old) {
                (EventType::Added, _) => None,
                (EventType::Deleted, old) => Some(old.clone().unwrap_or_else(|| ev.object.clone())),
                (_, Some(old)) => Some(old.clone()),
                // A change that kept no old object: a later one says.
                (_, None) => continue,
            };
            then.insert(key, was);
        }
        Some(then)
    }

    /// Number of objects of a resource in a namespace (or all).
    pub fn count(&self, gr: &GroupResource, namespace: Option<&str>) -> usize {
        self.range(gr, namespace, None).count()
    }

    /// Stores `obj` under `key` with a new resourceVersion and records the
    /// event; returns the stored object.
    pub fn put(&mut self, gr: &GroupResource, key: ObjKey, mut obj: Value) -> Arc<Value> {
        self.rv += 1;
        let rv = self.rv;
        obj["metadata"]["resourceVersion"] = Value::String(rv.to_string());
        // An Event is one object with two views (core and events.k8s.io):
        // the other view is written at the same resourceVersion.
        if let Some((other, view)) = crate::events::other_view(gr, &obj) {
            self.store_at(rv, &other, key.clone(), view);
        }
        self.store_at(rv, gr, key, obj)
    }

    /// Stores `obj` (its resourceVersion set to `rv`) and records the event.
    fn store_at(&mut self, rv: u64, gr: &GroupResource, key: ObjKey, obj: Value) -> Arc<Value> {
        let obj = Arc::new(obj);
        let old = self
            .tables
            .entry(gr.clone())
            .or_default()
            .insert(key.clone(), obj.clone());
        let kind = if old.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.record(Event {
            rv,
            gr: gr.clone(),
            namespace: key.0,
            kind,
            object: obj.clone(),
            old,
        });
        obj
    }

    /// Removes an object, recording a DELETED event; returns it as deleted.
    pub fn remove(&mut self, gr: &GroupResource, key: &ObjKey) -> Option<Arc<Value>> {
        let old = self.tables.get_mut(gr)?.remove(key)?;
        self.rv += 1;
        let rv = self.rv;
        if let Some(other) = crate::events::other_resource(gr) {
            self.remove_at(rv, &other, key);
        }
        Some(self.removed_at(rv, gr, key, old))
    }

    /// Removes the other view of an Event at `rv`.
    fn remove_at(&mut self, rv: u64, gr: &GroupResource, key: &ObjKey) {
        if let Some(old) = self.tables.get_mut(gr).and_then(|t| t.remove(key)) {
            self.removed_at(rv, gr, key, old);
        }
    }

    /// Records the DELETED event of `old` at `rv`; returns it as deleted.
    fn removed_at(
        &mut self,
        rv: u64,
        gr: &GroupResource,
        key: &ObjKey,
        old: Arc<Value>,
    ) -> Arc<Value> {
        let mut deleted = (*old).clone();
        deleted["metadata"]["resourceVersion"] = Value::String(rv.to_string());
        let deleted = Arc::new(deleted);
        self.record(Event {
            rv,
            gr: gr.clone(),
            namespace: key.0.clone(),
            kind: EventType::Deleted,
            object: deleted.clone(),
            old: Some(old),
        });
        deleted
    }

    /// Keys of every object of a resource in a namespace (or all).
    pub fn keys(&self, gr: &GroupResource, namespace: Option<&str>) -> Vec<ObjKey> {
        self.range(gr, namespace, None)
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Every resource with at least one stored object.
    pub fn resources_with_objects(&self) -> Vec<GroupResource> {
        self.tables
            .iter()
            .filter(|(_, t)| !t.is_empty())
            .map(|(gr, _)| gr.clone())
            .collect()
    }

    /// Takes the RBAC changes recorded since the last call, oldest first.
    pub fn take_rbac_changes(&mut self) -> Vec<(String, ObjKey, Option<Arc<Value>>)> {
        std::mem::take(&mut self.rbac_changes)
    }

    fn record(&mut self, event: Event) {
        if event.gr.group == "rbac.authorization.k8s.io" {
            let key = (
                event.namespace.clone(),
                event.object["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            );
            let obj = (event.kind != EventType::Deleted).then(|| event.object.clone());
            self.rbac_changes
                .push((event.gr.resource.clone(), key, obj));
        }
        let event = Arc::new(event);
        let history = self.history.entry(event.gr.clone()).or_default();
        if history.len() >= self.history_capacity {
            history.pop_front();
        }
        history.push_back(event.clone());
        // No receivers is fine: nobody is watching.
        let _ = self.tx.send(event);
    }
}

/// The objects of `now` (a key-ordered range of the current objects,
/// after `after`) as they were at an older resourceVersion: `changed`
/// ([`State::changed_since`]) overlaid from the same start key, in key
/// order.
pub fn at_version<'a>(
    now: impl Iterator<Item = (&'a ObjKey, &'a Arc<Value>)> + 'a,
    changed: &'a BTreeMap<ObjKey, Option<Arc<Value>>>,
    after: Option<&ObjKey>,
) -> impl Iterator<Item = (&'a ObjKey, &'a Arc<Value>)> + 'a {
    let then = match after {
        Some(a) => changed.range((
            std::ops::Bound::Excluded(a.clone()),
            std::ops::Bound::Unbounded,
        )),
        None => changed.range::<ObjKey, _>(..),
    };
    let (mut now, mut then) = (now.peekable(), then.peekable());
    std::iter::from_fn(move || {
        loop {
            let order = match (now.peek(), then.peek()) {
                (None, None) => return None,
                (Some(_), None) => std::cmp::Ordering::Greater,
                (None, Some(_)) => std::cmp::Ordering::Less,
                (Some((n, _)), Some((t, _))) => t.cmp(n),
            };
            if order == std::cmp::Ordering::Equal {
                // Changed since: as it was then.
                now.next();
            }
            let take_then = order != std::cmp::Ordering::Greater;
            if take_then {
                let (k, was) = then.next()?;
                if let Some(v) = was {
                    return Some((k, v));
                }
            } else {
                return now.next();
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn gr() -> GroupResource {
        GroupResource {
            group: String::new(),
            resource: "configmaps".into(),
        }
    }

    /// A list at an older version reads each object as it was then: the
    /// current objects with the ones changed since overlaid, from any
    /// start key (a continued page).
    #[test]
    fn the_objects_at_an_older_version_are_the_current_ones_with_the_changes_undone() {
        let mut s = State::new(Catalogue::builtin());
        let key = |n: &str| ("ns".to_owned(), n.to_owned());
        let obj = |n: &str, v: u32| json!({"metadata": {"name": n, "namespace": "ns"}, "v": v});
        for n in ["a", "b", "c", "e"] {
            s.put(&gr(), key(n), obj(n, 1));
        }
        let then = s.current_rv();
        s.put(&gr(), key("b"), obj("b", 2));
        s.put(&gr(), key("b"), obj("b", 3));
        s.remove(&gr(), &key("c"));
        s.put(&gr(), key("d"), obj("d", 1));
        s.put(&gr(), key("e"), obj("e", 2));
        let read = |after: Option<ObjKey>| {
            let changed = s.changed_since(&gr(), Some("ns"), then).unwrap();
            at_version(
                s.range(&gr(), Some("ns"), after.as_ref()),
                &changed,
                after.as_ref(),
            )
            .map(|(k, v)| format!("{}={}", k.1, v["v"]))
            .collect::<Vec<_>>()
        };
        assert_eq!(read(None), ["a=1", "b=1", "c=1", "e=1"]);
        assert_eq!(read(Some(key("a"))), ["b=1", "c=1", "e=1"]);
        assert_eq!(read(Some(key("c"))), ["e=1"]);
        assert!(
            s.changed_since(&gr(), Some("ns"), s.current_rv() + 1)
                .is_none()
        );
    }

    #[test]
    fn put_bumps_the_global_resource_version_and_records_events() {
        let mut s = State::new(Catalogue::builtin());
        let a = s.put(&gr(), ("ns".into(), "a".into()), json!({"metadata": {}}));
        let b = s.put(&gr(), ("ns".into(), "b".into()), json!({"metadata": {}}));
        assert_eq!(a["metadata"]["resourceVersion"], "2");
        assert_eq!(b["metadata"]["resourceVersion"], "3");
        let d = s.remove(&gr(), &("ns".into(), "a".into())).unwrap();
        assert_eq!(d["metadata"]["resourceVersion"], "4");
        let kinds: Vec<_> = s.events_since(&gr(), 2).map(|e| e.kind).collect();
        assert_eq!(kinds, [EventType::Added, EventType::Deleted]);
    }

    /// Each resource keeps its own history, as a real API server keeps a
    /// watch cache per resource: a flood of one resource's writes leaves
    /// another's watchers able to resume.
    #[test]
    fn a_flood_of_one_resource_leaves_anothers_history() {
        let mut s = State::with_history(Catalogue::builtin(), 3);
        let leases = GroupResource {
            group: "coordination.k8s.io".into(),
            resource: "leases".into(),
        };
        s.put(&gr(), ("ns".into(), "a".into()), json!({"metadata": {}}));
        for i in 0..10 {
            s.put(
                &leases,
                ("ns".into(), format!("l{i}")),
                json!({"metadata": {}}),
            );
        }
        assert_eq!(s.oldest_resumable_rv_of(&gr()), 0, "configmaps keep theirs");
        assert_eq!(s.events_since(&gr(), 1).count(), 1);
        assert!(
            s.oldest_resumable_rv_of(&leases) > 2,
            "the leases' own history holds only its last 3 events"
        );
        assert_eq!(s.events_since(&leases, 0).count(), 3);
    }

    #[test]
    fn range_is_scoped_to_a_namespace_and_resumes_after_a_key() {
        let mut s = State::new(Catalogue::builtin());
        for (ns, n) in [("a", "1"), ("b", "1"), ("b", "2"), ("c", "1")] {
            s.put(&gr(), (ns.into(), n.into()), json!({"metadata": {}}));
        }
        let names: Vec<_> = s
            .range(&gr(), Some("b"), None)
            .map(|(k, _)| k.1.clone())
            .collect();
        assert_eq!(names, ["1", "2"]);
        let after = ("b".to_string(), "1".to_string());
        let rest: Vec<_> = s
            .range(&gr(), None, Some(&after))
            .map(|(k, _)| k.clone())
            .collect();
        assert_eq!(rest, [("b".into(), "2".into()), ("c".into(), "1".into())]);
    }
}
