//! The original result's text as found in a delivery: as it is, or JSON-escaped (a client
//! that sends the result's JSON), with the head and tail kept counted in the original's
//! characters.

/// How the original's text is in a delivery: as it is, or JSON-escaped (a client that sends
/// the result's JSON, as Cline CLI 3.0.65 does, escapes every newline and quote).
pub struct Found {
    /// The original, or its JSON-escaped form, whichever keeps more of it.
    pub form: String,
    pub whole: bool,
    /// Head and tail kept, in characters of the original.
    pub kept: (usize, usize),
    /// The same, in characters of `form`.
    pub form_kept: (usize, usize),
}

impl Found {
    /// Find `original` in the delivered `text`, as it is, escaped, or (a JSON text) rewritten
    /// compactly, whichever keeps the most.
    pub fn of(original: &str, text: &str) -> Found {
        let found = Found::as_text(original, text);
        if found.whole {
            return found;
        }
        match Found::compacted(original, text) {
            Some(c) if c.whole || c.kept.0 + c.kept.1 > found.kept.0 + found.kept.1 => c,
            _ => found,
        }
    }

    /// A JSON text that the client wrote compactly before it sent or cut it (Copilot CLI
    /// 1.0.102 does): found as the compact form, its kept characters scaled to the original's.
    fn compacted(original: &str, text: &str) -> Option<Found> {
        let start = original.trim_start();
        if !(start.starts_with('{') || start.starts_with('[')) {
            return None;
        }
        let value: serde_json::Value = serde_json::from_str(original).ok()?;
        let compact = serde_json::to_string(&value).ok()?;
        if compact == original {
            return None;
        }
        let inner = Found::as_text(&compact, text);
        let (chars, compact_chars) = (original.chars().count(), compact.chars().count());
        let scale = |n: usize| match inner.whole {
            true => chars,
            false => n * chars / compact_chars.max(1),
        };
        Some(Found {
            kept: (
                scale(inner.kept.0),
                if inner.whole { 0 } else { scale(inner.kept.1) },
            ),
            ..inner
        })
    }

    /// Find `original` in the delivered `text`, as it is or escaped.
    pub fn as_text(original: &str, text: &str) -> Found {
        let as_is = kept(original, text);
        let plain = Found {
            form: original.to_string(),
            // a client that trims the whitespace around a text (Claude Code does an error's)
            // still sent all of it
            whole: !original.trim().is_empty() && text.contains(original.trim()),
            kept: as_is,
            form_kept: as_is,
        };
        let escaped = serde_json::to_string(original).unwrap_or_default();
        // without its quotes
        let escaped = escaped
            .get(1..escaped.len().saturating_sub(1))
            .unwrap_or_default();
        if plain.whole || escaped == original || escaped.is_empty() {
            return plain;
        }
        let whole = text.contains(escaped);
        let (eh, et) = kept(escaped, text);
        let kept_ = (
            unescaped(original, eh, false),
            unescaped(original, et, true),
        );
        if whole || kept_.0 + kept_.1 > plain.kept.0 + plain.kept.1 {
            Found {
                form: escaped.to_string(),
                whole,
                kept: kept_,
                form_kept: (eh, et),
            }
        } else {
            plain
        }
    }
}

/// How many characters of `original` (from its start, or from its end) make up the first (or
/// last) `n` characters of its JSON-escaped form.
fn unescaped(original: &str, n: usize, from_end: bool) -> usize {
    let width = |c: char| match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        _ => 1,
    };
    let mut used = 0;
    let mut count = 0;
    let chars: Box<dyn Iterator<Item = char>> = match from_end {
        true => Box::new(original.chars().rev()),
        false => Box::new(original.chars()),
    };
    for c in chars {
        used += width(c);
        if used > n {
            break;
        }
        count += 1;
    }
    count
}

/// Characters of the original a delivery must keep before it counts as kept (a short common
/// run, such as a heading or a repeated phrase, is chance; real cuts keep thousands).
const KEPT_MIN_CHARS: usize = 64;

