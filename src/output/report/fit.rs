//! A terminal table that fits its width: numbers are never split (a number column is as wide
//! as its widest number), long text is cut with `…` (the files keep it whole), headers wrap at
//! their spaces, and when cutting text is not enough the least important columns are left out,
//! named under the table. Drawn by comfy-table in the house style ([`super::grid`]), each
//! column at the width chosen here.

use comfy_table::{Cell, CellAlignment, ContentArrangement};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::grid::{grid, Fit};

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Right-aligned, never split nor cut.
    Number,
    /// Cut with `…` down to `min` columns of the terminal when the table needs the room.
    Text { min: usize },
}

/// A column: its header, its kind, and how much it matters (0: always shown; a higher rank is
/// left out first).
#[derive(Debug, Clone)]
pub(crate) struct Column {
    pub header: String,
    pub kind: Kind,
    pub rank: u8,
}

impl Column {
    pub fn num(header: &str, rank: u8) -> Column {
        Column {
            header: header.to_string(),
            kind: Kind::Number,
            rank,
        }
    }

    pub fn text(header: &str, min: usize, rank: u8) -> Column {
        Column {
            header: header.to_string(),
            kind: Kind::Text { min },
            rank,
        }
    }
}

/// A table of columns and rows of cells (each the text as it is shown).
#[derive(Debug, Clone, Default)]
pub(crate) struct Fitted {
    columns: Vec<Column>,
    rows: Vec<Vec<String>>,
}

/// The table drawn, the headers of the columns left out, and whether a cell was cut.
#[derive(Debug, Clone)]
pub(crate) struct Drawn {
    pub text: String,
    pub left_out: Vec<String>,
    pub cut: bool,
}

/// A table's border and padding per column (`│ x ┆ y │`), and once.
const PER_COLUMN: usize = 3;
const ONCE: usize = 1;

