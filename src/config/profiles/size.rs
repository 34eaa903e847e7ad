//! A text's size in a rule's unit (tokens, bytes, characters, lines), where a cut at a size
//! falls, and a rule's threshold for one tool: what the whole-result rules and the per-block
//! rules both measure with.

use std::collections::BTreeMap;

use super::visible::CountFn;
use super::Rule;
use crate::ground::text::{ceil_char_boundary, char_count, floor_char_boundary, line_count};

/// A rule's threshold for one tool: raised by the number its definition's `_meta` holds under
/// the rule's `raised_by` key, up to `raised_up_to` (never lowered).
pub(super) fn threshold(rule: &Rule, meta: &BTreeMap<String, u64>) -> usize {
    let raised = rule
        .raised_by
        .as_ref()
        .and_then(|k| meta.get(k))
        .map(|v| (*v).min(rule.raised_up_to.unwrap_or(u64::MAX)));
    rule.threshold.max(raised.unwrap_or(0)) as usize
}

/// The size of `text` in `unit` (tokens include the images).
pub(super) fn measure(unit: &str, text: &str, image_tokens: usize, count: CountFn) -> usize {
    match unit {
        "tokens" => count(text) + image_tokens,
        "bytes" => text.len(),
        "chars" => char_count(text),
        "lines" => line_count(text),
        _ => 0,
    }
}

/// The byte length of the longest prefix of `text` at most `n` units long.
pub(super) fn prefix(text: &str, unit: &str, n: usize, count: CountFn) -> usize {
    match unit {
        "bytes" => floor_char_boundary(text, n.min(text.len())),
        "chars" => text.char_indices().nth(n).map_or(text.len(), |(i, _)| i),
        "lines" => match n {
            0 => 0,
            n => text
                .match_indices('\n')
                .nth(n - 1)
                .map_or(text.len(), |(i, _)| i + 1),
        },
        // the longest prefix whose count is at most n, by bisection over char boundaries
        _ => {
            let (mut lo, mut hi) = (0, text.len());
            while lo < hi {
                let mid = ceil_char_boundary(text, (lo + hi).div_ceil(2));
                if mid >= hi {
                    break;
                }
                if count(&text[..mid]) <= n {
                    lo = mid;
                } else {
                    hi = floor_char_boundary(text, mid - 1);
                }
            }
            if count(&text[..hi]) <= n {
                hi
            } else {
                lo
            }
        }
    }
}

/// Where the longest suffix of `text` at most `n` units long starts.
pub(super) fn suffix_start(text: &str, unit: &str, n: usize, count: CountFn) -> usize {
    match unit {
        "bytes" => ceil_char_boundary(text, text.len().saturating_sub(n)),
        "chars" => {
            let count = text.chars().count();
            text.char_indices()
                .nth(count.saturating_sub(n))
                .map_or(text.len(), |(i, _)| i)
        }
        "lines" => {
            // the last n lines: after the (n+1)-th line break from the end (a final break ends
            // the last line)
            let body = text.strip_suffix('\n').unwrap_or(text);
            match n {
                0 => text.len(),
                n => body
                    .rmatch_indices('\n')
                    .nth(n - 1)
                    .map_or(0, |(i, _)| i + 1),
            }
        }
        _ => {
            let (mut lo, mut hi) = (0, text.len());
            // the smallest start whose suffix counts at most n
            while lo < hi {
                let mid = floor_char_boundary(text, (lo + hi) / 2);
                if mid <= lo {
                    break;
                }
                if count(&text[mid..]) <= n {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            if count(&text[lo..]) <= n {
                lo
            } else {
                hi
            }
        }
    }
}
