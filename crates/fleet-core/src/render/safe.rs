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
//! `-o json|yaml` never go through here: scripts get the exact bytes, with
//! every character [`terminal_safe`] would escape written as a JSON escape
//! (`\u009b`, [`write_json_fragment`]) — serde_json escapes only C0
//! controls, and xterm interprets the UTF-8 C1 controls (CSI U+009B) and
//! DEL raw — and YAML (serde-saphyr) escaping every control character.

use std::borrow::Cow;
use std::fmt::Write as _;

pub(crate) use crate::fleet::bounds::TRUNCATION_MARKER;

/// Upper bound, in characters, on one table cell after escaping. Long
/// messages are cut with [`TRUNCATION_MARKER`]; `-o json` shows them whole.
pub(crate) const MAX_CELL_CHARS: usize = 64;

/// Characters that are not control characters (Unicode `Cc`) but still
/// change how a terminal lays text out or hide it: every format character
/// (`Cf`, as [`crate::api::is_control_or_format`] knows them: soft hyphen,
/// zero-width characters, bidirectional overrides and isolates — "Trojan
/// Source", CVE-2021-42574 —, interlinear annotations, the byte-order
/// mark), the whole tag block (U+E0000–E007F, invisible ASCII look-alikes),
/// line and paragraph separators, variation selectors (U+180B–180D,
/// U+180F, U+FE00–FE0F, U+E0100–E01EF: they silently change the glyph of
/// the character before them) and the Hangul fillers, which render as
/// blank letters.
fn is_invisible(c: char) -> bool {
    crate::api::is_control_or_format(c)
        || matches!(
            c,
            '\u{115F}'
                | '\u{1160}'
                | '\u{180B}'..='\u{180F}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FFA0}'
                | '\u{E0000}'..='\u{E007F}'
                | '\u{E0100}'..='\u{E01EF}'
        )
}

/// Whether [`terminal_safe`] escapes `c` (a control or invisible layout
/// character).
pub fn needs_escape(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    c.is_control() || is_invisible(c)
}

/// Combining marks (and other zero-width characters) kept after one base
/// character; the rest of a longer run is escaped. Real text needs at most
/// two (Vietnamese tone and vowel marks, Hangul jamo), while a run of
/// hundreds ("Zalgo" text) draws over the lines above and below it.
pub(crate) const MAX_COMBINING_MARKS: usize = 2;

/// Whether `c` draws nothing of its own and attaches to the character
/// before it (combining marks, conjoining jamo), for characters that
/// [`needs_escape`] lets through.
fn is_combining(c: char) -> bool {
    use unicode_width::UnicodeWidthChar as _;
    c.width() == Some(0)
}

/// `s` with every control character (C0, DEL, C1 — so every escape
/// sequence's introducer) and every invisible layout character written out
/// as a visible escape: `\n`, `\r`, `\t`, `\x1b` for the other ASCII
/// controls, `\u{9b}` above ASCII; combining marks beyond
/// [`MAX_COMBINING_MARKS`] in a row are escaped too. Printable text,
/// including non-ASCII letters, accents and backslashes, is returned as is
/// (borrowed, no allocation).
pub fn terminal_safe(s: &str) -> Cow<'_, str> {
    let Some(first) = first_unsafe(s) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..first]);
    // Marks in a row just before `first` (the prefix was safe, so at most
    // the bound).
    let mut marks = s[..first]
        .chars()
        .rev()
        .take_while(|c| is_combining(*c))
        .count();
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
            c if is_combining(c) => {
                marks += 1;
                if marks > MAX_COMBINING_MARKS {
                    let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
                } else {
                    out.push(c);
                }
                continue;
            }
            c => out.push(c),
        }
        marks = 0;
    }
    Cow::Owned(out)
}

/// The byte offset of the first character [`terminal_safe`] must change:
/// one to escape, or a combining mark beyond the bound.
fn first_unsafe(s: &str) -> Option<usize> {
    let mut marks = 0;
    for (i, c) in s.char_indices() {
        if needs_escape(c) {
            return Some(i);
        }
        if is_combining(c) {
            marks += 1;
            if marks > MAX_COMBINING_MARKS {
                return Some(i);
            }
        } else {
            marks = 0;
        }
    }
    None
}

