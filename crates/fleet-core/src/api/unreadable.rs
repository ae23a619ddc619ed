//! What the lenient decoder (`api::lenient`) could not read of a site: a
//! leaf of `api`, held beside the decoded status (`cluster`), so the
//! status type and the decoder that fills it do not import each other.

/// Upper bound on the fields one [`Unreadable`] lists (the rest are
/// counted in [`Unreadable::more`]).
pub const MAX_UNREADABLE_FIELDS: usize = 16;
/// Upper bound, in characters, on a recorded path.
pub const MAX_UNREADABLE_PATH_CHARS: usize = 128;
/// Upper bound, in characters, on a recorded reason.
pub const MAX_UNREADABLE_REASON_CHARS: usize = 256;
/// What could not be read of one site: the fields the lenient decoder
/// left out. Not part of the API: held beside the decoded status, never
/// serialised.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unreadable {
    /// The fields left out, in the order they were found, at most
    /// [`MAX_UNREADABLE_FIELDS`].
    pub fields: Vec<UnreadableField>,
    /// How many more fields were left out than `fields` lists.
    pub more: usize,
}

/// One field the lenient decoder left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnreadableField {
    /// Where, from the object's top: `status.lastHeartbeatTime`,
    /// `status.signals[3]` (a list item is left out whole),
    /// `status.capacity.gpusByVendor["nvidia.com/gpu"].total`, `spec.maintenance`.
    /// Map keys are the site's own text: bounded here, escaped by whoever
    /// shows it ([`MAX_UNREADABLE_PATH_CHARS`]).
    pub path: String,
    /// Why, as the decoder said it (quoting the value: bounded here,
    /// escaped by whoever shows it; [`MAX_UNREADABLE_REASON_CHARS`]).
    pub reason: String,
}

impl Unreadable {
    /// Records `path` as unreadable for `reason`.
    pub fn push(&mut self, path: String, reason: &str) {
        if self.fields.len() >= MAX_UNREADABLE_FIELDS {
            self.more += 1;
            return;
        }
        self.fields.push(UnreadableField {
            path: cut(&path, MAX_UNREADABLE_PATH_CHARS),
            reason: cut(reason, MAX_UNREADABLE_REASON_CHARS),
        });
    }

    /// Makes the field recorded last the one containing it at `path` (the
    /// whole object went for want of the key left out before).
    pub(super) fn widen_last(&mut self, path: String) {
        if self.more > 0 {
            return;
        }
        if let Some(f) = self.fields.last_mut() {
            f.path = cut(&path, MAX_UNREADABLE_PATH_CHARS);
        }
    }

    /// Whether nothing was left out.
    pub(crate) fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.more == 0
    }

    /// Whether the field at `path` (e.g. `status.lastHeartbeatTime`), or
    /// something containing it (the whole `status`), was left out.
    pub(crate) fn covers(&self, path: &str) -> bool {
        self.fields.iter().any(|f| {
            path.strip_prefix(f.path.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
        })
    }

    /// Whether the site's `lastHeartbeatTime` could not be read.
    pub fn heartbeat(&self) -> bool {
        self.covers("status.lastHeartbeatTime")
    }

    /// The top-level keys of the fields left out (`status.signals`,
    /// `spec.maintenance`), in the order found, each once. These are
    /// names of our own types, never the site's text.
    pub(crate) fn keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = Vec::new();
        for f in &self.fields {
            let end = f
                .path
                .char_indices()
                .skip_while(|(_, c)| *c != '.')
                .skip(1)
                .find(|(_, c)| matches!(c, '.' | '['))
                .map_or(f.path.len(), |(i, _)| i);
            let key = &f.path[..end];
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        keys
    }
}

pub(super) fn self_or_under(path: &str, key: &str) -> bool {
    path.strip_prefix(key)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
}

/// `s` cut to at most `max` characters, the last of them `…` when anything
/// was cut (the same cut as `fleet::bounds::cut_to`, which this layer
/// cannot import).
pub(super) fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some(_) => {
            let keep = s.char_indices().nth(max - 1).map_or(s.len(), |(i, _)| i);
            format!("{}…", &s[..keep])
        }
    }
}
