//! The grep windows of `mcp_budget_read`: in a line longer than the budget, a window of
//! context around each match, as many as fit, each saying where it starts for `start_char`.

use crate::ground::text::{ceil_char_boundary, floor_char_boundary};
use crate::ground::tokens::Tokenizer;

/// Bytes of context shown on each side of a match in a long line.
pub(super) const CONTEXT_BYTES: usize = 160;

/// The windows around a long line's matches that fit, and where to continue when not all did.
pub(super) struct Windows {
    pub(super) text: String,
    pub(super) tokens: usize,
    /// Byte offset in the line of the first match not shown.
    pub(super) resume_at: Option<usize>,
}

/// A window of [`CONTEXT_BYTES`] each side of every match in `whole[from..]` (line `number`),
/// as many as fit `room` tokens, `max_bytes` and `max_lines` (one window a line), each with the
/// byte range it shows (for `start_char`).
pub(super) fn windows(
    re: &regex::Regex,
    whole: &str,
    from: usize,
    number: usize,
    room: usize,
    (max_bytes, max_lines): (usize, usize),
    tokenizer: Tokenizer,
) -> Windows {
    let mut w = Windows {
        text: String::new(),
        tokens: 0,
        resume_at: None,
    };
    let mut shown_to = from;
    for m in re.find_iter(&whole[from..]) {
        let (start, end) = (from + m.start(), from + m.end());
        if start < shown_to {
            continue;
        }
        let a = floor_char_boundary(whole, start.saturating_sub(CONTEXT_BYTES).max(shown_to));
        // a long match is shown in part: the window never passes 4 contexts
        let mut b = ceil_char_boundary(
            whole,
            (end + CONTEXT_BYTES)
                .min(a + 4 * CONTEXT_BYTES)
                .min(whole.len()),
        );
        // the context after the match ends on a boundary, never inside a value
        if b < whole.len() {
            let (cut, _) = crate::ground::text::boundary_before(&whole[a..], b - a);
            if a + cut >= end {
                b = a + cut;
            }
        }
        let mut piece = format!(
            "{number}: [bytes {a}-{b} of {}; start_char={a}] {}\n",
            whole.len(),
            &whole[a..b]
        );
        let mut cost = tokenizer.count(&piece);
        let over = w.tokens + cost > room
            || w.text.len() + piece.len() > max_bytes
            || w.text.matches('\n').count() >= max_lines;
        if over && !w.text.is_empty() {
            w.resume_at = Some(a);
            break;
        }
        if over {
            // not even one window fits: as much of it as does, and continue after the match
            // (never the same page again)
            let head = format!(
                "{number}: [bytes {a}-{b} of {}; start_char={a}] ",
                whole.len()
            );
            let left = room.saturating_sub(tokenizer.count(&head) + 1);
            let bytes_left = max_bytes.saturating_sub(head.len() + 1);
            let cut = floor_char_boundary(
                &whole[a..b],
                fitting_prefix(&whole[a..b], left, tokenizer).min(bytes_left),
            );
            piece = format!("{head}{}\n", &whole[a..a + cut]);
            cost = tokenizer.count(&piece);
            w.text.push_str(&piece);
            w.tokens += cost;
            let next = ceil_char_boundary(whole, (a + cut).max(start + 1).min(whole.len()));
            if next < whole.len() {
                w.resume_at = Some(next);
            }
            break;
        }
        w.text.push_str(&piece);
        w.tokens += cost;
        shown_to = b;
        if b < end {
            // the match goes on past its window: the next page continues there
            w.resume_at = Some(b);
            break;
        }
    }
    w
}

/// The longest char-boundary prefix of `text` within `limit` tokens (bisection on its length).
pub(super) fn fitting_prefix(text: &str, limit: usize, tokenizer: Tokenizer) -> usize {
    let (mut lo, mut hi) = (0usize, text.len().min(limit * 8));
    while lo < hi {
        let mut mid = (lo + hi).div_ceil(2);
        while !text.is_char_boundary(mid) {
            mid -= 1;
        }
        if mid <= lo {
            break;
        }
        if tokenizer.count(&text[..mid]) <= limit {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::super::read;
    use super::super::tests::{args, continuation, store_with};
    use super::*;

    /// Issue 12, item 15: a match deep inside a one-line spill (a 124 KB JSON line) is shown
    /// in a window with the byte offset to continue from, and matches that do not fit are
    /// continued, not claimed searched.
    #[test]
    fn grep_shows_a_window_around_each_match_in_a_long_line() {
        let entities: Vec<String> = (0..1000)
            .map(|i| format!(r#"{{"name":"Entity_{i:03}","observations":["observed {i} times in a long list"]}}"#))
            .collect();
        let line = format!("[{}]", entities.join(","));
        assert!(line.len() > 70_000, "{}", line.len());
        let (_d, store, id) = store_with(&line);
        let mut a = args(&id);
        a.grep = Some("Entity_050\"".into());
        let page = read(&store, &a, 2000, Tokenizer::Cl100k).unwrap();
        assert!(page.contains("Entity_050\""), "{page}");
        let at = line.find("Entity_050\"").unwrap();
        let (_, start_char) = continuation(page.lines().next().unwrap());
        let start_char = start_char.unwrap();
        assert!(
            start_char <= at && at - start_char <= CONTEXT_BYTES,
            "{page}"
        );
        assert!(
            page.contains("1 matching lines shown; searched to the end"),
            "{page}"
        );
        // the window's context ends on a boundary (a JSON element or between words), never
        // inside a word or a number (issue 37)
        let window = page.lines().next().unwrap();
        let b: usize = window.split(['-', ' ']).nth(3).unwrap().parse().unwrap();
        assert!(
            window.ends_with([',', '}', ']']) || line.as_bytes()[b].is_ascii_whitespace(),
            "{window}"
        );
        // many matches in the line: as many windows as fit, then where to continue
        a.grep = Some("Entity_\\d+".into());
        let page = read(&store, &a, 2000, Tokenizer::Cl100k).unwrap();
        assert!(Tokenizer::Cl100k.count(&page) <= 2000);
        let footer = page.lines().last().unwrap();
        assert!(footer.contains("has more matches"), "{footer}");
        let (line_no, next) = continuation(footer);
        assert_eq!(line_no, Some(1));
        let next = next.unwrap();
        assert!(next > 0 && next < line.len());
        a.start_line = line_no;
        a.start_char = Some(next);
        let second = read(&store, &a, 2000, Tokenizer::Cl100k).unwrap();
        let first_window = second.lines().next().unwrap();
        assert!(
            first_window.contains(&format!("start_char={next}]")),
            "{first_window}"
        );
        // a match as long as the line: part of it is shown, and the next page moves on
        a.grep = Some("Entity_0.*".into());
        a.start_line = None;
        a.start_char = None;
        let page = read(&store, &a, 300, Tokenizer::Cl100k).unwrap();
        assert!(page.contains("Entity_0"), "{page}");
        let (l, c) = continuation(page.lines().last().unwrap());
        assert_eq!(l, Some(1), "{page}");
        assert!(c.unwrap() > 0, "{page}");
    }
}