/// Writes `fragment` (a run of a JSON string that serde_json left
/// unescaped) with every character [`terminal_safe`] would escape — C1
/// controls, DEL, invisible layout and format characters — as a JSON
/// `\uXXXX` escape (a surrogate pair above U+FFFF): the same string to any
/// JSON reader, inert on a terminal. The one place JSON output is made
/// terminal-safe (`-o json` of every view, the REST API).
pub(crate) fn write_json_fragment<W: ?Sized + std::io::Write>(
    w: &mut W,
    fragment: &str,
) -> std::io::Result<()> {
    let bytes = fragment.as_bytes();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        // Printable ASCII, nearly all of any output, needs no escape and
        // no decoding (the per-character check was a quarter of `status
        // -o json`'s CPU).
        if matches!(bytes[i], 0x20..=0x7e) {
            i += 1;
            continue;
        }
        let c = fragment[i..].chars().next().unwrap_or_default();
        let len = c.len_utf8();
        if needs_escape(c) {
            w.write_all(&bytes[start..i])?;
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(w, "\\u{unit:04x}")?;
            }
            start = i + len;
        }
        i += len;
    }
    w.write_all(&bytes[start..])
}

/// `s` cut to at most `max` characters, the last of them
/// [`TRUNCATION_MARKER`] when anything was cut; borrowed when it fits. The
/// same cut the edge applies to text it copies from its member cluster.
pub(crate) use crate::fleet::bounds::cut_to as truncate_cell;

/// A table cell from untrusted text: escaped by [`terminal_safe`], then cut
/// to [`MAX_CELL_CHARS`] by [`truncate_cell`].
pub(crate) fn safe_cell(s: &str) -> Cow<'_, str> {
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
pub(crate) const MAX_LOG_CHARS: usize = 1024;

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

/// Upper bound, in bytes, on one log line of either binary, whoever wrote
/// it — the kube crate too, which logs the whole body of an answer it
/// could not decode (`"{text}, {error:?}"`, 13 KB per line at 8 sites and
/// growing with the fleet). [`Untrusted`] bounds each value our own code
/// logs; this bounds what it does not control.
pub const MAX_LOG_LINE_BYTES: usize = 8 * 1024;

/// One formatted log line (an event as tracing-subscriber writes it,
/// newline included) within [`MAX_LOG_LINE_BYTES`], on one line: in text,
/// a line break or carriage return inside it is written `\n`/`\r` (no
/// forged line), and a longer line is cut with `… [N bytes cut]`; in JSON
/// (`json`), a longer line has every string cut to [`MAX_LOG_CHARS`], and
/// if that is still too long only its time, level, target and the start of
/// its message are kept — either way one valid JSON object per line.
/// Borrowed when nothing had to change.
pub fn bounded_log_line(line: &[u8], json: bool) -> Cow<'_, [u8]> {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    let breaks = !json && body.iter().any(|b| matches!(b, b'\n' | b'\r'));
    if body.len() < MAX_LOG_LINE_BYTES && !breaks {
        return Cow::Borrowed(line);
    }
    let text = String::from_utf8_lossy(body);
    let mut out = if json {
        bounded_json_line(&text)
    } else {
        bounded_text_line(&text)
    };
    out.push('\n');
    Cow::Owned(out.into_bytes())
}

fn bounded_text_line(text: &str) -> String {
    let one_line = text.replace('\n', "\\n").replace('\r', "\\r");
    if one_line.len() < MAX_LOG_LINE_BYTES {
        return one_line;
    }
    let mut keep = MAX_LOG_LINE_BYTES - 64;
    while !one_line.is_char_boundary(keep) {
        keep -= 1;
    }
    format!(
        "{}{TRUNCATION_MARKER} [{} bytes cut]",
        &one_line[..keep],
        one_line.len() - keep
    )
}