/// The longest start and the longest end of `original` (in characters, each at least
/// [`KEPT_MIN_CHARS`] or 0) that appear in `text`.
pub fn kept(original: &str, text: &str) -> (usize, usize) {
    let bounds: Vec<usize> = original
        .char_indices()
        .map(|(i, _)| i)
        .chain([original.len()])
        .collect();
    let n = bounds.len() - 1;
    let longest = |fits: &dyn Fn(usize) -> bool| {
        // the largest k in 0..=n with fits(k); fits is monotone (a shorter part is in it too)
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        if lo >= KEPT_MIN_CHARS.min(n) {
            lo
        } else {
            0
        }
    };
    let head = longest(&|k| text.contains(&original[..bounds[k]]));
    if head == n {
        return (head, 0);
    }
    // the tail is looked for after the kept head, and within what the head left of the original
    let after = match head {
        0 => text,
        _ => {
            let at = text.find(&original[..bounds[head]]).unwrap_or(0);
            &text[at + bounds[head]..]
        }
    };
    let tail = longest(&|k| k <= n - head && after.contains(&original[bounds[n - k]..]));
    (head, tail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::tokens::Tokenizer;
    use crate::lab::delivered::Delivered;
    use crate::lab::probe::{judge, Delivery};
    use serde_json::json;
    use std::path::Path;

    #[test]
    fn a_text_sent_with_its_outer_whitespace_trimmed_is_whole() {
        // Claude Code 2.1.332 trims an isError text: one that ends in a space is not cut
        let original = "000001 alpha budget\n".repeat(500) + "000501 text forecast index ";
        let found = Found::of(&original, &format!("Error: {}", original.trim_end()));
        assert!(found.whole);
        // a real cut of one word is still a cut
        let cut = &original[..original.len() - 8];
        assert!(!Found::of(&original, cut).whole);
    }

    #[test]
    fn a_json_text_a_client_wrote_compactly_is_whole_and_a_cut_of_it_is_counted() {
        // Copilot CLI 1.0.102 writes a JSON text compactly before it measures it
        let result = crate::lab::shapes::result(crate::lab::shapes::Shape::PrettyArray, 20_000);
        let original = result["content"][0]["text"].as_str().unwrap();
        let compact =
            serde_json::to_string(&serde_json::from_str::<serde_json::Value>(original).unwrap())
                .unwrap();
        assert!(compact.len() < original.len() * 3 / 4);
        let home = Path::new("/nonexistent");
        let judged = |text: &str| {
            judge(
                "t",
                &result,
                Some(&Delivered::of_text(text)),
                home,
                &[],
                Tokenizer::Cl100k,
            )
        };
        let whole = judged(&compact);
        assert_eq!(whole.delivery, Delivery::Whole);
        assert_eq!((whole.head_chars, whole.tail_chars), (original.len(), 0));
        assert_eq!(whole.added, "[kept]");
        // its first 5,000 compact characters and a marker: a cut of about 5,000 / compact
        // length of the original, not a refusal
        let cut = judged(&format!("{}\n[Output truncated]", &compact[..5_000]));
        assert_eq!(cut.delivery, Delivery::Cut);
        assert_eq!(cut.head_chars, 5_000 * original.len() / compact.len());
        assert_eq!(cut.added, "[kept]\n[Output truncated]");
        // a text that is not JSON is untouched by it
        assert!(Found::compacted("line one\nline two", "line one").is_none());
    }

    #[test]
    fn a_result_sent_as_json_is_matched_escaped_and_counted_in_the_originals_characters() {
        // Cline CLI 3.0.65 sends JSON.stringify(result), cut to its first and last 4,000
        let original: String = (0..1000).map(|i| format!("line \"{i}\"\n")).collect();
        let result = json!({"content": [{"type": "text", "text": original}]});
        let json = json!({"content": [{"type": "text", "text": original}]}).to_string();
        let cut = format!(
            "{}\n\n...[truncated {} chars]...\n\n{}",
            &json[..4000],
            json.len() - 8000,
            &json[json.len() - 4000..]
        );
        let home = Path::new("/nonexistent");
        let o = judge(
            "t",
            &result,
            Some(&Delivered::of_text(&cut)),
            home,
            &[],
            Tokenizer::Cl100k,
        );
        assert_eq!(o.delivery, Delivery::Cut);
        // 4,000 JSON chars: 35 of the wrapper, then 3,965 of escaped lines (10 lines `line "i"`
        // of 9 chars, 12 escaped; 90 of 10, 13 escaped; 191 of 11, 14 escaped; and an `l`)
        assert_eq!(o.head_chars, 90 + 900 + 191 * 11 + 1);
        // 4,000 JSON chars: 3,996 of escaped lines (285 of 11 chars and `99"\n`), then `"}]}`
        assert_eq!(o.tail_chars, 285 * 11 + 4);
        assert!(o.added.contains("[kept]\n\n...[truncated"), "{}", o.added);
        let whole = judge(
            "t",
            &result,
            Some(&Delivered::of_text(&json)),
            home,
            &[],
            Tokenizer::Cl100k,
        );
        assert_eq!(
            (whole.delivery, whole.head_chars),
            (Delivery::Whole, original.chars().count())
        );
        assert_eq!(unescaped("a\nb", 3, false), 2);
        assert_eq!(unescaped("a\nb", 3, true), 2);
        assert_eq!(unescaped("a\nb", 2, true), 1);
    }
}
