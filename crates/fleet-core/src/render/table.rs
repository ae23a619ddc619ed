//! The kubectl-like plain table all renderers share: uppercase headers, no
//! borders, two spaces between columns, no trailing whitespace, optional
//! ANSI colour per cell. Every cell is made terminal-safe and cut to a width
//! on the way in ([`crate::render::safe::safe_cell`]), so no view can print
//! a site's text raw.

use std::borrow::Cow;

use owo_colors::{OwoColorize, Style};
use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Padding, Style as TableStyle};

use crate::api::{Phase, Severity};
use crate::render::safe::{MAX_CELL_CHARS, safe_text, terminal_safe};

/// Gap between columns, as in `kubectl get` output.
pub(crate) const GAP: usize = 2;

/// A table of plain-text cells plus the colour each cell gets when colour
/// is on. Colour is applied after layout, so alignment never depends on it.
#[derive(Debug, Clone, Default)]
pub(crate) struct PlainTable {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
    styles: Vec<Vec<Option<Style>>>,
    /// Longest cell, in characters, once escaped; `None` keeps cells whole.
    max_cell: Option<usize>,
}

impl PlainTable {
    /// A table with these column headers (uppercase by convention).
    pub(crate) fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Self {
        Self {
            headers: headers.into_iter().map(Into::into).collect(),
            max_cell: Some(MAX_CELL_CHARS),
            ..Self::default()
        }
    }

    /// The same table keeping long cells whole (still escaped): for views
    /// that promise the whole text, such as `describe`. What a site can
    /// write is bounded by the CRD's `maxLength`s.
    pub(crate) fn whole_cells(mut self) -> Self {
        self.max_cell = None;
        self
    }

    /// Append a row of cells with no colour.
    pub(crate) fn push(&mut self, cells: Vec<String>) {
        let n = cells.len();
        self.push_styled(cells, vec![None; n]);
    }

    /// Append a row and the colour of each of its cells. Cells are escaped
    /// and cut to [`MAX_CELL_CHARS`] characters with a marker (unless
    /// [`PlainTable::whole_cells`]).
    pub(crate) fn push_styled(&mut self, cells: Vec<String>, styles: Vec<Option<Style>>) {
        let cells = cells
            .into_iter()
            .map(|cell| {
                let safe = match self.max_cell {
                    Some(max) => safe_text(&cell, max),
                    None => terminal_safe(&cell),
                };
                let escaped = match safe {
                    Cow::Owned(escaped) => Some(escaped),
                    Cow::Borrowed(_) => None,
                };
                escaped.unwrap_or(cell)
            })
            .collect();
        self.rows.push(cells);
        self.styles.push(styles);
    }

    /// Lay the table out; every line ends with `\n`.
    pub(crate) fn render(&self, color: bool) -> String {
        let columns = self.headers.len();
        let mut builder = Builder::default();
        builder.push_record(self.headers.iter().cloned());
        for row in &self.rows {
            builder.push_record(row.iter().cloned());
        }
        let mut table = builder.build();
        table
            .with(TableStyle::empty())
            .with(Padding::new(0, GAP, 0, 0))
            .modify(Columns::last(), Padding::zero());
        let laid_out = table.to_string();
        let mut lines: Vec<String> = laid_out.lines().map(|l| l.trim_end().to_owned()).collect();
        if color && columns > 0 {
            let starts = column_starts(&lines[0], &self.headers);
            for (line, (cells, styles)) in lines
                .iter_mut()
                .skip(1)
                .zip(self.rows.iter().zip(&self.styles))
            {
                *line = colorize_line(line, &starts, cells, styles);
            }
        }
        let mut out = lines.join("\n");
        out.push('\n');
        out
    }
}

/// Display column of each column's start, found from the (ASCII) header line.
fn column_starts(header_line: &str, headers: &[String]) -> Vec<usize> {
    let mut starts = Vec::with_capacity(headers.len());
    let mut from = 0;
    for h in headers {
        let at = header_line[from..]
            .find(h.as_str())
            .map_or(from, |i| from + i);
        starts.push(at);
        from = at + h.len();
    }
    starts
}

