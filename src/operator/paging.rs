//! The query parameters of the hub's REST API (docs/observability.md#rest-api-hub):
//! each route takes a fixed set, each at most once, and refuses any other
//! with 400 naming the ones it takes (a typo such as `?status=stale` must
//! not silently answer with every site); and `limit`/`continue` paging of
//! the lists that grow with the fleet, as the Kubernetes API pages its
//! lists: an answer carries `metadata.continue` (pass it back unchanged
//! for the next page; null on the last) and `metadata.remainingItemCount`.
//!
//! Sites (and an incident's sites) are paged by name, so a page follows
//! the one before it even while the fleet changes (a site added or removed
//! meanwhile may or may not show, as with Kubernetes' own lists). Cascades
//! are listed strongest evidence first, an order that moves as incidents
//! come and go, so their token names the list it was cut from: once that
//! list changed, the next page is refused with 410 (start again), as the
//! Kubernetes API answers an expired `continue`.

use std::collections::BTreeMap;

use axum::extract::Query;
use axum::http::{StatusCode, Uri};
use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// A query the API refuses: the status and a one-line message saying what
/// to send instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadQuery {
    /// 400, or 410 for a `continue` token whose list changed.
    pub status: StatusCode,
    /// What was wrong and what to do.
    pub message: String,
}

fn bad(message: impl Into<String>) -> BadQuery {
    BadQuery {
        status: StatusCode::BAD_REQUEST,
        message: message.into(),
    }
}

/// Untrusted text echoed in a message: cut short (JSON escapes the rest).
fn echo(s: &str) -> String {
    s.chars().take(64).collect()
}

/// The paging parameters, taken by the routes whose lists grow with the
/// fleet.
pub const PAGING: [&str; 2] = ["limit", "continue"];

/// The query parameters of one request, checked against what its route
/// takes.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Params(BTreeMap<String, String>);

impl Params {
    /// The parameters of `uri` for `route`, which takes `allowed`: a 400
    /// for a parameter it does not take, one given twice, or a query that
    /// is not `key=value&…`.
    pub fn parse(route: &str, allowed: &[&str], uri: &Uri) -> Result<Params, BadQuery> {
        let takes = || match allowed {
            [] => format!("{route} takes no query parameters"),
            [one] => format!("{route} takes only {one}"),
            [init @ .., last] => format!("{route} takes {} or {last}", init.join(", ")),
        };
        let Query(pairs) = Query::<Vec<(String, String)>>::try_from_uri(uri)
            .map_err(|_| bad(format!("invalid query string: {}", takes())))?;
        let mut out = BTreeMap::new();
        for (key, value) in pairs {
            if !allowed.contains(&key.as_str()) {
                return Err(bad(format!(
                    "unknown query parameter {:?}: {}",
                    echo(&key),
                    takes()
                )));
            }
            if out.contains_key(&key) {
                return Err(bad(format!(
                    "query parameter {key:?} given more than once: give it once"
                )));
            }
            out.insert(key, value);
        }
        Ok(Params(out))
    }

    /// The value of `key`, if given.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// `limit`: a positive whole number, or None for every item.
    pub fn limit(&self) -> Result<Option<usize>, BadQuery> {
        match self.get("limit") {
            None => Ok(None),
            Some(v) => match v.parse::<usize>() {
                Ok(n) if n > 0 => Ok(Some(n)),
                _ => Err(bad(format!(
                    "invalid limit {:?}: give a positive whole number, e.g. limit=500 (leave it out for every item)",
                    echo(v)
                ))),
            },
        }
    }

    /// `continue` decoded, if given; a 400 for a token this API did not
    /// hand out.
    pub fn cursor(&self) -> Result<Option<Cursor>, BadQuery> {
        self.get("continue").map(Cursor::decode).transpose()
    }
}

/// Where a page continues from, handed out as `metadata.continue` (an
/// opaque token to the caller: base64url of this as JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "list", rename_all = "camelCase")]
pub enum Cursor {
    /// `/clusters`: the sites after this name.
    Clusters {
        /// The last name of the page before.
        after: String,
    },
    /// `/incidents/{id}`: that incident's sites after this name.
    Incident {
        /// The incident.
        id: String,
        /// The last name of the page before.
        after: String,
    },
    /// `/cascades`: the cascades from `offset` on, of the list `version`
    /// names.
    Cascades {
        /// [`list_version`] of the list the page before was cut from.
        version: String,
        /// How many came before.
        offset: usize,
    },
}

