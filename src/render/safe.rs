//! Untrusted text made safe for a terminal, in one place.
//!
//! Everything a site's edge or a member cluster writes (signal messages,
//! versions, workload names, GPU resource names, probe errors) reaches an
//! administrator's terminal through the human views. A terminal interprets
//! control characters and escape sequences (clear the screen, set the window
//! title, hide text, rewrite earlier lines), so a hostile site could forge or
//! hide what the admin sees — the reason kubectl escapes them too
//! (CVE-2021-25743). Human views pass such text through [`terminal_safe`],
//! and table cells through [`safe_cell`] (escaped, then cut with a marker).
//! `-o json|yaml` never go through here: JSON escapes control characters
//! itself and scripts get the exact bytes.

use std::borrow::Cow;
use std::fmt::Write as _;

pub use crate::fleet::bounds::TRUNCATION_MARKER;

/// Upper bound, in characters, on one table cell after escaping. Long
/// messages are cut with [`TRUNCATION_MARKER`]; `-o json` shows them whole.
pub const MAX_CELL_CHARS: usize = 64;

/// Characters that are not control characters (Unicode `Cc`) but still
/// change how a terminal lays text out or hide it: zero-width characters,
/// bidirectional overrides and isolates ("Trojan Source", CVE-2021-42574),
/// line and paragraph separators and the byte-order mark.
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{061C}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
    )
}

fn needs_escape(c: char) -> bool {
    c.is_control() || is_invisible_format(c)
}

/// `s` with every control character (C0, DEL, C1 — so every escape
/// sequence's introducer) and every invisible layout character written out
/// as a visible escape: `\n`, `\r`, `\t`, `\x1b` for the other ASCII
/// controls, `\u{9b}` above ASCII. Printable text, including non-ASCII
/// letters and backslashes, is returned as is (borrowed, no allocation).
pub fn terminal_safe(s: &str) -> Cow<'_, str> {
    let Some(first) = s.find(needs_escape) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_ascii_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if needs_escape(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `s` cut to at most `max` characters, the last of them
/// [`TRUNCATION_MARKER`] when anything was cut; borrowed when it fits. The
/// same cut the edge applies to text it copies from its member cluster.
pub use crate::fleet::bounds::cut_to as truncate_cell;

/// A table cell from untrusted text: escaped by [`terminal_safe`], then cut
/// to [`MAX_CELL_CHARS`] by [`truncate_cell`].
pub fn safe_cell(s: &str) -> Cow<'_, str> {
    safe_text(s, MAX_CELL_CHARS)
}

/// Untrusted text escaped by [`terminal_safe`], then cut to `max`
/// characters by [`truncate_cell`] (for views with their own widths, such
/// as `describe`).
pub fn safe_text(s: &str, max: usize) -> Cow<'_, str> {
    match terminal_safe(s) {
        Cow::Borrowed(b) => truncate_cell(b, max),
        Cow::Owned(o) => Cow::Owned(truncate_cell(&o, max).into_owned()),
    }
}

/// Upper bound, in characters, on one untrusted value in a log line.
pub const MAX_LOG_CHARS: usize = 1024;

/// Displays a value that may carry untrusted text (an error quoting a
/// member cluster or an API server) escaped and cut to [`MAX_LOG_CHARS`]:
/// `tracing::warn!(error = %Untrusted(&e), "…")`. tracing-subscriber
/// escapes ESC and BEL itself, but not line breaks (forged log lines) or
/// bidirectional overrides, and it bounds nothing.
pub struct Untrusted<T>(pub T);

impl<T: std::fmt::Display> std::fmt::Display for Untrusted<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = self.0.to_string();
        f.write_str(&truncate_cell(&terminal_safe(&text), MAX_LOG_CHARS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_text_is_borrowed_unchanged() {
        for s in [
            "",
            "v1.33.2",
            "back-off 5m0s restarting",
            "Größe ✓ 日本",
            r"C:\x1b\n",
        ] {
            assert!(
                matches!(terminal_safe(s), Cow::Borrowed(b) if b == s),
                "{s:?}"
            );
        }
    }

    #[test]
    fn escape_sequences_are_shown_not_interpreted() {
        assert_eq!(
            terminal_safe("\u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}[31mred"),
            r"\x1b[2J\x1b]0;pwned\x07\x1b[31mred"
        );
        assert_eq!(terminal_safe("a\nb\rc\td\u{7f}"), r"a\nb\rc\td\x7f");
        assert_eq!(terminal_safe("csi\u{9b}31m"), r"csi\u{9b}31m");
        assert_eq!(terminal_safe("nul\0"), r"nul\x00");
    }

    #[test]
    fn invisible_layout_characters_are_shown() {
        assert_eq!(
            terminal_safe("ok\u{202e}lave\u{200b}\u{2028}\u{feff}"),
            r"ok\u{202e}lave\u{200b}\u{2028}\u{feff}"
        );
    }

    #[test]
    fn long_text_is_cut_with_a_marker() {
        assert_eq!(truncate_cell("abcdefg", 6), "abcde…");
        let long = "x".repeat(200_000);
        let cell = safe_cell(&long);
        assert_eq!(cell.chars().count(), MAX_CELL_CHARS);
        assert!(cell.ends_with(TRUNCATION_MARKER));
    }

    #[test]
    fn cells_are_escaped_before_they_are_cut() {
        let hostile = "\u{1b}".repeat(100);
        let cell = safe_cell(&hostile);
        assert_eq!(cell.chars().count(), MAX_CELL_CHARS);
        assert!(!cell.contains('\u{1b}'));
        assert!(cell.starts_with(r"\x1b\x1b"));
    }

    #[test]
    fn untrusted_log_values_stay_on_one_bounded_line() {
        let forged = format!(
            "denied\n2026-01-01T00:00:00Z INFO hub: all good{}",
            "x".repeat(5000)
        );
        let shown = Untrusted(&forged).to_string();
        assert!(
            shown.starts_with(r"denied\n2026-01-01T00:00:00Z INFO"),
            "{shown}"
        );
        assert!(!shown.contains('\n'));
        assert_eq!(shown.chars().count(), MAX_LOG_CHARS);
    }

    proptest::proptest! {
        #[test]
        fn no_control_or_layout_character_survives(s in "\\PC*|[\\x00-\\x{a0}\\x{2000}-\\x{206f}\\x{feff}]*") {
            let safe = terminal_safe(&s);
            proptest::prop_assert!(!safe.chars().any(needs_escape), "{safe:?}");
            // Nothing is lost: printable input comes back unchanged.
            if !s.chars().any(needs_escape) {
                proptest::prop_assert_eq!(safe.as_ref(), s.as_str());
            }
            let cell = safe_cell(&s);
            proptest::prop_assert!(cell.chars().count() <= MAX_CELL_CHARS);
            proptest::prop_assert!(!cell.chars().any(needs_escape));
        }
    }
}
