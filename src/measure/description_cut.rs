//! Where the suggested policy cuts a long description, and the `max_description_chars` that
//! makes the proxy's `shorten` cut there: at a sentence end (else a word) outside code and
//! examples, so a cut never lands inside a JSON example's `{ ... }`.

use super::code_spans::{code_spans, inside};
use crate::ground::text::shorten;
use crate::ground::tokens::Tokenizer;

/// Where a long description would be cut: the last sentence end (else word end) whose prefix
/// is at most `max_tokens`, outside code and examples (fenced blocks, inline code, JSON and XML:
/// [`code_spans`]), as `(max_description_chars, the cut text)`, checked to be what the proxy's
/// `shorten` gives for that setting. `None` when the description is not over the limit.
pub fn description_cut(d: &str, max_tokens: usize, tok: Tokenizer) -> Option<(usize, String)> {
    if tok.count(d) <= max_tokens {
        return None;
    }
    let code = code_spans(d);
    let fits = |e: &usize| tok.count(&d[..*e]) <= max_tokens;
    // the prefix count grows with the prefix: the last end that fits, by bisection
    let sentence_ends = sentence_ends(d, &code);
    let n = sentence_ends.partition_point(fits);
    if let Some(found) = n
        .checked_sub(1)
        .and_then(|i| shortened_to(d, sentence_ends[i], max_tokens, tok))
    {
        return Some(found);
    }
    let word_ends: Vec<usize> = d
        .match_indices(' ')
        .map(|(i, _)| i)
        .filter(|&i| !inside(&code, i))
        .collect();
    let n = word_ends.partition_point(fits);
    // the proxy cuts at a sentence end when its window's last third holds one (in code, here):
    // then an earlier word
    word_ends[..n]
        .iter()
        .rev()
        .take(64)
        .find_map(|&end| shortened_to(d, end, max_tokens, tok))
}

/// The ends of `d`'s sentences (a `.`, `!` or `?` before a space or a line break, as the
/// proxy's `shorten` reads them) outside `code`, as byte offsets after the mark.
fn sentence_ends(d: &str, code: &[std::ops::Range<usize>]) -> Vec<usize> {
    d.match_indices(['.', '!', '?'])
        .map(|(i, _)| i + 1)
        .filter(|&e| d[e..].starts_with([' ', '\n']) && !inside(code, e - 1))
        .collect()
}

/// The `max_description_chars` that makes the proxy's `shorten` cut `d` at byte `end`, and its
/// cut; `None` when no setting cuts exactly there.
fn shortened_to(d: &str, end: usize, max_tokens: usize, tok: Tokenizer) -> Option<(usize, String)> {
    let want = d[..end].trim_end();
    [2, 1].into_iter().find_map(|extra| {
        let chars = d[..end].chars().count() + extra;
        let cut = shorten(d, chars);
        let kept = cut.strip_suffix('…').unwrap_or(&cut).trim_end();
        (kept == want && tok.count(&cut) <= max_tokens + 1).then_some((chars, cut))
    })
}

/// The last sentence of a cut description (from the sentence end before its own), for the
/// finding's message.
pub(super) fn last_sentence(cut: &str) -> &str {
    let body = cut.strip_suffix('…').unwrap_or(cut).trim_end();
    let start = sentence_ends(body, &code_spans(body))
        .last()
        .copied()
        .unwrap_or(0);
    body[start..].trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_description_is_cut_at_a_sentence_that_fits() {
        let sentence = "This tool reads a file from the workspace and returns its text. ";
        let d = sentence.repeat(60);
        let (chars, cut) = description_cut(&d, 500, Tokenizer::Cl100k).unwrap();
        assert!(cut.ends_with("its text."), "{cut}");
        assert!(Tokenizer::Cl100k.count(&cut) <= 500);
        assert!(Tokenizer::Cl100k.count(&format!("{cut} {}", sentence.trim())) > 500);
        assert_eq!(shorten(&d, chars), cut);
        assert!(description_cut(sentence, 500, Tokenizer::Cl100k).is_none());
    }

    #[test]
    fn a_cut_without_a_sentence_end_in_prose_falls_back_to_a_word_outside_code() {
        let tok = Tokenizer::Cl100k;
        // no sentence end outside the inline code: the cut is at a word, with an ellipsis
        let d = format!(
            "Use `a. b` then {} and more words",
            "word ".repeat(200).trim_end()
        );
        let (chars, cut) = description_cut(&d, 50, tok).unwrap();
        assert!(
            cut.ends_with('…') && cut.starts_with("Use `a. b` then word"),
            "{cut}"
        );
        assert_eq!(shorten(&d, chars), cut);
        assert!(tok.count(&cut) <= 51);
        assert_eq!(last_sentence(&cut), cut.trim_end_matches('…').trim_end());
    }
}