impl Cursor {
    /// The token for this cursor.
    pub fn encode(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    }

    fn decode(token: &str) -> Result<Cursor, BadQuery> {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(token.trim_end_matches('='))
            .ok()
            .and_then(|json| serde_json::from_slice(&json).ok())
            .ok_or_else(|| {
                bad("invalid continue token: pass the metadata.continue of the previous page unchanged")
            })
    }

    /// A 400 for a token handed out by another list.
    pub fn wrong_list(&self) -> BadQuery {
        bad(
            "this continue token belongs to another list: pass the metadata.continue of the previous page of this one",
        )
    }
}

/// The paging state an answer carries, as Kubernetes' ListMeta.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListMeta {
    /// The token for the next page; null on the last one.
    #[serde(rename = "continue")]
    pub continue_: Option<String>,
    /// How many items come after this page.
    pub remaining_item_count: usize,
}

/// A page of `items` by `name`: those after `after` (all without), the
/// first `limit` of them by name (all without), sorted; and how many
/// remain after it. Linear in `items` plus the sort of the page.
pub fn page_by_name<T>(
    items: Vec<T>,
    name: impl Fn(&T) -> &str,
    after: Option<&str>,
    limit: Option<usize>,
) -> (Vec<T>, usize) {
    let mut items: Vec<T> = match after {
        Some(after) => items.into_iter().filter(|i| name(i) > after).collect(),
        None => items,
    };
    let order = |a: &T, b: &T| name(a).cmp(name(b));
    let remaining = match limit {
        Some(n) if items.len() > n => {
            items.select_nth_unstable_by(n - 1, order);
            let rest = items.len() - n;
            items.truncate(n);
            rest
        }
        _ => 0,
    };
    items.sort_by(order);
    (items, remaining)
}

/// The [`ListMeta`] of a page by name: the next page starts after its last
/// name, built into a cursor by `next`.
pub fn name_meta(
    remaining: usize,
    last: Option<&str>,
    next: impl FnOnce(String) -> Cursor,
) -> ListMeta {
    ListMeta {
        continue_: match last {
            Some(last) if remaining > 0 => Some(next(last.to_owned()).encode()),
            _ => None,
        },
        remaining_item_count: remaining,
    }
}

/// A short fingerprint of an ordered list of keys: a `continue` token of
/// one list version is refused (410) once the list changed.
pub fn list_version<'a>(keys: impl IntoIterator<Item = &'a str>) -> String {
    let bytes = keys.into_iter().flat_map(|k| k.bytes().chain([0]));
    format!("{:08x}", crate::fleet::correlation::fnv1a(bytes))
}

