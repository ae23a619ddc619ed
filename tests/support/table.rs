//! Tables as a user reads them (`kubectl fleet status`, `kubectl get`,
//! `incidents`, the tables inside `describe`): cells found by their
//! column's header, never by position, so a new column cannot silently
//! shift what an assertion reads.
//!
//! A table is a header row of upper-case names separated by two spaces or
//! more (a name may hold one space: `LAST HEARTBEAT`), then rows whose
//! cells start where their header starts (kubectl's and the plugin's
//! left-aligned layout). The table ends at the first blank line.

/// One parsed table.
#[derive(Debug, Clone)]
pub struct Table {
    /// Column names and the character offset each starts at.
    columns: Vec<(String, usize)>,
    rows: Vec<Vec<String>>,
    text: String,
}

impl Table {
    /// The table that starts at the first line of `text` (leading
    /// indentation, as in `describe`'s nested tables, is allowed).
    #[track_caller]
    pub fn parse(text: &str) -> Table {
        let mut lines = text.lines();
        let header = lines
            .next()
            .unwrap_or_else(|| panic!("no table in an empty text"));
        let columns = columns_of(header);
        assert!(
            !columns.is_empty() && columns.iter().all(|(name, _)| is_header(name)),
            "not a table header: {header:?}\n{text}"
        );
        let indent = indent_of(header);
        let rows = lines
            .take_while(|l| in_table(l, indent))
            .map(|l| cells_of(l, &columns, text))
            .collect();
        Table {
            columns,
            rows,
            text: text.to_owned(),
        }
    }

    /// The table whose header line starts with `first` (after
    /// indentation) anywhere in `text`, e.g. `Table::find(describe,
    /// "TYPE ")` for the conditions of `describe SITE`.
    #[track_caller]
    pub fn find(text: &str, first: &str) -> Table {
        let at = text
            .lines()
            .scan(0, |offset, line| {
                let here = *offset;
                *offset += line.len() + 1;
                Some((here, line))
            })
            .find(|(_, l)| l.trim_start().starts_with(first))
            .map(|(at, _)| at)
            .unwrap_or_else(|| panic!("no table starting {first:?} in\n{text}"));
        Table::parse(&text[at..])
    }

    /// The column names, in order.
    pub fn headers(&self) -> Vec<&str> {
        self.columns.iter().map(|(n, _)| n.as_str()).collect()
    }

    fn index(&self, column: &str) -> usize {
        self.columns
            .iter()
            .position(|(n, _)| n == column)
            .unwrap_or_else(|| {
                panic!(
                    "no column {column:?} (columns: {:?})\n{}",
                    self.headers(),
                    self.text
                )
            })
    }

    /// Every cell of `column`, top to bottom.
    #[track_caller]
    pub fn column(&self, column: &str) -> Vec<&str> {
        let i = self.index(column);
        self.rows.iter().map(|r| r[i].as_str()).collect()
    }

    /// The cell of `column` in the row whose first cell is `key`.
    #[track_caller]
    pub fn cell(&self, key: &str, column: &str) -> &str {
        let i = self.index(column);
        &self.row_of(key)[i]
    }

    /// The row whose first cell is `key`, as (column, cell) pairs.
    #[track_caller]
    pub fn row(&self, key: &str) -> Vec<(&str, &str)> {
        self.columns
            .iter()
            .map(|(n, _)| n.as_str())
            .zip(self.row_of(key).iter().map(String::as_str))
            .collect()
    }

    fn row_of(&self, key: &str) -> &Vec<String> {
        let mut found = self.rows.iter().filter(|r| r[0] == key);
        let row = found
            .next()
            .unwrap_or_else(|| panic!("no row {key:?}\n{}", self.text));
        assert!(found.next().is_none(), "two rows {key:?}\n{}", self.text);
        row
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }
}

/// Leading spaces of `line`.
fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Whether `line` is a row of a table whose header is indented by
/// `indent`: not blank, and indented as much (`describe`'s nested tables
/// end at the next unindented field, e.g. `Events:`).
fn in_table(line: &str, indent: usize) -> bool {
    !line.trim().is_empty() && indent_of(line) >= indent
}

/// An age as the plugin measures it: `45s`, `2m30s`, `9h`, `29d`.
fn is_age(cell: &str) -> bool {
    let mut units = 0;
    let mut rest = cell;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let unit = rest[digits..].chars().next();
        if digits == 0 || !unit.is_some_and(|u| "smhdy".contains(u)) {
            return false;
        }
        rest = &rest[digits + 1..];
        units += 1;
    }
    (1..=2).contains(&units)
}

/// A header name: upper-case words (letters, digits, `-`, `/`, `.`).
fn is_header(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || " -/.()".contains(c))
}