impl Fitted {
    pub fn new(columns: Vec<Column>) -> Fitted {
        Fitted {
            columns,
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.columns.len());
        self.rows.push(cells);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table at `width` (None: the terminal's when stdout is one, else as wide as its
    /// content).
    pub fn draw(&self, width: Option<u16>) -> Drawn {
        let width = width.or_else(terminal_width);
        let (shown, widths) = match width {
            Some(w) => self.layout(usize::from(w)),
            None => {
                let all: Vec<usize> = (0..self.columns.len()).collect();
                let natural = all.iter().map(|&i| self.natural(i)).collect();
                (all, natural)
            }
        };
        let mut t = grid(Fit::Content);
        t.set_content_arrangement(ContentArrangement::Disabled);
        t.set_header(
            shown
                .iter()
                .zip(&widths)
                .map(|(&i, &w)| Cell::new(wrap_words(&self.columns[i].header, w))),
        );
        let mut any_cut = false;
        for row in &self.rows {
            t.add_row(shown.iter().zip(&widths).map(|(&i, &w)| {
                let shown = cut(&row[i], w);
                // a cut cell can be as long in bytes as the whole one (`abcdef` -> `abc…`)
                any_cut |= shown != row[i];
                let cell = Cell::new(shown);
                match self.columns[i].kind {
                    Kind::Number => cell.set_alignment(CellAlignment::Right),
                    Kind::Text { .. } => cell,
                }
            }));
        }
        let left_out = (0..self.columns.len())
            .filter(|i| !shown.contains(i))
            .map(|i| self.columns[i].header.clone())
            .collect();
        Drawn {
            text: t.to_string(),
            left_out,
            cut: any_cut,
        }
    }

    /// The table at `width` with the line under it that says what fitting did and where the
    /// whole is (`whole_in`), that line wrapped at `wrap_at`; ends in a line break.
    pub fn shown(&self, width: Option<u16>, wrap_at: Option<u16>, whole_in: &str) -> String {
        let d = self.draw(width);
        let mut out = d.text.clone();
        out.push('\n');
        if let Some(note) = left_out_note(&d, whole_in) {
            out.push_str(&wrap_prose(&note, wrap_at, 1));
            out.push('\n');
        }
        out
    }

    /// The widest cell of column `i`.
    fn cells(&self, i: usize) -> usize {
        self.rows.iter().map(|r| r[i].width()).max().unwrap_or(0)
    }

    /// Column `i` with its header on one line and no cell cut.
    fn natural(&self, i: usize) -> usize {
        self.cells(i).max(self.columns[i].header.width()).max(1)
    }

    /// Column `i` with its header wrapped at its spaces and no cell cut.
    fn unwrapped(&self, i: usize) -> usize {
        self.cells(i)
            .max(longest_word(&self.columns[i].header))
            .max(1)
    }

    /// The narrowest column `i` may be: its header wrapped at its spaces, and a number whole.
    fn least(&self, i: usize) -> usize {
        let word = longest_word(&self.columns[i].header);
        match self.columns[i].kind {
            Kind::Number => self.cells(i).max(word).max(1),
            Kind::Text { min } => min.max(word).min(self.natural(i)),
        }
    }

    /// The columns shown and their widths at `width`: text cut first (the widest first), then
    /// the columns of the highest rank left out, one at a time, the last of equals first.
    fn layout(&self, width: usize) -> (Vec<usize>, Vec<usize>) {
        // each column's three widths, measured once: its rows are scanned here only
        let all: Vec<usize> = (0..self.columns.len()).collect();
        let natural: Vec<usize> = all.iter().map(|&i| self.natural(i)).collect();
        let unwrapped: Vec<usize> = all.iter().map(|&i| self.unwrapped(i)).collect();
        let least: Vec<usize> = all.iter().map(|&i| self.least(i)).collect();
        let mut shown = all;
        loop {
            let mut widths: Vec<usize> = shown.iter().map(|&i| natural[i]).collect();
            let room = width.saturating_sub(PER_COLUMN * shown.len() + ONCE);
            let mut total: usize = widths.iter().sum();
            // headers wrap first (no cell is cut), then text is cut: each time the widest
            // column that can still give a column
            for floor in [&unwrapped, &least] {
                while total > room {
                    let widest = (0..shown.len())
                        .filter(|&k| widths[k] > floor[shown[k]])
                        .max_by_key(|&k| (widths[k], std::cmp::Reverse(k)));
                    let Some(k) = widest else { break };
                    widths[k] -= 1;
                    total -= 1;
                }
            }
            if total <= room {
                return (shown, widths);
            }
            let drop = shown
                .iter()
                .enumerate()
                .filter(|(_, &i)| self.columns[i].rank > 0)
                .max_by_key(|(k, &i)| (self.columns[i].rank, *k))
                .map(|(k, _)| k);
            match drop {
                Some(k) => {
                    shown.remove(k);
                }
                // nothing more can go: as narrow as it can be, wider than asked
                None => return (shown, widths),
            }
        }
    }
}

/// The terminal's width when stdout is one.
pub(crate) fn terminal_width() -> Option<u16> {
    grid(Fit::Wrap(None)).width()
}

/// The longest word of a header (where it may wrap).
fn longest_word(s: &str) -> usize {
    s.split(' ').map(UnicodeWidthStr::width).max().unwrap_or(0)
}

/// A header wrapped at its spaces into lines of at most `width` columns.
fn wrap_words(s: &str, width: usize) -> String {
    let mut lines: Vec<String> = Vec::new();
    for word in s.split(' ') {
        match lines.last_mut() {
            Some(line) if line.width() + 1 + word.width() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines.join("\n")
}

/// `s` in at most `width` columns of the terminal: cut with `…` when it is wider.
pub(crate) fn cut(s: &str, width: usize) -> String {
    if s.width() <= width {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// The line under a table that says what fitting it to the width did (columns left out, text
/// cut) and where the whole of it is.
pub(crate) fn left_out_note(d: &Drawn, whole_in: &str) -> Option<String> {
    let left = (!d.left_out.is_empty())
        .then(|| format!("left out to fit the width: {}", d.left_out.join(", ")));
    let cut = d.cut.then_some("… marks text cut to fit it");
    let said: Vec<&str> = [left.as_deref(), cut].into_iter().flatten().collect();
    if said.is_empty() {
        return None;
    }
    Some(format!(
        "({}; all of it in {whole_in}, or give --width)",
        said.join("; ")
    ))
}

/// `text` wrapped at its spaces to `width` terminal columns (None: as it is), each line after
/// a paragraph's first indented by `hang` spaces; the paragraphs (lines) of `text` stay apart.
/// A word wider than the width stays whole on a line of its own (a path, a URL).
pub(crate) fn wrap_prose(text: &str, width: Option<u16>, hang: usize) -> String {
    let Some(width) = width.map(usize::from) else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len() + text.len() / 40);
    for (n, para) in text.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let lead = para.len() - para.trim_start_matches(' ').len();
        let mut used = 0;
        for (i, word) in para[lead..].split(' ').enumerate() {
            let w = word.width();
            if i == 0 {
                out.push_str(&para[..lead]);
                out.push_str(word);
                used = lead + w;
            } else if used + 1 + w > width && used > hang {
                out.push('\n');
                out.push_str(&" ".repeat(hang));
                out.push_str(word);
                used = hang + w;
            } else {
                out.push(' ');
                out.push_str(word);
                used += 1 + w;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Fitted {
        let mut t = Fitted::new(vec![
            Column::text("tool", 8, 0),
            Column::num("wire tokens", 0),
            Column::num("latency", 2),
            Column::text("strategy", 6, 1),
        ]);
        t.row(vec![
            "list_pull_requests".into(),
            "154,788".into(),
            "131 ms".into(),
            "projected".into(),
        ]);
        t.row(vec![
            "read_file".into(),
            "28,943".into(),
            "11 ms".into(),
            "spilled".into(),
        ]);
        t
    }

    fn widest_line(s: &str) -> usize {
        s.lines().map(UnicodeWidthStr::width).max().unwrap()
    }

    #[test]
    fn a_table_wide_enough_is_drawn_whole() {
        let d = table().draw(Some(200));
        assert!(d.left_out.is_empty());
        assert!(d.text.contains("list_pull_requests") && d.text.contains("154,788"));
    }

    #[test]
    fn text_is_cut_before_a_column_goes_and_numbers_are_never_split() {
        // all four, as narrow as they go (a header's longest word is its least: 8 + 7 + 7 + 8)
        // and 13 of border
        let d = table().draw(Some(43));
        assert!(d.left_out.is_empty(), "{:?}", d.left_out);
        assert!(widest_line(&d.text) <= 43, "{}", d.text);
        assert!(
            d.text.contains("154,788") && d.text.contains("28,943"),
            "{}",
            d.text
        );
        assert!(d.text.contains("list_pu…"), "{}", d.text);
        // headers wrap before any cell is cut: 18 + 7 + 7 + 9 and the border is 54
        let d = table().draw(Some(54));
        assert!(!d.text.contains('…'), "{}", d.text);
        assert!(!d.text.contains("wire tokens"), "{}", d.text);
        assert!(widest_line(&d.text) <= 54, "{}", d.text);
        // too narrow for all four: the highest rank goes first
        let d = table().draw(Some(42));
        assert_eq!(d.left_out, ["latency"]);
        assert!(widest_line(&d.text) <= 42, "{}", d.text);
        let d = table().draw(Some(32));
        assert_eq!(d.left_out, ["latency", "strategy"]);
        assert!(widest_line(&d.text) <= 32, "{}", d.text);
        assert!(d.text.contains("154,788"), "{}", d.text);
        // rank 0 stays, however narrow: wider than asked rather than a number split
        let d = table().draw(Some(5));
        assert_eq!(d.left_out, ["latency", "strategy"]);
        assert!(d.text.contains("154,788"), "{}", d.text);
    }

    #[test]
    fn prose_wraps_at_spaces_with_a_hanging_indent_and_keeps_long_words_whole() {
        let text = "  error   demo/read_file: result is 24,776 tokens, over the cap [rule]";
        assert_eq!(
            wrap_prose(text, Some(40), 10),
            "  error   demo/read_file: result is\n          24,776 tokens, over the cap\n          [rule]"
        );
        assert_eq!(wrap_prose(text, None, 10), text);
        assert_eq!(
            wrap_prose("see /a/very/long/path/that/does/not/fit here", Some(10), 0),
            "see\n/a/very/long/path/that/does/not/fit\nhere"
        );
        assert_eq!(
            wrap_prose("one\ntwo three", Some(8), 2),
            "one\ntwo\n  three"
        );
    }

    #[test]
    fn wide_characters_are_measured_in_terminal_columns() {
        assert_eq!(cut("日本語のテキスト", 7), "日本語…");
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcd", 3), "ab…");
        // as many bytes as the whole, and still said to be cut
        assert_eq!(cut("abcdef", 4), "abc…");
        let mut t = Fitted::new(vec![Column::text("name", 4, 0)]);
        t.row(vec!["abcdef".into()]);
        assert!(t.draw(Some(8)).text.contains("abc…") && t.draw(Some(8)).cut);
        assert_eq!(
            wrap_words("wire tokens per call", 11),
            "wire tokens\nper call"
        );
        assert_eq!(
            left_out_note(&table().draw(Some(43)), "probes.csv and audit.json").unwrap(),
            "(… marks text cut to fit it; all of it in probes.csv and audit.json, or give --width)"
        );
        // three columns need 44 uncut: at 40 one goes and the text is cut
        let d = table().draw(Some(40));
        assert_eq!(
            left_out_note(&d, "probes.csv and audit.json").unwrap(),
            "(left out to fit the width: latency; … marks text cut to fit it; all of it in probes.csv and audit.json, or give --width)"
        );
        assert_eq!(left_out_note(&table().draw(Some(200)), "probes.csv"), None);
    }
}