/// The slice of a list of `len` items at `version` that a page from
/// `cursor` with `limit` covers, and its [`ListMeta`]; 410 when the cursor
/// was cut from another version of the list.
pub fn page_by_offset(
    len: usize,
    version: &str,
    cursor: Option<Cursor>,
    limit: Option<usize>,
) -> Result<(std::ops::Range<usize>, ListMeta), BadQuery> {
    let start = match cursor {
        None => 0,
        Some(Cursor::Cascades { version: v, offset }) => {
            if v != version {
                return Err(BadQuery {
                    status: StatusCode::GONE,
                    message: "the list changed since its first page was read: list again without continue"
                        .to_owned(),
                });
            }
            offset.min(len)
        }
        Some(other) => return Err(other.wrong_list()),
    };
    let end = limit.map_or(len, |n| start.saturating_add(n).min(len));
    let remaining = len - end;
    let meta = ListMeta {
        continue_: (remaining > 0).then(|| {
            Cursor::Cascades {
                version: version.to_owned(),
                offset: end,
            }
            .encode()
        }),
        remaining_item_count: remaining,
    };
    Ok((start..end, meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(q: &str) -> Uri {
        format!("/api/v1/federation/clusters{q}").parse().unwrap()
    }

    const ROUTE: &str = "/api/v1/federation/clusters";

    #[test]
    fn unknown_and_repeated_parameters_are_refused_naming_the_allowed_ones() {
        let allowed = ["tier", "phase", "limit", "continue"];
        let e = Params::parse(ROUTE, &allowed, &uri("?status=disconnected")).unwrap_err();
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
        assert_eq!(
            e.message,
            "unknown query parameter \"status\": /api/v1/federation/clusters takes tier, phase, \
             limit or continue"
        );
        let e = Params::parse(ROUTE, &allowed, &uri("?tier=critical&tier=standard")).unwrap_err();
        assert!(
            e.message.contains("\"tier\" given more than once"),
            "{}",
            e.message
        );
        let e = Params::parse("/api/v1/federation/status", &[], &uri("?x=1")).unwrap_err();
        assert!(
            e.message
                .ends_with("/api/v1/federation/status takes no query parameters")
        );
        let long = format!("?{}=1", "k".repeat(10_000));
        assert!(
            Params::parse(ROUTE, &allowed, &uri(&long))
                .unwrap_err()
                .message
                .len()
                < 300
        );
        let p = Params::parse(ROUTE, &allowed, &uri("?tier=critical&phase=Stale")).unwrap();
        assert_eq!(
            (p.get("tier"), p.get("phase")),
            (Some("critical"), Some("Stale"))
        );
        assert_eq!(
            Params::parse(ROUTE, &allowed, &uri("")).unwrap(),
            Params::default()
        );
    }

    #[test]
    fn limits_and_tokens_are_checked() {
        let p = |q: &str| Params::parse(ROUTE, &PAGING, &uri(q)).unwrap();
        assert_eq!(p("?limit=2").limit().unwrap(), Some(2));
        for bad in ["?limit=0", "?limit=-1", "?limit=x"] {
            assert_eq!(
                p(bad).limit().unwrap_err().status,
                StatusCode::BAD_REQUEST,
                "{bad}"
            );
        }
        let cursor = Cursor::Clusters {
            after: "site-a".into(),
        };
        let token = cursor.encode();
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert_eq!(
            p(&format!("?continue={token}")).cursor().unwrap(),
            Some(cursor)
        );
        assert!(p("?continue=not-a-token").cursor().is_err());
    }

    #[test]
    fn pages_by_name_cover_every_item_once() {
        let names: Vec<String> = ["d", "a", "e", "c", "b"].map(String::from).to_vec();
        let mut seen = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let (page, remaining) =
                page_by_name(names.clone(), |n| n.as_str(), after.as_deref(), Some(2));
            seen.extend(page.iter().cloned());
            if remaining == 0 {
                break;
            }
            after = page.last().cloned();
        }
        assert_eq!(seen, ["a", "b", "c", "d", "e"]);
        let (all, rest) = page_by_name(names, |n| n.as_str(), None, None);
        assert_eq!((all.len(), rest), (5, 0));
    }

    #[test]
    fn an_offset_page_of_a_changed_list_is_gone() {
        let v1 = list_version(["cc-1", "cc-2", "cc-3"]);
        let (range, meta) = page_by_offset(3, &v1, None, Some(2)).unwrap();
        assert_eq!((range, meta.remaining_item_count), (0..2, 1));
        let token = meta.continue_.unwrap();
        let cursor = Params::parse(ROUTE, &PAGING, &uri(&format!("?continue={token}")))
            .unwrap()
            .cursor()
            .unwrap();
        let (range, meta) = page_by_offset(3, &v1, cursor.clone(), Some(2)).unwrap();
        assert_eq!((range, meta.continue_), (2..3, None));
        let v2 = list_version(["cc-1", "cc-3", "cc-2"]);
        assert_ne!(v1, v2, "the order is part of the version");
        assert_eq!(
            page_by_offset(3, &v2, cursor, Some(2)).unwrap_err().status,
            StatusCode::GONE
        );
        let other = Cursor::Clusters { after: "a".into() };
        assert_eq!(
            page_by_offset(3, &v1, Some(other), None)
                .unwrap_err()
                .status,
            StatusCode::BAD_REQUEST
        );
    }
}