fn bounded_json_line(text: &str) -> String {
    fn cut_strings(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::String(s) if s.chars().count() > MAX_LOG_CHARS => {
                let bytes = s.len();
                let mut cut = truncate_cell(s, MAX_LOG_CHARS).into_owned();
                cut.push_str(&format!(" [{} bytes cut]", bytes - cut.len()));
                *s = cut;
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(cut_strings),
            serde_json::Value::Object(m) => m.values_mut().for_each(cut_strings),
            _ => {}
        }
    }
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(text) else {
        // Not one JSON object after all: keep it valid and short.
        return serde_json::json!({"fields": {"message": truncate_cell(text, MAX_LOG_CHARS)}})
            .to_string();
    };
    cut_strings(&mut v);
    let once = v.to_string();
    if once.len() < MAX_LOG_LINE_BYTES {
        return once;
    }
    let mut kept = serde_json::Map::new();
    for key in ["timestamp", "level", "target"] {
        if let Some(x) = v.get(key) {
            kept.insert(key.to_owned(), x.clone());
        }
    }
    let message = v
        .pointer("/fields/message")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    kept.insert(
        "fields".to_owned(),
        serde_json::json!({
            "message": message,
            "cut": format!("{} bytes of fields cut", once.len()),
        }),
    );
    serde_json::Value::Object(kept).to_string()
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

    proptest::proptest! {
        /// The ASCII fast path of [`write_json_fragment`] escapes exactly
        /// the characters [`needs_escape`] names, each as its UTF-16
        /// `\u` escapes, and keeps every other one as it is: any text, and
        /// long printable ASCII runs with a character to escape anywhere.
        #[test]
        fn json_fragments_escape_exactly_what_needs_it(s in proptest::prop_oneof![
            "(?s).{0,40}",
            "([ -~]{0,40}[\\x{7f}\\x{9b}\\x{202e}é]?){0,4}",
        ]) {
            let mut out = Vec::new();
            write_json_fragment(&mut out, &s).unwrap();
            let text = String::from_utf8(out).unwrap();
            let mut want = String::new();
            for c in s.chars() {
                if needs_escape(c) {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        want.push_str(&format!("\\u{unit:04x}"));
                    }
                } else {
                    want.push(c);
                }
            }
            proptest::prop_assert_eq!(text, want);
        }
    }

    #[test]
    fn json_fragments_escape_what_a_terminal_would_interpret() {
        let mut out = Vec::new();
        write_json_fragment(
            &mut out,
            "csi\u{9b}31m del\u{7f} bidi\u{202e} tag\u{e0041} é ✓",
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            r"csi\u009b31m del\u007f bidi\u202e tag\udb40\udc41 é ✓"
        );
        let back: String = serde_json::from_str(&format!("\"{text}\"")).unwrap();
        assert_eq!(
            back, "csi\u{9b}31m del\u{7f} bidi\u{202e} tag\u{e0041} é ✓",
            "the exact string"
        );
    }

    #[test]
    fn every_log_line_is_one_bounded_line() {
        // kube's warning on an answer it could not decode: the whole body.
        let body = format!("{{\"items\":[{}]}}", "{\"x\":1},".repeat(20_000));
        let text = format!(
            "2026-01-01T00:00:00Z WARN kube_client::client: {body}, Error(\"x\")\nforged INFO line\n"
        );
        let out = String::from_utf8(bounded_log_line(text.as_bytes(), false).into_owned()).unwrap();
        assert!(out.len() <= MAX_LOG_LINE_BYTES, "{}", out.len());
        assert_eq!(out.matches('\n').count(), 1, "one line");
        assert!(out.ends_with("bytes cut]\n"), "{out}");
        assert!(out.starts_with("2026-01-01T00:00:00Z WARN kube_client::client: {\"items\""));
        let short = b"2026 INFO hub: fine\n";
        assert!(matches!(bounded_log_line(short, false), Cow::Borrowed(_)));
        let forged = b"2026 WARN x: a\r\n2026 INFO forged\n";
        assert_eq!(
            bounded_log_line(forged, false).as_ref(),
            b"2026 WARN x: a\\r\\n2026 INFO forged\n"
        );
        let json =
            serde_json::json!({"timestamp": "t", "level": "WARN", "target": "kube_client::client",
            "fields": {"message": format!("{body}, Error")}})
            .to_string()
                + "\n";
        let out = bounded_log_line(json.as_bytes(), true);
        assert!(out.len() <= MAX_LOG_LINE_BYTES);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["level"], "WARN");
        assert!(
            v["fields"]["message"]
                .as_str()
                .unwrap()
                .ends_with("bytes cut]")
        );
        let many = serde_json::json!({"level": "WARN", "fields": (0..40)
            .map(|i| (format!("f{i}"), serde_json::json!("y".repeat(2000))))
            .collect::<serde_json::Map<_, _>>()})
        .to_string();
        let out = bounded_log_line(many.as_bytes(), true);
        assert!(out.len() <= MAX_LOG_LINE_BYTES);
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&out).unwrap()["level"],
            "WARN"
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

    #[test]
    fn format_tag_and_variation_characters_are_shown() {
        // Soft hyphen, Mongolian vowel separator, interlinear annotation.
        assert_eq!(
            terminal_safe("a\u{ad}b\u{180e}c\u{fff9}d\u{fffb}"),
            r"a\u{ad}b\u{180e}c\u{fff9}d\u{fffb}"
        );
        // Tag characters spell invisible ASCII ("hi"), including the
        // unassigned ones at the block's start.
        assert_eq!(
            terminal_safe("ok\u{e0068}\u{e0069}\u{e0000}\u{e007f}"),
            r"ok\u{e0068}\u{e0069}\u{e0000}\u{e007f}"
        );
        assert_eq!(
            terminal_safe("x\u{fe0f}y\u{e0100}z\u{180b}"),
            r"x\u{fe0f}y\u{e0100}z\u{180b}"
        );
        assert_eq!(terminal_safe("\u{3164}\u{115f}"), r"\u{3164}\u{115f}");
    }

    #[test]
    fn combining_marks_are_bounded_per_base_character() {
        // Two marks on one letter are real text (Vietnamese ệ, decomposed).
        for s in ["e\u{323}\u{302}", "cafe\u{301}", "\u{301}\u{301}"] {
            assert!(matches!(terminal_safe(s), Cow::Borrowed(_)), "{s:?}");
        }
        // A third is escaped, and every one after it; the next letter
        // starts a new count.
        assert_eq!(
            terminal_safe("e\u{301}\u{302}\u{303}\u{304}a\u{301}"),
            "e\u{301}\u{302}\\u{303}\\u{304}a\u{301}"
        );
        let zalgo = format!("Z{}", "\u{36b}".repeat(300));
        let safe = terminal_safe(&zalgo);
        assert_eq!(safe.chars().filter(|c| *c == '\u{36b}').count(), 2);
        assert!(safe.ends_with(r"\u{36b}"));
    }

    #[test]
    fn hostile_text_renders_as_reviewed() {
        let hostile = "build\u{e0020}\u{e0041}\u{ad}ok\u{fe0e}\u{2066}\u{1b}[2J H\u{338}\u{338}\u{338}\u{338}";
        insta::assert_snapshot!(safe_text(hostile, 80));
    }

    /// Text that is visibly unsafe: a character that must be escaped, or
    /// more combining marks in a row than allowed.
    fn unsafe_for_a_terminal(s: &str) -> bool {
        first_unsafe(s).is_some()
    }

    proptest::proptest! {
        #[test]
        fn no_control_or_layout_character_survives(
            s in "\\PC*|[\\x00-\\x{a0}\\x{ad}\\x{300}-\\x{36f}\\x{180b}-\\x{180f}\\x{2000}-\\x{206f}\\x{fe00}-\\x{fe0f}\\x{feff}\\x{fff9}-\\x{fffb}\\x{e0000}-\\x{e007f}\\x{e0100}-\\x{e01ef}a-e]*"
        ) {
            let safe = terminal_safe(&s);
            proptest::prop_assert!(!unsafe_for_a_terminal(&safe), "{safe:?}");
            // Nothing is lost: printable input comes back unchanged.
            if !unsafe_for_a_terminal(&s) {
                proptest::prop_assert_eq!(safe.as_ref(), s.as_str());
            }
            let cell = safe_cell(&s);
            proptest::prop_assert!(cell.chars().count() <= MAX_CELL_CHARS);
            proptest::prop_assert!(!unsafe_for_a_terminal(&cell));
        }
    }
}
