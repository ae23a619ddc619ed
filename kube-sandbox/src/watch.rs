//! Watch streams: ADDED/MODIFIED/DELETED events (optionally as Tables),
//! BOOKMARKs, resumption from a recent resourceVersion, `410 Gone` for one
//! that was compacted away, and `sendInitialEvents` (watch-list).

use crate::errors::ApiError;
use crate::http::{Body, Resp};
use crate::request::{Call, Selectors, include_object, to_served};
use crate::resources::ResourceDef;
use crate::store::{Event, EventType};
use crate::table;
use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::header::{self, HeaderValue};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};

/// How often a watch that asked for bookmarks gets one.
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(10);

/// Default watch duration when `timeoutSeconds` is absent (the real
/// server's `--min-request-timeout`).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

struct Filter {
    def: Arc<ResourceDef>,
    namespace: Option<String>,
    /// `/watch/.../NAME` (or `fieldSelector=metadata.name=NAME`).
    name: Option<String>,
    sel: Selectors,
}

impl Filter {
    fn selects(&self, obj: &Value) -> bool {
        self.name
            .as_deref()
            .is_none_or(|n| obj["metadata"]["name"].as_str() == Some(n))
            && self.sel.matches(obj)
    }
}

impl Filter {
    fn in_scope(&self, ev: &Event) -> bool {
        ev.gr.group == self.def.group
            && ev.gr.resource == self.def.plural
            && self
                .namespace
                .as_deref()
                .is_none_or(|ns| ns == ev.namespace)
    }

    /// The event a selecting watcher sees for `ev`, if any: changes that
    /// move an object into or out of the selection become ADDED / DELETED.
    fn translate(&self, ev: &Event) -> Option<(EventType, Arc<Value>)> {
        if !self.in_scope(ev) {
            return None;
        }
        let now = self.selects(&ev.object);
        match ev.kind {
            EventType::Added => now.then(|| (EventType::Added, ev.object.clone())),
            EventType::Deleted => {
                let was = ev.old.as_ref().is_none_or(|o| self.selects(o));
                was.then(|| (EventType::Deleted, ev.object.clone()))
            }
            EventType::Modified => {
                let was = ev.old.as_ref().is_some_and(|o| self.selects(o));
                match (was, now) {
                    (true, true) => Some((EventType::Modified, ev.object.clone())),
                    (false, true) => Some((EventType::Added, ev.object.clone())),
                    (true, false) => Some((EventType::Deleted, ev.object.clone())),
                    (false, false) => None,
                }
            }
        }
    }
}

struct Encoder {
    def: Arc<ResourceDef>,
    table: bool,
    include: table::IncludeObject,
    first: bool,
}

impl Encoder {
    fn event(&mut self, kind: &str, obj: &Arc<Value>) -> Bytes {
        let obj = to_served(&self.def, obj);
        let object = if self.table {
            let mut t = table::to_table(
                &self.def.columns,
                std::slice::from_ref(&*obj),
                self.include,
                json!({"resourceVersion": obj["metadata"]["resourceVersion"]}),
                jiff::Timestamp::now(),
            );
            // Like the real server, only the first event carries the column
            // definitions, so `kubectl get -w` prints one header.
            if !self.first {
                t["columnDefinitions"] = json!([]);
            }
            self.first = false;
            t
        } else {
            (*obj).clone()
        };
        line(kind, &object)
    }

    fn bookmark(&self, rv: u64, initial_end: bool) -> Bytes {
        let mut meta = json!({"resourceVersion": rv.to_string()});
        if initial_end {
            meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        line(
            "BOOKMARK",
            &json!({
                "kind": self.def.kind,
                "apiVersion": self.def.api_version(),
                "metadata": meta,
            }),
        )
    }
}

/// One line of a watch stream, `{"type":…,"object":…}` with the type first
/// as the real API server writes it: a client that decodes the event as a
/// tagged enum (kube-rs does) reads the object directly only when the type
/// comes first, and otherwise buffers the whole object before decoding it
/// (a JSON object map would put `object` first).
fn line(kind: &str, object: &impl serde::Serialize) -> Bytes {
    #[derive(serde::Serialize)]
    struct Line<'a, T> {
        #[serde(rename = "type")]
        kind: &'a str,
        object: &'a T,
    }
    let mut out = serde_json::to_vec(&Line { kind, object }).unwrap_or_default();
    out.push(b'\n');
    Bytes::from(out)
}