fn colorize_line(
    line: &str,
    starts: &[usize],
    cells: &[String],
    styles: &[Option<Style>],
) -> String {
    let chars: Vec<char> = line.chars().collect();
    // `starts` are display columns; a wide character (an emoji, CJK) takes
    // two columns but one char, so map columns to char indices.
    let mut column_of = Vec::with_capacity(chars.len() + 1);
    let mut column = 0;
    for c in &chars {
        column_of.push(column);
        column += tabled::grid::util::string::get_text_width(c.encode_utf8(&mut [0; 4]));
    }
    column_of.push(column);
    let mut out = String::with_capacity(line.len() + 32);
    let mut pos = 0;
    for ((start_column, cell), style) in starts.iter().zip(cells).zip(styles) {
        let Some(style) = style else { continue };
        let Some(start) = column_of.iter().position(|c| c == start_column) else {
            continue;
        };
        let len = cell.chars().count();
        if cell.is_empty() || start < pos || start + len > chars.len() {
            continue;
        }
        out.extend(&chars[pos..start]);
        let text: String = chars[start..start + len].iter().collect();
        out.push_str(&text.style(*style).to_string());
        pos = start + len;
    }
    out.extend(&chars[pos..]);
    out
}

/// Colour of a phase: Connected green, Stale yellow, Unreachable red, Pending cyan, Sleeping blue.
pub(crate) fn phase_style(phase: Phase) -> Style {
    match phase {
        Phase::Connected => Style::new().green(),
        Phase::Stale => Style::new().yellow(),
        Phase::Unreachable => Style::new().red(),
        Phase::Pending => Style::new().cyan(),
        Phase::Sleeping => Style::new().blue(),
    }
}

/// Colour of a severity: critical bold red, high red, medium yellow, low none.
pub(crate) fn severity_style(severity: Severity) -> Option<Style> {
    match severity {
        Severity::Critical => Some(Style::new().red().bold()),
        Severity::High => Some(Style::new().red()),
        Severity::Medium => Some(Style::new().yellow()),
        Severity::Low => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> PlainTable {
        let mut t = PlainTable::new(["NAME", "PHASE", "NOTE"]);
        t.push_styled(
            vec!["a".into(), "Connected".into(), "x".into()],
            vec![None, Some(phase_style(Phase::Connected)), None],
        );
        t.push_styled(
            vec!["long-name".into(), "Stale".into(), String::new()],
            vec![None, Some(phase_style(Phase::Stale)), None],
        );
        t
    }

    #[test]
    fn plain_layout_has_two_space_gaps_and_no_trailing_spaces() {
        assert_eq!(
            table().render(false),
            "NAME       PHASE      NOTE\na          Connected  x\nlong-name  Stale\n"
        );
    }

    #[test]
    fn colour_does_not_move_columns() {
        let colored = table().render(true);
        assert_eq!(
            colored,
            "NAME       PHASE      NOTE\na          \u{1b}[32mConnected\u{1b}[0m  x\nlong-name  \u{1b}[33mStale\u{1b}[0m\n"
        );
    }

    #[test]
    fn hostile_cells_are_escaped_and_cut_without_moving_columns() {
        let mut t = PlainTable::new(["NAME", "MESSAGE", "PHASE"]);
        t.push_styled(
            vec![
                "a".into(),
                format!("\u{1b}[2J\u{1b}]0;title\u{7}{}", "x".repeat(500)),
                "Stale".into(),
            ],
            vec![None, None, Some(phase_style(Phase::Stale))],
        );
        let out = t.render(true);
        let row = out.lines().nth(1).unwrap();
        assert!(
            row.starts_with(r"a     \x1b[2J\x1b]0;title\x07xxx"),
            "{row}"
        );
        assert!(row.contains("x…  \u{1b}[33mStale\u{1b}[0m"), "{row}");
        // The only escape sequence left is the colour the table added.
        assert_eq!(out.matches('\u{1b}').count(), 2, "{out}");
    }

    #[test]
    fn header_only() {
        assert_eq!(PlainTable::new(["A", "B"]).render(true), "A  B\n");
    }
}
