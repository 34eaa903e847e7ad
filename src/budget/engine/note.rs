//! The note every reduced result carries: what was cut, where the full copy is, how to read more.

use crate::budget::spill::SpillHandle;
use crate::ground::units::thousands;

/// Cut lines a note lists before summing up the rest.
const MAX_CUT_LINES: usize = 6;

/// The facts a note reports.
#[derive(Debug, Clone, Default)]
pub struct NoteFacts {
    pub budget: usize,
    /// Bounds in bytes, characters or lines met beside the budget: "10,000 bytes and 256 lines".
    pub size: Option<String>,
    pub strategy: &'static str,
    pub original_bytes: usize,
    pub cuts: Vec<String>,
    /// (lines shown, lines in the spilled text) for a preview: whole lines of the original.
    pub preview_lines: Option<(usize, usize)>,
    /// The preview is of the stripped text: its lines are counted back in the original.
    pub preview_stripped: bool,
    /// The preview ends inside the next line: the bytes of it already shown (where to continue
    /// with `start_char`).
    pub preview_resume_char: Option<usize>,
    /// Where a preview that ends inside a line stopped: a whole JSON element, a word break.
    pub preview_end: Option<crate::ground::text::Boundary>,
    pub spill: Option<SpillHandle>,
    pub spill_error: Option<String>,
    /// The reader is a model behind the proxy: point to `mcp_budget_read`, not the file.
    pub reader_tool: bool,
}

/// The note text.
pub fn render(f: &NoteFacts) -> String {
    let mut s = format!(
        "[mcp-budget] This result was reduced to fit a budget of {} tokens{} ({}; the original was {} bytes).",
        thousands(f.budget),
        f.size.as_ref().map_or(String::new(), |s| format!(" within {s}")),
        f.strategy,
        thousands(f.original_bytes)
    );
    for cut in f.cuts.iter().take(MAX_CUT_LINES) {
        s.push_str("\n- ");
        s.push_str(cut);
    }
    if f.cuts.len() > MAX_CUT_LINES {
        s.push_str(&format!(
            "\n- and {} more cuts (the original has everything)",
            f.cuts.len() - MAX_CUT_LINES
        ));
    }
    if let Some((shown, total)) = f.preview_lines {
        let what = if f.preview_stripped {
            " of the original, stripped as above,"
        } else {
            ""
        };
        s.push_str(&format!(
            "\n- preview: lines 1-{} of {}{what} shown",
            thousands(shown),
            thousands(total)
        ));
        if let Some(c) = f.preview_resume_char {
            s.push_str(&format!(
                ", and the first {} bytes of line {}",
                thousands(c),
                thousands(shown + 1)
            ));
            if let Some(end) = f.preview_end {
                s.push_str(&format!(" (it stops {})", end.words()));
            }
        }
    }
    match (&f.spill, &f.spill_error) {
        (Some(h), _) => {
            s.push_str(&format!(
                "\nFull original: {} ({})",
                h.path.display(),
                h.uri()
            ));
            let next = f.preview_lines.map_or(1, |(shown, _)| shown + 1);
            let resume = f.preview_resume_char.filter(|_| f.preview_lines.is_some());
            if f.reader_tool {
                let start_char = resume.map_or(String::new(), |c| format!(" and start_char {c}"));
                s.push_str(&format!(
                    "\nRead more: call mcp_budget_read with handle \"{}\" and start_line {next}{start_char}, or with grep to find lines.",
                    h.id
                ));
            } else {
                let byte = resume.map_or(String::new(), |c| format!(", byte {c}"));
                s.push_str(&format!(
                    "\nRead more: open the file (continue at line {next}{byte}) or grep it."
                ));
            }
        }
        (None, Some(e)) => s.push_str(&format!("\nThe full original could NOT be saved: {e}")),
        (None, None) => {}
    }
    s
}