/// Starts a watch and answers with its event stream.
pub fn serve(call: &Call, def: Arc<ResourceDef>) -> Result<Resp, ApiError> {
    let q = call.query;
    let sel = Selectors::from_query(q, &def)?;
    let namespace =
        (def.namespaced && !call.info.namespace.is_empty()).then(|| call.info.namespace.clone());
    let send_initial = q.flag("sendInitialEvents");
    if q.get("sendInitialEvents").is_some() && !q.flag("allowWatchBookmarks") && send_initial {
        return Err(ApiError::invalid(
            "meta.k8s.io",
            "ListOptions",
            "",
            vec![crate::errors::Cause::new(
                "FieldValueForbidden",
                "allowWatchBookmarks",
                "Forbidden: allowWatchBookmarks required when sendInitialEvents is set",
            )],
        ));
    }
    let bookmarks = q.flag("allowWatchBookmarks");
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_TIMEOUT);
    let rv_param = q.get("resourceVersion").unwrap_or_default().to_string();
    let filter = Filter {
        def: def.clone(),
        namespace,
        name: (!call.info.name.is_empty()).then(|| call.info.name.clone()),
        sel,
    };
    let mut enc = Encoder {
        def: def.clone(),
        table: call
            .headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("as=Table")),
        include: include_object(q),
        first: true,
    };

    // Under one lock: subscribe, then read the past, so no event is lost
    // or duplicated between the two.
    // Objects are picked under the lock (Arc clones only) and serialized
    // after it is released.
    let mut picked: Vec<(EventType, Arc<Value>)> = Vec::new();
    let mut end_bookmark = None;
    let (rx, start_rv) = {
        let st = call.shared.state.lock().unwrap();
        let rx = st.subscribe();
        let current = st.current_rv();
        let from_snapshot = rv_param.is_empty() || rv_param == "0" || send_initial;
        if from_snapshot {
            let ns = filter.namespace.as_deref();
            for (_, obj) in st.range(&def.storage_key(), ns, None) {
                if filter.selects(obj) {
                    picked.push((EventType::Added, obj.clone()));
                }
            }
            if send_initial && bookmarks {
                end_bookmark = Some(current);
            }
        } else {
            // The real server answers an unparsable version with a 500
            // whose Status carries no reason.
            let rv: u64 = rv_param.parse().map_err(|e: std::num::ParseIntError| {
                let reason = match e.kind() {
                    std::num::IntErrorKind::PosOverflow => "value out of range",
                    _ => "invalid syntax",
                };
                ApiError::new(
                    500,
                    "",
                    format!(
                        "resourceVersion: Invalid value: {rv_param:?}: strconv.ParseUint: parsing {rv_param:?}: {reason}"
                    ),
                )
            })?;
            let oldest = st.oldest_watchable_rv_of(&def.storage_key());
            if rv < oldest {
                let status =
                    ApiError::gone(format!("too old resource version: {rv} ({})", oldest + 1))
                        .to_status();
                let error = line("ERROR", &status);
                return Ok(stream_response(vec![error], None));
            }
            for ev in st.events_since(&def.storage_key(), rv) {
                if let Some(t) = filter.translate(ev) {
                    picked.push(t);
                }
            }
        }
        (rx, current)
    };
    let mut initial: Vec<Bytes> = picked
        .iter()
        .map(|(kind, obj)| enc.event(kind.as_str(), obj))
        .collect();
    if let Some(rv) = end_bookmark {
        initial.push(enc.bookmark(rv, true));
    }
    let (tx, body_rx) = mpsc::channel::<Bytes>(256);
    tokio::spawn(pump(rx, tx, filter, enc, start_rv, bookmarks, timeout));
    Ok(stream_response(initial, Some(body_rx)))
}

async fn pump(
    mut rx: broadcast::Receiver<Arc<Event>>,
    tx: mpsc::Sender<Bytes>,
    filter: Filter,
    mut enc: Encoder,
    start_rv: u64,
    bookmarks: bool,
    timeout: Duration,
) {
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut ticker = tokio::time::interval(BOOKMARK_INTERVAL);
    ticker.tick().await;
    let mut seen_rv = start_rv;
    loop {
        tokio::select! {
            _ = &mut deadline => return,
            _ = tx.closed() => return,
            _ = ticker.tick(), if bookmarks => {
                if tx.send(enc.bookmark(seen_rv, false)).await.is_err() {
                    return;
                }
            }
            ev = rx.recv() => match ev {
                Ok(ev) => {
                    if ev.rv <= seen_rv {
                        continue;
                    }
                    seen_rv = ev.rv;
                    if let Some((kind, obj)) = filter.translate(&ev)
                        && tx.send(enc.event(kind.as_str(), &obj)).await.is_err() {
                            return;
                        }
                }
                // A watcher that fell behind is closed; it resumes from its
                // last resourceVersion like after any dropped connection.
                Err(_) => return,
            },
        }
    }
}

fn stream_response(initial: Vec<Bytes>, rest: Option<mpsc::Receiver<Bytes>>) -> Resp {
    let head = futures::stream::iter(
        initial
            .into_iter()
            .map(|b| Ok::<_, std::convert::Infallible>(Frame::data(b))),
    );
    let tail = futures::stream::unfold(rest, |rest| async move {
        let mut rx = rest?;
        let b = rx.recv().await?;
        Some((Ok(Frame::data(b)), Some(rx)))
    });
    let body: Body = BodyExt::boxed(BodyExt::map_err(
        StreamBody::new(futures::StreamExt::chain(head, tail)),
        crate::http::never,
    ));
    let mut r = hyper::Response::new(body);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    r
}

#[cfg(test)]
mod line_tests {
    use super::*;

    #[test]
    fn a_watch_line_names_its_type_before_its_object_as_the_real_server() {
        let l = line("MODIFIED", &json!({"metadata": {"name": "a"}}));
        assert_eq!(
            std::str::from_utf8(&l).unwrap(),
            "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n"
        );
    }
}