/// Names and start offsets (in characters) of the header's columns.
fn columns_of(header: &str) -> Vec<(String, usize)> {
    let chars: Vec<char> = header.chars().collect();
    let mut columns: Vec<(String, usize)> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == ' ' {
            i += 1;
            continue;
        }
        let start = i;
        // A name runs until two spaces in a row (or the end).
        while i < chars.len() && !(chars[i] == ' ' && chars.get(i + 1).is_none_or(|c| *c == ' ')) {
            i += 1;
        }
        columns.push((chars[start..i].iter().collect(), start));
    }
    columns
}

/// The cells of `line` under `columns`: each from its column's start to
/// the next column's, trimmed. A cell that does not start at its column
/// (text in the gap before it) fails the test: the table is misaligned.
fn cells_of(line: &str, columns: &[(String, usize)], text: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let slice = |from: usize, to: usize| -> String {
        chars[from.min(chars.len())..to.min(chars.len())]
            .iter()
            .collect()
    };
    columns
        .iter()
        .enumerate()
        .map(|(i, (name, start))| {
            assert!(
                *start == 0 || chars.get(start - 1).is_none_or(|c| *c == ' '),
                "the cell under {name:?} does not start at its column in {line:?}\n{text}"
            );
            let end = columns.get(i + 1).map_or(chars.len(), |(_, s)| *s);
            slice(*start, end).trim_end().to_owned()
        })
        .collect()
}

/// `text` with each age (`5s`, `2m30s`: a value measured against the
/// clock) under `column`, in every table whose header starts with `first`
/// and has that column, replaced by `mask` in place (padded to the cell's
/// width, so the rest of the row stays where it was), for a snapshot.
/// Only those cells change: `never`, `-` and everything else, header
/// included, are compared as printed.
#[track_caller]
pub fn mask_column(text: &str, first: &str, column: &str, mask: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // The column's span and the header's indentation, inside a table.
    let mut current: Option<(usize, usize, usize)> = None;
    let mut masked = 0;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        match current {
            None if body.trim_start().starts_with(first) => {
                // A table of this header without the column is left as it is.
                let columns = columns_of(body);
                current = columns.iter().position(|(n, _)| n == column).map(|i| {
                    let end = columns.get(i + 1).map_or(usize::MAX, |(_, s)| *s);
                    (columns[i].1, end, indent_of(body))
                });
                out.push_str(line);
            }
            Some((_, _, indent)) if !in_table(body, indent) => {
                current = None;
                out.push_str(line);
            }
            Some((start, end, _)) => {
                let chars: Vec<char> = body.chars().collect();
                let end = end.min(chars.len());
                let value: String = chars[start.min(end)..end].iter().collect();
                if !is_age(value.trim_end()) {
                    // `never`, `-`, `<invalid>`: not measured, compared as printed.
                    out.push_str(line);
                    continue;
                }
                let mut cell: String = mask.to_owned();
                if end < chars.len() {
                    let width = end - start;
                    assert!(
                        mask.chars().count() < width,
                        "{mask:?} does not fit {column:?} in {body:?}"
                    );
                    while cell.chars().count() < width {
                        cell.push(' ');
                    }
                }
                out.extend(chars[..start.min(chars.len())].iter());
                out.push_str(&cell);
                out.extend(chars[end..].iter());
                out.push_str(&line[body.len()..]);
                masked += 1;
            }
            None => out.push_str(line),
        }
    }
    assert!(masked > 0, "no cell under {column:?} to mask in\n{text}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "\
NAME    MODE  PHASE     LAST HEARTBEAT  REASON
site-a  Push  Pending?  never           NotJudgedByHub
site-b  Pull  Stale     5s              -

Sites: 2
";

    #[test]
    fn cells_are_found_by_header_including_two_word_headers() {
        let t = Table::parse(STATUS);
        assert_eq!(
            t.headers(),
            ["NAME", "MODE", "PHASE", "LAST HEARTBEAT", "REASON"]
        );
        assert_eq!(t.column("NAME"), ["site-a", "site-b"]);
        assert_eq!(t.cell("site-b", "LAST HEARTBEAT"), "5s");
        assert_eq!(t.cell("site-a", "REASON"), "NotJudgedByHub");
        assert_eq!(t.len(), 2);
    }

    #[test]
    #[should_panic(expected = "does not start at its column")]
    fn a_misaligned_row_fails() {
        Table::parse("NAME  PHASE\nsite-aa Stale\n");
    }

    #[test]
    #[should_panic(expected = "no column")]
    fn an_unknown_column_fails() {
        Table::parse(STATUS).column("AGE");
    }

    #[test]
    fn masking_keeps_every_other_cell_in_place() {
        let masked = mask_column(STATUS, "NAME ", "LAST HEARTBEAT", "<age>");
        assert_eq!(
            masked,
            "\
NAME    MODE  PHASE     LAST HEARTBEAT  REASON
site-a  Push  Pending?  never           NotJudgedByHub
site-b  Pull  Stale     <age>           -

Sites: 2
"
        );
    }
}
